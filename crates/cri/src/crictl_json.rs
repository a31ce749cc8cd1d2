//! The JSON that crictl prints, read into and written from `podcoroner-core` types: podcoroner's
//! snapshot format for CRI state, so that an SRE can build a snapshot with crictl alone.
//!
//! | Command | Document |
//! |---|---|
//! | `crictl pods -o json` | `{"items": [PodSandbox…]}` (a `ListPodSandboxResponse`) |
//! | `crictl ps -a -o json` | `{"containers": [Container…]}` (a `ListContainersResponse`) |
//! | `crictl version -o json` | `{"version", "runtimeName", "runtimeVersion", "runtimeApiVersion"}` |
//!
//! crictl marshals the CRI messages with protobuf's JSON mapping (`protojson` with
//! `EmitDefaultValues`, `cmd/crictl/util.go` `protobufObjectToJSON`; older releases used `jsonpb`
//! with the same mapping): lowerCamelCase field names, enums by name (`SANDBOX_READY`,
//! `CONTAINER_EXITED`), `int64` as a decimal string (`"createdAt": "1700000000123456789"`,
//! nanoseconds since the epoch), `uint32` as a number.
//!
//! Reading is lenient where protobuf's JSON mapping is: `createdAt` and `attempt` may be a string
//! or a number, states may be a name or their number, missing fields take their protobuf
//! defaults and unknown fields (`runtimeHandler`, `imageRef`, `imageId`, …) are ignored.
//! Writing emits what crictl emits, two-space indented, for the fields the core types keep.

use std::collections::BTreeMap;
use std::path::Path;

use podcoroner_core::{Container, ContainerState, CriView, PodRef, Sandbox, SandboxState};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::KUBELET_RUNTIME_API_VERSION;
use crate::convert::{timestamp_from_nanos, timestamp_to_nanos};
use crate::error::{Error, Result};
use crate::types::{ApiVersion, RuntimeInfo};

const PODS: &str = "crictl pods -o json";
const CONTAINERS: &str = "crictl ps -a -o json";
const VERSION: &str = "crictl version -o json";

/// Parses the output of `crictl pods -o json` into sandboxes, in document order.
///
/// `origin` names the document in errors (typically its file name).
///
/// # Errors
///
/// [`Error::SnapshotParseFailed`] naming `origin` and the JSON path of the bad field, e.g.
/// `items[0].createdAt`.
///
/// Every item needs a non-empty `id` and a positive `createdAt`, and IDs are unique: a listing
/// that lacks them cannot be judged safely. Missing `metadata` is taken from the
/// `io.kubernetes.pod.{name,namespace,uid}` labels.
pub fn parse_pods(json: &str, origin: &str) -> Result<Vec<Sandbox>> {
    let doc: PodsJson = parse(json, origin, PODS)?;
    let sandboxes: Vec<Sandbox> = doc.items.into_iter().map(PodJson::into_core).collect();
    check_items(
        origin,
        PODS,
        "items",
        sandboxes.iter().map(|s| (s.id.as_str(), s.created_at)),
    )?;
    Ok(sandboxes)
}

/// Rejects items without an ID or a creation time, and duplicate IDs.
fn check_items<'a>(
    origin: &str,
    what: &'static str,
    list: &str,
    items: impl Iterator<Item = (&'a str, jiff::Timestamp)>,
) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for (i, (id, created_at)) in items.enumerate() {
        let problem = if id.is_empty() {
            Some(("id", "missing or empty".to_string()))
        } else if created_at <= jiff::Timestamp::UNIX_EPOCH {
            Some((
                "createdAt",
                "missing or zero: the item's age cannot be judged".to_string(),
            ))
        } else if !seen.insert(id) {
            Some(("id", format!("duplicate id {id}")))
        } else {
            None
        };
        if let Some((field, detail)) = problem {
            return Err(Error::SnapshotParseFailed {
                what,
                origin: origin.to_owned(),
                path: format!("{list}[{i}].{field}"),
                source: serde::de::Error::custom(detail),
            });
        }
    }
    Ok(())
}

