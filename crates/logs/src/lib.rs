//! podcoroner-logs: reads the kubelet's and the runtime's logs into classified events.
//!
//! A source is a file (with its rotated siblings, plain or gzip, read oldest first) or a
//! journald unit (`journalctl -u <unit> -o json`), of this machine's journal or of the journal
//! files in a directory (`journalctl --directory`). Every physical line goes through
//! `podcoroner_core::logs` (assemble, parse, classify); a line that fits no shape is counted and
//! kept with its position, never dropped silently.
//!
//! Architecture invariant: the only crate that opens log files or runs `journalctl`; it depends
//! on `podcoroner-core` and on no other podcoroner crate.

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use jiff::Timestamp;
use podcoroner_core::logs::{ParseContext, parse};

mod blocks;
mod bounded;
mod journal_json;
mod line_ends;
mod node_times;
pub use node_times::{NodeLog, read_in_node_times};
pub mod progress;

pub use bounded::{MAX_GZIP_RATIO, MAX_LINE_BYTES, MIN_GZIP_LIMIT_BYTES};

/// Errors reading a log source.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A log file could not be opened or read.
    #[error("cannot read log file {}: {error}", path.display())]
    LogReadFailed {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// A journal directory (`journalctl --directory`) cannot be read, or holds no journal file
    /// (`*.journal`, `*.journal~`) in itself or in a machine-ID subdirectory, where journalctl
    /// looks (journalctl would read nothing and succeed).
    #[error("cannot read journal directory {}: {detail}", directory.display())]
    JournalDirectoryFailed {
        /// The directory.
        directory: PathBuf,
        /// What was wrong.
        detail: String,
    },
    /// `journalctl` could not be run or failed. The message names the directory when there is
    /// one (`journalctl -D <dir> -u <unit> failed: …`).
    #[error("journalctl {} failed: {detail}", journalctl_flags(.unit, .directory.as_deref()))]
    JournalctlFailed {
        /// The systemd unit.
        unit: String,
        /// The journal directory (`journalctl --directory`); `None` for the system journal.
        directory: Option<PathBuf>,
        /// What went wrong, with journalctl's stderr.
        detail: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where a log comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file; its rotated siblings (`kubelet.log.1`, `kubelet.log.2.gz`,
    /// `kubelet.log-20261128.gz`) are read first, oldest first.
    File(PathBuf),
    /// A systemd unit in the journal, read with `journalctl -u <unit> -o json`.
    Journald {
        /// The unit, e.g. `kubelet` or `containerd` (`journalctl -u`).
        unit: String,
        /// `journalctl --directory`: the journal files in this directory (and in its machine-ID
        /// subdirectories, as `/var/log/journal` holds them), e.g. a journal copied off a broken
        /// node. `None`: this machine's system journal.
        directory: Option<PathBuf>,
    },
}

impl Source {
    /// `journald` means the journal of `unit`, in `journal_dir` when given (see
    /// [`Source::Journald`]); `-` is the standard input (`/dev/stdin`); anything else is a file
    /// path, and `journal_dir` is not used.
    pub fn from_arg(arg: &str, unit: &str, journal_dir: Option<&Path>) -> Source {
        match arg {
            "journald" => Source::Journald {
                unit: unit.to_string(),
                directory: journal_dir.map(Path::to_path_buf),
            },
            "-" => Source::File("/dev/stdin".into()),
            _ => Source::File(arg.into()),
        }
    }

    /// A name for messages and evidence: the path, or `journald:` and the [`journal_name`].
    pub fn name(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Journald { unit, directory } => {
                format!("journald:{}", journal_name(unit, directory.as_deref()))
            }
        }
    }
}

/// How a journald source is named in messages, evidence and the daemon's saved cursors
/// ([`follow::Checkpoints::journald`]): `<unit>` for the system journal, `<unit>@<directory>`
/// for a journal directory.
pub fn journal_name(unit: &str, directory: Option<&Path>) -> String {
    match directory {
        Some(d) => format!("{unit}@{}", d.display()),
        None => unit.to_string(),
    }
}

/// `journalctl`'s flags that say what is read, for messages: `-u <unit>`, after
/// `-D <directory>` when there is one.
pub(crate) fn journalctl_flags(unit: &str, directory: Option<&Path>) -> String {
    match directory {
        Some(d) => format!("-D {} -u {unit}", d.display()),
        None => format!("-u {unit}"),
    }
}

pub use podcoroner_core::event::{LogKind, LoggedEvent};

/// A line that fits no known shape, kept with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparsed {
    /// The file (or `journald:<unit>`).
    pub origin: String,
    /// The 1-based line number.
    pub line: u64,
    /// The text, cut to [`MAX_KEPT_TEXT_BYTES`].
    pub text: String,
}

