//! Pod start forensics on a real node (a real kubelet v1.34.4, kube-apiserver and etcd from
//! `cargo xtask real-node build`, on a private containerd): one node, one scenario after the
//! other, each pod's start read back by `explain` and judged by `diagnose`.
//!
//! - a CNI plugin wrapped so that its ADD sleeps [`SLOW_ADD_SECS`] → `SlowPodStartup`, the sandbox
//!   phase dominant and measured at the sleep;
//! - an image the node gets only after the pod is created → the image pull phase;
//! - a readiness probe that can pass only after [`READY_DELAY_SECS`] → the readiness phase;
//! - the CNI ADD refused (a wrapper failing every ADD, teardowns still working) →
//!   `SandboxCreateFailing` (critical: no pod gets a sandbox), the pods waiting named;
//! - the CNI plugin's binary missing (the kubelet's one ADD fails, then it loops on tearing the
//!   sandbox down) → one critical `SandboxCreateFailing` naming the plugin, no
//!   `SandboxStopFailing`;
//! - the containers' start edges from the CRI (`created_at`, `ContainerStatus.started_at`),
//!   against the kubelet's `Started container` line, in `explain` and in the agent's
//!   `/pods/{uid}/timeline` (whose poller asks `ContainerStatus` once per container);
//! - the kubelet's own SLI of the late image's pod impossible → `PodStartupMetricInvalid`;
//! - a healthy pod gives nothing at the default `--slow-start`.
//!
//! The measured phases are printed (`--nocapture` shows them).

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::PostParams;
use podcoroner_test_support::real_node::{Env, Options, TEST_IMAGE};
use podcoroner_test_support::{CniFault, MISSING_CNI_PLUGIN};
use serde_json::{Value, json};

mod common;
use common::real_node::{KeepLogs, inject_cni_fault, node_flags_without_url, runtime, up};
use common::{ok, podcoroner, wait_for};

/// The wrapped CNI plugin's sleep on ADD.
const SLOW_ADD_SECS: u32 = 8;
/// The readiness probe's `initialDelaySeconds`.
const READY_DELAY_SECS: u64 = 15;
/// How long the image is missing after its pod is created.
const IMAGE_LATE_SECS: u64 = 12;
/// The image the node gets late (a second tag of the test image).
const LATE_IMAGE: &str = "localhost/podcoroner/late:1";

/// An API pod of namespace `shop` bound to the node, with `container`'s extra fields.
fn pod(name: &str, container: Value) -> Pod {
    let mut c = json!({"name": "main", "image": TEST_IMAGE, "imagePullPolicy": "Never"});
    if let (Some(c), Some(extra)) = (c.as_object_mut(), container.as_object()) {
        c.extend(extra.clone());
    }
    ok(serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"nodeName": "lab-node", "terminationGracePeriodSeconds": 1, "containers": [c]},
    })))
}

fn create(rt: &tokio::runtime::Runtime, pods: &kube::Api<Pod>, p: &Pod) {
    rt.block_on(pods.create(&PostParams::default(), p)).unwrap();
}

/// Waits until pod `name` is Running and ready.
fn wait_ready(rt: &tokio::runtime::Runtime, pods: &kube::Api<Pod>, name: &str, secs: u64) {
    wait_for(secs, &format!("shop/{name} Running and ready"), || {
        let p = rt.block_on(pods.get(name)).ok()?;
        let status = p.status?;
        let ready = status
            .conditions?
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        (status.phase.as_deref() == Some("Running") && ready).then_some(())
    });
}

/// `podcoroner diagnose -o json` against the node with `extra` flags.
fn diagnose(env: &Env, extra: &[&str]) -> Value {
    let mut args = vec!["diagnose".to_owned(), "-o".into(), "json".into()];
    args.extend(node_flags_without_url(env));
    args.extend(["--fail-on".into(), "none".into()]);
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let (code, out, err) = podcoroner(&args);
    assert_eq!(code, 0, "diagnose failed: {err}\n{out}");
    ok(serde_json::from_str(&out))
}

/// The findings of `kind` in a report.
fn of_kind<'r>(report: &'r Value, kind: &str) -> Vec<&'r Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

