//! podcoroner-daemon: the wiring around the pure core.
//!
//! - [`gather`]: reads one node's views through the adapters (CRI, API server, manifest
//!   directory, kubelet pod directories) into a `NodeView`, with each source's status.
//! - [`snapshot`]: writes and reads a captured node (`podcoroner collect`, `diagnose --snapshot`).
//! - [`api`]: the `podcoroner.diagnosis/v1` JSON schema, an external contract.
//! - [`render`]: the table a person reads in a terminal.
//!
//! Architecture invariant: this crate owns the serialization of findings; `podcoroner-core`
//! types never reach JSON except through [`api`].

pub mod agent;
pub mod api;
pub mod config;
pub mod gather;
pub mod gc;
pub mod redact;
pub mod render;
pub mod selector;
pub mod snapshot;
