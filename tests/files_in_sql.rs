//! Files named in SQL (`read_csv(..)`, `FROM 'f.parquet'`), Hive
//! partitions read with pruning and written by `COPY .. (PARTITION_BY ..)`,
//! JSON input, and the errors of each.

use std::path::Path;

use sloth::LazyFrame;
use sloth::sql::{SqlContext, SqlOutput};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn rows(c: &SqlContext, sql: &str) -> String {
    c.sql(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .to_sorted_csv()
        .unwrap()
}

fn run(c: &mut SqlContext, sql: &str) {
    match c.execute_mut(sql) {
        Ok(SqlOutput::Done | SqlOutput::Text(_)) => {}
        Ok(SqlOutput::Frame(_)) => panic!("{sql}: expected a statement without rows"),
        Err(e) => panic!("{sql}: {e}"),
    }
}

fn error(c: &mut SqlContext, sql: &str) -> String {
    let result = c.execute_mut(sql);
    match result {
        Err(e) => e.to_string(),
        Ok(SqlOutput::Frame(_)) | Ok(SqlOutput::Text(_)) | Ok(SqlOutput::Done) => {
            panic!("{sql}: expected an error")
        }
    }
}

/// The optimized plan's scans, and how many of them a filter rules out.
fn scans_and_pruned(c: &SqlContext, sql: &str) -> (usize, usize) {
    let plan = c.sql(sql).unwrap().explain(true).unwrap();
    let optimized = plan.split("Optimized plan").nth(1).unwrap();
    let optimized = optimized.split("Physical plan").next().unwrap();
    (
        optimized.matches("Scan ").count(),
        optimized.matches("filters=[false]").count(),
    )
}

#[test]
fn table_functions_and_quoted_paths_read_what_registered_tables_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("a.csv"), "k,v\n1,x\n2,NA\n3,z\n");
    write(&d.join("semi.txt"), "1;x\n2;NA\n3;z\n");
    let mut c = SqlContext::new();
    c.register_file("a", d.join("a.csv")).unwrap();
    let p = d.display();
    for ext in ["parquet", "ndjson", "arrow"] {
        run(&mut c, &format!("copy a to '{p}/a.{ext}'"));
    }
    let expected = rows(&c, "select k, v from a");
    for from in [
        format!("read_csv('{p}/a.csv')"),
        format!("read_csv_auto('{p}/a.csv', header = true)"),
        format!("read_parquet('{p}/a.parquet')"),
        format!("read_json('{p}/a.ndjson')"),
        format!("read_ipc('{p}/a.arrow')"),
        format!("'{p}/a.parquet'"),
        format!("\"{p}/a.csv\""),
        format!("'{p}/a.*'"),
    ] {
        let sql = format!("select k, v from {from} as t");
        // Four formats behind one glob: the union of all four.
        let want = if from.contains("a.*") {
            rows(
                &c,
                "select k, v from a union all select k, v from a \
                 union all select k, v from a union all select k, v from a",
            )
        } else {
            expected.clone()
        };
        assert_eq!(rows(&c, &sql), want, "{sql}");
    }
    // Options: no header, another delimiter, a null string.
    let semi = format!(
        "select column_1 as k, column_2 as v from \
         read_csv('{p}/semi.txt', delim = ';', header = false, nullstr = 'NA')"
    );
    assert_eq!(rows(&c, &semi), "k,v\n1,x\n2,\n3,z\n");
    // A list of paths is one table; a join of two file reads.
    let list = format!("select count(*) as n from read_csv(['{p}/a.csv', '{p}/a.csv'])");
    assert_eq!(rows(&c, &list), "n\n6\n");
    let join =
        format!("select count(*) as n from '{p}/a.parquet' x join '{p}/a.ndjson' y on x.k = y.k");
    assert_eq!(rows(&c, &join), "n\n3\n");
}

#[test]
fn files_named_in_sql_give_clear_errors_and_can_be_switched_off() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().display();
    write(&dir.path().join("a.csv"), "k\n1\n");
    let mut c = SqlContext::new();
    for (sql, says) in [
        (
            format!("select * from read_csv('{p}/none-*.csv')"),
            "no file matches",
        ),
        (
            format!("select * from '{p}/missing.parquet'"),
            "missing.parquet",
        ),
        (
            format!("select * from read_csv('{p}/a.csv', speed = 1)"),
            "unknown option 'speed'",
        ),
        (
            format!("select * from read_csv('{p}/a.csv', delim = ';;')"),
            "one character",
        ),
        ("select * from read_csv()".to_string(), "needs a path"),
        (
            "select * from read_parquet(1)".to_string(),
            "path in quotes",
        ),
        (
            "select * from generate_series(1, 3)".to_string(),
            "generate_series",
        ),
    ] {
        let e = error(&mut c, &sql);
        assert!(e.contains(says), "{sql}: {e}");
    }
    run(&mut c, "set enable_external_access = false");
    let e = error(&mut c, &format!("select * from '{p}/a.csv'"));
    assert!(e.contains("enable_external_access"), "{e}");
    let e = error(&mut c, &format!("select * from read_csv('{p}/a.csv')"));
    assert!(e.contains("enable_external_access"), "{e}");
}

