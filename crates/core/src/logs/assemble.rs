//! [`LineAssembler`]: joins the physical lines of one record before it is parsed.
//!
//! Two kinds of records span several lines:
//! - klog multi-line values (`err=<` newline, `\t`-indented lines, ` >`), written by the kubelet
//!   itself. Under journald each physical line gets its own syslog prefix, so a continuation may
//!   be `Jun 13 … kubelet[1]: \tline`; the prefix is dropped and the line is joined with `\n`.
//!   Go panics' tab-indented stack frames join the same way.
//! - hard wraps: a record cut into several lines by a terminal, pager or paste (cases 03, 09,
//!   30, 36). A line that starts no known shape is joined to the record before it with nothing in
//!   between, which restores a fixed-width wrap exactly; a wrap at a space that ate the space
//!   (case 09, `found,` / `but`) loses it. Words after a structured klog record that ended
//!   whole (its quotes closed) are not joined unless they go on its fields (`key=…`, a quote, a
//!   list's or struct's punctuation): a comment pasted after a line (`a b c`) is a record of its
//!   own, not understood, rather than text that spoils the record's fields.
//!
//! - CRI container log format partial lines (`<RFC 3339> stdout|stderr P <text>`): the runtime
//!   cut one line of the container's output at its buffer size; the text of the following lines
//!   of the same stream, up to the `F` line that ends it, is joined to it with nothing in
//!   between, so the record is the line the component wrote (a kubelet run in a container, as
//!   kind and k3d do, read from `/var/log/pods`). A CRI line never [`begins a
//!   record`](LineAssembler::begins_record): it may continue a `P` line before it.
//!
//! A line is never joined to a record that itself fits no shape, so tables and `ls` output stay
//! one record per line. Blank lines and lines that look like a shell prompt or a command echo
//! (first word ending in `$`, `#` or `>`: `user@node-a:~$ …`, `bash-5.1# …`, `# journalctl …`)
//! are never joined and never take continuations. Every physical line ends up in exactly one
//! record: nothing is dropped.

use super::parse::{prefixed_start, starts_record_scanned};
use super::prefix::Shape;
use super::shape::starts_inner;
use super::text::is_space;

/// Default for [`LineAssembler::with_max_record_bytes`]: 1 MiB.
pub const DEFAULT_MAX_RECORD_BYTES: usize = 1 << 20;

/// One record assembled from `lines` physical lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'s> {
    /// The record's text: its lines joined (see the module docs), without line terminators.
    pub text: &'s str,
    /// 1-based number of the record's first physical line.
    pub first_line: u64,
    /// How many physical lines were joined (at least 1).
    pub lines: u32,
}

/// What one physical line tells of where records begin ([`LineAssembler::cut_class`]). The
/// default, all false, is the class to take for a line not looked at: it ends no partial line,
/// so after it only a line that begins a record alone begins one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CutClass {
    /// It begins a record whatever came before it ([`LineAssembler::begins_record`]).
    pub begins: bool,
    /// A record it begins takes continuation lines ([`LineAssembler::opens_record`]).
    pub opens: bool,
    /// It is a header line and no CRI partial (`P`) line: after it no partial line is pending,
    /// so a header line after it begins a record.
    pub ends_partials: bool,
}

