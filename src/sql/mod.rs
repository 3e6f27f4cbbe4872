//! SQL front end: parses with `sqlparser` and plans onto the same
//! [`LogicalPlan`](crate::plan::LogicalPlan) the LazyFrame API builds.
//!
//! [`SqlContext`] holds the registered tables; [`SqlContext::sql`] plans a
//! query into a [`LazyFrame`], [`SqlContext::execute`] also handles
//! `EXPLAIN [ANALYZE]`.

mod copy_options;
mod ddl;
mod expr;
mod function_call;
mod planner;
mod prepared;
mod recursive;
mod select;
mod set_operations;
mod subquery;
mod table_functions;
mod unsupported;
mod values;

use std::collections::BTreeMap;
use std::path::Path;

use sqlparser::ast::Statement;
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use crate::config::{Device, OptimizerOptions, SessionConfig};
use crate::error::{Result, SlothError};
use crate::frame::{DataFrame, LazyFrame};
use crate::io::CsvOptions;

/// The arrow type a SQL type name stands for (`BIGINT`, `decimal(12,2)`,
/// `varchar`, `timestamp`, ...), as `CAST(x AS name)` reads it.
///
/// ```
/// use arrow::datatypes::DataType;
/// assert_eq!(sloth::sql::data_type("bigint")?, DataType::Int64);
/// assert!(sloth::sql::data_type("no such type").is_err());
/// # Ok::<(), sloth::SlothError>(())
/// ```
pub fn data_type(name: &str) -> Result<arrow::datatypes::DataType> {
    let mut parser = Parser::new(&GenericDialect {})
        .try_with_sql(name)
        .map_err(|e| SlothError::SqlSyntax(e.to_string()))?;
    let parsed = parser
        .parse_data_type()
        .map_err(|_| SlothError::Plan(format!("'{name}' is not a type name")))?;
    if parser.peek_token().token != sqlparser::tokenizer::Token::EOF {
        return Err(SlothError::Plan(format!("'{name}' is not a type name")));
    }
    expr::data_type_of(&parsed)
}

/// Registered tables, by name.
#[derive(Debug, Clone, Default)]
pub struct SqlContext {
    tables: BTreeMap<String, LazyFrame>,
    /// Files of a registered directory that could not be read, by table
    /// name: the error, reported when a query names the table.
    unreadable: BTreeMap<String, String>,
    config: SessionConfig,
    csv: CsvOptions,
    /// Stops the queries this context runs (see [`SqlContext::set_cancel`]).
    cancel: crate::exec::CancelToken,
    /// Queries kept by `PREPARE name AS ..`, by name.
    prepared: BTreeMap<String, Box<sqlparser::ast::Query>>,
}

/// What a statement produced.
pub enum SqlOutput {
    /// Rows (a query).
    Frame(DataFrame),
    /// Text (`EXPLAIN`).
    Text(String),
    /// Nothing to show: a statement that changed the context's tables or
    /// wrote a file (`CREATE TABLE .. AS`, `DROP`, `COPY .. TO`).
    Done,
}

impl SqlContext {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the CSV files registered from now on with `options`.
    pub fn with_csv_options(mut self, options: CsvOptions) -> Self {
        self.csv = options;
        self
    }

    /// Makes `cancel` stop the queries planned from now on (a shell gives
    /// each statement a fresh token and throws it on Ctrl-C).
    pub fn set_cancel(&mut self, cancel: crate::exec::CancelToken) {
        self.cancel = cancel;
    }

    /// The token that stops this context's queries and counts their
    /// progress ([`crate::CancelToken::progress`]).
    pub fn cancel_token(&self) -> &crate::exec::CancelToken {
        &self.cancel
    }

    /// Sets the settings queries planned from now on run under.
    pub fn with_config(mut self, config: SessionConfig) -> Self {
        self.config = config;
        self
    }

    /// The settings queries planned here run under.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The settings, to change for queries planned from now on (the REPL's
    /// `SET name = value`).
    pub fn config_mut(&mut self) -> &mut SessionConfig {
        &mut self.config
    }

    /// Sets the optimizer options for queries planned from now on.
    pub fn with_optimizer(mut self, options: OptimizerOptions) -> Self {
        self.config.optimizer = options;
        self
    }

    /// Sets where group-by operators of queries planned from now on run.
    pub fn with_device(mut self, device: Device) -> Self {
        self.config.device = device;
        self
    }

