//! Hash aggregation: thread-local pre-aggregation, then a partitioned merge.
//!
//! 1. Each thread folds the morsels it reads into its own group table and
//!    accumulators (keys hashed once, one table probe per row); input
//!    batches are dropped as soon as they are folded. A table that grows
//!    past [`SPLIT_GROUPS`] groups (high cardinality) splits into
//!    [`PARTITIONS`] tables by key hash, and later rows are bucketed by hash
//!    before they are folded (radix partitioning). Where every key column
//!    of a batch comes with its Parquet dictionary codes
//!    ([`crate::io::DictCodes`]), a row finds its group through an array
//!    indexed by the combined codes, and only the first row of each code
//!    goes through the table ([`CodeGroups`]).
//! 2. The per-thread tables are merged in parallel by hash partition: each
//!    partition owns the keys whose hash falls in it, so no two threads touch
//!    the same final group and no locks are taken. Split tables merge
//!    partition by partition into the largest thread's part, which is kept
//!    as it is instead of being re-inserted.
//! 3. Each partition emits its groups: keys decoded from the table, values
//!    from the accumulators.

mod clustered;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use rayon::prelude::*;

use super::pipeline::run_pipeline;
use super::spill_partition::{MAX_SPILL_LEVELS, Reader, partition_to_disk, read_file};
use super::{Budget, MorselInput};
use crate::error::{Result, SlothError};
use crate::expr::AggFunc;
use crate::io::{Dictionary, Selected};
use crate::kernels::accumulators::{self, Accumulator};
use crate::kernels::hash_table::{GroupTable, KeyEncoder, partition_of};
use crate::kernels::packed_keys::NullKeys;
use crate::memory::{Reservation, SpillFile};
use crate::physical::{AggregateExpr, Stage};
use crate::physical_expr::PhysicalExpr;
use crate::physical_expr::eval::evaluate_array;

/// Below this many groups in total the merge runs as one partition.
const PARALLEL_GROUPS: usize = 1 << 14;

/// By default a thread's table splits into 32 hash partitions
/// once it holds this many groups (see [`crate::exec::ExecContext`]). Below
/// it, one table stays in cache and bucketing rows by partition only costs a
/// pass: db-benchmark q3/q5/q7 (100K groups) ran 10% faster unsplit than
/// split at 16K; 10M groups (q10) gain from splitting, here or at 16K alike.
pub const SPLIT_GROUPS: usize = 1 << 18;

/// Hash partitions of a split table (a power of two, several per core so
/// the final merge balances).
const PARTITIONS: usize = 32;

/// What an aggregation computes, shared by all threads.
struct Spec<'a> {
    keys: &'a [PhysicalExpr],
    aggs: &'a [AggregateExpr],
    key_types: Vec<DataType>,
    arg_types: Vec<Vec<DataType>>,
    encoder: Option<KeyEncoder>,
    /// Groups past which a thread's table splits into partitions.
    split_groups: usize,
    /// Where the rows come from (its size guides how much a split table
    /// reserves).
    input: &'a MorselInput,
    /// The scan column each key is, where it is one (its dictionary codes
    /// may come with the batches: [`Spec::groups_by_codes`]).
    key_columns: Vec<Option<usize>>,
    /// Rows grouped through their keys' dictionary codes.
    rows_by_code: AtomicUsize,
    /// The query's memory, which each thread's groups reserve.
    budget: Budget<'a>,
}

/// Bytes an aggregate's state is reckoned to take per group (most
/// accumulators hold one or two 8-byte values per group).
const STATE_BYTES_PER_GROUP: usize = 16;

/// Most combined dictionary codes a thread maps to groups directly.
const MAX_CODES: usize = 1 << 17;

/// A code not seen yet.
const UNSEEN: u32 = u32::MAX;

/// A thread's groups by dictionary code, for batches whose keys all come
/// with codes ([`crate::io::DictCodes`]): the keys' codes of a row combine
/// into one number (mixed radix, first key most significant), and the group
/// of each number is found once, through the table.
struct CodeGroups {
    /// The dictionaries of the keys, in key order.
    dictionaries: Vec<Arc<Dictionary>>,
    /// Group of each combined code, or [`UNSEEN`].
    groups: Vec<u32>,
    /// How many of `groups` are still [`UNSEEN`].
    unseen: usize,
}

/// Groups and their aggregate state: a whole table, or one hash partition.
struct Part {
    table: Option<GroupTable>,
    accs: Vec<Box<dyn Accumulator>>,
}

/// One thread's groups: one part, or [`PARTITIONS`] once it grew past
/// `split_groups` (high-cardinality keys: the final merge then combines
/// each partition's parts without re-inserting one thread's groups).
struct Partial {
    parts: Vec<Part>,
    rows: Vec<u32>,
    groups: Vec<u32>,
    hashes: Vec<u64>,
    /// Rows of the batch bucketed by partition, and where each bucket starts.
    order: Vec<u32>,
    starts: Vec<usize>,
    /// Rows folded so far.
    rows_seen: usize,
    /// Rows this partial is expected to fold in all (after the scan's
    /// filters), which a split table's reservation is sized for.
    rows_expected: f64,
    /// Rows folded and groups made when the whole table first passed half
    /// the split size: how fast groups still came, for [`expected_groups`].
    halfway: Option<(usize, usize)>,
    /// Groups by dictionary code while the table is whole.
    by_code: Option<CodeGroups>,
    /// Combined codes of a batch's rows.
    combined: Vec<u32>,
    /// The memory the groups hold.
    reservation: Reservation,
}

