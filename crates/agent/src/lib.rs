//! podcoroner-agent: `podcoroner daemon`, the agent that runs on every node.
//!
//! Tasks share one [`Shared`] state:
//! - the CRI poller lists sandboxes and containers every `cri_poll_interval`, reconnecting with
//!   backoff when the runtime restarts or its socket goes away;
//! - the manifest watcher re-reads the static pod directory on file events (hints) and every
//!   `manifest_rescan_interval` (the truth), with the kubelet's pod directories;
//! - with a static pod URL, the URL poller reads its body every `manifest_rescan_interval`;
//! - the API poller lists this node's pods (or re-reads `pods_file`);
//! - the evaluator runs the same rules as `diagnose` over the latest views, adds the stops the
//!   last GC run saw fail, and folds the result into the findings [`store::Store`], saved under
//!   the state directory;
//! - the HTTP server (`http`) serves `/healthz`, `/readyz`, `/findings`, `/pods/{uid}/timeline`,
//!   `/metrics` and `/`.
//!
//! A source that fails is retried and reported unhealthy in `/readyz`; its view is dropped so the
//! rules that need it skip (and never resolve findings on missing data). Nothing on input panics.

pub mod config;
pub mod html;
pub mod http;
pub mod logs;
pub mod metrics;
pub mod serve;
pub mod startup_metrics;
pub mod store;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use podcoroner_core::event::{LogKind, LoggedEvent};
use podcoroner_core::{ApiView, Config, CriView, Finding, ManifestView, NodeView, PodDir};
use serde::Serialize;

use podcoroner_node::api::SourceStatus;
use podcoroner_node::gather::SourceOptions;

/// Everything the daemon needs, resolved from flags and the config file.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Where to read the node's views from (`offline` is ignored).
    pub sources: SourceOptions,
    /// The diagnosis thresholds.
    pub rules: Config,
    /// How often the CRI is listed.
    pub cri_poll_interval: Duration,
    /// How often the manifest and pod directories are re-read in full.
    pub rescan_interval: Duration,
    /// How often the API server's pods are listed.
    pub api_poll_interval: Duration,
    /// How often findings are evaluated.
    pub evaluate_interval: Duration,
    /// Evaluations a finding must be missing from before it is resolved.
    pub resolve_after_misses: u32,
    /// How long resolved findings stay visible.
    pub resolved_retention: Duration,
    /// Where `state.json` (findings) lives.
    pub state_dir: PathBuf,
    /// The HTTP listen address.
    pub listen: SocketAddr,
    /// The HTTP server's timeouts and connection limit.
    pub http: serve::Limits,
    /// At most this many log events are kept for the rules and timelines (oldest dropped).
    pub max_events: usize,
    /// On a first start (no saved read position), how far back the logs are read: records
    /// since `max(now - log_lookback, boot time)`, as node-problem-detector's `lookback`; zero
    /// reads only what comes next. A restart resumes at its saved position instead.
    pub log_lookback: Duration,
    /// Garbage collection: `off`, `plan` (candidates as the `podcoroner_gc_candidates` metric and
    /// `gc_eligible` findings) or `apply` (planned from the held views, each sandbox listed again
    /// through CRI right before its action, audited: `gc::run_on`), with its options.
    pub gc: (crate::config::GcMode, podcoroner_node::gc::GcOptions),
    /// How often GC runs in `plan` or `apply` mode.
    pub gc_interval: Duration,
    /// Post a Kubernetes Event for each new finding of warning or higher, at most
    /// `events_per_minute`; needs API server access (not a pods file).
    pub events: bool,
    /// The Event rate limit of this node.
    pub events_per_minute: u32,
}

/// One source's health over time, as `/readyz` shows it: the [`SourceStatus`] of its last read
/// (the type `diagnose`'s SOURCES block shows), since when it has been healthy or not, and its
/// last successful read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceHealth {
    /// The last read's status.
    pub status: SourceStatus,
    /// Since when it has been in its current state (healthy or not).
    pub since: Timestamp,
    /// The last successful read.
    pub last_success: Option<Timestamp>,
    /// What the last successful read saw (its [`podcoroner_node::gather::status_line`]).
    pub last_success_detail: Option<String>,
}

impl SourceHealth {
    /// True when the last read was `ok`.
    pub fn healthy(&self) -> bool {
        self.status.is_ok()
    }
}

