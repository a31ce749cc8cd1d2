//! Unit tests for the log rules: per rule, the lines that make a finding and those that must not,
//! in the shapes real kubelets and runtimes write (many taken from `testdata/cases/`).

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::model::*;
use crate::startup::values::go_duration;

const SB1: &str = "320983ce679b69a1fa11436cfe75780398955ba0c7487db46102f854b35ca69a";
const SB2: &str = "e39e61423ee6eba5859a37f14e4c397bd6826d26d04c4c397df5c6638e13695b";
const C1: &str = "d0f631ca1ddba8db3bcfcb9e057cdc98d0379f1bee00e75a545147a27dadd982";
const C2: &str = "9c0abe51c6e6655d81de2d044d4fb194931f058c0426c67c7285d8f5657ed64a";
const UID1: &str = "5da3387d-ad1c-11ea-a025-525400767782";
const UID2: &str = "e1909e28-5731-4111-8031-3c989b5dc0cd";
const HASH: &str = "7c0663d52f9e8c61c7a733304c23b60f";

fn cfg() -> Config {
    Config {
        min_age: Duration::from_secs(600),
        failed_pod_min_age: Duration::from_secs(3600),
        assume_pods_deleted: false,
        slow_start: std::time::Duration::from_secs(180),
    }
}

fn now() -> Timestamp {
    "2024-06-01T00:00:00Z".parse().unwrap()
}

/// The events of one log's lines, as `podcoroner-logs` reads them (year 2024).
fn read(log: LogKind, origin: &str, lines: &[String]) -> Vec<LoggedEvent> {
    crate::event::read_text(log, origin, 2024, &lines.join("\n"))
}

/// One table row: the kubelet's and the runtime's lines, the view, and the findings wanted as
/// (kind, severity, a word the finding's subject, summary or evidence holds).
struct Case {
    name: &'static str,
    kubelet: Vec<String>,
    runtime: Vec<String>,
    view: NodeView,
    want: Vec<(FindingKind, Severity, &'static str)>,
}

fn case(
    name: &'static str,
    kubelet: &[String],
    want: &[(FindingKind, Severity, &'static str)],
) -> Case {
    Case {
        name,
        kubelet: kubelet.to_vec(),
        runtime: vec![],
        view: NodeView::empty(),
        want: want.to_vec(),
    }
}

/// [`case`] for runtime log lines.
fn runtime_case(
    name: &'static str,
    runtime: Vec<String>,
    want: &[(FindingKind, Severity, &'static str)],
) -> Case {
    Case {
        name,
        kubelet: vec![],
        runtime,
        view: NodeView::empty(),
        want: want.to_vec(),
    }
}

fn mentions(f: &Finding, word: &str) -> bool {
    let subject = format!("{:?} {:?} {:?}", f.pod, f.sandbox_id, f.container_id);
    subject.contains(word)
        || f.summary.contains(word)
        || f.remediation.contains(word)
        || f.evidence.iter().any(|e| e.detail().contains(word))
}

fn check(cases: Vec<Case>) {
    let mut failures = Vec::new();
    for c in cases {
        let mut events = read(LogKind::Kubelet, "kubelet.log", &c.kubelet);
        events.extend(read(LogKind::Runtime, "containerd.log", &c.runtime));
        let found = diagnose_logs(&events, &c.view, &cfg(), now());
        let got: Vec<(FindingKind, Severity)> =
            found.iter().map(|f| (f.kind, f.severity)).collect();
        let want: Vec<(FindingKind, Severity)> = c.want.iter().map(|w| (w.0, w.1)).collect();
        let mut g = got.clone();
        let mut w = want.clone();
        g.sort();
        w.sort();
        if g != w {
            failures.push(format!(
                "{}: got {got:?}, want {want:?}\n{}",
                c.name,
                found
                    .iter()
                    .map(|f| format!("    {}", f.summary))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
            continue;
        }
        for (kind, severity, word) in &c.want {
            if !found
                .iter()
                .any(|f| f.kind == *kind && f.severity == *severity && mentions(f, word))
            {
                failures.push(format!(
                    "{}: no {kind:?} {severity:?} mentioning {word:?}",
                    c.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn cri(sandboxes: &[(&str, &str, SandboxState)], containers: &[&str]) -> NodeView {
    let mut view = NodeView::empty();
    view.cri = Some(CriView {
        sandboxes: sandboxes
            .iter()
            .map(|(id, uid, state)| Sandbox {
                id: id.to_string(),
                pod: PodRef {
                    namespace: "team-ns".to_string(),
                    name: "app-0".to_string(),
                    uid: uid.to_string(),
                },
                attempt: 0,
                state: *state,
                created_at: now() - SignedDuration::from_hours(1),
                labels: BTreeMap::from([(LABEL_POD_UID.to_string(), uid.to_string())]),
                annotations: BTreeMap::new(),
            })
            .collect(),
        containers: containers
            .iter()
            .map(|id| Container {
                id: id.to_string(),
                sandbox_id: SB1.to_string(),
                name: "app".to_string(),
                attempt: 0,
                state: ContainerState::Exited,
                created_at: now() - SignedDuration::from_hours(1),
                started_at: None,
                image: "registry.local/app:1".to_string(),
                labels: BTreeMap::new(),
                annotations: BTreeMap::new(),
            })
            .collect(),
    });
    view
}

// === lines ===

fn gc_stop_failed(t: &str, sb: &str, why: &str) -> String {
    format!(
        r#"E0310 {t}    1234 kuberuntime_gc.go:176] "Failed to stop sandbox before removing" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"{sb}\": {why}" sandboxID="{sb}""#
    )
}

fn cri_stop_failed(t: &str, sb: &str, why: &str) -> String {
    format!(
        r#"E0310 {t}    1234 remote_runtime.go:205] "StopPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"{sb}\": {why}" podSandboxID="{sb}""#
    )
}

fn containerd_stop_failed(t: &str, sb: &str, why: &str) -> String {
    format!(
        r#"time="2024-03-10T{t}Z" level=error msg="StopPodSandbox for \"{sb}\" failed" error="failed to destroy network for sandbox \"{sb}\": {why}""#
    )
}

fn kill_sandbox_failed(t: &str, pod: &str, uid: &str, sb: &str, why: &str) -> String {
    format!(
        r#"E0310 {t}    1234 pod_workers.go:951] "Error syncing pod, skipping" err="failed to \"KillPodSandbox\" for \"{uid}\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"{sb}\\\": {why}\"" pod="{pod}" podUID={uid}"#
    )
}

/// The first line of a kubelet start, as the real kubelet v1.34.4 logs it.
fn kubelet_started(t: &str) -> String {
    format!(r#"I0310 {t}   21520 server.go:529] "Kubelet version" kubeletVersion="v1.34.4""#)
}

fn sync_loop(t: &str, op: &str, source: &str, pod: &str) -> String {
    format!(r#"I0310 {t}    1234 kubelet.go:2063] "SyncLoop {op}" source="{source}" pods=[{pod}]"#)
}

// === SandboxStopFailing ===

#[test]
fn sandbox_stop_failing() {
    let not_init = "cni plugin not initialized";
    check(vec![
        case(
            "GC fails every minute: one finding, two attempts",
            &[
                gc_stop_failed(
                    "10:00:00.000000",
                    SB1,
                    "connection is unauthorized: Unauthorized",
                ),
                gc_stop_failed(
                    "10:01:00.000000",
                    SB1,
                    "connection is unauthorized: Unauthorized",
                ),
            ],
            &[(
                FindingKind::SandboxStopFailing,
                Severity::Warning,
                "2 attempts",
            )],
        ),
        Case {
            name: "the runtime's, the CRI client's and the GC's line of one failure: one finding",
            kubelet: vec![
                cri_stop_failed("10:00:00.100000", SB1, not_init),
                gc_stop_failed("10:00:00.100100", SB1, not_init),
            ],
            runtime: vec![containerd_stop_failed("10:00:00.099000", SB1, not_init)],
            view: NodeView::empty(),
            want: vec![(
                FindingKind::SandboxStopFailing,
                Severity::Warning,
                "1 attempt, 3 log records",
            )],
        },
        case(
            "the CNI plugin binary is missing: node-wide, critical",
            &[format!(
                r#"Jun  8 22:53:30 node-a kubelet: E0608 22:53:30.195821    7906 kuberuntime_gc.go:153] Failed to stop sandbox "{SB1}" before removing: rpc error: code = Unknown desc = NetworkPlugin cni failed to teardown pod "es-0_team-ns" network: failed to find plugin "flannel" in path [/opt/flannel/bin /opt/cni/bin]"#
            )],
            &[(
                FindingKind::SandboxStopFailing,
                Severity::Critical,
                "flannel",
            )],
        ),
        case(
            "removal fails (device busy): removing, with the mount hint",
            &[format!(
                r#"E0829 19:33:49.707784    2373 kuberuntime_gc.go:142] Failed to remove sandbox "{SB1}": rpc error: code = 2 desc = Error response from daemon: {{"message":"Unable to remove filesystem for {SB1}: remove /var/lib/docker/containers/{SB1}/shm: device or resource busy"}}"#
            )],
            &[(
                FindingKind::SandboxStopFailing,
                Severity::Warning,
                "removing pod sandbox",
            )],
        ),
        Case {
            name: "not a finding: the runtime stops the sandbox later",
            kubelet: vec![gc_stop_failed("10:00:00.000000", SB1, not_init)],
            runtime: vec![format!(
                r#"time="2024-03-10T10:01:00.000000000Z" level=info msg="StopPodSandbox for \"{SB1}\" returns successfully""#
            )],
            view: NodeView::empty(),
            want: vec![],
        },
        Case {
            name: "not a finding: the CRI view no longer lists the sandbox",
            kubelet: vec![gc_stop_failed("10:00:00.000000", SB1, not_init)],
            runtime: vec![],
            view: cri(&[(SB2, UID1, SandboxState::NotReady)], &[]),
            want: vec![],
        },
        Case {
            name: "the CRI view still lists it: a finding",
            kubelet: vec![gc_stop_failed("10:00:00.000000", SB1, not_init)],
            runtime: vec![],
            view: cri(&[(SB1, UID1, SandboxState::NotReady)], &[]),
            want: vec![(
                FindingKind::SandboxStopFailing,
                Severity::Warning,
                "team-ns",
            )],
        },
        case(
            "not a finding: the only error is NotFound (the sandbox is gone)",
            &[format!(
                r#"E0310 10:00:00.000000    1234 remote_runtime.go:205] "StopPodSandbox from runtime service failed" err="rpc error: code = NotFound desc = an error occurred when try to find sandbox \"{SB1}\": not found" podSandboxID="{SB1}""#
            )],
            &[],
        ),
    ]);
}

/// Another call's failure logged between the lines of one failed call: the sandbox GC's (or
/// another pod's) is never joined to the pod worker's kill (the npd_cost bench: an injected GC
/// failure between a case's "Failed to stop sandbox" and its cut "killPodWithSyncResult
/// failed" came out as the other pod's StuckTerminatingPod, with no SandboxStopFailing).
#[test]
fn teardown_lines_of_two_calls_interleaved() {
    let not_init = "cni plugin not initialized";
    let weave = "plugin type=\\\"weave-net\\\" failed (delete): netplugin failed";
    let stop_failed = format!(
        r#"E0310 17:09:37.429469   10468 kuberuntime_manager.go:965] "Failed to stop sandbox" podSandboxID={{Type:containerd ID:{SB1}}}"#
    );
    let kill_failed_cut = format!(
        r#"E0310 17:09:37.429510   10468 kuberuntime_manager.go:705] "killPodWithSyncResult failed" err="failed to \"KillPodSandbox\" for \"{UID2}\" with KillPodSandboxError: \"rpc error:"#
    );
    check(vec![
        case(
            "the GC's failure of another sandbox between the kill's two lines: the kill is one \
             incident over it, the GC's its own SandboxStopFailing",
            &[
                cri_stop_failed("17:09:37.429430", SB1, weave),
                stop_failed.clone(),
                gc_stop_failed("17:09:37.429490", SB2, not_init),
                kill_failed_cut.clone(),
            ],
            &[
                (
                    FindingKind::StuckTerminatingPod,
                    Severity::Warning,
                    "3 log records",
                ),
                (FindingKind::SandboxStopFailing, Severity::Warning, SB2),
            ],
        ),
        case(
            "the GC's failure right before a cut kill line naming nothing else: not joined",
            &[
                gc_stop_failed("17:09:37.429490", SB2, not_init),
                kill_failed_cut.clone(),
            ],
            &[
                (FindingKind::StuckTerminatingPod, Severity::Warning, UID2),
                (FindingKind::SandboxStopFailing, Severity::Warning, SB2),
            ],
        ),
        Case {
            name: "a runtime-side failure of a sandbox the CRI view gives to another pod: not \
                   joined to the cut kill line of this pod",
            kubelet: vec![
                cri_stop_failed("17:09:37.429490", SB2, not_init),
                kill_failed_cut,
            ],
            runtime: vec![],
            view: cri(
                &[
                    (SB1, UID2, SandboxState::NotReady),
                    (SB2, UID1, SandboxState::NotReady),
                ],
                &[],
            ),
            want: vec![
                (FindingKind::StuckTerminatingPod, Severity::Warning, UID2),
                (FindingKind::SandboxStopFailing, Severity::Warning, SB2),
            ],
        },
    ]);
}

// === StuckTerminatingPod ===

#[test]
fn stuck_terminating_pod() {
    let empty = r#"plugin type=\\\"flannel\\\" failed (delete): failed to parse netconf: unexpected end of JSON input"#;
    check(vec![
        case(
            "not a finding: a kill answered no such container (already gone, kubernetes/kubernetes#28748)",
            &[r#"E0307 21:29:42.853422    3471 kubelet_pods.go:788] Failed killing the pod "foo-w49ss": failed to "KillContainer" for "POD" with KillContainerError: "no such container: \"6f47c1c9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1\"""#.to_string()],
            &[],
        ),
        case(
            "KillPodSandbox fails for a pod: stuck terminating, with its sandbox and cause",
            &[kill_sandbox_failed(
                "13:07:17.246702",
                "team-ns/app-0",
                UID2,
                SB1,
                empty,
            )],
            &[(FindingKind::StuckTerminatingPod, Severity::Warning, SB1)],
        ),
        case(
            "\"Failed to stop sandbox\" then \"killPodWithSyncResult failed\": one finding, by adjacency",
            &[
                cri_stop_failed(
                    "17:09:37.429430",
                    SB1,
                    "plugin type=\\\"weave-net\\\" failed (delete): netplugin failed",
                ),
                format!(
                    r#"E0310 17:09:37.429469   10468 kuberuntime_manager.go:965] "Failed to stop sandbox" podSandboxID={{Type:containerd ID:{SB1}}}"#
                ),
                format!(
                    r#"E0310 17:09:37.429510   10468 kuberuntime_manager.go:705] "killPodWithSyncResult failed" err="failed to \"KillPodSandbox\" for \"{UID2}\" with KillPodSandboxError: \"rpc error:"#
                ),
            ],
            &[(FindingKind::StuckTerminatingPod, Severity::Warning, UID2)],
        ),
        case(
            "a kubelet start ends the kill of a pod no source gives any more: the sandbox GC's \
             failures after it are SandboxStopFailing",
            &[
                kill_sandbox_failed("13:07:17.246702", "team-ns/app-0", UID2, SB1, empty),
                kubelet_started("13:10:00.000000"),
                gc_stop_failed("13:11:02.000000", SB1, empty),
                gc_stop_failed("13:12:02.000000", SB1, empty),
            ],
            &[(FindingKind::SandboxStopFailing, Severity::Warning, SB1)],
        ),
        case(
            "the kill fails again after a kubelet start (the pod is still in the API): still \
             StuckTerminatingPod",
            &[
                kill_sandbox_failed("13:07:17.246702", "team-ns/app-0", UID2, SB1, empty),
                kubelet_started("13:10:00.000000"),
                kill_sandbox_failed("13:10:05.000000", "team-ns/app-0", UID2, SB1, empty),
                gc_stop_failed("13:11:02.000000", SB1, empty),
            ],
            &[(FindingKind::StuckTerminatingPod, Severity::Warning, SB1)],
        ),
        case(
            "a kubelet start before the failures changes nothing",
            &[
                kubelet_started("13:00:00.000000"),
                kill_sandbox_failed("13:07:17.246702", "team-ns/app-0", UID2, SB1, empty),
            ],
            &[(FindingKind::StuckTerminatingPod, Severity::Warning, SB1)],
        ),
        case(
            "not a finding: the pod's API object goes (REMOVE) after the failure",
            &[
                kill_sandbox_failed("13:07:17.246702", "team-ns/app-0", UID2, SB1, empty),
                sync_loop("13:08:00.000000", "REMOVE", "api", "team-ns/app-0"),
            ],
            &[],
        ),
        case(
            "not a finding: a KillContainer NotFound (the container is already gone)",
            &[format!(
                r#"E0310 13:07:17.246702    1736 pod_workers.go:951] "Error syncing pod, skipping" err="failed to \"KillContainer\" for \"app\" with KillContainerError: \"rpc error: code = NotFound desc = an error occurred when try to find container \\\"{C1}\\\": not found\"" pod="team-ns/app-0" podUID={UID2}"#
            )],
            &[],
        ),
        Case {
            name: "the API pod is not being deleted: the sandbox's failure, not a stuck termination",
            kubelet: vec![kill_sandbox_failed(
                "13:07:17.246702",
                "team-ns/app-0",
                UID2,
                SB1,
                empty,
            )],
            runtime: vec![],
            view: NodeView {
                api: Some(ApiView {
                    pods: vec![ApiPod {
                        pod: PodRef {
                            namespace: "team-ns".to_string(),
                            name: "app-0".to_string(),
                            uid: UID2.to_string(),
                        },
                        node_name: String::new(),
                        phase: "Running".to_string(),
                        reason: None,
                        annotations: BTreeMap::new(),
                        created_at: None,
                        deletion_timestamp: None,
                        deletion_grace_period_seconds: None,
                        status_changed_at: None,
                        startup: Default::default(),
                    }],
                    origin: "test".to_string(),
                }),
                ..NodeView::empty()
            },
            want: vec![(FindingKind::SandboxStopFailing, Severity::Warning, SB1)],
        },
    ]);
}

// === StaticPodNotRemoved, StaticPodRemoved ===

/// The volume manager's retry of a failed unmount (`nestedpendingoperations.go`, 1.20+ shape).
fn teardown_failed(t: &str, uid: &str, backoff: &str, why: &str) -> String {
    format!(
        r#"E0601 {t}    2345 nestedpendingoperations.go:348] Operation for "{{volumeName:kubernetes.io/csi/hostpath.csi.k8s.io^vol-1 podName:{uid} nodeName:}}" failed. No retries permitted until 2024-06-01 {t} +0000 UTC m=+881.487053596 (durationBeforeRetry {backoff}). Error: UnmountVolume.TearDown failed for volume "data" (UniqueName: "kubernetes.io/csi/hostpath.csi.k8s.io^vol-1") pod "{uid}" (UID: "{uid}") : {why}"#
    )
}

#[test]
fn volume_teardown_failing() {
    // A record of another pod on the same day: the log goes on.
    let later = |t: &str| {
        format!(
            r#"I0601 {t}    2345 kubelet.go:2063] "SyncLoop DELETE" source="api" pods=["team-ns/other-0"]"#
        )
    };
    let busy = format!(
        "remove /var/lib/kubelet/pods/{UID1}/volumes/kubernetes.io~csi/data/mount: device or resource busy"
    );
    let csi = "kubernetes.io/csi: Unmounter.TearDownAt failed: rpc error: code = Aborted desc = NodeUnpublish operation for volume vol-1 still ongoing";
    check(vec![
        case(
            "retried at the longest back-off: the pod cannot finish terminating, the mount is busy",
            &[teardown_failed("10:00:00.000000", UID1, "2m2s", &busy)],
            &[(
                FindingKind::StuckTerminatingPod,
                Severity::Warning,
                "device or resource busy",
            )],
        ),
        case(
            "failing over two minutes in shorter back-offs: the CSI driver's",
            &[
                teardown_failed("10:00:00.000000", UID2, "8s", csi),
                teardown_failed("10:01:00.000000", UID2, "16s", csi),
                teardown_failed("10:02:30.000000", UID2, "32s", csi),
            ],
            &[(
                FindingKind::StuckTerminatingPod,
                Severity::Warning,
                "CSI driver",
            )],
        ),
        case(
            "not a finding: a passing failure (a CSI node plugin busy for seconds)",
            &[
                teardown_failed("10:00:00.000000", UID2, "500ms", csi),
                teardown_failed("10:00:01.000000", UID2, "1s", csi),
            ],
            &[],
        ),
        case(
            "not a finding: not logged again by its next retry, the log going on (unmounted)",
            &[
                teardown_failed("10:00:00.000000", UID1, "2m2s", &busy),
                later("10:03:00.000000"),
            ],
            &[],
        ),
        case(
            "retried and failing again, the log going on: still a finding",
            &[
                teardown_failed("10:00:00.000000", UID1, "2m2s", &busy),
                teardown_failed("10:02:02.000000", UID1, "2m2s", &busy),
                later("10:02:30.000000"),
            ],
            &[(
                FindingKind::StuckTerminatingPod,
                Severity::Warning,
                "device or resource busy",
            )],
        ),
    ]);
}

// === KubeletStartFailing ===

#[test]
fn kubelet_start_failing() {
    let exit = |t: &str, err: &str| {
        format!(
            r#"E0205 {t}   12704 run.go:72] "command failed" err="failed to run Kubelet: {err}""#
        )
    };
    let started = |t: &str| {
        format!(r#"I0205 {t}   12704 server.go:529] "Kubelet version" kubeletVersion="v1.34.4""#)
    };
    let running = |t: &str| {
        format!(
            r#"I0205 {t}   12704 kubelet.go:2063] "SyncLoop ADD" source="api" pods=["team-ns/web-0"]"#
        )
    };
    let swap = "running with swap on is not supported, please disable swap! or set --fail-swap-on flag to false";
    let unit_exit = |t: &str| {
        format!(
            "Jul 19 {t} node1 systemd[1]: kubelet.service: Main process exited, code=exited, status=255/n/a"
        )
    };
    let unit_restart = |t: &str, n: u32| {
        format!(
            "Jul 19 {t} node1 systemd[1]: kubelet.service: Scheduled restart job, restart counter is at {n}."
        )
    };
    check(vec![
        case(
            "systemd's word alone of a restart loop (kubeadm#1008): critical, with the counter",
            &[
                unit_exit("20:27:24"),
                "Jul 19 20:27:24 node1 systemd[1]: kubelet.service: Failed with result 'exit-code'.".to_string(),
                unit_restart("20:27:34", 481),
                "Jul 19 20:27:34 node1 systemd[1]: Started kubelet: The Kubernetes Node Agent.".to_string(),
            ],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "(systemd: Main process exited, code=exited, status=255/n/a; 1 exit; systemd's restart counter at 481)",
            )],
        ),
        case(
            "systemd's word of one exit, no restart counted: a warning",
            &[unit_exit("20:27:24")],
            &[(FindingKind::KubeletStartFailing, Severity::Warning, "status=255")],
        ),
        case(
            "the kubelet's own exit beside systemd's: one exit, the kubelet's error",
            &[
                format!(
                    r#"Jul 19 20:27:24 node1 kubelet[5100]: E0719 20:27:24.100000    5100 run.go:72] "command failed" err="failed to run Kubelet: {swap}""#
                ),
                unit_exit("20:27:24"),
                unit_restart("20:27:34", 4),
            ],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "swapoff -a",
            )],
        ),
        case(
            "not a finding: systemd's exits, then the new kubelet registers its Node 30 s before the log ends",
            &[
                unit_exit("20:27:24"),
                unit_restart("20:27:34", 3),
                r#"Jul 19 20:27:40 node1 kubelet[5300]: I0719 20:27:40.000000    5300 kubelet_node_status.go:79] "Successfully registered node" node="node1""#.to_string(),
                r#"Jul 19 20:28:10 node1 kubelet[5300]: I0719 20:28:10.000000    5300 kubelet.go:2063] "SyncLoop ADD" source="api" pods=["team-ns/web-0"]"#.to_string(),
            ],
            &[],
        ),
        case(
            "not a finding: an admin's restart whose SIGTERM timed out (code=killed, status=9/KILL)",
            &[
                "Jul 19 20:27:10 node1 systemd[1]: Stopping kubelet: The Kubernetes Node Agent...".to_string(),
                "Jul 19 20:27:24 node1 systemd[1]: kubelet.service: Main process exited, code=killed, status=9/KILL".to_string(),
                "Jul 19 20:27:24 node1 systemd[1]: Started kubelet: The Kubernetes Node Agent.".to_string(),
            ],
            &[],
        ),
        case(
            "systemd 219's lower-case wording (CentOS 7): the same restart loop",
            &[
                "Jul 19 20:27:24 node1 systemd[1]: kubelet.service: main process exited, code=exited, status=255/n/a".to_string(),
                "Jul 19 20:27:24 node1 systemd[1]: Unit kubelet.service entered failed state.".to_string(),
                "Jul 19 20:27:34 node1 systemd[1]: kubelet.service holdoff time over, scheduling restart.".to_string(),
                "Jul 19 20:27:35 node1 systemd[1]: kubelet.service: main process exited, code=exited, status=255/n/a".to_string(),
            ],
            &[(FindingKind::KubeletStartFailing, Severity::Critical, "2 exits")],
        ),
        case(
            "not this kind: the kubelet's own exit is its runtime endpoint's (RuntimeUnhealthy), systemd's word of it too",
            &[
                r#"Jul 19 20:27:24 node1 kubelet[5100]: E0719 20:27:24.100000    5100 run.go:72] "command failed" err="failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint "unix:///run/containerd/containerd.sock": rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService""#.to_string(),
                unit_exit("20:27:24"),
                unit_restart("20:27:34", 12),
            ],
            &[(FindingKind::RuntimeUnhealthy, Severity::Critical, "serves no CRI")],
        ),
        case(
            "not a finding: systemd's exit, then the kubelet runs on (a crash, restarted)",
            &[
                unit_exit("20:27:24"),
                unit_restart("20:27:34", 1),
                r#"Jul 19 20:29:40 node1 kubelet[5200]: I0719 20:29:40.000000    5200 kubelet.go:2063] "SyncLoop ADD" source="api" pods=["team-ns/web-0"]"#.to_string(),
            ],
            &[],
        ),
        case(
            "1.20-1.25's `Failed to load kubelet config file`, the file missing: a warning (before kubeadm join)",
            &[r#"E0226 12:35:21.632872    1855 server.go:206] "Failed to load kubelet config file" err="failed to load Kubelet config file /var/lib/kubelet/config.yaml, error failed to read kubelet config file \"/var/lib/kubelet/config.yaml\", error: open /var/lib/kubelet/config.yaml: no such file or directory" path="/var/lib/kubelet/config.yaml""#.to_string()],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Warning,
                "kubeadm init or kubeadm join",
            )],
        ),
        case(
            "the kubeconfig's certificate expired, no bootstrap kubeconfig: the expiry is the cause",
            &[
                started("22:38:40.900000"),
                r#"E0205 22:38:41.101522   12704 bootstrap.go:266] "Unhandled Error" err="part of the existing bootstrap client certificate in /etc/kubernetes/kubelet.conf is expired: 2025-09-25 17:11:55 +0000 UTC""#.to_string(),
                exit(
                    "22:38:41.101610",
                    "unable to load bootstrap kubeconfig: stat /etc/kubernetes/bootstrap-kubelet.conf: no such file or directory",
                ),
            ],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "the client certificate in the kubelet's kubeconfig expired (2025-09-25 17:11:55 +0000 UTC)",
            )],
        ),
        case(
            "the expiry said, the bootstrap went through, then a swap exit: swap's fix",
            &[
                r#"E0205 22:38:41.101522   12704 bootstrap.go:266] "Unhandled Error" err="part of the existing bootstrap client certificate in /etc/kubernetes/kubelet.conf is expired: 2025-09-25 17:11:55 +0000 UTC""#.to_string(),
                exit("22:38:43.101610", swap),
            ],
            &[(FindingKind::KubeletStartFailing, Severity::Critical, "swapoff -a")],
        ),
        case(
            "no bootstrap kubeconfig and no expiry said: the join's fix",
            &[exit(
                "22:38:41.101610",
                "unable to load bootstrap kubeconfig: stat /etc/kubernetes/bootstrap-kubelet.conf: no such file or directory",
            )],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "kubeadm token create",
            )],
        ),
        case(
            "its client certificate expired, the API server up: it exits (transport.go)",
            &[
                started("10:58:14.900000"),
                r#"E0205 10:58:20.000000   12704 transport.go:110] "No valid client certificate is found and the server is responsive, exiting." lastCertificateAvailabilityTime="2025-02-04 08:50:28.943096211 +0000 UTC m=+0.345942418" shutdownThreshold="5m0s""#.to_string(),
            ],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "kubectl certificate approve",
            )],
        ),
        case(
            "exits at start, the log ends there: critical, with the swap fix",
            &[started("10:58:14.900000"), exit("10:58:14.917245", swap)],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "running with swap on",
            )],
        ),
        case(
            "a crash loop, each start within seconds of the last exit: still a finding",
            &[
                exit("10:58:14.917245", swap),
                started("10:58:25.000000"),
                exit("10:58:25.100000", swap),
                started("10:58:35.300000"),
            ],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "2 exits",
            )],
        ),
        case(
            "not a finding: it ran over a minute after its last exit (fixed and restarted)",
            &[
                exit("10:58:14.917245", swap),
                started("11:05:00.000000"),
                running("11:06:30.000000"),
            ],
            &[],
        ),
        case(
            "no config file yet (before kubeadm join): a warning, the loop expected",
            &[r#"E0117 16:14:53.701110   17651 run.go:72] "command failed" err="failed to load kubelet config file, path: /var/lib/kubelet/config.yaml, error: failed to load Kubelet config file /var/lib/kubelet/config.yaml, error failed to read kubelet config file \"/var/lib/kubelet/config.yaml\", error: open /var/lib/kubelet/config.yaml: no such file or directory""#
                .to_string()],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Warning,
                "kubeadm init or join",
            )],
        ),
        case(
            "before 1.20, klog.Fatal: the cgroup driver's fix",
            &[r#"F0905 10:01:57.021681   25297 server.go:266] failed to run Kubelet: failed to create kubelet: misconfiguration: kubelet cgroup driver: "cgroupfs" is different from docker cgroup driver: "systemd""#.to_string()],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "is different from docker cgroup driver",
            )],
        ),
        case(
            "in a wrapper's words (minikube's localkube), syslog-wrapped",
            &[r#"Jan 03 01:49:48 banwagong localkube[30646]: kubelet: Exit with error: failed to run Kubelet: failed to create kubelet: misconfiguration: kubelet cgroup driver: "cgroupfs" is different from docker cgroup driver: "systemd""#.to_string()],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "is different from docker cgroup driver",
            )],
        ),
        case(
            "not a finding: another component's `command failed` in the same journal",
            &[r#"Nov 29 08:18:55 cp-1 kube-scheduler[3100]: E1129 08:18:55.000000    3100 run.go:74] "command failed" err="failed to create scheduler: couldn't create scheduler from policy""#.to_string()],
            &[],
        ),
        case(
            "not a finding: the kubelet recovered, then another component exits in its journal",
            &[
                exit("10:58:14.917245", swap),
                started("11:05:00.000000"),
                running("11:06:30.000000"),
                r#"Feb 05 11:06:40 cp-1 kube-scheduler[3100]: E0205 11:06:40.000000    3100 run.go:74] "command failed" err="failed to create scheduler: couldn't create scheduler from policy""#.to_string(),
            ],
            &[],
        ),
        case(
            "not this kind: an exit on the runtime endpoint is RuntimeUnhealthy's",
            &[r#"E1207 09:17:30.895924   18641 run.go:74] "command failed" err="failed to run Kubelet: validate service connection: validate CRI v1 runtime API for endpoint \"unix:///run/containerd/containerd.sock\": rpc error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService""#.to_string()],
            &[(
                FindingKind::RuntimeUnhealthy,
                Severity::Critical,
                "serves no CRI",
            )],
        ),
    ]);
}

