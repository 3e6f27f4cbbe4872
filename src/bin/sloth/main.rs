//! The `sloth` command line: SQL over CSV/Parquet/Arrow files, EXPLAIN,
//! profiles, and data generators. See `sloth --help`.

mod progress;
mod repl;
mod statements;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use sloth::io::FileFormat;
use sloth::sql::{SqlContext, SqlOutput};
use sloth::{DataFrame, Result, SessionConfig, SlothError};

// Columnar execution allocates and frees megabyte buffers per batch; glibc
// hands those back to the kernel (munmap) each time, and page faults took
// about 30% of TPC-H Q6 under `perf`. mimalloc reuses them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Keeps freed memory in the process instead of returning it to the
/// kernel (mimalloc 3.3 purges it after 1 s), unless `MIMALLOC_PURGE_DELAY`
/// says otherwise, or a query's reservations pass a quarter of its memory
/// limit (the library's pressure hook, [`sloth::memory::set_pressure_hook`]):
/// then freed memory goes back after 1 s, until they fall below an eighth.
/// The price of keeping it: the process keeps its peak footprint until it
/// exits (the REPL included), and a footprint that only grows does not
/// keep to a limit. Purging whenever a limit was set slowed queries far
/// below it: TPC-H SF 10 Q7 under `--memory-limit 4GB` (69 MiB reserved)
/// took 2.0-2.2 s against 1.6-1.9 s without the limit, freed pages
/// faulted back in zeroed. Under pressure, 1 s rather than 10 ms: a grace
/// join or aggregate frees one partition's tables and builds the next
/// one's within a second, reusing the memory. `benches/memory/large_keys.py`
/// under `--memory-limit 2GB`, two passes each: the 50M-key group-by
/// 7.1-8.1 s and 1.50 GB peak RSS with 1 s, 9.3-10.8 s and 1.40 GB with
/// 10 ms; the 100M x 100M join 19.3-20.1 s and 1.69-1.77 GB, against
/// 21.8-24.8 s and 1.55 GB. Never purging, the join's peak passed the
/// limit (2.0 GB).
///
/// A query that builds 10M-group tables frees and reallocates gigabytes, and
/// each purged page comes back as a fault that zeroes it. db-benchmark
/// group-by q10 (`sloth bench --runs 3`, three alternating pairs): median
/// 2.55-2.75 s and 350K page faults with the 1 s delay; 2.24-2.38 s and 26K
/// faults never purging.
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        purge_freed_memory(false);
        sloth::memory::set_pressure_hook(purge_freed_memory);
    }
    keep_c_heap_memory();
    no_transparent_huge_pages();
}

/// Transparent huge pages off for the process. mimalloc asks for them on
/// its arenas (`MADV_HUGEPAGE`), and then the first touch of any byte of a
/// 2 MiB region zeroes all of it (on a machine whose fresh pages cost about
/// 2 s of system time per GB, as this one's), stalling on compaction when
/// free memory is fragmented, and scattered small blocks each hold a huge
/// page resident. TPC-H SF 10, each query in a fresh process, 3 alternating
/// passes of the 22: total 24.1 s with them, 23.0 s without (q09 3.3 ->
/// 2.6 s; q01, q14 and q19 0.1 s slower); peak RSS lower on all 22 (summed
/// 7.1 -> 6.4 GB). Setting `MIMALLOC_ALLOW_THP` leaves the choice to
/// mimalloc.
#[cfg(target_os = "linux")]
fn no_transparent_huge_pages() {
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_some() {
        return;
    }
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and only sets a
    // flag of this process, which faults read from then on.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}

#[cfg(not(target_os = "linux"))]
fn no_transparent_huge_pages() {}

/// Returns freed memory to the kernel after 1 s while memory is
/// `pressed`, else never (see [`keep_freed_memory`]).
fn purge_freed_memory(pressed: bool) {
    // `mi_option_purge_delay` in mimalloc.h (v2 and v3 alike), which
    // libmimalloc-sys exposes only behind a feature needing another crate.
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    unsafe extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    let delay_ms = if pressed { 1000 } else { -1 };
    // SAFETY: sets an integer option of the allocator linked above;
    // mimalloc reads options atomically, so this is sound at any time.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, delay_ms) };
}

/// The same for the C heap, which the Parquet reader's zstd uses: each
/// column chunk's codec allocates its compression and decompression contexts
/// (a few hundred KB) with `malloc`, above glibc's mmap threshold, so every
/// chunk read mapped fresh pages, faulted them in zeroed and unmapped them.
/// Serving such blocks from the heap and not trimming it keeps them.
///
/// TPC-H Q9 at SF1 (`perf stat`, `sloth bench --runs 10`): 75K page faults
/// without, 1K with; system time 0.41-1.06 s without, 0.31-0.43 s with.
/// `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=...` overrides it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_c_heap_memory() {
    // mallopt's parameters in glibc's malloc.h.
    const M_TRIM_THRESHOLD: std::ffi::c_int = -1;
    const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
    unsafe extern "C" {
        fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
    }
    if std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc")) {
        return;
    }
    // SAFETY: called once at start-up, before any thread is spawned.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_c_heap_memory() {}

