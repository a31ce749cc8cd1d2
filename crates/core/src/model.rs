//! The node model: what the CRI runtime, the API server, the static pod manifest directory and the
//! kubelet root directory each say about the pods of one node.
//!
//! Field names follow the CRI (`runtime.v1` `PodSandbox`, `Container`) and the Kubernetes API
//! (`v1.Pod`). Adapters convert their wire formats into these types; nothing here knows a wire
//! format.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// Sandbox label holding the pod UID, set by the kubelet on every pod sandbox and container
/// (`pkg/kubelet/types/labels.go`, `KubernetesPodUIDLabel`).
pub const LABEL_POD_UID: &str = "io.kubernetes.pod.uid";
/// Sandbox label holding the pod name (`KubernetesPodNameLabel`).
pub const LABEL_POD_NAME: &str = "io.kubernetes.pod.name";
/// Sandbox label holding the pod namespace (`KubernetesPodNamespaceLabel`).
pub const LABEL_POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
/// Container label holding the container name (`KubernetesContainerNameLabel`).
pub const LABEL_CONTAINER_NAME: &str = "io.kubernetes.container.name";
/// Annotation naming the config source of a pod: `file`, `http` or `api`
/// (`pkg/kubelet/types/pod_update.go`, `ConfigSourceAnnotationKey`).
pub const ANNOTATION_CONFIG_SOURCE: &str = "kubernetes.io/config.source";
/// Annotation holding a static pod's config hash, which is also its pod UID
/// (`ConfigHashAnnotationKey`).
pub const ANNOTATION_CONFIG_HASH: &str = "kubernetes.io/config.hash";
/// Annotation on a mirror pod holding the config hash of the static pod it mirrors
/// (`v1.MirrorPodAnnotationKey`).
pub const ANNOTATION_CONFIG_MIRROR: &str = "kubernetes.io/config.mirror";

/// A pod's identity: namespace, name and UID.
///
/// For a static pod the UID is the config hash (32 hex digits), not the mirror pod's API UID.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PodRef {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`; for a static pod, the name with the node name appended.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
}

impl std::fmt::Display for PodRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} (uid {})", self.namespace, self.name, self.uid)
    }
}

/// CRI `PodSandboxState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SandboxState {
    /// `SANDBOX_READY`: the sandbox's network and pause process are up.
    Ready,
    /// `SANDBOX_NOTREADY`: stopped, or failed to start.
    NotReady,
}

impl SandboxState {
    /// The CRI enum name, as crictl prints it: `SANDBOX_READY` or `SANDBOX_NOTREADY`.
    pub fn cri_name(self) -> &'static str {
        match self {
            SandboxState::Ready => "SANDBOX_READY",
            SandboxState::NotReady => "SANDBOX_NOTREADY",
        }
    }
}

/// One pod sandbox as CRI `ListPodSandbox` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sandbox {
    /// The sandbox ID (64 hex digits on containerd).
    pub id: String,
    /// `PodSandboxMetadata` name, namespace and uid.
    pub pod: PodRef,
    /// `PodSandboxMetadata.attempt`: 0 for the first sandbox of a pod, then incremented.
    pub attempt: u32,
    /// Ready or not ready.
    pub state: SandboxState,
    /// `PodSandbox.created_at` (nanoseconds since the epoch on the wire).
    pub created_at: Timestamp,
    /// Labels: the pod's labels plus `io.kubernetes.pod.{name,namespace,uid}`.
    pub labels: BTreeMap<String, String>,
    /// Annotations: a copy of the pod's annotations.
    pub annotations: BTreeMap<String, String>,
}

impl Sandbox {
    /// The pod's config source (`file`, `http`, `api`) from `kubernetes.io/config.source`.
    pub fn config_source(&self) -> Option<&str> {
        self.annotations
            .get(ANNOTATION_CONFIG_SOURCE)
            .map(String::as_str)
    }

    /// True when the kubelet created this sandbox for a static pod (`config.source` is `file`
    /// or `http`).
    pub fn is_static(&self) -> bool {
        matches!(self.config_source(), Some("file" | "http"))
    }

    /// The static pod's config hash: `kubernetes.io/config.hash`, else the pod UID.
    pub fn config_hash(&self) -> &str {
        self.annotations
            .get(ANNOTATION_CONFIG_HASH)
            .map(String::as_str)
            .unwrap_or(&self.pod.uid)
    }

    /// True when the kubelet created this sandbox: it carries the `io.kubernetes.pod.uid` label.
    /// Sandboxes made by hand (`crictl runp`) or by other tools lack it and are left alone.
    pub fn is_kubelet_managed(&self) -> bool {
        self.labels.contains_key(LABEL_POD_UID)
    }
}

