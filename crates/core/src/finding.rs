//! Findings: one inconsistency between the views of a node, with its evidence, the kubelet
//! behaviour it rests on and a remediation an SRE can run.

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::PodRef;

/// How urgent a finding is. Ordered: `Info < Warning < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is leaking.
    Info,
    /// Something leaks or is stuck and needs an operator.
    Warning,
    /// Two copies of a pod, or a removed pod still running.
    Critical,
}

impl Severity {
    /// The lower-case name used in the JSON schema and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// The stable kind of a finding; its name is part of the `podcoroner.diagnosis/v1` schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum FindingKind {
    /// A NOTREADY pod sandbox with no containers that the kubelet's sandbox GC should have
    /// removed (`kuberuntime_gc.go`, `evictSandboxes`); from the logs, a dead sandbox that keeps
    /// its pod's sandbox name reserved ("failed to reserve sandbox name").
    LeakedSandbox,
    /// More than one READY pod sandbox for one pod UID (`kuberuntime_manager.go`,
    /// `podSandboxChanged`: "Multiple sandboxes are ready for Pod").
    DuplicateReadySandboxes,
    /// A container whose pod sandbox no longer exists.
    OrphanedContainer,
    /// A static pod whose manifest is gone but whose sandbox is still READY; from the logs, one
    /// REMOVEd from its source that the kubelet cannot kill (KillPodSandbox failing).
    StaticPodNotRemoved,
    /// A running static pod with no mirror pod in the API server.
    MissingMirrorPod,
    /// A mirror pod whose `kubernetes.io/config.mirror` differs from the running static pod's
    /// config hash.
    StaleMirrorPod,
    /// A mirror pod of this node that matches no static pod sandbox and no manifest.
    OrphanedMirrorPod,
    /// A `pods/<uid>` directory under the kubelet root whose pod nobody knows.
    OrphanedPodDirectory,
    /// A file in the manifest directory that the kubelet's file source cannot turn into a pod.
    InvalidStaticPodManifest,
    /// A pod of this node in phase Failed that nothing on the node will remove.
    FailedPodNotCleaned,
    /// Stopping a pod sandbox keeps failing (`kuberuntime_gc.go` `removeSandbox`: "Failed to stop
    /// sandbox before removing"), so it is never removed; the cause is classified.
    SandboxStopFailing,
    /// The NotFound double-removal race during pod deletion (`pod_container_deletor.go`
    /// "DeleteContainer returned error", "ContainerStatus from runtime service failed" with "an
    /// error occurred when try to find container"): usually benign.
    FindContainerRace,
    /// A pod worker that never finishes terminating (1.22 to 1.26: "Pod worker has been requested
    /// for removal but is still not fully terminated", the k/k #107730 race).
    StuckPodWorker,
    /// Static pod removal held back because the kubelet's sources are not ready ("skipping delete
    /// because sources aren't ready yet").
    StaticPodRemovalBlocked,
    /// A mirror pod deleted and recreated again and again ("Deleted mirror pod because it is
    /// outdated" repeating for one pod).
    MirrorPodRecreateLoop,
    /// The API server refuses the mirror pod ("Failed creating a mirror pod": forbidden, or
    /// already exists with another hash).
    MirrorPodCreateFailed,
    /// The kubelet cannot remove an orphaned pod's directory ("Orphaned pod ... found, but volume
    /// paths are still present on disk", "orphaned pod ... found" roll-ups).
    OrphanedPodVolumes,
    /// A pod being deleted past its grace period whose containers or sandbox still run; from the
    /// logs, a pod the kubelet keeps failing to kill ("Error syncing pod" with KillPodSandbox).
    StuckTerminatingPod,
    /// The runtime or PLEG is unhealthy ("PLEG is not healthy", "container runtime is down"): no
    /// pod on the node can be started or stopped.
    RuntimeUnhealthy,
    /// The kubelet exits as it starts (`failed to run Kubelet: …`, `"command failed"`, `Failed
    /// to start ContainerManager`) and the log ends with it not running again: no pod on the
    /// node is started, stopped or reported (`cmd/kubelet/app/server.go` `Run`).
    KubeletStartFailing,
    /// The kubelet cannot register its Node (`Unable to register node with API server`) or
    /// update its status (`Error updating node status, will retry`, `Unable to update node
    /// status`) where the log ends: the Node object deleted, its
    /// credentials refused, or the API server out of reach for five minutes
    /// (`kubelet_node_status.go` `updateNodeStatus`).
    NodeStatusUpdateFailing,
    /// The container runtime reports its pod network not ready (`"Container runtime network not
    /// ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady …"`, `kubelet.go`
    /// `updateRuntimeUp`, every 5 s) for three minutes or more where the log ends: the Node is
    /// NotReady and no pod but host-network ones starts (no CNI config, or the CNI plugin's pod
    /// not running on the node).
    RuntimeNetworkNotReady,
    /// The node is short of memory, disk or PIDs: the kubelet's eviction manager reclaims them
    /// (`"Eviction manager: attempting to reclaim" resourceName=…`,
    /// `eviction/eviction_manager.go` `synchronize`) and evicts pods, refuses pods at admission
    /// (`Failed to admit pod to node`), or cannot evict the critical pods left; or the image GC
    /// cannot free the image filesystem (`Wanted to free <n> bytes, but freed <m> bytes`).
    NodeResourcePressure,
    /// The runtime fails to create or start a pod's container (the pod worker's `failed to
    /// "StartContainer" for "<c>" with RunContainerError: …`, `CreateContainerError`,
    /// `CreateContainerConfigError`; `kuberuntime_container.go` `startContainer`): the node's
    /// cause (the OCI runtime, cgroups, the disk) or the pod's own (its spec, its image).
    ContainerStartFailing,
    /// A container the runtime fails to stop or kill (`StopContainer` timing out, "failed to
    /// kill", a zombie process, the shim gone): its pod cannot finish terminating.
    ContainerStopFailing,
    /// The kubelet cannot read a pod's container statuses ("getPodContainerStatuses for pod
    /// failed", `kuberuntime_manager.go` `GetPodStatus`) and no later record shows the pod
    /// progressing: its pod worker stops before it acts (NotFound: k/k #107670, kubelet 1.22).
    PodStatusFailing,
    /// A static pod left its source (`SyncLoop REMOVE source="file"`): a lifecycle note (info),
    /// with how its mirror pod went.
    StaticPodRemoved,
    /// A pod that took longer than `--slow-start` from being bound to the node to `Ready`,
    /// with the phase that took the time (sandbox and CNI ADD, image pulls, init containers,
    /// container start, readiness) and its evidence (`core::startup`).
    SlowPodStartup,
    /// CRI `RunPodSandbox` keeps failing for pods that wait to start ("Failed to create
    /// sandbox for pod", "CreatePodSandbox for pod failed", containerd `RunPodSandbox for …
    /// failed`), the cause classified (the CNI ADD, a sandbox name held by a leaked sandbox).
    SandboxCreateFailing,
    /// Pods that wait for volumes the kubelet cannot attach or mount (`kubelet.go` `syncPod`'s
    /// "Unable to attach or mount volumes for pod; skipping pod" after `WaitForAttachAndMount`'s
    /// 2 min, `operation_generator.go`'s `MountVolume.SetUp failed`), the cause classified as
    /// the node's (CSI driver, mount command, path) or the pod spec's (a missing object).
    VolumeMountFailing,
    /// Pods whose container images the node cannot pull (the pod worker's `ErrImagePull` and
    /// `ImagePullBackOff`, `images/image_manager.go` `EnsureImageExists`, CRI `PullImage`), the
    /// cause classified as the node's (registry out of reach, certificate, rate limit, disk,
    /// deadline, unpacking) or the pod spec's (no such image, credentials).
    ImagePullFailing,
    /// Containers the kubelet keeps restarting (the pod worker's `CrashLoopBackOff`, the
    /// restart back-off of `kuberuntime_manager.go` `SyncPod`): a static pod's, the node's own
    /// component, apart from the workloads'.
    ContainerCrashLooping,
    /// The kubelet's own startup SLI is impossible (`"Observed pod startup duration"` with a
    /// negative `podStartSLOduration`, about -9.22e+09 with parallel image pulls: k/k #130432),
    /// so `kubelet_pod_start_sli_duration_seconds` cannot be trusted on this node.
    PodStartupMetricInvalid,
}

