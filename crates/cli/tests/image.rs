//! The container image runs as the shipped DaemonSet runs it.
//!
//! The image (`PODCORONER_IMAGE_ARCHIVE`, which `cargo xtask test` sets to the release image it
//! has just built; otherwise built here by `podcoroner-image` from the test binary) is imported
//! into a real containerd and started through CRI with the container spec of
//! `deploy/base/daemonset.yaml`, translated the way the kubelet translates it: its args and env
//! (`NODE_NAME` from the downward API), its security context (read-only root filesystem, every
//! capability dropped, no privilege escalation, uid 0) and its volume mounts, each hostPath
//! pointed at the lab's node directory and the lab's CRI socket, the ConfigMap at
//! `deploy/base/config.yaml`. The pod is on the node's network, as the DaemonSet's
//! (`hostNetwork`), on a port of its own. The lab's containerd keeps its socket in the node's
//! `run/containerd`, which the DaemonSet mounts, and the node directory is a shared mount, as `/`
//! is on a systemd node, for the `HostToContainer` mounts. Then:
//! - `/healthz` and `/readyz` answer 200;
//! - a leaked sandbox in that containerd is a `LeakedSandbox` finding, the healthy pods are not,
//!   and so is one leaked after containerd restarted (and made a new socket);
//! - a kubelet line in the node's journal (a real journal file, read by the image's own
//!   `journalctl`, which is what the shipped config's `kubelet_log: journald` runs) becomes a
//!   `SandboxStopFailing` finding;
//! - the process really runs with no effective capability, `NoNewPrivs` and a read-only root;
//! - as `nonroot` (docs/install.md "Root or not") it is refused by a `root:root 0660` socket and
//!   says so in `/readyz`, and with the socket's and the journal's groups it works as root does.
//!
//! Needs root, containerd, runc, the CNI plugins and systemd-journal-remote (`cargo xtask test`
//! installs them) and, to build the image here, apt-get access to Debian's packages.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::DaemonSet;
use podcoroner_cri_api::v1;
use podcoroner_logs::test_util::{JournalEntry, MACHINE_ID, TestJournal};
use podcoroner_test_support::{ContainerdLab, PodSpec};
use serde_json::{Value, json};

mod common;
use common::{apiserver, free_port, get_from, ok, pod};

const NODE: &str = "lab-node";
const LEAKED_UID: &str = "1eaced00-0000-4000-8000-000000000001";
const WEB_UID: &str = "3eb00000-0000-4000-8000-000000000003";
const AGENT_UID: &str = "a9e47000-0000-4000-8000-000000000009";
const LATER_LEAKED_UID: &str = "1eaced00-0000-4000-8000-000000000002";
const NONROOT_AGENT_UID: &str = "a9e47000-0000-4000-8000-00000000000a";
const NONROOT_UID: u32 = podcoroner_image::NONROOT_UID;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The image archive to test and the reference it is imported as, made once per test process.
fn image() -> &'static (PathBuf, String, Option<tempfile::TempDir>) {
    static IMAGE: std::sync::OnceLock<(PathBuf, String, Option<tempfile::TempDir>)> =
        std::sync::OnceLock::new();
    IMAGE.get_or_init(image_archive)
}

/// The image archive to test and the reference it is imported as; the directory holding an
/// archive built here.
fn image_archive() -> (PathBuf, String, Option<tempfile::TempDir>) {
    if let Some(archive) = std::env::var_os("PODCORONER_IMAGE_ARCHIVE") {
        let archive = PathBuf::from(archive);
        let reference = reference_in(&archive);
        return (archive, reference, None);
    }
    let dir = ok(tempfile::tempdir());
    let binary = dir.path().join("podcoroner");
    let stripped = Command::new("strip")
        .args(["--strip-debug", "-o"])
        .arg(&binary)
        .arg(env!("CARGO_BIN_EXE_podcoroner"))
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        ok(std::fs::copy(env!("CARGO_BIN_EXE_podcoroner"), &binary));
    }
    let fs = ok(podcoroner_image::Rootfs::from_debian(&binary));
    let reference = "localhost/podcoroner/podcoroner:test".to_owned();
    let archive = dir.path().join("image.oci.tar");
    let meta = podcoroner_image::ImageMetadata {
        reference: reference.clone(),
        version: "test".to_owned(),
        revision: None,
        source: None,
        created_unix_seconds: 0,
    };
    ok(podcoroner_image::write_oci_archive(&fs, &meta, &archive));
    (archive, reference, Some(dir))
}

