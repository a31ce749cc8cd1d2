//! A fleet on one real node, for `tests/fleet.rs` and `benches/fleet_scale.rs`: `podcoroner
//! daemon` processes on this machine, each the agent of a Node object of its own (created here:
//! no kubelet runs for them), reachable through the real API server's pod proxy.
//!
//! The API server proxies only to a global unicast pod IP (`pod/strategy.go` `ResourceLocation`,
//! `IsProxyableIP`: never loopback), so each agent listens on an address of its own added to `lo`
//! (`ip addr add 10.251.X.Y/32 dev lo`, removed when the lab is dropped); its Pod object (the
//! DaemonSet's labels, `nodeName` its Node, container port `http` its port) gets that address
//! and its Ready condition through the status subresource. No controller manager runs, and no
//! kubelet owns those nodes, so nobody overwrites the status.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use podcoroner_test_support::real_node::Env;
use serde_json::{Value, json};

use super::common::{get_from, ok, wait_for};

/// The agents' namespace and labels, as deploy/base has them.
pub const NAMESPACE: &str = "podcoroner";

/// `deploy/<rel>`.
pub fn deploy(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(rel)
}

/// The YAML documents of `deploy/<rel>` (a file) as JSON.
pub fn manifests(rel: &str) -> Vec<Value> {
    let text = ok(std::fs::read_to_string(deploy(rel)));
    serde_yaml::Deserializer::from_str(&text)
        .map(|d| {
            ok(serde_json::to_value(ok(
                <serde_yaml::Value as serde::Deserialize>::deserialize(d),
            )))
        })
        .filter(|v: &Value| !v.is_null())
        .collect()
}

/// Creates `obj` (any kind whose plural is its lower-cased kind + `s`) as it is.
pub async fn create(client: &kube::Client, obj: &Value) {
    let (group, version) = match obj["apiVersion"].as_str().unwrap().split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (
            String::new(),
            obj["apiVersion"].as_str().unwrap().to_string(),
        ),
    };
    let kind = obj["kind"].as_str().unwrap();
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(&group, &version, kind));
    let api: Api<DynamicObject> = match obj["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    };
    let o: DynamicObject = ok(serde_json::from_value(obj.clone()));
    api.create(&PostParams::default(), &o)
        .await
        .unwrap_or_else(|e| panic!("creating {kind} {}: {e}", obj["metadata"]["name"]));
}

/// An address of this machine the API server may proxy to, on `lo`; removed when dropped.
pub struct Address(pub String);

impl Address {
    /// Adds `ip`/32 to `lo` (an address left by an earlier, killed run is taken over).
    pub fn add(ip: &str) -> Address {
        let out = ok(Command::new("ip")
            .args(["addr", "add", &format!("{ip}/32"), "dev", "lo"])
            .output());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() || err.contains("File exists"),
            "ip addr add {ip}/32 dev lo: {err}"
        );
        Address(ip.to_string())
    }
}

impl Drop for Address {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["addr", "del", &format!("{}/32", self.0), "dev", "lo"])
            .output();
    }
}

/// A Node object with no kubelet behind it, labelled `labels`.
pub async fn fake_node(client: &kube::Client, name: &str, labels: Value) {
    let node: Node = ok(serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
    })));
    ok(Api::<Node>::all(client.clone())
        .create(&PostParams::default(), &node)
        .await);
}

/// The agent's Pod for `node` (the DaemonSet's labels, container port `http` = `port`), with
/// status Running, pod IP `ip` and Ready `ready`, set through the status subresource.
pub async fn agent_pod(
    client: &kube::Client,
    name: &str,
    node: &str,
    ip: &str,
    port: u16,
    ready: bool,
) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let pod: Pod = ok(serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app.kubernetes.io/name": "podcoroner"}},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "podcoroner", "image": "ghcr.io/podcoroner/podcoroner:0.1.0",
                            "ports": [{"name": "http", "containerPort": port}]}],
        },
    })));
    ok(pods.create(&PostParams::default(), &pod).await);
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let ready = if ready { "True" } else { "False" };
    let status = json!({"status": {
        "phase": "Running", "hostIP": ip, "podIP": ip, "podIPs": [{"ip": ip}],
        "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": now,
                        "reason": if ready == "True" { Value::Null } else { json!("ContainersNotReady") },
                        "message": if ready == "True" { Value::Null } else { json!("containers with unready status: [podcoroner]") }}],
    }});
    ok(pods
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await);
}

