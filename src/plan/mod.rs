//! The logical plan: what to compute, not how.
//!
//! Both front ends (the [`crate::LazyFrame`] API and SQL) build these nodes;
//! the optimizer rewrites them; the physical planner turns them into
//! operators. Column names are resolved against [`LogicalPlan::schema`].
//!
//! Each node kind is a struct (`nodes.rs`) built by a constructor that
//! computes its output schema once; the enum's shorthands
//! ([`LogicalPlan::filter`], [`LogicalPlan::project`], ...) build them.

pub mod cardinality;
mod display;
mod nodes;
mod transformed;

use std::sync::Arc;

use arrow::datatypes::{Field, Schema, SchemaRef};

use crate::error::{Result, SlothError};
use crate::expr::Expr;
use crate::io::ScanSource;

pub use nodes::{Aggregate, Distinct, Filter, Join, Project, Slice, Sort, Union, Window};
pub use transformed::Transformed;

/// The input column that the output `name` of `exprs` (a projection's or
/// an aggregate's grouping expressions) passes on unchanged, maybe under an
/// alias; `None` when that output is computed or absent.
pub(crate) fn column_passed_on<'a>(exprs: &'a [Expr], name: &str) -> Option<&'a str> {
    match exprs.iter().find(|e| e.output_name() == name)?.unalias() {
        Expr::Column(c) => Some(c),
        _ => None,
    }
}

/// Join kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinType {
    /// Matching pairs only.
    Inner,
    /// Every left row; right columns null where nothing matched.
    Left,
    /// Every right row; left columns null where nothing matched.
    Right,
    /// Every row of both sides.
    Full,
    /// Left rows that have a match (left columns only).
    Semi,
    /// Left rows that have no match (left columns only).
    Anti,
    /// Every pair (no keys).
    Cross,
}

impl JoinType {
    /// True if the output holds the right side's columns.
    pub fn outputs_right(self) -> bool {
        !matches!(self, JoinType::Semi | JoinType::Anti)
    }
}

impl std::str::FromStr for JoinType {
    type Err = SlothError;

    /// The kind a name stands for, as Polars spells them (`inner`, `left`,
    /// `right`, `full`, `semi`, `anti`, `cross`); `outer` is `full`.
    fn from_str(name: &str) -> Result<Self> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "inner" => JoinType::Inner,
            "left" => JoinType::Left,
            "right" => JoinType::Right,
            "full" | "outer" => JoinType::Full,
            "semi" => JoinType::Semi,
            "anti" => JoinType::Anti,
            "cross" => JoinType::Cross,
            _ => {
                return Err(SlothError::Plan(format!(
                    "unknown join kind '{name}'; expected inner, left, right, full, semi, anti or cross"
                )));
            }
        })
    }
}

pub use crate::expr::SortKey;

/// A table read, with what the optimizer pushed into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    /// Where the rows come from.
    pub source: ScanSource,
    /// Indices of the source columns to read (all when `None`).
    pub projection: Option<Vec<usize>>,
    /// Conjuncts the reader applies (and uses to skip row groups).
    pub filters: Vec<Expr>,
}

impl Scan {
    /// The schema of the rows the scan produces.
    pub fn schema(&self) -> SchemaRef {
        let full = self.source.schema();
        match &self.projection {
            Some(p) => Arc::new(
                full.project(p)
                    .expect("projection indices come from the schema"),
            ),
            None => full,
        }
    }
}

/// A node of the logical plan.
#[derive(Debug, Clone, PartialEq)]
pub enum LogicalPlan {
    /// Read a table.
    Scan(Scan),
    /// Keep rows where the predicate is true.
    Filter(Filter),
    /// Compute a list of expressions per row.
    Project(Project),
    /// Group by keys and compute aggregates.
    Aggregate(Aggregate),
    /// Equi-join (or cross join when the key lists are empty).
    Join(Join),
    /// Order rows.
    Sort(Sort),
    /// Rows `offset..offset+len`.
    Slice(Slice),
    /// Append window function columns.
    Window(Window),
    /// Remove duplicate rows.
    Distinct(Distinct),
    /// Concatenate inputs with the same schema (`UNION ALL`).
    Union(Union),
}

