//! `SandboxCreateFailing`: CRI `RunPodSandbox` keeps failing for pods that wait to start.
//!
//! The kubelet's pod worker calls `createPodSandbox` (`kuberuntime_manager.go` `SyncPod`) at
//! every sync of a pod without a ready sandbox; when the runtime fails, it logs "Failed to
//! create sandbox for pod" and "CreatePodSandbox for pod failed" (`kuberuntime_sandbox.go`,
//! `kuberuntime_manager.go`), its CRI client "RunPodSandbox from runtime service failed", and
//! containerd `RunPodSandbox for &PodSandboxMetadata{…} failed`; the pod stays in
//! ContainerCreating and the worker retries with a back-off (10 s doubling to 5 min).
//!
//! The cause is classified from the error: the CNI ADD (`failed to setup network for sandbox`,
//! a plugin's `(add)`), or the sandbox name held by an older sandbox (`failed to reserve
//! sandbox name … is reserved for "<id>"`). What other kinds already report is left to them,
//! so nothing is reported twice:
//! - a timed-out `RunPodSandbox` (DeadlineExceeded) is `RuntimeUnhealthy`'s ("the runtime is too
//!   slow to create containers");
//! - a name held by a sandbox that `LeakedSandbox` reports (its "keeps the pod's sandbox name
//!   reserved" variant) is that finding's.
//!
//! Must: two or more attempts of one pod (records more than [`ONE_ATTEMPT`] apart) with no
//! sandbox created for it after the last; one attempt when the sandbox name is reserved (no
//! next sync mends that while the holder lives). One failed attempt is an info (maybe a
//! transient error the next sync mends, a CNI agent still starting at boot). Must not: a pod
//! whose sandbox was created later, a pod the CRI view shows with a READY sandbox created after
//! the last failure.
//!
//! One attempt is enough when the sandbox it failed to create cannot be torn down either (a
//! `SandboxStopFailing` of that sandbox ID, reported before this rule runs): the runtime keeps a
//! sandbox whose failed ADD it could not clean up (containerd: "encountered an error cleaning up
//! failed sandbox …, marking sandbox state as SANDBOX_UNKNOWN"), and the kubelet's
//! `computePodActions` then asks to kill it before creating another (`KillPod: true,
//! CreateSandbox: true`); `SyncPod` returns when `killPodWithSyncResult` fails, so the pod
//! worker loops on `StopPodSandbox` and never tries the ADD again (the real kubelet v1.34.4 with
//! the CNI plugin binary missing, `sandbox_create/testdata/`). The cause is the ADD: the
//! finding says it once, with the teardown loop as its evidence, and that `SandboxStopFailing`
//! is folded into it (its severity kept when higher) instead of being reported beside it.

use std::collections::BTreeMap;

use crate::finding::{Evidence, Finding, FindingKind, Severity};
use crate::logs::{Cause, CniFailure, EventKind};
use crate::model::PodRef;

use super::logs::{
    LogInput, LoggedEvent, Logs, after, attempts, finding, line, listed, of_pod, own_uid, plural,
    pod_name_key, quote,
};
use super::teardown::{cni_plugin, error_quote, error_text, quoted_after};

/// The failure kinds of a sandbox creation.
const FAILURES: &[EventKind] = &[
    EventKind::CreatePodSandboxFailed,
    EventKind::RunPodSandboxFailed,
    EventKind::SandboxNameReserved,
];

/// A sandbox created: containerd's `RunPodSandbox … returns sandbox id`, CRI-O's `Ran pod
/// sandbox`, the kubelet's V4 "Created PodSandbox for pod".
const CREATED: &[EventKind] = &[EventKind::RunPodSandboxDone, EventKind::PodSandboxCreated];

/// A pod that waits for its sandbox.
struct Waiting<'l> {
    /// The pod, when the records name it.
    pod: Option<PodRef>,
    /// Its sandbox creation failures, by time.
    failures: Vec<&'l LoggedEvent>,
    /// The runtime's failed teardowns of its failed sandboxes' networks ([`cleans_up_an_add`]).
    cleanups: Vec<&'l LoggedEvent>,
}

/// Why a CNI ADD fails, when its error says more than that it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum AddFailure {
    /// The plugin's binary is not in the CNI bin path (`failed to find plugin`): every pod's
    /// ADD on this node fails.
    PluginMissing,
    /// The plugin's node agent is not running (Calico's `nodename`, flannel's `subnet.env`).
    AgentNotRunning,
    /// The plugin cannot reach its datastore or the API server.
    DatastoreUnreachable,
    /// The plugin wrote no error libcni could read: it crashed or was killed (`netplugin failed
    /// with no error message: signal: killed`, CRI-O's CNI timeout or the OOM killer).
    NoErrorMessage,
    /// The sandbox's network namespace was gone when the plugin came to it (`failed to Statfs
    /// "/proc/<pid>/ns/net": no such file or directory`): its infra container exited at once,
    /// or the sandbox was being removed (kubernetes/kubernetes#72044, a cron job's pod).
    NetnsGone,
    /// No CNI config is loaded (containerd's `cni plugin not initialized`, CRI-O's `cni config
    /// uninitialized`): /etc/cni/net.d holds none the runtime reads, so every pod's ADD fails.
    NoConfig,
    /// The plugin's network config does not parse (`failed to parse config: failed to parse
    /// network configuration: json: cannot unmarshal …`): every ADD of that network fails the
    /// same way, so no retry mends it.
    ConfigInvalid,
    /// The bridge plugin cannot give its bridge the gateway address (`failed to set bridge addr:
    /// "cni0" already has an IP address different from 10.244.1.1/24`, `… could not add IP
    /// address to "cni0": permission denied`; containernetworking/plugins `bridge.go`
    /// `ensureAddr`): the bridge keeps its addresses between ADDs, so every pod's ADD fails the
    /// same way until it is mended.
    BridgeAddress,
    /// The error says no more.
    Other,
}