/// The startup breakdown `explain -o json` gives pod `shop/name`: phase → seconds.
fn phases(env: &Env, name: &str) -> (Vec<(String, f64)>, Value) {
    let mut args = vec![
        "explain".to_owned(),
        format!("shop/{name}"),
        "-o".into(),
        "json".into(),
    ];
    // explain judges nothing: no --min-age.
    let flags = node_flags_without_url(env);
    args.extend(flags[..flags.len() - 2].iter().cloned());
    let (code, out, err) = podcoroner(&args);
    assert_eq!(code, 0, "explain failed: {err}\n{out}");
    let report: Value = ok(serde_json::from_str(&out));
    let st = report["startup"][0].clone();
    let phases = st["phases"]
        .as_array()
        .unwrap_or_else(|| panic!("no startup breakdown for shop/{name}: {report:#}"))
        .iter()
        .map(|p| {
            (
                p["phase"].as_str().unwrap().to_owned(),
                p["seconds"].as_f64().unwrap(),
            )
        })
        .collect();
    (phases, st)
}

/// The agent on the node: `/pods/{uid}/timeline` gives `name`'s container start from the CRI
/// as `explain` does (`want`), its startup metrics observed that start (from the breakdowns its
/// `SlowPodStartup` rule made), and its CRI poller asks `ContainerStatus` once per container,
/// not at every poll (the poll runs every second).
fn agent_sees_the_cri_edges(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    pods: &kube::Api<Pod>,
    name: &str,
    want: &Value,
) {
    let uid = rt.block_on(pods.get(name)).unwrap().metadata.uid.unwrap();
    let port = common::free_port();
    let state = ok(tempfile::tempdir());
    let agent = common::Daemon::new(ok(std::process::Command::new(env!(
        "CARGO_BIN_EXE_podcoroner"
    ))
    .arg("daemon")
    .args(node_flags_without_url(env))
    .args(["--listen", &format!("127.0.0.1:{port}")])
    .arg("--state-dir")
    .arg(state.path())
    .args(["--cri-poll-interval", "1s", "--evaluate-interval", "1s"])
    .args(["--log-level", "warn"])
    .stdout(std::process::Stdio::null())
    .spawn()));
    let timeline: Value = wait_for(60, "the agent's timeline with the CRI edges", || {
        let (status, body) = common::get(port, &format!("/pods/{uid}/timeline"));
        let t: Value = serde_json::from_str(&body).ok()?;
        let end = t["startup"][0]["phases"]
            .as_array()?
            .iter()
            .find(|p| p["phase"] == "container_start")?["end"]
            .clone();
        (status == 200 && end["source"] == "cri").then_some(t)
    });
    assert_eq!(timeline["schema"], "podcoroner.timeline/v1");
    let start = phase_of(&timeline["startup"][0], "container_start");
    assert_eq!(start["start"], want["start"], "{timeline:#}");
    assert_eq!(start["end"], want["end"], "{timeline:#}");
    let count = |metrics: &str, line: &str| -> u64 {
        metrics
            .lines()
            .find(|l| l.starts_with(line))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0)
    };
    let metrics = wait_for(30, "the agent's startup metrics", || {
        let (_, m) = common::get(port, "/metrics");
        (count(&m, "podcoroner_pod_startup_seconds_count") >= 1).then_some(m)
    });
    let status_calls = "podcoroner_cri_request_duration_seconds_count{rpc=\"ContainerStatus\"}";
    let before = count(&metrics, status_calls);
    std::thread::sleep(Duration::from_secs(4));
    let (_, later) = common::get(port, "/metrics");
    let after = count(&later, status_calls);
    println!(
        "agent: ContainerStatus calls {before} after its first polls, {after} four polls later; \
         pod starts observed {}",
        count(&later, "podcoroner_pod_startup_seconds_count")
    );
    assert!(before >= 1, "{metrics}");
    assert_eq!(before, after, "ContainerStatus is asked once per container");
    agent.terminate();
}

/// The phase `phase` of a startup view.
fn phase_of<'s>(st: &'s Value, phase: &str) -> &'s Value {
    st["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == phase)
        .unwrap_or_else(|| panic!("no {phase} phase in {st:#}"))
}

