//! Plans run on Apache Ballista, DataFusion's distributed engine (feature
//! `ballista`).
//!
//! The plan is the one [`super::collect`] hands DataFusion; Ballista's query
//! planner sends it to a scheduler, which splits it into stages at every
//! exchange and has executors run the stages' tasks, shuffling between
//! them through Arrow Flight. With a scheduler configured
//! ([`SessionConfig::scheduler`](crate::config::SessionConfig::scheduler))
//! the query goes to that cluster; without one, a scheduler and
//! [`IN_PROCESS_EXECUTORS`] executors start in this process, on loopback,
//! for the query, and stop with it.
//!
//! The scheduler and executors of a cluster must know sloth's scalar
//! functions (plans call them as `sloth_<name>`): the in-process cluster is
//! given them, and `sloth scheduler` / `sloth executor` start processes
//! that have them.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow::record_batch::RecordBatch;
use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use datafusion::execution::SessionState;
use datafusion::prelude::{SessionConfig as DfConfig, SessionContext};

use super::df_error;
use crate::config::SessionConfig;
use crate::error::{Result, SlothError};
use crate::plan::LogicalPlan;

/// Executors the in-process cluster starts: two, so that a shuffle crosses
/// from one executor to another as it does on a real cluster.
pub const IN_PROCESS_EXECUTORS: usize = 2;

/// How long a scheduler may take to answer before the query fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `plan` on the configured cluster, or on one started here.
pub(super) async fn collect(
    plan: &LogicalPlan,
    config: &SessionConfig,
) -> Result<Vec<RecordBatch>> {
    let state = cluster_state(config)?;
    // The in-process executors' shuffle files, removed when this returns.
    let mut work_dir = None;
    let url = match &config.scheduler {
        Some(url) => {
            check_reachable(url).await?;
            url.clone()
        }
        None => {
            let dir = work_dir.insert(
                tempfile::Builder::new()
                    .prefix("sloth-ballista-")
                    .tempdir_in(config.temp_dir_path())?,
            );
            start_in_process(&state, executor_slots(config), dir.path()).await?
        }
    };
    let ctx = SessionContext::remote_with_state(&url, state)
        .await
        .map_err(df_error)?;
    let df_plan = super::translate(&ctx, plan, config)?;
    let frame = ctx.execute_logical_plan(df_plan).await.map_err(df_error)?;
    frame.collect().await.map_err(|e| ballista_error(&url, e))
}

/// The DataFusion planning state (`SessionState`) of a Ballista client,
/// scheduler or executor: Ballista's
/// own (its optimizer rules and its restrictions on DataFusion's settings,
/// which keep a plan's stages independent of one another: DataFusion's
/// dynamic join filters, for one, cannot cross a shuffle) with sloth's
/// functions registered.
fn cluster_state(config: &SessionConfig) -> Result<SessionState> {
    let partitions = super::partitions(config);
    let df_config = DfConfig::new_with_ballista().with_target_partitions(partitions);
    let mut state = ballista_core::utils::default_session_builder(df_config).map_err(df_error)?;
    super::register_functions(&mut state);
    Ok(state)
}

/// Task slots per in-process executor: the query's threads shared out.
fn executor_slots(config: &SessionConfig) -> usize {
    super::partitions(config)
        .div_ceil(IN_PROCESS_EXECUTORS)
        .max(1)
}

