//! The build side's keys as a filter on the probe side's scan (sideways
//! information passing, DuckDB's "join filter pushdown").
//!
//! Once a hash join has built its table, the probe rows whose keys have no
//! match are known to be dropped (inner and semi joins, and any join that
//! keeps only the build side's unmatched rows). When the probe side streams
//! from a scan whose key columns come through unchanged, the join adds a
//! filter "key has a match" to that scan for this execution. The Parquet
//! reader then decodes the key columns first and the others only for the
//! rows that pass (`RowGroupUnit::read_with_own_decoder`), and the join
//! probes only those.
//!
//! ```text
//! before: HashJoin l_partkey = p_partkey            (42K build rows)
//!           Scan lineitem columns=[6 columns]        (decodes 6M rows x 6)
//! after:  HashJoin l_partkey = p_partkey
//!           Scan lineitem filters=[build_keys_match(#1, #2)]
//!                                                    (6M x 2, then 5% x 4)
//! ```
//!
//! The filter checks a key against the join's Bloom filter only (the table
//! itself where the build is too large to have one): one cache-resident
//! load per row, where a table lookup is a cache miss that the join would
//! then repeat for every row that passes. The ~1% false positives reach
//! the join, whose probe drops them. Where most rows pass, the check and
//! the narrowing cost more than they save, so after a trial the filter
//! stops checking and passes every row.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{ArrayRef, BooleanArray};
use arrow::buffer::BooleanBuffer;

use super::join_build::{BuildTable, NONE};
use crate::error::Result;
use crate::kernels::hash_table::{KeyBatch, KeyEncoder};
use crate::physical_expr::{Node, PhysicalExpr, RuntimeFilter};

/// A join's built keys: how probe keys are encoded and the table they are
/// looked up in. Shared by the join and the filter it pushes down.
pub struct BuildKeys {
    /// Encodes probe keys in the build side's form.
    pub encoder: KeyEncoder,
    /// Build rows chained per key.
    pub table: BuildTable,
}

impl BuildKeys {
    /// Probe keys (`keys`, evaluated) in the build's form, with their hashes.
    fn encode(&self, keys: &[ArrayRef]) -> Result<(KeyBatch, Vec<u64>)> {
        let mut hashes = Vec::new();
        let encoded = self
            .encoder
            .encode_to_probe(self.table.form(), keys, &mut hashes)?;
        Ok((encoded, hashes))
    }

    /// The first build row matching each probe row (`keys`, evaluated) into
    /// `out`, or [`NONE`]; `gated`: check the Bloom filter first.
    pub fn first_rows(&self, keys: &[ArrayRef], gated: bool, out: &mut Vec<u32>) -> Result<()> {
        let (encoded, hashes) = self.encode(keys)?;
        self.table.first_rows(&encoded, &hashes, gated, out);
        Ok(())
    }

    /// Which probe rows (`keys`, evaluated) may have a match: by the Bloom
    /// filter where the build has one (a few false positives pass, which
    /// the join's probe drops), else by the table.
    fn may_match(&self, keys: &[ArrayRef]) -> Result<BooleanBuffer> {
        let (encoded, hashes) = self.encode(keys)?;
        if let Some(mask) = self.table.bloom_mask(&hashes) {
            return Ok(mask);
        }
        let mut first = Vec::new();
        self.table.first_rows(&encoded, &hashes, false, &mut first);
        Ok(BooleanBuffer::collect_bool(first.len(), |i| {
            first[i] != NONE
        }))
    }
}

/// Rows checked before the pass rate decides whether checking goes on.
const TRIAL_ROWS: usize = 1 << 16;

/// Above this pass rate the filter stops checking: the scan decodes every
/// column whole anyway once its filters keep over half the rows
/// (`FILTER_FIRST_MAX_SELECTIVITY`), so the check would only add a probe.
const MAX_PASS: f64 = 0.5;

/// "The key has a match on the build side", as a scan filter.
pub struct KeyMatchFilter {
    keys: Arc<BuildKeys>,
    checked: AtomicUsize,
    passed: AtomicUsize,
}

