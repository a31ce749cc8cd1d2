//! [`RuntimeClient`]: CRI `RuntimeService` calls over a unix socket, returning `podcoroner-core`
//! types.
//!
//! Connecting dials the socket (tonic `Endpoint::connect_with_connector` over a
//! `tokio::net::UnixStream`), then calls `Version` on `runtime.v1` and, when that answers gRPC
//! `Unimplemented`, on `runtime.v1alpha2`, like the kubelet and crictl. Every RPC, connecting
//! included, is bounded by the client's timeout. Both API versions go through the same code: the
//! `dispatch!` macro below picks the generated client and the matching conversions.

use std::error::Error as StdError;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use podcoroner_core::{Container, CriView, Sandbox};
use podcoroner_cri_api::{v1, v1alpha2};
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint, Uri};

use crate::endpoint::parse_endpoint;
use crate::error::{Error, Result};
use crate::types::{ApiVersion, ApiVersionPreference, ContainerStatus, RuntimeInfo, SandboxStatus};

/// The timeout the CLI uses for each CRI call unless told otherwise: 10 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The `VersionRequest.version` the kubelet sends (`kubeRuntimeAPIVersion` in
/// `pkg/kubelet/kuberuntime/kuberuntime_manager.go`).
pub const KUBELET_RUNTIME_API_VERSION: &str = "0.1.0";

/// A connected CRI runtime client. Cheap to clone; all methods take `&self`.
#[derive(Debug, Clone)]
pub struct RuntimeClient {
    info: RuntimeInfo,
    socket: PathBuf,
    timeout: Duration,
    inner: Inner,
}

#[derive(Debug, Clone)]
enum Inner {
    V1(v1::runtime_service_client::RuntimeServiceClient<Channel>),
    V1alpha2(v1alpha2::runtime_service_client::RuntimeServiceClient<Channel>),
}

/// Runs `$body` with `$client` bound to a clone of the generated client of the API version in use,
/// `$api` to its generated module and `$conv` to the matching conversions in `crate::convert`.
macro_rules! dispatch {
    ($self:ident, |$client:ident, $api:ident, $conv:ident| $body:expr) => {
        match &$self.inner {
            Inner::V1(client) => {
                #[allow(unused_mut)]
                let mut $client = client.clone();
                #[allow(unused_imports)]
                use crate::convert::v1 as $conv;
                #[allow(unused_imports)]
                use podcoroner_cri_api::v1 as $api;
                $body
            }
            Inner::V1alpha2(client) => {
                #[allow(unused_mut)]
                let mut $client = client.clone();
                #[allow(unused_imports)]
                use crate::convert::v1alpha2 as $conv;
                #[allow(unused_imports)]
                use podcoroner_cri_api::v1alpha2 as $api;
                $body
            }
        }
    };
}

// === impl RuntimeClient ===

impl RuntimeClient {
    /// Connects to `endpoint` (`unix:///path` or `/path`) and identifies the runtime with CRI
    /// `Version`, on `runtime.v1` with a fallback to `runtime.v1alpha2`.
    ///
    /// `timeout` bounds connecting and each later RPC separately ([`DEFAULT_TIMEOUT`] is what the
    /// CLI uses).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEndpoint`]; [`Error::SocketNotFound`], [`Error::SocketPermissionDenied`],
    /// [`Error::ConnectionRefused`] or [`Error::ConnectFailed`] when the socket cannot be dialed;
    /// [`Error::NotCriRuntime`] when the peer answers `Version` in neither API version (or does
    /// not speak gRPC); [`Error::RpcTimedOut`]; [`Error::RpcFailed`] for another gRPC status.
    pub async fn connect(endpoint: &str, timeout: Duration) -> Result<RuntimeClient> {
        RuntimeClient::connect_with(endpoint, timeout, ApiVersionPreference::Auto).await
    }

