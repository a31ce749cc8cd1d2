//! Diagnosis rules over kubelet and runtime log events: what the logs say that the CRI, API and
//! file views cannot (a teardown that keeps failing, a stuck pod worker, a mirror pod loop), and
//! the log evidence that explains a state finding (is the kubelet's GC trying and failing, or not
//! trying at all?).
//!
//! Pure like the rest of `core`: events come in as values (read by `podcoroner-logs`), with
//! the node view when there is one and the time.

use crate::logs::Event;

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

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use crate::finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
use crate::logs::{Cause, EventKind, SyncOp};
use crate::model::{NodeView, PodRef, SandboxState};
use crate::rules::{
    Config, Diagnosis, SkippedRule, diagnose, human, sh, short, stop_failure_class,
};

/// How many evidence lines of one group a finding quotes (first ones and the last).
const MAX_QUOTED: usize = 4;

/// The state rules over `view`, the log rules over `events`, and the log evidence added to the
/// state findings they explain; sorted as [`diagnose`] sorts.
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
    let mut from_logs = diagnose_logs(events, view, config, now);
    enrich(&mut d.findings, events);
    d.findings.append(&mut from_logs);
    d.findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.kind.cmp(&b.kind))
            .then_with(|| a.pod.cmp(&b.pod))
            .then_with(|| a.sandbox_id.cmp(&b.sandbox_id))
            .then_with(|| a.container_id.cmp(&b.container_id))
            .then_with(|| a.summary.cmp(&b.summary))
    });
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
    let mut out = Vec::new();
    sandbox_stop_failing(events, view, &mut out);
    find_container_race(events, view, &mut out);
    orphaned_pod_volumes(events, view, &mut out);
    mirror_pods(events, &mut out);
    stuck_pod_workers(events, view, &mut out);
    static_pod_removal_blocked(events, &mut out);
    runtime_unhealthy(events, &mut out);
    stuck_terminating(events, view, config, now, &mut out);
    out
}

// === helpers ===

fn source_of(e: &LoggedEvent) -> EvidenceSource {
    match e.log {
        LogKind::Kubelet => EvidenceSource::KubeletLog,
        LogKind::Runtime => EvidenceSource::RuntimeLog,
    }
}

