//! SQL expressions → [`Expr`].

use arrow::datatypes::DataType;
use sqlparser::ast::{
    self, BinaryOperator, CastKind, DateTimeField, FunctionArg, FunctionArgExpr, FunctionArguments,
    UnaryOperator, Value,
};

use crate::error::{Result, SlothError};
use crate::expr::{
    AggFunc, BitOp, Bivariate, Expr, FrameOffset, FramePick, FrameUnits, KeyOrder, ScalarFunc,
    ScalarValue, SortKey, WindowFrame, WindowFunc, col, lit, parse_date32, when,
};
use crate::functions;

/// Resolves column references of the current scope to internal names.
pub trait Resolver {
    /// `name` or `qualifier.name` → the plan's column name.
    fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<String>;
    /// The window the SELECT's `WINDOW name AS (..)` clause defines.
    fn named_window(&self, name: &str) -> Option<ast::NamedWindowExpr> {
        let _ = name;
        None
    }
    /// The value bound to the statement's parameter `$n` (1-based).
    fn parameter(&self, n: usize) -> Result<Expr> {
        Err(SlothError::plan(format!(
            "no value for parameter ${n}: the statement has no parameters here"
        )))
    }
    /// A scalar subquery `(SELECT ...)` → an expression for its value.
    fn scalar_subquery(&self, q: &ast::Query) -> Result<Expr> {
        Err(SlothError::unsupported(format!(
            "subquery '({q})' in this position"
        )))
    }
    /// `[NOT] EXISTS (q)` or `x [NOT] IN (q)` as a value (not a WHERE
    /// condition, which becomes a semi or anti join).
    fn subquery_predicate(&self, e: &ast::Expr) -> Result<Expr> {
        Err(SlothError::unsupported(format!(
            "EXISTS / IN subqueries in this position (in '{e}')"
        )))
    }
    /// `x op ALL (q)` (`all`) or `x op ANY (q)` → an expression for its
    /// (three-valued) truth.
    fn quantified_subquery(
        &self,
        x: Expr,
        op: &BinaryOperator,
        all: bool,
        q: &ast::Query,
    ) -> Result<Expr> {
        let _ = (x, op, all);
        self.scalar_subquery(q)
    }
}

fn ident(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    }
}

/// The most operators a chain that is not AND, OR or `||` (`a + b - c
/// ..`, evaluated left to right) may hold; past it the statement is refused
/// with a clear error rather than exhausting the stack.
pub const MAX_OPERATOR_CHAIN: usize = 1_000;

/// One binary operator applied.
fn binary(op: &BinaryOperator, l: Expr, r: Expr) -> Result<Expr> {
    Ok(match op {
        BinaryOperator::Plus => l + r,
        BinaryOperator::Minus => l - r,
        BinaryOperator::Multiply => l * r,
        BinaryOperator::Divide => l / r,
        BinaryOperator::Modulo => l % r,
        BinaryOperator::Eq => l.eq(r),
        BinaryOperator::NotEq => l.neq(r),
        BinaryOperator::Lt => l.lt(r),
        BinaryOperator::LtEq => l.lt_eq(r),
        BinaryOperator::Gt => l.gt(r),
        BinaryOperator::GtEq => l.gt_eq(r),
        BinaryOperator::And => l.and(r),
        BinaryOperator::Or => l.or(r),
        BinaryOperator::StringConcat => Expr::Function(functions::CONCAT, vec![l, r]),
        BinaryOperator::BitwiseAnd => Expr::Function(functions::BIT_AND, vec![l, r]),
        BinaryOperator::BitwiseOr => Expr::Function(functions::BIT_OR, vec![l, r]),
        BinaryOperator::PGBitwiseXor => Expr::Function(functions::XOR, vec![l, r]),
        BinaryOperator::PGBitwiseShiftLeft => Expr::Function(functions::SHIFT_LEFT, vec![l, r]),
        BinaryOperator::PGBitwiseShiftRight => Expr::Function(functions::SHIFT_RIGHT, vec![l, r]),
        // `^` is exponentiation in PostgreSQL and DuckDB.
        BinaryOperator::BitwiseXor => Expr::Function(functions::POWER, vec![l, r]),
        // PostgreSQL's regular-expression and LIKE operators.
        BinaryOperator::PGRegexMatch
        | BinaryOperator::PGRegexIMatch
        | BinaryOperator::PGRegexNotMatch
        | BinaryOperator::PGRegexNotIMatch => {
            let insensitive = matches!(
                op,
                BinaryOperator::PGRegexIMatch | BinaryOperator::PGRegexNotIMatch
            );
            let pattern = match (insensitive, r) {
                (true, Expr::Literal(ScalarValue::Utf8(Some(p)))) => lit(format!("(?i){p}")),
                (true, r) => Expr::Function(functions::CONCAT, vec![lit("(?i)"), r]),
                (false, r) => r,
            };
            let matched = Expr::Function(functions::REGEXP_MATCHES, vec![l, pattern]);
            match op {
                BinaryOperator::PGRegexNotMatch | BinaryOperator::PGRegexNotIMatch => matched.not(),
                _ => matched,
            }
        }
        BinaryOperator::PGLikeMatch => like(false, l, r),
        BinaryOperator::PGNotLikeMatch => like(true, l, r),
        BinaryOperator::PGILikeMatch | BinaryOperator::PGNotILikeMatch => {
            let lower = |e: Expr| Expr::Function(functions::LOWER, vec![e]);
            like(
                matches!(op, BinaryOperator::PGNotILikeMatch),
                lower(l),
                lower(r),
            )
        }
        other => return Err(SlothError::unsupported(format!("operator {other}"))),
    })
}