    /// As [`RuntimeClient::connect`], with the CRI API version chosen by `preference`.
    ///
    /// With [`ApiVersionPreference::V1`] or [`ApiVersionPreference::V1alpha2`] there is no
    /// fallback: a runtime that lacks that version fails with [`Error::RpcFailed`] and code
    /// `Unimplemented`.
    ///
    /// # Errors
    ///
    /// As [`RuntimeClient::connect`].
    pub async fn connect_with(
        endpoint: &str,
        timeout: Duration,
        preference: ApiVersionPreference,
    ) -> Result<RuntimeClient> {
        let (endpoint, socket) = parse_endpoint(endpoint)?;
        let target = Target {
            endpoint: &endpoint,
            socket: &socket,
            timeout,
        };
        let channel = connect_channel(&target).await?;

        let v1_client = || v1::runtime_service_client::RuntimeServiceClient::new(channel.clone());
        let v1alpha2_client =
            || v1alpha2::runtime_service_client::RuntimeServiceClient::new(channel.clone());
        let (inner, version) = match preference {
            ApiVersionPreference::V1 => {
                let mut client = v1_client();
                let version = version_v1(&target, &mut client)
                    .await
                    .map_err(|f| f.into_error(&target))?;
                (Inner::V1(client), version)
            }
            ApiVersionPreference::V1alpha2 => {
                let mut client = v1alpha2_client();
                let version = version_v1alpha2(&target, &mut client)
                    .await
                    .map_err(|f| f.into_error(&target))?;
                (Inner::V1alpha2(client), version)
            }
            ApiVersionPreference::Auto => {
                let mut client = v1_client();
                match version_v1(&target, &mut client).await {
                    Ok(version) => (Inner::V1(client), version),
                    Err(VersionFailure::Status(v1_status))
                        if v1_status.code() == tonic::Code::Unimplemented =>
                    {
                        let mut client = v1alpha2_client();
                        match version_v1alpha2(&target, &mut client).await {
                            Ok(version) => (Inner::V1alpha2(client), version),
                            Err(VersionFailure::Status(alpha_status))
                                if alpha_status.code() == tonic::Code::Unimplemented =>
                            {
                                return Err(Error::NotCriRuntime {
                                    endpoint: endpoint.clone(),
                                    detail: format!(
                                        "runtime.v1: {}; runtime.v1alpha2: {}",
                                        describe_status(&v1_status),
                                        describe_status(&alpha_status)
                                    ),
                                });
                            }
                            Err(failure) => return Err(failure.into_error(&target)),
                        }
                    }
                    Err(failure) => return Err(failure.into_error(&target)),
                }
            }
        };
        let cri_api_version = match inner {
            Inner::V1(_) => ApiVersion::V1,
            Inner::V1alpha2(_) => ApiVersion::V1alpha2,
        };
        let info = RuntimeInfo {
            endpoint: endpoint.clone(),
            runtime_name: version.runtime_name,
            runtime_version: version.runtime_version,
            cri_api_version,
        };
        Ok(RuntimeClient {
            info,
            socket,
            timeout,
            inner,
        })
    }

    /// The endpoint, runtime name and version (from `Version`) and the CRI API version in use.
    pub fn runtime_info(&self) -> &RuntimeInfo {
        &self.info
    }

    /// The per-RPC timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Every pod sandbox, in any state: CRI `ListPodSandbox` with no filter.
    ///
    /// Sorted by creation time, then ID.
    ///
    /// # Errors
    ///
    /// [`Error::RpcTimedOut`], [`Error::RpcFailed`], or a socket error when the runtime went away.
    pub async fn list_sandboxes(&self) -> Result<Vec<Sandbox>> {
        let mut sandboxes = dispatch!(self, |client, api, conv| {
            let req = api::ListPodSandboxRequest { filter: None };
            let resp = self
                .call("ListPodSandbox", None, client.list_pod_sandbox(req))
                .await?;
            resp.items
                .into_iter()
                .map(conv::sandbox)
                .collect::<Vec<_>>()
        });
        sandboxes.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(sandboxes)
    }

