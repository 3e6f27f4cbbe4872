//! Parquet reading: projected columns, row groups decoded in parallel, and
//! row groups (and, with a page index, pages) skipped when their min/max
//! statistics rule out a pushed filter.

mod dict_codes;
mod page_decode;
mod page_reader;
mod shared_pages;

pub use dict_codes::{DictCodes, Dictionary};
use shared_pages::FilePages;
pub use shared_pages::SharedPages;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};

use arrow::array::{Array, ArrayRef, BooleanArray, Scalar};
use arrow::compute::kernels::{boolean, cmp};
use arrow::datatypes::{Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    RowFilter, RowSelection, RowSelector,
};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};
use parquet::schema::types::SchemaDescriptor;

use super::file_cache::FileCache;
use super::filter::{FilteredColumns, ScanFilter, Selected};
use super::top_k_bound::TopKBound;
use super::{BATCH_SIZE, nullable_schema};
use crate::error::{Result, SlothError};
use crate::expr::Operator;
use crate::physical_expr::eval::evaluate_mask;
use crate::physical_expr::{Node, PhysicalExpr};

/// Counters a Parquet scan fills in (shown by `EXPLAIN ANALYZE`).
#[derive(Debug, Default)]
pub struct ParquetScanMetrics {
    /// Row groups in the file.
    pub row_groups: AtomicUsize,
    /// Row groups skipped by statistics.
    pub row_groups_pruned: AtomicUsize,
    /// Bytes of the Arrow arrays the scan produced (after its filters).
    pub bytes_read: AtomicUsize,
    /// Rows of the surviving row groups that the page index skipped.
    pub rows_skipped_by_pages: AtomicUsize,
    /// Row groups decoded filter columns first, the rest only for the rows
    /// that passed.
    pub late_materialized_row_groups: AtomicUsize,
    /// Pages another scan of the execution had decompressed already
    /// ([`super::SharedPages`]).
    pub pages_shared: AtomicUsize,
}

fn not_parquet(path: &Path, e: impl std::fmt::Display) -> SlothError {
    SlothError::Data(format!(
        "'{}' is not a readable Parquet file: {e}",
        path.display()
    ))
}

/// The footers parsed from one file, without and with its page index.
#[derive(Default)]
struct Footers {
    without_page_index: Option<ArrowReaderMetadata>,
    with_page_index: Option<ArrowReaderMetadata>,
}

/// Every Parquet file this process has read, mapped, with its footers.
static FILES: FileCache<Footers> = FileCache::new();

/// A file's bytes and metadata (from the process's [`FileCache`]), with
/// string and binary columns read as their view types (`Utf8View`,
/// `BinaryView`). The page index is loaded when `page_index` asks for it.
///
/// Views make decoding a dictionary-encoded column a gather of 16-byte
/// views instead of a copy of every value's bytes, and keep short values
/// (≤ 12 bytes) inline, where hashing and comparing them needs no
/// indirection; DataFusion reads Parquet the same way.
fn load_metadata(path: &Path, page_index: bool) -> Result<(Bytes, ArrowReaderMetadata)> {
    let file = FILES.get(path)?;
    let mut footers = file.parsed.lock().unwrap_or_else(PoisonError::into_inner);
    let cached = match page_index {
        true => footers.with_page_index.as_ref(),
        false => footers
            .without_page_index
            .as_ref()
            .or(footers.with_page_index.as_ref()),
    };
    if let Some(metadata) = cached {
        return Ok((file.bytes.clone(), metadata.clone()));
    }
    let options = ArrowReaderOptions::new().with_page_index_policy(match page_index {
        true => PageIndexPolicy::Optional,
        false => PageIndexPolicy::Skip,
    });
    // The footer's embedded Arrow schema is decoded by arrow-ipc, which
    // panics on some damaged ones (an integer of a million bits).
    let metadata = SlothError::catching_panics(|| {
        ArrowReaderMetadata::load(&file.bytes, options.clone()).map_err(|e| not_parquet(path, e))
    })
    .map_err(|e| match e {
        SlothError::Internal(m) => not_parquet(path, m),
        other => other,
    })?;
    let metadata = match view_schema(metadata.schema()) {
        Some(views) => {
            ArrowReaderMetadata::try_new(metadata.metadata().clone(), options.with_schema(views))
                .map_err(|e| not_parquet(path, e))?
        }
        None => metadata,
    };
    *match page_index {
        true => &mut footers.with_page_index,
        false => &mut footers.without_page_index,
    } = Some(metadata.clone());
    Ok((file.bytes.clone(), metadata))
}

