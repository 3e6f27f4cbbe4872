//! [`LazyFrame`]: a query described step by step, planned and run on `collect()`.

use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::config::{Device, OptimizerOptions, SessionConfig};
use crate::error::{Result, SlothError};
use crate::exec::{self, CancelToken, ExecContext, NodeMetrics};
use crate::expr::{Expr, col};
use crate::frame::DataFrame;
use crate::io::{CsvOptions, FileFormat, OutputSink, ScanSource, WriteOptions};
use crate::optimizer::optimize;
use crate::physical::planner::create_physical_plan;
use crate::plan::{Join, JoinType, LogicalPlan, Scan, SortKey};

/// A lazily evaluated query. Every method returns a new frame; nothing runs
/// until [`LazyFrame::collect`] (or a sink).
///
/// ```
/// use sloth::prelude::*;
/// # use std::sync::Arc;
/// # use arrow::array::{Int64Array, StringArray};
/// # use arrow::record_batch::RecordBatch;
/// # let batch = RecordBatch::try_from_iter(vec![
/// #     ("city", Arc::new(StringArray::from(vec!["a", "b", "a"])) as _),
/// #     ("sales", Arc::new(Int64Array::from(vec![1, 2, 3])) as _),
/// # ]).unwrap();
/// let df = LazyFrame::from_batches(vec![batch])?
///     .filter(col("sales").gt(lit(1)))
///     .group_by([col("city")])
///     .agg([col("sales").sum().alias("total")])
///     .sort(vec![col("city")], vec![false], false)
///     .collect()?;
/// assert_eq!(df.num_rows(), 2);
/// # Ok::<(), sloth::SlothError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LazyFrame {
    plan: Arc<LogicalPlan>,
    config: Arc<SessionConfig>,
    cancel: CancelToken,
}

impl From<LogicalPlan> for LazyFrame {
    fn from(plan: LogicalPlan) -> Self {
        LazyFrame {
            plan: Arc::new(plan),
            config: Arc::default(),
            cancel: CancelToken::default(),
        }
    }
}

impl LazyFrame {
    pub(super) fn scan(source: ScanSource) -> Self {
        LogicalPlan::Scan(Scan {
            source,
            projection: None,
            filters: vec![],
        })
        .into()
    }

    fn then(&self, plan: LogicalPlan) -> Self {
        LazyFrame {
            plan: Arc::new(plan),
            config: self.config.clone(),
            cancel: self.cancel.clone(),
        }
    }

    /// Scans a CSV file with a header row (types inferred).
    pub fn scan_csv(path: impl AsRef<Path>) -> Result<Self> {
        Ok(Self::scan(ScanSource::csv(path, CsvOptions::default())?))
    }

    /// Scans a CSV file with explicit options.
    pub fn scan_csv_with(path: impl AsRef<Path>, options: CsvOptions) -> Result<Self> {
        Ok(Self::scan(ScanSource::csv(path, options)?))
    }

    /// Scans a Parquet file.
    pub fn scan_parquet(path: impl AsRef<Path>) -> Result<Self> {
        Ok(Self::scan(ScanSource::parquet(path)?))
    }

    /// Scans an Arrow IPC file.
    pub fn scan_ipc(path: impl AsRef<Path>) -> Result<Self> {
        Ok(Self::scan(ScanSource::ipc(path)?))
    }

    /// Scans a JSON file: one object per line (`.ndjson`, `.jsonl`) or an
    /// array of objects.
    pub fn scan_json(path: impl AsRef<Path>) -> Result<Self> {
        Ok(Self::scan(ScanSource::json(path)?))
    }

    /// A frame over in-memory batches (at least one, for the schema).
    pub fn from_batches(batches: Vec<RecordBatch>) -> Result<Self> {
        let schema = batches
            .first()
            .ok_or_else(|| SlothError::plan("from_batches needs at least one batch"))?
            .schema();
        Self::from_batches_with_schema(schema, batches)
    }

