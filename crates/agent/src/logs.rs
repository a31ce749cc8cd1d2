//! Following the kubelet's and the runtime's logs: files across rotation (`podcoroner_logs::follow`)
//! and journald with a cursor, every line through the core line layer, classified events kept
//! in a bounded ring for the rules and timelines.
//!
//! Read positions (file checkpoints, journal cursors) are saved under the state directory every
//! [`SAVE_EVERY`], the kept events every [`SAVE_EVENTS_EVERY`] when they changed, and both on
//! shutdown, so a restart resumes after the last line handled and still has the events its open
//! log findings rest on. A crash loses at most the events of the last [`SAVE_EVENTS_EVERY`]
//! (their lines are not read again) and re-reads at most [`SAVE_EVERY`] of lines.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use podcoroner_core::event::{LogKind, LoggedEvent};
use podcoroner_core::logs::{
    LineAssembler, ParseContext, Understanding, classify, parse, parse_unless_unnamed,
};
use podcoroner_logs::follow::{self, FollowConfig, OnFull, ReadFrom};
use podcoroner_node::api::SourceStatus;
use serde::{Deserialize, Serialize};

use super::{Shared, lock, metrics};

/// How often read positions are saved.
pub const SAVE_EVERY: Duration = Duration::from_secs(2);
/// How often the kept events are saved (when they changed).
pub const SAVE_EVENTS_EVERY: Duration = Duration::from_secs(30);

/// A kept event as saved: its text is parsed and classified again on load.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedEvent {
    log: String,
    origin: String,
    line: u64,
    year: i32,
    text: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SavedEvents {
    schema: String,
    events: Vec<SavedEvent>,
}

const EVENTS_SCHEMA: &str = "podcoroner.events/v1";

/// Loads the events saved by [`save`]; anything unreadable is an empty list (logged).
pub fn load_events(path: &Path) -> VecDeque<LoggedEvent> {
    let Ok(bytes) = std::fs::read(path) else {
        return VecDeque::new();
    };
    let saved: SavedEvents = match serde_json::from_slice(&bytes) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "Ignoring unreadable saved events");
            return VecDeque::new();
        }
    };
    saved
        .events
        .into_iter()
        .filter_map(|s| {
            let mut ctx = ParseContext::new(s.year);
            let parsed = parse(&s.text, &mut ctx);
            let event = classify(&parsed)?.into_owned();
            let log = if s.log == "runtime" {
                LogKind::Runtime
            } else {
                LogKind::Kubelet
            };
            let content_key = podcoroner_core::logs::content_key(&parsed);
            Some(LoggedEvent::new(
                event,
                log,
                s.origin.into(),
                s.line,
                s.text.into(),
                content_key,
            ))
        })
        .collect()
}

/// Saves the kept events and the read positions (atomically, each).
pub fn save(shared: &Shared) {
    save_events(shared);
    save_checkpoints(shared);
}

/// Saves the read positions (atomically).
pub fn save_checkpoints(shared: &Shared) {
    let dir = &shared.options.state_dir;
    if let Err(e) = follow::save_checkpoints(
        &dir.join("log-checkpoints.json"),
        &lock(&shared.checkpoints),
    ) {
        shared.failed("state", format!("saving the log read positions: {e}"));
    }
}

/// Saves the kept events (atomically).
pub fn save_events(shared: &Shared) {
    let dir = &shared.options.state_dir;
    let events: Vec<SavedEvent> = lock(&shared.events)
        .iter()
        .map(|e| SavedEvent {
            log: if e.log == LogKind::Runtime {
                "runtime".into()
            } else {
                "kubelet".into()
            },
            origin: e.origin.to_string(),
            line: e.line,
            year: e.time.map_or(2000, |t| {
                i32::from(t.to_zoned(jiff::tz::TimeZone::UTC).year())
            }),
            text: e.text.to_string(),
        })
        .collect();
    let body = SavedEvents {
        schema: EVENTS_SCHEMA.to_string(),
        events,
    };
    if let Err(e) = serde_json::to_vec(&body)
        .map_err(anyhow::Error::from)
        .and_then(|b| super::store::write_atomically(&dir.join("events.json"), &b))
    {
        shared.failed("state", format!("saving the kept log events: {e:#}"));
    }
}