/// What reading a source gave.
#[derive(Debug, Clone, Default)]
pub struct LogRead {
    /// The files read, oldest first (or the journal).
    pub origins: Vec<String>,
    /// Physical lines read.
    pub lines: u64,
    /// Records (lines joined by the assembler) parsed into a known shape.
    pub parsed: u64,
    /// Records that fit no shape.
    pub unparsed: u64,
    /// Parsed records the kubelet or a container runtime may have written: a program the
    /// envelope names as one of them (or an all-in-one such as k3s), a record with no program
    /// name, or one in a shape they write (klog, logfmt, JSON) under any name. A log of parsed
    /// records none of which is (a syslog of CRON and sshd) is the wrong file, not a clean
    /// bill. Another Kubernetes component's klog or JSON log (kube-apiserver's, etcd's) counts
    /// as ours here and is told apart by its callers ([`Self::other_callers`]).
    pub ours: u64,
    /// The first programs ([`MAX_OTHER_PROGRAMS`]) whose records are not [`Self::ours`].
    pub other_programs: Vec<String>,
    /// Parsed records whose caller is the kubelet's own code
    /// ([`caller_owner`](podcoroner_core::logs::callers::caller_owner)); counted until the
    /// first.
    pub kubelet_callers: u64,
    /// Parsed records whose caller is another Kubernetes component's code (etcd's,
    /// kube-apiserver's, kube-proxy's), counted while no record's is the kubelet's: a log of
    /// those and none of the kubelet's is the wrong file, though its shape is the kubelet's.
    pub other_callers: u64,
    /// The components [`Self::other_callers`] name, the first [`MAX_OTHER_PROGRAMS`], with the
    /// first file of each (`("etcd", "etcdserver/server.go")`).
    pub other_components: Vec<(&'static str, String)>,
    /// The hosts the records' envelopes name (syslog, journald) with how many records name
    /// each, the first [`MAX_OTHER_PROGRAMS`] in reading order: logs whose main hosts differ
    /// are the logs of more than one node.
    pub hosts: Vec<(String, u64)>,
    /// The host the last record with one names: a node renamed as it was set up (the image's
    /// default name, then its own) ends its logs under its own name.
    pub last_host: Option<String>,
    /// The first [`MAX_KEPT_UNPARSED`] unparsed records that are not blank lines, prompts or
    /// markup ([`non_record`](podcoroner_core::logs::non_record)), with their positions.
    pub unparsed_samples: Vec<Unparsed>,
    /// Whether the source was understood: its records counted as understood, not understood
    /// and non-records (see [`Understanding`](podcoroner_core::logs::Understanding)), over every
    /// file read.
    pub understanding: podcoroner_core::logs::Understanding,
    /// Records before `since`, skipped.
    pub before_since: u64,
    /// Events classified and not kept: folded by [`read_for_diagnosis`] (the middle records of
    /// a pod's runs, [`Fold`](podcoroner_core::rules::fold::Fold)); 0 from [`read`]. The events
    /// classified are `events.len() + folded`.
    pub folded: u64,
    /// Every classified event, in the order read; oldest first when the source was read newest
    /// first ([`LogRead::newest_first`]).
    pub events: Vec<LoggedEvent>,
    /// The source was written newest first (`journalctl -r`): [`read`] reversed its events so
    /// they run oldest first, as the rules expect. [`read_each`] hands them out as read.
    pub newest_first: bool,
    /// The year of the last record whose timestamp carries its own year (containerd's `time=`,
    /// JSON `ts`/`time`, an RFC 3339 or journald envelope), or that journalctl's header gives
    /// (`-- Logs begin at … --`); `None` when every time was yearless (klog, syslog), read in
    /// the year of the file's modification time.
    pub dated_year: Option<i32>,
    /// The times the first and the last record whose time carries no year (klog, syslog,
    /// journalctl's short prefix) were read at, in reading order: in the year of its file's
    /// modification time, or the year given ([`read_as`]), a later one past a new year;
    /// `None` when no such record was read. [`LogRead::yearless_years`] gives their years.
    pub yearless_times: Option<(Timestamp, Timestamp)>,
    /// The UTC offset the first record that showed the node's zone set: a zone-less time beside
    /// a zoned one of the same moment (journalctl's local `Aug 28 08:03:00` prefix before
    /// containerd's or cri-dockerd's `time="2023-08-28T08:03:00+02:00"`), from which on the
    /// log's zone-less times are read in it; `None` when no record showed one.
    pub zone_shown: Option<jiff::tz::Offset>,
    /// The year of the first record whose time carries its year, in reading order.
    pub first_dated_year: Option<i32>,
    /// The time the first record with a yearless time was read at, when it came before any
    /// record whose time carries its year ([`LogRead::first_dated_year`]).
    pub yearless_before_dated: Option<Timestamp>,

    /// A record whose time carries no zone (klog, syslog) was read before
    /// [`LogRead::zone_shown`] (or, when none was shown, at all): in the offset the read started
    /// from (UTC, or [`ReadAs::offset`]).
    pub zoneless_before_zone: bool,
    /// The time of the first and last timestamped record read.
    pub span: Option<(Timestamp, Timestamp)>,
    /// Lines longer than [`MAX_LINE_BYTES`], cut to it (the rest of each is not read).
    pub cut_lines: u64,
    /// The bytes skipped from cut lines.
    pub cut_bytes: u64,
    /// Files of the source whose lines end in a lone `\r` (classic Mac OS line ends), read
    /// with each `\r` as a line end.
    pub lone_cr_files: Vec<PathBuf>,
    /// Files of the source written in UTF-16 (a byte order mark: PowerShell's `>`), read
    /// decoded to UTF-8.
    pub utf16_files: Vec<PathBuf>,
    /// Rotated siblings left out or read only in part, with why (not a regular file, a broken
    /// link, a corrupt `.gz`): the source is read in part, the rest of it still counts.
    pub skipped: Vec<SkippedFile>,
}

impl LogRead {
    /// The year of the log's first dated record, when yearless records before it were read in
    /// another year: the year to read the log again in, so that they line up with it (those
    /// after it are read in the year of the dated records before them already).
    pub fn year_before_dated(&self) -> Option<i32> {
        match (self.first_dated_year, self.yearless_before_dated) {
            (Some(first_dated), Some(t)) => (blocks::year(t) != first_dated).then_some(first_dated),
            (Some(_), None) => None,
            // No dated record, only journalctl's header (`-- Logs begin at …`): its year dates
            // the yearless records.
            (None, _) => {
                let (own, (first, _)) = (self.dated_year?, self.yearless_years()?);
                (own != first).then_some(own)
            }
        }
    }