impl CutClass {
    /// Whether a line of this class begins a record after a line of class `prev`
    /// ([`LineAssembler::begins_record_after`]).
    pub fn begins_after(self, prev: CutClass) -> bool {
        self.begins || (self.opens && prev.ends_partials)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing pending (start of input, or after [`LineAssembler::finish`]).
    Empty,
    /// The pending record starts with a known shape and takes continuation lines.
    Open,
    /// The pending record takes no continuation lines.
    Sealed,
}

/// Joins physical lines into records; see the module docs for the rules.
///
/// Streaming and allocation-free in the steady state: each line is copied once into an
/// internal buffer, and a record is returned when the next record's first line arrives (or on
/// [`finish`](Self::finish)). Feed lines without their `\n` (a trailing `\r` is removed).
#[derive(Debug, Clone)]
pub struct LineAssembler {
    pending: String,
    out: String,
    state: State,
    pending_first: u64,
    pending_lines: u32,
    /// The bytes of the pending record's physical lines, each with its newline.
    pending_raw_bytes: usize,
    next_line: u64,
    max_record_bytes: usize,
    /// The prefix before the pending record (see [`prefix`](super::prefix)), stripped from
    /// its continuation lines.
    prefix: Shape,
    /// The pending record is a CRI log line whose last part was `P` (partial): the stream
    /// (`stdout`/`stderr`) whose next line continues it.
    cri_partial: Option<&'static str>,
    /// How far the pending record's quotes have been read ([`Quotes`]).
    quotes: Quotes,
    /// The pending record's last line opened a klog multi-line value (`key=<`) or went on one
    /// not yet closed (` >`): a line indented with spaces is a block line too (a paste that
    /// turned the block's tab into spaces).
    block_open: bool,
}

/// Whether a structured klog record (`…] "<message>" key=value …`) ends whole, read as the
/// record grows: each byte once, however many lines are joined to it.
#[derive(Debug, Clone, Copy, Default)]
struct Quotes {
    /// The bytes of the pending record read so far.
    read: usize,
    /// Its `] "` (the end of the klog header) was met: the quotes are counted from there.
    structured: bool,
    /// A quote is open.
    open: bool,
    /// The byte before was an escaping backslash.
    escaped: bool,
}

impl Quotes {
    /// Whether `record` (the pending record, grown since the last call) is a structured klog
    /// record whose quotes are all closed, so a wrap did not cut it inside a value.
    fn whole_structured(&mut self, record: &str) -> bool {
        if !self.structured {
            // From a little before where the last search ended: `] "` may straddle it.
            let from = self.read.saturating_sub(2);
            // Bytes, not `str`: `from` may fall inside a character.
            match record.as_bytes()[from..]
                .windows(3)
                .position(|w| w == b"] \"")
            {
                Some(at) => {
                    self.structured = true;
                    self.read = from + at + 2;
                }
                None => {
                    self.read = record.len();
                    return false;
                }
            }
        }
        for b in record.as_bytes()[self.read..].iter().copied() {
            match b {
                b'\\' if !self.escaped => {
                    self.escaped = true;
                    continue;
                }
                b'"' if !self.escaped => self.open = !self.open,
                _ => {}
            }
            self.escaped = false;
        }
        self.read = record.len();
        !self.open
    }
}

impl Default for LineAssembler {
    fn default() -> Self {
        Self::new()
    }
}

impl LineAssembler {
    /// An assembler that caps joined records at [`DEFAULT_MAX_RECORD_BYTES`].
    pub fn new() -> Self {
        Self::with_max_record_bytes(DEFAULT_MAX_RECORD_BYTES)
    }

    /// An assembler that stops joining once a record's physical lines, each with its newline,
    /// hold `max` bytes; a continuation line that would pass the cap becomes a record of its
    /// own. The cap counts the lines as read, not the record's joined text, so a line with no
    /// line that [opens a record](Self::opens_record) in the `max` bytes before it begins one,
    /// whatever came before.
    pub fn with_max_record_bytes(max: usize) -> Self {
        LineAssembler {
            pending: String::new(),
            out: String::new(),
            state: State::Empty,
            pending_first: 0,
            pending_lines: 0,
            pending_raw_bytes: 0,
            next_line: 1,
            max_record_bytes: max,
            prefix: Shape::default(),
            cri_partial: None,
            quotes: Quotes::default(),
            block_open: false,
        }
    }

    /// Whether `line` starts a new record whatever came before it (a line that starts a known
    /// shape, a blank line, a prompt): [`push`](Self::push) then returns the pending record
    /// first, so an input cut just before such a line can be assembled in two parts, each
    /// with a fresh assembler, with the same records (line numbers aside).
    pub fn begins_record(line: &str) -> bool {
        Self::cut_class(line).begins
    }

    /// Whether a record that `line` begins takes continuation lines: a line that starts a known
    /// shape (a CRI line among them). A line with no such line in the
    /// [cap](Self::with_max_record_bytes)'s bytes before it begins a record.
    pub fn opens_record(line: &str) -> bool {
        Self::cut_class(line).opens
    }

    /// Whether `line` starts a new record after the physical line `prev`, whatever came before
    /// `prev`: when it [begins one](Self::begins_record) alone, and when it is a header line (a
    /// CRI line among them) after a header line that is no CRI partial (`P`) line, so that no
    /// partial line is pending for `line` to continue. A log in the CRI format (a kubelet run
    /// in a container, read from `/var/log/pods`) can so be cut before most of its lines.
    pub fn begins_record_after(prev: &str, line: &str) -> bool {
        Self::cut_class(line).begins_after(Self::cut_class(prev))
    }

    /// What `line` tells of where records begin, for a reader that cuts a log before lines that
    /// begin one ([`begins_record`](Self::begins_record),
    /// [`begins_record_after`](Self::begins_record_after),
    /// [`opens_record`](Self::opens_record)), from one look at the line.
    pub fn cut_class(line: &str) -> CutClass {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match kind(line) {
            Kind::Header(at) => CutClass {
                begins: cri_line(&line[at..]).is_none(),
                opens: true,
                ends_partials: !line.contains(" stdout P ") && !line.contains(" stderr P "),
            },
            Kind::Stray => CutClass {
                begins: true,
                opens: false,
                ends_partials: false,
            },
            Kind::Block(_) | Kind::Wrapped(_) => CutClass::default(),
        }
    }

