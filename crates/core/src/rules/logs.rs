//! The log side of the rules: the index of log events every log rule reads ([`Logs`]), the
//! correlation helpers, and [`diagnose_with_logs`]. The log rules themselves live in one file per
//! finding family beside this one. Diagnosis rules over kubelet and runtime log events say what the logs say that the CRI, API and
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

use std::collections::{BTreeSet, HashMap, HashSet};

/// The maps of the log index: keyed on IDs and names borrowed from the events, hashed with
/// foldhash (SipHash was a tenth of a troubled node's rule time; no key here comes from an
/// adversary who could aim at collisions more than a log line already can).
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

use jiff::{SignedDuration, Timestamp};

pub use crate::event::{LogKind, LoggedEvent};
use crate::finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
use crate::logs::{Component, EventKind, IdKind, SyncOp};
use crate::model::{NodeView, PodRef};
use crate::rules::{Config, Diagnosis, SkippedRule, diagnose, human, short};

pub use super::leaked_sandbox::enrich;
use super::leaked_sandbox::enrich_with;
pub(crate) use super::registry::LogInput;
use super::registry::{RULES, Run};

/// How many evidence lines of one group a finding quotes (first ones and the last).
pub(super) const MAX_QUOTED: usize = 4;
/// Records of one file at most this far apart can be one logical event: a failure logged by the
/// runtime, the CRI client and the caller within microseconds, or a burst of lookups.
pub(super) const SAME_EVENT: SignedDuration = SignedDuration::from_secs(1);
pub(super) use crate::event::ONE_ATTEMPT;
/// A removed container still looked up over longer than this is a stale reference, not the
/// deletion race.
pub(super) const RACE_LASTS: SignedDuration = SignedDuration::from_secs(600);
/// Two "outdated" deletions of one mirror pod at most this far apart are a loop.
pub(super) const MIRROR_LOOP: SignedDuration = SignedDuration::from_secs(60);
/// How long a re-added static pod gets to start a container before its worker counts as stuck.
pub(super) const READD_START: SignedDuration = SignedDuration::from_secs(60);

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
    diagnose_with_logs_until(view, events, None, config, now)
}

/// [`diagnose_with_logs`], told when the kubelet's log ends: the time of its last record,
/// classified or not (`podcoroner_logs::LogRead::span`), so that a rule can see the kubelet
/// logging on after its last failure though nothing it logged after is an event (a kubelet
/// that exited, then started and ran: `KubeletStartFailing`). `None`: the last event's time.
pub fn diagnose_with_logs_until(
    view: &NodeView,
    events: &[LoggedEvent],
    kubelet_log_end: Option<Timestamp>,
    config: &Config,
    now: Timestamp,
) -> Diagnosis {
    let mut d = diagnose(view, config, now);
    if events.is_empty() {
        d.startup = super::pod_startup::startup_breakdowns(view, events);
        return d;
    }
    // One index of the events for every log rule and the enrichment.
    let mut logs = Logs::new(events);
    logs.kubelet_log_end = kubelet_log_end;
    let (from_logs, startup) = run_log_rules(&logs, view, config, now);
    d.startup = startup;
    enrich_with(&mut d.findings, &logs);
    // The index is freed before the sort, whose scratch (half of a long list) would otherwise
    // add to it at the peak of a log of fresh IDs.
    drop(logs);
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
    run_log_rules(&Logs::new(events), view, config, now).0
}

/// Every log rule of [`RULES`] over `logs`, in its order; the findings, and the startup
/// breakdowns `SlowPodStartup` made.
fn run_log_rules(
    logs: &Logs<'_>,
    view: &NodeView,
    config: &Config,
    now: Timestamp,
) -> (Vec<Finding>, Vec<crate::startup::Breakdown>) {
    let input = LogInput {
        logs,
        view,
        config,
        now,
        startup: std::cell::OnceCell::new(),
    };
    let mut out = Vec::new();
    for rule in RULES {
        if let Run::Logs(run) = rule.run {
            run(&input, &mut out);
        }
    }
    (out, input.startup.into_inner().unwrap_or_default())
}

