//! `deploy/`: every manifest file and every rendered overlay (`kubectl kustomize`) parses as the
//! Kubernetes objects it claims to be, with no field the k8s-openapi types do not know; the RBAC
//! grants exactly what the code calls; the DaemonSet keeps its safety properties; the shipped
//! daemon configuration is valid.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Namespace, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleBinding};
use serde::de::DeserializeOwned;
use serde_json::Value;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// Deserializes `doc` as `T` and back, and fails on any field `T` dropped (unknown fields).
fn typed<T: DeserializeOwned + serde::Serialize>(doc: &Value, origin: &str) -> T {
    let obj: T = serde_json::from_value(doc.clone()).unwrap_or_else(|e| panic!("{origin}: {e}"));
    let back = serde_json::to_value(&obj).unwrap();
    let mut missing = Vec::new();
    diff(doc, &back, String::new(), &mut missing);
    assert!(
        missing.is_empty(),
        "{origin}: fields unknown to the type: {missing:?}"
    );
    obj
}

/// Paths present in `a` but not in `b`.
fn diff(a: &Value, b: &Value, at: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => diff(v, w, format!("{at}.{k}"), out),
                    None => out.push(format!("{at}.{k}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                diff(v, w, format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Checks one object against the type its `kind` names; returns the kind.
fn check(doc: &Value, origin: &str) -> String {
    let kind = doc["kind"]
        .as_str()
        .unwrap_or_else(|| panic!("{origin}: no kind"))
        .to_string();
    match kind.as_str() {
        "Namespace" => drop(typed::<Namespace>(doc, origin)),
        "ServiceAccount" => drop(typed::<ServiceAccount>(doc, origin)),
        "ClusterRole" => drop(typed::<ClusterRole>(doc, origin)),
        "ClusterRoleBinding" => drop(typed::<ClusterRoleBinding>(doc, origin)),
        "RoleBinding" => drop(typed::<RoleBinding>(doc, origin)),
        "DaemonSet" => drop(typed::<DaemonSet>(doc, origin)),
        "Service" => drop(typed::<Service>(doc, origin)),
        "ConfigMap" => drop(typed::<k8s_openapi::api::core::v1::ConfigMap>(doc, origin)),
        // CRDs of the Prometheus operator: no k8s-openapi type; check the fields we use.
        "ServiceMonitor" => {
            assert_eq!(doc["apiVersion"], "monitoring.coreos.com/v1", "{origin}");
            assert_eq!(doc["spec"]["endpoints"][0]["path"], "/metrics", "{origin}");
        }
        "PrometheusRule" => {
            assert_eq!(doc["apiVersion"], "monitoring.coreos.com/v1", "{origin}");
            for r in doc["spec"]["groups"][0]["rules"].as_array().unwrap() {
                assert!(
                    r["alert"].is_string()
                        && r["expr"].is_string()
                        && r["annotations"]["runbook_url"].is_string(),
                    "{origin}: {r}"
                );
            }
        }
        "Kustomization" => {}
        "Component" => assert_eq!(
            doc["apiVersion"], "kustomize.config.k8s.io/v1alpha1",
            "{origin}"
        ),
        other => panic!("{origin}: unexpected kind {other}"),
    }
    kind
}

fn docs(text: &str, origin: &str) -> Vec<Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap_or_else(|e| panic!("{origin}: {e}")))
        .filter(|v: &Value| !v.is_null())
        .collect()
}

#[test]
fn every_manifest_is_a_typed_object() {
    let mut n = 0;
    for dir in [
        "base",
        "overlays/gc-plan",
        "overlays/gc-apply",
        "overlays/metrics-only",
        "components/prometheus-operator",
        "fleet",
    ] {
        for entry in std::fs::read_dir(deploy().join(dir)).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "yaml")
                && path.file_name().unwrap() != "config.yaml"
            {
                let text = std::fs::read_to_string(&path).unwrap();
                for doc in docs(&text, &path.display().to_string()) {
                    // Strategic-merge patches are partial objects: only their kind's fields count.
                    check(&doc, &path.display().to_string());
                    n += 1;
                }
            }
        }
    }
    assert!(n >= 19, "only {n} manifests checked");
}

