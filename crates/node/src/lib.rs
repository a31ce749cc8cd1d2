//! podcoroner-node: reads one node through the adapters, for the one-shot commands and the agent.
//!
//! - [`gather`]: reads one node's views through the adapters (CRI, API server, manifest
//!   directory, kubelet pod directories, logs) into a `NodeView`, with each source's
//!   [`api::SourceStatus`]; its per-source readers are the ones the agent calls too.
//! - [`snapshot`]: writes and reads a captured node (`podcoroner collect`, `diagnose --snapshot`).
//! - [`gc`]: acts on a GC plan through CRI, audited.
//! - [`api`]: the JSON contracts (`podcoroner.diagnosis/v1`, `podcoroner.gc/v1`,
//!   `podcoroner.timeline/v1`, the audit record), which depend on nothing but core.
//! - [`render`]: the table a person reads in a terminal.
//!
//! Architecture invariant: this crate owns the serialization of findings; `podcoroner-core`
//! types never reach JSON except through [`api`].

pub mod api;
pub mod gather;
pub mod gc;
pub mod pasted;
pub mod redact;
pub mod render;
pub mod selector;
pub mod snapshot;