/// Whether an event can open or close a finding, so it is worth an evaluation right away:
/// failures and the kubelet signatures the log rules read. Lifecycle noise (probes, updates,
/// PLEG, successful stops) waits for the next periodic evaluation.
fn wakes(kind: podcoroner_core::logs::EventKind) -> bool {
    use podcoroner_core::logs::{EventKind::*, SyncOp};
    kind.is_failure()
        || matches!(
            kind,
            MirrorPodOutdatedDeleted
                | PodWorkerNotTerminated
                | RemoveAllHistory
                | PodOrphanedTornDown
                | HousekeepingSkippedSourcesNotReady
                | SyncLoop(SyncOp::Remove)
                | EvictionReclaiming
                | EvictionMustEvict
                | EvictionBlocked
                | PodEvicted
                | EvictionAdmitRejected
        )
}

/// At most this many last bytes of a log file are read on a first start that looks back.
pub const MAX_LOOKBACK_BYTES: u64 = 64 << 20;

/// Where a first start reads from: `max(now - lookback, boot time)` (node-problem-detector's
/// `GetStartTime`: nothing from before the node booted); `None` for a zero lookback.
pub fn lookback_start(lookback: Duration, now: Timestamp) -> Option<Timestamp> {
    if lookback.is_zero() {
        return None;
    }
    let back = jiff::SignedDuration::try_from(lookback).unwrap_or(jiff::SignedDuration::MAX);
    let from = now.checked_sub(back).unwrap_or(Timestamp::MIN);
    Some(boot_time().map_or(from, |boot| from.max(boot)))
}

/// When this machine booted: `btime` of `/proc/stat`.
fn boot_time() -> Option<Timestamp> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let secs = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse::<i64>()
        .ok()?;
    Timestamp::from_second(secs).ok()
}

/// The first start's look back: records older than `from` are skipped (and counted) until the
/// follower has caught up with the file once; after that nothing is filtered.
#[derive(Debug, Default)]
struct Lookback {
    from: Option<Timestamp>,
    skipped: u64,
}

/// `path` as its records name their file: one string per file, made when the file read changes
/// (a rotation) rather than for every record.
fn origin_of(last: &mut Option<(PathBuf, Arc<str>)>, path: &Path) -> Arc<str> {
    match last {
        Some((p, o)) if p.as_path() == path => Arc::clone(o),
        _ => {
            let o: Arc<str> = Arc::from(path.display().to_string());
            *last = Some((path.to_path_buf(), Arc::clone(&o)));
            o
        }
    }
}

/// Parses and classifies one record, keeping its event; counts it. Returns whether the event
/// should wake the evaluator ([`wakes`]).
#[allow(clippy::too_many_arguments)]
fn ingest(
    shared: &Shared,
    name: &str,
    kind: LogKind,
    ctx: &mut ParseContext,
    understanding: &mut Understanding,
    text: &str,
    origin: &Arc<str>,
    line: u64,
    lookback: &mut Lookback,
) -> bool {
    let labels = metrics::SourceLabels {
        source: name.to_string(),
    };
    shared.metrics.log_lines.get_or_create(&labels).inc();
    let skimmed = parse_unless_unnamed(text, ctx);
    let parsed = skimmed.line;
    understanding.count(text, parsed.is_parsed(), line);
    if !parsed.is_parsed() {
        shared.metrics.log_unparsed.get_or_create(&labels).inc();
        return false;
    }
    let Some(event) = skimmed.may_be_named.then(|| classify(&parsed)).flatten() else {
        return false;
    };
    if let (Some(from), Some(t)) = (lookback.from, event.time)
        && t < from
    {
        lookback.skipped += 1;
        return false;
    }
    let wake = wakes(event.kind);
    *lock(&shared.events_changed) = true;
    let mut events = lock(&shared.events);
    events.push_back(LoggedEvent::new(
        event.into_owned(),
        kind,
        Arc::clone(origin),
        line,
        text.into(),
        podcoroner_core::logs::content_key(&parsed),
    ));
    while events.len() > shared.options.max_events {
        events.pop_front();
    }
    wake
}

/// How many records a followed log must have given before it is judged understood or not.
const MIN_RECORDS_JUDGED: u64 = 20;