/// The latest view of each source.
#[derive(Debug, Default, Clone)]
pub struct Views {
    /// The CRI runtime's sandboxes and containers.
    pub cri: Option<CriView>,
    /// The API server's pods.
    pub api: Option<ApiView>,
    /// The static pod manifest directory.
    pub manifests: Option<ManifestView>,
    /// The kubelet's pod directories.
    pub pod_dirs: Option<Vec<PodDir>>,
    /// The static pod URL's body, when a URL is configured.
    pub manifest_url: Option<podcoroner_core::UrlManifestView>,
}

/// State shared by the tasks and the HTTP handlers.
#[derive(Debug)]
pub struct Shared {
    /// The node name.
    pub node: String,
    /// When the daemon started.
    pub started: Timestamp,
    /// The latest views.
    pub views: Mutex<Views>,
    /// The log events kept, oldest first.
    pub events: Mutex<VecDeque<LoggedEvent>>,
    /// Each enabled source's health, by name.
    pub health: Mutex<BTreeMap<String, SourceHealth>>,
    /// The findings over time.
    pub store: Mutex<store::Store>,
    /// The last evaluation's skipped rules.
    pub skipped: Mutex<Vec<podcoroner_core::SkippedRule>>,
    /// The metrics.
    pub metrics: metrics::Metrics,
    /// The options.
    pub options: AgentOptions,
    /// Wakes the evaluator early (new log events).
    pub wake: tokio::sync::Notify,
    /// Read positions of the followed logs.
    pub checkpoints: Mutex<podcoroner_logs::follow::Checkpoints>,
    /// When the read positions, the kept events and the findings store were last saved.
    pub last_log_save: Mutex<Option<Instant>>,
    /// When the kept events were last saved.
    pub last_events_save: Mutex<Option<Instant>>,
    /// When the findings store was last saved.
    pub last_store_save: Mutex<Option<Instant>>,
    /// Events arrived since the kept events were last saved.
    pub events_changed: Mutex<bool>,
    /// New findings of warning or higher, for the Event poster.
    pub new_findings: Mutex<Option<tokio::sync::mpsc::Sender<podcoroner_apiserver::EventNote>>>,
    /// The `SandboxStopFailing` findings of the last GC run (`gc: apply`): each evaluation reports
    /// them while their sandbox is listed, until a run no longer fails to stop it.
    pub gc_stop_failures: Mutex<Vec<Finding>>,
    /// When the followed kubelet log file last gave a line, once its history was read (a line
    /// read live was written about then): where the kubelet's log ends for the rules
    /// (`diagnose_with_logs_until`), so a kubelet that exited and runs again, logging only
    /// records no rule reads, is seen running. `None` before, and for a journal.
    pub kubelet_last_line: Mutex<Option<Timestamp>>,
}

impl Shared {
    /// Records a source's success, with what was read.
    pub fn ok(&self, source: &str, detail: Option<String>) {
        let mut status = SourceStatus::ok();
        status.detail = detail;
        self.report(source, &status);
    }

    /// Records a source's failure.
    pub fn failed(&self, source: &str, error: String) {
        self.report(source, &SourceStatus::error(error));
    }

    /// Records a source's status as read: healthy only when `ok`; a degraded source keeps its
    /// view (the rules that need the missing part skip) and is unhealthy in `/readyz` and
    /// `podcoroner_source_up`.
    pub fn report(&self, source: &str, status: &SourceStatus) {
        let now = Timestamp::now();
        let healthy = status.is_ok();
        let mut h = self.health.lock().unwrap_or_else(|e| e.into_inner());
        // Logged on a change of state only (a source that stays degraded is rescanned every few
        // seconds): its status stays in /readyz and `podcoroner_source_up`.
        let was = h.get(source).map(SourceHealth::healthy);
        if was != Some(healthy) {
            let line = podcoroner_node::gather::status_line(status);
            if healthy {
                if was.is_some() {
                    tracing::info!(source, status = %line, "Source recovered");
                }
            } else {
                tracing::warn!(source, error = %line, "Source failed");
            }
        }
        let entry = h.entry(source.to_string()).or_insert(SourceHealth {
            status: status.clone(),
            since: now,
            last_success: None,
            last_success_detail: None,
        });
        if entry.healthy() != healthy {
            entry.since = now;
        }
        entry.status = status.clone();
        if healthy {
            entry.last_success = Some(now);
            entry.last_success_detail = Some(podcoroner_node::gather::status_line(status));
        }
        self.metrics
            .source_up
            .get_or_create(&metrics::SourceLabels {
                source: source.to_string(),
            })
            .set(i64::from(healthy));
    }

