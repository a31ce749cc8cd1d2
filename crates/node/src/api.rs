//! The `podcoroner.diagnosis/v1` JSON schema printed by `podcoroner diagnose -o json`.
//!
//! This is an external contract (documented in `docs/output.md`): fields are only ever added;
//! renaming or removing one needs a new schema version.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use jiff::Timestamp;
use podcoroner_core::{Diagnosis, Finding, FindingKind, NodeView, PodRef, Severity, SkippedRule};
use serde::{Deserialize, Serialize};

/// The schema name and version, the value of [`DiagnosisReport::schema`].
pub const SCHEMA: &str = "podcoroner.diagnosis/v1";

/// One diagnosis of one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagnosisReport {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The node name.
    pub node: String,
    /// When the node's views were read (for a snapshot: when it was collected), RFC 3339.
    pub generated_at: Timestamp,
    /// Each input's status, keyed `cri`, `apiserver`, `manifests`, `pod_dirs`.
    pub sources: BTreeMap<String, SourceStatus>,
    /// Rules that did not run, or ran in part, and why.
    pub skipped_rules: Vec<SkippedRuleView>,
    /// Counts of findings per severity.
    pub summary: Summary,
    /// The findings, critical first: of each kind at most the report's limit
    /// ([`DiagnosisReport::new`]'s `max_findings_per_kind`), the rest counted in `omitted`.
    pub findings: Vec<FindingView>,
    /// The findings of each kind past the limit, counted and not listed; absent when none was
    /// left out. `summary` counts them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<OmittedFindings>,
    /// Objects younger than the minimum age, which no rule judged yet; absent when there are
    /// none (or for a report that does not know the view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub too_young: Option<TooYoung>,
    /// Pasted sandboxes read but not judged, each with why (`diagnose --offline` with a cut
    /// paste: `podcoroner_core::pasted::judge_all`); absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<podcoroner_core::pasted::NotJudged>,
    /// The node's startup profile: p50, p90 and max of each startup phase (and `total`, bound
    /// to ready) over the pods whose start the views and logs hold; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup_profile: Vec<PhaseStatsView>,
}

/// What was left unjudged for being younger than `--min-age` (`min_age`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TooYoung {
    /// How many objects in all.
    pub count: usize,
    /// Per kind of object: `sandboxes`, `containers`, `mirror_pods`, `pod_dirs`.
    pub counts: BTreeMap<String, usize>,
    /// The minimum age, in seconds.
    pub min_age_seconds: u64,
    /// When the youngest of them is old enough to be judged, RFC 3339.
    pub until: Timestamp,
}

/// The objects of `view` created less than `min_age` before `now` (pod directories by their
/// modification time), which the state rules leave alone (`rules.rs` `past_min_age`); `None`
/// when there are none.
pub fn too_young(view: &NodeView, min_age: Duration, now: Timestamp) -> Option<TooYoung> {
    let min = jiff::SignedDuration::try_from(min_age).unwrap_or(jiff::SignedDuration::MAX);
    let mut counts = BTreeMap::new();
    let mut until: Option<Timestamp> = None;
    let mut note = |what: &str, created: Timestamp| {
        let Ok(at) = created.checked_add(min) else {
            return;
        };
        if at > now {
            *counts.entry(what.to_string()).or_insert(0) += 1;
            until = Some(until.map_or(at, |u| u.max(at)));
        }
    };
    if let Some(cri) = &view.cri {
        for sb in &cri.sandboxes {
            note("sandboxes", sb.created_at);
        }
        for c in &cri.containers {
            note("containers", c.created_at);
        }
    }
    if let Some(api) = &view.api {
        for p in api.pods.iter().filter(|p| p.mirror_hash().is_some()) {
            if let Some(t) = p.created_at {
                note("mirror_pods", t);
            }
        }
    }
    for d in view.pod_dirs.iter().flatten() {
        if let Some(t) = d.modified_at {
            note("pod_dirs", t);
        }
    }
    let until = until?;
    Some(TooYoung {
        count: counts.values().sum(),
        counts,
        min_age_seconds: min_age.as_secs(),
        until,
    })
}

