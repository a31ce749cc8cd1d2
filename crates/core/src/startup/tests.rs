//! The breakdown on real kubelet v1.34.4 and containerd records.

use super::*;
use crate::event::LogKind;
use crate::logs::{ParseContext, classify, parse};

pub(crate) fn events(kubelet: &str, runtime: &str) -> Vec<LoggedEvent> {
    let mut out = Vec::new();
    for (text, log, origin) in [
        (kubelet, LogKind::Kubelet, "kubelet.log"),
        (runtime, LogKind::Runtime, "containerd.log"),
    ] {
        let mut ctx = ParseContext::new(2026);
        for (i, l) in text.lines().enumerate() {
            let p = parse(l, &mut ctx);
            if let Some(e) = classify(&p) {
                out.push(LoggedEvent::new(
                    e.into_owned(),
                    log,
                    origin.into(),
                    i as u64 + 1,
                    l.into(),
                    0,
                ));
            }
        }
    }
    out.sort_by_key(|e| e.time);
    out
}

fn pod() -> PodRef {
    PodRef {
        namespace: "shop".into(),
        name: "web-0".into(),
        uid: "646c7313-d413-43a6-98c6-aeb38a4f4979".into(),
    }
}

pub(crate) const KUBELET: &str = r#"I1201 12:30:21.819561   21520 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["shop/web-0"]
I1201 12:30:21.821317   21520 pod_workers.go:788] "Pod is being synced for the first time" pod="shop/web-0" podUID="646c7313-d413-43a6-98c6-aeb38a4f4979" updateType="create"
I1201 12:30:27.415267   21520 kuberuntime_manager.go:1351] "Created PodSandbox for pod" podSandboxID="09d1a39d1dc2b0012a98fec817a9d39e4f7bcd3f980e0711e85c21b6cc3d4b75" pod="shop/web-0"
I1201 12:30:27.418000   21520 event.go:389] "Event occurred" object="shop/web-0" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="Pulling" message="Pulling image \"nginx:1.27\""
I1201 12:30:39.418836   21520 event.go:389] "Event occurred" object="shop/web-0" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="Pulled" message="Successfully pulled image \"nginx:1.27\" in 12s (12s including waiting). Image size: 100 bytes."
I1201 12:30:39.629273   21520 event.go:389] "Event occurred" object="shop/web-0" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="Started" message="Started container main"
I1201 12:30:40.950712   21520 pod_startup_latency_tracker.go:104] "Observed pod startup duration" pod="shop/web-0" podStartSLOduration=7.9506937930000001 podStartE2EDuration="19.950693793s" podCreationTimestamp="2026-12-01 12:30:21 +0000 UTC" firstStartedPulling="2026-12-01 12:30:27.418 +0000 UTC m=+2.5" lastFinishedPulling="2026-12-01 12:30:39.418 +0000 UTC m=+14.5" observedRunningTime="2026-12-01 12:30:40.94219947 +0000 UTC m=+2.521798272" watchObservedRunningTime="2026-12-01 12:30:40.950693793 +0000 UTC m=+2.530292595"
I1201 12:30:45.100000   21520 kubelet.go:2659] "SyncLoop (probe)" probe="readiness" status="ready" pod="shop/web-0"
"#;

pub(crate) const CONTAINERD: &str = r#"time="2026-12-01T12:30:21.900000000Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:web-0,Uid:646c7313-d413-43a6-98c6-aeb38a4f4979,Namespace:shop,Attempt:0,}"
time="2026-12-01T12:30:27.414699532Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:web-0,Uid:646c7313-d413-43a6-98c6-aeb38a4f4979,Namespace:shop,Attempt:0,} returns sandbox id \"09d1a39d1dc2b0012a98fec817a9d39e4f7bcd3f980e0711e85c21b6cc3d4b75\""
"#;