/// The suffix given to a right-side column whose name the left side has.
pub const RIGHT_SUFFIX: &str = "_right";

fn nullable(f: &Field) -> Field {
    f.clone().with_nullable(true)
}

impl LogicalPlan {
    /// The names of this node's output columns, in order.
    pub fn column_names(&self) -> Result<Vec<String>> {
        Ok(self
            .schema()?
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect())
    }

    /// The schema of this node's output (computed when the node was
    /// built).
    pub fn schema(&self) -> Result<SchemaRef> {
        match self {
            LogicalPlan::Scan(scan) => Ok(scan.schema()),
            LogicalPlan::Filter(n) => n.schema(),
            LogicalPlan::Project(n) => n.schema(),
            LogicalPlan::Aggregate(n) => n.schema(),
            LogicalPlan::Join(n) => n.schema(),
            LogicalPlan::Sort(n) => n.schema(),
            LogicalPlan::Slice(n) => n.schema(),
            LogicalPlan::Window(n) => n.schema(),
            LogicalPlan::Distinct(n) => n.schema(),
            LogicalPlan::Union(n) => n.schema(),
        }
    }

    /// The direct inputs of this node.
    pub fn inputs(&self) -> Vec<&Arc<LogicalPlan>> {
        match self {
            LogicalPlan::Scan(_) => vec![],
            LogicalPlan::Filter(Filter { input, .. })
            | LogicalPlan::Project(Project { input, .. })
            | LogicalPlan::Aggregate(Aggregate { input, .. })
            | LogicalPlan::Sort(Sort { input, .. })
            | LogicalPlan::Slice(Slice { input, .. })
            | LogicalPlan::Distinct(Distinct { input, .. })
            | LogicalPlan::Window(Window { input, .. }) => vec![input],
            LogicalPlan::Join(Join { left, right, .. }) => vec![left, right],
            LogicalPlan::Union(Union { inputs, .. }) => inputs.iter().collect(),
        }
    }

    /// The same node over new inputs (in the order of [`Self::inputs`]).
    pub fn with_inputs(&self, mut new: Vec<Arc<LogicalPlan>>) -> LogicalPlan {
        let mut next = || new.remove(0);
        match self {
            LogicalPlan::Scan(s) => LogicalPlan::Scan(s.clone()),
            LogicalPlan::Filter(n) => LogicalPlan::filter(next(), n.predicate.clone()),
            LogicalPlan::Project(n) => LogicalPlan::project(next(), n.exprs.clone()),
            LogicalPlan::Aggregate(n) => {
                LogicalPlan::aggregate(next(), n.keys.clone(), n.aggs.clone())
            }
            LogicalPlan::Sort(n) => LogicalPlan::sort(next(), n.by.clone()),
            LogicalPlan::Slice(n) => LogicalPlan::slice(next(), n.offset, n.len),
            LogicalPlan::Distinct(_) => LogicalPlan::distinct(next()),
            LogicalPlan::Window(n) => LogicalPlan::window(next(), n.exprs.clone()),
            LogicalPlan::Join(join) => {
                let left = next();
                LogicalPlan::Join(join.with_inputs(left, next()))
            }
            LogicalPlan::Union(_) => LogicalPlan::union(new),
        }
    }

    /// A [`Filter`] node.
    pub fn filter(input: Arc<LogicalPlan>, predicate: Expr) -> Self {
        LogicalPlan::Filter(Filter::new(input, predicate))
    }

    /// A [`Project`] node.
    pub fn project(input: Arc<LogicalPlan>, exprs: Vec<Expr>) -> Self {
        LogicalPlan::Project(Project::new(input, exprs))
    }

    /// An [`Aggregate`] node.
    pub fn aggregate(input: Arc<LogicalPlan>, keys: Vec<Expr>, aggs: Vec<Expr>) -> Self {
        LogicalPlan::Aggregate(Aggregate::new(input, keys, aggs))
    }

    /// A [`Sort`] node.
    pub fn sort(input: Arc<LogicalPlan>, by: Vec<SortKey>) -> Self {
        LogicalPlan::Sort(Sort::new(input, by))
    }

    /// A [`Slice`] node.
    pub fn slice(input: Arc<LogicalPlan>, offset: usize, len: Option<usize>) -> Self {
        LogicalPlan::Slice(Slice::new(input, offset, len))
    }

