//! podcoroner-fleet: every node's findings in one place, read through the API server.
//!
//! [`gather`] finds the agents (the DaemonSet's pods, by its own selector, in its namespace),
//! lists the Nodes (optionally by a label selector), and fetches each Ready agent's `/findings`
//! through the API server's pod proxy
//! (`GET /api/v1/namespaces/{ns}/pods/{pod}:{port}/proxy/findings?state=open`, the form
//! `pod/strategy.go` `ResourceLocation` accepts: `name:port`, the port a number), at most
//! `concurrency` at once, each within `timeout`. A node whose agent pod is missing, not Ready or
//! unreachable is kept in the result with the reason, never dropped. [`report`] turns that into
//! the `podcoroner.fleet/v1` schema and [`render`] into a table.
//!
//! The API server proxies only to a pod IP that is global unicast (`IsProxyableIP`: never
//! loopback or link-local), which a DaemonSet on the host network always has (the node's
//! address).
//!
//! Architecture: with `podcoroner-apiserver` (whose client configuration it shares,
//! [`podcoroner_apiserver::load_config`]), the only crate that talks to the API server; it makes
//! no finding and depends on the agent only for the `/findings` contract
//! ([`podcoroner_agent::http::FindingsReport`]).

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, ListParams};
use podcoroner_agent::http::FindingsReport;
use report::{NodeOutcome, NodeStatus, Outcome};

pub mod render;
pub mod report;

/// The agents' namespace and DaemonSet name in `deploy/base`.
pub const DEFAULT_NAMESPACE: &str = "podcoroner";
/// The DaemonSet's name in `deploy/base`.
pub const DEFAULT_DAEMONSET: &str = "podcoroner";
/// The agent's port in `deploy/base` (`--listen 0.0.0.0:9657`, container port `http`), used
/// when neither the pod nor the DaemonSet's template names one.
pub const DEFAULT_PORT: u16 = 9657;
/// The container port name the agent's port is looked up by.
pub const PORT_NAME: &str = "http";
/// Objects per LIST page (Nodes and agent pods).
pub const PAGE_SIZE: u32 = 500;

