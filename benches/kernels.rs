//! Criterion benchmarks of expression evaluation: a TPC-H Q1 style decimal
//! expression and a float expression, fused (one chunked loop) against
//! operator by operator (one Arrow kernel and one array per operator);
//! and of the join kernels a probe batch goes through: packing two integer
//! keys into one by the build's ranges, and the Bloom filter check (TPC-H
//! Q9's shape: 42K build keys, about 5% of probe rows match).
//!
//! Run: `cargo bench --bench kernels`.

use std::sync::Arc;

use arrow::array::{ArrayRef, Decimal128Array, Float64Array, RecordBatch};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sloth::expr::{Expr, ScalarValue, col, lit};
use sloth::kernels::eval::evaluate_array;
use sloth::physical::expr::PhysicalExpr;

const ROWS: usize = 8192;

fn batch() -> RecordBatch {
    let dec = |f: fn(usize) -> i128| -> ArrayRef {
        Arc::new(
            Decimal128Array::from_iter_values((0..ROWS).map(f))
                .with_precision_and_scale(15, 2)
                .unwrap(),
        )
    };
    let x: ArrayRef = Arc::new(Float64Array::from_iter_values(
        (0..ROWS).map(|i| i as f64 * 0.25),
    ));
    RecordBatch::try_from_iter([
        ("price", dec(|i| 90_000 + i as i128 * 7)),
        ("disc", dec(|i| (i % 11) as i128)),
        ("tax", dec(|i| (i % 9) as i128)),
        ("x", x),
        (
            "n",
            Arc::new(arrow::array::Int64Array::from_iter_values(
                (0..ROWS as i64).map(|i| i % 1000),
            )) as ArrayRef,
        ),
    ])
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let b = batch();
    let one = || Expr::Literal(ScalarValue::Decimal128(Some(100), 15, 2));
    let cases = [
        (
            "decimal_price_disc_tax",
            col("price") * (one() - col("disc")) * (one() + col("tax")),
        ),
        ("decimal_price_disc", col("price") * col("disc")),
        (
            "int_poly",
            col("n") * (lit(3i64) - col("n")) + col("n") * lit(2i64),
        ),
        (
            "float_poly",
            col("x") * (lit(1.5f64) - col("x")) + col("x") * lit(2.0f64),
        ),
    ];
    let mut g = c.benchmark_group("expr");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, e) in cases {
        let fused = PhysicalExpr::compile(&e, &b.schema()).unwrap();
        let plain = fused.unfuse();
        g.bench_function(format!("{name}_fused"), |bn| {
            bn.iter(|| evaluate_array(&fused, &b).unwrap())
        });
        g.bench_function(format!("{name}_unfused"), |bn| {
            bn.iter(|| evaluate_array(&plain, &b).unwrap())
        });
    }
    g.finish();
}

/// A probe batch's worth of rows.
const PROBE_ROWS: usize = 64 * 1024;

fn bench_join_kernels(c: &mut Criterion) {
    use sloth::kernels::bloom::BloomFilter;
    use sloth::kernels::hash_table::hash_i64;
    use sloth::kernels::range_keys::RangeLayout;

    let build_keys = 42_000i64;
    let build: Vec<u64> = (0..build_keys).map(|k| hash_i64(k * 20)).collect();
    let filter = BloomFilter::new(build.len(), build.iter().copied());
    let probe: Vec<u64> = (0..PROBE_ROWS as i64).map(hash_i64).collect();
    let int_column = |f: fn(i64) -> i64, n: i64| -> ArrayRef {
        Arc::new(arrow::array::Int64Array::from_iter_values((0..n).map(f)))
    };
    let build_cols = [
        int_column(|i| i * 5, 800_000),
        int_column(|i| i % 10_000, 800_000),
    ];
    let layout = RangeLayout::for_build(&build_cols).unwrap().expect("packs");
    let probe_cols = [
        int_column(|i| (i * 7919) % 200_000, PROBE_ROWS as i64),
        int_column(|i| i % 10_000, PROBE_ROWS as i64),
    ];
    let mut g = c.benchmark_group("join");
    g.throughput(Throughput::Elements(PROBE_ROWS as u64));
    let mut out = Vec::new();
    g.bench_function("bloom_candidates_5pct_pass", |bn| {
        bn.iter(|| {
            filter.candidates(&probe, &mut out);
            out.len()
        })
    });
    g.bench_function("range_keys_encode_two_i64", |bn| {
        bn.iter(|| layout.encode(&probe_cols).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench, bench_join_kernels);
criterion_main!(benches);
