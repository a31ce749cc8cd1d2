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
use super::recorder;
use super::text::contains;

pub mod messages;
use messages::{Cond, Wording};

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
    /// CRI-O's stop loop gave up on the stop signal: `Stopping container <id> with stop signal
    /// timed out. Killing...` (`internal/oci/runtime_oci.go` `StopLoopForContainer`; without
    /// the dots in older releases). Once is the grace period running out (SIGKILL follows);
    /// again and again for one container is a kill that never ends (a process in D state).
    StopSignalTimedOut,
    /// The runtime was asked to stop a container: CRI-O `Stopping container: <id> (timeout:
    /// <n>s)` (`server/container_stop.go` `StopContainer`), containerd `StopContainer for "<id>"
    /// with timeout <n> (s)`.
    StopContainerStarted,
    /// The runtime stopped it: CRI-O `Stopped container <id>: <ns>/<pod>/<name>`, containerd
    /// `StopContainer for "<id>" returns successfully`.
    StopContainerDone,
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
    /// A container the runtime fails to stop or kill: kubelet `"StopContainer from runtime
    /// service failed" containerID=…` (1.21+), legacy `StopContainer "<id>" from runtime service
    /// failed: <err>`, `"Container termination failed with gracePeriod"`; containerd (1.6, 1.7,
    /// 2.x CRI plugin) `StopContainer for "<id>" failed` with `error=` (`an error occurs during
    /// waiting for container "<id>" to be killed`, `failed to kill container`).
    StopContainerFailed,
    /// `"RemovePodSandbox from runtime service failed"`; legacy
    /// `RemovePodSandbox "<id>" from runtime service failed: <err>`; containerd
    /// `RemovePodSandbox for "<id>" failed`.
    RemovePodSandboxFailed,
    /// `"getPodContainerStatuses for pod failed" err=… pod=…` (1.21+), legacy
    /// `getPodContainerStatuses for pod "<name>" failed: <err>`: the pod's status could not be
    /// read; with NotFound (a container removed between the list and the inspect), kubelet 1.22
    /// before k/k #107670 never finished terminating the pod (case 20).
    PodContainerStatusesFailed,
    /// `"CreateContainer in sandbox from runtime service failed" podSandboxID=…` (1.21+), legacy
    /// `CreateContainer in sandbox "<id>" from runtime service failed: <err>`: the runtime
    /// could not create a container in the sandbox (the pod does not start).
    CreateContainerFailed,
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
    /// Legacy `Orphaned pod "<uid>" found, removing` (kubelet 1.2-1.6 cleanupOrphanedPodDirs,
    /// before every removal, successful or not): the kubelet starting to remove the directory;
    /// not a failure (its failure is `Failed to remove orphaned pod "<uid>" dir; err: …`, an
    /// [`EventKind::OrphanedPodVolumes`]).
    OrphanedPodRemoving,
    /// `Could not construct volume information: …` / `"Could not construct volume information"`
    /// (volume reconstruction after a kubelet restart, `reconciler.go` / `reconstruct.go`): a
    /// volume under `pods/<uid>/volumes/` the kubelet cannot adopt again, so it never unmounts
    /// or removes it.
    VolumeReconstructionFailed,
    /// A pod's volume the kubelet fails to unmount, as the volume manager's retry logs it:
    /// `Operation for "…" failed. No retries permitted until <time> (durationBeforeRetry 2m2s).
    /// Error: UnmountVolume.TearDown failed for volume "<name>" (UniqueName: "…") pod "<uid>"
    /// (UID: "<uid>") : <error>` (`nestedpendingoperations.go`, `operation_generator.go`).
    VolumeTearDownFailed,
    /// A pod's volumes not attached and mounted within the kubelet's wait (2 min 3 s,
    /// `volumemanager` `WaitForAttachAndMount`): `"Unable to attach or mount volumes for pod;
    /// skipping pod" err="unmounted volumes=[…], unattached volumes=[…]…: timed out waiting for
    /// the condition"` (`kubelet.go` `syncPod`; legacy `Unable to attach or mount volumes for pod
    /// "<name>_<ns>(<uid>)": …; skipping pod`, before 1.17 `Unable to mount volumes for pod …`).
    VolumeMountWaitFailed,
    /// A pod's volume the kubelet fails to set up, as the volume manager's retry logs it:
    /// `Operation for "…" failed. No retries permitted until <time> (durationBeforeRetry …).
    /// Error: MountVolume.SetUp failed for volume "<name>" (UniqueName: "…") pod "<name>" (UID:
    /// "<uid>") : <error>` (also `MountVolume.MountDevice`, `MountVolume.WaitForAttach`,
    /// `MountVolume.NewMounter initialization`; `operation_generator.go`), or the populator's
    /// `"Error processing volume" err="error processing PVC …"` (`desired_state_of_world_populator.go`).
    VolumeMountFailed,
    /// `"Clean up containers for orphaned pod we had not seen before"`,
    /// `"Clean up orphaned pod containers"`.
    CleanUpOrphanedPod,
    /// `"Pod worker has been requested for removal but is still not fully terminated"`
    /// (stuck worker, 1.22–1.26).
    PodWorkerNotTerminated,
    /// `"Pod cannot start yet"` (`pod_workers.go`, 1.22 and later): a static pod waits for the
    /// pod of the same full name (its previous UID) to finish terminating.
    PodCannotStartYet,
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
    /// `"Kubelet version" kubeletVersion="v1.34.4"` (before 1.21 `Version: v1.20.4`): the
    /// kubelet process starts (`cmd/kubelet/app/server.go` `run`). What its pod workers did
    /// before is not carried over: a pod no config source gives any more is not killed again.
    KubeletStarted,
    /// The kubelet exits as it starts: `"command failed" err="…"` (component-base `cli.Run`: the
    /// error `NewKubeletCommand`'s `RunE` returned, 1.20+), `failed to run Kubelet: …` and
    /// `failed to load Kubelet config file …` (`server.go`, `klog.Fatal` before 1.20; `error: …`
    /// on stderr in 1.8), `Failed to start ContainerManager` (`kubelet.go`
    /// `initializeRuntimeDependentModules`, then `os.Exit(1)`). An exit whose error is a CRI
    /// call's failure (`validate service connection`, `unknown service runtime.v1…`) is
    /// classified as that failure, `RuntimeCallFailed`: the runtime is its cause.
    KubeletExited,
    /// The runtime's own word that it could not start a container: containerd's CRI `StartContainer
    /// for "<id>" failed` (error field), dockerd's `Handler for POST /…/containers/<id>/start
    /// returned error: <err>` (a 5xx answer), docker 1.11-1.12's `containerd: start container`
    /// (error and `id` fields). A log that holds the kubelet's pod worker records says the same
    /// with the pod (`ErrorSyncingPod`'s `RunContainerError`).
    RuntimeStartContainerFailed,
    /// systemd's `kubelet.service: Scheduled restart job, restart counter is at <n>.` (systemd
    /// 236+, `service.c` `service_enter_restart`) and `kubelet.service: Service hold-off time
    /// over, scheduling restart.` (older): the kubelet exited and its unit's `Restart=` starts it
    /// again; the counter says how many times since the unit was last started by hand.
    KubeletRestartScheduled,
    /// `part of the existing bootstrap client certificate in /etc/kubernetes/kubelet.conf is
    /// expired: <time>` (`bootstrap.go` `isClientConfigStillValid`, at the kubelet's start;
    /// `"Unhandled Error" err=…` from 1.31): the kubeconfig's client certificate expired, so
    /// the kubelet must bootstrap a new one with its bootstrap kubeconfig.
    BootstrapCertificateExpired,
    /// `"Error updating node status, will retry" err=…` (`kubelet_node_status.go`
    /// `updateNodeStatus`, each of its 5 tries) and `"Unable to update node status" err="update
    /// node status exceeds retry count"` (`syncNodeStatus`); legacy `…, will retry: <err>`.
    NodeStatusUpdateFailed,
    /// `"Successfully registered node" node=…` (`kubelet_node_status.go`
    /// `registerWithAPIServer`; legacy `Successfully registered node <name>`): the Node exists,
    /// and the registration failures before it are over.
    NodeRegistered,
    /// `"Container runtime network not ready" networkReady="NetworkReady=false
    /// reason:NetworkPluginNotReady message:…"` (`kubelet.go` `updateRuntimeUp`, every 5 s while
    /// the runtime's `NetworkReady` condition is false); legacy `Container runtime network not
    /// ready: NetworkReady=false …`.
    RuntimeNetworkNotReady,
    /// `"Node not becoming ready in time after startup"` (`kubelet_node_status.go`
    /// `fastNodeStatusUpdate`, 1.27+): the Node not Ready 2 min (`nodeReadyGracePeriod`) after
    /// the kubelet started.
    NodeNotReadyAfterStartup,
    /// `"Recording event message for node" node=… event="NodeReady"` (`kubelet_node_status.go`
    /// `recordNodeStatusEvent`, V(2); legacy `Recording NodeReady event message for node …`):
    /// the Node's Ready condition turned true.
    NodeReadyRecorded,
    /// `"Eviction manager: attempting to reclaim" resourceName="<resource>"` (legacy `eviction
    /// manager: attempting to reclaim <resource>`; `eviction/eviction_manager.go`
    /// `synchronize`): an eviction threshold is met past its grace period, the node is under
    /// memory, disk or PID pressure.
    EvictionReclaiming,
    /// `"Eviction manager: able to reduce resource pressure without evicting pods."` (legacy
    /// `… able to reduce <resource> pressure without evicting pods.`): the image and container
    /// GC freed enough.
    EvictionReclaimedWithoutEvicting,
    /// `"Eviction manager: must evict pod(s) to reclaim"` and `"Eviction manager: pods ranked
    /// for eviction" pods=[…]` (legacy `…: pods ranked for eviction: <full names>`).
    EvictionMustEvict,
    /// The eviction manager cannot relieve the pressure: `"Eviction manager: cannot evict a
    /// critical pod" pod=…` (legacy `… a critical static pod <full name>`), `eviction thresholds
    /// have been met, but no pods are active to evict`, `unable to evict any pods from the node`.
    EvictionBlocked,
    /// `"Eviction manager: pod is evicted successfully" pod=…` (legacy `eviction manager: pod
    /// <full name> is evicted successfully`), and `pod failed to evict` (it was killed, its kill
    /// failed).
    PodEvicted,
    /// The eviction manager refuses a pod at admission while the node is under pressure:
    /// `"Failed to admit pod to node" pod=… nodeCondition=[DiskPressure]` (legacy `Failed to
    /// admit pod <full name> - node has conditions: [DiskPressure]`; `eviction_manager.go`
    /// `Admit`). The pod is Failed with reason Evicted; a DaemonSet's is made again and again.
    EvictionAdmitRejected,
    /// `"Image garbage collection failed multiple times in a row" err=…` and `… failed once.
    /// Stats initialization may not have completed yet` (`kubelet.go` `StartGarbageCollection`,
    /// every 5 min): when the error is `Wanted to free <n> bytes, but freed <m> bytes`, the image
    /// filesystem is over the GC's high threshold and deleting unused images does not bring it
    /// down.
    ImageGcFailed,
    /// `"Disk usage on image filesystem is over the high threshold, trying to free bytes down to
    /// the low threshold" usage=89 highThreshold=85 …` (legacy `[imageGCManager]: Disk usage on
    /// image filesystem is at 89% which is over the high threshold (85%). Trying to free …`;
    /// `image_gc_manager.go` `GarbageCollect`): the GC's own start, no failure.
    ImageFsOverThreshold,
    /// `"Image garbage collection succeeded"` (`kubelet.go` `StartGarbageCollection`, V(1) after
    /// a failed run, else V(4)).
    ImageGcSucceeded,
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
    /// containerd's `failed to reserve container name …`, CRI-O's `error reserving ctr name
    /// <name> for id <new id>: name is reserved`: a CreateContainer of that name is still running
    /// (or left its name), so the kubelet's retry is refused.
    ContainerNameReserved,
    /// CRI-O's `Creation of container|sandbox <name> not yet finished. Currently at stage <stage>.
    /// Waiting up to <d> for it to finish` (`server/utils.go` `getResourceOrWait`): the kubelet
    /// retried a create call that timed out while CRI-O still runs the first.
    CreateStillRunning,
    /// containerd `cleaning up after shim disconnected` `id=<id>`.
    ShimDisconnected,
    /// containerd debug `Loaded sandbox {Metadata:{ID:<id> Name:<name>_<ns>_<uid>_<attempt> …}}`
    /// (after a restart).
    SandboxLoaded,

    // === kubelet: pod startup (pod start forensics, `startup`) ===
    /// `"Observed pod startup duration" pod=… podStartSLOduration=… podStartE2EDuration=…`
    /// (`pkg/kubelet/util/pod_startup_latency_tracker.go` `ObservedPodOnWatch`, 1.27+): the
    /// kubelet saw every container of an API pod running; before the 1.34 cherry-pick of k/k
    /// #131950 with `firstStartedPulling`/`lastFinishedPulling`, after it with
    /// `totalImagesPullingTime`, `totalInitContainerRuntime`, `imagePullSessionsCount`.
    PodStartupObserved,
    /// `"Created PodSandbox for pod" podSandboxID=… pod=…` (V4, `kuberuntime_manager.go`
    /// `SyncPod`): RunPodSandbox returned for the pod.
    PodSandboxCreated,
    /// The kubelet found no usable sandbox for a pod and will create one
    /// (`kuberuntime/util/util.go` `PodSandboxChanged`, V2): `"No ready sandbox for pod can be
    /// found. Need to start a new one" pod=…` (also `No sandbox …`, `Multiple sandboxes are
    /// ready …`, `Sandbox for pod has changed`, `… has no IP address`); legacy `No ready sandbox
    /// for pod "<name>_<ns>(<uid>)" can be found. Need to start a new one`.
    PodSandboxNeeded,
    /// The pod event `Pulling image "<ref>"` (`images/image_manager.go` `EnsureImageExists`),
    /// as the kubelet's event recorder logs it: `"Event occurred" object="ns/name" …
    /// reason="Pulling"` (V3+).
    ImagePulling,
    /// The pod event `Successfully pulled image "<ref>" in 1.2s (1.5s including waiting)` or
    /// `Container image "<ref>" already present on machine` (`reason="Pulled"`).
    ImagePulled,
    /// The pod events `Failed to pull image "<ref>": …` (`reason="Failed"`) and `Back-off
    /// pulling image "<ref>"` (`reason="BackOff"`).
    ImagePullFailed,
    /// A Go program's fatal error or unrecovered panic, the first line of its crash (`fatal
    /// error: unexpected signal during runtime execution`, `panic: runtime error: …`, Go's
    /// `runtime/panic.go` `fatal` and `printpanics`): the process died; its goroutine dump
    /// follows.
    GoCrash,
    /// The pod event `Started container <name>` (`reason="Started"`,
    /// `kuberuntime_container.go` `startContainer`).
    ContainerStartedLogged,
    /// `"SyncLoop (probe)" probe="readiness" status="ready" pod=…` (`kubelet.go`
    /// `syncLoopIteration`, V1): a readiness probe passed.
    ReadinessProbeReady,

    // === kubelet: pod events as its event recorder logs them (`logs::recorder`) ===
    /// The pod event `Killing` with the message `Stopping container <name>`
    /// (`kuberuntime_container.go` `killContainer` when its caller gives no reason of its own:
    /// the pod is being stopped, `killPodWithSyncResult`; a liveness or spec-change restart gives
    /// its own message), in any of the recorder's shapes (`Event(v1.ObjectReference{…})`,
    /// `"Event occurred" reason="Killing"`, `Server rejected event '&v1.Event{…}'`, …).
    PodStopRecorded,
    /// The pod events that end a pod the API keeps as Failed: `Evicted`
    /// (`eviction/eviction_manager.go`), `DeadlineExceeded` (`active_deadline.go`),
    /// `Preempting` (`lifecycle/predicate.go`, `events.PreemptContainer`): the kubelet keeps
    /// such a pod's newest sandbox until the pod is deleted.
    PodEndedRecorded,
    /// A container's state change the generic PLEG saw in a relist (`pleg/generic.go`
    /// `generateEvents`, V4), typed by its new state as the event it generates (`running`:
    /// ContainerStarted, `exited`: ContainerDied, `non-existent`: ContainerRemoved, `unknown`:
    /// ContainerChanged): legacy `GenericPLEG: <pod uid>/<container id>: running -> exited`,
    /// structured `"GenericPLEG" podUID=… containerID=… oldState=… newState=…`. A record of the
    /// relist, before the `SyncLoop (PLEG)` event the kubelet acts on.
    PlegRelist(PlegType),
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
                | StopContainerFailed
                | RemovePodSandboxFailed
                | CreateContainerFailed
                | PodContainerStatusesFailed
                | RuntimeCallFailed
                | DeleteContainerFailed
                | RemoveContainerFailed
                | GcContainerStatusFailed
                | StopSandboxBeforeRemoveFailed
                | RemoveSandboxFailed
                | KillPodSandboxFailed
                | ContainerGcFailed
                | ImageGcFailed
                | OrphanedPodVolumes
                | VolumeTearDownFailed
                | VolumeMountWaitFailed
                | VolumeMountFailed
                | MirrorPodCreateFailed
                | RunPodSandboxFailed
                | DestroyNetworkFailed
                | ContainerNotFound
                | SandboxNotFound
                | SandboxNameReserved
                | ContainerNameReserved
                | PlegUnhealthy
                | SkippingDeleteSourcesNotReady
                | ImagePullFailed
                | KubeletExited
                | RuntimeStartContainerFailed
                | NodeStatusUpdateFailed
                | RuntimeNetworkNotReady
                | NodeNotReadyAfterStartup
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
            | CreateContainerFailed
            | PodSandboxCreated
            | CreatePodSandboxFailed => Some(IdKind::Sandbox),
            ContainerStatusFailed
            | StopContainerFailed
            | StopSignalTimedOut
            | StopContainerStarted
            | StopContainerDone
            | PodContainerStatusesFailed
            | DeleteContainerFailed
            | RemoveContainerFailed
            | GcContainerStatusFailed
            | KillingContainer
            | RemoveContainer
            | RemoveContainerDone
            | ContainerNotFound
            | ContainerFinished
            | ContainerNotFoundInPod
            | ContainerNameReserved
            | RuntimeStartContainerFailed => Some(IdKind::Container),
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
    /// The plugin failed and wrote no error libcni could read (`invoke.pluginErr`: `netplugin
    /// failed with no error message`, or, before libcni 0.8 and for output that is not JSON,
    /// `netplugin failed but error parsing its diagnostic message "": unexpected end of JSON
    /// input`): it crashed, panicked or was killed (OOM) during the DEL.
    PluginNoErrorMessage,
    /// The cached CNI result or netconf is empty: `failed to get network "<net>" cached result`,
    /// `unexpected end of JSON input` (a 0-byte `/var/lib/cni/results/<net>-<id>-<if>`).
    EmptyCachedResult,
    /// The sandbox's network namespace is gone: `failed to open netns`, `failed to Statfs ""`,
    /// `cannot find network namespace`, `no such file or directory` on a netns path.
    MissingNetns,
    /// The plugin binary is missing or cannot run: `failed to find plugin "<p>" in path`,
    /// `fork/exec /opt/cni/bin/…`.
    PluginMissing,
    /// The plugin's node agent is not running on this node, so the plugin refuses every call:
    /// Calico's `stat /var/lib/calico/nodename: no such file or directory: check that the
    /// calico/node container is running and has mounted /var/lib/calico/` (projectcalico
    /// cni-plugin `cmdAdd`/`cmdDel`, `%s: check that the calico/node container is running …`),
    /// flannel's `open /run/flannel/subnet.env: no such file or directory` (flannel-io
    /// cni-plugin `loadFlannelSubnetEnv`, the file flanneld writes when it starts), and a
    /// thin plugin whose daemon refuses it: multus-shim's `dial unix /run/multus/multus.sock:
    /// connect: connection refused` (the multus daemon), the AWS VPC CNI's `dial tcp
    /// 127.0.0.1:50051` (ipamd).
    AgentNotRunning,
    /// The plugin cannot reach its datastore or the API server: `dial tcp <addr>: … connection
    /// refused`, `i/o timeout`, `no route to host` inside the CNI error (Calico on etcd, case
    /// 27; any plugin whose control plane is down). Every teardown on the node fails until it is
    /// back, but the node itself is fine.
    DatastoreUnreachable,
    /// The network's CNI config is one the plugin or libcni cannot use: a `cniVersion` missing
    /// or not supported (`failed to convert major version part ""`, `incompatible CNI versions`,
    /// `plugin … does not support config version`; cilium/cilium#9557: a conflist without
    /// `cniVersion`). Every ADD and DEL with it fails until the config is fixed.
    BadConfig,
}

