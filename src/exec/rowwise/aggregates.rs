//! Per-group aggregate state of the row-wise executor: one value at a time.

use std::collections::HashSet;

use super::value::Value;
use crate::error::Result;
use crate::expr::{AggFunc, BitOp, Bivariate, KeyOrder};
use crate::kernels::accumulators::{CoMoments, sum_overflow};
use arrow::datatypes::DataType;

/// The state of one aggregate for one group.
#[derive(Debug, Clone)]
pub enum RowAcc {
    /// count(*) / count(x) / count(distinct) / n_unique
    Count {
        n: i64,
        star: bool,
        distinct: Option<HashSet<Value>>,
        nulls_count: bool,
        saw_null: bool,
    },
    /// sum of ints (an overflow is an error), floats, or decimals at the input's scale
    Sum(Option<Value>),
    /// mean: sum and count
    Mean { sum: Option<Value>, n: i64 },
    /// min / max
    Extreme { max: bool, best: Option<Value> },
    /// first / last value in input order
    Pick { first: bool, value: Option<Value> },
    /// Welford's count, mean, M2
    Moments {
        std: bool,
        n: f64,
        mean: f64,
        m2: f64,
    },
    /// all values, for median / quantile
    Values { q: f64, values: Vec<f64> },
    /// `agg(DISTINCT x)` beyond count: `inner` sees each non-null value once
    Distinct {
        seen: HashSet<Value>,
        inner: Box<RowAcc>,
    },
    /// first(x ORDER BY key), min_by, max_by: the best key so far and its x
    FirstBy {
        order: KeyOrder,
        best: Option<(Value, Value)>,
    },
    /// string_agg: the separator, and each value as text with its key
    StringAgg {
        order: Option<KeyOrder>,
        separator: Option<Value>,
        items: Vec<(Value, Value)>,
    },
    /// co-moments for corr, covar_* and regr_*
    Bivariate { stat: Bivariate, moments: CoMoments },
    /// bit_and / bit_or / bit_xor: the bits so far
    Bitwise { op: BitOp, bits: Option<i64> },
}

impl RowAcc {
    /// Fresh state for `func`.
    pub fn new(func: AggFunc, distinct: bool) -> RowAcc {
        if distinct && !matches!(func, AggFunc::Count | AggFunc::CountStar | AggFunc::NUnique) {
            return RowAcc::Distinct {
                seen: HashSet::new(),
                inner: Box::new(RowAcc::new(func, false)),
            };
        }
        match func {
            AggFunc::CountStar => RowAcc::Count {
                n: 0,
                star: true,
                distinct: None,
                nulls_count: false,
                saw_null: false,
            },
            AggFunc::Count => RowAcc::Count {
                n: 0,
                star: false,
                distinct: distinct.then(HashSet::new),
                nulls_count: false,
                saw_null: false,
            },
            AggFunc::NUnique => RowAcc::Count {
                n: 0,
                star: false,
                distinct: Some(HashSet::new()),
                nulls_count: true,
                saw_null: false,
            },
            AggFunc::Sum => RowAcc::Sum(None),
            AggFunc::Mean => RowAcc::Mean { sum: None, n: 0 },
            AggFunc::Min | AggFunc::Max => RowAcc::Extreme {
                max: func == AggFunc::Max,
                best: None,
            },
            AggFunc::First | AggFunc::Last => RowAcc::Pick {
                first: func == AggFunc::First,
                value: None,
            },
            AggFunc::Std | AggFunc::Var => RowAcc::Moments {
                std: func == AggFunc::Std,
                n: 0.0,
                mean: 0.0,
                m2: 0.0,
            },
            AggFunc::Median => RowAcc::Values {
                q: 0.5,
                values: vec![],
            },
            AggFunc::Quantile(q) => RowAcc::Values { q, values: vec![] },
            AggFunc::FirstBy(order) => RowAcc::FirstBy { order, best: None },
            // Refused before any state is made (AggregateOp::next).
            AggFunc::ArrayAgg(order) | AggFunc::StringAgg(order) => RowAcc::StringAgg {
                order,
                separator: None,
                items: vec![],
            },
            AggFunc::Bivariate(stat) => RowAcc::Bivariate {
                stat,
                moments: CoMoments::default(),
            },
            AggFunc::Bitwise(op) => RowAcc::Bitwise { op, bits: None },
        }
    }