    /// A frame over in-memory batches with the given schema (batches may be empty).
    pub fn from_batches_with_schema(schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<Self> {
        Ok(Self::scan(ScanSource::memory(schema, batches)?))
    }

    /// The logical plan as built (before optimization).
    pub fn logical_plan(&self) -> &LogicalPlan {
        &self.plan
    }

    /// Output schema (fails on unknown columns or type errors).
    pub fn schema(&self) -> Result<SchemaRef> {
        self.plan.schema()
    }

    /// Runs this frame under `config` (device, optimizer rules, threads).
    pub fn with_config(mut self, config: SessionConfig) -> Self {
        self.config = Arc::new(config);
        self
    }

    /// The settings this frame runs under.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Where group-by and join operators run (default: [`Device::Auto`]).
    pub fn with_device(self, device: Device) -> Self {
        let config = self.config.as_ref().clone().with_device(device);
        self.with_config(config)
    }

    /// The device setting.
    pub fn device(&self) -> Device {
        self.config.device
    }

    /// Sets the optimizer options (rules on/off) for this frame.
    pub fn with_optimizer(self, options: OptimizerOptions) -> Self {
        let config = self.config.as_ref().clone().with_optimizer(options);
        self.with_config(config)
    }

    /// Keeps rows where `predicate` is true (null counts as false).
    pub fn filter(&self, predicate: Expr) -> Self {
        self.then(LogicalPlan::filter(self.plan.clone(), predicate))
    }

    /// Computes exactly these columns.
    /// Window expressions ([`Expr::over`]), alone or inside larger ones, are
    /// computed by a window step first. Where every expression aggregates
    /// (`select([col("x").sum(), col("y").max()])`), the result is one row,
    /// as [`LazyFrame::agg`] gives (and as Polars does).
    pub fn select(&self, exprs: impl IntoIterator<Item = Expr>) -> Self {
        let exprs = self.expand_wildcards(exprs.into_iter().collect());
        if !exprs.is_empty() && exprs.iter().all(Expr::contains_agg) {
            return self.agg(exprs);
        }
        self.project(exprs)
    }

    /// A projection over this frame, with any window functions in `exprs`
    /// lifted into a window step below it; each keeps its output name.
    fn project(&self, exprs: Vec<Expr>) -> Self {
        let mut exprs: Vec<Expr> = exprs
            .into_iter()
            .map(|e| {
                if e.contains_window() && !matches!(e, Expr::Alias(..)) {
                    // A bare window reads no column to be named after.
                    let name = match e {
                        Expr::Window { .. } => e.to_string(),
                        _ => e.output_name(),
                    };
                    e.alias(name)
                } else {
                    e
                }
            })
            .collect();
        let input = crate::plan::lift_windows(self.plan.clone(), exprs.iter_mut());
        self.then(LogicalPlan::project(input, exprs))
    }

    fn column_names(&self) -> Vec<String> {
        self.plan
            .schema()
            .map(|s| s.fields().iter().map(|f| f.name().clone()).collect())
            .unwrap_or_default()
    }

    fn expand_wildcards(&self, exprs: Vec<Expr>) -> Vec<Expr> {
        if !exprs.iter().any(|e| matches!(e, Expr::Wildcard)) {
            return exprs;
        }
        let names = self.column_names();
        exprs
            .into_iter()
            .flat_map(|e| match e {
                Expr::Wildcard => names.iter().map(|n| col(n.as_str())).collect(),
                e => vec![e],
            })
            .collect()
    }

    /// Adds or replaces columns, keeping the others. Window expressions
    /// ([`Expr::over`]) are computed by a window step first.
    pub fn with_columns(&self, exprs: impl IntoIterator<Item = Expr>) -> Self {
        let mut out: Vec<Expr> = self.column_names().into_iter().map(col).collect();
        for e in exprs {
            let name = e.output_name();
            let e = if matches!(e, Expr::Column(_) | Expr::Alias(..)) {
                e
            } else {
                e.alias(name.clone())
            };
            match out.iter().position(|o| o.output_name() == name) {
                Some(i) => out[i] = e,
                None => out.push(e),
            }
        }
        self.project(out)
    }

    /// Starts a grouped aggregation.
    pub fn group_by(&self, keys: impl IntoIterator<Item = Expr>) -> GroupBy {
        GroupBy {
            frame: self.clone(),
            keys: keys.into_iter().collect(),
        }
    }

    /// Aggregates the whole frame to one row.
    pub fn agg(&self, exprs: impl IntoIterator<Item = Expr>) -> Self {
        self.group_by(Vec::new()).agg(exprs)
    }

    /// Joins with `other` where `left_on[i] = right_on[i]` for all i.
    /// Right columns whose names the left has get the suffix `_right`; for
    /// joins on plain columns of the same name, the right key is dropped
    /// (as Polars does), except for full joins, where both can be null.
    pub fn join(
        &self,
        other: &LazyFrame,
        left_on: impl IntoIterator<Item = Expr>,
        right_on: impl IntoIterator<Item = Expr>,
        how: JoinType,
    ) -> Self {
        let left_on: Vec<Expr> = left_on.into_iter().collect();
        let right_on: Vec<Expr> = right_on.into_iter().collect();
        let joined = self.then(LogicalPlan::Join(Join::new(
            self.plan.clone(),
            other.plan.clone(),
            left_on.clone(),
            right_on.clone(),
            how,
            None,
        )));
        if !how.outputs_right() || how == JoinType::Full {
            return joined;
        }
        // Drop right keys that duplicate a same-named left key.
        let (Ok(ls), Ok(rs)) = (self.plan.schema(), other.plan.schema()) else {
            return joined;
        };
        let out = crate::plan::join_schema(&ls, &rs, how);
        let n_left = ls.fields().len();
        let dup_keys: Vec<usize> = left_on
            .iter()
            .zip(&right_on)
            .filter_map(|(l, r)| match (l, r) {
                (Expr::Column(a), Expr::Column(b)) if a == b => rs.index_of(b).ok(),
                _ => None,
            })
            .collect();
        if dup_keys.is_empty() {
            return joined;
        }
        let keep: Vec<Expr> = out
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, _)| *i < n_left || !dup_keys.contains(&(i - n_left)))
            .map(|(_, f)| col(f.name().as_str()))
            .collect();
        if how == JoinType::Right {
            // The surviving key must hold the right side's values.
            let coalesced: Vec<Expr> = keep
                .into_iter()
                .map(|e| {
                    let name = e.output_name();
                    match left_on
                        .iter()
                        .zip(&right_on)
                        .find(|(l, _)| matches!(l, Expr::Column(c) if *c == name))
                    {
                        Some((_, Expr::Column(r)))
                            if dup_keys.contains(&rs.index_of(r).unwrap_or(usize::MAX)) =>
                        {
                            let right_name =
                                out.field(n_left + rs.index_of(r).unwrap()).name().clone();
                            col(right_name).alias(name)
                        }
                        _ => e,
                    }
                })
                .collect();
            return joined.select(coalesced);
        }
        joined.select(keep)
    }

    /// Sorts by several keys. `descending` has one flag per key (or one for all).
    pub fn sort(&self, by: Vec<Expr>, descending: Vec<bool>, nulls_last: bool) -> Self {
        let keys = by
            .into_iter()
            .enumerate()
            .map(|(i, expr)| SortKey {
                expr,
                descending: descending
                    .get(i)
                    .or(descending.first())
                    .copied()
                    .unwrap_or(false),
                nulls_last,
            })
            .collect();
        self.sort_by(keys)
    }

    /// Sorts by fully specified keys.
    pub fn sort_by(&self, by: Vec<SortKey>) -> Self {
        self.then(LogicalPlan::sort(self.plan.clone(), by))
    }

    /// The first `n` rows.
    pub fn limit(&self, n: usize) -> Self {
        self.slice(0, Some(n))
    }

    /// Rows `offset..offset+len` (`None`: to the end).
    pub fn slice(&self, offset: usize, len: Option<usize>) -> Self {
        self.then(LogicalPlan::slice(self.plan.clone(), offset, len))
    }

    /// Distinct rows.
    pub fn unique(&self) -> Self {
        self.then(LogicalPlan::distinct(self.plan.clone()))
    }

    /// Concatenates frames with the same columns (`UNION ALL`).
    pub fn union(&self, others: &[LazyFrame]) -> Self {
        let inputs = std::iter::once(self.plan.clone())
            .chain(others.iter().map(|o| o.plan.clone()))
            .collect();
        self.then(LogicalPlan::union(inputs))
    }

    /// Renames columns (`(old, new)` pairs); unknown names fail at collect.
    pub fn rename<'a>(&self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let pairs: Vec<(&str, &str)> = pairs.into_iter().collect();
        let mut exprs: Vec<Expr> = self
            .column_names()
            .into_iter()
            .map(|n| match pairs.iter().find(|(old, _)| *old == n) {
                Some((_, new)) => col(n.as_str()).alias(*new),
                None => col(n),
            })
            .collect();
        // A missing old name is selected so that collect() reports it.
        for (old, _) in &pairs {
            if !self.column_names().iter().any(|n| n == old) {
                exprs.push(col(*old));
            }
        }
        self.select(exprs)
    }

    /// Removes columns; unknown names fail at collect.
    pub fn drop<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        let existing = self.column_names();
        if let Some(missing) = names.iter().find(|n| !existing.iter().any(|e| e == *n)) {
            return self.select([col(*missing)]);
        }
        self.select(
            existing
                .into_iter()
                .filter(|n| !names.contains(&n.as_str()))
                .map(col)
                .collect::<Vec<_>>(),
        )
    }

    /// The optimized logical plan.
    pub fn optimized_plan(&self) -> Result<LogicalPlan> {
        self.plan.validate()?;
        Ok(optimize(&self.plan, &self.config.optimizer)?.0)
    }

    /// The plan as text: the logical plan, optimized (with the rules that
    /// fired) or as written, and the physical plan with the device each
    /// group-by and join is expected to run on.
    pub fn explain(&self, optimized: bool) -> Result<String> {
        self.plan.validate()?;
        if !optimized {
            return Ok(format!("Logical plan:\n{}", self.plan));
        }
        let (plan, fired) = optimize(&self.plan, &self.config.optimizer)?;
        let physical = create_physical_plan(&plan)?;
        let mut text = format!(
            "Logical plan:\n{}\nOptimized plan (rules fired: {}):\n{}\nPhysical plan:\n{}",
            self.plan,
            if fired.is_empty() {
                "none".to_string()
            } else {
                fired.join(", ")
            },
            plan,
            physical
        );
        #[cfg(feature = "datafusion")]
        if self.config.engine != crate::config::Engine::Sloth {
            let handed = exec::datafusion::explain(&plan, &self.config)?;
            text.push_str(&format!("\nHanded to {handed}"));
        }
        let placement = crate::gpu::placement::placement(&plan, self.config.device)?;
        if !placement.is_empty() {
            text.push_str(&format!(
                "\nDevice placement (--device {}; decided again at run time from the real input sizes):\n",
                self.config.device
            ));
            for line in placement {
                text.push_str(&format!("  {line}\n"));
            }
        }
        Ok(text)
    }

    /// The physical plan the optimized query runs as.
    pub fn physical_plan(&self) -> Result<crate::physical::PhysicalPlan> {
        create_physical_plan(&self.optimized_plan()?)
    }

    /// This frame, stopped by `cancel` while it runs (from another thread:
    /// a Ctrl-C handler, a timeout): collect, profile and sinks then fail
    /// with [`SlothError::Cancelled`] at the next operator or batch of input.
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// A context to run this frame in: its settings, its cancel token.
    fn context(&self) -> ExecContext {
        ExecContext::new(&self.config).with_cancel(self.cancel.clone())
    }

    /// Runs the query.
    pub fn collect(&self) -> Result<DataFrame> {
        self.run(&self.context())
    }

    /// Runs the query without the optimizer (the reference for its tests).
    pub fn collect_unoptimized(&self) -> Result<DataFrame> {
        self.clone()
            .with_optimizer(OptimizerOptions::none())
            .collect()
    }

    /// Runs the query and returns the per-operator metrics too, bytes
    /// included.
    pub fn collect_with_metrics(&self) -> Result<(DataFrame, Vec<NodeMetrics>)> {
        let ctx = self.context().counting_bytes();
        Ok((self.run(&ctx)?, ctx.metrics()))
    }

    fn run(&self, ctx: &ExecContext) -> Result<DataFrame> {
        // Planning recurses over expressions, which generated queries nest
        // deep: it gets a large stack whatever thread collects.
        crate::config::on_large_stack(|| self.run_here(ctx))
    }

    fn run_here(&self, ctx: &ExecContext) -> Result<DataFrame> {
        SlothError::catching_panics(|| {
            let plan = self.optimized_plan()?;
            #[cfg(feature = "datafusion")]
            if self.config.engine != crate::config::Engine::Sloth {
                let batches = exec::datafusion::collect(&plan, &self.config)?;
                return Ok(DataFrame::new(plan.schema()?, batches));
            }
            let physical = create_physical_plan(&plan)?;
            let batches = self.config.install(|| exec::execute_with(&physical, ctx))?;
            Ok(DataFrame::new(physical.schema(), batches))
        })
    }

    /// Runs the query and returns the physical plan annotated with metrics
    /// (rows, batches, bytes, time per operator) and the memory the query
    /// held and spilled: `EXPLAIN ANALYZE`.
    pub fn profile(&self) -> Result<String> {
        if self.config.engine != crate::config::Engine::Sloth {
            return Err(SlothError::unsupported(format!(
                "EXPLAIN ANALYZE on the {} engine; it profiles sloth's own operators",
                self.config.engine
            )));
        }
        let ctx = self.context().counting_bytes();
        self.run(&ctx)?;
        Ok(crate::profile::format_metrics(&ctx.metrics()) + &ctx.memory_use().to_string() + "\n")
    }

    /// Runs the optimized query row-wise, columnar operator by operator and
    /// columnar fused, and lines up each operator's figures (`sloth profile`).
    pub fn profile_executors(
        &self,
        options: &crate::profile::ProfileOptions,
    ) -> Result<crate::profile::Profile> {
        crate::profile::profile(self.physical_plan()?, options)
    }

    /// Runs the query and writes the result as Parquet (atomically).
    pub fn sink_parquet(&self, path: impl AsRef<Path>) -> Result<()> {
        self.sink(path, FileFormat::Parquet).map(|_| ())
    }

    /// Runs the query and writes the result as CSV (atomically).
    pub fn sink_csv(&self, path: impl AsRef<Path>) -> Result<()> {
        self.sink(path, FileFormat::Csv).map(|_| ())
    }

    /// Runs the query and writes the result as an Arrow IPC file (atomically).
    pub fn sink_ipc(&self, path: impl AsRef<Path>) -> Result<()> {
        self.sink(path, FileFormat::Ipc).map(|_| ())
    }

    /// Runs the query and writes the result to `path` as `format`, batch
    /// by batch as the result is made where the plan allows (a scan with
    /// filters and projections, or a sort over one): such a rewrite of a
    /// file of any size holds a few row groups at a time, or sorts within
    /// the memory limit, spilling. The file appears whole or not at all.
    /// Returns the rows written.
    pub fn sink(&self, path: impl AsRef<Path>, format: FileFormat) -> Result<usize> {
        self.sink_with(path, format, &WriteOptions::default())
    }

    /// As [`LazyFrame::sink`], written as `options` say (Parquet
    /// compression and row groups, CSV delimiter and header); with
    /// `options.partition_by`, `path` becomes a directory of Hive
    /// partitions (`path/year=2024/data_0.parquet`), swapped in whole.
    pub fn sink_with(
        &self,
        path: impl AsRef<Path>,
        format: FileFormat,
        options: &WriteOptions,
    ) -> Result<usize> {
        let path = path.as_ref();
        if self.config.engine != crate::config::Engine::Sloth {
            let df = self.collect()?;
            let mut sink = OutputSink::create(path, format, df.schema(), options)?;
            for b in df.batches() {
                sink.write(b)?;
            }
            sink.finish()?;
            return Ok(df.num_rows());
        }
        crate::config::on_large_stack(|| {
            SlothError::catching_panics(|| {
                let plan = self.optimized_plan()?;
                let physical = create_physical_plan(&plan)?;
                let ctx = self.context();
                let mut sink = OutputSink::create(path, format, &physical.schema(), options)?;
                self.config
                    .install(|| exec::execute_into(&physical, &ctx, &mut |b| sink.write(&b)))?;
                let rows = sink.rows();
                sink.finish()?;
                Ok(rows)
            })
        })
    }
}

