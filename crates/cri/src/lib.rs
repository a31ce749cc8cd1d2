//! podcoroner-cri: the CRI adapter. It talks to the node's container runtime over the CRI
//! `RuntimeService` on a unix socket and returns `podcoroner-core` types.
//!
//! - [`endpoint`]: which socket to use, resolved exactly as crictl does.
//! - [`RuntimeClient`]: connect (`runtime.v1`, falling back to `runtime.v1alpha2`), list
//!   sandboxes and containers in every state, query, stop and remove them.
//! - [`crictl_json`]: the JSON crictl prints, podcoroner's snapshot format for CRI state.
//!
//! API boundary: this is the only crate that depends on `podcoroner-cri-api`; protobuf types
//! never leave it. It depends on no other podcoroner adapter crate.

mod client;
mod convert;
pub mod crictl_json;
pub mod endpoint;
mod error;
mod types;

pub use client::{DEFAULT_TIMEOUT, KUBELET_RUNTIME_API_VERSION, RuntimeClient};
pub use convert::{optional_timestamp, timestamp_from_nanos, timestamp_to_nanos};
pub use error::{Error, Result};
pub use types::{ApiVersion, ApiVersionPreference, ContainerStatus, RuntimeInfo, SandboxStatus};
