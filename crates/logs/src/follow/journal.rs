//! Following a systemd unit's journal: `journalctl -u <unit> -o json -f`, resuming right after
//! the `__CURSOR` of the last entry handed out, restarted with a backoff whenever it exits. The
//! journal is this machine's, or the files in [`JournalConfig::directory`]
//! (`journalctl --directory`).
//!
//! `journalctl` is the only reader of the journal format; this module only builds its
//! arguments and reads its JSON lines, one entry per line, each at most a bounded size.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::{DEFAULT_MAX_LINE_BYTES, FollowFailure, MAX_RETRY_BACKOFF, OnFull};

/// Default [`JournalConfig::channel_capacity`]: 1024 lines.
pub const DEFAULT_JOURNAL_CHANNEL_CAPACITY: usize = 1024;
/// Default [`JournalConfig::restart_backoff`]: 1 s.
pub const DEFAULT_RESTART_BACKOFF: Duration = Duration::from_secs(1);
/// How much of `journalctl`'s standard error a failure keeps.
const MAX_STDERR_BYTES: usize = 4096;

/// The longest JSON line of an entry read, 8 MiB by default: the one-shot reader's limit
/// (`journal_json::MAX_ENTRY_BYTES`), so an entry one reads the other reads too.
pub const MAX_JOURNAL_ENTRY_BYTES: usize = crate::journal_json::MAX_ENTRY_BYTES;

/// How a [`JournalFollower`] runs `journalctl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalConfig {
    /// The program. Default `journalctl` (found on `PATH`).
    pub journalctl: PathBuf,
    /// `journalctl --directory`: follow the journal files in this directory (and its machine-ID
    /// subdirectories), e.g. `/host/var/log/journal` for a host journal mounted into the pod, or
    /// a journal copied off a node. Default `None`: this machine's system journal. While it
    /// holds no journal file (or cannot be read), `journalctl` is not started: the run fails with
    /// `cannot read journal directory <dir>: …` in [`JournalStats::last_error`], and is retried
    /// with the backoff.
    pub directory: Option<PathBuf>,
    /// Arguments added before ours, e.g. `--namespace=<ns>`. Default none.
    pub extra_args: Vec<OsString>,
    /// Where to start without a cursor, in `journalctl --since` syntax (`@1764300000`,
    /// `-1h`, `2026-11-28 10:00`). Default: the time the follower was created, so a restart
    /// before the first entry loses nothing and repeats nothing.
    pub since: Option<String>,
    /// Messages longer than this many bytes are cut (at a UTF-8 boundary) and flagged
    /// [`JournalLine::truncated`]. Default [`DEFAULT_MAX_LINE_BYTES`]; at least 1. An entry whose
    /// JSON line is longer than [`MAX_JOURNAL_ENTRY_BYTES`] (or eight times this plus 64 KiB, if
    /// more) is read from its first bytes, its message cut, as the one-shot reader reads it; when
    /// they hold no cursor or `MESSAGE`, it counts in [`JournalStats::entries_too_long`].
    pub max_line_bytes: usize,
    /// Lines the channel holds. Default [`DEFAULT_JOURNAL_CHANNEL_CAPACITY`]; at least 1.
    pub channel_capacity: usize,
    /// What happens when the channel is full. Default [`OnFull::Wait`] (`journalctl` blocks on
    /// its pipe, the journal is the buffer).
    pub on_full: OnFull,
    /// The wait before restarting `journalctl` after it exits; doubles after a run that gave no
    /// entry, up to [`MAX_RETRY_BACKOFF`]. Default [`DEFAULT_RESTART_BACKOFF`].
    pub restart_backoff: Duration,
}

impl Default for JournalConfig {
    fn default() -> Self {
        JournalConfig {
            journalctl: PathBuf::from("journalctl"),
            directory: None,
            extra_args: Vec::new(),
            since: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            channel_capacity: DEFAULT_JOURNAL_CHANNEL_CAPACITY,
            on_full: OnFull::Wait,
            restart_backoff: DEFAULT_RESTART_BACKOFF,
        }
    }
}

