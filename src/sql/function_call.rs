//! Function calls: window functions (ranking, `lag`/`lead`, first/last/
//! nth value), aggregates (with DISTINCT, ORDER BY inside, FILTER and
//! WITHIN GROUP), the few scalar forms written in terms of others
//! (`concat`, `log(b, x)`, `nullif`, ..), and every other name from the
//! function registry ([`crate::functions::lookup`]).

use arrow::datatypes::DataType;
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};

use super::expr::{Resolver, convert, window_spec};
use crate::error::{Result, SlothError};
use crate::expr::{
    AggFunc, BitOp, Bivariate, Expr, FramePick, KeyOrder, ScalarFunc, ScalarValue, SortKey,
    WindowFunc, lit, when,
};
use crate::functions;

/// `date_part('year', d)`: EXTRACT with the field as a constant string.
fn date_part(args: Vec<Expr>) -> Result<Expr> {
    let [Expr::Literal(ScalarValue::Utf8(Some(field))), d] = <[Expr; 2]>::try_from(args)
        .map_err(|a| SlothError::plan(format!("date_part() takes 2 arguments, got {}", a.len())))?
    else {
        return Err(SlothError::plan(
            "date_part() takes a constant field name, then a date",
        ));
    };
    let f = match field.to_ascii_lowercase().as_str() {
        "year" | "years" => functions::YEAR,
        "quarter" => functions::QUARTER,
        "month" | "months" => functions::MONTH,
        "day" | "days" => functions::DAY,
        "dow" | "dayofweek" => functions::DAY_OF_WEEK,
        "doy" | "dayofyear" => functions::DAY_OF_YEAR,
        other => {
            return Err(SlothError::unsupported(format!(
                "date_part('{other}', ..) (year, quarter, month, day, dow and doy are supported)"
            )));
        }
    };
    Ok(Expr::Function(f, vec![d]))
}

/// A function call as an expression.
pub(super) fn function(f: &ast::Function, r: &dyn Resolver) -> Result<Expr> {
    let name = f.name.to_string().to_ascii_lowercase();
    if matches!(f.args, FunctionArguments::None) && name == "current_date" {
        // The date when the query is planned, in UTC.
        let days = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 86_400);
        return Ok(Expr::Literal(ScalarValue::Date32(Some(days as i32))));
    }
    let FunctionArguments::List(list) = &f.args else {
        return Err(SlothError::unsupported(format!("function call '{f}'")));
    };
    if let Some(over) = &f.over
        && let Some(call) = window_call(&name, f, list, over, r)?
    {
        return Ok(call);
    }
    if f.null_treatment.is_some() {
        return Err(SlothError::unsupported(format!(
            "IGNORE/RESPECT NULLS in '{f}'"
        )));
    }
    if !matches!(f.parameters, FunctionArguments::None) {
        return Err(SlothError::unsupported(format!("function call '{f}'")));
    }
    let args = call_arguments(&name, f, list, r)?;
    let distinct = args.distinct;
    let call = match aggregate_call(&name, args)? {
        AggregateCall::Built(call) => call,
        AggregateCall::NotAnAggregate(args) => scalar_call(&name, args)?,
    };
    // An aggregate written as several (var_pop, bool_and) took DISTINCT
    // into each of them.
    if distinct && !call.contains_agg() {
        return Err(SlothError::unsupported(format!(
            "DISTINCT in the non-aggregate function call '{f}'"
        )));
    }
    if let Some(over) = &f.over {
        if !matches!(call, Expr::Agg { .. }) {
            return Err(SlothError::unsupported(format!(
                "window function '{name}' (row_number, rank, dense_rank, lag, lead, first_value, last_value, nth_value and aggregates are supported)"
            )));
        }
        return match window_spec(over, r)? {
            (partition_by, order_by, Some(frame)) => call.over_frame(partition_by, order_by, frame),
            (partition_by, order_by, None) => call.over_window(partition_by, order_by),
        };
    }
    match &f.filter {
        None => Ok(call),
        Some(cond) => filter_aggregate(call, convert(cond, r)?, f),
    }
}