/// `schema` with top-level string and binary columns as view types, or
/// `None` when it has none.
fn view_schema(schema: &Schema) -> Option<SchemaRef> {
    use arrow::datatypes::DataType::*;
    let mut changed = false;
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| {
            let view = match f.data_type() {
                Utf8 | LargeUtf8 => Utf8View,
                Binary | LargeBinary => BinaryView,
                _ => return f.as_ref().clone(),
            };
            changed = true;
            f.as_ref().clone().with_data_type(view)
        })
        .collect();
    changed.then(|| Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

fn builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<Bytes>> {
    let (bytes, metadata) = load_metadata(path, false)?;
    Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(
        bytes, metadata,
    ))
}

pub(super) fn read_schema(path: &Path) -> Result<SchemaRef> {
    Ok(nullable_schema(builder(path)?.schema()))
}

pub(super) fn row_count(path: &Path) -> Result<usize> {
    Ok(builder(path)?.metadata().file_metadata().num_rows() as usize)
}

/// The bytes of the root columns `roots` of the file at `path` once
/// decompressed (their pages' and headers', per the footer), over all row
/// groups; `None` when the footer cannot be read.
fn uncompressed_bytes(path: &Path, roots: impl Iterator<Item = usize>) -> Option<u64> {
    let (_, metadata) = load_metadata(path, false).ok()?;
    let pq = metadata.metadata();
    let descr = pq.file_metadata().schema_descr();
    let roots: std::collections::HashSet<usize> = roots.collect();
    let leaves: Vec<usize> = (0..descr.num_columns())
        .filter(|&leaf| roots.contains(&descr.get_column_root_idx(leaf)))
        .collect();
    Some(
        (pq.row_groups().iter())
            .flat_map(|rg| {
                leaves
                    .iter()
                    .map(move |&leaf| rg.column(leaf).uncompressed_size())
            })
            .map(|n| n.max(0) as u64)
            .sum(),
    )
}

/// The smallest and largest value of an integer column, from the footer's
/// row-group statistics (`None` when a row group has none).
pub(super) fn int_range(path: &Path, column: &str) -> Option<(i64, i64)> {
    let b = builder(path).ok()?;
    let metadata = b.metadata();
    let ranges = row_group_int_ranges(b.schema(), metadata, column, metadata.row_groups())?;
    let (mins, maxes): (Vec<i64>, Vec<i64>) = ranges.into_iter().unzip();
    Some((mins.into_iter().min()?, maxes.into_iter().max()?))
}

/// The smallest and largest value of integer-like `column` (integers,
/// dates) in each of `row_groups`, from their statistics; `None` when one
/// lacks them.
fn row_group_int_ranges<'a>(
    schema: &Schema,
    metadata: &ParquetMetaData,
    column: &str,
    row_groups: impl IntoIterator<Item = &'a parquet::file::metadata::RowGroupMetaData>,
) -> Option<Vec<(i64, i64)>> {
    let conv =
        StatisticsConverter::try_new(column, schema, metadata.file_metadata().schema_descr())
            .ok()?;
    let as_i64 = |a: ArrayRef| -> Option<arrow::array::Int64Array> {
        use arrow::datatypes::DataType;
        let t = a.data_type();
        if !(t.is_integer() || matches!(t, DataType::Date32 | DataType::Date64)) {
            return None;
        }
        let a = arrow::compute::cast(&a, &DataType::Int64).ok()?;
        let a = a
            .as_any()
            .downcast_ref::<arrow::array::Int64Array>()?
            .clone();
        (a.null_count() == 0 && !a.is_empty()).then_some(a)
    };
    let groups: Vec<_> = row_groups.into_iter().collect();
    let mins = as_i64(conv.row_group_mins(groups.iter().copied()).ok()?)?;
    let maxes = as_i64(conv.row_group_maxes(groups.iter().copied()).ok()?)?;
    Some(
        mins.values()
            .iter()
            .copied()
            .zip(maxes.values().iter().copied())
            .collect(),
    )
}

/// One row group to read, with the file's metadata already parsed.
pub struct RowGroupUnit {
    /// The file, for errors.
    path: Arc<Path>,
    /// The whole file (a mapping shared by every unit of the file).
    bytes: Bytes,
    metadata: ArrowReaderMetadata,
    row_group: usize,
    /// Root columns of the file to read, ascending.
    projection: Option<Vec<usize>>,
    schema: SchemaRef,
    /// The rows of the row group worth decoding, when the page index rules
    /// some pages out.
    selection: Option<RowSelection>,
    metrics: Arc<ParquetScanMetrics>,
    /// The file's columns whose decompressed pages other scans share.
    shared: Option<Arc<FilePages>>,
}

impl RowGroupUnit {
    /// Decodes the row group's projected columns, keeping the rows that
    /// pass `filter`.
    ///
    /// When the filters have kept few rows so far, the reader decodes the
    /// filter columns first and the others only for the rows that pass.
    pub fn read(&self, filter: &ScanFilter) -> Result<Vec<RecordBatch>> {
        self.read_selected(filter, false, &[])?
            .into_iter()
            .map(Selected::materialize)
            .collect()
    }

