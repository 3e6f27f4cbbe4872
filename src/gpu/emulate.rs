//! A CPU port of `kernels.cu`, kernel by kernel, with the same hash, the
//! same probing and the same table layouts. Each "launch" runs its threads
//! one after another, which is one of the interleavings the GPU may choose;
//! the tests check the port against sloth's CPU operators, so the
//! algorithms are checked on machines without a GPU.

use super::raw::{AggKind, JoinPairs, RawAgg, RawGroupBy, RawValues, Values, needs_counts};

/// `EMPTY_KEY` of the kernels: marks a free slot.
pub const EMPTY_KEY: i64 = i64::MIN;

/// `mix64` of the kernels (a 64-bit finalizer).
pub fn mix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51afd7ed558ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ceb9fe1a85ec53);
    k ^ (k >> 33)
}

fn is_valid(v: Option<&[u8]>, i: usize) -> bool {
    v.is_none_or(|v| (v[i >> 3] >> (i & 7)) & 1 == 1)
}

fn find_or_insert(table: &mut [i64], mask: u64, k: i64) -> Option<usize> {
    let mut h = mix64(k as u64) & mask;
    for _ in 0..=mask {
        let prev = table[h as usize];
        if prev == EMPTY_KEY {
            table[h as usize] = k;
            return Some(h as usize);
        }
        if prev == k {
            return Some(h as usize);
        }
        h = (h + 1) & mask;
    }
    None
}

fn find(table: &[i64], mask: u64, k: i64) -> Option<usize> {
    let mut h = mix64(k as u64) & mask;
    for _ in 0..=mask {
        match table[h as usize] {
            cur if cur == k => return Some(h as usize),
            EMPTY_KEY => return None,
            _ => h = (h + 1) & mask,
        }
    }
    None
}

/// Table capacity (a power of two) for `n` rows: at most half full.
pub fn capacity(n: usize) -> usize {
    (2 * n).max(1024).next_power_of_two()
}

/// Keys per block's shared table in the `_shared` kernels.
pub const SHARED_SLOTS: usize = 1024;
const SHARED_PROBES: usize = 16;
/// The port's launch shape: small, so that tests of a few thousand rows
/// span several blocks and exercise the merge of their shared tables.
const GRID: usize = 4;
const BLOCK_DIM: usize = 256;

/// How a group-by's kernels are set up: the global table's size and
/// whether each block first aggregates in shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TablePlan {
    /// Slots of the global table (a power of two).
    pub capacity: usize,
    /// Use the `_shared` kernel variants.
    pub shared: bool,
}

impl TablePlan {
    /// The plan for these keys, from the distinct keys among the first 64K:
    /// few of them (a sixteenth of the sample or less) size the table for
    /// four times as many groups and, when they fit a block's shared table
    /// four times over, pick the `_shared` variants; otherwise the table
    /// has room for every row. Sizing by groups keeps the table's fill,
    /// scan and compaction small when the rows are many and the groups few;
    /// if the sample misled (keys clustered by value), the kernels report
    /// the table full and [`TablePlan::for_every_row`] runs instead.
    pub fn for_keys(keys: &[i64]) -> TablePlan {
        let sample = &keys[..keys.len().min(1 << 16)];
        let mut seen = std::collections::HashSet::new();
        let few = sample.len() / 16;
        for &k in sample {
            if seen.insert(k) && seen.len() > few.max(SHARED_SLOTS / 4) {
                return TablePlan::for_every_row(keys.len());
            }
        }
        TablePlan {
            capacity: capacity(4 * seen.len()),
            shared: seen.len() <= SHARED_SLOTS / 4,
        }
    }

    /// A table with room for every row: it cannot fill.
    pub fn for_every_row(rows: usize) -> TablePlan {
        TablePlan {
            capacity: capacity(rows),
            shared: false,
        }
    }
}

/// The global table of a group-by, as the kernels leave it.
struct Slots<'a> {
    keys: &'a [i64],
    kvalid: Option<&'a [u8]>,
    table: Vec<i64>,
    mask: u64,
    null_seen: bool,
    overflow: bool,
}

impl Slots<'_> {
    /// `global_slot`: row i's slot, the null slot `mask + 1` for a null key.
    fn global_slot(&mut self, i: usize) -> Option<usize> {
        if !is_valid(self.kvalid, i) {
            self.null_seen = true;
            return Some(self.mask as usize + 1);
        }
        let s = find_or_insert(&mut self.table, self.mask, self.keys[i]);
        self.overflow |= s.is_none();
        s
    }
}