impl Spec<'_> {
    /// An empty part whose table has the form of `like` (or the encoder's).
    fn part(&self, like: Option<&GroupTable>) -> Result<Part> {
        let accs = self
            .aggs
            .iter()
            .zip(&self.arg_types)
            .map(|(a, t)| accumulators::create(a.func, a.distinct, t, &a.data_type))
            .collect::<Result<_>>()?;
        let table = self.encoder.as_ref().map(|e| match like {
            Some(t) => GroupTable::new_like(e, t),
            None => GroupTable::new(e),
        });
        Ok(Part { table, accs })
    }

    /// True if an aggregate depends on input order (`first`, `last`,
    /// `string_agg`, whose ties keep input order): then partials merge in
    /// input order.
    fn order_sensitive(&self) -> bool {
        self.aggs.iter().any(|a| {
            matches!(
                a.func,
                AggFunc::First | AggFunc::Last | AggFunc::StringAgg(_) | AggFunc::ArrayAgg(_)
            )
        })
    }

    /// A partial for one thread's share of the input.
    fn partial(&self) -> Result<Partial> {
        let total: usize = self.input.units.iter().map(|u| u.num_rows()).sum();
        self.partial_expecting(total as f64 / rayon::current_num_threads().max(1) as f64)
    }

    /// A partial for `rows` rows of input, before the scan's filters.
    fn partial_expecting(&self, rows: f64) -> Result<Partial> {
        let kept = self.input.filter.selectivity().unwrap_or(1.0);
        Ok(Partial {
            rows_expected: rows * kept,
            parts: vec![self.part(None)?],
            rows: vec![],
            groups: vec![],
            hashes: vec![],
            order: vec![],
            starts: vec![],
            rows_seen: 0,
            halfway: None,
            by_code: None,
            combined: vec![],
            reservation: self.budget.pool.reservation("hash aggregate"),
        })
    }

    /// Reserves what `p`'s groups take now; fails when the query's memory
    /// cannot hold them (the aggregate then partitions its input to disk).
    fn account(&self, p: &mut Partial) -> Result<()> {
        let groups: usize = p.parts.iter().map(Self::num_groups).sum();
        let tables: usize = (p.parts.iter().filter_map(|part| part.table.as_ref()))
            .map(GroupTable::memory_size)
            .sum();
        let state = groups * STATE_BYTES_PER_GROUP * self.aggs.len();
        // States that grow with the values (string extremes, collected
        // values, distinct sets) on top.
        let held: usize = (p.parts.iter().flat_map(|part| &part.accs))
            .map(|acc| acc.held_bytes())
            .sum();
        p.reservation.try_resize(tables + state + held)
    }

    fn num_groups(part: &Part) -> usize {
        part.table.as_ref().map_or(1, |t| t.len())
    }

    /// Folds one batch into `p`; where it comes with a selection, only the
    /// selected rows. Keys and arguments are computed for every row of the
    /// batch; should that fail on a row the filter rejected (an overflow, a
    /// cast), the selected rows are copied out and folded alone.
    fn update(&self, p: &mut Partial, batch: Selected) -> Result<()> {
        self.fold_batch(p, batch)?;
        self.account(p)
    }

    fn fold_batch(&self, p: &mut Partial, batch: Selected) -> Result<()> {
        let inputs = match self.inputs(&batch.batch) {
            Ok(inputs) => inputs,
            Err(e) if batch.rows.is_none() => return Err(e),
            Err(_) => {
                let batch = Selected::all(batch.materialize()?);
                let inputs = self.inputs(&batch.batch)?;
                return self.fold_rows(p, &batch, inputs);
            }
        };
        self.fold_rows(p, &batch, inputs)
    }

    /// The aggregate arguments (cast to what the accumulators take) and the
    /// key columns of `batch`.
    fn inputs(&self, batch: &RecordBatch) -> Result<(Vec<Vec<ArrayRef>>, Vec<ArrayRef>)> {
        let values = self
            .aggs
            .iter()
            .zip(&self.arg_types)
            .map(|(agg, types)| {
                let v = agg
                    .args
                    .iter()
                    .map(|e| evaluate_array(e, batch))
                    .collect::<Result<Vec<_>>>()?;
                accumulators::cast_inputs(&v, types)
            })
            .collect::<Result<Vec<_>>>()?;
        let keys = self
            .keys
            .iter()
            .map(|k| evaluate_array(k, batch))
            .collect::<Result<Vec<_>>>()?;
        Ok((values, keys))
    }

    fn fold_rows(
        &self,
        p: &mut Partial,
        batch: &Selected,
        (values, keys): (Vec<Vec<ArrayRef>>, Vec<ArrayRef>),
    ) -> Result<()> {
        let n = batch.batch.num_rows();
        if batch.rows.is_none() && p.rows.len() < n {
            p.rows.extend(p.rows.len() as u32..n as u32);
        }
        let rows: &[u32] = match &batch.rows {
            Some(rows) => rows,
            None => &p.rows[..n],
        };
        let Some(encoder) = &self.encoder else {
            p.groups.clear();
            p.groups.resize(rows.len(), 0);
            return update_accs(&mut p.parts[0], &values, rows, &p.groups);
        };
        if p.parts.len() == 1 {
            let (part, map, combined) = (&mut p.parts[0], &mut p.by_code, &mut p.combined);
            let codes = (batch, rows, combined);
            if self.groups_by_codes(encoder, part, map, codes, &keys, &mut p.groups)? {
                p.rows_seen += rows.len();
                self.rows_by_code.fetch_add(rows.len(), Ordering::Relaxed);
                update_accs(part, &values, rows, &p.groups)?;
                return self.split_if_large(p);
            }
        }
        let first = p.parts[0].table.as_ref().expect("keyed");
        let first_is_rows = first.is_rows();
        let encoded = encoder.encode_to_insert(first, &keys, &mut p.hashes)?;
        let selected = || rows.iter().map(|&r| r as usize);
        p.rows_seen += rows.len();
        if p.parts.len() == 1 {
            let part = &mut p.parts[0];
            p.groups.clear();
            let table = part.table.as_mut().expect("keyed");
            table.insert_rows(encoder, &encoded, &p.hashes, Some(rows), &mut p.groups)?;
            update_accs(part, &values, rows, &p.groups)?;
            return self.split_if_large(p);
        }
        if encoded.is_rows() && !first_is_rows {
            // Partitions follow key hashes, which change with the form.
            let whole = self.collapse_to_rows(std::mem::take(&mut p.parts))?;
            p.parts = self.split(whole)?;
        }
        // Bucket the rows by partition (counting sort), then fold each bucket.
        p.starts.clear();
        p.starts.resize(PARTITIONS + 1, 0);
        for r in selected() {
            p.starts[partition_of(p.hashes[r], PARTITIONS) + 1] += 1;
        }
        for q in 0..PARTITIONS {
            p.starts[q + 1] += p.starts[q];
        }
        p.order.resize(rows.len(), 0);
        let mut fill = p.starts.clone();
        for &r in rows {
            let q = partition_of(p.hashes[r as usize], PARTITIONS);
            p.order[fill[q]] = r;
            fill[q] += 1;
        }
        for (q, part) in p.parts.iter_mut().enumerate() {
            let bucket = &p.order[p.starts[q]..p.starts[q + 1]];
            if bucket.is_empty() {
                continue;
            }
            p.groups.clear();
            let table = part.table.as_mut().expect("keyed");
            table.insert_rows(encoder, &encoded, &p.hashes, Some(bucket), &mut p.groups)?;
            update_accs(part, &values, bucket, &p.groups)?;
        }
        Ok(())
    }

    /// Splits a whole table that grew past `split_groups` into partitions.
    fn split_if_large(&self, p: &mut Partial) -> Result<()> {
        if p.parts.len() == 1
            && p.halfway.is_none()
            && table_len(&p.parts[0]) > self.split_groups / 2
        {
            p.halfway = Some((p.rows_seen, table_len(&p.parts[0])));
        }
        if p.parts.len() == 1 && table_len(&p.parts[0]) > self.split_groups {
            let whole = p.parts.pop().expect("one part");
            p.parts = self.split(whole)?;
            // Group ids are now per partition.
            p.by_code = None;
            self.reserve_after_split(p)?;
        }
        Ok(())
    }

    /// The groups of the selected `rows` of `batch` into `groups`, found
    /// through the keys' dictionary codes ([`CodeGroups`]): each combined
    /// code not seen before is looked up (or added) in the table once, by
    /// the key values of its first row, and every row then takes its
    /// code's group. False, with nothing done, when some key has no codes
    /// in this batch or their combinations exceed [`MAX_CODES`].
    fn groups_by_codes(
        &self,
        encoder: &KeyEncoder,
        part: &mut Part,
        map: &mut Option<CodeGroups>,
        (batch, rows, combined): (&Selected, &[u32], &mut Vec<u32>),
        keys: &[ArrayRef],
        groups: &mut Vec<u32>,
    ) -> Result<bool> {
        let mut codes = Vec::with_capacity(keys.len());
        let mut size = 1usize;
        for c in &self.key_columns {
            let Some(d) = c.and_then(|c| batch.codes_of(c)) else {
                return Ok(false);
            };
            size = size.saturating_mul(d.dictionary.entries());
            codes.push(d);
        }
        if size > MAX_CODES {
            return Ok(false);
        }
        let same = |m: &CodeGroups| {
            (m.dictionaries.iter().zip(&codes)).all(|(a, b)| Arc::ptr_eq(a, &b.dictionary))
        };
        // Each Parquet column chunk has its own dictionary, so a map is
        // fresh at every row group for most scans.
        let fresh = !map.as_ref().is_some_and(same);
        if fresh {
            *map = Some(CodeGroups {
                dictionaries: codes.iter().map(|d| d.dictionary.clone()).collect(),
                groups: vec![UNSEEN; size],
                unseen: size,
            });
        }
        let map = map.as_mut().expect("made above");
        // Every row of the batch, or a selection (indirect, slower). One
        // key over every row is its own combined code: no copy.
        let whole = batch.rows.is_none();
        let combined: &[u32] = if whole && codes.len() == 1 {
            &codes[0].codes
        } else {
            combined.clear();
            match whole {
                true => combined.extend_from_slice(&codes[0].codes),
                false => combined.extend(rows.iter().map(|&r| codes[0].codes[r as usize])),
            }
            for d in &codes[1..] {
                let (n, c) = (d.dictionary.entries() as u32, &d.codes);
                match whole {
                    true => (combined.iter_mut().zip(c.iter())).for_each(|(x, &c)| *x = *x * n + c),
                    false => (combined.iter_mut().zip(rows))
                        .for_each(|(x, &r)| *x = *x * n + c[r as usize]),
                }
            }
            combined
        };
        if !fresh {
            groups.clear();
            let mut unseen = false;
            groups.extend(combined.iter().map(|&c| {
                let g = map.groups[c as usize];
                unseen |= g == UNSEEN;
                g
            }));
            if !unseen {
                return Ok(true);
            }
        }
        // Codes met for the first time: the first row of each, marked seen.
        // The scan stops once no code is left unseen: 100 codes drawn
        // evenly are all met after about 500 rows.
        let mut firsts: Vec<u32> = Vec::new();
        let mut first_codes: Vec<u32> = Vec::new();
        for (&c, &r) in combined.iter().zip(rows) {
            if map.unseen == 0 {
                break;
            }
            let g = &mut map.groups[c as usize];
            if *g == UNSEEN {
                *g = 0;
                map.unseen -= 1;
                firsts.push(r);
                first_codes.push(c);
            }
        }
        let table = part.table.as_mut().expect("keyed");
        let at = arrow::array::UInt32Array::from(firsts);
        let values = keys
            .iter()
            .map(|k| Ok(arrow::compute::take(k, &at, None)?))
            .collect::<Result<Vec<_>>>()?;
        let mut hashes = Vec::new();
        let encoded = encoder.encode_to_insert(table, &values, &mut hashes)?;
        groups.clear();
        table.insert_batch(encoder, &encoded, &hashes, groups)?;
        for (&c, &g) in first_codes.iter().zip(groups.iter()) {
            map.groups[c as usize] = g;
        }
        groups.clear();
        groups.extend(combined.iter().map(|&c| map.groups[c as usize]));
        Ok(true)
    }

    /// Reserves each partition of a just-split table its share of the
    /// groups the partial is expected to end with: groups growing with rows
    /// as they have so far, over the rows it expects
    /// ([`Partial::rows_expected`]: a thread's share of the input, or one
    /// unit's, times the scan filter's selectivity). A table
    /// of 10M groups otherwise copies itself at every doubling, into fresh
    /// pages the kernel must zero. The tables grow only as far as the
    /// query's memory allows for the groups expected; past that they grow
    /// by doubling, reserving as they go. Should not even half the groups
    /// expected of all threads fit the limit, the aggregate fails with
    /// [`SlothError::MemoryLimit`] at once, to spill before it has filled
    /// the memory in vain (a wrong guess only costs a spill that was not
    /// needed).
    fn reserve_after_split(&self, p: &mut Partial) -> Result<()> {
        let rows = p.rows_expected;
        let groups: usize = p.parts.iter().map(table_len).sum();
        if p.rows_seen == 0 || rows <= p.rows_seen as f64 {
            return Ok(());
        }
        let expected = expected_groups(p.halfway, (p.rows_seen, groups), rows);
        let more = (expected as usize).saturating_sub(groups) / PARTITIONS;
        // The tables' size grows with their groups.
        let tables: usize = (p.parts.iter().filter_map(|part| part.table.as_ref()))
            .map(GroupTable::memory_size)
            .sum();
        let projected = tables as f64 * expected / groups.max(1) as f64;
        let state = expected as usize * STATE_BYTES_PER_GROUP * self.aggs.len();
        let need = projected as usize + state;
        // Every thread is expected to need as much: judged against the
        // limit, not against what the other threads hold so far, so that
        // the choice does not depend on which thread splits first.
        let all = need.saturating_mul(rayon::current_num_threads().max(1));
        let limit = self.budget.pool.limit();
        if all / 2 > limit {
            return Err(SlothError::MemoryLimit(format!(
                "hash aggregate: its groups are expected to need about {}, over the limit of {}",
                crate::memory::format_bytes(all as u64),
                crate::memory::format_bytes(limit as u64)
            )));
        }
        if p.reservation.try_resize(need).is_err() {
            return Ok(());
        }
        for part in &mut p.parts {
            if let Some(t) = &mut part.table {
                t.reserve(more);
            }
        }
        Ok(())
    }

    /// Adds the groups of `theirs` whose hash falls in `partition` (all when
    /// `partitions` is 1) to `mine`.
    fn merge_into(
        &self,
        mine: &mut Part,
        theirs: &Part,
        partition: usize,
        partitions: usize,
    ) -> Result<()> {
        match &theirs.table {
            Some(their_table) => {
                let groups = (0..their_table.len() as u32).filter(|&g| {
                    partitions == 1 || partition_of(their_table.hash_of(g), partitions) == partition
                });
                self.merge_groups(mine, theirs, groups)
            }
            // One global group.
            None => self.merge_states(mine, theirs, &[0], &[0]),
        }
    }

    /// Adds the groups `groups` of `theirs` (a keyed part) to `mine`.
    fn merge_groups(
        &self,
        mine: &mut Part,
        theirs: &Part,
        groups: impl Iterator<Item = u32>,
    ) -> Result<()> {
        let (Some(table), Some(their_table)) = (&mut mine.table, &theirs.table) else {
            unreachable!("merge_groups takes keyed parts")
        };
        let (mut src, mut dst) = (Vec::new(), Vec::new());
        for g in groups {
            src.push(g);
            dst.push(table.insert_group_from(their_table, g));
        }
        self.merge_states(mine, theirs, &src, &dst)
    }

    /// Merges the aggregate states of `theirs`' groups `src` into `mine`'s
    /// groups `dst`.
    fn merge_states(&self, mine: &mut Part, theirs: &Part, src: &[u32], dst: &[u32]) -> Result<()> {
        let n = Self::num_groups(mine);
        for (m, t) in mine.accs.iter_mut().zip(&theirs.accs) {
            m.merge(t.as_ref(), src, dst, n)?;
        }
        Ok(())
    }

    /// `whole`'s groups dealt into [`PARTITIONS`] parts by hash.
    fn split(&self, whole: Part) -> Result<Vec<Part>> {
        // Each part's share of the groups, with room for the spread.
        let share = table_len(&whole) / PARTITIONS * 9 / 8;
        (0..PARTITIONS)
            .map(|q| {
                let mut part = self.part(whole.table.as_ref())?;
                if let Some(t) = &mut part.table {
                    t.reserve(share);
                }
                self.merge_into(&mut part, &whole, q, PARTITIONS)?;
                Ok(part)
            })
            .collect()
    }

    /// All of `parts` in one part, with byte-row keys (where keys are not
    /// integers).
    fn collapse_to_rows(&self, mut parts: Vec<Part>) -> Result<Part> {
        if let Some(e) = &self.encoder {
            for part in &mut parts {
                part.table.as_mut().expect("keyed").convert_to_rows(e)?;
            }
        }
        let mut whole = self.part(parts[0].table.as_ref())?;
        for part in &parts {
            self.merge_into(&mut whole, part, 0, 1)?;
        }
        Ok(whole)
    }

    fn emit(&self, p: Part, schema: &SchemaRef) -> Result<RecordBatch> {
        let keys = self.key_columns(&p)?;
        self.emit_with_keys(p, keys, schema)
    }

    /// The key columns of `p`'s groups, in group order.
    fn key_columns(&self, p: &Part) -> Result<Vec<ArrayRef>> {
        match (&p.table, &self.encoder) {
            (Some(t), Some(e)) => t.key_columns(e, &self.key_types),
            _ => Ok(vec![]),
        }
    }

    /// `p`'s groups, whose key columns are `columns`.
    fn emit_with_keys(
        &self,
        mut p: Part,
        mut columns: Vec<ArrayRef>,
        schema: &SchemaRef,
    ) -> Result<RecordBatch> {
        let n = Self::num_groups(&p);
        let num_keys = columns.len();
        for (acc, field) in p.accs.iter_mut().zip(&schema.fields()[num_keys..]) {
            columns.push(crate::kernels::cast_if_needed(
                &acc.finish(n)?,
                field.data_type(),
            )?);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(n));
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &options,
        )?)
    }
}

