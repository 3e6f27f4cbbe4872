//! The Ballista engine (feature `ballista`): sloth's optimized plans run on
//! a Ballista cluster give sloth's answers, on the cluster each query starts
//! in this process (two executors, so that shuffles cross between them) and
//! on a cluster of `sloth scheduler` and `sloth executor` processes; what a
//! cluster cannot run, or cannot reach, is a one-line error in bounded time.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sloth::config::Engine;
use sloth::prelude::*;
use sloth::sql::SqlContext;

use crate::datafusion_engine::{assert_same_on, same_cells};

fn query(dir: &str, name: &str) -> String {
    let root = env!("CARGO_MANIFEST_DIR");
    let sql = std::fs::read_to_string(format!("{root}/queries/{dir}/{name}.sql")).unwrap();
    sql.trim().trim_end_matches(';').to_string()
}

/// TPC-H at scale 0.01 as Parquet files (executors read files, not this
/// process's memory).
fn tpch_files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    sloth::datagen::write_tpch(0.01, dir.path(), "parquet", |_| {}).unwrap();
    dir
}

#[test]
fn every_tpch_query_runs_on_an_in_process_cluster_with_sloths_answers() {
    let dir = tpch_files();
    let temp = tempfile::tempdir().unwrap();
    let config = SessionConfig::new()
        .with_threads(4)
        .with_temp_dir(temp.path());
    let mut ctx = SqlContext::new().with_config(config);
    ctx.register_dir(dir.path()).unwrap();
    for q in 1..=22 {
        let lf = ctx.sql(&query("tpch", &format!("q{q:02}"))).unwrap();
        assert_same_on(Engine::Ballista, &lf, &format!("q{q:02}"));
    }
    // The executors' shuffle files went with their queries.
    let left: Vec<_> = std::fs::read_dir(temp.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn db_benchmark_questions_run_on_an_in_process_cluster_with_sloths_answers() {
    let dir = tempfile::tempdir().unwrap();
    // The group-by table and the join tables (one of them also named `x`),
    // each set written as Parquet files into a context of its own.
    let context = |tables: Vec<(String, Vec<arrow::record_batch::RecordBatch>)>, sub: &str| {
        let mut ctx = SqlContext::new();
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        for (name, batches) in tables {
            let path = dir.path().join(sub).join(format!("{name}.parquet"));
            LazyFrame::from_batches(batches)
                .unwrap()
                .sink_parquet(&path)
                .unwrap();
            ctx.register(&name, LazyFrame::scan_parquet(&path).unwrap());
        }
        ctx
    };
    let groupby = vec![(
        "x".to_string(),
        sloth::datagen::h2o_groupby(20_000, 10).unwrap(),
    )];
    let ctx = context(groupby, "groupby");
    for q in 1..=10 {
        let lf = ctx.sql(&query("h2o", &format!("groupby-q{q:02}"))).unwrap();
        assert_same_on(Engine::Ballista, &lf, &format!("groupby q{q}"));
    }
    let join = sloth::datagen::h2o_join(20_000)
        .unwrap()
        .into_iter()
        .map(|(name, batches)| (name.to_string(), batches))
        .collect();
    let ctx = context(join, "join");
    for q in 1..=5 {
        let lf = ctx.sql(&query("h2o", &format!("join-q{q:02}"))).unwrap();
        assert_same_on(Engine::Ballista, &lf, &format!("join q{q}"));
    }
}

#[test]
fn a_table_in_memory_cannot_be_shipped_and_says_so() {
    let mut ctx = SqlContext::new().with_config(SessionConfig::new().with_engine(Engine::Ballista));
    let batches = sloth::datagen::h2o_groupby(100, 2).unwrap();
    ctx.register("x", LazyFrame::from_batches(batches).unwrap());
    let e = ctx
        .sql("select id1, sum(v1) from x group by id1")
        .unwrap()
        .collect()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("memory") && e.contains("Parquet") && !e.contains('\n'),
        "{e}"
    );
}

/// A loopback port nothing listens on (bound, then let go).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_scheduler_that_refuses_is_a_prompt_one_line_error() {
    let dir = tpch_files();
    let url = format!("df://127.0.0.1:{}", free_port());
    let config = SessionConfig::new()
        .with_engine(Engine::Ballista)
        .with_scheduler(&url)
        .unwrap();
    let mut ctx = SqlContext::new().with_config(config);
    ctx.register_dir(dir.path()).unwrap();
    let started = Instant::now();
    let e = ctx
        .sql("select count(*) from nation")
        .unwrap()
        .collect()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("no Ballista scheduler at {url}")) && !e.contains('\n'),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