#[derive(Parser)]
#[command(
    name = "sloth",
    version,
    about = "A lazy, Arrow-native query engine: SQL over CSV/Parquet files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The examples `sloth sql --help` ends with.
const SQL_EXAMPLES: &str = "\
Examples:
  sloth sql --data data/tpch-sf0.01 -f queries/tpch/q01.sql
  sloth sql -c \"select * from 'logs/*.parquet' where level = 'error'\" --output errors.csv
  sloth sql -c \"select year, sum(amt) from 'sales' where year = 2024 group by year\"   # sales/year=2024/..
  sloth sql -c \"select * from read_csv('raw.txt', delim = ';', header = false, nullstr = 'NA')\"
  sloth sql --table t=big.parquet -c \"copy (select * from t) to 'out' (partition_by (year))\"
  sloth sql --data DIR        (an interactive shell; .help lists its commands)";

#[derive(Subcommand)]
enum Command {
    /// Run SQL (`-c` or `-f`), or start an interactive shell.
    #[command(after_help = SQL_EXAMPLES)]
    Sql {
        #[command(flatten)]
        source: Source,
        /// Output format (default: from the --output file's extension,
        /// .parquet, .csv, .json, .ndjson or .jsonl; else a table).
        #[arg(long, value_enum)]
        format: Option<Format>,
        /// Write the result to this file instead of stdout.
        #[arg(long)]
        output: Option<PathBuf>,
    },
    /// Show the logical, optimized and physical plans (`--analyze`: run and show metrics).
    Explain {
        #[command(flatten)]
        source: Source,
        /// Run the query and annotate the plan with rows and times.
        #[arg(long)]
        analyze: bool,
    },
    /// Run a query tuple-at-a-time and columnar, and compare them operator by operator.
    Profile {
        #[command(flatten)]
        source: Source,
        /// Read at most this many rows from each scan (both strategies; 0: all).
        #[arg(long, default_value_t = 1_000_000)]
        rowwise_limit: usize,
        /// Also time the columnar executor with fusion (scan pipelines folded into aggregates).
        #[arg(long)]
        fusion: bool,
        /// Write the figures as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Draw the figures as an SVG bar chart.
        #[arg(long)]
        svg: Option<PathBuf>,
    },
    /// Time SQL files in this process: a warm-up, then `--runs` hot runs each (median).
    Bench {
        /// Directories of tables, as for `sql`.
        #[arg(long)]
        data: Vec<PathBuf>,
        /// SQL files to run (a directory: all its *.sql files).
        #[arg(required = true)]
        queries: Vec<PathBuf>,
        /// Timed runs per query.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Write the timings as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write each query's result as CSV into this directory.
        #[arg(long)]
        results: Option<PathBuf>,
        /// Front end: the files' SQL, or the same questions written with the
        /// LazyFrame API (`sloth::queries`; the file's folder and name pick one).
        #[arg(long, value_enum, default_value = "sql")]
        api: Api,
        /// Plan the queries, then run them on request, one process for all
        /// (how benches/compare drives sloth, like the engines it compares):
        /// stdin lines `warm NAME` (runs the query named after its file's
        /// stem, writes its result under --results) and `time NAME` each get
        /// a JSON line `{"s":SECONDS,"rows":N}`; `quit` gets `{"peak_rss_mb":MB}`.
        #[arg(long)]
        serve: bool,
        #[command(flatten)]
        settings: SessionFlags,
    },
    /// Generate datasets.
    #[command(subcommand)]
    Gen(Gen),
    /// GPU size sweep: group-by sum on CPU and GPU, 1e5 rows up to --max-rows.
    GpuSweep {
        /// Largest input.
        #[arg(long, default_value_t = 100_000_000)]
        max_rows: usize,
    },
    /// Run a Ballista scheduler that knows sloth's functions (feature `ballista`).
    #[cfg(feature = "ballista")]
    Scheduler {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
    },
    /// Run a Ballista executor that knows sloth's functions (feature `ballista`).
    #[cfg(feature = "ballista")]
    Executor {
        /// The scheduler to register with.
        #[arg(long, value_name = "URL", default_value = "df://127.0.0.1:50050")]
        scheduler: String,
        /// Host to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        bind_host: String,
        /// Port of the Arrow Flight service other executors fetch shuffle data from.
        #[arg(long, default_value_t = 50051)]
        port: u16,
        /// Port of the gRPC service.
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Tasks run at once (default: one per core).
        #[arg(long, default_value_t = 0)]
        slots: usize,
        /// Directory for shuffle files (default: one under the system's temp directory).
        #[arg(long, value_name = "DIR")]
        work_dir: Option<PathBuf>,
    },
}