/// `kubectl kustomize DIR` (kubectl is on the machine; Debian's kubernetes-client provides it).
fn render(dir: &str) -> Vec<Value> {
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(deploy().join(dir))
        .output()
        .unwrap_or_else(|e| panic!("cannot run kubectl ({e}): `cargo xtask test` installs it"));
    assert!(
        out.status.success(),
        "kubectl kustomize {dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    docs(&String::from_utf8(out.stdout).unwrap(), dir)
}

fn daemonset(objs: &[Value], dir: &str) -> DaemonSet {
    typed(objs.iter().find(|o| o["kind"] == "DaemonSet").unwrap(), dir)
}

#[test]
fn every_overlay_renders_to_typed_objects() {
    // The Prometheus operator's objects come only with its component: an overlay without it
    // applies on a cluster without the operator's CRDs.
    for (dir, gc_flag, events, operator) in [
        ("base", None, true, false),
        ("overlays/gc-plan", Some("plan"), true, false),
        ("overlays/gc-apply", Some("apply"), true, false),
        ("overlays/metrics-only", None, false, false),
        ("overlays/prometheus-operator", None, true, true),
    ] {
        let objs = render(dir);
        let kinds: BTreeSet<String> = objs.iter().map(|o| check(o, dir)).collect();
        let mut want: BTreeSet<String> = [
            "ClusterRole",
            "ClusterRoleBinding",
            "ConfigMap",
            "DaemonSet",
            "Namespace",
            "Service",
            "ServiceAccount",
        ]
        .map(String::from)
        .into();
        if operator {
            want.extend(["PrometheusRule", "ServiceMonitor"].map(String::from));
        }
        assert_eq!(kinds, want, "{dir}");
        let ds = daemonset(&objs, dir);
        let args = ds.spec.template.spec.unwrap().containers[0]
            .args
            .clone()
            .unwrap();
        assert_eq!(
            args.iter()
                .position(|a| a == "--gc")
                .map(|i| args[i + 1].as_str()),
            gc_flag,
            "{dir}: {args:?}"
        );
        assert_eq!(
            !args.contains(&"--no-events".to_string()),
            events,
            "{dir}: {args:?}"
        );
        // The shipped config is valid for the daemon.
        let cm = objs.iter().find(|o| o["kind"] == "ConfigMap").unwrap();
        let config = cm["data"]["config.yaml"].as_str().unwrap();
        podcoroner_agent::config::Settings::from_file(config, dir).unwrap();
    }
}

#[test]
fn rbac_grants_exactly_what_the_code_calls() {
    // podcoroner-apiserver: list_node_pods LISTs pods, watch_node_pods runs kube-runtime's
    // watcher (LIST, then WATCH), EventSink::emit CREATEs events.
    let pairs = |p: &[(&str, &str)]| -> BTreeSet<(String, String)> {
        p.iter()
            .map(|(r, v)| (r.to_string(), v.to_string()))
            .collect()
    };
    let pods = [("pods", "list"), ("pods", "watch")];
    for (dir, want) in [
        ("base", pairs(&[pods[0], pods[1], ("events", "create")])),
        ("overlays/metrics-only", pairs(&pods)),
    ] {
        let objs = render(dir);
        let role: ClusterRole = typed(
            objs.iter().find(|o| o["kind"] == "ClusterRole").unwrap(),
            dir,
        );
        let granted: BTreeSet<(String, String)> = role
            .rules
            .unwrap()
            .iter()
            .flat_map(|r| {
                assert_eq!(
                    r.api_groups.as_deref(),
                    Some(&[String::new()][..]),
                    "{dir}: only the core group"
                );
                let verbs = r.verbs.clone();
                r.resources
                    .clone()
                    .unwrap()
                    .into_iter()
                    .flat_map(move |res| verbs.clone().into_iter().map(move |v| (res.clone(), v)))
            })
            .collect();
        assert_eq!(granted, want, "{dir}");
    }
    // The code's calls, to keep the test honest when they change.
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../apiserver/src/lib.rs"),
    )
    .unwrap();
    let calls: Vec<&str> = ["api.list(", "watcher(api", "api.create("]
        .into_iter()
        .filter(|c| src.contains(c))
        .collect();
    assert_eq!(calls, vec!["api.list(", "watcher(api", "api.create("]);
    for absent in [
        "api.get(",
        "api.watch(",
        "api.patch(",
        "api.delete(",
        "api.replace(",
    ] {
        assert!(
            !src.contains(absent),
            "the code now calls {absent}: update the ClusterRole and this test"
        );
    }
}

/// (api group, resource, verb) of every rule of `role`.
fn grants(role: &ClusterRole) -> BTreeSet<(String, String, String)> {
    role.rules
        .iter()
        .flatten()
        .flat_map(|r| {
            let mut out = Vec::new();
            for g in r.api_groups.iter().flatten() {
                for res in r.resources.iter().flatten() {
                    for v in &r.verbs {
                        out.push((g.clone(), res.clone(), v.clone()));
                    }
                }
            }
            out
        })
        .collect()
}

