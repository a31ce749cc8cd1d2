//! Prefixes before a record: what a paste, a grep or a wrapper puts in front of the line a
//! component wrote, so that the record does not start at column 0.
//!
//! Shapes seen in real pastes and bundles, all read the same way (find where a record of a
//! known shape starts, see [`candidates`]):
//! - Markdown indentation (`    I0613 …`, 3 or 4 spaces or a tab) and quotes (`> `, `> > `);
//! - `grep -n` (`2149: Jan 27 …`, `2149-` for context lines, `2149:\t…`) and grep over several
//!   files (`kubelet.err.log:123:E0613 …`, `C:\var\log\kubelet.log:12:…`);
//! - wrappers: Docker Desktop's `[2023-01-10T14:00:14.373845500Z][kubelet][I] I0110 …`,
//!   talosctl's `10.0.0.8: {"ts":…}` (also read as a [`Tag`](super::EnvelopeKind::Tag)),
//!   a cloud logging text export's `2023-06-01T10:00:00.000Z\tnode-a\t…` columns;
//! - a log viewer's time glued to klog's header (Rancher's `4/28/2016 9:31:27 AME0428 …`).
//!
//! A prefix is at most [`MAX_PREFIX_BYTES`] long, has at most [`MAX_PREFIX_WORDS`]
//! whitespace-separated words and no `=`, so a hard-wrapped continuation that happens to hold
//! a record's text in its middle (`… desc = time="…" level=error …`) is not taken for a record.
//!
//! [`Shape`] is a prefix remembered per source: [`LineAssembler`](super::LineAssembler) strips
//! it from the lines that continue a record (`2150-\tline two`, `> rvice/memory…`), so the
//! prefix is detected once per record and confirmed on every line.

/// How far into a line a record may start: 512 bytes.
pub(crate) const MAX_PREFIX_BYTES: usize = 512;
/// How many whitespace-separated words a prefix may have: 4.
pub(crate) const MAX_PREFIX_WORDS: usize = 4;

/// Positions where a record may start after a prefix, in order: `i > 0` such that the byte
/// before is a separator (space, tab, `:`, `]`, `>`, `|`, `,`, or a `"` that opens a CSV
/// field) or a klog header starts at `i` right after a letter or digit (a log viewer's
/// `… 9:31:27 AM` glued to `E0428 16:31:27…`), the byte at `i` is not whitespace, and `s[..i]`
/// is a possible prefix (see the module docs).
pub(crate) fn candidates(s: &str) -> impl Iterator<Item = usize> + '_ {
    let b = s.as_bytes();
    let limit = b.len().min(MAX_PREFIX_BYTES);
    let mut words = 0usize;
    let mut in_word = false;
    // Ends at a `key=` or at the word past the last a prefix may have.
    (1..limit)
        .map_while(move |i| {
            let prev = b[i - 1];
            match prev {
                b' ' | b'\t' => in_word = false,
                b'=' => return None,
                _ => {
                    if !in_word {
                        words += 1;
                        in_word = true;
                    }
                }
            }
            if words > MAX_PREFIX_WORDS {
                return None;
            }
            let sep = match prev {
                b' ' | b'\t' | b':' | b']' | b'>' | b'|' | b',' => true,
                // `"E0601 …` as a CSV field: after `,"`, `\t"` or at the start.
                b'"' => i == 1 || matches!(b[i - 2], b',' | b'\t'),
                // A klog header glued to a viewer's time (`4/28/2016 9:31:27 AME0428 16:31:27…`).
                c if c.is_ascii_alphanumeric() => klog_header_at(b, i),
                _ => false,
            };
            Some((sep && !matches!(b[i], b' ' | b'\t') && s.is_char_boundary(i)).then_some(i))
        })
        .flatten()
}

/// Whether `b[i..]` opens like a klog header: a severity letter, `MMDD` and a space
/// (`E0428 `), so that a header glued to the word before it is found as well.
fn klog_header_at(b: &[u8], i: usize) -> bool {
    b.len() > i + 5
        && matches!(b[i], b'I' | b'W' | b'E' | b'F')
        && b[i + 1..i + 5].iter().all(u8::is_ascii_digit)
        && b[i + 5] == b' '
}

/// grep's separators: `:` on matching lines, `-` on context lines.
fn is_grep_sep(c: u8) -> bool {
    c == b':' || c == b'-'
}

/// A prefix remembered from a record's first line, to be found again on its continuation
/// lines: the same bytes, except that a run of digits matches any run of digits and `:` and
/// `-` match either (`2149: ` matches `2150- `, `kubelet.log:12:` matches
/// `kubelet.log-13-`, Docker Desktop's `[…14.373845500Z]` matches any time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    text: String,
}

impl Shape {
    /// Remembers `prefix` (empty: no prefix).
    pub(crate) fn set(&mut self, prefix: &str) {
        self.text.clear();
        self.text.push_str(prefix);
    }