#[test]
fn real_lines_are_classified() {
    let ev = events(KUBELET, CONTAINERD);
    let kinds: Vec<EventKind> = ev.iter().map(|e| e.event.kind).collect();
    for k in [
        EventKind::PodSandboxCreated,
        EventKind::ImagePulling,
        EventKind::ImagePulled,
        EventKind::ContainerStartedLogged,
        EventKind::PodStartupObserved,
        EventKind::ReadinessProbeReady,
        EventKind::RunPodSandboxStarted,
        EventKind::RunPodSandboxDone,
    ] {
        assert!(kinds.contains(&k), "{k:?} in {kinds:?}");
    }
    let pulled = ev
        .iter()
        .find(|e| e.event.kind == EventKind::ImagePulled)
        .unwrap();
    assert_eq!(pulled.event.ids.pods[0].name, "web-0");
}

#[test]
fn breakdown_from_logs_alone() {
    let ev = events(KUBELET, CONTAINERD);
    let recs: Vec<&LoggedEvent> = ev.iter().collect();
    let b = breakdown(&pod(), &recs, None, None).unwrap();
    let secs = |p: Phase| b.phase(p).map(|s| s.duration().as_secs_f64());
    // Bound: the kubelet's podCreationTimestamp (12:30:21) to SyncLoop ADD (12:30:21.82).
    assert_eq!(secs(Phase::Admission), Some(0.819561));
    // RunPodSandbox started 21.9, returned 27.41.
    assert_eq!(secs(Phase::Sandbox), Some(5.514699532));
    assert_eq!(secs(Phase::ImagePull), Some(12.000836));
    assert_eq!(b.phase(Phase::InitContainers), None);
    assert_eq!(secs(Phase::ContainerStart), Some(0.210437));
    assert_eq!(secs(Phase::Readiness), Some(5.470727));
    assert!(b.ready_is_ready);
    assert_eq!(b.dominant().unwrap().phase, Phase::ImagePull);
    assert_eq!(b.total().unwrap().as_secs_f64(), 24.1);
    let sandbox = b.phase(Phase::Sandbox).unwrap();
    assert_eq!(sandbox.start.source, EvidenceSource::RuntimeLog);
    assert_eq!(sandbox.end.origin.as_deref(), Some("containerd.log:2"));
    let (o, _) = b.observed.as_ref().unwrap();
    assert_eq!(o.slo_seconds, Some(7.950693793));
}

#[test]
fn api_conditions_win_over_logs() {
    let ev = events(KUBELET, CONTAINERD);
    let recs: Vec<&LoggedEvent> = ev.iter().collect();
    let t = |s: &str| s.parse::<Timestamp>().unwrap();
    let api = ApiPod {
        pod: pod(),
        node_name: "n".into(),
        phase: "Running".into(),
        reason: None,
        annotations: Default::default(),
        created_at: Some(t("2026-12-01T12:30:20Z")),
        deletion_timestamp: None,
        deletion_grace_period_seconds: None,
        status_changed_at: None,
        startup: crate::model::ApiPodStartup {
            scheduled_at: Some(t("2026-12-01T12:30:20.5Z")),
            initialized_at: Some(t("2026-12-01T12:30:27.5Z")),
            containers_ready_at: Some(t("2026-12-01T12:30:50Z")),
            ready_at: Some(t("2026-12-01T12:30:50Z")),
            init_containers: 0,
            containers_started_at: vec![("main".into(), t("2026-12-01T12:30:39Z"))],
        },
    };
    let b = breakdown(&pod(), &recs, Some(&api), None).unwrap();
    assert_eq!(b.bound.as_ref().unwrap().what, "API condition PodScheduled");
    assert_eq!(b.ready.as_ref().unwrap().what, "API condition Ready");
    assert_eq!(b.total().unwrap().as_secs_f64(), 29.5);
    // No init containers: no init phase even though Initialized is set.
    assert_eq!(b.phase(Phase::InitContainers), None);
    assert_eq!(
        b.phase(Phase::Readiness).unwrap().duration().as_secs_f64(),
        10.370727
    );
}

