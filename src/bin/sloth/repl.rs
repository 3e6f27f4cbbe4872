//! The interactive shell (`sloth sql` without `-c`/`-f`), and the same
//! loop over statements piped to standard input.
//!
//! On a terminal: a line editor with history, a banner, and Ctrl-C that
//! drops the statement being typed. Piped: no banner and no prompt, so the
//! output is the results alone; the exit status is non-zero when any
//! statement failed. Both take dot commands (`.help`) and statements
//! ending with `;`, several per line if need be.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use clap::ValueEnum;
use sloth::sql::SqlContext;
use sloth::{CancelToken, Result, SlothError};

use super::statements;
use super::{Destination, Format, TableShape, run_statement};

const HELP: &str = "\
.tables               list tables
.schema NAME          show a table's columns
.timer on|off         time each statement
.mode table|csv|json|ndjson  output format
.set NAME VALUE       change a setting (also SET name = value;)
.settings             show the settings (also SHOW ALL;)
.read FILE            run the statements of a file
.output [FILE]        write results to FILE (emptied first), or again to the screen
.maxrows N            rows a table shows (first and last halves; default 40)
.maxwidth N           characters a table cell shows (default 40)
SHOW TABLES; DESCRIBE name|query;
.quit                 leave";

/// Where lines come from.
enum Lines {
    /// A terminal, through the line editor.
    Terminal {
        editor: Box<rustyline::DefaultEditor>,
        history: Option<PathBuf>,
    },
    /// Piped or redirected input.
    Piped(std::io::Lines<std::io::StdinLock<'static>>),
}

/// What reading a line gave.
enum Line {
    Text(String),
    /// Ctrl-C: drop the statement being typed.
    Interrupted,
    End,
}

impl Lines {
    fn open() -> Result<Lines> {
        if !std::io::stdin().is_terminal() {
            return Ok(Lines::Piped(std::io::stdin().lock().lines()));
        }
        let mut editor = rustyline::DefaultEditor::new()
            .map_err(|e| SlothError::Io(std::io::Error::other(e.to_string())))?;
        let history = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".sloth_history"));
        if let Some(h) = &history {
            let _ = editor.load_history(h);
        }
        println!(
            "sloth {} — type .help for help, end statements with ';'",
            env!("CARGO_PKG_VERSION")
        );
        Ok(Lines::Terminal {
            editor: Box::new(editor),
            history,
        })
    }

    fn next(&mut self, continuing: bool) -> Line {
        match self {
            Lines::Terminal { editor, .. } => {
                let prompt = if continuing { "   ..> " } else { "sloth> " };
                match editor.readline(prompt) {
                    Ok(l) => Line::Text(l),
                    Err(rustyline::error::ReadlineError::Interrupted) => Line::Interrupted,
                    Err(_) => Line::End,
                }
            }
            Lines::Piped(lines) => match lines.next() {
                Some(Ok(l)) => Line::Text(l),
                _ => Line::End,
            },
        }
    }

    fn remember(&mut self, entry: &str) {
        if let Lines::Terminal { editor, .. } = self {
            let _ = editor.add_history_entry(entry);
        }
    }

    fn close(self) {
        if let Lines::Terminal {
            mut editor,
            history: Some(h),
        } = self
        {
            let _ = editor.save_history(&h);
        }
    }
}

/// The cancel token of the statement the interactive shell is running.
static RUNNING: Mutex<Option<CancelToken>> = Mutex::new(None);

/// Cancels the statement the interactive shell is running, if it is
/// running one (Ctrl-C then stops that statement, not the shell).
pub fn cancel_running_statement() -> bool {
    match RUNNING.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        Some(token) => {
            token.cancel();
            true
        }
        None => false,
    }
}

/// The shell's state between statements.
struct Shell {
    ctx: SqlContext,
    format: Format,
    shape: TableShape,
    timer: bool,
    failed: usize,
    /// At a terminal: Ctrl-C cancels a statement instead of ending the shell.
    interactive: bool,
    /// `.output FILE`: results go to this file instead of the screen.
    output: Option<std::fs::File>,
}

impl Shell {
    fn fail(&mut self, e: impl std::fmt::Display) {
        eprintln!("Error: {e}");
        self.failed += 1;
    }