/// A followed log's status, said as the one-shot readers say theirs (`path`, `counts`, `detail`):
/// what it read, and how well it was understood (`gather::say_understanding`) once it has given
/// [`MIN_RECORDS_JUDGED`] records since the agent started.
fn followed_status(
    path: String,
    counts: &[(&str, u64)],
    notes: Vec<String>,
    u: &Understanding,
    origin: &str,
) -> SourceStatus {
    let mut s = SourceStatus::ok();
    s.path = Some(path);
    for (k, v) in counts {
        s.counts.insert((*k).to_string(), *v as usize);
    }
    s.detail = (!notes.is_empty()).then(|| notes.join("; "));
    if u.understood + u.not_understood >= MIN_RECORDS_JUDGED {
        podcoroner_node::gather::say_understanding(
            &mut s,
            u,
            u.first_failed.iter().map(|(l, t)| (origin, *l, t.as_str())),
        );
    }
    s
}

/// Marks a followed log degraded, `note` (why) first in its detail: a source that reads nothing,
/// or loses what it reads, is said in `/readyz`, never a quiet healthy one.
fn degrade(status: &mut SourceStatus, note: String) {
    status.status = Some(podcoroner_node::api::SourceState::Degraded);
    status.note_first(note);
}

/// How long a followed log's path must name no file before the source is degraded: longer than
/// a rotation by rename leaves it empty.
const MISSING_FOR: Duration = Duration::from_secs(2);

/// Follows a log file across rotation by rename and by copytruncate.
pub async fn file_loop(shared: Arc<Shared>, name: &'static str, path: PathBuf, kind: LogKind) {
    let checkpoint = lock(&shared.checkpoints).files.get(&path).cloned();
    // A restart resumes at its checkpoint; a first start looks back `log_lookback`.
    let mut lookback = Lookback {
        from: checkpoint
            .is_none()
            .then(|| lookback_start(shared.options.log_lookback, Timestamp::now()))
            .flatten(),
        skipped: 0,
    };
    let first_start = lookback.from;
    let config = FollowConfig {
        read_from: if lookback.from.is_some() {
            ReadFrom::Tail(MAX_LOOKBACK_BYTES)
        } else {
            ReadFrom::End
        },
        // Under a flood, drop (and count) rather than grow.
        on_full: OnFull::Drop,
        ..FollowConfig::default()
    };
    shared.metrics.log_source(name);
    let (mut rx, handle) = follow::spawn(follow::Follower::new(path.clone(), checkpoint, config));
    let year = i32::from(Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).year());
    let mut ctx = ParseContext::new(year);
    let mut asm = LineAssembler::new();
    let mut understanding = Understanding::default();
    let (mut dropped_seen, mut cut_seen) = (0, 0);
    let mut origin = None;
    let mut health = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            batch = rx.recv() => {
                let Some(batch) = batch else {
                    shared.failed(name, format!("the follower of {} stopped", path.display()));
                    return;
                };
                let mut new = false;
                for l in &batch.lines {
                    if let Some(rec) = asm.push(&l.text) {
                        let (text, first) = (rec.text.to_string(), rec.first_line);
                        new |= ingest(&shared, name, kind, &mut ctx, &mut understanding, &text, &origin_of(&mut origin, &l.origin), first, &mut lookback);
                    }
                }
                // A record is complete once the next begins, or when the writer pauses.
                if batch.caught_up && let Some(rec) = asm.finish() {
                    let (text, first) = (rec.text.to_string(), rec.first_line);
                    new |= ingest(&shared, name, kind, &mut ctx, &mut understanding, &text, &origin_of(&mut origin, &path), first, &mut lookback);
                }
                if batch.caught_up {
                    // The history is read: from now on every record counts, whatever its clock.
                    lookback.from = None;
                }
                lock(&shared.checkpoints).files.insert(path.clone(), batch.checkpoint.clone());
                if new {
                    shared.wake.notify_one();
                }
            }
            _ = health.tick() => {
                let stats = handle.stats();
                let labels = metrics::SourceLabels { source: name.to_string() };
                let m = &shared.metrics;
                metrics::Metrics::count_since(&m.log_dropped, &labels, stats.lines_dropped, &mut dropped_seen);
                metrics::Metrics::count_since(&m.log_cut, &labels, stats.lines_truncated, &mut cut_seen);
                if handle.is_finished() {
                    shared.failed(name, format!("the follower of {} died", path.display()));
                } else if let Some(f) = &stats.last_error {
                    shared.failed(name, format!("{}: {} ({} failures in a row)", path.display(), f.message, f.consecutive));
                } else {
                    let last = stats.last_line_at.and_then(|t| Timestamp::try_from(t).ok());
                    if kind == LogKind::Kubelet && lookback.from.is_none() && last.is_some() {
                        *lock(&shared.kubelet_last_line) = last;
                    }
                    let mut notes = vec![format!(
                        "last line {}",
                        last.map_or("none yet".to_string(), |t| t.to_string())
                    )];
                    if stats.rotations_missed > 0 {
                        notes.push(format!(
                            "{} rotations may have been missed: rotating faster than it can be followed",
                            stats.rotations_missed
                        ));
                    }
                    if let Some(t) = first_start {
                        notes.push(format!(
                            "first start: read back to {t} (log_lookback), {} older records skipped",
                            lookback.skipped
                        ));
                    }
                    let origin = path.display().to_string();
                    let mut status = followed_status(
                        origin.clone(),
                        &[
                            ("lines", stats.lines_read),
                            ("rotations", stats.rotations),
                            ("truncations", stats.truncations),
                            ("dropped", stats.lines_dropped),
                        ],
                        notes,
                        &understanding,
                        &origin,
                    );
                    podcoroner_node::gather::say_cut_lines(&mut status, stats.lines_truncated, None);
                    // A log that is not there is said, never a quiet source: a wrong path or a
                    // missing mount. Not a rotation by rename, between the rename and the new
                    // file: the follower found no file there for [`MISSING_FOR`].
                    let missing = stats.path_missing_since.and_then(|t| t.elapsed().ok());
                    if missing.is_some_and(|d| d >= MISSING_FOR) {
                        degrade(&mut status, format!(
                            "{} does not exist: a wrong path or a missing mount? It is read once it appears",
                            path.display()
                        ));
                    }
                    shared.report(name, &status);
                }
            }
        }
    }
}