/// Whether an input could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceState {
    /// Read.
    Ok,
    /// Not configured or not present (no kubeconfig, no pod directory); rules that need it skip.
    Unavailable,
    /// Configured but failed; rules that need it skip.
    Error,
    /// A log that was read but not understood: more than 20 % of its records fit no known
    /// shape, or none does. Its events were used, but a finding it would show may be missing.
    #[serde(rename = "not_understood")]
    NotUnderstood,
    /// Read in part, or not where it was configured (a missing mount, a file this process may
    /// not read, a broken old log rotation): `detail` says what is missing, and the rules that
    /// need the missing part skip.
    Degraded,
}

/// One input's status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceStatus {
    /// Ok, unavailable or error.
    pub status: Option<SourceState>,
    /// Why it is unavailable or failed, or a note.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<String>,
    /// The CRI endpoint or API server URL.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub endpoint: Option<String>,
    /// The directory or file read.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub path: Option<String>,
    /// CRI `VersionResponse.runtime_name`, e.g. `containerd`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub runtime_name: Option<String>,
    /// CRI `VersionResponse.runtime_version`, e.g. `1.6.20`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub runtime_version: Option<String>,
    /// The CRI API spoken: `v1` or `v1alpha2`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cri_api_version: Option<String>,
    /// How many items were read: sandboxes, containers, pods, files, directories.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub counts: BTreeMap<String, usize>,
}

impl SourceStatus {
    /// A source that was read.
    pub fn ok() -> SourceStatus {
        SourceStatus {
            status: Some(SourceState::Ok),
            ..SourceStatus::default()
        }
    }

    /// A source that is not there, with the reason.
    pub fn unavailable(detail: impl Into<String>) -> SourceStatus {
        SourceStatus {
            status: Some(SourceState::Unavailable),
            detail: Some(detail.into()),
            ..SourceStatus::default()
        }
    }

    /// Whether a source was read and understood (`ok`).
    pub fn is_ok(&self) -> bool {
        self.status == Some(SourceState::Ok)
    }

    /// A source read in part, or missing where it was configured, with what is missing.
    pub fn degraded(detail: impl Into<String>) -> SourceStatus {
        SourceStatus {
            status: Some(SourceState::Degraded),
            detail: Some(detail.into()),
            ..SourceStatus::default()
        }
    }

    /// A source that failed, with the error.
    pub fn error(detail: impl Into<String>) -> SourceStatus {
        SourceStatus {
            status: Some(SourceState::Error),
            detail: Some(detail.into()),
            ..SourceStatus::default()
        }
    }
    /// Puts `note` first in [`detail`](SourceStatus::detail), before what it said (`"; "`
    /// between): what makes the source unhealthy leads.
    pub fn note_first(&mut self, note: impl Into<String>) {
        let note = note.into();
        self.detail = Some(match self.detail.take() {
            Some(d) => format!("{note}; {d}"),
            None => note,
        });
    }

    /// Puts `note` last in [`detail`](SourceStatus::detail), after what it said (`"; "`
    /// between).
    pub fn note_last(&mut self, note: impl Into<String>) {
        let note = note.into();
        self.detail = Some(match self.detail.take() {
            Some(d) => format!("{d}; {note}"),
            None => note,
        });
    }
}

/// A rule that did not run, or ran in part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedRuleView {
    /// The finding kind the rule produces.
    pub kind: String,
    /// True when the rule ran on part of its input.
    pub partial: bool,
    /// Why.
    pub reason: String,
}

/// Counts of findings per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Critical findings.
    pub critical: usize,
    /// Warning findings.
    pub warning: usize,
    /// Info findings.
    pub info: usize,
}

impl Summary {
    /// Counts one finding of `severity`.
    pub fn count(&mut self, severity: Severity) {
        *match severity {
            Severity::Critical => &mut self.critical,
            Severity::Warning => &mut self.warning,
            Severity::Info => &mut self.info,
        } += 1;
    }

    /// How many findings of `severity`.
    pub fn of(&self, severity: Severity) -> usize {
        match severity {
            Severity::Critical => self.critical,
            Severity::Warning => self.warning,
            Severity::Info => self.info,
        }
    }