/// Parses the output of `crictl ps -a -o json` into containers, in document order.
///
/// # Errors
///
/// As [`parse_pods`].
pub fn parse_containers(json: &str, origin: &str) -> Result<Vec<Container>> {
    let doc: ContainersJson = parse(json, origin, CONTAINERS)?;
    let containers: Vec<Container> = doc
        .containers
        .into_iter()
        .map(ContainerJson::into_core)
        .collect();
    check_items(
        origin,
        CONTAINERS,
        "containers",
        containers.iter().map(|c| (c.id.as_str(), c.created_at)),
    )?;
    Ok(containers)
}

/// Parses the output of `crictl version -o json`. The document has no endpoint, so the caller
/// passes the one to record in [`RuntimeInfo::endpoint`].
///
/// # Errors
///
/// As [`parse_pods`]; also when `runtimeApiVersion` is neither `v1` nor `v1alpha2`.
pub fn parse_version(json: &str, origin: &str, endpoint: &str) -> Result<RuntimeInfo> {
    let doc: VersionJson = parse(json, origin, VERSION)?;
    Ok(RuntimeInfo {
        endpoint: endpoint.to_owned(),
        runtime_name: doc.runtime_name,
        runtime_version: doc.runtime_version,
        cri_api_version: doc.runtime_api_version.0,
    })
}

/// Reads and parses a `crictl pods -o json` file.
///
/// # Errors
///
/// [`Error::SnapshotReadFailed`], or as [`parse_pods`] with the file name as origin.
pub fn read_pods(path: &Path) -> Result<Vec<Sandbox>> {
    parse_pods(&read(path, PODS)?, &path.display().to_string())
}

/// Reads and parses a `crictl ps -a -o json` file.
///
/// # Errors
///
/// [`Error::SnapshotReadFailed`], or as [`parse_containers`] with the file name as origin.
pub fn read_containers(path: &Path) -> Result<Vec<Container>> {
    parse_containers(&read(path, CONTAINERS)?, &path.display().to_string())
}

/// Reads and parses a `crictl version -o json` file; `endpoint` is recorded as in
/// [`parse_version`].
///
/// # Errors
///
/// [`Error::SnapshotReadFailed`], or as [`parse_version`] with the file name as origin.
pub fn read_version(path: &Path, endpoint: &str) -> Result<RuntimeInfo> {
    parse_version(&read(path, VERSION)?, &path.display().to_string(), endpoint)
}

/// Reads a CRI snapshot made with crictl: `crictl pods -o json > pods` and
/// `crictl ps -a -o json > containers`.
///
/// # Errors
///
/// As [`read_pods`] and [`read_containers`].
pub fn read_view(pods: &Path, containers: &Path) -> Result<CriView> {
    Ok(CriView {
        sandboxes: read_pods(pods)?,
        containers: read_containers(containers)?,
    })
}

/// Writes sandboxes as `crictl pods -o json` prints them (with a trailing newline).
pub fn write_pods(sandboxes: &[Sandbox]) -> String {
    let doc = PodsJson {
        items: sandboxes.iter().map(PodJson::from_core).collect(),
    };
    to_json(&doc)
}

/// Writes containers as `crictl ps -a -o json` prints them (with a trailing newline).
///
/// The core type keeps one image string, written as `image.image`; `imageRef` is written empty.
pub fn write_containers(containers: &[Container]) -> String {
    let doc = ContainersJson {
        containers: containers.iter().map(ContainerJson::from_core).collect(),
    };
    to_json(&doc)
}

/// Writes a [`RuntimeInfo`] as `crictl version -o json` prints it (with a trailing newline);
/// `version` is the kubelet's `0.1.0`. The endpoint is not part of the document.
pub fn write_version(info: &RuntimeInfo) -> String {
    let doc = VersionJson {
        version: KUBELET_RUNTIME_API_VERSION.to_owned(),
        runtime_name: info.runtime_name.clone(),
        runtime_version: info.runtime_version.clone(),
        runtime_api_version: ApiVersionJson(info.cri_api_version),
    };
    to_json(&doc)
}

