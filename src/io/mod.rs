//! Table sources (CSV, Parquet, Arrow IPC, JSON, in-memory batches) and sinks.
//!
//! A [`ScanSource`] knows its schema up front (read from the file footer or
//! inferred from the CSV header and a sample), so plans can be checked before
//! any data is read. Reads take the projected column indices; the Parquet
//! reader also skips row groups whose statistics rule out the scan's filters.

mod csv;
mod csv_dates;
mod csv_text;
mod file_cache;
mod filter;
pub(crate) mod hive;
mod ipc;
mod json;
mod parquet;
mod partitioned;
pub mod paths;
mod sink;
pub mod text_table;
mod top_k_bound;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use crate::error::{Result, SlothError};

pub use self::csv::CsvOptions;
pub use self::csv_text::csv_ready;
pub(crate) use self::filter::{ScanFilter, Selected};
pub(crate) use self::parquet::{DictCodes, Dictionary, ParquetScanMetrics, SharedPages};
pub(crate) use self::top_k_bound::TopKBound;
pub(crate) use file_cache::set_memory_limit;
pub(crate) use partitioned::OutputSink;
pub use partitioned::PartitionedSink;
pub use sink::{
    FileFormat, FileSink, WriteOptions, remove_partial_outputs, write_bytes, write_csv, write_file,
    write_ipc, write_parquet,
};

/// How the files a path names (a file, a directory, a glob) become one
/// table: DuckDB's `read_*` options.
///
/// ```
/// use sloth::io::ReadOptions;
/// let options = ReadOptions {
///     union_by_name: true,
///     hive_partitioning: false,
///     ..ReadOptions::default()
/// };
/// # let _ = options;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOptions {
    /// The reader of every file; by each file's extension when `None`.
    pub format: Option<FileFormat>,
    /// How CSV files are parsed.
    pub csv: CsvOptions,
    /// `key=value` directories above the files give columns (default on).
    pub hive_partitioning: bool,
    /// Files' columns are matched by name, a column a file lacks reading
    /// as nulls; off, every file must have the same column names.
    pub union_by_name: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            format: None,
            csv: CsvOptions::default(),
            hive_partitioning: true,
            union_by_name: false,
        }
    }
}

/// A piece of a scan that one thread reads on its own (a morsel source).
pub enum ScanUnit {
    /// Batches already in memory.
    Batch(RecordBatch),
    /// One row group of a Parquet file.
    ParquetRowGroup(parquet::RowGroupUnit),
    /// Rows an operator wrote to a spill file, read back with the unit.
    Spilled(std::sync::Arc<crate::memory::SpillFile>),
    /// Rows an operator computes when the unit is read (a grace join's
    /// partition, joined only then).
    Deferred(std::sync::Arc<DeferredUnit>),
}

/// The work behind a [`ScanUnit::Deferred`].
pub struct DeferredUnit {
    /// Rows the unit is expected to hand over (it cannot know before).
    pub rows_expected: usize,
    /// Computes the unit's rows; called once per read.
    pub compute: Box<dyn Fn() -> Result<Vec<RecordBatch>> + Send + Sync>,
}

impl ScanUnit {
    /// Whether the unit may hold a row that does not sort after a top-k's
    /// `bound` (only a Parquet row group's statistics can say it does not).
    pub(crate) fn may_hold(&self, bound: &TopKBound) -> bool {
        match self {
            ScanUnit::ParquetRowGroup(u) => u.may_hold(bound),
            _ => true,
        }
    }

    /// Reads the unit's rows that pass `filter`.
    pub(crate) fn read(&self, filter: &ScanFilter) -> Result<Vec<RecordBatch>> {
        match self {
            ScanUnit::Batch(b) => Ok(filter.apply(b.clone())?.into_iter().collect()),
            ScanUnit::ParquetRowGroup(u) => u.read(filter),
            ScanUnit::Spilled(_) | ScanUnit::Deferred(_) => (self.batches()?)
                .filter_map(|b| b.and_then(|b| filter.apply(b)).transpose())
                .collect(),
        }
    }

