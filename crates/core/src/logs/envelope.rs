//! Text envelopes that syslog, journald and log shippers put before a component's own line.
//!
//! - journalctl short / traditional syslog: `Mon DD HH:MM:SS[.frac] host ident[pid]: message`;
//!   the day may be space-padded (`Jun  8`), `[pid]` may be missing (`node-a kubelet: …`), the
//!   PID may have 7 digits. Regex:
//!   `^(\w{3}) +(\d{1,2}) (\d\d:\d\d:\d\d(?:\.\d+)?) (\S+) ([^\s\[:]+)(?:\[(\d+)\])?: ?(.*)$`.
//! - rsyslog high precision / `journalctl -o short-iso`: the same with an RFC 3339 time:
//!   `2023-01-20T12:26:08.948163+00:00 host ident[pid]: message`.
//! - a bare tag before a recognised inner shape: `kubelet: E0309 …` (a syslog fragment,
//!   case 09) or talosctl's `10.0.0.8: {"ts":…}` (case 32). Regex:
//!   `^([^\s:\[\]{}"=]+)(?:\[(\d+)\])?: (.*)$`.
//!
//! The journald JSON export is an envelope too; it lives in [`json`](super::json).
//!
//! A syslog or RFC 3339 envelope accepts any message ([`Format::Plain`](super::Format::Plain)
//! when no inner shape fits) and may itself be cut (`Apr 16 05:16:28 node-a`, `Sep 28 1`,
//! cases 14 and 23): what was read is kept and the record is marked truncated.

use std::borrow::Cow;

use super::record::{Envelope, EnvelopeKind, Inner, ParseContext, anchored};
use super::shape::{inner, inner_or_plain};
use super::text::parse_u32;
use super::time::{self, Yearless, hms, month_name};

/// Positions of a syslog or RFC 3339 envelope, found without resolving its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scan {
    pub kind: EnvelopeKind,
    /// The yearless syslog time, or `None` for RFC 3339 (re-read by [`detect`]) or a cut time.
    pub yearless: Option<Yearless>,
    pub host: Option<(usize, usize)>,
    pub ident: Option<(usize, usize)>,
    pub pid: Option<u32>,
    /// Where the time ends.
    pub time_end: usize,
    /// Where the message starts; `None` when the text ended inside the envelope.
    pub body_start: Option<usize>,
}

