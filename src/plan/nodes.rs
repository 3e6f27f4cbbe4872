//! The logical plan's node kinds, one struct each.
//!
//! A node is built by its constructor (`Filter::new`, or the shorthand
//! [`LogicalPlan::filter`]), which computes the node's output schema once
//! from its inputs' (themselves computed once) and keeps it: asking a plan
//! for its schema is a clone of an `Arc`, not a walk of the tree. A node
//! whose expressions do not resolve keeps no schema; asking for it then
//! gives the error (`LogicalPlan::validate` asks for every node's). The
//! fields are public to read and to match on; the cached schema is not,
//! so a node can only be made by its constructor.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use super::{JoinType, LogicalPlan, join_schema};
use crate::error::{Result, SlothError};
use crate::expr::{Expr, SortKey, window_output_type};
use crate::physical_expr::expr_field;

/// A node's cached schema: [`Self::schema`] returns it, or the error that
/// computing it gives when there is none; [`Self::with_schema`] fills it
/// in a constructor.
macro_rules! cached_schema {
    ($($node:ty),* $(,)?) => {$(
        impl $node {
            /// The schema of the node's output.
            pub fn schema(&self) -> Result<SchemaRef> {
                match &self.schema {
                    Some(schema) => Ok(schema.clone()),
                    None => self.compute_schema(),
                }
            }

            fn with_schema(mut self) -> Self {
                self.schema = self.compute_schema().ok();
                self
            }
        }
    )*};
}

cached_schema!(
    Filter, Project, Aggregate, Join, Sort, Slice, Window, Distinct, Union
);

/// Keep rows where the predicate is true.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// Input.
    pub input: Arc<LogicalPlan>,
    /// A Boolean expression.
    pub predicate: Expr,
    schema: Option<SchemaRef>,
}

impl Filter {
    /// Rows of `input` where `predicate` holds.
    pub fn new(input: Arc<LogicalPlan>, predicate: Expr) -> Self {
        Filter {
            input,
            predicate,
            schema: None,
        }
        .with_schema()
    }

    fn compute_schema(&self) -> Result<SchemaRef> {
        self.input.schema()
    }

    /// Checks that the predicate is Boolean (or NULL).
    pub(super) fn validate(&self) -> Result<()> {
        let f = expr_field(&self.predicate, &*self.input.schema()?)?;
        if !matches!(f.data_type(), DataType::Boolean | DataType::Null) {
            return Err(SlothError::types(format!(
                "filter predicate {} is {}, not Boolean",
                self.predicate,
                f.data_type()
            )));
        }
        Ok(())
    }
}

/// Compute a list of expressions per row.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// Input.
    pub input: Arc<LogicalPlan>,
    /// The output columns.
    pub exprs: Vec<Expr>,
    schema: Option<SchemaRef>,
}

impl Project {
    /// `exprs` over each row of `input`.
    pub fn new(input: Arc<LogicalPlan>, exprs: Vec<Expr>) -> Self {
        Project {
            input,
            exprs,
            schema: None,
        }
        .with_schema()
    }

    fn compute_schema(&self) -> Result<SchemaRef> {
        fields_over(&self.input, &self.exprs)
    }
}

/// Group by keys and compute aggregates.
#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    /// Input.
    pub input: Arc<LogicalPlan>,
    /// Grouping expressions (none: one global group).
    pub keys: Vec<Expr>,
    /// Aggregate expressions, each an (aliased) [`Expr::Agg`].
    pub aggs: Vec<Expr>,
    schema: Option<SchemaRef>,
}

impl Aggregate {
    /// `aggs` per group of `keys` over `input`: the keys, then the aggregates.
    pub fn new(input: Arc<LogicalPlan>, keys: Vec<Expr>, aggs: Vec<Expr>) -> Self {
        Aggregate {
            input,
            keys,
            aggs,
            schema: None,
        }
        .with_schema()
    }

    fn compute_schema(&self) -> Result<SchemaRef> {
        let all: Vec<Expr> = self.keys.iter().chain(&self.aggs).cloned().collect();
        fields_over(&self.input, &all)
    }
}

/// The fields of `exprs` over `input`'s rows, distinctly named.
fn fields_over(input: &LogicalPlan, exprs: &[Expr]) -> Result<SchemaRef> {
    let input = input.schema()?;
    let fields = exprs
        .iter()
        .map(|e| expr_field(e, &input))
        .collect::<Result<Vec<_>>>()?;
    check_unique(&fields)?;
    Ok(Arc::new(Schema::new(fields)))
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
    schema: Option<SchemaRef>,
}

impl Join {
    /// `left` joined with `right` where `left_on` equals `right_on` pair by
    /// pair (and `filter` holds), as `how` says.
    pub fn new(
        left: Arc<LogicalPlan>,
        right: Arc<LogicalPlan>,
        left_on: Vec<Expr>,
        right_on: Vec<Expr>,
        how: JoinType,
        filter: Option<Expr>,
    ) -> Self {
        Join {
            left,
            right,
            left_on,
            right_on,
            how,
            filter,
            schema: None,
        }
        .with_schema()
    }

    /// The same join (keys, kind and filter) over other inputs: what a
    /// rewrite of the inputs builds.
    pub fn with_inputs(&self, left: Arc<LogicalPlan>, right: Arc<LogicalPlan>) -> Join {
        Join::new(
            left,
            right,
            self.left_on.clone(),
            self.right_on.clone(),
            self.how,
            self.filter.clone(),
        )
    }

    /// The same join, of another kind.
    pub fn with_how(&self, how: JoinType) -> Join {
        Join::new(
            self.left.clone(),
            self.right.clone(),
            self.left_on.clone(),
            self.right_on.clone(),
            how,
            self.filter.clone(),
        )
    }

