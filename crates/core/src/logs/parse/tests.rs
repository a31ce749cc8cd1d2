//! Table-driven tests of [`parse`](super::parse): one row per shape and quirk, each a real line
//! from `testdata/cases/` (case number in the comment) or `kubelet-forensics.md`.

use jiff::Timestamp;
use jiff::tz::Offset;

use super::*;
use crate::logs::record::{EnvelopeKind, FieldValue, Level};

/// What one row expects. `fields` lists (key, text) pairs that must be present, in order.
struct Row {
    line: &'static str,
    year: i32,
    format: Format,
    envelope: Option<EnvelopeKind>,
    ident: Option<&'static str>,
    time: Option<&'static str>,
    severity: Option<Level>,
    component: Option<Component>,
    pid: Option<u32>,
    caller: Option<&'static str>,
    msg: &'static str,
    fields: &'static [(&'static str, &'static str)],
    truncated: bool,
}

const ROW: Row = Row {
    line: "",
    year: 2020,
    format: Format::Unparsed,
    envelope: None,
    ident: None,
    time: None,
    severity: None,
    component: None,
    pid: None,
    caller: None,
    msg: "",
    fields: &[],
    truncated: false,
};

#[track_caller]
fn check(row: &Row) {
    let mut ctx = ParseContext::new(row.year);
    let p = parse(row.line, &mut ctx);
    let l = row.line;
    assert_eq!(p.raw, l);
    assert_eq!(p.format, row.format, "format: {l}");
    assert_eq!(
        p.envelope.as_ref().map(|e| e.kind),
        row.envelope,
        "envelope: {l}"
    );
    assert_eq!(
        p.envelope.as_ref().and_then(|e| e.ident.as_deref()),
        row.ident,
        "ident: {l}"
    );
    assert_eq!(
        p.time.map(|t| t.to_string()).as_deref(),
        row.time,
        "time: {l}"
    );
    assert_eq!(p.severity, row.severity, "severity: {l}");
    assert_eq!(p.component, row.component, "component: {l}");
    assert_eq!(p.pid, row.pid, "pid: {l}");
    assert_eq!(p.caller.as_deref(), row.caller, "caller: {l}");
    assert_eq!(p.msg, row.msg, "msg: {l}");
    let got: Vec<(&str, &str)> = p
        .fields
        .iter()
        .map(|f| (&*f.key, f.value.as_str()))
        .collect();
    assert_eq!(got, row.fields, "fields: {l}");
    assert_eq!(p.truncated, row.truncated, "truncated: {l}");
    if let Some(t) = p.time {
        assert_eq!(ctx.last, Some(t), "context follows the record: {l}");
    }
}