    /// The highest severity counted, if any.
    pub fn worst(&self) -> Option<Severity> {
        [
            (self.critical, Severity::Critical),
            (self.warning, Severity::Warning),
            (self.info, Severity::Info),
        ]
        .into_iter()
        .find_map(|(n, sev)| (n > 0).then_some(sev))
    }

    /// How many findings in all.
    pub fn total(&self) -> usize {
        self.critical + self.warning + self.info
    }
}

/// Counts findings by their severities.
impl FromIterator<Severity> for Summary {
    fn from_iter<I: IntoIterator<Item = Severity>>(severities: I) -> Summary {
        let mut s = Summary::default();
        for severity in severities {
            s.count(severity);
        }
        s
    }
}

/// The findings of one kind a report left out past its limit of findings per kind
/// (`diagnose --max-findings-per-kind`): a log naming fresh pods on every line can give
/// hundreds of thousands of findings of one kind, more than anyone reads and more than a report
/// should print. The ones listed are the first in report order (critical first, then by pod and
/// ID). [`DiagnosisReport::omitted`] is in report order too: kinds with critical findings left
/// out first, then warning, then info, each severity in kind order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OmittedFindings {
    /// The finding kind, e.g. `FindContainerRace`.
    pub kind: String,
    /// How many of its findings were left out.
    pub count: usize,
    /// Those left out per severity.
    pub summary: Summary,
    /// How many distinct pods they name, by namespace, name and UID (for a static pod the UID
    /// is its config hash, so each version of its manifest counts); findings naming no pod are
    /// not counted.
    pub pods: usize,
    /// The limit that left them out: how many findings of the kind the report lists.
    pub listed: usize,
}

/// A pod's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodView {
    /// Namespace; empty when only the UID is known.
    pub namespace: String,
    /// Name; empty when only the UID is known.
    pub name: String,
    /// UID; for a static pod its config hash.
    pub uid: String,
}

/// One evidence line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceView {
    /// `cri`, `apiserver`, `manifest` or `filesystem`.
    pub source: String,
    /// The fact.
    pub detail: String,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingView {
    /// Stable kind, e.g. `LeakedSandbox` (see `docs/findings.md`).
    pub kind: String,
    /// `critical`, `warning` or `info`.
    pub severity: Severity,
    /// One line for a person.
    pub summary: String,
    /// The pod, when known.
    pub pod: Option<PodView>,
    /// The pod sandbox ID, when one applies.
    pub sandbox_id: Option<String>,
    /// The container ID, when one applies.
    pub container_id: Option<String>,
    /// The file or directory concerned (a manifest, a pod directory), when one applies.
    pub path: Option<String>,
    /// The facts the finding rests on.
    pub evidence: Vec<EvidenceView>,
    /// The kubelet behaviour the rule mirrors (borrowed from the finding's fixed text, as
    /// [`Finding::kubelet_rule`] is).
    pub kubelet_rule: Cow<'static, str>,
    /// What to run to fix it.
    pub remediation: String,
    /// True when `podcoroner gc` may remove the sandbox.
    pub gc_eligible: bool,
}

impl From<&Finding> for FindingView {
    fn from(f: &Finding) -> FindingView {
        FindingView {
            kind: f.kind.as_str().to_string(),
            severity: f.severity,
            summary: f.summary.clone(),
            pod: f.pod.as_ref().map(|p| PodView {
                namespace: p.namespace.clone(),
                name: p.name.clone(),
                uid: p.uid.clone(),
            }),
            sandbox_id: f.sandbox_id.clone(),
            container_id: f.container_id.clone(),
            path: f.path.clone(),
            evidence: f
                .evidence
                .iter()
                .map(|e| EvidenceView {
                    source: e.source.as_str().to_string(),
                    detail: e.detail().into_owned(),
                })
                .collect(),
            kubelet_rule: f.kubelet_rule.clone(),
            remediation: f.remediation.clone(),
            gc_eligible: f.gc_eligible,
        }
    }
}

impl From<&SkippedRule> for SkippedRuleView {
    fn from(s: &SkippedRule) -> SkippedRuleView {
        SkippedRuleView {
            kind: s.kind.as_str().to_string(),
            partial: s.partial,
            reason: s.reason.clone(),
        }
    }
}

