//! Chrome trace export: a timeline as Trace Event JSON for Perfetto and chrome://tracing.

use serde_json::{json, Map, Value};

use crate::timeline::{Event, EventKind, Lane, Timeline};

/// Triggers shorter than this are host decisions at an instant, not work with a
/// meaningful duration; a complete event that thin would be invisible in Perfetto,
/// whereas an instant event is drawn as a marker at any zoom.
const INSTANT_MAX_US: f64 = 1.0;

/// The timeline as a Trace Event Format document (`{"traceEvents": [...], "displayTimeUnit": "ms"}`).
///
/// Each timeline (mode) becomes one process; within it each rank has a GEMM thread and
/// a steps thread, and host triggers get a thread of their own, so a trace viewer shows
/// the same lanes as the Gantt chart.
pub fn chrome_trace(timelines: &[Timeline]) -> Value {
    let mut events = Vec::new();
    for (index, timeline) in timelines.iter().enumerate() {
        // pid 0 is treated specially by some viewers, so start at 1.
        let pid = index + 1;
        events.push(metadata(
            pid,
            None,
            "process_name",
            json!({ "name": format!("{} ({})", timeline.mode, timeline.grain) }),
        ));
        // Keep processes in the order the modes were given rather than by pid hash.
        events.push(metadata(
            pid,
            None,
            "process_sort_index",
            json!({ "sort_index": index }),
        ));
        let ranks = rank_count(timeline);
        for lane in lanes(timeline, ranks) {
            let tid = tid(lane, ranks);
            events.push(metadata(
                pid,
                Some(tid),
                "thread_name",
                json!({ "name": lane_name(lane, timeline) }),
            ));
            // Without an explicit sort index viewers order threads by name, which puts
            // "rank 10" before "rank 2" and separates a rank's GEMM from its steps.
            events.push(metadata(
                pid,
                Some(tid),
                "thread_sort_index",
                json!({ "sort_index": tid }),
            ));
        }
        events.extend(timeline.events.iter().map(|e| trace_event(pid, ranks, e)));
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ms" })
}

/// The lanes a timeline needs: GEMM and steps for every rank (an idle rank still shows
/// up as an empty row, which is informative), and the host lane only if it was used.
fn lanes(timeline: &Timeline, ranks: usize) -> Vec<Lane> {
    let mut lanes: Vec<Lane> = (0..ranks)
        .flat_map(|rank| [Lane::Gemm { rank }, Lane::Step { rank }])
        .collect();
    for host in [Lane::Host, Lane::HostWait] {
        if timeline.events.iter().any(|e| e.lane == host) {
            lanes.push(host);
        }
    }
    lanes.extend(timeline.link_lanes());
    lanes
}

/// `Timeline::ranks` is authoritative, but an event naming a higher rank must still get
/// a named thread rather than an anonymous one.
fn rank_count(timeline: &Timeline) -> usize {
    let from_events = timeline
        .events
        .iter()
        .filter_map(|e| match e.lane {
            Lane::Gemm { rank } | Lane::Step { rank } => Some(rank + 1),
            Lane::Host | Lane::HostWait | Lane::HostLink { .. } => None,
        })
        .max()
        .unwrap_or(0);
    timeline.ranks.max(from_events)
}

/// Thread ids double as sort keys: rank by rank, GEMM above steps, host last.
/// They start at 1 because tid 0 means the idle thread to some viewers.
fn tid(lane: Lane, ranks: usize) -> usize {
    match lane {
        Lane::Gemm { rank } => 2 * rank + 1,
        Lane::Step { rank } => 2 * rank + 2,
        Lane::Host => 2 * ranks + 1,
        Lane::HostWait => 2 * ranks + 2,
        Lane::HostLink { from, to } => 2 * ranks + 3 + from * crate::placement::MAX_DEVICES + to,
    }
}

fn lane_name(lane: Lane, timeline: &Timeline) -> String {
    // On several devices each rank's threads name its device.
    let dev = |rank: usize| match timeline.device_of.get(rank) {
        Some(d) => format!("device {d} "),
        None => String::new(),
    };
    match lane {
        Lane::Gemm { rank } => format!("{}rank {rank} gemm", dev(rank)),
        Lane::Step { rank } => format!("{}rank {rank} steps", dev(rank)),
        Lane::Host => "host triggers".to_owned(),
        Lane::HostWait => "host waits (submission done, counters mapped)".to_owned(),
        Lane::HostLink { from, to } => format!("host link d{from}->d{to} (maps, copies)"),
    }
}

fn kind_name(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Gemm => "gemm",
        EventKind::Copy => "copy",
        EventKind::Reduce => "reduce",
        EventKind::Trigger => "trigger",
        EventKind::Wait => "wait",
    }
}

