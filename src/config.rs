//! The settings queries run under: one [`SessionConfig`] that every front end writes
//! and every layer reads.
//!
//! The CLI's flags, the REPL's `SET name = value` and `.set name value`,
//! `SLOTH_<NAME>` environment variables and the Rust builders all go
//! through [`SessionConfig::set`] or the `with_*` methods, so a new setting
//! is one field, one arm of [`SessionConfig::set`] and its test.
//!
//! ```
//! use sloth::SessionConfig;
//! let mut config = SessionConfig::default().with_threads(2);
//! config.set("device", "cpu")?;
//! assert_eq!(config.get("threads")?, "2");
//! # Ok::<(), sloth::SlothError>(())
//! ```

use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::error::{Result, SlothError};
use crate::memory::{
    SpillCompression, default_memory_limit, format_bytes, parse_bytes, system_memory,
};

/// Where group-by and join operators run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    /// Always the CPU.
    Cpu,
    /// The GPU whenever the operator is supported (CPU fallback on failure).
    Gpu,
    /// The GPU when present and the cost model expects it to be faster.
    #[default]
    Auto,
    /// The kernels' CPU port: the GPU code path without a GPU.
    Emulate,
}

impl FromStr for Device {
    type Err = SlothError;
    fn from_str(s: &str) -> Result<Device> {
        match s.to_ascii_lowercase().as_str() {
            "cpu" => Ok(Device::Cpu),
            "gpu" => Ok(Device::Gpu),
            "auto" => Ok(Device::Auto),
            "emulate" => Ok(Device::Emulate),
            _ => Err(SlothError::Config(format!(
                "unknown device '{s}'; devices: cpu, gpu, auto, emulate"
            ))),
        }
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
            Device::Auto => "auto",
            Device::Emulate => "emulate",
        })
    }
}

/// The engine that runs a query's optimized plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Engine {
    /// sloth's own executors.
    #[default]
    Sloth,
    /// Apache DataFusion, in this process (feature `datafusion`).
    DataFusion,
    /// Apache Ballista, DataFusion's distributed engine (feature
    /// `ballista`): the cluster at [`SessionConfig::scheduler`], or one
    /// started in this process for the query.
    Ballista,
}

impl FromStr for Engine {
    type Err = SlothError;
    fn from_str(s: &str) -> Result<Engine> {
        match s.to_ascii_lowercase().as_str() {
            "sloth" => Ok(Engine::Sloth),
            "datafusion" if cfg!(feature = "datafusion") => Ok(Engine::DataFusion),
            "ballista" if cfg!(feature = "ballista") => Ok(Engine::Ballista),
            "datafusion" | "ballista" => Err(SlothError::Config(format!(
                "this sloth was built without the {s} engine; build it with --features {s}"
            ))),
            _ => Err(SlothError::Config(format!(
                "unknown engine '{s}'; engines: sloth, datafusion, ballista"
            ))),
        }
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Engine::Sloth => "sloth",
            Engine::DataFusion => "datafusion",
            Engine::Ballista => "ballista",
        })
    }
}

/// Which optimizer rules run (rule names: `sloth explain` lists those that
/// fired; an unknown name is an error when a query is optimized).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptimizerOptions {
    /// Names of rules that are switched off.
    pub disabled: Vec<String>,
    /// Switches the whole optimizer off.
    pub off: bool,
}

impl OptimizerOptions {
    /// No optimization at all.
    pub fn none() -> Self {
        OptimizerOptions {
            disabled: vec![],
            off: true,
        }
    }

    /// These options with `rule` switched off too.
    pub fn disable(mut self, rule: &str) -> Self {
        self.disabled.push(rule.to_string());
        self
    }

    /// Whether `rule` runs.
    pub(crate) fn enabled(&self, rule: &str) -> bool {
        !self.off && !self.disabled.iter().any(|d| d == rule)
    }
}

/// The settings queries run under: the SQL context, the frames it plans and the
/// executor that runs them all read one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionConfig {
    /// Where group-by and join operators run.
    pub device: Device,
    /// Which optimizer rules run.
    pub optimizer: OptimizerOptions,
    /// Worker threads a query's operators run on; 0 is one per core.
    pub threads: usize,
    /// Bytes a query's operators may hold at once; `None` is
    /// [`default_memory_limit`] (80% of what the system gives this process).
    pub memory_limit: Option<u64>,
    /// Where operators spill what does not fit; `None` is the system's
    /// temp directory.
    pub temp_dir: Option<PathBuf>,
    /// How spill files are compressed; none by default.
    pub spill_compression: SpillCompression,
    /// The engine that runs the optimized plan.
    pub engine: Engine,
    /// The Ballista scheduler `--engine ballista` sends queries to
    /// (`df://host:port`); `None` starts a cluster in this process.
    pub scheduler: Option<String>,
    /// Whether SQL may read files it names itself (`read_parquet('f')`,
    /// `FROM 'f.csv'`), besides the tables registered with it. On by
    /// default, as in DuckDB; off, a query reads registered tables only.
    pub enable_external_access: bool,
    /// How many times the recursive term of a `WITH RECURSIVE` query may
    /// run before the query fails as one that does not end.
    pub max_recursion: usize,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            device: Device::default(),
            optimizer: OptimizerOptions::default(),
            threads: 0,
            memory_limit: None,
            temp_dir: None,
            spill_compression: SpillCompression::None,
            engine: Engine::default(),
            scheduler: None,
            enable_external_access: true,
            max_recursion: DEFAULT_MAX_RECURSION,
        }
    }
}

