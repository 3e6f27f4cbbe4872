//! sloth's expressions as DataFusion's.

use arrow::datatypes::DataType;
use datafusion::common::ScalarValue as DfScalar;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::expr::{Case, Like, WindowFunction};
use datafusion::logical_expr::{
    BinaryExpr, Expr as DfExpr, ExprFunctionExt, Operator as DfOp, WindowFrame, WindowFrameBound,
    WindowFrameUnits, cast, in_list, lit,
};

use super::df_error;
use super::plan::{Scope, Translator};
use crate::error::{Result, SlothError};
use crate::expr::{
    AggFunc, Expr, FrameOffset, FramePick, FrameUnits, Operator, SortKey, WindowFunc,
};
use crate::functions;

fn untranslatable(what: impl std::fmt::Display) -> SlothError {
    SlothError::unsupported(format!("{what} has no DataFusion translation"))
}

impl Translator<'_> {
    /// `e`, written over `scope.sloth`, over `scope.df`.
    pub(super) fn expr(&mut self, e: &Expr, scope: &Scope) -> Result<DfExpr> {
        let mut sub = |e: &Expr| self.expr(e, scope);
        Ok(match e {
            Expr::Column(name) => scope.column(name)?,
            Expr::Literal(value) => {
                let array = value.to_array()?;
                DfExpr::Literal(DfScalar::try_from_array(&array, 0).map_err(df_error)?, None)
            }
            Expr::Binary { left, op, right } => DfExpr::BinaryExpr(BinaryExpr::new(
                Box::new(sub(left)?),
                operator(*op),
                Box::new(sub(right)?),
            )),
            Expr::Not(x) => DfExpr::Not(Box::new(sub(x)?)),
            Expr::Negative(x) => DfExpr::Negative(Box::new(sub(x)?)),
            Expr::IsNull(x) => DfExpr::IsNull(Box::new(sub(x)?)),
            Expr::IsNotNull(x) => DfExpr::IsNotNull(Box::new(sub(x)?)),
            Expr::Cast(x, t) => cast(sub(x)?, t.clone()),
            Expr::Alias(x, name) => sub(x)?.alias(name),
            Expr::Case {
                when_then,
                otherwise,
            } => DfExpr::Case(Case {
                expr: None,
                when_then_expr: when_then
                    .iter()
                    .map(|(w, t)| Ok((Box::new(sub(w)?), Box::new(sub(t)?))))
                    .collect::<Result<_>>()?,
                else_expr: otherwise
                    .as_ref()
                    .map(|o| sub(o).map(Box::new))
                    .transpose()?,
            }),
            Expr::InList {
                expr,
                list,
                negated,
            } => in_list(
                sub(expr)?,
                list.iter().map(&mut sub).collect::<Result<_>>()?,
                *negated,
            ),
            Expr::Function(f, args) => {
                let args = args.iter().map(&mut sub).collect::<Result<Vec<_>>>()?;
                self.function(*f, args)?
            }
            Expr::Agg {
                func,
                args,
                distinct,
            } => {
                let args = args.iter().map(&mut sub).collect::<Result<Vec<_>>>()?;
                self.aggregate(*func, args, *distinct)?
            }
            Expr::Window {
                func,
                args,
                partition_by,
                order_by,
            } => {
                let args = args.iter().map(&mut sub).collect::<Result<Vec<_>>>()?;
                let partition_by = partition_by.iter().map(&mut sub).collect::<Result<_>>()?;
                let order_by = self.sort_keys(order_by, scope)?;
                self.window(*func, args, partition_by, order_by)?
            }
            Expr::Wildcard => return Err(untranslatable("'*' left in a plan")),
        })
    }

    fn sort_keys(
        &mut self,
        keys: &[SortKey],
        scope: &Scope,
    ) -> Result<Vec<datafusion::logical_expr::SortExpr>> {
        keys.iter()
            .map(|k| {
                Ok(self
                    .expr(&k.expr, scope)?
                    .sort(!k.descending, !k.nulls_last))
            })
            .collect()
    }

    /// A scalar function: LIKE as DataFusion's operator, every other one
    /// as sloth's own function ([`super::udf`]).
    fn function(&self, f: crate::expr::ScalarFunc, mut args: Vec<DfExpr>) -> Result<DfExpr> {
        if f == functions::LIKE || f == functions::NOT_LIKE {
            let pattern = args
                .pop()
                .ok_or_else(|| untranslatable("LIKE without a pattern"))?;
            let value = args
                .pop()
                .ok_or_else(|| untranslatable("LIKE without a value"))?;
            return Ok(DfExpr::Like(Like::new(
                f == functions::NOT_LIKE,
                Box::new(value),
                Box::new(pattern),
                None,
                false,
            )));
        }
        Ok(super::udf::udf(f).call(args))
    }

    /// DataFusion's aggregate function `name`.
    fn udaf(&self, name: &str) -> Result<std::sync::Arc<datafusion::logical_expr::AggregateUDF>> {
        self.ctx.udaf(name).map_err(df_error)
    }

    /// An aggregate call.
    fn aggregate(&self, func: AggFunc, mut args: Vec<DfExpr>, distinct: bool) -> Result<DfExpr> {
        let (name, extra): (&str, Option<DfExpr>) = match func {
            AggFunc::Sum => ("sum", None),
            // sloth's mean is a Float64 whatever its input (DataFusion's
            // mean of decimals is a decimal of scale 6).
            AggFunc::Mean => {
                args = args
                    .into_iter()
                    .map(|a| cast(a, DataType::Float64))
                    .collect();
                ("avg", None)
            }
            AggFunc::Min => ("min", None),
            AggFunc::Max => ("max", None),
            AggFunc::Count => ("count", None),
            AggFunc::CountStar => {
                args = vec![lit(1i64)];
                ("count", None)
            }
            AggFunc::NUnique => {
                let call = self.udaf("count")?.call(args);
                return call.distinct().build().map_err(df_error);
            }
            AggFunc::Std => ("stddev", None),
            AggFunc::Var => ("var_samp", None),
            AggFunc::Median => ("median", None),
            AggFunc::Bivariate(b) => (b.name(), None),
            AggFunc::Bitwise(_) => (func.name(), None),
            // Any row's value where a group has one (a scalar subquery's
            // value); like sloth's on parallel input, an arbitrary one else.
            AggFunc::First => ("first_value", None),
            AggFunc::Last => ("last_value", None),
            // Orders or interpolations DataFusion does not share.
            AggFunc::ArrayAgg(None) => ("array_agg", None),
            other @ (AggFunc::Quantile(_)
            | AggFunc::FirstBy(_)
            | AggFunc::StringAgg(_)
            | AggFunc::ArrayAgg(Some(_))) => {
                return Err(untranslatable(format!("aggregate {other:?}")));
            }
        };
        args.extend(extra);
        let call = self.udaf(name)?.call(args);
        match distinct {
            true => call.distinct().build().map_err(df_error),
            false => Ok(call),
        }
    }

    /// A window function over `partition_by`, ordered by `order_by`.
    fn window(
        &self,
        func: WindowFunc,
        args: Vec<DfExpr>,
        partition_by: Vec<DfExpr>,
        order_by: Vec<datafusion::logical_expr::SortExpr>,
    ) -> Result<DfExpr> {
        let udwf = |name: &str| self.ctx.udwf(name).map_err(df_error);
        let (call, frame) = match func {
            WindowFunc::RowNumber => (
                DfExpr::from(WindowFunction::new(udwf("row_number")?, args)),
                None,
            ),
            WindowFunc::Rank => (DfExpr::from(WindowFunction::new(udwf("rank")?, args)), None),
            WindowFunc::DenseRank | WindowFunc::PercentRank | WindowFunc::CumeDist => (
                DfExpr::from(WindowFunction::new(udwf(func.name())?, args)),
                None,
            ),
            WindowFunc::Ntile(n) => {
                let call = WindowFunction::new(udwf("ntile")?, vec![lit(n as i64)]);
                (DfExpr::from(call), None)
            }
            WindowFunc::Lag(n) | WindowFunc::Lead(n) => {
                let name = if matches!(func, WindowFunc::Lag(_)) {
                    "lag"
                } else {
                    "lead"
                };
                let mut args = args;
                args.push(lit(n as i64));
                (DfExpr::from(WindowFunction::new(udwf(name)?, args)), None)
            }
            WindowFunc::Aggregate(agg) => {
                let whole = crate::expr::WindowFrame::rows(None, None);
                (self.window_aggregate(agg, args)?, Some(whole))
            }
            WindowFunc::FramedAggregate(agg, frame) => {
                (self.window_aggregate(agg, args)?, Some(frame))
            }
            // Without a ROWS frame, DataFusion's default frame is SQL's.
            WindowFunc::Value(FramePick::FirstPresent | FramePick::LastPresent, _)
            | WindowFunc::ShiftPresent(_) => {
                return Err(untranslatable(format!("{} IGNORE NULLS", func.name())));
            }
            WindowFunc::Value(pick, frame) => {
                let mut args = args;
                if let FramePick::Nth(n) = pick {
                    args.push(lit(n as i64));
                }
                let call = WindowFunction::new(udwf(func.name())?, args);
                (DfExpr::from(call), frame)
            }
        };
        let mut builder = call.partition_by(partition_by).order_by(order_by);
        if let Some(frame) = frame {
            builder = builder.window_frame(window_frame(frame));
        }
        builder.build().map_err(df_error)
    }

    /// An aggregate as a window function.
    fn window_aggregate(&self, func: AggFunc, args: Vec<DfExpr>) -> Result<DfExpr> {
        let DfExpr::AggregateFunction(call) = self.aggregate(func, args, false)? else {
            return Err(untranslatable(format!("window aggregate {func:?}")));
        };
        Ok(DfExpr::from(WindowFunction::new(
            call.func,
            call.params.args,
        )))
    }
}