/// Adds `from_logs` to `findings`; one restating a finding already there adds its evidence.
pub(super) fn merge(findings: &mut Vec<Finding>, from_logs: Vec<Finding>) {
    if findings.is_empty() {
        // Nothing to restate (an offline diagnosis): the log findings are the findings, with
        // no second list of them to grow.
        *findings = from_logs;
        return;
    }
    let n_state = findings.len();
    for f in from_logs {
        match findings[..n_state].iter_mut().find(|s| same_subject(s, &f)) {
            Some(s) => s.evidence.extend(f.evidence),
            None => findings.push(f),
        }
    }
}

pub(super) fn same_subject(state: &Finding, log: &Finding) -> bool {
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

/// Which side of a record its neighbours are read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Before it in its file.
    Before,
    /// After it in its file.
    After,
}

/// A pod as a line names it: namespace (when given) and name.
pub(crate) type NameKey<'a> = (Option<&'a str>, &'a str);

/// The events with what they say about identities, and the positions of the events of each
/// entity: built once per diagnosis, in one pass, borrowing every key from the events (no string
/// is copied per event). A rule reads the records of the entities it judges, so each rule is
/// linear in the records of its entity.
pub(crate) struct Logs<'a> {
    /// Every event, in the order read (file order within each file).
    pub(super) all: &'a [LoggedEvent],
    /// Pod UID → (namespace, name), from lines naming both.
    pub(super) names: FastMap<&'a str, (&'a str, &'a str)>,
    /// (namespace, name) → the UIDs named with it, in the order seen (a static pod's config hash,
    /// its mirror pods' API UIDs).
    pub(super) uids: FastMap<(&'a str, &'a str), Vec<&'a str>>,
    /// Container ID → pod UID.
    pub(super) container_pod: FastMap<&'a str, &'a str>,
    /// Sandbox ID → pod UID.
    pub(super) sandbox_pod: FastMap<&'a str, &'a str>,
    /// Every full sandbox and container ID named anywhere (to complete cut ones).
    pub(super) full_ids: BTreeSet<&'a str>,
    /// Every pod UID named anywhere.
    pub(super) all_uids: BTreeSet<&'a str>,
    /// The positions of the events of each kind, in reading order (the rules look at a few kinds
    /// per finding; a node's log holds millions of records).
    pub(super) by_kind: FastMap<EventKind, Vec<usize>>,
    /// The positions of the events that name each pod UID as their own ([`own_uid`]).
    pub(super) by_uid: FastMap<&'a str, Vec<usize>>,
    /// The positions of the events whose first pod is this one ([`pod_name_key`]).
    pub(super) by_name: FastMap<NameKey<'a>, Vec<usize>>,
    /// The first container runtime (containerd, CRI-O, dockerd) whose own records the logs hold.
    pub(super) runtime: Option<crate::logs::Component>,
    /// When the kubelet's log ends, classified record or not ([`diagnose_with_logs_until`]);
    /// `None`: not told.
    pub(super) kubelet_log_end: Option<Timestamp>,
    /// The latest time among the kubelet's own events ([`is_kubelet_own`]), read once here:
    /// [`kubelet_log_end`] is asked once per pod a rule judges.
    kubelet_last_event: Option<Timestamp>,
    /// Per pod name, its `SyncLoop DELETE` and `REMOVE` records' latest time and whether one
    /// has none: [`going_away`] asks it once per pod a rule judges, and a name's records grow
    /// with the log (a StatefulSet's pod, a static pod, the bench's repeated cases).
    name_gone: FastMap<NameKey<'a>, (Option<Timestamp>, bool)>,
}