#[test]
fn json_observed_record_of_the_real_node() {
    // testdata/cases/39 (kubelet v1.34.4, JSON format): the older key set with times as epoch ms.
    let line = r#"{"ts":1796128210272.48,"caller":"util/pod_startup_latency_tracker.go:104","msg":"Observed pod startup duration","v":0,"pod":{"name":"web-0","namespace":"shop"},"podStartSLOduration":2.272456427,"podStartE2EDuration":"2.272456427s","podCreationTimestamp":1796128210272.4932,"firstStartedPulling":1796128210272.4934,"lastFinishedPulling":1796128210272.4937,"observedRunningTime":1796128210272.494,"watchObservedRunningTime":1796128210272.4946}"#;
    let ev = events(line, "");
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].event.kind, EventKind::PodStartupObserved);
    let o = values::observed(&ev[0]);
    assert_eq!(o.slo_seconds, Some(2.272456427));
    assert_eq!(o.e2e.unwrap().as_nanos(), 2_272_456_427);
    // Its time values are the record's own time (the JSON format's quirk): not read; the
    // creation is the record's time less the E2E duration.
    assert_eq!(o.first_started_pulling, None);
    assert_eq!(o.watch_observed_running, None);
    assert_eq!(o.created_at.unwrap().as_millisecond(), 1796128210272 - 2272);
}

#[test]
fn newer_key_set() {
    // k/k #131950's keys, as a 1.35 kubelet logs them (a public report's line).
    let line = r#"I0923 11:41:13.979360  471811 pod_startup_latency_tracker.go:148] "Observed pod startup duration" pod="lab/api-8cdfd76f-mwwhz" podStartSLOduration=26.79312747 podStartE2EDuration="26.973310511s" totalImagesPullingTime="180.183041ms" totalInitContainerRuntime="0s" isStatefulPod=true podCreationTimestamp="2026-09-23 11:40:47 +0000 UTC" imagePullSessionsCount=1 imagePullSessionsStartsCount=0 observedRunningTime="2026-09-23 11:40:48.09362143 +0000 UTC m=+4208.644264215" watchObservedRunningTime="2026-09-23 11:41:13.973310511 +0000 UTC m=+4234.52"
"#;
    let ev = events(line, "");
    let o = values::observed(&ev[0]);
    assert_eq!(o.total_images_pulling.unwrap().as_nanos(), 180_183_041);
    assert_eq!(o.total_init_container_runtime, Some(SignedDuration::ZERO));
    assert_eq!(o.first_started_pulling, None);
    assert_eq!(o.e2e.unwrap().as_millis(), 26_973);
}

#[test]
fn profile_counts_totals_that_end_at_running() {
    let ev = events(KUBELET, CONTAINERD);
    let with_ready: Vec<&LoggedEvent> = ev.iter().collect();
    // The same start without its readiness probe line: its total ends at running.
    let no_probe: Vec<&LoggedEvent> = ev
        .iter()
        .filter(|e| e.event.kind != EventKind::ReadinessProbeReady)
        .collect();
    let ready = breakdown(&pod(), &with_ready, None, None).unwrap();
    let running = breakdown(&pod(), &no_probe, None, None).unwrap();
    assert!(ready.ready_is_ready);
    assert!(!running.ready_is_ready);

    let both = profile(&[ready.clone(), running.clone()]);
    assert_eq!(both.total.map(|t| t.pods), Some(2));
    assert_eq!(both.total_to_running, 1);
    assert!(
        both.to_text().ends_with(" (1 to running, no Ready seen)\n"),
        "{}",
        both.to_text()
    );
    let only_ready = profile(&[ready]);
    assert_eq!(only_ready.total_to_running, 0);
    assert!(!only_ready.to_text().contains("to running"));
}