/// `operands` joined by `op` as a balanced tree: for an associative
/// operator, the same value as the left-to-right chain at a depth of
/// log2 of its length.
fn balanced(op: &BinaryOperator, mut operands: Vec<Expr>) -> Result<Expr> {
    while operands.len() > 1 {
        let mut paired = Vec::with_capacity(operands.len().div_ceil(2));
        let mut it = operands.into_iter();
        while let Some(l) = it.next() {
            paired.push(match it.next() {
                Some(r) => binary(op, l, r)?,
                None => l,
            });
        }
        operands = paired;
    }
    Ok(operands.pop().expect("a chain has an operand"))
}

/// A chain of binary operators as the parser nests it (left-deep:
/// `((a + b) - c) ..`), converted without recursing along the chain, so
/// that generated SQL with thousands of terms does not exhaust the stack.
/// AND, OR and `||` are associative: their chains become balanced trees
/// (100,000 terms nest 17 deep). Other chains keep SQL's left-to-right
/// order and hold at most [`MAX_OPERATOR_CHAIN`] operators.
fn binary_chain(e: &ast::Expr, r: &dyn Resolver) -> Result<Expr> {
    let ast::Expr::BinaryOp { op: top, .. } = e else {
        return convert(e, r);
    };
    let associative = matches!(
        top,
        BinaryOperator::And | BinaryOperator::Or | BinaryOperator::StringConcat
    );
    // Down the left spine: while the same associative operator, or any
    // operator for another chain.
    let (mut ops, mut rights, mut node) = (Vec::new(), Vec::new(), e);
    while let ast::Expr::BinaryOp { left, op, right } = node {
        if associative && op != top {
            break;
        }
        ops.push(op);
        rights.push(right.as_ref());
        node = left;
    }
    if !associative && ops.len() > MAX_OPERATOR_CHAIN {
        return Err(SlothError::unsupported(format!(
            "a chain of {} operators (at most {MAX_OPERATOR_CHAIN} in a row; AND, OR and || chains have no limit)",
            ops.len()
        )));
    }
    let first = convert(node, r)?;
    if associative {
        let mut operands = vec![first];
        for right in rights.into_iter().rev() {
            operands.push(convert(right, r)?);
        }
        return balanced(top, operands);
    }
    let mut acc = first;
    for (op, right) in ops.into_iter().zip(rights).rev() {
        acc = binary(op, acc, convert(right, r)?)?;
    }
    Ok(acc)
}