    /// Every container, in any state (created, running, exited, unknown): CRI `ListContainers`
    /// with no filter.
    ///
    /// Sorted by creation time, then ID. `image` is `image.image`, or `image_ref` when that is
    /// empty.
    ///
    /// # Errors
    ///
    /// As [`RuntimeClient::list_sandboxes`].
    pub async fn list_containers(&self) -> Result<Vec<Container>> {
        let mut containers = dispatch!(self, |client, api, conv| {
            let req = api::ListContainersRequest { filter: None };
            let resp = self
                .call("ListContainers", None, client.list_containers(req))
                .await?;
            resp.containers
                .into_iter()
                .map(conv::container)
                .collect::<Vec<_>>()
        });
        containers.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(containers)
    }

    /// The sandbox `id`: CRI `PodSandboxStatus` (not verbose).
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when the runtime does not know `id`; otherwise as
    /// [`RuntimeClient::list_sandboxes`]. A runtime that answers without a status is reported as
    /// [`Error::RpcFailed`] with code `Internal`.
    pub async fn sandbox_status(&self, id: &str) -> Result<SandboxStatus> {
        const RPC: &str = "PodSandboxStatus";
        dispatch!(self, |client, api, conv| {
            let req = api::PodSandboxStatusRequest {
                pod_sandbox_id: id.to_owned(),
                verbose: false,
            };
            let resp = self
                .call(RPC, Some(id), client.pod_sandbox_status(req))
                .await?;
            resp.status
                .map(conv::sandbox_status)
                .ok_or_else(|| self.missing_status(RPC))
        })
    }

    /// The container `id`: CRI `ContainerStatus` (not verbose).
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when the runtime does not know `id` (containerd: `an error occurred
    /// when try to find container "<id>": not found`); otherwise as
    /// [`RuntimeClient::sandbox_status`].
    pub async fn container_status(&self, id: &str) -> Result<ContainerStatus> {
        const RPC: &str = "ContainerStatus";
        dispatch!(self, |client, api, conv| {
            let req = api::ContainerStatusRequest {
                container_id: id.to_owned(),
                verbose: false,
            };
            let resp = self
                .call(RPC, Some(id), client.container_status(req))
                .await?;
            resp.status
                .map(conv::container_status)
                .ok_or_else(|| self.missing_status(RPC))
        })
    }

    /// Stops the sandbox `id` and its containers and tears down its network: CRI
    /// `StopPodSandbox`. Idempotent on the runtime side.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] when the runtime does not know `id`; otherwise as
    /// [`RuntimeClient::list_sandboxes`].
    pub async fn stop_sandbox(&self, id: &str) -> Result<()> {
        dispatch!(self, |client, api, conv| {
            let req = api::StopPodSandboxRequest {
                pod_sandbox_id: id.to_owned(),
            };
            self.call("StopPodSandbox", Some(id), client.stop_pod_sandbox(req))
                .await?;
        });
        Ok(())
    }

    /// Removes the sandbox `id` and its containers: CRI `RemovePodSandbox`. The kubelet always
    /// calls [`RuntimeClient::stop_sandbox`] first.
    ///
    /// # Errors
    ///
    /// As [`RuntimeClient::stop_sandbox`].
    pub async fn remove_sandbox(&self, id: &str) -> Result<()> {
        dispatch!(self, |client, api, conv| {
            let req = api::RemovePodSandboxRequest {
                pod_sandbox_id: id.to_owned(),
            };
            self.call("RemovePodSandbox", Some(id), client.remove_pod_sandbox(req))
                .await?;
        });
        Ok(())
    }

    /// Everything the runtime knows: [`RuntimeClient::list_sandboxes`], then
    /// [`RuntimeClient::list_containers`] (two RPCs, so a container created in between may name a
    /// sandbox missing from the list, as for the kubelet).
    ///
    /// # Errors
    ///
    /// The first error of the two RPCs.
    pub async fn view(&self) -> Result<CriView> {
        let sandboxes = self.list_sandboxes().await?;
        let containers = self.list_containers().await?;
        Ok(CriView {
            sandboxes,
            containers,
        })
    }