/// Finds a syslog or RFC 3339 envelope at the start of `s`.
pub(crate) fn scan(s: &str) -> Option<Scan> {
    let b = s.as_bytes();
    let first = *b.first()?;
    // A digit opens an RFC 3339 time, or a month as the CJK locales print it (`6月 24 …`).
    let numbered = first.is_ascii_digit().then(|| month_name(b, 0)).flatten();
    let (kind, yearless, after_time, cut) = if let Some((month, len)) = numbered {
        syslog_time(b, month, len)?
    } else if first.is_ascii_digit() {
        // `<time> INFO …` has a level, not a host (`Format::TimeLevel`).
        if super::shape::time_level_start(s).is_some() {
            return None;
        }
        let t = time::rfc3339(b, 0, jiff::tz::Offset::UTC)?;
        (EnvelopeKind::SyslogRfc3339, None, t.end, false)
    } else {
        let (month, len) = month_name(b, 0)?;
        syslog_time(b, month, len)?
    };
    let mut sc = Scan {
        kind,
        yearless,
        host: None,
        ident: None,
        pid: None,
        time_end: after_time,
        body_start: None,
    };
    if cut || after_time >= b.len() {
        return Some(sc);
    }
    if b[after_time] != b' ' {
        return None;
    }
    let host_start = after_time + 1;
    let host_end = b[host_start..]
        .iter()
        .position(|&c| c == b' ')
        .map_or(b.len(), |o| host_start + o);
    if host_end == host_start {
        return None;
    }
    // No host nor identifier: `Aug  7 19:07:50 time="2024-08-07T19:07:50.95+08:00" level=…`
    // (containerd/containerd#10636, a syslog template without them): a host name holds no
    // `=`, quote or brace, so a first word that does is the record itself.
    if b[host_start..host_end]
        .iter()
        .any(|&c| matches!(c, b'=' | b'"' | b'{'))
    {
        sc.body_start = Some(host_start);
        return Some(sc);
    }
    // No host: `Jun 26 07:44:44 containerd[1891085]: time=…`, as journalctl prints a journal
    // whose entries carry no `_HOSTNAME` and as people trim pasted lines. A host name never
    // ends in `:`, so a first word `ident[pid]:` or `ident:` is the identifier.
    if b[host_end - 1] == b':'
        && let Some((id, pid, body_start)) = ident(s, host_start)
        && body_start <= host_end + 1
    {
        sc.ident = Some((host_start, host_start + id.len()));
        sc.pid = pid;
        sc.body_start = Some(body_start.min(s.len()));
        return Some(sc);
    }
    sc.host = Some((host_start, host_end));
    if host_end >= b.len() {
        // `Apr 16 05:16:28 node-a`: the line ended after the host.
        return Some(sc);
    }
    let ident_start = host_end + 1;
    // The CRI container log format (`/var/log/pods/…/0.log`, what `kubectl logs` reads):
    // `<RFC 3339> stdout|stderr P|F <message>`; the stream is kept as the host.
    if kind == EnvelopeKind::SyslogRfc3339
        && matches!(&s[host_start..host_end], "stdout" | "stderr")
        && matches!(b.get(ident_start..ident_start + 2), Some(b"F " | b"P "))
    {
        sc.kind = EnvelopeKind::CriLog;
        sc.body_start = Some(ident_start + 2);
        return Some(sc);
    }
    match ident(s, ident_start) {
        Some((id, pid, body_start)) => {
            sc.ident = Some((ident_start, ident_start + id.len()));
            sc.pid = pid;
            sc.body_start = Some(body_start.min(s.len()));
        }
        None => match rfc5424(s, ident_start).filter(|_| kind == EnvelopeKind::SyslogRfc3339) {
            Some((app_end, pid, body_start)) => {
                sc.ident = Some((ident_start, app_end));
                sc.pid = pid;
                sc.body_start = Some(body_start);
            }
            // No `ident:`; the rest is the message.
            None => sc.body_start = Some(ident_start),
        },
    }
    Some(sc)
}

/// RFC 5424's `APP-NAME PROCID MSGID STRUCTURED-DATA MSG` after the time and host, its empty
/// fields `-` (rsyslog's `RSYSLOG_SyslogProtocol23Format`, syslog-ng, log shippers:
/// `2024-02-07T02:49:40.739405+00:00 NodeA kubelet 24578 - -  E0207 …`): where the app name
/// ends, the PID, and where the message starts (after any blanks). `None` unless the PROCID is
/// digits or `-` and the STRUCTURED-DATA `-` or `[…]`: a message of words is no such header.
fn rfc5424(s: &str, start: usize) -> Option<(usize, Option<u32>, usize)> {
    let b = s.as_bytes();
    let word_end = |from: usize| {
        b.get(from..)?
            .iter()
            .position(|&c| c == b' ')
            .map(|o| from + o)
            .filter(|&end| end > from)
    };
    let app_end = word_end(start)?;
    let pid_end = word_end(app_end + 1)?;
    let pid = match &s[app_end + 1..pid_end] {
        "-" => None,
        procid => Some(parse_u32(procid)?),
    };
    let msgid_end = word_end(pid_end + 1)?;
    let sd = msgid_end + 1;
    let sd_end = match b.get(sd)? {
        b'-' => sd + 1,
        b'[' => sd + b[sd..].windows(2).position(|w| w == b"] ")? + 1,
        _ => return None,
    };
    if b.get(sd_end) != Some(&b' ') {
        return None;
    }
    let body = sd_end + b[sd_end..].iter().take_while(|&&c| c == b' ').count();
    Some((app_end, pid, body))
}