/// Errors that stop the fleet view as a whole (a node that cannot be read is no error: it is a
/// row with its reason).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No kubeconfig or in-cluster configuration could be loaded or used.
    #[error(transparent)]
    ConfigFailed(#[from] podcoroner_apiserver::Error),
    /// The DaemonSet does not exist.
    #[error(
        "daemonset {namespace}/{name} not found on {server}: install the agent (kubectl apply -k deploy/base) or name its namespace and DaemonSet with --namespace and --daemonset"
    )]
    DaemonSetNotFound {
        /// The namespace looked in.
        namespace: String,
        /// The DaemonSet's name.
        name: String,
        /// The API server URL.
        server: String,
    },
    /// The DaemonSet has no pod at all.
    #[error(
        "daemonset {namespace}/{name} has no pod on {server} (selector {selector}): no agent runs anywhere"
    )]
    NoAgents {
        /// The namespace.
        namespace: String,
        /// The DaemonSet's name.
        name: String,
        /// Its pod selector.
        selector: String,
        /// The API server URL.
        server: String,
    },
    /// No Node matches (`--node`, or the one node asked for).
    #[error("no node on {server} matches {what}")]
    NoNodes {
        /// The selector or name.
        what: String,
        /// The API server URL.
        server: String,
    },
    /// A request of the discovery (the DaemonSet, the Nodes, the agent pods) failed.
    #[error("{what} on {server} failed: {detail}")]
    RequestFailed {
        /// What was asked, e.g. `listing nodes`.
        what: String,
        /// The API server URL.
        server: String,
        /// kube-rs's explanation (a Forbidden names the missing permission).
        detail: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What [`gather`] reads.
#[derive(Debug, Clone)]
pub struct Options {
    /// The kubeconfig; `None`: in-cluster, then `KUBECONFIG` or `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// The agents' namespace.
    pub namespace: String,
    /// The agents' DaemonSet.
    pub daemonset: String,
    /// A label selector on Nodes (`--node`).
    pub node_selector: Option<String>,
    /// Only this node (`podcoroner fleet NODE`).
    pub node: Option<String>,
    /// `--kind`: when it names exactly one kind, the agents are asked for that kind alone.
    pub kinds: Vec<String>,
    /// At most this many agents are asked at once (at least 1).
    pub concurrency: usize,
    /// Each agent's answer through the proxy must come within this; also the connect and read
    /// timeout of every discovery request.
    pub timeout: Duration,
}

/// Everything [`gather`] read: each node's outcome, and where from.
#[derive(Debug)]
pub struct Gathered {
    /// The API server URL.
    pub server: String,
    /// One per node listed, in the order their agents answered (`report` sorts them).
    pub nodes: Vec<NodeOutcome>,
    /// Requests sent to the API server: the DaemonSet GET, the LIST pages, one proxy GET per
    /// Ready agent.
    pub requests: usize,
}

/// Reads the fleet: the DaemonSet, the Nodes, the agent pods, then each Ready agent's
/// `/findings` through the pod proxy.
///
/// # Errors
/// [`Error::ConfigFailed`] (no usable kubeconfig), [`Error::DaemonSetNotFound`],
/// [`Error::NoAgents`] (the DaemonSet has no pod anywhere), [`Error::NoNodes`], and
/// [`Error::RequestFailed`] when the API server refuses or does not answer one of the discovery
/// requests. One agent that cannot be read is an [`Outcome::NotRead`], never an error.
pub async fn gather(opts: &Options) -> Result<Gathered> {
    let config = podcoroner_apiserver::load_config(
        opts.kubeconfig.as_deref(),
        opts.timeout,
        Some(opts.timeout),
    )
    .await?;
    let server = config.cluster_url.to_string();
    let failed = |what: &str, e: &dyn std::fmt::Display| Error::RequestFailed {
        what: what.to_string(),
        server: server.clone(),
        detail: e.to_string(),
    };
    let refused = |what: &str, e: &kube::Error| Error::RequestFailed {
        what: what.to_string(),
        server: server.clone(),
        detail: api_error(e),
    };
    // The pod proxy's answers are not retried: kube-rs's default policy retries a 503 with
    // backoff, and the API server answers 503 for an agent that refuses the connection, which
    // would then only ever say "no answer within --timeout" instead of why.
    let mut proxy_config = config.clone();
    proxy_config.default_retry = false;
    let proxy = kube::Client::try_from(proxy_config).map_err(|e| failed("connecting", &e))?;
    let client = kube::Client::try_from(config).map_err(|e| failed("connecting", &e))?;
    let mut requests = 0;

    let daemonsets: Api<DaemonSet> = Api::namespaced(client.clone(), &opts.namespace);
    requests += 1;
    let ds = daemonsets
        .get_opt(&opts.daemonset)
        .await
        .map_err(|e| {
            refused(
                &format!("getting daemonset {}/{}", opts.namespace, opts.daemonset),
                &e,
            )
        })?
        .ok_or_else(|| Error::DaemonSetNotFound {
            namespace: opts.namespace.clone(),
            name: opts.daemonset.clone(),
            server: server.clone(),
        })?;
    let spec = ds.spec;
    let selector = kube::core::Selector::try_from(spec.selector)
        .map_err(|e| failed("reading the daemonset's selector", &e))?
        .to_string();
    let template_port = spec
        .template
        .spec
        .as_ref()
        .and_then(|s| agent_port(&s.containers));

    let nodes_api: Api<Node> = Api::all(client.clone());
    let mut params = ListParams::default().limit(PAGE_SIZE);
    if let Some(s) = &opts.node_selector {
        params = params.labels(s);
    }
    if let Some(n) = &opts.node {
        params = params.fields(&format!("metadata.name={n}"));
    }
    let (nodes, pages) = list_all(&nodes_api, params)
        .await
        .map_err(|e| refused("listing nodes", &e))?;
    requests += pages;
    if nodes.is_empty() {
        return Err(Error::NoNodes {
            what: match (&opts.node, &opts.node_selector) {
                (Some(n), _) => format!("the name {n:?}"),
                (None, Some(s)) => format!("the label selector {s:?}"),
                (None, None) => "(the cluster has no Node)".to_string(),
            },
            server,
        });
    }

    let pods_api: Api<Pod> = Api::namespaced(client.clone(), &opts.namespace);
    let pod_params = ListParams::default().labels(&selector).limit(PAGE_SIZE);
    let (pods, pages) = list_all(&pods_api, pod_params)
        .await
        .map_err(|e| refused(&format!("listing pods in namespace {}", opts.namespace), &e))?;
    requests += pages;
    if pods.is_empty() {
        return Err(Error::NoAgents {
            namespace: opts.namespace.clone(),
            name: opts.daemonset.clone(),
            selector,
            server,
        });
    }

    let mut by_node: std::collections::HashMap<String, Vec<Pod>> = Default::default();
    for p in pods {
        if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.clone()) {
            by_node.entry(n).or_default().push(p);
        }
    }
    let query = match opts.kinds.as_slice() {
        [one] => format!("state=open&kind={one}"),
        _ => "state=open".to_string(),
    };
    let targets: Vec<(String, Option<Pod>)> = nodes
        .into_iter()
        .map(|n| {
            let name = n.metadata.name.unwrap_or_default();
            let pod = by_node.remove(&name).and_then(pick_agent);
            (name, pod)
        })
        .collect();
    let asked = targets
        .iter()
        .filter(|(_, p)| p.as_ref().is_some_and(|p| not_ready_reason(p).is_none()))
        .count();
    // Unordered: a slot is free as soon as any agent answers, so a node that never answers
    // holds one slot for `timeout`, not the whole pipeline.
    let outcomes = futures::stream::iter(targets)
        .map(|(node, pod)| {
            let client = proxy.clone();
            let query = query.as_str();
            async move {
                read_node(
                    &client,
                    &opts.namespace,
                    node,
                    pod,
                    template_port,
                    query,
                    opts.timeout,
                )
                .await
            }
        })
        .buffer_unordered(opts.concurrency.max(1))
        .collect::<Vec<_>>()
        .await;
    Ok(Gathered {
        server,
        nodes: outcomes,
        requests: requests + asked,
    })
}

