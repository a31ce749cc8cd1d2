//! `SandboxCreateFailing` on the real kubelet v1.34.4 and containerd lines of
//! `testdata/` (crates/cli/tests/real_startup.rs, the CNI plugin's binary missing when two pods
//! were created: one ADD each, then the teardown loop of the failed sandboxes).

use std::time::Duration;

use jiff::Timestamp;

use crate::event::{LogKind, LoggedEvent, read_text};
use crate::finding::{Finding, FindingKind, Severity};
use crate::model::NodeView;
use crate::rules::Config;
use crate::rules::logs::diagnose_logs;
use crate::rules::sandbox_create::name_in_use_by;

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
            f.evidence.iter().any(|e| e.detail().contains(
                "kuberuntime_manager.go SyncPod kills the failed sandbox before it creates another"
            ) && e.detail().contains(&format!("sandbox {sb} "))),
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
    // up): one attempt, only an info (the next sync may well mend it).
    let found = diagnose_without(&[
        "StopPodSandbox",
        "stop sandbox",
        "KillPodSandbox",
        "killPodWithSyncResult",
        "destroy network",
        "cleaning up failed sandbox",
    ]);
    let creates: Vec<&Finding> = found
        .iter()
        .filter(|f| f.kind == FindingKind::SandboxCreateFailing)
        .collect();
    assert!(
        !creates.is_empty()
            && creates.iter().all(|f| f.severity == Severity::Info
                && f.summary
                    .starts_with("a pod sandbox creation failed once: ")),
        "{found:#?}"
    );
}

/// The `SandboxCreateFailing` findings of `kubelet` alone, as (severity, summary).
fn create_findings(kubelet: &str) -> Vec<(Severity, String)> {
    diagnose_logs(&events(kubelet, ""), &NodeView::empty(), &cfg(), now())
        .into_iter()
        .filter(|f| f.kind == FindingKind::SandboxCreateFailing)
        .map(|f| (f.severity, f.summary))
        .collect()
}

/// projectcalico/calico#4308: a k3s kubelet's pod worker, the CNI's loopback plugin missing.
fn error_syncing(t: &str) -> String {
    format!(
        "E0113 {t}    5472 pod_workers.go:191] Error syncing pod ed2a4a84-b961-4d97-b67c-6dd8c645699e (\"coredns-8655855d6-q6mtc_kube-system(ed2a4a84-b961-4d97-b67c-6dd8c645699e)\"), skipping: failed to \"CreatePodSandbox\" for \"coredns-8655855d6-q6mtc_kube-system(ed2a4a84-b961-4d97-b67c-6dd8c645699e)\" with CreatePodSandboxError: \"CreatePodSandbox for pod \\\"coredns-8655855d6-q6mtc_kube-system(ed2a4a84-b961-4d97-b67c-6dd8c645699e)\\\" failed: rpc error: code = Unknown desc = failed to setup network for sandbox \\\"ab430187\\\": failed to find plugin \\\"loopback\\\" in path [/opt/cni/bin]\"\n"
    )
}

fn run_sandbox_failed(t: &str, id: &str) -> String {
    format!(
        "E0113 {t}    5472 remote_runtime.go:105] RunPodSandbox from runtime service failed: rpc error: code = Unknown desc = failed to setup network for sandbox \"{id}\": failed to find plugin \"loopback\" in path [/opt/cni/bin]\n"
    )
}