/// Why a pod's sandbox cannot be created.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// The CNI plugin's ADD fails (with the plugin's name when the error gives it), and why
    /// when the error says.
    CniAdd(Option<String>, AddFailure),
    /// The name `<name>_<ns>_<uid>_<attempt>` is held by the sandbox of this ID.
    NameReserved(String),
    /// CRI-O holds the name `k8s_<name>_<ns>_<uid>_<attempt>` for an earlier `RunPodSandbox`
    /// of the pod (`error reserving pod name … for id <new id>: name is reserved`): still in
    /// progress, or its sandbox left. The holder is not named.
    CrioNameReserved,
    /// The pod's RuntimeClass handler is not configured in the runtime: containerd's `no runtime
    /// for "<handler>" is configured`, CRI-O's `failed to find runtime handler <handler> from
    /// runtime list`. No retry mends a configuration.
    NoRuntimeHandler(String),
    /// The kubelet's cgroup driver is not the runtime's: runc's `expected cgroupsPath to be of
    /// format "slice:prefix:name" for systemd cgroups, got "/kubepods/…"` (the runtime on
    /// systemd, the kubelet on cgroupfs), docker's `cgroup-parent for systemd cgroup should be a
    /// valid slice`. Every sandbox fails; no retry mends it.
    CgroupDriverMismatch,
    /// A call timed out (`RuntimeUnhealthy` reports it).
    Timeout,
    /// The runtime did not answer at all (gRPC `Unavailable`: `transport is closing`, its
    /// socket refusing): `RuntimeUnhealthy` reports it when it lasts.
    RuntimeDown,
    /// Anything else.
    Other,
}

/// The sandbox holding a pod's sandbox name in docker's and iSulad's wording: `Conflict. The
/// name "k8s_POD_<pod>_<ns>_<uid>_<n>" is already in use by sandbox <id>` (iSulad), `… by
/// container "<id>"` (docker under dockershim, whose sandbox is its `k8s_POD_` container).
fn name_in_use_by(err: &str) -> Option<String> {
    let (name, rest) = err.split_once("is already in use by ")?;
    let rest = match rest.strip_prefix("sandbox ") {
        Some(r) => r,
        None if name.contains("k8s_POD_") => rest.strip_prefix("container ")?,
        None => return None,
    };
    let id: String = rest
        .trim_start_matches(['"', '\\'])
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (id.len() >= 12).then_some(id)
}

fn classify(e: &LoggedEvent) -> Class {
    if super::leaked_sandbox::crio_name_reservation(e) {
        return Class::CrioNameReserved;
    }
    let err = error_text(e);
    if e.event.kind == EventKind::SandboxNameReserved
        || err.contains("is reserved for")
        || err.contains("failed to reserve sandbox name")
    {
        let holder = quoted_after(&err, "is reserved for ").map(str::to_string);
        return Class::NameReserved(holder.or_else(|| name_in_use_by(&err)).unwrap_or_default());
    }
    if let Some(holder) = name_in_use_by(&err) {
        return Class::NameReserved(holder);
    }
    if err.contains("failed to setup network")
        // dockershim: `failed to set up sandbox container "<id>" network for pod "<name>":
        // NetworkPlugin cni failed to set up pod "<name>_<ns>" network: …`.
        || err.contains("failed to set up sandbox container")
        || err.contains("NetworkPlugin cni failed to set up pod")
        || err.contains("(add)")
        // CRI-O: `failed to create pod network sandbox k8s_<name>_…(<id>): error adding pod
        // <ns>_<name> to CNI network "<net>": <error>` (server/sandbox_network.go, ocicni).
        || err.contains("failed to create pod network sandbox")
        || err.contains("to CNI network")
        || err.contains("cni plugin not initialized")
        || err.contains("cni config uninitialized")
        || err.contains("failed to find plugin")
        || ocicni_add(e)
    {
        let why = match crate::logs::catalogue::cni_failure(&err) {
            _ if err.contains("failed to find plugin") => AddFailure::PluginMissing,
            _ if err.contains("cni plugin not initialized")
                || err.contains("cni config uninitialized") =>
            {
                AddFailure::NoConfig
            }
            _ if err.contains("failed to set bridge addr") => AddFailure::BridgeAddress,
            _ if err.contains("failed to parse network configuration")
                || err.contains("failed to parse config: ") =>
            {
                AddFailure::ConfigInvalid
            }
            CniFailure::AgentNotRunning => AddFailure::AgentNotRunning,
            CniFailure::DatastoreUnreachable => AddFailure::DatastoreUnreachable,
            CniFailure::PluginNoErrorMessage => AddFailure::NoErrorMessage,
            CniFailure::MissingNetns => AddFailure::NetnsGone,
            _ => AddFailure::Other,
        };
        return Class::CniAdd(cni_plugin(&err).map(str::to_string), why);
    }
    if let Some(handler) = quoted_after(&err, "no runtime for ") {
        return Class::NoRuntimeHandler(handler.to_string());
    }
    if let Some((_, rest)) = err.split_once("failed to find runtime handler ") {
        let handler = rest.split_whitespace().next().unwrap_or_default();
        return Class::NoRuntimeHandler(handler.to_string());
    }
    if err.contains("for systemd cgroups, got")
        || err.contains("cgroup-parent for systemd cgroup should be a valid slice")
    {
        return Class::CgroupDriverMismatch;
    }
    if e.event.cause == Some(Cause::Timeout) {
        return Class::Timeout;
    }
    if e.text.contains("code = Unavailable") {
        return Class::RuntimeDown;
    }
    Class::Other
}

