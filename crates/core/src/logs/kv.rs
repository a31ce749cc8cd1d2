//! The `key=value` tokenizer shared by structured klog and logrus logfmt, and the logfmt line
//! parser (containerd, CRI-O, dockerd, CNI plugins).
//!
//! Values are one of:
//! - quoted, Go-escaped: `err="rpc error: … \"c65a…\": not found"`; scanned with
//!   [`QuoteMode::Lenient`] so pasted lines with unescaped inner quotes (case 21) still split
//!   right; a value cut by the end of the line is kept and marks the record truncated;
//! - a klog multi-line block: `key=<` newline, `\t`-indented lines, newline, ` >`;
//! - bare: up to the next space; in klog mode brackets (`[ ] { } ( )`) nest and may hold spaces
//!   and quoted strings (`pods=["default/x"]`, `event=&{ID:… Type:ContainerDied Data:…}`,
//!   `status={Phase:Running Conditions:[{…} {…}] …}`).
//!
//! klog's writer: `writeStringValue` in
//! <https://github.com/kubernetes/klog/blob/2fce8ac40b2745b0f3526657305df4f4da9bdd82/internal/serialize/keyvalues.go>.
//!
//! Equivalent regex for one pair (without the nesting, which a regex cannot express):
//! `\s*([A-Za-z0-9_./-]+)=("(?:[^"\\]|\\.)*"?|<\n(?:\t.*\n)*? >|\S*)`.

use std::borrow::Cow;

use super::record::{Field, FieldValue, Format, Inner, Level, ParseContext};
use super::text::{QuoteMode, is_key_byte, is_space, scan_quoted, unescape};
use super::time;

/// Which writer's conventions apply to bare values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// klog: brackets nest, `<` newline opens a block.
    Klog,
    /// logrus: a bare value ends at the first space.
    Logfmt,
}

/// How tokenizing ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// The text ended inside a value.
    pub truncated: bool,
    /// A token was not `key=value`; pairs before it are kept, the rest is not parsed.
    /// `malformed_at` is where the bad token starts.
    pub malformed_at: Option<usize>,
}

/// Tokenizes `key=value` pairs of `s` from `start` into `out`.
pub(crate) fn parse_kvs<'a>(
    s: &'a str,
    start: usize,
    mode: Mode,
    out: &mut Vec<Field<'a>>,
) -> Outcome {
    let b = s.as_bytes();
    let mut i = start;
    let mut outcome = Outcome::default();
    loop {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        if i >= b.len() {
            return outcome;
        }
        let key_start = i;
        while i < b.len() && is_key_byte(b[i]) {
            i += 1;
        }
        if i == key_start || i >= b.len() || b[i] != b'=' {
            if i >= b.len() && i > key_start && !s[key_start..].contains(' ') {
                // A key cut before its `=`.
                outcome.truncated = true;
                return outcome;
            }
            outcome.malformed_at = Some(key_start);
            return outcome;
        }
        let key = &s[key_start..i];
        i += 1; // '='
        let (value, next, cut) = value(s, i, mode);
        out.push(Field {
            key: Cow::Borrowed(key),
            value,
        });
        if cut {
            outcome.truncated = true;
            return outcome;
        }
        i = next;
        if i < b.len() && !is_space(b[i]) {
            // Garbage glued to a value (`key="a"b`): the bare remainder is skipped as one token.
            while i < b.len() && !is_space(b[i]) {
                i += 1;
            }
        }
    }
}

