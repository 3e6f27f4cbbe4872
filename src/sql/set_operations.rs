//! `INTERSECT` and `EXCEPT` as a grouping of both sides.
//!
//! Set operations compare whole rows and, unlike a join, treat nulls as
//! equal; grouping does too. So both inputs are tagged with their side,
//! unioned, and grouped by every column, counting each side's rows; a
//! group (a distinct row) is kept when both sides have it (INTERSECT) or
//! only the left (EXCEPT).
//!
//! ```text
//! a INTERSECT b  →  Project [cols]
//!                     Filter (__left > 0) AND (__right > 0)
//!                       Aggregate keys=[cols] aggs=[sum(side = 1) AS __left, sum(side = 2) AS __right]
//!                         Union [Project [cols, 1 AS __side] a, Project [cols, 2 AS __side] b]
//! ```
//!
//! The ALL forms keep duplicates: each side numbers the copies of each row
//! (`row_number() OVER (PARTITION BY every column)`), and the distinct
//! operation runs on (row, copy number). A row `l` times on the left and
//! `r` on the right keeps copies `1..=min(l, r)` (INTERSECT ALL) or
//! `r + 1..=l` (EXCEPT ALL).

use std::sync::Arc;

use crate::error::{Result, SlothError};
use crate::expr::{Expr, WindowFunc, col, lit, when};
use crate::plan::LogicalPlan;

const SIDE: &str = "__side";
const COPY: &str = "__copy";

/// Column references to `names`.
fn columns(names: &[String]) -> Vec<Expr> {
    names.iter().map(|n| col(n.as_str())).collect()
}

/// `left INTERSECT ALL right` or `left EXCEPT ALL right`.
pub(super) fn intersect_or_except_all(
    left: LogicalPlan,
    right: LogicalPlan,
    except: bool,
) -> Result<LogicalPlan> {
    let names = left.column_names()?;
    let numbered = |plan: LogicalPlan| -> Result<LogicalPlan> {
        let partition_by = columns(&plan.column_names()?);
        Ok(LogicalPlan::window(
            Arc::new(plan),
            vec![Expr::over(WindowFunc::RowNumber, partition_by, vec![]).alias(COPY)],
        ))
    };
    let distinct = intersect_or_except(numbered(left)?, numbered(right)?, except)?;
    Ok(LogicalPlan::project(Arc::new(distinct), columns(&names)))
}

/// `left INTERSECT right` (`except == false`) or `left EXCEPT right`, both
/// DISTINCT; output columns are named after `left`'s.
pub(super) fn intersect_or_except(
    left: LogicalPlan,
    right: LogicalPlan,
    except: bool,
) -> Result<LogicalPlan> {
    let names = left.column_names()?;
    let right_names = right.column_names()?;
    if names.len() != right_names.len() {
        return Err(SlothError::plan(format!(
            "{} needs the same number of columns on both sides, got {} and {}",
            if except { "EXCEPT" } else { "INTERSECT" },
            names.len(),
            right_names.len()
        )));
    }
    let tagged = |plan: LogicalPlan, names: &[String], side: i64| {
        let mut exprs: Vec<Expr> = columns(names);
        exprs.push(lit(side).alias(SIDE));
        Arc::new(LogicalPlan::project(Arc::new(plan), exprs))
    };
    let union = LogicalPlan::union(vec![
        tagged(left, &names, 1),
        tagged(right, &right_names, 2),
    ]);
    let rows_of = |side: i64| {
        when(col(SIDE).eq(lit(side)))
            .then(lit(1i64))
            .otherwise(lit(0i64))
            .sum()
    };
    let grouped = LogicalPlan::aggregate(
        Arc::new(union),
        columns(&names),
        vec![rows_of(1).alias("__left"), rows_of(2).alias("__right")],
    );
    let on_right = if except {
        col("__right").eq(lit(0i64))
    } else {
        col("__right").gt(lit(0i64))
    };
    let kept = LogicalPlan::filter(Arc::new(grouped), col("__left").gt(lit(0i64)).and(on_right));
    Ok(LogicalPlan::project(Arc::new(kept), columns(&names)))
}