/// The `io.containerd.image.name` of the archive's `index.json`.
fn reference_in(archive: &Path) -> String {
    let mut tar = tar::Archive::new(ok(std::fs::File::open(archive)));
    for entry in ok(tar.entries()) {
        let entry = ok(entry);
        if ok(entry.path()).as_os_str() == "index.json" {
            let index: Value = ok(serde_json::from_reader(entry));
            return index["manifests"][0]["annotations"]["io.containerd.image.name"]
                .as_str()
                .unwrap_or_else(|| panic!("{}: no image name in index.json", archive.display()))
                .to_owned();
        }
    }
    panic!("{}: no index.json", archive.display())
}

/// The node's directories the DaemonSet mounts, under `node` (the lab's containerd keeps its
/// socket in `node/run/containerd`).
fn host_path(node: &Path, path: &str) -> PathBuf {
    let mapped = node.join(path.trim_start_matches('/'));
    assert!(
        mapped.exists(),
        "the DaemonSet mounts {path}, which the test's node does not provide: add it"
    );
    mapped
}

/// The CRI `ContainerConfig` the kubelet would build for the DaemonSet's container on this node,
/// plus `--min-age 0s` (the lab's leak is seconds old) and a kubeconfig for the fake API server
/// (the DaemonSet uses its service account, which the lab has no API server for).
fn container_config(
    lab: &ContainerdLab,
    listen: &str,
    pod_spec: &PodSpec,
    node: &Path,
    daemonset: &DaemonSet,
    image: &str,
    kubeconfig: &Path,
) -> v1::ContainerConfig {
    let template = daemonset.spec.template.spec.as_ref().unwrap();
    let c = &template.containers[0];
    let mut config = lab.container_config(pod_spec, &c.name, 0);
    config.image = Some(v1::ImageSpec {
        image: image.to_owned(),
        ..Default::default()
    });
    config.command = c.command.clone().unwrap_or_default();
    config.args = c.args.clone().unwrap_or_default();
    // On the node's network, each test's agent listens on a port of its own.
    if let Some(i) = config.args.iter().position(|a| a == "--listen") {
        config.args[i + 1] = listen.to_owned();
    }
    config
        .args
        .extend(["--min-age".to_owned(), "0s".to_owned()]);
    for env in c.env.iter().flatten() {
        let value = match (&env.value, &env.value_from) {
            (Some(v), _) => v.clone(),
            (None, Some(from)) => {
                let field = &from
                    .field_ref
                    .as_ref()
                    .expect("only fieldRef env")
                    .field_path;
                assert_eq!(field, "spec.nodeName", "env {}: map this field", env.name);
                NODE.to_owned()
            }
            (None, None) => String::new(),
        };
        config.envs.push(v1::KeyValue {
            key: env.name.clone(),
            value,
        });
    }
    config.envs.push(v1::KeyValue {
        key: "KUBECONFIG".to_owned(),
        value: "/var/run/podcoroner-test/kubeconfig".to_owned(),
    });
    for m in c.volume_mounts.iter().flatten() {
        let volume = template
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == m.name)
            .unwrap_or_else(|| panic!("volumeMount {} has no volume", m.name));
        let host = if let Some(hp) = &volume.host_path {
            host_path(node, &hp.path)
        } else if volume.config_map.is_some() {
            node.join("configmap")
        } else {
            panic!(
                "volume {}: only hostPath and configMap are mapped",
                volume.name
            )
        };
        config.mounts.push(v1::Mount {
            container_path: m.mount_path.clone(),
            host_path: host.display().to_string(),
            readonly: m.read_only.unwrap_or(false),
            propagation: match m.mount_propagation.as_deref() {
                Some("HostToContainer") => v1::MountPropagation::PropagationHostToContainer,
                Some("Bidirectional") => v1::MountPropagation::PropagationBidirectional,
                _ => v1::MountPropagation::PropagationPrivate,
            } as i32,
        });
    }
    config.mounts.push(v1::Mount {
        container_path: "/var/run/podcoroner-test/kubeconfig".to_owned(),
        host_path: kubeconfig.display().to_string(),
        readonly: true,
        propagation: 0,
    });
    // The kubelet's securityContext translation (`convertToRuntimeSecurityContext`).
    let sc = c.security_context.as_ref().expect("a securityContext");
    let linux = config.linux.get_or_insert_with(Default::default);
    let cri = linux.security_context.get_or_insert_with(Default::default);
    cri.readonly_rootfs = sc.read_only_root_filesystem.unwrap_or(false);
    cri.run_as_user = sc.run_as_user.map(|value| v1::Int64Value { value });
    cri.run_as_group = sc.run_as_group.map(|value| v1::Int64Value { value });
    cri.no_new_privs = sc.allow_privilege_escalation == Some(false);
    cri.privileged = sc.privileged.unwrap_or(false);
    if let Some(caps) = &sc.capabilities {
        cri.capabilities = Some(v1::Capability {
            add_capabilities: caps.add.clone().unwrap_or_default(),
            drop_capabilities: caps.drop.clone().unwrap_or_default(),
        });
    }
    config
}

