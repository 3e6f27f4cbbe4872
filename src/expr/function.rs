//! What a scalar function is to the engine: the [`ScalarFunction`] trait
//! that each function of the registry (`src/functions/`) implements, and
//! the [`ScalarFunc`] handle an [`Expr::Function`](super::Expr::Function)
//! holds.
//!
//! A function knows its SQL names, checks its arguments' types and says
//! what they are cast to and what it returns ([`ScalarFunction::signature`]),
//! runs over Arrow arrays ([`ScalarFunction::invoke`]) and, where it has a
//! row-at-a-time form, over single values ([`ScalarFunction::invoke_row`]).
//! The SQL front end, the expression compiler and both executors ask the
//! function; none of them lists the functions.

use std::fmt;
use std::hash::{Hash, Hasher};

use arrow::array::{Array, ArrayRef, AsArray, Datum, Scalar, UInt32Array, new_null_array};
use arrow::datatypes::{DataType, Int64Type};

use super::value::Value;
use crate::error::{Result, SlothError};

/// The value of an expression over a batch: a full column or one constant.
#[derive(Debug, Clone)]
pub enum ColumnarValue {
    /// One value per row.
    Array(ArrayRef),
    /// The same value for every row, as a one-element array.
    Scalar(ArrayRef),
}

impl ColumnarValue {
    /// As an arrow `Datum`, for kernels that take arrays or scalars.
    pub fn datum(&self) -> Box<dyn Datum + '_> {
        match self {
            ColumnarValue::Array(a) => Box::new(a),
            ColumnarValue::Scalar(s) => Box::new(Scalar::new(s.clone())),
        }
    }

    /// True for a constant.
    pub fn is_scalar(&self) -> bool {
        matches!(self, ColumnarValue::Scalar(_))
    }

    /// The array underneath: the column, or the constant's one element.
    pub fn array(&self) -> &ArrayRef {
        match self {
            ColumnarValue::Array(a) | ColumnarValue::Scalar(a) => a,
        }
    }

    /// Expands to an array of `len` rows.
    pub fn into_array(self, len: usize) -> Result<ArrayRef> {
        match self {
            ColumnarValue::Array(a) => Ok(a),
            ColumnarValue::Scalar(s) => repeat_scalar(&s, len),
        }
    }

    /// A constant when `scalar`, else a column.
    pub fn wrap(array: ArrayRef, scalar: bool) -> ColumnarValue {
        if scalar {
            ColumnarValue::Scalar(array)
        } else {
            ColumnarValue::Array(array)
        }
    }
}

/// A column holding `len` copies of element 0 of `scalar`.
pub fn repeat_scalar(scalar: &ArrayRef, len: usize) -> Result<ArrayRef> {
    if scalar.is_null(0) {
        return Ok(new_null_array(scalar.data_type(), len));
    }
    let indices = UInt32Array::from_value(0, len);
    Ok(arrow::compute::take(scalar.as_ref(), &indices, None)?)
}

/// An argument as the compiler sees it: its type and, for a constant, its
/// one-element array.
#[derive(Debug, Clone, Copy)]
pub struct ArgType<'a> {
    /// The argument's type before any cast.
    pub data_type: &'a DataType,
    /// The constant's value, when the argument is one.
    pub constant: Option<&'a ArrayRef>,
}

/// What a call compiles to: the type each argument is cast to (`None`:
/// left as it is) and the type the function returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// One entry per argument.
    pub casts: Vec<Option<DataType>>,
    /// The result's type.
    pub output: DataType,
}

impl Signature {
    /// Arguments kept as they are.
    pub fn returning(args: usize, output: DataType) -> Self {
        Signature {
            casts: vec![None; args],
            output,
        }
    }

    /// Every argument cast to `to`.
    pub fn all_cast(args: usize, to: DataType, output: DataType) -> Self {
        Signature {
            casts: vec![Some(to); args],
            output,
        }
    }
}

/// A scalar function: one value out per row in.
pub trait ScalarFunction: Send + Sync + 'static {
    /// The function's names: the first is the one plans print (unique in
    /// the registry), and all are names SQL calls it by, unless
    /// [`ScalarFunction::planner_only`].
    fn names(&self) -> &'static [&'static str];

    /// The name plans print.
    fn name(&self) -> &'static str {
        self.names()[0]
    }

    /// True for a function only the planner makes (`LIKE`'s, `||`'s), which
    /// SQL cannot call by name.
    fn planner_only(&self) -> bool {
        false
    }

    /// True when a null argument makes the result null, whatever the
    /// others are (SQL's usual rule: `abs(NULL)`, `substr(s, NULL)`); the
    /// compiler then plans a call with a null constant as a null of the
    /// output type. `coalesce` and the like say false.
    fn strict(&self) -> bool {
        true
    }

    /// Checks the arguments and says what they are cast to and what the
    /// call returns; a one-line error names the function otherwise.
    fn signature(&self, args: &[ArgType]) -> Result<Signature>;

    /// Runs over a batch of `rows` rows. Arguments have the types
    /// [`ScalarFunction::signature`] asked for; `output` is its result
    /// type. All-constant arguments give a constant.
    fn invoke(
        &self,
        args: &[ColumnarValue],
        output: &DataType,
        rows: usize,
    ) -> Result<ColumnarValue>;

    /// Runs over one row's values, where the function has a row-at-a-time
    /// form; `None` makes the row-wise executor run
    /// [`ScalarFunction::invoke`] on a one-row batch instead.
    fn invoke_row(&self, args: &[Value]) -> Option<Result<Value>> {
        let _ = args;
        None
    }
}

