//! The physical plan: which operator runs each step, with resolved expressions.
//!
//! Produced by [`planner::create_physical_plan`] from an optimized logical
//! plan. Streaming steps (filter, project) over one input are fused into a
//! [`PhysicalPlan::Pipeline`] that runs batch by batch on all cores; breakers
//! (aggregate, join build, sort) collect their input.

pub mod planner;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::compute::SortOptions;
use arrow::datatypes::{DataType, SchemaRef};

use crate::expr::{AggFunc, WindowFunc};
use crate::io::{ParquetScanMetrics, ScanSource};
use crate::physical_expr::PhysicalExpr;
use crate::plan::JoinType;

/// One step of a fused pipeline.
#[derive(Debug, Clone)]
pub enum Stage {
    /// Keep rows where the predicate holds.
    Filter(PhysicalExpr),
    /// Compute new columns.
    Project(Vec<PhysicalExpr>, SchemaRef),
}

/// An aggregate function call with compiled arguments.
#[derive(Debug, Clone)]
pub struct AggregateExpr {
    /// The function.
    pub func: AggFunc,
    /// Compiled arguments.
    pub args: Vec<PhysicalExpr>,
    /// `DISTINCT`.
    pub distinct: bool,
    /// Output type.
    pub data_type: DataType,
}

/// Which input of a hash join the hash table is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildSide {
    /// Build on the left input, probe with the right.
    Left,
    /// Build on the right input, probe with the left.
    Right,
    /// Decide at run time: build on the input with fewer rows.
    Smaller,
}

/// A node of the physical plan.
#[derive(Debug, Clone)]
pub enum PhysicalPlan {
    /// Read a source.
    Scan {
        /// The source.
        source: ScanSource,
        /// Columns to read.
        projection: Option<Vec<usize>>,
        /// Filters over the projected schema (applied, and used for pruning).
        filters: Vec<PhysicalExpr>,
        /// Output schema.
        schema: SchemaRef,
        /// Rows expected after the filters (the optimizer's estimate), when
        /// the source's size is known; picks which join input to stream.
        estimated_rows: Option<usize>,
        /// Row-group pruning counters.
        metrics: Arc<ParquetScanMetrics>,
    },
    /// Fused filter/project stages applied per batch.
    Pipeline {
        /// Input.
        input: Box<PhysicalPlan>,
        /// Stages in order.
        stages: Vec<Stage>,
        /// Output schema.
        schema: SchemaRef,
    },
    /// Hash aggregation (also `DISTINCT`, with no aggregates).
    HashAggregate {
        /// Input.
        input: Box<PhysicalPlan>,
        /// Group keys.
        keys: Vec<PhysicalExpr>,
        /// Aggregates.
        aggs: Vec<AggregateExpr>,
        /// Output schema.
        schema: SchemaRef,
    },
    /// Hash equi-join.
    HashJoin {
        /// Left input.
        left: Box<PhysicalPlan>,
        /// Right input.
        right: Box<PhysicalPlan>,
        /// Left keys (coerced to the common key types).
        left_keys: Vec<PhysicalExpr>,
        /// Right keys.
        right_keys: Vec<PhysicalExpr>,
        /// Join kind.
        how: JoinType,
        /// Which side the hash table is built on.
        build_side: BuildSide,
        /// Condition on each candidate pair, over the inner-join layout.
        filter: Option<PhysicalExpr>,
        /// The columns emitted, as positions in the join's full output (left
        /// columns then right ones, as `join_schema` lays them out); `None`:
        /// all of them. Columns left out are never gathered.
        output: Option<Vec<usize>>,
        /// Output schema (of the emitted columns).
        schema: SchemaRef,
    },
    /// Cartesian product.
    CrossJoin {
        /// Left input.
        left: Box<PhysicalPlan>,
        /// Right input.
        right: Box<PhysicalPlan>,
        /// Output schema.
        schema: SchemaRef,
    },
    /// Sort, or top-k when `limit` is set.
    Sort {
        /// Input.
        input: Box<PhysicalPlan>,
        /// Keys and their order.
        keys: Vec<(PhysicalExpr, SortOptions)>,
        /// Keep only the first rows.
        limit: Option<usize>,
    },
    /// Rows `offset..offset+len`.
    Slice {
        /// Input.
        input: Box<PhysicalPlan>,
        /// Rows skipped.
        offset: usize,
        /// Rows kept.
        len: Option<usize>,
    },
    /// One ranking window function appended as a column.
    Window {
        /// Input.
        input: Box<PhysicalPlan>,
        /// The function.
        func: WindowFunc,
        /// Its arguments (an aggregate's).
        args: Vec<PhysicalExpr>,
        /// Partition keys.
        partition_by: Vec<PhysicalExpr>,
        /// Order within partitions.
        order_by: Vec<(PhysicalExpr, SortOptions)>,
        /// Keep only the first rows of each partition in window order (set
        /// for `row_number() … <= k` filters: a top-k per partition).
        limit: Option<usize>,
        /// Output schema (input + the new column).
        schema: SchemaRef,
    },
    /// Concatenation.
    Union {
        /// Inputs.
        inputs: Vec<PhysicalPlan>,
        /// Output schema (inputs are cast to it).
        schema: SchemaRef,
    },
}

