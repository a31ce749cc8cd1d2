//! `SlowPodStartup`, `SandboxCreateFailing` and `PodStartupMetricInvalid`: must and must not.

use std::time::Duration;

use crate::finding::{Finding, FindingKind, Severity};
use crate::model::NodeView;
use crate::rules::Config;
use crate::rules::logs::diagnose_logs;
use crate::startup::tests::{CONTAINERD, KUBELET, events};

fn cfg(slow_start_secs: u64) -> Config {
    Config {
        min_age: Duration::from_secs(600),
        failed_pod_min_age: Duration::from_secs(3600),
        assume_pods_deleted: false,
        slow_start: Duration::from_secs(slow_start_secs),
    }
}

fn found(kubelet: &str, runtime: &str, slow_start_secs: u64) -> Vec<Finding> {
    let ev = events(kubelet, runtime);
    diagnose_logs(
        &ev,
        &NodeView::empty(),
        &cfg(slow_start_secs),
        "2026-12-02T00:00:00Z".parse().unwrap(),
    )
}

fn of(fs: &[Finding], kind: FindingKind) -> Vec<&Finding> {
    fs.iter().filter(|f| f.kind == kind).collect()
}

#[test]
fn slow_start_names_the_dominant_phase() {
    let fs = found(KUBELET, CONTAINERD, 10);
    let slow = of(&fs, FindingKind::SlowPodStartup);
    assert_eq!(slow.len(), 1, "{fs:#?}");
    let f = slow[0];
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.pod.as_ref().unwrap().name, "web-0");
    assert!(
        f.summary.contains("took 24s from bound to Ready")
            && f.summary.contains("image_pull took 12s (50 %)"),
        "{}",
        f.summary
    );
    assert!(f.remediation.contains("pre-pull"), "{}", f.remediation);
    assert!(
        f.evidence.iter().any(|e| e
            .detail()
            .starts_with("sandbox 5s: RunPodSandbox started (containerd.log:1")),
        "{:#?}",
        f.evidence
    );
    // Under the threshold: nothing.
    assert!(
        of(
            &found(KUBELET, CONTAINERD, 180),
            FindingKind::SlowPodStartup
        )
        .is_empty()
    );
}

#[test]
fn slow_sandbox_is_the_sandbox_phase() {
    // The CNI ADD takes 40 s: RunPodSandbox started 21.9, returned 61.9; the image is present.
    let kubelet = r#"I1201 12:30:21.819561   21520 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["shop/web-0"]
I1201 12:31:02.100000   21520 kubelet.go:2544] "SyncLoop (PLEG): event for pod" pod="shop/web-0" event={"ID":"646c7313-d413-43a6-98c6-aeb38a4f4979","Type":"ContainerStarted","Data":"09d1a39d1dc2b0012a98fec817a9d39e4f7bcd3f980e0711e85c21b6cc3d4b75"}
I1201 12:30:62.000000   21520 event.go:389] "Event occurred" object="shop/web-0" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="Pulled" message="Container image \"nginx\" already present on machine"
I1201 12:31:02.200000   21520 event.go:389] "Event occurred" object="shop/web-0" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="Started" message="Started container main"
I1201 12:31:02.950712   21520 pod_startup_latency_tracker.go:104] "Observed pod startup duration" pod="shop/web-0" podStartSLOduration=41.95 podStartE2EDuration="41.95s" podCreationTimestamp="2026-12-01 12:30:21 +0000 UTC" firstStartedPulling="0001-01-01 00:00:00 +0000 UTC" lastFinishedPulling="0001-01-01 00:00:00 +0000 UTC" observedRunningTime="2026-12-01 12:31:02.9 +0000 UTC m=+2.5" watchObservedRunningTime="2026-12-01 12:31:02.95 +0000 UTC m=+2.53"
"#
    .replace("12:30:62.000000", "12:31:02.000000");
    let containerd = r#"time="2026-12-01T12:30:21.900000000Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:web-0,Uid:646c7313-d413-43a6-98c6-aeb38a4f4979,Namespace:shop,Attempt:0,}"
time="2026-12-01T12:31:01.900000000Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:web-0,Uid:646c7313-d413-43a6-98c6-aeb38a4f4979,Namespace:shop,Attempt:0,} returns sandbox id \"09d1a39d1dc2b0012a98fec817a9d39e4f7bcd3f980e0711e85c21b6cc3d4b75\""
"#;
    let fs = found(&kubelet, containerd, 30);
    let slow = of(&fs, FindingKind::SlowPodStartup);
    assert_eq!(slow.len(), 1, "{fs:#?}");
    assert!(
        slow[0].summary.contains("sandbox took 40s"),
        "{}: {:#?}",
        slow[0].summary,
        slow[0].evidence
    );
    assert!(slow[0].remediation.contains("CNI"));
}