/// How long a journald source stays degraded after an entry it could not read: long enough to
/// be seen, not so long that one lost entry keeps the agent's readiness probe failing.
const UNREAD_DEGRADED_FOR: Duration = Duration::from_secs(600);

/// How long a first start's journal follower may give no entry of its unit (none in
/// `log_lookback` either) before the source is degraded as a wrong unit.
const NO_ENTRY_FOR: Duration = Duration::from_secs(10);

/// Follows a journald unit, of the system journal or of the journal files in `directory`
/// (`journalctl --directory`), with a saved cursor (kept under its
/// [`journal_name`](podcoroner_logs::journal_name)).
pub async fn journal_loop(
    shared: Arc<Shared>,
    name: &'static str,
    unit: String,
    directory: Option<PathBuf>,
    kind: LogKind,
) {
    let key = podcoroner_logs::journal_name(&unit, directory.as_deref());
    let cursor = lock(&shared.checkpoints).journald.get(&key).cloned();
    // Without a cursor (a first start), from `log_lookback` back, as for files.
    let since = cursor
        .is_none()
        .then(|| lookback_start(shared.options.log_lookback, Timestamp::now()))
        .flatten();
    let config = follow::JournalConfig {
        directory,
        since: since.map(|t| format!("@{}", t.as_second())),
        ..follow::JournalConfig::default()
    };
    let mut watch = JournalWatch {
        name,
        key: key.clone(),
        unit: unit.clone(),
        kind,
        started: Instant::now(),
        since,
        cut_seen: 0,
        unread_seen: 0,
    };
    let follower = follow::JournalFollower::new(unit, cursor, config);
    shared.metrics.log_source(name);
    let (mut rx, handle) = follower.spawn();
    let year = i32::from(Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).year());
    let mut ctx = ParseContext::new(year);
    let origin: Arc<str> = Arc::from(format!("journald:{key}"));
    let mut understanding = Understanding::default();
    let mut n: u64 = 0;
    let mut health = tokio::time::interval(Duration::from_secs(1));
    let mut last_ok = Instant::now();
    loop {
        tokio::select! {
            line = rx.recv() => {
                let Some(line) = line else {
                    shared.failed(name, format!("the journal follower of {key} stopped"));
                    return;
                };
                n += 1;
                if ingest(&shared, name, kind, &mut ctx, &mut understanding, &line.text, &origin, n, &mut Lookback::default()) {
                    shared.wake.notify_one();
                }
                lock(&shared.checkpoints).journald.insert(key.clone(), line.cursor.clone());
                last_ok = Instant::now();
            }
            _ = health.tick() => {
                if handle.is_finished() {
                    shared.failed(name, format!("the journal follower of {key} died"));
                } else {
                    let s = handle.stats();
                    let status = match &s.last_error {
                        Some(e) => SourceStatus::error(e.message.clone()),
                        None => watch.status(&shared, &s, n, last_ok, &understanding, &origin),
                    };
                    shared.report(name, &status);
                }
            }
        }
    }
}

