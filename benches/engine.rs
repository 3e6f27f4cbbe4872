//! Criterion benchmarks of the core operators on 10M rows of db-benchmark data:
//! filter, hash group-by (low and high cardinality), hash joins (all keys
//! found, few found, two keys), and Parquet scans (every row, and a filter
//! keeping 2% scattered rows).
//!
//! Run: `cargo bench --bench engine` (set `SLOTH_BENCH_ROWS` to change the
//! size). `SLOTH_PARQUET_DECODER=arrow cargo bench --bench engine -- parquet`
//! times the scans with the arrow-rs reader instead of sloth's decoder.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sloth::datagen::{h2o_groupby, h2o_join};
use sloth::prelude::*;

fn rows() -> usize {
    std::env::var("SLOTH_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000)
}

fn bench(c: &mut Criterion) {
    let n = rows();
    let x = LazyFrame::from_batches(h2o_groupby(n, 100).unwrap()).unwrap();
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("filter_int_and_float", |b| {
        b.iter(|| {
            x.filter(col("v1").gt(lit(2)).and(col("v3").lt(lit(50.0))))
                .select([col("id4"), col("v3")])
                .collect()
                .unwrap()
        })
    });
    g.bench_function("groupby_int_key_low_card_sum", |b| {
        b.iter(|| {
            x.group_by([col("id4")])
                .agg([col("v1").sum()])
                .collect()
                .unwrap()
        })
    });
    g.bench_function("groupby_string_key_low_card_sum", |b| {
        b.iter(|| {
            x.group_by([col("id1")])
                .agg([col("v1").sum()])
                .collect()
                .unwrap()
        })
    });
    g.bench_function("groupby_int_key_high_card_sum_mean", |b| {
        b.iter(|| {
            x.group_by([col("id6")])
                .agg([col("v1").sum(), col("v3").mean()])
                .collect()
                .unwrap()
        })
    });
    drop(x);
    let tables = h2o_join(n).unwrap();
    let get = |name: &str| {
        LazyFrame::from_batches(tables.iter().find(|(t, _)| *t == name).unwrap().1.clone()).unwrap()
    };
    let (xj, medium) = (get("x"), get("medium"));
    g.bench_function("join_inner_int_key_medium", |b| {
        b.iter(|| {
            xj.join(&medium, [col("id2")], [col("id2")], JoinType::Inner)
                .collect()
                .unwrap()
        })
    });
    // Most probe rows miss (the build keeps 1 key in 20): the shape the
    // join's Bloom filter is for.
    let selective = medium.filter((col("id2") % lit(20i64)).eq(lit(0i64)));
    g.bench_function("join_inner_int_key_selective", |b| {
        b.iter(|| {
            xj.join(&selective, [col("id2")], [col("id2")], JoinType::Inner)
                .collect()
                .unwrap()
        })
    });
    // Two integer keys, packed into one by the build's ranges.
    g.bench_function("join_inner_two_int_keys_medium", |b| {
        b.iter(|| {
            xj.join(
                &medium,
                [col("id1"), col("id2")],
                [col("id1"), col("id2")],
                JoinType::Inner,
            )
            .collect()
            .unwrap()
        })
    });
    g.finish();
    bench_parquet(c, n);
}

/// Scans of the db-benchmark table written as Parquet by `sloth gen`'s
/// writer (zstd, dictionary pages, 128K-row row groups).
fn bench_parquet(c: &mut Criterion, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.parquet");
    let batches = h2o_groupby(n, 100).unwrap();
    sloth::io::write_parquet(&path, &batches[0].schema(), &batches).unwrap();
    let x = LazyFrame::scan_parquet(&path).unwrap();
    let mut g = c.benchmark_group("parquet");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("scan_ints_floats_strings", |b| {
        b.iter(|| {
            x.agg([
                col("id4").sum(),
                col("id6").sum(),
                col("v3").sum(),
                col("id1").n_unique(),
            ])
            .collect()
            .unwrap()
        })
    });
    // db-benchmark q1 on the file: rows find their group through the
    // dictionary codes of id1, one dictionary per row group.
    g.bench_function("groupby_dictionary_codes_sum", |b| {
        b.iter(|| {
            x.group_by([col("id1")])
                .agg([col("v1").sum()])
                .collect()
                .unwrap()
        })
    });
    // id6 is uniform over 1..n/100, so this keeps 2% of the rows, scattered.
    let cut = (n / 100 / 50) as i64;
    g.bench_function("scan_filter_two_percent", |b| {
        b.iter(|| {
            x.filter(col("id6").lt(lit(cut)))
                .agg([col("id4").sum(), col("v3").sum(), col("id1").n_unique()])
                .collect()
                .unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
