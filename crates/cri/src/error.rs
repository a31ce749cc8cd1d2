//! The error type of `podcoroner-cri`: one variant per way a CRI call, an endpoint resolution or
//! a crictl JSON snapshot can fail.
//!
//! Every variant about a call names the endpoint (`unix:///…`) and the CRI RPC (`Version`,
//! `ListPodSandbox`, …), so a message is actionable on its own.

use std::path::PathBuf;
use std::time::Duration;

/// `Result` with [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong while resolving the endpoint, talking to the runtime, or reading or writing a
/// crictl JSON snapshot.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No endpoint was given (flag, `CONTAINER_RUNTIME_ENDPOINT`, `runtime-endpoint` in the
    /// crictl config) and none of the default sockets exists.
    #[error(
        "resolving the CRI endpoint failed: no endpoint flag, no CONTAINER_RUNTIME_ENDPOINT, no runtime-endpoint in {}, and none of {} exists",
        crictl_config.display(),
        probed.join(", ")
    )]
    EndpointResolutionFailed {
        /// The crictl config file that was consulted.
        crictl_config: PathBuf,
        /// The default endpoints that were probed, in order.
        probed: Vec<String>,
    },

    /// The endpoint string is not a unix socket address (`unix:///path` or `/path`).
    #[error("invalid CRI endpoint {endpoint:?}: {reason}")]
    InvalidEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// Why it was rejected.
        reason: &'static str,
    },

    /// The crictl config file exists but could not be read.
    #[error("reading crictl config {} failed", path.display())]
    CrictlConfigReadFailed {
        /// The config file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The socket file does not exist (`ENOENT`).
    #[error("calling {rpc} on {endpoint} failed: no such socket {}", socket.display())]
    SocketNotFound {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// The CRI RPC being called.
        rpc: &'static str,
        /// The socket path.
        socket: PathBuf,
    },

    /// Connecting to the socket was refused for lack of permission (`EACCES`).
    #[error("calling {rpc} on {endpoint} failed: permission denied on socket {} (run as root or as a member of its group)", socket.display())]
    SocketPermissionDenied {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// The CRI RPC being called.
        rpc: &'static str,
        /// The socket path.
        socket: PathBuf,
    },

    /// Nothing listens on the socket (`ECONNREFUSED`): typically a stale socket file left by a
    /// runtime that died.
    #[error("calling {rpc} on {endpoint} failed: connection refused on socket {} (is the runtime running?)", socket.display())]
    ConnectionRefused {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// The CRI RPC being called.
        rpc: &'static str,
        /// The socket path.
        socket: PathBuf,
    },

    /// The endpoint's path exists but is not a unix socket (a regular file, a directory).
    #[error("calling {rpc} on {endpoint} failed: {} is {kind}", socket.display())]
    NotASocket {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// The CRI RPC being called.
        rpc: &'static str,
        /// The path.
        socket: PathBuf,
        /// `a directory` or `not a unix socket`.
        kind: &'static str,
    },

    /// Connecting failed for another reason.
    #[error("calling {rpc} on {endpoint} failed: cannot connect")]
    ConnectFailed {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// The CRI RPC being called.
        rpc: &'static str,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// Something accepted the connection, but it answered `Version` in neither `runtime.v1` nor
    /// `runtime.v1alpha2`: both returned `Unimplemented`, or it does not speak gRPC over HTTP/2
    /// at all (an HTTP/1 server, a peer that closes the connection).
    #[error("{endpoint} answers neither runtime.v1 nor runtime.v1alpha2 Version: {detail}")]
    NotCriRuntime {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// What happened, e.g. `runtime.v1: Unimplemented; runtime.v1alpha2: Unimplemented` or
        /// the transport error.
        detail: String,
    },

    /// The RPC (or connecting) took longer than the client's timeout.
    #[error("calling {rpc} on {endpoint} timed out after {timeout:?}")]
    RpcTimedOut {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// The CRI RPC being called.
        rpc: &'static str,
        /// The timeout that elapsed.
        timeout: Duration,
    },

    /// The runtime answered gRPC `NotFound`: the sandbox or container ID is unknown to it.
    /// containerd says `an error occurred when try to find container "<id>": not found`.
    #[error("calling {rpc} on {endpoint} failed: {id} not found: {message}")]
    NotFound {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// The CRI RPC being called.
        rpc: &'static str,
        /// The sandbox or container ID asked for.
        id: String,
        /// The runtime's message.
        message: String,
    },

    /// The runtime answered with any other gRPC error status.
    #[error("calling {rpc} on {endpoint} failed: {code:?}: {message}")]
    RpcFailed {
        /// The endpoint, `unix:///…`.
        endpoint: String,
        /// The CRI RPC being called.
        rpc: &'static str,
        /// The gRPC status code.
        code: tonic::Code,
        /// The status message (for transport failures, the transport error).
        message: String,
    },

    /// A crictl JSON snapshot file could not be read.
    #[error("reading {what} from {} failed", path.display())]
    SnapshotReadFailed {
        /// What the file should hold, e.g. `crictl pods -o json`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A crictl JSON snapshot does not have the shape crictl prints.
    #[error("parsing {what} from {origin} failed at `{path}`")]
    SnapshotParseFailed {
        /// What the document should be, e.g. `crictl pods -o json`.
        what: &'static str,
        /// Where it came from (a file name).
        origin: String,
        /// The JSON path of the offending field, e.g. `items[2].createdAt`, or `.` for the root.
        path: String,
        /// The serde_json error (with line and column).
        #[source]
        source: serde_json::Error,
    },
}

impl Error {
    /// True for [`Error::NotFound`]: the runtime does not know the ID.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }
}
