//! Line charts of a sweep: speedup and overlap efficiency of every mode against one swept parameter,
//! as a standalone SVG (the scaling figures of BENCHMARKS.md).

use std::collections::BTreeMap;

/// One point of one mode's line.
#[derive(Clone, Debug)]
pub struct Point {
    pub mode: String,
    pub x: f64,
    pub speedup: Option<f64>,
    pub efficiency: Option<f64>,
}

/// Reads `t3 sweep`'s CSV: the `x` column against speedup and overlap efficiency, per mode.
pub fn points_from_csv(text: &str, x: &str) -> Result<Vec<Point>, String> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().ok_or("empty CSV")?.split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or(format!("CSV has no column '{name}'"))
    };
    let (cx, cm, cs, ce) = (
        col(x)?,
        col("mode")?,
        col("speedup")?,
        col("overlap_efficiency")?,
    );
    let mut out = Vec::new();
    for line in lines {
        let f = split_csv(line);
        if f.len() < header.len() {
            continue;
        }
        let num = |i: usize| f[i].parse::<f64>().ok().filter(|v| v.is_finite());
        let Some(xv) = num(cx) else { continue };
        out.push(Point {
            mode: f[cm].clone(),
            x: xv,
            speedup: num(cs),
            efficiency: num(ce),
        });
    }
    if out.is_empty() {
        return Err(format!("no rows with a numeric '{x}'"));
    }
    Ok(out)
}

fn split_csv(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

const COLORS: [&str; 4] = ["#555555", "#E69F00", "#0072B2", "#009E73"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Two panels side by side (speedup, overlap efficiency) with a log-2 x axis when x spans powers of two.
pub fn svg(points: &[Point], x_label: &str, title: &str) -> String {
    let mut by_mode: BTreeMap<&str, Vec<&Point>> = BTreeMap::new();
    for p in points {
        by_mode.entry(p.mode.as_str()).or_default().push(p);
    }
    for v in by_mode.values_mut() {
        v.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    let xs: Vec<f64> = points.iter().map(|p| p.x).collect();
    let (xmin, xmax) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min),
        xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    );
    let log = xmin > 0.0 && xmax / xmin >= 4.0;
    let tx = |x: f64| if log { x.log2() } else { x };
    let (lo, hi) = (tx(xmin), tx(xmax).max(tx(xmin) + 1e-9));
    let (w, h, m) = (460.0, 300.0, 50.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
        2.0 * w + 20.0,
        h + 70.0,
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
        // Efficiency is clipped to [-1, 1]: a mode slower than sequential has an efficiency of minus
        // tens, which would flatten every line worth reading; the tooltips keep the true values.
        let vals: Vec<f64> = points.iter().filter_map(get).collect();
        let (ymin, ymax) = if k == 1 {
            (-1.0, 1.0)
        } else {
            let lo = vals.iter().cloned().fold(1.0, f64::min);
            let hi = vals.iter().cloned().fold(1.0, f64::max);
            (lo, hi)
        };
        let pad = (ymax - ymin).max(1e-6) * 0.08;
        let (ymin, ymax) = (ymin - pad, ymax + pad);
        let clip = |y: f64| y.clamp(ymin, ymax);
        let px = |x: f64| ox + m + (tx(x) - lo) / (hi - lo) * (w - 1.5 * m);
        let py = |y: f64| oy + h - m + -(y - ymin) / (ymax - ymin) * (h - 1.5 * m);
        s += &format!(
            "<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n",
            ox + m,
            oy + 5.0,
            esc(name)
        );
        s += &format!(
            "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/><line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{3}\" stroke=\"black\"/>\n",
            ox + m,
            oy + h - m,
            ox + w - 0.5 * m,
            oy + 0.5 * m
        );
        for i in 0..=5 {
            let y = ymin + (ymax - ymin) * i as f64 / 5.0;
            s += &format!(
                "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5:.2}</text>\n",
                ox + m,
                ox + w - 0.5 * m,
                py(y),
                ox + m - 4.0,
                py(y) + 4.0,
                y
            );
        }
        let mut ticks: Vec<f64> = xs.clone();
        ticks.sort_by(|a, b| a.total_cmp(b));
        ticks.dedup();
        for x in ticks {
            s += &format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                px(x),
                oy + h - m + 16.0,
                x
            );
        }
        s += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            ox + w / 2.0,
            oy + h - m + 34.0,
            esc(x_label)
        );
        if k == 0 {
            s += &format!(
                "<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n",
                ox + m,
                ox + w - 0.5 * m,
                py(1.0)
            );
        }
        for (i, (mode, pts)) in by_mode.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            let path: Vec<String> = pts
                .iter()
                .filter_map(|p| get(p).map(|y| format!("{:.1},{:.1}", px(p.x), py(clip(y)))))
                .collect();
            if path.len() > 1 {
                s += &format!(
                    "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>\n",
                    path.join(" ")
                );
            }
            for p in pts {
                if let Some(y) = get(p) {
                    s += &format!(
                        "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"><title>{} {}={}: {:.3}</title></circle>\n",
                        px(p.x),
                        py(clip(y)),
                        esc(mode),
                        esc(x_label),
                        p.x,
                        y
                    );
                }
            }
            if k == 1 {
                // The legend runs along the bottom, clear of the lines.
                let lx = 10.0 + m + 120.0 * i as f64;
                let ly = oy + h + 10.0;
                s += &format!(
                    "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{c}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                    lx,
                    lx + 20.0,
                    lx + 25.0,
                    ly + 4.0,
                    esc(mode)
                );
            }
        }
    }
    s + "</svg>\n"
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
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("test &lt;&amp;&gt;"));
        // Two modes, two panels: four polylines (encoded has two numeric points in each panel).
        assert_eq!(s.matches("<polyline").count(), 4);
        assert!(!s.contains("NaN") && !s.contains("inf"));
        assert!(points_from_csv(CSV, "chunks").is_err());
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
