//! Nested columns as CSV text. arrow-csv writes flat columns only; a list
//! (`array_agg`) is written as DuckDB writes it, `[a, b, NULL]`, and a
//! null list as an empty field.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::error::Result;

/// `batch` with each nested column replaced by its text; the batch itself
/// when it has none.
pub fn csv_ready(batch: &RecordBatch) -> Result<RecordBatch> {
    let nested = |t: &DataType| t.is_nested();
    if !batch
        .schema()
        .fields()
        .iter()
        .any(|f| nested(f.data_type()))
    {
        return Ok(batch.clone());
    }
    let options = FormatOptions::default().with_null("NULL");
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if !nested(field.data_type()) {
            fields.push(field.as_ref().clone());
            columns.push(column.clone());
            continue;
        }
        let formatter = ArrayFormatter::try_new(column.as_ref(), &options)?;
        let text: StringArray = (0..column.len())
            .map(|i| column.is_valid(i).then(|| formatter.value(i).to_string()))
            .collect();
        fields.push(Field::new(field.name(), DataType::Utf8, true));
        columns.push(Arc::new(text));
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{AsArray, Int64Array, ListArray};
    use arrow::datatypes::Int64Type;

    #[test]
    fn lists_become_text_and_flat_columns_stay() {
        let lists = ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(1), None, Some(3)]),
            None,
            Some(vec![]),
        ]);
        let ids: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let batch =
            RecordBatch::try_from_iter([("id", ids.clone()), ("l", Arc::new(lists) as ArrayRef)])
                .unwrap();
        let out = csv_ready(&batch).unwrap();
        assert_eq!(out.column(0).as_ref(), ids.as_ref());
        let text = out.column(1).as_string::<i32>();
        assert_eq!(text.value(0), "[1, NULL, 3]");
        assert!(text.is_null(1));
        assert_eq!(text.value(2), "[]");
    }
}
