//! Profiling output: per-operator metrics as an annotated plan tree.

use crate::exec::NodeMetrics;

/// Formats metrics as the physical plan tree annotated with rows, batches,
/// bytes and time per operator (`EXPLAIN ANALYZE`).
pub fn format_metrics(metrics: &[NodeMetrics]) -> String {
    let mut out = String::new();
    let total: f64 = metrics.iter().map(|m| m.self_time.as_secs_f64()).sum();
    for m in metrics {
        out.push_str(&format!(
            "{:indent$}{}  [rows={} batches={} bytes={} time={:.3}ms ({:.0}%){}]\n",
            "",
            m.name,
            m.rows_out,
            m.batches_out,
            m.bytes_out,
            m.self_time.as_secs_f64() * 1e3,
            if total > 0.0 {
                100.0 * m.self_time.as_secs_f64() / total
            } else {
                0.0
            },
            if m.extra.is_empty() {
                String::new()
            } else {
                format!(" {}", m.extra)
            },
            indent = m.depth * 2
        ));
    }
    out.push_str(&format!("total operator time: {:.3}ms\n", total * 1e3));
    out
}
