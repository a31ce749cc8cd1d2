//! The settings model: every setting of podcoroner is declared once, here, as a clap argument
//! (its config key is the field name, its flag `--kebab-case` unless named, its default the
//! `default_value` written as a user writes it, its doc the doc comment), and read in two steps,
//! as ripgrep does (`LowArgs` then `HiArgs`):
//!
//! 1. raw: the flags as given ([`ArgMatches`]) and the config file's keys as given ([`RawFile`]:
//!    YAML, unknown keys rejected, each value kept as the text a flag would take);
//! 2. validated: [`Settings::resolve`] merges them, flag > file > default, in one place, and lets
//!    clap parse the result with the same value parsers the flags use, so the file and the flags
//!    can never disagree on a value's syntax or its default.
//!
//! `docs/configuration.md` is generated from this declaration (`crates/agent/tests/config_docs.rs`;
//! `UPDATE_EXPECT=1 cargo test -p podcoroner-agent --test config_docs` rewrites it). A new
//! setting is one field in one of the structs below.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args, CommandFactory as _, Parser};
use serde::{Deserialize, Serialize};

/// Where a node's views are read from: shared by `diagnose`, `collect`, `gc`, `explain` and the
/// daemon.
#[derive(Debug, Clone, Args)]
#[command(rename_all = "kebab-case")]
pub struct SourceSettings {
    /// CRI endpoint, e.g. unix:///run/containerd/containerd.sock. Default: $CONTAINER_RUNTIME_ENDPOINT,
    /// then runtime-endpoint in /etc/crictl.yaml, then the containerd, CRI-O and cri-dockerd sockets.
    #[arg(long, value_name = "ENDPOINT", value_parser = parse_runtime_endpoint)]
    pub runtime_endpoint: Option<String>,
    /// Timeout of each CRI RPC and API server request.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// The node's name as the kubelet registers it (lower-cased, as the kubelet does). Default:
    /// $NODE_NAME, then the hostname.
    #[arg(long, value_name = "NAME", value_parser = non_empty)]
    pub node_name: Option<String>,
    /// The kubelet's static pod manifest directory (staticPodPath).
    #[arg(long, value_name = "DIR", default_value = "/etc/kubernetes/manifests")]
    pub manifest_dir: PathBuf,
    /// The kubelet's static pod URL (staticPodURL), http:// or https://, when it has one: read
    /// with the manifest directory (the daemon every manifest rescan interval), its pods judged
    /// like the directory's. An unreachable URL or a body the kubelet rejects is a degraded
    /// source. Default: none.
    #[arg(long, value_name = "URL", value_parser = parse_manifest_url)]
    pub manifest_url: Option<String>,
    /// Kubeconfig for the API server. Default: in-cluster service account, then $KUBECONFIG or ~/.kube/config.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// Read the node's pods from this file (`kubectl get pods -A -o json`) instead of the API
    /// server (the daemon re-reads it every API poll interval).
    #[arg(long = "pods", value_name = "FILE", conflicts_with = "kubeconfig")]
    pub pods_file: Option<PathBuf>,
    /// Do not contact the API server; rules that need it are skipped.
    #[arg(long, conflicts_with_all = ["kubeconfig", "pods_file"])]
    pub no_apiserver: bool,
    /// The kubelet's root directory, holding pods/<uid>/.
    #[arg(long, value_name = "DIR", default_value = "/var/lib/kubelet")]
    pub kubelet_root_dir: PathBuf,
    /// The kubelet's log: a file (its rotated siblings, plain or .gz, are read first; gzip is
    /// read decompressed whatever the name, on a pipe too), `-` for
    /// the standard input (a pipe, for `diagnose`, `explain` and `collect`), or `journald`
    /// (journalctl -u <kubelet unit> -o json, of --journal-dir when given; a quoted entry shows
    /// its time, host, identifier, unit, PID, priority and MESSAGE, in that order). Repeatable
    /// for `diagnose`, `explain` and `collect` (excerpts of one kubelet's log, e.g. two windows
    /// pasted apart: each is its own source, `kubelet_log`, `kubelet_log_2`, …); the daemon
    /// follows one. Default: not read.
    #[arg(long, value_name = "PATH|journald", action = ArgAction::Append, value_parser = non_empty)]
    pub kubelet_log: Vec<String>,
    /// The container runtime's log (containerd, CRI-O): a file, `-` or `journald`, repeatable
    /// as --kubelet-log is. Default: not read.
    #[arg(long, value_name = "PATH|journald", action = ArgAction::Append, value_parser = non_empty)]
    pub runtime_log: Vec<String>,
    /// The kubelet's systemd unit, for --kubelet-log journald.
    #[arg(long, value_name = "UNIT", default_value = "kubelet", value_parser = non_empty)]
    pub kubelet_unit: String,
    /// The runtime's systemd unit, for --runtime-log journald.
    #[arg(long, value_name = "UNIT", default_value = "containerd", value_parser = non_empty)]
    pub runtime_unit: String,
    /// Read the `journald` logs from the journal files in this directory (journalctl
    /// --directory; its machine-ID subdirectories too), e.g. /var/log/journal copied off a
    /// broken node, or the host's mounted into the pod. Default: this machine's system journal.
    /// `config check` and the daemon refuse it when neither log is `journald`.
    #[arg(long, value_name = "DIR")]
    pub journal_dir: Option<PathBuf>,
}

