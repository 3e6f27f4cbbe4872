//! Hive-partitioned output: `COPY .. TO 'out' (PARTITION_BY (year))`
//! writes `out/year=2023/data_0.parquet`, `out/year=2024/data_0.parquet`,
//! .., each file holding its partition's rows without the partition
//! columns (their values are in the path, as DuckDB, Spark and Hive write
//! them; [`crate::io::hive`] reads them back).
//!
//! The whole tree is written under a hidden directory beside `out` and
//! renamed onto it when the last file is synced, so a failed or killed
//! write leaves the old output (or nothing), never part of a tree. A null
//! value is `__HIVE_DEFAULT_PARTITION__`; `/`, `=`, `%` and other
//! characters unsafe in a path are `%XX`-escaped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, UInt32Array};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};

use super::sink::{FileFormat, FileSink, WriteOptions};
use crate::error::{Result, SlothError};

/// A tree of files being written, one per partition; it appears at its
/// path, whole, when [`PartitionedSink::finish`] returns.
pub struct PartitionedSink {
    target: PathBuf,
    tmp: PathBuf,
    format: FileFormat,
    options: WriteOptions,
    /// Indices of the partition columns in the input.
    keys: Vec<usize>,
    /// Indices and schema of the columns the files hold.
    data_columns: Vec<usize>,
    data_schema: SchemaRef,
    files: HashMap<String, FileSink>,
    rows: usize,
    finished: bool,
}