/// containerd's `RunPodSandbox … failed` for pod `name` (UID `uid`) at `hh:mm:ss`.
fn run_failed(name: &str, uid: &str, at: &str, err: &str) -> String {
    format!(
        "time=\"2026-12-01T{at}.000000000Z\" level=error msg=\"RunPodSandbox for &PodSandboxMetadata{{Name:{name},Uid:{uid},Namespace:shop,Attempt:0,}} failed, error\" error=\"{err}\""
    )
}

const CNI_ADD: &str = "failed to setup network for sandbox \\\"f1f5708a3613e62a4d38161c36417538dbc3b1e46020bea2a4a7c4cca87603a0\\\": plugin type=\\\"calico\\\" failed (add): stat /var/lib/calico/nodename: no such file or directory";
const UID_A: &str = "aaaaaaaa-d413-43a6-98c6-aeb38a4f4979";
const UID_B: &str = "bbbbbbbb-d413-43a6-98c6-aeb38a4f4979";

#[test]
fn sandbox_create_failing_cni_add() {
    let mut lines = Vec::new();
    for at in ["12:00:00", "12:00:12", "12:00:35"] {
        lines.push(run_failed("api-a", UID_A, at, CNI_ADD));
        lines.push(run_failed("api-b", UID_B, at, CNI_ADD));
    }
    let rt = lines.join("\n");
    let fs = found("", &rt, 180);
    let sc = of(&fs, FindingKind::SandboxCreateFailing);
    assert_eq!(sc.len(), 1, "{fs:#?}");
    assert_eq!(sc[0].severity, Severity::Critical);
    assert!(
        sc[0].summary.contains("the CNI ADD fails (plugin calico)")
            && sc[0].summary.contains("2 pods wait")
            // containerd's PodSandboxMetadata names each pod.
            && sc[0].summary.contains("(shop/api-a, shop/api-b)"),
        "{}",
        sc[0].summary
    );

    // Another pod got a sandbox meanwhile: the node can still start pods, a warning.
    let ok = "time=\"2026-12-01T12:00:20.000000000Z\" level=info msg=\"RunPodSandbox for &PodSandboxMetadata{Name:web-9,Uid:cccccccc-d413-43a6-98c6-aeb38a4f4979,Namespace:shop,Attempt:0,} returns sandbox id \\\"09d1a39d1dc2b0012a98fec817a9d39e4f7bcd3f980e0711e85c21b6cc3d4b75\\\"\"";
    let fs = found("", &format!("{rt}\n{ok}"), 180);
    let sc = of(&fs, FindingKind::SandboxCreateFailing);
    assert_eq!(sc.len(), 1);
    assert_eq!(sc[0].severity, Severity::Warning);
}

#[test]
fn sandbox_create_failing_must_not() {
    // One attempt: maybe a transient error, an info.
    let one = run_failed("api-a", UID_A, "12:00:00", CNI_ADD);
    let fs = found("", &one, 180);
    let sc = of(&fs, FindingKind::SandboxCreateFailing);
    assert_eq!(sc.len(), 1, "{fs:#?}");
    assert_eq!(sc[0].severity, Severity::Info);
    assert!(
        sc[0].summary.starts_with(
            "a pod sandbox creation failed once: the CNI ADD fails (plugin calico): the plugin's \
             node agent is not running (the file it writes at its start is missing, or it refuses \
             the plugin's calls) (shop/api-a)"
        ),
        "{}",
        sc[0].summary
    );
    // The pod got its sandbox after the failures.
    let ok = format!(
        "time=\"2026-12-01T12:01:00.000000000Z\" level=info msg=\"RunPodSandbox for &PodSandboxMetadata{{Name:api-a,Uid:{UID_A},Namespace:shop,Attempt:1,}} returns sandbox id \\\"09d1a39d1dc2b0012a98fec817a9d39e4f7bcd3f980e0711e85c21b6cc3d4b75\\\"\""
    );
    let rt = [
        run_failed("api-a", UID_A, "12:00:00", CNI_ADD),
        run_failed("api-a", UID_A, "12:00:20", CNI_ADD),
        ok,
    ]
    .join("\n");
    assert!(of(&found("", &rt, 180), FindingKind::SandboxCreateFailing).is_empty());
    // A timeout is RuntimeUnhealthy's.
    let kubelet = [
        r#"E1201 12:00:00.000000    1 log.go:32] "RunPodSandbox from runtime service failed" err="rpc error: code = DeadlineExceeded desc = context deadline exceeded" pod="shop/api-a" podUID="aaaaaaaa-d413-43a6-98c6-aeb38a4f4979""#,
        r#"E1201 12:00:30.000000    1 log.go:32] "RunPodSandbox from runtime service failed" err="rpc error: code = DeadlineExceeded desc = context deadline exceeded" pod="shop/api-a" podUID="aaaaaaaa-d413-43a6-98c6-aeb38a4f4979""#,
    ]
    .join("\n");
    let fs = found(&kubelet, "", 180);
    assert!(
        of(&fs, FindingKind::SandboxCreateFailing).is_empty(),
        "{fs:#?}"
    );
    assert_eq!(of(&fs, FindingKind::RuntimeUnhealthy).len(), 1);
}

