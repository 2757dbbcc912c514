//! SVG Gantt chart of one or more timelines: a lane per rank, GEMM chunks and steps in distinct colours, a time axis in microseconds, a legend.

use std::fmt::{self, Write};

use crate::timeline::{Event, EventKind, Lane, Timeline};

mod axis;
#[cfg(test)]
pub(crate) mod well_formed;

use axis::{format_us, Axis};

const WIDTH: f64 = 1200.0;
/// Room for lane labels such as "r15 steps" and the axis caption.
const MARGIN_LEFT: f64 = 84.0;
/// Room for the last tick label, which is centred on the right edge of the plot.
const MARGIN_RIGHT: f64 = 28.0;
const PLOT_WIDTH: f64 = WIDTH - MARGIN_LEFT - MARGIN_RIGHT;
const LEGEND_HEIGHT: f64 = 34.0;
const TITLE_HEIGHT: f64 = 24.0;
const LANE_HEIGHT: f64 = 16.0;
const LANE_PITCH: f64 = 19.0;
const AXIS_HEIGHT: f64 = 30.0;
const PANEL_GAP: f64 = 14.0;
/// Narrower rectangles vanish when rasterised; a triggered step of a few hundred
/// nanoseconds on a millisecond axis must still leave a mark.
const MIN_RECT_WIDTH: f64 = 0.5;

/// Okabe–Ito colours, chosen to stay distinguishable under the common colour-vision
/// deficiencies. Triggers are black because they are usually hairlines, where a light
/// hue would disappear against the lane background.
fn colour(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Gemm => "#0072B2",
        EventKind::Copy => "#E69F00",
        EventKind::Reduce => "#009E73",
        EventKind::Trigger => "#000000",
        EventKind::Wait => "#BBBBBB",
    }
}

/// Marks where a mode's run ended; red so it is not mistaken for a gridline.
const END_COLOUR: &str = "#CC3311";

fn kind_label(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Gemm => "GEMM",
        EventKind::Copy => "Copy",
        EventKind::Reduce => "Reduce",
        EventKind::Trigger => "Trigger",
        EventKind::Wait => "Host wait",
    }
}

/// An SVG document with one panel per timeline, stacked vertically, on a shared time scale
/// so that modes can be compared by length.
pub fn gantt_svg(timelines: &[Timeline]) -> String {
    let mut out = String::new();
    write_svg(&mut out, timelines).expect("formatting into a String cannot fail");
    out
}

fn write_svg(out: &mut String, timelines: &[Timeline]) -> fmt::Result {
    let longest = timelines
        .iter()
        .map(|t| finite_or_zero(t.span_us()))
        .fold(0.0, f64::max);
    let axis = Axis::new(longest);
    let layouts: Vec<Vec<Lane>> = timelines.iter().map(lanes).collect();
    let height = LEGEND_HEIGHT
        + layouts
            .iter()
            .map(|lanes| panel_height(lanes.len()) + PANEL_GAP)
            .sum::<f64>();

    writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    )?;
    // Without a background, viewers that render transparency as black make the text unreadable.
    writeln!(
        out,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>"##
    )?;
    write_legend(out)?;
    let mut top = LEGEND_HEIGHT;
    for (timeline, lanes) in timelines.iter().zip(&layouts) {
        write_panel(out, timeline, lanes, &axis, top)?;
        top += panel_height(lanes.len()) + PANEL_GAP;
    }
    writeln!(out, "</svg>")
}

