//! The catalogue: a [`ParsedLine`] → an [`Event`], keyed on the message **text**, never on
//! `file:line` (callers move between releases; `remote_runtime.go:126` became `log.go:32`).
//!
//! Every version's wording is matched: legacy printf (`Failed to stop sandbox "<id>" before
//! removing: <err>`), structured (`"Failed to stop sandbox before removing" sandboxID=…`), JSON,
//! and the runtime side (containerd's `StopPodSandbox for "<id>" failed`, CRI-O's
//! `Stopping pod sandbox: <id>`). Sources: `kubelet-forensics.md` §5 (log-string catalogue and
//! runtime-side wording), the stuck-worker "Log evidence" table, and the lines in
//! `testdata/cases/`. Upstream: kubelet `pkg/kubelet/{kubelet.go,kubelet_pods.go,
//! kubelet_volumes.go,pod_workers.go,pod_container_deletor.go,kuberuntime/kuberuntime_gc.go,
//! kuberuntime/kuberuntime_manager.go}`, `cri-client/pkg/remote_runtime.go`, containerd
//! `internal/cri/server/*.go`, CRI-O `server/*.go`.
//!
//! An event carries the IDs the line names (from fields and text, see [`super::ids`]), the
//! error text, and for failures a [`Cause`].

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::ids::{self, IdKind, Ids};
use super::record::{Component, Format, Level, ParsedLine};
use super::text::contains;

/// The kubelet pod-config operation of a `SyncLoop` line (`pkg/kubelet/types/pod_update.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum SyncOp {
    /// `SyncLoop ADD`: a pod appeared in a config source.
    Add,
    /// `SyncLoop UPDATE`.
    Update,
    /// `SyncLoop DELETE`: the API set a deletion timestamp (graceful delete).
    Delete,
    /// `SyncLoop REMOVE`: the pod left its source (API object gone, manifest removed).
    Remove,
    /// `SyncLoop RECONCILE`: status-only change.
    Reconcile,
}

/// A pod config source (`kubernetes.io/config.source`): `SyncLoop … source="api"` or the
/// legacy `SyncLoop (ADD, "api")`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigSource {
    /// The API server.
    Api,
    /// The static pod manifest directory.
    File,
    /// The static pod URL.
    Http,
}

/// The type of a PLEG pod lifecycle event (`pkg/kubelet/pleg`, `PodLifeCycleEventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PlegType {
    /// `ContainerStarted`.
    ContainerStarted,
    /// `ContainerDied`.
    ContainerDied,
    /// `ContainerRemoved`.
    ContainerRemoved,
    /// `ContainerChanged`.
    ContainerChanged,
    /// `PodSync`.
    PodSync,
    /// Any other or unreadable type.
    Other,
}

