//! A real node: a private containerd, etcd, kube-apiserver and an attached kubelet for node
//! [`NODE_NAME`], all under one directory, shared by `cargo xtask real-node up DIR` / `down DIR`
//! and the tests (docs/real-node.md).
//!
//! [`RealNode::up`] starts, in order:
//!
//! 1. containerd with its own root, state, socket (`DIR/containerd/containerd.sock`), bridge CNI
//!    network and the locally built pause image (also tagged [`TEST_IMAGE`]), so nothing is
//!    pulled. A real kubelet removes what it does not know, so it never shares the lab's
//!    containerd.
//! 2. etcd (`--unsafe-no-fsync`) on free loopback ports.
//! 3. kube-apiserver on a free port: token auth (`DIR/pki/tokens.csv`: an admin in
//!    `system:masters`, `system:node:lab-node` in `system:nodes`), `--authorization-mode=Node,RBAC`,
//!    NodeRestriction, a self-signed serving certificate in `DIR/pki`, ServiceAccount admission off
//!    (there is no controller manager to create the `default` ServiceAccount, as in envtest).
//! 4. the kubelet (`--v=4`, text or JSON log format) with the KubeletConfiguration of
//!    [`kubelet_config`]: cgroupfs under the cgroup root `/podcoroner-<n>` (created in every
//!    cgroup v1 hierarchy), static pods from `DIR/manifests`, pod logs in `DIR/pod-logs`, its
//!    ports on loopback. The sysctls the kubelet rewrites (`setupKernelTunables`) are saved first.
//!
//! It waits until the node is `Ready` and writes `DIR/env.json` ([`Env`]). `DIR/state.json`
//! records every PID, port and saved sysctl, so [`down`] (another process) stops each component by
//! PID (checking its command line still names DIR), removes the pods' sandboxes through CRI,
//! restores the sysctls and removes the cgroups, bridge and mounts. Logs stay in DIR.

mod build;
mod pod_url;

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, Node};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

pub use build::{Binaries, ETCD_VERSION, KUBERNETES_VERSION, build};
pub use pod_url::PodUrlServer;

use crate::lab::{
    connect, cri_answers, find_in_path, image_visible, kill_leftovers, on_own_runtime,
    pick_network, remove_all_sandboxes, remove_cni_leftovers, unmount_under, write_files,
};
use crate::pause::pause_image;

/// The node name the kubelet registers (`--hostname-override`).
pub const NODE_NAME: &str = "lab-node";
/// The container image imported beside the pause image (the same static pause program under a
/// second name), for pods' containers; use it with `imagePullPolicy: Never`.
pub const TEST_IMAGE: &str = "localhost/podcoroner/test:1";

/// How long `up` waits for each component.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// How many times [`RealNode::start_kubelet`] starts again a kubelet that died of the Go
/// runtime's concurrent map fatal error as it started.
pub const KUBELET_RACE_RETRIES: u32 = 2;
/// How long a component has to exit after SIGTERM before SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// The sysctls the kubelet sets in `setupKernelTunables` (pkg/kubelet/cm/container_manager_linux.go).
const KUBELET_SYSCTLS: [&str; 6] = [
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
];

/// Why the real node could not be built, started or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RealNodeError {
    /// A program or file the node needs is missing.
    #[error("the real node needs {what}: {hint}")]
    PrerequisiteMissing {
        /// What is missing.
        what: String,
        /// How to install it.
        hint: String,
    },
    /// The kubelet, kube-apiserver or etcd binary is missing or from other pins.
    #[error("the real node's binaries are missing: {reason}; run `cargo xtask real-node build`")]
    BinariesMissing {
        /// What is missing.
        reason: String,
    },
    /// The containerd lab part failed (prerequisites, pause image, CRI).
    #[error(transparent)]
    Lab(#[from] crate::LabError),
    /// Reading or writing a file of the node failed.
    #[error("{} failed: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A command exited non-zero.
    #[error("`{command}` failed: {output}")]
    CommandFailed {
        /// The command.
        command: String,
        /// Its status and output.
        output: String,
    },
    /// A component did not start or did not become ready in time.
    #[error("{component} did not start: {reason}; last lines of {}:\n{log_tail}", log.display())]
    StartFailed {
        /// `containerd`, `etcd`, `kube-apiserver` or `kubelet`.
        component: &'static str,
        /// What happened.
        reason: String,
        /// Its log file.
        log: PathBuf,
        /// The end of its log.
        log_tail: String,
    },
    /// DIR already holds a node that is up, or holds no node.
    #[error("{}: {reason}", dir.display())]
    BadDir {
        /// The node directory.
        dir: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// An API server request failed.
    #[error("API server: {what} failed: {message}")]
    Api {
        /// The request.
        what: String,
        /// The error.
        message: String,
    },
}

/// `DIR/env.json`: what a test or a person needs to point podcoroner at the node.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Env {
    /// The admin kubeconfig (token auth, the self-signed serving certificate as CA).
    pub kubeconfig: PathBuf,
    /// containerd's CRI endpoint, `unix:///…/containerd.sock`.
    pub runtime_endpoint: String,
    /// The kubelet's `staticPodPath`.
    pub manifest_dir: PathBuf,
    /// The kubelet's `--root-dir` (holding `pods/<uid>/`).
    pub kubelet_root_dir: PathBuf,
    /// The kubelet's log (its stdout and stderr, appended across restarts).
    pub kubelet_log: PathBuf,
    /// containerd's log.
    pub runtime_log: PathBuf,
    /// The node's name, [`NODE_NAME`].
    pub node_name: String,
    /// The API server's URL, `https://127.0.0.1:<port>`.
    pub apiserver: String,
    /// The kubelet's version as it reports it (`kubelet --version`), e.g. `Kubernetes v1.34.4`.
    pub kubelet_version: String,
    /// The kubelet's pod log directory (`podLogsDir`).
    pub pod_logs_dir: PathBuf,
    /// The kubelet's `staticPodURL`, `http://127.0.0.1:PORT/pods`, with
    /// [`Options::static_pod_url`]: served by this process from [`Env::manifest_url_body`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_url: Option<String>,
    /// The file the static pod URL serves (absent: 404), with [`Options::static_pod_url`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_url_body: Option<PathBuf>,
}

