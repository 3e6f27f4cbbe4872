//! Polars interop (feature `polars`): [`DataFrame::to_polars`],
//! [`DataFrame::from_polars`] and [`LazyFrame::from_polars`].
//!
//! Columns cross through the Arrow C Data Interface, array by array:
//! arrow-rs exports an array (`arrow::ffi::to_ffi`) and polars-arrow
//! imports it (`polars_arrow::ffi::import_array_from_c`), and the other way
//! round. Both sides keep the producer's buffers alive through the
//! interface's release callback, so fixed-width columns (integers, floats,
//! booleans, dates, timestamps, decimals) are shared, not copied.
//!
//! What is copied, and why:
//! - **Strings to Polars**: Polars holds every string column as string
//!   views; a `Utf8`/`LargeUtf8` column of sloth's is rewritten into views
//!   on import (sloth's Parquet reader already gives views, which cross as
//!   they are).
//! - **Columns chunked differently from Polars**: a sloth frame is a list
//!   of record batches, all columns cut at the same rows. A Polars frame
//!   whose columns have different chunk boundaries is concatenated into one
//!   batch; one whose columns share their boundaries becomes one batch per
//!   chunk, uncopied.

use std::sync::Arc;

use arrow::array::{ArrayRef, make_array};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema, from_ffi, to_ffi};
use arrow::record_batch::RecordBatch;
use polars_arrow::ffi::{ArrowArray as PolarsFfiArray, ArrowSchema as PolarsFfiSchema};
use polars_core::prelude::{Column, CompatLevel, PlSmallStr, Series};

use crate::error::{Result, SlothError};
use crate::frame::{DataFrame, LazyFrame};

fn polars_error(e: impl std::fmt::Display) -> SlothError {
    SlothError::Data(format!("Polars: {e}"))
}

// The two crates' C Data Interface structs are both the `#[repr(C)]`
// structs the Arrow specification defines, field for field; what moves
// between them is ownership of the release callback, which each side calls
// exactly once (on drop, unless the other side took it over).
const _: () = assert!(size_of::<FFI_ArrowArray>() == size_of::<PolarsFfiArray>());
const _: () = assert!(size_of::<FFI_ArrowSchema>() == size_of::<PolarsFfiSchema>());

/// One sloth array as a Polars array, sharing its buffers.
fn array_to_polars(array: &ArrayRef, field: &Field) -> Result<Box<dyn polars_arrow::array::Array>> {
    let (ffi_array, _) = to_ffi(&array.to_data())?;
    let ffi_schema = FFI_ArrowSchema::try_from(field)?;
    // SAFETY: identical layouts (asserted above); the structs are moved,
    // so only the importing side will call their release callbacks.
    let (array, schema) = unsafe {
        (
            std::mem::transmute::<FFI_ArrowArray, PolarsFfiArray>(ffi_array),
            std::mem::transmute::<FFI_ArrowSchema, PolarsFfiSchema>(ffi_schema),
        )
    };
    // SAFETY: arrow-rs produced both structs by the specification.
    unsafe {
        let field = polars_arrow::ffi::import_field_from_c(&schema).map_err(polars_error)?;
        polars_arrow::ffi::import_array_from_c(array, field.dtype).map_err(polars_error)
    }
}

/// One Polars array (a series' chunk) as a sloth array, sharing its buffers.
fn array_from_polars(array: Box<dyn polars_arrow::array::Array>, name: &str) -> Result<ArrayRef> {
    let field = polars_arrow::datatypes::Field::new(name.into(), array.dtype().clone(), true);
    let schema = polars_arrow::ffi::export_field_to_c(&field);
    let array = polars_arrow::ffi::export_array_to_c(array);
    // SAFETY: identical layouts (asserted above); moved, so only arrow-rs
    // releases them.
    let (array, schema) = unsafe {
        (
            std::mem::transmute::<PolarsFfiArray, FFI_ArrowArray>(array),
            std::mem::transmute::<PolarsFfiSchema, FFI_ArrowSchema>(schema),
        )
    };
    // SAFETY: polars-arrow produced both structs by the specification.
    let data = unsafe { from_ffi(array, &schema)? };
    Ok(make_array(data))
}