/// deploy/fleet grants what `podcoroner fleet` calls (podcoroner-fleet's `gather`: GET the
/// DaemonSet, LIST Nodes, LIST the agent pods, GET `pods/proxy`), the namespaced part bound in the
/// agents' namespace only; and no agent's role (base or an overlay) gains any of it.
#[test]
fn fleet_rbac_is_separate_and_grants_what_fleet_calls() {
    let g = |a: &str, r: &str, v: &str| (a.to_string(), r.to_string(), v.to_string());
    let objs = render("fleet");
    let role = |name: &str| -> ClusterRole {
        typed(
            objs.iter()
                .find(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == name)
                .unwrap_or_else(|| panic!("deploy/fleet has no ClusterRole {name}")),
            "fleet",
        )
    };
    assert_eq!(
        grants(&role("podcoroner-fleet")),
        [
            g("", "pods", "list"),
            g("", "pods/proxy", "get"),
            g("apps", "daemonsets", "get")
        ]
        .into()
    );
    assert_eq!(
        grants(&role("podcoroner-fleet-nodes")),
        [g("", "nodes", "list")].into()
    );
    let rb: RoleBinding = typed(
        objs.iter().find(|o| o["kind"] == "RoleBinding").unwrap(),
        "fleet",
    );
    assert_eq!(
        rb.metadata.namespace.as_deref(),
        Some("podcoroner"),
        "pods/proxy only in the agents' namespace"
    );
    assert_eq!(
        (rb.role_ref.kind.as_str(), rb.role_ref.name.as_str()),
        ("ClusterRole", "podcoroner-fleet")
    );
    let crb: ClusterRoleBinding = typed(
        objs.iter()
            .find(|o| o["kind"] == "ClusterRoleBinding")
            .unwrap(),
        "fleet",
    );
    assert_eq!(crb.role_ref.name, "podcoroner-fleet-nodes");
    for b in [rb.subjects.as_ref(), crb.subjects.as_ref()] {
        assert!(
            b.into_iter()
                .flatten()
                .all(|s| !(s.kind == "ServiceAccount" && s.name == "podcoroner")),
            "the agent's ServiceAccount is bound to no fleet role"
        );
    }
    // The agent's role, in the base and every overlay, gains none of it.
    for dir in [
        "base",
        "overlays/gc-plan",
        "overlays/gc-apply",
        "overlays/metrics-only",
        "overlays/prometheus-operator",
    ] {
        let objs = render(dir);
        for o in objs.iter().filter(|o| o["kind"] == "ClusterRole") {
            let granted = grants(&typed(o, dir));
            for (_, res, _) in &granted {
                assert!(
                    !["nodes", "pods/proxy", "daemonsets"].contains(&res.as_str()),
                    "{dir}: the agent's ClusterRole grants {res}: {granted:?}"
                );
            }
        }
    }
    // The fleet code's calls, to keep the test honest when they change.
    let src =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fleet/src/lib.rs"))
            .unwrap();
    for call in [
        "Api<DaemonSet>",
        ".get_opt(",
        "list_all(&nodes_api",
        "list_all(&pods_api",
        "/proxy/findings",
    ] {
        assert!(
            src.contains(call),
            "podcoroner-fleet no longer calls {call}: update deploy/fleet and this test"
        );
    }
    for absent in [
        ".create(",
        ".patch(",
        ".delete(",
        ".replace(",
        ".watch(",
        "watcher(",
    ] {
        assert!(
            !src.contains(absent),
            "podcoroner-fleet now calls {absent}: update deploy/fleet and this test"
        );
    }
}

