//! Table inputs: one table from a glob or a directory of files, the errors
//! when their schemas differ or match nothing, and two files of a `--data`
//! directory that would share a table name; CSV headers with repeated or
//! empty names, and files of thousands of columns.

use sloth::sql::SqlContext;

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn csv_of(c: &SqlContext, sql: &str) -> String {
    c.sql(sql)
        .unwrap()
        .collect()
        .unwrap()
        .to_sorted_csv()
        .unwrap()
}

#[test]
fn a_glob_or_a_directory_is_one_table_with_pushdown_across_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "p1.csv", "a,b\n1,x\n2,y\n");
    write(dir.path(), "p2.csv", "a,b\n3,z\n");
    write(dir.path(), "readme.txt", "not a table\n");
    let mut c = SqlContext::new();
    c.register_file("g", dir.path().join("p*.csv")).unwrap();
    c.register_file("d", dir.path()).unwrap();
    let sql = "select sum(a) as s, count(*) as n from g where a > 1";
    assert_eq!(csv_of(&c, sql), "s,n\n5,2\n");
    assert_eq!(csv_of(&c, "select count(*) as n from d"), "n\n3\n");
    // The filter reaches every file's scan.
    let plan = c.sql(sql).unwrap().explain(true).unwrap();
    let optimized = plan.split("Optimized plan").nth(1).unwrap();
    let optimized = optimized.split("Physical plan").next().unwrap();
    assert_eq!(optimized.matches("filters=").count(), 2, "{optimized}");
}

#[test]
fn files_that_differ_or_match_nothing_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "p1.csv", "a,b\n1,x\n");
    write(dir.path(), "p2.csv", "a,c\n2,y\n");
    let mut c = SqlContext::new();
    let differ = c
        .register_file("t", dir.path().join("*.csv"))
        .unwrap_err()
        .to_string();
    assert!(
        differ.contains("p2.csv' has columns (a Int64, c Utf8)") && differ.contains("p1.csv"),
        "{differ}"
    );
    let nothing = c
        .register_file("t", dir.path().join("*.parquet"))
        .unwrap_err()
        .to_string();
    assert!(nothing.contains("no file matches"), "{nothing}");
}

#[test]
fn two_files_with_one_stem_under_a_data_directory_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.csv", "a\n1\n");
    write(dir.path(), "t.tsv", "a\n2\n");
    let err = SqlContext::new()
        .register_dir(dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("t.csv' and '") && err.contains("t.tsv' would both be table 't'"),
        "{err}"
    );
}

#[test]
fn declared_csv_types_replace_inferred_ones() {
    let dir = tempfile::tempdir().unwrap();
    // Codes with leading zeros, and dates past the rows sampled.
    let mut text = String::from("code,day\n");
    for i in 0..50 {
        text.push_str(&format!("{:03},\n", i));
    }
    text.push_str("050,2024-02-29\n");
    write(dir.path(), "t.csv", &text);
    let path = dir.path().join("t.csv");
    let path = path.display();
    let mut c = SqlContext::new();
    let declared = format!(
        "select count(*) as n, min(code) as first, max(day) as last from \
         read_csv('{path}', types = {{'code': 'VARCHAR', 'day': 'DATE'}}, sample_size = 10)"
    );
    assert_eq!(csv_of(&c, &declared), "n,first,last\n51,000,2024-02-29\n");
    // The Rust API: the same through CsvOptions.
    let options = sloth::io::CsvOptions {
        types: vec![
            ("code".into(), arrow::datatypes::DataType::Utf8),
            ("day".into(), arrow::datatypes::DataType::Date32),
        ],
        infer_rows: 10,
        ..Default::default()
    };
    c = SqlContext::new().with_csv_options(options);
    c.register_file("t", dir.path().join("t.csv")).unwrap();
    assert_eq!(
        csv_of(
            &c,
            "select count(*) as n, min(code) as first, max(day) as last from t"
        ),
        "n,first,last\n51,000,2024-02-29\n"
    );
    let e = c
        .sql(&format!(
            "select * from read_csv('{path}', types = {{'nope': 'DATE'}})"
        ))
        .and_then(|lf| lf.collect())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("types names column 'nope'") && e.contains("columns: code, day"),
        "{e}"
    );
}

#[test]
fn csv_options_read_files_without_headers_with_other_delimiters_and_null_strings() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.csv", "1;NA;x\n2;5;\"a;b\"\n3;;y\n");
    let options = sloth::io::CsvOptions {
        has_header: false,
        delimiter: b';',
        null_value: Some("NA".into()),
        ..Default::default()
    };
    let mut c = SqlContext::new().with_csv_options(options);
    c.register_file("t", dir.path().join("t.csv")).unwrap();
    let sql = "select count(column_2) as present, sum(column_2) as s, max(column_3) as m from t";
    assert_eq!(csv_of(&c, sql), "present,s,m\n1,5,y\n");
    assert_eq!(
        csv_of(&c, "select column_3 from t where column_1 = 2"),
        "column_3\na;b\n"
    );
}

