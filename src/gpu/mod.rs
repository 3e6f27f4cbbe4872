//! GPU offload of hash group-by (and the hash join kernels), with a clean
//! CPU fallback.
//!
//! - `kernels.cu`: the CUDA C kernels, compiled once per process by NVRTC.
//! - `cuda.rs` (feature `cuda`): the runtime through `cudarc`; it loads the
//!   driver at run time, so builds need no CUDA toolkit and machines
//!   without a GPU get a reason instead of a panic.
//! - `emulate.rs`: a CPU port of the kernels, tested against the CPU
//!   operators (and selectable as a device, for tests and demos).
//! - `raw.rs`: kernel output → Arrow arrays.
//! - `cost.rs`: the CPU/GPU cost model used by `--device auto`.
//!
//! [`try_group_by`] is the executor's entry point: it either returns the
//! aggregate's output with a note on where it ran and why, or declines
//! with the reason, and the CPU operator runs instead.

pub mod cost;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod emulate;
pub mod key_pack;
pub mod placement;
pub mod raw;
pub mod sweep;

use std::str::FromStr;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow::compute::{cast, concat};
use arrow::datatypes::{DataType, SchemaRef};

use crate::error::{Result, SlothError};
use crate::expr::AggFunc;
use crate::physical::AggregateExpr;
use crate::physical::expr::{Node, PhysicalExpr};
use emulate::TablePlan;
use key_pack::{KeyPacking, Nulls};

/// What the kernels report when a group-by's table fills.
pub const TABLE_FULL: &str = "hash table full";
use raw::{AggKind, Values};

/// Where group-by operators run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    /// Always the CPU.
    Cpu,
    /// The GPU whenever the operator is supported (CPU fallback on failure).
    Gpu,
    /// The GPU when present and the cost model expects it to be faster.
    #[default]
    Auto,
    /// The kernels' CPU port (`emulate.rs`): the GPU code path without a GPU.
    Emulate,
}

impl FromStr for Device {
    type Err = SlothError;
    fn from_str(s: &str) -> Result<Device> {
        match s {
            "cpu" => Ok(Device::Cpu),
            "gpu" => Ok(Device::Gpu),
            "auto" => Ok(Device::Auto),
            "emulate" => Ok(Device::Emulate),
            _ => Err(SlothError::plan(format!(
                "unknown device '{s}'; devices: cpu, gpu, auto, emulate"
            ))),
        }
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
            Device::Auto => "auto",
            Device::Emulate => "emulate",
        })
    }
}

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

/// A group-by the kernels can run: integer keys (several are packed into
/// one, see `key_pack.rs`), and sum, count, mean, min, max over integer or
/// float columns.
struct GroupBySpec {
    keys: Vec<usize>,
    aggs: Vec<(AggKind, Option<usize>)>,
}

impl GroupBySpec {
    /// The value columns the aggregates read (`count(*)` reads none).
    fn value_columns(&self) -> usize {
        self.aggs.iter().filter(|(_, c)| c.is_some()).count()
    }
}