    /// The batches of a spilled or deferred unit, before any filter.
    fn batches(&self) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>>>> {
        Ok(match self {
            ScanUnit::Spilled(f) => Box::new(f.read()?),
            ScanUnit::Deferred(d) => Box::new((d.compute)()?.into_iter().map(Ok)),
            ScanUnit::Batch(_) | ScanUnit::ParquetRowGroup(_) => {
                unreachable!("batches() is for spilled and deferred units")
            }
        })
    }

    /// The smallest and largest value of integer-like column `column` in
    /// the unit, when statistics give it without reading the data and say
    /// the column holds no nulls there (Parquet row groups).
    pub(crate) fn int_range(&self, column: usize) -> Option<(i64, i64)> {
        match self {
            ScanUnit::ParquetRowGroup(u) => u.int_range(column),
            ScanUnit::Batch(_) | ScanUnit::Spilled(_) | ScanUnit::Deferred(_) => None,
        }
    }

    /// Rows the unit holds before any filter.
    pub(crate) fn num_rows(&self) -> usize {
        match self {
            ScanUnit::Batch(b) => b.num_rows(),
            ScanUnit::ParquetRowGroup(u) => u.num_rows(),
            ScanUnit::Spilled(f) => f.rows(),
            ScanUnit::Deferred(d) => d.rows_expected,
        }
    }

    /// As [`ScanUnit::read`]; with `select`, batches where `filter` kept
    /// most rows come whole with the kept rows' indices
    /// ([`ScanFilter::select`]).
    /// `codes` names columns whose dictionary codes the consumer can use
    /// ([`Selected::codes`]); a Parquet row group hands them on where it
    /// decodes them itself.
    pub(crate) fn read_selected(
        &self,
        filter: &ScanFilter,
        select: bool,
        codes: &[usize],
    ) -> Result<Vec<Selected>> {
        match self {
            ScanUnit::Batch(b) => Ok(filter
                .filter_or_select(b.clone(), select)?
                .into_iter()
                .collect()),
            ScanUnit::ParquetRowGroup(u) => u.read_selected(filter, select, codes),
            ScanUnit::Spilled(_) | ScanUnit::Deferred(_) => (self.batches()?)
                .filter_map(|b| {
                    b.and_then(|b| filter.filter_or_select(b, select))
                        .transpose()
                })
                .collect(),
        }
    }
}

/// Rows per batch that readers aim for.
pub const BATCH_SIZE: usize = 64 * 1024;

/// Where a scan's rows come from.
#[derive(Clone)]
pub enum ScanSource {
    /// A CSV file.
    Csv {
        /// File path.
        path: PathBuf,
        /// Schema (declared or inferred).
        schema: SchemaRef,
        /// Parse options.
        options: CsvOptions,
    },
    /// A Parquet file.
    Parquet {
        /// File path.
        path: PathBuf,
        /// Schema from the footer.
        schema: SchemaRef,
    },
    /// An Arrow IPC file.
    Ipc {
        /// File path.
        path: PathBuf,
        /// Schema from the footer.
        schema: SchemaRef,
    },
    /// A JSON file: one object per line, or an array of objects.
    Json {
        /// File path.
        path: PathBuf,
        /// Schema inferred from the first objects.
        schema: SchemaRef,
    },
    /// Batches already in memory.
    Memory {
        /// Schema of the batches.
        schema: SchemaRef,
        /// The data.
        batches: Arc<Vec<RecordBatch>>,
    },
}

