//! The option list of `COPY .. TO 'path' (options)`, as DuckDB spells it:
//!
//! ```sql
//! COPY (SELECT * FROM sales) TO 'out' (FORMAT parquet, PARTITION_BY (year, month),
//!     COMPRESSION snappy, ROW_GROUP_SIZE 100000, OVERWRITE);
//! COPY t TO 't.csv' (DELIMITER ';', HEADER false);
//! ```
//!
//! sqlparser knows PostgreSQL's COPY options only, so the list is taken
//! off the statement's text here and the rest goes to the parser.

use std::path::Path;

use sqlparser::dialect::GenericDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::{Result, SlothError};
use crate::io::{FileFormat, WriteOptions};

/// What a COPY's option list asks for.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct CopyOptions {
    /// `FORMAT`: else the file's extension decides.
    pub format: Option<FileFormat>,
    /// Everything else.
    pub write: WriteOptions,
}

/// One option: its name and its value's words (`PARTITION_BY (a, b)` has
/// two, `OVERWRITE` none).
type RawOption = (String, Vec<String>);

/// Splits a `COPY .. TO 'path' (options)` statement into its text
/// without the option list and the options; `None` when `sql` is not a
/// COPY with an option list.
pub(super) fn split(sql: &str) -> Result<Option<(String, CopyOptions)>> {
    let first = sql.split_whitespace().next().unwrap_or("");
    if !first.eq_ignore_ascii_case("copy") {
        return Ok(None);
    }
    let Ok(tokens) = Tokenizer::new(&GenericDialect {}, sql).tokenize() else {
        return Ok(None);
    };
    let Some((open, close)) = option_list(&tokens) else {
        return Ok(None);
    };
    let options = parse_options(&tokens[open + 1..close])?;
    let rest: String = tokens[..open]
        .iter()
        .chain(&tokens[close + 1..])
        .map(|t| t.to_string())
        .collect();
    Ok(Some((rest, resolve(options)?)))
}

/// The positions of the option list's parentheses: the `(` after the
/// string that follows the last top-level `TO`, and its `)`.
fn option_list(tokens: &[Token]) -> Option<(usize, usize)> {
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i], Token::Whitespace(_)))
        .collect();
    let mut depth = 0i32;
    let mut to = None;
    for (k, &i) in significant.iter().enumerate() {
        match &tokens[i] {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 0 && w.value.eq_ignore_ascii_case("to") => to = Some(k),
            _ => {}
        }
    }
    let k = to?;
    let path = *significant.get(k + 1)?;
    if !matches!(tokens[path], Token::SingleQuotedString(_)) {
        return None;
    }
    let open = *significant.get(k + 2)?;
    if tokens[open] != Token::LParen {
        return None;
    }
    let mut depth = 0;
    for &i in &significant[k + 2..] {
        match tokens[i] {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some((open, i));
                }
            }
            _ => {}
        }
    }
    None
}

/// `NAME [value | (v1, v2)]`, comma-separated.
fn parse_options(tokens: &[Token]) -> Result<Vec<RawOption>> {
    let mut options: Vec<RawOption> = Vec::new();
    let mut current: Option<RawOption> = None;
    let mut in_list = false;
    for t in tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))) {
        let word = match t {
            Token::Comma if !in_list => {
                options.extend(current.take());
                continue;
            }
            Token::Comma => continue,
            Token::LParen if current.is_some() && !in_list => {
                in_list = true;
                continue;
            }
            Token::RParen if in_list => {
                in_list = false;
                continue;
            }
            Token::Word(w) => w.value.clone(),
            Token::SingleQuotedString(s) => s.clone(),
            Token::Number(n, _) => n.clone(),
            Token::Eq => continue,
            other => {
                return Err(SlothError::SqlSyntax(format!(
                    "COPY options: unexpected '{other}'"
                )));
            }
        };
        match &mut current {
            None => current = Some((word.to_ascii_lowercase(), vec![])),
            Some((_, values)) => values.push(word),
        }
    }
    options.extend(current);
    Ok(options)
}

