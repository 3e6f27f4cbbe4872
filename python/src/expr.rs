//! `sloth.Expr`: expressions with Polars' Python names.
//!
//! Arguments are converted in two ways, as Polars does: where a column is
//! expected (`select("a")`, `group_by("a")`, `sort("a")`) a string names a
//! column; where a value is expected (`col("a") == "x"`, `lit("x")`) a
//! string is a string.

use arrow::datatypes::DataType;
use arrow::pyarrow::FromPyArrow;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDate, PyFloat, PyInt, PyList, PyString, PyTuple};
use sloth::expr::{Expr, ScalarValue};

use crate::errors::IntoPyResult;

/// A column expression: built with `sloth.col`, `sloth.lit`, operators and
/// methods, evaluated when its frame is collected.
#[pyclass(name = "Expr", module = "sloth", frozen, skip_from_py_object)]
#[derive(Clone)]
pub struct PyExpr {
    pub expr: Expr,
}

impl From<Expr> for PyExpr {
    fn from(expr: Expr) -> Self {
        PyExpr { expr }
    }
}

/// A Python value as a constant: `None`, bool, int, float, str or
/// `datetime.date`.
pub fn scalar(value: &Bound<'_, PyAny>) -> PyResult<ScalarValue> {
    if value.is_none() {
        return Ok(ScalarValue::Null);
    }
    // bool before int: True is an int in Python.
    if value.is_instance_of::<PyBool>() {
        return Ok(ScalarValue::Boolean(Some(value.extract()?)));
    }
    if value.is_instance_of::<PyInt>() {
        return match value.extract::<i64>() {
            Ok(v) => Ok(ScalarValue::Int64(Some(v))),
            Err(_) => Err(PyValueError::new_err(format!(
                "integer {value} does not fit in 64 bits"
            ))),
        };
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(ScalarValue::Float64(Some(value.extract()?)));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(ScalarValue::Utf8(Some(value.extract()?)));
    }
    // datetime.datetime is a date too; it has a time of day sloth's
    // date constant would drop.
    if value.is_instance_of::<PyDate>() && !value.hasattr("hour")? {
        // Days since 1970-01-01, whose proleptic Gregorian ordinal is 719163.
        let days = value.call_method0("toordinal")?.extract::<i64>()? - 719_163;
        return Ok(ScalarValue::Date32(Some(days as i32)));
    }
    Err(PyTypeError::new_err(format!(
        "cannot use a {} as a value; expected None, bool, int, float, str, datetime.date or sloth.Expr",
        value.get_type().name()?
    )))
}

/// `value` as an expression where a value is expected: an `Expr` as it
/// is, anything else a constant.
pub fn value_expr(value: &Bound<'_, PyAny>) -> PyResult<Expr> {
    match value.cast::<PyExpr>() {
        Ok(e) => Ok(e.get().expr.clone()),
        Err(_) => Ok(Expr::Literal(scalar(value)?)),
    }
}

/// `value` as an expression where a column is expected: a string names a
/// column, an `Expr` is itself.
fn column_expr(value: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if let Ok(name) = value.cast::<PyString>() {
        return Ok(sloth::expr::col(name.to_str()?));
    }
    match value.cast::<PyExpr>() {
        Ok(e) => Ok(e.get().expr.clone()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "expected a column name or a sloth.Expr, got a {}",
            value.get_type().name()?
        ))),
    }
}