    /// The UTC years of [`LogRead::yearless_times`]: the years the first and the last record
    /// whose time carries no year were read in.
    pub fn yearless_years(&self) -> Option<(i32, i32)> {
        self.yearless_times
            .map(|(first, last)| (blocks::year(first), blocks::year(last)))
    }
}

/// How a log's times without a year or a zone (klog headers, syslog and journalctl prefixes) are
/// read, when something outside the log says better than the log's file: what [`read_as`] and
/// the readers taking one are given. The default reads them as [`read`] does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadAs {
    /// The year of the first yearless time; `None`: the year of the file's modification time.
    /// Journald sources carry their year and ignore it.
    pub year: Option<i32>,
    /// The UTC offset zone-less times are read in until a record shows the zone
    /// ([`LogRead::zone_shown`]); `None`: UTC.
    pub offset: Option<jiff::tz::Offset>,
}

/// A rotated sibling that was not read, or only in part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFile {
    /// The file.
    pub path: PathBuf,
    /// Why, e.g. `a named pipe (FIFO), not a regular file` or `cannot read: invalid gzip
    /// header`.
    pub reason: String,
    /// The lines read from it before it stopped (a `.gz` cut short: `unexpected end of file`,
    /// or decompressed to its limit): 0 when it was left out.
    pub lines_read: u64,
}

/// How many programs [`LogRead::other_programs`] names.
pub const MAX_OTHER_PROGRAMS: usize = 5;

/// How many unparsed records are kept as samples; all are counted.
pub const MAX_KEPT_UNPARSED: usize = 1000;
/// How much of a record's text an event or sample keeps.
pub const MAX_KEPT_TEXT_BYTES: usize = 4096;

/// Reads `source`, the log of `log`, keeping the records at or after `since`, with every event
/// in [`LogRead::events`].
///
/// Uses every core (up to 4) for one source; the result is that of one sequential loop (see
/// [`read_each`]).
///
/// # Errors
/// [`Error::LogReadFailed`] for a file that cannot be read; [`Error::JournalDirectoryFailed`];
/// [`Error::JournalctlFailed`].
pub fn read(source: &Source, log: LogKind, since: Option<Timestamp>) -> Result<LogRead> {
    let mut events = Vec::new();
    let mut out = read_each(source, log, since, |e| events.push(e))?;
    if newest_first(&events) {
        events.reverse();
        out.newest_first = true;
    }
    out.events = events;
    Ok(out)
}

/// [`read`], with the yearless and zone-less timestamps of a file read as `read_as` says instead
/// of in the year of its modification time and in UTC: a yearless log (klog, syslog) copied
/// beside a log whose times carry their year ([`LogRead::dated_year`]) is read in that year,
/// and a log of a node whose zone another log shows ([`LogRead::zone_shown`]) in that zone, so
/// the two line up.
///
/// # Errors
/// As [`read`].
pub fn read_as(
    source: &Source,
    log: LogKind,
    since: Option<Timestamp>,
    read_as: ReadAs,
) -> Result<LogRead> {
    let mut events = Vec::new();
    let mut out = read_source(source, log, since, read_as, &mut |e| events.push(e))?;
    if newest_first(&events) {
        events.reverse();
        out.newest_first = true;
    }
    out.events = events;
    Ok(out)
}

/// [`read`] (or [`read_as`] with `read_as`) for a diagnosis: the events go through a
/// [`Fold`](podcoroner_core::rules::fold::Fold) as they are read, which keeps what the rules
/// read and folds the middle records of a pod's runs of readiness and startup records, so a
/// healthy node's log costs memory by pods, not by lines. [`LogRead::folded`] counts what it
/// folded. Whether the source was written newest first is judged on every event, as [`read`]
/// does. `explain` and `collect` use [`read`]: they show every record.
///
/// # Errors
/// As [`read`].
pub fn read_for_diagnosis(
    source: &Source,
    log: LogKind,
    since: Option<Timestamp>,
    read_as: ReadAs,
) -> Result<LogRead> {
    let mut fold = podcoroner_core::rules::fold::Fold::new();
    let mut order = TimeOrder::default();
    let mut out = read_source(source, log, since, read_as, &mut |e| {
        order.see(e.time);
        fold.push(e);
    })?;
    let kept = fold.finish();
    out.folded = kept.folded;
    let mut events = kept.events;
    if order.newest_first() {
        events.reverse();
        out.newest_first = true;
    }
    out.events = events;
    Ok(out)
}

/// [`read`] (or [`read_as`] with `read_as`) keeping no event: what `collect` needs of a log
/// whose window it copies (its counts and span, whether it was understood), in memory bounded
/// by the blocks in flight whatever the log's size. [`LogRead::events`] stays empty.
///
/// # Errors
/// As [`read`].
pub fn read_counts(
    source: &Source,
    log: LogKind,
    since: Option<Timestamp>,
    read_as: ReadAs,
) -> Result<LogRead> {
    let mut order = TimeOrder::default();
    let mut out = read_source(source, log, since, read_as, &mut |e| order.see(e.time))?;
    out.newest_first = order.newest_first();
    Ok(out)
}

/// The consecutive timestamped pairs of a source that go back in time and forward.
#[derive(Default)]
struct TimeOrder {
    last: Option<Timestamp>,
    back: usize,
    forward: usize,
}

