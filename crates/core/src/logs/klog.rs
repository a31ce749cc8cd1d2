//! klog lines, legacy and structured.
//!
//! Header (`k8s.io/klog/v2` `FormatHeader`,
//! <https://github.com/kubernetes/klog/blob/339c48b2be45e6b406597f64415b72ca91b91bc5/internal/buffer/buffer.go>):
//! `Lmmdd hh:mm:ss.uuuuuu threadid file:line] ` — `L` is `I`, `W`, `E` or `F`; the thread-id
//! column is right-aligned to 7 characters, so a 7-digit PID leaves a single space (case 09).
//! That revision writes `file:line ] ` (a space before the bracket); both are read.
//! Equivalent regex: `^([IWEF])(\d\d)(\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?) +(\d+) ([^ \]]+) ?\] ?`.
//!
//! After the header, a structured line (kubelet ≥ 1.21, `klog.InfoS`/`ErrorS`) is a Go-quoted
//! message followed by `key=value` pairs (see [`kv`](super::kv)); anything else is a legacy
//! printf message. Every part may be cut: a header that stops early, a caller without its `]`
//! (case 11), a message without its closing quote (case 05) all parse as far as they go and mark
//! the record truncated. Header-less fragments that start at the caller (`file.go:154] …`,
//! case 09) are klog too.

use std::borrow::Cow;
use std::ops::Range;

use super::kv::{self, Mode};
use super::opening::Opening;
use super::record::{Component, Format, Inner, Level, ParseContext};
use super::text::{QuoteMode, scan_quoted, unescape};
use super::time::{Yearless, digits, hms};

/// A klog header up to its caller, as far as a line has it: what [`parse`] and [`start`] read
/// of it, checked once.
enum Header {
    /// Whole up to the caller.
    Whole {
        /// The time, without its year.
        t: Yearless,
        /// Where the time ends.
        time_end: usize,
        /// The thread ID's digits (empty: none).
        pid: Range<usize>,
        /// Where the caller (or, without one, the message) starts.
        caller_start: usize,
    },
    /// Cut before its caller: in its date or time (no `t`), or after its time or thread ID.
    Cut {
        t: Option<Yearless>,
        pid: Range<usize>,
    },
}

/// The klog header `b` starts with; `None` when it is none (a cut that leaves too little to
/// tell, `E101`, is none either).
fn header(b: &[u8]) -> Option<Header> {
    let none = 0..0;
    Level::from_klog(*b.first()?)?;
    // MMDD
    if !b[1..b.len().min(5)].iter().all(u8::is_ascii_digit) {
        return None;
    }
    if b.len() < 6 {
        // `E1019` or shorter: a header cut in its date.
        return (b.len() == 5).then_some(Header::Cut { t: None, pid: none });
    }
    let (month, day) = (digits(b, 1, 2)?, digits(b, 3, 2)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || b[5] != b' ' {
        return None;
    }
    // hh:mm:ss.frac
    let Some((hour, minute, second, nanos, time_end)) = hms(b, 6) else {
        let cut_in_time = b[6..]
            .iter()
            .all(|&c| c.is_ascii_digit() || c == b':' || c == b'.');
        return cut_in_time.then_some(Header::Cut { t: None, pid: none });
    };
    let t = Yearless::on(month, day, (hour, minute, second, nanos));
    let mut i = time_end;
    match b.get(i) {
        None => {
            return Some(Header::Cut {
                t: Some(t),
                pid: none,
            });
        }
        Some(b' ') => {}
        Some(_) => return None,
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    // Thread ID (the process ID for Go programs).
    let pid_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let pid = pid_start..i;
    if !pid.is_empty() {
        match b.get(i) {
            None => return Some(Header::Cut { t: Some(t), pid }),
            Some(b' ') => i += 1,
            Some(_) => return None,
        }
    }
    Some(Header::Whole {
        t,
        time_end,
        pid,
        caller_start: i,
    })
}

/// Parses a klog line; `s[0]` is a severity letter followed by a digit.
pub(crate) fn parse<'a>(s: &'a str, ctx: &ParseContext) -> Option<Inner<'a>> {
    let b = s.as_bytes();
    let header = header(b)?;
    let mut inner = Inner::new(Format::KlogText, Cow::Borrowed(""));
    inner.severity = Level::from_klog(b[0]);
    inner.guess = Some(Component::Kubelet);
    let (t, pid, caller_start) = match header {
        Header::Whole {
            t,
            pid,
            caller_start,
            ..
        } => (Some(t), pid, Some(caller_start)),
        Header::Cut { t, pid } => (t, pid, None),
    };
    inner.time = t.and_then(|t| super::time::yearless_to_timestamp(ctx, t));
    if !pid.is_empty() {
        inner.pid = s[pid].parse().ok();
    }
    let Some(caller_start) = caller_start else {
        inner.truncated = true;
        return Some(inner);
    };
    // file:line]
    let mut j = caller_start;
    while j < b.len() && b[j] != b']' && b[j] != b' ' {
        j += 1;
    }
    if j >= b.len() {
        // Cut inside the caller (`kubelet_v`, case 11).
        inner.caller = Some(Cow::Borrowed(&s[caller_start..]));
        inner.truncated = true;
        return Some(inner);
    }
    // `file:line]` or `file:line ]`
    let close = if b[j] == b']' {
        Some(j)
    } else if b.get(j + 1) == Some(&b']') && j > caller_start {
        Some(j + 1)
    } else {
        None
    };
    let body_start = if let Some(close) = close {
        inner.caller = Some(Cow::Borrowed(&s[caller_start..j]));
        if b.get(close + 1) == Some(&b' ') {
            close + 2
        } else {
            close + 1
        }
    } else {
        // No `]` before a space: not a caller; the rest is the message.
        caller_start
    };
    body(s, body_start, &mut inner, ctx.skip_fields);
    Some(inner)
}

