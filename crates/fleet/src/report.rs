//! The `podcoroner.fleet/v1` JSON schema printed by `podcoroner fleet -o json`, and how it is
//! built from each node's outcome. Pure: no I/O, the time is a parameter.
//!
//! This is an external contract (documented in `docs/output.md`): fields are only ever added;
//! renaming or removing one needs a new schema version.

use std::collections::BTreeMap;

use jiff::Timestamp;
use podcoroner_agent::http::FindingsReport;
use podcoroner_core::Severity;
use podcoroner_node::api::{DiagnosisReport, FindingView, SourceStatus, Summary};
use serde::{Deserialize, Serialize};

/// The schema name and version, the value of [`FleetReport::schema`].
pub const SCHEMA: &str = "podcoroner.fleet/v1";

/// Every node's findings at one time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// When the report was made (after the last agent answered), RFC 3339.
    pub generated_at: Timestamp,
    /// The agents' namespace.
    pub namespace: String,
    /// The agents' DaemonSet.
    pub daemonset: String,
    /// The filters the report was made with.
    pub filters: Filters,
    /// How many nodes are in each state, and the findings shown per severity.
    pub summary: FleetSummary,
    /// One row per finding kind shown: most nodes first, then worst severity, then kind.
    pub kinds: Vec<KindRow>,
    /// One row per node: the nodes read, worst severity first, then most findings, then by
    /// name; then the nodes not read, by name.
    pub nodes: Vec<NodeRow>,
}

/// The filters of a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filters {
    /// `--node`: the label selector the Nodes were listed with, if any.
    pub node_selector: Option<String>,
    /// `podcoroner fleet NODE`: the one node asked for.
    pub node: Option<String>,
    /// `--kind`: only these kinds (empty: every kind).
    pub kinds: Vec<String>,
    /// `--severity`: only findings at or above this severity.
    pub severity: Option<Severity>,
}

impl Filters {
    /// Whether a finding of `kind` at `severity` is shown.
    pub fn keeps(&self, kind: &str, severity: Severity) -> bool {
        (self.kinds.is_empty() || self.kinds.iter().any(|k| k == kind))
            && self.severity.is_none_or(|min| severity >= min)
    }
}

/// Node counts per state and finding counts per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetSummary {
    /// Nodes listed (after `--node`).
    pub nodes: usize,
    /// Nodes whose agent answered (`ok`).
    pub read: usize,
    /// Nodes with no agent pod.
    pub no_agent: usize,
    /// Nodes whose agent pod is not Ready.
    pub not_ready: usize,
    /// Nodes whose agent could not be reached through the API server.
    pub unreachable: usize,
    /// Nodes whose agent answered something that is not `podcoroner.diagnosis/v1`.
    pub invalid_response: usize,
    /// The open findings shown, per severity, over every node read.
    pub findings: Summary,
}

/// One finding kind across the fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindRow {
    /// The finding kind, e.g. `LeakedSandbox`.
    pub kind: String,
    /// How many nodes have at least one.
    pub nodes: usize,
    /// How many findings of the kind in all.
    pub findings: usize,
    /// The worst severity among them.
    pub worst_severity: Severity,
    /// The earliest `first_seen` among them, RFC 3339.
    pub oldest_first_seen: Timestamp,
}

/// What became of one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    /// The agent answered; its findings are in the row.
    Ok,
    /// No pod of the DaemonSet is bound to the node.
    NoAgent,
    /// The agent pod exists but is not Ready (or has no pod IP, or is being deleted); not asked.
    NotReady,
    /// The GET through the API server's pod proxy failed or timed out.
    Unreachable,
    /// The agent answered with something that is not `podcoroner.diagnosis/v1`.
    InvalidResponse,
}

impl NodeStatus {
    /// The JSON value, also printed in the table: `ok`, `no_agent`, …
    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::Ok => "ok",
            NodeStatus::NoAgent => "no_agent",
            NodeStatus::NotReady => "not_ready",
            NodeStatus::Unreachable => "unreachable",
            NodeStatus::InvalidResponse => "invalid_response",
        }
    }
}

