//! The message table: one row per message family, each wording of each kubelet and runtime
//! version written once, with the event kind it names. [`super::classify`] matches a message
//! against it (rows tried in order, indexed by first byte), `message_keys` (what `grep -F`
//! needs to find these lines) and the cut-message table are generated from it, and the phrase
//! table is what a line the wordings miss is still matched by.
//!
//! A new message: add a wording to its family (or a family), with the kind it names; the keys
//! follow. Sources: `kubelet-forensics.md` §5 and the lines in `testdata/cases/`.

use super::{EventKind, PlegType, SyncOp};

use EventKind::*;

/// What a message must have besides starting with [`Wording::starts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// Nothing more.
    None,
    /// The message is exactly the wording.
    Exact,
    /// The wording is a whole word: no letter follows it (`SyncLoop ADD`, not `ADDX`).
    Word,
    /// The message contains the phrase.
    Has(&'static str),
    /// The message or the `err` field contains the phrase.
    HasOrErr(&'static str),
    /// The message or the `err` field contains the phrase, or a cut `err` ends with its first 8
    /// bytes or more.
    HasOrCutErr(&'static str),
    /// The message ends in `failed` or contains `" failed` (containerd's `… for "<id>" failed`).
    Failed,
    /// [`Cond::Failed`], or a cut line at error level (containerd logs `ContainerStatus for`
    /// at error level only when it failed; case 04).
    FailedOrCutError,
    /// The message contains the phrase, or the line was cut at error level before it could
    /// (containerd logs `RunPodSandbox for &PodSandboxMetadata{…}` at info when it starts and at
    /// error only with ` failed, error`; journalctl's pager cuts a line at the terminal's width
    /// with a `>`).
    HasOrCutError(&'static str),
    /// The line's field (first) has exactly the value (second): the kubelet's event recorder
    /// logs every pod event as `"Event occurred" … reason="<Reason>" message="…"`.
    Field(&'static str, &'static str),
    /// [`Cond::Field`], and the `message` field contains the phrase (third).
    FieldAndMessage(&'static str, &'static str, &'static str),
    /// The line is a pod event in one of the recorder's shapes (`super::super::recorder`)
    /// whose reason is the first and whose message starts with the second (`""`: any).
    Recorded(&'static str, &'static str),
}

/// Which words of a wording find its lines with `grep -F`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// The wording up to its first quote (structured lines escape quotes).
    Words,
    /// The phrase of its [`Cond`]: the wording alone is too common (`ListContainers`).
    Phrase,
}

/// One wording of a message.
#[derive(Debug, Clone, Copy)]
pub struct Wording {
    /// What the message starts with.
    pub starts: &'static str,
    /// What else it needs.
    pub cond: Cond,
    /// The kind of event it names.
    pub kind: EventKind,
    /// The words `grep -F` looks for.
    pub key: Key,
    /// The whole structured message, for a structured call whose message a line may cut short
    /// (case 05: `"ContainerStatus from runtime ser`).
    pub structured: Option<&'static str>,
}

/// Where upstream a family's wordings are written: the repository, the file at the newest
/// version that has it, the function and its log call, and the versions of that component the
/// wording holds for. Checked against the upstream source (GitHub search over the stored
/// trees of kubernetes/kubernetes, containerd/containerd, cri-o/cri-o, cri-tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cite {
    /// `owner/name` on GitHub.
    pub repo: &'static str,
    /// The file inside it.
    pub path: &'static str,
    /// The function and the wording it logs or returns.
    pub function: &'static str,
    /// The versions (`1.21-1.34` for the kubelet, `1.6-2.x` for containerd, `1.2x-1.34` for
    /// CRI-O) the wording holds for.
    pub versions: &'static str,
}

const fn cite(
    repo: &'static str,
    path: &'static str,
    function: &'static str,
    versions: &'static str,
) -> Cite {
    Cite {
        repo,
        path,
        function,
        versions,
    }
}

/// One message family: the wordings of one log call (or of one runtime's call and the
/// kubelet's report of it) across versions.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// Who logs it, for a person.
    pub source: &'static str,
    /// Where upstream the wordings are written, checked against the source: at least one per
    /// family, not yet one per wording (a wording without its own row comes from
    /// `kubelet-forensics.md` §5 and the cases' lines).
    pub cites: &'static [Cite],
    /// Its wordings, tried in order (the first that fits names the kind).
    pub wordings: &'static [Wording],
}

const fn w(starts: &'static str, kind: EventKind) -> Wording {
    Wording {
        starts,
        cond: Cond::None,
        kind,
        key: Key::Words,
        structured: None,
    }
}

const fn with(starts: &'static str, cond: Cond, kind: EventKind) -> Wording {
    Wording {
        starts,
        cond,
        kind,
        key: Key::Words,
        structured: None,
    }
}

/// A wording found by the phrase of its condition.
const fn by_phrase(starts: &'static str, cond: Cond, kind: EventKind) -> Wording {
    Wording {
        starts,
        cond,
        kind,
        key: Key::Phrase,
        structured: None,
    }
}

/// A structured message matched whole, or from its start when the line cut it.
const fn structured(msg: &'static str, kind: EventKind) -> Wording {
    Wording {
        starts: msg,
        cond: Cond::None,
        kind,
        key: Key::Words,
        structured: Some(msg),
    }
}

/// A structured message whose wording is its start (`Error syncing pod` of `Error syncing pod,
/// skipping`).
const fn structured_as(
    starts: &'static str,
    cond: Cond,
    msg: &'static str,
    kind: EventKind,
) -> Wording {
    Wording {
        starts,
        cond,
        kind,
        key: Key::Words,
        structured: Some(msg),
    }
}

const RUNTIME_FAILED: &str = "from runtime service failed";
const SOURCES_NOT_READY: &str = "sources aren't ready yet";
const PLEG_UNHEALTHY: &str = "PLEG is not healthy";
/// syncLoop's runtime error while the runtime's Status fails or says it is not ready
/// (`runtimeState.runtimeErrors`).
const RUNTIME_DOWN: &str = "container runtime is down";

/// Every message family.
pub const FAMILIES: &[Family] = &[
    // kubelet: its own start
    Family {
        source: "cmd/kubelet/app/server.go run: the version, the first line of every kubelet start",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "cmd/kubelet/app/server.go",
                "Run: klog.InfoS `Kubelet version` kubeletVersion",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "cmd/kubelet/app/server.go",
                "Run: glog.Infof (klog.Infof from 1.13) `Version: %+v` version.Get()",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            with("Kubelet version", Cond::Exact, KubeletStarted),
            // Before 1.21: klog.Infof("Version: %+v", version.Get()).
            with("Version: v", Cond::None, KubeletStarted),
        ],
    },
    Family {
        source: "cmd/kubelet/app/server.go and kubelet.go: the kubelet exits as it starts",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/component-base/cli/run.go",
                "Run: klog.ErrorS(err, `command failed`) for the error NewKubeletCommand's RunE returned",
                "1.23-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "cmd/kubelet/app/server.go",
                "Run: fmt.Errorf(`failed to run Kubelet: %w`, err)",
                "1.8-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "cmd/kubelet/app/server.go",
                "NewKubeletCommand: klog.ErrorS(err, `Failed to run kubelet`) of Run's error",
                "1.21-1.22",
            ),
            cite(
                "kubernetes/kubernetes",
                "cmd/kubelet/app/server.go",
                "NewKubeletCommand: klog.Fatal(err) of Run's error and of `failed to load Kubelet config file %s, error %v`",
                "1.10-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "initializeRuntimeDependentModules: klog.ErrorS(err, `Failed to start ContainerManager`); os.Exit(1)",
                "1.8-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "cmd/kubelet/app/server.go",
                "NewKubeletCommand: klog.ErrorS(err, `Failed to load kubelet config file`, `path`, configFile); os.Exit(1)",
                "1.20-1.25",
            ),
        ],
        wordings: &[
            with("command failed", Cond::Exact, KubeletExited),
            with("failed to run Kubelet", Cond::None, KubeletExited),
            with("Failed to run kubelet", Cond::Exact, KubeletExited),
            // 1.8's main: fmt.Fprintf(os.Stderr, "error: %v\n", err); cobra's `Error: `.
            with("error: failed to run Kubelet", Cond::None, KubeletExited),
            with(
                "failed to load Kubelet config file",
                Cond::None,
                KubeletExited,
            ),
            // 1.20-1.25's NewKubeletCommand: klog.ErrorS(err, "Failed to load kubelet config
            // file", "path", …); os.Exit(1).
            with(
                "Failed to load kubelet config file",
                Cond::None,
                KubeletExited,
            ),
            with(
                "Failed to start ContainerManager",
                Cond::None,
                KubeletExited,
            ),
        ],
    },
    Family {
        source: "the runtime's own word that a container did not start: containerd's CRI StartContainer, dockerd's API",
        cites: &[
            cite(
                "containerd/containerd",
                "internal/cri/instrument/instrumented_service.go",
                "StartContainer: log.G(ctx).WithError(err).Errorf(`StartContainer for %q failed`, r.GetContainerId()) (pkg/cri/instrumented_service.go before 2.0; containerd/cri before 1.3)",
                "1.1-2.x",
            ),
            cite(
                "moby/moby",
                "api/server/server.go",
                "makeHTTPHandler: logrus.Errorf(`Handler for %s %s returned error: %v`, r.Method, r.URL.Path, err) for a 5xx answer (every handler's: only a POST of a container's /start is a start failing)",
                "1.6-28.x",
            ),
        ],
        wordings: &[
            with(
                "StartContainer for ",
                Cond::Failed,
                RuntimeStartContainerFailed,
            ),
            with(
                "Handler for POST ",
                Cond::Has("/start returned error"),
                RuntimeStartContainerFailed,
            ),
            w("containerd: start container", RuntimeStartContainerFailed),
        ],
    },
    Family {
        source: "systemd: the kubelet's unit, its main process exiting with a failure and its restart scheduled",
        cites: &[
            cite(
                "systemd/systemd",
                "src/core/service.c",
                "service_sigchld_event: log_unit_full at LOG_NOTICE only when the exit is a failure (LOG_DEBUG otherwise) `Main process exited, code=%s, status=%i/%s`, the unit's name and `: ` before it (`kubelet.service: Main process exited, code=exited, status=255/n/a`)",
                "232-257",
            ),
            cite(
                "systemd/systemd",
                "src/core/service.c",
                "service_enter_restart: `Scheduled restart job, restart counter is at %u.` (v236+; before, `Service hold-off time over, scheduling restart.`)",
                "219-257",
            ),
        ],
        wordings: &[
            // `code=exited`: the kubelet exited by itself; `code=killed` is a signal's (an
            // admin's stop whose SIGTERM timed out ends in SIGKILL).
            with(
                "kubelet.service: Main process exited",
                Cond::Has("code=exited"),
                KubeletExited,
            ),
            // systemd before 232 (CentOS 7's 219).
            with(
                "kubelet.service: main process exited",
                Cond::Has("code=exited"),
                KubeletExited,
            ),
            w(
                "kubelet.service: Scheduled restart job",
                KubeletRestartScheduled,
            ),
            w(
                "kubelet.service: Service hold-off time over",
                KubeletRestartScheduled,
            ),
            w("kubelet.service holdoff time over", KubeletRestartScheduled),
        ],
    },
    Family {
        source: "pkg/kubelet/certificate/bootstrap/bootstrap.go isClientConfigStillValid: the kubeconfig's client certificate expired",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/certificate/bootstrap/bootstrap.go",
                "isClientConfigStillValid: utilruntime.HandleError(fmt.Errorf(`part of the existing bootstrap client certificate in %s is expired: %v`, kubeconfigPath, cert.NotAfter)) (logged as `\"Unhandled Error\" err=…` from 1.31)",
                "1.19-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/certificate/bootstrap/bootstrap.go",
                "isClientConfigStillValid: utilruntime.HandleError(fmt.Errorf(`Part of the existing bootstrap client certificate is expired: %s`, cert.NotAfter))",
                "1.8-1.18",
            ),
        ],
        wordings: &[
            w(
                "Part of the existing bootstrap client certificate",
                BootstrapCertificateExpired,
            ),
            with(
                "Unhandled Error",
                Cond::HasOrErr("existing bootstrap client certificate"),
                BootstrapCertificateExpired,
            ),
        ],
    },
    Family {
        source: "pkg/kubelet/certificate/transport.go addCertRotation: no valid client certificate",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/certificate/transport.go",
                "addCertRotation (checked every second): klog.ErrorS(nil, `No valid client certificate is found and the server is responsive, exiting.`, …); os.Exit(1); else `No valid client certificate is found but the server is not responsive. A restart may be necessary to retrieve new initial credentials.`",
                "1.18-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/certificate/transport.go",
                "addCertRotation: klog.Errorf (glog before 1.13) `The currently active client certificate has expired and the server is responsive, exiting.`; os.Exit(1); else `The currently active client certificate has expired, but the server is not responsive. A restart may be necessary to retrieve new initial credentials.`",
                "1.8-1.17",
            ),
        ],
        wordings: &[
            with(
                "The currently active client certificate has expired and the server is responsive",
                Cond::None,
                KubeletExited,
            ),
            with(
                "The currently active client certificate has expired, but the server is not responsive",
                Cond::None,
                NodeStatusUpdateFailed,
            ),
            // The kubelet exits: its certificate expired or was removed, and the API server is
            // up to bootstrap a new one from.
            with(
                "No valid client certificate is found and the server is responsive",
                Cond::None,
                KubeletExited,
            ),
            // It cannot: every write of its Node's status fails until it restarts.
            with(
                "No valid client certificate is found but the server is not responsive",
                Cond::None,
                NodeStatusUpdateFailed,
            ),
        ],
    },
    Family {
        source: "pkg/kubelet/kubelet_node_status.go: the Node the kubelet cannot register or update",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_node_status.go",
                "updateNodeStatus: klog.ErrorS(err, `Error updating node status, will retry`); syncNodeStatus: klog.ErrorS(err, `Unable to update node status`)",
                "1.20-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_node_status.go",
                "updateNodeStatus: glog.Errorf (klog from 1.13) `Error updating node status, will retry: %v`; syncNodeStatus `Unable to update node status: %v`",
                "1.3-1.19",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_node_status.go",
                "registerWithAPIServer/tryRegisterWithAPIServer: klog.ErrorS(err, `Unable to register node with API server`, node); before 1.20 `Unable to register node %q with API server: %v`",
                "1.5-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_node_status.go",
                "registerWithAPIServer: klog.InfoS(`Successfully registered node`, node); before 1.21 klog.Infof `Successfully registered node %s`",
                "1.5-1.34",
            ),
        ],
        wordings: &[
            with(
                "Error updating node status, will retry",
                Cond::None,
                NodeStatusUpdateFailed,
            ),
            with(
                "Unable to update node status",
                Cond::None,
                NodeStatusUpdateFailed,
            ),
            // registerWithAPIServer: 1.20+ `"Unable to register node with API server" err=…
            // node=…`, before `Unable to register node "<name>" with API server: <err>`.
            with(
                "Unable to register node",
                Cond::None,
                NodeStatusUpdateFailed,
            ),
            // registerWithAPIServer: 1.21+ `"Successfully registered node" node=…`, before
            // `Successfully registered node <name>`.
            w("Successfully registered node", NodeRegistered),
        ],
    },
    Family {
        source: "the node lease controller (component-helpers apimachinery/lease controller.go; pkg/kubelet/nodelease before 1.21): the kubelet's Lease in kube-node-lease, renewed every 10 s",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go",
                "retryUpdateLease: Error(err, `Failed to update lease`) (each of maxUpdateRetries, 5); sync: Info(`failed to update lease using latest lease, fallback to ensure lease`, err `failed 5 attempts to update lease`); backoffEnsureLease: Error(err, `Failed to ensure lease exists, will retry`, interval)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/nodelease/controller.go",
                "retryUpdateLease: klog.Errorf `failed to update lease, error: %v`; backoffEnsureLease: `failed to ensure node lease exists, will retry in %v, error: %v`; sync: Infof `failed to update lease using latest lease, fallback to ensure lease, err: %v`",
                "1.14-1.20",
            ),
        ],
        wordings: &[
            w("Failed to update lease", NodeStatusUpdateFailed),
            w("Failed to ensure lease exists", NodeStatusUpdateFailed),
            w("failed to ensure node lease exists", NodeStatusUpdateFailed),
        ],
    },
    Family {
        source: "kubelet.go updateRuntimeUp (the runtime's NetworkReady condition)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "updateRuntimeUp: klog.ErrorS(nil, `Container runtime network not ready`, `networkReady`, networkReady) (V(4) until the runtime is first expected ready, 1.27+)",
                "1.20-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "updateRuntimeUp: glog.Errorf (klog from 1.13) `Container runtime network not ready: %v`",
                "1.7-1.19",
            ),
        ],
        wordings: &[with(
            "Container runtime network not ready",
            Cond::None,
            RuntimeNetworkNotReady,
        )],
    },
    Family {
        source: "kubelet_node_status.go fastNodeStatusUpdate: the node not Ready within nodeReadyGracePeriod (2 min) of the kubelet's start",
        cites: &[cite(
            "kubernetes/kubernetes",
            "pkg/kubelet/kubelet_node_status.go",
            "fastNodeStatusUpdate: klog.ErrorS(nil, `Node not becoming ready in time after startup`) (then containerRuntimeReadyExpected: updateRuntimeUp logs the runtime's conditions at error level)",
            "1.27-1.34",
        )],
        wordings: &[w(
            "Node not becoming ready in time after startup",
            NodeNotReadyAfterStartup,
        )],
    },
    Family {
        source: "kubelet_node_status.go recordNodeStatusEvent: the Node's Ready condition turning true",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_node_status.go",
                "recordNodeStatusEvent: klog.V(2).InfoS(`Recording event message for node`, `node`, …, `event`, event) with event NodeReady (nodestatus setters.go ReadyCondition)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_node_status.go",
                "recordNodeStatusEvent: glog.V(2).Infof (klog from 1.13) `Recording %s event message for node %s`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            with(
                "Recording event message for node",
                Cond::Field("event", "NodeReady"),
                NodeReadyRecorded,
            ),
            w(
                "Recording NodeReady event message for node",
                NodeReadyRecorded,
            ),
        ],
    },
    Family {
        source: "eviction/eviction_manager.go synchronize and evictPod (node-pressure eviction)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/eviction/eviction_manager.go",
                "synchronize: InfoS `Eviction manager: attempting to reclaim` resourceName, `Eviction manager: able to reduce resource pressure without evicting pods.`, `Eviction manager: must evict pod(s) to reclaim`, `Eviction manager: pods ranked for eviction` pods, ErrorS `Eviction manager: eviction thresholds have been met, but no pods are active to evict`, InfoS `Eviction manager: unable to evict any pods from the node`; evictPod: ErrorS `Eviction manager: cannot evict a critical pod` pod, `Eviction manager: pod failed to evict`, InfoS `Eviction manager: pod is evicted successfully`",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/eviction/eviction_manager.go",
                "synchronize: glog.Warningf (klog from 1.13) `eviction manager: attempting to reclaim %v`, Infof `eviction manager: able to reduce %v pressure without evicting pods.`, `eviction manager: must evict pod(s) to reclaim %v`, `eviction manager: pods ranked for eviction: %s`, Errorf `eviction manager: eviction thresholds have been met, but no pods are active to evict`, Infof `eviction manager: unable to evict any pods from the node`; evictPod: Errorf `eviction manager: cannot evict a critical static pod %s` (`… a critical pod %s` before 1.11), `eviction manager: pod %s failed to evict %v`, Infof `eviction manager: pod %s is evicted successfully`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            w(
                "eviction manager: attempting to reclaim",
                EvictionReclaiming,
            ),
            w(
                "eviction manager: able to reduce",
                EvictionReclaimedWithoutEvicting,
            ),
            w("eviction manager: must evict pod", EvictionMustEvict),
            w(
                "eviction manager: pods ranked for eviction",
                EvictionMustEvict,
            ),
            w("eviction manager: cannot evict a critical", EvictionBlocked),
            w("eviction manager: cannot get mirror pod", EvictionBlocked),
            w(
                "eviction manager: eviction thresholds have been met, but no pods",
                EvictionBlocked,
            ),
            w(
                "eviction manager: unable to evict any pods",
                EvictionBlocked,
            ),
            with(
                "eviction manager: pod",
                Cond::Has("is evicted successfully"),
                PodEvicted,
            ),
            with(
                "eviction manager: pod",
                Cond::Has("failed to evict"),
                PodEvicted,
            ),
            // Admit: InfoS `Failed to admit pod to node` pod nodeCondition (1.21+); legacy
            // Warningf `Failed to admit pod %s - node has conditions: %v`.
            w("Failed to admit pod to node", EvictionAdmitRejected),
            with(
                "Failed to admit pod",
                Cond::Has("node has conditions"),
                EvictionAdmitRejected,
            ),
        ],
    },
    Family {
        source: "kubelet.go StartGarbageCollection: the image GC (image_gc_manager.go GarbageCollect)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "StartGarbageCollection: ErrorS(err, `Image garbage collection failed multiple times in a row`), `Image garbage collection failed once. Stats initialization may not have completed yet` (err from image_gc_manager.go GarbageCollect: `failed to garbage collect required amount of images. Wanted to free %d bytes, but freed %d bytes`, 1.26+ `Failed to garbage collect required amount of images. Attempted to free %d bytes, but only found %d bytes eligible to free.`); V(1) `Image garbage collection succeeded` after a failure",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "StartGarbageCollection: glog/klog.Errorf `Image garbage collection failed multiple times in a row: %v`, `Image garbage collection failed once. Stats initialization may not have completed yet: %v`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            w("Image garbage collection failed", ImageGcFailed),
            // After a failure, at V(1): the next run went through.
            w("Image garbage collection succeeded", ImageGcSucceeded),
            // image_gc_manager.go GarbageCollect: InfoS (1.21+), legacy Infof with the
            // `[imageGCManager]: ` prefix.
            w(
                "Disk usage on image filesystem is over the high threshold",
                ImageFsOverThreshold,
            ),
            w(
                "[imageGCManager]: Disk usage on image filesystem is at",
                ImageFsOverThreshold,
            ),
        ],
    },
    // kubelet: pod config and lifecycle
    Family {
        source: "kubelet.go syncLoopIteration (PLEG, housekeeping)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "syncLoopIteration: V(2).InfoS `SyncLoop (PLEG): event for pod` pod event",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "syncLoopIteration: glog.V(2).Infof (klog from 1.13) `SyncLoop (PLEG): %q, event: %#v`; V(4) `SyncLoop (housekeeping, skipped): sources aren't ready yet.`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            w("SyncLoop (PLEG)", Pleg(PlegType::Other)),
            w(
                "SyncLoop (housekeeping, skipped)",
                HousekeepingSkippedSourcesNotReady,
            ),
        ],
    },
    Family {
        source: "kubelet.go syncLoopIteration: SyncLoop ADD/UPDATE/DELETE/REMOVE/RECONCILE (legacy `SyncLoop (ADD, \"api\")`)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "syncLoopIteration: V(2).InfoS `SyncLoop ADD` (UPDATE, DELETE, REMOVE, RECONCILE) source pods",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "syncLoopIteration: glog.V(2).Infof (klog from 1.13) `SyncLoop (ADD, %q): %q` (UPDATE, REMOVE, RECONCILE, DELETE) u.Source format.Pods",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            with("SyncLoop ADD", Cond::Word, SyncLoop(SyncOp::Add)),
            with("SyncLoop (ADD", Cond::Word, SyncLoop(SyncOp::Add)),
            with("SyncLoop UPDATE", Cond::Word, SyncLoop(SyncOp::Update)),
            with("SyncLoop (UPDATE", Cond::Word, SyncLoop(SyncOp::Update)),
            with("SyncLoop DELETE", Cond::Word, SyncLoop(SyncOp::Delete)),
            with("SyncLoop (DELETE", Cond::Word, SyncLoop(SyncOp::Delete)),
            with("SyncLoop REMOVE", Cond::Word, SyncLoop(SyncOp::Remove)),
            with("SyncLoop (REMOVE", Cond::Word, SyncLoop(SyncOp::Remove)),
            with(
                "SyncLoop RECONCILE",
                Cond::Word,
                SyncLoop(SyncOp::Reconcile),
            ),
            with(
                "SyncLoop (RECONCILE",
                Cond::Word,
                SyncLoop(SyncOp::Reconcile),
            ),
        ],
    },
    Family {
        source: "CRI StopContainer: the kubelet's CRI client and killContainer, containerd's CRI plugin",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_container.go",
                "killContainer: `Container %q termination failed with gracePeriod %d: %v`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_container.go",
                "killContainer: ErrorS `Container termination failed with gracePeriod`",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "SyncPod: ErrorS `killContainer for pod failed` containerName containerID pod (before 1.21: klog.Errorf `killContainer %q(id=%q) for pod %q failed: %v`)",
                "1.7-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_container.go",
                "killContainersWithSyncResult: ErrorS `Kill container failed` pod podUID containerName containerID",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/dockertools/docker_manager.go",
                "killContainer: glog.Warningf `Container %q termination failed after %s: %v` (the name `<id> <container> <namespace>/<pod>`)",
                "1.2-1.5",
            ),
            cite(
                "containerd/containerd",
                "internal/cri/server/container_stop.go",
                "stopContainer: `failed to stop container %q`, `failed to kill container %q`, `an error occurs during waiting for container %q to be killed` (the error of `StopContainer for %q failed`)",
                "2.0-2.x (pkg/cri/server in 1.6, 1.7)",
            ),
            cite(
                "containerd/containerd",
                "internal/cri/instrument/instrumented_service.go",
                "StopContainer: Infof `StopContainer for %q with timeout %d (s)` / Errorf `… failed` / Infof `… returns successfully` (pkg/cri/server/instrumented_service.go in 1.6, 1.7)",
                "1.6-2.x",
            ),
            cite(
                "containerd/cri",
                "pkg/server/container_stop.go",
                "stopContainer: logrus.WithError Errorf `An error occurs during waiting for container %q to be stopped` before Infof `Kill container %q`",
                "1.1-1.4",
            ),
            cite(
                "containerd/containerd",
                "internal/cri/server/container_stop.go",
                "stopContainer: Debugf `Stop container %q with signal %v timed out` before Infof `Kill container %q` (the SIGKILL; also logged for a timeout of 0, so not read as a timeout); stopContainerRetryOnConnectionClosed: WithError Warnf `Shim ttrpc connection closed when stopping container %q, retry after %s` (2.x)",
                "1.6-2.x",
            ),
        ],
        wordings: &[
            structured_as(
                "StopContainer from runtime service failed",
                Cond::None,
                "StopContainer from runtime service failed",
                StopContainerFailed,
            ),
            by_phrase(
                "StopContainer \"",
                Cond::Has(RUNTIME_FAILED),
                StopContainerFailed,
            ),
            with("StopContainer for ", Cond::Failed, StopContainerFailed),
            with(
                "StopContainer for ",
                Cond::Has("returns successfully"),
                StopContainerDone,
            ),
            w("StopContainer for ", StopContainerStarted),
            with(
                "Stop container \"",
                Cond::Has("timed out"),
                StopSignalTimedOut,
            ),
            // containerd 1.1-1.4: the stop signal's wait ran out, SIGKILL follows; the error
            // of the wait after the SIGKILL (`… to be killed`) is StopContainer's own.
            with(
                "An error occurs during waiting for container \"",
                Cond::Has("to be stopped"),
                StopSignalTimedOut,
            ),
            with(
                "Shim ttrpc connection closed when stopping container",
                Cond::None,
                StopContainerFailed,
            ),
            structured(
                "Container termination failed with gracePeriod",
                StopContainerFailed,
            ),
            with(
                "Container \"",
                Cond::Has("termination failed with gracePeriod"),
                StopContainerFailed,
            ),
            // dockertools (1.2-1.5): `Container "<id> <name> <ns>/<pod>" termination failed
            // after <duration>: <err>`.
            with(
                "Container \"",
                Cond::Has("termination failed after"),
                StopContainerFailed,
            ),
            // SyncPod killing a container it must restart (its StopContainer failed).
            structured("killContainer for pod failed", StopContainerFailed),
            structured("Kill container failed", StopContainerFailed),
            with("killContainer \"", Cond::Failed, StopContainerFailed),
        ],
    },
    Family {
        source: "dockertools and the early kuberuntime SyncPod: creating the pod infra container and starting a container",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/dockertools/docker_manager.go",
                "SyncPod: glog.Errorf `Failed to create pod infra container: %v; Skipping pod %q: %s` (the pod sandbox of a dockertools node)",
                "1.2-1.5",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/dockertools/docker_manager.go",
                "SyncPod: utilruntime.HandleError `container start failed: %v: %s` (also kuberuntime_manager.go SyncPod before 1.10)",
                "1.2-1.9",
            ),
        ],
        wordings: &[
            w(
                "Failed to create pod infra container",
                CreatePodSandboxFailed,
            ),
            w("container start failed", CreateContainerFailed),
        ],
    },
    Family {
        source: "dockerd: a container's stop signal and its SIGKILL not obeyed in time",
        cites: &[
            cite(
                "moby/moby",
                "daemon/stop.go",
                "containerStop: Infof `Container %v failed to exit within %d seconds of signal %d - using the force` (the grace period ran out, SIGKILL follows; later `Container failed to exit within %d seconds of signal %d - using the force` with a container field)",
                "1.7-28.x",
            ),
            cite(
                "moby/moby",
                "daemon/kill.go",
                "killProcessDirectly: Infof `Container %s failed to exit within 10 seconds of kill - trying direct SIGKILL` (a 12-hex ID; later Errorf `Container failed to exit within %v of kill - trying direct SIGKILL` with a container field)",
                "1.7-28.x",
            ),
        ],
        wordings: &[
            with(
                "Container ",
                Cond::Has("of kill - trying direct SIGKILL"),
                StopContainerFailed,
            ),
            with(
                "Container ",
                Cond::Has("- using the force"),
                StopSignalTimedOut,
            ),
        ],
    },
    Family {
        // cri-o internal/oci/runtime_oci.go StopLoopForContainer (CRI-O 1.2x to 1.34):
        // `log.Warnf(ctx, "Stopping container %s with stop signal timed out. Killing...", id)`
        // (older: `… timed out. Killing`), then in the SIGKILL loop `log.Errorf(ctx, "Killing
        // container %v failed: %v", id, err)` and, for a process in D state after a minute,
        // `log.Errorf(ctx, "Detected process (%d) blocked in uninterruptible sleep for more than
        // %d seconds for container %s", …)`. Its StopContainer RPC returns `failed to stop
        // container %s: %w` (server/container_stop.go stopContainer), which the kubelet quotes.
        source: "CRI-O StopContainer: server/container_stop.go, internal/oci/runtime_oci.go StopLoopForContainer",
        cites: &[
            cite(
                "cri-o/cri-o",
                "internal/oci/runtime_oci.go",
                "StopLoopForContainer: `Stopping container %s with stop signal timed out. Killing...`, `Killing container %v failed: %v`, `Detected process (%d) blocked in uninterruptible sleep …`",
                "1.2x-1.34",
            ),
            cite(
                "cri-o/cri-o",
                "server/container_stop.go",
                "stopContainer: `failed to stop container %s: %w`",
                "1.2x-1.34",
            ),
            cite(
                "cri-o/cri-o",
                "server/container_stop.go",
                "StopContainer: log.Infof `Stopping container: %s (timeout: %ds)` when asked, `Stopped container %s: %s` when done (a container already gone answers with neither an error nor the second line)",
                "1.2x-1.34",
            ),
        ],
        wordings: &[
            w("Stopping container: ", StopContainerStarted),
            w("Stopped container ", StopContainerDone),
            with(
                "Stopping container ",
                Cond::Has("with stop signal timed out"),
                StopSignalTimedOut,
            ),
            with(
                "Killing container ",
                Cond::Has(" failed: "),
                StopContainerFailed,
            ),
            with(
                "Detected process (",
                Cond::Has("blocked in uninterruptible sleep"),
                StopContainerFailed,
            ),
        ],
    },
    Family {
        source: "CRI StopPodSandbox: the kubelet's CRI client, containerd, CRI-O",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/remote/remote_runtime.go",
                "StopPodSandbox: `StopPodSandbox %q from runtime service failed: %v`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/cri-client/pkg/remote_runtime.go",
                "StopPodSandbox: `StopPodSandbox from runtime service failed` podSandboxID (pkg/kubelet/cri/remote in 1.21-1.25)",
                "1.21-1.34",
            ),
            cite(
                "containerd/containerd",
                "internal/cri/instrument/instrumented_service.go",
                "StopPodSandbox: `StopPodSandbox for %q` / `… failed` / `… returns successfully` (pkg/cri/server/instrumented_service.go in 1.6, 1.7)",
                "1.6-2.x",
            ),
            cite(
                "kubernetes-sigs/cri-tools",
                "cmd/crictl/sandbox.go",
                "stopPodSandbox: `stopping the pod sandbox %q: %w`",
                "1.2x-1.34",
            ),
        ],
        wordings: &[
            structured_as(
                "StopPodSandbox from runtime service failed",
                Cond::None,
                "StopPodSandbox from runtime service failed",
                StopPodSandboxFailed,
            ),
            by_phrase(
                "StopPodSandbox \"",
                Cond::Has(RUNTIME_FAILED),
                StopPodSandboxFailed,
            ),
            with(
                "StopPodSandbox for ",
                Cond::Has("returns successfully"),
                StopPodSandboxDone,
            ),
            with("StopPodSandbox for ", Cond::Failed, StopPodSandboxFailed),
            // crictl stopp (cri-tools cmd/crictl/sandbox.go): `fmt.Errorf("stopping the pod
            // sandbox %q: %w", id, err)` (older: `errors.Wrapf`, and `… failed: %v`), printed
            // as `FATA[0010] stopping the pod sandbox "<id>" failed: rpc error: …` (case 27).
            w("stopping the pod sandbox \"", StopPodSandboxFailed),
            w("StopPodSandbox for ", StopPodSandboxStarted),
            w("Stopping pod sandbox: ", StopPodSandboxStarted),
            w("Stopped pod sandbox: ", StopPodSandboxDone),
            w("Stopped pod sandbox (already stopped)", StopPodSandboxDone),
        ],
    },
    Family {
        source: "kubelet.go syncLoop with pleg/generic.go Healthy",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "syncLoop: `skipping pod synchronization - %v`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "syncLoop: ErrorS `Skipping pod synchronization`",
                "1.21-1.34",
            ),
        ],
        wordings: &[
            with(
                "Skipping pod synchronization",
                Cond::HasOrCutErr(PLEG_UNHEALTHY),
                PlegUnhealthy,
            ),
            with(
                "skipping pod synchronization",
                Cond::Has(PLEG_UNHEALTHY),
                PlegUnhealthy,
            ),
            // Without the PLEG: the runtime's Status failing (updateRuntimeUp) or not ready.
            with(
                "Skipping pod synchronization",
                Cond::HasOrErr(RUNTIME_DOWN),
                PlegUnhealthy,
            ),
        ],
    },
    Family {
        source: "kubelet.go updateRuntimeUp: the runtime's Status (Version before 1.6) failing every 5 s",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "updateRuntimeUp: glog.Errorf `Container runtime sanity check failed: %v`",
                "1.2-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "updateRuntimeUp: ErrorS `Container runtime sanity check failed`",
                "1.21-1.34",
            ),
        ],
        wordings: &[w(
            "Container runtime sanity check failed",
            RuntimeCallFailed,
        )],
    },
    Family {
        // kubernetes pkg/kubelet/remote/remote_runtime.go CreateContainer: `glog.Errorf`/
        // `klog.Errorf("CreateContainer in sandbox %q from runtime service failed: %v", …)`
        // (≤ 1.20), `klog.ErrorS(err, "CreateContainer in sandbox from runtime service failed",
        // "podSandboxID", …)` (1.21–1.25); staging/src/k8s.io/cri-client/pkg/remote_runtime.go
        // `r.logErr(err, …)` with the same words (1.26–1.34).
        source: "CRI CreateContainer: the kubelet's CRI client (remote_runtime.go CreateContainer, 1.7-1.34)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/remote/remote_runtime.go",
                "CreateContainer: `CreateContainer in sandbox %q from runtime service failed: %v`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/cri-client/pkg/remote_runtime.go",
                "CreateContainer: `CreateContainer in sandbox from runtime service failed` podSandboxID (pkg/kubelet/cri/remote in 1.21-1.25)",
                "1.21-1.34",
            ),
        ],
        wordings: &[
            structured(
                "CreateContainer in sandbox from runtime service failed",
                CreateContainerFailed,
            ),
            by_phrase(
                "CreateContainer in sandbox \"",
                Cond::Has(RUNTIME_FAILED),
                CreateContainerFailed,
            ),
        ],
    },
    Family {
        source: "kuberuntime_manager.go GetPodStatus: a pod's container statuses",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "GetPodStatus: glog/klog.Errorf `getPodContainerStatuses for pod %q failed: %v`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "GetPodStatus: ErrorS `getPodContainerStatuses for pod failed` pod, once per error (logReduction)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/pleg/generic.go",
                "relist: glog.Errorf `PLEG: pod %s/%s failed reinspection: %v` pod.Name pod.Namespace (name first), then V(5).ErrorS `PLEG: pod failed reinspection` pod: updateCache's GetPodStatus failing for a pod",
                "1.5-1.34",
            ),
        ],
        wordings: &[
            structured(
                "getPodContainerStatuses for pod failed",
                PodContainerStatusesFailed,
            ),
            with(
                "PLEG: pod ",
                Cond::Has("failed reinspection"),
                PodContainerStatusesFailed,
            ),
            with(
                "getPodContainerStatuses for pod \"",
                Cond::Has("failed"),
                PodContainerStatusesFailed,
            ),
        ],
    },
    Family {
        source: "CRI client: Status, ListContainers, ListPodSandbox failing",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/cri-client/pkg/remote_runtime.go",
                "ListContainers: `ListContainers with filter from runtime service failed` filter (pkg/kubelet/cri/remote in 1.21-1.25)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/remote/remote_runtime.go",
                "ListContainers: glog/klog.Errorf `ListContainers with filter %+v from runtime service failed: %v`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            w("Status from runtime service failed", RuntimeCallFailed),
            by_phrase(
                "ListContainers",
                Cond::Has(RUNTIME_FAILED),
                RuntimeCallFailed,
            ),
            by_phrase(
                "ListPodSandbox",
                Cond::Has(RUNTIME_FAILED),
                RuntimeCallFailed,
            ),
        ],
    },
    Family {
        source: "CRI RemovePodSandbox: the kubelet's CRI client, containerd, CRI-O",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/cri-client/pkg/remote_runtime.go",
                "RemovePodSandbox: `RemovePodSandbox from runtime service failed` podSandboxID (pkg/kubelet/cri/remote in 1.21-1.25)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/remote/remote_runtime.go",
                "RemovePodSandbox: glog/klog.Errorf `RemovePodSandbox %q from runtime service failed: %v`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            structured_as(
                "RemovePodSandbox from runtime service failed",
                Cond::None,
                "RemovePodSandbox from runtime service failed",
                RemovePodSandboxFailed,
            ),
            by_phrase(
                "RemovePodSandbox \"",
                Cond::Has(RUNTIME_FAILED),
                RemovePodSandboxFailed,
            ),
            with(
                "RemovePodSandbox \"",
                Cond::Has("returns successfully"),
                RemovePodSandboxDone,
            ),
            with(
                "RemovePodSandbox for ",
                Cond::Failed,
                RemovePodSandboxFailed,
            ),
            with(
                "RemovePodSandbox for ",
                Cond::Has("returns successfully"),
                RemovePodSandboxDone,
            ),
            w("RemovePodSandbox for ", RemovePodSandboxStarted),
            w("Removing pod sandbox: ", RemovePodSandboxStarted),
            w("Removed pod sandbox: ", RemovePodSandboxDone),
        ],
    },
    Family {
        source: "CRI RemoveContainer: containerd, the kubelet (kuberuntime_container.go, topology manager)",
        cites: &[
            cite(
                "containerd/containerd",
                "internal/cri/instrument/instrumented_service.go",
                "RemoveContainer: `RemoveContainer for %q` / `… failed` / `… returns successfully` (pkg/cri/server/instrumented_service.go in 1.6, 1.7)",
                "1.6-2.x",
            ),
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/cri-client/pkg/remote_runtime.go",
                "RemoveContainer: ErrorS (r.logErr from 1.26) `RemoveContainer from runtime service failed` containerID (pkg/kubelet/cri/remote in 1.21-1.25)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/remote/remote_runtime.go",
                "RemoveContainer: glog/klog.Errorf `RemoveContainer %q from runtime service failed: %v`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            // The kubelet's CRI client reporting a failed RemoveContainer: before the bare
            // `RemoveContainer ` wordings below, which would read it as a removal started.
            structured_as(
                "RemoveContainer from runtime service failed",
                Cond::None,
                "RemoveContainer from runtime service failed",
                RemoveContainerFailed,
            ),
            by_phrase(
                "RemoveContainer \"",
                Cond::Has(RUNTIME_FAILED),
                RemoveContainerFailed,
            ),
            with(
                "RemoveContainer for ",
                Cond::Has("returns successfully"),
                RemoveContainerDone,
            ),
            with("RemoveContainer for ", Cond::Failed, RemoveContainerFailed),
            w("RemoveContainer for ", RemoveContainer),
            with("RemoveContainer", Cond::Exact, RemoveContainer),
            w("RemoveContainer ", RemoveContainer),
            w("[topologymanager] RemoveContainer", RemoveContainer),
        ],
    },
    Family {
        source: "CRI RunPodSandbox: the kubelet (kuberuntime_sandbox.go, pod workers), containerd, CRI-O",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/cri-client/pkg/remote_runtime.go",
                "RunPodSandbox: ErrorS `RunPodSandbox from runtime service failed` (pkg/kubelet/cri/remote in 1.21-1.25)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "SyncPod: glog.Errorf `createPodSandbox for pod %q failed: %v` (later `CreatePodSandbox for pod %q failed: %v`)",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/dockershim/network/cni/cni.go",
                "addToNetwork: klog.Errorf `Error adding %s to network %s/%s: %v` podDesc (`<namespace>_<name>/<sandbox id>`) type name (dockershim, removed in 1.24)",
                "1.10-1.23",
            ),
            cite(
                "cri-o/cri-o",
                "pkg/ocicni/ocicni.go",
                "addToNetwork: logrus.Errorf `Error adding network: %v` (CRI-O's CNI ADD in RunPodSandbox, naming no pod or sandbox; later in the vendored github.com/cri-o/ocicni, whose SetUpPodWithContext also logs `Error while adding pod to CNI network %q: %s`)",
                "1.0-1.31",
            ),
        ],
        wordings: &[
            w(
                "RunPodSandbox from runtime service failed",
                CreatePodSandboxFailed,
            ),
            with(
                "RunPodSandbox for ",
                Cond::Has("returns sandbox id"),
                RunPodSandboxDone,
            ),
            with(
                "RunPodSandbox for ",
                Cond::HasOrCutError(" failed"),
                RunPodSandboxFailed,
            ),
            w("RunPodSandbox for ", RunPodSandboxStarted),
            // containerd 1.5-1.7 instrumented_service.go logs its start as `RunPodsandbox for
            // %+v` (and its failure `RunPodSandbox for %+v failed, error`).
            w("RunPodsandbox for ", RunPodSandboxStarted),
            w("Error adding network: ", RunPodSandboxFailed),
            // dockershim cni.go addToNetwork: `Error adding %s to network %s/%s: %v`.
            with(
                "Error adding ",
                Cond::Has(" to network "),
                RunPodSandboxFailed,
            ),
            w(
                "Error while adding pod to CNI network ",
                RunPodSandboxFailed,
            ),
            w("Running pod sandbox: ", RunPodSandboxStarted),
            w("Ran pod sandbox ", RunPodSandboxDone),
            with(
                "CreatePodSandbox for pod",
                Cond::Has("failed"),
                CreatePodSandboxFailed,
            ),
            w("Failed to create sandbox for pod", CreatePodSandboxFailed),
            with(
                "createPodSandbox for pod \"",
                Cond::Has("failed"),
                CreatePodSandboxFailed,
            ),
        ],
    },
    Family {
        source: "kuberuntime_gc.go removeSandbox",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_gc.go",
                "removeSandbox: `Failed to stop sandbox %q before removing: %v`, `Failed to remove sandbox %q: %v`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_gc.go",
                "removeSandbox: ErrorS `Failed to stop sandbox before removing`, `Failed to remove sandbox` sandboxID",
                "1.21-1.34",
            ),
        ],
        wordings: &[
            w("Removing sandbox", GcRemovingSandbox),
            structured(
                "Failed to stop sandbox before removing",
                StopSandboxBeforeRemoveFailed,
            ),
            with(
                "Failed to stop sandbox \"",
                Cond::Has("before removing"),
                StopSandboxBeforeRemoveFailed,
            ),
            // killPodWithSyncResult's (no error), dockershim's (`Failed to stop sandbox "<id>": <err>`).
            w("Failed to stop sandbox", KillPodSandboxFailed),
            structured("Failed to remove sandbox", RemoveSandboxFailed),
        ],
    },
    Family {
        source: "CRI ContainerStatus: the kubelet's CRI client, containerd",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/cri-client/pkg/remote_runtime.go",
                "ContainerStatus: `ContainerStatus from runtime service failed` containerID, once per error (logReduction; pkg/kubelet/cri/remote in 1.21-1.25)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/remote/remote_runtime.go",
                "ContainerStatus: glog/klog.Errorf `ContainerStatus %q from runtime service failed: %v` (once per error from 1.15, logReduction)",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/cri-client/pkg/remote_runtime.go",
                "ContainerStatus: ErrorS `verify ContainerStatus failed` containerID, when verifyContainerStatus finds a required field empty in the runtime's answer (`status.Image is not set`, `status.ImageRef is not set`, `status.CreatedAt is not set`, …; pkg/kubelet/cri/remote in 1.21-1.25)",
                "1.21-1.34",
            ),
        ],
        wordings: &[
            structured(
                "ContainerStatus from runtime service failed",
                ContainerStatusFailed,
            ),
            structured("verify ContainerStatus failed", ContainerStatusFailed),
            by_phrase(
                "ContainerStatus \"",
                Cond::Has(RUNTIME_FAILED),
                ContainerStatusFailed,
            ),
            with(
                "ContainerStatus for ",
                Cond::FailedOrCutError,
                ContainerStatusFailed,
            ),
        ],
    },
    Family {
        source: "kuberuntime_gc.go: container GC and log cleanup",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "StartGarbageCollection: ErrorS `Container garbage collection failed` (and the ContainerGCFailed event)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "StartGarbageCollection: glog/klog.Errorf `Container garbage collection failed: %v`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            structured("Container garbage collection failed", ContainerGcFailed),
            structured("Failed to remove container", RemoveContainerFailed),
            structured(
                "Error getting ContainerStatus for containerID",
                GcContainerStatusFailed,
            ),
        ],
    },
    Family {
        source: "kubelet_pods.go HandlePodCleanups: orphaned pods' containers",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_pods.go",
                "HandlePodCleanups: V(3).InfoS `Clean up orphaned pod containers` podUID (the older of the two; the release that renamed it not checked)",
                "1.21-1.2x",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_pods.go",
                "HandlePodCleanups: V(2).InfoS `Clean up containers for orphaned pod we had not seen before` podUID",
                "1.2x-1.34",
            ),
        ],
        wordings: &[
            w("Clean up containers for orphaned pod", CleanUpOrphanedPod),
            w("Clean up orphaned pod containers", CleanUpOrphanedPod),
        ],
    },
    Family {
        source: "pod_container_deletor.go getContainersToDeleteInPod (structured): the container to delete is gone",
        cites: &[cite(
            "kubernetes/kubernetes",
            "pkg/kubelet/pod_container_deletor.go",
            "getContainersToDeleteInPod: InfoS `Container not found in pod's containers` containerID (the caller in real lines: pod_container_deletor.go:79, :80)",
            "1.21-1.34",
        )],
        wordings: &[w(
            "Container not found in pod's containers",
            ContainerNotFoundInPod,
        )],
    },
    Family {
        source: "volume manager reconstruction, kubelet_volumes.go cleanupOrphanedPodDirs",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_volumes.go",
                "cleanupOrphanedPodDirs: V(3).InfoS `Orphaned pod found, but volumes are not cleaned up` podUID",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_volumes.go",
                "cleanupOrphanedPodDirs: glog.V(3).Infof `Orphaned pod %q found, removing` and glog.Errorf `Failed to remove orphaned pod %q dir; err: %v` (1.2-1.6); glog.Errorf `Orphaned pod %q found, but volume paths are still present on disk.` (1.6-1.9), then the aggregated `Orphaned pod %q found, but volume paths are still present on disk` (lower-case `orphaned pod …` in later releases) with `There were a total of %v errors similar to this. Turn up verbosity to see them.`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            w(
                "Could not construct volume information",
                VolumeReconstructionFailed,
            ),
            w(
                "Cleaned up orphaned pod volumes dir",
                OrphanedPodVolumesCleaned,
            ),
            with(
                "Orphaned pod \"",
                Cond::Has("volumes not yet removed"),
                OrphanedPodPendingVolumes,
            ),
            with(
                "Orphaned pod \"",
                Cond::Has("found, removing"),
                OrphanedPodRemoving,
            ),
            w("Orphaned pod \"", OrphanedPodVolumes),
            // kubelet 1.2-1.6: `glog.Errorf("Failed to remove orphaned pod %q dir; err: %v", …)`.
            w("Failed to remove orphaned pod \"", OrphanedPodVolumes),
            // kubelet 1.19-1.20 cleanupOrphanedPodDirs: the summary line
            // `klog.Errorf("%v : There were a total of %v errors similar to this. …", err, n)`
            // of an `fmt.Errorf("orphaned pod %q found, but …")` (lower case; case 13).
            w("orphaned pod \"", OrphanedPodVolumes),
            w(
                "Orphaned pod found, but volumes are not cleaned up",
                OrphanedPodVolumes,
            ),
            with("Orphan pod", Cond::Exact, OrphanedPodVolumes),
            structured_as(
                "There were many similar errors",
                Cond::HasOrErr("rphaned pod"),
                "There were many similar errors. Turn up verbosity to see them.",
                OrphanedPodVolumes,
            ),
        ],
    },
    Family {
        source: "pod_container_deletor.go",
        cites: &[cite(
            "kubernetes/kubernetes",
            "pkg/kubelet/pod_container_deletor.go",
            "newPodContainerDeletor: Warningf `[pod_container_deletor] DeleteContainer returned error for (id=%v): %v`; getContainersToDeleteInPod: Warningf `Container %q not found in pod's containers` (`… not found in pod's exited containers` before)",
            "1.7-1.20",
        )],
        wordings: &[
            structured("DeleteContainer returned error", DeleteContainerFailed),
            w(
                "[pod_container_deletor] DeleteContainer returned error",
                DeleteContainerFailed,
            ),
            // kubelet 1.9-1.11 deleteContainersInPod: `klog.Warningf("Container %q not found in
            // pod's containers", containerID)`: the container it was to delete is already gone
            // (case 37). Not computePodActions' structured "Container not found in pod's
            // containers", which names no ID.
            with(
                "Container \"",
                Cond::Has("not found in pod's containers"),
                DeleteContainerFailed,
            ),
            // The same call before it kept only exited containers (kubelet 1.7 to 1.9).
            with(
                "Container \"",
                Cond::Has("not found in pod's exited containers"),
                DeleteContainerFailed,
            ),
        ],
    },
    Family {
        source: "dockershim helpers.go removeContainerIfConflict (kubelet ≤ 1.23)",
        cites: &[cite(
            "kubernetes/kubernetes",
            "pkg/kubelet/dockershim/helpers.go",
            "removeContainerIfConflict: `Failed to remove the conflicting container %q: %v`",
            "1.7-1.23",
        )],
        // `klog.Errorf("Failed to remove the conflicting container %q: %v", id, err)`; with
        // "No such container" the conflicting container is already gone (case 37).
        wordings: &[w(
            "Failed to remove the conflicting container",
            RemoveContainerFailed,
        )],
    },
    Family {
        source: "kubelet.go syncPod: mirror pods judged outdated; mirror_client.go",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "SyncPod: InfoS `Deleted mirror pod because it is outdated`, ErrorS `Failed creating a mirror pod` pod",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "syncPod: glog.Errorf (Warningf, klog from 1.13) `Deleting mirror pod %q because it is outdated`, glog/klog.Errorf `Failed creating a mirror pod for %q: %v`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            structured(
                "Deleted mirror pod because it is outdated",
                MirrorPodOutdatedDeleted,
            ),
            with(
                "Deleted mirror pod \"",
                Cond::Has("because it is outdated"),
                MirrorPodOutdatedDeleted,
            ),
            with(
                "Deleting mirror pod \"",
                Cond::Has("because it is outdated"),
                MirrorPodOutdatedDeleted,
            ),
            w("Deleting a mirror pod", MirrorPodDeleting),
            w("Failed creating a mirror pod", MirrorPodCreateFailed),
        ],
    },
    Family {
        source: "pod_workers.go: Error syncing pod",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/pod_workers.go",
                "podWorkerLoop: ErrorS `Error syncing pod, skipping` pod podUID",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/pod_workers.go",
                "managePodLoop: glog/klog.Errorf `Error syncing pod %s (%q), skipping: %v` UID format.Pod",
                "1.7-1.20",
            ),
        ],
        wordings: &[structured_as(
            "Error syncing pod",
            Cond::None,
            "Error syncing pod, skipping",
            ErrorSyncingPod,
        )],
    },
    Family {
        source: "CNI teardown: dockershim, containerd, CRI-O",
        cites: &[
            cite(
                "containerd/containerd",
                "internal/cri/server/sandbox_stop.go",
                "stopPodSandbox: `failed to destroy network for sandbox %q: %w` (pkg/cri/server in 1.6, 1.7)",
                "1.6-2.x",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/dockershim/network/cni/cni.go",
                "deleteFromNetwork: glog.Errorf `Error deleting network: %v` (early releases), then klog.Errorf `Error deleting %s from network %s/%s: %v` pdesc type name (dockershim, removed in 1.24)",
                "1.7-1.23",
            ),
            cite(
                "cri-o/cri-o",
                "pkg/ocicni/ocicni.go",
                "deleteFromNetwork: logrus.Errorf `Error deleting network: %v` (CRI-O's CNI DEL; later the vendored github.com/cri-o/ocicni's TearDownPodWithContext returns `Error while removing pod from CNI network %q: %s`, which CRI-O logs)",
                "1.0-1.31",
            ),
            cite(
                "cri-o/cri-o",
                "server/sandbox_network.go",
                "networkStop: `failed to destroy network for pod sandbox %s(%s): %v` sb.Name() (k8s_<name>_<ns>_<uid>_<attempt>) sb.ID(), logged by its caller at warning",
                "1.16-1.34",
            ),
        ],
        wordings: &[
            w("Error deleting network", DestroyNetworkFailed),
            w(
                "Error while removing pod from CNI network ",
                DestroyNetworkFailed,
            ),
            with(
                "Error deleting ",
                Cond::Has(" from network "),
                DestroyNetworkFailed,
            ),
            w(
                "Failed to destroy network for sandbox",
                DestroyNetworkFailed,
            ),
            w(
                "failed to destroy network for sandbox",
                DestroyNetworkFailed,
            ),
            // CRI-O names the sandbox `k8s_<name>_<ns>_<uid>_<attempt>(<id>)`.
            w(
                "failed to destroy network for pod sandbox ",
                DestroyNetworkFailed,
            ),
            with(
                "TearDown network for sandbox ",
                Cond::Has("successfully"),
                TearDownNetworkDone,
            ),
        ],
    },
    Family {
        source: "kuberuntime_manager.go killPodWithSyncResult, kubelet_pods.go",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "SyncPod: ErrorS `killPodWithSyncResult failed`",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "SyncPod: glog/klog.Errorf `killPodWithSyncResult failed: %v`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet_pods.go",
                "podKiller: glog/klog.V(2).Infof `Killing unwanted pod %q`, glog/klog.Errorf `Failed killing the pod %q: %v`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_container.go",
                "killContainer: glog/klog.V(2).Infof `Killing container %q with %d second grace period`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            w("Failed killing the pod", KillPodFailed),
            structured("killPodWithSyncResult failed", KillPodFailed),
            structured("Killing container with a grace period", KillingContainer),
            w("Killing container \"", KillingContainer),
            w("Killing unwanted pod", KillingUnwantedPod),
        ],
    },
    Family {
        source: "containerd CRI generateAndSendContainerEvent (the evented PLEG's events): a sandbox's status for a container event",
        cites: &[cite(
            "containerd/containerd",
            "internal/cri/server/helpers.go",
            "generateAndSendContainerEvent: Warnf `Failed to get podSandbox status for container event for sandboxID %q: %v. Sending the event with nil podSandboxStatus.` (pkg/cri/server in 1.7)",
            "1.7-2.x",
        )],
        wordings: &[w(
            "Failed to get podSandbox status for container event for sandboxID",
            SandboxNotFound,
        )],
    },
    Family {
        source: "kubelet.go HandlePodRemoves: sources not ready",
        cites: &[cite(
            "kubernetes/kubernetes",
            "pkg/kubelet/kubelet.go",
            "deletePod: `skipping delete because sources aren't ready yet`, logged by HandlePodRemoves as `Failed to delete pod`",
            "1.7-1.34",
        )],
        wordings: &[by_phrase(
            "Failed to delete pod",
            Cond::HasOrErr(SOURCES_NOT_READY),
            SkippingDeleteSourcesNotReady,
        )],
    },
    Family {
        source: "kubelet generic PLEG: a container's state change in a relist (V4)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/pleg/generic.go",
                "generateEvents: glog.V(4).Infof (klog from 1.13) `GenericPLEG: %v/%v: %v -> %v` podID cid oldState newState (plegContainerRunning `running`, Exited `exited`, Unknown `unknown`, NonExistent `non-existent`)",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/pleg/generic.go",
                "generateEvents: klog.V(4).InfoS `GenericPLEG` podUID containerID oldState newState",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/pleg/generic.go",
                "relist: glog.Errorf (klog from 1.13) `GenericPLEG: Unable to retrieve pods: %v`; ErrorS `GenericPLEG: Unable to retrieve pods` from 1.21",
                "1.3-1.34",
            ),
        ],
        wordings: &[
            // relist's ListPodSandbox and ListContainers failing: the runtime does not answer.
            w("GenericPLEG: Unable to retrieve pods", RuntimeCallFailed),
            w("GenericPLEG: ", PlegRelist(PlegType::Other)),
            with("GenericPLEG", Cond::Exact, PlegRelist(PlegType::Other)),
        ],
    },
    Family {
        source: "kubelet generic PLEG: container finished",
        cites: &[cite(
            "kubernetes/kubernetes",
            "pkg/kubelet/pleg/generic.go",
            "Relist: V(2).InfoS `Generic (PLEG): container finished` podID containerID exitCode",
            "1.21-1.34",
        )],
        wordings: &[w("Generic (PLEG): container finished", ContainerFinished)],
    },
    Family {
        source: "containerd: sandboxes loaded at start",
        cites: &[cite(
            "containerd/containerd",
            "internal/cri/server/restart.go",
            "recover: Debugf `Loaded sandbox %+v` (glog.V(4) in containerd/cri; pkg/cri/server in 1.6, 1.7)",
            "1.1-2.x",
        )],
        wordings: &[w("Loaded sandbox", SandboxLoaded)],
    },
    Family {
        source: "pod_workers.go and kubelet_pods.go: the pod lifecycle",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/pod_workers.go",
                "UpdatePod: V(4).InfoS `Pod is orphaned and must be torn down` pod podUID",
                "1.22-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/pod_workers.go",
                "managePodLoop / startPodSync: V(4).InfoS `Pod cannot start yet` pod podUID (allowPodStart: a static pod waits for the pod of its full name to terminate)",
                "1.22-1.34",
            ),
        ],
        wordings: &[
            structured(
                "Pod worker has been requested for removal but is still not fully terminated",
                PodWorkerNotTerminated,
            ),
            structured("Pod cannot start yet", PodCannotStartYet),
            structured(
                "Pod has been terminated and is no longer known to the kubelet, remove all history",
                RemoveAllHistory,
            ),
            structured("Pod is orphaned and must be torn down", PodOrphanedTornDown),
            w("Pod is being synced for the first time", PodSyncedFirstTime),
            w("Pod terminated all containers successfully", PodTerminated),
            w(
                "Pod terminated all orphaned containers successfully",
                PodTerminated,
            ),
            w("Pod has been deleted and must be killed", PodMustBeKilled),
        ],
    },
    Family {
        source: "containerd: shim disconnected",
        cites: &[cite(
            "containerd/containerd",
            "core/runtime/v2/shim.go",
            "cleanupAfterDeadShim: `cleaning up after shim disconnected` id namespace (runtime/v2/shim.go in 1.6, 1.7)",
            "1.6-2.x",
        )],
        wordings: &[w("cleaning up after shim disconnected", ShimDisconnected)],
    },
    Family {
        source: "kubelet pod startup latency tracker (pod_startup_latency_tracker.go), 1.27+",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/util/pod_startup_latency_tracker.go",
                "ObservedPodOnWatch: InfoS `Observed pod startup duration` pod podStartSLOduration podStartE2EDuration podCreationTimestamp firstStartedPulling lastFinishedPulling observedRunningTime watchObservedRunningTime (to 1.34.x before the cherry-pick of k/k #131950)",
                "1.27-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/util/pod_startup_latency_tracker.go",
                "ObservedPodOnWatch: logger.Info `Observed pod startup duration` pod podStartSLOduration podStartE2EDuration totalImagesPullingTime totalInitContainerRuntime isStatefulPod podCreationTimestamp imagePullSessionsCount imagePullSessionsStartsCount observedRunningTime watchObservedRunningTime (k/k #131950)",
                "1.34-1.35",
            ),
        ],
        wordings: &[structured(
            "Observed pod startup duration",
            PodStartupObserved,
        )],
    },
    Family {
        source: "kubelet SyncPod: the pod sandbox created (V4)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "SyncPod: V(4).InfoS `Created PodSandbox for pod` podSandboxID pod",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "SyncPod: glog/klog.V(4).Infof `Created PodSandbox %q for pod %q` podSandboxID format.Pod",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            w("Created PodSandbox for pod", PodSandboxCreated),
            with(
                "Created PodSandbox \"",
                Cond::Has("\" for pod \""),
                PodSandboxCreated,
            ),
        ],
    },
    Family {
        source: "kubelet computePodActions (podSandboxChanged): the pod needs a new sandbox (V2)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_manager.go",
                "podSandboxChanged: glog.V(2).Infof (klog from 1.13) `No sandbox for pod %q can be found. Need to start a new one`, `No ready sandbox for pod %q can be found. Need to start a new one`, `Sandbox for pod %q has changed. Need to start a new one`",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/util/util.go",
                "PodSandboxChanged: V(2).InfoS `No sandbox for pod can be found. Need to start a new one`, `Multiple sandboxes are ready for Pod. Need to reconcile them`, `No ready sandbox for pod can be found. Need to start a new one`, `Sandbox for pod has changed. Need to start a new one`, `Sandbox for pod has no IP address. Need to start a new one` pod (kuberuntime_manager.go podSandboxChanged before the util package)",
                "1.21-1.34",
            ),
        ],
        wordings: &[
            structured(
                "No ready sandbox for pod can be found. Need to start a new one",
                PodSandboxNeeded,
            ),
            structured(
                "No sandbox for pod can be found. Need to start a new one",
                PodSandboxNeeded,
            ),
            structured(
                "Multiple sandboxes are ready for Pod. Need to reconcile them",
                PodSandboxNeeded,
            ),
            structured(
                "Sandbox for pod has changed. Need to start a new one",
                PodSandboxNeeded,
            ),
            structured(
                "Sandbox for pod has no IP address. Need to start a new one",
                PodSandboxNeeded,
            ),
            with(
                "No ready sandbox for pod \"",
                Cond::Has("can be found. Need to start a new one"),
                PodSandboxNeeded,
            ),
            with(
                "No sandbox for pod \"",
                Cond::Has("can be found. Need to start a new one"),
                PodSandboxNeeded,
            ),
            with(
                "Multiple sandboxes are ready for Pod \"",
                Cond::Has("Need to reconcile them"),
                PodSandboxNeeded,
            ),
            with(
                "Sandbox for pod \"",
                Cond::Has("has changed. Need to start a new one"),
                PodSandboxNeeded,
            ),
        ],
    },
    Family {
        source: "kubelet pod events as its event recorder logs them (`Event occurred`, V3+): image pulls, container starts",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/images/image_manager.go",
                "EnsureImageExists: events Pulling `Pulling image %q`, Pulled `Successfully pulled image %q in %v (%v including waiting). Image size: %v bytes.` (without the size before 1.30, without `including waiting` before 1.28) and `Container image %q already present on machine`, Failed `Failed to pull image %q: %v`, BackOff `Back-off pulling image %q`",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/client-go/tools/record/event.go",
                "StartStructuredLogging: InfoS `Event occurred` object fieldPath kind apiVersion type reason message",
                "1.21-1.34",
            ),
        ],
        wordings: &[
            with(
                "Event occurred",
                Cond::Field("reason", "Pulling"),
                ImagePulling,
            ),
            with(
                "Event occurred",
                Cond::Field("reason", "Pulled"),
                ImagePulled,
            ),
            with(
                "Event occurred",
                Cond::FieldAndMessage("reason", "Failed", "pull image"),
                ImagePullFailed,
            ),
            with(
                "Event occurred",
                Cond::FieldAndMessage("reason", "BackOff", "pulling image"),
                ImagePullFailed,
            ),
            with(
                "Event occurred",
                Cond::Field("reason", "Started"),
                ContainerStartedLogged,
            ),
        ],
    },
    Family {
        source: "kubelet pod events as its event recorder logs them, every shape: a pod stopped, ended, pulled, started (V3+; failed writes at every level)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/client-go/tools/record/event.go",
                "StartLogging: logf(`Event(%#v): type: '%v' reason: '%v' %v`, e.InvolvedObject, e.Type, e.Reason, e.Message); the kubelet's makeEventRecorder calls StartLogging(klog.V(3).Infof) (cmd/kubelet/app/server.go) until it calls StartStructuredLogging(3) (`Event occurred`, the pulls and starts family)",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/client-go/tools/record/event.go",
                "recordEvent: klog.Errorf(`Server rejected event '%#v': '%v' (will not retry!)`, event, err), `Unable to construct event '%#v': '%v' (will not retry!)`, `Unable to write event: '%v' (may retry after sleeping)` (the event a %#v dump of *v1.Event: InvolvedObject:v1.ObjectReference{Kind:\"Pod\", Namespace:…, Name:…, UID:…}, Reason:…, Message:…)",
                "1.7-1.29",
            ),
            cite(
                "kubernetes/kubernetes",
                "staging/src/k8s.io/client-go/tools/record/event.go",
                "recordEvent and recordToSink, contextual: Error(err, `Server rejected event (will not retry!)`, `event`, event), `Unable to construct event (will not retry!)`, `Unable to write event (may retry after sleeping)`, `Unable to write event (retry limit exceeded!)`, `Unable to write event (broadcaster is shut down)` (the event printed by (*v1.Event).String(): &Event{…,InvolvedObject:ObjectReference{Kind:Pod,Namespace:…,Name:…,UID:…,…},Reason:…,Message:…,Source:EventSource{…},…})",
                "1.30-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_container.go",
                "killContainer: when the caller gives no message, `Stopping container %s` with reason Killing (events.KillingContainer), recorded before PreStop and StopContainer",
                "1.7-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/active_deadline.go",
                "ShouldEvict: m.recorder.Eventf(pod, v1.EventTypeNormal, reason, message) with reason `DeadlineExceeded`; eviction/eviction_manager.go records reason `Evicted`, lifecycle/predicate.go's preemption `Preempting` (events.PreemptContainer)",
                "1.7-1.34",
            ),
        ],
        wordings: &[
            with(
                "Event occurred",
                Cond::FieldAndMessage("reason", "Killing", "Stopping container"),
                PodStopRecorded,
            ),
            with(
                "Event occurred",
                Cond::Field("reason", "Evicted"),
                PodEndedRecorded,
            ),
            with(
                "Event occurred",
                Cond::Field("reason", "DeadlineExceeded"),
                PodEndedRecorded,
            ),
            with(
                "Event occurred",
                Cond::Field("reason", "Preempting"),
                PodEndedRecorded,
            ),
            with(
                "Event(",
                Cond::Recorded("Killing", "Stopping container"),
                PodStopRecorded,
            ),
            with("Event(", Cond::Recorded("Evicted", ""), PodEndedRecorded),
            with(
                "Event(",
                Cond::Recorded("DeadlineExceeded", ""),
                PodEndedRecorded,
            ),
            with("Event(", Cond::Recorded("Preempting", ""), PodEndedRecorded),
            with(
                "Server rejected event",
                Cond::Recorded("Killing", "Stopping container"),
                PodStopRecorded,
            ),
            with(
                "Server rejected event",
                Cond::Recorded("Evicted", ""),
                PodEndedRecorded,
            ),
            with(
                "Server rejected event",
                Cond::Recorded("DeadlineExceeded", ""),
                PodEndedRecorded,
            ),
            with(
                "Server rejected event",
                Cond::Recorded("Preempting", ""),
                PodEndedRecorded,
            ),
            with(
                "Unable to write event",
                Cond::Recorded("Killing", "Stopping container"),
                PodStopRecorded,
            ),
            with(
                "Unable to write event",
                Cond::Recorded("Evicted", ""),
                PodEndedRecorded,
            ),
            with(
                "Unable to write event",
                Cond::Recorded("DeadlineExceeded", ""),
                PodEndedRecorded,
            ),
            with(
                "Unable to write event",
                Cond::Recorded("Preempting", ""),
                PodEndedRecorded,
            ),
            with(
                "Unable to construct event",
                Cond::Recorded("Killing", "Stopping container"),
                PodStopRecorded,
            ),
            with(
                "Unable to construct event",
                Cond::Recorded("Evicted", ""),
                PodEndedRecorded,
            ),
            with(
                "Unable to construct event",
                Cond::Recorded("DeadlineExceeded", ""),
                PodEndedRecorded,
            ),
            with(
                "Unable to construct event",
                Cond::Recorded("Preempting", ""),
                PodEndedRecorded,
            ),
            with("Event(", Cond::Recorded("Pulling", ""), ImagePulling),
            with("Event(", Cond::Recorded("Pulled", ""), ImagePulled),
            with(
                "Event(",
                Cond::Recorded("Failed", "Failed to pull image"),
                ImagePullFailed,
            ),
            with(
                "Event(",
                Cond::Recorded("BackOff", "Back-off pulling image"),
                ImagePullFailed,
            ),
            with(
                "Event(",
                Cond::Recorded("Started", ""),
                ContainerStartedLogged,
            ),
        ],
    },
    Family {
        source: "kubelet syncLoopIteration: a readiness probe result (V1)",
        cites: &[cite(
            "kubernetes/kubernetes",
            "pkg/kubelet/kubelet.go",
            "syncLoopIteration: V(1).InfoS `SyncLoop (probe)` probe=\"readiness\" status=\"ready\" pod",
            "1.21-1.34",
        )],
        wordings: &[with(
            "SyncLoop (probe)",
            Cond::Field("status", "ready"),
            ReadinessProbeReady,
        )],
    },
    Family {
        source: "kubelet CRI client and image puller: a failed pull, before 1.21 (it names the image, never the pod)",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/remote/remote_image.go",
                "PullImage: glog/klog.Errorf `PullImage %q from image service failed: %v` (1.21+ logs the structured `PullImage from image service failed` err image, read as a failed runtime call)",
                "1.7-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kuberuntime/kuberuntime_image.go",
                "PullImage: glog/klog.Errorf `Pull image %q failed: %v`",
                "1.7-1.20",
            ),
        ],
        wordings: &[
            with(
                "PullImage \"",
                Cond::Has("\" from image service failed"),
                ImagePullFailed,
            ),
            with("Pull image \"", Cond::Has("\" failed"), ImagePullFailed),
        ],
    },
    Family {
        source: "containerd CRI PullImage (the runtime's side of an image pull; it names the image, never the pod)",
        cites: &[
            cite(
                "containerd/containerd",
                "pkg/cri/server/instrumented_service.go",
                "PullImage: Infof `PullImage %q`, then `PullImage %q returns image reference %q` or Errorf `PullImage %q failed`",
                "1.5-1.7",
            ),
            cite(
                "containerd/containerd",
                "internal/cri/instrument/instrumented_service.go",
                "PullImage: Infof `PullImage %q`, then `PullImage %q returns image reference %q` or Errorf `PullImage %q failed`",
                "2.0-2.2",
            ),
            cite(
                "containerd/containerd",
                "pkg/cri/server/image_pull.go",
                "PullImage: Infof `Pulled image %q with image id %q, repo tag %q, repo digest %q, size %q in %s`",
                "1.6-1.7",
            ),
            cite(
                "containerd/containerd",
                "internal/cri/server/images/image_pull.go",
                "PullImage: Infof `Pulled image %q with image id %q, repo tag %q, repo digest %q, size %q in %s`",
                "2.0-2.2",
            ),
        ],
        wordings: &[
            with(
                "PullImage \"",
                Cond::Has("\" returns image reference \""),
                ImagePulled,
            ),
            with("PullImage \"", Cond::Has("\" failed"), ImagePullFailed),
            w("PullImage \"", ImagePulling),
            with(
                "Pulled image \"",
                Cond::Has("\" with image id \""),
                ImagePulled,
            ),
        ],
    },
    Family {
        source: "containerd CRI: sandbox and container name reservations",
        cites: &[cite(
            "containerd/containerd",
            "internal/cri/server/sandbox_run.go",
            "RunPodSandbox: `failed to reserve sandbox name %q: %w` (pkg/cri/server in 1.6, 1.7; errors.Wrapf in containerd/cri ≤ 1.4)",
            "1.2-2.x",
        )],
        wordings: &[
            w("failed to reserve sandbox name", SandboxNameReserved),
            w("failed to reserve container name", ContainerNameReserved),
        ],
    },
    Family {
        source: "CRI-O: a pod sandbox name reserved (a RunPodSandbox of the same pod still in progress, or its sandbox left)",
        cites: &[cite(
            "cri-o/cri-o",
            "internal/lib/container_server.go",
            "ReservePodName: Warn `error reserving pod name %s for id %s: %w` (the id is the new request's, not the holder's)",
            "1.0-1.3x",
        )],
        wordings: &[w("error reserving pod name", SandboxNameReserved)],
    },
    Family {
        source: "CRI-O: a container name reserved (a CreateContainer of the same container still in progress, or its container left)",
        cites: &[cite(
            "cri-o/cri-o",
            "internal/lib/container_server.go",
            "ReserveContainerName: Warn `error reserving ctr name %s for id %s: %w` (the id is the new request's, not the holder's)",
            "1.0-1.3x",
        )],
        wordings: &[w("error reserving ctr name", ContainerNameReserved)],
    },
    Family {
        source: "CRI-O: a retried create call waiting for the first, still running",
        cites: &[cite(
            "cri-o/cri-o",
            "server/utils.go",
            "getResourceOrWait: Infof `Creation of %s %s not yet finished. Currently at stage %v. Waiting up to %v for it to finish` (container or sandbox)",
            "1.20-1.3x",
        )],
        wordings: &[by_phrase(
            "Creation of ",
            Cond::Has("not yet finished. Currently at stage"),
            CreateStillRunning,
        )],
    },
    Family {
        source: "containerd: a sandbox gone when stopping it",
        cites: &[cite(
            "containerd/containerd",
            "internal/cri/server/sandbox_stop.go",
            "stopPodSandbox: Warnf `sandbox %q is not found when stopping it`",
            "2.0-2.x",
        )],
        wordings: &[by_phrase(
            "sandbox \"",
            Cond::Has("is not found when stopping it"),
            SandboxNotFound,
        )],
    },
    Family {
        source: "volume manager: a pod's volume not set up, or not unmounted",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/volume/util/nestedpendingoperations/nestedpendingoperations.go",
                "NestedPendingOperations.operationComplete: `Operation for %q failed. No retries permitted until %v (durationBeforeRetry %v). Error: %v` (the back-off doubling from 500 ms to 2m2s)",
                "1.8-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/volume/util/operationexecutor/operation_generator.go",
                "GenerateUnmountVolumeFunc: `UnmountVolume.TearDown failed for volume %q (UniqueName: %q) pod %q (UID: %q) : %v`",
                "1.8-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/volume/util/operationexecutor/operation_generator.go",
                "GenerateMountVolumeFunc: `MountVolume.SetUp failed for volume %q (UniqueName: %q) pod %q (UID: %q) : %v`, `MountVolume.MountDevice failed …`, `MountVolume.WaitForAttach failed …`, `MountVolume.NewMounter initialization failed …`",
                "1.8-1.34",
            ),
        ],
        // `UnmountVolume.TearDown succeeded for volume …` is not read: a healthy node logs one
        // per volume of every pod it removes (45,000 in 256 MiB of the bench's healthy log), and
        // the retries falling silent say the same (`volume_teardown.rs`).
        wordings: &[
            by_phrase(
                "Operation for ",
                Cond::Has("UnmountVolume.TearDown failed for volume"),
                VolumeTearDownFailed,
            ),
            by_phrase(
                "Operation for ",
                Cond::Has("MountVolume.SetUp failed for volume"),
                VolumeMountFailed,
            ),
            by_phrase(
                "Operation for ",
                Cond::Has("MountVolume.MountDevice failed for volume"),
                VolumeMountFailed,
            ),
            by_phrase(
                "Operation for ",
                Cond::Has("MountVolume.WaitForAttach failed for volume"),
                VolumeMountFailed,
            ),
            by_phrase(
                "Operation for ",
                Cond::Has("MountVolume.NewMounter initialization failed for volume"),
                VolumeMountFailed,
            ),
        ],
    },
    Family {
        source: "kubelet syncPod: a pod's volumes not attached or mounted in time",
        cites: &[
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "SyncPod: ErrorS `Unable to attach or mount volumes for pod; skipping pod` pod (1.27+ not when the wait was interrupted)",
                "1.21-1.34",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/kubelet.go",
                "syncPod: klog.Errorf `Unable to attach or mount volumes for pod %q: %v; skipping pod`; before 1.17 `Unable to mount volumes for pod %q: %v; skipping pod` with `timeout expired waiting for volumes to attach or mount for pod %q/%q. list of unmounted volumes=%v. list of unattached volumes=%v`",
                "1.6-1.20",
            ),
            cite(
                "kubernetes/kubernetes",
                "pkg/kubelet/volumemanager/populator/desired_state_of_world_populator.go",
                "processPodVolumes: ErrorS `Error processing volume` pod volumeName (legacy klog.Errorf `Error processing volume %q for pod %q: %v`): a claim not found or not bound, a volume spec it cannot build",
                "1.8-1.34",
            ),
        ],
        wordings: &[
            structured_as(
                "Unable to attach or mount volumes for pod",
                Cond::None,
                "Unable to attach or mount volumes for pod; skipping pod",
                VolumeMountWaitFailed,
            ),
            structured_as(
                "Error processing volume",
                Cond::None,
                "Error processing volume",
                VolumeMountFailed,
            ),
            w("Unable to mount volumes for pod", VolumeMountWaitFailed),
        ],
    },
    Family {
        source: "Go: a program crashing",
        cites: &[
            cite(
                "golang/go",
                "src/runtime/panic.go",
                "fatal / throw: `fatal error: %s` (e.g. `unexpected signal during runtime execution`, `concurrent map writes`), then the goroutine dump",
                "1.0-1.25",
            ),
            cite(
                "golang/go",
                "src/runtime/panic.go",
                "printpanics: `panic: %v` of a panic no goroutine recovered, then the goroutine dump",
                "1.0-1.25",
            ),
        ],
        wordings: &[w("fatal error: ", GoCrash), w("panic: ", GoCrash)],
    },
];