fn spec(keys: &[PhysicalExpr], aggs: &[AggregateExpr]) -> std::result::Result<GroupBySpec, String> {
    let column = |e: &PhysicalExpr| match e.node {
        Node::Column(i) if raw::lane_type(&e.data_type).is_some() => Some(i),
        _ => None,
    };
    if keys.is_empty() {
        return Err("not supported on the GPU: a global aggregate (no group key)".into());
    }
    let keys = keys
        .iter()
        .map(|key| {
            column(key)
                .filter(|_| raw::lane_type(&key.data_type) == Some(DataType::Int64))
                .ok_or("not supported on the GPU: a key that is not an integer column")
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let aggs = aggs
        .iter()
        .map(|a| {
            let kind = match a.func {
                AggFunc::Sum => AggKind::Sum,
                AggFunc::Mean => AggKind::Mean,
                AggFunc::Min => AggKind::Min,
                AggFunc::Max => AggKind::Max,
                AggFunc::Count | AggFunc::CountStar => AggKind::Count,
                _ => return Err(format!("not supported on the GPU: {}", a.func.name())),
            };
            if a.distinct {
                return Err("not supported on the GPU: DISTINCT aggregates".into());
            }
            match a.args.as_slice() {
                [] => Ok((kind, None)),
                [arg] => column(arg)
                    .map(|c| (kind, Some(c)))
                    .ok_or_else(|| match arg.node {
                        Node::Column(_) => format!(
                            "not supported on the GPU: an aggregate of a {} column",
                            arg.data_type
                        ),
                        _ => "not supported on the GPU: an aggregate of an expression".into(),
                    }),
                _ => Err("not supported on the GPU: multi-argument aggregates".into()),
            }
        })
        .collect::<std::result::Result<Vec<_>, String>>()?;
    Ok(GroupBySpec { keys, aggs })
}

/// The key columns of a join the kernels can run (integer keys; inner,
/// left, semi or anti; no filter beyond the keys), or why they cannot.
fn join_spec(
    (left_keys, right_keys): (&[PhysicalExpr], &[PhysicalExpr]),
    how: crate::plan::JoinType,
    has_filter: bool,
) -> std::result::Result<(Vec<usize>, Vec<usize>), String> {
    use crate::plan::JoinType;
    if has_filter
        || !matches!(
            how,
            JoinType::Inner | JoinType::Left | JoinType::Semi | JoinType::Anti
        )
    {
        return Err(format!(
            "not supported on the GPU: {how:?} join{}",
            if has_filter { " with a filter" } else { "" }
        ));
    }
    match (int_key_columns(left_keys), int_key_columns(right_keys)) {
        (Some(l), Some(r)) => Ok((l, r)),
        _ => Err("not supported on the GPU: a non-integer join key".into()),
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

/// The input columns of join keys that are all integer columns.
fn int_key_columns(keys: &[PhysicalExpr]) -> Option<Vec<usize>> {
    keys.iter()
        .map(|e| match e.node {
            Node::Column(i) if raw::lane_type(&e.data_type) == Some(DataType::Int64) => Some(i),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .filter(|k| !k.is_empty())
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

/// The one Int64 key the kernels group by: the key column itself, or
/// several integer key columns packed into one (with their packing), or
/// why they do not pack.
#[allow(clippy::type_complexity)]
fn group_key(
    input: &[RecordBatch],
    keys: &[usize],
) -> Result<std::result::Result<(ArrayRef, Option<KeyPacking>), String>> {
    let columns = keys
        .iter()
        .map(|&k| lane_column(input, k))
        .collect::<Result<Vec<_>>>()?;
    if let [one] = columns.as_slice() {
        return Ok(Ok((one.clone(), None)));
    }
    let ints: Vec<&Int64Array> = columns.iter().map(as_int64).collect();
    let parts: Vec<&[&Int64Array]> = ints.iter().map(std::slice::from_ref).collect();
    Ok(KeyPacking::new(&parts, Nulls::Group).map(|p| {
        let packed: ArrayRef = std::sync::Arc::new(p.pack(&ints));
        (packed, Some(p))
    }))
}

/// The one Int64 key per join side the kernels match on: the key columns
/// themselves, or several integer keys packed alike on both sides (a row
/// with a null key matches nothing), or why they do not pack.
#[allow(clippy::type_complexity)]
fn join_keys(
    (left, lk): (&[RecordBatch], &[usize]),
    (right, rk): (&[RecordBatch], &[usize]),
) -> Result<std::result::Result<(ArrayRef, ArrayRef), String>> {
    let columns = |input: &[RecordBatch], keys: &[usize]| {
        keys.iter()
            .map(|&k| lane_column(input, k))
            .collect::<Result<Vec<_>>>()
    };
    let (l, r) = (columns(left, lk)?, columns(right, rk)?);
    if let ([l], [r]) = (l.as_slice(), r.as_slice()) {
        return Ok(Ok((l.clone(), r.clone())));
    }
    let (l, r): (Vec<&Int64Array>, Vec<&Int64Array>) = (
        l.iter().map(as_int64).collect(),
        r.iter().map(as_int64).collect(),
    );
    let both: Vec<[&Int64Array; 2]> = l.iter().zip(&r).map(|(a, b)| [*a, *b]).collect();
    let parts: Vec<&[&Int64Array]> = both.iter().map(|p| p.as_slice()).collect();
    Ok(KeyPacking::new(&parts, Nulls::Propagate).map(|p| {
        let (l, r): (ArrayRef, ArrayRef) = (
            std::sync::Arc::new(p.pack(&l)),
            std::sync::Arc::new(p.pack(&r)),
        );
        (l, r)
    }))
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

/// Runs a hash aggregate with the GPU kernels when `device` asks for it
/// and the operator is supported; otherwise says why not.
pub fn try_group_by(
    device: Device,
    input: &[RecordBatch],
    keys: &[PhysicalExpr],
    aggs: &[AggregateExpr],
    schema: &SchemaRef,
) -> Result<Outcome> {
    if device == Device::Cpu {
        return Ok(Outcome::Declined("device=cpu".into()));
    }
    let spec = match spec(keys, aggs) {
        Ok(s) => s,
        Err(why) => return Ok(Outcome::Declined(why)),
    };
    let rows: usize = input.iter().map(|b| b.num_rows()).sum();
    if matches!(device, Device::Auto | Device::Gpu)
        && let Err(why) = availability()
    {
        return Ok(Outcome::Declined(format!("device=cpu (gpu: {why})")));
    }
    let estimate = || group_by_estimate(rows, spec.value_columns());
    if let Some(why) = cost_model_declines(device, estimate) {
        return Ok(Outcome::Declined(why));
    }
    if input.is_empty() || rows == 0 {
        return Ok(Outcome::Declined("device=cpu (empty input)".into()));
    }
    let (key, packing) = match group_key(input, &spec.keys)? {
        Ok(k) => k,
        Err(why) => return Ok(Outcome::Declined(format!("device=cpu ({why})"))),
    };
    let values: Vec<Option<ArrayRef>> = spec
        .aggs
        .iter()
        .map(|(_, c)| c.map(|c| lane_column(input, c)).transpose())
        .collect::<Result<_>>()?;
    // NaN orders differently in the kernels' comparisons: leave it to the CPU.
    if values.iter().flatten().any(|v| {
        v.as_any()
            .downcast_ref::<Float64Array>()
            .is_some_and(|f| f.values().iter().any(|x| x.is_nan()))
    }) {
        return Ok(Outcome::Declined("device=cpu (NaN values)".into()));
    }
    let key_values = as_int64(&key);
    let key_valid = raw::validity_bytes(&key);
    if key_values.iter().flatten().any(|k| k == emulate::EMPTY_KEY) {
        return Ok(Outcome::Declined(
            "device=cpu (a key equals the kernels' empty marker)".into(),
        ));
    }
    let validity: Vec<Option<Vec<u8>>> = values
        .iter()
        .map(|v| v.as_ref().and_then(|v| raw::validity_bytes(v)))
        .collect();
    let lanes: Vec<(AggKind, Values<'_>)> = spec
        .aggs
        .iter()
        .zip(values.iter().zip(&validity))
        .map(|((kind, _), (v, valid))| {
            let valid = valid.as_deref();
            let lane = match v {
                None => Values::Rows(rows),
                Some(v) => match v.data_type() {
                    DataType::Float64 => Values::F64(
                        v.as_any()
                            .downcast_ref::<Float64Array>()
                            .expect("f64")
                            .values(),
                        valid,
                    ),
                    _ => Values::I64(int64_values(v), valid),
                },
            };
            (*kind, lane)
        })
        .collect();
    let kinds: Vec<AggKind> = spec.aggs.iter().map(|(k, _)| *k).collect();
    if let Some(why) = injected_fault() {
        return Ok(Outcome::Declined(why));
    }
    let keys_slice = key_values.values().as_ref();
    let run = |plan: TablePlan| match device {
        Device::Emulate => emulate::group_by(keys_slice, key_valid.as_deref(), &lanes, plan)
            .map(|raw| (raw, "device=emulated-gpu (kernels' CPU port)".to_string()))
            .ok_or_else(|| TABLE_FULL.to_string()),
        _ => run_on_gpu(keys_slice, key_valid.as_deref(), &lanes, plan)
            .map(|(raw, note)| (raw, format!("{note}; {}", estimate()))),
    };
    // A table sized from a sample of the keys can fill; one with room for
    // every row cannot.
    let plan = TablePlan::for_keys(keys_slice);
    let every_row = TablePlan::for_every_row(keys_slice.len());
    let ran = match run(plan) {
        Err(why) if why == TABLE_FULL && plan != every_row => run(every_row),
        ran => ran,
    };
    let (raw, note) = match ran {
        Ok(ran) => ran,
        Err(why) => return Ok(Outcome::Declined(format!("device=cpu (gpu failed: {why})"))),
    };
    Ok(Outcome::Ran(
        raw::assemble(&raw, &kinds, schema, packing.as_ref())?,
        note,
    ))
}

/// Runs a hash join with the GPU kernels (build on the right input, probe
/// with the left, pairs gathered on the host) when `device` asks for it
/// and the join is supported; otherwise says why not.
pub fn try_join(
    device: Device,
    (left, right): (&[RecordBatch], &[RecordBatch]),
    (left_keys, right_keys): (&[PhysicalExpr], &[PhysicalExpr]),
    how: crate::plan::JoinType,
    has_filter: bool,
    (output, schema): (Option<&[usize]>, &SchemaRef),
) -> Result<Outcome> {
    use crate::plan::JoinType;
    if device == Device::Cpu {
        return Ok(Outcome::Declined("device=cpu".into()));
    }
    let (lk, rk) = match join_spec((left_keys, right_keys), how, has_filter) {
        Ok(k) => k,
        Err(why) => return Ok(Outcome::Declined(why)),
    };
    if matches!(device, Device::Auto | Device::Gpu)
        && let Err(why) = availability()
    {
        return Ok(Outcome::Declined(format!("device=cpu (gpu: {why})")));
    }
    let (nl, nr): (usize, usize) = (
        left.iter().map(|b| b.num_rows()).sum(),
        right.iter().map(|b| b.num_rows()).sum(),
    );
    let estimate = || join_estimate(nl, nr);
    if let Some(why) = cost_model_declines(device, estimate) {
        return Ok(Outcome::Declined(why));
    }
    if nl == 0 || nr == 0 {
        return Ok(Outcome::Declined("device=cpu (empty input)".into()));
    }
    let (lkey, rkey) = match join_keys((left, &lk), (right, &rk))? {
        Ok(k) => k,
        Err(why) => return Ok(Outcome::Declined(format!("device=cpu ({why})"))),
    };
    let (lvals, rvals) = (int64_values(&lkey), int64_values(&rkey));
    let (lvalid, rvalid) = (raw::validity_bytes(&lkey), raw::validity_bytes(&rkey));
    // The table is built on the right input and probed with the left, which
    // the kernels' match counts then describe (left, semi, anti). An inner
    // join needs no counts: it builds on the smaller input, as the CPU does.
    let swap = how == JoinType::Inner && nr > nl;
    let (build, probe) = ((rvals, rvalid.as_deref()), (lvals, lvalid.as_deref()));
    let (build, probe) = if swap { (probe, build) } else { (build, probe) };
    if build.0.contains(&emulate::EMPTY_KEY) {
        return Ok(Outcome::Declined(
            "device=cpu (a key equals the kernels' empty marker)".into(),
        ));
    }
    if let Some(why) = injected_fault() {
        return Ok(Outcome::Declined(why));
    }
    let ((build_rows, probe_rows, counts), note) = match device {
        Device::Emulate => match emulate::join(build, probe) {
            Some(p) => (p, "device=emulated-gpu (kernels' CPU port)".to_string()),
            None => {
                return Ok(Outcome::Declined(
                    "device=cpu (emulated hash table full)".into(),
                ));
            }
        },
        _ => match join_on_gpu(build, probe) {
            Ok((p, note)) => (p, format!("{note}; {}", estimate())),
            Err(why) => return Ok(Outcome::Declined(format!("device=cpu (gpu failed: {why})"))),
        },
    };
    let left_all = arrow::compute::concat_batches(&left[0].schema(), left)?;
    let right_all = arrow::compute::concat_batches(&right[0].schema(), right)?;
    let take_all = |batch: &RecordBatch, idx: &dyn Array| -> Result<Vec<ArrayRef>> {
        batch
            .columns()
            .iter()
            .map(|c| Ok(arrow::compute::take(c, idx, None)?))
            .collect()
    };
    let columns = match how {
        JoinType::Semi | JoinType::Anti => {
            let keep = |c: u32| (c > 0) == (how == JoinType::Semi);
            let rows = arrow::array::UInt64Array::from_iter_values(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| keep(**c))
                    .map(|(i, _)| i as u64),
            );
            take_all(&left_all, &rows)?
        }
        _ => {
            let (left_rows, right_rows) = if swap {
                (&build_rows, &probe_rows)
            } else {
                (&probe_rows, &build_rows)
            };
            let mut l: Vec<Option<u64>> = left_rows.iter().map(|&p| Some(p as u64)).collect();
            let mut r: Vec<Option<u64>> = right_rows.iter().map(|&b| Some(b as u64)).collect();
            if how == JoinType::Left {
                for (i, _) in counts.iter().enumerate().filter(|(_, c)| **c == 0) {
                    l.push(Some(i as u64));
                    r.push(None);
                }
            }
            let mut cols = take_all(&left_all, &arrow::array::UInt64Array::from(l))?;
            cols.extend(take_all(&right_all, &arrow::array::UInt64Array::from(r))?);
            cols
        }
    };
    let columns = crate::physical::join_outputs(columns, output);
    Ok(Outcome::Ran(
        RecordBatch::try_new(schema.clone(), columns)?,
        note,
    ))
}

#[cfg(feature = "cuda")]
fn join_on_gpu(
    build: (&[i64], Option<&[u8]>),
    probe: (&[i64], Option<&[u8]>),
) -> std::result::Result<(raw::JoinPairs, String), String> {
    let gpu = cuda::runtime()?;
    let (pairs, t) = gpu.join(build, probe)?;
    Ok((
        pairs,
        format!(
            "device=gpu ({}) transfer={:.3}ms kernel={:.3}ms",
            gpu.name, t.transfer_ms, t.kernel_ms
        ),
    ))
}

#[cfg(not(feature = "cuda"))]
fn join_on_gpu(
    _: (&[i64], Option<&[u8]>),
    _: (&[i64], Option<&[u8]>),
) -> std::result::Result<(raw::JoinPairs, String), String> {
    Err("sloth was built without the `cuda` feature".into())
}

#[cfg(feature = "cuda")]
fn run_on_gpu(
    keys: &[i64],
    valid: Option<&[u8]>,
    lanes: &[(AggKind, Values<'_>)],
    plan: TablePlan,
) -> std::result::Result<(raw::RawGroupBy, String), String> {
    let gpu = cuda::runtime()?;
    let (raw, t) = gpu.group_by(keys, valid, lanes, plan)?;
    Ok((
        raw,
        format!(
            "device=gpu ({}) transfer={:.3}ms kernel={:.3}ms",
            gpu.name, t.transfer_ms, t.kernel_ms
        ),
    ))
}

#[cfg(not(feature = "cuda"))]
fn run_on_gpu(
    _: &[i64],
    _: Option<&[u8]>,
    _: &[(AggKind, Values<'_>)],
    _: TablePlan,
) -> std::result::Result<(raw::RawGroupBy, String), String> {
    Err("sloth was built without the `cuda` feature".into())
}

/// For the GPU tests: a one-line reason when they must be skipped.
pub fn skip_reason() -> Option<String> {
    availability().err()
}
