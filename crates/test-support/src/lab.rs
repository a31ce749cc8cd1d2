//! [`ContainerdLab`]: a private containerd with the CRI plugin, started for one test and torn down
//! when dropped, plus helpers that create pods and containers the way the kubelet does.
//!
//! Each lab has its own temporary directory (root, state, socket, CNI config, host-local IPAM data,
//! pod log directories), its own bridge and /24 subnet and a random stream-server port, so several
//! labs can run at once in one test process or in parallel processes. Names derive from the process
//! ID and a per-process counter.
//!
//! The facts this relies on (`restrict_oom_score_adj`, the bridge + host-local CNI config, no
//! hostname for host-network sandboxes, cleanup through CRI first) are in
//! `shared/reference/containerd-lab.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use podcoroner_cri_api::v1;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::pause::{PauseImage, pause_image};

pub use podcoroner_core::model::{
    ANNOTATION_CONFIG_HASH, ANNOTATION_CONFIG_SOURCE, LABEL_CONTAINER_NAME, LABEL_POD_NAME,
    LABEL_POD_NAMESPACE, LABEL_POD_UID,
};
/// Pod annotation holding when the kubelet first saw the pod (RFC 3339 with nanoseconds).
pub const ANNOTATION_CONFIG_SEEN: &str = "kubernetes.io/config.seen";

/// What the packages provide, checked before anything starts: (what, how to check).
const BINARIES: [&str; 4] = ["containerd", "runc", "ctr", "gcc"];
pub(crate) const CNI_BIN_DIR: &str = "/usr/lib/cni";
const CNI_PLUGINS: [&str; 3] = ["bridge", "host-local", "loopback"];

/// How long the lab waits for containerd to answer after starting it.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// The timeout of each CRI call the lab makes.
const CRI_TIMEOUT: Duration = Duration::from_secs(20);
/// How long dropping a lab may spend on stopping and removing sandboxes through CRI.
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a lab could not start or a lab helper failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// containerd, runc, ctr, the CNI plugins or gcc are missing.
    #[error(
        "the containerd lab needs {}, which {} missing: run `cargo xtask test` (it installs them), \
         or as root `apt-get update && apt-get install -y containerd runc containernetworking-plugins gcc libc6-dev`",
        missing.join(", "),
        if missing.len() == 1 { "is" } else { "are" }
    )]
    PrerequisitesMissing {
        /// What was not found.
        missing: Vec<String>,
    },
    /// The lab runs containerd, which needs root.
    #[error(
        "the containerd lab must run as root (containerd, runc and CNI need it); run the tests as root, e.g. with `cargo xtask test` in CI"
    )]
    NotRoot,
    /// Building the pause image failed.
    #[error("building the lab's pause image failed: {reason}")]
    PauseImageBuildFailed {
        /// What failed.
        reason: String,
    },
    /// Preparing the lab directory failed.
    #[error("preparing the lab directory {} failed", path.display())]
    LabDirFailed {
        /// The path being written.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// containerd did not start or did not answer in time.
    #[error("starting containerd failed: {reason}; last log lines:\n{log_tail}")]
    ContainerdStartFailed {
        /// What happened.
        reason: String,
        /// The end of containerd's log.
        log_tail: String,
    },
    /// `ctr images import` of the pause image failed.
    #[error("importing the pause image failed: {output}")]
    ImageImportFailed {
        /// ctr's output.
        output: String,
    },
    /// A CRI call made by a lab helper failed.
    #[error("calling {rpc} on {endpoint} failed: {message}")]
    CriCallFailed {
        /// The endpoint.
        endpoint: String,
        /// The CRI RPC.
        rpc: &'static str,
        /// The gRPC status or transport error.
        message: String,
    },
}

/// A pod as the lab creates it: what the kubelet takes from the API object (or static manifest)
/// when it builds the `PodSandboxConfig`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodSpec {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name` (for a static pod, with the node name appended).
    pub name: String,
    /// `metadata.uid` (for a static pod, the config hash).
    pub uid: String,
    /// The sandbox attempt: 0 for the first sandbox of the pod.
    pub attempt: u32,
    /// The pod's labels; the `io.kubernetes.pod.*` labels are added on top.
    pub labels: BTreeMap<String, String>,
    /// The pod's annotations, copied to the sandbox as is.
    pub annotations: BTreeMap<String, String>,
    /// `spec.hostNetwork`: the sandbox uses the node's network namespace and sets no hostname.
    pub host_network: bool,
}

impl PodSpec {
    /// A pod from the API server: `kubernetes.io/config.source=api` and `config.seen` = now.
    pub fn api(namespace: &str, name: &str, uid: &str) -> PodSpec {
        let annotations = BTreeMap::from([
            (ANNOTATION_CONFIG_SOURCE.to_owned(), "api".to_owned()),
            (
                ANNOTATION_CONFIG_SEEN.to_owned(),
                jiff::Timestamp::now().to_string(),
            ),
        ]);
        PodSpec {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            uid: uid.to_owned(),
            annotations,
            ..PodSpec::default()
        }
    }

