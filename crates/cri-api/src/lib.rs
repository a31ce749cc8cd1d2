//! podcoroner-cri-api: Rust code generated from podcoroner's subset of the Kubernetes CRI
//! `RuntimeService` (`proto/runtime/v1/api.proto` and `proto/runtime/v1alpha2/api.proto`).
//!
//! Generated in `build.rs` by `protox` (a pure-Rust protobuf compiler, so no system `protoc`) and
//! `tonic-prost-build`. The field numbers follow the pinned cri-api release named in
//! `proto/README.md`.
//!
//! API boundary: this crate has no logic and only `podcoroner-cri` (and test helpers that drive
//! a real runtime) may depend on it; protobuf types never leave `podcoroner-cri`.
//! The `server` feature also generates the server traits, for fake runtimes in tests.

#![allow(missing_docs, clippy::all)]

/// CRI `runtime.v1` (Kubernetes 1.23 and later, containerd 1.6 and later).
pub mod v1 {
    tonic::include_proto!("runtime.v1");
}

/// CRI `runtime.v1alpha2` (Kubernetes up to 1.25, containerd up to 1.7).
pub mod v1alpha2 {
    tonic::include_proto!("runtime.v1alpha2");
}