/// sloth's frame as DataFusion's (which coerces the offsets to the order
/// key's type).
fn window_frame(frame: crate::expr::WindowFrame) -> WindowFrame {
    let bound = |offset: Option<FrameOffset>, unbounded_preceding: bool| {
        let (preceding, value) = match offset {
            None if unbounded_preceding => {
                return WindowFrameBound::Preceding(DfScalar::UInt64(None));
            }
            None => return WindowFrameBound::Following(DfScalar::UInt64(None)),
            Some(FrameOffset::Count(0)) => return WindowFrameBound::CurrentRow,
            Some(FrameOffset::Count(n)) => (n < 0, DfScalar::UInt64(Some(n.unsigned_abs() as u64))),
            Some(FrameOffset::Value(v)) => (v < 0.0, DfScalar::Float64(Some(v.abs()))),
            Some(FrameOffset::Interval {
                months,
                days,
                nanos,
            }) => (
                months < 0 || days < 0 || nanos < 0,
                DfScalar::IntervalMonthDayNano(Some(arrow::datatypes::IntervalMonthDayNano::new(
                    months.abs(),
                    days.abs(),
                    nanos.abs(),
                ))),
            ),
        };
        if preceding {
            WindowFrameBound::Preceding(value)
        } else {
            WindowFrameBound::Following(value)
        }
    };
    let units = match frame.units {
        FrameUnits::Rows => WindowFrameUnits::Rows,
        FrameUnits::Groups => WindowFrameUnits::Groups,
        FrameUnits::Range => WindowFrameUnits::Range,
    };
    WindowFrame::new_bounds(units, bound(frame.start, true), bound(frame.end, false))
}

fn operator(op: Operator) -> DfOp {
    match op {
        Operator::Plus => DfOp::Plus,
        Operator::Minus => DfOp::Minus,
        Operator::Multiply => DfOp::Multiply,
        Operator::Divide => DfOp::Divide,
        Operator::Modulo => DfOp::Modulo,
        Operator::Eq => DfOp::Eq,
        Operator::NotEq => DfOp::NotEq,
        Operator::Lt => DfOp::Lt,
        Operator::LtEq => DfOp::LtEq,
        Operator::Gt => DfOp::Gt,
        Operator::GtEq => DfOp::GtEq,
        Operator::And => DfOp::And,
        Operator::Or => DfOp::Or,
    }
}
