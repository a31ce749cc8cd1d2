//! `podcoroner gc` against a real containerd: a node of 24 pod sandboxes mixing leaked ones with
//! everything that must survive, `gc --apply` removes exactly the leaked ones, a second run
//! removes nothing, and what changes between planning and acting is left alone.
//!
//! The API server is the recorded `kubectl get pods -o json` shape served through `--pods`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use podcoroner_core::SandboxState;
use podcoroner_cri::RuntimeClient;
use podcoroner_test_support::{BrokenCni, CniFault, ContainerdLab, PodSpec};
use serde_json::{Value, json};

mod common;
use common::{Daemon, free_port, get, ok, pod, pod_list, podcoroner};

const NODE: &str = "gc-node-1";

fn uid(n: u32) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

async fn run_pod(
    lab: &ContainerdLab,
    pod: &PodSpec,
    container: Option<&str>,
    stop: bool,
) -> String {
    let sandbox = ok(lab.run_pod(pod).await);
    if let Some(name) = container {
        ok(lab
            .create_container(&sandbox, pod, name, pod.attempt, true)
            .await);
    }
    if stop {
        ok(lab.stop_sandbox(&sandbox).await);
    }
    sandbox
}

/// A NOTREADY sandbox whose containers the kubelet's GC already removed.
async fn dead(lab: &ContainerdLab, pod: &PodSpec) -> String {
    let sandbox = ok(lab.run_pod(pod).await);
    let c = ok(lab
        .create_container(&sandbox, pod, "app", pod.attempt, true)
        .await);
    ok(lab.stop_container(&c).await);
    ok(lab.remove_container(&c).await);
    ok(lab.stop_sandbox(&sandbox).await);
    sandbox
}

fn api(ns: &str, name: &str, uid: &str) -> Value {
    pod(ns, name, uid, NODE, "Running", json!({}), json!([]))
}

struct Gc {
    lab: ContainerdLab,
    dir: tempfile::TempDir,
    leaked: BTreeSet<String>,
    kept: BTreeSet<String>,
    api_pods: Vec<Value>,
    /// When the last old sandbox was created, and when the first young one was.
    old_done: Instant,
    young_start: Instant,
}

impl Gc {
    fn pods_json(&self) -> PathBuf {
        self.dir.path().join("pods.json")
    }
    fn write_pods(&self, pods: &[Value]) {
        ok(std::fs::write(
            self.pods_json(),
            ok(serde_json::to_vec(&pod_list(pods.to_vec()))),
        ));
    }
    fn args(&self, extra: &[impl AsRef<str>]) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "gc".into(),
            "--runtime-endpoint".into(),
            self.lab.endpoint(),
            "--node-name".into(),
            NODE.into(),
            "--manifest-dir".into(),
            self.dir.path().join("manifests").display().to_string(),
            "--kubelet-root-dir".into(),
            self.dir.path().join("kubelet").display().to_string(),
            "--pods".into(),
            self.pods_json().display().to_string(),
            "--state-dir".into(),
            self.dir.path().join("state").display().to_string(),
            "-o".into(),
            "json".into(),
        ];
        args.extend(extra.iter().map(|s| s.as_ref().to_string()));
        args
    }
    /// The audit log's outcome records (every one but the `intent` written before each action).
    fn audit(&self) -> Vec<Value> {
        self.audit_all()
            .into_iter()
            .filter(|r| r["result"] != "intent")
            .collect()
    }
    /// Every record of the audit log, `intent` ones included.
    fn audit_all(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("state/gc-audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| ok(serde_json::from_str(l)))
            .collect()
    }
    async fn sandboxes(&self) -> BTreeSet<String> {
        let client =
            ok(RuntimeClient::connect(&self.lab.endpoint(), Duration::from_secs(10)).await);
        ok(client.list_sandboxes().await)
            .into_iter()
            .map(|s| s.id)
            .collect()
    }
}