/// A kubelet that exited, then started and ran on logging only records no rule reads (a
/// healthy kubelet at -v=0): the log's end, told by the reader, shows it running.
#[test]
fn the_kubelets_log_end_shows_it_running_after_its_last_exit() {
    let lines = [
        r#"E1129 07:58:00.090000    1000 run.go:74] "command failed" err="failed to load kubelet config file, path: /var/lib/kubelet/config.yaml, error: open /var/lib/kubelet/config.yaml: no such file or directory""#.to_string(),
    ];
    let events = read(LogKind::Kubelet, "kubelet.log", &lines);
    let exit = events[0].time.expect("the record has a time");
    let found = |end: Option<Timestamp>| {
        diagnose_with_logs_until(&NodeView::empty(), &events, end, &cfg(), now())
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::KubeletStartFailing)
            .count()
    };
    assert_eq!(found(None), 1, "the log ends at the exit");
    let later = exit.checked_add(SignedDuration::from_mins(5)).ok();
    assert_eq!(found(later), 0, "the kubelet's log went on five minutes");
    let soon = exit.checked_add(SignedDuration::from_secs(20)).ok();
    assert_eq!(found(soon), 1, "20 s on: the next start of a crash loop");
}

// === NodeStatusUpdateFailing ===

#[test]
fn node_status_update_failing() {
    let failed = |t: &str, err: &str| {
        format!(
            r#"E0322 {t}    1272 kubelet_node_status.go:548] "Error updating node status, will retry" err="{err}""#
        )
    };
    let exhausted = |t: &str| {
        format!(
            r#"E0322 {t}    1272 kubelet_node_status.go:535] "Unable to update node status" err="update node status exceeds retry count""#
        )
    };
    let later = |t: &str| {
        format!(
            r#"I0322 {t}    1272 kubelet.go:2063] "SyncLoop DELETE" source="api" pods=["team-ns/other-0"]"#
        )
    };
    let started = |t: &str| {
        format!(r#"I0322 {t}    1272 server.go:487] "Kubelet version" kubeletVersion="v1.30.2""#)
    };
    // As structured klog writes an error: its quotes escaped.
    let deleted = r#"error getting node \"node-a\": nodes \"node-a\" not found"#;
    let refused = r#"error getting node \"node-a\": Get \"https://10.0.0.1:6443/api/v1/nodes/node-a?timeout=10s\": dial tcp 10.0.0.1:6443: connect: connection refused"#;
    // The node lease controller's words (1.21+, and 1.14-1.20's).
    let lease_failed = |t: &str| {
        format!(
            r#"E0322 {t}    1272 controller.go:195] "Failed to update lease" err="Put \"https://10.0.0.1:6443/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a?timeout=10s\": dial tcp 10.0.0.1:6443: connect: connection refused""#
        )
    };
    let lease_ensure = |t: &str| {
        format!(
            r#"E0322 {t}    1272 controller.go:145] "Failed to ensure lease exists, will retry" err="Get \"https://10.0.0.1:6443/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a?timeout=10s\": dial tcp 10.0.0.1:6443: connect: connection refused" interval="7s""#
        )
    };
    let lease_fallback = |t: &str| {
        format!(
            r#"I0322 {t}    1272 controller.go:115] "failed to update lease using latest lease, fallback to ensure lease" err="failed 5 attempts to update lease""#
        )
    };
    let lease_forbidden = |t: &str| {
        format!(
            r#"E0322 {t}    1272 controller.go:136] failed to ensure node lease exists, will retry in 7s, error: leases.coordination.k8s.io "node-a" is forbidden: User "system:node:node-b" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node lease with the same name as the requesting node"#
        )
    };
    let mut lease_outage: Vec<String> = (1..=5)
        .map(|i| lease_failed(&format!("10:00:00.00000{i}")))
        .collect();
    lease_outage.push(lease_fallback("10:00:00.000009"));
    lease_outage.extend((0..52).map(|i| {
        let s = 1 + i * 7;
        lease_ensure(&format!("10:{:02}:{:02}.000000", s / 60, s % 60))
    }));
    check(vec![
        case(
            "the node's lease not renewed for six minutes, the API server refusing: a warning",
            &lease_outage,
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Warning,
                "the kubelet cannot renew its Node's lease",
            )],
        ),
        case(
            "the lease refused to another node's credentials (a copied kubeconfig): a warning",
            &[
                lease_forbidden("05:30:12.750708"),
                lease_forbidden("05:30:19.752760"),
            ],
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Warning,
                "the kubelet's kubeconfig was copied from another node",
            )],
        ),
        case(
            "the Node object deleted, retries exhausted: critical",
            &[
                failed("17:40:06.941770", deleted),
                exhausted("17:40:06.941777"),
            ],
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Critical,
                "nodes \"node-a\" not found",
            )],
        ),
        case(
            "not a finding: the informer's `node \"…\" not found` once at start (the real kubelet)",
            &[failed(
                "08:41:53.142534",
                r#"error getting node \"lab-node\": node \"lab-node\" not found"#,
            )],
            &[],
        ),
        case(
            "the API server out of reach for six minutes, the log ending there: a warning",
            &["10:00:00", "10:03:00", "10:06:00"]
                .iter()
                .flat_map(|t| {
                    (1..=5).map(move |i| failed(&format!("{t}.00000{i}"), refused))
                })
                .collect::<Vec<_>>(),
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Warning,
                "connection refused",
            )],
        ),
        case(
            "one refused try every three minutes, each going through on a retry: an info",
            &[
                failed("10:00:00.000000", refused),
                failed("10:03:00.000000", refused),
                failed("10:06:00.000000", refused),
            ],
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Info,
                "now and then",
            )],
        ),
        case(
            "not a finding: refused for two minutes, as a control plane's boot",
            &[
                started("09:59:50.000000"),
                failed("10:00:00.000000", refused),
                failed("10:02:00.000000", refused),
            ],
            &[],
        ),
        case(
            "refused for a minute, the retries exhausted where the log ends, no start before: an info",
            &[
                failed("10:00:00.000000", refused),
                failed("10:01:00.000000", refused),
                exhausted("10:01:00.000100"),
            ],
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Info,
                "connection refused",
            )],
        ),
        case(
            "not a finding: refused for 20 s, the retries not exhausted",
            &[
                failed("10:00:00.000000", refused),
                failed("10:00:20.000000", refused),
            ],
            &[],
        ),
        case(
            "not a finding: out of reach for six minutes, then the log goes on without a failure",
            &[
                failed("10:00:00.000000", refused),
                failed("10:06:00.000000", refused),
                later("10:08:00.000000"),
            ],
            &[],
        ),
        case(
            "registration refused to system:anonymous, once: the kubelet has no credentials",
            &[r#"E0510 09:26:40.763688    1046 kubelet_node_status.go:92] "Unable to register node with API server" err="nodes is forbidden: User \"system:anonymous\" cannot create resource \"nodes\" in API group \"\" at the cluster scope" node="cp-1""#.to_string()],
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Warning,
                "cannot register its Node",
            )],
        ),
        case(
            "registration refused where the log ends, no kubelet start before it: an info (kubeadm#1082)",
            &[r#"Aug 30 11:17:55 localhost.localdomain kubelet[2417]: E0830 11:17:55.780886    2417 kubelet_node_status.go:103] Unable to register node "localhost.localdomain" with API server: Post https://10.0.2.15:6443/api/v1/nodes: dial tcp 10.0.2.15:6443: connect: connection refused"#.to_string()],
            &[(FindingKind::NodeStatusUpdateFailing, Severity::Info, "cannot register its Node")],
        ),
        case(
            "not a finding: registration refused, then the node registered",
            &[
                r#"Aug 30 11:17:55 localhost.localdomain kubelet[2417]: E0830 11:17:55.780886    2417 kubelet_node_status.go:103] Unable to register node "localhost.localdomain" with API server: Post https://10.0.2.15:6443/api/v1/nodes: dial tcp 10.0.2.15:6443: connect: connection refused"#.to_string(),
                r#"Aug 30 11:18:05 localhost.localdomain kubelet[2417]: I0830 11:18:05.100000    2417 kubelet_node_status.go:82] Successfully registered node localhost.localdomain"#.to_string(),
            ],
            &[],
        ),
        case(
            "not a finding: registration refused for a minute, as a control plane's boot",
            &[
                started("09:26:30.000000").replace("I0322", "I0510"),
                r#"E0510 09:26:40.000000    1046 kubelet_node_status.go:92] "Unable to register node with API server" err="Post \"https://10.0.0.1:6443/api/v1/nodes\": dial tcp 10.0.0.1:6443: connect: connection refused" node="cp-1""#.to_string(),
                r#"E0510 09:27:40.000000    1046 kubelet_node_status.go:92] "Unable to register node with API server" err="Post \"https://10.0.0.1:6443/api/v1/nodes\": dial tcp 10.0.0.1:6443: connect: connection refused" node="cp-1""#.to_string(),
            ],
            &[],
        ),
        case(
            "no valid client certificate, the API server not answering (transport.go, every second): a warning",
            &(0..3)
                .map(|s| format!(r#"E0218 08:07:2{s}.963621    3602 transport.go:112] "No valid client certificate is found but the server is not responsive. A restart may be necessary to retrieve new initial credentials." lastCertificateAvailabilityTime="2022-02-16 08:50:28.943096211 +0000 UTC m=+0.345942418" shutdownThreshold="5m0s""#))
                .collect::<Vec<_>>(),
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Warning,
                "has no valid client certificate",
            )],
        ),
        case(
            "not this kind: not answering, then answering, and the kubelet exits for a new certificate",
            &[
                r#"E0218 08:07:20.963621    3602 transport.go:112] "No valid client certificate is found but the server is not responsive. A restart may be necessary to retrieve new initial credentials." lastCertificateAvailabilityTime="2022-02-16 08:50:28.943096211 +0000 UTC m=+0.345942418" shutdownThreshold="5m0s""#.to_string(),
                r#"E0218 08:07:21.963621    3602 transport.go:112] "No valid client certificate is found but the server is not responsive. A restart may be necessary to retrieve new initial credentials." lastCertificateAvailabilityTime="2022-02-16 08:50:28.943096211 +0000 UTC m=+0.345942418" shutdownThreshold="5m0s""#.to_string(),
                r#"E0218 08:07:22.963621    3602 transport.go:110] "No valid client certificate is found and the server is responsive, exiting." lastCertificateAvailabilityTime="2022-02-16 08:50:28.943096211 +0000 UTC m=+0.345942418" shutdownThreshold="5m0s""#.to_string(),
            ],
            &[(
                FindingKind::KubeletStartFailing,
                Severity::Critical,
                "no valid client certificate, the API server answering",
            )],
        ),
        case(
            "before 1.18, transport.go's words: the certificate expired, the API server not answering",
            &["00:15:53.851634", "00:16:03.851909", "00:16:13.852011"]
                .map(|t| format!("E1111 {t}   66610 transport.go:113] The currently active client certificate has expired, but the server is not responsive. A restart may be necessary to retrieve new initial credentials.")),
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Warning,
                "has no valid client certificate",
            )],
        ),
        case(
            "Unauthorized once every few minutes, each going through on a retry: an info, not NotReady",
            &["10:00:00", "10:05:10", "10:10:20", "10:15:30", "10:21:00"]
                .map(|t| failed(&format!("{t}.000000"), "Unauthorized")),
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Info,
                "now and then",
            )],
        ),
        case(
            "the client certificate expired, twice: a warning",
            &[
                failed("10:00:00.000000", "Unauthorized"),
                failed("10:00:10.000000", "Unauthorized"),
            ],
            &[(
                FindingKind::NodeStatusUpdateFailing,
                Severity::Warning,
                "Unauthorized",
            )],
        ),
    ]);
}

