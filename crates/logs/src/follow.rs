//! Following a log file as it grows, across rotation, truncation, deletion and daemon restarts,
//! in bounded memory; and a systemd unit's journal through `journalctl -f` ([`JournalFollower`]).
//!
//! [`Follower::poll`] is synchronous and returns a [`Batch`] of complete lines with the
//! [`Checkpoint`] that resumes right after them; [`spawn`] runs it on tokio's blocking pool and
//! hands batches out through a bounded channel. Polling is the only source of truth (every
//! [`FollowConfig::poll_interval`], 250 ms by default); there is no `notify` watch.
//!
//! # How a file is recognized
//!
//! Never by its path: by `(dev, inode)` plus the first up to [`FINGERPRINT_BYTES`] bytes of its
//! content (kept in memory, persisted as an FNV-1a hash and a length). The path is only asked
//! which file it names now. Rotated siblings are the names [`crate::with_rotated_siblings`]
//! lists (`kubelet.log.1`, `kubelet.log-20261128`, …) except `*.gz`, which the follower never
//! reads: logrotate's `delaycompress` leaves `.1` plain until the next rotation.
//!
//! # Edge cases
//!
//! - **Rotation by rename** (logrotate `create`, or a writer that renames and reopens): when the
//!   path names another file (or nothing), the open handle is read to its end and kept open until
//!   it has been quiet (no growth) for [`FollowConfig::rotate_wait`], so a writer that has not
//!   reopened yet loses nothing. Then the siblings that appeared since (files rotated more than
//!   once between two polls, copies) are read from their start, oldest first, and finally the
//!   file now at the path, from offset 0.
//! - **copytruncate**: the file shrank below the read position, or its first bytes changed. The
//!   copy logrotate made (a sibling whose first bytes are the ones this file had, at least as
//!   long as the read position) is read from the read position to its end, then the truncated
//!   file from 0. Only what the writer wrote between logrotate's copy and its truncate is lost,
//!   by logrotate itself. Without a copy (`: > kubelet.log`), reading restarts at 0 and what was
//!   not read before the truncation is lost; either way `truncations` counts it. A sibling that
//!   looks like a copy of the live file while the live file was not truncated (a copy in
//!   progress, or logrotate's `copy`) is not read.
//! - **Fast rotation** (a writer that renames its file away faster than the follower leaves the
//!   previous one, e.g. `mv log log.1` ten times a second, each rename overwriting the last
//!   rotation): while the file being read is no longer at the path, every file the path names
//!   is opened and held (at most [`MAX_HELD`]), so renaming over it or deleting it loses
//!   nothing, and [`spawn`] polls five times as often ([`Follower::rotating`]). Held files are
//!   read in turn after the current one, after any sibling not accounted for that was created
//!   before them (birth time). A file left without reading for `rotate_wait` since its last
//!   write is quiet at once. What may still be lost is counted in `rotations_missed`: the files
//!   the directory's change events (inotify, through `notify`: creations and renames onto the
//!   path's name) say were created at the path beyond those that arrived, compared whenever the
//!   follower has settled (reads the file at the path, holds none) with the creations counted
//!   one poll earlier, so that an event arriving before the follower looks is not a miss. A
//!   file arrives when the follower takes it (holds it, opens it at the path, or reads it as a
//!   sibling born after the watch was set and before the file at the path, not a copy made
//!   beside it) or when a file it has read or holds is renamed back onto the path; each file
//!   once, a reused inode told apart by its birth time. A file only glimpsed at the path and
//!   renamed over before it could be held never arrives, so it counts. Without an inotify
//!   watch (none left, no directory yet) what is counted is the rotations noticed while
//!   [`MAX_HELD`] files are held. Measured (`rename_rotation_ten_times_a_second_loses_nothing_uncounted`,
//!   11 files of 100 lines renamed over `.1` every ~100 ms): before, 201 of 1,101 lines were
//!   read, 1 rotation seen, nothing counted; now each line at most once, in order, and every
//!   file not read in full counted. Most runs read all 1,101; the first file can be renamed
//!   over before the fast polling starts (3 runs of 9 on an idle machine), and a loaded machine
//!   can fall behind and lose more: each such file is counted. A file created and
//!   renamed away within one fast poll (50 ms by default) is not seen, but it is counted
//!   (`rotation_faster_than_the_poll_counts_what_it_missed`: 30 files of 2 ms each).
//! - **A file back at the path**: a file read and left that is renamed onto the path again is
//!   held, and read on from where it was left (from its end when it was read before a
//!   restart).
//! - **Deletion**: the open handle is read to its end (like a rename), then the follower waits
//!   for the path to name a file again and reads that one from 0. A file deleted while nothing
//!   holds it open (the daemon was down) is gone, with whatever it held that was not read.
//! - **Partial last line**: a line is emitted only with its `\n`. A line the writer never
//!   finished (the file was rotated, deleted or truncated first) is emitted once, when the file
//!   is left, with [`FollowedLine::unterminated`] set.
//! - **Long lines**: a line longer than [`FollowConfig::max_line_bytes`] is emitted once, cut to
//!   that many bytes (at a UTF-8 boundary), with [`FollowedLine::truncated`] set, when its `\n`
//!   arrives; the rest is read and discarded, never held.
//! - **Restart**: a [`Checkpoint`] holds the file being read (identity, byte offset of the next
//!   line, line number) and the rotated siblings already accounted for. Resuming from it reads
//!   the same file from that offset even if it was rotated while the daemon was down (found among
//!   the siblings by identity, or, if it was copy-truncated, by its copy), then the siblings that
//!   are newer, then the current file. A checkpoint whose file no longer exists counts a
//!   `checkpoint_misses` and resumes with the siblings not yet accounted for, then the current
//!   file from 0.
//! - **An empty file** has no fingerprint. If it is filled, copied and truncated between two
//!   polls, the copy is still read first: when nothing of a file has been read yet, siblings
//!   listed before it and not accounted for are read before it.
//! - **Known limits**: lines written between logrotate's copy and its truncate (logrotate loses
//!   them). A truncation that leaves the file at least as long as the read position with the
//!   same first bytes (the same lines written again) is not seen. A followed file copy-truncated
//!   and then deleted before the next poll is read right after its copy (first, if it was empty
//!   at the last look), before siblings that appeared meanwhile: nothing tells their order. A
//!   sibling that appears while the current file is being read, and is neither a copy of it nor
//!   a rotation of it, is read after the current file is left. Gzipped siblings are never read,
//!   so a daemon down across two rotations with `compress` but no `delaycompress` misses one.
//!   `journalctl` 252 with `-f` reads the current boot only; a cursor from an earlier boot
//!   resumes at this boot's first entry.
//!
//! # Memory
//!
//! At most one partial line ([`FollowConfig::max_line_bytes`]) per follower, and at most
//! [`FollowConfig::max_batch_lines`] lines or [`FollowConfig::max_batch_bytes`] bytes (plus one
//! line) per batch; [`spawn`]'s channel holds at most [`FollowConfig::channel_capacity`] batches.
//! With [`OnFull::Drop`] a batch that finds the channel full is dropped and counted in
//! `lines_dropped`; with [`OnFull::Wait`] (the default) the follower stops reading until there is
//! room, the file on disk being the buffer.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

mod journal;