/// Converts a SQL expression.
pub fn convert(e: &ast::Expr, r: &dyn Resolver) -> Result<Expr> {
    let c = |e: &ast::Expr| convert(e, r);
    Ok(match e {
        ast::Expr::Identifier(i) => col(r.resolve(None, &ident(i))?),
        ast::Expr::CompoundIdentifier(parts) => {
            let names: Vec<String> = parts.iter().map(ident).collect();
            match names.as_slice() {
                [q, n] => col(r.resolve(Some(q), n)?),
                _ => return Err(SlothError::unsupported(format!("column reference '{e}'"))),
            }
        }
        ast::Expr::Value(v) => match &v.value {
            Value::Placeholder(p) => r.parameter(parameter_number(p)?)?,
            other => Expr::Literal(value(other)?),
        },
        ast::Expr::Nested(e) => c(e)?,
        ast::Expr::BinaryOp { .. } => binary_chain(e, r)?,
        ast::Expr::UnaryOp { op, expr } => match op {
            UnaryOperator::Not => c(expr)?.not(),
            UnaryOperator::Minus => match c(expr)? {
                Expr::Literal(ScalarValue::Int64(Some(v))) => lit(-v),
                Expr::Literal(ScalarValue::Decimal128(Some(v), p, s)) => {
                    Expr::Literal(ScalarValue::Decimal128(Some(-v), p, s))
                }
                Expr::Literal(ScalarValue::Float64(Some(v))) => lit(-v),
                e => -e,
            },
            UnaryOperator::Plus => c(expr)?,
            other => return Err(SlothError::unsupported(format!("operator {other}"))),
        },
        ast::Expr::IsNull(e) => c(e)?.is_null(),
        // Two-valued tests of a three-valued boolean: null is neither.
        ast::Expr::IsTrue(e) => coalesce(c(e)?, false),
        ast::Expr::IsNotTrue(e) => coalesce(c(e)?, false).not(),
        ast::Expr::IsFalse(e) => coalesce(c(e)?, true).not(),
        ast::Expr::IsNotFalse(e) => coalesce(c(e)?, true),
        ast::Expr::IsNotNull(e) => c(e)?.is_not_null(),
        ast::Expr::IsUnknown(e) => c(e)?.is_null(),
        ast::Expr::IsNotUnknown(e) => c(e)?.is_not_null(),
        // Null-safe equality: two nulls are not distinct, one null is.
        ast::Expr::IsNotDistinctFrom(a, b) => not_distinct(c(a)?, c(b)?),
        ast::Expr::IsDistinctFrom(a, b) => not_distinct(c(a)?, c(b)?).not(),
        ast::Expr::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let b = c(expr)?.between(c(low)?, c(high)?);
            if *negated { b.not() } else { b }
        }
        ast::Expr::In {
            expr,
            target: ast::InTarget::List(list),
            negated,
            ..
        } => {
            let (expr, list) = (c(expr)?, list.iter().map(c).collect::<Result<Vec<_>>>()?);
            if list.iter().all(|e| matches!(e, Expr::Literal(_))) {
                Expr::InList {
                    expr: Box::new(expr),
                    list,
                    negated: *negated,
                }
            } else {
                // `x IN (a, b + 1)` is `x = a OR x = b + 1`, nulls and all.
                let any = Expr::disjunction(list.into_iter().map(|e| expr.clone().eq(e)))
                    .ok_or_else(|| SlothError::SqlSyntax("IN () needs an item".into()))?;
                if *negated { any.not() } else { any }
            }
        }
        ast::Expr::Like {
            negated,
            expr,
            pattern,
            escape_char,
            any: false,
        } => {
            let escape = escape_char.as_deref().map(c).transpose()?;
            like(*negated, c(expr)?, escaped_pattern(c(pattern)?, escape)?)
        }
        // TRIM([BOTH | LEADING | TRAILING] [FROM] s): spaces only.
        ast::Expr::Trim {
            trim_where,
            trim_what: None,
            expr,
            trim_characters: None,
        } => {
            let f = match trim_where {
                None | Some(ast::TrimWhereField::Both) => functions::TRIM,
                Some(ast::TrimWhereField::Leading) => functions::LTRIM,
                Some(ast::TrimWhereField::Trailing) => functions::RTRIM,
            };
            Expr::Function(f, vec![c(expr)?])
        }
        // OVERLAY(s PLACING r FROM i [FOR n]): PostgreSQL's
        // substring(s, 1, i - 1) || r || substring(s, i + n), n being r's
        // length by default; i and n are constants.
        ast::Expr::Overlay {
            expr,
            overlay_what,
            overlay_from,
            overlay_for,
        } => {
            let constant = |e: &ast::Expr| -> Result<i64> {
                match c(e)? {
                    Expr::Literal(ScalarValue::Int64(Some(v))) => Ok(v),
                    _ => Err(SlothError::unsupported(format!(
                        "OVERLAY with a position or length that is not an integer constant ('{e}')"
                    ))),
                }
            };
            let from = constant(overlay_from)?;
            let placing = c(overlay_what)?;
            let length = match (overlay_for, &placing) {
                (Some(n), _) => constant(n)?,
                (None, Expr::Literal(ScalarValue::Utf8(Some(r)))) => r.chars().count() as i64,
                (None, _) => {
                    return Err(SlothError::unsupported(
                        "OVERLAY of a non-constant text without FOR",
                    ));
                }
            };
            let text = c(expr)?;
            let head = Expr::Function(functions::SUBSTR, vec![text.clone(), lit(1), lit(from - 1)]);
            let tail = Expr::Function(functions::SUBSTR, vec![text, lit(from + length)]);
            let concat = |a, b| Expr::Function(functions::CONCAT, vec![a, b]);
            concat(concat(head, placing), tail)
        }
        // ILIKE: LIKE over both sides lowercased.
        ast::Expr::ILike {
            negated,
            expr,
            pattern,
            escape_char,
            any: false,
        } => {
            let lower = |e: Expr| Expr::Function(functions::LOWER, vec![e]);
            let escape = escape_char.as_deref().map(c).transpose()?;
            let pattern = escaped_pattern(c(pattern)?, escape)?;
            like(*negated, lower(c(expr)?), lower(pattern))
        }
        ast::Expr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            format: None,
            ..
        } => c(expr)?.cast(data_type_of(data_type)?),
        ast::Expr::Ceil { expr, field } | ast::Expr::Floor { expr, field } => {
            if !matches!(
                field,
                ast::CeilFloorKind::DateTimeField(DateTimeField::NoDateTime)
            ) {
                return Err(SlothError::unsupported(format!("'{e}'")));
            }
            let f = match e {
                ast::Expr::Ceil { .. } => functions::CEIL,
                _ => functions::FLOOR,
            };
            Expr::Function(f, vec![c(expr)?])
        }
        ast::Expr::Position { expr, r#in } => {
            Expr::Function(functions::STRPOS, vec![c(r#in)?, c(expr)?])
        }
        ast::Expr::Extract { field, expr, .. } => {
            let f = match field {
                DateTimeField::Year => functions::YEAR,
                DateTimeField::Month => functions::MONTH,
                DateTimeField::Day => functions::DAY,
                DateTimeField::Quarter => functions::QUARTER,
                DateTimeField::Dow | DateTimeField::DayOfWeek => functions::DAY_OF_WEEK,
                DateTimeField::Doy | DateTimeField::DayOfYear => functions::DAY_OF_YEAR,
                other => return Err(SlothError::unsupported(format!("EXTRACT({other})"))),
            };
            Expr::Function(f, vec![c(expr)?])
        }
        ast::Expr::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            let mut args = vec![
                c(expr)?,
                substring_from
                    .as_ref()
                    .map(|e| c(e))
                    .transpose()?
                    .unwrap_or(lit(1)),
            ];
            if let Some(len) = substring_for {
                args.push(c(len)?);
            }
            Expr::Function(functions::SUBSTR, args)
        }
        ast::Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            let operand = operand.as_ref().map(|o| c(o)).transpose()?;
            let when_then = conditions
                .iter()
                .map(|cw| {
                    let cond = c(&cw.condition)?;
                    let cond = match &operand {
                        Some(o) => o.clone().eq(cond),
                        None => cond,
                    };
                    Ok((cond, c(&cw.result)?))
                })
                .collect::<Result<_>>()?;
            Expr::Case {
                when_then,
                otherwise: else_result
                    .as_ref()
                    .map(|e| c(e).map(Box::new))
                    .transpose()?,
            }
        }
        ast::Expr::TypedString(ts) => {
            let s = match &ts.value.value {
                Value::SingleQuotedString(s) => s.clone(),
                other => return Err(SlothError::unsupported(format!("typed literal {other}"))),
            };
            match &ts.data_type {
                ast::DataType::Date => {
                    let d = parse_date32(&s).ok_or_else(|| {
                        SlothError::plan(format!(
                            "invalid date literal '{s}' (expected YYYY-MM-DD)"
                        ))
                    })?;
                    Expr::Literal(ScalarValue::Date32(Some(d)))
                }
                other => lit(s).cast(data_type_of(other)?),
            }
        }
        ast::Expr::Interval(iv) => interval(iv)?,
        ast::Expr::Function(f) => function(f, r)?,
        ast::Expr::Subquery(q) => r.scalar_subquery(q)?,
        ast::Expr::AllOp {
            left,
            compare_op,
            right,
        }
        | ast::Expr::AnyOp {
            left,
            compare_op,
            right,
            ..
        } if matches!(right.as_ref(), ast::Expr::Subquery(_)) => {
            let ast::Expr::Subquery(q) = right.as_ref() else {
                unreachable!("matched above")
            };
            let all = matches!(e, ast::Expr::AllOp { .. });
            match (compare_op, all) {
                // `x = ANY (q)` is `x IN (q)` and `x <> ALL (q)` is `x NOT
                // IN (q)`, nulls included.
                (BinaryOperator::Eq, false) | (BinaryOperator::NotEq, true) => r
                    .subquery_predicate(&ast::Expr::In {
                        expr: left.clone(),
                        target: ast::InTarget::Subquery(q.clone()),
                        negated: all,
                        global: false,
                    })?,
                _ => r.quantified_subquery(c(left)?, compare_op, all, q)?,
            }
        }
        ast::Expr::Exists { .. } | ast::Expr::In { .. } => r.subquery_predicate(e)?,
        other => return Err(SlothError::unsupported(format!("expression '{other}'"))),
    })
}

