//! Queries under memory limits far below their working sets: sorts,
//! aggregates, joins and windows spill, results equal those of an unlimited run and of the
//! row-wise executor, and no spill file is left behind.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;
use sloth::prelude::*;
use sloth::sql::SqlContext;

use crate::common::{rows_of, split};

const ROWS: i64 = 200_000;

/// `k`: 40K integer keys with nulls; `s`: 25K string keys; `v`: distinct
/// floats; `w`: small integers.
fn table() -> RecordBatch {
    let k: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..ROWS).map(|i| (i % 97 != 0).then_some((i * 7919) % 40_000)),
    ));
    let s: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..ROWS).map(|i| format!("key-{:06}", (i * 31) % 25_000)),
    ));
    let v: ArrayRef = Arc::new(Float64Array::from_iter_values(
        (0..ROWS).map(|i| i as f64 * 0.5),
    ));
    let w: ArrayRef = Arc::new(Int64Array::from_iter_values((0..ROWS).map(|i| i % 13)));
    RecordBatch::try_from_iter([("k", k), ("s", s), ("v", v), ("w", w)]).unwrap()
}

/// 60K rows keyed `k`: keys past `t`'s range, null keys, and key 7 on
/// 3,000 rows (skew).
fn dimension() -> RecordBatch {
    let n = 60_000i64;
    let k: ArrayRef = Arc::new(Int64Array::from_iter((0..n).map(|i| match i {
        _ if i % 501 == 0 => None,
        _ if i < 3_000 => Some(7),
        _ => Some(i - 3_000 + 20_000),
    })));
    let x: ArrayRef = Arc::new(Int64Array::from_iter_values((0..n).map(|i| i % 17)));
    let name: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..n).map(|i| format!("name-{i}")),
    ));
    RecordBatch::try_from_iter([("k", k), ("x", x), ("name", name)]).unwrap()
}

/// A context with `t` and `d` in memory and `p` the same rows in Parquet, under
/// `limit` (`None`: no limit), spilling to `temp`.
fn context(limit: Option<&str>, dir: &Path, temp: &Path) -> SqlContext {
    let batch = table();
    let parquet = dir.join("p.parquet");
    if !parquet.exists() {
        sloth::io::write_parquet(&parquet, &batch.schema(), &split(&batch, 20_000)).unwrap();
    }
    let mut config = SessionConfig::default().with_temp_dir(temp);
    if let Some(limit) = limit {
        config.set("memory_limit", limit).unwrap();
    }
    let mut ctx = SqlContext::new().with_config(config);
    let t = LazyFrame::from_batches(split(&batch, 10_000)).unwrap();
    ctx.register("t", t);
    ctx.register(
        "d",
        LazyFrame::from_batches(split(&dimension(), 7_000)).unwrap(),
    );
    ctx.register_file("p", &parquet).unwrap();
    ctx
}

/// An unlimited context and one under a limit, over the same tables, and
/// the directories they read from and spill to.
struct Contexts {
    free: SqlContext,
    tight: SqlContext,
    temp: tempfile::TempDir,
    /// Kept alive while the contexts read from it.
    _data: tempfile::TempDir,
}

fn contexts(limit: &str) -> Contexts {
    let data = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    Contexts {
        free: context(None, data.path(), temp.path()),
        tight: context(Some(limit), data.path(), temp.path()),
        temp,
        _data: data,
    }
}

fn run(ctx: &SqlContext, sql: &str) -> Vec<String> {
    rows_of(&ctx.sql(sql).unwrap().collect().unwrap())
}

fn sorted(mut rows: Vec<String>) -> Vec<String> {
    rows.sort();
    rows
}

/// `sql` gives the same rows (in any order) under the tight limit as
/// without one and as the row-wise executor (an independent reference);
/// returns how many.
fn assert_agrees(free: &SqlContext, tight: &SqlContext, sql: &str) -> usize {
    let expected = sorted(run(free, sql));
    assert_eq!(sorted(run(tight, sql)), expected, "{sql}");
    let plan = free.sql(sql).unwrap().physical_plan().unwrap();
    let (batches, _) = sloth::exec::rowwise::execute_rowwise(&plan).unwrap();
    let rowwise = DataFrame::new(plan.schema(), batches);
    assert_eq!(sorted(rows_of(&rowwise)), expected, "{sql}: row-wise");
    expected.len()
}

/// The error `sql` fails with under `ctx`: the memory limit's, on one
/// line.
fn limit_error(ctx: &SqlContext, sql: &str) -> String {
    let e = ctx.sql(sql).unwrap().collect().unwrap_err();
    assert!(matches!(e, SlothError::MemoryLimit(_)), "{sql}: {e}");
    let text = e.to_string();
    assert!(!text.contains('\n'), "{sql}: {text}");
    text
}