    /// The smallest and largest value of integer-like column `column` (of
    /// the unit's schema) in the row group, from its statistics, when they
    /// say it holds no nulls.
    pub fn int_range(&self, column: usize) -> Option<(i64, i64)> {
        let name = self.schema.fields().get(column)?.name();
        let pq = self.metadata.metadata();
        let row_group = pq.row_group(self.row_group);
        let conv = self.statistics(column)?;
        let nulls = conv.row_group_null_counts([row_group]).ok()?;
        if nulls.is_null(0) || nulls.value(0) != 0 {
            return None;
        }
        row_group_int_ranges(self.metadata.schema(), pq, name, [row_group])?.pop()
    }

    /// The file's statistics of column `column` of the unit's schema.
    fn statistics(&self, column: usize) -> Option<StatisticsConverter<'_>> {
        let name = self.schema.fields().get(column)?.name();
        let pq = self.metadata.metadata();
        StatisticsConverter::try_new(
            name,
            self.metadata.schema(),
            pq.file_metadata().schema_descr(),
        )
        .ok()
    }

    /// Whether the row group may hold a row that does not sort after a
    /// top-k's `bound`, by its statistics (none: it may).
    pub fn may_hold(&self, bound: &TopKBound) -> bool {
        let Some(conv) = self.statistics(bound.column()) else {
            return true;
        };
        let row_group = self.metadata.metadata().row_group(self.row_group);
        let (Ok(min), Ok(max), Ok(nulls)) = (
            conv.row_group_mins([row_group]),
            conv.row_group_maxes([row_group]),
            conv.row_group_null_counts([row_group]),
        ) else {
            return true;
        };
        let nulls = (!nulls.is_null(0)).then(|| nulls.value(0));
        bound.may_hold(&min, &max, nulls)
    }

    /// Rows the unit holds before any filter (after page-index pruning).
    pub fn num_rows(&self) -> usize {
        match &self.selection {
            Some(sel) => sel.row_count(),
            None => self
                .metadata
                .metadata()
                .row_group(self.row_group)
                .num_rows() as usize,
        }
    }

    /// As [`RowGroupUnit::read`]; with `select`, batches where the filters
    /// kept most rows come whole with the kept rows' indices
    /// ([`ScanFilter::select`]); the columns `codes` come with their
    /// dictionary codes where the row group's own decoder has them.
    pub fn read_selected(
        &self,
        filter: &ScanFilter,
        select: bool,
        codes: &[usize],
    ) -> Result<Vec<Selected>> {
        // A damaged file's error (or a panic in the decoder it trips) names
        // the file and row group.
        SlothError::catching_panics(|| self.decode(filter, select, codes)).map_err(|e| {
            let why = match e {
                SlothError::Data(why) => why,
                other => other.to_string(),
            };
            SlothError::Data(format!(
                "Parquet file '{}', row group {}: {why}",
                self.path.display(),
                self.row_group
            ))
        })
    }

    fn decode(&self, filter: &ScanFilter, select: bool, codes: &[usize]) -> Result<Vec<Selected>> {
        // Whichever decoder reads them, the chunks' file pages leave the
        // resident set once the row group is decoded (strings read by
        // arrow-rs held 200 MB of TPC-H Q13's at SF 10).
        let _release = self.release_chunks_when_done();
        let mut b = ParquetRecordBatchReaderBuilder::new_with_metadata(
            self.bytes.clone(),
            self.metadata.clone(),
        )
        .with_row_groups(vec![self.row_group])
        .with_batch_size(BATCH_SIZE);
        if let Some(p) = &self.projection {
            let mask = ProjectionMask::roots(b.parquet_schema(), p.iter().copied());
            b = b.with_projection(mask);
        }
        if let Some(sel) = &self.selection {
            b = b.with_row_selection(sel.clone());
        }
        let late_filter = if filter.prefers_late_materialization() {
            self.row_filter(filter, b.parquet_schema())
        } else {
            None
        };
        if late_filter.is_none()
            && self.selection.is_none()
            && let Some(out) = self.read_with_own_decoder(filter, select, codes)?
        {
            return Ok(out);
        }
        let late = match late_filter {
            Some(row_filter) => {
                b = b.with_row_filter(row_filter);
                true
            }
            None => false,
        };
        let batches = b.build()?.map(|r| {
            Ok(RecordBatch::try_new(
                self.schema.clone(),
                r?.columns().to_vec(),
            )?)
        });
        if !late {
            let mut out = Vec::new();
            for batch in batches {
                out.extend(filter.filter_or_select(batch?, select)?);
            }
            return Ok(out);
        }
        let out = batches.collect::<Result<Vec<_>>>()?;
        filter.record(self.num_rows(), out.iter().map(|b| b.num_rows()).sum());
        self.metrics
            .late_materialized_row_groups
            .fetch_add(1, Ordering::Relaxed);
        Ok(out.into_iter().map(Selected::all).collect())
    }

    /// The row group's rows that pass `filter`, with its fixed-width
    /// columns decoded by [`page_decode`] and the rest (if any) by the
    /// arrow-rs reader; `None` when no column qualifies (or
    /// `SLOTH_PARQUET_DECODER=arrow` asks for arrow-rs alone, to compare).
    ///
    /// When every column the filters read is decoded here, those columns
    /// are decoded first, the filters run over the whole row group, and the
    /// other columns are written only for the rows that passed
    /// ([`page_decode::decode`] with a selection; arrow-rs columns are
    /// taken). Otherwise every column is decoded and the filters run batch
    /// by batch as on the arrow-rs path.
    fn read_with_own_decoder(
        &self,
        filter: &ScanFilter,
        select: bool,
        codes: &[usize],
    ) -> Result<Option<Vec<Selected>>> {
        if !own_decoder_enabled() {
            return Ok(None);
        }
        let pq = self.metadata.metadata();
        let row_group = pq.row_group(self.row_group);
        let descr = pq.file_metadata().schema_descr();
        let fast: Vec<_> = self
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let root = self.file_root(i);
                let shared = self
                    .shared
                    .as_ref()
                    .and_then(|s| s.column(root, &self.metrics));
                page_decode::fast_column(descr, root, f.data_type(), row_group)
                    .map(|c| c.sharing(shared))
            })
            .collect();
        if fast.iter().all(Option::is_none) {
            return Ok(None);
        }
        let rows = row_group.num_rows() as usize;
        let mut filter_columns: Vec<usize> =
            filter.exprs().iter().flat_map(|e| e.columns()).collect();
        filter_columns.sort_unstable();
        filter_columns.dedup();
        // Where the filters have kept most rows so far, writing the other
        // columns only for those saves little, and the batches whole with
        // a selection (`select`) copy nothing at all: TPC-H Q1 (98% kept)
        // ran 9% slower filtered first.
        // Filtering first spares decoding of every column that the first
        // filter does not read (later filters' columns are decoded for the
        // rows the earlier ones kept).
        let spares_some = |first: &PhysicalExpr| first.columns().len() < fast.len();
        let filter_first = filter.exprs().first().is_some_and(spares_some)
            && filter_columns.iter().all(|&c| fast[c].is_some())
            && filter
                .selectivity()
                .is_none_or(|s| s < FILTER_FIRST_MAX_SELECTIVITY);
        if !filter_first {
            let (columns, codes) = self.decode_columns(&fast, None, rows, &[], codes)?;
            let columns: Vec<Vec<ArrayRef>> = columns
                .into_iter()
                .map(|c| c.expect("every column decoded"))
                .collect();
            let mut out = Vec::new();
            for (k, batch) in slices(&self.schema, &columns, rows)?
                .into_iter()
                .enumerate()
            {
                let len = batch.num_rows();
                out.extend(filter.filter_or_select(batch, select)?.map(|mut s| {
                    // A filtered copy has other rows than the codes.
                    if s.batch.num_rows() == len {
                        s.codes = sliced(&codes, k * BATCH_SIZE, len);
                    }
                    s
                }));
            }
            return Ok(Some(out));
        }
        // The filter columns, each decoded for the rows the filters before
        // it kept; then the others for the rows that passed them all.
        let decode_kept = |c: usize, kept: Option<&[u32]>| {
            let column = fast[c].as_ref().expect("filter columns are decoded here");
            page_decode::decode(&self.bytes, row_group, column, kept)
        };
        let Some(FilteredColumns {
            kept,
            columns: read,
        }) = filter.keep_decoding(rows, decode_kept)?
        else {
            return Ok(Some(vec![]));
        };
        let mut others = fast;
        for &c in &filter_columns {
            others[c] = None;
        }
        let (mut columns, codes) =
            self.decode_columns(&others, Some(&kept), rows, &filter_columns, codes)?;
        for (c, values) in read {
            columns[c] = Some(vec![values]);
        }
        let columns: Vec<Vec<ArrayRef>> = columns
            .into_iter()
            .map(|c| c.expect("every column decoded or filled in"))
            .collect();
        Ok(Some(
            slices(&self.schema, &columns, kept.len())?
                .into_iter()
                .enumerate()
                .map(|(k, batch)| Selected {
                    codes: sliced(&codes, k * BATCH_SIZE, batch.num_rows()),
                    ..Selected::all(batch)
                })
                .collect(),
        ))
    }

    /// The projected columns of the row group, each whole (or only the
    /// rows `kept`): the `fast` ones by [`page_decode`], the rest by the
    /// arrow-rs reader, except the columns `skip` (`None`, for the caller
    /// to fill in). A column is one array, or (read whole by arrow-rs) one
    /// array per [`BATCH_SIZE`] rows. Also returns the dictionary codes of
    /// the columns `codes` that the decoder has ([`page_decode::decode_with_codes`]).
    fn decode_columns(
        &self,
        fast: &[Option<page_decode::FastColumn>],
        kept: Option<&[u32]>,
        rows: usize,
        skip: &[usize],
        codes: &[usize],
    ) -> Result<DecodedColumns> {
        let row_group = self.metadata.metadata().row_group(self.row_group);
        let mut found = Vec::new();
        let mut columns: Vec<Option<Vec<ArrayRef>>> = Vec::with_capacity(fast.len());
        for (i, f) in fast.iter().enumerate() {
            columns.push(match f {
                Some(f) => {
                    let want = codes.contains(&i);
                    let (values, c) =
                        page_decode::decode_with_codes(&self.bytes, row_group, f, kept, want)?;
                    found.extend(c.map(|c| (i, c)));
                    Some(vec![values])
                }
                None => None,
            });
        }
        let others: Vec<usize> = (0..fast.len())
            .filter(|&i| fast[i].is_none() && !skip.contains(&i))
            .collect();
        if others.is_empty() {
            return Ok((columns, found));
        }
        let b = ParquetRecordBatchReaderBuilder::new_with_metadata(
            self.bytes.clone(),
            self.metadata.clone(),
        )
        .with_row_groups(vec![self.row_group])
        .with_batch_size(BATCH_SIZE);
        let mask = ProjectionMask::roots(
            b.parquet_schema(),
            others.iter().map(|&i| self.file_root(i)),
        );
        let mut parts: Vec<Vec<ArrayRef>> = vec![vec![]; others.len()];
        let mut offset = 0;
        for batch in b.with_projection(mask).build()? {
            let batch = batch?;
            let len = batch.num_rows();
            let local = kept.map(|k| {
                let from = k.partition_point(|&r| (r as usize) < offset);
                let to = k.partition_point(|&r| (r as usize) < offset + len);
                arrow::array::UInt32Array::from_iter_values(
                    k[from..to].iter().map(|&r| r - offset as u32),
                )
            });
            for (j, c) in batch.columns().iter().enumerate() {
                parts[j].push(match &local {
                    Some(idx) => arrow::compute::take(c, idx, None)?,
                    None => c.clone(),
                });
            }
            offset += len;
        }
        if offset != rows {
            return Err(SlothError::Data(format!(
                "Parquet reader returned {offset} rows of a {rows}-row group"
            )));
        }
        for (j, &i) in others.iter().enumerate() {
            let pieces = std::mem::take(&mut parts[j]);
            columns[i] = Some(match (kept, pieces.len()) {
                // The few rows taken from each batch become one array.
                (Some(_), n) if n > 1 => vec![arrow::compute::concat(
                    &pieces.iter().map(|a| a.as_ref()).collect::<Vec<_>>(),
                )?],
                // Whole batches line up with the slices of `slices`: kept
                // as they are, not copied into one array.
                _ => pieces,
            });
        }
        Ok((columns, found))
    }

    /// Guards that hand the projected column chunks' file pages back when
    /// dropped ([`ReleaseWhenRead`]).
    fn release_chunks_when_done(&self) -> Vec<ReleaseWhenRead> {
        let pq = self.metadata.metadata();
        let row_group = pq.row_group(self.row_group);
        let descr = pq.file_metadata().schema_descr();
        let read =
            |root: usize| (self.projection.as_ref()).is_none_or(|p| p.binary_search(&root).is_ok());
        (0..descr.num_columns())
            .filter(|&leaf| read(descr.get_column_root_idx(leaf)))
            .map(|leaf| ReleaseWhenRead::of(&self.bytes, row_group.column(leaf)))
            .collect()
    }

    /// The file's root column that projected column `i` reads.
    fn file_root(&self, i: usize) -> usize {
        self.projection.as_ref().map_or(i, |p| p[i])
    }

    /// The scan's filters as one reader predicate over just the columns
    /// they read; `None` when they read every projected column (nothing
    /// would be decoded later) or none.
    fn row_filter(&self, filter: &ScanFilter, parquet: &SchemaDescriptor) -> Option<RowFilter> {
        let used: Vec<usize> = {
            let mut u: Vec<usize> = filter.exprs().iter().flat_map(|e| e.columns()).collect();
            u.sort_unstable();
            u.dedup();
            u
        };
        if used.is_empty() || used.len() == self.schema.fields().len() {
            return None;
        }
        // The predicate's batch holds the used roots in file order.
        let file_root = |i: usize| self.file_root(i);
        let mut roots: Vec<usize> = used.iter().map(|&i| file_root(i)).collect();
        roots.sort_unstable();
        let exprs: Vec<PhysicalExpr> = filter
            .exprs()
            .iter()
            .map(|e| {
                e.remap_columns(&|i| {
                    roots
                        .binary_search(&file_root(i))
                        .expect("filter column is among the predicate's columns")
                })
            })
            .collect();
        let predicate = ArrowPredicateFn::new(
            ProjectionMask::roots(parquet, roots.iter().copied()),
            move |batch: RecordBatch| {
                let mut keep: Option<BooleanArray> = None;
                for e in &exprs {
                    let mask = evaluate_mask(e, &batch)
                        .map_err(|err| ArrowError::ComputeError(err.to_string()))?;
                    keep = Some(match keep {
                        Some(k) => boolean::and(&k, &mask)?,
                        None => mask,
                    });
                }
                Ok(keep.unwrap_or_else(|| BooleanArray::from(vec![true; batch.num_rows()])))
            },
        );
        Some(RowFilter::new(vec![Box::new(predicate)]))
    }
}