impl TimeOrder {
    fn see(&mut self, t: Option<Timestamp>) {
        let Some(t) = t else { return };
        if let Some(p) = self.last {
            match t.cmp(&p) {
                std::cmp::Ordering::Less => self.back += 1,
                std::cmp::Ordering::Greater => self.forward += 1,
                std::cmp::Ordering::Equal => {}
            }
        }
        self.last = Some(t);
    }

    /// More pairs go back than forward, at least two of them.
    fn newest_first(&self) -> bool {
        self.back >= 2 && self.back > self.forward
    }
}

/// Whether events were read newest first (`journalctl -r`, a paste in reverse): more of the
/// consecutive timestamped pairs go back in time than forward, at least two of them.
fn newest_first(events: &[LoggedEvent]) -> bool {
    let mut order = TimeOrder::default();
    for e in events {
        order.see(e.time);
    }
    order.newest_first()
}

/// [`read`], handing each event to `on_event` in the order read instead of keeping it
/// ([`LogRead::events`] stays empty): memory stays flat however many events the log holds.
///
/// Every physical line is counted and every record is parsed with
/// [`parse`](podcoroner_core::logs::parse) and classified with
/// [`classify`](podcoroner_core::logs::classify), exactly as one loop over a
/// [`LineAssembler`](podcoroner_core::logs::LineAssembler) with one
/// [`ParseContext`](podcoroner_core::logs::ParseContext) would: the source is cut into blocks
/// parsed on all cores (up to 4) and merged in order, and the results do not depend on the
/// cutting.
///
/// # Errors
/// As [`read`].
pub fn read_each(
    source: &Source,
    log: LogKind,
    since: Option<Timestamp>,
    mut on_event: impl FnMut(LoggedEvent),
) -> Result<LogRead> {
    read_source(source, log, since, ReadAs::default(), &mut on_event)
}

/// [`read_each`], with the yearless and zone-less timestamps of a file read as `read_as` says
/// (as [`read_as`] reads them).
///
/// # Errors
/// As [`read`].
pub fn read_each_as(
    source: &Source,
    log: LogKind,
    since: Option<Timestamp>,
    read_as: ReadAs,
    mut on_event: impl FnMut(LoggedEvent),
) -> Result<LogRead> {
    read_source(source, log, since, read_as, &mut on_event)
}

