//! Sort (and top-k) and slicing.

use arrow::compute::{
    SortColumn, SortOptions, concat_batches, lexsort_to_indices, take_record_batch,
};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::error::Result;
use crate::io::BATCH_SIZE;
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::evaluate_array;

/// Sorts all input rows by `keys`; with `limit`, keeps only the first rows
/// (arrow's lexsort then does a partial sort: top-k).
pub fn sort(
    input: Vec<RecordBatch>,
    schema: &SchemaRef,
    keys: &[(PhysicalExpr, SortOptions)],
    limit: Option<usize>,
) -> Result<Vec<RecordBatch>> {
    let all = concat_batches(schema, &input)?;
    drop(input);
    if all.num_rows() == 0 {
        return Ok(vec![]);
    }
    let columns = keys
        .iter()
        .map(|(e, options)| {
            Ok(SortColumn {
                values: evaluate_array(e, &all)?,
                options: Some(*options),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let limit = limit.map(|l| l.min(all.num_rows()));
    let indices = lexsort_to_indices(&columns, limit)?;
    let sorted = take_record_batch(&all, &indices)?;
    Ok(split(sorted))
}

/// Splits a large batch into batches of [`BATCH_SIZE`] rows (zero-copy).
fn split(batch: RecordBatch) -> Vec<RecordBatch> {
    (0..batch.num_rows())
        .step_by(BATCH_SIZE)
        .map(|start| batch.slice(start, BATCH_SIZE.min(batch.num_rows() - start)))
        .collect()
}

/// Rows `offset..offset+len` of the concatenated input (zero-copy).
pub fn slice(input: Vec<RecordBatch>, mut offset: usize, len: Option<usize>) -> Vec<RecordBatch> {
    let mut remaining = len.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for b in input {
        if remaining == 0 {
            break;
        }
        if offset >= b.num_rows() {
            offset -= b.num_rows();
            continue;
        }
        let n = (b.num_rows() - offset).min(remaining);
        out.push(b.slice(offset, n));
        remaining -= n;
        offset = 0;
    }
    out
}