/// A window function that is no aggregate: ranking, `lag` / `lead`, and
/// first / last / nth value; `None` for other names (aggregates over a
/// window are planned as aggregates, then windowed).
fn window_call(
    name: &str,
    f: &ast::Function,
    list: &ast::FunctionArgumentList,
    over: &ast::WindowType,
    r: &dyn Resolver,
) -> Result<Option<Expr>> {
    if f.filter.is_some() {
        return Err(SlothError::unsupported("FILTER on a window function"));
    }
    let ranking = match name {
        "row_number" => Some(WindowFunc::RowNumber),
        "rank" => Some(WindowFunc::Rank),
        "dense_rank" => Some(WindowFunc::DenseRank),
        "percent_rank" => Some(WindowFunc::PercentRank),
        "cume_dist" => Some(WindowFunc::CumeDist),
        "ntile" => Some(WindowFunc::Ntile(ntile_buckets(f, list, r)?)),
        _ => None,
    };
    if let Some(func) = ranking {
        // Ranking ignores a frame, as in PostgreSQL.
        let (partition_by, order_by, _) = window_spec(over, r)?;
        return Ok(Some(Expr::over(func, partition_by, order_by)));
    }
    if matches!(name, "lag" | "lead") {
        return shift_window(name, f, list, over, r).map(Some);
    }
    if matches!(
        name,
        "first_value" | "last_value" | "nth_value" | "first" | "last"
    ) && list
        .clauses
        .iter()
        .all(|c| matches!(c, ast::FunctionArgumentClause::IgnoreOrRespectNulls(_)))
    {
        return value_window(name, f, list, over, r).map(Some);
    }
    Ok(None)
}

/// A call's arguments and the clauses around them.
struct CallArgs {
    /// The arguments (a WITHIN GROUP key first).
    args: Vec<Expr>,
    /// `count(*)`.
    star: bool,
    /// `f(DISTINCT ..)`.
    distinct: bool,
    /// The one ORDER BY key inside the call (`first(x ORDER BY k)`).
    order: Option<SortKey>,
    /// WITHIN GROUP (ORDER BY .. DESC).
    descending: bool,
}

/// Reads a call's arguments, its ORDER BY key and its WITHIN GROUP.
fn call_arguments(
    name: &str,
    f: &ast::Function,
    list: &ast::FunctionArgumentList,
    r: &dyn Resolver,
) -> Result<CallArgs> {
    // `first(x ORDER BY key)`: one key, for first and last only.
    let mut order: Option<SortKey> = None;
    for clause in &list.clauses {
        match clause {
            ast::FunctionArgumentClause::OrderBy(keys)
                if keys.len() == 1
                    && matches!(
                        name,
                        "first"
                            | "first_value"
                            | "last"
                            | "last_value"
                            | "string_agg"
                            | "listagg"
                            | "group_concat"
                            | "array_agg"
                            | "list"
                    ) =>
            {
                order = Some(super::planner::sort_key(
                    convert(&keys[0].expr, r)?,
                    &keys[0],
                ));
            }
            _ => {
                return Err(SlothError::unsupported(format!(
                    "'{clause}' in '{f}' (first, last, string_agg and array_agg take one ORDER BY key)"
                )));
            }
        }
    }
    let distinct = matches!(
        list.duplicate_treatment,
        Some(ast::DuplicateTreatment::Distinct)
    );
    let mut star = false;
    // `percentile_cont(q) WITHIN GROUP (ORDER BY x)` is `quantile(x, q)`.
    let mut args = match f.within_group.as_slice() {
        [] => Vec::new(),
        [o] if name == "percentile_cont" => vec![convert(&o.expr, r)?],
        _ => {
            return Err(SlothError::unsupported(format!(
                "WITHIN GROUP in '{f}' (one ORDER BY key of percentile_cont is supported)"
            )));
        }
    };
    let descending = f
        .within_group
        .first()
        .is_some_and(|o| matches!(o.options.sort, Some(ast::OrderBySort::Desc)));
    for a in &list.args {
        match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(convert(e, r)?),
            FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => star = true,
            other => {
                return Err(SlothError::unsupported(format!(
                    "function argument '{other}'"
                )));
            }
        }
    }
    Ok(CallArgs {
        args,
        star,
        distinct,
        order,
        descending,
    })
}

