//! Hash aggregation: thread-local pre-aggregation, then a partitioned merge.
//!
//! 1. Each thread folds the morsels it reads into its own group table and
//!    accumulators (keys hashed once, one table probe per row); input
//!    batches are dropped as soon as they are folded.
//! 2. The per-thread tables are merged in parallel by hash partition: each
//!    partition owns the keys whose hash falls in it, so no two threads touch
//!    the same final group and no locks are taken.
//! 3. Each partition emits its groups: keys decoded from the table, values
//!    from the accumulators.

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use rayon::prelude::*;

use super::MorselInput;
use crate::error::Result;
use crate::kernels::accumulators::{self, Accumulator};
use crate::kernels::eval::evaluate_array;
use crate::kernels::hash_table::{GroupTable, KeyEncoder};
use crate::kernels::packed_keys::NullKeys;
use crate::physical::AggregateExpr;
use crate::physical::expr::PhysicalExpr;

/// Below this many groups in total the merge runs as one partition.
const PARALLEL_GROUPS: usize = 1 << 14;

/// What an aggregation computes, shared by all threads.
struct Spec<'a> {
    keys: &'a [PhysicalExpr],
    aggs: &'a [AggregateExpr],
    key_types: Vec<DataType>,
    arg_types: Vec<Vec<DataType>>,
    encoder: Option<KeyEncoder>,
}

/// One thread's groups and aggregate state.
struct Partial {
    table: Option<GroupTable>,
    accs: Vec<Box<dyn Accumulator>>,
    rows: Vec<u32>,
    groups: Vec<u32>,
    hashes: Vec<u64>,
}

impl Spec<'_> {
    fn partial(&self) -> Result<Partial> {
        let accs = self
            .aggs
            .iter()
            .zip(&self.arg_types)
            .map(|(a, t)| accumulators::create(a.func, a.distinct, t, &a.data_type))
            .collect::<Result<_>>()?;
        Ok(Partial {
            table: self.encoder.as_ref().map(GroupTable::new),
            accs,
            rows: vec![],
            groups: vec![],
            hashes: vec![],
        })
    }

    fn num_groups(&self, p: &Partial) -> usize {
        p.table.as_ref().map_or(1, |t| t.len())
    }

    /// Folds one batch into `p`.
    fn update(&self, p: &mut Partial, batch: &RecordBatch) -> Result<()> {
        let n = batch.num_rows();
        p.groups.clear();
        match (&mut p.table, &self.encoder) {
            (Some(table), Some(encoder)) => {
                let keys = self
                    .keys
                    .iter()
                    .map(|k| evaluate_array(k, batch))
                    .collect::<Result<Vec<_>>>()?;
                let encoded = encoder.encode_to_insert(table, &keys, &mut p.hashes)?;
                table.insert_batch(encoder, &encoded, &p.hashes, &mut p.groups)?;
            }
            _ => p.groups.resize(n, 0),
        }
        if p.rows.len() < n {
            p.rows.extend(p.rows.len() as u32..n as u32);
        }
        let num_groups = self.num_groups(p);
        for ((acc, agg), types) in p.accs.iter_mut().zip(self.aggs).zip(&self.arg_types) {
            let values = agg
                .args
                .iter()
                .map(|e| evaluate_array(e, batch))
                .collect::<Result<Vec<_>>>()?;
            let values = accumulators::cast_inputs(&values, types)?;
            acc.update(&values, &p.rows[..n], &p.groups, num_groups)?;
        }
        Ok(())
    }

    /// Merges the groups of `partials` whose hash falls in `partition`.
    fn merge(&self, partials: &[Partial], partition: usize, partitions: usize) -> Result<Partial> {
        let mut out = self.partial()?;
        // Partials share one key form (see `hash_aggregate`).
        if let (Some(mine), Some(theirs), Some(e)) = (
            &mut out.table,
            partials.first().and_then(|p| p.table.as_ref()),
            &self.encoder,
        ) {
            *mine = GroupTable::new_like(e, theirs);
        }
        let (mut src, mut dst) = (Vec::new(), Vec::new());
        for p in partials {
            src.clear();
            dst.clear();
            match (&mut out.table, &p.table) {
                (Some(table), Some(theirs)) => {
                    for g in 0..theirs.len() as u32 {
                        if partitions > 1
                            && partition_of(theirs.hash_of(g), partitions) != partition
                        {
                            continue;
                        }
                        src.push(g);
                        dst.push(table.insert_group_from(theirs, g));
                    }
                }
                _ => {
                    src.push(0);
                    dst.push(0);
                }
            }
            let n = self.num_groups(&out);
            for (mine, theirs) in out.accs.iter_mut().zip(&p.accs) {
                mine.merge(theirs.as_ref(), &src, &dst, n)?;
            }
        }
        Ok(out)
    }

    fn emit(&self, mut p: Partial, schema: &SchemaRef) -> Result<RecordBatch> {
        let n = self.num_groups(&p);
        let mut columns: Vec<ArrayRef> = match (&p.table, &self.encoder) {
            (Some(t), Some(e)) => t.key_columns(e, &self.key_types)?,
            _ => vec![],
        };
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

#[inline]
fn partition_of(hash: u64, partitions: usize) -> usize {
    // High bits: the tables index with the low ones.
    ((hash >> 40) as usize) % partitions
}

/// Groups the input by `keys` and computes `aggs`; no keys means one global group.
pub fn hash_aggregate(
    input: &MorselInput,
    keys: &[PhysicalExpr],
    aggs: &[AggregateExpr],
    schema: &SchemaRef,
) -> Result<Vec<RecordBatch>> {
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
        arg_types: aggs
            .iter()
            .map(|a| {
                let t: Vec<DataType> = a.args.iter().map(|e| e.data_type.clone()).collect();
                accumulators::input_types(a.func, &t)
            })
            .collect(),
    };
    let partials: Vec<Result<Partial>> = input.fold(
        || spec.partial(),
        |p, batch| match p {
            Ok(p) => spec.update(p, &batch),
            Err(_) => Ok(()),
        },
    )?;
    let mut partials = partials.into_iter().collect::<Result<Vec<_>>>()?;
    if partials.is_empty() {
        partials.push(spec.partial()?);
    }
    // A thread that met a key too long to pack moved to byte rows; the
    // merge hashes every partial's keys alike, so all move.
    if partials
        .iter()
        .any(|p| p.table.as_ref().is_some_and(GroupTable::is_rows))
    {
        for p in &mut partials {
            if let (Some(t), Some(e)) = (&mut p.table, &spec.encoder) {
                t.into_rows(e)?;
            }
        }
    }
    let total: usize = partials.iter().map(|p| spec.num_groups(p)).sum();
    let batches: Vec<RecordBatch> = if partials.len() == 1 {
        vec![spec.emit(partials.pop().expect("one partial"), schema)?]
    } else {
        let partitions = if keys.is_empty() || total < PARALLEL_GROUPS {
            1
        } else {
            rayon::current_num_threads() * 2
        };
        let partials = &partials;
        (0..partitions)
            .into_par_iter()
            .map(|p| spec.emit(spec.merge(partials, p, partitions)?, schema))
            .collect::<Result<_>>()?
    };
    Ok(batches
        .into_iter()
        .filter(|b| b.num_rows() > 0 || keys.is_empty())
        .collect())
}