/// `sql`'s profile under `tight` shows spill files, and the temp
/// directory `temp` is empty afterwards.
fn assert_spills_and_cleans_up(tight: &SqlContext, sql: &str, temp: &Path) {
    let profile = tight.sql(sql).unwrap().profile().unwrap();
    assert!(!profile.contains("nothing spilled"), "{sql}: {profile}");
    assert_eq!(std::fs::read_dir(temp).unwrap().count(), 0, "{sql}");
}

const GROUP_BYS: &[&str] = &[
    "select k, count(*), sum(v), min(s), max(w), count(distinct w) from t group by k",
    "select s, avg(v), count(k), first(w) from t group by s",
    "select k, s, sum(w) from p where w < 11 group by k, s",
    "select w, count(distinct s), sum(v) from p group by w",
];

#[test]
fn aggregates_that_outgrow_the_limit_spill_and_agree() {
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let free = context(None, dir.path(), temp.path());
    let tight = context(Some("1MiB"), dir.path(), temp.path());
    for sql in GROUP_BYS {
        assert!(assert_agrees(&free, &tight, sql) > 10, "{sql}");
    }
    let profile = tight.sql(GROUP_BYS[0]).unwrap().profile().unwrap();
    assert!(profile.contains("spilled"), "{profile}");
    assert!(!profile.contains("nothing spilled"), "{profile}");
    assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0);
}

#[test]
fn aggregate_states_that_grow_with_their_values_count_against_the_limit() {
    // Thirteen groups, each holding thousands of values: little for the
    // group tables, megabytes for the states that keep values, which
    // spill only because those are counted.
    let Contexts {
        free, tight, temp, ..
    } = contexts("12MiB");
    for sql in [
        "select w, string_agg(s, ',' order by v) as all_s, median(v), first(s) from t group by w",
        "select w, string_agg(cast(k as varchar), ';' order by v) as ks, max(s), median(k) from t group by w",
    ] {
        assert_eq!(assert_agrees(&free, &tight, sql), 13, "{sql}");
        assert_spills_and_cleans_up(&tight, sql, temp.path());
    }
}

const JOINS: &[&str] = &[
    "select t.k, t.w, d.name from t join d on t.k = d.k",
    "select t.v, d.name from t left join d on t.k = d.k and t.w < d.x",
    "select t.v, d.name, d.k from t right join d on t.k = d.k",
    "select t.v, d.name from t full join d on t.k = d.k and d.x > 3",
    "select k, v from t where exists (select 1 from d where d.k = t.k and d.x = 2)",
    "select k, v from t where not exists (select 1 from d where d.k = t.k)",
    "select p.k, p.s, d.x from p join d on p.k = d.k where p.w < 6",
    "select p.v, d.name from p left join d on p.k = d.k",
];

#[test]
fn joins_whose_build_side_outgrows_the_limit_partition_to_disk() {
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let free = context(None, dir.path(), temp.path());
    let tight = context(Some("1MiB"), dir.path(), temp.path());
    let (mut spilled, mut from_scans) = (0, 0);
    for sql in JOINS {
        assert!(assert_agrees(&free, &tight, sql) > 100, "{sql}");
        let profile = tight.sql(sql).unwrap().profile().unwrap();
        spilled += usize::from(!profile.contains("nothing spilled"));
        from_scans += usize::from(profile.contains("partitioned to disk from their scans"));
    }
    // Those whose build side is all of `d` (the others build on few rows).
    assert!(spilled >= 6, "{spilled} of the joins spilled");
    // Where both sides are scans and the build scan is expected to exceed
    // the limit, neither is read into memory before partitioning.
    assert!(
        from_scans >= 1,
        "{from_scans} joins went to disk from their scans"
    );
    assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0);
}

#[test]
fn sorts_that_outgrow_the_limit_merge_spilled_runs() {
    let Contexts {
        free,
        tight,
        temp,
        _data,
    } = contexts("2MiB");
    for sql in [
        "select s, v, k from t order by s desc, v",
        "select k, w, v from p where w > 2 order by k nulls first, v desc",
        "select s, v from t order by v desc limit 5000",
    ] {
        let expected = run(&free, sql);
        assert_eq!(run(&tight, sql), expected, "{sql}");
    }
    assert_spills_and_cleans_up(&tight, "select s, v from t order by s, v", temp.path());
}

