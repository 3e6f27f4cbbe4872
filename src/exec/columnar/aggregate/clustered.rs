//! Aggregation of input clustered by a key: each unit on its own.
//!
//! Data is often written in the order of one of its keys: ids as they were
//! assigned, events by date, a table sorted before it was saved. Where the
//! Parquet statistics of an integer key column show each row group's
//! values in a range that no other row group's range overlaps (or only
//! touches, at one shared value), a group can only span row groups on such
//! a shared value. Each unit is then aggregated into a table of its own,
//! small enough to stay in cache, and its groups are emitted at once; only
//! the groups on a shared edge value are kept aside, and merged in input
//! order at the end.
//!
//! Before, `select l_orderkey, sum(l_quantity) from lineitem group by 1`
//! at TPC-H SF 10: every thread folds its rows into one table of its
//! share of the 15M orders, the tables split into hash partitions as they
//! grow and are merged across threads at the end, holding every group
//! twice. After: each of the 458 row groups (values 1..130530,
//! 130531..261989, 261989..393221, ...) is aggregated alone into a table of
//! about 33K groups and emitted; the orders whose lines straddle two row
//! groups (261989 here) are merged at the end.

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::compute::{cast, concat_batches, filter_record_batch};
use arrow::datatypes::{DataType, Int64Type, SchemaRef};
use arrow::record_batch::RecordBatch;

use super::{Part, Partial, Spec};
use crate::error::Result;
use crate::exec::columnar::pipeline::apply_stages;
use crate::kernels::hash_table::{GroupTable, is_int_key};
use crate::physical::Stage;

/// Output batches smaller than this are concatenated with their
/// neighbours, so that a consumer does not get one batch per unit.
const COALESCE_BELOW: usize = 8 * 1024;

/// How the input's units are clustered by a key.
pub(super) struct Clustering {
    /// The key whose value ranges are disjoint across units.
    key: usize,
    /// For each unit, the values at its edges that a neighbouring unit's
    /// range also holds (low, high), whose groups may span units.
    edges: Vec<[Option<i64>; 2]>,
}

impl Clustering {
    /// How many units are aggregated one at a time.
    pub(super) fn units(&self) -> usize {
        self.edges.len()
    }
}

/// The first key of `spec` that is an integer scan column whose value
/// ranges (from the units' statistics, without nulls) are disjoint but for
/// shared edge values; `None` when no key is, or there are fewer than two
/// units.
pub(super) fn clustering(spec: &Spec<'_>) -> Option<Clustering> {
    let units = &spec.input.units;
    if units.len() < 2 {
        return None;
    }
    (spec.key_columns.iter().enumerate()).find_map(|(key, column)| {
        let column = (*column)?;
        if !is_int_key(&spec.key_types[key]) {
            return None;
        }
        let ranges: Vec<(i64, i64)> = (units.iter())
            .map(|u| u.int_range(column))
            .collect::<Option<_>>()?;
        let edges = shared_edges(&ranges)?;
        Some(Clustering { key, edges })
    })
}

/// For each of `ranges` (inclusive), the values it shares with another
/// one, if no two overlap in more than one value at their ends.
fn shared_edges(ranges: &[(i64, i64)]) -> Option<Vec<[Option<i64>; 2]>> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_unstable_by_key(|&i| ranges[i]);
    let mut edges = vec![[None, None]; ranges.len()];
    // Sorted by their low ends, each range must end at or before the next
    // begins; then ranges overlap only on a value that every range between
    // them also shares with its neighbours.
    for pair in order.windows(2) {
        let (a, b) = (ranges[pair[0]], ranges[pair[1]]);
        if a.1 > b.0 {
            return None;
        }
        if a.1 == b.0 {
            edges[pair[0]][1] = Some(a.1);
            edges[pair[1]][0] = Some(b.0);
        }
    }
    Some(edges)
}

/// Aggregates each unit of the input on its own, its groups through `then`
/// at once; the groups on units' shared edge values are merged, in input
/// order, at the end. Returns the batches and how many groups there were
/// before `then`.
pub(super) fn aggregate(
    spec: &Spec<'_>,
    clustering: &Clustering,
    schema: &SchemaRef,
    then: &[Stage],
) -> Result<(Vec<RecordBatch>, usize)> {
    let units = &spec.input.units;
    let per_unit = spec.input.fold_each_unit(
        |i| spec.partial_expecting(units[i].num_rows() as f64),
        |p, batch| spec.update(p, batch),
        |i, p| {
            let (batches, edges) = emit_unit(spec, clustering.key, clustering.edges[i], p, schema)?;
            let groups: usize = batches.iter().map(|b| b.num_rows()).sum();
            Ok((run_pipeline_here(batches, then)?, groups, edges))
        },
    )?;
    let mut groups = 0;
    let (mut inner, mut edges) = (Vec::new(), Vec::new());
    for (batches, n, on_edges) in per_unit {
        inner.extend(batches);
        groups += n;
        edges.extend(on_edges);
    }
    let out_schema = inner.first().map_or_else(|| schema.clone(), |b| b.schema());
    let mut out = coalesce(inner.into_iter(), &out_schema)?;
    if !edges.is_empty() {
        let merged = merge_in_order(spec, edges, schema)?;
        groups += merged.num_rows();
        out.extend(run_pipeline_here(vec![merged], then)?);
    }
    Ok((
        out.into_iter().filter(|b| b.num_rows() > 0).collect(),
        groups,
    ))
}