/// The items of a join's full output row that it emits (`output`, see
/// [`PhysicalPlan::HashJoin`]): columns, or values of a row-wise row.
pub fn join_outputs<T: Clone>(all: Vec<T>, output: Option<&[usize]>) -> Vec<T> {
    match output {
        None => all,
        Some(o) => o.iter().map(|&i| all[i].clone()).collect(),
    }
}

impl PhysicalPlan {
    /// Output schema.
    pub fn schema(&self) -> SchemaRef {
        match self {
            PhysicalPlan::Scan { schema, .. }
            | PhysicalPlan::Pipeline { schema, .. }
            | PhysicalPlan::HashAggregate { schema, .. }
            | PhysicalPlan::HashJoin { schema, .. }
            | PhysicalPlan::CrossJoin { schema, .. }
            | PhysicalPlan::Window { schema, .. }
            | PhysicalPlan::Union { schema, .. } => schema.clone(),
            PhysicalPlan::Sort { input, .. } | PhysicalPlan::Slice { input, .. } => input.schema(),
        }
    }

    /// Counts, per Parquet file and root column, the scans of this plan
    /// that read it ([`crate::io::SharedPages`] keeps the pages of columns
    /// read more than once).
    ///
    /// A repeated subtree whose later occurrences reuse the first one's
    /// output ([`crate::exec`]'s shared subplans: any but a scan or a
    /// pipeline, which may be streamed instead) reads its files once, so its
    /// scans count once; counted twice, their pages would wait for a reader
    /// that never comes.
    pub fn parquet_column_readers(&self) -> HashMap<PathBuf, HashMap<usize, usize>> {
        fn walk(
            p: &PhysicalPlan,
            seen: &mut HashSet<String>,
            readers: &mut HashMap<PathBuf, HashMap<usize, usize>>,
        ) {
            let reused = !matches!(p, PhysicalPlan::Scan { .. } | PhysicalPlan::Pipeline { .. });
            if reused && !seen.insert(p.to_string()) {
                return;
            }
            if let PhysicalPlan::Scan {
                source: ScanSource::Parquet { path, schema },
                projection,
                ..
            } = p
            {
                let columns = readers.entry(path.clone()).or_default();
                let all: Vec<usize> = (0..schema.fields().len()).collect();
                for &c in projection.as_deref().unwrap_or(&all) {
                    *columns.entry(c).or_default() += 1;
                }
            }
            p.children()
                .into_iter()
                .for_each(|c| walk(c, seen, readers));
        }
        let mut readers = HashMap::new();
        walk(self, &mut HashSet::new(), &mut readers);
        readers
    }