pub use journal::{
    DEFAULT_JOURNAL_CHANNEL_CAPACITY, DEFAULT_RESTART_BACKOFF, JournalConfig, JournalFollower,
    JournalHandle, JournalLine, JournalStats, MAX_JOURNAL_ENTRY_BYTES,
};

/// Errors following a log.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The followed file, a rotated sibling or the directory holding them could not be read.
    #[error("cannot follow {}: {error}", path.display())]
    FollowFailed {
        /// The followed path.
        path: PathBuf,
        /// The I/O error.
        error: io::Error,
    },
    /// The checkpoint file could not be written (or synced, or renamed into place).
    #[error("cannot write checkpoints {}: {error}", path.display())]
    CheckpointWriteFailed {
        /// The checkpoint file.
        path: PathBuf,
        /// The I/O error.
        error: io::Error,
    },
    /// The checkpoint file could not be read, is not valid JSON, or has an unknown version.
    #[error("cannot read checkpoints {}: {detail}", path.display())]
    CheckpointReadFailed {
        /// The checkpoint file.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

// === Config ===

/// How many first bytes of a file identify it, with its `(dev, inode)`.
pub const FINGERPRINT_BYTES: usize = 256;
/// Default [`FollowConfig::max_line_bytes`]: 64 KiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024;
/// Default [`FollowConfig::poll_interval`]: 250 ms.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(250);
/// Default [`FollowConfig::rotate_wait`]: 5 s, fluent-bit's `Rotate_Wait`: a writer that goes
/// on writing to its renamed file for a few seconds (until logrotate's `postrotate` signal
/// reaches it, or one line a second) loses nothing; 1 s lost the lines of a writer a second
/// apart.
pub const DEFAULT_ROTATE_WAIT: Duration = Duration::from_secs(5);
/// Default [`FollowConfig::max_batch_lines`]: 1024.
pub const DEFAULT_MAX_BATCH_LINES: usize = 1024;
/// Default [`FollowConfig::max_batch_bytes`]: 1 MiB.
pub const DEFAULT_MAX_BATCH_BYTES: usize = 1 << 20;
/// Default [`FollowConfig::channel_capacity`]: 8 batches.
pub const DEFAULT_CHANNEL_CAPACITY: usize = 8;
/// The longest delay between two attempts after errors, in [`spawn`] and for `journalctl`.
pub const MAX_RETRY_BACKOFF: Duration = Duration::from_secs(30);
/// The version written in checkpoint files; [`load_checkpoints`] refuses others.
pub const CHECKPOINT_VERSION: u32 = 1;

/// Where a follower starts in a file when it has no checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadFrom {
    /// From the first byte of the current file (rotated siblings present at start are history
    /// and are not read).
    #[default]
    Beginning,
    /// After the last complete line of the current file (an unfinished last line is read when
    /// it is finished).
    End,
    /// At most about this many last bytes of the current file: from the start of the line
    /// holding the byte this many before the end (the whole file when it is smaller). For a
    /// first start that looks back (the daemon's `log_lookback`), bounded however large the
    /// file. A line longer than [`FollowConfig::max_line_bytes`] there is read from the cut.
    Tail(u64),
}

/// What [`spawn`] does with a batch when the channel is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnFull {
    /// Wait for room: reading stops, the file is the buffer, nothing is lost while the file
    /// stays on disk.
    #[default]
    Wait,
    /// Drop the batch and count its lines in [`FollowStats::lines_dropped`]; the next batch's
    /// checkpoint moves past them.
    Drop,
}

/// How a [`Follower`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowConfig {
    /// Lines longer than this many bytes (without the `\n`) are cut to it and flagged
    /// [`FollowedLine::truncated`]. Default [`DEFAULT_MAX_LINE_BYTES`]; at least 1.
    pub max_line_bytes: usize,
    /// How long [`spawn`] sleeps when a poll found nothing more to read. Default
    /// [`DEFAULT_POLL_INTERVAL`].
    pub poll_interval: Duration,
    /// How long a file that is no longer at the path (renamed or deleted) must have stopped
    /// growing before the follower leaves it. Default [`DEFAULT_ROTATE_WAIT`]; lines of the new
    /// file wait that long.
    pub rotate_wait: Duration,
    /// Where to start without a checkpoint. Default [`ReadFrom::Beginning`].
    pub read_from: ReadFrom,
    /// At most this many lines per [`Batch`]. Default [`DEFAULT_MAX_BATCH_LINES`]; at least 1.
    pub max_batch_lines: usize,
    /// A poll stops once it has read this many bytes (the batch may exceed it by one line).
    /// Default [`DEFAULT_MAX_BATCH_BYTES`]; at least 1.
    pub max_batch_bytes: usize,
    /// Batches [`spawn`]'s channel holds. Default [`DEFAULT_CHANNEL_CAPACITY`]; at least 1.
    pub channel_capacity: usize,
    /// What [`spawn`] does when the channel is full. Default [`OnFull::Wait`].
    pub on_full: OnFull,
}

impl Default for FollowConfig {
    fn default() -> Self {
        FollowConfig {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            poll_interval: DEFAULT_POLL_INTERVAL,
            rotate_wait: DEFAULT_ROTATE_WAIT,
            read_from: ReadFrom::Beginning,
            max_batch_lines: DEFAULT_MAX_BATCH_LINES,
            max_batch_bytes: DEFAULT_MAX_BATCH_BYTES,
            channel_capacity: DEFAULT_CHANNEL_CAPACITY,
            on_full: OnFull::Wait,
        }
    }
}

// === Checkpoints ===

/// The first bytes of a file, as an FNV-1a 64-bit hash of its first `len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fingerprint {
    /// How many first bytes are hashed (at most [`FINGERPRINT_BYTES`]; 0 for an empty file).
    pub len: u32,
    /// FNV-1a 64 of those bytes, as 16 hex digits.
    #[serde(with = "hex_u64")]
    pub fnv1a: u64,
}

impl Fingerprint {
    /// The fingerprint of `head`, the first bytes of a file.
    pub fn of(head: &[u8]) -> Fingerprint {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in head {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Fingerprint {
            len: head.len() as u32,
            fnv1a: h,
        }
    }

    /// Whether a file whose first bytes are `head` starts with the bytes this was taken of.
    pub fn matches(&self, head: &[u8]) -> bool {
        let len = self.len as usize;
        head.len() >= len && Fingerprint::of(&head[..len]) == *self
    }
}

mod hex_u64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        let s = String::deserialize(d)?;
        u64::from_str_radix(&s, 16).map_err(serde::de::Error::custom)
    }
}

/// A file's identity: `(dev, inode)` and its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileKey {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub inode: u64,
    /// The first bytes, when they were last looked at.
    pub fingerprint: Fingerprint,
}

/// A position in a file: the next line starts at `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilePosition {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub inode: u64,
    /// The file's first bytes, when they were last looked at.
    pub fingerprint: Fingerprint,
    /// The byte offset right after the last line handed out (always at a line start).
    pub offset: u64,
    /// How many lines of this file were handed out (the next one is `line + 1`).
    pub line: u64,
}

/// Where a [`Follower`] resumes: persist the checkpoint of a batch once its lines are processed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// The file being read; `None` while waiting for the path to name a file.
    pub file: Option<FilePosition>,
    /// Rotated siblings already read to their end (or present at the first start, which are
    /// history): never read again.
    pub seen: Vec<FileKey>,
}

