//! Logical → physical: resolves expressions, fuses streaming steps into
//! pipelines, turns `sort + slice` into top-k (and a `row_number() <= k`
//! filter into a top-k per partition), and picks join build sides.

use std::sync::Arc;

use arrow::compute::SortOptions;
use arrow::datatypes::SchemaRef;

use super::{AggregateExpr, BuildSide, PhysicalPlan, Stage};
use crate::error::{Result, SlothError};
use crate::expr::{Expr, WindowFunc, common_type};
use crate::expr::{agg_output_type, window_output_type};
use crate::physical_expr::PhysicalExpr;
use crate::plan::{
    Aggregate, Distinct, Filter, Join, JoinType, LogicalPlan, Project, Scan, Slice, Sort, Union,
    Window, join_schema,
};

/// `k` when `predicate` over `input` keeps only rows with
/// `row_number() <= k` of the last window function `input` computes (the
/// outermost physical window), so that window can keep just the first `k`
/// rows of each partition.
fn row_number_limit(input: &LogicalPlan, predicate: &Expr) -> Option<usize> {
    let LogicalPlan::Window(Window { exprs, .. }) = input else {
        return None;
    };
    let last = exprs.last()?;
    if !matches!(
        last.unalias(),
        Expr::Window {
            func: WindowFunc::RowNumber,
            ..
        }
    ) {
        return None;
    }
    let name = last.output_name();
    predicate
        .clone()
        .split_conjunction()
        .iter()
        .filter_map(|c| {
            let Expr::Binary { left, op, right } = c else {
                return None;
            };
            use crate::expr::Operator::*;
            let (column, op, bound) = match (left.as_ref(), right.as_ref()) {
                (Expr::Column(c), Expr::Literal(v)) => (c, *op, v),
                (Expr::Literal(v), Expr::Column(c)) => (c, op.swap()?, v),
                _ => return None,
            };
            let crate::expr::ScalarValue::Int64(Some(bound)) = bound else {
                return None;
            };
            if *column != name {
                return None;
            }
            let k = match op {
                LtEq => *bound,
                Lt => bound - 1,
                Eq => *bound,
                _ => return None,
            };
            usize::try_from(k.max(0)).ok()
        })
        .min()
}

/// Plans `plan` for execution: one function per kind of node, each
/// given the node's output schema.
pub fn create_physical_plan(plan: &LogicalPlan) -> Result<PhysicalPlan> {
    let schema = plan.schema()?;
    match plan {
        LogicalPlan::Scan(scan) => plan_scan(plan, scan, schema),
        LogicalPlan::Filter(Filter {
            input, predicate, ..
        }) => plan_filter(input, predicate, schema),
        LogicalPlan::Project(Project { input, exprs, .. }) => plan_project(input, exprs, schema),
        LogicalPlan::Aggregate(Aggregate {
            input, keys, aggs, ..
        }) => plan_aggregate(input, keys, aggs, schema),
        LogicalPlan::Distinct(Distinct { input, .. }) => plan_distinct(input, schema),
        LogicalPlan::Join(Join {
            left,
            right,
            how: JoinType::Cross,
            filter,
            ..
        }) => plan_cross_join(left, right, filter.as_ref(), schema),
        LogicalPlan::Join(join) => plan_hash_join(join, schema),
        LogicalPlan::Window(Window { input, exprs, .. }) => plan_window(input, exprs),
        LogicalPlan::Sort(Sort { input, by, .. }) => sort(input, by, None),
        LogicalPlan::Slice(Slice {
            input, offset, len, ..
        }) => plan_slice(input, *offset, *len),
        LogicalPlan::Union(Union { inputs, .. }) => Ok(PhysicalPlan::Union {
            inputs: inputs
                .iter()
                .map(|i| create_physical_plan(i))
                .collect::<Result<_>>()?,
            schema,
        }),
    }
}

/// A scan, with its pushed filters compiled against its output.
fn plan_scan(plan: &LogicalPlan, scan: &Scan, schema: SchemaRef) -> Result<PhysicalPlan> {
    let filters = crate::plan::cardinality::scan_filters_in_order(scan)
        .iter()
        .map(|f| PhysicalExpr::compile(f, &schema))
        .collect::<Result<_>>()?;
    Ok(PhysicalPlan::Scan {
        source: scan.source.clone(),
        projection: scan.projection.clone(),
        filters,
        schema,
        estimated_rows: scan
            .source
            .row_count()
            .map(|_| crate::plan::cardinality::estimate(plan).rows as usize),
        metrics: Default::default(),
    })
}