/// The default of [`SessionConfig::max_recursion`].
pub const DEFAULT_MAX_RECURSION: usize = 10_000;

/// The names [`SessionConfig::set`] takes, each with what it sets.
pub const SETTINGS: &[(&str, &str)] = &[
    (
        "device",
        "where group-by and join operators run: cpu, gpu, auto, emulate",
    ),
    ("threads", "worker threads per query; 0: one per core"),
    ("optimizer", "on, or off to plan queries as written"),
    (
        "disabled_rules",
        "optimizer rules switched off, comma-separated",
    ),
    (
        "memory_limit",
        "memory a query may hold before it spills: 4GB, 512MiB, 50%; default 80% of the memory",
    ),
    (
        "temp_dir",
        "directory for spill files; default the system's temp directory",
    ),
    (
        "spill_compression",
        "how spill files are compressed: none, lz4 or zstd; default none",
    ),
    (
        "engine",
        "what runs the optimized plan: sloth, datafusion (feature `datafusion`) or ballista (feature `ballista`)",
    ),
    (
        "scheduler",
        "the Ballista scheduler of --engine ballista, df://host:port; default a cluster in this process",
    ),
    (
        "enable_external_access",
        "whether SQL may read files it names (read_parquet('f'), FROM 'f.csv'): true or false; default true",
    ),
    (
        "max_recursion",
        "how many times a WITH RECURSIVE term may run before the query fails; default 10000",
    ),
];

impl SessionConfig {
    /// The defaults: device auto, every optimizer rule on, all cores.
    pub fn new() -> Self {
        Self::default()
    }

    /// The defaults overridden by any `SLOTH_<SETTING>` variable set in the
    /// environment (`SLOTH_THREADS`, `SLOTH_MEMORY_LIMIT`, ...: one per
    /// entry of [`SETTINGS`]).
    pub fn from_env() -> Result<Self> {
        let mut config = Self::default();
        for (name, _) in SETTINGS {
            let var = format!("SLOTH_{}", name.to_ascii_uppercase());
            if let Ok(value) = std::env::var(&var) {
                config.set(name, &value).map_err(|e| match e {
                    SlothError::Config(why) => SlothError::Config(format!("{var}: {why}")),
                    other => other,
                })?;
            }
        }
        Ok(config)
    }

    /// This config with operators placed on `device`.
    pub fn with_device(mut self, device: Device) -> Self {
        self.device = device;
        self
    }

    /// This config with these optimizer options.
    pub fn with_optimizer(mut self, optimizer: OptimizerOptions) -> Self {
        self.optimizer = optimizer;
        self
    }

    /// This config with `threads` worker threads per query (0: all cores).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// This config running plans on `engine`.
    pub fn with_engine(mut self, engine: Engine) -> Self {
        self.engine = engine;
        self
    }

    /// This config sending `--engine ballista` queries to the scheduler at
    /// `url` (`df://host:port`).
    pub fn with_scheduler(mut self, url: &str) -> Result<Self> {
        self.scheduler = Some(parse_scheduler(url)?);
        Ok(self)
    }

