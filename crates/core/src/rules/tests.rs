//! Unit tests for every rule, each with the cases that must and must not be findings.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::model::*;

const NODE: &str = "node-1";
const DIR: &str = "/etc/kubernetes/manifests";

fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

fn ago(secs: i64) -> Timestamp {
    now() - SignedDuration::from_secs(secs)
}

fn cfg() -> Config {
    Config {
        min_age: Duration::from_secs(600),
        failed_pod_min_age: Duration::from_secs(3600),
        assume_pods_deleted: false,
        slow_start: std::time::Duration::from_secs(180),
    }
}

fn node() -> NodeView {
    NodeView {
        node_name: NODE.to_string(),
        cri: Some(CriView::default()),
        api: Some(ApiView {
            pods: vec![],
            origin: "test pods".to_string(),
        }),
        manifests: Some(ManifestView {
            dir: DIR.to_string(),
            exists: true,
            files: vec![],
            unreadable: vec![],
        }),
        pod_dirs: Some(vec![]),
        manifest_url: None,
    }
}

fn pod_ref(ns: &str, name: &str, uid: &str) -> PodRef {
    PodRef {
        namespace: ns.to_string(),
        name: name.to_string(),
        uid: uid.to_string(),
    }
}

fn sandbox(
    id: &str,
    pod: (&str, &str, &str),
    state: SandboxState,
    age_secs: i64,
    attempt: u32,
) -> Sandbox {
    let (ns, name, uid) = pod;
    let labels = BTreeMap::from([
        (LABEL_POD_UID.to_string(), uid.to_string()),
        (LABEL_POD_NAME.to_string(), name.to_string()),
        (LABEL_POD_NAMESPACE.to_string(), ns.to_string()),
    ]);
    let annotations = BTreeMap::from([(ANNOTATION_CONFIG_SOURCE.to_string(), "api".to_string())]);
    Sandbox {
        id: id.to_string(),
        pod: pod_ref(ns, name, uid),
        attempt,
        state,
        created_at: ago(age_secs),
        labels,
        annotations,
    }
}

fn static_sandbox(
    id: &str,
    ns: &str,
    name: &str,
    hash: &str,
    state: SandboxState,
    age_secs: i64,
) -> Sandbox {
    let mut s = sandbox(id, (ns, name, hash), state, age_secs, 0);
    s.annotations
        .insert(ANNOTATION_CONFIG_SOURCE.to_string(), "file".to_string());
    s.annotations
        .insert(ANNOTATION_CONFIG_HASH.to_string(), hash.to_string());
    s
}

fn container(
    id: &str,
    sandbox_id: &str,
    uid: &str,
    state: ContainerState,
    age_secs: i64,
) -> Container {
    Container {
        id: id.to_string(),
        sandbox_id: sandbox_id.to_string(),
        name: "app".to_string(),
        attempt: 0,
        state,
        created_at: ago(age_secs),
        started_at: None,
        image: "registry.local/app:1".to_string(),
        labels: BTreeMap::from([(LABEL_POD_UID.to_string(), uid.to_string())]),
        annotations: BTreeMap::new(),
    }
}

fn api_pod(ns: &str, name: &str, uid: &str) -> ApiPod {
    ApiPod {
        pod: pod_ref(ns, name, uid),
        node_name: NODE.to_string(),
        phase: "Running".to_string(),
        reason: None,
        annotations: BTreeMap::new(),
        created_at: Some(ago(86_400)),
        deletion_timestamp: None,
        deletion_grace_period_seconds: None,
        status_changed_at: Some(ago(86_400)),
        startup: Default::default(),
    }
}

fn mirror_pod(ns: &str, name: &str, api_uid: &str, hash: &str) -> ApiPod {
    let mut p = api_pod(ns, name, api_uid);
    p.annotations
        .insert(ANNOTATION_CONFIG_MIRROR.to_string(), hash.to_string());
    p.annotations
        .insert(ANNOTATION_CONFIG_HASH.to_string(), hash.to_string());
    p.annotations
        .insert(ANNOTATION_CONFIG_SOURCE.to_string(), "file".to_string());
    p
}

fn manifest(file: &str, ns: &str, name: &str) -> StaticManifest {
    StaticManifest {
        path: format!("{DIR}/{file}"),
        pod: Ok(ManifestPod {
            name: name.to_string(),
            namespace: ns.to_string(),
            uid: None,
        }),
    }
}

fn pod_dir(uid: &str, volumes: &[&str], age_secs: i64) -> PodDir {
    PodDir {
        path: format!("/var/lib/kubelet/pods/{uid}"),
        uid: uid.to_string(),
        volume_dirs: volumes.iter().map(|v| v.to_string()).collect(),
        entries: vec!["containers".to_string(), "etc-hosts".to_string()],
        modified_at: Some(ago(age_secs)),
    }
}

