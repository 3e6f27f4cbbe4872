//! The profiler: where time goes, operator by operator, and what columnar,
//! vectorized, fused execution buys over a tuple-at-a-time engine.
//!
//! [`profile`] runs one physical plan three ways — row-wise
//! (the `exec::rowwise` executor), columnar with every operator as its own step
//! (so each can be timed), and columnar with fusion (the default executor) —
//! and lines the per-operator figures up. [`Profile::to_text`], `to_json`
//! and `to_svg` render them.

mod bandwidth;
mod process;
mod report;

use std::time::{Duration, Instant};

use crate::error::Result;
use crate::exec::rowwise::execute_rowwise;
use crate::exec::{ExecContext, NodeMetrics, execute_with};
use crate::io::ScanSource;
use crate::physical::PhysicalPlan;

pub use bandwidth::memory_bandwidth;
pub use process::{cpu_time, peak_rss};

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
            match (m.extra.is_empty(), m.fused_bytes_saved) {
                (true, 0) => String::new(),
                (false, 0) => format!(" {}", m.extra),
                (true, saved) => format!(" fused_exprs_saved={saved}B"),
                (false, saved) => format!(" {} fused_exprs_saved={saved}B", m.extra),
            },
            indent = m.depth * 2
        ));
    }
    out.push_str(&format!("total operator time: {:.3}ms\n", total * 1e3));
    out
}

/// How to profile.
#[derive(Debug, Clone, Default)]
pub struct ProfileOptions {
    /// Read at most this many rows from each scan (both strategies), so the
    /// row-wise run stays short. `None`: everything.
    pub row_limit: Option<usize>,
    /// Also run the columnar executor with fusion, for the fused total.
    pub fusion: bool,
}

/// One operator's figures.
#[derive(Debug, Clone)]
pub struct OperatorProfile {
    /// Depth in the plan tree.
    pub depth: usize,
    /// The operator.
    pub name: String,
    /// Rows produced.
    pub rows: usize,
    /// Bytes of the Arrow arrays produced (columnar run).
    pub bytes: usize,
    /// Time excluding inputs, tuple at a time.
    pub rowwise: Duration,
    /// Time excluding inputs, columnar (unfused).
    pub columnar: Duration,
}

/// The result of [`profile`].
#[derive(Debug, Clone)]
pub struct Profile {
    /// Per operator, in plan pre-order.
    pub operators: Vec<OperatorProfile>,
    /// Wall time of the row-wise run.
    pub rowwise_total: Duration,
    /// Wall time of the columnar run, every operator a step (median of 3).
    pub columnar_total: Duration,
    /// Wall time of the columnar run with fusion, when asked for (median of 3).
    pub fused_total: Option<Duration>,
    /// Bytes of intermediate arrays that fused expressions did not
    /// materialize in one fused run.
    pub fused_bytes_saved: usize,
    /// Bytes the scans produced (columnar), for throughput.
    pub scanned_bytes: usize,
    /// Rows read from each scan when sampling.
    pub sampled: Option<usize>,
    /// Measured memory bandwidth of this machine, GB/s.
    pub bandwidth_gbs: f64,
    /// CPU time (all threads) of the median columnar run.
    pub columnar_cpu: Option<Duration>,
    /// Peak resident memory of the process after the columnar runs.
    pub columnar_peak_rss: Option<u64>,
}

/// Bytes the plan's fused expressions have saved so far, all nodes.
fn bytes_saved(plan: &PhysicalPlan) -> usize {
    plan.fused_bytes_saved() + plan.children().into_iter().map(bytes_saved).sum::<usize>()
}

/// Profiles a physical plan with both strategies
/// ([`crate::LazyFrame::profile_executors`] profiles a query).
pub fn profile(plan: PhysicalPlan, options: &ProfileOptions) -> Result<Profile> {
    let mut plan = plan;
    if let Some(n) = options.row_limit {
        plan = sample(&plan, n)?;
    }
    // Columnar runs are short: take the median of three (the first also
    // warms the file cache for the row-wise run, which runs once).
    let mut runs = Vec::new();
    // "Unfused": no pipeline fusion into parents, and every expression
    // evaluated operator by operator.
    let unfused = plan.unfuse_expressions();
    for _ in 0..3 {
        let ctx = ExecContext::unfused().counting_bytes();
        let cpu = cpu_time();
        let start = Instant::now();
        execute_with(&unfused, &ctx)?;
        let cpu = cpu.zip(cpu_time()).map(|(a, b)| b.saturating_sub(a));
        runs.push((start.elapsed(), ctx.metrics(), cpu));
    }
    let columnar_peak_rss = peak_rss();
    // A scan's byte counter is part of the plan and adds up over the runs:
    // the first run's figure is one run's.
    let scanned_bytes = runs[0].1.iter().map(|m| m.bytes_in).sum();
    runs.sort_by_key(|(t, _, _)| *t);
    let (columnar_total, col_metrics, columnar_cpu) = runs.swap_remove(1);
    let (fused_total, fused_bytes_saved) = if options.fusion {
        let before = bytes_saved(&plan);
        let mut times = Vec::new();
        for _ in 0..3 {
            let start = Instant::now();
            execute_with(&plan, &ExecContext::default())?;
            times.push(start.elapsed());
        }
        times.sort();
        (Some(times[1]), (bytes_saved(&plan) - before) / 3)
    } else {
        (None, 0)
    };
    let start = Instant::now();
    let (_, row_metrics) = execute_rowwise(&plan)?;
    let rowwise_total = start.elapsed();
    let operators = col_metrics
        .iter()
        .zip(&row_metrics)
        .map(|(c, r)| OperatorProfile {
            depth: c.depth,
            name: c.name.clone(),
            rows: c.rows_out,
            bytes: c.bytes_out,
            rowwise: r.self_time,
            columnar: c.self_time,
        })
        .collect();
    Ok(Profile {
        operators,
        rowwise_total,
        columnar_total,
        fused_total,
        fused_bytes_saved,
        scanned_bytes,
        sampled: options.row_limit,
        bandwidth_gbs: memory_bandwidth(),
        columnar_cpu,
        columnar_peak_rss,
    })
}