impl SourceSettings {
    /// Why `journal_dir` is of no use, when it is: it is read for a `journald` log, and neither
    /// the kubelet's log nor the runtime's is one, so it would be ignored. Every command and the
    /// daemon refuse it.
    pub fn journal_dir_problem(&self) -> Option<String> {
        let journald = |logs: &[String]| logs.iter().any(|l| l == "journald");
        let dir = self.journal_dir.as_ref()?;
        (!journald(&self.kubelet_log) && !journald(&self.runtime_log)).then(|| {
            format!(
                "{} is read for a journald log, and neither the kubelet's log nor the runtime's is journald",
                dir.display()
            )
        })
    }
}

/// The diagnosis thresholds: shared by `diagnose` and the daemon.
#[derive(Debug, Clone, Args)]
#[command(rename_all = "kebab-case")]
pub struct RuleSettings {
    /// Sandboxes, containers, mirror pods and pod directories younger than this are not judged
    /// (the kubelet may not have caught up). Accepts 0s.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration, allow_hyphen_values = true)]
    pub min_age: Duration,
    /// A pod in phase Failed is reported once it has been Failed this long.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration, allow_hyphen_values = true)]
    pub failed_pod_min_age: Duration,
    /// A pod that takes longer than this from being bound to the node to Ready is a
    /// SlowPodStartup. 3m: above the kubelet's 2m runtime request timeout and an ordinary image
    /// pull, so a healthy pod with a slow-warming application stays under it; raise it for
    /// workloads that warm up longer.
    #[arg(long, value_name = "DURATION", default_value = "3m", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub slow_start: Duration,
}

/// The GC policy: shared by `gc` and the daemon's `gc: plan|apply`. The sandbox minimum age and
/// the pods file's freshness are two settings.
#[derive(Debug, Clone, Args)]
#[command(rename_all = "kebab-case")]
pub struct GcSettings {
    /// GC: only sandboxes created longer ago than this (and, with a pods file, before the file
    /// was written). Accepts 0s.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration, allow_hyphen_values = true)]
    pub gc_min_age: Duration,
    /// GC: a pods file modified longer ago than this is refused (an old listing cannot prove a
    /// pod is gone) and nothing is removed.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration, allow_hyphen_values = true)]
    pub pods_max_age: Duration,
    /// GC: at most this many removals per run.
    #[arg(long, value_name = "N", default_value = "20")]
    pub gc_max_per_run: usize,
    /// GC: at most this many removals per minute.
    #[arg(long, value_name = "N", default_value = "10", value_parser = clap::value_parser!(u32).range(1..))]
    pub gc_rate: u32,
    /// GC: never touch sandboxes of this namespace (repeatable; giving it replaces the default).
    #[arg(long = "exclude-namespace", value_name = "NS", default_value = "kube-system", action = ArgAction::Append)]
    pub gc_exclude_namespaces: Vec<String>,
    /// GC: never touch sandboxes whose labels match this selector (kubectl syntax, repeatable).
    #[arg(long = "exclude-selector", value_name = "SELECTOR", value_parser = parse_selector, action = ArgAction::Append)]
    pub gc_exclude_selectors: Vec<podcoroner_node::selector::LabelSelector>,
}

