//! Logical expressions: the [`Expr`] tree, its builders and its display.
//!
//! Expressions name columns; they are resolved against a schema (and their
//! operand types coerced) only when the physical planner turns them into
//! `PhysicalExpr`s (`physical_expr`).

mod frame;
pub mod function;
mod literal;
mod null_rejection;
mod typing;
pub mod value;

use std::fmt;
use std::ops::Range;

use arrow::datatypes::DataType;

use crate::error::{Result, SlothError};

pub use frame::{FrameOffset, FrameUnits, RangeMeasure, Shift, WindowFrame};
pub use function::{ScalarFunc, ScalarFunction};
pub use literal::{ScalarValue, date, number, parse_date32};
pub use typing::{
    agg_output_type, coerce_binary, common_type, common_type_of_values, window_output_type,
};

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Modulo,
    /// `=`
    Eq,
    /// `<>`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// three-valued `AND`
    And,
    /// three-valued `OR`
    Or,
}

impl Operator {
    /// True for `=`, `<>`, `<`, `<=`, `>`, `>=`.
    pub fn is_comparison(self) -> bool {
        use Operator::*;
        matches!(self, Eq | NotEq | Lt | LtEq | Gt | GtEq)
    }
    /// True for `+ - * / %`.
    pub fn is_arithmetic(self) -> bool {
        use Operator::*;
        matches!(self, Plus | Minus | Multiply | Divide | Modulo)
    }
    /// The operator with its operands swapped (`a < b` ⇔ `b > a`).
    pub fn swap(self) -> Option<Operator> {
        use Operator::*;
        Some(match self {
            Eq => Eq,
            NotEq => NotEq,
            Lt => Gt,
            LtEq => GtEq,
            Gt => Lt,
            GtEq => LtEq,
            And => And,
            Or => Or,
            Plus => Plus,
            Multiply => Multiply,
            _ => return None,
        })
    }
    fn symbol(self) -> &'static str {
        use Operator::*;
        match self {
            Plus => "+",
            Minus => "-",
            Multiply => "*",
            Divide => "/",
            Modulo => "%",
            Eq => "=",
            NotEq => "!=",
            Lt => "<",
            LtEq => "<=",
            Gt => ">",
            GtEq => ">=",
            And => "AND",
            Or => "OR",
        }
    }
}

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AggFunc {
    /// Sum of non-null values (null for a group of only nulls).
    Sum,
    /// Arithmetic mean as Float64.
    Mean,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Count of non-null values.
    Count,
    /// Count of rows (`count(*)`).
    CountStar,
    /// Count of distinct non-null values.
    NUnique,
    /// First value in input order.
    First,
    /// Last value in input order.
    Last,
    /// Sample standard deviation (ddof = 1).
    Std,
    /// Sample variance (ddof = 1).
    Var,
    /// Median (linear interpolation between the two middle values).
    Median,
    /// Quantile in `[0, 1]` with linear interpolation.
    Quantile(f64),
    /// A statistic of two columns `(y, x)` over the rows where both are
    /// non-null: correlation, covariance, or a least-squares line.
    Bivariate(Bivariate),
    /// `bit_and`, `bit_or`, `bit_xor` of integers (null for a group of
    /// nulls only).
    Bitwise(BitOp),
    /// `(x, key)`: x of the row whose key comes first in `order` (SQL's
    /// `first(x ORDER BY key)`; `min_by` / `max_by` skip rows with nulls).
    FirstBy(KeyOrder),
    /// `(x, separator [, key])`: the group's non-null values as text,
    /// joined by the separator, in the key's order (input order without).
    StringAgg(Option<KeyOrder>),
    /// `(x [, key])`: the group's values, nulls included, as a list in the
    /// key's order (input order without).
    ArrayAgg(Option<KeyOrder>),
}

/// The statistics of [`AggFunc::Bivariate`], each PostgreSQL's function of
/// the same SQL name; the arguments are `(y, x)` (dependent first). Each is
/// null without rows, and where it would divide by a zero variance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bivariate {
    /// `corr(y, x)`: Pearson's correlation coefficient.
    Corr,
    /// `covar_pop(y, x)`: population covariance.
    CovarPop,
    /// `covar_samp(y, x)`: sample covariance (null for one row).
    CovarSamp,
    /// `regr_slope(y, x)`: slope of the least-squares line.
    RegrSlope,
    /// `regr_intercept(y, x)`: its y-intercept.
    RegrIntercept,
    /// `regr_r2(y, x)`: the square of the correlation (1 where y is constant).
    RegrR2,
    /// `regr_avgx(y, x)`: mean of x.
    RegrAvgX,
    /// `regr_avgy(y, x)`: mean of y.
    RegrAvgY,
    /// `regr_sxx(y, x)`: sum of squares of x's deviations.
    RegrSxx,
    /// `regr_syy(y, x)`: sum of squares of y's deviations.
    RegrSyy,
    /// `regr_sxy(y, x)`: sum of products of the deviations.
    RegrSxy,
}

impl Bivariate {
    /// Every statistic, with its SQL name.
    pub const ALL: [(Bivariate, &'static str); 11] = [
        (Bivariate::Corr, "corr"),
        (Bivariate::CovarPop, "covar_pop"),
        (Bivariate::CovarSamp, "covar_samp"),
        (Bivariate::RegrSlope, "regr_slope"),
        (Bivariate::RegrIntercept, "regr_intercept"),
        (Bivariate::RegrR2, "regr_r2"),
        (Bivariate::RegrAvgX, "regr_avgx"),
        (Bivariate::RegrAvgY, "regr_avgy"),
        (Bivariate::RegrSxx, "regr_sxx"),
        (Bivariate::RegrSyy, "regr_syy"),
        (Bivariate::RegrSxy, "regr_sxy"),
    ];

    /// The SQL name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(b, _)| *b == self)
            .map_or("corr", |(_, n)| n)
    }

    /// The statistic SQL calls `name`.
    pub fn from_name(name: &str) -> Option<Bivariate> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(b, _)| *b)
    }
}