    /// The node view the rules read now.
    pub fn node_view(&self) -> NodeView {
        let v = self.views.lock().unwrap_or_else(|e| e.into_inner()).clone();
        NodeView {
            node_name: self.node.clone(),
            cri: v.cri,
            api: v.api,
            manifests: v.manifests,
            pod_dirs: v.pod_dirs,
            manifest_url: v.manifest_url,
        }
    }

    /// The log events kept.
    pub fn events(&self) -> Vec<LoggedEvent> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the daemon until SIGTERM or SIGINT, then stops accepting, finishes in-flight requests
/// and saves the state.
///
/// The daemon follows the first kubelet log and the first runtime log of `options.sources`
/// (its settings allow one of each: [`config::Settings::check_logs`]).
///
/// # Errors
/// The state cannot be loaded, or the listen address cannot be bound.
pub async fn run(options: AgentOptions) -> anyhow::Result<()> {
    let state_path = options.state_dir.join("state.json");
    let store = store::Store::load(
        &state_path,
        options.resolve_after_misses,
        options.resolved_retention,
    )?;
    let shared = Arc::new(Shared {
        node: options.sources.node_name.clone(),
        started: Timestamp::now(),
        views: Mutex::new(Views::default()),
        events: Mutex::new(logs::load_events(&options.state_dir.join("events.json"))),
        health: Mutex::new(BTreeMap::new()),
        store: Mutex::new(store),
        skipped: Mutex::new(vec![]),
        metrics: metrics::Metrics::default(),
        options: options.clone(),
        wake: tokio::sync::Notify::new(),
        new_findings: Mutex::new(None),
        checkpoints: Mutex::new(
            podcoroner_logs::follow::load_checkpoints(
                &options.state_dir.join("log-checkpoints.json"),
            )
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "Ignoring unreadable log read positions");
                Default::default()
            }),
        ),
        last_log_save: Mutex::new(None),
        last_events_save: Mutex::new(None),
        last_store_save: Mutex::new(None),
        events_changed: Mutex::new(false),
        gc_stop_failures: Mutex::new(vec![]),
        kubelet_last_line: Mutex::new(None),
    });
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", options.listen))?;
    let gc_mode = match options.gc.0 {
        crate::config::GcMode::Off => "off",
        crate::config::GcMode::Plan => "plan",
        crate::config::GcMode::Apply => "apply",
    };
    shared
        .metrics
        .info
        .get_or_create(&metrics::InfoLabels {
            version: env!("CARGO_PKG_VERSION").to_string(),
            gc: gc_mode.to_string(),
            events: options.events.to_string(),
        })
        .set(1);
    tracing::info!(
        listen = %options.listen,
        node = %shared.node,
        gc = gc_mode,
        events = options.events,
        "Serving"
    );

    let mut tasks = vec![
        tokio::spawn(cri_loop(shared.clone())),
        tokio::spawn(files_loop(shared.clone())),
        tokio::spawn(url_loop(shared.clone())),
        tokio::spawn(api_loop(shared.clone())),
        tokio::spawn(evaluate_loop(shared.clone(), state_path.clone())),
        tokio::spawn(events_loop(shared.clone())),
    ];
    for (name, source, kind) in [
        (
            "kubelet_log",
            options.sources.kubelet_logs.first(),
            LogKind::Kubelet,
        ),
        (
            "runtime_log",
            options.sources.runtime_logs.first(),
            LogKind::Runtime,
        ),
    ] {
        match source {
            Some(podcoroner_logs::Source::File(path)) => {
                tasks.push(tokio::spawn(logs::file_loop(
                    shared.clone(),
                    name,
                    path.clone(),
                    kind,
                )));
            }
            Some(podcoroner_logs::Source::Journald { unit, directory }) => {
                tasks.push(tokio::spawn(logs::journal_loop(
                    shared.clone(),
                    name,
                    unit.clone(),
                    directory.clone(),
                    kind,
                )));
            }
            None => {}
        }
    }
    // Not joined at shutdown: its runs are audited step by step, and the process exit ends it.
    let _gc = spawn_gc(shared.clone());
    let router = http::router(shared.clone());
    serve::serve(listener, router, options.http, shutdown_signal()).await;
    for t in tasks {
        t.abort();
    }
    // Flush: one last save of what we know.
    lock(&shared.store).save(&state_path)?;
    logs::save(&shared);
    tracing::info!("Stopped");
    Ok(())
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// Lists the CRI every poll interval; on failure drops the client and the view, retries with
/// backoff (1 s doubling up to the poll interval).
async fn cri_loop(shared: Arc<Shared>) {
    let opts = &shared.options;
    let mut client: Option<podcoroner_cri::RuntimeClient> = None;
    let mut backoff = Duration::from_secs(1);
    // The containers' CRI started_at, asked once per container (gather::StartedAt).
    let mut started = podcoroner_node::gather::StartedAt::for_agent();
    loop {
        let res: anyhow::Result<()> = async {
            if client.is_none() {
                let endpoint = podcoroner_cri::endpoint::resolve_from_system(
                    opts.sources.runtime_endpoint.as_deref(),
                    None,
                )?;
                let t = Instant::now();
                client = Some(
                    podcoroner_cri::RuntimeClient::connect(
                        &endpoint.endpoint,
                        opts.sources.timeout,
                    )
                    .await?,
                );
                observe(&shared, "Version", t.elapsed());
            }
            let c = client.as_ref().expect("connected above");
            let (cri, status) = podcoroner_node::gather::read_cri(
                c,
                |rpc, elapsed| observe(&shared, rpc, elapsed),
                Some(&mut started),
            )
            .await?;
            set_state_gauges(&shared, &cri.sandboxes, &cri.containers);
            lock(&shared.views).cri = Some(cri);
            shared.report("cri", &status);
            Ok(())
        }
        .await;
        match res {
            Ok(()) => {
                backoff = Duration::from_secs(1);
                tokio::time::sleep(opts.cri_poll_interval).await;
            }
            Err(e) => {
                client = None;
                lock(&shared.views).cri = None;
                shared.failed("cri", format!("{e:#}"));
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(opts.cri_poll_interval);
            }
        }
    }
}