/// Reads one value at `i`; returns it, the index after it, and whether the text ended inside it.
fn value(s: &str, i: usize, mode: Mode) -> (FieldValue<'_>, usize, bool) {
    let b = s.as_bytes();
    match b.get(i) {
        None => (FieldValue::Bare(Cow::Borrowed("")), i, false),
        Some(b'"') => {
            let q = scan_quoted(s, i, QuoteMode::Lenient);
            let mut inner = q.inner;
            if !q.closed {
                // journalctl's pager marks a cut line with a final '>' (case 26).
                inner = inner.strip_suffix('>').unwrap_or(inner);
            }
            let v = if q.escaped {
                unescape(inner)
            } else {
                Cow::Borrowed(inner)
            };
            (FieldValue::Quoted(v), q.end, !q.closed)
        }
        Some(b'<') if mode == Mode::Klog && b.get(i + 1) == Some(&b'\n') => block(s, i + 2),
        Some(_) => {
            let (end, cut) = match mode {
                Mode::Klog => bare_nested(b, i),
                Mode::Logfmt => {
                    let end = b[i..]
                        .iter()
                        .position(|&c| is_space(c))
                        .map_or(b.len(), |o| i + o);
                    (end, false)
                }
            };
            (FieldValue::Bare(Cow::Borrowed(&s[i..end])), end, cut)
        }
    }
}

/// A klog block starting at `start` (just after `<\n`): lines start with a tab, the block ends
/// with `\n >`. Returns the joined lines; unterminated blocks run to the end of the text.
fn block(s: &str, start: usize) -> (FieldValue<'_>, usize, bool) {
    let body = &s[start..];
    let (content, next, cut) = if body.starts_with(" >") {
        ("", start + 2, false)
    } else {
        match memchr::memmem::find(body.as_bytes(), b"\n >") {
            Some(off) => (&body[..off], start + off + 3, false),
            None => (body, s.len(), true),
        }
    };
    let mut joined = String::with_capacity(content.len());
    for (n, line) in content.split('\n').enumerate() {
        if n > 0 {
            joined.push('\n');
        }
        // A tab, or the spaces a paste turned it into.
        joined.push_str(
            line.strip_prefix('\t')
                .unwrap_or_else(|| line.trim_start_matches(' ')),
        );
    }
    (FieldValue::Block(Cow::Owned(joined)), next, cut)
}

