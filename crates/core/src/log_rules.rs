//! Diagnosis rules over kubelet and runtime log events: what the logs say that the CRI, API and
//! file views cannot (a teardown that keeps failing, a stuck pod worker, a mirror pod loop), and
//! the log evidence that explains a state finding (is the kubelet's GC trying and failing, or not
//! trying at all?).
//!
//! Pure like the rest of `core`: events come in as values (read by `podcoroner-logs`), with
//! the node view when there is one and the time.
//!
//! Correlation, common to the rules:
//! - one logical failure is logged several times (containerd's `StopPodSandbox for "<id>"
//!   failed`, the kubelet's CRI client `StopPodSandbox from runtime service failed`, then the
//!   caller: the GC's `Failed to stop sandbox before removing` or the pod worker's `Error syncing
//!   pod` with `KillPodSandboxError`); the lines are grouped by sandbox ID and pod UID into one
//!   incident, and a line that names neither is joined to the record next to it in the same file
//!   (at most 1 s apart) that does, as the kubelet logs them back to back;
//! - identities seen anywhere in the logs (a line naming a pod with its UID, a container or
//!   sandbox with its pod UID) name the pod of a line that only gives an ID;
//! - an ID cut by the end of a line is reported as a prefix (`4b31f1c4…`), merged into the full
//!   ID when another line names one that starts with it, and never completed by guessing.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use jiff::{SignedDuration, Timestamp};

use crate::finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
use crate::logs::ids::is_pod_uid;
use crate::logs::{Cause, CniFailure, Component, ConfigSource, Event, EventKind, IdKind, SyncOp};
use crate::model::{ContainerState, NodeView, PodRef, SandboxState};
use crate::rules::{Config, Diagnosis, SkippedRule, cause_class, diagnose, human, sh, short};

/// A classified log record with where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    /// The event.
    pub event: Event<'static>,
    /// Which log: the kubelet's or the runtime's.
    pub log: LogKind,
    /// The file (or `journald:<unit>`) it was read from.
    pub origin: String,
    /// The 1-based number of its first physical line there.
    pub line: u64,
    /// The record's text (cut to a few KiB).
    pub text: String,
}

/// Which component's log a record comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogKind {
    /// The kubelet's log (`--kubelet-log`).
    Kubelet,
    /// The container runtime's log (`--runtime-log`).
    Runtime,
}

/// How many evidence lines of one group a finding quotes (first ones and the last).
const MAX_QUOTED: usize = 4;
/// Records of one file at most this far apart can be one logical event: a failure logged by the
/// runtime, the CRI client and the caller within microseconds, or a burst of lookups.
const SAME_EVENT: SignedDuration = SignedDuration::from_secs(1);
/// Records of one incident closer than this are one attempt (the GC retries every minute, a pod
/// worker backs off from 10 s).
const ONE_ATTEMPT: SignedDuration = SignedDuration::from_secs(5);
/// A removed container still looked up over longer than this is a stale reference, not the
/// deletion race.
const RACE_LASTS: SignedDuration = SignedDuration::from_secs(600);
/// Two "outdated" deletions of one mirror pod at most this far apart are a loop.
const MIRROR_LOOP: SignedDuration = SignedDuration::from_secs(60);
/// How long a re-added static pod gets to start a container before its worker counts as stuck.
const READD_START: SignedDuration = SignedDuration::from_secs(60);

/// The state rules over `view`, the log rules over `events`, and the log evidence added to the
/// state findings they explain; sorted as [`diagnose`] sorts.
///
/// A log finding that restates a state finding (same kind and sandbox, container or pod UID;
/// a `StaticPodRemoved` note of a pod that `StaticPodNotRemoved` reports) adds its evidence to
/// it instead of being reported twice.
pub fn diagnose_with_logs(
    view: &NodeView,
    events: &[LoggedEvent],
    config: &Config,
    now: Timestamp,
) -> Diagnosis {
    let mut d = diagnose(view, config, now);
    if events.is_empty() {
        return d;
    }
    let from_logs = diagnose_logs(events, view, config, now);
    enrich(&mut d.findings, events);
    merge(&mut d.findings, from_logs);
    d.findings.sort_by(crate::rules::report_order);
    d.skipped.retain(|s: &SkippedRule| !s.reason.is_empty());
    d
}

/// The findings the logs alone support (the view, when present, confirms or dismisses them).
pub fn diagnose_logs(
    events: &[LoggedEvent],
    view: &NodeView,
    config: &Config,
    now: Timestamp,
) -> Vec<Finding> {
    let logs = Logs::new(events);
    let mut out = Vec::new();
    let seen = stuck_terminating_state(&logs, view, config, now, &mut out);
    teardown_failures(&logs, view, &seen, &mut out);
    find_container_race(&logs, view, &mut out);
    orphaned_pod_volumes(&logs, view, &mut out);
    mirror_pods(&logs, &mut out);
    stuck_pod_workers(&logs, view, &mut out);
    static_pod_removal_blocked(&logs, &mut out);
    runtime_unhealthy(&logs, &mut out);
    sandbox_name_reserved(&logs, view, &mut out);
    static_pod_removed(&logs, &mut out);
    out
}

/// Adds `from_logs` to `findings`; one restating a finding already there adds its evidence.
fn merge(findings: &mut Vec<Finding>, from_logs: Vec<Finding>) {
    let n_state = findings.len();
    for f in from_logs {
        match findings[..n_state].iter_mut().find(|s| same_subject(s, &f)) {
            Some(s) => s.evidence.extend(f.evidence),
            None => findings.push(f),
        }
    }
}

fn same_subject(state: &Finding, log: &Finding) -> bool {
    let kinds = state.kind == log.kind
        || (state.kind == FindingKind::StaticPodNotRemoved
            && log.kind == FindingKind::StaticPodRemoved);
    if !kinds {
        return false;
    }
    if let (Some(a), Some(b)) = (&state.sandbox_id, &log.sandbox_id) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (&state.container_id, &log.container_id) {
        return a == b;
    }
    match (&state.pod, &log.pod) {
        (Some(a), Some(b)) => {
            (!a.uid.is_empty() && a.uid == b.uid)
                || (a.uid.is_empty() || b.uid.is_empty())
                    && !a.name.is_empty()
                    && (a.namespace.as_str(), a.name.as_str())
                        == (b.namespace.as_str(), b.name.as_str())
        }
        _ => false,
    }
}

// === the logs, indexed ===

/// The events with what they say about identities.
struct Logs<'a> {
    /// Every event, in the order read (file order within each file).
    all: &'a [LoggedEvent],
    /// Pod UID → (namespace, name), from lines naming both.
    names: BTreeMap<String, (String, String)>,
    /// `namespace/name` → the UIDs named with it, in the order seen (a static pod's config hash,
    /// its mirror pods' API UIDs).
    uids: BTreeMap<String, Vec<String>>,
    /// Container ID → pod UID.
    container_pod: BTreeMap<String, String>,
    /// Sandbox ID → pod UID.
    sandbox_pod: BTreeMap<String, String>,
    /// Every full sandbox and container ID named anywhere (to complete cut ones).
    full_ids: BTreeSet<String>,
    /// Every pod UID named anywhere.
    all_uids: BTreeSet<String>,
    /// The positions of the events of each kind, in reading order (the rules look at a few kinds
    /// per finding; a node's log holds millions of records).
    by_kind: HashMap<EventKind, Vec<usize>>,
}

impl<'a> Logs<'a> {
    fn new(all: &'a [LoggedEvent]) -> Logs<'a> {
        let mut logs = Logs {
            all,
            names: BTreeMap::new(),
            uids: BTreeMap::new(),
            container_pod: BTreeMap::new(),
            sandbox_pod: BTreeMap::new(),
            full_ids: BTreeSet::new(),
            all_uids: BTreeSet::new(),
            by_kind: HashMap::new(),
        };
        for (i, e) in all.iter().enumerate() {
            logs.by_kind.entry(e.event.kind).or_default().push(i);
            let ids = &e.event.ids;
            for id in [&ids.sandbox_id, &ids.container_id, &ids.object_id]
                .into_iter()
                .flatten()
            {
                logs.full_ids.insert(id.to_string());
            }
            let uid = own_uid(e);
            if let Some(uid) = &uid {
                logs.all_uids.insert(uid.clone());
            }
            // A line naming one pod and a UID names that pod's UID.
            if let (Some(uid), [pod]) = (&uid, ids.pods.as_slice())
                && pod.uid.as_deref().is_none_or(|u| u == uid)
                && let Some(ns) = &pod.namespace
            {
                logs.names
                    .entry(uid.clone())
                    .or_insert_with(|| (ns.to_string(), pod.name.to_string()));
                let seen = logs.uids.entry(format!("{ns}/{}", pod.name)).or_default();
                if !seen.contains(uid) {
                    seen.push(uid.clone());
                }
            }
            if let Some(uid) = &uid {
                if let Some(c) = &ids.container_id {
                    logs.container_pod
                        .entry(c.to_string())
                        .or_insert_with(|| uid.clone());
                }
                if let Some(s) = &ids.sandbox_id {
                    logs.sandbox_pod
                        .entry(s.to_string())
                        .or_insert_with(|| uid.clone());
                }
            }
        }
        logs
    }

    /// The events of `kinds`, in reading order.
    fn of(&self, kinds: &[EventKind]) -> impl Iterator<Item = &'a LoggedEvent> + use<'a> {
        let mut at: Vec<usize> = kinds
            .iter()
            .filter_map(|k| self.by_kind.get(k))
            .flatten()
            .copied()
            .collect();
        at.sort_unstable();
        let all = self.all;
        at.into_iter().map(move |i| &all[i])
    }

    /// The event before `i` in the same file.
    fn prev(&self, i: usize) -> Option<usize> {
        let j = i.checked_sub(1)?;
        (self.all[j].origin == self.all[i].origin).then_some(j)
    }

    /// The event after `i` in the same file.
    fn next(&self, i: usize) -> Option<usize> {
        let j = i + 1;
        (j < self.all.len() && self.all[j].origin == self.all[i].origin).then_some(j)
    }

    /// The pod UID an event names, directly or through the container or sandbox it names.
    fn uid_of(&self, e: &LoggedEvent) -> Option<String> {
        own_uid(e)
            .or_else(|| {
                e.event
                    .ids
                    .container_id
                    .as_deref()
                    .and_then(|c| self.container_pod.get(c).cloned())
            })
            .or_else(|| {
                e.event
                    .ids
                    .sandbox_id
                    .as_deref()
                    .and_then(|s| self.sandbox_pod.get(s).cloned())
            })
    }

    /// A cut ID completed when exactly one full ID of `known` starts with it, else `prefix…`.
    fn complete(prefix: &str, known: &BTreeSet<String>) -> String {
        let mut hits = known.iter().filter(|k| k.starts_with(prefix));
        match (hits.next(), hits.next()) {
            (Some(full), None) => full.clone(),
            _ => format!("{prefix}…"),
        }
    }

    /// The sandbox an event names: its sandbox ID, else a cut one (completed when possible).
    fn sandbox_key(&self, e: &LoggedEvent) -> Option<String> {
        let i = &e.event.ids;
        i.sandbox_id.as_deref().map(str::to_string).or_else(|| {
            i.partial
                .iter()
                .find(|p| matches!(p.kind, IdKind::Sandbox | IdKind::Object))
                .map(|p| Self::complete(&p.prefix, &self.full_ids))
        })
    }

    /// The container an event names: its container ID (or an ID of unstated kind), else a cut
    /// one (completed when possible).
    fn container_key(&self, e: &LoggedEvent) -> Option<String> {
        let i = &e.event.ids;
        i.container_id
            .as_deref()
            .or(i.object_id.as_deref())
            .map(str::to_string)
            .or_else(|| {
                i.partial
                    .iter()
                    .find(|p| matches!(p.kind, IdKind::Container | IdKind::Object))
                    .map(|p| Self::complete(&p.prefix, &self.full_ids))
            })
    }

    /// The pod UID an event names, or a cut one (completed when possible).
    fn uid_key(&self, e: &LoggedEvent) -> Option<String> {
        own_uid(e).or_else(|| {
            e.event
                .ids
                .partial
                .iter()
                .find(|p| p.kind == IdKind::PodUid)
                .map(|p| Self::complete(&p.prefix, &self.all_uids))
        })
    }

    /// The pod of a group of events, best effort: from the CRI view by sandbox or UID, else
    /// from the lines and the identities the logs link.
    fn pod_of(
        &self,
        view: &NodeView,
        group: &[&LoggedEvent],
        sandbox: Option<&str>,
        uid: Option<&str>,
    ) -> Option<PodRef> {
        let uid = uid
            .map(str::to_string)
            .or_else(|| group.iter().find_map(|e| self.uid_of(e)))
            .or_else(|| sandbox.and_then(|s| self.sandbox_pod.get(s).cloned()));
        if let Some(cri) = &view.cri
            && let Some(s) = cri.sandboxes.iter().find(|s| {
                Some(s.id.as_str()) == sandbox || Some(s.pod.uid.as_str()) == uid.as_deref()
            })
        {
            return Some(s.pod.clone());
        }
        let named = group
            .iter()
            .find_map(|e| e.event.ids.pods.first())
            .map(|p| {
                (
                    p.namespace.as_deref().unwrap_or("").to_string(),
                    p.name.to_string(),
                )
            })
            .or_else(|| uid.as_ref().and_then(|u| self.names.get(u).cloned()));
        let uid = uid.or_else(|| {
            let (ns, name) = named.as_ref()?;
            match self.uids.get(&format!("{ns}/{name}"))?.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            }
        });
        match (named, uid) {
            (None, None) => None,
            (named, uid) => {
                let (namespace, name) = named.unwrap_or_default();
                Some(PodRef {
                    namespace,
                    name,
                    uid: uid.unwrap_or_default(),
                })
            }
        }
    }
}

