//! The point after its first experiment ([`point::search_point`]): what it measures before any
//! search (fused mode's own configuration), and a point without room to overlap, not searched.

use super::*;

/// A stand-in that records each mode and configuration it was asked for, every configuration
/// 19 ms beside a 20 ms sequential.
struct Recorder(Vec<(ModeKind, Knobs)>);

impl Measure for Recorder {
    fn measure(&mut self, mode: ModeKind, knobs: &Knobs, _how: How) -> Result<Measured> {
        self.0.push((mode, knobs.clone()));
        Ok(Measured {
            knobs: knobs.clone(),
            median_ms: Some(19.0),
            sequential_ms: Some(20.0),
            consistent: true,
            error: None,
        })
    }
}

/// The point after its first experiment ([`point::search_point`]), every mode of `job` `given_ms`
/// beside sequential's 20 there, `no_room` what it said of the room to overlap: what the point asked
/// the stand-in for, and what it gave (sequential's time, the choices, the modes not tuned, why none
/// was searched).
fn after_first(
    job: &Job,
    s: &Settings,
    given_ms: f64,
    no_room: Option<point::NoRoom>,
) -> (Vec<(ModeKind, Knobs)>, point::Searched) {
    let mut p = Point1 {
        m: Recorder(Vec::new()),
        job,
        s,
        seen: HashMap::new(),
        sequential: HashMap::new(),
        progress: &|_| {},
        longest: HashMap::new(),
        least: LEAST_LEAD,
    };
    let base = Knobs::of(&job.base).canonical();
    let given: Vec<Measured> = job
        .modes
        .iter()
        .map(|_| Measured {
            knobs: base.clone(),
            median_ms: Some(given_ms),
            sequential_ms: Some(20.0),
            consistent: true,
            error: None,
        })
        .collect();
    let ctx = Context {
        devices: 1,
        sms: Some(132),
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    let share = Duration::from_millis(1);
    let got = point::search_point(&mut p, (&given, COSTS, share, no_room), ctx, deadline).unwrap();
    (p.m.0, got)
}

/// `job()` with sequential, encoded and fused mode, fused's own configuration at 4 chunks a rank.
fn with_fused_own() -> (Job, Config) {
    let mut job = job();
    job.modes = vec![ModeKind::Sequential, ModeKind::Encoded, ModeKind::Fused];
    let own = Config {
        chunks: 4,
        ..job.base.clone()
    };
    job.fused = Some(own.clone());
    (job, own)
}

/// The point after its first experiment ([`point::search_point`]): fused mode's own configuration
/// as given, apart from the point's, is measured before any mode's search (the searches then share
/// what it leaves; measured at the start of fused mode's own share, it would take it from whatever
/// that share held), and every mode's search follows.
#[test]
fn fused_modes_own_configuration_is_measured_before_any_search() {
    let (job, own) = with_fused_own();
    let (asked, _) = after_first(&job, &Settings::default(), 19.0, None);
    let asked = &asked;
    let head = &asked[..asked.len().min(3)];
    assert_eq!(
        asked.first(),
        Some(&(ModeKind::Fused, Knobs::of(&own).canonical())),
        "{head:?}"
    );
    // Encoded's search came first among the searches (its space is the smaller): without the
    // measurement before them, its figures would lead.
    assert_eq!(
        asked.get(1).map(|a| a.0),
        Some(ModeKind::Encoded),
        "{head:?}"
    );
    assert!(asked.iter().skip(1).any(|a| a.0 == ModeKind::Fused));
}

/// A point whose first experiment leaves no room to overlap searches no mode: each stands as its
/// figure there says (fused mode's own configuration measured too, and kept where the point's is not
/// clearly faster: a run without a table runs it), and runs only where it leads sequential by more
/// than the point's noise (19 ms beside 20 leads by 5%: it runs; 19.9, a 0.5% lead, falls back), and
/// the point says why. With room, `exhaustive` (the grid it is judged by) or `search_no_room`, every mode is
/// searched.
#[test]
fn a_point_without_room_to_overlap_is_not_searched() {
    let (job, own) = with_fused_own();
    let (base, own) = (
        Knobs::of(&job.base).canonical(),
        Knobs::of(&own).canonical(),
    );
    let no_room = || {
        Some(point::NoRoom {
            why: "no room to overlap (why)".into(),
            lead: crate::consistency::FLOOR,
        })
    };
    let cases = [
        (no_room(), 19.0, (false, false), false),
        (no_room(), 19.9, (false, false), false),
        (no_room(), 19.0, (true, false), true),
        (no_room(), 19.0, (false, true), true),
        (None, 19.0, (false, false), true),
    ];
    for (no_room, given_ms, (exhaustive, search_no_room), searched) in cases {
        let s = Settings {
            exhaustive,
            search_no_room,
            ..Settings::default()
        };
        let case = format!(
            "no room {}, given {given_ms} ms, exhaustive {exhaustive}, search {search_no_room}",
            no_room.is_some()
        );
        let (asked, got) = after_first(&job, &s, given_ms, no_room);
        // Fused mode's own configuration is measured first whatever the room.
        assert_eq!(
            asked.first(),
            Some(&(ModeKind::Fused, own.clone())),
            "{case}"
        );
        assert_eq!(asked.len() > 1, searched, "{case}: {asked:?}");
        assert_eq!(got.no_room.is_none(), searched, "{case}");
        assert!(got.not_run.is_empty(), "{case}");
        assert_eq!(got.sequential_ms, 20.0, "{case}");
        assert_eq!(got.modes.len(), 2, "{case}");
        if got.no_room.is_some() {
            for c in &got.modes {
                // Fused mode's own configuration read 19 ms (the stand-in's every figure).
                let (given, t) = match c.mode {
                    ModeKind::Fused => (&own, 19.0),
                    _ => (&base, given_ms),
                };
                assert_eq!(&c.knobs, given, "{case}: {c:?}");
                assert_eq!(c.median_ms, t, "{case}");
                assert!((c.speedup - 20.0 / t).abs() < 1e-12, "{c:?}");
                assert_eq!(c.fallback, t > 19.0, "{case}: {c:?}");
                assert!(c.confirmed.is_empty(), "{case}");
            }
        }
    }
}
