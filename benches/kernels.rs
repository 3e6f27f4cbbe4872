//! Criterion benchmarks of expression evaluation: a TPC-H Q1 style decimal
//! expression and a float expression, fused (one chunked loop) against
//! operator by operator (one Arrow kernel and one array per operator).
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

criterion_group!(benches, bench);
criterion_main!(benches);