impl FindingKind {
    /// Every kind, in documentation order: generated from `rules::registry::RULES` (a kind
    /// added there without its count here does not compile).
    pub const ALL: [FindingKind; 33] = crate::rules::registry::kinds();

    /// The stable name, e.g. `LeakedSandbox`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::LeakedSandbox => "LeakedSandbox",
            FindingKind::DuplicateReadySandboxes => "DuplicateReadySandboxes",
            FindingKind::OrphanedContainer => "OrphanedContainer",
            FindingKind::StaticPodNotRemoved => "StaticPodNotRemoved",
            FindingKind::MissingMirrorPod => "MissingMirrorPod",
            FindingKind::StaleMirrorPod => "StaleMirrorPod",
            FindingKind::OrphanedMirrorPod => "OrphanedMirrorPod",
            FindingKind::OrphanedPodDirectory => "OrphanedPodDirectory",
            FindingKind::InvalidStaticPodManifest => "InvalidStaticPodManifest",
            FindingKind::FailedPodNotCleaned => "FailedPodNotCleaned",
            FindingKind::SandboxStopFailing => "SandboxStopFailing",
            FindingKind::FindContainerRace => "FindContainerRace",
            FindingKind::StuckPodWorker => "StuckPodWorker",
            FindingKind::StaticPodRemovalBlocked => "StaticPodRemovalBlocked",
            FindingKind::MirrorPodRecreateLoop => "MirrorPodRecreateLoop",
            FindingKind::MirrorPodCreateFailed => "MirrorPodCreateFailed",
            FindingKind::OrphanedPodVolumes => "OrphanedPodVolumes",
            FindingKind::StuckTerminatingPod => "StuckTerminatingPod",
            FindingKind::RuntimeUnhealthy => "RuntimeUnhealthy",
            FindingKind::KubeletStartFailing => "KubeletStartFailing",
            FindingKind::NodeStatusUpdateFailing => "NodeStatusUpdateFailing",
            FindingKind::RuntimeNetworkNotReady => "RuntimeNetworkNotReady",
            FindingKind::NodeResourcePressure => "NodeResourcePressure",
            FindingKind::ContainerStartFailing => "ContainerStartFailing",
            FindingKind::StaticPodRemoved => "StaticPodRemoved",
            FindingKind::ContainerStopFailing => "ContainerStopFailing",
            FindingKind::PodStatusFailing => "PodStatusFailing",
            FindingKind::SlowPodStartup => "SlowPodStartup",
            FindingKind::SandboxCreateFailing => "SandboxCreateFailing",
            FindingKind::VolumeMountFailing => "VolumeMountFailing",
            FindingKind::ImagePullFailing => "ImagePullFailing",
            FindingKind::ContainerCrashLooping => "ContainerCrashLooping",
            FindingKind::PodStartupMetricInvalid => "PodStartupMetricInvalid",
        }
    }

    /// Parses a stable name; `None` for an unknown one.
    pub fn parse(name: &str) -> Option<FindingKind> {
        FindingKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which view an evidence line comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvidenceSource {
    /// The CRI runtime.
    Cri,
    /// The API server (or a `--pods` file standing in for it).
    Apiserver,
    /// The static pod manifest directory.
    Manifest,
    /// The kubelet root directory on disk.
    Filesystem,
    /// The kubelet's log.
    KubeletLog,
    /// The container runtime's log (containerd, CRI-O).
    RuntimeLog,
}

impl EvidenceSource {
    /// The lower-case name used in the JSON schema.
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceSource::Cri => "cri",
            EvidenceSource::Apiserver => "apiserver",
            EvidenceSource::Manifest => "manifest",
            EvidenceSource::Filesystem => "filesystem",
            EvidenceSource::KubeletLog => "kubelet-log",
            EvidenceSource::RuntimeLog => "runtime-log",
        }
    }
}

