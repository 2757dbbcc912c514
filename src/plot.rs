//! Line charts of a sweep: speedup and overlap efficiency of every mode against one swept parameter,
//! as a standalone SVG (the scaling figures of BENCHMARKS.md).

use std::collections::BTreeMap;

use crate::report::Row;

/// One point of one line: a mode at one setting of the columns that are not on the x axis.
#[derive(Clone, Debug)]
pub struct Point {
    pub mode: String,
    /// The line's name: the mode, and every other swept column that varies ("encoded chunks=2").
    pub series: String,
    pub x: f64,
    pub speedup: Option<f64>,
    pub efficiency: Option<f64>,
}

/// The configuration columns of a sweep's CSV: those that vary besides x split a mode into lines
/// (a ranks x chunks sweep plotted against ranks gives one line per chunk count, not a zig-zag).
const CONFIG_COLUMNS: [&str; 16] = [
    "workload",
    "m",
    "n",
    "k",
    "ranks",
    "chunks",
    "collective",
    "order",
    "reduce_via",
    "link",
    "arbitrate",
    "gemm_grid",
    "step_lead",
    "dtype",
    "output_dtype",
    "gemm_kernel",
];

/// Reads `t3 sweep`'s CSV: the `x` column against speedup and overlap efficiency, per line.
/// Rows of failed points (mode `error`) are left out; a CSV of nothing else is an error.
pub fn points_from_csv(text: &str, x: &str) -> Result<Vec<Point>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(|e| e.to_string())?.clone();
    if header.iter().all(str::is_empty) {
        return Err("empty CSV".into());
    }
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or(format!("CSV has no column '{name}'"))
    };
    let cx = col(x)?;
    for required in ["mode", "speedup", "overlap_efficiency"] {
        col(required)?;
    }
    let mut rows = Vec::new();
    let (mut errors, mut first_error) = (0, None);
    for record in reader.records() {
        let record = record.map_err(|e| e.to_string())?;
        if record.len() < header.len() {
            continue;
        }
        let row: Row = record
            .deserialize(Some(&header))
            .map_err(|e| column_error(&e, &header, &record))?;
        if row.mode == "error" {
            errors += 1;
            first_error = first_error.or(row.skipped);
            continue;
        }
        // Beyond 1e15 no swept count lies, and the axis' arithmetic would overflow.
        let Some(xv) = record[cx].parse::<f64>().ok().filter(|v| v.abs() <= MAX_X) else {
            continue;
        };
        rows.push((record, row, xv));
    }
    if rows.is_empty() {
        return Err(match (errors, first_error) {
            (0, _) => format!("no rows with a numeric '{x}'"),
            (n, Some(e)) => format!("no measured rows: all {n} are failed points (the first: {e})"),
            (n, None) => format!("no measured rows: all {n} are failed points"),
        });
    }
    // The configuration columns that vary among the measured rows, x aside.
    let varying: Vec<(usize, &str)> = CONFIG_COLUMNS
        .iter()
        .filter(|&&c| c != x)
        .filter_map(|&c| header.iter().position(|h| h == c).map(|i| (i, c)))
        .filter(|&(i, _)| rows.iter().any(|r| r.0[i] != rows[0].0[i]))
        .collect();
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
    // A chart without one finite figure would be an empty frame read as a result.
    let n = rows.len();
    if rows
        .iter()
        .all(|r| finite(r.1.speedup).is_none() && finite(r.1.overlap_efficiency).is_none())
    {
        return Err(format!(
            "no finite speedup or overlap_efficiency in the {n} measured rows"
        ));
    }
    Ok(rows
        .into_iter()
        .map(|(record, row, xv)| {
            let mut series = row.mode.clone();
            for &(i, name) in &varying {
                series += &format!(" {name}={}", &record[i]);
            }
            Point {
                series,
                x: xv,
                speedup: finite(row.speedup),
                efficiency: finite(row.overlap_efficiency),
                mode: row.mode,
            }
        })
        .collect())
}

