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
use podcoroner_test_support::{ContainerdLab, PodSpec};
use serde_json::{Value, json};

mod common;
use common::{ok, pod, pod_list, podcoroner};

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
    fn audit(&self) -> Vec<Value> {
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
    stale_flags[1] = "1s".into();
    let (_, out, _) = podcoroner(&gc.args(&stale_flags));
    let stale: Value = ok(serde_json::from_str(&out));
    assert!(
        stale["refused"]
            .as_str()
            .unwrap()
            .contains("older than --gc-min-age"),
        "{stale}"
    );
}

#[tokio::test]
async fn what_changes_between_planning_and_acting_is_left_alone() {
    let lab = ok(ContainerdLab::start());
    let dir = ok(tempfile::tempdir());
    let mut gone = Vec::new();
    for i in 0..3 {
        gone.push(
            dead(
                &lab,
                &PodSpec::api("shop", &format!("gone-{i}"), &uid(100 + i)),
            )
            .await,
        );
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let gc = Gc {
        lab,
        dir,
        leaked: BTreeSet::new(),
        kept: BTreeSet::new(),
        api_pods: vec![],
        old_done: Instant::now(),
        young_start: Instant::now(),
    };
    gc.write_pods(&[]);
    let mut args = gc.args(&["--gc-min-age", "1s", "--gc-rate", "20", "--apply"]);
    args.retain(|a| a != "-o" && a != "json");
    let child = ok(std::process::Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn());

    // The first removal is done; the run now waits 3 s (20 per minute) before the next.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !gc.audit().iter().any(|r| r["result"] == "removed") {
        assert!(Instant::now() < deadline, "no removal within 30 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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

    let results: Vec<(String, String)> = gc
        .audit()
        .iter()
        .map(|r| {
            (
                r["sandbox_id"].as_str().unwrap().to_string(),
                r["result"].as_str().unwrap().to_string(),
            )
        })
        .collect();
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