/// The kubelet's log format (`--logging-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LogFormat {
    /// klog text lines (`I1201 12:00:00.000000 …`).
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

/// How to start the node.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The kubelet's log format.
    pub log_format: LogFormat,
    /// Keys merged into the KubeletConfiguration, over [`kubelet_config`].
    pub kubelet_config: serde_json::Map<String, serde_json::Value>,
    /// Serve static pods from a URL too: an HTTP server in this process ([`PodUrlServer`]) on a
    /// free loopback port serves `DIR/pod-url/pods.yaml` as `/pods`, the kubelet's
    /// `staticPodURL` (read every 2 s, `httpCheckFrequency`). It lives as long as the
    /// [`RealNode`], so `cargo xtask real-node up` (which exits) does not offer it.
    pub static_pod_url: bool,
}

/// What `DIR/state.json` records.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
struct State {
    /// Component name → PID.
    pids: BTreeMap<String, u32>,
    etcd_client_port: u16,
    etcd_peer_port: u16,
    apiserver_port: u16,
    kubelet_port: u16,
    kubelet_healthz_port: u16,
    kubelet_read_only_port: u16,
    bridge: String,
    subnet: String,
    network_name: String,
    /// The cgroup root's name, e.g. `podcoroner-123-0`.
    cgroup_root: String,
    /// Sysctl (path under /proc/sys) → its value before the kubelet started.
    sysctls: BTreeMap<String, String>,
    admin_token: String,
    log_format: LogFormat,
    kubelet_config: serde_json::Value,
}

/// A running real node. Dropping it runs [`down`] unless [`RealNode::detach`] was called.
#[derive(Debug)]
pub struct RealNode {
    dir: PathBuf,
    bins: Binaries,
    state: State,
    env: Env,
    /// Processes this value started (so they can be reaped); others are known by PID only.
    children: BTreeMap<String, Child>,
    detached: bool,
    /// This process's count of nodes started, for unique names.
    n: u32,
    /// The static pod URL's server, with [`Options::static_pod_url`].
    pod_url: Option<PodUrlServer>,
}

static NODE_COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

// === paths ===

fn socket_path(dir: &Path) -> PathBuf {
    dir.join("containerd/containerd.sock")
}
fn log_path(dir: &Path, component: &str) -> PathBuf {
    dir.join(format!("{component}.log"))
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RealNodeError + '_ {
    move |source| RealNodeError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), RealNodeError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    std::fs::write(path, contents).map_err(io_err(path))
}

/// Checks what the node needs besides the binaries: root, containerd, runc, ctr, gcc, the CNI
/// plugins (as the containerd lab) and openssl (the service account key).
///
/// # Errors
///
/// [`RealNodeError::Lab`] or [`RealNodeError::PrerequisiteMissing`].
pub fn check_prerequisites() -> Result<(), RealNodeError> {
    crate::lab::check_prerequisites()?;
    if find_in_path("openssl").is_none() {
        return Err(RealNodeError::PrerequisiteMissing {
            what: "openssl".to_owned(),
            hint: "apt-get install -y openssl (it writes the service account signing key)"
                .to_owned(),
        });
    }
    Ok(())
}

/// The KubeletConfiguration the node runs with (shared/reference/real-node.md, adapted to run
/// here): cgroupfs, cgroup v1 allowed, no swap check, QoS cgroups under `/<cgroup_root>`,
/// static pods from `manifest_dir` checked every 2 s, no image GC or eviction (a test machine's
/// disk is full of build output), anonymous read-only auth on loopback ports.
fn kubelet_config(dir: &Path, state: &State) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "containerRuntimeEndpoint": format!("unix://{}", socket_path(dir).display()),
        "cgroupDriver": "cgroupfs",
        "failCgroupV1": false,
        "failSwapOn": false,
        "cgroupsPerQOS": true,
        "cgroupRoot": format!("/{}", state.cgroup_root),
        "staticPodPath": dir.join("manifests"),
        "fileCheckFrequency": "2s",
        "syncFrequency": "10s",
        "podLogsDir": dir.join("pod-logs"),
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {"nodefs.available": "0%", "nodefs.inodesFree": "0%", "imagefs.available": "0%"},
        "authentication": {"anonymous": {"enabled": true}, "webhook": {"enabled": false}},
        "authorization": {"mode": "AlwaysAllow"},
        "address": "127.0.0.1",
        "port": state.kubelet_port,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": state.kubelet_healthz_port,
        "readOnlyPort": state.kubelet_read_only_port,
        "serializeImagePulls": false,
        "resolvConf": "/etc/resolv.conf",
    })
}

