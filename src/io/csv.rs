//! CSV reading through arrow-csv, with schema inference and column projection.

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Seek};
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, StringArray};

use arrow::csv::ReaderBuilder;
use arrow::csv::reader::Format;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use super::{BATCH_SIZE, csv_dates, nullable_schema, open};
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
    /// Column types that replace the inferred ones, by column name
    /// (DuckDB's `types = {'day': 'DATE'}`).
    pub types: Vec<(String, DataType)>,
    /// How dates are written, in strftime codes (`%d/%m/%Y`); a text
    /// column whose sampled values all match becomes a `DATE`. ISO dates
    /// read without it.
    pub date_format: Option<String>,
    /// How timestamps are written, in strftime codes (`%d/%m/%Y %H:%M`).
    pub timestamp_format: Option<String>,
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
            types: vec![],
            date_format: None,
            timestamp_format: None,
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

/// An error if a quoted field is still open at the end of `bytes`: the
/// CSV parser would read the rest of the file into that one field, a
/// silent wrong answer. A quote opens a field only at its start (after a
/// delimiter, a line end or the start of the file); inside, a doubled
/// quote (or the escape character and the byte after it) is data; a
/// closing quote must end its field, else the quotes are out of step. The
/// scan jumps from quote to quote, so it costs a fraction of the parse.
fn check_quotes(bytes: &[u8], options: &CsvOptions) -> std::result::Result<(), String> {
    let quote = options.quote;
    let mut pos = 0;
    while let Some(found) = memchr::memchr(quote, &bytes[pos..]) {
        let open = pos + found;
        let at_field_start = open == 0
            || matches!(bytes[open - 1], b'\n' | b'\r')
            || bytes[open - 1] == options.delimiter;
        pos = open + 1;
        if !at_field_start {
            continue;
        }
        // Inside a quoted field: find its closing quote.
        loop {
            let next = match options.escape {
                Some(escape) => memchr::memchr2(quote, escape, &bytes[pos..]),
                None => memchr::memchr(quote, &bytes[pos..]),
            };
            let Some(next) = next else {
                let line = memchr::memchr_iter(b'\n', &bytes[..open]).count() + 1;
                return Err(format!(
                    "the quoted field opened on line {line} is never closed"
                ));
            };
            let at = pos + next;
            let escaped = Some(bytes[at]) == options.escape && bytes[at] != quote;
            let doubled = bytes.get(at + 1) == Some(&quote);
            if escaped || doubled {
                pos = at + 2;
            } else {
                // A closing quote: what follows must end the field.
                match bytes.get(at + 1) {
                    None | Some(b'\n' | b'\r') => {}
                    Some(&b) if b == options.delimiter => {}
                    Some(&b) => {
                        let line_of =
                            |i: usize| memchr::memchr_iter(b'\n', &bytes[..i]).count() + 1;
                        return Err(format!(
                            "the quoted field opened on line {} closes on line {} followed by '{}', \
                             not a delimiter or a line end",
                            line_of(open),
                            line_of(at),
                            b as char
                        ));
                    }
                }
                pos = at + 1;
                break;
            }
        }
    }
    Ok(())
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
    let schema = with_formatted_dates(path, unique_header_names(&schema), options)?;
    let schema = with_declared_types(schema, &options.types)
        .map_err(|e| SlothError::plan(format!("CSV '{}': {e}", path.display())))?;
    Ok(nullable_schema(&schema))
}

/// `schema` with each inferred text column whose sampled values are all
/// dates (or timestamps) in the options' formats typed as such.
fn with_formatted_dates(path: &Path, schema: Schema, options: &CsvOptions) -> Result<Schema> {
    let formats = csv_dates::Formats::of(options);
    let text: Vec<usize> = (0..schema.fields().len())
        .filter(|&i| schema.field(i).data_type() == &DataType::Utf8)
        .collect();
    if formats.is_empty() || text.is_empty() {
        return Ok(schema);
    }
    let as_text = Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_data_type(DataType::Utf8))
            .collect::<Vec<_>>(),
    );
    let sample = ReaderBuilder::new(Arc::new(as_text))
        .with_format(format(options)?)
        .with_batch_size(options.infer_rows.clamp(1, BATCH_SIZE))
        .with_projection(text.clone())
        .build(open(path)?)
        .map_err(|e| data_error(path, e))?
        .next()
        .transpose()
        .map_err(|e| data_error(path, e))?;
    let Some(sample) = sample else {
        return Ok(schema);
    };
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for (column, &i) in sample.columns().iter().zip(&text) {
        let values = column.as_any().downcast_ref::<StringArray>();
        if let Some(t) = values.and_then(|v| formats.inferred_type(v)) {
            fields[i] = fields[i].clone().with_data_type(t);
        }
    }
    Ok(Schema::new(fields))
}

/// `schema` with the declared columns' types in place of the inferred
/// ones; a name the file does not have is an error that lists its columns.
fn with_declared_types(
    schema: Schema,
    types: &[(String, DataType)],
) -> std::result::Result<Schema, String> {
    let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
    for (name, data_type) in types {
        let Some(field) = fields.iter_mut().find(|f| f.name() == name) else {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            return Err(format!(
                "types names column '{name}', which the file does not have (columns: {})",
                names.join(", ")
            ));
        };
        *field = field.clone().with_data_type(data_type.clone());
    }
    Ok(Schema::new(fields))
}