/// What a line says happened. Kubelet kinds first, then the runtime's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventKind {
    // === kubelet: pod config and lifecycle ===
    /// `"SyncLoop ADD|UPDATE|DELETE|REMOVE|RECONCILE" source=… pods=[…]`; legacy
    /// `SyncLoop (DELETE, "api"): "name_ns(uid)"`.
    SyncLoop(SyncOp),
    /// `"SyncLoop (PLEG): event for pod" event=&{ID:<uid> Type:<type> Data:<id>}`; legacy
    /// `SyncLoop (PLEG): "name_ns(uid)", event: &pleg.PodLifecycleEvent{…}`.
    Pleg(PlegType),
    /// `"Generic (PLEG): container finished" podID=… containerID=… exitCode=…`.
    ContainerFinished,
    /// `"Pod has been deleted and must be killed"` (1.22+ pod worker).
    PodMustBeKilled,
    /// `"Killing container with a grace period"` (also `… override`); legacy
    /// `Killing container "docker://<id>" with 30 second grace period`.
    KillingContainer,
    /// kubelet `"RemoveContainer" containerID=…` (legacy `[topologymanager] RemoveContainer`),
    /// or containerd `RemoveContainer for "<id>"`.
    RemoveContainer,
    /// containerd `RemoveContainer for "<id>" returns successfully`.
    RemoveContainerDone,
    /// `"Container not found in pod's containers"` (pod_container_deletor; benign).
    ContainerNotFoundInPod,
    /// `"Error syncing pod, skipping" err=…`; legacy `Error syncing pod <uid> (…), skipping: …`.
    ErrorSyncingPod,
    /// `"killPodWithSyncResult failed"`, legacy `Failed killing the pod "<name>": …`, and the
    /// `FailedKillPod` event text `failed to "KillPodSandbox" for "<uid>"`.
    KillPodFailed,
    /// `Killing unwanted pod "<name>"` (podKiller, ≤ 1.21).
    KillingUnwantedPod,
    /// `"CreatePodSandbox for pod failed"`, `"Failed to create sandbox for pod"`,
    /// `"RunPodSandbox from runtime service failed"` (legacy forms too).
    CreatePodSandboxFailed,

    // === kubelet: CRI client errors (remote_runtime.go / cri-client) ===
    /// `"ContainerStatus from runtime service failed" err=… containerID=…`; legacy
    /// `ContainerStatus "<id>" from runtime service failed: <err>`; containerd
    /// `ContainerStatus for "<id>" failed`.
    ContainerStatusFailed,
    /// `"StopPodSandbox from runtime service failed" podSandboxID=…`; legacy
    /// `StopPodSandbox "<id>" from runtime service failed: <err>`; containerd
    /// `StopPodSandbox for "<id>" failed`.
    StopPodSandboxFailed,
    /// `"RemovePodSandbox from runtime service failed"`; legacy
    /// `RemovePodSandbox "<id>" from runtime service failed: <err>`; containerd
    /// `RemovePodSandbox for "<id>" failed`.
    RemovePodSandboxFailed,
    /// Any other `… from runtime service failed` (`ListContainers with filter`,
    /// `ListPodSandbox with filter nil`, `Status`).
    RuntimeCallFailed,

    // === kubelet: deletion and garbage collection ===
    /// `"DeleteContainer returned error" containerID=… err=…`; legacy
    /// `[pod_container_deletor] DeleteContainer returned error for (id=…): …`.
    DeleteContainerFailed,
    /// `"Failed to remove container" err=… containerID=…` (GC); legacy
    /// `Failed to remove container "<id>": …`; containerd `RemoveContainer for "<id>" failed`.
    RemoveContainerFailed,
    /// `"Error getting ContainerStatus for containerID"` (GC log-dir eviction).
    GcContainerStatusFailed,
    /// `"Removing sandbox" sandboxID=…` (V4, GC is trying).
    GcRemovingSandbox,
    /// `"Failed to stop sandbox before removing" err=… sandboxID=…`; legacy
    /// `Failed to stop sandbox "<id>" before removing: <err>` (GC; the sandbox leaks).
    StopSandboxBeforeRemoveFailed,
    /// `"Failed to remove sandbox" err=… sandboxID=…`; legacy `Failed to remove sandbox "<id>": …`.
    RemoveSandboxFailed,
    /// `"Failed to stop sandbox" podSandboxID=…` (killPodWithSyncResult, no `err`); legacy and
    /// dockershim `Failed to stop sandbox "<id>"`.
    KillPodSandboxFailed,
    /// `"Container garbage collection failed" err=…` (also the `ContainerGCFailed` Node event).
    ContainerGcFailed,

    // === kubelet: housekeeping, orphans, pod workers ===
    /// Orphaned pod directories that cannot be removed: legacy
    /// `Orphaned pod "<uid>" found, but volume paths are still present on disk` (also
    /// `volume subpaths`), the roll-up `"There were many similar errors. Turn up verbosity to
    /// see them." err="orphaned pod \"<uid>\" found, but …" numErrs=N`, its detail
    /// `"Orphan pod" err=…`, and V3 `"Orphaned pod found, but volumes are not cleaned up"`.
    OrphanedPodVolumes,
    /// `"Cleaned up orphaned pod volumes dir" podUID=…`.
    OrphanedPodVolumesCleaned,
    /// `Orphaned pod "<uid>" found, but volumes not yet removed.  Reducing cpu to minimum`
    /// (pod cgroup cleanup).
    OrphanedPodPendingVolumes,
    /// `Could not construct volume information: …` / `"Could not construct volume information"`
    /// (volume reconstruction after a kubelet restart, `reconciler.go` / `reconstruct.go`): a
    /// volume under `pods/<uid>/volumes/` the kubelet cannot adopt again, so it never unmounts
    /// or removes it.
    VolumeReconstructionFailed,
    /// `"Clean up containers for orphaned pod we had not seen before"`,
    /// `"Clean up orphaned pod containers"`.
    CleanUpOrphanedPod,
    /// `"Pod worker has been requested for removal but is still not fully terminated"`
    /// (stuck worker, 1.22–1.26).
    PodWorkerNotTerminated,
    /// `"Pod has been terminated and is no longer known to the kubelet, remove all history"`.
    RemoveAllHistory,
    /// `"Pod is being synced for the first time"`.
    PodSyncedFirstTime,
    /// `"Pod is orphaned and must be torn down"`.
    PodOrphanedTornDown,
    /// `"Pod terminated all containers successfully"`, `"Pod terminated all orphaned containers
    /// successfully and worker can now stop"`.
    PodTerminated,
    /// `skipping delete because sources aren't ready yet` (in a message or an `err`).
    SkippingDeleteSourcesNotReady,
    /// `SyncLoop (housekeeping, skipped): sources aren't ready yet`.
    HousekeepingSkippedSourcesNotReady,
    /// `"Skipping pod synchronization" err="PLEG is not healthy: …"`; legacy `skipping pod
    /// synchronization - [… PLEG is not healthy: pleg was last seen active … ago …]`.
    PlegUnhealthy,

    // === kubelet: static and mirror pods ===
    /// `"Deleted mirror pod because it is outdated" pod=…`; legacy
    /// `Deleted mirror pod "<full name>" because it is outdated` and the older
    /// `Deleting mirror pod "…" because it is outdated`.
    MirrorPodOutdatedDeleted,
    /// `Deleting a mirror pod "<full name>"` / `"Deleting a mirror pod" pod=…`.
    MirrorPodDeleting,
    /// `Failed creating a mirror pod "<full name>": …` / `"Failed creating a mirror pod"`
    /// (cause forbidden or already exists).
    MirrorPodCreateFailed,

    // === runtime: containerd CRI plugin, CRI-O ===
    /// containerd `RunPodSandbox for &PodSandboxMetadata{…}`; CRI-O `Running pod sandbox: …`.
    RunPodSandboxStarted,
    /// containerd `RunPodSandbox for … returns sandbox id "<id>"`; CRI-O `Ran pod sandbox <id> …`.
    RunPodSandboxDone,
    /// containerd `RunPodSandbox for … failed`.
    RunPodSandboxFailed,
    /// containerd `StopPodSandbox for "<id>"`; CRI-O `Stopping pod sandbox: <id>`.
    StopPodSandboxStarted,
    /// containerd `StopPodSandbox for "<id>" returns successfully`; CRI-O
    /// `Stopped pod sandbox: <id>`.
    StopPodSandboxDone,
    /// containerd `RemovePodSandbox for "<id>"`; CRI-O `Removing pod sandbox: <id>`.
    RemovePodSandboxStarted,
    /// containerd `RemovePodSandbox "<id>" returns successfully`; CRI-O `Removed pod sandbox: <id>`.
    RemovePodSandboxDone,
    /// containerd `TearDown network for sandbox "<id>" successfully`.
    TearDownNetworkDone,
    /// containerd `Failed to destroy network for sandbox "<id>"`; dockershim
    /// `Error deleting network: …`.
    DestroyNetworkFailed,
    /// The runtime could not find a container: containerd `an error occurred when try to find
    /// container "<id>": not found`, CRI-O `could not find container "<id>": … ID does not exist`.
    ContainerNotFound,
    /// The runtime could not find a sandbox: `an error occurred when try to find sandbox`,
    /// `Failed to get podSandbox status for container event for sandboxID "<id>"`,
    /// `sandbox "<id>" is not found when stopping it`; CRI-O `PodSandbox with ID starting with
    /// <id> not found`, `specified pod sandbox not found: <id>`.
    SandboxNotFound,
    /// `failed to reserve sandbox name "<name>": name "<name>" is reserved for "<id>"`.
    SandboxNameReserved,
    /// `failed to reserve container name …`.
    ContainerNameReserved,
    /// containerd `cleaning up after shim disconnected` `id=<id>`.
    ShimDisconnected,
    /// containerd debug `Loaded sandbox {Metadata:{ID:<id> Name:<name>_<ns>_<uid>_<attempt> …}}`
    /// (after a restart).
    SandboxLoaded,
}