#[test]
fn the_pod_workers_error_alone_shows_a_failing_creation() {
    let found = create_findings(
        &[
            error_syncing("07:22:27.178801"),
            error_syncing("07:22:47.100000"),
        ]
        .concat(),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    // The plugin's binary is missing: no pod of this node can get a network.
    assert_eq!(found[0].0, Severity::Critical, "{found:#?}");
    assert!(
        found[0].1.contains("plugin loopback")
            && found[0].1.contains("kube-system/coredns-8655855d6-q6mtc"),
        "{found:#?}"
    );

    // Once: the next sync may mend it, an info.
    let once = create_findings(&error_syncing("07:22:27.178801"));
    assert_eq!(
        once,
        vec![(
            Severity::Info,
            "a pod sandbox creation failed once: the CNI ADD fails (plugin loopback): the plugin's \
             binary is not in the CNI bin path (kube-system/coredns-8655855d6-q6mtc); the kubelet \
             retries at the pod's next sync, and a second failure makes this a warning"
                .to_string()
        )]
    );

    // The structured form.
    let structured = |t: &str| {
        format!(
            "E0113 {t}    5472 pod_workers.go:1298] \"Error syncing pod, skipping\" err=\"failed to \\\"CreatePodSandbox\\\" for \\\"web-0_shop(11111111-2222-4333-8444-555555555555)\\\" with CreatePodSandboxError: \\\"Failed to create sandbox for pod \\\\\\\"web-0_shop(11111111-2222-4333-8444-555555555555)\\\\\\\": rpc error: code = Unknown desc = failed to setup network for sandbox \\\\\\\"abc\\\\\\\": plugin type=\\\\\\\"calico\\\\\\\" failed (add): connection refused\\\"\" pod=\"shop/web-0\" podUID=\"11111111-2222-4333-8444-555555555555\"\n"
        )
    };
    let found =
        create_findings(&[structured("07:22:27.178801"), structured("07:22:47.100000")].concat());
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Severity::Warning, "{found:#?}");
    assert!(found[0].1.contains("shop/web-0"), "{found:#?}");
}

#[test]
fn failures_that_name_no_pod_are_reported_once() {
    // Two sandboxes 20 s apart, no pod named: attempts of a pod the excerpt does not name.
    let found = create_findings(
        &[
            run_sandbox_failed(
                "07:22:31.176612",
                "ac8bad2e3aa02fea9eb4869def4f6d26b9ec61f79400643314eaa76b25b38ba1",
            ),
            run_sandbox_failed(
                "07:22:51.176612",
                "ab43018700000000000000000000000000000000000000000000000000000000",
            ),
        ]
        .concat(),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].1.contains("a pod the records do not name"),
        "{found:#?}"
    );

    // Beside the pod worker's errors of the same attempts, they are those attempts: one pod.
    let found = create_findings(
        &[
            error_syncing("07:22:27.178801"),
            run_sandbox_failed("07:22:27.170000", "ab430187"),
            error_syncing("07:22:47.100000"),
            run_sandbox_failed("07:22:47.090000", "ac8bad2e"),
        ]
        .concat(),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(!found[0].1.contains("do not name"), "{found:#?}");
}

#[test]
fn a_reserved_sandbox_name_is_reported_after_one_attempt_even_with_its_holder_cut() {
    // containerd/containerd#12438, cut by the terminal at `name>`.
    let line = "E0204 10:15:02.123456   12345 kuberuntime_manager.go:1172] \"CreatePodSandbox for pod failed\" err=\"rpc error: code = Unknown desc = failed to reserve sandbox name \\\"metricbeat-collector-2qr2j_monitoring-tenant_5dfb5e21-0000-4000-8000-000000000001_0\\\": name>\" pod=\"monitoring-tenant/metricbeat-collector-2qr2j\" podUID=\"5dfb5e21-0000-4000-8000-000000000001\"\n";
    let found = create_findings(line);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Severity::Warning);
    assert!(
        found[0]
            .1
            .contains("sandbox name is held by sandbox (not named)"),
        "{found:#?}"
    );
}

#[test]
fn a_cut_failed_sandbox_id_finds_every_teardown_it_begins() {
    use std::collections::BTreeMap;
    let teardowns: BTreeMap<&str, Vec<usize>> = [
        ("fdd0244e…", vec![0]),
        ("fdd0244e492f7aa", vec![3, 1]),
        ("fdd0245", vec![2]),
    ]
    .into_iter()
    .collect();
    let ids = |prefix: &str| -> Vec<usize> { super::with_prefix(&teardowns, prefix).collect() };
    // In ID order: `…` sorts after the hex digits.
    assert_eq!(ids("fdd0244e"), vec![3, 1, 0]);
    assert_eq!(ids("fdd0244e492f7aa"), vec![3, 1]);
    assert_eq!(ids("fdd0246"), Vec::<usize>::new());
    // Through a record: the ID the failed ADD names, cut, and each teardown once, in order.
    let cut = read_text(
        LogKind::Runtime,
        "containerd.log",
        2026,
        "time=\"2026-12-01T20:40:00Z\" level=error msg=\"RunPodSandbox for &PodSandboxMetadata{Name:a,Uid:u,Namespace:n,Attempt:0,} failed, error\" error=\"failed to setup network for sandbox \\\"fdd0244e…\\\": plugin type=\\\"x\\\" failed (add): boom\"\n",
    );
    let group: Vec<&LoggedEvent> = cut.iter().collect();
    assert_eq!(group.len(), 1, "{cut:#?}");
    assert_eq!(super::stuck_teardowns(&group, &teardowns), vec![0, 1, 3]);
}