/// One journal entry's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalLine {
    /// `MESSAGE` (a string, or bytes as lossy UTF-8; empty when absent or null), at most
    /// [`JournalConfig::max_line_bytes`] bytes.
    pub text: String,
    /// `__CURSOR`: persist it once the line is processed, and resume with it.
    pub cursor: String,
    /// `__REALTIME_TIMESTAMP`, when present.
    pub realtime: Option<SystemTime>,
    /// The message was cut.
    pub truncated: bool,
}

/// A journal follower's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalStats {
    /// Entries handed out.
    pub lines_read: u64,
    /// Bytes of JSON read from `journalctl`.
    pub bytes_read: u64,
    /// Messages cut to [`JournalConfig::max_line_bytes`].
    pub lines_truncated: u64,
    /// Entries dropped because the channel was full ([`OnFull::Drop`]).
    pub lines_dropped: u64,
    /// Output lines that were not a JSON entry with a `__CURSOR`.
    pub entries_unparsed: u64,
    /// Entries whose JSON line was too long to read (see [`JournalConfig::max_line_bytes`]) and
    /// whose first bytes hold no cursor or no `MESSAGE`: their messages are lost.
    pub entries_too_long: u64,
    /// When the last entry counted in `entries_unparsed` or `entries_too_long` was met.
    pub last_unread_at: Option<SystemTime>,
    /// Times `journalctl` exited (or could not start) and was started again.
    pub restarts: u64,
    /// Times `journalctl` refused the cursor (`Failed to seek to cursor`: a malformed one) and
    /// the follower went on from [`JournalConfig::since`] instead.
    pub cursor_resets: u64,
    /// The cursor the next run resumes after.
    pub cursor: Option<String>,
    /// When the last line was handed out.
    pub last_line_at: Option<SystemTime>,
    /// Why `journalctl` last exited; `None` while a run has given entries since.
    pub last_error: Option<FollowFailure>,
}

/// Follows one unit's journal through `journalctl -f`; see [`args`](JournalFollower::args)
/// and [`spawn`](JournalFollower::spawn).
#[derive(Debug, Clone)]
pub struct JournalFollower {
    unit: String,
    cursor: Option<String>,
    since: String,
    config: JournalConfig,
    /// journalctl takes `--output-fields` (asked when the follower starts).
    output_fields: bool,
}

impl JournalFollower {
    /// A follower of `unit`'s journal, resuming after `cursor` (a [`JournalLine::cursor`] a
    /// previous follower handed out), or from [`JournalConfig::since`] without one.
    pub fn new(unit: impl Into<String>, cursor: Option<String>, config: JournalConfig) -> Self {
        let mut config = config;
        config.max_line_bytes = config.max_line_bytes.max(1);
        config.channel_capacity = config.channel_capacity.max(1);
        let since = config.since.clone().unwrap_or_else(|| {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs();
            format!("@{now}")
        });
        JournalFollower {
            unit: unit.into(),
            cursor,
            since,
            config,
            output_fields: false,
        }
    }

    /// The arguments of the next `journalctl` run: [`JournalConfig::extra_args`],
    /// `--directory=<dir>` with [`JournalConfig::directory`], `-u <unit> -o json --all --no-pager
    /// -f --no-tail --merge`, `--output-fields=MESSAGE` when journalctl takes it (asked when the
    /// follower starts: systemd 236 and later), then `--after-cursor=<cursor>` or
    /// `--since=<since>`. `--all` keeps fields over 4096 bytes (journalctl's JSON shows them as
    /// null otherwise); `--no-tail` makes `-f` start at the cursor or time instead of at the last
    /// ten entries; `--merge` stops `-f` from implying `--boot` (the current boot only), so the
    /// entries after a cursor taken before a reboot are read too.
    pub fn args(&self) -> Vec<OsString> {
        let mut args = self.config.extra_args.clone();
        if let Some(d) = &self.config.directory {
            let mut a = OsString::from("--directory=");
            a.push(d);
            args.push(a);
        }
        for a in [
            "-u",
            &self.unit,
            "-o",
            "json",
            "--all",
            "--no-pager",
            "-f",
            "--no-tail",
            "--merge",
        ] {
            args.push(a.into());
        }
        if self.output_fields {
            // `MESSAGE` only (the cursor and the time are always written): an entry with a
            // large field of its own would otherwise be too long to read, its message lost.
            args.push("--output-fields=MESSAGE".into());
        }
        args.push(match &self.cursor {
            Some(c) => format!("--after-cursor={c}").into(),
            None => format!("--since={}", self.since).into(),
        });
        args
    }