/// 24 sandboxes: 7 leaked (4 of gone pods, 3 older sandboxes of live pods) and 17 that must
/// stay: newest NOTREADY sandboxes of live pods, READY ones, young ones, ones holding exited
/// containers, an excluded namespace, an excluded label, static pods with and without manifest.
async fn build() -> Gc {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    ok(std::fs::create_dir_all(dir.path().join("manifests")));
    ok(std::fs::write(
        dir.path().join("manifests/etcd.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd\n    image: etcd\n",
    ));
    let mut leaked = BTreeSet::new();
    let mut kept = BTreeSet::new();
    let mut api_pods = Vec::new();

    // Leaked: pods gone from the API.
    for i in 0..4 {
        leaked.insert(dead(&lab, &PodSpec::api("shop", &format!("gone-{i}"), &uid(i))).await);
    }
    // Leaked: older sandboxes of live pods (newest READY, or newest NOTREADY kept).
    for i in 10..13 {
        let p = PodSpec::api("shop", &format!("live-{i}"), &uid(i));
        api_pods.push(api("shop", &format!("live-{i}"), &uid(i)));
        leaked.insert(dead(&lab, &p).await);
        let newest = p.clone().with_attempt(1);
        kept.insert(if i == 12 {
            dead(&lab, &newest).await
        } else {
            run_pod(&lab, &newest, Some("app"), false).await
        });
    }
    // Kept: the newest NOTREADY sandbox of a completed pod the API still has.
    for i in 20..22 {
        api_pods.push(api("batch", &format!("job-{i}"), &uid(i)));
        kept.insert(dead(&lab, &PodSpec::api("batch", &format!("job-{i}"), &uid(i))).await);
    }
    // Kept: NOTREADY sandboxes of gone pods still holding an exited container.
    for i in 30..32 {
        kept.insert(
            run_pod(
                &lab,
                &PodSpec::api("shop", &format!("exited-{i}"), &uid(i)),
                Some("app"),
                true,
            )
            .await,
        );
    }
    // Kept: an excluded namespace, and an excluded label.
    kept.insert(dead(&lab, &PodSpec::api("kube-system", "gone-sys", &uid(40))).await);
    kept.insert(
        dead(
            &lab,
            &PodSpec::api("shop", "gone-pinned", &uid(41)).with_label("podcoroner.io/keep", "true"),
        )
        .await,
    );
    // Kept: READY pods in the API.
    for i in 50..53 {
        api_pods.push(api("shop", &format!("web-{i}"), &uid(i)));
        kept.insert(
            run_pod(
                &lab,
                &PodSpec::api("shop", &format!("web-{i}"), &uid(i)),
                Some("web"),
                false,
            )
            .await,
        );
    }
    // Kept: static pods, one with its manifest (NOTREADY, no mirror pod), one running.
    kept.insert(
        dead(
            &lab,
            &PodSpec::static_pod(
                "kube-system",
                &format!("etcd-{NODE}"),
                "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1",
            ),
        )
        .await,
    );
    kept.insert(
        run_pod(
            &lab,
            &PodSpec::static_pod(
                "monitoring",
                &format!("agent-{NODE}"),
                "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2",
            ),
            Some("agent"),
            false,
        )
        .await,
    );

    // Young: created 6 s after the old ones; --gc-min-age falls midway between the two ages
    // (`Gc::flags`), so a slow machine cannot age a young one past it.
    let old_done = Instant::now();
    tokio::time::sleep(Duration::from_secs(6)).await;
    let young_start = Instant::now();
    for i in 60..63 {
        kept.insert(dead(&lab, &PodSpec::api("shop", &format!("young-{i}"), &uid(i))).await);
    }
    let gc = Gc {
        lab,
        dir,
        leaked,
        kept,
        api_pods,
        old_done,
        young_start,
    };
    gc.write_pods(&gc.api_pods);
    gc
}

impl Gc {
    /// `--gc-min-age` midway between the young and the old sandboxes' ages now, the rate and the
    /// exclusion selector.
    fn flags(&self) -> Vec<String> {
        let (old, young) = (self.old_done.elapsed(), self.young_start.elapsed());
        let min_age = (old + young) / 2;
        vec![
            "--gc-min-age".into(),
            format!("{}ms", min_age.as_millis()),
            "--gc-rate".into(),
            "600".into(),
            "--exclude-selector".into(),
            "podcoroner.io/keep=true".into(),
        ]
    }
}

#[tokio::test]
async fn apply_removes_exactly_the_leaked_sandboxes() {
    let gc = build().await;
    assert_eq!(gc.leaked.len() + gc.kept.len(), 24);
    assert_eq!(gc.sandboxes().await, &gc.leaked | &gc.kept);

    // The dry run plans exactly the leaked ones and changes nothing.
    let (code, out, err) = podcoroner(&gc.args(&gc.flags()));
    assert_eq!(code, 0, "{err}");
    let plan: Value = ok(serde_json::from_str(&out));
    assert_eq!(plan["dry_run"], true);
    let planned: BTreeSet<String> = plan["removals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["sandbox_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(planned, gc.leaked);
    let held: BTreeSet<String> = plan["held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        held,
        BTreeSet::from([
            "namespace kube-system is excluded".to_string(),
            "labels match --exclude-selector \"podcoroner.io/keep=true\"".to_string()
        ])
    );
    assert_eq!(gc.sandboxes().await, &gc.leaked | &gc.kept);
    assert_eq!(
        gc.audit()
            .iter()
            .filter(|r| r["result"] == "planned")
            .count(),
        7
    );

    // --apply removes them and nothing else; every container of the rest is intact.
    let client = ok(RuntimeClient::connect(&gc.lab.endpoint(), Duration::from_secs(10)).await);
    let containers_before = ok(client.list_containers().await);
    let mut apply = gc.flags();
    apply.push("--apply".into());
    let (code, out, err) = podcoroner(&gc.args(&apply));
    assert_eq!(code, 0, "{out}\n{err}");
    let done: Value = ok(serde_json::from_str(&out));
    let removed: BTreeSet<String> = done["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] == "removed")
        .map(|r| r["sandbox_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(removed, gc.leaked);
    assert_eq!(gc.sandboxes().await, gc.kept);
    assert_eq!(
        ok(client.list_containers().await),
        containers_before,
        "a container changed"
    );
    let audit = gc.audit();
    let removed_audit: Vec<&Value> = audit.iter().filter(|r| r["result"] == "removed").collect();
    assert_eq!(removed_audit.len(), 7);
    // Each removal was announced by an intent record, flushed before the CRI calls.
    let all = gc.audit_all();
    for r in &removed_audit {
        let at = all.iter().position(|a| a == *r).unwrap();
        assert_eq!(all[at - 1]["result"], "intent", "{:?}", &all[at - 1]);
        assert_eq!(all[at - 1]["sandbox_id"], r["sandbox_id"]);
    }
    assert_eq!(removed_audit[0]["node"], NODE);
    assert_eq!(removed_audit[0]["dry_run"], false);
    assert!(
        removed_audit[0]["rule"]
            .as_str()
            .unwrap()
            .contains("kubelet's sandbox GC should have removed it")
    );

    // A second run finds nothing.
    let mut apply = gc.flags();
    apply.push("--apply".into());
    let (code, out, _) = podcoroner(&gc.args(&apply));
    assert_eq!(code, 0);
    let again: Value = ok(serde_json::from_str(&out));
    assert_eq!(again["removals"], json!([]));
    assert_eq!(gc.sandboxes().await, gc.kept);

    // Without the API view nothing is eligible, and a stale pods file is refused.
    let mut no_api = gc.args(&gc.flags());
    let at = no_api.iter().position(|a| a == "--pods").unwrap();
    no_api.drain(at..at + 2);
    no_api.push("--no-apiserver".into());
    let (_, out, _) = podcoroner(&no_api);
    let refused: Value = ok(serde_json::from_str(&out));
    assert!(
        refused["refused"]
            .as_str()
            .unwrap()
            .contains("without API truth"),
        "{refused}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut stale_flags = gc.flags();
    stale_flags.extend(["--pods-max-age".into(), "1s".into()]);
    let (_, out, _) = podcoroner(&gc.args(&stale_flags));
    let stale: Value = ok(serde_json::from_str(&out));
    assert!(
        stale["refused"]
            .as_str()
            .unwrap()
            .contains("older than --pods-max-age 1s"),
        "{stale}"
    );
}

#[tokio::test]
async fn what_changes_between_planning_and_acting_is_left_alone() {
    let (gc, gone) = leaked_node(3, 100).await;
    // The first removal is done; the run now waits 3 s (20 per minute) before the next.
    let (child, _) = gc.spawn_slow_apply().await;
    // The second sandbox's pod reappears in the API (same UID), the third's pod too under a
    // new name: both must be left alone.
    gc.write_pods(&[
        api("shop", "gone-1", &uid(101)),
        api("shop", "renamed", &uid(102)),
    ]);
    let out = ok(child.wait_with_output());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let results = id_and_result(&gc.audit());
    assert_eq!(
        results,
        vec![
            (gone[0].clone(), "removed".to_string()),
            (gone[1].clone(), "skipped".to_string()),
            (gone[2].clone(), "skipped".to_string()),
        ]
    );
    let reasons: Vec<String> = gc
        .audit()
        .iter()
        .skip(1)
        .map(|r| r["error"].as_str().unwrap().to_string())
        .collect();
    assert!(
        reasons.iter().all(|r| r.contains("is known again")),
        "{reasons:?}"
    );
    let left = gc.sandboxes().await;
    assert_eq!(left, BTreeSet::from([gone[1].clone(), gone[2].clone()]));
    let client = ok(RuntimeClient::connect(&gc.lab.endpoint(), Duration::from_secs(10)).await);
    for id in &left {
        assert_eq!(
            ok(client.sandbox_status(id).await).sandbox.state,
            SandboxState::NotReady
        );
    }
    let _ = Path::new("");
}

/// Audit records as (sandbox ID, result), in order.
fn id_and_result(records: &[Value]) -> Vec<(String, String)> {
    records
        .iter()
        .map(|r| {
            (
                r["sandbox_id"].as_str().unwrap().to_string(),
                r["result"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A `gc -o json` report's results as (sandbox ID, result), in order.
fn results_of(report: &Value) -> Vec<(&str, &str)> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["sandbox_id"].as_str().unwrap(),
                r["result"].as_str().unwrap(),
            )
        })
        .collect()
}

/// containerd's log lines naming `RemovePodSandbox` of `id` (at info level it logs
/// `RemovePodSandbox for "<id>"` on every call).
fn remove_calls(lab: &ContainerdLab, id: &str) -> usize {
    std::fs::read_to_string(lab.dir().join("containerd.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(&format!("RemovePodSandbox for \\\"{id}\\\"")))
        .count()
}

/// A real CNI teardown failure. The CNI config disappears from the conf dir while pods run (a
/// CNI daemonset uninstalled): the kubelet's `StopPodSandbox` of a deleted pod fails in the
/// teardown, leaving the sandbox NOTREADY with its network still set up, and so does every later
/// stop. containerd 1.6 runs the teardown again on every stop of a pod-network sandbox, so the stop
/// of a leaked sandbox whose network was torn down before the fault fails the same way; only a
/// host-network sandbox stops. `gc --apply` records each failure as `stop_failed` with the
/// classified cause, never calls `RemovePodSandbox` on them, moves on, leaves everything else alone
/// and exits 1; once the CNI config is back, the next run removes them.
#[tokio::test]
async fn cni_teardown_failure_is_stop_failed_then_removed_once_repaired() {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    ok(std::fs::create_dir_all(dir.path().join("manifests")));
    let client = ok(RuntimeClient::connect(&lab.endpoint(), Duration::from_secs(10)).await);

    // The pod whose teardown fails: its container was stopped and removed, then the CNI config
    // went.
    let stuck_pod = PodSpec::api("shop", "stuck-0", &uid(200));
    let stuck = ok(lab.run_pod(&stuck_pod).await);
    let c = ok(lab
        .create_container(&stuck, &stuck_pod, "app", 0, true)
        .await);
    ok(lab.stop_container(&c).await);
    ok(lab.remove_container(&c).await);
    // Leaked sandboxes stopped before the fault: one on the pod network, one on the host's.
    let torn_down = dead(&lab, &PodSpec::api("shop", "gone-0", &uid(201))).await;
    let host = dead(
        &lab,
        &PodSpec::api("shop", "gone-host", &uid(202)).with_host_network(),
    )
    .await;
    // Kept: a running pod the API knows, and the newest NOTREADY sandbox of a completed one.
    let mut kept = BTreeSet::new();
    let web = PodSpec::api("shop", "web-0", &uid(210));
    kept.insert(run_pod(&lab, &web, Some("web"), false).await);
    kept.insert(dead(&lab, &PodSpec::api("batch", "job-0", &uid(211))).await);
    let api_pods = vec![
        api("shop", "web-0", &uid(210)),
        api("batch", "job-0", &uid(211)),
    ];

    let gc = Gc {
        lab,
        dir,
        leaked: BTreeSet::from([stuck.clone(), torn_down.clone(), host.clone()]),
        kept: kept.clone(),
        api_pods,
        old_done: Instant::now(),
        young_start: Instant::now(),
    };

    // Declared after the lab: dropped (the config restored) before it, should the test fail.
    let fault = ok(BrokenCni::inject(&gc.lab, CniFault::ConfigRemoved).await);
    // What the kubelet's killPod sees: containerd stops the pause task, then fails the teardown.
    let destroy = |id: &str| {
        format!("failed to destroy network for sandbox \"{id}\": cni plugin not initialized")
    };
    let kubelet_stop = gc.lab.stop_sandbox(&stuck).await.unwrap_err().to_string();
    assert!(kubelet_stop.contains(&destroy(&stuck)), "{kubelet_stop}");
    assert_eq!(
        ok(client.sandbox_status(&stuck).await).sandbox.state,
        SandboxState::NotReady
    );
    let containers_before = ok(client.list_containers().await);
    tokio::time::sleep(Duration::from_millis(1500)).await;

    gc.write_pods(&gc.api_pods);
    let apply = ["--gc-min-age", "1s", "--gc-rate", "600", "--apply"];
    let (code, out, err) = podcoroner(&gc.args(&apply));
    assert_eq!(code, 1, "a failed stop exits 1\n{out}\n{err}");
    let report: Value = ok(serde_json::from_str(&out));
    // Oldest first; a failed stop does not end the run.
    assert_eq!(
        results_of(&report),
        vec![
            (stuck.as_str(), "stop_failed"),
            (torn_down.as_str(), "stop_failed"),
            (host.as_str(), "removed"),
        ]
    );
    for (i, id) in [&stuck, &torn_down].into_iter().enumerate() {
        let failed = &report["results"][i];
        assert!(
            failed["error"].as_str().unwrap().contains(&destroy(id)),
            "{failed}"
        );
        assert_eq!(
            failed["error_class"],
            "CNI teardown: cni plugin not initialized"
        );
        let finding = &report["findings"][i];
        assert_eq!(finding["kind"], "SandboxStopFailing");
        assert_eq!(finding["severity"], "warning");
        assert_eq!(finding["sandbox_id"], id.as_str());
        assert!(
            finding["summary"]
                .as_str()
                .unwrap()
                .ends_with("fails: CNI teardown: cni plugin not initialized"),
            "{finding}"
        );
        assert!(
            finding["remediation"]
                .as_str()
                .unwrap()
                .starts_with("check the CNI config in /etc/cni/net.d"),
            "{finding}"
        );
    }
    assert_eq!(report["findings"].as_array().unwrap().len(), 2, "{report}");
    assert_eq!(report["findings"][0]["pod"]["name"], "stuck-0");
    // Audited, flushed; RemovePodSandbox never reached the runtime for them.
    let audit = gc.audit();
    let line = audit
        .iter()
        .find(|r| r["sandbox_id"] == stuck.as_str())
        .unwrap();
    assert_eq!(line["result"], "stop_failed");
    assert_eq!(
        line["error_class"],
        "CNI teardown: cni plugin not initialized"
    );
    assert_eq!(line["dry_run"], false);
    assert_eq!(line["node"], NODE);
    assert!(
        line["error"].as_str().unwrap().contains(&destroy(&stuck)),
        "{line}"
    );
    assert_eq!(
        audit
            .iter()
            .map(|r| r["result"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["stop_failed", "stop_failed", "removed"]
    );
    assert_eq!(remove_calls(&gc.lab, &stuck), 0);
    assert_eq!(remove_calls(&gc.lab, &torn_down), 0);
    assert_eq!(remove_calls(&gc.lab, &host), 1);
    let mut left = kept.clone();
    left.extend([stuck.clone(), torn_down.clone()]);
    assert_eq!(gc.sandboxes().await, left);
    for id in [&stuck, &torn_down] {
        assert_eq!(
            ok(client.sandbox_status(id).await).sandbox.state,
            SandboxState::NotReady
        );
    }
    assert_eq!(ok(client.list_containers().await), containers_before);

    // The table says the same.
    let mut table = gc.args(&apply);
    table.retain(|a| a != "-o" && a != "json");
    gc.write_pods(&gc.api_pods);
    let (code, out, _) = podcoroner(&table);
    assert_eq!(code, 1);
    assert!(
        out.contains(&format!("stop_failed   {stuck}  shop/stuck-0: "))
            && out.contains("SandboxStopFailing StopPodSandbox of")
            && out.contains("fix: check the CNI config in /etc/cni/net.d"),
        "{out}"
    );

    // The CNI config is back: the next run stops and removes both.
    ok(fault.repair().await);
    gc.write_pods(&gc.api_pods);
    let (code, out, err) = podcoroner(&gc.args(&apply));
    assert_eq!(code, 0, "{out}\n{err}");
    let report: Value = ok(serde_json::from_str(&out));
    assert_eq!(
        results_of(&report),
        vec![(stuck.as_str(), "removed"), (torn_down.as_str(), "removed")]
    );
    assert_eq!(report["findings"], json!([]));
    assert_eq!(gc.sandboxes().await, kept);
    assert_eq!(remove_calls(&gc.lab, &stuck), 1);
}

/// A node with `n` leaked sandboxes (pods `shop/gone-<i>` of UIDs from `first_uid`, gone from an
/// empty `--pods` file), old enough for `--gc-min-age 1s`; their IDs also in creation order.
async fn leaked_node(n: u32, first_uid: u32) -> (Gc, Vec<String>) {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    let mut gone = Vec::new();
    for i in 0..n {
        gone.push(
            dead(
                &lab,
                &PodSpec::api("shop", &format!("gone-{i}"), &uid(first_uid + i)),
            )
            .await,
        );
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let gc = Gc {
        lab,
        dir,
        leaked: gone.iter().cloned().collect(),
        kept: BTreeSet::new(),
        api_pods: vec![],
        old_done: Instant::now(),
        young_start: Instant::now(),
    };
    gc.write_pods(&[]);
    (gc, gone)
}

impl Gc {
    /// Starts `gc --apply --gc-min-age 1s --gc-rate 20` (3 s between actions) and returns once
    /// its first removal is audited, with its flags.
    async fn spawn_slow_apply(&self) -> (std::process::Child, Vec<String>) {
        let mut args = self.args(&["--gc-min-age", "1s", "--gc-rate", "20", "--apply"]);
        args.retain(|a| a != "-o" && a != "json");
        let child = ok(std::process::Command::new(env!("CARGO_BIN_EXE_podcoroner"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn());
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.audit().iter().any(|r| r["result"] == "removed") {
            assert!(Instant::now() < deadline, "no removal within 30 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        (child, args)
    }
}

/// A tmpfs mounted on a directory, unmounted (lazily) however the test ends; dropped before the
/// directory.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        ok(std::fs::create_dir_all(dir));
        let out = ok(std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output());
        assert!(
            out.status.success(),
            "mount tmpfs on {}: {out:?}",
            dir.display()
        );
        Tmpfs(dir.to_path_buf())
    }

    /// A 16 KiB tmpfs on `dir`, filled (written until the disk says no) by the file returned.
    fn full(dir: &Path) -> (Tmpfs, PathBuf) {
        let tmpfs = Tmpfs::mount(dir, "16k");
        let filler = dir.join("filler");
        let mut f = ok(std::fs::File::create(&filler));
        while std::io::Write::write_all(&mut f, &[0u8; 4096]).is_ok() {}
        (tmpfs, filler)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// The state disk is full (a 16 KiB tmpfs, filled): `gc --apply` cannot write the intent record
/// of its first action, so it removes nothing and exits 2 naming the audit log and the error; the
/// audit log holds no partial line. With room again, the same run removes both, each intent
/// flushed before its action.
#[tokio::test]
async fn apply_does_nothing_unaudited_on_a_full_state_disk() {
    let (gc, _) = leaked_node(2, 300).await;
    let state = gc.dir.path().join("state");
    let (_tmpfs, filler) = Tmpfs::full(&state);

    let apply = ["--gc-min-age", "1s", "--gc-rate", "600", "--apply"];
    let (code, out, err) = podcoroner(&gc.args(&apply));
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        err.contains("refusing to act without an audit record: cannot write the audit log")
            && err.contains("gc-audit.jsonl")
            && err.contains("No space left on device")
            && err.contains("0 action(s) done before it"),
        "{err}"
    );
    assert_eq!(out, "");
    assert_eq!(
        gc.sandboxes().await,
        gc.leaked,
        "a sandbox was removed unaudited"
    );
    assert_eq!(
        ok(std::fs::read(state.join("gc-audit.jsonl"))),
        b"",
        "a partial audit line"
    );

    // Room again: the same run acts, and audits each action before taking it.
    ok(std::fs::remove_file(&filler));
    let (code, out, err) = podcoroner(&gc.args(&apply));
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(gc.sandboxes().await, BTreeSet::new());
    let all = id_and_result(&gc.audit_all());
    assert_eq!(all.len(), 4, "{all:?}");
    for pair in all.chunks(2) {
        assert_eq!(
            (pair[0].1.as_str(), pair[1].1.as_str()),
            ("intent", "removed")
        );
        assert_eq!(pair[0].0, pair[1].0);
        assert!(gc.leaked.contains(&pair[0].0));
    }
}

/// Two `gc --apply` at once on one state directory: the first holds `gc.lock` for its whole run
/// (3 removals, 3 s apart at `--gc-rate 20`); the second refuses at once (exit 2, naming the lock
/// and the first one's pid) and does nothing, so the audit log has each removal once.
#[tokio::test]
async fn a_second_apply_on_the_same_state_dir_refuses() {
    let (gc, _) = leaked_node(3, 400).await;
    let (first, args) = gc.spawn_slow_apply().await;
    let (code, out, err) = podcoroner(&args);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        err.contains("another podcoroner gc --apply is acting on")
            && err.contains("gc.lock")
            && err.contains(&format!("pid {} since", first.id()))
            && err.contains("this run does nothing"),
        "{err}"
    );
    let out = ok(first.wait_with_output());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let removed: Vec<String> = gc
        .audit()
        .iter()
        .filter(|r| r["result"] == "removed")
        .map(|r| r["sandbox_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(removed.len(), 3, "{removed:?}");
    assert_eq!(removed.iter().cloned().collect::<BTreeSet<_>>(), gc.leaked);
    assert_eq!(gc.audit_all().len(), 6, "3 intents and 3 removals");
    // The lock is released with the run: the next one may act (nothing left to do).
    let (code, _, err) = podcoroner(&args);
    assert_eq!(code, 0, "{err}");
}

/// The sandbox minimum age and the pods file's freshness are two settings: `--gc-min-age 0s`
/// with a fresh `--pods` file plans the leaked sandboxes created before the file was written,
/// never one created after it (the file cannot know its pod), and `--pods-max-age` alone refuses
/// a stale file.
#[tokio::test]
async fn gc_min_age_zero_with_a_fresh_pods_file_plans() {
    let (gc, _) = leaked_node(2, 500).await;
    // Written now: both leaks are older than the file.
    gc.write_pods(&[]);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let after = dead(&gc.lab, &PodSpec::api("shop", "after-file", &uid(510))).await;
    let (code, out, err) = podcoroner(&gc.args(&["--gc-min-age", "0s"]));
    assert_eq!(code, 0, "{err}");
    let plan: Value = ok(serde_json::from_str(&out));
    assert_eq!(plan["refused"], Value::Null, "{plan}");
    let planned: BTreeSet<String> = plan["removals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["sandbox_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(planned, gc.leaked, "{plan}");
    assert!(!planned.contains(&after));
    // The same file, 2 s old, with --pods-max-age 1s: refused, whatever --gc-min-age says.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (_, out, _) = podcoroner(&gc.args(&["--gc-min-age", "0s", "--pods-max-age", "1s"]));
    let stale: Value = ok(serde_json::from_str(&out));
    let refused = stale["refused"].as_str().unwrap();
    assert!(
        refused.contains("old, older than --pods-max-age 1s: it cannot prove a pod is gone"),
        "{refused}"
    );
    assert_eq!(stale["removals"], json!([]));
}

/// The daemon with `gc: apply` on a full state disk does what `gc --apply` does: it removes
/// nothing it cannot audit first, counts each refused run in
/// `podcoroner_gc_actions_total{result="refused"}` and reports the `state` source unhealthy in
/// `/readyz`; with room again, its next run removes the leak, intent first.
#[tokio::test]
async fn the_daemon_does_nothing_unaudited_on_a_full_state_disk() {
    let (gc, _) = leaked_node(1, 600).await;
    let state = gc.dir.path().join("state");
    let (_tmpfs, filler) = Tmpfs::full(&state);
    let config = gc.dir.path().join("config.yaml");
    ok(std::fs::write(
        &config,
        "gc: apply\ngc_min_age: 1s\ngc_interval: 1s\ngc_rate: 600\nevaluate_interval: 1s\n",
    ));
    let port = free_port();
    let daemon = Daemon::new(ok(std::process::Command::new(env!(
        "CARGO_BIN_EXE_podcoroner"
    ))
    .args(["daemon", "--listen", &format!("127.0.0.1:{port}")])
    .args([
        "--runtime-endpoint",
        &gc.lab.endpoint(),
        "--node-name",
        NODE,
    ])
    .arg("--config")
    .arg(&config)
    .arg("--manifest-dir")
    .arg(gc.dir.path().join("manifests"))
    .arg("--kubelet-root-dir")
    .arg(gc.dir.path().join("kubelet"))
    .arg("--pods")
    .arg(gc.pods_json())
    .arg("--state-dir")
    .arg(&state)
    .args(["--min-age", "0s", "--log-level", "warn"])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()));
    let refused = "podcoroner_gc_actions_total{result=\"refused\"}";
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let m = get(port, "/metrics").1;
        if m.lines().any(|l| l.starts_with(refused)) {
            break;
        }
        if Instant::now() > deadline {
            panic!("no refused GC run within 30 s: {m}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let readyz: Value = ok(serde_json::from_str(&get(port, "/readyz").1));
    let error = readyz["sources"]["state"]["last_error"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(gc.sandboxes().await, gc.leaked, "removed unaudited");
    assert!(
        !get(port, "/metrics").1.contains("result=\"removed\""),
        "a removal was counted"
    );
    ok(std::fs::remove_file(&filler));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !gc.audit().iter().any(|r| r["result"] == "removed") {
        if Instant::now() > deadline {
            panic!("no removal within 30 s of freeing the disk");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(gc.audit_all()[0]["result"], "intent");
    daemon.terminate();
    assert!(
        error.contains("cannot write the audit log") || error.contains("No space left"),
        "{error}"
    );
}