/// The operator of [`AggFunc::Bitwise`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// `bit_and`: the bits set in every value.
    And,
    /// `bit_or`: the bits set in any value.
    Or,
    /// `bit_xor`: the bits set in an odd number of values.
    Xor,
}

/// How [`AggFunc::FirstBy`] orders its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOrder {
    /// Largest first.
    pub descending: bool,
    /// Null keys before the others.
    pub nulls_first: bool,
    /// Rows with a null key or a null value take no part (`min_by` /
    /// `max_by`, as DuckDB's).
    pub skip_nulls: bool,
}

impl AggFunc {
    /// Whether `func(DISTINCT x)` runs: the one-argument aggregates of a
    /// set of values (first/last depend on order, corr takes two).
    pub fn takes_distinct(&self) -> bool {
        matches!(
            self,
            AggFunc::Count
                | AggFunc::Sum
                | AggFunc::Mean
                | AggFunc::Min
                | AggFunc::Max
                | AggFunc::Std
                | AggFunc::Var
                | AggFunc::Median
                | AggFunc::Quantile(_)
                | AggFunc::Bitwise(_)
        )
    }

    /// The SQL-ish name, used in display and default column names.
    pub fn name(&self) -> &'static str {
        match self {
            AggFunc::Sum => "sum",
            AggFunc::Mean => "avg",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Count => "count",
            AggFunc::CountStar => "count",
            AggFunc::NUnique => "n_unique",
            AggFunc::First => "first",
            AggFunc::Last => "last",
            AggFunc::Std => "stddev",
            AggFunc::Var => "variance",
            AggFunc::Median => "median",
            AggFunc::Quantile(_) => "quantile",
            AggFunc::Bivariate(b) => b.name(),
            AggFunc::Bitwise(BitOp::And) => "bit_and",
            AggFunc::Bitwise(BitOp::Or) => "bit_or",
            AggFunc::Bitwise(BitOp::Xor) => "bit_xor",
            AggFunc::FirstBy(KeyOrder {
                skip_nulls: true,
                descending,
                ..
            }) => {
                if *descending {
                    "max_by"
                } else {
                    "min_by"
                }
            }
            AggFunc::FirstBy(_) => "first_by",
            AggFunc::StringAgg(_) => "string_agg",
            AggFunc::ArrayAgg(_) => "array_agg",
        }
    }
}

macro_rules! math_funcs {
    ($($(#[$doc:meta])* $variant:ident => $name:literal, $f:expr;)*) => {
        /// Functions of one float that give a float: IEEE semantics outside
        /// their domain (`sqrt(-1)` is NaN, `ln(0)` is -inf), as DuckDB.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum MathFunc {
            $($(#[$doc])* $variant,)*
        }

        impl MathFunc {
            /// Every function of the table, in its order.
            pub const ALL: &'static [MathFunc] = &[$(MathFunc::$variant,)*];

            /// The SQL name.
            pub fn name(self) -> &'static str {
                match self {
                    $(MathFunc::$variant => $name,)*
                }
            }

            /// This function as a reference that lives as long as the
            /// program (what the function registry holds).
            pub fn as_static(self) -> &'static MathFunc {
                match self {
                    $(MathFunc::$variant => &MathFunc::$variant,)*
                }
            }

            /// The SQL name, as a one-element list.
            pub fn sql_names(self) -> &'static [&'static str] {
                match self {
                    $(MathFunc::$variant => &[$name],)*
                }
            }

            /// Calls `each` with this function as a concrete (statically
            /// dispatched) closure: a vectorized loop is compiled per function.
            pub fn with<R>(self, each: impl MathApply<R>) -> R {
                match self {
                    $(MathFunc::$variant => each.apply($f),)*
                }
            }
        }
    };
}

/// A computation over a [`MathFunc`] passed as a concrete closure.
pub trait MathApply<R> {
    /// Runs with `f`, the function.
    fn apply(self, f: impl Fn(f64) -> f64 + Copy) -> R;
}

math_funcs! {
    /// Square root.
    Sqrt => "sqrt", f64::sqrt;
    /// Cube root.
    Cbrt => "cbrt", f64::cbrt;
    /// e to the power.
    Exp => "exp", f64::exp;
    /// Natural logarithm.
    Ln => "ln", f64::ln;
    /// Base-10 logarithm (also `log(x)`).
    Log10 => "log10", f64::log10;
    /// Base-2 logarithm.
    Log2 => "log2", f64::log2;
    /// Sine (radians).
    Sin => "sin", f64::sin;
    /// Cosine.
    Cos => "cos", f64::cos;
    /// Tangent.
    Tan => "tan", f64::tan;
    /// Arc sine.
    Asin => "asin", f64::asin;
    /// Arc cosine.
    Acos => "acos", f64::acos;
    /// Arc tangent.
    Atan => "atan", f64::atan;
    /// Cotangent.
    Cot => "cot", |x: f64| 1.0 / x.tan();
    /// Hyperbolic sine.
    Sinh => "sinh", f64::sinh;
    /// Hyperbolic cosine.
    Cosh => "cosh", f64::cosh;
    /// Hyperbolic tangent.
    Tanh => "tanh", f64::tanh;
    /// Inverse hyperbolic sine.
    Asinh => "asinh", f64::asinh;
    /// Inverse hyperbolic cosine.
    Acosh => "acosh", f64::acosh;
    /// Inverse hyperbolic tangent.
    Atanh => "atanh", f64::atanh;
    /// Radians to degrees.
    Degrees => "degrees", f64::to_degrees;
    /// Degrees to radians.
    Radians => "radians", f64::to_radians;
}

/// One key of a sort (of a plan or a window).
#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    /// The expression to order by.
    pub expr: Expr,
    /// Largest first.
    pub descending: bool,
    /// Nulls after non-null values.
    pub nulls_last: bool,
}