/// The options' meaning, or an error naming the one that is wrong.
fn resolve(options: Vec<RawOption>) -> Result<CopyOptions> {
    let mut copy = CopyOptions::default();
    for (name, values) in options {
        let one = || -> Result<&str> {
            match values.as_slice() {
                [v] => Ok(v.as_str()),
                _ => Err(SlothError::plan(format!(
                    "COPY option {name} takes one value"
                ))),
            }
        };
        let flag = || -> Result<bool> {
            match values.as_slice() {
                [] => Ok(true),
                [v] => match v.to_ascii_lowercase().as_str() {
                    "true" | "1" | "on" => Ok(true),
                    "false" | "0" | "off" => Ok(false),
                    _ => Err(SlothError::plan(format!(
                        "COPY option {name} is true or false"
                    ))),
                },
                _ => Err(SlothError::plan(format!(
                    "COPY option {name} is true or false"
                ))),
            }
        };
        match name.as_str() {
            "format" => copy.format = Some(format_named(one()?)?),
            "partition_by" if !values.is_empty() => {
                copy.write.partition_by = values.iter().map(|v| v.to_ascii_lowercase()).collect()
            }
            "compression" | "codec" => copy.write.compression = one()?.to_ascii_lowercase(),
            "row_group_size" => {
                copy.write.row_group_size = one()?.parse().map_err(|_| {
                    SlothError::plan("COPY option row_group_size is a number of rows")
                })?
            }
            "delimiter" | "delim" | "sep" => {
                copy.write.delimiter = match one()? {
                    "\\t" => b'\t',
                    d if d.len() == 1 => d.as_bytes()[0],
                    _ => return Err(SlothError::plan("COPY option delimiter is one character")),
                }
            }
            "header" => copy.write.header = flag()?,
            "overwrite" | "overwrite_or_ignore" => copy.write.overwrite = flag()?,
            _ => {
                return Err(SlothError::unsupported(format!(
                    "COPY option '{name}' (options: FORMAT, PARTITION_BY, COMPRESSION, \
                     ROW_GROUP_SIZE, DELIMITER, HEADER, OVERWRITE)"
                )));
            }
        }
    }
    Ok(copy)
}

/// The format a `FORMAT` option names.
pub(super) fn format_named(name: &str) -> Result<FileFormat> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "parquet" => FileFormat::Parquet,
        "csv" => FileFormat::Csv,
        "arrow" | "ipc" | "feather" => FileFormat::Ipc,
        "json" => FileFormat::Json,
        "ndjson" | "jsonl" => FileFormat::Ndjson,
        other => {
            return Err(SlothError::unsupported(format!(
                "COPY format '{other}' (parquet, csv, arrow, json, ndjson)"
            )));
        }
    })
}

/// The format `COPY` writes: its `FORMAT` option, else the path's
/// extension; a partitioned write without either is Parquet.
pub(super) fn copy_format(path: &Path, options: &CopyOptions) -> Result<FileFormat> {
    if let Some(f) = options.format {
        return Ok(f);
    }
    if let Some(f) = FileFormat::from_path(path) {
        return Ok(f);
    }
    if !options.write.partition_by.is_empty() {
        return Ok(FileFormat::Parquet);
    }
    Err(SlothError::plan(format!(
        "COPY to '{}': give (FORMAT ..) or a .parquet, .csv, .arrow, .json or .ndjson name",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duckdb_option_lists_come_off_the_statement() {
        let (rest, o) = split(
            "COPY (select * from t where s = 'to') TO 'out' (FORMAT parquet, \
             PARTITION_BY (year, Month), COMPRESSION snappy, ROW_GROUP_SIZE 1000, OVERWRITE)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(rest, "COPY (select * from t where s = 'to') TO 'out' ");
        assert_eq!(o.format, Some(FileFormat::Parquet));
        assert_eq!(o.write.partition_by, ["year", "month"]);
        assert_eq!(o.write.compression, "snappy");
        assert_eq!(o.write.row_group_size, 1000);
        assert!(o.write.overwrite);
        let (_, o) = split("copy t to 'x.csv' (DELIMITER ';', HEADER false);")
            .unwrap()
            .unwrap();
        assert_eq!((o.write.delimiter, o.write.header), (b';', false));
        assert_eq!(split("copy t to 'x.csv'").unwrap(), None);
        assert_eq!(split("select 1").unwrap(), None);
    }

    #[test]
    fn unknown_or_malformed_options_are_errors_naming_them() {
        let e = split("copy t to 'x' (SPEED fast)").unwrap_err().to_string();
        assert!(e.contains("'speed'"), "{e}");
        let e = split("copy t to 'x' (ROW_GROUP_SIZE lots)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("row_group_size"), "{e}");
        let e = split("copy t to 'x' (FORMAT xml)").unwrap_err().to_string();
        assert!(e.contains("'xml'"), "{e}");
    }
}