/// A `sloth scheduler` and two `sloth executor` processes on loopback,
/// stopped when dropped.
struct Cluster {
    url: String,
    processes: Vec<Child>,
    _work: tempfile::TempDir,
}

impl Cluster {
    fn start() -> Cluster {
        let work = tempfile::tempdir().unwrap();
        let port = free_port();
        let url = format!("df://127.0.0.1:{port}");
        let spawn = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_sloth"))
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        };
        let mut processes = vec![spawn(&[
            "scheduler",
            "--bind",
            &format!("127.0.0.1:{port}"),
        ])];
        wait_for_port(port);
        for i in 0..2 {
            let dir = work.path().join(format!("executor{i}"));
            processes.push(spawn(&[
                "executor",
                "--scheduler",
                &url,
                "--port",
                &free_port().to_string(),
                "--grpc-port",
                &free_port().to_string(),
                "--slots",
                "2",
                "--work-dir",
                dir.to_str().unwrap(),
            ]));
        }
        Cluster {
            url,
            processes,
            _work: work,
        }
    }

    fn kill_scheduler(&mut self) {
        let _ = self.processes[0].kill();
        let _ = self.processes[0].wait();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for p in &mut self.processes {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}

fn wait_for_port(port: u16) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the scheduler did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The command line against `cluster`, over the TPC-H files in `data`.
fn sloth_on(cluster: &Cluster, data: &Path, sql: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sloth"))
        .args([
            "sql",
            "--format",
            "csv",
            "--engine",
            "ballista",
            "--scheduler",
        ])
        .arg(&cluster.url)
        .arg("--data")
        .arg(data)
        .args(["-c", sql])
        .output()
        .unwrap()
}

#[test]
fn a_cluster_of_processes_runs_tpch_with_sloths_answers_and_fails_cleanly_when_its_scheduler_dies()
{
    let dir = tpch_files();
    let mut cluster = Cluster::start();
    for q in [1, 3, 5, 9, 13, 18, 22] {
        let sql = query("tpch", &format!("q{q:02}"));
        let native = Command::new(env!("CARGO_BIN_EXE_sloth"))
            .args(["sql", "--format", "csv", "--data"])
            .arg(dir.path())
            .args(["-c", &sql])
            .output()
            .unwrap();
        // Executors register a moment after they start: the first query
        // may find none yet, and waits for them.
        let distributed = sloth_on(&cluster, dir.path(), &sql);
        let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            distributed.status.success(),
            "q{q:02}: {}",
            String::from_utf8_lossy(&distributed.stderr)
        );
        let (mut a, mut b) = (text(&native), text(&distributed));
        if !sql.to_lowercase().contains("order by") {
            let sorted = |s: &str| {
                let mut lines: Vec<&str> = s.lines().collect();
                lines.sort();
                lines.join("\n")
            };
            (a, b) = (sorted(&a), sorted(&b));
        }
        assert_eq!(a.lines().count(), b.lines().count(), "q{q:02}");
        for (x, y) in a.lines().zip(b.lines()) {
            assert!(same_cells(x, y, ','), "q{q:02}: sloth {x} vs Ballista {y}");
        }
    }
    // A query long enough to be running when its scheduler is killed.
    let slow = "select count(*) from lineitem a join lineitem b \
                on a.l_linenumber = b.l_linenumber where a.l_comment < b.l_comment";
    let running = Command::new(env!("CARGO_BIN_EXE_sloth"))
        .args([
            "sql",
            "--engine",
            "ballista",
            "--scheduler",
            &cluster.url,
            "--data",
        ])
        .arg(dir.path())
        .args(["-c", slow])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    cluster.kill_scheduler();
    let started = Instant::now();
    let out = running.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("Ballista"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    // The next query finds no scheduler at all.
    let started = Instant::now();
    let out = sloth_on(&cluster, dir.path(), "select count(*) from lineitem");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no Ballista scheduler at"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(15));
}
