//! SQL text → parse, plan, optimize and run over two small tables with
//! NULLs, duplicates, -0.0, NaN and an extreme BIGINT. Files are out of reach (external
//! access off), operators are held to 256 MB, and a query still running
//! after two seconds is cancelled: a slow or refused query is an answer,
//! an internal error or a panic is a crash.
#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use sloth::prelude::*;
use sloth::sql::SqlContext;

/// The tables of `scripts/sql_diff --make-nulls`, in small: t(a, b, c, d,
/// s, dt, flag) and u(k, v, w), so that its query files seed the corpus.
const TABLES: &[&str] = &[
    "create table t as select * from (values \
     (1, cast(5 as bigint), 1.5, cast(2.25 as decimal(10, 2)), 'Axx', date '2024-01-01', true), \
     (2, null, -0.0, cast(-3 as decimal(10, 2)), null, null, false), \
     (null, cast(-9223372036854775807 as bigint), 0.0, null, 'B', date '2024-02-29', null), \
     (3, cast(7 as bigint), cast('nan' as double), cast(0 as decimal(10, 2)), 'A', date '1999-12-31', true), \
     (3, cast(7 as bigint), null, cast(1 as decimal(10, 2)), '', date '2024-01-01', false)) \
     v(a, b, c, d, s, dt, flag)",
    "create table u as select * from (values (1, 'v1', 10), (1, 'v2', 20), (null, null, 30), (4, 'v1', null)) v(k, v, w)",
];

const LIMIT: Duration = Duration::from_secs(2);

/// The query running now and when it started: the watchdog cancels it
/// past [`LIMIT`].
static RUNNING: Mutex<Option<(Instant, CancelToken)>> = Mutex::new(None);

fn context() -> SqlContext {
    let mut config = SessionConfig::default();
    config.set("enable_external_access", "false").unwrap();
    config.set("memory_limit", "256MB").unwrap();
    let mut ctx = SqlContext::new().with_config(config);
    for statement in TABLES {
        ctx.execute_mut(statement)
            .expect("the fuzz tables are valid");
    }
    ctx
}

fn watchdog() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        std::thread::spawn(|| {
            loop {
                std::thread::sleep(Duration::from_millis(100));
                if let Some((started, token)) = &*RUNNING.lock().unwrap()
                    && started.elapsed() > LIMIT
                {
                    token.cancel();
                }
            }
        });
    });
}

fuzz_target!(|data: &[u8]| {
    common::unwinding_panics();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    watchdog();
    let mut ctx = context();
    let token = CancelToken::new();
    ctx.set_cancel(token.clone());
    *RUNNING.lock().unwrap() = Some((Instant::now(), token));
    common::check(ctx.sql(text).and_then(|lf| lf.collect()), &text);
    *RUNNING.lock().unwrap() = None;
});