impl NodeView {
    fn with_sandboxes(mut self, s: Vec<Sandbox>) -> Self {
        self.cri.as_mut().unwrap().sandboxes = s;
        self
    }
    fn with_containers(mut self, c: Vec<Container>) -> Self {
        self.cri.as_mut().unwrap().containers = c;
        self
    }
    fn with_pods(mut self, p: Vec<ApiPod>) -> Self {
        self.api.as_mut().unwrap().pods = p;
        self
    }
    fn with_manifests(mut self, m: Vec<StaticManifest>) -> Self {
        self.manifests.as_mut().unwrap().files = m;
        self
    }
    fn with_pod_dirs(mut self, d: Vec<PodDir>) -> Self {
        self.pod_dirs = Some(d);
        self
    }
}

/// `(kind, sandbox id or pod name)` of every finding, in order.
fn found(view: &NodeView) -> Vec<(FindingKind, String)> {
    found_with(view, &cfg())
}

fn found_with(view: &NodeView, config: &Config) -> Vec<(FindingKind, String)> {
    diagnose(view, config, now())
        .findings
        .into_iter()
        .map(|f| {
            let key = f
                .container_id
                .or(f.sandbox_id)
                .or(f
                    .pod
                    .map(|p| if p.name.is_empty() { p.uid } else { p.name }))
                .unwrap_or_default();
            (f.kind, key)
        })
        .collect()
}

use FindingKind::*;
use SandboxState::{NotReady, Ready};

const HOUR: i64 = 3600;

// === LeakedSandbox ===

#[test]
fn leaked_sandbox_of_a_gone_pod() {
    let view = node().with_sandboxes(vec![sandbox(
        "sb-gone",
        ("default", "web-0", "uid-gone"),
        NotReady,
        HOUR,
        0,
    )]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![(LeakedSandbox, "sb-gone".to_string())]);
    let f = &d.findings[0];
    assert!(f.gc_eligible);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.pod, Some(pod_ref("default", "web-0", "uid-gone")));
    assert!(
        f.remediation
            .contains("crictl stopp sb-gone && crictl rmp sb-gone"),
        "{}",
        f.remediation
    );
    let sources: Vec<_> = f.evidence.iter().map(|e| e.source).collect();
    assert_eq!(
        sources,
        vec![
            EvidenceSource::Cri,
            EvidenceSource::Apiserver,
            EvidenceSource::Manifest
        ]
    );
    assert!(
        f.evidence[0].detail().contains("SANDBOX_NOTREADY"),
        "{}",
        f.evidence[0].detail()
    );
    assert!(
        f.evidence[0].detail().contains("1h0m ago"),
        "{}",
        f.evidence[0].detail()
    );
    assert!(d.skipped.is_empty(), "{:?}", d.skipped);
}

#[test]
fn newest_notready_sandbox_of_a_live_pod_is_kept() {
    let view = node()
        .with_sandboxes(vec![sandbox(
            "sb-1",
            ("default", "web-0", "uid-1"),
            NotReady,
            HOUR,
            0,
        )])
        .with_pods(vec![api_pod("default", "web-0", "uid-1")]);
    assert_eq!(found(&view), vec![]);
}

#[test]
fn older_sandboxes_of_a_live_pod_leak() {
    let view = node()
        .with_sandboxes(vec![
            sandbox(
                "sb-old",
                ("default", "web-0", "uid-1"),
                NotReady,
                3 * HOUR,
                0,
            ),
            sandbox(
                "sb-mid",
                ("default", "web-0", "uid-1"),
                NotReady,
                2 * HOUR,
                1,
            ),
            sandbox("sb-new", ("default", "web-0", "uid-1"), NotReady, HOUR, 2),
        ])
        .with_pods(vec![api_pod("default", "web-0", "uid-1")]);
    assert_eq!(
        found(&view),
        vec![
            (LeakedSandbox, "sb-mid".to_string()),
            (LeakedSandbox, "sb-old".to_string())
        ]
    );
}

#[test]
fn older_sandbox_beside_a_ready_one_leaks() {
    let view = node()
        .with_sandboxes(vec![
            sandbox(
                "sb-old",
                ("default", "web-0", "uid-1"),
                NotReady,
                3 * HOUR,
                0,
            ),
            sandbox("sb-new", ("default", "web-0", "uid-1"), Ready, HOUR, 1),
        ])
        .with_pods(vec![api_pod("default", "web-0", "uid-1")]);
    assert_eq!(found(&view), vec![(LeakedSandbox, "sb-old".to_string())]);
}

#[test]
fn young_sandbox_is_not_a_finding_until_min_age() {
    let view = node().with_sandboxes(vec![sandbox(
        "sb-young",
        ("default", "a", "uid-a"),
        NotReady,
        300,
        0,
    )]);
    assert_eq!(found(&view), vec![]);
    let zero = Config {
        min_age: Duration::ZERO,
        ..cfg()
    };
    assert_eq!(
        found_with(&view, &zero),
        vec![(LeakedSandbox, "sb-young".to_string())]
    );
}

#[test]
fn sandbox_holding_an_exited_container_is_active() {
    let view = node()
        .with_sandboxes(vec![sandbox(
            "sb-1",
            ("default", "a", "uid-a"),
            NotReady,
            HOUR,
            0,
        )])
        .with_containers(vec![container(
            "c-1",
            "sb-1",
            "uid-a",
            ContainerState::Exited,
            HOUR,
        )]);
    assert_eq!(found(&view), vec![]);
}