fn merge(base: &mut serde_json::Value, extra: &serde_json::Map<String, serde_json::Value>) {
    if let Some(obj) = base.as_object_mut() {
        for (k, v) in extra {
            obj.insert(k.clone(), v.clone());
        }
    }
}

fn free_port() -> Result<u16, RealNodeError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(io_err(Path::new("127.0.0.1:0 (binding a free port)")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(io_err(Path::new("127.0.0.1:0")))
}

/// The address the API server advertises: the source address of the default route (the API
/// server refuses a loopback address for its `kubernetes` service endpoints), else 127.0.0.1.
fn host_ip() -> String {
    std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| {
            s.connect("203.0.113.1:9")?;
            s.local_addr()
        })
        .map(|a| a.ip())
        .ok()
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
        .map_or_else(|| "127.0.0.1".to_owned(), |ip| ip.to_string())
}

fn random_token() -> String {
    use sha2::Digest as _;
    let seed = format!(
        "{:?}{}{:?}",
        std::time::SystemTime::now(),
        std::process::id(),
        Instant::now()
    );
    sha2::Sha256::digest(seed.as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The last `n` lines of a file.
pub fn log_tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Starts `program args…` in its own process group (so a Ctrl-C of `cargo xtask real-node up`
/// leaves it running), appending stdout and stderr to `log`.
fn spawn(program: &Path, args: &[String], log: &Path) -> Result<Child, RealNodeError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(io_err(log))?;
    let err = file.try_clone().map_err(io_err(log))?;
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| RealNodeError::CommandFailed {
            command: program.display().to_string(),
            output: e.to_string(),
        })
}

/// A kube client from a kubeconfig file.
///
/// # Errors
///
/// [`RealNodeError::Api`] when the file cannot be read or used.
pub async fn client_from(kubeconfig: &Path) -> Result<kube::Client, RealNodeError> {
    let api = |message: String| RealNodeError::Api {
        what: format!("loading {}", kubeconfig.display()),
        message,
    };
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).map_err(|e| api(e.to_string()))?;
    let config =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .map_err(|e| api(e.to_string()))?;
    kube::Client::try_from(config).map_err(|e| api(e.to_string()))
}

/// A kubeconfig for `server` with a bearer token, trusting `ca` (the API server's self-signed
/// serving certificate file).
pub fn kubeconfig_yaml(server: &str, ca: &Path, user: &str, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: real-node\n  cluster:\n    server: {server}\n    certificate-authority: {ca}\nusers:\n- name: {user}\n  user:\n    token: {token}\ncontexts:\n- name: real-node\n  context:\n    cluster: real-node\n    user: {user}\ncurrent-context: real-node\n",
        ca = ca.display()
    )
}

// === up ===

impl RealNode {
    /// Starts the node in `dir` (created; it must not hold a node that is up) and waits until it
    /// is `Ready`. Blocks for about 20 s. Callable from inside a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`RealNodeError::BinariesMissing`], [`RealNodeError::PrerequisiteMissing`],
    /// [`RealNodeError::Lab`] for what the containerd lab needs, [`RealNodeError::BadDir`],
    /// [`RealNodeError::StartFailed`] with the component's log tail. What was started is stopped
    /// again before the error returns.
    pub fn up(dir: &Path, options: &Options) -> Result<RealNode, RealNodeError> {
        let bins = Binaries::find()?;
        check_prerequisites()?;
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let dir = dir.canonicalize().map_err(io_err(dir))?;
        if let Ok(state) = read_state(&dir)
            && state.pids.values().any(|pid| owned_alive(*pid, &dir))
        {
            return Err(RealNodeError::BadDir {
                dir,
                reason: "a node is up here: run `cargo xtask real-node down` on it first"
                    .to_owned(),
            });
        }
        if socket_path(&dir).as_os_str().len() > 100 {
            return Err(RealNodeError::BadDir {
                reason: "too long for containerd's socket path (unix sockets take 107 bytes)"
                    .to_owned(),
                dir,
            });
        }
        let env = Env {
            kubeconfig: dir.join("admin.kubeconfig"),
            runtime_endpoint: format!("unix://{}", socket_path(&dir).display()),
            manifest_dir: dir.join("manifests"),
            kubelet_root_dir: dir.join("kubelet"),
            kubelet_log: log_path(&dir, "kubelet"),
            runtime_log: log_path(&dir, "containerd"),
            node_name: NODE_NAME.to_owned(),
            apiserver: String::new(),
            kubelet_version: String::new(),
            pod_logs_dir: dir.join("pod-logs"),
            manifest_url: None,
            manifest_url_body: None,
        };
        let mut node = RealNode {
            dir,
            bins,
            state: State {
                log_format: options.log_format,
                ..State::default()
            },
            env,
            children: BTreeMap::new(),
            detached: false,
            n: NODE_COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
            pod_url: None,
        };
        // From here on, Drop (down) undoes whatever was started.
        node.start_all(options)?;
        Ok(node)
    }