/// Starts a scheduler and [`IN_PROCESS_EXECUTORS`] executors on loopback,
/// all with `state`'s functions, as tasks of the current runtime (they stop
/// when it does), the executors' shuffle files under `work_dir`; returns
/// the scheduler's `df://` address.
async fn start_in_process(state: &SessionState, slots: usize, work_dir: &Path) -> Result<String> {
    let address = ballista_scheduler::standalone::new_standalone_scheduler_from_state(state)
        .await
        .map_err(|e| cluster_error("starting the in-process scheduler", e))?;
    let http = format!("http://localhost:{}", address.port());
    let scheduler = tokio::time::timeout(CONNECT_TIMEOUT, async {
        loop {
            match SchedulerGrpcClient::connect(http.clone()).await {
                Ok(client) => return client,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    })
    .await
    .map_err(|_| {
        SlothError::DataFusion("the in-process Ballista scheduler did not start".into())
    })?;
    for i in 0..IN_PROCESS_EXECUTORS {
        let dir = work_dir.join(format!("executor{i}"));
        std::fs::create_dir_all(&dir)?;
        start_executor(scheduler.clone(), slots, state, &dir)
            .await
            .map_err(|e| cluster_error("starting an in-process executor", e))?;
    }
    Ok(format!("df://localhost:{}", address.port()))
}

/// One executor as a task of the current runtime: its Arrow Flight service
/// (which other executors fetch shuffle output from) on a free loopback
/// port, and its loop asking the scheduler for tasks. Ballista's own
/// `new_standalone_executor_from_state` does the same but keeps its files
/// in a temp directory it never removes; this one keeps them in
/// `work_dir`.
async fn start_executor(
    scheduler: SchedulerGrpcClient<tonic::transport::Channel>,
    slots: usize,
    state: &SessionState,
    work_dir: &Path,
) -> std::result::Result<(), Box<dyn std::error::Error>> {
    use arrow_flight::flight_service_server::FlightServiceServer;
    use ballista_core::serde::BallistaCodec;
    use ballista_core::serde::protobuf::ExecutorRegistration;
    use ballista_core::serde::scheduler::{
        ExecutorOperatingSystemSpecification, ExecutorSpecification,
    };
    use ballista_executor::executor::Executor;
    use ballista_executor::flight_service::BallistaFlightService;
    use ballista_executor::metrics::LoggingMetricsCollector;

    let listener = tokio::net::TcpListener::bind("localhost:0").await?;
    let port = listener.local_addr()?.port();
    let registration = ExecutorRegistration {
        id: ballista_core::ids::new_instance_id(),
        host: Some("localhost".to_string()),
        port: u32::from(port),
        grpc_port: 0,
        specification: Some(
            ExecutorSpecification::default()
                .with_vcores(slots as u32)
                .into(),
        ),
        os_info: Some(ExecutorOperatingSystemSpecification::default().into()),
        ballista_protocol_version: ballista_core::BALLISTA_PROTOCOL_VERSION,
    };
    let config = state.config().clone().upgrade_for_ballista();
    let max_message = config.ballista_grpc_client_max_message_size();
    let runtime = state.runtime_env().clone();
    let work_dir = work_dir.display().to_string();
    let executor = Arc::new(Executor::with_default_execution_engine(
        registration,
        &work_dir,
        Arc::new(move |_| Ok(runtime.clone())),
        Arc::new(move || config.clone()),
        Arc::new(state.into()),
        Arc::new(LoggingMetricsCollector::default()),
        slots,
    ));
    let flight = FlightServiceServer::new(BallistaFlightService::new(work_dir))
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);
    tokio::spawn(
        ballista_core::utils::create_grpc_server(&Default::default())
            .add_service(flight)
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let codec: BallistaCodec = BallistaCodec::new(
        state.config().ballista_logical_extension_codec(),
        state.config().ballista_physical_extension_codec(),
    );
    tokio::spawn(ballista_executor::execution_loop::poll_loop(
        scheduler,
        executor,
        codec,
        None,
        None,
        ballista_executor::health::ExecutorHealth::new(),
    ));
    Ok(())
}

/// Fails fast, with the address, when nothing answers at `url`: Ballista's
/// client would otherwise report the refusal as a long debug dump.
async fn check_reachable(url: &str) -> Result<()> {
    let authority = url.trim_start_matches("df://").to_string();
    let connect = tokio::net::TcpStream::connect(authority);
    match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(SlothError::DataFusion(format!(
            "no Ballista scheduler at {url}: {e}"
        ))),
        Err(_) => Err(SlothError::DataFusion(format!(
            "no Ballista scheduler at {url}: no answer within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// A failed query's error, on one line, naming the cluster.
fn ballista_error(url: &str, e: datafusion::error::DataFusionError) -> SlothError {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    // Ballista formats transport failures with `{:?}`: keep their message.
    let message = match first.find("message: \"") {
        Some(at) => first[at + 10..].split('"').next().unwrap_or(first),
        None => first,
    };
    SlothError::DataFusion(format!("Ballista ({url}): {message}"))
}

fn cluster_error(what: &str, e: impl std::fmt::Display) -> SlothError {
    SlothError::DataFusion(format!("{what}: {e}"))
}

/// Where a scheduler started by [`serve_scheduler`] listens.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// The address it binds, `127.0.0.1:50050` by default.
    pub bind: std::net::SocketAddr,
}

/// What an executor started by [`serve_executor`] does.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler it registers with, `df://host:port`.
    pub scheduler: String,
    /// The host it binds.
    pub bind_host: String,
    /// The port its Arrow Flight service (shuffle reads) listens on.
    pub port: u16,
    /// The port its gRPC service listens on.
    pub grpc_port: u16,
    /// Tasks it runs at once; 0 is one per core.
    pub slots: usize,
    /// Where it keeps shuffle files; `None` is a directory under the
    /// system's temp directory.
    pub work_dir: Option<std::path::PathBuf>,
}

/// Runs a Ballista scheduler that knows sloth's functions, until the
/// process is stopped.
pub fn serve_scheduler(options: &SchedulerOptions) -> Result<()> {
    use ballista_scheduler::cluster::BallistaCluster;
    use ballista_scheduler::config::SchedulerConfig;
    let state_builder = std::sync::Arc::new(|config| {
        let mut state = ballista_core::utils::default_session_builder(config)?;
        super::register_functions(&mut state);
        Ok(state)
    });
    let config = SchedulerConfig {
        bind_host: options.bind.ip().to_string(),
        bind_port: options.bind.port(),
        ..SchedulerConfig::default()
    }
    .with_override_session_builder(state_builder);
    serve(async move {
        let cluster = BallistaCluster::new_from_config(&config).await?;
        ballista_scheduler::scheduler_process::start_server(
            cluster,
            options.bind,
            std::sync::Arc::new(config),
        )
        .await
    })
}

/// Runs a Ballista executor that knows sloth's functions, registered with
/// `options.scheduler`, until the process is stopped.
pub fn serve_executor(options: &ExecutorOptions) -> Result<()> {
    use ballista_core::registry::BallistaFunctionRegistry;
    use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
    let (host, port) = options
        .scheduler
        .trim_start_matches("df://")
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h.to_string(), p.parse().ok()?)))
        .ok_or_else(|| SlothError::Config(format!("scheduler '{}'", options.scheduler)))?;
    let mut state =
        ballista_core::utils::default_session_builder(Default::default()).map_err(df_error)?;
    super::register_functions(&mut state);
    let config = ExecutorProcessConfig {
        bind_host: options.bind_host.clone(),
        port: options.port,
        grpc_port: options.grpc_port,
        scheduler_host: host,
        scheduler_port: port,
        scheduler_connect_timeout_seconds: CONNECT_TIMEOUT.as_secs() as u16,
        vcores: match options.slots {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        },
        work_dir: options.work_dir.as_ref().map(|d| d.display().to_string()),
        override_function_registry: Some(std::sync::Arc::new(BallistaFunctionRegistry::from(
            &state,
        ))),
        ..ExecutorProcessConfig::default()
    };
    serve(start_executor_process(std::sync::Arc::new(config)))
}

/// Runs a server's future to its end on a runtime of its own.
fn serve<E: std::fmt::Display>(
    server: impl std::future::Future<Output = std::result::Result<(), E>>,
) -> Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(SlothError::Io)?
        .block_on(server)
        .map_err(|e| SlothError::DataFusion(e.to_string()))
}