impl GcSettings {
    /// The GC options of these settings: `apply` acts, `state_dir` holds the audit log and lock,
    /// `assume_pods_deleted` is `gc --assume-pods-deleted` (never the daemon's).
    pub fn options(
        &self,
        apply: bool,
        assume_pods_deleted: bool,
        state_dir: &Path,
    ) -> podcoroner_node::gc::GcOptions {
        podcoroner_node::gc::GcOptions {
            policy: podcoroner_core::gc::Policy {
                min_age: self.gc_min_age,
                exclude_namespaces: self.gc_exclude_namespaces.iter().cloned().collect(),
                assume_pods_deleted,
                max_per_run: self.gc_max_per_run,
            },
            exclude_selectors: self.gc_exclude_selectors.clone(),
            rate_per_minute: self.gc_rate,
            apply,
            state_dir: state_dir.to_path_buf(),
            pods_max_age: self.pods_max_age,
        }
    }
}

/// The daemon's own settings.
#[derive(Debug, Clone, Args)]
#[command(rename_all = "kebab-case")]
pub struct AgentSettings {
    /// The HTTP listen address of the status endpoint.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:9657")]
    pub listen: std::net::SocketAddr,
    /// Log level of the daemon's own logs (tracing filter syntax).
    #[arg(long, value_name = "FILTER", default_value = "info")]
    pub log_level: String,
    /// How often the CRI runtime's sandboxes and containers are listed.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub cri_poll_interval: Duration,
    /// How often the manifest directory is re-read in full (file events only wake the daemon
    /// early; the rescan is the truth).
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub manifest_rescan_interval: Duration,
    /// How often the API server's pods of this node are listed (or the pods file re-read).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub api_poll_interval: Duration,
    /// How often findings are evaluated from the latest views.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub evaluate_interval: Duration,
    /// Evaluations a finding must be missing from before it is resolved.
    #[arg(long, value_name = "N", default_value = "2")]
    pub resolve_after_misses: u32,
    /// How long resolved findings stay visible.
    #[arg(long, value_name = "DURATION", default_value = "24h", value_parser = parse_duration, allow_hyphen_values = true)]
    pub resolved_retention: Duration,
    /// Where findings, log read positions and the GC audit log are kept across restarts.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
    /// HTTP: a request's head must arrive within this from the accept, or the connection is
    /// closed (a client that connects and sends nothing, or a byte at a time).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub http_header_read_timeout: Duration,
    /// HTTP: a connection on which nothing is read or written for this long is closed
    /// (keep-alive connections between requests, a client that stops reading).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub http_idle_timeout: Duration,
    /// HTTP: at most this many connections at once; accepting one more closes the oldest, so a
    /// flood of stuck connections cannot starve the kubelet's probes. Lowered at start so that
    /// 64 file descriptors below the soft `nofile` limit stay free for state saves, the CRI and
    /// the logs.
    #[arg(long, value_name = "N", default_value = "128", value_parser = clap::value_parser!(u64).range(1..))]
    pub http_max_connections: u64,
    /// Garbage collection of leaked sandboxes: `off`, `plan` (report candidates), `apply`.
    #[arg(long, value_enum, value_name = "MODE", default_value = "off")]
    pub gc: GcMode,
    /// GC: how often it runs in `plan` or `apply` mode.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    pub gc_interval: Duration,
    /// Post a Kubernetes Event (reason = the finding kind) on the pod, or the Node, for each new
    /// finding of warning or higher. Needs API server access with `events: create`.
    #[arg(long)]
    pub events: bool,
    /// Post no Kubernetes Events, whatever `events` says (the flag for a file that sets it).
    #[arg(long)]
    pub no_events: bool,
    /// At most this many Events per minute from this node; the rest are dropped and counted.
    #[arg(long, value_name = "N", default_value = "10")]
    pub events_per_minute: u32,
    /// At most this many log events are kept in memory for the rules and timelines (the oldest
    /// are dropped first).
    #[arg(long, value_name = "N", default_value = "10000")]
    pub max_log_events: usize,
    /// On the first start (no saved read position), the kubelet's and the runtime's logs are
    /// read back this far: records since `max(now - log_lookback, boot time)` (as
    /// node-problem-detector's `lookback`), from at most the last 64 MiB of a file; `0s` reads
    /// only what comes next. A restart resumes where it stopped instead.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = parse_duration, allow_hyphen_values = true)]
    pub log_lookback: Duration,
}