#[test]
fn pod_known_through_its_manifest_or_http_mirror_is_kept() {
    let hash = "0123456789abcdef0123456789abcdef";
    let sb = static_sandbox("sb-s", "kube-system", "etcd-node-1", hash, NotReady, HOUR);
    let by_manifest = node()
        .with_sandboxes(vec![sb.clone()])
        .with_pods(vec![mirror_pod(
            "kube-system",
            "etcd-node-1",
            "api-uid",
            hash,
        )])
        .with_manifests(vec![manifest("etcd.yaml", "kube-system", "etcd")]);
    assert_eq!(found(&by_manifest), vec![]);
    // An HTTP-sourced static pod has no manifest: its mirror pod is the best knowledge.
    let mut http = sb.clone();
    http.annotations
        .insert(ANNOTATION_CONFIG_SOURCE.to_string(), "http".to_string());
    let mut http_mirror = mirror_pod("kube-system", "etcd-node-1", "api-uid", hash);
    http_mirror
        .annotations
        .insert(ANNOTATION_CONFIG_SOURCE.to_string(), "http".to_string());
    let by_http_mirror = node()
        .with_sandboxes(vec![http])
        .with_pods(vec![http_mirror]);
    assert_eq!(found(&by_http_mirror), vec![]);
    let neither = node().with_sandboxes(vec![sb]);
    assert_eq!(found(&neither), vec![(LeakedSandbox, "sb-s".to_string())]);
}

#[test]
fn without_api_view_only_older_sandboxes_are_judged() {
    let mut view = node().with_sandboxes(vec![
        sandbox(
            "sb-gone",
            ("default", "gone", "uid-gone"),
            NotReady,
            HOUR,
            0,
        ),
        sandbox("sb-old", ("default", "web", "uid-w"), NotReady, 3 * HOUR, 0),
        sandbox("sb-new", ("default", "web", "uid-w"), NotReady, HOUR, 1),
    ]);
    view.api = None;
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![(LeakedSandbox, "sb-old".to_string())]);
    let leaked = d.skipped.iter().find(|s| s.kind == LeakedSandbox).unwrap();
    assert!(leaked.partial);
    assert!(
        leaked.reason.contains("2 newest NOTREADY"),
        "{}",
        leaked.reason
    );
    let skipped: Vec<_> = d
        .skipped
        .iter()
        .filter(|s| !s.partial)
        .map(|s| s.kind)
        .collect();
    assert_eq!(
        skipped,
        vec![
            MissingMirrorPod,
            StaleMirrorPod,
            OrphanedMirrorPod,
            OrphanedPodDirectory,
            FailedPodNotCleaned
        ]
    );
}

#[test]
fn sandbox_not_made_by_the_kubelet_is_left_alone() {
    let mut s = sandbox(
        "sb-crictl",
        ("default", "manual", "uid-m"),
        NotReady,
        HOUR,
        0,
    );
    s.labels.clear();
    let view = node().with_sandboxes(vec![s]);
    assert_eq!(found(&view), vec![]);
}

#[test]
fn wrong_node_name_suspends_api_rules() {
    let mut elsewhere = api_pod("default", "web", "uid-w");
    elsewhere.node_name = "ip-10-0-0-1.ec2.internal".to_string();
    let view = node()
        .with_sandboxes(vec![
            sandbox("sb-w", ("default", "web", "uid-w"), Ready, HOUR, 0),
            sandbox("sb-x", ("default", "x", "uid-x"), NotReady, HOUR, 0),
        ])
        .with_pods(vec![elsewhere])
        .with_pod_dirs(vec![pod_dir("uid-z", &[], HOUR)]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![]);
    let reason = &d
        .skipped
        .iter()
        .find(|s| s.kind == OrphanedPodDirectory)
        .unwrap()
        .reason;
    assert!(reason.contains("the node name is wrong"), "{reason}");
}

// === DuplicateReadySandboxes ===