fn write_legend(out: &mut String) -> fmt::Result {
    writeln!(out, r#"<g class="legend">"#)?;
    let kinds = [
        EventKind::Gemm,
        EventKind::Copy,
        EventKind::Reduce,
        EventKind::Trigger,
        EventKind::Wait,
    ];
    for (i, kind) in kinds.into_iter().enumerate() {
        let x = MARGIN_LEFT + 90.0 * i as f64;
        writeln!(
            out,
            r#"<rect x="{x}" y="12" width="14" height="10" fill="{}"/><text x="{}" y="21">{}</text>"#,
            colour(kind),
            x + 19.0,
            kind_label(kind)
        )?;
    }
    let x = MARGIN_LEFT + 90.0 * kinds.len() as f64;
    writeln!(
        out,
        r##"<line x1="{x}" y1="11" x2="{x}" y2="23" stroke="{END_COLOUR}" stroke-width="1" stroke-dasharray="3,2"/><text x="{}" y="21">end of run</text>"##,
        x + 6.0
    )?;
    writeln!(
        out,
        r##"<text x="{}" y="21" text-anchor="end" fill="#555555">time axis shared by all panels</text>"##,
        WIDTH - MARGIN_RIGHT
    )?;
    writeln!(out, "</g>")
}

fn panel_height(lane_count: usize) -> f64 {
    TITLE_HEIGHT + LANE_PITCH * lane_count as f64 + AXIS_HEIGHT
}

/// GEMM and steps lanes for every rank, so an idle rank shows as an empty row rather than
/// silently shifting the rows below it, and a host lane only when triggers were recorded.
fn lanes(timeline: &Timeline) -> Vec<Lane> {
    let from_events = timeline
        .events
        .iter()
        .filter_map(|e| match e.lane {
            Lane::Gemm { rank } | Lane::Step { rank } => Some(rank + 1),
            Lane::Host | Lane::HostWait | Lane::HostLink { .. } => None,
        })
        .max()
        .unwrap_or(0);
    let ranks = timeline.ranks.max(from_events);
    let mut lanes: Vec<Lane> = (0..ranks)
        .flat_map(|rank| [Lane::Gemm { rank }, Lane::Step { rank }])
        .collect();
    let has_host = timeline
        .events
        .iter()
        .any(|e| e.kind == EventKind::Trigger || e.lane == Lane::Host);
    if has_host {
        lanes.push(Lane::Host);
    }
    if timeline.events.iter().any(|e| e.lane == Lane::HostWait) {
        lanes.push(Lane::HostWait);
    }
    lanes.extend(timeline.link_lanes());
    lanes
}

fn lane_label(lane: Lane, timeline: &Timeline) -> String {
    // On several devices each rank's rows name its device.
    let dev = |rank: usize| match timeline.device_of.get(rank) {
        Some(d) => format!("d{d} "),
        None => String::new(),
    };
    match lane {
        Lane::Gemm { rank } => format!("{}r{rank} gemm", dev(rank)),
        Lane::Step { rank } => format!("{}r{rank} steps", dev(rank)),
        Lane::Host => "host".to_owned(),
        Lane::HostWait => "host waits".to_owned(),
        Lane::HostLink { from, to } => format!("link d{from}->d{to}"),
    }
}

/// Triggers belong on the host lane even if a producer filed them elsewhere; that is the
/// only lane guaranteed to exist for them.
fn lane_of(event: &Event) -> Lane {
    if event.kind == EventKind::Trigger {
        Lane::Host
    } else {
        event.lane
    }
}

fn write_panel(
    out: &mut String,
    timeline: &Timeline,
    lanes: &[Lane],
    axis: &Axis,
    top: f64,
) -> fmt::Result {
    let span = finite_or_zero(timeline.span_us());
    // An empty panel would otherwise look like a rendering failure.
    let note = if timeline.events.is_empty() {
        " (no events)"
    } else {
        ""
    };
    writeln!(out, r#"<g class="panel">"#)?;
    writeln!(
        out,
        r#"<text x="8" y="{}" font-size="13" font-weight="bold">{} — grain {} — span {} µs{note}</text>"#,
        top + 16.0,
        escape(&timeline.mode),
        escape(&timeline.grain),
        format_us(span)
    )?;

    let lanes_top = top + TITLE_HEIGHT;
    let lanes_bottom = lanes_top + LANE_PITCH * lanes.len() as f64;
    for (i, lane) in lanes.iter().enumerate() {
        let y = lanes_top + LANE_PITCH * i as f64;
        // Shade alternate ranks so a rank's GEMM and steps rows read as a pair.
        let shade = match lane {
            Lane::Gemm { rank } | Lane::Step { rank } if rank % 2 == 0 => "#eef1f5",
            Lane::Gemm { .. } | Lane::Step { .. } => "#f8f9fb",
            Lane::Host | Lane::HostWait | Lane::HostLink { .. } => "#f3eef5",
        };
        writeln!(
            out,
            r#"<rect class="lane" x="{MARGIN_LEFT}" y="{:.2}" width="{PLOT_WIDTH}" height="{LANE_PITCH}" fill="{shade}"/>"#,
            y - (LANE_PITCH - LANE_HEIGHT) / 2.0
        )?;
        writeln!(
            out,
            r#"<text x="{}" y="{:.2}" text-anchor="end">{}</text>"#,
            MARGIN_LEFT - 6.0,
            y + LANE_HEIGHT / 2.0 + 4.0,
            escape(&lane_label(*lane, timeline))
        )?;
    }

    // Gridlines go under the events so they never hide a short interval.
    for &tick in &axis.ticks {
        let x = axis.x(tick);
        writeln!(
            out,
            r##"<line x1="{x:.2}" y1="{lanes_top:.2}" x2="{x:.2}" y2="{lanes_bottom:.2}" stroke="#c8ccd2" stroke-width="0.5"/>"##
        )?;
    }

    let span_of = |event: &Event| {
        let start = finite_or_zero(event.start_us).max(0.0);
        (start, finite_or_zero(event.end_us).max(start))
    };
    for (i, event) in timeline.events.iter().enumerate() {
        let Some(row) = lanes.iter().position(|&l| l == lane_of(event)) else {
            continue;
        };
        let (start, end) = span_of(event);
        // Events of one lane over one interval (a fused dispatch's copies and reduces) share the
        // lane's height, so that the last drawn does not hide the others.
        let same = |e: &&Event| lane_of(e) == lane_of(event) && span_of(e) == (start, end);
        let share = timeline.events.iter().filter(same).count() as f64;
        let place = timeline.events[..i].iter().filter(same).count() as f64;
        let height = LANE_HEIGHT / share;
        let x = axis.x(start);
        let width = (axis.x(end) - x).max(MIN_RECT_WIDTH);
        let y = lanes_top + LANE_PITCH * row as f64 + height * place;
        // A hairline outline separates back-to-back chunks, but would swallow a narrow rect.
        let outline = if width >= 3.0 {
            r##" stroke="#ffffff" stroke-width="0.5""##
        } else {
            ""
        };
        writeln!(
            out,
            r#"<rect class="ev" x="{x:.2}" y="{y:.2}" width="{width:.2}" height="{height:.2}" fill="{}" fill-opacity="0.85"{outline}><title>{} ({}): {}–{} µs</title></rect>"#,
            colour(event.kind),
            escape(&event.name),
            kind_label(event.kind),
            format_us(start),
            format_us(end)
        )?;
    }

    // Marks where this mode finished, for comparing modes against the shared scale.
    let end_x = axis.x(span);
    writeln!(
        out,
        r##"<line x1="{end_x:.2}" y1="{:.2}" x2="{end_x:.2}" y2="{:.2}" stroke="{END_COLOUR}" stroke-width="1" stroke-dasharray="3,2"/>"##,
        lanes_top - 4.0,
        lanes_bottom + 2.0
    )?;

    write_axis(out, axis, lanes_bottom)?;
    writeln!(out, "</g>")
}

fn write_axis(out: &mut String, axis: &Axis, y: f64) -> fmt::Result {
    let right = MARGIN_LEFT + PLOT_WIDTH;
    writeln!(
        out,
        r##"<line x1="{MARGIN_LEFT}" y1="{y:.2}" x2="{right}" y2="{y:.2}" stroke="#333333" stroke-width="1"/>"##
    )?;
    for &tick in &axis.ticks {
        let x = axis.x(tick);
        writeln!(
            out,
            r##"<line x1="{x:.2}" y1="{y:.2}" x2="{x:.2}" y2="{:.2}" stroke="#333333" stroke-width="1"/><text x="{x:.2}" y="{:.2}" text-anchor="middle" font-size="10">{}</text>"##,
            y + 4.0,
            y + 15.0,
            axis.label(tick)
        )?;
    }
    writeln!(
        out,
        r##"<text x="{}" y="{:.2}" text-anchor="end" font-size="10" fill="#555555">time (µs)</text>"##,
        // Clear of the first tick label, which is centred on the plot's left edge.
        MARGIN_LEFT - 18.0,
        y + 15.0
    )
}

fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Names and modes come from callers and may contain markup characters.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            _ => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::well_formed::check_well_formed;
    use super::*;

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
            chunk: Some(0),
            stage: Some(0),
            start_us,
            end_us,
        }
    }

    fn timeline(mode: &str, ranks: usize, events: Vec<Event>) -> Timeline {
        Timeline {
            mode: mode.to_owned(),
            grain: "pass".to_owned(),
            ranks,
            device_of: Vec::new(),
            events,
        }
    }

    fn sample() -> Timeline {
        timeline(
            "host",
            2,
            vec![
                event(Lane::Gemm { rank: 0 }, EventKind::Gemm, "r0 c0", 0.0, 40.0),
                event(Lane::Gemm { rank: 1 }, EventKind::Gemm, "r1 c0", 0.0, 42.0),
                event(
                    Lane::Step { rank: 1 },
                    EventKind::Copy,
                    "r0->r1 c0",
                    41.0,
                    60.0,
                ),
                event(
                    Lane::Step { rank: 0 },
                    EventKind::Reduce,
                    "r1->r0 c0",
                    43.0,
                    70.0,
                ),
                event(Lane::Host, EventKind::Trigger, "trigger c0", 40.5, 40.5),
            ],
        )
    }

    /// The value of `attr` on every element that carries `class="ev"`.
    fn event_attr(svg: &str, attr: &str) -> Vec<f64> {
        svg.split(r#"<rect class="ev""#)
            .skip(1)
            .map(|rest| {
                let key = format!(" {attr}=\"");
                let start = rest.find(&key).expect("attribute present") + key.len();
                let len = rest[start..].find('"').unwrap();
                rest[start..start + len].parse().unwrap()
            })
            .collect()
    }

    fn assert_sane(svg: &str) {
        check_well_formed(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        for bad in ["NaN", "inf"] {
            assert!(!svg.contains(bad), "{bad} in {svg}");
        }
    }

    #[test]
    fn checker_rejects_broken_xml() {
        assert!(check_well_formed("<a><b></a></b>").is_err());
        assert!(check_well_formed("<a>x < y</a>").is_err());
        assert!(check_well_formed("<a t=\"&foo;\"/>").is_err());
        assert!(check_well_formed("<a/><b/>").is_err());
        assert!(check_well_formed("<a>").is_err());
        assert!(check_well_formed("<a x=\"1\" x=\"2\"/>").is_err());
        assert!(check_well_formed("<a x=\"&lt;\"><!-- c --><b/>t&amp;</a>").is_ok());
    }

    #[test]
    fn sample_is_well_formed_with_one_rect_per_event() {
        let svg = gantt_svg(&[sample(), sample()]);
        assert_sane(&svg);
        assert_eq!(svg.matches(r#"<rect class="ev""#).count(), 10);
        assert_eq!(svg.matches("<title>").count(), 10);
        assert_eq!(svg.matches(r#"class="panel""#).count(), 2);
    }

    #[test]
    fn lanes_are_labelled_and_host_only_with_triggers() {
        let svg = gantt_svg(&[sample()]);
        for label in ["r0 gemm", "r0 steps", "r1 gemm", "r1 steps", ">host<"] {
            assert!(svg.contains(label), "missing {label}");
        }
        let mut no_triggers = sample();
        no_triggers.events.retain(|e| e.kind != EventKind::Trigger);
        let svg = gantt_svg(&[no_triggers]);
        assert!(!svg.contains(">host<"));
        assert_eq!(svg.matches(r#"class="lane""#).count(), 4);
    }

    #[test]
    fn legend_names_every_kind_in_its_colour() {
        let svg = gantt_svg(&[]);
        for kind in [
            EventKind::Gemm,
            EventKind::Copy,
            EventKind::Reduce,
            EventKind::Trigger,
        ] {
            assert!(svg.contains(kind_label(kind)));
            assert!(svg.contains(&format!("fill=\"{}\"", colour(kind))));
        }
    }

    #[test]
    fn tooltip_gives_name_start_and_end() {
        let svg = gantt_svg(&[sample()]);
        assert!(svg.contains("<title>r0-&gt;r1 c0 (Copy): 41.000–60.000 µs</title>"));
    }

    #[test]
    fn escapes_markup_in_names_and_modes() {
        let mut t = timeline(
            "a<b>&\"mode\"",
            1,
            vec![event(
                Lane::Gemm { rank: 0 },
                EventKind::Gemm,
                "x<y & z>w",
                0.0,
                1.0,
            )],
        );
        t.grain = "'g'".to_owned();
        let svg = gantt_svg(&[t]);
        assert_sane(&svg);
        assert!(svg.contains("x&lt;y &amp; z&gt;w"));
        assert!(svg.contains("a&lt;b&gt;&amp;&quot;mode&quot;"));
        assert!(svg.contains("&apos;g&apos;"));
        assert!(!svg.contains("x<y"));
    }

    #[test]
    fn empty_inputs_give_valid_svg() {
        assert_sane(&gantt_svg(&[]));
        let empty = timeline("fused", 0, vec![]);
        let svg = gantt_svg(std::slice::from_ref(&empty));
        assert_sane(&svg);
        assert_eq!(svg.matches(r#"<rect class="ev""#).count(), 0);
        let mut four_idle_ranks = empty;
        four_idle_ranks.ranks = 4;
        let svg = gantt_svg(&[four_idle_ranks]);
        assert_sane(&svg);
        assert_eq!(svg.matches(r#"class="lane""#).count(), 8);
    }

    #[test]
    fn zero_length_and_bogus_times_stay_finite_and_visible() {
        let t = timeline(
            "sequential",
            1,
            vec![
                event(Lane::Gemm { rank: 0 }, EventKind::Gemm, "zero", 0.0, 0.0),
                event(
                    Lane::Step { rank: 0 },
                    EventKind::Copy,
                    "nan",
                    f64::NAN,
                    f64::INFINITY,
                ),
                event(
                    Lane::Step { rank: 0 },
                    EventKind::Reduce,
                    "backwards",
                    5.0,
                    -1.0,
                ),
            ],
        );
        let svg = gantt_svg(&[t]);
        assert_sane(&svg);
        let widths = event_attr(&svg, "width");
        assert_eq!(widths.len(), 3);
        assert!(widths.iter().all(|&w| w >= MIN_RECT_WIDTH), "{widths:?}");
    }

    #[test]
    fn panels_share_one_time_scale() {
        let long = timeline(
            "sequential",
            1,
            vec![event(
                Lane::Gemm { rank: 0 },
                EventKind::Gemm,
                "a",
                0.0,
                100.0,
            )],
        );
        let short = timeline(
            "fused",
            1,
            vec![event(
                Lane::Gemm { rank: 0 },
                EventKind::Gemm,
                "b",
                0.0,
                50.0,
            )],
        );
        let svg = gantt_svg(&[long, short]);
        let widths = event_attr(&svg, "width");
        assert!((widths[0] - 2.0 * widths[1]).abs() < 0.02, "{widths:?}");
        let xs = event_attr(&svg, "x");
        assert_eq!(xs, [MARGIN_LEFT, MARGIN_LEFT]);
    }

    #[test]
    fn events_over_one_interval_share_their_lane() {
        // A fused dispatch: every op of a lane spans the whole dispatch.
        let t = timeline(
            "fused",
            1,
            vec![
                event(
                    Lane::Step { rank: 0 },
                    EventKind::Reduce,
                    "r0 reduce c0",
                    0.0,
                    9.0,
                ),
                event(
                    Lane::Step { rank: 0 },
                    EventKind::Copy,
                    "r0 copy c1",
                    0.0,
                    9.0,
                ),
            ],
        );
        let svg = gantt_svg(&[t]);
        assert_sane(&svg);
        let ys = event_attr(&svg, "y");
        let hs = event_attr(&svg, "height");
        assert_eq!(hs.len(), 2);
        assert!(
            hs.iter().all(|&h| (h - LANE_HEIGHT / 2.0).abs() < 0.01),
            "{hs:?}"
        );
        assert!((ys[1] - ys[0] - LANE_HEIGHT / 2.0).abs() < 0.01, "{ys:?}");
        for kind in [EventKind::Reduce, EventKind::Copy] {
            assert!(svg.contains(&format!("fill=\"{}\" fill-opacity", colour(kind))));
        }
    }

    #[test]
    fn triggers_land_on_the_host_lane() {
        let mut t = sample();
        // A producer that mislabels a trigger's lane must not make it vanish.
        t.events[4].lane = Lane::Gemm { rank: 0 };
        let svg = gantt_svg(&[t]);
        assert_eq!(svg.matches(r#"<rect class="ev""#).count(), 5);
        assert!(svg.contains(">host<"));
    }
}