/// CRI `ContainerState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ContainerState {
    /// `CONTAINER_CREATED`.
    Created,
    /// `CONTAINER_RUNNING`.
    Running,
    /// `CONTAINER_EXITED`.
    Exited,
    /// `CONTAINER_UNKNOWN`.
    Unknown,
}

impl ContainerState {
    /// The CRI enum name, as crictl prints it.
    pub fn cri_name(self) -> &'static str {
        match self {
            ContainerState::Created => "CONTAINER_CREATED",
            ContainerState::Running => "CONTAINER_RUNNING",
            ContainerState::Exited => "CONTAINER_EXITED",
            ContainerState::Unknown => "CONTAINER_UNKNOWN",
        }
    }
}

/// One container as CRI `ListContainers` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    /// The container ID.
    pub id: String,
    /// `Container.pod_sandbox_id`: the sandbox this container belongs to.
    pub sandbox_id: String,
    /// `ContainerMetadata.name`.
    pub name: String,
    /// `ContainerMetadata.attempt`.
    pub attempt: u32,
    /// Created, running, exited or unknown.
    pub state: ContainerState,
    /// `Container.created_at`.
    pub created_at: Timestamp,
    /// `ContainerStatus.started_at` (CRI `ContainerStatus`; `ListContainers` does not carry
    /// it): when the runtime started the container's process. `None` when it has not started
    /// or was not asked (a snapshot, `gc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Timestamp>,
    /// The image reference the container was created from.
    pub image: String,
    /// Labels: `io.kubernetes.container.name` and the pod identity labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
}

impl Container {
    /// The pod UID from the `io.kubernetes.pod.uid` label, when the kubelet created it.
    pub fn pod_uid(&self) -> Option<&str> {
        self.labels.get(LABEL_POD_UID).map(String::as_str)
    }
}

/// What the CRI runtime says: every pod sandbox and every container, in any state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriView {
    /// `ListPodSandbox` with no filter.
    pub sandboxes: Vec<Sandbox>,
    /// `ListContainers` with no filter (all states).
    pub containers: Vec<Container>,
}

/// One pod as the API server returns it, reduced to what the rules read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiPod {
    /// Namespace, name and API UID.
    pub pod: PodRef,
    /// `spec.nodeName`; empty when unscheduled.
    pub node_name: String,
    /// `status.phase`: `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`, or empty.
    pub phase: String,
    /// `status.reason`, e.g. `Evicted`.
    pub reason: Option<String>,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `metadata.creationTimestamp`.
    pub created_at: Option<Timestamp>,
    /// `metadata.deletionTimestamp`: set once the pod is being deleted.
    pub deletion_timestamp: Option<Timestamp>,
    /// `metadata.deletionGracePeriodSeconds`.
    pub deletion_grace_period_seconds: Option<i64>,
    /// The latest time the pod's status changed: the newest `status.conditions[].lastTransitionTime`
    /// or container `finishedAt`, else `status.startTime`.
    pub status_changed_at: Option<Timestamp>,
    /// The status times a startup breakdown reads ([`crate::startup`]); empty when the view
    /// has none (a pods file from an older podcoroner, a recorded fixture).
    #[serde(default)]
    pub startup: ApiPodStartup,
}

/// The times of an API pod's start, from its status: `status.conditions[].lastTransitionTime`
/// of the conditions that are `True`, and the containers' `state.running.startedAt`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiPodStartup {
    /// `PodScheduled` became `True`: the scheduler bound the pod to the node.
    pub scheduled_at: Option<Timestamp>,
    /// `Initialized` became `True`: every init container finished.
    pub initialized_at: Option<Timestamp>,
    /// `ContainersReady` became `True`.
    pub containers_ready_at: Option<Timestamp>,
    /// `Ready` became `True`.
    pub ready_at: Option<Timestamp>,
    /// How many init containers `spec.initContainers` declares.
    pub init_containers: u32,
    /// `status.containerStatuses[].state.running.startedAt`, by container name.
    pub containers_started_at: Vec<(String, Timestamp)>,
}

impl ApiPod {
    /// The static pod config hash this pod mirrors, when it is a mirror pod
    /// (`kubernetes.io/config.mirror`).
    pub fn mirror_hash(&self) -> Option<&str> {
        self.annotations
            .get(ANNOTATION_CONFIG_MIRROR)
            .map(String::as_str)
    }
}

/// What the API server says: the pods it returned and where they came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiView {
    /// Every pod returned. A `--pods` file may hold pods of other nodes too; rules filter on
    /// `node_name` where it matters.
    pub pods: Vec<ApiPod>,
    /// Where the view came from, for evidence lines: `apiserver https://…` or `file pods.json`.
    pub origin: String,
}

