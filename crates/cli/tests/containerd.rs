//! `podcoroner diagnose` and `collect` end to end against a real containerd laid out as a
//! kubelet lays it out: a node with healthy pods beside one case of every finding kind.
//!
//! The CRI runtime is a private containerd (`podcoroner-test-support`); the API server, the one
//! boundary we cannot run here, is the JSON `kubectl get pods -A -o json` prints (`--pods`).
//! Run alone without containerd installed, these tests fail with the command that installs it
//! (`cargo xtask test`).
//!
//! `PODCORONER_WRITE_SAMPLE=DIR cargo test -p podcoroner --test containerd` also collects the
//! node into DIR: that is how `testdata/sample-node` was captured.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use podcoroner_test_support::{ContainerdLab, PodSpec};

mod common;
use common::{ok, pod, pod_list, podcoroner, strs, ts};
use serde_json::{Value, json};

const NODE: &str = "sample-node-1";

// API pod UIDs (dashed UUIDs, as the API server assigns them).
const WEB_UID: &str = "3f6d2a1c-5b7e-4c9d-8e2f-1a0b9c8d7e61";
const WORKER_UID: &str = "7a2e9c41-0d3b-4f6a-9b8c-2e1d0f3a4b52";
const PROXY_UID: &str = "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e53";
const REPORT_UID: &str = "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a544";
const CART_UID: &str = "5c4b3a29-1807-4f6e-9d5c-4b3a29180735";
const API_UID: &str = "2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8026";
const CACHE_UID: &str = "8f9e0d1c-2b3a-4495-8687-a9b8c7d6e517";
const LEGACY_UID: &str = "6e5d4c3b-2a19-4087-b6a5-f4e3d2c1b008";
const ORPHAN_DIR_UID: &str = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c69";
const EVICTED_UID: &str = "4d3c2b1a-0f9e-48d7-a6c5-b4a39281706a";
const ELSEWHERE_UID: &str = "1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f201b";
// Static pod config hashes (32 hex digits) and mirror pod API UIDs.
const ETCD_HASH: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const EXPORTER_HASH: &str = "b2c3d4e5f60718293a4b5c6d7e8f90a1";
const SCHED_HASH: &str = "c3d4e5f60718293a4b5c6d7e8f90a1b2";
const APISERVER_HASH: &str = "d4e5f60718293a4b5c6d7e8f90a1b2c3";
const APISERVER_OLD_HASH: &str = "e5f60718293a4b5c6d7e8f90a1b2c3d4";
const KCM_HASH: &str = "f60718293a4b5c6d7e8f90a1b2c3d4e5";

/// What the scenario created, for the assertions.
struct Node {
    lab: ContainerdLab,
    dir: tempfile::TempDir,
    cart_sandbox: String,
    api_old_sandbox: String,
    cache_sandboxes: [String; 2],
    exporter_sandbox: String,
    sched_sandbox: String,
    apiserver_sandbox: String,
    legacy_container: String,
    legacy_sandbox: String,
}

impl Node {
    fn manifests(&self) -> PathBuf {
        self.dir.path().join("etc/kubernetes/manifests")
    }
    fn kubelet_root(&self) -> PathBuf {
        self.dir.path().join("var/lib/kubelet")
    }
    fn pods_json(&self) -> PathBuf {
        self.dir.path().join("pods.json")
    }
    fn source_args(&self) -> Vec<String> {
        vec![
            "--runtime-endpoint".into(),
            self.lab.endpoint(),
            "--node-name".into(),
            NODE.into(),
            "--manifest-dir".into(),
            self.manifests().display().to_string(),
            "--kubelet-root-dir".into(),
            self.kubelet_root().display().to_string(),
            "--pods".into(),
            self.pods_json().display().to_string(),
        ]
    }
}

/// A pod with one running container, as the kubelet starts it. The container's attempt follows
/// the sandbox's, as after a restart (containerd reserves `<container>_<pod>_<ns>_<uid>_<attempt>`).
async fn running_pod(lab: &ContainerdLab, pod: &PodSpec, container: &str) -> String {
    let sandbox = ok(lab.run_pod(pod).await);
    ok(lab
        .create_container(&sandbox, pod, container, pod.attempt, true)
        .await);
    sandbox
}