impl Cause {
    /// Whether the cause fails every sandbox teardown (and setup) on the node, not one sandbox:
    /// the CNI plugin cannot run here ([`CniFailure::PluginMissing`]) or its node agent is not
    /// running ([`CniFailure::AgentNotRunning`]).
    pub fn node_wide(self) -> bool {
        matches!(
            self,
            Cause::CniTeardown(CniFailure::PluginMissing | CniFailure::AgentNotRunning)
        )
    }
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
    /// A call timed out: `context deadline exceeded`, `DeadlineExceeded`; a stop or kill the
    /// caller canceled while the runtime waited (`code = Canceled`, `context canceled`).
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
///
/// The figures only some kinds carry (a roll-up's count, a kill's grace period, a finished
/// container's exit code) share one slot, read through [`Event::count`],
/// [`Event::grace_period_secs`] and [`Event::exit_code`]: a diagnosis keeps most records of a
/// troubled node's log, and each of them carries at most one of these.
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
    /// The one figure of its kind the line gives, if any.
    figure: Option<Figure>,
    /// The line was cut: IDs and text may be incomplete.
    pub truncated: bool,
}

/// The figure an [`Event`] of some kinds carries; each kind carries at most one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Figure {
    /// How many errors a roll-up line stands for.
    Count(u32),
    /// A kill's grace period, in seconds.
    GracePeriodSecs(i64),
    /// A finished container's exit code.
    ExitCode(i64),
}