impl DiagnosisReport {
    /// Builds the report of `diagnosis` for `node` as of `generated_at`, listing of each finding
    /// kind the first `max_findings_per_kind` findings in report order (`None`: all of them) and
    /// counting the rest in [`DiagnosisReport::omitted`]; `summary` counts every finding.
    ///
    /// `diagnosis.findings` must be in report order (`podcoroner_core::rules::report_order`, as
    /// every diagnosis gives them), so that a kind's listed findings are its most severe.
    pub fn new(
        node: &str,
        generated_at: Timestamp,
        sources: BTreeMap<String, SourceStatus>,
        diagnosis: &Diagnosis,
        max_findings_per_kind: Option<usize>,
    ) -> DiagnosisReport {
        let mut summary = Summary::default();
        let mut listed: BTreeMap<FindingKind, usize> = BTreeMap::new();
        let mut omitted: BTreeMap<FindingKind, (Summary, HashSet<&PodRef>, usize)> =
            BTreeMap::new();
        let mut findings = Vec::new();
        for f in &diagnosis.findings {
            summary.count(f.severity);
            let n = listed.entry(f.kind).or_insert(0);
            if max_findings_per_kind.is_none_or(|max| *n < max) {
                *n += 1;
                findings.push(FindingView::from(f));
            } else {
                let (s, pods, count) = omitted.entry(f.kind).or_default();
                s.count(f.severity);
                pods.extend(&f.pod);
                *count += 1;
            }
        }
        DiagnosisReport {
            schema: SCHEMA.to_string(),
            node: node.to_string(),
            generated_at,
            sources,
            skipped_rules: diagnosis
                .skipped
                .iter()
                .map(SkippedRuleView::from)
                .collect(),
            summary,
            findings,
            omitted: {
                let mut o: Vec<_> = omitted.into_iter().collect();
                // As the findings are: the kind with critical findings left out first.
                o.sort_by_key(|(_, (s, _, _))| std::cmp::Reverse(s.worst()));
                o.into_iter()
                    .map(|(kind, (summary, pods, count))| OmittedFindings {
                        kind: kind.as_str().to_string(),
                        count,
                        summary,
                        pods: pods.len(),
                        listed: listed[&kind],
                    })
                    .collect()
            },
            too_young: None,
            not_judged: Vec::new(),
            startup_profile: PhaseStatsView::rows(&podcoroner_core::startup::profile(
                &diagnosis.startup,
            )),
        }
        .consistent_skips()
    }

    /// With what [`too_young`] says of `view`.
    pub fn with_too_young(mut self, view: &NodeView, min_age: Duration) -> DiagnosisReport {
        self.too_young = too_young(view, min_age, self.generated_at);
        self
    }

    /// With `count` more objects of kind `what` (`sandboxes`, …) younger than `min_age`, the
    /// youngest old enough at `until`: what a view [`too_young`] does not see left unjudged
    /// (the pasted views of `diagnose --offline`).
    pub fn with_more_too_young(
        mut self,
        what: &str,
        count: usize,
        until: Timestamp,
        min_age: Duration,
    ) -> DiagnosisReport {
        let y = self.too_young.get_or_insert_with(|| TooYoung {
            count: 0,
            counts: BTreeMap::new(),
            min_age_seconds: min_age.as_secs(),
            until,
        });
        y.count += count;
        *y.counts.entry(what.to_string()).or_insert(0) += count;
        y.until = y.until.max(until);
        self
    }

    /// With the pasted sandboxes read but not judged (`podcoroner_core::pasted::judge_all`).
    pub fn with_not_judged(
        mut self,
        not_judged: Vec<podcoroner_core::pasted::NotJudged>,
    ) -> DiagnosisReport {
        self.not_judged = not_judged;
        self
    }

    /// A rule listed as skipped whose kind the log rules still reported (`--offline`: the
    /// state rule needs the CRI view, the log rule does not) ran in part: it says so.
    fn consistent_skips(mut self) -> DiagnosisReport {
        for s in &mut self.skipped_rules {
            if !s.partial && self.findings.iter().any(|f| f.kind == s.kind) {
                s.partial = true;
                s.reason = format!(
                    "{}; findings of this kind from the logs alone are still reported",
                    s.reason
                );
            }
        }
        self
    }