    fn start_all(&mut self, options: &Options) -> Result<(), RealNodeError> {
        let dir = self.dir.clone();
        for sub in ["manifests", "kubelet", "pod-logs", "pki", "etcd"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(io_err(&dir.join(sub)))?;
        }
        self.env.kubelet_version = kubelet_version(&self.bins.kubelet())?;
        self.start_containerd()?;
        self.start_etcd()?;
        self.prepare_apiserver()?;
        self.start_apiserver()?;
        if options.static_pod_url {
            let body = dir.join("pod-url/pods.yaml");
            // An empty PodList until a test writes its pods: the kubelet's HTTP source is
            // ready from its first read.
            if !body.is_file() {
                write(&body, "apiVersion: v1\nkind: PodList\nitems: []\n")?;
            }
            let server = PodUrlServer::start(&body, None).map_err(io_err(&body))?;
            self.env.manifest_url = Some(server.url());
            self.env.manifest_url_body = Some(body);
            self.pod_url = Some(server);
        }
        self.prepare_kubelet(options)?;
        self.start_kubelet()?;
        write(
            &dir.join("env.json"),
            serde_json::to_vec_pretty(&self.env).unwrap_or_default(),
        )?;
        Ok(())
    }

    fn save_state(&self) -> Result<(), RealNodeError> {
        write(
            &self.dir.join("state.json"),
            serde_json::to_vec_pretty(&self.state).unwrap_or_default(),
        )
    }

    fn record(&mut self, component: &'static str, child: Child) -> Result<(), RealNodeError> {
        self.state.pids.insert(component.to_owned(), child.id());
        self.children.insert(component.to_owned(), child);
        self.save_state()
    }

    /// Fails with the component's log tail when it has exited.
    fn check_alive(&mut self, component: &'static str) -> Result<(), RealNodeError> {
        if let Some(child) = self.children.get_mut(component)
            && let Ok(Some(status)) = child.try_wait()
        {
            return Err(self.start_failed(component, format!("it exited with {status}")));
        }
        Ok(())
    }

    fn start_failed(&self, component: &'static str, reason: String) -> RealNodeError {
        let log = log_path(&self.dir, component);
        RealNodeError::StartFailed {
            component,
            reason,
            log_tail: log_tail(&log, 30),
            log,
        }
    }

    /// Polls `ready` every 200 ms until it is true, failing when the component exits or after
    /// [`START_TIMEOUT`].
    fn wait_ready(
        &mut self,
        component: &'static str,
        what: &str,
        mut ready: impl FnMut(&Self) -> bool,
    ) -> Result<(), RealNodeError> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            self.check_alive(component)?;
            if ready(self) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(
                    self.start_failed(component, format!("{what} not within {START_TIMEOUT:?}"))
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn start_containerd(&mut self) -> Result<(), RealNodeError> {
        let pause = pause_image()?;
        let (pid, n) = (std::process::id(), self.n);
        let (subnet, bridge) = pick_network(pid, 1000 + n);
        let network_name = format!("podcoroner-real-node-{pid}-{n}");
        let cdir = self.dir.join("containerd");
        write_files(
            &cdir,
            &socket_path(&self.dir),
            &pause,
            &subnet,
            &bridge,
            &network_name,
        )?;
        self.state.subnet = subnet;
        self.state.bridge = bridge;
        self.state.network_name = network_name;
        let args = vec![
            "--config".to_owned(),
            cdir.join("config.toml").display().to_string(),
        ];
        let child = spawn(
            Path::new("containerd"),
            &args,
            &log_path(&self.dir, "containerd"),
        )?;
        self.record("containerd", child)?;
        let socket = socket_path(&self.dir);
        self.wait_ready("containerd", "the CRI answering", |_| {
            socket.exists() && cri_answers(&socket)
        })?;
        let ctr = |args: &[&str]| -> Result<(), RealNodeError> {
            let out = Command::new("ctr")
                .arg("-a")
                .arg(&socket)
                .args(["-n", "k8s.io"])
                .args(args)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| RealNodeError::CommandFailed {
                    command: format!("ctr {args:?}"),
                    output: e.to_string(),
                })?;
            if !out.status.success() {
                return Err(RealNodeError::CommandFailed {
                    command: format!("ctr {}", args.join(" ")),
                    output: String::from_utf8_lossy(&out.stderr).into_owned(),
                });
            }
            Ok(())
        };
        ctr(&["images", "import", &pause.archive.to_string_lossy()])?;
        ctr(&["images", "tag", "--force", &pause.name, TEST_IMAGE])?;
        let pause_name = pause.name.clone();
        self.wait_ready("containerd", "the CRI seeing the imported images", |_| {
            image_visible(&socket, &pause_name) && image_visible(&socket, TEST_IMAGE)
        })
    }