fn read(path: &Path, what: &'static str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::SnapshotReadFailed {
        what,
        path: path.to_owned(),
        source,
    })
}

fn parse<T: for<'de> Deserialize<'de>>(json: &str, origin: &str, what: &'static str) -> Result<T> {
    // serde would also accept a struct as an array of its fields; crictl prints an object.
    if !json.trim_start().starts_with('{') {
        return Err(Error::SnapshotParseFailed {
            what,
            origin: origin.to_owned(),
            path: ".".to_owned(),
            source: serde::de::Error::custom("expected a JSON object, as crictl prints"),
        });
    }
    let de = &mut serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(de).map_err(|error| Error::SnapshotParseFailed {
        what,
        origin: origin.to_owned(),
        path: error.path().to_string(),
        source: error.into_inner(),
    })
}

/// Serializes plain structs with string map keys, which cannot fail.
fn to_json<T: Serialize>(doc: &T) -> String {
    let mut out = serde_json::to_string_pretty(doc)
        .expect("serializing plain structs with string keys cannot fail");
    out.push('\n');
    out
}

// === document shapes ===

#[derive(Serialize, Deserialize)]
struct PodsJson {
    /// Required: a document without it is not `crictl pods -o json` (e.g. `crictl ps` output).
    #[serde(deserialize_with = "null_as_default")]
    items: Vec<PodJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodJson {
    #[serde(default)]
    id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: PodMetadataJson,
    #[serde(default)]
    state: SandboxStateJson,
    #[serde(default)]
    created_at: Int64Json,
    #[serde(default, deserialize_with = "null_as_default")]
    labels: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_as_default")]
    annotations: BTreeMap<String, String>,
    #[serde(default)]
    runtime_handler: String,
}

#[derive(Default, Serialize, Deserialize)]
struct PodMetadataJson {
    #[serde(default)]
    name: String,
    #[serde(default)]
    uid: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    attempt: Uint32Json,
}

#[derive(Serialize, Deserialize)]
struct ContainersJson {
    /// Required: a document without it is not `crictl ps -a -o json`.
    #[serde(deserialize_with = "null_as_default")]
    containers: Vec<ContainerJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContainerJson {
    #[serde(default)]
    id: String,
    #[serde(default)]
    pod_sandbox_id: String,
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: ContainerMetadataJson,
    #[serde(default, deserialize_with = "null_as_default")]
    image: ImageSpecJson,
    #[serde(default)]
    image_ref: String,
    #[serde(default)]
    state: ContainerStateJson,
    #[serde(default)]
    created_at: Int64Json,
    #[serde(default, deserialize_with = "null_as_default")]
    labels: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_as_default")]
    annotations: BTreeMap<String, String>,
}

#[derive(Default, Serialize, Deserialize)]
struct ContainerMetadataJson {
    #[serde(default)]
    name: String,
    #[serde(default)]
    attempt: Uint32Json,
}

#[derive(Default, Serialize, Deserialize)]
struct ImageSpecJson {
    #[serde(default)]
    image: String,
    #[serde(default, deserialize_with = "null_as_default")]
    annotations: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VersionJson {
    #[serde(default)]
    version: String,
    runtime_name: String,
    runtime_version: String,
    runtime_api_version: ApiVersionJson,
}

impl PodJson {
    fn into_core(self) -> Sandbox {
        let m = self.metadata;
        let or_label = |v: String, key: &str| {
            if v.is_empty() {
                self.labels.get(key).cloned().unwrap_or_default()
            } else {
                v
            }
        };
        Sandbox {
            pod: PodRef {
                namespace: or_label(m.namespace, podcoroner_core::model::LABEL_POD_NAMESPACE),
                name: or_label(m.name, podcoroner_core::model::LABEL_POD_NAME),
                uid: or_label(m.uid, podcoroner_core::model::LABEL_POD_UID),
            },
            id: self.id,
            attempt: m.attempt.0,
            state: self.state.0,
            created_at: timestamp_from_nanos(self.created_at.0),
            labels: self.labels,
            annotations: self.annotations,
        }
    }

