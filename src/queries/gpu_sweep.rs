//! The size sweep `scripts/gpu-check.sh` runs on a GPU machine: group-by
//! sum by an Int64 key at growing sizes, low and high cardinality, on the
//! CPU and on the GPU, with the cost model's choice checked against the
//! faster device. A point's "cpu ms" and "gpu ms" time the whole operator
//! (`--device cpu` and `--device gpu`) over the same in-memory input;
//! "xfer ms" and "kernel ms" split the kernels' own time, and GB/s and the
//! share of memory bandwidth are of the 16 bytes a row the kernels read.

use crate::error::Result;

/// HBM bandwidth of an H200 by its data sheet, bytes per second: the
/// reference when the device copy cannot be measured.
pub const HBM_BYTES_PER_S: f64 = 4.8e12;

/// Runs the sweep up to `max_rows` and prints one line per point.
pub fn run(max_rows: usize) -> Result<()> {
    #[cfg(feature = "cuda")]
    {
        on_gpu::run(max_rows)
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = max_rows;
        println!("skipped: sloth was built without the `cuda` feature");
        Ok(())
    }
}

#[cfg(feature = "cuda")]
mod on_gpu {
    use std::sync::Arc;
    use std::time::Instant;

    use arrow::array::{ArrayRef, Int64Array, RecordBatch};

    use super::HBM_BYTES_PER_S;
    use crate::error::Result;
    use crate::gpu::Device;
    use crate::gpu::cost::CostModel;
    use crate::gpu::raw::{AggKind, Values};
    use crate::prelude::*;

    pub fn run(max_rows: usize) -> Result<()> {
        let gpu = match crate::gpu::cuda::runtime() {
            Ok(g) => g,
            Err(why) => {
                println!("skipped: {why}");
                return Ok(());
            }
        };
        println!("device: {}", gpu.name);
        // The share of memory bandwidth is of what a device-to-device copy
        // of 2 GiB reaches, measured here (the data sheet's as a fallback).
        let hbm = match gpu.copy_bandwidth(1 << 31) {
            Ok(b) => {
                println!(
                    "memory bandwidth (device copy, measured): {:.0} GB/s",
                    b / 1e9
                );
                b
            }
            Err(why) => {
                println!("memory bandwidth not measured ({why}); using the data sheet's");
                HBM_BYTES_PER_S
            }
        };
        let model = CostModel::calibrated();
        println!(
            "cost model: pcie {:.1} GB/s, kernel {:.2} Grows/s, fixed {:.3} ms, cpu {:.0} Mrows/s",
            model.pcie_bytes_per_s / 1e9,
            model.gpu_rows_per_s / 1e9,
            model.gpu_fixed_s * 1e3,
            model.cpu_rows_per_s / 1e6
        );
        println!(
            "{:>11} {:>9} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} {:>8} {:>10} {:>6}",
            "rows",
            "groups",
            "cpu ms",
            "gpu ms",
            "xfer ms",
            "kernel ms",
            "Grows/s",
            "GB/s",
            "%HBM",
            "choice",
            "right"
        );
        let (mut points, mut right) = (0, 0);
        let mut rows = 100_000usize;
        while rows <= max_rows {
            for groups in [100i64, (rows as i64 / 10).max(1)] {
                let keys: Vec<i64> = (0..rows as i64).map(|i| (i * 7919) % groups).collect();
                let vals: Vec<i64> = (0..rows as i64).map(|i| i % 1000).collect();
                // CPU: sloth's own hash aggregate, in memory, hot.
                let k: ArrayRef = Arc::new(Int64Array::from(keys.clone()));
                let v: ArrayRef = Arc::new(Int64Array::from(vals.clone()));
                let batch = RecordBatch::try_from_iter([("k", k), ("v", v)])?;
                let lf = LazyFrame::from_batches(vec![batch])?
                    .group_by([col("k")])
                    .agg([col("v").sum()]);
                // The whole operator on each device, hot: what the cost
                // model's choice is judged by (host work included).
                let time = |device: Device| -> Result<(f64, String)> {
                    let lf = lf.clone().with_device(device);
                    lf.collect()?;
                    let start = Instant::now();
                    let (_, metrics) = lf.collect_with_metrics()?;
                    let ms = start.elapsed().as_secs_f64() * 1e3;
                    let note = metrics
                        .iter()
                        .find(|m| m.name.starts_with("HashAggregate"))
                        .map(|m| m.extra.clone())
                        .unwrap_or_default();
                    Ok((ms, note))
                };
                let (cpu_ms, _) = time(Device::Cpu)?;
                let (gpu_ms, note) = time(Device::Gpu)?;
                if !note.contains("device=gpu") {
                    println!("{rows:>11} {groups:>9} the GPU declined: {note}");
                    continue;
                }
                // The kernels alone, for transfer vs kernel time.
                let lanes = [(AggKind::Sum, Values::I64(&vals, None))];
                let plan = crate::gpu::emulate::TablePlan::for_keys(&keys);
                gpu.group_by(&keys, None, &lanes, plan)
                    .map_err(crate::SlothError::Data)?;
                let (_, t) = gpu
                    .group_by(&keys, None, &lanes, plan)
                    .map_err(crate::SlothError::Data)?;
                let bytes = 16.0 * rows as f64;
                let gbs = bytes / (t.kernel_ms / 1e3) / 1e9;
                let est = model.estimate(rows, 16 * rows, 0);
                let choice_gpu = est.prefers_gpu();
                let ok = choice_gpu == (gpu_ms < cpu_ms);
                points += 1;
                right += ok as usize;
                println!(
                    "{:>11} {:>9} {:>10.2} {:>10.2} {:>10.2} {:>10.3} {:>9.2} {:>9.1} {:>7.1}% {:>10} {:>6}",
                    rows,
                    groups,
                    cpu_ms,
                    gpu_ms,
                    t.transfer_ms,
                    t.kernel_ms,
                    rows as f64 / (t.kernel_ms / 1e3) / 1e9,
                    gbs,
                    100.0 * gbs * 1e9 / hbm,
                    if choice_gpu { "gpu" } else { "cpu" },
                    if ok { "yes" } else { "no" }
                );
            }
            rows *= 10;
        }
        println!("cost model picked the faster device on {right} of {points} points");
        Ok(())
    }
}