#[test]
fn windows_that_outgrow_the_limit_run_partition_by_partition_from_disk() {
    let Contexts {
        free,
        tight,
        temp,
        _data,
    } = contexts("1MiB");
    for sql in [
        "select k, v, row_number() over (partition by k order by v desc) as r from t",
        "select s, w, sum(v) over (partition by s order by w, v rows between 2 preceding and current row) as m from t",
        "select k, s, rank() over (partition by k, w order by s) as r, count(*) over (partition by k, w) as n from p",
        "select k, lag(v) over (partition by s order by v) as l from t where w < 7",
    ] {
        assert!(assert_agrees(&free, &tight, sql) > 10_000, "{sql}");
    }
    assert_spills_and_cleans_up(
        &tight,
        "select k, sum(v) over (partition by k order by v) from t",
        temp.path(),
    );
    // One partition cannot be split: past the limit it is the limit's
    // one-line error naming the window, not a footprint past the limit.
    let sql = "select k, row_number() over (order by v) as r from t";
    let text = limit_error(&tight, sql);
    assert!(
        text.contains("window needs") && text.contains("without PARTITION BY"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0);
}

#[test]
fn a_filtered_rewrite_streams_and_a_sorted_one_spills() {
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let tight = context(Some("2MiB"), dir.path(), temp.path());
    let free = context(None, dir.path(), temp.path());
    for (sql, name) in [
        (
            "select k, s, v * 2 as v2 from p where w <> 3",
            "filtered.parquet",
        ),
        ("select s, v from p order by s, v desc", "sorted.parquet"),
    ] {
        let out = dir.path().join(name);
        let written = tight
            .sql(sql)
            .unwrap()
            .sink(&out, sloth::io::FileFormat::Parquet)
            .unwrap();
        let back = LazyFrame::scan_parquet(&out).unwrap().collect().unwrap();
        let expected = run(&free, sql);
        assert_eq!(written, expected.len());
        assert_eq!(rows_of(&back), expected, "{sql}");
    }
    assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0);
}

#[test]
fn limits_and_temp_dirs_that_cannot_work_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    // A limit below one row of a sort.
    let ctx = context(Some("10B"), dir.path(), temp.path());
    let text = limit_error(&ctx, "select * from t order by s");
    assert!(text.contains("sort needs"), "{text}");
    // A temp directory under a file.
    let blocked = dir.path().join("plain-file");
    std::fs::write(&blocked, "x").unwrap();
    let mut ctx = context(Some("1MiB"), dir.path(), temp.path());
    ctx.config_mut()
        .set("temp_dir", blocked.to_str().unwrap())
        .unwrap();
    let e = ctx
        .sql(GROUP_BYS[0])
        .unwrap()
        .collect()
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot spill to temp directory"), "{e}");
}

#[test]
fn a_cross_join_within_the_limit_agrees_and_one_past_it_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let free = context(None, dir.path(), temp.path());
    let tight = context(Some("8MiB"), dir.path(), temp.path());
    // 60K × 3 pairs: batched output, within 8 MiB.
    let small = "select d.k, d.name, x.w from d cross join (select w from t where v < 1.5) as x";
    assert_eq!(assert_agrees(&free, &tight, small), 180_000);
    // 200K × 200K pairs: refused before any is made. (A bare `count(*)`
    // would form no pairs: the cross_join_count rule multiplies counts.)
    let e = tight
        .sql("select max(a.v + b.v) from t as a cross join t as b")
        .unwrap()
        .collect()
        .unwrap_err();
    assert!(matches!(e, SlothError::MemoryLimit(_)), "{e}");
    assert!(e.to_string().contains("cross join"), "{e}");
}

/// An aggregate over a join whose build side outgrows the limit joins the
/// partitions the join wrote to disk one pair at a time as it reads them,
/// never holding the join's output whole: every join kind agrees with the
/// unlimited run (and the row-wise executor), the profile says so where
/// both sides are scans, and the temp directory is empty afterwards.
#[test]
fn aggregates_over_joins_from_disk_join_each_pair_of_partitions_as_they_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let free = context(None, dir.path(), temp.path());
    let tight = context(Some("1MiB"), dir.path(), temp.path());
    let mut read_back = 0;
    let grouped =
        "select d.x, count(*), sum(t.v), min(t.w) from t join d on t.k = d.k group by d.x";
    let counted: Vec<String> = (JOINS.iter())
        .map(|sql| format!("select count(*) from ({sql}) j"))
        .collect();
    for sql in counted.iter().map(String::as_str).chain([grouped]) {
        assert!(assert_agrees(&free, &tight, sql) >= 1, "{sql}");
        let profile = tight.sql(sql).unwrap().profile().unwrap();
        read_back += usize::from(profile.contains("joined as the consumer reads them"));
    }
    assert!(
        read_back >= 1,
        "{read_back} aggregates read a join back from disk"
    );
    assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0);
}

