//! The rules as data: one row per rule (a finding kind from one kind of input), in documentation
//! order. [`crate::FindingKind::ALL`] is generated from it (each kind in the order of its first
//! row), [`crate::diagnose`] runs its state rules and the log rules run its log rules in this
//! order, and the tables in `docs/findings.md` and `README.md` are checked against it by
//! `crates/core/tests/registry.rs` (`UPDATE_DOCS=1` writes them).

use crate::finding::FindingKind;
use crate::model::NodeView;

use super::logs::Logs;
use super::{Config, Ctx, Finding, SkippedRule};

/// What a rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The node's state views (CRI, API, manifests, pod directories): [`crate::diagnose`].
    State,
    /// The kubelet's and runtime's logs, with the state views when there are some
    /// ([`super::logs::diagnose_with_logs`]).
    Logs,
}

/// What the log rules get: the log index, the node view (to confirm or dismiss), the thresholds
/// and the time.
pub(crate) struct LogInput<'a, 'e> {
    pub logs: &'a Logs<'e>,
    pub view: &'a NodeView,
    pub config: &'a Config,
    pub now: jiff::Timestamp,
    /// The startup breakdowns `SlowPodStartup` made (`pod_startup::run` sets it), handed out
    /// in [`crate::rules::Diagnosis::startup`].
    pub startup: std::cell::OnceCell<Vec<crate::startup::Breakdown>>,
}

