//! GC eligibility: unit cases and a property test over generated node states.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

use super::*;
use crate::model::*;

const HOUR: i64 = 3600;

fn now() -> Timestamp {
    "2026-11-29T12:00:00Z".parse().unwrap()
}

fn policy() -> Policy {
    Policy {
        min_age: Duration::from_secs(3600),
        exclude_namespaces: BTreeSet::from(["kube-system".to_string()]),
        assume_pods_deleted: false,
        max_per_run: 20,
    }
}

fn no_selector(_: &BTreeMap<String, String>) -> Option<String> {
    None
}

fn sandbox(
    id: &str,
    ns: &str,
    uid: &str,
    state: SandboxState,
    age_secs: i64,
    attempt: u32,
) -> Sandbox {
    Sandbox {
        id: id.to_string(),
        pod: PodRef {
            namespace: ns.to_string(),
            name: format!("pod-{uid}"),
            uid: uid.to_string(),
        },
        attempt,
        state,
        created_at: now() - SignedDuration::from_secs(age_secs),
        labels: BTreeMap::from([
            (LABEL_POD_UID.to_string(), uid.to_string()),
            ("app".to_string(), format!("app-{uid}")),
        ]),
        annotations: BTreeMap::from([(ANNOTATION_CONFIG_SOURCE.to_string(), "api".to_string())]),
    }
}

fn api_pod(ns: &str, uid: &str) -> ApiPod {
    ApiPod {
        pod: PodRef {
            namespace: ns.to_string(),
            name: format!("pod-{uid}"),
            uid: uid.to_string(),
        },
        node_name: "node-1".to_string(),
        phase: "Running".to_string(),
        reason: None,
        annotations: BTreeMap::new(),
        created_at: None,
        deletion_timestamp: None,
        deletion_grace_period_seconds: None,
        status_changed_at: None,
        startup: Default::default(),
    }
}

fn view(
    sandboxes: Vec<Sandbox>,
    containers: Vec<Container>,
    pods: Option<Vec<ApiPod>>,
) -> NodeView {
    NodeView {
        node_name: "node-1".to_string(),
        cri: Some(CriView {
            sandboxes,
            containers,
        }),
        api: pods.map(|pods| ApiView {
            pods,
            origin: "test".to_string(),
        }),
        manifests: Some(ManifestView {
            dir: "/etc/kubernetes/manifests".to_string(),
            exists: true,
            files: vec![],
            unreadable: vec![],
        }),
        pod_dirs: None,
        manifest_url: None,
    }
}

fn container(id: &str, sandbox_id: &str) -> Container {
    Container {
        id: id.to_string(),
        sandbox_id: sandbox_id.to_string(),
        name: "app".to_string(),
        attempt: 0,
        state: ContainerState::Exited,
        created_at: now() - SignedDuration::from_secs(2 * HOUR),
        started_at: None,
        image: "img".to_string(),
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
    }
}

fn ids(plan: &Plan) -> Vec<&str> {
    plan.removals
        .iter()
        .map(|r| r.sandbox_id.as_str())
        .collect()
}

#[test]
fn plans_only_leaks_past_min_age_outside_excluded_namespaces() {
    let v = view(
        vec![
            sandbox(
                "gone-old",
                "shop",
                "u-gone",
                SandboxState::NotReady,
                3 * HOUR,
                0,
            ),
            sandbox(
                "gone-young",
                "shop",
                "u-young",
                SandboxState::NotReady,
                600,
                0,
            ),
            sandbox(
                "sys-gone",
                "kube-system",
                "u-sys",
                SandboxState::NotReady,
                3 * HOUR,
                0,
            ),
            sandbox(
                "live-old",
                "shop",
                "u-live",
                SandboxState::NotReady,
                5 * HOUR,
                0,
            ),
            sandbox(
                "live-new",
                "shop",
                "u-live",
                SandboxState::NotReady,
                4 * HOUR,
                1,
            ),
            sandbox(
                "busy",
                "shop",
                "u-busy",
                SandboxState::NotReady,
                3 * HOUR,
                0,
            ),
            sandbox("ready", "shop", "u-ready", SandboxState::Ready, 3 * HOUR, 0),
        ],
        vec![container("c", "busy")],
        Some(vec![api_pod("shop", "u-live"), api_pod("shop", "u-ready")]),
    );
    let p = plan(&v, &policy(), &no_selector, now());
    assert_eq!(ids(&p), vec!["live-old", "gone-old"]);
    assert_eq!(p.held.len(), 1);
    assert_eq!(p.held[0].sandbox_id, "sys-gone");
    assert_eq!(p.held[0].reason, "namespace kube-system is excluded");
    assert_eq!(p.refused, None);
}

