//! `podcoroner`: the command line.
//!
//! - `podcoroner diagnose`: reads one node (or a snapshot) and prints its findings.
//! - `podcoroner collect --out DIR`: captures a node's inputs for diagnosis elsewhere.
//!
//! Exit codes (ripgrep's and `sysexits.h`): 0 no finding at or above `--fail-on`; 1 there are;
//! 2 an error stopped the diagnosis; 64 bad usage. A closed stdout (`| head`) counts as success.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, CommandFactory as _, FromArgMatches as _, Parser, Subcommand, ValueEnum};
use podcoroner_core::Severity;
use podcoroner_node::api::{DiagnosisReport, SourceState, SourceStatus};
use podcoroner_node::gather::{self, SourceOptions};
use podcoroner_node::{render, snapshot};

mod fleet;
mod progress;

/// Node-local Kubernetes pod-lifecycle forensics: joins the CRI runtime, the API server, the
/// static pod manifests and the kubelet's pod directories, and reports where they disagree.
#[derive(Debug, Parser)]
#[command(name = "podcoroner", version, rename_all = "kebab-case")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Diagnose this node (or a snapshot) once and print the findings.
    Diagnose(DiagnoseArgs),
    /// Capture this node's inputs into a directory, to diagnose elsewhere with
    /// `diagnose --snapshot DIR`.
    Collect(CollectArgs),
    /// Remove the leaked pod sandboxes the kubelet's GC should have removed, through CRI
    /// StopPodSandbox then RemovePodSandbox. Plans only (a dry run) unless --apply.
    Gc(GcArgs),
    /// One pod's life as a timeline merged from the logs and the current CRI and API state.
    Explain(ExplainArgs),
    /// Run the agent: poll the node's views, keep findings over time, serve them over HTTP.
    Daemon(Box<DaemonArgs>),
    /// Configuration file tools.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Every node's findings through the API server: the agents' `/findings` by kind and node,
    /// or one node's as `diagnose` prints them (docs/fleet.md). Also `kubectl podcoroner`.
    Fleet(fleet::FleetArgs),
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Validate a daemon configuration file: unknown keys, bad durations, bad selectors, logs
    /// the daemon cannot follow (two of one kind, `-`).
    Check {
        /// The YAML file.
        file: PathBuf,
    },
}

/// `podcoroner daemon`: every setting (`podcoroner_agent::config::Settings`, declared once,
/// docs/configuration.md) is a key of the config file and a flag; a flag wins over the file,
/// which wins over the default.
#[derive(Debug, Args)]
#[command(rename_all = "kebab-case")]
struct DaemonArgs {
    /// The YAML configuration file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    settings: podcoroner_agent::config::Settings,
}

#[derive(Debug, Args)]
#[command(rename_all = "kebab-case")]
struct ExplainArgs {
    /// The pod: a pod UID, namespace/name, or a sandbox or container ID (a prefix of 6 or more
    /// characters is enough).
    pod: String,
    #[command(flatten)]
    sources: SourceArgs,
    /// Read only the logs: no runtime, API server or node files.
    #[arg(long, conflicts_with_all = ["runtime_endpoint", "kubeconfig", "pods_file", "snapshot"])]
    offline: bool,
    /// Explain from a snapshot written by `podcoroner collect`.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["runtime_endpoint", "kubeconfig", "pods_file", "no_apiserver", "kubelet_log", "runtime_log", "journal_dir"])]
    snapshot: Option<PathBuf>,
    /// Output format: the timeline as a table, oldest entry first (entries without a
    /// time last), or the podcoroner.timeline/v1 JSON schema (`/pods/{uid}/timeline` serves the
    /// same).
    #[arg(short, long, value_enum, default_value_t = Output::Table)]
    output: Output,
}

/// Where a node's views are read from: the shared source settings, and `--since`.
#[derive(Debug, Args)]
#[command(rename_all = "kebab-case")]
struct SourceArgs {
    #[command(flatten)]
    node: podcoroner_agent::config::SourceSettings,
    /// Only log records from this time on, in journalctl's forms: a duration back from now (2h,
    /// 3d; -2h as journalctl writes it; +1h on from now), an RFC 3339 time, a date, time or both
    /// without a zone (2026-11-29, 2026-11-29 10:00:00, 12:30: today), now, today, yesterday,
    /// tomorrow (yesterday 12:00), 1 hour ago, @<epoch seconds>, read in this machine's zone as
    /// journalctl reads them.
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_since, allow_hyphen_values = true)]
    since: Option<jiff::Timestamp>,
}

