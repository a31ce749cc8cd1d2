//! Table-driven tests of [`classify`](super::classify): one row per event kind and wording.
//!
//! Lines are real: from `testdata/cases/<n>` (case number in the comment) or quoted in
//! `kubelet-forensics.md`. Where the reference gives only a message text (marked "§n text"),
//! the klog header and IDs around it are filled in and the message is kept verbatim.

use super::*;
use crate::logs::ids::PartialId;
use crate::logs::{ParseContext, parse};

const SB_CAE5: &str = "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60";
const C_6CF7: &str = "6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0";

struct Row {
    line: &'static str,
    kind: EventKind,
    cause: Option<Cause>,
    not_found: bool,
    /// (namespace, name, uid)
    pods: &'static [(Option<&'static str>, &'static str, Option<&'static str>)],
    pod_uid: Option<&'static str>,
    sandbox: Option<&'static str>,
    container: Option<&'static str>,
    object: Option<&'static str>,
    partial: &'static [(IdKind, &'static str)],
    /// The start of the error text.
    error: Option<&'static str>,
    source: Option<ConfigSource>,
    count: Option<u32>,
}

const ROW: Row = Row {
    line: "",
    kind: EventKind::ErrorSyncingPod,
    cause: None,
    not_found: false,
    pods: &[],
    pod_uid: None,
    sandbox: None,
    container: None,
    object: None,
    partial: &[],
    error: None,
    source: None,
    count: None,
};

#[track_caller]
fn check(row: &Row) {
    let mut ctx = ParseContext::new(2022);
    let p = parse(row.line, &mut ctx);
    let l = row.line;
    let e = classify(&p).unwrap_or_else(|| panic!("no event: {l}"));
    crate::logs::parse::skims_like_parse(l, &ParseContext::new(2022)).unwrap();
    assert_eq!(e.kind, row.kind, "kind: {l}");
    assert_eq!(event_kind(&p), Some(e.kind), "event_kind: {l}");
    assert_eq!(e.cause, row.cause, "cause: {l}");
    assert_eq!(e.not_found, row.not_found, "not_found: {l}");
    let pods: Vec<(Option<&str>, &str, Option<&str>)> = e
        .ids
        .pods
        .iter()
        .map(|p| (p.namespace.as_deref(), &*p.name, p.uid.as_deref()))
        .collect();
    assert_eq!(pods, row.pods, "pods: {l}");
    assert_eq!(e.ids.pod_uid.as_deref(), row.pod_uid, "pod uid: {l}");
    assert_eq!(e.ids.sandbox_id.as_deref(), row.sandbox, "sandbox: {l}");
    assert_eq!(
        e.ids.container_id.as_deref(),
        row.container,
        "container: {l}"
    );
    assert_eq!(e.ids.object_id(), row.object, "object: {l}");
    let partial: Vec<(IdKind, &str)> = e
        .ids
        .partial()
        .iter()
        .map(|p| (p.kind, &*p.prefix))
        .collect();
    assert_eq!(partial, row.partial, "partial: {l}");
    match row.error {
        Some(want) => {
            let got = e
                .error
                .as_deref()
                .unwrap_or_else(|| panic!("no error text: {l}"));
            assert!(
                got.starts_with(want),
                "error: {got:?} should start {want:?}: {l}"
            );
        }
        None => assert_eq!(e.error, None, "error: {l}"),
    }
    assert_eq!(e.config_source, row.source, "source: {l}");
    assert_eq!(e.count(), row.count, "count: {l}");
    assert_eq!(e.time, p.time);
    assert_eq!(e.severity, p.severity);
    // detaching keeps everything
    assert_eq!(e.clone().into_owned(), e);
}

#[test]
fn sync_loop_and_pleg() {
    // case 06: structured, unquoted list
    check(&Row {
        line: r#"I0321 17:10:59.291046  475498 kubelet.go:1948] "SyncLoop DELETE" source="api" pods=[default/test-sts-a-0]"#,
        kind: EventKind::SyncLoop(SyncOp::Delete),
        pods: &[(Some("default"), "test-sts-a-0", None)],
        source: Some(ConfigSource::Api),
        ..ROW
    });
    // case 18: source file
    check(&Row {
        line: r#"Oct 19 07:20:46 node-a kubelet.service[6774]: I1019 07:20:46.701627    6774 kubelet.go:2063] "SyncLoop REMOVE" source="file" pods=[team-ns/static-nginx-10.0.0.11]"#,
        kind: EventKind::SyncLoop(SyncOp::Remove),
        pods: &[(Some("team-ns"), "static-nginx-10.0.0.11", None)],
        source: Some(ConfigSource::File),
        ..ROW
    });
    // §2: 1.29+ quoted list
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 kubelet.go:2449] "SyncLoop DELETE" source="api" pods=["default/nginx"]"#,
        kind: EventKind::SyncLoop(SyncOp::Delete),
        pods: &[(Some("default"), "nginx", None)],
        source: Some(ConfigSource::Api),
        ..ROW
    });
    // §5: kubelet JSON, KObj objects
    check(&Row {
        line: r#"{"ts":1655581336244.2942,"caller":"kubelet/kubelet.go:2102","msg":"SyncLoop REMOVE","v":2,"source":"api","pods":[{"name":"nettools","namespace":"dev"}]}"#,
        kind: EventKind::SyncLoop(SyncOp::Remove),
        pods: &[(Some("dev"), "nettools", None)],
        source: Some(ConfigSource::Api),
        ..ROW
    });
    // case 17: legacy printf with the static UID, then the mirror's API UID
    check(&Row {
        line: r#"Jul 29 20:54:44 node-a hyperkube[1526]: I0729 20:54:44.122924    1526 kubelet.go:1904] SyncLoop (REMOVE, "file"): "kube-apiserver-node-a_openshift-kube-apiserver(60d66dd8b81c2a4756d2e2f69ec1e3fc)""#,
        kind: EventKind::SyncLoop(SyncOp::Remove),
        pods: &[(
            Some("openshift-kube-apiserver"),
            "kube-apiserver-node-a",
            Some("60d66dd8b81c2a4756d2e2f69ec1e3fc"),
        )],
        pod_uid: Some("60d66dd8b81c2a4756d2e2f69ec1e3fc"),
        source: Some(ConfigSource::File),
        ..ROW
    });
    check(&Row {
        line: r#"Jul 29 20:54:44 node-a hyperkube[1526]: I0729 20:54:44.435544    1526 kubelet.go:1910] SyncLoop (DELETE, "api"): "kube-apiserver-node-a_openshift-kube-apiserver(08b81ce8-b243-11e9-a38f-fa163e8871d1)""#,
        kind: EventKind::SyncLoop(SyncOp::Delete),
        pods: &[(
            Some("openshift-kube-apiserver"),
            "kube-apiserver-node-a",
            Some("08b81ce8-b243-11e9-a38f-fa163e8871d1"),
        )],
        pod_uid: Some("08b81ce8-b243-11e9-a38f-fa163e8871d1"),
        source: Some(ConfigSource::Api),
        ..ROW
    });
    // case 06: PLEG with a Go struct event
    check(&Row {
        line: r#"I0321 17:10:59.899727  475498 kubelet.go:1970] "SyncLoop (PLEG): event for pod" pod="default/test-sts-a-0" event=&{ID:ab7e1b0b-453f-4627-a749-47e48c2265a6 Type:ContainerDied Data:6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0}"#,
        kind: EventKind::Pleg(PlegType::ContainerDied),
        pods: &[(Some("default"), "test-sts-a-0", None)],
        pod_uid: Some("ab7e1b0b-453f-4627-a749-47e48c2265a6"),
        container: Some(C_6CF7),
        ..ROW
    });
    // §2 text: newer JSON-ish event value
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 kubelet.go:2465] "SyncLoop (PLEG): event for pod" pod="default/nginx" event={"ID":"5da5e3c4-0c8b-4e0a-9a55-3f1c0a6f7d11","Type":"ContainerStarted","Data":"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0"}"#,
        kind: EventKind::Pleg(PlegType::ContainerStarted),
        pods: &[(Some("default"), "nginx", None)],
        pod_uid: Some("5da5e3c4-0c8b-4e0a-9a55-3f1c0a6f7d11"),
        container: Some(C_6CF7),
        ..ROW
    });
    // §2 text: PLEG container finished
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 generic.go:334] "Generic (PLEG): container finished" podID="5da5e3c4-0c8b-4e0a-9a55-3f1c0a6f7d11" containerID="6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0" exitCode=0"#,
        kind: EventKind::ContainerFinished,
        pod_uid: Some("5da5e3c4-0c8b-4e0a-9a55-3f1c0a6f7d11"),
        container: Some(C_6CF7),
        ..ROW
    });
}

