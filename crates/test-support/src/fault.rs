//! Faults injected into a [`ContainerdLab`] the way real nodes get them, built on the lab's public
//! API only (its directory and socket).
//!
//! [`BrokenCni`] breaks the lab's CNI configuration so that containerd's CNI teardown fails: every
//! `StopPodSandbox` of a pod-network sandbox whose network is still set up then fails with
//! `failed to destroy network for sandbox "<id>": …` (containerd 1.6
//! `pkg/cri/server/sandbox_stop.go` `stopPodSandbox`: it stops the sandbox's containers and its
//! pause task first, so the sandbox is `SANDBOX_NOTREADY`, then tears the network down, and keeps
//! the network namespace for the next try when that fails). This is what the kubelet's sandbox GC
//! runs into on real nodes, forever, until the CNI is repaired.
//!
//! containerd reloads the CNI configuration when a file in its conf dir is written or removed (an
//! fsnotify watch), so injecting and repairing both wait, through CRI `Status` (verbose: containerd's `cniconfig`
//! info), until containerd has loaded the new configuration.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use podcoroner_cri_api::v1;
use tokio::net::UnixStream;
use tonic::transport::{Endpoint, Uri};

use crate::lab::{ContainerdLab, LabError};

/// How long injecting or repairing waits for containerd to load the changed CNI configuration.
const RELOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// The plugin `type` [`CniFault::PluginMissing`] puts in the conflist: no such binary exists.
pub const MISSING_CNI_PLUGIN: &str = "podcoroner-missing-plugin";

/// How the CNI configuration is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CniFault {
    /// The conflist is gone from the conf dir (a CNI daemonset uninstalled, or restarting and
    /// rewriting its config): containerd answers the teardown with `cni plugin not initialized`.
    ConfigRemoved,
    /// The network's first plugin names a binary absent from the CNI bin dir
    /// ([`MISSING_CNI_PLUGIN`]; a plugin uninstalled while pods still use it): the DEL fails with
    /// `failed to find plugin`.
    PluginMissing,
    /// The network's first plugin wrapped by a script in the CNI bin dir that sleeps this many
    /// seconds on `ADD` and then runs the plugin: every pod sandbox takes that long to get its
    /// network (a slow IPAM or CNI agent), and still gets it.
    SlowAdd(u32),
    /// The network's first plugin wrapped by a script that refuses every `ADD` with a CNI error
    /// (`podcoroner: ADD refused`, as an exhausted IPAM does) and runs the plugin for the rest:
    /// no new sandbox gets its network, while every teardown still works.
    AddFails,
}

/// A lab whose CNI configuration is broken. [`BrokenCni::repair`] restores it and waits until
/// containerd has loaded it again; dropping it unrepaired restores the file without waiting.
#[derive(Debug)]
pub struct BrokenCni {
    conflist: PathBuf,
    original: Vec<u8>,
    socket: PathBuf,
    endpoint: String,
    repaired: bool,
    /// The wrapper script [`CniFault::SlowAdd`] wrote, removed on repair and drop.
    wrapper: Option<PathBuf>,
}

impl BrokenCni {
    /// Breaks `lab`'s CNI configuration with `fault` and waits until containerd has loaded the
    /// broken configuration (at most 30 s). Sandboxes created before keep their network; their
    /// next `StopPodSandbox` fails.
    ///
    /// # Errors
    ///
    /// [`LabError::LabDirFailed`] when the lab's conflist cannot be found, read or rewritten;
    /// [`LabError::CriCallFailed`] when containerd's `Status` fails or does not show the broken
    /// configuration in time.
    pub async fn inject(lab: &ContainerdLab, fault: CniFault) -> Result<BrokenCni, LabError> {
        BrokenCni::inject_at(&lab.dir().join("cni/net.d"), lab.socket(), fault).await
    }