    /// The optimizer options queries planned here get.
    pub fn optimizer(&self) -> &OptimizerOptions {
        &self.config.optimizer
    }

    /// Where queries planned here run their group-by operators.
    pub fn device(&self) -> Device {
        self.config.device
    }

    /// Registers a frame under `name` (case-insensitive).
    pub fn register(&mut self, name: &str, frame: LazyFrame) {
        let key = name.to_ascii_lowercase();
        self.unreadable.remove(&key);
        self.tables.insert(key, frame);
    }

    /// Forgets the table `name`; false if there was none.
    pub fn deregister(&mut self, name: &str) -> bool {
        let key = name.to_ascii_lowercase();
        let unreadable = self.unreadable.remove(&key).is_some();
        self.tables.remove(&key).is_some() || unreadable
    }

    /// Registers a CSV/Parquet/IPC file under `name`; a directory or a
    /// glob in the last path component (`logs/*.parquet`) registers all
    /// its files as one table ([`LazyFrame::scan_path`]).
    pub fn register_file(&mut self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        let frame = LazyFrame::scan_path_with(path, &self.csv)?;
        self.register(name, frame);
        Ok(())
    }

    /// Registers every readable file in `dir` (`.parquet`, `.csv`, `.tsv`,
    /// `.arrow`, `.json`, ..) under its file stem, and every subdirectory
    /// holding Hive partitions (`sales/year=2024/..`) under its name;
    /// returns how many. A file that
    /// cannot be read (a malformed CSV, a truncated Parquet file) does not
    /// stop the others: a query that names its table gets the file's error.
    /// Two files with one stem (`t.csv` and `t.parquet`) are an error that
    /// names both.
    pub fn register_dir(&mut self, dir: impl AsRef<Path>) -> Result<usize> {
        let dir = dir.as_ref();
        let entries = std::fs::read_dir(dir).map_err(|e| SlothError::FileNotFound {
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                (p.is_file() && crate::io::paths::is_readable_file(p)) || is_partitioned_dir(p)
            })
            .collect();
        paths.sort();
        let mut seen: BTreeMap<String, &Path> = BTreeMap::new();
        for p in &paths {
            let name = if p.is_dir() {
                p.file_name()
            } else {
                p.file_stem()
            };
            let Some(stem) = name.and_then(|s| s.to_str()) else {
                continue;
            };
            if let Some(first) = seen.insert(stem.to_ascii_lowercase(), p) {
                return Err(SlothError::plan(format!(
                    "'{}' and '{}' would both be table '{stem}'; register one with --table NAME=PATH",
                    first.display(),
                    p.display()
                )));
            }
        }
        let mut n = 0;
        for (stem, p) in seen {
            match self.register_file(&stem, p) {
                Ok(()) => n += 1,
                Err(e) => {
                    self.unreadable.insert(stem, e.to_string());
                }
            }
        }
        Ok(n)
    }