/// CRI-O's own CNI lines (ocicni, crc-org/snc#203): an ADD failure naming no pod or sandbox,
/// then the runtime's DEL of that sandbox failing within milliseconds. The DEL is the failed
/// ADD's cleanup: one SandboxCreateFailing saying both, no SandboxStopFailing of a sandbox "?".
/// The same DEL alone, or seconds after the ADD, is a teardown failure of its own.
#[test]
fn crio_cleanup_of_a_failed_add_is_the_adds() {
    let line = |t: &str, msg: &str| {
        format!(
            "Jan 25 16:45:{t} worker2 crio[1847]: time=\"2026-01-25 16:45:{t}Z\" level=error msg=\"{msg}\"\n"
        )
    };
    let add = |t: &str| {
        line(
            t,
            "Error adding network: netplugin failed with no error message: signal: killed",
        ) + &line(
            t,
            "Error while adding pod to CNI network \\\"multus-cni-network\\\": netplugin failed with no error message: signal: killed",
        )
    };
    let del = |t: &str| {
        line(
            t,
            "Error deleting network: netplugin failed with no error message: context deadline exceeded",
        ) + &line(
            t,
            "Error while removing pod from CNI network \\\"multus-cni-network\\\": netplugin failed with no error message: context deadline exceeded",
        )
    };
    let diagnose = |crio: &str| -> Vec<(FindingKind, Severity, String)> {
        let e = read_text(LogKind::Runtime, "crio.log", 2026, crio);
        diagnose_logs(&e, &NodeView::empty(), &cfg(), now())
            .into_iter()
            .map(|f| (f.kind, f.severity, f.summary))
            .collect()
    };
    let found = diagnose(&(add("10.209171") + &del("10.211266")));
    assert_eq!(
        found,
        vec![(
            FindingKind::SandboxCreateFailing,
            Severity::Warning,
            "pod sandboxes cannot be created: the CNI ADD fails: the plugin failed with no error \
             message (crashed or killed?); 1 pod waits in ContainerCreating (a pod the records do \
             not name); the runtime's teardown of the failed sandbox's network failed too (2 log \
             records), so the plugin's state of it may be left"
                .to_string()
        )]
    );
    // The ADD alone: once, an info.
    let found = diagnose(&add("10.209171"));
    assert_eq!(
        found.iter().map(|f| (f.0, f.1)).collect::<Vec<_>>(),
        vec![(FindingKind::SandboxCreateFailing, Severity::Info)],
        "{found:#?}"
    );
    // A DEL 20 s after the ADD is no cleanup of it: a teardown failure of its own, of a sandbox
    // the log does not name.
    let found = diagnose(&(add("10.209171") + &del("30.211266")));
    assert_eq!(
        found.iter().map(|f| (f.0, f.1)).collect::<Vec<_>>(),
        vec![
            (FindingKind::SandboxStopFailing, Severity::Warning),
            (FindingKind::SandboxCreateFailing, Severity::Info),
        ],
        "{found:#?}"
    );
    assert!(
        found[0]
            .2
            .starts_with("stopping a pod sandbox the log does not name fails: CNI teardown"),
        "{found:#?}"
    );
}

/// A RuntimeClass handler the runtime does not define fails every sandbox of it: once is
/// enough, in containerd's words and CRI-O's.
#[test]
fn a_missing_runtime_handler_is_no_transient() {
    let containerd = create_findings(
        "E1024 17:27:17.527779    2176 kuberuntime_sandbox.go:68] CreatePodSandbox for pod \"nginx-untrusted_default(08391835-b41d-4564-9a46-6cc4f8294759)\" failed: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for \"untrusted\" is configured\n",
    );
    assert_eq!(containerd.len(), 1, "{containerd:#?}");
    assert_eq!(containerd[0].0, Severity::Warning);
    assert!(
        containerd[0].1.starts_with(
            "pod sandboxes cannot be created: the runtime has no handler \"untrusted\" for the pod's RuntimeClass"
        ),
        "{containerd:#?}"
    );
    let crio = create_findings(
        "E0601 10:00:00.000000    2176 kuberuntime_sandbox.go:72] \"Failed to create sandbox for pod\" err=\"rpc error: code = Unknown desc = failed to find runtime handler kata from runtime list map[runc:0xc000]\" pod=\"shop/web-0\"\n",
    );
    assert_eq!(crio.len(), 1, "{crio:#?}");
    assert!(crio[0].1.contains("no handler \"kata\""), "{crio:#?}");
}