// === RuntimeNetworkNotReady ===

#[test]
fn runtime_network_not_ready() {
    // `updateRuntimeUp` logs the condition at each 5 s check: `secs` seconds of it from 10:00.
    let structured = |from: u32, secs: u32| -> Vec<String> {
        (from..from + secs)
            .step_by(5)
            .map(|s| {
                format!(
                    r#"E0416 10:{:02}:{:02}.150357   10125 kubelet.go:2373] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized""#,
                    s / 60,
                    s % 60
                )
            })
            .collect()
    };
    let legacy = |secs: u32| -> Vec<String> {
        (0..secs)
            .step_by(5)
            .map(|s| {
                format!(
                    "E0412 14:{:02}:{:02}.632269    7015 kubelet.go:2130] Container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:docker: network plugin is not ready: cni config uninitialized",
                    s / 60,
                    s % 60
                )
            })
            .collect()
    };
    let later = |t: &str| {
        format!(
            r#"I0416 {t}   10125 kubelet.go:2063] "SyncLoop UPDATE" source="api" pods=["kube-system/coredns-1"]"#
        )
    };
    let then = |mut a: Vec<String>, b: Vec<String>| {
        a.extend(b);
        a
    };
    let started =
        r#"I0416 09:57:40.100000   10125 server.go:493] "Kubelet version" kubeletVersion="v1.31.4""#
            .to_string();
    let not_ready_after_start = r#"E0416 09:59:40.382667   10125 kubelet_node_status.go:460] "Node not becoming ready in time after startup""#.to_string();
    check(vec![
        case(
            "not ready for four minutes where the log ends: a warning with the runtime's words",
            &structured(0, 240),
            &[(
                FindingKind::RuntimeNetworkNotReady,
                Severity::Warning,
                "cni plugin not initialized; 48 records over 3m55s",
            )],
        ),
        case(
            "legacy klog (dockershim's words), five minutes",
            &legacy(300),
            &[(
                FindingKind::RuntimeNetworkNotReady,
                Severity::Warning,
                "docker: network plugin is not ready: cni config uninitialized",
            )],
        ),
        case(
            "a node's first 20 s where the log ends: only an info, too short to tell",
            &structured(0, 20),
            &[(
                FindingKind::RuntimeNetworkNotReady,
                Severity::Info,
                "too short to tell a node's first minutes from a node left without a network",
            )],
        ),
        case(
            "two and a half minutes, as a kubeadm init before its add-on: an info",
            &structured(0, 150),
            &[(
                FindingKind::RuntimeNetworkNotReady,
                Severity::Info,
                "30 records over 2m25s",
            )],
        ),
        case(
            "20 s after the kubelet says the node is not Ready 2 min after its start: a warning",
            &then(
                vec![started.clone(), not_ready_after_start.clone()],
                structured(0, 20),
            ),
            &[(
                FindingKind::RuntimeNetworkNotReady,
                Severity::Warning,
                "the kubelet says the Node did not become Ready within 2 minutes of its start",
            )],
        ),
        case(
            "the Node turned Ready after the outage (NodeReady recorded): no finding",
            &then(
                structured(0, 240),
                vec![r#"I0416 10:04:02.000000   10125 kubelet_node_status.go:687] "Recording event message for node" node="worker-3" event="NodeReady""#.to_string()],
            ),
            &[],
        ),
        case(
            "the word at the start, NodeReady after it, an hour on a short blip: only an info",
            &then(
                vec![
                    started.clone(),
                    not_ready_after_start.clone(),
                    r#"I0416 09:59:58.000000   10125 kubelet_node_status.go:687] "Recording event message for node" node="worker-3" event="NodeReady""#.to_string(),
                ],
                structured(600, 15),
            ),
            &[(FindingKind::RuntimeNetworkNotReady, Severity::Info, "too short")],
        ),
        case(
            "that word from before the kubelet's last start does not count: an info",
            &then(
                vec![
                    not_ready_after_start.clone(),
                    started.replace("09:57:40", "09:59:50"),
                ],
                structured(0, 20),
            ),
            &[(
                FindingKind::RuntimeNetworkNotReady,
                Severity::Info,
                "too short",
            )],
        ),
        case(
            "not a finding: four minutes, then the log goes on a minute without it (ready)",
            &then(structured(0, 240), vec![later("10:05:00.000000")]),
            &[],
        ),
        case(
            "an earlier outage that ended does not count: two minutes, a gap, then two more (an info)",
            &then(structured(0, 120), structured(300, 120)),
            &[(
                FindingKind::RuntimeNetworkNotReady,
                Severity::Info,
                "24 records over 1m55s",
            )],
        ),
    ]);
}

/// As a diagnosis reads them: the kubelet's 5 s checks folded ([`crate::rules::fold::Fold`]
/// keeps the first and last few of a repetition), an hour of them is still one outage.
#[test]
fn runtime_network_not_ready_folded() {
    let found = |lines: &[String]| {
        let mut fold = crate::rules::fold::Fold::new();
        for e in read(LogKind::Kubelet, "kubelet.log", lines) {
            fold.push(e);
        }
        let kept = fold.finish();
        assert!(
            kept.events.len() < lines.len() / 4,
            "folded: {}",
            kept.events.len()
        );
        diagnose_logs(&kept.events, &NodeView::empty(), &cfg(), now())
            .into_iter()
            .map(|f| (f.kind, f.severity, f.summary))
            .collect::<Vec<_>>()
    };
    let hour: Vec<String> = (0..720u32)
        .map(|i| {
            let s = i * 5;
            format!(
                r#"E0416 1{}:{:02}:{:02}.150357   10125 kubelet.go:2373] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: failed to load cni config: plugin type=\"calico\" not found""#,
                s / 3600,
                (s / 60) % 60,
                s % 60
            )
        })
        .collect();
    let got = found(&hour);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert_eq!(
        (got[0].0, got[0].1),
        (FindingKind::RuntimeNetworkNotReady, Severity::Warning)
    );
    assert!(
        got[0]
            .2
            .contains("(Network plugin returns error: failed to load cni config: plugin type=\"calico\" not found; 720 records over 59m55s)"),
        "{got:#?}"
    );
    // The same hour, then ten minutes of the log without it: ready again.
    let mut ready = hour.clone();
    ready.push(
        r#"I0416 11:10:00.000000   10125 kubelet.go:2063] "SyncLoop UPDATE" source="api" pods=["kube-system/coredns-1"]"#
            .to_string(),
    );
    assert_eq!(found(&ready), vec![]);
}

#[test]
fn static_pod_removal() {
    let pod = "team-ns/static-nginx-10.0.0.11";
    let killing = format!(
        r#"I1019 07:20:46.701995    6774 kuberuntime_container.go:714] "Killing container with a grace period" pod="{pod}" podUID={HASH} containerName="static-nginx" containerID="containerd://{C1}" gracePeriod=30"#
    );
    let kill_failed = format!(
        r#"E1019 07:21:27.130112    6774 pod_workers.go:765] "Error syncing pod, skipping" err="failed to \"KillPodSandbox\" for \"{HASH}\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destr"#
    );
    check(vec![
        case(
            "REMOVE source=file, then KillPodSandbox fails: StaticPodNotRemoved, no note",
            &[
                sync_loop("07:20:46.701627", "REMOVE", "file", pod),
                killing.clone(),
                kill_failed.clone(),
            ],
            &[(FindingKind::StaticPodNotRemoved, Severity::Warning, HASH)],
        ),
        case(
            "REMOVE source=file and the pod terminates: only the note",
            &[
                sync_loop("07:20:46.701627", "REMOVE", "file", pod),
                killing.clone(),
                kill_failed,
                format!(
                    r#"I1019 07:22:00.000000    6774 pod_workers.go:1000] "Pod terminated all containers successfully" pod="{pod}" podUID={HASH}"#
                ),
            ],
            &[(FindingKind::StaticPodRemoved, Severity::Info, HASH)],
        ),
        case(
            "legacy REMOVE with the mirror pod deleted 278 ms later (k/k #90999)",
            &[
                r#"I0729 20:54:44.122924    1526 kubelet.go:1904] SyncLoop (REMOVE, "file"): "kube-apiserver-node-a_openshift-kube-apiserver(60d66dd8b81c2a4756d2e2f69ec1e3fc)""#.to_string(),
                r#"I0729 20:54:44.401404    1526 mirror_client.go:93] Deleting a mirror pod "kube-apiserver-node-a_openshift-kube-apiserver" (uid (*types.UID)(nil))"#.to_string(),
                r#"I0729 20:54:44.435544    1526 kubelet.go:1910] SyncLoop (DELETE, "api"): "kube-apiserver-node-a_openshift-kube-apiserver(08b81ce8-b243-11e9-a38f-fa163e8871d1)""#.to_string(),
            ],
            &[(FindingKind::StaticPodRemoved, Severity::Info, "278ms later")],
        ),
        case(
            "not a static pod: REMOVE source=api is no note",
            &[sync_loop("07:20:46.701627", "REMOVE", "api", pod)],
            &[],
        ),
        case(
            "a changed manifest: REMOVE and ADD of the pod from the file source at once, replaced",
            &[
                sync_loop("07:20:46.899963", "REMOVE", "file", pod),
                sync_loop("07:20:46.900006", "ADD", "file", pod),
            ],
            &[(FindingKind::StaticPodRemoved, Severity::Info, "was replaced")],
        ),
        case(
            "an ADD a minute after the REMOVE: removed (the manifest put back later)",
            &[
                sync_loop("07:20:46.899963", "REMOVE", "file", pod),
                sync_loop("07:21:46.900006", "ADD", "file", pod),
            ],
            &[(
                FindingKind::StaticPodRemoved,
                Severity::Info,
                "was removed from its file source",
            )],
        ),
    ]);
}

// === FindContainerRace ===

fn delete_not_found(t: &str, c: &str) -> String {
    format!(
        r#"I0310 {t}    1234 pod_container_deletor.go:53] "DeleteContainer returned error" containerID={{"Type":"containerd","ID":"{c}"}} err="failed to get container status \"{c}\": rpc error: code = NotFound desc = an error occurred when try to find container \"{c}\": not found""#
    )
}

#[test]
fn find_container_race() {
    check(vec![
        case(
            "a single double removal: info",
            &[delete_not_found("10:00:00.000000", C1)],
            &[(FindingKind::FindContainerRace, Severity::Info, C1)],
        ),
        case(
            "the same container coming back over more than 10 minutes: warning",
            &[
                delete_not_found("10:00:00.000000", C1),
                delete_not_found("10:06:00.000000", C1),
                delete_not_found("10:12:00.000000", C1),
            ],
            &[(FindingKind::FindContainerRace, Severity::Warning, "3 records over 12m")],
        ),
        case(
            "a NotFound line cut before its ID belongs to the RemoveContainer before it",
            &[
                format!(r#"I0321 17:10:59.899821  475498 scope.go:111] "RemoveContainer" containerID="{C1}""#),
                format!(r#"I0321 17:10:59.901846  475498 scope.go:111] "RemoveContainer" containerID="{C1}""#),
                r#"E0321 17:10:59.902054  475498 remote_runtime.go:334] "ContainerStatus from runtime service failed" err="rpc error: code = NotFound desc ="#.to_string(),
            ],
            &[(FindingKind::FindContainerRace, Severity::Info, "removed twice")],
        ),
        case(
            "a cut ID is merged into the full one another line names",
            &[
                delete_not_found("10:00:00.000000", C2),
                format!(
                    r#"I0310 10:00:00.000100    1234 pod_container_deletor.go:53] "DeleteContainer returned error" containerID={{"Type":"containerd","ID":"{}"#,
                    &C2[..20]
                ),
            ],
            &[(FindingKind::FindContainerRace, Severity::Info, C2)],
        ),
        Case {
            name: "not a finding: the CRI view still lists the container",
            kubelet: vec![delete_not_found("10:00:00.000000", C1)],
            runtime: vec![],
            view: cri(&[(SB1, UID1, SandboxState::NotReady)], &[C1]),
            want: vec![],
        },
        case(
            "not a finding: \"Container not found in pod's containers\"",
            &[format!(
                r#"I0829 01:50:35.469317 2909862 pod_container_deletor.go:79] "Container not found in pod's containers" containerID="{C1}""#
            )],
            &[],
        ),
    ]);
}

// === OrphanedPodVolumes ===

#[test]
fn orphaned_pod_volumes() {
    let legacy = |t: &str, uid: &str| {
        format!(
            r#"E0508 {t}     469 kubelet_volumes.go:114] Orphaned pod "{uid}" found, but volume paths are still present on disk."#
        )
    };
    let mut gone = NodeView::empty();
    gone.pod_dirs = Some(vec![]);
    check(vec![
        case(
            "a UID seen whole and cut: one finding",
            &[
                legacy("00:36:34.697341", UID1),
                format!(
                    r#"E0508 00:36:36.698103     469 kubelet_volumes.go:114] Orphaned pod "{}"#,
                    &UID1[..19]
                ),
            ],
            &[(
                FindingKind::OrphanedPodVolumes,
                Severity::Warning,
                "2 records",
            )],
        ),
        case(
            "the roll-up counts the other orphaned pods and names the path",
            &[format!(
                r#"E1118 01:57:48.546805 4133404 kubelet_volumes.go:245] "There were many similar errors. Turn up verbosity to see them." err="orphaned pod \"{UID1}\" found, but failed to rmdir() volume at path /var/lib/kubelet/pods/{UID1}/volumes/kubernetes.io~configmap/config-volume: directory not empty" numErrs=5"#
            )],
            &[(
                FindingKind::OrphanedPodVolumes,
                Severity::Warning,
                "at least 5",
            )],
        ),
        case(
            "a cut UID no line names whole stays a prefix",
            &[format!(
                r#"E1015 14:48:41.982980 40887 kubelet_volumes.go:154] Orphaned pod "{}"#,
                &UID1[..24]
            )],
            &[(
                FindingKind::OrphanedPodVolumes,
                Severity::Warning,
                "5da3387d-ad1c-11ea-a025-…",
            )],
        ),
        case(
            "kubelet 1.2-1.6: found, removing, then the removal fails (kubernetes/kubernetes#27651)",
            &[
                format!(
                    r#"I0618 00:17:04.062975    9199 kubelet.go:2004] Orphaned pod "{UID1}" found, removing"#
                ),
                format!(
                    r#"I0618 00:17:04.064022    9199 kubelet.go:2006] Failed to remove orphaned pod "{UID1}" dir; err: remove /var/lib/kubelet/pods/{UID1}/volumes/kubernetes.io~secret/default-token-qf0cp: device or resource busy"#
                ),
            ],
            &[(
                FindingKind::OrphanedPodVolumes,
                Severity::Warning,
                "device or resource busy",
            )],
        ),
        case(
            "not a finding: kubelet 1.2-1.6 announcing a removal (found, removing) that nothing says failed",
            &[format!(
                r#"I0618 00:17:04.062975    9199 kubelet.go:2004] Orphaned pod "{UID1}" found, removing"#
            )],
            &[],
        ),
        case(
            "the volumes directory cleaned up after the last error, none since: healed (info, kubernetes/kubernetes#105536)",
            &[
                format!(
                    r#"E1007 12:46:32.359145    7310 kubelet_volumes.go:245] "There were many similar errors. Turn up verbosity to see them." err="orphaned pod \"{UID1}\" found, but error not a directory occurred when trying to remove the volumes dir" numErrs=1"#
                ),
                format!(
                    r#"I1007 12:46:40.359957    7310 kubelet_volumes.go:160] "Cleaned up orphaned pod volumes dir" podUID={UID1} path="/var/lib/kubelet/pods/{UID1}/volumes""#
                ),
            ],
            &[(FindingKind::OrphanedPodVolumes, Severity::Info, "healed")],
        ),
        case(
            "an error after the cleanup: what stays is elsewhere (warning)",
            &[
                format!(
                    r#"I1007 12:46:40.359957    7310 kubelet_volumes.go:160] "Cleaned up orphaned pod volumes dir" podUID={UID1} path="/var/lib/kubelet/pods/{UID1}/volumes""#
                ),
                format!(
                    r#"E1007 12:46:42.359145    7310 kubelet_volumes.go:245] "There were many similar errors. Turn up verbosity to see them." err="orphaned pod \"{UID1}\" found, but failed to rmdir() subpath at path /var/lib/kubelet/pods/{UID1}/volume-subpaths/v/c/0: not a directory" numErrs=1"#
                ),
            ],
            &[(
                FindingKind::OrphanedPodVolumes,
                Severity::Warning,
                "elsewhere",
            )],
        ),
        case(
            "the removal's own error said: a file where only directories are removed (kubernetes/kubernetes#114698's CSI leftover)",
            &[format!(
                r#"E0104 18:51:21.080528    1612 kubelet_volumes.go:245] "There were many similar errors. Turn up verbosity to see them." err="orphaned pod \"{UID1}\" found, but error occurred when trying to remove the volumes dir: not a directory" numErrs=1"#
            )],
            &[(
                FindingKind::OrphanedPodVolumes,
                Severity::Warning,
                "removing it fails: error occurred when trying to remove the volumes dir: not a directory: a file sits where the kubelet removes only empty directories",
            )],
        ),
        case(
            "the same, its error in the middle (`found, but error <err> occurred when trying to remove the volumes dir`)",
            &[format!(
                r#"E0104 18:51:21.080528    1612 kubelet_volumes.go:245] "There were many similar errors. Turn up verbosity to see them." err="orphaned pod \"{UID1}\" found, but error not a directory occurred when trying to remove the volumes dir" numErrs=1"#
            )],
            &[(
                FindingKind::OrphanedPodVolumes,
                Severity::Warning,
                "removing it fails: error occurred when trying to remove the volumes dir: not a directory: a file sits where the kubelet removes only empty directories",
            )],
        ),
        Case {
            name: "not a finding: the pod directory is gone",
            kubelet: vec![legacy("00:36:34.697341", UID1)],
            runtime: vec![],
            view: gone,
            want: vec![],
        },
    ]);
}

// === MirrorPodRecreateLoop, MirrorPodCreateFailed ===

#[test]
fn mirror_pods() {
    let outdated = |t: &str, uid: &str| {
        format!(
            r#"W0416 {t}    1847 kubelet.go:1602] Deleting mirror pod "etcd-node-a_kube-system({uid})" because it is outdated"#
        )
    };
    let u2 = "d6d6c835-4156-11e8-84f4-0050569b7580";
    // The real kubelet v1.34.4's line after a restart (tryReconcileMirrorPods).
    let exists = |t: &str| {
        format!(
            r#"E1201 {t}   27094 kubelet.go:3222] "Failed creating a mirror pod" err="pods \"cache-lab-node\" already exists" pod="kube-system/cache-lab-node""#
        )
    };
    // pires/kubernetes-vagrant-coreos-cluster#224's kubelet 1.5, bootstrapping its own API server.
    let unreachable = |t: &str| {
        format!(
            r#"E1230 {t}    2673 kubelet.go:1508] Failed creating a mirror pod for "kube-apiserver-m_kube-system(0b5b0aeb538ecadb4e05c9a98ce4c885)": Post http://127.0.0.1:8080/api/v1/namespaces/kube-system/pods: dial tcp 127.0.0.1:8080: getsockopt: connection refused"#
        )
    };
    check(vec![
        case(
            "two deletions within a minute: a loop",
            &[outdated("05:16:25.210714", UID1), outdated("05:16:27.221519", u2)],
            &[(FindingKind::MirrorPodRecreateLoop, Severity::Warning, u2)],
        ),
        case(
            "one deletion: normal after a manifest edit (info)",
            &[r#"I0416 05:16:25.210714    1847 kubelet.go:1700] "Deleted mirror pod because it is outdated" pod="kube-system/etcd-node-a""#.to_string()],
            &[(FindingKind::MirrorPodRecreateLoop, Severity::Info, "once")],
        ),
        case(
            "two deletions hours apart: two edits, not a loop",
            &[outdated("05:16:25.210714", UID1), outdated("09:16:25.210714", u2)],
            &[(FindingKind::MirrorPodRecreateLoop, Severity::Info, "more than a minute apart")],
        ),
        case(
            "the API refuses the mirror pod",
            &[r#"E0407 23:32:03.532257   18134 kubelet.go:1335] Failed creating a mirror pod "etcd-server-m_default": pods "etcd-server-m" is forbidden: node "m" can only create pods with spec.nodeName set to itself"#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "forbidden")],
        ),
        case(
            "forbidden by NodeRestriction: said with the API server's reason",
            &[r#"E0407 23:32:03.532257   18134 kubelet.go:1335] Failed creating a mirror pod "etcd-server-m_default": pods "etcd-server-m" is forbidden: node "m" can only create pods with spec.nodeName set to itself"#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "forbidden by NodeRestriction (node \"m\" can only create pods with spec.nodeName set to itself)")],
        ),
        case(
            "forbidden by PodSecurityPolicy, not NodeRestriction (kubernetes/minikube#3818)",
            &[r#"E0311 09:28:35.129051    3764 kubelet.go:1662] Failed creating a mirror pod for "kube-apiserver-minikube_kube-system(c316be08a9493029252a4321b6ba466f)": pods "kube-apiserver-minikube" is forbidden: no providers available to validate pod request"#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "forbidden by PodSecurityPolicy: no policy the node may use admits it")],
        ),
        case(
            "forbidden by Pod Security admission: its reason quoted",
            &[r#"E0601 10:00:00.000000    3307 kubelet.go:1690] "Failed creating a mirror pod" err="pods "web-node-a" is forbidden: violates PodSecurity "restricted:latest": hostNetwork=true" pod="shop/web-node-a""#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "forbidden by Pod Security admission (violates PodSecurity \"restricted:latest\": hostNetwork=true)")],
        ),
        case(
            "forbidden for its spec (a service account): the manifest is at fault (kubernetes/kubernetes#103587)",
            &[r#"Jul 08 15:55:05 init1 kubelet[4229]: E0708 15:55:05.343771    4229 kubelet.go:1683] "Failed creating a mirror pod for" err="pods \"test5-init1\" is forbidden: a mirror pod may not reference service accounts" pod="default/test5-init1""#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "the static pod's spec uses what no mirror pod may (a mirror pod may not reference service accounts)")],
        ),
        case(
            "refused by an admission webhook: the webhook named (bottlerocket-os/bottlerocket#1409)",
            &[r#"E0324 00:46:36.333789    3307 kubelet.go:1690] Failed creating a mirror pod for "c-node_default(18df3f29b7ba9816f25786dcb540583a)": admission webhook "mpod.vpc.k8s.aws" denied the request: Webhood encountered error to Get or List object from k8s cache."#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "admission webhook mpod.vpc.k8s.aws")],
        ),
        case(
            "its namespace missing: said so",
            &[r#"E0601 10:00:00.000000    3307 kubelet.go:1690] Failed creating a mirror pod for "api-node_kni-infra(28df3f29b7ba9816f25786dcb540583a)": namespaces "kni-infra" not found"#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "namespace kni-infra does not exist")],
        ),
        case(
            "one AlreadyExists after a kubelet restart: the start race (info)",
            &[exists("12:04:10.123456")],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Info, "start race")],
        ),
        case(
            "AlreadyExists once per restart, restarts an hour apart: still the start race",
            &[exists("12:04:10.123456"), exists("13:04:10.123456")],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Info, "start race")],
        ),
        case(
            "one AlreadyExists from a kubelet before structured logging (pre-1.0, never replaces a stale mirror pod): a warning",
            &[r#"E0407 23:32:03.532257   18134 kubelet.go:1335] Failed creating a mirror pod "etcd-server-m_default": pods "etcd-server-m" already exists"#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "already exists")],
        ),
        case(
            "one AlreadyExists per static pod from a glog kubelet whose CreateMirrorPod checks the hash, right after its start (kubernetes/kubelet#22): the start race",
            &[
                r#"E1228 07:24:45.973287    6272 kubelet.go:1635] Failed creating a mirror pod for "kube-scheduler-node01_kube-system(9be8cb4627e7e5ad4c3f8acabd4b49b3)": pods "kube-scheduler-node01" already exists"#.to_string(),
                r#"E1228 07:24:45.977042    6272 kubelet.go:1635] Failed creating a mirror pod for "etcd-node01_kube-system(e25ea21632f580335cac4f07009e0473)": pods "etcd-node01" already exists"#.to_string(),
            ],
            &[
                (FindingKind::MirrorPodCreateFailed, Severity::Info, "start race"),
                (FindingKind::MirrorPodCreateFailed, Severity::Info, "start race"),
            ],
        ),
        case(
            "the same glog kubelet refusing it again a minute later: a warning",
            &[
                r#"E1228 07:24:45.973287    6272 kubelet.go:1635] Failed creating a mirror pod for "etcd-node01_kube-system(e25ea21632f580335cac4f07009e0473)": pods "etcd-node01" already exists"#.to_string(),
                r#"E1228 07:25:47.001000    6272 kubelet.go:1635] Failed creating a mirror pod for "etcd-node01_kube-system(e25ea21632f580335cac4f07009e0473)": pods "etcd-node01" already exists"#.to_string(),
            ],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "already exists")],
        ),
        case(
            "two AlreadyExists 775 ms apart after one restart: one start race (real kubelet v1.34.4)",
            &[exists("12:04:10.123456"), exists("12:04:10.898456")],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Info, "start race")],
        ),
        case(
            "AlreadyExists at every sync: the pod of that name is not the mirror pod",
            &[exists("12:04:10.123456"), exists("12:05:12.123456")],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "already exists")],
        ),
        case(
            "no API server serving yet at a control plane node's start: no refusal (info)",
            &[unreachable("19:32:00.087516"), unreachable("19:32:10.101000")],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Info, "could not reach the API server to create the mirror pod of static pod kube-system/kube-apiserver-m (connection refused, 2 records")],
        ),
        case(
            "the API server out of reach for 10 minutes at once (a refusal at every sync): a warning",
            &[
                unreachable("19:32:00.087516"),
                unreachable("19:35:00.101000"),
                unreachable("19:38:00.101000"),
                unreachable("19:41:00.101000"),
                unreachable("19:42:00.101000"),
            ],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Warning, "cannot reach the API server")],
        ),
        case(
            "two short outages hours apart (a start, then an API server restart): no lasting one, an info",
            &[
                unreachable("19:32:00.087516"),
                unreachable("19:32:30.000000"),
                unreachable("23:32:00.000000"),
                unreachable("23:32:40.000000"),
            ],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Info, "could not reach the API server")],
        ),
        case(
            "a connection closed (EOF) is no refusal either",
            &[r#"E1230 19:32:00.087516    2673 kubelet.go:1508] Failed creating a mirror pod for "kube-apiserver-m_kube-system(0b5b0aeb538ecadb4e05c9a98ce4c885)": Post https://127.0.0.1:6443/api/v1/namespaces/kube-system/pods: EOF"#.to_string()],
            &[(FindingKind::MirrorPodCreateFailed, Severity::Info, "(connection closed (EOF), 1 record)")],
        ),
    ]);
}

