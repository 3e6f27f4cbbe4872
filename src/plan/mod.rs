//! The logical plan: what to compute, not how.
//!
//! Both front ends (the [`crate::LazyFrame`] API and SQL) build these nodes;
//! the optimizer rewrites them; the physical planner turns them into
//! operators. Column names are resolved against [`LogicalPlan::schema`].

pub mod cardinality;
mod display;
mod transformed;

use std::sync::Arc;

use arrow::datatypes::{Field, Schema, SchemaRef};

use crate::error::{Result, SlothError};
use crate::expr::Expr;
use crate::expr::window_output_type;
use crate::io::ScanSource;
use crate::physical_expr::expr_field;

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

/// A join of two inputs: an equi-join on pairs of key expressions (none
/// for a cross join), of a kind, with an optional condition on each pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    /// Left input.
    pub left: Arc<LogicalPlan>,
    /// Right input.
    pub right: Arc<LogicalPlan>,
    /// Left key expressions.
    pub left_on: Vec<Expr>,
    /// Right key expressions, pairwise equal to `left_on`.
    pub right_on: Vec<Expr>,
    /// Join kind.
    pub how: JoinType,
    /// Extra condition on each matching pair, over the columns of both
    /// sides (named as in an inner join's output). A pair counts as a
    /// match only if it holds: this is how `EXISTS` subqueries with
    /// non-equality correlation (TPC-H Q21) are joined.
    pub filter: Option<Expr>,
}

impl Join {
    /// The same join (keys, kind and filter) over other inputs: what a
    /// rewrite of the inputs builds.
    pub fn with_inputs(&self, left: Arc<LogicalPlan>, right: Arc<LogicalPlan>) -> Join {
        Join {
            left,
            right,
            left_on: self.left_on.clone(),
            right_on: self.right_on.clone(),
            how: self.how,
            filter: self.filter.clone(),
        }
    }

    /// The schema of the join's output ([`join_schema`]).
    pub fn schema(&self) -> Result<SchemaRef> {
        Ok(join_schema(
            &*self.left.schema()?,
            &*self.right.schema()?,
            self.how,
        ))
    }

    /// The key pairs, left with right.
    pub fn keys(&self) -> impl Iterator<Item = (&Expr, &Expr)> {
        self.left_on.iter().zip(&self.right_on)
    }
    /// Checks that the filter is Boolean and the keys pair up and compare.
    fn validate(&self) -> Result<()> {
        let (ls, rs) = (self.left.schema()?, self.right.schema()?);
        if let Some(f) = &self.filter {
            let pair = join_schema(&ls, &rs, JoinType::Inner);
            let t = expr_field(f, &pair)?.data_type().clone();
            if t != arrow::datatypes::DataType::Boolean {
                return Err(SlothError::types(format!(
                    "join filter {f} is {t}, not Boolean"
                )));
            }
        }
        if self.left_on.len() != self.right_on.len() {
            return Err(SlothError::plan(format!(
                "join has {} left keys but {} right keys",
                self.left_on.len(),
                self.right_on.len()
            )));
        }
        for (l, r) in self.keys() {
            let lt = expr_field(l, &ls)?.data_type().clone();
            let rt = expr_field(r, &rs)?.data_type().clone();
            if crate::expr::common_type(&lt, &rt).is_none() {
                return Err(SlothError::types(format!(
                    "join keys {l} ({lt}) and {r} ({rt}) cannot be compared"
                )));
            }
        }
        Ok(())
    }
}