/// Every object of a LIST, page by page: (objects, pages).
async fn list_all<K>(api: &Api<K>, mut params: ListParams) -> kube::Result<(Vec<K>, usize)>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let mut all = Vec::new();
    let mut pages = 0;
    loop {
        let page = api.list(&params).await?;
        pages += 1;
        all.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok((all, pages)),
        }
    }
}

/// The agent's port in `containers`: the container port named [`PORT_NAME`], else the first
/// container port.
fn agent_port(containers: &[k8s_openapi::api::core::v1::Container]) -> Option<u16> {
    let ports: Vec<_> = containers
        .iter()
        .flat_map(|c| c.ports.iter().flatten())
        .collect();
    ports
        .iter()
        .find(|p| p.name.as_deref() == Some(PORT_NAME))
        .or(ports.first())
        .and_then(|p| u16::try_from(p.container_port).ok())
}

/// Of the DaemonSet's pods on one node (two during a rolling update), the one to ask: a Ready
/// one not being deleted, else the newest.
fn pick_agent(mut pods: Vec<Pod>) -> Option<Pod> {
    pods.sort_by_key(|p| {
        (
            not_ready_reason(p).is_none(),
            p.metadata.creation_timestamp.clone().map(|t| t.0),
        )
    });
    pods.pop()
}

