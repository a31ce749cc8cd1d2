//! The `journalctl -o json` export envelope: one JSON object per entry, `MESSAGE` a string or
//! an array of byte values when not valid UTF-8, the message parsed as any inner shape.

use std::borrow::Cow;

use super::json;
use super::record::{
    Envelope, EnvelopeKind, FieldValue, Level, ParseContext, ParsedLine, anchored,
};
use super::shape::journald_record;
use super::text::{contains, parse_u32};
use super::time;

/// Parses a `journalctl -o json` object. `None` when `s` is not one (no `MESSAGE`,
/// `__REALTIME_TIMESTAMP` or `__CURSOR` member).
pub(crate) fn parse<'a>(raw: &'a str, s: &'a str, ctx: &ParseContext) -> Option<ParsedLine<'a>> {
    // Cheap test first: kubelet JSON lines must not be scanned twice.
    if !(contains!(s, "\"MESSAGE\"")
        || contains!(s, "\"__REALTIME_TIMESTAMP\"")
        || contains!(s, "\"__CURSOR\""))
    {
        return None;
    }
    let obj = json::object(s, 0)?;
    if !obj
        .members
        .iter()
        .any(|(k, _)| matches!(&**k, "MESSAGE" | "__REALTIME_TIMESTAMP" | "__CURSOR"))
    {
        return None;
    }
    let mut env = Envelope {
        kind: EnvelopeKind::JournaldJson,
        time: None,
        host: None,
        ident: None,
        pid: None,
        cursor: None,
    };
    let mut unit = None;
    let mut message: Cow<'a, str> = Cow::Borrowed("");
    let mut priority = None;
    for (key, value) in obj.members {
        match &*key {
            "MESSAGE" => {
                message = match value {
                    FieldValue::Quoted(m) => m,
                    FieldValue::Json(bytes) => Cow::Owned(byte_array(&bytes)),
                    FieldValue::Bare(_) | FieldValue::Block(_) => Cow::Borrowed(""),
                }
            }
            "__REALTIME_TIMESTAMP" => env.time = time::epoch_decimal(value.as_str(), 1_000),
            "SYSLOG_IDENTIFIER" => env.ident = Some(value_cow(value)),
            "_SYSTEMD_UNIT" => unit = Some(value_cow(value)),
            "_PID" => env.pid = parse_u32(value.as_str()),
            "_HOSTNAME" => env.host = Some(value_cow(value)),
            "__CURSOR" => env.cursor = Some(value_cow(value)),
            "PRIORITY" => {
                priority = parse_u32(value.as_str()).and_then(Level::from_syslog_priority)
            }
            _ => {}
        }
    }
    if env.ident.is_none() {
        env.ident = unit;
    }
    // The journal's timestamp has a year: klog's yearless time inside is read next to it.
    let ctx = &anchored(ctx, env.time);
    Some(journald_record(
        raw,
        message,
        env,
        priority,
        obj.truncated,
        ctx,
    ))
}

fn value_cow(v: FieldValue<'_>) -> Cow<'_, str> {
    match v {
        FieldValue::Quoted(c)
        | FieldValue::Bare(c)
        | FieldValue::Block(c)
        | FieldValue::Json(c) => c,
    }
}

/// Decodes journald's byte-array `MESSAGE` (`[73,48,54,…]`); invalid UTF-8 becomes U+FFFD and
/// non-numbers are skipped.
fn byte_array(json: &str) -> String {
    let bytes: Vec<u8> = json
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .filter_map(|n| n.trim().parse::<u8>().ok())
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