/// A row that does not read, naming its line, column and value (the csv crate gives a field index).
fn column_error(e: &csv::Error, header: &csv::StringRecord, record: &csv::StringRecord) -> String {
    let line = record.position().map_or(0, |p| p.line());
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(i) => format!(
                "line {line}, column '{}': '{}' ({})",
                header.get(i as usize).unwrap_or("?"),
                record.get(i as usize).unwrap_or(""),
                err.kind()
            ),
            None => format!("line {line}: {err}"),
        },
        _ => format!("line {line}: {e}"),
    }
}

const COLORS: [&str; 4] = ["#555555", "#E69F00", "#0072B2", "#009E73"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Dash patterns that tell apart the lines of one mode (one colour per mode).
const DASHES: [&str; 4] = ["", "6 3", "2 3", "9 3 2 3"];

/// Width of one legend entry, and entries per legend row.
const LEGEND_ENTRY: f64 = 230.0;
const LEGEND_PER_ROW: usize = 4;

/// Overlap efficiency is drawn within this band: a mode slower than sequential has an efficiency
/// of minus tens, which would flatten every line worth reading. Points beyond it sit on its edge
/// with an arrow pointing out; the tooltips keep the true values.
const EFFICIENCY_BAND: (f64, f64) = (-1.0, 1.0);

/// Speedup is drawn within this band, the same way: overlap gains a few times at most, and a
/// corrupt or hand-made value (1e308) must not stretch the axis past what numbers can hold.
const SPEEDUP_BAND: (f64, f64) = (0.0, 16.0);

/// Largest x value drawn (a larger one is not a count any sweep runs).
const MAX_X: f64 = 1e15;

/// A value for a label or tooltip: three decimals, or a mantissa and exponent beyond a million.
fn num(v: f64) -> String {
    if v.abs() < 1e6 {
        format!("{v:.3}")
    } else {
        format!("{v:.3e}")
    }
}

/// Two panels side by side (speedup, overlap efficiency) with a log-2 x axis when x spans powers of
/// two; one line per series, coloured by mode.
pub fn svg(points: &[Point], x_label: &str, title: &str) -> String {
    let mut by_series: BTreeMap<(&str, &str), Vec<&Point>> = BTreeMap::new();
    for p in points {
        by_series
            .entry((p.mode.as_str(), p.series.as_str()))
            .or_default()
            .push(p);
    }
    for v in by_series.values_mut() {
        v.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    let modes: Vec<&str> = {
        let mut m: Vec<&str> = points.iter().map(|p| p.mode.as_str()).collect();
        m.sort();
        m.dedup();
        m
    };
    // Each line's colour (its mode's) and dash (its place among its mode's lines).
    let style: Vec<(&str, &str)> = {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        by_series
            .keys()
            .map(|(mode, _)| {
                let c = COLORS[modes.iter().position(|m| m == mode).unwrap_or(0) % COLORS.len()];
                let n = seen.entry(mode).or_default();
                *n += 1;
                (c, DASHES[(*n - 1) % DASHES.len()])
            })
            .collect()
    };
    let xs: Vec<f64> = points.iter().map(|p| p.x).collect();
    let (xmin, xmax) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min),
        xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    );
    let log = xmin > 0.0 && xmax / xmin >= 4.0;
    let tx = |x: f64| if log { x.log2() } else { x };
    let (lo, hi) = (tx(xmin), tx(xmax).max(tx(xmin) + 1e-9));
    let (w, h, m) = (460.0, 300.0, 50.0);
    let legend_rows = by_series.len().div_ceil(LEGEND_PER_ROW).max(1);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        2.0 * w + 20.0,
        h + 54.0 + 16.0 * legend_rows as f64,
        esc(title)
    );
    type Metric = fn(&Point) -> Option<f64>;
    let panels: [(&str, Metric); 2] = [
        ("speedup over sequential", |p| p.speedup),
        ("overlap efficiency", |p| p.efficiency),
    ];
    for (k, (name, get)) in panels.iter().enumerate() {
        let ox = 10.0 + k as f64 * (w + 10.0);
        let oy = 40.0;
        let vals: Vec<f64> = points.iter().filter_map(get).collect();
        let band = if k == 1 {
            EFFICIENCY_BAND
        } else {
            SPEEDUP_BAND
        };
        let (ymin, ymax) = if k == 1 {
            EFFICIENCY_BAND
        } else {
            let lo = vals.iter().cloned().fold(1.0, f64::min);
            let hi = vals.iter().cloned().fold(1.0, f64::max);
            (lo.max(band.0), hi.min(band.1))
        };
        let pad = (ymax - ymin).max(1e-6) * 0.08;
        let (ymin, ymax) = (ymin - pad, ymax + pad);
        let f = Panel {
            ox,
            oy,
            w,
            h,
            m,
            lo,
            hi,
            log,
            ymin,
            ymax,
        };
        s += &frame(&f, name, band, &vals, &xs, x_label, k);
        for (i, ((_, series), pts)) in by_series.iter().enumerate() {
            let (c, dash) = style[i];
            let dash = if dash.is_empty() {
                String::new()
            } else {
                format!(" stroke-dasharray=\"{dash}\"")
            };
            s += &line(&f, *get, series, pts, c, &dash, x_label);
            if k == 1 {
                // The legend runs along the bottom, clear of the lines.
                let lx = 10.0 + m + LEGEND_ENTRY * (i % LEGEND_PER_ROW) as f64;
                let ly = oy + h + 10.0 + 16.0 * (i / LEGEND_PER_ROW) as f64;
                s += &format!(
                    "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{c}\" stroke-width=\"2\"{dash}/><text x=\"{}\" y=\"{}\">{}</text>\n",
                    lx,
                    lx + 20.0,
                    lx + 25.0,
                    ly + 4.0,
                    esc(series)
                );
            }
        }
    }
    s + "</svg>\n"
}