/// What an aggregate's name makes of a call.
enum AggregateCall {
    /// The aggregate (or an expression over aggregates: `var_pop`).
    Built(Expr),
    /// `name` names no aggregate: the arguments, for a scalar function.
    NotAnAggregate(Vec<Expr>),
}

/// The aggregate `name` over `a`.
fn aggregate_call(name: &str, a: CallArgs) -> Result<AggregateCall> {
    let CallArgs {
        args,
        star,
        distinct,
        mut order,
        descending,
    } = a;
    let agg = |func: AggFunc, args: Vec<Expr>| Expr::Agg {
        func,
        args,
        distinct,
    };
    let call = match name {
        "count" if star || args.is_empty() => crate::expr::count_star(),
        // count(a, b, ..): the rows where every argument is non-null.
        "count" if args.len() > 1 => {
            if distinct {
                return Err(SlothError::unsupported(
                    "count(DISTINCT ..) of several arguments",
                ));
            }
            count_all_present(args)
        }
        "count" => agg(AggFunc::Count, args),
        "sum" => agg(AggFunc::Sum, args),
        "avg" | "mean" => agg(AggFunc::Mean, args),
        "min" => agg(AggFunc::Min, args),
        "max" => agg(AggFunc::Max, args),
        "stddev" | "stddev_samp" | "std" => agg(AggFunc::Std, args),
        "variance" | "var_samp" | "var" => agg(AggFunc::Var, args),
        // Population variance: the sample variance scaled by (n - 1) / n,
        // and 0 for a single value (whose sample variance is null).
        "var_pop" | "stddev_pop" => {
            let [x] = arguments::<1>(name, args)?;
            let n = || agg(AggFunc::Count, vec![x.clone()]).cast(DataType::Float64);
            let scaled = agg(AggFunc::Var, vec![x.clone()]) * (n() - lit(1.0)) / n();
            let var_pop = when(n().eq(lit(1.0))).then(lit(0.0)).otherwise(scaled);
            match name {
                "stddev_pop" => var_pop.math(crate::expr::MathFunc::Sqrt),
                _ => var_pop,
            }
        }
        // bool_and / bool_or over booleans: the least / greatest as 0 or
        // 1, null for a group of nulls only.
        "bool_and" | "every" | "bool_or" => {
            let [b] = arguments::<1>(name, args)?;
            let func = if name == "bool_or" {
                AggFunc::Max
            } else {
                AggFunc::Min
            };
            agg(func, vec![b.cast(DataType::Int64)]).eq(lit(1))
        }
        "median" => agg(AggFunc::Median, args),
        // The pairs regr_* take: rows where both are non-null.
        "regr_count" => count_all_present(Vec::from(arguments::<2>(name, args)?)),
        "bit_and" => agg(AggFunc::Bitwise(BitOp::And), args),
        "bit_or" => agg(AggFunc::Bitwise(BitOp::Or), args),
        "bit_xor" => agg(AggFunc::Bitwise(BitOp::Xor), args),
        stat if Bivariate::from_name(stat).is_some() => {
            let stat = Bivariate::from_name(stat).expect("checked");
            agg(AggFunc::Bivariate(stat), args)
        }
        "first" | "first_value" | "last" | "last_value" if order.is_some() => {
            let key = order.take().expect("checked");
            // The last row in an order is the first in the reverse one.
            let last = name.starts_with("last");
            let mut args = args;
            args.push(key.expr);
            let order = KeyOrder {
                descending: key.descending != last,
                nulls_first: key.nulls_last == last,
                skip_nulls: false,
            };
            agg(AggFunc::FirstBy(order), args)
        }
        // array_agg(x [ORDER BY key]), DuckDB's list(x).
        "array_agg" | "list" => {
            let [x] = arguments::<1>(name, args)?;
            let key = order.take();
            let order = key.as_ref().map(|k| KeyOrder {
                descending: k.descending,
                nulls_first: !k.nulls_last,
                skip_nulls: false,
            });
            let mut args = vec![x];
            args.extend(key.map(|k| k.expr));
            agg(AggFunc::ArrayAgg(order), args)
        }
        "string_agg" | "listagg" | "group_concat" => {
            let mut args = args.into_iter().map(|a| a.cast(DataType::Utf8));
            let (Some(x), sep, None) = (args.next(), args.next(), args.next()) else {
                return Err(SlothError::plan(format!(
                    "{name}() takes a value and a separator"
                )));
            };
            // group_concat's separator defaults to a comma (as in MySQL
            // and SQLite); string_agg's must be given.
            let sep = match (sep, name) {
                (Some(s), _) => s,
                (None, "group_concat") => lit(","),
                (None, _) => {
                    return Err(SlothError::plan(format!(
                        "{name}() takes a value and a separator"
                    )));
                }
            };
            let key = order.take();
            let order = key.as_ref().map(|k| KeyOrder {
                descending: k.descending,
                nulls_first: !k.nulls_last,
                skip_nulls: false,
            });
            let mut args = vec![x, sep];
            args.extend(key.map(|k| k.expr));
            agg(AggFunc::StringAgg(order), args)
        }
        "min_by" | "arg_min" | "max_by" | "arg_max" => {
            let descending = name.starts_with("max") || name == "arg_max";
            let order = KeyOrder {
                descending,
                nulls_first: false,
                skip_nulls: true,
            };
            agg(AggFunc::FirstBy(order), args)
        }
        "first" | "first_value" => agg(AggFunc::First, args),
        "last" | "last_value" => agg(AggFunc::Last, args),
        "quantile" | "quantile_cont" | "percentile_cont" => {
            let q = match args.get(1) {
                Some(Expr::Literal(ScalarValue::Decimal128(Some(v), _, s))) => {
                    *v as f64 / 10f64.powi(*s as i32)
                }
                Some(Expr::Literal(ScalarValue::Float64(Some(v)))) => *v,
                _ => return Err(SlothError::plan("quantile(x, q) needs a constant q")),
            };
            // The q-quantile of a descending order is the (1 - q)-quantile.
            let q = if descending { 1.0 - q } else { q };
            agg(AggFunc::Quantile(q), vec![args[0].clone()])
        }
        _ => return Ok(AggregateCall::NotAnAggregate(args)),
    };
    Ok(AggregateCall::Built(call))
}