/// Window functions: ranking, or an aggregate over the whole partition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WindowFunc {
    /// 1, 2, 3, … within each partition.
    RowNumber,
    /// Rank with gaps after ties (1, 1, 3).
    Rank,
    /// Rank without gaps (1, 1, 2).
    DenseRank,
    /// `percent_rank()`: (rank - 1) / (partition rows - 1), 0 for a
    /// partition of one row.
    PercentRank,
    /// `cume_dist()`: the fraction of the partition's rows that come before
    /// the row or are its peers.
    CumeDist,
    /// `ntile(n)`: the partition cut into `n` buckets as equal as can be
    /// (the first ones a row larger), numbered from 1.
    Ntile(usize),
    /// `sum(x) OVER (PARTITION BY k)`: the aggregate of the row's whole
    /// partition, on every row of it.
    Aggregate(AggFunc),
    /// `lag(x, n)`: `x` of the row `n` before in window order (null
    /// before the partition's start).
    Lag(usize),
    /// `lead(x, n)`: `x` of the row `n` after in window order.
    Lead(usize),
    /// `lag`/`lead(x, n) IGNORE NULLS`: `x` of the n-th row before
    /// (negative) or after in window order whose `x` is not null.
    ShiftPresent(isize),
    /// `sum(x) OVER (.. ORDER BY .. ROWS BETWEEN ..)`: the aggregate of the
    /// rows of the frame around each row, in window order.
    FramedAggregate(AggFunc, WindowFrame),
    /// `first_value` / `last_value` / `nth_value(x, n)`: `x` of one row of
    /// each row's frame: the ROWS frame if given, else SQL's default (the
    /// partition's start to the current row's last peer with ORDER BY, the
    /// whole partition without). Null where the frame has no such row.
    Value(FramePick, Option<WindowFrame>),
}

/// Which row of its frame a value window function reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FramePick {
    /// The frame's first row (`first_value`).
    First,
    /// The frame's last row (`last_value`).
    Last,
    /// The frame's n-th row, from 1 (`nth_value(x, n)`).
    Nth(usize),
    /// The frame's first row whose value is not null (`first_value(x
    /// IGNORE NULLS)`).
    FirstPresent,
    /// The frame's last row whose value is not null (`last_value(x IGNORE
    /// NULLS)`, the forward fill of a series).
    LastPresent,
}

impl FramePick {
    /// The position picked from a frame of positions `lo..hi`, where
    /// `present(i)` says whether position i's value is not null; `None`
    /// for an empty frame, one with fewer than n rows, or (ignoring nulls)
    /// one of nulls only.
    pub fn pick(self, lo: usize, hi: usize, present: impl Fn(usize) -> bool) -> Option<usize> {
        if lo >= hi {
            return None;
        }
        match self {
            FramePick::First => Some(lo),
            FramePick::Last => Some(hi - 1),
            FramePick::Nth(n) => Some(lo + n.checked_sub(1)?).filter(|&i| i < hi),
            FramePick::FirstPresent => (lo..hi).find(|&i| present(i)),
            FramePick::LastPresent => (lo..hi).rev().find(|&i| present(i)),
        }
    }
}

/// Checks `frame` against its window's order: a RANGE frame with an
/// offset measures distance in one order key's values.
pub(crate) fn check_frame(frame: &WindowFrame, order_by: &[SortKey]) -> Result<()> {
    frame.validate()?;
    if frame.needs_key_values() && order_by.len() != 1 {
        return Err(SlothError::plan(format!(
            "'{frame}' needs exactly one ORDER BY key to measure from, not {}",
            order_by.len()
        )));
    }
    Ok(())
}

impl WindowFunc {
    /// The explicit frame the function reads, if any.
    pub fn frame(&self) -> Option<WindowFrame> {
        match *self {
            WindowFunc::FramedAggregate(_, frame) | WindowFunc::Value(_, Some(frame)) => {
                Some(frame)
            }
            _ => None,
        }
    }

    /// SQL name.
    pub fn name(&self) -> &'static str {
        match self {
            WindowFunc::RowNumber => "row_number",
            WindowFunc::Rank => "rank",
            WindowFunc::DenseRank => "dense_rank",
            WindowFunc::PercentRank => "percent_rank",
            WindowFunc::CumeDist => "cume_dist",
            WindowFunc::Ntile(_) => "ntile",
            WindowFunc::Aggregate(f) | WindowFunc::FramedAggregate(f, _) => f.name(),
            WindowFunc::Lag(_) => "lag",
            WindowFunc::Lead(_) => "lead",
            WindowFunc::ShiftPresent(n) if *n < 0 => "lag",
            WindowFunc::ShiftPresent(_) => "lead",
            WindowFunc::Value(FramePick::First | FramePick::FirstPresent, _) => "first_value",
            WindowFunc::Value(FramePick::Last | FramePick::LastPresent, _) => "last_value",
            WindowFunc::Value(FramePick::Nth(_), _) => "nth_value",
        }
    }

    /// True for `percent_rank`, `cume_dist` and `ntile`, whose values come
    /// from [`Self::distribution`].
    pub fn is_distribution(&self) -> bool {
        matches!(
            self,
            WindowFunc::PercentRank | WindowFunc::CumeDist | WindowFunc::Ntile(_)
        )
    }

    /// For `percent_rank`, `cume_dist` and `ntile`: the value of the row
    /// at position `k` (from 0) of a partition of `size` rows, whose peers
    /// (the rows tied with it in window order, itself included) are at
    /// positions `peers`; `None` for every other function. ntile's bucket
    /// number is an integer-valued f64 (exact: below 2^53).
    pub fn distribution(&self, k: usize, size: usize, peers: Range<usize>) -> Option<f64> {
        Some(match *self {
            WindowFunc::PercentRank if size > 1 => peers.start as f64 / (size - 1) as f64,
            WindowFunc::PercentRank => 0.0,
            WindowFunc::CumeDist => peers.end as f64 / size as f64,
            WindowFunc::Ntile(n) => {
                // `size / n` rows a bucket, and one more in the first
                // `size % n`.
                let (small, larger) = (size / n, size % n);
                let in_larger = larger * (small + 1);
                let bucket = if k < in_larger {
                    k / (small + 1)
                } else {
                    larger + (k - in_larger) / small
                };
                (bucket + 1) as f64
            }
            _ => return None,
        })
    }

    /// For `lag`/`lead`: how far back (negative) or ahead the row read
    /// is, and whether only rows with a non-null value count (`IGNORE
    /// NULLS`).
    pub fn shift(&self) -> Option<(isize, bool)> {
        match self {
            WindowFunc::Lag(n) => Some((-(*n as isize), false)),
            WindowFunc::Lead(n) => Some((*n as isize, false)),
            WindowFunc::ShiftPresent(n) => Some((*n, true)),
            _ => None,
        }
    }

    /// The position `shift` rows from `k` among positions `0..len`
    /// (counting only those `present` says hold a value when
    /// `skip_nulls`), if there is one.
    pub fn shifted_position(
        (shift, skip_nulls): (isize, bool),
        k: usize,
        len: usize,
        present: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if !skip_nulls || shift == 0 {
            return k.checked_add_signed(shift).filter(|&j| j < len);
        }
        let mut seen = 0;
        let step = |j: &usize| {
            seen += present(*j) as usize;
            seen == shift.unsigned_abs() && present(*j)
        };
        match shift < 0 {
            true => (0..k).rev().find(step),
            false => (k + 1..len).find(step),
        }
    }
}