// === StuckPodWorker ===

#[test]
fn stuck_pod_workers() {
    let not_terminated = |t: &str| {
        format!(
            r#"I0310 {t}    1234 pod_workers.go:1170] "Pod worker has been requested for removal but is still not fully terminated" podUID={UID1}"#
        )
    };
    // Case 19's lines, with the re-add its excerpt does not hold.
    let pod = "default/mypod-127.0.0.1";
    let removed = [
        sync_loop("01:50:33.287717", "REMOVE", "file", pod),
        format!(
            r#"I0310 01:50:33.287842 2909862 kubelet.go:1890] "Pod has been deleted and must be killed" pod="{pod}" podUID={HASH}"#
        ),
    ];
    let readded = |uid: &str| {
        vec![
            sync_loop("01:50:40.000000", "ADD", "file", pod),
            format!(
                r#"I0310 01:50:40.000100 2909862 pod_workers.go:600] "Pod is being synced for the first time" pod="{pod}" podUID={uid}"#
            ),
        ]
    };
    let later = format!(
        r#"I0310 01:52:00.000000 2909862 kubelet.go:2063] "SyncLoop UPDATE" source="api" pods=[{pod}]"#
    );
    let with = |extra: Vec<String>| -> Vec<String> {
        let mut v = removed.to_vec();
        v.extend(extra);
        v
    };
    check(vec![
        case(
            "\"still not fully terminated\" three times: stuck",
            &[
                not_terminated("10:00:00.000000"),
                not_terminated("10:00:02.000000"),
                not_terminated("10:00:04.000000"),
            ],
            &[(FindingKind::StuckPodWorker, Severity::Warning, UID1)],
        ),
        case(
            "not a finding: twice",
            &[not_terminated("10:00:00.000000"), not_terminated("10:00:02.000000")],
            &[],
        ),
        case(
            "\"remove all history\" then \"orphaned and must be torn down\" (k/k #107730)",
            &[
                format!(
                    r#"I0310 10:00:00.000000    1234 kubelet_pods.go:1100] "Pod has been terminated and is no longer known to the kubelet, remove all history" podUID={UID1}"#
                ),
                format!(
                    r#"I0310 10:00:00.500000    1234 pod_workers.go:900] "Pod is orphaned and must be torn down" pod="team-ns/app-0" podUID={UID1}"#
                ),
            ],
            &[(FindingKind::StuckPodWorker, Severity::Warning, "107730")],
        ),
        case(
            "a static pod re-added with the same UID that starts nothing: stuck (k/k #104648)",
            &with([readded(HASH), vec![later.clone()]].concat()),
            &[(FindingKind::StuckPodWorker, Severity::Warning, "104648")],
        ),
        case(
            "a record of another excerpt (its time back before the re-add) ends the look for another UID: still stuck",
            &with(
                [
                    readded(HASH),
                    vec![format!(
                        r#"I0310 01:50:30.000100 2909862 pod_workers.go:600] "Pod is being synced for the first time" pod="{pod}" podUID=0123456789abcdef0123456789abcdef"#
                    )],
                    vec![later.clone()],
                ]
                .concat(),
            ),
            &[(FindingKind::StuckPodWorker, Severity::Warning, "104648")],
        ),
        case(
            "not a finding: the re-added pod starts a container",
            &with(
                [
                    readded(HASH),
                    vec![
                        format!(
                            r#"I0310 01:50:41.000000 2909862 kubelet.go:2100] "SyncLoop (PLEG): event for pod" pod="{pod}" event=&{{ID:{HASH} Type:ContainerStarted Data:{C1}}}"#
                        ),
                        later.clone(),
                    ],
                ]
                .concat(),
            ),
            &[(FindingKind::StaticPodRemoved, Severity::Info, HASH)],
        ),
        case(
            "not a finding: re-added with another UID (the manifest changed)",
            &with([readded("0123456789abcdef0123456789abcdef"), vec![later.clone()]].concat()),
            &[(FindingKind::StaticPodRemoved, Severity::Info, HASH)],
        ),
        case(
            "not a finding: the manifest changed and the old pod's teardown names its UID first (real kubelet v1.34.4)",
            &with(
                [
                    vec![
                        sync_loop("01:50:40.000000", "ADD", "file", pod),
                        format!(
                            r#"I0310 01:50:40.000050 2909862 kuberuntime_container.go:809] "Killing container with a grace period" pod="{pod}" podUID={HASH} containerName="web""#
                        ),
                        format!(
                            r#"I0310 01:50:40.000100 2909862 pod_workers.go:600] "Pod is being synced for the first time" pod="{pod}" podUID=0123456789abcdef0123456789abcdef"#
                        ),
                    ],
                    vec![later.clone()],
                ]
                .concat(),
            ),
            &[(FindingKind::StaticPodRemoved, Severity::Info, HASH)],
        ),
        case(
            "not judged: the log ends right after the re-add",
            &with(readded(HASH)),
            &[(FindingKind::StaticPodRemoved, Severity::Info, HASH)],
        ),
        case(
            "a changed static pod that cannot start while the old pod's worker goes on two minutes: stuck",
            &blocked("01:52:02.073699"),
            &[(FindingKind::StuckPodWorker, Severity::Warning, "cannot start while")],
        ),
        case(
            "not a finding: the old pod terminates within its grace period (a manifest change)",
            &blocked("01:50:45.000000"),
            &[],
        ),
        case(
            "not a finding: the new pod starts a container",
            &[
                blocked("01:52:02.073699"),
                vec![format!(
                    r#"I0310 01:52:03.000000 2909862 kubelet.go:2100] "SyncLoop (PLEG): event for pod" pod="{pod}" event=&{{ID:{UID2} Type:ContainerStarted Data:{C1}}}"#
                )],
            ]
            .concat(),
            &[],
        ),
    ]);
}

/// A changed static pod (UID2) waiting for the pod of its name under its previous UID (HASH),
/// whose sync fails last at `old_last` (unit test `stuck_pod_workers`).
fn blocked(old_last: &str) -> Vec<String> {
    let pod = "default/mypod-127.0.0.1";
    vec![
        format!(
            r#"I0310 01:50:00.349759 2909862 pod_workers.go:915] "Pod cannot start yet" pod="{pod}" podUID={UID2}"#
        ),
        format!(
            r#"I0310 01:50:02.453363 2909862 pod_workers.go:1337] "Pod worker has been requested for removal but is still not fully terminated" podUID={HASH}"#
        ),
        format!(
            r#"E0310 {old_last} 2909862 pod_workers.go:1012] "Error syncing pod, skipping" err="unmounted volumes=[pki], unattached volumes=[pki]: timed out waiting for the condition" pod="{pod}" podUID={HASH}"#
        ),
    ]
}

// === StaticPodRemovalBlocked, RuntimeUnhealthy, LeakedSandbox (name reserved) ===

