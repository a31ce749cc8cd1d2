//! The record types every line shape produces and the catalogue reads: [`ParsedLine`] with its
//! [`Envelope`], [`Field`]s and [`Format`], and the per-source [`ParseContext`].
//!
//! The bottom of the log-line layer: it depends on no shape parser, so the shapes
//! (`envelope`, `journald`, `klog`, `kv`, `json`, `shape`), `parse` and the catalogue all depend
//! on it and not on each other in a circle.

use std::borrow::Cow;

use jiff::Timestamp;
use jiff::tz::Offset;
use serde::{Deserialize, Serialize};

/// State carried from one record to the next while parsing one source (a file and its rotated
/// siblings, or one journal).
///
/// klog and syslog headers have no year. The year of each such timestamp is [`Self::year`],
/// except across New Year: after a December timestamp a January one is in `year + 1` (and a
/// December line straggling after January ones is in `year - 1`). [`parse`] keeps `year` and
/// `last` up to date, and a timestamp with a year (containerd `time=`, JSON `ts`, journald
/// `__REALTIME_TIMESTAMP`) resets `year`. Start it from the file's modification year or the
/// journal's first entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseContext {
    /// Year of [`Self::last`], or the caller's hint before any timestamp was seen.
    pub year: i32,
    /// The best timestamp of the previous record that had one.
    pub last: Option<Timestamp>,
    /// UTC offset in which zone-less klog and syslog times are read. Defaults to UTC.
    pub offset: Offset,
    /// The latest a yearless time of the source can be, when known: the file's modification
    /// time. The first yearless timestamp of a source, read in [`Self::year`], that falls more
    /// than a day after it is in the year before (`Dec 28 …` in a file written on 2 December
    /// is from last December). `None`: no bound (the default).
    pub not_after: Option<Timestamp>,
    /// Whether the source is message-only text (a Loki or `kubectl logs`-style export without
    /// headers). When set, a line that fits no shape becomes [`Format::Message`] instead of
    /// [`Format::Unparsed`], and is classified from its text. Defaults to `false`.
    pub message_only: bool,
    /// Whether a structured klog message's `key=value` pairs are skipped (see
    /// [`parse_unless_unnamed`](super::parse_unless_unnamed)): set only while that function
    /// reads a record, so `false` whenever a caller holds the context.
    pub(crate) skip_fields: bool,
}

impl ParseContext {
    /// A context for a source whose first yearless timestamp is in `year`, reading zone-less
    /// times as UTC.
    pub fn new(year: i32) -> Self {
        Self {
            year,
            last: None,
            offset: Offset::UTC,
            not_after: None,
            message_only: false,
            skip_fields: false,
        }
    }

    /// Whether [`parse`] gives the same records from `self` as from `other`: the same
    /// [`Self::year`], [`Self::offset`] and [`Self::message_only`], and a previous timestamp
    /// in the same New Year class (December, January, or neither or none). Lets a reader parse
    /// a later part of a source with a guessed context and check the guess once the context
    /// before that part is known.
    pub fn resolves_like(&self, other: &ParseContext) -> bool {
        let new_year_class = |c: &ParseContext| {
            c.last
                .map(|t| c.offset.to_datetime(t).month())
                .filter(|m| matches!(m, 1 | 12))
        };
        self.year == other.year
            && self.offset == other.offset
            && self.message_only == other.message_only
            && new_year_class(self) == new_year_class(other)
    }

    /// Records `t` as the latest timestamp and moves [`Self::year`] to its year.
    pub(crate) fn observe(&mut self, t: Timestamp) {
        self.year = i32::from(self.offset.to_datetime(t).year());
        self.last = Some(t);
    }
}