#[test]
fn two_ready_sandboxes_for_one_pod() {
    let view = node()
        .with_sandboxes(vec![
            sandbox("sb-a", ("default", "web", "uid-w"), Ready, 2 * HOUR, 0),
            sandbox("sb-b", ("default", "web", "uid-w"), Ready, HOUR, 1),
        ])
        .with_pods(vec![api_pod("default", "web", "uid-w")]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(
        found(&view),
        vec![(DuplicateReadySandboxes, "sb-a".to_string())]
    );
    assert_eq!(d.findings[0].severity, Severity::Critical);
    assert_eq!(d.findings[0].evidence.len(), 2);
}

#[test]
fn a_young_second_ready_sandbox_is_a_transient() {
    let view = node()
        .with_sandboxes(vec![
            sandbox("sb-a", ("default", "web", "uid-w"), Ready, 2 * HOUR, 0),
            sandbox("sb-b", ("default", "web", "uid-w"), Ready, 60, 1),
        ])
        .with_pods(vec![api_pod("default", "web", "uid-w")]);
    assert_eq!(found(&view), vec![]);
}

// === OrphanedContainer ===

#[test]
fn container_without_sandbox() {
    let view = node()
        .with_sandboxes(vec![sandbox(
            "sb-1",
            ("default", "a", "uid-a"),
            Ready,
            HOUR,
            0,
        )])
        .with_containers(vec![
            container("c-ok", "sb-1", "uid-a", ContainerState::Running, HOUR),
            container(
                "c-orphan",
                "sb-vanished",
                "uid-b",
                ContainerState::Running,
                HOUR,
            ),
            container(
                "c-young",
                "sb-vanished",
                "uid-b",
                ContainerState::Created,
                10,
            ),
        ])
        .with_pods(vec![api_pod("default", "a", "uid-a")]);
    assert_eq!(
        found(&view),
        vec![(OrphanedContainer, "c-orphan".to_string())]
    );
}

// === StaticPodNotRemoved ===

#[test]
fn static_pod_running_without_its_manifest() {
    let hash = "11111111111111111111111111111111";
    let view = node()
        .with_sandboxes(vec![static_sandbox(
            "sb-s",
            "kube-system",
            "old-node-1",
            hash,
            Ready,
            HOUR,
        )])
        .with_pods(vec![mirror_pod("kube-system", "old-node-1", "api-1", hash)]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(
        found(&view),
        vec![(StaticPodNotRemoved, "sb-s".to_string())]
    );
    assert_eq!(d.findings[0].severity, Severity::Critical);
}

#[test]
fn static_pod_with_its_manifest_is_healthy() {
    let hash = "11111111111111111111111111111111";
    let base = node()
        .with_pods(vec![mirror_pod(
            "kube-system",
            "etcd-node-1",
            "api-1",
            hash,
        )])
        .with_manifests(vec![manifest("etcd.yaml", "kube-system", "etcd")]);
    let exact = base.clone().with_sandboxes(vec![static_sandbox(
        "sb-s",
        "kube-system",
        "etcd-node-1",
        hash,
        Ready,
        HOUR,
    )]);
    assert_eq!(found(&exact), vec![]);
    // Another node suffix (a --node-name that differs from the kubelet's) must not alarm.
    let mut other_suffix = base.with_sandboxes(vec![static_sandbox(
        "sb-s",
        "kube-system",
        "etcd-ip-10-0-0-1",
        hash,
        Ready,
        HOUR,
    )]);
    other_suffix.api.as_mut().unwrap().pods[0].pod.name = "etcd-ip-10-0-0-1".to_string();
    assert_eq!(found(&other_suffix), vec![]);
}

#[test]
fn static_pod_rule_skips_without_manifest_view() {
    let hash = "11111111111111111111111111111111";
    let mut view = node()
        .with_sandboxes(vec![static_sandbox(
            "sb-s",
            "kube-system",
            "old-node-1",
            hash,
            Ready,
            HOUR,
        )])
        .with_pods(vec![mirror_pod("kube-system", "old-node-1", "api-1", hash)]);
    view.manifests = None;
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![]);
    assert!(
        d.skipped
            .iter()
            .any(|s| s.kind == StaticPodNotRemoved && !s.partial)
    );
}

// === Static pods from a URL (staticPodURL) ===

const URL: &str = "http://127.0.0.1:8080/pods";

/// A READY HTTP static pod sandbox and its mirror pod.
fn http_static(id: &str, name: &str, hash: &str) -> (Sandbox, ApiPod) {
    let mut s = static_sandbox(id, "kube-system", name, hash, Ready, HOUR);
    s.annotations
        .insert(ANNOTATION_CONFIG_SOURCE.to_string(), "http".to_string());
    let mut m = mirror_pod("kube-system", name, &format!("api-{id}"), hash);
    m.annotations
        .insert(ANNOTATION_CONFIG_SOURCE.to_string(), "http".to_string());
    (s, m)
}

fn url_view(pods: Result<Vec<(&str, &str)>, &str>) -> Option<UrlManifestView> {
    Some(UrlManifestView {
        url: URL.to_string(),
        pods: pods
            .map(|p| {
                p.into_iter()
                    .map(|(ns, name)| ManifestPod {
                        name: name.to_string(),
                        namespace: ns.to_string(),
                        uid: None,
                    })
                    .collect()
            })
            .map_err(str::to_string),
    })
}

#[test]
fn http_static_pod_removed_from_the_url_is_not_removed() {
    let (keep, keep_mirror) =
        http_static("sb-k", "keeper-node-1", "22222222222222222222222222222222");
    let (gone, gone_mirror) =
        http_static("sb-g", "ghost-node-1", "33333333333333333333333333333333");
    let mut view = node()
        .with_sandboxes(vec![keep, gone])
        .with_pods(vec![keep_mirror, gone_mirror]);
    view.manifest_url = url_view(Ok(vec![("kube-system", "keeper")]));
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(
        found(&view),
        vec![(StaticPodNotRemoved, "sb-g".to_string())]
    );
    let f = &d.findings[0];
    assert_eq!(f.severity, Severity::Critical);
    assert!(
        f.summary
            .contains(&format!("the static pod URL {URL} no longer serves it")),
        "{}",
        f.summary
    );
    assert!(
        f.kubelet_rule.starts_with("config/http.go"),
        "{}",
        f.kubelet_rule
    );
    assert!(
        f.evidence[1].detail().contains(&format!(
            "none of the 1 pods the static pod URL {URL} serves"
        )),
        "{:?}",
        f.evidence
    );
    assert!(
        d.skipped.iter().all(|s| s.kind != StaticPodNotRemoved),
        "{:?}",
        d.skipped
    );
    // Both served: healthy. A PodList naming the pod in another namespace does not declare it.
    view.manifest_url = url_view(Ok(vec![
        ("kube-system", "keeper"),
        ("kube-system", "ghost"),
    ]));
    assert_eq!(found(&view), vec![]);
    view.manifest_url = url_view(Ok(vec![("kube-system", "keeper"), ("default", "ghost")]));
    assert_eq!(
        found(&view),
        vec![(StaticPodNotRemoved, "sb-g".to_string())]
    );
}

#[test]
fn unreadable_url_is_never_every_http_static_pod_removed() {
    let (a, a_mirror) = http_static("sb-a", "a-node-1", "22222222222222222222222222222222");
    let (b, b_mirror) = http_static("sb-b", "b-node-1", "33333333333333333333333333333333");
    let file = static_sandbox(
        "sb-f",
        "kube-system",
        "etcd-node-1",
        "44444444444444444444444444444444",
        Ready,
        HOUR,
    );
    let mut view = node().with_sandboxes(vec![a, b, file]).with_pods(vec![
        a_mirror,
        b_mirror,
        mirror_pod(
            "kube-system",
            "etcd-node-1",
            "api-f",
            "44444444444444444444444444444444",
        ),
    ]);
    view.manifest_url = url_view(Err("connection refused"));
    let d = diagnose(&view, &cfg(), now());
    // The file pod is still judged (its manifest is gone); the HTTP pods are not.
    assert_eq!(
        found(&view),
        vec![(StaticPodNotRemoved, "sb-f".to_string())]
    );
    let skip = d
        .skipped
        .iter()
        .find(|s| s.kind == StaticPodNotRemoved)
        .unwrap();
    assert!(skip.partial);
    assert!(
        skip.reason.contains(&format!(
            "the static pod URL {URL} could not be read (connection refused)"
        )) && skip
            .reason
            .contains("2 HTTP static pod sandbox(es) not judged"),
        "{}",
        skip.reason
    );
    // Nor are their mirror pods orphaned, even once their sandboxes are gone.
    let mut no_sandboxes = view.clone().with_sandboxes(vec![]);
    no_sandboxes.api.as_mut().unwrap().pods.pop();
    no_sandboxes.manifest_url = url_view(Err("503 Service Unavailable"));
    let d = diagnose(&no_sandboxes, &cfg(), now());
    assert_eq!(found(&no_sandboxes), vec![]);
    assert!(
        d.skipped
            .iter()
            .any(|s| s.kind == OrphanedMirrorPod && s.reason.contains("503")),
        "{:?}",
        d.skipped
    );
}

#[test]
fn http_static_pods_without_manifest_url_are_said_unjudged() {
    let (a, a_mirror) = http_static("sb-a", "a-node-1", "22222222222222222222222222222222");
    let view = node().with_sandboxes(vec![a]).with_pods(vec![a_mirror]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![]);
    let skip = d
        .skipped
        .iter()
        .find(|s| s.kind == StaticPodNotRemoved)
        .unwrap();
    assert!(
        skip.reason
            .contains("no --manifest-url given: 1 HTTP static pod sandbox(es)"),
        "{}",
        skip.reason
    );
}

#[test]
fn mirror_pod_of_a_pod_the_url_no_longer_serves_is_orphaned() {
    let (_, mirror) = http_static("sb-a", "a-node-1", "22222222222222222222222222222222");
    let mut view = node().with_pods(vec![mirror]);
    view.manifest_url = url_view(Ok(vec![]));
    assert_eq!(
        found(&view),
        vec![(OrphanedMirrorPod, "a-node-1".to_string())]
    );
    let d = diagnose(&view, &cfg(), now());
    assert!(
        d.findings[0].evidence[1]
            .detail()
            .contains("the static pod URL"),
        "{:?}",
        d.findings[0].evidence
    );
    // Served by the URL (the kubelet will start it): not orphaned.
    view.manifest_url = url_view(Ok(vec![("kube-system", "a")]));
    assert_eq!(found(&view), vec![]);
}

#[test]
fn notready_sandbox_of_an_http_pod_the_url_serves_is_kept() {
    let hash = "22222222222222222222222222222222";
    let (mut s, _) = http_static("sb-a", "a-node-1", hash);
    s.state = NotReady;
    let mut view = node().with_sandboxes(vec![s]);
    view.manifest_url = url_view(Ok(vec![("kube-system", "a")]));
    assert_eq!(found(&view), vec![]);
    view.manifest_url = url_view(Ok(vec![]));
    assert_eq!(found(&view), vec![(LeakedSandbox, "sb-a".to_string())]);
    view.manifest_url = url_view(Err("bad body"));
    assert_eq!(found(&view), vec![]);
}

// === Mirror pods ===

#[test]
fn running_static_pod_without_mirror_pod() {
    let hash = "22222222222222222222222222222222";
    let view = node()
        .with_sandboxes(vec![static_sandbox(
            "sb-s",
            "kube-system",
            "kube-apiserver-node-1",
            hash,
            Ready,
            HOUR,
        )])
        .with_manifests(vec![manifest(
            "kube-apiserver.yaml",
            "kube-system",
            "kube-apiserver",
        )]);
    assert_eq!(found(&view), vec![(MissingMirrorPod, "sb-s".to_string())]);
    let with_mirror = view.clone().with_pods(vec![mirror_pod(
        "kube-system",
        "kube-apiserver-node-1",
        "api-9",
        hash,
    )]);
    assert_eq!(found(&with_mirror), vec![]);
}

#[test]
fn mirror_pod_with_another_hash_is_stale() {
    let hash = "22222222222222222222222222222222";
    let view = node()
        .with_sandboxes(vec![static_sandbox(
            "sb-s",
            "kube-system",
            "kube-apiserver-node-1",
            hash,
            Ready,
            HOUR,
        )])
        .with_manifests(vec![manifest(
            "kube-apiserver.yaml",
            "kube-system",
            "kube-apiserver",
        )])
        .with_pods(vec![mirror_pod(
            "kube-system",
            "kube-apiserver-node-1",
            "api-9",
            "33333333333333333333333333333333",
        )]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![(StaleMirrorPod, "sb-s".to_string())]);
    assert_eq!(d.findings[0].pod.as_ref().unwrap().uid, hash);
}

#[test]
fn mirror_pod_without_static_pod_is_orphaned() {
    let view = node().with_pods(vec![
        mirror_pod(
            "kube-system",
            "old-node-1",
            "api-1",
            "44444444444444444444444444444444",
        ),
        {
            let mut p = mirror_pod(
                "kube-system",
                "other-node-2",
                "api-2",
                "55555555555555555555555555555555",
            );
            p.node_name = "node-2".to_string();
            p
        },
    ]);
    assert_eq!(
        found(&view),
        vec![(OrphanedMirrorPod, "old-node-1".to_string())]
    );
    let with_manifest =
        view.clone()
            .with_manifests(vec![manifest("old.yaml", "kube-system", "old")]);
    assert_eq!(found(&with_manifest), vec![]);
    // A stopped sandbox of the removed static pod does not make its mirror pod legitimate.
    let with_sandbox = view.with_sandboxes(vec![static_sandbox(
        "sb-o",
        "kube-system",
        "old-node-1",
        "44444444444444444444444444444444",
        NotReady,
        60,
    )]);
    assert_eq!(
        found(&with_sandbox),
        vec![(OrphanedMirrorPod, "old-node-1".to_string())]
    );
}

#[test]
fn removed_static_pod_leaves_a_leaked_sandbox_and_an_orphaned_mirror() {
    let hash = "44444444444444444444444444444444";
    let view = node()
        .with_sandboxes(vec![static_sandbox(
            "sb-o",
            "kube-system",
            "old-node-1",
            hash,
            NotReady,
            HOUR,
        )])
        .with_pods(vec![mirror_pod("kube-system", "old-node-1", "api-1", hash)]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(
        found(&view),
        vec![
            (LeakedSandbox, "sb-o".to_string()),
            (OrphanedMirrorPod, "old-node-1".to_string())
        ]
    );
    assert_eq!(
        d.findings[1].pod.as_ref().unwrap().uid,
        hash,
        "a static pod's uid is its config hash"
    );
}

/// A node running the static pod etcd (READY sandbox, mirror pod), with no manifest for it.
fn running_etcd_without_manifest() -> NodeView {
    let hash = "11111111111111111111111111111111";
    node()
        .with_sandboxes(vec![static_sandbox(
            "sb-e",
            "kube-system",
            "etcd-node-1",
            hash,
            Ready,
            HOUR,
        )])
        .with_pods(vec![mirror_pod(
            "kube-system",
            "etcd-node-1",
            "api-1",
            hash,
        )])
}

#[test]
fn missing_manifest_dir_with_running_static_pods_is_not_trusted() {
    let mut view = running_etcd_without_manifest();
    view.manifests.as_mut().unwrap().exists = false;
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![]);
    let reason = &d
        .skipped
        .iter()
        .find(|s| s.kind == StaticPodNotRemoved)
        .unwrap()
        .reason;
    assert!(
        reason.contains("--manifest-dir is probably wrong"),
        "{reason}"
    );
    // Without static pods running, a missing directory may be a missing mount: the rules that
    // need the manifests skip and say so.
    let mut empty = node();
    empty.manifests.as_mut().unwrap().exists = false;
    let skipped = diagnose(&empty, &cfg(), now()).skipped;
    let kinds: Vec<FindingKind> = skipped.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        vec![StaticPodNotRemoved, OrphanedMirrorPod, OrphanedPodDirectory],
        "{skipped:?}"
    );
    assert!(
        skipped[0].reason.starts_with(&format!(
            "the manifest directory {DIR} does not exist: a missing mount"
        )),
        "{skipped:?}"
    );
}