    /// Runs `journalctl` in a tokio task until the receiver is dropped, restarting it (after
    /// [`JournalConfig::restart_backoff`]) whenever it exits.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn spawn(self) -> (mpsc::Receiver<JournalLine>, JournalHandle) {
        let (tx, rx) = mpsc::channel(self.config.channel_capacity);
        let (stats_tx, stats_rx) = watch::channel(JournalStats {
            cursor: self.cursor.clone(),
            ..JournalStats::default()
        });
        let task = tokio::spawn(run(self, tx, stats_tx));
        (
            rx,
            JournalHandle {
                stats: stats_rx,
                task,
            },
        )
    }
}

/// A journal follower task started by [`JournalFollower::spawn`].
#[derive(Debug)]
pub struct JournalHandle {
    stats: watch::Receiver<JournalStats>,
    task: JoinHandle<()>,
}

impl JournalHandle {
    /// The counters, as of the last entry or `journalctl` exit.
    pub fn stats(&self) -> JournalStats {
        self.stats.borrow().clone()
    }

    /// The task has ended (the receiver was dropped). A `journalctl` that keeps failing does not
    /// end it; see [`JournalStats::last_error`].
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Stops the task (and `journalctl` with it).
    pub fn abort(&self) {
        self.task.abort();
    }
}