fn read_source(
    source: &Source,
    log: LogKind,
    since: Option<Timestamp>,
    read_as: ReadAs,
    sink: &mut dyn FnMut(LoggedEvent),
) -> Result<LogRead> {
    let year_override = read_as.year;
    let mut out = LogRead::default();
    match source {
        Source::File(path) => {
            let siblings = rotated_siblings(path);
            out.skipped = siblings.skipped;
            for file in siblings.files {
                let year = year_override.unwrap_or_else(|| year_of(&file));
                let origin = file.display().to_string();
                let opts = blocks::StreamOpts::new(&origin, log, since);
                let mut ctx = ParseContext::new(year);
                ctx.offset = read_as.offset.unwrap_or(jiff::tz::Offset::UTC);
                if year_override.is_none() {
                    ctx.not_after = modified_at(&file);
                }
                // Bounded as the follower is: long lines cut, gzip decompressed to a ratio.
                let mut cuts = None;
                let mut lone_cr = None;
                let mut utf16 = false;
                let lines_before = out.lines;
                let read = || -> std::io::Result<()> {
                    use std::io::BufRead as _;
                    let f = std::fs::File::open(&file)?;
                    let meta = f.metadata()?;
                    let len = meta.len();
                    let gzip_file = is_gzip(&file);
                    let sized = meta.is_file() && !gzip_file;
                    let _reading = progress::Reading::begin(&origin, sized.then_some(len));
                    let start = if meta.is_file() {
                        line_ends::Start::of(&f)
                    } else {
                        line_ends::Start::default()
                    };
                    if meta.is_file() && !gzip_file && !start.utf16 && !start.lone_cr {
                        // In blocks, and in order through the cut from a line too long for
                        // them on.
                        return blocks::read_file(&f, len, &opts, ctx, &mut out, sink);
                    }
                    // A pipe's first bytes are read ahead: `cat kubelet.log.gz |` is gzip too.
                    let mut input = std::io::BufReader::with_capacity(1 << 16, f);
                    let gzip = gzip_file
                        || (!meta.is_file() && input.fill_buf()?.starts_with(&GZIP_MAGIC));
                    let (input, limit): (Box<dyn Read + Send>, _) = if gzip {
                        // A file's output is bounded to a ratio of its size; a pipe has none.
                        let limit = gzip_file
                            .then(|| len.saturating_mul(MAX_GZIP_RATIO).max(MIN_GZIP_LIMIT_BYTES));
                        (Box::new(flate2::read::MultiGzDecoder::new(input)), limit)
                    } else if start.utf16 {
                        // Read UTF-8 once decoded: a UTF-16 file (PowerShell's `>`).
                        utf16 = true;
                        let decoded = encoding_rs_io::DecodeReaderBytesBuilder::new().build(input);
                        (Box::new(decoded), None)
                    } else {
                        (Box::new(input), None)
                    };
                    // Read in order through the cut: a pipe (`journalctl -u kubelet |
                    // podcoroner diagnose --kubelet-log -`) has no length to cut into blocks,
                    // and the blocks split at `\n`, which a file of lone `\r` line ends lacks.
                    let (input, turned) = line_ends::LoneCr::new(input);
                    lone_cr = Some(turned);
                    let (r, c) = bounded::Bounded::new(input, MAX_LINE_BYTES, limit);
                    cuts = Some((c, limit));
                    blocks::read_stream(Box::new(r), &opts, ctx, &mut out, sink)
                };
                let result = read();
                let lines_read = out.lines - lines_before;
                if lone_cr.is_some_and(|t| t.load(std::sync::atomic::Ordering::Relaxed)) {
                    out.lone_cr_files.push(file.clone());
                }
                if utf16 {
                    out.utf16_files.push(file.clone());
                }
                if let Some((c, limit)) = cuts {
                    use std::sync::atomic::Ordering::Relaxed;
                    out.cut_lines += c.lines.load(Relaxed);
                    out.cut_bytes += c.bytes.load(Relaxed);
                    if let (true, Some(limit)) = (c.stopped.load(Relaxed), limit) {
                        out.skipped.push(SkippedFile {
                            path: file.clone(),
                            lines_read,
                            reason: format!(
                                "decompressed to {} MiB ({MAX_GZIP_RATIO} times its size or \
                                 {} MiB) and not further: the rest is not read (a gzip bomb?)",
                                limit >> 20,
                                MIN_GZIP_LIMIT_BYTES >> 20
                            ),
                        });
                    }
                }
                match result {
                    Ok(()) => out.origins.push(origin),
                    // A file that fails after lines were read (a `.gz` cut short in a copy or
                    // an upload: `unexpected end of file`) is read in part, said in
                    // `skipped`, the live file as a rotation.
                    Err(error) if lines_read > 0 => {
                        out.origins.push(origin);
                        out.skipped.push(SkippedFile {
                            reason: format!(
                                "{error} after {lines_read} lines (a truncated or damaged \
                                 file?): the rest is not read"
                            ),
                            path: file.clone(),
                            lines_read,
                        });
                    }
                    // One broken old rotation leaves the source read in part, said in
                    // `skipped`; the live file failing is an error.
                    Err(error) if file != *path => out.skipped.push(SkippedFile {
                        reason: format!("cannot read: {error}"),
                        path: file.clone(),
                        lines_read: 0,
                    }),
                    Err(error) => {
                        return Err(Error::LogReadFailed {
                            path: file.clone(),
                            error,
                        });
                    }
                }
            }
        }
        Source::Journald { unit, directory } => {
            check_journal_directory(directory.as_deref())?;
            let fail = journalctl_failed(unit, directory.as_deref());
            let mut child = journalctl(unit, directory.as_deref(), since)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| fail(format!("cannot run journalctl: {e}")))?;
            let stdout = child
                .stdout
                .take()
                .ok_or_else(|| fail("no stdout".to_string()))?;
            let origin = source.name();
            let _reading = progress::Reading::begin(&origin, None);
            let year = i32::from(Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).year());
            let opts = blocks::StreamOpts::new(&origin, log, since);
            let stdout = journal_json::InFieldOrder::new(
                BufReader::new(stdout),
                journal_json::MAX_ENTRY_BYTES,
            );
            let (stdout, cuts) = bounded::Bounded::new(stdout, MAX_LINE_BYTES, None);
            blocks::read_stream(
                Box::new(stdout),
                &opts,
                ParseContext::new(year),
                &mut out,
                sink,
            )
            .map_err(|e| fail(e.to_string()))?;
            out.cut_lines += cuts.lines.load(std::sync::atomic::Ordering::Relaxed);
            out.cut_bytes += cuts.bytes.load(std::sync::atomic::Ordering::Relaxed);
            let output = child.wait_with_output().map_err(|e| fail(e.to_string()))?;
            journalctl_succeeded(&output).map_err(fail)?;
            out.origins.push(origin);
        }
    }
    Ok(out)
}

/// Copies the part of `source` at or after `since` (every line, parsed or not, in order; a line
/// without a timestamp goes with the record before it) into the file `out`, as `collect` keeps a
/// log window in a snapshot. Journald is written as `journalctl -o json` lines (from `directory`
/// when the source has one). Returns the number of lines written.
///
/// # Errors
/// As [`read`], and [`Error::LogReadFailed`] naming `out` when it cannot be written.
pub fn copy_window(source: &Source, since: Option<Timestamp>, out: &Path) -> Result<u64> {
    use std::io::Write as _;
    let write_err = |error| Error::LogReadFailed {
        path: out.to_path_buf(),
        error,
    };
    let file = std::fs::File::create(out).map_err(write_err)?;
    let mut w = std::io::BufWriter::new(file);
    let mut n = 0;
    let mut copy = |reader: Box<dyn BufRead>,
                    year: i32,
                    not_after: Option<Timestamp>|
     -> std::io::Result<()> {
        let mut ctx = ParseContext::new(year);
        ctx.not_after = not_after;
        let mut keep = since.is_none();
        // Bytes read and not yet reported (reported about every MiB).
        let mut unreported = 0u64;
        for line in reader.split(b'\n') {
            let line = line?;
            unreported += line.len() as u64 + 1;
            if unreported >= 1 << 20 {
                progress::advance(std::mem::take(&mut unreported));
            }
            let text = String::from_utf8_lossy(&line);
            if let Some(t) = parse(&text, &mut ctx).time {
                keep = since.is_none_or(|s| t >= s);
            }
            if keep {
                w.write_all(&line)?;
                w.write_all(b"\n")?;
                n += 1;
            }
        }
        progress::advance(unreported);
        Ok(())
    };
    match source {
        Source::File(path) => {
            for file in with_rotated_siblings(path) {
                let year = year_of(&file);
                let size = std::fs::metadata(&file).map(|m| m.len()).ok();
                let _reading = progress::Reading::begin(
                    &file.display().to_string(),
                    size.filter(|_| !is_gzip(&file)),
                );
                let copied = open(&file).and_then(|r| {
                    copy(r, year, modified_at(&file)).map_err(|error| Error::LogReadFailed {
                        path: file.clone(),
                        error,
                    })
                });
                // A broken old rotation is left out of the copy, as out of a diagnosis.
                if file == *path {
                    copied?;
                }
            }
        }
        Source::Journald { unit, directory } => {
            check_journal_directory(directory.as_deref())?;
            let fail = journalctl_failed(unit, directory.as_deref());
            let _reading = progress::Reading::begin(&source.name(), None);
            let output = journalctl(unit, directory.as_deref(), since)
                .output()
                .map_err(|e| fail(format!("cannot run journalctl: {e}")))?;
            journalctl_succeeded(&output).map_err(fail)?;
            let entries = journal_json::InFieldOrder::new(
                std::io::Cursor::new(output.stdout),
                journal_json::MAX_ENTRY_BYTES,
            );
            copy(Box::new(BufReader::new(entries)), 0, None).map_err(write_err)?;
        }
    }
    w.flush().map_err(write_err)?;
    Ok(n)
}