/// CRI-O's own line of a failed CNI ADD (ocicni `Error adding network: …`, `Error while adding
/// pod to CNI network "<net>": …`, `Error while adding to cni network: …`): it names no pod or
/// sandbox.
fn ocicni_add(e: &LoggedEvent) -> bool {
    e.event.kind == EventKind::RunPodSandboxFailed
        && (e.text.contains("Error adding network")
            || e.text.contains("adding pod to CNI network")
            || e.text.contains("adding to cni network"))
}

/// The CNI ADD failures that name no sandbox (CRI-O's), by time: the runtime tears
/// the failed sandbox's network down right after (CRI-O's RunPodSandbox, on its way out), and a
/// failure of that DEL, naming no sandbox either, is the ADD's cleanup ([`cleans_up_an_add`]).
pub(super) fn anonymous_add_failures<'l>(logs: &Logs<'l>) -> Vec<&'l LoggedEvent> {
    let mut adds: Vec<&LoggedEvent> = logs
        .of(&[EventKind::RunPodSandboxFailed])
        .filter(|e| {
            e.time.is_some()
                && logs.sandbox_key(e).is_none()
                && matches!(classify(e), Class::CniAdd(..))
        })
        .collect();
    adds.sort_by_key(|e| e.time);
    adds
}

/// The failed ADD that `e`, a CNI teardown failure, cleans up, if it is one: `e` names no
/// sandbox or pod, and that ADD failure naming no sandbox (of `adds`, by time) came at most
/// [`ONE_ATTEMPT`](super::logs::ONE_ATTEMPT) before it. `SandboxCreateFailing` reports it with
/// its ADD; no sandbox stop failed.
pub(super) fn cleans_up_an_add<'l>(
    logs: &Logs<'_>,
    adds: &[&'l LoggedEvent],
    e: &LoggedEvent,
) -> Option<&'l LoggedEvent> {
    let t = e.time?;
    if !(e.event.kind == EventKind::DestroyNetworkFailed
        || matches!(e.event.cause, Some(Cause::CniTeardown(_))))
        || logs.sandbox_key(e).is_some()
        || logs.uid_of(e).is_some()
        || own_uid(e).is_some()
    {
        return None;
    }
    let at = adds.partition_point(|a| a.time.is_some_and(|a| a <= t));
    let add = *adds.get(at.checked_sub(1)?)?;
    add.time
        .is_some_and(|a| t.duration_since(a) < super::logs::ONE_ATTEMPT)
        .then_some(add)
}

/// The class of the last attempt of `group` (time-sorted): its records within
/// [`ONE_ATTEMPT`](super::logs::ONE_ATTEMPT) of the last, the most telling first (the kubelet
/// logs one failure up to four times, and the pod worker's copy may be cut before the cause).
fn last_class(group: &[&LoggedEvent]) -> Class {
    let last = group.last().and_then(|e| e.time);
    group
        .iter()
        .rev()
        .take_while(|e| match (e.time, last) {
            (Some(t), Some(l)) => l.duration_since(t) < super::logs::ONE_ATTEMPT,
            _ => true,
        })
        .map(|e| classify(e))
        .min_by_key(|c| match c {
            Class::NameReserved(h) if !h.is_empty() => 0,
            Class::NameReserved(_)
            | Class::CrioNameReserved
            | Class::NoRuntimeHandler(_)
            | Class::CgroupDriverMismatch => 1,
            Class::CniAdd(..) => 2,
            Class::Timeout | Class::RuntimeDown => 3,
            Class::Other => 4,
        })
        .unwrap_or(Class::Other)
}

