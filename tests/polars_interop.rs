//! sloth ↔ Polars (feature `polars`): every type sloth supports survives
//! `to_polars` and `from_polars`, nulls, empty and chunked frames included,
//! and fixed-width columns cross without a copy.

use std::sync::Arc;

use arrow::array::*;
use arrow::compute::{cast, concat};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow::record_batch::RecordBatch;
use polars_core::prelude::DataType as PolarsType;
use proptest::prelude::*;
use sloth::prelude::*;

/// The column types of the round trips, one column each.
fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("i8", DataType::Int8, true),
        Field::new("i16", DataType::Int16, true),
        Field::new("i32", DataType::Int32, true),
        Field::new("i64", DataType::Int64, true),
        Field::new("u8", DataType::UInt8, true),
        Field::new("u32", DataType::UInt32, true),
        Field::new("u64", DataType::UInt64, true),
        Field::new("f32", DataType::Float32, true),
        Field::new("f64", DataType::Float64, true),
        Field::new("b", DataType::Boolean, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("sv", DataType::Utf8View, true),
        Field::new("d", DataType::Date32, true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("dec", DataType::Decimal128(12, 2), true),
    ]))
}

/// One batch of `values` (a null where `None`), every column derived
/// from the same numbers.
fn batch(values: &[Option<i64>]) -> RecordBatch {
    let v = |f: fn(i64) -> i64| values.iter().map(move |x| x.map(f));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int8Array::from_iter(
            v(|x| x % 100).map(|x| x.map(|x| x as i8)),
        )),
        Arc::new(Int16Array::from_iter(
            v(|x| x % 30_000).map(|x| x.map(|x| x as i16)),
        )),
        Arc::new(Int32Array::from_iter(
            v(|x| x % 2_000_000_000).map(|x| x.map(|x| x as i32)),
        )),
        Arc::new(Int64Array::from_iter(v(|x| x))),
        Arc::new(UInt8Array::from_iter(
            v(|x| x.rem_euclid(256)).map(|x| x.map(|x| x as u8)),
        )),
        Arc::new(UInt32Array::from_iter(
            v(|x| x.rem_euclid(1 << 32)).map(|x| x.map(|x| x as u32)),
        )),
        Arc::new(UInt64Array::from_iter(
            v(|x| x.unsigned_abs() as i64).map(|x| x.map(|x| x as u64)),
        )),
        Arc::new(Float32Array::from_iter(
            v(|x| x).map(|x| x.map(|x| x as f32 / 8.0)),
        )),
        Arc::new(Float64Array::from_iter(
            v(|x| x).map(|x| x.map(|x| x as f64 * 0.25)),
        )),
        Arc::new(BooleanArray::from_iter(
            v(|x| x % 2).map(|x| x.map(|x| x == 0)),
        )),
        Arc::new(StringArray::from_iter(
            v(|x| x).map(|x| x.map(|x| format!("s{x}"))),
        )),
        Arc::new(StringViewArray::from_iter(v(|x| x).map(|x| {
            x.map(|x| format!("a longer string than twelve bytes {x}"))
        }))),
        Arc::new(Date32Array::from_iter(
            v(|x| x % 100_000).map(|x| x.map(|x| x as i32)),
        )),
        Arc::new(TimestampMicrosecondArray::from_iter(v(|x| {
            x % 1_000_000_000_000_000
        }))),
        Arc::new(
            Decimal128Array::from_iter(v(|x| x % 1_000_000_000).map(|x| x.map(i128::from)))
                .with_precision_and_scale(12, 2)
                .unwrap(),
        ),
    ];
    RecordBatch::try_new(schema(), columns).unwrap()
}

/// `df`'s column `i` as one array of the type `schema()` gives it.
fn column(df: &DataFrame, i: usize) -> ArrayRef {
    let wanted = schema().field(i).data_type().clone();
    let parts: Vec<ArrayRef> = df
        .batches()
        .iter()
        .map(|b| cast(b.column(i), &wanted).unwrap())
        .collect();
    match parts.is_empty() {
        true => new_empty_array(&wanted),
        false => concat(&parts.iter().map(|a| a.as_ref()).collect::<Vec<_>>()).unwrap(),
    }
}