/// Inputs the fuzzers (`scripts/fuzz.sh`) found to crash sloth, kept in
/// `tests/data/damaged/`: each is now a one-line error naming its file.
#[test]
fn files_the_fuzzers_found_are_errors_naming_the_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/damaged");
    for (name, parquet) in [
        // A column chunk at a negative offset in the footer: the parquet
        // crate's byte_range() asserted.
        ("negative-column-offset.parquet", true),
        // An embedded Arrow schema (the footer's ARROW:schema) with an
        // integer of 1,048,576 bits: arrow-ipc panicked decoding it.
        ("arrow-schema-int-of-1048576-bits.parquet", true),
        // A schema with an integer of 3,801,152 bits: arrow-ipc panicked.
        ("int-of-3801152-bits.arrow", false),
        // A record batch block of 249 GB in a 930-byte file: arrow-ipc
        // allocated it before reading, and the failed allocation aborted.
        ("record-batch-of-249-gb.arrow", false),
        // The same of a dictionary block, which opening the file reads.
        ("dictionary-of-72-pb.arrow", false),
    ] {
        let path = dir.join(name);
        let lf = match parquet {
            true => sloth::LazyFrame::scan_parquet(&path),
            false => sloth::LazyFrame::scan_ipc(&path),
        };
        let err = lf.and_then(|lf| lf.collect()).expect_err(name).to_string();
        assert!(
            err.contains(name) && err.lines().count() == 1,
            "{name}: {err}"
        );
        assert!(!err.contains("internal error"), "{name}: {err}");
    }
}

#[test]
fn a_damaged_parquet_file_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    let values: Vec<i64> = (0..50_000).map(|i| i * 7919 % 100_003).collect();
    let batch = arrow::record_batch::RecordBatch::try_from_iter([(
        "v",
        std::sync::Arc::new(arrow::array::Int64Array::from(values)) as arrow::array::ArrayRef,
    )])
    .unwrap();
    sloth::LazyFrame::from_batches(vec![batch])
        .unwrap()
        .sink_parquet(&path)
        .unwrap();
    // Garbage over the first page's header, the footer left whole (data
    // bytes themselves carry no checksum here: damage there reads as other
    // values, as in any engine).
    let mut bytes = std::fs::read(&path).unwrap();
    for b in &mut bytes[4..64] {
        *b = 0xA5;
    }
    std::fs::write(&path, bytes).unwrap();
    let mut c = SqlContext::new();
    c.register_file("t", &path).unwrap();
    let err = c
        .sql("select sum(v) from t")
        .unwrap()
        .collect()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("t.parquet', row group 0") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn repeated_and_empty_csv_header_names_become_distinct_columns() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.csv", "a,a,,b\n1,2,3,4\n5,6,7,8\n");
    let mut c = SqlContext::new();
    c.register_file("t", dir.path().join("t.csv")).unwrap();
    // DuckDB 2.0.1 names these columns a, a_1, column2, b.
    assert_eq!(
        csv_of(&c, "select a, a_1, column2, b from t"),
        "a,a_1,column2,b\n1,2,3,4\n5,6,7,8\n"
    );
}

#[test]
fn a_file_with_thousands_of_columns_reads_in_short_batches() {
    let dir = tempfile::tempdir().unwrap();
    let header: Vec<String> = (0..3_000).map(|i| format!("c{i}")).collect();
    let row: Vec<String> = (0..3_000).map(|i| i.to_string()).collect();
    let text = format!(
        "{}\n{}\n{}\n",
        header.join(","),
        row.join(","),
        row.join(",")
    );
    write(dir.path(), "wide.csv", &text);
    let mut c = SqlContext::new();
    c.register_file("w", dir.path().join("wide.csv")).unwrap();
    assert_eq!(
        csv_of(
            &c,
            "select sum(c0) as a, sum(c2999) as z, count(*) as n from w"
        ),
        "a,z,n\n0,5998,2\n"
    );
}

/// Damaged copies of a small Arrow IPC file (bytes overwritten by a fixed
/// pseudo-random sequence) read as an answer or as a one-line error that
/// names the file; never as an internal error (a panic in the reader).
#[test]
fn damaged_arrow_ipc_files_are_errors_naming_the_file_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.arrow");
    let ints: Vec<i64> = (0..500).collect();
    let texts: Vec<String> = (0..500).map(|i| format!("row {i}")).collect();
    let batch = arrow::record_batch::RecordBatch::try_from_iter([
        (
            "v",
            std::sync::Arc::new(arrow::array::Int64Array::from(ints)) as arrow::array::ArrayRef,
        ),
        (
            "s",
            std::sync::Arc::new(arrow::array::StringArray::from(texts)) as _,
        ),
    ])
    .unwrap();
    sloth::LazyFrame::from_batches(vec![batch])
        .unwrap()
        .sink_ipc(&good)
        .unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let bad = dir.path().join("bad.arrow");
    for _ in 0..150 {
        let mut damaged = bytes.clone();
        for _ in 0..1 + next() % 8 {
            let at = next() % damaged.len();
            damaged[at] = next() as u8;
        }
        std::fs::write(&bad, &damaged).unwrap();
        let mut c = SqlContext::new();
        let answer = c
            .register_file("t", &bad)
            .and_then(|_| c.sql("select count(*), sum(v), max(s) from t")?.collect());
        if let Err(e) = answer {
            let e = e.to_string();
            assert!(!e.contains("internal error"), "{e}");
            assert!(e.contains("bad.arrow") && e.lines().count() == 1, "{e}");
        }
    }
}