#[derive(Args)]
struct Source {
    /// A directory whose *.parquet, *.csv, *.arrow and *.json/.ndjson files become tables named
    /// after their stems, and whose subdirectories of key=value partitions become tables named
    /// after them.
    #[arg(long)]
    data: Vec<PathBuf>,
    /// A table from a file, a directory of files, or a glob: NAME=PATH
    /// (`--table logs='logs/*.parquet'`).
    #[arg(long)]
    table: Vec<String>,
    /// CSV field separator (one character; `tab` or `\t` for a tab).
    #[arg(long)]
    csv_delimiter: Option<String>,
    /// CSV files have no header line (columns are named column_1, ..).
    #[arg(long)]
    csv_no_header: bool,
    /// CSV quote character.
    #[arg(long)]
    csv_quote: Option<String>,
    /// CSV escape character inside quoted fields (default: a doubled quote).
    #[arg(long)]
    csv_escape: Option<String>,
    /// A CSV field spelt so is a null (e.g. NA), besides empty fields.
    #[arg(long)]
    csv_null: Option<String>,
    /// A CSV column's type instead of the inferred one, COLUMN=TYPE
    /// (e.g. day=DATE, zip=VARCHAR); repeat for several.
    #[arg(long = "csv-type", value_name = "COLUMN=TYPE")]
    csv_types: Vec<String>,
    /// How CSV dates are written, in strftime codes (e.g. %d/%m/%Y); text
    /// columns whose values all match become DATE columns.
    #[arg(long, value_name = "FORMAT")]
    csv_date_format: Option<String>,
    /// How CSV timestamps are written, in strftime codes (e.g. '%d/%m/%Y %H:%M').
    #[arg(long, value_name = "FORMAT")]
    csv_timestamp_format: Option<String>,
    /// SQL text.
    #[arg(short = 'c', long = "command")]
    command: Option<String>,
    /// A file of SQL.
    #[arg(short = 'f', long = "file")]
    file: Option<PathBuf>,
    #[command(flatten)]
    settings: SessionFlags,
}

/// The session's settings (`sloth::SessionConfig`): the flags override
/// the `SLOTH_<SETTING>` environment variables, which override the
/// defaults.
#[derive(Args)]
struct SessionFlags {
    /// Where group-by and join operators run: cpu, gpu (CPU fallback when
    /// it cannot), auto (the GPU when present and the cost model expects a
    /// gain), or emulate (the GPU kernels' CPU port). Default: auto.
    #[arg(long)]
    device: Option<String>,
    /// Worker threads per query (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Switch the optimizer off.
    #[arg(long)]
    no_optimize: bool,
    /// Switch one optimizer rule off (repeatable).
    #[arg(long)]
    disable_rule: Vec<String>,
    #[arg(long, value_name = "SIZE", help = memory_limit_help())]
    memory_limit: Option<String>,
    /// Directory for spill files (default: the system's temp directory).
    #[arg(long, value_name = "DIR")]
    temp_dir: Option<String>,
    /// How spill files are compressed: none (default), lz4 or zstd.
    #[arg(long, value_name = "CODEC")]
    spill_compression: Option<String>,
    /// What runs the optimized plan: sloth (default), datafusion (a build
    /// with the `datafusion` feature) or ballista (feature `ballista`).
    #[arg(long)]
    engine: Option<String>,
    /// The Ballista scheduler of `--engine ballista`, df://HOST:PORT
    /// (default: a cluster started in this process for each query).
    #[arg(long, value_name = "URL")]
    scheduler: Option<String>,
}