/// Phrases matched anywhere in the message or the error when no wording fits, in order (the
/// first found names the kind): the runtime's errors quoted by whichever call hit them.
pub const PHRASES: &[(&str, EventKind)] = &[
    ("failed to reserve sandbox name", SandboxNameReserved),
    ("failed to reserve container name", ContainerNameReserved),
    (
        "an error occurred when try to find container",
        ContainerNotFound,
    ),
    (
        "an error occurred when try to find sandbox",
        SandboxNotFound,
    ),
    ("ID does not exist", ContainerNotFound),
    ("could not find container", ContainerNotFound),
    ("specified pod sandbox not found", SandboxNotFound),
    ("PodSandbox with ID starting with", SandboxNotFound),
    (
        "skipping delete because sources aren't ready yet",
        SkippingDeleteSourcesNotReady,
    ),
    (SOURCES_NOT_READY, HousekeepingSkippedSourcesNotReady),
    ("\"KillPodSandbox\" for \"", KillPodFailed),
    // containerd's RunPodSandbox error on a line of its own: the continuation of a multi-line
    // `err=<` value that grep or a pager kept without its record (cilium/cilium#40345).
    ("failed to setup network for sandbox", RunPodSandboxFailed),
    (PLEG_UNHEALTHY, PlegUnhealthy),
    (RUNTIME_FAILED, RuntimeCallFailed),
    // The CRI client's image calls (`remote_image.go`: `ImageStatus %q from image service
    // failed`, `ListImages … from image service failed`, `ImageFsInfo …`).
    ("from image service failed", RuntimeCallFailed),
    // The kubelet's checks of its runtime endpoint that found no CRI, in the wordings that do
    // not say `from runtime service failed` (`Get runtime version failed: …`, `failed to run
    // Kubelet: validate service connection: …`, kubernetes/kubernetes#73189).
    ("unknown service runtime.v1", RuntimeCallFailed),
    // kubelet 1.26+'s check before it starts (`failed to run Kubelet: validate service
    // connection: validate CRI v1 runtime API for endpoint …`): the runtime's socket refusing
    // or missing, or serving no CRI.
    ("validate service connection", RuntimeCallFailed),
    // The kubelet's exit inside a wrapper's own words (minikube's localkube: `kubelet: Exit with
    // error: failed to run Kubelet: …`); after the runtime's phrases, which name its cause.
    ("failed to run Kubelet: ", KubeletExited),
];

/// Every wording, in table order.
pub fn wordings() -> impl Iterator<Item = &'static Wording> {
    FAMILIES.iter().flat_map(|f| f.wordings.iter())
}

/// The `grep -F` key of a wording (see [`Key`]).
pub fn key_of(w: &Wording) -> &'static str {
    match (w.key, w.cond) {
        (
            Key::Phrase,
            Cond::Has(p) | Cond::HasOrErr(p) | Cond::HasOrCutErr(p) | Cond::HasOrCutError(p),
        ) => p,
        _ => w.starts.split('"').next().unwrap_or(w.starts),
    }
}