#[test]
fn node_level_rules() {
    let reserved = format!(
        r#"E0102 06:43:18.110305  250135 kuberuntime_sandbox.go:68] CreatePodSandbox for pod "prometheus-0_team-ns({UID1})" failed: rpc error: code = Unknown desc = failed to reserve sandbox name "prometheus-0_team-ns_{UID1}_0": name "prometheus-0_team-ns_{UID1}_0" is reserved for "{SB1}""#
    );
    check(vec![
        case(
            "removals skipped while the sources are not ready",
            &[r#"I0310 10:00:00.000000    1234 kubelet.go:2200] "Failed to delete pod" pod="kube-system/etcd-m" err="skipping delete because sources aren't ready yet""#.to_string()],
            &[(FindingKind::StaticPodRemovalBlocked, Severity::Warning, "sources are not ready")],
        ),
        case(
            "not a finding: housekeeping skipped at a kubelet's start, for seconds (real kubelet v1.34.4, JSON)",
            &[
                r#"{"ts":1796616788275.256,"caller":"kubelet/kubelet.go:2609","msg":"SyncLoop (housekeeping, skipped): sources aren't ready yet","v":4}"#.to_string(),
                r#"{"ts":1796616790275.256,"caller":"kubelet/kubelet.go:2609","msg":"SyncLoop (housekeeping, skipped): sources aren't ready yet","v":4}"#.to_string(),
            ],
            &[],
        ),
        case(
            "housekeeping skipped for over a minute: the sources do not sync",
            &(0..40)
                .map(|i| {
                    format!(
                        r#"{{"ts":{}.256,"caller":"kubelet/kubelet.go:2609","msg":"SyncLoop (housekeeping, skipped): sources aren't ready yet","v":4}}"#,
                        1796616788275u64 + i * 2000
                    )
                })
                .collect::<Vec<_>>(),
            &[(FindingKind::StaticPodRemovalBlocked, Severity::Warning, "sources are not ready")],
        ),
        case(
            "the api source delivering (its REMOVE in the log): the one not ready is another (d2iq-archive/kubernetes-mesos#557's executor)",
            &[
                r#"I1013 20:45:31.785908     201 kubelet.go:1974] SyncLoop (REMOVE, "api"): "pfpod_e2e-tests-port-forwarding-ylnsc""#.to_string(),
                r#"I1013 20:45:31.785926     201 kubelet.go:2065] Failed to delete pod "pfpod_e2e-tests-port-forwarding-ylnsc", err: skipping delete because sources aren't ready yet"#.to_string(),
            ],
            &[(FindingKind::StaticPodRemovalBlocked, Severity::Warning, "the log shows the api source delivering pods, so the one not ready is another")],
        ),
        case(
            "PLEG not healthy: critical, with how long",
            &[r#"I0102 06:42:00.569834  250135 kubelet.go:1771] skipping pod synchronization - [container runtime is down PLEG is not healthy: pleg was last seen active 66h20m49.039936615s ago; threshold is 3m0s]"#.to_string()],
            &[(FindingKind::RuntimeUnhealthy, Severity::Critical, "2d18h")],
        ),
        case(
            "not a finding: a kubelet start's PLEG that has yet to relist (real kubelet v1.34.4)",
            &[
                r#"E1201 11:49:31.746462   16794 kubelet.go:2452] "Skipping pod synchronization" err="[container runtime status check may not have completed yet, PLEG is not healthy: pleg has yet to be successful]""#.to_string(),
                r#"E1201 11:49:31.846462   16794 kubelet.go:2452] "Skipping pod synchronization" err="[container runtime status check may not have completed yet, PLEG is not healthy: pleg has yet to be successful]""#.to_string(),
                r#"E1201 12:09:31.746462   16794 kubelet.go:2452] "Skipping pod synchronization" err="[container runtime status check may not have completed yet, PLEG is not healthy: pleg has yet to be successful]""#.to_string(),
            ],
            &[],
        ),
        case(
            "a PLEG that never relists for 3 minutes after a start: critical",
            &(0..40)
                .map(|i| format!(
                    r#"E1201 11:{:02}:{:02}.746462   16794 kubelet.go:2452] "Skipping pod synchronization" err="PLEG is not healthy: pleg has yet to be successful""#,
                    49 + (31 + i * 5) / 60,
                    (31 + i * 5) % 60
                ))
                .collect::<Vec<_>>(),
            &[(FindingKind::RuntimeUnhealthy, Severity::Critical, "PLEG is not healthy")],
        ),
        case(
            "the runtime's socket refusing, nothing after it answering: a warning (bottlerocket-os/bottlerocket#2512)",
            &[r#"Jan 07 05:55:22 ip-10-20-3-58 kubelet[1375]: E0107 05:55:22.518981    1375 remote_runtime.go:711] "ExecSync cmd from runtime service failed" err="rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing dial unix /run/containerd/containerd.sock: connect: connection refused\"" containerID="d0f631ca1ddba8db3bcfcb9e057cdc98d0379f1bee00e75a545147a27dadd982" cmd=[/bin/sh -c true]"#.to_string()],
            &[(FindingKind::RuntimeUnhealthy, Severity::Warning, "connection refused")],
        ),
        case(
            "the runtime's Status failing and every sync skipped (kubelet 1.3x): a warning",
            &[
                r#"E0405 20:10:50.759597    1825 log.go:32] "Status from runtime service failed" err="rpc error: code = DeadlineExceeded desc = context deadline exceeded""#.to_string(),
                r#"E0405 20:10:50.759653    1825 kubelet.go:3115] "Container runtime sanity check failed" err="rpc error: code = DeadlineExceeded desc = context deadline exceeded""#.to_string(),
                r#"E0405 20:10:50.761182    1825 kubelet.go:2525] "Skipping pod synchronization" err="container runtime is down""#.to_string(),
            ],
            &[(FindingKind::RuntimeUnhealthy, Severity::Warning, "context deadline exceeded")],
        ),
        case(
            "the runtime restarted: refused for 10 s, then a container started (the PLEG saw it): an info",
            &[
                r#"E0107 05:55:22.518981    1375 kubelet.go:3115] "Container runtime sanity check failed" err="rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused\"""#.to_string(),
                r#"E0107 05:55:32.518981    1375 kubelet.go:3115] "Container runtime sanity check failed" err="rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused\"""#.to_string(),
                format!(r#"I0107 05:55:40.000000    1375 kubelet.go:2453] "SyncLoop (PLEG): event for pod" pod="shop/web-0" event={{"ID":"{UID1}","Type":"ContainerStarted","Data":"{C1}"}}"#),
            ],
            &[(FindingKind::RuntimeUnhealthy, Severity::Info, "answered again")],
        ),
        case(
            "not a finding: syncLoop's 'container runtime is down' for 1.5 s after a start (kubelet 1.12, case 67)",
            &[
                r#"I0705 13:07:12.370298   32911 kubelet.go:1799] skipping pod synchronization - [container runtime is down]"#.to_string(),
                r#"I0705 13:07:13.772840   32911 kubelet.go:1799] skipping pod synchronization - [container runtime is down]"#.to_string(),
            ],
            &[],
        ),
        case(
            "syncLoop's 'container runtime is down' for 20 s where the log ends: an info",
            &(0..5)
                .map(|k| format!("I0409 21:14:{:02}.210702   26014 kubelet.go:1794] skipping pod synchronization - [container runtime is down]", 19 + 5 * k))
                .collect::<Vec<_>>(),
            &[(FindingKind::RuntimeUnhealthy, Severity::Info, "a runtime still starting is not ruled out")],
        ),
        case(
            "not a finding: 'container runtime is down' for 20 s, then the kubelet's log goes on without it",
            &(0..5)
                .map(|k| format!("I0409 21:14:{:02}.210702   26014 kubelet.go:1794] skipping pod synchronization - [container runtime is down]", 19 + 5 * k))
                .chain([r#"I0409 21:16:40.000000   26014 kubelet.go:1837] SyncLoop (ADD, "api"): "web-0_shop(3f2a1b0c-0000-4000-8000-000000000001)""#.to_string()])
                .collect::<Vec<_>>(),
            &[],
        ),
        case(
            "not a finding: 'container runtime is down' once, five minutes of the runtime answering, then twice in 2 s at the end",
            &[
                r#"E0719 20:26:40.100000    5100 kubelet.go:2311] "Skipping pod synchronization" err="container runtime is down""#.to_string(),
                format!(r#"I0719 20:28:40.000000    5100 kubelet.go:2453] "SyncLoop (PLEG): event for pod" pod="shop/web-0" event={{"ID":"{UID1}","Type":"ContainerStarted","Data":"{C1}"}}"#),
                r#"E0719 20:31:40.100000    5100 kubelet.go:2311] "Skipping pod synchronization" err="container runtime is down""#.to_string(),
                r#"E0719 20:31:42.100000    5100 kubelet.go:2311] "Skipping pod synchronization" err="container runtime is down""#.to_string(),
            ],
            &[],
        ),
        case(
            "not a finding: 'container runtime is down' twice, five minutes apart (two blips, not one outage)",
            &[
                "I0719 20:26:40.100000    5100 kubelet.go:1794] skipping pod synchronization - [container runtime is down]".to_string(),
                "I0719 20:31:40.100000    5100 kubelet.go:1794] skipping pod synchronization - [container runtime is down]".to_string(),
            ],
            &[],
        ),
        case(
            "not a finding: one sync timing out (kubernetes/kubernetes#45419's first)",
            &[format!(r#"E0602 04:37:05.580912   28263 pod_workers.go:191] Error syncing pod {UID1} ("web-0_shop({UID1})"), skipping: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#)],
            &[],
        ),
        case(
            "not a finding: one sync's timeout logged twice at once",
            &[
                format!(r#"E0602 04:37:05.580912   28263 pod_workers.go:191] Error syncing pod {UID1} ("web-0_shop({UID1})"), skipping: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#),
                format!(r#"E0602 04:37:05.580990   28263 pod_workers.go:191] Error syncing pod {UID1} ("web-0_shop({UID1})"), skipping: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#),
            ],
            &[],
        ),
        case(
            "not a finding: runtime calls timing out without PLEG trouble",
            &[r#"E0102 06:32:23.862407  250135 remote_runtime.go:434] Status from runtime service failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#.to_string()],
            &[],
        ),
        case(
            "a sandbox name reserved by a dead sandbox: that sandbox leaks",
            std::slice::from_ref(&reserved),
            &[(FindingKind::LeakedSandbox, Severity::Warning, SB1)],
        ),
        Case {
            name: "not a finding: the reserving sandbox is gone from the CRI view",
            kubelet: vec![reserved],
            runtime: vec![],
            view: cri(&[(SB2, UID1, SandboxState::Ready)], &[]),
            want: vec![],
        },
    ]);
}

// === merging with the state findings ===

#[test]
fn a_log_finding_restating_a_state_finding_adds_its_evidence() {
    let pod = "team-ns/static-nginx-n1";
    let lines = [
        sync_loop("07:20:46.701627", "REMOVE", "file", pod),
        format!(
            r#"E1019 07:21:27.130112    6774 pod_workers.go:765] "Error syncing pod, skipping" err="failed to \"KillPodSandbox\" for \"{HASH}\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"{SB1}\\\": cni plugin not initialized\"" pod="{pod}" podUID={HASH}"#
        ),
    ];
    let events = read(LogKind::Kubelet, "kubelet.log", &lines);
    let mut view = cri(&[(SB1, HASH, SandboxState::Ready)], &[]);
    view.node_name = "n1".to_string();
    let sandbox = &mut view.cri.as_mut().unwrap().sandboxes[0];
    sandbox.pod.name = "static-nginx-n1".to_string();
    sandbox
        .annotations
        .insert(ANNOTATION_CONFIG_SOURCE.to_string(), "file".to_string());
    sandbox
        .annotations
        .insert(ANNOTATION_CONFIG_HASH.to_string(), HASH.to_string());
    view.manifests = Some(ManifestView {
        dir: "/etc/kubernetes/manifests".to_string(),
        exists: true,
        files: vec![],
        unreadable: vec![],
    });
    let d = diagnose_with_logs(&view, &events, &cfg(), now());
    let kinds: Vec<FindingKind> = d.findings.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [FindingKind::StaticPodNotRemoved],
        "{:#?}",
        d.findings
    );
    let f = &d.findings[0];
    assert_eq!(f.severity, Severity::Critical, "the state rule's severity");
    assert!(
        f.evidence.iter().any(
            |e| e.source == EvidenceSource::KubeletLog && e.detail().contains("KillPodSandbox")
        ),
        "{:#?}",
        f.evidence
    );
}

#[test]
fn go_durations() {
    for (text, secs) in [
        ("16h14m34.5s", Some(58474.5)),
        ("3m0s", Some(180.0)),
        ("250ms", Some(0.25)),
        ("1h", Some(3600.0)),
        ("ago", None),
        ("12", None),
    ] {
        assert_eq!(go_duration(text).map(|d| d.as_secs_f64()), secs, "{text}");
    }
}

#[test]
fn a_leaked_sandbox_says_whether_the_gc_tries() {
    let leaked = || Finding {
        kind: FindingKind::LeakedSandbox,
        severity: Severity::Warning,
        summary: String::new(),
        pod: Some(PodRef {
            namespace: "team-ns".to_string(),
            name: "app-0".to_string(),
            uid: UID1.to_string(),
        }),
        sandbox_id: Some(SB1.to_string()),
        container_id: None,
        path: None,
        evidence: vec![],
        kubelet_rule: "".into(),
        remediation: "crictl rmp".to_string(),
        gc_eligible: true,
    };
    let said = |lines: &[String]| {
        let mut f = [leaked()];
        enrich(&mut f, &read(LogKind::Kubelet, "kubelet.log", lines));
        f[0].evidence
            .iter()
            .map(|e| e.detail().clone())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let trying = said(&[gc_stop_failed(
        "10:00:00.000000",
        SB1,
        "connection is unauthorized: Unauthorized",
    )]);
    assert!(
        trying.contains(
            "trying and failing: 1 failure records, cause CNI teardown: the CNI datastore refused"
        ),
        "{trying}"
    );
    let not_trying = said(&(0..3)
        .map(|n| {
            format!(
                r#"I0310 10:00:0{n}.000000    1234 pod_workers.go:1170] "Pod worker has been requested for removal but is still not fully terminated" podUID={UID1}"#
            )
        })
        .collect::<Vec<_>>());
    assert!(not_trying.contains("GC is not trying"), "{not_trying}");
    assert!(said(&[]).contains("no stop or removal attempt"));
}

#[test]
fn an_id_less_cni_error_joins_the_stop_failure_logged_with_it() {
    // case 23 (dockershim): the CNI error names no sandbox; the stop failures next to it do.
    let lines = [
        r#"Sep 28 13:58:16 node-a kubelet[2081]: E0928 13:58:16.328854    2081 cni.go:312] Error deleting network: failed to open netns %!!(MISSING)q(<nil>): failed to Statfs "": no such file or directory"#.to_string(),
        format!(
            r#"Sep 28 13:58:16 node-a kubelet[2081]: E0928 13:58:16.329555    2081 remote_runtime.go:114] StopPodSandbox "{SB1}" from runtime service failed: rpc error: code = 2 desc = NetworkPlugin cni failed to teardown pod "app-1_debug" network: failed to open netns %!!(MISSING)q(<nil>): failed to Statfs "": no such file or directory"#
        ),
    ];
    let events = read(LogKind::Kubelet, "kubelet.log", &lines);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].sandbox_id.as_deref(), Some(SB1));
    assert!(
        found[0].summary.contains("2 log records"),
        "{}",
        found[0].summary
    );
}

#[test]
fn a_failure_of_no_known_cause_points_at_the_runtime_the_kubelet_names() {
    // The kubelet's `Failed to stop sandbox {"<runtime type>" "<id>"}` (a dockershim node: the
    // log to read is docker's, not containerd's).
    let stop = |ty: &str| {
        let lines: Vec<String> = ["21:05:33", "21:06:33", "21:07:33"]
            .iter()
            .map(|t| {
                format!(
                    r#"Jul 06 {t} node-a kubelet[1269]: E0706 {t}.542137    1269 kuberuntime_manager.go:841] Failed to stop sandbox {{"{ty}" "{SB1}"}}"#
                )
            })
            .collect();
        let events = read(LogKind::Kubelet, "kubelet.log", &lines);
        diagnose_logs(&events, &NodeView::empty(), &cfg(), now())
    };
    for (ty, unit) in [
        ("docker", "docker"),
        ("cri-o", "crio"),
        ("containerd", "containerd"),
    ] {
        let found = stop(ty);
        assert_eq!(found.len(), 1, "{found:#?}");
        let want = format!("journalctl -u {unit} | grep {SB1}");
        assert!(found[0].remediation.contains(&want), "{found:#?}");
    }
}

#[test]
fn a_create_call_outliving_the_kubelets_timeout() {
    // containerd's CreateContainer retried while the first call still holds the container's
    // name (containerd/containerd#4604), as the kubelet's CRI client logs it.
    let reserved = |t: &str, err: &str| {
        format!(
            r#"E0601 {t}.000000    1234 remote_runtime.go:251] "CreateContainer in sandbox from runtime service failed" err="rpc error: code = Unknown desc = {err}" podSandboxID="{SB1}""#
        )
    };
    let name = format!("app_web-0_shop_{UID1}_0");
    let held = format!(
        r#"failed to reserve container name "{name}": name "{name}" is reserved for "{C1}""#
    );
    let lines = vec![reserved("12:00:00", &held), reserved("12:02:10", &held)];
    let events = read(LogKind::Kubelet, "kubelet.log", &lines);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    let ru: Vec<&Finding> = found
        .iter()
        .filter(|f| f.kind == FindingKind::RuntimeUnhealthy)
        .collect();
    assert_eq!(ru.len(), 1, "{found:#?}");
    assert_eq!(ru[0].severity, Severity::Warning);
    assert!(
        ru[0]
            .summary
            .contains("found an earlier call of the same name still running"),
        "{}",
        ru[0].summary
    );
    // Must not: a create that failed for another reason (the image's entrypoint missing).
    let lines = vec![reserved(
        "12:00:00",
        r#"failed to create containerd task: exec: "/app": stat /app: no such file or directory"#,
    )];
    let events = read(LogKind::Kubelet, "kubelet.log", &lines);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    assert!(
        found
            .iter()
            .all(|f| f.kind != FindingKind::RuntimeUnhealthy),
        "{found:#?}"
    );
}

#[test]
fn a_hung_runtime_is_one_that_does_not_answer() {
    // containerd/containerd#12138: listing calls time out, then syncLoop says the runtime is
    // down (its Status check failed too): the runtime hangs.
    let list = |t: &str| {
        format!(
            r#"E0722 {t}   14287 remote_runtime.go:570] "ListContainers with filter from runtime service failed" err="rpc error: code = DeadlineExceeded desc = context deadline exceeded" filter="&ContainerFilter{{Id:,State:nil,PodSandboxId:,LabelSelector:map[string]string{{}},}}""#
        )
    };
    let down = r#"E0722 07:26:56.863708   14287 kubelet.go:2034] "Skipping pod synchronization" err="container runtime is down""#.to_string();
    let run = |lines: &[String]| {
        let events = read(LogKind::Kubelet, "kubelet.log", lines);
        diagnose_logs(&events, &NodeView::empty(), &cfg(), now())
    };
    let found = run(&[
        list("07:26:52.077422"),
        list("07:26:52.077745"),
        down.clone(),
    ]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, FindingKind::RuntimeUnhealthy);
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(
        found[0].summary.contains("does not answer"),
        "{}",
        found[0].summary
    );
    // Must not: listing calls timing out alone (a slow call), or far from the runtime being down
    // (a kubelet's start).
    assert!(run(&[list("07:26:52.077422"), list("07:26:52.077745")]).is_empty());
    assert!(run(&[list("07:20:52.077422"), down]).is_empty());

    // Without syncLoop's word: three calls of two methods or more that read the runtime's state
    // timing out within two minutes (trial 12: ListPodSandbox, ImageStatus, ExecSync).
    let image = |t: &str| {
        format!(
            r#"E0722 {t}   14287 remote_image.go:87] ImageStatus "registry.k8s.io/pause:3.9" from image service failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#
        )
    };
    let exec = |t: &str| {
        format!(
            r#"E0722 {t}   14287 remote_runtime.go:336] ExecSync {C1} 'pg_isready' from runtime service failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#
        )
    };
    let found = run(&[
        list("07:26:00.000000"),
        image("07:26:30.000000"),
        exec("07:26:59.000000"),
    ]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        (found[0].kind, found[0].severity),
        (FindingKind::RuntimeUnhealthy, Severity::Warning)
    );
    assert!(
        found[0]
            .summary
            .contains("3 calls timed out: ExecSync, ImageStatus, ListContainers"),
        "{}",
        found[0].summary
    );
    // Must not: one method again and again (a slow listing; a slow probe's command), the calls
    // minutes apart, or the runtime answering after them (a PLEG event).
    let listed = [
        list("07:26:00.000000"),
        list("07:26:30.000000"),
        list("07:26:59.000000"),
    ];
    assert!(run(&listed).is_empty());
    let probes = [
        exec("07:26:00.000000"),
        exec("07:26:30.000000"),
        exec("07:26:59.000000"),
    ];
    assert!(run(&probes).is_empty());
    let apart = [
        list("07:20:00.000000"),
        image("07:24:00.000000"),
        exec("07:28:00.000000"),
    ];
    assert!(run(&apart).is_empty());
    let answered = [
        list("07:26:00.000000"),
        image("07:26:30.000000"),
        exec("07:26:59.000000"),
        format!(
            r#"I0722 07:27:30.000000   14287 kubelet.go:2453] "SyncLoop (PLEG): event for pod" pod="team-ns/web-0" event={{"ID":"{UID1}","Type":"ContainerStarted","Data":"{C1}"}}"#
        ),
    ];
    assert!(run(&answered).is_empty(), "{:#?}", run(&answered));
    // Nor a burst the runtime answered after, then a lone slow call much later (adversarial
    // run of stop 40: the window took in every later call), nor a log going on four minutes
    // after the burst without the PLEG going unhealthy.
    let mut later = answered.to_vec();
    later.push(list("08:10:00.000000"));
    assert!(run(&later).is_empty(), "{:#?}", run(&later));
    let went_on = [
        list("07:26:00.000000"),
        image("07:26:30.000000"),
        list("07:26:59.000000"),
        r#"I0722 07:31:00.000000   14287 kubelet.go:2440] "SyncLoop UPDATE" source="api" pods=["team-ns/web-0"]"#
            .to_string(),
    ];
    assert!(run(&went_on).is_empty(), "{:#?}", run(&went_on));
}

// === ContainerStopFailing: CRI-O's and containerd 2.x's own messages ===

#[test]
fn container_stop_failing_runtime_messages() {
    // cri-o internal/oci/runtime_oci.go StopLoopForContainer (logfmt, as crio writes it).
    let crio = |t: &str, msg: &str| format!(r#"time="2024-05-01T{t}Z" level=warning msg="{msg}""#);
    let timed_out = |t: &str| {
        crio(
            t,
            &format!("Stopping container {C1} with stop signal timed out. Killing..."),
        )
    };
    check(vec![
        runtime_case(
            "not a finding: CRI-O's stop signal timing out once (SIGKILL follows)",
            vec![timed_out("10:00:00.000000")],
            &[],
        ),
        runtime_case(
            "CRI-O's stop signal timing out again and again: a kill that never ends",
            vec![
                timed_out("10:00:00.000000"),
                timed_out("10:00:00.006000"),
                timed_out("10:00:00.012000"),
            ],
            &[(
                FindingKind::ContainerStopFailing,
                Severity::Warning,
                "did not exit in time",
            )],
        ),
        runtime_case(
            "CRI-O's SIGKILL failing",
            vec![format!(
                r#"time="2024-05-01T10:00:00.000000Z" level=error msg="Killing container {C1} failed: `/usr/bin/runc --root /run/runc kill {C1} KILL` failed: permission denied  : exit status 1""#
            )],
            &[(
                FindingKind::ContainerStopFailing,
                Severity::Warning,
                "the kill failed",
            )],
        ),
        runtime_case(
            "CRI-O: the container's process in D state",
            vec![format!(
                r#"time="2024-05-01T10:01:00.000000Z" level=error msg="Detected process (4242) blocked in uninterruptible sleep for more than 60 seconds for container {C1}""#
            )],
            &[(FindingKind::ContainerStopFailing, Severity::Warning, C1)],
        ),
        case(
            "the kubelet's SyncPod: killContainer for pod failed, twice (containerd/containerd#6080)",
            &[
                format!(
                    r#"E1113 07:54:19.636900    3263 kuberuntime_manager.go:1094] "killContainer for pod failed" err="rpc error: code = DeadlineExceeded desc = context deadline exceeded" containerName="solace" containerID={{"Type":"containerd","ID":"{C1}"}} pod="team-ns/app-0""#
                ),
                format!(
                    r#"E1113 07:56:21.636900    3263 kuberuntime_manager.go:1094] "killContainer for pod failed" err="rpc error: code = DeadlineExceeded desc = context deadline exceeded" containerName="solace" containerID={{"Type":"containerd","ID":"{C1}"}} pod="team-ns/app-0""#
                ),
            ],
            &[(FindingKind::ContainerStopFailing, Severity::Warning, C1)],
        ),
        case(
            "1.21+: Kill container failed, the shim accepting only SIGKILL (Azure/AgentBaker#3092)",
            &[
                format!(
                    r#"E0426 17:19:37.684031    1650 kuberuntime_container.go:752] "Kill container failed" err="rpc error: code = InvalidArgument desc = failed to stop container \"{C1}\": only SIGKILL is supported: invalid argument" pod="default/spin-0" podUID=c546b2d9-0000-4000-8000-000000000001 containerName="spin-hello" containerID={{Type:containerd ID:{C1}}}"#
                ),
                format!(
                    r#"E0426 17:21:37.684031    1650 kuberuntime_container.go:752] "Kill container failed" err="rpc error: code = InvalidArgument desc = failed to stop container \"{C1}\": only SIGKILL is supported: invalid argument" pod="default/spin-0" podUID=c546b2d9-0000-4000-8000-000000000001 containerName="spin-hello" containerID={{Type:containerd ID:{C1}}}"#
                ),
            ],
            &[(
                FindingKind::ContainerStopFailing,
                Severity::Warning,
                "only SIGKILL is supported",
            )],
        ),
        case(
            "not a finding: a kill answered NotFound (the container is already gone)",
            &[
                format!(
                    r#"E0114 18:02:18.924926    3044 kuberuntime_container.go:691] "Kill container failed" err="rpc error: code = NotFound desc = an error occurred when try to find container \"{C1}\": not found" pod="alloc-tests/alloc-mem-leak" podUID=5f3d2447-f535-4b3d-979c-216d4980cc3f containerName="c" containerID={{Type:containerd ID:{C1}}}"#
                ),
                format!(
                    r#"E0114 18:04:18.924926    3044 kuberuntime_container.go:691] "Kill container failed" err="rpc error: code = NotFound desc = an error occurred when try to find container \"{C1}\": not found" pod="alloc-tests/alloc-mem-leak" podUID=5f3d2447-f535-4b3d-979c-216d4980cc3f containerName="c" containerID={{Type:containerd ID:{C1}}}"#
                ),
            ],
            &[],
        ),
        case(
            "legacy: killContainer \"<name>\"(id=…) for pod … failed",
            &[
                format!(
                    r#"E0601 10:00:00.000000    1234 kuberuntime_manager.go:640] killContainer "app"(id={{"docker" "{C1}"}}) for pod "app-0_team-ns(0b2a8f94-9e0c-4b55-9ef6-5d2d3f1e0a11)" failed: rpc error: code = Unknown desc = operation timeout: context deadline exceeded"#
                ),
                format!(
                    r#"E0601 10:02:00.000000    1234 kuberuntime_manager.go:640] killContainer "app"(id={{"docker" "{C1}"}}) for pod "app-0_team-ns(0b2a8f94-9e0c-4b55-9ef6-5d2d3f1e0a11)" failed: rpc error: code = Unknown desc = operation timeout: context deadline exceeded"#
                ),
            ],
            &[(FindingKind::ContainerStopFailing, Severity::Warning, C1)],
        ),
        runtime_case(
            "containerd 2.x: StopContainer failing on its SIGKILL",
            vec![format!(
                r#"time="2024-05-01T10:00:00.000000000Z" level=error msg="StopContainer for \"{C1}\" failed" error="rpc error: code = Unknown desc = failed to kill container \"{C1}\": unknown error after kill: runc did not terminate successfully: exit status 1""#
            )],
            &[(
                FindingKind::ContainerStopFailing,
                Severity::Warning,
                "the kill failed",
            )],
        ),
    ]);
}

// === Benign noise: info at most ===

#[test]
fn benign_noise_stays_benign() {
    let scope = format!(
        "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5da3387d_ad1c_11ea_a025_525400767782.slice/crio-{SB1}.scope"
    );
    let conmon = scope.replace("crio-", "crio-conmon-");
    let lines = vec![
        // cAdvisor (google/cadvisor manager.go watchForNewContainers, createContainer) asking
        // CRI-O (server/inspect.go: `can't find the container with id %s`, 404) about a pod
        // sandbox's infra container or its conmon scope that is already gone.
        format!(
            "W0501 10:00:00.000000    1234 manager.go:1169] Failed to process watch event {{EventType:0 Name:{scope} WatchSource:0}}: Error finding container {SB1}: Status 404 returned error can't find the container with id {SB1}"
        ),
        format!(
            "E0501 10:00:01.000000    1234 manager.go:1116] Failed to create existing container: {conmon}: Error finding container {SB1}: Status 404 returned error can't find the container with id {SB1}"
        ),
        format!(
            r#"E0501 10:00:02.000000    1234 cadvisor_stats_provider.go:415] "Partial failure issuing cadvisor.ContainerInfoV2" err="partial failures: [\"{conmon}\": containerDataToContainerInfo: unable to find data in memory cache]""#
        ),
        format!(
            "W0501 10:00:03.000000    1234 manager.go:696] Error getting data for container {scope} because of race condition"
        ),
        // The real kubelet v1.34.4 right after a restart: the mirror pod exists already.
        r#"E0501 10:00:04.000000    1234 kubelet.go:3222] "Failed creating a mirror pod" err="pods \"etcd-node-a\" already exists" pod="kube-system/etcd-node-a""#.to_string(),
        // One NotFound after a deletion: the container is already gone.
        delete_not_found("10:00:05.000000", C1),
    ];
    let events = read(LogKind::Kubelet, "kubelet.log", &lines);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    let kinds: Vec<(FindingKind, Severity)> = found.iter().map(|f| (f.kind, f.severity)).collect();
    assert!(
        found.iter().all(|f| f.severity == Severity::Info),
        "{kinds:?}"
    );
    let mut kinds: Vec<FindingKind> = kinds.into_iter().map(|k| k.0).collect();
    kinds.sort();
    // The two benign races are said (info); cAdvisor's lines are no finding at all.
    assert_eq!(
        kinds,
        vec![
            FindingKind::FindContainerRace,
            FindingKind::MirrorPodCreateFailed
        ],
        "{found:#?}"
    );
}

#[test]
fn a_cni_plugin_failing_on_add_too_is_said() {
    let del = format!(
        r#"time="2024-05-11T16:10:46.800501486Z" level=error msg="StopPodSandbox for \"{SB1}\" failed" error="failed to destroy network for sandbox \"{SB1}\": plugin type=\"calico\" failed (delete): netplugin failed with no error message: signal: killed""#
    );
    let add = |plugin: &str| {
        format!(
            r#"time="2024-05-11T16:09:21.839669754Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{{Name:coredns-f5cb5585b-s2bxk,Uid:{UID2},Namespace:kube-system,Attempt:0,}} failed, error" error="failed to setup network for sandbox \"{SB2}\": plugin type=\"{plugin}\" failed (add): netplugin failed with no error message: signal: killed""#
        )
    };
    let runtime = |name: &'static str, lines: Vec<String>, word: &'static str| {
        runtime_case(
            name,
            lines,
            &[(FindingKind::SandboxStopFailing, Severity::Warning, word)],
        )
    };
    check(vec![
        runtime(
            "the same plugin fails on ADD: new pods cannot start either",
            vec![add("calico"), del.clone()],
            "also fails to set up new sandboxes (1 RunPodSandbox failure",
        ),
        Case {
            want: vec![
                (
                    FindingKind::SandboxStopFailing,
                    Severity::Warning,
                    "(1 attempt, 1 log record)",
                ),
                (
                    FindingKind::SandboxCreateFailing,
                    Severity::Info,
                    "failed once: the CNI ADD fails (plugin flannel)",
                ),
            ],
            ..runtime(
                "another plugin's ADD failure is not this one's: its own info",
                vec![add("flannel"), del.clone()],
                "",
            )
        },
    ]);
    let events = read(LogKind::Runtime, "containerd.log", &[add("flannel"), del]);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    assert!(
        found
            .iter()
            .all(|f| !f.summary.contains("also fails to set up")),
        "{found:#?}"
    );
}

/// The real kubelet v1.34.4's own lines (testdata/cases/42-…): the kill of a deleted pod fails
/// (its CNI plugin is missing), the pod is force-deleted while the kubelet is down, and after the
/// start only the sandbox GC tries and fails: SandboxStopFailing (critical), never
/// StuckTerminatingPod, quoting the GC's line.
#[test]
fn a_kubelet_start_ends_the_kill_on_the_real_kubelet() {
    let kubelet: Vec<String> = [
        r#"E1201 15:07:35.992837   13014 log.go:32] "StopPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"7efa05cc8a3dd0c58b23a90119a425fee38bb47b0c5d61f56d2ac5841e24fff2\": plugin type=\"podcoroner-missing-plugin\" failed (delete): failed to find plugin \"podcoroner-missing-plugin\" in path [/usr/lib/cni]" podSandboxID="7efa05cc8a3dd0c58b23a90119a425fee38bb47b0c5d61f56d2ac5841e24fff2""#,
        r#"E1201 15:07:35.992974   13014 kuberuntime_manager.go:1665] "Failed to stop sandbox" podSandboxID={"Type":"containerd","ID":"7efa05cc8a3dd0c58b23a90119a425fee38bb47b0c5d61f56d2ac5841e24fff2"}"#,
        r#"E1201 15:07:35.993527   13014 kubelet.go:2150] "Unhandled Error" err="failed to \"KillPodSandbox\" for \"ce68ec20-bd63-4aa1-a3b5-beba43bfbd6f\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"7efa05cc8a3dd0c58b23a90119a425fee38bb47b0c5d61f56d2ac5841e24fff2\\\": plugin type=\\\"podcoroner-missing-plugin\\\" failed (delete): failed to find plugin \\\"podcoroner-missing-plugin\\\" in path [/usr/lib/cni]\"" logger="UnhandledError""#,
        r#"I1201 15:07:37.057058   13393 server.go:529] "Kubelet version" kubeletVersion="v1.34.4""#,
        r#"E1201 15:08:37.414992   13393 kuberuntime_gc.go:182] "Failed to stop sandbox before removing" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"7efa05cc8a3dd0c58b23a90119a425fee38bb47b0c5d61f56d2ac5841e24fff2\": plugin type=\"podcoroner-missing-plugin\" failed (delete): failed to find plugin \"podcoroner-missing-plugin\" in path [/usr/lib/cni]" sandboxID="7efa05cc8a3dd0c58b23a90119a425fee38bb47b0c5d61f56d2ac5841e24fff2""#,
    ]
    .iter()
    .map(|l| l.to_string())
    .collect();
    let events = read(LogKind::Kubelet, "kubelet.log", &kubelet);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    let kinds: Vec<(FindingKind, Severity)> = found.iter().map(|f| (f.kind, f.severity)).collect();
    assert_eq!(
        kinds,
        vec![(FindingKind::SandboxStopFailing, Severity::Critical)],
        "{found:#?}"
    );
    let f = &found[0];
    assert_eq!(
        f.pod.as_ref().unwrap().uid,
        "ce68ec20-bd63-4aa1-a3b5-beba43bfbd6f"
    );
    assert!(
        f.summary
            .contains("the kubelet's GC retries it every minute"),
        "{}",
        f.summary
    );
    assert!(
        f.evidence
            .iter()
            .any(|e| e.detail().starts_with("kubelet.log:5: ")
                && e.detail()
                    .contains("Failed to stop sandbox before removing")),
        "{:#?}",
        f.evidence
    );
    // Without the start between them, the same lines are the pod worker's kill: StuckTerminatingPod.
    let mut no_start = kubelet.clone();
    no_start.remove(3);
    let events = read(LogKind::Kubelet, "kubelet.log", &no_start);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    assert_eq!(
        found.iter().map(|f| f.kind).collect::<Vec<_>>(),
        vec![FindingKind::StuckTerminatingPod],
        "{found:#?}"
    );
}

/// A stop failure naming no sandbox and no pod (a line cut before its `podSandboxID=`, case 22),
/// logged again and again, is one finding of its cause with every record counted, not one
/// finding per record; beside a failure that names its sandbox, the cut lines are no incident of
/// their own.
#[test]
fn anonymous_stop_failures_repeated_are_one_incident() {
    let cut = |t: &str| {
        format!(
            r#"E0512 {t}   39085 remote_runtime.go:205] "StopPodSandbox from runtime service failed" err="rpc error"#
        )
    };
    let mut lines: Vec<String> = (0..5).map(|m| cut(&format!("11:2{m}:37.277034"))).collect();
    let stops = |lines: &[String]| -> Vec<Finding> {
        let events = read(LogKind::Kubelet, "kubelet.log", lines);
        diagnose_logs(&events, &NodeView::empty(), &cfg(), now())
            .into_iter()
            .filter(|f| f.kind == FindingKind::SandboxStopFailing)
            .collect()
    };
    let alone = stops(&lines);
    assert_eq!(alone.len(), 1, "{alone:#?}");
    assert_eq!(alone[0].sandbox_id, None);
    assert!(
        alone[0].summary.contains("5 attempts, 5 log records"),
        "{}",
        alone[0].summary
    );
    lines.push(cri_stop_failed(
        "11:30:00.000000",
        SB1,
        "context deadline exceeded",
    ));
    let named = stops(&lines);
    assert_eq!(
        named
            .iter()
            .map(|f| f.sandbox_id.as_deref())
            .collect::<Vec<_>>(),
        vec![Some(SB1)],
        "{named:#?}"
    );
}

// === PodStatusFailing: getPodContainerStatuses failing, judged by the pod's outcome ===

#[test]
fn pod_status_failing_by_outcome() {
    let failed = |t: &str, err: &str| {
        format!(
            r#"E0601 {t}   19130 kuberuntime_manager.go:1091] "getPodContainerStatuses for pod failed" err="{err}" pod="kube-system/kube-apiserver-node-a""#
        )
    };
    let gone = |t: &str| failed(t, &format!("Error: No such container: {C1}"));
    let killing = format!(
        r#"I0601 10:00:02.000000   19130 kuberuntime_container.go:721] "Killing container with a grace period" pod="kube-system/kube-apiserver-node-a" podUID={HASH} containerName="kube-apiserver" containerID="containerd://{C2}" gracePeriod=30"#
    );
    check(vec![
        case(
            "a NotFound with nothing after it for the pod: its worker never got past GetPodStatus",
            &[gone("10:00:00.000000")],
            &[(
                FindingKind::PodStatusFailing,
                Severity::Warning,
                "kube-apiserver-node-a",
            )],
        ),
        case(
            "legacy wording (kubelet <= 1.20), the pod as a full name",
            &[format!(
                r#"E0601 10:00:00.000000   19130 kuberuntime_manager.go:917] getPodContainerStatuses for pod "kube-apiserver-node-a_kube-system({HASH})" failed: rpc error: code = Unknown desc = Error: No such container: {C1}"#
            )],
            &[(FindingKind::PodStatusFailing, Severity::Warning, "NotFound")],
        ),
        case(
            "not a finding: the pod's worker went on after the failure (a transient error)",
            &[gone("10:00:00.000000"), killing.clone()],
            &[],
        ),
        case(
            "still a finding: the progress came before the last failure",
            &[killing, gone("10:00:03.000000")],
            &[(FindingKind::PodStatusFailing, Severity::Warning, C1)],
        ),
        case(
            "the runtime's answer lacks a required field (cri-o/cri-o#5709): the CRI client's line names the container, the fix is the runtime's",
            &[
                format!(
                    r#"E0601 09:59:59.900000   19130 remote_runtime.go:343] "verify ContainerStatus failed" err="status.Image is not set" containerID="{C1}""#
                ),
                failed("10:00:00.000000", "status.Image is not set"),
            ],
            &[(
                FindingKind::PodStatusFailing,
                Severity::Warning,
                "the runtime's ContainerStatus answer for container d0f631ca1ddba lacks a field the kubelet requires (status.Image is not set): a runtime bug",
            )],
        ),
        case(
            "another runtime error: the container from the CRI client's line, the fix the runtime's",
            &[
                format!(
                    r#"E0601 09:59:59.900000   19130 remote_runtime.go:415] "ContainerStatus from runtime service failed" err="rpc error: code = Unknown desc = readlink /var/lib/docker/overlay2/l: invalid argument" containerID="{C1}""#
                ),
                failed(
                    "10:00:00.000000",
                    "rpc error: code = Unknown desc = readlink /var/lib/docker/overlay2/l: invalid argument",
                ),
            ],
            &[(
                FindingKind::PodStatusFailing,
                Severity::Warning,
                "the runtime returned an error for container d0f631ca1ddba (rpc error: code = Unknown desc = readlink",
            )],
        ),
        case(
            "the PLEG's reinspection failing is GetPodStatus failing too; its pod is written name/namespace (kubelet 1.6)",
            &[format!(
                "E0620 14:58:26.770401    1561 generic.go:269] PLEG: pod es-data-1/default failed reinspection: rpc error: code = 2 desc = Error: No such container: {C1}"
            )],
            &[(
                FindingKind::PodStatusFailing,
                Severity::Warning,
                "the kubelet cannot read the container statuses of pod default/es-data-1: container d0f631ca1ddba is gone from the runtime (NotFound)",
            )],
        ),
        case(
            "not a finding here: a timed-out call is the slow runtime's (RuntimeUnhealthy)",
            &[failed(
                "10:00:00.000000",
                "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            )],
            &[],
        ),
    ]);
}

// === The pod waiting for a new sandbox while the CNI ADD fails ===

#[test]
fn pods_waiting_for_a_sandbox_join_a_cni_teardown_failure() {
    let need = |pod: &str| {
        format!(
            r#"May 12 11:18:37 node-a kubelet[39085]: I0512 11:18:37.276291   39085 util.go:48] "No ready sandbox for pod can be found. Need to start a new one" pod="kube-system/{pod}""#
        )
    };
    let add = format!(
        r#"May 11 16:09:21 node-a containerd[765]: time="2023-05-11T16:09:21.839669754+08:00" level=error msg="RunPodSandbox for &PodSandboxMetadata{{Name:coredns-a,Uid:{UID1},Namespace:kube-system,Attempt:0,}} failed, error" error="failed to setup network for sandbox \"{SB2}\": plugin type=\"calico\" failed (add): netplugin failed with no error message: signal: killed""#
    );
    let del = format!(
        r#"May 11 16:10:46 node-a containerd[765]: time="2023-05-11T16:10:46.800501486+08:00" level=error msg="StopPodSandbox for \"{SB1}\" failed" error="failed to destroy network for sandbox \"{SB1}\": plugin type=\"calico\" failed (delete): netplugin failed with no error message: signal: killed""#
    );
    let created = format!(
        r#"May 12 11:18:40 node-a kubelet[39085]: I0512 11:18:40.000000   39085 kuberuntime_manager.go:1200] "Created PodSandbox for pod" podSandboxID="{SB2}" pod="kube-system/coredns-c""#
    );
    let run = |name: &'static str, kubelet: Vec<String>, want: &'static str| Case {
        name,
        kubelet,
        runtime: vec![add.clone(), del.clone()],
        view: NodeView::empty(),
        want: vec![(FindingKind::SandboxStopFailing, Severity::Warning, want)],
    };
    check(vec![
        run(
            "a pod that needs a new sandbox and gets none is named",
            vec![need("coredns-b")],
            "1 pod waits for a new sandbox (kube-system/coredns-b)",
        ),
        run(
            "a pod whose sandbox was created after is not",
            vec![need("coredns-c"), created.clone()],
            "so new pods cannot start either",
        ),
    ]);
    let mut events = read(
        LogKind::Kubelet,
        "kubelet.log",
        &[need("coredns-c"), created],
    );
    events.extend(read(LogKind::Runtime, "containerd.log", &[add, del]));
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    assert!(
        found.iter().all(|f| !f.summary.contains("wait")),
        "{:?}",
        found.iter().map(|f| &f.summary).collect::<Vec<_>>()
    );
}

// === RuntimeUnhealthy: creating sandboxes times out ===

/// k3s-io/k3s#497: one RunPodSandbox logged by three layers (the CRI client, createPodSandbox,
/// SyncPod) within microseconds is one call, of the pod the two others name; the container GC
/// timing out a minute before is said beside it.
#[test]
fn slow_creates_count_calls_not_lines() {
    let lines = |t: &str, name: &str, uid: &str| {
        vec![
            format!(
                "E0527 {t}    6528 remote_runtime.go:109] RunPodSandbox from runtime service failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded"
            ),
            format!(
                r#"E0527 {t}    6528 kuberuntime_sandbox.go:68] CreatePodSandbox for pod "{name}_kube-system({uid})" failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#
            ),
            format!(
                r#"E0527 {t}    6528 kuberuntime_manager.go:693] createPodSandbox for pod "{name}_kube-system({uid})" failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded"#
            ),
        ]
    };
    let gc = "E0527 17:02:51.361371    6528 kubelet.go:1222] Container garbage collection failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded".to_string();
    let mut one = vec![gc];
    one.extend(lines("17:03:52.178685", "svclb-traefik-phpd2", UID1));
    let mut two = lines("17:03:52.178685", "svclb-traefik-phpd2", UID1);
    two.extend(lines("17:03:52.200000", "coredns-5dd5756b68-gt7xt", UID2));
    check(vec![
        case(
            "three layers, one call, its pod named; the GC's timeout said",
            &one,
            &[(
                FindingKind::RuntimeUnhealthy,
                Severity::Warning,
                "1 create call timed out (DeadlineExceeded) for 1 pod (kube-system/svclb-traefik-phpd2); their pods do not start and the kubelet recreates their sandboxes (3 records); 1 other call to the runtime timed out too",
            )],
        ),
        case(
            "two pods' calls at once: two calls",
            &two,
            &[(
                FindingKind::RuntimeUnhealthy,
                Severity::Warning,
                "2 create calls timed out (DeadlineExceeded) for 2 pods (",
            )],
        ),
    ]);
}

// === ContainerStopFailing: a stop asked again and never answered ===

/// CRI-O logs a StopContainer request and, when done, that it stopped (cri-o/cri-o#7053's
/// lines): asked twice past the grace period with no answer is a stop that does not end.
#[test]
fn unanswered_stop_requests() {
    let crio = |t: &str, msg: &str| {
        format!(
            r#"time="2023-06-14 {t}-07:00" level=info msg="{msg}" name=/runtime.v1.RuntimeService/StopContainer"#
        )
    };
    let stopping = |t: &str, id: &str| crio(t, &format!("Stopping container: {id} (timeout: 30s)"));
    let stopped = |t: &str, id: &str| crio(t, &format!("Stopped container {id}: shop/web-0/web"));
    check(vec![
        runtime_case(
            "asked twice 74 s apart, never stopped, the log holding other containers' answers: a warning",
            vec![
                stopping("23:50:37.383837278", C1),
                stopping("23:50:40.000000000", C2),
                stopped("23:50:41.000000000", C2),
                stopping("23:51:51.384687150", C1),
            ],
            &[(
                FindingKind::ContainerStopFailing,
                Severity::Warning,
                "the runtime was asked to stop container d0f631ca1ddba 2 times (each with a 30s grace period) over 1m14s and never logged it stopped: a stop that does not end",
            )],
        ),
        runtime_case(
            "the same with no Stopped line in the log at all (a grep of the requests?): an info",
            vec![
                stopping("23:50:37.383837278", C1),
                stopping("23:51:51.384687150", C1),
            ],
            &[(
                FindingKind::ContainerStopFailing,
                Severity::Info,
                "or a log holding only the requests",
            )],
        ),
        runtime_case(
            "not a finding: stopped after the first request",
            vec![
                stopping("23:50:37.383837278", C1),
                stopped("23:50:50.000000000", C1),
                stopping("23:51:51.384687150", C1),
            ],
            &[],
        ),
        runtime_case(
            "not a finding: asked again within the grace period",
            vec![
                stopping("23:50:37.383837278", C1),
                stopping("23:50:47.000000000", C1),
            ],
            &[],
        ),
    ]);
}

// === ImagePullFailing ===

#[test]
fn image_pull_failing() {
    const UID: &str = "1193f710-eeae-4761-84b6-176acbd97ea6";
    // As structured klog writes the pod worker's error: its quotes escaped, the pull's twice.
    let synced = |t: &str, with: &str| {
        format!(
            r#"E0810 {t}    1766 pod_workers.go:965] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\" with {with}" pod="team/app-0" podUID={UID}"#
        )
    };
    let pull = |t: &str, err: &str| {
        synced(
            t,
            &format!(
                r#"ErrImagePull: \"rpc error: code = Unknown desc = failed to pull and unpack image \\\"registry.example.com/app:1\\\": {err}\"""#
            ),
        )
    };
    let back_off = |t: &str| {
        synced(
            t,
            r#"ImagePullBackOff: \"Back-off pulling image \\\"registry.example.com/app:1\\\"\""#,
        )
    };
    let started = |t: &str| {
        format!(
            r#"I0810 {t}    1766 kubelet.go:2157] "SyncLoop (PLEG): event for pod" pod="team/app-0" event={{"ID":"{UID}","Type":"ContainerStarted","Data":"{}"}}"#,
            "c".repeat(64)
        )
    };
    let other = |t: &str| {
        format!(
            r#"I0810 {t}    1766 kubelet.go:2063] "SyncLoop DELETE" source="api" pods=["team/other-0"]"#
        )
    };
    let timeout = r#"failed to do request: Head \\\"https://registry.example.com/v2/app/manifests/1\\\": dial tcp 10.0.0.9:443: i/o timeout"#;
    let unknown = r#"failed to resolve reference \\\"registry.example.com/app:1\\\": registry.example.com/app:1: not found"#;
    check(vec![
        case(
            "the registry out of the node's reach, then in back-off: a warning with the cause",
            &[
                pull("17:20:00.000000", timeout),
                back_off("17:20:12.000000"),
                back_off("17:20:40.000000"),
            ],
            &[(
                FindingKind::ImagePullFailing,
                Severity::Warning,
                "the node does not reach the registry",
            )],
        ),
        case(
            "not a finding: a container of the pod started after the back-off",
            &[
                pull("17:20:00.000000", timeout),
                back_off("17:20:12.000000"),
                started("17:21:30.000000"),
            ],
            &[],
        ),
        Case {
            name: "not a finding: containerd pulled the image after the back-off",
            kubelet: vec![
                pull("17:20:00.000000", timeout),
                back_off("17:20:12.000000"),
            ],
            runtime: vec![format!(
                r#"time="2024-08-10T17:21:02.000000000Z" level=info msg="PullImage \"registry.example.com/app:1\" returns image reference \"sha256:{}\"""#,
                "d".repeat(64)
            )],
            view: NodeView::empty(),
            want: vec![],
        },
        case(
            "no such image: the pod's spec, an info",
            &[
                pull("17:20:00.000000", unknown),
                back_off("17:20:12.000000"),
                back_off("17:20:40.000000"),
            ],
            &[(
                FindingKind::ImagePullFailing,
                Severity::Info,
                "does not exist",
            )],
        ),
        case(
            "one failed pull, not retried in the excerpt: an info",
            &[pull("17:20:00.000000", timeout)],
            &[(
                FindingKind::ImagePullFailing,
                Severity::Info,
                "registry.example.com/app:1",
            )],
        ),
        case(
            "only the back-off, its cause not given: an info",
            &[back_off("17:20:12.000000"), back_off("17:20:40.000000")],
            &[(
                FindingKind::ImagePullFailing,
                Severity::Info,
                "its error not in these records",
            )],
        ),
        case(
            "the log goes on 15 min past the last failure: the pod no longer fails, an info",
            &[
                pull("17:20:00.000000", timeout),
                back_off("17:20:12.000000"),
                other("17:35:12.000000"),
            ],
            &[(
                FindingKind::ImagePullFailing,
                Severity::Info,
                "the log goes on without it failing again",
            )],
        ),
        case(
            "not a finding: the pod deleted while in back-off (adversarial run 41's 04)",
            &[
                pull("17:20:00.000000", timeout),
                back_off("17:20:12.000000"),
                back_off("17:20:40.000000"),
                r#"I0810 17:20:50.000000    1766 kubelet.go:2063] "SyncLoop DELETE" source="api" pods=["team/app-0"]"#.to_string(),
            ],
            &[],
        ),
        case(
            "the registry out of reach once, then a tag that does not exist: the latest cause, an info",
            &[
                pull("17:20:00.000000", timeout),
                pull("17:21:00.000000", unknown),
                back_off("17:21:12.000000"),
            ],
            &[(
                FindingKind::ImagePullFailing,
                Severity::Info,
                "does not exist",
            )],
        ),
        case(
            "not this kind: dockershim's infra container (\"POD\") is the sandbox's",
            &[format!(
                r#"E0713 07:10:44.865298    1742 pod_workers.go:183] Error syncing pod {UID}, skipping: failed to "StartContainer" for "POD" with ImagePullBackOff: "Back-off pulling image \"gcr.io/google_containers/pause-amd64:3.0\"""#
            )],
            &[],
        ),
    ]);
}

// === VolumeMountFailing ===

#[test]
fn volume_mount_failing() {
    const UID: &str = "11111111-2222-4333-8444-555555555555";
    // kubernetes/kubernetes#117652: static pods after a reboot (kubelet 1.26).
    let wait = |t: &str, pod: &str, volumes: &str, end: &str| {
        format!(
            r#"E0427 {t}    3112 kubelet.go:1875] "Unable to attach or mount volumes for pod; skipping pod" err="unmounted volumes=[{volumes}], unattached volumes=[], failed to process volumes=[]: {end}" pod="{pod}""#
        )
    };
    let mount_failed = |t: &str, err: &str| {
        format!(
            r#"E0427 {t}    3112 nestedpendingoperations.go:348] Operation for "{{volumeName:kubernetes.io/csi/nfs.csi.k8s.io^data podName: nodeName:}}" failed. No retries permitted until 2024-04-27 16:27:32 +0000 UTC m=+130.0 (durationBeforeRetry 2m2s). Error: MountVolume.SetUp failed for volume "data" (UniqueName: "kubernetes.io/csi/nfs.csi.k8s.io^data") pod "web-0" (UID: "{UID}") : {err}"#
        )
    };
    let started = |t: &str| {
        format!(
            r#"I0427 {t}    3112 kubelet.go:2157] "SyncLoop (PLEG): event for pod" pod="shop/web-0" event={{"ID":"{UID}","Type":"ContainerStarted","Data":"{}"}}"#,
            "c".repeat(64)
        )
    };
    let timed_out = "timed out waiting for the condition";
    let csi = "kubernetes.io/csi: mounter.SetUpAt failed to get CSI client: driver name nfs.csi.k8s.io not found in the list of registered CSI drivers";
    let no_secret = r#"secret "web-tls" not found"#;
    check(vec![
        case(
            "two static pods' waits run out, their cause not given: a warning naming both",
            &[
                wait(
                    "16:27:26.004278",
                    "kube-system/etcd-k8s-02.intern",
                    "etcd-data etcd-certs",
                    timed_out,
                ),
                wait(
                    "16:27:26.004349",
                    "kube-system/kube-apiserver-k8s-02.intern",
                    "k8s-certs ca-certs etc-pki",
                    timed_out,
                ),
            ],
            &[(
                FindingKind::VolumeMountFailing,
                Severity::Warning,
                "2 pods wait for their volumes",
            )],
        ),
        case(
            "the CSI driver not registered, then the wait runs out: one pod, the node's cause",
            &[
                mount_failed("16:25:30.000000", csi),
                mount_failed("16:26:32.000000", csi),
                wait("16:27:26.004278", "shop/web-0", "data", timed_out),
            ],
            &[(
                FindingKind::VolumeMountFailing,
                Severity::Warning,
                "the volume's CSI driver is not registered on this node",
            )],
        ),
        case(
            "a missing Secret: the pod's spec, an info",
            &[
                mount_failed("16:25:30.000000", no_secret),
                wait("16:27:26.004278", "shop/web-0", "data", timed_out),
            ],
            &[(
                FindingKind::VolumeMountFailing,
                Severity::Info,
                "does not exist",
            )],
        ),
        case(
            "a claim that does not exist, in the wait's own error: the pod's spec, an info",
            &[wait(
                "16:27:26.004278",
                "shop/web-0",
                "data",
                r#"error processing PVC shop/data-web-0: failed to fetch PVC from API server: persistentvolumeclaims \"data-web-0\" not found"#,
            )],
            &[(FindingKind::VolumeMountFailing, Severity::Info, "does not exist")],
        ),
        case(
            "the populator cannot find the claim, then the wait runs out: the pod's spec, an info",
            &[
                r#"E0427 16:25:26.000000    3112 desired_state_of_world_populator.go:320] "Error processing volume" err="error processing PVC shop/data-web-0: failed to fetch PVC from API server: persistentvolumeclaims \"data-web-0\" not found" pod="shop/web-0" volumeName="data""#.to_string(),
                wait("16:27:26.004278", "shop/web-0", "data", timed_out),
            ],
            &[(FindingKind::VolumeMountFailing, Severity::Info, "does not exist")],
        ),
        case(
            "not a finding: the pod deleted while it waits",
            &[
                wait("16:27:26.004278", "shop/web-0", "data", timed_out),
                r#"I0427 16:27:30.000000    3112 kubelet.go:2063] "SyncLoop DELETE" source="api" pods=["shop/web-0"]"#.to_string(),
            ],
            &[],
        ),
        case(
            "not a finding: a wait interrupted (the static pod updated, case 05 of trial 13)",
            &[wait(
                "16:27:26.004278",
                "shop/web-0",
                "data",
                "context canceled",
            )],
            &[],
        ),
        case(
            "not a finding: a mount failing for a minute, no wait run out (a pod starting)",
            &[
                mount_failed("16:25:30.000000", no_secret),
                mount_failed("16:26:30.000000", no_secret),
            ],
            &[],
        ),
        case(
            "not a finding: a container of the pod started after the wait",
            &[
                mount_failed("16:25:30.000000", csi),
                wait("16:27:26.004278", "shop/web-0", "data", timed_out),
                started("16:28:30.000000"),
            ],
            &[],
        ),
    ]);
}

// === ContainerCrashLooping ===

#[test]
fn container_crash_looping() {
    // kubernetes/kubernetes#125283: a static kube-scheduler (its UID a config hash).
    let scheduler = |t: &str, back_off: &str| {
        format!(
            r#"E0602 {t} 1075113 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"kube-scheduler\" with CrashLoopBackOff: \"back-off {back_off} restarting failed container=kube-scheduler pod=kube-scheduler-cp-1_kube-system(7e4870baad9d42588bd86d4db89bbc3a)\"" pod="kube-system/kube-scheduler-cp-1" podUID="7e4870baad9d42588bd86d4db89bbc3a""#
        )
    };
    let app = |t: &str, back_off: &str| {
        format!(
            r#"E0602 {t} 1075113 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"falco\" with CrashLoopBackOff: \"back-off {back_off} restarting failed container=falco pod=falco-fjzcq_falco(307c7e40-d853-453e-abd0-9f8700000000)\"" pod="falco/falco-fjzcq" podUID="307c7e40-d853-453e-abd0-9f8700000000""#
        )
    };
    let other = |t: &str| {
        format!(
            r#"I0602 {t} 1075113 kubelet.go:2063] "SyncLoop DELETE" source="api" pods=["team/other-0"]"#
        )
    };
    check(vec![
        case(
            "a static pod's container exited 5 times in a row where the log ends: a warning",
            &[scheduler("22:26:55.681326", "2m40s")],
            &[(
                FindingKind::ContainerCrashLooping,
                Severity::Warning,
                "5 exits in a row",
            )],
        ),
        case(
            "a workload's crash loop: an info, whatever its back-off",
            &[
                app("22:26:55.681326", "5m0s"),
                app("22:31:55.681326", "5m0s"),
            ],
            &[(
                FindingKind::ContainerCrashLooping,
                Severity::Info,
                "6 or more exits in a row",
            )],
        ),
        case(
            "a static pod at a control plane's boot (back-off 20 s, 2 exits): an info",
            &[scheduler("22:26:55.681326", "20s")],
            &[(
                FindingKind::ContainerCrashLooping,
                Severity::Info,
                "2 exits in a row",
            )],
        ),
        case(
            "a static pod whose loop ended: the log goes on 15 min without it, an info",
            &[
                scheduler("22:26:55.681326", "2m40s"),
                other("22:41:55.000000"),
            ],
            &[(
                FindingKind::ContainerCrashLooping,
                Severity::Info,
                "kube-system/kube-scheduler-cp-1",
            )],
        ),
    ]);
}

// === NodeResourcePressure ===

#[test]
fn node_resource_pressure() {
    let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Legacy klog (1.7-1.20): a disk threshold met, the GC not enough, only static pods
    // (their UIDs config hashes) ranked: the manager will evict none of them.
    let legacy_static = lines(&[
        "W0305 11:02:40.118221    2218 eviction_manager.go:344] eviction manager: attempting to reclaim ephemeral-storage",
        "I0305 11:02:40.118260    2218 container_gc.go:85] attempting to delete unused containers",
        "I0305 11:02:40.131502    2218 image_gc_manager.go:317] attempting to delete unused images",
        "I0305 11:02:40.152711    2218 eviction_manager.go:355] eviction manager: must evict pod(s) to reclaim ephemeral-storage",
        "I0305 11:02:40.152790    2218 eviction_manager.go:373] eviction manager: pods ranked for eviction: etcd-cp1_kube-system(0a1f3b9c5d7e9f1a2b3c4d5e6f708192), kube-apiserver-cp1_kube-system(9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b)",
    ]);
    // Structured klog (1.21+): memory, the GC not enough, one pod evicted.
    let structured_evicting = lines(&[
        r#"I0912 08:14:03.500112    1044 eviction_manager.go:349] "Eviction manager: attempting to reclaim" resourceName="memory""#,
        r#"I0912 08:14:03.500140    1044 eviction_manager.go:360] "Eviction manager: must evict pod(s) to reclaim" resourceName="memory""#,
        r#"I0912 08:14:03.500301    1044 eviction_manager.go:378] "Eviction manager: pods ranked for eviction" pods=["shop/cart-7d9f8c6b5-x2k4p","kube-system/coredns-5d78c9869d-4mzrt"]"#,
        r#"I0912 08:14:05.672418    1044 eviction_manager.go:592] "Eviction manager: pod is evicted successfully" pod="shop/cart-7d9f8c6b5-x2k4p""#,
    ]);
    // k3s's words (a public report): the pods left critical, the last word that it cannot.
    let blocked = lines(&[
        r#"W0617 16:18:42.101522 3814777 eviction_manager.go:366] "Eviction manager: attempting to reclaim" resourceName="ephemeral-storage""#,
        r#"I0617 16:18:42.101562 3814777 eviction_manager.go:377] "Eviction manager: must evict pod(s) to reclaim" resourceName="ephemeral-storage""#,
        r#"I0617 16:18:42.102331 3814777 eviction_manager.go:395] "Eviction manager: pods ranked for eviction" pods=["flux-system/kustomize-controller-6b7bfd984d-r8m6z","kube-system/svclb-traefik-e7142bfa-qrqjb"]"#,
        r#"E0617 16:18:42.213132 3814777 eviction_manager.go:616] "Eviction manager: cannot evict a critical pod" pod="flux-system/kustomize-controller-6b7bfd984d-r8m6z""#,
        r#"E0617 16:18:42.213160 3814777 eviction_manager.go:616] "Eviction manager: cannot evict a critical pod" pod="kube-system/svclb-traefik-e7142bfa-qrqjb""#,
        r#"I0617 16:18:42.213170 3814777 eviction_manager.go:420] "Eviction manager: unable to evict any pods from the node""#,
    ]);
    // The first pod ranked critical, the log cut there: the manager goes on to the next one.
    let first_critical = blocked[..4].to_vec();
    let mut critical_then_evicted = blocked[..4].to_vec();
    critical_then_evicted.push(
        r#"I0617 16:18:44.902210 3814777 eviction_manager.go:592] "Eviction manager: pod is evicted successfully" pod="kube-system/svclb-traefik-e7142bfa-qrqjb""#.to_string(),
    );
    let reclaimed = lines(&[
        "W0305 11:02:40.118221    2218 eviction_manager.go:344] eviction manager: attempting to reclaim imagefs",
        "I0305 11:02:41.004518    2218 eviction_manager.go:350] eviction manager: able to reduce imagefs pressure without evicting pods.",
    ]);
    let mut over = structured_evicting.clone();
    over.push(
        r#"I0912 08:20:11.004100    1044 kubelet.go:2063] "SyncLoop UPDATE" source="api" pods=["shop/cart-7d9f8c6b5-zz9qv"]"#.to_string(),
    );
    // Admission refused while the node has DiskPressure (`Admit`), legacy and structured.
    let admission = lines(&[
        "W0221 07:12:09.118433    1907 eviction_manager.go:160] Failed to admit pod fluentd-8x2kq_logging(5b1c9e2a-3f4d-4e5a-9b6c-7d8e9f0a1b2c) - node has conditions: [DiskPressure]",
        r#"I0221 07:12:15.110852    1907 eviction_manager.go:167] "Failed to admit pod to node" pod="monitoring/prometheus-k8s-0" nodeCondition=[DiskPressure]"#,
    ]);
    // The image GC over its high threshold, deleting unused images freeing nothing.
    let image_gc = lines(&[
        r#"I0607 16:27:03.708243    7302 image_gc_manager.go:310] "Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold" usage=91 highThreshold=85 amountToFree=5368709120 lowThreshold=80"#,
        r#"E0607 16:27:03.710093    7302 kubelet.go:1347] "Image garbage collection failed multiple times in a row" err="failed to garbage collect required amount of images. Wanted to free 5368709120 bytes, but freed 0 bytes""#,
    ]);
    // The GC failing for another reason at a start: not the disk's.
    let gc_at_start = lines(&[
        r#"E0607 16:22:03.710093    7302 kubelet.go:1343] "Image garbage collection failed once. Stats initialization may not have completed yet" err="failed to get imageFs info: unable to find data in memory cache""#,
    ]);
    check(vec![
        case(
            "legacy: only static pods ranked, none evicted: critical",
            &legacy_static,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Critical,
                "every pod it ranks is a static pod",
            )],
        ),
        case(
            "structured: memory, a pod evicted: a warning naming it",
            &structured_evicting,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Warning,
                "the node is under MemoryPressure where the log ends: the eviction manager reclaims memory by evicting pods, evicted 1 pod: shop/cart-7d9f8c6b5-x2k4p",
            )],
        ),
        case(
            "the last word that it cannot evict: critical",
            &blocked,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Critical,
                "the kubelet cannot relieve the node's DiskPressure where the log ends",
            )],
        ),
        case(
            "each pod ranked said critical, no more said: critical",
            &blocked[..5],
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Critical,
                "can evict none of its pods",
            )],
        ),
        case(
            "one critical pod of two ranked, the log cut there: a warning",
            &first_critical,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Warning,
                "the eviction manager reclaims ephemeral-storage",
            )],
        ),
        case(
            "a critical pod skipped, the next one evicted: a warning",
            &critical_then_evicted,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Warning,
                "evicted 1 pod: kube-system/svclb-traefik-e7142bfa-qrqjb",
            )],
        ),
        case(
            "the GC freed enough: info",
            &reclaimed,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Info,
                "the node reaches its DiskPressure threshold where the log ends: the eviction manager meets its imagefs threshold",
            )],
        ),
        case(
            "pods refused at admission under DiskPressure: a warning naming them",
            &admission,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Warning,
                "it refuses pods at admission (2 refusals; a refused pod is Failed with reason Evicted, and a DaemonSet makes its pod again): logging/fluentd-8x2kq, monitoring/prometheus-k8s-0",
            )],
        ),
        case(
            "the image GC frees nothing: a warning with the figures",
            &image_gc,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Warning,
                "the node is under disk pressure on its image filesystem where the log ends: the image GC cannot bring the image filesystem down (at 91%, over its high threshold of 85%): it wanted to free 5.0 GiB, freed 0 B",
            )],
        ),
        case(
            "not a finding: the image GC failing for want of stats at a start",
            &gc_at_start,
            &[],
        ),
        case(
            "not a finding: the next GC run went through (V(1) after a failure)",
            &[
                image_gc.clone(),
                lines(&[
                    r#"I0607 16:32:04.001200    7302 kubelet.go:1355] "Image garbage collection succeeded""#,
                ]),
            ]
            .concat(),
            &[],
        ),
        case(
            "not a finding: the next run's start and no failure after it",
            &[
                image_gc.clone(),
                lines(&[
                    r#"I0607 16:32:03.708243    7302 image_gc_manager.go:310] "Disk usage on image filesystem is over the high threshold, trying to free bytes down to the low threshold" usage=86 highThreshold=85 amountToFree=1073741824 lowThreshold=80"#,
                    r#"I0607 16:33:30.000000    7302 kubelet.go:2063] "SyncLoop UPDATE" source="api" pods=["shop/web-0"]"#,
                ]),
            ]
            .concat(),
            &[],
        ),
        case(
            "not a finding: the space freed, one image in use (`with errors in image deletion`)",
            &lines(&[
                r#"E0607 16:27:03.710093    7302 kubelet.go:1343] "Image garbage collection failed once. Stats initialization may not have completed yet" err="wanted to free 1073741824 bytes, but freed 1288490188 bytes space with errors in image deletion: rpc error: code = Unknown desc = image is in use by a container""#,
            ]),
            &[],
        ),
        case(
            "1.26+'s words: `Attempted to free … but only found 0 bytes eligible to free`",
            &lines(&[
                r#"E0607 16:27:03.710093    7302 kubelet.go:1551] "Image garbage collection failed multiple times in a row" err="Failed to garbage collect required amount of images. Attempted to free 21474836480 bytes, but only found 0 bytes eligible to free.""#,
            ]),
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Warning,
                "it wanted to free 20.0 GiB, freed 0 B",
            )],
        ),
        case(
            "a figure the pager cut is said cut, not read",
            &lines(&[
                r#"E0607 16:27:03.710093    7302 kubelet.go:1347] "Image garbage collection failed multiple times in a row" err="failed to garbage collect required amount of images. Wanted to free 21474836480 bytes, but freed 21474>"#,
            ]),
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Warning,
                "it wanted to free 20.0 GiB, freed … (the line is cut)",
            )],
        ),
        case(
            "no pod active to evict, then the GC freed enough: relieved, an info",
            &lines(&[
                r#"E0617 16:18:32.101522 3814777 eviction_manager.go:384] "Eviction manager: eviction thresholds have been met, but no pods are active to evict""#,
                r#"I0617 16:18:42.101522 3814777 eviction_manager.go:366] "Eviction manager: attempting to reclaim" resourceName="ephemeral-storage""#,
                r#"I0617 16:18:43.101522 3814777 eviction_manager.go:374] "Eviction manager: able to reduce resource pressure without evicting pods." resourceName="ephemeral-storage""#,
            ]),
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Info,
                "each time the image and container GC frees enough without evicting pods",
            )],
        ),
        case(
            "a pod evicted for its own ephemeral-storage limit (no threshold met): an info, the pod's",
            &lines(&[
                r#"I0617 16:18:42.101522 3814777 eviction_manager.go:616] "Eviction manager: pod is evicted successfully" pod="batch/report-gen-28511340-x7k2q""#,
            ]),
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Info,
                "evicts pods for their own limits",
            )],
        ),
        case(
            "memory: no GC said; a kill that failed said so",
            &lines(&[
                r#"I0912 08:14:03.500112    1044 eviction_manager.go:349] "Eviction manager: attempting to reclaim" resourceName="memory""#,
                r#"I0912 08:14:03.500140    1044 eviction_manager.go:360] "Eviction manager: must evict pod(s) to reclaim" resourceName="memory""#,
                r#"E0912 08:14:35.672418    1044 eviction_manager.go:598] "Eviction manager: pod failed to evict" err="timeout waiting to kill pod" pod="default/stuck-0""#,
            ]),
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Warning,
                "the eviction manager reclaims memory by evicting pods, could not kill 1 pod it evicts (`pod failed to evict`: what it uses is not freed): default/stuck-0",
            )],
        ),
        case(
            "the kubelet's log goes on six minutes without it: the pressure is over, info",
            &over,
            &[(
                FindingKind::NodeResourcePressure,
                Severity::Info,
                "the node was under MemoryPressure, and the kubelet's log goes on without it",
            )],
        ),
    ]);
}