/// `--memory-limit`'s help, with this machine's default.
fn memory_limit_help() -> String {
    let default = match sloth::memory::default_memory_limit() {
        u64::MAX => "no limit (the system's memory is unknown)".to_string(),
        bytes => format!(
            "{}, 80% of this machine's",
            sloth::memory::format_bytes(bytes)
        ),
    };
    format!(
        "Memory a query may hold before its sorts, aggregates and joins spill to disk: \
         4GB, 512MiB, 50% (default: {default})"
    )
}

impl SessionFlags {
    fn config(&self) -> Result<SessionConfig> {
        let mut config = SessionConfig::from_env()?;
        if let Some(device) = &self.device {
            config.set("device", device)?;
        }
        if let Some(threads) = self.threads {
            config.threads = threads;
        }
        if self.no_optimize {
            config.optimizer.off = true;
        }
        config
            .optimizer
            .disabled
            .extend(self.disable_rule.iter().cloned());
        if let Some(limit) = &self.memory_limit {
            config.set("memory_limit", limit)?;
        }
        if let Some(dir) = &self.temp_dir {
            config.set("temp_dir", dir)?;
        }
        if let Some(codec) = &self.spill_compression {
            config.set("spill_compression", codec)?;
        }
        if let Some(engine) = &self.engine {
            config.set("engine", engine)?;
        }
        if let Some(url) = &self.scheduler {
            config.set("scheduler", url)?;
        }
        Ok(config)
    }
}