#[test]
fn container_lifecycle_and_the_notfound_race() {
    // case 06
    check(&Row {
        line: r#"I0321 17:10:59.291224  475498 kuberuntime_container.go:661] "Killing container with a grace period override" pod="default/test-sts-a-0" podUID=ab7e1b0b-453f-4627-a749-47e48c2265a6 containerName="nginx" containerID="containerd://6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0" gracePeriod=30"#,
        kind: EventKind::KillingContainer,
        pods: &[(Some("default"), "test-sts-a-0", None)],
        pod_uid: Some("ab7e1b0b-453f-4627-a749-47e48c2265a6"),
        container: Some(C_6CF7),
        ..ROW
    });
    check(&Row {
        line: r#"I0321 17:10:59.901846  475498 scope.go:111] "RemoveContainer" containerID="6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0""#,
        kind: EventKind::RemoveContainer,
        container: Some(C_6CF7),
        ..ROW
    });
    // case 06: cut right after `desc =`; the ID stays unknown
    check(&Row {
        line: r#"E0321 17:10:59.902054  475498 remote_runtime.go:334] "ContainerStatus from runtime service failed" err="rpc error: code = NotFound desc ="#,
        kind: EventKind::ContainerStatusFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        error: Some("rpc error: code = NotFound desc ="),
        ..ROW
    });
    // case 05
    check(&Row {
        line: r#"Jan 26 22:51:56 node-a kubelet[86828]: E0126 22:51:56.450021   86828 remote_runtime.go:432] "ContainerStatus from runtime service failed" err="rpc error: code = NotFound desc = an error occurred when try to find container \"9429919f1fba524a457f4b8d913c24bfcdc550bcdacf7fe0901858d15bb966d4\": not found" containerID="9429919f1fba524a457f4b8d913c24bfcdc550bcdacf7fe0901858d15bb966d4""#,
        kind: EventKind::ContainerStatusFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some("9429919f1fba524a457f4b8d913c24bfcdc550bcdacf7fe0901858d15bb966d4"),
        error: Some("rpc error: code = NotFound"),
        ..ROW
    });
    check(&Row {
        line: r#"Jan 26 22:51:56 node-a kubelet[86828]: I0126 22:51:56.448129   86828 kuberuntime_gc.go:360] "Error getting ContainerStatus for containerID" containerID="72871aad1084fcbb0c3e6a1ec2eb29c3aff1c75b1e173426d435b9b10f49419f" err="rpc error: code = NotFound desc = an error occurred when try to find container \"72871aad1084fcbb0c3e6a1ec2eb29c3aff1c75b1e173426d435b9b10f49419f\": not found""#,
        kind: EventKind::GcContainerStatusFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some("72871aad1084fcbb0c3e6a1ec2eb29c3aff1c75b1e173426d435b9b10f49419f"),
        error: Some("rpc error: code = NotFound"),
        ..ROW
    });
    // case 05: message cut mid-way, matched as the start of the known one
    check(&Row {
        line: r#"Jan 26 22:51:56 node-a kubelet[86828]: E0126 22:51:56.452181   86828 remote_runtime.go:432] "ContainerStatus from runtime ser"#,
        kind: EventKind::ContainerStatusFailed,
        cause: Some(Cause::Other),
        ..ROW
    });
    // case 04: containerd side; the last line is cut inside the ID
    check(&Row {
        line: r#"Mar 14 14:34:57 node-a containerd[912]: time="2025-03-14T14:34:57.527007174+08:00" level=error msg="ContainerStatus for \"a168cc42e01b7c518230afa4c00675c2538d0449974e9a27b4657f53592fe3c2\" failed" error="rpc error: code = NotFound desc = an error occurred when try to find container \"a168cc42e01b7c518230afa4c00675c2538d0449974e9a27b4657f53592fe3c2\": not found""#,
        kind: EventKind::ContainerStatusFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some("a168cc42e01b7c518230afa4c00675c2538d0449974e9a27b4657f53592fe3c2"),
        error: Some("rpc error: code = NotFound"),
        ..ROW
    });
    check(&Row {
        line: r#"Mar 14 15:35:04 node-a containerd[912]: time="2025-03-14T15:35:04.341715109+08:00" level=error msg="ContainerStatus for \"4b31f1c4af5594effb2cf9"#,
        kind: EventKind::ContainerStatusFailed,
        cause: Some(Cause::Other),
        partial: &[(IdKind::Container, "4b31f1c4af5594effb2cf9")],
        ..ROW
    });
    // §2: the deletor, 1.29+ with a JSON-ish container ID
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 pod_container_deletor.go:53] "DeleteContainer returned error" containerID={"Type":"containerd","ID":"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0"} err="failed to get container status \"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0\": rpc error: code = NotFound desc = an error occurred when try to find container \"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0\": not found""#,
        kind: EventKind::DeleteContainerFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some(C_6CF7),
        error: Some("failed to get container status"),
        ..ROW
    });
    // §2 text: legacy deletor wording (W, ~1.19)
    check(&Row {
        line: r#"W0613 10:15:42.000000    1234 pod_container_deletor.go:79] [pod_container_deletor] DeleteContainer returned error for (id={containerd 6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0}): failed to get container status "6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0": rpc error: code = NotFound desc = an error occurred when try to find container "6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0": not found"#,
        kind: EventKind::DeleteContainerFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some(C_6CF7),
        error: Some("failed to get container status"),
        ..ROW
    });
    // §2: CRI-O wording of the same race (cri-o PR #8488)
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 pod_container_deletor.go:53] "DeleteContainer returned error" containerID={"Type":"cri-o","ID":"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0"} err="failed to get container status \"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0\": rpc error: code = NotFound desc = could not find container \"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0\": container with ID starting with 6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0 not found: ID does not exist""#,
        kind: EventKind::DeleteContainerFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some(C_6CF7),
        error: Some("failed to get container status"),
        ..ROW
    });
    // §5 text: GC container removal, legacy
    check(&Row {
        line: r#"E0613 10:15:42.000000    1234 kuberuntime_gc.go:126] Failed to remove container "6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0": failed to get container status "6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0": rpc error: code = NotFound desc = an error occurred when try to find container "6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0": not found"#,
        kind: EventKind::RemoveContainerFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some(C_6CF7),
        error: Some("failed to get container status"),
        ..ROW
    });
    // case 19: benign noise
    check(&Row {
        line: r#"I0829 01:50:35.469317 2909862 pod_container_deletor.go:79] "Container not found in pod's containers" containerID="143f0e3bb4dadbdc224e518719d475acc7c3fe2792105323ea9f5627b786d6ee""#,
        kind: EventKind::ContainerNotFoundInPod,
        not_found: true,
        container: Some("143f0e3bb4dadbdc224e518719d475acc7c3fe2792105323ea9f5627b786d6ee"),
        ..ROW
    });
    // kubelet 1.7 to 1.9 pod_container_deletor.go getContainersToDeleteInPod, which kept only
    // exited containers: the container to delete is already gone
    check(&Row {
        line: r#"W0920 16:42:06.808631    8665 pod_container_deletor.go:77] Container "9e08ba78d1e60a2ef8389518e9d95b100baea5880be04336bb4c8db3e35f7d0f" not found in pod's exited containers"#,
        kind: EventKind::DeleteContainerFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some("9e08ba78d1e60a2ef8389518e9d95b100baea5880be04336bb4c8db3e35f7d0f"),
        ..ROW
    });
    // case 20: the 1.22 status read failing on a container already removed (k/k #107670),
    // cut before its pod= field
    check(&Row {
        line: r#"E1213 17:26:47.292895   19130 kuberuntime_manager.go:1091] "getPodContainerStatuses for pod failed" err="Error: No such container: 740ab753973f7ad32c5ef2c9778fb061469fc1a664710988569a46deb7eea66e" p"#,
        kind: EventKind::PodContainerStatusesFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some("740ab753973f7ad32c5ef2c9778fb061469fc1a664710988569a46deb7eea66e"),
        error: Some("Error: No such container"),
        ..ROW
    });
    // CRI-O's CNI lines (ocicni, crc-org/snc#203): `Error <doing>: %v` printf'd into the
    // message, its error read after the `: ` (after the network's name when it gives one)
    check(&Row {
        line: r#"time="2021-01-25 16:45:10.209171978Z" level=error msg="Error adding network: netplugin failed with no error message: signal: killed""#,
        kind: EventKind::RunPodSandboxFailed,
        cause: Some(Cause::Other),
        error: Some("netplugin failed with no error message: signal: killed"),
        ..ROW
    });
    check(&Row {
        line: r#"time="2021-01-25 16:45:10.209230420Z" level=error msg="Error while adding pod to CNI network \"multus-cni-network\": netplugin failed with no error message: signal: killed""#,
        kind: EventKind::RunPodSandboxFailed,
        cause: Some(Cause::Other),
        error: Some("netplugin failed with no error message: signal: killed"),
        ..ROW
    });
    // a message pasted in Markdown bold; Multus names the pod in its error
    // (k3s-io/k3s#5672's KubeVirt node)
    check(&Row {
        line: r#"E0607 11:38:12.821024    6204 **remote_runtime**.go:116] "**RunPodSandbox from runtime service failed**" err="rpc error: code = Unknown desc = failed to setup network for sandbox \"302404d3715d53807421355f5ddb7257aa2f7aa8851e330615ff8c031c5bf0f5\": [default/virt-launcher-defaultbip-1-1-ln4jc:mgmt-conf-defaultbip-1]: error adding container to network \"mgmt-conf-defaultbip-1\": address already in use""#,
        kind: EventKind::CreatePodSandboxFailed,
        cause: Some(Cause::Other),
        pods: &[(Some("default"), "virt-launcher-defaultbip-1-1-ln4jc", None)],
        sandbox: Some("302404d3715d53807421355f5ddb7257aa2f7aa8851e330615ff8c031c5bf0f5"),
        error: Some("rpc error: code = Unknown desc = failed to setup network"),
        ..ROW
    });
    // dockershim's CNI DEL names the pod `<namespace>_<name>/<sandbox id>` (cni.go podDesc)
    check(&Row {
        line: r#"E0131 12:10:12.180000    1829 cni.go:345] Error deleting kube-system_kube-dns-f69c6b55-txhx4/dd498908460e2f7e2bd7bfd1b3bee8d1e84bd5e9ea1d84c1ed2a7a4e2ebd79e0 from network calico/calico-k8s-network: netplugin failed but error parsing its diagnostic message "": unexpected end of JSON input"#,
        kind: EventKind::DestroyNetworkFailed,
        cause: Some(Cause::CniTeardown(CniFailure::PluginNoErrorMessage)),
        pods: &[(Some("kube-system"), "kube-dns-f69c6b55-txhx4", None)],
        sandbox: Some("dd498908460e2f7e2bd7bfd1b3bee8d1e84bd5e9ea1d84c1ed2a7a4e2ebd79e0"),
        error: Some("netplugin failed but error parsing"),
        ..ROW
    });
    // a DEL that timed out is still a CNI teardown
    check(&Row {
        line: r#"time="2021-01-25 16:45:10.211283467Z" level=error msg="Error while removing pod from CNI network \"multus-cni-network\": netplugin failed with no error message: context deadline exceeded""#,
        kind: EventKind::DestroyNetworkFailed,
        cause: Some(Cause::CniTeardown(CniFailure::PluginNoErrorMessage)),
        error: Some("netplugin failed with no error message: context deadline exceeded"),
        ..ROW
    });
    // containerd's RunPodSandbox failure cut by journalctl's pager before ` failed` (its `>` at
    // the terminal's width): at error level, the failure (microk8s; the start is logged at info)
    check(&Row {
        line: r#"time="2022-09-22T13:53:27.490413622Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:calico-kube-controllers-749975>"#,
        kind: EventKind::RunPodSandboxFailed,
        cause: Some(Cause::Other),
        ..ROW
    });
    check(&Row {
        line: r#"time="2022-09-22T13:53:27.416526702Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:calico-kube-controllers-749975d>"#,
        kind: EventKind::RunPodSandboxStarted,
        ..ROW
    });
    // §2 text: containerd success lines
    check(&Row {
        line: r#"time="2024-01-01T10:00:00.000000000Z" level=info msg="RemoveContainer for \"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0\" returns successfully""#,
        kind: EventKind::RemoveContainerDone,
        container: Some(C_6CF7),
        ..ROW
    });
    // §5: crictl's NotFound for a sandbox (case 03 also passes a name, which is no ID)
    check(&Row {
        line: r#"FATA[0000] getting the pod sandbox status for "app-1-0": rpc error: code = NotFound desc = an error occurred when try to find sandbox: not found"#,
        kind: EventKind::SandboxNotFound,
        cause: Some(Cause::NotFound),
        not_found: true,
        error: Some("rpc error: code = NotFound"),
        ..ROW
    });
    // §5 runtime-side wording: the CRI-O phrases, inside constructed CRI-O lines
    check(&Row {
        line: r#"time="2024-01-01 10:00:00.000000000+00:00" level=info msg="RemovePodSandbox: specified pod sandbox not found: cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60""#,
        kind: EventKind::SandboxNotFound,
        cause: Some(Cause::NotFound),
        not_found: true,
        sandbox: Some(SB_CAE5),
        ..ROW
    });
    check(&Row {
        line: r#"time="2024-01-01 10:00:00.000000000+00:00" level=warning msg="Failed to get container status: could not find container \"6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0\": container with ID starting with 6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0 not found: ID does not exist""#,
        kind: EventKind::ContainerNotFound,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some(C_6CF7),
        ..ROW
    });
    // §2 text: containerd sandbox event for a removed sandbox
    check(&Row {
        line: r#"time="2024-01-01T10:00:20.000000000Z" level=warning msg="Failed to get podSandbox status for container event for sandboxID \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\": an error occurred when try to find sandbox: not found. Sending the event with nil podSandboxStatus.""#,
        kind: EventKind::SandboxNotFound,
        cause: Some(Cause::NotFound),
        not_found: true,
        sandbox: Some(SB_CAE5),
        ..ROW
    });
}