fn observe(shared: &Shared, rpc: &str, elapsed: Duration) {
    shared
        .metrics
        .cri_duration
        .get_or_create(&metrics::RpcLabels {
            rpc: rpc.to_string(),
        })
        .observe(elapsed.as_secs_f64());
}

fn set_state_gauges(
    shared: &Shared,
    sandboxes: &[podcoroner_core::Sandbox],
    containers: &[podcoroner_core::Container],
) {
    use podcoroner_core::{ContainerState, SandboxState};
    for state in [SandboxState::Ready, SandboxState::NotReady] {
        let n = sandboxes.iter().filter(|s| s.state == state).count() as i64;
        shared
            .metrics
            .sandboxes
            .get_or_create(&metrics::StateLabels {
                state: state.cri_name().to_string(),
            })
            .set(n);
    }
    for state in [
        ContainerState::Created,
        ContainerState::Running,
        ContainerState::Exited,
        ContainerState::Unknown,
    ] {
        let n = containers.iter().filter(|c| c.state == state).count() as i64;
        shared
            .metrics
            .containers
            .get_or_create(&metrics::StateLabels {
                state: state.cri_name().to_string(),
            })
            .set(n);
    }
}

/// Reads the static pod URL every rescan interval, when one is configured (the kubelet reads it
/// every `httpCheckFrequency`, 20 s by default). A URL that cannot be read, or a body the kubelet
/// rejects, is a degraded source whose view says why, so the rules that need it skip.
async fn url_loop(shared: Arc<Shared>) {
    let opts = &shared.options;
    let Some(url) = opts.sources.manifest_url.clone() else {
        return;
    };
    loop {
        let view = podcoroner_hostfs::static_pod_url::fetch(&url, opts.sources.timeout).await;
        let status = podcoroner_node::gather::manifest_url_status(&view);
        lock(&shared.views).manifest_url = Some(view);
        shared.report("manifest_url", &status);
        tokio::time::sleep(opts.rescan_interval).await;
    }
}

