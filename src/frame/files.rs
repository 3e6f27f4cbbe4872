//! Tables of many files: a directory, a glob or a list of paths read as
//! one [`LazyFrame`], with Hive partition columns and the files' columns
//! made to agree.

use std::path::{Path, PathBuf};

use arrow::datatypes::{DataType, SchemaRef};

use super::LazyFrame;
use crate::error::{Result, SlothError};
use crate::expr::{ScalarValue, col, lit};
use crate::io::{CsvOptions, ReadOptions, ScanSource};

impl LazyFrame {
    /// Scans a file, choosing the reader by extension. A directory reads
    /// every readable file in it and in its Hive partition directories
    /// (`year=2024/month=3/`, whose keys become columns), and a glob
    /// (`logs/*.parquet`, `sales/year=*/*.parquet`, `data/**/*.csv`) every
    /// file it matches, as one table: their schemas must agree.
    pub fn scan_path(path: impl AsRef<Path>) -> Result<Self> {
        Self::scan_paths(&[path], &ReadOptions::default())
    }

    /// As [`LazyFrame::scan_path`], reading CSV files with `csv`.
    pub fn scan_path_with(path: impl AsRef<Path>, csv: &CsvOptions) -> Result<Self> {
        let options = ReadOptions {
            csv: csv.clone(),
            ..ReadOptions::default()
        };
        Self::scan_paths(&[path], &options)
    }

    /// Every file of `paths` (each a file, a directory or a glob, as for
    /// [`LazyFrame::scan_path`]) as one table, read as `options` say.
    ///
    /// ```no_run
    /// use sloth::prelude::*;
    /// use sloth::io::ReadOptions;
    /// let options = ReadOptions { union_by_name: true, ..ReadOptions::default() };
    /// let logs = LazyFrame::scan_paths(&["logs/2023/*.csv", "logs/2024/*.csv"], &options)?;
    /// # Ok::<(), sloth::SlothError>(())
    /// ```
    pub fn scan_paths(paths: &[impl AsRef<Path>], options: &ReadOptions) -> Result<Self> {
        let mut scans = Vec::new();
        let mut files = Vec::new();
        for path in paths {
            let (mut path_scans, mut path_files) = file_scans(path.as_ref(), options)?;
            scans.append(&mut path_scans);
            files.append(&mut path_files);
        }
        if scans.is_empty() {
            return Err(SlothError::plan("no path to read"));
        }
        let mut scans = unify_columns(scans, &files, options.union_by_name)?;
        let first = scans.remove(0);
        Ok(if scans.is_empty() {
            first
        } else {
            first.union(&scans)
        })
    }
}

/// One scan per file that `path` names, its partition values (unless
/// `options` turn them off) as constant columns; and the files.
fn file_scans(path: &Path, options: &ReadOptions) -> Result<(Vec<LazyFrame>, Vec<PathBuf>)> {
    let files = crate::io::paths::expand(path)?;
    let crate::io::hive::Partitions {
        columns: partitions,
        values,
    } = match options.hive_partitioning {
        true => crate::io::hive::partition_columns(&crate::io::paths::root(path), &files)?,
        false => crate::io::hive::Partitions::none(files.len()),
    };
    let mut scans = Vec::with_capacity(files.len());
    for (file, values) in files.iter().zip(values) {
        let scan = LazyFrame::scan(ScanSource::from_path_as(
            file,
            options.format,
            &options.csv,
        )?);
        if partitions.is_empty() {
            scans.push(scan);
            continue;
        }
        // The file's partition values as constants of its scan: a
        // predicate on them folds to a constant per file.
        let constants = partitions
            .iter()
            .zip(values)
            .map(|((name, _), value)| lit(value).alias(name.as_str()));
        scans.push(scan.with_columns(constants));
    }
    Ok((scans, files))
}

/// The scans of one table's `files` made to agree: each column of the
/// type that holds every file's (`Utf8` and `Utf8View`, `Int32` and
/// `Int64`, ..), in the first file's order. Files must have the same
/// column names, unless `by_name`: then the table has every file's
/// columns in order of first appearance, nulls where a file lacks one.
/// Names that differ, or types with no common one, are an error naming
/// the first file and the one that differs.
fn unify_columns(
    scans: Vec<LazyFrame>,
    files: &[PathBuf],
    by_name: bool,
) -> Result<Vec<LazyFrame>> {
    let schemas = scans
        .iter()
        .map(|s| s.schema())
        .collect::<Result<Vec<_>>>()?;
    let describe = |s: &SchemaRef| -> String {
        s.fields()
            .iter()
            .map(|f| format!("{} {}", f.name(), f.data_type()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let differ = |i: usize| {
        let hint = match by_name {
            true => "",
            false => "; union_by_name = true reads them by column name",
        };
        SlothError::plan(format!(
            "'{}' has columns ({}), unlike '{}' ({}){hint}",
            files[i].display(),
            describe(&schemas[i]),
            files[0].display(),
            describe(&schemas[0])
        ))
    };
    let first = &schemas[0];
    let mut columns: Vec<(String, DataType)> = first
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    for (i, schema) in schemas.iter().enumerate().skip(1) {
        let names_agree = schema.fields().len() == first.fields().len()
            && schema
                .fields()
                .iter()
                .all(|f| first.index_of(f.name()).is_ok());
        if !by_name && !names_agree {
            return Err(differ(i));
        }
        for field in schema.fields() {
            match columns.iter_mut().find(|(name, _)| name == field.name()) {
                Some((_, t)) => {
                    *t = crate::expr::common_type(t, field.data_type()).ok_or_else(|| differ(i))?
                }
                None => columns.push((field.name().clone(), field.data_type().clone())),
            }
        }
    }
    Ok(scans
        .into_iter()
        .zip(&schemas)
        .map(|(scan, schema)| {
            let agrees = schema.fields().len() == columns.len()
                && schema
                    .fields()
                    .iter()
                    .zip(&columns)
                    .all(|(f, (name, t))| f.name() == name && f.data_type() == t);
            if agrees {
                return scan;
            }
            scan.select(columns.iter().map(|(name, t)| {
                match schema.field_with_name(name).map(|f| f.data_type()) {
                    Ok(own) if own == t => col(name.as_str()),
                    Ok(_) => col(name.as_str()).cast(t.clone()).alias(name.as_str()),
                    Err(_) => lit(ScalarValue::Null).cast(t.clone()).alias(name.as_str()),
                }
            }))
        })
        .collect())
}
