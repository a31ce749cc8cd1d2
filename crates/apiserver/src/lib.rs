//! podcoroner-apiserver: the node's pods as the API server sees them, mirror pods included.
//!
//! Two ways in, one result ([`podcoroner_core::ApiView`]):
//! - [`list_node_pods`]: a kube-rs client (`--kubeconfig`, else in-cluster or `KUBECONFIG`)
//!   listing pods with the field selector `spec.nodeName=<node>`, paged;
//! - [`parse_pod_list`]: the JSON of `kubectl get pods -A -o json` (a `List` or `PodList`), for
//!   air-gapped nodes, snapshots and tests.
//!
//! Architecture invariant: the only crate that talks to the API server about a node (and, with
//! `podcoroner-fleet`'s cluster-wide reads for `podcoroner fleet`, which shares
//! [`load_config`], the only one at all) or knows the pod list JSON; it depends on
//! `podcoroner-core` and on no other podcoroner crate.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use podcoroner_core::model::ApiPodStartup;
use podcoroner_core::{ApiPod, ApiView, PodRef};
use serde::{Deserialize, Serialize};

/// Errors reading pods.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The pods file could not be read.
    #[error("cannot read pods file {}: {error}", path.display())]
    PodsFileReadFailed {
        /// The file.
        path: PathBuf,
        /// The I/O error (interpolated, not a `#[source]`, so it prints once).
        error: std::io::Error,
    },
    /// The pods file is larger than [`MAX_PODS_FILE_BYTES`]; only that much is ever read.
    #[error(
        "pods file {} is larger than {} MiB: it is not read (keep it to this node's pods: kubectl get pods -A -o json --field-selector spec.nodeName=<node>)",
        path.display(),
        max_bytes / (1024 * 1024)
    )]
    PodsFileTooLarge {
        /// The file.
        path: PathBuf,
        /// The limit, [`MAX_PODS_FILE_BYTES`].
        max_bytes: u64,
    },
    /// The pods file is not the JSON of `kubectl get pods -o json`.
    #[error("malformed pods file {}: {detail}", path.display())]
    PodsFileInvalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with line and column or the item index.
        detail: String,
    },
    /// No kubeconfig or in-cluster configuration could be loaded.
    #[error("no API server configuration: {detail}")]
    ConfigFailed {
        /// kube-rs's explanation.
        detail: String,
    },
    /// Creating an Event failed.
    #[error("creating a {reason} event failed: {detail}")]
    EventFailed {
        /// The Event's reason (finding kind).
        reason: String,
        /// kube-rs's explanation.
        detail: String,
    },
    /// The API server could not be reached or refused the list.
    #[error("listing pods on node {node} from {server} failed: {detail}")]
    ListPodsFailed {
        /// The node name used in the field selector.
        node: String,
        /// The API server URL.
        server: String,
        /// kube-rs's explanation.
        detail: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Pods as read, both raw (for a snapshot) and reduced (for the rules).
#[derive(Debug, Clone)]
pub struct NodePods {
    /// The pods exactly as the API server returned them.
    pub raw: Vec<Pod>,
    /// The reduced view.
    pub view: ApiView,
    /// What was passed over, e.g. `skipped 2 items that are not Pods (Service, Service)`.
    pub note: Option<String>,
}

/// The `kubectl get pods -o json` document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodList {
    #[serde(default)]
    api_version: String,
    kind: String,
    /// `null` (Go's empty list) reads as empty.
    #[serde(default, deserialize_with = "null_as_empty")]
    items: Vec<serde_json::Value>,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> Result<Vec<serde_json::Value>, D::Error> {
    Ok(Option::<Vec<serde_json::Value>>::deserialize(de)?.unwrap_or_default())
}

/// Parses the JSON of `kubectl get pods [-A] -o json`: an object with `kind` `List` or
/// `PodList` and `items`. `origin` names the source in evidence lines.
///
/// # Errors
/// [`Error::PodsFileInvalid`] naming the line and column of malformed JSON, the wrong kind, or the
/// index and field of an item that is not a Pod.
pub fn parse_pod_list(path: &Path, json: &[u8]) -> Result<NodePods> {
    let invalid = |detail: String| Error::PodsFileInvalid {
        path: path.to_path_buf(),
        detail,
    };
    let hint = "(expected the JSON object `kubectl get pods -A -o json` prints)";
    let doc: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| invalid(format!("{e} {hint}")))?;
    if !doc.is_object() {
        return Err(invalid(format!("the document is not a JSON object {hint}")));
    }
    let list: PodList = serde_json::from_value(doc).map_err(|e| invalid(format!("{e} {hint}")))?;
    if list.kind != "List" && list.kind != "PodList" {
        return Err(invalid(format!(
            "kind is {:?}, want \"List\" or \"PodList\"",
            list.kind
        )));
    }
    let mut raw = Vec::with_capacity(list.items.len());
    let mut other_kinds = Vec::new();
    for (i, item) in list.items.into_iter().enumerate() {
        let kind = item
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or("Pod")
            .to_string();
        if kind != "Pod" {
            // `kubectl get all -o json` mixes kinds: the pods are still the truth.
            other_kinds.push(kind);
            continue;
        }
        let pod: Pod =
            serde_json::from_value(item).map_err(|e| invalid(format!("items[{i}]: {e}")))?;
        raw.push(pod);
    }
    let view = to_view(&raw, format!("file {}", path.display()));
    let note = (!other_kinds.is_empty()).then(|| {
        format!(
            "skipped {} items that are not Pods ({})",
            other_kinds.len(),
            other_kinds.join(", ")
        )
    });
    Ok(NodePods { raw, view, note })
}