impl Event<'_> {
    /// How many errors a roll-up line stands for (`numErrs=N`, `There were a total of N errors`).
    pub fn count(&self) -> Option<u32> {
        match self.figure {
            Some(Figure::Count(n)) => Some(n),
            _ => None,
        }
    }

    /// `gracePeriod=N` / `with N second grace period`, in seconds.
    pub fn grace_period_secs(&self) -> Option<i64> {
        match self.figure {
            Some(Figure::GracePeriodSecs(n)) => Some(n),
            _ => None,
        }
    }

    /// `exitCode=N` of a finished container.
    pub fn exit_code(&self) -> Option<i64> {
        match self.figure {
            Some(Figure::ExitCode(n)) => Some(n),
            _ => None,
        }
    }

    /// Whether `other` says the same as this event at any time: every part equal but the time.
    pub fn same_but_time(&self, other: &Event<'_>) -> bool {
        self.kind == other.kind
            && self.severity == other.severity
            && self.component == other.component
            && self.ids == other.ids
            && self.error == other.error
            && self.cause == other.cause
            && self.not_found == other.not_found
            && self.config_source == other.config_source
            && self.figure == other.figure
            && self.truncated == other.truncated
    }

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
            figure: self.figure,
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
    // A message pasted in Markdown bold (`"**RunPodSandbox from runtime service failed**"`): its
    // words are read without the markers.
    let msg = match msg.strip_prefix("**") {
        Some(bold) => bold.strip_suffix("**").unwrap_or(bold),
        None => msg,
    };
    let field_err: Option<&'p str> = line.field("err").or_else(|| line.field("error"));
    let Hit {
        mut kind,
        words_end,
    } = match_msg(msg, line, field_err)
        .or_else(|| cut_message(msg, line))
        .or_else(|| fallback(msg, field_err))?;
    // A logrus message that opens with `Error ` is a printf'd `Error <doing>: %v` too (CRI-O's
    // ocicni: `logrus.Errorf("Error while adding pod to CNI network %q: %s", …)`); other logrus
    // messages carry their error in the `error` field, their text before it being the message.
    let printf = match line.format {
        Format::KlogStructured | Format::Json => false,
        // So is one that is a Go error itself, `failed to <do>: %v` (CRI-O's `failed to destroy
        // network for pod sandbox <name>(<id>): <err>`).
        Format::Logfmt => msg.starts_with("Error ") || msg.starts_with("failed to "),
        _ => true,
    };
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
        // A wording that ends with the `: ` before the error (`Error adding network: %v`) is
        // followed by the error itself.
        msg.get(words_end..)
            .and_then(|rest| {
                if msg[..words_end].ends_with(": ") {
                    Some(rest.trim())
                } else {
                    rest.find(": ").map(|at| rest[at + 2..].trim())
                }
            })
            .filter(|e| !e.is_empty())
    } else {
        None
    };
    // The kubelet exiting on a CRI call's failure: the runtime is the cause (`RuntimeUnhealthy`
    // reads it).
    if kind == EventKind::KubeletExited
        && fallback(msg, error).is_some_and(|h| h.kind == EventKind::RuntimeCallFailed)
    {
        kind = EventKind::RuntimeCallFailed;
    }
    // A sandbox name reservation is reported by whichever call hit it.
    if matches!(
        kind,
        EventKind::RunPodSandboxFailed
            | EventKind::CreatePodSandboxFailed
            | EventKind::ErrorSyncingPod
            | EventKind::RuntimeCallFailed
    ) && (contains!(error.unwrap_or(msg), "failed to reserve sandbox name")
        // iSulad's (openEuler) and docker's `Conflict. The name "k8s_POD_…" is already in use by
        // sandbox <id>. You have to remove that sandbox …` (kubernetes/kubernetes#126514)
        || contains!(error.unwrap_or(msg), "is already in use by sandbox "))
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
        EventKind::PlegRelist(_) => EventKind::PlegRelist(relist(line, h.msg).0),
        k => k,
    })
}