/// One fact a finding rests on, with the view it comes from.
///
/// Serialized as `{"source": …, "detail": …}`. A log record quoted as evidence
/// ([`Evidence::record`]) shares its file name and text with the record instead of copying
/// them: a troubled node's findings quote hundreds of thousands of records, and a copy of each
/// was about 9 % of a diagnosis's peak memory on a log of fresh IDs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "EvidenceWire", from = "EvidenceWire")]
pub struct Evidence {
    /// The view the fact was read from.
    pub source: EvidenceSource,
    /// The fact.
    detail: Detail,
}

/// The fact of an [`Evidence`], as said or as a shared log record.
#[derive(Debug, Clone)]
enum Detail {
    /// In words.
    Said(String),
    /// A log record, said `file:line: text`.
    Record {
        origin: Arc<str>,
        line: u64,
        text: Arc<str>,
    },
}

/// The serialized form of an [`Evidence`].
#[derive(Serialize, Deserialize)]
struct EvidenceWire {
    source: EvidenceSource,
    detail: String,
}

impl From<Evidence> for EvidenceWire {
    fn from(e: Evidence) -> EvidenceWire {
        EvidenceWire {
            source: e.source,
            detail: e.detail().into_owned(),
        }
    }
}

impl From<EvidenceWire> for Evidence {
    fn from(w: EvidenceWire) -> Evidence {
        Evidence::new(w.source, w.detail)
    }
}

