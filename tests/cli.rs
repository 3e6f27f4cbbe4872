//! The `sloth` binary: exit codes, one-line errors, formats, and the REPL
//! driven through piped stdin.

use std::io::Write;
use std::process::{Command, Stdio};

fn sloth() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sloth"))
}

/// Fails the test with the command's stderr unless it exited 0.
fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `cmd` with `input` on its stdin; returns what it wrote and its status.
fn with_stdin(cmd: &mut Command, input: &[u8]) -> std::process::Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn csv_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.csv"),
        "id,name,score\n1,ann,3.5\n2,bob,\n3,cid,1.0\n",
    )
    .unwrap();
    dir
}

#[test]
fn sql_over_a_csv_directory_in_every_format() {
    let dir = csv_dir();
    let run = |fmt: &str| {
        let out = sloth()
            .args(["sql", "--data"])
            .arg(dir.path())
            .args([
                "--format",
                fmt,
                "-c",
                "select name, score from t where id >= 2 order by id",
            ])
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(run("csv"), "name,score\nbob,\ncid,1.0\n");
    assert_eq!(
        run("json"),
        "[{\"name\":\"bob\"},{\"name\":\"cid\",\"score\":1.0}]\n"
    );
    let table = run("table");
    assert!(
        table.contains("│ cid  ┆ 1.0     │")
            && table.contains("│ bob  ┆ NULL    │")
            && table.contains("Float64")
            && table.ends_with("2 rows\n"),
        "{table}"
    );
    // Parquet output, read back.
    let out_file = dir.path().join("out.parquet");
    let st = sloth()
        .args(["sql", "--table"])
        .arg(format!("t={}", dir.path().join("t.csv").display()))
        .args(["--format", "parquet", "--output"])
        .arg(&out_file)
        .args(["-c", "select id from t"])
        .status()
        .unwrap();
    assert!(st.success());
    let back = sloth()
        .args(["sql", "--table"])
        .arg(format!("o={}", out_file.display()))
        .args(["--format", "csv", "-c", "select sum(id) as s from o"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(back.stdout).unwrap(), "s\n6\n");
}

#[test]
fn bad_input_exits_non_zero_with_one_line() {
    let dir = csv_dir();
    let bad_dir = tempfile::tempdir().unwrap();
    let bad = bad_dir.path().join("bad.csv");
    std::fs::write(&bad, "a,b\n1,2\n3,x,4\n").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "sql".into(),
                "--table".into(),
                "t=/no/such.csv".into(),
                "-c".into(),
                "select 1".into(),
            ],
            "/no/such.csv",
        ),
        (
            vec![
                "sql".into(),
                "--data".into(),
                dir.path().display().to_string(),
                "-c".into(),
                "select nope from t".into(),
            ],
            "unknown column 'nope'",
        ),
        (
            vec![
                "sql".into(),
                "--table".into(),
                format!("bad={}", bad.display()),
                "-c".into(),
                "select * from bad".into(),
            ],
            "malformed CSV",
        ),
        (
            vec![
                "sql".into(),
                "--data".into(),
                dir.path().display().to_string(),
                "-c".into(),
                "select from where".into(),
            ],
            "Line: 1",
        ),
        (
            vec![
                "sql".into(),
                "--data".into(),
                dir.path().display().to_string(),
                "-c".into(),
                "select * from zz".into(),
            ],
            "registered tables: t",
        ),
        (
            vec![
                "sql".into(),
                "--data".into(),
                dir.path().display().to_string(),
                "--disable-rule".into(),
                "nope".into(),
                "-c".into(),
                "select * from t".into(),
            ],
            "unknown optimizer rule",
        ),
    ];
    for (args, needle) in cases {
        let out = sloth().args(&args).output().unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// One malformed file in a `--data` directory does not stop queries over
/// the others; a query that names it gets its error.
/// Past the file-size limit (`ulimit -f`), a write is a one-line error and
/// leaves no file, neither the output nor its temporary.
#[cfg(target_os = "linux")]
#[test]
fn a_write_past_the_file_size_limit_is_an_error_that_leaves_nothing() {
    let in_dir = tempfile::tempdir().unwrap();
    let input = in_dir.path().join("n.csv");
    let rows: String = (0..100_000)
        .map(|i| format!("{i},{}\n", i * 7919 % 100_003))
        .collect();
    std::fs::write(&input, format!("a,b\n{rows}")).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    for name in ["out.csv", "out.parquet"] {
        let target = out_dir.path().join(name);
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -f 4 && exec \"$0\" sql --table n='{}' -c 'select * from n' --output '{}'",
                input.display(),
                target.display()
            ))
            .arg(env!("CARGO_BIN_EXE_sloth"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains("File too large")
                && stderr.contains(&format!("writing '{}'", target.display())),
            "{name}: {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        let left: Vec<_> = std::fs::read_dir(out_dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{name}: {left:?}");
    }
}