/// The UID a line names for its pod (`podUID=`, a legacy `name_ns(uid)`, a runtime name).
fn own_uid(e: &LoggedEvent) -> Option<String> {
    let ids = &e.event.ids;
    ids.pod_uid
        .as_deref()
        .or_else(|| ids.pods.first().and_then(|p| p.uid.as_deref()))
        .map(str::to_string)
}

/// `namespace/name` (or the bare name) of the first pod a line names.
fn pod_name_key(e: &LoggedEvent) -> Option<String> {
    e.event.ids.pods.first().map(|p| match &p.namespace {
        Some(ns) => format!("{ns}/{}", p.name),
        None => p.name.to_string(),
    })
}

/// Whether `a` was logged after `b`: by time when both have one, else by position in the same
/// file; `false` when it cannot be told.
fn after(a: &LoggedEvent, b: &LoggedEvent) -> bool {
    match (a.event.time, b.event.time) {
        (Some(x), Some(y)) => x > y,
        _ => a.origin == b.origin && a.line > b.line,
    }
}

/// Whether two records are close enough in time to be one logical event.
fn close(a: &LoggedEvent, b: &LoggedEvent) -> bool {
    match (a.event.time, b.event.time) {
        (Some(x), Some(y)) => x.duration_since(y).abs() <= SAME_EVENT,
        (None, None) => true,
        _ => false,
    }
}

fn source_of(e: &LoggedEvent) -> EvidenceSource {
    match e.event.component {
        Some(Component::Kubelet) => EvidenceSource::KubeletLog,
        Some(Component::Containerd | Component::Crio | Component::Docker) => {
            EvidenceSource::RuntimeLog
        }
        _ => match e.log {
            LogKind::Kubelet => EvidenceSource::KubeletLog,
            LogKind::Runtime => EvidenceSource::RuntimeLog,
        },
    }
}

/// Evidence lines for a group of events: a count line, then the first few and the last.
fn quote(group: &[&LoggedEvent]) -> Vec<Evidence> {
    let mut ev = Vec::new();
    if group.is_empty() {
        return ev;
    }
    if group.len() > 1 {
        let span = match time_range(group) {
            Some((a, b)) => format!(" from {a} to {b} ({})", dur(b.duration_since(a))),
            None => String::new(),
        };
        ev.push(Evidence::new(
            source_of(group[0]),
            format!("{} log records{span}", group.len()),
        ));
    }
    let mut picked: Vec<&&LoggedEvent> = group.iter().take(MAX_QUOTED - 1).collect();
    if group.len() >= MAX_QUOTED {
        picked.push(group.last().unwrap());
    }
    ev.extend(picked.into_iter().map(|e| line(e)));
    ev
}

/// One record as evidence: `file:line: text`.
fn line(e: &LoggedEvent) -> Evidence {
    Evidence::new(source_of(e), format!("{}:{}: {}", e.origin, e.line, e.text))
}

/// A duration for a person: [`human`], or milliseconds under a second.
fn dur(d: SignedDuration) -> String {
    if d.abs() < SignedDuration::from_millis(1) {
        "<1ms".to_string()
    } else if d.abs() < SignedDuration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        human(d)
    }
}

fn time_range(group: &[&LoggedEvent]) -> Option<(Timestamp, Timestamp)> {
    let times = group.iter().filter_map(|e| e.event.time);
    Some((times.clone().min()?, times.max()?))
}

fn span(group: &[&LoggedEvent]) -> SignedDuration {
    time_range(group).map_or(SignedDuration::ZERO, |(a, b)| b.duration_since(a))
}

/// `" over 3m"`, or nothing for records less than a second apart or without times.
fn over(group: &[&LoggedEvent]) -> String {
    let d = span(group);
    if d < SignedDuration::from_secs(1) {
        String::new()
    } else {
        format!(" over {}", human(d))
    }
}

/// How many attempts a group of records stands for: records less than [`ONE_ATTEMPT`] apart
/// are one (untimed records count as one together).
fn attempts(group: &[&LoggedEvent]) -> usize {
    let mut times: Vec<Timestamp> = group.iter().filter_map(|e| e.event.time).collect();
    times.sort();
    let timed = times
        .windows(2)
        .filter(|w| w[1].duration_since(w[0]) > ONE_ATTEMPT)
        .count()
        + usize::from(!times.is_empty());
    timed.max(1)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `" of pod ns/name (uid)"` as far as known.
fn of_pod(pod: Option<&PodRef>) -> String {
    match pod {
        Some(p) if !p.name.is_empty() && !p.uid.is_empty() => {
            format!(" of pod {}/{} ({})", p.namespace, p.name, p.uid)
        }
        Some(p) if !p.name.is_empty() => format!(" of pod {}/{}", p.namespace, p.name),
        Some(p) if !p.uid.is_empty() => format!(" of pod {}", p.uid),
        _ => String::new(),
    }
}

/// A cut ID as crictl accepts it (a prefix), a full one shortened.
fn shown(id: &str) -> &str {
    if id.ends_with('…') { id } else { short(id) }
}

fn finding(
    kind: FindingKind,
    severity: Severity,
    summary: String,
    rule: &str,
    remediation: String,
) -> Finding {
    Finding {
        kind,
        severity,
        summary,
        pod: None,
        sandbox_id: None,
        container_id: None,
        path: None,
        evidence: vec![],
        kubelet_rule: rule.to_string(),
        remediation,
        gc_eligible: false,
    }
}

// === teardown failures: SandboxStopFailing, StuckTerminatingPod, StaticPodNotRemoved ===

/// Who asked for the sandbox to go, as far as one line tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Caller {
    /// The sandbox GC (`kuberuntime_gc.go` `removeSandbox`).
    Gc,
    /// The pod worker killing the pod (`kuberuntime_manager.go` `killPodWithSyncResult`).
    Kill,
    /// The CRI client or the runtime: either of the above.
    Unknown,
}

/// Whether a line reports a sandbox (or pod) teardown failure, and from which caller.
fn teardown_caller(e: &LoggedEvent) -> Option<Caller> {
    use EventKind::*;
    match e.event.kind {
        StopSandboxBeforeRemoveFailed | RemoveSandboxFailed => Some(Caller::Gc),
        // `killPodWithSyncResult` logs "Failed to stop sandbox" with no error (ErrorS(nil, …));
        // dockershim's "Failed to stop sandbox "<id>": <err>" is the runtime side.
        KillPodSandboxFailed if e.event.error.is_none() => Some(Caller::Kill),
        KillPodFailed => Some(Caller::Kill),
        ErrorSyncingPod => {
            let t = e.event.error.as_deref().unwrap_or(&e.text);
            (t.contains("KillPodSandbox") || t.contains("KillContainer")).then_some(Caller::Kill)
        }
        KillPodSandboxFailed
        | StopPodSandboxFailed
        | RemovePodSandboxFailed
        | DestroyNetworkFailed => Some(Caller::Unknown),
        _ => None,
    }
}

/// How telling a cause is: a specific CNI cause beats a transient one (`cni plugin not
/// initialized`, typically right after boot), which beats a generic or cut CNI error, which
/// beats the rest; NotFound (the object is gone) tells least.
fn cause_rank(c: Cause) -> u8 {
    match c {
        Cause::CniTeardown(CniFailure::PluginNotInitialized) => 6,
        Cause::CniTeardown(CniFailure::DestroyNetwork) => 5,
        Cause::CniTeardown(_) => 7,
        Cause::RuntimeBusy => 4,
        Cause::Timeout => 3,
        Cause::Forbidden | Cause::AlreadyExists => 2,
        Cause::Other => 1,
        Cause::NotFound => 0,
    }
}