#[test]
fn sandbox_stop_and_removal_failures() {
    // case 21: legacy GC stop failure, cut; the earlier lines give the cause
    check(&Row {
        line: r#"Oct 02 23:27:34 node-a kubelet[2783]: E1002 23:27:34.439509    2783 kuberuntime_gc.go:169] Failed to stop sandbox "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60" before removing: rpc err"#,
        kind: EventKind::StopSandboxBeforeRemoveFailed,
        cause: Some(Cause::Other),
        sandbox: Some(SB_CAE5),
        error: Some("rpc err"),
        ..ROW
    });
    check(&Row {
        line: r#"Oct 02 23:27:34 node-a kubelet[2783]: E1002 23:27:34.439481    2783 remote_runtime.go:132] StopPodSandbox "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60" from runtime service failed: rpc error: code = Unknown desc = failed to destroy network for sandbox "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60": del cmd: failed to process delete request"#,
        kind: EventKind::StopPodSandboxFailed,
        cause: Some(Cause::CniTeardown(CniFailure::DestroyNetwork)),
        sandbox: Some(SB_CAE5),
        error: Some("rpc error: code = Unknown desc = failed to destroy network"),
        ..ROW
    });
    // case 21: containerd, unescaped quotes
    check(&Row {
        line: r#"Oct 02 23:27:34 node-a containerd[2639]: time="2019-10-02T23:27:34.439359450Z" level=error msg="StopPodSandbox for "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60" failed" error="failed to destroy network for sandbox "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60": del cmd: failed to process delete request""#,
        kind: EventKind::StopPodSandboxFailed,
        cause: Some(Cause::CniTeardown(CniFailure::DestroyNetwork)),
        sandbox: Some(SB_CAE5),
        error: Some("failed to destroy network for sandbox"),
        ..ROW
    });
    check(&Row {
        line: r#"Oct 02 23:27:34 node-a containerd[2639]: time="2019-10-02T23:27:34.417871363Z" level=info msg="StopPodSandbox for "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60"""#,
        kind: EventKind::StopPodSandboxStarted,
        sandbox: Some(SB_CAE5),
        ..ROW
    });
    // case 28: cni plugin not initialized
    check(&Row {
        line: r#"time="2023-03-01T20:08:10.167346791Z" level=error msg="StopPodSandbox for \"4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399\" failed" error="failed to destroy network for sandbox \"4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399\": cni plugin not initialized""#,
        kind: EventKind::StopPodSandboxFailed,
        cause: Some(Cause::CniTeardown(CniFailure::PluginNotInitialized)),
        sandbox: Some("4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399"),
        error: Some("failed to destroy network"),
        ..ROW
    });
    // case 29: message-only (Loki) StopPodSandbox failure with an empty CNI cache
    {
        let line = r#"StopPodSandbox from runtime service failed: rpc error: code = Unknown desc = failed to destroy network for sandbox "055b221e44a28ce8d9120f771d5e1ef201f2457ce49c58999a0147104cca2708": failed to get network "cbr0" cached result: decoding version from network config: unexpected end of JSON input"#;
        let mut ctx = ParseContext::new(2025);
        ctx.message_only = true;
        let p = parse(line, &mut ctx);
        let e = classify(&p).unwrap();
        assert_eq!(e.kind, EventKind::StopPodSandboxFailed);
        assert_eq!(
            e.cause,
            Some(Cause::CniTeardown(CniFailure::EmptyCachedResult))
        );
        assert_eq!(
            e.ids.sandbox_id.as_deref(),
            Some("055b221e44a28ce8d9120f771d5e1ef201f2457ce49c58999a0147104cca2708")
        );
        assert!(
            e.error
                .as_deref()
                .unwrap()
                .starts_with("rpc error: code = Unknown")
        );
    }
    // case 26: structured, pager cut, plugin binary cannot run
    check(&Row {
        line: r#"Dec 22 17:09:37 node-a kubelet[10468]: E1222 17:09:37.429430   10468 remote_runtime.go:205] "StopPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c\": plugin type=\"weave-net\" name=\"weave\" failed (delete): netplugin failed with no error message: fork/exec /opt/cni/bin/weave>"#,
        kind: EventKind::StopPodSandboxFailed,
        cause: Some(Cause::CniTeardown(CniFailure::PluginMissing)),
        sandbox: Some("859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c"),
        error: Some("rpc error: code = Unknown desc = failed to destroy network"),
        ..ROW
    });
    // case 35: Calico's node agent not running (the nodename file calico-node writes is
    // missing): node-wide, not one sandbox's trouble
    check(&Row {
        line: r#"Mar 10 11:23:33 node-a kubelet[30360]: E0310 11:23:33.100579   30360 log.go:32] "StopPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"e0f6665744e6f48928559cbfb3662c9d21a009331801da410c8152b2d37cdd0e\": plugin type=\"calico\" failed (delete): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/" podSandboxID="e0f6665744e6f48928559cbfb3662c9d21a009331801da410c8152b2d37cdd0e""#,
        kind: EventKind::StopPodSandboxFailed,
        cause: Some(Cause::CniTeardown(CniFailure::AgentNotRunning)),
        sandbox: Some("e0f6665744e6f48928559cbfb3662c9d21a009331801da410c8152b2d37cdd0e"),
        error: Some("rpc error: code = Unknown desc = failed to destroy network"),
        ..ROW
    });
    // flannel's CNI plugin before flanneld wrote its subnet file: the same, node-wide
    assert_eq!(
        classify_cause(
            "rpc error: code = Unknown desc = failed to destroy network for sandbox \"ab\": plugin type=\"flannel\" failed (delete): loadFlannelSubnetEnv failed: open /run/flannel/subnet.env: no such file or directory"
        ),
        Cause::CniTeardown(CniFailure::AgentNotRunning)
    );
    // multus-shim's daemon (thin plugin) refusing its socket, the AWS VPC CNI's ipamd its
    // loopback port: the node agent is down, not a datastore
    for err in [
        r#"rpc error: code = Unknown desc = failed to destroy network for sandbox "0fa1": plugin type="multus-shim" name="multus-cni-network" failed (delete): CmdDel (shim): failed to send CNI request: Post "http://dummy/cni": dial unix /run/multus/multus.sock: connect: connection refused"#,
        r#"rpc error: code = Unknown desc = failed to destroy network for sandbox "ab": plugin type="aws-cni" name="aws-cni" failed (delete): del cmd: error received from DelNetwork gRPC call: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:50051: connect: connection refused""#,
    ] {
        assert_eq!(
            classify_cause(err),
            Cause::CniTeardown(CniFailure::AgentNotRunning),
            "{err}"
        );
    }
    // case 27: Calico cannot reach its etcd: every DEL fails, the node itself is fine
    assert_eq!(
        classify_cause(
            "rpc error: code = Unknown desc = failed to destroy network for sandbox \"5dc6\": dial tcp 10.0.0.30:4001: getsockopt: connection refused"
        ),
        Cause::CniTeardown(CniFailure::DatastoreUnreachable)
    );
    assert!(!Cause::CniTeardown(CniFailure::DatastoreUnreachable).node_wide());
    assert!(Cause::CniTeardown(CniFailure::AgentNotRunning).node_wide());
    assert!(!Cause::CniTeardown(CniFailure::MissingNetns).node_wide());
    // case 26: KillPodSandbox's stop failure, %+v ID, no err key
    check(&Row {
        line: "Dec 22 17:09:37 node-a kubelet[10468]: E1222 17:09:37.429469   10468 kuberuntime_manager.go:965] \"Failed to stop sandbox\" podSandboxID={Type:containerd ID:859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c}",
        kind: EventKind::KillPodSandboxFailed,
        cause: Some(Cause::Other),
        sandbox: Some("859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c"),
        ..ROW
    });
    // case 24: missing plugin, dockershim teardown naming the pod
    check(&Row {
        line: r#"Jun  8 22:53:30 node-a kubelet: E0608 22:53:30.195821    7906 kuberuntime_gc.go:153] Failed to stop sandbox "636f41863b1e9b0da2c3a72bbe55f937f71197a20253fd1c6128019403e1ad3a" before removing: rpc error: code = Unknown desc = NetworkPlugin cni failed to teardown pod "es-master-7fb4d9447d-bj7z8_jaeger" network: failed to find plugin "flannel" in path [/opt/flannel/bin /opt/cni/bin]"#,
        kind: EventKind::StopSandboxBeforeRemoveFailed,
        cause: Some(Cause::CniTeardown(CniFailure::PluginMissing)),
        pods: &[(Some("jaeger"), "es-master-7fb4d9447d-bj7z8", None)],
        sandbox: Some("636f41863b1e9b0da2c3a72bbe55f937f71197a20253fd1c6128019403e1ad3a"),
        error: Some("rpc error: code = Unknown desc = NetworkPlugin cni failed"),
        ..ROW
    });
    // case 23: missing netns
    check(&Row {
        line: r#"Sep 28 13:58:16 node-a kubelet[2081]: E0928 13:58:16.329555    2081 remote_runtime.go:114] StopPodSandbox "463c9db192540a2d697772a72db4853c92ff73a1fa85b56b7b1a145ae8505118" from runtime service failed: rpc error: code = 2 desc = NetworkPlugin cni failed to teardown pod "app-1-3391168842-1cbzd_debug" network: failed to open netns %!!(MISSING)q(<nil>): failed to Statfs "": no such file or directory"#,
        kind: EventKind::StopPodSandboxFailed,
        cause: Some(Cause::CniTeardown(CniFailure::MissingNetns)),
        pods: &[(Some("debug"), "app-1-3391168842-1cbzd", None)],
        sandbox: Some("463c9db192540a2d697772a72db4853c92ff73a1fa85b56b7b1a145ae8505118"),
        error: Some("rpc error: code = 2"),
        ..ROW
    });
    check(&Row {
        line: r#"Sep 28 13:58:16 node-a kubelet[2081]: E0928 13:58:16.328854    2081 cni.go:312] Error deleting network: failed to open netns %!!(MISSING)q(<nil>): failed to Statfs "": no such file or directory"#,
        kind: EventKind::DestroyNetworkFailed,
        cause: Some(Cause::CniTeardown(CniFailure::MissingNetns)),
        not_found: false,
        error: Some("failed to open netns"),
        ..ROW
    });
    // case 01: legacy CRI remove failure, device busy
    check(&Row {
        line: r#"E0829 19:33:49.707741    2373 remote_runtime.go:126] RemovePodSandbox "d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718" from runtime service failed: rpc error: code = 2 desc = Error response from daemon: {"message":"Unable to remove filesystem for d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718: remove /var/lib/docker/containers/d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718/shm: device or resource busy"}"#,
        kind: EventKind::RemovePodSandboxFailed,
        cause: Some(Cause::RuntimeBusy),
        sandbox: Some("d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718"),
        error: Some("rpc error: code = 2"),
        ..ROW
    });
    // case 01: the GC line, cut mid-path (the cut ID prefix is the sandbox's)
    check(&Row {
        line: r#"E0829 19:33:49.707784    2373 kuberuntime_gc.go:142] Failed to remove sandbox "d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718": rpc error: code = 2 desc = Error response from daemon: {"message":"Unable to remove filesystem for d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718: remove /var/lib/docker/containers/d2a22654e52"#,
        kind: EventKind::RemoveSandboxFailed,
        cause: Some(Cause::Other),
        sandbox: Some("d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718"),
        error: Some("rpc error: code = 2"),
        ..ROW
    });
    // §5 text: structured GC lines
    check(&Row {
        line: r#"E0613 10:15:42.000000    1234 kuberuntime_gc.go:176] "Failed to stop sandbox before removing" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\": error getting ClusterInformation: connection is unauthorized: Unauthorized" sandboxID="cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60""#,
        kind: EventKind::StopSandboxBeforeRemoveFailed,
        cause: Some(Cause::CniTeardown(CniFailure::UnauthorizedDatastore)),
        sandbox: Some(SB_CAE5),
        error: Some("rpc error: code = Unknown"),
        ..ROW
    });
    check(&Row {
        line: r#"E0613 10:15:42.000000    1234 kuberuntime_gc.go:182] "Failed to remove sandbox" err="rpc error: code = Unknown desc = failed to remove volatile sandbox root directory: unlinkat /run/containerd/x: device or resource busy" sandboxID="cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60""#,
        kind: EventKind::RemoveSandboxFailed,
        cause: Some(Cause::RuntimeBusy),
        sandbox: Some(SB_CAE5),
        error: Some("rpc error"),
        ..ROW
    });
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 kuberuntime_gc.go:150] "Removing sandbox" sandboxID="cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60""#,
        kind: EventKind::GcRemovingSandbox,
        sandbox: Some(SB_CAE5),
        ..ROW
    });
    check(&Row {
        line: r#"E0613 10:15:42.000000    1234 kubelet.go:1400] "Container garbage collection failed" err="rpc error: code = DeadlineExceeded desc = context deadline exceeded""#,
        kind: EventKind::ContainerGcFailed,
        cause: Some(Cause::Timeout),
        error: Some("rpc error: code = DeadlineExceeded"),
        ..ROW
    });
    // case 30: CRI-O / kata, hard-wrapped lines as joined by the assembler
    check(&Row {
        line: "Sep 03 14:14:13 node-b kubelet[8742]: E0903 14:14:13.646559    8742 remote_runtime.go:143] StopPodSandbox \"73e56b55f18f947a4cd6712987777888cb4087674f8ad36193df3b6b88296c21\" from runtime service failed: rpc error: code = Unknown desc = failed to stop infra container for pod sandbox 73e56b55f18f947a4cd6712987777888cb4087674f8ad36193df3b6b88296c21: failed to stop container k8s_POD_app-1-0_f48db403-dcfd-5852-90f9-dd8210f46a9e_6abac9df-1ac3-4ec1-8375-66bdead3b596_0: ttrpc: closed: unknown",
        kind: EventKind::StopPodSandboxFailed,
        cause: Some(Cause::Other),
        pods: &[(
            Some("f48db403-dcfd-5852-90f9-dd8210f46a9e"),
            "app-1-0",
            Some("6abac9df-1ac3-4ec1-8375-66bdead3b596"),
        )],
        pod_uid: Some("6abac9df-1ac3-4ec1-8375-66bdead3b596"),
        sandbox: Some("73e56b55f18f947a4cd6712987777888cb4087674f8ad36193df3b6b88296c21"),
        error: Some("rpc error: code = Unknown desc = failed to stop infra container"),
        ..ROW
    });
    check(&Row {
        line: r#"Jun 29 17:14:10 node-a crio[95965]: time="2021-06-29 17:14:10.292290977+02:00" level=info msg="Stopping pod sandbox: 5b457b6bb989b9aad8157831100599811765823793722e7ab0c3b42cb8b31607" id=4783e552-d7ea-49b8-9458-356277a69675 name=/runtime.v1alpha2.RuntimeService/StopPodSandbox"#,
        kind: EventKind::StopPodSandboxStarted,
        sandbox: Some("5b457b6bb989b9aad8157831100599811765823793722e7ab0c3b42cb8b31607"),
        ..ROW
    });
}