    /// Adds one row's argument values.
    pub fn update(&mut self, args: &[Value]) -> Result<()> {
        let v = args.first().cloned().unwrap_or(Value::Null);
        let averaging = matches!(self, RowAcc::Mean { .. });
        match self {
            RowAcc::Count {
                n,
                star,
                distinct,
                nulls_count,
                saw_null,
            } => {
                if *star {
                    *n += 1;
                } else if v.is_null() {
                    *saw_null |= *nulls_count;
                } else if let Some(set) = distinct {
                    set.insert(v);
                } else {
                    *n += 1;
                }
            }
            RowAcc::Sum(sum) | RowAcc::Mean { sum, .. } => {
                if !v.is_null() {
                    *sum = Some(match (sum.take(), v) {
                        (None, x) => x,
                        (Some(Value::Int(a)), Value::Int(b)) => match a.checked_add(b) {
                            Some(s) => Value::Int(s),
                            // avg() goes on in floats, as the columnar
                            // executor's does; sum() never wraps.
                            None if averaging => Value::Float(a as f64 + b as f64),
                            None => return Err(sum_overflow(&DataType::Int64)),
                        },
                        (Some(Value::Decimal(a, s)), Value::Decimal(b, _)) => {
                            Value::Decimal(a.wrapping_add(b), s)
                        }
                        (Some(a), b) => {
                            Value::Float(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0))
                        }
                    });
                    if let RowAcc::Mean { n, .. } = self {
                        *n += 1;
                    }
                }
            }
            RowAcc::Distinct { seen, inner } => {
                if !v.is_null() && seen.insert(v) {
                    inner.update(args)?;
                }
            }
            RowAcc::FirstBy { order, best } => {
                let key = args.get(1).cloned().unwrap_or(Value::Null);
                if (key.is_null() || v.is_null()) && order.skip_nulls {
                    return Ok(());
                }
                if best
                    .as_ref()
                    .is_none_or(|(k, _)| key_cmp(&key, k, order).is_lt())
                {
                    *best = Some((key, v));
                }
            }
            RowAcc::StringAgg {
                separator, items, ..
            } => {
                let sep = args.get(1).cloned().unwrap_or(Value::Null);
                if separator.is_none() && !sep.is_null() {
                    *separator = Some(sep);
                }
                if !v.is_null() {
                    items.push((args.get(2).cloned().unwrap_or(Value::Null), v));
                }
            }
            RowAcc::Extreme { max, best } => {
                if !v.is_null() {
                    let better = match best {
                        None => true,
                        Some(b) => {
                            let ord = v.sort_cmp(b, true);
                            if *max { ord.is_gt() } else { ord.is_lt() }
                        }
                    };
                    if better {
                        *best = Some(v);
                    }
                }
            }
            RowAcc::Pick { first, value } => {
                if !*first || value.is_none() {
                    *value = Some(v);
                }
            }
            RowAcc::Moments { n, mean, m2, .. } => {
                if let Some(x) = v.as_f64() {
                    *n += 1.0;
                    let d = x - *mean;
                    *mean += d / *n;
                    *m2 += d * (x - *mean);
                }
            }
            RowAcc::Values { values, .. } => {
                if let Some(x) = v.as_f64() {
                    values.push(x);
                }
            }
            RowAcc::Bivariate { moments, .. } => {
                let x = args.get(1).and_then(|a| a.as_f64());
                if let (Some(y), Some(x)) = (v.as_f64(), x) {
                    moments.push(y, x);
                }
            }
            RowAcc::Bitwise { op, bits } => {
                if let Value::Int(v) = v {
                    *bits = Some(match (*bits, op) {
                        (None, _) => v,
                        (Some(a), BitOp::And) => a & v,
                        (Some(a), BitOp::Or) => a | v,
                        (Some(a), BitOp::Xor) => a ^ v,
                    });
                }
            }
        }
        Ok(())
    }

    /// The final value.
    pub fn finish(&self) -> Value {
        match self {
            RowAcc::Count {
                n,
                distinct,
                nulls_count,
                saw_null,
                ..
            } => {
                let distinct_n = distinct.as_ref().map(|s| s.len() as i64);
                Value::Int(distinct_n.unwrap_or(*n) + (*nulls_count && *saw_null) as i64)
            }
            RowAcc::Sum(sum) => sum.clone().unwrap_or(Value::Null),
            RowAcc::Mean { sum, n } => match sum {
                None => Value::Null,
                Some(Value::Decimal(v, s)) => {
                    Value::Float(*v as f64 / 10f64.powi(*s as i32) / *n as f64)
                }
                Some(v) => Value::Float(v.as_f64().unwrap_or(0.0) / *n as f64),
            },
            RowAcc::Distinct { inner, .. } => inner.finish(),
            RowAcc::StringAgg {
                order,
                separator,
                items,
            } => {
                if items.is_empty() {
                    return Value::Null;
                }
                let mut items = items.clone();
                if let Some(order) = order {
                    items.sort_by(|a, b| key_cmp(&a.0, &b.0, order));
                }
                let sep = match separator {
                    Some(Value::Str(s)) => s.to_string(),
                    _ => String::new(),
                };
                let texts: Vec<&str> = items
                    .iter()
                    .map(|(_, v)| match v {
                        Value::Str(s) => s.as_ref(),
                        _ => "",
                    })
                    .collect();
                Value::Str(texts.join(&sep).into())
            }
            RowAcc::FirstBy { best, .. } => best.as_ref().map_or(Value::Null, |(_, v)| v.clone()),
            RowAcc::Extreme { best, .. } => best.clone().unwrap_or(Value::Null),
            RowAcc::Pick { value, .. } => value.clone().unwrap_or(Value::Null),
            RowAcc::Moments { std, n, m2, .. } => {
                if *n > 1.0 {
                    let var = m2 / (n - 1.0);
                    Value::Float(if *std { var.sqrt() } else { var })
                } else {
                    Value::Null
                }
            }
            RowAcc::Values { q, values } => {
                let mut v = values.clone();
                crate::kernels::accumulators::quantile(&mut v, *q).map_or(Value::Null, Value::Float)
            }
            RowAcc::Bivariate { stat, moments } => {
                moments.finish(*stat).map_or(Value::Null, Value::Float)
            }
            RowAcc::Bitwise { bits, .. } => bits.map_or(Value::Null, Value::Int),
        }
    }
}

/// The order of two keys under `order`: nulls where it puts them, others
/// by value, reversed when descending.
fn key_cmp(a: &Value, b: &Value, order: &KeyOrder) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    match (a.is_null(), b.is_null()) {
        (true, true) => Equal,
        (true, false) => {
            if order.nulls_first {
                Less
            } else {
                Greater
            }
        }
        (false, true) => {
            if order.nulls_first {
                Greater
            } else {
                Less
            }
        }
        _ => {
            let o = a.sort_cmp(b, true);
            if order.descending { o.reverse() } else { o }
        }
    }
}