/// Re-reads the manifest directory and the pod directories every rescan interval, and early on
/// a file event in the manifest directory (events are hints: they are lost on overflow and on
/// directory replacement, so the rescan stays the truth).
async fn files_loop(shared: Arc<Shared>) {
    use notify::Watcher as _;
    let opts = &shared.options;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    // Only changes wake the rescan: reading the directory produces access events, which would
    // otherwise wake it again and again.
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if res.is_ok_and(|ev| !matches!(ev.kind, notify::EventKind::Access(_))) {
            let _ = tx.try_send(());
        }
    })
    .ok();
    let mut watching = false;
    loop {
        if !watching && let Some(w) = watcher.as_mut() {
            watching = w
                .watch(
                    &opts.sources.manifest_dir,
                    notify::RecursiveMode::NonRecursive,
                )
                .is_ok();
        }
        // Parsing runs on a blocking thread: a hostile manifest never holds up the threads that
        // serve HTTP and poll CRI.
        let (manifest_dir, kubelet_root) = (
            opts.sources.manifest_dir.clone(),
            opts.sources.kubelet_root_dir.clone(),
        );
        let read = tokio::task::spawn_blocking(move || {
            (
                podcoroner_node::gather::read_manifests(&manifest_dir),
                podcoroner_node::gather::read_pod_dirs(&kubelet_root),
            )
        })
        .await;
        let (manifests, pod_dirs) = match read {
            Ok(read) => read,
            Err(e) => {
                shared.failed("manifests", format!("the manifest reader stopped: {e}"));
                tokio::time::sleep(opts.rescan_interval).await;
                continue;
            }
        };
        match manifests {
            Ok((view, status)) => {
                if !view.exists {
                    watching = false;
                }
                lock(&shared.views).manifests = Some(view);
                shared.report("manifests", &status);
            }
            Err(e) => {
                lock(&shared.views).manifests = None;
                shared.failed("manifests", e.to_string());
            }
        }
        match pod_dirs {
            Ok((dirs, status)) => {
                lock(&shared.views).pod_dirs = dirs;
                shared.report("pod_dirs", &status);
            }
            Err(e) => {
                lock(&shared.views).pod_dirs = None;
                shared.failed("pod_dirs", e.to_string());
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(opts.rescan_interval) => {}
            woke = rx.recv() => {
                if woke.is_none() {
                    // No watcher: the periodic rescan alone.
                    tokio::time::sleep(opts.rescan_interval).await;
                }
                // Let a burst of events settle.
                tokio::time::sleep(Duration::from_millis(200)).await;
                while rx.try_recv().is_ok() {}
            }
        }
    }
}

/// Keeps this node's pods from the API server current: a watch (relisting on expiry, backing off
/// on errors) whose store is read at most once a second after a change; or, with a pods file,
/// the file re-read every poll interval. Without API access the daemon keeps running and says
/// so in `/readyz`.
async fn api_loop(shared: Arc<Shared>) {
    use futures::StreamExt as _;
    let opts = &shared.options;
    if let Some(path) = &opts.sources.pods_file {
        loop {
            let file = path.clone();
            let read =
                tokio::task::spawn_blocking(move || podcoroner_apiserver::read_pod_list(&file))
                    .await
                    .unwrap_or_else(|e| {
                        Err(podcoroner_apiserver::Error::PodsFileReadFailed {
                            path: path.clone(),
                            error: std::io::Error::other(e.to_string()),
                        })
                    });
            match read {
                Ok(pods) => {
                    let status = podcoroner_node::gather::pods_file_status(path, &pods);
                    lock(&shared.views).api = Some(pods.view);
                    shared.report("apiserver", &status);
                }
                Err(e) => {
                    lock(&shared.views).api = None;
                    shared.failed("apiserver", e.to_string());
                }
            }
            tokio::time::sleep(opts.api_poll_interval).await;
        }
    }
    if opts.sources.no_apiserver {
        return;
    }
    let mut backoff = Duration::from_secs(1);
    loop {
        let (watch, changes) = match podcoroner_apiserver::watch_node_pods(
            opts.sources.kubeconfig.as_deref(),
            &shared.node,
            opts.sources.timeout,
        )
        .await
        {
            Ok(w) => w,
            Err(e) => {
                shared.failed("apiserver", e.to_string());
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(300));
                continue;
            }
        };
        let mut changes = Box::pin(changes);
        let mut dirty = false;
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tokio::select! {
                change = changes.next() => match change {
                    Some(Ok(())) => dirty = true,
                    Some(Err(e)) => {
                        lock(&shared.views).api = None;
                        shared.failed("apiserver", e.to_string());
                    }
                    None => break,
                },
                _ = tick.tick() => {
                    if dirty {
                        dirty = false;
                        let pods = watch.snapshot();
                        let status = podcoroner_node::gather::api_status(&pods);
                        lock(&shared.views).api = Some(pods.view);
                        shared.report("apiserver", &status);
                    }
                }
            }
        }
    }
}