/// `batches` through `stages`, on this thread (units already run in
/// parallel).
fn run_pipeline_here(batches: Vec<RecordBatch>, stages: &[Stage]) -> Result<Vec<RecordBatch>> {
    let mut out = Vec::with_capacity(batches.len());
    for b in batches {
        out.extend(apply_stages(b, stages)?);
    }
    Ok(out)
}

/// A unit's groups: those whose `key` is none of `edges` as batches, the
/// others in a part of their own.
fn emit_unit(
    spec: &Spec<'_>,
    key: usize,
    edges: [Option<i64>; 2],
    p: Partial,
    schema: &SchemaRef,
) -> Result<(Vec<RecordBatch>, Option<Part>)> {
    let mut on_edges: Option<Part> = None;
    let mut out = Vec::with_capacity(p.parts.len());
    for part in p.parts {
        let keys = spec.key_columns(&part)?;
        let shared = groups_with(&keys[key], edges)?;
        if shared.is_empty() {
            out.push(spec.emit_with_keys(part, keys, schema)?);
            continue;
        }
        let kept = match &mut on_edges {
            Some(kept) => kept,
            None => on_edges.insert(spec.part(part.table.as_ref())?),
        };
        spec.merge_groups(kept, &part, shared.iter().copied())?;
        let all = spec.emit_with_keys(part, keys, schema)?;
        let mut keep = vec![true; all.num_rows()];
        for &g in &shared {
            keep[g as usize] = false;
        }
        out.push(filter_record_batch(&all, &BooleanArray::from(keep))?);
    }
    Ok((out, on_edges))
}

/// The groups (rows of `keys`) whose value is one of `edges`.
fn groups_with(keys: &ArrayRef, edges: [Option<i64>; 2]) -> Result<Vec<u32>> {
    if edges == [None, None] {
        return Ok(vec![]);
    }
    let values = cast(keys, &DataType::Int64)?;
    let values = values.as_primitive::<Int64Type>();
    Ok((0..values.len())
        .filter(|&g| values.is_valid(g) && edges.contains(&Some(values.value(g))))
        .map(|g| g as u32)
        .collect())
}

/// The groups of `parts`, merged in their order (the input's, which
/// `first`, `last` and the like follow).
fn merge_in_order(
    spec: &Spec<'_>,
    mut parts: Vec<Part>,
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    // A unit that met a key too long to pack moved to byte rows; tables
    // merge only with tables of their form.
    if (parts.iter()).any(|p| p.table.as_ref().is_some_and(GroupTable::is_rows)) {
        for p in &mut parts {
            if let (Some(t), Some(e)) = (&mut p.table, &spec.encoder) {
                t.convert_to_rows(e)?;
            }
        }
    }
    let mut all = spec.part(parts[0].table.as_ref())?;
    for part in &parts {
        spec.merge_into(&mut all, part, 0, 1)?;
    }
    spec.emit(all, schema)
}

/// `batches` with runs of small ones concatenated.
fn coalesce(
    batches: impl Iterator<Item = RecordBatch>,
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let (mut out, mut small, mut rows) = (Vec::new(), Vec::new(), 0);
    for b in batches.filter(|b| b.num_rows() > 0) {
        if b.num_rows() >= COALESCE_BELOW {
            out.push(b);
            continue;
        }
        rows += b.num_rows();
        small.push(b);
        if rows >= COALESCE_BELOW {
            out.push(concat_batches(schema, &small)?);
            (small, rows) = (Vec::new(), 0);
        }
    }
    if !small.is_empty() {
        out.push(concat_batches(schema, &small)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::shared_edges;

    #[test]
    fn ranges_touching_at_their_ends_share_those_values() {
        // Given out of order, as units of several files may be.
        let edges = shared_edges(&[(5, 9), (1, 5), (10, 20), (20, 20), (20, 30)]).unwrap();
        assert_eq!(
            edges,
            vec![
                [Some(5), None],
                [None, Some(5)],
                [None, Some(20)],
                [Some(20), Some(20)],
                [Some(20), None],
            ]
        );
    }

    #[test]
    fn overlapping_ranges_are_not_clustered() {
        assert_eq!(shared_edges(&[(1, 10), (5, 20)]), None);
        // Nested in another range.
        assert_eq!(shared_edges(&[(1, 10), (3, 3)]), None);
        // Touching at its low end only: clustered, on that value.
        assert_eq!(
            shared_edges(&[(1, 10), (1, 1)]),
            Some(vec![[Some(1), None], [None, Some(1)]])
        );
    }
}