/// A logical expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A column by name.
    Column(String),
    /// A constant.
    Literal(ScalarValue),
    /// `left op right`.
    Binary {
        /// Left operand.
        left: Box<Expr>,
        /// The operator.
        op: Operator,
        /// Right operand.
        right: Box<Expr>,
    },
    /// Boolean negation (three-valued).
    Not(Box<Expr>),
    /// Arithmetic negation.
    Negative(Box<Expr>),
    /// `expr IS NULL`.
    IsNull(Box<Expr>),
    /// `expr IS NOT NULL`.
    IsNotNull(Box<Expr>),
    /// `CAST(expr AS type)`.
    Cast(Box<Expr>, DataType),
    /// `expr AS name`.
    Alias(Box<Expr>, String),
    /// `CASE WHEN .. THEN .. ELSE .. END`.
    Case {
        /// The (condition, value) pairs, tried in order.
        when_then: Vec<(Expr, Expr)>,
        /// The value when no condition holds (null if absent).
        otherwise: Option<Box<Expr>>,
    },
    /// `expr [NOT] IN (list)`.
    InList {
        /// Tested expression.
        expr: Box<Expr>,
        /// Candidate values.
        list: Vec<Expr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// A scalar function call.
    Function(ScalarFunc, Vec<Expr>),
    /// An aggregate function call (only valid inside an aggregation).
    Agg {
        /// The function.
        func: AggFunc,
        /// Its arguments (empty for `count(*)`).
        args: Vec<Expr>,
        /// `DISTINCT` (only meaningful for count).
        distinct: bool,
    },
    /// `func() OVER (PARTITION BY .. ORDER BY ..)` (only valid in a select list).
    Window {
        /// The function.
        func: WindowFunc,
        /// Its arguments (an aggregate's; none for ranking).
        args: Vec<Expr>,
        /// Partition keys.
        partition_by: Vec<Expr>,
        /// Order within each partition.
        order_by: Vec<SortKey>,
    },
    /// `*` in a select list (expanded by the planner).
    Wildcard,
}

/// A column reference.
pub fn col(name: impl Into<String>) -> Expr {
    Expr::Column(name.into())
}

/// A literal.
pub fn lit(value: impl Into<ScalarValue>) -> Expr {
    Expr::Literal(value.into())
}

/// `count(*)`: the number of rows (of each group).
pub fn count_star() -> Expr {
    Expr::Agg {
        func: AggFunc::CountStar,
        args: vec![],
        distinct: false,
    }
}

/// `corr(a, b)`: Pearson correlation.
pub fn corr(a: Expr, b: Expr) -> Expr {
    Expr::Agg {
        func: AggFunc::Bivariate(Bivariate::Corr),
        args: vec![a, b],
        distinct: false,
    }
}

/// Starts a `when(cond).then(value)...otherwise(value)` chain.
pub fn when(condition: Expr) -> When {
    When {
        cases: vec![],
        condition,
    }
}

/// A `when` whose `then` is still to come.
pub struct When {
    cases: Vec<(Expr, Expr)>,
    condition: Expr,
}

impl When {
    /// The value when the condition holds.
    pub fn then(self, value: Expr) -> Then {
        let mut cases = self.cases;
        cases.push((self.condition, value));
        Then { cases }
    }
}

/// A `when(..).then(..)` chain, to be continued or closed.
pub struct Then {
    cases: Vec<(Expr, Expr)>,
}

impl Then {
    /// Another condition, tried if the earlier ones did not hold.
    pub fn when(self, condition: Expr) -> When {
        When {
            cases: self.cases,
            condition,
        }
    }
    /// The value when no condition holds; closes the chain.
    pub fn otherwise(self, value: Expr) -> Expr {
        Expr::Case {
            when_then: self.cases,
            otherwise: Some(Box::new(value)),
        }
    }
    /// Closes the chain with null as the fallback value.
    pub fn end(self) -> Expr {
        Expr::Case {
            when_then: self.cases,
            otherwise: None,
        }
    }
}

macro_rules! binary_builders {
    ($($name:ident => $op:ident),* $(,)?) => {
        $(
            #[doc = concat!("`self ", stringify!($op), " other`.")]
            pub fn $name(self, other: impl Into<Expr>) -> Expr {
                Expr::Binary { left: Box::new(self), op: Operator::$op, right: Box::new(other.into()) }
            }
        )*
    };
}

macro_rules! agg_builders {
    ($($name:ident => $func:ident),* $(,)?) => {
        $(
            #[doc = concat!("The `", stringify!($name), "` aggregate of this expression.")]
            pub fn $name(self) -> Expr {
                Expr::Agg { func: AggFunc::$func, args: vec![self], distinct: false }
            }
        )*
    };
}

