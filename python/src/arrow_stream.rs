//! Batches in and out of Python through the Arrow PyCapsule interface.
//!
//! Both directions hand over the Arrow C stream (`ArrowArrayStream`):
//! buffers are shared, never copied, whether the other side is pyarrow,
//! Polars, pandas (through pyarrow), DuckDB or anything else that speaks it.

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow::pyarrow::FromPyArrow;
use arrow::record_batch::{RecordBatchIterator, RecordBatchReader};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// A capsule holding a C stream over `batches`, as `__arrow_c_stream__`
/// returns it.
pub fn export<'py>(
    py: Python<'py>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    let stream = FFI_ArrowArrayStream::new(Box::new(reader));
    PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
}

/// The schema and batches of any object with `__arrow_c_stream__` (a
/// pyarrow Table or RecordBatchReader, a Polars DataFrame, ...).
pub fn import(data: &Bound<'_, PyAny>) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    if !data.hasattr("__arrow_c_stream__")? && !data.hasattr("_export_to_c")? {
        return Err(PyTypeError::new_err(format!(
            "expected Arrow data (an object with __arrow_c_stream__, such as a pyarrow.Table \
             or a polars.DataFrame), got a {}",
            data.get_type().name()?
        )));
    }
    let reader = ArrowArrayStreamReader::from_pyarrow_bound(data)?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(format!("reading Arrow data: {e}")))?;
    Ok((schema, batches))
}