/// Two sources are equal when they read the same file with the same
/// schema and options, or hold the very same batches.
impl PartialEq for ScanSource {
    fn eq(&self, other: &Self) -> bool {
        use ScanSource::*;
        match (self, other) {
            (
                Csv {
                    path: a,
                    schema: sa,
                    options: oa,
                },
                Csv {
                    path: b,
                    schema: sb,
                    options: ob,
                },
            ) => a == b && sa == sb && oa == ob,
            (
                Parquet {
                    path: a,
                    schema: sa,
                },
                Parquet {
                    path: b,
                    schema: sb,
                },
            )
            | (
                Ipc {
                    path: a,
                    schema: sa,
                },
                Ipc {
                    path: b,
                    schema: sb,
                },
            )
            | (
                Json {
                    path: a,
                    schema: sa,
                },
                Json {
                    path: b,
                    schema: sb,
                },
            ) => a == b && sa == sb,
            (
                Memory {
                    schema: sa,
                    batches: a,
                },
                Memory {
                    schema: sb,
                    batches: b,
                },
            ) => sa == sb && Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl fmt::Debug for ScanSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for ScanSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScanSource::Csv { path, .. } => write!(f, "csv '{}'", path.display()),
            ScanSource::Parquet { path, .. } => write!(f, "parquet '{}'", path.display()),
            ScanSource::Ipc { path, .. } => write!(f, "ipc '{}'", path.display()),
            ScanSource::Json { path, .. } => write!(f, "json '{}'", path.display()),
            ScanSource::Memory { batches, .. } => {
                write!(
                    f,
                    "memory ({} rows)",
                    batches.iter().map(|b| b.num_rows()).sum::<usize>()
                )
            }
        }
    }
}

/// The schema with every field nullable: sloth's operators may introduce
/// nulls (outer joins, aggregates of empty groups), so all derived schemas are.
pub fn nullable_schema(schema: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect::<Vec<_>>(),
    ))
}