    fn start_etcd(&mut self) -> Result<(), RealNodeError> {
        self.state.etcd_client_port = free_port()?;
        self.state.etcd_peer_port = free_port()?;
        let client = format!("http://127.0.0.1:{}", self.state.etcd_client_port);
        let peer = format!("http://127.0.0.1:{}", self.state.etcd_peer_port);
        let args = vec![
            format!("--data-dir={}", self.dir.join("etcd").display()),
            format!("--listen-client-urls={client}"),
            format!("--advertise-client-urls={client}"),
            format!("--listen-peer-urls={peer}"),
            format!("--initial-advertise-peer-urls={peer}"),
            format!("--initial-cluster=default={peer}"),
            "--unsafe-no-fsync".to_owned(),
            "--log-level=warn".to_owned(),
        ];
        let child = spawn(&self.bins.etcd(), &args, &log_path(&self.dir, "etcd"))?;
        self.record("etcd", child)?;
        let port = self.state.etcd_client_port;
        self.wait_ready("etcd", "GET /health answering true", |_| {
            http_get(port, "/health")
                .is_some_and(|(status, body)| status == 200 && body.contains("\"health\":\"true\""))
        })
    }

    fn prepare_apiserver(&mut self) -> Result<(), RealNodeError> {
        let pki = self.dir.join("pki");
        let key = pki.join("sa.key");
        if !key.is_file() {
            let out = Command::new("openssl")
                .args(["genrsa", "-out"])
                .arg(&key)
                .arg("2048")
                .stdin(Stdio::null())
                .output()
                .map_err(|e| RealNodeError::CommandFailed {
                    command: "openssl genrsa".to_owned(),
                    output: e.to_string(),
                })?;
            if !out.status.success() {
                return Err(RealNodeError::CommandFailed {
                    command: "openssl genrsa".to_owned(),
                    output: String::from_utf8_lossy(&out.stderr).into_owned(),
                });
            }
        }
        self.state.admin_token = random_token();
        let node_token = random_token();
        write(
            &pki.join("tokens.csv"),
            format!(
                "{},admin,admin-uid,\"system:masters\"\n{node_token},system:node:{NODE_NAME},node-uid,\"system:nodes\"\n",
                self.state.admin_token
            ),
        )?;
        self.state.apiserver_port = free_port()?;
        self.env.apiserver = format!("https://127.0.0.1:{}", self.state.apiserver_port);
        let ca = pki.join("apiserver.crt");
        write(
            &self.env.kubeconfig,
            kubeconfig_yaml(&self.env.apiserver, &ca, "admin", &self.state.admin_token),
        )?;
        write(
            &self.dir.join("kubelet.kubeconfig"),
            kubeconfig_yaml(
                &self.env.apiserver,
                &ca,
                &format!("system:node:{NODE_NAME}"),
                &node_token,
            ),
        )?;
        self.save_state()
    }

    fn apiserver_args(&self) -> Vec<String> {
        let pki = self.dir.join("pki");
        vec![
            format!(
                "--etcd-servers=http://127.0.0.1:{}",
                self.state.etcd_client_port
            ),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--advertise-address={}", host_ip()),
            format!("--secure-port={}", self.state.apiserver_port),
            format!("--cert-dir={}", pki.display()),
            format!("--token-auth-file={}", pki.join("tokens.csv").display()),
            "--authorization-mode=Node,RBAC".to_owned(),
            "--enable-admission-plugins=NodeRestriction".to_owned(),
            "--disable-admission-plugins=ServiceAccount".to_owned(),
            "--service-account-issuer=https://kubernetes.default.svc".to_owned(),
            format!(
                "--service-account-key-file={}",
                pki.join("sa.key").display()
            ),
            format!(
                "--service-account-signing-key-file={}",
                pki.join("sa.key").display()
            ),
            "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
            "--allow-privileged=true".to_owned(),
            "--profiling=false".to_owned(),
            "--v=1".to_owned(),
        ]
    }

    /// Starts kube-apiserver (again, after [`RealNode::stop_apiserver`]) and waits until it
    /// serves the `kube-node-lease` namespace it creates at startup.
    ///
    /// # Errors
    ///
    /// [`RealNodeError::StartFailed`] with its log tail.
    pub fn start_apiserver(&mut self) -> Result<(), RealNodeError> {
        let child = spawn(
            &self.bins.kube_apiserver(),
            &self.apiserver_args(),
            &log_path(&self.dir, "kube-apiserver"),
        )?;
        self.record("kube-apiserver", child)?;
        let kubeconfig = self.env.kubeconfig.clone();
        self.wait_ready(
            "kube-apiserver",
            "the kube-node-lease namespace being served",
            |_| {
                let kubeconfig = kubeconfig.clone();
                on_own_runtime(move || async move {
                    let Ok(client) = client_from(&kubeconfig).await else {
                        return false;
                    };
                    let api: kube::Api<Namespace> = kube::Api::all(client);
                    tokio::time::timeout(Duration::from_secs(5), api.get("kube-node-lease"))
                        .await
                        .is_ok_and(|r| r.is_ok())
                })
                .unwrap_or(false)
            },
        )
    }

    /// Stops kube-apiserver (SIGTERM, then SIGKILL after 20 s).
    pub fn stop_apiserver(&mut self) {
        self.stop("kube-apiserver");
    }