/// Every follower's checkpoint, as [`save_checkpoints`] writes them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checkpoints {
    /// File followers, by followed path.
    pub files: BTreeMap<PathBuf, Checkpoint>,
    /// Journal followers, by [`journal_name`](crate::journal_name) (the unit, or
    /// `<unit>@<directory>` for a journal directory): the `__CURSOR` of the last entry handed
    /// out.
    pub journald: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckpointFile {
    version: u32,
    #[serde(default)]
    files: BTreeMap<PathBuf, Checkpoint>,
    #[serde(default)]
    journald: BTreeMap<String, String>,
}

/// Writes `checkpoints` to `path` as versioned JSON (`{"version":1,"files":…,"journald":…}`),
/// atomically: a temporary file beside it, fsync, rename over `path`, fsync of the directory.
///
/// # Errors
/// [`Error::CheckpointWriteFailed`], also for a followed path that is not UTF-8.
pub fn save_checkpoints(path: &Path, checkpoints: &Checkpoints) -> Result<()> {
    use std::io::Write as _;
    let fail = |error| Error::CheckpointWriteFailed {
        path: path.to_path_buf(),
        error,
    };
    let file = CheckpointFile {
        version: CHECKPOINT_VERSION,
        files: checkpoints.files.clone(),
        journald: checkpoints.journald.clone(),
    };
    let json = serde_json::to_vec_pretty(&file).map_err(|e| fail(io::Error::other(e)))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(&json)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    };
    write().map_err(|error| {
        let _ = std::fs::remove_file(&tmp);
        fail(error)
    })
}

/// Reads what [`save_checkpoints`] wrote. A missing file is no checkpoints.
///
/// # Errors
/// [`Error::CheckpointReadFailed`] for an unreadable file, invalid JSON or another version.
pub fn load_checkpoints(path: &Path) -> Result<Checkpoints> {
    let fail = |detail: String| Error::CheckpointReadFailed {
        path: path.to_path_buf(),
        detail,
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Checkpoints::default()),
        Err(e) => return Err(fail(e.to_string())),
    };
    let version = serde_json::from_slice::<serde_json::Value>(&bytes)
        .map_err(|e| fail(e.to_string()))?
        .get("version")
        .and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(CHECKPOINT_VERSION)) {
        return Err(fail(format!(
            "version {} is not {CHECKPOINT_VERSION}",
            version.map_or("missing".to_string(), |v| v.to_string())
        )));
    }
    let file: CheckpointFile = serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
    Ok(Checkpoints {
        files: file.files,
        journald: file.journald,
    })
}

// === Lines, batches, stats ===

/// One line of a followed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedLine {
    /// The text, without its `\n`; lossy UTF-8; at most [`FollowConfig::max_line_bytes`] bytes.
    pub text: String,
    /// The path the file had when the follower opened it (a file read after a rotation has its
    /// rotated name, the one being followed keeps the followed path after it is rotated).
    pub origin: Arc<Path>,
    /// The byte offset of the line's first byte in that file.
    pub offset: u64,
    /// The 1-based line number in that file (counted since the last truncation; with
    /// [`ReadFrom::End`], since the start position).
    pub line_number: u64,
    /// The line was longer than [`FollowConfig::max_line_bytes`] and was cut.
    pub truncated: bool,
    /// The line has no `\n`: the file was rotated away, deleted or truncated before the writer
    /// finished it.
    pub unterminated: bool,
}

/// What one [`Follower::poll`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Complete lines, in file order.
    pub lines: Vec<FollowedLine>,
    /// Where to resume after these lines.
    pub checkpoint: Checkpoint,
    /// Nothing more could be read now: the next poll should wait. `false` when the poll stopped
    /// at [`FollowConfig::max_batch_lines`] or [`FollowConfig::max_batch_bytes`].
    pub caught_up: bool,
}

/// A failure of the last poll (or `journalctl` run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowFailure {
    /// When it happened.
    pub at: SystemTime,
    /// The error, displayed.
    pub message: String,
    /// How many polls in a row failed.
    pub consecutive: u32,
}

/// A follower's counters, since it was created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FollowStats {
    /// Lines handed out (including the truncated and unterminated ones).
    pub lines_read: u64,
    /// Bytes read from files.
    pub bytes_read: u64,
    /// Lines cut to [`FollowConfig::max_line_bytes`].
    pub lines_truncated: u64,
    /// Lines handed out without their `\n` (see [`FollowedLine::unterminated`]).
    pub lines_unterminated: u64,
    /// Lines dropped because [`spawn`]'s channel was full ([`OnFull::Drop`]).
    pub lines_dropped: u64,
    /// Times the followed file was left after the path stopped naming it (rename or deletion).
    pub rotations: u64,
    /// Times a file was found truncated (copytruncate, `: > file`), while running or while down.
    pub truncations: u64,
    /// Files that were at the path and may have been lost unread (see the module docs, *Fast
    /// rotation*): a rotation noticed while [`MAX_HELD`] files were already held open, or files
    /// the directory's change events (inotify) say were created at the path beyond those the
    /// follower saw there.
    pub rotations_missed: u64,
    /// Restarts whose checkpointed file could not be found.
    pub checkpoint_misses: u64,
    /// When the last line was handed out.
    pub last_line_at: Option<SystemTime>,
    /// When the path was first found naming no file, in the run of the follower's looks that
    /// find none up to now; `None` while it names one. A wrong path or a missing mount stays
    /// `Some`; a rotation by rename, between the rename and the new file, only for a moment.
    pub path_missing_since: Option<SystemTime>,
    /// When the last poll ended, successfully or not.
    pub last_poll_at: Option<SystemTime>,
    /// The last poll's failure; `None` once a poll succeeds.
    pub last_error: Option<FollowFailure>,
}

// === Follower ===

/// `(dev, inode)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(meta: &std::fs::Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// A file met at the path, told apart from a later file that reuses its inode by its birth time
/// (`None` where the file system keeps none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Arrival {
    id: FileId,
    birth: Option<SystemTime>,
}

impl Arrival {
    fn of(file: &File, id: FileId) -> Arrival {
        Arrival {
            id,
            birth: birth(file),
        }
    }
}

/// A file accounted for, and how many listings in a row missed it.
#[derive(Debug, Clone, Copy)]
struct Known {
    fingerprint: Fingerprint,
    missing: u8,
    /// Where this run of the follower left it (offset of the next line, lines read), when it
    /// read it: a file that comes back to the path is read on from there.
    left_at: Option<(u64, u64)>,
}

/// Listings in a row that must miss a known file before it is forgotten (one miss can be a
/// rename racing the directory read).
const FORGET_AFTER_MISSES: u8 = 3;
/// Known files kept at most.
const MAX_KNOWN: usize = 1024;
/// Read buffer size.
const READ_CHUNK: usize = 64 * 1024;
/// Files the follower holds open at most while it drains an earlier one (see *Fast rotation*).
pub const MAX_HELD: usize = 16;
/// Files kept in [`Follower::arrived`] at most: more than are ever held or left unread at once.
const MAX_ARRIVED: usize = 4 * MAX_HELD;
/// Steps one poll takes at most.
const MAX_STEPS_PER_POLL: usize = 10_000;