/// `journalctl [-D <directory>] -u <unit> -o json --all --no-pager [--since=@<seconds>]`, with
/// stdin closed. `--all` keeps fields over 4096 bytes, which `-o json` shows as `null` without
/// it (a long klog line would lose its `MESSAGE`).
///
/// Its entries are read through [`journal_json::InFieldOrder`]: journalctl's field order
/// changes from run to run. With `--output-fields=` the fields read (when journalctl takes it:
/// [`takes_output_fields`]), it writes a third less and takes a third less time.
fn journalctl(unit: &str, directory: Option<&Path>, since: Option<Timestamp>) -> Command {
    let mut cmd = Command::new("journalctl");
    if let Some(d) = directory {
        cmd.arg("--directory").arg(d);
    }
    cmd.args(["-u", unit, "-o", "json", "--all", "--no-pager"]);
    if takes_output_fields() {
        cmd.arg(format!(
            "--output-fields={}",
            journal_json::FIELD_ORDER.join(",")
        ));
    }
    if let Some(t) = since {
        cmd.arg(format!("--since=@{}", t.as_second()));
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// Whether `journalctl` takes `--output-fields` (systemd 236 and later), asked once.
fn takes_output_fields() -> bool {
    static TAKES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TAKES.get_or_init(|| journalctl_takes_output_fields(Path::new("journalctl")))
}

/// Whether the `journalctl` at `journalctl` takes `--output-fields` (systemd 236 and later):
/// `journalctl --output-fields=MESSAGE --version` succeeds. False when it cannot be run.
pub(crate) fn journalctl_takes_output_fields(journalctl: &Path) -> bool {
    Command::new(journalctl)
        .args(["--output-fields=MESSAGE", "--version"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// [`Error::JournalctlFailed`] for `unit` (and `directory`) with a detail.
fn journalctl_failed(unit: &str, directory: Option<&Path>) -> impl Fn(String) -> Error {
    move |detail| Error::JournalctlFailed {
        unit: unit.to_string(),
        directory: directory.map(Path::to_path_buf),
        detail,
    }
}

/// Whether a finished `journalctl` succeeded; `Err` holds its status and stderr.
fn journalctl_succeeded(output: &std::process::Output) -> Result<(), String> {
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}

/// [`Error::JournalDirectoryFailed`] when `directory` is given and is no journal directory:
/// unreadable, or without a journal file (`*.journal`, `*.journal~`) in itself or in a
/// machine-ID subdirectory (32 hex digits), the places `journalctl --directory` reads. Only
/// names are looked at; `journalctl` stays the only reader of the journal format.
pub(crate) fn check_journal_directory(directory: Option<&Path>) -> Result<()> {
    let Some(dir) = directory else {
        return Ok(());
    };
    let fail = |detail: String| Error::JournalDirectoryFailed {
        directory: dir.to_path_buf(),
        detail,
    };
    let is_journal = |name: &std::ffi::OsStr| {
        let name = name.to_string_lossy();
        name.ends_with(".journal") || name.ends_with(".journal~")
    };
    let entries = std::fs::read_dir(dir).map_err(|e| fail(e.to_string()))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if is_journal(&name) {
            return Ok(());
        }
        let machine_id =
            name.len() == 32 && name.as_encoded_bytes().iter().all(u8::is_ascii_hexdigit);
        if machine_id
            && std::fs::read_dir(entry.path())
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| is_journal(&e.file_name()))
        {
            return Ok(());
        }
    }
    Err(fail(
        "no journal files (*.journal) in it or in a machine-ID subdirectory".to_string(),
    ))
}

/// `text` cut to [`MAX_KEPT_TEXT_BYTES`] (on a character boundary, with `…` when cut).
pub(crate) fn cut(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_KEPT_TEXT_BYTES {
        return Cow::Borrowed(text);
    }
    let mut end = MAX_KEPT_TEXT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &text[..end]))
}

/// Opens a file, decompressing `.gz`.
fn open(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    open_reader(path)
        .map(|r| Box::new(BufReader::with_capacity(1 << 16, r)) as Box<dyn BufRead + Send>)
        .map_err(|error| Error::LogReadFailed {
            path: path.to_path_buf(),
            error,
        })
}

/// Opens a file for reading, decompressing `.gz` (to at most [`MAX_GZIP_RATIO`] times its
/// size), with lines cut to [`MAX_LINE_BYTES`].
fn open_reader(path: &Path) -> std::io::Result<Box<dyn Read + Send>> {
    let file = std::fs::File::open(path)?;
    Ok(if is_gzip(path) {
        let limit = file
            .metadata()?
            .len()
            .saturating_mul(MAX_GZIP_RATIO)
            .max(MIN_GZIP_LIMIT_BYTES);
        let gz = line_ends::LoneCr::new(flate2::read::MultiGzDecoder::new(file)).0;
        Box::new(bounded::Bounded::new(gz, MAX_LINE_BYTES, Some(limit)).0)
    } else {
        let file = line_ends::LoneCr::new(file).0;
        Box::new(bounded::Bounded::new(file, MAX_LINE_BYTES, None).0)
    })
}

/// Whether `path` is a gzip file: named `.gz`, or a regular file starting with gzip's magic
/// bytes (a rotation compressed without the suffix, a `.gz` renamed).
fn is_gzip(path: &Path) -> bool {
    use std::os::unix::fs::FileExt as _;
    if path.extension().is_some_and(|e| e == "gz") {
        return true;
    }
    let mut magic = [0u8; 2];
    std::fs::File::open(path).is_ok_and(|f| {
        f.metadata().is_ok_and(|m| m.is_file())
            && f.read_at(&mut magic, 0).is_ok_and(|n| n == 2)
            && magic == GZIP_MAGIC
    })
}

/// The compression a file's first bytes show that podcoroner does not read (zstd, xz, bzip2,
/// lz4), with the command that decompresses it: `("zstd", "zstd -d")`. `None` for anything
/// else, gzip included (read decompressed), and for a file that cannot be read.
pub fn unread_compression(path: &Path) -> Option<(&'static str, &'static str)> {
    use std::os::unix::fs::FileExt as _;
    const MAGIC: &[(&[u8], &str, &str)] = &[
        (&[0x28, 0xB5, 0x2F, 0xFD], "zstd", "zstd -d"),
        (&[0xFD, b'7', b'z', b'X', b'Z', 0x00], "xz", "xz -d"),
        (b"BZh", "bzip2", "bzip2 -d"),
        (&[0x04, 0x22, 0x4D, 0x18], "lz4", "lz4 -d"),
    ];
    let mut head = [0u8; 6];
    let n = std::fs::File::open(path).ok()?.read_at(&mut head, 0).ok()?;
    MAGIC
        .iter()
        .find(|(magic, _, _)| head[..n].starts_with(magic))
        .map(|&(_, name, command)| (name, command))
}

/// The first two bytes of a gzip stream (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How much of a file [`peek`] parses in full.
const PEEK_BYTES: u64 = 1 << 20;

/// How a regular file of `source` (its oldest rotated sibling; not a pipe, a gzip or a journal)
/// says its times are to be read, from its first MiB parsed as the reader parses it, then only
/// the lines that may carry a year or show a zone as far as 64 MiB: the year of its first dated
/// record or journalctl's header, when not the file's modification year, and the first zone a
/// record shows ([`LogRead::zone_shown`]). Read in these, a log whose yearless or zone-less
/// records sit among dated or zoned ones is read in their year and zone from the start, rather
/// than in the modification year and UTC and then again (`node::gather`). The default for
/// anything else.
pub fn times_at_start(source: &Source) -> ReadAs {
    let Source::File(path) = source else {
        return ReadAs::default();
    };
    let Some(first) = rotated_siblings(path).files.into_iter().next() else {
        return ReadAs::default();
    };
    if !std::fs::metadata(&first).is_ok_and(|m| m.is_file()) || is_gzip(&first) {
        return ReadAs::default();
    }
    let mut found = peek(&first);
    found.year = found.year.filter(|&y| y != year_of(&first));
    found
}

/// [`times_at_start`] of one file: the year of its first dated record (or journalctl's header)
/// and the first zone a record or journalctl's header shows, each `None` when not found.
fn peek(path: &Path) -> ReadAs {
    use std::io::Read as _;
    let mut found = ReadAs::default();
    let mut ctx = ParseContext::new(year_of(path));
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(PEEK_BYTES).read_to_end(&mut head));
    if read.is_err() {
        return found;
    }
    let text = String::from_utf8_lossy(&head);
    let mut asm = podcoroner_core::logs::LineAssembler::new();
    // The last line may be cut by the peek's end: left out.
    let whole = text.rfind('\n').map_or("", |end| &text[..end]);
    for line in whole.split('\n') {
        if let Some(y) = blocks::header_year(line) {
            found.year.get_or_insert(y);
        }
        // journalctl's header shows the zone its short prefix's times are in.
        if let Some(zone) = blocks::journal_header_offset(line) {
            found.offset.get_or_insert(zone);
        }
        if let Some(rec) = asm.push(line)
            && note_times(rec.text, &mut ctx, &mut found)
        {
            return found;
        }
    }
    // On, as far as [`PEEK_FAR_BYTES`], only the lines that may carry a year or show a zone (a
    // `time=`, a JSON time, journald's, an RFC 3339 prefix): a kubelet log whose first containerd
    // line comes after many MiB of klog is read in their year and zone too, not read twice.
    let Ok(mut f) = std::fs::File::open(path) else {
        return found;
    };
    let mut at = whole.len() as u64 + 1;
    let mut chunk = Vec::new();
    while at < PEEK_FAR_BYTES {
        chunk.clear();
        let read = std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(at))
            .and_then(|_| (&mut f).take(PEEK_BYTES).read_to_end(&mut chunk));
        let Some(end) = read.ok().and_then(|_| memchr::memrchr(b'\n', &chunk)) else {
            break;
        };
        at += end as u64 + 1;
        for line in chunk[..end].split(|&b| b == b'\n') {
            let marked = memchr::memmem::find(line, b"time").is_some()
                || memchr::memmem::find(line, b"\"ts\"").is_some()
                || memchr::memmem::find(line, b"__REALTIME").is_some()
                || (line.len() > 10 && line[..4].iter().all(u8::is_ascii_digit) && line[4] == b'-');
            if marked && note_times(&String::from_utf8_lossy(line), &mut ctx, &mut found) {
                return found;
            }
        }
    }
    found
}