/// A scalar function: a form written in terms of others, or one of the
/// function registry.
fn scalar_call(name: &str, args: Vec<Expr>) -> Result<Expr> {
    let scalar = |func: ScalarFunc, args: Vec<Expr>| Expr::Function(func, args);
    Ok(match name {
        // concat(a, b, ..): PostgreSQL's, which reads a null as '' (unlike
        // `||`, which gives null).
        "concat" => {
            let text = |e: Expr| {
                Expr::Function(
                    functions::COALESCE,
                    vec![
                        e.cast(DataType::Utf8),
                        Expr::Literal(ScalarValue::Utf8(Some(String::new()))),
                    ],
                )
            };
            let mut parts = args.into_iter().map(text);
            let first = parts
                .next()
                .ok_or_else(|| SlothError::plan("concat() needs at least one argument"))?;
            parts.fold(first, |acc, e| {
                Expr::Function(functions::CONCAT, vec![acc, e])
            })
        }
        // log(x) is the base-10 logarithm, in PostgreSQL and DuckDB;
        // log(b, x) the base-b one.
        "log" => match <[Expr; 2]>::try_from(args) {
            Ok([base, x]) => {
                let log10 = |e: Expr| Expr::Function(functions::LOG10, vec![e]);
                log10(x) / log10(base)
            }
            Err(args) => scalar(functions::LOG10, args),
        },
        // bit_length(s): 8 bits to a byte, as PostgreSQL counts.
        "bit_length" => Expr::Function(functions::OCTET_LENGTH, args) * lit(8i64),
        "pi" if args.is_empty() => lit(std::f64::consts::PI),
        "mod" => match <[Expr; 2]>::try_from(args) {
            Ok([a, b]) => a % b,
            Err(args) => {
                return Err(SlothError::plan(format!(
                    "mod() takes 2 arguments, got {}",
                    args.len()
                )));
            }
        },
        "date_part" | "datepart" => date_part(args)?,
        // Given its values by the aggregation's planner.
        "grouping" | "grouping_id" if !args.is_empty() => scalar(functions::GROUPING, args),
        // nullif(a, b): null where a = b, else a.
        "nullif" => match <[Expr; 2]>::try_from(args) {
            Ok([a, b]) => Expr::Case {
                when_then: vec![(a.clone().eq(b), Expr::Literal(ScalarValue::Null))],
                otherwise: Some(Box::new(a)),
            },
            Err(args) => {
                return Err(SlothError::plan(format!(
                    "nullif() takes 2 arguments, got {}",
                    args.len()
                )));
            }
        },
        other => match functions::lookup(other) {
            Some(f) => scalar(f, args),
            None => return Err(SlothError::unsupported(format!("function '{other}'"))),
        },
    })
}

