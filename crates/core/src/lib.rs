//! podcoroner-core: the pure domain of podcoroner.
//!
//! It holds the node model (CRI pod sandboxes and containers, API server pods, static pod
//! manifests, kubelet pod directories), the [`Finding`] type and the diagnosis rules that join
//! those views the way the kubelet does.
//!
//! Architecture invariant: this crate does no I/O. It depends on no other podcoroner crate and on
//! no tokio, tonic, kube, notify or `std::fs`; the current time is always passed in. Adapters
//! (`podcoroner-cri`, `podcoroner-hostfs`, `podcoroner-apiserver`) build a [`NodeView`] and
//! call [`diagnose`].

#[cfg(test)]
mod case_files;
pub mod event;
pub mod finding;
pub mod gc;
pub mod log_rules;
pub mod logs;
pub mod model;
pub mod pasted;
pub mod rules;
pub mod startup;
pub mod timeline;

pub use finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
pub use model::{
    ApiPod, ApiView, Container, ContainerState, CriView, ManifestPod, ManifestView, NodeView,
    PodDir, PodRef, Sandbox, SandboxState, StaticManifest, UnreadableManifest, UrlManifestView,
};
pub use rules::{Config, Diagnosis, SkippedRule, diagnose};