fn table_len(part: &Part) -> usize {
    part.table.as_ref().map_or(0, GroupTable::len)
}

fn update_accs(
    part: &mut Part,
    values: &[Vec<ArrayRef>],
    rows: &[u32],
    groups: &[u32],
) -> Result<()> {
    let n = Spec::num_groups(part);
    for (acc, v) in part.accs.iter_mut().zip(values) {
        acc.update(v, rows, groups, n)?;
    }
    Ok(())
}

/// What [`hash_aggregate`] returns.
pub struct Aggregated {
    /// One row per group, after the stages the aggregate was given.
    pub batches: Vec<RecordBatch>,
    /// Groups emitted, before those stages.
    pub groups: usize,
    /// How many input rows found their group through the dictionary codes
    /// of their keys rather than by hashing them.
    pub rows_by_code: usize,
    /// How many units were aggregated one at a time, their key ranges
    /// being disjoint ([`clustered`]); 0 when the input was not.
    pub units_alone: usize,
}

/// Groups the input by `keys` and computes `aggs`; no keys means one global
/// group. A thread's table splits into hash partitions past `split_groups`.
/// The groups go through `then` (a HAVING filter, a projection) as they are
/// emitted: where units are aggregated one at a time, each unit's groups at
/// once, so that only the groups that pass are held.
///
/// Should the groups outgrow the query's memory, the aggregate starts
/// over, partitioned: it reads its input again, writes each row to one of
/// [`SPILL_PARTITIONS`](super::SPILL_PARTITIONS) spill files by the hash of its keys, and aggregates
/// the files, one per thread at a time (partitioning a file again, with
/// another hash, if its groups still do not fit). Equal keys meet in one file, so each
/// file's groups are final.
pub fn hash_aggregate(
    input: &MorselInput,
    keys: &[PhysicalExpr],
    aggs: &[AggregateExpr],
    schema: &SchemaRef,
    split_groups: usize,
    budget: Budget<'_>,
    then: &[Stage],
) -> Result<Aggregated> {
    let spec = AggregateSpec {
        keys,
        aggs,
        schema,
        split_groups,
        budget,
        then,
    };
    spilling_aggregate(input, &spec)
}

