//! A pod deletion with the NotFound race, as an AKS node logs it (kubelet-forensics.md §2), joined
//! with the CRI and API views.

use std::collections::BTreeMap;

use super::*;
use crate::model::*;

const UID: &str = "5da5c1e2-7b1f-4b8e-9d2a-3c4b5a6d7e8f";
const CONTAINER: &str = "c65a9b1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f";
const SANDBOX: &str = "3cfe4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a";

fn events(text: &str, log: LogKind) -> Vec<LoggedEvent> {
    crate::event::read_text(log, "kubelet.log", 2026, text)
}

fn kubelet_log() -> String {
    format!(
        r#"I1129 10:00:01.000000    4321 kubelet.go:2449] "SyncLoop DELETE" source="api" pods=["default/nginx"]
I1129 10:00:01.100000    4321 kuberuntime_container.go:770] "Killing container with a grace period" pod="default/nginx" podUID="{UID}" containerName="nginx" containerID="containerd://{CONTAINER}" gracePeriod=30
I1129 10:00:02.000000    4321 kubelet.go:2465] "SyncLoop (PLEG): event for pod" pod="default/nginx" event={{"ID":"{UID}","Type":"ContainerDied","Data":"{CONTAINER}"}}
I1129 10:00:02.100000    4321 scope.go:117] "RemoveContainer" containerID="{CONTAINER}"
E1129 10:00:02.200000    4321 remote_runtime.go:432] "ContainerStatus from runtime service failed" err="rpc error: code = NotFound desc = an error occurred when try to find container \"{CONTAINER}\": not found" containerID="{CONTAINER}"
I1129 10:00:03.000000    4321 kubelet.go:2443] "SyncLoop REMOVE" source="api" pods=["default/nginx"]
I1129 10:00:04.000000    4321 kubelet.go:2449] "SyncLoop DELETE" source="api" pods=["shop/other"]
"#
    )
}

fn view() -> NodeView {
    NodeView {
        node_name: "node-1".to_string(),
        cri: Some(CriView {
            sandboxes: vec![Sandbox {
                id: SANDBOX.to_string(),
                pod: PodRef {
                    namespace: "default".to_string(),
                    name: "nginx".to_string(),
                    uid: UID.to_string(),
                },
                attempt: 0,
                state: SandboxState::NotReady,
                created_at: "2026-11-29T09:00:00Z".parse().unwrap(),
                labels: BTreeMap::from([(LABEL_POD_UID.to_string(), UID.to_string())]),
                annotations: BTreeMap::new(),
            }],
            containers: vec![],
        }),
        api: None,
        manifests: None,
        pod_dirs: None,
        manifest_url: None,
    }
}

#[test]
fn a_pods_life_from_its_name_or_any_id() {
    let ev = events(&kubelet_log(), LogKind::Kubelet);
    for query in ["default/nginx", UID, &SANDBOX[..12], CONTAINER] {
        let t = explain(query, &view(), &ev);
        assert_eq!(
            t.pods,
            vec![PodRef {
                namespace: "default".to_string(),
                name: "nginx".to_string(),
                uid: UID.to_string()
            }],
            "{query}"
        );
        assert!(
            t.ids.contains(CONTAINER) && t.ids.contains(SANDBOX) && t.ids.contains(UID),
            "{query}: {:?}",
            t.ids
        );
        let what: Vec<&str> = t.entries.iter().map(|e| e.what.as_str()).collect();
        assert_eq!(what.first(), Some(&"sandbox created"), "{query}: {what:?}");
        assert_eq!(what.len(), 7, "{query}: {what:?}");
        assert!(what[1].starts_with("SyncLoop"), "{what:?}");
        assert!(what.last().unwrap().starts_with("SyncLoop"), "{what:?}");
        assert!(
            !t.entries.iter().any(|e| e.detail.contains("shop/other")),
            "another pod leaked in"
        );
        let times: Vec<_> = t.entries.iter().map(|e| e.time.unwrap()).collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "not ordered: {times:?}"
        );
        assert_eq!(t.entries[1].origin.as_deref(), Some("kubelet.log:1"));
        assert_eq!(t.entries[1].source, EvidenceSource::KubeletLog);
    }
    let nothing = explain("nope/nope", &view(), &ev);
    assert!(nothing.entries.is_empty());
}

/// Offline (no CRI or API view), an ID prefix as `crictl ps` prints it finds the log lines that
/// name the whole ID, and through them the pod's other lines.
#[test]
fn an_id_prefix_finds_log_only_events() {
    let ev = events(&kubelet_log(), LogKind::Kubelet);
    let offline = NodeView {
        cri: None,
        ..view()
    };
    let t = explain(&CONTAINER[..12], &offline, &ev);
    assert!(
        t.ids.contains(CONTAINER) && t.ids.contains(UID),
        "{:?}",
        t.ids
    );
    let what: Vec<&str> = t.entries.iter().map(|e| e.what.as_str()).collect();
    assert_eq!(what.len(), 6, "{what:?}");
    assert!(
        !t.entries.iter().any(|e| e.detail.contains("shop/other")),
        "another pod leaked in"
    );
    // Five characters are too few to stand for an ID.
    assert!(explain(&CONTAINER[..5], &offline, &ev).entries.is_empty());
}