impl EventKind {
    /// Whether the event reports a failure (so it has an error text and a [`Cause`]).
    pub fn is_failure(self) -> bool {
        use EventKind::*;
        matches!(
            self,
            ErrorSyncingPod
                | KillPodFailed
                | CreatePodSandboxFailed
                | ContainerStatusFailed
                | StopPodSandboxFailed
                | RemovePodSandboxFailed
                | RuntimeCallFailed
                | DeleteContainerFailed
                | RemoveContainerFailed
                | GcContainerStatusFailed
                | StopSandboxBeforeRemoveFailed
                | RemoveSandboxFailed
                | KillPodSandboxFailed
                | ContainerGcFailed
                | OrphanedPodVolumes
                | MirrorPodCreateFailed
                | RunPodSandboxFailed
                | DestroyNetworkFailed
                | ContainerNotFound
                | SandboxNotFound
                | SandboxNameReserved
                | ContainerNameReserved
                | PlegUnhealthy
                | SkippingDeleteSourcesNotReady
        )
    }

    /// The kind a bare 64-hex ID in this event's text most likely names.
    fn default_id(self) -> Option<IdKind> {
        use EventKind::*;
        match self {
            StopPodSandboxFailed
            | RemovePodSandboxFailed
            | StopSandboxBeforeRemoveFailed
            | RemoveSandboxFailed
            | KillPodSandboxFailed
            | GcRemovingSandbox
            | RunPodSandboxStarted
            | RunPodSandboxDone
            | RunPodSandboxFailed
            | StopPodSandboxStarted
            | StopPodSandboxDone
            | RemovePodSandboxStarted
            | RemovePodSandboxDone
            | TearDownNetworkDone
            | DestroyNetworkFailed
            | SandboxNotFound
            | SandboxNameReserved
            | SandboxLoaded
            | CreatePodSandboxFailed => Some(IdKind::Sandbox),
            ContainerStatusFailed
            | DeleteContainerFailed
            | RemoveContainerFailed
            | GcContainerStatusFailed
            | KillingContainer
            | RemoveContainer
            | RemoveContainerDone
            | ContainerNotFound
            | ContainerFinished
            | ContainerNotFoundInPod
            | ContainerNameReserved => Some(IdKind::Container),
            _ => None,
        }
    }
}

/// Why a CNI teardown (`DEL`) failed, from the error text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CniFailure {
    /// `failed to destroy network for sandbox` with no more specific cause
    /// (e.g. AWS VPC CNI `del cmd: failed to process delete request`).
    DestroyNetwork,
    /// `cni plugin not initialized` (CNI config not loaded yet, typically right after boot).
    PluginNotInitialized,
    /// The plugin's datastore refused it: `connection is unauthorized: Unauthorized` (Calico).
    UnauthorizedDatastore,
    /// The cached CNI result or netconf is empty: `failed to get network "<net>" cached result`,
    /// `unexpected end of JSON input` (a 0-byte `/var/lib/cni/results/<net>-<id>-<if>`).
    EmptyCachedResult,
    /// The sandbox's network namespace is gone: `failed to open netns`, `failed to Statfs ""`,
    /// `cannot find network namespace`, `no such file or directory` on a netns path.
    MissingNetns,
    /// The plugin binary is missing or cannot run: `failed to find plugin "<p>" in path`,
    /// `fork/exec /opt/cni/bin/…`.
    PluginMissing,
}

/// The classified cause of a failure event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// The CNI plugin's teardown failed.
    CniTeardown(CniFailure),
    /// The runtime is busy with the object: `device or resource busy`, a reserved name,
    /// `already in removing state`.
    RuntimeBusy,
    /// A call timed out: `context deadline exceeded`, `DeadlineExceeded`.
    Timeout,
    /// The object does not exist (gRPC `NotFound`, `not found`, `ID does not exist`,
    /// `No such container`).
    NotFound,
    /// The API server refused (`forbidden`).
    Forbidden,
    /// The object already exists (`AlreadyExists`, HTTP 409).
    AlreadyExists,
    /// None of the above.
    Other,
}

/// A classified log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event<'p> {
    /// What happened.
    pub kind: EventKind,
    /// Severity of the line.
    pub severity: Option<Level>,
    /// Time of the line ([`ParsedLine::time`]).
    pub time: Option<Timestamp>,
    /// Who wrote the line.
    pub component: Option<Component>,
    /// The identities the line names.
    pub ids: Ids<'p>,
    /// The error text, unescaped once: the `err`/`error` field, or for printf lines the text
    /// after the first `": "` past the matched words.
    pub error: Option<Cow<'p, str>>,
    /// For failures, why (from [`Self::error`], else the message).
    pub cause: Option<Cause>,
    /// Whether the line reports a NotFound (the race family; usually benign).
    pub not_found: bool,
    /// `SyncLoop` config source.
    pub config_source: Option<ConfigSource>,
    /// How many errors a roll-up line stands for (`numErrs=N`, `There were a total of N errors`).
    pub count: Option<u32>,
    /// `gracePeriod=N` / `with N second grace period`, in seconds.
    pub grace_period_secs: Option<i64>,
    /// `exitCode=N` of a finished container.
    pub exit_code: Option<i64>,
    /// The line was cut: IDs and text may be incomplete.
    pub truncated: bool,
}

impl Event<'_> {
    /// Copies the borrowed parts, detaching the event from its line.
    pub fn into_owned(self) -> Event<'static> {
        Event {
            kind: self.kind,
            severity: self.severity,
            time: self.time,
            component: self.component,
            ids: self.ids.into_owned(),
            error: self.error.map(|e| Cow::Owned(e.into_owned())),
            cause: self.cause,
            not_found: self.not_found,
            config_source: self.config_source,
            count: self.count,
            grace_period_secs: self.grace_period_secs,
            exit_code: self.exit_code,
            truncated: self.truncated,
        }
    }
}

/// A message match: the kind, and where the matched words end (for printf error text).
struct Hit {
    kind: EventKind,
    words_end: usize,
}

fn hit(kind: EventKind, words: &str) -> Option<Hit> {
    Some(Hit {
        kind,
        words_end: words.len(),
    })
}

/// The kind, message and error text of a line the catalogue names.
struct Head<'p> {
    kind: EventKind,
    msg: &'p str,
    error: Option<&'p str>,
}