/// A handle on a registered [`ScalarFunction`]: what an expression holds.
/// Two handles are equal when they name the same function.
#[derive(Clone, Copy)]
pub struct ScalarFunc(&'static dyn ScalarFunction);

impl ScalarFunc {
    /// A handle on `function`.
    pub const fn new(function: &'static dyn ScalarFunction) -> Self {
        ScalarFunc(function)
    }

    /// The function's name as plans print it.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// The function itself.
    pub fn function(&self) -> &'static dyn ScalarFunction {
        self.0
    }
}

impl fmt::Debug for ScalarFunc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for ScalarFunc {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for ScalarFunc {}

impl Hash for ScalarFunc {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state)
    }
}

/// Checks that a call of `name` has between `min` and `max` arguments.
pub fn check_arity(name: &str, args: usize, min: usize, max: usize) -> Result<()> {
    if (min..=max).contains(&args) {
        Ok(())
    } else {
        Err(SlothError::plan(format!(
            "{name}() takes {min} to {max} arguments, got {args}"
        )))
    }
}

/// True for the string types and the null type (an untyped NULL).
pub fn is_stringish(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
    )
}

/// Checks that an argument of `name` is a string.
pub fn need_string(name: &str, t: &DataType) -> Result<()> {
    if is_stringish(t) {
        Ok(())
    } else {
        Err(SlothError::types(format!(
            "{name}() needs a string, got {t}"
        )))
    }
}

/// Checks that an argument of `name` is a number.
pub fn need_number(name: &str, t: &DataType) -> Result<()> {
    if t.is_numeric() || *t == DataType::Null {
        Ok(())
    } else {
        Err(SlothError::types(format!(
            "{name}() needs a number, got {t}"
        )))
    }
}

/// Reads an integer constant (a one-element array).
pub fn constant_i64(a: &ArrayRef) -> Result<i64> {
    let a = arrow::compute::cast(a, &DataType::Int64)?;
    let a = a.as_primitive::<Int64Type>();
    if a.is_null(0) {
        return Err(SlothError::plan("expected a non-null constant"));
    }
    Ok(a.value(0))
}

/// Reads a constant as text: `None` if it has no text form, `Some(None)`
/// if it is a null.
pub fn constant_string(a: &ArrayRef) -> Option<Option<String>> {
    let a = arrow::compute::cast(a, &DataType::Utf8).ok()?;
    let a = a.as_string::<i32>();
    Some(a.is_valid(0).then(|| a.value(0).to_string()))
}

/// The text of a one-element string array (any string layout), unless
/// it is null or no string.
pub fn constant_str(a: &ArrayRef) -> Option<&str> {
    if a.is_null(0) {
        return None;
    }
    match a.data_type() {
        DataType::Utf8 => Some(a.as_string::<i32>().value(0)),
        DataType::LargeUtf8 => Some(a.as_string::<i64>().value(0)),
        DataType::Utf8View => Some(a.as_string_view().value(0)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;
    use std::sync::Arc;

    #[test]
    fn constants_read_back_and_nulls_are_told_apart() {
        let seven: ArrayRef = Arc::new(Int64Array::from(vec![7]));
        let null: ArrayRef = Arc::new(Int64Array::from(vec![None::<i64>]));
        assert_eq!(constant_i64(&seven).unwrap(), 7);
        assert!(constant_i64(&null).is_err());
        assert_eq!(constant_string(&seven), Some(Some("7".into())));
        assert_eq!(constant_string(&null), Some(None));
    }

    #[test]
    fn a_scalar_repeats_to_the_batch_and_arity_errors_name_the_function() {
        let one: ArrayRef = Arc::new(Int64Array::from(vec![1]));
        let v = ColumnarValue::Scalar(one).into_array(3).unwrap();
        assert_eq!(v.len(), 3);
        let e = check_arity("lpad", 1, 2, 3).unwrap_err().to_string();
        assert!(e.contains("lpad() takes 2 to 3 arguments, got 1"), "{e}");
    }
}