/// The inner shape of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Legacy klog printf line (kubelet ≤ 1.20, and unstructured calls after):
    /// `I0613 10:15:42.123456    1234 kubelet.go:1234] message`, or the same from `file.go:N] `
    /// on when the header was cut off.
    KlogText,
    /// Structured klog (kubelet ≥ 1.21): klog header, then `"msg" key="value" key2=value …`.
    KlogStructured,
    /// One JSON object per line: kubelet `--logging-format=json`
    /// (`{"ts":…,"caller":…,"msg":…,"v":…}`) or logrus JSON (`{"level":…,"msg":…,"time":…}`).
    Json,
    /// logrus logfmt as containerd, CRI-O, dockerd and CNI plugins write it:
    /// `time="…" level=error msg="…" error="…"` (also without `time=`).
    Logfmt,
    /// logrus text for a terminal, as crictl prints it: `FATA[0000] message`.
    LogrusText,
    /// An RFC 3339 time and a level word, then the message and any trailing `key=value`
    /// fields, as Go loggers other than klog and logrus print (zap's console encoder,
    /// `log/slog`'s text handler without keys, CNI plugins and operators):
    /// `2024-05-01T10:00:00.123Z INFO message k=v`, `… [ERROR] …`, tab-separated with a
    /// `file.go:N` caller (zap), or `<time> level=info msg=…` (logfmt after a bare time).
    TimeLevel,
    /// An envelope (syslog, journald) whose message fits no inner shape; `msg` is the message.
    Plain,
    /// A header-less message accepted because [`ParseContext::message_only`] is set.
    Message,
    /// Nothing fits. `msg` is the whole raw record; the caller counts it with its position.
    Unparsed,
}

/// Severity of a record, from the klog letter, the logrus level, or inferred (kubelet JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// logrus `trace`.
    Trace,
    /// logrus `debug`, syslog priority 7.
    Debug,
    /// klog `I`, logrus `info`, kubelet JSON lines with `v`.
    Info,
    /// klog `W`, logrus `warning`/`warn`.
    Warning,
    /// klog `E`, logrus `error`, kubelet JSON lines with `err` and no `v`.
    Error,
    /// klog `F`, logrus `fatal`/`panic`.
    Fatal,
}

impl Level {
    /// Maps a logrus / generic level word (`info`, `warning`, `FATA`, …), case-insensitively.
    pub fn from_word(w: &str) -> Option<Level> {
        let w = w.as_bytes();
        let lower = |s: &[u8]| w.eq_ignore_ascii_case(s);
        Some(if lower(b"info") || lower(b"information") {
            Level::Info
        } else if lower(b"warning") || lower(b"warn") {
            Level::Warning
        } else if lower(b"error") || lower(b"erro") || lower(b"err") {
            Level::Error
        } else if lower(b"debug") || lower(b"debu") {
            Level::Debug
        } else if lower(b"trace") || lower(b"trac") {
            Level::Trace
        } else if lower(b"fatal") || lower(b"fata") || lower(b"panic") || lower(b"pani") {
            Level::Fatal
        } else {
            return None;
        })
    }

    /// Maps a klog severity letter (`I`, `W`, `E`, `F`).
    pub fn from_klog(c: u8) -> Option<Level> {
        Some(match c {
            b'I' => Level::Info,
            b'W' => Level::Warning,
            b'E' => Level::Error,
            b'F' => Level::Fatal,
            _ => return None,
        })
    }

    /// Maps a syslog priority (`0`–`7`, journald `PRIORITY`).
    pub fn from_syslog_priority(p: u32) -> Option<Level> {
        Some(match p {
            0..=2 => Level::Fatal,
            3 => Level::Error,
            4 => Level::Warning,
            5 | 6 => Level::Info,
            7 => Level::Debug,
            _ => return None,
        })
    }
}

/// The node component that wrote a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Component {
    /// The kubelet (identifiers `kubelet`, `kubelet.service`, `hyperkube`, wrappers such as
    /// `d8-kubelet-forker`).
    Kubelet,
    /// containerd and its CRI plugin.
    Containerd,
    /// CRI-O (`crio`).
    Crio,
    /// dockerd (`dockerd`, `dockerd-current`, `docker`).
    Docker,
    /// Any other identifier (etcd wrappers, sudo, CNI plugins, …).
    Other,
}

impl Component {
    /// Whether `ident` is a distribution's all-in-one binary that runs the kubelet and other
    /// components in one process and logs them under one identifier (k3s, rke2, k0s,
    /// MicroK8s's `kubelite`): the record's own shape then says who wrote it (klog: the
    /// kubelet).
    pub fn is_all_in_one(ident: &str) -> bool {
        let id = ident.strip_suffix(".service").unwrap_or(ident);
        let base = id.split('-').next().unwrap_or(id);
        [
            "k3s",
            "rke2",
            "k0s",
            "k0sworker",
            "k0scontroller",
            "kubelite",
            "microk8s",
        ]
        .iter()
        .any(|w| base.eq_ignore_ascii_case(w))
    }