/// When the kubelet's log ends: the later of its last event (not a runtime's, from a runtime
/// log given beside) and [`Logs::kubelet_log_end`] (its last record, classified or not).
pub(super) fn kubelet_log_end(logs: &Logs<'_>) -> Option<Timestamp> {
    logs.kubelet_last_event.max(logs.kubelet_log_end)
}

/// Whether `e` is the kubelet's own record: read from the kubelet's log and not a runtime's
/// (a runtime logging to the same journal unit or file).
fn is_kubelet_own(e: &LoggedEvent) -> bool {
    e.log == crate::event::LogKind::Kubelet
        && !matches!(
            e.event.component,
            Some(Component::Containerd | Component::Crio | Component::Docker)
        )
}

/// Whether the kubelet's log ([`kubelet_log_end`]) goes on more than `gap` after the last of
/// `group`: what they said has stopped, when `group` holds every record that says it. `false`
/// when no record of `group` has a time.
pub(super) fn kubelet_goes_on_after(
    logs: &Logs<'_>,
    group: &[&LoggedEvent],
    gap: SignedDuration,
) -> bool {
    let Some(last) = record_times(group).max() else {
        return false;
    };
    kubelet_log_end(logs).is_some_and(|end| end.duration_since(last) > gap)
}

/// The positions in `at` (ascending) before `i`.
pub(super) fn before(at: &[usize], i: usize) -> &[usize] {
    &at[..at.partition_point(|&j| j < i)]
}

/// The positions in `at` (ascending) after `i`.
pub(super) fn after_pos(at: &[usize], i: usize) -> &[usize] {
    &at[at.partition_point(|&j| j <= i)..]
}

