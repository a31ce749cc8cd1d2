//! The daemon's YAML configuration file (`podcoroner daemon --config FILE`).
//!
//! Every option is documented and defaulted here, and `docs/configuration.md` is generated from
//! these doc comments (`cargo xtask docs`), so the reference cannot drift. Unknown keys are an
//! error that names the key. Durations are written with units (`30s`, `10m`, `1h`). Flags
//! override the file; runtime-only knobs (log level) are flags only.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct FileConfig {
    /// The node name as the kubelet registers it. Default: `$NODE_NAME`, then the hostname.
    #[serde(default)]
    pub node_name: Option<String>,
    /// The CRI endpoint, e.g. `unix:///run/containerd/containerd.sock`. Default: crictl's order
    /// (`$CONTAINER_RUNTIME_ENDPOINT`, `/etc/crictl.yaml`, the containerd, CRI-O and cri-dockerd
    /// sockets).
    #[serde(default)]
    pub runtime_endpoint: Option<String>,
    /// Timeout of every CRI RPC and API request.
    #[serde(default = "default_timeout", with = "humantime_serde")]
    pub timeout: Duration,
    /// How often the CRI runtime's sandboxes and containers are listed.
    #[serde(default = "default_cri_poll_interval", with = "humantime_serde")]
    pub cri_poll_interval: Duration,
    /// The static pod manifest directory (the kubelet's `staticPodPath`).
    #[serde(default = "default_manifest_dir")]
    pub manifest_dir: PathBuf,
    /// How often the manifest directory is re-read in full (file events only wake the daemon
    /// early; the rescan is the truth).
    #[serde(default = "default_rescan_interval", with = "humantime_serde")]
    pub manifest_rescan_interval: Duration,
    /// The kubelet's root directory, holding `pods/<uid>/`.
    #[serde(default = "default_kubelet_root_dir")]
    pub kubelet_root_dir: PathBuf,
    /// Kubeconfig for the API server. Default: the in-cluster service account, then
    /// `$KUBECONFIG` or `~/.kube/config`.
    #[serde(default)]
    pub kubeconfig: Option<PathBuf>,
    /// Read the node's pods from this file (`kubectl get pods -A -o json`) instead of the API
    /// server, re-read at every evaluation.
    #[serde(default)]
    pub pods_file: Option<PathBuf>,
    /// Do not contact the API server.
    #[serde(default)]
    pub no_apiserver: bool,
    /// How often the API server's pods of this node are listed.
    #[serde(default = "default_api_poll_interval", with = "humantime_serde")]
    pub api_poll_interval: Duration,
    /// The kubelet's log: a file path or `journald`. Default: not read.
    #[serde(default)]
    pub kubelet_log: Option<String>,
    /// The runtime's log: a file path or `journald`. Default: not read.
    #[serde(default)]
    pub runtime_log: Option<String>,
    /// The kubelet's systemd unit, for `kubelet_log: journald`.
    #[serde(default = "default_kubelet_unit")]
    pub kubelet_unit: String,
    /// The runtime's systemd unit, for `runtime_log: journald`.
    #[serde(default = "default_runtime_unit")]
    pub runtime_unit: String,
    /// The journal directory read for `kubelet_log: journald` and `runtime_log: journald`
    /// (`journalctl --directory`: its journal files and its machine-ID subdirectories), e.g. the
    /// host's `/var/log/journal` mounted into the pod. Default: the system journal. The daemon
    /// refuses to start with it when neither log is `journald`.
    #[serde(default)]
    pub journal_dir: Option<PathBuf>,
    /// Nothing younger than this is judged.
    #[serde(default = "default_min_age", with = "humantime_serde")]
    pub min_age: Duration,
    /// A Failed pod is reported once it has been Failed this long.
    #[serde(default = "default_failed_pod_min_age", with = "humantime_serde")]
    pub failed_pod_min_age: Duration,
    /// How often findings are evaluated from the latest views.
    #[serde(default = "default_evaluate_interval", with = "humantime_serde")]
    pub evaluate_interval: Duration,
    /// Evaluations a finding must be missing from before it is resolved.
    #[serde(default = "default_resolve_after_misses")]
    pub resolve_after_misses: u32,
    /// How long resolved findings stay visible.
    #[serde(default = "default_resolved_retention", with = "humantime_serde")]
    pub resolved_retention: Duration,
    /// Where findings and log read positions are kept across restarts.
    #[serde(default = "default_state_dir")]
    pub state_dir: PathBuf,
    /// HTTP: a request's head must arrive within this from the accept, or the connection is
    /// closed (a client that connects and sends nothing, or a byte at a time).
    #[serde(default = "default_http_header_read_timeout", with = "humantime_serde")]
    pub http_header_read_timeout: Duration,
    /// HTTP: a connection on which nothing is read or written for this long is closed
    /// (keep-alive connections between requests, a client that stops reading).
    #[serde(default = "default_http_idle_timeout", with = "humantime_serde")]
    pub http_idle_timeout: Duration,
    /// HTTP: at most this many connections at once; accepting one more closes the oldest, so a
    /// flood of stuck connections cannot starve the kubelet's probes. Lowered at start so that
    /// 64 file descriptors below the soft `nofile` limit stay free for state saves, the CRI and
    /// the logs.
    #[serde(default = "default_http_max_connections")]
    pub http_max_connections: usize,
    /// Garbage collection of leaked sandboxes: `off`, `plan` (report candidates), `apply`.
    #[serde(default)]
    pub gc: GcMode,
    /// Post a Kubernetes Event (reason = the finding kind) on the pod, or the Node, for each new
    /// finding of warning or higher. Needs API server access with `events: create`.
    #[serde(default)]
    pub events: bool,
    /// At most this many Events per minute from this node; the rest are dropped and counted.
    #[serde(default = "default_events_per_minute")]
    pub events_per_minute: u32,
    /// GC: how often it runs in `plan` or `apply` mode.
    #[serde(default = "default_gc_interval", with = "humantime_serde")]
    pub gc_interval: Duration,
    /// At most this many log events are kept in memory for the rules and timelines (the oldest
    /// are dropped first).
    #[serde(default = "default_max_log_events")]
    pub max_log_events: usize,
    /// On the first start (no saved read position), the kubelet's and the runtime's logs are
    /// read back this far: records since `max(now - log_lookback, boot time)` (as
    /// node-problem-detector's `lookback`), from at most the last 64 MiB of a file; `0s` reads
    /// only what comes next. A restart resumes where it stopped instead. Flag: `--log-lookback`.
    #[serde(default = "default_log_lookback", with = "humantime_serde")]
    pub log_lookback: Duration,
    /// GC: only sandboxes older than this (and, with `pods_file`, created before the file was
    /// written).
    #[serde(default = "default_gc_min_age", with = "humantime_serde")]
    pub gc_min_age: Duration,
    /// GC: with `pods_file`, a file modified longer ago than this is refused (an old listing
    /// cannot prove a pod is gone) and nothing is removed. Flag: `gc --pods-max-age`.
    #[serde(default = "default_pods_max_age", with = "humantime_serde")]
    pub pods_max_age: Duration,
    /// GC: at most this many removals per run.
    #[serde(default = "default_gc_max_per_run")]
    pub gc_max_per_run: usize,
    /// GC: at most this many removals per minute.
    #[serde(default = "default_gc_rate")]
    pub gc_rate: u32,
    /// GC: namespaces never touched.
    #[serde(default = "default_exclude_namespaces")]
    pub gc_exclude_namespaces: Vec<String>,
    /// GC: label selectors (kubectl syntax) of sandboxes never touched.
    #[serde(default)]
    pub gc_exclude_selectors: Vec<String>,
}

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