impl Expr {
    binary_builders! {
        eq => Eq, neq => NotEq, lt => Lt, lt_eq => LtEq, gt => Gt, gt_eq => GtEq,
        and => And, or => Or,
    }
    agg_builders! {
        sum => Sum, mean => Mean, min => Min, max => Max, count => Count,
        n_unique => NUnique, first => First, last => Last, std => Std, var => Var,
        median => Median,
    }
    /// This expression's rank-like window: `func() OVER (PARTITION BY partition_by ORDER BY order_by)`.
    pub fn over(func: WindowFunc, partition_by: Vec<Expr>, order_by: Vec<SortKey>) -> Expr {
        Expr::Window {
            func,
            args: vec![],
            partition_by,
            order_by,
        }
    }

    /// This aggregate over each row's window: `col("x").sum().over_window(vec![col("k")], vec![])`
    /// is SQL's `sum(x) OVER (PARTITION BY k)`, the whole partition's sum on
    /// every row; with `order_by`, the running aggregate up to the row and
    /// its peers (sum, count, min, max and mean). An error for anything but
    /// an aggregate, and for first/last or DISTINCT, which have no window form.
    pub fn over_window(self, partition_by: Vec<Expr>, order_by: Vec<SortKey>) -> Result<Expr> {
        match self {
            Expr::Agg {
                func:
                    func @ (AggFunc::First
                    | AggFunc::Last
                    | AggFunc::FirstBy(_)
                    | AggFunc::StringAgg(_)
                    | AggFunc::ArrayAgg(_)),
                ..
            } => Err(SlothError::unsupported(format!(
                "window function '{}' (a partition's rows have no order for it)",
                func.name()
            ))),
            Expr::Agg { distinct: true, .. } => Err(SlothError::unsupported(format!(
                "DISTINCT in the window function '{self}'"
            ))),
            // With ORDER BY, SQL's default frame makes it a running aggregate.
            Expr::Agg { func, .. }
                if !order_by.is_empty()
                    && !matches!(
                        func,
                        AggFunc::Sum
                            | AggFunc::Count
                            | AggFunc::CountStar
                            | AggFunc::Min
                            | AggFunc::Max
                            | AggFunc::Mean
                    ) =>
            {
                Err(SlothError::unsupported(format!(
                    "running {}() (an aggregate OVER (.. ORDER BY ..) takes sum, count, min, max or avg)",
                    func.name()
                )))
            }
            Expr::Agg { func, args, .. } => Ok(Expr::Window {
                func: WindowFunc::Aggregate(func),
                args,
                partition_by,
                order_by,
            }),
            other => Err(SlothError::plan(format!(
                "over_window() takes an aggregate, not '{other}'"
            ))),
        }
    }

    /// `self OVER (PARTITION BY partition_by ORDER BY order_by frame)`:
    /// an aggregate (sum, count, min, max or avg) over the rows of a ROWS,
    /// GROUPS or RANGE frame around each row.
    pub fn over_frame(
        self,
        partition_by: Vec<Expr>,
        order_by: Vec<SortKey>,
        frame: WindowFrame,
    ) -> Result<Expr> {
        if order_by.is_empty() {
            return Err(SlothError::plan(format!(
                "a window frame needs ORDER BY in its window, in '{self}'"
            )));
        }
        check_frame(&frame, &order_by)?;
        match self.over_window(partition_by, order_by)? {
            Expr::Window {
                func: WindowFunc::Aggregate(func),
                args,
                partition_by,
                order_by,
            } => Ok(Expr::Window {
                func: WindowFunc::FramedAggregate(func, frame),
                args,
                partition_by,
                order_by,
            }),
            other => Err(SlothError::plan(format!(
                "over_frame() takes an aggregate, not '{other}'"
            ))),
        }
    }

    /// `lag(self, n) OVER (PARTITION BY partition_by ORDER BY order_by)`:
    /// the value `n` rows back in the partition (null before its start).
    pub fn lag(self, n: usize, partition_by: Vec<Expr>, order_by: Vec<SortKey>) -> Expr {
        Expr::Window {
            func: WindowFunc::Lag(n),
            args: vec![self],
            partition_by,
            order_by,
        }
    }

    /// `lead(self, n) OVER (..)`: the value `n` rows ahead (see [`Expr::lag`]).
    pub fn lead(self, n: usize, partition_by: Vec<Expr>, order_by: Vec<SortKey>) -> Expr {
        Expr::Window {
            func: WindowFunc::Lead(n),
            args: vec![self],
            partition_by,
            order_by,
        }
    }

    /// `first_value` / `last_value` / `nth_value(self, n)` (by `pick`)
    /// `OVER (PARTITION BY partition_by ORDER BY order_by frame)`.
    pub fn frame_value(
        self,
        pick: FramePick,
        partition_by: Vec<Expr>,
        order_by: Vec<SortKey>,
        frame: Option<WindowFrame>,
    ) -> Expr {
        Expr::Window {
            func: WindowFunc::Value(pick, frame),
            args: vec![self],
            partition_by,
            order_by,
        }
    }

