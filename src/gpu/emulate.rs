//! A CPU port of `kernels.cu`, kernel by kernel, with the same hash, the
//! same probing and the same table layouts. Each "launch" runs its threads
//! one after another, which is one of the interleavings the GPU may choose;
//! the tests check the port against sloth's CPU operators, so the
//! algorithms are checked on machines without a GPU.

use super::raw::{AggKind, JoinPairs, RawAgg, RawGroupBy, RawValues, Values};

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

/// `gb_insert`, `gb_assign`, `gb_null_group`, `gb_map`, then one
/// aggregate kernel per aggregate. `None` when the table overflows.
pub fn group_by(
    keys: &[i64],
    valid: Option<&[u8]>,
    aggs: &[(AggKind, Values<'_>)],
) -> Option<RawGroupBy> {
    let n = keys.len();
    let cap = capacity(n);
    let mask = cap as u64 - 1;
    let mut table = vec![EMPTY_KEY; cap];
    let mut row_slot = vec![0usize; n];
    for i in 0..n {
        row_slot[i] = if is_valid(valid, i) {
            find_or_insert(&mut table, mask, keys[i])?
        } else {
            cap
        };
    }
    let mut groups = 0i32;
    let mut dense = vec![-1i32; cap + 1];
    for s in 0..cap {
        if table[s] != EMPTY_KEY {
            dense[s] = groups;
            groups += 1;
        }
    }
    if row_slot.contains(&cap) {
        dense[cap] = groups;
        groups += 1;
    }
    let grp: Vec<usize> = row_slot.iter().map(|&s| dense[s] as usize).collect();
    let g = groups as usize;
    let aggs = aggs
        .iter()
        .map(|(kind, values)| aggregate(*kind, values, &grp, g))
        .collect();
    Some(RawGroupBy {
        table,
        dense,
        groups: g,
        aggs,
    })
}

/// The `agg_*` kernels (global and shared variants give the same values).
fn aggregate(kind: AggKind, values: &Values<'_>, grp: &[usize], groups: usize) -> RawAgg {
    let mut counts = vec![0u64; groups];
    let valid = values.validity();
    let mut count = |i: usize| counts[grp[i]] += 1;
    let values = match (kind, values) {
        (AggKind::Count, _) => {
            (0..grp.len())
                .filter(|&i| is_valid(valid, i))
                .for_each(&mut count);
            RawValues::None
        }
        (AggKind::Sum | AggKind::Mean, Values::F64(v, _)) => {
            let mut out = vec![0.0; groups];
            for i in (0..grp.len()).filter(|&i| is_valid(valid, i)) {
                out[grp[i]] += v[i];
                count(i);
            }
            RawValues::F64(out)
        }
        (AggKind::Sum | AggKind::Mean, Values::I64(v, _)) => {
            let mut out = vec![0i64; groups];
            for i in (0..grp.len()).filter(|&i| is_valid(valid, i)) {
                out[grp[i]] = out[grp[i]].wrapping_add(v[i]);
                count(i);
            }
            RawValues::I64(out)
        }
        (AggKind::Min | AggKind::Max, Values::F64(v, _)) => {
            let min = kind == AggKind::Min;
            let mut out = vec![
                if min {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                };
                groups
            ];
            for i in (0..grp.len()).filter(|&i| is_valid(valid, i)) {
                let o = &mut out[grp[i]];
                if (min && v[i] < *o) || (!min && v[i] > *o) {
                    *o = v[i];
                }
                count(i);
            }
            RawValues::F64(out)
        }
        (AggKind::Min | AggKind::Max, Values::I64(v, _)) => {
            let min = kind == AggKind::Min;
            let mut out = vec![if min { i64::MAX } else { i64::MIN }; groups];
            for i in (0..grp.len()).filter(|&i| is_valid(valid, i)) {
                let o = &mut out[grp[i]];
                *o = if min { (*o).min(v[i]) } else { (*o).max(v[i]) };
                count(i);
            }
            RawValues::I64(out)
        }
        (_, Values::Rows(_)) => unreachable!("only count(*) has no values"),
    };
    RawAgg { values, counts }
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