    fn target(&self) -> Target<'_> {
        Target {
            endpoint: &self.info.endpoint,
            socket: &self.socket,
            timeout: self.timeout,
        }
    }

    fn missing_status(&self, rpc: &'static str) -> Error {
        Error::RpcFailed {
            endpoint: self.info.endpoint.clone(),
            rpc,
            code: tonic::Code::Internal,
            message: "the runtime answered without a status".to_owned(),
        }
    }

    /// Awaits `fut` within the timeout and maps its failure to an [`Error`] naming `rpc`; `id`
    /// is the sandbox or container ID for [`Error::NotFound`].
    async fn call<T>(
        &self,
        rpc: &'static str,
        id: Option<&str>,
        fut: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T> {
        let target = self.target();
        match tokio::time::timeout(self.timeout, fut).await {
            Err(_elapsed) => Err(target.timed_out(rpc)),
            Ok(Ok(resp)) => Ok(resp.into_inner()),
            Ok(Err(status)) => {
                if let Some(error) = target.socket_error(rpc, &status) {
                    return Err(error);
                }
                match (status.code(), id) {
                    (tonic::Code::NotFound, Some(id)) => Err(Error::NotFound {
                        endpoint: target.endpoint.to_owned(),
                        rpc,
                        id: id.to_owned(),
                        message: status.message().to_owned(),
                    }),
                    (code, _) => Err(Error::RpcFailed {
                        endpoint: target.endpoint.to_owned(),
                        rpc,
                        code,
                        message: status_message(&status),
                    }),
                }
            }
        }
    }
}

// === connecting ===

/// The endpoint being talked to, for error messages.
struct Target<'a> {
    endpoint: &'a str,
    socket: &'a Path,
    timeout: Duration,
}

impl Target<'_> {
    fn timed_out(&self, rpc: &'static str) -> Error {
        Error::RpcTimedOut {
            endpoint: self.endpoint.to_owned(),
            rpc,
            timeout: self.timeout,
        }
    }

    /// The socket-level error found in `error`'s source chain (missing socket, permission denied,
    /// connection refused), if any.
    fn socket_error(&self, rpc: &'static str, error: &(dyn StdError + 'static)) -> Option<Error> {
        let io = find_io_error(error)?;
        let endpoint = self.endpoint.to_owned();
        let socket = self.socket.to_owned();
        match io.kind() {
            std::io::ErrorKind::NotFound => Some(Error::SocketNotFound {
                endpoint,
                rpc,
                socket,
            }),
            std::io::ErrorKind::PermissionDenied => Some(Error::SocketPermissionDenied {
                endpoint,
                rpc,
                socket,
            }),
            // Connecting to a regular file or a directory is also refused: say what it is.
            std::io::ErrorKind::ConnectionRefused => {
                use std::os::unix::fs::FileTypeExt as _;
                match std::fs::metadata(&socket) {
                    Ok(meta) if !meta.file_type().is_socket() => Some(Error::NotASocket {
                        endpoint,
                        rpc,
                        socket,
                        kind: if meta.is_dir() {
                            "a directory"
                        } else {
                            "not a unix socket"
                        },
                    }),
                    _ => Some(Error::ConnectionRefused {
                        endpoint,
                        rpc,
                        socket,
                    }),
                }
            }
            _ => None,
        }
    }
}