/// Evidence lines for a group of events: a count line, then the first few and the last.
fn quote(group: &[&LoggedEvent]) -> Vec<Evidence> {
    let mut ev = Vec::new();
    let times: Vec<Timestamp> = group.iter().filter_map(|e| e.event.time).collect();
    if group.len() > 1 {
        let span = match (times.iter().min(), times.iter().max()) {
            (Some(a), Some(b)) => format!(" from {a} to {b} ({})", human(b.duration_since(*a))),
            _ => String::new(),
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
    for e in picked {
        ev.push(Evidence::new(
            source_of(e),
            format!("{}:{}: {}", e.origin, e.line, e.text),
        ));
    }
    ev
}

fn span(group: &[&LoggedEvent]) -> SignedDuration {
    let times: Vec<Timestamp> = group.iter().filter_map(|e| e.event.time).collect();
    match (times.iter().min(), times.iter().max()) {
        (Some(a), Some(b)) => b.duration_since(*a),
        _ => SignedDuration::ZERO,
    }
}

/// The ID a sandbox event names: `sandbox_id`, else an ID of unstated kind, else a cut one
/// (`prefix…`).
fn sandbox_key(e: &LoggedEvent) -> Option<String> {
    let i = &e.event.ids;
    i.sandbox_id
        .as_deref()
        .or(i.object_id.as_deref())
        .map(str::to_string)
        .or_else(|| i.partial.first().map(|p| format!("{}…", p.prefix)))
}

fn container_key(e: &LoggedEvent) -> Option<String> {
    let i = &e.event.ids;
    i.container_id
        .as_deref()
        .or(i.object_id.as_deref())
        .map(str::to_string)
        .or_else(|| i.partial.first().map(|p| format!("{}…", p.prefix)))
}

/// The pod a group of events names, best effort: from the view by sandbox or UID, else from the
/// lines.
fn pod_of(
    view: &NodeView,
    sandbox: Option<&str>,
    uid: Option<&str>,
    group: &[&LoggedEvent],
) -> Option<PodRef> {
    if let Some(cri) = &view.cri {
        if let Some(s) = cri
            .sandboxes
            .iter()
            .find(|s| Some(s.id.as_str()) == sandbox || Some(s.pod.uid.as_str()) == uid)
        {
            return Some(s.pod.clone());
        }
    }
    let uid = uid.map(str::to_string).or_else(|| {
        group
            .iter()
            .find_map(|e| e.event.ids.pod_uid.as_deref().map(str::to_string))
    });
    let named = group.iter().find_map(|e| e.event.ids.pods.first());
    match (named, uid) {
        (Some(p), uid) => Some(PodRef {
            namespace: p.namespace.as_deref().unwrap_or("").to_string(),
            name: p.name.to_string(),
            uid: uid
                .or_else(|| p.uid.as_deref().map(str::to_string))
                .unwrap_or_default(),
        }),
        (None, Some(uid)) => Some(PodRef {
            namespace: String::new(),
            name: String::new(),
            uid,
        }),
        (None, None) => None,
    }
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

// === SandboxStopFailing ===

/// `kuberuntime_gc.go` `removeSandbox` and `kuberuntime_manager.go` `killPodWithSyncResult`:
/// a sandbox whose stop or removal fails is retried every GC period (1 min) or pod sync, forever.
fn sandbox_stop_failing(events: &[LoggedEvent], view: &NodeView, out: &mut Vec<Finding>) {
    use EventKind::*;
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in events {
        let failing = matches!(
            e.event.kind,
            StopSandboxBeforeRemoveFailed
                | RemoveSandboxFailed
                | StopPodSandboxFailed
                | RemovePodSandboxFailed
                | KillPodSandboxFailed
                | DestroyNetworkFailed
        ) && !e.event.not_found;
        if let (true, Some(key)) = (failing, sandbox_key(e)) {
            groups.entry(key).or_default().push(e);
        }
    }
    for (id, group) in groups {
        // Gone from the runtime now: the failure healed.
        if let Some(cri) = &view.cri
            && !id.ends_with('…')
            && !cri.sandboxes.iter().any(|s| s.id == id)
        {
            continue;
        }
        let err = group
            .iter()
            .rev()
            .find_map(|e| e.event.error.as_deref())
            .unwrap_or("");
        let (class, fix) = stop_failure_class(if err.is_empty() { &group[0].text } else { err });
        let cause = group.iter().rev().find_map(|e| e.event.cause);
        let node_wide = matches!(
            cause,
            Some(Cause::CniTeardown(
                crate::logs::CniFailure::PluginNotInitialized
                    | crate::logs::CniFailure::PluginMissing
            ))
        );
        let removal = group
            .iter()
            .any(|e| matches!(e.event.kind, RemoveSandboxFailed | RemovePodSandboxFailed));
        let mut f = finding(
            FindingKind::SandboxStopFailing,
            Severity::Warning,
            format!(
                "{} of pod sandbox {} fails ({} log records over {}): {class}{}",
                if removal { "removing" } else { "stopping" },
                short(&id),
                group.len(),
                human(span(&group)),
                if node_wide {
                    "; every sandbox teardown on this node will fail the same way"
                } else {
                    ""
                }
            ),
            "kuberuntime_gc.go removeSandbox: StopPodSandbox runs the CNI teardown; on error the kubelet logs \
             \"Failed to stop sandbox before removing\" and never calls RemovePodSandbox, retrying every GC \
             period (1 min), so the sandbox leaks until the cause is fixed",
            format!(
                "{fix}; then crictl stopp {id} && crictl rmp {id} (or let the kubelet's GC retry)",
                id = sh(id.trim_end_matches('…'))
            ),
        );
        f.pod = pod_of(view, Some(&id), None, &group);
        f.sandbox_id = Some(id);
        f.evidence = quote(&group);
        out.push(f);
    }
}

// === FindContainerRace ===

/// `pod_container_deletor.go` and `kuberuntime_container.go` `removeContainer`: a container is
/// removed twice during pod deletion and the second `ContainerStatus` hits NotFound. Benign,
/// unless the same ID keeps coming back.
fn find_container_race(events: &[LoggedEvent], view: &NodeView, out: &mut Vec<Finding>) {
    use EventKind::*;
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in events {
        let race = matches!(
            e.event.kind,
            DeleteContainerFailed
                | ContainerStatusFailed
                | RemoveContainerFailed
                | GcContainerStatusFailed
                | ContainerNotFound
        ) && (e.event.not_found || e.event.kind == ContainerNotFound);
        if let (true, Some(key)) = (race, container_key(e)) {
            groups.entry(key).or_default().push(e);
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
        let lasting = span(&group) > SignedDuration::from_mins(10) && group.len() >= 3;
        let mut f = finding(
            FindContainerRace,
            if lasting {
                Severity::Warning
            } else {
                Severity::Info
            },
            if lasting {
                format!(
                    "container {} keeps being looked up after it was removed ({} NotFound records over {}): \
                     something holds a stale reference to it",
                    short(&id),
                    group.len(),
                    human(span(&group))
                )
            } else {
                format!(
                    "container {} was removed twice during pod deletion ({} NotFound record{}): the known \
                     benign race, nothing to do",
                    short(&id),
                    group.len(),
                    if group.len() == 1 { "" } else { "s" }
                )
            },
            "pod_container_deletor.go and kuberuntime_container.go removeContainer: a deleted pod's container \
             is removed by the deletor, the pod worker and the GC; the later attempts' ContainerStatus returns \
             NotFound (\"an error occurred when try to find container\"), k/k #99901",
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
        f.pod = pod_of(view, None, None, &group);
        f.container_id = Some(id);
        f.evidence = quote(&group);
        out.push(f);
    }
}
use FindingKind::FindContainerRace;

// === OrphanedPodVolumes ===

/// `kubelet_volumes.go` `cleanupOrphanedPodDirs`: "Orphaned pod ... found, but volume paths are
/// still present on disk" / "orphaned pod ... found, but ..." roll-ups every housekeeping.
fn orphaned_pod_volumes(events: &[LoggedEvent], view: &NodeView, out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e.event.kind == EventKind::OrphanedPodVolumes)
    {
        let key = e
            .event
            .ids
            .pod_uid
            .as_deref()
            .map(str::to_string)
            .or_else(|| {
                e.event
                    .ids
                    .partial
                    .first()
                    .map(|p| format!("{}…", p.prefix))
            });
        if let Some(key) = key {
            groups.entry(key).or_default().push(e);
        }
    }
    for (uid, group) in groups {
        // The directory is gone now: healed.
        if let Some(dirs) = &view.pod_dirs
            && !uid.ends_with('…')
            && !dirs.iter().any(|d| d.uid == uid)
        {
            continue;
        }
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
        let mut f = finding(
            FindingKind::OrphanedPodVolumes,
            Severity::Warning,
            format!(
                "the kubelet cannot remove orphaned pod {uid}: {what} are still present ({} records{})",
                group.len(),
                if at_least > 1 {
                    format!("; at least {at_least} orphaned pods with errors on this node")
                } else {
                    String::new()
                }
            ),
            "kubelet_volumes.go cleanupOrphanedPodDirs: the directory of a pod neither desired nor running is \
             removed once its volumes are unmounted, but only empty volume directories are removed; the error \
             repeats every housekeeping (2 s)",
            format!(
                "grep {u} /proc/mounts and umount what is listed (never rm -rf a mounted volume: it deletes the \
                 volume's data); then ls -la /var/lib/kubelet/pods/{u}/ and remove what is left by hand",
                u = sh(uid.trim_end_matches('…'))
            ),
        );
        f.pod = Some(PodRef {
            namespace: String::new(),
            name: String::new(),
            uid: uid.clone(),
        });
        f.evidence = quote(&group);
        out.push(f);
    }
}

// === MirrorPodRecreateLoop, MirrorPodCreateFailed ===

fn pod_name_key(e: &LoggedEvent) -> Option<String> {
    e.event.ids.pods.first().map(|p| match &p.namespace {
        Some(ns) => format!("{ns}/{}", p.name),
        None => p.name.to_string(),
    })
}

/// `kubelet.go` `syncPod` deletes an outdated mirror pod ("Deleted mirror pod because it is
/// outdated") and `mirror_client.go` `CreateMirrorPod` recreates it; the API may refuse.
fn mirror_pods(events: &[LoggedEvent], out: &mut Vec<Finding>) {
    let mut deleted: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    let mut refused: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in events {
        let Some(key) = pod_name_key(e) else { continue };
        match e.event.kind {
            EventKind::MirrorPodOutdatedDeleted => deleted.entry(key).or_default().push(e),
            EventKind::MirrorPodCreateFailed => refused.entry(key).or_default().push(e),
            _ => {}
        }
    }
    for (pod, group) in deleted.into_iter().filter(|(_, g)| g.len() >= 2) {
        let mut f = finding(
            FindingKind::MirrorPodRecreateLoop,
            Severity::Warning,
            format!(
                "mirror pod {pod} was deleted as outdated {} times in {}: a delete and recreate loop",
                group.len(),
                human(span(&group))
            ),
            "kubelet.go syncPod: a mirror pod that is not IsMirrorPodOf the static pod is deleted and \
             recreated; a loop means the recreated mirror is again judged outdated (two kubelets or two \
             manifests with one name, or an admission webhook mutating it)",
            format!(
                "kubectl get pod -n <ns> <name> -o yaml | grep config.mirror, compare with config.hash of the \
                 static pod (crictl inspectp); look for a second manifest or node with the same pod name ({})",
                sh(&pod)
            ),
        );
        f.pod = Some(split_pod(&pod));
        f.evidence = quote(&group);
        out.push(f);
    }
    for (pod, group) in refused {
        let cause = group.iter().rev().find_map(|e| e.event.cause);
        let why = match cause {
            Some(Cause::Forbidden) => {
                "forbidden (NodeRestriction, or the namespace is missing or terminating)"
            }
            Some(Cause::AlreadyExists) => {
                "a pod of that name already exists (a stale mirror pod with another hash)"
            }
            _ => "refused by the API server",
        };
        let mut f = finding(
            FindingKind::MirrorPodCreateFailed,
            Severity::Warning,
            format!("the API server refuses the mirror pod of static pod {pod}: {why}"),
            "pod/mirror_client.go CreateMirrorPod: the kubelet creates a mirror pod for every static pod; on \
             AlreadyExists it accepts the existing pod only if its config.mirror matches",
            match cause {
                Some(Cause::AlreadyExists) => format!(
                    "kubectl delete pod --grace-period=0 of the stale mirror pod {} so the kubelet recreates it",
                    sh(&pod)
                ),
                _ => "kubectl get ns; check the kubelet's RBAC and the NodeRestriction admission plugin".to_string(),
            },
        );
        f.pod = Some(split_pod(&pod));
        f.evidence = quote(&group);
        out.push(f);
    }
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

/// 1.22 to 1.26 pod workers (`pod_workers.go`): "Pod worker has been requested for removal but
/// is still not fully terminated" repeating, or "remove all history" followed within seconds by
/// "Pod is orphaned and must be torn down" for the same UID (k/k #107730).
fn stuck_pod_workers(events: &[LoggedEvent], view: &NodeView, out: &mut Vec<Finding>) {
    let mut by_uid: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in events {
        if matches!(
            e.event.kind,
            EventKind::PodWorkerNotTerminated
                | EventKind::RemoveAllHistory
                | EventKind::PodOrphanedTornDown
                | EventKind::PodSyncedFirstTime
        ) && let Some(uid) = &e.event.ids.pod_uid
        {
            by_uid.entry(uid.to_string()).or_default().push(e);
        }
        // Static pod re-added with the same UID right after its removal (the 1.22.0/1.22.1
        // regression, k/k #104648).
        if matches!(
            e.event.kind,
            EventKind::SyncLoop(SyncOp::Remove | SyncOp::Add)
        ) && e.event.config_source == Some(crate::logs::ConfigSource::File)
            && let Some(uid) = e
                .event
                .ids
                .pod_uid
                .as_deref()
                .or_else(|| e.event.ids.pods.first().and_then(|p| p.uid.as_deref()))
        {
            by_uid.entry(uid.to_string()).or_default().push(e);
        }
    }
    for (uid, group) in by_uid {
        let not_terminated = group
            .iter()
            .filter(|e| e.event.kind == EventKind::PodWorkerNotTerminated)
            .count();
        let race = group.windows(2).any(|w| {
            w[0].event.kind == EventKind::RemoveAllHistory
                && group.iter().any(|l| {
                    l.event.kind == EventKind::PodOrphanedTornDown
                        && matches!((w[0].event.time, l.event.time), (Some(a), Some(b)) if b >= a && b.duration_since(a) <= SignedDuration::from_secs(2))
                })
        });
        let readded = group.windows(2).any(|w| {
            w[0].event.kind == EventKind::SyncLoop(SyncOp::Remove)
                && w[1].event.kind == EventKind::SyncLoop(SyncOp::Add)
        });
        if not_terminated < 3 && !race && !readded {
            continue;
        }
        let sandbox = view
            .cri
            .iter()
            .flat_map(|c| c.sandboxes.iter())
            .filter(|s| s.pod.uid == uid)
            .max_by_key(|s| s.created_at);
        let signature = if race {
            "\"remove all history\" then \"Pod is orphaned and must be torn down\" (k/k #107730)"
        } else if readded {
            "static pod removed and re-added with the same UID; it never restarts (1.22.0-1.22.1, k/k #104648)"
        } else {
            "\"Pod worker has been requested for removal but is still not fully terminated\" repeating"
        };
        let mut f = finding(
            FindingKind::StuckPodWorker,
            Severity::Warning,
            format!(
                "the kubelet's pod worker for pod {uid} is stuck: {signature}{}",
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
        f.pod = pod_of(view, None, Some(&uid), &group);
        f.sandbox_id = sandbox.map(|s| s.id.clone());
        f.evidence = quote(&group);
        out.push(f);
    }
}

// === StaticPodRemovalBlocked ===

/// `kubelet.go` `HandlePodRemoves` / housekeeping: "skipping delete because sources aren't ready
/// yet" (the API source has not synced, usually an unreachable API server).
fn static_pod_removal_blocked(events: &[LoggedEvent], out: &mut Vec<Finding>) {
    let group: Vec<&LoggedEvent> = events
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
            "the kubelet skips pod removal and housekeeping because its config sources are not ready ({} records \
             over {})",
            group.len(),
            human(span(&group))
        ),
        "kubelet.go HandlePodRemoves and syncLoopIteration: until every config source (file, http, api) has \
         synced, removals are skipped (\"skipping delete because sources aren't ready yet\") so a removed static \
         pod keeps running",
        "check the kubelet's connection to the API server (journalctl -u kubelet | grep -i -e 'connection refused' \
         -e Unauthorized); once the API source syncs the removal proceeds"
            .to_string(),
    );
    f.pod = pod_of(&NodeView::empty(), None, None, &group);
    f.evidence = quote(&group);
    out.push(f);
}

// === RuntimeUnhealthy ===

/// `kubelet.go` `syncLoop`: "Skipping pod synchronization" with "PLEG is not healthy" or
/// "container runtime is down": no pod on the node is started, stopped or removed.
fn runtime_unhealthy(events: &[LoggedEvent], out: &mut Vec<Finding>) {
    let group: Vec<&LoggedEvent> = events
        .iter()
        .filter(|e| e.event.kind == EventKind::PlegUnhealthy)
        .collect();
    if group.is_empty() {
        return;
    }
    let mut f = finding(
        FindingKind::RuntimeUnhealthy,
        Severity::Critical,
        format!(
            "PLEG is not healthy or the container runtime is down ({} records over {}): the kubelet starts, stops \
             and removes no pod on this node",
            group.len(),
            human(span(&group))
        ),
        "kubelet.go syncLoop and pleg/generic.go Healthy: when the PLEG has not relisted within 3 minutes the \
         kubelet skips every pod sync and the node goes NotReady",
        "crictl info and crictl ps (does the runtime answer?); journalctl -u containerd for hung shims or \
         storage errors; systemctl restart containerd"
            .to_string(),
    );
    f.evidence = quote(&group);
    out.push(f);
}

// === StuckTerminatingPod ===

/// A pod the API marked for deletion past its grace period whose sandbox is still READY or whose
/// containers still run (state), or one the kubelet was told to DELETE and keeps failing to kill
/// without ever REMOVEing (logs).
fn stuck_terminating(
    events: &[LoggedEvent],
    view: &NodeView,
    config: &Config,
    now: Timestamp,
    out: &mut Vec<Finding>,
) {
    let mut seen = std::collections::BTreeSet::new();
    if let (Some(api), Some(cri)) = (&view.api, &view.cri) {
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
                .filter(|c| {
                    c.pod_uid() == Some(uid) && c.state == crate::model::ContainerState::Running
                })
                .count();
            if ready.is_empty() && running == 0 {
                continue;
            }
            seen.insert(uid.to_string());
            let failures: Vec<&LoggedEvent> = events
                .iter()
                .filter(|e| {
                    e.event.kind.is_failure()
                        && (e.event.ids.pod_uid.as_deref() == Some(uid)
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
    }
    // From the logs: DELETE, then kill failures, and no REMOVE.
    let mut by_pod: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in events {
        let relevant = matches!(
            e.event.kind,
            EventKind::SyncLoop(SyncOp::Delete | SyncOp::Remove)
                | EventKind::KillPodFailed
                | EventKind::KillPodSandboxFailed
        ) || (e.event.kind == EventKind::ErrorSyncingPod
            && e.text.contains("KillPodSandbox"));
        if relevant
            && let Some(key) =
                pod_name_key(e).or_else(|| e.event.ids.pod_uid.as_deref().map(str::to_string))
        {
            by_pod.entry(key).or_default().push(e);
        }
    }
    for (pod, group) in by_pod {
        let deleted = group
            .iter()
            .position(|e| e.event.kind == EventKind::SyncLoop(SyncOp::Delete));
        let removed = group
            .iter()
            .any(|e| e.event.kind == EventKind::SyncLoop(SyncOp::Remove));
        let kills: Vec<&LoggedEvent> = group
            .iter()
            .copied()
            .filter(|e| e.event.kind.is_failure())
            .collect();
        if removed || kills.len() < 2 || deleted.is_none() {
            continue;
        }
        let uid = group
            .iter()
            .find_map(|e| e.event.ids.pod_uid.as_deref().map(str::to_string));
        if uid.as_ref().is_some_and(|u| seen.contains(u)) {
            continue;
        }
        let mut f = finding(
            FindingKind::StuckTerminatingPod,
            Severity::Warning,
            format!(
                "pod {pod} was deleted but the kubelet keeps failing to kill it ({} failures over {}, no SyncLoop REMOVE)",
                kills.len(),
                human(span(&kills))
            ),
            "kubelet pod_workers.go: a deleted pod's worker kills its containers and then its sandbox; while \
             KillPodSandbox fails (usually the CNI teardown) the pod stays Terminating",
            format!(
                "fix the kill error quoted below; kubectl get pod {} shows it Terminating",
                sh(&pod)
            ),
        );
        f.pod = pod_of(view, None, uid.as_deref(), &group);
        f.sandbox_id = kills.iter().find_map(|e| sandbox_key(e));
        f.evidence = quote(&kills);
        out.push(f);
    }
}

// === enrichment ===

/// Adds to every `LeakedSandbox` what the logs say of it: the kubelet's GC trying and failing
/// (stop errors, with their cause) or not trying (a stuck pod worker), because the remedies differ.
pub fn enrich(findings: &mut [Finding], events: &[LoggedEvent]) {
    for f in findings
        .iter_mut()
        .filter(|f| f.kind == FindingKind::LeakedSandbox)
    {
        let Some(id) = f.sandbox_id.clone() else {
            continue;
        };
        let uid = f.pod.as_ref().map(|p| p.uid.clone()).unwrap_or_default();
        let failures: Vec<&LoggedEvent> = events
            .iter()
            .filter(|e| {
                e.event.kind.is_failure()
                    && sandbox_key(e)
                        .is_some_and(|k| k == id || id.starts_with(k.trim_end_matches('…')))
            })
            .collect();
        let stuck = events.iter().any(|e| {
            e.event.kind == EventKind::PodWorkerNotTerminated
                && e.event.ids.pod_uid.as_deref() == Some(uid.as_str())
        });
        if !failures.is_empty() {
            let err = failures
                .iter()
                .rev()
                .find_map(|e| e.event.error.as_deref())
                .unwrap_or("");
            let (class, fix) = stop_failure_class(err);
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