/// One panel's place on the page and its axes' ranges (x as drawn: log 2 where `log`).
struct Panel {
    ox: f64,
    oy: f64,
    w: f64,
    h: f64,
    m: f64,
    lo: f64,
    hi: f64,
    log: bool,
    ymin: f64,
    ymax: f64,
}

impl Panel {
    fn px(&self, x: f64) -> f64 {
        let tx = if self.log { x.log2() } else { x };
        self.ox + self.m + (tx - self.lo) / (self.hi - self.lo) * (self.w - 1.5 * self.m)
    }

    fn py(&self, y: f64) -> f64 {
        self.oy + self.h - self.m
            + -(y - self.ymin) / (self.ymax - self.ymin) * (self.h - 1.5 * self.m)
    }

    fn clip(&self, y: f64) -> f64 {
        y.clamp(self.ymin, self.ymax)
    }
}

/// Panel `k`'s frame: its title, a note where values lie beyond `band`, the axes, the grid, the x
/// ticks and label, and (speedup) the line at 1.
fn frame(
    f: &Panel,
    name: &str,
    band: (f64, f64),
    vals: &[f64],
    xs: &[f64],
    x_label: &str,
    k: usize,
) -> String {
    let mut s = String::new();
    s += &format!(
        "<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n",
        f.ox + f.m,
        f.oy + 5.0,
        esc(name)
    );
    if vals.iter().any(|&y| y != f.clip(y)) {
        s += &format!(
            "<text class=\"clip-note\" x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"10\">arrows: beyond {:.0}..{:.0}, drawn at the edge (true value in the tooltip)</text>\n",
            f.ox + f.w - 0.5 * f.m,
            f.oy + 18.0,
            band.0,
            band.1
        );
    }
    s += &format!(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/><line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{3}\" stroke=\"black\"/>\n",
        f.ox + f.m,
        f.oy + f.h - f.m,
        f.ox + f.w - 0.5 * f.m,
        f.oy + 0.5 * f.m
    );
    for i in 0..=5 {
        let y = f.ymin + (f.ymax - f.ymin) * i as f64 / 5.0;
        s += &format!(
            "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5:.2}</text>\n",
            f.ox + f.m,
            f.ox + f.w - 0.5 * f.m,
            f.py(y),
            f.ox + f.m - 4.0,
            f.py(y) + 4.0,
            y
        );
    }
    let mut ticks: Vec<f64> = xs.to_vec();
    ticks.sort_by(|a, b| a.total_cmp(b));
    ticks.dedup();
    for x in ticks {
        s += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            f.px(x),
            f.oy + f.h - f.m + 16.0,
            x
        );
    }
    s += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
        f.ox + f.w / 2.0,
        f.oy + f.h - f.m + 34.0,
        esc(x_label)
    );
    if k == 0 {
        s += &format!(
            "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
            f.ox + f.m,
            f.ox + f.w - 0.5 * f.m,
            f.py(1.0)
        );
    }
    s
}