/// `--since`, in journalctl's forms: an RFC 3339 time; a date, a date and time, or a time of
/// today without a zone, in this machine's zone (`2026-11-29`, `2026-11-29 10:00:00`,
/// `12:30`); `now`, `today`, `yesterday`, `tomorrow`, with a time or not (`yesterday 12:00`);
/// `@<seconds since the epoch>`; or a duration back from now (`2h`, `-2h`, `1 hour ago`) or on
/// from it (`+1h`), resolved to a time when parsed.
///
/// # Errors
/// None of these forms, or a time outside the years -9999 to 9999 that jiff represents (a
/// duration reaching back before it, `9999-12-31` in a zone east of UTC).
fn parse_since(s: &str) -> Result<jiff::Timestamp, String> {
    use jiff::civil::{Date, DateTime, Time};
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Ok(t);
    }
    let out_of_range = || {
        format!(
            "{s:?} is outside the years -9999 to 9999, the times podcoroner handles: give a nearer time"
        )
    };
    let local = |civil: DateTime| {
        civil
            .to_zoned(jiff::tz::TimeZone::system())
            .map(|z| z.timestamp())
            .map_err(|_| out_of_range())
    };
    let today = jiff::Zoned::now().date();
    let day = |d: Option<Date>| {
        d.ok_or_else(out_of_range)
            .map(|d| d.to_datetime(Time::midnight()))
    };
    match s {
        "now" => return Ok(jiff::Timestamp::now()),
        "today" => return local(day(Some(today))?),
        "yesterday" => return local(day(today.yesterday().ok())?),
        "tomorrow" => return local(day(today.tomorrow().ok())?),
        _ => {}
    }
    if let Ok(civil) = s.parse::<DateTime>() {
        return local(civil);
    }
    if let Ok(date) = s.parse::<Date>() {
        return local(date.to_datetime(Time::midnight()));
    }
    if let Ok(time) = s.parse::<Time>() {
        return local(today.to_datetime(time));
    }
    // `yesterday 12:00`, `today 08:00:00`.
    if let Some((word, time)) = s.split_once(' ')
        && let Ok(time) = time.parse::<Time>()
    {
        let date = match word {
            "today" => Some(today),
            "yesterday" => today.yesterday().ok(),
            "tomorrow" => today.tomorrow().ok(),
            _ => None,
        };
        if let Some(date) = date {
            return local(date.to_datetime(time));
        }
    }
    // `@1732870800`: seconds since the epoch.
    if let Some(seconds) = s.strip_prefix('@')
        && let Ok(seconds) = seconds.parse::<i64>()
    {
        return jiff::Timestamp::from_second(seconds).map_err(|_| out_of_range());
    }
    // `1 hour ago`, `3h ago`: back from now.
    let (forward, duration) = match (s.strip_suffix(" ago"), s.strip_prefix('+')) {
        (Some(back), _) => (false, back.trim()),
        (None, Some(rest)) => (true, rest),
        (None, None) => (false, s.strip_prefix('-').unwrap_or(s)),
    };
    let d = humantime::parse_duration(duration).map_err(|_| {
        format!(
            "{s:?} is neither a duration (2h, -3d, +1h) nor a time (2026-11-29T10:00:00Z; 2026-11-29, 12:30, yesterday in this machine's zone)"
        )
    })?;
    let d = jiff::SignedDuration::try_from(d).map_err(|_| out_of_range())?;
    let now = jiff::Timestamp::now();
    if forward {
        now.checked_add(d)
    } else {
        now.checked_sub(d)
    }
    .map_err(|_| out_of_range())
}

