//! A classified log record with where it was read: what `podcoroner-logs` hands out and the log
//! rules, `timeline` and the daemon's event ring read. Depends only on the log-line layer
//! ([`crate::logs`]), so neither the readers nor the timeline depend on the rules.

use std::sync::Arc;

use crate::logs::Event;

/// A classified log record with where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    /// The event.
    pub event: Event<'static>,
    /// Which log: the kubelet's or the runtime's.
    pub log: LogKind,
    /// The file (or `journald:<unit>`) it was read from: one string per source, shared by its
    /// records.
    pub origin: Arc<str>,
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

/// The events of one log's `text`, as `podcoroner-logs` reads them (records assembled across
/// continuation lines, dates without a year in `year`): the unit tests' reader.
#[cfg(test)]
pub(crate) fn read_text(log: LogKind, origin: &str, year: i32, text: &str) -> Vec<LoggedEvent> {
    read_text_with(crate::logs::ParseContext::new(year), log, origin, text)
}

/// The events of one log held in memory, `text`, read with `ctx` (its year for dates without
/// one, `message_only` for excerpts of bare messages): records are assembled across
/// continuation lines, parsed and classified as `podcoroner-logs` does, and each keeps its
/// 1-based first line in `text` and `origin` as its file. Unclassified records are dropped;
/// nothing fails. For tests and tools that hold a log as a string; `podcoroner-logs` reads files
/// and journals.
pub fn read_text_with(
    mut ctx: crate::logs::ParseContext,
    log: LogKind,
    origin: &str,
    text: &str,
) -> Vec<LoggedEvent> {
    use crate::logs::{LineAssembler, classify, parse};
    let mut asm = LineAssembler::new();
    let mut out = Vec::new();
    let origin: Arc<str> = Arc::from(origin);
    let mut take = |text: &str, line: u64, ctx: &mut crate::logs::ParseContext| {
        if let Some(e) = classify(&parse(text, ctx)) {
            out.push(LoggedEvent {
                event: e.into_owned(),
                log,
                origin: Arc::clone(&origin),
                line,
                text: text.to_string(),
            });
        }
    };
    for l in text.lines() {
        if let Some(r) = asm.push(l) {
            let (t, n) = (r.text.to_string(), r.first_line);
            take(&t, n, &mut ctx);
        }
    }
    if let Some(r) = asm.finish() {
        let (t, n) = (r.text.to_string(), r.first_line);
        take(&t, n, &mut ctx);
    }
    out
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    /// A diagnosis keeps most records of a troubled node's log: what one costs inline is a
    /// budget (it was 328 bytes with the rare IDs and figures inline and a `String` origin).
    #[test]
    fn a_kept_record_stays_small() {
        assert!(size_of::<super::LoggedEvent>() <= 232);
        assert!(size_of::<crate::logs::Ids<'static>>() <= 104);
    }
}