/// The most telling cause of a group and the event that says it (the latest among equals).
fn best_cause<'e>(group: &[&'e LoggedEvent]) -> Option<(Cause, &'e LoggedEvent)> {
    group
        .iter()
        .filter_map(|e| e.event.cause.map(|c| (c, *e)))
        .fold(None, |best, (c, e)| match best {
            Some((b, _)) if cause_rank(b) > cause_rank(c) => best,
            _ => Some((c, e)),
        })
}

/// The error text of an event without the gRPC wrapping, for a person.
fn error_text(e: &LoggedEvent) -> String {
    let err = e.event.error.as_deref().unwrap_or(&e.text);
    let err = err
        .rsplit_once(" desc = ")
        .filter(|(head, _)| head.contains("rpc error"))
        .map_or(err, |(_, rest)| rest);
    let err = err.replace("\\\"", "\"").replace("\\\\", "\\");
    match err.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &err[..at]),
        None => err,
    }
}

/// The quoted word after `key` in `text` (`network "cbr0"`, `plugin "flannel"`,
/// `type="weave-net"`), with any escaping of the quotes.
fn quoted_after<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let rest = &text[text.find(key)? + key.len()..];
    let rest = rest.trim_start_matches(['"', '\\', '=']);
    let end = rest.find(['"', '\\'])?;
    Some(&rest[..end]).filter(|w| !w.is_empty() && !w.contains(' '))
}

/// The CNI plugin an error names: `failed to find plugin "<p>"`, `plugin type="<p>"`,
/// `/opt/cni/bin/<p>`.
fn cni_plugin(err: &str) -> Option<&str> {
    quoted_after(err, "find plugin ")
        .or_else(|| quoted_after(err, "type="))
        .or_else(|| {
            let at = err.find("/opt/cni/bin/")? + "/opt/cni/bin/".len();
            let name = &err[at..];
            Some(&name[..name.find([':', ' ', '>', '"', '\\']).unwrap_or(name.len())])
        })
        .filter(|p| !p.is_empty())
}