/// The file being read.
#[derive(Debug)]
struct Open {
    file: File,
    id: FileId,
    origin: Arc<Path>,
    /// The first bytes (at most [`FINGERPRINT_BYTES`]) when last looked at.
    head: Vec<u8>,
    /// Start of the next line to hand out.
    offset: u64,
    /// Bytes consumed (`offset` plus the partial line).
    read_pos: u64,
    /// The partial line's first bytes, at most `max_line_bytes`.
    pending: Vec<u8>,
    /// The partial line's full length.
    pending_len: u64,
    /// Lines handed out from this file.
    line: u64,
    /// The path named this file at some poll.
    was_live: bool,
    /// The path named this file at the last step.
    live: bool,
    /// When the file was created (`statx` birth time, else its modification time), to order
    /// files held during fast rotation among the siblings.
    born: Option<SystemTime>,
    /// The size at which the end was reached, and since when it has not grown.
    eof: Option<(u64, Instant)>,
}

impl Open {
    fn at(entry: Entry, offset: u64, line: u64) -> Open {
        let born = born(&entry.file);
        Open {
            file: entry.file,
            id: entry.id,
            origin: Arc::from(entry.path.as_path()),
            head: entry.head,
            offset,
            read_pos: offset,
            pending: Vec::new(),
            pending_len: 0,
            line,
            was_live: false,
            live: false,
            born,
            eof: None,
        }
    }

    /// Re-reads the first bytes. `true` when the file shrank below what was read or its first
    /// bytes changed: it was truncated (and maybe written again) since the last look.
    fn check_truncated(&mut self) -> io::Result<bool> {
        let size = self.file.metadata()?.len();
        if size < self.read_pos {
            return Ok(true);
        }
        let now = read_head(&self.file, size)?;
        if !now.starts_with(&self.head) {
            return Ok(true);
        }
        self.head = now;
        Ok(false)
    }

    fn reset(&mut self) {
        self.head.clear();
        self.offset = 0;
        self.read_pos = 0;
        self.pending = Vec::new();
        self.pending_len = 0;
        self.line = 0;
        self.eof = None;
    }

    /// Read to its end, and not grown for `wait`: since the end was reached, or by its
    /// modification time (a file held open during fast rotation was written long before).
    fn quiet(&self, wait: Duration) -> bool {
        self.eof.is_some_and(|(size, since)| {
            since.elapsed() >= wait
                || self.file.metadata().is_ok_and(|m| {
                    m.len() == size
                        && m.modified()
                            .ok()
                            .and_then(|t| t.elapsed().ok())
                            .is_some_and(|e| e >= wait)
                })
        })
    }

    fn position(&self) -> FilePosition {
        FilePosition {
            dev: self.id.dev,
            inode: self.id.ino,
            fingerprint: Fingerprint::of(&self.head),
            offset: self.offset,
            line: self.line,
        }
    }
}

/// A file found at the path or among its siblings, opened.
#[derive(Debug)]
struct Entry {
    file: File,
    path: PathBuf,
    id: FileId,
    size: u64,
    head: Vec<u8>,
}

/// The rotated siblings, oldest first, and the file at the path.
#[derive(Debug, Default)]
struct Listing {
    siblings: Vec<Entry>,
    path: Option<Entry>,
}

impl Listing {
    fn contains(&self, id: FileId) -> bool {
        self.path.as_ref().is_some_and(|p| p.id == id) || self.siblings.iter().any(|e| e.id == id)
    }
}

/// What a step over the open file decided.
enum Step {
    /// Go on with the same file.
    Again,
    /// The batch is full.
    Full,
    /// Nothing more to read now.
    CaughtUp,
    /// Leave the file (it was finished, or files before it must be read first).
    Close,
}

/// Follows one log file; see the [module docs](self) for what happens on rotation, truncation,
/// deletion and restarts.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    config: FollowConfig,
    /// `Some` until the first poll has placed the follower: the checkpoint to resume from.
    start: Option<Option<Checkpoint>>,
    current: Option<Open>,
    /// A truncated file set aside while its copy is read; read from 0 after the copy if it is no
    /// longer listed (deleted), otherwise found again through the listing.
    orphan: Option<Open>,
    /// Files the path named while an earlier file was still being drained, held open (so a
    /// rename over them or a deletion loses nothing), oldest first, at most [`MAX_HELD`].
    held: Vec<Open>,
    /// The last file that could not be held, counted once in `unheld_count`.
    unheld: Option<FileId>,
    /// Files that could not be held: `rotations_missed` when there is no inotify watch.
    unheld_count: u64,
    /// Counts the files created at the path (inotify on its directory), when a watch could be
    /// set; `None` until the first poll tries.
    created: Option<Option<CreatedAtPath>>,
    /// Files created at the path that the follower took (held, opened at the path, or read as
    /// a sibling) or found already read, since the first poll; see [`Follower::arrive`].
    arrivals: u64,
    /// The files counted in `arrivals` and not yet left, most recent last, at most
    /// [`MAX_ARRIVED`]: a file is counted once however often it is met.
    arrived: VecDeque<Arrival>,
    /// The file the path named at the last look, to tell a file the follower has come back to
    /// the path (renamed onto it: a creation event) from one that never left.
    path_id: Option<FileId>,
    /// When the watch was set: a sibling born before it was not created at the path under the
    /// watch's eye, so reading it is no arrival.
    watched_since: Option<SystemTime>,
    /// The creation count as of the previous poll.
    created_settled: u64,
    known: HashMap<FileId, Known>,
    /// Insertion order of `known`, to bound it.
    known_order: Vec<FileId>,
    stats: FollowStats,
    buf: Vec<u8>,
}

impl Follower {
    /// A follower of `path`, resuming from `checkpoint` (what a previous follower's
    /// [`Batch::checkpoint`] said) or starting at [`FollowConfig::read_from`]. Does no I/O: the
    /// first [`poll`](Follower::poll) places it. Zero limits in `config` are raised to 1.
    pub fn new(
        path: impl Into<PathBuf>,
        checkpoint: Option<Checkpoint>,
        config: FollowConfig,
    ) -> Self {
        let mut config = config;
        config.max_line_bytes = config.max_line_bytes.max(1);
        config.max_batch_lines = config.max_batch_lines.max(1);
        config.max_batch_bytes = config.max_batch_bytes.max(1);
        config.channel_capacity = config.channel_capacity.max(1);
        Follower {
            path: path.into(),
            config,
            start: Some(checkpoint),
            current: None,
            orphan: None,
            held: Vec::new(),
            unheld: None,
            unheld_count: 0,
            created: None,
            arrivals: 0,
            arrived: VecDeque::new(),
            path_id: None,
            watched_since: None,
            created_settled: 0,
            known: HashMap::new(),
            known_order: Vec::new(),
            stats: FollowStats::default(),
            buf: Vec::new(),
        }
    }

    /// The followed path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The configuration (with zero limits raised to 1).
    pub fn config(&self) -> &FollowConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &FollowStats {
        &self.stats
    }

    /// True while a rotation is being followed: the file being read is no longer at the path
    /// and not yet left, or newer files are held. [`spawn`] then polls five times as often, so
    /// a writer rotating faster than [`FollowConfig::poll_interval`] has each of its files seen.
    pub fn rotating(&self) -> bool {
        !self.held.is_empty()
            || self
                .current
                .as_ref()
                .is_some_and(|c| !c.live && !c.quiet(self.config.rotate_wait))
    }