impl<'a> Logs<'a> {
    pub(super) fn new(all: &'a [LoggedEvent]) -> Logs<'a> {
        let mut logs = Logs {
            all,
            names: FastMap::default(),
            uids: FastMap::default(),
            container_pod: FastMap::default(),
            sandbox_pod: FastMap::default(),
            full_ids: BTreeSet::new(),
            all_uids: BTreeSet::new(),
            by_kind: FastMap::default(),
            by_uid: FastMap::default(),
            by_name: FastMap::default(),
            runtime: None,
            kubelet_log_end: None,
            kubelet_last_event: None,
            name_gone: FastMap::default(),
        };
        // (namespace, name, UID) already in `uids`.
        let mut named: HashSet<(&str, &str, &str), foldhash::fast::RandomState> =
            HashSet::default();
        // The ordered sets are built once at the end from the distinct IDs: inserting every
        // occurrence into a B-tree compared strings for most of `Logs::new`'s time.
        let mut full_ids: HashSet<&str, foldhash::fast::RandomState> = HashSet::default();
        let mut all_uids: HashSet<&str, foldhash::fast::RandomState> = HashSet::default();
        for (i, e) in all.iter().enumerate() {
            logs.by_kind.entry(e.event.kind).or_default().push(i);
            if is_kubelet_own(e) {
                logs.kubelet_last_event = logs.kubelet_last_event.max(e.time);
            }
            if logs.runtime.is_none()
                && let Some(c @ (Component::Containerd | Component::Crio | Component::Docker)) =
                    e.event.component
            {
                logs.runtime = Some(c);
            }
            let ids = &e.event.ids;
            for id in [
                ids.sandbox_id.as_deref(),
                ids.container_id.as_deref(),
                ids.object_id(),
            ]
            .into_iter()
            .flatten()
            {
                full_ids.insert(id);
            }
            if let Some(key) = name_key(e) {
                logs.by_name.entry(key).or_default().push(i);
                if matches!(
                    e.event.kind,
                    EventKind::SyncLoop(SyncOp::Delete) | EventKind::SyncLoop(SyncOp::Remove)
                ) {
                    let gone = logs.name_gone.entry(key).or_insert((None, false));
                    gone.0 = gone.0.max(e.time);
                    gone.1 |= e.time.is_none();
                }
            }
            let uid = own_uid_ref(e);
            if let Some(uid) = uid {
                all_uids.insert(uid);
                logs.by_uid.entry(uid).or_default().push(i);
            }
            // A line naming one pod and a UID names that pod's UID. One pod named twice (the pod
            // worker's `Error syncing pod` names it in its error as `<name>_<ns>(<uid>)` and in
            // its `pod=` field) is one pod.
            let one_pod = match ids.pods.as_slice() {
                [pod] => Some(pod),
                [first, rest @ ..] => rest
                    .iter()
                    .all(|p| {
                        p.name == first.name
                            && p.namespace == first.namespace
                            && (p.uid.is_none() || first.uid.is_none() || p.uid == first.uid)
                    })
                    .then_some(first),
                [] => None,
            };
            if let (Some(uid), Some(pod)) = (uid, one_pod)
                && ids
                    .pods
                    .iter()
                    .all(|p| p.uid.as_deref().is_none_or(|u| u == uid))
                && let Some(ns) = &pod.namespace
            {
                logs.names.entry(uid).or_insert((ns, &pod.name));
                if named.insert((ns, &pod.name, uid)) {
                    logs.uids.entry((ns, &pod.name)).or_default().push(uid);
                }
            }
            if let Some(uid) = uid {
                if let Some(c) = &ids.container_id {
                    logs.container_pod.entry(c).or_insert(uid);
                }
                if let Some(s) = &ids.sandbox_id {
                    logs.sandbox_pod.entry(s).or_insert(uid);
                }
            }
        }
        logs.full_ids = full_ids.into_iter().collect();
        logs.all_uids = all_uids.into_iter().collect();
        logs
    }

    /// The UIDs named with pod `namespace/name` (a `namespace/name` key), in the order seen.
    pub(super) fn uids_of<'s>(&'s self, key: &'s str) -> &'s [&'s str] {
        let uids: &'s FastMap<(&'s str, &'s str), Vec<&'s str>> = &self.uids;
        key.split_once('/')
            .and_then(|(ns, name)| uids.get(&(ns, name)))
            .map_or(&[], Vec::as_slice)
    }

    /// The positions of the events naming `uid` as their own, in reading order.
    pub(super) fn of_uid(&self, uid: &str) -> &[usize] {
        self.by_uid.get(uid).map_or(&[], Vec::as_slice)
    }

    /// The positions of the events whose first pod is `key` (`namespace/name`, or a bare
    /// name), in reading order.
    pub(super) fn of_name<'s>(&'s self, key: &'s str) -> &'s [usize] {
        let by_name: &'s FastMap<NameKey<'s>, Vec<usize>> = &self.by_name;
        let k = match key.split_once('/') {
            Some((ns, name)) => (Some(ns), name),
            None => (None, key),
        };
        by_name.get(&k).map_or(&[], Vec::as_slice)
    }

    /// The events of `kinds`, in reading order.
    pub(super) fn of(
        &self,
        kinds: &[EventKind],
    ) -> impl Iterator<Item = &'a LoggedEvent> + use<'a> {
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

    /// The `k`-th record (from 1) before or after record `i` in its file as the log was written:
    /// from the copy of its neighbours the fold kept ([`LoggedEvent::neighbours`]), which may
    /// have folded the records themselves, else the records beside it.
    pub(super) fn neighbour(&self, i: usize, side: Side, k: usize) -> Option<&'a LoggedEvent> {
        let all = self.all;
        if let Some(n) = all[i].neighbours() {
            let copies = match side {
                Side::Before => &n.before,
                Side::After => &n.after,
            };
            return copies.get(k.checked_sub(1)?);
        }
        let j = match side {
            Side::Before => i.checked_sub(k)?,
            Side::After => i.checked_add(k).filter(|&j| j < all.len())?,
        };
        let (lo, hi) = (i.min(j), i.max(j));
        all[lo..=hi]
            .iter()
            .all(|e| e.origin == all[i].origin)
            .then(|| &all[j])
    }

    /// The pod UID an event names, directly or through the container or sandbox it names.
    pub(super) fn uid_of(&self, e: &LoggedEvent) -> Option<String> {
        own_uid(e)
            .or_else(|| {
                e.event
                    .ids
                    .container_id
                    .as_deref()
                    .and_then(|c| self.container_pod.get(c).map(|u| (*u).to_string()))
            })
            .or_else(|| {
                e.event
                    .ids
                    .sandbox_id
                    .as_deref()
                    .and_then(|s| self.sandbox_pod.get(s).map(|u| (*u).to_string()))
            })
    }

    /// A cut ID completed when exactly one full ID of `known` starts with it, else `prefix…`.
    pub(super) fn complete(prefix: &str, known: &BTreeSet<&str>) -> String {
        let mut hits = known
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|k| k.starts_with(prefix));
        match (hits.next(), hits.next()) {
            (Some(full), None) => (*full).to_string(),
            _ => format!("{prefix}…"),
        }
    }

