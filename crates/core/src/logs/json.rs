//! One-object-per-line JSON logs: kubelet's `--logging-format=json`, logrus JSON (containerd
//! `--log-format json`), and `journalctl -o json` export objects.
//!
//! The scanner is hand-written and tolerant rather than `serde_json`: real lines are cut
//! mid-object (case 32 ends in `"err":"PLEG is not h`), and the members read before the cut
//! are what the diagnosis needs. Members are returned in order; strings borrow unless they
//! carry escapes; nested objects and arrays are kept as raw JSON text.
//!
//! kubelet JSON (`k8s.io/component-base/logs/json`): `ts` is milliseconds since the epoch as a
//! decimal (`1655581336244.2942`), `caller` is `dir/file.go:line`, `msg`, `v` on info lines
//! only, `err` on error lines. There is no level: a line with `v` is info, a line with `err`
//! and no `v` is an error. `klog.KObj` values are `{"name":…,"namespace":…}` objects.
//!
//! journald export objects are read with [`object`] by `super::journald`: `MESSAGE` is a
//! string, or an array of byte values when not valid UTF-8; `__REALTIME_TIMESTAMP` is
//! microseconds since the epoch as a decimal string; also `_SYSTEMD_UNIT`, `SYSLOG_IDENTIFIER`,
//! `_PID`, `_HOSTNAME`, `__CURSOR`, `PRIORITY`.

use std::borrow::Cow;

use super::opening::Opening;
use super::record::{Component, Field, FieldValue, Format, Inner, Level, ParseContext};
use super::text::{QuoteMode, scan_quoted, unescape};
use super::time;

/// The members of one JSON object as far as it could be read.
pub(crate) struct Object<'a> {
    pub members: Vec<(Cow<'a, str>, FieldValue<'a>)>,
    /// The text ended inside the object.
    pub truncated: bool,
    /// Index after the closing `}` (the text length when truncated).
    pub end: usize,
}