    /// True if a window function occurs anywhere in the expression.
    pub fn contains_window(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::Window { .. }));
        found
    }

    /// Gives the expression an output name.
    pub fn alias(self, name: impl Into<String>) -> Expr {
        Expr::Alias(Box::new(self), name.into())
    }
    /// Converts to another type.
    pub fn cast(self, to: DataType) -> Expr {
        Expr::Cast(Box::new(self), to)
    }
    /// Three-valued negation.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Expr {
        Expr::Not(Box::new(self))
    }
    /// `self IS NULL`.
    pub fn is_null(self) -> Expr {
        Expr::IsNull(Box::new(self))
    }
    /// `self IS NOT NULL`.
    pub fn is_not_null(self) -> Expr {
        Expr::IsNotNull(Box::new(self))
    }
    /// `self IN (values)`.
    pub fn is_in(self, values: impl IntoIterator<Item = impl Into<Expr>>) -> Expr {
        Expr::InList {
            expr: Box::new(self),
            list: values.into_iter().map(Into::into).collect(),
            negated: false,
        }
    }
    /// `low <= self AND self <= high`.
    pub fn between(self, low: impl Into<Expr>, high: impl Into<Expr>) -> Expr {
        self.clone().gt_eq(low).and(self.lt_eq(high))
    }
    /// Quantile `q` in `[0, 1]`, linear interpolation.
    pub fn quantile(self, q: f64) -> Expr {
        Expr::Agg {
            func: AggFunc::Quantile(q),
            args: vec![self],
            distinct: false,
        }
    }
    /// Count of distinct non-null values (SQL `count(DISTINCT x)`).
    pub fn count_distinct(self) -> Expr {
        Expr::Agg {
            func: AggFunc::Count,
            args: vec![self],
            distinct: true,
        }
    }
    /// This aggregate over the distinct values of its input (SQL
    /// `sum(DISTINCT x)`): `col("x").sum().distinct()`. Other expressions
    /// are returned as they are, and aggregates without a distinct form
    /// (see [`AggFunc::takes_distinct`]) are refused when planned.
    pub fn distinct(self) -> Expr {
        match self {
            Expr::Agg { func, args, .. } => Expr::Agg {
                func,
                args,
                distinct: true,
            },
            other => other,
        }
    }
    /// The value of this expression in the row where `key` is smallest
    /// (rows with a null key or value skipped; DuckDB's `min_by`).
    pub fn min_by(self, key: Expr) -> Expr {
        self.first_by(key, false, true)
    }
    /// The value where `key` is largest (DuckDB's `max_by`).
    pub fn max_by(self, key: Expr) -> Expr {
        self.first_by(key, true, true)
    }
    fn first_by(self, key: Expr, descending: bool, skip_nulls: bool) -> Expr {
        Expr::Agg {
            func: AggFunc::FirstBy(KeyOrder {
                descending,
                nulls_first: descending,
                skip_nulls,
            }),
            args: vec![self, key],
            distinct: false,
        }
    }
    /// The non-null values as text joined by `separator`, in `order`'s
    /// order (input order with `None`): SQL `string_agg`.
    pub fn string_agg(self, separator: &str, order: Option<SortKey>) -> Expr {
        let mut args = vec![self.cast(DataType::Utf8), lit(separator)];
        let order = order.map(|k| {
            args.push(k.expr);
            KeyOrder {
                descending: k.descending,
                nulls_first: !k.nulls_last,
                skip_nulls: false,
            }
        });
        Expr::Agg {
            func: AggFunc::StringAgg(order),
            args,
            distinct: false,
        }
    }

    /// The name of the column this expression produces: its alias, else the
    /// name of its first column (as Polars names `col("a").sum()` "a"), else
    /// its display.
    pub fn output_name(&self) -> String {
        match self {
            Expr::Alias(_, name) => name.clone(),
            Expr::Column(name) => name.clone(),
            Expr::Agg {
                func: AggFunc::CountStar,
                ..
            } => "count".to_string(),
            other => other.first_column().unwrap_or_else(|| other.to_string()),
        }
    }

    fn first_column(&self) -> Option<String> {
        let mut found = None;
        self.visit(&mut |e| {
            if found.is_none()
                && let Expr::Column(c) = e
            {
                found = Some(c.clone());
            }
        });
        found
    }

    /// Calls `f` on this expression and every sub-expression, parents first.
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        for child in self.children() {
            child.visit(f);
        }
    }

    /// The direct sub-expressions.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Column(_) | Expr::Literal(_) | Expr::Wildcard => vec![],
            Expr::Binary { left, right, .. } => vec![left, right],
            Expr::Not(e) | Expr::Negative(e) | Expr::IsNull(e) | Expr::IsNotNull(e) => vec![e],
            Expr::Cast(e, _) | Expr::Alias(e, _) => vec![e],
            Expr::Case {
                when_then,
                otherwise,
            } => {
                let mut v: Vec<&Expr> = when_then.iter().flat_map(|(w, t)| [w, t]).collect();
                if let Some(o) = otherwise {
                    v.push(o);
                }
                v
            }
            Expr::InList { expr, list, .. } => {
                std::iter::once(expr.as_ref()).chain(list.iter()).collect()
            }
            Expr::Function(_, args) | Expr::Agg { args, .. } => args.iter().collect(),
            Expr::Window {
                args,
                partition_by,
                order_by,
                ..
            } => args
                .iter()
                .chain(partition_by)
                .chain(order_by.iter().map(|k| &k.expr))
                .collect(),
        }
    }

    /// Rebuilds the expression bottom-up, replacing each node by `f(node)`.
    pub fn transform(self, f: &mut impl FnMut(Expr) -> Expr) -> Expr {
        let rebuilt = match self {
            Expr::Binary { left, op, right } => Expr::Binary {
                left: Box::new(left.transform(f)),
                op,
                right: Box::new(right.transform(f)),
            },
            Expr::Not(e) => Expr::Not(Box::new(e.transform(f))),
            Expr::Negative(e) => Expr::Negative(Box::new(e.transform(f))),
            Expr::IsNull(e) => Expr::IsNull(Box::new(e.transform(f))),
            Expr::IsNotNull(e) => Expr::IsNotNull(Box::new(e.transform(f))),
            Expr::Cast(e, t) => Expr::Cast(Box::new(e.transform(f)), t),
            Expr::Alias(e, n) => Expr::Alias(Box::new(e.transform(f)), n),
            Expr::Case {
                when_then,
                otherwise,
            } => Expr::Case {
                when_then: when_then
                    .into_iter()
                    .map(|(w, t)| (w.transform(f), t.transform(f)))
                    .collect(),
                otherwise: otherwise.map(|o| Box::new(o.transform(f))),
            },
            Expr::InList {
                expr,
                list,
                negated,
            } => Expr::InList {
                expr: Box::new(expr.transform(f)),
                list: list.into_iter().map(|e| e.transform(f)).collect(),
                negated,
            },
            Expr::Function(func, args) => {
                Expr::Function(func, args.into_iter().map(|e| e.transform(f)).collect())
            }
            Expr::Agg {
                func,
                args,
                distinct,
            } => Expr::Agg {
                func,
                args: args.into_iter().map(|e| e.transform(f)).collect(),
                distinct,
            },
            Expr::Window {
                func,
                args,
                partition_by,
                order_by,
            } => Expr::Window {
                func,
                args: args.into_iter().map(|e| e.transform(f)).collect(),
                partition_by: partition_by.into_iter().map(|e| e.transform(f)).collect(),
                order_by: order_by
                    .into_iter()
                    .map(|k| SortKey {
                        expr: k.expr.transform(f),
                        ..k
                    })
                    .collect(),
            },
            leaf => leaf,
        };
        f(rebuilt)
    }

    /// Names of all columns the expression reads.
    pub fn columns(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let Expr::Column(c) = e
                && !out.contains(c)
            {
                out.push(c.clone());
            }
        });
        out
    }

    /// True if an aggregate function occurs anywhere in the expression.
    pub fn contains_agg(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| found |= matches!(e, Expr::Agg { .. }));
        found
    }

    /// The expression without a top-level alias.
    pub fn unalias(&self) -> &Expr {
        match self {
            Expr::Alias(e, _) => e.unalias(),
            e => e,
        }
    }

    /// Splits a conjunction `a AND b AND c` into `[a, b, c]`.
    pub fn split_conjunction(self) -> Vec<Expr> {
        self.split_on(Operator::And)
    }

    /// Splits a disjunction `a OR b OR c` into `[a, b, c]`.
    pub fn split_disjunction(self) -> Vec<Expr> {
        self.split_on(Operator::Or)
    }

    fn split_on(self, op: Operator) -> Vec<Expr> {
        match self {
            Expr::Binary { left, op: o, right } if o == op => {
                let mut v = left.split_on(op);
                v.extend(right.split_on(op));
                v
            }
            e => vec![e],
        }
    }

    /// Joins predicates with `AND`; `None` for an empty list.
    pub fn conjunction(exprs: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        joined(exprs.into_iter().collect(), Expr::and)
    }

    /// Joins predicates with `OR`; `None` for an empty list.
    pub fn disjunction(exprs: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        joined(exprs.into_iter().collect(), Expr::or)
    }
}