/// The shortest time between two evaluations that log events woke.
pub const WAKE_EVALUATION_GAP: Duration = Duration::from_secs(1);

/// Evaluates the rules every interval, folds the findings into the store and saves it.
async fn evaluate_loop(shared: Arc<Shared>, state_path: PathBuf) {
    let opts = &shared.options;
    // Give the sources one round before the first judgement.
    tokio::time::sleep(Duration::from_millis(500)).await;
    loop {
        let started = Instant::now();
        // On a blocking thread: the rules over thousands of kept events never hold the thread
        // that serves HTTP (the daemon's runtime is current-thread).
        let (s, path) = (shared.clone(), state_path.clone());
        if let Err(e) = tokio::task::spawn_blocking(move || evaluate(&s, &path)).await {
            tracing::error!(error = %e, "An evaluation stopped");
        }
        tokio::select! {
            _ = tokio::time::sleep(opts.evaluate_interval) => {}
            // New log events: judge them soon (a finding from a log line shows within about a
            // second), after a pause that batches a burst, and at most once per
            // `WAKE_EVALUATION_GAP`: on a log full of failures every evaluation re-reads every
            // kept event, so more often only costs CPU.
            _ = shared.wake.notified() => {
                let gap = WAKE_EVALUATION_GAP.saturating_sub(started.elapsed());
                tokio::time::sleep(gap.max(Duration::from_millis(200))).await
            }
        }
    }
}

/// Posts an Event per new finding of warning or higher, at most `events_per_minute` (the rest
/// are dropped and counted, so a thousand nodes cannot flood the API server). Each finding is
/// announced once per open period: the store reports it as new only when it opens or reopens.
async fn events_loop(shared: Arc<Shared>) {
    let opts = &shared.options;
    if !opts.events || opts.sources.pods_file.is_some() || opts.sources.no_apiserver {
        return;
    }
    let (tx, mut rx) = tokio::sync::mpsc::channel::<podcoroner_apiserver::EventNote>(100);
    *lock(&shared.new_findings) = Some(tx);
    let mut sink = None;
    let mut sent: VecDeque<Instant> = VecDeque::new();
    let count = |result: &str| {
        shared
            .metrics
            .events
            .get_or_create(&metrics::ResultLabels {
                result: result.to_string(),
            })
            .inc();
    };
    while let Some(note) = rx.recv().await {
        while sent
            .front()
            .is_some_and(|t| t.elapsed() > Duration::from_secs(60))
        {
            sent.pop_front();
        }
        if sent.len() >= opts.events_per_minute as usize {
            count("dropped");
            continue;
        }
        if sink.is_none() {
            match podcoroner_apiserver::EventSink::new(
                opts.sources.kubeconfig.as_deref(),
                &shared.node,
                opts.sources.timeout,
            )
            .await
            {
                Ok(s) => sink = Some(s),
                Err(e) => {
                    tracing::warn!(error = %e, "Cannot post events");
                    count("failed");
                    continue;
                }
            }
        }
        let s = sink.as_ref().expect("set above");
        sent.push_back(Instant::now());
        match s.emit(&note).await {
            Ok(()) => count("sent"),
            Err(e) => {
                tracing::warn!(error = %e, "Posting an event failed");
                count("failed");
            }
        }
    }
}

