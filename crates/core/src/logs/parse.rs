//! One log record (a physical line, or several joined by [`LineAssembler`](super::LineAssembler))
//! → one [`ParsedLine`]: the entry point [`parse`], its [`ParseContext`], and the record types.
//!
//! Shapes are detected per line, in any mix, and nest: an *envelope* (syslog or journald text
//! prefix, `/var/log/messages` RFC 3339 prefix, a bare `tag: ` prefix such as talosctl's node IP,
//! or a journald JSON export object) may wrap an *inner* shape (legacy klog, structured klog,
//! kubelet or logrus JSON, containerd / CRI-O logfmt, logrus text). What no shape fits is
//! [`Format::Unparsed`] with the raw text kept in [`ParsedLine::msg`].
//!
//! Time zones: klog and syslog write local time with no zone. They are read in
//! [`ParseContext::offset`], UTC unless the caller knows the node's zone. Times that carry a zone
//! (containerd `time=`, RFC 3339 prefixes, epoch numbers) keep it.
//!
//! The parser never panics and borrows from the input wherever no unescaping is needed.

use std::borrow::Cow;

use super::record::{Component, Format, ParseContext, ParsedLine, from_inner, merge_envelope};
use super::shape::{inner, starts_inner};
use super::text::trim_end;
use super::{envelope, journald};

/// Parses one record (a line without its newline, or a record joined by
/// [`LineAssembler`](super::LineAssembler)) and advances `ctx`.
///
/// Shapes are tried in this order: a journald JSON export object; a syslog or RFC 3339 envelope
/// (whose message may be any inner shape, or [`Format::Plain`]); an inner shape on its own; a
/// bare `tag: ` envelope before an inner shape. Never panics and never fails: what fits no shape
/// is [`Format::Unparsed`] (or [`Format::Message`] when [`ParseContext::message_only`] is set),
/// with the raw text in `msg`. Trailing whitespace is ignored.
pub fn parse<'a>(line: &'a str, ctx: &mut ParseContext) -> ParsedLine<'a> {
    let s = trim_end(line);
    let journald = if s.starts_with('{') {
        journald::parse(line, s, ctx)
    } else {
        None
    };
    let mut out = if let Some(p) = journald {
        p
    } else if let Some((env, inner, truncated)) = envelope::detect(s, ctx) {
        let mut p = from_inner(line, inner);
        p.truncated |= truncated;
        merge_envelope(&mut p, env);
        p
    } else if let Some(i) = inner(s, ctx) {
        from_inner(line, i)
    } else if let Some((env, inner)) = envelope::tag(s, ctx) {
        let mut p = from_inner(line, inner);
        merge_envelope(&mut p, env);
        p
    } else {
        fallback(line, s, ctx)
    };
    if let Some(t) = out.time {
        ctx.observe(t);
    }
    if out.component.is_none() {
        out.component = out
            .envelope
            .as_ref()
            .and_then(|e| e.ident.as_deref())
            .map(Component::from_ident);
    }
    out
}

fn fallback<'a>(line: &'a str, s: &'a str, ctx: &ParseContext) -> ParsedLine<'a> {
    let mut p = ParsedLine::unparsed(line);
    if ctx.message_only && !s.trim().is_empty() {
        p.format = Format::Message;
        p.msg = Cow::Borrowed(s.trim_start());
    }
    p
}

/// Whether `s` starts the way a record of a known shape starts (a cheap test, no full parse):
/// an envelope, a klog header or caller fragment, `{`, `time=`, `level=`, a logrus text level,
/// or a bare `tag: ` before one of those. [`LineAssembler`](super::LineAssembler) joins lines
/// that do not. `has_envelope` is whether `envelope::scan(s)` found an envelope (the caller
/// needs the scan too, so it runs it once).
pub(crate) fn starts_record_scanned(s: &str, has_envelope: bool) -> bool {
    starts_inner(s)
        || has_envelope
        || envelope::tag_prefix(s).is_some_and(|(_, _, body)| starts_inner(&s[body..]))
}

#[cfg(test)]
mod tests;
