//! podcoroner-hostfs: reads the kubelet's files on the node into `podcoroner_core` types.
//!
//! - [`manifests`]: the static pod manifest directory, read as the kubelet's file source reads it.
//! - [`pod_dirs`]: the `pods/<uid>/` directories under the kubelet root directory.
//! - [`static_pod_url`]: the kubelet's other static pod source, the body of its `staticPodURL`,
//!   fetched and read as the kubelet's HTTP source reads it.
//!
//! Architecture invariant: this is the only crate that knows the on-disk layout of these two
//! directories; it depends on `podcoroner-core` and on no other podcoroner crate.

pub mod manifests;
pub mod pod_dirs;
pub mod static_pod_url;

use std::path::PathBuf;

/// Errors reading the node's files. A file the kubelet would reject is not an error: it becomes
/// a `StaticManifest` whose pod is `Err`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The manifest directory exists but cannot be listed (permissions, not a directory).
    #[error("cannot read static pod manifest directory {}: {error}", path.display())]
    ManifestDirReadFailed {
        /// The directory.
        path: PathBuf,
        /// The I/O error (interpolated, not a `#[source]`, so it prints once).
        error: std::io::Error,
    },
    /// The kubelet pods directory exists but cannot be listed.
    #[error("cannot read kubelet pod directory {}: {error}", path.display())]
    PodDirReadFailed {
        /// The directory.
        path: PathBuf,
        /// The I/O error (interpolated, not a `#[source]`, so it prints once).
        error: std::io::Error,
    },
    /// Copying a directory into a snapshot failed.
    #[error("cannot copy {} to {}: {error}", from.display(), to.display())]
    CopyFailed {
        /// What was being copied.
        from: PathBuf,
        /// Where to.
        to: PathBuf,
        /// The I/O error (interpolated, not a `#[source]`, so it prints once).
        error: std::io::Error,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