    /// The highest severity among the findings, listed or omitted, if any.
    pub fn max_severity(&self) -> Option<Severity> {
        self.summary.worst()
    }
}

/// The schema name of [`GcReport`].
pub const GC_SCHEMA: &str = "podcoroner.gc/v1";

/// What `podcoroner gc -o json` prints (documented in `docs/gc.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GcReport {
    /// Always [`GC_SCHEMA`].
    pub schema: String,
    /// The node.
    pub node: String,
    /// When the run ended.
    pub generated_at: Timestamp,
    /// True without `--apply`.
    pub dry_run: bool,
    /// Where the API view came from (a `--pods` file with its age).
    pub api_origin: String,
    /// Why nothing at all was eligible, when that is the case.
    pub refused: Option<String>,
    /// The planned removals.
    pub removals: Vec<GcCandidateView>,
    /// The leaked sandboxes the policy held back, with the reason in `reason`.
    pub held: Vec<GcCandidateView>,
    /// Every audited record of the run (for `--apply`: one per action, with its result).
    pub results: Vec<AuditRecord>,
    /// A `SandboxStopFailing` finding per failed stop.
    pub findings: Vec<FindingView>,
    /// The audit log's path.
    pub audit_log: String,
    /// Why the audit log could not be written, if it could not.
    pub audit_error: Option<String>,
}

/// One line of the GC audit log (`<state dir>/gc-audit.jsonl`, documented in `docs/gc.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When, RFC 3339.
    pub time: Timestamp,
    /// The node.
    pub node: String,
    /// The pod sandbox ID.
    pub sandbox_id: String,
    /// Its pod.
    pub pod: PodRef,
    /// Why it was a candidate: the `LeakedSandbox` summary.
    pub rule: String,
    /// `planned` (dry run), `intent` (about to act, written and flushed before the CRI calls),
    /// `removed`, `already_gone`, `skipped` (no longer eligible at re-check), `held` (policy),
    /// `stop_failed`, `remove_failed`.
    pub result: String,
    /// The error or the reason, for every result but `planned` and `removed`.
    pub error: Option<String>,
    /// For `stop_failed`: the classified cause (`SandboxStopFailing`).
    pub error_class: Option<String>,
    /// True for a dry run.
    pub dry_run: bool,
}

/// A sandbox in a GC plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcCandidateView {
    /// The pod sandbox ID.
    pub sandbox_id: String,
    /// Its pod.
    pub pod: PodView,
    /// For a removal, the leak it is (`LeakedSandbox` summary); for a held one, why it is held.
    pub reason: String,
}

impl GcReport {
    /// True when an action failed (a stop or remove error).
    pub fn any_failed(&self) -> bool {
        self.results.iter().any(|r| r.result.ends_with("_failed"))
    }
}

/// The schema name of [`TimelineReport`].
pub const TIMELINE_SCHEMA: &str = "podcoroner.timeline/v1";

/// What `podcoroner explain -o json` prints (and `GET /pods/{uid}/timeline` will serve).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineReport {
    /// Always [`TIMELINE_SCHEMA`].
    pub schema: String,
    /// The node.
    pub node: String,
    /// When the views were read.
    pub generated_at: Timestamp,
    /// The query as given.
    pub query: String,
    /// The pods it resolved to.
    pub pods: Vec<PodView>,
    /// Every pod UID, sandbox ID and container ID linked to the query.
    pub ids: Vec<String>,
    /// The timeline, ordered by time; untimed log records last.
    pub entries: Vec<TimelineEntryView>,
    /// Where each pod's start went, phase by phase (empty when no view holds its start).
    #[serde(default)]
    pub startup: Vec<StartupView>,
}

/// One timeline line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineEntryView {
    /// When, RFC 3339; null for a log record without a timestamp.
    pub time: Option<Timestamp>,
    /// `cri`, `apiserver`, `kubelet-log`, `runtime-log`.
    pub source: String,
    /// What happened.
    pub what: String,
    /// The log record or the object's state.
    pub detail: String,
    /// `file:line` of a log record.
    pub origin: Option<String>,
}

