//! Sources that should be there and are not, against a real containerd: a static pod manifest
//! the agent may not read (owned by another user, mode 600, read without `CAP_DAC_OVERRIDE` as
//! the shipped DaemonSet runs) is an unknown, not a removed static pod; the DaemonSet's manifest
//! and pod directory mounts missing make their sources degraded in `/readyz`,
//! `podcoroner_source_up` and the `diagnose` SOURCES block, and the rules that need them skip,
//! saying why.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use podcoroner_test_support::{ContainerdLab, PodSpec};
use serde_json::{Value, json};

mod common;
use common::{Daemon, free_port, get, ok, pod, pod_list, podcoroner, wait_for};

const NODE: &str = "sources-node-1";
const ETCD_HASH: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90";

/// A running etcd static pod (sandbox and container) in `lab`, and its mirror pod in
/// `dir/pods.json`.
async fn running_etcd(lab: &ContainerdLab, dir: &Path) {
    let etcd = PodSpec::static_pod("kube-system", &format!("etcd-{NODE}"), ETCD_HASH);
    let sandbox = ok(lab.run_pod(&etcd).await);
    ok(lab.create_container(&sandbox, &etcd, "etcd", 0, true).await);
    let mirror = pod(
        "kube-system",
        &format!("etcd-{NODE}"),
        "11111111-2222-4333-8444-555555555501",
        NODE,
        "Running",
        json!({"kubernetes.io/config.hash": ETCD_HASH, "kubernetes.io/config.mirror": ETCD_HASH,
               "kubernetes.io/config.source": "file"}),
        json!([]),
    );
    ok(std::fs::write(
        dir.join("pods.json"),
        ok(serde_json::to_vec(&pod_list(vec![mirror]))),
    ));
}

/// `podcoroner diagnose -o json` on `dir` (manifests in `dir/manifests`, kubelet root
/// `dir/kubelet`), as root without `CAP_DAC_OVERRIDE` and `CAP_DAC_READ_SEARCH` (setpriv): the
/// exit code and the report.
fn diagnose_without_dac_override(lab: &ContainerdLab, dir: &Path) -> (i32, Value, String) {
    let out = ok(Command::new("setpriv")
        .args(["--bounding-set", "-dac_override,-dac_read_search", "--"])
        .arg(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["diagnose", "--runtime-endpoint", &lab.endpoint()])
        .args(["--node-name", NODE, "--min-age", "0s", "-o", "json"])
        .arg("--manifest-dir")
        .arg(dir.join("manifests"))
        .arg("--kubelet-root-dir")
        .arg(dir.join("kubelet"))
        .arg("--pods")
        .arg(dir.join("pods.json"))
        .output());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("diagnose printed no JSON ({e}); stderr: {stderr}"));
    (out.status.code().unwrap_or(-1), report, stderr)
}