/// A CNI network config that does not parse fails every ADD the same way: once is enough
/// (calico#1347: the portmap plugin's `snat` given as a string, in the kubelet's dockershim
/// `cni.go` words, then the pod worker's).
#[test]
fn a_cni_config_that_does_not_parse_is_no_transient() {
    let err = "failed to parse config: failed to parse network configuration: json: cannot unmarshal string into Go struct field PortMapConf.snat of type bool";
    let found = create_findings(&format!(
        "E1111 23:48:54.312673    1491 cni.go:301] Error adding network: {err}\n\
         E1111 23:48:54.312716    1491 cni.go:250] Error while adding to cni network: {err}\n\
         E1111 23:48:54.400000    1491 pod_workers.go:186] Error syncing pod 11111111-2222-3333-4444-555555555555 (\"web-0_shop(11111111-2222-3333-4444-555555555555)\"), skipping: failed to \"CreatePodSandbox\" for \"web-0_shop(11111111-2222-3333-4444-555555555555)\" with CreatePodSandboxError: \"CreatePodSandbox for pod \\\"web-0_shop(11111111-2222-3333-4444-555555555555)\\\" failed: rpc error: code = Unknown desc = NetworkPlugin cni failed to set up pod \\\"web-0_shop\\\" network: {err}\"\n"
    ));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Severity::Warning, "{found:#?}");
    assert!(
        found[0]
            .1
            .contains("the plugin's network config does not parse"),
        "{found:#?}"
    );
}

/// The bridge plugin's bridge holding another address, or the kernel refusing one, fails every
/// ADD the same way: once is enough (flannel after a node re-joined with another pod CIDR, in
/// containerd's words; a kernel refusing the address, in CRI-O's).
#[test]
fn a_bridge_whose_address_cannot_be_set_is_no_transient() {
    for err in [
        r#"failed to setup network for sandbox \"5e2b0cf3b0f1e86b9d1a6e0f5dd2a41c7d8f0f4c4f04a7b9b8f5d2cf1e8a3d21\": plugin type=\"flannel\" failed (add): failed to delegate add: failed to set bridge addr: \"cni0\" already has an IP address different from 10.244.3.1/24"#,
        r#"error adding pod shop_web-0 to CNI network \"crio\": plugin type=\"bridge\" name=\"crio\" failed (add): failed to set bridge addr: could not add IP address to \"cni0\": permission denied"#,
        // CRI-O 1.2x's own words, no `(add)`.
        r#"failed to create pod network sandbox k8s_web-0_shop_4446202f-a6a4-466b-bfda-b6cfbc909d43_0(45420ce1a1e3bd8bf416b168908ce3ec61b8448a7aa4fa3dd0be64fd0a408fd6): error adding pod shop_web-0 to CNI network \"crio\": failed to set bridge addr: could not add IP address to \"cni0\": permission denied"#,
    ] {
        let found = create_findings(&format!(
            "E0601 10:00:00.000000    2176 kuberuntime_sandbox.go:72] \"Failed to create sandbox for pod\" err=\"rpc error: code = Unknown desc = {err}\" pod=\"shop/web-0\"\n"
        ));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].0, Severity::Warning, "{found:#?}");
        assert!(
            found[0]
                .1
                .contains("the bridge plugin cannot set its bridge's address"),
            "{found:#?}"
        );
    }
}