/// A sandbox the kubelet stopped and whose containers its GC removed: NOTREADY, empty.
async fn dead_sandbox(lab: &ContainerdLab, pod: &PodSpec) -> String {
    let sandbox = ok(lab.run_pod(pod).await);
    let c = ok(lab.create_container(&sandbox, pod, "app", 0, true).await);
    ok(lab.stop_container(&c).await);
    ok(lab.remove_container(&c).await);
    ok(lab.stop_sandbox(&sandbox).await);
    sandbox
}

async fn build_node() -> Node {
    let mut lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());

    // --- Healthy pods: none of these may appear in a finding. ---
    running_pod(
        &lab,
        &PodSpec::api("shop", "web-5d8f7c9b6-x2k8p", WEB_UID).with_label("app", "web"),
        "web",
    )
    .await;
    // A restarted pod: its first sandbox still holds an exited container (active, kept).
    let worker = PodSpec::api("shop", "worker-0", WORKER_UID).with_label("app", "worker");
    let w0 = ok(lab.run_pod(&worker).await);
    let wc = ok(lab.create_container(&w0, &worker, "worker", 0, true).await);
    ok(lab.stop_container(&wc).await);
    ok(lab.stop_sandbox(&w0).await);
    running_pod(&lab, &worker.clone().with_attempt(1), "worker").await;
    running_pod(
        &lab,
        &PodSpec::api("kube-system", "kube-proxy-7xq2m", PROXY_UID).with_host_network(),
        "kube-proxy",
    )
    .await;
    // A static pod with its manifest and its mirror pod.
    running_pod(
        &lab,
        &PodSpec::static_pod("kube-system", &format!("etcd-{NODE}"), ETCD_HASH).with_host_network(),
        "etcd",
    )
    .await;
    // A finished Job pod the API still has: its newest NOTREADY sandbox is kept on purpose.
    dead_sandbox(
        &lab,
        &PodSpec::api("batch", "report-28931640-q7x4z", REPORT_UID),
    )
    .await;

    // --- One case of every finding kind. ---
    // LeakedSandbox: the pod is gone from the API.
    let cart_sandbox = dead_sandbox(
        &lab,
        &PodSpec::api("shop", "cart-6b7c8d9e5-m4n5p", CART_UID),
    )
    .await;
    // LeakedSandbox: an older sandbox of a live pod whose newest sandbox is READY.
    let api0 = PodSpec::api("shop", "api-0", API_UID);
    let api_old_sandbox = dead_sandbox(&lab, &api0).await;
    running_pod(&lab, &api0.clone().with_attempt(1), "api").await;
    // DuplicateReadySandboxes.
    let cache = PodSpec::api("shop", "cache-0", CACHE_UID);
    let cache0 = running_pod(&lab, &cache, "redis").await;
    let cache1 = running_pod(&lab, &cache.clone().with_attempt(1), "redis").await;
    // StaticPodNotRemoved: a static pod whose manifest was moved into a sub-directory.
    let exporter_sandbox = running_pod(
        &lab,
        &PodSpec::static_pod(
            "kube-system",
            &format!("node-exporter-{NODE}"),
            EXPORTER_HASH,
        )
        .with_host_network(),
        "node-exporter",
    )
    .await;
    // MissingMirrorPod and StaleMirrorPod.
    let sched_sandbox = running_pod(
        &lab,
        &PodSpec::static_pod("kube-system", &format!("kube-scheduler-{NODE}"), SCHED_HASH)
            .with_host_network(),
        "kube-scheduler",
    )
    .await;
    let apiserver_sandbox = running_pod(
        &lab,
        &PodSpec::static_pod(
            "kube-system",
            &format!("kube-apiserver-{NODE}"),
            APISERVER_HASH,
        )
        .with_host_network(),
        "kube-apiserver",
    )
    .await;
    // OrphanedContainer: containerd loses a sandbox's metadata (as after a crash mid
    // RemovePodSandbox) while the pod's container survives.
    let legacy = PodSpec::api("shop", "legacy-batch-0", LEGACY_UID);
    let legacy_sandbox = ok(lab.run_pod(&legacy).await);
    let legacy_container = ok(lab
        .create_container(&legacy_sandbox, &legacy, "batch", 0, true)
        .await);
    ok(lab.ctr(&["tasks", "kill", "-s", "SIGKILL", &legacy_sandbox]));
    // containerd's CRI event monitor deletes the exited task by itself.
    for _ in 0..200 {
        if !ok(lab.ctr(&["tasks", "ls"]))
            .lines()
            .any(|l| l.starts_with(&legacy_sandbox) && l.contains("RUNNING"))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = lab.ctr(&["tasks", "delete", &legacy_sandbox]);
    ok(lab.ctr(&["containers", "delete", &legacy_sandbox]));
    ok(lab.restart());

    write_manifests(&dir.path().join("etc/kubernetes/manifests"));
    write_pod_dirs(&dir.path().join("var/lib/kubelet/pods"));
    write_pods_json(&dir.path().join("pods.json"));

    Node {
        lab,
        dir,
        cart_sandbox,
        api_old_sandbox,
        cache_sandboxes: [cache0, cache1],
        exporter_sandbox,
        sched_sandbox,
        apiserver_sandbox,
        legacy_container,
        legacy_sandbox,
    }
}