#[test]
fn the_daemonset_keeps_its_safety_properties() {
    let objs = render("base");
    let ds = daemonset(&objs, "base");
    let spec = ds.spec.template.spec.unwrap();
    assert_eq!(
        spec.priority_class_name.as_deref(),
        Some("system-node-critical")
    );
    let tol = spec.tolerations.unwrap();
    assert!(
        tol.iter().any(|t| t.operator.as_deref() == Some("Exists")
            && t.key.is_none()
            && t.effect.is_none()),
        "tolerates every taint"
    );
    let c = &spec.containers[0];
    assert_eq!(
        c.liveness_probe
            .as_ref()
            .unwrap()
            .http_get
            .as_ref()
            .unwrap()
            .path
            .as_deref(),
        Some("/healthz")
    );
    assert_eq!(
        c.readiness_probe
            .as_ref()
            .unwrap()
            .http_get
            .as_ref()
            .unwrap()
            .path
            .as_deref(),
        Some("/readyz")
    );
    let sc = c.security_context.as_ref().unwrap();
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    let caps = sc.capabilities.as_ref().unwrap();
    assert_eq!(caps.drop.as_deref(), Some(&["ALL".to_string()][..]));
    let env = c.env.as_ref().unwrap();
    let node = env.iter().find(|e| e.name == "NODE_NAME").unwrap();
    assert_eq!(
        node.value_from
            .as_ref()
            .unwrap()
            .field_ref
            .as_ref()
            .unwrap()
            .field_path,
        "spec.nodeName"
    );
    let res = c.resources.as_ref().unwrap();
    assert!(res.requests.is_some() && res.limits.is_some());
    // Read-only host mounts, except the state directory (connecting to the CRI socket needs no
    // write access to its mount).
    for m in c.volume_mounts.as_ref().unwrap() {
        let writable = m.mount_path == "/var/lib/podcoroner";
        assert_eq!(m.read_only.unwrap_or(false), !writable, "{}", m.mount_path);
    }
    // The agent starts on a node whose CNI is broken.
    assert_eq!(spec.host_network, Some(true));
    assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirstWithHostNet"));
    let mount = |path: &str| {
        c.volume_mounts
            .as_ref()
            .unwrap()
            .iter()
            .find(|m| m.mount_path == path)
            .unwrap_or_else(|| panic!("missing mount {path}"))
    };
    // The socket's directory, so a restarted containerd's new socket is seen; and host unmounts
    // (pod volumes, task rootfs) propagate instead of being held in the agent's namespace.
    for path in ["/run/containerd", "/var/lib/kubelet/pods"] {
        assert_eq!(
            mount(path).mount_propagation.as_deref(),
            Some("HostToContainer"),
            "{path}"
        );
    }
    let volumes = spec.volumes.as_ref().unwrap();
    let host_paths: Vec<&str> = volumes
        .iter()
        .filter_map(|v| v.host_path.as_ref())
        .map(|h| h.path.as_str())
        .collect();
    assert!(
        !host_paths.contains(&"/run/containerd/containerd.sock"),
        "a mount of the socket file keeps the dead socket after containerd restarts"
    );
    // A hostPath creates what is missing: /var/log/journal would switch journald to persistent
    // storage on a node with a volatile journal. The /var/log mount shows it where it exists.
    assert!(!host_paths.contains(&"/var/log/journal"));
    let paths: BTreeSet<String> = c
        .volume_mounts
        .as_ref()
        .unwrap()
        .iter()
        .map(|m| m.mount_path.clone())
        .collect();
    for p in [
        "/var/log",
        "/run/containerd",
        "/run/log/journal",
        "/etc/machine-id",
        "/etc/kubernetes/manifests",
        "/var/lib/kubelet/pods",
    ] {
        assert!(paths.contains(p), "missing mount {p}");
    }
}

#[test]
fn an_unknown_field_is_caught() {
    let doc: Value = serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
        "spec": {"ports": [{"port": 80, "targetPrt": 8080}]}});
    let caught = std::panic::catch_unwind(|| typed::<Service>(&doc, "test"));
    assert!(caught.is_err(), "a misspelled field went through");
    let fine: Value = serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
        "spec": {"ports": [{"port": 80, "targetPort": 8080}]}});
    typed::<Service>(&fine, "test");
}

/// Every alert's `runbook_url` ends in an anchor that a heading of docs/runbook.md makes (GitHub's
/// rule: lower case, spaces to `-`, other punctuation dropped), and every finding kind the daemon
/// can report has a runbook heading.
#[test]
fn runbook_links_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let runbook = std::fs::read_to_string(root.join("docs/runbook.md")).unwrap();
    let headings: Vec<&str> = runbook
        .lines()
        .filter_map(|l| {
            l.trim_start_matches('#')
                .strip_prefix(' ')
                .filter(|_| l.starts_with('#'))
        })
        .collect();
    let anchors: BTreeSet<String> = headings
        .iter()
        .map(|h| {
            h.to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let objs = render("overlays/prometheus-operator");
    let rule = objs.iter().find(|o| o["kind"] == "PrometheusRule").unwrap();
    let mut alerts = 0;
    for r in rule["spec"]["groups"][0]["rules"].as_array().unwrap() {
        let url = r["annotations"]["runbook_url"].as_str().unwrap();
        let (page, anchor) = url.rsplit_once('#').unwrap();
        // The repository's docs on GitHub's pattern (blob/main/docs/<page>.md), never a
        // placeholder host.
        assert_eq!(
            page, "https://github.com/podcoroner/podcoroner/blob/main/docs/runbook.md",
            "{url}"
        );
        assert!(
            anchors.contains(anchor),
            "{url}: no heading makes #{anchor}"
        );
        assert_eq!(anchor, r["alert"].as_str().unwrap().to_lowercase());
        alerts += 1;
    }
    assert_eq!(alerts, 7);
    for kind in podcoroner_core::finding::FindingKind::ALL {
        let name = format!("{kind:?}");
        assert!(
            headings
                .iter()
                .any(|h| h.split(" / ").any(|part| part == name)),
            "docs/runbook.md has no heading for {name}"
        );
    }
}