    /// A static pod read from the manifest directory: UID = `hash`, annotations
    /// `kubernetes.io/config.source=file`, `config.hash=<hash>`, `config.seen` = now. `name` is the
    /// full pod name (manifest name plus `-<node name>`).
    pub fn static_pod(namespace: &str, name: &str, hash: &str) -> PodSpec {
        let annotations = BTreeMap::from([
            (ANNOTATION_CONFIG_SOURCE.to_owned(), "file".to_owned()),
            (ANNOTATION_CONFIG_HASH.to_owned(), hash.to_owned()),
            (
                ANNOTATION_CONFIG_SEEN.to_owned(),
                jiff::Timestamp::now().to_string(),
            ),
        ]);
        PodSpec {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            uid: hash.to_owned(),
            annotations,
            ..PodSpec::default()
        }
    }

    /// Adds a pod label.
    pub fn with_label(mut self, key: &str, value: &str) -> PodSpec {
        self.labels.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Adds a pod annotation.
    pub fn with_annotation(mut self, key: &str, value: &str) -> PodSpec {
        self.annotations.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Sets the sandbox attempt.
    pub fn with_attempt(mut self, attempt: u32) -> PodSpec {
        self.attempt = attempt;
        self
    }

    /// Uses the node's network namespace.
    pub fn with_host_network(mut self) -> PodSpec {
        self.host_network = true;
        self
    }

    /// The labels the kubelet puts on the sandbox: the pod's labels plus
    /// `io.kubernetes.pod.{name,namespace,uid}` (`newPodLabels` in
    /// `pkg/kubelet/kuberuntime/labels.go`).
    pub fn sandbox_labels(&self) -> BTreeMap<String, String> {
        let mut labels = self.labels.clone();
        labels.extend(self.identity_labels());
        labels
    }

    /// The labels the kubelet puts on a container named `container`: the pod identity labels and
    /// `io.kubernetes.container.name` (`newContainerLabels`; the pod's own labels are not copied).
    pub fn container_labels(&self, container: &str) -> BTreeMap<String, String> {
        let mut labels: BTreeMap<_, _> = self.identity_labels().into_iter().collect();
        labels.insert(LABEL_CONTAINER_NAME.to_owned(), container.to_owned());
        labels
    }

    /// `<namespace>_<name>_<uid>`: the pod's directory name under `/var/log/pods`
    /// (`BuildPodLogsDirectory` in `pkg/kubelet/kuberuntime/helpers.go`).
    pub fn log_dir_name(&self) -> String {
        format!("{}_{}_{}", self.namespace, self.name, self.uid)
    }

    fn identity_labels(&self) -> [(String, String); 3] {
        [
            (LABEL_POD_NAME.to_owned(), self.name.clone()),
            (LABEL_POD_NAMESPACE.to_owned(), self.namespace.clone()),
            (LABEL_POD_UID.to_owned(), self.uid.clone()),
        ]
    }
}

/// A running private containerd. Dropping it stops and removes every sandbox through CRI, stops
/// containerd (SIGTERM, then SIGKILL), kills leftover shims and container processes of this lab,
/// unmounts what is left under its directory, deletes its bridge and removes the directory.
#[derive(Debug)]
pub struct ContainerdLab {
    dir: tempfile::TempDir,
    socket: PathBuf,
    endpoint: String,
    network_name: String,
    containerd: Child,
    pause: PauseImage,
    bridge: String,
    subnet: String,
}

/// Alias of [`ContainerdLab`].
pub type Lab = ContainerdLab;

static LAB_COUNTER: AtomicU32 = AtomicU32::new(0);

/// Checks that containerd, runc, ctr, gcc and the bridge, host-local and loopback CNI plugins are
/// installed and that the process runs as root.
///
/// # Errors
///
/// [`LabError::PrerequisitesMissing`] listing what is missing (with how to install it), or
/// [`LabError::NotRoot`].
pub fn check_prerequisites() -> Result<(), LabError> {
    let mut missing: Vec<String> = BINARIES
        .iter()
        .filter(|bin| find_in_path(bin).is_none())
        .map(|bin| (*bin).to_owned())
        .collect();
    missing.extend(
        CNI_PLUGINS
            .iter()
            .map(|plugin| Path::new(CNI_BIN_DIR).join(plugin))
            .filter(|path| !path.is_file())
            .map(|path| path.display().to_string()),
    );
    if !missing.is_empty() {
        return Err(LabError::PrerequisitesMissing { missing });
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(LabError::NotRoot);
    }
    Ok(())
}

pub(crate) fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

// === impl ContainerdLab ===

impl ContainerdLab {
    /// Starts a private containerd and imports the pause image into its `k8s.io` namespace.
    ///
    /// Blocks for about a second (plus a one-time gcc build of the pause image). Safe to call
    /// from inside a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`LabError::PrerequisitesMissing`] (with how to install them) or [`LabError::NotRoot`];
    /// [`LabError::PauseImageBuildFailed`], [`LabError::LabDirFailed`],
    /// [`LabError::ContainerdStartFailed`], [`LabError::ImageImportFailed`].
    pub fn start() -> Result<ContainerdLab, LabError> {
        ContainerdLab::start_inner(None)
    }

    /// As [`ContainerdLab::start`], with containerd's CRI socket at `socket` (its directory is
    /// created) instead of inside the lab directory: where a test's node directory keeps it, as
    /// `/run/containerd/containerd.sock` is on a node. At most 107 bytes.
    ///
    /// # Errors
    ///
    /// As [`ContainerdLab::start`].
    pub fn start_with_socket(socket: &Path) -> Result<ContainerdLab, LabError> {
        if let Some(dir) = socket.parent() {
            std::fs::create_dir_all(dir).map_err(|source| LabError::LabDirFailed {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        ContainerdLab::start_inner(Some(socket.to_path_buf()))
    }

    fn start_inner(socket: Option<PathBuf>) -> Result<ContainerdLab, LabError> {
        check_prerequisites()?;
        let pause = pause_image()?;
        let n = LAB_COUNTER.fetch_add(1, Ordering::SeqCst);
        let pid = std::process::id();
        // Unix socket paths are limited to 107 bytes: keep the lab directory short.
        let base = Some(std::env::temp_dir())
            .filter(|t| t.as_os_str().len() <= 40)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let dir = tempfile::Builder::new()
            .prefix(&format!("podcoroner-lab-{pid}-{n}-"))
            .tempdir_in(&base)
            .map_err(|source| LabError::LabDirFailed {
                path: base.clone(),
                source,
            })?;
        let (subnet, bridge) = pick_network(pid, n);
        let socket = socket.unwrap_or_else(|| dir.path().join("containerd.sock"));
        let endpoint = format!("unix://{}", socket.display());
        let network_name = format!("podcoroner-lab-{pid}-{n}");
        write_files(dir.path(), &socket, &pause, &subnet, &bridge, &network_name)?;

        let log_path = dir.path().join("containerd.log");
        let containerd = spawn_containerd(dir.path(), &log_path)?;
        // From here on, Drop cleans up whatever happens.
        let mut lab = ContainerdLab {
            dir,
            socket,
            endpoint,
            network_name,
            containerd,
            pause,
            bridge,
            subnet,
        };
        lab.wait_until_ready(&log_path)?;
        lab.import_pause_image()?;
        lab.wait_until_image_visible()?;
        Ok(lab)
    }

    /// Stops the lab's containerd (SIGTERM, then SIGKILL after 10 s) and starts it again on the
    /// same root, state and socket, as `systemctl restart containerd` would. Pod sandboxes and
    /// their shims survive; the CRI plugin reloads its state from containerd's metadata.
    ///
    /// # Errors
    ///
    /// [`LabError::LabDirFailed`] or [`LabError::ContainerdStartFailed`].
    pub fn restart(&mut self) -> Result<(), LabError> {
        self.stop_containerd();
        let log_path = self.dir.path().join("containerd.log");
        self.containerd = spawn_containerd(self.dir.path(), &log_path)?;
        self.wait_until_ready(&log_path)
    }

    /// Stops the lab's containerd and waits until it has exited, leaving the socket dead.
    /// [`ContainerdLab::restart`] starts it again.
    pub fn stop(&mut self) {
        self.stop_containerd();
    }

    /// Runs `ctr -a <socket> -n k8s.io <args>` against the lab's containerd and returns its
    /// standard output; for tests that must reach below the CRI (e.g. to corrupt metadata the way
    /// a crash does).
    ///
    /// # Errors
    ///
    /// [`LabError::CriCallFailed`] with ctr's output when it exits non-zero.
    pub fn ctr(&self, args: &[&str]) -> Result<String, LabError> {
        let out = Command::new("ctr")
            .arg("-a")
            .arg(&self.socket)
            .args(["-n", "k8s.io"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| self.cri_error("ctr", format!("running ctr {args:?}: {e}")))?;
        if !out.status.success() {
            return Err(self.cri_error(
                "ctr",
                format!(
                    "ctr {args:?}: {}: {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The CRI endpoint, `unix:///…/containerd.sock`.
    pub fn endpoint(&self) -> String {
        self.endpoint.clone()
    }

    /// The containerd socket path.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The lab's temporary directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The lab's stand-in for `/var/log/pods`.
    pub fn pod_logs_root(&self) -> PathBuf {
        self.dir.path().join("var/log/pods")
    }

    /// The pod's log directory, `<pod_logs_root>/<namespace>_<name>_<uid>`.
    pub fn pod_log_dir(&self, pod: &PodSpec) -> PathBuf {
        self.pod_logs_root().join(pod.log_dir_name())
    }

    /// The reference of the pause image, which also serves as the container image.
    pub fn image(&self) -> &str {
        &self.pause.name
    }

    /// The PID of the lab's containerd.
    pub fn containerd_pid(&self) -> u32 {
        self.containerd.id()
    }

    /// The lab's pod subnet (CIDR) and bridge name.
    pub fn network(&self) -> (&str, &str) {
        (&self.subnet, &self.bridge)
    }

    /// Creates and starts a pod sandbox the way the kubelet does (`generatePodSandboxConfig`):
    /// `PodSandboxMetadata{name, uid, namespace, attempt}`, the pod's labels plus
    /// `io.kubernetes.pod.{name,namespace,uid}`, the pod's annotations, log directory
    /// `<pod_logs_root>/<ns>_<name>_<uid>` (created first, as the kubelet does), hostname = pod name
    /// unless host network, and namespace options (network POD or NODE, PID CONTAINER, IPC POD).
    /// Returns the sandbox ID.
    ///
    /// # Errors
    ///
    /// [`LabError::LabDirFailed`] for the log directory, [`LabError::CriCallFailed`] for
    /// `RunPodSandbox`.
    pub async fn run_pod(&self, pod: &PodSpec) -> Result<String, LabError> {
        let log_dir = self.pod_log_dir(pod);
        std::fs::create_dir_all(&log_dir).map_err(|source| LabError::LabDirFailed {
            path: log_dir.clone(),
            source,
        })?;
        let req = v1::RunPodSandboxRequest {
            config: Some(self.sandbox_config(pod)),
            runtime_handler: String::new(),
        };
        let mut client = self.client("RunPodSandbox").await?;
        let resp = self
            .cri("RunPodSandbox", client.run_pod_sandbox(req))
            .await?;
        Ok(resp.pod_sandbox_id)
    }

    /// Creates a container in the sandbox the way the kubelet does (`generateContainerConfig`):
    /// [`ContainerdLab::container_config`] for the lab image, then
    /// [`ContainerdLab::create_container_from`]. Returns the container ID.
    ///
    /// containerd reserves `<container>_<pod>_<namespace>_<uid>_<attempt>`, so two containers of a
    /// pod need distinct names or attempts.
    ///
    /// # Errors
    ///
    /// [`LabError::LabDirFailed`], [`LabError::CriCallFailed`] for `CreateContainer` or
    /// `StartContainer`.
    pub async fn create_container(
        &self,
        sandbox_id: &str,
        pod: &PodSpec,
        name: &str,
        attempt: u32,
        start: bool,
    ) -> Result<String, LabError> {
        let config = self.container_config(pod, name, attempt);
        self.create_container_from(sandbox_id, pod, config, start)
            .await
    }

    /// The `ContainerConfig` the kubelet builds (`generateContainerConfig`) for container `name`
    /// of `pod`, running the lab image: `ContainerMetadata{name, attempt}`, labels
    /// `io.kubernetes.container.name` and `io.kubernetes.pod.{name,namespace,uid}`, the kubelet's
    /// container annotations (`io.kubernetes.container.restartCount` = attempt, …), log path
    /// `<container>/<attempt>.log` and the pod's namespace options. A test changes the image,
    /// command, mounts or security context before [`ContainerdLab::create_container_from`].
    pub fn container_config(&self, pod: &PodSpec, name: &str, attempt: u32) -> v1::ContainerConfig {
        let annotations = BTreeMap::from([
            (
                "io.kubernetes.container.hash".to_owned(),
                "5c1b7a3e".to_owned(),
            ),
            (
                "io.kubernetes.container.restartCount".to_owned(),
                attempt.to_string(),
            ),
            (
                "io.kubernetes.container.terminationMessagePath".to_owned(),
                "/dev/termination-log".to_owned(),
            ),
            (
                "io.kubernetes.container.terminationMessagePolicy".to_owned(),
                "File".to_owned(),
            ),
            (
                "io.kubernetes.pod.terminationGracePeriod".to_owned(),
                "30".to_owned(),
            ),
        ]);
        v1::ContainerConfig {
            metadata: Some(v1::ContainerMetadata {
                name: name.to_owned(),
                attempt,
            }),
            image: Some(v1::ImageSpec {
                image: self.pause.name.clone(),
                annotations: BTreeMap::new(),
            }),
            labels: pod.container_labels(name),
            annotations,
            log_path: format!("{name}/{attempt}.log"),
            linux: Some(v1::LinuxContainerConfig {
                security_context: Some(v1::LinuxContainerSecurityContext {
                    namespace_options: Some(namespace_options(pod)),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }
    }

    /// CRI `CreateContainer` of `config` in the sandbox (with the pod's sandbox config, as the
    /// kubelet sends it), after creating the container's log directory; then `StartContainer`
    /// when `start`. Returns the container ID.
    ///
    /// # Errors
    ///
    /// [`LabError::LabDirFailed`], [`LabError::CriCallFailed`] for `CreateContainer` or
    /// `StartContainer`.
    pub async fn create_container_from(
        &self,
        sandbox_id: &str,
        pod: &PodSpec,
        config: v1::ContainerConfig,
        start: bool,
    ) -> Result<String, LabError> {
        if let Some(dir) = Path::new(&config.log_path).parent() {
            let container_log_dir = self.pod_log_dir(pod).join(dir);
            std::fs::create_dir_all(&container_log_dir).map_err(|source| {
                LabError::LabDirFailed {
                    path: container_log_dir,
                    source,
                }
            })?;
        }
        let req = v1::CreateContainerRequest {
            pod_sandbox_id: sandbox_id.to_owned(),
            config: Some(config),
            sandbox_config: Some(self.sandbox_config(pod)),
        };
        let mut client = self.client("CreateContainer").await?;
        let id = self
            .cri("CreateContainer", client.create_container(req))
            .await?
            .container_id;
        if start {
            let req = v1::StartContainerRequest {
                container_id: id.clone(),
            };
            self.cri("StartContainer", client.start_container(req))
                .await?;
        }
        Ok(id)
    }

    /// The pod IP of a sandbox on the lab's pod network (CRI `PodSandboxStatus`,
    /// `network.ip`); empty for a host-network sandbox.
    ///
    /// # Errors
    ///
    /// [`LabError::CriCallFailed`].
    pub async fn sandbox_ip(&self, sandbox_id: &str) -> Result<String, LabError> {
        let mut client = self.client("PodSandboxStatus").await?;
        let req = v1::PodSandboxStatusRequest {
            pod_sandbox_id: sandbox_id.to_owned(),
            verbose: false,
        };
        let status = self
            .cri("PodSandboxStatus", client.pod_sandbox_status(req))
            .await?;
        Ok(status
            .status
            .and_then(|s| s.network)
            .map(|n| n.ip)
            .unwrap_or_default())
    }

    /// CRI `StartContainer`.
    ///
    /// # Errors
    ///
    /// [`LabError::CriCallFailed`].
    pub async fn start_container(&self, id: &str) -> Result<(), LabError> {
        let mut client = self.client("StartContainer").await?;
        let req = v1::StartContainerRequest {
            container_id: id.to_owned(),
        };
        self.cri("StartContainer", client.start_container(req))
            .await?;
        Ok(())
    }

    /// CRI `StopContainer` with a 10 s grace period (the pause program exits on SIGTERM at once).
    ///
    /// # Errors
    ///
    /// [`LabError::CriCallFailed`].
    pub async fn stop_container(&self, id: &str) -> Result<(), LabError> {
        let mut client = self.client("StopContainer").await?;
        let req = v1::StopContainerRequest {
            container_id: id.to_owned(),
            timeout: 10,
        };
        self.cri("StopContainer", client.stop_container(req))
            .await?;
        Ok(())
    }

    /// CRI `RemoveContainer`.
    ///
    /// # Errors
    ///
    /// [`LabError::CriCallFailed`].
    pub async fn remove_container(&self, id: &str) -> Result<(), LabError> {
        let mut client = self.client("RemoveContainer").await?;
        let req = v1::RemoveContainerRequest {
            container_id: id.to_owned(),
        };
        self.cri("RemoveContainer", client.remove_container(req))
            .await?;
        Ok(())
    }

    /// CRI `StopPodSandbox`: the sandbox becomes `SANDBOX_NOTREADY`.
    ///
    /// # Errors
    ///
    /// [`LabError::CriCallFailed`].
    pub async fn stop_sandbox(&self, id: &str) -> Result<(), LabError> {
        let mut client = self.client("StopPodSandbox").await?;
        let req = v1::StopPodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        };
        self.cri("StopPodSandbox", client.stop_pod_sandbox(req))
            .await?;
        Ok(())
    }

    /// CRI `RemovePodSandbox`.
    ///
    /// # Errors
    ///
    /// [`LabError::CriCallFailed`].
    pub async fn remove_sandbox(&self, id: &str) -> Result<(), LabError> {
        let mut client = self.client("RemovePodSandbox").await?;
        let req = v1::RemovePodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        };
        self.cri("RemovePodSandbox", client.remove_pod_sandbox(req))
            .await?;
        Ok(())
    }

    fn sandbox_config(&self, pod: &PodSpec) -> v1::PodSandboxConfig {
        v1::PodSandboxConfig {
            metadata: Some(v1::PodSandboxMetadata {
                name: pod.name.clone(),
                uid: pod.uid.clone(),
                namespace: pod.namespace.clone(),
                attempt: pod.attempt,
            }),
            // runc refuses to set a hostname without a private UTS namespace.
            hostname: if pod.host_network {
                String::new()
            } else {
                pod.name.clone()
            },
            log_directory: self.pod_log_dir(pod).display().to_string(),
            dns_config: None,
            labels: pod.sandbox_labels(),
            annotations: pod.annotations.clone(),
            linux: Some(v1::LinuxPodSandboxConfig {
                cgroup_parent: String::new(),
                security_context: Some(v1::LinuxSandboxSecurityContext {
                    namespace_options: Some(namespace_options(pod)),
                    ..Default::default()
                }),
                sysctls: BTreeMap::new(),
            }),
        }
    }

    async fn client(
        &self,
        rpc: &'static str,
    ) -> Result<v1::runtime_service_client::RuntimeServiceClient<Channel>, LabError> {
        let channel = connect(&self.socket)
            .await
            .map_err(|message| self.cri_error(rpc, message))?;
        Ok(v1::runtime_service_client::RuntimeServiceClient::new(
            channel,
        ))
    }

    async fn cri<T>(
        &self,
        rpc: &'static str,
        fut: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, LabError> {
        match tokio::time::timeout(CRI_TIMEOUT, fut).await {
            Err(_) => Err(self.cri_error(rpc, format!("timed out after {CRI_TIMEOUT:?}"))),
            Ok(Err(status)) => {
                Err(self.cri_error(rpc, format!("{:?}: {}", status.code(), status.message())))
            }
            Ok(Ok(resp)) => Ok(resp.into_inner()),
        }
    }

    fn cri_error(&self, rpc: &'static str, message: String) -> LabError {
        LabError::CriCallFailed {
            endpoint: self.endpoint.clone(),
            rpc,
            message,
        }
    }

    fn log_tail(log_path: &Path) -> String {
        let log = std::fs::read_to_string(log_path).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    fn wait_until_ready(&mut self, log_path: &Path) -> Result<(), LabError> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.containerd.try_wait() {
                return Err(LabError::ContainerdStartFailed {
                    reason: format!("containerd exited with {status}"),
                    log_tail: ContainerdLab::log_tail(log_path),
                });
            }
            if self.socket.exists() {
                let out = Command::new("ctr")
                    .arg("-a")
                    .arg(&self.socket)
                    .arg("version")
                    .stdin(Stdio::null())
                    .output();
                // containerd answers before its CRI plugin has initialized ("server is not
                // initialized yet"), notably after a restart: wait for the CRI too.
                if out.is_ok_and(|out| out.status.success()) && cri_answers(&self.socket) {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(LabError::ContainerdStartFailed {
                    reason: format!(
                        "`ctr -a {} version` did not answer within {STARTUP_TIMEOUT:?}",
                        self.socket.display()
                    ),
                    log_tail: ContainerdLab::log_tail(log_path),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the CRI plugin sees the imported pause image: it learns of `ctr import` through
    /// an event, and a `RunPodSandbox` before that tries to pull the image and fails.
    fn wait_until_image_visible(&self) -> Result<(), LabError> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            let visible = image_visible(&self.socket, &self.pause.name);
            if visible {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(LabError::ImageImportFailed {
                    output: format!(
                        "the CRI plugin did not see {} within {STARTUP_TIMEOUT:?}",
                        self.pause.name
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn import_pause_image(&self) -> Result<(), LabError> {
        let archive = self.pause.archive.clone();
        self.import_image(&archive)
    }

    /// `ctr -n k8s.io images import ARCHIVE` into the lab's containerd: an OCI or Docker image
    /// archive, named by its `io.containerd.image.name` annotation (or `RepoTags`).
    ///
    /// # Errors
    ///
    /// [`LabError::ImageImportFailed`] with ctr's output.
    pub fn import_image(&self, archive: &Path) -> Result<(), LabError> {
        let out = Command::new("ctr")
            .arg("-a")
            .arg(&self.socket)
            .args(["-n", "k8s.io", "images", "import"])
            .arg(archive)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| LabError::ImageImportFailed {
                output: format!("running ctr: {e}"),
            })?;
        if !out.status.success() {
            return Err(LabError::ImageImportFailed {
                output: format!(
                    "{}: {}{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ),
            });
        }
        Ok(())
    }

    /// Stops and removes every sandbox through CRI, in a thread with its own runtime (Drop may run
    /// inside or outside a tokio runtime), bounded by [`CLEANUP_TIMEOUT`].
    fn remove_all_sandboxes(&self) {
        let socket = self.socket.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let res = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
                .and_then(|rt| rt.block_on(remove_all_sandboxes(&socket)));
            let _ = tx.send(res);
        });
        match rx.recv_timeout(CLEANUP_TIMEOUT) {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!(
                "containerd lab {}: CRI cleanup failed: {error}",
                self.endpoint
            ),
            Err(_) => eprintln!("containerd lab {}: CRI cleanup timed out", self.endpoint),
        }
    }

    fn stop_containerd(&mut self) {
        if !matches!(self.containerd.try_wait(), Ok(None)) {
            return;
        }
        let pid = Pid::from_raw(self.containerd.id() as i32);
        let _ = kill(pid, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if !matches!(self.containerd.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.containerd.kill();
        let _ = self.containerd.wait();
    }
}

impl Drop for ContainerdLab {
    fn drop(&mut self) {
        if matches!(self.containerd.try_wait(), Ok(None)) {
            self.remove_all_sandboxes();
        }
        self.stop_containerd();
        kill_leftovers(&self.socket, self.dir.path());
        unmount_under(self.dir.path());
        remove_cni_leftovers(&self.network_name);
        let _ = Command::new("ip")
            .args(["link", "delete", &self.bridge])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // The TempDir field removes the directory after this.
    }
}

// === helpers ===

/// Starts `containerd --config <dir>/config.toml`, appending its output to `log_path`.
fn spawn_containerd(dir: &Path, log_path: &Path) -> Result<Child, LabError> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .map_err(|source| LabError::LabDirFailed {
            path: log_path.to_path_buf(),
            source,
        })?;
    let log_err = log.try_clone().map_err(|source| LabError::LabDirFailed {
        path: log_path.to_path_buf(),
        source,
    })?;
    Command::new("containerd")
        .arg("--config")
        .arg(dir.join("config.toml"))
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| LabError::ContainerdStartFailed {
            reason: format!("spawning containerd: {e}"),
            log_tail: String::new(),
        })
}

fn namespace_options(pod: &PodSpec) -> v1::NamespaceOption {
    let network = if pod.host_network {
        v1::NamespaceMode::Node
    } else {
        v1::NamespaceMode::Pod
    };
    v1::NamespaceOption {
        network: network as i32,
        pid: v1::NamespaceMode::Container as i32,
        ipc: v1::NamespaceMode::Pod as i32,
        target_id: String::new(),
    }
}

pub(crate) async fn connect(socket: &Path) -> Result<Channel, String> {
    let socket = socket.to_owned();
    let connector = tower::service_fn(move |_: Uri| {
        let socket = socket.clone();
        async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(socket).await?)) }
    });
    let endpoint = Endpoint::from_static("http://localhost").connect_timeout(CRI_TIMEOUT);
    match tokio::time::timeout(CRI_TIMEOUT, endpoint.connect_with_connector(connector)).await {
        Err(_) => Err(format!("connecting timed out after {CRI_TIMEOUT:?}")),
        Ok(Err(error)) => Err(format!("connecting failed: {}", error_chain(&error))),
        Ok(Ok(channel)) => Ok(channel),
    }
}

/// Runs the future `f` builds on its own thread and current-thread runtime, so sync code inside
/// or outside a tokio runtime can wait for it; `None` when the runtime cannot be built or the
/// thread panicked.
pub(crate) fn on_own_runtime<T, F>(f: impl FnOnce() -> F + Send + 'static) -> Option<T>
where
    T: Send + 'static,
    F: std::future::Future<Output = T>,
{
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        Some(rt.block_on(f()))
    })
    .join()
    .ok()
    .flatten()
}

/// True when the CRI `Version` RPC answers on `socket`.
pub(crate) fn cri_answers(socket: &Path) -> bool {
    let socket = socket.to_owned();
    on_own_runtime(move || async move {
        let channel = connect(&socket).await.ok()?;
        let mut client = v1::runtime_service_client::RuntimeServiceClient::new(channel);
        let req = v1::VersionRequest {
            version: String::new(),
        };
        tokio::time::timeout(CRI_TIMEOUT, client.version(req))
            .await
            .ok()?
            .ok()
    })
    .flatten()
    .is_some()
}

/// True when the CRI plugin on `socket` knows `image` (CRI `ImageStatus`).
pub(crate) fn image_visible(socket: &Path, image: &str) -> bool {
    let socket = socket.to_owned();
    let image = image.to_owned();
    on_own_runtime(move || async move {
        let channel = connect(&socket).await.ok()?;
        let mut client = v1::image_service_client::ImageServiceClient::new(channel);
        let req = v1::ImageStatusRequest {
            image: Some(v1::ImageSpec {
                image,
                annotations: Default::default(),
            }),
            verbose: false,
        };
        let resp = tokio::time::timeout(CRI_TIMEOUT, client.image_status(req))
            .await
            .ok()?
            .ok()?;
        resp.into_inner().image.map(|_| ())
    })
    .flatten()
    .is_some()
}

fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(error) = source {
        out.push_str(": ");
        out.push_str(&error.to_string());
        source = error.source();
    }
    out
}

pub(crate) async fn remove_all_sandboxes(socket: &Path) -> Result<(), String> {
    let channel = connect(socket).await?;
    let mut client = v1::runtime_service_client::RuntimeServiceClient::new(channel);
    let list = tokio::time::timeout(
        CRI_TIMEOUT,
        client.list_pod_sandbox(v1::ListPodSandboxRequest::default()),
    )
    .await
    .map_err(|_| "ListPodSandbox timed out".to_owned())?
    .map_err(|s| format!("ListPodSandbox: {}", s.message()))?
    .into_inner();
    let mut errors = Vec::new();
    for sandbox in list.items {
        let id = sandbox.id;
        let stop = v1::StopPodSandboxRequest {
            pod_sandbox_id: id.clone(),
        };
        match tokio::time::timeout(CRI_TIMEOUT, client.stop_pod_sandbox(stop)).await {
            Ok(Ok(_)) => {}
            Ok(Err(s)) => errors.push(format!("StopPodSandbox {id}: {}", s.message())),
            Err(_) => errors.push(format!("StopPodSandbox {id}: timed out")),
        }
        let remove = v1::RemovePodSandboxRequest {
            pod_sandbox_id: id.clone(),
        };
        match tokio::time::timeout(CRI_TIMEOUT, client.remove_pod_sandbox(remove)).await {
            Ok(Ok(_)) => {}
            Ok(Err(s)) => errors.push(format!("RemovePodSandbox {id}: {}", s.message())),
            Err(_) => errors.push(format!("RemovePodSandbox {id}: timed out")),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Picks a /24 in 10.100.0.0–10.227.255.0 and a bridge name unique to (pid, n), skipping subnets
/// the host already routes and bridge names that already exist.
pub(crate) fn pick_network(pid: u32, n: u32) -> (String, String) {
    let routes = host_routes();
    let start = pid.wrapping_mul(7919).wrapping_add(n.wrapping_mul(104_729)) % 32_768;
    for i in 0..32_768 {
        let idx = (start + i) % 32_768;
        let (b, c) = (100 + idx / 256, idx % 256);
        let net = u32::from_be_bytes([10, b as u8, c as u8, 0]);
        let bridge = format!("pcr{idx:04x}");
        let taken = routes
            .iter()
            .any(|(dest, mask)| (net & mask) == (dest & mask) || (dest & 0xffff_ff00) == net)
            || Path::new("/sys/class/net").join(&bridge).exists();
        if !taken {
            return (format!("10.{b}.{c}.0/24"), bridge);
        }
    }
    (
        "10.100.0.0/24".to_owned(),
        format!("pcr{pid:x}{n}").chars().take(15).collect(),
    )
}

/// The host's IPv4 routes as (destination, mask), excluding the default route.
fn host_routes() -> Vec<(u32, u32)> {
    let table = std::fs::read_to_string("/proc/net/route").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let dest = u32::from_str_radix(fields.get(1)?, 16).ok()?.swap_bytes();
            let mask = u32::from_str_radix(fields.get(7)?, 16).ok()?.swap_bytes();
            (mask != 0).then_some((dest, mask))
        })
        .collect()
}

pub(crate) fn write_files(
    dir: &Path,
    socket: &Path,
    pause: &PauseImage,
    subnet: &str,
    bridge: &str,
    network_name: &str,
) -> Result<(), LabError> {
    let write = |path: PathBuf, contents: String| -> Result<(), LabError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| LabError::LabDirFailed {
                path: parent.to_owned(),
                source,
            })?;
        }
        std::fs::write(&path, contents).map_err(|source| LabError::LabDirFailed { path, source })
    };
    let d = dir.display();
    let config = format!(
        r#"version = 2
root = "{d}/root"
state = "{d}/state"

[grpc]
  address = "{socket}"

[ttrpc]
  address = "{socket}.ttrpc"

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "{image}"
    restrict_oom_score_adj = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "{CNI_BIN_DIR}"
      conf_dir = "{d}/cni/net.d"
      max_conf_num = 1
  [plugins."io.containerd.internal.v1.opt"]
    path = "{d}/opt"
"#,
        socket = socket.display(),
        image = pause.name,
    );
    write(dir.join("config.toml"), config)?;
    let conflist = serde_json::json!({
        "cniVersion": "0.4.0",
        "name": network_name,
        "plugins": [
            {
                "type": "bridge",
                "bridge": bridge,
                "isGateway": true,
                "ipMasq": false,
                "hairpinMode": false,
                "ipam": {
                    "type": "host-local",
                    "dataDir": format!("{d}/cni/ipam"),
                    "ranges": [[{ "subnet": subnet }]],
                    "routes": [{ "dst": "0.0.0.0/0" }],
                },
            },
            { "type": "loopback" },
        ],
    });
    write(
        dir.join("cni/net.d/10-podcoroner-lab.conflist"),
        format!("{conflist:#}\n"),
    )?;
    for sub in ["var/log/pods", "cni/ipam"] {
        let path = dir.join(sub);
        std::fs::create_dir_all(&path).map_err(|source| LabError::LabDirFailed { path, source })?;
    }
    Ok(())
}

/// Kills (SIGKILL) this lab's leftover shims (their command line names the lab's socket) and
/// container processes (the `init.pid` files of its runtime v2 task directories).
pub(crate) fn kill_leftovers(socket: &Path, dir: &Path) {
    let socket = socket.display().to_string();
    let mut pids = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline)
                .split('\0')
                .any(|arg| arg == socket)
            {
                pids.push(pid);
            }
        }
    }
    let tasks = dir.join("state/io.containerd.runtime.v2.task");
    for namespace in std::fs::read_dir(&tasks).into_iter().flatten().flatten() {
        for task in std::fs::read_dir(namespace.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let pid = std::fs::read_to_string(task.path().join("init.pid")).unwrap_or_default();
            pids.extend(pid.trim().parse::<i32>().ok());
        }
    }
    let me = std::process::id() as i32;
    for pid in pids.into_iter().filter(|pid| *pid > 1 && *pid != me) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

/// After containerd died without tearing its sandboxes down: unmounts (and so frees, with their
/// veth pairs) the network namespaces of this lab's sandboxes and drops their CNI result cache
/// entries. The namespaces are found in the cached CNI results of the lab's network.
pub(crate) fn remove_cni_leftovers(network_name: &str) {
    const CACHE: &str = "/var/lib/cni/results";
    let Ok(entries) = std::fs::read_dir(CACHE) else {
        return;
    };
    let mut container_ids = Vec::new();
    for entry in entries.flatten() {
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let Ok(cached) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
            continue;
        };
        if cached["networkName"] != network_name {
            continue;
        }
        let interfaces = cached["result"]["interfaces"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for netns in interfaces.iter().filter_map(|i| i["sandbox"].as_str()) {
            let _ = nix::mount::umount2(netns, nix::mount::MntFlags::MNT_DETACH);
            let _ = std::fs::remove_file(netns);
        }
        if let Some(id) = cached["containerId"].as_str() {
            container_ids.push(id.to_owned());
        }
        let _ = std::fs::remove_file(entry.path());
    }
    for id in container_ids {
        let _ = std::fs::remove_file(Path::new(CACHE).join(format!("cni-loopback-{id}-lo")));
    }
}

/// Lazily unmounts every mount point under `dir`, deepest first.
pub(crate) fn unmount_under(dir: &Path) {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut points: Vec<PathBuf> = mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|p| PathBuf::from(p.replace("\\040", " ")))
        .filter(|p| p.starts_with(dir))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    for point in points {
        let _ = nix::mount::umount2(&point, nix::mount::MntFlags::MNT_DETACH);
    }
}