    /// The length of the prefix of `line` that has this shape. A line that is the prefix
    /// without its trailing whitespace (`>` for `> `, a quoted blank line) matches in full.
    pub(crate) fn strip(&self, line: &str) -> Option<usize> {
        let p = self.text.as_bytes();
        let l = line.as_bytes();
        if p.is_empty() {
            return None;
        }
        let (mut i, mut j) = (0, 0);
        while i < p.len() {
            if p[i].is_ascii_digit() {
                if !l.get(j).is_some_and(u8::is_ascii_digit) {
                    return None;
                }
                while i < p.len() && p[i].is_ascii_digit() {
                    i += 1;
                }
                while j < l.len() && l[j].is_ascii_digit() {
                    j += 1;
                }
                if i < p.len() && matches!(p[i], b':' | b'-') {
                    if !matches!(l.get(j), Some(b':' | b'-')) {
                        return None;
                    }
                    i += 1;
                    j += 1;
                }
                continue;
            }
            match l.get(j) {
                Some(&c) if c == p[i] || (is_grep_sep(c) && is_grep_sep(p[i])) => {
                    i += 1;
                    j += 1;
                }
                None if p[i..].iter().all(|&c| c == b' ' || c == b'\t') => return Some(j),
                _ => return None,
            }
        }
        line.is_char_boundary(j).then_some(j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands(s: &str) -> Vec<&str> {
        candidates(s).map(|i| &s[i..]).collect()
    }

    #[test]
    fn candidates_follow_separators() {
        assert_eq!(cands("2149: Jan"), ["Jan"]);
        assert_eq!(cands("> > I0"), ["> I0", "I0"]);
        assert_eq!(cands("k.log:12:E0"), ["12:E0", "E0"]);
        assert_eq!(
            cands("[t][kubelet][I] I0"),
            ["[kubelet][I] I0", "[I] I0", "I0"]
        );
        assert_eq!(cands("a,\"E0"), ["\"E0", "E0"]);
        assert_eq!(
            cands("9:31 AME0428 1"),
            ["31 AME0428 1", "AME0428 1", "E0428 1", "1"]
        );
        assert_eq!(cands("AMEN0428 1"), ["1"]);
        // Too many words, or a `key=`: a message, not a prefix.
        assert_eq!(
            cands("one two three four five six"),
            [
                "two three four five six",
                "three four five six",
                "four five six",
                "five six"
            ]
        );
        assert!(cands("pod=\"x\" time=").is_empty());
        assert!(cands("say \"E0").iter().all(|c| !c.starts_with('E')));
    }

    #[test]
    fn shape_matches_the_same_kind_of_prefix() {
        let mut s = Shape::default();
        assert_eq!(s.strip("x"), None);
        s.set("2149: ");
        assert_eq!(s.strip("2150- \tline"), Some(6));
        assert_eq!(s.strip("21500: x"), Some(7));
        assert_eq!(s.strip("x2150: "), None);
        s.set("kubelet.err.log:123:");
        assert_eq!(s.strip("kubelet.err.log-124-rvice"), Some(20));
        assert_eq!(s.strip("kubelet.log:124:x"), None);
        s.set("> ");
        assert_eq!(s.strip("> \tline"), Some(2));
        assert_eq!(s.strip(">"), Some(1));
        assert_eq!(s.strip("rvice"), None);
        s.set("    ");
        assert_eq!(s.strip("    rvice"), Some(4));
        assert_eq!(s.strip("  rvice"), None);
        s.set("[2023-01-10T14:00:14.373845500Z][kubelet][I] ");
        assert_eq!(
            s.strip("[2023-01-10T14:00:15.1Z][kubelet][I] \tx"),
            Some(37)
        );
    }
}

#[cfg(test)]
mod parse_tests {
    //! Records after every kind of prefix, through the assembler and the parser.
    use crate::logs::{Format, LineAssembler, ParseContext, parse};

    /// (input lines, per record: format, message, a field to check)
    fn records(input: &str) -> Vec<(Format, String, Option<String>, u32)> {
        let mut ctx = ParseContext::new(2025);
        let mut asm = LineAssembler::new();
        let mut out = Vec::new();
        let mut take = |text: &str, lines: u32, ctx: &mut ParseContext| {
            let p = parse(text, ctx);
            let err = p.field("err").map(str::to_owned);
            out.push((p.format, p.msg.into_owned(), err, lines));
        };
        for line in input.split('\n') {
            if let Some(r) = asm.push(line) {
                let (text, lines) = (r.text.to_owned(), r.lines);
                take(&text, lines, &mut ctx);
            }
        }
        if let Some(r) = asm.finish() {
            let (text, lines) = (r.text.to_owned(), r.lines);
            take(&text, lines, &mut ctx);
        }
        out
    }

    const KLOG: &str =
        r#"E0613 10:15:42.123456    1234 pod_workers.go:1] "Error syncing pod, skipping" err=<"#;

    #[test]
    fn every_prefix_reads_the_record_and_its_continuations() {
        for (prefix, cont) in [
            ("    ", "    "),
            ("   ", "   "),
            ("\t", "\t"),
            ("> ", "> "),
            ("> > ", "> > "),
            ("2149: ", "2150- "),
            ("2149:\t", "2150-\t"),
            ("kubelet.err.log:123:", "kubelet.err.log-124-"),
            (r"C:\var\log\kubelet.log:12:", r"C:\var\log\kubelet.log-13-"),
            (
                "[2023-01-10T14:00:14.373845500Z][kubelet][I] ",
                "[2023-01-10T14:00:14.4Z][kubelet][I] ",
            ),
            (
                "2023-06-01T10:00:00.000Z\tnode-a\tkubelet\t",
                "2023-06-01T10:00:00.000Z\tnode-a\tkubelet\t",
            ),
        ] {
            let input = format!(
                "{prefix}{KLOG}\n{cont}\tline one\n{cont}\tline two\n{cont} > pod=\"a/b\"\n{prefix}I0613 10:15:43.000000    1234 kubelet.go:1] \"SyncLoop REMOVE\" source=\"api\" pods=[a/b]"
            );
            let got = records(&input);
            assert_eq!(got.len(), 2, "{prefix:?}: {got:?}");
            assert_eq!(got[0].0, Format::KlogStructured, "{prefix:?}");
            assert_eq!(got[0].1, "Error syncing pod, skipping", "{prefix:?}");
            assert_eq!(
                got[0].2.as_deref(),
                Some("line one\nline two"),
                "{prefix:?}"
            );
            assert_eq!(got[0].3, 4, "{prefix:?}");
            assert_eq!(got[1].1, "SyncLoop REMOVE", "{prefix:?}");
        }
    }

    #[test]
    fn a_prefixed_hard_wrap_joins_without_its_prefix() {
        let got = records(
            "> E0102 06:48:09.771347  250135 container.go:507] Failed to update stats for container \"/system.slice/systemd-journald.se\n> rvice\": no such device\n>\n> ```",
        );
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got[0].1,
            "Failed to update stats for container \"/system.slice/systemd-journald.service\": no such device"
        );
        assert_eq!(got[0].3, 2);
        assert_eq!(got[1].0, Format::Unparsed);
    }

    #[test]
    fn syslog_grep_and_wrappers() {
        let mut ctx = ParseContext::new(2022);
        for line in [
            "2149: Jan 27 07:57:19 node-a kubelet[2050782]: I0127 07:57:19.209667 2050782 pod_workers.go:566] \"Pod is being synced for the first time\" pod=\"default/x\"",
            "kubelet.log:2149:Jan 27 07:57:19 node-a kubelet[2050782]: I0127 07:57:19.209667 2050782 pod_workers.go:566] \"Pod is being synced for the first time\" pod=\"default/x\"",
            "10.0.0.8: {\"ts\":1757010309253.551,\"caller\":\"kubelet/kubelet.go:1\",\"msg\":\"Pod is being synced for the first time\",\"pod\":{\"name\":\"x\",\"namespace\":\"default\"}}",
            "{\"log\":\"I0127 07:57:19.209667 2050782 pod_workers.go:566] \\\"Pod is being synced for the first time\\\" pod=\\\"default/x\\\"\\n\",\"stream\":\"stderr\",\"time\":\"2022-01-27T07:57:19.2Z\"}",
            "{\"insertId\":\"1\",\"jsonPayload\":{\"MESSAGE\":\"I0127 07:57:19.209667 2050782 pod_workers.go:566] \\\"Pod is being synced for the first time\\\" pod=\\\"default/x\\\"\",\"_SYSTEMD_UNIT\":\"kubelet.service\"},\"timestamp\":\"2022-01-27T07:57:19.2Z\",\"logName\":\"projects/p/logs/kubelet\"}",
            "{\"textPayload\":\"I0127 07:57:19.209667 2050782 pod_workers.go:566] \\\"Pod is being synced for the first time\\\" pod=\\\"default/x\\\"\",\"resource\":{\"labels\":{\"file\":\"C:\\\\var\\\\log\\\\kubelet.log\"}},\"timestamp\":\"2022-01-27T07:57:19.2Z\"}",
        ] {
            let p = parse(line, &mut ctx);
            assert!(p.is_parsed(), "{line}");
            assert_eq!(p.msg, "Pod is being synced for the first time", "{line}");
            assert!(p.time.is_some(), "{line}");
        }
        // Not records: a sentence that mentions a klog letter, markup.
        for line in [
            "see E0613 for details",
            "one two three four five I0127 07:57:19.209667 2050782 pod_workers.go:566] x",
            "desc = time=\"2023-01-20T13:26:08Z\" level=error msg=\"x\"",
        ] {
            assert!(!parse(line, &mut ctx).is_parsed(), "{line}");
        }
    }
}