/// Chains longer than this are joined as a balanced tree.
const LONG_CHAIN: usize = 64;

/// `exprs` joined by an associative `op`: left to right (the shape plans
/// print) when the chain is short; as a balanced tree when it is long, so
/// that a generated predicate of thousands of terms nests only
/// logarithmically deep for the passes that recurse over expressions.
fn joined(mut exprs: Vec<Expr>, op: fn(Expr, Expr) -> Expr) -> Option<Expr> {
    if exprs.len() <= LONG_CHAIN {
        return exprs.into_iter().reduce(op);
    }
    while exprs.len() > 1 {
        let mut paired = Vec::with_capacity(exprs.len().div_ceil(2));
        let mut it = exprs.into_iter();
        while let Some(l) = it.next() {
            paired.push(match it.next() {
                Some(r) => op(l, r),
                None => l,
            });
        }
        exprs = paired;
    }
    exprs.pop()
}

impl From<&str> for Expr {
    /// A string literal (not a column: use [`col`] for that).
    fn from(s: &str) -> Self {
        lit(s)
    }
}

macro_rules! expr_from_literal {
    ($($t:ty),*) => {
        $(impl From<$t> for Expr {
            fn from(v: $t) -> Self { lit(v) }
        })*
    };
}
expr_from_literal!(i32, i64, u32, u64, f64, bool, String, ScalarValue);