/// A node of the logical plan.
#[derive(Debug, Clone, PartialEq)]
pub enum LogicalPlan {
    /// Read a table.
    Scan(Scan),
    /// Keep rows where the predicate is true.
    Filter {
        /// Input.
        input: Arc<LogicalPlan>,
        /// A Boolean expression.
        predicate: Expr,
    },
    /// Compute a list of expressions per row.
    Project {
        /// Input.
        input: Arc<LogicalPlan>,
        /// The output columns.
        exprs: Vec<Expr>,
    },
    /// Group by keys and compute aggregates.
    Aggregate {
        /// Input.
        input: Arc<LogicalPlan>,
        /// Grouping expressions (none: one global group).
        keys: Vec<Expr>,
        /// Aggregate expressions, each an (aliased) [`Expr::Agg`].
        aggs: Vec<Expr>,
    },
    /// Equi-join (or cross join when the key lists are empty).
    Join(Join),
    /// Order rows.
    Sort {
        /// Input.
        input: Arc<LogicalPlan>,
        /// The keys, most significant first.
        by: Vec<SortKey>,
    },
    /// Rows `offset..offset+len`.
    Slice {
        /// Input.
        input: Arc<LogicalPlan>,
        /// Rows to skip.
        offset: usize,
        /// Rows to keep (all when `None`).
        len: Option<usize>,
    },
    /// Append window function columns: the input's columns, then one per
    /// (aliased) [`Expr::Window`]. Output rows come in partition order.
    Window {
        /// Input.
        input: Arc<LogicalPlan>,
        /// Window expressions, each aliased.
        exprs: Vec<Expr>,
    },
    /// Remove duplicate rows.
    Distinct {
        /// Input.
        input: Arc<LogicalPlan>,
    },
    /// Concatenate inputs with the same schema (`UNION ALL`).
    Union {
        /// The inputs.
        inputs: Vec<Arc<LogicalPlan>>,
    },
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

    /// The schema of this node's output.
    pub fn schema(&self) -> Result<SchemaRef> {
        Ok(match self {
            LogicalPlan::Scan(scan) => scan.schema(),
            LogicalPlan::Filter { input, .. }
            | LogicalPlan::Sort { input, .. }
            | LogicalPlan::Slice { input, .. }
            | LogicalPlan::Distinct { input } => input.schema()?,
            LogicalPlan::Project { input, exprs } => {
                let input = input.schema()?;
                let fields = exprs
                    .iter()
                    .map(|e| expr_field(e, &input))
                    .collect::<Result<Vec<_>>>()?;
                check_unique(&fields)?;
                Arc::new(Schema::new(fields))
            }
            LogicalPlan::Aggregate { input, keys, aggs } => {
                let input = input.schema()?;
                let fields = keys
                    .iter()
                    .chain(aggs)
                    .map(|e| expr_field(e, &input))
                    .collect::<Result<Vec<_>>>()?;
                check_unique(&fields)?;
                Arc::new(Schema::new(fields))
            }
            LogicalPlan::Join(join) => join.schema()?,
            LogicalPlan::Window { input, exprs } => {
                let s = input.schema()?;
                let mut fields: Vec<Field> =
                    s.fields().iter().map(|f| f.as_ref().clone()).collect();
                for e in exprs {
                    let Expr::Window {
                        func,
                        args,
                        order_by,
                        ..
                    } = e.unalias()
                    else {
                        return Err(SlothError::plan(format!("'{e}' is not a window function")));
                    };
                    if let (Some(frame), [key]) = (func.frame(), order_by.as_slice()) {
                        frame.check_key(expr_field(&key.expr, &s)?.data_type())?;
                    }
                    let types = args
                        .iter()
                        .map(|a| Ok(expr_field(a, &s)?.data_type().clone()))
                        .collect::<Result<Vec<_>>>()?;
                    let data_type = window_output_type(*func, &types)?;
                    fields.push(Field::new(e.output_name(), data_type, true));
                }
                check_unique(&fields)?;
                Arc::new(Schema::new(fields))
            }
            LogicalPlan::Union { inputs } => union_schema(inputs)?,
        })
    }

    /// The direct inputs of this node.
    pub fn inputs(&self) -> Vec<&Arc<LogicalPlan>> {
        match self {
            LogicalPlan::Scan(_) => vec![],
            LogicalPlan::Filter { input, .. }
            | LogicalPlan::Project { input, .. }
            | LogicalPlan::Aggregate { input, .. }
            | LogicalPlan::Sort { input, .. }
            | LogicalPlan::Slice { input, .. }
            | LogicalPlan::Distinct { input }
            | LogicalPlan::Window { input, .. } => vec![input],
            LogicalPlan::Join(Join { left, right, .. }) => vec![left, right],
            LogicalPlan::Union { inputs } => inputs.iter().collect(),
        }
    }