/// Reads and parses a pods file; see [`parse_pod_list`].
///
/// # Errors
/// [`Error::PodsFileReadFailed`], [`Error::PodsFileTooLarge`] or [`Error::PodsFileInvalid`].
pub fn read_pod_list(path: &Path) -> Result<NodePods> {
    use std::io::Read as _;
    let failed = |error| Error::PodsFileReadFailed {
        path: path.to_path_buf(),
        error,
    };
    // At most the limit and one byte: `/dev/zero` or a runaway pipe cannot fill memory.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(failed)?
        .take(MAX_PODS_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_PODS_FILE_BYTES {
        return Err(Error::PodsFileTooLarge {
            path: path.to_path_buf(),
            max_bytes: MAX_PODS_FILE_BYTES,
        });
    }
    parse_pod_list(path, &bytes)
}

/// The largest `--pods` file read: 10 MiB, the kubelet's limit on a manifest
/// (`maxConfigLength`). One node's pods take far less (about 10 KiB a pod).
pub const MAX_PODS_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Serializes pods as `kubectl get pods -o json` does (`apiVersion: v1`, `kind: List`), the
/// inverse of [`parse_pod_list`].
pub fn pod_list_json(pods: &[Pod]) -> serde_json::Value {
    serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": pods, "metadata": {} })
}

/// Lists the pods bound to `node` (field selector `spec.nodeName=<node>`, 500 per page), mirror
/// pods included, with `timeout` on connecting and on each read.
///
/// The client configuration comes from `kubeconfig` when given; otherwise kube-rs's inference:
/// in-cluster (service account) when `KUBERNETES_SERVICE_HOST` is set, else `KUBECONFIG` or
/// `~/.kube/config`.
///
/// # Errors
/// [`Error::ConfigFailed`] when no configuration loads; [`Error::ListPodsFailed`] when the API
/// server cannot be reached or refuses.
pub async fn list_node_pods(
    kubeconfig: Option<&Path>,
    node: &str,
    timeout: Duration,
) -> Result<NodePods> {
    let config = load_config(kubeconfig, timeout, Some(timeout)).await?;
    let server = config.cluster_url.to_string();
    let list_failed = |detail: String| Error::ListPodsFailed {
        node: node.to_string(),
        server: server.clone(),
        detail,
    };
    let client = kube::Client::try_from(config).map_err(|e| list_failed(e.to_string()))?;
    let api: Api<Pod> = Api::all(client);
    let mut params = ListParams::default()
        .fields(&format!("spec.nodeName={node}"))
        .limit(500);
    let mut raw = Vec::new();
    loop {
        let page = tokio::time::timeout(timeout * 3, api.list(&params))
            .await
            .map_err(|_| list_failed(format!("no answer within {}s", (timeout * 3).as_secs())))?
            .map_err(|e| {
                list_failed(format!(
                    "{e} (timeout {}s per request)",
                    timeout.as_secs_f64()
                ))
            })?;
        raw.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    let view = to_view(&raw, format!("apiserver {server} (spec.nodeName={node})"));
    Ok(NodePods {
        raw,
        view,
        note: None,
    })
}

/// The kube-rs client configuration: from `kubeconfig` when given, else kube-rs's inference
/// (in-cluster, then `KUBECONFIG` or `~/.kube/config`), with `connect_timeout` and
/// `read_timeout` (`None` for a watch, which holds its connection open).
///
/// # Errors
/// [`Error::ConfigFailed`] naming the file when it cannot be read or used.
pub async fn load_config(
    kubeconfig: Option<&Path>,
    connect_timeout: Duration,
    read_timeout: Option<Duration>,
) -> Result<kube::Config> {
    let config_failed = |e: &dyn std::fmt::Display| Error::ConfigFailed {
        detail: e.to_string(),
    };
    let mut config = match kubeconfig {
        Some(path) => {
            let kc = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| config_failed(&format!("{}: {e}", path.display())))?;
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|e| config_failed(&format!("{}: {e}", path.display())))?
        }
        None => kube::Config::infer().await.map_err(|e| config_failed(&e))?,
    };
    config.connect_timeout = Some(connect_timeout);
    config.read_timeout = read_timeout;
    Ok(config)
}