/// The arguments of [`hash_aggregate`], passed down its levels.
struct AggregateSpec<'a> {
    keys: &'a [PhysicalExpr],
    aggs: &'a [AggregateExpr],
    schema: &'a SchemaRef,
    split_groups: usize,
    budget: Budget<'a>,
    /// Stages each emitted batch of groups goes through.
    then: &'a [Stage],
}

fn spilling_aggregate(input: &MorselInput, spec: &AggregateSpec<'_>) -> Result<Aggregated> {
    let first = aggregate_in_memory(input, spec);
    // One group (no keys) has nothing to partition.
    if !matches!(first, Err(SlothError::MemoryLimit(_))) || spec.keys.is_empty() {
        return first;
    }
    drop(first);
    let mut queue: Vec<(SpillFile, u32)> =
        partition_files(&|emit| input.for_each_ordered(emit), spec, 0)?;
    let mut out = Aggregated {
        batches: vec![],
        groups: 0,
        rows_by_code: 0,
        units_alone: 0,
    };
    // The files hold disjoint groups: as many as there are threads are
    // aggregated at once, each mostly on a thread of its own, which spares
    // the per-thread tables of one file and their merge.
    while !queue.is_empty() {
        let round = queue.split_off(queue.len().saturating_sub(rayon::current_num_threads()));
        let done: Vec<Result<SpilledFile>> = round
            .into_par_iter()
            .map(|(file, level)| aggregate_file(file, level, spec))
            .collect();
        for file in done {
            match file? {
                SpilledFile::Aggregated(agg) => {
                    out.groups += agg.groups;
                    out.batches.extend(agg.batches);
                }
                SpilledFile::Partitioned(files) => queue.extend(files),
            }
        }
    }
    Ok(out)
}