    fn from_core(s: &Sandbox) -> PodJson {
        PodJson {
            id: s.id.clone(),
            metadata: PodMetadataJson {
                name: s.pod.name.clone(),
                uid: s.pod.uid.clone(),
                namespace: s.pod.namespace.clone(),
                attempt: Uint32Json(s.attempt),
            },
            state: SandboxStateJson(s.state),
            created_at: Int64Json(timestamp_to_nanos(s.created_at)),
            labels: s.labels.clone(),
            annotations: s.annotations.clone(),
            runtime_handler: String::new(),
        }
    }
}

impl ContainerJson {
    fn into_core(self) -> Container {
        let image = if self.image.image.is_empty() {
            self.image_ref
        } else {
            self.image.image
        };
        Container {
            id: self.id,
            sandbox_id: self.pod_sandbox_id,
            name: self.metadata.name,
            attempt: self.metadata.attempt.0,
            state: self.state.0,
            created_at: timestamp_from_nanos(self.created_at.0),
            started_at: None,
            image,
            labels: self.labels,
            annotations: self.annotations,
        }
    }

    fn from_core(c: &Container) -> ContainerJson {
        ContainerJson {
            id: c.id.clone(),
            pod_sandbox_id: c.sandbox_id.clone(),
            metadata: ContainerMetadataJson {
                name: c.name.clone(),
                attempt: Uint32Json(c.attempt),
            },
            image: ImageSpecJson {
                image: c.image.clone(),
                annotations: BTreeMap::new(),
            },
            image_ref: String::new(),
            state: ContainerStateJson(c.state),
            created_at: Int64Json(timestamp_to_nanos(c.created_at)),
            labels: c.labels.clone(),
            annotations: c.annotations.clone(),
        }
    }
}

// === protobuf JSON scalars ===

fn null_as_default<'de, D, T>(de: D) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(de)?.unwrap_or_default())
}

/// A JSON string or number, as protobuf's JSON mapping accepts for integers.
#[derive(Deserialize)]
#[serde(untagged)]
enum StringOrNumber {
    String(String),
    Number(serde_json::Number),
}

impl StringOrNumber {
    fn integer<T: TryFrom<i128>>(self, what: &str) -> std::result::Result<T, String> {
        let (text, value) = match self {
            StringOrNumber::String(s) => {
                let value = s.trim().parse::<i128>().ok();
                (s, value)
            }
            StringOrNumber::Number(n) => (n.to_string(), n.as_i128()),
        };
        value
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| format!("invalid {what} {text:?}, expected an integer"))
    }

    fn text(&self) -> String {
        match self {
            StringOrNumber::String(s) => s.clone(),
            StringOrNumber::Number(n) => n.to_string(),
        }
    }
}

/// `int64`: written as a decimal string, read from a string or a number.
#[derive(Default)]
struct Int64Json(i64);

impl Serialize for Int64Json {
    fn serialize<S: Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        ser.serialize_str(&self.0.to_string())
    }
}

impl<'de> Deserialize<'de> for Int64Json {
    fn deserialize<D: Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        let raw = StringOrNumber::deserialize(de)?;
        raw.integer("int64")
            .map(Int64Json)
            .map_err(serde::de::Error::custom)
    }
}

/// `uint32`: written as a number, read from a number or a string.
#[derive(Default)]
struct Uint32Json(u32);

impl Serialize for Uint32Json {
    fn serialize<S: Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        ser.serialize_u32(self.0)
    }
}

impl<'de> Deserialize<'de> for Uint32Json {
    fn deserialize<D: Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        let raw = StringOrNumber::deserialize(de)?;
        raw.integer("uint32")
            .map(Uint32Json)
            .map_err(serde::de::Error::custom)
    }
}

/// `PodSandboxState`: a name or its number; protobuf's default is `SANDBOX_READY` (0).
struct SandboxStateJson(SandboxState);

impl Default for SandboxStateJson {
    fn default() -> Self {
        SandboxStateJson(SandboxState::Ready)
    }
}