/// The window `WINDOW name AS (..)` defines, with what it inherits.
fn named_window(name: &ast::Ident, r: &dyn Resolver, depth: usize) -> Result<ast::WindowSpec> {
    if depth > 64 {
        return Err(SlothError::plan(format!(
            "window '{name}' is defined in a cycle"
        )));
    }
    match r.named_window(&ident(name)) {
        Some(ast::NamedWindowExpr::WindowSpec(spec)) => completed_window(spec, r, depth + 1),
        Some(ast::NamedWindowExpr::NamedWindow(other)) => named_window(&other, r, depth + 1),
        None => Err(SlothError::plan(format!(
            "unknown window '{name}' (define it with WINDOW {name} AS (..))"
        ))),
    }
}

/// `OVER (w ORDER BY ..)`: the named window's partitioning, its order
/// unless this one gives one, and this one's frame if it has one.
fn completed_window(
    spec: ast::WindowSpec,
    r: &dyn Resolver,
    depth: usize,
) -> Result<ast::WindowSpec> {
    let Some(base) = &spec.window_name else {
        return Ok(spec);
    };
    let base = named_window(base, r, depth)?;
    if !spec.partition_by.is_empty() {
        return Err(SlothError::plan(
            "a window that names another cannot add PARTITION BY",
        ));
    }
    Ok(ast::WindowSpec {
        window_name: None,
        partition_by: base.partition_by,
        order_by: if spec.order_by.is_empty() {
            base.order_by
        } else {
            spec.order_by
        },
        window_frame: spec.window_frame.or(base.window_frame),
    })
}