impl PartitionedSink {
    /// Starts writing `schema`'s rows under `dir`, partitioned by the
    /// columns `options.partition_by` names. An existing `dir` is an error
    /// unless `options.overwrite`.
    pub fn create(
        dir: &Path,
        format: FileFormat,
        schema: &SchemaRef,
        options: &WriteOptions,
    ) -> Result<Self> {
        let index = |name: &String| {
            schema
                .fields()
                .iter()
                .position(|f| f.name().eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    SlothError::plan(format!(
                        "PARTITION_BY column '{name}' is not in the output ({})",
                        schema
                            .fields()
                            .iter()
                            .map(|f| f.name().as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })
        };
        let keys = options
            .partition_by
            .iter()
            .map(index)
            .collect::<Result<Vec<_>>>()?;
        let data_columns: Vec<usize> = (0..schema.fields().len())
            .filter(|i| !keys.contains(i))
            .collect();
        if data_columns.is_empty() {
            return Err(SlothError::plan(
                "PARTITION_BY names every column: the files would have none",
            ));
        }
        if dir.exists() && !options.overwrite {
            return Err(SlothError::plan(format!(
                "'{}' exists; COPY .. (PARTITION_BY .., OVERWRITE) replaces it",
                dir.display()
            )));
        }
        if dir.is_file() {
            return Err(SlothError::plan(format!(
                "'{}' is a file; a partitioned write makes a directory",
                dir.display()
            )));
        }
        let tmp = hidden_beside(dir, "sloth-tmp")?;
        std::fs::create_dir(&tmp).map_err(|e| SlothError::FileNotFound {
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        let data_schema = Arc::new(schema.project(&data_columns)?);
        Ok(PartitionedSink {
            target: dir.to_path_buf(),
            tmp,
            format,
            options: WriteOptions {
                partition_by: vec![],
                ..options.clone()
            },
            keys,
            data_columns,
            data_schema,
            files: HashMap::new(),
            rows: 0,
            finished: false,
        })
    }

    /// Appends one batch: its rows go to their partitions' files.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.rows += batch.num_rows();
        let format = FormatOptions::default().with_null("\0");
        let formatters = self
            .keys
            .iter()
            .map(|&k| ArrayFormatter::try_new(batch.column(k).as_ref(), &format))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let names: Vec<&str> = self
            .keys
            .iter()
            .map(|&k| batch.schema_ref().field(k).name().as_str())
            .collect::<Vec<_>>();
        // Rows of each partition, in order of first appearance.
        let mut order: Vec<String> = Vec::new();
        let mut rows: HashMap<String, Vec<u32>> = HashMap::new();
        for row in 0..batch.num_rows() {
            let mut dir = String::new();
            for (name, f) in names.iter().zip(&formatters) {
                let value = f.value(row).to_string();
                let value = if value == "\0" {
                    "__HIVE_DEFAULT_PARTITION__".to_string()
                } else {
                    escape(&value)
                };
                dir.push_str(&format!("{}={value}/", escape(name)));
            }
            rows.entry(dir.clone())
                .or_insert_with(|| {
                    order.push(dir);
                    Vec::new()
                })
                .push(row as u32);
        }
        let data = batch.project(&self.data_columns)?;
        for dir in order {
            let indices = UInt32Array::from(rows.remove(&dir).unwrap_or_default());
            let columns = data
                .columns()
                .iter()
                .map(|c| arrow::compute::take(c.as_ref(), &indices, None))
                .collect::<std::result::Result<Vec<ArrayRef>, _>>()?;
            let part = RecordBatch::try_new(self.data_schema.clone(), columns)?;
            self.file(&dir)?.write(&part)?;
        }
        Ok(())
    }

    /// The file of the partition directory `dir` (`k=v/` ..), started on
    /// its first rows.
    fn file(&mut self, dir: &str) -> Result<&mut FileSink> {
        if !self.files.contains_key(dir) {
            let folder = self.tmp.join(dir);
            std::fs::create_dir_all(&folder)?;
            let name = format!("data_0.{}", self.format.extension());
            let sink = FileSink::create_with(
                folder.join(name),
                self.format,
                &self.data_schema,
                &self.options,
            )?;
            self.files.insert(dir.to_string(), sink);
        }
        Ok(self.files.get_mut(dir).expect("inserted above"))
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Ends every file, then renames the tree onto its path (the old tree,
    /// with `overwrite`, goes only once the new one is in place).
    pub fn finish(mut self) -> Result<()> {
        for (_, sink) in self.files.drain() {
            sink.finish()?;
        }
        let old = if self.target.exists() {
            let old = hidden_beside(&self.target, "sloth-old")?;
            std::fs::rename(&self.target, &old)?;
            Some(old)
        } else {
            None
        };
        if let Err(e) = std::fs::rename(&self.tmp, &self.target) {
            if let Some(old) = &old {
                let _ = std::fs::rename(old, &self.target);
            }
            return Err(e.into());
        }
        self.finished = true;
        if let Some(old) = old {
            if old.is_dir() {
                std::fs::remove_dir_all(old)?;
            } else {
                std::fs::remove_file(old)?;
            }
        }
        Ok(())
    }
}

impl Drop for PartitionedSink {
    fn drop(&mut self) {
        if !self.finished {
            self.files.clear();
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// A hidden name beside `path`, unique to this process.
fn hidden_beside(path: &Path, what: &str) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| SlothError::plan(format!("'{}' names no directory", path.display())))?
        .to_string_lossy();
    Ok(path.with_file_name(format!(".{name}.{what}-{}", std::process::id())))
}

/// A partition value as a directory name: characters unsafe in a path or
/// in `key=value` as `%XX`.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if c.is_control()
            || matches!(
                c,
                '/' | '\\' | '=' | '%' | ':' | '"' | '\'' | '*' | '?' | '#'
            )
        {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    // Readers skip names starting with `.` or `_` (temporaries, markers).
    match out.chars().next() {
        Some('.') => out.replacen('.', "%2E", 1),
        Some('_') => out.replacen('_', "%5F", 1),
        _ => out,
    }
}

/// Where a query's rows go: one file, or a partitioned tree of them.
pub(crate) enum OutputSink {
    File(Box<FileSink>),
    Partitioned(Box<PartitionedSink>),
}

impl OutputSink {
    /// Starts the write `options` ask for: partitioned when they name
    /// columns to partition by.
    pub(crate) fn create(
        path: &Path,
        format: FileFormat,
        schema: &SchemaRef,
        options: &WriteOptions,
    ) -> Result<Self> {
        Ok(if options.partition_by.is_empty() {
            OutputSink::File(Box::new(FileSink::create_with(
                path, format, schema, options,
            )?))
        } else {
            OutputSink::Partitioned(Box::new(PartitionedSink::create(
                path, format, schema, options,
            )?))
        })
    }

    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        match self {
            OutputSink::File(s) => s.write(batch),
            OutputSink::Partitioned(s) => s.write(batch),
        }
    }

    pub(crate) fn rows(&self) -> usize {
        match self {
            OutputSink::File(s) => s.rows(),
            OutputSink::Partitioned(s) => s.rows(),
        }
    }

    pub(crate) fn finish(self) -> Result<()> {
        match self {
            OutputSink::File(s) => s.finish(),
            OutputSink::Partitioned(s) => s.finish(),
        }
    }
}