/// A [`LazyFrame`] with grouping keys, waiting for its aggregates.
pub struct GroupBy {
    frame: LazyFrame,
    keys: Vec<Expr>,
}

impl GroupBy {
    /// Computes aggregates per group: keys first, then one column per expression.
    /// Expressions may combine aggregates (`col("a").max() - col("a").min()`).
    pub fn agg(self, exprs: impl IntoIterator<Item = Expr>) -> LazyFrame {
        let plan = plan_aggregate(
            self.frame.plan.clone(),
            self.keys,
            exprs.into_iter().collect(),
        );
        self.frame.then(plan)
    }
}

/// Plans `keys` + `exprs` as an [`LogicalPlan::Aggregate`]. Aggregates nested
/// in larger expressions are computed by the aggregate node under hidden
/// names and combined by a projection on top.
pub fn plan_aggregate(input: Arc<LogicalPlan>, keys: Vec<Expr>, exprs: Vec<Expr>) -> LogicalPlan {
    let mut aggs: Vec<Expr> = Vec::new();
    let mut outputs: Vec<Expr> = Vec::new();
    let mut needs_projection = false;
    for e in exprs {
        let name = e.output_name();
        match e.unalias() {
            Expr::Agg { args, .. } if !args.iter().any(|a| a.contains_agg()) => {
                aggs.push(e.unalias().clone().alias(name.clone()));
                outputs.push(col(name));
            }
            _ => {
                needs_projection = true;
                let rewritten = e.unalias().clone().transform(&mut |node| match node {
                    agg @ Expr::Agg { .. } => {
                        let existing = aggs.iter().position(|a| a.unalias() == &agg);
                        let i = existing.unwrap_or_else(|| {
                            aggs.push(agg.clone().alias(format!("__agg_{}", aggs.len())));
                            aggs.len() - 1
                        });
                        col(aggs[i].output_name())
                    }
                    other => other,
                });
                outputs.push(rewritten.alias(name));
            }
        }
    }
    let key_names: Vec<Expr> = keys.iter().map(|k| col(k.output_name())).collect();
    let keys: Vec<Expr> = keys
        .into_iter()
        .map(|k| {
            if matches!(k, Expr::Column(_) | Expr::Alias(..)) {
                k.clone()
            } else {
                k.clone().alias(k.output_name())
            }
        })
        .collect();
    let agg = LogicalPlan::aggregate(input, keys, aggs);
    if !needs_projection {
        return agg;
    }
    LogicalPlan::project(
        Arc::new(agg),
        key_names.into_iter().chain(outputs).collect(),
    )
}