#[test]
fn hive_partitions_are_columns_and_predicates_on_them_skip_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        &d.join("t/year=2023/region=eu/p.csv"),
        "id,amt\n1,10\n2,20\n",
    );
    write(&d.join("t/year=2023/region=us/p.csv"), "id,amt\n3,30\n");
    write(&d.join("t/year=2024/region=eu/p.csv"), "id,amt\n4,40\n");
    write(
        &d.join("t/year=2024/region=us/p.csv"),
        "id,amt\n5,50\n6,60\n",
    );
    write(&d.join("t/year=2024/_SUCCESS"), "");
    let mut c = SqlContext::new();
    assert_eq!(
        c.register_dir(d).unwrap(),
        1,
        "the partitioned directory is a table"
    );
    let schema = c.table("t").unwrap().schema().unwrap();
    let columns: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("{} {}", f.name(), f.data_type()))
        .collect();
    assert_eq!(
        columns,
        ["id Int64", "amt Int64", "year Int64", "region Utf8"]
    );
    let sql = "select region, sum(amt) as s from t where year = 2024 group by region";
    assert_eq!(rows(&c, sql), "region,s\neu,40\nus,110\n");
    assert_eq!(scans_and_pruned(&c, sql), (4, 2));
    let both = "select count(*) as n from t where year = 2023 and region = 'us'";
    assert_eq!(rows(&c, both), "n\n1\n");
    assert_eq!(scans_and_pruned(&c, both), (4, 3));
    // A glob over partitions reads the same columns.
    let p = d.display();
    let glob = format!("select count(*) as n, sum(year) as y from '{p}/t/year=*/region=eu/*.csv'");
    assert_eq!(rows(&c, &glob), "n,y\n3,6070\n");
    // The same answers with the optimizer off: pruning changes nothing.
    let mut unoptimized =
        SqlContext::new().with_optimizer(sloth::prelude::OptimizerOptions::none());
    unoptimized.register_dir(d).unwrap();
    assert_eq!(rows(&unoptimized, sql), rows(&c, sql));
}

#[test]
fn a_partitioned_copy_reads_back_equal_and_replaces_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut c = SqlContext::new();
    run(
        &mut c,
        "create table src as select * from (values (1, 'a/b', 10.5), (2, 'c', 20.0), \
         (3, null, 30.25), (4, 'c', 40.0)) as v(id, tag, amt)",
    );
    let out = d.join("out");
    let o = out.display();
    run(
        &mut c,
        &format!("copy src to '{o}' (format parquet, partition_by (tag), compression snappy)"),
    );
    let mut dirs: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(
        dirs,
        ["tag=__HIVE_DEFAULT_PARTITION__", "tag=a%2Fb", "tag=c"]
    );
    c.register_file("back", &out).unwrap();
    assert_eq!(
        rows(&c, "select id, tag, amt from back"),
        rows(&c, "select id, tag, amt from src")
    );
    let (scans, pruned) = scans_and_pruned(&c, "select id from back where tag = 'c'");
    assert_eq!((scans, pruned), (3, 2));
    // No temporary directory is left beside the output.
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["out"]);
    // An existing tree stays unless OVERWRITE replaces it.
    let e = error(&mut c, &format!("copy src to '{o}' (partition_by (tag))"));
    assert!(e.contains("OVERWRITE"), "{e}");
    run(
        &mut c,
        &format!("copy (select * from src where id < 3) to '{o}' (partition_by (id), overwrite)"),
    );
    c.register_file("back", &out).unwrap();
    assert_eq!(rows(&c, "select id from back"), "id\n1\n2\n");
    // A write that fails midway (a bad cast) leaves the old tree.
    let e = error(
        &mut c,
        &format!(
            "copy (select id, cast(tag as int) as bad from src) to '{o}' \
             (partition_by (id), overwrite)"
        ),
    );
    assert!(!e.is_empty());
    c.register_file("back", &out).unwrap();
    assert_eq!(rows(&c, "select id from back"), "id\n1\n2\n");
    let left: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["out"], "no temporary tree is left");
}

#[test]
fn malformed_or_inconsistent_partition_trees_are_errors_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("t/year=2023/p.csv"), "a\n1\n");
    write(&d.join("t/notes/p.csv"), "a\n2\n");
    let e = LazyFrame::scan_path(d.join("t")).unwrap_err().to_string();
    assert!(e.contains("'notes' is not a key=value"), "{e}");
    write(&d.join("u/year=2023/p.csv"), "a\n1\n");
    write(&d.join("u/month=1/p.csv"), "a\n2\n");
    let e = LazyFrame::scan_path(d.join("u")).unwrap_err().to_string();
    assert!(
        e.contains("partitioned by (year), unlike") && e.contains("month=1"),
        "{e}"
    );
}