fn head<'p>(line: &'p ParsedLine<'_>) -> Option<Head<'p>> {
    if line.format == Format::Unparsed {
        return None;
    }
    let msg: &'p str = line.msg.trim();
    let field_err: Option<&'p str> = line.field("err").or_else(|| line.field("error"));
    let Hit {
        mut kind,
        words_end,
    } = match_msg(msg, line, field_err)
        .or_else(|| cut_message(msg, line))
        .or_else(|| fallback(msg, field_err))?;
    let printf = !matches!(
        line.format,
        Format::KlogStructured | Format::Json | Format::Logfmt
    );
    let whole_msg = matches!(
        kind,
        EventKind::OrphanedPodVolumes | EventKind::PlegUnhealthy
    ) && field_err.is_none();
    let error: Option<&'p str> = if !kind.is_failure() {
        field_err
    } else if let Some(e) = field_err {
        Some(e)
    } else if whole_msg {
        Some(msg)
    } else if printf {
        msg.get(words_end..)
            .and_then(|rest| rest.find(": ").map(|at| rest[at + 2..].trim()))
            .filter(|e| !e.is_empty())
    } else {
        None
    };
    // A sandbox name reservation is reported by whichever call hit it.
    if matches!(
        kind,
        EventKind::RunPodSandboxFailed
            | EventKind::CreatePodSandboxFailed
            | EventKind::ErrorSyncingPod
            | EventKind::RuntimeCallFailed
    ) && contains!(error.unwrap_or(msg), "failed to reserve sandbox name")
    {
        kind = EventKind::SandboxNameReserved;
    }
    Some(Head { kind, msg, error })
}

/// The kind of event a line is, without its IDs, cause or flags: the cheap part of
/// [`classify`], for counting passes and prefilters (ID extraction is about half the cost of
/// classifying). Always equal to `classify(line).map(|e| e.kind)`.
pub fn event_kind(line: &ParsedLine<'_>) -> Option<EventKind> {
    let h = head(line)?;
    Some(match h.kind {
        EventKind::Pleg(_) => EventKind::Pleg(pleg_type(line, h.msg)),
        k => k,
    })
}

/// Classifies a parsed line. `None` for lines the catalogue does not name and for
/// [`Format::Unparsed`] lines (a [`Format::Message`] line is classified from its text).
pub fn classify<'p>(line: &'p ParsedLine<'_>) -> Option<Event<'p>> {
    let Head {
        mut kind,
        msg,
        error,
    } = head(line)?;
    let mut ids = Ids::default();
    let default = kind.default_id();
    ids::from_fields(line, default, &mut ids);
    // Only the text that runs into the end of a cut record can hold a cut ID.
    ids::scan_text(
        msg,
        default,
        line.truncated && line.fields.is_empty(),
        &mut ids,
    );
    if let Some(e) = error.filter(|e| !within(msg, e)) {
        let last = line
            .fields
            .last()
            .is_some_and(|f| std::ptr::eq(f.value.as_str(), e));
        ids::scan_text(e, default, line.truncated && last, &mut ids);
    }
    if matches!(
        kind,
        EventKind::KillPodFailed | EventKind::KillingUnwantedPod
    ) && ids.pods.is_empty()
    {
        // Legacy `Failed killing the pod "<name>"`, `Killing unwanted pod "<name>"`: a bare name.
        let name = msg.find("pod \"").and_then(|at| first_quoted(&msg[at..]));
        if let Some(name) = name.filter(|n| !n.is_empty() && !n.contains(['_', ' ', '/'])) {
            ids.pods.push(ids::PodName {
                namespace: None,
                name: Cow::Borrowed(name),
                uid: None,
            });
        }
    }

    let text_for_flags = error.unwrap_or(msg);
    let not_found = matches!(
        kind,
        EventKind::ContainerNotFound | EventKind::SandboxNotFound
    ) || is_not_found(text_for_flags);
    let cause = kind
        .is_failure()
        .then(|| cause_of(text_for_flags, line.truncated));
    let config_source = match kind {
        EventKind::SyncLoop(_) => config_source(line, msg),
        _ => None,
    };
    let count = match kind {
        EventKind::OrphanedPodVolumes => line
            .field("numErrs")
            .and_then(|n| n.parse().ok())
            .or_else(|| total_errors(msg)),
        _ => None,
    };
    let grace_period_secs = match kind {
        EventKind::KillingContainer => line
            .field("gracePeriod")
            .and_then(|g| g.parse().ok())
            .or_else(|| legacy_grace(msg)),
        _ => None,
    };
    let exit_code = match kind {
        EventKind::ContainerFinished => line.field("exitCode").and_then(|c| c.parse().ok()),
        _ => None,
    };
    if let EventKind::Pleg(_) = kind {
        kind = EventKind::Pleg(pleg_type(line, msg));
        if let Some((uid, data)) = legacy_pleg_ids(msg) {
            if ids::is_pod_uid(uid) {
                ids.set(IdKind::PodUid, uid);
            }
            if ids::is_full_id(data) {
                ids.set(IdKind::Container, data);
            }
        }
    }

    Some(Event {
        kind,
        severity: line.severity,
        time: line.time,
        component: line.component,
        ids,
        error: error.map(Cow::Borrowed),
        cause,
        not_found,
        config_source,
        count,
        grace_period_secs,
        exit_code,
        truncated: line.truncated,
    })
}