fn static_manifest(name: &str, image: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: kube-system\n  labels:\n    component: {name}\n    tier: control-plane\nspec:\n  hostNetwork: true\n  priorityClassName: system-node-critical\n  containers:\n  - name: {name}\n    image: {image}\n    command: [\"{name}\"]\n"
    )
}

fn write_manifests(dir: &Path) {
    ok(std::fs::create_dir_all(dir.join("backup")));
    ok(std::fs::write(
        dir.join("etcd.yaml"),
        static_manifest("etcd", "registry.k8s.io/etcd:3.5.15-0"),
    ));
    ok(std::fs::write(
        dir.join("kube-scheduler.yaml"),
        static_manifest("kube-scheduler", "registry.k8s.io/kube-scheduler:v1.31.0"),
    ));
    ok(std::fs::write(
        dir.join("kube-apiserver.yaml"),
        static_manifest("kube-apiserver", "registry.k8s.io/kube-apiserver:v1.31.0"),
    ));
    // Moved aside: the kubelet does not recurse, so node-exporter is removed (but keeps running).
    ok(std::fs::write(
        dir.join("backup/node-exporter.yaml"),
        static_manifest("node-exporter", "quay.io/prometheus/node-exporter:v1.8.2"),
    ));
    // An editor's swap file is hidden and ignored; a half-written manifest is not.
    ok(std::fs::write(
        dir.join(".kube-apiserver.yaml.swp"),
        "b0VIM 8.2",
    ));
    ok(std::fs::write(
        dir.join("kube-vip.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-vip\n  namespace: kube-system\nspec:\n  containers:\n  - name: kube-vip\n    image: ghcr.io/kube-vip/kube-vip:v0.8.0\n    args: [manager\n",
    ));
}

fn write_pod_dirs(pods: &Path) {
    let dirs: &[(&str, &[&str])] = &[
        (WEB_UID, &["kubernetes.io~projected/kube-api-access-9zq4d"]),
        (
            WORKER_UID,
            &[
                "kubernetes.io~projected/kube-api-access-h2m7x",
                "kubernetes.io~empty-dir/scratch",
            ],
        ),
        (
            PROXY_UID,
            &[
                "kubernetes.io~configmap/kube-proxy",
                "kubernetes.io~projected/kube-api-access-p8v6w",
            ],
        ),
        (ETCD_HASH, &[]),
        (
            REPORT_UID,
            &["kubernetes.io~projected/kube-api-access-r4t5y"],
        ),
        (API_UID, &["kubernetes.io~projected/kube-api-access-k3j9l"]),
        (CACHE_UID, &["kubernetes.io~empty-dir/data"]),
        (EXPORTER_HASH, &[]),
        (SCHED_HASH, &[]),
        (APISERVER_HASH, &[]),
        // Nobody's: a configmap volume left mounted after a force delete.
        (
            ORPHAN_DIR_UID,
            &[
                "kubernetes.io~configmap/app-config",
                "kubernetes.io~secret/db-credentials",
            ],
        ),
    ];
    for (uid, volumes) in dirs {
        let base = pods.join(uid);
        ok(std::fs::create_dir_all(base.join("containers")));
        ok(std::fs::create_dir_all(base.join("plugins")));
        ok(std::fs::write(
            base.join("etc-hosts"),
            "127.0.0.1\tlocalhost\n",
        ));
        for v in *volumes {
            ok(std::fs::create_dir_all(base.join("volumes").join(v)));
        }
    }
}

fn mirror(name: &str, api_uid: &str, hash: &str) -> Value {
    pod(
        "kube-system",
        &format!("{name}-{NODE}"),
        api_uid,
        NODE,
        "Running",
        json!({"kubernetes.io/config.hash": hash, "kubernetes.io/config.mirror": hash,
               "kubernetes.io/config.seen": "2026-11-28T06:00:00.000000000Z", "kubernetes.io/config.source": "file"}),
        json!([{"apiVersion": "v1", "kind": "Node", "name": NODE, "uid": "0d1c2b3a-4958-4768-a7b6-c5d4e3f2a100", "controller": true}]),
    )
}

fn write_pods_json(path: &Path) {
    let rs = |name: &str| json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name, "uid": "aa11bb22-cc33-4d44-8e55-ff6677889900", "controller": true, "blockOwnerDeletion": true}]);
    let sts = |name: &str| json!([{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "uid": "bb22cc33-dd44-4e55-9f66-007788990011", "controller": true, "blockOwnerDeletion": true}]);
    let mut evicted = pod(
        "shop",
        "web-5d8f7c9b6-evict",
        EVICTED_UID,
        NODE,
        "Failed",
        json!({}),
        rs("web-5d8f7c9b6"),
    );
    let two_days_ago = ts(Timestamp::now() - SignedDuration::from_hours(48));
    evicted["status"]["reason"] = json!("Evicted");
    evicted["status"]["message"] = json!("The node was low on resource: ephemeral-storage.");
    evicted["status"]["conditions"][0]["lastTransitionTime"] = json!(two_days_ago);
    let items = vec![
        pod(
            "shop",
            "web-5d8f7c9b6-x2k8p",
            WEB_UID,
            NODE,
            "Running",
            json!({}),
            rs("web-5d8f7c9b6"),
        ),
        pod(
            "shop",
            "worker-0",
            WORKER_UID,
            NODE,
            "Running",
            json!({}),
            sts("worker"),
        ),
        pod(
            "kube-system",
            "kube-proxy-7xq2m",
            PROXY_UID,
            NODE,
            "Running",
            json!({}),
            json!([]),
        ),
        pod(
            "batch",
            "report-28931640-q7x4z",
            REPORT_UID,
            NODE,
            "Succeeded",
            json!({}),
            json!([]),
        ),
        pod(
            "shop",
            "api-0",
            API_UID,
            NODE,
            "Running",
            json!({}),
            sts("api"),
        ),
        pod(
            "shop",
            "cache-0",
            CACHE_UID,
            NODE,
            "Running",
            json!({}),
            sts("cache"),
        ),
        mirror("etcd", "11111111-2222-4333-8444-555555555501", ETCD_HASH),
        mirror(
            "node-exporter",
            "11111111-2222-4333-8444-555555555502",
            EXPORTER_HASH,
        ),
        mirror(
            "kube-apiserver",
            "11111111-2222-4333-8444-555555555503",
            APISERVER_OLD_HASH,
        ),
        mirror(
            "kube-controller-manager",
            "11111111-2222-4333-8444-555555555504",
            KCM_HASH,
        ),
        evicted,
        pod(
            "shop",
            "web-5d8f7c9b6-zz9yy",
            ELSEWHERE_UID,
            "sample-node-2",
            "Running",
            json!({}),
            rs("web-5d8f7c9b6"),
        ),
    ];
    ok(std::fs::write(
        path,
        ok(serde_json::to_vec_pretty(&pod_list(items))),
    ));
}

