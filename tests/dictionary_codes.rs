//! Group-by over Parquet columns whose dictionary codes the scan hands to
//! the aggregation (`src/io/dict_codes.rs`): every answer must equal the
//! same query over the same rows in memory, where no codes exist. The file
//! has many row groups (a dictionary each), a column with nulls, one whose
//! dictionary falls back to PLAIN, and filters that keep most rows (batches
//! with a selection), some, or few (decoded after the filter).

use crate::common;

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Schema};
use parquet::file::properties::WriterProperties;
use sloth::prelude::*;
use sloth::sql::{SqlContext, SqlOutput};

const ROWS: usize = 60_000;

fn batch() -> RecordBatch {
    let mut x = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut s1 = Vec::new();
    let mut s2 = Vec::new();
    let mut nullable = Vec::new();
    let mut wide = Vec::new();
    let mut i1 = Vec::new();
    let mut v = Vec::new();
    for r in 0..ROWS {
        s1.push(format!("k{:03}", next(37)));
        // Long enough not to be inline in a view.
        s2.push(format!("a-longer-string-key-{}", next(5)));
        nullable.push((r % 11 != 3).then(|| format!("n{}", next(4))));
        // Too many distinct values for a dictionary page of 2 KiB.
        wide.push(format!("w{}", next(50_000)));
        i1.push(next(60) as i64 - 30);
        v.push(next(1000) as i64);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(s1)),
        Arc::new(StringArray::from(s2)),
        Arc::new(StringArray::from(nullable)),
        Arc::new(StringArray::from(wide)),
        Arc::new(Int64Array::from(i1)),
        Arc::new(Int64Array::from(v)),
    ];
    common::named_batch(
        &["s1", "s2", "nullable", "wide", "i1", "v"],
        columns,
        "nullable",
    )
}

fn contexts() -> (tempfile::TempDir, SqlContext, SqlContext) {
    let b = batch();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(7_000))
        .set_dictionary_page_size_limit(2048)
        .set_data_page_size_limit(4096)
        .build();
    common::write_parquet(&path, &b, props);
    let mut file = SqlContext::new();
    file.register_file("t", &path).unwrap();
    let mut memory = SqlContext::new();
    let schema = Arc::new(Schema::new(
        b.schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_data_type(DataType::Utf8View))
            .map(|f| match f.name().as_str() {
                "i1" | "v" => f.with_data_type(DataType::Int64),
                _ => f,
            })
            .collect::<Vec<_>>(),
    ));
    let columns = b
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| arrow::compute::cast(c, f.data_type()).unwrap())
        .collect();
    let b = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let frame = LazyFrame::from_batches_with_schema(schema, common::split(&b, 5000)).unwrap();
    memory.register("t", frame);
    (dir, file, memory)
}

fn sorted_rows(ctx: &SqlContext, sql: &str) -> Vec<String> {
    let mut rows = common::rows(&ctx.sql(sql).unwrap());
    rows.sort();
    rows
}

#[test]
fn group_by_on_dictionary_codes_equals_group_by_in_memory() {
    let (_dir, file, memory) = contexts();
    let queries = [
        "select s1, sum(v), count(*) from t group by s1",
        "select s1, i1, sum(v), min(v), max(v) from t group by s1, i1",
        "select i1, count(*) from t group by i1",
        "select s2, s1, sum(v) from t group by s2, s1",
        "select nullable, count(*), sum(v) from t group by nullable",
        "select wide, count(*) from t group by wide",
        "select s1, wide, count(*) from t group by s1, wide",
        // 37 * 60 * 5 combinations stay under the direct map's limit;
        // with `nullable` too the group has no codes in some row groups.
        "select s1, i1, s2, count(*) from t group by s1, i1, s2",
        "select s1, nullable, i1, count(*) from t group by s1, nullable, i1",
        // Keeps most rows: batches come whole with a selection.
        "select s1, sum(v) from t where v < 950 group by s1",
        // Keeps some: a filtered copy of each batch.
        "select s1, i1, sum(v) from t where v < 400 group by s1, i1",
        // Keeps few: the key columns are decoded after the filter.
        "select s1, count(*), sum(v) from t where v < 30 group by s1",
        "select s1, count(distinct i1), min(s2) from t group by s1",
        "select upper(s1), sum(v) from t group by upper(s1)",
    ];
    for q in queries {
        let ours = sorted_rows(&file, q);
        assert!(!ours.is_empty(), "{q}");
        assert_eq!(ours, sorted_rows(&memory, q), "{q}");
    }
    // The file's answers took the path under test where codes exist.
    for (q, by_code) in [
        (queries[0], Some(ROWS)),
        (queries[1], Some(ROWS)),
        (queries[7], Some(ROWS)),
        (queries[4], None),
        (queries[5], None),
        (queries[13], None),
    ] {
        assert_eq!(rows_by_code(&file, q), by_code, "{q}");
        assert_eq!(rows_by_code(&memory, q), None, "{q}");
    }
    // With a filter, the rows it kept: most (batches with a selection),
    // or few (the key column decoded after the filter).
    for (q, filter) in [(queries[9], "v < 950"), (queries[11], "v < 30")] {
        let kept = sorted_rows(&memory, &format!("select count(*) from t where {filter}"));
        let n = rows_by_code(&file, q).unwrap();
        assert_eq!(vec![n.to_string()], kept, "{q}");
    }
}

/// The rows EXPLAIN ANALYZE says were grouped by dictionary code.
fn rows_by_code(ctx: &SqlContext, sql: &str) -> Option<usize> {
    let SqlOutput::Text(plan) = ctx.execute(&format!("explain analyze {sql}")).unwrap() else {
        panic!("EXPLAIN gives text");
    };
    let (before, _) = plan.split_once(" rows grouped by dictionary code")?;
    before.rsplit(' ').next()?.parse().ok()
}