/// One series' line in a panel: the polyline, a dot per point with its value as a tooltip, and an
/// arrow beside a dot drawn at the panel's edge.
fn line(
    f: &Panel,
    get: fn(&Point) -> Option<f64>,
    series: &str,
    pts: &[&Point],
    c: &str,
    dash: &str,
    x_label: &str,
) -> String {
    let mut s = String::new();
    let path: Vec<String> = pts
        .iter()
        .filter_map(|p| get(p).map(|y| format!("{:.1},{:.1}", f.px(p.x), f.py(f.clip(y)))))
        .collect();
    if path.len() > 1 {
        s += &format!(
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"{dash} points=\"{}\"/>\n",
            path.join(" ")
        );
    }
    for p in pts {
        let Some(y) = get(p) else { continue };
        let (cx, cy) = (f.px(p.x), f.py(f.clip(y)));
        let tip = format!("{} {}={}: {}", esc(series), esc(x_label), p.x, num(y));
        s += &format!(
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3\" fill=\"{c}\"><title>{tip}</title></circle>\n"
        );
        if y != f.clip(y) {
            // An arrow beside the dot, pointing the way the true value lies.
            let d = if y > f.ymax { -1.0 } else { 1.0 };
            s += &format!(
                "<polygon class=\"clipped\" points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{c}\"><title>{tip}</title></polygon>\n",
                cx + 6.0,
                cy + 9.0 * d,
                cx + 2.0,
                cy + 3.0 * d,
                cx + 10.0,
                cy + 3.0 * d
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "workload,adapter,ranks,mode,speedup,overlap_efficiency\n\
        w,\"GPU, x\",2,sequential,1,0\nw,\"GPU, x\",2,encoded,1.0,0.0\nw,\"GPU, x\",4,sequential,1,0\n\
        w,\"GPU, x\",4,encoded,1.05,0.5\nw,\"GPU, x\",8,encoded,,\n";

    #[test]
    fn reads_quoted_csv_and_draws_every_line() {
        let p = points_from_csv(CSV, "ranks").unwrap();
        assert_eq!(p.len(), 5);
        assert_eq!(p[3].speedup, Some(1.05));
        assert_eq!(p[4].speedup, None);
        let s = svg(&p, "ranks", "test <&>");
        crate::gantt::well_formed::check_well_formed(&s).unwrap();
        assert!(s.contains("test &lt;&amp;&gt;"));
        // Two modes, two panels: four polylines (encoded has two numeric points in each panel).
        assert_eq!(s.matches("<polyline").count(), 4);
        assert!(!s.contains("NaN") && !s.contains("inf"));
        assert!(points_from_csv(CSV, "chunks").is_err());
    }

    #[test]
    fn error_rows_are_left_out_and_an_all_error_csv_is_refused() {
        let csv = "workload,ranks,mode,speedup,overlap_efficiency,skipped\n\
            w,2,error,,,\"invalid rank count: 9\"\nw,4,error,,,x\n";
        let e = points_from_csv(csv, "ranks").unwrap_err();
        assert!(
            e.contains("all 2 are failed points") && e.contains("rank count: 9"),
            "{e}"
        );
        let csv = format!("{csv}w,8,host,1.1,0.2,\n");
        assert_eq!(points_from_csv(&csv, "ranks").unwrap().len(), 1);
    }

    #[test]
    fn other_swept_columns_split_a_mode_into_lines() {
        // ranks x chunks, plotted against ranks: one line per chunk count, not a zig-zag.
        let csv = "workload,ranks,chunks,mode,speedup,overlap_efficiency\n\
            w,2,1,host,1.0,0.1\nw,2,2,host,1.2,0.3\nw,4,1,host,1.1,0.2\nw,4,2,host,1.3,0.4\n";
        let p = points_from_csv(csv, "ranks").unwrap();
        assert_eq!(p[0].series, "host chunks=1");
        assert_eq!(p[1].series, "host chunks=2");
        let s = svg(&p, "ranks", "t");
        // Two lines in each of two panels, each line monotone in x.
        assert_eq!(s.matches("<polyline").count(), 4, "{s}");
        crate::gantt::well_formed::check_well_formed(&s).unwrap();
        assert!(s.contains(">host chunks=2</text>") && s.contains("stroke-dasharray=\"6 3\""));
        // Against chunks, ranks splits instead.
        let p = points_from_csv(csv, "chunks").unwrap();
        assert_eq!(p[0].series, "host ranks=2");
        // CSVs of the two GEMM orders, joined: a line per order.
        let csv = "ranks,order,mode,speedup,overlap_efficiency\n\
            2,stage,host,1.0,0.1\n2,chunk,host,1.2,0.3\n4,stage,host,1.1,0.2\n4,chunk,host,1.3,0.4\n";
        let p = points_from_csv(csv, "ranks").unwrap();
        assert_eq!(
            (p[0].series.as_str(), p[1].series.as_str()),
            ("host order=stage", "host order=chunk")
        );
    }

    #[test]
    fn extreme_values_draw_a_valid_picture() {
        let csv = "workload,ranks,mode,speedup,overlap_efficiency\n\
            w,2,host,1e308,1e308\nw,4,host,-1e308,-1e308\nw,8,host,0.9,-0.2\n";
        let s = svg(&points_from_csv(csv, "ranks").unwrap(), "ranks", "t");
        crate::gantt::well_formed::check_well_formed(&s).unwrap();
        for bad in ["inf", "NaN"] {
            assert!(!s.contains(bad), "{bad} in {s}");
        }
        assert!(s.contains("1.000e308"), "{s}");
        // A value that does not read names its column.
        let e = points_from_csv(
            "workload,ranks,chunks,mode,speedup,overlap_efficiency\nw,NaN,1,host,1,0\n",
            "chunks",
        )
        .unwrap_err();
        assert!(e.contains("column 'ranks'") && e.contains("'NaN'"), "{e}");
    }

    #[test]
    fn clipped_efficiencies_are_marked() {
        let csv = "workload,ranks,mode,speedup,overlap_efficiency\n\
            w,2,host,0.9,-0.5\nw,4,host,0.3,-40\n";
        let s = svg(&points_from_csv(csv, "ranks").unwrap(), "ranks", "t");
        crate::gantt::well_formed::check_well_formed(&s).unwrap();
        assert_eq!(s.matches("class=\"clipped\"").count(), 1, "{s}");
        assert!(
            s.contains("class=\"clip-note\"") && s.contains("-40.000"),
            "{s}"
        );
        let csv = "workload,ranks,mode,speedup,overlap_efficiency\nw,2,host,0.9,-0.5\n";
        let s = svg(&points_from_csv(csv, "ranks").unwrap(), "ranks", "t");
        assert!(!s.contains("clipped") && !s.contains("clip-note"));
    }

    #[test]
    fn lines_stay_inside_the_clipped_panel() {
        // A host mode far slower than sequential: efficiency -40, drawn at the panel's floor.
        let csv = "workload,ranks,mode,speedup,overlap_efficiency\n\
            w,2,host,0.9,-0.5\nw,4,host,0.3,-40\nw,8,host,0.2,-60\n";
        let s = svg(&points_from_csv(csv, "ranks").unwrap(), "ranks", "t");
        let ys = |tag: &str, attr: &str| -> Vec<f64> {
            s.lines()
                .filter(|l| l.starts_with(tag))
                .flat_map(|l| {
                    let v = l.split(&format!("{attr}=\"")).nth(1).unwrap();
                    let v = &v[..v.find('"').unwrap()];
                    if attr == "points" {
                        v.split(' ')
                            .map(|p| p.split(',').nth(1).unwrap().parse().unwrap())
                            .collect()
                    } else {
                        vec![v.parse().unwrap()]
                    }
                })
                .collect()
        };
        let dots = ys("<circle", "cy");
        let floor = dots.iter().cloned().fold(f64::MIN, f64::max);
        for y in ys("<polyline", "points") {
            assert!(
                y <= floor + 1e-6,
                "a line point at y {y} leaves the panel (floor {floor})"
            );
        }
    }
}