#[test]
fn kill_and_sync_errors() {
    // case 25: three levels of escaping
    check(&Row {
        line: r#"Oct 19 13:07:17 node-a kubelet[1736]: E1019 13:07:17.246702    1736 pod_workers.go:951] "Error syncing pod, skipping" err="failed to \"KillPodSandbox\" for \"e1909e28-5731-4111-8031-3c989b5dc0cd\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"ff252b2872f45846e140c96bb096d5a23100dcd13bd25cecbf858655b336093e\\\": plugin type=\\\"flannel\\\" failed (delete): failed to parse netconf: unexpected end of JSON input\"" pod="team-ns/pvc-tester-mqwqq" podUID=e1909e28-5731-4111-8031-3c989b5dc0cd"#,
        kind: EventKind::ErrorSyncingPod,
        cause: Some(Cause::CniTeardown(CniFailure::EmptyCachedResult)),
        pods: &[(Some("team-ns"), "pvc-tester-mqwqq", None)],
        pod_uid: Some("e1909e28-5731-4111-8031-3c989b5dc0cd"),
        sandbox: Some("ff252b2872f45846e140c96bb096d5a23100dcd13bd25cecbf858655b336093e"),
        error: Some(r#"failed to "KillPodSandbox" for "e1909e28"#),
        ..ROW
    });
    // case 18: cut inside `failed to destr…`, still a CNI teardown
    check(&Row {
        line: r#"Oct 19 07:21:27 node-a kubelet.service[6774]: E1019 07:21:27.130112    6774 pod_workers.go:765] "Error syncing pod, skipping" err="failed to \"KillPodSandbox\" for \"5d6d2cc2c526ec6310afc8c64fac7052\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destr"#,
        kind: EventKind::ErrorSyncingPod,
        cause: Some(Cause::CniTeardown(CniFailure::DestroyNetwork)),
        pod_uid: Some("5d6d2cc2c526ec6310afc8c64fac7052"),
        error: Some(r#"failed to "KillPodSandbox""#),
        ..ROW
    });
    // case 26
    check(&Row {
        line: r#"Dec 22 17:09:37 node-a kubelet[10468]: E1222 17:09:37.429510   10468 kuberuntime_manager.go:705] "killPodWithSyncResult failed" err="failed to \"KillPodSandbox\" for \"d8f03fbd-0add-47eb-b972-491f9a465ad1\" with KillPodSandboxError: \"rpc error:"#,
        kind: EventKind::KillPodFailed,
        cause: Some(Cause::Other),
        pod_uid: Some("d8f03fbd-0add-47eb-b972-491f9a465ad1"),
        error: Some(r#"failed to "KillPodSandbox""#),
        ..ROW
    });
    // case 30: legacy, pod by name
    check(&Row {
        line: "Sep 03 14:14:13 node-b kubelet[8742]: E0903 14:14:13.646608    8742 kubelet_pods.go:1246] Failed killing the pod \"app-1-0\": failed to \"KillPodSandbox\" for \"6abac9df-1ac3-4ec1-8375-66bdead3b596\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to stop infra container for pod sandbox 73e56b55f18f947a4cd6712987777888cb4087674f8ad36193df3b6b88296c21: failed to stop container k8s_POD_app-1-0_f48db403-dcfd-5852-90f9-dd8210f46a9e_6abac9df-1ac3-4ec1-8375-66bdead3b596_0: ttrpc: closed: unknown\"",
        kind: EventKind::KillPodFailed,
        cause: Some(Cause::Other),
        pods: &[(
            Some("f48db403-dcfd-5852-90f9-dd8210f46a9e"),
            "app-1-0",
            Some("6abac9df-1ac3-4ec1-8375-66bdead3b596"),
        )],
        pod_uid: Some("6abac9df-1ac3-4ec1-8375-66bdead3b596"),
        sandbox: Some("73e56b55f18f947a4cd6712987777888cb4087674f8ad36193df3b6b88296c21"),
        error: Some(r#"failed to "KillPodSandbox""#),
        ..ROW
    });
    // §3: podKiller (≤ 1.21)
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 kubelet_pods.go:1102] Killing unwanted pod "custom-metrics-apiserver-7b6d4c8f9-x2x9z""#,
        kind: EventKind::KillingUnwantedPod,
        pods: &[(None, "custom-metrics-apiserver-7b6d4c8f9-x2x9z", None)],
        ..ROW
    });
}

#[test]
fn housekeeping_orphans_and_workers() {
    // case 08: legacy orphan, and the same line cut inside the UID
    check(&Row {
        line: r#"E0508 00:36:34.697561     469 kubelet_volumes.go:114] Orphaned pod "f97942cf-337e-11e7-b2b1-005056b7dc12" found, but volume paths are still present on disk."#,
        kind: EventKind::OrphanedPodVolumes,
        cause: Some(Cause::Other),
        pod_uid: Some("f97942cf-337e-11e7-b2b1-005056b7dc12"),
        error: Some("Orphaned pod"),
        ..ROW
    });
    check(&Row {
        line: r#"E0508 00:36:36.698103     469 kubelet_volumes.go:114] Orphaned pod "0ea83064-3383-11e7-"#,
        kind: EventKind::OrphanedPodVolumes,
        cause: Some(Cause::Other),
        partial: &[(IdKind::PodUid, "0ea83064-3383-11e7-")],
        error: Some("Orphaned pod"),
        ..ROW
    });
    // case 09: the rate-limited count
    check(&Row {
        line: r#"Aug 31 14:21:49 node-a kubelet[2240370]: E0831 14:21:49.324206 2240370 kubelet_volumes.go:154] Orphaned pod "5da3387d-ad1c-11ea-a025-525400767782" found, but volume paths are still present on disk : There were a total of 1 errors similar to this. Turn up verbosity to see them."#,
        kind: EventKind::OrphanedPodVolumes,
        cause: Some(Cause::Other),
        pod_uid: Some("5da3387d-ad1c-11ea-a025-525400767782"),
        error: Some("Orphaned pod"),
        count: Some(1),
        ..ROW
    });
    // case 25: the structured roll-up
    check(&Row {
        line: r#"Oct 19 13:07:19 node-a kubelet[1736]: E1019 13:07:19.204879    1736 kubelet_volumes.go:245] "There were many similar errors. Turn up verbosity to see them." err="orphaned pod \"04bd08f8-a895-4a4a-939b-e6521d5f17d0\" found, but error occurred when trying to remove the volumes dir: not a directory" numErrs=34"#,
        kind: EventKind::OrphanedPodVolumes,
        cause: Some(Cause::Other),
        pod_uid: Some("04bd08f8-a895-4a4a-939b-e6521d5f17d0"),
        error: Some("orphaned pod \"04bd08f8"),
        count: Some(34),
        ..ROW
    });
    // case 11: its detail line
    check(&Row {
        line: r#"Nov 18 01:57:48 node-a kubelet[4133404]: I1118 01:57:48.546840 4133404 kubelet_volumes.go:247] "Orphan pod" err="orphaned pod \"6ac9044e-b7ca-44d1-9bb3-90d50093f6d8\" found, but failed to rmdir() volume at path /var/lib/kubelet/pods/6ac9044e-b7ca-44d1-9bb3-90d50093f6d8/volumes/kubernetes.io~configmap/config-volume: directory not empty""#,
        kind: EventKind::OrphanedPodVolumes,
        cause: Some(Cause::Other),
        pod_uid: Some("6ac9044e-b7ca-44d1-9bb3-90d50093f6d8"),
        error: Some("orphaned pod"),
        ..ROW
    });
    // case 12
    check(&Row {
        line: r#"Jun 06 04:10:32 node-a d8-kubelet-forker[1745]: I0606 04:10:32.997380    1745 kubelet_volumes.go:160] "Cleaned up orphaned pod volumes dir" podUID=11cfbe01-0e47-4835-97e4-dbf46dfccd66 path="/var/lib/kubelet/pods/11cfbe01-0e47-4835-97e4-dbf46dfccd66/volumes""#,
        kind: EventKind::OrphanedPodVolumesCleaned,
        pod_uid: Some("11cfbe01-0e47-4835-97e4-dbf46dfccd66"),
        ..ROW
    });
    // case 08
    check(&Row {
        line: r#"E0508 00:36:34.250925     469 reconciler.go:438] Could not construct volume information: directory /var/lib/kubelet/pods/f97942cf-337e-11e7-b2b1-005056b7dc12/volumes/kubernetes.io~vsphere-volume/pvc-f969cb9e-337e-11e7-b2b1-005056b7dc12 is not mounted"#,
        kind: EventKind::VolumeReconstructionFailed,
        pod_uid: Some("f97942cf-337e-11e7-b2b1-005056b7dc12"),
        ..ROW
    });
    // case 17
    check(&Row {
        line: r#"Jul 29 20:54:44 node-a hyperkube[1526]: I0729 20:54:44.435138    1526 kubelet_pods.go:1695] Orphaned pod "60d66dd8b81c2a4756d2e2f69ec1e3fc" found, but volumes not yet removed.  Reducing cpu to minimum"#,
        kind: EventKind::OrphanedPodPendingVolumes,
        pod_uid: Some("60d66dd8b81c2a4756d2e2f69ec1e3fc"),
        ..ROW
    });
    // "Log evidence" table texts: the stuck worker and the #107730 race
    let uid = "2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e";
    let lines = [
        (
            r#"I0613 10:15:42.000000    1234 pod_workers.go:1200] "Pod worker has been requested for removal but is still not fully terminated" podUID=2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e"#,
            EventKind::PodWorkerNotTerminated,
        ),
        (
            r#"I0613 10:15:42.000000    1234 pod_workers.go:1210] "Pod has been terminated and is no longer known to the kubelet, remove all history" podUID=2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e"#,
            EventKind::RemoveAllHistory,
        ),
        (
            r#"I0613 10:15:42.000000    1234 kubelet_pods.go:1200] "Clean up orphaned pod containers" podUID=2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e"#,
            EventKind::CleanUpOrphanedPod,
        ),
        (
            r#"I0613 10:15:42.000000    1234 kubelet_pods.go:1210] "Clean up containers for orphaned pod we had not seen before" podUID=2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e"#,
            EventKind::CleanUpOrphanedPod,
        ),
        (
            r#"I0613 10:15:42.000000    1234 pod_workers.go:900] "Pod is being synced for the first time" pod="team-ns/web-0" podUID=2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e"#,
            EventKind::PodSyncedFirstTime,
        ),
        (
            r#"I0613 10:15:42.000000    1234 pod_workers.go:910] "Pod is orphaned and must be torn down" pod="team-ns/web-0" podUID=2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e"#,
            EventKind::PodOrphanedTornDown,
        ),
        (
            r#"I0613 10:15:42.000000    1234 pod_workers.go:920] "Pod terminated all orphaned containers successfully and worker can now stop" pod="team-ns/web-0" podUID=2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e"#,
            EventKind::PodTerminated,
        ),
    ];
    for (line, kind) in lines {
        let mut ctx = ParseContext::new(2022);
        let p = parse(line, &mut ctx);
        let e = classify(&p).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(e.kind, kind, "{line}");
        assert_eq!(e.ids.pod_uid.as_deref(), Some(uid), "{line}");
        assert_eq!(e.cause, None, "{line}");
    }
    // The kubelet's start, as the real kubelet v1.34.4 logs it in text and JSON, and before 1.21.
    for line in [
        r#"I1201 12:30:20.603240   21520 server.go:529] "Kubelet version" kubeletVersion="v1.34.4""#,
        r#"{"ts":1796128207724.8074,"caller":"app/server.go:529","msg":"Kubelet version","v":0,"kubeletVersion":"v1.34.4"}"#,
        r#"I0301 10:00:00.000000    1234 server.go:416] Version: v1.20.4"#,
    ] {
        let mut ctx = ParseContext::new(2026);
        let p = parse(line, &mut ctx);
        let e = classify(&p).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(e.kind, EventKind::KubeletStarted, "{line}");
    }
    // Rule 5 texts: removal blocked by sources not ready
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 kubelet.go:2200] "Failed to delete pod" pod="kube-system/kube-apiserver-node-a" err="skipping delete because sources aren't ready yet""#,
        kind: EventKind::SkippingDeleteSourcesNotReady,
        cause: Some(Cause::Other),
        pods: &[(Some("kube-system"), "kube-apiserver-node-a", None)],
        error: Some("skipping delete because sources aren't ready yet"),
        ..ROW
    });
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 kubelet.go:2000] SyncLoop (housekeeping, skipped): sources aren't ready yet."#,
        kind: EventKind::HousekeepingSkippedSourcesNotReady,
        ..ROW
    });
}

