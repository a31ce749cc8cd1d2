//! The inner shapes of a record and their dispatch: klog (legacy and structured), kubelet JSON,
//! logfmt and logrus text, tried in that order on the text inside any envelope.

use std::borrow::Cow;

use jiff::tz::Offset;

use super::record::{
    Envelope, Format, Inner, Level, ParseContext, ParsedLine, from_inner, merge_envelope,
};
use super::text::{QuoteMode, is_key_byte, scan_quoted, trim_end, unescape};
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
        b'"' => quoted_time_logfmt(s, ctx),
        b'P' | b'F' | b'E' | b'W' | b'I' | b'D' | b'T' => logrus_text(s),
        b'0'..=b'9' => time_level(s, ctx),
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
        Some(b'"') => quoted_time_logfmt_start(s).is_some(),
        Some(b'0'..=b'9') => time_level_start(s).is_some(),
        _ => logrus_text(s).is_some() || klog::fragment_caller(s).is_some(),
    }
}

/// logfmt whose `time=` key a paste dropped, its quoted time left in front:
/// `"2023-11-22T09:37:32.605481947+02:00" level=info msg="…"` (containerd's lines as a bug
/// report quoted them). Read as the logfmt it was, the time its `time=`.
fn quoted_time_logfmt<'a>(s: &'a str, ctx: &ParseContext) -> Option<Inner<'a>> {
    let at = quoted_time_logfmt_start(s)?;
    let time = time::rfc3339(s.as_bytes(), 1, ctx.offset)?.time;
    let mut i = kv::logfmt(&s[at..], ctx)?;
    i.time = i.time.or(Some(time));
    Some(i)
}