macro_rules! arith_ops {
    ($($trait:ident $method:ident => $op:ident),*) => {
        $(impl<T: Into<Expr>> std::ops::$trait<T> for Expr {
            type Output = Expr;
            fn $method(self, rhs: T) -> Expr {
                Expr::Binary { left: Box::new(self), op: Operator::$op, right: Box::new(rhs.into()) }
            }
        })*
    };
}
arith_ops!(Add add => Plus, Sub sub => Minus, Mul mul => Multiply, Div div => Divide, Rem rem => Modulo);

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::Negative(Box::new(self))
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column(c) => write!(f, "{c}"),
            Expr::Literal(v) => write!(f, "{v}"),
            Expr::Binary { left, op, right } => write!(f, "({left} {} {right})", op.symbol()),
            Expr::Not(e) => write!(f, "NOT {e}"),
            Expr::Negative(e) => write!(f, "-{e}"),
            Expr::IsNull(e) => write!(f, "{e} IS NULL"),
            Expr::IsNotNull(e) => write!(f, "{e} IS NOT NULL"),
            Expr::Cast(e, t) => write!(f, "CAST({e} AS {t})"),
            Expr::Alias(e, n) => write!(f, "{e} AS {n}"),
            Expr::Case {
                when_then,
                otherwise,
            } => {
                write!(f, "CASE")?;
                for (w, t) in when_then {
                    write!(f, " WHEN {w} THEN {t}")?;
                }
                if let Some(o) = otherwise {
                    write!(f, " ELSE {o}")?;
                }
                write!(f, " END")
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let items: Vec<String> = list.iter().map(|e| e.to_string()).collect();
                write!(
                    f,
                    "{expr} {}IN ({})",
                    if *negated { "NOT " } else { "" },
                    items.join(", ")
                )
            }
            Expr::Function(func, args) => {
                let items: Vec<String> = args.iter().map(|e| e.to_string()).collect();
                write!(f, "{}({})", func.name(), items.join(", "))
            }
            Expr::Agg {
                func: AggFunc::CountStar,
                ..
            } => write!(f, "count(*)"),
            Expr::Agg {
                func,
                args,
                distinct,
            } => {
                let items: Vec<String> = args.iter().map(|e| e.to_string()).collect();
                let extra = match func {
                    AggFunc::Quantile(q) => format!(", {q}"),
                    _ => String::new(),
                };
                write!(
                    f,
                    "{}({}{}{extra})",
                    func.name(),
                    if *distinct { "DISTINCT " } else { "" },
                    items.join(", ")
                )
            }
            Expr::Window {
                func,
                args,
                partition_by,
                order_by,
            } => {
                let a: Vec<String> = args.iter().map(|e| e.to_string()).collect();
                let p: Vec<String> = partition_by.iter().map(|e| e.to_string()).collect();
                let o: Vec<String> = order_by
                    .iter()
                    .map(|k| format!("{}{}", k.expr, if k.descending { " DESC" } else { "" }))
                    .collect();
                let mut spec = Vec::new();
                if !p.is_empty() {
                    spec.push(format!("PARTITION BY {}", p.join(", ")));
                }
                if !o.is_empty() {
                    spec.push(format!("ORDER BY {}", o.join(", ")));
                }
                if let WindowFunc::FramedAggregate(_, frame) | WindowFunc::Value(_, Some(frame)) =
                    func
                {
                    spec.push(frame.to_string());
                }
                let n = match func {
                    WindowFunc::Value(FramePick::Nth(n), _) => format!(", {n}"),
                    WindowFunc::Value(FramePick::FirstPresent | FramePick::LastPresent, _) => {
                        " IGNORE NULLS".to_string()
                    }
                    // The offset, unless it is the default 1.
                    WindowFunc::Lag(n) | WindowFunc::Lead(n) if *n != 1 => format!(", {n}"),
                    WindowFunc::ShiftPresent(n) => match n.unsigned_abs() {
                        1 => " IGNORE NULLS".to_string(),
                        n => format!(", {n} IGNORE NULLS"),
                    },
                    WindowFunc::Ntile(n) => n.to_string(),
                    _ => String::new(),
                };
                write!(
                    f,
                    "{}({}{n}) OVER ({})",
                    func.name(),
                    a.join(", "),
                    spec.join(" ")
                )
            }
            Expr::Wildcard => write!(f, "*"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts_ignoring_nulls_count_only_rows_with_values() {
        // Positions 1, 2 and 5 of 7 hold values.
        let present = |j: usize| [1, 2, 5].contains(&j);
        let at = |shift, k| WindowFunc::shifted_position(shift, k, 7, present);
        assert_eq!(at((-1, true), 4), Some(2));
        assert_eq!(at((-2, true), 4), Some(1));
        assert_eq!(at((-3, true), 4), None);
        assert_eq!(at((1, true), 2), Some(5), "the current row is not counted");
        assert_eq!(at((1, true), 5), None);
        assert_eq!(at((1, false), 5), Some(6), "respecting nulls: the next row");
        assert_eq!(at((0, true), 3), Some(3));
    }

    #[test]
    fn shifts_print_their_offset_unless_it_is_one() {
        let order = || {
            vec![SortKey {
                expr: col("t"),
                descending: false,
                nulls_last: true,
            }]
        };
        assert_eq!(
            col("x").lag(1, vec![], order()).to_string(),
            "lag(x) OVER (ORDER BY t)"
        );
        assert_eq!(
            col("x").lag(2, vec![], order()).to_string(),
            "lag(x, 2) OVER (ORDER BY t)"
        );
        assert_eq!(
            col("x").lead(3, vec![], order()).to_string(),
            "lead(x, 3) OVER (ORDER BY t)"
        );
    }

    #[test]
    fn distribution_functions_follow_sql() {
        // Five rows, the 2nd and 3rd tied: peers 0..1, 1..3, 3..4, 4..5.
        let peers = [0..1, 1..3, 1..3, 3..4, 4..5];
        let of = |f: WindowFunc| -> Vec<f64> {
            (0..5)
                .map(|k| f.distribution(k, 5, peers[k].clone()).unwrap())
                .collect()
        };
        assert_eq!(of(WindowFunc::PercentRank), [0.0, 0.25, 0.25, 0.75, 1.0]);
        assert_eq!(of(WindowFunc::CumeDist), [0.2, 0.6, 0.6, 0.8, 1.0]);
        // 5 rows in 2 buckets: 3 + 2; in 3: 2 + 2 + 1; in 7: one row each.
        assert_eq!(of(WindowFunc::Ntile(2)), [1.0, 1.0, 1.0, 2.0, 2.0]);
        assert_eq!(of(WindowFunc::Ntile(3)), [1.0, 1.0, 2.0, 2.0, 3.0]);
        assert_eq!(of(WindowFunc::Ntile(7)), [1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(WindowFunc::PercentRank.distribution(0, 1, 0..1), Some(0.0));
        assert_eq!(WindowFunc::Rank.distribution(0, 1, 0..1), None);
    }

    #[test]
    fn picks_stay_in_the_frame() {
        // Frames as positions lo..hi.
        let all = |_: usize| true;
        assert_eq!(FramePick::First.pick(1, 4, all), Some(1));
        assert_eq!(FramePick::Last.pick(1, 4, all), Some(3));
        assert_eq!(FramePick::Nth(3).pick(1, 4, all), Some(3));
        assert_eq!(FramePick::Nth(4).pick(1, 4, all), None);
        assert_eq!(FramePick::Nth(0).pick(1, 4, all), None);
        assert_eq!(FramePick::First.pick(1, 1, all), None);
        // Positions 0, 2 and 5 hold values; the others nulls.
        let present = |i: usize| [0, 2, 5].contains(&i);
        assert_eq!(FramePick::FirstPresent.pick(1, 5, present), Some(2));
        assert_eq!(FramePick::LastPresent.pick(1, 5, present), Some(2));
        assert_eq!(FramePick::LastPresent.pick(3, 5, present), None);
        assert_eq!(FramePick::First.pick(3, 5, present), Some(3), "nulls count");
    }
}