/// Scans a JSON object starting at `s[start] == '{'`. Returns `None` when the text is not a JSON
/// object (a syntax error before the end); a cut object returns what was read.
pub(crate) fn object(s: &str, start: usize) -> Option<Object<'_>> {
    let b = s.as_bytes();
    if b.get(start) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::with_capacity(8);
    let mut i = skip_ws(b, start + 1);
    if b.get(i) == Some(&b'}') {
        return Some(Object {
            members,
            truncated: false,
            end: i + 1,
        });
    }
    loop {
        if i >= b.len() {
            return Some(Object {
                members,
                truncated: true,
                end: b.len(),
            });
        }
        if b[i] != b'"' {
            return None;
        }
        let k = scan_quoted(s, i, QuoteMode::Strict);
        if !k.closed {
            return Some(Object {
                members,
                truncated: true,
                end: b.len(),
            });
        }
        let key = if k.escaped {
            unescape(k.inner)
        } else {
            Cow::Borrowed(k.inner)
        };
        i = skip_ws(b, k.end);
        if i >= b.len() {
            return Some(Object {
                members,
                truncated: true,
                end: b.len(),
            });
        }
        if b[i] != b':' {
            return None;
        }
        i = skip_ws(b, i + 1);
        if i >= b.len() {
            return Some(Object {
                members,
                truncated: true,
                end: b.len(),
            });
        }
        let (value, end, cut) = match b[i] {
            b'"' => {
                let q = scan_quoted(s, i, QuoteMode::Strict);
                let v = if q.escaped {
                    unescape(q.inner)
                } else {
                    Cow::Borrowed(q.inner)
                };
                (FieldValue::Quoted(v), q.end, !q.closed)
            }
            b'{' | b'[' => {
                let (end, cut) = nested(b, i);
                (FieldValue::Json(Cow::Borrowed(&s[i..end])), end, cut)
            }
            c if c == b'-' || c.is_ascii_alphanumeric() => {
                let mut j = i;
                while j < b.len()
                    && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'.' | b'-' | b'+'))
                {
                    j += 1;
                }
                (FieldValue::Bare(Cow::Borrowed(&s[i..j])), j, j >= b.len())
            }
            _ => return None,
        };
        members.push((key, value));
        if cut {
            return Some(Object {
                members,
                truncated: true,
                end: b.len(),
            });
        }
        i = skip_ws(b, end);
        match b.get(i) {
            None => {
                return Some(Object {
                    members,
                    truncated: true,
                    end: b.len(),
                });
            }
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => {
                return Some(Object {
                    members,
                    truncated: false,
                    end: i + 1,
                });
            }
            Some(_) => return None,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// End of a nested object or array at `i`, and whether the text ended first.
fn nested(b: &[u8], mut i: usize) -> (usize, bool) {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return (i + 1, false);
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (b.len(), true)
}

/// The opening of a kubelet JSON record whose first member is its time as a plain decimal of
/// milliseconds followed by the next member (`{"ts":1655581336244.2942,`), when that reads as a
/// time: the time [`kubelet`] gives the record, written where [`object`] reads the `ts` value
/// (a bare value ends at the comma). See [`Opening`].
pub(crate) fn start(s: &str) -> Option<Opening> {
    const HEAD: &str = "{\"ts\":";
    if !s.starts_with(HEAD) {
        return None;
    }
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        let from = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let mut end = digits(HEAD.len())?;
    if b.get(end) == Some(&b'.') {
        end = digits(end + 1)?;
    }
    if b.get(end) != Some(&b',') {
        return None;
    }
    let t = time::epoch_decimal(&s[HEAD.len()..end], TS_UNIT_NANOS)?;
    Some(Opening::epoch(t, HEAD.len(), end))
}

/// kubelet JSON's `ts` unit: milliseconds.
const TS_UNIT_NANOS: i128 = 1_000_000;

/// Parses a kubelet or logrus JSON line (`s` starts with `{`). `None` when it is not a JSON
/// object or has none of `msg`, `ts`, `caller`.
pub(crate) fn kubelet<'a>(s: &'a str, ctx: &ParseContext) -> Option<Inner<'a>> {
    let obj = object(s, 0)?;
    if !obj
        .members
        .iter()
        .any(|(k, _)| matches!(&**k, "msg" | "ts" | "caller"))
    {
        return None;
    }
    let mut inner = Inner::new(Format::Json, Cow::Borrowed(""));
    inner.truncated = obj.truncated;
    let mut has_v = false;
    let mut has_err = false;
    let mut level = None;
    let mut fields = Vec::with_capacity(obj.members.len());
    for (key, value) in obj.members {
        match &*key {
            "ts" if inner.time.is_none() => {
                inner.time = time::epoch_decimal(value.as_str(), TS_UNIT_NANOS);
                inner.guess = Some(Component::Kubelet);
            }
            "time" if inner.time.is_none() => {
                inner.time =
                    time::rfc3339(value.as_str().as_bytes(), 0, ctx.offset).map(|t| t.time);
            }
            "caller" if inner.caller.is_none() => {
                inner.caller = Some(match value {
                    FieldValue::Quoted(c)
                    | FieldValue::Bare(c)
                    | FieldValue::Block(c)
                    | FieldValue::Json(c) => c,
                });
            }
            "msg" => {
                inner.msg = match value {
                    FieldValue::Quoted(c)
                    | FieldValue::Bare(c)
                    | FieldValue::Block(c)
                    | FieldValue::Json(c) => c,
                };
            }
            "level" if level.is_none() => level = Level::from_word(value.as_str()),
            _ => {
                has_v |= key == "v";
                has_err |= key == "err";
                fields.push(Field { key, value });
            }
        }
    }
    inner.severity = level.or(if has_v {
        Some(Level::Info)
    } else if has_err {
        Some(Level::Error)
    } else {
        None
    });
    inner.fields = fields;
    Some(inner)
}

