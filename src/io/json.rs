//! JSON input: newline-delimited JSON (one object per line: `.ndjson`,
//! `.jsonl`, and `.json` files holding objects one after another), and a
//! JSON array of objects (a `.json` file whose first character is `[`, as
//! `--format json` writes it).
//!
//! Column types are inferred from the first [`INFER_ROWS`] objects, as
//! DuckDB samples (integers, floats, strings, Booleans; a field that
//! holds an integer in one object and a float in another is a float). A
//! field missing from an object is null there; a value that does not fit
//! the inferred type later in the file is an error naming the file.

use std::io::{BufReader, Read};
use std::path::Path;

use arrow::datatypes::SchemaRef;
use arrow::json::ReaderBuilder;
use arrow::json::reader::{infer_json_schema, infer_json_schema_from_iterator};
use arrow::record_batch::RecordBatch;

use super::{BATCH_SIZE, nullable_schema, open};
use crate::error::{Result, SlothError};

/// Objects sampled to infer the columns' types.
const INFER_ROWS: usize = 10_000;

fn data_error(path: &Path, e: impl std::fmt::Display) -> SlothError {
    SlothError::Data(format!("JSON file '{}': {e}", path.display()))
}

/// Whether the file holds one JSON array (else objects one after another).
fn is_array(path: &Path) -> Result<bool> {
    let mut file = open(path)?;
    let mut head = [0u8; 4096];
    loop {
        let n = file.read(&mut head).map_err(|e| data_error(path, e))?;
        if n == 0 {
            return Ok(false);
        }
        if let Some(b) = head[..n].iter().find(|b| !b.is_ascii_whitespace()) {
            return Ok(*b == b'[');
        }
    }
}

/// A JSON array file's objects.
fn array_values(path: &Path) -> Result<Vec<serde_json::Value>> {
    let file = BufReader::new(open(path)?);
    let values: Vec<serde_json::Value> =
        serde_json::from_reader(file).map_err(|e| data_error(path, e))?;
    if let Some(i) = values.iter().position(|v| !v.is_object()) {
        return Err(data_error(
            path,
            format!("array element {} is not an object", i + 1),
        ));
    }
    Ok(values)
}

/// The file's columns, from its first objects.
pub(super) fn infer_schema(path: &Path) -> Result<SchemaRef> {
    let schema = if is_array(path)? {
        let values = array_values(path)?;
        infer_json_schema_from_iterator(values.iter().take(INFER_ROWS).map(Ok))
    } else {
        let file = BufReader::new(open(path)?);
        infer_json_schema(file, Some(INFER_ROWS)).map(|(schema, _)| schema)
    }
    .map_err(|e| data_error(path, e))?;
    if schema.fields().is_empty() {
        return Err(data_error(path, "no columns (empty file?)"));
    }
    Ok(nullable_schema(&schema))
}

/// Reads the file's `projection` of `schema` (all columns when `None`).
pub(super) fn read(
    path: &Path,
    schema: &SchemaRef,
    projection: Option<&[usize]>,
) -> Result<Vec<RecordBatch>> {
    let schema = match projection {
        Some(p) => std::sync::Arc::new(schema.project(p)?),
        None => schema.clone(),
    };
    let builder = ReaderBuilder::new(schema).with_batch_size(BATCH_SIZE);
    if is_array(path)? {
        let values = array_values(path)?;
        let mut decoder = builder.build_decoder().map_err(|e| data_error(path, e))?;
        let mut batches = Vec::new();
        for chunk in values.chunks(BATCH_SIZE) {
            decoder.serialize(chunk).map_err(|e| data_error(path, e))?;
            if let Some(b) = decoder.flush().map_err(|e| data_error(path, e))? {
                batches.push(b);
            }
        }
        return Ok(batches);
    }
    let file = BufReader::with_capacity(1 << 20, open(path)?);
    let reader = builder.build(file).map_err(|e| data_error(path, e))?;
    reader.map(|b| b.map_err(|e| data_error(path, e))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{DataType, Int64Type};

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        f
    }

    #[test]
    fn lines_and_arrays_read_alike() {
        let lines = file("{\"a\": 1, \"b\": \"x\"}\n{\"a\": 2}\n\n{\"b\": \"z\", \"a\": 3}\n");
        let array = file("[{\"a\": 1, \"b\": \"x\"}, {\"a\": 2}, {\"b\": \"z\", \"a\": 3}]");
        for f in [&lines, &array] {
            let schema = infer_schema(f.path()).unwrap();
            assert_eq!(schema.field(0).data_type(), &DataType::Int64);
            assert_eq!(schema.field(1).data_type(), &DataType::Utf8);
            let batches = read(f.path(), &schema, None).unwrap();
            let b = arrow::compute::concat_batches(&schema, &batches).unwrap();
            let a: Vec<i64> = b.column(0).as_primitive::<Int64Type>().values().to_vec();
            assert_eq!(a, [1, 2, 3]);
            assert!(b.column(1).is_null(1));
            assert_eq!(b.column(1).as_string::<i32>().value(2), "z");
            let only_b = read(f.path(), &schema, Some(&[1])).unwrap();
            assert_eq!(only_b[0].num_columns(), 1);
        }
    }

    #[test]
    fn bad_json_is_an_error_naming_the_file() {
        let f = file("{\"a\": 1}\n{\"a\": \n");
        let schema = infer_schema(f.path());
        let e = match schema {
            Ok(s) => read(f.path(), &s, None).unwrap_err(),
            Err(e) => e,
        };
        assert!(e.to_string().contains(".json"), "{e}");
        let not_objects = file("[1, 2]");
        let e = infer_schema(not_objects.path()).unwrap_err().to_string();
        assert!(e.contains("not an object"), "{e}");
        assert!(infer_schema(file("").path()).is_err());
    }
}