/// What became of a spill file of rows.
enum SpilledFile {
    /// Its groups.
    Aggregated(Aggregated),
    /// Too large still: its rows, partitioned again.
    Partitioned(Vec<(SpillFile, u32)>),
}

/// The rows `read` hands over, written to spill files by the hash of the
/// keys at `level`, each file paired with the level its rows go on at.
fn partition_files(
    read: Reader<'_>,
    spec: &AggregateSpec<'_>,
    level: u32,
) -> Result<Vec<(SpillFile, u32)>> {
    if level >= MAX_SPILL_LEVELS {
        return Err(SlothError::MemoryLimit(format!(
            "hash aggregate: the groups of one key range still do not fit after \
             {MAX_SPILL_LEVELS} levels of partitioning"
        )));
    }
    let files = partition_to_disk(read, spec.keys, spec.budget.spill, level)?;
    Ok(files
        .into_iter()
        .flatten()
        .map(|f| (f, level + 1))
        .collect())
}

/// Aggregates one spill file's rows, or partitions them again if their
/// groups do not fit.
fn aggregate_file(file: SpillFile, level: u32, spec: &AggregateSpec<'_>) -> Result<SpilledFile> {
    // The file's rows are held while their groups are built.
    let mut rows = spec.budget.pool.reservation("hash aggregate");
    if rows.try_grow(file.memory_size()).is_err() {
        let files = partition_files(&|emit| read_file(&file, emit), spec, level)?;
        return Ok(SpilledFile::Partitioned(files));
    }
    let part = MorselInput::from_batches(file.read_all()?);
    drop(file);
    match aggregate_in_memory(&part, spec) {
        Ok(agg) => Ok(SpilledFile::Aggregated(agg)),
        Err(SlothError::MemoryLimit(_)) => {
            let files = partition_files(&|emit| part.for_each_ordered(emit), spec, level)?;
            Ok(SpilledFile::Partitioned(files))
        }
        Err(e) => Err(e),
    }
}