    /// This config with a memory limit of `bytes` per query.
    pub fn with_memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// This config spilling under `dir`.
    pub fn with_temp_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.temp_dir = Some(dir.into());
        self
    }

    /// This config compressing spill files with `compression`.
    pub fn with_spill_compression(mut self, compression: SpillCompression) -> Self {
        self.spill_compression = compression;
        self
    }

    /// The memory limit in bytes, the default resolved.
    pub fn memory_limit_bytes(&self) -> u64 {
        self.memory_limit.unwrap_or_else(default_memory_limit)
    }

    /// The directory spill files go under, the default resolved.
    pub fn temp_dir_path(&self) -> PathBuf {
        self.temp_dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// Sets one setting by name from text, as `SET name = value` does.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let value = value.trim().trim_matches('\'');
        match name.to_ascii_lowercase().as_str() {
            "device" => self.device = value.parse()?,
            "threads" => {
                self.threads = value.parse().map_err(|_| {
                    SlothError::Config(format!("threads must be a whole number, got '{value}'"))
                })?
            }
            "optimizer" => {
                self.optimizer.off = match value.to_ascii_lowercase().as_str() {
                    "on" | "true" => false,
                    "off" | "false" => true,
                    _ => {
                        return Err(SlothError::Config(format!(
                            "optimizer is on or off, got '{value}'"
                        )));
                    }
                }
            }
            "disabled_rules" => {
                self.optimizer.disabled = value
                    .split(',')
                    .map(str::trim)
                    .filter(|r| !r.is_empty())
                    .map(String::from)
                    .collect()
            }
            "memory_limit" => {
                self.memory_limit = match value.to_ascii_lowercase().as_str() {
                    "default" => None,
                    _ => match parse_bytes(value, system_memory()) {
                        Ok(0) => {
                            return Err(SlothError::Config(
                                "memory_limit must be more than 0 bytes".into(),
                            ));
                        }
                        Ok(bytes) => Some(bytes),
                        Err(SlothError::Config(why)) => {
                            return Err(SlothError::Config(format!("memory_limit: {why}")));
                        }
                        Err(e) => return Err(e),
                    },
                }
            }
            "engine" => self.engine = value.parse()?,
            "scheduler" => {
                self.scheduler = match value {
                    "" | "default" => None,
                    url => Some(parse_scheduler(url)?),
                }
            }
            "temp_dir" => {
                self.temp_dir = match value {
                    "" | "default" => None,
                    dir => Some(PathBuf::from(dir)),
                }
            }
            "spill_compression" => self.spill_compression = value.parse()?,
            "enable_external_access" => {
                self.enable_external_access = match value.to_ascii_lowercase().as_str() {
                    "true" | "on" | "1" => true,
                    "false" | "off" | "0" => false,
                    _ => {
                        return Err(SlothError::Config(format!(
                            "enable_external_access is true or false, got '{value}'"
                        )));
                    }
                }
            }
            "max_recursion" => {
                self.max_recursion = value.parse().map_err(|_| {
                    SlothError::Config(format!(
                        "max_recursion must be a whole number, got '{value}'"
                    ))
                })?
            }
            _ => return Err(unknown_setting(name)),
        }
        Ok(())
    }

    /// One setting's value as text, as `SET` takes it.
    pub fn get(&self, name: &str) -> Result<String> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "device" => self.device.to_string(),
            "threads" => self.threads.to_string(),
            "optimizer" => if self.optimizer.off { "off" } else { "on" }.to_string(),
            "disabled_rules" => self.optimizer.disabled.join(","),
            "memory_limit" => match self.memory_limit_bytes() {
                u64::MAX => "unlimited".to_string(),
                bytes => format_bytes(bytes),
            },
            "temp_dir" => self.temp_dir_path().display().to_string(),
            "spill_compression" => self.spill_compression.to_string(),
            "engine" => self.engine.to_string(),
            "scheduler" => self
                .scheduler
                .clone()
                .unwrap_or_else(|| "in-process".to_string()),
            "enable_external_access" => self.enable_external_access.to_string(),
            "max_recursion" => self.max_recursion.to_string(),
            _ => return Err(unknown_setting(name)),
        })
    }

    /// Every setting with its value, in [`SETTINGS`] order.
    pub fn entries(&self) -> Vec<(&'static str, String)> {
        SETTINGS
            .iter()
            .map(|(name, _)| (*name, self.get(name).unwrap_or_default()))
            .collect()
    }

    /// Runs `work` on this config's worker threads: the global pool for
    /// all cores, else a pool of `threads` workers (made once per size).
    pub(crate) fn install<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        if self.threads == 0 {
            return work();
        }
        match thread_pool(self.threads) {
            Some(pool) => pool.install(work),
            None => work(),
        }
    }
}

/// The stack of each worker thread sloth starts: deep expressions (long
/// generated predicates) recurse while compiled and evaluated. Only the
/// pages a thread touches are committed.
pub const WORKER_STACK_BYTES: usize = 64 << 20;