    /// Feeds the next physical line. Returns the previous record when this line starts a new
    /// one.
    pub fn push(&mut self, line: &str) -> Option<Record<'_>> {
        let raw_bytes = line.len() + 1;
        let under_cap = self.pending_raw_bytes + raw_bytes < self.max_record_bytes;
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line_no = self.next_line;
        self.next_line += 1;
        let mut kind = kind(line);
        if let Some(stream) = self.cri_partial {
            // The next part of a CRI `P` line: its text joins the record as it is.
            let at = self.prefix.strip(line).unwrap_or(0);
            if let Some(l) = cri_line(&line[at..])
                && l.stream == stream
                && under_cap
            {
                self.pending.push_str(&line[at + l.body..]);
                self.pending_lines += 1;
                self.pending_raw_bytes += raw_bytes;
                self.cri_partial = l.partial.then_some(stream);
                return None;
            }
        }
        if self.state == State::Open
            && self.block_open
            && matches!(kind, Kind::Header(_))
            && let Some(at) = spaced_block_line(line, &self.prefix)
        {
            kind = Kind::Block(at);
        }
        if self.state == State::Open {
            // A continuation line carries the record's prefix again (`2150-\tline`, `> rvice…`).
            if matches!(kind, Kind::Wrapped(_) | Kind::Block(_))
                && let Some(at) = self.prefix.strip(line)
            {
                kind = match continuation(&line[at..]) {
                    Some(Kind::Block(b)) => Kind::Block(at + b),
                    Some(_) => Kind::Wrapped(at),
                    None => Kind::Stray,
                };
            }
            if let Kind::Wrapped(at) = kind
                && self.block_open
                && line[at..].starts_with("  ")
            {
                kind = Kind::Block(at);
            }
            let join = match kind {
                Kind::Block(at) => Some(('\n', &line[at..])),
                // Words after a structured klog record that ended whole are no wrap of it: a
                // comment pasted after the line (`a b c`), which would spoil its fields.
                Kind::Wrapped(at)
                    if self.quotes.whole_structured(&self.pending)
                        && !continues_fields(&line[at..]) =>
                {
                    None
                }
                Kind::Wrapped(at) => Some(('\0', &line[at..])),
                Kind::Header(_) | Kind::Stray => None,
            };
            if let Some((sep, text)) = join
                && under_cap
            {
                self.block_open = opens_block(text)
                    || (self.block_open && sep == '\n' && !text.starts_with(" >"));
                if sep != '\0' {
                    self.pending.push(sep);
                }
                self.pending.push_str(text);
                self.pending_lines += 1;
                self.pending_raw_bytes += raw_bytes;
                return None;
            }
        }
        let had = self.state != State::Empty;
        std::mem::swap(&mut self.out, &mut self.pending);
        let (first, lines) = (self.pending_first, self.pending_lines);
        self.pending.clear();
        self.pending.push_str(line);
        self.pending_first = line_no;
        self.pending_lines = 1;
        self.pending_raw_bytes = raw_bytes;
        let (state, prefix) = match kind {
            Kind::Header(at) => (State::Open, &line[..at]),
            _ => (State::Sealed, ""),
        };
        self.cri_partial = match kind {
            Kind::Header(at) => cri_line(&line[at..])
                .filter(|l| l.partial)
                .map(|l| l.stream),
            _ => None,
        };
        self.state = state;
        self.block_open = state == State::Open && opens_block(line);
        self.quotes = Quotes::default();
        self.prefix.set(prefix);
        had.then_some(Record {
            text: &self.out,
            first_line: first,
            lines,
        })
    }

    /// Returns the last pending record, if any, at the end of the input.
    pub fn finish(&mut self) -> Option<Record<'_>> {
        if self.state == State::Empty {
            return None;
        }
        self.state = State::Empty;
        self.cri_partial = None;
        std::mem::swap(&mut self.out, &mut self.pending);
        self.pending.clear();
        Some(Record {
            text: &self.out,
            first_line: self.pending_first,
            lines: self.pending_lines,
        })
    }
}

/// A line of the CRI container log format: `<RFC 3339> stdout|stderr P|F <text>`
/// (kubelet `pkg/kubelet/kuberuntime/logs` `parseCRILog`: `P` is a partial line the runtime
/// cut, `F` a full one or the last part).
struct CriLine {
    stream: &'static str,
    partial: bool,
    /// Where the text starts.
    body: usize,
}