/// Every setting of `podcoroner daemon`, validated (the `HiArgs`): the flags, then the
/// config file's keys (each flag's field name), then the defaults.
#[derive(Debug, Clone, Parser)]
#[command(name = "podcoroner daemon", rename_all = "kebab-case")]
pub struct Settings {
    /// Where the node's views are read from.
    #[command(flatten)]
    pub sources: SourceSettings,
    /// The diagnosis thresholds.
    #[command(flatten)]
    pub rules: RuleSettings,
    /// The GC policy.
    #[command(flatten)]
    pub gc: GcSettings,
    /// The daemon's own settings.
    #[command(flatten)]
    pub agent: AgentSettings,
}

/// Where the daemon's state and `gc`'s audit log live unless `--state-dir` says otherwise.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/podcoroner";

/// The settings that are flags only, with why: the one naming the file itself.
pub const FLAG_ONLY: &[(&str, &str)] = &[(
    "config",
    "the file cannot name itself: `podcoroner daemon --config FILE`",
)];

/// `gc` in the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum GcMode {
    /// No GC (the default).
    #[default]
    Off,
    /// Plan only: candidates appear as findings and metrics.
    Plan,
    /// Act: stop and remove through CRI, audited.
    Apply,
}

/// A config file as given (the `LowArgs` of the file): each known key with its values as the
/// text its flag takes, in file order; unknown keys are refused when it is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawFile {
    /// Where it came from, for errors.
    pub origin: String,
    /// Key (a setting's field name) to its values (one, or a list's items).
    pub values: BTreeMap<String, Vec<String>>,
}

/// One setting as the reference shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingDoc {
    /// The config key.
    pub key: String,
    /// The flag, `--name`.
    pub flag: String,
    /// The default as written, `none` when there is none.
    pub default: String,
    /// What it means.
    pub doc: String,
}

impl RawFile {
    /// Reads a config file's YAML text; `origin` names it in errors.
    ///
    /// # Errors
    /// Malformed YAML (with line and column), a top level that is not a mapping, an unknown key
    /// (named, with the keys there are), a value that is a mapping.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<RawFile> {
        let mut raw = RawFile {
            origin: origin.to_string(),
            values: BTreeMap::new(),
        };
        if text.trim().is_empty() {
            return Ok(raw);
        }
        let value: serde_yaml::Value =
            serde_yaml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        let map = match value {
            serde_yaml::Value::Null => return Ok(raw),
            serde_yaml::Value::Mapping(m) => m,
            _ => anyhow::bail!("{origin}: the file must be a mapping of keys to values"),
        };
        let keys = keys();
        for (k, v) in map {
            let key = match &k {
                serde_yaml::Value::String(s) => s.clone(),
                other => anyhow::bail!("{origin}: a key must be a string, not {other:?}"),
            };
            if !keys.contains(&key) {
                anyhow::bail!(
                    "{origin}: unknown field `{key}`, expected one of {}",
                    keys.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let scalar = |v: &serde_yaml::Value| -> anyhow::Result<Option<String>> {
                Ok(match v {
                    serde_yaml::Value::Null => None,
                    serde_yaml::Value::Bool(b) => Some(b.to_string()),
                    serde_yaml::Value::Number(n) => Some(n.to_string()),
                    serde_yaml::Value::String(s) => Some(s.clone()),
                    _ => anyhow::bail!("{origin}: {key}: expected a value or a list of values"),
                })
            };
            let values = match &v {
                serde_yaml::Value::Sequence(items) => items
                    .iter()
                    .map(|i| scalar(i).map(Option::unwrap_or_default))
                    .collect::<anyhow::Result<Vec<_>>>()?,
                other => scalar(other)?.into_iter().collect(),
            };
            raw.values.insert(key, values);
        }
        Ok(raw)
    }

    /// Reads `path`.
    ///
    /// # Errors
    /// As [`RawFile::parse`], or an unreadable file.
    pub fn load(path: &Path) -> anyhow::Result<RawFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading config {}: {e}", path.display()))?;
        RawFile::parse(&text, &path.display().to_string())
    }

    /// The arguments this file gives `key`, as flags; empty when the file does not set it
    /// (a `false` switch or an empty value sets nothing).
    fn args(&self, key: &str) -> Vec<OsString> {
        let Some(values) = self.values.get(key) else {
            return vec![];
        };
        let Some(arg) = arg(key) else {
            return vec![];
        };
        let long = long_flag(&arg, key);
        if is_switch(&arg) {
            return match values.last().map(String::as_str) {
                Some("true") => vec![long.into()],
                _ => vec![],
            };
        }
        values
            .iter()
            .map(|v| OsString::from(format!("{long}={v}")))
            .collect()
    }
}