/// Why `pod` is not asked: being deleted, not Ready (with the condition's reason), or no pod IP.
fn not_ready_reason(pod: &Pod) -> Option<String> {
    if pod.metadata.deletion_timestamp.is_some() {
        return Some("the agent pod is being deleted".to_string());
    }
    let status = pod.status.as_ref();
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"));
    match ready {
        Some(c) if c.status == "True" => {}
        Some(c) => {
            let why = [c.reason.as_deref(), c.message.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(": ");
            return Some(format!(
                "the agent pod is not Ready (Ready={}{}; phase {})",
                c.status,
                if why.is_empty() {
                    String::new()
                } else {
                    format!(", {why}")
                },
                status.and_then(|s| s.phase.as_deref()).unwrap_or("unknown"),
            ));
        }
        None => {
            return Some(format!(
                "the agent pod has no Ready condition (phase {})",
                status.and_then(|s| s.phase.as_deref()).unwrap_or("unknown")
            ));
        }
    }
    if pod_ip(pod).is_none() {
        return Some("the agent pod has no pod IP".to_string());
    }
    None
}

/// The pod's primary IP, as `ResourceLocation` reads it (`status.podIPs[0]`).
fn pod_ip(pod: &Pod) -> Option<String> {
    let s = pod.status.as_ref()?;
    s.pod_ips
        .as_ref()
        .and_then(|ips| ips.first())
        .map(|ip| ip.ip.clone())
        .or_else(|| s.pod_ip.clone())
        .filter(|ip| !ip.is_empty())
}

/// One node's outcome: no agent, not Ready, or its `/findings` through the pod proxy.
async fn read_node(
    client: &kube::Client,
    namespace: &str,
    node: String,
    pod: Option<Pod>,
    template_port: Option<u16>,
    query: &str,
    timeout: Duration,
) -> NodeOutcome {
    let Some(pod) = pod else {
        return NodeOutcome {
            node,
            agent_pod: None,
            outcome: Outcome::NotRead(
                NodeStatus::NoAgent,
                "no pod of the daemonset is bound to this node".to_string(),
            ),
        };
    };
    let name = pod.metadata.name.clone().unwrap_or_default();
    let outcome = match not_ready_reason(&pod) {
        Some(why) => Outcome::NotRead(NodeStatus::NotReady, why),
        None => {
            let port = pod
                .spec
                .as_ref()
                .and_then(|s| agent_port(&s.containers))
                .or(template_port)
                .unwrap_or(DEFAULT_PORT);
            let path = proxy_path(namespace, &name, port, query);
            fetch(client, &path, timeout).await
        }
    };
    NodeOutcome {
        node,
        agent_pod: Some(name),
        outcome,
    }
}

/// The pod proxy path of an agent's `/findings`.
pub fn proxy_path(namespace: &str, pod: &str, port: u16, query: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/pods/{pod}:{port}/proxy/findings?{query}")
}

/// GET `path` within `timeout`, read as the agent's `/findings`.
async fn fetch(client: &kube::Client, path: &str, timeout: Duration) -> Outcome {
    let request = match http::Request::get(path).body(Vec::new()) {
        Ok(r) => r,
        Err(e) => return Outcome::NotRead(NodeStatus::Unreachable, format!("GET {path}: {e}")),
    };
    let text = match tokio::time::timeout(timeout, client.request_text(request)).await {
        Err(_) => {
            return Outcome::NotRead(
                NodeStatus::Unreachable,
                format!("GET {path}: no answer within {}", humanize(timeout)),
            );
        }
        Ok(Err(e)) => {
            return Outcome::NotRead(
                NodeStatus::Unreachable,
                format!("GET {path}: {}", api_error(&e)),
            );
        }
        Ok(Ok(text)) => text,
    };
    match serde_json::from_str::<FindingsReport>(&text) {
        Ok(r) if r.schema == podcoroner_node::api::SCHEMA => Outcome::Read(Box::new(r)),
        Ok(r) => Outcome::NotRead(
            NodeStatus::InvalidResponse,
            format!(
                "GET {path}: schema {:?}, not {}",
                r.schema,
                podcoroner_node::api::SCHEMA
            ),
        ),
        Err(e) => Outcome::NotRead(
            NodeStatus::InvalidResponse,
            format!("GET {path}: not a podcoroner.diagnosis/v1 findings report: {e}"),
        ),
    }
}

/// An API error as `CODE Reason: message` (kube-rs's `Display` of one repeats the whole
/// `Status`), any other error as it prints.
fn api_error(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} {}: {}", s.code, s.reason, s.message),
        other => other.to_string(),
    }
}