fn diagnose_json(args: Vec<String>) -> Value {
    let mut all = vec![
        "diagnose".to_string(),
        "-o".into(),
        "json".into(),
        "--min-age".into(),
        "0s".into(),
    ];
    all.extend(args);
    let (code, stdout, stderr) = podcoroner(&all);
    assert_eq!(
        code, 1,
        "diagnose should exit 1 on warnings\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    ok(serde_json::from_str(&stdout))
}

/// `(kind, pod namespace/name, sandbox id, container id)` of every finding.
fn keys(report: &Value) -> BTreeSet<(String, String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let pod = match &f["pod"] {
                Value::Null => String::new(),
                p if p["name"] == "" => format!("uid:{}", p["uid"].as_str().unwrap()),
                p => format!(
                    "{}/{}",
                    p["namespace"].as_str().unwrap(),
                    p["name"].as_str().unwrap()
                ),
            };
            let s = |v: &Value| v.as_str().unwrap_or("").to_string();
            (
                s(&f["kind"]),
                pod,
                s(&f["sandbox_id"]),
                s(&f["container_id"]),
            )
        })
        .collect()
}

fn expected(node: &Node) -> BTreeSet<(String, String, String, String)> {
    let k = |kind: &str, pod: &str, sandbox: &str, container: &str| {
        (
            kind.to_string(),
            pod.to_string(),
            sandbox.to_string(),
            container.to_string(),
        )
    };
    let ks = "kube-system";
    BTreeSet::from([
        k(
            "LeakedSandbox",
            "shop/cart-6b7c8d9e5-m4n5p",
            &node.cart_sandbox,
            "",
        ),
        k("LeakedSandbox", "shop/api-0", &node.api_old_sandbox, ""),
        k(
            "DuplicateReadySandboxes",
            "shop/cache-0",
            &node.cache_sandboxes[0],
            "",
        ),
        k(
            "OrphanedContainer",
            "shop/legacy-batch-0",
            &node.legacy_sandbox,
            &node.legacy_container,
        ),
        k(
            "StaticPodNotRemoved",
            &format!("{ks}/node-exporter-{NODE}"),
            &node.exporter_sandbox,
            "",
        ),
        k(
            "MissingMirrorPod",
            &format!("{ks}/kube-scheduler-{NODE}"),
            &node.sched_sandbox,
            "",
        ),
        k(
            "StaleMirrorPod",
            &format!("{ks}/kube-apiserver-{NODE}"),
            &node.apiserver_sandbox,
            "",
        ),
        k(
            "OrphanedMirrorPod",
            &format!("{ks}/kube-controller-manager-{NODE}"),
            "",
            "",
        ),
        k(
            "OrphanedPodDirectory",
            &format!("uid:{ORPHAN_DIR_UID}"),
            "",
            "",
        ),
        k("InvalidStaticPodManifest", "", "", ""),
        k("FailedPodNotCleaned", "shop/web-5d8f7c9b6-evict", "", ""),
    ])
}