    /// While the file being read is no longer at the path: holds the file now at the path open,
    /// unless it is already read, held or being read.
    fn hold_path_file(&mut self, cur: &Open) -> io::Result<()> {
        let Some(e) = open_entry(&self.path)? else {
            self.path_id = None;
            return Ok(());
        };
        if e.id == cur.id || self.held.iter().any(|h| h.id == e.id) {
            self.look(&e.file, e.id);
            return Ok(());
        }
        let known = self.is_known(&e);
        if self.held.len() >= MAX_HELD {
            if self.unheld != Some(e.id) {
                self.unheld = Some(e.id);
                self.unheld_count += 1;
            }
            return Ok(());
        }
        self.arrive(&e.file, e.id);
        self.path_id = Some(e.id);
        // A file read before and back at the path (renamed onto it) is held too, to read on
        // from where it was left: it may be written again, and renamed away again.
        let mut open = if known {
            self.reopen_known(e)
        } else {
            Open::at(e, 0, 0)
        };
        open.was_live = true;
        open.live = true;
        self.held.push(open);
        Ok(())
    }

    /// Where a follower would resume right after the lines handed out so far: the checkpoint
    /// given to [`new`](Follower::new) before the first poll (`None` if there was none).
    pub fn checkpoint(&self) -> Option<Checkpoint> {
        if let Some(start) = &self.start {
            return start.clone();
        }
        let mut seen: Vec<FileKey> = self
            .known_order
            .iter()
            .filter_map(|id| {
                self.known.get(id).map(|k| FileKey {
                    dev: id.dev,
                    inode: id.ino,
                    fingerprint: k.fingerprint,
                })
            })
            .collect();
        seen.dedup();
        Some(Checkpoint {
            file: self.current.as_ref().map(Open::position),
            seen,
        })
    }

    /// Reads what is there now: complete lines, up to the batch limits, and the checkpoint after
    /// them. Never blocks on the file's writer.
    ///
    /// # Errors
    /// [`Error::FollowFailed`] when the path or its directory cannot be read (a missing file is
    /// not an error: the follower waits for it). The follower stays usable: the next poll retries
    /// from the same position. Lines read before an error in the same poll are returned, and the
    /// error with the next poll.
    pub fn poll(&mut self) -> Result<Batch> {
        let mut lines = Vec::new();
        let mut bytes = 0usize;
        let res = self.poll_into(&mut lines, &mut bytes);
        let now = SystemTime::now();
        self.stats.last_poll_at = Some(now);
        // `path_id` is what the last look at the path found there (each step looks).
        if self.path_id.is_some() {
            self.stats.path_missing_since = None;
        } else {
            self.stats.path_missing_since.get_or_insert(now);
        }
        if !lines.is_empty() {
            self.stats.last_line_at = Some(now);
        }
        let caught_up = match res {
            Ok(caught_up) => {
                self.stats.last_error = None;
                caught_up
            }
            Err(error) => {
                let consecutive = self.stats.last_error.as_ref().map_or(0, |f| f.consecutive) + 1;
                let error = Error::FollowFailed {
                    path: self.path.clone(),
                    error,
                };
                self.stats.last_error = Some(FollowFailure {
                    at: now,
                    message: error.to_string(),
                    consecutive,
                });
                if lines.is_empty() {
                    return Err(error);
                }
                false
            }
        };
        Ok(Batch {
            lines,
            checkpoint: self.checkpoint().unwrap_or_default(),
            caught_up,
        })
    }

    fn poll_into(&mut self, lines: &mut Vec<FollowedLine>, bytes: &mut usize) -> io::Result<bool> {
        if self.created.is_none() {
            self.created = Some(CreatedAtPath::watch(&self.path));
            self.watched_since = Some(SystemTime::now());
            // The file at the path now was created before the watch: met, not counted.
            if let Some(e) = open_entry(&self.path)? {
                self.arrived.push_back(Arrival::of(&e.file, e.id));
                self.path_id = Some(e.id);
            }
        }
        let res = self.poll_steps(lines, bytes);
        // Creations counted by the previous poll have had this one to be seen: only those
        // count, so an event that arrives before the follower looks is not a miss.
        let settled = self.created_settled;
        if let Some(Some(c)) = &self.created {
            self.created_settled = c.count();
        }
        // With a watch, a file that could not be held is missed only if it is never taken
        // (it may still be read as a sibling): the creations tell. They are compared only when
        // the follower has settled (reading the file at the path, nothing held): while it
        // drains a rotation, a file created at the path may still be waiting as a sibling.
        // Without a watch, the files that could not be held are all there is to count.
        let missed = match &self.created {
            Some(Some(_)) if self.settled() => settled.saturating_sub(self.arrivals),
            Some(Some(_)) => 0,
            _ => self.unheld_count,
        };
        self.stats.rotations_missed = self.stats.rotations_missed.max(missed);
        res
    }

    /// Reading the file at the path, nothing held: every file created at the path before it has
    /// been taken or is lost.
    fn settled(&self) -> bool {
        self.held.is_empty() && self.current.as_ref().is_some_and(|c| c.live)
    }

    /// The path names `file` (`id`), a file the follower holds or reads: if the path named
    /// another file or none at the last look, this one was renamed back onto it, a creation
    /// event.
    fn look(&mut self, file: &File, id: FileId) {
        if self.path_id != Some(id) && !self.arrive(file, id) {
            // Counted when it first arrived, and back now.
            self.arrivals += 1;
        }
        self.path_id = Some(id);
    }

    /// Counts `file` (`id`) as a file created at the path and accounted for, unless it was
    /// counted already; whether it counted. Only files the follower takes or has read count: a
    /// file merely seen at the path and renamed over before it could be held is lost, and the
    /// creations the watch counts beyond `arrivals` say so.
    fn arrive(&mut self, file: &File, id: FileId) -> bool {
        let arrival = Arrival::of(file, id);
        if self.arrived.contains(&arrival) {
            return false;
        }
        self.arrivals += 1;
        self.arrived.push_back(arrival);
        if self.arrived.len() > MAX_ARRIVED {
            self.arrived.pop_front();
        }
        true
    }

    fn poll_steps(&mut self, lines: &mut Vec<FollowedLine>, bytes: &mut usize) -> io::Result<bool> {
        if let Some(start) = self.start.take()
            && let Err(e) = self.place(start.clone())
        {
            self.start = Some(start);
            return Err(e);
        }
        // Each step reads, or leaves a file, or finds nothing to do; the bound only guards
        // against a directory changing faster than it can be listed.
        for _ in 0..MAX_STEPS_PER_POLL {
            if lines.len() >= self.config.max_batch_lines || *bytes >= self.config.max_batch_bytes {
                return Ok(false);
            }
            let Some(mut cur) = self.current.take() else {
                match self.pick_next()? {
                    Some(open) => {
                        self.current = Some(open);
                        continue;
                    }
                    None => return Ok(true),
                }
            };
            let step = self.step(&mut cur, lines, bytes);
            match step {
                Ok(Step::Again) => self.current = Some(cur),
                Ok(Step::Full) => {
                    self.current = Some(cur);
                    return Ok(false);
                }
                Ok(Step::CaughtUp) => {
                    self.current = Some(cur);
                    return Ok(true);
                }
                Ok(Step::Close) => {}
                Err(e) => {
                    self.current = Some(cur);
                    return Err(e);
                }
            }
        }
        Ok(false)
    }