    /// Names of the registered tables.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.keys().cloned().collect()
    }

    /// The frame registered as `name`.
    pub fn table(&self, name: &str) -> Result<&LazyFrame> {
        let key = name.to_ascii_lowercase();
        if let Some(frame) = self.tables.get(&key) {
            return Ok(frame);
        }
        Err(match self.unreadable.get(&key) {
            Some(why) => SlothError::UnreadableTable {
                name: name.to_string(),
                reason: why.clone(),
            },
            None => SlothError::TableNotFound {
                name: name.to_string(),
                available: self.table_names(),
            },
        })
    }

    /// Tables of registered directories whose files could not be read,
    /// with the reason.
    pub fn unreadable_tables(&self) -> impl Iterator<Item = (&str, &str)> {
        self.unreadable
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }

    fn parse(&self, sql: &str) -> Result<Statement> {
        let parsed = Parser::parse_sql(&GenericDialect {}, sql);
        // `FROM 'file.csv'` (DuckDB's spelling) parses as a quoted name.
        let parsed = match (parsed, table_functions::quote_file_names(sql)) {
            (Err(e), Some(quoted)) => Parser::parse_sql(&GenericDialect {}, &quoted).map_err(|_| e),
            (parsed, _) => parsed,
        };
        let mut stmts = parsed.map_err(|e| {
            let msg = e.to_string();
            if msg.contains("Line:") {
                SlothError::SqlSyntax(msg)
            } else {
                // The parser ran off the end: point at the end of the text.
                let line = sql.lines().count().max(1);
                let column = sql.lines().last().map_or(0, |l| l.chars().count()) + 1;
                SlothError::SqlSyntax(format!("{msg} at Line: {line}, Column: {column}"))
            }
        })?;
        match stmts.len() {
            1 => Ok(stmts.remove(0)),
            0 => Err(SlothError::SqlSyntax("empty statement".into())),
            n => Err(SlothError::unsupported(format!(
                "{n} statements at once; send one at a time"
            ))),
        }
    }

    /// Plans a query (`SELECT ...`) as a lazy frame.
    pub fn sql(&self, sql: &str) -> Result<LazyFrame> {
        crate::config::on_large_stack(|| match self.parse(sql)? {
            Statement::Query(q) => self.plan_query(&q),
            other => Err(SlothError::unsupported(format!(
                "statement '{}'",
                first_words(&other.to_string())
            ))),
        })
    }

    /// Plans `sql` as a lazy frame if it is a query, for a caller that
    /// runs it its own way (into a file: [`LazyFrame::sink`]); `None` for
    /// any other statement.
    pub fn plan_if_query(&self, sql: &str) -> Result<Option<LazyFrame>> {
        crate::config::on_large_stack(|| match self.parse(sql)? {
            Statement::Query(q) => self.plan_query(&q).map(Some),
            _ => Ok(None),
        })
    }

    /// Runs a statement as [`SqlContext::execute`] does, and also the
    /// statements that change or show the context's settings:
    /// `SET name = value` (or `SET name TO value`), `SHOW name` and
    /// `SHOW ALL` (names: [`crate::config::SETTINGS`]).
    pub fn execute_mut(&mut self, sql: &str) -> Result<SqlOutput> {
        let text = sql.trim().trim_end_matches(';').trim();
        let mut words = text.splitn(2, char::is_whitespace);
        let verb = words.next().unwrap_or("").to_ascii_lowercase();
        let rest = words.next().unwrap_or("").trim();
        match verb.as_str() {
            "set" => {
                let (name, value) = rest
                    .split_once('=')
                    .or_else(|| rest.split_once(" to "))
                    .or_else(|| rest.split_once(" TO "))
                    .ok_or_else(|| {
                        SlothError::SqlSyntax(format!("expected SET name = value, got '{text}'"))
                    })?;
                self.config.set(name.trim(), value)?;
                Ok(SqlOutput::Text(format!(
                    "{} = {}",
                    name.trim().to_ascii_lowercase(),
                    self.config.get(name.trim())?
                )))
            }
            "show" if rest.eq_ignore_ascii_case("all") => Ok(SqlOutput::Text(
                self.config
                    .entries()
                    .iter()
                    .map(|(name, value)| format!("{name} = {value}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )),
            "show"
                if crate::config::SETTINGS
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case(rest)) =>
            {
                Ok(SqlOutput::Text(self.config.get(rest)?))
            }
            _ => {
                if let Some((text, copy)) = copy_options::split(sql)? {
                    let statement = self.parse(&text)?;
                    if let Some(output) =
                        crate::config::on_large_stack(|| self.ddl(&statement, &copy))?
                    {
                        return Ok(output);
                    }
                }
                if let Ok(statement) = self.parse(sql) {
                    if let Some(output) = crate::config::on_large_stack(|| {
                        self.ddl(&statement, &copy_options::CopyOptions::default())
                    })? {
                        return Ok(output);
                    }
                    if let Some(output) = self.prepare_statement(&statement)? {
                        return Ok(output);
                    }
                }
                self.execute(sql)
            }
        }
    }

    /// Runs a statement: a query, or `EXPLAIN [ANALYZE] query`.
    pub fn execute(&self, sql: &str) -> Result<SqlOutput> {
        crate::config::on_large_stack(|| self.execute_statement(sql))
    }

    fn execute_statement(&self, sql: &str) -> Result<SqlOutput> {
        if let Some(frame) = self.catalog_statement(sql)? {
            return Ok(SqlOutput::Frame(frame));
        }
        match self.parse(sql)? {
            Statement::Query(q) => Ok(SqlOutput::Frame(self.plan_query(&q)?.collect()?)),
            Statement::Execute {
                name: Some(name),
                parameters,
                immediate: false,
                ..
            } => Ok(SqlOutput::Frame(
                self.execute_prepared(&name, &parameters)?.collect()?,
            )),
            Statement::Explain {
                statement, analyze, ..
            } => {
                let Statement::Query(q) = *statement else {
                    return Err(SlothError::unsupported(
                        "EXPLAIN of a statement other than a query",
                    ));
                };
                let lf = self.plan_query(&q)?;
                Ok(SqlOutput::Text(if analyze {
                    lf.profile()?
                } else {
                    lf.explain(true)?
                }))
            }
            other => Err(SlothError::unsupported(format!(
                "statement '{}'",
                first_words(&other.to_string())
            ))),
        }
    }

    /// `SHOW TABLES` (one row per table) and `DESCRIBE name` or `DESCRIBE
    /// query` (one row per column: its name and type); `None` for any
    /// other statement.
    fn catalog_statement(&self, sql: &str) -> Result<Option<DataFrame>> {
        let text = sql.trim().trim_end_matches(';').trim();
        let (verb, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let (verb, rest) = (verb.to_ascii_lowercase(), rest.trim());
        if verb == "show" && rest.eq_ignore_ascii_case("tables") {
            let rows = self.table_names().into_iter().map(|n| vec![n]).collect();
            return string_frame(&["name"], rows).map(Some);
        }
        if verb != "describe" && verb != "desc" {
            return Ok(None);
        }
        let is_name = !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '"');
        let schema = if is_name {
            self.table(rest.trim_matches('"'))?.schema()?
        } else {
            self.sql(rest)?.schema()?
        };
        let rows = schema
            .fields()
            .iter()
            .map(|f| vec![f.name().clone(), f.data_type().to_string()])
            .collect();
        string_frame(&["column_name", "column_type"], rows).map(Some)
    }

    fn plan_query(&self, q: &sqlparser::ast::Query) -> Result<LazyFrame> {
        self.plan_query_with(q, vec![])
    }

    /// Plans a query whose `$n` reads `params[n - 1]`.
    fn plan_query_with(
        &self,
        q: &sqlparser::ast::Query,
        params: Vec<crate::expr::Expr>,
    ) -> Result<LazyFrame> {
        let plan = planner::QueryPlanner::new(self)
            .with_params(params)
            .plan_query(q)?;
        let lf = LazyFrame::from(plan)
            .with_config(self.config.clone())
            .with_cancel(self.cancel.clone());
        lf.logical_plan().validate()?;
        Ok(lf)
    }
}

/// The Arrow type a SQL type name stands for (`'DATE'`, `'DECIMAL(10,
/// 2)'`, `'VARCHAR'`), as CAST reads it.
pub fn data_type_named(name: &str) -> Result<arrow::datatypes::DataType> {
    let parsed = Parser::new(&GenericDialect {})
        .try_with_sql(name)
        .and_then(|mut p| p.parse_data_type())
        .map_err(|_| SlothError::plan(format!("unknown type '{name}'")))?;
    expr::data_type_of(&parsed)
}

/// Whether `dir` is a directory with `key=value` subdirectories (a
/// table of Hive partitions); hidden ones (`.x`, `_x`) are not tables.
fn is_partitioned_dir(dir: &Path) -> bool {
    let hidden = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_none_or(|n| n.starts_with(['.', '_']));
    !hidden
        && dir.is_dir()
        && std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.filter_map(|e| e.ok()).any(|e| {
                e.path().is_dir()
                    && e.file_name()
                        .to_str()
                        .and_then(crate::io::hive::partition_of)
                        .is_some_and(|p| p.is_ok())
            })
        })
}

/// A frame of text columns named `names`, one row per entry of `rows`.
fn string_frame(names: &[&str], rows: Vec<Vec<String>>) -> Result<DataFrame> {
    use arrow::array::{ArrayRef, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    let schema = std::sync::Arc::new(Schema::new(
        names
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, false))
            .collect::<Vec<_>>(),
    ));
    let columns: Vec<ArrayRef> = (0..names.len())
        .map(|c| {
            std::sync::Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r[c])))
                as ArrayRef
        })
        .collect();
    let batch = arrow::record_batch::RecordBatch::try_new(schema.clone(), columns)?;
    Ok(DataFrame::new(schema, vec![batch]))
}

fn first_words(s: &str) -> String {
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}
