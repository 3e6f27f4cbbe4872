//! Hive partitions: directories named `key=value` above a table's files
//! (`sales/year=2024/month=3/part-0.parquet`) give every row of those
//! files the columns `year` and `month`.
//!
//! A partition column's type is what all its values read as: BIGINT when
//! every value is an integer, DATE when every value is `YYYY-MM-DD`, else
//! VARCHAR (DuckDB's `hive_types_autocast`). `__HIVE_DEFAULT_PARTITION__`
//! (what Spark and Hive write for a null key) is null, and `%XX` escapes
//! are decoded. Each file's values become constants of its scan, so a
//! predicate on a partition column folds to true or false per file and
//! the files it rules out are never read.

use std::path::{Path, PathBuf};

use arrow::datatypes::DataType;

use crate::error::{Result, SlothError};
use crate::expr::ScalarValue;

/// The value Hive and Spark write for a null partition key.
const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// The `key=value` a directory name holds, if it is a partition directory.
/// `Err` for a name with `=` and an empty key.
pub(crate) fn partition_of(dir_name: &str) -> Option<std::result::Result<(&str, &str), ()>> {
    let (key, value) = dir_name.split_once('=')?;
    Some(if key.is_empty() {
        Err(())
    } else {
        Ok((key, value))
    })
}

/// A table's partition columns and each file's values of them.
#[derive(Debug)]
pub(crate) struct Partitions {
    /// Names (in path order) and types.
    pub columns: Vec<(String, DataType)>,
    /// One row of values per file, in the files' order.
    pub values: Vec<Vec<ScalarValue>>,
}

impl Partitions {
    /// No partition columns, for `files` files.
    pub(crate) fn none(files: usize) -> Self {
        Partitions {
            columns: vec![],
            values: vec![vec![]; files],
        }
    }
}

/// The partition columns of a table's `files`, found below `root`. No
/// partition directory gives no columns. Files whose partition keys
/// differ (`year=..` above one, `month=..` above another) are an error
/// naming both.
pub(crate) fn partition_columns(root: &Path, files: &[PathBuf]) -> Result<Partitions> {
    let mut keys: Option<(Vec<String>, &Path)> = None;
    let mut texts: Vec<Vec<Option<String>>> = Vec::with_capacity(files.len());
    for file in files {
        let (file_keys, values) = file_partitions(root, file)?;
        match &keys {
            None => keys = Some((file_keys, file)),
            Some((first, first_file)) if *first != file_keys => {
                return Err(SlothError::plan(format!(
                    "'{}' is partitioned by ({}), unlike '{}' ({})",
                    file.display(),
                    file_keys.join(", "),
                    first_file.display(),
                    first.join(", ")
                )));
            }
            Some(_) => {}
        }
        texts.push(values);
    }
    let names = keys.map(|(k, _)| k).unwrap_or_default();
    let types: Vec<DataType> = (0..names.len())
        .map(|i| column_type(texts.iter().filter_map(|v| v[i].as_deref())))
        .collect();
    let values = texts
        .into_iter()
        .map(|row| {
            row.into_iter()
                .zip(&types)
                .map(|(v, t)| typed(v, t))
                .collect()
        })
        .collect();
    Ok(Partitions {
        columns: names.into_iter().zip(types).collect(),
        values,
    })
}

/// The `key=value` directories between `root` and `file`: keys and values.
fn file_partitions(root: &Path, file: &Path) -> Result<(Vec<String>, Vec<Option<String>>)> {
    let below = file
        .parent()
        .and_then(|p| p.strip_prefix(root).ok())
        .unwrap_or(Path::new(""));
    let mut keys = Vec::new();
    let mut values = Vec::new();
    for part in below.components() {
        let name = part.as_os_str().to_string_lossy();
        match partition_of(&name) {
            Some(Ok((key, value))) => {
                let key = key.to_ascii_lowercase();
                if keys.contains(&key) {
                    return Err(SlothError::plan(format!(
                        "'{}': partition key '{key}' appears twice in its path",
                        file.display()
                    )));
                }
                keys.push(key);
                values.push((value != NULL_PARTITION).then(|| percent_decode(value)));
            }
            Some(Err(())) => return Err(malformed(&root.join(below), &name)),
            None => {}
        }
    }
    Ok((keys, values))
}