impl Settings {
    /// Resolves every setting: a flag given on the command line (`cli`: the daemon's matches)
    /// wins over the file's key, which wins over the default; the merged arguments are parsed
    /// once, with the flags' own value parsers.
    ///
    /// # Errors
    /// A file value a flag would refuse (`origin: key: why`), a combination the flags refuse
    /// (conflicts), or logs the daemon cannot follow ([`Settings::check_logs`]).
    pub fn resolve(cli: Option<&ArgMatches>, file: Option<&RawFile>) -> anyhow::Result<Settings> {
        let mut args: Vec<OsString> = vec!["podcoroner daemon".into()];
        for key in keys() {
            let from_cli = cli
                .filter(|m| m.value_source(&key) == Some(ValueSource::CommandLine))
                .map(|m| cli_args(m, &key));
            match (from_cli, file) {
                (Some(given), _) => args.extend(given),
                (None, Some(file)) => {
                    let given = file.args(&key);
                    if !given.is_empty() {
                        // Checked alone first, so an error names the file and the key.
                        let mut alone: Vec<OsString> = vec!["podcoroner daemon".into()];
                        alone.extend(given.iter().cloned());
                        if let Err(e) = Settings::try_parse_from(alone) {
                            anyhow::bail!("{}: {key}: {}", file.origin, clap_reason(&e));
                        }
                    }
                    args.extend(given);
                }
                (None, None) => {}
            }
        }
        let settings =
            Settings::try_parse_from(args).map_err(|e| anyhow::anyhow!("{}", clap_reason(&e)))?;
        // Named as the user gave it: the file's key, or the flag.
        settings.check_logs_named(|key| {
            match file.filter(|_| {
                cli.is_none_or(|m| m.value_source(key) != Some(ValueSource::CommandLine))
            }) {
                Some(file) => format!("{}: {key}", file.origin),
                None => flag_of(key),
            }
        })?;
        Ok(settings)
    }

    /// Checks the logs the daemon is to follow, as flags: at most one kubelet log and one
    /// runtime log (`diagnose`, `explain` and `collect` read several), and neither `-`, the
    /// standard input, which a daemon has none of to follow; and `--journal-dir` only with a
    /// `journald` log. [`Settings::resolve`] checks the same, naming a file's key.
    ///
    /// # Errors
    /// `--kubelet-log` or `--runtime-log` given twice, or `-`; `--journal-dir` without a
    /// `journald` log.
    pub fn check_logs(&self) -> anyhow::Result<()> {
        self.check_logs_named(flag_of)
    }