/// Parses one record for [`peek`], noting in `found` the zone it shows and the year its time
/// carries, where `found` has none yet; true once `found` has both.
fn note_times(text: &str, ctx: &mut ParseContext, found: &mut ReadAs) -> bool {
    let before = ctx.offset;
    let p = parse(text, ctx);
    if ctx.offset != before {
        found.offset.get_or_insert(ctx.offset);
    }
    if let Some(t) = p.time
        && blocks::carries_year(&p)
    {
        found.year.get_or_insert(blocks::year(t));
    }
    found.year.is_some() && found.offset.is_some()
}

/// How far into a file [`peek`] looks for the lines that may carry a year or show a zone.
const PEEK_FAR_BYTES: u64 = 64 << 20;

/// The year a file's yearless timestamps most likely belong to: its modification year (the
/// first of them more than a day after the modification time is read in the year before,
/// [`ParseContext::not_after`]).
fn year_of(path: &Path) -> i32 {
    let t = modified_at(path).unwrap_or_else(Timestamp::now);
    i32::from(t.to_zoned(jiff::tz::TimeZone::UTC).year())
}

/// When `path` was last written; `None` when the file system does not say.
fn modified_at(path: &Path) -> Option<Timestamp> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| Timestamp::try_from(t).ok())
}

/// `path` preceded by its rotated siblings, oldest first: logrotate's numbered
/// (`kubelet.log.3.gz`, `kubelet.log.2.gz`, `kubelet.log.1`) and dated
/// (`kubelet.log-20261127.gz`, `kubelet.log-20261128`) names. Files ending in `.tmp` are skipped,
/// and so is what [`rotated_siblings`] leaves out.
pub fn with_rotated_siblings(path: &Path) -> Vec<PathBuf> {
    rotated_siblings(path).files
}