/// One pass over the input with every group in memory; fails with
/// [`SlothError::MemoryLimit`] when the groups outgrow the query's memory.
fn aggregate_in_memory(input: &MorselInput, spec: &AggregateSpec<'_>) -> Result<Aggregated> {
    let AggregateSpec {
        keys,
        aggs,
        schema,
        split_groups,
        budget,
        then,
    } = *spec;
    let key_types: Vec<DataType> = keys.iter().map(|k| k.data_type.clone()).collect();
    let spec = Spec {
        keys,
        aggs,
        encoder: if keys.is_empty() {
            None
        } else {
            Some(KeyEncoder::new(&key_types, NullKeys::Group)?)
        },
        key_types,
        split_groups,
        input,
        key_columns: keys.iter().map(|k| input.scan_column(k)).collect(),
        rows_by_code: AtomicUsize::new(0),
        budget,
        arg_types: aggs
            .iter()
            .map(|a| {
                let t: Vec<DataType> = a.args.iter().map(|e| e.data_type.clone()).collect();
                accumulators::input_types(a.func, &t)
            })
            .collect(),
    };
    if let Some(clustering) = clustered::clustering(&spec) {
        let (batches, groups) = clustered::aggregate(&spec, &clustering, schema, then)?;
        return Ok(Aggregated {
            batches,
            groups,
            rows_by_code: spec.rows_by_code.load(Ordering::Relaxed),
            units_alone: clustering.units(),
        });
    }
    let fold = |p: &mut Result<Partial>, batch: Selected| match p {
        Ok(p) => spec.update(p, batch),
        Err(_) => Ok(()),
    };
    // `first`/`last` need the partials in input order; the others are
    // better served by one partial per thread.
    let in_order = spec.order_sensitive();
    let partials: Vec<Result<Partial>> = if in_order {
        input.fold(|| spec.partial(), fold)?
    } else {
        input.fold_per_thread(|| spec.partial(), fold)?
    };
    let partials = partials.into_iter().collect::<Result<Vec<_>>>()?;
    // The merge builds its tables beside the threads' own: as much again.
    let held: usize = partials.iter().map(|p| p.reservation.size()).sum();
    let mut merging = budget.pool.reservation("hash aggregate merge");
    merging.try_grow(held)?;
    let mut parts: Vec<Vec<Part>> = partials.into_iter().map(|p| p.parts).collect();
    if parts.is_empty() {
        parts.push(vec![spec.part(None)?]);
    }
    let batches = if parts.iter().any(|p| p.len() > 1) {
        merge_partitioned(&spec, parts, schema)?
    } else {
        let mut wholes: Vec<Part> = parts.into_iter().flatten().collect();
        // A thread that met a key too long to pack moved to byte rows; the
        // merge hashes every table's keys alike, so all move.
        if wholes
            .iter()
            .any(|p| p.table.as_ref().is_some_and(GroupTable::is_rows))
        {
            for p in &mut wholes {
                if let (Some(t), Some(e)) = (&mut p.table, &spec.encoder) {
                    t.convert_to_rows(e)?;
                }
            }
        }
        let total: usize = wholes.iter().map(Spec::num_groups).sum();
        if wholes.len() == 1 {
            vec![spec.emit(wholes.pop().expect("one part"), schema)?]
        } else {
            let partitions = if keys.is_empty() || total < PARALLEL_GROUPS {
                1
            } else {
                rayon::current_num_threads() * 2
            };
            let wholes = &wholes;
            (0..partitions)
                .into_par_iter()
                .map(|q| {
                    let mut out = spec.part(wholes[0].table.as_ref())?;
                    for w in wholes {
                        spec.budget.cancel.check()?;
                        spec.merge_into(&mut out, w, q, partitions)?;
                    }
                    spec.emit(out, schema)
                })
                .collect::<Result<_>>()?
        }
    };
    let batches: Vec<RecordBatch> = batches
        .into_iter()
        .filter(|b| b.num_rows() > 0 || keys.is_empty())
        .collect();
    Ok(Aggregated {
        groups: batches.iter().map(|b| b.num_rows()).sum(),
        batches: run_pipeline(batches, then)?,
        rows_by_code: spec.rows_by_code.load(Ordering::Relaxed),
        units_alone: 0,
    })
}