// === ContainerStartFailing ===

#[test]
fn container_start_failing() {
    // The pod worker's sync error, structured (1.2x): the error escaped once more inside `err`.
    let failed = |t: &str, pod: &str, uid: &str, c: &str, reason: &str, err: &str| {
        format!(
            r#"E0705 {t}    1234 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"{c}\" with {reason}: \"{err}\"" pod="{pod}" podUID="{uid}""#
        )
    };
    let cgroup = r#"failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error setting cgroup config for procHooks process: failed to write \\\"max\\\": write /sys/fs/cgroup/kubepods/pod1/pids.max: no such device: unknown"#;
    let no_exec = r#"failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: exec: \\\"/app/start.sh\\\": stat /app/start.sh: no such file or directory: unknown"#;
    let started = |t: &str, uid: &str| {
        format!(
            r#"I0705 {t}    1234 kubelet.go:2453] "SyncLoop (PLEG): event for pod" pod="shop/web-0" event={{"ID":"{uid}","Type":"ContainerStarted","Data":"{C1}"}}"#
        )
    };
    let legacy = format!(
        r#"E1029 13:16:48.471488    4919 pod_workers.go:182] Error syncing pod {UID1} ("alpine-368057524-bgt0m_default({UID1})"), skipping: failed to "StartContainer" for "alpine" with RunContainerError: "failed to start container \"{C1}\": Error response from daemon: oci runtime error: container_linux.go:247: starting container process caused \"process_linux.go:245: running exec setns process for init caused \\\"exit status 6\\\"\"""#
    );
    let cgroup_failed = |t: &str| failed(t, "shop/web-0", UID1, "app", "RunContainerError", cgroup);
    let twice = vec![
        cgroup_failed("10:00:00.000000"),
        cgroup_failed("10:00:12.000000"),
    ];
    // containerd's and dockerd's own word, a runtime log given alone.
    let containerd_start = |t: &str, id: &str| {
        format!(
            r#"time="2024-07-05T10:00:{t}.000000000Z" level=error msg="StartContainer for \"{id}\" failed" error="failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error setting cgroup config for procHooks process: no such device: unknown""#
        )
    };
    let dockerd_start = |id: &str, err: &str| {
        format!(
            r#"Jul 13 22:21:12 localhost dockerd[1610]: time="2016-07-13T22:21:12.069542247Z" level=error msg="Handler for POST /containers/{id}/start returned error: {err}""#
        )
    };
    check(vec![
        runtime_case(
            "containerd's StartContainer failing for two containers, a cause of the node's: an info (the runtime's log alone cannot tell the next attempts started)",
            vec![containerd_start("00", C1), containerd_start("12", C2)],
            &[(
                FindingKind::ContainerStartFailing,
                Severity::Info,
                "error setting cgroup config",
            )],
        ),
        runtime_case(
            "not a finding: dockerd's failed start of an exec (a probe's command), not a container",
            vec![format!(
                r#"Jul 13 22:21:12 localhost dockerd[1610]: time="2016-07-13T22:21:12.069542247Z" level=error msg="Handler for POST /v1.40/exec/{C1}/start returned error: container {C2} is not running""#
            )],
            &[],
        ),
        runtime_case(
            "dockerd's start of a container whose command is not in the image: the workload's, an info",
            vec![dockerd_start(
                C1,
                "Container command '/hyperkube' not found or does not exist.",
            )],
            &[(
                FindingKind::ContainerStartFailing,
                Severity::Info,
                "the cause is the pod's own",
            )],
        ),
        runtime_case(
            "not a finding: dockerd's 5xx answers of other calls (No such container on GET)",
            vec![format!(
                r#"Jul 13 22:21:12 localhost dockerd[1610]: time="2016-07-13T22:21:12.069542247Z" level=error msg="Handler for GET /containers/{C1}/json returned error: No such container: {C1}""#
            )],
            &[],
        ),
        Case {
            runtime: vec![containerd_start("00", C1), containerd_start("12", C2)],
            ..case(
                "the pod worker's word beside the runtime's: the pod worker's alone (one finding, the pod named)",
                &twice,
                &[(
                    FindingKind::ContainerStartFailing,
                    Severity::Warning,
                    "shop/web-0",
                )],
            )
        },
        case(
            "the node's cgroups, twice: a warning naming the pod and the error",
            &twice,
            &[(
                FindingKind::ContainerStartFailing,
                Severity::Warning,
                "the runtime fails to start containers for a cause of the node's (failed to create containerd task",
            )],
        ),
        case(
            "the node's cause once: an info",
            &twice[..1],
            &[(
                FindingKind::ContainerStartFailing,
                Severity::Info,
                "once, which the next sync may mend",
            )],
        ),
        case(
            "started after: mended, no finding",
            &[twice.clone(), vec![started("10:00:30.000000", UID1)]].concat(),
            &[],
        ),
        case(
            "a Secret not found and an executable not in the image: the pods' own, one info",
            &[
                failed(
                    "10:00:00.000000",
                    "shop/web-0",
                    UID1,
                    "app",
                    "CreateContainerConfigError",
                    r#"secret \\\"db-pass\\\" not found"#,
                ),
                failed(
                    "10:00:05.000000",
                    "shop/api-0",
                    UID2,
                    "api",
                    "RunContainerError",
                    no_exec,
                ),
            ],
            &[(
                FindingKind::ContainerStartFailing,
                Severity::Info,
                "2 pods' containers cannot be created or started: shop/web-0 (app, CreateContainerConfigError: secret \"db-pass\" not found)",
            )],
        ),
        case(
            "legacy klog, a docker oci error naming no cause: an info",
            &[legacy],
            &[(
                FindingKind::ContainerStartFailing,
                Severity::Info,
                "default/alpine-368057524-bgt0m (alpine, RunContainerError",
            )],
        ),
        case(
            "a create that timed out is RuntimeUnhealthy's, not this",
            &[failed(
                "10:00:00.000000",
                "shop/web-0",
                UID1,
                "app",
                "CreateContainerError",
                "context deadline exceeded",
            )],
            &[],
        ),
    ]);
}