    /// The sandbox an event names: its sandbox ID, else a cut one (completed when possible).
    pub(super) fn sandbox_key(&self, e: &LoggedEvent) -> Option<String> {
        let i = &e.event.ids;
        i.sandbox_id.as_deref().map(str::to_string).or_else(|| {
            i.partial()
                .iter()
                .find(|p| matches!(p.kind, IdKind::Sandbox | IdKind::Object))
                .map(|p| Self::complete(&p.prefix, &self.full_ids))
        })
    }

    /// The container an event names: its container ID (or an ID of unstated kind), else a cut
    /// one (completed when possible).
    pub(super) fn container_key(&self, e: &LoggedEvent) -> Option<String> {
        let i = &e.event.ids;
        i.container_id
            .as_deref()
            .or(i.object_id())
            .map(str::to_string)
            .or_else(|| {
                i.partial()
                    .iter()
                    .find(|p| matches!(p.kind, IdKind::Container | IdKind::Object))
                    .map(|p| Self::complete(&p.prefix, &self.full_ids))
            })
    }

    /// The pod UID an event names, or a cut one (completed when possible).
    pub(super) fn uid_key(&self, e: &LoggedEvent) -> Option<String> {
        own_uid(e).or_else(|| {
            e.event
                .ids
                .partial()
                .iter()
                .find(|p| p.kind == IdKind::PodUid)
                .map(|p| Self::complete(&p.prefix, &self.all_uids))
        })
    }