#[test]
fn static_and_mirror_pods() {
    // case 14: the older "Deleting" wording
    check(&Row {
        line: r#"Apr 16 05:16:23 node-a kubelet[1847]: W0416 05:16:23.196969    1847 kubelet.go:1602] Deleting mirror pod "kube-controller-manager-node-a_kube-system(d4746eba-4156-11e8-84f4-0050569b7580)" because it is outdated"#,
        kind: EventKind::MirrorPodOutdatedDeleted,
        pods: &[(
            Some("kube-system"),
            "kube-controller-manager-node-a",
            Some("d4746eba-4156-11e8-84f4-0050569b7580"),
        )],
        pod_uid: Some("d4746eba-4156-11e8-84f4-0050569b7580"),
        ..ROW
    });
    // §4: 1.21+ wording
    check(&Row {
        line: r#"I0613 10:15:42.000000    1234 kubelet.go:1800] "Deleted mirror pod because it is outdated" pod="kube-system/etcd-node-a""#,
        kind: EventKind::MirrorPodOutdatedDeleted,
        pods: &[(Some("kube-system"), "etcd-node-a", None)],
        ..ROW
    });
    // case 17
    check(&Row {
        line: r#"Jul 29 20:54:44 node-a hyperkube[1526]: I0729 20:54:44.401404    1526 mirror_client.go:93] Deleting a mirror pod "kube-apiserver-node-a_openshift-kube-apiserver" (uid (*types.UID)(nil))"#,
        kind: EventKind::MirrorPodDeleting,
        pods: &[(
            Some("openshift-kube-apiserver"),
            "kube-apiserver-node-a",
            None,
        )],
        ..ROW
    });
    // case 16: AlreadyExists
    check(&Row {
        line: r#"E0407 23:32:03.532257   18134 kubelet.go:1335] Failed creating a mirror pod "etcd-server-kubernetes-master_default": &errors.StatusError{ErrStatus:api.Status{TypeMeta:api.TypeMeta{Kind:"", APIVersion:""}, ListMeta:api.ListMeta{SelfLink:"", ResourceVersion:""}, Status:"Failure", Message:"pods \"etcd-server-kubernetes-master\" already exists", Reason:"AlreadyExists", Details:(*api.StatusDetails)(0xc208474c00), Code:409}}"#,
        kind: EventKind::MirrorPodCreateFailed,
        cause: Some(Cause::AlreadyExists),
        pods: &[(Some("default"), "etcd-server-kubernetes-master", None)],
        error: Some("&errors.StatusError{"),
        ..ROW
    });
    // §4 text + the apiserver's NodeRestriction refusal
    check(&Row {
        line: r#"E0613 10:15:42.000000    1234 kubelet.go:1750] "Failed creating a mirror pod for" pod="kube-system/etcd-node-a" err="pods \"etcd-node-a\" is forbidden: node \"node-a\" can only create pods with spec.nodeName set to itself""#,
        kind: EventKind::MirrorPodCreateFailed,
        cause: Some(Cause::Forbidden),
        pods: &[(Some("kube-system"), "etcd-node-a", None)],
        error: Some("pods \"etcd-node-a\" is forbidden"),
        ..ROW
    });
}