/// The plan with every scan replaced by the first `n` rows of its data.
fn sample(plan: &PhysicalPlan, n: usize) -> Result<PhysicalPlan> {
    let children = plan
        .children()
        .into_iter()
        .map(|c| sample(c, n).map(Box::new))
        .collect::<Result<Vec<_>>>()?;
    let mut next = children.into_iter();
    let mut child = || next.next().expect("one sampled plan per child");
    Ok(match plan {
        PhysicalPlan::Scan {
            source,
            projection,
            filters,
            schema,
            ..
        } => {
            let batches = source.read(projection.as_deref(), &[], &Default::default(), None)?;
            let batches = crate::exec::columnar::slice(batches, 0, Some(n));
            PhysicalPlan::Scan {
                source: ScanSource::memory(schema.clone(), batches)?,
                projection: None,
                filters: filters.clone(),
                schema: schema.clone(),
                estimated_rows: None,
                metrics: Default::default(),
            }
        }
        PhysicalPlan::Pipeline { stages, schema, .. } => PhysicalPlan::Pipeline {
            input: child(),
            stages: stages.clone(),
            schema: schema.clone(),
        },
        PhysicalPlan::HashAggregate {
            keys, aggs, schema, ..
        } => PhysicalPlan::HashAggregate {
            input: child(),
            keys: keys.clone(),
            aggs: aggs.clone(),
            schema: schema.clone(),
        },
        PhysicalPlan::HashJoin {
            left_keys,
            right_keys,
            how,
            build_side,
            filter,
            output,
            schema,
            ..
        } => {
            let left = child();
            PhysicalPlan::HashJoin {
                left,
                right: child(),
                left_keys: left_keys.clone(),
                right_keys: right_keys.clone(),
                how: *how,
                build_side: *build_side,
                filter: filter.clone(),
                output: output.clone(),
                schema: schema.clone(),
            }
        }
        PhysicalPlan::CrossJoin { schema, .. } => {
            let left = child();
            PhysicalPlan::CrossJoin {
                left,
                right: child(),
                schema: schema.clone(),
            }
        }
        PhysicalPlan::Sort { keys, limit, .. } => PhysicalPlan::Sort {
            input: child(),
            keys: keys.clone(),
            limit: *limit,
        },
        PhysicalPlan::Slice { offset, len, .. } => PhysicalPlan::Slice {
            input: child(),
            offset: *offset,
            len: *len,
        },
        PhysicalPlan::Union { inputs, schema } => PhysicalPlan::Union {
            inputs: (0..inputs.len()).map(|_| *child()).collect(),
            schema: schema.clone(),
        },
        PhysicalPlan::Window {
            func,
            args,
            partition_by,
            order_by,
            limit,
            schema,
            ..
        } => PhysicalPlan::Window {
            input: child(),
            func: *func,
            args: args.clone(),
            partition_by: partition_by.clone(),
            order_by: order_by.clone(),
            limit: *limit,
            schema: schema.clone(),
        },
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int64Array, RecordBatch, StringArray};

    use super::*;
    use crate::expr::{col, lit};

    #[test]
    fn operators_report_their_bytes_and_scans_one_run_of_bytes() {
        let n = 10_000;
        let batch = RecordBatch::try_from_iter([
            ("x", Arc::new(Int64Array::from_iter_values(0..n)) as _),
            (
                "s",
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("v{i}")),
                )) as _,
            ),
        ])
        .unwrap();
        let plan = crate::LazyFrame::from_batches(vec![batch])
            .unwrap()
            .filter(col("x").gt(lit(10)))
            .physical_plan()
            .unwrap();
        let options = ProfileOptions {
            row_limit: None,
            fusion: false,
        };
        let p = profile(plan, &options).unwrap();
        for op in &p.operators {
            assert!(op.rows == 0 || op.bytes > 0, "{op:?}");
        }
        let scan = p.operators.last().expect("the scan is the last operator");
        assert!(scan.name.starts_with("Scan"), "{scan:?}");
        // Counted once, not once per columnar run.
        assert_eq!(p.scanned_bytes, scan.bytes);
        assert!(p.throughput_gbs() > 0.0);
    }
}
