//! Low-level text helpers shared by the log-line parsers: scanning and unescaping Go and JSON
//! quoted strings (including the broken, unescaped quoting seen in some pasted containerd
//! lines), and byte-class checks.
//!
//! Every position these helpers return is the index of an ASCII byte or the end of the input,
//! so slicing a `&str` at it never panics.

use std::borrow::Cow;

/// A double-quoted value found by [`scan_quoted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quoted<'a> {
    /// The text between the quotes, still escaped.
    pub inner: &'a str,
    /// Index just past the closing quote, or the input length when the value is unterminated.
    pub end: usize,
    /// Whether a closing quote was found (false: the line was cut inside the value).
    pub closed: bool,
    /// Whether `inner` contains a backslash (so [`unescape`] has work to do).
    pub escaped: bool,
}

/// How a quote inside a quoted value is judged to be the closing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QuoteMode {
    /// The first unescaped `"` closes the value (Go `strconv.Quote`, JSON).
    Strict,
    /// An unescaped `"` closes the value only when followed by the end of the text or by
    /// whitespace and then the end or a `key=` token. Any other `"` is taken literally. This
    /// recovers containerd lines pasted with their inner quotes unescaped
    /// (`msg="StopPodSandbox for "cae5…""`, case 21) and is identical to `Strict` on well-formed
    /// logfmt.
    Lenient,
}

/// Scans a double-quoted value whose opening quote is at `s[start]`.
///
/// Backslash escapes are skipped (a `\"` never closes the value). When the text ends first the
/// result is unterminated (`closed == false`) and `inner` runs to the end of `s`.
pub(crate) fn scan_quoted(s: &str, start: usize, mode: QuoteMode) -> Quoted<'_> {
    debug_assert_eq!(s.as_bytes().get(start), Some(&b'"'));
    let b = s.as_bytes();
    let body = start + 1;
    let mut i = body;
    let mut escaped = false;
    while let Some(off) = memchr::memchr2(b'"', b'\\', &b[i.min(b.len())..]) {
        let j = i + off;
        if b[j] == b'\\' {
            escaped = true;
            // Skip the escaped byte; an escaped multi-byte char is impossible (escapes are ASCII),
            // and a backslash before a non-ASCII byte just skips to that char's next byte, which
            // memchr never returns as a match, so positions stay on boundaries.
            i = j + 2;
            if i > b.len() {
                break;
            }
            continue;
        }
        if mode == QuoteMode::Strict || closes_lenient(b, j + 1) {
            return Quoted {
                inner: &s[body..j],
                end: j + 1,
                closed: true,
                escaped,
            };
        }
        i = j + 1;
    }
    Quoted {
        inner: &s[body.min(s.len())..],
        end: s.len(),
        closed: false,
        escaped,
    }
}

/// Lenient-mode test: does the text after a candidate closing quote (at `after`) look like the
/// end of a logfmt value?
fn closes_lenient(b: &[u8], after: usize) -> bool {
    let mut i = after;
    if i >= b.len() {
        return true;
    }
    if !is_space(b[i]) {
        return false;
    }
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i >= b.len() {
        return true;
    }
    let key_start = i;
    while i < b.len() && is_key_byte(b[i]) {
        i += 1;
    }
    i > key_start && i < b.len() && b[i] == b'='
}

/// Whitespace between tokens: space, tab, or the newline that joins the physical lines of one
/// record.
#[inline]
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// Bytes allowed in a logfmt or klog key (`podSandboxID`, `io.kubernetes.pod.uid`, `__CURSOR`).
#[inline]
pub(crate) fn is_key_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'/')
}

/// Removes Go / JSON backslash escapes from the inside of a quoted string.
///
/// Handles `\" \\ \/ \a \b \f \n \r \t \v`, `\xHH`, octal `\NNN`, `\uHHHH` (with JSON surrogate
/// pairs) and `\UHHHHHHHH`. Invalid or cut escapes are kept literally, a dangling final backslash
/// (a line cut right after it) is dropped, and bytes that do not form UTF-8 become U+FFFD.
/// Borrows when there is nothing to unescape.
pub(crate) fn unescape(inner: &str) -> Cow<'_, str> {
    let b = inner.as_bytes();
    let Some(first) = memchr::memchr(b'\\', b) else {
        return Cow::Borrowed(inner);
    };
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    out.extend_from_slice(&b[..first]);
    let mut i = first;
    while i < b.len() {
        let c = b[i];
        if c != b'\\' {
            // Copy up to the next backslash in one go.
            let next = memchr::memchr(b'\\', &b[i..]).map_or(b.len(), |o| i + o);
            out.extend_from_slice(&b[i..next]);
            i = next;
            continue;
        }
        let Some(&e) = b.get(i + 1) else {
            // Dangling backslash at a cut: drop it.
            break;
        };
        i += 2;
        match e {
            b'"' | b'\\' | b'/' | b'\'' => out.push(e),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'v' => out.push(0x0b),
            b'x' => match hex_value(b, i, 2) {
                Some(v) => {
                    out.push(v as u8);
                    i += 2;
                }
                None => out.extend_from_slice(b"\\x"),
            },
            b'0'..=b'7' => {
                // Go octal escape: exactly three digits.
                let digits = b.get(i - 1..i + 2);
                match digits {
                    Some(d) if d.iter().all(|c| (b'0'..=b'7').contains(c)) => {
                        let v = u32::from(d[0] - b'0') * 64
                            + u32::from(d[1] - b'0') * 8
                            + u32::from(d[2] - b'0');
                        out.push((v & 0xff) as u8);
                        i += 2;
                    }
                    _ => {
                        out.push(b'\\');
                        out.push(e);
                    }
                }
            }
            b'u' => match hex_value(b, i, 4) {
                Some(hi) => {
                    i += 4;
                    let mut cp = hi;
                    if (0xD800..0xDC00).contains(&hi)
                        && b.get(i) == Some(&b'\\')
                        && b.get(i + 1) == Some(&b'u')
                        && let Some(lo) = hex_value(b, i + 2, 4)
                        && (0xDC00..0xE000).contains(&lo)
                    {
                        cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        i += 6;
                    }
                    push_char(&mut out, cp);
                }
                None => out.extend_from_slice(b"\\u"),
            },
            b'U' => match hex_value(b, i, 8) {
                Some(cp) => {
                    i += 8;
                    push_char(&mut out, cp);
                }
                None => out.extend_from_slice(b"\\U"),
            },
            _ => {
                // Unknown escape: keep it as written.
                out.push(b'\\');
                out.push(e);
            }
        }
    }
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