/// A kube-rs client for a watch (no read timeout), with the API server URL.
async fn client(kubeconfig: Option<&Path>, timeout: Duration) -> Result<(kube::Client, String)> {
    let config = load_config(kubeconfig, timeout, None).await?;
    let server = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).map_err(|e| Error::ConfigFailed {
        detail: e.to_string(),
    })?;
    Ok((client, server))
}

/// A watch of the pods bound to one node: [`watch_node_pods`].
pub struct NodePodWatch {
    /// The reflector's store: the node's pods as last seen.
    pub store: kube::runtime::reflector::Store<Pod>,
    /// Where the pods come from, for evidence lines.
    pub origin: String,
}

impl NodePodWatch {
    /// The node's pods now.
    pub fn snapshot(&self) -> NodePods {
        let raw: Vec<Pod> = self.store.state().iter().map(|p| (**p).clone()).collect();
        let view = to_view(&raw, self.origin.clone());
        NodePods {
            raw,
            view,
            note: None,
        }
    }
}

/// Watches the pods bound to `node`: a kube-rs `watcher` with the field selector
/// `spec.nodeName=<node>` feeding a `reflector` store (it relists when the watch expires, and
/// backs off on errors). Returns the store and a stream that yields `Ok(())` once the initial
/// list is complete and after every change, and `Err` on a watch error (the watch goes on).
/// Read the pods with [`NodePodWatch::snapshot`], as often as wanted.
///
/// # Errors
/// [`Error::ConfigFailed`] when no client configuration loads.
pub async fn watch_node_pods(
    kubeconfig: Option<&Path>,
    node: &str,
    timeout: Duration,
) -> Result<(
    NodePodWatch,
    impl futures::Stream<Item = Result<()>> + Send + 'static,
)> {
    use futures::StreamExt as _;
    use kube::runtime::WatchStreamExt as _;
    use kube::runtime::watcher;
    let (client, server) = client(kubeconfig, timeout).await?;
    let api: Api<Pod> = Api::all(client);
    let (store, writer) = kube::runtime::reflector::store();
    let config = watcher::Config::default().fields(&format!("spec.nodeName={node}"));
    let events = kube::runtime::reflector(writer, watcher(api, config)).default_backoff();
    let node = node.to_string();
    let origin = format!("apiserver {server} (watch spec.nodeName={node})");
    let mut ready = false;
    let changes = events.filter_map(move |ev| {
        let out = match ev {
            Err(e) => Some(Err(Error::ListPodsFailed {
                node: node.clone(),
                server: server.clone(),
                detail: e.to_string(),
            })),
            Ok(watcher::Event::Init | watcher::Event::InitApply(_)) => None,
            Ok(watcher::Event::InitDone) => {
                ready = true;
                Some(Ok(()))
            }
            Ok(_) => ready.then_some(Ok(())),
        };
        std::future::ready(out)
    });
    Ok((NodePodWatch { store, origin }, changes))
}