/// `shared_slot`: the slot of `k` in a block's table, if there is room
/// within `SHARED_PROBES` probes.
fn shared_slot(sk: &mut [i64], k: i64) -> Option<usize> {
    let mask = SHARED_SLOTS as u64 - 1;
    let mut h = mix64(k as u64) & mask;
    for _ in 0..SHARED_PROBES {
        let prev = sk[h as usize];
        if prev == EMPTY_KEY || prev == k {
            sk[h as usize] = k;
            return Some(h as usize);
        }
        h = (h + 1) & mask;
    }
    None
}

/// One aggregate kernel (`gb_{op}_{lane}`, or its `_shared` variant):
/// per-slot accumulators (starting at `init`, combined by `op`) and, when
/// `counted`, counts of non-null inputs; the null slot last.
fn aggregate_pass<T: Copy>(
    slots: &mut Slots<'_>,
    (value, vvalid): (impl Fn(usize) -> T, Option<&[u8]>),
    (init, op): (T, impl Fn(&mut T, T)),
    (shared, counted): (bool, bool),
) -> (Vec<T>, Option<Vec<u64>>) {
    let n = slots.keys.len();
    let null_slot = slots.mask as usize + 1;
    let mut acc = vec![init; null_slot + 1];
    let mut cnt = vec![0u64; null_slot + 1];
    let update = |acc: &mut [T], cnt: &mut [u64], s: usize, i: usize| {
        if is_valid(vvalid, i) {
            op(&mut acc[s], value(i));
            if counted {
                cnt[s] += 1;
            }
        }
    };
    if !shared {
        for i in 0..n {
            if let Some(s) = slots.global_slot(i) {
                update(&mut acc, &mut cnt, s, i);
            }
        }
        return (acc, counted.then_some(cnt));
    }
    for block in 0..GRID {
        let mut sk = vec![EMPTY_KEY; SHARED_SLOTS];
        let (mut sa, mut sc) = (vec![init; SHARED_SLOTS + 1], vec![0u64; SHARED_SLOTS + 1]);
        let mut snull = false;
        for thread in 0..BLOCK_DIM {
            for i in (block * BLOCK_DIM + thread..n).step_by(GRID * BLOCK_DIM) {
                let j = if is_valid(slots.kvalid, i) {
                    shared_slot(&mut sk, slots.keys[i])
                } else {
                    snull = true;
                    Some(SHARED_SLOTS)
                };
                match j {
                    Some(j) => update(&mut sa, &mut sc, j, i),
                    None => match find_or_insert(&mut slots.table, slots.mask, slots.keys[i]) {
                        Some(s) => update(&mut acc, &mut cnt, s, i),
                        None => slots.overflow = true,
                    },
                }
            }
        }
        // The merge of the block's table into the global one.
        for j in 0..=SHARED_SLOTS {
            let s = if j == SHARED_SLOTS {
                if !snull {
                    continue;
                }
                slots.null_seen = true;
                null_slot
            } else if sk[j] == EMPTY_KEY {
                continue;
            } else {
                match find_or_insert(&mut slots.table, slots.mask, sk[j]) {
                    Some(s) => s,
                    None => {
                        slots.overflow = true;
                        continue;
                    }
                }
            };
            if sc[j] > 0 || !counted {
                op(&mut acc[s], sa[j]);
                cnt[s] += sc[j];
            }
        }
    }
    (acc, counted.then_some(cnt))
}

/// `gb_gather`: per-slot words in group order.
fn gather<T: Copy + Default>(per_slot: &[T], dense: &[i32], groups: usize) -> Vec<T> {
    let mut out = vec![T::default(); groups];
    for (&v, &g) in per_slot.iter().zip(dense) {
        if g >= 0 {
            out[g as usize] = v;
        }
    }
    out
}