    /// Maps a syslog identifier or systemd unit name to a component (OpenShift's
    /// `kubenswrapper` is the kubelet).
    pub fn from_ident(ident: &str) -> Component {
        let id = ident.strip_suffix(".service").unwrap_or(ident).as_bytes();
        let is = |w: &[u8]| id.eq_ignore_ascii_case(w);
        let starts = |w: &[u8]| id.len() >= w.len() && id[..w.len()].eq_ignore_ascii_case(w);
        let has = |w: &[u8]| id.windows(w.len()).any(|x| x.eq_ignore_ascii_case(w));
        if is(b"kubelet") || is(b"hyperkube") || has(b"kubelet") || is(b"kubenswrapper") {
            Component::Kubelet
        } else if starts(b"containerd") {
            Component::Containerd
        } else if is(b"crio") || is(b"cri-o") {
            Component::Crio
        } else if starts(b"dockerd") || is(b"docker") {
            Component::Docker
        } else {
            Component::Other
        }
    }
}

/// The kind of envelope around a record's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnvelopeKind {
    /// `Mon DD HH:MM:SS host ident[pid]: ` (journalctl short output, traditional syslog).
    Syslog,
    /// `2023-01-20T12:26:08.948163+00:00 host ident[pid]: ` (rsyslog high-precision
    /// `/var/log/messages`, `journalctl -o short-iso`).
    SyslogRfc3339,
    /// `2023-01-20T13:26:08.948042485Z stderr F ` — the CRI container log format the kubelet
    /// keeps under `/var/log/pods` (containerd and CRI-O write it); the stream is the host.
    /// A partial line (`P`) is a record of its own.
    CriLog,
    /// A bare `tag: ` or `tag[pid]: ` before a recognised inner shape: a syslog fragment
    /// (`kubelet: E0309 …`) or talosctl's node prefix (`10.0.0.8: {…}`).
    Tag,
    /// One `journalctl -o json` export object.
    JournaldJson,
}

/// What an envelope says about a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// Which envelope.
    pub kind: EnvelopeKind,
    /// When the envelope's writer logged the record (syslog/journald time). The inner time, when
    /// there is one, is in [`ParsedLine::time`] and wins: journald may lag by minutes (case 36).
    pub time: Option<Timestamp>,
    /// Host name (`_HOSTNAME`, the syslog host field).
    pub host: Option<Cow<'a, str>>,
    /// Syslog identifier or systemd unit (`kubelet`, `containerd`, `crio`, `kubelet.service`),
    /// or the tag of a [`EnvelopeKind::Tag`] envelope.
    pub ident: Option<Cow<'a, str>>,
    /// Process ID from `ident[pid]` or journald `_PID`.
    pub pid: Option<u32>,
    /// journald `__CURSOR`, for resuming a journal read.
    pub cursor: Option<Cow<'a, str>>,
}

/// One `key=value` of a structured line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    /// The key as written (`err`, `containerID`, `pods`).
    pub key: Cow<'a, str>,
    /// The value.
    pub value: FieldValue<'a>,
}