/// Classifies a parsed line. `None` for lines the catalogue does not name and for
/// [`Format::Unparsed`] lines (a [`Format::Message`] line is classified from its text).
pub fn classify<'p>(line: &'p ParsedLine<'_>) -> Option<Event<'p>> {
    named(line).map(Named::classify)
}

/// A line the catalogue names, before its IDs, cause and flags are read: [`classify`] in two
/// steps, for a caller that may have the rest already (a repeat of a line it classified).
pub struct Named<'p, 'l> {
    line: &'p ParsedLine<'l>,
    head: Head<'p>,
}

/// Whether the catalogue names `line` (the cheap part of [`classify`]); `None` when [`classify`]
/// gives `None`.
pub fn named<'p, 'l>(line: &'p ParsedLine<'l>) -> Option<Named<'p, 'l>> {
    Some(Named {
        line,
        head: head(line)?,
    })
}

impl<'p> Named<'p, '_> {
    /// The event: [`classify`] of the line.
    pub fn classify(self) -> Event<'p> {
        classify_named(self.line, self.head)
    }
}

fn classify_named<'p>(line: &'p ParsedLine<'_>, head: Head<'p>) -> Event<'p> {
    let Head {
        mut kind,
        msg,
        error,
    } = head;
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

    // A pod some lines write in their own words, when no field or ID shape named one.
    if ids.pods.is_empty()
        && let Some((namespace, name, uid)) = pod_in_words(kind, msg, error)
    {
        ids.pods.push(ids::PodName {
            namespace: Some(Cow::Borrowed(namespace)),
            name: Cow::Borrowed(name),
            uid: uid.map(Cow::Borrowed),
        });
    }
    if matches!(
        kind,
        EventKind::PodStopRecorded
            | EventKind::PodEndedRecorded
            | EventKind::ImagePulling
            | EventKind::ImagePulled
            | EventKind::ImagePullFailed
            | EventKind::ContainerStartedLogged
    ) && !msg.starts_with("Event occurred")
        && let Some(r) = recorder::read(msg, line)
    {
        // A dump's involved object is the event's pod; IDs the dump's other fields look like
        // (its ObjectMeta) are not the pod's. (`Event occurred`'s `object` field, text or JSON,
        // is read by `ids::from_fields`.)
        ids.pods.clear();
        if r.kind == "Pod" || r.kind.is_empty() {
            if let Some(u) = r.uid {
                ids.pod_uid = Some(Cow::Borrowed(u));
            }
            ids.pods.push(ids::PodName {
                namespace: (!r.namespace.is_empty()).then_some(Cow::Borrowed(r.namespace)),
                name: Cow::Borrowed(r.name),
                uid: r.uid.map(Cow::Borrowed),
            });
        }
    }
    let text_for_flags = error.unwrap_or(msg);
    let not_found = matches!(
        kind,
        EventKind::ContainerNotFound | EventKind::SandboxNotFound
    ) || is_not_found(text_for_flags);
    let cause = kind.is_failure().then(|| {
        match (kind, cause_of(text_for_flags, line.truncated)) {
            // A CNI DEL failure whose error alone names no CNI call (dockershim's `Error deleting
            // <pod> from network <type>/<name>: <err>`, CRI-O's `Error deleting network: <err>`):
            // still a CNI teardown, a timed-out one too.
            (EventKind::DestroyNetworkFailed, Cause::Other | Cause::Timeout) => {
                Cause::CniTeardown(cni_failure(text_for_flags))
            }
            (_, cause) => cause,
        }
    });
    let config_source = match kind {
        EventKind::SyncLoop(_) => config_source(line, msg),
        _ => None,
    };
    let figure = match kind {
        EventKind::OrphanedPodVolumes => line
            .field("numErrs")
            .and_then(|n| n.parse().ok())
            .or_else(|| total_errors(msg))
            .map(Figure::Count),
        EventKind::KillingContainer => line
            .field("gracePeriod")
            .and_then(|g| g.parse().ok())
            .or_else(|| legacy_grace(msg))
            .map(Figure::GracePeriodSecs),
        EventKind::ContainerFinished => line
            .field("exitCode")
            .and_then(|c| c.parse().ok())
            .map(Figure::ExitCode),
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

    if let EventKind::PlegRelist(_) = kind {
        let (t, legacy) = relist(line, msg);
        kind = EventKind::PlegRelist(t);
        if let Some((uid, cid)) = legacy {
            if ids::is_pod_uid(uid) {
                ids.set(IdKind::PodUid, uid);
            }
            if ids::is_full_id(cid) {
                ids.set(IdKind::Container, cid);
            }
        }
    }
    // A gRPC status cut inside its code (`rpc error: code = Dea`, case 36): the record is cut,
    // and a code prefix only one gRPC code begins with names that code (`Dea`:
    // DeadlineExceeded), so its cause is read from it.
    let grpc_cut = cut_grpc_code(text_for_flags);
    let cause = match (cause, grpc_cut) {
        (Some(Cause::Other), Some(Some(code))) => Some(cause_of(code, false)),
        (c, _) => c,
    };

    Event {
        kind,
        severity: line.severity,
        time: line.time,
        component: line.component,
        ids,
        error: error.map(Cow::Borrowed),
        cause,
        not_found,
        config_source,
        figure,
        truncated: line.truncated || grpc_cut.is_some(),
    }
}