fn metadata(pid: usize, tid: Option<usize>, name: &str, args: Value) -> Value {
    let mut event = json!({ "ph": "M", "pid": pid, "name": name, "args": args });
    if let Some(tid) = tid {
        event["tid"] = json!(tid);
    }
    event
}

/// serde_json writes NaN and infinities as `null`, which viewers reject; a bogus
/// timestamp is better shown at 0 than losing the whole trace.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

fn trace_event(pid: usize, ranks: usize, e: &Event) -> Value {
    let ts = finite(e.start_us);
    let dur = (finite(e.end_us) - ts).max(0.0);
    let mut args = Map::new();
    args.insert("rank".into(), json!(e.rank));
    if let Some(chunk) = e.chunk {
        args.insert("chunk".into(), json!(chunk));
    }
    if let Some(stage) = e.stage {
        args.insert("stage".into(), json!(stage));
    }
    let mut event = json!({
        "name": e.name,
        "cat": kind_name(e.kind),
        "pid": pid,
        "tid": tid(e.lane, ranks),
        "ts": ts,
        "args": args,
    });
    if e.kind == EventKind::Trigger && dur < INSTANT_MAX_US {
        event["ph"] = json!("i");
        // Thread scope: the marker sits on the host lane instead of spanning the process.
        event["s"] = json!("t");
    } else {
        event["ph"] = json!("X");
        event["dur"] = json!(dur);
    }
    event
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn event(lane: Lane, kind: EventKind, name: &str, start_us: f64, end_us: f64) -> Event {
        let rank = match lane {
            Lane::Gemm { rank } | Lane::Step { rank } => rank,
            Lane::Host | Lane::HostWait | Lane::HostLink { .. } => 0,
        };
        Event {
            lane,
            kind,
            name: name.to_owned(),
            rank,
            chunk: Some(3),
            stage: Some(1),
            start_us,
            end_us,
        }
    }

    fn sample(mode: &str, with_host: bool) -> Timeline {
        let mut events = vec![
            event(Lane::Gemm { rank: 0 }, EventKind::Gemm, "r0 c3", 0.0, 10.0),
            event(Lane::Gemm { rank: 1 }, EventKind::Gemm, "r1 c3", 0.0, 12.0),
            event(
                Lane::Step { rank: 1 },
                EventKind::Copy,
                "r0->r1 c3",
                10.0,
                14.0,
            ),
            event(
                Lane::Step { rank: 0 },
                EventKind::Reduce,
                "r1->r0 c3",
                12.0,
                15.5,
            ),
        ];
        if with_host {
            events.push(event(Lane::Host, EventKind::Trigger, "trig c3", 10.2, 10.2));
            events.push(event(
                Lane::Host,
                EventKind::Trigger,
                "slow trig",
                11.0,
                20.0,
            ));
        }
        Timeline {
            mode: mode.to_owned(),
            grain: "pass".to_owned(),
            ranks: 2,
            device_of: Vec::new(),
            events,
        }
    }

    fn trace_events(trace: &Value) -> &Vec<Value> {
        trace["traceEvents"].as_array().expect("traceEvents array")
    }

    #[test]
    fn top_level_shape() {
        let trace = chrome_trace(&[sample("host", true)]);
        assert_eq!(trace["displayTimeUnit"], "ms");
        assert!(!trace_events(&trace).is_empty());
    }

    #[test]
    fn one_process_per_mode_named_with_grain() {
        let trace = chrome_trace(&[sample("sequential", false), sample("fused", false)]);
        let names: Vec<(u64, String)> = trace_events(&trace)
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "process_name")
            .map(|e| {
                (
                    e["pid"].as_u64().unwrap(),
                    e["args"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![
                (1, "sequential (pass)".to_owned()),
                (2, "fused (pass)".to_owned())
            ]
        );
    }

    #[test]
    fn one_thread_name_per_lane() {
        let trace = chrome_trace(&[sample("host", true), sample("fused", false)]);
        let events = trace_events(&trace);
        for (pid, expected) in [(1, 5), (2, 4)] {
            let names: Vec<&str> = events
                .iter()
                .filter(|e| e["pid"] == pid && e["name"] == "thread_name")
                .map(|e| e["args"]["name"].as_str().unwrap())
                .collect();
            assert_eq!(names.len(), expected, "pid {pid}: {names:?}");
            let unique: HashSet<_> = names.iter().collect();
            assert_eq!(unique.len(), names.len(), "duplicate thread names");
            // Every non-metadata event's thread must have a name.
            let tids: HashSet<u64> = events
                .iter()
                .filter(|e| e["pid"] == pid && e["name"] == "thread_name")
                .map(|e| e["tid"].as_u64().unwrap())
                .collect();
            for e in events.iter().filter(|e| e["pid"] == pid && e["ph"] != "M") {
                assert!(
                    tids.contains(&e["tid"].as_u64().unwrap()),
                    "unnamed thread: {e}"
                );
            }
        }
        let host: Vec<_> = events
            .iter()
            .filter(|e| e["args"]["name"] == "host triggers")
            .collect();
        assert_eq!(host.len(), 1);
    }

    #[test]
    fn threads_sort_rank_by_rank() {
        let trace = chrome_trace(&[sample("host", true)]);
        let events = trace_events(&trace);
        let sort_of = |tid: &Value| {
            events
                .iter()
                .find(|e| e["name"] == "thread_sort_index" && &e["tid"] == tid)
                .and_then(|e| e["args"]["sort_index"].as_u64())
                .expect("sort index")
        };
        let mut named: Vec<(u64, &str)> = events
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| (sort_of(&e["tid"]), e["args"]["name"].as_str().unwrap()))
            .collect();
        named.sort();
        let order: Vec<&str> = named.iter().map(|(_, n)| *n).collect();
        assert_eq!(
            order,
            [
                "rank 0 gemm",
                "rank 0 steps",
                "rank 1 gemm",
                "rank 1 steps",
                "host triggers"
            ]
        );
    }

    #[test]
    fn complete_events_carry_kind_args_and_nonnegative_duration() {
        let mut timeline = sample("encoded", false);
        // A clock hiccup must not produce a negative or NaN duration.
        timeline.events.push(event(
            Lane::Step { rank: 0 },
            EventKind::Copy,
            "backwards",
            20.0,
            19.0,
        ));
        timeline.events.push(event(
            Lane::Step { rank: 1 },
            EventKind::Copy,
            "nan",
            f64::NAN,
            f64::INFINITY,
        ));
        let trace = chrome_trace(&[timeline]);
        let xs: Vec<&Value> = trace_events(&trace)
            .iter()
            .filter(|e| e["ph"] == "X")
            .collect();
        assert_eq!(xs.len(), 6);
        for e in &xs {
            let dur = e["dur"].as_f64().expect("numeric dur");
            let ts = e["ts"].as_f64().expect("numeric ts");
            assert!(dur >= 0.0 && ts.is_finite(), "{e}");
        }
        let copy = xs.iter().find(|e| e["name"] == "r0->r1 c3").unwrap();
        assert_eq!(copy["cat"], "copy");
        assert_eq!(copy["ts"], 10.0);
        assert_eq!(copy["dur"], 4.0);
        assert_eq!(copy["args"]["rank"], 1);
        assert_eq!(copy["args"]["chunk"], 3);
        assert_eq!(copy["args"]["stage"], 1);
        let reduce = xs.iter().find(|e| e["name"] == "r1->r0 c3").unwrap();
        assert_eq!(reduce["cat"], "reduce");
        assert_eq!(reduce["tid"], tid(Lane::Step { rank: 0 }, 2));
    }

    #[test]
    fn short_triggers_are_instants_long_ones_intervals() {
        let trace = chrome_trace(&[sample("host", true)]);
        let events = trace_events(&trace);
        let quick = events.iter().find(|e| e["name"] == "trig c3").unwrap();
        assert_eq!(quick["ph"], "i");
        assert_eq!(quick["s"], "t");
        assert!(quick.get("dur").is_none());
        assert_eq!(quick["cat"], "trigger");
        let slow = events.iter().find(|e| e["name"] == "slow trig").unwrap();
        assert_eq!(slow["ph"], "X");
        assert_eq!(slow["dur"], 9.0);
    }

    #[test]
    fn missing_chunk_and_stage_are_omitted() {
        let mut timeline = sample("sequential", false);
        timeline.events[0].chunk = None;
        timeline.events[0].stage = None;
        let trace = chrome_trace(&[timeline]);
        let e = trace_events(&trace)
            .iter()
            .find(|e| e["name"] == "r0 c3")
            .unwrap();
        let args = e["args"].as_object().unwrap();
        assert_eq!(args.keys().collect::<Vec<_>>(), ["rank"]);
    }

    #[test]
    fn empty_input_is_still_a_trace() {
        let trace = chrome_trace(&[]);
        assert!(trace_events(&trace).is_empty());
        let empty = Timeline {
            mode: "fused".into(),
            grain: "none".into(),
            ranks: 0,
            device_of: Vec::new(),
            events: vec![],
        };
        let trace = chrome_trace(&[empty]);
        // Just the process metadata; serialisation must round-trip.
        assert_eq!(trace_events(&trace).len(), 2);
        let text = serde_json::to_string(&trace).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), trace);
    }

    #[test]
    fn out_of_range_rank_still_gets_a_named_thread() {
        let mut timeline = sample("fused", false);
        timeline.events.push(event(
            Lane::Gemm { rank: 4 },
            EventKind::Gemm,
            "r4",
            0.0,
            1.0,
        ));
        let trace = chrome_trace(&[timeline]);
        assert!(trace_events(&trace)
            .iter()
            .any(|e| e["args"]["name"] == "rank 4 gemm"));
    }
}