/// Members of a log shipper's or cloud logging export's object that hold the record it wraps,
/// tried first (any other string member is tried after them): Fluent Bit and Docker's
/// json-file `log`, Filebeat and CloudWatch `message`, Google Cloud Logging `textPayload` and
/// `jsonPayload`, Azure `LogEntry`, Loki `line`.
const WRAPPED_KEYS: &[&str] = &[
    "log",
    "message",
    "MESSAGE",
    "textPayload",
    "jsonPayload",
    "LogEntry",
    "line",
    "Message",
    "body",
];
/// How deep wrapper objects may nest (`{"jsonPayload":{"MESSAGE":…}}` is 2).
const MAX_WRAP_DEPTH: usize = 3;
/// Members that give a wrapper's own time when the record inside has none.
const WRAPPER_TIME_KEYS: &[&str] = &["time", "timestamp", "@timestamp", "TimeGenerated", "ts"];

/// Parses an object that wraps a record in one of its members (a log shipper's or cloud
/// logging export's JSON: `{"log":"I0613 …\n","stream":"stderr","time":"…"}`,
/// `{"textPayload":"E0601 …","timestamp":"…"}`, `{"jsonPayload":{"MESSAGE":"…"}}`). The record
/// is the first member (see [`WRAPPED_KEYS`]) that reads as a record of a known shape; its
/// time, when it has none, is the wrapper's. `None` when no member holds a record. Strings are
/// unescaped once, so Windows paths (`C:\\var\\log`) and quotes inside come out as written.
pub(crate) fn wrapper(s: &str, ctx: &ParseContext) -> Option<Inner<'static>> {
    wrapper_at(s, ctx, 0)
}