impl TimelineReport {
    /// Builds the report of `timeline`.
    pub fn new(
        node: &str,
        generated_at: Timestamp,
        query: &str,
        timeline: &podcoroner_core::timeline::Timeline,
    ) -> TimelineReport {
        TimelineReport {
            schema: TIMELINE_SCHEMA.to_string(),
            node: node.to_string(),
            generated_at,
            query: query.to_string(),
            pods: timeline
                .pods
                .iter()
                .map(|p| PodView {
                    namespace: p.namespace.clone(),
                    name: p.name.clone(),
                    uid: p.uid.clone(),
                })
                .collect(),
            ids: timeline.ids.iter().cloned().collect(),
            entries: timeline
                .entries
                .iter()
                .map(|e| TimelineEntryView {
                    time: e.time,
                    source: e.source.as_str().to_string(),
                    what: e.what.clone(),
                    detail: e.detail.clone(),
                    origin: e.origin.clone(),
                })
                .collect(),
            startup: timeline.startup.iter().map(StartupView::new).collect(),
        }
    }
}

/// One edge of a startup phase: when, and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeView {
    /// When, RFC 3339.
    pub at: Timestamp,
    /// `cri`, `apiserver`, `kubelet-log`, `runtime-log`.
    pub source: String,
    /// What was read: `API condition PodScheduled`, `SyncLoop ADD`, `RunPodSandbox started`, …
    pub what: String,
    /// `file:line` of a log record.
    pub origin: Option<String>,
}

impl EdgeView {
    fn new(e: &podcoroner_core::startup::Edge) -> EdgeView {
        EdgeView {
            at: e.at,
            source: e.source.as_str().to_string(),
            what: e.what.clone(),
            origin: e.origin.clone(),
        }
    }
}

/// One phase of a pod's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseView {
    /// `admission`, `sandbox`, `image_pull`, `init_containers`, `container_start`, `readiness`.
    pub phase: String,
    /// `end - start` in seconds.
    pub seconds: f64,
    /// Its start.
    pub start: EdgeView,
    /// Its end.
    pub end: EdgeView,
}

/// The kubelet's own `"Observed pod startup duration"` record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KubeletStartupView {
    /// `podStartSLOduration`, seconds (may be impossible: `PodStartupMetricInvalid`).
    pub slo_seconds: Option<f64>,
    /// `podStartE2EDuration`, seconds.
    pub e2e_seconds: Option<f64>,
    /// `file:line` of the record.
    pub origin: String,
}

/// Where one pod's start went (`core::startup::Breakdown`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartupView {
    /// The pod.
    pub pod: PodView,
    /// Bound to the node (or created, when the bind is not known).
    pub bound: Option<EdgeView>,
    /// `Ready`, or the containers running when no view says `Ready` (`ready_is_ready` false).
    pub ready: Option<EdgeView>,
    /// Whether `ready` is the pod's `Ready`.
    pub ready_is_ready: bool,
    /// `ready - bound`, seconds.
    pub total_seconds: Option<f64>,
    /// The longest phase.
    pub dominant: Option<String>,
    /// The phases both of whose edges the views give, in order.
    pub phases: Vec<PhaseView>,
    /// The kubelet's own record, when logged.
    pub kubelet: Option<KubeletStartupView>,
}

impl StartupView {
    /// The view of `b`.
    pub fn new(b: &podcoroner_core::startup::Breakdown) -> StartupView {
        StartupView {
            pod: PodView {
                namespace: b.pod.namespace.clone(),
                name: b.pod.name.clone(),
                uid: b.pod.uid.clone(),
            },
            bound: b.bound.as_ref().map(EdgeView::new),
            ready: b.ready.as_ref().map(EdgeView::new),
            ready_is_ready: b.ready_is_ready,
            total_seconds: b.total().map(|d| d.as_secs_f64()),
            dominant: b.dominant().map(|p| p.phase.as_str().to_string()),
            phases: b
                .phases
                .iter()
                .map(|p| PhaseView {
                    phase: p.phase.as_str().to_string(),
                    seconds: p.duration().as_secs_f64(),
                    start: EdgeView::new(&p.start),
                    end: EdgeView::new(&p.end),
                })
                .collect(),
            kubelet: b.observed.as_ref().map(|(o, origin)| KubeletStartupView {
                slo_seconds: o.slo_seconds,
                e2e_seconds: o.e2e.map(|d| d.as_secs_f64()),
                origin: origin.clone(),
            }),
        }
    }
}