    /// [`Settings::check_logs`], a setting named in its error by `named` (of its config key).
    fn check_logs_named(&self, named: impl Fn(&'static str) -> String) -> anyhow::Result<()> {
        for (key, logs) in [
            ("kubelet_log", &self.sources.kubelet_log),
            ("runtime_log", &self.sources.runtime_log),
        ] {
            if let Err(why) = check_log(logs) {
                anyhow::bail!("{}: {why}", named(key));
            }
        }
        if let Some(why) = self.sources.journal_dir_problem() {
            anyhow::bail!("{}: {why}", named("journal_dir"));
        }
        Ok(())
    }

    /// The settings of a config file alone (with the defaults), as `podcoroner config check`
    /// and the daemon without flags see them.
    ///
    /// # Errors
    /// As [`RawFile::parse`] and [`Settings::resolve`].
    pub fn from_file(text: &str, origin: &str) -> anyhow::Result<Settings> {
        Settings::resolve(None, Some(&RawFile::parse(text, origin)?))
    }

    /// Every setting with its config key, flag, default and doc, in declaration order: the
    /// table of `docs/configuration.md`.
    pub fn reference() -> Vec<SettingDoc> {
        Settings::command()
            .get_arguments()
            .filter(|a| a.get_long().is_some())
            .map(|a| {
                let defaults: Vec<String> = a
                    .get_default_values()
                    .iter()
                    .map(|d| d.to_string_lossy().into_owned())
                    .collect();
                let default = if is_switch(a) {
                    "false".to_string()
                } else if defaults.is_empty() {
                    "none".to_string()
                } else {
                    defaults.join(", ")
                };
                SettingDoc {
                    key: a.get_id().to_string(),
                    flag: format!("--{}", a.get_long().unwrap_or_default()),
                    default,
                    doc: a
                        .get_long_help()
                        .or(a.get_help())
                        .map(|h| h.to_string())
                        .unwrap_or_default(),
                }
            })
            .collect()
    }
}

/// The config keys: every setting's field name.
fn keys() -> Vec<String> {
    Settings::command()
        .get_arguments()
        .filter(|a| a.get_long().is_some())
        .map(|a| a.get_id().to_string())
        .collect()
}

fn arg(key: &str) -> Option<clap::Arg> {
    Settings::command()
        .get_arguments()
        .find(|a| a.get_id() == key)
        .cloned()
}

fn is_switch(a: &clap::Arg) -> bool {
    matches!(a.get_action(), ArgAction::SetTrue | ArgAction::SetFalse)
}

/// The arguments the command line gave `key`, as flags again.
fn cli_args(m: &ArgMatches, key: &str) -> Vec<OsString> {
    let Some(a) = arg(key) else { return vec![] };
    let long = long_flag(&a, key);
    if is_switch(&a) {
        return vec![long.into()];
    }
    m.get_raw(key)
        .into_iter()
        .flatten()
        .map(|v| {
            let mut s = OsString::from(format!("{long}="));
            s.push(v);
            s
        })
        .collect()
}

/// A clap error's reason, without its usage lines.
fn clap_reason(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    first.trim_start_matches("error: ").to_string()
}

/// The flag of the setting whose config key is `key`: `--kubelet-log` for `kubelet_log`.
fn flag_of(key: &str) -> String {
    arg(key).map_or_else(|| format!("--{key}"), |a| long_flag(&a, key))
}

/// The flag of `a`, the setting whose config key is `key`.
fn long_flag(a: &clap::Arg, key: &str) -> String {
    format!("--{}", a.get_long().unwrap_or(key))
}

/// Why the daemon cannot follow `logs`, one setting's values ([`Settings::check_logs`]).
fn check_log(logs: &[String]) -> Result<(), String> {
    if logs.len() > 1 {
        return Err(format!(
            "{} logs given: the daemon follows one log of each (diagnose, explain and collect read several)",
            logs.len()
        ));
    }
    if logs.first().is_some_and(|l| l == "-") {
        return Err("- (the standard input) is read by diagnose, explain and collect: the daemon follows a file or journald".to_string());
    }
    Ok(())
}

/// The daemon's [`Settings`] from its command line's matches and its config file.
///
/// # Errors
/// As [`RawFile::load`] and [`Settings::resolve`].
pub fn daemon_settings(cli: &ArgMatches, config: Option<&Path>) -> anyhow::Result<Settings> {
    let file = config.map(RawFile::load).transpose()?;
    Settings::resolve(Some(cli), file.as_ref())
}

/// A duration with its unit: `0s`, `90s`, `10m`, `1h30m`.
///
/// # Errors
/// No unit, or not a duration.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    if s.starts_with('-') {
        return Err(
            "a negative duration: durations count from 0s (examples: 0s, 90s, 10m, 1h30m)"
                .to_string(),
        );
    }
    humantime::parse_duration(s).map_err(|e| format!("{e} (examples: 0s, 90s, 10m, 1h30m)"))
}

/// A duration longer than zero.
///
/// # Errors
/// As [`parse_duration`], or zero.
pub fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    match parse_duration(s)? {
        d if d.is_zero() => Err("must be longer than 0s".to_string()),
        d => Ok(d),
    }
}

/// A value that is not blank.
///
/// # Errors
/// Empty or only spaces.
pub fn non_empty(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("must not be empty".to_string())
    } else {
        Ok(s.to_string())
    }
}