/// The message table, dispatched on the first byte.
fn match_msg(s: &str, line: &ParsedLine<'_>, err: Option<&str>) -> Option<Hit> {
    use EventKind::*;
    let b = s.as_bytes();
    let starts = |p: &str| s.starts_with(p);
    macro_rules! has {
        ($lit:literal) => {
            contains!(s, $lit)
        };
    }
    match *b.first()? {
        b'S' => {
            if starts("SyncLoop (PLEG)") {
                return hit(Pleg(PlegType::Other), "SyncLoop (PLEG)");
            }
            if starts("SyncLoop (housekeeping, skipped)") {
                return hit(
                    HousekeepingSkippedSourcesNotReady,
                    "SyncLoop (housekeeping, skipped)",
                );
            }
            if let Some(rest) = s.strip_prefix("SyncLoop ") {
                let rest = rest.strip_prefix('(').unwrap_or(rest);
                let op = [
                    ("ADD", SyncOp::Add),
                    ("UPDATE", SyncOp::Update),
                    ("DELETE", SyncOp::Delete),
                    ("REMOVE", SyncOp::Remove),
                    ("RECONCILE", SyncOp::Reconcile),
                ]
                .into_iter()
                .find(|(w, _)| {
                    rest.starts_with(w)
                        && !rest
                            .as_bytes()
                            .get(w.len())
                            .is_some_and(u8::is_ascii_alphabetic)
                })?;
                return hit(SyncLoop(op.1), "SyncLoop");
            }
            if starts("StopPodSandbox from runtime service failed")
                || (starts("StopPodSandbox \"") && has!("from runtime service failed"))
            {
                return hit(StopPodSandboxFailed, "StopPodSandbox");
            }
            if starts("StopPodSandbox for ") {
                return hit(
                    if has!("returns successfully") {
                        StopPodSandboxDone
                    } else if s.ends_with("failed") || has!("\" failed") {
                        StopPodSandboxFailed
                    } else {
                        StopPodSandboxStarted
                    },
                    "StopPodSandbox for ",
                );
            }
            if starts("Stopping pod sandbox: ") {
                return hit(StopPodSandboxStarted, "Stopping pod sandbox");
            }
            if starts("Stopped pod sandbox: ") || starts("Stopped pod sandbox (already stopped)") {
                return hit(StopPodSandboxDone, "Stopped pod sandbox");
            }
            if starts("Skipping pod synchronization")
                && (has!("PLEG is not healthy")
                    || err.is_some_and(|e| {
                        contains!(e, "PLEG is not healthy")
                            || (line.truncated && ends_with_start_of(e, "PLEG is not healthy", 8))
                    }))
            {
                return hit(PlegUnhealthy, "Skipping pod synchronization");
            }
            if starts("Status from runtime service failed") {
                return hit(RuntimeCallFailed, "Status from runtime service failed");
            }
            None
        }
        b'R' => {
            if starts("RemovePodSandbox from runtime service failed")
                || (starts("RemovePodSandbox \"") && has!("from runtime service failed"))
            {
                return hit(RemovePodSandboxFailed, "RemovePodSandbox");
            }
            if starts("RemovePodSandbox \"") && has!("returns successfully") {
                return hit(RemovePodSandboxDone, "RemovePodSandbox");
            }
            if starts("RemovePodSandbox for ") {
                return hit(
                    if s.ends_with("failed") || has!("\" failed") {
                        RemovePodSandboxFailed
                    } else if has!("returns successfully") {
                        RemovePodSandboxDone
                    } else {
                        RemovePodSandboxStarted
                    },
                    "RemovePodSandbox for ",
                );
            }
            if starts("RemoveContainer for ") {
                return hit(
                    if has!("returns successfully") {
                        RemoveContainerDone
                    } else if s.ends_with("failed") || has!("\" failed") {
                        RemoveContainerFailed
                    } else {
                        RemoveContainer
                    },
                    "RemoveContainer for ",
                );
            }
            if s == "RemoveContainer" || starts("RemoveContainer ") {
                return hit(RemoveContainer, "RemoveContainer");
            }
            if starts("RunPodSandbox from runtime service failed") {
                return hit(CreatePodSandboxFailed, "RunPodSandbox");
            }
            if starts("RunPodSandbox for ") {
                return hit(
                    if has!("returns sandbox id") {
                        RunPodSandboxDone
                    } else if has!(" failed") {
                        RunPodSandboxFailed
                    } else {
                        RunPodSandboxStarted
                    },
                    "RunPodSandbox for ",
                );
            }
            if starts("Running pod sandbox: ") {
                return hit(RunPodSandboxStarted, "Running pod sandbox");
            }
            if starts("Ran pod sandbox ") {
                return hit(RunPodSandboxDone, "Ran pod sandbox");
            }
            if starts("Removing sandbox") {
                return hit(GcRemovingSandbox, "Removing sandbox");
            }
            if starts("Removing pod sandbox: ") {
                return hit(RemovePodSandboxStarted, "Removing pod sandbox");
            }
            if starts("Removed pod sandbox: ") {
                return hit(RemovePodSandboxDone, "Removed pod sandbox");
            }
            None
        }
        b'C' => {
            if starts("ContainerStatus from runtime service failed")
                || (starts("ContainerStatus \"") && has!("from runtime service failed"))
            {
                return hit(ContainerStatusFailed, "ContainerStatus");
            }
            // containerd logs `ContainerStatus for "<id>"` at error level only when it failed;
            // a cut line keeps the level (case 04).
            if starts("ContainerStatus for ")
                && (s.ends_with("failed")
                    || has!("\" failed")
                    || (line.truncated && line.severity == Some(Level::Error)))
            {
                return hit(ContainerStatusFailed, "ContainerStatus for ");
            }
            if starts("Container garbage collection failed") {
                return hit(ContainerGcFailed, "Container garbage collection failed");
            }
            if starts("Clean up containers for orphaned pod")
                || starts("Clean up orphaned pod containers")
            {
                return hit(CleanUpOrphanedPod, "Clean up");
            }
            if starts("Container not found in pod's containers") {
                return hit(
                    ContainerNotFoundInPod,
                    "Container not found in pod's containers",
                );
            }
            if starts("Could not construct volume information") {
                return hit(
                    VolumeReconstructionFailed,
                    "Could not construct volume information",
                );
            }
            if starts("Cleaned up orphaned pod volumes dir") {
                return hit(
                    OrphanedPodVolumesCleaned,
                    "Cleaned up orphaned pod volumes dir",
                );
            }
            if starts("CreatePodSandbox for pod") && has!("failed") {
                return hit(CreatePodSandboxFailed, "CreatePodSandbox for pod");
            }
            None
        }
        b'D' => {
            if starts("DeleteContainer returned error") {
                return hit(DeleteContainerFailed, "DeleteContainer returned error");
            }
            if starts("Deleted mirror pod because it is outdated")
                || ((starts("Deleted mirror pod \"") || starts("Deleting mirror pod \""))
                    && has!("because it is outdated"))
            {
                return hit(MirrorPodOutdatedDeleted, "Deleted mirror pod");
            }
            if starts("Deleting a mirror pod") {
                return hit(MirrorPodDeleting, "Deleting a mirror pod");
            }
            None
        }
        b'[' => {
            if starts("[pod_container_deletor] DeleteContainer returned error") {
                return hit(
                    DeleteContainerFailed,
                    "[pod_container_deletor] DeleteContainer returned error",
                );
            }
            if starts("[topologymanager] RemoveContainer") {
                return hit(RemoveContainer, "[topologymanager] RemoveContainer");
            }
            None
        }
        b'E' => {
            if starts("Error syncing pod") {
                return hit(ErrorSyncingPod, "Error syncing pod");
            }
            if starts("Error getting ContainerStatus for containerID") {
                return hit(
                    GcContainerStatusFailed,
                    "Error getting ContainerStatus for containerID",
                );
            }
            if starts("Error deleting network") {
                return hit(DestroyNetworkFailed, "Error deleting network");
            }
            None
        }
        b'F' => {
            if starts("Failed to stop sandbox before removing")
                || (starts("Failed to stop sandbox \"") && has!("before removing"))
            {
                return hit(StopSandboxBeforeRemoveFailed, "Failed to stop sandbox");
            }
            if starts("Failed to stop sandbox") {
                return hit(KillPodSandboxFailed, "Failed to stop sandbox");
            }
            if starts("Failed to remove sandbox") {
                return hit(RemoveSandboxFailed, "Failed to remove sandbox");
            }
            if starts("Failed to remove container") {
                return hit(RemoveContainerFailed, "Failed to remove container");
            }
            if starts("Failed creating a mirror pod") {
                return hit(MirrorPodCreateFailed, "Failed creating a mirror pod");
            }
            if starts("Failed to destroy network for sandbox") {
                return hit(
                    DestroyNetworkFailed,
                    "Failed to destroy network for sandbox",
                );
            }
            if starts("Failed killing the pod") {
                return hit(KillPodFailed, "Failed killing the pod");
            }
            if starts("Failed to get podSandbox status for container event for sandboxID") {
                return hit(SandboxNotFound, "Failed to get podSandbox status");
            }
            if starts("Failed to create sandbox for pod") {
                return hit(CreatePodSandboxFailed, "Failed to create sandbox for pod");
            }
            if starts("Failed to delete pod")
                && (has!("sources aren't ready yet")
                    || err.is_some_and(|e| contains!(e, "sources aren't ready yet")))
            {
                return hit(SkippingDeleteSourcesNotReady, "Failed to delete pod");
            }
            None
        }
        b'G' if starts("Generic (PLEG): container finished") => {
            hit(ContainerFinished, "Generic (PLEG): container finished")
        }
        b'K' => {
            if starts("Killing container with a grace period") || starts("Killing container \"") {
                return hit(KillingContainer, "Killing container");
            }
            if starts("Killing unwanted pod") {
                return hit(KillingUnwantedPod, "Killing unwanted pod");
            }
            None
        }
        b'k' if starts("killPodWithSyncResult failed") => {
            hit(KillPodFailed, "killPodWithSyncResult failed")
        }
        b'L' => {
            if (starts("ListContainers") || starts("ListPodSandbox"))
                && has!("from runtime service failed")
            {
                return hit(RuntimeCallFailed, "List");
            }
            if starts("Loaded sandbox") {
                return hit(SandboxLoaded, "Loaded sandbox");
            }
            None
        }
        b'O' => {
            if starts("Orphaned pod \"") {
                return hit(
                    if has!("volumes not yet removed") {
                        OrphanedPodPendingVolumes
                    } else {
                        OrphanedPodVolumes
                    },
                    "Orphaned pod",
                );
            }
            if starts("Orphaned pod found, but volumes are not cleaned up") || s == "Orphan pod" {
                return hit(OrphanedPodVolumes, "Orphan");
            }
            None
        }
        b'P' => {
            let table = [
                (
                    "Pod worker has been requested for removal but is still not fully terminated",
                    PodWorkerNotTerminated,
                ),
                (
                    "Pod has been terminated and is no longer known to the kubelet, remove all history",
                    RemoveAllHistory,
                ),
                ("Pod is orphaned and must be torn down", PodOrphanedTornDown),
                ("Pod is being synced for the first time", PodSyncedFirstTime),
                ("Pod terminated all containers successfully", PodTerminated),
                (
                    "Pod terminated all orphaned containers successfully",
                    PodTerminated,
                ),
                ("Pod has been deleted and must be killed", PodMustBeKilled),
            ];
            table
                .into_iter()
                .find(|(p, _)| starts(p))
                .and_then(|(p, k)| hit(k, p))
        }
        b'T' => {
            if starts("TearDown network for sandbox ") && has!("successfully") {
                return hit(TearDownNetworkDone, "TearDown network for sandbox");
            }
            if starts("There were many similar errors")
                && (has!("rphaned pod") || err.is_some_and(|e| contains!(e, "rphaned pod")))
            {
                return hit(OrphanedPodVolumes, "There were many similar errors");
            }
            None
        }
        b'c' if starts("cleaning up after shim disconnected") => {
            hit(ShimDisconnected, "cleaning up after shim disconnected")
        }
        b'f' => {
            if starts("failed to reserve sandbox name") {
                return hit(SandboxNameReserved, "failed to reserve sandbox name");
            }
            if starts("failed to reserve container name") {
                return hit(ContainerNameReserved, "failed to reserve container name");
            }
            if starts("failed to destroy network for sandbox") {
                return hit(
                    DestroyNetworkFailed,
                    "failed to destroy network for sandbox",
                );
            }
            None
        }
        b's' => {
            if starts("skipping pod synchronization") && has!("PLEG is not healthy") {
                return hit(PlegUnhealthy, "skipping pod synchronization");
            }
            if starts("sandbox \"") && has!("is not found when stopping it") {
                return hit(SandboxNotFound, "sandbox");
            }
            None
        }
        _ => {
            let _ = line;
            None
        }
    }
}