fn kinds(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

fn skip_reason(report: &Value, kind: &str) -> String {
    report["skipped_rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == kind)
        .unwrap_or_else(|| panic!("{kind} not skipped: {report:#}"))["reason"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_manifest_the_agent_cannot_read_is_unknown_not_a_removed_static_pod() {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    ok(std::fs::create_dir_all(dir.path().join("kubelet/pods")));
    let manifests = dir.path().join("manifests");
    ok(std::fs::create_dir_all(&manifests));
    running_etcd(&lab, dir.path()).await;
    let etcd_yaml = manifests.join("etcd.yaml");
    ok(std::fs::write(
        &etcd_yaml,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd\n    image: registry.k8s.io/etcd:3.5.15-0\n",
    ));
    // Readable: etcd is known, nothing is wrong.
    let (code, report, stderr) = diagnose_without_dac_override(&lab, dir.path());
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    assert_eq!(report["sources"]["manifests"]["status"], "ok");

    // Another owner, mode 600: root without CAP_DAC_OVERRIDE cannot read it; the kubelet can.
    ok(std::os::unix::fs::chown(&etcd_yaml, Some(1000), Some(1000)));
    ok(std::fs::set_permissions(
        &etcd_yaml,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    ));
    let (code, report, stderr) = diagnose_without_dac_override(&lab, dir.path());
    assert_eq!(kinds(&report), Vec::<String>::new(), "{report:#}\n{stderr}");
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    let manifests_source = &report["sources"]["manifests"];
    assert_eq!(manifests_source["status"], "degraded", "{report:#}");
    let detail = manifests_source["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!(
            "{}: cannot read file: Permission denied",
            etcd_yaml.display()
        )),
        "{detail}"
    );
    assert_eq!(manifests_source["counts"]["unreadable"], 1);
    for kind in ["StaticPodNotRemoved", "OrphanedMirrorPod"] {
        let reason = skip_reason(&report, kind);
        assert!(
            reason.starts_with("podcoroner cannot read 1 file(s) of the manifest directory"),
            "{kind}: {reason}"
        );
    }
}

#[tokio::test]
async fn the_daemonsets_mounts_missing_degrade_their_sources() {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    // Neither `manifests` nor `kubelet/pods` exists: the hostPath mounts are missing.
    let web = PodSpec::api("shop", "web-0", "0d1e2f30-4152-4637-8899-aabbccddeeff");
    let sandbox = ok(lab.run_pod(&web).await);
    ok(lab.create_container(&sandbox, &web, "web", 0, true).await);
    ok(std::fs::write(
        dir.path().join("pods.json"),
        ok(serde_json::to_vec(&pod_list(vec![pod(
            "shop",
            "web-0",
            "0d1e2f30-4152-4637-8899-aabbccddeeff",
            NODE,
            "Running",
            json!({}),
            json!([]),
        )]))),
    ));
    let manifests = dir.path().join("manifests");
    let pods_dir = dir.path().join("kubelet/pods");

    let (code, report, stderr) = diagnose_without_dac_override(&lab, dir.path());
    assert_eq!(code, 0, "{report:#}\n{stderr}");
    assert_eq!(
        report["sources"]["manifests"]["status"], "degraded",
        "{report:#}"
    );
    assert!(
        report["sources"]["manifests"]["detail"]
            .as_str()
            .unwrap()
            .starts_with("directory does not exist: a missing mount"),
        "{report:#}"
    );
    assert_eq!(
        report["sources"]["pod_dirs"]["status"], "degraded",
        "{report:#}"
    );
    assert!(
        report["sources"]["pod_dirs"]["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!(
                "{} does not exist: a missing mount",
                pods_dir.display()
            )),
        "{report:#}"
    );
    let reason = skip_reason(&report, "StaticPodNotRemoved");
    assert!(
        reason.starts_with(&format!(
            "the manifest directory {} does not exist: a missing mount",
            manifests.display()
        )),
        "{reason}"
    );
    assert_eq!(
        skip_reason(&report, "OrphanedPodDirectory"),
        "the kubelet pod directory view is unavailable"
    );
    // The table says it too.
    let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["diagnose", "--runtime-endpoint", &lab.endpoint()])
        .args(["--node-name", NODE, "--min-age", "0s"])
        .arg("--manifest-dir")
        .arg(&manifests)
        .arg("--kubelet-root-dir")
        .arg(dir.path().join("kubelet"))
        .arg("--pods")
        .arg(dir.path().join("pods.json"))
        .output());
    let table = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        table
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} line: {table}"))
            .to_string()
    };
    assert!(line("manifests").contains("degraded"), "{table}");
    assert!(line("pod_dirs").contains("degraded"), "{table}");

    // The daemon: /readyz 503 naming both, podcoroner_source_up 0 for both.
    let port = free_port();
    let config = dir.path().join("config.yaml");
    ok(std::fs::write(&config, "manifest_rescan_interval: 1s\n"));
    let daemon = Daemon::new(ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["daemon", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--config")
        .arg(&config)
        .args(["--runtime-endpoint", &lab.endpoint(), "--node-name", NODE])
        .arg("--manifest-dir")
        .arg(&manifests)
        .arg("--kubelet-root-dir")
        .arg(dir.path().join("kubelet"))
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .arg("--pods")
        .arg(dir.path().join("pods.json"))
        .args([
            "--min-age",
            "0s",
            "--cri-poll-interval",
            "1s",
            "--log-level",
            "error",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()));
    let readyz: Value = wait_for(20, "/readyz naming both sources", || {
        let (code, body) = get(port, "/readyz");
        let r: Value = serde_json::from_str(&body).ok()?;
        (code == 503
            && r["sources"]["cri"]["healthy"] == true
            && r["sources"]["pod_dirs"].is_object())
        .then_some(r)
    });
    for (source, path) in [("manifests", &manifests), ("pod_dirs", &pods_dir)] {
        let s = &readyz["sources"][source];
        assert_eq!(s["healthy"], false, "{readyz:#}");
        let error = s["last_error"].as_str().unwrap();
        assert!(
            error.starts_with(&path.display().to_string())
                && error.contains("does not exist: a missing mount"),
            "{source}: {error}"
        );
    }
    let metrics = get(port, "/metrics").1;
    for source in ["manifests", "pod_dirs"] {
        assert!(
            metrics.contains(&format!("podcoroner_source_up{{source=\"{source}\"}} 0")),
            "{metrics}"
        );
    }
    assert!(
        metrics.contains("podcoroner_source_up{source=\"cri\"} 1"),
        "{metrics}"
    );
    // Once the mounts are there, both are healthy.
    ok(std::fs::create_dir_all(&manifests));
    ok(std::fs::create_dir_all(&pods_dir));
    wait_for(20, "/readyz 200 once the directories exist", || {
        (get(port, "/readyz").0 == 200).then_some(())
    });
    daemon.terminate();
}

#[test]
fn a_broken_old_rotation_degrades_the_log_source_in_sources() {
    let dir = ok(tempfile::tempdir());
    let log = dir.path().join("kubelet.log");
    ok(std::fs::write(
        &log,
        "E0829 19:33:49.707784    2373 kuberuntime_gc.go:142] Failed to remove sandbox \"d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718\": rpc error: code = 2 desc = device or resource busy\n",
    ));
    ok(std::fs::write(
        dir.path().join("kubelet.log.2.gz"),
        "not gzip\n",
    ));
    // A crash's NUL hole: one line of 100 KB, cut and counted.
    ok(std::fs::write(
        dir.path().join("kubelet.log.3"),
        vec![0u8; 100_000],
    ));
    let fifo = ok(Command::new("mkfifo")
        .arg(dir.path().join("kubelet.log.1"))
        .status());
    assert!(fifo.success());
    let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["diagnose", "--offline", "--node-name", NODE, "-o", "json"])
        .arg("--kubelet-log")
        .arg(&log)
        .output());
    let report: Value = ok(serde_json::from_slice(&out.stdout));
    let s = &report["sources"]["kubelet_log"];
    assert_eq!(s["status"], "degraded", "{report:#}");
    assert_eq!(s["counts"]["skipped_files"], 2, "{report:#}");
    let detail = s["detail"].as_str().unwrap();
    assert!(
        detail.contains("kubelet.log.2.gz: cannot read: ")
            && detail.contains("kubelet.log.1: a named pipe (FIFO), not a regular file"),
        "{detail}"
    );
    assert_eq!(s["counts"]["lines"], 2, "{report:#}");
    assert_eq!(s["counts"]["cut_lines"], 1, "{report:#}");
    assert!(
        detail.contains("1 line(s) longer than 64 KiB cut to it (34464 bytes not read)"),
        "{detail}"
    );
}

