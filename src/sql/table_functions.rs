//! Files named in SQL itself, as DuckDB reads them: the table functions
//! `read_parquet`, `read_csv` (with options), `read_json` / `read_ndjson`
//! and `read_ipc`, and a quoted path as a table (`FROM 'data/*.parquet'`,
//! `FROM "logs.csv"`).
//!
//! A path is a file, a directory (with its Hive partitions) or a glob, as
//! `--table` takes it ([`crate::io::paths`]); a list of paths
//! (`read_csv(['a.csv', 'b.csv'])`) is one table of all their files. The
//! setting `enable_external_access = false` refuses them all, so that a
//! query reads only the tables registered with its context.
//!
//! ```sql
//! SELECT * FROM read_csv('x.txt', delim = ';', header = false, nullstr = 'NA');
//! SELECT count(*) FROM 'sales/year=*/*.parquet' WHERE year = 2024;
//! SELECT * FROM read_csv('eu.csv', dateformat = '%d/%m/%Y');
//! SELECT * FROM read_parquet(['2023/*.parquet', '2024/*.parquet'], union_by_name = true);
//! ```

use sqlparser::ast::{
    self, BinaryOperator, FunctionArg, FunctionArgExpr, ObjectName, TableFunctionArgs, Value,
};
use sqlparser::tokenizer::{Token, Tokenizer, Word};

use crate::error::{Result, SlothError};
use crate::frame::LazyFrame;
use crate::io::{FileFormat, ReadOptions};
use crate::sql::SqlContext;

/// The format each table function reads; `None` for a name that is not one.
fn function_format(name: &str) -> Option<FileFormat> {
    Some(match name {
        "read_parquet" | "parquet_scan" => FileFormat::Parquet,
        "read_csv" | "read_csv_auto" => FileFormat::Csv,
        "read_json" | "read_json_auto" | "read_ndjson" | "read_ndjson_auto" => FileFormat::Ndjson,
        "read_ipc" | "read_arrow" => FileFormat::Ipc,
        _ => return None,
    })
}

/// The table a table function call reads; `None` when `name` is no table
/// function of this module.
pub(super) fn table_function(
    ctx: &SqlContext,
    name: &ObjectName,
    args: &TableFunctionArgs,
) -> Result<Option<LazyFrame>> {
    let function = name.to_string().to_ascii_lowercase();
    let Some(format) = function_format(&function) else {
        return Ok(None);
    };
    check_access(ctx, &function)?;
    let mut paths = Vec::new();
    let mut read = ReadOptions {
        format: Some(format),
        csv: ctx.csv.clone(),
        ..ReadOptions::default()
    };
    for arg in &args.args {
        match named(arg) {
            Some((option, value)) => set_option(&function, format, &mut read, &option, value)?,
            None if paths.is_empty() => paths = path_list(&function, arg)?,
            None => {
                return Err(SlothError::plan(format!(
                    "{function}: one path or list of paths, then name = value options"
                )));
            }
        }
    }
    if paths.is_empty() {
        return Err(SlothError::plan(format!(
            "{function} needs a path: {function}('file')"
        )));
    }
    LazyFrame::scan_paths(&paths, &read).map(Some)
}

/// The table a quoted name reads when it is a path rather than a table
/// (`FROM 'x.parquet'`, `FROM "logs/*.csv"`); `None` for a name that does
/// not look like one.
pub(super) fn quoted_path(ctx: &SqlContext, name: &ObjectName) -> Result<Option<LazyFrame>> {
    let [part] = name.0.as_slice() else {
        return Ok(None);
    };
    let Some(ident) = part.as_ident() else {
        return Ok(None);
    };
    let looks_like_path =
        ident.value.contains(['/', '.', '*', '?']) || std::path::Path::new(&ident.value).exists();
    if ident.quote_style.is_none() || !looks_like_path {
        return Ok(None);
    }
    check_access(ctx, &format!("FROM '{}'", ident.value))?;
    let read = ReadOptions {
        csv: ctx.csv.clone(),
        ..ReadOptions::default()
    };
    LazyFrame::scan_paths(std::slice::from_ref(&ident.value), &read).map(Some)
}