    /// The same node over new inputs (in the order of [`Self::inputs`]).
    pub fn with_inputs(&self, mut new: Vec<Arc<LogicalPlan>>) -> LogicalPlan {
        let mut next = || new.remove(0);
        match self {
            LogicalPlan::Scan(s) => LogicalPlan::Scan(s.clone()),
            LogicalPlan::Filter { predicate, .. } => LogicalPlan::Filter {
                input: next(),
                predicate: predicate.clone(),
            },
            LogicalPlan::Project { exprs, .. } => LogicalPlan::Project {
                input: next(),
                exprs: exprs.clone(),
            },
            LogicalPlan::Aggregate { keys, aggs, .. } => LogicalPlan::Aggregate {
                input: next(),
                keys: keys.clone(),
                aggs: aggs.clone(),
            },
            LogicalPlan::Sort { by, .. } => LogicalPlan::Sort {
                input: next(),
                by: by.clone(),
            },
            LogicalPlan::Slice { offset, len, .. } => LogicalPlan::Slice {
                input: next(),
                offset: *offset,
                len: *len,
            },
            LogicalPlan::Distinct { .. } => LogicalPlan::Distinct { input: next() },
            LogicalPlan::Window { exprs, .. } => LogicalPlan::Window {
                input: next(),
                exprs: exprs.clone(),
            },
            LogicalPlan::Join(join) => {
                let left = next();
                LogicalPlan::Join(join.with_inputs(left, next()))
            }
            LogicalPlan::Union { .. } => LogicalPlan::Union { inputs: new },
        }
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
            LogicalPlan::Filter { input, predicate } => {
                let f = expr_field(predicate, &*input.schema()?)?;
                if !matches!(
                    f.data_type(),
                    arrow::datatypes::DataType::Boolean | arrow::datatypes::DataType::Null
                ) {
                    return Err(SlothError::types(format!(
                        "filter predicate {predicate} is {}, not Boolean",
                        f.data_type()
                    )));
                }
            }
            LogicalPlan::Sort { input, by } => {
                let s = input.schema()?;
                for k in by {
                    expr_field(&k.expr, &s)?;
                }
            }
            LogicalPlan::Join(join) => join.validate()?,
            _ => {}
        }
        Ok(())
    }
}

fn check_unique(fields: &[Field]) -> Result<()> {
    for (i, f) in fields.iter().enumerate() {
        if fields[..i].iter().any(|g| g.name() == f.name()) {
            return Err(SlothError::plan(format!(
                "duplicate output column '{}'; use alias() (or AS) to rename one",
                f.name()
            )));
        }
    }
    Ok(())
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

/// Union output: the first input's names, each column in the common type of
/// that column across all inputs.
fn union_schema(inputs: &[Arc<LogicalPlan>]) -> Result<SchemaRef> {
    let first = inputs
        .first()
        .ok_or_else(|| SlothError::plan("union of no inputs"))?
        .schema()?;
    let mut fields: Vec<Field> = first.fields().iter().map(|f| nullable(f)).collect();
    for other in &inputs[1..] {
        let s = other.schema()?;
        if s.fields().len() != fields.len() {
            return Err(SlothError::plan(format!(
                "union inputs have {} and {} columns",
                fields.len(),
                s.fields().len()
            )));
        }
        for (f, g) in fields.iter_mut().zip(s.fields()) {
            let t = crate::expr::common_type(f.data_type(), g.data_type()).ok_or_else(|| {
                SlothError::types(format!(
                    "union column '{}' is {} in one input and {} in another",
                    f.name(),
                    f.data_type(),
                    g.data_type()
                ))
            })?;
            *f = f.clone().with_data_type(t);
        }
    }
    Ok(Arc::new(Schema::new(fields)))
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
    Arc::new(LogicalPlan::Window {
        input,
        exprs: windows
            .into_iter()
            .zip(&names)
            .map(|(w, n)| w.alias(n.as_str()))
            .collect(),
    })
}