/// The group-by kernels in launch order: one aggregate kernel per
/// aggregate (the `_shared` variants when `shared`), `gb_assign`, then
/// `gb_gather` of the keys and of each aggregate's accumulators and counts.
/// `None` when the table overflows.
pub fn group_by(
    keys: &[i64],
    valid: Option<&[u8]>,
    aggs: &[(AggKind, Values<'_>)],
    plan: TablePlan,
) -> Option<RawGroupBy> {
    let (cap, shared) = (plan.capacity, plan.shared);
    let mut slots = Slots {
        keys,
        kvalid: valid,
        table: vec![EMPTY_KEY; cap],
        mask: cap as u64 - 1,
        null_seen: false,
        overflow: false,
    };
    let count = |slots: &mut Slots<'_>, vvalid| {
        aggregate_pass(slots, (|_| 0u64, vvalid), (0, |_, _| {}), (shared, true)).1
    };
    let per_slot: Vec<(RawValues, Option<Vec<u64>>)> = aggs
        .iter()
        .map(|(kind, values)| (kind, values, (shared, needs_counts(*kind, values))))
        .map(|(kind, values, mode)| match (kind, values) {
            (AggKind::Count, v) | (_, v @ Values::Rows) => {
                (RawValues::None, count(&mut slots, v.validity()))
            }
            (AggKind::Sum | AggKind::Mean, Values::F64(v, vv)) => {
                let sum = |a: &mut f64, x: f64| *a += x;
                let (a, c) = aggregate_pass(&mut slots, (|i| v[i], *vv), (0.0, sum), mode);
                (RawValues::F64(a), c)
            }
            (AggKind::Sum | AggKind::Mean, Values::I64(v, vv)) => {
                let sum = |a: &mut i64, x: i64| *a = a.wrapping_add(x);
                let (a, c) = aggregate_pass(&mut slots, (|i| v[i], *vv), (0, sum), mode);
                (RawValues::I64(a), c)
            }
            (AggKind::Min | AggKind::Max, Values::F64(v, vv)) => {
                let (init, op): (f64, fn(&mut f64, f64)) = if *kind == AggKind::Min {
                    (f64::INFINITY, |a, x| {
                        if x < *a {
                            *a = x
                        }
                    })
                } else {
                    (f64::NEG_INFINITY, |a, x| {
                        if x > *a {
                            *a = x
                        }
                    })
                };
                let (a, c) = aggregate_pass(&mut slots, (|i| v[i], *vv), (init, op), mode);
                (RawValues::F64(a), c)
            }
            (AggKind::Min | AggKind::Max, Values::I64(v, vv)) => {
                let (init, op): (i64, fn(&mut i64, i64)) = if *kind == AggKind::Min {
                    (i64::MAX, |a, x| *a = (*a).min(x))
                } else {
                    (i64::MIN, |a, x| *a = (*a).max(x))
                };
                let (a, c) = aggregate_pass(&mut slots, (|i| v[i], *vv), (init, op), mode);
                (RawValues::I64(a), c)
            }
        })
        .collect();
    if aggs.is_empty() {
        count(&mut slots, None); // DISTINCT: the keys still need inserting
    }
    if slots.overflow {
        return None;
    }
    // gb_assign (in slot order: one of the orders the GPU's atomics give).
    let mut dense = vec![-1i32; cap + 1];
    let mut groups = 0usize;
    for (s, d) in dense.iter_mut().enumerate() {
        let used = match slots.table.get(s) {
            Some(&k) => k != EMPTY_KEY,
            None => slots.null_seen,
        };
        if used {
            *d = groups as i32;
            groups += 1;
        }
    }
    let aggs = per_slot
        .into_iter()
        .map(|(values, counts)| RawAgg {
            values: match values {
                RawValues::F64(v) => RawValues::F64(gather(&v, &dense, groups)),
                RawValues::I64(v) => RawValues::I64(gather(&v, &dense, groups)),
                RawValues::None => RawValues::None,
            },
            counts: counts.map(|c| gather(&c, &dense, groups)),
        })
        .collect();
    Some(RawGroupBy {
        keys: gather(&slots.table, &dense, groups),
        null_group: usize::try_from(dense[cap]).ok(),
        aggs,
    })
}

/// `join_build`, `join_count`, an exclusive scan, `join_emit`: the
/// (build row, probe row) pairs and each probe row's match count.
/// `None` when the table overflows.
pub fn join(build: (&[i64], Option<&[u8]>), probe: (&[i64], Option<&[u8]>)) -> Option<JoinPairs> {
    let (bk, bv) = build;
    let cap = capacity(bk.len());
    let mask = cap as u64 - 1;
    let mut table = vec![EMPTY_KEY; cap];
    let mut heads = vec![-1i64; cap];
    let mut next = vec![-1i64; bk.len()];
    for i in 0..bk.len() {
        if !is_valid(bv, i) {
            continue;
        }
        let s = find_or_insert(&mut table, mask, bk[i])?;
        next[i] = heads[s];
        heads[s] = i as i64;
    }
    let (pk, pv) = probe;
    let chain = |i: usize| {
        let start = if is_valid(pv, i) {
            find(&table, mask, pk[i]).map_or(-1, |s| heads[s])
        } else {
            -1
        };
        std::iter::successors((start >= 0).then_some(start), |&r| {
            let n = next[r as usize];
            (n >= 0).then_some(n)
        })
    };
    let counts: Vec<u32> = (0..pk.len()).map(|i| chain(i).count() as u32).collect();
    let total: usize = counts.iter().map(|&c| c as usize).sum();
    let (mut out_build, mut out_probe) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for i in 0..pk.len() {
        for r in chain(i) {
            out_build.push(r);
            out_probe.push(i as i64);
        }
    }
    Some((out_build, out_probe, counts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// (key or null) -> (sum, non-null count) per group, from a raw result.
    fn by_key(raw: &RawGroupBy) -> BTreeMap<Option<i64>, (i64, u64)> {
        let RawValues::I64(sums) = &raw.aggs[0].values else {
            panic!("i64 sums")
        };
        (0..raw.groups())
            .map(|g| {
                let key = (raw.null_group != Some(g)).then_some(raw.keys[g]);
                (key, (sums[g], raw.aggs[0].counts.as_ref().unwrap()[g]))
            })
            .collect()
    }

    /// The shared-memory variant with more distinct keys than a block's
    /// table holds: keys without room go to the global table, blocks merge
    /// theirs, and the result equals the global variant's and a plain map's.
    #[test]
    fn shared_and_global_variants_agree_past_the_shared_table() {
        let n = 20_000usize;
        let keys: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 5000 - 2500).collect();
        let values: Vec<i64> = (0..n as i64).map(|i| i % 97 - 40).collect();
        // Every 13th key and every 7th value is null.
        let bitmap = |null_every: usize| -> Vec<u8> {
            let mut b = vec![0u8; n.div_ceil(8)];
            for i in (0..n).filter(|i| i % null_every != 0) {
                b[i >> 3] |= 1 << (i & 7);
            }
            b
        };
        let (kvalid, vvalid) = (bitmap(13), bitmap(7));
        let aggs = [(AggKind::Sum, Values::I64(&values, Some(&vvalid)))];
        assert_eq!(TablePlan::for_keys(&keys), TablePlan::for_every_row(n));
        let plan = |shared| TablePlan {
            capacity: capacity(n),
            shared,
        };
        let shared = group_by(&keys, Some(&kvalid), &aggs, plan(true)).unwrap();
        let global = group_by(&keys, Some(&kvalid), &aggs, plan(false)).unwrap();
        let mut want: BTreeMap<Option<i64>, (i64, u64)> = BTreeMap::new();
        for i in 0..n {
            let key = (i % 13 != 0).then_some(keys[i]);
            let e = want.entry(key).or_default();
            if i % 7 != 0 {
                e.0 += values[i];
                e.1 += 1;
            }
        }
        assert_eq!(by_key(&global), want);
        assert_eq!(by_key(&shared), want);
        assert_eq!(want.len(), 5001);
    }

    #[test]
    fn few_distinct_keys_pick_a_small_table_and_the_shared_variant() {
        let keys: Vec<i64> = (0..100_000).map(|i| i % 100).collect();
        let plan = TablePlan::for_keys(&keys);
        assert_eq!(
            plan,
            TablePlan {
                capacity: 1024,
                shared: true
            }
        );
        let aggs = [(AggKind::Count, Values::Rows)];
        let raw = group_by(&keys, None, &aggs, plan).unwrap();
        assert_eq!(raw.groups(), 100);
        let counts = raw.aggs[0].counts.as_ref().unwrap();
        assert!(counts.iter().all(|&c| c == 1000));
    }

    /// Keys clustered by value: the first 64K rows hold 10 keys, the rest
    /// 5,000 more. The small table fills, the kernels say so, and a table
    /// for every row gives the answer.
    #[test]
    fn a_misleading_sample_overflows_the_small_table() {
        let keys: Vec<i64> = (0..200_000)
            .map(|i| if i < 1 << 16 { i % 10 } else { i % 5000 + 10 })
            .collect();
        let plan = TablePlan::for_keys(&keys);
        assert!(plan.capacity < 5000, "{plan:?}");
        let aggs = [(AggKind::Count, Values::Rows)];
        assert!(group_by(&keys, None, &aggs, plan).is_none());
        let raw = group_by(&keys, None, &aggs, TablePlan::for_every_row(keys.len())).unwrap();
        assert_eq!(raw.groups(), 5010);
    }
}