/// The bridge's failures mended: three pods fail once each, then PLEG sees each start (the
/// adversarial run: critical, "no pod got a sandbox"); one pod fails once and is deleted.
#[test]
fn bridge_failures_that_pleg_shows_mended_or_whose_pod_went_are_no_finding() {
    let err = r#"failed to setup network for sandbox \"5e2b0cf3b0f1e86b9d1a6e0f5dd2a41c7d8f0f4c4f04a7b9b8f5d2cf1e8a3d21\": plugin type=\"flannel\" failed (add): failed to delegate add: failed to set bridge addr: \"cni0\" already has an IP address different from 10.244.3.1/24"#;
    let pods = [
        (
            "kube-system/coredns-5d78c9869d-abcde",
            "11111111-2222-3333-4444-555555555555",
        ),
        (
            "default/web-7f9a1c2e05-q8wmr",
            "21111111-2222-3333-4444-555555555555",
        ),
        (
            "default/api-6b7bfd984d-r8m6z",
            "31111111-2222-3333-4444-555555555555",
        ),
    ];
    let mut log = String::new();
    for (pod, uid) in pods {
        log.push_str(&format!(
            "E0412 14:06:40.001000    1234 kuberuntime_sandbox.go:72] \"Failed to create sandbox for pod\" err=\"rpc error: code = Unknown desc = {err}\" pod=\"{pod}\" podUID=\"{uid}\"\n"
        ));
    }
    let failing = log.clone();
    for (pod, uid) in pods {
        log.push_str(&format!(
            "I0412 14:07:05.000000    1234 kubelet.go:2469] \"SyncLoop (PLEG): event for pod\" pod=\"{pod}\" event={{\"ID\":\"{uid}\",\"Type\":\"ContainerStarted\",\"Data\":\"00bb5c1f0e6a2b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e\"}}\n"
        ));
    }
    assert_eq!(create_findings(&log), vec![]);
    // Without the starts: the three still wait, and none got a sandbox since.
    let found = create_findings(&failing);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Severity::Critical, "{found:#?}");
    // One pod, then deleted and removed.
    let one: String = failing.lines().next().unwrap().to_string()
        + "\nI0412 14:06:50.000000    1234 kubelet.go:2451] \"SyncLoop DELETE\" source=\"api\" pods=[\"kube-system/coredns-5d78c9869d-abcde\"]\nI0412 14:06:51.000000    1234 kubelet.go:2445] \"SyncLoop REMOVE\" source=\"api\" pods=[\"kube-system/coredns-5d78c9869d-abcde\"]\n";
    assert_eq!(create_findings(&one), vec![]);
}

/// containerd's line cut after the pod's name (a pager) and the kubelet's naming the same pod
/// with its namespace are one pod, not two (the adversarial run: two findings, both critical).
#[test]
fn a_runtime_line_cut_before_the_namespace_joins_the_kubelets_pod() {
    let mut kubelet = String::new();
    let mut containerd = String::new();
    for t in ["14:06:40", "14:07:00", "14:07:20"] {
        kubelet.push_str(&format!(
            "E0412 {t}.100000    1234 kuberuntime_sandbox.go:72] \"Failed to create sandbox for pod\" err=\"rpc error: code = Unknown desc = failed to setup network for sandbox \\\"0101010101010101010101010101010101010101010101010101010101010101\\\": plugin type=\\\"calico\\\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/\" pod=\"kube-system/coredns-5d78c9869d-abcde\"\n"
        ));
        containerd.push_str(&format!(
            "time=\"2026-04-12T{t}.090000Z\" level=error msg=\"RunPodSandbox for &PodSandboxMetadata{{Name:coredns-5d78c9869d-abcde,>\n"
        ));
    }
    let found: Vec<(Severity, String)> = diagnose_logs(
        &events(&kubelet, &containerd),
        &NodeView::empty(),
        &cfg(),
        now(),
    )
    .into_iter()
    .filter(|f| f.kind == FindingKind::SandboxCreateFailing)
    .map(|f| (f.severity, f.summary))
    .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Severity::Warning, "{found:#?}");
    assert!(found[0].1.contains("1 pod waits"), "{found:#?}");
}