/// The number of a `$n` placeholder; other forms (`?`, `:name`) are
/// refused by name.
fn parameter_number(p: &str) -> Result<usize> {
    p.strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .filter(|&n: &usize| n > 0)
        .ok_or_else(|| {
            SlothError::unsupported(format!("parameter '{p}' (parameters are $1, $2, ..)"))
        })
}

fn value(v: &Value) -> Result<ScalarValue> {
    Ok(match v {
        Value::Number(s, _) => crate::expr::number(s)?,
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
            ScalarValue::Utf8(Some(s.clone()))
        }
        Value::Boolean(b) => ScalarValue::Boolean(Some(*b)),
        Value::Null => ScalarValue::Null,
        other => return Err(SlothError::unsupported(format!("literal {other}"))),
    })
}

fn interval(iv: &ast::Interval) -> Result<Expr> {
    let text = match iv.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => s.clone(),
            Value::Number(n, _) => n.clone(),
            other => return Err(SlothError::unsupported(format!("interval value {other}"))),
        },
        other => return Err(SlothError::unsupported(format!("interval value {other}"))),
    };
    if let Some(last) = &iv.last_field {
        return Err(SlothError::unsupported(format!(
            "interval ranges (TO {last})"
        )));
    }
    let invalid = || {
        SlothError::plan(format!(
            "invalid interval '{text}' (expected INTERVAL 'N' UNIT or INTERVAL 'N unit [N unit ...]')"
        ))
    };
    let number = |w: &str| w.parse::<i32>().map_err(|_| invalid());
    // `INTERVAL '3' MONTH`, or every part spelled out: '1 year 2 months'.
    let words: Vec<&str> = text.split_whitespace().collect();
    let parts: Vec<(i32, String)> = match (&iv.leading_field, words.as_slice()) {
        (Some(field), [n]) => vec![(number(n)?, field.to_string())],
        (None, words) if !words.is_empty() && words.len() % 2 == 0 => words
            .chunks(2)
            .map(|p| Ok((number(p[0])?, p[1].to_string())))
            .collect::<Result<_>>()?,
        _ => return Err(invalid()),
    };
    let (mut months, mut days) = (0i32, 0i32);
    for (n, unit) in parts {
        let (m, d) = match unit.to_ascii_lowercase().trim_end_matches('s') {
            "year" => (12 * n, 0),
            "month" => (n, 0),
            "week" => (0, 7 * n),
            "day" => (0, n),
            other => return Err(SlothError::unsupported(format!("interval unit '{other}'"))),
        };
        months += m;
        days += d;
    }
    Ok(Expr::Literal(ScalarValue::Interval {
        months,
        days,
        nanos: 0,
    }))
}