/// The distribution of one startup phase over a node's pods, seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseStatsView {
    /// The phase (`total` for bound to ready).
    pub phase: String,
    /// How many pods have it.
    pub pods: usize,
    /// Median.
    pub p50_seconds: f64,
    /// 90th percentile.
    pub p90_seconds: f64,
    /// Longest.
    pub max_seconds: f64,
    /// Of `pods`, how many end at running rather than Ready (no readiness seen for them);
    /// only the `total` row has it, absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub to_running: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl PhaseStatsView {
    /// The rows of `profile`: each phase, then `total`.
    pub fn rows(profile: &podcoroner_core::startup::Profile) -> Vec<PhaseStatsView> {
        let row = |phase: &str, s: &podcoroner_core::startup::PhaseStats| PhaseStatsView {
            phase: phase.to_string(),
            pods: s.pods,
            p50_seconds: s.p50.as_secs_f64(),
            p90_seconds: s.p90.as_secs_f64(),
            max_seconds: s.max.as_secs_f64(),
            to_running: 0,
        };
        profile
            .phases
            .iter()
            .map(|(p, s)| row(p.as_str(), s))
            .chain(profile.total.iter().map(|s| PhaseStatsView {
                to_running: profile.total_to_running,
                ..row("total", s)
            }))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: FindingKind, severity: Severity, pod: Option<&str>) -> Finding {
        Finding {
            kind,
            severity,
            summary: format!("{kind} of {pod:?}"),
            pod: pod.map(|name| PodRef {
                namespace: "shop".to_string(),
                name: name.to_string(),
                uid: format!("uid-{name}"),
            }),
            sandbox_id: None,
            container_id: None,
            path: None,
            evidence: Vec::new(),
            kubelet_rule: "".into(),
            remediation: String::new(),
            gc_eligible: false,
        }
    }

    #[test]
    fn a_kinds_findings_past_the_limit_are_counted_by_severity_and_pod() {
        use FindingKind::{FindContainerRace, LeakedSandbox};
        let mut findings = vec![
            finding(LeakedSandbox, Severity::Critical, Some("a")),
            finding(LeakedSandbox, Severity::Warning, Some("b")),
            finding(LeakedSandbox, Severity::Warning, Some("b")),
            finding(LeakedSandbox, Severity::Info, None),
            finding(FindContainerRace, Severity::Info, Some("c")),
            finding(FindContainerRace, Severity::Critical, Some("d")),
            finding(FindContainerRace, Severity::Critical, Some("e")),
        ];
        findings.sort_by(podcoroner_core::rules::report_order);
        let diagnosis = Diagnosis {
            findings,
            skipped: Vec::new(),
            startup: Vec::new(),
        };
        let now = Timestamp::UNIX_EPOCH;
        let report = DiagnosisReport::new("n", now, BTreeMap::new(), &diagnosis, Some(1));
        let listed: Vec<_> = report
            .findings
            .iter()
            .map(|f| (f.kind.as_str(), f.severity))
            .collect();
        assert_eq!(
            listed,
            [
                ("LeakedSandbox", Severity::Critical),
                ("FindContainerRace", Severity::Critical)
            ]
        );
        // The kind with a critical finding left out first.
        assert_eq!(
            report.omitted,
            [
                OmittedFindings {
                    kind: "FindContainerRace".to_string(),
                    count: 2,
                    summary: Summary {
                        critical: 1,
                        warning: 0,
                        info: 1
                    },
                    pods: 2,
                    listed: 1,
                },
                OmittedFindings {
                    kind: "LeakedSandbox".to_string(),
                    count: 3,
                    summary: Summary {
                        critical: 0,
                        warning: 2,
                        info: 1
                    },
                    pods: 1,
                    listed: 1,
                }
            ]
        );
        assert_eq!(
            (report.summary.total(), report.max_severity()),
            (7, Some(Severity::Critical))
        );
        let all = DiagnosisReport::new("n", now, BTreeMap::new(), &diagnosis, None);
        assert_eq!((all.findings.len(), all.omitted.len()), (7, 0));
        assert_eq!(all.summary, report.summary);
    }
}