/// Final merge when some thread split its table: every thread's groups in
/// the same [`PARTITIONS`] parts (splitting whole tables, moving all to byte
/// rows if one did), then each partition merged into its largest part, in
/// parallel.
fn merge_partitioned(
    spec: &Spec<'_>,
    parts: Vec<Vec<Part>>,
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
    let any_rows = parts
        .iter()
        .flatten()
        .any(|p| p.table.as_ref().is_some_and(GroupTable::is_rows));
    let mut by_thread: Vec<Vec<Part>> = parts
        .into_iter()
        .map(|thread| {
            let packed = thread
                .iter()
                .any(|p| p.table.as_ref().is_some_and(|t| !t.is_rows()));
            if any_rows && packed {
                spec.split(spec.collapse_to_rows(thread)?)
            } else if thread.len() == 1 {
                spec.split(thread.into_iter().next().expect("one part"))
            } else {
                Ok(thread)
            }
        })
        .collect::<Result<_>>()?;
    // Transpose: partition q's parts from every thread.
    let mut by_partition: Vec<Vec<Part>> = (0..PARTITIONS).map(|_| Vec::new()).collect();
    for thread in &mut by_thread {
        for (q, part) in thread.drain(..).enumerate() {
            by_partition[q].push(part);
        }
    }
    by_partition
        .into_par_iter()
        .map(|mut parts| {
            // The largest part is kept as it is, unless the merge must
            // follow input order.
            let base = if spec.order_sensitive() {
                0
            } else {
                (0..parts.len())
                    .max_by_key(|&i| table_len(&parts[i]))
                    .expect("a part per thread")
            };
            let mut base = parts.remove(base);
            // Room for every other group at once: growing by doubling
            // copies the keys into fresh pages each time.
            let more: usize = parts.iter().map(table_len).sum();
            if let Some(t) = &mut base.table {
                t.reserve(more);
            }
            for other in &parts {
                spec.budget.cancel.check()?;
                spec.merge_into(&mut base, other, 0, 1)?;
            }
            spec.emit(base, schema)
        })
        .collect()
}

