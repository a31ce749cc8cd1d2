//! Plain Rust types this crate returns besides the `podcoroner-core` ones: which runtime answered
//! and in which CRI API version, and the extra fields of the `*Status` RPCs.

use std::collections::BTreeMap;
use std::fmt;

use jiff::Timestamp;
use podcoroner_core::{ContainerState, Sandbox};

/// The CRI API version a runtime was reached with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApiVersion {
    /// Protobuf package `runtime.v1` (Kubernetes 1.23+, containerd 1.6+, CRI-O 1.23+).
    V1,
    /// Protobuf package `runtime.v1alpha2` (older runtimes; removed from containerd 2.0).
    V1alpha2,
}

impl ApiVersion {
    /// `"v1"` or `"v1alpha2"`, as runtimes report it in `VersionResponse.runtime_api_version`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V1 => "v1",
            ApiVersion::V1alpha2 => "v1alpha2",
        }
    }

    /// Parses `"v1"` or `"v1alpha2"` (also `"runtime.v1"`, `"runtime.v1alpha2"`); `None` for
    /// anything else.
    pub fn parse(s: &str) -> Option<ApiVersion> {
        match s.trim().trim_start_matches("runtime.") {
            "v1" => Some(ApiVersion::V1),
            "v1alpha2" => Some(ApiVersion::V1alpha2),
            _ => None,
        }
    }
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which CRI API version [`crate::RuntimeClient::connect_with`] should use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApiVersionPreference {
    /// `runtime.v1`, falling back to `runtime.v1alpha2` when `Version` answers `Unimplemented`
    /// (what the kubelet and crictl do).
    #[default]
    Auto,
    /// Only `runtime.v1`.
    V1,
    /// Only `runtime.v1alpha2`.
    V1alpha2,
}

/// Who answered on the endpoint: the CRI `Version` RPC's answer plus the endpoint and the API
/// version in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeInfo {
    /// The endpoint, `unix:///…` (for a snapshot read from a file: what the caller passed).
    pub endpoint: String,
    /// `VersionResponse.runtime_name`, e.g. `containerd`, `cri-o`.
    pub runtime_name: String,
    /// `VersionResponse.runtime_version`, e.g. `1.6.20~ds1` or `v1.7.27`.
    pub runtime_version: String,
    /// The CRI API version in use.
    pub cri_api_version: ApiVersion,
}

/// CRI `PodSandboxStatus`: the sandbox as `ListPodSandbox` shows it plus its network status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxStatus {
    /// ID, pod, attempt, state, creation time, labels and annotations.
    pub sandbox: Sandbox,
    /// `network.ip`: the pod IP, `None` when empty (host-network or stopped sandboxes).
    pub ip: Option<String>,
    /// `runtime_handler`: the RuntimeClass handler, empty for the default one.
    pub runtime_handler: String,
}

/// CRI `ContainerStatus`. Unlike `ListContainers` it does not carry the sandbox ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerStatus {
    /// The container ID.
    pub id: String,
    /// `ContainerMetadata.name`.
    pub name: String,
    /// `ContainerMetadata.attempt`.
    pub attempt: u32,
    /// Created, running, exited or unknown.
    pub state: ContainerState,
    /// `created_at` (nanoseconds on the wire).
    pub created_at: Timestamp,
    /// `started_at`; `None` when 0 (never started).
    pub started_at: Option<Timestamp>,
    /// `finished_at`; `None` when 0 (not finished).
    pub finished_at: Option<Timestamp>,
    /// `exit_code`; meaningful only when `finished_at` is set.
    pub exit_code: i32,
    /// `image.image`.
    pub image: String,
    /// `image_ref`: the digested image reference.
    pub image_ref: String,
    /// `reason`, e.g. `Completed`, `Error`, `OOMKilled`.
    pub reason: String,
    /// `message`.
    pub message: String,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
    /// `log_path`: the container's log file on the host.
    pub log_path: String,
}