/// The error for a partition directory whose name is not `key=value`.
pub(crate) fn malformed(parent: &Path, name: &str) -> SlothError {
    SlothError::plan(format!(
        "'{}': directory '{name}' is not a key=value partition directory",
        parent.display()
    ))
}

/// BIGINT if every value is an integer, DATE if every value is a date,
/// else VARCHAR; VARCHAR when there is no value at all.
fn column_type<'a>(values: impl Iterator<Item = &'a str> + Clone) -> DataType {
    let mut any = values.clone().peekable();
    if any.peek().is_none() {
        return DataType::Utf8;
    }
    if values.clone().all(|v| v.parse::<i64>().is_ok()) {
        DataType::Int64
    } else if values.clone().all(|v| date_days(v).is_some()) {
        DataType::Date32
    } else {
        DataType::Utf8
    }
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` text.
fn date_days(text: &str) -> Option<i32> {
    if text.len() != 10 {
        return None;
    }
    let date = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from((date - epoch).num_days()).ok()
}

/// A partition value as a constant of the column's type.
fn typed(value: Option<String>, ty: &DataType) -> ScalarValue {
    match (value, ty) {
        (None, DataType::Int64) => ScalarValue::Int64(None),
        (None, DataType::Date32) => ScalarValue::Date32(None),
        (None, _) => ScalarValue::Utf8(None),
        (Some(v), DataType::Int64) => ScalarValue::Int64(v.parse().ok()),
        (Some(v), DataType::Date32) => ScalarValue::Date32(date_days(&v)),
        (Some(v), _) => ScalarValue::Utf8(Some(v)),
    }
}

/// `%XX` escapes decoded (as Hive and Spark escape `/`, `=`, `%`, ..); an
/// escape that is not two hex digits stays as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_values_take_the_type_all_of_them_read_as() {
        let root = Path::new("/d");
        let files: Vec<PathBuf> = [
            "/d/year=2023/day=2023-01-05/city=Ab%2FC/a.parquet",
            "/d/year=2024/day=2024-02-29/city=__HIVE_DEFAULT_PARTITION__/b.parquet",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let Partitions { columns, values } = partition_columns(root, &files).unwrap();
        assert_eq!(
            columns,
            [
                ("year".to_string(), DataType::Int64),
                ("day".to_string(), DataType::Date32),
                ("city".to_string(), DataType::Utf8)
            ]
        );
        assert_eq!(values[0][0], ScalarValue::Int64(Some(2023)));
        assert_eq!(values[0][1], ScalarValue::Date32(Some(19362)));
        assert_eq!(values[0][2], ScalarValue::Utf8(Some("Ab/C".into())));
        assert_eq!(values[1][2], ScalarValue::Utf8(None));
        let mixed = ["/d/k=1/a.csv", "/d/k=x/b.csv"].map(PathBuf::from);
        let columns = partition_columns(root, &mixed).unwrap().columns;
        assert_eq!(columns[0].1, DataType::Utf8);
    }

    #[test]
    fn differing_or_malformed_partitions_are_errors_naming_the_file() {
        let root = Path::new("/d");
        let differ = ["/d/year=1/a.csv", "/d/month=1/b.csv"].map(PathBuf::from);
        let e = partition_columns(root, &differ).unwrap_err().to_string();
        assert!(
            e.contains("/d/month=1/b.csv") && e.contains("(year)"),
            "{e}"
        );
        let empty_key = ["/d/=1/a.csv"].map(PathBuf::from);
        let e = partition_columns(root, &empty_key).unwrap_err().to_string();
        assert!(e.contains("not a key=value"), "{e}");
        let none = ["/d/a.csv", "/d/b.csv"].map(PathBuf::from);
        assert!(partition_columns(root, &none).unwrap().columns.is_empty());
        assert_eq!(percent_decode("a%3Db%zz%4"), "a=b%zz%4");
    }
}
