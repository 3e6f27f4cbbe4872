//! Morsel-driven input: a breaker (aggregate, join probe) pulls its input as
//! scan units that every thread reads, filters and projects itself, and folds
//! straight into its own state. Nothing between the reader and the breaker
//! is materialized.

use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use super::pipeline::apply_stages;
use crate::error::Result;
use crate::io::{ScanFilter, ScanUnit};
use crate::physical::{PhysicalPlan, Stage};

/// Independent units of input plus the stages each batch goes through.
pub struct MorselInput {
    /// Units to read.
    pub units: Vec<ScanUnit>,
    /// The scan's own filters, applied as units are read.
    pub filter: ScanFilter,
    /// Filter/project stages applied to each batch.
    pub stages: Vec<Stage>,
    /// Rows that came out of the stages (for metrics).
    pub rows: AtomicUsize,
}

impl MorselInput {
    /// Input that is already materialized.
    pub fn from_batches(batches: Vec<RecordBatch>) -> Self {
        MorselInput {
            units: batches.into_iter().map(ScanUnit::Batch).collect(),
            filter: ScanFilter::default(),
            stages: vec![],
            rows: AtomicUsize::new(0),
        }
    }

    /// The scan units of `plan` if it is a scan or a pipeline over a scan;
    /// `None` if it must be executed as a whole.
    pub fn stream(plan: &PhysicalPlan) -> Result<Option<Self>> {
        Ok(match plan {
            PhysicalPlan::Scan {
                source,
                projection,
                filters,
                metrics,
                ..
            } => Some(MorselInput {
                units: source.units(projection.as_deref(), filters, metrics)?,
                filter: ScanFilter::new(filters.clone()),
                stages: vec![],
                rows: AtomicUsize::new(0),
            }),
            PhysicalPlan::Pipeline { input, stages, .. } => Self::stream(input)?.map(|mut m| {
                m.stages.extend(stages.iter().cloned());
                m
            }),
            _ => None,
        })
    }

    /// Folds every batch into per-thread states made by `init`; returns the
    /// states in input order (the first state saw the earliest units).
    pub fn fold<T: Send>(
        &self,
        init: impl Fn() -> T + Sync + Send,
        f: impl Fn(&mut T, RecordBatch) -> Result<()> + Sync + Send,
    ) -> Result<Vec<T>> {
        self.units
            .par_iter()
            .with_min_len(1)
            .try_fold(&init, |mut state, unit| {
                for batch in unit.read(&self.filter)? {
                    if let Some(b) = apply_stages(batch, &self.stages)? {
                        self.rows.fetch_add(b.num_rows(), Ordering::Relaxed);
                        f(&mut state, b)?;
                    }
                }
                Ok(state)
            })
            .collect()
    }
}
