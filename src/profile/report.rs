//! Rendering a [`Profile`] as text, JSON and an SVG chart.

use std::fmt::Write;
use std::time::Duration;

use super::Profile;
use crate::io::text_table::TextTable;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).expect("write to string"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn speedup(row: Duration, col: Duration) -> f64 {
    if col.is_zero() {
        f64::INFINITY
    } else {
        row.as_secs_f64() / col.as_secs_f64()
    }
}

impl Profile {
    /// Scanned bytes per second of the columnar run, in GB/s.
    pub fn throughput_gbs(&self) -> f64 {
        self.scanned_bytes as f64 / self.columnar_total.as_secs_f64().max(1e-9) / 1e9
    }

    /// A table: per operator row-wise time, columnar time, speedup, rows, bytes.
    pub fn to_text(&self) -> String {
        let header = [
            "operator",
            "rows",
            "bytes",
            "row-wise ms",
            "columnar ms",
            "speedup",
        ];
        let mut t = TextTable::new(header.map(String::from).to_vec());
        for op in &self.operators {
            let mut name = format!("{}{}", "  ".repeat(op.depth), op.name);
            if name.chars().count() > 70 {
                name = name.chars().take(69).collect::<String>() + "…";
            }
            t.add_row(vec![
                name,
                op.rows.to_string(),
                op.bytes.to_string(),
                format!("{:.2}", ms(op.rowwise)),
                format!("{:.2}", ms(op.columnar)),
                format!("{:.1}×", speedup(op.rowwise, op.columnar)),
            ]);
        }
        let mut s = t.to_string();
        writeln!(s).ok();
        writeln!(
            s,
            "total: row-wise {:.1} ms (one run), columnar {:.1} ms (median of 3; {:.1}× faster){}",
            ms(self.rowwise_total),
            ms(self.columnar_total),
            speedup(self.rowwise_total, self.columnar_total),
            match self.fused_total {
                Some(f) => format!(
                    ", columnar fused {:.1} ms ({:.2}× vs unfused; fused expressions skipped {:.1} MB of intermediate arrays)",
                    ms(f),
                    speedup(self.columnar_total, f),
                    self.fused_bytes_saved as f64 / 1e6
                ),
                None => String::new(),
            }
        )
        .ok();
        // Sampled scans serve rows already in memory: no read throughput to speak of.
        if self.sampled.is_none() {
            writeln!(
            s,
            "columnar throughput: {:.2} GB/s of scanned Arrow data = {:.0}% of this machine's memory bandwidth ({:.1} GB/s)",
            self.throughput_gbs(),
            100.0 * self.throughput_gbs() / self.bandwidth_gbs.max(1e-9),
            self.bandwidth_gbs
        )
        .ok();
        }
        if let (Some(cpu), Some(rss)) = (self.columnar_cpu, self.columnar_peak_rss) {
            writeln!(
                s,
                "columnar CPU time {:.1} ms ({:.1} cores busy on average); peak resident memory {:.1} MB",
                ms(cpu),
                cpu.as_secs_f64() / self.columnar_total.as_secs_f64().max(1e-9),
                rss as f64 / 1e6
            )
            .ok();
        }
        if let Some(n) = self.sampled {
            writeln!(
                s,
                "sampled: each scan read at most its first {n} rows (--rowwise-limit)"
            )
            .ok();
        }
        s
    }

    /// The same figures as JSON.
    pub fn to_json(&self) -> String {
        let ops: Vec<String> = self
            .operators
            .iter()
            .map(|o| {
                format!(
                    "{{\"depth\":{},\"operator\":{},\"rows\":{},\"bytes\":{},\"rowwise_ms\":{:.3},\"columnar_ms\":{:.3}}}",
                    o.depth,
                    json_string(&o.name),
                    o.rows,
                    o.bytes,
                    ms(o.rowwise),
                    ms(o.columnar)
                )
            })
            .collect();
        format!(
            "{{\"operators\":[{}],\"rowwise_ms\":{:.3},\"columnar_ms\":{:.3},\"fused_ms\":{},\"fused_bytes_saved\":{},\"scanned_bytes\":{},\"throughput_gbs\":{:.3},\"bandwidth_gbs\":{:.3},\"sampled_rows\":{}}}\n",
            ops.join(","),
            ms(self.rowwise_total),
            ms(self.columnar_total),
            self.fused_total
                .map_or("null".into(), |f| format!("{:.3}", ms(f))),
            self.fused_bytes_saved,
            self.scanned_bytes,
            self.throughput_gbs(),
            self.bandwidth_gbs,
            self.sampled.map_or("null".into(), |n| n.to_string())
        )
    }

    /// A bar chart per operator (log scale), row-wise vs columnar, as SVG.
    pub fn to_svg(&self) -> String {
        let row_h = 34.0;
        let left = 360.0;
        let width = 960.0;
        let plot_w = width - left - 180.0;
        let height = 70.0 + row_h * self.operators.len() as f64 + 40.0;
        let max_ms = self
            .operators
            .iter()
            .map(|o| ms(o.rowwise).max(ms(o.columnar)))
            .fold(1.0, f64::max);
        // log10 scale from 0.01 ms to the largest time.
        let lo = -2.0f64;
        let hi = max_ms.log10().ceil().max(lo + 1.0);
        let x = |v: f64| left + plot_w * ((v.max(0.01).log10() - lo) / (hi - lo)).clamp(0.0, 1.0);
        let mut s = String::new();
        writeln!(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"monospace\" font-size=\"12\">").ok();
        writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>").ok();
        writeln!(s, "<text x=\"10\" y=\"22\" font-size=\"15\">Time per operator, row-wise vs columnar (ms, log scale){}</text>",
            self.sampled.map_or(String::new(), |n| format!(", first {n} rows per scan"))).ok();
        writeln!(s, "<rect x=\"{left}\" y=\"32\" width=\"12\" height=\"10\" fill=\"#d95f02\"/><text x=\"{}\" y=\"41\">row-wise</text>", left + 16.0).ok();
        writeln!(s, "<rect x=\"{}\" y=\"32\" width=\"12\" height=\"10\" fill=\"#1b9e77\"/><text x=\"{}\" y=\"41\">columnar</text>", left + 100.0, left + 116.0).ok();
        for decade in (lo as i32)..=(hi as i32) {
            let v = 10f64.powi(decade);
            let gx = x(v);
            writeln!(
                s,
                "<line x1=\"{gx:.1}\" y1=\"50\" x2=\"{gx:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>",
                height - 30.0
            )
            .ok();
            writeln!(
                s,
                "<text x=\"{gx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                height - 14.0,
                v
            )
            .ok();
        }
        for (i, o) in self.operators.iter().enumerate() {
            let y = 56.0 + row_h * i as f64;
            let mut label = format!("{}{}", "  ".repeat(o.depth), o.name);
            if label.chars().count() > 48 {
                label = label.chars().take(47).collect::<String>() + "…";
            }
            let label = label
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            writeln!(
                s,
                "<text x=\"6\" y=\"{:.1}\" xml:space=\"preserve\">{label}</text>",
                y + 17.0
            )
            .ok();
            let (rw, cw) = (ms(o.rowwise), ms(o.columnar));
            writeln!(
                s,
                "<rect x=\"{left}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"12\" fill=\"#d95f02\"/>",
                x(rw) - left
            )
            .ok();
            writeln!(
                s,
                "<rect x=\"{left}\" y=\"{:.1}\" width=\"{:.1}\" height=\"12\" fill=\"#1b9e77\"/>",
                y + 14.0,
                x(cw) - left
            )
            .ok();
            writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\">{rw:.1} / {cw:.1} ({:.0}×)</text>",
                x(rw.max(cw)) + 4.0,
                y + 18.0,
                speedup(o.rowwise, o.columnar)
            )
            .ok();
        }
        writeln!(s, "</svg>").ok();
        s
    }
}