    /// As [`BrokenCni::inject`] for the containerd on `socket` whose CNI conf dir is `conf_dir`
    /// (a real node's: `RealNode::cni_conf_dir`, `RealNode::socket`).
    ///
    /// # Errors
    ///
    /// As [`BrokenCni::inject`].
    pub async fn inject_at(
        conf_dir: &Path,
        socket: &Path,
        fault: CniFault,
    ) -> Result<BrokenCni, LabError> {
        let conflist = find_conflist(conf_dir)?;
        let original = std::fs::read(&conflist).map_err(|source| LabError::LabDirFailed {
            path: conflist.clone(),
            source,
        })?;
        let mut broken = BrokenCni {
            conflist,
            original,
            socket: socket.to_owned(),
            endpoint: format!("unix://{}", socket.display()),
            repaired: false,
            wrapper: None,
        };
        let expected = match fault {
            CniFault::ConfigRemoved => {
                std::fs::remove_file(&broken.conflist).map_err(|source| {
                    LabError::LabDirFailed {
                        path: broken.conflist.clone(),
                        source,
                    }
                })?;
                None
            }
            CniFault::PluginMissing => {
                let mut conf: serde_json::Value = serde_json::from_slice(&broken.original)
                    .map_err(|e| broken.dir_error(std::io::Error::other(e)))?;
                conf["plugins"][0]["type"] = MISSING_CNI_PLUGIN.into();
                let text = format!("{conf:#}\n");
                broken.replace(text.as_bytes())?;
                Some(text)
            }
            CniFault::SlowAdd(secs) => Some(broken.wrap_plugin(
                "slow-add",
                &format!("[ \"$CNI_COMMAND\" = ADD ] && sleep {secs}"),
            )?),
            CniFault::AddFails => Some(broken.wrap_plugin(
                "add-fails",
                "if [ \"$CNI_COMMAND\" = ADD ]; then\n  printf '{\"cniVersion\":\"%s\",\"code\":11,\"msg\":\"podcoroner: ADD refused\"}' \"$CNI_VERSION_OF_CONF\"\n  exit 1\nfi",
            )?),
        };
        broken.wait_loaded(expected.as_deref()).await?;
        Ok(broken)
    }

    /// Writes the script `podcoroner-<what>-<pid>` into the CNI bin dir (`head`, then the
    /// network's first plugin run with the same arguments and input) and points the conflist's
    /// first plugin at it; returns the conflist written.
    fn wrap_plugin(&mut self, what: &str, head: &str) -> Result<String, LabError> {
        let mut conf: serde_json::Value = serde_json::from_slice(&self.original)
            .map_err(|e| self.dir_error(std::io::Error::other(e)))?;
        let plugin = conf["plugins"][0]["type"]
            .as_str()
            .unwrap_or("bridge")
            .to_owned();
        let version = conf["cniVersion"].as_str().unwrap_or("0.4.0").to_owned();
        // One name per process: tests of other processes may wrap at the same time.
        let name = format!("podcoroner-{what}-{}", std::process::id());
        let path = Path::new(crate::lab::CNI_BIN_DIR).join(&name);
        let script = format!(
            "#!/bin/sh\nCNI_VERSION_OF_CONF={version}\n{head}\nexec {}/{plugin} \"$@\"\n",
            crate::lab::CNI_BIN_DIR
        );
        let error = |source| LabError::LabDirFailed {
            path: path.clone(),
            source,
        };
        std::fs::write(&path, script).map_err(error)?;
        std::fs::set_permissions(
            &path,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
        )
        .map_err(error)?;
        self.wrapper = Some(path.clone());
        conf["plugins"][0]["type"] = name.into();
        let text = format!("{conf:#}\n");
        self.replace(text.as_bytes())?;
        Ok(text)
    }

    /// Restores the original CNI configuration and waits until containerd has loaded it again
    /// (at most 30 s).
    ///
    /// # Errors
    ///
    /// As [`BrokenCni::inject`].
    pub async fn repair(mut self) -> Result<(), LabError> {
        self.replace(&self.original)?;
        self.repaired = true;
        let original = String::from_utf8_lossy(&self.original).into_owned();
        let loaded = self.wait_loaded(Some(&original)).await;
        if let Some(w) = self.wrapper.take() {
            let _ = std::fs::remove_file(w);
        }
        loaded
    }