/// Detects a syslog or RFC 3339 envelope at the start of `s` and parses its message. Returns the
/// envelope, the inner record and whether the envelope itself was cut.
pub(crate) fn detect<'a>(
    s: &'a str,
    ctx: &ParseContext,
) -> Option<(Envelope<'a>, Inner<'a>, bool)> {
    let sc = scan(s)?;
    let time = match sc.kind {
        EnvelopeKind::SyslogRfc3339 | EnvelopeKind::CriLog => {
            time::rfc3339(s.as_bytes(), 0, ctx.offset).map(|t| t.time)
        }
        _ => sc
            .yearless
            .and_then(|t| time::yearless_to_timestamp(ctx, t)),
    };
    let env = Envelope {
        kind: sc.kind,
        time,
        host: sc.host.map(|(a, z)| Cow::Borrowed(&s[a..z])),
        ident: sc.ident.map(|(a, z)| Cow::Borrowed(&s[a..z])),
        pid: sc.pid,
        cursor: None,
    };
    let Some(body_start) = sc.body_start else {
        return Some((env, empty(), true));
    };
    // A yearless time inside (klog) takes its year from an RFC 3339 envelope.
    let anchored_ctx;
    let ctx = if matches!(sc.kind, EnvelopeKind::SyslogRfc3339 | EnvelopeKind::CriLog) {
        anchored_ctx = anchored(ctx, time);
        &anchored_ctx
    } else {
        ctx
    };
    Some((env, inner_or_plain(&s[body_start..], ctx), false))
}

/// `Mon DD HH:MM:SS[.frac]` from `b[0..]`, month already read (`month_len` bytes). Returns the envelope kind, the
/// time, the index after it and whether the text ended inside the timestamp.
fn syslog_time(
    b: &[u8],
    month: i8,
    month_len: usize,
) -> Option<(EnvelopeKind, Option<Yearless>, usize, bool)> {
    if b.get(month_len) != Some(&b' ') {
        return None;
    }
    let mut i = month_len + 1;
    if b.get(i) == Some(&b' ') {
        i += 1; // space-padded day
    }
    let day_start = i;
    while i < b.len() && b[i].is_ascii_digit() && i - day_start < 2 {
        i += 1;
    }
    if i == day_start {
        return None;
    }
    let day = time::digits(b, day_start, i - day_start)? as i8;
    if !(1..=31).contains(&day) {
        return None;
    }
    if i >= b.len() {
        return Some((EnvelopeKind::Syslog, None, i, true));
    }
    if b[i] != b' ' {
        return None;
    }
    i += 1;
    match hms(b, i) {
        Some((hour, minute, second, nanos, end)) => {
            let t = Yearless {
                month,
                day,
                hour,
                minute,
                second,
                nanos,
            };
            Some((EnvelopeKind::Syslog, Some(t), end, false))
        }
        None => {
            // `Sep 28 1`: the text ended inside the time.
            let rest = &b[i..];
            if rest.len() < 8 && rest.iter().all(|&c| c.is_ascii_digit() || c == b':') {
                Some((EnvelopeKind::Syslog, None, b.len(), true))
            } else {
                None
            }
        }
    }
}

/// Reads `ident[pid]: ` or `ident: ` at `start`; returns the identifier, PID and message start.
fn ident(s: &str, start: usize) -> Option<(&str, Option<u32>, usize)> {
    let b = s.as_bytes();
    let mut i = start;
    while i < b.len() && !matches!(b[i], b' ' | b'[' | b':') {
        i += 1;
    }
    if i == start || i >= b.len() {
        return None;
    }
    let ident = &s[start..i];
    let mut pid = None;
    if b[i] == b'[' {
        let close = i + 1 + b[i + 1..].iter().position(|&c| c == b']')?;
        pid = Some(parse_u32(&s[i + 1..close])?);
        i = close + 1;
    }
    if b.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    if b.get(i) == Some(&b' ') {
        i += 1;
    }
    Some((ident, pid, i))
}