/// The klog header `s` (trimmed at the end) starts with, when it is whole up to the caller
/// (what [`parse`] reads as a record that is not cut before its caller).
pub(crate) fn start(s: &str) -> Option<Opening> {
    match header(s.as_bytes())? {
        Header::Whole { t, time_end, .. } => Some(Opening::klog(t, time_end)),
        Header::Cut { .. } => None,
    }
}

/// A klog line whose header was cut off so that it starts at the caller:
/// `kubelet_volumes.go:154] Orphaned pod …` (case 09).
pub(crate) fn fragment(s: &str) -> Option<Inner<'_>> {
    let i = fragment_caller(s)?;
    let b = s.as_bytes();
    let mut inner = Inner::new(Format::KlogText, Cow::Borrowed(""));
    inner.guess = Some(Component::Kubelet);
    inner.caller = Some(Cow::Borrowed(&s[..i]));
    let body_start = if b.get(i + 1) == Some(&b' ') {
        i + 2
    } else {
        i + 1
    };
    body(s, body_start, &mut inner, false);
    Some(inner)
}

/// Length of a leading `file.go:123` caller followed by `]`; `None` when `s` does not start so.
pub(crate) fn fragment_caller(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'-' | b'.' | b'/'))
    {
        i += 1;
    }
    if !s[..i].ends_with(".go") || b.get(i) != Some(&b':') {
        return None;
    }
    let line_start = i + 1;
    i = line_start;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == line_start || b.get(i) != Some(&b']') {
        return None;
    }
    Some(i)
}