#[derive(Debug, Args)]
#[command(rename_all = "kebab-case")]
struct DiagnoseArgs {
    #[command(flatten)]
    sources: SourceArgs,
    /// Judge from the logs and pasted views alone (--kubelet-log, --runtime-log, --crictl-pods,
    /// --crictl-inspectp, --kubectl-pods): no runtime, API server or node files are read, and
    /// the rules that need them are listed as skipped.
    #[arg(long, conflicts_with_all = ["runtime_endpoint", "kubeconfig", "pods_file", "snapshot"])]
    offline: bool,
    /// With --offline: `crictl pods` output as pasted (the table, its header and last row
    /// optional, or `-o json`): a partial CRI view (no pod UID, labels or containers in a table)
    /// judged by the sandbox GC's keep-rules; ages are CREATED's, as of the paste. Repeatable.
    #[arg(long, value_name = "FILE", requires = "offline")]
    crictl_pods: Vec<PathBuf>,
    /// With --offline: `crictl inspectp` output as pasted (JSON, read leniently when cut).
    /// Repeatable.
    #[arg(long, value_name = "FILE", requires = "offline")]
    crictl_inspectp: Vec<PathBuf>,
    /// With --offline: `kubectl get pods [-A] [-o wide]` output as pasted (the table, or `-o
    /// json`): the API view the pasted sandboxes are judged against. Repeatable.
    #[arg(long, value_name = "FILE", requires = "offline")]
    kubectl_pods: Vec<PathBuf>,
    /// Diagnose a snapshot written by `podcoroner collect` instead of this node; ages are judged
    /// as of the collection time.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = [
            "runtime_endpoint", "kubeconfig", "pods_file", "no_apiserver", "node_name", "manifest_dir",
            "kubelet_root_dir", "timeout", "kubelet_log", "runtime_log", "journal_dir", "since", "manifest_url",
        ]
    )]
    snapshot: Option<PathBuf>,
    #[command(flatten)]
    rules: podcoroner_agent::config::RuleSettings,
    /// Output format: the findings as a table grouped by severity, or the podcoroner.diagnosis/v1
    /// JSON schema (docs/output.md).
    #[arg(short, long, value_enum, default_value_t = Output::Table)]
    output: Output,
    /// Exit 1 when a finding at or above this severity exists.
    #[arg(long, value_enum, default_value_t = FailOn::Warning)]
    fail_on: FailOn,
    /// List at most N findings of each kind, the most severe first; the rest are counted per
    /// kind (the table's NOT LISTED block, `omitted` in the JSON) and still count in the summary
    /// and the exit code. 0 lists every finding. Default: 1000 for the table; every finding for
    /// `-o json`, whose podcoroner.diagnosis/v1 readers expect them all.
    #[arg(long, value_name = "N")]
    max_findings_per_kind: Option<usize>,
}

#[derive(Debug, Args)]
#[command(rename_all = "kebab-case")]
struct CollectArgs {
    #[command(flatten)]
    sources: SourceArgs,
    /// The directory to write; created, and must be empty if it exists. Written atomically:
    /// it holds a whole snapshot or nothing.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Keep env values and secret-shaped fields (passwords, tokens, `--token=` flags,
    /// last-applied configurations) of manifests and API pods; by default they are replaced by
    /// `<redacted>` (docs/snapshot.md).
    #[arg(long)]
    keep_secrets: bool,
}

#[derive(Debug, Args)]
#[command(rename_all = "kebab-case")]
struct GcArgs {
    #[command(flatten)]
    sources: SourceArgs,
    /// Act: stop and remove the planned sandboxes. Without it, only print the plan.
    #[arg(long)]
    apply: bool,
    #[command(flatten)]
    policy: podcoroner_agent::config::GcSettings,
    /// Without an API view, treat pods no mirror pod or manifest knows as deleted. Dangerous:
    /// only for a node cut off from its API server whose pods you know are gone.
    #[arg(long)]
    assume_pods_deleted: bool,
    /// Where the audit log (gc-audit.jsonl) is appended; --apply locks it (gc.lock) for the run,
    /// and a second --apply on it refuses.
    #[arg(long, value_name = "DIR", default_value = podcoroner_agent::config::DEFAULT_STATE_DIR)]
    state_dir: PathBuf,
    /// Output format: a table of the plan and the results, or the podcoroner.gc/v1 JSON schema
    /// (docs/gc.md).
    #[arg(short, long, value_enum, default_value_t = Output::Table)]
    output: Output,
}

/// `-o`: each command's help says what its table and its JSON hold.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Output {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FailOn {
    /// Only critical findings fail.
    Critical,
    /// Warning and critical findings fail.
    Warning,
    /// Any finding fails.
    Info,
    /// Never fail on findings.
    None,
}