#[test]
fn json_lines_and_json_arrays_read_as_tables() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        &d.join("l.ndjson"),
        "{\"id\": 1, \"name\": \"x\", \"score\": 1.5}\n{\"id\": 2, \"score\": 2}\n",
    );
    let mut c = SqlContext::new();
    c.register_file("l", d.join("l.ndjson")).unwrap();
    assert_eq!(
        rows(&c, "select id, name, score from l"),
        "id,name,score\n1,x,1.5\n2,,2.0\n"
    );
    // What `--format json` writes (one array) reads back equal.
    let p = d.display();
    run(&mut c, &format!("copy l to '{p}/a.json' (format json)"));
    assert!(
        std::fs::read_to_string(d.join("a.json"))
            .unwrap()
            .starts_with('[')
    );
    assert_eq!(
        rows(&c, &format!("select id, name, score from '{p}/a.json'")),
        rows(&c, "select id, name, score from l")
    );
    write(&d.join("bad.json"), "{\"id\": 1}\n{\"id\": \n");
    let e = c
        .register_file("bad", d.join("bad.json"))
        .and_then(|_| c.sql("select * from bad")?.collect().map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.json"), "{e}");
}

#[test]
fn csv_dates_in_a_given_format_read_as_dates_and_bad_ones_name_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        &d.join("eu.csv"),
        "day,at,iso,n\n25/12/2024,25/12/2024 13:05,2024-12-25,1\n01/02/2023,,2023-02-01,2\n,01/02/2023 00:00,,3\n",
    );
    write(&d.join("bad.csv"), "day\n01/01/2024\n31/02/2024\n");
    let c = SqlContext::new();
    let path = d.join("eu.csv");
    let read = format!(
        "read_csv('{}', dateformat = '%d/%m/%Y', timestampformat = '%d/%m/%Y %H:%M')",
        path.display()
    );
    let types = |sql: &str| -> Vec<String> {
        let schema = c.sql(sql).unwrap().schema().unwrap();
        schema
            .fields()
            .iter()
            .map(|f| f.data_type().to_string())
            .collect()
    };
    assert_eq!(
        types(&format!("select day, at, iso, n from {read}")),
        ["Date32", "Timestamp(µs)", "Date32", "Int64"]
    );
    assert_eq!(
        rows(
            &c,
            &format!("select day + 1, at, iso = day from {read} where n < 3")
        ),
        "day + 1,at,iso = day\n\
         2023-02-02,,true\n\
         2024-12-26,2024-12-25T13:05:00,true\n"
    );
    assert_eq!(
        rows(&c, &format!("select count(day), count(at) from {read}")),
        "count(day),count(at)\n2,2\n"
    );
    // Without the formats they are text; a declared type reads in the format.
    assert_eq!(
        types(&format!("select day from read_csv('{}')", path.display())),
        ["Utf8"]
    );
    assert_eq!(
        rows(
            &c,
            &format!(
                "select max(day) from read_csv('{}', types = {{'day': 'DATE'}}, dateformat = '%d/%m/%Y')",
                path.display()
            )
        ),
        "max(day)\n2024-12-25\n"
    );
    let mut c = SqlContext::new();
    let e = error(
        &mut c,
        &format!(
            "select * from read_csv('{}', types = {{'day': 'DATE'}}, dateformat = '%d/%m/%Y')",
            d.join("bad.csv").display()
        ),
    );
    assert!(
        e.contains("bad.csv")
            && e.contains(
                "line 3, column 'day': '31/02/2024' does not match dateformat '%d/%m/%Y'"
            ),
        "{e}"
    );
}

#[test]
fn union_by_name_fills_missing_columns_and_hive_partitioning_can_be_off() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(&d.join("y/a.csv"), "k,v\n1,x\n");
    write(&d.join("y/b.csv"), "v,w,k\ny,2.5,2\n");
    write(&d.join("p/year=2024/part.csv"), "k\n7\n");
    let mut c = SqlContext::new();
    let glob = d.join("y/*.csv");
    let e = error(&mut c, &format!("select * from '{}'", glob.display()));
    assert!(
        e.contains("b.csv") && e.contains("union_by_name = true"),
        "{e}"
    );
    assert_eq!(
        rows(
            &c,
            &format!(
                "select * from read_csv('{}', union_by_name = true)",
                glob.display()
            )
        ),
        "k,v,w\n1,x,\n2,y,2.5\n"
    );
    // A list of paths unites by name too, each file's types widened.
    assert_eq!(
        rows(
            &c,
            &format!(
                "select k, w from read_csv(['{}', '{}'], union_by_name = true)",
                d.join("y/b.csv").display(),
                d.join("p/year=2024/part.csv").display()
            )
        ),
        "k,w\n2,2.5\n7,\n"
    );
    let partitioned = d.join("p");
    assert_eq!(
        rows(
            &c,
            &format!("select * from read_csv('{}')", partitioned.display())
        ),
        "k,year\n7,2024\n"
    );
    assert_eq!(
        rows(
            &c,
            &format!(
                "select * from read_csv('{}', hive_partitioning = false)",
                partitioned.display()
            )
        ),
        "k\n7\n"
    );
    let e = error(
        &mut c,
        &format!(
            "select * from read_parquet('{}', dateformat = '%d')",
            glob.display()
        ),
    );
    assert!(e.contains("unknown option 'dateformat'"), "{e}");
}