    fn prepare_kubelet(&mut self, options: &Options) -> Result<(), RealNodeError> {
        self.state.kubelet_port = free_port()?;
        self.state.kubelet_healthz_port = free_port()?;
        self.state.kubelet_read_only_port = free_port()?;
        self.state.cgroup_root = format!("podcoroner-{}-{}", std::process::id(), self.n);
        for hierarchy in cgroup_v1_hierarchies() {
            let path = hierarchy.join(&self.state.cgroup_root);
            std::fs::create_dir_all(&path).map_err(io_err(&path))?;
        }
        let mut config = kubelet_config(&self.dir, &self.state);
        if let Some(url) = &self.env.manifest_url {
            let mut keys = serde_json::Map::new();
            keys.insert("staticPodURL".to_owned(), url.clone().into());
            keys.insert("httpCheckFrequency".to_owned(), "2s".into());
            merge(&mut config, &keys);
        }
        merge(&mut config, &options.kubelet_config);
        self.state.kubelet_config = config;
        self.state.sysctls = KUBELET_SYSCTLS
            .iter()
            .filter_map(|s| {
                let v = std::fs::read_to_string(Path::new("/proc/sys").join(s)).ok()?;
                Some(((*s).to_owned(), v.trim().to_owned()))
            })
            .collect();
        self.save_state()
    }

    /// The KubeletConfiguration the kubelet runs with (`DIR/kubelet-config.json`).
    pub fn kubelet_config(&self) -> &serde_json::Value {
        &self.state.kubelet_config
    }

    /// Replaces keys of the KubeletConfiguration; takes effect at the next
    /// [`RealNode::start_kubelet`].
    pub fn set_kubelet_config(&mut self, keys: &serde_json::Map<String, serde_json::Value>) {
        merge(&mut self.state.kubelet_config, keys);
    }

    /// Sets the kubelet's `--logging-format` for its next start.
    pub fn set_log_format(&mut self, format: LogFormat) {
        self.state.log_format = format;
    }

    fn kubelet_args(&self) -> Vec<String> {
        let mut args = vec![
            format!(
                "--config={}",
                self.dir.join("kubelet-config.json").display()
            ),
            format!(
                "--kubeconfig={}",
                self.dir.join("kubelet.kubeconfig").display()
            ),
            format!("--root-dir={}", self.env.kubelet_root_dir.display()),
            format!("--hostname-override={NODE_NAME}"),
            "--v=4".to_owned(),
        ];
        if self.state.log_format == LogFormat::Json {
            args.push("--logging-format=json".to_owned());
        }
        args
    }

    /// Starts the kubelet (again, after [`RealNode::stop_kubelet`]) with the current
    /// configuration and log format, and waits until the node reports `Ready` with a heartbeat
    /// newer than this start. A kubelet that dies of the Go runtime's `fatal error: concurrent
    /// map iteration and map write` as it starts (kubelet v1.34.4: the DRA plugin manager's
    /// `wipeResourceSlices` builds the initial Node while the container manager writes its
    /// reservations, `node_container_manager_linux.go` `GetNodeAllocatableReservation`; a race
    /// upstream, not what a test tests) is started again, at most [`KUBELET_RACE_RETRIES`]
    /// times, each said on stderr.
    ///
    /// # Errors
    ///
    /// [`RealNodeError::StartFailed`] with the kubelet's log tail.
    pub fn start_kubelet(&mut self) -> Result<(), RealNodeError> {
        let mut tries = 0;
        loop {
            match self.start_kubelet_once() {
                Err(RealNodeError::StartFailed {
                    ref reason,
                    ref log_tail,
                    ..
                }) if tries < KUBELET_RACE_RETRIES
                    && reason.starts_with("it exited")
                    && log_tail.contains("fatal error: concurrent map") =>
                {
                    tries += 1;
                    eprintln!(
                        "real node: the kubelet died of the Go runtime's concurrent map fatal error \
                         as it started (an upstream race); starting it again ({tries} of \
                         {KUBELET_RACE_RETRIES})"
                    );
                    self.state.pids.remove("kubelet");
                    self.children.remove("kubelet");
                }
                other => return other,
            }
        }
    }

    fn start_kubelet_once(&mut self) -> Result<(), RealNodeError> {
        write(
            &self.dir.join("kubelet-config.json"),
            serde_json::to_vec_pretty(&self.state.kubelet_config).unwrap_or_default(),
        )?;
        let started = jiff::Timestamp::now();
        let child = spawn(
            &self.bins.kubelet(),
            &self.kubelet_args(),
            &self.env.kubelet_log,
        )?;
        self.record("kubelet", child)?;
        let kubeconfig = self.env.kubeconfig.clone();
        self.wait_ready("kubelet", "node lab-node Ready", |_| {
            let kubeconfig = kubeconfig.clone();
            on_own_runtime(move || async move { node_ready_since(&kubeconfig, started).await })
                .unwrap_or(false)
        })
    }

    /// Stops the kubelet (SIGTERM, then SIGKILL after 20 s); its pods keep running.
    pub fn stop_kubelet(&mut self) {
        self.stop("kubelet");
    }

    /// Stops and starts the kubelet: [`RealNode::stop_kubelet`], [`RealNode::start_kubelet`].
    ///
    /// # Errors
    ///
    /// As [`RealNode::start_kubelet`].
    pub fn restart_kubelet(&mut self) -> Result<(), RealNodeError> {
        self.stop_kubelet();
        self.start_kubelet()
    }

    /// Whether the kubelet process is running.
    pub fn kubelet_running(&mut self) -> bool {
        self.check_alive("kubelet").is_ok() && self.state.pids.contains_key("kubelet")
    }