/// `/findings` of the agent, once `pred` holds of it (up to `secs`), or the last answer.
fn wait_findings(ip: &str, port: u16, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let (status, body) = get_from(ip, port, "/findings");
        let findings: Value = if status == 200 {
            serde_json::from_str(&body).unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        if pred(&findings) || Instant::now() > deadline {
            return findings;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn finding<'a>(findings: &'a Value, kind: &str, sandbox: &str) -> Option<&'a Value> {
    findings["findings"]
        .as_array()?
        .iter()
        .find(|f| f["kind"] == kind && f.to_string().contains(sandbox))
}

/// The PID (on the host) of the agent of pod `uid`: the podcoroner daemon process whose
/// environment has `POD_UID=<uid>`.
fn agent_pid(uid: &str) -> Option<u32> {
    let marker = format!("POD_UID={uid}");
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let environ = std::fs::read(e.path().join("environ")).ok()?;
        (cmdline.starts_with(b"/usr/local/bin/podcoroner\0daemon\0")
            && environ.split(|b| *b == 0).any(|v| v == marker.as_bytes()))
        .then_some(pid)
    })
}

fn status_field(pid: u32, field: &str) -> String {
    let status = ok(std::fs::read_to_string(format!("/proc/{pid}/status")));
    status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
        .trim()
        .to_owned()
}

/// A lab node: containerd with the image imported, a leaked sandbox and a healthy pod, the node
/// directories the DaemonSet mounts (with a real journal), and a fake API server that knows the
/// healthy pod and the agents' pods.
struct Node {
    // Dropped in this order: containerd and its sandboxes, the shared mount, the directory.
    lab: ContainerdLab,
    image: String,
    _shared: SharedMount,
    dir: tempfile::TempDir,
    journal: TestJournal,
    daemonset: DaemonSet,
    kubeconfig: PathBuf,
    leaked_id: String,
    web_id: String,
}

/// `dir` bind-mounted on itself and made shared (`mount --make-rshared`), as `/` is on a systemd
/// node: containerd refuses `HostToContainer` propagation from a private mount, which `/` is on
/// this test machine. Unmounted when dropped.
struct SharedMount(PathBuf);

