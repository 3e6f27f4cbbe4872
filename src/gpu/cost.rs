//! Where a group-by runs: a cost model comparing the CPU's measured rate
//! with the GPU's transfers (both ways over PCIe) plus kernel time.
//!
//! ```text
//! gpu = launch + bytes_in / pcie + rows / gpu_rate + bytes_out / pcie
//! cpu = rows / cpu_rate
//! ```
//! The CPU rate comes from a probe of sloth's own grouping kernels on first
//! use; the PCIe and kernel rates from a probe on the device when one is
//! present (`Gpu::rates` in `cuda.rs`), otherwise from the defaults below.

use std::sync::OnceLock;
use std::time::Instant;

/// Rates the model works with.
#[derive(Debug, Clone, Copy)]
pub struct CostModel {
    /// Host↔device bandwidth, bytes per second.
    pub pcie_bytes_per_s: f64,
    /// Group-by kernel rate on the device, rows per second.
    pub gpu_rows_per_s: f64,
    /// Fixed cost of a GPU operator (launches, allocation, sync), seconds.
    pub gpu_fixed_s: f64,
    /// Hash aggregate rate on the CPU (all cores), rows per second.
    pub cpu_rows_per_s: f64,
}

/// The model's estimate for one operator.
#[derive(Debug, Clone, Copy)]
pub struct Estimate {
    /// Seconds on the CPU.
    pub cpu_s: f64,
    /// Seconds moving data to and from the device.
    pub transfer_s: f64,
    /// Seconds of kernels (and fixed costs) on the device.
    pub kernel_s: f64,
}

impl Estimate {
    /// Total GPU seconds.
    pub fn gpu_s(&self) -> f64 {
        self.transfer_s + self.kernel_s
    }
    /// True when the GPU is expected to be faster.
    pub fn prefers_gpu(&self) -> bool {
        self.gpu_s() < self.cpu_s
    }
}

impl std::fmt::Display for Estimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "est cpu {:.2} ms, gpu {:.2} ms (transfer {:.2} + kernel {:.2})",
            self.cpu_s * 1e3,
            self.gpu_s() * 1e3,
            self.transfer_s * 1e3,
            self.kernel_s * 1e3
        )
    }
}

impl CostModel {
    /// Defaults for a PCIe 4/5 x16 link and a data-center GPU, with the
    /// CPU rate probed on this machine.
    pub fn with_cpu_probe() -> CostModel {
        CostModel {
            pcie_bytes_per_s: 20e9,
            gpu_rows_per_s: 4e9,
            gpu_fixed_s: 150e-6,
            cpu_rows_per_s: cpu_rows_per_s(),
        }
    }

    /// The defaults with the CPU rate probed here, and the device's rates
    /// measured on it (on first use) when a GPU is present.
    pub fn calibrated() -> CostModel {
        let model = CostModel::with_cpu_probe();
        #[cfg(feature = "cuda")]
        if let Ok(rates) = super::cuda::runtime().and_then(|gpu| gpu.rates()) {
            return CostModel {
                pcie_bytes_per_s: rates.pcie_bytes_per_s,
                gpu_rows_per_s: rates.gpu_rows_per_s,
                gpu_fixed_s: rates.gpu_fixed_s,
                ..model
            };
        }
        model
    }

    /// Estimates a group-by over `rows` rows that moves `bytes_in` to the
    /// device and `bytes_out` back.
    pub fn estimate(&self, rows: usize, bytes_in: usize, bytes_out: usize) -> Estimate {
        Estimate {
            cpu_s: rows as f64 / self.cpu_rows_per_s,
            transfer_s: (bytes_in + bytes_out) as f64 / self.pcie_bytes_per_s,
            kernel_s: self.gpu_fixed_s + rows as f64 / self.gpu_rows_per_s,
        }
    }
}

/// The CPU's grouping rate, rows per second over all cores, measured once
/// per process: one thread groups 1M integer keys (1,000 groups) and sums a
/// value per group, the work of a hash aggregate's inner loop, and the rate
/// is scaled by the worker threads. Measured on the kernels rather than
/// through a query, which the executor above this layer would run.
pub fn cpu_rows_per_s() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    *RATE.get_or_init(|| probe_cpu_grouping().unwrap_or(200e6))
}

fn probe_cpu_grouping() -> Option<f64> {
    use crate::kernels::hash_table::{GroupTable, KeyEncoder};
    use crate::kernels::packed_keys::NullKeys;
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::datatypes::DataType;
    use std::sync::Arc;
    const N: i64 = 1_000_000;
    let keys: ArrayRef = Arc::new(Int64Array::from_iter_values((0..N).map(|i| i % 1000)));
    let encoder = KeyEncoder::new(&[DataType::Int64], NullKeys::Group).ok()?;
    let run = || -> Option<f64> {
        let start = Instant::now();
        let mut hashes = Vec::new();
        let batch = encoder
            .encode(std::slice::from_ref(&keys), &mut hashes)
            .ok()?;
        let mut table = GroupTable::new(&encoder);
        let mut groups = Vec::new();
        table
            .insert_batch(&encoder, &batch, &hashes, &mut groups)
            .ok()?;
        // The sum a group-by would add per row, kept so it is not elided.
        let mut sums = vec![0i64; table.len()];
        for (row, &g) in groups.iter().enumerate() {
            sums[g as usize] = sums[g as usize].wrapping_add(row as i64);
        }
        std::hint::black_box(&sums);
        Some(start.elapsed().as_secs_f64())
    };
    run()?; // warm-up: page faults and the allocator's first growth
    let seconds = run()?.max(1e-9);
    Some(N as f64 / seconds * rayon::current_num_threads() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_inputs_stay_on_the_cpu_and_large_ones_move() {
        let m = CostModel {
            pcie_bytes_per_s: 20e9,
            gpu_rows_per_s: 4e9,
            gpu_fixed_s: 150e-6,
            cpu_rows_per_s: 200e6,
        };
        // 10k rows: launch overhead dominates.
        assert!(!m.estimate(10_000, 160_000, 16_000).prefers_gpu());
        // 100M rows, 16 bytes each: 80 ms of transfer against 500 ms of CPU.
        let big = m.estimate(100_000_000, 1_600_000_000, 16_000);
        assert!(big.prefers_gpu(), "{big}");
        assert!((big.transfer_s - 0.0800008).abs() < 1e-6);
    }

    #[test]
    fn the_cpu_probe_measures_a_positive_finite_rate() {
        // The rate depends on the machine and its load; only its form is
        // checked here (timings belong in benchmarks).
        let r = cpu_rows_per_s();
        assert!(r.is_finite() && r > 0.0, "{r}");
    }
}