    /// Writes `contents` over the conflist in place. containerd 1.6 reloads on write, rename and
    /// remove events of its conf dir but ignores create and chmod (`cni_conf_syncer.go`
    /// `syncLoop`), so a file renamed into the dir would go unseen; the write of a file this small
    /// is one `write(2)`, so the reload never reads half of it.
    fn replace(&self, contents: &[u8]) -> Result<(), LabError> {
        std::fs::write(&self.conflist, contents).map_err(|e| self.dir_error(e))
    }

    fn dir_error(&self, source: std::io::Error) -> LabError {
        LabError::LabDirFailed {
            path: self.conflist.clone(),
            source,
        }
    }

    fn cri_error(&self, message: String) -> LabError {
        LabError::CriCallFailed {
            endpoint: self.endpoint.clone(),
            rpc: "Status",
            message,
        }
    }

    /// Polls CRI `Status` (verbose) until the networks containerd has loaded besides its loopback
    /// are exactly `expected` (a conflist's text), or none for `None`.
    async fn wait_loaded(&self, expected: Option<&str>) -> Result<(), LabError> {
        let deadline = Instant::now() + RELOAD_TIMEOUT;
        loop {
            let last = match loaded_networks(&self.socket).await {
                Ok(sources) if sources.iter().map(String::as_str).eq(expected) => return Ok(()),
                Ok(sources) => format!("loaded: {sources:?}"),
                Err(e) => e,
            };
            if Instant::now() > deadline {
                return Err(self.cri_error(format!(
                    "containerd did not load the changed CNI config {} within {RELOAD_TIMEOUT:?} ({last})",
                    self.conflist.display()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for BrokenCni {
    fn drop(&mut self) {
        if !self.repaired {
            let _ = self.replace(&self.original);
        }
        if let Some(w) = self.wrapper.take() {
            let _ = std::fs::remove_file(w);
        }
    }
}

/// The one `.conflist` in `dir`.
fn find_conflist(dir: &Path) -> Result<PathBuf, LabError> {
    let error = |source| LabError::LabDirFailed {
        path: dir.to_owned(),
        source,
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(error)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "conflist"))
        .collect();
    match (found.pop(), found.is_empty()) {
        (Some(path), true) => Ok(path),
        _ => Err(error(std::io::Error::other(
            "expected exactly one .conflist in the lab's CNI conf dir",
        ))),
    }
}

/// The sources of the CNI networks containerd has loaded, besides its own loopback, from CRI
/// `Status` with `verbose` (containerd's `cniconfig` info: go-cni's `ConfigResult`).
async fn loaded_networks(socket: &Path) -> Result<Vec<String>, String> {
    let socket = socket.to_owned();
    let connector = tower::service_fn(move |_: Uri| {
        let socket = socket.clone();
        async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(socket).await?)) }
    });
    let channel = Endpoint::from_static("http://localhost")
        .connect_with_connector(connector)
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    let mut client = v1::runtime_service_client::RuntimeServiceClient::new(channel);
    let resp = tokio::time::timeout(
        Duration::from_secs(10),
        client.status(v1::StatusRequest { verbose: true }),
    )
    .await
    .map_err(|_| "Status timed out".to_owned())?
    .map_err(|s| format!("Status: {}", s.message()))?
    .into_inner();
    let info = resp
        .info
        .get("cniconfig")
        .ok_or_else(|| format!("no cniconfig in Status info (keys {:?})", resp.info.keys()))?;
    let config: serde_json::Value =
        serde_json::from_str(info).map_err(|e| format!("cniconfig: {e}"))?;
    Ok(config["Networks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["Config"]["Name"] != "cni-loopback")
        .filter_map(|n| n["Config"]["Source"].as_str().map(str::to_owned))
        .collect())
}
