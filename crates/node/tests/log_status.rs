//! `gather::log_status` on logs of the wrong program: never a clean bill.

use podcoroner_core::event::LogKind;
use podcoroner_logs::{Source, read};
use podcoroner_node::api::SourceState;
use podcoroner_node::gather::log_status;

fn status_of(text: &str, kind: LogKind) -> podcoroner_node::api::SourceStatus {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("given.log");
    std::fs::write(&path, text).unwrap();
    let source = Source::File(path);
    let got = read(&source, kind, None).unwrap();
    log_status(&source, kind, &got)
}

#[test]
fn a_syslog_of_other_programs_is_the_wrong_file() {
    let syslog = "Dec  6 10:00:01 node-a CRON[1234]: (root) CMD (run-parts /etc/cron.hourly)\n\
                  Dec  6 10:01:02 node-a sshd[555]: Accepted publickey for root from 10.0.0.1 port 5555\n\
                  Dec  6 10:02:03 node-a systemd[1]: Started Session 5 of user root.\n";
    let s = status_of(syslog, LogKind::Kubelet);
    assert_eq!(s.status, Some(SourceState::NotUnderstood), "{s:?}");
    let detail = s.detail.unwrap_or_default();
    assert!(
        detail.contains("none of its 3 records is the kubelet's or a container runtime's")
            && detail.contains("they are CRON's, sshd's: the wrong file?"),
        "{detail}"
    );
    // The service manager's lines about a unit are what `journalctl -u kubelet` shows before
    // the kubelet logs anything: no wrong file.
    let started =
        "Dec  6 10:02:03 node-a systemd[1]: Started kubelet: The Kubernetes Node Agent.\n";
    assert_eq!(
        status_of(started, LogKind::Kubelet).status,
        Some(SourceState::Ok)
    );
    // The same with one kubelet line among them: read, and ok.
    let mixed = format!(
        "{syslog}Dec  6 10:03:04 node-a kubelet[99]: I1206 10:03:04.000000      99 kubelet.go:2428] \"Starting kubelet main sync loop\"\n"
    );
    assert_eq!(
        status_of(&mixed, LogKind::Kubelet).status,
        Some(SourceState::Ok)
    );
    // The kubelet's klog under a wrapper script's identifier is the kubelet's (a kubelet
    // started by `sh -c`, trial 9).
    let wrapped = "Aug 06 07:34:00 ip-192-168-3-40 sh[3408]: I0806 07:34:00.150576    3408 factory.go:54] Registering systemd factory\n";
    assert_eq!(
        status_of(wrapped, LogKind::Kubelet).status,
        Some(SourceState::Ok)
    );
    // A runtime's log under a distribution's identifier (microk8s) is the runtime's.
    let microk8s = "Sep 22 13:53:27 node-a microk8s.daemon-containerd[2723]: time=\"2022-09-22T13:53:27.490413622Z\" level=info msg=\"loading plugin\"\n";
    assert_eq!(
        status_of(microk8s, LogKind::Runtime).status,
        Some(SourceState::Ok)
    );
}

#[test]
fn another_components_log_in_the_kubelets_shape_is_the_wrong_file() {
    // etcd's zap JSON, as etcd 3.6 logs it (the real node's etcd).
    let etcd = r#"{"level":"info","ts":"2026-12-07T08:41:50.112Z","caller":"embed/config.go:705","msg":"Running http and grpc server on single port. This is not recommended for production."}
{"level":"info","ts":"2026-12-07T08:41:50.113Z","caller":"etcdmain/etcd.go:64","msg":"Running: ","args":["etcd"]}
{"level":"info","ts":"2026-12-07T08:41:51.200Z","caller":"etcdserver/server.go:2044","msg":"published local member to cluster through raft"}
"#;
    let s = status_of(etcd, LogKind::Kubelet);
    assert_eq!(s.status, Some(SourceState::NotUnderstood), "{s:?}");
    let detail = s.detail.unwrap_or_default();
    assert!(
        detail.contains(
            "3 of its 3 records come from etcd's (embed/config.go) code, none from the kubelet's"
        ),
        "{detail}"
    );
    // kube-apiserver's klog: its flags (a file every component shares) and its own packages.
    let apiserver = "I1207 08:41:51.652331   70001 flags.go:64] FLAG: --advertise-address=\"10.0.0.1\"\n\
                     I1207 08:41:52.100000   70001 genericapiserver.go:796] \"Waiting for the apiserver to be ready\"\n\
                     I1207 08:41:52.200000   70001 cacher.go:469] cacher (pods): initialized\n";
    let s = status_of(apiserver, LogKind::Kubelet);
    assert_eq!(s.status, Some(SourceState::NotUnderstood), "{s:?}");
    assert!(
        s.detail
            .as_deref()
            .unwrap_or_default()
            .contains("kube-apiserver's (genericapiserver.go)"),
        "{s:?}"
    );
    // One kubelet record among them: the kubelet's log (a paste of several components').
    let mixed = format!(
        "{apiserver}I1207 08:41:53.000000   70002 kubelet.go:2428] \"Starting kubelet main sync loop\"\n"
    );
    assert_eq!(
        status_of(&mixed, LogKind::Kubelet).status,
        Some(SourceState::Ok)
    );
    // Shared packages alone name nobody: a kubelet excerpt of reflector and flag lines.
    let shared = "I1207 08:41:51.000000    2345 flags.go:64] FLAG: --v=\"2\"\n\
                  W1207 08:41:52.000000    2345 reflector.go:561] failed to list *v1.Node\n";
    assert_eq!(
        status_of(shared, LogKind::Kubelet).status,
        Some(SourceState::Ok)
    );
}

#[test]
fn a_log_compressed_otherwise_than_gzip_says_how_to_read_it() {
    // zstd's magic and frame bytes, as `zstd kubelet.log` begins its output.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log.zst");
    std::fs::write(
        &path,
        b"\x28\xb5\x2f\xfd\x64\x00\x01\x25\x11\x00\x46\x18\x4a\x24\n\x01\x02\n",
    )
    .unwrap();
    let source = Source::File(path.clone());
    let got = read(&source, LogKind::Kubelet, None).unwrap();
    let s = log_status(&source, LogKind::Kubelet, &got);
    assert_eq!(s.status, Some(SourceState::NotUnderstood), "{s:?}");
    let detail = s.detail.unwrap_or_default();
    assert!(
        detail.contains(&format!(
            "{} is zstd-compressed: decompress it first (zstd -d; plain and gzip logs are read)",
            path.display()
        )),
        "{detail}"
    );
}
