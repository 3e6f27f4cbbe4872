//! Morsel-driven input: a breaker (aggregate, join probe) pulls its input as
//! scan units that every thread reads, filters and projects itself, and folds
//! straight into its own state. Nothing between the reader and the breaker
//! is materialized.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use super::join::JoinTable;
use super::pipeline::apply_stages;
use crate::error::Result;
use crate::io::{ScanFilter, ScanUnit, Selected, SharedPages, TopKBound};
use crate::physical::{PhysicalPlan, Stage};
use crate::physical_expr::{Node, PhysicalExpr};

/// A step each batch of a [`MorselInput`] goes through.
pub enum Step {
    /// A filter or projection.
    Stage(Stage),
    /// A hash join that each batch probes.
    Probe(Arc<ProbeStep>),
}

/// A hash join run as a step of its probe side's morsels: each batch
/// probes the built table and the joined rows go on to the next step, so
/// the join's output is never materialized. Rows it emits after all
/// probing (a preserved build side's unmatched rows) follow the units.
pub struct ProbeStep {
    /// The built side.
    table: JoinTable,
    /// Rows that probed the table.
    pub rows_in: AtomicUsize,
    /// Rows the join emitted.
    pub rows_out: AtomicUsize,
}

impl ProbeStep {
    /// A step probing `table`.
    pub fn new(table: JoinTable) -> Arc<Self> {
        Arc::new(ProbeStep {
            table,
            rows_in: AtomicUsize::new(0),
            rows_out: AtomicUsize::new(0),
        })
    }

    /// The rows the join emits after all probing, counted.
    fn finish(&self) -> Result<Option<RecordBatch>> {
        let rows = self.table.finish()?.filter(|b| b.num_rows() > 0);
        if let Some(b) = &rows {
            self.rows_out.fetch_add(b.num_rows(), Ordering::Relaxed);
        }
        Ok(rows)
    }

    fn apply(&self, batch: &RecordBatch) -> Result<Option<RecordBatch>> {
        self.rows_in.fetch_add(batch.num_rows(), Ordering::Relaxed);
        let joined = self.table.probe(batch)?.filter(|b| b.num_rows() > 0);
        if let Some(b) = &joined {
            self.rows_out.fetch_add(b.num_rows(), Ordering::Relaxed);
        }
        Ok(joined)
    }
}

/// `batch` through `steps`; `None` once a step leaves no rows.
fn apply_steps(steps: &[Step], mut batch: RecordBatch) -> Result<Option<RecordBatch>> {
    for step in steps {
        let next = match step {
            Step::Stage(stage) => apply_stages(batch, std::slice::from_ref(stage))?,
            Step::Probe(probe) => probe.apply(&batch)?,
        };
        match next {
            Some(b) => batch = b,
            None => return Ok(None),
        }
    }
    Ok(Some(batch))
}

/// Independent units of input plus the steps each batch goes through.
pub struct MorselInput {
    /// Units to read.
    pub units: Vec<ScanUnit>,
    /// The scan's own filters, applied as units are read.
    pub filter: ScanFilter,
    /// Filters, projections and join probes applied to each batch.
    steps: Vec<Step>,
    /// Rows that came out of the stages (for metrics).
    pub rows: AtomicUsize,
    /// How many columns the units yield.
    width: usize,
    /// Whether the consumer takes batches with a selection of rows
    /// ([`MorselInput::selecting`]).
    select: bool,
    /// Scan columns whose dictionary codes the consumer uses
    /// ([`MorselInput::with_codes_for`]).
    codes: Vec<usize>,
    /// Stops reading when the query is cancelled.
    cancel: crate::exec::CancelToken,
    /// A top-k's bound: units that hold no row within it are skipped.
    bound: Option<Arc<TopKBound>>,
}

impl MorselInput {
    /// Input that is already materialized.
    pub fn from_batches(batches: Vec<RecordBatch>) -> Self {
        MorselInput {
            width: batches.first().map_or(0, |b| b.num_columns()),
            units: batches.into_iter().map(ScanUnit::Batch).collect(),
            filter: ScanFilter::default(),
            steps: vec![],
            rows: AtomicUsize::new(0),
            select: false,
            codes: vec![],
            cancel: Default::default(),
            bound: None,
        }
    }