/// The decoded columns of a row group (`None`: left to the caller) and
/// the dictionary codes found, by column.
type DecodedColumns = (Vec<Option<Vec<ArrayRef>>>, Vec<(usize, DictCodes)>);

/// A column chunk's bytes in the file, handed back to the page cache when
/// its row group is decoded ([`crate::io::file_cache::release_read`]): what a
/// query keeps resident is its decoded columns, not the compressed file.
struct ReleaseWhenRead(Option<Bytes>);

impl ReleaseWhenRead {
    /// Releases `chunk`'s bytes of `file` when dropped.
    fn of(file: &Bytes, chunk: &parquet::file::metadata::ColumnChunkMetaData) -> Self {
        ReleaseWhenRead(page_reader::chunk_range(file, chunk).map(|r| file.slice(r)))
    }
}

impl Drop for ReleaseWhenRead {
    fn drop(&mut self) {
        if let Some(bytes) = &self.0 {
            crate::io::file_cache::release_read(bytes);
        }
    }
}

/// The codes of the `len` rows from `offset` of each column of `codes`.
fn sliced(codes: &[(usize, DictCodes)], offset: usize, len: usize) -> Vec<(usize, DictCodes)> {
    codes
        .iter()
        .map(|(c, d)| (*c, d.slice(offset, len)))
        .collect()
}