/// A bare `tag: ` or `tag[pid]: ` envelope, accepted only when the message after it is a
/// recognised inner shape (`kubelet: E0309 …`, `10.0.0.8: {"ts":…}`).
pub(crate) fn tag<'a>(s: &'a str, ctx: &ParseContext) -> Option<(Envelope<'a>, Inner<'a>)> {
    let (ident, pid, body_start) = tag_prefix(s)?;
    // A `tag[pid]: ` names a process as the journal does (a journal pasted without its time and
    // host: `systemd[1]: … Scope has no PIDs. Refusing.`): its text is a record of that program
    // whatever its shape; a bare `tag: ` is one only before a known shape.
    let inner = match inner(&s[body_start..], ctx) {
        Some(i) => i,
        None if pid.is_some() => Inner::new(
            super::record::Format::Plain,
            Cow::Borrowed(s[body_start..].trim()),
        ),
        None => return None,
    };
    let env = Envelope {
        kind: EnvelopeKind::Tag,
        time: None,
        host: None,
        ident: Some(Cow::Borrowed(ident)),
        pid,
        cursor: None,
    };
    Some((env, inner))
}

/// `tag: ` or `tag[pid]: ` at the start of `s`: the tag, PID and message start.
pub(crate) fn tag_prefix(s: &str) -> Option<(&str, Option<u32>, usize)> {
    let b = s.as_bytes();
    // The tag is the bytes before the first `:` or `[` in the first 65, none of them a blank,
    // `]`, a brace, `"` or `=`: the scan stops at the first of any of those (a message's first
    // blank, mostly).
    let end = b.iter().take(65).position(|&c| {
        matches!(
            c,
            b':' | b'[' | b' ' | b'\t' | b']' | b'{' | b'}' | b'"' | b'='
        )
    })?;
    if end == 0 || !matches!(b[end], b':' | b'[') {
        return None;
    }
    let (ident, pid, body_start) = ident(s, 0)?;
    if b.get(body_start - 1) != Some(&b' ') {
        return None;
    }
    Some((ident, pid, body_start))
}