fn check_access(ctx: &SqlContext, what: &str) -> Result<()> {
    if ctx.config().enable_external_access {
        return Ok(());
    }
    Err(SlothError::plan(format!(
        "{what}: reading files from SQL is off (SET enable_external_access = true)"
    )))
}

/// `name = value` (or `name := value`, `name => value`): the option's
/// name and value.
fn named(arg: &FunctionArg) -> Option<(String, &ast::Expr)> {
    match arg {
        FunctionArg::Named {
            name,
            arg: FunctionArgExpr::Expr(value),
            ..
        } => Some((name.value.to_ascii_lowercase(), value)),
        FunctionArg::ExprNamed {
            name: ast::Expr::Identifier(name),
            arg: FunctionArgExpr::Expr(value),
            ..
        } => Some((name.value.to_ascii_lowercase(), value)),
        // Dialects without named arguments parse `delim = ';'` as a comparison.
        FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        })) => match left.as_ref() {
            ast::Expr::Identifier(name) => Some((name.value.to_ascii_lowercase(), right.as_ref())),
            _ => None,
        },
        _ => None,
    }
}

/// The path, or list of paths, of a table function's first argument.
fn path_list(function: &str, arg: &FunctionArg) -> Result<Vec<String>> {
    let not_a_path = || {
        SlothError::plan(format!(
            "{function}: the first argument is a path in quotes or a list of them, got '{arg}'"
        ))
    };
    let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg else {
        return Err(not_a_path());
    };
    match e {
        ast::Expr::Array(array) if !array.elem.is_empty() => array
            .elem
            .iter()
            .map(|e| text(e).ok_or_else(not_a_path))
            .collect(),
        e => Ok(vec![text(e).ok_or_else(not_a_path)?]),
    }
}

