//! `VALUES (..), (..)`: a table written out in the query.
//!
//! ```sql
//! SELECT * FROM (VALUES (1, 'one'), (2, NULL)) AS t(n, name)
//! ```
//!
//! Each value is an expression over no columns, evaluated once while the
//! query is planned; each column takes the common type of its rows (an
//! integer beside a float is a float, NULL takes the others' type, a
//! column of NULLs only is BIGINT) and is named `column1`, `column2`, ...
//! as PostgreSQL names them (`AS t(a, b)` renames). The table becomes one
//! in-memory batch, so a long `VALUES` list costs one pass, not a union
//! per row.

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::compute::{cast, concat};
use arrow::datatypes::{DataType, Field, Schema};
use sqlparser::ast;

use crate::error::{Result, SlothError};
use crate::expr::common_type;
use crate::frame::LazyFrame;
use crate::physical_expr::PhysicalExpr;
use crate::plan::LogicalPlan;
use crate::sql::expr::convert;
use crate::sql::planner::Scope;

/// The plan of a `VALUES` list.
pub(super) fn plan_values(values: &ast::Values) -> Result<LogicalPlan> {
    let width = values.rows.first().map_or(0, |r| r.content.len());
    if width == 0 {
        return Err(SlothError::plan("VALUES needs at least one value"));
    }
    let mut columns: Vec<Vec<ArrayRef>> = vec![Vec::with_capacity(values.rows.len()); width];
    for (i, row) in values.rows.iter().enumerate() {
        let row = &row.content;
        if row.len() != width {
            return Err(SlothError::plan(format!(
                "VALUES row {} has {} values, the first has {width}",
                i + 1,
                row.len()
            )));
        }
        for (column, value) in columns.iter_mut().zip(row) {
            column.push(evaluate(value)?);
        }
    }
    let mut fields = Vec::with_capacity(width);
    let mut arrays = Vec::with_capacity(width);
    for (j, values) in columns.into_iter().enumerate() {
        let name = format!("column{}", j + 1);
        let data_type = column_type(&values, &name)?;
        let cast_values = (values.iter())
            .map(|v| cast(v, &data_type))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&dyn arrow::array::Array> = cast_values.iter().map(|a| a.as_ref()).collect();
        arrays.push(concat(&refs)?);
        fields.push(Field::new(name, data_type, true));
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?;
    Ok(LazyFrame::from_batches(vec![batch])?.logical_plan().clone())
}

/// One value: its expression evaluated over a row of no columns.
fn evaluate(value: &ast::Expr) -> Result<ArrayRef> {
    let expr = convert(value, &Scope::default()).map_err(|e| match e {
        SlothError::ColumnNotFound { name, .. } => SlothError::plan(format!(
            "a VALUES list cannot read columns (it names '{name}')"
        )),
        other => other,
    })?;
    let schema = Schema::empty();
    let compiled = PhysicalExpr::compile(&expr, &schema)?;
    let options = RecordBatchOptions::new().with_row_count(Some(1));
    let row = RecordBatch::try_new_with_options(Arc::new(schema), vec![], &options)?;
    crate::physical_expr::eval::evaluate_array(&compiled, &row)
}

/// The type every value of a column converts to.
fn column_type(values: &[ArrayRef], name: &str) -> Result<DataType> {
    let mut common = DataType::Null;
    for v in values {
        let t = v.data_type();
        common = match (&common, t) {
            (_, DataType::Null) => common,
            (DataType::Null, t) => t.clone(),
            (c, t) => common_type(c, t).ok_or_else(|| {
                SlothError::TypeMismatch(format!("VALUES column {name} mixes {c} and {t}"))
            })?,
        };
    }
    Ok(match common {
        DataType::Null => DataType::Int64,
        t => t,
    })
}