#[test]
fn name_reserved_is_the_leaked_sandbox_finding() {
    let holder = "4b31f1c4a8b1e6b0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4";
    let err = format!(
        "failed to reserve sandbox name \\\"api-a_shop_{UID_A}_0\\\": name \\\"api-a_shop_{UID_A}_0\\\" is reserved for \\\"{holder}\\\""
    );
    let rt = [
        run_failed("api-a", UID_A, "12:00:00", &err),
        run_failed("api-a", UID_A, "12:00:20", &err),
    ]
    .join("\n");
    let fs = found("", &rt, 180);
    assert!(
        of(&fs, FindingKind::SandboxCreateFailing).is_empty(),
        "{fs:#?}"
    );
    assert!(
        of(&fs, FindingKind::LeakedSandbox)
            .iter()
            .any(|f| f.sandbox_id.as_deref() == Some(holder))
    );
}

#[test]
fn impossible_sli_is_an_info() {
    // k/k #130432: a pull finished without its start, the SLI about -9.22e+09.
    let bad = r#"I0303 22:05:07.349917 1003926 pod_startup_latency_tracker.go:104] "Observed pod startup duration" pod="default/resource-consume-6f5d8d9765-wpkvz" podStartSLOduration=-9223372018.504866 podStartE2EDuration="18.349908634s" podCreationTimestamp="2025-03-03 22:04:49 +0800 CST" firstStartedPulling="0001-01-01 00:00:00 +0000 UTC" lastFinishedPulling="2025-03-03 22:05:07.085314092 +0800 CST m=+1373.583831073" observedRunningTime="2025-03-03 22:05:07.349804342 +0800 CST m=+1373.848321281" watchObservedRunningTime="2025-03-03 22:05:07.349908634 +0800 CST m=+1373.848425614""#;
    let fs = found(bad, "", 180);
    let m = of(&fs, FindingKind::PodStartupMetricInvalid);
    assert_eq!(m.len(), 1, "{fs:#?}");
    assert_eq!(m[0].severity, Severity::Info);
    assert!(
        m[0].summary.contains("-9.223e9") && m[0].summary.contains("#130432"),
        "{}",
        m[0].summary
    );
    // Sane values: nothing.
    assert!(
        of(
            &found(KUBELET, CONTAINERD, 180),
            FindingKind::PodStartupMetricInvalid
        )
        .is_empty()
    );
}