/// A `podcoroner daemon` for `node` on `ip:port`, with its own manifest and kubelet root
/// directories under `dir` (`manifests/` gets `bad_manifests` files the kubelet cannot parse:
/// an `InvalidStaticPodManifest` each), against the real node's containerd and API server;
/// killed when dropped.
pub struct Daemon {
    pub child: Option<Child>,
    pub ip: String,
    pub port: u16,
}

impl Daemon {
    pub fn start(
        env: &Env,
        dir: &Path,
        node: &str,
        ip: &str,
        port: u16,
        bad_manifests: usize,
        extra: &[&str],
    ) -> Daemon {
        let manifests = dir.join("manifests");
        let root = dir.join("kubelet");
        ok(std::fs::create_dir_all(&manifests));
        ok(std::fs::create_dir_all(root.join("pods")));
        for i in 0..bad_manifests {
            ok(std::fs::write(
                manifests.join(format!("broken-{i}.yaml")),
                "apiVersion: v1\nkind: Pod\nmetadata: [not, a, map]\n",
            ));
        }
        let child = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
            .arg("daemon")
            .args(["--runtime-endpoint", &env.runtime_endpoint])
            .arg("--kubeconfig")
            .arg(&env.kubeconfig)
            .args(["--node-name", node])
            .arg("--manifest-dir")
            .arg(&manifests)
            .arg("--kubelet-root-dir")
            .arg(&root)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .args([
                "--listen",
                &format!("{ip}:{port}"),
                "--min-age",
                "0s",
                "--no-events",
            ])
            .args(["--log-level", "warn"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn());
        Daemon {
            child: Some(child),
            ip: ip.to_string(),
            port,
        }
    }

    /// Waits until `/readyz` answers 200 and `/findings` holds `findings` open findings.
    pub fn wait_ready(&self, findings: usize) {
        wait_for(
            90,
            &format!(
                "the agent on {}:{} ready with {findings} findings",
                self.ip, self.port
            ),
            || {
                if get_from(&self.ip, self.port, "/readyz").0 != 200 {
                    return None;
                }
                let (status, body) = get_from(&self.ip, self.port, "/findings?state=open");
                let report: Value = serde_json::from_str(&body).ok()?;
                (status == 200 && report["findings"].as_array()?.len() == findings).then_some(())
            },
        );
    }

    /// Kills it and waits.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A token for ServiceAccount `ns/sa` (TokenRequest) in a kubeconfig for the real node's API
/// server, written to `path`.
pub async fn service_account_kubeconfig(
    client: &kube::Client,
    env: &Env,
    ca: &Path,
    ns: &str,
    sa: &str,
    path: &Path,
) {
    use k8s_openapi::api::authentication::v1::TokenRequest;
    use k8s_openapi::api::core::v1::ServiceAccount;
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
    if sas.get_opt(sa).await.ok().flatten().is_none() {
        let obj: ServiceAccount = ok(serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa, "namespace": ns},
        })));
        ok(sas.create(&PostParams::default(), &obj).await);
    }
    let request: TokenRequest = ok(serde_json::from_value(json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 3600},
    })));
    let issued = ok(sas
        .create_token_request(sa, &PostParams::default(), &request)
        .await);
    let token = issued.status.unwrap().token.unwrap_or_default();
    ok(std::fs::write(
        path,
        podcoroner_test_support::real_node::kubeconfig_yaml(
            &env.apiserver,
            ca,
            &format!("system:serviceaccount:{ns}:{sa}"),
            &token,
        ),
    ));
}

/// The API server's `apiserver_request_total` (its `/metrics`, as the admin) by `verb resource[/subresource]`,
/// summed over the other labels.
pub async fn apiserver_requests(client: &kube::Client) -> BTreeMap<String, f64> {
    let text = ok(client
        .request_text(ok(http::Request::get("/metrics").body(Vec::new())))
        .await);
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
    {
        let Some((labels, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let label = |k: &str| {
            labels
                .split(&format!("{k}=\""))
                .nth(1)
                .and_then(|s| s.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        let key = format!(
            "{} {}{}",
            label("verb"),
            label("resource"),
            match label("subresource").as_str() {
                "" => String::new(),
                s => format!("/{s}"),
            }
        );
        *out.entry(key).or_insert(0.0) += value.parse::<f64>().unwrap_or(0.0);
    }
    out
}
