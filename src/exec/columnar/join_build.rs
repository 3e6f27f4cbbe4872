//! The build side of a hash join: key → chain of build rows.
//!
//! Rows with equal keys are chained (`head[group]`, then `next[row]`),
//! first row first, so duplicates cost no allocation. A large build side is
//! split by key hash into partitions whose tables are built in parallel,
//! one thread each (a radix-partitioned build); a probe row looks in the one
//! table its hash names. A small one is a single table built in place.

use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::buffer::BooleanBuffer;
use rayon::prelude::*;

use crate::kernels::bloom::BloomFilter;
use crate::kernels::flat_table::prefetch_ahead;
use crate::kernels::hash_table::{GroupTable, KeyBatch, KeyEncoder, partition_of};

/// No row.
pub const NONE: u32 = u32::MAX;

/// Below this many rows the build is one table on one thread: partitioning
/// costs a pass over the hashes and a stitch, which small builds do not repay.
const PARALLEL_BUILD_ROWS: usize = 1 << 17;

/// Build rows chained per key, in one table or one per hash partition.
pub struct BuildTable {
    /// One table, or one per partition (all of the same key form).
    tables: Vec<GroupTable>,
    /// Where each table's group ids start in `head`.
    offsets: Vec<u32>,
    /// First build row of each group (groups of all tables, concatenated).
    head: Vec<u32>,
    /// The next build row with the same key, or [`NONE`]; empty when no
    /// two build rows share a key (most builds: a primary key), so that a
    /// probe's match costs no read of it (a cache miss on a large build).
    next: Vec<u32>,
    /// Build rows, those with a null key included.
    rows: usize,
    /// One table, every row a key of its own: group g is row `n - 1 - g`
    /// (rows go in last to first), found without reading `head` (one cache
    /// miss less per match on a large build side).
    unique: bool,
    /// Checked first, so probe rows that surely miss skip the tables.
    gate: ProbeGate,
}

/// A Bloom filter of the build keys' hashes, checked while it pays: `None`
/// for builds too large for it to stay in cache, and no longer checked once
/// most probe rows pass it.
struct ProbeGate {
    bloom: Option<BloomFilter>,
    /// Probe rows checked, and those that passed.
    checked: AtomicUsize,
    passed: AtomicUsize,
}

/// Builds with more rows than this get no Bloom filter (it would take
/// more than 8 MB, out of the caches, and cost more than it saves).
const BLOOM_MAX_ROWS: usize = 1 << 22;

/// After this many probe rows the filter's pass rate decides whether it
/// goes on being checked.
const BLOOM_TRIAL_ROWS: usize = 1 << 16;

/// The filter is dropped once more than this fraction of probe rows pass.
const BLOOM_MAX_PASS: f64 = 0.5;

impl BuildTable {
    /// Chains the `n` build rows whose keys are `encoded` (with `hashes`);
    /// null keys join nothing and are left out.
    pub fn new(encoder: &KeyEncoder, encoded: &KeyBatch, hashes: &[u64]) -> Self {
        let n = hashes.len();
        let partitions = if n < PARALLEL_BUILD_ROWS {
            1
        } else {
            rayon::current_num_threads().max(1) * 4
        };
        let mut next = vec![NONE; n];
        if partitions == 1 {
            let mut table = GroupTable::for_batch(encoder, encoded);
            let last_to_first = |j: usize| (n - 1 - j, n - 1 - j);
            let Chained { head, repeated } =
                chain(&mut table, encoded, hashes, (n, last_to_first), &mut next);
            let unique = head.len() == n;
            debug_assert!(
                !unique
                    || head
                        .iter()
                        .enumerate()
                        .all(|(g, &r)| r as usize == n - 1 - g)
            );
            return BuildTable {
                tables: vec![table],
                offsets: vec![0],
                next: if repeated { next } else { Vec::new() },
                head,
                rows: n,
                unique,
                gate: ProbeGate::new(encoded, hashes),
            };
        }
        // Bucket the rows by partition (counting sort, ascending within each).
        let mut starts = vec![0usize; partitions + 1];
        for (i, &h) in hashes.iter().enumerate() {
            if !encoded.is_null(i) {
                starts[partition_of(h, partitions) + 1] += 1;
            }
        }
        for p in 0..partitions {
            starts[p + 1] += starts[p];
        }
        let mut order = vec![0u32; starts[partitions]];
        let mut fill = starts.clone();
        for (i, &h) in hashes.iter().enumerate() {
            if !encoded.is_null(i) {
                let p = partition_of(h, partitions);
                order[fill[p]] = i as u32;
                fill[p] += 1;
            }
        }
        // Each partition chains its rows into a `next` of its own, indexed
        // like its slice of `order`; the slices are stitched in afterwards.
        let built: Vec<(GroupTable, Chained, Vec<u32>)> = (0..partitions)
            .into_par_iter()
            .map(|p| {
                let rows = &order[starts[p]..starts[p + 1]];
                let mut table = GroupTable::for_batch(encoder, encoded);
                let m = rows.len();
                let mut local_next = vec![NONE; m];
                let last_to_first = |j: usize| (m - 1 - j, rows[m - 1 - j] as usize);
                let chained = chain(
                    &mut table,
                    encoded,
                    hashes,
                    (m, last_to_first),
                    &mut local_next,
                );
                (table, chained, local_next)
            })
            .collect();
        let mut tables = Vec::with_capacity(partitions);
        let mut offsets = Vec::with_capacity(partitions);
        let mut head = Vec::new();
        let mut repeated = false;
        for (p, (table, chained, local_next)) in built.into_iter().enumerate() {
            repeated |= chained.repeated;
            offsets.push(head.len() as u32);
            head.extend(chained.head);
            for (&i, nx) in order[starts[p]..starts[p + 1]].iter().zip(local_next) {
                next[i as usize] = nx;
            }
            tables.push(table);
        }
        BuildTable {
            tables,
            offsets,
            next: if repeated { next } else { Vec::new() },
            head,
            rows: n,
            unique: false,
            gate: ProbeGate::new(encoded, hashes),
        }
    }