impl Serialize for SandboxStateJson {
    fn serialize<S: Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        ser.serialize_str(self.0.cri_name())
    }
}

impl<'de> Deserialize<'de> for SandboxStateJson {
    fn deserialize<D: Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        let raw = StringOrNumber::deserialize(de)?;
        let state = match raw.text().as_str() {
            "SANDBOX_READY" | "0" => SandboxState::Ready,
            "SANDBOX_NOTREADY" | "1" => SandboxState::NotReady,
            other => {
                return Err(serde::de::Error::custom(format!(
                    "unknown sandbox state {other:?}, expected SANDBOX_READY or SANDBOX_NOTREADY"
                )));
            }
        };
        Ok(SandboxStateJson(state))
    }
}

/// `ContainerState`: a name or its number; protobuf's default is `CONTAINER_CREATED` (0).
struct ContainerStateJson(ContainerState);

impl Default for ContainerStateJson {
    fn default() -> Self {
        ContainerStateJson(ContainerState::Created)
    }
}

impl Serialize for ContainerStateJson {
    fn serialize<S: Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        ser.serialize_str(self.0.cri_name())
    }
}

impl<'de> Deserialize<'de> for ContainerStateJson {
    fn deserialize<D: Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        let raw = StringOrNumber::deserialize(de)?;
        let state = match raw.text().as_str() {
            "CONTAINER_CREATED" | "0" => ContainerState::Created,
            "CONTAINER_RUNNING" | "1" => ContainerState::Running,
            "CONTAINER_EXITED" | "2" => ContainerState::Exited,
            "CONTAINER_UNKNOWN" | "3" => ContainerState::Unknown,
            other => {
                return Err(serde::de::Error::custom(format!(
                    "unknown container state {other:?}, expected CONTAINER_CREATED, CONTAINER_RUNNING, CONTAINER_EXITED or CONTAINER_UNKNOWN"
                )));
            }
        };
        Ok(ContainerStateJson(state))
    }
}

/// `runtimeApiVersion`: `v1` or `v1alpha2`.
struct ApiVersionJson(ApiVersion);

impl Serialize for ApiVersionJson {
    fn serialize<S: Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        ser.serialize_str(self.0.as_str())
    }
}