    /// The first poll: where to start.
    fn place(&mut self, start: Option<Checkpoint>) -> io::Result<()> {
        let listing = self.list()?;
        let Some(ck) = start else {
            for e in &listing.siblings {
                self.remember(e.id, Fingerprint::of(&e.head), None);
            }
            if let Some(p) = listing.path {
                let at = match self.config.read_from {
                    ReadFrom::Beginning => 0,
                    ReadFrom::End => last_line_start(&p.file, p.size, self.config.max_line_bytes)?,
                    ReadFrom::Tail(n) if p.size <= n => 0,
                    ReadFrom::Tail(n) => {
                        last_line_start(&p.file, p.size - n, self.config.max_line_bytes)?
                    }
                };
                self.current = Some(Open::at(p, at, 0));
            }
            return Ok(());
        };
        for key in &ck.seen {
            self.remember(
                FileId {
                    dev: key.dev,
                    ino: key.inode,
                },
                key.fingerprint,
                None,
            );
        }
        let Some(pos) = ck.file else {
            return Ok(());
        };
        let id = FileId {
            dev: pos.dev,
            ino: pos.inode,
        };
        let fp = pos.fingerprint;
        let Listing { siblings, path } = listing;
        let mut all: Vec<Entry> = siblings.into_iter().chain(path).collect();
        // The checkpointed file itself, wherever rotation put it.
        if let Some(i) = all
            .iter()
            .position(|e| e.id == id && fp.matches(&e.head) && e.size >= pos.offset)
        {
            self.current = Some(Open::at(all.swap_remove(i), pos.offset, pos.line));
            return Ok(());
        }
        // Copy-truncated while we were down: its copy.
        if fp.len > 0
            && let Some(i) = all.iter().position(|e| {
                e.id != id && !self.is_known(e) && fp.matches(&e.head) && e.size >= pos.offset
            })
        {
            self.stats.truncations += 1;
            self.current = Some(Open::at(all.swap_remove(i), pos.offset, pos.line));
            return Ok(());
        }
        self.stats.checkpoint_misses += 1;
        Ok(())
    }

    /// No file open: the oldest sibling not accounted for, a truncated file set aside, or the
    /// file at the path.
    fn pick_next(&mut self) -> io::Result<Option<Open>> {
        let listing = self.list()?;
        self.age_known(&listing);
        let live_head = listing
            .path
            .as_ref()
            .filter(|p| !self.is_known(p))
            .map(|p| p.head.clone());
        // A truncated file whose copy was just read: if it was deleted since, nothing else
        // holds its new content; read it now (its order relative to siblings that appeared in
        // the meantime cannot be known). If it is still listed, the listing places it.
        if let Some(orphan) = self.orphan.take()
            && !listing.contains(orphan.id)
        {
            return Ok(Some(orphan));
        }
        let Listing { siblings, path } = listing;
        let path_birth = path.as_ref().and_then(|p| birth(&p.file));
        // Files held during a fast rotation come before the path, after any sibling not
        // accounted for that was created before the oldest of them.
        let first_held = self.held.first().and_then(|h| h.born);
        for e in siblings {
            if path.as_ref().is_some_and(|p| p.id == e.id) || self.held.iter().any(|h| h.id == e.id)
            {
                continue;
            }
            if !self.is_known(&e) && !deferred(&e, live_head.as_deref()) {
                let older = match (born(&e.file), first_held) {
                    (Some(a), Some(b)) => a <= b,
                    _ => true,
                };
                if self.held.is_empty() || older {
                    // Created at the path (rename rotation) while the follower looked
                    // elsewhere, and read all the same. Not when it was born before the watch
                    // (rotated while the daemon was down) or after the file now at the path (a
                    // copy made beside it, as copytruncate's): no creation at the path was
                    // counted for it.
                    let at_path = birth(&e.file).is_none_or(|b| {
                        self.watched_since.is_none_or(|w| b >= w)
                            && path_birth.is_none_or(|p| b <= p)
                    });
                    if at_path {
                        self.arrive(&e.file, e.id);
                    }
                    return Ok(Some(Open::at(e, 0, 0)));
                }
            }
        }
        if !self.held.is_empty() {
            return Ok(Some(self.held.remove(0)));
        }
        Ok(path.map(|p| {
            self.arrive(&p.file, p.id);
            self.path_id = Some(p.id);
            if self.is_known(&p) {
                // Already read (it came back to the path): only what follows.
                self.reopen_known(p)
            } else {
                Open::at(p, 0, 0)
            }
        }))
    }

    /// One step over the open file.
    fn step(
        &mut self,
        cur: &mut Open,
        lines: &mut Vec<FollowedLine>,
        bytes: &mut usize,
    ) -> io::Result<Step> {
        if cur.check_truncated()? {
            let listing = self.list()?;
            self.stats.truncations += 1;
            if !cur.head.is_empty() {
                let copy = listing.siblings.into_iter().find(|e| {
                    e.id != cur.id
                        && !self.is_known(e)
                        && e.head.starts_with(&cur.head)
                        && e.size >= cur.read_pos
                });
                if let Some(copy) = copy {
                    // Read the rest from the copy, then the truncated file from 0.
                    let truncated = Open {
                        file: std::mem::replace(&mut cur.file, copy.file),
                        id: cur.id,
                        origin: std::mem::replace(&mut cur.origin, Arc::from(copy.path.as_path())),
                        head: Vec::new(),
                        offset: 0,
                        read_pos: 0,
                        pending: Vec::new(),
                        pending_len: 0,
                        line: 0,
                        was_live: cur.was_live,
                        live: false,
                        born: cur.born,
                        eof: None,
                    };
                    self.orphan = Some(truncated);
                    cur.id = copy.id;
                    cur.head = copy.head;
                    cur.was_live = false;
                    cur.eof = None;
                    return Ok(Step::Again);
                }
            }
            // No copy: what was not read before the truncation is gone.
            if cur.pending_len > 0 {
                let end = cur.read_pos;
                self.emit(cur, lines, end, true);
            }
            cur.reset();
            return Ok(Step::Again);
        }
        let at_path = stat_id(&self.path)?;
        #[cfg(test)]
        if let Some(race) = RACE_AFTER_LOOK.with(|r| r.borrow_mut().take()) {
            race();
        }
        let live = at_path == Some(cur.id);
        if live {
            self.look(&cur.file, cur.id);
        } else if at_path.is_none() {
            self.path_id = None;
        }
        cur.was_live |= live;
        cur.live = live;
        if !live {
            self.hold_path_file(cur)?;
        }
        if cur.read_pos == 0 {
            // Nothing read yet (the file was empty when opened): siblings listed before it and
            // not accounted for (copies of an earlier content of it) come first; it is found
            // again through the listing. A file no longer listed (deleted) is read first.
            let listing = self.list()?;
            let older = listing.siblings.iter().chain(&listing.path);
            let older: Vec<&Entry> = older.take_while(|e| e.id != cur.id).collect();
            if listing.contains(cur.id)
                && older
                    .iter()
                    .any(|e| !self.is_known(e) && !deferred(e, Some(&cur.head)))
            {
                return Ok(Step::Close);
            }
        }
        if !self.read(cur, lines, bytes)? {
            return Ok(Step::Full);
        }
        if live || !cur.quiet(self.config.rotate_wait) {
            return Ok(Step::CaughtUp);
        }
        self.finish(cur, lines)?;
        Ok(Step::Close)
    }