/// Thousands of pods failing alike make one finding whose summary stays one line: five
/// distinct pods named (a pod of one name under several UIDs once), then how many more.
#[test]
fn a_summary_of_many_pods_lists_five_distinct_and_a_count() {
    let add = |k: usize, name: &str| {
        format!(
            r#"time="2024-05-11T16:09:{:02}.839669754Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{{Name:{name},Uid:7d0c1b2a-0000-4000-8000-{k:012},Namespace:shop,Attempt:0,}} failed, error" error="failed to setup network for sandbox \"{:064x}\": plugin type=\"calico\" failed (add): netplugin failed with no error message: signal: killed""#,
            k % 60,
            k + 1
        )
    };
    let mut lines: Vec<String> = (0..4).map(|k| add(k, "cart-0")).collect();
    lines.extend((4..40).map(|k| add(k, &format!("cart-{k}"))));
    let events = read(LogKind::Runtime, "containerd.log", &lines);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    let f = found
        .iter()
        .find(|f| f.kind == FindingKind::SandboxCreateFailing)
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert!(
        f.summary.contains(
            "(shop/cart-0, shop/cart-4, shop/cart-5, shop/cart-6, shop/cart-7 and 32 more)"
        ),
        "{}",
        f.summary
    );
}

#[test]
fn listed_names_five_distinct_then_a_count() {
    use crate::rules::logs::listed;
    assert_eq!(listed(["a", "b", "a"]), "a, b");
    assert_eq!(listed(Vec::<String>::new()), "");
    assert_eq!(
        listed(["a", "b", "c", "d", "e", "a", "f", "g", "g"]),
        "a, b, c, d, e and 2 more"
    );
}

