//! Reads one node's views through the adapters into a [`NodeView`], recording each source's
//! status. Used by `podcoroner diagnose` and `podcoroner collect`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Pod;
use podcoroner_core::event::{LogKind, LoggedEvent};
use podcoroner_core::{ManifestView, NodeView};
use podcoroner_cri::RuntimeInfo;

use podcoroner_core::logs::{KEPT_FAILED_BYTES, KEPT_FAILED_RECORDS, Verdict};

use crate::api::{SourceState, SourceStatus};

/// Where to read a node's views from.
#[derive(Debug, Clone)]
pub struct SourceOptions {
    /// `--runtime-endpoint`; `None` resolves as crictl does.
    pub runtime_endpoint: Option<String>,
    /// Timeout of every CRI RPC and API server request.
    pub timeout: Duration,
    /// The node name (already resolved from `--node-name`, `NODE_NAME` or the hostname).
    pub node_name: String,
    /// `--manifest-dir`, default `/etc/kubernetes/manifests`.
    pub manifest_dir: PathBuf,
    /// `--manifest-url`: the kubelet's `staticPodURL`, when it has one.
    pub manifest_url: Option<String>,
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--pods FILE`: the JSON of `kubectl get pods -A -o json`, instead of the API server.
    pub pods_file: Option<PathBuf>,
    /// `--no-apiserver`: do not contact the API server.
    pub no_apiserver: bool,
    /// `--kubelet-root-dir`, default `/var/lib/kubelet`.
    pub kubelet_root_dir: PathBuf,
    /// `--kubelet-log PATH|journald` (journald with `--kubelet-unit` and `--journal-dir`), each
    /// one given, in order: each is its own source, named by [`log_source_name`].
    pub kubelet_logs: Vec<podcoroner_logs::Source>,
    /// `--runtime-log PATH|journald` (journald with `--runtime-unit` and `--journal-dir`), as
    /// [`SourceOptions::kubelet_logs`].
    pub runtime_logs: Vec<podcoroner_logs::Source>,
    /// `--since`: log records before this are skipped.
    pub since: Option<jiff::Timestamp>,
    /// `--offline`: judge from the logs alone; no runtime, API server or node files.
    pub offline: bool,
}

/// A node's views as read, with each source's status and the raw data a snapshot keeps.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The views, for the rules.
    pub view: NodeView,
    /// Each source's status, keyed `cri`, `apiserver`, `manifests`, `pod_dirs`.
    pub sources: BTreeMap<String, SourceStatus>,
    /// The runtime's identity, when the CRI view was read.
    pub runtime: Option<RuntimeInfo>,
    /// The API pods as returned, when the API view was read.
    pub raw_pods: Option<Vec<Pod>>,
    /// The classified events of the kubelet's and the runtime's logs, in reading order.
    pub events: Vec<LoggedEvent>,
    /// The time of the kubelet logs' last record, classified or not (`LogRead::span`): what
    /// `diagnose_with_logs_until` takes as where the kubelet's log ends.
    pub kubelet_log_end: Option<jiff::Timestamp>,
    /// How each log's yearless and zone-less times were read (kubelet logs, then runtime logs,
    /// as given): what a second read of them must use.
    pub(crate) log_reads: Vec<podcoroner_logs::ReadAs>,
}

/// A log's host: the one its last record names, or else the one most of its records name (a
/// node renamed as it was set up ends its logs under its own name); `None` when no record names
/// one. Logs whose hosts differ are several nodes' logs.
fn log_host(read: &podcoroner_logs::LogRead) -> Option<String> {
    let mut counts: Vec<(String, u64)> = Vec::new();
    for (h, n) in &read.hosts {
        let Some(h) = host_name(h) else { continue };
        match counts.iter_mut().find(|(c, _)| *c == h) {
            Some((_, m)) => *m += n,
            None => counts.push((h, *n)),
        }
    }
    let last = read.last_host.as_deref().and_then(host_name);
    last.or_else(|| counts.into_iter().max_by_key(|(_, n)| *n).map(|(h, _)| h))
}

/// A host as [`log_host`] compares it: its first label, lower case (`node-a` and
/// `node-a.example.com` are one); `None` for a name that is no host name (a cut `node-`, a
/// redacted `ip-10-xxxx`, a log format's `[info][94213]`) and for a boot's name before the node
/// has its own (`localhost`).
fn host_name(h: &str) -> Option<String> {
    let label = h.split('.').next().unwrap_or(h).to_ascii_lowercase();
    let name = label.len() >= 2
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !label.starts_with('-')
        && !label.ends_with('-')
        && !label.contains("xxx")
        && label != "localhost";
    name.then_some(label)
}

/// `offset` as ISO 8601 writes it: `+02:00`, `-05:30`.
fn offset_text(offset: jiff::tz::Offset) -> String {
    let seconds = offset.seconds();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// The source name of the `index`th (from 0) log of `kind` given: `kubelet_log` or
/// `runtime_log` for the first, then `kubelet_log_2`, `kubelet_log_3`, … (SOURCES, the JSON's
/// `sources`, `/readyz`, the metrics' `source` label).
pub fn log_source_name(kind: LogKind, index: usize) -> String {
    let base = match kind {
        LogKind::Kubelet => "kubelet_log",
        LogKind::Runtime => "runtime_log",
    };
    match index {
        0 => base.to_string(),
        i => format!("{base}_{}", i + 1),
    }
}

/// Reads every source.
///
/// The API server is optional: when it cannot be reached its source is `unavailable` or
/// `error` and the rules that need it skip.
///
/// # Errors
/// Anything that stops a diagnosis: no CRI runtime (missing socket, permission, not a CRI
/// socket, an RPC failing), an unreadable manifest or pod directory, an unreadable or malformed
/// `--pods` file. Each error names the endpoint, file or RPC.
pub async fn gather(opts: &SourceOptions) -> anyhow::Result<Gathered> {
    gather_with(opts, Keep::Every).await
}

/// [`gather`] for `explain QUERY`: of the logs it keeps only the events of the pod `query` names
/// ([`podcoroner_core::timeline::Identity`]), in memory bounded by that pod's records whatever
/// the logs' size. The identity grows as `explain` grows it, a round at a time, over the view
/// and then every event in reading order: each round reads every log again (`read_each`,
/// nothing kept but the round's events of the pod), and the round that adds nothing gives the
/// events (after [`Identity::ROUNDS`](podcoroner_core::timeline::Identity::ROUNDS) rounds that
/// all grew it, one more read keeps the events of what it has grown to). So
/// [`Gathered::events`] holds exactly the events `explain` over every event would show (but for
/// a journal printed newest first, whose records the rounds see newest first: the same
/// identity unless the rounds run out). Two reads of each log besides the first in the usual
/// case: a round that grows the identity, one that confirms it. A log that is no regular file (a
/// pipe) is read once, every event kept.
///
/// # Errors
/// As [`gather`].
pub async fn gather_for_explain(opts: &SourceOptions, query: &str) -> anyhow::Result<Gathered> {
    use podcoroner_core::timeline::Identity;
    // A log that cannot be read twice (a pipe: `--kubelet-log <(zcat …)`, or the standard input
    // from one) is read once, keeping every event: the rounds would find it empty after the
    // first.
    let once_only = opts
        .kubelet_logs
        .iter()
        .chain(&opts.runtime_logs)
        .any(|s| match s {
            podcoroner_logs::Source::File(p) => std::fs::metadata(p).is_ok_and(|m| !m.is_file()),
            podcoroner_logs::Source::Journald { .. } => false,
        });
    if once_only {
        return gather_with(opts, Keep::Every).await;
    }
    let mut g = gather_with(opts, Keep::Nothing).await?;
    let logs: Vec<(LogKind, &podcoroner_logs::Source)> = opts
        .kubelet_logs
        .iter()
        .map(|s| (LogKind::Kubelet, s))
        .chain(opts.runtime_logs.iter().map(|s| (LogKind::Runtime, s)))
        .collect();
    let mut identity = Identity::new(query);
    // The rounds `explain` grows the identity in, each over the view and then every event in
    // reading order; a last read only to keep, when every round grew it.
    for round in 0..=Identity::ROUNDS {
        let last = round == Identity::ROUNDS;
        let before = identity.size();
        if !last {
            identity.grow_from_view(&g.view);
        }
        let mut kept = Vec::new();
        for ((kind, source), read_as) in logs.iter().zip(&g.log_reads) {
            podcoroner_logs::read_each_as(source, *kind, opts.since, *read_as, |e| {
                let named = if last {
                    identity.names_event(&e)
                } else {
                    identity.grow_from(&e)
                };
                if named {
                    kept.push(e);
                }
            })?;
        }
        if last || identity.size() == before {
            g.events = kept;
            break;
        }
    }
    Ok(g)
}

/// [`gather`] keeping no log event: `collect`, which copies the log windows and reports each
/// log's counts, reads each log in memory bounded by the blocks in flight.
///
/// # Errors
/// As [`gather`].
pub async fn gather_for_collect(opts: &SourceOptions) -> anyhow::Result<Gathered> {
    gather_with(opts, Keep::Nothing).await
}

/// Which log events a gather keeps.
#[derive(Clone, Copy)]
enum Keep {
    /// Every event (`explain`).
    Every,
    /// What the rules read ([`podcoroner_logs::read_for_diagnosis`]).
    Folded,
    /// None: the counts only.
    Nothing,
}

/// [`gather`] for `diagnose`: the logs are read with
/// [`podcoroner_logs::read_for_diagnosis`], which folds the records the rules do not need one by
/// one (a pod's repeated readiness and startup records), so [`Gathered::events`] holds what the
/// rules read, not every event; the `events` count of each log's status still counts every one.
/// `explain` uses [`gather`], `collect` [`gather_for_collect`].
///
/// # Errors
/// As [`gather`].
pub async fn gather_for_diagnosis(opts: &SourceOptions) -> anyhow::Result<Gathered> {
    gather_with(opts, Keep::Folded).await
}

async fn gather_with(opts: &SourceOptions, keep: Keep) -> anyhow::Result<Gathered> {
    let read_log = |source: &podcoroner_logs::Source, kind, read_as| match keep {
        Keep::Folded => podcoroner_logs::read_for_diagnosis(source, kind, opts.since, read_as),
        Keep::Nothing => podcoroner_logs::read_counts(source, kind, opts.since, read_as),
        Keep::Every => podcoroner_logs::read_as(source, kind, opts.since, read_as),
    };
    let mut sources = BTreeMap::new();
    let mut events = Vec::new();
    let mut logs = Vec::new();
    for (kind, sources) in [
        (LogKind::Kubelet, &opts.kubelet_logs),
        (LogKind::Runtime, &opts.runtime_logs),
    ] {
        for (i, source) in sources.iter().enumerate() {
            logs.push((log_source_name(kind, i), source, kind));
        }
    }
    let reads = podcoroner_logs::read_in_node_times(logs, read_log)?;
    let mut log_reads = Vec::new();
    // Each log's host (`log_host`): logs whose hosts differ are several nodes' logs, judged
    // here as one node's.
    let mut hosts: Vec<String> = Vec::new();
    for log in &reads {
        if let Some(h) = log_host(&log.read)
            && !hosts.contains(&h)
        {
            hosts.push(h);
        }
    }
    for log in &reads {
        log_reads.push(log.read_as);
        let mut s = log_status(log.source, log.kind, &log.read);
        if hosts.len() > 1
            && let Some(own) = log_host(&log.read)
        {
            if s.status == Some(SourceState::Ok) {
                s.status = Some(SourceState::Degraded);
            }
            s.counts.insert("hosts".to_string(), hosts.len());
            s.note_last(format!(
                "its records are host {own}'s, the logs read are {}'s: more than one node's \
                 logs, judged as one node's (give one node's logs)",
                hosts.join("'s and ")
            ));
        }
        if let Some((year, whose)) = &log.year_note {
            s.note_last(format!("yearless times read in {year}, {whose}"));
        }
        if let Some((zone, whose)) = &log.zone_note {
            s.note_last(format!(
                "zone-less times read in UTC{}, {whose} (a local time beside a zoned one)",
                offset_text(*zone)
            ));
        }
        sources.insert(log.name.clone(), s);
    }
    let kubelet_log_end = reads
        .iter()
        .filter(|log| log.kind == LogKind::Kubelet)
        .filter_map(|log| log.read.span.map(|(_, end)| end))
        .max();
    for log in reads {
        // Moved, not copied, when it is the only log.
        if events.is_empty() {
            events = log.read.events;
        } else {
            events.extend(log.read.events);
        }
    }
    if opts.offline {
        let mut offline_sources = vec!["cri", "apiserver", "manifests", "pod_dirs"];
        if opts.manifest_url.is_some() {
            offline_sources.push("manifest_url");
        }
        for name in offline_sources {
            sources.insert(
                name.to_string(),
                SourceStatus::unavailable("not read: --offline"),
            );
        }
        return Ok(Gathered {
            view: NodeView {
                node_name: opts.node_name.clone(),
                cri: None,
                api: None,
                manifests: None,
                pod_dirs: None,
                manifest_url: None,
            },
            sources,
            runtime: None,
            raw_pods: None,
            events,
            kubelet_log_end,
            log_reads,
        });
    }
    let (manifests, status) = read_manifests(&opts.manifest_dir)?;
    sources.insert("manifests".to_string(), status);

    let manifest_url = match &opts.manifest_url {
        Some(url) => Some(podcoroner_hostfs::static_pod_url::fetch(url, opts.timeout).await),
        None => None,
    };
    if let Some(u) = &manifest_url {
        sources.insert("manifest_url".to_string(), manifest_url_status(u));
    }

    let (pod_dirs, status) = read_pod_dirs(&opts.kubelet_root_dir)?;
    sources.insert("pod_dirs".to_string(), status);

    // Local files first: a bad one is reported before any socket is touched.
    let pods_file = opts
        .pods_file
        .as_deref()
        .map(podcoroner_apiserver::read_pod_list)
        .transpose()?;

    let endpoint =
        podcoroner_cri::endpoint::resolve_from_system(opts.runtime_endpoint.as_deref(), None)?;
    let client = podcoroner_cri::RuntimeClient::connect(&endpoint.endpoint, opts.timeout).await?;
    let (cri, status) = read_cri(&client, |_, _| {}, Some(&mut StartedAt::one_shot())).await?;
    let runtime = client.runtime_info().clone();
    sources.insert("cri".to_string(), status);

    let (api, raw_pods, api_status) = if let (Some(pods), Some(path)) = (pods_file, &opts.pods_file)
    {
        let s = pods_file_status(path, &pods);
        (Some(pods.view), Some(pods.raw), s)
    } else if opts.no_apiserver {
        (
            None,
            None,
            SourceStatus::unavailable("disabled by --no-apiserver"),
        )
    } else {
        match podcoroner_apiserver::list_node_pods(
            opts.kubeconfig.as_deref(),
            &opts.node_name,
            opts.timeout,
        )
        .await
        {
            Ok(pods) => {
                let s = api_status(&pods);
                (Some(pods.view), Some(pods.raw), s)
            }
            // An explicit --kubeconfig that cannot be loaded is a usage error, not a degraded run.
            Err(e @ podcoroner_apiserver::Error::ConfigFailed { .. }) => {
                if opts.kubeconfig.is_some() {
                    return Err(e.into());
                }
                (None, None, SourceStatus::unavailable(e.to_string()))
            }
            Err(e) => (None, None, SourceStatus::error(e.to_string())),
        }
    };
    sources.insert("apiserver".to_string(), api_status);

    Ok(Gathered {
        view: NodeView {
            node_name: opts.node_name.clone(),
            cri: Some(cri),
            api,
            manifests: Some(manifests),
            pod_dirs,
            manifest_url,
        },
        sources,
        runtime: Some(runtime),
        raw_pods,
        events,
        kubelet_log_end,
        log_reads,
    })
}

/// Lists the runtime's pod sandboxes and containers (CRI `ListPodSandbox`, then
/// `ListContainers`) into a [`podcoroner_core::CriView`] with its status; `observe(rpc,
/// elapsed)` is told how long each RPC took. `diagnose`, `collect`, `gc` and the agent's CRI
/// poller all read the runtime through this.
///
/// With `started`, each container's `started_at` is read with CRI `ContainerStatus` (as
/// `crictl inspect` does: `ListContainers` does not carry it) through that cache
/// ([`StartedAt`]); `gc` passes `None` and reads no status.
///
/// # Errors
/// An RPC failed or timed out; the error names the endpoint and the RPC. A `ContainerStatus`
/// that fails is no error: the container keeps `started_at: None` and the status counts it
/// (`container_status_failed`).
pub async fn read_cri(
    client: &podcoroner_cri::RuntimeClient,
    observe: impl Fn(&'static str, Duration),
    started: Option<&mut StartedAt>,
) -> Result<(podcoroner_core::CriView, SourceStatus), podcoroner_cri::Error> {
    let t = std::time::Instant::now();
    let sandboxes = client.list_sandboxes().await?;
    observe("ListPodSandbox", t.elapsed());
    let t = std::time::Instant::now();
    let mut containers = client.list_containers().await?;
    observe("ListContainers", t.elapsed());
    let failed = match started {
        Some(cache) => cache.fill(client, &mut containers, &observe).await,
        None => 0,
    };
    let cri = podcoroner_core::CriView {
        sandboxes,
        containers,
    };
    let mut status = cri_status(client.runtime_info(), &cri);
    if failed > 0 {
        status
            .counts
            .insert("container_status_failed".to_string(), failed);
    }
    Ok((cri, status))
}

/// The containers' CRI `started_at` (`ContainerStatus.started_at`), by container ID, for the
/// pod start breakdown's container edges.
///
/// A container's `started_at` never changes once the runtime set it, so an answer for a
/// container past `CONTAINER_CREATED` is kept and that container is never asked again; one still
/// `CONTAINER_CREATED` is asked again at the next read. The cache holds only the containers of
/// the latest `ListContainers` (the others are dropped at each read), so it is bounded by the
/// runtime's own container list, and at most `max_calls_per_read` `ContainerStatus` calls are
/// made per read, newest containers first (an agent starting on a node with many containers
/// spreads them over its first polls).
#[derive(Debug)]
pub struct StartedAt {
    known: std::collections::HashMap<String, Option<jiff::Timestamp>>,
    max_calls_per_read: usize,
}

impl StartedAt {
    /// The agent's CRI poller's cache: at most [`StartedAt::AGENT_CALLS_PER_READ`] calls a poll.
    pub fn for_agent() -> StartedAt {
        StartedAt::with_max_calls(StartedAt::AGENT_CALLS_PER_READ)
    }

    /// A one-shot read (`diagnose`, `explain`, `collect`): every container asked once.
    pub fn one_shot() -> StartedAt {
        StartedAt::with_max_calls(usize::MAX)
    }

    /// At most `max_calls_per_read` `ContainerStatus` calls per read.
    pub fn with_max_calls(max_calls_per_read: usize) -> StartedAt {
        StartedAt {
            known: std::collections::HashMap::new(),
            max_calls_per_read,
        }
    }

    /// How many `ContainerStatus` calls a poll of the agent makes at most: 64 (a few ms on a
    /// local socket).
    pub const AGENT_CALLS_PER_READ: usize = 64;

    /// How many containers' answers are kept.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether no answer is kept.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// Sets `started_at` of `containers` from the cache, asking the runtime for the others;
    /// drops the containers no longer listed. Returns how many calls failed (a container
    /// removed meanwhile, `NotFound`, is not a failure).
    async fn fill(
        &mut self,
        client: &podcoroner_cri::RuntimeClient,
        containers: &mut [podcoroner_core::Container],
        observe: &impl Fn(&'static str, Duration),
    ) -> usize {
        let listed: std::collections::HashSet<&str> =
            containers.iter().map(|c| c.id.as_str()).collect();
        self.known.retain(|id, _| listed.contains(id.as_str()));
        // Newest first: a recent start is what the breakdown judges.
        let mut ask: Vec<usize> = (0..containers.len())
            .filter(|&i| !self.known.contains_key(&containers[i].id))
            .collect();
        ask.sort_by_key(|&i| std::cmp::Reverse(containers[i].created_at));
        ask.truncate(self.max_calls_per_read);
        let mut failed = 0;
        for i in ask {
            let t = std::time::Instant::now();
            let answer = client.container_status(&containers[i].id).await;
            observe("ContainerStatus", t.elapsed());
            match answer {
                Ok(st) if st.state != podcoroner_core::ContainerState::Created => {
                    self.known.insert(containers[i].id.clone(), st.started_at);
                }
                Ok(st) => containers[i].started_at = st.started_at,
                Err(podcoroner_cri::Error::NotFound { .. }) => {}
                Err(_) => failed += 1,
            }
        }
        for c in containers.iter_mut() {
            if let Some(at) = self.known.get(&c.id) {
                c.started_at = *at;
            }
        }
        failed
    }
}

/// Reads the static pod manifest directory as the kubelet's file source does into a
/// [`ManifestView`], with its status ([`manifests_status`]: degraded when the directory is
/// missing or a file cannot be read by this process).
///
/// # Errors
/// The directory exists but cannot be listed; the error names it.
pub fn read_manifests(
    dir: &std::path::Path,
) -> Result<(ManifestView, SourceStatus), podcoroner_hostfs::Error> {
    let read = podcoroner_hostfs::manifests::read_dir(dir)?;
    let status = manifests_status(&read);
    Ok((manifest_view(read), status))
}

/// Reads the kubelet's pod directories (`<root>/pods/<uid>/`), with their status
/// ([`pod_dirs_status`]: degraded, and `None`, when `<root>/pods` does not exist).
///
/// # Errors
/// `<root>/pods` exists but cannot be listed; the error names it.
pub fn read_pod_dirs(
    root: &std::path::Path,
) -> Result<(Option<Vec<podcoroner_core::PodDir>>, SourceStatus), podcoroner_hostfs::Error> {
    let dirs = podcoroner_hostfs::pod_dirs::read(root)?;
    let status = pod_dirs_status(root, dirs.as_deref());
    Ok((dirs, status))
}

/// The status line of a `--pods` file as read: its path, its pod count and what its reader
/// noted.
pub fn pods_file_status(
    path: &std::path::Path,
    pods: &podcoroner_apiserver::NodePods,
) -> SourceStatus {
    let mut s = SourceStatus::ok();
    s.path = Some(path.display().to_string());
    s.counts.insert("pods".to_string(), pods.raw.len());
    s.detail = pods.note.clone();
    s
}

/// The status line of the API server's node pods as listed or watched: where they came from
/// (`origin`: the server and the field selector) and how many.
pub fn api_status(pods: &podcoroner_apiserver::NodePods) -> SourceStatus {
    let mut s = SourceStatus::ok();
    s.endpoint = Some(pods.view.origin.clone());
    s.counts.insert("pods".to_string(), pods.raw.len());
    s
}

/// Says in `s` the `lines` of a source longer than [`podcoroner_logs::MAX_LINE_BYTES`], cut to
/// it (count `cut_lines` and a note, `N line(s) longer than 64 KiB cut to it`, with the `bytes`
/// not read when they are counted); nothing when none was. The one-shot readers and the daemon's
/// followers say it alike.
pub fn say_cut_lines(s: &mut SourceStatus, lines: u64, bytes: Option<u64>) {
    if lines == 0 {
        return;
    }
    s.counts.insert("cut_lines".to_string(), lines as usize);
    let mut note = format!(
        "{lines} line(s) longer than {} KiB cut to it",
        podcoroner_logs::MAX_LINE_BYTES / 1024
    );
    if let Some(bytes) = bytes {
        note.push_str(&format!(
            " ({bytes} byte{} not read)",
            if bytes == 1 { "" } else { "s" }
        ));
    }
    s.note_last(note);
}

/// How well a log source was understood, said in its status: the one way for the one-shot
/// readers ([`log_status`]) and the agent's followers. Counts `not_understood` and `non_records`;
/// more than 20 % of the records of no known shape, or only blank lines, prompts and markup, is
/// `not_understood` with the first records that failed (`failed`: origin, line, text, in reading
/// order); an understood source names its first unparsed line.
pub fn say_understanding<'a>(
    s: &mut SourceStatus,
    u: &podcoroner_core::logs::Understanding,
    failed: impl IntoIterator<Item = (&'a str, u64, &'a str)>,
) {
    let mut failed = failed.into_iter();
    s.counts
        .insert("not_understood".to_string(), u.not_understood as usize);
    s.counts
        .insert("non_records".to_string(), u.non_records as usize);
    match u.verdict() {
        Verdict::NotUnderstood { per_mille } => {
            s.status = Some(SourceState::NotUnderstood);
            let mut note = if u.understood == 0 {
                format!(
                    "not understood: no record of a known shape in {} records",
                    u.not_understood
                )
            } else {
                format!(
                    "not understood: {} of {} records ({}%) fit no known shape",
                    u.not_understood,
                    u.understood + u.not_understood,
                    per_mille / 10
                )
            };
            for (i, (origin, line, text)) in failed.by_ref().take(KEPT_FAILED_RECORDS).enumerate() {
                note.push_str(if i == 0 { "; first: " } else { "; " });
                let text = text.chars().take(KEPT_FAILED_BYTES).collect::<String>();
                note.push_str(&format!("{origin}:{line}: {text}"));
            }
            s.note_first(note);
        }
        Verdict::Empty if u.non_records > 0 => {
            s.status = Some(SourceState::NotUnderstood);
            s.detail = Some(format!(
                "not understood: no record, only {} blank lines, prompts and markup",
                u.non_records
            ));
        }
        Verdict::Empty | Verdict::Understood => {
            if let Some((origin, line, _)) = failed.next() {
                s.note_last(format!("first unparsed line: {origin}:{line}"));
            }
        }
    }
}

/// The status line of a log source.
pub fn log_status(
    source: &podcoroner_logs::Source,
    kind: LogKind,
    read: &podcoroner_logs::LogRead,
) -> SourceStatus {
    let mut s = SourceStatus::ok();
    s.path = Some(read.origins.join(", "));
    if read.origins.is_empty() {
        s.path = Some(source.name());
    }
    for (k, v) in [
        ("lines", read.lines),
        ("parsed", read.parsed),
        ("unparsed", read.unparsed),
        ("events", read.events.len() as u64 + read.folded),
        ("before_since", read.before_since),
    ] {
        s.counts.insert(k.to_string(), v as usize);
    }
    if let Some((a, b)) = read.span {
        s.detail = Some(format!("records from {a} to {b}"));
    }
    if read.newest_first {
        s.note_last("written newest first (journalctl -r): read oldest first");
    }
    say_understanding(
        &mut s,
        &read.understanding,
        read.unparsed_samples
            .iter()
            .map(|f| (f.origin.as_str(), f.line, f.text.as_str())),
    );
    say_cut_lines(&mut s, read.cut_lines, Some(read.cut_bytes));
    for file in &read.utf16_files {
        s.note_last(format!(
            "{}: UTF-16 text (a byte order mark; PowerShell's > writes it): read decoded",
            file.display()
        ));
    }
    for file in &read.lone_cr_files {
        s.note_last(format!(
            "{}: lines end in a lone carriage return (\\r, classic Mac OS line ends): read as line ends",
            file.display()
        ));
    }
    // An empty log is no clean bill: nothing was judged, as for a log of no known shape.
    if read.lines == 0 {
        s.status = Some(SourceState::NotUnderstood);
        let why = match source {
            podcoroner_logs::Source::File(p) if p.as_os_str() == "/dev/stdin" => {
                "nothing came on the standard input".to_string()
            }
            podcoroner_logs::Source::File(_) if read.origins.len() > 1 => {
                "the files are empty: the wrong files, or rotated away?".to_string()
            }
            podcoroner_logs::Source::File(_) => {
                "the file is empty: the wrong file, or rotated away?".to_string()
            }
            podcoroner_logs::Source::Journald { unit, .. } => {
                let flag = match kind {
                    LogKind::Kubelet => "--kubelet-unit",
                    LogKind::Runtime => "--runtime-unit",
                };
                format!(
                    "journalctl -u {unit} gave no entry: the wrong unit ({flag}), none in the time asked (--since), or journal files it cannot read (journalctl --verify)?"
                )
            }
        };
        s.note_first(format!("not understood: no line read, {why}"));
    } else if read.kubelet_callers == 0
        && read.other_callers >= 2
        && read.other_callers * 10 >= read.ours
    {
        // Another Kubernetes component's log (etcd's zap JSON, kube-apiserver's klog): the
        // kubelet's shapes, none of its code.
        s.status = Some(SourceState::NotUnderstood);
        s.note_first(format!(
            "not understood: {} of its {} records come from {} code, none from the kubelet's: \
             another component's log, the wrong file?",
            read.other_callers,
            read.parsed,
            read.other_components
                .iter()
                .map(|(who, file)| format!("{who}'s ({file})"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    } else if read.parsed > 0
        && read.ours == 0
        && read.events.is_empty()
        && read.folded == 0
        && !read.other_programs.is_empty()
    {
        // Records of other programs only (a syslog of CRON and sshd): the wrong file, which
        // would read as a clean bill.
        s.status = Some(SourceState::NotUnderstood);
        s.note_first(format!(
            "not understood: none of its {} records is the kubelet's or a container runtime's; \
             they are {}'s: the wrong file?",
            read.parsed,
            read.other_programs.join("'s, ")
        ));
    } else if read.span.is_none() && read.before_since > 0 {
        // Every dated record is before --since: nothing in the time asked was judged.
        s.status = Some(SourceState::NotUnderstood);
        s.note_first(format!(
            "not understood: no record in the time asked, all {} dated records are before --since",
            read.before_since
        ));
    }
    // A compressed file podcoroner does not read: said with the command that reads it.
    if s.status == Some(SourceState::NotUnderstood)
        && let podcoroner_logs::Source::File(path) = source
        && let Some((name, command)) = podcoroner_logs::unread_compression(path)
    {
        s.note_first(format!(
            "{} is {name}-compressed: decompress it first ({command}; plain and gzip logs are read)",
            path.display()
        ));
    }
    // Files left out or read in part: the source is read in part.
    if !read.skipped.is_empty() {
        s.status = Some(crate::api::SourceState::Degraded);
        s.counts
            .insert("skipped_files".to_string(), read.skipped.len());
        let note = read
            .skipped
            .iter()
            .map(|f| match f.lines_read {
                0 => format!("left out {}: {}", f.path.display(), f.reason),
                _ => format!("read in part {}: {}", f.path.display(), f.reason),
            })
            .collect::<Vec<_>>()
            .join("; ");
        s.note_first(note);
    }
    s
}

/// Whether a diagnosis must exit 2 rather than judge: a log source was not understood and no
/// other source was read and understood (an `--offline` run on a log of an unknown shape, or
/// on a paste with no record), so "0 findings" would be a clean bill for a node nobody read.
pub fn nothing_judged(sources: &BTreeMap<String, SourceStatus>) -> bool {
    sources
        .values()
        .any(|s| s.status == Some(SourceState::NotUnderstood))
        && !sources.values().any(SourceStatus::is_ok)
}

/// The status line of a CRI view read from `runtime`.
pub fn cri_status(runtime: &RuntimeInfo, cri: &podcoroner_core::CriView) -> SourceStatus {
    let mut s = SourceStatus::ok();
    s.endpoint = Some(runtime.endpoint.clone());
    s.runtime_name = Some(runtime.runtime_name.clone());
    s.runtime_version = Some(runtime.runtime_version.clone());
    s.cri_api_version = Some(runtime.cri_api_version.as_str().to_string());
    s.counts
        .insert("sandboxes".to_string(), cri.sandboxes.len());
    s.counts
        .insert("containers".to_string(), cri.containers.len());
    s
}

/// The view of a manifest directory as read.
pub fn manifest_view(dir: podcoroner_hostfs::manifests::ManifestDir) -> ManifestView {
    ManifestView {
        dir: dir.path.display().to_string(),
        exists: dir.exists,
        files: dir.manifests,
        unreadable: dir.unreadable,
    }
}

/// The status line of a manifest directory: degraded when it does not exist (a missing mount
/// looks the same as a node without static pods) or when a file in it cannot be read by this
/// process (what it declares is unknown); the rules that need the manifests then skip.
pub fn manifests_status(dir: &podcoroner_hostfs::manifests::ManifestDir) -> SourceStatus {
    let mut s = if !dir.exists {
        SourceStatus::degraded(
            "directory does not exist: a missing mount or a wrong --manifest-dir (the kubelet \
             would read it as no static pods); the rules that need the manifests skip",
        )
    } else if let Some(first) = dir.unreadable.first() {
        SourceStatus::degraded(format!(
            "cannot read {} file(s), first {}: {}; the rules that need every static pod skip",
            dir.unreadable.len(),
            first.path,
            first.reason
        ))
    } else {
        SourceStatus::ok()
    };
    s.path = Some(dir.path.display().to_string());
    s.counts.insert("files".to_string(), dir.manifests.len());
    if !dir.unreadable.is_empty() {
        s.counts
            .insert("unreadable".to_string(), dir.unreadable.len());
    }
    s
}

/// The status line of the static pod URL: degraded when it could not be read or its body is
/// not what the kubelet takes (the kubelet keeps the HTTP static pods it last read, so they are
/// unknown); the rules that need the URL's pods skip and say why.
pub fn manifest_url_status(u: &podcoroner_core::UrlManifestView) -> SourceStatus {
    let mut s = match &u.pods {
        Ok(pods) => {
            let mut s = SourceStatus::ok();
            s.counts.insert("pods".to_string(), pods.len());
            s
        }
        Err(e) => SourceStatus::degraded(format!(
            "{e}; the kubelet keeps the HTTP static pods it last read, so the rules that need \
             the URL's pods skip"
        )),
    };
    s.endpoint = Some(u.url.clone());
    s
}

/// The status line of the kubelet pod directories: degraded when `<root>/pods` does not exist
/// (a missing mount or a wrong `--kubelet-root-dir`; `OrphanedPodDirectory` skips).
pub fn pod_dirs_status(
    root: &std::path::Path,
    dirs: Option<&[podcoroner_core::PodDir]>,
) -> SourceStatus {
    let path = root.join("pods").display().to_string();
    match dirs {
        Some(d) => {
            let mut s = SourceStatus::ok();
            s.path = Some(path);
            s.counts.insert("directories".to_string(), d.len());
            s
        }
        None => {
            let mut s = SourceStatus::degraded(format!(
                "{path} does not exist: a missing mount or a wrong --kubelet-root-dir; the rules \
                 that need the pod directories skip"
            ));
            s.path = Some(path);
            s
        }
    }
}

/// The one-line `/readyz` detail of a status: the runtime and where it was read (endpoint or
/// path), its counts, then its detail.
pub fn status_line(s: &SourceStatus) -> String {
    let mut parts: Vec<String> = Vec::new();
    let runtime = match (&s.runtime_name, &s.runtime_version, &s.cri_api_version) {
        (Some(n), Some(v), Some(api)) => Some(format!("{n} {v} (CRI {api})")),
        _ => None,
    };
    match (runtime, &s.endpoint) {
        (Some(r), Some(e)) => parts.push(format!("{r} at {e}")),
        (Some(r), None) => parts.push(r),
        (None, Some(e)) => parts.push(e.clone()),
        (None, None) => {}
    }
    parts.extend(s.path.iter().cloned());
    if !s.counts.is_empty() {
        parts.push(
            s.counts
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    parts.extend(s.detail.iter().cloned());
    parts.join("; ")
}

/// The node name: `flag`, else `NODE_NAME`, else the hostname (`/proc/sys/kernel/hostname`).
///
/// # Errors
/// When none of them gives a non-empty name.
pub fn node_name(flag: Option<&str>) -> anyhow::Result<String> {
    // The kubelet lower-cases the node name, from the hostname or --hostname-override alike
    // (`nodeutil.GetHostname`).
    if let Some(n) = flag.filter(|n| !n.is_empty()) {
        return Ok(n.trim().to_lowercase());
    }
    if let Ok(n) = std::env::var("NODE_NAME")
        && !n.trim().is_empty()
    {
        return Ok(n.trim().to_lowercase());
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .context("no --node-name, no NODE_NAME, and the hostname cannot be read")?;
    let host = host.trim();
    anyhow::ensure!(
        !host.is_empty(),
        "no --node-name, no NODE_NAME, and the hostname is empty"
    );
    Ok(host.to_lowercase())
}