#[tokio::test]
async fn diagnoses_every_kind_and_nothing_on_healthy_pods() {
    let node = build_node().await;
    let report = diagnose_json(node.source_args());

    assert_eq!(report["schema"], "podcoroner.diagnosis/v1");
    assert_eq!(report["node"], NODE);
    let cri = &report["sources"]["cri"];
    assert_eq!(cri["status"], "ok");
    assert_eq!(cri["runtime_name"], "containerd");
    assert_eq!(cri["cri_api_version"], "v1");
    assert_eq!(cri["endpoint"], node.lab.endpoint());
    // 15 sandboxes were created; one lost its metadata.
    assert_eq!(cri["counts"]["sandboxes"], 14, "{cri}");
    assert_eq!(cri["counts"]["containers"], 12, "{cri}");
    assert_eq!(report["sources"]["apiserver"]["counts"]["pods"], 12);
    assert_eq!(report["sources"]["manifests"]["counts"]["files"], 4);
    assert_eq!(report["sources"]["pod_dirs"]["counts"]["directories"], 11);
    assert_eq!(report["skipped_rules"], json!([]));

    assert_eq!(keys(&report), expected(&node));
    assert_eq!(
        report["summary"],
        json!({"critical": 2, "warning": 8, "info": 1})
    );

    // No finding names a healthy pod.
    let text = report["findings"].to_string();
    for healthy in [
        WEB_UID,
        WORKER_UID,
        PROXY_UID,
        REPORT_UID,
        ETCD_HASH,
        ELSEWHERE_UID,
    ] {
        assert!(
            !text.contains(healthy),
            "a finding names healthy pod {healthy}"
        );
    }
    let invalid = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "InvalidStaticPodManifest")
        .unwrap();
    assert!(
        invalid["summary"]
            .as_str()
            .unwrap()
            .contains("kube-vip.yaml"),
        "{invalid}"
    );
    let gone = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["sandbox_id"] == node.cart_sandbox.as_str())
        .unwrap();
    assert_eq!(gone["gc_eligible"], true);
    assert_eq!(gone["evidence"][0]["source"], "cri");
    assert_eq!(gone["evidence"][1]["source"], "apiserver");

    // The same node in the table format, and --fail-on.
    let mut args = vec![
        "diagnose".to_string(),
        "--min-age".into(),
        "0s".into(),
        "--fail-on".into(),
        "critical".into(),
    ];
    args.extend(node.source_args());
    let (code, table, _) = podcoroner(&args);
    assert_eq!(code, 1);
    assert!(
        table.contains("CRITICAL (2)")
            && table.contains("WARNING (8)")
            && table.contains("INFO (1)"),
        "{table}"
    );
    assert!(
        table.contains(&format!(
            "crictl stopp {id} && crictl rmp {id}",
            id = node.cart_sandbox
        )),
        "{table}"
    );
    let mut args = vec!["diagnose".to_string(), "--fail-on".into(), "none".into()];
    args.extend(node.source_args());
    assert_eq!(podcoroner(&args).0, 0);

    // With the default --min-age (10m) nothing created seconds ago is judged, but the files are.
    let mut args = vec!["diagnose".to_string(), "-o".into(), "json".into()];
    args.extend(node.source_args());
    let (code, stdout, _) = podcoroner(&args);
    assert_eq!(code, 1);
    let young: Value = ok(serde_json::from_str(&stdout));
    let kinds: BTreeSet<String> = young["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from(
            [
                "FailedPodNotCleaned",
                "InvalidStaticPodManifest",
                "OrphanedMirrorPod"
            ]
            .map(String::from)
        )
    );
}