/// A CRI endpoint as crictl takes it (`unix:///path`, `unix:/path` or `/path`), kept as given:
/// `podcoroner_cri::endpoint::parse_endpoint` checks it here, so that a bad value is a usage
/// error (and `config check` refuses it) rather than a CRI source failing at every poll.
///
/// # Errors
/// Empty, another scheme (`tcp://`, `npipe://`) or a relative path, naming which.
pub fn parse_runtime_endpoint(endpoint: &str) -> Result<String, String> {
    match podcoroner_cri::endpoint::parse_endpoint(endpoint) {
        Ok(_) => Ok(endpoint.to_string()),
        Err(podcoroner_cri::Error::InvalidEndpoint { reason, .. }) => Err(reason.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// A static pod URL: `http://` or `https://` with a host, as the kubelet's Go client takes it.
///
/// # Errors
/// Naming what is wrong.
pub fn parse_manifest_url(url: &str) -> Result<String, String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| format!("{url:?} is not an http:// or https:// URL"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("{url:?} names no host"));
    }
    Ok(url.to_string())
}

/// A kubectl label selector.
///
/// # Errors
/// Its syntax error.
pub fn parse_selector(s: &str) -> Result<podcoroner_node::selector::LabelSelector, String> {
    podcoroner_node::selector::LabelSelector::parse(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A negative duration is said to be one, on the command line and in the file alike (clap
    /// took `--min-age -5m` for an unknown flag `-5`).
    #[test]
    fn a_negative_duration_is_said_to_be_one() {
        let cli = |args: &[&str]| {
            let cmd = RuleSettings::augment_args(clap::Command::new("t"));
            cmd.try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let err = cli(&["--min-age", "-5m"]).unwrap_err();
        assert!(
            err.contains("a negative duration: durations count from 0s"),
            "{err}"
        );
        assert!(cli(&["--min-age", "5m"]).is_ok());
        let file = RawFile::parse("min_age: -5m\n", "c.yaml");
        let err = file
            .and_then(|f| Settings::resolve(None, Some(&f)))
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("a negative duration"),
            "{err:#}"
        );
    }

    #[test]
    fn manifest_url_is_an_http_url() {
        assert_eq!(
            Settings::from_file("", "c.yaml")
                .unwrap()
                .sources
                .manifest_url,
            None
        );
        let c = Settings::from_file("manifest_url: https://10.0.0.1/pods\n", "c.yaml").unwrap();
        assert_eq!(
            c.sources.manifest_url.as_deref(),
            Some("https://10.0.0.1/pods")
        );
        for (url, want) in [
            ("ftp://x/pods", "is not an http:// or https:// URL"),
            ("http:///pods", "names no host"),
        ] {
            let err = Settings::from_file(&format!("manifest_url: {url}\n"), "c.yaml")
                .unwrap_err()
                .to_string();
            assert!(err.contains(&format!("{url:?} {want}")), "{err}");
        }
    }

    #[test]
    fn a_runtime_endpoint_is_a_unix_socket_as_crictl_takes_it() {
        let err = |text: &str| Settings::from_file(text, "c.yaml").unwrap_err().to_string();
        assert_eq!(
            err("runtime_endpoint: bogus\n"),
            "c.yaml: runtime_endpoint: invalid value 'bogus' for '--runtime-endpoint <ENDPOINT>': the socket path must be absolute"
        );
        assert_eq!(
            err("runtime_endpoint: tcp://10.0.0.1:1234\n"),
            "c.yaml: runtime_endpoint: invalid value 'tcp://10.0.0.1:1234' for '--runtime-endpoint <ENDPOINT>': only unix sockets (unix:///path) are supported"
        );
        for good in [
            "unix:///run/crio/crio.sock",
            "/run/containerd/containerd.sock",
        ] {
            let c = Settings::from_file(&format!("runtime_endpoint: {good}\n"), "c.yaml").unwrap();
            assert_eq!(c.sources.runtime_endpoint.as_deref(), Some(good));
        }
    }

    #[test]
    fn the_daemon_is_given_one_log_of_each_no_standard_input_and_a_journal_dir_for_journald() {
        let c = Settings::from_file("kubelet_log: /var/log/kubelet.log\n", "c.yaml").unwrap();
        assert_eq!(c.sources.kubelet_log, vec!["/var/log/kubelet.log"]);
        let err = |text: &str| Settings::from_file(text, "c.yaml").unwrap_err().to_string();
        assert_eq!(
            err("kubelet_log: \"-\"\n"),
            "c.yaml: kubelet_log: - (the standard input) is read by diagnose, explain and collect: the daemon follows a file or journald"
        );
        assert_eq!(
            err("runtime_log: [a.log, b.log]\n"),
            "c.yaml: runtime_log: 2 logs given: the daemon follows one log of each (diagnose, explain and collect read several)"
        );
        assert_eq!(
            err("kubelet_log: \"\"\n"),
            "c.yaml: kubelet_log: invalid value '' for '--kubelet-log <PATH|journald>': must not be empty"
        );
        // A journal directory is read for a journald log only.
        assert_eq!(
            err("kubelet_log: /var/log/kubelet.log\njournal_dir: /host/var/log/journal\n"),
            "c.yaml: journal_dir: /host/var/log/journal is read for a journald log, and neither the kubelet's log nor the runtime's is journald"
        );
        assert!(
            Settings::from_file(
                "runtime_log: journald\njournal_dir: /host/var/log/journal\n",
                "c.yaml"
            )
            .is_ok()
        );
        // The flags, without a file, as `podcoroner daemon` parses them.
        let flags = Settings::try_parse_from(["podcoroner daemon", "--runtime-log", "-"]).unwrap();
        let got = flags.check_logs().unwrap_err().to_string();
        assert!(
            got.starts_with("--runtime-log: - (the standard input)"),
            "{got}"
        );
        // A flag over a file's key is named as the flag.
        let matches = Settings::command()
            .try_get_matches_from(["podcoroner daemon", "--kubelet-log", "-"])
            .unwrap();
        let file = RawFile::parse("kubelet_log: /var/log/kubelet.log\n", "c.yaml").unwrap();
        let got = Settings::resolve(Some(&matches), Some(&file))
            .unwrap_err()
            .to_string();
        assert!(got.starts_with("--kubelet-log: - "), "{got}");
    }

    #[test]
    fn defaults_units_and_unknown_keys() {
        let c = Settings::from_file("", "empty.yaml").unwrap();
        assert_eq!(c.agent.cri_poll_interval, Duration::from_secs(30));
        assert_eq!(c.agent.gc, GcMode::Off);
        assert_eq!(c.gc.gc_exclude_namespaces, vec!["kube-system"]);
        let c = Settings::from_file(
            "cri_poll_interval: 1m30s\ngc: plan\nmin_age: 0s\n",
            "c.yaml",
        )
        .unwrap();
        assert_eq!(
            (c.agent.cri_poll_interval, c.agent.gc, c.rules.min_age),
            (Duration::from_secs(90), GcMode::Plan, Duration::ZERO)
        );
        assert_eq!(c.sources.journal_dir, None);
        let c = Settings::from_file(
            "kubelet_log: journald\njournal_dir: /host/var/log/journal\ngc_exclude_namespaces: [a, b]\nno_apiserver: true\n",
            "c.yaml",
        )
        .unwrap();
        assert_eq!(
            (
                c.sources.kubelet_log.first().map(String::as_str),
                c.sources.journal_dir
            ),
            (
                Some("journald"),
                Some(PathBuf::from("/host/var/log/journal"))
            )
        );
        assert_eq!(c.gc.gc_exclude_namespaces, vec!["a", "b"]);
        assert!(c.sources.no_apiserver);
        let err = Settings::from_file("cri_poll_intervall: 30s\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("c.yaml: unknown field `cri_poll_intervall`"),
            "{err}"
        );
        let err = Settings::from_file("min_age: 10\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("c.yaml: min_age: "), "{err}");
        let err = Settings::from_file("cri_poll_interval: 0s\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("c.yaml: cri_poll_interval: ")
                && err.contains("must be longer than 0s"),
            "{err}"
        );
        let err = Settings::from_file("gc_exclude_selectors: ['app in (a']\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unbalanced parentheses"), "{err}");
        // `config` names the file; it is no key.
        assert!(Settings::from_file("config: x.yaml\n", "c.yaml").is_err());
    }

    #[test]
    fn a_flag_wins_over_the_file_which_wins_over_the_default() {
        let cli = Settings::command()
            .try_get_matches_from([
                "podcoroner daemon",
                "--cri-poll-interval=5s",
                "--exclude-namespace=x",
            ])
            .unwrap();
        let file = RawFile::parse(
            "cri_poll_interval: 1m\nevaluate_interval: 3s\ngc_exclude_namespaces: [a, b]\n",
            "c.yaml",
        )
        .unwrap();
        let s = Settings::resolve(Some(&cli), Some(&file)).unwrap();
        assert_eq!(s.agent.cri_poll_interval, Duration::from_secs(5));
        assert_eq!(s.agent.evaluate_interval, Duration::from_secs(3));
        assert_eq!(s.gc.gc_exclude_namespaces, vec!["x"]);
        assert_eq!(s.agent.api_poll_interval, Duration::from_secs(60));
    }

    #[test]
    fn every_key_has_a_flag_and_a_doc() {
        let reference = Settings::reference();
        assert!(reference.len() >= 38, "{}", reference.len());
        for s in &reference {
            assert!(!s.doc.is_empty(), "{} has no doc", s.key);
            assert!(s.flag.starts_with("--"), "{}", s.key);
        }
        let pods = reference.iter().find(|s| s.key == "pods_file").unwrap();
        assert_eq!(
            (pods.flag.as_str(), pods.default.as_str()),
            ("--pods", "none")
        );
    }
}