/// Reduces API pods to the core model.
pub fn to_view(pods: &[Pod], origin: String) -> ApiView {
    ApiView {
        pods: pods.iter().map(to_api_pod).collect(),
        origin,
    }
}

fn to_api_pod(p: &Pod) -> ApiPod {
    let meta = &p.metadata;
    let status = p.status.as_ref();
    let mut changes: Vec<Timestamp> = Vec::new();
    if let Some(s) = status {
        changes.extend(
            s.conditions
                .iter()
                .flatten()
                .filter_map(|c| c.last_transition_time.as_ref().map(|t| t.0)),
        );
        for cs in s
            .container_statuses
            .iter()
            .flatten()
            .chain(s.init_container_statuses.iter().flatten())
        {
            if let Some(t) = cs
                .state
                .as_ref()
                .and_then(|st| st.terminated.as_ref())
                .and_then(|t| t.finished_at.as_ref())
            {
                changes.push(t.0);
            }
        }
    }
    let status_changed_at = changes
        .into_iter()
        .max()
        .or_else(|| status.and_then(|s| s.start_time.as_ref()).map(|t| t.0));
    ApiPod {
        pod: PodRef {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
        },
        node_name: p
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
        reason: status.and_then(|s| s.reason.clone()),
        annotations: meta.annotations.clone().unwrap_or_default(),
        created_at: meta.creation_timestamp.as_ref().map(|t| t.0),
        deletion_timestamp: meta.deletion_timestamp.as_ref().map(|t| t.0),
        deletion_grace_period_seconds: meta.deletion_grace_period_seconds,
        status_changed_at,
        startup: startup_of(p),
    }
}

