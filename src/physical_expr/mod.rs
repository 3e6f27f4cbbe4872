//! Resolved, type-checked expressions ready to run over record batches.
//!
//! This layer sits below the readers ([`crate::io`] evaluates pushed-down
//! filters with it) and above the array kernels it calls, as DataFusion's
//! `physical-expr` crate sits below its data sources.
//!
//! [`PhysicalExpr::compile`] resolves column names to indices, checks operand
//! types, and inserts the casts that coercion asks for, so evaluation
//! ([`eval`]) never looks a name up or decides a type per batch.

use std::fmt;
use std::sync::Arc;

use arrow::array::{ArrayRef, new_empty_array, new_null_array};
use arrow::datatypes::{DataType, Field, Schema};

use crate::error::{Result, SlothError};
use crate::expr::function::ArgType;
use crate::expr::{
    Expr, Operator, ScalarFunc, ScalarValue, agg_output_type, coerce_binary, common_type_of_values,
};
use fused::FusedExpr;

pub mod eval;
pub mod fused;

/// A compiled expression node together with its output type.
#[derive(Debug, Clone)]
pub struct PhysicalExpr {
    /// What to compute.
    pub node: Node,
    /// The type of the values it produces.
    pub data_type: DataType,
}

/// The operations of a [`PhysicalExpr`].
#[derive(Debug, Clone)]
pub enum Node {
    /// Input column by position.
    Column(usize),
    /// A constant, as a one-element array.
    Literal(ArrayRef),
    /// Binary operator; operands already have the coerced types.
    Binary(Box<PhysicalExpr>, Operator, Box<PhysicalExpr>),
    /// Three-valued NOT.
    Not(Box<PhysicalExpr>),
    /// Arithmetic negation.
    Negative(Box<PhysicalExpr>),
    /// IS NULL.
    IsNull(Box<PhysicalExpr>),
    /// IS NOT NULL.
    IsNotNull(Box<PhysicalExpr>),
    /// Conversion to `data_type`.
    Cast(Box<PhysicalExpr>),
    /// CASE; every branch already has `data_type`.
    Case(Vec<(PhysicalExpr, PhysicalExpr)>, Option<Box<PhysicalExpr>>),
    /// IN list of constants of the tested expression's type.
    InList(Box<PhysicalExpr>, Vec<ArrayRef>, bool),
    /// Scalar function.
    Function(ScalarFunc, Vec<PhysicalExpr>),
    /// An arithmetic tree evaluated in one fused loop.
    Fused(Arc<FusedExpr>),
    /// A predicate an operator made at run time (a join's build keys,
    /// pushed into the scan it probes with), over its arguments.
    Runtime(Arc<dyn RuntimeFilter>, Vec<PhysicalExpr>),
}

/// A row predicate known only once a query runs, such as "the join key has
/// a match on the build side". Never part of a plan: an operator adds it to
/// its input's scan filters for one execution.
pub trait RuntimeFilter: Send + Sync + fmt::Debug {
    /// Which rows of `args` (the node's arguments, evaluated) pass; `None`
    /// when every row does, or the filter no longer pays for itself.
    fn mask(&self, args: &[ArrayRef]) -> Result<Option<arrow::array::BooleanArray>>;
    /// A short description for plans and profiles.
    fn describe(&self) -> String;
}

fn column_index(schema: &Schema, name: &str) -> Result<usize> {
    schema
        .index_of(name)
        .map_err(|_| SlothError::ColumnNotFound {
            name: name.to_string(),
            available: schema.fields().iter().map(|f| f.name().clone()).collect(),
        })
}

impl PhysicalExpr {
    fn new(node: Node, data_type: DataType) -> Self {
        PhysicalExpr { node, data_type }
    }

    /// Wraps in a cast unless the type already matches.
    pub fn cast_to(self, to: &DataType) -> Result<PhysicalExpr> {
        if &self.data_type == to {
            return Ok(self);
        }
        if !arrow::compute::can_cast_types(&self.data_type, to) {
            return Err(SlothError::types(format!(
                "cannot cast {} to {to}",
                self.data_type
            )));
        }
        // Constants are cast once here rather than once per batch.
        if let Node::Literal(array) = &self.node {
            let cast = crate::physical_expr::eval::sql_cast(array, to)?;
            return Ok(PhysicalExpr::new(Node::Literal(cast), to.clone()));
        }
        Ok(PhysicalExpr::new(Node::Cast(Box::new(self)), to.clone()))
    }

