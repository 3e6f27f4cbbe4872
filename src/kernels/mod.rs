//! Kernels: expression evaluation, hashing, hash tables and aggregate state,
//! all over whole Arrow arrays.

pub mod accumulators;
pub mod bloom;
pub mod date_trunc;

pub mod flat_table;
pub mod float_zero;

pub mod hash_table;
pub mod like;
pub mod math;
pub mod packed_keys;
pub mod range_keys;
pub mod strings;
pub mod wide_keys;

use arrow::array::ArrayRef;
use arrow::datatypes::DataType;

/// `array` as `to`: the same array when it already has that type (no copy),
/// a cast otherwise. Operators use it to match their declared output schema.
pub fn cast_if_needed(array: &ArrayRef, to: &DataType) -> crate::error::Result<ArrayRef> {
    Ok(if array.data_type() == to {
        array.clone()
    } else {
        arrow::compute::cast(array, to)?
    })
}

/// `batches` as one batch of `schema`, consuming them: each column is
/// concatenated and its pieces released before the next, so the copy holds
/// at most one column twice instead of every column (a join's build side of
/// gigabytes otherwise needs as much again at once, in fresh pages the
/// kernel must zero). One batch is taken as it is, without a copy.
pub fn concat_owned(
    schema: &arrow::datatypes::SchemaRef,
    batches: Vec<arrow::record_batch::RecordBatch>,
) -> crate::error::Result<arrow::record_batch::RecordBatch> {
    use arrow::record_batch::{RecordBatch, RecordBatchOptions};
    let rows = batches.iter().map(|b| b.num_rows()).sum();
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    if batches.is_empty() {
        return Ok(RecordBatch::new_empty(schema.clone()));
    }
    // Each batch's columns, last first: the next column is popped off.
    let mut pieces: Vec<Vec<ArrayRef>> = batches
        .into_iter()
        .map(|b| b.columns().iter().rev().cloned().collect())
        .collect();
    let mut columns = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let column: Vec<ArrayRef> = (pieces.iter_mut())
            .map(|p| p.pop())
            .collect::<Option<_>>()
            .ok_or_else(|| {
                crate::error::SlothError::Internal(format!("no column '{}'", field.name()))
            })?;
        let parts: Vec<&dyn arrow::array::Array> = column.iter().map(|a| a.as_ref()).collect();
        columns.push(arrow::compute::concat(&parts)?);
    }
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::compute::concat_batches;
    use arrow::record_batch::RecordBatch;

    #[test]
    fn concat_owned_equals_concat_batches() {
        let batch = |from: i64| {
            let ints: ArrayRef = Arc::new(Int64Array::from_iter((from..from + 3).map(Some)));
            let strings: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some("c")]));
            RecordBatch::try_from_iter(vec![("i", ints), ("s", strings)]).unwrap()
        };
        let batches = vec![batch(0), batch(10), batch(20)];
        let schema = batches[0].schema();
        let want = concat_batches(&schema, &batches).unwrap();
        assert_eq!(super::concat_owned(&schema, batches).unwrap(), want);
        assert_eq!(
            super::concat_owned(&schema, vec![batch(5)]).unwrap(),
            batch(5)
        );
        assert_eq!(super::concat_owned(&schema, vec![]).unwrap().num_rows(), 0);
    }
}