/// The catalogue's message set as fixed strings, what `grep -F` needs to find the lines
/// [`classify`] names: each message's words up to its first quote (structured lines escape
/// quotes), or, where a message counts only together with a phrase, that phrase. Every record
/// the catalogue names contains one of them, except a structured message cut short by the end
/// of its line (case 05). `message_keys_cover_the_message_table` checks the list against the
/// source of the message table: a new catalogue entry needs its key here.
pub const MESSAGE_KEYS: &[&str] = &[
    // kubelet: pod config and lifecycle
    "SyncLoop (PLEG)",
    "SyncLoop (housekeeping, skipped)",
    "SyncLoop ADD",
    "SyncLoop UPDATE",
    "SyncLoop DELETE",
    "SyncLoop REMOVE",
    "SyncLoop RECONCILE",
    "SyncLoop (ADD",
    "SyncLoop (UPDATE",
    "SyncLoop (DELETE",
    "SyncLoop (REMOVE",
    "SyncLoop (RECONCILE",
    "Generic (PLEG): container finished",
    "Pod has been deleted and must be killed",
    "Killing container with a grace period",
    "Killing container ",
    "RemoveContainer",
    "Container not found in pod's containers",
    "Error syncing pod",
    "killPodWithSyncResult failed",
    "Failed killing the pod",
    "KillPodSandbox",
    "Killing unwanted pod",
    "CreatePodSandbox for pod",
    "Failed to create sandbox for pod",
    "RunPodSandbox from runtime service failed",
    // kubelet: CRI client errors
    "from runtime service failed",
    "ContainerStatus for ",
    // kubelet: deletion and garbage collection
    "DeleteContainer returned error",
    "Failed to remove container",
    "Error getting ContainerStatus for containerID",
    "Removing sandbox",
    "Failed to stop sandbox",
    "Failed to remove sandbox",
    "Container garbage collection failed",
    // kubelet: housekeeping, orphans, pod workers
    "Orphaned pod ",
    "Orphaned pod found, but volumes are not cleaned up",
    "Orphan pod",
    "There were many similar errors",
    "Cleaned up orphaned pod volumes dir",
    "Could not construct volume information",
    "Clean up containers for orphaned pod",
    "Clean up orphaned pod containers",
    "Pod worker has been requested for removal but is still not fully terminated",
    "Pod has been terminated and is no longer known to the kubelet, remove all history",
    "Pod is being synced for the first time",
    "Pod is orphaned and must be torn down",
    "Pod terminated all containers successfully",
    "Pod terminated all orphaned containers successfully",
    "sources aren't ready yet",
    "Skipping pod synchronization",
    "skipping pod synchronization",
    "PLEG is not healthy",
    // kubelet: static and mirror pods
    "Deleted mirror pod because it is outdated",
    "Deleted mirror pod ",
    "Deleting mirror pod ",
    "Deleting a mirror pod",
    "Failed creating a mirror pod",
    // runtime: containerd CRI plugin, CRI-O
    "RunPodSandbox for ",
    "Running pod sandbox: ",
    "Ran pod sandbox ",
    "StopPodSandbox for ",
    "Stopping pod sandbox: ",
    "Stopped pod sandbox: ",
    "Stopped pod sandbox (already stopped)",
    "RemovePodSandbox for ",
    "RemovePodSandbox ",
    "Removing pod sandbox: ",
    "Removed pod sandbox: ",
    "TearDown network for sandbox ",
    "Failed to destroy network for sandbox",
    "failed to destroy network for sandbox",
    "Error deleting network",
    "an error occurred when try to find container",
    "ID does not exist",
    "could not find container",
    "an error occurred when try to find sandbox",
    "Failed to get podSandbox status for container event for sandboxID",
    "is not found when stopping it",
    "specified pod sandbox not found",
    "PodSandbox with ID starting with",
    "failed to reserve sandbox name",
    "failed to reserve container name",
    "cleaning up after shim disconnected",
    "Loaded sandbox",
];