    /// Runs a dot command; false for `.quit`.
    fn dot_command(&mut self, line: &str) -> bool {
        let mut parts = line.split_whitespace();
        match (parts.next(), parts.next()) {
            (Some(".quit" | ".exit"), _) => return false,
            (Some(".help"), _) => println!("{HELP}"),
            (Some(".tables"), _) => {
                println!("{}", self.ctx.table_names().join("\n"));
                for (name, why) in self.ctx.unreadable_tables() {
                    println!("{name} (unreadable: {why})");
                }
            }
            (Some(".schema"), Some(name)) => match self.ctx.table(name).and_then(|t| t.schema()) {
                Ok(s) => s
                    .fields()
                    .iter()
                    .for_each(|f| println!("{} {}", f.name(), f.data_type())),
                Err(e) => self.fail(e),
            },
            (Some(".timer"), Some(v)) => self.timer = v == "on",
            (Some(".set"), Some(name)) => {
                let value = parts.collect::<Vec<_>>().join(" ");
                if let Err(e) = self.ctx.config_mut().set(name, &value) {
                    self.fail(e);
                }
            }
            (Some(".read"), Some(path)) => match std::fs::read_to_string(path) {
                Ok(text) => self.statements(&text),
                Err(e) => self.fail(format!("cannot read '{path}': {e}")),
            },
            (Some(".output"), None) => self.output = None,
            (Some(".output"), Some(path)) => match std::fs::File::create(path) {
                Ok(file) => self.output = Some(file),
                Err(e) => self.fail(format!("cannot write '{path}': {e}")),
            },
            (Some(".settings"), _) => {
                for (name, value) in self.ctx.config().entries() {
                    println!("{name} = {value}");
                }
            }
            (Some(".mode"), Some(m)) => match Format::from_str(m, true) {
                Ok(Format::Parquet) | Err(_) => {
                    self.fail(format!("unknown mode '{m}' (table, csv, json, ndjson)"))
                }
                Ok(f) => self.format = f,
            },
            (Some(which @ (".maxrows" | ".maxwidth")), Some(n)) => match n.parse::<usize>() {
                Ok(n) if n >= 2 => match which {
                    ".maxrows" => self.shape.max_rows = n,
                    _ => self.shape.max_width = n,
                },
                _ => self.fail(format!("{which} takes a number of at least 2, got '{n}'")),
            },
            _ => self.fail(format!("unknown command '{line}'; try .help")),
        }
        true
    }

    fn statements(&mut self, text: &str) {
        for sql in statements::split(text) {
            let start = Instant::now();
            let cancel = CancelToken::new();
            self.ctx.set_cancel(cancel.clone());
            if self.interactive {
                *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = Some(cancel);
            }
            let to = match &mut self.output {
                Some(file) => Destination::Append(file),
                None => Destination::Stdout,
            };
            let result = run_statement(&mut self.ctx, sql, self.format, to, self.shape);
            RUNNING.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Err(e) = result {
                self.fail(e);
            }
            if self.timer {
                println!("Run Time: {:.3}s", start.elapsed().as_secs_f64());
            }
        }
    }
}

/// Reads and runs statements until `.quit` or the end of the input.
/// Returns false when input was piped and a statement failed (each error
/// was printed as it came), so the process can exit non-zero.
pub fn run(ctx: SqlContext, format: Format) -> Result<bool> {
    let mut lines = Lines::open()?;
    let mut shell = Shell {
        ctx,
        format,
        shape: TableShape::default(),
        timer: false,
        failed: 0,
        interactive: matches!(lines, Lines::Terminal { .. }),
        output: None,
    };
    let mut buffer = String::new();
    loop {
        let line = match lines.next(!buffer.is_empty()) {
            Line::Text(l) => l,
            Line::Interrupted => {
                buffer.clear();
                continue;
            }
            Line::End => break,
        };
        let trimmed = line.trim();
        if buffer.is_empty() && trimmed.starts_with('.') {
            lines.remember(trimmed);
            if !shell.dot_command(trimmed) {
                break;
            }
            continue;
        }
        buffer.push_str(&line);
        buffer.push('\n');
        if !statements::is_complete(&buffer) {
            continue;
        }
        let text = std::mem::take(&mut buffer);
        lines.remember(text.trim());
        shell.statements(&text);
    }
    // A last statement without its semicolon still runs.
    shell.statements(&buffer);
    let piped = matches!(lines, Lines::Piped(_));
    lines.close();
    // At a terminal each error was shown as it came; the shell ends well.
    Ok(shell.failed == 0 || !piped)
}