fn assert_round_trip(df: &DataFrame) {
    let polars = df.to_polars().unwrap();
    assert_eq!(polars.height(), df.num_rows());
    assert_eq!(polars.width(), schema().fields().len());
    let back = DataFrame::from_polars(&polars).unwrap();
    assert_eq!(back.num_rows(), df.num_rows());
    for (i, field) in schema().fields().iter().enumerate() {
        assert_eq!(back.schema().field(i).name(), field.name());
        assert_eq!(
            column(&back, i).to_data(),
            column(df, i).to_data(),
            "{}",
            field.name()
        );
    }
}

#[test]
fn polars_sees_each_type_as_its_own() {
    let df = DataFrame::new(schema(), vec![batch(&[Some(1), None, Some(-3)])]);
    let polars = df.to_polars().unwrap();
    let dtype = |name: &str| polars.column(name).unwrap().dtype().clone();
    assert_eq!(dtype("i8"), PolarsType::Int8);
    assert_eq!(dtype("u64"), PolarsType::UInt64);
    assert_eq!(dtype("s"), PolarsType::String);
    assert_eq!(dtype("sv"), PolarsType::String);
    assert_eq!(dtype("d"), PolarsType::Date);
    assert!(matches!(dtype("ts"), PolarsType::Datetime(..)));
    assert!(matches!(dtype("dec"), PolarsType::Decimal(..)));
    assert_eq!(polars.column("i64").unwrap().null_count(), 1);
}

#[test]
fn fixed_width_columns_are_shared_not_copied() {
    let df = DataFrame::new(schema(), vec![batch(&[Some(1), Some(2), None])]);
    let back = DataFrame::from_polars(&df.to_polars().unwrap()).unwrap();
    for name in ["i64", "f64", "d", "dec"] {
        let i = schema().index_of(name).unwrap();
        let before = df.batches()[0].column(i).to_data().buffers()[0].as_ptr();
        let after = back.batches()[0].column(i).to_data().buffers()[0].as_ptr();
        assert_eq!(before, after, "{name} was copied");
    }
}

#[test]
fn empty_frames_keep_their_types() {
    assert_round_trip(&DataFrame::new(schema(), vec![]));
    assert_round_trip(&DataFrame::new(schema(), vec![batch(&[])]));
}

#[test]
fn a_polars_frame_is_queried_lazily() {
    let df = DataFrame::new(schema(), vec![batch(&[Some(5), Some(6), None, Some(7)])]);
    let polars = df.to_polars().unwrap();
    let out = LazyFrame::from_polars(&polars)
        .unwrap()
        .filter(col("i64").gt(lit(5)))
        .select([col("i64").sum().alias("s")])
        .collect()
        .unwrap();
    let s = out.column("s").unwrap();
    assert_eq!(
        s.as_any().downcast_ref::<Int64Array>().unwrap().value(0),
        13
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random values with nulls, cut into random batches.
    #[test]
    fn every_type_round_trips(
        values in prop::collection::vec(prop::option::weighted(0.8, any::<i64>()), 0..200),
        cuts in prop::collection::vec(0usize..200, 0..4),
    ) {
        let mut bounds: Vec<usize> = cuts.into_iter().map(|c| c % (values.len() + 1)).collect();
        bounds.extend([0, values.len()]);
        bounds.sort_unstable();
        let batches = bounds.windows(2).map(|w| batch(&values[w[0]..w[1]])).collect();
        assert_round_trip(&DataFrame::new(schema(), batches));
    }
}

#[test]
fn columns_chunked_differently_are_concatenated() {
    let values: Vec<Option<i64>> = (0..10).map(|i| (i % 4 != 0).then_some(i)).collect();
    let whole = DataFrame::new(schema(), vec![batch(&values)]);
    let cut = DataFrame::new(schema(), vec![batch(&values[..3]), batch(&values[3..])]);
    let one_chunk = whole.to_polars().unwrap().column("i64").unwrap().clone();
    let two_chunks = cut.to_polars().unwrap().column("f64").unwrap().clone();
    let mixed = polars_core::frame::DataFrame::new(10, vec![one_chunk, two_chunks]).unwrap();
    let back = DataFrame::from_polars(&mixed).unwrap();
    assert_eq!(back.batches().len(), 1);
    assert_eq!(
        back.column("i64").unwrap().to_data(),
        column(&whole, 3).to_data()
    );
    assert_eq!(
        back.column("f64").unwrap().to_data(),
        column(&whole, 8).to_data()
    );
}