    /// The pod of a group of events, best effort: from the CRI view by sandbox or UID, else
    /// from the lines and the identities the logs link.
    pub(super) fn pod_of(
        &self,
        view: &NodeView,
        group: &[&LoggedEvent],
        sandbox: Option<&str>,
        uid: Option<&str>,
    ) -> Option<PodRef> {
        let uid = uid
            .map(str::to_string)
            .or_else(|| group.iter().find_map(|e| self.uid_of(e)))
            .or_else(|| sandbox.and_then(|s| self.sandbox_pod.get(s).map(|u| (*u).to_string())));
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
            .or_else(|| {
                let (ns, name) = self.names.get(uid.as_deref()?)?;
                Some(((*ns).to_string(), (*name).to_string()))
            });
        let uid = uid.or_else(|| {
            let (ns, name) = named.as_ref()?;
            match self.uids.get(&(ns.as_str(), name.as_str()))?.as_slice() {
                [one] => Some((*one).to_string()),
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

/// The UID a line names for its pod (`podUID=`, a legacy `name_ns(uid)`, a runtime name),
/// borrowed.
pub(super) fn own_uid_ref(e: &LoggedEvent) -> Option<&str> {
    let ids = &e.event.ids;
    ids.pod_uid
        .as_deref()
        .or_else(|| ids.pods.first().and_then(|p| p.uid.as_deref()))
}

/// The first pod a line names, borrowed: (namespace, name).
pub(super) fn name_key(e: &LoggedEvent) -> Option<NameKey<'_>> {
    e.event
        .ids
        .pods
        .first()
        .map(|p| (p.namespace.as_deref(), &*p.name))
}

/// The UID a line names for its pod (`podUID=`, a legacy `name_ns(uid)`, a runtime name).
pub(super) fn own_uid(e: &LoggedEvent) -> Option<String> {
    let ids = &e.event.ids;
    ids.pod_uid
        .as_deref()
        .or_else(|| ids.pods.first().and_then(|p| p.uid.as_deref()))
        .map(str::to_string)
}

/// `namespace/name` (or the bare name) of the first pod a line names.
pub(super) fn pod_name_key(e: &LoggedEvent) -> Option<String> {
    e.event.ids.pods.first().map(|p| match &p.namespace {
        Some(ns) => format!("{ns}/{}", p.name),
        None => p.name.to_string(),
    })
}

/// Whether `a` was logged after `b`: by time when both have one, else by position in the same
/// file; `false` when it cannot be told.
pub(super) fn after(a: &LoggedEvent, b: &LoggedEvent) -> bool {
    match (a.time, b.time) {
        (Some(x), Some(y)) => x > y,
        _ => a.origin == b.origin && a.line > b.line,
    }
}

/// Whether two records are close enough in time to be one logical event.
pub(super) fn close(a: &LoggedEvent, b: &LoggedEvent) -> bool {
    match (a.time, b.time) {
        (Some(x), Some(y)) => x.duration_since(y).abs() <= SAME_EVENT,
        (None, None) => true,
        _ => false,
    }
}

pub(crate) fn source_of(e: &LoggedEvent) -> EvidenceSource {
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

/// Evidence lines for a group of events: a count line, then the first few and the last
/// (rendered by the group's [`Tally`](super::tally::Tally), the aggregate a streaming rule keeps).
pub(super) fn quote(group: &[&LoggedEvent]) -> Vec<Evidence> {
    super::tally::Tally::of(group).quote()
}

/// One record as evidence: `file:line: text`.
pub(super) fn line(e: &LoggedEvent) -> Evidence {
    Evidence::record(source_of(e), &e.origin, e.line, &e.text)
}

/// A duration for a person: [`human`], or milliseconds under a second.
pub(super) fn dur(d: SignedDuration) -> String {
    if d.abs() < SignedDuration::from_millis(1) {
        "<1ms".to_string()
    } else if d.abs() < SignedDuration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        human(d)
    }
}

/// The times of a group's records, and the first and last of the repeats folded into each.
pub(super) fn record_times<'g>(
    group: &'g [&LoggedEvent],
) -> impl Iterator<Item = Timestamp> + Clone + 'g {
    group.iter().flat_map(|e| {
        let folded = e.folded.as_ref().and_then(|f| f.span);
        e.time
            .into_iter()
            .chain(folded.into_iter().flat_map(|(a, b)| [a, b]))
    })
}

/// The longest run of `group`'s records (their folded repeats included) with no gap over
/// `gap`: how long one outage lasted, when records less than `gap` apart are one.
pub(super) fn longest_run(group: &[&LoggedEvent], gap: SignedDuration) -> SignedDuration {
    let mut times: Vec<Timestamp> = record_times(group).collect();
    times.sort_unstable();
    let mut longest = SignedDuration::ZERO;
    let mut start = times.first().copied();
    for w in times.windows(2) {
        if w[1].duration_since(w[0]) > gap {
            start = Some(w[1]);
        }
        if let Some(s) = start {
            longest = longest.max(w[1].duration_since(s));
        }
    }
    longest
}

/// The earliest and latest time of a group's records, those folded into them included.
pub(super) fn time_range(group: &[&LoggedEvent]) -> Option<(Timestamp, Timestamp)> {
    let times = record_times(group);
    Some((times.clone().min()?, times.max()?))
}

/// How many log records a group stands for: its records and those folded into them
/// ([`LoggedEvent::records`]).
pub(super) fn records(group: &[&LoggedEvent]) -> usize {
    usize::try_from(group.iter().map(|e| e.records()).sum::<u64>()).unwrap_or(usize::MAX)
}

/// The time from a group's earliest to its latest record, folded repeats included (zero for
/// fewer than two times).
pub(super) fn span(group: &[&LoggedEvent]) -> SignedDuration {
    time_range(group).map_or(SignedDuration::ZERO, |(a, b)| b.duration_since(a))
}

/// `" over 3m"`, or nothing for records less than a second apart or without times.
pub(super) fn over(group: &[&LoggedEvent]) -> String {
    let d = span(group);
    if d < SignedDuration::from_secs(1) {
        String::new()
    } else {
        format!(" over {}", human(d))
    }
}

/// Whether `e` is of one attempt with a record at one of `times` (sorted): less than
/// [`ONE_ATTEMPT`] apart, looked up by binary search (a record naming no pod joins the named
/// record of its call).
pub(super) fn within_an_attempt(times: &[Timestamp], e: &LoggedEvent) -> bool {
    e.time.is_some_and(|t| {
        let at = times.partition_point(|u| *u < t);
        [at.checked_sub(1), Some(at)]
            .into_iter()
            .flatten()
            .filter_map(|i| times.get(i))
            .any(|u| u.duration_since(t).abs() < ONE_ATTEMPT)
    })
}

/// How many attempts a group of records stands for: records less than [`ONE_ATTEMPT`] apart
/// are one (untimed records count as one together); see [`Tally::attempts`](super::tally::Tally::attempts).
pub(super) fn attempts(group: &[&LoggedEvent]) -> usize {
    let mut t = super::tally::Tally::<()>::default();
    for e in group {
        t.add_folded((), e.time, e.folded.as_deref());
    }
    t.attempts()
}

pub(super) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// How a summary lists a pod: `namespace/name` (the name alone when no record names its
/// namespace), else its UID.
pub(super) fn pod_label(p: &PodRef) -> String {
    if p.name.is_empty() {
        p.uid.clone()
    } else if p.namespace.is_empty() {
        p.name.clone()
    } else {
        format!("{}/{}", p.namespace, p.name)
    }
}

/// Whether the kubelet is tearing `pod` down: its worker asked to remove it, the pod deleted
/// or killed, its containers killed (records of its UID, at any time), or a `SyncLoop DELETE`
/// or `REMOVE` of its `namespace/name` at or after `since` (one before is of an
/// earlier pod of that name). Such a pod waits to start no more: its syncs
/// fail on what it was waiting for (its volumes, its image) while it goes away.
pub(super) fn going_away(logs: &Logs<'_>, pod: Option<&PodRef>, since: &LoggedEvent) -> bool {
    let Some(pod) = pod else {
        return false;
    };
    let uid = Some(pod.uid.as_str()).filter(|u| !u.is_empty());
    let name = (!pod.name.is_empty()).then(|| format!("{}/{}", pod.namespace, pod.name));
    let name = name.as_deref();
    let from = |e: &LoggedEvent| !after(since, e);
    let by_uid = uid.is_some_and(|u| {
        logs.of_uid(u).iter().any(|&i| {
            let e = &logs.all[i];
            matches!(
                e.event.kind,
                EventKind::PodWorkerNotTerminated
                    | EventKind::PodMustBeKilled
                    | EventKind::KillingContainer
                    | EventKind::PodTerminated
            )
        })
    });
    if by_uid {
        return true;
    }
    // The name's DELETE or REMOVE at or after `since`: by the latest one's time, read once in
    // `Logs::new`; a scan only when a record or `since` has no time.
    if let Some(ns) = Some(pod.namespace.as_str()).filter(|_| !pod.name.is_empty())
        && let Some(t) = since.time
    {
        return match logs.name_gone.get(&(Some(ns), pod.name.as_str())) {
            None => false,
            Some((latest, false)) => latest.is_some_and(|l| l >= t),
            Some((latest, true)) if latest.is_some_and(|l| l >= t) => true,
            Some(_) => scan_gone(logs, name, from),
        };
    }
    scan_gone(logs, name, from)
}

/// Whether a container of `pod` (its UID) started after `last`: PLEG's `ContainerStarted`
/// (V(2); a pod's first is its sandbox's), read from the pod's own records. `false` for a pod
/// without a UID.
pub(super) fn started_after(logs: &Logs<'_>, pod: Option<&PodRef>, last: &LoggedEvent) -> bool {
    let Some(uid) = pod.map(|p| p.uid.as_str()).filter(|u| !u.is_empty()) else {
        return false;
    };
    logs.of_uid(uid).iter().any(|&i| {
        let e = &logs.all[i];
        e.event.kind == EventKind::Pleg(crate::logs::PlegType::ContainerStarted) && after(e, last)
    })
}

/// [`going_away`]'s scan of a name's records for a DELETE or REMOVE `from` accepts.
fn scan_gone(logs: &Logs<'_>, name: Option<&str>, from: impl Fn(&LoggedEvent) -> bool) -> bool {
    name.is_some_and(|n| {
        logs.of_name(n).iter().any(|&i| {
            let e = &logs.all[i];
            matches!(
                e.event.kind,
                EventKind::SyncLoop(SyncOp::Delete) | EventKind::SyncLoop(SyncOp::Remove)
            ) && from(e)
        })
    })
}

/// How many names a summary lists before `and N more` ([`listed`], [`pod_list`]).
pub(super) const LISTED: usize = 5;

/// How a summary lists names (pods, containers, IDs): the first [`LISTED`] distinct ones in the
/// order given, joined by `", "`, then `and N more` with N the distinct ones not shown, so a
/// summary stays one line however many pods a log names (a node whose pods fail under fresh
/// UIDs names thousands). A name given twice is listed once (pods of one name under several
/// UIDs, retries).
pub(super) fn listed<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> String {
    let mut seen: HashSet<String> = HashSet::new();
    let mut shown: Vec<String> = Vec::new();
    for name in names {
        let name = name.as_ref();
        if !seen.contains(name) {
            seen.insert(name.to_string());
            if shown.len() < LISTED {
                shown.push(name.to_string());
            }
        }
    }
    match seen.len() - shown.len() {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// How a finding about many pods lists them: the first [`LISTED`] as [`pod_label`] (`a pod`
/// when unknown), each with its detail in parentheses when it has one, then `and N more`.
pub(super) fn pod_list<'p>(
    pods: impl ExactSizeIterator<Item = (Option<&'p PodRef>, String)>,
) -> String {
    let n = pods.len();
    let listed: Vec<String> = pods
        .take(LISTED)
        .map(|(pod, detail)| {
            let who = pod.map_or_else(|| "a pod".to_string(), pod_label);
            if detail.is_empty() {
                who
            } else {
                format!("{who} ({detail})")
            }
        })
        .collect();
    match n.saturating_sub(listed.len()) {
        0 => listed.join(", "),
        more => format!("{} and {more} more", listed.join(", ")),
    }
}

/// `" of pod ns/name (uid)"` as far as known.
pub(super) fn of_pod(pod: Option<&PodRef>) -> String {
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
pub(super) fn shown(id: &str) -> &str {
    if id.ends_with('…') { id } else { short(id) }
}

pub(super) fn finding(
    kind: FindingKind,
    severity: Severity,
    summary: String,
    rule: &'static str,
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
        kubelet_rule: rule.into(),
        remediation,
        gc_eligible: false,
    }
}

#[cfg(test)]
mod tests;