    /// Compiles `expr` against `schema`; arithmetic trees that can run as
    /// one fused loop become [`Node::Fused`].
    pub fn compile(expr: &Expr, schema: &Schema) -> Result<PhysicalExpr> {
        Ok(Self::compile_tree(expr, schema)?.fuse())
    }

    /// The largest fusable subtrees of this expression, fused.
    pub fn fuse(self) -> PhysicalExpr {
        if let Some(f) = FusedExpr::compile(&self) {
            return PhysicalExpr::new(Node::Fused(f), self.data_type);
        }
        self.map_children(PhysicalExpr::fuse)
    }

    /// This expression with every fused node replaced by the tree it runs.
    pub fn unfuse(&self) -> PhysicalExpr {
        match &self.node {
            Node::Fused(f) => f.original.unfuse(),
            _ => self.clone().map_children(|c| c.unfuse()),
        }
    }

    /// The input columns this expression reads, ascending, each once.
    pub fn columns(&self) -> Vec<usize> {
        fn walk(e: &PhysicalExpr, out: &mut Vec<usize>) {
            match &e.node {
                Node::Column(i) => out.push(*i),
                Node::Fused(f) => walk(&f.original, out),
                _ => e.children().into_iter().for_each(|c| walk(c, out)),
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// This expression over a batch whose columns are laid out differently:
    /// column `i` becomes column `to(i)`.
    pub fn remap_columns(&self, to: &impl Fn(usize) -> usize) -> PhysicalExpr {
        fn go(e: PhysicalExpr, to: &impl Fn(usize) -> usize) -> PhysicalExpr {
            match e.node {
                Node::Column(i) => PhysicalExpr::new(Node::Column(to(i)), e.data_type),
                _ => e.map_children(|c| go(c, to)),
            }
        }
        go(self.unfuse(), to).fuse()
    }

    /// Calls `f` on every fused node.
    pub fn visit_fused(&self, f: &mut impl FnMut(&FusedExpr)) {
        match &self.node {
            Node::Fused(x) => f(x),
            _ => self.children().into_iter().for_each(|c| c.visit_fused(f)),
        }
    }

    /// The direct operands (a fused node's tree is not looked into).
    fn children(&self) -> Vec<&PhysicalExpr> {
        match &self.node {
            Node::Column(_) | Node::Literal(_) | Node::Fused(_) => vec![],
            Node::Binary(l, _, r) => vec![l, r],
            Node::Not(e)
            | Node::Negative(e)
            | Node::IsNull(e)
            | Node::IsNotNull(e)
            | Node::Cast(e)
            | Node::InList(e, _, _) => vec![e],
            Node::Case(branches, otherwise) => branches
                .iter()
                .flat_map(|(w, t)| [w, t])
                .chain(otherwise.as_deref())
                .collect(),
            Node::Function(_, args) | Node::Runtime(_, args) => args.iter().collect(),
        }
    }

    fn map_children(self, mut f: impl FnMut(PhysicalExpr) -> PhysicalExpr) -> PhysicalExpr {
        let node = match self.node {
            Node::Binary(l, op, r) => Node::Binary(Box::new(f(*l)), op, Box::new(f(*r))),
            Node::Not(e) => Node::Not(Box::new(f(*e))),
            Node::Negative(e) => Node::Negative(Box::new(f(*e))),
            Node::IsNull(e) => Node::IsNull(Box::new(f(*e))),
            Node::IsNotNull(e) => Node::IsNotNull(Box::new(f(*e))),
            Node::Cast(e) => Node::Cast(Box::new(f(*e))),
            Node::InList(e, list, negated) => Node::InList(Box::new(f(*e)), list, negated),
            Node::Case(branches, otherwise) => Node::Case(
                branches.into_iter().map(|(w, t)| (f(w), f(t))).collect(),
                otherwise.map(|o| Box::new(f(*o))),
            ),
            Node::Function(func, args) => Node::Function(func, args.into_iter().map(f).collect()),
            Node::Runtime(filter, args) => Node::Runtime(filter, args.into_iter().map(f).collect()),
            leaf => leaf,
        };
        PhysicalExpr::new(node, self.data_type)
    }

    /// Compiles `expr` against `schema`, operator by operator.
    fn compile_tree(expr: &Expr, schema: &Schema) -> Result<PhysicalExpr> {
        Ok(match expr {
            Expr::Column(name) => {
                let i = column_index(schema, name)?;
                PhysicalExpr::new(Node::Column(i), schema.field(i).data_type().clone())
            }
            Expr::Literal(v) => literal(v)?,
            Expr::Alias(e, _) => Self::compile_tree(e, schema)?,
            Expr::Binary { left, op, right } => {
                let mut l = Self::compile_tree(left, schema)?;
                let mut r = Self::compile_tree(right, schema)?;
                // `interval + date` is computed as `date + interval`.
                if *op == Operator::Plus
                    && (matches!(l.data_type, DataType::Interval(_))
                        || (l.data_type.is_integer() && r.data_type == DataType::Date32))
                {
                    std::mem::swap(&mut l, &mut r);
                }
                if l.data_type == DataType::Date32
                    && r.data_type.is_integer()
                    && matches!(op, Operator::Plus | Operator::Minus)
                {
                    return date_plus_days(l, *op, r);
                }
                // `int_col = '25'`: a quoted constant takes the other
                // side's type, as PostgreSQL's untyped literals do.
                if op.is_comparison() {
                    // Strings meet strings as before: the literal keeps its
                    // own type for the string kernels' fast paths.
                    let typed = |e: &PhysicalExpr| {
                        e.data_type != DataType::Null
                            && !crate::expr::function::is_stringish(&e.data_type)
                    };
                    if r.is_string_constant() && typed(&l) {
                        r = r.cast_to(&l.data_type)?;
                    } else if l.is_string_constant() && typed(&r) {
                        l = l.cast_to(&r.data_type)?;
                    }
                }
                let (mut lt, mut rt) = coerce_binary(*op, &l.data_type, &r.data_type)?;
                // `column < constant`: bring the constant to the column's own
                // type when that is exact, rather than casting every row.
                if op.is_comparison() {
                    if r.as_literal().is_some() && fits_exactly(&r, &l.data_type, &lt) {
                        (lt, rt) = (l.data_type.clone(), l.data_type.clone());
                    } else if l.as_literal().is_some() && fits_exactly(&l, &r.data_type, &rt) {
                        (lt, rt) = (r.data_type.clone(), r.data_type.clone());
                    }
                }
                let l = l.cast_to(&lt)?;
                let r = r.cast_to(&rt)?;
                let out = if op.is_comparison() || matches!(op, Operator::And | Operator::Or) {
                    DataType::Boolean
                } else {
                    arithmetic_type(*op, &lt, &rt)?
                };
                PhysicalExpr::new(Node::Binary(Box::new(l), *op, Box::new(r)), out)
            }
            Expr::Not(e) => {
                let e = Self::compile_tree(e, schema)?.expect_boolean("NOT")?;
                PhysicalExpr::new(Node::Not(Box::new(e)), DataType::Boolean)
            }
            Expr::Negative(e) => {
                let e = Self::compile_tree(e, schema)?;
                // `-NULL` is NULL.
                if e.data_type == DataType::Null {
                    return Ok(e);
                }
                if !(e.data_type.is_numeric() || matches!(e.data_type, DataType::Interval(_))) {
                    return Err(SlothError::types(format!("cannot negate {}", e.data_type)));
                }
                let t = e.data_type.clone();
                PhysicalExpr::new(Node::Negative(Box::new(e)), t)
            }
            Expr::IsNull(e) => PhysicalExpr::new(
                Node::IsNull(Box::new(Self::compile_tree(e, schema)?)),
                DataType::Boolean,
            ),
            Expr::IsNotNull(e) => PhysicalExpr::new(
                Node::IsNotNull(Box::new(Self::compile_tree(e, schema)?)),
                DataType::Boolean,
            ),
            Expr::Cast(e, t) => Self::compile_tree(e, schema)?.cast_to(t)?,
            Expr::Case {
                when_then,
                otherwise,
            } => {
                let mut branches = Vec::with_capacity(when_then.len());
                for (w, t) in when_then {
                    let w = Self::compile_tree(w, schema)?.expect_boolean("CASE WHEN")?;
                    branches.push((w, Self::compile_tree(t, schema)?));
                }
                let otherwise = otherwise
                    .as_ref()
                    .map(|o| Self::compile_tree(o, schema))
                    .transpose()?;
                let values: Vec<&PhysicalExpr> = (branches.iter().map(|(_, t)| t))
                    .chain(otherwise.iter())
                    .collect();
                let out = common_value_type(&values).ok_or_else(|| {
                    SlothError::types(format!(
                        "CASE branches have incompatible types {}",
                        type_list(&values)
                    ))
                })?;
                let branches = branches
                    .into_iter()
                    .map(|(w, t)| Ok((w, t.cast_to(&out)?)))
                    .collect::<Result<Vec<_>>>()?;
                let otherwise = otherwise
                    .map(|o| o.cast_to(&out))
                    .transpose()?
                    .map(Box::new);
                PhysicalExpr::new(Node::Case(branches, otherwise), out)
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let e = Self::compile_tree(expr, schema)?;
                let items = list
                    .iter()
                    .map(|i| Self::compile_tree(i, schema))
                    .collect::<Result<Vec<_>>>()?;
                let values: Vec<&PhysicalExpr> = std::iter::once(&e).chain(&items).collect();
                let t = common_value_type(&values).ok_or_else(|| {
                    SlothError::types(format!(
                        "IN list items of types {} do not match {}",
                        type_list(&values[1..]),
                        e.data_type
                    ))
                })?;
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    match item.cast_to(&t)?.node {
                        Node::Literal(a) => values.push(a),
                        _ => {
                            return Err(SlothError::unsupported(
                                "IN lists of non-constant expressions",
                            ));
                        }
                    }
                }
                PhysicalExpr::new(
                    Node::InList(Box::new(e.cast_to(&t)?), values, *negated),
                    DataType::Boolean,
                )
            }
            Expr::Function(func, args) => compile_function(*func, args, schema)?,
            Expr::Agg { .. } => {
                return Err(SlothError::plan(format!(
                    "aggregate '{expr}' is only allowed in an aggregation (group_by().agg() or a SQL select with GROUP BY)"
                )));
            }
            Expr::Window { .. } => {
                return Err(SlothError::plan(format!(
                    "window function '{expr}' is only allowed in a select list"
                )));
            }
            Expr::Wildcard => {
                return Err(SlothError::plan(
                    "'*' is only allowed as a whole select item",
                ));
            }
        })
    }

    fn expect_boolean(self, context: &str) -> Result<PhysicalExpr> {
        match self.data_type {
            DataType::Boolean => Ok(self),
            // A quoted constant reads as a boolean ('true', 'f', ..).
            DataType::Null => self.cast_to(&DataType::Boolean),
            _ if self.is_string_constant() => self.cast_to(&DataType::Boolean),
            ref t => Err(SlothError::types(format!(
                "{context} needs a Boolean, got {t}"
            ))),
        }
    }

    /// If this is a constant, its one-element array.
    pub fn as_literal(&self) -> Option<&ArrayRef> {
        match &self.node {
            Node::Literal(a) => Some(a),
            _ => None,
        }
    }

    /// True for a constant of a string type.
    fn is_string_constant(&self) -> bool {
        self.as_literal().is_some() && crate::expr::function::is_stringish(&self.data_type)
    }

    /// True for a constant NULL, typed or not.
    fn is_null_constant(&self) -> bool {
        // A NullArray has no null buffer: its nulls are logical ones.
        self.as_literal()
            .is_some_and(|a| a.logical_null_count() == a.len())
    }
}

/// True if the constant `lit`, cast to `column` (a decimal with the scale
/// of the coerced type `common`), keeps its exact value.
fn fits_exactly(lit: &PhysicalExpr, column: &DataType, common: &DataType) -> bool {
    let (DataType::Decimal128(_, s1), DataType::Decimal128(_, s2)) = (column, common) else {
        return false;
    };
    if s1 != s2 || !arrow::compute::can_cast_types(&lit.data_type, column) {
        return false;
    }
    let Some(a) = lit.as_literal() else {
        return false;
    };
    let opts = arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    let (Ok(direct), Ok(via)) = (
        arrow::compute::cast_with_options(a, column, &opts),
        arrow::compute::cast(a, common),
    ) else {
        return false;
    };
    arrow::compute::cast(&direct, common).is_ok_and(|d| d.as_ref() == via.as_ref())
}

fn literal(v: &ScalarValue) -> Result<PhysicalExpr> {
    let a = v.to_array()?;
    let t = a.data_type().clone();
    Ok(PhysicalExpr::new(Node::Literal(a), t))
}

/// Result type of arrow's arithmetic kernel, found by running it on empty
/// arrays: this stays exactly in step with arrow's decimal precision rules.
/// `date + n` / `date - n`: the date `n` days later or earlier, as in
/// PostgreSQL and DuckDB. Computed on the day numbers in 64 bits (an
/// overflow is the kernels' error) and brought back to a date, which fails
/// past the dates Date32 holds rather than wrapping.
fn date_plus_days(date: PhysicalExpr, op: Operator, days: PhysicalExpr) -> Result<PhysicalExpr> {
    let date = date.cast_to(&DataType::Int64)?;
    let days = days.cast_to(&DataType::Int64)?;
    let shifted = PhysicalExpr::new(
        Node::Binary(Box::new(date), op, Box::new(days)),
        DataType::Int64,
    );
    shifted
        .cast_to(&DataType::Int32)?
        .cast_to(&DataType::Date32)
}

fn arithmetic_type(op: Operator, l: &DataType, r: &DataType) -> Result<DataType> {
    use arrow::compute::kernels::numeric;
    let (a, b) = (new_empty_array(l), new_empty_array(r));
    let out = match op {
        Operator::Plus => numeric::add(&a, &b),
        Operator::Minus => numeric::sub(&a, &b),
        Operator::Multiply => numeric::mul(&a, &b),
        Operator::Divide => numeric::div(&a, &b),
        Operator::Modulo => numeric::rem(&a, &b),
        _ => unreachable!("not arithmetic"),
    };
    out.map(|a| a.data_type().clone())
        .map_err(|e| SlothError::types(format!("cannot compute {l} {op:?} {r}: {e}")))
}

/// Compiles a call: the function checks its arguments' types and says
/// what they are cast to and what it returns.
fn compile_function(func: ScalarFunc, args: &[Expr], schema: &Schema) -> Result<PhysicalExpr> {
    let args = args
        .iter()
        .map(|a| PhysicalExpr::compile_tree(a, schema))
        .collect::<Result<Vec<_>>>()?;
    let types: Vec<ArgType> = args
        .iter()
        .map(|a| ArgType {
            data_type: &a.data_type,
            constant: a.as_literal(),
        })
        .collect();
    if func.function().strict() && args.iter().any(PhysicalExpr::is_null_constant) {
        return null_call(func, &types);
    }
    let signature = func.function().signature(&types)?;
    let args = args
        .into_iter()
        .zip(signature.casts)
        .map(|(a, cast)| match cast {
            Some(t) => a.cast_to(&t),
            None => Ok(a),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(PhysicalExpr::new(
        Node::Function(func, args),
        signature.output,
    ))
}

/// A call of a strict function with a null constant argument: a null of
/// the type the call returns. The type is what the function says for the
/// arguments as they are or, where it refuses a null (an untyped NULL in
/// `abs(NULL)`, a null where it reads a constant in `round(x, NULL)`), for
/// a plain value in the null's place: of the null's type, or of the first
/// of a few types the function takes for an untyped one.
fn null_call(func: ScalarFunc, types: &[ArgType]) -> Result<PhysicalExpr> {
    let f = func.function();
    let first_error = match f.signature(types) {
        Ok(signature) => return Ok(null_literal(&signature.output)),
        Err(e) => e,
    };
    for candidate in [
        DataType::Int64,
        DataType::Float64,
        DataType::Utf8,
        DataType::Date32,
        DataType::Boolean,
    ] {
        let stand_ins: Vec<Option<(DataType, ArrayRef)>> = types
            .iter()
            .map(|t| {
                let null = t
                    .constant
                    .is_some_and(|c| c.logical_null_count() == c.len());
                let data_type = match t.data_type {
                    DataType::Null => candidate.clone(),
                    other => other.clone(),
                };
                let zero = arrow::array::Int64Array::from(vec![0]);
                let value = arrow::compute::cast(&zero, &data_type).ok()?;
                null.then_some((data_type, value))
            })
            .collect();
        let typed: Vec<ArgType> = (types.iter().zip(&stand_ins))
            .map(|(t, stand_in)| match stand_in {
                Some((data_type, value)) => ArgType {
                    data_type,
                    constant: Some(value),
                },
                None => *t,
            })
            .collect();
        if let Ok(signature) = f.signature(&typed) {
            return Ok(null_literal(&signature.output));
        }
    }
    Err(first_error)
}

/// The type values meet in, string constants taking the others' type
/// ([`common_type_of_values`]).
fn common_value_type(values: &[&PhysicalExpr]) -> Option<DataType> {
    let typed: Vec<(&DataType, bool)> = values
        .iter()
        .map(|v| (&v.data_type, v.is_string_constant()))
        .collect();
    common_type_of_values(&typed)
}

/// The values' types, for an error: `Int64, Utf8`.
fn type_list(values: &[&PhysicalExpr]) -> String {
    let types: Vec<String> = values.iter().map(|v| v.data_type.to_string()).collect();
    types.join(", ")
}

fn null_literal(t: &DataType) -> PhysicalExpr {
    PhysicalExpr::new(Node::Literal(new_null_array(t, 1)), t.clone())
}

use arrow::array::Array;

/// The output field of `expr` (aggregates included) over `schema`.
pub fn expr_field(expr: &Expr, schema: &Schema) -> Result<Field> {
    let data_type = match expr.unalias() {
        Expr::Agg { func, args, .. } => {
            let types = args
                .iter()
                .map(|a| PhysicalExpr::compile_tree(a, schema).map(|p| p.data_type))
                .collect::<Result<Vec<_>>>()?;
            agg_output_type(*func, &types)?
        }
        e => PhysicalExpr::compile_tree(e, schema)?.data_type,
    };
    Ok(Field::new(expr.output_name(), data_type, true))
}

impl fmt::Display for PhysicalExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.node {
            Node::Column(i) => write!(f, "#{i}"),
            Node::Literal(a) => write!(
                f,
                "{}",
                arrow::util::display::array_value_to_string(a, 0).unwrap_or_default()
            ),
            Node::Binary(l, op, r) => write!(f, "({l} {op:?} {r})"),
            Node::Not(e) => write!(f, "NOT {e}"),
            Node::Negative(e) => write!(f, "-{e}"),
            Node::IsNull(e) => write!(f, "{e} IS NULL"),
            Node::IsNotNull(e) => write!(f, "{e} IS NOT NULL"),
            Node::Cast(e) => write!(f, "CAST({e} AS {})", self.data_type),
            Node::Case(..) => write!(f, "CASE"),
            Node::InList(e, l, n) => write!(
                f,
                "{e} {}IN [{} values]",
                if *n { "NOT " } else { "" },
                l.len()
            ),
            Node::Function(func, args) => {
                let a: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                write!(f, "{}({})", func.name(), a.join(", "))
            }
            Node::Fused(x) => write!(f, "fused{}", x.original),
            Node::Runtime(filter, args) => {
                let a: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                write!(f, "{}({})", filter.describe(), a.join(", "))
            }
        }
    }
}