/// The wordings of [`messages::FAMILIES`] by the first byte of what they start with, in either
/// case ([`starts_with_words`]), in table order: a message is compared with the few that can
/// fit.
static BY_FIRST_BYTE: LazyLock<Vec<Vec<&'static Wording>>> = LazyLock::new(|| {
    let mut index = vec![Vec::new(); 256];
    for w in messages::wordings() {
        for first in both_cases(w.starts.as_bytes()[0]) {
            index[usize::from(first)].push(w);
        }
    }
    index
});

/// `b`, and its other case when it is an ASCII letter.
fn both_cases(b: u8) -> impl Iterator<Item = u8> {
    let other = if b.is_ascii_lowercase() {
        b.to_ascii_uppercase()
    } else {
        b.to_ascii_lowercase()
    };
    std::iter::once(b).chain((other != b).then_some(other))
}

/// Whether `s` starts with `words`, its first letter in either case: the same words are a log
/// message, capitalised, and an error, lower-case (Go's convention), and move between the two
/// across versions (CRI-O 1.18's warning `Error reserving pod name …`, `error reserving pod
/// name …` in an error from 1.19; kubelet's `Failed to …` and `failed to …`).
fn starts_with_words(s: &str, words: &str) -> bool {
    let (s, w) = (s.as_bytes(), words.as_bytes());
    s.len() >= w.len()
        && !w.is_empty()
        && s[0].eq_ignore_ascii_case(&w[0])
        && s[1..w.len()] == w[1..]
}

/// Whether `s` contains `words`, their first letter in either case ([`starts_with_words`]).
/// `words` starts with an ASCII letter.
pub(crate) fn contains_words(s: &str, words: &str) -> bool {
    let (first, rest) = words.as_bytes().split_first().expect("words are not empty");
    memchr::memmem::find_iter(s.as_bytes(), rest)
        .any(|i| i > 0 && s.as_bytes()[i - 1].eq_ignore_ascii_case(first))
}

/// The first wording `s` fits, in table order.
fn match_msg(s: &str, line: &ParsedLine<'_>, err: Option<&str>) -> Option<Hit> {
    let first = *s.as_bytes().first()?;
    BY_FIRST_BYTE[usize::from(first)]
        .iter()
        .find(|w| starts_with_words(s, w.starts) && holds(w, s, line, err))
        .and_then(|w| hit(w.kind, w.starts))
}