#[test]
fn runtime_sandbox_lines() {
    // §2 text: containerd sandbox lifecycle
    let cases: &[(&str, EventKind)] = &[
        (
            r#"time="2024-01-01T10:00:01Z" level=info msg="StopPodSandbox for \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\" returns successfully""#,
            EventKind::StopPodSandboxDone,
        ),
        (
            r#"time="2024-01-01T10:00:01Z" level=info msg="TearDown network for sandbox \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\" successfully""#,
            EventKind::TearDownNetworkDone,
        ),
        (
            r#"time="2024-01-01T10:00:01Z" level=info msg="RemovePodSandbox for \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\"""#,
            EventKind::RemovePodSandboxStarted,
        ),
        (
            r#"time="2024-01-01T10:00:01Z" level=info msg="RemovePodSandbox \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\" returns successfully""#,
            EventKind::RemovePodSandboxDone,
        ),
        (
            r#"time="2024-01-01T10:00:01Z" level=error msg="Failed to destroy network for sandbox \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\"" error="plugin type=\"calico\" failed (delete): error getting ClusterInformation: connection is unauthorized: Unauthorized""#,
            EventKind::DestroyNetworkFailed,
        ),
        (
            r#"time="2024-01-01T10:00:01Z" level=info msg="RunPodSandbox for &PodSandboxMetadata{Name:web-0,Uid:2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e,Namespace:team-ns,Attempt:0,} returns sandbox id \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\"""#,
            EventKind::RunPodSandboxDone,
        ),
        (
            r#"time="2024-01-01T10:00:01Z" level=warning msg="sandbox \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\" is not found when stopping it""#,
            EventKind::SandboxNotFound,
        ),
        (
            r#"time="2024-01-01T10:00:01Z" level=error msg="RunPodSandbox for &PodSandboxMetadata{Name:web-0,Uid:2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e,Namespace:team-ns,Attempt:0,} failed, error" error="failed to reserve sandbox name \"web-0_team-ns_2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e_0\": name \"web-0_team-ns_2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e_0\" is reserved for \"cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60\"""#,
            EventKind::SandboxNameReserved,
        ),
    ];
    for &(line, kind) in cases {
        let mut ctx = ParseContext::new(2022);
        let p = parse(line, &mut ctx);
        let e = classify(&p).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(e.kind, kind, "{line}");
        assert_eq!(e.ids.sandbox_id.as_deref(), Some(SB_CAE5), "{line}");
        assert_eq!(e.component, None, "no envelope: {line}");
    }
    // the reservation names the pod through the sandbox name
    let line = cases.last().unwrap().0;
    let mut ctx = ParseContext::new(2022);
    let p = parse(line, &mut ctx);
    let e = classify(&p).unwrap();
    assert_eq!(e.cause, Some(Cause::RuntimeBusy));
    assert_eq!(
        e.ids.pod_uid.as_deref(),
        Some("2a1b6d2e-7a1c-4c55-9d7a-6b1f6f0f4b1e")
    );
    assert_eq!(e.ids.pods[0].name, "web-0");

    // case 03: shim disconnected: the ID may be a container or a sandbox
    check(&Row {
        line: r#"Jan 20 13:26:08 node-a containerd[128848]: time="2023-01-20T13:26:08.948042485+01:00" level=warning msg="cleaning up after shim disconnected" id=06f0eea7928b1a540bcf0a8c1a90497200faf30b4dec4858e046e80a970db1a5 namespace=k8s.io"#,
        kind: EventKind::ShimDisconnected,
        object: Some("06f0eea7928b1a540bcf0a8c1a90497200faf30b4dec4858e046e80a970db1a5"),
        ..ROW
    });
    // case 36: a reloaded sandbox, wrapped inside the UID and joined
    check(&Row {
        line: "Jan 02 17:13:13 node-a containerd[80463]: time=\"2019-01-02T17:13:13.089713206Z\" level=debug msg=\"Loaded sandbox {Metadata:{ID:02b3441253939c078d100ac6a5a5c63e5bb308d5904c36b3903ddd6b800e5c07 Name:prometheus-85dfb696c7-sm9g8_team-ns_2302e97a-03d2-11e9-9447-005056911476_0 Config:&PodSandboxConfig{Metadata:&PodSandboxMetadata{Name:prometheus-85dfb696c7-sm9g8,Uid:2302e97a-03d2-11e9-9447-005056911476,Namespace:team-ns,Attempt:0,},Labels:map[string]string{io.kubernetes.pod.uid: 2302e97a-03d2-11e9-9447-005056911476,pod-template-hash: 4189625273,}",
        kind: EventKind::SandboxLoaded,
        pods: &[(
            Some("team-ns"),
            "prometheus-85dfb696c7-sm9g8",
            Some("2302e97a-03d2-11e9-9447-005056911476"),
        )],
        pod_uid: Some("2302e97a-03d2-11e9-9447-005056911476"),
        sandbox: Some("02b3441253939c078d100ac6a5a5c63e5bb308d5904c36b3903ddd6b800e5c07"),
        ..ROW
    });
}

#[test]
fn node_wide_runtime_trouble() {
    // case 32: JSON, PLEG unhealthy and a hung runtime
    check(&Row {
        line: r#"10.0.0.8: {"ts":1757010283211.4668,"caller":"kubelet/kubelet.go:2460","msg":"Skipping pod synchronization","err":"PLEG is not healthy: pleg was last seen active 16h14m34.439643899s ago; threshold is 3m0s","errCauses":[{"error":"PLEG is not healthy: pleg was last seen active 16h14m34.439643899s ago; threshold is 3m0s"}]}"#,
        kind: EventKind::PlegUnhealthy,
        cause: Some(Cause::Other),
        error: Some("PLEG is not healthy: pleg was last seen active 16h14m34.439643899s ago"),
        ..ROW
    });
    check(&Row {
        line: r#"10.0.0.8: {"ts":1757010313215.116,"caller":"kubelet/kubelet.go:2460","msg":"Skipping pod synchronization","err":"PLEG is not h"#,
        kind: EventKind::PlegUnhealthy,
        cause: Some(Cause::Other),
        error: Some("PLEG is not h"),
        ..ROW
    });
    check(&Row {
        line: r#"10.0.0.8: {"ts":1757010309253.551,"caller":"internal/log.go:32","msg":"ListContainers with filter from runtime service failed","filter":"&ContainerFilter{Id:,State:nil,PodSandboxId:,LabelSelector:map[string]string{},}","err":"rpc error: code = DeadlineExceeded desc = context deadline exceeded"}"#,
        kind: EventKind::RuntimeCallFailed,
        cause: Some(Cause::Timeout),
        error: Some("rpc error: code = DeadlineExceeded"),
        ..ROW
    });
    // case 36: legacy
    check(&Row {
        line: "Jan 02 06:50:10 node-a kubelet[250135]: I0102 06:42:00.569834  250135 kubelet.go:1771] skipping pod synchronization - [container runtime is down PLEG is not healthy: pleg was last seen active 66h20m49.039936615s ago; threshold is 3m0s]",
        kind: EventKind::PlegUnhealthy,
        cause: Some(Cause::Other),
        error: Some("skipping pod synchronization - [container runtime is down"),
        ..ROW
    });
    check(&Row {
        line: "Jan 02 06:49:56 node-a kubelet[250135]: E0102 06:32:23.862407  250135 remote_runtime.go:434] Status from runtime service failed: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
        kind: EventKind::RuntimeCallFailed,
        cause: Some(Cause::Timeout),
        error: Some("rpc error: code = DeadlineExceeded"),
        ..ROW
    });
}

#[test]
fn not_events() {
    for line in [
        // case 19: status and volume lines
        r#"I0829 01:50:33.287957 2909862 kubelet_pods.go:1363] "Generating pod status" pod="default/mypod-127.0.0.1""#,
        // case 24: CNI netns lookup warning (info only)
        "Jun  8 22:53:30 node-a kubelet: W0608 22:53:30.197413    7906 cni.go:242] CNI failed to retrieve network namespace path: cannot find network",
        // case 06: Cilium's empty-netns warning is benign noise, not a teardown failure
        r#"level=warning msg="Unable to enter namespace \"\", will not delete interface" error="failed to Statfs \"\": no such file or directory" subsys=cilium-cni"#,
        // case 32: an unrelated auth error
        r#"10.0.0.8: {"ts":1757010283489.8174,"caller":"server/server.go:336","msg":"Unable to authenticate the request due to an error","err":"[invalid bearer token, service account token has been invalidated]"}"#,
        // header fragments
        "Apr 16 05:16:28 node-a",
        "E1019 13:07:22.224",
        // not log lines
        "user@node-a:~> sudo crictl inspectp app-1-0",
        r#"pod sandbox "73e56b55f18f947a4cd6712987777888cb4087674f8ad36193df3b6b88296c21" is running, please stop it first"#,
    ] {
        let mut ctx = ParseContext::new(2022);
        let p = parse(line, &mut ctx);
        assert_eq!(classify(&p), None, "{line}");
    }
}