impl SharedMount {
    fn new(dir: &Path) -> SharedMount {
        let d = dir.as_os_str();
        for args in [
            vec!["--bind".as_ref(), d, d],
            vec!["--make-rshared".as_ref(), d],
        ] {
            let out = ok(Command::new("mount").args(&args).output());
            assert!(
                out.status.success(),
                "mount {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        SharedMount(dir.to_path_buf())
    }
}

impl Drop for SharedMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// An agent pod running the image.
struct Agent {
    sandbox_id: String,
    ip: String,
    port: u16,
    log: PathBuf,
}

impl Agent {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `/readyz` until `want` (up to 60 s): the last (status, body).
    fn readyz_until(&self, want: u16) -> (u16, String) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let last = get_from(&self.ip, self.port, "/readyz");
            if last.0 == want || Instant::now() > deadline {
                return last;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

fn api_pod(ns: &str, name: &str, uid: &str, owner: &str) -> Value {
    pod(
        ns,
        name,
        uid,
        NODE,
        "Running",
        json!({"kubernetes.io/config.source": "api"}),
        json!([{"kind": owner, "name": name, "uid": "0e000000-0000-4000-8000-00000000000e",
                "apiVersion": "apps/v1", "controller": true}]),
    )
}

impl Node {
    async fn start() -> Node {
        let (archive, image) = tokio::task::spawn_blocking(|| {
            let (archive, image, _) = image();
            (archive.clone(), image.clone())
        })
        .await
        .unwrap();
        let dir = ok(tempfile::tempdir());
        let node = dir.path();
        let shared = SharedMount::new(node);
        let lab = ok(ContainerdLab::start_with_socket(
            &node.join("run/containerd/containerd.sock"),
        ));
        ok(lab.import_image(&archive));

        for sub in [
            "var/lib/podcoroner",
            "var/log/pods",
            "run/log/journal",
            "etc/kubernetes/manifests",
            "var/lib/kubelet/pods",
            "configmap",
            "kube",
        ] {
            ok(std::fs::create_dir_all(node.join(sub)));
        }
        ok(std::fs::write(
            node.join("etc/machine-id"),
            format!("{MACHINE_ID}\n"),
        ));
        let journal_dir = node.join("var/log/journal").join(MACHINE_ID);
        ok(std::fs::create_dir_all(&journal_dir));
        let journal = ok(TestJournal::new(&journal_dir));
        // An earlier line, so `journalctl -f` starts on an existing journal.
        ok(journal.append(&[JournalEntry::new(
            "systemd",
            Timestamp::now() - jiff::SignedDuration::from_secs(600),
            "Started kubelet.service - kubelet: The Kubernetes Node Agent.",
        )]));
        ok(std::fs::copy(
            repo().join("deploy/base/config.yaml"),
            node.join("configmap/config.yaml"),
        ));

        // A leaked sandbox (NOTREADY, its pod gone from the API) and a healthy pod.
        let leaked = PodSpec::api("default", "leaky-7d9f", LEAKED_UID);
        let leaked_id = ok(lab.run_pod(&leaked).await);
        ok(lab.stop_sandbox(&leaked_id).await);
        let web = PodSpec::api("default", "web-0", WEB_UID);
        let web_id = ok(lab.run_pod(&web).await);
        ok(lab.create_container(&web_id, &web, "web", 0, true).await);

        let api = apiserver::start(
            std::net::Ipv4Addr::LOCALHOST.into(),
            vec![
                api_pod("default", "web-0", WEB_UID, "StatefulSet"),
                api_pod("podcoroner", "podcoroner-x7k2p", AGENT_UID, "DaemonSet"),
                api_pod(
                    "podcoroner",
                    "podcoroner-n0r00",
                    NONROOT_AGENT_UID,
                    "DaemonSet",
                ),
            ],
        )
        .await;
        let kubeconfig = apiserver::kubeconfig(
            &node.join("kube"),
            &format!("http://127.0.0.1:{}", api.port),
        );
        let yaml = ok(std::fs::read_to_string(
            repo().join("deploy/base/daemonset.yaml"),
        ));
        let daemonset: DaemonSet = ok(serde_yaml::from_str(&yaml));
        Node {
            lab,
            image,
            _shared: shared,
            dir,
            journal,
            daemonset,
            kubeconfig,
            leaked_id,
            web_id,
        }
    }

    /// Runs the DaemonSet's container as pod `name` (`uid`) on the network the DaemonSet says, its config changed
    /// by `tweak` first.
    async fn run_agent(
        &self,
        name: &str,
        uid: &str,
        tweak: impl FnOnce(&mut v1::ContainerConfig),
    ) -> Agent {
        let template = self.daemonset.spec.template.spec.as_ref().unwrap();
        let mut pod_spec = PodSpec::api("podcoroner", name, uid);
        if template.host_network == Some(true) {
            pod_spec = pod_spec.with_host_network();
        }
        let sandbox_id = ok(self.lab.run_pod(&pod_spec).await);
        // On the node's network the DaemonSet's port would be shared by the tests running at
        // once: each agent gets a free one.
        let port = free_port();
        let mut config = container_config(
            &self.lab,
            &format!("127.0.0.1:{port}"),
            &pod_spec,
            self.dir.path(),
            &self.daemonset,
            &self.image,
            &self.kubeconfig,
        );
        // Tells this agent's process from another test's.
        config.envs.push(v1::KeyValue {
            key: "POD_UID".to_owned(),
            value: uid.to_owned(),
        });
        tweak(&mut config);
        let log = self.lab.pod_log_dir(&pod_spec).join(&config.log_path);
        let started = self
            .lab
            .create_container_from(&sandbox_id, &pod_spec, config, true)
            .await;
        let ip = if pod_spec.host_network {
            "127.0.0.1".to_owned()
        } else {
            ok(self.lab.sandbox_ip(&sandbox_id).await)
        };
        let agent = Agent {
            sandbox_id,
            ip,
            port,
            log,
        };
        ok(started.map_err(|e| format!("{e}\ncontainer log:\n{}", agent.log())));
        assert!(!agent.ip.is_empty(), "the agent's sandbox has no pod IP");
        agent
    }

    /// Waits for the leak to be reported, checks the healthy sandboxes are not, then writes the
    /// kubelet's GC failure for the leaked sandbox to the journal and waits for its finding.
    fn check_findings(&self, agent: &Agent) {
        let leaked_id = &self.leaked_id;
        let findings = wait_findings(&agent.ip, agent.port, 30, |f| {
            finding(f, "LeakedSandbox", leaked_id).is_some()
        });
        let leak = finding(&findings, "LeakedSandbox", leaked_id).unwrap_or_else(|| {
            panic!(
                "no LeakedSandbox for {leaked_id}: {findings:#}\ncontainer log:\n{}",
                agent.log()
            )
        });
        assert_eq!(leak["pod"]["uid"], LEAKED_UID, "{leak:#}");
        for healthy in [&self.web_id, &agent.sandbox_id] {
            assert!(
                !findings.to_string().contains(healthy.as_str()),
                "a finding names the healthy sandbox {healthy}: {findings:#}"
            );
        }

        // The kubelet's GC fails to stop the leaked sandbox: a line in the node's journal, read by
        // the image's journalctl.
        let line = format!(
            r#"E{} 1234 kuberuntime_gc.go:176] "Failed to stop sandbox before removing" err="rpc error: code = Unknown desc = failed to destroy network for sandbox \"{leaked_id}\": plugin type=\"calico\" failed (delete): error getting ClusterInformation: connection is unauthorized: Unauthorized" sandboxID="{leaked_id}""#,
            Timestamp::now().strftime("%m%d %H:%M:%S%.6f")
        );
        ok(self
            .journal
            .append(&[JournalEntry::new("kubelet", Timestamp::now(), &line)]));
        let findings = wait_findings(&agent.ip, agent.port, 30, |f| {
            finding(f, "SandboxStopFailing", leaked_id).is_some()
        });
        let failing = finding(&findings, "SandboxStopFailing", leaked_id).unwrap_or_else(|| {
            panic!(
                "the journal line gave no SandboxStopFailing for {leaked_id}: {findings:#}\ncontainer log:\n{}",
                agent.log()
            )
        });
        assert!(
            failing.to_string().contains("Unauthorized"),
            "the cause is not kept: {failing:#}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_runs_under_the_daemonsets_own_spec_and_finds_a_leak() {
    let mut node = Node::start().await;
    let agent = node.run_agent("podcoroner-x7k2p", AGENT_UID, |_| {}).await;

    // Probed as the kubelet probes it: the pod's IP (the node's) and the container port.
    let ready = agent.readyz_until(200);
    assert_eq!(
        ready.0,
        200,
        "/readyz never answered 200; last answer {ready:?}\ncontainer log:\n{}",
        agent.log()
    );
    assert_eq!(get_from(&agent.ip, agent.port, "/healthz").0, 200);
    node.check_findings(&agent);

    // containerd restarts (an upgrade) and makes its socket anew; the agent, which mounts the
    // socket's directory, reconnects and sees a sandbox leaked after the restart.
    ok(node.lab.restart());
    let later = PodSpec::api("default", "leaky-after-restart", LATER_LEAKED_UID);
    let later_id = ok(node.lab.run_pod(&later).await);
    ok(node.lab.stop_sandbox(&later_id).await);
    let findings = wait_findings(&agent.ip, agent.port, 90, |f| {
        finding(f, "LeakedSandbox", &later_id).is_some()
    });
    assert!(
        finding(&findings, "LeakedSandbox", &later_id).is_some(),
        "after containerd restarted, no LeakedSandbox for {later_id}: {findings:#}\n/readyz: {:?}",
        get_from(&agent.ip, agent.port, "/readyz")
    );

    // The DaemonSet's hardening is in effect on the process itself.
    let pid = agent_pid(AGENT_UID).expect("the agent's process");
    assert_eq!(status_field(pid, "CapEff"), "0000000000000000");
    assert_eq!(status_field(pid, "CapBnd"), "0000000000000000");
    assert_eq!(status_field(pid, "NoNewPrivs"), "1");
    assert_eq!(
        status_field(pid, "Uid").split_whitespace().next(),
        Some("0")
    );
    let mountinfo = ok(std::fs::read_to_string(format!("/proc/{pid}/mountinfo")));
    let root = mountinfo
        .lines()
        .find(|l| l.split_whitespace().nth(4) == Some("/"))
        .expect("a root mount");
    assert!(
        root.split_whitespace()
            .nth(5)
            .is_some_and(|o| o.split(',').any(|o| o == "ro")),
        "the root filesystem is not read-only: {root}"
    );
}

/// docs/install.md "Root or not": as `nonroot` (65532) the agent cannot use a `root:root 0660`
/// CRI socket, and says so in `/readyz`; given the socket's group and the journal's as
/// supplemental groups, and its state directory, it works as root does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn as_nonroot_the_image_needs_the_sockets_group_and_then_works() {
    use std::os::unix::fs::{PermissionsExt as _, chown};
    const SOCKET_GID: u32 = 4242;
    const JOURNAL_GID: u32 = 4243;
    let node = Node::start().await;
    let state = node.dir.path().join("var/lib/podcoroner");
    ok(chown(&state, Some(NONROOT_UID), Some(NONROOT_UID)));
    let nonroot = |groups: Vec<i64>| {
        move |config: &mut v1::ContainerConfig| {
            let sc = config
                .linux
                .as_mut()
                .and_then(|l| l.security_context.as_mut())
                .expect("a security context");
            sc.run_as_user = Some(v1::Int64Value {
                value: NONROOT_UID.into(),
            });
            sc.run_as_group = Some(v1::Int64Value {
                value: NONROOT_UID.into(),
            });
            sc.supplemental_groups = groups;
        }
    };

    // The socket as containerd makes it: root:root 0660.
    let socket_mode = ok(std::fs::metadata(node.lab.socket()))
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(socket_mode, 0o660, "containerd's socket mode");
    let refused = node
        .run_agent("podcoroner-n0r00", NONROOT_AGENT_UID, nonroot(vec![]))
        .await;
    let (status, body) = refused.readyz_until(503);
    assert_eq!(status, 503, "{body}\ncontainer log:\n{}", refused.log());
    assert!(
        body.contains("cri") && body.to_lowercase().contains("permission denied"),
        "/readyz does not say the CRI socket is refused: {body}"
    );
    ok(node.lab.stop_sandbox(&refused.sandbox_id).await);
    ok(node.lab.remove_sandbox(&refused.sandbox_id).await);

    // The node gives the socket and the journal a group.
    ok(chown(node.lab.socket(), None, Some(SOCKET_GID)));
    for entry in ok(std::fs::read_dir(node.journal.dir())) {
        let path = ok(entry).path();
        ok(chown(&path, None, Some(JOURNAL_GID)));
    }
    let agent = node
        .run_agent(
            "podcoroner-n0r00",
            NONROOT_AGENT_UID,
            nonroot(vec![SOCKET_GID.into(), JOURNAL_GID.into()]),
        )
        .await;
    let ready = agent.readyz_until(200);
    assert_eq!(
        ready.0,
        200,
        "as nonroot with the socket's group: {ready:?}\ncontainer log:\n{}",
        agent.log()
    );
    node.check_findings(&agent);
    let pid = agent_pid(NONROOT_AGENT_UID).expect("the agent's process");
    assert_eq!(
        status_field(pid, "Uid").split_whitespace().next(),
        Some("65532")
    );
    assert_eq!(status_field(pid, "CapEff"), "0000000000000000");
}
