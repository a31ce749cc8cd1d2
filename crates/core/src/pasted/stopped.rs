//! A pasted pod's newest NOTREADY sandbox whose pod the logs show stopped, and nothing after.
//!
//! The kubelet keeps a live pod's newest sandbox (`kuberuntime_gc.go` `evictSandboxes`), so
//! without the API view such a sandbox is an info leftover ([`super::judge`]). The logs can say
//! more: when the kubelet stopped the pod (its event recorder's `Killing` / `Stopping container
//! <name>`, the pod event `killPodWithSyncResult` gives; or `SyncLoop DELETE`/`REMOVE`, the API
//! deleting it) and the logs hold no later record of the pod under its name or UID (no new
//! sandbox, no start, no sync: [`LIFE`]), the pod is stopped for good and its sandbox GC, which
//! runs every minute, kept the sandbox: a warning naming the pod UID the recorder's line gives.
//!
//! Not a warning, staying the info it was:
//! - the pod ended the way the API keeps it, as Failed (`Evicted`, `DeadlineExceeded`,
//!   `Preempting`: [`EventKind::PodEndedRecorded`]), since a Failed pod's newest sandbox is kept
//!   until the pod is deleted;
//! - any later record of a pod of that name (a controller re-creating it under the same name
//!   logs `SyncLoop ADD`, a new sandbox, a start), whatever its UID;
//! - a stop whose UID is not the sandbox's (an `inspectp` paste has the UID);
//! - a sandbox created after the stop (`createdAt`), which the stop was not of;
//! - a stop less than `--min-age` before the paste, when the paste's time is known (`createdAt`
//!   plus crictl's CREATED age: [`PastedSandbox::pasted_at`]), or before `now` (the paste was
//!   taken before the diagnosis): the GC may not have run yet.
//!
//! The logs are indexed once per pod name and UID: linear in the records and the findings.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};

use super::{ApiIndex, PastedSandbox, PastedViews};
use crate::event::{LogKind, LoggedEvent};
use crate::finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
use crate::logs::{EventKind, PlegType, SyncOp};
use crate::rules::human;

/// Records of a pod living on: a sandbox made or wanted, a container started or pulled for, a
/// pod added or synced for the first time, a probe passing.
const LIFE: &[EventKind] = &[
    EventKind::SyncLoop(SyncOp::Add),
    EventKind::Pleg(PlegType::ContainerStarted),
    EventKind::PodSandboxCreated,
    EventKind::RunPodSandboxStarted,
    EventKind::RunPodSandboxDone,
    EventKind::RunPodSandboxFailed,
    EventKind::CreatePodSandboxFailed,
    EventKind::PodSandboxNeeded,
    EventKind::ContainerStartedLogged,
    EventKind::ImagePulling,
    EventKind::ImagePulled,
    EventKind::ImagePullFailed,
    EventKind::CreateContainerFailed,
    EventKind::PodStartupObserved,
    EventKind::ReadinessProbeReady,
    EventKind::PodSyncedFirstTime,
];

fn is_stop(k: EventKind) -> bool {
    matches!(
        k,
        EventKind::PodStopRecorded
            | EventKind::SyncLoop(SyncOp::Delete)
            | EventKind::SyncLoop(SyncOp::Remove)
    )
}

/// The records of each pod, by (namespace, name) and by UID, as positions in the events.
struct PodRecords<'e> {
    by_name: HashMap<(&'e str, &'e str), Vec<usize>>,
    by_uid: HashMap<&'e str, Vec<usize>>,
}

impl<'e> PodRecords<'e> {
    fn new(events: &'e [LoggedEvent]) -> PodRecords<'e> {
        let mut r = PodRecords {
            by_name: HashMap::new(),
            by_uid: HashMap::new(),
        };
        for (i, e) in events.iter().enumerate() {
            let k = e.event.kind;
            if !(is_stop(k) || k == EventKind::PodEndedRecorded || LIFE.contains(&k)) {
                continue;
            }
            let ids = &e.event.ids;
            for p in &ids.pods {
                if let Some(ns) = p.namespace.as_deref() {
                    r.by_name.entry((ns, &p.name)).or_default().push(i);
                }
            }
            if let Some(u) = ids.pod_uid.as_deref() {
                r.by_uid.entry(u).or_default().push(i);
            }
        }
        r
    }

    /// The records of the pod of `s`: by namespace/name and by its UID, each once, in order.
    fn of(&self, s: &PastedSandbox) -> Vec<usize> {
        let mut at: Vec<usize> = self
            .by_name
            .get(&(s.namespace.as_str(), s.name.as_str()))
            .cloned()
            .unwrap_or_default();
        if let Some(u) = s.uid.as_deref().and_then(|u| self.by_uid.get(u)) {
            at.extend(u);
        }
        at.sort_unstable();
        at.dedup();
        at
    }
}

/// The pod UID a record names.
fn uid_of(e: &LoggedEvent) -> Option<&str> {
    e.event
        .ids
        .pod_uid
        .as_deref()
        .or_else(|| e.event.ids.pods.iter().find_map(|p| p.uid.as_deref()))
}

fn what(e: &LoggedEvent) -> &'static str {
    match e.event.kind {
        EventKind::SyncLoop(SyncOp::Delete) => "SyncLoop DELETE: the API deleting the pod",
        EventKind::SyncLoop(SyncOp::Remove) => "SyncLoop REMOVE: the pod gone from the API",
        _ => "pod event Killing, Stopping container: the kubelet stopping the pod",
    }
}