/// End of a bare klog value starting at `i`: the first space outside brackets and quotes.
/// Returns the end and whether the text ended with brackets still open.
fn bare_nested(b: &[u8], mut i: usize) -> (usize, bool) {
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' if depth == 0 => return (i, false),
            b'[' | b'{' | b'(' => depth += 1,
            b']' | b'}' | b')' => depth = depth.saturating_sub(1),
            b'"' if depth > 0 => {
                // A quoted string inside brackets: skip it (strictly, escapes honoured).
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
    (b.len(), depth > 0)
}

/// Parses a logrus logfmt line: `time="…" level=… msg="…" key=value…` or `level=… msg=…`.
///
/// `time`, `level` and `msg` are lifted out of the fields. containerd writes
/// `time="2023-01-20T13:26:08.948042485+01:00"`, CRI-O `time="2021-06-29 17:14:10.29+02:00"`;
/// a zone-less time is read in the context's offset.
pub(crate) fn logfmt<'a>(s: &'a str, ctx: &ParseContext) -> Option<Inner<'a>> {
    let mut fields = Vec::with_capacity(6);
    let outcome = parse_kvs(s, 0, Mode::Logfmt, &mut fields);
    if fields.is_empty() {
        return None;
    }
    let mut inner = Inner::new(Format::Logfmt, Cow::Borrowed(""));
    inner.truncated = outcome.truncated;
    let mut msg = None;
    fields.retain_mut(|f| match &*f.key {
        "time" if inner.time.is_none() => {
            inner.time = time::rfc3339(f.value.as_str().as_bytes(), 0, ctx.offset).map(|t| t.time);
            false
        }
        "level" if inner.severity.is_none() => {
            inner.severity = Level::from_word(f.value.as_str());
            false
        }
        "msg" if msg.is_none() => {
            msg = Some(std::mem::replace(
                &mut f.value,
                FieldValue::Bare(Cow::Borrowed("")),
            ));
            false
        }
        _ => true,
    });
    inner.msg = match msg {
        Some(
            FieldValue::Quoted(m)
            | FieldValue::Bare(m)
            | FieldValue::Block(m)
            | FieldValue::Json(m),
        ) => m,
        None => match outcome.malformed_at {
            Some(at) => Cow::Borrowed(&s[at..]),
            None => Cow::Borrowed(""),
        },
    };
    inner.fields = fields;
    Some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kvs(s: &str, mode: Mode) -> (Vec<(String, String)>, Outcome) {
        let mut out = Vec::new();
        let o = parse_kvs(s, 0, mode, &mut out);
        (
            out.into_iter()
                .map(|f| (f.key.into_owned(), f.value.as_str().to_owned()))
                .collect(),
            o,
        )
    }

    #[test]
    fn klog_values_table() {
        // (input, expected pairs, truncated)
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], bool);
        let cases: &[Case<'_>] = &[
            // case 06: unquoted bracket list and Go struct with spaces
            (
                r#"source="api" pods=[default/test-sts-a-0]"#,
                &[("source", "api"), ("pods", "[default/test-sts-a-0]")],
                false,
            ),
            (
                r#"pod="default/test-sts-a-0" event=&{ID:ab7e1b0b-453f-4627-a749-47e48c2265a6 Type:ContainerDied Data:6cf7}"#,
                &[
                    ("pod", "default/test-sts-a-0"),
                    (
                        "event",
                        "&{ID:ab7e1b0b-453f-4627-a749-47e48c2265a6 Type:ContainerDied Data:6cf7}",
                    ),
                ],
                false,
            ),
            // 1.29+: quoted list; newer text output: JSON-ish container ID
            (
                r#"pods=["default/nginx"] containerID={"Type":"containerd","ID":"c65a"} err="x""#,
                &[
                    ("pods", r#"["default/nginx"]"#),
                    ("containerID", r#"{"Type":"containerd","ID":"c65a"}"#),
                    ("err", "x"),
                ],
                false,
            ),
            // case 26: %+v struct value
            (
                "podSandboxID={Type:containerd ID:8599}",
                &[("podSandboxID", "{Type:containerd ID:8599}")],
                false,
            ),
            // Go nil is a bare `<nil>`, not a block
            ("err=<nil> x=1", &[("err", "<nil>"), ("x", "1")], false),
            // multi-line block, then another key
            (
                "err=<\n\tline one\n\tline \"two\"\n > pod=\"a/b\"",
                &[("err", "line one\nline \"two\""), ("pod", "a/b")],
                false,
            ),
            // block cut before its end
            ("err=<\n\tline one", &[("err", "line one")], true),
            // a block whose tab a paste turned into spaces (cilium/cilium#40345)
            (
                "err=<\n        rpc error: x\n        Is the agent running?\n > pod=\"a/b\"",
                &[
                    ("err", "rpc error: x\nIs the agent running?"),
                    ("pod", "a/b"),
                ],
                false,
            ),
            // case 19: Go struct cut mid-way
            (
                "status={Phase:Running Conditions:[{Type:Initialized} {Type:Ready",
                &[(
                    "status",
                    "{Phase:Running Conditions:[{Type:Initialized} {Type:Ready",
                )],
                true,
            ),
            // case 18: cut inside a nested escaped string
            (
                r#"err="failed to \"KillPodSandbox\" for \"5d6d\" with KillPodSandboxError: \"rpc error: code = Unknown desc = failed to destr"#,
                &[(
                    "err",
                    r#"failed to "KillPodSandbox" for "5d6d" with KillPodSandboxError: "rpc error: code = Unknown desc = failed to destr"#,
                )],
                true,
            ),
            // case 26: journalctl pager cut marker
            (
                r#"err="rpc error: fork/exec /opt/cni/bin/weave>"#,
                &[("err", "rpc error: fork/exec /opt/cni/bin/weave")],
                true,
            ),
            // a key cut before '='
            ("a=1 podUI", &[("a", "1")], true),
        ];
        for &(input, want, truncated) in cases {
            let (got, o) = kvs(input, Mode::Klog);
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(got, want, "{input}");
            assert_eq!(o.truncated, truncated, "{input}");
            assert_eq!(o.malformed_at, None, "{input}");
        }
    }

    #[test]
    fn malformed_token_stops() {
        let (got, o) = kvs("a=1 is bar", Mode::Klog);
        assert_eq!(got, vec![("a".to_owned(), "1".to_owned())]);
        assert_eq!(o.malformed_at, Some(4));
    }

    #[test]
    fn logfmt_lines() {
        let ctx = ParseContext::new(2020);
        // case 04 (after the journald prefix)
        let s = r#"time="2025-03-14T14:34:57.527007174+08:00" level=error msg="ContainerStatus for \"a168\" failed" error="rpc error: code = NotFound desc = an error occurred when try to find container \"a168\": not found""#;
        let i = logfmt(s, &ctx).unwrap();
        assert_eq!(
            i.time.unwrap().to_string(),
            "2025-03-14T06:34:57.527007174Z"
        );
        assert_eq!(i.severity, Some(Level::Error));
        assert_eq!(i.msg, r#"ContainerStatus for "a168" failed"#);
        assert_eq!(i.fields.len(), 1);
        assert_eq!(
            i.fields[0].value.as_str(),
            r#"rpc error: code = NotFound desc = an error occurred when try to find container "a168": not found"#
        );
        // case 06: cilium, no time
        let s = r#"level=warning msg="Unable to enter namespace \"\", will not delete interface" error="failed to Statfs \"\": no such file or directory" subsys=cilium-cni"#;
        let i = logfmt(s, &ctx).unwrap();
        assert_eq!(i.time, None);
        assert_eq!(i.severity, Some(Level::Warning));
        assert_eq!(
            i.msg,
            r#"Unable to enter namespace "", will not delete interface"#
        );
        assert_eq!(i.fields[1].key, "subsys");
        // case 30: CRI-O time with a space, bare name=
        let s = r#"time="2021-06-29 17:14:10.292290977+02:00" level=info msg="Stopping pod sandbox: 5b45" id=4783e552-d7ea-49b8-9458-356277a69675 name=/runtime.v1alpha2.RuntimeService/StopPodSandbox"#;
        let i = logfmt(s, &ctx).unwrap();
        assert_eq!(
            i.time.unwrap().to_string(),
            "2021-06-29T15:14:10.292290977Z"
        );
        assert_eq!(i.msg, "Stopping pod sandbox: 5b45");
        assert_eq!(
            i.fields[1].value.as_str(),
            "/runtime.v1alpha2.RuntimeService/StopPodSandbox"
        );
        // case 21: unescaped inner quotes
        let s = r#"time="2019-10-02T23:27:34.439359450Z" level=error msg="StopPodSandbox for "cae5" failed" error="failed to destroy network for sandbox "cae5": del cmd: failed to process delete request""#;
        let i = logfmt(s, &ctx).unwrap();
        assert_eq!(i.msg, r#"StopPodSandbox for "cae5" failed"#);
        assert_eq!(
            i.fields[0].value.as_str(),
            r#"failed to destroy network for sandbox "cae5": del cmd: failed to process delete request"#
        );
        assert!(!i.truncated);
        // case 04 last line: cut inside msg
        let s = r#"time="2025-03-14T15:35:04.341715109+08:00" level=error msg="ContainerStatus for \"4b31f1c4af5594effb2cf9"#;
        let i = logfmt(s, &ctx).unwrap();
        assert!(i.truncated);
        assert_eq!(i.msg, r#"ContainerStatus for "4b31f1c4af5594effb2cf9"#);
    }
}