/// `columns` (all `rows` long) cut into batches of at most [`BATCH_SIZE`]
/// rows: a column of one array is sliced (zero-copy), a column of several
/// gives its `k`th array to the `k`th batch.
fn slices(schema: &SchemaRef, columns: &[Vec<ArrayRef>], rows: usize) -> Result<Vec<RecordBatch>> {
    (0..rows)
        .step_by(BATCH_SIZE)
        .enumerate()
        .map(|(k, offset)| {
            let len = BATCH_SIZE.min(rows - offset);
            let columns = columns
                .iter()
                .map(|pieces| match pieces.as_slice() {
                    [whole] => Ok(whole.slice(offset, len)),
                    pieces => pieces
                        .get(k)
                        .filter(|p| p.len() == len)
                        .cloned()
                        .ok_or_else(|| {
                            SlothError::Data("Parquet reader's batches do not line up".into())
                        }),
                })
                .collect::<Result<Vec<_>>>()?;
            let options = RecordBatchOptions::new().with_row_count(Some(len));
            Ok(RecordBatch::try_new_with_options(
                schema.clone(),
                columns,
                &options,
            )?)
        })
        .collect()
}

/// Above this kept fraction (so far) a row group's filters run batch by
/// batch after every column is decoded, instead of first.
const FILTER_FIRST_MAX_SELECTIVITY: f64 = 0.5;