/// The message part: structured (`"msg" k=v …`) when it starts with a quote and tokenizes
/// cleanly, otherwise legacy free text.
///
/// With `skip_fields` (see [`ParseContext::skip_fields`]), a closed quoted message of a record
/// with a time or a caller is taken as structured without reading the pairs after it:
/// [`Format::KlogStructured`], no fields, and the message as written (its escapes kept). A
/// message cut before its closing quote is read in full.
fn body<'a>(s: &'a str, start: usize, inner: &mut Inner<'a>, skip_fields: bool) {
    let b = s.as_bytes();
    if b.get(start) == Some(&b'"') {
        let q = scan_quoted(s, start, QuoteMode::Strict);
        let follows_ok = !q.closed || q.end >= b.len() || matches!(b[q.end], b' ' | b'\n');
        // A record with neither time nor caller is one only if it has fields (a prefixed
        // record's test, `parse::real_record`): its pairs are read.
        let says_when_or_where = inner.time.is_some() || inner.caller.is_some();
        if skip_fields && says_when_or_where && q.closed && follows_ok {
            inner.format = Format::KlogStructured;
            inner.msg = Cow::Borrowed(q.inner);
            return;
        }
        if follows_ok {
            let mut fields = Vec::with_capacity(8);
            let outcome = if q.closed {
                kv::parse_kvs(s, q.end, Mode::Klog, &mut fields)
            } else {
                kv::Outcome {
                    truncated: true,
                    malformed_at: None,
                }
            };
            if outcome.malformed_at.is_none() {
                let mut text = q.inner;
                if !q.closed {
                    text = text.strip_suffix('>').unwrap_or(text);
                }
                inner.format = Format::KlogStructured;
                inner.msg = if q.escaped {
                    unescape(text)
                } else {
                    Cow::Borrowed(text)
                };
                inner.fields = fields;
                inner.truncated |= outcome.truncated;
                return;
            }
        }
    }
    inner.format = Format::KlogText;
    let msg = s.get(start..).unwrap_or("");
    // printf lines quote with %q, so an odd number of quotes means the line was cut inside one
    // (case 08: `Orphaned pod "0ea83064-3383-11e7-`).
    inner.truncated |= unbalanced_quotes(msg);
    inner.msg = Cow::Borrowed(msg);
}