impl FailOn {
    fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Critical => Some(Severity::Critical),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::None => None,
        }
    }
}

const EXIT_FINDINGS: u8 = 1;
const EXIT_ERROR: u8 = 2;
/// The findings of each kind `diagnose`'s table lists unless `--max-findings-per-kind` says
/// otherwise: a log naming fresh pods on every line gives hundreds of thousands of one kind.
const TABLE_FINDINGS_PER_KIND: usize = 1000;
const EXIT_USAGE: u8 = 64;

/// A misuse of the command line found after parsing (flags that do not go together, a file
/// given twice): exits [`EXIT_USAGE`], as clap's own usage errors do.
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Fails with a [`UsageError`] saying `message`.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new(UsageError(format!($($arg)*))))
    };
}

fn main() -> ExitCode {
    let parsed = Cli::command()
        .try_get_matches_from(fleet::plugin_args(std::env::args_os().collect()))
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    match runtime.block_on(run(cli, matches.subcommand_matches("daemon"))) {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(if e.downcast_ref::<UsageError>().is_some() {
                EXIT_USAGE
            } else {
                EXIT_ERROR
            })
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

async fn run(cli: Cli, daemon_matches: Option<&clap::ArgMatches>) -> anyhow::Result<u8> {
    match cli.command {
        Command::Diagnose(args) => diagnose(args).await,
        Command::Collect(args) => collect(args).await,
        Command::Gc(args) => gc(args).await,
        Command::Explain(args) => explain(args).await,
        Command::Daemon(args) => daemon(*args, daemon_matches).await,
        Command::Fleet(args) => fleet::run(args).await,
        Command::Config(ConfigCommand::Check { file }) => {
            podcoroner_agent::config::Settings::resolve(
                None,
                Some(&podcoroner_agent::config::RawFile::load(&file)?),
            )?;
            println!("{}: ok", file.display());
            Ok(0)
        }
    }
}

fn source_options(args: &SourceArgs, offline: bool) -> anyhow::Result<SourceOptions> {
    if offline && args.node.kubelet_log.is_empty() && args.node.runtime_log.is_empty() {
        usage!(
            "--offline judges from logs and pasted views alone: give --kubelet-log, --runtime-log, \
             --crictl-pods, --crictl-inspectp or --kubectl-pods"
        );
    }
    node_options(&args.node, args.since, offline)
}

/// The [`SourceOptions`] of the source settings: every command's, the daemon's too.
fn node_options(
    s: &podcoroner_agent::config::SourceSettings,
    since: Option<jiff::Timestamp>,
    offline: bool,
) -> anyhow::Result<SourceOptions> {
    if let Some(why) = s.journal_dir_problem() {
        usage!("--journal-dir: {why}");
    }
    let [kubelet_logs, runtime_logs] = log_sources(
        [
            (&s.kubelet_log, &s.kubelet_unit),
            (&s.runtime_log, &s.runtime_unit),
        ],
        s.journal_dir.as_deref(),
    )?;
    Ok(SourceOptions {
        kubelet_logs,
        runtime_logs,
        since,
        offline,
        runtime_endpoint: s.runtime_endpoint.clone(),
        timeout: s.timeout,
        node_name: gather::node_name(s.node_name.as_deref())?,
        manifest_dir: s.manifest_dir.clone(),
        manifest_url: s.manifest_url.clone(),
        kubeconfig: s.kubeconfig.clone(),
        pods_file: s.pods_file.clone(),
        no_apiserver: s.no_apiserver,
        kubelet_root_dir: s.kubelet_root_dir.clone(),
    })
}

/// The kubelet's and the runtime's log sources from `(--kubelet-log, --kubelet-unit)` and
/// `(--runtime-log, --runtime-unit)` (or the daemon's keys of the same names), the `journald`
/// ones read from `journal_dir` when given.
///
/// # Errors
/// A [`UsageError`]: a log given twice, or `-` for two logs.
fn log_sources(
    logs: [(&Vec<String>, &String); 2],
    journal_dir: Option<&std::path::Path>,
) -> anyhow::Result<[Vec<podcoroner_logs::Source>; 2]> {
    // A file is the same whatever path names it (`./kubelet.log`, a symlink): by (dev, inode).
    let identity = |a: &str| {
        use std::os::unix::fs::MetadataExt as _;
        match std::fs::metadata(a) {
            Ok(m) if a != "journald" => format!("file {}:{}", m.dev(), m.ino()),
            _ => a.to_string(),
        }
    };
    let mut seen: Vec<(String, &str, &String)> = Vec::new();
    for ((log, _), flag) in logs.iter().zip(["--kubelet-log", "--runtime-log"]) {
        // `-` twice is said below.
        for a in log.iter().filter(|a| *a != "-") {
            let id = identity(a);
            // `journald` names the kubelet's unit for one flag and the runtime's for the other.
            if let Some((_, f, b)) = seen
                .iter()
                .find(|(i, f, _)| *i == id && (a != "journald" || *f == flag))
            {
                if *f == flag && *b == a {
                    usage!("{flag} {a} is given twice: each log is read once");
                }
                usage!("{f} {b} and {flag} {a} are the same file: each log is read once");
            }
            seen.push((id, flag, a));
        }
    }
    if logs
        .iter()
        .flat_map(|(log, _)| log.iter())
        .filter(|a| *a == "-")
        .count()
        > 1
    {
        usage!("- (the standard input) is given for two logs: it can be read once");
    }
    Ok(logs.map(|(log, unit)| {
        log.iter()
            .map(|a| podcoroner_logs::Source::from_arg(a, unit, journal_dir))
            .collect()
    }))
}

/// The node a report names: with `--offline` the logs may come from any node, so this machine's
/// hostname is not named unless `--node-name` (or `$NODE_NAME`) says which node it is: the name
/// is empty, and the table says why ([`podcoroner_node::render::UNNAMED_NODE`]).
fn report_node(args: &SourceArgs, offline: bool, resolved: &str) -> String {
    let named = args.node.node_name.is_some()
        || std::env::var("NODE_NAME").is_ok_and(|n| !n.trim().is_empty());
    if offline && !named {
        String::new()
    } else {
        resolved.to_string()
    }
}

async fn diagnose(args: DiagnoseArgs) -> anyhow::Result<u8> {
    // clap's `requires = "offline"` is not checked beside --snapshot, which conflicts with it.
    if args.snapshot.is_some()
        && !(args.crictl_pods.is_empty()
            && args.crictl_inspectp.is_empty()
            && args.kubectl_pods.is_empty())
    {
        usage!(
            "--crictl-pods, --crictl-inspectp and --kubectl-pods are read with --offline, not with --snapshot (a snapshot holds its node's views)"
        );
    }
    progress::install();
    let config = podcoroner_core::Config {
        min_age: args.rules.min_age,
        failed_pod_min_age: args.rules.failed_pod_min_age,
        assume_pods_deleted: false,
        slow_start: args.rules.slow_start,
    };
    // Every pasted sandbox read but none judged (a paste cut before each one's state).
    let mut pasted_none_judged = false;
    let listed = match (args.max_findings_per_kind, args.output) {
        (Some(0), _) | (None, Output::Json) => None,
        (Some(n), _) => Some(n),
        (None, Output::Table) => Some(TABLE_FINDINGS_PER_KIND),
    };
    let report = if let Some(dir) = &args.snapshot {
        let snap = snapshot::read_for_diagnosis(dir)?;
        let now = snap.meta.collected_at;
        let diagnosis =
            podcoroner_core::log_rules::diagnose_with_logs(&snap.view, &snap.events, &config, now);
        let report = DiagnosisReport::new(&snap.meta.node, now, snap.sources, &diagnosis, listed)
            .with_too_young(&snap.view, config.min_age);
        // The process ends after the report: freeing a troubled node's findings one by one
        // would only cost time (see the end of this function).
        std::mem::forget(diagnosis);
        report
    } else {
        let pastes = podcoroner_node::pasted::PastedFiles {
            crictl_pods: args.crictl_pods.clone(),
            crictl_inspectp: args.crictl_inspectp.clone(),
            kubectl_pods: args.kubectl_pods.clone(),
            node_name: args
                .sources
                .node
                .node_name
                .clone()
                .or_else(|| std::env::var("NODE_NAME").ok())
                .filter(|n| !n.trim().is_empty()),
        };
        // Pasted views alone are enough for --offline: no log is then needed.
        let opts = if pastes.is_empty() {
            source_options(&args.sources, args.offline)?
        } else {
            node_options(&args.sources.node, args.sources.since, args.offline)?
        };
        let mut gathered = gather::gather_for_diagnosis(&opts).await?;
        let now = jiff::Timestamp::now();
        let mut pasted_young = None;
        let mut not_judged = Vec::new();
        let mut diagnosis = podcoroner_core::log_rules::diagnose_with_logs_until(
            &gathered.view,
            &gathered.events,
            gathered.kubelet_log_end,
            &config,
            now,
        );
        if !pastes.is_empty() {
            let (views, sources) = podcoroner_node::pasted::read(&pastes);
            gathered.sources.extend(sources);
            let (mut found, unjudged) =
                podcoroner_core::pasted::judge_all(&views, config.min_age, now);
            pasted_none_judged = !unjudged.is_empty() && unjudged.len() == views.sandboxes().len();
            not_judged = unjudged;
            pasted_young = podcoroner_core::pasted::too_young(&views, config.min_age, now);
            if !opts.kubelet_logs.is_empty() || !opts.runtime_logs.is_empty() {
                podcoroner_core::pasted::add_logs(
                    &mut found,
                    &views,
                    &gathered.events,
                    config.min_age,
                    now,
                );
            }
            diagnosis.findings.extend(found);
            diagnosis
                .findings
                .sort_by(podcoroner_core::rules::report_order);
        }
        // The events' memory goes before the report is built (the startup profile is the
        // diagnosis's breakdowns).
        drop(std::mem::take(&mut gathered.events));
        let report = DiagnosisReport::new(
            &report_node(&args.sources, args.offline, &opts.node_name),
            now,
            gathered.sources,
            &diagnosis,
            listed,
        )
        .with_too_young(&gathered.view, config.min_age)
        .with_not_judged(not_judged);
        std::mem::forget(diagnosis);
        match pasted_young {
            Some((count, until)) => {
                report.with_more_too_young("sandboxes", count, until, config.min_age)
            }
            None => report,
        }
    };
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    match args.output {
        Output::Table => stdout
            .write_all(render::table(&report).as_bytes())
            .context("writing to stdout")?,
        // Streamed: a troubled node's report can be larger than its log.
        Output::Json => {
            serde_json::to_writer_pretty(&mut stdout, &report)
                .map_err(std::io::Error::from)
                .context("writing the report to stdout")?;
            stdout.write_all(b"\n").context("writing to stdout")?;
        }
    }
    stdout.flush().context("writing to stdout")?;
    let failed = match (args.fail_on.threshold(), report.max_severity()) {
        (Some(threshold), Some(max)) => max >= threshold,
        _ => false,
    };
    // Never a silent clean bill: a log not understood, with nothing else judged, is an error
    // rather than a pass.
    let code = if failed {
        EXIT_FINDINGS
    } else if gather::nothing_judged(&report.sources)
        || (pasted_none_judged
            && report.summary.total() == 0
            && !report.sources.values().any(|s| s.is_ok()))
    {
        EXIT_ERROR
    } else {
        0
    };
    // `diagnose` returns to `main`, which exits: the report's memory goes back with the process
    // rather than finding by finding (a troubled node's tens of thousands of findings).
    std::mem::forget(report);
    Ok(code)
}

async fn collect(args: CollectArgs) -> anyhow::Result<u8> {
    progress::install();
    let opts = source_options(&args.sources, false)?;
    let gathered = gather::gather_for_collect(&opts).await?;
    let now = jiff::Timestamp::now();
    snapshot::write(&args.out, &gathered, &opts, now, args.keep_secrets)?;
    let counts: Vec<String> = gathered
        .sources
        .iter()
        .map(|(name, s)| {
            let what = if s.counts.is_empty() {
                s.detail.clone().unwrap_or_else(|| "nothing".to_string())
            } else {
                s.counts
                    .iter()
                    .map(|(k, v)| format!("{v} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!("{name}: {what}")
        })
        .collect();
    eprintln!(
        "collected node {} into {} ({})",
        opts.node_name,
        args.out.display(),
        counts.join("; ")
    );
    Ok(0)
}

async fn gc(args: GcArgs) -> anyhow::Result<u8> {
    let opts = source_options(&args.sources, false)?;
    let gc_opts = args
        .policy
        .options(args.apply, args.assume_pods_deleted, &args.state_dir);
    let outcome = podcoroner_node::gc::run(&opts, &gc_opts).await?;
    let report = podcoroner_node::api::GcReport::new(&outcome, !args.apply, jiff::Timestamp::now());
    let text = match args.output {
        Output::Table => render::gc_table(&report),
        Output::Json => {
            serde_json::to_string_pretty(&report).context("encoding the report")? + "\n"
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    Ok(if report.any_failed() {
        EXIT_FINDINGS
    } else {
        0
    })
}

/// The sources a timeline may lack, each `name (path) state: detail`: failed, degraded or not
/// understood (a source not configured, as the API server of an `--offline` run, is no gap).
fn unread_sources(sources: &BTreeMap<String, SourceStatus>) -> Vec<String> {
    sources
        .iter()
        .filter_map(|(name, s)| {
            // A log not understood was read: what it holds of the pod is in the timeline, and
            // its detail says how much was not understood.
            let state = match s.status? {
                SourceState::Error => "not read",
                SourceState::Degraded => "read in part",
                SourceState::NotUnderstood => "not understood",
                SourceState::Ok | SourceState::Unavailable => return None,
            };
            let what = s.detail.as_deref().unwrap_or(state);
            // A log's detail opens with "not understood: …" itself.
            let what = if what.starts_with(state) {
                what.to_string()
            } else {
                format!("{state}: {what}")
            };
            Some(match s.path.as_ref().or(s.endpoint.as_ref()) {
                Some(at) => format!("{name} ({at}) {what}"),
                None => format!("{name} {what}"),
            })
        })
        .collect()
}

/// A query `explain` cannot match: an ID prefix shorter than the 6 characters `timeline`
/// needs (`id_matches`), or nothing at all.
fn explain_query_problem(query: &str) -> Option<String> {
    let q = query.trim();
    if q.contains('/') {
        return None;
    }
    let n = q.chars().count();
    (n < 6).then(|| {
        format!(
            "{query:?} is {n} character{}: use 6 or more characters of a pod UID, sandbox or container ID, or give namespace/name",
            if n == 1 { "" } else { "s" }
        )
    })
}

async fn explain(args: ExplainArgs) -> anyhow::Result<u8> {
    progress::install();
    if let Some(problem) = explain_query_problem(&args.pod) {
        eprintln!("error: {problem}");
        return Ok(EXIT_USAGE);
    }
    let (view, events, node, now, unread) = if let Some(dir) = &args.snapshot {
        let snap = snapshot::read(dir)?;
        (
            snap.view,
            snap.events,
            snap.meta.node,
            snap.meta.collected_at,
            Vec::new(),
        )
    } else {
        let opts = source_options(&args.sources, args.offline)?;
        let gathered = gather::gather_for_explain(&opts, &args.pod).await?;
        (
            gathered.view,
            gathered.events,
            report_node(&args.sources, args.offline, &opts.node_name),
            jiff::Timestamp::now(),
            unread_sources(&gathered.sources),
        )
    };
    let timeline = podcoroner_core::timeline::explain(&args.pod, &view, &events);
    // Nothing on stdout for a pod nothing names: a script reading it gets no empty timeline.
    if timeline.entries.is_empty() {
        // Where was looked: --offline reads only the logs given.
        let looked = if args.snapshot.is_some() {
            "in the snapshot"
        } else if args.offline {
            "in the logs given"
        } else {
            "on this node"
        };
        let mut message = format!(
            "nothing {looked} names {:?} (a pod UID, namespace/name, sandbox or container ID)",
            args.pod
        );
        if !unread.is_empty() {
            message.push_str(" in what was read; ");
            message.push_str(&unread.join("; "));
        }
        anyhow::bail!(message);
    }
    // A timeline from part of the node: said on stderr, so stdout stays the timeline.
    for problem in &unread {
        eprintln!("warning: {problem}");
    }
    let report = podcoroner_node::api::TimelineReport::new(&node, now, &args.pod, &timeline);
    let text = match args.output {
        Output::Table => render::timeline_table(&report),
        Output::Json => {
            serde_json::to_string_pretty(&report).context("encoding the timeline")? + "\n"
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    Ok(0)
}

async fn daemon(args: DaemonArgs, matches: Option<&clap::ArgMatches>) -> anyhow::Result<u8> {
    // Flag > file > default, resolved in one place; without a file the flags as parsed.
    let c = match (&args.config, matches) {
        (Some(path), Some(m)) => podcoroner_agent::config::daemon_settings(m, Some(path))?,
        _ => {
            // Flags that do not go together: a usage error, as clap's own.
            if let Err(e) = args.settings.check_logs() {
                usage!("{e}");
            }
            args.settings.clone()
        }
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&c.agent.log_level).context("--log-level")?,
        )
        .with_writer(std::io::stderr)
        // Colour only on a terminal: a container's log is a file that log pipelines parse.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let a = &c.agent;
    let options = podcoroner_agent::AgentOptions {
        sources: node_options(&c.sources, None, false)?,
        rules: podcoroner_core::Config {
            min_age: c.rules.min_age,
            failed_pod_min_age: c.rules.failed_pod_min_age,
            assume_pods_deleted: false,
            slow_start: c.rules.slow_start,
        },
        cri_poll_interval: a.cri_poll_interval,
        rescan_interval: a.manifest_rescan_interval,
        api_poll_interval: a.api_poll_interval,
        evaluate_interval: a.evaluate_interval,
        resolve_after_misses: a.resolve_after_misses,
        resolved_retention: a.resolved_retention,
        state_dir: a.state_dir.clone(),
        listen: a.listen,
        http: podcoroner_agent::serve::Limits {
            header_read_timeout: a.http_header_read_timeout,
            idle_timeout: a.http_idle_timeout,
            max_connections: usize::try_from(a.http_max_connections).unwrap_or(usize::MAX),
        },
        max_events: a.max_log_events,
        log_lookback: a.log_lookback,
        gc: (a.gc, c.gc.options(true, false, &a.state_dir)),
        gc_interval: a.gc_interval,
        events: a.events && !a.no_events,
        events_per_minute: a.events_per_minute,
    };
    podcoroner_agent::run(options).await?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::parse_since;

    /// journalctl's words and a time of today read in this machine's zone, as journalctl reads
    /// them.
    #[test]
    fn since_takes_journalctls_words_and_times_of_today() {
        let zone = jiff::tz::TimeZone::system();
        let today = jiff::Timestamp::now().to_zoned(zone.clone()).date();
        let at = |d: jiff::civil::Date, t: jiff::civil::Time| {
            d.to_datetime(t)
                .to_zoned(zone.clone())
                .map(|z| z.timestamp())
                .ok()
        };
        let midnight = jiff::civil::Time::midnight();
        for (since, want) in [
            ("today", at(today, midnight)),
            (
                "yesterday",
                at(today.yesterday().unwrap_or(today), midnight),
            ),
            ("tomorrow", at(today.tomorrow().unwrap_or(today), midnight)),
            ("12:30", at(today, jiff::civil::time(12, 30, 0, 0))),
            (
                "2026-11-29 10:00:00",
                at(
                    jiff::civil::date(2026, 11, 29),
                    jiff::civil::time(10, 0, 0, 0),
                ),
            ),
            (
                "yesterday 12:00",
                at(
                    today.yesterday().unwrap_or(today),
                    jiff::civil::time(12, 0, 0, 0),
                ),
            ),
            (
                "@1732870800",
                jiff::Timestamp::from_second(1_732_870_800).ok(),
            ),
        ] {
            assert_eq!(parse_since(since).ok(), want, "{since}");
        }
        let now = jiff::Timestamp::now();
        let back = parse_since("1 hour ago").map(|t| now.duration_since(t));
        assert!(
            back.as_ref()
                .is_ok_and(|d| d.as_secs() >= 3590 && d.as_secs() <= 3600),
            "{back:?}"
        );
        let ahead = parse_since("+1h").map(|t| t.duration_since(now));
        assert!(
            ahead
                .as_ref()
                .is_ok_and(|d| (jiff::SignedDuration::from_mins(59)
                    ..=jiff::SignedDuration::from_mins(61))
                    .contains(d)),
            "{ahead:?}"
        );
    }
}