    /// Whether each of `hashes` may have a match, by the Bloom filter alone
    /// (a few false positives, no false negatives); `None` for a build too
    /// large to have one.
    pub fn bloom_mask(&self, hashes: &[u64]) -> Option<BooleanBuffer> {
        let bloom = self.gate.bloom.as_ref()?;
        Some(BooleanBuffer::collect_bool(hashes.len(), |i| {
            bloom.may_contain(hashes[i])
        }))
    }

    /// A table in the build's key form, for encoding probe keys alike.
    pub fn form(&self) -> &GroupTable {
        &self.tables[0]
    }

    /// The build row after `row` with the same key, or [`NONE`].
    #[inline]
    pub fn next_row(&self, row: u32) -> u32 {
        self.next.get(row as usize).copied().unwrap_or(NONE)
    }

    /// The first build row matching each probe row into `out` (cleared
    /// first), or [`NONE`]; more follow through [`BuildTable::next_row`].
    /// `gated`: probe rows pass the Bloom filter first (while it pays); off
    /// for rows already known to match.
    pub fn first_rows(&self, keys: &KeyBatch, hashes: &[u64], gated: bool, out: &mut Vec<u32>) {
        let parts = self.tables.len();
        let find = |i: usize| {
            let p = if parts == 1 {
                0
            } else {
                partition_of(hashes[i], parts)
            };
            self.tables[p]
                .find(keys, hashes[i], i)
                .map_or(NONE, |g| self.offsets[p] + g)
        };
        let mut candidates = Vec::new();
        if gated && self.gate.candidates(hashes, &mut candidates) {
            out.clear();
            out.resize(hashes.len(), NONE);
            for &i in &candidates {
                out[i as usize] = find(i as usize);
            }
        } else if let [table] = self.tables.as_slice() {
            table.find_all(keys, hashes, out);
        } else {
            // Group ids of partition p's table start at `offsets[p]` in `head`.
            // Each probe's slot is fetched a few rows ahead, so the misses
            // of a table past the caches overlap.
            out.clear();
            out.extend((0..hashes.len()).map(|i| {
                prefetch_ahead(
                    i,
                    hashes.len(),
                    |k| hashes[k],
                    |h| self.tables[partition_of(h, parts)].prefetch(h),
                );
                find(i)
            }));
        }
        let last_row = (self.rows as u32).wrapping_sub(1);
        for g in out.iter_mut() {
            *g = match *g {
                NONE => NONE,
                g if self.unique => last_row - g,
                g => self.head[g as usize],
            };
        }
    }
}

