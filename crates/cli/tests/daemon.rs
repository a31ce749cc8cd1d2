//! `podcoroner daemon` against a real containerd: a leaked sandbox appears in `/findings` within
//! a poll, resolves when removed, a containerd restart turns `/readyz` to 503 and back without
//! restarting the daemon, and a daemon restart keeps `first_seen`.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use podcoroner_test_support::{BrokenCni, CniFault, ContainerdLab, MISSING_CNI_PLUGIN, PodSpec};
use serde_json::{Value, json};

mod common;
use common::{Daemon, apiserver, free_port, get, ok, pod, pod_list, wait_for};

const NODE: &str = "daemon-node-1";
const WEB_UID: &str = "0d1e2f30-4152-4637-8899-aabbccddeeff";

/// The page as Debian's Chromium renders it headless (its DOM after load).
fn headless_dom(port: u16) -> String {
    let profile = ok(tempfile::tempdir());
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("http://127.0.0.1:{port}/"))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run chromium ({e}): `cargo xtask test` installs it, or apt-get install -y chromium"));
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The daemon against the lab and the node directory `dir` (`manifests`, `kubelet`, `state`),
/// listening on `port`, judging sandboxes of any age and polling CRI every second; the caller
/// adds its API source, its log source and the evaluation interval.
fn lab_daemon(lab: &ContainerdLab, dir: &Path, port: u16) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_podcoroner"));
    cmd.args([
        "daemon",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--runtime-endpoint",
        &lab.endpoint(),
        "--node-name",
        NODE,
    ])
    .arg("--manifest-dir")
    .arg(dir.join("manifests"))
    .arg("--kubelet-root-dir")
    .arg(dir.join("kubelet"))
    .arg("--state-dir")
    .arg(dir.join("state"))
    .args([
        "--min-age",
        "0s",
        "--cri-poll-interval",
        "1s",
        "--log-level",
        "warn",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    cmd
}

/// [`lab_daemon`] with `dir/pods.json` as the API view, evaluating every second.
fn start_daemon(lab: &ContainerdLab, dir: &Path, port: u16) -> Daemon {
    Daemon::new(ok(lab_daemon(lab, dir, port)
        .arg("--pods")
        .arg(dir.join("pods.json"))
        .args(["--evaluate-interval", "1s"])
        .spawn()))
}

fn finding_for<'a>(report: &'a Value, sandbox: &str) -> Option<&'a Value> {
    report["findings"]
        .as_array()?
        .iter()
        .find(|f| f["sandbox_id"] == sandbox)
}

async fn leak(lab: &ContainerdLab, name: &str, uid: &str) -> String {
    let p = PodSpec::api("shop", name, uid);
    let id = ok(lab.run_pod(&p).await);
    ok(lab.stop_sandbox(&id).await);
    id
}

/// A node for the daemon in a fresh directory (its manifest and kubelet pod directories) with the
/// running pod `shop/web-0` (one container) in `lab`, which the API lists as [`web_api_pod`]:
/// (the directory, the web pod's sandbox ID).
async fn node_with_web(lab: &ContainerdLab) -> (tempfile::TempDir, String) {
    let dir = ok(tempfile::tempdir());
    ok(std::fs::create_dir_all(dir.path().join("manifests")));
    ok(std::fs::create_dir_all(dir.path().join("kubelet/pods")));
    let web = PodSpec::api("shop", "web-0", WEB_UID);
    let web_sandbox = ok(lab.run_pod(&web).await);
    ok(lab
        .create_container(&web_sandbox, &web, "web", 0, true)
        .await);
    (dir, web_sandbox)
}

/// `shop/web-0` as the API server lists it.
fn web_api_pod() -> Value {
    pod(
        "shop",
        "web-0",
        WEB_UID,
        NODE,
        "Running",
        json!({}),
        json!([]),
    )
}