fn default_timeout() -> Duration {
    Duration::from_secs(10)
}
fn default_cri_poll_interval() -> Duration {
    Duration::from_secs(30)
}
fn default_manifest_dir() -> PathBuf {
    PathBuf::from("/etc/kubernetes/manifests")
}
fn default_rescan_interval() -> Duration {
    Duration::from_secs(20)
}
fn default_kubelet_root_dir() -> PathBuf {
    PathBuf::from("/var/lib/kubelet")
}
fn default_api_poll_interval() -> Duration {
    Duration::from_secs(60)
}
fn default_kubelet_unit() -> String {
    "kubelet".to_string()
}
fn default_runtime_unit() -> String {
    "containerd".to_string()
}
fn default_min_age() -> Duration {
    Duration::from_secs(600)
}
fn default_failed_pod_min_age() -> Duration {
    Duration::from_secs(3600)
}
fn default_evaluate_interval() -> Duration {
    Duration::from_secs(10)
}
fn default_resolve_after_misses() -> u32 {
    2
}
fn default_resolved_retention() -> Duration {
    Duration::from_secs(24 * 3600)
}
fn default_state_dir() -> PathBuf {
    PathBuf::from("/var/lib/podcoroner")
}
fn default_http_header_read_timeout() -> Duration {
    Duration::from_secs(10)
}
fn default_http_idle_timeout() -> Duration {
    Duration::from_secs(60)
}
fn default_http_max_connections() -> usize {
    128
}
fn default_events_per_minute() -> u32 {
    10
}
fn default_gc_interval() -> Duration {
    Duration::from_secs(600)
}
fn default_max_log_events() -> usize {
    10_000
}
fn default_log_lookback() -> Duration {
    Duration::from_secs(3600)
}
fn default_gc_min_age() -> Duration {
    Duration::from_secs(3600)
}
fn default_pods_max_age() -> Duration {
    Duration::from_secs(3600)
}
fn default_gc_max_per_run() -> usize {
    20
}
fn default_gc_rate() -> u32 {
    10
}
fn default_exclude_namespaces() -> Vec<String> {
    vec!["kube-system".to_string()]
}