/// Where the `level=` of [`quoted_time_logfmt`]'s shape begins: after a quoted RFC 3339 time
/// (the whole quote) and spaces.
fn quoted_time_logfmt_start(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let t = time::rfc3339(b, 1, Offset::UTC)?;
    if b.first() != Some(&b'"') || b.get(t.end) != Some(&b'"') {
        return None;
    }
    let at = t.end + 1 + b[t.end + 1..].iter().take_while(|&&c| c == b' ').count();
    (at > t.end + 1 && s[at..].starts_with("level=")).then_some(at)
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

/// Where the level word of a [`Format::TimeLevel`] record starts and ends, and where the rest
/// starts: `<RFC 3339> <sep> LEVEL|[LEVEL]|level=… <sep>`, the separator spaces or tabs.
/// Also what [`super::envelope::scan`] refuses as a host name.
pub(crate) fn time_level_start(s: &str) -> Option<(Level, usize)> {
    let b = s.as_bytes();
    let t = time::rfc3339(b, 0, Offset::UTC)?;
    let mut i = t.end;
    let sep = |c: u8| c == b' ' || c == b'\t';
    if !b.get(i).copied().is_some_and(sep) {
        return None;
    }
    while b.get(i).copied().is_some_and(sep) {
        i += 1;
    }
    if s[i..].starts_with("level=") {
        // `<time> level=info msg=…`: logfmt after a bare time; the level read by logfmt.
        return Some((Level::Info, i));
    }
    let end = b[i..]
        .iter()
        .position(|&c| sep(c))
        .map_or(b.len(), |o| i + o);
    let word = &s[i..end];
    let word = word
        .strip_prefix('[')
        .and_then(|w| w.strip_suffix(']'))
        .unwrap_or(word);
    // Only a level word in capitals or lower case (`INFO`, `error`), never a host name.
    let cased = word.bytes().all(|c| c.is_ascii_uppercase())
        || word.bytes().all(|c| c.is_ascii_lowercase());
    if word.len() < 3 || !cased || matches!(word, "information" | "INFORMATION") {
        return None;
    }
    let level = match word.to_ascii_lowercase().as_str() {
        "dpanic" | "panic" | "fatal" | "crit" | "critical" => Level::Fatal,
        "notice" => Level::Info,
        w => Level::from_word(w)?,
    };
    let mut rest = end;
    while b.get(rest).copied().is_some_and(sep) {
        rest += 1;
    }
    Some((level, rest))
}

/// [`Format::TimeLevel`]: `<RFC 3339> LEVEL [caller.go:N] message [key=value …]`. The message
/// runs to the first ` key=` from which the rest reads as `key=value` pairs (logfmt rules); a
/// quoted message (`INFO "msg" k=v`) is unquoted. `<time> level=… msg=…` is logfmt with the
/// time taken from the front when it has no `time=` of its own.
fn time_level<'a>(s: &'a str, ctx: &ParseContext) -> Option<Inner<'a>> {
    let (level, at) = time_level_start(s)?;
    let time = time::rfc3339(s.as_bytes(), 0, ctx.offset).map(|t| t.time);
    if s[at..].starts_with("level=") {
        let mut i = kv::logfmt(&s[at..], ctx)?;
        i.time = i.time.or(time);
        i.format = Format::TimeLevel;
        return Some(i);
    }
    let b = s.as_bytes();
    let mut i = Inner::new(Format::TimeLevel, Cow::Borrowed(""));
    i.time = time;
    i.severity = Some(level);
    let mut start = at;
    // zap's console encoder: a `file.go:N` caller before the message.
    let word_end = b[start..]
        .iter()
        .position(|&c| c == b' ' || c == b'\t')
        .map_or(b.len(), |o| start + o);
    let word = &s[start..word_end];
    if word_end < b.len()
        && let Some((file, line)) = word.rsplit_once(':')
        && file.ends_with(".go")
        && !line.is_empty()
        && line.bytes().all(|c| c.is_ascii_digit())
    {
        i.caller = Some(Cow::Borrowed(word));
        start = word_end;
        while b.get(start).is_some_and(|&c| c == b' ' || c == b'\t') {
            start += 1;
        }
    }
    if b.get(start) == Some(&b'"') {
        let q = scan_quoted(s, start, QuoteMode::Strict);
        let mut fields = Vec::new();
        let outcome = kv::parse_kvs(s, q.end, kv::Mode::Logfmt, &mut fields);
        if q.closed && outcome.malformed_at.is_none() {
            i.msg = if q.escaped {
                unescape(q.inner)
            } else {
                Cow::Borrowed(q.inner)
            };
            i.fields = fields;
            i.truncated = outcome.truncated;
            return Some(i);
        }
    }
    // The message, then the first ` key=` from which every token is a pair. Token by token
    // (linear): a pair that fails at a token fails there from any later start too, so the
    // search goes on after it; a last word cut before its `=` ends it.
    let space = |c: u8| c == b' ' || c == b'\t';
    let mut at = start;
    while let Some(off) = b[at..].iter().position(|&c| space(c)) {
        let mut key_start = at + off;
        while key_start < b.len() && space(b[key_start]) {
            key_start += 1;
        }
        at = key_start;
        let mut key_end = key_start;
        while key_end < b.len() && is_key_byte(b[key_end]) {
            key_end += 1;
        }
        if key_end == key_start || b.get(key_end) != Some(&b'=') {
            continue;
        }
        let mut fields = Vec::new();
        let outcome = kv::parse_kvs(s, key_start, kv::Mode::Logfmt, &mut fields);
        // A cut is a quoted value cut short, not a last word with no `=` (`a=b c`).
        let cut_ok = !outcome.truncated
            || fields
                .last()
                .is_some_and(|f| matches!(f.value, super::record::FieldValue::Quoted(_)));
        match outcome.malformed_at {
            None if cut_ok => {
                i.msg = Cow::Borrowed(trim_end(&s[start..key_start]));
                i.fields = fields;
                i.truncated = outcome.truncated;
                return Some(i);
            }
            None => break,
            Some(m) => at = at.max(m),
        }
    }
    i.msg = Cow::Borrowed(&s[start..]);
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