impl Evidence {
    /// Builds an evidence line.
    pub fn new(source: EvidenceSource, detail: impl Into<String>) -> Evidence {
        Evidence {
            source,
            detail: Detail::Said(detail.into()),
        }
    }

    /// A log record as evidence, said `file:line: text`, sharing `origin` and `text` with the
    /// record ([`crate::event::LoggedEvent`]).
    pub fn record(
        source: EvidenceSource,
        origin: &Arc<str>,
        line: u64,
        text: &Arc<str>,
    ) -> Evidence {
        Evidence {
            source,
            detail: Detail::Record {
                origin: Arc::clone(origin),
                line,
                text: Arc::clone(text),
            },
        }
    }

    /// The fact, in one line: as said, or a log record's `file:line: text`.
    pub fn detail(&self) -> Cow<'_, str> {
        match &self.detail {
            Detail::Said(s) => Cow::Borrowed(s),
            Detail::Record { origin, line, text } => Cow::Owned(format!("{origin}:{line}: {text}")),
        }
    }
}

/// Two evidence lines are equal when they come from the same view and say the same, however
/// they hold it.
impl PartialEq for Evidence {
    fn eq(&self, other: &Evidence) -> bool {
        if self.source != other.source {
            return false;
        }
        match (&self.detail, &other.detail) {
            (Detail::Said(a), Detail::Said(b)) => a == b,
            // Records of one file (a rule's `contains` check) are compared without saying
            // either: `file:line: text` reads the same only for the same line and text.
            (
                Detail::Record { origin, line, text },
                Detail::Record {
                    origin: o,
                    line: l,
                    text: t,
                },
            ) if origin == o => line == l && text == t,
            _ => self.detail() == other.detail(),
        }
    }
}

impl Eq for Evidence {}

/// One diagnosed inconsistency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The stable kind.
    pub kind: FindingKind,
    /// How urgent it is.
    pub severity: Severity,
    /// One line for a person.
    pub summary: String,
    /// The pod concerned, when known.
    pub pod: Option<PodRef>,
    /// The pod sandbox concerned, when one applies.
    pub sandbox_id: Option<String>,
    /// The container concerned, when one applies.
    pub container_id: Option<String>,
    /// The file or directory concerned (a manifest, a pod directory), when one applies.
    pub path: Option<String>,
    /// The facts the finding rests on.
    pub evidence: Vec<Evidence>,
    /// The kubelet behaviour the rule mirrors, naming its source function. Borrowed when the
    /// rule's text is fixed (most are), so a node's thousands of findings of a kind share it.
    pub kubelet_rule: Cow<'static, str>,
    /// A command or step an SRE can run to fix it.
    pub remediation: String,
    /// True when `podcoroner gc` may remove the sandbox: the kubelet's own GC rule says it should
    /// be gone.
    pub gc_eligible: bool,
}

