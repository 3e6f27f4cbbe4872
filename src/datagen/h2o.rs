//! db-benchmark ("h2o") tables, with the schemas of its data generators.
//!
//! Group-by (`groupby-datagen.R`): `id1..id3` strings, `id4..id6` ints, `v1`,
//! `v2` ints, `v3` float, for `n` rows and `k` groups per low-cardinality id.
//! Join (`join-datagen.R`): a big table `x` and `small`, `medium`, `big`
//! right-hand tables with ~90% of keys matching.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use super::SplitMix64;
use crate::error::{Result, SlothError};
use crate::io::BATCH_SIZE;

fn chunks(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .step_by(BATCH_SIZE)
        .map(|s| (s, BATCH_SIZE.min(n - s)))
        .collect()
}

/// The group-by table: `n` rows, `k` distinct values of `id1, id2, id4, id5`.
pub fn h2o_groupby(n: usize, k: usize) -> Result<Vec<RecordBatch>> {
    if k == 0 {
        // db-benchmark's K is the number of distinct values of an id column:
        // zero groups is not a table anyone benchmarks.
        return Err(SlothError::plan(
            "the group count must be at least 1 (db-benchmark uses 100)",
        ));
    }
    let k = k as u64;
    let nk = (n as u64 / k).max(1);
    chunks(n)
        .into_par_iter()
        .map(|(start, len)| {
            let mut r = SplitMix64::new(0x42 ^ (start as u64).wrapping_mul(0x9E37));
            let mut ids = [(); 6].map(|_| Vec::with_capacity(len));
            let (mut v1, mut v2, mut v3) = (
                Vec::with_capacity(len),
                Vec::with_capacity(len),
                Vec::with_capacity(len),
            );
            for _ in 0..len {
                ids[0].push(r.one_to(k));
                ids[1].push(r.one_to(k));
                ids[2].push(r.one_to(nk));
                ids[3].push(r.one_to(k));
                ids[4].push(r.one_to(k));
                ids[5].push(r.one_to(nk));
                v1.push(r.one_to(5) as i64);
                v2.push(r.one_to(15) as i64);
                v3.push((r.unit() * 100.0 * 1e6).round() / 1e6);
            }
            let s = |v: &[u64], w: usize| -> ArrayRef {
                Arc::new(StringArray::from_iter_values(
                    v.iter().map(|x| format!("id{x:0w$}")),
                ))
            };
            let i = |v: &[u64]| -> ArrayRef {
                Arc::new(Int64Array::from_iter_values(v.iter().map(|&x| x as i64)))
            };
            Ok(RecordBatch::try_from_iter(vec![
                ("id1", s(&ids[0], 3)),
                ("id2", s(&ids[1], 3)),
                ("id3", s(&ids[2], 10)),
                ("id4", i(&ids[3])),
                ("id5", i(&ids[4])),
                ("id6", i(&ids[5])),
                ("v1", Arc::new(Int64Array::from(v1)) as ArrayRef),
                ("v2", Arc::new(Int64Array::from(v2)) as ArrayRef),
                ("v3", Arc::new(Float64Array::from(v3)) as ArrayRef),
            ])?)
        })
        .collect()
}

/// The join tables `(name, batches)`: `x` (n rows) and `small` (n/1e6),
/// `medium` (n/1e3), `big` (n) right-hand sides, with lower bounds for tiny n.
pub fn h2o_join(n: usize) -> Result<Vec<(&'static str, Vec<RecordBatch>)>> {
    let n_small = (n / 1_000_000).max(10);
    let n_medium = (n / 1_000).max(100);
    let n_big = n.max(1000);
    // About 10% of the left keys fall outside the right tables' key ranges.
    let widen = |m: usize| (m as f64 * 1.1).ceil() as u64;
    let make = |rows: usize,
                seed: u64,
                cols: &(dyn Fn(&mut SplitMix64, usize) -> [u64; 3] + Sync),
                names: &[&str]| {
        chunks(rows)
            .into_par_iter()
            .map(|(start, len)| {
                let mut r = SplitMix64::new(seed ^ (start as u64).wrapping_mul(0x9E37));
                let mut keys = [(); 3].map(|_| Vec::with_capacity(len));
                let mut v = Vec::with_capacity(len);
                for row in start..start + len {
                    let k = cols(&mut r, row);
                    for (c, x) in keys.iter_mut().zip(k) {
                        c.push(x as i64);
                    }
                    v.push((r.unit() * 100.0 * 1e6).round() / 1e6);
                }
                let mut columns: Vec<(String, ArrayRef)> = Vec::new();
                let ints = names
                    .iter()
                    .filter(|n| n.starts_with("id") && n[2..].parse::<u8>().unwrap_or(9) <= 3)
                    .count();
                for (i, name) in names.iter().enumerate().take(ints) {
                    columns.push((
                        name.to_string(),
                        Arc::new(Int64Array::from(keys[i].clone())),
                    ));
                }
                for (i, name) in names.iter().enumerate().skip(ints).take(ints) {
                    let vals = keys[i - ints].iter().map(|x| format!("id{x}"));
                    columns.push((
                        name.to_string(),
                        Arc::new(StringArray::from_iter_values(vals)),
                    ));
                }
                let vname = names.last().expect("value column");
                columns.push((vname.to_string(), Arc::new(Float64Array::from(v))));
                Ok(RecordBatch::try_from_iter(columns)?)
            })
            .collect::<Result<Vec<_>>>()
    };
    let (s, m, b) = (n_small as u64, n_medium as u64, n_big as u64);
    let x = make(
        n,
        1,
        &|r, _| {
            [
                r.one_to(widen(n_small)),
                r.one_to(widen(n_medium)),
                r.one_to(widen(n_big)),
            ]
        },
        &["id1", "id2", "id3", "id4", "id5", "id6", "v1"],
    )?;
    let small = make(
        n_small,
        2,
        &|_, row| [row as u64 + 1, 0, 0],
        &["id1", "id4", "v2"],
    )?;
    let medium = make(
        n_medium,
        3,
        &|r, row| [r.one_to(s), row as u64 + 1, 0],
        &["id1", "id2", "id4", "id5", "v2"],
    )?;
    let big = make(
        n_big,
        4,
        &|r, row| [r.one_to(s), r.one_to(m), row as u64 + 1],
        &["id1", "id2", "id3", "id4", "id5", "id6", "v2"],
    )?;
    let _ = b;
    Ok(vec![
        ("x", x),
        ("small", small),
        ("medium", medium),
        ("big", big),
    ])
}
