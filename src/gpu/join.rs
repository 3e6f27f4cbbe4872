//! The join offload: which joins the kernels run, the key they match on
//! (several integer keys packed alike on both sides), the run on the GPU
//! or the kernels' CPU port, and the gather of the output columns by the
//! row pairs the kernels return.

use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, SchemaRef};

use super::emulate;
use super::key_pack::{KeyPacking, Nulls};
use super::raw;
use super::{
    Device, Outcome, as_int64, availability, cost_model_declines, injected_fault, int64_values,
    join_estimate, lane_column,
};
use crate::error::Result;
use crate::physical_expr::{Node, PhysicalExpr};

/// The key columns of a join the kernels can run (integer keys; inner,
/// left, semi or anti; no filter beyond the keys), or why they cannot.
pub(super) fn join_spec(
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
    let gpu = super::cuda::runtime()?;
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