/// SQL type names → arrow types.
pub fn data_type_of(t: &ast::DataType) -> Result<DataType> {
    use ast::DataType as T;
    Ok(match t {
        T::Boolean | T::Bool => DataType::Boolean,
        T::TinyInt(_) => DataType::Int8,
        T::SmallInt(_) => DataType::Int16,
        T::Int(_) | T::Integer(_) | T::Int4(_) => DataType::Int32,
        T::BigInt(_) | T::Int8(_) | T::Int64 => DataType::Int64,
        T::Real | T::Float4 | T::Float32 => DataType::Float32,
        T::Double(_) | T::DoublePrecision | T::Float8 | T::Float64 | T::Float(_) => {
            DataType::Float64
        }
        T::Decimal(info) | T::Numeric(info) => match info {
            ast::ExactNumberInfo::PrecisionAndScale(p, s) => {
                DataType::Decimal128(*p as u8, *s as i8)
            }
            ast::ExactNumberInfo::Precision(p) => DataType::Decimal128(*p as u8, 0),
            ast::ExactNumberInfo::None => DataType::Decimal128(38, 10),
        },
        T::Varchar(_) | T::Char(_) | T::Text | T::String(_) | T::CharVarying(_) => DataType::Utf8,
        T::Date => DataType::Date32,
        T::Timestamp(..) => DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None),
        // Unsigned integers: MySQL's `.. UNSIGNED`, DuckDB's `U..` names.
        T::TinyIntUnsigned(_) | T::UTinyInt | T::UInt8 => DataType::UInt8,
        T::SmallIntUnsigned(_) | T::USmallInt | T::UInt16 => DataType::UInt16,
        T::IntUnsigned(_) | T::IntegerUnsigned(_) | T::Int4Unsigned(_) | T::UInt32 => {
            DataType::UInt32
        }
        T::BigIntUnsigned(_) | T::Int8Unsigned(_) | T::UBigInt | T::UInt64 => DataType::UInt64,
        T::Int16 => DataType::Int16,
        T::Int32 => DataType::Int32,
        // 128-bit integers as exact decimals of 38 digits.
        T::HugeInt => DataType::Decimal128(38, 0),
        T::Custom(name, modifiers) if modifiers.is_empty() => {
            match name.to_string().to_ascii_lowercase().as_str() {
                "utinyint" => DataType::UInt8,
                "usmallint" => DataType::UInt16,
                "uinteger" | "uint" => DataType::UInt32,
                "ubigint" => DataType::UInt64,
                "hugeint" => DataType::Decimal128(38, 0),
                other => return Err(SlothError::unsupported(format!("type {other}"))),
            }
        }
        other => return Err(SlothError::unsupported(format!("type {other}"))),
    })
}

/// A window's PARTITION BY, ORDER BY, and frame (`None`: SQL's default
/// frame).
type WindowSpecParts = (Vec<Expr>, Vec<SortKey>, Option<WindowFrame>);

/// A window's PARTITION BY, ORDER BY and frame.
fn window_spec(over: &ast::WindowType, r: &dyn Resolver) -> Result<WindowSpecParts> {
    let spec = match over {
        ast::WindowType::WindowSpec(spec) => completed_window(spec.clone(), r, 0)?,
        ast::WindowType::NamedWindow(name) => named_window(name, r, 0)?,
    };
    let spec = &spec;
    let frame = spec
        .window_frame
        .as_ref()
        .map(|f| window_frame(f, r))
        .transpose()?
        .flatten();
    let partition_by = spec
        .partition_by
        .iter()
        .map(|e| convert(e, r))
        .collect::<Result<_>>()?;
    let order_by: Vec<SortKey> = spec
        .order_by
        .iter()
        .map(|o| {
            let descending = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            let nulls_last = o.options.nulls_first.map_or(!descending, |first| !first);
            Ok(SortKey {
                expr: convert(&o.expr, r)?,
                descending,
                nulls_last,
            })
        })
        .collect::<Result<_>>()?;
    if let Some(frame) = &frame {
        crate::expr::check_frame(frame, &order_by)?;
    }
    Ok((partition_by, order_by, frame))
}