/// A quoted string literal's text.
fn text(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A Boolean option's value (`true`, `false`, `1`, `0`, 'true', ..).
fn boolean(function: &str, option: &str, value: &ast::Expr) -> Result<bool> {
    let word = match value {
        ast::Expr::Value(v) => match &v.value {
            Value::Boolean(b) => return Ok(*b),
            Value::Number(n, _) => n.clone(),
            Value::SingleQuotedString(s) => s.clone(),
            _ => String::new(),
        },
        ast::Expr::Identifier(i) => i.value.clone(),
        _ => String::new(),
    };
    match word.to_ascii_lowercase().as_str() {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(SlothError::plan(format!(
            "{function}: {option} is true or false, got '{value}'"
        ))),
    }
}

/// A one-character option's byte (`delim = ';'`, `delim = '\t'`).
fn character(function: &str, option: &str, value: &ast::Expr) -> Result<u8> {
    let bad = || {
        SlothError::plan(format!(
            "{function}: {option} is one character in quotes, got '{value}'"
        ))
    };
    let text = text(value).ok_or_else(bad)?;
    match text.as_str() {
        "\\t" => Ok(b'\t'),
        t if t.len() == 1 => Ok(t.as_bytes()[0]),
        _ => Err(bad()),
    }
}

/// Sets one `name = value` option of a table function call.
fn set_option(
    function: &str,
    format: FileFormat,
    read: &mut ReadOptions,
    option: &str,
    value: &ast::Expr,
) -> Result<()> {
    let csv = &mut read.csv;
    let string = |value: &ast::Expr| {
        text(value)
            .ok_or_else(|| SlothError::plan(format!("{function}: {option} is a string in quotes")))
    };
    match (format, option) {
        (_, "hive_partitioning") => read.hive_partitioning = boolean(function, option, value)?,
        (_, "union_by_name") => read.union_by_name = boolean(function, option, value)?,
        (FileFormat::Csv, "delim" | "sep" | "delimiter") => {
            csv.delimiter = character(function, option, value)?
        }
        (FileFormat::Csv, "header") => csv.has_header = boolean(function, option, value)?,
        (FileFormat::Csv, "quote") => csv.quote = character(function, option, value)?,
        (FileFormat::Csv, "escape") => csv.escape = Some(character(function, option, value)?),
        (FileFormat::Csv, "sample_size") => {
            csv.infer_rows = match value {
                ast::Expr::Value(v) => match &v.value {
                    Value::Number(n, _) => n.parse().ok().filter(|&n: &usize| n > 0),
                    _ => None,
                },
                _ => None,
            }
            .ok_or_else(|| {
                SlothError::plan(format!("{function}: {option} is a positive number of rows"))
            })?
        }
        // types = {'column': 'TYPE', ..}: declared types over inferred ones.
        (FileFormat::Csv, "types" | "dtypes" | "column_types") => {
            let ast::Expr::Dictionary(fields) = value else {
                return Err(SlothError::plan(format!(
                    "{function}: {option} is a struct of column types, such as {{'day': 'DATE'}}"
                )));
            };
            for field in fields {
                let name = text(&field.value).ok_or_else(|| {
                    SlothError::plan(format!(
                        "{function}: the type of '{}' is a string",
                        field.key
                    ))
                })?;
                let data_type = super::data_type_named(&name)
                    .map_err(|e| SlothError::plan(format!("{function}: {e}")))?;
                csv.types.push((field.key.value.clone(), data_type));
            }
        }
        (FileFormat::Csv, "nullstr" | "null") => csv.null_value = Some(string(value)?),
        (FileFormat::Csv, "dateformat" | "date_format") => csv.date_format = Some(string(value)?),
        (FileFormat::Csv, "timestampformat" | "timestamp_format") => {
            csv.timestamp_format = Some(string(value)?)
        }
        _ => {
            let known = match format {
                FileFormat::Csv => {
                    "delim, header, quote, escape, nullstr, sample_size, types, dateformat, \
                     timestampformat, hive_partitioning, union_by_name"
                }
                _ => "hive_partitioning, union_by_name",
            };
            return Err(SlothError::plan(format!(
                "{function}: unknown option '{option}' (options: {known})"
            )));
        }
    }
    Ok(())
}

/// `sql` with each single-quoted string that directly follows `FROM` or
/// `JOIN` turned into a quoted name (`FROM 'x.csv'` → `FROM "x.csv"`),
/// which the parser takes as a table; `None` when there is none.
pub(super) fn quote_file_names(sql: &str) -> Option<String> {
    if !sql.contains('\'') {
        return None;
    }
    let dialect = sqlparser::dialect::GenericDialect {};
    let mut tokens = Tokenizer::new(&dialect, sql).tokenize().ok()?;
    let mut changed = false;
    let mut previous: Option<usize> = None;
    for i in 0..tokens.len() {
        if matches!(tokens[i], Token::Whitespace(_)) {
            continue;
        }
        let after_from = previous.is_some_and(|p| match &tokens[p] {
            Token::Word(w) => {
                w.value.eq_ignore_ascii_case("from") || w.value.eq_ignore_ascii_case("join")
            }
            _ => false,
        });
        if after_from
            && let Token::SingleQuotedString(s) = &tokens[i]
            && !s.contains('"')
        {
            tokens[i] = Token::Word(Word {
                value: s.clone(),
                quote_style: Some('"'),
                keyword: sqlparser::keywords::Keyword::NoKeyword,
            });
            changed = true;
        }
        previous = Some(i);
    }
    changed.then(|| tokens.iter().map(|t| t.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_quoted_names_after_from_and_join_become_quoted_names() {
        assert_eq!(
            quote_file_names("select 'a' from 'x.csv' join 'y.csv' using (k) where s = 'z'")
                .as_deref(),
            Some("select 'a' from \"x.csv\" join \"y.csv\" using (k) where s = 'z'")
        );
        assert_eq!(quote_file_names("select 'a' from t"), None);
        assert_eq!(quote_file_names("select * from t"), None);
    }
}
