//! CSV reading through arrow-csv, with schema inference and column projection.

use std::io::{BufReader, Seek};
use std::path::Path;

use arrow::csv::ReaderBuilder;
use arrow::csv::reader::Format;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::{BATCH_SIZE, nullable_schema, open};
use crate::error::{Result, SlothError};

/// How to parse a CSV file.
///
/// ```
/// use sloth::io::CsvOptions;
/// let options = CsvOptions {
///     has_header: false,
///     delimiter: b';',
///     null_value: Some("NA".into()),
///     ..CsvOptions::default()
/// };
/// # let _ = options;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CsvOptions {
    /// First line holds column names (else they are `column_1`, ..).
    pub has_header: bool,
    /// Field separator.
    pub delimiter: u8,
    /// The character that quotes a field.
    pub quote: u8,
    /// The character that escapes a quote inside a quoted field (none: a
    /// doubled quote).
    pub escape: Option<u8>,
    /// A field spelt exactly so is a null (besides an empty field).
    pub null_value: Option<String>,
    /// Rows sampled to infer types.
    pub infer_rows: usize,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            has_header: true,
            delimiter: b',',
            quote: b'"',
            escape: None,
            null_value: None,
            infer_rows: 10_000,
        }
    }
}

fn format(options: &CsvOptions) -> Result<Format> {
    let mut format = Format::default()
        .with_header(options.has_header)
        .with_delimiter(options.delimiter)
        .with_quote(options.quote);
    if let Some(escape) = options.escape {
        format = format.with_escape(escape);
    }
    if let Some(null) = &options.null_value {
        // An empty field stays a null too, as without the option.
        let pattern = format!("^({}|)$", regex::escape(null));
        let regex = regex::Regex::new(&pattern)
            .map_err(|e| SlothError::plan(format!("null value '{null}': {e}")))?;
        format = format.with_null_regex(regex);
    }
    Ok(format)
}

fn data_error(path: &Path, e: impl std::fmt::Display) -> SlothError {
    SlothError::Data(format!("malformed CSV '{}': {e}", path.display()))
}

pub(super) fn infer_schema(path: &Path, options: &CsvOptions) -> Result<SchemaRef> {
    let mut file = open(path)?;
    let (schema, _) = format(options)?
        .infer_schema(&mut file, Some(options.infer_rows))
        .map_err(|e| data_error(path, e))?;
    file.rewind()?;
    if schema.fields().is_empty() {
        return Err(data_error(path, "no columns (empty file?)"));
    }
    Ok(nullable_schema(&schema))
}

pub(super) fn read(
    path: &Path,
    schema: &SchemaRef,
    options: &CsvOptions,
    projection: Option<&[usize]>,
) -> Result<Vec<RecordBatch>> {
    let file = BufReader::with_capacity(1 << 20, open(path)?);
    let mut builder = ReaderBuilder::new(schema.clone())
        .with_format(format(options)?)
        .with_batch_size(BATCH_SIZE);
    if let Some(p) = projection {
        builder = builder.with_projection(p.to_vec());
    }
    let reader = builder.build(file).map_err(|e| data_error(path, e))?;
    reader.map(|b| b.map_err(|e| data_error(path, e))).collect()
}
