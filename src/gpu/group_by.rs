//! The group-by offload: which aggregates the kernels run, the key they
//! group by (several integer keys packed into one), the run on the GPU or
//! the kernels' CPU port, and the retry with a larger table.

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};

use super::emulate::{self, TablePlan};
use super::key_pack::{KeyPacking, Nulls};
use super::raw::{self, AggKind, Values};
use super::{
    Device, Outcome, TABLE_FULL, as_int64, availability, cost_model_declines, group_by_estimate,
    injected_fault, int64_values, lane_column,
};
use crate::error::Result;
use crate::expr::AggFunc;
use crate::kernels::accumulators;
use crate::physical::AggregateExpr;
use crate::physical_expr::{Node, PhysicalExpr};

/// A group-by the kernels can run: integer keys (several are packed into
/// one, see `key_pack.rs`), and sum, count, mean, min, max over integer or
/// float columns.
pub(super) struct GroupBySpec {
    keys: Vec<usize>,
    aggs: Vec<(AggKind, Option<usize>)>,
}

impl GroupBySpec {
    /// The value columns the aggregates read (`count(*)` reads none).
    pub(super) fn value_columns(&self) -> usize {
        self.aggs.iter().filter(|(_, c)| c.is_some()).count()
    }
}

pub(super) fn spec(
    keys: &[PhysicalExpr],
    aggs: &[AggregateExpr],
) -> std::result::Result<GroupBySpec, String> {
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
    // The kernels add integers wrapping: sums that could come near the
    // type's limit are left to the CPU, whose adds are then checked.
    let summed = |kind: &AggKind| matches!(kind, AggKind::Sum | AggKind::Mean);
    if spec.aggs.iter().zip(&values).any(|((kind, _), v)| {
        summed(kind)
            && v.as_ref()
                .is_some_and(accumulators::integer_sum_may_overflow)
    }) {
        return Ok(Outcome::Declined(
            "device=cpu (an integer sum that could overflow)".into(),
        ));
    }
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
                None => Values::Rows,
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

#[cfg(feature = "cuda")]
fn run_on_gpu(
    keys: &[i64],
    valid: Option<&[u8]>,
    lanes: &[(AggKind, Values<'_>)],
    plan: TablePlan,
) -> std::result::Result<(raw::RawGroupBy, String), String> {
    let gpu = super::cuda::runtime()?;
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