/// A filter, folded into its input's pipeline; a `row_number() <= k`
/// filter also caps the window below at `k` rows per partition.
fn plan_filter(input: &LogicalPlan, predicate: &Expr, schema: SchemaRef) -> Result<PhysicalPlan> {
    let mut child = create_physical_plan(input)?;
    if let (Some(k), PhysicalPlan::Window { limit, .. }) =
        (row_number_limit(input, predicate), &mut child)
    {
        // The filter stays; the window just drops what it would drop.
        *limit = Some(k);
    }
    let p = PhysicalExpr::compile(predicate, &*input.schema()?)?;
    Ok(push_stage(child, Stage::Filter(p), schema))
}

/// A projection: a selection of a hash join's columns narrows the join's
/// output; anything else is a pipeline stage.
fn plan_project(input: &LogicalPlan, exprs: &[Expr], schema: SchemaRef) -> Result<PhysicalPlan> {
    let mut child = create_physical_plan(input)?;
    let in_schema = input.schema()?;
    let exprs: Vec<PhysicalExpr> = exprs
        .iter()
        .map(|e| PhysicalExpr::compile(e, &in_schema))
        .collect::<Result<_>>()?;
    // A selection of a hash join's columns: the join emits just those.
    let columns: Option<Vec<usize>> = exprs
        .iter()
        .map(|e| match e.node {
            crate::physical_expr::Node::Column(i) => Some(i),
            _ => None,
        })
        .collect();
    if let (
        Some(columns),
        PhysicalPlan::HashJoin {
            output: output @ None,
            schema: join_schema,
            ..
        },
    ) = (columns, &mut child)
    {
        *output = Some(columns);
        *join_schema = schema;
        return Ok(child);
    }
    Ok(push_stage(
        child,
        Stage::Project(exprs, schema.clone()),
        schema,
    ))
}

/// A hash aggregate; an aggregate without a DISTINCT form is refused
/// with DISTINCT.
fn plan_aggregate(
    input: &LogicalPlan,
    keys: &[Expr],
    aggs: &[Expr],
    schema: SchemaRef,
) -> Result<PhysicalPlan> {
    let in_schema = input.schema()?;
    let keys = keys
        .iter()
        .map(|k| PhysicalExpr::compile(k, &in_schema))
        .collect::<Result<_>>()?;
    let aggs = aggs
        .iter()
        .map(|a| match a.unalias() {
            Expr::Agg {
                func,
                args,
                distinct,
            } => {
                // Dropping the word would count duplicates, so an
                // aggregate without a distinct form is refused.
                if *distinct && !func.takes_distinct() {
                    return Err(SlothError::unsupported(format!(
                        "{}(DISTINCT ..) (count, sum, avg, min, max, stddev, variance, median and quantile take DISTINCT)",
                        func.name()
                    )));
                }
                let args = args
                    .iter()
                    .map(|e| PhysicalExpr::compile(e, &in_schema))
                    .collect::<Result<Vec<_>>>()?;
                let types: Vec<_> = args.iter().map(|a| a.data_type.clone()).collect();
                Ok(AggregateExpr {
                    func: *func,
                    data_type: agg_output_type(*func, &types)?,
                    args,
                    distinct: *distinct,
                })
            }
            other => Err(SlothError::plan(format!("'{other}' is not an aggregate"))),
        })
        .collect::<Result<_>>()?;
    Ok(PhysicalPlan::HashAggregate {
        input: Box::new(create_physical_plan(input)?),
        keys,
        aggs,
        schema,
    })
}

/// DISTINCT: a hash aggregate keyed by every column.
fn plan_distinct(input: &LogicalPlan, schema: SchemaRef) -> Result<PhysicalPlan> {
    let keys = (0..schema.fields().len())
        .map(|i| PhysicalExpr::compile(&Expr::Column(schema.field(i).name().clone()), &schema))
        .collect::<Result<_>>()?;
    Ok(PhysicalPlan::HashAggregate {
        input: Box::new(create_physical_plan(input)?),
        keys,
        aggs: vec![],
        schema,
    })
}

/// A cross join, its condition a filter above it.
fn plan_cross_join(
    left: &LogicalPlan,
    right: &LogicalPlan,
    filter: Option<&Expr>,
    schema: SchemaRef,
) -> Result<PhysicalPlan> {
    let cross = PhysicalPlan::CrossJoin {
        left: Box::new(create_physical_plan(left)?),
        right: Box::new(create_physical_plan(right)?),
        schema: schema.clone(),
    };
    Ok(match filter {
        Some(f) => {
            let p = PhysicalExpr::compile(f, &schema)?;
            push_stage(cross, Stage::Filter(p), schema)
        }
        None => cross,
    })
}