#[derive(Subcommand)]
enum Gen {
    /// TPC-H tables (one file per table).
    Tpch {
        /// Scale factor (1 = about 1 GB of CSV).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// File format.
        #[arg(long, default_value = "parquet")]
        format: String,
    },
    /// db-benchmark group-by table.
    H2oGroupby {
        /// Rows.
        #[arg(long, default_value_t = 10_000_000)]
        rows: usize,
        /// Groups per low-cardinality id.
        #[arg(long, default_value_t = 100)]
        groups: usize,
        /// Output file (.parquet or .csv).
        #[arg(long)]
        out: PathBuf,
    },
    /// db-benchmark join tables x, small, medium, big.
    H2oJoin {
        /// Rows of x.
        #[arg(long, default_value_t = 10_000_000)]
        rows: usize,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Api {
    Sql,
    Lazy,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Table,
    Csv,
    /// One JSON array of row objects.
    Json,
    /// One JSON object per line (newline-delimited JSON).
    Ndjson,
    Parquet,
    /// Arrow IPC file.
    Arrow,
}

impl Format {
    /// The file format this is, unless it is the text table.
    fn file_format(self) -> Option<FileFormat> {
        match self {
            Format::Table => None,
            Format::Csv => Some(FileFormat::Csv),
            Format::Json => Some(FileFormat::Json),
            Format::Ndjson => Some(FileFormat::Ndjson),
            Format::Parquet => Some(FileFormat::Parquet),
            Format::Arrow => Some(FileFormat::Ipc),
        }
    }
}

fn context(source: &Source) -> Result<SqlContext> {
    let mut ctx = SqlContext::new()
        .with_config(source.settings.config()?)
        .with_csv_options(csv_options(source)?);
    for dir in &source.data {
        ctx.register_dir(dir)?;
    }
    for t in &source.table {
        let (name, path) = t
            .split_once('=')
            .ok_or_else(|| SlothError::plan(format!("--table expects NAME=PATH, got '{t}'")))?;
        ctx.register_file(name, path)?;
    }
    Ok(ctx)
}

/// One byte of a CSV option (`tab` and `\t` name the tab).
fn csv_char(flag: &str, value: &str) -> Result<u8> {
    match value {
        "tab" | "\\t" | "\t" => Ok(b'\t'),
        v if v.len() == 1 => Ok(v.as_bytes()[0]),
        v => Err(SlothError::Config(format!(
            "--{flag} takes one ASCII character, got '{v}'"
        ))),
    }
}

fn csv_options(source: &Source) -> Result<sloth::io::CsvOptions> {
    let mut options = sloth::io::CsvOptions {
        has_header: !source.csv_no_header,
        null_value: source.csv_null.clone(),
        date_format: source.csv_date_format.clone(),
        timestamp_format: source.csv_timestamp_format.clone(),
        ..Default::default()
    };
    if let Some(d) = &source.csv_delimiter {
        options.delimiter = csv_char("csv-delimiter", d)?;
    }
    if let Some(q) = &source.csv_quote {
        options.quote = csv_char("csv-quote", q)?;
    }
    if let Some(e) = &source.csv_escape {
        options.escape = Some(csv_char("csv-escape", e)?);
    }
    for declared in &source.csv_types {
        let (column, name) = declared.split_once('=').ok_or_else(|| {
            SlothError::plan(format!("--csv-type takes COLUMN=TYPE, got '{declared}'"))
        })?;
        let data_type = sloth::sql::data_type_named(name.trim())
            .map_err(|e| SlothError::plan(format!("--csv-type {declared}: {e}")))?;
        options.types.push((column.trim().to_string(), data_type));
    }
    Ok(options)
}

fn query_text(source: &Source) -> Result<Option<String>> {
    match (&source.command, &source.file) {
        (Some(_), Some(_)) => Err(SlothError::plan("give either -c or -f, not both")),
        (Some(c), None) => Ok(Some(c.clone())),
        (None, Some(f)) => {
            std::fs::read_to_string(f)
                .map(Some)
                .map_err(|e| SlothError::FileNotFound {
                    path: f.display().to_string(),
                    reason: e.to_string(),
                })
        }
        (None, None) => Ok(None),
    }
}

/// How much of a result a table shows: rows (the first and last halves)
/// and characters per cell (the REPL's `.maxrows` and `.maxwidth`).
#[derive(Debug, Clone, Copy)]
pub struct TableShape {
    max_rows: usize,
    max_width: usize,
}

impl Default for TableShape {
    fn default() -> Self {
        TableShape {
            max_rows: 40,
            max_width: sloth::frame::MAX_CELL,
        }
    }
}

fn render(df: &DataFrame, format: Format, shape: TableShape) -> Result<String> {
    Ok(match format {
        Format::Table => df.to_table_string_with(shape.max_rows, shape.max_width),
        Format::Csv => {
            let mut buf = Vec::new();
            {
                let mut w = arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(&mut buf);
                for b in df.batches() {
                    w.write(&sloth::io::csv_ready(b)?)?;
                }
                if df.batches().is_empty() {
                    w.write(&sloth::io::csv_ready(
                        &arrow::record_batch::RecordBatch::new_empty(df.schema().clone()),
                    )?)?;
                }
            }
            String::from_utf8_lossy(&buf).into_owned()
        }
        Format::Ndjson => {
            let mut buf = Vec::new();
            {
                let mut w = arrow::json::LineDelimitedWriter::new(&mut buf);
                for b in df.batches() {
                    w.write(b)?;
                }
                w.finish()?;
            }
            String::from_utf8_lossy(&buf).into_owned()
        }
        Format::Json => {
            let mut buf = Vec::new();
            {
                let mut w = arrow::json::ArrayWriter::new(&mut buf);
                for b in df.batches() {
                    w.write(b)?;
                }
                w.finish()?;
            }
            let s = String::from_utf8_lossy(&buf).into_owned();
            if s.is_empty() {
                "[]\n".to_string()
            } else {
                s + "\n"
            }
        }
        Format::Parquet | Format::Arrow => {
            return Err(SlothError::plan(
                "--format parquet and arrow need --output FILE",
            ));
        }
    })
}

/// Where a statement's result goes.
enum Destination<'a> {
    /// Printed to standard output.
    Stdout,
    /// A file written whole and atomically (`--output`), in the format its
    /// extension or `--format` names.
    File(&'a PathBuf),
    /// Appended as text to an open file (the shell's `.output FILE`).
    Append(&'a mut std::fs::File),
}

fn emit(df: &DataFrame, format: Format, to: Destination, shape: TableShape) -> Result<()> {
    match (format.file_format(), to) {
        (Some(file_format), Destination::File(path)) => {
            sloth::io::write_file(path, file_format, df.schema(), df.batches())
        }
        (_, Destination::File(path)) => {
            sloth::io::write_bytes(path, render(df, format, shape)?.as_bytes())
        }
        (_, to) => {
            let mut text = render(df, format, shape)?;
            if format == Format::Table {
                text.push('\n');
            }
            write_text(to, &text)
        }
    }
}

/// Writes text to standard output or an appended file; a closed pipe
/// (`sloth ... | head`) is not an error.
fn write_text(to: Destination, text: &str) -> Result<()> {
    use std::io::Write;
    let written = match to {
        Destination::Append(file) => file.write_all(text.as_bytes()),
        _ => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).and_then(|_| out.flush())
        }
    };
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Writes to standard output ([`write_text`]).
fn write_stdout(text: &str) -> Result<()> {
    write_text(Destination::Stdout, text)
}

/// The format an output file's extension names; a table otherwise.
fn output_format(output: Option<&Path>) -> Format {
    match output.and_then(FileFormat::from_path) {
        Some(FileFormat::Parquet) => Format::Parquet,
        Some(FileFormat::Csv) => Format::Csv,
        Some(FileFormat::Json) => Format::Json,
        Some(FileFormat::Ndjson) => Format::Ndjson,
        Some(FileFormat::Ipc) => Format::Arrow,
        None => Format::Table,
    }
}

/// Runs every statement of `sql` in order, stopping at the first error;
/// only a single statement may write to `output`.
fn run_statements(
    ctx: &mut SqlContext,
    sql: &str,
    format: Format,
    output: Option<&PathBuf>,
) -> Result<()> {
    let all = statements::split(sql);
    let shape = TableShape::default();
    match (all.len(), output) {
        (0, _) => Err(SlothError::SqlSyntax("no statement given".into())),
        (1, Some(path)) => run_statement(ctx, all[0], format, Destination::File(path), shape),
        (n, Some(_)) => Err(SlothError::plan(format!(
            "--output takes one statement's result, got {n} statements"
        ))),
        (_, None) => all
            .into_iter()
            .try_for_each(|s| run_statement(ctx, s, format, Destination::Stdout, shape)),
    }
}

fn run_statement(
    ctx: &mut SqlContext,
    sql: &str,
    format: Format,
    to: Destination,
    shape: TableShape,
) -> Result<()> {
    let progress = progress::Progress::start(ctx.cancel_token());
    // A query into a file streams into it.
    if let (Destination::File(path), Some(file_format)) = (&to, format.file_format())
        && let Some(frame) = ctx.plan_if_query(sql)?
    {
        frame.sink(path, file_format)?;
        return Ok(());
    }
    let result = ctx.execute_mut(sql)?;
    // The progress bar goes before the result is printed.
    drop(progress);
    match result {
        SqlOutput::Frame(df) => emit(&df, format, to, shape),
        SqlOutput::Text(t) => write_text(to, &format!("{t}\n")),
        SqlOutput::Done => Ok(()),
    }
}

fn generate(g: Gen) -> Result<()> {
    match g {
        Gen::Tpch { scale, out, format } => {
            let bar = indicatif::ProgressBar::new(sloth::datagen::TPCH_TABLES.len() as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} tables {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            sloth::datagen::write_tpch(scale, &out, &format, |t| {
                bar.set_message(t.to_string());
                bar.inc(1);
            })?;
            bar.finish_and_clear();
            eprintln!("wrote TPC-H SF {scale} to {}", out.display());
        }
        Gen::H2oGroupby { rows, groups, out } => {
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            let batches = sloth::datagen::h2o_groupby(rows, groups)?;
            let df = DataFrame::from_batches(batches)?;
            write_by_extension(&df, &out)?;
            eprintln!("wrote {rows} rows to {}", out.display());
        }
        Gen::H2oJoin { rows, out } => {
            std::fs::create_dir_all(&out)?;
            for (name, batches) in sloth::datagen::h2o_join(rows)? {
                DataFrame::from_batches(batches)?
                    .write_parquet(out.join(format!("{name}.parquet")))?;
            }
            eprintln!("wrote x, small, medium, big to {}", out.display());
        }
    }
    Ok(())
}

fn bench(
    data: &[PathBuf],
    (queries, api): (&[PathBuf], Api),
    (runs, serve): (usize, bool),
    (json, results): (Option<PathBuf>, Option<PathBuf>),
    config: SessionConfig,
) -> Result<()> {
    let mut ctx = SqlContext::new().with_config(config);
    for d in data {
        ctx.register_dir(d)?;
    }
    let mut files = Vec::new();
    for q in queries {
        if q.is_dir() {
            let mut more: Vec<PathBuf> = std::fs::read_dir(q)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "sql"))
                .collect();
            more.sort();
            files.extend(more);
        } else {
            files.push(q.clone());
        }
    }
    if let Some(dir) = &results {
        std::fs::create_dir_all(dir)?;
    }
    let plan = |f: &PathBuf| -> Result<sloth::LazyFrame> {
        match api {
            Api::Lazy => sloth::queries::lazy_query_for_file(&ctx, f),
            Api::Sql => {
                let sql = std::fs::read_to_string(f).map_err(|e| SlothError::FileNotFound {
                    path: f.display().to_string(),
                    reason: e.to_string(),
                })?;
                ctx.sql(sql.trim().trim_end_matches(';'))
            }
        }
    };
    let stem = |f: &PathBuf| {
        f.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    if serve {
        // A query that does not plan is an error answered when it is asked for.
        let planned: Vec<_> = files.iter().map(|f| (stem(f), plan(f))).collect();
        return serve_bench(&planned, results.as_deref());
    }
    // Every query is planned before any runs, so a bad one (a missing
    // file, bad SQL, a question without a LazyFrame version) fails before
    // the table starts.
    let mut planned = Vec::with_capacity(files.len());
    for f in &files {
        planned.push((stem(f), plan(f)?));
    }
    let mut entries = Vec::new();
    let mut total = 0.0;
    println!("{:<24} {:>10} {:>10}", "query", "median s", "rows");
    for (name, lf) in &planned {
        let df = lf.collect()?; // warm-up
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs.max(1) {
            let start = Instant::now();
            let out = lf.collect()?;
            times.push(start.elapsed().as_secs_f64());
            std::hint::black_box(out);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        total += median;
        println!("{name:<24} {median:>10.4} {:>10}", df.num_rows());
        if let Some(dir) = &results {
            df.write_csv(dir.join(format!("{name}.csv")))?;
        }
        let runs_json: Vec<String> = times.iter().map(|t| format!("{t:.6}")).collect();
        entries.push(format!(
            "{{\"query\":\"{name}\",\"median_s\":{median:.6},\"runs_s\":[{}],\"rows\":{}}}",
            runs_json.join(","),
            df.num_rows()
        ));
    }
    println!("{:<24} {total:>10.4}", "total");
    if let Some(path) = json {
        std::fs::write(path, format!("[{}]\n", entries.join(",")))?;
    }
    Ok(())
}

/// `sloth bench --serve`: runs the planned queries as stdin asks (see the
/// flag's help), answering each request with one JSON line on stdout.
fn serve_bench(
    planned: &[(String, Result<sloth::LazyFrame>)],
    results: Option<&std::path::Path>,
) -> Result<()> {
    use std::io::{BufRead, Write};
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let (cmd, name) = line.trim().split_once(' ').unwrap_or((line.trim(), ""));
        let reply = match cmd {
            "quit" => {
                writeln!(out, "{{\"peak_rss_mb\":{:.1}}}", peak_rss_mb())?;
                return Ok(());
            }
            "warm" | "time" => match planned.iter().find(|(n, _)| n == name) {
                None => json_error(&format!("no query named '{name}'")),
                Some((_, Err(e))) => json_error(&e.to_string()),
                Some((_, Ok(lf))) => {
                    let start = Instant::now();
                    match lf.collect() {
                        Err(e) => json_error(&e.to_string()),
                        Ok(df) => {
                            let s = start.elapsed().as_secs_f64();
                            if let (Some(dir), "warm") = (results, cmd) {
                                df.write_csv(dir.join(format!("{name}.csv")))?;
                            }
                            format!("{{\"s\":{s:.6},\"rows\":{}}}", df.num_rows())
                        }
                    }
                }
            },
            other => json_error(&format!("unknown request '{other}': warm, time or quit")),
        };
        writeln!(out, "{reply}")?;
        out.flush()?;
    }
    Ok(())
}

/// `{"error":MESSAGE}`, the message's quotes and backslashes escaped.
fn json_error(message: &str) -> String {
    let escaped = message
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', " ");
    format!("{{\"error\":\"{escaped}\"}}")
}

/// The process's peak resident memory (`VmHWM`), in MB; 0 where unknown.
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn write_by_extension(df: &DataFrame, out: &std::path::Path) -> Result<()> {
    match out.extension().and_then(|e| e.to_str()) {
        Some("csv") => df.write_csv(out),
        Some("arrow") => df.write_ipc(out),
        _ => df.write_parquet(out),
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Sql {
            source,
            format,
            output,
        } => {
            let mut ctx = context(&source)?;
            let format = format.unwrap_or_else(|| output_format(output.as_deref()));
            match query_text(&source)? {
                Some(sql) => run_statements(&mut ctx, &sql, format, output.as_ref()),
                None => {
                    if !repl::run(ctx, format)? {
                        // A piped script had errors, each printed already.
                        use std::io::Write;
                        let _ = std::io::stdout().flush();
                        std::process::exit(1);
                    }
                    Ok(())
                }
            }
        }
        Command::Explain { source, analyze } => {
            let ctx = context(&source)?;
            let sql = query_text(&source)?
                .ok_or_else(|| SlothError::plan("give a query with -c or -f"))?;
            let lf = ctx.sql(sql.trim().trim_end_matches(';'))?;
            println!(
                "{}",
                if analyze {
                    lf.profile()?
                } else {
                    lf.explain(true)?
                }
            );
            Ok(())
        }
        Command::Profile {
            source,
            rowwise_limit,
            fusion,
            json,
            svg,
        } => {
            let ctx = context(&source)?;
            let sql = query_text(&source)?
                .ok_or_else(|| SlothError::plan("give a query with -c or -f"))?;
            let lf = ctx.sql(sql.trim().trim_end_matches(';'))?;
            let options = sloth::profile::ProfileOptions {
                row_limit: (rowwise_limit > 0).then_some(rowwise_limit),
                fusion,
            };
            let p = lf.profile_executors(&options)?;
            write_stdout(&p.to_text())?;
            if let Some(path) = json {
                std::fs::write(&path, p.to_json())?;
            }
            if let Some(path) = svg {
                std::fs::write(&path, p.to_svg())?;
            }
            Ok(())
        }
        Command::Bench {
            data,
            queries,
            runs,
            json,
            results,
            api,
            serve,
            settings,
        } => bench(
            &data,
            (&queries, api),
            (runs, serve),
            (json, results),
            settings.config()?,
        ),
        Command::Gen(g) => generate(g),
        Command::GpuSweep { max_rows } => sloth::queries::gpu_sweep::run(max_rows),
        #[cfg(feature = "ballista")]
        Command::Scheduler { bind } => {
            sloth::cluster::serve_scheduler(&sloth::cluster::SchedulerOptions { bind })
        }
        #[cfg(feature = "ballista")]
        Command::Executor {
            scheduler,
            bind_host,
            port,
            grpc_port,
            slots,
            work_dir,
        } => sloth::cluster::serve_executor(&sloth::cluster::ExecutorOptions {
            scheduler: sloth::SessionConfig::new()
                .with_scheduler(&scheduler)?
                .scheduler
                .unwrap_or(scheduler),
            bind_host,
            port,
            grpc_port,
            slots,
            work_dir,
        }),
    }
}

/// A write past the file-size limit (`ulimit -f`) then fails with EFBIG,
/// reported as a one-line error after the partial output is removed,
/// instead of SIGXFSZ killing the process and leaving its temporary file.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn report_file_size_limit_as_an_error() {
    const SIGXFSZ: i32 = 25;
    const SIG_IGN: usize = 1;
    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    // SAFETY: ignoring a signal installs no handler code.
    unsafe {
        signal(SIGXFSZ, SIG_IGN);
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
fn report_file_size_limit_as_an_error() {}

fn main() -> ExitCode {
    keep_freed_memory();
    report_file_size_limit_as_an_error();
    // A panic is reported as one `Error: internal error: ..` line (queries
    // catch their own; this catches the rest), not a message and backtrace;
    // RUST_BACKTRACE brings Rust's report back for debugging.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            report(info);
        }
    }));
    let cli = Cli::parse();
    // Ctrl-C while the interactive shell runs a statement cancels that
    // statement, and the shell goes on. Otherwise it ends the process (the
    // shell's prompt reads its own Ctrl-C); its spill files and any
    // partial output go first. 130: ended by SIGINT.
    let _ = ctrlc::set_handler(|| {
        if repl::cancel_running_statement() {
            return;
        }
        sloth::memory::remove_spill_dirs();
        sloth::io::remove_partial_outputs();
        std::process::exit(130);
    });
    // Planning and evaluating deep expressions recurse: the work runs on a
    // thread with a large stack, and so do the worker threads.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(sloth::config::WORKER_STACK_BYTES)
        .build_global();
    match sloth::config::on_large_stack(|| SlothError::catching_panics(|| run(cli))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}
