//! `SandboxCreateFailing` on the real kubelet v1.34.4 and containerd lines of
//! `testdata/` (crates/cli/tests/real_startup.rs, the CNI plugin's binary missing when two pods
//! were created: one ADD each, then the teardown loop of the failed sandboxes).

use std::time::Duration;

use jiff::Timestamp;

use crate::event::{LogKind, LoggedEvent, read_text};
use crate::finding::{FindingKind, Severity};
use crate::model::NodeView;
use crate::rules::Config;
use crate::rules::logs::diagnose_logs;

const KUBELET: &str = include_str!("testdata/kubelet.log");
const CONTAINERD: &str = include_str!("testdata/containerd.log");

fn cfg() -> Config {
    Config {
        min_age: Duration::from_secs(600),
        failed_pod_min_age: Duration::from_secs(3600),
        assume_pods_deleted: false,
        slow_start: Duration::from_secs(180),
    }
}

fn now() -> Timestamp {
    "2026-12-01T21:03:00Z".parse().unwrap()
}

fn events(kubelet: &str, containerd: &str) -> Vec<LoggedEvent> {
    let mut e = read_text(LogKind::Kubelet, "kubelet.log", 2026, kubelet);
    e.extend(read_text(
        LogKind::Runtime,
        "containerd.log",
        2026,
        containerd,
    ));
    e
}

/// The findings of the fixture's lines less those holding any of `words`.
fn diagnose_without(words: &[&str]) -> Vec<crate::finding::Finding> {
    let keep = |text: &str| {
        text.lines()
            .filter(|l| !words.iter().any(|w| l.contains(w)))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    diagnose_logs(
        &events(&keep(KUBELET), &keep(CONTAINERD)),
        &NodeView::empty(),
        &cfg(),
        now(),
    )
}

#[test]
fn the_plugin_binary_missing_at_create_is_one_create_failure() {
    let found = diagnose_logs(
        &events(KUBELET, CONTAINERD),
        &NodeView::empty(),
        &cfg(),
        now(),
    );
    let kinds: Vec<(FindingKind, Severity)> = found.iter().map(|f| (f.kind, f.severity)).collect();
    // One ADD each, then only teardowns: the cause, once; no SandboxStopFailing beside it.
    assert_eq!(
        kinds,
        vec![(FindingKind::SandboxCreateFailing, Severity::Critical)],
        "{found:#?}"
    );
    let f = &found[0];
    assert!(
        f.summary.starts_with(
            "pod sandboxes cannot be created: the CNI ADD fails (plugin podcoroner-missing-plugin): \
             the plugin's binary is not in the CNI bin path; 2 pods wait in ContainerCreating"
        ) && f.summary.contains("shop/no-bin-0")
            && f.summary.contains("shop/no-bin-1")
            && f.summary.contains(
                "2 failed sandboxes cannot be torn down either, so the kubelet retries the \
                 teardown and never the ADD"
            ),
        "{}",
        f.summary
    );
    // The teardown loop of each failed sandbox is its evidence.
    for sb in ["fdd0244e492f7", "f0c96e9308360"] {
        assert!(
            f.evidence.iter().any(|e| e.detail.contains(
                "kuberuntime_manager.go SyncPod kills the failed sandbox before it creates another"
            ) && e.detail.contains(&format!("sandbox {sb} "))),
            "{sb}: {f:#?}"
        );
    }
}

#[test]
fn one_pod_one_add_and_its_teardown_loop_is_reported() {
    // Only no-bin-0's lines: one pod waits (a warning by itself), but the stop failure the
    // finding folds in was critical (the plugin cannot run on this node): critical it stays.
    let found = diagnose_without(&["no-bin-1", "f0c96e9308360", "de085b16"]);
    let kinds: Vec<(FindingKind, Severity)> = found.iter().map(|f| (f.kind, f.severity)).collect();
    assert_eq!(
        kinds,
        vec![(FindingKind::SandboxCreateFailing, Severity::Critical)],
        "{found:#?}"
    );
    assert_eq!(found[0].pod.as_ref().unwrap().name, "no-bin-0");
}

#[test]
fn one_failed_add_without_a_stuck_teardown_is_transient() {
    // The same ADD failures with no teardown after them (the runtime cleaned the failed sandbox
    // up): one attempt, nothing to report (the next sync may well mend it).
    let found = diagnose_without(&[
        "StopPodSandbox",
        "stop sandbox",
        "KillPodSandbox",
        "killPodWithSyncResult",
        "destroy network",
        "cleaning up failed sandbox",
    ]);
    assert!(
        found
            .iter()
            .all(|f| f.kind != FindingKind::SandboxCreateFailing),
        "{found:#?}"
    );
}