fn wrapper_at(s: &str, ctx: &ParseContext, depth: usize) -> Option<Inner<'static>> {
    if depth >= MAX_WRAP_DEPTH {
        return None;
    }
    let obj = object(s, 0)?;
    let rank = |k: &str| {
        WRAPPED_KEYS
            .iter()
            .position(|w| *w == k)
            .unwrap_or(WRAPPED_KEYS.len())
    };
    let mut order: Vec<usize> = (0..obj.members.len()).collect();
    order.sort_by_key(|&i| rank(&obj.members[i].0));
    let mut found = None;
    for i in order {
        let inner = match &obj.members[i].1 {
            FieldValue::Quoted(text) => super::parse::owned_record(text, ctx),
            FieldValue::Json(nested) if nested.starts_with('{') => kubelet(nested, ctx)
                .map(super::parse::owned_inner)
                .or_else(|| wrapper_at(nested, ctx, depth + 1)),
            _ => None,
        };
        if inner.is_some() {
            found = inner;
            break;
        }
    }
    let mut inner = found?;
    if inner.time.is_none() {
        inner.time = obj
            .members
            .iter()
            .filter(|(k, _)| WRAPPER_TIME_KEYS.contains(&&**k))
            .find_map(|(_, v)| {
                let t = v.as_str();
                time::rfc3339(t.as_bytes(), 0, ctx.offset)
                    .map(|t| t.time)
                    .or_else(|| time::epoch_decimal(t, 1_000_000))
            });
    }
    inner.truncated |= obj.truncated;
    Some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::parse;
    use crate::logs::record::EnvelopeKind;

    #[test]
    fn object_table() {
        // (input, members as (key, text), truncated)
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], bool);
        let cases: &[Case<'_>] = &[
            (r#"{}"#, &[], false),
            (
                r#"{"a":1,"b":"x\"y","c":[1,{"d":"]"}],"e":true}"#,
                &[
                    ("a", "1"),
                    ("b", "x\"y"),
                    ("c", r#"[1,{"d":"]"}]"#),
                    ("e", "true"),
                ],
                false,
            ),
            (
                r#"{ "a" : -1.5e3 , "b" : null }"#,
                &[("a", "-1.5e3"), ("b", "null")],
                false,
            ),
            (r#"{"msg":"cut here"#, &[("msg", "cut here")], true),
            (
                r#"{"a":1,"b":{"c":"#,
                &[("a", "1"), ("b", r#"{"c":"#)],
                true,
            ),
            (r#"{"a":1,"b"#, &[("a", "1")], true),
            (r#"{"a":12"#, &[("a", "12")], true),
        ];
        for &(input, want, truncated) in cases {
            let o = object(input, 0).unwrap_or_else(|| panic!("{input}"));
            let got: Vec<(String, String)> = o
                .members
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_str().to_owned()))
                .collect();
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(got, want, "{input}");
            assert_eq!(o.truncated, truncated, "{input}");
        }
        for bad in [
            r#"{a:1}"#,
            r#"{"a" 1}"#,
            r#"{"a":1 "b":2}"#,
            "[1]",
            r#"{"a":}"#,
        ] {
            assert!(object(bad, 0).is_none(), "{bad}");
        }
    }

    #[test]
    fn kubelet_json_lines() {
        let ctx = ParseContext::new(2022);
        // kubelet-forensics.md §5, a real 2022 line
        let s = r#"{"ts":1655581336244.2942,"caller":"kubelet/kubelet.go:2102","msg":"SyncLoop REMOVE","v":2,"source":"api","pods":[{"name":"nettools","namespace":"dev"}]}"#;
        let i = kubelet(s, &ctx).unwrap();
        assert_eq!(i.time.unwrap().to_string(), "2022-06-18T19:42:16.2442942Z");
        assert_eq!(i.caller.as_deref(), Some("kubelet/kubelet.go:2102"));
        assert_eq!(i.msg, "SyncLoop REMOVE");
        assert_eq!(i.severity, Some(Level::Info));
        let keys: Vec<&str> = i.fields.iter().map(|f| &*f.key).collect();
        assert_eq!(keys, ["v", "source", "pods"]);
        assert_eq!(
            i.fields[2].value,
            FieldValue::Json(Cow::Borrowed(r#"[{"name":"nettools","namespace":"dev"}]"#))
        );
        // case 32: error line (no v), errCauses array
        let s = r#"{"ts":1757010283211.4668,"caller":"kubelet/kubelet.go:2460","msg":"Skipping pod synchronization","err":"PLEG is not healthy: pleg was last seen active 16h14m34.439643899s ago; threshold is 3m0s","errCauses":[{"error":"PLEG is not healthy: pleg was last seen active 16h14m34.439643899s ago; threshold is 3m0s"}]}"#;
        let i = kubelet(s, &ctx).unwrap();
        assert_eq!(i.severity, Some(Level::Error));
        assert_eq!(i.time.unwrap().to_string(), "2025-09-04T18:24:43.2114668Z");
        assert!(!i.truncated);
        // case 32: cut inside err
        let s = r#"{"ts":1757010313215.116,"caller":"kubelet/kubelet.go:2460","msg":"Skipping pod synchronization","err":"PLEG is not h"#;
        let i = kubelet(s, &ctx).unwrap();
        assert!(i.truncated);
        assert_eq!(i.fields[0].value.as_str(), "PLEG is not h");
        // case 32: cut inside msg
        let s = r#"{"ts":1757010289258.3184,"caller":"internal/log.go:32","msg":"ListConta"#;
        let i = kubelet(s, &ctx).unwrap();
        assert!(i.truncated);
        assert_eq!(i.msg, "ListConta");
        // logrus JSON (containerd --log-format json)
        let s = r#"{"level":"error","msg":"StopPodSandbox for \"4285\" failed","time":"2023-03-01T20:08:10.167346791Z","error":"cni plugin not initialized"}"#;
        let i = kubelet(s, &ctx).unwrap();
        assert_eq!(i.severity, Some(Level::Error));
        assert_eq!(i.msg, r#"StopPodSandbox for "4285" failed"#);
        assert_eq!(
            i.time.unwrap().to_string(),
            "2023-03-01T20:08:10.167346791Z"
        );
        // Not a log object
        assert!(kubelet(r#"{"message":"No such container"}"#, &ctx).is_none());
    }

    #[test]
    fn journald_export() {
        let mut ctx = ParseContext::new(2020);
        // MESSAGE as a string carrying a structured klog line (escaped quotes: owned)
        let line = r#"{"__CURSOR":"s=abc;i=1","__REALTIME_TIMESTAMP":"1674221168948163","_HOSTNAME":"node-a","SYSLOG_IDENTIFIER":"kubelet","_PID":"41736","_SYSTEMD_UNIT":"kubelet.service","PRIORITY":"6","MESSAGE":"I0120 13:26:08.333859   41736 kubelet.go:2063] \"SyncLoop REMOVE\" source=\"api\" pods=[team-ns/app-1-0]"}"#;
        let p = parse::parse(line, &mut ctx);
        assert_eq!(p.format, Format::KlogStructured);
        let env = p.envelope.as_ref().unwrap();
        assert_eq!(env.kind, EnvelopeKind::JournaldJson);
        assert_eq!(env.time.unwrap().to_string(), "2023-01-20T13:26:08.948163Z");
        assert_eq!(env.cursor.as_deref(), Some("s=abc;i=1"));
        assert_eq!(env.pid, Some(41736));
        assert_eq!(p.component, Some(Component::Kubelet));
        assert_eq!(p.msg, "SyncLoop REMOVE");
        assert_eq!(p.field("pods"), Some("[team-ns/app-1-0]"));
        // klog's yearless time takes its year from __REALTIME_TIMESTAMP, not the context.
        assert_eq!(p.time.unwrap().to_string(), "2023-01-20T13:26:08.333859Z");
        assert_eq!(ctx.year, 2023);
        // MESSAGE as a byte array ("E0101 00:00:01.000000 1 a.go:1] x\xff")
        let line = r#"{"__REALTIME_TIMESTAMP":"1674221168948163","_SYSTEMD_UNIT":"containerd.service","MESSAGE":[69,48,49,48,49,32,48,48,58,48,48,58,48,49,46,48,48,48,48,48,48,32,49,32,97,46,103,111,58,49,93,32,120,255]}"#;
        let p = parse::parse(line, &mut ctx);
        assert_eq!(p.format, Format::KlogText);
        assert_eq!(p.msg, "x\u{fffd}");
        assert_eq!(p.severity, Some(Level::Error));
        assert_eq!(p.component, Some(Component::Containerd));
        // A klog multi-line block inside one journal entry
        let line = r#"{"__REALTIME_TIMESTAMP":"1674221168948163","SYSLOG_IDENTIFIER":"kubelet","MESSAGE":"E0120 13:26:08.333859   41736 pod_workers.go:951] \"Error syncing pod, skipping\" err=<\n\tline one\n\tline two\n > pod=\"team-ns/app-1-0\""}"#;
        let p = parse::parse(line, &mut ctx);
        assert_eq!(p.format, Format::KlogStructured);
        assert_eq!(p.field("err"), Some("line one\nline two"));
        assert_eq!(p.field("pod"), Some("team-ns/app-1-0"));
        assert!(!p.truncated);
        // A cut export object keeps what it read
        let line = r#"{"__REALTIME_TIMESTAMP":"1674221168948163","SYSLOG_IDENTIFIER":"containerd","MESSAGE":"time=\"2023-01-20T13:26:08Z\" level=warning msg=\"cleaning up"#;
        let p = parse::parse(line, &mut ctx);
        assert!(p.truncated);
        assert_eq!(p.format, Format::Logfmt);
        assert_eq!(p.msg, "cleaning up");
    }
}
