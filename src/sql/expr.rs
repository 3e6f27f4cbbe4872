//! SQL expressions → [`Expr`].

use arrow::datatypes::DataType;
use sqlparser::ast::{self, BinaryOperator, CastKind, DateTimeField, UnaryOperator, Value};

use crate::error::{Result, SlothError};
use crate::expr::{
    Expr, FrameOffset, FrameUnits, ScalarValue, SortKey, WindowFrame, col, lit, parse_date32,
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
        ast::Expr::Function(f) => super::function_call::function(f, r)?,
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
pub(super) fn window_spec(over: &ast::WindowType, r: &dyn Resolver) -> Result<WindowSpecParts> {
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