thread_local! {
    /// Whether this thread was started by [`on_large_stack`].
    static ON_LARGE_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` on a thread with a [`WORKER_STACK_BYTES`] stack and waits
/// for it: parsing and planning SQL recurse over its syntax tree, which a
/// generated statement can make deep whatever stack its caller has. On
/// such a thread already, `work` runs in place.
pub fn on_large_stack<T: Send>(work: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    if ON_LARGE_STACK.get() {
        return work();
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("sloth-planner".into())
            .stack_size(WORKER_STACK_BYTES)
            .spawn_scoped(scope, || {
                ON_LARGE_STACK.set(true);
                work()
            })?;
        handle
            .join()
            .unwrap_or_else(|payload| std::panic::resume_unwind(payload))
    })
}

/// A scheduler address as `df://host:port`: `host:port` and `host` (port
/// 50050, Ballista's) are taken too.
fn parse_scheduler(url: &str) -> Result<String> {
    let bad = |why: &str| {
        SlothError::Config(format!("scheduler '{url}': {why}; expected df://host:port"))
    };
    let rest = url.strip_prefix("df://").unwrap_or(url);
    if rest.contains("://") {
        return Err(bad("the scheme is df://"));
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, port.parse::<u16>().map_err(|_| bad("bad port"))?),
        None => (rest, 50050),
    };
    if host.is_empty() || host.contains(['/', ' ']) {
        return Err(bad("no host"));
    }
    Ok(format!("df://{host}:{port}"))
}

fn unknown_setting(name: &str) -> SlothError {
    let names: Vec<&str> = SETTINGS.iter().map(|(n, _)| *n).collect();
    SlothError::Config(format!(
        "unknown setting '{name}'; settings: {}",
        names.join(", ")
    ))
}

/// A pool of `threads` workers, shared by every query that asks for that
/// many; `None` when the system refuses to start its threads (the query
/// then runs on the global pool).
fn thread_pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(pool) = pools.get(&threads) {
        return Some(pool.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(WORKER_STACK_BYTES)
        .thread_name(|i| format!("sloth-worker-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    pools.insert(threads, pool.clone());
    Some(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_reads_back_what_was_set() {
        let mut c = SessionConfig::default();
        for (name, value) in [
            ("device", "cpu"),
            ("threads", "3"),
            ("optimizer", "off"),
            ("disabled_rules", "limit_pushdown,join_reorder"),
            ("memory_limit", "4 GiB"),
            ("temp_dir", "/tmp/spill"),
            ("spill_compression", "zstd"),
        ] {
            c.set(name, value).unwrap();
            assert_eq!(c.get(name).unwrap(), value, "{name}");
        }
        assert_eq!(c.device, Device::Cpu);
        assert_eq!(c.threads, 3);
        assert!(c.optimizer.off);
        assert_eq!(c.optimizer.disabled, ["limit_pushdown", "join_reorder"]);
        assert_eq!(c.entries().len(), SETTINGS.len());
    }

    #[test]
    fn bad_names_and_values_are_one_line_errors() {
        let mut c = SessionConfig::default();
        let unknown = c.set("colour", "red").unwrap_err().to_string();
        assert!(unknown.contains("unknown setting 'colour'") && unknown.contains("threads"));
        assert!(c.set("threads", "many").is_err());
        assert!(c.set("device", "tpu").is_err());
        assert!(c.set("optimizer", "maybe").is_err());
        let size = c.set("memory_limit", "4 gigs").unwrap_err().to_string();
        assert!(
            size.contains("memory_limit: '4 gigs' is not a size"),
            "{size}"
        );
        assert!(c.set("memory_limit", "0").is_err());
        assert!(c.set("engine", "spark").is_err());
        let codec = c.set("spill_compression", "gzip").unwrap_err().to_string();
        assert!(codec.contains("none, lz4 or zstd, got 'gzip'"), "{codec}");
        assert_eq!(
            c.set("engine", "datafusion").is_ok(),
            cfg!(feature = "datafusion")
        );
        assert_eq!(
            c.set("engine", "ballista").is_ok(),
            cfg!(feature = "ballista")
        );
        c.engine = Engine::Sloth;
        assert!(c.set("scheduler", "http://h:1").is_err());
        assert!(c.set("scheduler", "df://h:port").is_err());
        assert!(c.set("scheduler", "df://:50050").is_err());
        assert_eq!(c, SessionConfig::default(), "a failed set changes nothing");
    }

    #[test]
    fn a_scheduler_address_is_normalized_to_df_host_port() {
        let mut c = SessionConfig::default();
        assert_eq!(c.get("scheduler").unwrap(), "in-process");
        for (given, kept) in [
            ("df://10.0.0.5:50050", "df://10.0.0.5:50050"),
            ("localhost:6000", "df://localhost:6000"),
            ("'sched'", "df://sched:50050"),
        ] {
            c.set("scheduler", given).unwrap();
            assert_eq!(c.get("scheduler").unwrap(), kept);
        }
        c.set("scheduler", "default").unwrap();
        assert_eq!(c.scheduler, None);
    }

    #[test]
    fn a_sized_pool_runs_the_work_on_that_many_threads() {
        let c = SessionConfig::default().with_threads(3);
        assert_eq!(c.install(rayon::current_num_threads), 3);
        let all = SessionConfig::default();
        assert_eq!(
            all.install(rayon::current_num_threads),
            rayon::current_num_threads()
        );
    }
}