    /// Input an operator made as `units` of rows of `schema` (files it
    /// spilled, work it deferred), each read as a unit.
    pub fn from_units(units: Vec<ScanUnit>, schema: &SchemaRef) -> Self {
        let mut input = Self::from_batches(vec![]);
        input.width = schema.fields().len();
        input.units = units;
        input
    }

    /// Adds `stages` after the steps so far.
    pub fn push_stages(&mut self, stages: &[Stage]) {
        self.steps.extend(stages.iter().cloned().map(Step::Stage));
    }

    /// Adds a join probe after the steps so far.
    pub fn push_probe(&mut self, probe: Arc<ProbeStep>) {
        self.steps.push(Step::Probe(probe));
    }

    /// Whether a join probe is among the steps.
    fn probes(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Probe(_)))
    }

    /// The rows the probe steps emit once every unit has been read (the
    /// unmatched rows of a preserved build side, a semi or anti join's
    /// build rows), each through the steps after its probe, handed to `f`.
    /// Called after all units, as the matches are only known then; a later
    /// probe's rows come after an earlier one's have gone through it.
    fn finish_probes(&self, f: &mut dyn FnMut(Selected) -> Result<()>) -> Result<()> {
        for (i, step) in self.steps.iter().enumerate() {
            let Step::Probe(probe) = step else { continue };
            let Some(rows) = probe.finish()? else {
                continue;
            };
            if let Some(b) = apply_steps(&self.steps[i + 1..], rows)? {
                self.rows.fetch_add(b.num_rows(), Ordering::Relaxed);
                f(Selected::all(b))?;
            }
        }
        Ok(())
    }

    /// [`MorselInput::finish_probes`] into one more state made by `init`,
    /// added to `states` if any rows came.
    fn finish_into<T>(
        &self,
        states: &mut Vec<T>,
        init: impl Fn() -> T,
        f: impl Fn(&mut T, Selected) -> Result<()>,
    ) -> Result<()> {
        if !self.probes() {
            return Ok(());
        }
        let (mut state, mut any) = (init(), false);
        self.finish_probes(&mut |rows| {
            any = true;
            f(&mut state, rows)
        })?;
        if any {
            states.push(state);
        }
        Ok(())
    }

    /// This input, stopping with [`crate::SlothError::Cancelled`] before
    /// its next unit once `cancel` is thrown, and counting its units in
    /// `cancel`'s progress.
    pub fn cancellable(mut self, cancel: crate::exec::CancelToken) -> Self {
        cancel.plan_units(self.units.len());
        self.cancel = cancel;
        self
    }

    /// This input for a top-k whose `bound` (on a scan column) skips the
    /// units that hold no row within it ([`TopKBound`]).
    pub(crate) fn bounded_by(&mut self, bound: Arc<TopKBound>) {
        self.bound = Some(bound);
    }

    /// This input for a consumer that skips unselected rows itself: where
    /// the scan's filter keeps most of a batch's rows, the batch comes whole
    /// with the kept rows' indices instead of a filtered copy. Only where
    /// every stage is a projection, which keeps rows where they are.
    pub fn selecting(mut self) -> Self {
        self.select = (self.steps.iter()).all(|s| matches!(s, Step::Stage(Stage::Project(..))));
        self
    }

    /// This input for a consumer that reads the dictionary codes of the
    /// columns `exprs` name, where the scan has them ([`Selected::codes`],
    /// by scan column: see [`MorselInput::scan_column`]).
    pub fn with_codes_for(mut self, exprs: &[PhysicalExpr]) -> Self {
        self.codes = exprs.iter().filter_map(|e| self.scan_column(e)).collect();
        self
    }

    /// The scan column that `e` (over the batches this input yields) is, if
    /// it is a column that the steps pass through unchanged (a join probe
    /// makes rows of its own: none is).
    pub fn scan_column(&self, e: &PhysicalExpr) -> Option<usize> {
        self.trace_column(e, false)
    }

    /// The scan column whose value `e` (over the batches this input
    /// yields) carries, through projections, filters and join probes
    /// whose every row is a probe row's ([`JoinTable::probe_column`]): a
    /// row the scan skips for it takes only rows of that value with it.
    pub(crate) fn value_column(&self, e: &PhysicalExpr) -> Option<usize> {
        self.trace_column(e, true)
    }

    fn trace_column(&self, e: &PhysicalExpr, through_probes: bool) -> Option<usize> {
        let Node::Column(mut i) = e.node else {
            return None;
        };
        for step in self.steps.iter().rev() {
            match step {
                Step::Stage(Stage::Project(exprs, _)) => {
                    let Node::Column(j) = exprs.get(i)?.node else {
                        return None;
                    };
                    i = j;
                }
                Step::Stage(Stage::Filter(_)) => {}
                Step::Probe(p) if through_probes => i = p.table.probe_column(i)?,
                Step::Probe(_) => return None,
            }
        }
        Some(i)
    }

    /// `exprs` (over the batches this input yields) as expressions over
    /// the scan's own columns, if each is a column that the stages pass
    /// through unchanged; and whether the scan reads some column that
    /// neither they nor its filters read (filtered by them first, only
    /// such columns are spared decoding).
    pub fn scan_columns(&self, exprs: &[PhysicalExpr]) -> Option<(Vec<PhysicalExpr>, bool)> {
        let columns: Vec<PhysicalExpr> = exprs
            .iter()
            .map(|e| {
                Some(PhysicalExpr {
                    node: Node::Column(self.scan_column(e)?),
                    data_type: e.data_type.clone(),
                })
            })
            .collect::<Option<_>>()?;
        let mut read: Vec<usize> = (self.filter.exprs().iter().chain(&columns))
            .flat_map(PhysicalExpr::columns)
            .collect();
        read.sort_unstable();
        read.dedup();
        let spares = read.len() < self.width;
        Some((columns, spares))
    }

    /// Reads one unit and passes each batch, through the stages, to `f`.
    /// Codes (by scan column) stay with a batch whose rows the stages
    /// keep as they are.
    fn read_unit(&self, unit: &ScanUnit, mut f: impl FnMut(Selected) -> Result<()>) -> Result<()> {
        self.cancel.check()?;
        if self.bound.as_ref().is_some_and(|b| !unit.may_hold(b)) {
            self.cancel.unit_read();
            return Ok(());
        }
        let read = unit.read_selected(&self.filter, self.select, &self.codes)?;
        self.cancel.unit_read();
        for Selected { batch, rows, codes } in read {
            let len = batch.num_rows();
            let staged = match apply_steps(&self.steps, batch.clone()) {
                Ok(b) => b.map(|batch| {
                    // A probe's rows are not the scan's, however many.
                    let codes = if batch.num_rows() == len && !self.probes() {
                        codes
                    } else {
                        vec![]
                    };
                    Selected { batch, rows, codes }
                }),
                // With a selection the stages also saw rows the filter
                // rejected; should that fail (an overflow, a cast), they
                // run on the kept rows alone.
                Err(_) if rows.is_some() => {
                    let kept = Selected {
                        batch,
                        rows,
                        codes: vec![],
                    }
                    .materialize()?;
                    apply_steps(&self.steps, kept)?.map(Selected::all)
                }
                Err(e) => return Err(e),
            };
            if let Some(s) = staged {
                self.rows.fetch_add(s.num_rows(), Ordering::Relaxed);
                f(s)?;
            }
        }
        Ok(())
    }

    /// The scan units of `plan` if it is a scan or a pipeline over a scan;
    /// `None` if it must be executed as a whole. A scan shares pages with
    /// the execution's other scans through `pages`.
    pub fn stream(plan: &PhysicalPlan, pages: Option<&SharedPages>) -> Result<Option<Self>> {
        Ok(match plan {
            PhysicalPlan::Scan {
                source,
                projection,
                filters,
                metrics,
                schema,
                ..
            } => Some(MorselInput {
                width: schema.fields().len(),
                units: source.units(projection.as_deref(), filters, metrics, pages)?,
                filter: ScanFilter::new(filters.clone()),
                steps: vec![],
                rows: AtomicUsize::new(0),
                select: false,
                codes: vec![],
                cancel: Default::default(),
                bound: None,
            }),
            PhysicalPlan::Pipeline { input, stages, .. } => {
                Self::stream(input, pages)?.map(|mut m| {
                    m.push_stages(stages);
                    m
                })
            }
            _ => None,
        })
    }

    /// Folds every batch into one state per worker thread (made by `init`
    /// on the thread's first batch); returns the states in no particular
    /// order. Unlike [`MorselInput::fold`], the number of states is bounded
    /// by the thread count, not by how rayon split the work: an aggregation
    /// builds one table per core and merges as few.
    pub fn fold_per_thread<T: Send>(
        &self,
        init: impl Fn() -> T + Sync + Send,
        f: impl Fn(&mut T, Selected) -> Result<()> + Sync + Send,
    ) -> Result<Vec<T>> {
        use std::sync::{Mutex, TryLockError};
        let slots: Vec<Mutex<Option<T>>> = (0..rayon::current_num_threads().max(1))
            .map(|_| Mutex::new(None))
            .collect();
        // States of units that ran while their thread's slot was taken (a
        // worker that stole work while it waited inside a unit).
        let extra: Mutex<Vec<T>> = Mutex::new(Vec::new());
        let fold_unit =
            |state: &mut T, unit: &ScanUnit| self.read_unit(unit, |batch| f(state, batch));
        self.units
            .par_iter()
            .with_min_len(1)
            .try_for_each(|unit| -> Result<()> {
                let slot = rayon::current_thread_index().unwrap_or(0) % slots.len();
                match slots[slot].try_lock() {
                    Ok(mut state) => fold_unit(state.get_or_insert_with(&init), unit),
                    Err(TryLockError::Poisoned(e)) => {
                        fold_unit(e.into_inner().get_or_insert_with(&init), unit)
                    }
                    Err(TryLockError::WouldBlock) => {
                        let mut state = init();
                        fold_unit(&mut state, unit)?;
                        extra.lock().unwrap_or_else(|e| e.into_inner()).push(state);
                        Ok(())
                    }
                }
            })?;
        let mut states: Vec<T> = slots
            .into_iter()
            .filter_map(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect();
        states.extend(extra.into_inner().unwrap_or_else(|e| e.into_inner()));
        self.finish_into(&mut states, init, f)?;
        Ok(states)
    }

    /// Folds each unit into a state of its own, made by `init` from the
    /// unit's index, and hands
    /// the state with the unit's index to `finish`; returns what `finish`
    /// made, in input order. Only for inputs without join probes, whose
    /// rows emitted after the last unit belong to no unit.
    pub fn fold_each_unit<T, R: Send>(
        &self,
        init: impl Fn(usize) -> Result<T> + Sync + Send,
        f: impl Fn(&mut T, Selected) -> Result<()> + Sync + Send,
        finish: impl Fn(usize, T) -> Result<R> + Sync + Send,
    ) -> Result<Vec<R>> {
        debug_assert!(!self.probes(), "a probe's last rows belong to no unit");
        (self.units.par_iter().enumerate().with_min_len(1))
            .map(|(i, unit)| {
                let mut state = init(i)?;
                self.read_unit(unit, |batch| f(&mut state, batch))?;
                finish(i, state)
            })
            .collect()
    }

    /// Passes every batch to `emit` in input order, reading a few units
    /// ahead in parallel: memory holds the batches of those units only,
    /// whatever the size of the input.
    pub fn for_each_ordered(&self, emit: &mut dyn FnMut(RecordBatch) -> Result<()>) -> Result<()> {
        let ahead = 2 * rayon::current_num_threads().max(1);
        for units in self.units.chunks(ahead) {
            let read: Vec<Result<Vec<RecordBatch>>> = units
                .par_iter()
                .with_min_len(1)
                .map(|unit| {
                    let mut batches = Vec::new();
                    self.read_unit(unit, |s| {
                        batches.push(s.materialize()?);
                        Ok(())
                    })?;
                    Ok(batches)
                })
                .collect();
            for batches in read {
                for b in batches? {
                    emit(b)?;
                }
            }
        }
        self.finish_probes(&mut |rows| emit(rows.materialize()?))
    }

    /// Folds every batch into per-thread states made by `init`; returns the
    /// states in input order (the first state saw the earliest units).
    pub fn fold<T: Send>(
        &self,
        init: impl Fn() -> T + Sync + Send,
        f: impl Fn(&mut T, Selected) -> Result<()> + Sync + Send,
    ) -> Result<Vec<T>> {
        let mut states: Vec<T> = self
            .units
            .par_iter()
            .with_min_len(1)
            .try_fold(&init, |mut state, unit| {
                self.read_unit(unit, |batch| f(&mut state, batch))?;
                Ok(state)
            })
            .collect::<Result<_>>()?;
        self.finish_into(&mut states, &init, &f)?;
        Ok(states)
    }
}