impl<'de> Deserialize<'de> for ApiVersionJson {
    fn deserialize<D: Deserializer<'de>>(de: D) -> std::result::Result<Self, D::Error> {
        let raw = String::deserialize(de)?;
        ApiVersion::parse(&raw).map(ApiVersionJson).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown CRI API version {raw:?}, expected v1 or v1alpha2"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `crictl pods -o json` printed for a containerd 1.6 node (IDs shortened), with every
    /// default emitted.
    const PODS_JSON: &str = r#"{
  "items": [
    {
      "id": "5e3c0b4f1d2a",
      "metadata": {
        "name": "kube-apiserver-node-1",
        "uid": "8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e",
        "namespace": "kube-system",
        "attempt": 1
      },
      "state": "SANDBOX_READY",
      "createdAt": "1700000000123456789",
      "labels": {
        "component": "kube-apiserver",
        "io.kubernetes.pod.name": "kube-apiserver-node-1",
        "io.kubernetes.pod.namespace": "kube-system",
        "io.kubernetes.pod.uid": "8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e",
        "tier": "control-plane"
      },
      "annotations": {
        "kubernetes.io/config.hash": "8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e",
        "kubernetes.io/config.seen": "2023-11-14T22:13:19.000000000Z",
        "kubernetes.io/config.source": "file"
      },
      "runtimeHandler": ""
    },
    {
      "id": "77aa01",
      "metadata": {
        "name": "web-0",
        "uid": "0b6f2c5e-2b1d-4e8a-9c1f-3d2e1f0a9b8c",
        "namespace": "default",
        "attempt": 0
      },
      "state": "SANDBOX_NOTREADY",
      "createdAt": "1700000100000000000",
      "labels": {},
      "annotations": {},
      "runtimeHandler": "runc"
    }
  ]
}
"#;

    const CONTAINERS_JSON: &str = r#"{
  "containers": [
    {
      "id": "c0ffee01",
      "podSandboxId": "5e3c0b4f1d2a",
      "metadata": {
        "name": "kube-apiserver",
        "attempt": 2
      },
      "image": {
        "image": "sha256:5d3c1a",
        "annotations": {},
        "userSpecifiedImage": "registry.k8s.io/kube-apiserver:v1.29.0",
        "runtimeHandler": ""
      },
      "imageRef": "registry.k8s.io/kube-apiserver@sha256:5d3c1a",
      "state": "CONTAINER_EXITED",
      "createdAt": "1700000000500000000",
      "labels": {
        "io.kubernetes.container.name": "kube-apiserver",
        "io.kubernetes.pod.name": "kube-apiserver-node-1",
        "io.kubernetes.pod.namespace": "kube-system",
        "io.kubernetes.pod.uid": "8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e"
      },
      "annotations": {
        "io.kubernetes.container.hash": "5c1b7a3e",
        "io.kubernetes.container.restartCount": "2"
      },
      "imageId": ""
    }
  ]
}
"#;

    #[test]
    fn parses_real_looking_crictl_pods() {
        let pods = parse_pods(PODS_JSON, "pods.json").unwrap();
        assert_eq!(pods.len(), 2);
        let apiserver = &pods[0];
        assert_eq!(apiserver.id, "5e3c0b4f1d2a");
        assert_eq!(
            apiserver.pod,
            PodRef {
                namespace: "kube-system".into(),
                name: "kube-apiserver-node-1".into(),
                uid: "8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e".into()
            }
        );
        assert_eq!(apiserver.attempt, 1);
        assert_eq!(apiserver.state, SandboxState::Ready);
        assert_eq!(
            apiserver.created_at.to_string(),
            "2023-11-14T22:13:20.123456789Z"
        );
        assert_eq!(apiserver.labels["tier"], "control-plane");
        assert!(apiserver.is_static());
        assert_eq!(apiserver.config_hash(), "8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e");
        assert_eq!(pods[1].state, SandboxState::NotReady);
        assert!(pods[1].labels.is_empty() && !pods[1].is_kubelet_managed());
    }

    #[test]
    fn parses_real_looking_crictl_ps() {
        let containers = parse_containers(CONTAINERS_JSON, "containers.json").unwrap();
        assert_eq!(containers.len(), 1);
        let c = &containers[0];
        assert_eq!(
            (c.id.as_str(), c.sandbox_id.as_str()),
            ("c0ffee01", "5e3c0b4f1d2a")
        );
        assert_eq!((c.name.as_str(), c.attempt), ("kube-apiserver", 2));
        assert_eq!(c.state, ContainerState::Exited);
        assert_eq!(c.image, "sha256:5d3c1a");
        assert_eq!(c.created_at.to_string(), "2023-11-14T22:13:20.5Z");
        assert_eq!(c.pod_uid(), Some("8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e"));
        assert_eq!(c.annotations["io.kubernetes.container.restartCount"], "2");
    }

    #[test]
    fn round_trips_through_core_types() {
        let pods = parse_pods(PODS_JSON, "pods.json").unwrap();
        let written = write_pods(&pods);
        assert_eq!(parse_pods(&written, "written").unwrap(), pods);
        let containers = parse_containers(CONTAINERS_JSON, "containers.json").unwrap();
        let written = write_containers(&containers);
        assert_eq!(parse_containers(&written, "written").unwrap(), containers);
        // Written documents are what crictl prints for the same items (fields we keep).
        let value: serde_json::Value = serde_json::from_str(&write_pods(&pods[1..])).unwrap();
        let expected: serde_json::Value = serde_json::json!({"items": [{
            "id": "77aa01",
            "metadata": {"name": "web-0", "uid": "0b6f2c5e-2b1d-4e8a-9c1f-3d2e1f0a9b8c", "namespace": "default", "attempt": 0},
            "state": "SANDBOX_NOTREADY",
            "createdAt": "1700000100000000000",
            "labels": {},
            "annotations": {},
            "runtimeHandler": ""
        }]});
        assert_eq!(value, expected);
        let value: serde_json::Value =
            serde_json::from_str(&write_containers(&containers)).unwrap();
        assert_eq!(value["containers"][0]["createdAt"], "1700000000500000000");
        assert_eq!(value["containers"][0]["state"], "CONTAINER_EXITED");
        assert_eq!(value["containers"][0]["podSandboxId"], "5e3c0b4f1d2a");
        assert_eq!(
            value["containers"][0]["metadata"],
            serde_json::json!({"name": "kube-apiserver", "attempt": 2})
        );
        assert_eq!(value["containers"][0]["image"]["image"], "sha256:5d3c1a");
    }

    #[test]
    fn written_pods_are_indented_like_crictl() {
        let pods = parse_pods(PODS_JSON, "pods.json").unwrap();
        let written = write_pods(&pods[1..]);
        assert!(written.starts_with("{\n  \"items\": [\n    {\n      \"id\": \"77aa01\",\n      \"metadata\": {\n        \"name\": \"web-0\","), "{written}");
        assert!(written.ends_with("}\n"));
    }

    #[test]
    fn lenient_scalars_and_defaults() {
        let json = r#"{"items": [
            {"id": "a", "metadata": {"name": "n", "uid": "u", "namespace": "ns", "attempt": "3"}, "state": 1, "createdAt": 42},
            {"id": "b", "metadata": null, "createdAt": "7",
             "labels": {"io.kubernetes.pod.uid": "u2", "io.kubernetes.pod.name": "web-0", "io.kubernetes.pod.namespace": "shop"}}
        ]}"#;
        let pods = parse_pods(json, "hand-made.json").unwrap();
        assert_eq!(
            (pods[0].attempt, pods[0].state),
            (3, SandboxState::NotReady)
        );
        assert_eq!(timestamp_to_nanos(pods[0].created_at), 42);
        // Missing metadata comes from the kubelet's labels.
        assert_eq!(
            pods[1].pod,
            PodRef {
                namespace: "shop".to_string(),
                name: "web-0".to_string(),
                uid: "u2".to_string()
            }
        );
        assert_eq!(
            (pods[1].state, timestamp_to_nanos(pods[1].created_at)),
            (SandboxState::Ready, 7)
        );
        assert!(
            parse_pods(r#"{"items": null}"#, "empty.json")
                .unwrap()
                .is_empty()
        );
        assert!(
            parse_containers(r#"{"containers": null}"#, "empty.json")
                .unwrap()
                .is_empty()
        );
        let containers = parse_containers(
            r#"{"containers": [{"id": "c", "imageRef": "sha256:1", "state": "CONTAINER_UNKNOWN", "createdAt": "7"}]}"#,
            "x",
        )
        .unwrap();
        assert_eq!(
            (containers[0].image.as_str(), containers[0].state),
            ("sha256:1", ContainerState::Unknown)
        );
    }

    #[test]
    fn listings_that_cannot_be_judged_safely_are_rejected() {
        let cases = [
            ("{}", "missing field `items`"),
            (r#"{"containers": []}"#, "missing field `items`"),
            (r#"{"items": [{"createdAt": "5"}]}"#, "at `items[0].id`"),
            (r#"{"items": [{"id": "a"}]}"#, "at `items[0].createdAt`"),
            (
                r#"{"items": [{"id": "a", "createdAt": "0"}]}"#,
                "at `items[0].createdAt`",
            ),
            (
                r#"{"items": [{"id": "a", "createdAt": 1}, {"id": "a", "createdAt": 2}]}"#,
                "at `items[1].id`",
            ),
        ];
        for (json, want) in cases {
            let err = parse_pods(json, "pods.json").unwrap_err();
            let text = format!(
                "{err}: {}",
                std::error::Error::source(&err).map_or(String::new(), |s| s.to_string())
            );
            assert!(text.contains(want), "{json}: {text}");
        }
        let err = parse_containers(r#"{"items": []}"#, "containers.json").unwrap_err();
        assert!(
            std::error::Error::source(&err)
                .unwrap()
                .to_string()
                .contains("missing field `containers`"),
            "{err}"
        );
    }

    #[test]
    fn errors_name_the_file_and_the_field() {
        let cases = [
            (
                r#"{"items": [{"id": "a"}, {"id": "b", "createdAt": "soon"}]}"#,
                "items[1].createdAt",
                "invalid int64 \"soon\", expected an integer",
            ),
            (
                r#"{"items": [{"id": "a", "state": "SANDBOX_GONE"}]}"#,
                "items[0].state",
                "unknown sandbox state \"SANDBOX_GONE\"",
            ),
            (
                r#"{"items": [{"metadata": {"attempt": -1}}]}"#,
                "items[0].metadata.attempt",
                "invalid uint32 \"-1\"",
            ),
            (
                r#"{"items": {"id": "a"}}"#,
                "items",
                "invalid type: map, expected a sequence",
            ),
            (r#"{"items": [}"#, "items[0]", "expected value"),
            (r#"[]"#, ".", "expected a JSON object"),
        ];
        for (json, path, cause) in cases {
            let err = parse_pods(json, "/snap/pods.json").unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("parsing crictl pods -o json from /snap/pods.json failed at `{path}`"),
                "{json}"
            );
            let source = std::error::Error::source(&err).unwrap().to_string();
            assert!(source.starts_with(cause), "{json}: {source}");
        }
        let err =
            parse_containers(r#"{"containers": [{"state": "RUNNING"}]}"#, "c.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "parsing crictl ps -a -o json from c.json failed at `containers[0].state`"
        );
    }

    #[test]
    fn version_document() {
        let json = r#"{
  "version": "0.1.0",
  "runtimeName": "containerd",
  "runtimeVersion": "1.6.20~ds1",
  "runtimeApiVersion": "v1"
}
"#;
        let info = parse_version(
            json,
            "version.json",
            "unix:///run/containerd/containerd.sock",
        )
        .unwrap();
        assert_eq!(
            info,
            RuntimeInfo {
                endpoint: "unix:///run/containerd/containerd.sock".into(),
                runtime_name: "containerd".into(),
                runtime_version: "1.6.20~ds1".into(),
                cri_api_version: ApiVersion::V1,
            }
        );
        assert_eq!(write_version(&info), json);
        let err = parse_version(&json.replace("\"v1\"", "\"v2\""), "version.json", "").unwrap_err();
        assert_eq!(
            err.to_string(),
            "parsing crictl version -o json from version.json failed at `runtimeApiVersion`"
        );
    }

    #[test]
    fn reads_files() {
        let dir = tempfile::tempdir().unwrap();
        let pods = dir.path().join("pods.json");
        std::fs::write(&pods, PODS_JSON).unwrap();
        assert_eq!(read_pods(&pods).unwrap().len(), 2);
        let missing = dir.path().join("containers.json");
        let err = read_containers(&missing).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "reading crictl ps -a -o json from {} failed",
                missing.display()
            )
        );
        let version = dir.path().join("version.json");
        std::fs::write(&version, write_version(&parse_version(
            r#"{"version": "0.1.0", "runtimeName": "cri-o", "runtimeVersion": "1.28.1", "runtimeApiVersion": "v1"}"#,
            "inline",
            "",
        ).unwrap())).unwrap();
        let info = read_version(&version, "unix:///run/crio/crio.sock").unwrap();
        assert_eq!(
            (info.runtime_name.as_str(), info.endpoint.as_str()),
            ("cri-o", "unix:///run/crio/crio.sock")
        );
        std::fs::write(&missing, CONTAINERS_JSON).unwrap();
        let view = read_view(&pods, &missing).unwrap();
        assert_eq!((view.sandboxes.len(), view.containers.len()), (2, 1));
        std::fs::write(&missing, "[]").unwrap();
        let err = read_containers(&missing).unwrap_err();
        assert!(
            err.to_string().contains(&missing.display().to_string()),
            "{err}"
        );
    }
}
