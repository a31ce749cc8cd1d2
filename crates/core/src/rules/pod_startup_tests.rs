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
            .detail
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
    // One attempt: a transient error.
    let one = run_failed("api-a", UID_A, "12:00:00", CNI_ADD);
    assert!(of(&found("", &one, 180), FindingKind::SandboxCreateFailing).is_empty());
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