async fn run(
    mut jf: JournalFollower,
    tx: mpsc::Sender<JournalLine>,
    stats_tx: watch::Sender<JournalStats>,
) {
    let mut stats = stats_tx.borrow().clone();
    let mut backoff = jf.config.restart_backoff;
    let json_cap =
        MAX_JOURNAL_ENTRY_BYTES.max(jf.config.max_line_bytes.saturating_mul(8) + 64 * 1024);
    let journalctl = jf.config.journalctl.clone();
    jf.output_fields =
        tokio::task::spawn_blocking(move || crate::journalctl_takes_output_fields(&journalctl))
            .await
            .unwrap_or(false);
    loop {
        let mut cmd = tokio::process::Command::new(&jf.config.journalctl);
        cmd.args(jf.args())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut entries = 0u64;
        let spawned = match crate::check_journal_directory(jf.config.directory.as_deref()) {
            Ok(()) => cmd
                .spawn()
                .map_err(|e| format!("cannot run {}: {e}", jf.config.journalctl.display())),
            Err(e) => Err(e.to_string()),
        };
        let failure = match spawned {
            Err(failure) => failure,
            Ok(mut child) => {
                let stderr = child.stderr.take().map(|s| tokio::spawn(read_capped(s)));
                let mut read_error = None;
                if let Some(stdout) = child.stdout.take() {
                    let mut reader = BufReader::new(stdout);
                    let (mut buf, mut tail) = (Vec::new(), Vec::new());
                    loop {
                        let line = tokio::select! {
                            r = read_line_capped(&mut reader, &mut buf, &mut tail, json_cap) => r,
                            () = tx.closed() => return,
                        };
                        let (len, overlong) = match line {
                            Ok(Some(x)) => x,
                            Ok(None) => break,
                            Err(e) => {
                                read_error = Some(e.to_string());
                                break;
                            }
                        };
                        stats.bytes_read += len as u64;
                        let entry = if overlong {
                            parse_cut_entry(&buf, &tail, jf.config.max_line_bytes)
                        } else {
                            parse_entry(&buf, jf.config.max_line_bytes)
                        };
                        // An entry of megabytes does not hold its buffer for the rest of the run.
                        if buf.capacity() > crate::journal_json::KEPT_BUFFER_BYTES {
                            buf.clear();
                            buf.shrink_to(crate::journal_json::KEPT_BUFFER_BYTES);
                        }
                        if tail.capacity() > 2 * TAIL_BYTES {
                            tail.clear();
                            tail.shrink_to(2 * TAIL_BYTES);
                        }
                        let Some(line) = entry else {
                            if overlong {
                                stats.entries_too_long += 1;
                            } else {
                                stats.entries_unparsed += 1;
                            }
                            stats.last_unread_at = Some(SystemTime::now());
                            stats_tx.send_replace(stats.clone());
                            continue;
                        };
                        entries += 1;
                        let cursor = line.cursor.clone();
                        let truncated = line.truncated;
                        match jf.config.on_full {
                            OnFull::Wait => {
                                if tx.send(line).await.is_err() {
                                    return;
                                }
                                stats.lines_read += 1;
                            }
                            OnFull::Drop => match tx.try_send(line) {
                                Ok(()) => stats.lines_read += 1,
                                Err(mpsc::error::TrySendError::Full(_)) => stats.lines_dropped += 1,
                                Err(mpsc::error::TrySendError::Closed(_)) => return,
                            },
                        }
                        stats.lines_truncated += u64::from(truncated);
                        stats.last_line_at = Some(SystemTime::now());
                        stats.last_error = None;
                        jf.cursor = Some(cursor.clone());
                        stats.cursor = Some(cursor);
                        stats_tx.send_replace(stats.clone());
                    }
                }
                let status = child.wait().await;
                let stderr = match stderr {
                    Some(t) => t.await.unwrap_or_default(),
                    None => String::new(),
                };
                let status = match status {
                    Ok(s) => s.to_string(),
                    Err(e) => e.to_string(),
                };
                if entries == 0 && jf.cursor.is_some() && stderr.contains("seek to cursor") {
                    jf.cursor = None;
                    stats.cursor = None;
                    stats.cursor_resets += 1;
                }
                let mut msg = format!(
                    "journalctl {} ended ({status})",
                    crate::journalctl_flags(&jf.unit, jf.config.directory.as_deref())
                );
                if let Some(e) = read_error {
                    msg.push_str(&format!(": reading its output: {e}"));
                }
                if !stderr.trim().is_empty() {
                    msg.push_str(&format!(": {}", stderr.trim()));
                }
                msg
            }
        };
        let consecutive = stats.last_error.as_ref().map_or(0, |f| f.consecutive) + 1;
        stats.last_error = Some(FollowFailure {
            at: SystemTime::now(),
            message: failure,
            consecutive,
        });
        stats.restarts += 1;
        stats_tx.send_replace(stats.clone());
        if entries > 0 {
            backoff = jf.config.restart_backoff;
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = tx.closed() => return,
        }
        if entries == 0 {
            backoff = (backoff * 2).min(MAX_RETRY_BACKOFF.max(jf.config.restart_backoff));
        }
    }
}

/// How much of the end of a line longer than the cap [`read_line_capped`] keeps: the fields
/// journalctl wrote after the one field that made the entry so long.
const TAIL_BYTES: usize = 64 << 10;

/// Reads one `\n`-terminated line into `buf`, keeping at most `cap` bytes of it, and into
/// `tail` at least the last [`TAIL_BYTES`] of what is past the cap. Returns its
/// full length and whether it was longer than `cap`; `None` at the end (a last line without
/// `\n`, from a killed `journalctl`, is dropped).
async fn read_line_capped<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    tail: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<(usize, bool)>> {
    buf.clear();
    tail.clear();
    let mut len = 0usize;
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok(None);
        }
        let (take, used, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (&avail[..i], i + 1, true),
            None => (avail, avail.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        buf.extend_from_slice(&take[..take.len().min(room)]);
        // Past the cap, the last TAIL_BYTES: the fields after a field of megabytes.
        tail.extend_from_slice(&take[take.len().min(room)..]);
        if tail.len() > 2 * TAIL_BYTES {
            tail.drain(..tail.len() - TAIL_BYTES);
        }
        len += take.len();
        r.consume(used);
        if done {
            return Ok(Some((len, len > cap)));
        }
    }
}