/// The pod a record is of: its UID (named, through its container or sandbox, or the one UID
/// the logs give its `namespace/name`), else `namespace/name`.
pub(super) fn pod_key(logs: &Logs<'_>, e: &LoggedEvent) -> Option<String> {
    own_uid(e).or_else(|| logs.uid_of(e)).or_else(|| {
        let name = pod_name_key(e)?;
        match logs.uids_of(&name) {
            [one] => Some((*one).to_string()),
            _ => Some(name),
        }
    })
}

/// The sandbox a creation failure names: `failed to setup network for sandbox "<id>"`
/// (dockershim: `failed to set up sandbox container "<id>" network`; the sandbox the runtime
/// made before the ADD failed), else the record's sandbox ID.
fn failed_sandbox(e: &LoggedEvent) -> Option<String> {
    let err = error_text(e);
    quoted_after(&err, "network for sandbox ")
        .or_else(|| quoted_after(&err, "failed to set up sandbox container "))
        .map(str::to_string)
        .or_else(|| e.event.ids.sandbox_id.as_deref().map(str::to_string))
}

/// The teardown findings of the sandboxes whose creation `group` failed, looked up in
/// `teardowns` (the sandbox ID of each `SandboxStopFailing` and `StuckTerminatingPod` in `out`
/// from the rules before, with its position; without the API view, the kill `SyncPod` makes of
/// a failed sandbox reads as a pod stuck terminating: it is the create path's). A cut failed ID
/// (`…`) matches every finding's ID it begins. Their positions in `out`, each once.
fn stuck_teardowns(group: &[&LoggedEvent], teardowns: &BTreeMap<&str, Vec<usize>>) -> Vec<usize> {
    let mut at = Vec::new();
    for id in group.iter().filter_map(|e| failed_sandbox(e)) {
        at.extend(with_prefix(teardowns, id.trim_end_matches('…')));
    }
    at.sort_unstable();
    at.dedup();
    at
}

/// The finding positions of `ids` (positions by sandbox ID) whose ID begins with `prefix`, in
/// ID order.
fn with_prefix<'m, 'p>(
    ids: &'m BTreeMap<&str, Vec<usize>>,
    prefix: &'p str,
) -> impl Iterator<Item = usize> + use<'m, 'p> {
    ids.range::<str, _>((
        std::ops::Bound::Included(prefix),
        std::ops::Bound::Unbounded,
    ))
    .take_while(move |(k, _)| k.starts_with(prefix))
    .flat_map(|(_, at)| at.iter().copied())
}

/// Whether the pod worker's `Error syncing pod` record `e` is a sandbox creation failure:
/// `failed to "CreatePodSandbox"` (legacy `pod_workers.go:191] Error syncing pod <uid> (…),
/// skipping: failed to "CreatePodSandbox" for …`, and the structured `"Error syncing pod,
/// skipping" err="failed to \"CreatePodSandbox\" …"`), which an excerpt may hold alone.
fn syncing_failed_creation(e: &LoggedEvent) -> bool {
    e.text.contains("failed to \"CreatePodSandbox\"")
        || e.text.contains("failed to \\\"CreatePodSandbox\\\"")
}

/// The key of the failures no record ties to a pod (the CRI client's `RunPodSandbox from
/// runtime service failed`, which names only the sandbox).
const NO_POD: &str = "";

/// Joins the failures keyed by a bare pod name (a runtime's line cut before the namespace:
/// containerd's `&PodSandboxMetadata{Name:<name>,` under a pager) to the one pod of that name
/// the other keys name (`namespace/name`, or a UID whose name the logs know): one pod, not
/// two. A bare name that two pods (of two namespaces) have stays apart.
fn join_bare_names(logs: &Logs<'_>, by_pod: &mut BTreeMap<String, Vec<&LoggedEvent>>) {
    let bare: Vec<String> = by_pod
        .keys()
        .filter(|k| !k.is_empty() && !k.contains('/') && !crate::logs::ids::is_pod_uid(k.as_str()))
        .cloned()
        .collect();
    for name in bare {
        let named: Vec<&String> = by_pod
            .keys()
            .filter(|k| **k != name)
            .filter(|k| match k.split_once('/') {
                Some((_, n)) => n == name,
                None => logs.names.get(k.as_str()).is_some_and(|(_, n)| *n == name),
            })
            .collect();
        if let [one] = named.as_slice() {
            let one = (*one).clone();
            let moved = by_pod.remove(&name).unwrap_or_default();
            let group = by_pod.entry(one).or_default();
            group.extend(moved);
            group.sort_by_key(|e| e.time);
        }
    }
}

pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let logs = input.logs;
    let mut by_pod: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    let mut podless: Vec<&LoggedEvent> = Vec::new();
    let mut failures: Vec<&LoggedEvent> = logs.of(FAILURES).collect();
    failures.extend(
        logs.of(&[EventKind::ErrorSyncingPod])
            .filter(|e| syncing_failed_creation(e)),
    );
    failures.sort_by_key(|e| e.time);
    for e in &failures {
        match pod_key(logs, e) {
            Some(k) => by_pod.entry(k).or_default().push(e),
            None => podless.push(e),
        }
    }
    // A failure that names no pod is one of a named attempt when a named failure is within
    // ONE_ATTEMPT of it (the kubelet logs the CRI client's line and its own together); the
    // others stand for attempts of pods the excerpt does not name.
    // The named failures' times, sorted once: each pod-less one looks up its nearest.
    let mut named_times: Vec<jiff::Timestamp> =
        by_pod.values().flatten().filter_map(|n| n.time).collect();
    named_times.sort_unstable();
    let named_near = |e: &LoggedEvent| super::logs::within_an_attempt(&named_times, e);
    let podless: Vec<&LoggedEvent> = podless.into_iter().filter(|e| !named_near(e)).collect();
    if !podless.is_empty() {
        by_pod.insert(NO_POD.to_string(), podless);
    }
    join_bare_names(logs, &mut by_pod);
    if by_pod.is_empty() {
        return;
    }
    // The failed ADDs' own cleanups that failed (CRI-O's DEL right after an ADD failure naming
    // no sandbox), by the pod of the ADD each cleans up.
    let adds = anonymous_add_failures(logs);
    let mut cleanups_by_key: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    if !adds.is_empty() {
        for e in logs.all {
            if super::teardown::teardown_caller(e).is_none() {
                continue;
            }
            if let Some(add) = cleans_up_an_add(logs, &adds, e) {
                let key = pod_key(logs, add).unwrap_or_else(|| NO_POD.to_string());
                cleanups_by_key.entry(key).or_default().push(e);
            }
        }
    }
    let created: Vec<&LoggedEvent> = logs.of(CREATED).collect();
    // Each creation's pod, found once: the pods below look theirs up.
    let mut created_of: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for c in &created {
        if let Some(k) = pod_key(logs, c) {
            created_of.entry(k).or_default().push(c);
        }
    }
    // What the rules before reported, looked up by sandbox ID rather than scanned per pod.
    let mut teardown_ids: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut leaked_ids: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, f) in out.iter().enumerate() {
        let Some(id) = f.sandbox_id.as_deref() else {
            continue;
        };
        match f.kind {
            FindingKind::SandboxStopFailing | FindingKind::StuckTerminatingPod => {
                teardown_ids.entry(id).or_default().push(i);
            }
            FindingKind::LeakedSandbox => {
                leaked_ids.entry(id).or_default().push(i);
            }
            _ => {}
        }
    }
    let runtime_unhealthy = out.iter().any(|f| f.kind == FindingKind::RuntimeUnhealthy);
    // The pods still waiting, by the class of their latest failure.
    let mut waiting: BTreeMap<Class, Vec<Waiting<'_>>> = BTreeMap::new();
    // The pods whose sandbox creation failed once, not since retried in the logs.
    let mut once: BTreeMap<Class, Vec<Waiting<'_>>> = BTreeMap::new();
    let mut earliest: Option<&LoggedEvent> = None;
    // The SandboxStopFailing findings folded in, by the class they go to.
    let mut folded: BTreeMap<Class, Vec<usize>> = BTreeMap::new();
    for (key, group) in by_pod {
        let last = *group.last().expect("a group has a record");
        let stuck = stuck_teardowns(&group, &teardown_ids);
        let cleanup = cleanups_by_key.remove(&key).unwrap_or_default();
        let class = last_class(&group);
        // A reserved name is no transient the next sync mends: once is enough. So is CRI-O's: the
        // kubelet retried a RunPodSandbox that ran past its runtime request timeout (2m), a
        // sandbox creation that slow (a creation of the pod logged after it ends the finding).
        let reserved = matches!(
            class,
            Class::NameReserved(_)
                | Class::CrioNameReserved
                | Class::NoRuntimeHandler(_)
                | Class::CgroupDriverMismatch
                | Class::CniAdd(_, AddFailure::ConfigInvalid | AddFailure::BridgeAddress)
        );
        // One attempt: the next sync may mend it, so only an info (below).
        let single = attempts(&group) < 2 && stuck.is_empty() && cleanup.is_empty() && !reserved;
        if created_of
            .get(&key)
            .is_some_and(|cs| cs.iter().any(|c| after(c, last)))
        {
            continue;
        }
        let pod = if key == NO_POD {
            None
        } else {
            logs.pod_of(
                input.view,
                &group,
                None,
                // A key is a UID, `namespace/name`, or a bare name (a runtime line cut before
                // the namespace): only a UID is passed as one.
                Some(&key)
                    .filter(|k| crate::logs::ids::is_pod_uid(k))
                    .map(|k| k.as_str()),
            )
        };
        // The pod got its sandbox after all (PLEG saw a container of it start), or it goes
        // away (deleted, removed): it waits no more.
        if super::logs::started_after(logs, pod.as_ref(), last)
            || super::logs::going_away(logs, pod.as_ref(), last)
        {
            continue;
        }
        if let (Some(cri), Some(p), Some(t)) = (&input.view.cri, &pod, last.time)
            && cri.sandboxes.iter().any(|s| {
                s.pod.uid == p.uid
                    && s.state == crate::model::SandboxState::Ready
                    && s.created_at > t
            })
        {
            continue;
        }
        match &class {
            Class::Timeout | Class::RuntimeDown if runtime_unhealthy => {
                continue;
            }
            Class::NameReserved(holder)
                if !holder.is_empty()
                    && with_prefix(&leaked_ids, holder.trim_end_matches('…'))
                        .next()
                        .is_some() =>
            {
                continue;
            }
            _ => {}
        }
        if single {
            once.entry(class).or_default().push(Waiting {
                pod,
                failures: group,
                cleanups: cleanup,
            });
            continue;
        }
        if earliest.is_none_or(|e| after(e, group[0])) {
            earliest = Some(group[0]);
        }
        folded.entry(class.clone()).or_default().extend(stuck);
        waiting.entry(class).or_default().push(Waiting {
            pod,
            failures: group,
            cleanups: cleanup,
        });
    }
    for (class, pods) in once {
        // A teardown finding of the same plugin that says so already counts these.
        if let Class::CniAdd(Some(plugin), _) = &class {
            let said = super::teardown::also_fails_on_add(plugin);
            if out.iter().any(|f| f.summary.contains(&said)) {
                continue;
            }
        }
        out.push(failed_once(&class, &pods));
    }
    // The folded teardowns leave `out`; their findings go with their class.
    let mut taken: Vec<usize> = folded.values().flatten().copied().collect();
    taken.sort_unstable();
    taken.dedup();
    let mut teardowns: BTreeMap<usize, Finding> = BTreeMap::new();
    if !taken.is_empty() {
        let kept: Vec<Finding> = std::mem::take(out);
        for (i, f) in kept.into_iter().enumerate() {
            if taken.binary_search(&i).is_ok() {
                teardowns.insert(i, f);
            } else {
                out.push(f);
            }
        }
    }
    // No pod got a sandbox since the first of these failures: nothing on the node can start.
    let pods_waiting: usize = waiting.values().map(Vec::len).sum();
    // PLEG's `ContainerStarted` of any pod is a sandbox created too.
    let none_created = earliest.is_some_and(|first| {
        !created.iter().any(|c| after(c, first))
            && !logs
                .of(&[EventKind::Pleg(crate::logs::PlegType::ContainerStarted)])
                .any(|c| after(c, first))
    });
    for (class, pods) in waiting {
        let stuck: Vec<Finding> = folded
            .get(&class)
            .into_iter()
            .flatten()
            .filter_map(|i| teardowns.remove(i))
            .collect();
        // A CNI plugin whose binary is missing fails every pod's ADD on this node.
        let node_wide = matches!(class, Class::CniAdd(_, AddFailure::PluginMissing));
        let severity = if (pods_waiting >= 2 || node_wide) && none_created {
            Severity::Critical
        } else {
            Severity::Warning
        }
        .max(
            stuck
                .iter()
                .map(|f| f.severity)
                .max()
                .unwrap_or(Severity::Info),
        );
        let records: Vec<&LoggedEvent> = {
            let mut r: Vec<&LoggedEvent> = pods
                .iter()
                .flat_map(|w| w.failures.iter().copied())
                .collect();
            r.sort_by_key(|e| e.time);
            r
        };
        let (what, rule, fix) = describe(&class);
        let names = pod_names(&pods);
        let cleanup: Vec<&LoggedEvent> = pods
            .iter()
            .flat_map(|w| w.cleanups.iter().copied())
            .collect();
        let mut f = finding(
            FindingKind::SandboxCreateFailing,
            severity,
            format!(
                "pod sandboxes cannot be created: {what}; {} in ContainerCreating ({}){}{}{}",
                plural(pods.len(), "pod waits", "pods wait"),
                listed(&names),
                if severity == Severity::Critical {
                    ": no pod on this node got a sandbox since the first failure"
                } else {
                    ""
                },
                if stuck.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} cannot be torn down either, so the kubelet retries the teardown and \
                         never the ADD",
                        plural(stuck.len(), "failed sandbox", "failed sandboxes")
                    )
                },
                if cleanup.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; the runtime's teardown of the failed sandbox's network failed too ({}), \
                         so the plugin's state of it may be left",
                        plural(super::logs::records(&cleanup), "log record", "log records")
                    )
                }
            ),
            rule,
            fix,
        );
        if let [
            Waiting {
                pod,
                failures: group,
                ..
            },
        ] = pods.as_slice()
        {
            f.pod = pod.clone();
            f.evidence.push(Evidence::new(
                super::logs::source_of(group[0]),
                format!(
                    "{}{}",
                    plural(attempts(group), "attempt", "attempts"),
                    of_pod(pod.as_ref())
                ),
            ));
        }
        let last = records.last().copied();
        f.evidence.push(Evidence::new(
            super::logs::source_of(records[0]),
            format!("cause: {}", last.map(cause_text).unwrap_or_default()),
        ));
        f.evidence.extend(quote(&records));
        f.evidence.extend(quote(&cleanup));
        if let Some(l) = last {
            let quoted = line(l);
            if !f.evidence.contains(&quoted) {
                f.evidence.push(quoted);
            }
        }
        // The teardown loop of each failed sandbox: what its SandboxStopFailing said, and its
        // first and last records.
        for t in stuck {
            f.evidence.push(Evidence::new(
                t.evidence
                    .first()
                    .map_or(crate::finding::EvidenceSource::KubeletLog, |e| e.source),
                format!(
                    "kuberuntime_manager.go SyncPod kills the failed sandbox before it creates \
                     another, and that fails: {}",
                    t.summary
                ),
            ));
            let n = t.evidence.len();
            for (i, e) in t.evidence.into_iter().enumerate() {
                if (i == 0 || i + 1 == n) && !f.evidence.contains(&e) {
                    f.evidence.push(e);
                }
            }
        }
        out.push(f);
    }
}