/// Runs [`gc_loop`] on a thread of its own with its own runtime, so a GC run (its CRI calls, its
/// audit log's `fsync`s, the pause of its rate limit) never holds a thread that serves HTTP.
fn spawn_gc(shared: Arc<Shared>) -> Option<std::thread::JoinHandle<()>> {
    if shared.options.gc.0 == crate::config::GcMode::Off {
        return None;
    }
    let spawned = std::thread::Builder::new()
        .name("podcoroner-gc".to_string())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt.block_on(gc_loop(shared)),
                Err(e) => tracing::error!(error = %e, "Cannot start the GC runtime; GC is off"),
            }
        });
    match spawned {
        Ok(h) => Some(h),
        Err(e) => {
            tracing::error!(error = %e, "Cannot start the GC thread; GC is off");
            None
        }
    }
}

/// One `gc: apply` run: plans from the views the agent holds, and before each action lists the
/// runtime again through CRI (the sandbox is judged on that fresh listing with the held API,
/// manifest and pod directory views). Holds the state directory's lock for the run.
async fn gc_apply(
    shared: &Shared,
    gc_opts: &podcoroner_node::gc::GcOptions,
) -> anyhow::Result<podcoroner_node::gc::GcOutcome> {
    let _lock = podcoroner_node::gc::lock_state_dir(&gc_opts.state_dir)?;
    let sources = &shared.options.sources;
    let view = shared.node_view();
    // Acting needs the runtime the views were listed from; without a CRI view the plan
    // refuses anyway, and no endpoint is needed.
    let endpoint = match &view.cri {
        Some(_) => Some(
            podcoroner_cri::endpoint::resolve_from_system(
                sources.runtime_endpoint.as_deref(),
                None,
            )?
            .endpoint,
        ),
        None => None,
    };
    let ctx = podcoroner_node::gc::RunContext {
        pods_file: sources.pods_file.as_deref(),
        endpoint: endpoint.as_deref(),
        timeout: sources.timeout,
    };
    podcoroner_node::gc::run_on(&view, &ctx, gc_opts, async |client| {
        let (cri, _) = podcoroner_node::gather::read_cri(client, |_, _| {}, None).await?;
        let mut now = shared.node_view();
        now.cri = Some(cri);
        Ok(now)
    })
    .await
}

/// Runs GC every `gc_interval` in `plan` or `apply` mode.
async fn gc_loop(shared: Arc<Shared>) {
    use crate::config::GcMode;
    let (mode, gc_opts) = &shared.options.gc;
    if *mode == GcMode::Off {
        return;
    }
    loop {
        tokio::time::sleep(shared.options.gc_interval).await;
        match mode {
            GcMode::Off => return,
            GcMode::Plan => {
                let view = shared.node_view();
                let selector = gc_opts.selector_reason();
                let plan =
                    podcoroner_core::gc::plan(&view, &gc_opts.policy, &selector, Timestamp::now());
                shared.metrics.gc_candidates.set(plan.removals.len() as i64);
            }
            GcMode::Apply => match gc_apply(&shared, gc_opts).await {
                Ok(outcome) => {
                    shared
                        .metrics
                        .gc_candidates
                        .set(outcome.plan.removals.len() as i64);
                    *lock(&shared.gc_stop_failures) = outcome.stop_failures.clone();
                    shared.wake.notify_one();
                    let sender = lock(&shared.new_findings).clone();
                    for r in &outcome.records {
                        shared
                            .metrics
                            .gc_actions
                            .get_or_create(&metrics::ResultLabels {
                                result: r.result.clone(),
                            })
                            .inc();
                        // Every action is announced as an Event on the pod (rate-limited with the rest).
                        let (reason, event_type) = match r.result.as_str() {
                            "removed" => ("LeakedSandboxRemoved", "Normal"),
                            "stop_failed" | "remove_failed" => ("SandboxStopFailing", "Warning"),
                            _ => continue,
                        };
                        if let Some(tx) = &sender {
                            let note = podcoroner_apiserver::EventNote {
                                pod: Some(r.pod.clone()),
                                reason: reason.to_string(),
                                message: format!(
                                    "podcoroner gc: pod sandbox {} {}{}",
                                    r.sandbox_id,
                                    r.result.replace('_', " "),
                                    r.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
                                ),
                                event_type,
                            };
                            let _ = tx.try_send(note);
                        }
                    }
                }
                Err(e) => {
                    // Nothing unaudited was done; an audit log that cannot be written is the
                    // state directory failing, which /readyz names.
                    if let Some(podcoroner_node::gc::GcError::AuditFailed { .. }) =
                        e.downcast_ref::<podcoroner_node::gc::GcError>()
                    {
                        shared.failed("state", format!("{e:#}"));
                    }
                    shared
                        .metrics
                        .gc_actions
                        .get_or_create(&metrics::ResultLabels {
                            result: "refused".to_string(),
                        })
                        .inc();
                    tracing::warn!(error = %format!("{e:#}"), "GC run failed");
                }
            },
        }
    }
}