#[tokio::test]
async fn daemon_sees_leaks_over_time_and_survives_runtime_restarts() {
    let mut lab = ok(ContainerdLab::start());
    let (dir, _) = node_with_web(&lab).await;
    ok(std::fs::write(
        dir.path().join("pods.json"),
        ok(serde_json::to_vec(&pod_list(vec![web_api_pod()]))),
    ));

    let port = free_port();
    let daemon = start_daemon(&lab, dir.path(), port);
    wait_for(20, "/readyz 200", || {
        (get(port, "/readyz").0 == 200).then_some(())
    });
    assert_eq!(get(port, "/healthz"), (200, "ok\n".to_string()));

    // A leaked sandbox appears within a poll interval (1 s) plus an evaluation (1 s).
    let t0 = Instant::now();
    let leaked = leak(&lab, "cart-0", "11111111-2222-4333-8444-000000000001").await;
    let f = wait_for(10, "the LeakedSandbox finding", || {
        let (code, body) = get(port, "/findings?kind=LeakedSandbox&state=open");
        assert_eq!(code, 200);
        let r: Value = serde_json::from_str(&body).ok()?;
        finding_for(&r, &leaked).cloned()
    });
    let seen_after = t0.elapsed();
    assert!(
        seen_after < Duration::from_secs(5),
        "seen after {seen_after:?}"
    );
    assert_eq!(f["state"], "open");
    assert_eq!(f["pod"]["name"], "cart-0");
    let first_seen = f["first_seen"].clone();
    let (code, body) = get(port, "/findings?namespace=shop");
    assert_eq!(code, 200);
    let all: Value = ok(serde_json::from_str(&body));
    assert_eq!(all["schema"], "podcoroner.diagnosis/v1");
    assert_eq!(all["node"], NODE);
    assert!(
        !all["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["pod"]["uid"] == WEB_UID),
        "healthy pod flagged"
    );
    assert_eq!(get(port, "/findings?kind=Bogus").0, 400);
    assert_eq!(get(port, "/findings?state=maybe").0, 400);

    // Metrics, the page, a timeline.
    let (code, metrics) = get(port, "/metrics");
    assert_eq!(code, 200);
    for want in [
        "podcoroner_findings{kind=\"LeakedSandbox\",severity=\"warning\"} 1",
        "podcoroner_sandboxes{state=\"SANDBOX_NOTREADY\"} 1",
        "podcoroner_source_up{source=\"cri\"} 1",
        "podcoroner_cri_request_duration_seconds_count{rpc=\"ListPodSandbox\"}",
    ] {
        assert!(metrics.contains(want), "missing {want:?} in\n{metrics}");
    }
    let (code, html) = get(port, "/");
    assert_eq!(code, 200);
    assert!(
        html.contains("LeakedSandbox") && html.contains("crictl stopp"),
        "{html}"
    );
    // The page as a person's browser shows it.
    let dom = headless_dom(port);
    assert!(
        dom.contains("podcoroner on node")
            && dom.contains("LeakedSandbox")
            && dom.contains("shop/cart-0"),
        "{dom}"
    );
    let (code, body) = get(port, &format!("/pods/{WEB_UID}/timeline"));
    assert_eq!(code, 200, "{body}");
    let t: Value = ok(serde_json::from_str(&body));
    assert_eq!(t["pods"][0]["name"], "web-0");
    assert_eq!(get(port, "/pods/nobody/timeline").0, 404);

    // Removing the sandbox resolves the finding (after two evaluations without it).
    ok(lab.remove_sandbox(&leaked).await);
    wait_for(10, "the finding to resolve", || {
        let r: Value = serde_json::from_str(&get(port, "/findings?state=resolved").1).ok()?;
        let f = finding_for(&r, &leaked)?;
        (f["first_seen"] == first_seen && f["resolved_at"].is_string()).then_some(())
    });

    // containerd restarts: /readyz goes 503 naming the CRI, and back to 200, same daemon.
    let still_leaked = leak(&lab, "cart-1", "11111111-2222-4333-8444-000000000002").await;
    wait_for(10, "the second leak", || {
        finding_for(
            &serde_json::from_str(&get(port, "/findings").1).ok()?,
            &still_leaked,
        )
        .map(|_| ())
    });
    lab.stop();
    let r: Value = wait_for(15, "/readyz 503", || {
        let (code, body) = get(port, "/readyz");
        (code == 503)
            .then(|| serde_json::from_str(&body).ok())
            .flatten()
    });
    assert_eq!(r["sources"]["cri"]["healthy"], false);
    assert!(
        r["sources"]["cri"]["last_error"]
            .as_str()
            .unwrap()
            .contains(&lab.endpoint()),
        "{r}"
    );
    // While the CRI is down the open finding stays open (its rule cannot run).
    std::thread::sleep(Duration::from_secs(3));
    let r: Value = ok(serde_json::from_str(&get(port, "/findings?state=open").1));
    assert!(
        finding_for(&r, &still_leaked).is_some(),
        "resolved while the runtime was down: {r}"
    );
    ok(lab.restart());
    wait_for(20, "/readyz 200 again", || {
        (get(port, "/readyz").0 == 200).then_some(())
    });

    // A daemon restart keeps first_seen.
    let before: Value = ok(serde_json::from_str(&get(port, "/findings?state=open").1));
    let first = finding_for(&before, &still_leaked).unwrap()["first_seen"].clone();
    daemon.terminate();
    let daemon = start_daemon(&lab, dir.path(), port);
    wait_for(20, "/readyz after restart", || {
        (get(port, "/readyz").0 == 200).then_some(())
    });
    let after: Value = wait_for(10, "findings after restart", || {
        let r: Value = serde_json::from_str(&get(port, "/findings?state=open").1).ok()?;
        finding_for(&r, &still_leaked).is_some().then_some(r)
    });
    assert_eq!(
        finding_for(&after, &still_leaked).unwrap()["first_seen"],
        first
    );
    daemon.terminate();
}

/// The fake API server (`common::apiserver`) serving `pods` as this node's `PodList` on loopback,
/// and a kubeconfig for it in `dir`: (kubeconfig, port, the Events posted).
async fn fake_apiserver_kubeconfig(
    dir: &Path,
    pods: Vec<Value>,
) -> (std::path::PathBuf, u16, apiserver::Posted) {
    let api = apiserver::start(std::net::Ipv4Addr::LOCALHOST.into(), pods).await;
    let kubeconfig = apiserver::kubeconfig(dir, &format!("http://127.0.0.1:{}", api.port));
    (kubeconfig, api.port, api.posted)
}

/// Starts the daemon against the lab and the fake API server (`kubeconfig`), with the config file
/// `config` and the `extra` flags.
fn start_daemon_with_api(
    lab: &ContainerdLab,
    dir: &Path,
    port: u16,
    kubeconfig: &Path,
    config: &Path,
    extra: &[&str],
) -> Daemon {
    Daemon::new(ok(lab_daemon(lab, dir, port)
        .arg("--config")
        .arg(config)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--evaluate-interval", "1s"])
        .args(extra)
        .spawn()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_posts_deduplicated_rate_limited_events() {
    let lab = ok(ContainerdLab::start());
    let (dir, web_sandbox) = node_with_web(&lab).await;
    let (kubeconfig, api_port, posted) =
        fake_apiserver_kubeconfig(dir.path(), vec![web_api_pod()]).await;
    let config = dir.path().join("config.yaml");
    ok(std::fs::write(
        &config,
        "events: true\nevents_per_minute: 5\napi_poll_interval: 1s\ngc: apply\ngc_min_age: 0s\ngc_interval: 4s\ngc_rate: 600\n",
    ));
    // Three leaks at once: three Events; then GC removes them (three more, one of them dropped by
    // the rate limit of 5 a minute).
    let mut leaks = Vec::new();
    for i in 0..3 {
        leaks.push(
            leak(
                &lab,
                &format!("cart-{i}"),
                &format!("11111111-2222-4333-8444-00000000001{i}"),
            )
            .await,
        );
    }
    let port = free_port();
    let daemon = start_daemon_with_api(&lab, dir.path(), port, &kubeconfig, &config, &[]);
    wait_for(20, "/readyz 200 through the fake API server", || {
        (get(port, "/readyz").0 == 200).then_some(())
    });
    wait_for(10, "three events", || {
        (posted.lock().unwrap().len() == 3).then_some(())
    });
    // Several more evaluations: no duplicate for findings already announced.
    std::thread::sleep(Duration::from_secs(2));
    let events: Vec<Value> = posted.lock().unwrap().iter().take(3).cloned().collect();
    assert_eq!(
        posted
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["reason"] == "LeakedSandbox")
            .count(),
        3
    );
    for e in &events {
        assert_eq!(e["reason"], "LeakedSandbox");
        assert_eq!(e["type"], "Warning");
        assert_eq!(e["involvedObject"]["kind"], "Pod");
        assert_eq!(e["involvedObject"]["namespace"], "shop");
        assert!(
            e["involvedObject"]["name"]
                .as_str()
                .unwrap()
                .starts_with("cart-"),
            "{e}"
        );
        assert_eq!(e["source"]["component"], "podcoroner");
        assert_eq!(e["source"]["host"], NODE);
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("kubelet's sandbox GC should have removed it"),
            "{e}"
        );
    }
    // GC (apply, every 4 s) removes the three leaked sandboxes through CRI, audited, counted,
    // announced.
    wait_for(15, "GC to remove the leaks", || {
        let audit =
            std::fs::read_to_string(dir.path().join("state/gc-audit.jsonl")).unwrap_or_default();
        (audit
            .lines()
            .filter(|l| l.contains("\"result\":\"removed\""))
            .count()
            == 3)
            .then_some(())
    });
    let client =
        ok(podcoroner_cri::RuntimeClient::connect(&lab.endpoint(), Duration::from_secs(10)).await);
    let left: Vec<String> = ok(client.list_sandboxes().await)
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(left, vec![web_sandbox.clone()]);
    wait_for(10, "the GC events", || {
        let p = posted.lock().unwrap();
        (p.iter()
            .filter(|e| e["reason"] == "LeakedSandboxRemoved")
            .count()
            == 2)
            .then_some(())
    });
    let metrics = get(port, "/metrics").1;
    assert!(
        metrics.contains("podcoroner_events_total{result=\"sent\"} 5"),
        "{metrics}"
    );
    assert!(
        metrics.contains("podcoroner_events_total{result=\"dropped\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("podcoroner_gc_actions_total{result=\"removed\"} 3"),
        "{metrics}"
    );
    let findings: Value = ok(serde_json::from_str(
        &get(port, "/findings?kind=LeakedSandbox").1,
    ));
    assert_eq!(findings["findings"].as_array().unwrap().len(), 3);
    let detail = findings["sources"]["apiserver"]["detail"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        detail.contains(&format!("127.0.0.1:{api_port}"))
            && detail.contains("watch spec.nodeName=daemon-node-1"),
        "{detail}"
    );
    daemon.terminate();
}

/// The kubelet's log, followed: a GC stop failure written to it shows as `SandboxStopFailing`
/// within 2 s; the log rotates (rename) and the next failure is still read, once; a daemon
/// restart keeps the finding and reads no line twice.
#[tokio::test]
async fn daemon_follows_the_kubelet_log_across_rotation_and_restart() {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    ok(std::fs::create_dir_all(dir.path().join("manifests")));
    ok(std::fs::create_dir_all(dir.path().join("kubelet/pods")));
    ok(std::fs::write(
        dir.path().join("pods.json"),
        ok(serde_json::to_vec(&pod_list(vec![]))),
    ));
    let stuck = leak(&lab, "stuck-0", "11111111-2222-4333-8444-000000000021").await;
    let log = dir.path().join("kubelet.log");
    ok(std::fs::write(
        &log,
        "I1129 08:00:00.000000    4321 kubelet.go:2449] \"SyncLoop ADD\" source=\"api\" pods=[\"shop/old\"]\n",
    ));
    let port = free_port();
    // Default evaluation interval (10 s): the log line itself must wake the evaluator.
    // No look back on the first start: the old line stays unread (hardening.rs tests the look
    // back).
    let start = |port: u16| {
        Daemon::new(ok(lab_daemon(&lab, dir.path(), port)
            .args(["--log-lookback", "0s"])
            .arg("--kubelet-log")
            .arg(&log)
            .arg("--pods")
            .arg(dir.path().join("pods.json"))
            .spawn()))
    };

    let daemon = start(port);
    wait_for(20, "/readyz 200", || {
        (get(port, "/readyz").0 == 200).then_some(())
    });
    let failure = |n: u32| {
        let now = jiff::Timestamp::now().strftime("%m%d %H:%M:%S%.6f");
        format!(
            "E{now}    4321 kuberuntime_gc.go:176] \"Failed to stop sandbox before removing\" err=\"rpc error: code = Unknown \
             desc = failed to destroy network for sandbox \\\"{stuck}\\\": cni plugin not initialized\" sandboxID=\"{stuck}\" n={n}\n"
        )
    };
    let append = |text: &str| {
        let mut f = ok(std::fs::OpenOptions::new().append(true).open(&log));
        ok(f.write_all(text.as_bytes()));
    };
    let stop_failing = || -> Option<Value> {
        let r: Value =
            serde_json::from_str(&get(port, "/findings?kind=SandboxStopFailing").1).ok()?;
        r["findings"]
            .as_array()?
            .iter()
            .find(|f| f["sandbox_id"] == stuck.as_str())
            .cloned()
    };
    let t0 = Instant::now();
    append(&failure(1));
    let f = wait_for(5, "SandboxStopFailing from the log", stop_failing);
    let latency = t0.elapsed();
    assert!(
        latency < Duration::from_secs(2),
        "a finding from a log line took {latency:?}"
    );
    assert!(
        f["summary"]
            .as_str()
            .unwrap()
            .contains("cni plugin not initialized"),
        "{f}"
    );
    let metrics = get(port, "/metrics").1;
    assert!(
        metrics.contains("podcoroner_log_lines_total{source=\"kubelet_log\"} 1"),
        "the old line was read: {metrics}"
    );

    // Rotation by rename (logrotate `create`): the next line goes to a new file.
    ok(std::fs::rename(&log, dir.path().join("kubelet.log.1")));
    ok(std::fs::write(&log, ""));
    append(&failure(2));
    wait_for(10, "the line after rotation", || {
        let m = get(port, "/metrics").1;
        m.contains("podcoroner_log_lines_total{source=\"kubelet_log\"} 2")
            .then_some(())
    });
    let r: Value = ok(serde_json::from_str(&get(port, "/readyz").1));
    assert_eq!(r["sources"]["kubelet_log"]["healthy"], true, "{r}");

    // Restart: the finding is still open, and no line is read twice.
    daemon.terminate();
    append(&failure(3));
    let daemon = start(port);
    wait_for(20, "/readyz after restart", || {
        (get(port, "/readyz").0 == 200).then_some(())
    });
    wait_for(10, "the line written while down", || {
        let m = get(port, "/metrics").1;
        m.contains("podcoroner_log_lines_total{source=\"kubelet_log\"} 1")
            .then_some(())
    });
    std::thread::sleep(Duration::from_secs(2));
    let f = stop_failing().expect("the log finding survived the restart");
    assert_eq!(f["state"], "open");
    assert!(
        f["summary"].as_str().unwrap().contains("3 log records"),
        "each line exactly once: {f}"
    );
    daemon.terminate();
}

/// The value of the metric line starting with `series` (name and labels), if present.
fn metric(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

/// `--gc apply` against a real CNI teardown failure: the plugin binary of the lab's network is
/// missing, so containerd fails every `StopPodSandbox` of the leaked pod-network sandbox with
/// `failed to destroy network for sandbox …`. Each GC run records `stop_failed` (audited,
/// counted), the `SandboxStopFailing` finding with the classified cause is in `/findings`, the
/// sandbox and the healthy pod are left alone; once the plugin is back, GC removes the sandbox and
/// the finding resolves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_gc_apply_reports_a_real_cni_teardown_failure() {
    let lab = ok(ContainerdLab::start());
    let (dir, web_sandbox) = node_with_web(&lab).await;
    let stuck = ok(lab
        .run_pod(&PodSpec::api(
            "shop",
            "stuck-0",
            "11111111-2222-4333-8444-000000000031",
        ))
        .await);
    let fault = ok(BrokenCni::inject(&lab, CniFault::PluginMissing).await);
    let destroy = format!(
        "failed to destroy network for sandbox \"{stuck}\": plugin type=\"{MISSING_CNI_PLUGIN}\" failed (delete): \
         failed to find plugin \"{MISSING_CNI_PLUGIN}\" in path [/usr/lib/cni]"
    );
    let kubelet_stop = lab.stop_sandbox(&stuck).await.unwrap_err().to_string();
    assert!(kubelet_stop.contains(&destroy), "{kubelet_stop}");

    let (kubeconfig, _, _) = fake_apiserver_kubeconfig(dir.path(), vec![web_api_pod()]).await;
    let config = dir.path().join("config.yaml");
    ok(std::fs::write(
        &config,
        "gc_min_age: 1s\ngc_interval: 2s\ngc_rate: 600\n",
    ));
    let port = free_port();
    let daemon = start_daemon_with_api(
        &lab,
        dir.path(),
        port,
        &kubeconfig,
        &config,
        &["--gc", "apply"],
    );
    wait_for(20, "/readyz 200", || {
        (get(port, "/readyz").0 == 200).then_some(())
    });
    let audit = || -> Vec<Value> {
        std::fs::read_to_string(dir.path().join("state/gc-audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| ok(serde_json::from_str(l)))
            .collect()
    };
    let f = wait_for(20, "SandboxStopFailing from the GC", || {
        let r: Value =
            serde_json::from_str(&get(port, "/findings?kind=SandboxStopFailing").1).ok()?;
        finding_for(&r, &stuck).cloned()
    });
    assert_eq!(f["state"], "open");
    assert_eq!(f["pod"]["name"], "stuck-0");
    // No teardown on the node can succeed without the plugin.
    assert_eq!(f["severity"], "critical");
    assert!(
        f["summary"]
            .as_str()
            .unwrap()
            .ends_with("fails: CNI teardown: the CNI plugin binary is missing"),
        "{f}"
    );
    assert!(
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.to_string().contains(&destroy.replace('"', "\\\""))),
        "{f}"
    );
    let leaked: Value = ok(serde_json::from_str(
        &get(port, "/findings?kind=LeakedSandbox&state=open").1,
    ));
    assert!(finding_for(&leaked, &stuck).is_some(), "{leaked}");
    let failed: Vec<Value> = audit()
        .into_iter()
        .filter(|r| r["sandbox_id"] == stuck.as_str() && r["result"] != "intent")
        .collect();
    assert!(!failed.is_empty());
    for r in &failed {
        assert_eq!(r["result"], "stop_failed", "{r}");
        assert_eq!(
            r["error_class"],
            "CNI teardown: the CNI plugin binary is missing"
        );
        assert!(r["error"].as_str().unwrap().contains(&destroy), "{r}");
    }
    let metrics = wait_for(10, "the stop_failed count", || {
        let m = get(port, "/metrics").1;
        metric(&m, "podcoroner_gc_actions_total{result=\"stop_failed\"}")
            .is_some_and(|n| n >= 1.0)
            .then_some(m)
    });
    assert_eq!(
        metric(&metrics, "podcoroner_gc_actions_total{result=\"removed\"}"),
        None,
        "{metrics}"
    );
    // The effective mode is visible: this agent acts.
    assert!(
        metrics.lines().any(|l| l.starts_with("podcoroner_info{")
            && l.contains("gc=\"apply\"")
            && l.ends_with(" 1")),
        "{metrics}"
    );
    let client =
        ok(podcoroner_cri::RuntimeClient::connect(&lab.endpoint(), Duration::from_secs(10)).await);
    let ids = || async {
        ok(client.list_sandboxes().await)
            .into_iter()
            .map(|s| s.id)
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(
        ids().await,
        [web_sandbox.clone(), stuck.clone()].into_iter().collect()
    );

    // The plugin is back: the next GC run removes the sandbox and the finding resolves.
    ok(fault.repair().await);
    wait_for(20, "GC to remove the sandbox", || {
        audit()
            .iter()
            .any(|r| r["sandbox_id"] == stuck.as_str() && r["result"] == "removed")
            .then_some(())
    });
    assert_eq!(ids().await, [web_sandbox.clone()].into_iter().collect());
    wait_for(15, "the SandboxStopFailing finding to resolve", || {
        let r: Value =
            serde_json::from_str(&get(port, "/findings?kind=SandboxStopFailing&state=resolved").1)
                .ok()?;
        finding_for(&r, &stuck).map(|_| ())
    });
    let metrics = get(port, "/metrics").1;
    assert_eq!(
        metric(&metrics, "podcoroner_gc_actions_total{result=\"removed\"}"),
        Some(1.0),
        "{metrics}"
    );
    daemon.terminate();
}

/// A state directory the daemon cannot write loses the findings' history and the log positions
/// at the next restart: `/readyz` names it (source `state`), and it recovers once writable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_reports_an_unwritable_state_directory() {
    let lab = ok(ContainerdLab::start());
    let (dir, _) = node_with_web(&lab).await;
    ok(std::fs::write(
        dir.path().join("pods.json"),
        ok(serde_json::to_vec(&pod_list(vec![web_api_pod()]))),
    ));
    let state = dir.path().join("state");
    ok(std::fs::create_dir_all(&state));
    // Read-only even for root: a read-only bind mount, as a hostPath mounted readOnly would be.
    let mount = |args: &[&std::ffi::OsStr]| {
        let out = ok(Command::new("mount").args(args).output());
        assert!(out.status.success(), "mount {args:?}: {out:?}");
    };
    /// Undoes the bind mount however the test ends (dropped before the directory).
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let s = state.as_os_str();
    mount(&["--bind".as_ref(), s, s]);
    let _unmount = Unmount(state.clone());
    mount(&["-o".as_ref(), "remount,ro,bind".as_ref(), s]);
    let port = free_port();
    let daemon = start_daemon(&lab, dir.path(), port);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let body = loop {
        let (status, body) = get(port, "/readyz");
        if status == 503 && body.contains("Read-only file system") {
            break body;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/readyz never named the state source: {status} {body}"
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    let readyz: Value = ok(serde_json::from_str(&body));
    let state_health = &readyz["sources"]["state"];
    assert_eq!(state_health["healthy"], false, "{body}");
    let error = state_health["last_error"].as_str().unwrap();
    assert!(
        error.contains("saving") && error.contains("Read-only file system"),
        "{error}"
    );
    let metrics = get(port, "/metrics").1;
    assert!(metrics.contains("podcoroner_source_up{source=\"state\"} 0"));
    // The default mode: no GC.
    let info = metrics
        .lines()
        .find(|l| l.starts_with("podcoroner_info{"))
        .unwrap_or_else(|| panic!("no podcoroner_info: {metrics}"));
    assert!(
        info.contains("gc=\"off\"") && info.ends_with(" 1"),
        "{info}"
    );
    // Writable again: the next save succeeds and the agent is ready.
    mount(&["-o".as_ref(), "remount,rw,bind".as_ref(), s]);
    wait_for(
        60,
        "/readyz 200 once the state directory is writable",
        || (get(port, "/readyz").0 == 200).then_some(()),
    );
    daemon.terminate();
}

/// The daemon of a lab node holding the web pod, its API view the web pod (`pods.json`, written
/// here), following `log` as the kubelet's log.
fn web_daemon_with_kubelet_log(lab: &ContainerdLab, dir: &Path, port: u16, log: &Path) -> Command {
    ok(std::fs::write(
        dir.join("pods.json"),
        ok(serde_json::to_vec(&pod_list(vec![web_api_pod()]))),
    ));
    let mut daemon = lab_daemon(lab, dir, port);
    daemon
        .arg("--pods")
        .arg(dir.join("pods.json"))
        .arg("--kubelet-log")
        .arg(log);
    daemon
}

/// `kubelet_log`'s error in `/readyz`, when the daemon is not ready because of it.
fn kubelet_log_failure(port: u16) -> Option<String> {
    let (status, body) = get(port, "/readyz");
    let v: Value = serde_json::from_str(&body).ok()?;
    let h = &v["sources"]["kubelet_log"];
    (status == 503 && h["healthy"] == false)
        .then(|| h["last_error"].as_str().map(str::to_string))
        .flatten()
}

/// A kubelet log file that is not at its path (a wrong path, a missing mount) is said in
/// `/readyz`, never shown as a quiet healthy source; once the file appears it is read and the
/// source is healthy.
#[tokio::test]
async fn daemon_says_a_kubelet_log_that_is_not_there() {
    let lab = ok(ContainerdLab::start());
    let (dir, _) = node_with_web(&lab).await;
    let log = dir.path().join("kubelet.log");
    let port = free_port();
    let daemon = Daemon::new(ok(web_daemon_with_kubelet_log(
        &lab,
        dir.path(),
        port,
        &log,
    )
    .spawn()));
    let error = wait_for(30, "kubelet_log degraded in /readyz", || {
        kubelet_log_failure(port)
    });
    assert!(
        error.contains(&format!(
            "{} does not exist: a wrong path or a missing mount? It is read once it appears",
            log.display()
        )),
        "{error}"
    );
    ok(std::fs::write(
        &log,
        "I1201 10:00:00.000000    4321 kubelet.go:2453] \"SyncLoop UPDATE\" source=\"api\" pods=[\"shop/web-0\"]\n",
    ));
    wait_for(30, "kubelet_log healthy once its file is there", || {
        let v: Value = serde_json::from_str(&get(port, "/readyz").1).ok()?;
        (v["sources"]["kubelet_log"]["healthy"] == true).then_some(())
    });
    daemon.terminate();
}

/// A kubelet log the daemon cannot read is said the way the one-shot readers say it (`not
/// understood: …; first: <file>:<line>: …` in `/readyz`), logged once when the source goes
/// degraded rather than at every health check while it stays so, and healthy again once its
/// records are understood.
#[tokio::test]
async fn daemon_says_an_unread_log_once_and_in_readyz() {
    let lab = ok(ContainerdLab::start());
    let (dir, _) = node_with_web(&lab).await;
    let log = dir.path().join("kubelet.log");
    let garbage: String = (0..30)
        .map(|i| format!("<<binary-ish {i}>> 0x{i:04x} ~~ no shape here\n"))
        .collect();
    ok(std::fs::write(&log, garbage));
    let stderr_path = dir.path().join("daemon.stderr");
    let port = free_port();
    let daemon = Daemon::new(ok(web_daemon_with_kubelet_log(
        &lab,
        dir.path(),
        port,
        &log,
    )
    .stderr(ok(std::fs::File::create(&stderr_path)))
    .spawn()));
    let error = wait_for(30, "kubelet_log not understood in /readyz", || {
        kubelet_log_failure(port)
    });
    assert!(
        error.contains("not understood: no record of a known shape in 30 records")
            && error.contains(&format!("first: {}:1: <<binary-ish 0>>", log.display()))
            && error.contains("30 lines"),
        "{error}"
    );
    // The follower's health is checked every second: a few checks later, still one log line.
    std::thread::sleep(Duration::from_secs(4));
    let failed_lines = |text: &str| {
        text.lines()
            .filter(|l| l.contains("Source failed") && l.contains("kubelet_log"))
            .count()
    };
    let stderr = ok(std::fs::read_to_string(&stderr_path));
    assert_eq!(failed_lines(&stderr), 1, "{stderr}");
    // Understood records outnumber the rest (30 of 330 not understood): healthy again.
    let mut f = ok(std::fs::OpenOptions::new().append(true).open(&log));
    for i in 0..300 {
        ok(writeln!(
            f,
            "I1201 10:00:{:02}.000000    4321 kubelet.go:2453] \"SyncLoop UPDATE\" source=\"api\" pods=[\"shop/web-0\"]",
            i % 60
        ));
    }
    drop(f);
    wait_for(30, "kubelet_log healthy again", || {
        let v: Value = serde_json::from_str(&get(port, "/readyz").1).ok()?;
        (v["sources"]["kubelet_log"]["healthy"] == true).then_some(())
    });
    let stderr = ok(std::fs::read_to_string(&stderr_path));
    assert_eq!(failed_lines(&stderr), 1, "{stderr}");
    daemon.terminate();
}
