//! The daemon's Prometheus metrics (prometheus-client), names `podcoroner_<what>[_<unit>][_total]`
//! with bounded label sets only: kinds, severities, states, sources, RPC names and GC results,
//! never IDs or messages.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// `kind` and `severity` of a finding.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// Finding kind.
    pub kind: String,
    /// Severity.
    pub severity: String,
}

/// A state (`SANDBOX_READY`, `CONTAINER_RUNNING`, …).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabels {
    /// The CRI state name.
    pub state: String,
}

/// A source (`cri`, `apiserver`, `manifests`, `pod_dirs`, `kubelet_log`, `runtime_log`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SourceLabels {
    /// The source.
    pub source: String,
}

/// A CRI RPC name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RpcLabels {
    /// The RPC, e.g. `ListPodSandbox`.
    pub rpc: String,
}

/// A GC action result (`removed`, `skipped`, `stop_failed`, …).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    /// The result.
    pub result: String,
}

/// What the running agent is and does: its version and its effective modes.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct InfoLabels {
    /// The podcoroner version.
    pub version: String,
    /// The GC mode: `off`, `plan` or `apply`.
    pub gc: String,
    /// Whether Kubernetes Events are posted: `true` or `false`.
    pub events: String,
}

fn rpc_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 14))
}

/// Every metric the daemon exports, registered in [`Metrics::registry`].
#[derive(Debug)]
pub struct Metrics {
    /// The registry `/metrics` encodes.
    pub registry: Registry,
    /// `podcoroner_findings`: open findings by kind and severity.
    pub findings: Family<KindLabels, Gauge>,
    /// `podcoroner_sandboxes`: pod sandboxes by state.
    pub sandboxes: Family<StateLabels, Gauge>,
    /// `podcoroner_containers`: containers by state.
    pub containers: Family<StateLabels, Gauge>,
    /// `podcoroner_log_lines_total`: log lines read by source.
    pub log_lines: Family<SourceLabels, Counter>,
    /// `podcoroner_log_lines_unparsed_total`: log records that fit no shape, by source.
    pub log_unparsed: Family<SourceLabels, Counter>,
    /// `podcoroner_log_lines_dropped_total`: log lines dropped under a flood, by source.
    pub log_dropped: Family<SourceLabels, Counter>,
    /// `podcoroner_log_lines_cut_total`: log lines (journal messages) longer than the line limit,
    /// cut to it, by source.
    pub log_cut: Family<SourceLabels, Counter>,
    /// `podcoroner_log_entries_unread_total`: journal entries not read (too long, or not an
    /// entry), by source: their messages are lost.
    pub log_unread: Family<SourceLabels, Counter>,
    /// `podcoroner_cri_request_duration_seconds`: CRI RPC latency by RPC.
    pub cri_duration: Family<RpcLabels, Histogram, fn() -> Histogram>,
    /// `podcoroner_source_up`: 1 when a source's last read succeeded.
    pub source_up: Family<SourceLabels, Gauge>,
    /// `podcoroner_gc_actions_total`: GC actions by result.
    pub gc_actions: Family<ResultLabels, Counter>,
    /// `podcoroner_evaluations_total`: diagnoses run.
    pub evaluations: Counter,
    /// `podcoroner_gc_candidates`: sandboxes the last GC plan would remove.
    pub gc_candidates: Gauge,
    /// `podcoroner_events_total`: Kubernetes Events by result (`sent`, `failed`, `dropped`).
    pub events: Family<ResultLabels, Counter>,
    /// `podcoroner_info`: 1, labelled with the version and the effective GC and Events modes, so
    /// a dashboard shows which nodes act and which only report.
    pub info: Family<InfoLabels, Gauge>,
    /// `podcoroner_pod_startup_phase_seconds` and `podcoroner_pod_startup_seconds`.
    pub startup: crate::startup_metrics::StartupMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("podcoroner");
        let m = Metrics {
            findings: Family::default(),
            sandboxes: Family::default(),
            containers: Family::default(),
            log_lines: Family::default(),
            log_unparsed: Family::default(),
            log_dropped: Family::default(),
            log_cut: Family::default(),
            log_unread: Family::default(),
            cri_duration: Family::new_with_constructor(rpc_histogram as fn() -> Histogram),
            source_up: Family::default(),
            gc_actions: Family::default(),
            evaluations: Counter::default(),
            gc_candidates: Gauge::default(),
            events: Family::default(),
            info: Family::default(),
            startup: crate::startup_metrics::StartupMetrics::default(),
            registry: Registry::default(),
        };
        m.startup.register(&mut registry);
        registry.register(
            "findings",
            "Open findings by kind and severity",
            m.findings.clone(),
        );
        registry.register(
            "sandboxes",
            "Pod sandboxes by CRI state",
            m.sandboxes.clone(),
        );
        registry.register(
            "containers",
            "Containers by CRI state",
            m.containers.clone(),
        );
        registry.register(
            "log_lines",
            "Log lines read, by source",
            m.log_lines.clone(),
        );
        registry.register(
            "log_lines_unparsed",
            "Log records that fit no known shape, by source",
            m.log_unparsed.clone(),
        );
        registry.register(
            "log_lines_dropped",
            "Log lines dropped under a flood, by source",
            m.log_dropped.clone(),
        );
        registry.register(
            "log_lines_cut",
            "Log lines longer than the line limit, cut to it, by source",
            m.log_cut.clone(),
        );
        registry.register(
            "log_entries_unread",
            "Journal entries not read (too long, or not an entry), by source",
            m.log_unread.clone(),
        );
        registry.register(
            "cri_request_duration_seconds",
            "CRI RPC latency in seconds, by RPC",
            m.cri_duration.clone(),
        );
        registry.register(
            "source_up",
            "1 when the source's last read succeeded",
            m.source_up.clone(),
        );
        registry.register("gc_actions", "GC actions by result", m.gc_actions.clone());
        registry.register("evaluations", "Diagnoses run", m.evaluations.clone());
        registry.register(
            "gc_candidates",
            "Sandboxes the last GC plan would remove",
            m.gc_candidates.clone(),
        );
        registry.register(
            "events",
            "Kubernetes Events about findings, by result",
            m.events.clone(),
        );
        registry.register(
            "info",
            "The agent's version and effective GC and Events modes (always 1)",
            m.info.clone(),
        );
        Metrics { registry, ..m }
    }
}

