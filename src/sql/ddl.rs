//! Statements that change a [`SqlContext`]'s tables or write files:
//! `CREATE [OR REPLACE] TABLE name AS query`, `CREATE [OR REPLACE] VIEW
//! name AS query`, `DROP TABLE|VIEW [IF EXISTS] name, ..` and
//! `COPY (query) | table [(columns)] TO 'path' [(FORMAT
//! parquet|csv|arrow|json|ndjson, PARTITION_BY (..), ..)]` (the options:
//! [`super::copy_options`]).
//!
//! A table made by `CREATE TABLE .. AS` holds the query's result in
//! memory in the context; a view holds the query's plan and runs it each
//! time it is read (the tables it reads are those of the moment it was
//! made). `DROP` forgets a name; it never deletes a file. `COPY` streams
//! the result into the file as `--output` does, atomically.

use std::path::Path;

use sqlparser::ast::{self, CopyOption, CopySource, CopyTarget, ObjectType, Statement};

use super::copy_options::{CopyOptions, copy_format, format_named};
use super::{SqlContext, SqlOutput};
use crate::error::{Result, SlothError};
use crate::expr::col;
use crate::frame::LazyFrame;

impl SqlContext {
    /// Runs `statement` if it is one of this module's; `None` otherwise.
    /// `copy` holds a COPY's DuckDB-style options ([`super::copy_options`]).
    pub(super) fn ddl(
        &mut self,
        statement: &Statement,
        copy: &CopyOptions,
    ) -> Result<Option<SqlOutput>> {
        Ok(Some(match statement {
            Statement::CreateTable(create) => {
                let Some(query) = &create.query else {
                    return Err(SlothError::unsupported(
                        "CREATE TABLE without AS query (sloth's tables are query results or files)",
                    ));
                };
                let name = table_name(&create.name)?;
                if !self.may_create(&name, create.or_replace, create.if_not_exists)? {
                    return Ok(Some(SqlOutput::Done));
                }
                let result = self.plan_query(query)?.collect()?;
                let schema = result.schema().clone();
                let table = LazyFrame::from_batches_with_schema(schema, result.into_batches())?;
                self.register(&name, table);
                SqlOutput::Done
            }
            Statement::CreateView(view) => {
                let name = table_name(&view.name)?;
                if !self.may_create(&name, view.or_replace, view.if_not_exists)? {
                    return Ok(Some(SqlOutput::Done));
                }
                let plan = self.plan_query(&view.query)?;
                self.register(&name, plan);
                SqlOutput::Done
            }
            Statement::Drop {
                object_type: ObjectType::Table | ObjectType::View,
                if_exists,
                names,
                ..
            } => {
                for name in names {
                    let name = table_name(name)?;
                    if !self.deregister(&name) && !if_exists {
                        // The error lists the tables there are.
                        self.table(&name)?;
                    }
                }
                SqlOutput::Done
            }
            Statement::Copy {
                source,
                to: true,
                target: CopyTarget::File { filename },
                options,
                legacy_options,
                ..
            } => {
                if let Some(option) = legacy_options.first() {
                    return Err(SlothError::unsupported(format!("COPY option '{option}'")));
                }
                let path = Path::new(filename);
                let copy = with_parsed_options(copy.clone(), options)?;
                let format = copy_format(path, &copy)?;
                let rows = match source {
                    CopySource::Query(query) => self.plan_query(query)?,
                    CopySource::Table {
                        table_name: name,
                        columns,
                    } => {
                        let table = self.table(&table_name(name)?)?.clone();
                        match columns.as_slice() {
                            [] => table,
                            names => table.select(names.iter().map(|c| col(c.value.as_str()))),
                        }
                    }
                };
                rows.sink_with(path, format, &copy.write)?;
                SqlOutput::Done
            }
            Statement::Copy { .. } => {
                return Err(SlothError::unsupported(
                    "COPY other than COPY .. TO 'file' (read files with --data, --table or .read)",
                ));
            }
            _ => return Ok(None),
        }))
    }

    /// Whether `CREATE` may go on with `name`: false to skip it (`IF NOT
    /// EXISTS` and the name is taken), an error if the name is taken
    /// without `OR REPLACE`.
    fn may_create(&self, name: &str, or_replace: bool, if_not_exists: bool) -> Result<bool> {
        let taken = self.table_names().iter().any(|t| t == name);
        match (taken, or_replace, if_not_exists) {
            (true, false, true) => Ok(false),
            (true, false, false) => Err(SlothError::plan(format!(
                "table '{name}' already exists (CREATE OR REPLACE replaces it)"
            ))),
            _ => Ok(true),
        }
    }
}

/// A one-part table name, lower-cased as the planner looks names up.
fn table_name(name: &ast::ObjectName) -> Result<String> {
    match name.0.as_slice() {
        [part] => Ok(part.to_string().trim_matches('"').to_ascii_lowercase()),
        _ => Err(SlothError::unsupported(format!(
            "qualified table name '{name}' (sloth has one schema)"
        ))),
    }
}

/// `copy` with the options sqlparser read itself (PostgreSQL's `WITH
/// (FORMAT csv, HEADER)`) added.
fn with_parsed_options(mut copy: CopyOptions, options: &[CopyOption]) -> Result<CopyOptions> {
    for option in options {
        match option {
            CopyOption::Format(name) => copy.format = Some(format_named(&name.value)?),
            CopyOption::Header(header) => copy.write.header = *header,
            CopyOption::Delimiter(d) if d.is_ascii() => copy.write.delimiter = *d as u8,
            other => return Err(SlothError::unsupported(format!("COPY option '{other}'"))),
        }
    }
    Ok(copy)
}