/// Whether `s`, which starts with `w.starts`, meets the wording's condition.
fn holds(w: &Wording, s: &str, line: &ParsedLine<'_>, err: Option<&str>) -> bool {
    let failed = || s.ends_with("failed") || s.contains("\" failed");
    match w.cond {
        Cond::None => true,
        Cond::Exact => s.len() == w.starts.len(),
        Cond::Word => !s
            .as_bytes()
            .get(w.starts.len())
            .is_some_and(u8::is_ascii_alphabetic),
        Cond::Has(p) => s.contains(p),
        Cond::HasOrErr(p) => s.contains(p) || err.is_some_and(|e| e.contains(p)),
        Cond::HasOrCutErr(p) => {
            s.contains(p)
                || err.is_some_and(|e| {
                    e.contains(p) || (line.truncated && ends_with_start_of(e, p, 8))
                })
        }
        Cond::Failed => failed(),
        Cond::FailedOrCutError => {
            failed() || (line.truncated && line.severity == Some(Level::Error))
        }
        Cond::HasOrCutError(p) => {
            s.contains(p) || (line.truncated && line.severity == Some(Level::Error))
        }
        Cond::Field(name, value) => line.field(name) == Some(value),
        Cond::FieldAndMessage(name, value, phrase) => {
            line.field(name) == Some(value)
                && line.field("message").is_some_and(|m| m.contains(phrase))
        }
        Cond::Recorded(reason, message) => super::recorder::read(s, line)
            .is_some_and(|r| r.reason == reason && r.message.starts_with(message)),
    }
}

/// Whether [`classify`] may name the record a full [`parse`](super::parse) makes of
/// `skimmed.raw`, where `skimmed` was parsed with [`ParseContext::skip_fields`] set (its
/// structured klog message as written, escapes kept, and no fields). Never `false` for a record
/// the catalogue names; `true` for a few more (a reader parses those again in full). The test
/// mirrors [`head`] on what no unescaping can change, the message's words before its first
/// escape ([`before_escapes`]):
/// - a message that starts with the words of a wording up to the first byte an escape could
///   change (or, when an escape follows the message's words, whose words those are the start
///   of);
/// - a message that may be the start of a structured message, cut ([`cut_message`]);
/// - one of [`messages::PHRASES`] (up to such a byte) in the message or the pairs after it, or
///   an escape there that may stand for a byte of one ([`may_hide_printable`]: `\x20`,
///   `\u0020`, `\040`, JSON's `\/`, `\'`, …);
/// - a cut record, or a message the reader unescaped or decoded before parsing it (a JSON
///   wrapper's, journald's byte array), which the raw text does not hold.
///
/// [`ParseContext::skip_fields`]: super::record::ParseContext
pub(crate) fn may_name(skimmed: &ParsedLine<'_>) -> bool {
    if skimmed.format == Format::Unparsed {
        return false;
    }
    if skimmed.truncated {
        return true;
    }
    // The message and what follows it (its pairs), where the record borrows its message.
    let Some(from_msg) = (skimmed.msg.as_ptr() as usize)
        .checked_sub(skimmed.raw.as_ptr() as usize)
        .and_then(|at| skimmed.raw.get(at..))
    else {
        return true;
    };
    let msg = skimmed.msg.trim_start();
    let words = before_escapes(msg);
    let escaped = words.len() < msg.len();
    let starts = match words.as_bytes().first() {
        // An escape first (`\t`, where the unescaped message has a space `trim` removes).
        None => escaped,
        Some(&first) => UNESCAPED_STARTS[usize::from(first)]
            .iter()
            .any(|w| starts_with_words(words, w) || (escaped && starts_with_words(w, words))),
    };
    // A message that a cut of the record's pairs may make [`cut_message`] read as the start
    // of a structured message.
    let cut = || {
        let words = words.trim_end();
        msg.len() >= 12
            && words.as_bytes().first().is_some_and(|&first| {
                STRUCTURED[usize::from(first)]
                    .iter()
                    .any(|known| known.starts_with(words))
            })
    };
    starts || cut() || may_hide_printable(from_msg) || PHRASE_WORDS.is_match(from_msg)
}

/// Whether `text` holds an escape that may stand for a byte a phrase's words hold: any escape
/// but those [`text::unescape`](super::text::unescape) reads as a byte no phrase's words hold
/// (`\"` and `\\`, which [`before_escapes`] cuts phrases at, and `\n`, `\t`, `\r`, `\a`,
/// `\b`, `\f`, `\v`, control bytes). So Go's `\x`, `\u`, `\U` and octal escapes, JSON's
/// `\/`, `\'` (the `'` of "sources aren't ready yet"), and any escape `unescape` may learn to
/// read count; an unknown escape, which it keeps as written, counts too (a full parse more).
fn may_hide_printable(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr_iter(b'\\', b).any(|at| {
        !matches!(
            b.get(at + 1),
            None | Some(b'"' | b'\\' | b'n' | b't' | b'r' | b'a' | b'b' | b'f' | b'v')
        )
    })
}

/// `s` up to its first byte that an escape in a quoted message could change (`"`, `\\`, a
/// control byte): of an escaped message, the words no unescaping changes.
fn before_escapes(s: &str) -> &str {
    let end = s
        .bytes()
        .position(|c| c == b'"' || c == b'\\' || c.is_ascii_control())
        .unwrap_or(s.len());
    &s[..end]
}

/// `words` by their first byte in either case ([`starts_with_words`]), once each (an empty one
/// left out).
fn by_first_byte(words: impl Iterator<Item = &'static str>) -> Vec<Vec<&'static str>> {
    let mut index: Vec<Vec<&'static str>> = vec![Vec::new(); 256];
    for w in words {
        if let Some(&first) = w.as_bytes().first() {
            for first in both_cases(first) {
                let slot = &mut index[usize::from(first)];
                if !slot.contains(&w) {
                    slot.push(w);
                }
            }
        }
    }
    index
}

/// The whole structured messages of the wordings ([`Wording::structured`]), by first byte.
static STRUCTURED: LazyLock<Vec<Vec<&'static str>>> =
    LazyLock::new(|| by_first_byte(messages::wordings().filter_map(|w| w.structured)));

/// The words each wording starts with up to the first byte an escape could change
/// ([`before_escapes`]), by their first byte. A wording that starts with such a byte has none:
/// a message that does starts with an escape, which [`may_name`] passes on.
static UNESCAPED_STARTS: LazyLock<Vec<Vec<&'static str>>> =
    LazyLock::new(|| by_first_byte(messages::wordings().map(|w| before_escapes(w.starts))));

/// [`messages::PHRASES`], each up to its first byte an escape could change, in one searcher.
static PHRASE_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    // Panics: building fails only past the automaton's size limits, far above a dozen
    // short phrases.
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .build(
            messages::PHRASES
                .iter()
                .map(|(p, _)| before_escapes(p.trim_matches('"')))
                .filter(|p| !p.is_empty()),
        )
        .expect("phrase words build a searcher")
});

