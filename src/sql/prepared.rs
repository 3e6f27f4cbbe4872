//! Parameters and prepared statements: a query may read `$1`, `$2`, ..
//! whose values come from the Rust API ([`SqlContext::sql_with_params`])
//! or from `EXECUTE name(v1, v2, ..)` of a query kept by `PREPARE name AS
//! query` (PostgreSQL's statements; `DEALLOCATE [PREPARE] name | ALL`
//! forgets it).
//!
//! A parameter stands for a constant: the query is planned with the value
//! in place of `$n`, so its type and the optimizer's folding are those of
//! the literal. A `$n` beyond the values given, and a value that reads a
//! column, are one-line errors.

use sqlparser::ast::{self, Statement};

use super::expr::convert;
use super::planner::{Scope, ident};
use super::{SqlContext, SqlOutput};
use crate::error::{Result, SlothError};
use crate::expr::{Expr, ScalarValue};
use crate::frame::LazyFrame;

impl SqlContext {
    /// Plans a query whose `$1`, `$2`, .. read `params`, in order.
    ///
    /// ```
    /// use sloth::expr::ScalarValue;
    /// let ctx = sloth::sql::SqlContext::new();
    /// let lf = ctx.sql_with_params("select $1 + 1 as n, $2 as s", &[5i64.into(), "x".into()])?;
    /// assert_eq!(lf.collect()?.to_sorted_csv()?, "n,s\n6,x\n");
    /// # Ok::<(), sloth::SlothError>(())
    /// ```
    pub fn sql_with_params(&self, sql: &str, params: &[ScalarValue]) -> Result<LazyFrame> {
        let params = params.iter().cloned().map(Expr::Literal).collect();
        crate::config::on_large_stack(|| match self.parse(sql)? {
            Statement::Query(q) => self.plan_query_with(&q, params),
            _ => Err(SlothError::unsupported(
                "parameters in a statement other than a query",
            )),
        })
    }

    /// `PREPARE` and `DEALLOCATE`: `None` for other statements.
    pub(super) fn prepare_statement(&mut self, statement: &Statement) -> Result<Option<SqlOutput>> {
        match statement {
            Statement::Prepare {
                name, statement, ..
            } => {
                let Statement::Query(q) = statement.as_ref() else {
                    return Err(SlothError::unsupported(
                        "PREPARE of a statement other than a query",
                    ));
                };
                self.prepared.insert(ident(name), q.clone());
                Ok(Some(SqlOutput::Done))
            }
            Statement::Deallocate { name, .. } => {
                let key = ident(name);
                if key == "all" {
                    self.prepared.clear();
                } else if self.prepared.remove(&key).is_none() {
                    return Err(unknown_prepared(&key));
                }
                Ok(Some(SqlOutput::Done))
            }
            _ => Ok(None),
        }
    }

    /// `EXECUTE name(v1, ..)`: the prepared query planned with the values.
    pub(super) fn execute_prepared(
        &self,
        name: &ast::ObjectName,
        values: &[ast::Expr],
    ) -> Result<LazyFrame> {
        let key = name.to_string().trim_matches('"').to_ascii_lowercase();
        let query = self
            .prepared
            .get(&key)
            .ok_or_else(|| unknown_prepared(&key))?;
        let params = values
            .iter()
            .map(|v| {
                convert(v, &Scope::default()).map_err(|e| match e {
                    SlothError::ColumnNotFound { .. } => SlothError::plan(format!(
                        "EXECUTE {key}: the value '{v}' is not a constant"
                    )),
                    other => other,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.plan_query_with(query, params)
    }
}

fn unknown_prepared(name: &str) -> SlothError {
    SlothError::plan(format!("no prepared statement named '{name}'"))
}