    /// Reads from the read position to the end or until the batch is full; `true` at the end.
    fn read(
        &mut self,
        cur: &mut Open,
        lines: &mut Vec<FollowedLine>,
        bytes: &mut usize,
    ) -> io::Result<bool> {
        if self.buf.len() != READ_CHUNK {
            self.buf = vec![0; READ_CHUNK];
        }
        let mut buf = std::mem::take(&mut self.buf);
        let res = self.read_with(cur, lines, bytes, &mut buf);
        self.buf = buf;
        res
    }

    fn read_with(
        &mut self,
        cur: &mut Open,
        lines: &mut Vec<FollowedLine>,
        bytes: &mut usize,
        buf: &mut [u8],
    ) -> io::Result<bool> {
        let cap = self.config.max_line_bytes;
        loop {
            if lines.len() >= self.config.max_batch_lines || *bytes >= self.config.max_batch_bytes {
                return Ok(false);
            }
            let want = buf.len().min(self.config.max_batch_bytes - *bytes).max(1);
            let n = match cur.file.read_at(&mut buf[..want], cur.read_pos) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                if cur.eof.map(|(size, _)| size) != Some(cur.read_pos) {
                    cur.eof = Some((cur.read_pos, Instant::now()));
                }
                return Ok(true);
            }
            let base = cur.read_pos;
            let mut i = 0;
            let mut full = false;
            while i < n {
                match buf[i..n].iter().position(|&b| b == b'\n') {
                    Some(k) => {
                        push_capped(cur, &buf[i..i + k], cap);
                        i += k + 1;
                        self.emit(cur, lines, base + i as u64, false);
                        if lines.len() >= self.config.max_batch_lines {
                            full = true;
                            break;
                        }
                    }
                    None => {
                        push_capped(cur, &buf[i..n], cap);
                        i = n;
                    }
                }
            }
            cur.read_pos = base + i as u64;
            *bytes += i;
            self.stats.bytes_read += i as u64;
            if full {
                return Ok(false);
            }
        }
    }

    /// Hands out the partial line as a line ending at `end`.
    fn emit(
        &mut self,
        cur: &mut Open,
        lines: &mut Vec<FollowedLine>,
        end: u64,
        unterminated: bool,
    ) {
        let truncated = cur.pending_len > self.config.max_line_bytes as u64;
        lines.push(FollowedLine {
            text: to_text(&cur.pending, truncated),
            origin: cur.origin.clone(),
            offset: cur.offset,
            line_number: cur.line + 1,
            truncated,
            unterminated,
        });
        cur.offset = end;
        cur.line += 1;
        cur.pending_len = 0;
        if cur.pending.capacity() > 8 * 1024 {
            cur.pending = Vec::new();
        } else {
            cur.pending.clear();
        }
        self.stats.lines_read += 1;
        self.stats.lines_truncated += u64::from(truncated);
        self.stats.lines_unterminated += u64::from(unterminated);
    }

    /// Leaves a file read to its end that the path no longer names.
    fn finish(&mut self, cur: &mut Open, lines: &mut Vec<FollowedLine>) -> io::Result<()> {
        let listing = self.list()?;
        if cur.pending_len > 0 {
            let end = cur.read_pos;
            self.emit(cur, lines, end, true);
        }
        self.remember(
            cur.id,
            Fingerprint::of(&cur.head),
            Some((cur.offset, cur.line)),
        );
        // Left: if it comes back to the path, that is a new arrival.
        self.arrived.retain(|a| a.id != cur.id);
        // Copies of what was just read (logrotate `copy`, a copy whose truncate never came).
        for e in &listing.siblings {
            if e.id != cur.id
                && !self.is_known(e)
                && e.size > 0
                && e.size <= cur.read_pos
                && related(&e.head, &cur.head)
            {
                self.remember(e.id, Fingerprint::of(&e.head), None);
            }
        }
        if cur.was_live {
            self.stats.rotations += 1;
        }
        Ok(())
    }

    /// Opens a known file found at the path again: where this run left it, else at its end
    /// (known from a checkpoint: read before the restart).
    fn reopen_known(&self, e: Entry) -> Open {
        let left = self.known.get(&e.id).and_then(|k| k.left_at);
        let mut open = match left {
            Some((offset, line)) if offset <= e.size => Open::at(e, offset, line),
            _ => {
                let end = e.size;
                Open::at(e, end, 0)
            }
        };
        open.was_live = true;
        open
    }

    fn is_known(&self, e: &Entry) -> bool {
        self.known
            .get(&e.id)
            .is_some_and(|k| k.fingerprint.matches(&e.head))
    }

    /// Accounts for a file. An empty one is not remembered: its fingerprint would match any
    /// file that reuses its inode.
    fn remember(&mut self, id: FileId, fingerprint: Fingerprint, left_at: Option<(u64, u64)>) {
        if fingerprint.len == 0 {
            return;
        }
        if self
            .known
            .insert(
                id,
                Known {
                    fingerprint,
                    missing: 0,
                    left_at,
                },
            )
            .is_none()
        {
            self.known_order.push(id);
        } else {
            self.known_order.retain(|k| *k != id);
            self.known_order.push(id);
        }
        while self.known_order.len() > MAX_KNOWN {
            let old = self.known_order.remove(0);
            self.known.remove(&old);
        }
    }

    /// Forgets known files missing from several listings in a row.
    fn age_known(&mut self, listing: &Listing) {
        for (id, k) in &mut self.known {
            if listing.contains(*id) {
                k.missing = 0;
            } else {
                k.missing = k.missing.saturating_add(1);
            }
        }
        let known = &mut self.known;
        known.retain(|_, k| k.missing < FORGET_AFTER_MISSES);
        self.known_order.retain(|id| known.contains_key(id));
    }

    fn list(&self) -> io::Result<Listing> {
        let mut names = crate::with_rotated_siblings(&self.path);
        names.pop();
        let path = open_entry(&self.path)?;
        let mut siblings: Vec<Entry> = Vec::new();
        for name in names {
            if name.extension().is_some_and(|e| e == "gz") {
                continue;
            }
            if let Some(e) = open_entry(&name)?
                && !siblings.iter().any(|s| s.id == e.id)
            {
                siblings.push(e);
            }
        }
        Ok(Listing { siblings, path })
    }
}

#[cfg(test)]
thread_local! {
    /// Test only: run once, right after a step has looked which file the path names, to play a
    /// writer racing the follower between that look and its holding the file.
    static RACE_AFTER_LOOK: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        const { std::cell::RefCell::new(None) };
}

/// Counts the files created at a path (inotify `IN_CREATE` and `IN_MOVED_TO` of its name in
/// its directory); the watch lives as long as this.
#[derive(Debug)]
struct CreatedAtPath {
    _watcher: notify::RecommendedWatcher,
    count: Arc<std::sync::atomic::AtomicU64>,
}

