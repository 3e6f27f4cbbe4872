//! A [`CancelToken`] stops a running query from another thread: the query
//! fails with `SlothError::Cancelled` soon after, leaves no spill file, and
//! the token's frame runs again once a fresh token is given.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Float64Array, Int64Array};
use arrow::record_batch::RecordBatch;
use sloth::prelude::*;

use crate::common::split;

/// 4M rows in batches of 10K, grouped by 1M distinct keys: seconds of work
/// in a test build, checked for cancellation between batches.
fn long_query(config: SessionConfig) -> LazyFrame {
    let rows = 4_000_000i64;
    let k: ArrayRef = Arc::new(Int64Array::from_iter_values(
        (0..rows).map(|i| (i * 7919) % 1_000_003),
    ));
    let v: ArrayRef = Arc::new(Float64Array::from_iter_values((0..rows).map(|i| i as f64)));
    let batch = RecordBatch::try_from_iter([("k", k), ("v", v)]).unwrap();
    LazyFrame::from_batches(split(&batch, 10_000))
        .unwrap()
        .with_config(config)
        .group_by([col("k")])
        .agg([col("v").sum().alias("s")])
}

/// Runs `query` with a token thrown after `after`; returns the result and
/// how long after the throw the query ended.
fn cancelled_after(query: LazyFrame, after: Duration) -> (Result<DataFrame>, Duration) {
    let cancel = CancelToken::new();
    let query = query.with_cancel(cancel.clone());
    std::thread::scope(|scope| {
        let run = scope.spawn(move || query.collect());
        std::thread::sleep(after);
        cancel.cancel();
        let thrown = Instant::now();
        let result = run.join().unwrap();
        (result, thrown.elapsed())
    })
}

#[test]
fn a_cancelled_query_stops_soon_with_a_cancelled_error() {
    let (result, stopping) = cancelled_after(
        long_query(SessionConfig::default()),
        Duration::from_millis(50),
    );
    assert!(
        matches!(result, Err(SlothError::Cancelled)),
        "{:?}",
        result.map(|d| d.num_rows())
    );
    assert!(
        stopping < Duration::from_secs(2),
        "took {stopping:?} to stop"
    );
    assert_eq!(SlothError::Cancelled.to_string(), "query cancelled");
}

#[test]
fn a_cancelled_spilling_query_leaves_no_spill_file() {
    let temp = tempfile::tempdir().unwrap();
    let mut config = SessionConfig::default().with_temp_dir(temp.path());
    config.set("memory_limit", "4MiB").unwrap();
    let (result, _) = cancelled_after(long_query(config), Duration::from_millis(300));
    assert!(matches!(result, Err(SlothError::Cancelled)));
    let left: Vec<_> = std::fs::read_dir(temp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_token_not_thrown_changes_nothing() {
    let query = LazyFrame::from_batches(vec![
        RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![3, 1, 2])) as ArrayRef)])
            .unwrap(),
    ])
    .unwrap();
    let plain = query
        .sort(vec![col("x")], vec![false], false)
        .collect()
        .unwrap();
    let with_token = query
        .with_cancel(CancelToken::new())
        .sort(vec![col("x")], vec![false], false)
        .collect()
        .unwrap();
    assert_eq!(plain.to_batch().unwrap(), with_token.to_batch().unwrap());
}