pub(crate) fn open(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).map_err(|e| SlothError::FileNotFound {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

impl ScanSource {
    /// A CSV source; the schema is inferred from the header and the first rows.
    pub fn csv(path: impl AsRef<Path>, options: CsvOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let schema = csv::infer_schema(&path, &options)?;
        Ok(ScanSource::Csv {
            path,
            schema,
            options,
        })
    }

    /// A Parquet source.
    pub fn parquet(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let schema = parquet::read_schema(&path)?;
        Ok(ScanSource::Parquet { path, schema })
    }

    /// An Arrow IPC file source.
    pub fn ipc(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let schema = ipc::read_schema(&path)?;
        Ok(ScanSource::Ipc { path, schema })
    }

    /// A JSON file source (newline-delimited objects or one array of
    /// objects); the schema is inferred from the first objects.
    pub fn json(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let schema = json::infer_schema(&path)?;
        Ok(ScanSource::Json { path, schema })
    }

    /// In-memory batches (all must share the schema).
    pub fn memory(schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<Self> {
        let schema = nullable_schema(&schema);
        let batches = batches
            .into_iter()
            .map(|b| {
                if b.num_columns() != schema.fields().len() {
                    return Err(SlothError::plan("batches do not match the schema"));
                }
                Ok(RecordBatch::try_new(schema.clone(), b.columns().to_vec())?)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ScanSource::Memory {
            schema,
            batches: Arc::new(batches),
        })
    }

    /// A source chosen by file extension (`.csv`/`.tsv`, `.parquet`/`.pq`,
    /// `.arrow`/`.ipc`/`.feather`, `.json`/`.ndjson`/`.jsonl`).
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_path_with(path, &CsvOptions::default())
    }

    /// As [`ScanSource::from_path`], reading CSV files with `csv` (a
    /// `.tsv` file with a tab as its delimiter).
    pub fn from_path_with(path: impl AsRef<Path>, csv: &CsvOptions) -> Result<Self> {
        let path = path.as_ref();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "csv" | "tsv" => {
                let mut options = csv.clone();
                if ext == "tsv" {
                    options.delimiter = b'\t';
                }
                Self::csv(path, options)
            }
            "parquet" | "pq" => Self::parquet(path),
            "arrow" | "ipc" | "feather" => Self::ipc(path),
            "json" | "ndjson" | "jsonl" => Self::json(path),
            _ => Err(SlothError::unsupported(format!(
                "file '{}': unknown extension (expected .csv, .tsv, .parquet, .arrow, .json, .ndjson)",
                path.display()
            ))),
        }
    }

    /// A source reading `path` as `format` whatever its extension; by
    /// extension when `None` ([`ScanSource::from_path_with`]).
    pub fn from_path_as(
        path: impl AsRef<Path>,
        format: Option<FileFormat>,
        csv: &CsvOptions,
    ) -> Result<Self> {
        match format {
            None => Self::from_path_with(path, csv),
            Some(FileFormat::Csv) => Self::csv(path, csv.clone()),
            Some(FileFormat::Parquet) => Self::parquet(path),
            Some(FileFormat::Ipc) => Self::ipc(path),
            Some(FileFormat::Json | FileFormat::Ndjson) => Self::json(path),
        }
    }

    /// The full schema of the source.
    pub fn schema(&self) -> SchemaRef {
        match self {
            ScanSource::Csv { schema, .. }
            | ScanSource::Parquet { schema, .. }
            | ScanSource::Ipc { schema, .. }
            | ScanSource::Json { schema, .. }
            | ScanSource::Memory { schema, .. } => schema.clone(),
        }
    }

    /// Total rows, when known without reading the data.
    pub fn row_count(&self) -> Option<usize> {
        match self {
            ScanSource::Memory { batches, .. } => Some(batches.iter().map(|b| b.num_rows()).sum()),
            ScanSource::Parquet { path, .. } => parquet::row_count(path).ok(),
            _ => None,
        }
    }

    /// The value range of an integer column, when statistics give it
    /// without reading the data (Parquet footers).
    pub fn int_range(&self, column: &str) -> Option<(i64, i64)> {
        match self {
            ScanSource::Parquet { path, .. } => parquet::int_range(path, column),
            _ => None,
        }
    }

    /// Splits the scan into units that can be read independently and in
    /// parallel: one per Parquet row group that statistics do not rule out
    /// (`filters` are over the projected schema), one per batch otherwise.
    /// A Parquet file's columns that `pages` shares between scans keep
    /// their decompressed pages there.
    pub(crate) fn units(
        &self,
        projection: Option<&[usize]>,
        filters: &[crate::physical_expr::PhysicalExpr],
        metrics: &Arc<ParquetScanMetrics>,
        pages: Option<&SharedPages>,
    ) -> Result<Vec<ScanUnit>> {
        // A filter that is constant false or null (e.g. contradictory bounds): read nothing.
        let always_false = filters.iter().any(|f| {
            f.as_literal().is_some_and(|a| {
                use arrow::array::{Array, AsArray};
                a.is_null(0) || a.as_boolean_opt().is_some_and(|b| !b.value(0))
            })
        });
        if always_false {
            return Ok(vec![]);
        }
        let out_schema = match projection {
            Some(p) => Arc::new(self.schema().project(p)?),
            None => self.schema(),
        };
        let batches = match self {
            ScanSource::Parquet { path, .. } => {
                let shared = pages.and_then(|p| p.file(path));
                return parquet::units(path, projection, filters, metrics, out_schema, shared);
            }
            ScanSource::Csv {
                path,
                schema,
                options,
            } => csv::read(path, schema, options, projection)?,
            ScanSource::Ipc { path, .. } => ipc::read(path, projection)?,
            ScanSource::Json { path, schema } => json::read(path, schema, projection)?,
            ScanSource::Memory { batches, .. } => match projection {
                Some(p) => batches
                    .iter()
                    .map(|b| b.project(p))
                    .collect::<Result<Vec<_>, _>>()?,
                None => batches.as_ref().clone(),
            },
        };
        batches
            .into_iter()
            .filter(|b| b.num_rows() > 0)
            .map(|b| {
                Ok(ScanUnit::Batch(RecordBatch::try_new(
                    out_schema.clone(),
                    b.columns().to_vec(),
                )?))
            })
            .collect()
    }

    /// Reads the given columns, keeping the rows that pass `filters` (all
    /// units, in parallel, in order), sharing pages through `pages` as
    /// [`ScanSource::units`] does.
    pub(crate) fn read(
        &self,
        projection: Option<&[usize]>,
        filters: &[crate::physical_expr::PhysicalExpr],
        metrics: &Arc<ParquetScanMetrics>,
        pages: Option<&SharedPages>,
    ) -> Result<Vec<RecordBatch>> {
        use rayon::prelude::*;
        let units = self.units(projection, filters, metrics, pages)?;
        let filter = ScanFilter::new(filters.to_vec());
        let parts: Vec<Vec<RecordBatch>> = units
            .par_iter()
            .map(|u| u.read(&filter))
            .collect::<Result<_>>()?;
        Ok(parts.into_iter().flatten().collect())
    }
}