/// Inserts the `n` rows `row_at(0..n)` (in that order) into `table`,
/// prepending each to its key's chain; rows with a null key are left out.
/// `row_at(j)` is a row and the slot of `next` that holds the row after it
/// in its chain (the row itself for a whole build; its place in the
/// partition for a partition's build).
fn chain(
    table: &mut GroupTable,
    encoded: &KeyBatch,
    hashes: &[u64],
    (n, row_at): (usize, impl Fn(usize) -> (usize, usize)),
    next: &mut [u32],
) -> Chained {
    // Room for every row's key up front: build keys are mostly distinct
    // (a primary key), and a table grown by doubling rehashes all it holds
    // each time.
    table.reserve(n);
    let mut head: Vec<u32> = Vec::new();
    let mut repeated = false;
    for j in 0..n {
        // The slot of a row a few ahead is fetched now, so that the cache
        // misses of a table larger than the caches overlap (a quarter of
        // a 100M-row grace join's time went to these inserts).
        prefetch_ahead(j, n, |k| hashes[row_at(k).1], |h| table.prefetch(h));
        let (slot, i) = row_at(j);
        if encoded.is_null(i) {
            continue;
        }
        let g = table.find_or_insert(encoded, hashes[i], i) as usize;
        if g == head.len() {
            head.push(NONE);
        } else {
            repeated = true;
        }
        next[slot] = head[g];
        head[g] = i as u32;
    }
    Chained { head, repeated }
}

/// What [`chain`] made of its rows.
struct Chained {
    /// Each group's first row.
    head: Vec<u32>,
    /// Whether a key had more than one row (else every chain ends at its
    /// first row).
    repeated: bool,
}

impl ProbeGate {
    /// The filter of the non-null keys' `hashes`.
    fn new(encoded: &KeyBatch, hashes: &[u64]) -> Self {
        let keyed = || (0..hashes.len()).filter(|&i| !encoded.is_null(i));
        let rows = keyed().count();
        ProbeGate {
            bloom: (rows <= BLOOM_MAX_ROWS)
                .then(|| BloomFilter::new(rows, keyed().map(|i| hashes[i]))),
            checked: AtomicUsize::new(0),
            passed: AtomicUsize::new(0),
        }
    }

    /// The indices of `hashes` that may have a match, into `out`; `false`
    /// (and `out` untouched) when the filter is not checked.
    fn candidates(&self, hashes: &[u64], out: &mut Vec<u32>) -> bool {
        let checked = self.checked.load(Ordering::Relaxed);
        let passed = self.passed.load(Ordering::Relaxed);
        let pays = checked < BLOOM_TRIAL_ROWS || (passed as f64) <= BLOOM_MAX_PASS * checked as f64;
        let Some(bloom) = self.bloom.as_ref().filter(|_| pays) else {
            return false;
        };
        bloom.candidates(hashes, out);
        self.checked.fetch_add(hashes.len(), Ordering::Relaxed);
        self.passed.fetch_add(out.len(), Ordering::Relaxed);
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array};

    use super::*;

    /// The build of `keys`, and the chain of build rows each of `probe`
    /// matches, first row first.
    fn chains(keys: Vec<Option<i64>>, probe: &[i64]) -> (BuildTable, Vec<Vec<u32>>) {
        let keys: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(keys))];
        let encoder = KeyEncoder::for_join_build(&keys).unwrap();
        let mut hashes = Vec::new();
        let encoded = encoder.encode(&keys, &mut hashes).unwrap();
        let table = BuildTable::new(&encoder, &encoded, &hashes);
        let probe: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(probe.to_vec()))];
        let probe_keys = encoder.encode(&probe, &mut hashes).unwrap();
        let mut first = Vec::new();
        table.first_rows(&probe_keys, &hashes, false, &mut first);
        let chains = first
            .iter()
            .map(|&row| {
                std::iter::successors(Some(row).filter(|&r| r != NONE), |&r| {
                    Some(table.next_row(r)).filter(|&r| r != NONE)
                })
                .collect()
            })
            .collect();
        (table, chains)
    }

    #[test]
    fn rows_sharing_a_key_chain_in_row_order_and_null_keys_match_nothing() {
        let (table, found) = chains(vec![Some(7), None, Some(7), Some(3), Some(7)], &[7, 3, 5]);
        assert_eq!(found, vec![vec![0, 2, 4], vec![3], vec![]]);
        assert!(!table.next.is_empty());
    }

    #[test]
    fn distinct_keys_keep_no_chains_small_builds_and_partitioned_ones_alike() {
        let (table, found) = chains(vec![Some(4), None, Some(9)], &[9, 4, 1]);
        assert_eq!(found, vec![vec![2], vec![0], vec![]]);
        assert!(table.next.is_empty());
        // Large enough for a partitioned build, its rows in a scattered order.
        let n = PARALLEL_BUILD_ROWS as i64 * 2;
        let keys = (0..n).map(|i| Some((i * 7919) % n)).collect();
        let (table, found) = chains(keys, &[0, 7919, n - 1, n]);
        assert!(table.tables.len() > 1 && table.next.is_empty());
        let row_of = |k: i64| (0..n).find(|i| (i * 7919) % n == k).unwrap() as u32;
        let expected = vec![vec![0], vec![1], vec![row_of(n - 1)], vec![]];
        assert_eq!(found, expected);
    }
}
