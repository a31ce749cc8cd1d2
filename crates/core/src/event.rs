//! A classified log record with where it was read: what `podcoroner-logs` hands out and the log
//! rules, `timeline` and the daemon's event ring read. Depends only on the log-line layer
//! ([`crate::logs`]), so neither the readers nor the timeline depend on the rules.

use crate::logs::Event;

/// A classified log record with where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    /// The event.
    pub event: Event<'static>,
    /// Which log: the kubelet's or the runtime's.
    pub log: LogKind,
    /// The file (or `journald:<unit>`) it was read from.
    pub origin: String,
    /// The 1-based number of its first physical line there.
    pub line: u64,
    /// The record's text (cut to a few KiB).
    pub text: String,
}

/// Which component's log a record comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogKind {
    /// The kubelet's log (`--kubelet-log`).
    Kubelet,
    /// The container runtime's log (`--runtime-log`).
    Runtime,
}
