//! `WITH RECURSIVE name AS (base UNION [ALL] step)`, as PostgreSQL runs it:
//! the base term's rows are the first working table; the step runs with
//! `name` reading the working table, its rows become the next working
//! table and are appended to the result, until a step gives no rows.
//! Under `UNION` (not `ALL`) a row already in the result is dropped, so a
//! walk over a graph with cycles ends.
//!
//! The iteration runs while the statement is planned: the CTE becomes an
//! in-memory table of its result, and the query around it is planned over
//! that. A step that keeps giving rows fails after `max_recursion` runs
//! (a `SET` setting) with an error that says so. A CTE of a `WITH
//! RECURSIVE` whose step does not read it is an ordinary CTE.

use std::collections::HashSet;
use std::sync::Arc;

use arrow::array::{BooleanArray, RecordBatch};
use arrow::compute::{cast, concat_batches, filter_record_batch};
use arrow::datatypes::SchemaRef;
use arrow::row::{RowConverter, SortField};
use sqlparser::ast::{self, SetExpr, SetOperator, SetQuantifier};

use super::planner::{QueryPlanner, renamed};
use crate::error::{Result, SlothError};
use crate::frame::LazyFrame;
use crate::io::ScanSource;
use crate::plan::{LogicalPlan, Scan};

impl QueryPlanner<'_> {
    /// Plans the CTE `name` of a `WITH RECURSIVE`: an in-memory table of
    /// its rows when its step reads it, else its query as written.
    pub(super) fn plan_recursive_cte(&self, name: &str, cte: &ast::Cte) -> Result<LogicalPlan> {
        let plain = || renamed(self.plan_query(&cte.query)?, &cte.alias.columns);
        let SetExpr::SetOperation {
            op: SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = cte.query.body.as_ref()
        else {
            return plain();
        };
        let distinct = match set_quantifier {
            SetQuantifier::All => false,
            SetQuantifier::Distinct | SetQuantifier::None => true,
            other => return Err(SlothError::unsupported(format!("UNION {other}"))),
        };
        let base = renamed(self.plan_set_expr(left)?, &cte.alias.columns)?;
        let base = self.run(base)?;
        let schema = base.schema().clone();
        let mut seen = distinct.then(|| SeenRows::new(&schema)).transpose()?;
        let mut working = new_rows(base.into_batches(), seen.as_mut())?;
        let mut result = working.clone();
        let limit = self.ctx.config().max_recursion;
        for run in 0.. {
            let table = ScanSource::memory(schema.clone(), working)?;
            let ScanSource::Memory { batches, .. } = &table else {
                unreachable!("a memory source")
            };
            let batches = batches.clone();
            let scan = LogicalPlan::Scan(Scan {
                source: table,
                projection: None,
                filters: vec![],
            });
            self.ctes
                .borrow_mut()
                .insert(name.to_string(), Arc::new(scan));
            let step = self.plan_set_expr(right)?;
            self.ctes.borrow_mut().remove(name);
            if run == 0 && !reads(&step, &batches) {
                return plain();
            }
            if run == limit {
                return Err(SlothError::plan(format!(
                    "WITH RECURSIVE '{name}' still gave rows after {limit} steps \
                     (SET max_recursion = n allows more)"
                )));
            }
            let step = self.run(step)?;
            let rows = conform(step.into_batches(), &schema, name)?;
            working = new_rows(rows, seen.as_mut())?;
            if working.is_empty() {
                break;
            }
            result.extend(working.iter().cloned());
        }
        Ok(LogicalPlan::Scan(Scan {
            source: ScanSource::memory(schema.clone(), rebatched(&schema, &result)?)?,
            projection: None,
            filters: vec![],
        }))
    }

    /// Runs a plan under the context's settings.
    fn run(&self, plan: LogicalPlan) -> Result<crate::frame::DataFrame> {
        LazyFrame::from(plan)
            .with_config(self.ctx.config().clone())
            .with_cancel(self.ctx.cancel.clone())
            .collect()
    }
}

/// The rows of many small batches (a step's each) in batches of the
/// engine's size, so that the query over them runs as over a table.
fn rebatched(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<RecordBatch>> {
    let all = concat_batches(schema, batches)?;
    let size = crate::io::BATCH_SIZE;
    Ok((0..all.num_rows())
        .step_by(size)
        .map(|offset| all.slice(offset, size.min(all.num_rows() - offset)))
        .collect())
}

/// Whether `plan` scans these batches.
fn reads(plan: &LogicalPlan, batches: &Arc<Vec<RecordBatch>>) -> bool {
    match plan {
        LogicalPlan::Scan(Scan {
            source: ScanSource::Memory { batches: b, .. },
            ..
        }) => Arc::ptr_eq(b, batches),
        other => other.inputs().into_iter().any(|i| reads(i, batches)),
    }
}

/// The step's rows in the base term's column types and names.
fn conform(batches: Vec<RecordBatch>, schema: &SchemaRef, name: &str) -> Result<Vec<RecordBatch>> {
    batches
        .into_iter()
        .map(|b| {
            if b.num_columns() != schema.fields().len() {
                return Err(SlothError::plan(format!(
                    "the recursive term of '{name}' gives {} columns, its base term {}",
                    b.num_columns(),
                    schema.fields().len()
                )));
            }
            let columns = (b.columns().iter().zip(schema.fields()))
                .map(|(c, f)| {
                    cast(c, f.data_type()).map_err(|_| {
                        SlothError::types(format!(
                            "the recursive term of '{name}' gives {} for column '{}', which is {}",
                            c.data_type(),
                            f.name(),
                            f.data_type()
                        ))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(RecordBatch::try_new(schema.clone(), columns)?)
        })
        .collect()
}

/// The rows of `batches` not seen before (all of them without a set),
/// without empty batches.
fn new_rows(batches: Vec<RecordBatch>, seen: Option<&mut SeenRows>) -> Result<Vec<RecordBatch>> {
    let batches = match seen {
        None => batches,
        Some(seen) => batches
            .iter()
            .map(|b| seen.keep_new(b))
            .collect::<Result<_>>()?,
    };
    Ok(batches.into_iter().filter(|b| b.num_rows() > 0).collect())
}

/// The rows of a `UNION` recursion so far, as comparable row bytes.
struct SeenRows {
    converter: RowConverter,
    rows: HashSet<Box<[u8]>>,
}

impl SeenRows {
    fn new(schema: &SchemaRef) -> Result<Self> {
        let fields = (schema.fields().iter())
            .map(|f| SortField::new(f.data_type().clone()))
            .collect();
        Ok(SeenRows {
            converter: RowConverter::new(fields)?,
            rows: HashSet::new(),
        })
    }

    /// The rows of `batch` seen neither before nor earlier in it.
    fn keep_new(&mut self, batch: &RecordBatch) -> Result<RecordBatch> {
        let rows = self.converter.convert_columns(batch.columns())?;
        let keep: BooleanArray = (rows.iter())
            .map(|r| Some(self.rows.insert(r.as_ref().into())))
            .collect();
        Ok(filter_record_batch(batch, &keep)?)
    }
}