/// How the summary names the pods of `pods`: `namespace/name`, else the UID.
fn pod_names(pods: &[Waiting<'_>]) -> Vec<String> {
    pods.iter()
        .map(|w| match &w.pod {
            Some(p) => super::logs::pod_label(p),
            None => match w.failures.iter().find_map(|e| cut_metadata_name(&e.text)) {
                Some(name) => {
                    format!("a pod the records do not name whole: its name begins {name}…")
                }
                None => "a pod the records do not name".to_string(),
            },
        })
        .collect()
}

/// The start of the pod name in containerd's `&PodSandboxMetadata{Name:<name>` when the line is
/// cut inside it, before its namespace (a pager's or a terminal's cut): what the line says of
/// its pod.
fn cut_metadata_name(text: &str) -> Option<&str> {
    let rest = &text[text.find("PodSandboxMetadata{Name:")? + "PodSandboxMetadata{Name:".len()..];
    if rest.contains(',') {
        return None; // whole: the pod is read from it
    }
    let name = rest.trim_end_matches(['>', '…', '"', '\\']).trim_end();
    (!name.is_empty()).then_some(name)
}

/// The pods of `class` whose sandbox creation failed in one attempt the logs do not show
/// retried or mended: an info, with the cause and the error, since the pod worker's next sync
/// (after its back-off) may succeed (a CNI agent still starting at boot); a second failed
/// attempt makes it the warning above.
fn failed_once(class: &Class, pods: &[Waiting<'_>]) -> Finding {
    let (what, rule, fix) = describe(class);
    let mut records: Vec<&LoggedEvent> = pods
        .iter()
        .flat_map(|w| w.failures.iter().copied())
        .collect();
    records.sort_by_key(|e| e.time);
    let mut f = finding(
        FindingKind::SandboxCreateFailing,
        Severity::Info,
        format!(
            "a pod sandbox creation failed once: {what} ({}); the kubelet retries at the pod's next \
             sync, and a second failure makes this a warning",
            listed(pod_names(pods))
        ),
        rule,
        fix,
    );
    if let [Waiting { pod, .. }] = pods {
        f.pod = pod.clone();
    }
    let last = records.last().copied();
    f.evidence.push(Evidence::new(
        super::logs::source_of(records[0]),
        format!("cause: {}", last.map(cause_text).unwrap_or_default()),
    ));
    f.evidence.extend(quote(&records));
    f
}

/// The cause a failure's record gives: its error, or that the line was cut before it.
fn cause_text(e: &LoggedEvent) -> String {
    if e.event.error.is_none() && e.event.truncated {
        "not in the log: the line is cut before its error".to_string()
    } else {
        error_quote(e)
    }
}

/// What a class of failure says: the summary's words, the kubelet rule, the fix.
fn describe(class: &Class) -> (String, &'static str, String) {
    match class {
        Class::CniAdd(plugin, why) => (
            format!(
                "the CNI ADD fails{}{}",
                plugin
                    .as_deref()
                    .map(|p| format!(" (plugin {p})"))
                    .unwrap_or_default(),
                match why {
                    AddFailure::PluginMissing => ": the plugin's binary is not in the CNI bin path",
                    AddFailure::AgentNotRunning =>
                        ": the plugin's node agent is not running (the file it writes at its start is missing, or it refuses the plugin's calls)",
                    AddFailure::DatastoreUnreachable =>
                        ": the plugin cannot reach its datastore or the API server",
                    AddFailure::NoErrorMessage =>
                        ": the plugin failed with no error message (crashed or killed?)",
                    AddFailure::NetnsGone =>
                        ": the sandbox's network namespace was already gone (its infra container exited, or the sandbox was being removed)",
                    AddFailure::NoConfig =>
                        ": no CNI config is loaded (/etc/cni/net.d holds none: the network add-on is not deployed yet, or its agent has not written its config), so no pod on the node gets a network",
                    AddFailure::ConfigInvalid =>
                        ": the plugin's network config does not parse (the error names the field), so no retry mends it",
                    AddFailure::BridgeAddress =>
                        ": the bridge plugin cannot set its bridge's address, which no retry mends",
                    AddFailure::Other => "",
                }
            ),
            "CRI RunPodSandbox sets up the pod network (the CNI ADD) before it returns: when the plugin \
             fails, the runtime removes the sandbox and the kubelet's pod worker tries again at its next \
             sync, and the pod stays in ContainerCreating",
            format!(
                "check the CNI plugin on this node: its config in /etc/cni/net.d, its binary in /opt/cni/bin{}, \
                 its agent pod (calico-node, cilium, aws-node, …) and its log for the ADD; IPAM exhaustion \
                 shows as no IP addresses available{}",
                plugin
                    .as_deref()
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default(),
                if *why == AddFailure::BridgeAddress {
                    "; the bridge: ip addr show cni0 against the node's pod CIDR (kubectl get node \
                     <node> -o jsonpath='{.spec.podCIDR}'): an address of another CIDR (the node \
                     re-joined, the add-on reinstalled) goes with ip link delete cni0 (and \
                     flannel.1), which the plugin creates again at the next ADD; permission denied \
                     is the kernel refusing the address (an IPv6 range with \
                     net.ipv6.conf.all.disable_ipv6=1) or a runtime without CAP_NET_ADMIN"
                } else {
                    ""
                }
            ),
        ),
        Class::NameReserved(holder) => (
            format!(
                "the pod's sandbox name is held by sandbox {}",
                if holder.is_empty() { "(not named)" } else { holder }
            ),
            "containerd CRI RunPodSandbox reserves <name>_<namespace>_<uid>_<attempt> (docker and \
             iSulad: k8s_POD_<name>_<namespace>_<uid>_<attempt>); an older sandbox holding it makes \
             every new RunPodSandbox of the pod fail (containerd/cri #1014)",
            format!(
                "remove the holding sandbox: crictl stopp {h} && crictl rmp {h} (or restart the runtime)",
                h = if holder.is_empty() { "<id>" } else { holder }
            ),
        ),
        Class::CrioNameReserved => (
            "CRI-O holds the pod's sandbox name for an earlier RunPodSandbox of the pod".to_string(),
            "CRI-O's RunPodSandbox reserves k8s_<name>_<namespace>_<uid>_<attempt> (ReservePodName); \
             while an earlier RunPodSandbox of the pod is still in progress (the kubelet retried it \
             after its runtime request timeout) or its sandbox is left, every new one fails",
            "crictl pods --namespace <ns> --name <pod> shows the sandbox CRI-O holds: a NotReady one \
             is removed with crictl stopp <id> && crictl rmp <id>; none means a creation still in \
             progress: sandbox creation is slow, read CRI-O's log (journalctl -u crio) for the CNI ADD \
             and the pause image of that sandbox"
                .to_string(),
        ),
        Class::NoRuntimeHandler(handler) => (
            format!(
                "the runtime has no handler {handler:?} for the pod's RuntimeClass, so no retry \
                 mends it"
            ),
            "CRI RunPodSandbox with the runtime handler of the pod's RuntimeClass: the runtime \
             fails every sandbox of a handler its configuration does not define",
            format!(
                "kubectl get runtimeclass -o wide (which class names handler {handler:?}); define it \
                 in the runtime (containerd: [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.{handler}], \
                 CRI-O: [crio.runtime.runtimes.{handler}]) and restart it, or fix the RuntimeClass"
            ),
        ),
        Class::CgroupDriverMismatch => (
            "the kubelet's cgroup driver is not the runtime's: the runtime uses systemd cgroups \
             and the kubelet gives cgroupfs paths (/kubepods/…), so every sandbox fails and no \
             retry mends it"
                .to_string(),
            "the kubelet's cgroupDriver (KubeletConfiguration, --cgroup-driver) names the cgroup \
             parent of every sandbox; runc rejects a cgroupfs path when the runtime runs it with \
             systemd cgroups (containerd SystemdCgroup = true, CRI-O cgroup_manager = systemd, \
             docker native.cgroupdriver=systemd)",
            "make them the same: cgroupDriver: systemd in /var/lib/kubelet/config.yaml (the \
             default of kubeadm 1.22 and later) to match the runtime, or the runtime's back to \
             cgroupfs (containerd: SystemdCgroup = false under \
             [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]); then \
             systemctl restart the runtime and the kubelet"
                .to_string(),
        ),
        Class::Timeout => (
            "RunPodSandbox times out".to_string(),
            "the CRI RunPodSandbox call runs out of the kubelet's runtime request timeout (2m)",
            "crictl info; the runtime's log around these times".to_string(),
        ),
        Class::RuntimeDown => (
            "the runtime does not answer RunPodSandbox (Unavailable)".to_string(),
            "the CRI client's call finds no runtime behind its socket (the runtime stopped, \
             restarting or crashed); the pod worker retries at its next sync",
            "systemctl status containerd (or crio); journalctl -u containerd for why it stopped"
                .to_string(),
        ),
        Class::Other => (
            "RunPodSandbox fails".to_string(),
            "kuberuntime_manager.go SyncPod: createPodSandbox fails and the pod worker retries at its next sync",
            "read the error below and the runtime's log (journalctl -u containerd) for RunPodSandbox".to_string(),
        ),
    }
}

#[cfg(test)]
mod tests;
