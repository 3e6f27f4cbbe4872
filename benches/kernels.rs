//! Criterion benchmarks of expression evaluation: a TPC-H Q1 style decimal
//! expression and a float expression, fused (one chunked loop) against
//! operator by operator (one Arrow kernel and one array per operator);
//! and of the join kernels a probe batch goes through: packing two integer
//! keys into one by the build's ranges, and the Bloom filter check (TPC-H
//! Q9's shape: 42K build keys, about 5% of probe rows match); and of
//! finding group ids: a batch of string keys against a table of 100K groups
//! (db-benchmark q3's shape, past the L2 cache: the probes prefetch), and a
//! batch of six keys too wide to pack into 16 bytes (q10's shape), encoded
//! into fixed-width rows, inserted, and decoded back into columns.
//!
//! Run: `cargo bench --bench kernels`.

use std::sync::Arc;

use arrow::array::{ArrayRef, Decimal128Array, Float64Array, RecordBatch};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sloth::expr::{Expr, ScalarValue, col, lit};
use sloth::physical_expr::PhysicalExpr;
use sloth::physical_expr::eval::evaluate_array;

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

fn bench_group_ids(c: &mut Criterion) {
    use arrow::array::{Int64Array, StringViewArray};
    use arrow::datatypes::DataType;
    use sloth::kernels::hash_table::{GroupTable, KeyEncoder};
    use sloth::kernels::packed_keys::NullKeys;

    let ids = |n: usize, of: usize, width: usize| -> ArrayRef {
        Arc::new(StringViewArray::from_iter_values(
            (0..n).map(|i| format!("id{:0width$}", (i * 7919) % of + 1)),
        ))
    };
    let ints = |n: usize, of: usize| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(
            (0..n).map(|i| ((i * 104_729) % of) as i64),
        ))
    };
    let mut g = c.benchmark_group("group_ids");
    g.throughput(Throughput::Elements(PROBE_ROWS as u64));

    // 100K groups already in the table; every probe row finds its group.
    let all = [ids(100_000, 100_000, 10)];
    let probe = [ids(PROBE_ROWS, 100_000, 10)];
    let enc = KeyEncoder::new(&[DataType::Utf8View], NullKeys::Group).unwrap();
    let (mut hashes, mut groups) = (Vec::new(), Vec::new());
    let mut table = GroupTable::new(&enc);
    let kb = enc.encode(&all, &mut hashes).unwrap();
    table.insert_batch(&enc, &kb, &hashes, &mut groups).unwrap();
    let kb = enc.encode(&probe, &mut hashes).unwrap();
    g.bench_function("packed_string_100k_groups", |bn| {
        bn.iter(|| {
            groups.clear();
            table.insert_batch(&enc, &kb, &hashes, &mut groups).unwrap();
            groups.len()
        })
    });

    // Six keys (q10): nearly every row a new group of a fresh table.
    let n = PROBE_ROWS;
    let keys = [
        ids(n, 100, 3),
        ids(n, 97, 3),
        ids(n, 100_000, 10),
        ints(n, 100),
        ints(n, 101),
        ints(n, 100_003),
    ];
    let types: Vec<DataType> = keys.iter().map(|k| k.data_type().clone()).collect();
    let enc = KeyEncoder::new(&types, NullKeys::Group).unwrap();
    g.bench_function("wide_six_keys_encode_insert", |bn| {
        bn.iter(|| {
            let kb = enc.encode(&keys, &mut hashes).unwrap();
            let mut table = GroupTable::new(&enc);
            groups.clear();
            table.insert_batch(&enc, &kb, &hashes, &mut groups).unwrap();
            table.len()
        })
    });
    let kb = enc.encode(&keys, &mut hashes).unwrap();
    let mut table = GroupTable::new(&enc);
    table.insert_batch(&enc, &kb, &hashes, &mut groups).unwrap();
    assert!(!table.is_rows(), "six short keys take fixed-width rows");
    g.bench_function("wide_six_keys_decode", |bn| {
        bn.iter(|| table.key_columns(&enc, &types).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench, bench_join_kernels, bench_group_ids);
criterion_main!(benches);
