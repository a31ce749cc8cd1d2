//! The inner shapes of a record and their dispatch: klog (legacy and structured), kubelet JSON,
//! logfmt and logrus text, tried in that order on the text inside any envelope.

use std::borrow::Cow;

use jiff::tz::Offset;

use super::record::{
    Envelope, Format, Inner, Level, ParseContext, ParsedLine, from_inner, merge_envelope,
};
use super::text::trim_end;
use super::{json, klog, kv, time};

/// Parses a message that sits inside an envelope: an inner shape, or [`Format::Plain`].
pub(crate) fn inner_or_plain<'a>(body: &'a str, ctx: &ParseContext) -> Inner<'a> {
    match inner(body, ctx) {
        Some(i) => i,
        None => Inner::new(Format::Plain, Cow::Borrowed(body.trim_start_matches(' '))),
    }
}

/// Tries every inner shape on `s` (already trimmed at the end), resolving yearless times with
/// `ctx`.
pub(crate) fn inner<'a>(s: &'a str, ctx: &ParseContext) -> Option<Inner<'a>> {
    let b = s.as_bytes();
    let first = *b.first()?;
    let i = match first {
        b'I' | b'W' | b'E' | b'F' if b.get(1).is_some_and(u8::is_ascii_digit) => {
            klog::parse(s, ctx)
        }
        b'{' => json::kubelet(s, ctx).or_else(|| json::wrapper(s, ctx)),
        b't' if s.starts_with("time=") => kv::logfmt(s, ctx),
        b'l' if s.starts_with("level=") => kv::logfmt(s, ctx),
        b'P' | b'F' | b'E' | b'W' | b'I' | b'D' | b'T' => logrus_text(s),
        _ => None,
    };
    i.or_else(|| klog::fragment(s))
}

/// Whether `s` starts the way a record of an inner shape starts (no envelope).
pub(crate) fn starts_inner(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        None => false,
        Some(b'{') => true,
        Some(b'I' | b'W' | b'E' | b'F')
            if b.len() >= 5 && b[1..5].iter().all(u8::is_ascii_digit) =>
        {
            true
        }
        Some(b't') => s.starts_with("time="),
        Some(b'l') => s.starts_with("level="),
        _ => logrus_text(s).is_some() || klog::fragment_caller(s).is_some(),
    }
}

/// logrus text formatter output for a terminal: `LEVL[0000] message` or
/// `LEVL[2021-06-29T17:14:10+02:00] message` (crictl's `FATA[0000] …`).
fn logrus_text(s: &str) -> Option<Inner<'_>> {
    let b = s.as_bytes();
    if b.len() < 5 || b[4] != b'[' {
        return None;
    }
    let severity = match &b[..4] {
        b"PANI" | b"FATA" => Level::Fatal,
        b"ERRO" => Level::Error,
        b"WARN" => Level::Warning,
        b"INFO" => Level::Info,
        b"DEBU" => Level::Debug,
        b"TRAC" => Level::Trace,
        _ => return None,
    };
    let close = memchr::memchr(b']', b)?;
    let inside = &b[5..close];
    if inside.is_empty() || inside.contains(&b' ') {
        return None;
    }
    let time = time::rfc3339(inside, 0, Offset::UTC).map(|t| t.time);
    let msg = s[close + 1..].trim_start_matches(' ');
    let mut i = Inner::new(Format::LogrusText, Cow::Borrowed(msg));
    i.severity = Some(severity);
    i.time = time;
    Some(i)
}

/// Builds a record from journald's `MESSAGE`. An unescaped (owned) message is parsed and then
/// detached, since the record cannot borrow from it.
pub(crate) fn journald_record<'a>(
    raw: &'a str,
    message: Cow<'a, str>,
    env: Envelope<'a>,
    priority: Option<Level>,
    truncated: bool,
    ctx: &ParseContext,
) -> ParsedLine<'a> {
    let mut p = match message {
        Cow::Borrowed(m) => from_inner(raw, inner_or_plain(trim_end(m), ctx)),
        Cow::Owned(m) => {
            let d = from_inner(raw, inner_or_plain(trim_end(&m), ctx)).detach();
            ParsedLine {
                raw,
                format: d.format,
                envelope: None,
                time: d.time,
                severity: d.severity,
                component: d.component,
                pid: d.pid,
                caller: d.caller,
                msg: d.msg,
                fields: d.fields,
                truncated: d.truncated,
            }
        }
    };
    if p.severity.is_none() {
        p.severity = priority;
    }
    p.truncated |= truncated;
    merge_envelope(&mut p, env);
    p
}