/// Names a header's columns as DuckDB does: an empty name becomes
/// `column{i}` (its 0-based position) and the k-th repeat of a name gets
/// `_k` (then `_1` again while that is taken), so that every column can be
/// named in a query.
fn unique_header_names(schema: &Schema) -> Schema {
    let mut taken = HashSet::new();
    let mut repeats: HashMap<String, usize> = HashMap::new();
    let fields = schema.fields().iter().enumerate().map(|(i, f)| {
        let base = match f.name().trim() {
            "" => format!("column{i}"),
            _ => f.name().clone(),
        };
        let mut name = base.clone();
        if taken.contains(&name) {
            let k = repeats.entry(base.clone()).or_insert(0);
            *k += 1;
            name = format!("{base}_{k}");
        }
        while !taken.insert(name.clone()) {
            name.push_str("_1");
        }
        f.as_ref().clone().with_name(name)
    });
    Schema::new(fields.collect::<Vec<_>>())
}

/// Fields decoded per batch at most. The reader sizes its buffers for a
/// whole batch of every column up front (about 32 bytes a field before any
/// is read), so a wide file gets shorter batches: 4,000 columns x 64 Ki rows
/// would reserve gigabytes for a two-row file.
const BATCH_FIELDS: usize = 1 << 20;

/// Rows per batch for a file of `columns` columns: [`BATCH_SIZE`], or fewer
/// so that a batch holds at most [`BATCH_FIELDS`] fields.
fn batch_rows(columns: usize) -> usize {
    (BATCH_FIELDS / columns.max(1)).clamp(64, BATCH_SIZE)
}

pub(super) fn read(
    path: &Path,
    schema: &SchemaRef,
    options: &CsvOptions,
    projection: Option<&[usize]>,
) -> Result<Vec<RecordBatch>> {
    let file = open(path)?;
    // SAFETY: the map is read while the file is open; a file changed
    // under a running query is the caller's to avoid, as for any reader.
    let bytes = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| data_error(path, e))?;
    check_quotes(&bytes, options).map_err(|e| data_error(path, e))?;
    let file = BufReader::with_capacity(1 << 20, file);
    let formats = csv_dates::Formats::of(options);
    let mut builder = ReaderBuilder::new(Arc::new(csv_dates::as_read(schema, &formats)))
        .with_format(format(options)?)
        .with_batch_size(batch_rows(schema.fields().len()));
    if let Some(p) = projection {
        builder = builder.with_projection(p.to_vec());
    }
    let reader = builder.build(file).map_err(|e| data_error(path, e))?;
    let batches = reader.map(|b| b.map_err(|e| data_error(path, e)));
    if formats.is_empty() {
        return batches.collect();
    }
    let output = Arc::new(match projection {
        Some(p) => schema.project(p)?,
        None => schema.as_ref().clone(),
    });
    // Lines of the file before each batch's first row.
    let mut line = 1 + usize::from(options.has_header);
    batches
        .map(|batch| {
            let batch = batch?;
            let first_line = line;
            line += batch.num_rows();
            csv_dates::parse_batch(batch, &output, &formats, first_line)
                .map_err(|e| data_error(path, e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, options: &CsvOptions) -> std::result::Result<(), String> {
        check_quotes(text.as_bytes(), options)
    }

    #[test]
    fn wide_files_get_short_batches_and_narrow_ones_full_ones() {
        assert_eq!(batch_rows(8), BATCH_SIZE);
        assert_eq!(batch_rows(4_000), BATCH_FIELDS / 4_000);
        assert_eq!(batch_rows(10_000_000), 64);
        assert!(batch_rows(4_000) * 4_000 <= BATCH_FIELDS);
    }

    #[test]
    fn empty_and_repeated_header_names_are_named_as_duckdb_names_them() {
        use arrow::datatypes::{DataType, Field};
        let names = |header: &[&str]| {
            let fields: Vec<_> = header
                .iter()
                .map(|n| Field::new(*n, DataType::Int64, true))
                .collect();
            let schema = unique_header_names(&Schema::new(fields));
            schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&["a", "a"]), ["a", "a_1"]);
        assert_eq!(names(&["", "x", ""]), ["column0", "x", "column2"]);
        assert_eq!(names(&["a", "a", "a_1"]), ["a", "a_1", "a_1_1"]);
        assert_eq!(names(&["a", "a", "a", "b"]), ["a", "a_1", "a_2", "b"]);
        assert_eq!(names(&["a", "a_1", "a"]), ["a", "a_1", "a_1_1"]);
    }

    #[test]
    fn an_unclosed_quote_is_an_error_naming_its_line() {
        let csv = CsvOptions::default();
        let e = check("a,b\n1,\"x\n2,y\n3,\"z\"\n", &csv).unwrap_err();
        assert!(e.contains("opened on line 2 closes on line 4"), "{e}");
        let e = check("a,b\n1,2\n3,\"x\n", &csv).unwrap_err();
        assert!(e.contains("opened on line 3 is never closed"), "{e}");
        assert!(check("\"", &csv).unwrap_err().contains("line 1"));
    }

    #[test]
    fn closed_doubled_escaped_and_mid_field_quotes_are_data() {
        let csv = CsvOptions::default();
        for ok in [
            "a,b\n1,\"x \"\"q\"\" y\"\n",
            "a\n\"multi\nline\"\n",
            "a\nab\"c\n",
            "a,b\r\n\"x\",\"\"\r\n",
            "",
        ] {
            assert_eq!(check(ok, &csv), Ok(()), "{ok:?}");
        }
        let semicolons = CsvOptions {
            delimiter: b';',
            ..CsvOptions::default()
        };
        assert!(check("a;b\n1;\"x\n", &semicolons).is_err());
        let backslash = CsvOptions {
            escape: Some(b'\\'),
            ..CsvOptions::default()
        };
        assert_eq!(check("a\n\"x \\\" y\"\n", &backslash), Ok(()));
        assert!(check("a\n\"x \\\"\n", &backslash).is_err());
    }
}