    fn stop(&mut self, component: &str) {
        if let Some(pid) = self.state.pids.remove(component) {
            let child = self.children.remove(component);
            stop_pid(pid, &self.dir, child);
            let _ = self.save_state();
        }
    }

    /// What `DIR/env.json` holds.
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The node directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops (no grace period) and removes a container through CRI (`StopContainer`,
    /// `RemoveContainer`), behind the kubelet's back, as `crictl rm -f` does.
    ///
    /// # Errors
    ///
    /// [`RealNodeError::CommandFailed`] naming the RPC and the gRPC status.
    pub async fn remove_container_under_kubelet(&self, id: &str) -> Result<(), RealNodeError> {
        use podcoroner_cri_api::v1;
        let fail = |rpc: &str, message: String| RealNodeError::CommandFailed {
            command: format!("CRI {rpc} {id}"),
            output: message,
        };
        let channel = connect(&self.socket())
            .await
            .map_err(|m| fail("connect", m))?;
        let mut client = v1::runtime_service_client::RuntimeServiceClient::new(channel);
        client
            .stop_container(v1::StopContainerRequest {
                container_id: id.to_owned(),
                timeout: 0,
            })
            .await
            .map_err(|s| fail("StopContainer", s.message().to_owned()))?;
        client
            .remove_container(v1::RemoveContainerRequest {
                container_id: id.to_owned(),
            })
            .await
            .map_err(|s| fail("RemoveContainer", s.message().to_owned()))?;
        Ok(())
    }

    /// containerd's socket.
    pub fn socket(&self) -> PathBuf {
        socket_path(&self.dir)
    }

    /// containerd's CNI conf dir (for `BrokenCni::inject_at`).
    pub fn cni_conf_dir(&self) -> PathBuf {
        self.dir.join("containerd/cni/net.d")
    }

    /// The admin bearer token.
    pub fn admin_token(&self) -> &str {
        &self.state.admin_token
    }

    /// The kubelet's read-only port (`/pods`, `/healthz` on 127.0.0.1).
    pub fn kubelet_read_only_port(&self) -> u16 {
        self.state.kubelet_read_only_port
    }

    /// A kube client with the admin token.
    ///
    /// # Errors
    ///
    /// [`RealNodeError::Api`].
    pub async fn client(&self) -> Result<kube::Client, RealNodeError> {
        client_from(&self.env.kubeconfig).await
    }

    /// Stops the static pod URL's server: the URL refuses connections (the kubelet keeps the
    /// HTTP static pods it last read). No-op without [`Options::static_pod_url`].
    pub fn stop_pod_url(&mut self) {
        if let Some(server) = self.pod_url.as_mut() {
            server.stop();
        }
    }

    /// Starts the static pod URL's server again on the same port.
    ///
    /// # Errors
    ///
    /// [`RealNodeError::Io`] when the port cannot be bound again.
    pub fn start_pod_url(&mut self) -> Result<(), RealNodeError> {
        if let (Some(server), Some(body)) = (self.pod_url.as_mut(), &self.env.manifest_url_body) {
            server.restart().map_err(io_err(body))?;
        }
        Ok(())
    }

    /// Leaves the node running when this value is dropped (for `cargo xtask real-node up`).
    pub fn detach(mut self) -> Env {
        self.detached = true;
        self.env.clone()
    }
}

impl Drop for RealNode {
    fn drop(&mut self) {
        if !self.detached {
            down_state(
                &self.dir,
                &mut self.state,
                std::mem::take(&mut self.children),
            );
        }
    }
}

/// Whether node [`NODE_NAME`] is `Ready` with a heartbeat at or after `since`.
async fn node_ready_since(kubeconfig: &Path, since: jiff::Timestamp) -> bool {
    let Ok(client) = client_from(kubeconfig).await else {
        return false;
    };
    let api: kube::Api<Node> = kube::Api::all(client);
    let Ok(Ok(node)) = tokio::time::timeout(Duration::from_secs(5), api.get(NODE_NAME)).await
    else {
        return false;
    };
    let since_secs = since.as_second();
    node.status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .iter()
        .any(|c| {
            c.type_ == "Ready"
                && c.status == "True"
                && c.last_heartbeat_time
                    .as_ref()
                    .is_some_and(|t| t.0.as_second() >= since_secs - 1)
        })
}

/// `kubelet --version`, e.g. `Kubernetes v1.34.4`.
fn kubelet_version(kubelet: &Path) -> Result<String, RealNodeError> {
    let out = Command::new(kubelet)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| RealNodeError::CommandFailed {
            command: format!("{} --version", kubelet.display()),
            output: e.to_string(),
        })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The mount points of the cgroup v1 hierarchies (`/proc/mounts` entries of type `cgroup`).
fn cgroup_v1_hierarchies() -> Vec<PathBuf> {
    cgroup_hierarchies(&["cgroup"])
}

/// The mount points of the `/proc/mounts` entries whose type is one of `kinds`.
fn cgroup_hierarchies(kinds: &[&str]) -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let (_, point, kind) = (fields.next()?, fields.next()?, fields.next()?);
            kinds.contains(&kind).then(|| PathBuf::from(point))
        })
        .collect()
}