impl DataFrame {
    /// This result as a Polars `DataFrame`: one chunk per record batch,
    /// fixed-width columns shared, not copied (see the module's notes for
    /// what is).
    pub fn to_polars(&self) -> Result<polars_core::frame::DataFrame> {
        let columns = (self.schema().fields().iter().enumerate())
            .map(|(i, field)| {
                let mut chunks = (self.batches().iter())
                    .map(|b| array_to_polars(b.column(i), field))
                    .collect::<Result<Vec<_>>>()?;
                if chunks.is_empty() {
                    // No batches: an empty chunk still gives the type.
                    let empty = arrow::array::new_empty_array(field.data_type());
                    chunks.push(array_to_polars(&empty, field)?);
                }
                let name = PlSmallStr::from(field.name().as_str());
                let series = Series::try_from((name, chunks));
                series.map(Column::from).map_err(polars_error)
            })
            .collect::<Result<Vec<_>>>()?;
        polars_core::frame::DataFrame::new(self.num_rows(), columns).map_err(polars_error)
    }

    /// A Polars `DataFrame` as a sloth result, sharing its buffers: one
    /// record batch per chunk where every column has the same chunks, else
    /// one batch of the concatenated columns.
    pub fn from_polars(frame: &polars_core::frame::DataFrame) -> Result<DataFrame> {
        let mut fields = Vec::new();
        let mut columns: Vec<Vec<ArrayRef>> = Vec::new();
        for column in frame.columns() {
            let series = column.as_materialized_series();
            let name = series.name().as_str();
            let chunks = (0..series.n_chunks())
                .map(|c| array_from_polars(series.to_arrow(c, CompatLevel::newest()), name))
                .collect::<Result<Vec<_>>>()?;
            let data_type = match chunks.first() {
                Some(a) => a.data_type().clone(),
                None => {
                    let dtype = series.dtype().to_arrow(CompatLevel::newest());
                    let empty = polars_arrow::array::new_empty_array(dtype);
                    array_from_polars(empty, name)?.data_type().clone()
                }
            };
            fields.push(Field::new(name, data_type, true));
            columns.push(chunks);
        }
        let schema: SchemaRef = Arc::new(Schema::new(fields));
        let lengths = |chunks: &Vec<ArrayRef>| chunks.iter().map(|a| a.len()).collect::<Vec<_>>();
        let aligned = columns.windows(2).all(|w| lengths(&w[0]) == lengths(&w[1]));
        let batches = if aligned {
            let n = columns.first().map_or(0, Vec::len);
            (0..n)
                .map(|c| {
                    let arrays = columns.iter().map(|chunks| chunks[c].clone()).collect();
                    RecordBatch::try_new(schema.clone(), arrays)
                })
                .collect::<Result<Vec<_>, _>>()?
        } else {
            let arrays = (columns.iter())
                .map(|chunks| {
                    let refs: Vec<&dyn arrow::array::Array> =
                        chunks.iter().map(|a| a.as_ref()).collect();
                    arrow::compute::concat(&refs)
                })
                .collect::<Result<Vec<_>, _>>()?;
            vec![RecordBatch::try_new(schema.clone(), arrays)?]
        };
        Ok(DataFrame::new(schema, batches))
    }
}

impl LazyFrame {
    /// A lazy frame over a Polars `DataFrame` (see [`DataFrame::from_polars`]).
    pub fn from_polars(frame: &polars_core::frame::DataFrame) -> Result<LazyFrame> {
        let df = DataFrame::from_polars(frame)?;
        LazyFrame::from_batches_with_schema(df.schema().clone(), df.into_batches())
    }
}
