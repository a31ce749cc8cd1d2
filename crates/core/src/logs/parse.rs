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
//! [`ParseContext::offset`], UTC until a record shows the node's zone: a zone-less time beside
//! a zoned one of the same moment (see `shown_offset`), from which record on the source's
//! zone-less times are read in it. Times that carry a zone (containerd `time=`, RFC 3339
//! prefixes, epoch numbers) keep it.
//!
//! The parser never panics and borrows from the input wherever no unescaping is needed.

use std::borrow::Cow;

use super::record::{
    Component, EnvelopeKind, Format, Inner, ParseContext, ParsedLine, from_inner, merge_envelope,
    owned_fields,
};
use super::shape::{inner, starts_inner};
use super::text::trim_end;
use super::{envelope, journald, prefix};

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
    let mut out = at_start(line, s, ctx)
        .or_else(|| prefixed(line, s, ctx))
        .unwrap_or_else(|| fallback(line, s, ctx));
    if let Some(offset) = shown_offset(&out, ctx) {
        // The node's zone, shown by this record: zone-less times are read in it from here on,
        // this record's included.
        ctx.offset = offset;
        out = at_start(line, s, ctx)
            .or_else(|| prefixed(line, s, ctx))
            .unwrap_or_else(|| fallback(line, s, ctx));
    }
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

/// [`parse`], reading a structured klog message's `key=value` pairs only when the catalogue
/// may name the record. For a reader that only classifies and counts most records (`diagnose`
/// reading a kubelet log): most of a healthy node's lines are structured klog that no rule
/// reads, and their pairs are most of the cost of parsing them. Advances `ctx` as [`parse`]
/// does.
pub fn parse_unless_unnamed<'a>(line: &'a str, ctx: &mut ParseContext) -> Skimmed<'a> {
    let before = ctx.clone();
    ctx.skip_fields = true;
    let skimmed = parse(line, ctx);
    ctx.skip_fields = false;
    if skimmed.format != Format::KlogStructured {
        // Nothing was skipped: the record is [`parse`]'s.
        return Skimmed {
            line: skimmed,
            may_be_named: true,
        };
    }
    if !super::catalogue::may_name(&skimmed) {
        return Skimmed {
            line: skimmed,
            may_be_named: false,
        };
    }
    *ctx = before;
    Skimmed {
        line: parse(line, ctx),
        may_be_named: true,
    }
}

/// A record read by [`parse_unless_unnamed`].
#[derive(Debug)]
pub struct Skimmed<'a> {
    /// When `may_be_named`, [`parse`]'s record. Otherwise a record with the same shape
    /// ([`ParsedLine::is_parsed`]), time, severity, writer, caller and envelope, whose
    /// structured klog message may be as written (escapes kept) and whose fields may be
    /// missing.
    pub line: ParsedLine<'a>,
    /// `false` only when [`classify`](super::classify) of [`parse`]'s record is `None`.
    pub may_be_named: bool,
}

