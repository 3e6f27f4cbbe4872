//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;
use sloth::prelude::*;

/// Every join kind with equality keys (all but cross).
pub const EQUI_JOINS: [JoinType; 6] = [
    JoinType::Inner,
    JoinType::Left,
    JoinType::Right,
    JoinType::Full,
    JoinType::Semi,
    JoinType::Anti,
];

/// Splits a batch into batches of `size` rows, to exercise multi-batch paths.
pub fn split(batch: &RecordBatch, size: usize) -> Vec<RecordBatch> {
    (0..batch.num_rows())
        .step_by(size)
        .map(|s| batch.slice(s, size.min(batch.num_rows() - s)))
        .collect()
}

/// A batch of `columns` named `names`, nullable only where named `nullable`.
pub fn named_batch(names: &[&str], columns: Vec<ArrayRef>, nullable: &str) -> RecordBatch {
    let fields: Vec<Field> = (names.iter().zip(&columns))
        .map(|(name, c)| Field::new(*name, c.data_type().clone(), *name == nullable))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// Writes `batch` to a Parquet file at `path` with writer `props`.
pub fn write_parquet(
    path: &std::path::Path,
    batch: &RecordBatch,
    props: parquet::file::properties::WriterProperties,
) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// A frame over `batch` cut into 2-row batches.
pub fn frame(batch: RecordBatch) -> LazyFrame {
    LazyFrame::from_batches_with_schema(batch.schema(), split(&batch, 2)).unwrap()
}

/// Collects and returns the rows as strings (one per row, columns joined by `|`),
/// in result order. Null shows as `null`.
pub fn rows(lf: &LazyFrame) -> Vec<String> {
    rows_of(&lf.collect().unwrap())
}

/// Rows of a result as `a|b|c` strings.
pub fn rows_of(df: &DataFrame) -> Vec<String> {
    let b = df.to_batch().unwrap();
    let fmt: Vec<_> = b
        .columns()
        .iter()
        .map(|c| {
            arrow::util::display::ArrayFormatter::try_new(
                c.as_ref(),
                &arrow::util::display::FormatOptions::default().with_null("null"),
            )
            .unwrap()
        })
        .collect();
    (0..b.num_rows())
        .map(|r| {
            fmt.iter()
                .map(|f| f.value(r).to_string())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// Rows sorted, for results whose order is unspecified.
pub fn sorted_rows(lf: &LazyFrame) -> Vec<String> {
    let mut r = rows(lf);
    r.sort();
    r
}

/// A small table with nulls in every column:
/// k (Utf8), g (Int32), x (Int64), f (Float64), d (Date32), m (Decimal128(10,2)), b (Boolean).
pub fn people() -> RecordBatch {
    RecordBatch::try_from_iter(vec![
        (
            "k",
            Arc::new(StringArray::from(vec![
                Some("a"),
                Some("b"),
                Some("a"),
                None,
                Some("b"),
                Some("c"),
            ])) as ArrayRef,
        ),
        (
            "g",
            Arc::new(Int32Array::from(vec![
                Some(1),
                Some(2),
                Some(1),
                Some(2),
                None,
                Some(3),
            ])) as ArrayRef,
        ),
        (
            "x",
            Arc::new(Int64Array::from(vec![
                Some(10),
                Some(20),
                None,
                Some(40),
                Some(50),
                Some(60),
            ])) as ArrayRef,
        ),
        (
            "f",
            Arc::new(Float64Array::from(vec![
                Some(1.5),
                None,
                Some(2.5),
                Some(4.0),
                Some(5.0),
                Some(-1.0),
            ])) as ArrayRef,
        ),
        (
            "d",
            Arc::new(Date32Array::from(vec![
                Some(0),
                Some(31),
                Some(59),
                None,
                Some(365),
                Some(10_000),
            ])) as ArrayRef,
        ),
        (
            "m",
            Arc::new(
                Decimal128Array::from(vec![
                    Some(1050),
                    Some(2025),
                    Some(-300),
                    Some(1),
                    None,
                    Some(99999),
                ])
                .with_precision_and_scale(10, 2)
                .unwrap(),
            ) as ArrayRef,
        ),
        (
            "b",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
                Some(false),
                Some(true),
            ])) as ArrayRef,
        ),
    ])
    .unwrap()
}

/// The type of column `name` in the result of `lf`.
pub fn column_type(lf: &LazyFrame, name: &str) -> DataType {
    let s = lf.schema().unwrap();
    s.field_with_name(name).unwrap().data_type().clone()
}

/// A SQL context over the eight TPC-H tables at SF 0.01, generated once per
/// test binary and kept in memory.
pub fn tpch_context(options: OptimizerOptions) -> sloth::sql::SqlContext {
    use std::sync::OnceLock;
    static TABLES: OnceLock<Vec<(String, LazyFrame)>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        sloth::datagen::TPCH_TABLES
            .iter()
            .map(|t| {
                let (schema, batches) = sloth::datagen::tpch_table(t, 0.01).unwrap();
                (
                    t.to_string(),
                    LazyFrame::from_batches_with_schema(schema, batches).unwrap(),
                )
            })
            .collect()
    });
    let mut c = sloth::sql::SqlContext::new().with_optimizer(options);
    for (name, lf) in tables {
        c.register(name, lf.clone());
    }
    c
}