/// Every file under `dir`, with its contents (lossy).
fn all_files(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    for entry in ok(std::fs::read_dir(dir)).flatten() {
        let path = entry.path();
        let meta = ok(std::fs::symlink_metadata(&path));
        if meta.is_dir() {
            out.extend(all_files(&path));
        } else {
            let text =
                String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned();
            out.push((path, text));
        }
    }
    out
}

#[tokio::test]
async fn collect_takes_no_secret_follows_no_link_out_and_writes_whole_or_nothing() {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    let d = dir.path();
    running_etcd(&lab, d).await;
    // The API pod's env holds a password.
    let mut pods: Value = ok(serde_json::from_slice(&ok(std::fs::read(
        d.join("pods.json"),
    ))));
    pods["items"][0]["spec"] = json!({"containers": [{"name": "etcd", "image": "e",
        "env": [{"name": "ROOT_PASSWORD", "value": "api-hunter2"}]}]});
    ok(std::fs::write(
        d.join("pods.json"),
        ok(serde_json::to_vec(&pods)),
    ));
    let manifests = d.join("manifests");
    ok(std::fs::create_dir_all(&manifests));
    ok(std::fs::write(
        manifests.join("etcd.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd\n    image: registry.k8s.io/etcd:3.5.15-0\n    command: [etcd, --token=manifest-t0ken]\n    env:\n    - name: ETCD_PASSWORD\n      value: manifest-hunter2\n",
    ));
    // Outside the directory: never followed into a snapshot.
    let outside = d.join("shadow");
    ok(std::fs::write(
        &outside,
        "root:$6$outside-secret:19000:0:99999:7:::\n",
    ));
    ok(std::os::unix::fs::symlink(
        &outside,
        manifests.join("shadow.yaml"),
    ));
    ok(std::fs::write(manifests.join(".hidden"), "hidden-secret\n"));
    ok(std::os::unix::fs::symlink(
        d.join("gone"),
        manifests.join("dangling.yaml"),
    ));
    ok(std::os::unix::fs::symlink(
        manifests.join("loop.yaml"),
        manifests.join("loop.yaml"),
    ));
    assert!(
        ok(Command::new("mkfifo")
            .arg(manifests.join("fifo.yaml"))
            .status())
        .success()
    );
    ok(std::fs::write(
        manifests.join("broken.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: [\n  password: broken-secret\n",
    ));
    ok(std::fs::create_dir_all(
        d.join("kubelet/pods/0d1e2f30-uid/volumes"),
    ));
    ok(std::os::unix::fs::symlink(
        "/etc",
        d.join("kubelet/pods/etc-uid"),
    ));

    let collect = |out: &Path, extra: &[&str]| {
        ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
            .args([
                "collect",
                "--runtime-endpoint",
                &lab.endpoint(),
                "--node-name",
                NODE,
            ])
            .arg("--manifest-dir")
            .arg(&manifests)
            .arg("--kubelet-root-dir")
            .arg(d.join("kubelet"))
            .arg("--pods")
            .arg(d.join("pods.json"))
            .arg("--out")
            .arg(out)
            .args(extra)
            .output())
    };
    // A failure on the way (the kubelet log is missing) leaves nothing behind.
    let failed_out = d.join("failed-snap");
    let out = collect(&failed_out, &["--kubelet-log", "/nonexistent/kubelet.log"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("/nonexistent/kubelet.log"),
        "{out:?}"
    );
    assert!(!failed_out.exists(), "a half-written snapshot was left");
    assert!(
        ok(std::fs::read_dir(d))
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().contains(".tmp-")),
        "a temporary directory was left"
    );

    let snap = d.join("snap");
    let out = collect(&snap, &[]);
    assert!(out.status.success(), "{out:?}");
    let files = all_files(&snap);
    for secret in [
        "api-hunter2",
        "manifest-hunter2",
        "manifest-t0ken",
        "outside-secret",
        "hidden-secret",
        "broken-secret",
    ] {
        let with: Vec<_> = files
            .iter()
            .filter(|(_, t)| t.contains(secret))
            .map(|(p, _)| p)
            .collect();
        assert!(with.is_empty(), "{secret} in {with:?}");
    }
    assert!(!snap.join("kubelet/pods/etc-uid").exists());
    let meta: Value = ok(serde_json::from_slice(&ok(std::fs::read(
        snap.join("meta.json"),
    ))));
    let left_out: Vec<(String, String, bool)> = meta["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                Path::new(l["path"].as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                l["reason"].as_str().unwrap().to_string(),
                l["unknown"].as_bool().unwrap(),
            )
        })
        .collect();
    let names: Vec<&str> = left_out.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "broken.yaml",
            "dangling.yaml",
            "fifo.yaml",
            "loop.yaml",
            "shadow.yaml",
            "etc-uid"
        ],
        "{left_out:#?}"
    );
    assert!(
        left_out[4].1.starts_with("a symbolic link to ")
            && left_out[4].1.contains("not followed")
            && left_out[4].2,
        "{left_out:?}"
    );
    assert!(
        left_out[2].1.starts_with("a named pipe (FIFO)") && !left_out[2].2,
        "{left_out:?}"
    );
    assert!(meta["redacted"].as_u64().unwrap() >= 3, "{meta:#}");

    // Read back: what the kubelet rejects is still reported, the link out is unknown.
    let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["diagnose", "--snapshot"])
        .arg(&snap)
        .args(["--min-age", "0s", "-o", "json"])
        .output());
    let report: Value = ok(serde_json::from_slice(&out.stdout));
    let invalid: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "InvalidStaticPodManifest")
        .map(|f| {
            Path::new(f["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        invalid,
        vec!["broken.yaml", "dangling.yaml", "fifo.yaml", "loop.yaml"],
        "{report:#}"
    );
    assert!(
        !kinds(&report).contains(&"StaticPodNotRemoved".to_string()),
        "{report:#}"
    );
    assert_eq!(
        report["sources"]["manifests"]["status"], "degraded",
        "{report:#}"
    );
    assert!(
        skip_reason(&report, "StaticPodNotRemoved").contains("shadow.yaml"),
        "{report:#}"
    );
    // The API source names the snapshot's file, not the capturing machine's --pods path.
    assert_eq!(
        report["sources"]["apiserver"]["path"],
        snap.join("api/pods.json").display().to_string()
    );

    // --keep-secrets keeps them.
    let kept = d.join("kept");
    assert!(collect(&kept, &["--keep-secrets"]).status.success());
    let files = all_files(&kept);
    assert!(files.iter().any(|(_, t)| t.contains("manifest-hunter2")));
    assert!(files.iter().any(|(_, t)| t.contains("api-hunter2")));
    assert!(!files.iter().any(|(_, t)| t.contains("outside-secret")));
}

/// How long a GET of `/healthz` takes to answer 200 (`None`: no answer within 10 s).
fn healthz_latency(port: u16) -> Option<Duration> {
    let started = Instant::now();
    (get(port, "/healthz").0 == 200).then(|| started.elapsed())
}

#[tokio::test]
async fn manifests_are_parsed_off_the_thread_that_serves_http() {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    let manifests = dir.path().join("manifests");
    ok(std::fs::create_dir_all(&manifests));
    ok(std::fs::create_dir_all(dir.path().join("kubelet/pods")));
    ok(std::fs::write(
        dir.path().join("pods.json"),
        ok(serde_json::to_vec(&pod_list(vec![]))),
    ));
    // The break-it review's file: 200k levels, refused at once as the kubelet refuses it.
    ok(std::fs::write(
        manifests.join("deep.yaml"),
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: d\n  x: {}{}\n",
            "[".repeat(200_000),
            "]".repeat(200_000)
        ),
    ));
    // A large ordinary manifest (4 MiB of annotations) that takes seconds to parse, re-read
    // every second.
    let annotations: String = (0..120_000)
        .map(|i| format!("    key-{i}: value {i} [a, b]\n"))
        .collect();
    ok(std::fs::write(
        manifests.join("big.yaml"),
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  annotations:\n{annotations}spec:\n  containers: [{{name: a}}]\n"
        ),
    ));
    let config = dir.path().join("config.yaml");
    ok(std::fs::write(&config, "manifest_rescan_interval: 1s\n"));
    let port = free_port();
    let daemon = Daemon::new(ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["daemon", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--config")
        .arg(&config)
        .args(["--runtime-endpoint", &lab.endpoint(), "--node-name", NODE])
        .arg("--manifest-dir")
        .arg(&manifests)
        .arg("--kubelet-root-dir")
        .arg(dir.path().join("kubelet"))
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .arg("--pods")
        .arg(dir.path().join("pods.json"))
        .args([
            "--min-age",
            "0s",
            "--evaluate-interval",
            "1s",
            "--log-level",
            "error",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()));
    let findings: Value = wait_for(60, "the deep manifest's finding", || {
        let (code, body) = get(port, "/findings");
        let r: Value = serde_json::from_str(&body).ok()?;
        (code == 200
            && r["findings"].as_array()?.iter().any(|f| {
                f["kind"] == "InvalidStaticPodManifest"
                    && f["summary"]
                        .as_str()
                        .is_some_and(|s| s.contains("exceeded max depth of 10000"))
            }))
        .then_some(r)
    });
    assert!(
        findings["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["path"] != manifests.join("big.yaml").display().to_string()),
        "{findings:#}"
    );
    // While big.yaml is parsed again and again, /healthz answers at once.
    let mut latencies = Vec::new();
    for _ in 0..20 {
        latencies.push(healthz_latency(port));
        std::thread::sleep(Duration::from_millis(250));
    }
    let slowest = latencies.iter().max().copied().flatten();
    assert!(
        latencies.iter().all(Option::is_some)
            && slowest.is_some_and(|s| s < Duration::from_millis(500)),
        "/healthz latencies while manifests are parsed: {latencies:?}"
    );
    daemon.terminate();
}

/// `diagnose --offline` with pasted views: the case 02 tables (no header, a cut last row, a
/// kubectl RESTARTS cell with spaces) give warnings with no `gc_eligible`, the sources say what a
/// table lacks; a paste that is not understood is `not_understood` and, with nothing else read,
/// exits 2; `-o json` documents go through the crictl and kubectl JSON readers.
#[test]
fn pasted_views_are_partial_sources_and_judged() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/cases/02-sandbox-not-gc-until-kubelet-restart");
    let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args([
            "diagnose",
            "--offline",
            "--node-name",
            "node-a",
            "-o",
            "json",
        ])
        .arg("--crictl-pods")
        .arg(case.join("crictl-pods.txt"))
        .arg("--kubectl-pods")
        .arg(case.join("kubectl-get-pods.txt"))
        .output());
    let report: Value = ok(serde_json::from_slice(&out.stdout));
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 6, "{report:#}");
    assert!(findings.iter().all(|f| f["kind"] == "LeakedSandbox"
        && f["severity"] == "warning"
        && f["gc_eligible"] == false));
    let s = &report["sources"]["crictl_pods"];
    assert_eq!(s["status"], "degraded", "{report:#}");
    assert_eq!(s["counts"]["sandboxes"], 6);
    assert!(
        s["detail"]
            .as_str()
            .unwrap()
            .contains("no pod UID, labels or containers")
    );
    assert_eq!(report["sources"]["kubectl_pods"]["counts"]["pods"], 3);

    // Not understood: said, and exit 2 with nothing else read.
    let dir = ok(tempfile::tempdir());
    let junk = dir.path().join("pods.txt");
    ok(std::fs::write(&junk, "this is not crictl output\n"));
    let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["diagnose", "--offline", "-o", "json", "--crictl-pods"])
        .arg(&junk)
        .output());
    let report: Value = ok(serde_json::from_slice(&out.stdout));
    assert_eq!(out.status.code(), Some(2), "{report:#}");
    let s = &report["sources"]["crictl_pods"];
    assert_eq!(s["status"], "not_understood", "{report:#}");
    assert!(
        s["detail"]
            .as_str()
            .unwrap()
            .contains("pods.txt: no crictl pods row"),
        "{s}"
    );

    // A paste cut before each sandbox's state (case 33): read, not judged, said in the
    // report's NOT JUDGED block and its footer, and exit 2 with nothing else judged.
    let cut = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/cases/33-notready-sandboxes-after-reboot-crictl-inspectp/crictl-inspectp.json");
    let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["diagnose", "--offline", "--crictl-inspectp"])
        .arg(&cut)
        .output());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("NOT JUDGED\n  pod sandbox cf46d31391b99 of kube-system/svclb-xxx-bucket-service-9a49bf46-jg2h6"),
        "{text}"
    );
    assert!(
        text.contains("not a clean bill: 1 pasted sandbox read but not judged"),
        "{text}"
    );

    // `-o json`: the pod is in the API (by UID), so its only NOTREADY sandbox is an info.
    let uid = "11111111-2222-4333-8444-555555555502";
    let pods = dir.path().join("crictl-pods.json");
    ok(std::fs::write(
        &pods,
        ok(serde_json::to_vec(&json!({"items": [{
            "id": "aa".repeat(32),
            "metadata": {"name": "web-0", "namespace": "shop", "uid": uid, "attempt": 0},
            "state": "SANDBOX_NOTREADY",
            "createdAt": "1700000000000000000",
            "labels": {"io.kubernetes.pod.uid": uid}
        }]}))),
    ));
    let api = dir.path().join("kubectl-pods.json");
    ok(std::fs::write(
        &api,
        ok(serde_json::to_vec(&pod_list(vec![pod(
            "shop",
            "web-0",
            uid,
            "node-a",
            "Running",
            json!({}),
            json!([]),
        )]))),
    ));
    let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["diagnose", "--offline", "-o", "json", "--crictl-pods"])
        .arg(&pods)
        .arg("--kubectl-pods")
        .arg(&api)
        .output());
    let report: Value = ok(serde_json::from_slice(&out.stdout));
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report:#}");
    assert_eq!(findings[0]["severity"], "info");
    assert_eq!(findings[0]["pod"]["uid"], uid);
}