#[test]
fn nothing_without_api_truth_unless_assumed() {
    let sandboxes = vec![
        sandbox(
            "gone",
            "shop",
            "u-gone",
            SandboxState::NotReady,
            3 * HOUR,
            0,
        ),
        sandbox("old", "shop", "u-live", SandboxState::NotReady, 5 * HOUR, 0),
        sandbox("new", "shop", "u-live", SandboxState::Ready, 4 * HOUR, 1),
    ];
    let v = view(sandboxes, vec![], None);
    let p = plan(&v, &policy(), &no_selector, now());
    assert!(p.removals.is_empty());
    assert!(
        p.refused.as_deref().unwrap().contains("without API truth"),
        "{:?}",
        p.refused
    );
    let assumed = Policy {
        assume_pods_deleted: true,
        ..policy()
    };
    assert_eq!(
        ids(&plan(&v, &assumed, &no_selector, now())),
        vec!["old", "gone"]
    );
}

#[test]
fn selector_and_cap_hold_sandboxes_back() {
    let sandboxes = (0..5)
        .map(|i| {
            sandbox(
                &format!("s{i}"),
                "shop",
                &format!("u{i}"),
                SandboxState::NotReady,
                (10 - i) * HOUR,
                0,
            )
        })
        .collect();
    let v = view(sandboxes, vec![], Some(vec![]));
    let selector = |labels: &BTreeMap<String, String>| {
        (labels.get("app").map(String::as_str) == Some("app-u1"))
            .then(|| "labels match --exclude-selector app=app-u1".to_string())
    };
    let p = plan(
        &v,
        &Policy {
            max_per_run: 2,
            ..policy()
        },
        &selector,
        now(),
    );
    assert_eq!(ids(&p), vec!["s0", "s2"]);
    let held: Vec<(&str, &str)> = p
        .held
        .iter()
        .map(|h| (h.sandbox_id.as_str(), h.reason.as_str()))
        .collect();
    assert_eq!(
        held,
        vec![
            ("s1", "labels match --exclude-selector app=app-u1"),
            ("s3", "over --gc-max-per-run 2; left for the next run"),
            ("s4", "over --gc-max-per-run 2; left for the next run"),
        ]
    );
}

#[test]
fn recheck_leaves_alone_what_changed_since_planning() {
    let planned = view(
        vec![sandbox(
            "s",
            "shop",
            "u",
            SandboxState::NotReady,
            3 * HOUR,
            0,
        )],
        vec![],
        Some(vec![]),
    );
    assert_eq!(
        still_eligible(&planned, "s", &policy(), &no_selector, now()),
        Ok(())
    );

    let gained_container = view(
        planned.cri.clone().unwrap().sandboxes,
        vec![container("c", "s")],
        Some(vec![]),
    );
    assert_eq!(
        still_eligible(&gained_container, "s", &policy(), &no_selector, now()),
        Err("the sandbox now holds 1 container(s)".to_string())
    );
    let pod_appeared = view(
        planned.cri.clone().unwrap().sandboxes,
        vec![],
        Some(vec![api_pod("shop", "u")]),
    );
    let err = still_eligible(&pod_appeared, "s", &policy(), &no_selector, now()).unwrap_err();
    assert!(err.contains("pod uid u is known again"), "{err}");
    let gone = view(vec![], vec![], Some(vec![]));
    assert_eq!(
        still_eligible(&gone, "s", &policy(), &no_selector, now()),
        Err("the sandbox no longer exists".to_string())
    );
    let api_lost = view(planned.cri.clone().unwrap().sandboxes, vec![], None);
    assert!(
        still_eligible(&api_lost, "s", &policy(), &no_selector, now())
            .unwrap_err()
            .contains("without API truth")
    );
}

// === property test ===