/// The function that runs a rule.
#[derive(Clone, Copy)]
pub(crate) enum Run {
    /// A state rule: findings and the skipped rules when a view is missing.
    State(fn(&Ctx<'_>, &mut Vec<Finding>, &mut Vec<SkippedRule>)),
    /// A log rule; it may read what the rules before it found (`out`).
    Logs(fn(&LogInput<'_, '_>, &mut Vec<Finding>)),
    /// Reported by the function of an earlier row of the same family (one pass over its input
    /// reports several kinds).
    Earlier,
}

/// One rule: its kind, what it reads, and what the documentation says of it.
pub struct Rule {
    /// The finding kind it reports.
    pub kind: FindingKind,
    /// State or logs.
    pub input: Input,
    /// What tells this row from the kind's other rows in the docs table (`from the logs`,
    /// `name reserved`), empty for a kind's first row.
    pub variant: &'static str,
    /// The severity, with when it differs (`warning; critical when …`).
    pub severity: &'static str,
    /// The views or logs the rule needs.
    pub views: &'static str,
    /// The kubelet (or runtime) function the rule mirrors.
    pub kubelet_source: &'static str,
    /// What the finding means, in one line (README).
    pub summary: &'static str,
    /// The first thing to run.
    pub remediation: &'static str,
    /// The source file of the rule, under `crates/core/src/rules/`.
    pub file: &'static str,
    pub(crate) run: Run,
}

use FindingKind as K;
use Input::{Logs as L, State as S};

/// Every rule, in documentation order.
pub const RULES: &[Rule] = &[
    Rule {
        kind: K::LeakedSandbox,
        input: S,
        variant: "",
        severity: "warning",
        views: "CRI; API (+ manifests for static pods) for the pod-gone case",
        kubelet_source: "kuberuntime_gc.go evictSandboxes",
        summary: "NOTREADY sandbox with no containers that the kubelet's sandbox GC should have removed",
        remediation: "journalctl -u kubelet | grep <sandbox-id>; podcoroner gc",
        file: "leaked_sandbox.rs",
        run: Run::State(|ctx, out, skipped| ctx.leaked_sandboxes(out, skipped)),
    },
    Rule {
        kind: K::DuplicateReadySandboxes,
        input: S,
        variant: "",
        severity: "critical",
        views: "CRI",
        kubelet_source: "kuberuntime_manager.go podSandboxChanged",
        summary: "more than one READY sandbox for a pod UID",
        remediation: "crictl inspectp <ids>; crictl stopp <older id>",
        file: "duplicate_ready_sandboxes.rs",
        run: Run::State(|ctx, out, skipped| ctx.duplicate_ready_sandboxes(out, skipped)),
    },
    Rule {
        kind: K::OrphanedContainer,
        input: S,
        variant: "",
        severity: "warning",
        views: "CRI",
        kubelet_source: "CRI CreateContainer (pod_sandbox_id), RemovePodSandbox",
        summary: "a container whose sandbox does not exist",
        remediation: "crictl stop <id> && crictl rm <id>",
        file: "orphaned_container.rs",
        run: Run::State(|ctx, out, skipped| ctx.orphaned_containers(out, skipped)),
    },
    Rule {
        kind: K::StaticPodNotRemoved,
        input: S,
        variant: "",
        severity: "critical (warning when only the kubelet log shows it, e.g. `--offline`)",
        views: "CRI, manifests",
        kubelet_source: "config/file.go, pod_workers.go SyncPodKill",
        summary: "a static pod whose manifest is gone, still running",
        remediation: "crictl stopp <id> && crictl rmp <id>; systemctl restart kubelet",
        file: "static_pods.rs",
        run: Run::State(|ctx, out, skipped| ctx.static_pods_not_removed(out, skipped)),
    },
    Rule {
        kind: K::MissingMirrorPod,
        input: S,
        variant: "",
        severity: "warning",
        views: "CRI, API",
        kubelet_source: "mirror_client.go CreateMirrorPod",
        summary: "a running static pod with no mirror pod",
        remediation: "journalctl -u kubelet | grep -i \"mirror pod\"",
        file: "mirror_pods.rs",
        run: Run::State(|ctx, out, skipped| ctx.mirror_pods(out, skipped)),
    },
    Rule {
        kind: K::StaleMirrorPod,
        input: S,
        variant: "",
        severity: "warning",
        views: "CRI, API",
        kubelet_source: "kubelet.go syncPod (IsMirrorPodOf)",
        summary: "a mirror pod carrying another config hash",
        remediation: "kubectl delete pod -n <ns> <name>",
        file: "mirror_pods.rs",
        run: Run::Earlier,
    },
    Rule {
        kind: K::OrphanedMirrorPod,
        input: S,
        variant: "",
        severity: "warning",
        views: "CRI, API, manifests",
        kubelet_source: "kubelet_pods.go HandlePodCleanups",
        summary: "a mirror pod with no static pod",
        remediation: "kubectl delete pod -n <ns> <name>",
        file: "mirror_pods.rs",
        run: Run::Earlier,
    },
    Rule {
        kind: K::OrphanedPodDirectory,
        input: S,
        variant: "",
        severity: "warning",
        views: "pod directories, CRI, API, manifests",
        kubelet_source: "kubelet_volumes.go cleanupOrphanedPodDirs",
        summary: "`pods/<uid>` of no known pod, with the volume directories left",
        remediation: "grep <uid> /proc/mounts and umount what is listed",
        file: "pod_dirs.rs",
        run: Run::State(|ctx, out, skipped| ctx.orphaned_pod_directories(out, skipped)),
    },
    Rule {
        kind: K::InvalidStaticPodManifest,
        input: S,
        variant: "",
        severity: "warning",
        views: "manifests",
        kubelet_source: "config/file.go extractFromDir, extractFromFile",
        summary: "a manifest the kubelet cannot parse",
        remediation: "fix the file or move it out of the directory",
        file: "manifests.rs",
        run: Run::State(|ctx, out, skipped| ctx.invalid_manifests(out, skipped)),
    },
    Rule {
        kind: K::FailedPodNotCleaned,
        input: S,
        variant: "",
        severity: "info",
        views: "API",
        kubelet_source: "status_manager.go; kube-controller-manager PodGC",
        summary: "a Failed (e.g. Evicted) pod nothing will delete",
        remediation: "kubectl delete pod -n <ns> <name>",
        file: "failed_pods.rs",
        run: Run::State(|ctx, out, skipped| ctx.failed_pods(out, skipped)),
    },
    Rule {
        kind: K::SandboxStopFailing,
        input: L,
        variant: "",
        severity: "warning; critical when the CNI plugin cannot run on the node",
        views: "kubelet or runtime log (CRI to dismiss healed ones)",
        kubelet_source: "kuberuntime_gc.go removeSandbox",
        summary: "stopping or removing a sandbox keeps failing; the cause classified (CNI teardown, runtime busy, timeout)",
        remediation: "fix the cause the finding names; the kubelet's GC then finishes",
        file: "teardown.rs",
        run: Run::Logs(super::teardown::run),
    },
    Rule {
        kind: K::FindContainerRace,
        input: L,
        variant: "",
        severity: "info; warning when one container keeps coming back",
        views: "kubelet or runtime log",
        kubelet_source: "pod_container_deletor.go, kuberuntime_container.go removeContainer",
        summary: "the benign NotFound double-removal race; warning when one container keeps recurring",
        remediation: "none for the race; journalctl -u kubelet | grep <container-id> for a recurring one",
        file: "container_race.rs",
        run: Run::Logs(super::container_race::run),
    },
    Rule {
        kind: K::StuckPodWorker,
        input: L,
        variant: "",
        severity: "warning",
        views: "kubelet log",
        kubelet_source: "pod_workers.go (k/k #102344, 1.22)",
        summary: "a pod worker that never terminates (1.22 to 1.26)",
        remediation: "systemctl restart kubelet",
        file: "pod_workers.rs",
        run: Run::Logs(super::pod_workers::run),
    },
    Rule {
        kind: K::StaticPodRemovalBlocked,
        input: L,
        variant: "",
        severity: "warning",
        views: "kubelet log",
        kubelet_source: "kubelet.go HandlePodRemoves, syncLoopIteration",
        summary: "removals skipped because the kubelet's sources are not ready",
        remediation: "check the kubelet's connection to the API server",
        file: "static_pods.rs",
        run: Run::Logs(super::static_pods::run_removal_blocked),
    },
    Rule {
        kind: K::MirrorPodRecreateLoop,
        input: L,
        variant: "",
        severity: "warning; info for a single deletion",
        views: "kubelet log",
        kubelet_source: "kubelet.go syncPod (IsMirrorPodOf)",
        summary: "a mirror pod deleted as outdated and recreated, again and again",
        remediation: "kubectl get pod -n <ns> <name> -o yaml | grep config.mirror",
        file: "mirror_pods.rs",
        run: Run::Logs(super::mirror_pods::run),
    },
    Rule {
        kind: K::MirrorPodCreateFailed,
        input: L,
        variant: "",
        severity: "warning",
        views: "kubelet log",
        kubelet_source: "mirror_client.go CreateMirrorPod",
        summary: "the API server refusing a mirror pod (forbidden, already exists)",
        remediation: "kubectl delete pod -n <ns> <name> --grace-period=0 (AlreadyExists)",
        file: "mirror_pod_create_failed.rs",
        run: Run::Logs(super::mirror_pod_create_failed::run),
    },
    Rule {
        kind: K::OrphanedPodVolumes,
        input: L,
        variant: "",
        severity: "warning",
        views: "kubelet log",
        kubelet_source: "kubelet_volumes.go cleanupOrphanedPodDirs",
        summary: "the kubelet cannot remove an orphaned pod's volumes",
        remediation: "grep <uid> /proc/mounts and umount what is listed",
        file: "pod_dirs.rs",
        run: Run::Logs(super::pod_dirs::run),
    },
    Rule {
        kind: K::StuckTerminatingPod,
        input: L,
        variant: "",
        severity: "warning; critical when the CNI plugin cannot run on the node",
        views: "kubelet log, or API + CRI",
        kubelet_source: "kuberuntime_manager.go killPodWithSyncResult, pod_workers.go",
        summary: "a deleted pod past its grace period that still runs, or one the kubelet keeps failing to kill",
        remediation: "fix the cause the finding names; kubectl delete pod --force leaves the sandbox",
        file: "teardown.rs",
        run: Run::Earlier,
    },
    Rule {
        kind: K::StuckTerminatingPod,
        input: L,
        variant: "volume teardown",
        severity: "warning",
        views: "kubelet log",
        kubelet_source: "operation_generator.go GenerateUnmountVolumeFunc, nestedpendingoperations.go",
        summary: "a pod's volume the kubelet keeps failing to unmount (UnmountVolume.TearDown failed)",
        remediation: "find what holds the mount (grep -l <uid> /proc/*/mountinfo) and release it",
        file: "volume_teardown.rs",
        run: Run::Logs(super::volume_teardown::run),
    },
    Rule {
        kind: K::RuntimeUnhealthy,
        input: L,
        variant: "",
        severity: "critical; warning when only creating containers or sandboxes times out, or the runtime does not answer (its socket refuses, its Status fails) before the PLEG goes unhealthy; info when it answers again within a minute (a restart)",
        views: "kubelet log",
        kubelet_source: "kubelet.go syncLoop and updateRuntimeUp, pleg/generic.go Healthy and relist",
        summary: "PLEG not healthy, or the runtime down",
        remediation: "crictl info; journalctl -u containerd; systemctl restart containerd",
        file: "runtime.rs",
        run: Run::Logs(super::runtime::run),
    },
    Rule {
        kind: K::KubeletStartFailing,
        input: L,
        variant: "",
        severity: "critical; warning when the kubelet has no config file yet (before kubeadm init or join)",
        views: "kubelet log",
        kubelet_source: "cmd/kubelet/app/server.go Run, kubelet.go initializeRuntimeDependentModules",
        summary: "the kubelet exits as it starts and is not running where the log ends, with the cause",
        remediation: "fix the cause the exit names (swap, cgroup driver, config file); systemctl restart kubelet",
        file: "kubelet_start.rs",
        run: Run::Logs(super::kubelet_start::run),
    },
    Rule {
        kind: K::NodeStatusUpdateFailing,
        input: L,
        variant: "",
        severity: "critical when the Node object was deleted; warning when the kubelet's credentials are refused, or the API server is out of reach or the writes fail for five minutes; info for 40 s or exhausted retries, not at the kubelet's start",
        views: "kubelet log",
        kubelet_source: "kubelet_node_status.go registerWithAPIServer, updateNodeStatus and syncNodeStatus",
        summary: "the kubelet cannot register its Node or update its status where the log ends, with the cause",
        remediation: "restart the kubelet for a deleted Node; check its certificate; check that the node reaches the API server",
        file: "node_status.rs",
        run: Run::Logs(super::node_status::run),
    },
    Rule {
        kind: K::RuntimeNetworkNotReady,
        input: L,
        variant: "",
        severity: "warning for three minutes, or when the kubelet said the node did not become Ready within 2 minutes of its start; info when shorter",
        views: "kubelet log",
        kubelet_source: "kubelet.go updateRuntimeUp (the runtime's NetworkReady condition, CRI Status)",
        summary: "the runtime reports its pod network not ready for three minutes where the log ends, with the runtime's message",
        remediation: "install or repair the network add-on on this node (/etc/cni/net.d); restart the runtime if it does not reload the config",
        file: "runtime_network.rs",
        run: Run::Logs(super::runtime_network::run),
    },
    Rule {
        kind: K::NodeResourcePressure,
        input: L,
        variant: "",
        severity: "critical when the eviction manager can evict none (only critical or static pods left) where the log ends; warning while it reclaims, evicts or refuses pods, or the image GC cannot free enough; info when the GC freed enough or the pressure is over",
        views: "kubelet log",
        kubelet_source: "eviction/eviction_manager.go synchronize, evictPod and Admit; image_gc_manager.go GarbageCollect",
        summary: "the node under memory, disk or PID pressure: the eviction manager reclaiming, the pods it evicted or refused, that it cannot; the image GC freeing less than it must",
        remediation: "free the resource (disk: images, container logs, emptyDir; memory: limits, reserved); set pods' limits",
        file: "node_pressure.rs",
        run: Run::Logs(super::node_pressure::run),
    },
    Rule {
        kind: K::ContainerStartFailing,
        input: L,
        variant: "",
        severity: "warning when the cause is the node's (the OCI runtime, its shim, cgroups, the disk) and a pod failed twice or two pods did; info for one failure, or the pod's own cause (its spec, its image)",
        views: "kubelet log",
        kubelet_source: "kuberuntime_container.go startContainer (CRI CreateContainer, StartContainer) in SyncPod",
        summary: "containers that cannot be created or started where the log ends, with whose cause it is",
        remediation: "the runtime's log and the node's disk, cgroups and OCI runtime; or the pod's spec and image",
        file: "container_start.rs",
        run: Run::Logs(super::container_start::run),
    },
    Rule {
        kind: K::ContainerStopFailing,
        input: L,
        variant: "",
        severity: "warning",
        views: "kubelet or runtime log",
        kubelet_source: "kuberuntime_container.go killContainer, CRI StopContainer",
        summary: "a container the runtime fails to stop or kill, with the cause",
        remediation: "find the container's processes (D state, hung mounts); restart the shim or runtime",
        file: "container_stop.rs",
        run: Run::Logs(super::container_stop::run),
    },
    Rule {
        kind: K::PodStatusFailing,
        input: L,
        variant: "",
        severity: "warning",
        views: "kubelet log",
        kubelet_source: "kuberuntime_manager.go GetPodStatus (getPodContainerStatuses)",
        summary: "the kubelet cannot read a pod's container statuses, so its pod worker never acts on it",
        remediation: "restart the kubelet; upgrade past k/k #107670 when the error is NotFound",
        file: "pod_status.rs",
        run: Run::Logs(super::pod_status::run),
    },
    Rule {
        kind: K::StaticPodRemoved,
        input: L,
        variant: "",
        severity: "info",
        views: "kubelet log",
        kubelet_source: "config/file.go, kubelet_pods.go HandlePodCleanups",
        summary: "a static pod left its source, and when its mirror pod went",
        remediation: "none if the manifest was removed on purpose",
        file: "static_pods.rs",
        run: Run::Logs(super::static_pods::run_removed),
    },
    Rule {
        kind: K::StaticPodNotRemoved,
        input: L,
        variant: "from the logs",
        severity: "warning",
        views: "kubelet log",
        kubelet_source: "config/file.go, kuberuntime_manager.go killPodWithSyncResult",
        summary: "a removed static pod the kubelet cannot kill (KillPodSandbox failing)",
        remediation: "fix the cause the finding names; systemctl restart kubelet",
        file: "teardown.rs",
        run: Run::Earlier,
    },
    Rule {
        kind: K::LeakedSandbox,
        input: L,
        variant: "name reserved",
        severity: "warning",
        views: "kubelet or runtime log",
        kubelet_source: "containerd CRI RunPodSandbox (sandbox_run.go)",
        summary: "a dead sandbox keeping its pod's sandbox name reserved",
        remediation: "crictl stopp <id> && crictl rmp <id>",
        file: "leaked_sandbox.rs",
        run: Run::Logs(super::leaked_sandbox::run_name_reserved),
    },
    Rule {
        kind: K::SandboxCreateFailing,
        input: L,
        variant: "",
        severity: "warning; critical when no pod on the node gets a sandbox",
        views: "kubelet or runtime log (+ CRI)",
        kubelet_source: "kuberuntime_manager.go SyncPod createPodSandbox, CRI RunPodSandbox",
        summary: "RunPodSandbox keeps failing (CNI ADD, a name held by a leaked sandbox): pods wait in ContainerCreating",
        remediation: "journalctl -u containerd | grep RunPodSandbox; the CNI plugin's log for the ADD",
        file: "sandbox_create.rs",
        run: Run::Logs(super::sandbox_create::run),
    },
    Rule {
        kind: K::VolumeMountFailing,
        input: L,
        variant: "",
        severity: "warning when the cause is the node's (a CSI driver not registered, the mount command failing, a path missing) or not given and the pod still waits where the log ends; info when it is the pod spec's (a missing Secret, ConfigMap or claim), a cache race, or the pod no longer waits",
        views: "kubelet log",
        kubelet_source: "kubelet.go syncPod (volumemanager WaitForAttachAndMount), operation_generator.go MountVolume.SetUp",
        summary: "pods that wait for volumes the kubelet cannot attach or mount, with the cause and whose it is",
        remediation: "the mount's own error (MountVolume.SetUp failed); the CSI node plugin, the storage server, the path",
        file: "volume_mount.rs",
        run: Run::Logs(super::volume_mount::run),
    },
    Rule {
        kind: K::ImagePullFailing,
        input: L,
        variant: "",
        severity: "warning when the cause is the node's (the registry out of reach, its certificate untrusted, a rate limit, the image filesystem full, a pull past the deadline, layers not unpacked) and the pod still fails where the log ends; info when it is the pod's spec's (no such image, credentials refused) or not given",
        views: "kubelet log (+ runtime log)",
        kubelet_source: "images/image_manager.go EnsureImageExists, CRI PullImage",
        summary: "pods whose images the node cannot pull (ErrImagePull, ImagePullBackOff), with the cause and whose it is",
        remediation: "crictl pull <image> on the node; the cause's fix (DNS, proxy, CA, disk, pull secrets)",
        file: "image_pull.rs",
        run: Run::Logs(super::image_pull::run),
    },
    Rule {
        kind: K::ContainerCrashLooping,
        input: L,
        variant: "",
        severity: "warning for a static pod's container that exited 4 or more times in a row where the log ends (the node's own component); info for the workloads' pods",
        views: "kubelet log",
        kubelet_source: "kuberuntime_manager.go SyncPod (the restart back-off, CrashLoopBackOff)",
        summary: "containers the kubelet keeps restarting, a static pod's apart from the workloads'",
        remediation: "crictl logs of the exited container says why it exits; for a static pod, its manifest",
        file: "crash_loop.rs",
        run: Run::Logs(super::crash_loop::run),
    },
    Rule {
        kind: K::SlowPodStartup,
        input: L,
        variant: "",
        severity: "warning",
        views: "kubelet and runtime logs, or API pod conditions (+ CRI)",
        kubelet_source: "kubelet.go SyncPod, kuberuntime_manager.go SyncPod, pod_startup_latency_tracker.go",
        summary: "a pod took longer than --slow-start from bound to Ready; names the phase that took the time",
        remediation: "podcoroner explain <pod>: the phase's remediation (pre-pull images, the CNI plugin, probe settings)",
        file: "pod_startup.rs",
        run: Run::Logs(super::pod_startup::run),
    },
    Rule {
        kind: K::PodStartupMetricInvalid,
        input: L,
        variant: "",
        severity: "info",
        views: "kubelet log",
        kubelet_source: "pod_startup_latency_tracker.go ObservedPodOnWatch",
        summary: "the kubelet's podStartSLOduration is impossible (negative): its pod start SLI metric cannot be trusted",
        remediation: "read startup latency from podcoroner_pod_startup_seconds; upgrade the kubelet (k/k #131324)",
        file: "pod_startup.rs",
        run: Run::Logs(super::pod_startup::run_metric),
    },
];

/// The kinds of [`RULES`], each once, in the order of its first row: [`FindingKind::ALL`].
/// Fails to compile when `N` is not the number of kinds the table names.
pub(crate) const fn kinds<const N: usize>() -> [FindingKind; N] {
    let mut out = [FindingKind::LeakedSandbox; N];
    let mut n = 0;
    let mut i = 0;
    while i < RULES.len() {
        let k = RULES[i].kind;
        let mut seen = false;
        let mut j = 0;
        while j < n {
            if out[j] as u8 == k as u8 {
                seen = true;
            }
            j += 1;
        }
        if !seen {
            assert!(n < N, "FindingKind::ALL is shorter than the kinds of RULES");
            out[n] = k;
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "FindingKind::ALL is longer than the kinds of RULES");
    out
}

/// The rows of one kind.
pub fn rules_of(kind: FindingKind) -> impl Iterator<Item = &'static Rule> {
    RULES.iter().filter(move |r| r.kind == kind)
}