    fn compute_schema(&self) -> Result<SchemaRef> {
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
    pub(super) fn validate(&self) -> Result<()> {
        let (ls, rs) = (self.left.schema()?, self.right.schema()?);
        if let Some(f) = &self.filter {
            let pair = join_schema(&ls, &rs, JoinType::Inner);
            let t = expr_field(f, &pair)?.data_type().clone();
            if t != DataType::Boolean {
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

/// Order rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Sort {
    /// Input.
    pub input: Arc<LogicalPlan>,
    /// The keys, most significant first.
    pub by: Vec<SortKey>,
    schema: Option<SchemaRef>,
}

impl Sort {
    /// The rows of `input` ordered `by` its keys.
    pub fn new(input: Arc<LogicalPlan>, by: Vec<SortKey>) -> Self {
        Sort {
            input,
            by,
            schema: None,
        }
        .with_schema()
    }

    fn compute_schema(&self) -> Result<SchemaRef> {
        self.input.schema()
    }

    /// Checks that every key resolves.
    pub(super) fn validate(&self) -> Result<()> {
        let s = self.input.schema()?;
        for k in &self.by {
            expr_field(&k.expr, &s)?;
        }
        Ok(())
    }
}

/// Rows `offset..offset+len`.
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// Input.
    pub input: Arc<LogicalPlan>,
    /// Rows to skip.
    pub offset: usize,
    /// Rows to keep (all when `None`).
    pub len: Option<usize>,
    schema: Option<SchemaRef>,
}

impl Slice {
    /// Rows `offset..offset + len` of `input` (all from `offset` when
    /// `len` is `None`).
    pub fn new(input: Arc<LogicalPlan>, offset: usize, len: Option<usize>) -> Self {
        Slice {
            input,
            offset,
            len,
            schema: None,
        }
        .with_schema()
    }

    fn compute_schema(&self) -> Result<SchemaRef> {
        self.input.schema()
    }
}

/// Append window function columns: the input's columns, then one per
/// (aliased) [`Expr::Window`]. Output rows come in partition order.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    /// Input.
    pub input: Arc<LogicalPlan>,
    /// Window expressions, each aliased.
    pub exprs: Vec<Expr>,
    schema: Option<SchemaRef>,
}

impl Window {
    /// `input`'s columns and one per window expression of `exprs`.
    pub fn new(input: Arc<LogicalPlan>, exprs: Vec<Expr>) -> Self {
        Window {
            input,
            exprs,
            schema: None,
        }
        .with_schema()
    }

    fn compute_schema(&self) -> Result<SchemaRef> {
        let s = self.input.schema()?;
        let mut fields: Vec<Field> = s.fields().iter().map(|f| f.as_ref().clone()).collect();
        for e in &self.exprs {
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
        Ok(Arc::new(Schema::new(fields)))
    }
}

/// Remove duplicate rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Distinct {
    /// Input.
    pub input: Arc<LogicalPlan>,
    schema: Option<SchemaRef>,
}

impl Distinct {
    /// The distinct rows of `input`.
    pub fn new(input: Arc<LogicalPlan>) -> Self {
        Distinct {
            input,
            schema: None,
        }
        .with_schema()
    }

    fn compute_schema(&self) -> Result<SchemaRef> {
        self.input.schema()
    }
}

/// Concatenate inputs with the same schema (`UNION ALL`).
#[derive(Debug, Clone, PartialEq)]
pub struct Union {
    /// The inputs.
    pub inputs: Vec<Arc<LogicalPlan>>,
    schema: Option<SchemaRef>,
}

impl Union {
    /// The rows of all `inputs`, one after another.
    pub fn new(inputs: Vec<Arc<LogicalPlan>>) -> Self {
        Union {
            inputs,
            schema: None,
        }
        .with_schema()
    }

    /// This union with `input` appended: its schema widened by that
    /// input's alone, so that a chain `a UNION ALL b UNION ALL ..` of n
    /// terms is planned in O(n), not O(n²).
    pub fn push(mut self, input: Arc<LogicalPlan>) -> Self {
        let widened = match (&self.schema, input.schema()) {
            (Some(schema), Ok(next)) => widen(
                schema.fields().iter().map(|f| f.as_ref().clone()).collect(),
                &next,
            )
            .ok(),
            _ => None,
        };
        self.inputs.push(input);
        match widened {
            Some(schema) => {
                self.schema = Some(schema);
                self
            }
            None => self.with_schema(),
        }
    }

    /// The first input's names, each column in the common type of that
    /// column across all inputs.
    fn compute_schema(&self) -> Result<SchemaRef> {
        let first = self
            .inputs
            .first()
            .ok_or_else(|| SlothError::plan("union of no inputs"))?
            .schema()?;
        let mut schema: SchemaRef = Arc::new(Schema::new(
            first
                .fields()
                .iter()
                .map(|f| f.as_ref().clone().with_nullable(true))
                .collect::<Vec<_>>(),
        ));
        for other in &self.inputs[1..] {
            let fields = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
            schema = widen(fields, &*other.schema()?)?;
        }
        Ok(schema)
    }
}

/// A union's `fields` widened to hold the rows of one more input's schema
/// `next`: each column in the common type of both.
fn widen(mut fields: Vec<Field>, next: &Schema) -> Result<SchemaRef> {
    if next.fields().len() != fields.len() {
        return Err(SlothError::plan(format!(
            "union inputs have {} and {} columns",
            fields.len(),
            next.fields().len()
        )));
    }
    for (f, g) in fields.iter_mut().zip(next.fields()) {
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
    Ok(Arc::new(Schema::new(fields)))
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