/// A mirror pod deleted as outdated thousands of times names its first mirror UIDs and the
/// last, with how many in all, not every one.
#[test]
fn a_long_mirror_pod_loop_names_its_first_and_last_uids() {
    let lines: Vec<String> = (0..9)
        .map(|k| {
            format!(
                r#"Apr 16 05:16:{:02} node-a kubelet[1847]: W0416 05:16:{:02}.196969    1847 kubelet.go:1602] Deleting mirror pod "etcd-node-a_kube-system(d4746eba-4156-11e8-84f4-00505690000{k})" because it is outdated"#,
                10 + k,
                10 + k
            )
        })
        .collect();
    let events = read(LogKind::Kubelet, "kubelet.log", &lines);
    let found = diagnose_logs(&events, &NodeView::empty(), &cfg(), now());
    let f = found
        .iter()
        .find(|f| f.kind == FindingKind::MirrorPodRecreateLoop)
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert!(
        f.summary.contains(
            "(mirror UIDs d4746eba-4156-11e8-84f4-005056900000 → \
             d4746eba-4156-11e8-84f4-005056900001 → d4746eba-4156-11e8-84f4-005056900002 → \
             d4746eba-4156-11e8-84f4-005056900003 → … → d4746eba-4156-11e8-84f4-005056900008, \
             9 in all)"
        ),
        "{}",
        f.summary
    );
}

/// killPodWithSyncResult's `Failed to stop sandbox {"docker" "<id>…` with its ID cut by a pager
/// is still the sandbox's stop, not the containers' (cvimmon, kubelet 1.19).
#[test]
fn a_sandbox_stop_cut_before_its_id_is_the_sandboxs() {
    check(vec![case(
        "the sandbox's stop, its ID cut",
        &[r#"Jul 21 15:58:18 p3-tkymn-p1mon03 kubelet[1883788]: E0721 15:58:18.413949 1883788 kuberuntime_manager.go:898] Failed to stop sandbox {"docker" "40d5b3b1f046251f4243c609c22836e5cb012fe7>"#.to_string()],
        &[(
            FindingKind::StuckTerminatingPod,
            Severity::Warning,
            "stopping its sandbox fails",
        )],
    )]);
}