#[tokio::test]
async fn collect_then_diagnose_snapshot_gives_the_same_findings() {
    let node = build_node().await;
    let live = diagnose_json(node.source_args());

    let out = node.dir.path().join("snapshot");
    let mut args = vec![
        "collect".to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(node.source_args());
    let (code, _, stderr) = podcoroner(&args);
    assert_eq!(code, 0, "{stderr}");
    for file in [
        "meta.json",
        "cri/version.json",
        "cri/pods.json",
        "cri/containers.json",
        "api/pods.json",
        "manifests/etcd.yaml",
    ] {
        assert!(out.join(file).is_file(), "{file} missing from the snapshot");
    }
    // The malformed manifest cannot be redacted: it is left out with the kubelet's reason, and
    // the snapshot reports it all the same.
    let meta: serde_json::Value = ok(serde_json::from_slice(&ok(std::fs::read(
        out.join("meta.json"),
    ))));
    let kube_vip = node.manifests().join("kube-vip.yaml").display().to_string();
    assert!(
        meta["left_out"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["path"] == kube_vip.as_str() && l["unknown"] == false),
        "{meta:#}"
    );
    assert!(
        out.join(format!(
            "kubelet/pods/{ORPHAN_DIR_UID}/volumes/kubernetes.io~secret/db-credentials"
        ))
        .is_dir()
    );

    let snap = diagnose_json(vec!["--snapshot".into(), out.display().to_string()]);
    assert_eq!(keys(&snap), keys(&live));
    assert_eq!(keys(&snap), expected(&node));
    // Evidence names the node's paths, not the snapshot's.
    let invalid = snap["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "InvalidStaticPodManifest")
        .unwrap();
    let manifest = node.manifests().join("kube-vip.yaml").display().to_string();
    assert!(
        invalid["evidence"][0]["detail"]
            .as_str()
            .unwrap()
            .starts_with(&manifest),
        "{invalid}"
    );
    assert_eq!(snap["sources"]["cri"]["runtime_name"], "containerd");
    assert_eq!(snap["sources"]["cri"]["endpoint"], node.lab.endpoint());

    if let Ok(sample) = std::env::var("PODCORONER_WRITE_SAMPLE") {
        let sample = PathBuf::from(sample);
        let _ = std::fs::remove_dir_all(&sample);
        let status = ok(Command::new("cp").arg("-r").arg(&out).arg(&sample).status());
        assert!(status.success());
    }
}

/// Bad input: a clear error naming what is wrong, exit 2, never a panic.
#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    let dir = ok(tempfile::tempdir());
    let d = dir.path();
    let manifests = d.join("manifests");
    ok(std::fs::create_dir_all(&manifests));
    let good_pods = d.join("pods.json");
    ok(std::fs::write(
        &good_pods,
        r#"{"apiVersion": "v1", "kind": "List", "items": []}"#,
    ));
    let bad_pods = d.join("bad-pods.json");
    ok(std::fs::write(
        &bad_pods,
        "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n  {\"metadata\": {\"name\": 7}}\n]}",
    ));
    let not_a_dir = d.join("file-not-dir");
    ok(std::fs::write(&not_a_dir, "x"));
    // A unix socket served by something that is not a CRI runtime (it hangs up at once).
    let not_cri = d.join("not-cri.sock");
    let listener = ok(std::os::unix::net::UnixListener::bind(&not_cri));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            drop(stream);
        }
    });

    let base = |endpoint: &str, manifest_dir: &Path, pods: &Path| -> Vec<String> {
        vec![
            "diagnose".into(),
            "--runtime-endpoint".into(),
            endpoint.into(),
            "--timeout".into(),
            "2s".into(),
            "--node-name".into(),
            NODE.into(),
            "--manifest-dir".into(),
            manifest_dir.display().to_string(),
            "--kubelet-root-dir".into(),
            d.join("kubelet").display().to_string(),
            "--pods".into(),
            pods.display().to_string(),
        ]
    };
    let missing_socket = d.join("missing.sock").display().to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            base(&missing_socket, &manifests, &good_pods),
            format!(
                "error: calling Version on unix://{missing_socket} failed: no such socket {missing_socket}"
            ),
        ),
        (
            base(
                &format!("unix://{}", not_cri.display()),
                &manifests,
                &good_pods,
            ),
            format!("unix://{}", not_cri.display()),
        ),
        (
            base(&missing_socket, &not_a_dir, &good_pods),
            format!(
                "error: cannot read static pod manifest directory {}",
                not_a_dir.display()
            ),
        ),
        (
            base(&missing_socket, &manifests, &bad_pods),
            format!(
                "error: malformed pods file {}: items[0]: invalid type: integer `7`",
                bad_pods.display()
            ),
        ),
        (
            base(&missing_socket, &manifests, &d.join("absent.json")),
            format!(
                "error: cannot read pods file {}",
                d.join("absent.json").display()
            ),
        ),
        (
            vec![
                "diagnose".into(),
                "--snapshot".into(),
                d.display().to_string(),
            ],
            format!("error: {} is not a podcoroner snapshot", d.display()),
        ),
    ];
    for (args, want) in cases {
        let (code, stdout, stderr) = podcoroner(&args);
        assert_eq!(code, 2, "{args:?}\nstderr: {stderr}");
        assert!(
            stderr.contains(&want),
            "{args:?}\nwant: {want}\nstderr: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
    }
    let (code, _, stderr) = podcoroner(
        &base(&missing_socket, &manifests, &good_pods)[..3]
            .iter()
            .cloned()
            .chain(["--min-age".to_string(), "soon".to_string()])
            .collect::<Vec<_>>(),
    );
    assert_eq!(code, 64, "{stderr}");
}