    /// A [`Window`] node.
    pub fn window(input: Arc<LogicalPlan>, exprs: Vec<Expr>) -> Self {
        LogicalPlan::Window(Window::new(input, exprs))
    }

    /// A [`Distinct`] node.
    pub fn distinct(input: Arc<LogicalPlan>) -> Self {
        LogicalPlan::Distinct(Distinct::new(input))
    }

    /// A [`Union`] node.
    pub fn union(inputs: Vec<Arc<LogicalPlan>>) -> Self {
        LogicalPlan::Union(Union::new(inputs))
    }

    /// Rewrites the tree bottom-up with `f`, which says of each node
    /// whether it changed it. A node none of whose inputs changed keeps
    /// them as they are (shared, not rebuilt).
    pub fn transform_up(
        &self,
        f: &mut impl FnMut(LogicalPlan) -> Result<Transformed<LogicalPlan>>,
    ) -> Result<Transformed<LogicalPlan>> {
        let mut changed = false;
        let mut inputs = Vec::new();
        for input in self.inputs() {
            let t = input.transform_up(f)?;
            changed |= t.transformed;
            inputs.push(t.data);
        }
        let node = if changed {
            self.with_inputs(inputs.into_iter().map(Arc::new).collect())
        } else {
            self.clone()
        };
        let mut t = f(node)?;
        t.transformed |= changed;
        Ok(t)
    }

    /// Checks that every expression resolves; used by front ends to fail
    /// early with a clear error instead of at `collect()`.
    pub fn validate(&self) -> Result<()> {
        for i in self.inputs() {
            i.validate()?;
        }
        self.schema()?;
        match self {
            LogicalPlan::Filter(filter) => filter.validate(),
            LogicalPlan::Sort(sort) => sort.validate(),
            LogicalPlan::Join(join) => join.validate(),
            _ => Ok(()),
        }
    }
}

/// Output schema of a join: left columns, then right columns (nullable where
/// the join can produce nulls), right names that clash get [`RIGHT_SUFFIX`].
pub fn join_schema(left: &Schema, right: &Schema, how: JoinType) -> SchemaRef {
    let mut fields: Vec<Field> = left.fields().iter().map(|f| nullable(f)).collect();
    if how.outputs_right() {
        for f in right.fields() {
            let mut name = f.name().clone();
            while fields.iter().any(|g| g.name() == &name) {
                name.push_str(RIGHT_SUFFIX);
            }
            fields.push(nullable(f).with_name(name));
        }
    }
    Arc::new(Schema::new(fields))
}

/// Computes the window functions found anywhere in `exprs` by one
/// [`LogicalPlan::Window`] over `input`, under hidden names `__w0`, `__w1`, …,
/// and rewrites `exprs` to read those columns (a repeated window is computed
/// once). Returns `input` unchanged when there are none. Both front ends plan
/// `SELECT rank() OVER (..) + 1` and `select([.. over(..) ..])` this way.
pub fn lift_windows<'a>(
    input: Arc<LogicalPlan>,
    exprs: impl IntoIterator<Item = &'a mut Expr>,
) -> Arc<LogicalPlan> {
    let mut exprs: Vec<&mut Expr> = exprs.into_iter().collect();
    let mut windows: Vec<Expr> = Vec::new();
    for e in &exprs {
        e.visit(&mut |n| {
            if matches!(n, Expr::Window { .. }) && !windows.contains(n) {
                windows.push(n.clone());
            }
        });
    }
    if windows.is_empty() {
        return input;
    }
    let names: Vec<String> = (0..windows.len()).map(|i| format!("__w{i}")).collect();
    for e in exprs.iter_mut() {
        // Bottom-up is safe: a window's own arguments hold no windows.
        **e = std::mem::replace(&mut **e, Expr::Wildcard).transform(&mut |n| match windows
            .iter()
            .position(|w| *w == n)
        {
            Some(i) => crate::expr::col(names[i].as_str()),
            None => n,
        });
    }
    Arc::new(LogicalPlan::window(
        input,
        windows
            .into_iter()
            .zip(&names)
            .map(|(w, n)| w.alias(n.as_str()))
            .collect(),
    ))
}