fn cri_line(line: &str) -> Option<CriLine> {
    let b = line.as_bytes();
    if !b.first()?.is_ascii_digit() {
        return None;
    }
    let t = super::time::rfc3339(b, 0, jiff::tz::Offset::UTC)?;
    let rest = b.get(t.end..)?;
    let stream = if rest.starts_with(b" stdout ") {
        "stdout"
    } else if rest.starts_with(b" stderr ") {
        "stderr"
    } else {
        return None;
    };
    let tag = t.end + 8;
    let partial = match b.get(tag..tag + 2)? {
        b"P " => true,
        b"F " => false,
        _ => return None,
    };
    Some(CriLine {
        stream,
        partial,
        body: tag + 2,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Starts a record of a known shape, after a prefix of the given length (0: none).
    Header(usize),
    /// A klog block line (or stack frame); its text starts at the index given (after any
    /// syslog prefix).
    Block(usize),
    /// Starts no known shape: a hard-wrapped continuation, whose text starts at the index
    /// given.
    Wrapped(usize),
    /// Blank, a shell prompt / command echo, or Markdown markup (a fence, a quoted blank line).
    Stray,
}

fn kind(line: &str) -> Kind {
    if line.bytes().all(is_space) {
        return Kind::Stray;
    }
    if is_block_line(line) {
        // A tab-indented paste of records (Markdown) is records, not klog block lines.
        if let Some(at) = indented_record(line) {
            return Kind::Header(at);
        }
        return Kind::Block(0);
    }
    if let Some(k) = at_column_0(line) {
        return k;
    }
    if is_prompt(line) || is_markup(line) {
        return Kind::Stray;
    }
    match prefixed_start(line) {
        Some(at) => match at_column_0(&line[at..]) {
            Some(Kind::Block(b)) => Kind::Block(at + b),
            _ => Kind::Header(at),
        },
        None => Kind::Wrapped(0),
    }
}

/// The kind of a line that starts a record at column 0, `None` when it does not.
fn at_column_0(line: &str) -> Option<Kind> {
    // One envelope scan answers both questions below.
    let envelope = super::envelope::scan(line);
    if !starts_record_scanned(line, envelope.is_some()) {
        return None;
    }
    // A bare `tag: ` before the record (`2149: `, `10.0.0.8: `) is a prefix its continuation
    // lines carry too.
    if envelope.is_none()
        && !starts_inner(line)
        && let Some((_, _, body)) = super::envelope::tag_prefix(line)
    {
        return Some(Kind::Header(body));
    }
    // A syslog-prefixed klog block line: `… kubelet[1]: \tline` or `… kubelet[1]:  >`.
    if let Some(at) = envelope.and_then(|s| s.body_start)
        && at < line.len()
        && is_block_line(&line[at..])
    {
        return Some(Kind::Block(at));
    }
    Some(Kind::Header(0))
}

/// Where the text of a line of an open klog block starts when its tab was turned into spaces
/// (a paste) behind the record's prefix or a syslog envelope (`… kubelet[1]:         rpc error:
/// …`): `None` for a line whose text is no indented one, or is a record.
fn spaced_block_line(line: &str, prefix: &Shape) -> Option<usize> {
    let at = prefix
        .strip(line)
        .or_else(|| super::envelope::scan(line).and_then(|s| s.body_start))?;
    let rest = line.get(at..)?;
    (rest.starts_with("  ") && at_column_0(rest.trim_start()).is_none()).then_some(at)
}

/// Whether a line ends by opening a klog multi-line value (`err=<`).
fn opens_block(line: &str) -> bool {
    line.trim_end().ends_with("=<")
}

/// Whether `line` can go on a structured record's fields after a wrap between them: it opens
/// with a `key=`, a quote, or the punctuation of a list or a struct.
fn continues_fields(line: &str) -> bool {
    let first = line.split(' ').next().unwrap_or("");
    first.contains('=') || first.starts_with(['"', '[', ']', '{', '}', ',', '\\'])
}

/// What a continuation line is once its record's prefix is stripped: a klog block line, text
/// (`Some(Wrapped)`), or `None` when nothing is left (a quoted blank line ends the record).
fn continuation(rest: &str) -> Option<Kind> {
    if rest.bytes().all(is_space) {
        return None;
    }
    if is_block_line(rest) {
        return Some(Kind::Block(0));
    }
    match at_column_0(rest) {
        Some(Kind::Block(b)) => Some(Kind::Block(b)),
        _ => Some(Kind::Wrapped(0)),
    }
}

/// A record after leading whitespace (`\tI0613 …`, a tab-indented paste).
fn indented_record(line: &str) -> Option<usize> {
    let at = line.len() - line.trim_start_matches([' ', '\t']).len();
    (at < line.len() && at_column_0(&line[at..]).is_some_and(|k| matches!(k, Kind::Header(_))))
        .then_some(at)
}

/// Markdown markup around a pasted log: a code fence (```` ``` ````, `~~~`, also quoted or
/// indented) or a quoted blank line (`>`, `> >`; an indented ` >` ends a klog block).
pub(crate) fn is_markup(line: &str) -> bool {
    let rest = line.trim_start_matches(['>', ' ', '\t']);
    (rest.is_empty() && line.starts_with('>')) || rest.starts_with("```") || rest.starts_with("~~~")
}

fn is_block_line(s: &str) -> bool {
    s.starts_with('\t') || s == " >" || s.starts_with(" > ")
}

/// A shell prompt or command echo: the first word ends in `$`, `#` or `>`
/// (`user@node-a:~>`, `bash-5.1#`, `#`, `$`; not a lone `>`, a Markdown quote), a
/// journalctl `-- ` meta line (indented too, as pasted), a glog or klog log file's header, or
/// the terminal's echo of a control key alone on its line (`^C`
/// ending a pasted `journalctl -f`, `^Z`, `^D`).
pub(crate) fn is_prompt(line: &str) -> bool {
    if is_command_echo(line) || is_log_file_header(line) {
        return true;
    }
    if line.trim_start_matches([' ', '\t']).starts_with("-- ")
        || matches!(line.trim(), "^C" | "^Z" | "^D" | "^\\")
    {
        return true;
    }
    let first = line.split([' ', '\t']).next().unwrap_or("");
    // A lone `>` is a Markdown quote, not a prompt.
    !first.is_empty() && first != ">" && first.ends_with(['$', '#', '>'])
}

/// The header glog and klog write at the top of each log file they create (klog `create`:
/// `Log file created at: 2020/05/03 13:38:35`, `Running on machine: w1`, `Binary: Built with
/// gc go1.13.9 for windows/amd64`, `Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid
/// file:line] msg`): the kubelet's `kubelet.INFO`, a Windows kubelet's log.
fn is_log_file_header(line: &str) -> bool {
    let line = line.trim_start_matches([' ', '\t']);
    [
        "Log file created at: ",
        "Running on machine: ",
        "Binary: Built with ",
        "Log line format: [IWEF]",
    ]
    .iter()
    .any(|h| line.starts_with(h))
}

/// A command that reads logs, pasted without its prompt above its output (`journalctl -u
/// kubelet | grep sandbox`, `sudo crictl logs …`, `kubectl logs -n …`): one of the commands a
/// log is read with, then an option, a path, a pipe or `logs`.
fn is_command_echo(line: &str) -> bool {
    const COMMANDS: &[&str] = &[
        "journalctl",
        "kubectl",
        "crictl",
        "grep",
        "egrep",
        "zgrep",
        "cat",
        "zcat",
        "tail",
        "less",
        "docker",
        "systemctl",
        "oc",
    ];
    let mut words = line.split_whitespace();
    let mut first = words.next().unwrap_or("");
    if first == "sudo" {
        first = words.next().unwrap_or("");
    }
    COMMANDS.contains(&first)
        && words
            .next()
            .is_some_and(|w| w.starts_with('-') || w.starts_with('/') || w == "|" || w == "logs")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assemble(input: &str) -> Vec<(String, u64, u32)> {
        let mut a = LineAssembler::new();
        let mut out = Vec::new();
        for line in input.split('\n') {
            if let Some(r) = a.push(line) {
                out.push((r.text.to_owned(), r.first_line, r.lines));
            }
        }
        if let Some(r) = a.finish() {
            out.push((r.text.to_owned(), r.first_line, r.lines));
        }
        out
    }

    #[test]
    fn a_klog_block_indented_with_spaces_joins_its_record() {
        // cilium/cilium#40345: journalctl's lines of a multi-line `err=<` value, pasted with the
        // block's tab turned into spaces.
        let p = "Jul 03 12:30:02 storage-04 kubelet[7748]: ";
        let input = format!(
            "{p}E0703 12:30:02.123456    7748 log.go:32] \"RunPodSandbox from runtime service failed\" err=<\n\
             {p}        rpc error: code = Unknown desc = failed to setup network\n\
             {p}        Is the agent running?\n\
             {p} >\n\
             {p}I0703 12:30:03.000000    7748 kubelet.go:1] \"next\""
        );
        let got = assemble(&input);
        assert_eq!(got.len(), 2, "{got:#?}");
        assert_eq!(
            got[0].0,
            format!(
                "{p}E0703 12:30:02.123456    7748 log.go:32] \"RunPodSandbox from runtime service failed\" err=<\n        rpc error: code = Unknown desc = failed to setup network\n        Is the agent running?\n >"
            )
        );
        // Bare klog, the same.
        let got = assemble(
            "E0703 12:30:02.123456    7748 log.go:32] \"RunPodSandbox from runtime service failed\" err=<\n    rpc error: x\n >\n    not a block line",
        );
        assert_eq!(got.len(), 2, "{got:#?}");
        assert_eq!(got[0].2, 3);
        assert!(
            got[0].0.ends_with("err=<\n    rpc error: x\n >"),
            "{got:#?}"
        );
        // After the block's end, spaces begin no block line.
        assert_eq!(got[1].0, "    not a block line");
    }

    #[test]
    fn words_after_a_whole_structured_record_are_no_wrap_of_it() {
        let record = r#"I1201 12:30:21.819561   21520 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["shop/web-0"]"#;
        // A comment pasted after the line: its own record (not understood, and said so).
        let got = assemble(&format!(
            "{record}
a b c"
        ));
        assert_eq!(
            got,
            vec![(record.to_string(), 1, 1), ("a b c".to_string(), 2, 1)]
        );
        // A wrap inside a quoted value, or between fields, is joined as before.
        let (head, tail) = record.split_at(record.len() - 9);
        assert_eq!(
            assemble(&format!(
                "{head}
{tail}"
            )),
            vec![(record.to_string(), 1, 2)]
        );
        let (head, tail) = record.split_at(record.find(" pods=").unwrap() + 1);
        assert_eq!(
            assemble(&format!(
                "{head}
{tail}"
            )),
            vec![(record.to_string(), 1, 2)]
        );
        // Wrapped again and again inside a value of two-byte characters (each join read once,
        // from inside a character): one record, and the words after it are not.
        let wide = r#"I1201 12:30:21.819561   21520 prober.go:1] "Probe failed" err="éééééééééé""#;
        let cut = wide.find('é').unwrap();
        let mut lines = vec![&wide[..cut + 2]];
        lines.extend((0..9).map(|k| &wide[cut + 2 + 2 * k..cut + 4 + 2 * k]));
        lines.push(&wide[cut + 20..]);
        assert_eq!(lines.concat(), wide);
        let n = lines.len() as u32;
        lines.push("a b c");
        assert_eq!(
            assemble(&lines.join("\n")),
            vec![
                (wide.to_string(), 1, n),
                ("a b c".to_string(), u64::from(n) + 1, 1)
            ]
        );
    }

    #[test]
    fn klog_block_is_joined_with_newlines() {
        let input = "E0613 10:15:42.123456    1234 pod_workers.go:1] \"Error syncing pod, skipping\" err=<\n\tline one\n\tline two\n > pod=\"a/b\"\nI0613 10:15:43.000000    1234 kubelet.go:1] next";
        let got = assemble(input);
        assert_eq!(got.len(), 2);
        assert_eq!(
            got[0].0,
            "E0613 10:15:42.123456    1234 pod_workers.go:1] \"Error syncing pod, skipping\" err=<\n\tline one\n\tline two\n > pod=\"a/b\""
        );
        assert_eq!((got[0].1, got[0].2), (1, 4));
        assert_eq!((got[1].1, got[1].2), (5, 1));
    }

    #[test]
    fn syslog_prefixed_block_lines_drop_their_prefix() {
        let input = "Jun 13 10:15:42 node-a kubelet[1234]: E0613 10:15:42.123456    1234 x.go:1] \"m\" err=<\nJun 13 10:15:42 node-a kubelet[1234]: \tline one\nJun 13 10:15:42 node-a kubelet[1234]:  >";
        let got = assemble(input);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].0,
            "Jun 13 10:15:42 node-a kubelet[1234]: E0613 10:15:42.123456    1234 x.go:1] \"m\" err=<\n\tline one\n >"
        );
    }

    #[test]
    fn hard_wraps_are_joined_without_separator() {
        // case 36
        let input = "Jan 02 06:51:37 node-a kubelet[250135]: W0102 06:48:09.771347  250135 container.go:507] Failed to update stats for container \"/system.slice/systemd-journald.service\": read /sys/fs/cgroup/memory/system.slice/systemd-journald.se\nrvice/memory.usage_in_bytes: no such device\nJan 02 06:51:43 node-a kubelet[250135]: E0102 06:43:18.110305  250135 remote_runtime.go:169] ListPodSandbox";
        let got = assemble(input);
        assert_eq!(got.len(), 2);
        assert!(
            got[0]
                .0
                .ends_with("systemd-journald.service/memory.usage_in_bytes: no such device")
        );
        assert_eq!(got[0].2, 2);
    }

    #[test]
    fn tables_prompts_and_blanks_stay_separate() {
        // case 03 (crictl) and case 28 (ls)
        let input = "user@node-a:~> sudo crictl pods -s NotReady | grep team-ns\nPOD ID              CREATED             STATE\n06f0eea7928b1       2 days ago          NotReady\nuser@node-a:~>\n\nbash-5.1# ls -alh /var/lib/cni/results\n-rw-------. 1 root root    0 Feb 24 04:43 aws-cni-ace3-eth0";
        let got = assemble(input);
        assert_eq!(got.len(), 7);
        assert!(got.iter().all(|r| r.2 == 1));
    }

    #[test]
    fn a_prompt_after_a_record_is_not_joined() {
        // case 03: containerd.log
        let input = "Jan 20 13:26:08 node-a containerd[128848]: time=\"2023-01-20T13:26:08.948042485+01:00\" level=warning msg=\"cleaning up after shim disconnected\"\nuser@node-a:~>";
        let got = assemble(input);
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn crlf_is_dropped() {
        let got = assemble("I0613 10:15:42.123456 1 a.go:1] x\r\n\tblock\r");
        assert_eq!(
            got,
            vec![(
                "I0613 10:15:42.123456 1 a.go:1] x\n\tblock".to_owned(),
                1,
                2
            )]
        );
    }

    /// Cuts `input` before every line that `begins(previous line, line)` says begins a record,
    /// checks that its two parts, each assembled alone, give the records of the whole, and
    /// returns the 1-based numbers of the lines cut before.
    fn cuts_assemble_the_same(input: &str, begins: impl Fn(&str, &str) -> bool) -> Vec<usize> {
        let lines: Vec<&str> = input.split('\n').collect();
        let whole = assemble(input);
        let mut cuts = Vec::new();
        for at in 1..lines.len() {
            if !begins(lines[at - 1], lines[at]) {
                continue;
            }
            cuts.push(at + 1);
            let mut parts = assemble(&lines[..at].join("\n"));
            parts.extend(
                assemble(&lines[at..].join("\n"))
                    .into_iter()
                    .map(|(text, first, n)| (text, first + at as u64, n)),
            );
            assert_eq!(parts, whole, "cut before line {}", at + 1);
        }
        cuts
    }

    #[test]
    fn a_cut_before_a_record_start_assembles_the_same() {
        // Blocks, syslog blocks, hard wraps, prompts, tables and blank lines (cases 03, 28, 36).
        let input = "E0613 10:15:42.123456    1234 pod_workers.go:1] \"Error syncing pod, skipping\" err=<\n\tline one\n > pod=\"a/b\"\nJun 13 10:15:42 node-a kubelet[1234]: E0613 10:15:42.123456 1 x.go:1] \"m\" err=<\nJun 13 10:15:42 node-a kubelet[1234]: \tline one\nJan 02 06:51:37 node-a kubelet[250135]: W0102 06:48:09.771347  250135 container.go:507] Failed to update stats for container \"/system.slice/systemd-journald.se\nrvice/memory.usage_in_bytes: no such device\nuser@node-a:~> sudo crictl pods\nPOD ID              CREATED\n\n06f0eea7928b1       2 days ago\nI0613 10:15:43.000000    1234 kubelet.go:1] next\r";
        let cuts = cuts_assemble_the_same(input, |_, line| LineAssembler::begins_record(line));
        assert_eq!(cuts.len(), 5);
        assert!(!LineAssembler::begins_record("\tline one"));
        assert!(!LineAssembler::begins_record(
            "rvice/memory.usage_in_bytes: no such device"
        ));
        assert!(LineAssembler::begins_record(""));
    }

    #[test]
    fn cri_partial_lines_are_joined_with_their_final_part() {
        // The CRI container log format: `P` parts of one line, then its `F` part; an `F` line
        // alone is a record; another stream's line does not continue a `P` line.
        let input = "2024-05-01T10:00:00.1Z stderr P E0501 10:00:00.123456    1234 remote_runtime.go:205] \"StopPodSandbox from runtime service failed\" err=\"rpc error: code = DeadlineExceeded desc = context\n\
                     2024-05-01T10:00:00.2Z stderr P  deadline\n\
                     2024-05-01T10:00:00.3Z stderr F  exceeded\" podSandboxID=\"b25b1fe9f0ea\"\n\
                     2024-05-01T10:00:01Z stdout F I0501 10:00:01.000000    1234 kubelet.go:1] next\n\
                     2024-05-01T10:00:02Z stderr P E0501 10:00:02.000000    1234 a.go:1] cut\n\
                     2024-05-01T10:00:02Z stdout F I0501 10:00:02.000000    1234 b.go:1] other stream";
        let got = assemble(input);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(
            got[0].0,
            "2024-05-01T10:00:00.1Z stderr P E0501 10:00:00.123456    1234 remote_runtime.go:205] \"StopPodSandbox from runtime service failed\" err=\"rpc error: code = DeadlineExceeded desc = context deadline exceeded\" podSandboxID=\"b25b1fe9f0ea\""
        );
        assert_eq!((got[0].1, got[0].2), (1, 3));
        assert_eq!((got[1].1, got[1].2), (4, 1));
        assert_eq!((got[2].1, got[2].2), (5, 1));
        assert_eq!((got[3].1, got[3].2), (6, 1));
        // A CRI line may continue the one before it: no cut there.
        assert!(!LineAssembler::begins_record(
            "2024-05-01T10:00:00.3Z stderr F  exceeded\""
        ));
        assert!(!LineAssembler::begins_record(
            "12:2024-05-01T10:00:00.3Z stderr F I0501 10:00:01.000000    1234 kubelet.go:1] x"
        ));
    }

    #[test]
    fn a_cut_before_a_cri_line_after_a_final_line_assembles_the_same() {
        // `P` parts, an `F` part, another stream's line, a wrap inside a pending `P` line, a
        // prefix, and lines of no shape.
        let input = "2024-05-01T10:00:00.1Z stderr P E0501 10:00:00.123456    1234 a.go:1] \"m\" err=\"context\n\
                     2024-05-01T10:00:00.2Z stderr P  deadline\n\
                     2024-05-01T10:00:00.3Z stderr F  exceeded\"\n\
                     2024-05-01T10:00:01Z stdout F I0501 10:00:01.000000    1234 kubelet.go:1] next\n\
                     2024-05-01T10:00:02Z stderr P E0501 10:00:02.000000    1234 a.go:1] cut\n\
                     2024-05-01T10:00:02Z stdout F I0501 10:00:02.000000    1234 b.go:1] other stream\n\
                     2024-05-01T10:00:03Z stderr F  the end of the cut line\n\
                     2024-05-01T10:00:04Z stdout P I0501 10:00:04.000000    1234 b.go:1] wrapped\n\
                     rvice\n\
                     2024-05-01T10:00:05Z stdout F  its end\n\
                     12:2024-05-01T10:00:06Z stdout F I0501 10:00:06.000000    1234 b.go:1] prefixed\n\
                     12:2024-05-01T10:00:07Z stdout F I0501 10:00:07.000000    1234 b.go:1] prefixed\n\
                     no shape\n\
                     2024-05-01T10:00:08Z stdout F I0501 10:00:08.000000    1234 b.go:1] after\r\n\
                     2024-05-01T10:00:09Z stdout F I0501 10:00:09.000000    1234 b.go:1] last";
        let cuts = cuts_assemble_the_same(input, LineAssembler::begins_record_after);
        // Not before a line after a `P` line (2, 3, 6), a wrap (9) or its end after it (10), nor
        // before a line of no shape (13) or a header after one (14); before 7, as another
        // stream's line (6) ended the `P` line before it.
        assert_eq!(cuts, [4, 5, 7, 8, 11, 12, 15]);
    }

    #[test]
    fn the_cap_counts_lines_as_read_not_joined_text() {
        // Each continuation adds 6 bytes of text and 44 of lines (with its newline): a cap of
        // 130 bytes is passed by the lines at the second (168 bytes), not by the text (91).
        let head =
            "Jun 13 10:15:42 node-a kubelet[1234]: E0613 10:15:42.123456 1 x.go:1] \"m\" err=<";
        let line = "Jun 13 10:15:42 node-a kubelet[1234]: \tline";
        assert_eq!((head.len(), line.len()), (79, 43));
        let mut a = LineAssembler::with_max_record_bytes(130);
        assert!(a.push(head).is_none());
        assert!(a.push(line).is_none());
        assert_eq!(a.push(line).map(|r| r.lines), Some(2));
        assert_eq!(a.finish().map(|r| r.first_line), Some(3));
        // Under a cap the lines do not reach, all join.
        let mut a = LineAssembler::with_max_record_bytes(170);
        assert!(a.push(head).is_none());
        assert!(a.push(line).is_none());
        assert!(a.push(line).is_none());
        assert_eq!(a.finish().map(|r| r.lines), Some(3));
    }

    #[test]
    fn cap_stops_joining() {
        let mut a = LineAssembler::with_max_record_bytes(40);
        assert!(
            a.push("I0613 10:15:42.123456 1 a.go:1] 0123456789")
                .is_none()
        );
        let r = a.push("abcdefghij").map(|r| r.lines);
        assert_eq!(r, Some(1));
        assert_eq!(
            a.finish().map(|r| (r.text.to_owned(), r.first_line)),
            Some(("abcdefghij".to_owned(), 2))
        );
        assert!(a.finish().is_none());
    }
}