/// Whether `s` has an odd number of unescaped double quotes.
fn unbalanced_quotes(s: &str) -> bool {
    let b = s.as_bytes();
    let mut n = 0usize;
    let mut i = 0;
    while let Some(off) = memchr::memchr2(b'"', b'\\', &b[i..]) {
        let j = i + off;
        if b[j] == b'\\' {
            i = j + 2;
            if i >= b.len() {
                break;
            }
            continue;
        }
        n += 1;
        i = j + 1;
    }
    n % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::record::Field;

    fn ctx() -> ParseContext {
        ParseContext::new(2021)
    }

    fn pairs(fields: &[Field<'_>]) -> Vec<(String, String)> {
        fields
            .iter()
            .map(|f| (f.key.to_string(), f.value.as_str().to_owned()))
            .collect()
    }

    struct Row {
        line: &'static str,
        format: Format,
        severity: Option<Level>,
        time: Option<&'static str>,
        pid: Option<u32>,
        caller: Option<&'static str>,
        msg: &'static str,
        fields: &'static [(&'static str, &'static str)],
        truncated: bool,
    }

    #[test]
    fn klog_table() {
        let rows = [
            // case 01: legacy, dockershim era
            Row {
                line: r#"E0829 19:33:49.707784    2373 kuberuntime_gc.go:142] Failed to remove sandbox "d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718": rpc error: code = 2 desc = Error response from daemon: {"message":"Unable to remove filesystem for d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718: remove /var/lib/docker/containers/d2a22654e52"#,
                format: Format::KlogText,
                severity: Some(Level::Error),
                time: Some("2021-08-29T19:33:49.707784Z"),
                pid: Some(2373),
                caller: Some("kuberuntime_gc.go:142"),
                msg: r#"Failed to remove sandbox "d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718": rpc error: code = 2 desc = Error response from daemon: {"message":"Unable to remove filesystem for d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718: remove /var/lib/docker/containers/d2a22654e52"#,
                fields: &[],
                // an odd number of quotes: cut inside one
                truncated: true,
            },
            // case 19: 7-digit PID, single space
            Row {
                line: r#"I0829 01:50:33.287842 2909862 kubelet.go:1890] "Pod has been deleted and must be killed" pod="default/mypod-127.0.0.1" podUID=7c0663d52f9e8c61c7a733304c23b60f"#,
                format: Format::KlogStructured,
                severity: Some(Level::Info),
                time: Some("2021-08-29T01:50:33.287842Z"),
                pid: Some(2909862),
                caller: Some("kubelet.go:1890"),
                msg: "Pod has been deleted and must be killed",
                fields: &[
                    ("pod", "default/mypod-127.0.0.1"),
                    ("podUID", "7c0663d52f9e8c61c7a733304c23b60f"),
                ],
                truncated: false,
            },
            // case 05: structured, cut inside the message
            Row {
                line: r#"E0126 22:51:56.452181   86828 remote_runtime.go:432] "ContainerStatus from runtime ser"#,
                format: Format::KlogStructured,
                severity: Some(Level::Error),
                time: Some("2021-01-26T22:51:56.452181Z"),
                pid: Some(86828),
                caller: Some("remote_runtime.go:432"),
                msg: "ContainerStatus from runtime ser",
                fields: &[],
                truncated: true,
            },
            // case 11: cut inside the caller
            Row {
                line: "I1118 01:57:50.544661 4133404 kubelet_v",
                format: Format::KlogText,
                severity: Some(Level::Info),
                time: Some("2021-11-18T01:57:50.544661Z"),
                pid: Some(4133404),
                caller: Some("kubelet_v"),
                msg: "",
                fields: &[],
                truncated: true,
            },
            // case 25: only the header's start survived
            Row {
                line: "E1019 13:07:22.224",
                format: Format::KlogText,
                severity: Some(Level::Error),
                time: Some("2021-10-19T13:07:22.224Z"),
                pid: None,
                caller: None,
                msg: "",
                fields: &[],
                truncated: true,
            },
            // case 06: structured with an unquoted list and a Go struct
            Row {
                line: r#"I0321 17:10:59.899727  475498 kubelet.go:1970] "SyncLoop (PLEG): event for pod" pod="default/test-sts-a-0" event=&{ID:ab7e1b0b-453f-4627-a749-47e48c2265a6 Type:ContainerDied Data:6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0}"#,
                format: Format::KlogStructured,
                severity: Some(Level::Info),
                time: Some("2021-03-21T17:10:59.899727Z"),
                pid: Some(475498),
                caller: Some("kubelet.go:1970"),
                msg: "SyncLoop (PLEG): event for pod",
                fields: &[
                    ("pod", "default/test-sts-a-0"),
                    (
                        "event",
                        "&{ID:ab7e1b0b-453f-4627-a749-47e48c2265a6 Type:ContainerDied Data:6cf761b38acb743ec5940d7f0b0a445c68066fe307c2fdbb75aaf2ea260713f0}",
                    ),
                ],
                truncated: false,
            },
            // case 25: three levels of escaping; one unescape pass
            Row {
                line: r#"E1019 13:07:17.246702    1736 pod_workers.go:951] "Error syncing pod, skipping" err="failed to \"KillPodSandbox\" for \"e1909e28-5731-4111-8031-3c989b5dc0cd\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"ff252b2872f45846e140c96bb096d5a23100dcd13bd25cecbf858655b336093e\\\": plugin type=\\\"flannel\\\" failed (delete): failed to parse netconf: unexpected end of JSON input\"" pod="team-ns/pvc-tester-mqwqq" podUID=e1909e28-5731-4111-8031-3c989b5dc0cd"#,
                format: Format::KlogStructured,
                severity: Some(Level::Error),
                time: Some("2021-10-19T13:07:17.246702Z"),
                pid: Some(1736),
                caller: Some("pod_workers.go:951"),
                msg: "Error syncing pod, skipping",
                fields: &[
                    (
                        "err",
                        r#"failed to "KillPodSandbox" for "e1909e28-5731-4111-8031-3c989b5dc0cd" with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destroy network for sandbox \"ff252b2872f45846e140c96bb096d5a23100dcd13bd25cecbf858655b336093e\": plugin type=\"flannel\" failed (delete): failed to parse netconf: unexpected end of JSON input""#,
                    ),
                    ("pod", "team-ns/pvc-tester-mqwqq"),
                    ("podUID", "e1909e28-5731-4111-8031-3c989b5dc0cd"),
                ],
                truncated: false,
            },
            // case 19: a %+v struct value cut mid-way
            Row {
                line: r#"I0829 01:50:33.288248 2909862 status_manager.go:472] "Ignoring same status for pod" pod="default/mypod-127.0.0.1" status={Phase:Running Conditions:[{Type:Initialized Status:True LastProbeTime:0001-01-01 00:00:00 +0000 UTC} {Type:Ready"#,
                format: Format::KlogStructured,
                severity: Some(Level::Info),
                time: Some("2021-08-29T01:50:33.288248Z"),
                pid: Some(2909862),
                caller: Some("status_manager.go:472"),
                msg: "Ignoring same status for pod",
                fields: &[
                    ("pod", "default/mypod-127.0.0.1"),
                    (
                        "status",
                        "{Phase:Running Conditions:[{Type:Initialized Status:True LastProbeTime:0001-01-01 00:00:00 +0000 UTC} {Type:Ready",
                    ),
                ],
                truncated: true,
            },
            // case 19: an unstructured cAdvisor line inside a structured log
            Row {
                line: r#"I0829 01:50:35.474651 2909862 manager.go:1044] Destroyed container: "/kubepods/besteffort/pod7c0663d52f9e8c61c7a733304c23b60f" (aliases: [], namespace: "")"#,
                format: Format::KlogText,
                severity: Some(Level::Info),
                time: Some("2021-08-29T01:50:35.474651Z"),
                pid: Some(2909862),
                caller: Some("manager.go:1044"),
                msg: r#"Destroyed container: "/kubepods/besteffort/pod7c0663d52f9e8c61c7a733304c23b60f" (aliases: [], namespace: "")"#,
                fields: &[],
                truncated: false,
            },
            // a legacy message that starts with a quoted word is not structured
            Row {
                line: r#"W0102 06:28:13.485985  250135 x.go:1] "abc" is not a key"#,
                format: Format::KlogText,
                severity: Some(Level::Warning),
                time: Some("2021-01-02T06:28:13.485985Z"),
                pid: Some(250135),
                caller: Some("x.go:1"),
                msg: r#""abc" is not a key"#,
                fields: &[],
                truncated: false,
            },
            // klog at 339c48b writes a space before the bracket
            Row {
                line: r#"I0613 10:15:42.123456    1234 kubelet.go:2449 ] "SyncLoop DELETE" source="api""#,
                format: Format::KlogStructured,
                severity: Some(Level::Info),
                time: Some("2021-06-13T10:15:42.123456Z"),
                pid: Some(1234),
                caller: Some("kubelet.go:2449"),
                msg: "SyncLoop DELETE",
                fields: &[("source", "api")],
                truncated: false,
            },
            // case 09: the header was cut off before the caller
            Row {
                line: r#"kubelet_volumes.go:154] Orphaned pod "2b363d17-e69d-11ea-bda2-44a842186bcd" found,"#,
                format: Format::KlogText,
                severity: None,
                time: None,
                pid: None,
                caller: Some("kubelet_volumes.go:154"),
                msg: r#"Orphaned pod "2b363d17-e69d-11ea-bda2-44a842186bcd" found,"#,
                fields: &[],
                truncated: false,
            },
        ];
        for row in rows {
            let c = ctx();
            let inner = if row.line.as_bytes()[1].is_ascii_digit() {
                parse(row.line, &c)
            } else {
                fragment(row.line)
            }
            .unwrap_or_else(|| panic!("not klog: {}", row.line));
            assert_eq!(inner.format, row.format, "{}", row.line);
            assert_eq!(inner.severity, row.severity, "{}", row.line);
            assert_eq!(
                inner.time.map(|t| t.to_string()).as_deref(),
                row.time,
                "{}",
                row.line
            );
            assert_eq!(inner.pid, row.pid, "{}", row.line);
            assert_eq!(inner.caller.as_deref(), row.caller, "{}", row.line);
            assert_eq!(inner.msg, row.msg, "{}", row.line);
            let want: Vec<(String, String)> = row
                .fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(pairs(&inner.fields), want, "{}", row.line);
            assert_eq!(inner.truncated, row.truncated, "{}", row.line);
        }
    }

    #[test]
    fn not_klog() {
        let c = ctx();
        for line in [
            "E13 is not a date",
            "I0013 10:00:00.0 1 a.go:1] month 0",
            "W1015 foo",
            "E1019x",
        ] {
            assert!(parse(line, &c).is_none(), "{line}");
        }
        for line in ["main.go: 12] x", "notgo:12] x", "a.go:] x"] {
            assert!(fragment(line).is_none(), "{line}");
        }
    }
}
