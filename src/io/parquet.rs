//! Parquet reading: projected columns, row groups decoded in parallel, and
//! row groups skipped when their min/max statistics rule out a pushed filter.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{Array, ArrayRef, BooleanArray, Scalar};
use arrow::compute::kernels::{boolean, cmp};
use arrow::datatypes::{Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::file::metadata::ParquetMetaData;

use super::{BATCH_SIZE, nullable_schema, open};
use crate::error::{Result, SlothError};
use crate::expr::Operator;
use crate::physical::expr::{Node, PhysicalExpr};

/// Counters a Parquet scan fills in (shown by `EXPLAIN ANALYZE`).
#[derive(Debug, Default)]
pub struct ParquetScanMetrics {
    /// Row groups in the file.
    pub row_groups: AtomicUsize,
    /// Row groups skipped by statistics.
    pub row_groups_pruned: AtomicUsize,
    /// Bytes of the Arrow arrays decoded (before the scan's filters).
    pub bytes_read: AtomicUsize,
}

fn builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<std::fs::File>> {
    ParquetRecordBatchReaderBuilder::try_new(open(path)?).map_err(|e| {
        SlothError::Data(format!(
            "'{}' is not a readable Parquet file: {e}",
            path.display()
        ))
    })
}

pub(super) fn read_schema(path: &Path) -> Result<SchemaRef> {
    Ok(nullable_schema(builder(path)?.schema()))
}

pub(super) fn row_count(path: &Path) -> Result<usize> {
    Ok(builder(path)?.metadata().file_metadata().num_rows() as usize)
}

/// The smallest and largest value of an integer column, from the footer's
/// row-group statistics (`None` when a row group has none).
pub(super) fn int_range(path: &Path, column: &str) -> Option<(i64, i64)> {
    let b = builder(path).ok()?;
    let metadata = b.metadata();
    let conv =
        StatisticsConverter::try_new(column, b.schema(), metadata.file_metadata().schema_descr())
            .ok()?;
    let as_i64 = |a: ArrayRef| -> Option<arrow::array::Int64Array> {
        if !a.data_type().is_integer() {
            return None;
        }
        let a = arrow::compute::cast(&a, &arrow::datatypes::DataType::Int64).ok()?;
        let a = a
            .as_any()
            .downcast_ref::<arrow::array::Int64Array>()?
            .clone();
        (a.null_count() == 0 && !a.is_empty()).then_some(a)
    };
    let mins = as_i64(conv.row_group_mins(metadata.row_groups()).ok()?)?;
    let maxes = as_i64(conv.row_group_maxes(metadata.row_groups()).ok()?)?;
    Some((
        mins.values().iter().copied().min()?,
        maxes.values().iter().copied().max()?,
    ))
}

/// One row group to read, with the file's metadata already parsed.
pub struct RowGroupUnit {
    path: PathBuf,
    metadata: ArrowReaderMetadata,
    row_group: usize,
    projection: Option<Vec<usize>>,
    schema: SchemaRef,
}

impl RowGroupUnit {
    /// Decodes the row group's projected columns.
    pub fn read(&self) -> Result<Vec<RecordBatch>> {
        let mut b = ParquetRecordBatchReaderBuilder::new_with_metadata(
            open(&self.path)?,
            self.metadata.clone(),
        )
        .with_row_groups(vec![self.row_group])
        .with_batch_size(BATCH_SIZE);
        if let Some(p) = &self.projection {
            let mask = ProjectionMask::roots(b.parquet_schema(), p.iter().copied());
            b = b.with_projection(mask);
        }
        b.build()?
            .map(|r| {
                Ok(RecordBatch::try_new(
                    self.schema.clone(),
                    r?.columns().to_vec(),
                )?)
            })
            .collect()
    }
}

pub(super) fn units(
    path: &Path,
    projection: Option<&[usize]>,
    filters: &[PhysicalExpr],
    metrics: &ParquetScanMetrics,
    schema: SchemaRef,
) -> Result<Vec<super::ScanUnit>> {
    let metadata = ArrowReaderMetadata::load(&open(path)?, Default::default()).map_err(|e| {
        SlothError::Data(format!(
            "'{}' is not a readable Parquet file: {e}",
            path.display()
        ))
    })?;
    let file_schema = metadata.schema().clone();
    let projected_schema = match projection {
        Some(p) => file_schema.project(p)?,
        None => file_schema.as_ref().clone(),
    };
    let pq = metadata.metadata().clone();
    let keep = row_group_may_match(filters, &projected_schema, &file_schema, &pq)?;
    let groups: Vec<usize> = (0..pq.num_row_groups()).filter(|i| keep[*i]).collect();
    metrics
        .row_groups
        .fetch_add(pq.num_row_groups(), Ordering::Relaxed);
    metrics
        .row_groups_pruned
        .fetch_add(pq.num_row_groups() - groups.len(), Ordering::Relaxed);
    Ok(groups
        .into_iter()
        .filter(|&rg| pq.row_group(rg).num_rows() > 0)
        .map(|row_group| {
            super::ScanUnit::ParquetRowGroup(RowGroupUnit {
                path: path.to_path_buf(),
                metadata: metadata.clone(),
                row_group,
                projection: projection.map(|p| p.to_vec()),
                schema: schema.clone(),
            })
        })
        .collect())
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