/// Groups expected after `total` rows, from the `(rows, groups)` folded so
/// far and a checkpoint at about half those groups. While groups keep
/// coming at the rate they did (distinct keys, or keys in runs as in a
/// table sorted by them) they are extrapolated linearly. Where the rate
/// fell (keys repeating in no order), the estimate is the number of
/// distinct keys `d` for which `groups` is the expected count of distinct
/// values among `rows` random draws, `d (1 - e^(-rows/d))`, drawn `total`
/// times: it levels off at `d` instead of growing with the rows. (TPC-H
/// Q13's orders by customer at SF 10: 1M groups, where the linear guess
/// reserved tables for 6.5M.)
fn expected_groups(
    halfway: Option<(usize, usize)>,
    (rows, groups): (usize, usize),
    total: f64,
) -> f64 {
    let linear = (groups as f64 * total / rows.max(1) as f64).min(total);
    let Some((r1, g1)) = halfway else {
        return linear;
    };
    if rows <= r1 || groups <= g1 || r1 == 0 {
        return linear;
    }
    let early = g1 as f64 / r1 as f64;
    let late = (groups - g1) as f64 / (rows - r1) as f64;
    if late >= 0.9 * early {
        return linear;
    }
    let (n, g) = (rows as f64, groups as f64);
    let distinct_in = |draws: f64, d: f64| d * (1.0 - (-draws / d).exp());
    // distinct_in(n, d) grows with d from below g (at d = g) towards n.
    let (mut lo, mut hi) = (g, g * 1e12);
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if distinct_in(n, mid) < g {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    distinct_in(total, hi).min(linear)
}

#[cfg(test)]
mod tests {
    use super::expected_groups;
    use std::collections::HashSet;

    /// The (rows, groups) checkpoints at `half` and `2 * half` groups of
    /// the keys `keys` yields, and its distinct keys after `total` rows.
    fn observe(keys: impl Iterator<Item = u64>, half: usize, total: usize) -> [(usize, usize); 3] {
        let mut seen = HashSet::new();
        let (mut at_half, mut at_full) = ((0, 0), (0, 0));
        for (i, k) in keys.take(total).enumerate() {
            seen.insert(k);
            if at_half.0 == 0 && seen.len() > half {
                at_half = (i + 1, seen.len());
            }
            if at_full.0 == 0 && seen.len() > 2 * half {
                at_full = (i + 1, seen.len());
            }
        }
        [at_half, at_full, (total, seen.len())]
    }

    #[test]
    fn groups_level_off_for_repeating_keys_and_grow_for_new_ones() {
        let total = 2_000_000;
        let lcg = |d: u64| {
            let mut x = 12345u64;
            std::iter::repeat_with(move || {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) % d
            })
        };
        // Keys repeating in no order: 200K distinct over 2M rows.
        let [half, full, truth] = observe(lcg(200_000), 25_000, total);
        let got = expected_groups(Some(half), full, total as f64);
        let linear = full.1 as f64 * total as f64 / full.0 as f64;
        assert!(
            (got / truth.1 as f64 - 1.0).abs() < 0.1,
            "{got} vs {truth:?}"
        );
        assert!(linear > 4.0 * truth.1 as f64, "{linear}");
        // Keys in runs of 4 (a table sorted by them): linear.
        let [half, full, truth] = observe((0..).map(|i: u64| i / 4), 25_000, total);
        let got = expected_groups(Some(half), full, total as f64);
        assert!(
            (got / truth.1 as f64 - 1.0).abs() < 0.01,
            "{got} vs {truth:?}"
        );
        // Every key new: as many groups as rows.
        let [half, full, _] = observe(0.., 25_000, total);
        assert_eq!(
            expected_groups(Some(half), full, total as f64),
            total as f64
        );
        // No checkpoint: linear.
        assert_eq!(expected_groups(None, (100, 50), 1000.0), 500.0);
    }
}