/// A window frame; `None` for SQL's default (`RANGE BETWEEN UNBOUNDED
/// PRECEDING AND CURRENT ROW`, or the same in GROUPS).
fn window_frame(frame: &ast::WindowFrame, r: &dyn Resolver) -> Result<Option<WindowFrame>> {
    use ast::WindowFrameBound as B;
    let units = match frame.units {
        ast::WindowFrameUnits::Rows => FrameUnits::Rows,
        ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        ast::WindowFrameUnits::Range => FrameUnits::Range,
    };
    // The distance of an offset, before its direction.
    let distance = |e: &ast::Expr| -> Result<FrameOffset> {
        let bad = |what: &str| {
            SlothError::plan(format!(
                "a {units} frame's offset must be {what}, not '{e}'"
            ))
        };
        match (units, convert(e, r)?) {
            (_, Expr::Literal(ScalarValue::Int64(Some(n)))) if n >= 0 => {
                Ok(FrameOffset::Count(n as isize))
            }
            (
                FrameUnits::Range,
                Expr::Literal(v @ (ScalarValue::Float64(_) | ScalarValue::Decimal128(..))),
            ) => {
                let number = match v {
                    ScalarValue::Float64(x) => x,
                    ScalarValue::Decimal128(d, _, scale) => {
                        d.map(|d| d as f64 / 10f64.powi(i32::from(scale)))
                    }
                    _ => None,
                };
                match number {
                    Some(x) if x >= 0.0 && x.is_finite() => Ok(FrameOffset::Value(x)),
                    _ => Err(bad("a non-negative number")),
                }
            }
            (
                FrameUnits::Range,
                Expr::Literal(ScalarValue::Interval {
                    months,
                    days,
                    nanos,
                }),
            ) if months >= 0 && days >= 0 && nanos >= 0 => Ok(FrameOffset::Interval {
                months,
                days,
                nanos,
            }),
            (FrameUnits::Range, _) => Err(bad("a non-negative number or interval constant")),
            _ => Err(bad("a non-negative integer constant")),
        }
    };
    let preceding = |o: FrameOffset| match o {
        FrameOffset::Count(n) => FrameOffset::Count(-n),
        FrameOffset::Value(v) => FrameOffset::Value(-v),
        FrameOffset::Interval {
            months,
            days,
            nanos,
        } => FrameOffset::Interval {
            months: -months,
            days: -days,
            nanos: -nanos,
        },
    };
    // `None` is UNBOUNDED.
    let offset = |bound: &B, is_start: bool| -> Result<Option<FrameOffset>> {
        Ok(match bound {
            B::CurrentRow => Some(FrameOffset::Count(0)),
            B::Preceding(Some(e)) => Some(preceding(distance(e)?)),
            B::Following(Some(e)) => Some(distance(e)?),
            B::Preceding(None) if is_start => None,
            B::Following(None) if !is_start => None,
            other => {
                return Err(SlothError::plan(format!(
                    "a window frame cannot {} at {other}",
                    if is_start { "start" } else { "end" }
                )));
            }
        })
    };
    let start = offset(&frame.start_bound, true)?;
    let end = match &frame.end_bound {
        Some(b) => offset(b, false)?,
        None => Some(FrameOffset::Count(0)),
    };
    let frame = WindowFrame { units, start, end };
    let is_default =
        units != FrameUnits::Rows && start.is_none() && end == Some(FrameOffset::Count(0));
    Ok((!is_default).then_some(frame))
}

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