impl Default for FileConfig {
    fn default() -> Self {
        serde_yaml::from_str("{}").expect("every field has a default")
    }
}

impl FileConfig {
    /// Parses a configuration file's text; `origin` names it in errors.
    ///
    /// # Errors
    /// Malformed YAML (with line and column), an unknown key (named), a bad duration.
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<FileConfig> {
        let config: FileConfig = if text.trim().is_empty() {
            FileConfig::default()
        } else {
            serde_yaml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?
        };
        config
            .validate()
            .map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        Ok(config)
    }

    /// Reads and parses `path`.
    ///
    /// # Errors
    /// As [`FileConfig::parse`], or an unreadable file.
    pub fn load(path: &Path) -> anyhow::Result<FileConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading config {}: {e}", path.display()))?;
        FileConfig::parse(&text, &path.display().to_string())
    }

    fn validate(&self) -> Result<(), String> {
        for (name, d) in [
            ("timeout", self.timeout),
            ("cri_poll_interval", self.cri_poll_interval),
            ("manifest_rescan_interval", self.manifest_rescan_interval),
            ("api_poll_interval", self.api_poll_interval),
            ("evaluate_interval", self.evaluate_interval),
            ("http_header_read_timeout", self.http_header_read_timeout),
            ("http_idle_timeout", self.http_idle_timeout),
        ] {
            if d.is_zero() {
                return Err(format!("{name} must be longer than 0s"));
            }
        }
        if self.http_max_connections == 0 {
            return Err("http_max_connections must be at least 1".to_string());
        }
        if self.gc_rate == 0 {
            return Err("gc_rate must be at least 1".to_string());
        }
        for s in &self.gc_exclude_selectors {
            podcoroner_node::selector::LabelSelector::parse(s)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_units_and_unknown_keys() {
        let c = FileConfig::parse("", "empty.yaml").unwrap();
        assert_eq!(c.cri_poll_interval, Duration::from_secs(30));
        assert_eq!(c.gc, GcMode::Off);
        assert_eq!(c.gc_exclude_namespaces, vec!["kube-system"]);
        let c = FileConfig::parse(
            "cri_poll_interval: 1m30s\ngc: plan\nmin_age: 0s\n",
            "c.yaml",
        )
        .unwrap();
        assert_eq!(
            (c.cri_poll_interval, c.gc, c.min_age),
            (Duration::from_secs(90), GcMode::Plan, Duration::ZERO)
        );
        assert_eq!(c.journal_dir, None);
        let c = FileConfig::parse(
            "kubelet_log: journald\njournal_dir: /host/var/log/journal\n",
            "c.yaml",
        )
        .unwrap();
        assert_eq!(
            (c.kubelet_log.as_deref(), c.journal_dir),
            (
                Some("journald"),
                Some(PathBuf::from("/host/var/log/journal"))
            )
        );
        let err = FileConfig::parse("cri_poll_intervall: 30s\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("c.yaml: unknown field `cri_poll_intervall`"),
            "{err}"
        );
        let err = FileConfig::parse("min_age: 10\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("min_age"), "{err}");
        let err = FileConfig::parse("cri_poll_interval: 0s\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "c.yaml: cri_poll_interval must be longer than 0s");
        let err = FileConfig::parse("gc_exclude_selectors: ['app in (a']\n", "c.yaml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unbalanced parentheses"), "{err}");
    }
}