fn empty<'a>() -> Inner<'a> {
    Inner::new(super::record::Format::Plain, Cow::Borrowed(""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::record::Format;

    #[test]
    fn a_tag_with_a_pid_names_a_process_whatever_its_text() {
        let ctx = ParseContext::new(2024);
        // A journal pasted without its time and host (trial 14's 17).
        let (env, inner) = tag(
            "systemd[1]: libcontainer-29519-systemd-test-default-dependencies.scope: Scope has no PIDs. Refusing.",
            &ctx,
        )
        .expect("a record of systemd");
        assert_eq!(env.ident.as_deref(), Some("systemd"));
        assert_eq!(env.pid, Some(1));
        assert_eq!(inner.format, Format::Plain);
        assert!(
            inner.msg.starts_with("libcontainer-29519"),
            "{:?}",
            inner.msg
        );
        // Without a PID, only before a known shape: a sentence's `word: …` is none.
        assert!(tag("note: the node rebooted at noon", &ctx).is_none());
    }

    struct Row {
        line: &'static str,
        kind: EnvelopeKind,
        env_time: Option<&'static str>,
        host: Option<&'static str>,
        ident: Option<&'static str>,
        pid: Option<u32>,
        inner: Format,
        msg: &'static str,
        cut: bool,
    }

    #[test]
    fn envelope_table() {
        let rows = [
            // case 04: journald + containerd logfmt
            Row {
                line: r#"Mar 14 14:34:57 node-a containerd[912]: time="2025-03-14T14:34:57.527007174+08:00" level=error msg="x""#,
                kind: EnvelopeKind::Syslog,
                env_time: Some("2025-03-14T14:34:57Z"),
                host: Some("node-a"),
                ident: Some("containerd"),
                pid: Some(912),
                inner: Format::Logfmt,
                msg: "x",
                cut: false,
            },
            // containerd/containerd#10636: neither host nor identifier, the record after the time
            Row {
                line: r#"Aug  7 19:07:50 time="2024-08-07T19:07:50.952326934+08:00" level=info msg="Kill container""#,
                kind: EnvelopeKind::Syslog,
                env_time: Some("2025-08-07T19:07:50Z"),
                host: None,
                ident: None,
                pid: None,
                inner: Format::Logfmt,
                msg: "Kill container",
                cut: false,
            },
            // containerd/containerd#10755: no host (a journal without `_HOSTNAME`, or trimmed)
            Row {
                line: r#"Jun 26 07:44:44 containerd[1891085]: time="2024-06-26T07:44:44.559390176Z" level=error msg="StopContainer for \"256a184124d5b4715ef4caf2deab0b6a25ba338aa78805b6aa2b0a055eeb159c\" failed" error="rpc error: code = DeadlineExceeded""#,
                kind: EnvelopeKind::Syslog,
                env_time: Some("2025-06-26T07:44:44Z"),
                host: None,
                ident: Some("containerd"),
                pid: Some(1891085),
                inner: Format::Logfmt,
                msg: r#"StopContainer for "256a184124d5b4715ef4caf2deab0b6a25ba338aa78805b6aa2b0a055eeb159c" failed"#,
                cut: false,
            },
            Row {
                line: r#"Feb 09 14:02:58 crio: time="2025-02-09 14:02:58.102353125Z" level=warning msg="x""#,
                kind: EnvelopeKind::Syslog,
                env_time: Some("2025-02-09T14:02:58Z"),
                host: None,
                ident: Some("crio"),
                pid: None,
                inner: Format::Logfmt,
                msg: "x",
                cut: false,
            },
            // case 24: padded day, no [pid]
            Row {
                line: r#"Jun  8 22:53:30 node-a kubelet: W0608 22:53:30.197413    7906 cni.go:242] CNI failed to retrieve network namespace path: cannot find network"#,
                kind: EnvelopeKind::Syslog,
                env_time: Some("2025-06-08T22:53:30Z"),
                host: Some("node-a"),
                ident: Some("kubelet"),
                pid: None,
                inner: Format::KlogText,
                msg: "CNI failed to retrieve network namespace path: cannot find network",
                cut: false,
            },
            // case 18: unit name as identifier
            Row {
                line: r#"Oct 19 07:20:46 node-a kubelet.service[6774]: I1019 07:20:46.701627    6774 kubelet.go:2063] "SyncLoop REMOVE" source="file" pods=[team-ns/static-nginx-10.0.0.11]"#,
                kind: EnvelopeKind::Syslog,
                env_time: Some("2025-10-19T07:20:46Z"),
                host: Some("node-a"),
                ident: Some("kubelet.service"),
                pid: Some(6774),
                inner: Format::KlogStructured,
                msg: "SyncLoop REMOVE",
                cut: false,
            },
            // case 03: rsyslog RFC 3339 prefix, plain inner message
            Row {
                line: "2023-01-20T13:04:35.842953+00:00 node-a sudo:     user : TTY=pts/0 ; PWD=/home/user ; USER=root ; COMMAND=/usr/bin/crictl rmp 06f0eea7928b1",
                kind: EnvelopeKind::SyslogRfc3339,
                env_time: Some("2023-01-20T13:04:35.842953Z"),
                host: Some("node-a"),
                ident: Some("sudo"),
                pid: None,
                inner: Format::Plain,
                msg: "user : TTY=pts/0 ; PWD=/home/user ; USER=root ; COMMAND=/usr/bin/crictl rmp 06f0eea7928b1",
                cut: false,
            },
            // case 09: another program's own format inside syslog
            Row {
                line: r#"Oct 15 14:48:41 node-b start-etcd.sh: 2019-10-15 14:48:41.930053 I | embed: rejected connection from "10.0.0.2:58860" (error "EOF", ServerName "")"#,
                kind: EnvelopeKind::Syslog,
                env_time: Some("2025-10-15T14:48:41Z"),
                host: Some("node-b"),
                ident: Some("start-etcd.sh"),
                pid: None,
                inner: Format::Plain,
                msg: r#"2019-10-15 14:48:41.930053 I | embed: rejected connection from "10.0.0.2:58860" (error "EOF", ServerName "")"#,
                cut: false,
            },
            // the CRI container log format (a static pod's /var/log/pods file)
            Row {
                line: r#"2023-01-20T13:26:08.948042485Z stderr F I0120 13:26:08.333859       1 kubelet.go:2063] "SyncLoop REMOVE" source="api" pods=[a/b]"#,
                kind: EnvelopeKind::CriLog,
                env_time: Some("2023-01-20T13:26:08.948042485Z"),
                host: Some("stderr"),
                ident: None,
                pid: None,
                inner: Format::KlogStructured,
                msg: "SyncLoop REMOVE",
                cut: false,
            },
            // case 14: the line ended after the host
            Row {
                line: "Apr 16 05:16:28 node-a",
                kind: EnvelopeKind::Syslog,
                env_time: Some("2025-04-16T05:16:28Z"),
                host: Some("node-a"),
                ident: None,
                pid: None,
                inner: Format::Plain,
                msg: "",
                cut: true,
            },
            // case 23: the line ended inside the time
            Row {
                line: "Sep 28 1",
                kind: EnvelopeKind::Syslog,
                env_time: None,
                host: None,
                ident: None,
                pid: None,
                inner: Format::Plain,
                msg: "",
                cut: true,
            },
        ];
        for row in rows {
            let ctx = ParseContext::new(2025);
            let (env, inner, cut) =
                detect(row.line, &ctx).unwrap_or_else(|| panic!("{}", row.line));
            assert_eq!(env.kind, row.kind, "{}", row.line);
            assert_eq!(
                env.time.map(|t| t.to_string()).as_deref(),
                row.env_time,
                "{}",
                row.line
            );
            assert_eq!(env.host.as_deref(), row.host, "{}", row.line);
            assert_eq!(env.ident.as_deref(), row.ident, "{}", row.line);
            assert_eq!(env.pid, row.pid, "{}", row.line);
            assert_eq!(inner.format, row.inner, "{}", row.line);
            assert_eq!(inner.msg, row.msg, "{}", row.line);
            assert_eq!(cut, row.cut, "{}", row.line);
        }
    }

    #[test]
    fn not_an_envelope() {
        let ctx = ParseContext::new(2025);
        for line in [
            "user@node-a:~> sudo journalctl -u containerd --no-pager | grep 06f0eea7928b1",
            "Removed sandbox 06f0eea7928b1",
            "March is not a date",
            "2023-01-20 is a date but not a time",
            "Jan 32 10:00:00 host x: y",
        ] {
            assert!(detect(line, &ctx).is_none(), "{line}");
        }
    }

    #[test]
    fn tag_table() {
        let ctx = ParseContext::new(2018);
        // case 09: syslog fragment without time and host
        let (env, inner) = tag(
            r#"kubelet: E0309 16:46:30.429770    3112 kubelet_volumes.go:128] Orphaned pod "2815f27a-219b-11e8-8a2a-ec0d9a3a445a" found"#,
            &ctx,
        )
        .unwrap();
        assert_eq!(env.ident.as_deref(), Some("kubelet"));
        assert_eq!(inner.format, Format::KlogText);
        // case 32: talosctl node prefix
        let (env, inner) = tag(r#"10.0.0.8: {"ts":1757010309253.551,"msg":"x"}"#, &ctx).unwrap();
        assert_eq!(env.ident.as_deref(), Some("10.0.0.8"));
        assert_eq!(inner.format, Format::Json);
        // a tag before plain text is not an envelope
        assert!(tag("bash-5.1# ls: no", &ctx).is_none());
        assert!(tag("note: something happened", &ctx).is_none());
        assert!(tag("FATA[0000] getting the pod sandbox status", &ctx).is_none());
    }
}