    /// Direct inputs.
    pub fn children(&self) -> Vec<&PhysicalPlan> {
        match self {
            PhysicalPlan::Scan { .. } => vec![],
            PhysicalPlan::Pipeline { input, .. }
            | PhysicalPlan::HashAggregate { input, .. }
            | PhysicalPlan::Sort { input, .. }
            | PhysicalPlan::Slice { input, .. }
            | PhysicalPlan::Window { input, .. } => vec![input],
            PhysicalPlan::HashJoin { left, right, .. }
            | PhysicalPlan::CrossJoin { left, right, .. } => {
                vec![left, right]
            }
            PhysicalPlan::Union { inputs, .. } => inputs.iter().collect(),
        }
    }

    /// The expressions of this node (not of its inputs).
    pub fn own_expressions(&self) -> Vec<&PhysicalExpr> {
        match self {
            PhysicalPlan::Scan { filters, .. } => filters.iter().collect(),
            PhysicalPlan::Pipeline { stages, .. } => stages
                .iter()
                .flat_map(|s| match s {
                    Stage::Filter(e) => vec![e],
                    Stage::Project(es, _) => es.iter().collect(),
                })
                .collect(),
            PhysicalPlan::HashAggregate { keys, aggs, .. } => keys
                .iter()
                .chain(aggs.iter().flat_map(|a| a.args.iter()))
                .collect(),
            PhysicalPlan::HashJoin {
                left_keys,
                right_keys,
                filter,
                ..
            } => left_keys
                .iter()
                .chain(right_keys)
                .chain(filter.as_ref())
                .collect(),
            PhysicalPlan::Sort { keys, .. } => keys.iter().map(|(e, _)| e).collect(),
            PhysicalPlan::Window {
                args,
                partition_by,
                order_by,
                ..
            } => args
                .iter()
                .chain(partition_by)
                .chain(order_by.iter().map(|(e, _)| e))
                .collect(),
            PhysicalPlan::CrossJoin { .. }
            | PhysicalPlan::Slice { .. }
            | PhysicalPlan::Union { .. } => vec![],
        }
    }

    /// Bytes of intermediate arrays that this node's fused expressions did
    /// not materialize so far.
    pub fn fused_bytes_saved(&self) -> usize {
        let mut saved = 0;
        for e in self.own_expressions() {
            e.visit_fused(&mut |f| saved += f.bytes_saved());
        }
        saved
    }

    /// The same plan with every expression evaluated operator by operator
    /// (what expression fusion is measured against).
    pub fn unfuse_expressions(&self) -> PhysicalPlan {
        let un = |es: &[PhysicalExpr]| es.iter().map(|e| e.unfuse()).collect::<Vec<_>>();
        let sorted = |ks: &[(PhysicalExpr, SortOptions)]| {
            ks.iter().map(|(e, o)| (e.unfuse(), *o)).collect::<Vec<_>>()
        };
        let b = |p: &PhysicalPlan| Box::new(p.unfuse_expressions());
        let mut out = self.clone();
        match &mut out {
            PhysicalPlan::Scan { filters, .. } => *filters = un(filters),
            PhysicalPlan::Pipeline { input, stages, .. } => {
                *input = b(input);
                for s in stages {
                    match s {
                        Stage::Filter(e) => *e = e.unfuse(),
                        Stage::Project(es, _) => *es = un(es),
                    }
                }
            }
            PhysicalPlan::HashAggregate {
                input, keys, aggs, ..
            } => {
                *input = b(input);
                *keys = un(keys);
                for a in aggs {
                    a.args = un(&a.args);
                }
            }
            PhysicalPlan::HashJoin {
                left,
                right,
                left_keys,
                right_keys,
                filter,
                ..
            } => {
                (*left, *right) = (b(left), b(right));
                (*left_keys, *right_keys) = (un(left_keys), un(right_keys));
                *filter = filter.as_ref().map(|f| f.unfuse());
            }
            PhysicalPlan::CrossJoin { left, right, .. } => {
                (*left, *right) = (b(left), b(right));
            }
            PhysicalPlan::Sort { input, keys, .. } => {
                *input = b(input);
                *keys = sorted(keys);
            }
            PhysicalPlan::Slice { input, .. } => *input = b(input),
            PhysicalPlan::Window {
                input,
                args,
                partition_by,
                order_by,
                ..
            } => {
                *input = b(input);
                *args = un(args);
                *partition_by = un(partition_by);
                *order_by = sorted(order_by);
            }
            PhysicalPlan::Union { inputs, .. } => {
                *inputs = inputs.iter().map(|i| i.unfuse_expressions()).collect();
            }
        }
        out
    }