/// One evaluation: rules over the latest views, folded into the store, metrics, saved state.
pub fn evaluate(shared: &Shared, state_path: &std::path::Path) {
    let view = shared.node_view();
    let now = Timestamp::now();
    // The kept events are judged in place (no copy of the ring at every evaluation); the
    // followers wait for the lock meanwhile.
    let mut events = lock(&shared.events);
    let kubelet_log_end = *lock(&shared.kubelet_last_line);
    let mut diagnosis = podcoroner_core::log_rules::diagnose_with_logs_until(
        &view,
        events.make_contiguous(),
        kubelet_log_end,
        &shared.options.rules,
        now,
    );
    drop(events);
    shared.metrics.startup.observe(&diagnosis.startup);
    podcoroner_core::gc::add_stop_failures(
        &mut diagnosis.findings,
        &lock(&shared.gc_stop_failures),
        &view,
    );
    let mut store = lock(&shared.store);
    let opened = store.update(&diagnosis.findings, &diagnosis.skipped, now);
    let sender = lock(&shared.new_findings).clone();
    for key in &opened {
        tracing::info!(finding = %key, "New finding");
        if let (Some(tx), Some(t)) = (&sender, store.findings.get(key))
            && t.finding.severity >= podcoroner_core::Severity::Warning
        {
            let note = podcoroner_apiserver::EventNote {
                pod: t.finding.pod.as_ref().map(|p| podcoroner_core::PodRef {
                    namespace: p.namespace.clone(),
                    name: p.name.clone(),
                    uid: p.uid.clone(),
                }),
                reason: t.finding.kind.clone(),
                message: t.finding.summary.clone(),
                event_type: "Warning",
            };
            if tx.try_send(note).is_err() {
                shared
                    .metrics
                    .events
                    .get_or_create(&metrics::ResultLabels {
                        result: "dropped".to_string(),
                    })
                    .inc();
            }
        }
    }
    shared.metrics.findings.clear();
    for t in store.open() {
        shared
            .metrics
            .findings
            .get_or_create(&metrics::KindLabels {
                kind: t.finding.kind.clone(),
                severity: t.finding.severity.as_str().to_string(),
            })
            .inc();
    }
    shared.metrics.evaluations.inc();
    *lock(&shared.skipped) = diagnosis.skipped;
    // Save when a finding opened or resolved, else at most every 30 s (last_seen moves at every
    // evaluation; losing 30 s of it on a crash is harmless).
    let resolved_now = store
        .findings
        .values()
        .filter(|t| t.resolved_at == Some(now))
        .count();
    let store_due =
        lock(&shared.last_store_save).is_none_or(|t| t.elapsed() >= Duration::from_secs(30));
    if !opened.is_empty() || resolved_now > 0 || store_due {
        // The `state` source: what is not saved is lost at the next restart, so an unwritable
        // state directory is a failure /readyz names, not only a log line.
        match store.save(state_path) {
            Ok(()) => shared.ok("state", Some(format!("{} saved", state_path.display()))),
            Err(e) => shared.failed("state", format!("saving {}: {e:#}", state_path.display())),
        }
        *lock(&shared.last_store_save) = Some(Instant::now());
    }
    drop(store);
    if !shared.options.sources.kubelet_logs.is_empty()
        || !shared.options.sources.runtime_logs.is_empty()
    {
        if lock(&shared.last_log_save).is_none_or(|t| t.elapsed() >= logs::SAVE_EVERY) {
            logs::save_checkpoints(shared);
            *lock(&shared.last_log_save) = Some(Instant::now());
        }
        let changed = *lock(&shared.events_changed);
        if changed
            && lock(&shared.last_events_save).is_none_or(|t| t.elapsed() >= logs::SAVE_EVENTS_EVERY)
        {
            *lock(&shared.events_changed) = false;
            logs::save_events(shared);
            *lock(&shared.last_events_save) = Some(Instant::now());
        }
    }
}