/// A sort or top-k over a join reads the join as its probe side's morsels
/// and never holds the join's output: a top-k keeps each thread's first
/// rows (under a limit that refuses a whole run, cut at every batch), a
/// full sort spills runs; both agree with the unlimited run row for row and with
/// the row-wise executor.
#[test]
fn sorts_over_joins_stream_the_join_and_top_k_holds_only_its_first_rows() {
    let Contexts {
        free,
        tight,
        temp,
        _data,
    } = contexts("2MiB");
    let top = "select p.k, p.s, d.name, p.v from p join d on p.k = d.k \
               order by p.v desc, d.name limit 7";
    let sorted_join = "select p.v, d.name from p join d on p.k = d.k where p.w < 9 \
                       order by d.name, p.v";
    for sql in [top, sorted_join] {
        let expected = run(&free, sql);
        assert_eq!(run(&tight, sql), expected, "{sql}");
        assert!(assert_agrees(&free, &tight, sql) >= 7, "{sql}");
        let profile = free.sql(sql).unwrap().profile().unwrap();
        assert!(profile.contains("input streamed"), "{sql}: {profile}");
        assert!(
            profile.contains("morsels, fused into parent"),
            "{sql}: {profile}"
        );
    }
    assert_spills_and_cleans_up(&tight, sorted_join, temp.path());
}

/// A top-k whose first key is a scan column bounds the scan by it: row
/// groups whose statistics sort after the threads' `k`-th rows are never
/// decoded, and rows past it are dropped as they come. The rows, in
/// order, equal the row-wise executor's, in both directions, with nulls
/// first and last, on numbers and strings, with a filter, and through
/// joins that emit only probe rows (and not through those that do not).
#[test]
fn a_top_k_over_a_scan_or_its_joins_skips_row_groups_past_its_bound_and_agrees() {
    let Contexts {
        mut free,
        mut tight,
        temp: _temp,
        _data,
    } = contexts("2MiB");
    // `p` again, in row groups of 10K rows.
    let r = _data.path().join("r.parquet");
    let copy = format!(
        "copy (select * from p) to '{}' (FORMAT parquet, ROW_GROUP_SIZE 10000)",
        r.display()
    );
    free.execute_mut(&copy).unwrap();
    for ctx in [&mut free, &mut tight] {
        ctx.register_file("r", &r).unwrap();
    }
    let mut skipped = 0;
    // A join passes the bound on to its probe side's scan where every row
    // it emits is a probe row's: not where it emits unmatched build rows.
    let bounded = [
        "select k, v from r order by v desc limit 10",
        "select k, v from r order by v limit 7",
        "select k, v from r order by k desc, v limit 25",
        "select k, v from r order by k nulls last, v desc limit 25",
        "select k, s, v from r where w < 5 order by k nulls first, v limit 30",
        "select s, v from r order by s desc, v limit 12",
        "select v, w from r order by w, v desc limit 3",
        "select r.k, r.v, d.name from r join d on r.k = d.k order by r.v desc, d.name limit 9",
        "select r.v, d.name from r left join d on r.k = d.k order by r.v, d.name limit 9",
        "select r.v, r.w from r where not exists (select 1 from d where d.k = r.k) \
         order by r.v desc, r.w limit 9",
    ];
    let unbounded = [
        "select r.v, d.name from r right join d on r.k = d.k order by r.v desc, d.name limit 9",
        "select r.v, d.name from r full join d on r.k = d.k order by r.v, d.name limit 9",
    ];
    for sql in bounded.iter().chain(&unbounded) {
        let plan = free.sql(sql).unwrap().physical_plan().unwrap();
        let (batches, _) = sloth::exec::rowwise::execute_rowwise(&plan).unwrap();
        let expected = rows_of(&DataFrame::new(plan.schema(), batches));
        assert_eq!(run(&free, sql), expected, "{sql}");
        assert_eq!(run(&tight, sql), expected, "{sql}");
        let profile = free.sql(sql).unwrap().profile().unwrap();
        let note = "their first key's bound skipped ";
        let Some(at) = profile.find(note) else {
            assert!(unbounded.contains(sql), "{sql}: {profile}");
            continue;
        };
        assert!(bounded.contains(sql), "{sql}: {profile}");
        let count = &profile[at + note.len()..];
        skipped += count[..count.find(' ').unwrap()].parse::<usize>().unwrap();
    }
    // `v` grows with the row number: its top rows lie in one row group.
    assert!(skipped >= 16, "{skipped} row groups skipped");
}