#[test]
fn cause_table() {
    let cases: &[(&str, Cause)] = &[
        (
            "failed to destroy network for sandbox \"x\": del cmd: failed to process delete request",
            Cause::CniTeardown(CniFailure::DestroyNetwork),
        ),
        (
            "failed to destroy network for sandbox \"x\": cni plugin not initialized",
            Cause::CniTeardown(CniFailure::PluginNotInitialized),
        ),
        (
            "failed to destroy network for sandbox \"x\": error getting ClusterInformation: connection is unauthorized: Unauthorized",
            Cause::CniTeardown(CniFailure::UnauthorizedDatastore),
        ),
        (
            "failed to destroy network for sandbox \"x\": failed to get network \"cbr0\" cached result: decoding version from network config: unexpected end of JSON input",
            Cause::CniTeardown(CniFailure::EmptyCachedResult),
        ),
        (
            "NetworkPlugin cni failed to teardown pod \"a_b\" network: failed to open netns %!!(MISSING)q(<nil>): failed to Statfs \"\": no such file or directory",
            Cause::CniTeardown(CniFailure::MissingNetns),
        ),
        // The plugin's own thread's namespace, not the sandbox's (flannel-io/flannel#1288).
        (
            "failed to destroy network for sandbox \"x\": Failed to open current namespace: failed to Statfs \"/proc/4242/task/4250/ns/net\": no such file or directory",
            Cause::CniTeardown(CniFailure::DestroyNetwork),
        ),
        (
            "NetworkPlugin cni failed to teardown pod \"a_b\" network: failed to find plugin \"flannel\" in path [/opt/flannel/bin /opt/cni/bin]",
            Cause::CniTeardown(CniFailure::PluginMissing),
        ),
        // libcni's `pluginErr`: a plugin that wrote no error, after a failed exec of it.
        (
            "failed to destroy network for sandbox \"x\": plugin type=\"calico\" failed (delete): netplugin failed with no error message: signal: killed",
            Cause::CniTeardown(CniFailure::PluginNoErrorMessage),
        ),
        (
            "NetworkPlugin cni failed to teardown pod \"a_b\" network: netplugin failed but error parsing its diagnostic message \"\": unexpected end of JSON input",
            Cause::CniTeardown(CniFailure::PluginNoErrorMessage),
        ),
        (
            "failed to destroy network for sandbox \"x\": plugin type=\"weave-net\" failed (delete): netplugin failed with no error message: fork/exec /opt/cni/bin/weave-net: no such file or directory",
            Cause::CniTeardown(CniFailure::PluginMissing),
        ),
        (
            "failed to destroy network for sandbox \"x\": plugin type=\"flannel\" failed (delete): failed to parse netconf: unexpected end of JSON input",
            Cause::CniTeardown(CniFailure::EmptyCachedResult),
        ),
        // containerd 1.1 and 1.2's StopContainer.
        (
            "an error occurs during waiting for container \"x\" init process to be killed: wait container \"x\" stop timeout",
            Cause::Timeout,
        ),
        (
            "failed to forcibly stop sandbox \"x\": failed to destroy network for sandbox \"x\": context deadline exceeded",
            Cause::CniTeardown(CniFailure::DestroyNetwork),
        ),
        (
            "remove /var/lib/docker/containers/x/shm: device or resource busy",
            Cause::RuntimeBusy,
        ),
        (
            "failed to reserve sandbox name \"a_b_c_0\": name \"a_b_c_0\" is reserved for \"x\"",
            Cause::RuntimeBusy,
        ),
        ("container is already in removing state", Cause::RuntimeBusy),
        (
            "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            Cause::Timeout,
        ),
        (
            "rpc error: code = Canceled desc = failed to stop sandbox container \"x\" in \"SANDBOX_READY\" state: wait sandbox container \"x\": context canceled",
            Cause::Timeout,
        ),
        (
            "failed to pull and unpack image \"x\": context canceled",
            Cause::Other,
        ),
        (
            "rpc error: code = NotFound desc = an error occurred when try to find container \"x\": not found",
            Cause::NotFound,
        ),
        (
            "pods \"x\" is forbidden: node \"n\" can only create pods with spec.nodeName set to itself",
            Cause::Forbidden,
        ),
        ("pods \"x\" already exists", Cause::AlreadyExists),
        ("ttrpc: closed: unknown", Cause::Other),
    ];
    for &(err, want) in cases {
        assert_eq!(classify_cause(err), want, "{err}");
    }
    // a cut inside the CNI phrase counts only when the text was cut
    assert_eq!(
        cause_of("rpc error: code = Unknown desc = failed to destr", true),
        Cause::CniTeardown(CniFailure::DestroyNetwork)
    );
    assert_eq!(
        cause_of("rpc error: code = Unknown desc = failed to destr", false),
        Cause::Other
    );
}

#[test]
fn partial_ids_are_never_full() {
    let mut ctx = ParseContext::new(2019);
    let p = parse(
        r#"Oct 15 14:48:41 node-b kubelet: E1015 14:48:41.982980 40887 kubelet_volumes.go:154] Orphaned pod "0fbdedac-ebfe-11e9-a2b6-00"#,
        &mut ctx,
    );
    let e = classify(&p).unwrap();
    assert_eq!(e.ids.pod_uid, None);
    assert_eq!(
        e.ids.partial(),
        [PartialId {
            kind: IdKind::PodUid,
            prefix: Cow::Borrowed("0fbdedac-ebfe-11e9-a2b6-00")
        }]
    );
    assert!(e.truncated);
}

// === the message table ===

#[test]
fn message_keys_cover_every_wording_and_phrase() {
    let keys = message_keys();
    assert!(keys.len() > 60, "too few keys: {keys:?}");
    for w in messages::wordings() {
        let key = messages::key_of(w);
        assert!(!key.is_empty() && keys.contains(&key), "{w:?}");
        // A message of this wording holds its key.
        let phrase = match w.cond {
            messages::Cond::Has(p)
            | messages::Cond::HasOrErr(p)
            | messages::Cond::HasOrCutErr(p)
            | messages::Cond::HasOrCutError(p) => p,
            _ => "",
        };
        let msg = format!("{} x {phrase}", w.starts);
        assert!(msg.contains(key), "{w:?}: {key:?}");
    }
    for (p, _) in messages::PHRASES {
        assert!(keys.iter().any(|k| p.contains(k)), "{p:?}");
    }
    for key in keys {
        assert!(!key.contains('"') && !key.contains('\\'), "{key:?}");
    }
}

#[test]
fn no_wording_is_shadowed_by_an_earlier_one() {
    // A wording with no condition takes every message that starts with it: a later wording
    // that starts with it too would never be reached.
    let all: Vec<_> = messages::wordings().collect();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            let shadows = match a.cond {
                messages::Cond::None => b.starts.starts_with(a.starts),
                messages::Cond::Exact => b.starts == a.starts && b.cond == messages::Cond::Exact,
                _ => false,
            };
            assert!(!shadows, "{:?} is shadowed by {:?}", b.starts, a.starts);
        }
    }
}

#[test]
fn every_phrase_reaches_the_fallback() {
    // Each phrase alone, in the message or in the error, names its kind.
    for (p, kind) in messages::PHRASES {
        let msg = format!("x {p} y");
        assert!(fallback(&msg, None).is_some(), "{p:?} in the message");
        assert!(fallback("x", Some(&msg)).is_some(), "{p:?} in the error");
        let first = messages::PHRASES
            .iter()
            .find(|(q, _)| msg.contains(q))
            .unwrap();
        assert_eq!(
            fallback(&msg, None).map(|h| h.kind),
            Some(first.1),
            "{p:?} ({kind:?})"
        );
    }
    assert!(fallback("Probe failed", Some("connection refused")).is_none());
}

#[test]
fn cited_rows_name_their_upstream_source() {
    // Each citation names a repository we read wordings from, a file in it, the function and
    // wording, and a version range; the rows checked so far stay cited.
    const REPOS: &[&str] = &[
        "kubernetes/kubernetes",
        "containerd/containerd",
        // containerd's CRI plugin before 1.5, vendored into containerd
        "containerd/cri",
        "cri-o/cri-o",
        "kubernetes-sigs/cri-tools",
        // dockerd, below dockershim and cri-dockerd
        "moby/moby",
        // the Go runtime's crash of any of them
        "golang/go",
        // the service manager that restarts the kubelet
        "systemd/systemd",
    ];
    let mut cited = 0;
    for f in messages::FAMILIES {
        for c in f.cites {
            assert!(REPOS.contains(&c.repo), "{}: {c:?}", f.source);
            assert!(
                (c.path.ends_with(".go")
                    || (c.repo == "systemd/systemd" && c.path.ends_with(".c")))
                    && !c.path.starts_with('/'),
                "{}: {c:?}",
                f.source
            );
            assert!(c.function.contains('`'), "{}: the wording: {c:?}", f.source);
            let (from, to) = c.versions.split_once('-').expect("a range");
            assert!(
                from.starts_with(|ch: char| ch.is_ascii_digit())
                    && to.starts_with(|ch: char| ch.is_ascii_digit()),
                "{}: {c:?}",
                f.source
            );
        }
        cited += usize::from(!f.cites.is_empty());
    }
    assert_eq!(cited, messages::FAMILIES.len(), "every family is cited");
}

#[test]
fn kubelet_families_are_cited_back_to_1_20() {
    // A kubelet family cites its wording of kubelet 1.20 or older, unless its call is newer
    // (nothing older to read); each such family says why.
    const NEWER: &[(&str, &str)] = &[
        (
            "kubelet_pods.go HandlePodCleanups",
            "the orphaned pods' container cleanup is logged from 1.21",
        ),
        (
            "pod_container_deletor.go getContainersToDeleteInPod (structured)",
            "the structured call; its legacy wording is the pod_container_deletor.go family's",
        ),
        (
            "kubelet generic PLEG: container finished",
            "added with structured logging; the legacy V4 `GenericPLEG: %v/%v: %v -> %v` state changes are the relist family's",
        ),
        (
            "pod_workers.go and kubelet_pods.go: the pod lifecycle",
            "the pod worker state machine of 1.22 (k/k #102344)",
        ),
        (
            "kubelet pod startup latency tracker",
            "pod_startup_latency_tracker.go is 1.27+",
        ),
        (
            "kubelet pod events as its event recorder logs them",
            "`Event occurred` is the recorder's structured log of 1.21+; the legacy `Event(v1.ObjectReference{…}): type: … reason: …` of <= 1.20 is read by the recorder family (`logs::recorder`)",
        ),
        (
            "kubelet syncLoopIteration: a readiness probe result",
            "syncLoopIteration logs no readiness result before 1.21",
        ),
        (
            "kubelet_node_status.go fastNodeStatusUpdate",
            "fastNodeStatusUpdate and its nodeReadyGracePeriod are 1.27+",
        ),
    ];
    let minor = |versions: &str| -> Option<u32> {
        versions.split('-').next()?.strip_prefix("1.")?.parse().ok()
    };
    for f in messages::FAMILIES {
        let kubelet: Vec<&messages::Cite> = f
            .cites
            .iter()
            .filter(|c| c.repo == "kubernetes/kubernetes")
            .collect();
        if kubelet.is_empty() {
            continue;
        }
        let old = kubelet
            .iter()
            .any(|c| minor(c.versions).is_some_and(|m| m <= 20));
        assert!(
            old || NEWER.iter().any(|(s, _)| f.source.starts_with(s)),
            "{}: no kubelet <= 1.20 wording cited ({:?})",
            f.source,
            kubelet.iter().map(|c| c.versions).collect::<Vec<_>>()
        );
    }
}