/// Column expressions from `*args`, where any argument may also be a list
/// or tuple of them (`select("a", "b")` or `select(["a", "b"])`).
pub fn column_exprs(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Expr>> {
    let mut out = Vec::new();
    for arg in args.iter() {
        if arg.is_instance_of::<PyList>() || arg.is_instance_of::<PyTuple>() {
            for item in arg.try_iter()? {
                out.push(column_expr(&item?)?);
            }
        } else {
            out.push(column_expr(&arg)?);
        }
    }
    Ok(out)
}

/// The arrow type `dtype` names: a SQL type name (`"bigint"`,
/// `"decimal(12,2)"`) or a `pyarrow.DataType`.
fn data_type(dtype: &Bound<'_, PyAny>) -> PyResult<DataType> {
    if let Ok(name) = dtype.cast::<PyString>() {
        return sloth::sql::data_type(name.to_str()?).py();
    }
    DataType::from_pyarrow_bound(dtype).map_err(|_| {
        PyTypeError::new_err("dtype must be a SQL type name (\"bigint\") or a pyarrow.DataType")
    })
}

fn binary(left: &PyExpr, op: fn(Expr, Expr) -> Expr, right: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(op(left.expr.clone(), value_expr(right)?).into())
}

fn reflected(
    left: &PyExpr,
    op: fn(Expr, Expr) -> Expr,
    right: &Bound<'_, PyAny>,
) -> PyResult<PyExpr> {
    Ok(op(value_expr(right)?, left.expr.clone()).into())
}

/// Methods that wrap one builder of `Expr` taking no argument.
macro_rules! unary_methods {
    ($($(#[$doc:meta])* $name:ident => $builder:expr;)*) => {
        #[pymethods]
        impl PyExpr {
            $(
                $(#[$doc])*
                fn $name(&self) -> PyExpr {
                    let build: fn(Expr) -> Expr = $builder;
                    build(self.expr.clone()).into()
                }
            )*
        }
    };
}

unary_methods! {
    /// The sum (an aggregate).
    sum => Expr::sum;
    /// The mean (an aggregate).
    mean => Expr::mean;
    /// The smallest value (an aggregate).
    min => Expr::min;
    /// The largest value (an aggregate).
    max => Expr::max;
    /// The number of non-null values (an aggregate).
    count => Expr::count;
    /// The number of distinct values (an aggregate).
    n_unique => Expr::n_unique;
    /// The first value (an aggregate).
    first => Expr::first;
    /// The last value (an aggregate).
    last => Expr::last;
    /// The sample standard deviation (an aggregate).
    std => Expr::std;
    /// The sample variance (an aggregate).
    var => Expr::var;
    /// The median (an aggregate).
    median => Expr::median;
    /// True where the value is null.
    is_null => Expr::is_null;
    /// True where the value is not null.
    is_not_null => Expr::is_not_null;
    /// Boolean negation (also `~expr`).
    not_ => Expr::not;
}

#[pymethods]
impl PyExpr {
    /// This expression named `name` in the output.
    fn alias(&self, name: &str) -> PyExpr {
        self.expr.clone().alias(name).into()
    }

    /// This expression converted to `dtype`: a SQL type name (`"bigint"`,
    /// `"double"`, `"decimal(12,2)"`, `"date"`) or a `pyarrow.DataType`.
    fn cast(&self, dtype: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        Ok(self.expr.clone().cast(data_type(dtype)?).into())
    }

    /// True where the value is one of `values`.
    fn is_in(&self, values: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let list = values
            .try_iter()?
            .map(|v| value_expr(&v?))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(self.expr.clone().is_in(list).into())
    }

    /// True where `lower <= value <= upper`.
    fn is_between(&self, lower: &Bound<'_, PyAny>, upper: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        Ok(self
            .expr
            .clone()
            .between(value_expr(lower)?, value_expr(upper)?)
            .into())
    }

    /// The `q` quantile (an aggregate, linear interpolation).
    fn quantile(&self, q: f64) -> PyExpr {
        self.expr.clone().quantile(q).into()
    }

    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, |l, r| l + r, other)
    }
    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        reflected(self, |l, r| l + r, other)
    }
    fn __sub__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, |l, r| l - r, other)
    }
    fn __rsub__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        reflected(self, |l, r| l - r, other)
    }
    fn __mul__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, |l, r| l * r, other)
    }
    fn __rmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        reflected(self, |l, r| l * r, other)
    }
    fn __truediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, |l, r| l / r, other)
    }
    fn __rtruediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        reflected(self, |l, r| l / r, other)
    }
    fn __mod__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, |l, r| l % r, other)
    }
    fn __rmod__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        reflected(self, |l, r| l % r, other)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, Expr::eq, other)
    }
    fn __ne__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, Expr::neq, other)
    }
    fn __lt__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, Expr::lt, other)
    }
    fn __le__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, Expr::lt_eq, other)
    }
    fn __gt__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, Expr::gt, other)
    }
    fn __ge__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, Expr::gt_eq, other)
    }
    fn __and__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, Expr::and, other)
    }
    fn __rand__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        reflected(self, Expr::and, other)
    }
    fn __or__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(self, Expr::or, other)
    }
    fn __ror__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        reflected(self, Expr::or, other)
    }
    fn __invert__(&self) -> PyExpr {
        self.expr.clone().not().into()
    }
    fn __neg__(&self) -> PyExpr {
        (-self.expr.clone()).into()
    }

    /// `and`/`or`/`not`/`if` would test the expression object itself, not
    /// its values: refuse, as Polars does.
    fn __bool__(&self) -> PyResult<bool> {
        Err(PyTypeError::new_err(
            "the truth value of an Expr is ambiguous; use & for and, | for or, ~ for not",
        ))
    }

    fn __repr__(&self) -> String {
        format!("<sloth.Expr {}>", self.expr)
    }
}