/// One node's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRow {
    /// The node name.
    pub node: String,
    /// What became of it.
    pub status: NodeStatus,
    /// Why it was not read (every status but `ok`), or a note.
    pub reason: Option<String>,
    /// The agent pod asked (or found not Ready), if any.
    pub agent_pod: Option<String>,
    /// When the agent made its answer, RFC 3339 (`ok` only).
    pub agent_generated_at: Option<Timestamp>,
    /// The agent's sources that are not healthy, with their last error (`ok` only).
    pub unhealthy_sources: BTreeMap<String, String>,
    /// Counts of the findings shown, per severity; `null` for a node not read (unknown, not
    /// zero).
    pub summary: Option<Summary>,
    /// The open findings shown, critical first, then oldest first.
    pub findings: Vec<FleetFinding>,
}

/// A finding as an agent tracks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetFinding {
    /// The finding (the `podcoroner.diagnosis/v1` fields).
    #[serde(flatten)]
    pub finding: FindingView,
    /// When the agent first saw it, RFC 3339.
    pub first_seen: Timestamp,
    /// When the agent last saw it, RFC 3339.
    pub last_seen: Timestamp,
}

/// What reading one node gave: its agent's answer, or why there is none.
#[derive(Debug)]
pub enum Outcome {
    /// The agent answered.
    Read(Box<FindingsReport>),
    /// It did not, for this reason.
    NotRead(NodeStatus, String),
}

/// One node with its agent pod and what reading it gave.
#[derive(Debug)]
pub struct NodeOutcome {
    /// The node name.
    pub node: String,
    /// The agent pod (`namespace/name` without the namespace: the name), if any.
    pub agent_pod: Option<String>,
    /// What reading it gave.
    pub outcome: Outcome,
}

/// The row of one node read: its open findings that `filters` keeps.
fn read_row(node: String, agent_pod: Option<String>, r: &FindingsReport, f: &Filters) -> NodeRow {
    let mut findings: Vec<FleetFinding> = r
        .findings
        .iter()
        .filter(|t| t.tracked.resolved_at.is_none())
        .filter(|t| f.keeps(&t.tracked.finding.kind, t.tracked.finding.severity))
        .map(|t| FleetFinding {
            finding: t.tracked.finding.clone(),
            first_seen: t.tracked.first_seen,
            last_seen: t.tracked.last_seen,
        })
        .collect();
    findings.sort_by(|a, b| {
        b.finding
            .severity
            .cmp(&a.finding.severity)
            .then(a.first_seen.cmp(&b.first_seen))
            .then(a.finding.kind.cmp(&b.finding.kind))
    });
    NodeRow {
        node,
        status: NodeStatus::Ok,
        reason: None,
        agent_pod,
        agent_generated_at: Some(r.generated_at),
        unhealthy_sources: r
            .sources
            .iter()
            .filter(|(_, s)| !s.healthy)
            .map(|(name, s)| (name.clone(), s.last_error.clone().unwrap_or_default()))
            .collect(),
        summary: Some(findings.iter().map(|f| f.finding.severity).collect()),
        findings,
    }
}

