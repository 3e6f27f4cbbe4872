//! Hash aggregation, partitioned across cores.
//!
//! 1. In parallel per batch: evaluate keys and aggregate arguments, encode the
//!    keys and hash them once.
//! 2. In parallel per partition: each thread owns the keys whose hash falls in
//!    its partition, so threads share no table and need no merge step. It
//!    assigns group ids and feeds (row, group) lists to the accumulators.
//! 3. Each partition emits its groups; keys are gathered from the first row
//!    that created each group.

use arrow::array::{ArrayRef, new_null_array};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use rayon::prelude::*;

use crate::error::Result;
use crate::kernels::accumulators::{self, Accumulator};
use crate::kernels::eval::evaluate_array;
use crate::kernels::hash_table::{GroupTable, KeyBatch, KeyEncoder};
use crate::physical::AggregateExpr;
use crate::physical::expr::PhysicalExpr;

/// Below this many input rows a single partition is used.
const PARALLEL_ROWS: usize = 1 << 17;

struct Prepared {
    keys: Vec<ArrayRef>,
    encoded: Option<KeyBatch>,
    hashes: Vec<u64>,
    args: Vec<Vec<ArrayRef>>,
    rows: usize,
}

#[inline]
fn partition_of(hash: u64, partitions: usize) -> usize {
    // High bits: the table indexes with the low ones.
    ((hash >> 40) as usize) % partitions
}

/// Groups `input` by `keys` and computes `aggs`; no keys means one global group.
pub fn hash_aggregate(
    input: Vec<RecordBatch>,
    keys: &[PhysicalExpr],
    aggs: &[AggregateExpr],
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let key_types: Vec<DataType> = keys.iter().map(|k| k.data_type.clone()).collect();
    let encoder = if keys.is_empty() {
        None
    } else {
        Some(KeyEncoder::new(&key_types)?)
    };
    let arg_types: Vec<Vec<DataType>> = aggs
        .iter()
        .map(|a| {
            let t: Vec<DataType> = a.args.iter().map(|e| e.data_type.clone()).collect();
            accumulators::input_types(a.func, &t)
        })
        .collect();

    let prepared: Vec<Prepared> = input
        .par_iter()
        .map(|batch| {
            let key_arrays = keys
                .iter()
                .map(|k| evaluate_array(k, batch))
                .collect::<Result<Vec<_>>>()?;
            let mut hashes = Vec::new();
            let encoded = encoder
                .as_ref()
                .map(|e| e.encode(&key_arrays, &mut hashes))
                .transpose()?;
            let args = aggs
                .iter()
                .zip(&arg_types)
                .map(|(a, types)| {
                    let values = a
                        .args
                        .iter()
                        .map(|e| evaluate_array(e, batch))
                        .collect::<Result<Vec<_>>>()?;
                    accumulators::cast_inputs(&values, types)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Prepared {
                keys: key_arrays,
                encoded,
                hashes,
                args,
                rows: batch.num_rows(),
            })
        })
        .collect::<Result<_>>()?;

    let total: usize = prepared.iter().map(|p| p.rows).sum();
    let partitions = if encoder.is_none() || total < PARALLEL_ROWS {
        1
    } else {
        rayon::current_num_threads().max(1)
    };
    let outputs: Vec<RecordBatch> = (0..partitions)
        .into_par_iter()
        .map(|p| {
            aggregate_partition(
                &prepared,
                encoder.as_ref(),
                aggs,
                &arg_types,
                schema,
                p,
                partitions,
            )
        })
        .collect::<Result<_>>()?;
    Ok(outputs
        .into_iter()
        .filter(|b| b.num_rows() > 0 || keys.is_empty())
        .collect())
}

fn aggregate_partition(
    prepared: &[Prepared],
    encoder: Option<&KeyEncoder>,
    aggs: &[AggregateExpr],
    arg_types: &[Vec<DataType>],
    schema: &SchemaRef,
    partition: usize,
    partitions: usize,
) -> Result<RecordBatch> {
    let mut accs: Vec<Box<dyn Accumulator>> = aggs
        .iter()
        .zip(arg_types)
        .map(|(a, t)| accumulators::create(a.func, a.distinct, t, &a.data_type))
        .collect::<Result<_>>()?;
    let mut table = encoder.map(GroupTable::new);
    let mut first_rows: Vec<(usize, usize)> = Vec::new();
    let mut rows = Vec::new();
    let mut groups = Vec::new();
    for (b, prep) in prepared.iter().enumerate() {
        rows.clear();
        groups.clear();
        match (&mut table, &prep.encoded) {
            (Some(table), Some(encoded)) => {
                for (i, &h) in prep.hashes.iter().enumerate() {
                    if partitions > 1 && partition_of(h, partitions) != partition {
                        continue;
                    }
                    let g = table.find_or_insert(encoded, h, i);
                    if g as usize == first_rows.len() {
                        first_rows.push((b, i));
                    }
                    rows.push(i as u32);
                    groups.push(g);
                }
            }
            _ => {
                rows.extend(0..prep.rows as u32);
                groups.resize(prep.rows, 0);
            }
        }
        let n = table.as_ref().map_or(1, |t| t.len());
        for (acc, args) in accs.iter_mut().zip(&prep.args) {
            acc.update(args, &rows, &groups, n)?;
        }
    }
    let num_groups = table.as_ref().map_or(1, |t| t.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    let num_keys = schema.fields().len() - aggs.len();
    for k in 0..num_keys {
        let sources: Vec<&dyn arrow::array::Array> =
            prepared.iter().map(|p| p.keys[k].as_ref()).collect();
        columns.push(if first_rows.is_empty() {
            new_null_array(schema.field(k).data_type(), 0)
        } else {
            arrow::compute::interleave(&sources, &first_rows)?
        });
    }
    for (acc, field) in accs.iter_mut().zip(&schema.fields()[num_keys..]) {
        let a = acc.finish(num_groups)?;
        columns.push(if a.data_type() == field.data_type() {
            a
        } else {
            arrow::compute::cast(&a, field.data_type())?
        });
    }
    let options = RecordBatchOptions::new().with_row_count(Some(num_groups));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}