/// The status times of a pod's start ([`ApiPodStartup`]): the `True` conditions'
/// `lastTransitionTime`, the init containers declared, the running containers' `startedAt`.
fn startup_of(p: &Pod) -> ApiPodStartup {
    let mut out = ApiPodStartup {
        init_containers: p
            .spec
            .as_ref()
            .and_then(|s| s.init_containers.as_ref())
            .map_or(0, |c| u32::try_from(c.len()).unwrap_or(u32::MAX)),
        ..ApiPodStartup::default()
    };
    let Some(status) = p.status.as_ref() else {
        return out;
    };
    for c in status.conditions.iter().flatten() {
        if c.status != "True" {
            continue;
        }
        let at = c.last_transition_time.as_ref().map(|t| t.0);
        match c.type_.as_str() {
            "PodScheduled" => out.scheduled_at = at,
            "Initialized" => out.initialized_at = at,
            "ContainersReady" => out.containers_ready_at = at,
            "Ready" => out.ready_at = at,
            _ => {}
        }
    }
    for cs in status.container_statuses.iter().flatten() {
        if let Some(t) = cs
            .state
            .as_ref()
            .and_then(|st| st.running.as_ref())
            .and_then(|r| r.started_at.as_ref())
        {
            out.containers_started_at.push((cs.name.clone(), t.0));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pods_file_is_read_up_to_10_mib() {
        let started = std::time::Instant::now();
        let err = read_pod_list(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "pods file /dev/zero is larger than 10 MiB: it is not read (keep it to this node's \
             pods: kubectl get pods -A -o json --field-selector spec.nodeName=<node>)"
        );
        // Not a benchmark: unbounded, /dev/zero never ends.
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pods.json");
        let padded = format!("{}{}", LIST, " ".repeat(10 * 1024 * 1024 - LIST.len()));
        std::fs::write(&path, &padded).unwrap();
        assert_eq!(read_pod_list(&path).unwrap().raw.len(), 2);
        std::fs::write(&path, format!("{padded} ")).unwrap();
        assert!(matches!(
            read_pod_list(&path),
            Err(Error::PodsFileTooLarge {
                max_bytes: MAX_PODS_FILE_BYTES,
                ..
            })
        ));
    }

    /// Trimmed from `kubectl get pods -A -o json` on a kubeadm node: one mirror pod, one evicted pod.
    const LIST: &str = r#"{
      "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
      "items": [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "etcd-node-1", "namespace": "kube-system", "uid": "7e6b0a55-8d3c-4f0e-9d55-3f3c7f0e2a11",
           "creationTimestamp": "2026-11-01T10:00:00Z",
           "annotations": {"kubernetes.io/config.hash": "d41d8cd98f00b204e9800998ecf8427e",
                           "kubernetes.io/config.mirror": "d41d8cd98f00b204e9800998ecf8427e",
                           "kubernetes.io/config.source": "file"},
           "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-1", "uid": "n-1", "controller": true}]},
         "spec": {"nodeName": "node-1", "containers": [{"name": "etcd", "image": "registry.k8s.io/etcd:3.5.15-0"}]},
         "status": {"phase": "Running", "startTime": "2026-11-01T10:00:01Z"}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "web-7d4b9c", "namespace": "shop", "uid": "0b1c2d3e-0000-4000-8000-000000000001",
           "creationTimestamp": "2026-11-20T08:00:00Z"},
         "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "nginx"}]},
         "status": {"phase": "Failed", "reason": "Evicted", "startTime": "2026-11-20T08:00:02Z",
           "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2026-11-21T09:30:00Z"}],
           "containerStatuses": [{"name": "web", "image": "nginx", "imageID": "", "ready": false, "restartCount": 0,
             "state": {"terminated": {"exitCode": 137, "finishedAt": "2026-11-21T09:31:00Z"}}}]}}
      ]
    }"#;

    #[test]
    fn parses_kubectl_pod_list() {
        let got = parse_pod_list(Path::new("pods.json"), LIST.as_bytes()).unwrap();
        assert_eq!(got.raw.len(), 2);
        let v = &got.view;
        assert_eq!(v.origin, "file pods.json");
        assert_eq!(
            v.pods[0].mirror_hash(),
            Some("d41d8cd98f00b204e9800998ecf8427e")
        );
        assert_eq!(v.pods[0].node_name, "node-1");
        assert_eq!(
            v.pods[0].status_changed_at,
            Some("2026-11-01T10:00:01Z".parse().unwrap())
        );
        assert_eq!(v.pods[1].phase, "Failed");
        assert_eq!(v.pods[1].reason.as_deref(), Some("Evicted"));
        assert_eq!(
            v.pods[1].status_changed_at,
            Some("2026-11-21T09:31:00Z".parse().unwrap())
        );
        assert_eq!(v.pods[1].pod.uid, "0b1c2d3e-0000-4000-8000-000000000001");

        // Round trip through the kubectl shape.
        let json = serde_json::to_vec(&pod_list_json(&got.raw)).unwrap();
        let again = parse_pod_list(Path::new("pods.json"), &json).unwrap();
        assert_eq!(again.view, got.view);
    }

    #[test]
    fn tolerates_null_items_and_other_kinds() {
        let got =
            parse_pod_list(Path::new("p.json"), br#"{"kind": "List", "items": null}"#).unwrap();
        assert!(got.raw.is_empty() && got.note.is_none());
        let got = parse_pod_list(
            Path::new("p.json"),
            br#"{"kind": "List", "items": [{"kind": "Service", "metadata": {"name": "s"}}, {"kind": "Pod", "metadata": {"name": "p", "uid": "u"}}]}"#,
        )
        .unwrap();
        assert_eq!(got.view.pods.len(), 1);
        assert_eq!(
            got.note.as_deref(),
            Some("skipped 1 items that are not Pods (Service)")
        );
    }

    #[test]
    fn malformed_pod_lists_name_file_and_place() {
        let cases = [
            (
                "{\"kind\": \"List\", \"items\": [",
                "pods.json: EOF while parsing a list at line 1 column 27",
            ),
            (
                r#"{"kind": "ServiceList", "items": []}"#,
                "kind is \"ServiceList\"",
            ),
            ("[]", "the document is not a JSON object"),
            (
                "kind: List\nitems: []\n",
                "expected value at line 1 column 1 (expected the JSON object",
            ),
            (
                r#"{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": 5}}]}"#,
                "items[0]: invalid type: integer `5`",
            ),
            (r#"{"items": []}"#, "missing field `kind`"),
        ];
        for (json, want) in cases {
            let err = parse_pod_list(Path::new("pods.json"), json.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("malformed pods file pods.json: ") && err.contains(want),
                "{err}"
            );
        }
    }
}

/// Posts Kubernetes Events (`core/v1`) about findings: on the pod when the finding names one,
/// else on the Node; reason = the finding kind, source component `podcoroner`.
#[derive(Clone)]
pub struct EventSink {
    client: kube::Client,
    node: String,
}

/// What an Event says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventNote {
    /// The pod (namespace, name, uid) the Event is about; `None` for the Node.
    pub pod: Option<PodRef>,
    /// The reason: the finding kind, e.g. `LeakedSandbox`.
    pub reason: String,
    /// The message (cut to 1024 bytes, the API's limit).
    pub message: String,
    /// `Warning` or `Normal`.
    pub event_type: &'static str,
}