#[test]
fn legacy_and_new_wordings_of_this_round() {
    // kuberuntime_manager.go podSandboxChanged (kubelet <= 1.20) and util.go PodSandboxChanged
    check(&Row {
        line: r#"I0123 14:15:31.678211   26037 kuberuntime_manager.go:383] No ready sandbox for pod "matchdataserver-1255064836-t4b2w_basic(485fd485-1ed6-11e9-8661-0a587f8021ea)" can be found. Need to start a new one"#,
        kind: EventKind::PodSandboxNeeded,
        pods: &[(
            Some("basic"),
            "matchdataserver-1255064836-t4b2w",
            Some("485fd485-1ed6-11e9-8661-0a587f8021ea"),
        )],
        pod_uid: Some("485fd485-1ed6-11e9-8661-0a587f8021ea"),
        ..ROW
    });
    check(&Row {
        line: r#"I0512 11:18:37.276291   39085 util.go:48] "No ready sandbox for pod can be found. Need to start a new one" pod="kube-system/coredns-5db795bd57-z4257""#,
        kind: EventKind::PodSandboxNeeded,
        pods: &[(Some("kube-system"), "coredns-5db795bd57-z4257", None)],
        ..ROW
    });
    // the kubelet's CRI client failing RemoveContainer: a failure, not a removal started
    check(&Row {
        line: r#"E0205 11:04:59.813269    3223 remote_runtime.go:385] "RemoveContainer from runtime service failed" err="rpc error: code = NotFound desc = an error occurred when try to find container \"d6aef2230829c227ab9bae26c6ca36f3f49d406126b11f565b21c6795824156a\": not found" containerID="d6aef2230829c227ab9bae26c6ca36f3f49d406126b11f565b21c6795824156a""#,
        kind: EventKind::RemoveContainerFailed,
        cause: Some(Cause::NotFound),
        not_found: true,
        container: Some("d6aef2230829c227ab9bae26c6ca36f3f49d406126b11f565b21c6795824156a"),
        error: Some("rpc error: code = NotFound"),
        ..ROW
    });
    check(&Row {
        line: r#"E0205 11:04:59.813269    3223 remote_runtime.go:245] RemoveContainer "d6aef2230829c227ab9bae26c6ca36f3f49d406126b11f565b21c6795824156a" from runtime service failed: rpc error: code = Unknown desc = failed to remove container"#,
        kind: EventKind::RemoveContainerFailed,
        cause: Some(Cause::Other),
        container: Some("d6aef2230829c227ab9bae26c6ca36f3f49d406126b11f565b21c6795824156a"),
        error: Some("rpc error: code = Unknown"),
        ..ROW
    });
    // legacy SyncPod lines
    check(&Row {
        line: r#"I0601 10:00:00.000000    1234 kuberuntime_manager.go:654] Created PodSandbox "320983ce679b69a1fa11436cfe75780398955ba0c7487db46102f854b35ca69a" for pod "web-0_shop(5da3387d-ad1c-11ea-a025-525400767782)""#,
        kind: EventKind::PodSandboxCreated,
        pods: &[(
            Some("shop"),
            "web-0",
            Some("5da3387d-ad1c-11ea-a025-525400767782"),
        )],
        pod_uid: Some("5da3387d-ad1c-11ea-a025-525400767782"),
        sandbox: Some("320983ce679b69a1fa11436cfe75780398955ba0c7487db46102f854b35ca69a"),
        ..ROW
    });
    check(&Row {
        line: r#"E0601 10:00:00.000000    1234 kuberuntime_manager.go:662] createPodSandbox for pod "web-0_shop(5da3387d-ad1c-11ea-a025-525400767782)" failed: rpc error: code = Unknown desc = failed to set up sandbox container network for pod "web-0": NetworkPlugin cni failed to set up pod network"#,
        kind: EventKind::CreatePodSandboxFailed,
        cause: Some(Cause::Other),
        pods: &[(
            Some("shop"),
            "web-0",
            Some("5da3387d-ad1c-11ea-a025-525400767782"),
        )],
        pod_uid: Some("5da3387d-ad1c-11ea-a025-525400767782"),
        error: Some("rpc error: code = Unknown"),
        ..ROW
    });
    // dockershim's CNI DEL failing (deleteFromNetwork, later wording)
    check(&Row {
        line: r#"E0601 10:00:00.000000    1234 cni.go:387] Error deleting shop_web-0/320983ce679b69a1fa11436cfe75780398955ba0c7487db46102f854b35ca69a from network flannel/cbr0: failed to find plugin "flannel" in path [/opt/cni/bin]"#,
        kind: EventKind::DestroyNetworkFailed,
        cause: Some(Cause::CniTeardown(CniFailure::PluginMissing)),
        pods: &[(Some("shop"), "web-0", None)],
        sandbox: Some("320983ce679b69a1fa11436cfe75780398955ba0c7487db46102f854b35ca69a"),
        error: Some("failed to find plugin \"flannel\""),
        ..ROW
    });
}

fn one(line: &str) -> Event<'static> {
    let parsed = parse(line, &mut ParseContext::new(2025));
    classify(&parsed).expect("a catalogued line").into_owned()
}

#[test]
fn generic_pleg_relist_lines_of_both_eras() {
    // kubelet <= 1.20 (pleg/generic.go generateEvents, V4).
    let e = one(
        "I0102 06:28:13.485985  250135 generic.go:155] GenericPLEG: 2302e97a-03d2-11e9-9447-005056911476/6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0: running -> exited",
    );
    assert_eq!(e.kind, EventKind::PlegRelist(PlegType::ContainerDied));
    assert_eq!(
        e.ids.pod_uid.as_deref(),
        Some("2302e97a-03d2-11e9-9447-005056911476")
    );
    assert_eq!(e.ids.container_id.as_deref(), Some(C_6CF7));
    // 1.21+ (case 41's real v1.34.4 line).
    let e = one(
        r#"I1201 15:44:56.951053   18844 generic.go:199] "GenericPLEG" podUID="97c5d56c9ba83a00ab5d7a265b73ab6b" containerID="1ab04d6868929c51120cd576c33ab6fe75bc25ad652bd3e9b8d8da8d7dea29c1" oldState="non-existent" newState="running""#,
    );
    assert_eq!(e.kind, EventKind::PlegRelist(PlegType::ContainerStarted));
    assert_eq!(
        e.ids.pod_uid.as_deref(),
        Some("97c5d56c9ba83a00ab5d7a265b73ab6b")
    );
    assert_eq!(
        event_kind(&parse(
            "I0102 06:28:13.485985  250135 generic.go:155] GenericPLEG: u/c: exited -> non-existent",
            &mut ParseContext::new(2025)
        )),
        Some(EventKind::PlegRelist(PlegType::ContainerRemoved))
    );
}

#[test]
fn a_grpc_status_cut_inside_its_code_is_cut_and_read_only_when_unambiguous() {
    // Case 36, line 7: cut at `code = Dea`; only DeadlineExceeded begins so.
    let e = one(
        "E0102 06:43:18.110305  250135 remote_runtime.go:169] ListPodSandbox with filter nil from runtime service failed: rpc error: code = Dea",
    );
    assert!(e.truncated);
    assert_eq!(e.cause, Some(Cause::Timeout));
    // `D` is DeadlineExceeded or DataLoss: cut, its cause unknown.
    let e = one(
        "E0102 06:43:18.110305  250135 remote_runtime.go:169] ListPodSandbox with filter nil from runtime service failed: rpc error: code = D",
    );
    assert!(e.truncated);
    assert_eq!(e.cause, Some(Cause::Other));
    // A whole status is not cut.
    let e = one(
        "E0102 06:43:18.110305  250135 remote_runtime.go:169] ListPodSandbox with filter nil from runtime service failed: rpc error: code = Unavailable desc = connection refused",
    );
    assert!(!e.truncated);
}

#[test]
fn containerd_stop_timeout_and_closed_shim_wordings() {
    let e = one(&format!(
        r#"time="2025-01-02T06:28:13.485985Z" level=debug msg="Stop container \"{C_6CF7}\" with signal terminated timed out""#
    ));
    assert_eq!(e.kind, EventKind::StopSignalTimedOut);
    assert_eq!(e.ids.container_id.as_deref(), Some(C_6CF7));
    let e = one(&format!(
        r#"time="2025-01-02T06:28:13.485985Z" level=warning msg="Shim ttrpc connection closed when stopping container \"{C_6CF7}\", retry after 100ms" error="ttrpc: closed""#
    ));
    assert_eq!(e.kind, EventKind::StopContainerFailed);
    assert_eq!(e.ids.container_id.as_deref(), Some(C_6CF7));
}

#[test]
fn contains_words_takes_the_first_letter_in_either_case() {
    let w = "error reserving pod name";
    assert!(contains_words(
        "W1 Error reserving pod name k8s_a_b_c_0 for id 1",
        w
    ));
    assert!(contains_words(
        "rpc error: error reserving pod name k8s_a",
        w
    ));
    assert!(!contains_words("rpc error: Xrror reserving pod name", w));
    assert!(!contains_words("rror reserving pod name", w));
    assert!(!contains_words("error reserving pod", w));
}

#[test]
fn containerd_12s_stop_signal_wait_running_out_is_no_stop_failure() {
    // The wait for the stop signal ran out and SIGKILL follows (containerd/cri
    // `stopContainer`): once is a grace period ending; a stop failure is the wait after the kill.
    check(&Row {
        line: r#"time="2019-03-25T02:07:08.210779178-07:00" level=error msg="An error occurs during waiting for container \"50226b57f4b79111737460f54cc3e142631d8803efa6ecef58d808f8b56ed0a3\" to be stopped" error="wait container \"50226b57f4b79111737460f54cc3e142631d8803efa6ecef58d808f8b56ed0a3\" stop timeout""#,
        kind: EventKind::StopSignalTimedOut,
        container: Some("50226b57f4b79111737460f54cc3e142631d8803efa6ecef58d808f8b56ed0a3"),
        error: Some("wait container"),
        ..ROW
    });
}

#[test]
fn dockerd_kill_not_obeyed() {
    // deckhouse/deckhouse#336: SIGKILL through containerd did not end the container in 10 s.
    check(&Row {
        line: r#"Nov 30 14:54:10 kube-master-3 dockerd[1359]: time="2021-11-30T14:54:10.854068719+03:00" level=info msg="Container 7873876b3310 failed to exit within 10 seconds of kill - trying direct SIGKILL""#,
        kind: EventKind::StopContainerFailed,
        cause: Some(Cause::Timeout),
        partial: &[(IdKind::Container, "7873876b3310")],
        ..ROW
    });
    // The grace period running out before the SIGKILL: no failure.
    check(&Row {
        line: r#"Nov 30 14:54:00 kube-master-3 dockerd[1359]: time="2021-11-30T14:54:00.854068719+03:00" level=info msg="Container 7873876b33108c21164fff75a98946706d915628e30c5c9e4c562ee55805233c failed to exit within 30 seconds of signal 15 - using the force""#,
        kind: EventKind::StopSignalTimedOut,
        container: Some("7873876b33108c21164fff75a98946706d915628e30c5c9e4c562ee55805233c"),
        ..ROW
    });
}