/// Raises [`super::judge`]'s info `LeakedSandbox` findings whose pod the logs show stopped for
/// good to warnings (the module's rule), and names each finding's pod UID when the logs link
/// its name to one UID. `min` is `--min-age`.
pub(super) fn add_stops(
    findings: &mut [Finding],
    views: &PastedViews,
    events: &[LoggedEvent],
    min: SignedDuration,
    now: Timestamp,
) {
    let records = PodRecords::new(events);
    let by_id: HashMap<&str, &PastedSandbox> = views
        .sandboxes()
        .iter()
        .map(|s| (s.id.as_str(), s))
        .collect();
    let api = views
        .pods
        .as_ref()
        .map(|(pods, _)| ApiIndex::new(pods, views.node.as_deref()));
    for f in findings
        .iter_mut()
        .filter(|f| f.kind == FindingKind::LeakedSandbox)
    {
        let Some(s) = f
            .sandbox_id
            .as_deref()
            .and_then(|id| by_id.get(id.trim_end_matches('…')))
        else {
            continue;
        };
        let at = records.of(s);
        let mine = |e: &LoggedEvent| match (s.uid.as_deref(), uid_of(e)) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let stop = at
            .iter()
            .map(|&i| &events[i])
            .filter(|e| is_stop(e.event.kind) && e.time.is_some() && mine(e))
            .max_by_key(|e| e.time);
        // The pod's UID, from the stop, else from the one UID its name's records give.
        if let Some(pod) = f.pod.as_mut().filter(|p| p.uid.is_empty()) {
            let mut uids = at.iter().filter_map(|&i| uid_of(&events[i]));
            let one = uids.next().filter(|u| uids.all(|v| v == *u));
            if let Some(u) = stop.and_then(uid_of).or(one) {
                pod.uid = u.to_string();
            }
        }
        let (Some(stop), Severity::Info) = (stop, f.severity) else {
            continue;
        };
        // A pod the pasted API view lists keeps its newest sandbox.
        if api.as_ref().is_some_and(|a| a.find(s).is_some()) {
            continue;
        }
        let k = stop.time.expect("filtered above");
        let ended = at
            .iter()
            .any(|&i| events[i].event.kind == EventKind::PodEndedRecorded);
        let later = at
            .iter()
            .map(|&i| &events[i])
            .find(|e| LIFE.contains(&e.event.kind) && e.time.is_none_or(|t| t > k));
        if ended || later.is_some() || s.created_at.is_some_and(|c| c > k) {
            continue;
        }
        let source = match stop.log {
            LogKind::Kubelet => EvidenceSource::KubeletLog,
            LogKind::Runtime => EvidenceSource::RuntimeLog,
        };
        let since = s.pasted_at().unwrap_or(now).duration_since(k);
        if since < min {
            f.evidence.push(Evidence::new(
                source,
                format!(
                    "{}:{}: {} at {k}, {} before the {}: younger than --min-age, the sandbox GC may not have run yet",
                    stop.origin,
                    stop.line,
                    what(stop),
                    human(since),
                    if s.pasted_at().is_some() { "paste" } else { "diagnosis" }
                ),
            ));
            continue;
        }
        let uid = f.pod.as_ref().map_or("", |p| p.uid.as_str()).to_string();
        f.severity = Severity::Warning;
        f.evidence.push(Evidence::new(
            source,
            format!(
                "{}:{}: {} at {k}{}; no later record of {}/{} in the logs read (no new sandbox, start or sync)",
                stop.origin,
                stop.line,
                what(stop),
                if uid.is_empty() {
                    String::new()
                } else {
                    format!(" (pod UID {uid})")
                },
                s.namespace,
                s.name
            ),
        ));
        f.summary = format!(
            "pod sandbox {} of {}/{}{} is NOTREADY{}, and the kubelet stopped its pod at {k} with no \
             later record of it in the logs: the sandbox GC, which runs every minute, kept the \
             sandbox of a stopped pod (from pasted views and logs: confirm the pod is gone with \
             kubectl get pod)",
            s.id,
            s.namespace,
            s.name,
            if uid.is_empty() {
                String::new()
            } else {
                format!(" (UID {uid})")
            },
            s.age_at(now)
                .map_or(String::new(), |a| format!(" for {}", human(a))),
        );
    }
}

#[cfg(test)]
mod tests;