/// A static pod parsed from a manifest file, as the kubelet's file source would accept it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestPod {
    /// `metadata.name` as written in the file, without the node suffix.
    pub name: String,
    /// `metadata.namespace`, `default` when empty (kubelet `applyDefaults`).
    pub namespace: String,
    /// `metadata.uid` when the file sets one; otherwise the kubelet derives it by hashing, which
    /// podcoroner cannot reproduce.
    pub uid: Option<String>,
}

impl ManifestPod {
    /// The pod name the kubelet gives this static pod on `node_name`: `<name>-<node name in
    /// lower case>` (`pkg/kubelet/config/common.go`, `generatePodName`).
    pub fn full_name(&self, node_name: &str) -> String {
        format!("{}-{}", self.name, node_name.to_lowercase())
    }
}

/// One file in the static pod manifest directory that the kubelet's file source reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaticManifest {
    /// The file's path.
    pub path: String,
    /// The pod, or the reason the kubelet would reject the file.
    pub pod: Result<ManifestPod, String>,
}

/// A file of the static pod manifest directory that podcoroner could not read although the
/// kubelet may (permission denied to this process, an I/O error, nesting deeper than its YAML
/// parser takes): what it declares is unknown, not absent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadableManifest {
    /// The file's path.
    pub path: String,
    /// Why it could not be read, e.g. `cannot read file: Permission denied (os error 13)`.
    pub reason: String,
}

/// The static pod manifest directory as the kubelet's file source sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestView {
    /// The directory (`staticPodPath`).
    pub dir: String,
    /// False when the directory does not exist. The kubelet reads that as "no static pods", but
    /// a configured directory that is missing is more often a missing mount: the rules that need
    /// the manifests skip.
    pub exists: bool,
    /// One entry per file the kubelet would read, in its order.
    pub files: Vec<StaticManifest>,
    /// The files podcoroner could not read: while there is one, the rules that need to know
    /// every static pod skip.
    #[serde(default)]
    pub unreadable: Vec<UnreadableManifest>,
}

/// The kubelet's other static pod source: the body its HTTP source reads from `staticPodURL`
/// (`pkg/kubelet/config/http.go`, `extractFromURL`), as podcoroner read it.
///
/// The kubelet takes one Pod or a `PodList` (YAML or JSON, at most 10 MiB); an empty body with
/// status 200 is an empty list (it removes every HTTP static pod). Anything else (the URL
/// unreachable, a status other than 200, a body that is not a valid Pod or PodList) makes the
/// kubelet keep the pods it last read, so podcoroner cannot tell what it runs: `pods` is `Err`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlManifestView {
    /// The URL (`staticPodURL`, `--manifest-url`).
    pub url: String,
    /// The pods the body declares (names without the node suffix), or why none could be known:
    /// the URL unreachable, a status other than 200, a body the kubelet rejects.
    pub pods: Result<Vec<ManifestPod>, String>,
}

/// One `pods/<uid>` directory under the kubelet root directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodDir {
    /// The directory path.
    pub path: String,
    /// The pod UID (the directory name).
    pub uid: String,
    /// Volume directories still present, as `<plugin>/<volume>`, e.g.
    /// `kubernetes.io~configmap/config`.
    pub volume_dirs: Vec<String>,
    /// Other entries of the pod directory (`containers`, `etc-hosts`, `plugins`,
    /// `volume-subpaths`, …).
    pub entries: Vec<String>,
    /// The directory's modification time, when known.
    pub modified_at: Option<Timestamp>,
}

/// Everything known about one node at one moment. `None` means the view is unavailable, which
/// makes the rules that need it skip rather than guess.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeView {
    /// The node's name as the kubelet registers it.
    pub node_name: String,
    /// The CRI runtime's sandboxes and containers.
    pub cri: Option<CriView>,
    /// The API server's pods.
    pub api: Option<ApiView>,
    /// The static pod manifest directory.
    pub manifests: Option<ManifestView>,
    /// The kubelet's pod directories.
    pub pod_dirs: Option<Vec<PodDir>>,
    /// The static pod URL's body, when `--manifest-url` is given; `None` when it is not (the
    /// HTTP static pods are then not judged against their source).
    #[serde(default)]
    pub manifest_url: Option<UrlManifestView>,
}

impl NodeView {
    /// A view of node `""` with nothing read: every view unavailable.
    pub fn empty() -> NodeView {
        NodeView {
            node_name: String::new(),
            cri: None,
            api: None,
            manifests: None,
            pod_dirs: None,
            manifest_url: None,
        }
    }
}
