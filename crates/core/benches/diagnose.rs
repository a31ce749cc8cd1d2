//! The correlation on a synthetic node of 1,000 pod sandboxes and 5,000 containers (the target is
//! under 20 ms a diagnosis), beside a baseline in the same run: one pass that only groups
//! containers by sandbox ID, the least any correlation must do.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use jiff::{SignedDuration, Timestamp};
use podcoroner_core::model::*;
use podcoroner_core::{Config, diagnose};

const N_SANDBOXES: usize = 1_000;
const CONTAINERS_PER_SANDBOX: usize = 5;

/// 1,000 sandboxes: 700 pods with one READY sandbox, 100 pods with an older NOTREADY sandbox
/// beside a READY one (200 sandboxes), 90 leaked sandboxes of gone pods and 10 static pods;
/// 6 containers per READY sandbox and 5 in each of 28 NOTREADY ones (5,000 in all, some
/// orphaned);
/// the API pods of the live pods, mirror pods, manifests and a pod directory per pod.
fn node(now: Timestamp) -> NodeView {
    let mut sandboxes = Vec::with_capacity(N_SANDBOXES);
    let mut api = Vec::new();
    let mut dirs = Vec::new();
    let mut manifests = Vec::new();
    let mut push = |i: usize, uid: &str, attempt: u32, state: SandboxState, is_static: bool| {
        let name = format!("pod-{i}");
        let mut labels = BTreeMap::from([
            (LABEL_POD_UID.to_string(), uid.to_string()),
            (LABEL_POD_NAME.to_string(), name.clone()),
            (LABEL_POD_NAMESPACE.to_string(), "bench".to_string()),
            ("app".to_string(), format!("app-{}", i % 37)),
        ]);
        labels.insert("pod-template-hash".to_string(), "5d8f7c9b6".to_string());
        let source = if is_static { "file" } else { "api" };
        let mut annotations =
            BTreeMap::from([(ANNOTATION_CONFIG_SOURCE.to_string(), source.to_string())]);
        if is_static {
            annotations.insert(ANNOTATION_CONFIG_HASH.to_string(), uid.to_string());
        }
        sandboxes.push(Sandbox {
            id: format!("{:064x}", i * 1_000 + attempt as usize),
            pod: PodRef {
                namespace: "bench".to_string(),
                name,
                uid: uid.to_string(),
            },
            attempt,
            state,
            created_at: now
                - SignedDuration::from_secs(3600 * 24 - i as i64 - attempt as i64 * 600),
            labels,
            annotations,
        });
    };
    for i in 0..900 {
        let uid = format!("{:08x}-0000-4000-8000-{i:012x}", i);
        let is_static = i >= 890;
        if i < 100 {
            push(i, &uid, 0, SandboxState::NotReady, false);
            push(i, &uid, 1, SandboxState::Ready, false);
        } else if i < 800 || is_static {
            push(i, &uid, 0, SandboxState::Ready, is_static);
        } else {
            push(i, &uid, 0, SandboxState::NotReady, false);
            continue; // gone from the API
        }
        if is_static {
            manifests.push(StaticManifest {
                path: format!("/etc/kubernetes/manifests/pod-{i}.yaml"),
                pod: Ok(ManifestPod {
                    name: format!("pod-{i}"),
                    namespace: "bench".to_string(),
                    uid: Some(uid.clone()),
                }),
            });
        }
        api.push(ApiPod {
            pod: PodRef {
                namespace: "bench".to_string(),
                name: format!("pod-{i}"),
                uid: uid.clone(),
            },
            node_name: "bench-node".to_string(),
            phase: if i % 50 == 0 { "Failed" } else { "Running" }.to_string(),
            reason: None,
            annotations: BTreeMap::new(),
            created_at: Some(now - SignedDuration::from_hours(30)),
            deletion_timestamp: None,
            deletion_grace_period_seconds: None,
            status_changed_at: Some(now - SignedDuration::from_hours(29)),
            startup: Default::default(),
        });
        dirs.push(PodDir {
            path: format!("/var/lib/kubelet/pods/{uid}"),
            uid,
            volume_dirs: vec!["kubernetes.io~projected/kube-api-access".to_string()],
            entries: vec!["containers".to_string(), "etc-hosts".to_string()],
            modified_at: Some(now - SignedDuration::from_hours(30)),
        });
    }
    assert_eq!(sandboxes.len(), N_SANDBOXES);
    let mut containers = Vec::new();
    let with_containers: Vec<&Sandbox> = sandboxes
        .iter()
        .filter(|s| s.state == SandboxState::Ready)
        .chain(
            sandboxes
                .iter()
                .filter(|s| s.state == SandboxState::NotReady)
                .take(28),
        )
        .collect();
    for (n, s) in with_containers.iter().enumerate() {
        let n_containers = if s.state == SandboxState::Ready { 6 } else { 5 };
        for c in 0..n_containers {
            let orphan = n % 97 == 0 && c == 0;
            containers.push(Container {
                id: format!("{:064x}", (n * 10 + c) as u128 + (1u128 << 100)),
                sandbox_id: if orphan {
                    format!("{:064x}", 7u128 << 90)
                } else {
                    s.id.clone()
                },
                name: format!("c{c}"),
                attempt: 0,
                state: if c >= 4 {
                    ContainerState::Exited
                } else {
                    ContainerState::Running
                },
                created_at: s.created_at + SignedDuration::from_secs(2),
                started_at: None,
                image: "registry.local/app:1".to_string(),
                labels: BTreeMap::from([(LABEL_POD_UID.to_string(), s.pod.uid.clone())]),
                annotations: BTreeMap::new(),
            });
        }
    }
    assert_eq!(containers.len(), N_SANDBOXES * CONTAINERS_PER_SANDBOX);
    NodeView {
        node_name: "bench-node".to_string(),
        cri: Some(CriView {
            sandboxes,
            containers,
        }),
        api: Some(ApiView {
            pods: api,
            origin: "bench".to_string(),
        }),
        manifests: Some(ManifestView {
            dir: "/etc/kubernetes/manifests".to_string(),
            exists: true,
            files: manifests,
            unreadable: vec![],
        }),
        pod_dirs: Some(dirs),
        manifest_url: None,
    }
}

fn bench(c: &mut Criterion) {
    let now: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
    let view = node(now);
    let config = Config {
        min_age: Duration::from_secs(600),
        failed_pod_min_age: Duration::from_secs(3600),
        assume_pods_deleted: false,
        slow_start: std::time::Duration::from_secs(180),
    };
    let d = diagnose(&view, &config, now);
    eprintln!("synthetic node: {} findings", d.findings.len());
    let mut group = c.benchmark_group("node_1000_sandboxes_5000_containers");
    group.bench_function("diagnose", |b| {
        b.iter(|| diagnose(black_box(&view), &config, now))
    });
    group.bench_function("baseline_group_containers_by_sandbox", |b| {
        b.iter(|| {
            let cri = black_box(&view).cri.as_ref().unwrap();
            let mut by: HashMap<&str, usize> = HashMap::new();
            for c in &cri.containers {
                *by.entry(c.sandbox_id.as_str()).or_default() += 1;
            }
            by.len()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