impl Metrics {
    /// Adds to a counter what a follower's running total `total` gained since `seen`, the total
    /// the counter was last brought to (updated).
    pub fn count_since(
        family: &Family<SourceLabels, Counter>,
        labels: &SourceLabels,
        total: u64,
        seen: &mut u64,
    ) {
        if total > *seen {
            family.get_or_create(labels).inc_by(total - *seen);
            *seen = total;
        }
    }

    /// Creates every log counter of `source` at 0, so that `/metrics` has each from the start and
    /// an alert on `increase()` sees its first count.
    pub fn log_source(&self, source: &str) {
        let labels = SourceLabels {
            source: source.to_string(),
        };
        for family in [
            &self.log_lines,
            &self.log_unparsed,
            &self.log_dropped,
            &self.log_cut,
            &self.log_unread,
        ] {
            drop(family.get_or_create(&labels));
        }
    }

    /// The Prometheus text exposition of every metric.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_exported_once_used() {
        let m = Metrics::default();
        m.events
            .get_or_create(&ResultLabels {
                result: "sent".into(),
            })
            .inc();
        m.gc_actions
            .get_or_create(&ResultLabels {
                result: "removed".into(),
            })
            .inc_by(2);
        m.log_lines
            .get_or_create(&SourceLabels {
                source: "kubelet_log".into(),
            })
            .inc_by(5);
        m.findings
            .get_or_create(&KindLabels {
                kind: "LeakedSandbox".into(),
                severity: "warning".into(),
            })
            .set(3);
        let text = m.encode();
        for want in [
            "podcoroner_events_total{result=\"sent\"} 1",
            "podcoroner_gc_actions_total{result=\"removed\"} 2",
            "podcoroner_log_lines_total{source=\"kubelet_log\"} 5",
            "podcoroner_findings{kind=\"LeakedSandbox\",severity=\"warning\"} 3",
            "# EOF",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
    }
}