/// Whether two CNI failures may be the same plugin's (both name it, or one does not say).
fn same_plugin(a: &LoggedEvent, b: &LoggedEvent) -> bool {
    let plugin = |e: &LoggedEvent| {
        cni_plugin(e.event.error.as_deref().unwrap_or(&e.text)).map(str::to_string)
    };
    match (plugin(a), plugin(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// The class of a failure and what to do, from its cause and, where the error names them, the
/// file or process to look at.
fn failure_class(cause: Cause, e: &LoggedEvent, sandbox: Option<&str>) -> (String, String) {
    let (class, fix) = cause_class(cause);
    let err = e.event.error.as_deref().unwrap_or(&e.text);
    let id = sandbox.map_or("<sandbox id>", |s| s.trim_end_matches('…'));
    match cause {
        Cause::CniTeardown(CniFailure::EmptyCachedResult) => {
            if let Some(net) = quoted_after(err, "get network ") {
                let glob = format!("/var/lib/cni/results/{net}-{id}-*");
                return (
                    format!("{class} (network {net})"),
                    format!(
                        "ls -la {glob} and remove the file if it is empty (it holds nothing), then the \
                         teardown succeeds on the next try"
                    ),
                );
            }
            if err.contains("netconf") {
                let plugin = quoted_after(err, "type=").unwrap_or("the CNI plugin");
                return (
                    format!("{class} (the cached netconf of {plugin} is empty)"),
                    format!(
                        "find {plugin}'s per-sandbox cache for {id} (flannel: /var/lib/cni/flannel/{id}) and \
                         remove it if it is empty, then the teardown succeeds on the next try"
                    ),
                );
            }
        }
        Cause::CniTeardown(CniFailure::PluginMissing) => {
            if let Some(p) = cni_plugin(err) {
                return (
                    format!("{class} (plugin {p})"),
                    format!(
                        "the CNI config in /etc/cni/net.d names plugin {p}: check that /opt/cni/bin/{p} \
                         exists and runs on this node's architecture (reinstall the CNI plugins)"
                    ),
                );
            }
        }
        Cause::RuntimeBusy if err.contains("device or resource busy") => {
            let shm = err.contains("/shm");
            return (
                format!(
                    "{class}: {} is busy (device or resource busy)",
                    if shm {
                        "the sandbox's shm mount"
                    } else {
                        "a mount of the sandbox"
                    }
                ),
                format!(
                    "grep -l {id} /proc/*/mountinfo finds the processes whose mount namespace holds it (a \
                     mount leaked into another namespace); restart them or umount it there"
                ),
            );
        }
        Cause::Other if err.contains("ttrpc: closed") => {
            return (
                "the runtime lost the sandbox's shim (ttrpc: closed)".to_string(),
                format!(
                    "look for the sandbox's shim or VM process (ps -ef | grep {id}); restart the runtime \
                     (CRI-O, containerd) and report it to the VM runtime (e.g. Kata)"
                ),
            );
        }
        _ => {}
    }
    (class.to_string(), fix.to_string())
}

/// Groups every sandbox and pod teardown failure into incidents and reports each once:
/// `StaticPodNotRemoved` for a static pod REMOVEd from its source that cannot be killed,
/// `StuckTerminatingPod` for a pod the pod worker cannot kill, `SandboxStopFailing` otherwise.
///
/// `kuberuntime_gc.go` `removeSandbox` ("Failed to stop sandbox before removing", "Failed to
/// remove sandbox") and `kuberuntime_manager.go` `killPodWithSyncResult` ("Failed to stop
/// sandbox", "killPodWithSyncResult failed", `pod_workers.go` "Error syncing pod, skipping"
/// with `KillPodSandboxError`) retry forever while the cause lasts; the CRI client's
/// "StopPodSandbox from runtime service failed" and containerd's `StopPodSandbox for "<id>"
/// failed` are the same failure seen lower down.
///
/// Not a finding: a failure followed by the sandbox's successful stop or removal, the pod's
/// termination, or (for an API pod) its REMOVE; a sandbox the CRI view no longer lists; a
/// failure whose only cause is NotFound (the object is already gone).
fn teardown_failures(
    logs: &Logs<'_>,
    view: &NodeView,
    seen: &BTreeSet<String>,
    out: &mut Vec<Finding>,
) {
    let all = logs.all;
    let t: Vec<usize> = (0..all.len())
        .filter(|&i| teardown_caller(&all[i]).is_some())
        .collect();
    if t.is_empty() {
        return;
    }
    let pos: BTreeMap<usize, usize> = t.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let mut parent: Vec<usize> = (0..t.len()).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    fn union(parent: &mut [usize], a: usize, b: usize) {
        let (ra, rb) = (find(parent, a), find(parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    // One sandbox, or one pod UID: one incident.
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (k, &i) in t.iter().enumerate() {
        let e = &all[i];
        let keys = [
            logs.sandbox_key(e).map(|s| format!("s:{s}")),
            own_uid(e).map(|u| format!("u:{u}")),
        ];
        for key in keys.into_iter().flatten() {
            match by_key.get(&key) {
                Some(&j) => union(&mut parent, k, j),
                None => {
                    by_key.insert(key, k);
                }
            }
        }
    }
    // A line naming no sandbox belongs with the failure logged next to it (the kubelet logs
    // "Failed to stop sandbox" then "killPodWithSyncResult failed"; dockershim logs the CNI
    // error, then the stop failure).
    for (k, &i) in t.iter().enumerate() {
        if logs.sandbox_key(&all[i]).is_some() {
            continue;
        }
        let uid = logs.uid_of(&all[i]);
        for j in [logs.prev(i), logs.next(i)].into_iter().flatten() {
            let Some(&kj) = pos.get(&j) else { continue };
            let conflict = matches!((&uid, logs.uid_of(&all[j])), (Some(a), Some(b)) if *a != b);
            if logs.sandbox_key(&all[j]).is_some() && close(&all[i], &all[j]) && !conflict {
                union(&mut parent, k, kj);
                break;
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<&LoggedEvent>> = BTreeMap::new();
    for (k, &i) in t.iter().enumerate() {
        let root = find(&mut parent, k);
        groups.entry(root).or_default().push(&all[i]);
    }

    // A CNI plugin that cannot run fails every teardown on the node.
    let node_wide = t
        .iter()
        .map(|&i| &all[i])
        .find(|e| e.event.cause == Some(Cause::CniTeardown(CniFailure::PluginMissing)));

    for group in groups.into_values() {
        incident(logs, view, seen, node_wide, &group, out);
    }
}

fn incident(
    logs: &Logs<'_>,
    view: &NodeView,
    seen: &BTreeSet<String>,
    node_wide: Option<&LoggedEvent>,
    group: &[&LoggedEvent],
    out: &mut Vec<Finding>,
) {
    use EventKind::*;
    let sandboxes: BTreeSet<String> = group.iter().filter_map(|e| logs.sandbox_key(e)).collect();
    // A full ID rather than a cut one; the latest named.
    let sandbox = group
        .iter()
        .rev()
        .filter_map(|e| logs.sandbox_key(e))
        .find(|s| !s.ends_with('…'))
        .or_else(|| sandboxes.iter().next().cloned());
    let uid = group.iter().find_map(|e| own_uid(e)).or_else(|| {
        sandbox
            .as_deref()
            .and_then(|s| logs.sandbox_pod.get(s).cloned())
    });
    let pod = logs.pod_of(view, group, sandbox.as_deref(), uid.as_deref());
    let pod_key = pod
        .as_ref()
        .filter(|p| !p.name.is_empty())
        .map(|p| format!("{}/{}", p.namespace, p.name));
    let names_pod = |e: &LoggedEvent| {
        own_uid(e).is_some_and(|u| Some(&u) == uid.as_ref())
            || pod_name_key(e).is_some_and(|k| Some(&k) == pod_key.as_ref())
    };

    // A static pod REMOVEd from its source before the failures: its removal is what fails.
    let first = group[0];
    let static_remove = logs.of(&[SyncLoop(SyncOp::Remove)]).find(|e| {
        matches!(
            e.event.config_source,
            Some(ConfigSource::File | ConfigSource::Http)
        ) && names_pod(e)
            && !after(e, first)
    });

    // Failures after the last success are what is still failing.
    let success = |s: &LoggedEvent| match s.event.kind {
        StopPodSandboxDone | RemovePodSandboxDone | TearDownNetworkDone => {
            logs.sandbox_key(s).is_some_and(|k| sandboxes.contains(&k))
        }
        PodTerminated => own_uid(s).is_some_and(|u| Some(&u) == uid.as_ref()),
        SyncLoop(SyncOp::Remove) => {
            static_remove.is_none()
                && s.event.config_source == Some(ConfigSource::Api)
                && names_pod(s)
        }
        _ => false,
    };
    let successes: Vec<&LoggedEvent> = logs
        .of(&[
            StopPodSandboxDone,
            RemovePodSandboxDone,
            TearDownNetworkDone,
            PodTerminated,
            SyncLoop(SyncOp::Remove),
        ])
        .filter(|s| success(s))
        .collect();
    let failing: Vec<&LoggedEvent> = group
        .iter()
        .copied()
        .filter(|f| !successes.iter().any(|s| after(s, f)))
        .collect();
    let Some((cause, said)) = best_cause(&failing) else {
        return;
    };
    if cause == Cause::NotFound {
        return;
    }
    // The runtime no longer has it: healed.
    if let Some(cri) = &view.cri {
        let listed = match (&sandbox, &uid) {
            (Some(s), _) if !s.ends_with('…') => cri.sandboxes.iter().any(|x| &x.id == s),
            (_, Some(u)) => {
                cri.sandboxes.iter().any(|x| &x.pod.uid == u)
                    || cri.containers.iter().any(|c| c.pod_uid() == Some(u))
            }
            _ => true,
        };
        if !listed {
            return;
        }
    }
    let killing = failing
        .iter()
        .any(|e| teardown_caller(e) == Some(Caller::Kill));
    let by_gc = failing
        .iter()
        .any(|e| teardown_caller(e) == Some(Caller::Gc));
    let api_pod_alive = |u: &str| {
        view.api.as_ref().is_some_and(|api| {
            api.pods
                .iter()
                .any(|p| p.pod.uid == u && p.deletion_timestamp.is_none())
        })
    };
    let kind = if static_remove.is_some() {
        FindingKind::StaticPodNotRemoved
    } else if killing && !uid.as_deref().is_some_and(api_pod_alive) {
        if uid.as_ref().is_some_and(|u| seen.contains(u)) {
            return; // the state rule reports it, with these lines
        }
        FindingKind::StuckTerminatingPod
    } else {
        FindingKind::SandboxStopFailing
    };

    let (mut class, mut fix) = failure_class(cause, said, sandbox.as_deref());
    let generic_cni = cause == Cause::CniTeardown(CniFailure::DestroyNetwork);
    let mut severity = Severity::Warning;
    let mut node_note = None;
    if cause == Cause::CniTeardown(CniFailure::PluginMissing) {
        // Node-wide: no sandbox on this node can be torn down (or set up) until the plugin is
        // back, the scale of RuntimeUnhealthy.
        severity = Severity::Critical;
        node_note = Some(
            "; the CNI plugin cannot run on this node, so every sandbox teardown fails".to_string(),
        );
    } else if let (true, Some(nw)) = (generic_cni, node_wide)
        && same_plugin(said, nw)
    {
        // The error does not say why (a cut line, a generic DEL failure), but the same plugin
        // cannot run on this node at all.
        severity = Severity::Critical;
        let (c, f) = failure_class(
            Cause::CniTeardown(CniFailure::PluginMissing),
            nw,
            logs.sandbox_key(nw).as_deref(),
        );
        class = format!(
            "{class} (no reason in this line; on this node {})",
            c.trim_start_matches("CNI teardown: ")
        );
        fix = f;
        node_note = Some(format!(
            "; the CNI plugin cannot run on this node (seen for sandbox {}), so every sandbox teardown fails",
            logs.sandbox_key(nw).as_deref().map_or("?", shown)
        ));
    }
    let node_note = node_note.unwrap_or_default();
    let n_attempts = attempts(&failing);
    let tally = format!(
        "{}, {}{}",
        plural(n_attempts, "attempt", "attempts"),
        plural(failing.len(), "log record", "log records"),
        over(&failing)
    );
    let removal = failing
        .iter()
        .any(|e| matches!(e.event.kind, RemoveSandboxFailed | RemovePodSandboxFailed))
        && !failing.iter().any(|e| {
            matches!(
                e.event.kind,
                StopSandboxBeforeRemoveFailed | StopPodSandboxFailed | DestroyNetworkFailed
            )
        });
    let step = match (&sandbox, removal) {
        (Some(s), true) => format!("removing its sandbox {}", shown(s)),
        (Some(s), false) => format!("stopping its sandbox {}", shown(s)),
        (None, _) if failing.iter().any(|e| e.text.contains("KillPodSandbox")) => {
            "stopping its sandbox".to_string()
        }
        (None, _) => "stopping its containers".to_string(),
    };
    let crictl_by_uid = uid.as_deref().map(|u| {
        format!(
            "crictl pods --label io.kubernetes.pod.uid={u} finds its sandbox; crictl stopp <id> && crictl rmp <id>"
        )
    });
    let crictl = sandbox.as_deref().map(|s| {
        format!(
            "crictl stopp {id} && crictl rmp {id}",
            id = sh(s.trim_end_matches('…'))
        )
    });
    let mut f = match (kind, static_remove) {
        (FindingKind::StaticPodNotRemoved, Some(remove)) => {
            let source = match remove.event.config_source {
                Some(ConfigSource::Http) => "http",
                _ => "file",
            };
            finding(
                kind,
                severity,
                format!(
                    "static pod{} was removed from its {source} source{} but the kubelet cannot kill it: \
                     {step} fails: {class} ({tally}); its sandbox and mirror pod stay{node_note}",
                    of_pod(pod.as_ref()).trim_start_matches(" of pod"),
                    remove
                        .event
                        .time
                        .map_or(String::new(), |t| format!(" at {t}")),
                ),
                "config/file.go REMOVEs a static pod whose manifest left the directory and its pod worker \
                 kills it (pod_workers.go, kuberuntime_manager.go killPodWithSyncResult: containers, then \
                 StopPodSandbox with the CNI teardown); when KillPodSandbox fails, 1.22 to 1.26 do not retry \
                 the termination of a removed static pod (k/k #105790, #126021; fixed in 1.27 by #113145), so \
                 its sandbox and mirror pod stay",
                format!(
                    "{fix}; then {}, or systemctl restart kubelet (it retries the termination)",
                    crictl.clone().or(crictl_by_uid).unwrap_or_else(|| {
                        "crictl pods --name <pod name> finds its sandbox; crictl stopp <id> && crictl rmp <id>"
                            .to_string()
                    })
                ),
            )
        }
        (FindingKind::StuckTerminatingPod, _) => finding(
            kind,
            severity,
            format!(
                "the kubelet cannot kill pod{}: {step} fails: {class} ({tally}); a deleted pod stays \
                 Terminating until this is fixed{node_note}",
                of_pod(pod.as_ref()).trim_start_matches(" of pod")
            ),
            "kuberuntime_manager.go killPodWithSyncResult: a pod is killed by stopping its containers, then its \
             sandbox (StopPodSandbox, which runs the CNI teardown); on error the pod worker logs \"Error syncing \
             pod, skipping\" with KillPodSandboxError and retries with back-off, and the API object of a \
             deleted pod goes only once the kill succeeds",
            format!(
                "{fix}; the kubelet then finishes by itself. kubectl delete pod --force only hides the pod: its \
                 sandbox stays{}",
                crictl
                    .as_ref()
                    .map_or(String::new(), |c| format!(" ({c} once the cause is fixed)"))
            ),
        ),
        _ => finding(
            FindingKind::SandboxStopFailing,
            severity,
            format!(
                "{} pod sandbox {}{} fails: {class} ({tally}){}{node_note}",
                if removal { "removing" } else { "stopping" },
                sandbox.as_deref().map_or("?", shown),
                of_pod(pod.as_ref()),
                if by_gc {
                    "; the kubelet's GC retries it every minute and the sandbox leaks until the cause is fixed"
                } else {
                    ""
                }
            ),
            "kuberuntime_gc.go removeSandbox: StopPodSandbox runs the CNI teardown; on error the kubelet logs \
             \"Failed to stop sandbox before removing\" and never calls RemovePodSandbox, retrying every GC \
             period (1 min) with no Node event, so the sandbox leaks until the cause is fixed \
             (killPodWithSyncResult retries the same call for a pod being killed)",
            format!(
                "{fix}. Once the cause is fixed the kubelet's GC finishes by itself, or run {}",
                crictl
                    .clone()
                    .unwrap_or_else(|| "crictl stopp <id> && crictl rmp <id>".to_string())
            ),
        ),
    };
    // What led to it: the REMOVE, the containers killed.
    if kind != FindingKind::SandboxStopFailing {
        let killed = logs
            .of(&[KillingContainer])
            .filter(|e| names_pod(e) && static_remove.is_none_or(|r| !after(r, e)));
        for e in static_remove.into_iter().chain(killed.take(2)) {
            f.evidence.push(line(e));
        }
    }
    f.evidence.push(Evidence::new(
        source_of(said),
        format!("cause: {class}: {}", error_text(said)),
    ));
    f.evidence.extend(quote(&failing));
    f.pod = pod;
    f.sandbox_id = sandbox;
    out.push(f);
}

// === StuckTerminatingPod (state) ===

/// A pod the API marked for deletion past its grace period whose sandbox is still READY or whose
/// containers still run, with the kill errors the logs hold for it. Returns the UIDs reported.
fn stuck_terminating_state(
    logs: &Logs<'_>,
    view: &NodeView,
    config: &Config,
    now: Timestamp,
    out: &mut Vec<Finding>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let (Some(api), Some(cri)) = (&view.api, &view.cri) else {
        return seen;
    };
    for p in api.pods.iter().filter(|p| p.node_name == view.node_name) {
        let Some(deleted) = p.deletion_timestamp else {
            continue;
        };
        let grace = SignedDuration::from_secs(p.deletion_grace_period_seconds.unwrap_or(30));
        let past = now.duration_since(deleted) - grace;
        if past < SignedDuration::try_from(config.min_age).unwrap_or(SignedDuration::MAX) {
            continue;
        }
        let uid = p.mirror_hash().unwrap_or(&p.pod.uid);
        let ready: Vec<_> = cri
            .sandboxes
            .iter()
            .filter(|s| s.pod.uid == uid && s.state == SandboxState::Ready)
            .collect();
        let running = cri
            .containers
            .iter()
            .filter(|c| c.pod_uid() == Some(uid) && c.state == ContainerState::Running)
            .count();
        if ready.is_empty() && running == 0 {
            continue;
        }
        seen.insert(uid.to_string());
        let failures: Vec<&LoggedEvent> = logs
            .all
            .iter()
            .filter(|e| {
                e.event.kind.is_failure()
                    && (logs.uid_of(e).as_deref() == Some(uid)
                        || ready
                            .iter()
                            .any(|s| e.event.ids.sandbox_id.as_deref() == Some(s.id.as_str())))
            })
            .collect();
        let mut f = finding(
            FindingKind::StuckTerminatingPod,
            Severity::Warning,
            format!(
                "pod {}/{} is Terminating {} past its grace period: {} READY sandbox(es), {running} running container(s)",
                p.pod.namespace,
                p.pod.name,
                human(past),
                ready.len()
            ),
            "kubelet pod_workers.go: a deleted pod's worker kills its containers (grace period) and then its \
             sandbox (StopPodSandbox, which runs the CNI teardown); the API object goes once both are done",
            format!(
                "journalctl -u kubelet | grep {uid} for the kill error (often a CNI teardown failure); fix it and \
                 the kubelet finishes; a force delete (kubectl delete pod --force) leaves the sandbox behind",
                uid = sh(uid)
            ),
        );
        f.pod = Some(PodRef {
            namespace: p.pod.namespace.clone(),
            name: p.pod.name.clone(),
            uid: uid.to_string(),
        });
        f.sandbox_id = ready.first().map(|s| s.id.clone());
        f.evidence = vec![Evidence::new(
            EvidenceSource::Apiserver,
            format!(
                "deletionTimestamp {deleted}, grace period {}s",
                grace.as_secs()
            ),
        )];
        f.evidence.extend(quote(&failures));
        out.push(f);
    }
    seen
}

// === FindContainerRace ===

const RACE_KINDS: [EventKind; 5] = [
    EventKind::DeleteContainerFailed,
    EventKind::ContainerStatusFailed,
    EventKind::RemoveContainerFailed,
    EventKind::GcContainerStatusFailed,
    EventKind::ContainerNotFound,
];

fn is_race(e: &LoggedEvent) -> bool {
    RACE_KINDS.contains(&e.event.kind)
        && (e.event.not_found || e.event.kind == EventKind::ContainerNotFound)
}

/// A line of the race family cut before its error says what failed.
fn is_cut_race(e: &LoggedEvent) -> bool {
    RACE_KINDS.contains(&e.event.kind)
        && e.event.truncated
        && !e.event.not_found
        && matches!(e.event.cause, None | Some(Cause::Other))
}

/// `pod_container_deletor.go` ("DeleteContainer returned error"), `kuberuntime_container.go`
/// `removeContainer` (which calls `ContainerStatus` first), `kuberuntime_gc.go` ("Failed to
/// remove container", "Error getting ContainerStatus for containerID" for a leftover log
/// symlink) and the runtime ("an error occurred when try to find container", CRI-O's "ID does not
/// exist"): a removed container is looked up again and the runtime answers NotFound. Benign
/// (info), k/k #99901; a warning when the same container keeps coming back for more than 10 min.
///
/// A NotFound line that names no container belongs to the `RemoveContainer` logged just before
/// it; a line cut before its error belongs to the NotFound burst it is logged in. Not a finding:
/// a container the CRI view still lists, "Container not found in pod's containers".
fn find_container_race(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let all = logs.all;
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for (i, e) in all.iter().enumerate() {
        let neighbours = || [logs.prev(i), logs.next(i)].into_iter().flatten();
        let member = is_race(e)
            || (is_cut_race(e) && neighbours().any(|j| is_race(&all[j]) && close(e, &all[j])));
        if !member {
            continue;
        }
        let key = logs.container_key(e).or_else(|| {
            let j = logs.prev(i)?;
            (all[j].event.kind == EventKind::RemoveContainer && close(e, &all[j]))
                .then(|| logs.container_key(&all[j]))?
        });
        if let Some(key) = key {
            groups.entry(key).or_default().push(e);
        }
    }
    let mut removes_of: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::RemoveContainer]) {
        if let Some(key) = logs.container_key(e).filter(|k| groups.contains_key(k)) {
            removes_of.entry(key).or_default().push(e);
        }
    }
    for (id, group) in groups {
        // A container the runtime still lists is not gone: not this race.
        if view
            .cri
            .as_ref()
            .is_some_and(|cri| cri.containers.iter().any(|c| c.id == id))
        {
            continue;
        }
        let removes = removes_of.remove(&id).unwrap_or_default();
        let lasting = span(&group) > RACE_LASTS;
        let n = plural(group.len(), "record", "records");
        let pod = logs.pod_of(
            view,
            &group,
            None,
            logs.container_pod.get(&id).map(String::as_str),
        );
        let summary = if lasting {
            format!(
                "container {}{} keeps being looked up after it was removed ({n} over {}): something holds a \
                 stale reference to it",
                shown(&id),
                of_pod(pod.as_ref()),
                human(span(&group))
            )
        } else if !group.iter().any(|e| is_race(e)) {
            format!(
                "container {}{} was looked up in a burst of lookups of removed containers ({n}, cut before \
                 the error): most likely the same benign race, nothing to do",
                shown(&id),
                of_pod(pod.as_ref())
            )
        } else if group
            .iter()
            .any(|e| e.event.kind == EventKind::GcContainerStatusFailed)
        {
            format!(
                "the kubelet's GC looked up container {} for a leftover log file after the container was \
                 removed (NotFound, {n}): benign, nothing to do",
                shown(&id)
            )
        } else if removes.len() >= 2
            || group
                .iter()
                .any(|e| e.event.kind == EventKind::DeleteContainerFailed)
        {
            format!(
                "container {}{} was removed twice during pod deletion and the second attempt got NotFound \
                 ({n}): the known benign race, nothing to do",
                shown(&id),
                of_pod(pod.as_ref())
            )
        } else {
            format!(
                "container {}{} was looked up after it was removed (NotFound, {n}): the benign race of the \
                 kubelet's cleanup with the removal, nothing to do",
                shown(&id),
                of_pod(pod.as_ref())
            )
        };
        let mut f = finding(
            FindingKind::FindContainerRace,
            if lasting {
                Severity::Warning
            } else {
                Severity::Info
            },
            summary,
            "pod_container_deletor.go and kuberuntime_container.go removeContainer: a deleted pod's container \
             is removed by the deletor, the pod worker and the GC, and removeContainer asks ContainerStatus \
             first; the later attempts get NotFound (\"an error occurred when try to find container\"), k/k \
             #99901; the GC's log cleanup does the same for leftover log symlinks (k/k #107670)",
            if lasting {
                format!(
                    "journalctl -u kubelet | grep {} to see who keeps asking (a stale /var/log/containers \
                     symlink, a stuck pod worker); restarting the kubelet clears a stuck worker",
                    sh(id.trim_end_matches('…'))
                )
            } else {
                "none: the container is already gone".to_string()
            },
        );
        f.pod = pod;
        f.container_id = Some(id);
        let mut quoted: Vec<&LoggedEvent> = removes;
        quoted.extend(group.iter().copied());
        quoted.sort_by_key(|e| e.event.time);
        f.evidence = quote(&quoted);
        out.push(f);
    }
}

// === OrphanedPodVolumes ===

/// The paths under `pods/<uid>/` a text names.
fn pod_paths(text: &str, uid: &str) -> Vec<String> {
    let needle = format!("/pods/{uid}/");
    let mut paths = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(&needle).map(|a| a + from) {
        let start = text[..at].rfind([' ', '"', '=', '\'']).map_or(0, |s| s + 1);
        let end = text[at..]
            .find([' ', '"', '\'', '\\'])
            .map_or(text.len(), |e| e + at);
        let path = text[start..end].trim_end_matches([':', '.', ',']);
        if path.starts_with('/') && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
        from = at + needle.len();
    }
    paths
}

/// `kubelet_volumes.go` `cleanupOrphanedPodDirs`: "Orphaned pod "<uid>" found, but volume paths
/// are still present on disk" (up to 1.20) and the roll-up "There were many similar errors"
/// carrying `orphaned pod "<uid>" found, but …` (later), every housekeeping (2 s). One finding
/// per UID, its repeats counted; `numErrs` says how many orphaned pods fail in all. A cut UID is
/// merged into the full one another line names. The volume manager's "Could not construct volume
/// information" for the same UID (after a kubelet restart) says why the volumes stay.
///
/// Not a finding: a UID whose directory the pod directory view no longer lists.
fn orphaned_pod_volumes(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs
        .all
        .iter()
        .filter(|e| e.event.kind == EventKind::OrphanedPodVolumes)
    {
        if let Some(key) = logs.uid_key(e) {
            groups.entry(key).or_default().push(e);
        }
    }
    for (uid, group) in groups {
        let full = !uid.ends_with('…');
        // The directory is gone now: healed.
        if let Some(dirs) = &view.pod_dirs
            && full
            && !dirs.iter().any(|d| d.uid == uid)
        {
            continue;
        }
        let related = |k: EventKind| -> Vec<&LoggedEvent> {
            logs.of(&[k])
                .filter(|e| full && own_uid(e).as_deref() == Some(&uid))
                .collect()
        };
        let unreconstructed = related(EventKind::VolumeReconstructionFailed);
        let cleaned = related(EventKind::OrphanedPodVolumesCleaned);
        let at_least = group
            .iter()
            .filter_map(|e| e.event.count)
            .max()
            .unwrap_or(1);
        let subpaths = group.iter().any(|e| e.text.contains("subpath"));
        let what = if subpaths {
            "volume subpaths"
        } else {
            "volume paths"
        };
        let mut left: Vec<String> = Vec::new();
        if full {
            for e in group.iter().chain(unreconstructed.iter()) {
                for p in pod_paths(&e.text, &uid) {
                    if !left.contains(&p) {
                        left.push(p);
                    }
                }
            }
        }
        let root = left
            .iter()
            .find_map(|p| {
                p.find(&format!("/pods/{uid}/"))
                    .map(|at| p[..at].to_string())
            })
            .unwrap_or_else(|| "/var/lib/kubelet".to_string());
        let mut notes = String::new();
        if at_least > 1 {
            notes.push_str(&format!(
                "; at least {at_least} orphaned pods fail like this on the node, only this one is named"
            ));
        }
        if !cleaned.is_empty() {
            notes.push_str("; its volumes/ directory was cleaned up, what stays is elsewhere in the pod directory");
        }
        if !unreconstructed.is_empty() {
            notes.push_str(
                "; the kubelet could not reconstruct its volumes after a restart (\"Could not construct volume \
                 information\"), so it never unmounts or removes them",
            );
        }
        let mut f = finding(
            FindingKind::OrphanedPodVolumes,
            Severity::Warning,
            format!(
                "the kubelet cannot remove the directory of orphaned pod {uid}: {what} are still present ({}{}){notes}",
                plural(group.len(), "record", "records"),
                over(&group)
            ),
            "kubelet_volumes.go cleanupOrphanedPodDirs: the directory of a pod neither desired nor running is \
             removed once its volumes are unmounted, but only empty volume directories are removed (rmdir, \
             never a recursive delete); the error repeats every housekeeping (2 s)",
            format!(
                "grep {u} /proc/mounts and umount what is listed (never rm -rf a mounted volume: it deletes the \
                 volume's data); then ls -la {root}/pods/{u}/ and remove what is left by hand{}",
                if left.is_empty() {
                    String::new()
                } else {
                    " (the paths in the evidence)".to_string()
                },
                u = sh(uid.trim_end_matches('…'))
            ),
        );
        f.pod = Some(PodRef {
            namespace: String::new(),
            name: String::new(),
            uid: uid.clone(),
        });
        if full {
            f.path = Some(format!("{root}/pods/{uid}"));
        }
        for p in &left {
            f.evidence.push(Evidence::new(
                EvidenceSource::KubeletLog,
                format!("left: {p}"),
            ));
        }
        let mut quoted: Vec<&LoggedEvent> = unreconstructed;
        quoted.extend(cleaned);
        quoted.extend(group.iter().copied());
        f.evidence.extend(quote(&quoted));
        out.push(f);
    }
}

// === MirrorPodRecreateLoop, MirrorPodCreateFailed ===

/// `kubelet.go` `syncPod` deletes a mirror pod that is not `IsMirrorPodOf` its static pod
/// ("Deleted mirror pod because it is outdated"; before 1.21 "Deleted mirror pod "<name>_<ns>
/// (<uid>)" because it is outdated", earlier "Deleting mirror pod …") and `mirror_client.go`
/// `CreateMirrorPod` recreates it: two deletions of one pod within a minute are a loop
/// (warning); a single one is the normal follow-up of a manifest edit (info). The API may refuse
/// the creation ("Failed creating a mirror pod": forbidden, AlreadyExists).
fn mirror_pods(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let mut deleted: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    let mut refused: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.all {
        let Some(key) = pod_name_key(e) else { continue };
        match e.event.kind {
            EventKind::MirrorPodOutdatedDeleted => deleted.entry(key).or_default().push(e),
            EventKind::MirrorPodCreateFailed => refused.entry(key).or_default().push(e),
            _ => {}
        }
    }
    for (pod, mut group) in deleted {
        group.sort_by_key(|e| e.event.time);
        let looping = group
            .windows(2)
            .any(|w| match (w[0].event.time, w[1].event.time) {
                (Some(a), Some(b)) => b.duration_since(a) <= MIRROR_LOOP,
                _ => false,
            })
            || (group.len() >= 3 && group.iter().all(|e| e.event.time.is_none()));
        let mut mirror_uids: Vec<String> = Vec::new();
        for u in group.iter().filter_map(|e| own_uid(e)) {
            if !mirror_uids.contains(&u) {
                mirror_uids.push(u);
            }
        }
        let uids = if mirror_uids.is_empty() {
            String::new()
        } else {
            format!(" (mirror UIDs {})", mirror_uids.join(" → "))
        };
        let mut target = split_pod(&pod);
        target.uid = static_uid(logs, &pod).unwrap_or_default();
        let (ns, name) = (sh(&target.namespace), sh(&target.name));
        let mut f = if looping {
            finding(
                FindingKind::MirrorPodRecreateLoop,
                Severity::Warning,
                format!(
                    "mirror pod {pod} was deleted as outdated {} in {}{uids}: a delete and recreate loop",
                    plural(group.len(), "time", "times"),
                    human(span(&group))
                ),
                "kubelet.go syncPod: a mirror pod that is not IsMirrorPodOf the static pod (its \
                 kubernetes.io/config.mirror differs from the static pod's config hash, or it is being deleted) \
                 is deleted and recreated; a loop means each new mirror is judged outdated again (two kubelets \
                 or two manifests with one pod name, or an admission webhook mutating it)",
                format!(
                    "kubectl get pod -n {ns} {name} -o yaml | grep config.mirror and compare it with the static \
                     pod's config.hash (crictl inspectp); look for a mutating webhook on {ns}, a second manifest \
                     or a second node with the name of this one"
                ),
            )
        } else {
            finding(
                FindingKind::MirrorPodRecreateLoop,
                Severity::Info,
                format!(
                    "mirror pod {pod} was deleted as outdated {}{uids}: normal after an edit of the static pod's \
                     manifest; a loop if it repeats",
                    if group.len() == 1 {
                        "once".to_string()
                    } else {
                        format!("{} times, more than a minute apart", group.len())
                    }
                ),
                "kubelet.go syncPod: a mirror pod that is not IsMirrorPodOf the static pod is deleted and \
                 recreated, as after every change of the manifest",
                format!(
                    "none; if it repeats: kubectl get pod -n {ns} {name} -o yaml | grep config.mirror"
                ),
            )
        };
        f.pod = Some(target);
        f.evidence = quote(&group);
        out.push(f);
    }
    for (pod, mut group) in refused {
        group.sort_by_key(|e| e.event.time);
        let cause = group.iter().rev().find_map(|e| e.event.cause);
        // The structured message (klog text or JSON: kubelet 1.21 and later, which deletes an
        // outdated mirror pod itself) can be the start race; the legacy form stays a warning, as
        // a one-line excerpt of an older kubelet cannot tell it from one that never replaces a
        // stale mirror pod (k/k #6580).
        let structured = group
            .iter()
            .all(|e| e.text.contains("\"Failed creating a mirror pod\""));
        if cause == Some(Cause::AlreadyExists) && structured && !refused_again(&group) {
            out.push(mirror_start_race(logs, &pod, &group));
            continue;
        }
        let why = match cause {
            Some(Cause::Forbidden) => {
                "forbidden (NodeRestriction, or the namespace is missing or terminating)"
            }
            Some(Cause::AlreadyExists) => {
                "a pod of that name already exists (a stale mirror pod with another hash)"
            }
            _ => "refused by the API server",
        };
        let mut target = split_pod(&pod);
        target.uid = static_uid(logs, &pod).unwrap_or_default();
        let mut f = finding(
            FindingKind::MirrorPodCreateFailed,
            Severity::Warning,
            format!(
                "the API server refuses the mirror pod of static pod {pod}: {why} ({}{})",
                plural(group.len(), "record", "records"),
                over(&group)
            ),
            "pod/mirror_client.go CreateMirrorPod: the kubelet creates a mirror pod for every static pod; on \
             AlreadyExists it accepts the existing pod only if its config.mirror matches (older kubelets \
             never replace it, k/k #6580)",
            match cause {
                Some(Cause::AlreadyExists) => format!(
                    "kubectl delete pod -n {} {} --grace-period=0 (the stale mirror pod) so the kubelet recreates it",
                    sh(&target.namespace),
                    sh(&target.name)
                ),
                _ => format!(
                    "kubectl get ns {}; check the kubelet's RBAC and the NodeRestriction admission plugin",
                    sh(&target.namespace)
                ),
            },
        );
        f.pod = Some(target);
        f.evidence = quote(&group);
        out.push(f);
    }
}

/// How soon a second AlreadyExists refusal of one mirror pod shows the kubelet does not take the
/// existing pod for its mirror pod: it retries at every `syncPod` (`syncFrequency`, 1 minute by
/// default, plus jitter), while after a start its pod informer delivers the surviving mirror pod
/// within seconds.
const MIRROR_REFUSED_AGAIN: SignedDuration = SignedDuration::from_mins(3);

/// Whether two refusals of the group are at most [`MIRROR_REFUSED_AGAIN`] apart (or, without
/// times, whether there are three or more).
fn refused_again(group: &[&LoggedEvent]) -> bool {
    group
        .windows(2)
        .any(|w| match (w[0].event.time, w[1].event.time) {
            (Some(a), Some(b)) => b.duration_since(a) <= MIRROR_REFUSED_AGAIN,
            _ => false,
        })
        || (group.len() >= 3 && group.iter().all(|e| e.event.time.is_none()))
}

/// A single AlreadyExists for a mirror pod (per kubelet start) from a kubelet that logs structured
/// messages (1.21 and later): `tryReconcileMirrorPods` calls
/// `CreateMirrorPod` before the pod informer has delivered the mirror pod that survived the
/// restart, and `CreateMirrorPod`'s hash check reads the empty object `Create` returns with the
/// error, so it reports AlreadyExists even for a matching mirror pod (mirror_client.go, seen after
/// every restart of the real kubelet v1.34.4). Info.
fn mirror_start_race(logs: &Logs<'_>, pod: &str, group: &[&LoggedEvent]) -> Finding {
    let mut target = split_pod(pod);
    target.uid = static_uid(logs, pod).unwrap_or_default();
    let mut f = finding(
        FindingKind::MirrorPodCreateFailed,
        Severity::Info,
        format!(
            "the kubelet's creation of the mirror pod of static pod {pod} met the existing one \
             (AlreadyExists, {}, never twice within {}): the start race of a kubelet restart, benign",
            plural(group.len(), "record", "records"),
            human(MIRROR_REFUSED_AGAIN)
        ),
        "kubelet.go tryReconcileMirrorPods and pod/mirror_client.go CreateMirrorPod: after a kubelet \
         start the mirror pod is created before the pod informer has delivered the one that exists, \
         and CreateMirrorPod compares the hash on the empty object Create returns with the error, so \
         the refusal is logged even when the existing mirror pod matches; once the informer has it, \
         the kubelet stops creating",
        format!(
            "none; if it repeats at every sync, the pod of that name is not this static pod's \
             mirror pod: kubectl get pod -n {} {} -o yaml | grep config.mirror",
            sh(&target.namespace),
            sh(&target.name)
        ),
    );
    f.pod = Some(target);
    f.evidence = quote(group);
    f
}

/// The static UID (32-hex config hash) the logs name for `ns/name`, if any.
fn static_uid(logs: &Logs<'_>, pod: &str) -> Option<String> {
    logs.uids
        .get(pod)?
        .iter()
        .find(|u| u.len() == 32 && is_pod_uid(u))
        .cloned()
}

fn split_pod(key: &str) -> PodRef {
    match key.split_once('/') {
        Some((ns, name)) => PodRef {
            namespace: ns.to_string(),
            name: name.to_string(),
            uid: String::new(),
        },
        None => PodRef {
            namespace: String::new(),
            name: key.to_string(),
            uid: String::new(),
        },
    }
}

// === StuckPodWorker ===

/// 1.22 to 1.26 pod workers (`pod_workers.go`):
/// - "Pod worker has been requested for removal but is still not fully terminated" repeating
///   (3 times or more) for one UID;
/// - "Pod has been terminated and is no longer known to the kubelet, remove all history"
///   followed within 2 s by "Pod is orphaned and must be torn down" for the same UID (k/k
///   #107730);
/// - a static pod REMOVEd from its source and ADDed again with the same UID (an unchanged
///   manifest put back) that starts no container within a minute while the log goes on (the
///   1.22.0/1.22.1 regression, k/k #104648: the worker still holds the terminated UID). The
///   UIDs come from the SyncLoop lines (legacy) or the nearest lines naming the pod.
///
/// Not a finding: the re-added pod starting a container; a re-add with another UID (the manifest
/// changed); a log that ends before the minute is up.
fn stuck_pod_workers(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let all = logs.all;
    let mut by_uid: BTreeMap<String, (Vec<&LoggedEvent>, &'static str)> = BTreeMap::new();
    let mut not_terminated: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    let mut worker: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in all {
        let Some(uid) = own_uid(e) else { continue };
        match e.event.kind {
            EventKind::PodWorkerNotTerminated => not_terminated.entry(uid).or_default().push(e),
            EventKind::RemoveAllHistory
            | EventKind::PodOrphanedTornDown
            | EventKind::PodSyncedFirstTime => worker.entry(uid).or_default().push(e),
            _ => {}
        }
    }
    for (uid, group) in not_terminated {
        if group.len() >= 3 {
            by_uid.insert(
                uid,
                (
                    group,
                    "\"Pod worker has been requested for removal but is still not fully terminated\" repeating",
                ),
            );
        }
    }
    for (uid, group) in worker {
        let race = group.iter().any(|h| {
            h.event.kind == EventKind::RemoveAllHistory
                && group.iter().any(|o| {
                    o.event.kind == EventKind::PodOrphanedTornDown
                        && matches!((h.event.time, o.event.time),
                            (Some(a), Some(b)) if b >= a && b.duration_since(a) <= SignedDuration::from_secs(2))
                })
        });
        if race {
            by_uid.entry(uid).or_insert((
                group,
                "\"remove all history\" then \"Pod is orphaned and must be torn down\" (k/k #107730)",
            ));
        }
    }
    // Static pod removed and re-added with the same UID.
    let end = all.iter().filter_map(|e| e.event.time).max();
    let static_op = |e: &LoggedEvent, op: SyncOp| {
        e.event.kind == EventKind::SyncLoop(op)
            && matches!(
                e.event.config_source,
                Some(ConfigSource::File | ConfigSource::Http)
            )
    };
    let adds = logs
        .by_kind
        .get(&EventKind::SyncLoop(SyncOp::Add))
        .map_or(&[][..], Vec::as_slice);
    for &i in adds {
        let add = &all[i];
        if !static_op(add, SyncOp::Add) {
            continue;
        }
        let Some(name) = pod_name_key(add) else {
            continue;
        };
        let Some(remove) = all[..i]
            .iter()
            .rev()
            .find(|e| static_op(e, SyncOp::Remove) && pod_name_key(e).as_ref() == Some(&name))
        else {
            continue;
        };
        let names = |e: &LoggedEvent| pod_name_key(e).as_ref() == Some(&name);
        let uid_before = own_uid(remove)
            .or_else(|| all[..i].iter().rev().filter(|e| names(e)).find_map(own_uid));
        let uid_after =
            own_uid(add).or_else(|| all[i + 1..].iter().filter(|e| names(e)).find_map(own_uid));
        let (Some(before), Some(uid)) = (uid_before, uid_after) else {
            continue;
        };
        if before != uid {
            continue;
        }
        let started = logs
            .of(&[EventKind::Pleg(crate::logs::PlegType::ContainerStarted)])
            .any(|e| own_uid(e).as_deref() == Some(uid.as_str()) && after(e, add));
        let waited = match (add.event.time, end) {
            (Some(t), Some(end)) => end.duration_since(t) >= READD_START,
            _ => false,
        };
        if started || !waited {
            continue;
        }
        by_uid.entry(uid).or_insert((
            vec![remove, add],
            "static pod removed and re-added with the same UID; it starts no container (1.22.0 and 1.22.1, k/k \
             #104648, fixed in 1.22.2)",
        ));
    }
    for (uid, (group, signature)) in by_uid {
        let sandbox = view
            .cri
            .iter()
            .flat_map(|c| c.sandboxes.iter())
            .filter(|s| s.pod.uid == uid)
            .max_by_key(|s| s.created_at);
        let pod = logs.pod_of(view, &group, None, Some(&uid));
        let mut f = finding(
            FindingKind::StuckPodWorker,
            Severity::Warning,
            format!(
                "the kubelet's pod worker for pod{} is stuck: {signature}{}",
                of_pod(pod.as_ref()).trim_start_matches(" of pod"),
                sandbox.map_or(String::new(), |s| format!(
                    "; it holds sandbox {} ({})",
                    short(&s.id),
                    s.state.cri_name()
                ))
            ),
            "pod_workers.go (1.22 to 1.26): a pod worker that never reaches terminated keeps the pod's sandbox \
             and blocks a pod with the same UID from starting; the kubelet's GC does not try to remove its \
             sandbox (k/k #107730, #104648; fixed in 1.27)",
            format!(
                "systemctl restart kubelet (a restart rebuilds the pod workers); upgrade the kubelet to 1.27 or \
                 later{}",
                sandbox.map_or(String::new(), |s| format!(
                    "; the sandbox: crictl stopp {id} && crictl rmp {id}",
                    id = sh(&s.id)
                ))
            ),
        );
        f.pod = pod;
        f.sandbox_id = sandbox.map(|s| s.id.clone());
        f.evidence = quote(&group);
        out.push(f);
    }
}

// === StaticPodRemovalBlocked ===

/// `kubelet.go` `HandlePodRemoves` / housekeeping: "skipping delete because sources aren't ready
/// yet" (the API source has not synced, usually an unreachable API server).
fn static_pod_removal_blocked(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let group: Vec<&LoggedEvent> = logs
        .all
        .iter()
        .filter(|e| {
            matches!(
                e.event.kind,
                EventKind::SkippingDeleteSourcesNotReady
                    | EventKind::HousekeepingSkippedSourcesNotReady
            )
        })
        .collect();
    if group.is_empty() {
        return;
    }
    let mut f = finding(
        FindingKind::StaticPodRemovalBlocked,
        Severity::Warning,
        format!(
            "the kubelet skips pod removal and housekeeping because its config sources are not ready ({}{})",
            plural(group.len(), "record", "records"),
            over(&group)
        ),
        "kubelet.go HandlePodRemoves and syncLoopIteration: until every config source (file, http, api) has \
         synced, removals are skipped (\"skipping delete because sources aren't ready yet\") so a removed static \
         pod keeps running",
        "check the kubelet's connection to the API server (journalctl -u kubelet | grep -i -e 'connection refused' \
         -e Unauthorized); once the API source syncs the removal proceeds"
            .to_string(),
    );
    f.pod = logs.pod_of(&NodeView::empty(), &group, None, None);
    f.evidence = quote(&group);
    out.push(f);
}

// === RuntimeUnhealthy ===

/// A Go duration (`16h14m34.439643899s`, `3m0s`) in seconds.
fn go_duration_secs(s: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut num = String::new();
    let mut any = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600.0,
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                0.001
            }
            'm' => 60.0,
            's' => 1.0,
            _ => return None,
        };
        total += num.parse::<f64>().ok()? * unit;
        num.clear();
        any = true;
    }
    (any && num.is_empty()).then_some(total)
}

/// "pleg was last seen active <duration> ago", the longest in the group.
fn pleg_inactive(group: &[&LoggedEvent]) -> Option<SignedDuration> {
    group
        .iter()
        .filter_map(|e| {
            let t = &e.text;
            let at = t.find("last seen active ")? + "last seen active ".len();
            let d = t[at..].split(' ').next()?;
            go_duration_secs(d)
        })
        .max_by(f64::total_cmp)
        .map(SignedDuration::from_secs_f64)
}

/// How long `pleg/generic.go` `Healthy` tolerates a PLEG that has not relisted
/// (`relistThreshold`).
const PLEG_RELIST_THRESHOLD: SignedDuration = SignedDuration::from_mins(3);
/// The gap that ends a run of "pleg has yet to be successful" records: the kubelet's `syncLoop`
/// logs one at least every 5 s (its backoff) while the PLEG has not relisted.
const PLEG_STARTUP_GAP: SignedDuration = SignedDuration::from_secs(30);

/// Drops the "pleg has yet to be successful" records of a kubelet start: `Healthy` returns that
/// error until the PLEG's first relist, so every start logs it for a moment (seen on the real
/// kubelet v1.34.4). A run of them (no gap over [`PLEG_STARTUP_GAP`]) counts only when it lasts
/// [`PLEG_RELIST_THRESHOLD`]: a PLEG that never relists. Other PLEG records always count.
fn without_startup_pleg(pleg: Vec<&LoggedEvent>) -> Vec<&LoggedEvent> {
    let startup = |e: &LoggedEvent| e.text.contains("pleg has yet to be successful");
    let mut starts: Vec<&LoggedEvent> = pleg.iter().copied().filter(|e| startup(e)).collect();
    starts.sort_by_key(|e| e.event.time);
    let span = |a: &LoggedEvent, b: &LoggedEvent| match (a.event.time, b.event.time) {
        (Some(a), Some(b)) => b.duration_since(a),
        _ => SignedDuration::ZERO,
    };
    // Runs of records with no gap over PLEG_STARTUP_GAP, as index ranges into `starts`.
    let mut kept: Vec<&LoggedEvent> = Vec::new();
    let mut first = 0;
    for i in 0..starts.len() {
        let ends = i + 1 == starts.len() || span(starts[i], starts[i + 1]) > PLEG_STARTUP_GAP;
        if ends {
            if span(starts[first], starts[i]) >= PLEG_RELIST_THRESHOLD {
                kept.extend(&starts[first..=i]);
            }
            first = i + 1;
        }
    }
    pleg.into_iter()
        .filter(|e| !startup(e) || kept.iter().any(|k| std::ptr::eq(*k, *e)))
        .collect()
}

/// `kubelet.go` `syncLoop` with `pleg/generic.go` `Healthy`: "Skipping pod synchronization" with
/// "PLEG is not healthy" or "container runtime is down": no pod on the node is started, stopped
/// or removed. Critical. The CRI calls timing out at the same time (`ListContainers`,
/// `ListPodSandbox`, `Status` with DeadlineExceeded) are its evidence; on their own they are not
/// a finding.
fn runtime_unhealthy(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let pleg: Vec<&LoggedEvent> = logs
        .all
        .iter()
        .filter(|e| e.event.kind == EventKind::PlegUnhealthy)
        .collect();
    let pleg = without_startup_pleg(pleg);
    if pleg.is_empty() {
        return;
    }
    let timeouts: Vec<&LoggedEvent> = logs
        .all
        .iter()
        .filter(|e| {
            e.event.kind == EventKind::RuntimeCallFailed && e.event.cause == Some(Cause::Timeout)
        })
        .collect();
    let down = pleg
        .iter()
        .any(|e| e.text.contains("container runtime is down"));
    let mut all: Vec<&LoggedEvent> = pleg.iter().chain(timeouts.iter()).copied().collect();
    all.sort_by_key(|e| e.event.time);
    let mut f = finding(
        FindingKind::RuntimeUnhealthy,
        Severity::Critical,
        format!(
            "PLEG is not healthy{}{}{}: the kubelet starts, stops and removes no pod on this node ({}{})",
            pleg_inactive(&pleg).map_or(String::new(), |d| format!(
                " (last active {} ago)",
                human(d)
            )),
            if down {
                " and the container runtime is down"
            } else {
                ""
            },
            if timeouts.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} to the runtime timed out",
                    plural(timeouts.len(), "call", "calls")
                )
            },
            plural(all.len(), "record", "records"),
            over(&all)
        ),
        "kubelet.go syncLoop and pleg/generic.go Healthy: when the PLEG has not relisted within 3 minutes the \
         kubelet skips every pod sync and the node goes NotReady",
        "crictl info and crictl ps (does the runtime answer?); journalctl -u containerd for hung shims or \
         storage errors; systemctl restart containerd"
            .to_string(),
    );
    f.evidence = quote(&all);
    out.push(f);
}

// === LeakedSandbox (name reserved) ===

/// containerd's CRI plugin (`sandbox_run.go`, `RunPodSandbox`): "failed to reserve sandbox name
/// "<name>_<ns>_<uid>_<attempt>": name "…" is reserved for "<id>"": a dead sandbox (typically
/// reloaded after an unclean restart, containerd/cri #1014) keeps the pod's sandbox name and no
/// new sandbox of the pod can be created. Reported as that sandbox's `LeakedSandbox`.
///
/// Not a finding: a reserving sandbox the CRI view no longer lists.
fn sandbox_name_reserved(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs
        .all
        .iter()
        .filter(|e| e.event.kind == EventKind::SandboxNameReserved)
    {
        if let Some(id) = logs.sandbox_key(e) {
            groups.entry(id).or_default().push(e);
        }
    }
    for (id, group) in groups {
        if let Some(cri) = &view.cri
            && !id.ends_with('…')
            && !cri.sandboxes.iter().any(|s| s.id == id)
        {
            continue;
        }
        let pod = logs.pod_of(view, &group, Some(&id), None);
        let mut f = finding(
            FindingKind::LeakedSandbox,
            Severity::Warning,
            format!(
                "pod sandbox {}{} keeps the pod's sandbox name reserved, so no new sandbox of the pod can be \
                 created (\"failed to reserve sandbox name\", {}{})",
                shown(&id),
                of_pod(pod.as_ref()),
                plural(group.len(), "record", "records"),
                over(&group)
            ),
            "containerd CRI RunPodSandbox reserves the name <name>_<namespace>_<uid>_<attempt> for the sandbox \
             that holds it; a dead sandbox reloaded after an unclean restart keeps it until it is removed, and \
             every RunPodSandbox of the pod fails (containerd/cri #1014)",
            format!(
                "crictl inspectp {id} (its state); crictl stopp {id} && crictl rmp {id} frees the name and the \
                 kubelet then creates the pod's sandbox",
                id = sh(id.trim_end_matches('…'))
            ),
        );
        f.pod = pod;
        f.sandbox_id = Some(id);
        f.evidence = quote(&group);
        out.push(f);
    }
}

// === StaticPodRemoved ===

/// `config/file.go` (and `config/http.go`): a static pod whose manifest left the directory is
/// REMOVEd (`SyncLoop REMOVE source="file"`; legacy `SyncLoop (REMOVE, "file")`), its pod
/// worker kills it with the pod's grace period and housekeeping deletes its mirror pod
/// (`kubelet_pods.go` `HandlePodCleanups`, `mirror_client.go` "Deleting a mirror pod"). A
/// lifecycle note (info), saying when the mirror pod went; kubelets before the graceful static
/// pod deletion (k/k #90999, #98103) delete it at once, before the containers have stopped.
///
/// Not reported when a finding about the same pod says more (`StaticPodNotRemoved`,
/// `StuckPodWorker`).
fn static_pod_removed(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let mut done: BTreeSet<String> = BTreeSet::new();
    for remove in logs.of(&[EventKind::SyncLoop(SyncOp::Remove)]).filter(|e| {
        matches!(
            e.event.config_source,
            Some(ConfigSource::File | ConfigSource::Http)
        )
    }) {
        let Some(name) = pod_name_key(remove) else {
            continue;
        };
        if !done.insert(name.clone()) {
            continue;
        }
        let uid = own_uid(remove)
            .or_else(|| static_uid(logs, &name))
            .or_else(|| {
                logs.all
                    .iter()
                    .filter(|e| pod_name_key(e).as_ref() == Some(&name) && !after(remove, e))
                    .find_map(own_uid)
            });
        let mut pod = split_pod(&name);
        pod.uid = uid.clone().unwrap_or_default();
        let told = out.iter().any(|f| {
            matches!(
                f.kind,
                FindingKind::StaticPodNotRemoved | FindingKind::StuckPodWorker
            ) && f.pod.as_ref().is_some_and(|p| {
                (!p.uid.is_empty() && p.uid == pod.uid)
                    || (p.namespace == pod.namespace && p.name == pod.name)
            })
        });
        if told {
            continue;
        }
        let later = |e: &LoggedEvent| !after(remove, e);
        let mirror_deleted = logs
            .of(&[EventKind::MirrorPodDeleting])
            .find(|e| pod_name_key(e).as_ref() == Some(&name) && later(e));
        let mirror_api: Vec<&LoggedEvent> = logs
            .of(&[
                EventKind::SyncLoop(SyncOp::Delete),
                EventKind::SyncLoop(SyncOp::Remove),
            ])
            .filter(|e| {
                e.event.config_source == Some(ConfigSource::Api)
                    && pod_name_key(e).as_ref() == Some(&name)
                    && later(e)
            })
            .collect();
        let pending = logs
            .of(&[EventKind::OrphanedPodPendingVolumes])
            .filter(|e| uid.is_some() && own_uid(e) == uid && later(e));
        let mirror_uid = mirror_api
            .iter()
            .filter_map(|e| own_uid(e))
            .find(|u| Some(u) != uid.as_ref());
        let mirror_note = match mirror_deleted {
            Some(m) => {
                let dt = match (remove.event.time, m.event.time) {
                    (Some(a), Some(b)) => Some(b.duration_since(a)),
                    _ => None,
                };
                let early = dt.is_some_and(|d| d < SignedDuration::from_secs(30));
                format!(
                    "; its mirror pod{} was deleted{}{}",
                    mirror_uid
                        .as_deref()
                        .map_or(String::new(), |u| format!(" (API UID {u})")),
                    dt.map_or(String::new(), |d| format!(" {} later", dur(d))),
                    if early {
                        ", before the containers' grace period could run out (k/k #90999: older kubelets \
                         delete it without waiting)"
                    } else {
                        ""
                    }
                )
            }
            None => String::new(),
        };
        let source = match remove.event.config_source {
            Some(ConfigSource::Http) => "http",
            _ => "file",
        };
        let mut f = finding(
            FindingKind::StaticPodRemoved,
            Severity::Info,
            format!(
                "static pod {name}{} was removed from its {source} source{}{mirror_note}",
                uid.as_deref().map_or(String::new(), |u| format!(" ({u})")),
                remove
                    .event
                    .time
                    .map_or(String::new(), |t| format!(" at {t}")),
            ),
            "config/file.go: a static pod whose manifest left the directory is REMOVEd; its pod worker kills it \
             with the pod's grace period and housekeeping deletes its mirror pod (kubelet_pods.go \
             HandlePodCleanups); graceful static pod deletion came with k/k #98103",
            format!(
                "none if the manifest was removed on purpose (otherwise put it back); if its containers still run \
                 after the grace period: crictl pods --name {} (that is StaticPodNotRemoved)",
                sh(&pod.name)
            ),
        );
        f.pod = Some(pod);
        let mut quoted: Vec<&LoggedEvent> = vec![remove];
        quoted.extend(mirror_deleted);
        quoted.extend(pending);
        quoted.extend(mirror_api);
        f.evidence = quote(&quoted);
        out.push(f);
    }
}

// === enrichment ===

/// Adds to every `LeakedSandbox` what the logs say of it: the kubelet's GC trying and failing
/// (stop errors, with their cause) or not trying (a stuck pod worker), because the remedies differ.
pub fn enrich(findings: &mut [Finding], events: &[LoggedEvent]) {
    if !findings
        .iter()
        .any(|f| f.kind == FindingKind::LeakedSandbox)
    {
        return;
    }
    let logs = Logs::new(events);
    let all_failures: Vec<&LoggedEvent> = events
        .iter()
        .filter(|e| e.event.kind.is_failure())
        .collect();
    for f in findings
        .iter_mut()
        .filter(|f| f.kind == FindingKind::LeakedSandbox)
    {
        let Some(id) = f.sandbox_id.clone() else {
            continue;
        };
        let uid = f.pod.as_ref().map(|p| p.uid.clone()).unwrap_or_default();
        let failures: Vec<&LoggedEvent> = all_failures
            .iter()
            .copied()
            .filter(|e| {
                logs.sandbox_key(e)
                    .is_some_and(|k| k == id || id.starts_with(k.trim_end_matches('…')))
            })
            .collect();
        let stuck = logs
            .of(&[EventKind::PodWorkerNotTerminated])
            .any(|e| e.event.ids.pod_uid.as_deref() == Some(uid.as_str()));
        if let Some((cause, said)) = best_cause(&failures) {
            let (class, fix) = failure_class(cause, said, Some(&id));
            f.evidence.push(Evidence::new(
                source_of(failures[0]),
                format!(
                    "the kubelet's GC is trying and failing: {} failure records, cause {class}",
                    failures.len()
                ),
            ));
            f.evidence.extend(quote(&failures));
            f.remediation = format!("{fix}; GC then removes it by itself. {}", f.remediation);
        } else if stuck {
            f.evidence.push(Evidence::new(
                EvidenceSource::KubeletLog,
                format!("the kubelet's GC is not trying: the pod worker of {uid} is stuck (\"still not fully terminated\")"),
            ));
            f.remediation = format!(
                "systemctl restart kubelet (a stuck pod worker holds it); {}",
                f.remediation
            );
        } else {
            f.evidence.push(Evidence::new(
                EvidenceSource::KubeletLog,
                "no stop or removal attempt for this sandbox in the logs read (the GC logs \"Removing sandbox\" only \
                 at -v=4; failures at every level)",
            ));
        }
    }
}

#[cfg(test)]
mod tests;