#[test]
fn an_unreadable_file_fails_only_the_queries_that_read_it() {
    let dir = csv_dir();
    std::fs::write(dir.path().join("bad.csv"), "a,b\n1,2\n3\n").unwrap();
    let run = |sql: &str| {
        sloth()
            .args(["sql", "--format", "csv", "--data"])
            .arg(dir.path())
            .args(["-c", sql])
            .output()
            .unwrap()
    };
    let out = run("select count(*) from t");
    assert_success(&out);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "count(*)\n3\n");
    let out = run("select * from bad");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(
        err.contains("table 'bad' could not be read") && err.contains("malformed CSV"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// Runs the shell over `dir` (tables, working directory and home) with
/// `input` piped to it.
fn shell_in(dir: &tempfile::TempDir, input: &[u8]) -> std::process::Output {
    with_stdin(
        sloth()
            .args(["sql", "--data"])
            .arg(dir.path())
            .current_dir(dir.path())
            .env("HOME", dir.path()),
        input,
    )
}

#[test]
fn repl_runs_dot_commands_and_multi_line_statements() {
    let dir = csv_dir();
    std::fs::write(dir.path().join("script.sql"), "select 40 + 2 as answer;").unwrap();
    let out = shell_in(
        &dir,
        b".tables\n.schema t\n.mode csv\n.read script.sql\nselect count(*) as n\nfrom t;\nselect nope from t;\n.timer on\nselect max(id) as m from t; select 'a;b' as s;\n.quit\n",
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    // Piped: no banner, so stdout is the results alone; the statement that
    // failed does not stop the others but makes the exit status non-zero.
    assert!(!stdout.contains("type .help"), "{stdout}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("s\na;b\n"), "{stdout}");
    assert!(stdout.contains("answer\n42\n"), "{stdout}");
    assert_eq!(stdout.lines().next(), Some("t"), "{stdout}");
    assert!(
        stdout.contains("id Int64\nname Utf8\nscore Float64"),
        "{stdout}"
    );
    assert!(stdout.contains("n\n3\n"), "{stdout}");
    assert!(
        stdout.contains("m\n3\n") && stdout.contains("Run Time:"),
        "{stdout}"
    );
    assert!(stderr.contains("unknown column 'nope'"), "{stderr}");
}

#[test]
fn repl_output_sends_results_to_a_file_until_reset() {
    let dir = csv_dir();
    let out = shell_in(
        &dir,
        b".mode csv\n.output out.csv\nselect max(id) as m from t;\nselect 'x' as s;\n.output\nselect 7 as seven;\n.output no/such/dir/f.csv\n",
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let file = std::fs::read_to_string(dir.path().join("out.csv")).unwrap();
    assert_eq!(file, "m\n3\ns\nx\n");
    assert_eq!(stdout, "seven\n7\n");
    // A file that cannot be made is an error, and the exit status says so.
    assert!(
        stderr.contains("cannot write 'no/such/dir/f.csv'"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

#[test]
fn explain_shows_pushdown() {
    let dir = csv_dir();
    let out = sloth()
        .args(["explain", "--data"])
        .arg(dir.path())
        .args(["-c", "select name from t where id > 1"])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("rules fired: ") && s.contains("predicate_pushdown"),
        "{s}"
    );
    assert!(
        s.contains("filters=[(id > 1)]") && s.contains("columns=[id, name]"),
        "{s}"
    );
}

#[test]
fn profile_compares_rowwise_and_columnar() {
    let dir = csv_dir();
    let json = dir.path().join("p.json");
    let svg = dir.path().join("p.svg");
    let out = sloth()
        .args(["profile", "--data"])
        .arg(dir.path())
        .args(["--rowwise-limit", "2", "--fusion", "--json"])
        .arg(&json)
        .arg("--svg")
        .arg(&svg)
        .args([
            "-c",
            "select name, count(*) as n from t where id > 0 group by name",
        ])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("HashAggregate") && text.contains("row-wise") && text.contains("speedup"),
        "{text}"
    );
    assert!(
        text.contains("sampled: each scan read at most its first 2 rows"),
        "{text}"
    );
    let json = std::fs::read_to_string(json).unwrap();
    assert!(
        json.starts_with("{\"operators\":[") && json.contains("\"sampled_rows\":2"),
        "{json}"
    );
    // Two rows sampled: the aggregate sees 2 rows and makes 2 groups.
    assert!(json.contains("\"rows\":2"), "{json}");
    assert!(std::fs::read_to_string(svg).unwrap().starts_with("<svg"));
}

#[test]
fn bench_runs_the_lazyframe_version_of_a_question_with_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let generated = sloth()
        .args([
            "gen",
            "h2o-groupby",
            "--rows",
            "2000",
            "--groups",
            "10",
            "--out",
        ])
        .arg(dir.path().join("x.parquet"))
        .output()
        .unwrap();
    assert_success(&generated);
    let query = concat!(env!("CARGO_MANIFEST_DIR"), "/queries/h2o/groupby-q02.sql");
    let run = |api: &str| {
        let results = dir.path().join(api);
        let out = sloth()
            .args(["bench", "--runs", "1", "--api", api, "--data"])
            .arg(dir.path())
            .arg("--results")
            .arg(&results)
            .arg(query)
            .output()
            .unwrap();
        assert_success(&out);
        let text = std::fs::read_to_string(results.join("groupby-q02.csv")).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    let lazy = run("lazy");
    assert!(lazy.len() > 10, "{lazy:?}");
    assert_eq!(lazy, run("sql"));
    // A question without a LazyFrame version: one line, exit 1.
    let out = sloth()
        .args(["bench", "--runs", "1", "--api", "lazy", "--data"])
        .arg(dir.path())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/queries/h2o/nothing.sql"
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no LazyFrame version of h2o/nothing"), "{err}");
    // A bad query after a good one: the error comes before any timing, and
    // the table is not started.
    let bad = dir.path().join("bad.sql");
    std::fs::write(&bad, "select nope from x").unwrap();
    let out = sloth()
        .args(["bench", "--runs", "1", "--data"])
        .arg(dir.path())
        .arg(query)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn bench_serve_answers_requests_with_json_lines() {
    let dir = csv_dir();
    let good = dir.path().join("good.sql");
    std::fs::write(&good, "select name from t where score > 2").unwrap();
    let bad = dir.path().join("bad.sql");
    std::fs::write(&bad, "select nope from t").unwrap();
    let results = dir.path().join("results");
    let out = with_stdin(
        sloth()
            .args(["bench", "--serve", "--data"])
            .arg(dir.path())
            .arg("--results")
            .arg(&results)
            .args([&good, &bad]),
        b"warm good\ntime good\ntime bad\ntime missing\nhello\nquit\n",
    );
    assert_success(&out);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{stdout}");
    assert!(
        lines[0].starts_with("{\"s\":") && lines[0].ends_with(",\"rows\":1}"),
        "{stdout}"
    );
    assert!(lines[1].starts_with("{\"s\":"), "{stdout}");
    // A query that does not plan is answered with its error; serving goes on.
    assert!(
        lines[2].contains("\"error\"") && lines[2].contains("nope"),
        "{stdout}"
    );
    assert!(lines[3].contains("no query named 'missing'"), "{stdout}");
    assert!(lines[4].contains("unknown request 'hello'"), "{stdout}");
    assert!(lines[5].starts_with("{\"peak_rss_mb\":"), "{stdout}");
    // `warm` wrote the result; `time` did not write a second one.
    let written = std::fs::read_to_string(results.join("good.csv")).unwrap();
    assert_eq!(written, "name\nann\n");
    assert!(!results.join("bad.csv").exists());
}

/// A device failure (injected by `SLOTH_GPU_FAULT`, just before the
/// kernels would run) falls back to the CPU operators: the same rows as
/// `--device cpu`, and EXPLAIN ANALYZE says why.
#[test]
fn a_failing_device_falls_back_to_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let rows: String = (0..500)
        .map(|i| format!("{},{},{}\n", i % 7, i % 3, i))
        .collect();
    std::fs::write(dir.path().join("t.csv"), format!("k,k2,v\n{rows}")).unwrap();
    let sql = "select t.k, t.k2, sum(t.v), count(*) from t join t u on t.k = u.v \
               group by t.k, t.k2 order by 1, 2";
    let run = |device: &str, fault: Option<&str>, analyze: bool| {
        let mut cmd = sloth();
        cmd.args([if analyze { "explain" } else { "sql" }]);
        if analyze {
            cmd.arg("--analyze");
        }
        cmd.args(["--device", device, "--data"])
            .arg(dir.path())
            .args(["-c", sql]);
        if let Some(f) = fault {
            cmd.env("SLOTH_GPU_FAULT", f);
        }
        let out = cmd.output().unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let cpu = run("cpu", None, false);
    assert_eq!(run("emulate", None, false), cpu);
    assert_eq!(run("emulate", Some("out of memory"), false), cpu);
    let profile = run("emulate", Some("out of memory"), true);
    for op in ["HashAggregate", "HashJoin"] {
        let line = profile.lines().find(|l| l.contains(op)).unwrap();
        assert!(
            line.contains("gpu failed: injected fault: out of memory"),
            "{line}"
        );
    }
    let profile = run("emulate", None, true);
    assert!(profile.contains("device=emulated-gpu"), "{profile}");
}

#[test]
fn several_statements_run_in_order_and_output_format_follows_the_extension() {
    let dir = csv_dir();
    let out = sloth()
        .args(["sql", "--format", "csv", "--data"])
        .arg(dir.path())
        .args(["-c", "select count(*) as n from t; select 'x;y' as s;"])
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "n\n3\ns\nx;y\n");

    let parquet = dir.path().join("out.parquet");
    let out = sloth()
        .args(["sql", "--data"])
        .arg(dir.path())
        .args(["-c", "select id from t", "--output"])
        .arg(&parquet)
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(&std::fs::read(&parquet).unwrap()[..4], b"PAR1");

    let out = sloth()
        .args(["sql", "--format", "ndjson", "--data"])
        .arg(dir.path())
        .args(["-c", "select id from t where id < 3 order by id"])
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"id\":1}\n{\"id\":2}\n"
    );

    let out = sloth()
        .args(["sql", "--data"])
        .arg(dir.path())
        .args(["-c", "select 1; select 2", "--output"])
        .arg(dir.path().join("two.csv"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--output takes one statement's result"),
        "{err}"
    );
}

#[test]
fn memory_limits_spill_stream_into_files_and_refuse_nonsense() {
    let dir = csv_dir();
    let temp = tempfile::tempdir().unwrap();
    // A sort spilled under a tiny limit, streamed into an Arrow file.
    let out_file = dir.path().join("sorted.arrow");
    let out = sloth()
        .args(["sql", "--memory-limit", "1KiB", "--temp-dir"])
        .arg(temp.path())
        .arg("--data")
        .arg(dir.path())
        .args([
            "-c",
            "select name, id from t order by name desc",
            "--output",
        ])
        .arg(&out_file)
        .output()
        .unwrap();
    assert_success(&out);
    let back = sloth::LazyFrame::scan_ipc(&out_file)
        .unwrap()
        .collect()
        .unwrap();
    assert_eq!(back.num_rows(), 3);
    assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0);
    // Compressed spill files read back to the same sorted rows.
    let sorted = |flags: &[&str]| {
        let out = sloth()
            .arg("sql")
            .args(flags)
            .arg("--data")
            .arg(dir.path())
            .args([
                "--format",
                "csv",
                "-c",
                "select name, id from t order by name desc",
            ])
            .output()
            .unwrap();
        assert_success(&out);
        String::from_utf8(out.stdout).unwrap()
    };
    let whole = sorted(&[]);
    assert_eq!(whole.lines().count(), 4, "{whole}");
    for codec in ["none", "lz4", "zstd"] {
        let spilled = sorted(&["--memory-limit", "1KiB", "--spill-compression", codec]);
        assert_eq!(spilled, whole, "{codec}");
    }
    let out = sloth()
        .args(["sql", "--spill-compression", "gzip", "-c", "select 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("spill_compression is none, lz4 or zstd") && err.lines().count() == 1,
        "{err}"
    );
    // Settings read back; a malformed size is one line and exit 1.
    let out = sloth()
        .args(["sql", "--memory-limit", "3GiB", "-c", "show memory_limit"])
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "3 GiB\n");
    let out = sloth()
        .args(["sql", "--memory-limit", "4 gigs", "-c", "select 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'4 gigs' is not a size") && err.lines().count() == 1,
        "{err}"
    );
    // --help shows the default for this machine.
    let help = sloth().args(["sql", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--memory-limit") && help.contains("default:"),
        "{help}"
    );
}

#[test]
fn the_engine_flag_names_what_it_needs() {
    let out = sloth()
        .args(["sql", "--engine", "spark", "-c", "select 1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown engine 'spark'"), "{err}");
    let out = sloth()
        .args([
            "sql",
            "--engine",
            "datafusion",
            "--format",
            "csv",
            "-c",
            "select 1 + 1 as two",
        ])
        .output()
        .unwrap();
    if cfg!(feature = "datafusion") {
        assert_success(&out);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "two\n2\n");
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--features datafusion") && err.lines().count() == 1,
            "{err}"
        );
    }
}

#[test]
fn repl_tables_show_as_many_rows_and_characters_as_asked() {
    let out = with_stdin(
        sloth().args(["sql"]),
        b".maxrows 2\n.maxwidth 5\nselect 'abcdefghij' as s from (values (1), (2), (3), (4), (5)) v(x);\n.maxrows 1\n",
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stdout.contains("abcd…"), "{stdout}");
    assert!(!stdout.contains("abcde"), "{stdout}");
    assert!(stdout.contains("5 rows (2 shown)"), "{stdout}");
    // A bad count is an error, and the exit status says so.
    assert!(
        stderr.contains(".maxrows takes a number of at least 2"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1));
}

/// The shell at a pseudo-terminal, as a person at a keyboard has it: what
/// is typed goes to the terminal's master side, and Ctrl-C there is the
/// terminal's interrupt, sent to the shell's process group.
#[cfg(target_os = "linux")]
mod terminal {
    use std::fs::File;
    use std::io::{Read, Write};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Stdio};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    pub struct Terminal {
        keyboard: File,
        screen: Arc<Mutex<Vec<u8>>>,
        pub child: Child,
    }

    impl Terminal {
        /// Starts `sloth sql` (the shell) on a new terminal of its own.
        pub fn shell(dir: &std::path::Path) -> Terminal {
            let (mut master, mut slave) = (0, 0);
            let size = libc::winsize {
                ws_row: 40,
                ws_col: 120,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            // SAFETY: openpty writes two descriptors, which are owned below.
            let opened = unsafe {
                libc::openpty(
                    &mut master,
                    &mut slave,
                    std::ptr::null_mut(),
                    std::ptr::null(),
                    &size,
                )
            };
            assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
            // SAFETY: both descriptors were just opened and nothing else owns them.
            let (master, slave) =
                unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
            let mut command = super::sloth();
            command
                .args(["sql", "--data"])
                .arg(dir)
                .current_dir(dir)
                .env("HOME", dir)
                .env("TERM", "xterm")
                .stdin(Stdio::from(slave.try_clone().unwrap()))
                .stdout(Stdio::from(slave.try_clone().unwrap()))
                .stderr(Stdio::from(slave));
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                command.pre_exec(|| {
                    // A new process group leader (setsid) with the terminal
                    // as its controlling terminal, so that Ctrl-C reaches it.
                    if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let child = command.spawn().unwrap();
            let screen = Arc::new(Mutex::new(Vec::new()));
            let mut reader = master.try_clone().unwrap();
            let shown = screen.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                // Ends when the shell closes the terminal (EIO).
                while let Ok(n @ 1..) = reader.read(&mut buf) {
                    shown.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            });
            Terminal {
                keyboard: master,
                screen,
                child,
            }
        }

        pub fn screen(&self) -> String {
            String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
        }

        pub fn type_in(&mut self, keys: &str) {
            self.keyboard.write_all(keys.as_bytes()).unwrap();
        }

        /// Waits until the screen shows `text` `times` times in all.
        pub fn wait_for(&self, text: &str, times: usize) {
            let deadline = Instant::now() + Duration::from_secs(120);
            while self.screen().matches(text).count() < times {
                assert!(
                    Instant::now() < deadline,
                    "no '{text}' on the screen:\n{}",
                    self.screen()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_at_the_terminal_cancels_the_statement_and_the_shell_goes_on() {
    let dir = csv_dir();
    let mut shell = terminal::Terminal::shell(dir.path());
    shell.wait_for("sloth>", 1);
    // Long enough to show the progress bar: a million steps of recursion.
    shell.type_in(
        "set max_recursion = 10000000; with recursive r(n) as (select 1 union all \
         select n + 1 from r where n < 1000000) select count(*) from r;\r",
    );
    shell.wait_for("Ctrl-C cancels", 1);
    shell.type_in("\x03");
    shell.wait_for("query cancelled", 1);
    shell.type_in("select 'ok' || 'ay' as answer;\r");
    shell.wait_for("okay", 1);
    shell.type_in(".quit\r");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = shell.child.try_wait().unwrap() {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "{}", shell.screen());
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success(), "{status}: {}", shell.screen());
}

/// A disk that fills during a spill (injected by
/// `SLOTH_SPILL_FAULT_AFTER`) fails the statement with one line and a
/// non-zero exit, and leaves neither spill files nor a partial output, for
/// each operator that spills.
#[test]
fn a_full_disk_during_a_spill_is_one_line_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("k,v,s\n");
    for i in 0..30_000 {
        csv += &format!("{},{i},name{}\n", i * 7_919 % 30_000, i % 977);
    }
    std::fs::write(dir.path().join("t.csv"), csv).unwrap();
    let temp = tempfile::tempdir().unwrap();
    for sql in [
        "select k, sum(v), min(s) from t group by k",
        "select s, v from t order by s, v desc",
        "select a.k, b.v from t a join t b on a.k = b.k",
        "select k, row_number() over (partition by s order by v) from t",
    ] {
        let out_file = dir.path().join("out.parquet");
        let out = sloth()
            .env("SLOTH_SPILL_FAULT_AFTER", "10000")
            .args(["sql", "--memory-limit", "256KiB", "--temp-dir"])
            .arg(temp.path())
            .arg("--data")
            .arg(dir.path())
            .args(["-c", sql, "--output"])
            .arg(&out_file)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(!out.status.success(), "{sql}: {err}");
        assert!(
            err.trim().lines().count() == 1 && err.contains("No space left on device"),
            "{sql}: {err}"
        );
        assert!(!out_file.exists(), "{sql}");
        assert_eq!(std::fs::read_dir(temp.path()).unwrap().count(), 0, "{sql}");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["t.csv"], "{sql}");
    }
}