impl Finding {
    /// Every field of the finding as indented text, one field a line (`- Kind (severity)`, then
    /// `pod:`, `sandbox:`, `container:`, `path:`, `summary:`, one `evidence (<source>):` line per
    /// evidence, `remediation:`, `gc_eligible:`): what the golden files of the cases hold.
    /// `strip` is cut from evidence lines (a test folder's path before file names).
    pub fn to_text(&self, strip: &str) -> String {
        let mut out = format!("- {} ({})\n", self.kind, self.severity.as_str());
        if let Some(p) = &self.pod {
            out.push_str(&format!(
                "  pod: {}/{} uid={}\n",
                p.namespace, p.name, p.uid
            ));
        }
        for (what, v) in [
            ("sandbox", &self.sandbox_id),
            ("container", &self.container_id),
            ("path", &self.path),
        ] {
            if let Some(v) = v {
                out.push_str(&format!("  {what}: {v}\n"));
            }
        }
        out.push_str(&format!("  summary: {}\n", self.summary));
        for e in &self.evidence {
            let detail = e.detail();
            let detail = if strip.is_empty() {
                detail
            } else {
                Cow::Owned(detail.replace(strip, ""))
            };
            out.push_str(&format!("  evidence ({}): {detail}\n", e.source.as_str()));
        }
        out.push_str(&format!("  remediation: {}\n", self.remediation));
        out.push_str(&format!("  gc_eligible: {}\n", self.gc_eligible));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quoted record reads, compares and serializes as the same line said in words, and
    /// holds the record's text rather than a copy of it.
    #[test]
    fn a_quoted_record_is_the_line_it_quotes() {
        let origin: Arc<str> = "/var/log/kubelet.log".into();
        let text: Arc<str> =
            r#"E1019 07:21:27.130112 6774 pod_workers.go:765] "Error syncing pod, skipping""#
                .into();
        let quoted = Evidence::record(EvidenceSource::KubeletLog, &origin, 63448, &text);
        assert_eq!(Arc::strong_count(&text), 2);
        let line = format!("/var/log/kubelet.log:63448: {text}");
        assert_eq!(quoted.detail(), line.as_str());

        let said = Evidence::new(EvidenceSource::KubeletLog, line.clone());
        assert_eq!(quoted, said);
        assert_ne!(
            quoted,
            Evidence::new(EvidenceSource::RuntimeLog, line.clone())
        );
        assert_ne!(
            quoted,
            Evidence::new(EvidenceSource::KubeletLog, format!("{line} "))
        );
        // Records compare as the lines they say: of one file, by line and text; of two files,
        // as said (a file name may hold `:N: `).
        let record = |origin: &str, line, text: &str| {
            Evidence::record(
                EvidenceSource::KubeletLog,
                &origin.into(),
                line,
                &text.into(),
            )
        };
        assert_eq!(quoted, record("/var/log/kubelet.log", 63448, &text));
        assert_ne!(quoted, record("/var/log/kubelet.log", 63449, &text));
        assert_ne!(quoted, record("/var/log/kubelet.log", 63448, "E1019"));
        assert_eq!(record("f:1: a", 2, "b"), record("f", 1, "a:2: b"));
        assert_ne!(record("f:1: a", 2, "b"), record("f", 1, "a:2: c"));

        let json = serde_json::to_string(&quoted).unwrap();
        assert_eq!(json, serde_json::to_string(&said).unwrap());
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&json).unwrap(),
            serde_json::json!({"source": "kubelet-log", "detail": line}),
        );
        assert_eq!(serde_json::from_str::<Evidence>(&json).unwrap(), quoted);
    }
}