/// Dials the socket eagerly, so that a missing or dead socket is reported by `connect`.
///
/// Connecting includes the HTTP/2 handshake: when the socket accepted the connection but the
/// handshake failed, the peer is not a gRPC server ([`Error::NotCriRuntime`]).
async fn connect_channel(target: &Target<'_>) -> Result<Channel> {
    let socket = target.socket.to_owned();
    let dialed = Arc::new(AtomicBool::new(false));
    let dialed_in_connector = dialed.clone();
    let connector = tower::service_fn(move |_: Uri| {
        let socket = socket.clone();
        let dialed = dialed_in_connector.clone();
        async move {
            let stream = UnixStream::connect(socket).await?;
            dialed.store(true, Ordering::SeqCst);
            Ok::<_, std::io::Error>(TokioIo::new(stream))
        }
    });
    // The URI only fills the HTTP/2 `:authority`; the connector ignores it.
    let endpoint = Endpoint::from_static("http://localhost").connect_timeout(target.timeout);
    let connecting = endpoint.connect_with_connector(connector);
    match tokio::time::timeout(target.timeout, connecting).await {
        Err(_elapsed) => Err(target.timed_out("Version")),
        Ok(Ok(channel)) => Ok(channel),
        Ok(Err(error)) => {
            if let Some(error) = target.socket_error("Version", &error) {
                Err(error)
            } else if dialed.load(Ordering::SeqCst) {
                Err(Error::NotCriRuntime {
                    endpoint: target.endpoint.to_owned(),
                    detail: format!("HTTP/2 handshake failed: {}", error_chain(&error)),
                })
            } else {
                Err(Error::ConnectFailed {
                    endpoint: target.endpoint.to_owned(),
                    rpc: "Version",
                    source: Box::new(error),
                })
            }
        }
    }
}

/// The `Version` answer, API-version independent.
struct VersionInfo {
    runtime_name: String,
    runtime_version: String,
}

enum VersionFailure {
    Timeout,
    Status(tonic::Status),
}

impl VersionFailure {
    fn into_error(self, target: &Target<'_>) -> Error {
        let status = match self {
            VersionFailure::Timeout => return target.timed_out("Version"),
            VersionFailure::Status(status) => status,
        };
        if let Some(error) = target.socket_error("Version", &status) {
            return error;
        }
        // A status that carries a source was produced locally from a transport failure (the peer
        // closed the connection, answered HTTP/1, sent garbage), not sent by a gRPC server.
        if status.source().is_some() {
            return Error::NotCriRuntime {
                endpoint: target.endpoint.to_owned(),
                detail: describe_status(&status),
            };
        }
        Error::RpcFailed {
            endpoint: target.endpoint.to_owned(),
            rpc: "Version",
            code: status.code(),
            message: status.message().to_owned(),
        }
    }
}

macro_rules! version_fn {
    ($name:ident, $api:ident) => {
        async fn $name(
            target: &Target<'_>,
            client: &mut $api::runtime_service_client::RuntimeServiceClient<Channel>,
        ) -> Result<VersionInfo, VersionFailure> {
            let req = $api::VersionRequest {
                version: KUBELET_RUNTIME_API_VERSION.to_owned(),
            };
            match tokio::time::timeout(target.timeout, client.version(req)).await {
                Err(_elapsed) => Err(VersionFailure::Timeout),
                Ok(Err(status)) => Err(VersionFailure::Status(status)),
                Ok(Ok(resp)) => {
                    let resp = resp.into_inner();
                    Ok(VersionInfo {
                        runtime_name: resp.runtime_name,
                        runtime_version: resp.runtime_version,
                    })
                }
            }
        }
    };
}

version_fn!(version_v1, v1);
version_fn!(version_v1alpha2, v1alpha2);

fn find_io_error<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a std::io::Error> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        current = error.source();
    }
    None
}

/// `Code: message: cause: cause…`, one line.
fn describe_status(status: &tonic::Status) -> String {
    format!("{:?}: {}", status.code(), status_message(status))
}

/// The status message followed by its causes (for transport failures), one line.
fn status_message(status: &tonic::Status) -> String {
    let mut out = status.message().to_owned();
    append_causes(&mut out, status.source());
    out
}

/// `error: cause: cause…`, one line, skipping causes already spelled out.
fn error_chain(error: &(dyn StdError + 'static)) -> String {
    let mut out = error.to_string();
    append_causes(&mut out, error.source());
    out
}

fn append_causes(out: &mut String, mut source: Option<&(dyn StdError + 'static)>) {
    while let Some(error) = source {
        let text = error.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        source = error.source();
    }
}