/// A generated node: a few pods (some in the API), each with 1 to 3 sandboxes of random state
/// and age, some holding containers.
#[test]
fn stop_failures_are_reported_while_their_sandbox_is_listed() {
    let sb = sandbox("sb-1", "default", "u1", SandboxState::NotReady, 7200, 0);
    let failed = stop_failed(
        &sb,
        "rpc error: code = Unknown desc = failed to destroy network for sandbox \"sb-1\": plugin type=\"bridge\" failed (delete): failed to find plugin \"bridge\" in path [/opt/cni/bin]",
    );
    assert_eq!(
        failed.finding.kind,
        crate::finding::FindingKind::SandboxStopFailing
    );
    assert_eq!(failed.finding.sandbox_id.as_deref(), Some("sb-1"));
    assert!(failed.class.starts_with("CNI teardown"), "{}", failed.class);
    let gc = vec![failed.finding.clone()];

    // Listed: added once; a second evaluation with the kubelet's own finding merges evidence.
    let listed = view(vec![sb.clone()], vec![], Some(vec![]));
    let mut findings = vec![];
    add_stop_failures(&mut findings, &gc, &listed);
    assert_eq!(findings, gc);
    let mut kubelet = failed.finding.clone();
    kubelet.evidence.truncate(0);
    let mut findings = vec![kubelet];
    add_stop_failures(&mut findings, &gc, &listed);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].evidence, failed.finding.evidence);

    // Gone from the runtime: resolved. Runtime unreadable: kept (nothing resolves on no data).
    let mut findings = vec![];
    add_stop_failures(&mut findings, &gc, &view(vec![], vec![], Some(vec![])));
    assert!(findings.is_empty());
    let mut blind = listed.clone();
    blind.cri = None;
    add_stop_failures(&mut findings, &gc, &blind);
    assert_eq!(findings.len(), 1);
}

fn arb_node() -> impl Strategy<Value = (NodeView, Policy)> {
    let arb_sandbox = (
        0u8..6,
        any::<bool>(),
        0i64..(6 * HOUR),
        any::<bool>(),
        any::<bool>(),
    );
    (
        prop::collection::vec(arb_sandbox, 0..24),
        prop::collection::btree_set(0u8..6, 0..6),
        any::<bool>(),
        0i64..(3 * HOUR),
        1usize..30,
        prop::option::of(Just(())),
    )
        .prop_map(
            |(sbs, in_api, assume, min_age_secs, max_per_run, has_api)| {
                let mut sandboxes = Vec::new();
                let mut containers = Vec::new();
                for (i, (pod, ready, age, has_container, system)) in sbs.into_iter().enumerate() {
                    let ns = if system { "kube-system" } else { "shop" };
                    let id = format!("s{i}");
                    let state = if ready {
                        SandboxState::Ready
                    } else {
                        SandboxState::NotReady
                    };
                    sandboxes.push(sandbox(&id, ns, &format!("u{pod}"), state, age, i as u32));
                    if has_container {
                        containers.push(container(&format!("c{i}"), &id));
                    }
                }
                let pods = has_api.map(|()| {
                    in_api
                        .iter()
                        .map(|p| api_pod("shop", &format!("u{p}")))
                        .collect()
                });
                let policy = Policy {
                    min_age: Duration::from_secs(min_age_secs as u64),
                    exclude_namespaces: BTreeSet::from(["kube-system".to_string()]),
                    assume_pods_deleted: assume,
                    max_per_run,
                };
                (view(sandboxes, containers, pods), policy)
            },
        )
}

proptest! {
    #[test]
    fn never_selects_what_the_kubelet_still_needs((node, policy) in arb_node()) {
        let p = plan(&node, &policy, &no_selector, now());
        let cri = node.cri.as_ref().unwrap();
        let api_uids: BTreeSet<&str> =
            node.api.iter().flat_map(|a| a.pods.iter().map(|p| p.pod.uid.as_str())).collect();
        prop_assert!(p.removals.len() <= policy.max_per_run);
        if node.api.is_none() && !policy.assume_pods_deleted {
            prop_assert!(p.removals.is_empty());
        }
        for r in &p.removals {
            let s = cri.sandboxes.iter().find(|s| s.id == r.sandbox_id).unwrap();
            prop_assert_eq!(s.state, SandboxState::NotReady, "selected a READY sandbox");
            prop_assert!(!cri.containers.iter().any(|c| c.sandbox_id == s.id), "selected a sandbox with a container");
            prop_assert!(now().duration_since(s.created_at) >= SignedDuration::try_from(policy.min_age).unwrap(), "selected a young sandbox");
            prop_assert!(!policy.exclude_namespaces.contains(&s.pod.namespace));
            let newest = cri
                .sandboxes
                .iter()
                .filter(|o| o.pod.uid == s.pod.uid)
                .max_by(|a, b| a.created_at.cmp(&b.created_at).then(a.attempt.cmp(&b.attempt)))
                .unwrap();
            prop_assert!(
                !(api_uids.contains(s.pod.uid.as_str()) && newest.id == s.id),
                "selected the newest sandbox of a pod the API knows"
            );
            prop_assert_eq!(still_eligible(&node, &s.id, &policy, &no_selector, now()), Ok(()));
        }
    }
}