/// `--kubelet-log` given twice (two windows of one kubelet's log, as bug reports paste them):
/// each file is its own source and the rules read their records together. Case 19's first
/// window removes a static pod; a second window re-adds it with the same UID and starts
/// nothing, which is kubelet 1.22's stuck pod worker (k/k #104648) only with both read.
#[test]
fn several_kubelet_logs_are_read_together_each_its_own_source() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/cases/19-static-pod-recreate-1.22-regression");
    let dir = ok(tempfile::tempdir());
    let pod = "default/mypod-127.0.0.1";
    let readded = dir.path().join("kubelet-later.log");
    ok(std::fs::write(
        &readded,
        format!(
            "I0829 01:50:40.000000 2909862 kubelet.go:2035] \"SyncLoop ADD\" source=\"file\" pods=[{pod}]\n\
             I0829 01:50:40.000100 2909862 pod_workers.go:600] \"Pod is being synced for the first time\" pod=\"{pod}\" podUID=7c0663d52f9e8c61c7a733304c23b60f\n\
             I0829 01:52:00.000000 2909862 kubelet.go:2063] \"SyncLoop UPDATE\" source=\"api\" pods=[{pod}]\n"
        ),
    ));
    let diagnose = |logs: &[&Path]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_podcoroner"));
        cmd.args(["diagnose", "--offline", "--min-age", "0s", "-o", "json"]);
        for l in logs {
            cmd.arg("--kubelet-log").arg(l);
        }
        let out = ok(cmd.output());
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (
            out.status.code(),
            report,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let part1 = case.join("kubelet-part1.log");

    let (_, alone, _) = diagnose(&[&part1]);
    assert!(
        !kinds(&alone).contains(&"StuckPodWorker".to_string()),
        "{alone:#}"
    );

    let (code, both, stderr) = diagnose(&[&part1, &readded]);
    assert_eq!(code, Some(1), "{stderr}");
    let stuck: Vec<&Value> = both["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "StuckPodWorker")
        .collect();
    assert_eq!(stuck.len(), 1, "{both:#}");
    assert!(
        stuck[0]["summary"].as_str().unwrap().contains("104648"),
        "{:#}",
        stuck[0]
    );
    let evidence = stuck[0]["evidence"].to_string();
    assert!(evidence.contains("kubelet-part1.log:"), "{evidence}");
    assert!(evidence.contains("kubelet-later.log:"), "{evidence}");
    assert_eq!(
        both["sources"]["kubelet_log"]["counts"]["lines"], 4,
        "{:#}",
        both["sources"]
    );
    assert_eq!(
        both["sources"]["kubelet_log_2"]["counts"]["lines"], 3,
        "{:#}",
        both["sources"]
    );
    assert!(
        both["sources"]["kubelet_log_2"]["path"]
            .as_str()
            .unwrap()
            .ends_with("kubelet-later.log")
    );

    // The same file twice is a mistake, said as one.
    let (code, _, stderr) = diagnose(&[&part1, &part1]);
    assert_eq!(code, Some(64), "{stderr}");
    assert!(stderr.contains("is given twice"), "{stderr}");

    // The second window piped in (`--kubelet-log -`) reads as the file did.
    let piped = |logs: &[&str]| {
        let mut child = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
            .args(["diagnose", "--offline", "--min-age", "0s", "-o", "json"])
            .args(logs)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn());
        let mut stdin = child.stdin.take().unwrap();
        let text = ok(std::fs::read(&readded));
        // A pipe, not a file: its length is unknown until it ends.
        let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &text));
        let out = ok(child.wait_with_output());
        drop(writer.join());
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (
            out.status.code(),
            report,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let part1_arg = part1.to_str().unwrap();
    let (code, from_pipe, stderr) = piped(&["--kubelet-log", part1_arg, "--kubelet-log", "-"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(kinds(&from_pipe), kinds(&both), "{from_pipe:#}");
    assert_eq!(
        from_pipe["sources"]["kubelet_log_2"]["counts"]["lines"], 3,
        "{:#}",
        from_pipe["sources"]
    );
    let (code, _, stderr) = piped(&["--kubelet-log", "-", "--runtime-log", "-"]);
    assert_eq!(code, Some(64), "{stderr}");
    assert!(stderr.contains("can be read once"), "{stderr}");
}

/// An empty log is no clean bill: `not_understood`, said why, and exit 2 with nothing else read.
/// Flags that do not go together exit 64 as clap's usage errors do, the daemon's too.
#[test]
fn an_empty_log_is_not_judged_and_misused_flags_exit_64() {
    // `diagnose --offline -o json` with `args`, which must exit 2: its `kubelet_log` source.
    let not_judged = |args: &[&str]| -> Value {
        let mut all = vec!["diagnose", "--offline", "-o", "json"];
        all.extend(args);
        let (code, out, err) = podcoroner(&strings(&all));
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        let s = ok(serde_json::from_str::<Value>(&out))["sources"]["kubelet_log"].clone();
        assert_eq!(s["status"], "not_understood", "{s:#}");
        s
    };
    let dir = ok(tempfile::tempdir());
    let empty = dir.path().join("kubelet.log");
    ok(std::fs::write(&empty, ""));
    let empty = empty.display().to_string();
    assert_eq!(
        not_judged(&["--kubelet-log", &empty])["detail"],
        "not understood: no line read, the file is empty: the wrong file, or rotated away?"
    );
    // Nothing on the standard input (`output()` gives the child none).
    assert_eq!(
        not_judged(&["--kubelet-log", "-"])["detail"],
        "not understood: no line read, nothing came on the standard input"
    );
    // Every record before --since: nothing in the time asked was judged, said so.
    let old = dir.path().join("old.log");
    ok(std::fs::write(
        &old,
        "I1201 10:00:00.000000    4321 kubelet.go:2453] \"SyncLoop UPDATE\" source=\"api\" pods=[\"shop/web-0\"]\n",
    ));
    let old = old.display().to_string();
    let s = not_judged(&["--since", "2h", "--kubelet-log", &old]);
    assert!(
        s["detail"].as_str().unwrap_or_default().starts_with(
            "not understood: no record in the time asked, all 1 dated records are before --since"
        ),
        "{s:#}"
    );
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/sample-node");
    // One file by two paths is one log.
    let link = dir.path().join("link.log");
    ok(std::os::unix::fs::symlink(&empty, &link));
    let link = link.display().to_string();
    let same = format!("error: --kubelet-log {empty} and --runtime-log {link} are the same file");
    for (args, want) in [
        (
            vec![
                "diagnose",
                "--offline",
                "--kubelet-log",
                &empty,
                "--runtime-log",
                &link,
            ],
            same.as_str(),
        ),
        (
            vec![
                "diagnose",
                "--offline",
                "--kubelet-log",
                "journald",
                "--kubelet-unit",
                "",
            ],
            "error: invalid value '' for '--kubelet-unit <UNIT>': must not be empty",
        ),
        (
            vec!["diagnose", "--snapshot", sample, "--crictl-pods", &old],
            "error: --crictl-pods, --crictl-inspectp and --kubectl-pods are read with --offline, not with --snapshot",
        ),
        (
            vec!["diagnose", "--offline"],
            "error: --offline judges from logs and pasted views alone",
        ),
        (
            vec![
                "diagnose",
                "--offline",
                "--kubelet-log",
                &empty,
                "--kubelet-log",
                &empty,
            ],
            "is given twice: each log is read once",
        ),
        (
            vec!["diagnose", "--offline", "--kubelet-log", ""],
            "error: invalid value '' for '--kubelet-log <PATH|journald>': must not be empty",
        ),
        (
            vec![
                "daemon",
                "--no-apiserver",
                "--journal-dir",
                "/var/log/journal",
            ],
            "error: --journal-dir: /var/log/journal is read for a journald log, and neither the kubelet's log nor the runtime's is journald",
        ),
    ] {
        let (code, _, err) = podcoroner(&strings(&args));
        assert_eq!(code, 64, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {want:?} in {err}");
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_string()).collect()
}