/// The value of a [`Field`], by how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue<'a> {
    /// A quoted string, unescaped once (`err="… \"x\" …"` → `… "x" …`; deeper escaping levels,
    /// as in case 25, stay).
    Quoted(Cow<'a, str>),
    /// An unquoted token: numbers, `true`, `[default/x]`, `["default/x"]`,
    /// `{"Type":"containerd","ID":"…"}`, `&{ID:… Type:… Data:…}`, `containerd://…`. Bracketed
    /// values run to their matching bracket, spaces included.
    Bare(Cow<'a, str>),
    /// A klog multi-line value (`key=<` newline, tab-indented lines, ` >`), lines joined by `\n`
    /// with their indentation removed.
    Block(Cow<'a, str>),
    /// A nested JSON object or array, as raw JSON text (`"pods":[{"name":…}]`).
    Json(Cow<'a, str>),
}

impl<'a> FieldValue<'a> {
    /// The value's text: unescaped for quoted values, raw otherwise.
    pub fn as_str(&self) -> &str {
        match self {
            FieldValue::Quoted(s)
            | FieldValue::Bare(s)
            | FieldValue::Block(s)
            | FieldValue::Json(s) => s,
        }
    }

    pub(crate) fn into_owned(self) -> FieldValue<'static> {
        match self {
            FieldValue::Quoted(s) => FieldValue::Quoted(Cow::Owned(s.into_owned())),
            FieldValue::Bare(s) => FieldValue::Bare(Cow::Owned(s.into_owned())),
            FieldValue::Block(s) => FieldValue::Block(Cow::Owned(s.into_owned())),
            FieldValue::Json(s) => FieldValue::Json(Cow::Owned(s.into_owned())),
        }
    }
}

/// One parsed record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedLine<'a> {
    /// The record as given (before trimming).
    pub raw: &'a str,
    /// The inner shape.
    pub format: Format,
    /// The syslog / journald / tag envelope, if any.
    pub envelope: Option<Envelope<'a>>,
    /// Best time of the record: the inner time (klog header, `time=`, `ts`) if any, else the
    /// envelope's. `None` when the record has none or it was cut.
    pub time: Option<Timestamp>,
    /// Severity (klog letter, logrus level, inferred for kubelet JSON, journald `PRIORITY`).
    pub severity: Option<Level>,
    /// Writer, from the envelope identifier, else guessed from the shape (klog and kubelet
    /// JSON are taken as the kubelet; crictl also prints klog, so the guess can be wrong).
    pub component: Option<Component>,
    /// klog's thread-id column (the process ID for Go programs), else the envelope's PID.
    pub pid: Option<u32>,
    /// klog `file.go:line` or kubelet JSON `dir/file.go:line`. Never use it to classify: it
    /// moves between releases.
    pub caller: Option<Cow<'a, str>>,
    /// The message: the quoted klog `msg` unescaped, the free text of a legacy line, logfmt
    /// `msg`, JSON `msg`, or the whole raw text for [`Format::Unparsed`].
    pub msg: Cow<'a, str>,
    /// Structured key/values in order, without the ones lifted into the fields above
    /// (`time`, `level`, `msg`, `ts`, `caller`).
    pub fields: Vec<Field<'a>>,
    /// The record was cut: a header, a quoted value, a bracket or a JSON object ended early,
    /// or journalctl's pager marked a cut with a trailing `>`.
    pub truncated: bool,
}

impl<'a> ParsedLine<'a> {
    /// The text of the first field called `name` (see [`FieldValue::as_str`]).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.key == name)
            .map(|f| f.value.as_str())
    }

    /// The first field called `name`.
    pub fn field_value(&self, name: &str) -> Option<&FieldValue<'a>> {
        self.fields.iter().find(|f| f.key == name).map(|f| &f.value)
    }

    /// Whether the record fits a known shape (anything but [`Format::Unparsed`]).
    pub fn is_parsed(&self) -> bool {
        self.format != Format::Unparsed
    }

    pub(crate) fn detach(self) -> Detached {
        Detached {
            format: self.format,
            time: self.time,
            severity: self.severity,
            component: self.component,
            pid: self.pid,
            caller: self.caller.map(|c| Cow::Owned(c.into_owned())),
            msg: Cow::Owned(self.msg.into_owned()),
            fields: owned_fields(self.fields),
            truncated: self.truncated,
        }
    }

    pub(crate) fn unparsed(raw: &'a str) -> Self {
        ParsedLine {
            raw,
            format: Format::Unparsed,
            envelope: None,
            time: None,
            severity: None,
            component: None,
            pid: None,
            caller: None,
            msg: Cow::Borrowed(raw),
            fields: Vec::new(),
            truncated: false,
        }
    }
}