/// False when `SLOTH_PARQUET_DECODER=arrow`: every column then goes through
/// the arrow-rs reader (read once per process).
fn own_decoder_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os("SLOTH_PARQUET_DECODER").is_none_or(|v| v != "arrow"))
}

pub(super) fn units(
    path: &Path,
    projection: Option<&[usize]>,
    filters: &[PhysicalExpr],
    metrics: &Arc<ParquetScanMetrics>,
    schema: SchemaRef,
    shared: Option<Arc<FilePages>>,
) -> Result<Vec<super::ScanUnit>> {
    // The page index is only worth loading when there is something to prune.
    let (bytes, metadata) = load_metadata(path, !filters.is_empty())?;
    let file_schema = metadata.schema().clone();
    let projected_schema = match projection {
        Some(p) => file_schema.project(p)?,
        None => file_schema.as_ref().clone(),
    };
    let pq = metadata.metadata().clone();
    let keep = row_group_may_match(filters, &projected_schema, &file_schema, &pq)?;
    let mut units = Vec::new();
    let mut pruned = 0;
    let file: Arc<Path> = Arc::from(path);
    for (rg, may_match) in keep.into_iter().enumerate() {
        let rows = pq.row_group(rg).num_rows() as usize;
        if !may_match {
            pruned += 1;
            continue;
        }
        let selection = page_selection(filters, &projected_schema, &file_schema, &pq, rg)?;
        if let Some(sel) = &selection {
            metrics
                .rows_skipped_by_pages
                .fetch_add(rows - sel.row_count(), Ordering::Relaxed);
            if !sel.selects_any() {
                pruned += 1;
                continue;
            }
        }
        if rows == 0 {
            continue;
        }
        units.push(super::ScanUnit::ParquetRowGroup(RowGroupUnit {
            path: file.clone(),
            bytes: bytes.clone(),
            metadata: metadata.clone(),
            row_group: rg,
            projection: projection.map(|p| p.to_vec()),
            schema: schema.clone(),
            selection,
            metrics: metrics.clone(),
            shared: shared.clone(),
        }));
    }
    metrics
        .row_groups
        .fetch_add(pq.num_row_groups(), Ordering::Relaxed);
    metrics
        .row_groups_pruned
        .fetch_add(pruned, Ordering::Relaxed);
    Ok(units)
}