/// The kubelet's log says its GC keeps failing to stop the cart pod's leaked sandbox: the
/// `LeakedSandbox` finding says so, `SandboxStopFailing` classifies the cause, and `explain`
/// merges the log lines with the CRI and API state into one timeline.
#[tokio::test]
async fn logs_explain_a_leaked_sandbox() {
    let node = build_node().await;
    let id = &node.cart_sandbox;
    let log = node.dir.path().join("kubelet.log");
    // klog has no year: times a few minutes back from now, so the test holds on any day.
    let klog_time = |mins: i64| {
        (jiff::Timestamp::now() - jiff::SignedDuration::from_mins(mins))
            .strftime("%m%d %H:%M:%S%.6f")
            .to_string()
    };
    let lines: Vec<String> = (0..3)
        .map(|m| {
            format!(
                "E{}    4321 kuberuntime_gc.go:176] \"Failed to stop sandbox before removing\" \
                 err=\"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"{id}\\\": plugin \
                 type=\\\"calico\\\" failed (delete): error getting ClusterInformation: connection is unauthorized: \
                 Unauthorized\" sandboxID=\"{id}\"",
                klog_time(30 - 10 * m)
            )
        })
        .chain([format!(
            "I{}    4321 kubelet.go:2449] \"SyncLoop DELETE\" source=\"api\" pods=[\"shop/cart-6b7c8d9e5-m4n5p\"]",
            klog_time(40)
        )])
        .collect();
    ok(std::fs::write(&log, lines.join("\n") + "\n"));

    let mut args = vec!["--kubelet-log".to_string(), log.display().to_string()];
    args.extend(node.source_args());
    let report = diagnose_json(args.clone());
    let findings = report["findings"].as_array().unwrap();
    let leaked = findings
        .iter()
        .find(|f| f["kind"] == "LeakedSandbox" && f["sandbox_id"] == id.as_str())
        .unwrap();
    let said = strs(&leaked["evidence"], "detail");
    assert!(
        said.iter().any(|d| d.contains(
            "trying and failing: 3 failure records, cause CNI teardown: the CNI datastore refused"
        )),
        "{said:#?}"
    );
    let stop = findings
        .iter()
        .find(|f| f["kind"] == "SandboxStopFailing")
        .unwrap();
    assert_eq!(stop["sandbox_id"], id.as_str());
    assert_eq!(stop["pod"]["name"], "cart-6b7c8d9e5-m4n5p");
    assert_eq!(report["sources"]["kubelet_log"]["counts"]["events"], 4);

    let mut explain = vec![
        "explain".to_string(),
        "shop/cart-6b7c8d9e5-m4n5p".into(),
        "-o".into(),
        "json".into(),
    ];
    explain.extend(args);
    let (code, out, err) = podcoroner(&explain);
    assert_eq!(code, 0, "{err}");
    let t: Value = ok(serde_json::from_str(&out));
    assert_eq!(t["pods"][0]["uid"], CART_UID);
    let sources = strs(&t["entries"], "source");
    assert_eq!(
        sources,
        vec![
            "kubelet-log",
            "kubelet-log",
            "kubelet-log",
            "kubelet-log",
            "cri"
        ],
        "{t:#}"
    );
    assert_eq!(t["entries"][0]["what"], "SyncLoop(Delete)");
    let (code, _, err) = podcoroner(&[
        "explain".to_string(),
        "nobody/nothing".into(),
        "--kubelet-log".into(),
        log.display().to_string(),
        "--offline".into(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("nothing in the logs given names \"nobody/nothing\""),
        "{err}"
    );
}