impl CreatedAtPath {
    /// `None` when the directory cannot be watched (missing, or no inotify instance left): the
    /// count is then only what could not be held.
    fn watch(path: &Path) -> Option<CreatedAtPath> {
        use notify::Watcher as _;
        use notify::event::{CreateKind, EventKind, ModifyKind, RenameMode};
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())?
            .to_path_buf();
        let name = path.file_name()?.to_os_string();
        let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let c = count.clone();
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            let Ok(ev) = res else { return };
            let to = match ev.kind {
                EventKind::Create(CreateKind::File | CreateKind::Any) => ev.paths.first(),
                // A rename within the directory also comes as `Both`, after its `To`: only
                // the `To` counts.
                EventKind::Modify(ModifyKind::Name(RenameMode::To)) => ev.paths.first(),
                _ => None,
            };
            if to.is_some_and(|p| p.file_name() == Some(name.as_os_str())) {
                c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
        .ok()?;
        watcher
            .watch(&dir, notify::RecursiveMode::NonRecursive)
            .ok()?;
        Some(CreatedAtPath {
            _watcher: watcher,
            count,
        })
    }

    fn count(&self) -> u64 {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// When `file` was created: its birth time where the file system keeps one, else when it was
/// last modified.
fn born(file: &File) -> Option<SystemTime> {
    let m = file.metadata().ok()?;
    m.created().or_else(|_| m.modified()).ok()
}

/// When `file` was created, where the file system keeps a birth time (`statx`).
fn birth(file: &File) -> Option<SystemTime> {
    file.metadata().and_then(|m| m.created()).ok()
}

/// Not read yet: empty, or maybe a copy (in progress, or logrotate `copy`) of the live file.
fn deferred(e: &Entry, live_head: Option<&[u8]>) -> bool {
    e.size == 0 || live_head.is_some_and(|h| !h.is_empty() && related(&e.head, h))
}

/// One is a prefix of the other.
fn related(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

fn push_capped(cur: &mut Open, bytes: &[u8], cap: usize) {
    let room = cap.saturating_sub(cur.pending.len());
    cur.pending
        .extend_from_slice(&bytes[..bytes.len().min(room)]);
    cur.pending_len += bytes.len() as u64;
}

/// Lossy UTF-8; a cut line loses a trailing incomplete character.
fn to_text(bytes: &[u8], cut: bool) -> String {
    let bytes = match std::str::from_utf8(bytes) {
        Err(e) if cut && e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    };
    String::from_utf8_lossy(bytes).into_owned()
}

/// The first up to [`FINGERPRINT_BYTES`] bytes.
fn read_head(file: &File, size: u64) -> io::Result<Vec<u8>> {
    let want = size.min(FINGERPRINT_BYTES as u64) as usize;
    let mut head = vec![0; want];
    let mut got = 0;
    while got < want {
        match file.read_at(&mut head[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(got);
    Ok(head)
}

/// Opens a regular file; `None` when it does not exist (or is not a regular file).
/// The file at `path`, open; `None` when there is none. Something else there (a directory: a
/// hostPath mount of a file the host lacks makes one) is an error saying what it is, and is not
/// opened (a named pipe would block the open).
fn open_entry(path: &Path) -> io::Result<Option<Entry>> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(io::Error::other(format!(
                "{}, not a regular file",
                crate::file_kind(m.file_type())
            )));
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    }
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        // Replaced between the two looks: not there yet.
        return Ok(None);
    }
    let head = read_head(&file, meta.len())?;
    Ok(Some(Entry {
        file,
        path: path.to_path_buf(),
        id: FileId::of(&meta),
        size: meta.len(),
        head,
    }))
}

fn stat_id(path: &Path) -> io::Result<Option<FileId>> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(Some(FileId::of(&meta))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The offset after the last `\n` within the last `max_line_bytes + 1` bytes; 0 when the whole
/// file has none; `size` when a longer tail has none.
fn last_line_start(file: &File, size: u64, max_line_bytes: usize) -> io::Result<u64> {
    let window = size.min(max_line_bytes as u64 + 1);
    let mut tail = vec![0; window as usize];
    let from = size - window;
    let mut got = 0;
    while got < tail.len() {
        match file.read_at(&mut tail[got..], from + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    tail.truncate(got);
    Ok(match tail.iter().rposition(|&b| b == b'\n') {
        Some(i) => from + i as u64 + 1,
        None if from == 0 => 0,
        None => size,
    })
}

// === Async ===

/// A follower task started by [`spawn`].
#[derive(Debug)]
pub struct FollowHandle {
    stats: watch::Receiver<FollowStats>,
    task: JoinHandle<()>,
}

impl FollowHandle {
    /// The counters after the last poll.
    pub fn stats(&self) -> FollowStats {
        self.stats.borrow().clone()
    }

    /// The task has ended: the receiver was dropped, or it panicked (a bug). A follower whose
    /// polls fail keeps running and retrying; see [`FollowStats::last_error`].
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Stops the task.
    pub fn abort(&self) {
        self.task.abort();
    }
}

/// Runs `follower` in a tokio task, polling on the blocking pool: a poll that reads nothing more
/// sleeps [`FollowConfig::poll_interval`], a failed poll retries after a backoff doubling from
/// the poll interval up to [`MAX_RETRY_BACKOFF`]. Batches with lines, or with a checkpoint that
/// moved, go to the returned receiver (capacity [`FollowConfig::channel_capacity`], full channel
/// handled per [`FollowConfig::on_full`]). The task ends when the receiver is dropped.
///
/// # Panics
/// Outside a tokio runtime.
pub fn spawn(follower: Follower) -> (mpsc::Receiver<Batch>, FollowHandle) {
    let (tx, rx) = mpsc::channel(follower.config.channel_capacity);
    let (stats_tx, stats_rx) = watch::channel(follower.stats.clone());
    let task = tokio::spawn(run(follower, tx, stats_tx));
    (
        rx,
        FollowHandle {
            stats: stats_rx,
            task,
        },
    )
}

async fn run(mut follower: Follower, tx: mpsc::Sender<Batch>, stats: watch::Sender<FollowStats>) {
    let interval = follower.config.poll_interval;
    let mut backoff = interval;
    let mut last_sent: Option<Checkpoint> = follower.checkpoint();
    loop {
        let joined = tokio::task::spawn_blocking(move || {
            let res = follower.poll();
            (follower, res)
        })
        .await;
        let res;
        (follower, res) = match joined {
            Ok(x) => x,
            // A panic in poll is a bug; the task ends and the handle shows it finished.
            Err(_) => return,
        };
        match res {
            Ok(batch) => {
                backoff = interval;
                let caught_up = batch.caught_up;
                if !batch.lines.is_empty() || last_sent.as_ref() != Some(&batch.checkpoint) {
                    last_sent = Some(batch.checkpoint.clone());
                    match follower.config.on_full {
                        OnFull::Wait => {
                            if tx.send(batch).await.is_err() {
                                return;
                            }
                        }
                        OnFull::Drop => match tx.try_send(batch) {
                            Ok(()) => {}
                            Err(mpsc::error::TrySendError::Full(batch)) => {
                                follower.stats.lines_dropped += batch.lines.len() as u64;
                            }
                            Err(mpsc::error::TrySendError::Closed(_)) => return,
                        },
                    }
                }
                stats.send_replace(follower.stats.clone());
                if caught_up {
                    let wait = if follower.rotating() {
                        interval / 5
                    } else {
                        interval
                    };
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = tx.closed() => return,
                    }
                }
            }
            Err(_) => {
                stats.send_replace(follower.stats.clone());
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = tx.closed() => return,
                }
                backoff = (backoff * 2).min(MAX_RETRY_BACKOFF);
            }
        }
    }
}

#[cfg(test)]
mod tests;