/// The rows of row group `rg` that the page index cannot rule out, or
/// `None` when it rules out no page (or the file has no page index).
///
/// Each `column op constant` filter keeps the pages whose min/max admit a
/// match; pages of different columns have different boundaries, so each
/// filter's pages become a row selection and the selections intersect.
fn page_selection(
    filters: &[PhysicalExpr],
    projected: &Schema,
    file_schema: &Schema,
    metadata: &ParquetMetaData,
    rg: usize,
) -> Result<Option<RowSelection>> {
    let (Some(column_index), Some(offset_index)) =
        (metadata.column_index(), metadata.offset_index())
    else {
        return Ok(None);
    };
    let mut selection: Option<RowSelection> = None;
    for f in filters {
        let Some((col, op, value)) = column_vs_constant(f) else {
            continue;
        };
        let Ok(conv) = StatisticsConverter::try_new(
            projected.field(col).name(),
            file_schema,
            metadata.file_metadata().schema_descr(),
        ) else {
            continue;
        };
        let (Ok(mins), Ok(maxes), Ok(Some(counts))) = (
            conv.data_page_mins(column_index, offset_index, [&rg]),
            conv.data_page_maxes(column_index, offset_index, [&rg]),
            conv.data_page_row_counts(offset_index, metadata.row_groups(), [&rg]),
        ) else {
            continue;
        };
        let Some(may_match) = prune(&mins, &maxes, op, value)? else {
            continue;
        };
        if may_match.len() != counts.len() || counts.null_count() > 0 {
            continue;
        }
        let pages: RowSelection = may_match
            .iter()
            .zip(counts.values())
            .map(|(m, &n)| {
                // Unknown statistics keep the page.
                if m.unwrap_or(true) {
                    RowSelector::select(n as usize)
                } else {
                    RowSelector::skip(n as usize)
                }
            })
            .collect();
        selection = Some(match selection {
            Some(s) => s.intersection(&pages),
            None => pages,
        });
    }
    Ok(selection.filter(|s| s.skipped_row_count() > 0))
}

/// For each row group: may it hold a row satisfying all `filters`?
///
/// Handles `column op constant` (and `constant op column`) for `= < <= > >=`;
/// anything else keeps the row group. `filters` refer to `projected` by index.
pub fn row_group_may_match(
    filters: &[PhysicalExpr],
    projected: &Schema,
    file_schema: &Schema,
    metadata: &ParquetMetaData,
) -> Result<Vec<bool>> {
    let n = metadata.num_row_groups();
    let mut keep = BooleanArray::from(vec![true; n]);
    for f in filters {
        let Some((col, op, value)) = column_vs_constant(f) else {
            continue;
        };
        let name = projected.field(col).name();
        let Ok(conv) = StatisticsConverter::try_new(
            name,
            file_schema,
            metadata.file_metadata().schema_descr(),
        ) else {
            continue;
        };
        let (Ok(mins), Ok(maxes)) = (
            conv.row_group_mins(metadata.row_groups()),
            conv.row_group_maxes(metadata.row_groups()),
        ) else {
            continue;
        };
        let Some(m) = prune(&mins, &maxes, op, value)? else {
            continue;
        };
        // Unknown statistics (null) keep the row group.
        let m = BooleanArray::from(
            m.iter()
                .map(|v| Some(v.unwrap_or(true)))
                .collect::<Vec<_>>(),
        );
        keep = boolean::and(&keep, &m)?;
    }
    Ok(keep.iter().map(|v| v.unwrap_or(true)).collect())
}

fn prune(
    mins: &ArrayRef,
    maxes: &ArrayRef,
    op: Operator,
    value: &ArrayRef,
) -> Result<Option<BooleanArray>> {
    // Statistics come in the file's type; compare in the constant's type.
    let to = value.data_type();
    if !arrow::compute::can_cast_types(mins.data_type(), to) {
        return Ok(None);
    }
    let (Ok(mins), Ok(maxes)) = (
        arrow::compute::cast(mins, to),
        arrow::compute::cast(maxes, to),
    ) else {
        return Ok(None);
    };
    let v = Scalar::new(value.clone());
    Ok(Some(match op {
        Operator::Eq => boolean::and(&cmp::lt_eq(&mins, &v)?, &cmp::gt_eq(&maxes, &v)?)?,
        Operator::Lt => cmp::lt(&mins, &v)?,
        Operator::LtEq => cmp::lt_eq(&mins, &v)?,
        Operator::Gt => cmp::gt(&maxes, &v)?,
        Operator::GtEq => cmp::gt_eq(&maxes, &v)?,
        _ => return Ok(None),
    }))
}