/// The node's UTC offset when record `p` shows one other than [`ParseContext::offset`]: a
/// zone-less time (a klog header; a syslog `Mon DD HH:MM:SS` prefix, which journalctl and
/// syslog write in local time) beside a zoned one of the same moment (an RFC 3339 prefix,
/// journald's `__REALTIME_TIMESTAMP`, containerd's or CRI-O's `time=` with `Z` or `±HH:MM`, a
/// JSON record's time). Their difference, rounded to a quarter hour (zones are whole quarter
/// hours) and only when within 2 minutes of it, moves the offset: a node in +03:00 whose rsyslog
/// prefix says `17:00:00+03:00` before klog's `17:00:00` (kubernetes/kubernetes#120988), or one
/// whose rsyslog writes UTC (`12:26:08+00:00`) before klog's local `13:26:08` (case 03).
fn shown_offset(p: &ParsedLine<'_>, ctx: &ParseContext) -> Option<jiff::tz::Offset> {
    let env = p.envelope.as_ref()?;
    let (inner_time, env_time) = (p.time?, env.time?);
    let env_zoned = !matches!(env.kind, EnvelopeKind::Syslog | EnvelopeKind::Tag);
    let inner_zoned = match p.format {
        Format::KlogText | Format::KlogStructured => false,
        Format::Json => true,
        Format::Logfmt => zoned_logfmt_time(p.raw),
        _ => return None,
    };
    let (naive, zoned) = match (env_zoned, inner_zoned) {
        (true, false) => (inner_time, env_time),
        (false, true) => (env_time, inner_time),
        _ => return None,
    };
    // `naive` was read as local time in `ctx.offset`: it is off by the zone's difference. It
    // carries no year either (a klog header, a syslog prefix): read in the zoned time's year
    // (or the one beside it, across a new year), not the context's guess.
    // Zones are at most 14 h from UTC: a larger gap is a year read wrong.
    let naive = if (naive.as_second() - zoned.as_second()).abs() > 15 * 3600 {
        same_year(naive, zoned, ctx.offset)
    } else {
        naive
    };
    let diff = naive.as_second() - zoned.as_second();
    let quarter = (diff as f64 / 900.0).round() as i64 * 900;
    if (diff - quarter).abs() > 120 || quarter == 0 {
        return None;
    }
    let seconds = i64::from(ctx.offset.seconds()) + quarter;
    if seconds.abs() > 14 * 3600 {
        return None;
    }
    jiff::tz::Offset::from_seconds(i32::try_from(seconds).ok()?).ok()
}

/// `naive` (a yearless time read in `offset`) in the year, of the zoned time's and the two beside
/// it, that puts it nearest `zoned`; `naive` as it is when none can be.
fn same_year(
    naive: jiff::Timestamp,
    zoned: jiff::Timestamp,
    offset: jiff::tz::Offset,
) -> jiff::Timestamp {
    let (n, z) = (offset.to_datetime(naive), offset.to_datetime(zoned));
    [z.year() - 1, z.year(), z.year() + 1]
        .into_iter()
        .filter_map(|y| offset.to_timestamp(n.with().year(y).build().ok()?).ok())
        .min_by_key(|t| (t.as_second() - zoned.as_second()).abs())
        .unwrap_or(naive)
}

/// Whether the `time="…"` of a logfmt record carries its zone (`Z`, `+03:00`, `-0500`), as
/// the RFC 3339 reader finds it.
fn zoned_logfmt_time(raw: &str) -> bool {
    raw.find("time=\"").is_some_and(|i| {
        super::time::rfc3339(raw.as_bytes(), i + 6, jiff::tz::Offset::UTC).is_some_and(|t| t.zoned)
    })
}

/// A record of a known shape starting at `s[0]` (`s` trimmed at the end; `raw` is the whole
/// record, kept in [`ParsedLine::raw`]).
pub(super) fn at_start<'a>(raw: &'a str, s: &'a str, ctx: &ParseContext) -> Option<ParsedLine<'a>> {
    if s.starts_with('{')
        && let Some(p) = journald::parse(raw, s, ctx)
    {
        return Some(p);
    }
    if let Some((env, inner, truncated)) = envelope::detect(s, ctx) {
        let mut p = from_inner(raw, inner);
        p.truncated |= truncated;
        merge_envelope(&mut p, env);
        return Some(p);
    }
    if let Some(i) = inner(s, ctx) {
        return Some(from_inner(raw, i));
    }
    let (env, inner) = envelope::tag(s, ctx)?;
    let mut p = from_inner(raw, inner);
    merge_envelope(&mut p, env);
    Some(p)
}

/// A record after a prefix (see [`prefix`](super::prefix)): the first candidate position
/// where a record of a known shape starts and reads as one ([`real_record`]).
fn prefixed<'a>(raw: &'a str, s: &'a str, ctx: &ParseContext) -> Option<ParsedLine<'a>> {
    prefix::candidates(s)
        .filter(|&i| starts_record(&s[i..]))
        .find_map(|i| at_start(raw, &s[i..], ctx).filter(real_record))
}

/// Where the record in `line` (a physical line or a joined record) starts: `Some(0)` when a
/// known shape starts at column 0, the prefix's length when one starts after a prefix (see
/// [`prefix`](super::prefix)), `None` when none does.
pub fn record_start(line: &str) -> Option<usize> {
    let s = trim_end(line);
    let ctx = ParseContext::new(2000);
    if at_start(s, s, &ctx).is_some() {
        return Some(0);
    }
    prefixed_start(line)
}