    /// One-line description of this node (without children).
    pub fn describe(&self) -> String {
        let list = |e: &[PhysicalExpr]| {
            e.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            PhysicalPlan::Scan {
                source,
                filters,
                schema,
                ..
            } => {
                let cols: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
                let mut s = format!("Scan {source} columns=[{}]", cols.join(", "));
                if !filters.is_empty() {
                    s.push_str(&format!(" filters=[{}]", list(filters)));
                }
                s
            }
            PhysicalPlan::Pipeline { stages, .. } => {
                let parts: Vec<String> = stages
                    .iter()
                    .map(|s| match s {
                        Stage::Filter(p) => format!("filter {p}"),
                        Stage::Project(e, _) => format!("project [{}]", list(e)),
                    })
                    .collect();
                format!("Pipeline {}", parts.join(" -> "))
            }
            PhysicalPlan::HashAggregate { keys, aggs, .. } => {
                let a: Vec<String> = aggs
                    .iter()
                    .map(|a| format!("{}({})", a.func.name(), list(&a.args)))
                    .collect();
                format!(
                    "HashAggregate keys=[{}] aggs=[{}]",
                    list(keys),
                    a.join(", ")
                )
            }
            PhysicalPlan::HashJoin {
                left_keys,
                right_keys,
                how,
                build_side,
                filter,
                output,
                ..
            } => {
                let filter = filter
                    .as_ref()
                    .map(|f| format!(" filter={f}"))
                    .unwrap_or_default();
                let output = output
                    .as_ref()
                    .map(|o| {
                        let o: Vec<String> = o.iter().map(|i| format!("#{i}")).collect();
                        format!(" output=[{}]", o.join(", "))
                    })
                    .unwrap_or_default();
                format!(
                    "HashJoin {how:?} left=[{}] right=[{}] build={build_side:?}{filter}{output}",
                    list(left_keys),
                    list(right_keys)
                )
            }
            PhysicalPlan::CrossJoin { .. } => "CrossJoin".to_string(),
            PhysicalPlan::Window {
                func,
                args,
                partition_by,
                order_by,
                limit,
                ..
            } => {
                let o: Vec<String> = order_by.iter().map(|(e, _)| e.to_string()).collect();
                let top = limit.map_or(String::new(), |k| format!(" limit={k} per partition"));
                format!(
                    "Window {}({}) partition=[{}] order=[{}]{top}",
                    func.name(),
                    list(args),
                    list(partition_by),
                    o.join(", ")
                )
            }
            PhysicalPlan::Sort { keys, limit, .. } => {
                let k: Vec<String> = keys
                    .iter()
                    .map(|(e, o)| format!("{e} {}", if o.descending { "DESC" } else { "ASC" }))
                    .collect();
                match limit {
                    Some(n) => format!("TopK k={n} [{}]", k.join(", ")),
                    None => format!("Sort [{}]", k.join(", ")),
                }
            }
            PhysicalPlan::Slice { offset, len, .. } => format!("Slice offset={offset} len={len:?}"),
            PhysicalPlan::Union { inputs, .. } => format!("Union ({} inputs)", inputs.len()),
        }
    }
}

impl fmt::Display for PhysicalPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn go(p: &PhysicalPlan, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
            writeln!(f, "{:indent$}{}", "", p.describe(), indent = depth * 2)?;
            p.children()
                .into_iter()
                .try_for_each(|c| go(c, f, depth + 1))
        }
        go(self, f, 0)
    }
}