#[test]
fn legacy_klog() {
    // case 21: unstructured klog after a journald prefix
    check(&Row {
        line: r#"Oct 02 23:27:34 node-a kubelet[2783]: E1002 23:27:34.439481    2783 remote_runtime.go:132] StopPodSandbox "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60" from runtime service failed: rpc error: code = Unknown desc = failed to destroy network for sandbox "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60": del cmd: failed to process delete request"#,
        year: 2019,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet"),
        time: Some("2019-10-02T23:27:34.439481Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(2783),
        caller: Some("remote_runtime.go:132"),
        msg: r#"StopPodSandbox "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60" from runtime service failed: rpc error: code = Unknown desc = failed to destroy network for sandbox "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60": del cmd: failed to process delete request"#,
        ..ROW
    });
    // case 23: trailing spaces trimmed; `%!!(MISSING)q(<nil>)` kept
    check(&Row {
        line: "Sep 28 13:58:16 node-a kubelet[2081]: E0928 13:58:16.328854    2081 cni.go:312] Error deleting network: failed to open netns %!!(MISSING)q(<nil>): failed to Statfs \"\": no such file or directory    ",
        year: 2017,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet"),
        time: Some("2017-09-28T13:58:16.328854Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(2081),
        caller: Some("cni.go:312"),
        msg: "Error deleting network: failed to open netns %!!(MISSING)q(<nil>): failed to Statfs \"\": no such file or directory",
        ..ROW
    });
    // case 16: raw file, Go %#v dump with escaped quotes, 2015 glog
    check(&Row {
        line: r#"E0407 23:32:03.532257   18134 kubelet.go:1335] Failed creating a mirror pod "etcd-server-kubernetes-master_default": &errors.StatusError{ErrStatus:api.Status{Status:"Failure", Message:"pods \"etcd-server-kubernetes-master\" already exists", Reason:"AlreadyExists", Details:(*api.StatusDetails)(0xc208474c00), Code:409}}"#,
        year: 2015,
        format: Format::KlogText,
        time: Some("2015-04-07T23:32:03.532257Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(18134),
        caller: Some("kubelet.go:1335"),
        msg: r#"Failed creating a mirror pod "etcd-server-kubernetes-master_default": &errors.StatusError{ErrStatus:api.Status{Status:"Failure", Message:"pods \"etcd-server-kubernetes-master\" already exists", Reason:"AlreadyExists", Details:(*api.StatusDetails)(0xc208474c00), Code:409}}"#,
        ..ROW
    });
    // case 08: cut inside a quoted UID (an odd number of quotes)
    check(&Row {
        line: r#"E0508 00:36:36.698103     469 kubelet_volumes.go:114] Orphaned pod "0ea83064-3383-11e7-"#,
        year: 2017,
        format: Format::KlogText,
        time: Some("2017-05-08T00:36:36.698103Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(469),
        caller: Some("kubelet_volumes.go:114"),
        msg: r#"Orphaned pod "0ea83064-3383-11e7-"#,
        truncated: true,
        ..ROW
    });
    // case 36: the journald time lags the klog time by 21 minutes: the klog time wins
    check(&Row {
        line: "Jan 02 06:49:56 node-a kubelet[250135]: W0102 06:28:13.485985  250135 image_gc_manager.go:192] [imageGCManager] Failed to update image list: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
        year: 2019,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet"),
        time: Some("2019-01-02T06:28:13.485985Z"),
        severity: Some(Level::Warning),
        component: Some(Component::Kubelet),
        pid: Some(250135),
        caller: Some("image_gc_manager.go:192"),
        msg: "[imageGCManager] Failed to update image list: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
        ..ROW
    });
}

#[test]
fn structured_klog() {
    // case 06: raw file, unquoted list
    check(&Row {
        line: r#"I0321 17:10:59.291046  475498 kubelet.go:1948] "SyncLoop DELETE" source="api" pods=[default/test-sts-a-0]"#,
        format: Format::KlogStructured,
        time: Some("2020-03-21T17:10:59.291046Z"),
        severity: Some(Level::Info),
        component: Some(Component::Kubelet),
        pid: Some(475498),
        caller: Some("kubelet.go:1948"),
        msg: "SyncLoop DELETE",
        fields: &[("source", "api"), ("pods", "[default/test-sts-a-0]")],
        ..ROW
    });
    // kubelet-forensics.md §2: 1.29+ quoted list and JSON-ish container ID
    check(&Row {
        line: r#"I0613 10:15:42.123456    1234 pod_container_deletor.go:53] "DeleteContainer returned error" containerID={"Type":"containerd","ID":"c65a"} err="failed to get container status \"c65a\": rpc error: code = NotFound desc = an error occurred when try to find container \"c65a\": not found""#,
        format: Format::KlogStructured,
        time: Some("2020-06-13T10:15:42.123456Z"),
        severity: Some(Level::Info),
        component: Some(Component::Kubelet),
        pid: Some(1234),
        caller: Some("pod_container_deletor.go:53"),
        msg: "DeleteContainer returned error",
        fields: &[
            ("containerID", r#"{"Type":"containerd","ID":"c65a"}"#),
            (
                "err",
                r#"failed to get container status "c65a": rpc error: code = NotFound desc = an error occurred when try to find container "c65a": not found"#,
            ),
        ],
        ..ROW
    });
    // case 18: journald unit name as identifier; cut inside a nested escaped string
    check(&Row {
        line: r#"Oct 19 07:21:27 node-a kubelet.service[6774]: E1019 07:21:27.130112    6774 pod_workers.go:765] "Error syncing pod, skipping" err="failed to \"KillPodSandbox\" for \"5d6d2cc2c526ec6310afc8c64fac7052\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destr"#,
        year: 2021,
        format: Format::KlogStructured,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet.service"),
        time: Some("2021-10-19T07:21:27.130112Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(6774),
        caller: Some("pod_workers.go:765"),
        msg: "Error syncing pod, skipping",
        fields: &[(
            "err",
            r#"failed to "KillPodSandbox" for "5d6d2cc2c526ec6310afc8c64fac7052" with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destr"#,
        )],
        truncated: true,
    });
    // case 26: journalctl pager cut (`>`), %+v struct value on the next line
    check(&Row {
        line: r#"Dec 22 17:09:37 node-a kubelet[10468]: E1222 17:09:37.429430   10468 remote_runtime.go:205] "StopPodSandbox from runtime service failed" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c\": plugin type=\"weave-net\" name=\"weave\" failed (delete): netplugin failed with no error message: fork/exec /opt/cni/bin/weave>"#,
        year: 2022,
        format: Format::KlogStructured,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet"),
        time: Some("2022-12-22T17:09:37.42943Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(10468),
        caller: Some("remote_runtime.go:205"),
        msg: "StopPodSandbox from runtime service failed",
        fields: &[(
            "err",
            r#"rpc error: code = Unknown desc = failed to destroy network for sandbox "859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c": plugin type="weave-net" name="weave" failed (delete): netplugin failed with no error message: fork/exec /opt/cni/bin/weave"#,
        )],
        truncated: true,
    });
    check(&Row {
        line: "Dec 22 17:09:37 node-a kubelet[10468]: E1222 17:09:37.429469   10468 kuberuntime_manager.go:965] \"Failed to stop sandbox\" podSandboxID={Type:containerd ID:859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c}",
        year: 2022,
        format: Format::KlogStructured,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet"),
        time: Some("2022-12-22T17:09:37.429469Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(10468),
        caller: Some("kuberuntime_manager.go:965"),
        msg: "Failed to stop sandbox",
        fields: &[(
            "podSandboxID",
            "{Type:containerd ID:859999c1d8d33e2f9fc54e2011ed3ce02122eb6e4725a3e9825ecfb6e621a38c}",
        )],
        ..ROW
    });
    // case 12: a wrapper's identifier; unquoted podUID
    check(&Row {
        line: r#"Jun 06 04:10:32 node-a d8-kubelet-forker[1745]: I0606 04:10:32.997380    1745 kubelet_volumes.go:160] "Cleaned up orphaned pod volumes dir" podUID=11cfbe01-0e47-4835-97e4-dbf46dfccd66 path="/var/lib/kubelet/pods/11cfbe01-0e47-4835-97e4-dbf46dfccd66/volumes""#,
        year: 2023,
        format: Format::KlogStructured,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("d8-kubelet-forker"),
        time: Some("2023-06-06T04:10:32.99738Z"),
        severity: Some(Level::Info),
        component: Some(Component::Kubelet),
        pid: Some(1745),
        caller: Some("kubelet_volumes.go:160"),
        msg: "Cleaned up orphaned pod volumes dir",
        fields: &[
            ("podUID", "11cfbe01-0e47-4835-97e4-dbf46dfccd66"),
            (
                "path",
                "/var/lib/kubelet/pods/11cfbe01-0e47-4835-97e4-dbf46dfccd66/volumes",
            ),
        ],
        ..ROW
    });
    // klog multi-line `err=<` block as joined by the LineAssembler
    check(&Row {
        line: "E0613 10:15:42.123456    1234 pod_workers.go:951] \"Error syncing pod, skipping\" err=<\n\tfailed to \"KillPodSandbox\" for \"u1\"\n\tsecond line\n > pod=\"team-ns/p\"",
        format: Format::KlogStructured,
        time: Some("2020-06-13T10:15:42.123456Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(1234),
        caller: Some("pod_workers.go:951"),
        msg: "Error syncing pod, skipping",
        fields: &[
            (
                "err",
                "failed to \"KillPodSandbox\" for \"u1\"\nsecond line",
            ),
            ("pod", "team-ns/p"),
        ],
        ..ROW
    });
    // the same block's first line alone (the caller did not feed continuation lines)
    check(&Row {
        line: "E0613 10:15:42.123456    1234 pod_workers.go:951] \"Error syncing pod, skipping\" err=<",
        format: Format::KlogStructured,
        time: Some("2020-06-13T10:15:42.123456Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(1234),
        caller: Some("pod_workers.go:951"),
        msg: "Error syncing pod, skipping",
        fields: &[("err", "<")],
        ..ROW
    });
}

#[test]
fn kubelet_json() {
    // kubelet-forensics.md §5
    check(&Row {
        line: r#"{"ts":1655581336244.2942,"caller":"kubelet/kubelet.go:2102","msg":"SyncLoop REMOVE","v":2,"source":"api","pods":[{"name":"nettools","namespace":"dev"}]}"#,
        format: Format::Json,
        time: Some("2022-06-18T19:42:16.2442942Z"),
        severity: Some(Level::Info),
        component: Some(Component::Kubelet),
        caller: Some("kubelet/kubelet.go:2102"),
        msg: "SyncLoop REMOVE",
        fields: &[
            ("v", "2"),
            ("source", "api"),
            ("pods", r#"[{"name":"nettools","namespace":"dev"}]"#),
        ],
        ..ROW
    });
    // case 32: talosctl IP prefix, error inferred from `err` without `v`
    check(&Row {
        line: r#"10.0.0.8: {"ts":1757010309253.551,"caller":"internal/log.go:32","msg":"ListContainers with filter from runtime service failed","filter":"&ContainerFilter{Id:,State:nil,PodSandboxId:,LabelSelector:map[string]string{},}","err":"rpc error: code = DeadlineExceeded desc = context deadline exceeded"}"#,
        format: Format::Json,
        envelope: Some(EnvelopeKind::Tag),
        ident: Some("10.0.0.8"),
        time: Some("2025-09-04T18:25:09.253551Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        caller: Some("internal/log.go:32"),
        msg: "ListContainers with filter from runtime service failed",
        fields: &[
            (
                "filter",
                "&ContainerFilter{Id:,State:nil,PodSandboxId:,LabelSelector:map[string]string{},}",
            ),
            (
                "err",
                "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            ),
        ],
        ..ROW
    });
    // case 32: cut mid-object
    check(&Row {
        line: r#"10.0.0.8: {"ts":1757010289258.3184,"caller":"internal/log.go:32","msg":"ListConta"#,
        format: Format::Json,
        envelope: Some(EnvelopeKind::Tag),
        ident: Some("10.0.0.8"),
        time: Some("2025-09-04T18:24:49.2583184Z"),
        component: Some(Component::Kubelet),
        caller: Some("internal/log.go:32"),
        msg: "ListConta",
        truncated: true,
        ..ROW
    });
    // case 01: an embedded Docker JSON error is part of a printf message, not a JSON line
    check(&Row {
        line: r#"E0829 19:33:49.707741    2373 remote_runtime.go:126] RemovePodSandbox "d2a2" from runtime service failed: rpc error: code = 2 desc = Error response from daemon: {"message":"Unable to remove filesystem"}"#,
        year: 2017,
        format: Format::KlogText,
        time: Some("2017-08-29T19:33:49.707741Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(2373),
        caller: Some("remote_runtime.go:126"),
        msg: r#"RemovePodSandbox "d2a2" from runtime service failed: rpc error: code = 2 desc = Error response from daemon: {"message":"Unable to remove filesystem"}"#,
        ..ROW
    });
}

#[test]
fn runtime_logfmt() {
    // case 28: containerd without any prefix
    check(&Row {
        line: r#"time="2023-03-01T20:08:10.167346791Z" level=error msg="StopPodSandbox for \"4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399\" failed" error="failed to destroy network for sandbox \"4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399\": cni plugin not initialized""#,
        format: Format::Logfmt,
        time: Some("2023-03-01T20:08:10.167346791Z"),
        severity: Some(Level::Error),
        msg: r#"StopPodSandbox for "4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399" failed"#,
        fields: &[(
            "error",
            r#"failed to destroy network for sandbox "4285ab7ef1b33097068f6e2dfbf2a71c96129f45d0d6655d47d3dc80db5f0399": cni plugin not initialized"#,
        )],
        ..ROW
    });
    // Trial 9: containerd's lines as a bug report quoted them, `time=` dropped, the quoted
    // time left in front.
    check(&Row {
        line: r#""2023-11-22T09:37:33.491621635+02:00" level=info msg="StopPodSandbox for \"10788720d7b5285f2e1d4c932959e7ec6942d74bd421b42129d984927a4a3349\"""#,
        format: Format::Logfmt,
        time: Some("2023-11-22T07:37:33.491621635Z"),
        severity: Some(Level::Info),
        msg: r#"StopPodSandbox for "10788720d7b5285f2e1d4c932959e7ec6942d74bd421b42129d984927a4a3349""#,
        ..ROW
    });
    // A quote that is no time, or a time with no `level=` after it, is no such line.
    for line in [
        r#""hello" level=info msg="x""#,
        r#""2023-11-22T09:37:33Z" msg="x""#,
    ] {
        assert_ne!(
            parse(line, &mut ParseContext::new(2023)).format,
            Format::Logfmt,
            "{line}"
        );
    }
    // case 21: journald + unescaped inner quotes
    check(&Row {
        line: r#"Oct 02 23:27:34 node-a containerd[2639]: time="2019-10-02T23:27:34.417871363Z" level=info msg="StopPodSandbox for "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60"""#,
        year: 2019,
        format: Format::Logfmt,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("containerd"),
        time: Some("2019-10-02T23:27:34.417871363Z"),
        severity: Some(Level::Info),
        component: Some(Component::Containerd),
        pid: Some(2639),
        msg: r#"StopPodSandbox for "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60""#,
        ..ROW
    });
    // case 30: CRI-O, time with a space, UUID request id, gRPC method
    check(&Row {
        line: r#"Jun 29 17:14:10 node-a crio[95965]: time="2021-06-29 17:14:10.292290977+02:00" level=info msg="Stopping pod sandbox: 5b457b6bb989b9aad8157831100599811765823793722e7ab0c3b42cb8b31607" id=4783e552-d7ea-49b8-9458-356277a69675 name=/runtime.v1alpha2.RuntimeService/StopPodSandbox"#,
        year: 2021,
        format: Format::Logfmt,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("crio"),
        time: Some("2021-06-29T15:14:10.292290977Z"),
        severity: Some(Level::Info),
        component: Some(Component::Crio),
        pid: Some(95965),
        msg: "Stopping pod sandbox: 5b457b6bb989b9aad8157831100599811765823793722e7ab0c3b42cb8b31607",
        fields: &[
            ("id", "4783e552-d7ea-49b8-9458-356277a69675"),
            ("name", "/runtime.v1alpha2.RuntimeService/StopPodSandbox"),
        ],
        ..ROW
    });
    // case 06: `level=` first, no time (Cilium CNI)
    check(&Row {
        line: r#"level=warning msg="Unable to enter namespace \"\", will not delete interface" error="failed to Statfs \"\": no such file or directory" subsys=cilium-cni"#,
        format: Format::Logfmt,
        severity: Some(Level::Warning),
        msg: r#"Unable to enter namespace "", will not delete interface"#,
        fields: &[
            ("error", r#"failed to Statfs "": no such file or directory"#),
            ("subsys", "cilium-cni"),
        ],
        ..ROW
    });
    // case 24: dockerd logfmt with a -07:00 offset, syslog without [pid], padded day
    check(&Row {
        line: r#"Jun  8 22:53:30 node-a dockerd-current: time="2018-06-08T22:53:30.195593926-07:00" level=error msg="Handler for POST /v1.26/containers/636f/stop returned error: Container 636f is already stopped""#,
        year: 2018,
        format: Format::Logfmt,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("dockerd-current"),
        time: Some("2018-06-09T05:53:30.195593926Z"),
        severity: Some(Level::Error),
        component: Some(Component::Docker),
        msg: "Handler for POST /v1.26/containers/636f/stop returned error: Container 636f is already stopped",
        ..ROW
    });
    // case 03: crictl's own logrus text line
    check(&Row {
        line: r#"FATA[0000] getting the pod sandbox status for "app-1-0": rpc error: code = NotFound desc = an error occurred when try to find sandbox: not found"#,
        format: Format::LogrusText,
        severity: Some(Level::Fatal),
        msg: r#"getting the pod sandbox status for "app-1-0": rpc error: code = NotFound desc = an error occurred when try to find sandbox: not found"#,
        ..ROW
    });
}

#[test]
fn envelopes() {
    // case 03: /var/log/messages RFC 3339 prefix (UTC) around a klog line in +01:00 local time:
    // the two clocks differ by the zone, so klog's time is read in +01:00.
    check(&Row {
        line: r#"2023-01-20T12:26:08.334088+00:00 node-a kubelet[41736]: E0120 13:26:08.333859   41736 event.go:267] Server rejected event '&v1.Event{}'"#,
        year: 2000,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::SyslogRfc3339),
        ident: Some("kubelet"),
        time: Some("2023-01-20T12:26:08.333859Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(41736),
        caller: Some("event.go:267"),
        msg: "Server rejected event '&v1.Event{}'",
        ..ROW
    });
    // case 09: journald with a 7-digit PID and klog's single space
    check(&Row {
        line: r#"Aug 31 14:21:49 node-a kubelet[2240370]: E0831 14:21:49.324206 2240370 kubelet_volumes.go:154] Orphaned pod "5da3387d-ad1c-11ea-a025-525400767782" found, but volume paths are still present on disk : There were a total of 1 errors similar to this. Turn up verbosity to see them."#,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet"),
        time: Some("2020-08-31T14:21:49.324206Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(2240370),
        caller: Some("kubelet_volumes.go:154"),
        msg: r#"Orphaned pod "5da3387d-ad1c-11ea-a025-525400767782" found, but volume paths are still present on disk : There were a total of 1 errors similar to this. Turn up verbosity to see them."#,
        ..ROW
    });
    // case 09: a syslog fragment without time and host
    check(&Row {
        line: r#"kubelet: E0309 16:46:30.429770    3112 kubelet_volumes.go:128] Orphaned pod "2815f27a-219b-11e8-8a2a-ec0d9a3a445a" found, but volume paths are still present on disk : There were a total of 1 errors similar to this. Turn up verbosity to see them."#,
        year: 2018,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::Tag),
        ident: Some("kubelet"),
        time: Some("2018-03-09T16:46:30.42977Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(3112),
        caller: Some("kubelet_volumes.go:128"),
        msg: r#"Orphaned pod "2815f27a-219b-11e8-8a2a-ec0d9a3a445a" found, but volume paths are still present on disk : There were a total of 1 errors similar to this. Turn up verbosity to see them."#,
        ..ROW
    });
    // case 09: another program's own format inside syslog
    check(&Row {
        line: r#"Oct 15 14:48:41 node-b start-etcd.sh: 2019-10-15 14:48:41.930053 I | embed: rejected connection from "10.0.0.2:58860" (error "EOF", ServerName "")"#,
        year: 2019,
        format: Format::Plain,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("start-etcd.sh"),
        time: Some("2019-10-15T14:48:41Z"),
        component: Some(Component::Other),
        msg: r#"2019-10-15 14:48:41.930053 I | embed: rejected connection from "10.0.0.2:58860" (error "EOF", ServerName "")"#,
        ..ROW
    });
    // case 17: hyperkube identifier
    check(&Row {
        line: r#"Jul 29 20:54:44 node-a hyperkube[1526]: I0729 20:54:44.122924    1526 kubelet.go:1904] SyncLoop (REMOVE, "file"): "kube-apiserver-node-a_openshift-kube-apiserver(60d66dd8b81c2a4756d2e2f69ec1e3fc)""#,
        year: 2019,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("hyperkube"),
        time: Some("2019-07-29T20:54:44.122924Z"),
        severity: Some(Level::Info),
        component: Some(Component::Kubelet),
        pid: Some(1526),
        caller: Some("kubelet.go:1904"),
        msg: r#"SyncLoop (REMOVE, "file"): "kube-apiserver-node-a_openshift-kube-apiserver(60d66dd8b81c2a4756d2e2f69ec1e3fc)""#,
        ..ROW
    });
    // case 14: a prefix with an empty body
    check(&Row {
        line: "Apr 16 05:16:28 node-a",
        year: 2018,
        format: Format::Plain,
        envelope: Some(EnvelopeKind::Syslog),
        time: Some("2018-04-16T05:16:28Z"),
        truncated: true,
        ..ROW
    });
    // case 23: a prefix cut inside its time
    check(&Row {
        line: "Sep 28 1",
        format: Format::Plain,
        envelope: Some(EnvelopeKind::Syslog),
        truncated: true,
        ..ROW
    });
    // case 25: a klog header cut in its time
    check(&Row {
        line: "Oct 19 13:07:22 node-a kubelet[1736]: E1019 13:07:22.224",
        year: 2022,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet"),
        time: Some("2022-10-19T13:07:22.224Z"),
        severity: Some(Level::Error),
        component: Some(Component::Kubelet),
        pid: Some(1736),
        truncated: true,
        ..ROW
    });
    // case 11: cut in the caller
    check(&Row {
        line: "Nov 18 01:57:50 node-a kubelet[4133404]: I1118 01:57:50.544661 4133404 kubelet_v",
        year: 2022,
        format: Format::KlogText,
        envelope: Some(EnvelopeKind::Syslog),
        ident: Some("kubelet"),
        time: Some("2022-11-18T01:57:50.544661Z"),
        severity: Some(Level::Info),
        component: Some(Component::Kubelet),
        pid: Some(4133404),
        caller: Some("kubelet_v"),
        truncated: true,
        ..ROW
    });
}

#[test]
fn not_log_lines() {
    for line in [
        "user@node-a:~> sudo journalctl -u containerd --no-pager | grep 06f0eea7928b1",
        "POD ID              CREATED             STATE               NAME",
        "06f0eea7928b1       2 days ago          NotReady            app-1-0          team-ns",
        "-rw-------. 1 root root    0 Feb 24 04:43 aws-cni-ace318daccdc6ce88de8f8ae7156256a9f17c7a44da4969eb30a2fba68e815db-eth0",
        "Removed sandbox 06f0eea7928b1",
        "",
        "   ",
        "{not json",
    ] {
        let mut ctx = ParseContext::new(2023);
        let p = parse(line, &mut ctx);
        assert_eq!(p.format, Format::Unparsed, "{line}");
        assert_eq!(p.msg, line, "the raw text is kept: {line}");
        assert_eq!(ctx.last, None);
    }
    // message-only sources (Loki exports): header-less lines are messages
    let mut ctx = ParseContext::new(2025);
    ctx.message_only = true;
    let line = r#"StopPodSandbox from runtime service failed: rpc error: code = Unknown desc = failed to destroy network for sandbox "055b221e44a28ce8d9120f771d5e1ef201f2457ce49c58999a0147104cca2708": failed to get network "cbr0" cached result: decoding version from network config: unexpected end of JSON input"#;
    let p = parse(line, &mut ctx);
    assert_eq!(p.format, Format::Message);
    assert_eq!(p.msg, line);
    assert_eq!(parse("", &mut ctx).format, Format::Unparsed);
}

#[test]
fn year_inference_and_new_year() {
    let mut ctx = ParseContext::new(2022);
    let lines = [
        (
            "Dec 31 23:59:58 node-a kubelet[1]: I1231 23:59:58.000001 1 a.go:1] x",
            "2022-12-31T23:59:58.000001Z",
        ),
        // a line straggling in from the previous year stays there
        (
            "Jan 01 00:00:01 node-a kubelet[1]: I0101 00:00:01.000000 1 a.go:1] x",
            "2023-01-01T00:00:01Z",
        ),
        (
            "Jan 01 00:00:02 node-a kubelet[1]: I1231 23:59:59.999999 1 a.go:1] late",
            "2022-12-31T23:59:59.999999Z",
        ),
        (
            "Jan 01 00:00:03 node-a kubelet[1]: I0101 00:00:03.000000 1 a.go:1] x",
            "2023-01-01T00:00:03Z",
        ),
    ];
    for (line, want) in lines {
        let p = parse(line, &mut ctx);
        assert_eq!(p.time.unwrap().to_string(), want, "{line}");
    }
    assert_eq!(ctx.year, 2023);
    // a full-year timestamp resets the year for the klog lines after it
    let mut ctx = ParseContext::new(2000);
    parse(
        r#"time="2019-10-02T23:27:34.417871363Z" level=info msg="x""#,
        &mut ctx,
    );
    assert_eq!(ctx.year, 2019);
    let p = parse(
        "E1002 23:27:34.439481    2783 remote_runtime.go:132] y",
        &mut ctx,
    );
    assert_eq!(p.time.unwrap().to_string(), "2019-10-02T23:27:34.439481Z");
    // a zone for zone-less times
    let mut ctx = ParseContext::new(2025);
    ctx.offset = Offset::from_seconds(8 * 3600).unwrap();
    let p = parse(
        "Mar 14 14:34:57 node-a kubelet[912]: I0314 14:34:57.527007 912 a.go:1] x",
        &mut ctx,
    );
    assert_eq!(p.time.unwrap().to_string(), "2025-03-14T06:34:57.527007Z");
}

#[test]
fn fields_by_name() {
    let mut ctx = ParseContext::new(2021);
    let p = parse(
        r#"I1019 07:20:46.701995    6774 kuberuntime_container.go:714] "Killing container with a grace period" pod="team-ns/static-nginx-10.0.0.11" podUID=5d6d2cc2c526ec6310afc8c64fac7052 containerName="static-nginx" containerID="containerd://7d0f1944976c8b4d75f44226e5f1ae59d08da416e4d776f47a2a265a2015548a" gracePeriod=30"#,
        &mut ctx,
    );
    assert_eq!(p.field("gracePeriod"), Some("30"));
    assert_eq!(p.field("podUID"), Some("5d6d2cc2c526ec6310afc8c64fac7052"));
    assert_eq!(p.field("missing"), None);
    assert!(matches!(
        p.field_value("containerName"),
        Some(FieldValue::Quoted(_))
    ));
    assert!(matches!(
        p.field_value("gracePeriod"),
        Some(FieldValue::Bare(_))
    ));
    assert!(p.is_parsed());
    // borrowed when nothing needed unescaping
    assert!(matches!(p.msg, Cow::Borrowed(_)));
}

mod never_panics {
    //! Property: any text parses, classifies and assembles without panicking, and the context
    //! stays usable. Inputs splice pieces of real lines with arbitrary (multi-byte) characters so
    //! that every cut position inside a header, quote, escape or bracket is reached.

    use proptest::prelude::*;

    use super::super::parse;
    use crate::logs::{LineAssembler, ParseContext, classify, event_kind};

    const PIECES: &[&str] = &[
        "Oct 19 07:21:27 node-a kubelet.service[6774]: ",
        "2023-01-20T12:26:08.948163+00:00 node-a containerd[1]: ",
        "10.0.0.8: ",
        "kubelet: ",
        "E1019 07:21:27.130112    6774 pod_workers.go:765] ",
        "kubelet_volumes.go:154] ",
        r#""Error syncing pod, skipping" "#,
        r#""Failed to stop sandbox \"cae5\"" "#,
        r#""ContainerStatus from runtime ser"#,
        r#""\tSyncLoop ADD" "#,
        r#""Observed pod startup duration" "#,
        r#""an error occurred when try to find container \"c65a\"" "#,
        " k",
        " err=\"",
        "\\x20",
        "\\u0020",
        "\\040",
        "ID does",
        " not exist",
        r#"err="failed to \"KillPodSandbox\" for \"5d6d\" with \\\"x\\\"""#,
        "err=<\n\tline\n > ",
        "pods=[default/x] ",
        r#"pods=["default/x"] "#,
        r#"containerID={"Type":"containerd","ID":"c65a"} "#,
        "event=&{ID:ab7e1b0b-453f-4627-a749-47e48c2265a6 Type:ContainerDied Data:6cf7} ",
        r#"time="2019-10-02T23:27:34.43935945Z" level=error msg="StopPodSandbox for "cae5" failed" "#,
        r#"{"ts":1655581336244.2942,"caller":"kubelet/kubelet.go:2102","msg":"SyncLoop REMOVE","pods":[{"name":"n","namespace":"d"}]}"#,
        r#"{"__REALTIME_TIMESTAMP":"1674221168948163","MESSAGE":[69,48,49]}"#,
        "FATA[0000] ",
        "k8s_POD_app-1-0_ns_6abac9df-1ac3-4ec1-8375-66bdead3b596_0",
        "/var/lib/kubelet/pods/0ea83064-3383-11e7-",
        "cae59246074a27247c54d43ffd3f68be61121bcc741133b940e7188002e34f60",
        "\\u12",
        "\\x",
        "\\",
        "\"",
        "<",
        ">",
        "{",
        "[",
        "(",
        "é",
        "☺",
        "😀",
        "\u{0}",
        "\t",
        "\n",
        " ",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                prop::sample::select(PIECES).prop_map(str::to_owned),
                any::<String>(),
                "[\\x00-\\x7f]{0,8}",
            ],
            0..12,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn parse_classify_assemble(s in text(), year in 1i32..9999, message_only: bool) {
            let mut ctx = ParseContext::new(year);
            ctx.message_only = message_only;
            if let Err(e) = super::super::skims_like_parse(&s, &ctx) {
                prop_assert!(false, "{}", e);
            }
            let p = parse(&s, &mut ctx);
            let event = classify(&p).map(|e| e.into_owned());
            prop_assert_eq!(event_kind(&p), event.map(|e| e.kind));
            // every prefix too: lines are cut anywhere
            for (at, _) in s.char_indices() {
                if let Err(e) = super::super::skims_like_parse(&s[..at], &ctx) {
                    prop_assert!(false, "{}", e);
                }
                let p = parse(&s[..at], &mut ctx);
                let _ = classify(&p);
            }
            let mut asm = LineAssembler::with_max_record_bytes(64);
            let mut n = 0u64;
            for line in s.split('\n') {
                if let Some(r) = asm.push(line) {
                    n += u64::from(r.lines);
                    let p = parse(r.text, &mut ctx);
                    let _ = classify(&p);
                }
            }
            if let Some(r) = asm.finish() {
                n += u64::from(r.lines);
            }
            prop_assert_eq!(n, s.split('\n').count() as u64);
        }
    }
}

#[test]
fn contexts_that_resolve_alike_parse_alike() {
    let at = |s: &str| Some(s.parse::<Timestamp>().unwrap());
    let ctx = |year: i32, last: Option<Timestamp>| ParseContext {
        last,
        ..ParseContext::new(year)
    };
    let contexts = [
        ctx(2025, None),
        ctx(2025, at("2025-06-13T10:00:00Z")),
        ctx(2025, at("2025-03-01T00:00:00Z")),
        ctx(2025, at("2025-12-31T23:00:00Z")),
        ctx(2025, at("2025-12-01T00:00:00Z")),
        ctx(2025, at("2025-01-01T00:00:00Z")),
        ctx(2024, at("2024-06-13T10:00:00Z")),
        ParseContext {
            message_only: true,
            ..ctx(2025, None)
        },
    ];
    let lines = [
        "I0102 06:48:09.771347  250135 kubelet.go:1] \"SyncLoop ADD\" source=\"api\" pods=[\"a/b\"]",
        "E1231 23:59:59.000001    1234 kubelet.go:1] legacy message",
        "Jan 02 06:51:37 node-a kubelet[250135]: W0102 06:48:09.771347  250135 a.go:1] x",
        "Dec 31 23:59:59 node-a containerd[1]: time=\"2019-01-02T17:13:13.089713206Z\" level=info msg=\"m\"",
        "Jun 13 10:15:42 node-a kubelet[1]: plain text",
        "not a log line",
    ];
    for a in &contexts {
        for b in &contexts {
            if !a.resolves_like(b) {
                continue;
            }
            for line in lines {
                let (mut ca, mut cb) = (a.clone(), b.clone());
                assert_eq!(parse(line, &mut ca), parse(line, &mut cb), "{line}");
                assert!(ca.resolves_like(&cb), "{line}: {ca:?} / {cb:?}");
            }
        }
    }
    // The New Year classes differ where it matters: a January line after December.
    let (mut dec, mut jun) = (contexts[3].clone(), contexts[1].clone());
    assert!(!dec.resolves_like(&jun));
    assert_ne!(
        parse(lines[0], &mut dec).time,
        parse(lines[0], &mut jun).time
    );
    assert!(contexts[0].resolves_like(&contexts[1]));
    assert!(!contexts[0].resolves_like(&contexts[6]));
}

#[test]
fn time_and_level() {
    // zap's console encoder and other Go loggers: an RFC 3339 time, a level word, the message,
    // trailing key=value fields.
    check(&Row {
        line: r#"2024-05-01T10:00:00.123Z ERROR StopPodSandbox from runtime service failed err="rpc error: code = DeadlineExceeded desc = context deadline exceeded" podSandboxID="b25b1fe9f0eae615534102c4a2d370897be12abe05d26408e6baed4556c3d1f1""#,
        format: Format::TimeLevel,
        time: Some("2024-05-01T10:00:00.123Z"),
        severity: Some(Level::Error),
        msg: "StopPodSandbox from runtime service failed",
        fields: &[
            (
                "err",
                "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            ),
            (
                "podSandboxID",
                "b25b1fe9f0eae615534102c4a2d370897be12abe05d26408e6baed4556c3d1f1",
            ),
        ],
        ..ROW
    });
    // A zone offset, a bracketed level, a message with no fields (an `=` inside the text).
    check(&Row {
        line: "2024-05-01T10:00:01.5+02:00 [WARN] Killing container 71b0eae0bec1 failed: a=b c",
        format: Format::TimeLevel,
        time: Some("2024-05-01T08:00:01.5Z"),
        severity: Some(Level::Warning),
        msg: "Killing container 71b0eae0bec1 failed: a=b c",
        ..ROW
    });
    // zap console: tabs, a caller, a quoted message.
    check(&Row {
        line: "2024-05-01T10:00:02.000Z\tinfo\tserver/server.go:42\t\"Stopped pod sandbox\" id=abc",
        format: Format::TimeLevel,
        time: Some("2024-05-01T10:00:02Z"),
        severity: Some(Level::Info),
        caller: Some("server/server.go:42"),
        msg: "Stopped pod sandbox",
        fields: &[("id", "abc")],
        ..ROW
    });
    // `<time> level=… msg=…`: logfmt after a bare time (also with a space for the `T`).
    check(&Row {
        line: r#"2024-05-01 10:00:04.123 level=error msg="StopPodSandbox for \"b25b\" failed" error="x""#,
        format: Format::TimeLevel,
        time: Some("2024-05-01T10:00:04.123Z"),
        severity: Some(Level::Error),
        msg: r#"StopPodSandbox for "b25b" failed"#,
        fields: &[("error", "x")],
        ..ROW
    });
    // A host is no level: the RFC 3339 syslog envelope still reads it.
    let mut ctx = ParseContext::new(2024);
    let p = parse(
        "2024-05-01T10:00:00Z worker-1 kubelet[1]: I0501 10:00:00.000000 1 a.go:1] x",
        &mut ctx,
    );
    assert_eq!(
        p.envelope.map(|e| e.kind),
        Some(EnvelopeKind::SyslogRfc3339)
    );
}

/// The times of `lines` parsed in turn from one context, as RFC 3339 text.
fn times_in_turn(lines: &[&str]) -> Vec<String> {
    let mut ctx = ParseContext::new(2023);
    lines
        .iter()
        .map(|l| {
            parse(l, &mut ctx)
                .time
                .map(|t| t.to_string())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn the_nodes_zone_is_learned_from_a_zone_less_time_beside_a_zoned_one() {
    // kubernetes/kubernetes#120988: rsyslog's prefix in +03:00, klog's header local.
    let t = times_in_turn(&[
        r#"2023-10-04T17:00:00.153315+03:00 host kubelet[62668]: E1004 17:00:00.153261   62668 manager.go:1106] Failed to create existing container: /kubepods.slice/x: task 1 not found"#,
        r#"E1004 17:00:05.000000   62668 manager.go:1106] Failed to create existing container: /kubepods.slice/y: task 2 not found"#,
    ]);
    assert_eq!(t, ["2023-10-04T14:00:00.153261Z", "2023-10-04T14:00:05Z"]);

    // Case 03: rsyslog's prefix in UTC, klog's header in +01:00.
    let t = times_in_turn(&[
        r#"2023-01-20T12:26:08.334088+00:00 node-a kubelet[41736]: E0120 13:26:08.333859   41736 event.go:267] Server rejected event"#,
    ]);
    assert_eq!(t, ["2023-01-20T12:26:08.333859Z"]);

    // journalctl's short prefix is local time: containerd's zoned `time=` shows the zone, and the
    // kubelet's klog lines after it are read in it.
    let t = times_in_turn(&[
        r#"Oct 04 17:01:00 node containerd[900]: time="2023-10-04T14:01:00.099Z" level=info msg="StopPodSandbox for \"abc\" returns successfully""#,
        r#"Oct 04 17:01:02 node kubelet[62668]: I1004 17:01:02.000000   62668 kubelet.go:2063] "SyncLoop DELETE" source="api" pods=["a/b"]"#,
    ]);
    assert_eq!(t, ["2023-10-04T14:01:00.099Z", "2023-10-04T14:01:02Z"]);

    // Not a zone: the same moment within seconds (a UTC node), a zone-less `time=`, and a
    // difference that is no quarter hour (a late line, a skewed clock).
    let t = times_in_turn(&[
        r#"2023-10-04T17:00:00.153315Z host kubelet[62668]: E1004 17:00:00.153261   62668 manager.go:1106] x"#,
        r#"Oct 04 17:01:00 node containerd[900]: time="2023-10-04 17:40:00" level=info msg="x""#,
        r#"2023-10-04T17:00:00+00:00 host kubelet[62668]: E1004 17:07:00.000000   62668 manager.go:1106] x"#,
        r#"E1004 17:08:00.000000   62668 manager.go:1106] x"#,
    ]);
    assert_eq!(t[0], "2023-10-04T17:00:00.153261Z");
    assert_eq!(t[2], "2023-10-04T17:07:00Z");
    assert_eq!(t[3], "2023-10-04T17:08:00Z");
}

/// [`parse_unless_unnamed`] reads every record of every case file as [`parse`] does where it
/// matters ([`skims_like_parse`]): the records are assembled as the reader assembles them, each
/// read from the context the records before it left.
#[test]
fn skimming_reads_every_case_record_as_parsing_does() {
    let mut records = 0usize;
    let mut skimmed = 0usize;
    for (file, text) in crate::case_files::case_files() {
        let mut ctx = ParseContext::new(2022);
        let mut asm = crate::logs::LineAssembler::new();
        let mut check = |record: &str, ctx: &mut ParseContext| {
            if let Err(e) = skims_like_parse(record, ctx) {
                panic!("{}: {e}", file.display());
            }
            records += 1;
            skimmed += usize::from(!parse_unless_unnamed(record, &mut ctx.clone()).may_be_named);
            let _ = parse(record, ctx);
        };
        for line in text.split('\n') {
            if let Some(r) = asm.push(line) {
                check(r.text, &mut ctx);
            }
        }
        if let Some(r) = asm.finish() {
            check(r.text, &mut ctx);
        }
    }
    // The cases are read, and some of their records are skimmed: the test checks something.
    assert!(records > 3000, "{records} records");
    assert!(skimmed > 100, "{skimmed} of {records} records skimmed");
}

/// A structured message whose closing quote is there but whose pairs were cut (a key cut before
/// its `=`) is read as the start of a known structured message, as a message cut before its
/// quote is (case 05): skimming must not lose it.
#[test]
fn skimming_keeps_a_closed_message_whose_pairs_were_cut() {
    let line =
        r#"I0613 10:15:42.123456    1234 kuberuntime_container.go:1] "killContaine" containe"#;
    let full = parse(line, &mut ParseContext::new(2022));
    assert!(full.truncated, "{full:?}");
    assert_eq!(full.format, crate::logs::Format::KlogStructured, "{full:?}");
    assert!(full.fields.is_empty(), "{full:?}");
    assert!(crate::logs::classify(&full).is_some(), "{full:?}");
    skims_like_parse(line, &ParseContext::new(2022)).unwrap();
}

/// Records that a first version of skimming read unlike [`parse`] (a helper's adversarial
/// run): escapes that stand for printable bytes inside a wording's words or a phrase (Go's
/// `\x20`, `\u0020`, `\040`), a phrase only in the decoded text of a wrapper (journald's byte
/// array `MESSAGE`, a docker JSON `log` with `\u0020`), and a record of neither time (`I0230`
/// is no date) nor caller after a prefix, which is one only by its fields.
#[test]
fn skimming_reads_what_escapes_and_decoding_hide_as_parsing_does() {
    let journald_bytes = {
        let text = r#"E0613 10:15:42.123456 1 a.go:1] "x" err="ID does not exist""#;
        let bytes: Vec<String> = text.bytes().map(|b| b.to_string()).collect();
        format!(r#"{{"MESSAGE": [{}]}}"#, bytes.join(", "))
    };
    let named = [
        r#"I0613 10:15:42.123456 1 a.go:1] "Removing\x20sandbox""#,
        r#"I0613 10:15:42.123456 1 a.go:1] "Removing\u0020sandbox""#,
        r#"I0613 10:15:42.123456 1 a.go:1] "Removing\040sandbox""#,
        r#"E0613 10:15:42.123456 1 a.go:1] "x" err="ID does\x20not exist""#,
        r#"E0613 10:15:42.123456 1 a.go:1] "ID does\u0020not exist""#,
        &journald_bytes,
        r#"{"log":"E0613 10:15:42.123456 1 a.go:1] \"x\" err=\"ID does\u0020not exist\"\n"}"#,
        // `\'` is read as `'`, which a phrase holds (a helper's differential run).
        r#"I1205 14:00:00.123456    1234 kubelet.go:2431] "x" err="sources aren\'t ready yet""#,
        r#"I1205 14:00:00.123456    1234 kubelet.go:2431] "sources aren\'t ready yet""#,
    ];
    for line in named {
        let full = parse(line, &mut ParseContext::new(2022));
        assert!(crate::logs::classify(&full).is_some(), "{line}: {full:?}");
        skims_like_parse(line, &ParseContext::new(2022)).unwrap();
    }
    for line in [
        r#"    I0230 10:15:42.123456 "SyncLoop ADD" source="api""#,
        r#"{"log":"I0230 10:15:42.123456 \"SyncLoop ADD\" source=\"api\"\n"}"#,
    ] {
        assert!(
            parse(line, &mut ParseContext::new(2022)).is_parsed(),
            "{line}"
        );
        skims_like_parse(line, &ParseContext::new(2022)).unwrap();
    }
}

#[test]
fn a_syslog_time_with_neither_host_nor_identifier_keeps_the_records_own_time() {
    // containerd/containerd#10636: the record's zoned time, not the yearless prefix in UTC.
    let l = r#"Aug  7 19:07:50 time="2024-08-07T19:07:50.952326934+08:00" level=info msg="Kill container \"f25340780aa0d6357b69c6bd67596533ec12310e92284bf9f7b946cfe1ef9c09\"""#;
    let mut ctx = ParseContext::new(2026);
    let p = parse(l, &mut ctx);
    assert_eq!(
        p.time.map(|t| t.to_string()).as_deref(),
        Some("2024-08-07T11:07:50.952326934Z")
    );
    assert!(p.msg.starts_with("Kill container"), "{}", p.msg);
}