#[test]
fn a_pod_still_pending_waits_in_its_phase() {
    use crate::model::{ApiPod, ApiPodStartup, ApiView, PodRef};
    let t = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
    let kubelet = r#"I1201 12:00:00.100000   21520 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["shop/api-a"]
I1201 12:00:00.200000   21520 pod_workers.go:788] "Pod is being synced for the first time" pod="shop/api-a" podUID="aaaaaaaa-d413-43a6-98c6-aeb38a4f4979" updateType="create"
I1201 12:00:01.415267   21520 kuberuntime_manager.go:1351] "Created PodSandbox for pod" podSandboxID="09d1a39d1dc2b0012a98fec817a9d39e4f7bcd3f980e0711e85c21b6cc3d4b75" pod="shop/api-a"
I1201 12:00:01.418000   21520 event.go:389] "Event occurred" object="shop/api-a" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="Pulling" message="Pulling image \"registry.example/api:1\""
I1201 12:00:31.418000   21520 event.go:389] "Event occurred" object="shop/api-a" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="BackOff" message="Back-off pulling image \"registry.example/api:1\""
"#;
    let ev = events(kubelet, "");
    let mut view = NodeView::empty();
    view.node_name = "n".into();
    let pod = |phase: &str| ApiPod {
        pod: PodRef {
            namespace: "shop".into(),
            name: "api-a".into(),
            uid: UID_A.into(),
        },
        node_name: "n".into(),
        phase: phase.into(),
        reason: None,
        annotations: Default::default(),
        created_at: Some(t("2026-12-01T12:00:00Z")),
        deletion_timestamp: None,
        deletion_grace_period_seconds: None,
        status_changed_at: None,
        startup: ApiPodStartup {
            scheduled_at: Some(t("2026-12-01T12:00:00Z")),
            ..ApiPodStartup::default()
        },
    };
    let mut judge = |phase: &str, now: &str| {
        view.api = Some(ApiView {
            pods: vec![pod(phase)],
            origin: "test".into(),
        });
        diagnose_logs(&ev, &view, &cfg(180), t(now))
    };
    let fs = judge("Pending", "2026-12-01T12:10:00Z");
    let slow = of(&fs, FindingKind::SlowPodStartup);
    assert_eq!(slow.len(), 1, "{fs:#?}");
    assert!(
        slow[0]
            .summary
            .contains("has not started 10m0s after it was bound (over --slow-start 3m0s): it waits in image_pull"),
        "{}",
        slow[0].summary
    );
    // Not yet over --slow-start, or Running: nothing.
    assert!(
        of(
            &judge("Pending", "2026-12-01T12:02:00Z"),
            FindingKind::SlowPodStartup
        )
        .is_empty()
    );
    assert!(
        of(
            &judge("Running", "2026-12-01T12:10:00Z"),
            FindingKind::SlowPodStartup
        )
        .is_empty()
    );
}

// === image pulls: containerd's PullImage joined, the newer key set's total ===

/// The real node's late image (crates/cli/tests/real_startup.rs, kubelet v1.34.4 and its
/// containerd): the kubelet's Pulling event names the pod, containerd's PullImage only the image.
const LATE_KUBELET: &str = r#"I1201 21:19:38.624626    5629 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["shop/late-image"]
I1201 21:19:38.832674    5629 kuberuntime_manager.go:1351] "Created PodSandbox for pod" podSandboxID="bbeb1598e612df8d855b157c51070aa54f71029e56c97cad770c382eb5d37ecc" pod="shop/late-image"
I1201 21:19:38.835001    5629 event.go:389] "Event occurred" object="shop/late-image" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="Pulling" message="Pulling image \"localhost/podcoroner/late:1\""
"#;
const LATE_CONTAINERD: &str = r#"time="2026-12-01T21:19:38.835224373Z" level=info msg="PullImage \"localhost/podcoroner/late:1\""
time="2026-12-01T21:19:38.839702377Z" level=error msg="PullImage \"localhost/podcoroner/late:1\" failed" error="failed to pull and unpack image \"localhost/podcoroner/late:1\": failed to resolve reference \"localhost/podcoroner/late:1\": failed to do request: Head \"http://localhost/v2/podcoroner/late/manifests/1\": dial tcp 127.0.0.1:80: connect: connection refused"
"#;