/// A pod that got its sandbox after two failed attempts, in the kubelet's log alone: the pod
/// worker names the pod twice (its error's `<name>_<ns>(<uid>)` and `pod=`), which links the
/// name to the UID, so the name-only `Created PodSandbox for pod` line mends it.
#[test]
fn a_sandbox_created_after_the_failures_mends_them() {
    let log = r#"
I1201 09:59:55.000000    4321 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["default/web-1"]
E1201 10:00:00.000000    4321 remote_runtime.go:176] "RunPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"0101010101010101010101010101010101010101010101010101010101010101\": plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/"
E1201 10:00:00.000300    4321 kuberuntime_sandbox.go:72] "Failed to create sandbox for pod" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"0101010101010101010101010101010101010101010101010101010101010101\": plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/" pod="default/web-1"
E1201 10:00:00.000500    4321 kuberuntime_manager.go:1166] "CreatePodSandbox for pod failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"0101010101010101010101010101010101010101010101010101010101010101\": plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/" pod="default/web-1"
E1201 10:00:00.000900    4321 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to \"CreatePodSandbox\" for \"web-1_default(11111111-2222-3333-4444-555555555555)\" with CreatePodSandboxError: \"Failed to create sandbox for pod \\\"web-1_default(11111111-2222-3333-4444-555555555555)\\\": rpc error: code = Unknown desc = failed to setup network for sandbox \\\"0101010101010101010101010101010101010101010101010101010101010101\\\": plugin type=\\\"calico\\\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/\"" pod="default/web-1" podUID="11111111-2222-3333-4444-555555555555"
E1201 10:00:12.000000    4321 remote_runtime.go:176] "RunPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"0202020202020202020202020202020202020202020202020202020202020202\": plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/"
E1201 10:00:12.000300    4321 kuberuntime_sandbox.go:72] "Failed to create sandbox for pod" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"0202020202020202020202020202020202020202020202020202020202020202\": plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/" pod="default/web-1"
E1201 10:00:12.000500    4321 kuberuntime_manager.go:1166] "CreatePodSandbox for pod failed" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"0202020202020202020202020202020202020202020202020202020202020202\": plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/" pod="default/web-1"
E1201 10:00:12.000900    4321 pod_workers.go:1298] "Error syncing pod, skipping" err="failed to \"CreatePodSandbox\" for \"web-1_default(11111111-2222-3333-4444-555555555555)\" with CreatePodSandboxError: \"Failed to create sandbox for pod \\\"web-1_default(11111111-2222-3333-4444-555555555555)\\\": rpc error: code = Unknown desc = failed to setup network for sandbox \\\"0202020202020202020202020202020202020202020202020202020202020202\\\": plugin type=\\\"calico\\\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/\"" pod="default/web-1" podUID="11111111-2222-3333-4444-555555555555"
I1201 10:00:30.000000    4321 kuberuntime_manager.go:1244] "Created PodSandbox for pod" podSandboxID="0303030303030303030303030303030303030303030303030303030303030303" pod="default/web-1"
"#;
    assert_eq!(create_findings(log), vec![]);
    // Without the creation, the two attempts are a warning.
    let failing: String = log
        .lines()
        .filter(|l| !l.contains("Created PodSandbox"))
        .map(|l| format!("{l}\n"))
        .collect();
    let found = create_findings(&failing);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, Severity::Warning);
}

#[test]
fn the_sandbox_holding_a_pod_sandbox_name_in_dockers_and_isulads_wording() {
    let id = "30ed179087f03d03fef197363103427e48242829f815488bb774313db02c41a4";
    // iSulad (kubernetes/kubernetes#126514)
    let isulad = format!(
        r#"Conflict. The name "k8s_POD_etcd-a_kube-system_ae0f_0" is already in use by sandbox {id}. You have to remove that sandbox to be able to reuse that name."#
    );
    assert_eq!(name_in_use_by(&isulad).as_deref(), Some(id));
    // docker under dockershim: the sandbox is its k8s_POD_ container
    let docker = format!(
        r#"Error response from daemon: Conflict. The container name \"/k8s_POD_web-0_shop_ae0f_0\" is already in use by container \"{id}\". You have to remove (or rename) that container"#
    );
    assert_eq!(name_in_use_by(&docker).as_deref(), Some(id));
    // An application container's name is no sandbox's.
    let app = format!(
        r#"Conflict. The container name \"/k8s_web_web-0_shop_ae0f_5\" is already in use by container \"{id}\""#
    );
    assert_eq!(name_in_use_by(&app), None);
}

#[test]
fn a_cgroup_driver_mismatch_is_reported_after_one_attempt() {
    // kubernetes-sigs/kubespray#8122: containerd on systemd cgroups, the kubelet on cgroupfs.
    let line = "E1024 11:07:02.248428  397647 remote_runtime.go:116] \"RunPodSandbox from runtime service failed\" err=\"rpc error: code = Unknown desc = failed to create containerd task: OCI runtime create failed: expected cgroupsPath to be of format \\\"slice:prefix:name\\\" for systemd cgroups, got \\\"/kubepods/burstable/poda668c4166c6878f474f019afbf7729d6/64727a3e9a194101ac2491a955f0bba330e466ddd7df5bbcd3b2bb67226c3770\\\" instead: unknown\"\n";
    let (severity, summary) = only_finding(line);
    assert_eq!(severity, Severity::Warning);
    assert!(
        summary.contains("the kubelet's cgroup driver is not the runtime's"),
        "{summary}"
    );
}