/// The files of a log with its rotated siblings, and the siblings left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Siblings {
    /// The files to read, oldest first, `path` last.
    pub files: Vec<PathBuf>,
    /// Siblings that are not regular files (a FIFO would block the reader forever, a directory
    /// or a dangling link cannot be read), with why.
    pub skipped: Vec<SkippedFile>,
}

/// [`with_rotated_siblings`], with what it left out: a sibling that is not a regular file (after
/// following links) is skipped and said; one that is the same file as `path` or as another
/// sibling (same device and inode: `kubelet.log.1 -> kubelet.log`, a hard link) is read once,
/// as `path` or as the oldest name.
pub fn rotated_siblings(path: &Path) -> Siblings {
    use std::os::unix::fs::MetadataExt as _;
    let mut out = Siblings::default();
    let mut seen: Vec<(u64, u64)> = Vec::new();
    if let Ok(m) = std::fs::metadata(path) {
        seen.push((m.dev(), m.ino()));
    }
    for file in list_rotated(path) {
        if file == path {
            out.files.push(file);
            continue;
        }
        match std::fs::metadata(&file) {
            Ok(m) if m.is_file() => {
                if !seen.contains(&(m.dev(), m.ino())) {
                    seen.push((m.dev(), m.ino()));
                    out.files.push(file);
                }
            }
            Ok(m) => out.skipped.push(SkippedFile {
                path: file,
                reason: format!("{}, not a regular file", file_kind(m.file_type())),
                lines_read: 0,
            }),
            Err(e) => out.skipped.push(SkippedFile {
                path: file,
                reason: format!("cannot stat: {e}"),
                lines_read: 0,
            }),
        }
    }
    out
}

/// A person's name for a file type that is not a regular file.
fn file_kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    match () {
        _ if t.is_dir() => "a directory",
        _ if t.is_fifo() => "a named pipe (FIFO)",
        _ if t.is_socket() => "a unix socket",
        _ if t.is_char_device() => "a character device",
        _ if t.is_block_device() => "a block device",
        _ => "a special file",
    }
}

/// The names of `path` and its rotated siblings, oldest first, `path` last.
fn list_rotated(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(base)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return vec![path.to_path_buf()];
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut numbered = Vec::new();
    let mut dated = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(base) else {
            continue;
        };
        if rest.is_empty() || name.ends_with(".tmp") {
            continue;
        }
        let suffix = rest.strip_suffix(".gz").unwrap_or(rest);
        if let Some(n) = suffix.strip_prefix('.').and_then(|n| n.parse::<u32>().ok()) {
            numbered.push((n, entry.path()));
        } else if let Some(d) = suffix
            .strip_prefix('-')
            .filter(|d| d.chars().all(|c| c.is_ascii_digit()))
        {
            dated.push((d.to_string(), entry.path()));
        }
    }
    numbered.sort_by_key(|n| std::cmp::Reverse(n.0));
    dated.sort();
    let mut files: Vec<PathBuf> = dated.into_iter().map(|(_, p)| p).collect();
    files.extend(numbered.into_iter().map(|(_, p)| p));
    files.push(path.to_path_buf());
    files
}

pub mod follow;

#[cfg(any(test, feature = "test-util"))]
pub mod test_util;

#[cfg(test)]
mod tests;