fn push_char(out: &mut Vec<u8>, cp: u32) {
    let c = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

fn hex_value(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let digits = b.get(at..at + n)?;
    let mut v: u32 = 0;
    for &d in digits {
        v = v * 16 + (d as char).to_digit(16)?;
    }
    Some(v)
}

/// A literal searched for often, with its SIMD searcher built on first use and kept for the
/// life of the process (use it from a `static`, see [`contains!`](crate::logs::text::contains)).
pub(crate) struct Phrase {
    text: &'static str,
    finder: std::sync::OnceLock<memchr::memmem::Finder<'static>>,
}

impl Phrase {
    pub(crate) const fn new(text: &'static str) -> Self {
        Phrase {
            text,
            finder: std::sync::OnceLock::new(),
        }
    }

    /// Whether `hay` contains the phrase.
    #[inline]
    pub(crate) fn is_in(&self, hay: &str) -> bool {
        self.finder
            .get_or_init(|| memchr::memmem::Finder::new(self.text))
            .find(hay.as_bytes())
            .is_some()
    }
}

/// `contains!(hay, "literal")`: whether `hay` contains the literal, with the searcher built once
/// per call site instead of on every call.
macro_rules! contains {
    ($hay:expr, $lit:literal) => {{
        static PHRASE: $crate::logs::text::Phrase = $crate::logs::text::Phrase::new($lit);
        PHRASE.is_in($hay)
    }};
}
pub(crate) use contains;

/// Parses an unsigned decimal number made only of ASCII digits; `None` on anything else or on
/// overflow.
pub(crate) fn parse_u32(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 10 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Trims trailing whitespace (spaces, tabs, CR, LF) from a record.
pub(crate) fn trim_end(s: &str) -> &str {
    s.trim_end_matches([' ', '\t', '\r', '\n'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_quoted_table() {
        // (input, mode, inner, closed, end)
        let cases: &[(&str, QuoteMode, &str, bool, usize)] = &[
            (r#""abc" x=1"#, QuoteMode::Strict, "abc", true, 5),
            (r#""a\"b" x"#, QuoteMode::Strict, r#"a\"b"#, true, 6),
            (
                r#""cut \"here"#,
                QuoteMode::Strict,
                r#"cut \"here"#,
                false,
                11,
            ),
            (
                r#""ends with \"#,
                QuoteMode::Strict,
                r#"ends with \"#,
                false,
                12,
            ),
            // Case 21: containerd msg with unescaped inner quotes.
            (
                r#""StopPodSandbox for "cae5"" level=x"#,
                QuoteMode::Lenient,
                r#"StopPodSandbox for "cae5""#,
                true,
                27,
            ),
            (
                r#""StopPodSandbox for "cae5" failed" error="x""#,
                QuoteMode::Lenient,
                r#"StopPodSandbox for "cae5" failed"#,
                true,
                34,
            ),
            (r#""a" b c"#, QuoteMode::Lenient, r#"a" b c"#, false, 7),
            (r#""a"  "#, QuoteMode::Lenient, "a", true, 3),
        ];
        for &(input, mode, inner, closed, end) in cases {
            let q = scan_quoted(input, 0, mode);
            assert_eq!((q.inner, q.closed, q.end), (inner, closed, end), "{input}");
        }
    }

    #[test]
    fn unescape_table() {
        let cases: &[(&str, &str)] = &[
            ("plain", "plain"),
            (r#"a \"b\" c"#, r#"a "b" c"#),
            (r"x\\y", r"x\y"),
            (r"line\nnext\ttab", "line\nnext\ttab"),
            (r"\u00e9\u263a", "é☺"),
            (r"\ud83d\ude00", "😀"),
            (r"\x41\101", "AA"),
            (r"\xff", "\u{fffd}"),
            (r"cut\", "cut"),
            (r"bad\q", r"bad\q"),
            (r"\u12", r"\u12"),
            // Case 25: one pass leaves the next level of escaping in place.
            (
                r#"sandbox \\\"ff25\\\": plugin"#,
                r#"sandbox \"ff25\": plugin"#,
            ),
        ];
        for &(input, want) in cases {
            assert_eq!(unescape(input), want, "{input}");
        }
        assert!(matches!(unescape("no escapes"), Cow::Borrowed(_)));
    }
}