/// Matches `col op constant`, looking through casts of the column that keep
/// order (numeric widening, decimal rescaling, string layouts).
fn column_vs_constant(e: &PhysicalExpr) -> Option<(usize, Operator, &ArrayRef)> {
    let Node::Binary(l, op, r) = &e.node else {
        return None;
    };
    let column = |e: &PhysicalExpr| -> Option<usize> {
        match &e.node {
            Node::Column(i) => Some(*i),
            Node::Cast(inner) => match inner.node {
                Node::Column(i) if order_preserving(&inner.data_type, &e.data_type) => Some(i),
                _ => None,
            },
            _ => None,
        }
    };
    match (column(l), r.as_literal(), column(r), l.as_literal()) {
        (Some(c), Some(v), _, _) if !v.is_null(0) => Some((c, *op, v)),
        (_, _, Some(c), Some(v)) if !v.is_null(0) => Some((c, op.swap()?, v)),
        _ => None,
    }
}

fn order_preserving(from: &arrow::datatypes::DataType, to: &arrow::datatypes::DataType) -> bool {
    use arrow::datatypes::DataType::*;
    (from.is_integer() && (to.is_integer() || matches!(to, Decimal128(..) | Float64)))
        || (matches!(from, Decimal128(..)) && matches!(to, Decimal128(..)))
        || (matches!(from, Utf8 | LargeUtf8 | Utf8View)
            && matches!(to, Utf8 | LargeUtf8 | Utf8View))
        || (matches!(from, Float32) && matches!(to, Float64))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::Int64Array;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;

    use crate::prelude::*;

    /// A sorted key `k` (and `v` = 2k) in row groups of 1,000 rows and
    /// pages of 100.
    fn sorted_file(dir: &tempfile::TempDir, rows: i64) -> std::path::PathBuf {
        let path = dir.path().join("sorted.parquet");
        let k: Arc<dyn arrow::array::Array> = Arc::new(Int64Array::from_iter_values(0..rows));
        let v: Arc<dyn arrow::array::Array> =
            Arc::new(Int64Array::from_iter_values((0..rows).map(|k| 2 * k)));
        let batch = arrow::record_batch::RecordBatch::try_from_iter([("k", k), ("v", v)]).unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(1000))
            .set_data_page_row_count_limit(100)
            .set_write_batch_size(100)
            .build();
        let mut w = ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            batch.schema(),
            Some(props),
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        path
    }

    #[test]
    fn row_groups_and_pages_are_skipped_and_rows_are_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = sorted_file(&dir, 5000);
        let lf = LazyFrame::scan_parquet(&path)
            .unwrap()
            .filter(col("k").gt_eq(lit(2150i64)).and(col("k").lt(lit(2250i64))));
        let (df, metrics) = lf.collect_with_metrics().unwrap();
        assert_eq!(df.num_rows(), 100);
        let scan = metrics.iter().find(|m| m.name.starts_with("Scan")).unwrap();
        // 4 of 5 row groups pruned; in the fifth, 8 of 10 pages.
        assert!(
            scan.extra.contains("row_groups=5 pruned=4"),
            "{}",
            scan.extra
        );
        assert!(
            scan.extra.contains("page_rows_skipped=800"),
            "{}",
            scan.extra
        );
        let reference = lf.collect_unoptimized().unwrap();
        assert_eq!(
            reference.to_sorted_csv().unwrap(),
            df.to_sorted_csv().unwrap()
        );
    }

    #[test]
    fn clustered_selective_filters_are_late_materialized_with_the_same_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = sorted_file(&dir, 40_000);
        // 100 consecutive rows of every 1,000: statistics cannot prune
        // `k % 1000`, but the kept rows form runs the reader can skip to.
        let lf = LazyFrame::scan_parquet(&path)
            .unwrap()
            .filter((col("k") % lit(1000i64)).lt(lit(100i64)))
            .select([col("v")]);
        let (df, metrics) = lf.collect_with_metrics().unwrap();
        assert_eq!(df.num_rows(), 4_000);
        let scan = metrics.iter().find(|m| m.name.starts_with("Scan")).unwrap();
        assert!(scan.extra.contains("late_materialized="), "{}", scan.extra);
        let reference = lf.collect_unoptimized().unwrap();
        assert_eq!(
            reference.to_sorted_csv().unwrap(),
            df.to_sorted_csv().unwrap()
        );
    }
}