/// The bucket count of `ntile(n)`: a positive integer constant.
fn ntile_buckets(
    f: &ast::Function,
    list: &ast::FunctionArgumentList,
    r: &dyn Resolver,
) -> Result<usize> {
    match plain_args(list, r)?.as_slice() {
        [Expr::Literal(ScalarValue::Int64(Some(n)))] if *n > 0 => Ok(*n as usize),
        _ => Err(SlothError::plan(format!(
            "ntile() takes one positive integer constant, the number of buckets, in '{f}'"
        ))),
    }
}

/// `lag(x [, n])` / `lead(x [, n])`, with an ORDER BY to give the rows an
/// order.
fn shift_window(
    name: &str,
    f: &ast::Function,
    list: &ast::FunctionArgumentList,
    over: &ast::WindowType,
    r: &dyn Resolver,
) -> Result<Expr> {
    let ignore_nulls = ignores_nulls(f, list)?;
    let args = plain_args(list, r)?;
    let n = match args.get(1) {
        None => 1,
        Some(Expr::Literal(ScalarValue::Int64(Some(n)))) if *n >= 0 => *n as usize,
        Some(_) => {
            return Err(SlothError::plan(format!(
                "{name}() offset must be a non-negative integer constant, in '{f}'"
            )));
        }
    };
    if args.is_empty() || args.len() > 3 {
        return Err(SlothError::plan(format!(
            "{name}() takes a value, an offset and a default, in '{f}'"
        )));
    }
    // lag and lead ignore a frame, as in PostgreSQL.
    let (partition_by, order_by, _) = window_spec(over, r)?;
    if order_by.is_empty() {
        return Err(SlothError::plan(format!(
            "{name}() needs ORDER BY in its window, in '{f}'"
        )));
    }
    let value = args[0].clone();
    let mut call = if name == "lag" {
        value.lag(n, partition_by, order_by)
    } else {
        value.lead(n, partition_by, order_by)
    };
    if let (true, Expr::Window { func, .. }) = (ignore_nulls && n > 0, &mut call) {
        let n = n as isize;
        *func = WindowFunc::ShiftPresent(if name == "lag" { -n } else { n });
    }
    if let (Some(default), Expr::Window { args, .. }) = (args.get(2), &mut call) {
        args.push(default.clone());
    }
    Ok(call)
}

/// A window function's arguments: expressions, none named or `*`.
fn plain_args(list: &ast::FunctionArgumentList, r: &dyn Resolver) -> Result<Vec<Expr>> {
    list.args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => convert(e, r),
            other => Err(SlothError::unsupported(format!(
                "function argument '{other}'"
            ))),
        })
        .collect()
}

/// Whether a window value function skips null values (`IGNORE NULLS`,
/// after the call or inside its parentheses) or reads them (SQL's
/// default, `RESPECT NULLS`); any other clause is refused rather than
/// dropped.
fn ignores_nulls(f: &ast::Function, list: &ast::FunctionArgumentList) -> Result<bool> {
    use ast::{FunctionArgumentClause as Clause, NullTreatment};
    let mut ignore = f.null_treatment == Some(NullTreatment::IgnoreNulls);
    for clause in &list.clauses {
        match clause {
            Clause::IgnoreOrRespectNulls(treatment) => {
                ignore |= *treatment == NullTreatment::IgnoreNulls
            }
            other => {
                return Err(SlothError::unsupported(format!("'{other}' in '{f}'")));
            }
        }
    }
    Ok(ignore)
}