/// A hash join: keys cast to their common type, the pair filter compiled
/// against the inner join's columns.
fn plan_hash_join(join: &Join, schema: SchemaRef) -> Result<PhysicalPlan> {
    let Join {
        left, right, how, ..
    } = join;
    let (ls, rs) = (left.schema()?, right.schema()?);
    let pair = join_schema(&ls, &rs, JoinType::Inner);
    let filter = join
        .filter
        .as_ref()
        .map(|f| PhysicalExpr::compile(f, &pair))
        .transpose()?;
    let mut left_keys = Vec::new();
    let mut right_keys = Vec::new();
    for (l, r) in join.keys() {
        let l = PhysicalExpr::compile(l, &ls)?;
        let r = PhysicalExpr::compile(r, &rs)?;
        let t = common_type(&l.data_type, &r.data_type).ok_or_else(|| {
            SlothError::types(format!(
                "join keys of types {} and {} cannot be compared",
                l.data_type, r.data_type
            ))
        })?;
        left_keys.push(l.cast_to(&t)?);
        right_keys.push(r.cast_to(&t)?);
    }
    Ok(PhysicalPlan::HashJoin {
        left: Box::new(create_physical_plan(left)?),
        right: Box::new(create_physical_plan(right)?),
        left_keys,
        right_keys,
        how: *how,
        build_side: BuildSide::Smaller,
        filter,
        output: None,
        schema,
    })
}

/// Window functions, one physical window per expression, each adding
/// its column.
fn plan_window(input: &LogicalPlan, exprs: &[Expr]) -> Result<PhysicalPlan> {
    let mut node = create_physical_plan(input)?;
    let mut fields: Vec<arrow::datatypes::Field> = input
        .schema()?
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    for e in exprs {
        let Expr::Window {
            func,
            args,
            partition_by,
            order_by,
        } = e.unalias()
        else {
            return Err(SlothError::plan(format!("'{e}' is not a window function")));
        };
        let in_schema = node.schema();
        let mut args: Vec<PhysicalExpr> = args
            .iter()
            .map(|a| PhysicalExpr::compile(a, &in_schema))
            .collect::<Result<_>>()?;
        // lag/lead's default takes the value's type.
        if let (Some(_), [value, default]) = (func.shift(), args.as_mut_slice()) {
            *default = default.clone().cast_to(&value.data_type)?;
        }
        let types: Vec<_> = args.iter().map(|a| a.data_type.clone()).collect();
        let data_type = window_output_type(*func, &types)?;
        let partition_by = partition_by
            .iter()
            .map(|p| PhysicalExpr::compile(p, &in_schema))
            .collect::<Result<_>>()?;
        let order_by = order_by
            .iter()
            .map(|k| {
                let options = SortOptions {
                    descending: k.descending,
                    nulls_first: !k.nulls_last,
                };
                Ok((PhysicalExpr::compile(&k.expr, &in_schema)?, options))
            })
            .collect::<Result<_>>()?;
        fields.push(arrow::datatypes::Field::new(
            e.output_name(),
            data_type,
            true,
        ));
        node = PhysicalPlan::Window {
            input: Box::new(node),
            func: *func,
            args,
            partition_by,
            order_by,
            limit: None,
            schema: Arc::new(arrow::datatypes::Schema::new(fields.clone())),
        };
    }
    Ok(node)
}

/// A slice; over a sort with a length, a top-k.
fn plan_slice(input: &LogicalPlan, offset: usize, len: Option<usize>) -> Result<PhysicalPlan> {
    let child = match (input, len) {
        // sort + slice = top-k: keep only offset + len rows while sorting.
        (
            LogicalPlan::Sort(Sort {
                input: sort_input,
                by,
                ..
            }),
            Some(n),
        ) => sort(sort_input, by, Some(offset + n))?,
        _ => create_physical_plan(input)?,
    };
    Ok(PhysicalPlan::Slice {
        input: Box::new(child),
        offset,
        len,
    })
}

fn sort(
    input: &LogicalPlan,
    by: &[crate::plan::SortKey],
    limit: Option<usize>,
) -> Result<PhysicalPlan> {
    let in_schema = input.schema()?;
    let keys = by
        .iter()
        .map(|k| {
            let e = PhysicalExpr::compile(&k.expr, &in_schema)?;
            Ok((
                e,
                SortOptions {
                    descending: k.descending,
                    nulls_first: !k.nulls_last,
                },
            ))
        })
        .collect::<Result<_>>()?;
    Ok(PhysicalPlan::Sort {
        input: Box::new(create_physical_plan(input)?),
        keys,
        limit,
    })
}

/// Appends a stage to the child's pipeline, or starts a new pipeline.
fn push_stage(
    child: PhysicalPlan,
    stage: Stage,
    schema: arrow::datatypes::SchemaRef,
) -> PhysicalPlan {
    match child {
        PhysicalPlan::Pipeline {
            input, mut stages, ..
        } => {
            stages.push(stage);
            PhysicalPlan::Pipeline {
                input,
                stages,
                schema,
            }
        }
        other => PhysicalPlan::Pipeline {
            input: Box::new(other),
            stages: vec![stage],
            schema,
        },
    }
}