impl fmt::Debug for KeyMatchFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl KeyMatchFilter {
    /// The filter over `keys`, for probe key columns `columns` (of the
    /// scan's schema): the expression to add to the scan's filters, and
    /// the filter itself for its counts.
    pub fn over(keys: Arc<BuildKeys>, columns: Vec<PhysicalExpr>) -> (PhysicalExpr, Arc<Self>) {
        let filter = Arc::new(KeyMatchFilter {
            keys,
            checked: AtomicUsize::new(0),
            passed: AtomicUsize::new(0),
        });
        let expr = PhysicalExpr {
            node: Node::Runtime(filter.clone(), columns),
            data_type: arrow::datatypes::DataType::Boolean,
        };
        (expr, filter)
    }

    /// Rows checked so far and those that passed.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.checked.load(Ordering::Relaxed),
            self.passed.load(Ordering::Relaxed),
        )
    }

    fn pays(&self) -> bool {
        let (checked, passed) = self.counts();
        checked < TRIAL_ROWS || passed as f64 <= MAX_PASS * checked as f64
    }
}

impl RuntimeFilter for KeyMatchFilter {
    fn mask(&self, args: &[ArrayRef]) -> Result<Option<BooleanArray>> {
        if !self.pays() {
            return Ok(None);
        }
        let hits = self.keys.may_match(args)?;
        self.checked.fetch_add(hits.len(), Ordering::Relaxed);
        self.passed
            .fetch_add(hits.count_set_bits(), Ordering::Relaxed);
        Ok(Some(BooleanArray::new(hits, None)))
    }

    fn describe(&self) -> String {
        "build_keys_match".into()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Array, Int64Array};

    use super::*;

    /// The build keys `keys` as a join would build them.
    fn built(keys: Vec<Option<i64>>) -> Arc<BuildKeys> {
        let keys: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(keys))];
        let encoder = KeyEncoder::for_join_build(&keys).unwrap();
        let mut hashes = Vec::new();
        let encoded = encoder.encode(&keys, &mut hashes).unwrap();
        let table = BuildTable::new(&encoder, &encoded, &hashes);
        Arc::new(BuildKeys { encoder, table })
    }

    fn column() -> PhysicalExpr {
        PhysicalExpr {
            node: Node::Column(0),
            data_type: arrow::datatypes::DataType::Int64,
        }
    }

    #[test]
    fn passes_every_matching_key_and_few_others() {
        // Even keys 0..2000 built; probe 0..20000 (a tenth match) and nulls.
        let (_, filter) = KeyMatchFilter::over(
            built((0..1000).map(|k| Some(k * 2)).collect()),
            vec![column()],
        );
        let probe: ArrayRef = Arc::new(Int64Array::from_iter(
            (0..20_000).map(|k| (k % 97 != 0).then_some(k)),
        ));
        let mask = filter.mask(std::slice::from_ref(&probe)).unwrap().unwrap();
        let probe = probe.as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..probe.len() {
            let matches = probe.is_valid(i) && probe.value(i) < 2000 && probe.value(i) % 2 == 0;
            assert!(
                !matches || mask.value(i),
                "key {} has a match",
                probe.value(i)
            );
        }
        let (checked, passed) = filter.counts();
        assert_eq!(checked, 20_000);
        // ~990 true matches, and the Bloom filter's ~1% false positives.
        assert!((980..1400).contains(&passed), "{passed} passed");
    }

    #[test]
    fn stops_checking_once_most_rows_pass() {
        let (_, filter) =
            KeyMatchFilter::over(built((0..1000).map(Some).collect()), vec![column()]);
        let all_match: ArrayRef =
            Arc::new(Int64Array::from_iter_values((0..4096).map(|k| k % 1000)));
        let mut calls = 0;
        while filter
            .mask(std::slice::from_ref(&all_match))
            .unwrap()
            .is_some()
        {
            calls += 1;
            assert!(
                calls <= TRIAL_ROWS / 4096,
                "still checking after {calls} batches"
            );
        }
        // Once off, every row passes without a check.
        let (checked, _) = filter.counts();
        assert!(filter.mask(&[all_match]).unwrap().is_none());
        assert_eq!(filter.counts().0, checked);
    }
}