/// Reads a stream to its end, keeping its first [`MAX_STDERR_BYTES`] bytes.
async fn read_capped(mut r: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 1024];
    while let Ok(n) = r.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let room = MAX_STDERR_BYTES.saturating_sub(kept.len());
        kept.extend_from_slice(&chunk[..n.min(room)]);
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// The entry of an overlong line of `journalctl -o json`, of which `head` is the start and
/// `tail` the end: its cursor, time and the start of its `MESSAGE` (cut to `max_line_bytes`,
/// [`JournalLine::truncated`]), as the one-shot reader reads such an entry cut. journalctl
/// writes the fields in no fixed order, so each is looked for in both; `None` when neither holds
/// the cursor, or a `MESSAGE` string (the field of megabytes was another, between them).
pub(super) fn parse_cut_entry(
    head: &[u8],
    tail: &[u8],
    max_line_bytes: usize,
) -> Option<JournalLine> {
    let (head, tail) = (String::from_utf8_lossy(head), String::from_utf8_lossy(tail));
    // The raw string value of `"<field>": "…` (to its closing quote, or to the end).
    let raw = |field: &str| -> Option<&str> {
        let key = format!("\"{field}\"");
        [&head, &tail].into_iter().find_map(|text| {
            let rest = &text[text.find(&key)? + key.len()..];
            let rest = rest
                .trim_start()
                .strip_prefix(':')?
                .trim_start()
                .strip_prefix('"')?;
            let mut escaped = false;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    let close = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    close
                })
                .map_or(rest.len(), |(i, _)| i);
            Some(&rest[..end])
        })
    };
    let cursor = raw("__CURSOR")?.to_string();
    let realtime = raw("__REALTIME_TIMESTAMP").and_then(realtime);
    let mut message = raw("MESSAGE")?;
    // Enough escaped text for `max_line_bytes` of message, not cut inside an escape.
    if let Some((at, _)) = message.char_indices().nth(max_line_bytes.saturating_mul(2)) {
        message = &message[..at];
    }
    let mut text = loop {
        match serde_json::from_str::<String>(&format!("\"{message}\"")) {
            Ok(t) => break t,
            // A cut escape (`\`, `\u00`): drop back to before it.
            Err(_) => message = &message[..message.rfind('\\')?],
        }
    };
    cut_message(&mut text, max_line_bytes);
    Some(JournalLine {
        text,
        cursor,
        realtime,
        truncated: true,
    })
}

/// Cuts `text` to at most `max_line_bytes` at a UTF-8 boundary; whether it was longer.
fn cut_message(text: &mut String, max_line_bytes: usize) -> bool {
    if text.len() <= max_line_bytes {
        return false;
    }
    let mut end = max_line_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

/// The time of `__REALTIME_TIMESTAMP` (microseconds since the epoch, as a string).
fn realtime(us: &str) -> Option<SystemTime> {
    us.parse::<u64>()
        .ok()
        .map(|us| UNIX_EPOCH + Duration::from_micros(us))
}

/// One line of `journalctl -o json`: `None` without a string `__CURSOR`.
pub(super) fn parse_entry(json: &[u8], max_line_bytes: usize) -> Option<JournalLine> {
    let v: serde_json::Value = serde_json::from_slice(json).ok()?;
    let cursor = v.get("__CURSOR")?.as_str()?.to_string();
    let mut text = match v.get("MESSAGE") {
        Some(serde_json::Value::String(s)) => s.clone(),
        // Fields that are not valid UTF-8 come as arrays of bytes.
        Some(serde_json::Value::Array(bytes)) => {
            let bytes: Vec<u8> = bytes
                .iter()
                .filter_map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }
        _ => String::new(),
    };
    let truncated = cut_message(&mut text, max_line_bytes);
    let realtime = v
        .get("__REALTIME_TIMESTAMP")
        .and_then(serde_json::Value::as_str)
        .and_then(realtime);
    Some(JournalLine {
        text,
        cursor,
        realtime,
        truncated,
    })
}