/// Structured messages matched whole; a message cut by the end of the line (case 05:
/// `"ContainerStatus from runtime ser`) matches the one it is the start of.
const STRUCTURED: &[(&str, EventKind)] = &[
    (
        "ContainerStatus from runtime service failed",
        EventKind::ContainerStatusFailed,
    ),
    (
        "StopPodSandbox from runtime service failed",
        EventKind::StopPodSandboxFailed,
    ),
    (
        "RemovePodSandbox from runtime service failed",
        EventKind::RemovePodSandboxFailed,
    ),
    (
        "DeleteContainer returned error",
        EventKind::DeleteContainerFailed,
    ),
    (
        "Failed to stop sandbox before removing",
        EventKind::StopSandboxBeforeRemoveFailed,
    ),
    ("Failed to remove sandbox", EventKind::RemoveSandboxFailed),
    (
        "Failed to remove container",
        EventKind::RemoveContainerFailed,
    ),
    ("Error syncing pod, skipping", EventKind::ErrorSyncingPod),
    (
        "Error getting ContainerStatus for containerID",
        EventKind::GcContainerStatusFailed,
    ),
    (
        "Container garbage collection failed",
        EventKind::ContainerGcFailed,
    ),
    (
        "Deleted mirror pod because it is outdated",
        EventKind::MirrorPodOutdatedDeleted,
    ),
    (
        "Pod worker has been requested for removal but is still not fully terminated",
        EventKind::PodWorkerNotTerminated,
    ),
    (
        "Pod has been terminated and is no longer known to the kubelet, remove all history",
        EventKind::RemoveAllHistory,
    ),
    (
        "Pod is orphaned and must be torn down",
        EventKind::PodOrphanedTornDown,
    ),
    (
        "There were many similar errors. Turn up verbosity to see them.",
        EventKind::OrphanedPodVolumes,
    ),
    (
        "Killing container with a grace period",
        EventKind::KillingContainer,
    ),
    ("killPodWithSyncResult failed", EventKind::KillPodFailed),
];

fn cut_message(msg: &str, line: &ParsedLine<'_>) -> Option<Hit> {
    let msg_cut = line.truncated
        && line.fields.is_empty()
        && matches!(line.format, Format::KlogStructured | Format::Json);
    if !msg_cut || msg.len() < 12 {
        return None;
    }
    STRUCTURED
        .iter()
        .find(|(known, _)| known.starts_with(msg))
        .map(|&(_, kind)| Hit {
            kind,
            words_end: msg.len(),
        })
}

/// Phrases matched anywhere in the message or error when the message table has no entry.
fn fallback(msg: &str, err: Option<&str>) -> Option<Hit> {
    use EventKind::*;
    // Most lines name no catalogued event: one pass over each text rules out every phrase below.
    if !has_fallback_phrase(msg) && !err.is_some_and(has_fallback_phrase) {
        return None;
    }
    let text = |f: &dyn Fn(&str) -> bool| f(msg) || err.is_some_and(f);
    let kind = if text(&|t| contains!(t, "failed to reserve sandbox name")) {
        SandboxNameReserved
    } else if text(&|t| contains!(t, "failed to reserve container name")) {
        ContainerNameReserved
    } else if text(&|t| contains!(t, "an error occurred when try to find container")) {
        ContainerNotFound
    } else if text(&|t| contains!(t, "an error occurred when try to find sandbox")) {
        SandboxNotFound
    } else if text(&|t| {
        contains!(t, "ID does not exist") || contains!(t, "could not find container")
    }) {
        ContainerNotFound
    } else if text(&|t| {
        contains!(t, "specified pod sandbox not found")
            || contains!(t, "PodSandbox with ID starting with")
    }) {
        SandboxNotFound
    } else if text(&|t| contains!(t, "skipping delete because sources aren't ready yet")) {
        SkippingDeleteSourcesNotReady
    } else if text(&|t| contains!(t, "sources aren't ready yet")) {
        HousekeepingSkippedSourcesNotReady
    } else if text(&|t| contains!(t, "\"KillPodSandbox\" for \"")) {
        KillPodFailed
    } else if text(&|t| contains!(t, "PLEG is not healthy")) {
        PlegUnhealthy
    } else if text(&|t| contains!(t, "from runtime service failed")) {
        RuntimeCallFailed
    } else {
        return None;
    };
    Some(Hit { kind, words_end: 0 })
}