/// What a record says, less when: a hash of its shape, severity, writer, process, caller,
/// message and fields (key, how written, value) and of its envelope's kind, host, identifier and
/// process, but not of any time (the header's, `time=`, `ts`, the envelope's) nor of journald's
/// cursor. Everything [`classify`](super::classify) reads of a record but its time is in it, so
/// two records with one key classify alike but for their time. A record logged again by the
/// same call with the same values has the same key; one that differs in anything but its time
/// has, but for a 64-bit collision, another. The hash is seeded at random once per process
/// ([`CONTENT_SEED`]): a key compares with any other of the process, on any thread, and nobody
/// who writes log lines can aim at a collision without knowing the seed.
pub fn content_key(p: &ParsedLine<'_>) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = foldhash::fast::FixedState::with_seed(*CONTENT_SEED).build_hasher();
    p.format.hash(&mut h);
    p.severity.hash(&mut h);
    p.component.hash(&mut h);
    p.pid.hash(&mut h);
    p.caller.as_deref().hash(&mut h);
    p.msg.as_ref().hash(&mut h);
    p.truncated.hash(&mut h);
    h.write_usize(p.fields.len());
    for f in &p.fields {
        f.key.as_ref().hash(&mut h);
        std::mem::discriminant(&f.value).hash(&mut h);
        f.value.as_str().hash(&mut h);
    }
    if let Some(e) = &p.envelope {
        e.kind.hash(&mut h);
        e.host.as_deref().hash(&mut h);
        e.ident.as_deref().hash(&mut h);
        e.pid.hash(&mut h);
    }
    h.finish()
}

/// The seed of [`content_key`]: random, drawn once per process.
pub static CONTENT_SEED: std::sync::LazyLock<u64> = std::sync::LazyLock::new(|| {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0x706f_6463_6f72_6f6e_u64)
});

/// The inner part of a record parsed from a string the record does not borrow (journald's
/// unescaped `MESSAGE`), with everything owned.
pub(crate) struct Detached {
    pub format: Format,
    pub time: Option<Timestamp>,
    pub severity: Option<Level>,
    pub component: Option<Component>,
    pub pid: Option<u32>,
    pub caller: Option<Cow<'static, str>>,
    pub msg: Cow<'static, str>,
    pub fields: Vec<Field<'static>>,
    pub truncated: bool,
}

/// Inner shape as returned by the shape parsers, before the envelope is merged in.
pub(crate) struct Inner<'a> {
    pub format: Format,
    pub time: Option<Timestamp>,
    pub severity: Option<Level>,
    pub guess: Option<Component>,
    pub pid: Option<u32>,
    pub caller: Option<Cow<'a, str>>,
    pub msg: Cow<'a, str>,
    pub fields: Vec<Field<'a>>,
    pub truncated: bool,
}

impl<'a> Inner<'a> {
    pub(crate) fn new(format: Format, msg: Cow<'a, str>) -> Self {
        Inner {
            format,
            time: None,
            severity: None,
            guess: None,
            pid: None,
            caller: None,
            msg,
            fields: Vec::new(),
            truncated: false,
        }
    }
}

/// A record from an inner shape, with no envelope yet.
pub(crate) fn from_inner<'a>(raw: &'a str, i: Inner<'a>) -> ParsedLine<'a> {
    ParsedLine {
        raw,
        format: i.format,
        envelope: None,
        time: i.time,
        severity: i.severity,
        component: i.guess,
        pid: i.pid,
        caller: i.caller,
        msg: i.msg,
        fields: i.fields,
        truncated: i.truncated,
    }
}

/// `fields` with every key and value owned.
pub(crate) fn owned_fields(fields: Vec<Field<'_>>) -> Vec<Field<'static>> {
    fields
        .into_iter()
        .map(|f| Field {
            key: Cow::Owned(f.key.into_owned()),
            value: f.value.into_owned(),
        })
        .collect()
}

/// Merges an envelope into a record parsed from its body: the inner time, severity and pid win;
/// the envelope's identifier names the component (a talosctl IP tag names none).
pub(crate) fn merge_envelope<'a>(p: &mut ParsedLine<'a>, env: Envelope<'a>) {
    if p.time.is_none() {
        p.time = env.time;
    }
    if p.pid.is_none() {
        p.pid = env.pid;
    }
    if let Some(ident) = env.ident.as_deref() {
        let c = Component::from_ident(ident);
        let keep_guess = p.component.is_some() && Component::is_all_in_one(ident);
        if (c != Component::Other || env.kind != EnvelopeKind::Tag) && !keep_guess {
            p.component = Some(c);
        }
    }
    p.envelope = Some(env);
}

/// A copy of `ctx` whose year and previous timestamp are those of `envelope_time`, an envelope
/// timestamp that has a year: yearless times inside the envelope are resolved next to it, New
/// Year included.
pub(crate) fn anchored(ctx: &ParseContext, envelope_time: Option<Timestamp>) -> ParseContext {
    let mut c = ctx.clone();
    if let Some(t) = envelope_time {
        c.observe(t);
    }
    c
}