/// The one `SandboxCreateFailing` finding of `kubelet` alone.
fn only_finding(kubelet: &str) -> (Severity, String) {
    let mut found = create_findings(kubelet);
    assert_eq!(found.len(), 1, "{found:#?}");
    found.remove(0)
}

#[test]
fn no_cni_config_once_is_an_info_that_says_so() {
    // cri-o/cri-o#1523: CRI-O with no CNI config, a static pod's first sandbox.
    let line = "E0412 15:36:09.501733   29066 remote_runtime.go:92] RunPodSandbox from runtime service failed: rpc error: code = Unknown desc = failed to create pod network sandbox k8s_kube-controller-manager-kata_kube-system_94ed0fa540fbf10c0225d82de5e61561_0(35e354e982ccd726a45da51ac613ff9c27e90e75cb97edc04d843788aa614d82): cni config uninitialized\n";
    let (severity, summary) = only_finding(line);
    assert_eq!(severity, Severity::Info);
    assert!(summary.contains("no CNI config is loaded"), "{summary}");
}

/// canonical/microk8s#525: containerd stopped under the kubelet (1.15). Its pod worker's copy of
/// the error, legacy klog, quotes it: `… with CreatePodSandboxError: "CreatePodSandbox for pod
/// \"…\" failed: rpc error: code = Unavailable desc = transport is closing"`.
const RUNTIME_DOWN: &str = r#"E0628 02:10:04.339971    2890 kuberuntime_manager.go:688] createPodSandbox for pod "pause_default(eec3cc8d-59b1-4d7b-bc48-698ba893490d)" failed: rpc error: code = Unavailable desc = transport is closing
E0628 02:10:04.340064    2890 pod_workers.go:190] Error syncing pod eec3cc8d-59b1-4d7b-bc48-698ba893490d ("pause_default(eec3cc8d-59b1-4d7b-bc48-698ba893490d)"), skipping: failed to "CreatePodSandbox" for "pause_default(eec3cc8d-59b1-4d7b-bc48-698ba893490d)" with CreatePodSandboxError: "CreatePodSandbox for pod \"pause_default(eec3cc8d-59b1-4d7b-bc48-698ba893490d)\" failed: rpc error: code = Unavailable desc = transport is closing"
"#;

#[test]
fn a_creation_the_runtime_did_not_answer_is_the_runtimes() {
    // The runtime's socket refusing after it: RuntimeUnhealthy says it, not a creation failure.
    let refused = "E0628 02:10:05.149976    2890 remote_runtime.go:182] ListPodSandbox with filter nil from runtime service failed: rpc error: code = Unavailable desc = all SubConns are in TransientFailure, latest connection error: connection error: desc = \"transport: Error while dialing dial unix /var/snap/microk8s/common/run/containerd.sock: connect: connection refused\"\n";
    let all = diagnose_logs(
        &events(&format!("{RUNTIME_DOWN}{refused}"), ""),
        &NodeView::empty(),
        &cfg(),
        now(),
    );
    let kinds: Vec<FindingKind> = all.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FindingKind::RuntimeUnhealthy], "{all:#?}");
    // Alone, the failure is one attempt, its cause read without the pod worker's closing quote.
    let alone = diagnose_logs(&events(RUNTIME_DOWN, ""), &NodeView::empty(), &cfg(), now());
    let create = alone
        .iter()
        .find(|f| f.kind == FindingKind::SandboxCreateFailing)
        .expect("a creation failure");
    assert_eq!(create.severity, Severity::Info, "{create:#?}");
    assert!(
        create
            .summary
            .contains("the runtime does not answer RunPodSandbox (Unavailable)"),
        "{create:#?}"
    );
    let cause = create
        .evidence
        .iter()
        .map(|e| e.detail())
        .find(|d| d.starts_with("cause: "))
        .expect("a cause");
    assert_eq!(cause, "cause: transport is closing");
}