/// `first_value(x)`, `last_value(x)`, `nth_value(x, n)` (and DuckDB's
/// `first`/`last`) OVER a window: `x` of a row of each row's frame.
fn value_window(
    name: &str,
    f: &ast::Function,
    list: &ast::FunctionArgumentList,
    over: &ast::WindowType,
    r: &dyn Resolver,
) -> Result<Expr> {
    let ignore_nulls = ignores_nulls(f, list)?;
    let args = plain_args(list, r)?;
    let pick = match (name, args.as_slice(), ignore_nulls) {
        ("first_value" | "first", [_], false) => FramePick::First,
        ("last_value" | "last", [_], false) => FramePick::Last,
        ("first_value" | "first", [_], true) => FramePick::FirstPresent,
        ("last_value" | "last", [_], true) => FramePick::LastPresent,
        ("nth_value", _, true) => {
            return Err(SlothError::unsupported(format!("IGNORE NULLS in '{f}'")));
        }
        ("nth_value", [_, Expr::Literal(ScalarValue::Int64(Some(n)))], _) if *n >= 1 => {
            FramePick::Nth(*n as usize)
        }
        ("nth_value", _, _) => {
            return Err(SlothError::plan(format!(
                "nth_value() takes a value and a positive integer constant, in '{f}'"
            )));
        }
        _ => {
            return Err(SlothError::plan(format!(
                "{name}() takes one value, in '{f}'"
            )));
        }
    };
    let (partition_by, order_by, frame) = window_spec(over, r)?;
    let value = args.into_iter().next().expect("checked above");
    Ok(value.frame_value(pick, partition_by, order_by, frame))
}

/// `agg(x) FILTER (WHERE cond)` → `agg(CASE WHEN cond THEN x END)`: the
/// rows where `cond` is not true give null, which these aggregates skip
/// (`count(*)` becomes a count of a constant). `first`/`last` keep nulls,
/// so they have no such rewrite.
fn filter_aggregate(call: Expr, cond: Expr, f: &ast::Function) -> Result<Expr> {
    let only_when = |value: Expr| Expr::Case {
        when_then: vec![(cond.clone(), value)],
        otherwise: None,
    };
    match call {
        Expr::Agg {
            func: AggFunc::First | AggFunc::Last,
            ..
        } => Err(SlothError::unsupported(format!(
            "FILTER on first/last in '{f}'"
        ))),
        Expr::Agg {
            func: AggFunc::CountStar,
            ..
        } => Ok(Expr::Agg {
            func: AggFunc::Count,
            args: vec![only_when(lit(1i64))],
            distinct: false,
        }),
        Expr::Agg {
            func,
            args,
            distinct,
        } => Ok(Expr::Agg {
            func,
            args: args.into_iter().map(only_when).collect(),
            distinct,
        }),
        _ => Err(SlothError::plan(format!(
            "FILTER applies to aggregate functions only, not to '{f}'"
        ))),
    }
}

/// The one argument of the aggregate `name`, or an error saying it takes one.
/// The `N` arguments of a call of `name`, or an error that counts them.
fn arguments<const N: usize>(name: &str, args: Vec<Expr>) -> Result<[Expr; N]> {
    let n = args.len();
    let wanted = match N {
        1 => "one argument".to_string(),
        _ => format!("{N} arguments"),
    };
    <[Expr; N]>::try_from(args)
        .map_err(|_| SlothError::plan(format!("{name}() takes {wanted}, got {n}")))
}

/// `count(a, b, ..)`: the rows where every argument is non-null.
fn count_all_present(args: Vec<Expr>) -> Expr {
    let all_present = args
        .into_iter()
        .map(Expr::is_not_null)
        .reduce(Expr::and)
        .unwrap_or(lit(true));
    Expr::Agg {
        func: AggFunc::Count,
        args: vec![
            when(all_present)
                .then(lit(1))
                .otherwise(lit(ScalarValue::Null)),
        ],
        distinct: false,
    }
}