/// The catalogue's message set as fixed strings, what `grep -F` needs to find the lines
/// [`classify`] names: each wording's key ([`messages::key_of`]) and the words of each phrase
/// before its first quote, once each. Every record the catalogue names contains one of them,
/// except a structured message cut short by the end of its line (case 05).
pub fn message_keys() -> &'static [&'static str] {
    static KEYS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        let mut keys: Vec<&'static str> = Vec::new();
        let phrases = messages::PHRASES
            .iter()
            .map(|(p, _)| p.trim_matches('"').split('"').next().unwrap_or(p));
        for k in messages::wordings().map(messages::key_of).chain(phrases) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        // A wording's words with their first letter in the other case ([`starts_with_words`]).
        let starts: Vec<&'static str> = messages::wordings()
            .filter(|w| messages::key_of(w) == w.starts.split('"').next().unwrap_or(w.starts))
            .map(messages::key_of)
            .collect();
        for k in starts {
            if let Some(other) = other_case_first(k)
                && !keys.contains(&other)
            {
                keys.push(other);
            }
        }
        keys
    });
    &KEYS
}

/// `words` with its first letter in the other case, leaked once (the catalogue's keys live as
/// long as the program); `None` when it does not start with an ASCII letter.
fn other_case_first(words: &'static str) -> Option<&'static str> {
    let first = *words.as_bytes().first()?;
    let other = both_cases(first).nth(1)?;
    let mut s = String::with_capacity(words.len());
    s.push(char::from(other));
    s.push_str(&words[1..]);
    Some(Box::leak(s.into_boxed_str()))
}

/// A structured message cut by the end of its line (case 05: `"ContainerStatus from runtime
/// ser`) matches the whole structured message it is the start of.
fn cut_message(msg: &str, line: &ParsedLine<'_>) -> Option<Hit> {
    let msg_cut = line.truncated
        && line.fields.is_empty()
        && matches!(line.format, Format::KlogStructured | Format::Json);
    if !msg_cut || msg.len() < 12 {
        return None;
    }
    messages::wordings()
        .find(|w| w.structured.is_some_and(|known| known.starts_with(msg)))
        .map(|w| Hit {
            kind: w.kind,
            words_end: msg.len(),
        })
}

/// The first of [`messages::PHRASES`] in the message or the error, when no wording fits.
fn fallback(msg: &str, err: Option<&str>) -> Option<Hit> {
    // Most lines name no catalogued event: one pass over each text rules out every phrase.
    if !has_fallback_phrase(msg) && !err.is_some_and(has_fallback_phrase) {
        return None;
    }
    messages::PHRASES
        .iter()
        .find(|(p, _)| msg.contains(p) || err.is_some_and(|e| e.contains(p)))
        .map(|&(_, kind)| Hit { kind, words_end: 0 })
}

/// Whether `text` contains one of [`messages::PHRASES`], in one SIMD pass.
fn has_fallback_phrase(text: &str) -> bool {
    static SEARCHER: LazyLock<AhoCorasick> = LazyLock::new(|| {
        // Panics: building fails only past the automaton's size limits, far above a dozen
        // short phrases.
        // Leftmost-first lets the SIMD (Teddy) prefilter run; any match answers `is_match`.
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(messages::PHRASES.iter().map(|(p, _)| p))
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

/// Whether a CNI error says the plugin's node agent refused it: a UNIX socket (multus-shim's
/// `dial unix /run/multus/multus.sock`, cilium's, Antrea's, kube-ovn's) or a loopback port (the
/// AWS VPC CNI's ipamd, `dial tcp 127.0.0.1:50051`) refusing or not there. Not a remote address:
/// that is a datastore ([`CniFailure::DatastoreUnreachable`]).
fn agent_refused(err: &str) -> bool {
    let refused =
        contains!(err, "connection refused") || contains!(err, "no such file or directory");
    refused
        && (contains!(err, "dial unix ")
            || contains!(err, "dial tcp 127.0.0.1:")
            || contains!(err, "dial tcp [::1]:")
            || contains!(err, "dial tcp localhost:"))
}

/// What kind of CNI failure an error names (the error of a CNI DEL, and of an ADD: the plugin
/// missing, its agent down or its datastore unreachable fail both alike).
pub(crate) fn cni_failure(err: &str) -> CniFailure {
    macro_rules! has {
        ($lit:literal) => {
            contains!(err, $lit)
        };
    }
    if has!("cni plugin not initialized") {
        CniFailure::PluginNotInitialized
    } else if has!("nauthorized") {
        CniFailure::UnauthorizedDatastore
    } else if (has!("unexpected end of JSON input")
        && !has!("netplugin failed but error parsing its diagnostic message"))
        || has!("cached result")
    {
        CniFailure::EmptyCachedResult
    } else if has!("calico/nodename: no such file")
        || has!("check that the calico/node container is running")
        || has!("/run/flannel/subnet.env: no such file")
        || agent_refused(err)
    {
        CniFailure::AgentNotRunning
    } else if has!("dial tcp")
        && (has!("connection refused") || has!("i/o timeout") || has!("no route to host"))
    {
        CniFailure::DatastoreUnreachable
    } else if has!("failed to find plugin") || has!("fork/exec") {
        CniFailure::PluginMissing
    } else if has!("netplugin failed with no error message")
        || has!("netplugin failed but error parsing its diagnostic message")
    {
        // After a missing binary: libcni says `no error message` for a failed exec too.
        CniFailure::PluginNoErrorMessage
    } else if has!("failed to convert major version part")
        || has!("incompatible CNI versions")
        || has!("does not support config version")
    {
        CniFailure::BadConfig
    } else if (has!("netns")
        || has!("Statfs")
        || has!("network namespace")
        || has!("cannot find network"))
        // The plugin's own thread's namespace (`Failed to open current namespace: failed to
        // Statfs "/proc/<pid>/task/<tid>/ns/net"`, flannel-io/flannel#1288): not the sandbox's.
        && !has!("current namespace")
    {
        CniFailure::MissingNetns
    } else {
        CniFailure::DestroyNetwork
    }
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
        return Cause::CniTeardown(cni_failure(err));
    }
    if has!("device or resource busy")
        || has!("is reserved for")
        || contains_words(err, "error reserving pod name")
        || has!("failed to reserve")
        || has!("already in removing state")
    {
        return Cause::RuntimeBusy;
    }
    // containerd 1.1 and 1.2's StopContainer: `an error occurs during waiting for container
    // "<id>" to be killed: wait container "<id>" stop timeout`.
    // CRI-O's answer to a retried create (`getResourceOrWait`): `kubelet may be retrying
    // requests that are timing out in CRI-O due to system load`.
    if has!("context deadline exceeded")
        || has!("DeadlineExceeded")
        || has!("stop timeout")
        || has!("requests that are timing out")
        // dockerd's SIGKILL not obeyed: `failed to exit within 10 seconds of kill`.
        || has!("seconds of kill")
        || has!("s of kill - trying direct SIGKILL")
    {
        return Cause::Timeout;
    }
    // The runtime's side of the caller's deadline on a stop: the kubelet's CRI client gives up
    // after its runtime request timeout (2 min) and cancels, and containerd, still waiting for
    // the task to exit, fails with `code = Canceled desc = failed to stop sandbox container …:
    // wait sandbox container …: context canceled` (containerd#11984: a start and its failure
    // 2m0s apart). A cancel of another call (an image pull of a deleted pod) is no timeout.
    if (has!("code = Canceled") || has!("context canceled"))
        && (has!("failed to stop") || has!("failed to kill") || has!("to be killed"))
    {
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
        // containerd's CRI plugin failing to look an ID up in its store: `not found` from 1.4,
        // `does not exist` before (rancher/rancher#38344, k3s of 2020), both with `code =
        // Unknown` until containerd 1.4 sent NotFound.
        || contains!(text, "an error occurred when try to find")
}

/// The pod a line of `kind` writes in its own words, as (namespace, name, UID):
/// - dockertools' container name `"<id> <container> <namespace>/<pod>"` in its kill and stop
///   records;
/// - CRI-O's sandbox name in `failed to destroy network for pod sandbox
///   k8s_<name>_<namespace>_<uid>_<attempt>(<id>)`;
/// - the PLEG's printf `PLEG: pod <name>/<namespace> failed reinspection: …` (generic.go
///   relist), name first;
/// - Multus's error of a sandbox creation ([`multus_pod`]);
/// - dockershim's CNI lines, `Error deleting <desc> from network <type>/<name>: …` and `Error
///   adding <desc> to network …`, whose `<desc>` is `<namespace>_<name>/<sandbox id>` (cni.go
///   podDesc, namespace first).
fn pod_in_words<'p>(
    kind: EventKind,
    msg: &'p str,
    error: Option<&'p str>,
) -> Option<(&'p str, &'p str, Option<&'p str>)> {
    if matches!(
        kind,
        EventKind::RunPodSandboxFailed | EventKind::CreatePodSandboxFailed
    ) && let Some(pod) = multus_pod(error.unwrap_or(msg))
    {
        return Some(pod);
    }
    let pod = match kind {
        EventKind::PodContainerStatusesFailed => {
            let (pod, _) = msg
                .strip_prefix("PLEG: pod ")?
                .split_once(" failed reinspection")?;
            let (name, namespace) = pod.split_once('/').filter(|_| !pod.contains(' '))?;
            (namespace, name, None)
        }
        // dockertools (1.2-1.5) names a container `"<id> <container> <namespace>/<pod>"`:
        // `Killing container "…" with 600 second grace period`, `Container "…" termination
        // failed after 2m0s: …`.
        EventKind::KillingContainer | EventKind::StopContainerFailed => {
            let quoted = msg.split('"').nth(1)?;
            let mut words = quoted.split(' ');
            let (id, _container, pod) = (words.next()?, words.next()?, words.next()?);
            let (namespace, name) = pod.split_once('/')?;
            (words.next().is_none() && ids::is_full_id(id)).then_some((namespace, name, None))?
        }
        EventKind::DestroyNetworkFailed
            if let Some((_, name)) = msg.split_once("pod sandbox k8s_") =>
        {
            let (name, _id) = name.split_once('(')?;
            let mut parts = name.split('_');
            let (name, namespace, uid) = (parts.next()?, parts.next()?, parts.next()?);
            (namespace, name, Some(uid).filter(|u| ids::is_pod_uid(u)))
        }
        EventKind::DestroyNetworkFailed | EventKind::RunPodSandboxFailed => {
            let (desc, _) = msg
                .strip_prefix("Error deleting ")
                .or_else(|| msg.strip_prefix("Error adding "))?
                .split_once(' ')?;
            let (pod, _id) = desc.split_once('/')?;
            let (namespace, name) = pod.split_once('_')?;
            (namespace, name, None)
        }
        _ => return None,
    };
    (!pod.0.is_empty() && !pod.1.is_empty()).then_some(pod)
}

/// The pod Multus names in an ADD or DEL error: `[<namespace>/<name>:<network>]: error adding
/// container to network …` (Multus v3), `[<namespace>/<name>/<uid>:<network>]: …` (v4), as
/// (namespace, name, UID).
fn multus_pod(text: &str) -> Option<(&str, &str, Option<&str>)> {
    let end = text
        .find("]: error adding container to network")
        .or_else(|| text.find("]: error deleting container from network"))?;
    let open = text[..end].rfind('[')?;
    let (pod, _network) = text[open + 1..end].split_once(':')?;
    let mut parts = pod.split('/');
    let (namespace, name) = (parts.next()?, parts.next()?);
    let uid = parts.next().filter(|u| ids::is_pod_uid(u));
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    };
    (word(namespace) && word(name) && parts.next().is_none()).then_some((namespace, name, uid))
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

/// The event type a generic PLEG relist line's new state generates, and for the legacy
/// `GenericPLEG: <uid>/<cid>: <old> -> <new>` its pod UID and container ID.
fn relist<'m>(line: &ParsedLine<'_>, msg: &'m str) -> (PlegType, Option<(&'m str, &'m str)>) {
    let state_type = |s: &str| match s {
        "running" => PlegType::ContainerStarted,
        "exited" => PlegType::ContainerDied,
        "non-existent" => PlegType::ContainerRemoved,
        "unknown" => PlegType::ContainerChanged,
        _ => PlegType::Other,
    };
    if let Some(rest) = msg.strip_prefix("GenericPLEG: ") {
        let (ids, states) = rest.split_once(": ").unwrap_or((rest, ""));
        let new = states.rsplit(" -> ").next().unwrap_or("").trim();
        let legacy = ids.split_once('/');
        let t = if states.contains(" -> ") {
            state_type(new)
        } else {
            PlegType::Other
        };
        return (t, legacy);
    }
    (
        line.field("newState").map_or(PlegType::Other, state_type),
        None,
    )
}

/// A gRPC status cut inside or right after its code (`…code = <prefix>` at the end of `err`, no
/// ` desc = `, `<prefix>` the start of a gRPC code name of `google.golang.org/grpc/codes`):
/// `Some` for such a cut status, holding the code when only one name begins with the prefix
/// (`Dea`: DeadlineExceeded; `D` is DeadlineExceeded or DataLoss). `None` for a whole status.
fn cut_grpc_code(err: &str) -> Option<Option<&'static str>> {
    const CODES: &[&str] = &[
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    ];
    let at = err.rfind("code = ")?;
    let prefix = err[at + "code = ".len()..].trim_end();
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let mut fits = CODES.iter().filter(|c| c.starts_with(prefix));
    let code = fits.next()?;
    Some(fits.next().is_none().then_some(*code))
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