/// `5s`, `1.5s`.
fn humanize(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(
        name: &str,
        created: &str,
        ready: Option<&str>,
        ip: Option<&str>,
        deleting: bool,
    ) -> Pod {
        let mut p = json!({
            "metadata": {"name": name, "creationTimestamp": created},
            "spec": {"nodeName": "n", "containers": [{"name": "c", "ports": [
                {"name": "metrics", "containerPort": 9000}, {"name": "http", "containerPort": 9657}]}]},
            "status": {"phase": "Running"},
        });
        if let Some(r) = ready {
            p["status"]["conditions"] =
                json!([{"type": "Ready", "status": r, "reason": "ContainersNotReady"}]);
        }
        if let Some(ip) = ip {
            p["status"]["podIPs"] = json!([{"ip": ip}]);
        }
        if deleting {
            p["metadata"]["deletionTimestamp"] = json!("2026-12-01T12:00:00Z");
        }
        serde_json::from_value(p).unwrap()
    }

    #[test]
    fn not_ready_says_why() {
        let ok = pod(
            "a",
            "2026-12-01T10:00:00Z",
            Some("True"),
            Some("10.0.0.1"),
            false,
        );
        assert_eq!(not_ready_reason(&ok), None);
        let why = |p: &Pod| not_ready_reason(p).unwrap();
        assert!(
            why(&pod(
                "a",
                "2026-12-01T10:00:00Z",
                Some("False"),
                Some("10.0.0.1"),
                false
            ))
            .contains("Ready=False, ContainersNotReady")
        );
        assert!(
            why(&pod(
                "a",
                "2026-12-01T10:00:00Z",
                None,
                Some("10.0.0.1"),
                false
            ))
            .contains("no Ready condition")
        );
        assert!(
            why(&pod("a", "2026-12-01T10:00:00Z", Some("True"), None, false)).contains("no pod IP")
        );
        assert!(
            why(&pod(
                "a",
                "2026-12-01T10:00:00Z",
                Some("True"),
                Some("10.0.0.1"),
                true
            ))
            .contains("being deleted")
        );
    }

    #[test]
    fn during_a_rolling_update_the_ready_pod_is_asked_else_the_newest() {
        let old_ready = pod(
            "old",
            "2026-12-01T10:00:00Z",
            Some("True"),
            Some("10.0.0.1"),
            false,
        );
        let new_starting = pod(
            "new",
            "2026-12-01T11:00:00Z",
            Some("False"),
            Some("10.0.0.1"),
            false,
        );
        let name = |p: Option<Pod>| p.and_then(|p| p.metadata.name).unwrap();
        assert_eq!(
            name(pick_agent(vec![new_starting.clone(), old_ready.clone()])),
            "old"
        );
        let old_deleting = pod(
            "old",
            "2026-12-01T10:00:00Z",
            Some("True"),
            Some("10.0.0.1"),
            true,
        );
        assert_eq!(name(pick_agent(vec![old_deleting, new_starting])), "new");
        assert!(pick_agent(Vec::new()).is_none());
    }

    #[test]
    fn the_port_is_the_one_named_http() {
        let p = pod(
            "a",
            "2026-12-01T10:00:00Z",
            Some("True"),
            Some("10.0.0.1"),
            false,
        );
        assert_eq!(agent_port(&p.spec.unwrap().containers), Some(9657));
        assert_eq!(
            proxy_path("podcoroner", "podcoroner-x", 9657, "state=open"),
            "/api/v1/namespaces/podcoroner/pods/podcoroner-x:9657/proxy/findings?state=open"
        );
    }
}