impl FleetReport {
    /// Builds the report of `outcomes` (one per node listed) as of `generated_at`.
    pub fn new(
        namespace: &str,
        daemonset: &str,
        filters: Filters,
        outcomes: Vec<NodeOutcome>,
        generated_at: Timestamp,
    ) -> FleetReport {
        let mut nodes: Vec<NodeRow> = outcomes
            .into_iter()
            .map(|o| match o.outcome {
                Outcome::Read(r) => read_row(o.node, o.agent_pod, &r, &filters),
                Outcome::NotRead(status, reason) => NodeRow {
                    node: o.node,
                    status,
                    reason: Some(reason),
                    agent_pod: o.agent_pod,
                    agent_generated_at: None,
                    unhealthy_sources: BTreeMap::new(),
                    summary: None,
                    findings: Vec::new(),
                },
            })
            .collect();
        let worst = |n: &NodeRow| n.findings.first().map(|f| f.finding.severity);
        nodes.sort_by(|a, b| {
            (a.status != NodeStatus::Ok)
                .cmp(&(b.status != NodeStatus::Ok))
                .then(worst(b).cmp(&worst(a)))
                .then(b.findings.len().cmp(&a.findings.len()))
                .then(a.node.cmp(&b.node))
        });
        let mut summary = FleetSummary {
            nodes: nodes.len(),
            ..FleetSummary::default()
        };
        let mut kinds: BTreeMap<&str, KindRow> = BTreeMap::new();
        for n in &nodes {
            *match n.status {
                NodeStatus::Ok => &mut summary.read,
                NodeStatus::NoAgent => &mut summary.no_agent,
                NodeStatus::NotReady => &mut summary.not_ready,
                NodeStatus::Unreachable => &mut summary.unreachable,
                NodeStatus::InvalidResponse => &mut summary.invalid_response,
            } += 1;
            let mut seen_here: Vec<&str> = Vec::new();
            for f in &n.findings {
                let kind = f.finding.kind.as_str();
                let row = kinds.entry(kind).or_insert_with(|| KindRow {
                    kind: kind.to_string(),
                    nodes: 0,
                    findings: 0,
                    worst_severity: f.finding.severity,
                    oldest_first_seen: f.first_seen,
                });
                row.findings += 1;
                row.worst_severity = row.worst_severity.max(f.finding.severity);
                row.oldest_first_seen = row.oldest_first_seen.min(f.first_seen);
                if !seen_here.contains(&kind) {
                    seen_here.push(kind);
                    row.nodes += 1;
                }
            }
        }
        summary.findings = nodes
            .iter()
            .flat_map(|n| n.findings.iter().map(|f| f.finding.severity))
            .collect();
        let mut kinds: Vec<KindRow> = kinds.into_values().collect();
        kinds.sort_by(|a, b| {
            b.nodes
                .cmp(&a.nodes)
                .then(b.worst_severity.cmp(&a.worst_severity))
                .then(a.kind.cmp(&b.kind))
        });
        FleetReport {
            schema: SCHEMA.to_string(),
            generated_at,
            namespace: namespace.to_string(),
            daemonset: daemonset.to_string(),
            filters,
            summary,
            kinds,
            nodes,
        }
    }

    /// The highest severity among the findings shown, if any.
    pub fn max_severity(&self) -> Option<Severity> {
        self.kinds.iter().map(|k| k.worst_severity).max()
    }
}

/// One agent's answer as `podcoroner diagnose` would report it, for `node::render::table`: its
/// open findings that `filters` keeps, each source `ok` when healthy and `error` with its last
/// error when not.
pub fn node_diagnosis(r: &FindingsReport, filters: &Filters) -> DiagnosisReport {
    let row = read_row(r.node.clone(), None, r, filters);
    DiagnosisReport {
        schema: podcoroner_node::api::SCHEMA.to_string(),
        node: r.node.clone(),
        generated_at: r.generated_at,
        sources: r
            .sources
            .iter()
            .map(|(name, s)| {
                let status = match (&s.last_error, s.healthy) {
                    (_, true) => SourceStatus {
                        detail: s.detail.clone(),
                        ..SourceStatus::ok()
                    },
                    (Some(e), false) => SourceStatus::error(e.clone()),
                    (None, false) => SourceStatus::error("unhealthy"),
                };
                (name.clone(), status)
            })
            .collect(),
        skipped_rules: r.skipped_rules.clone(),
        summary: row.summary.unwrap_or_default(),
        findings: row.findings.into_iter().map(|f| f.finding).collect(),
        omitted: Vec::new(),
        too_young: None,
        not_judged: Vec::new(),
        // The agent's /findings carries no startup profile; its metrics do.
        startup_profile: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