/// A plain HTTP/1.1 GET of `127.0.0.1:port`: (status, body), `None` when nothing answers.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    use std::io::{Read as _, Write as _};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw);
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())?;
    Some((status, body))
}

// === down ===

fn read_state(dir: &Path) -> Result<State, RealNodeError> {
    let path = dir.join("state.json");
    let bytes = std::fs::read(&path).map_err(io_err(&path))?;
    serde_json::from_slice(&bytes).map_err(|e| RealNodeError::BadDir {
        dir: dir.to_path_buf(),
        reason: format!("state.json: {e}"),
    })
}

/// Whether `pid` is alive (not a zombie) and its command line names `dir`: a PID that was reused
/// by another program is never signalled.
fn owned_alive(pid: u32, dir: &Path) -> bool {
    let proc = Path::new("/proc").join(pid.to_string());
    let zombie = std::fs::read_to_string(proc.join("stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(true);
    if zombie {
        return false;
    }
    let cmdline = std::fs::read(proc.join("cmdline")).unwrap_or_default();
    let dir = dir.display().to_string();
    String::from_utf8_lossy(&cmdline)
        .split('\0')
        .any(|arg| arg.contains(&dir))
}

/// SIGTERM, then SIGKILL after [`STOP_TIMEOUT`]; reaps `child` when this process started it.
fn stop_pid(pid: u32, dir: &Path, mut child: Option<Child>) {
    let gone = |child: &mut Option<Child>| match child {
        Some(c) => !matches!(c.try_wait(), Ok(None)),
        None => !owned_alive(pid, dir),
    };
    if gone(&mut child) || (child.is_none() && !owned_alive(pid, dir)) {
        return;
    }
    let Ok(raw) = i32::try_from(pid) else { return };
    let _ = kill(Pid::from_raw(raw), Signal::SIGTERM);
    let deadline = Instant::now() + STOP_TIMEOUT;
    while Instant::now() < deadline {
        if gone(&mut child) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
    if let Some(c) = child.as_mut() {
        let _ = c.wait();
    }
}

/// Stops the node in `dir` that `cargo xtask real-node up` (or [`RealNode::up`] in another
/// process) started: the kubelet, then every pod sandbox through CRI, containerd and its shims,
/// kube-apiserver, etcd; unmounts what is left under `dir`, removes the CNI leftovers, the
/// bridge and the cgroup root, and restores the sysctls the kubelet changed. Logs stay in `dir`.
///
/// # Errors
///
/// [`RealNodeError::BadDir`] when `dir` holds no node (no readable `state.json`).
pub fn down(dir: &Path) -> Result<(), RealNodeError> {
    let dir = dir.canonicalize().map_err(io_err(dir))?;
    let mut state = read_state(&dir)?;
    down_state(&dir, &mut state, BTreeMap::new());
    Ok(())
}

fn down_state(dir: &Path, state: &mut State, mut children: BTreeMap<String, Child>) {
    let mut stop = |component: &str, state: &mut State| {
        if let Some(pid) = state.pids.remove(component) {
            stop_pid(pid, dir, children.remove(component));
        }
    };
    stop("kubelet", state);
    let socket = socket_path(dir);
    if state.pids.contains_key("containerd") && socket.exists() {
        let socket2 = socket.clone();
        let res = on_own_runtime(move || async move {
            tokio::time::timeout(Duration::from_secs(60), remove_all_sandboxes(&socket2))
                .await
                .unwrap_or_else(|_| Err("timed out".to_owned()))
        })
        .unwrap_or_else(|| Err("the cleanup thread failed".to_owned()));
        if let Err(e) = res {
            eprintln!(
                "real node {}: removing the sandboxes failed: {e}",
                dir.display()
            );
        }
    }
    stop("containerd", state);
    kill_leftovers(&socket, &dir.join("containerd"));
    stop("kube-apiserver", state);
    stop("etcd", state);
    unmount_under(dir);
    if !state.network_name.is_empty() {
        remove_cni_leftovers(&state.network_name);
    }
    if !state.bridge.is_empty() {
        let _ = Command::new("ip")
            .args(["link", "delete", &state.bridge])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    for (sysctl, value) in &state.sysctls {
        let path = Path::new("/proc/sys").join(sysctl);
        if std::fs::read_to_string(&path).is_ok_and(|v| v.trim() != value)
            && let Err(e) = std::fs::write(&path, value)
        {
            eprintln!(
                "real node: restoring {} to {value} failed: {e}",
                path.display()
            );
        }
    }
    if !state.cgroup_root.is_empty() {
        // The v1 hierarchies, where `up` created it, and the cgroup2 one of a hybrid host, where
        // the kubelet's QoS cgroups appear too.
        for hierarchy in cgroup_hierarchies(&["cgroup", "cgroup2"]) {
            remove_cgroup_tree(&hierarchy.join(&state.cgroup_root));
        }
    }
    let _ = write(
        &dir.join("state.json"),
        serde_json::to_vec_pretty(state).unwrap_or_default(),
    );
}

/// Removes a cgroup directory and its children, deepest first (`rmdir`; a cgroup still holding
/// a process stays).
fn remove_cgroup_tree(path: &Path) {
    if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_cgroup_tree(&entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(path);
}