impl EventSink {
    /// A sink using `kubeconfig` (or kube-rs's inference) for node `node`.
    ///
    /// # Errors
    /// [`Error::ConfigFailed`] when no configuration loads.
    pub async fn new(
        kubeconfig: Option<&Path>,
        node: &str,
        timeout: Duration,
    ) -> Result<EventSink> {
        let config = load_config(kubeconfig, timeout, Some(timeout)).await?;
        let client = kube::Client::try_from(config).map_err(|e| Error::ConfigFailed {
            detail: e.to_string(),
        })?;
        Ok(EventSink {
            client,
            node: node.to_string(),
        })
    }

    /// Creates one Event.
    ///
    /// # Errors
    /// [`Error::EventFailed`] naming the reason and the API error.
    pub async fn emit(&self, note: &EventNote) -> Result<()> {
        use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
        let now = Time(Timestamp::now());
        let (namespace, involved) = match &note.pod {
            Some(p) if !p.name.is_empty() && !p.namespace.is_empty() => (
                p.namespace.clone(),
                ObjectReference {
                    api_version: Some("v1".to_string()),
                    kind: Some("Pod".to_string()),
                    namespace: Some(p.namespace.clone()),
                    name: Some(p.name.clone()),
                    // A static pod's UID is its config hash; the Event is about the object by name.
                    uid: (!p.uid.is_empty() && p.uid.contains('-')).then(|| p.uid.clone()),
                    ..ObjectReference::default()
                },
            ),
            _ => (
                "default".to_string(),
                ObjectReference {
                    api_version: Some("v1".to_string()),
                    kind: Some("Node".to_string()),
                    name: Some(self.node.clone()),
                    ..ObjectReference::default()
                },
            ),
        };
        let mut message = note.message.clone();
        if message.len() > 1024 {
            let mut end = 1021;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
            message.push_str("...");
        }
        let object_name = involved.name.clone().unwrap_or_default();
        let event = Event {
            metadata: ObjectMeta {
                generate_name: Some(format!("{object_name}.podcoroner-")),
                namespace: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            involved_object: involved,
            reason: Some(note.reason.clone()),
            message: Some(message),
            type_: Some(note.event_type.to_string()),
            source: Some(EventSource {
                component: Some("podcoroner".to_string()),
                host: Some(self.node.clone()),
            }),
            reporting_component: Some("podcoroner".to_string()),
            reporting_instance: Some(self.node.clone()),
            first_timestamp: Some(now.clone()),
            last_timestamp: Some(now),
            count: Some(1),
            ..Event::default()
        };
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        api.create(&kube::api::PostParams::default(), &event)
            .await
            .map(|_| ())
            .map_err(|e| Error::EventFailed {
                reason: note.reason.clone(),
                detail: e.to_string(),
            })
    }
}