/// What a journald source's health check says of its follower, once a second: how far it has
/// read, the lines cut and entries lost (counted in the metrics as they grow), and whether the
/// unit is wrong.
struct JournalWatch {
    /// The source's name (`kubelet_log`, `runtime_log`).
    name: &'static str,
    /// [`podcoroner_logs::journal_name`] of the unit and directory.
    key: String,
    /// The unit followed.
    unit: String,
    /// Whose log it is, for the setting a wrong unit is in.
    kind: LogKind,
    /// When following started.
    started: Instant,
    /// A first start's `log_lookback` start (no saved cursor).
    since: Option<Timestamp>,
    /// The follower's cut lines already counted in `podcoroner_log_lines_cut_total`.
    cut_seen: u64,
    /// The entries not read already counted in `podcoroner_log_entries_unread_total`.
    unread_seen: u64,
}

impl JournalWatch {
    /// The source's status now, its follower's stats `s` read, after `n` entries (the last one
    /// at `last_ok`): degraded for a unit with no entry since a first start (`NO_ENTRY_FOR`
    /// after it), or for `UNREAD_DEGRADED_FOR` after an entry it could not read.
    fn status(
        &mut self,
        shared: &Shared,
        s: &follow::JournalStats,
        n: u64,
        last_ok: Instant,
        understanding: &Understanding,
        origin: &str,
    ) -> SourceStatus {
        let labels = metrics::SourceLabels {
            source: self.name.to_string(),
        };
        let unread = s.entries_too_long + s.entries_unparsed;
        let m = &shared.metrics;
        metrics::Metrics::count_since(&m.log_cut, &labels, s.lines_truncated, &mut self.cut_seen);
        metrics::Metrics::count_since(&m.log_unread, &labels, unread, &mut self.unread_seen);
        let mut notes = vec![if n == 0 {
            format!(
                "no entry yet, {}s since start",
                self.started.elapsed().as_secs()
            )
        } else {
            format!("last entry {}s ago", last_ok.elapsed().as_secs())
        }];
        notes.extend(
            self.since
                .map(|t| format!("first start: read back to {t} (log_lookback)")),
        );
        let mut status = followed_status(
            format!("journald {}", self.key),
            &[("entries", n)],
            notes,
            understanding,
            origin,
        );
        podcoroner_node::gather::say_cut_lines(&mut status, s.lines_truncated, None);
        // A first start that read back `log_lookback` and found no entry of the unit: a wrong
        // unit name, said rather than a quiet source.
        if n == 0
            && self.started.elapsed() >= NO_ENTRY_FOR
            && let Some(t) = self.since
        {
            let setting = match self.kind {
                LogKind::Kubelet => "kubelet_unit",
                LogKind::Runtime => "runtime_unit",
            };
            degrade(
                &mut status,
                format!(
                    "journalctl -u {} gave no entry since {t} (log_lookback): the wrong unit ({setting})? It is read once it logs",
                    self.unit
                ),
            );
        }
        // Entries not read are lost messages: said, never a quiet source, degraded for
        // UNREAD_DEGRADED_FOR after the last (counted always).
        if unread > 0 {
            status
                .counts
                .insert("unread_entries".to_string(), unread as usize);
        }
        let recent = s
            .last_unread_at
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|d| d < UNREAD_DEGRADED_FOR);
        if recent {
            let (what, whose) = if unread == 1 {
                ("entry", "its message")
            } else {
                ("entries", "their messages")
            };
            degrade(
                &mut status,
                format!(
                    "{unread} journal {what} not read, {whose} lost: {} with no cursor or MESSAGE in its first {} MiB of JSON, {} not a journal entry (degraded for {} after the last)",
                    s.entries_too_long,
                    follow::MAX_JOURNAL_ENTRY_BYTES >> 20,
                    s.entries_unparsed,
                    humantime::format_duration(UNREAD_DEGRADED_FOR)
                ),
            );
        }
        status
    }
}