/// Where a record starts after a prefix in `line` (a physical line, not trimmed), when none
/// starts at column 0: the index, checked by parsing the record (the year does not matter to
/// the check).
pub(crate) fn prefixed_start(line: &str) -> Option<usize> {
    let s = trim_end(line);
    let ctx = ParseContext::new(2000);
    prefix::candidates(s).find(|&i| {
        starts_record(&s[i..]) && at_start(s, &s[i..], &ctx).is_some_and(|p| real_record(&p))
    })
}

/// Whether a record found after a prefix is one: a known shape that says when or where it was
/// written (a time, a klog caller) or carries structured fields; an envelope's bare text
/// (`Format::Plain`) only when it names its writer (`host ident[pid]: …`). So `see {x}` or a
/// sentence that mentions `E0613` is not a record.
fn real_record(p: &ParsedLine<'_>) -> bool {
    let plain_ok = p.format != Format::Plain
        || p.envelope
            .as_ref()
            .is_some_and(|e| e.ident.is_some() && e.kind != EnvelopeKind::Tag);
    plain_ok
        && !matches!(p.format, Format::Unparsed | Format::Message)
        && (p.time.is_some() || p.caller.is_some() || !p.fields.is_empty())
}

/// `i` with everything owned.
pub(crate) fn owned_inner(i: Inner<'_>) -> Inner<'static> {
    Inner {
        format: i.format,
        time: i.time,
        severity: i.severity,
        guess: i.guess,
        pid: i.pid,
        caller: i.caller.map(|c| Cow::Owned(c.into_owned())),
        msg: Cow::Owned(i.msg.into_owned()),
        fields: owned_fields(i.fields),
        truncated: i.truncated,
    }
}

/// A record of a known shape in `text`, a string the caller owns (a JSON member unescaped
/// from a log shipper's or cloud export's object), with everything owned. The envelope's
/// time, PID and writer are merged into the record.
pub(crate) fn owned_record(text: &str, ctx: &ParseContext) -> Option<Inner<'static>> {
    let s = trim_end(text);
    let p = at_start(s, s, ctx)
        .or_else(|| prefixed(s, s, ctx))
        .filter(real_record)?;
    let guess = p.component.or_else(|| {
        p.envelope
            .as_ref()
            .and_then(|e| e.ident.as_deref())
            .map(Component::from_ident)
    });
    Some(owned_inner(Inner {
        format: p.format,
        time: p.time,
        severity: p.severity,
        guess,
        pid: p.pid,
        caller: p.caller,
        msg: p.msg,
        fields: p.fields,
        truncated: p.truncated,
    }))
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

/// [`starts_record_scanned`] with its own envelope scan.
fn starts_record(s: &str) -> bool {
    starts_record_scanned(s, envelope::scan(s).is_some())
}

/// Checks [`parse_unless_unnamed`] against [`parse`] on `line` from `ctx`: the same context
/// after; the same shape, time, severity, writer, PID, caller and envelope; and when
/// [`classify`](super::classify) names [`parse`]'s record, the same record, marked as one that
/// may be named. The error says what differs.
#[cfg(test)]
pub(crate) fn skims_like_parse(line: &str, ctx: &ParseContext) -> Result<(), String> {
    let (mut full_ctx, mut skim_ctx) = (ctx.clone(), ctx.clone());
    let full = parse(line, &mut full_ctx);
    let skim = parse_unless_unnamed(line, &mut skim_ctx);
    let s = &skim.line;
    let differs = |what: &str| Err(format!("{what} differs for {line:?}: {full:?} vs {s:?}"));
    if full_ctx != skim_ctx {
        return differs("the context after");
    }
    if (
        full.is_parsed(),
        full.time,
        full.severity,
        full.component,
        full.pid,
    ) != (s.is_parsed(), s.time, s.severity, s.component, s.pid)
    {
        return differs("the shape, time, severity, writer or PID");
    }
    if full.caller != s.caller || full.envelope != s.envelope {
        return differs("the caller or envelope");
    }
    if super::classify(&full).is_some() && !(skim.may_be_named && full == *s) {
        return differs("a named record");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