fn function(f: &ast::Function, r: &dyn Resolver) -> Result<Expr> {
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
    if let Some(over) = &f.over {
        if f.filter.is_some() {
            return Err(SlothError::unsupported("FILTER on a window function"));
        }
        let ranking = match name.as_str() {
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
            return Ok(Expr::over(func, partition_by, order_by));
        }
        if matches!(name.as_str(), "lag" | "lead") {
            return shift_window(&name, f, list, over, r);
        }
        if matches!(
            name.as_str(),
            "first_value" | "last_value" | "nth_value" | "first" | "last"
        ) && list
            .clauses
            .iter()
            .all(|c| matches!(c, ast::FunctionArgumentClause::IgnoreOrRespectNulls(_)))
        {
            return value_window(&name, f, list, over, r);
        }
    }
    if f.null_treatment.is_some() {
        return Err(SlothError::unsupported(format!(
            "IGNORE/RESPECT NULLS in '{f}'"
        )));
    }
    if !matches!(f.parameters, FunctionArguments::None) {
        return Err(SlothError::unsupported(format!("function call '{f}'")));
    }
    // `first(x ORDER BY key)`: one key, for first and last only.
    let mut order: Option<SortKey> = None;
    for clause in &list.clauses {
        match clause {
            ast::FunctionArgumentClause::OrderBy(keys)
                if keys.len() == 1
                    && matches!(
                        name.as_str(),
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
    let agg = |func: AggFunc, args: Vec<Expr>| Expr::Agg {
        func,
        args,
        distinct,
    };
    let scalar = |func: ScalarFunc, args: Vec<Expr>| Expr::Function(func, args);
    let call = match name.as_str() {
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
            let [x] = arguments::<1>(&name, args)?;
            let n = || agg(AggFunc::Count, vec![x.clone()]).cast(DataType::Float64);
            let scaled = agg(AggFunc::Var, vec![x.clone()]) * (n() - lit(1.0)) / n();
            let var_pop = when(n().eq(lit(1.0))).then(lit(0.0)).otherwise(scaled);
            match name.as_str() {
                "stddev_pop" => var_pop.math(crate::expr::MathFunc::Sqrt),
                _ => var_pop,
            }
        }
        // bool_and / bool_or over booleans: the least / greatest as 0 or
        // 1, null for a group of nulls only.
        "bool_and" | "every" | "bool_or" => {
            let [b] = arguments::<1>(&name, args)?;
            let func = if name == "bool_or" {
                AggFunc::Max
            } else {
                AggFunc::Min
            };
            agg(func, vec![b.cast(DataType::Int64)]).eq(lit(1))
        }
        "median" => agg(AggFunc::Median, args),
        // The pairs regr_* take: rows where both are non-null.
        "regr_count" => count_all_present(Vec::from(arguments::<2>(&name, args)?)),
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
            let [x] = arguments::<1>(&name, args)?;
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
            let sep = match (sep, name.as_str()) {
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

/// `a IS NOT DISTINCT FROM b`: equal, or both null (never null itself).
fn not_distinct(a: Expr, b: Expr) -> Expr {
    let both_null = a.clone().is_null().and(b.clone().is_null());
    Expr::Function(functions::COALESCE, vec![a.eq(b), both_null])
}

/// A LIKE pattern with `ESCAPE 'x'` rewritten to the backslash escapes
/// sloth's LIKE reads: `x%` becomes `\%`, and a plain backslash `\\`.
fn escaped_pattern(pattern: Expr, escape: Option<Expr>) -> Result<Expr> {
    let Some(escape) = escape else {
        return Ok(pattern);
    };
    let text = |e: &Expr| match e {
        Expr::Literal(ScalarValue::Utf8(Some(s))) => Some(s.clone()),
        _ => None,
    };
    let esc = text(&escape).unwrap_or_default();
    let mut esc = esc.chars();
    let (Some(esc), None) = (esc.next(), esc.next()) else {
        return Err(SlothError::plan(
            "LIKE ... ESCAPE takes a one-character constant",
        ));
    };
    let pattern = text(&pattern).ok_or_else(|| {
        SlothError::unsupported("LIKE ... ESCAPE with a pattern that is not a constant")
    })?;
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(ch) = chars.next() {
        if ch == esc {
            let next = chars.next().ok_or_else(|| {
                SlothError::plan(format!(
                    "LIKE pattern '{pattern}' ends with its escape character"
                ))
            })?;
            out.push('\\');
            out.push(next);
        } else if ch == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(ch);
        }
    }
    Ok(Expr::Literal(ScalarValue::Utf8(Some(out))))
}

/// `s [NOT] LIKE pattern`.
fn like(negated: bool, s: Expr, pattern: Expr) -> Expr {
    let f = if negated {
        functions::NOT_LIKE
    } else {
        functions::LIKE
    };
    Expr::Function(f, vec![s, pattern])
}

fn coalesce(e: Expr, otherwise: bool) -> Expr {
    Expr::Function(functions::COALESCE, vec![e, lit(otherwise)])
}

/// `lag(x [, n])` / `lead(x [, n])`, with an ORDER BY to give the rows an
/// order.
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