/// The time of the kubelet's `"Event occurred" object="<pod>" … reason="Started"` line (klog's
/// `I1201 20:10:49.479673` header, the node's clock in UTC).
fn started_line_at(env: &Env, pod: &str) -> jiff::Timestamp {
    let log = ok(std::fs::read_to_string(&env.kubelet_log));
    let object = format!("object=\"{pod}\"");
    let line = log
        .lines()
        .find(|l| l.contains(&object) && l.contains("reason=\"Started\""))
        .unwrap_or_else(|| panic!("no Started line of {pod}"));
    let (month, day) = (&line[1..3], &line[3..5]);
    let time = line[6..].split(' ').next().unwrap();
    let year = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .year();
    ok(format!("{year}-{month}-{day}T{time}Z").parse())
}

fn seconds(phases: &[(String, f64)], phase: &str) -> f64 {
    phases
        .iter()
        .find(|(p, _)| p == phase)
        .map_or_else(|| panic!("no {phase} phase in {phases:?}"), |(_, s)| *s)
}

#[test]
fn pod_start_forensics_on_a_real_node() {
    let rt = runtime();
    let (dir, node) = up(&Options::default());
    let _logs = KeepLogs(dir.path().to_owned(), "pod-startup");
    let env = node.env().clone();
    let client = rt.block_on(node.client()).unwrap();
    let ns: Namespace = ok(serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
    ));
    rt.block_on(kube::Api::<Namespace>::all(client.clone()).create(&PostParams::default(), &ns))
        .unwrap();
    let pods: kube::Api<Pod> = kube::Api::namespaced(client.clone(), "shop");

    // A healthy pod: nothing at the default --slow-start, its start broken down.
    create(&rt, &pods, &pod("quick", json!({})));
    wait_ready(&rt, &pods, "quick", 120);
    let healthy = diagnose(&env, &[]);
    for kind in [
        "SlowPodStartup",
        "SandboxCreateFailing",
        "PodStartupMetricInvalid",
    ] {
        assert!(
            of_kind(&healthy, kind).is_empty(),
            "{kind} on a healthy node: {healthy:#}"
        );
    }
    let (quick, st) = phases(&env, "quick");
    println!("quick: {quick:?}");
    assert!(seconds(&quick, "sandbox") < 5.0, "{quick:?}");
    // The containers' start from the CRI: created_at (ListContainers) to started_at
    // (ContainerStatus), stamped by containerd before the kubelet logs its "Started container".
    let start = phase_of(&st, "container_start");
    assert_eq!(start["start"]["source"], "cri", "{st:#}");
    assert_eq!(
        start["start"]["what"], "CRI container main created_at",
        "{st:#}"
    );
    assert_eq!(start["end"]["source"], "cri", "{st:#}");
    assert_eq!(
        start["end"]["what"], "CRI container main started_at",
        "{st:#}"
    );
    let cri_started: jiff::Timestamp = ok(start["end"]["at"].as_str().unwrap().parse());
    let cri_created: jiff::Timestamp = ok(start["start"]["at"].as_str().unwrap().parse());
    let logged = started_line_at(&env, "shop/quick");
    let lag = logged.duration_since(cri_started);
    println!(
        "quick: CRI created_at {cri_created}, CRI started_at {cri_started}, kubelet \"Started container\" line {logged} ({lag:#} later)"
    );
    assert!(cri_created <= cri_started, "{st:#}");
    assert!(
        lag >= jiff::SignedDuration::ZERO && lag < jiff::SignedDuration::from_secs(2),
        "CRI started_at {cri_started} vs the kubelet's line {logged}"
    );
    // The readiness phase starts where the containers started.
    assert_eq!(phase_of(&st, "readiness")["start"], start["end"], "{st:#}");
    agent_sees_the_cri_edges(&rt, &env, &pods, "quick", start);

    // The CNI ADD sleeps: the sandbox phase.
    let slow = inject_cni_fault(&rt, &node, CniFault::SlowAdd(SLOW_ADD_SECS));
    create(&rt, &pods, &pod("slow-net", json!({})));
    wait_ready(&rt, &pods, "slow-net", 120);
    ok(rt.block_on(slow.repair()));

    // The image arrives late: the pull phase.
    create(
        &rt,
        &pods,
        &pod(
            "late-image",
            json!({"image": LATE_IMAGE, "imagePullPolicy": "IfNotPresent"}),
        ),
    );
    std::thread::sleep(Duration::from_secs(IMAGE_LATE_SECS));
    let tagged = std::process::Command::new("ctr")
        .args(["-a", &node.socket().display().to_string(), "-n", "k8s.io"])
        .args(["images", "tag", "--force", TEST_IMAGE, LATE_IMAGE])
        .output()
        .unwrap();
    assert!(tagged.status.success(), "{tagged:?}");
    wait_ready(&rt, &pods, "late-image", 180);

    // A readiness probe that can pass only after its initial delay: the readiness phase. The
    // kubelet dials the probe itself: its own read-only port on loopback answers.
    create(
        &rt,
        &pods,
        &pod(
            "late-ready",
            json!({"readinessProbe": {
                "tcpSocket": {"host": "127.0.0.1", "port": node.kubelet_read_only_port()},
                "initialDelaySeconds": READY_DELAY_SECS,
                "periodSeconds": 1,
            }}),
        ),
    );
    wait_ready(&rt, &pods, "late-ready", 120);

    let (slow_net, st) = phases(&env, "slow-net");
    println!("slow-net (CNI ADD sleeps {SLOW_ADD_SECS}s): {slow_net:?}");
    let sandbox = seconds(&slow_net, "sandbox");
    assert!(
        sandbox >= f64::from(SLOW_ADD_SECS) && sandbox < f64::from(SLOW_ADD_SECS) + 4.0,
        "{slow_net:?}"
    );
    assert_eq!(st["dominant"], "sandbox", "{st:#}");
    let (late_image, st) = phases(&env, "late-image");
    println!("late-image (image tagged {IMAGE_LATE_SECS}s after the pod): {late_image:?}");
    assert!(
        seconds(&late_image, "image_pull") >= IMAGE_LATE_SECS as f64 - 1.0,
        "{late_image:?}"
    );
    assert_eq!(st["dominant"], "image_pull", "{st:#}");
    let (late_ready, st) = phases(&env, "late-ready");
    println!("late-ready (initialDelaySeconds {READY_DELAY_SECS}): {late_ready:?}");
    let readiness = seconds(&late_ready, "readiness");
    assert!(
        readiness >= READY_DELAY_SECS as f64 - 1.0 && readiness < READY_DELAY_SECS as f64 + 5.0,
        "{late_ready:?}"
    );
    assert_eq!(st["dominant"], "readiness", "{st:#}");

    // Judged at --slow-start 7s: the three slow pods, each with its dominant phase; not quick.
    let report = diagnose(&env, &["--slow-start", "7s"]);
    let slow_starts = of_kind(&report, "SlowPodStartup");
    let summary_of = |name: &str| {
        slow_starts
            .iter()
            .find(|f| f["pod"]["name"] == name)
            .map(|f| f["summary"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("no SlowPodStartup for {name}: {report:#}"))
    };
    assert!(
        summary_of("slow-net").contains(": sandbox took"),
        "{report:#}"
    );
    assert!(
        summary_of("late-image").contains(": image_pull took"),
        "{report:#}"
    );
    assert!(
        summary_of("late-ready").contains(": readiness took"),
        "{report:#}"
    );
    assert!(
        slow_starts.iter().all(|f| f["pod"]["name"] != "quick"),
        "{report:#}"
    );
    let profile = report["startup_profile"].as_array().unwrap();
    assert!(
        profile
            .iter()
            .any(|r| r["phase"] == "total" && r["pods"].as_u64() >= Some(4)),
        "{profile:?}"
    );

    // The kubelet's own SLI of late-image is impossible: its pull started and never finished
    // (the image appeared without a pull; k/k #130432, #131324).
    let invalid = of_kind(&report, "PodStartupMetricInvalid");
    assert_eq!(invalid.len(), 1, "{report:#}");
    assert!(
        invalid[0]["evidence"]
            .to_string()
            .contains("shop/late-image"),
        "{report:#}"
    );

    // The CNI ADD refused (teardowns still work): no pod gets a sandbox.
    let broken = inject_cni_fault(&rt, &node, CniFault::AddFails);
    create(&rt, &pods, &pod("no-net-0", json!({})));
    create(&rt, &pods, &pod("no-net-1", json!({})));
    let deadline = Instant::now() + Duration::from_secs(120);
    let failing = loop {
        let report = diagnose(&env, &[]);
        let f: Vec<Value> = of_kind(&report, "SandboxCreateFailing")
            .into_iter()
            .cloned()
            .collect();
        if f.iter().any(|f| f["severity"] == "critical") {
            break f;
        }
        assert!(
            Instant::now() < deadline,
            "no critical SandboxCreateFailing: {report:#}"
        );
        std::thread::sleep(Duration::from_secs(3));
    };
    println!("{failing:#?}");
    let summary = failing[0]["summary"].as_str().unwrap();
    assert!(
        summary.contains("the CNI ADD fails (plugin podcoroner-add-fails-")
            && summary.contains("no-net-0")
            && summary.contains("no-net-1"),
        "{summary}"
    );
    ok(rt.block_on(broken.repair()));
    wait_ready(&rt, &pods, "no-net-0", 180);
    wait_ready(&rt, &pods, "no-net-1", 180);
    let report = diagnose(&env, &[]);
    assert!(
        of_kind(&report, "SandboxCreateFailing").is_empty(),
        "the pods got their sandboxes: {report:#}"
    );

    // The CNI plugin's binary missing: the kubelet's one RunPodSandbox fails in the CNI ADD,
    // containerd keeps the sandbox (its teardown fails too), and the pod worker then loops on
    // stopping it (SyncPod kills the not-ready sandbox before it creates another) and never
    // tries ADD again. What an SRE must see is the cause: the ADD fails, no pod can start; once,
    // as SandboxCreateFailing, not also as a SandboxStopFailing of the same sandboxes.
    let missing = inject_cni_fault(&rt, &node, CniFault::PluginMissing);
    create(&rt, &pods, &pod("no-bin-0", json!({})));
    create(&rt, &pods, &pod("no-bin-1", json!({})));
    let deadline = Instant::now() + Duration::from_secs(120);
    let (failing, report) = loop {
        let report = diagnose(&env, &[]);
        let f: Vec<Value> = of_kind(&report, "SandboxCreateFailing")
            .into_iter()
            .filter(|f| f["summary"].as_str().unwrap().contains("no-bin-"))
            .cloned()
            .collect();
        // Both pods once each has tried its ADD and failed its first teardown.
        let both = |f: &Value| {
            let s = f["summary"].as_str().unwrap();
            s.contains("no-bin-0") && s.contains("no-bin-1")
        };
        if f.iter().any(|f| f["severity"] == "critical" && both(f)) {
            break (f, report);
        }
        assert!(
            Instant::now() < deadline,
            "no critical SandboxCreateFailing with the plugin missing: {report:#}"
        );
        std::thread::sleep(Duration::from_secs(3));
    };
    println!("{failing:#?}");
    assert_eq!(failing.len(), 1, "{report:#}");
    let summary = failing[0]["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!("the CNI ADD fails (plugin {MISSING_CNI_PLUGIN})"))
            && summary.contains("no-bin-0")
            && summary.contains("no-bin-1"),
        "{summary}"
    );
    assert!(
        of_kind(&report, "SandboxStopFailing").is_empty(),
        "the failed sandboxes' teardown is reported once, in SandboxCreateFailing: {report:#}"
    );
    ok(rt.block_on(missing.repair()));
    wait_ready(&rt, &pods, "no-bin-0", 180);
    wait_ready(&rt, &pods, "no-bin-1", 180);
    let report = diagnose(&env, &[]);
    for kind in ["SandboxCreateFailing", "SandboxStopFailing"] {
        assert!(
            of_kind(&report, kind).is_empty(),
            "the pods got their sandboxes: {report:#}"
        );
    }
    drop(node);
}