/// The column called `name`.
#[pyfunction]
pub fn col(name: &str) -> PyExpr {
    sloth::expr::col(name).into()
}

/// A constant: `None`, bool, int, float, str or `datetime.date`.
#[pyfunction]
pub fn lit(value: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    Ok(Expr::Literal(scalar(value)?).into())
}

/// The number of rows (`count(*)`), an aggregate.
#[pyfunction]
pub fn count() -> PyExpr {
    sloth::expr::count_star().into()
}

/// A call of the scalar function `name` (any function SQL knows:
/// `call("upper", col("s"))`, `call("round", col("x"), 2)`).
#[pyfunction]
#[pyo3(signature = (name, *args))]
pub fn call(name: &str, args: &Bound<'_, PyTuple>) -> PyResult<PyExpr> {
    let function = sloth::functions::lookup(&name.to_ascii_lowercase())
        .ok_or_else(|| PyValueError::new_err(format!("unknown function '{name}'")))?;
    let args = args
        .iter()
        .map(|a| value_expr(&a))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Expr::Function(function, args).into())
}

/// `when(condition).then(value)[.when(..).then(..)].otherwise(value)`.
#[pyfunction]
pub fn when(condition: &Bound<'_, PyAny>) -> PyResult<PyWhen> {
    Ok(PyWhen {
        done: vec![],
        condition: value_expr(condition)?,
    })
}

/// A `when(condition)` waiting for its `then`.
#[pyclass(name = "When", module = "sloth", frozen)]
pub struct PyWhen {
    done: Vec<(Expr, Expr)>,
    condition: Expr,
}

#[pymethods]
impl PyWhen {
    /// The value where the condition holds.
    fn then(&self, value: &Bound<'_, PyAny>) -> PyResult<PyThen> {
        let mut when_then = self.done.clone();
        when_then.push((self.condition.clone(), value_expr(value)?));
        Ok(PyThen { when_then })
    }
}

/// A conditional with its branches so far; `otherwise` ends it.
#[pyclass(name = "Then", module = "sloth", frozen)]
pub struct PyThen {
    when_then: Vec<(Expr, Expr)>,
}

impl PyThen {
    fn finish(&self, otherwise: Option<Expr>) -> Expr {
        Expr::Case {
            when_then: self.when_then.clone(),
            otherwise: otherwise.map(Box::new),
        }
    }
}

#[pymethods]
impl PyThen {
    /// Another condition, tried if the earlier ones fail.
    fn when(&self, condition: &Bound<'_, PyAny>) -> PyResult<PyWhen> {
        Ok(PyWhen {
            done: self.when_then.clone(),
            condition: value_expr(condition)?,
        })
    }

    /// The value where no condition holds; ends the conditional.
    fn otherwise(&self, value: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        Ok(self.finish(Some(value_expr(value)?)).into())
    }

    /// The conditional as an expression, null where no condition holds.
    fn alias(&self, name: &str) -> PyExpr {
        self.finish(None).alias(name).into()
    }
}