#[test]
fn an_unreadable_manifest_is_unknown_not_absent() {
    // etcd runs from a manifest this process may not read (mode 600, another owner): it is not
    // a static pod whose manifest is gone.
    let mut view = running_etcd_without_manifest();
    let readable = diagnose(&view, &cfg(), now());
    assert_eq!(
        readable.findings.iter().map(|f| f.kind).collect::<Vec<_>>(),
        vec![StaticPodNotRemoved],
        "without the file, etcd looks removed"
    );
    let path = format!("{DIR}/etcd.yaml");
    view.manifests.as_mut().unwrap().unreadable = vec![UnreadableManifest {
        path: path.clone(),
        reason: "cannot read file: Permission denied (os error 13)".to_string(),
    }];
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![]);
    let skip = d
        .skipped
        .iter()
        .find(|s| s.kind == StaticPodNotRemoved)
        .unwrap();
    assert!(
        skip.reason.starts_with(&format!(
            "podcoroner cannot read 1 file(s) of the manifest directory {DIR} ({path}: cannot read file: Permission denied"
        )),
        "{}",
        skip.reason
    );
    assert!(d.skipped.iter().any(|s| s.kind == OrphanedMirrorPod));
}

#[test]
fn partial_api_view_is_not_trusted() {
    // A --pods file of one namespace: most running pods are missing from it.
    let view = node()
        .with_sandboxes(vec![
            sandbox("sb-a", ("shop", "a", "uid-a"), Ready, HOUR, 0),
            sandbox("sb-b", ("shop", "b", "uid-b"), Ready, HOUR, 0),
            sandbox("sb-c", ("kube-system", "c", "uid-c"), Ready, HOUR, 0),
            sandbox("sb-d", ("shop", "d", "uid-d"), NotReady, HOUR, 0),
        ])
        .with_pods(vec![api_pod("kube-system", "c", "uid-c")]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(found(&view), vec![]);
    let leaked = d.skipped.iter().find(|s| s.kind == LeakedSandbox).unwrap();
    assert!(
        leaked.reason.contains("lacks 2 of the 3 pods"),
        "{}",
        leaked.reason
    );
    // One force-deleted pod among many is a finding's business, not a reason to distrust.
    let mostly = node()
        .with_sandboxes(vec![
            sandbox("sb-a", ("shop", "a", "uid-a"), Ready, HOUR, 0),
            sandbox("sb-b", ("shop", "b", "uid-b"), Ready, HOUR, 0),
            sandbox("sb-c", ("shop", "c", "uid-c"), Ready, HOUR, 0),
            sandbox("sb-d", ("shop", "d", "uid-d"), NotReady, HOUR, 0),
        ])
        .with_pods(vec![
            api_pod("shop", "a", "uid-a"),
            api_pod("shop", "b", "uid-b"),
        ]);
    assert_eq!(found(&mostly), vec![(LeakedSandbox, "sb-d".to_string())]);
}

#[test]
fn manifest_name_prefix_counts_only_until_the_node_name_is_confirmed() {
    let view = node()
        .with_sandboxes(vec![
            static_sandbox(
                "sb-e",
                "kube-system",
                "etcd-node-1",
                "11111111111111111111111111111111",
                Ready,
                HOUR,
            ),
            static_sandbox(
                "sb-d",
                "kube-system",
                "etcd-defrag-node-1",
                "22222222222222222222222222222222",
                Ready,
                HOUR,
            ),
        ])
        .with_pods(vec![
            mirror_pod(
                "kube-system",
                "etcd-node-1",
                "api-1",
                "11111111111111111111111111111111",
            ),
            mirror_pod(
                "kube-system",
                "etcd-defrag-node-1",
                "api-2",
                "22222222222222222222222222222222",
            ),
        ])
        .with_manifests(vec![manifest("etcd.yaml", "kube-system", "etcd")]);
    assert_eq!(
        found(&view),
        vec![(StaticPodNotRemoved, "sb-d".to_string())]
    );
}

// === OrphanedPodDirectory ===

#[test]
fn pod_directory_of_nobody() {
    let view = node()
        .with_sandboxes(vec![sandbox(
            "sb-1",
            ("default", "a", "uid-a"),
            Ready,
            HOUR,
            0,
        )])
        .with_pods(vec![
            api_pod("default", "a", "uid-a"),
            api_pod("default", "b", "uid-b"),
        ])
        .with_pod_dirs(vec![
            pod_dir("uid-a", &["kubernetes.io~projected/kube-api-access"], HOUR),
            pod_dir("uid-b", &[], HOUR),
            pod_dir("uid-orphan", &["kubernetes.io~configmap/config"], HOUR),
            pod_dir("uid-young", &[], 30),
        ]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(
        found(&view),
        vec![(OrphanedPodDirectory, "uid-orphan".to_string())]
    );
    assert!(
        d.findings[0]
            .summary
            .contains("kubernetes.io~configmap/config"),
        "{}",
        d.findings[0].summary
    );
}

#[test]
fn static_looking_pod_directory_with_unmatched_manifest_is_not_judged() {
    let hash = "66666666666666666666666666666666";
    let view = node()
        .with_manifests(vec![manifest(
            "sched.yaml",
            "kube-system",
            "kube-scheduler",
        )])
        .with_pod_dirs(vec![pod_dir(hash, &[], HOUR)]);
    assert_eq!(found(&view), vec![]);
    let no_manifest = node().with_pod_dirs(vec![pod_dir(hash, &[], HOUR)]);
    assert_eq!(
        found(&no_manifest),
        vec![(OrphanedPodDirectory, hash.to_string())]
    );
}

// === InvalidStaticPodManifest ===

#[test]
fn invalid_manifest_names_file_and_error() {
    let view = node().with_manifests(vec![StaticManifest {
        path: format!("{DIR}/broken.yaml"),
        pod: Err("line 3 column 5: mapping values are not allowed here".to_string()),
    }]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(
        found(&view),
        vec![(InvalidStaticPodManifest, String::new())]
    );
    let f = &d.findings[0];
    assert!(
        f.summary.contains("broken.yaml") && f.summary.contains("line 3 column 5"),
        "{}",
        f.summary
    );
}

// === FailedPodNotCleaned ===

#[test]
fn old_failed_pod_is_reported_as_info() {
    let mut evicted = api_pod("default", "evicted", "uid-e");
    evicted.phase = "Failed".to_string();
    evicted.reason = Some("Evicted".to_string());
    evicted.status_changed_at = Some(ago(2 * HOUR));
    let mut fresh = evicted.clone();
    fresh.pod = pod_ref("default", "fresh", "uid-f");
    fresh.status_changed_at = Some(ago(60));
    let mut elsewhere = evicted.clone();
    elsewhere.pod = pod_ref("default", "elsewhere", "uid-x");
    elsewhere.node_name = "node-2".to_string();
    let view = node().with_pods(vec![evicted, fresh, elsewhere]);
    let d = diagnose(&view, &cfg(), now());
    assert_eq!(
        found(&view),
        vec![(FailedPodNotCleaned, "evicted".to_string())]
    );
    assert_eq!(d.findings[0].severity, Severity::Info);
    assert!(d.findings[0].summary.contains("Evicted") && d.findings[0].summary.contains("2h0m"));
}

// === ordering and helpers ===

#[test]
fn findings_are_ordered_by_severity() {
    let view = node()
        .with_sandboxes(vec![
            sandbox("sb-a", ("default", "web", "uid-w"), Ready, 2 * HOUR, 0),
            sandbox("sb-b", ("default", "web", "uid-w"), Ready, HOUR, 1),
            sandbox("sb-gone", ("default", "gone", "uid-g"), NotReady, HOUR, 0),
        ])
        .with_pods(vec![api_pod("default", "web", "uid-w")]);
    let sev: Vec<_> = diagnose(&view, &cfg(), now())
        .findings
        .iter()
        .map(|f| f.severity)
        .collect();
    assert_eq!(sev, vec![Severity::Critical, Severity::Warning]);
}

#[test]
fn human_durations() {
    let cases = [
        (0, "0s"),
        (59, "59s"),
        (61, "1m1s"),
        (3600, "1h0m"),
        (90_061, "1d1h"),
        (-5, "0s"),
    ];
    for (secs, want) in cases {
        assert_eq!(human(SignedDuration::from_secs(secs)), want, "{secs}");
    }
    assert_eq!(short("0123456789abcdef"), "0123456789abc");
    assert_eq!(
        sh("/etc/kubernetes/manifests/etcd.yaml"),
        "/etc/kubernetes/manifests/etcd.yaml"
    );
    assert_eq!(
        sh("my pod;touch $(id -u).yaml"),
        "'my pod;touch $(id -u).yaml'"
    );
    assert_eq!(sh("it's"), "'it'\\''s'");
    assert_eq!(sh(""), "''");
    assert_eq!(short("abc"), "abc");
}

/// `podcoroner gc`'s finding for the errors containerd 1.6.20 really answers when the CNI
/// teardown fails (the lab's `BrokenCni` faults, `crates/cli/tests/gc.rs` and `daemon.rs`).
#[test]
fn gc_stop_failure_from_real_containerd_errors() {
    let id = "3aaf8bed616fec842bdcdcca3ce8a8f126657482af19e94bf594e0a612d18242";
    let s = sandbox(id, ("shop", "stuck-0", "u-1"), NotReady, 600, 0);
    let rpc = |desc: &str| {
        format!(
            "calling StopPodSandbox on unix:///run/containerd/containerd.sock failed: Unknown: \
             failed to destroy network for sandbox \"{id}\": {desc}"
        )
    };
    let cases = [
        (
            rpc("cni plugin not initialized"),
            "CNI teardown: cni plugin not initialized",
            Severity::Warning,
        ),
        (
            rpc(
                "plugin type=\"calico\" failed (delete): failed to find plugin \"calico\" in \
                 path [/opt/cni/bin]",
            ),
            "CNI teardown: the CNI plugin binary is missing",
            Severity::Critical,
        ),
    ];
    for (error, class, severity) in cases {
        let f = sandbox_stop_failing(&s, &error, "podcoroner gc");
        assert_eq!(f.kind, SandboxStopFailing);
        assert_eq!(f.severity, severity, "{error}");
        assert_eq!(
            f.summary,
            format!("StopPodSandbox of 3aaf8bed616fe (shop/stuck-0) fails: {class}")
        );
        assert_eq!(f.sandbox_id.as_deref(), Some(id));
        assert_eq!(f.evidence[0].detail(), format!("podcoroner gc: {error}"));
        assert!(!f.gc_eligible);
    }
}