fn joined(kubelet: &str, runtime: &str) -> Vec<((String, String), Vec<String>)> {
    let ev = events(kubelet, runtime);
    let logs = crate::rules::logs::Logs::new(&ev);
    let mut out: Vec<((String, String), Vec<String>)> = super::joined_pulls(&logs)
        .into_iter()
        .map(|(pod, at)| {
            let lines = at
                .iter()
                .map(|&i| format!("{}:{}", logs.all[i].origin, logs.all[i].line))
                .collect();
            (pod, lines)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_runtime_pull_joins_the_pod_the_kubelet_names() {
    assert_eq!(
        joined(LATE_KUBELET, LATE_CONTAINERD),
        vec![(
            ("shop".to_string(), "late-image".to_string()),
            vec![
                "containerd.log:1".to_string(),
                "containerd.log:2".to_string()
            ]
        )]
    );
    // A pull no kubelet line names a pod for: unjoined.
    assert_eq!(joined("", LATE_CONTAINERD), vec![]);
    // Another image's pull at the same time: unjoined.
    let other = LATE_KUBELET.replace("podcoroner/late:1", "podcoroner/other:1");
    assert_eq!(joined(&other, LATE_CONTAINERD), vec![]);
    // Two pods pulling the image within the second: which call is whose is not known.
    let two = format!(
        "{LATE_KUBELET}{}",
        LATE_KUBELET
            .lines()
            .nth(2)
            .unwrap()
            .replace("shop/late-image", "shop/late-image-2")
            .replace("38.835001", "38.900001")
    );
    assert_eq!(joined(&two, LATE_CONTAINERD), vec![]);
}

#[test]
fn the_runtime_pull_gives_the_pull_end_the_kubelet_does_not_log() {
    // containerd 1.7's PullImage lines of a public report (nginx:stable from a mirror), with the
    // kubelet's Pulling event of the pod (v1.34.4's wording) and no Pulled line (the log cut
    // there).
    let kubelet = r#"I0531 15:38:20.101000    2310 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["web/nginx2"]
I0531 15:38:20.300000    2310 kuberuntime_manager.go:1351] "Created PodSandbox for pod" podSandboxID="62bf68fc44fefc867bd75805cd9fa75e9bc414da1c3f7ab930df4c51d3d02cd8" pod="web/nginx2"
I0531 15:38:20.312000    2310 event.go:389] "Event occurred" object="web/nginx2" fieldPath="spec.containers{nginx2}" kind="Pod" apiVersion="v1" type="Normal" reason="Pulling" message="Pulling image \"nginx:stable\""
"#;
    let containerd = r#"time="2023-05-31T15:38:20.312519113Z" level=info msg="PullImage \"nginx:stable\""
time="2023-05-31T15:38:26.260038937Z" level=info msg="PullImage \"nginx:stable\" returns image reference \"sha256:1e96add5ea29fed5b25c2971895403f050ca1eaa5f614da0ee02106e97805f5f\""
"#;
    // The report is of 2023; events() reads the kubelet's year-less klog dates as 2026.
    let ev = events(kubelet, &containerd.replace("2023-05-31", "2026-05-31"));
    let b = crate::rules::startup_breakdowns(&NodeView::empty(), &ev);
    let b = b
        .iter()
        .find(|b| b.pod.name == "nginx2")
        .expect("a breakdown");
    let pull = b
        .phase(crate::startup::Phase::ImagePull)
        .expect("a pull phase");
    assert_eq!(pull.start.what, "Pulling image");
    assert_eq!(pull.end.what, "containerd PullImage returned");
    assert_eq!(pull.end.origin.as_deref(), Some("containerd.log:2"));
    assert_eq!(pull.end.source, crate::finding::EvidenceSource::RuntimeLog);
    assert_eq!(pull.duration().as_millis(), 5948);
}

#[test]
fn the_newer_key_sets_total_pull_time_is_the_pull_phase() {
    // A 1.35 kubelet's record (a public report's line) with the pod's sandbox line before it.
    let kubelet = r#"I0923 11:40:47.700000  471811 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["lab/api-8cdfd76f-mwwhz"]
I0923 11:40:47.850000  471811 kuberuntime_manager.go:1351] "Created PodSandbox for pod" podSandboxID="b3c4f0e2f1f1a4e35a1a0f6bfc1f0c7d0e6b9f35cf3f7c04cb5c7d8f7d1f1a2b" pod="lab/api-8cdfd76f-mwwhz"
I0923 11:41:13.979360  471811 pod_startup_latency_tracker.go:148] "Observed pod startup duration" pod="lab/api-8cdfd76f-mwwhz" podStartSLOduration=26.79312747 podStartE2EDuration="26.973310511s" totalImagesPullingTime="180.183041ms" totalInitContainerRuntime="0s" isStatefulPod=true podCreationTimestamp="2026-09-23 11:40:47 +0000 UTC" imagePullSessionsCount=1 imagePullSessionsStartsCount=0 observedRunningTime="2026-09-23 11:40:48.09362143 +0000 UTC m=+4208.644264215" watchObservedRunningTime="2026-09-23 11:41:13.973310511 +0000 UTC m=+4234.52"
"#;
    let b = crate::rules::startup_breakdowns(&NodeView::empty(), &events(kubelet, ""));
    let pull = b[0]
        .phase(crate::startup::Phase::ImagePull)
        .expect("a pull phase");
    assert_eq!(pull.duration().as_nanos(), 180_183_041);
    assert_eq!(pull.start.what, "Created PodSandbox for pod");
    assert_eq!(
        pull.end.what,
        "Created PodSandbox for pod + totalImagesPullingTime 180ms 183µs 41ns (\"Observed pod startup duration\")"
    );
    assert_eq!(pull.end.origin.as_deref(), Some("kubelet.log:3"));
    // Nothing pulled ("0s"): no pull phase.
    let none = kubelet.replace(
        "totalImagesPullingTime=\"180.183041ms\"",
        "totalImagesPullingTime=\"0s\"",
    );
    let b = crate::rules::startup_breakdowns(&NodeView::empty(), &events(&none, ""));
    assert!(
        b[0].phase(crate::startup::Phase::ImagePull).is_none(),
        "{b:#?}"
    );
}