/// Every phrase [`fallback`] looks for (a phrase that contains another is covered by it). A text
/// with none of them is no fallback match. `fallback_phrases_cover_fallback` checks the list
/// against the source of `fallback`.
const FALLBACK_PHRASES: &[&str] = &[
    "failed to reserve sandbox name",
    "failed to reserve container name",
    "an error occurred when try to find container",
    "an error occurred when try to find sandbox",
    "ID does not exist",
    "could not find container",
    "specified pod sandbox not found",
    "PodSandbox with ID starting with",
    "sources aren't ready yet",
    "\"KillPodSandbox\" for \"",
    "PLEG is not healthy",
    "from runtime service failed",
];

/// Whether `text` contains one of [`FALLBACK_PHRASES`], in one SIMD pass.
fn has_fallback_phrase(text: &str) -> bool {
    static SEARCHER: LazyLock<AhoCorasick> = LazyLock::new(|| {
        // Panics: building fails only past the automaton's size limits, far above a dozen
        // short phrases.
        // Leftmost-first lets the SIMD (Teddy) prefilter run; any match answers `is_match`.
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(FALLBACK_PHRASES)
            .expect("fallback phrases build a searcher")
    });
    SEARCHER.is_match(text)
}

/// Classifies the cause of a failure from its error text.
///
/// Order: CNI teardown (with its sub-cause), runtime busy, timeout, not found, forbidden,
/// already exists, other. CNI wins because CNI errors often carry a timeout or not-found inside.
pub fn classify_cause(err: &str) -> Cause {
    cause_of(err, false)
}

/// [`classify_cause`] for a text that may be cut at its end: a cut inside
/// `failed to destroy network for sandbox` (case 18: `… desc = failed to destr`) still counts.
fn cause_of(err: &str, cut: bool) -> Cause {
    macro_rules! has {
        ($lit:literal) => {
            contains!(err, $lit)
        };
    }
    let cni = (has!("failed to destroy network for sandbox")
        || (cut && ends_with_start_of(err, "failed to destroy network for sandbox", 14)))
        || has!("NetworkPlugin cni failed to teardown pod")
        || has!("cni plugin not initialized")
        || has!("Error deleting network")
        || has!("failed (delete)")
        || has!("failed to open netns")
        || has!("CNI failed to retrieve network namespace path");
    if cni {
        let sub = if has!("cni plugin not initialized") {
            CniFailure::PluginNotInitialized
        } else if has!("nauthorized") {
            CniFailure::UnauthorizedDatastore
        } else if has!("unexpected end of JSON input") || has!("cached result") {
            CniFailure::EmptyCachedResult
        } else if has!("failed to find plugin") || has!("fork/exec") {
            CniFailure::PluginMissing
        } else if has!("netns")
            || has!("Statfs")
            || has!("network namespace")
            || has!("cannot find network")
        {
            CniFailure::MissingNetns
        } else {
            CniFailure::DestroyNetwork
        };
        return Cause::CniTeardown(sub);
    }
    if has!("device or resource busy")
        || has!("is reserved for")
        || has!("failed to reserve")
        || has!("already in removing state")
    {
        return Cause::RuntimeBusy;
    }
    if has!("context deadline exceeded") || has!("DeadlineExceeded") {
        return Cause::Timeout;
    }
    if is_not_found(err) {
        return Cause::NotFound;
    }
    if has!("forbidden") || has!("Forbidden") {
        return Cause::Forbidden;
    }
    if has!("AlreadyExists") || has!("already exists") {
        return Cause::AlreadyExists;
    }
    Cause::Other
}

/// Whether `text` ends with at least `min` bytes of the start of `phrase` (a phrase cut by the
/// end of a truncated line).
fn ends_with_start_of(text: &str, phrase: &str, min: usize) -> bool {
    (min..phrase.len())
        .rev()
        .any(|n| text.ends_with(&phrase[..n]))
}

fn is_not_found(text: &str) -> bool {
    contains!(text, "NotFound")
        || contains!(text, "not found")
        || contains!(text, "ID does not exist")
        || contains!(text, "No such container")
}

fn config_source(line: &ParsedLine<'_>, msg: &str) -> Option<ConfigSource> {
    let word = match line.field("source") {
        Some(s) => s,
        // legacy: SyncLoop (ADD, "api"): …
        None => msg
            .split_once(", \"")
            .map(|(_, r)| r.split('"').next().unwrap_or(""))?,
    };
    match word {
        "api" => Some(ConfigSource::Api),
        "file" => Some(ConfigSource::File),
        "http" => Some(ConfigSource::Http),
        _ => None,
    }
}

fn pleg_type(line: &ParsedLine<'_>, msg: &str) -> PlegType {
    let t = line
        .field("event")
        .and_then(|e| ids::struct_member(e, "Type"))
        .or_else(|| {
            msg.find("event: ")
                .and_then(|at| ids::struct_member(&msg[at..], "Type"))
        });
    match t {
        Some("ContainerStarted") => PlegType::ContainerStarted,
        Some("ContainerDied") => PlegType::ContainerDied,
        Some("ContainerRemoved") => PlegType::ContainerRemoved,
        Some("ContainerChanged") => PlegType::ContainerChanged,
        Some("PodSync") => PlegType::PodSync,
        _ => PlegType::Other,
    }
}

/// Legacy `event: &pleg.PodLifecycleEvent{ID:"<uid>", Type:"…", Data:"<id>"}`.
fn legacy_pleg_ids(msg: &str) -> Option<(&str, &str)> {
    let ev = &msg[msg.find("event: ")?..];
    Some((
        ids::struct_member(ev, "ID")?,
        ids::struct_member(ev, "Data").unwrap_or(""),
    ))
}

/// `There were a total of N errors similar to this.`
fn total_errors(msg: &str) -> Option<u32> {
    let at = msg.find("There were a total of ")?;
    let rest = &msg[at + "There were a total of ".len()..];
    rest.split(' ').next()?.parse().ok()
}

/// Legacy `Killing container "…" with 30 second grace period`.
fn legacy_grace(msg: &str) -> Option<i64> {
    let at = msg.find(" second grace period")?;
    msg[..at].rsplit(' ').next()?.parse().ok()
}

/// Whether `inner` is a slice of `outer`'s memory (the printf error is a slice of the message).
fn within(outer: &str, inner: &str) -> bool {
    let start = outer.as_ptr() as usize;
    let at = inner.as_ptr() as usize;
    at >= start && at + inner.len() <= start + outer.len()
}

fn first_quoted(s: &str) -> Option<&str> {
    let open = s.find('"')?;
    let rest = &s[open + 1..];
    Some(&rest[..rest.find('"')?])
}

#[cfg(test)]
mod tests;
