//! `GROUPING(a, b, ..)`: which of its arguments a row of a grouped query
//! is not grouped by (a bit each, the last argument the lowest: 1 where the
//! column is absent from the row's grouping set, as after `ROLLUP`).
//!
//! The SQL planner replaces each call by its value for each grouping set
//! (`sql/select/aggregate.rs`); the function itself never runs, and a call
//! left where no grouping happens is a one-line error.

use arrow::datatypes::DataType;

use crate::error::{Result, SlothError};
use crate::expr::function::{ArgType, ColumnarValue, Signature};
use crate::expr::{ScalarFunc, ScalarFunction};

pub(super) fn functions() -> Vec<ScalarFunc> {
    vec![GROUPING]
}

/// `GROUPING(..)` as the SQL front end reads it, before the planner gives
/// it its values.
pub const GROUPING: ScalarFunc = ScalarFunc::new(&Grouping);

#[derive(Debug)]
struct Grouping;

fn misplaced() -> SlothError {
    SlothError::plan(
        "GROUPING() belongs in the select list, HAVING or ORDER BY of a query with GROUP BY",
    )
}

impl ScalarFunction for Grouping {
    fn names(&self) -> &'static [&'static str] {
        &["grouping"]
    }
    fn planner_only(&self) -> bool {
        true
    }
    fn signature(&self, _: &[ArgType]) -> Result<Signature> {
        Err(misplaced())
    }
    fn invoke(&self, _: &[ColumnarValue], _: &DataType, _: usize) -> Result<ColumnarValue> {
        Err(misplaced())
    }
}
