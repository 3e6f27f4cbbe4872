//! GPU offload of hash group-by (and the hash join kernels), with a clean
//! CPU fallback.
//!
//! - `kernels.cu`: the CUDA C kernels, compiled once per process by NVRTC.
//! - `cuda.rs` (feature `cuda`): the runtime through `cudarc`; it loads the
//!   driver at run time, so builds need no CUDA toolkit and machines
//!   without a GPU get a reason instead of a panic.
//! - `emulate.rs`: a CPU port of the kernels, tested against the CPU
//!   operators (and selectable as a device, for tests and demos).
//! - `simt/`: the same `kernels.cu` compiled for the CPU under a stand-in
//!   for CUDA's execution model, for tests.
//! - `group_by.rs`, `join.rs`: what the kernels support, and the host side
//!   of an offloaded group-by or join.
//! - `key_pack.rs`: several integer keys packed into the kernels' one key.
//! - `raw.rs`: kernel output → Arrow arrays.
//! - `cost.rs`: the CPU/GPU cost model used by `--device auto`;
//!   `placement.rs`: the choice it makes, for EXPLAIN.
//!
//! [`try_operator`] is the executor's entry point: it either returns the
//! operator's output with a note on where it ran and why, or declines
//! with the reason, and the CPU operator runs instead.

pub mod cost;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod emulate;
mod group_by;
mod join;
pub mod key_pack;
pub mod placement;
pub mod raw;

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow::compute::{cast, concat};

use crate::error::Result;
use group_by::spec;
pub use group_by::try_group_by;
use join::join_spec;
pub use join::try_join;

/// What the kernels report when a group-by's table fills.
pub const TABLE_FULL: &str = "hash table full";

pub use crate::config::Device;

/// Whether a usable GPU is present, or why not.
pub fn availability() -> std::result::Result<String, String> {
    #[cfg(feature = "cuda")]
    {
        cuda::runtime().map(|g| g.name.clone())
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err("sloth was built without the `cuda` feature".into())
    }
}

/// Why the kernels cannot run this operator, or `None` when they can (a
/// group-by or join of the supported shape); says nothing about whether
/// they should.
pub fn unsupported(plan: &crate::physical::PhysicalPlan) -> Option<String> {
    use crate::physical::PhysicalPlan;
    match plan {
        PhysicalPlan::HashAggregate { keys, aggs, .. } => spec(keys, aggs).err(),
        PhysicalPlan::HashJoin {
            left_keys,
            right_keys,
            how,
            filter,
            ..
        } => join_spec((left_keys, right_keys), *how, filter.is_some()).err(),
        _ => Some("not a group-by or join".into()),
    }
}

/// True when the kernels can run this operator (see [`unsupported`]).
pub fn supports(plan: &crate::physical::PhysicalPlan) -> bool {
    unsupported(plan).is_none()
}

/// The cost model's estimate for a group-by of `rows` rows that reads
/// `value_columns` value columns besides its key.
pub fn group_by_estimate(rows: usize, value_columns: usize) -> cost::Estimate {
    cost::CostModel::calibrated().estimate(rows, 8 * rows * (1 + value_columns), 0)
}

/// The cost model's estimate for a group-by or join the kernels support,
/// given its inputs' rows (a join's probe side first, as in the plan).
pub fn operator_estimate(
    plan: &crate::physical::PhysicalPlan,
    input_rows: &[usize],
) -> Option<cost::Estimate> {
    use crate::physical::PhysicalPlan;
    match (plan, input_rows) {
        (PhysicalPlan::HashAggregate { keys, aggs, .. }, [rows]) => {
            let values = spec(keys, aggs).ok()?.value_columns();
            Some(group_by_estimate(*rows, values))
        }
        (PhysicalPlan::HashJoin { .. }, [probe, build]) => Some(join_estimate(*probe, *build)),
        _ => None,
    }
}

/// The cost model's estimate for a join of `probe` rows against `build`
/// rows (keys in, a pair of row indices per probe row back).
pub fn join_estimate(probe: usize, build: usize) -> cost::Estimate {
    cost::CostModel::calibrated().estimate(probe + build, 8 * (probe + build), 16 * probe)
}

/// A column of the input, concatenated and widened to Int64 or Float64.
fn lane_column(batches: &[RecordBatch], i: usize) -> Result<ArrayRef> {
    let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(i).as_ref()).collect();
    let a = concat(&parts)?;
    let to = raw::lane_type(a.data_type()).expect("checked by spec");
    Ok(if a.data_type() == &to {
        a
    } else {
        cast(&a, &to)?
    })
}

/// A device failure injected by the `SLOTH_GPU_FAULT` environment variable
/// (its value is the reason given): the operator fails just before its
/// kernels would run, on the GPU or the emulated device alike, so the
/// fallback after a failure can be tested on any machine.
fn injected_fault() -> Option<String> {
    static FAULT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    FAULT
        .get_or_init(|| std::env::var("SLOTH_GPU_FAULT").ok())
        .as_ref()
        .map(|why| format!("device=cpu (gpu failed: injected fault: {why})"))
}

/// What happened to a group-by offered to the GPU.
pub enum Outcome {
    /// It ran there: the output and a note (device, estimate, times).
    Ran(RecordBatch, String),
    /// The CPU should run it; why.
    Declined(String),
}

/// An Int64 lane column (see [`lane_column`]).
fn as_int64(a: &ArrayRef) -> &Int64Array {
    a.as_any().downcast_ref::<Int64Array>().expect("lane type")
}

/// The values of an Int64 lane column.
fn int64_values(a: &ArrayRef) -> &[i64] {
    as_int64(a).values()
}

/// Under `auto`, the reason to stay on the CPU when the cost model expects
/// no gain.
fn cost_model_declines(device: Device, estimate: impl Fn() -> cost::Estimate) -> Option<String> {
    if device != Device::Auto {
        return None;
    }
    let e = estimate();
    (!e.prefers_gpu()).then(|| format!("device=cpu (cost model: {e})"))
}

/// Offers a group-by or join of the physical plan, with its inputs' batches
/// (one list per input), to the kernels.
pub fn try_operator(
    device: Device,
    plan: &crate::physical::PhysicalPlan,
    inputs: &[Vec<RecordBatch>],
) -> Result<Outcome> {
    use crate::physical::PhysicalPlan;
    match (plan, inputs) {
        (
            PhysicalPlan::HashAggregate {
                keys, aggs, schema, ..
            },
            [input],
        ) => try_group_by(device, input, keys, aggs, schema),
        (
            PhysicalPlan::HashJoin {
                left_keys,
                right_keys,
                how,
                filter,
                output,
                schema,
                ..
            },
            [left, right],
        ) => try_join(
            device,
            (left, right),
            (left_keys, right_keys),
            *how,
            filter.is_some(),
            (output.as_deref(), schema),
        ),
        _ => Ok(Outcome::Declined("not a group-by or join".into())),
    }
}

/// For the GPU tests: a one-line reason when they must be skipped.
#[cfg(any(test, feature = "internals"))]
pub fn skip_reason() -> Option<String> {
    availability().err()
}
