//! Parsing one stream (a file, a decompressed file, journalctl's output) on all cores, with the
//! same records, counts and events as one loop over it (lines → [`LineAssembler`] → [`parse`]
//! → [`classify`], one [`ParseContext`] from start to end).
//!
//! The stream is cut into blocks just before a line that starts a record whatever came before it
//! ([`LineAssembler::begins_record`]; [`LineAssembler::begins_record_after`] the line before;
//! no line that [opens a record](LineAssembler::opens_record) in the assembler's cap before it:
//! see [`cut_at`]), so a block assembles alone into the records it holds in the whole stream.
//! Workers assemble, parse and classify blocks; each starts from a guess of
//! the [`ParseContext`] at its block's start: the context at the end of the last block merged
//! so far (the year and the New Year state rarely change from one block to the next). The
//! calling thread merges the blocks in order, checks each guess against the real context at
//! the block's start ([`ParseContext::resolves_like`]) and, when the guess was wrong, mends the
//! block: each worker keeps the text of its block's first records, up to where its context no
//! longer depends on its guess ([`Head`]), and the merging thread parses those again with the
//! right context. When that ends in exactly the context the worker had after them, the rest of the
//! block parses the same from either start (a record's parse depends only on its text and the
//! context), so the worker's records after the head stand; otherwise the whole block is parsed
//! again. A log whose year or zone changes every few records (the excerpts of many bug reports
//! read as one file) so costs the merging thread a few records per block, not the block. Line
//! numbers are counted per block and shifted when merged.
//!
//! Where the blocks come from:
//! - a plain file: each worker reads its own blocks with positional reads. Block `k` runs from
//!   the first line at or after byte `k × block_bytes` that begins a record to the same point
//!   of block `k + 1`: a rule of the file's bytes that two workers apply with the same answer.
//!   The worker of block `k` tells the worker of block `k + 1` where that block starts (the end
//!   it found for its own), so each cut is found once.
//!   A block in which no line begins a record is empty, known so from its own bytes, so the
//!   file is read in linear time whatever it holds. The file is read up to the length it had
//!   when opened.
//! - any other stream (gzip, a pipe): a reader thread reads it in order and cuts it.
//!
//! Memory stays bounded by the blocks in flight (a few per worker), whatever the stream's size;
//! what the caller keeps of the events is its own choice.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};

use jiff::Timestamp;
use podcoroner_core::logs::{
    CutClass, DEFAULT_MAX_RECORD_BYTES, EnvelopeKind, Event, Format, LineAssembler, Opening,
    ParseContext, ParsedLine, named, non_record, opening, parse_unless_unnamed,
};

use crate::bounded::Bounded;
use crate::{LogKind, LogRead, LoggedEvent, MAX_KEPT_UNPARSED, Unparsed, cut};

/// Nominal size of a block: 1 MiB. A block ends just before a line that begins a record, so it
/// may be a little larger (much larger only for one record longer than a block).
pub(crate) const BLOCK_BYTES: usize = 1 << 20;
/// Parsing workers at most (fewer on a machine with fewer cores).
const MAX_WORKERS: usize = 4;
/// How many lines before a stream block's end are tried as its cut before the block is made
/// longer.
const MAX_CUT_SEARCH_LINES: usize = 256;

/// What one stream's records are attributed to.
pub(crate) struct StreamOpts<'a> {
    /// The file (or `journald:<unit>`).
    pub origin: &'a str,
    /// [`Self::origin`], the one copy its events share.
    pub shared_origin: Arc<str>,
    /// Whose log.
    pub log: LogKind,
    /// Records before this are counted and skipped.
    pub since: Option<Timestamp>,
    /// Nominal block size ([`BLOCK_BYTES`]; small in tests).
    pub block_bytes: usize,
    /// Parsing threads.
    pub workers: usize,
    /// The longest line a plain file is read in blocks with ([`crate::MAX_LINE_BYTES`]; small
    /// in tests): from the block that meets a longer one on, [`read_file`] reads in order
    /// through [`Bounded`], which cuts such a line.
    pub max_line_bytes: usize,
}

impl<'a> StreamOpts<'a> {
    /// Options with the default block size and one worker per core (at most [`MAX_WORKERS`]).
    pub(crate) fn new(origin: &'a str, log: LogKind, since: Option<Timestamp>) -> Self {
        StreamOpts {
            origin,
            shared_origin: Arc::from(origin),
            log,
            since,
            block_bytes: BLOCK_BYTES,
            max_line_bytes: crate::MAX_LINE_BYTES,
            workers: std::thread::available_parallelism()
                .map_or(1, usize::from)
                .clamp(1, MAX_WORKERS),
        }
    }
}

/// Reads the plain file `file` (its first `len` bytes) into `out`, in blocks on all cores.
///
/// A line longer than [`StreamOpts::max_line_bytes`] (a run of NULs a crash left, a binary
/// written to the log) would make a block as long as itself. The workers see such a line as
/// they read their blocks (no pass over the file before): the blocks before the one that meets
/// it are merged as usual, and the file is read on from that block's start in order, through
/// [`Bounded`] ([`read_stream`]), which cuts the line and counts the cut in `out`. That start
/// begins a record, so the records, counts and line numbers are those of one loop over the
/// file read through [`Bounded`].
pub(crate) fn read_file(
    file: &File,
    len: u64,
    opts: &StreamOpts<'_>,
    ctx: ParseContext,
    out: &mut LogRead,
    on_event: &mut dyn FnMut(LoggedEvent),
) -> std::io::Result<()> {
    let block_bytes = opts.block_bytes.max(1) as u64;
    let n_blocks = len.div_ceil(block_bytes);
    let shared = Shared::new(&ctx);
    let next_block = AtomicU64::new(0);
    let (msg_tx, msg_rx) = channel::<Msg>();
    let _ = msg_tx.send(Msg::End(n_blocks));
    let reread = |redo: &Redo, ctx: ParseContext| match redo {
        Redo::Range { start, end } => {
            let mut buf = ReadBuf::default();
            read_range(file, *start, *end, &mut buf)?;
            Ok(parse_block(buf.data(), ctx, opts, usize::MAX))
        }
        Redo::Data(data) => Ok(parse_block(data, ctx, opts, usize::MAX)),
    };
    let resume = std::thread::scope(|scope| {
        for _ in 0..opts.workers.max(1) {
            let msg_tx = msg_tx.clone();
            let (shared, next_block) = (&shared, &next_block);
            scope.spawn(move || {
                let mut buf = ReadBuf::default();
                loop {
                    let k = next_block.fetch_add(1, Ordering::Relaxed);
                    if k >= n_blocks || !shared.wait_turn(k, opts.workers) {
                        return;
                    }
                    let mut tell = TellNext {
                        shared,
                        k,
                        told: false,
                    };
                    // The block before tells where this one starts, so each cut is found once.
                    let told = match k {
                        0 => Some(0),
                        _ => match shared.start_of(k) {
                            Ok(start) => start,
                            Err(Stopped) => return,
                        },
                    };
                    // A panic (a bug in the cut) is an error too, so the merge, which waits
                    // for this block, ends.
                    let block = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        file_block(
                            file,
                            len,
                            k,
                            block_bytes,
                            opts.max_line_bytes,
                            told,
                            &mut buf,
                        )
                    }))
                    .unwrap_or_else(|_| {
                        Err(std::io::Error::other("the log reader panicked on a block"))
                    });
                    let msg = match block {
                        Ok(Some(Block {
                            range: (start, end),
                            base,
                            next_start,
                        })) => {
                            tell.tell(next_start);
                            let data = &buf.data()[(start - base) as usize..(end - base) as usize];
                            match guarded_parse(data, shared.guess(), opts, opts.max_line_bytes) {
                                Ok(read) if read.long_line => Msg::LongLine(k),
                                Ok(read) => {
                                    Msg::Parsed(k, Box::new(read), Redo::Range { start, end })
                                }
                                Err(error) => Msg::Failed(error),
                            }
                        }
                        Ok(None) => Msg::LongLine(k),
                        Err(error) => Msg::Failed(error),
                    };
                    let failed = matches!(msg, Msg::Failed(_));
                    if msg_tx.send(msg).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(msg_tx);
        merge_blocks(&msg_rx, opts, ctx, 0, out, on_event, &shared, None, reread)
    })?;
    let Some(resume) = resume else {
        return Ok(());
    };
    let mut rest = file.try_clone()?;
    rest.seek(std::io::SeekFrom::Start(resume.offset))?;
    let (rest, cuts) = Bounded::new(
        rest.take(len.saturating_sub(resume.offset)),
        opts.max_line_bytes,
        None,
    );
    let read = read_stream_from(
        Box::new(rest),
        opts,
        resume.ctx,
        resume.lines_before,
        out,
        on_event,
    );
    out.cut_lines += cuts.lines.load(Ordering::Relaxed);
    out.cut_bytes += cuts.bytes.load(Ordering::Relaxed);
    read
}

/// Reads any stream into `out`, in order, with a reader thread that cuts it into blocks.
pub(crate) fn read_stream(
    reader: Box<dyn Read + Send>,
    opts: &StreamOpts<'_>,
    ctx: ParseContext,
    out: &mut LogRead,
    on_event: &mut dyn FnMut(LoggedEvent),
) -> std::io::Result<()> {
    read_stream_from(reader, opts, ctx, 0, out, on_event)
}

/// [`read_stream`] of a stream that goes on from `lines_before` lines already read into `out`
/// (its line numbers count on from there) with the context `ctx` they ended in.
fn read_stream_from(
    reader: Box<dyn Read + Send>,
    opts: &StreamOpts<'_>,
    ctx: ParseContext,
    lines_before: u64,
    out: &mut LogRead,
    on_event: &mut dyn FnMut(LoggedEvent),
) -> std::io::Result<()> {
    let workers = opts.workers.max(1);
    let (work_tx, work_rx) = channel::<(u64, Vec<u8>)>();
    let work_rx = Mutex::new(work_rx);
    let (msg_tx, msg_rx) = channel::<Msg>();
    let shared = Shared::new(&ctx);
    let reread = |redo: &Redo, ctx: ParseContext| match redo {
        Redo::Data(data) => Ok(parse_block(data, ctx, opts, usize::MAX)),
        Redo::Range { .. } => Err(std::io::Error::other("a stream block has no file range")),
    };
    std::thread::scope(|scope| {
        // Created in the scope: when the merge ends, however it ends, the pool's sender goes
        // and the reader stops.
        let (pool_tx, pool_rx) = channel::<Vec<u8>>();
        for _ in 0..2 * workers + 2 {
            let _ = pool_tx.send(Vec::with_capacity(opts.block_bytes + opts.block_bytes / 8));
        }
        let reader_tx = msg_tx.clone();
        let block_bytes = opts.block_bytes.max(1);
        scope.spawn(move || cut_stream(reader, block_bytes, &pool_rx, &work_tx, &reader_tx));
        for _ in 0..workers {
            let msg_tx = msg_tx.clone();
            let (work_rx, shared) = (&work_rx, &shared);
            scope.spawn(move || {
                loop {
                    // A poisoned lock means another worker panicked: stop too.
                    let Ok(rx) = work_rx.lock() else { return };
                    let Ok((k, data)) = rx.recv() else { return };
                    drop(rx);
                    // Its lines are cut by the stream's reader, if anywhere.
                    let msg = match guarded_parse(&data, shared.guess(), opts, usize::MAX) {
                        Ok(read) => Msg::Parsed(k, Box::new(read), Redo::Data(data)),
                        Err(error) => Msg::Failed(error),
                    };
                    let failed = matches!(msg, Msg::Failed(_));
                    if msg_tx.send(msg).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(msg_tx);
        merge_blocks(
            &msg_rx,
            opts,
            ctx,
            lines_before,
            out,
            on_event,
            &shared,
            Some(pool_tx),
            reread,
        )
        // No stream block is a file's: none is said to hold a long line.
        .map(|_| ())
    })
}

// === merging ===

/// What parsing one block gave, with the context it started from and ended with. Line numbers
/// in `read` count from the block's first line.
struct BlockRead {
    /// A line of the block is longer than the longest asked for: the block was not read on.
    long_line: bool,
    ctx_in: ParseContext,
    ctx_out: ParseContext,
    /// The block's first records, read apart; `None` when no record of the first
    /// [`MAX_HEAD_RECORDS`] carries its year, and `read` holds them all.
    head: Option<Head>,
    /// The records after the head, and every physical line of the block in `lines`.
    read: LogRead,
}

/// The first records of a block, up to where the context no longer depends on the guess it
/// started from: their text, kept to parse them again, what they gave, and the context after
/// them. The worker parses them from its guess and from a probe that differs in year, last time
/// and zone ([`probe`]); the head ends where the two contexts meet (its records set the year,
/// the last time and the zone), or, when they have not met after [`MAX_HEAD_RECORDS`], at the
/// first record whose time carries its year, which leaves only the zone to the guess. Either
/// way [`mend`] checks the context after them, so where it ends is a matter of speed, never of
/// what is read.
struct Head {
    /// Each record's text and its first line, counted from the block's first line.
    records: Vec<(String, u64)>,
    /// What they gave (`lines` stays 0: the block's lines are counted in [`BlockRead::read`]).
    read: LogRead,
    ctx_after: ParseContext,
}

/// A block's head is kept for at most this many records: a log whose times never carry their
/// year (klog alone) has none, and a wrong guess there parses the whole block again.
const MAX_HEAD_RECORDS: usize = 256;

/// A context that differs from `guess` in year, last time and zone, and in nothing the records
/// cannot set (the source's `not_after` and `message_only`).
fn probe(guess: &ParseContext) -> ParseContext {
    let mut p = guess.clone();
    p.year = guess.year.wrapping_add(1);
    p.last = match guess.last {
        Some(_) => None,
        None => Some(Timestamp::UNIX_EPOCH),
    };
    p.offset = jiff::tz::Offset::from_seconds(guess.offset.seconds().wrapping_add(3_600) % 86_400)
        .unwrap_or(jiff::tz::Offset::UTC);
    p
}

/// How to get a block's bytes again, to parse it again with the right context.
enum Redo {
    /// The bytes `start..end` of the file.
    Range { start: u64, end: u64 },
    /// The bytes themselves (a stream).
    Data(Vec<u8>),
}

/// Messages to the merging thread.
enum Msg {
    /// Block `k` was parsed.
    Parsed(u64, Box<BlockRead>, Redo),
    /// Block `k` of a file meets a line longer than [`StreamOpts::max_line_bytes`].
    LongLine(u64),
    /// Reading failed.
    Failed(std::io::Error),
    /// The stream has this many blocks.
    End(u64),
    /// The stream has this many blocks, what was read before reading failed (a truncated
    /// `.gz`: `unexpected end of file`): they are merged, and the error is the read's.
    CutShort(u64, std::io::Error),
}

/// State the merging thread shares with the workers.
struct Shared {
    /// The context at the end of the last block merged: the workers' guess.
    latest: Mutex<ParseContext>,
    /// How far the merge is, and where blocks start.
    progress: Mutex<Progress>,
    /// Signalled when `progress` changes.
    changed: Condvar,
}

/// What the workers wait on, under one lock.
#[derive(Default)]
struct Progress {
    /// Blocks merged so far.
    merged: u64,
    /// The merge stopped: the workers stop too.
    stopped: bool,
    /// Where blocks start, as the block before each told it ([`Shared::tell_start`]).
    starts: HashMap<u64, Option<u64>>,
}

impl Shared {
    fn new(ctx: &ParseContext) -> Self {
        Shared {
            latest: Mutex::new(ctx.clone()),
            progress: Mutex::new(Progress::default()),
            changed: Condvar::new(),
        }
    }

    /// Changes the progress and wakes every waiter (a poisoned lock is changed all the same).
    fn update(&self, f: impl FnOnce(&mut Progress)) {
        match self.progress.lock() {
            Ok(mut p) => f(&mut p),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
        self.changed.notify_all();
    }

    /// Waits until `ready` gives a value or the merge stops (`Err`).
    fn wait_for<T>(&self, mut ready: impl FnMut(&mut Progress) -> Option<T>) -> Result<T, Stopped> {
        let mut p = self.progress.lock().map_err(|_| Stopped)?;
        loop {
            if p.stopped {
                return Err(Stopped);
            }
            if let Some(v) = ready(&mut p) {
                return Ok(v);
            }
            p = self.changed.wait(p).map_err(|_| Stopped)?;
        }
    }

    /// Tells where block `k` starts: `Some(cut)`, or `None` when the block before it could not
    /// tell (it failed, or was empty and did not look where the next cut is).
    fn tell_start(&self, k: u64, start: Option<u64>) {
        self.update(|p| {
            p.starts.insert(k, start);
        });
    }

    /// Waits until the block before block `k` tells where `k` starts (`None`: it could not
    /// tell). `Err` when the merge stopped.
    fn start_of(&self, k: u64) -> Result<Option<u64>, Stopped> {
        self.wait_for(|p| p.starts.remove(&k))
    }

    fn guess(&self) -> ParseContext {
        match self.latest.lock() {
            Ok(c) => c.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Waits until block `k` is at most `2 × workers` blocks ahead of the merge, so parsed
    /// blocks cannot pile up. `false` when the merge stopped.
    fn wait_turn(&self, k: u64, workers: usize) -> bool {
        let ahead = 2 * workers.max(1) as u64;
        self.wait_for(|p| (k < p.merged + ahead).then_some(()))
            .is_ok()
    }

    fn merged(&self, blocks: u64) {
        self.update(|p| p.merged = blocks);
    }

    fn stop(&self) {
        self.update(|p| p.stopped = true);
    }
}

/// The merge stopped: a worker stops too.
struct Stopped;

/// Tells where the block after block `k` starts once [`tell`](Self::tell) is called, and that
/// it cannot when dropped first (its worker failed, stopped or panicked), so no worker waits
/// for it in vain.
struct TellNext<'a> {
    shared: &'a Shared,
    k: u64,
    told: bool,
}

impl TellNext<'_> {
    fn tell(&mut self, start: Option<u64>) {
        self.shared.tell_start(self.k + 1, start);
        self.told = true;
    }
}

impl Drop for TellNext<'_> {
    fn drop(&mut self) {
        if !self.told {
            self.shared.tell_start(self.k + 1, None);
        }
    }
}

/// Stops the workers when the merge ends, however it ends.
struct StopOnDrop<'a>(&'a Shared);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Where [`merge_blocks`] stopped at a block of a file that meets a line too long to read in
/// blocks: the file is to be read on from `offset` (the block's start, where a record begins),
/// in the context `ctx`, after `lines_before` lines.
struct Resume {
    offset: u64,
    ctx: ParseContext,
    lines_before: u64,
}

/// Takes parsed blocks in any order and merges them into `out` in stream order, parsing again
/// (with `reread`) the blocks whose guessed context was wrong; their line numbers count on from
/// `lines_before`. Spent stream buffers go back to `pool`. Returns the first reading error, or
/// where it stopped at a block that meets a long line ([`Msg::LongLine`]).
#[allow(clippy::too_many_arguments)]
fn merge_blocks(
    msgs: &Receiver<Msg>,
    opts: &StreamOpts<'_>,
    mut ctx: ParseContext,
    mut lines_before: u64,
    out: &mut LogRead,
    on_event: &mut dyn FnMut(LoggedEvent),
    shared: &Shared,
    pool: Option<Sender<Vec<u8>>>,
    reread: impl Fn(&Redo, ParseContext) -> std::io::Result<BlockRead>,
) -> std::io::Result<Option<Resume>> {
    let _stop = StopOnDrop(shared);
    // `None`: the block meets a long line.
    let mut waiting: BTreeMap<u64, Option<(Box<BlockRead>, Redo)>> = BTreeMap::new();
    let mut next = 0u64;
    let mut end = None;
    let mut cut_short = None;
    // Where the blocks merged so far end in the file: the start of the next non-empty one.
    let mut merged_to = 0u64;
    while end != Some(next) {
        match msgs.recv() {
            Ok(Msg::Parsed(k, read, redo)) => {
                waiting.insert(k, Some((read, redo)));
            }
            Ok(Msg::LongLine(k)) => {
                waiting.insert(k, None);
            }
            Ok(Msg::Failed(error)) => return Err(error),
            Ok(Msg::End(blocks)) => end = Some(blocks),
            Ok(Msg::CutShort(blocks, error)) => (end, cut_short) = (Some(blocks), Some(error)),
            // Every sender is gone before the end: a worker or the reader panicked.
            Err(_) => return Err(std::io::Error::other("a log reading thread stopped")),
        }
        while let Some(block) = waiting.remove(&next) {
            let Some((mut read, redo)) = block else {
                return Ok(Some(Resume {
                    offset: merged_to,
                    ctx,
                    lines_before,
                }));
            };
            if let Redo::Range { end, .. } = redo {
                merged_to = merged_to.max(end);
            }
            if !read.ctx_in.resolves_like(&ctx) && !mend(&mut read, &ctx, opts) {
                *read = reread(&redo, ctx.clone())?;
            }
            ctx = read.ctx_out;
            match shared.latest.lock() {
                Ok(mut l) => l.clone_from(&ctx),
                Err(poisoned) => poisoned.into_inner().clone_from(&ctx),
            }
            let lines = read.read.lines;
            crate::progress::advance(match &redo {
                Redo::Range { start, end } => end - start,
                Redo::Data(data) => data.len() as u64,
            });
            if let Some(head) = read.head {
                merge(out, head.read, lines_before, on_event);
            }
            merge(out, read.read, lines_before, on_event);
            lines_before += lines;
            if let (Some(pool), Redo::Data(mut data)) = (&pool, redo) {
                data.clear();
                let _ = pool.send(data);
            }
            next += 1;
            shared.merged(next);
        }
    }
    match cut_short {
        Some(error) => Err(error),
        None => Ok(None),
    }
}

/// Parses the head of a block read from a wrong guess again, from `ctx`, the real context at its
/// start: `true` when that ends in the context the worker had after it, so the head's new
/// records and the worker's records after it are what parsing the block from `ctx` gives;
/// `false` (nothing changed) when the block has no head or the contexts differ.
fn mend(read: &mut BlockRead, ctx: &ParseContext, opts: &StreamOpts<'_>) -> bool {
    let Some(head) = &mut read.head else {
        return false;
    };
    let mut again_ctx = ctx.clone();
    let mut again = LogRead::default();
    for (text, line) in &head.records {
        handle(text, *line, &mut again_ctx, opts, &mut again);
    }
    if again_ctx != head.ctx_after {
        return false;
    }
    head.read = again;
    #[cfg(test)]
    MENDED.with(|m| m.set(m.get() + 1));
    true
}

#[cfg(test)]
thread_local! {
    /// Blocks [`mend`] mended on this thread (the merging one), for the tests.
    static MENDED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Adds `later`, read from the same block after `read`, to it.
fn append(read: &mut LogRead, later: LogRead) {
    let mut events = std::mem::take(&mut read.events);
    merge(read, later, 0, &mut |e| events.push(e));
    read.events = events;
}

/// Adds one block's read to the stream's, its line numbers shifted by `lines_before`.
fn merge(
    out: &mut LogRead,
    part: LogRead,
    lines_before: u64,
    on_event: &mut dyn FnMut(LoggedEvent),
) {
    out.lines += part.lines;
    out.parsed += part.parsed;
    out.ours += part.ours;
    if part.last_host.is_some() {
        out.last_host = part.last_host;
    }
    for (h, n) in part.hosts {
        if let Some((_, m)) = out.hosts.iter_mut().find(|(o, _)| *o == h) {
            *m += n;
        } else if out.hosts.len() < crate::MAX_OTHER_PROGRAMS {
            out.hosts.push((h, n));
        }
    }
    out.kubelet_callers += part.kubelet_callers;
    out.other_callers += part.other_callers;
    for c in part.other_components {
        if out.other_components.len() < crate::MAX_OTHER_PROGRAMS
            && !out.other_components.iter().any(|(who, _)| *who == c.0)
        {
            out.other_components.push(c);
        }
    }
    for p in part.other_programs {
        if out.other_programs.len() < crate::MAX_OTHER_PROGRAMS && !out.other_programs.contains(&p)
        {
            out.other_programs.push(p);
        }
    }
    out.unparsed += part.unparsed;
    out.before_since += part.before_since;
    if part.dated_year.is_some() {
        out.dated_year = part.dated_year;
    }
    if out.zone_shown.is_none() {
        out.zoneless_before_zone |= part.zoneless_before_zone;
        out.zone_shown = part.zone_shown;
    }
    if out.first_dated_year.is_none() {
        out.yearless_before_dated = out.yearless_before_dated.or(part.yearless_before_dated);
        out.first_dated_year = part.first_dated_year;
    }
    out.yearless_times = match (out.yearless_times, part.yearless_times) {
        (Some((first, _)), Some((_, last))) => Some((first, last)),
        (a, b) => a.or(b),
    };
    let mut understanding = part.understanding;
    for f in &mut understanding.first_failed {
        f.0 += lines_before;
    }
    out.understanding.append(understanding);
    let room = MAX_KEPT_UNPARSED.saturating_sub(out.unparsed_samples.len());
    out.unparsed_samples
        .extend(part.unparsed_samples.into_iter().take(room).map(|mut u| {
            u.line += lines_before;
            u
        }));
    if let Some((a, b)) = part.span {
        out.span = Some(match out.span {
            None => (a, b),
            Some((x, y)) => (x.min(a), y.max(b)),
        });
    }
    for mut e in part.events {
        e.line += lines_before;
        on_event(e);
    }
}

// === parsing one block ===

/// Assembles, parses and classifies one block (whole lines, the last one's newline optional)
/// from `ctx`; line numbers count from the block's first line. A line longer than
/// `max_line_bytes` (its newline not counted) stops it: the [`BlockRead`] says so and holds
/// nothing else of use.
fn parse_block(
    data: &[u8],
    ctx: ParseContext,
    opts: &StreamOpts<'_>,
    max_line_bytes: usize,
) -> BlockRead {
    let mut block = BlockRead {
        long_line: false,
        ctx_in: ctx.clone(),
        ctx_out: ctx,
        head: None,
        read: LogRead::default(),
    };
    let mut reading_head = Some(ReadingHead::new(&block.ctx_in));
    let mut record = |text: &str, line: u64, block: &mut BlockRead| match &mut reading_head {
        Some(r) => {
            if r.push(text, line, block, opts)
                && let Some(r) = reading_head.take()
            {
                r.end(block);
            }
        }
        None => {
            handle(text, line, &mut block.ctx_out, opts, &mut block.read);
        }
    };
    let mut asm = LineAssembler::new();
    // The block is checked as UTF-8 at once (most are: SIMD, a few times faster than a check
    // per line); one that is not is checked line by line, each invalid line read lossily.
    let valid = simdutf8::basic::from_utf8(data).ok();
    let mut push = |(from, to): (usize, usize), block: &mut BlockRead| {
        block.read.lines += 1;
        let text = match valid {
            Some(valid) => Cow::Borrowed(&valid[from..to]),
            None => String::from_utf8_lossy(&data[from..to]),
        };
        if let Some(rec) = asm.push(&text) {
            record(rec.text, rec.first_line, block);
        }
    };
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', data) {
        if nl - start > max_line_bytes {
            block.long_line = true;
            return block;
        }
        push((start, nl), &mut block);
        start = nl + 1;
    }
    if start < data.len() {
        if data.len() - start > max_line_bytes {
            block.long_line = true;
            return block;
        }
        push((start, data.len()), &mut block);
    }
    if let Some(rec) = asm.finish() {
        record(rec.text, rec.first_line, &mut block);
    }
    // A block that ended before its head did.
    if let Some(r) = reading_head {
        r.end(&mut block);
    }
    block
}

/// The head of a block being read (see [`Head`]).
struct ReadingHead {
    /// Its records so far.
    records: Vec<(String, u64)>,
    /// What the records up to the first whose time carries its year gave, or all of them once
    /// the probe met the guess.
    upto_dated: LogRead,
    /// How many records `upto_dated` holds, and the context after them; `None` while no record
    /// set the year.
    dated: Option<(usize, ParseContext)>,
    /// What the records after those gave.
    after_dated: LogRead,
    /// The probe's context ([`probe`]).
    probe: ParseContext,
}

impl ReadingHead {
    fn new(guess: &ParseContext) -> ReadingHead {
        ReadingHead {
            records: Vec::new(),
            upto_dated: LogRead::default(),
            dated: None,
            after_dated: LogRead::default(),
            probe: probe(guess),
        }
    }

    /// Reads one record of the block from `block.ctx_out`; `true` when the head is complete: the
    /// probe met the guess, or it holds [`MAX_HEAD_RECORDS`] records.
    fn push(
        &mut self,
        text: &str,
        line: u64,
        block: &mut BlockRead,
        opts: &StreamOpts<'_>,
    ) -> bool {
        self.records.push((text.to_string(), line));
        let dated = handle(text, line, &mut block.ctx_out, opts, &mut self.after_dated);
        let _ = parse_unless_unnamed(text, &mut self.probe);
        let met = self.probe == block.ctx_out;
        if (dated && self.dated.is_none()) || met {
            append(&mut self.upto_dated, std::mem::take(&mut self.after_dated));
            self.dated = Some((self.records.len(), block.ctx_out.clone()));
        }
        met || self.records.len() >= MAX_HEAD_RECORDS
    }

    /// Hands the head to `block` (none when no record set the year: then `after_dated` holds
    /// every record) and the records after it to `block.read`, which keeps its line count.
    fn end(self, block: &mut BlockRead) {
        let lines = block.read.lines;
        block.read = self.after_dated;
        block.read.lines = lines;
        if let Some((n, ctx_after)) = self.dated {
            let mut records = self.records;
            records.truncate(n);
            block.head = Some(Head {
                records,
                read: self.upto_dated,
                ctx_after,
            });
        }
    }
}

/// [`parse_block`], with a panic (a parser bug) turned into an error instead of stopping the
/// merge: the daemon never panics on input.
fn guarded_parse(
    data: &[u8],
    ctx: ParseContext,
    opts: &StreamOpts<'_>,
    max_line_bytes: usize,
) -> std::io::Result<BlockRead> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        parse_block(data, ctx, opts, max_line_bytes)
    }))
    .map_err(|_| std::io::Error::other("the log parser panicked on a block"))
}

/// Parses and classifies one record into `read`. Whether its time carries its own year
/// ([`carries_year`]), so that `ctx`'s year and last time are now the record's.
///
/// A klog record (bare or in a syslog envelope) or kubelet JSON record the same as one this
/// thread read lately but for its times ([`Opening`]) is not parsed again: it is read as that
/// one was, with its own time ([`handle_again`]).
fn handle(
    text: &str,
    line: u64,
    ctx: &mut ParseContext,
    opts: &StreamOpts<'_>,
    read: &mut LogRead,
) -> bool {
    // journalctl's header dates the yearless lines after it (`-- Logs begin at Wed 2023-06-14
    // 20:00:01 UTC, end at …`).
    if let Some(y) = header_year(text) {
        read.dated_year = Some(y);
    }
    let start = (text.len() <= AGAIN_MAX_RECORD_BYTES && AGAIN.with_borrow_mut(Again::wanted))
        .then(|| opening(text))
        .flatten();
    if let Some(k) = start
        && handle_again(text, line, k, ctx, opts, read)
    {
        return k.carries_year();
    }
    let offset_before = ctx.offset;
    let skimmed = parse_unless_unnamed(text, ctx);
    let parsed = skimmed.line;
    if ctx.offset != offset_before && read.zone_shown.is_none() {
        read.zone_shown = Some(ctx.offset);
    }
    let dated = parsed.time.is_some() && carries_year(&parsed);
    if let Some(t) = parsed.time
        && before_since(t, opts, read)
    {
        return dated;
    }
    read.understanding.count(text, parsed.is_parsed(), line);
    if let Some(t) = parsed.time {
        if dated {
            date_block(t, read);
        } else {
            note_yearless(t, read);
        }
    }
    if !parsed.is_parsed() {
        read.unparsed += 1;
        if read.unparsed_samples.len() < MAX_KEPT_UNPARSED && non_record(text).is_none() {
            read.unparsed_samples.push(Unparsed {
                origin: opts.origin.to_string(),
                line,
                text: cut(text).into_owned(),
            });
        }
        return dated;
    }
    read.parsed += 1;
    note_program(&parsed, read);
    let named = skimmed.may_be_named.then(|| classified(&parsed)).flatten();
    // Only a record read in full is noted: one the catalogue cannot name was only skimmed,
    // which costs about what a lookup does.
    if let Some(k) = start
        && skimmed.may_be_named
        && parsed.time.is_some()
    {
        AGAIN.with_borrow_mut(|again| again.read(text, k, &named));
    }
    if let Some((event, content_key)) = named {
        push_event(event, parsed.time, content_key, text, line, opts, read);
    }
    dated
}

/// Counts a record at `t` before [`StreamOpts::since`] (true: it is skipped), or puts `t` in the
/// span read.
fn before_since(t: Timestamp, opts: &StreamOpts<'_>, read: &mut LogRead) -> bool {
    if opts.since.is_some_and(|s| t < s) {
        read.before_since += 1;
        return true;
    }
    read.span = Some(match read.span {
        None => (t, t),
        Some((a, b)) => (a.min(t), b.max(t)),
    });
    false
}

/// Counts a parsed record as [`LogRead::ours`], or names its program in
/// [`LogRead::other_programs`]. The service manager's own records (`systemd[1]: Started
/// kubelet: The Kubernetes Node Agent.`, init's) are neither: they are what `journalctl -u
/// kubelet` shows of a unit that has logged nothing yet. A record in a shape the kubelet or a
/// runtime writes (klog, JSON, logfmt) is ours under any identifier: a kubelet started through
/// a wrapper script logs as `sh[3408]`.
fn note_program(parsed: &ParsedLine<'_>, read: &mut LogRead) {
    use podcoroner_core::logs::{Component, Format};
    let ident = parsed.envelope.as_ref().and_then(|e| e.ident.as_deref());
    // A CRI log line's "host" is its stream.
    if let Some(host) = parsed
        .envelope
        .as_ref()
        .filter(|e| e.kind != podcoroner_core::logs::EnvelopeKind::CriLog)
        .and_then(|e| e.host.as_deref())
    {
        // The buffer is reused: a log of several hosts' lines changes host often.
        let last = read.last_host.get_or_insert_with(String::new);
        if last != host {
            last.clear();
            last.push_str(host);
        }
        if let Some((_, n)) = read.hosts.iter_mut().find(|(h, _)| h == host) {
            *n += 1;
        } else if read.hosts.len() < crate::MAX_OTHER_PROGRAMS {
            read.hosts.push((host.to_string(), 1));
        }
    }
    if ident.is_some_and(|i| i == "systemd" || i == "init") {
        return;
    }
    let ours = match (parsed.component, ident) {
        (
            Some(Component::Kubelet | Component::Containerd | Component::Crio | Component::Docker),
            _,
        )
        | (_, None) => true,
        _ if parsed.format != Format::Plain => true,
        (_, Some(ident)) => {
            let lower = ident.to_ascii_lowercase();
            Component::is_all_in_one(ident)
                || [
                    "kube",
                    "k8s",
                    "containerd",
                    "crio",
                    "cri-o",
                    "docker",
                    "cri",
                ]
                .iter()
                .any(|w| lower.contains(w))
        }
    };
    if read.kubelet_callers == 0
        && let Some(caller) = parsed.caller.as_deref()
    {
        note_caller(caller, read);
    }
    if ours {
        read.ours += 1;
    } else if let Some(ident) = ident
        && read.other_programs.len() < crate::MAX_OTHER_PROGRAMS
        && !read.other_programs.iter().any(|p| p == ident)
    {
        read.other_programs.push(ident.to_string());
    }
}

/// Counts a record's caller as the kubelet's code or another component's
/// ([`LogRead::kubelet_callers`], [`LogRead::other_callers`]).
fn note_caller(caller: &str, read: &mut LogRead) {
    use podcoroner_core::logs::callers::{CallerOwner, caller_owner};
    match caller_owner(caller) {
        Some(CallerOwner::Kubelet) => read.kubelet_callers += 1,
        Some(CallerOwner::Other(who)) => {
            read.other_callers += 1;
            if read.other_components.len() < crate::MAX_OTHER_PROGRAMS
                && !read.other_components.iter().any(|(w, _)| *w == who)
            {
                let file = caller.rsplit_once(':').map_or(caller, |(path, _)| path);
                read.other_components.push((who, file.to_string()));
            }
        }
        None => {}
    }
}

/// Notes the year of a record whose time `t` carries its own: the block is dated by it.
fn date_block(t: Timestamp, read: &mut LogRead) {
    let y = year(t);
    read.dated_year = Some(y);
    read.first_dated_year.get_or_insert(y);
}

/// Notes the time of a record whose time carries no year: the first and the last such (their
/// years are read once, at the end: [`LogRead::yearless_years`]), and whether one was read
/// before the log showed its zone (such times carry no zone either).
fn note_yearless(t: Timestamp, read: &mut LogRead) {
    read.yearless_times = Some(read.yearless_times.map_or((t, t), |(first, _)| (first, t)));
    if read.zone_shown.is_none() {
        read.zoneless_before_zone = true;
    }
    if read.first_dated_year.is_none() && read.yearless_before_dated.is_none() {
        read.yearless_before_dated = Some(t);
    }
}

/// The year a log's header gives: journalctl's ([`journal_header_year`]) or the one glog and
/// klog write at the top of each log file they create (`Log file created at: 2020/05/03
/// 13:38:35`, klog `createLogDirs`/`create`: kubelet.INFO, a Windows kubelet's log).
pub(crate) fn header_year(text: &str) -> Option<i32> {
    journal_header_year(text).or_else(|| {
        let date = text
            .trim_start_matches([' ', '\t'])
            .strip_prefix("Log file created at: ")?;
        let year = date.get(..4)?;
        (date.as_bytes().get(4) == Some(&b'/') && year.bytes().all(|b| b.is_ascii_digit()))
            .then(|| year.parse().ok())
            .flatten()
    })
}

/// The year journalctl's header gives (`-- Logs begin at Wed 2023-06-14 20:00:01 UTC, end at
/// Thu 2023-06-15 08:00:00 UTC. --`; systemd 246 and later: `-- Journal begins at …, ends at
/// … --`), when its start and end are in one year (a journal spanning a new year does not say
/// which of its lines are in which). Pasted, it may be indented.
pub(crate) fn journal_header_year(text: &str) -> Option<i32> {
    let rest = journal_header(text)?;
    let years: Vec<i32> = rest
        .split_whitespace()
        .filter_map(|w| {
            let (y, md) = w.split_once('-')?;
            (y.len() == 4 && md.len() == 5)
                .then(|| y.parse().ok())
                .flatten()
        })
        .collect();
    match years.as_slice() {
        [y] => Some(*y),
        [a, b] if a == b => Some(*a),
        _ => None,
    }
}

/// What follows `-- Logs begin at ` or `-- Journal begins at ` in journalctl's header (pasted
/// indented too).
fn journal_header(text: &str) -> Option<&str> {
    let text = text.trim_start_matches([' ', '\t']);
    text.strip_prefix("-- Logs begin at ")
        .or_else(|| text.strip_prefix("-- Journal begins at "))
}

/// The UTC offset journalctl's header shows its times in, when it is a number other than UTC
/// (`-- Logs begin at Thu 2019-04-11 23:51:07 +0430, end at …`, as journalctl prints a zone
/// with no abbreviation): the zone its short prefix's local times are in. UTC is how zone-less
/// times are read anyway; a zone abbreviation (`MSK`, `CEST`) names no one offset and gives
/// none.
pub(crate) fn journal_header_offset(text: &str) -> Option<jiff::tz::Offset> {
    let zone = journal_header(text)?
        .split_whitespace()
        .nth(3)?
        .trim_end_matches([',', '.']);
    let (sign, digits) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m): (i32, i32) = (digits[..2].parse().ok()?, digits[2..].parse().ok()?);
    jiff::tz::Offset::from_seconds(sign * (h * 3600 + m * 60))
        .ok()
        .filter(|o| *o != jiff::tz::Offset::UTC)
}

/// The UTC year of `t`.
pub(crate) fn year(t: Timestamp) -> i32 {
    i32::from(t.to_zoned(jiff::tz::TimeZone::UTC).year())
}

/// Keeps the event a record at `line`, logged at `time`, was classified as (`event`, without
/// its time).
fn push_event(
    event: Arc<Event<'static>>,
    time: Option<Timestamp>,
    content_key: u64,
    text: &str,
    line: u64,
    opts: &StreamOpts<'_>,
    read: &mut LogRead,
) {
    read.events.push(LoggedEvent {
        event,
        time,
        log: opts.log,
        origin: Arc::clone(&opts.shared_origin),
        line,
        text: cut(text).into(),
        content_key,
        folded: None,
    });
}

/// [`handle`] of a record (`k` its opening) the same as one this thread remembers but for its
/// times: what `handle` does with what that one gave (a parsed record, its classification) and
/// this one's time. False, with nothing done, when no record is remembered or klog's time is no
/// date in the context's year (which `handle` then reads in full, as it does every record once).
fn handle_again(
    text: &str,
    line: u64,
    k: Opening,
    ctx: &mut ParseContext,
    opts: &StreamOpts<'_>,
    read: &mut LogRead,
) -> bool {
    AGAIN.with_borrow_mut(|again| {
        let Some(named) = again.get(text, k) else {
            return false;
        };
        let Some(t) = k.read_time(ctx) else {
            return false;
        };
        if before_since(t, opts, read) {
            return true;
        }
        read.understanding.count(text, true, line);
        if k.carries_year() {
            date_block(t, read);
        } else {
            note_yearless(t, read);
        }
        read.parsed += 1;
        if let Some((event, content_key)) = named {
            push_event(
                Arc::clone(event),
                Some(t),
                *content_key,
                text,
                line,
                opts,
                read,
            );
        }
        true
    })
}

/// How many records a parsing thread remembers ([`Again`]); past it, it starts again
/// from none.
const AGAIN_CAPACITY: usize = 1024;
/// The longest record a parsing thread looks up or remembers, in bytes: what it remembers stays
/// under 2 MiB ([`AGAIN_CAPACITY`] records), whatever the log (a record may be 1 MiB long).
const AGAIN_MAX_RECORD_BYTES: usize = 2048;
/// How many records with an [`Opening`] a parsing thread looks up before it judges whether
/// looking up pays: when fewer than one in [`AGAIN_PAYS`] was remembered, it reads the next
/// [`AGAIN_RESTS`] records without looking them up (or noting them), then tries again.
const AGAIN_TRIES: u32 = 4096;
/// See [`AGAIN_TRIES`].
const AGAIN_PAYS: u32 = 8;
/// See [`AGAIN_TRIES`].
const AGAIN_RESTS: u32 = 1 << 16;

/// The records with an [`Opening`] (klog, bare or in a syslog envelope, and kubelet JSON) a
/// parsing thread read lately, by their text outside their times, with what classifying them
/// gave: a log repeats its lines at other times (a pod worker's `Error syncing pod` at every
/// back-off, a probe's result at every period), and [`Opening`] says such a record parses as
/// the first one did but for its time. A record is remembered when read in full a second time
/// (one the catalogue cannot name is only skimmed, which costs about what a lookup does), so a
/// log whose every line is new costs a hash per record, not a copy; and a log that rarely
/// repeats a line (a healthy node's) is not looked up at all most of the time
/// ([`AGAIN_TRIES`]). Neither changes what is read, only how fast.
#[derive(Default)]
struct Again {
    hasher: foldhash::fast::RandomState,
    /// Key → the record, for records read twice or more.
    seen: HashMap<u64, Seen, foldhash::fast::RandomState>,
    /// The keys of records read once.
    once: HashSet<u64, foldhash::fast::RandomState>,
    /// Records looked up, and found remembered, since the last judgement.
    tried: u32,
    found: u32,
    /// Records still to read without looking them up.
    resting: u32,
}

/// A remembered record: its text outside its times (what a record must match byte for byte to
/// be read as it; [`Opening::outside_times`], the two parts one after the other, the first
/// `split` bytes long), and its classification.
struct Seen {
    outside: Box<str>,
    split: usize,
    named: Option<(Arc<Event<'static>>, u64)>,
}

impl Again {
    /// Whether the next record is to be looked up (and noted): false while resting.
    fn wanted(&mut self) -> bool {
        if self.resting > 0 {
            self.resting -= 1;
            return false;
        }
        true
    }

    /// What the remembered record the same as `text` but for its times was classified as, when
    /// one is remembered.
    fn get(&mut self, text: &str, k: Opening) -> Option<&Option<(Arc<Event<'static>>, u64)>> {
        self.tried += 1;
        if self.tried == AGAIN_TRIES {
            if self.found < AGAIN_TRIES / AGAIN_PAYS {
                self.resting = AGAIN_RESTS;
            }
            (self.tried, self.found) = (0, 0);
        }
        let seen = Self::find(&self.hasher, &self.seen, text, k)?;
        self.found += 1;
        Some(&seen.named)
    }

    /// The remembered record the same as `text` but for its times, when one is remembered.
    #[cfg(test)]
    fn remembered(&self, text: &str, k: Opening) -> Option<&Seen> {
        Self::find(&self.hasher, &self.seen, text, k)
    }

    fn find<'s>(
        hasher: &foldhash::fast::RandomState,
        seen: &'s HashMap<u64, Seen, foldhash::fast::RandomState>,
        text: &str,
        k: Opening,
    ) -> Option<&'s Seen> {
        use std::hash::BuildHasher;
        if seen.is_empty() {
            return None;
        }
        let outside = k.outside_times(text);
        let s = seen.get(&hasher.hash_one(outside))?;
        (s.outside.split_at(s.split) == outside).then_some(s)
    }

    /// Notes a record read in full and what it was classified as: remembered when read
    /// the second time.
    fn read(&mut self, text: &str, k: Opening, named: &Option<(Arc<Event<'static>>, u64)>) {
        use std::hash::BuildHasher;
        let (head, rest) = k.outside_times(text);
        let key = self.hasher.hash_one((head, rest));
        if !self.once.remove(&key) {
            if self.once.len() >= AGAIN_CAPACITY {
                self.once.clear();
            }
            self.once.insert(key);
            return;
        }
        // A record that starts as one of `Opening`'s shapes but is read as another is never
        // remembered: one the same as it but for its times may be read otherwise still.
        if !k.read_from_start(text) {
            return;
        }
        if self.seen.len() >= AGAIN_CAPACITY {
            self.seen.clear();
        }
        self.seen.insert(
            key,
            Seen {
                outside: [head, rest].concat().into_boxed_str(),
                split: head.len(),
                named: named.clone(),
            },
        );
    }
}

thread_local! {
    static AGAIN: std::cell::RefCell<Again> = std::cell::RefCell::new(Again::default());
}

/// How many classifications a parsing thread remembers ([`classified`]); past it, it starts
/// again from none.
const CLASSIFIED_CACHE: usize = 4096;

/// What a parsing thread remembers of the events it classified lately.
#[derive(Default)]
struct Recent {
    /// Content key → the event, for contents seen twice or more.
    events: HashMap<u64, Arc<Event<'static>>, foldhash::fast::RandomState>,
    /// The content keys of events seen once: a second sighting caches the event.
    once: HashSet<u64, foldhash::fast::RandomState>,
}

thread_local! {
    static RECENT: std::cell::RefCell<Recent> = std::cell::RefCell::new(Recent::default());
}

/// [`classify`] of `parsed` less its time (which is `parsed.time`), with its content key: an
/// event that says what one classified lately on this thread said (a log repeats its lines,
/// each at another time) shares that classification instead of being classified again. The key
/// holds everything `classify` reads but the time ([`content_key`]), so the result is the same.
///
/// [`content_key`]: podcoroner_core::logs::content_key
fn classified(parsed: &ParsedLine<'_>) -> Option<(Arc<Event<'static>>, u64)> {
    // Most records name no event: the catalogue's match rules them out before any hashing.
    let named = named(parsed)?;
    let key = podcoroner_core::logs::content_key(parsed);
    RECENT.with_borrow_mut(|recent| {
        if let Some(hit) = recent.events.get(&key) {
            return Some((Arc::clone(hit), key));
        }
        let mut event = named.classify().into_owned();
        // Its time is the record's (`LoggedEvent::time`).
        event.time = None;
        let event = Arc::new(event);
        if recent.once.remove(&key) {
            if recent.events.len() >= CLASSIFIED_CACHE {
                recent.events.clear();
            }
            recent.events.insert(key, Arc::clone(&event));
        } else {
            if recent.once.len() >= CLASSIFIED_CACHE {
                recent.once.clear();
            }
            recent.once.insert(key);
        }
        Some((event, key))
    })
}

/// Whether a record's time carries its own year: an RFC 3339, CRI or journald envelope, a JSON
/// time, logfmt's `time=`, or the RFC 3339 time a zap or slog line opens with (klog and syslog
/// times have none), whatever envelope is around it.
pub(crate) fn carries_year(p: &podcoroner_core::logs::ParsedLine<'_>) -> bool {
    let env = p.envelope.as_ref().map(|e| e.kind);
    matches!(
        env,
        Some(EnvelopeKind::SyslogRfc3339 | EnvelopeKind::CriLog | EnvelopeKind::JournaldJson)
    ) || p.format == Format::Json
        || p.format == Format::TimeLevel
        || (p.format == Format::Logfmt && (p.raw.contains("time=") || p.raw.contains("\" level=")))
}

// === cutting ===

/// [`LineAssembler::cut_class`] of the line `line` (without its newline).
fn cut_class(line: &[u8]) -> CutClass {
    match std::str::from_utf8(line) {
        Ok(s) => LineAssembler::cut_class(s),
        Err(_) => LineAssembler::cut_class(&String::from_utf8_lossy(line)),
    }
}

/// The longest line before a line that a file's cut looks at: 16 KiB, the longest part of a CRI
/// log line (containerd's `max_container_log_line_size`). After a longer line, a line begins a
/// record only when it does alone.
const MAX_PREV_LINE_BYTES: u64 = 16 << 10;

/// Where block `k`'s buffer begins in the file: far enough before the block's nominal start
/// that the line before the first line of the block is in it, when no longer than
/// [`MAX_PREV_LINE_BYTES`].
fn block_base(k: u64, block_bytes: u64) -> u64 {
    k.saturating_mul(block_bytes)
        .saturating_sub(MAX_PREV_LINE_BYTES + 2)
}

/// Bytes read past a block's nominal end to find its cut (usually within the first line).
const CUT_SLACK_BYTES: u64 = 16 << 10;

/// A block of a file as [`file_block`] read it.
struct Block {
    /// The block's bytes in the file, `start..end`.
    range: (u64, u64),
    /// Where the buffer it was read into begins in the file.
    base: u64,
    /// Where the next block starts, when this one found it: the first cut at or after the next
    /// block's nominal start.
    next_start: Option<u64>,
}

/// Reads block `k` of `file` (see the module docs) into `buf`; returns the block's byte range
/// and where `buf` begins in the file: at [`block_base`], or [`DEFAULT_MAX_RECORD_BYTES`] further
/// back when a cut asks what is before it ([`Cut::NeedBack`]).
///
/// `told` is where the block starts as the block before it found it (its
/// [`Block::next_start`]): the block then looks only for its end, and a cut is found once, not
/// by both blocks beside it (on a log of lines of no known shape, each cut looks at the
/// [`DEFAULT_MAX_RECORD_BYTES`] before it). `None`, or a start before the block's nominal start
/// (the block before read less than the file's length): the block finds its start itself.
///
/// A block in which no line begins a record is empty (its records belong to the block before)
/// and is known so from its own bytes: only the block holding the last cut before a long run
/// of lines that begin none reads that run, so the file is read in linear time whatever it
/// holds.
///
/// `None` when a cut is looked for in a line longer than `max_line_bytes`: what is read
/// stays under `max_line_bytes` past the block and a cut's search ([`DEFAULT_MAX_RECORD_BYTES`]
/// at most, without such a line), and [`read_file`] reads on in order from the block before.
fn file_block(
    file: &File,
    len: u64,
    k: u64,
    block_bytes: u64,
    max_line_bytes: usize,
    told: Option<u64>,
    buf: &mut ReadBuf,
) -> std::io::Result<Option<Block>> {
    let nominal = k.saturating_mul(block_bytes);
    let next = nominal.saturating_add(block_bytes);
    buf.filled = 0;
    // A cut is at or after the nominal start it is looked for from. One told before it comes
    // from a block whose read ended short (the file shrank while read): the start is found
    // here, from this block's own bytes.
    let told = told.filter(|&start| start >= nominal);
    if let Some(start) = told
        && start >= next
    {
        // No cut in this block: it is empty, and the next starts where this one would.
        return Ok(Some(Block {
            range: (nominal, nominal),
            base: nominal,
            next_start: Some(start),
        }));
    }
    let mut base = block_base(k, block_bytes);
    // Tiny blocks (tests) read a little ahead, large ones [`CUT_SLACK_BYTES`].
    let step = CUT_SLACK_BYTES.min(block_bytes).max(64);
    let mut want = next.saturating_add(step).min(len);
    // Where the search for the block's end goes on when more is read.
    let mut end_from = next;
    loop {
        read_range(file, base + buf.filled as u64, want, buf)?;
        let data = buf.data();
        let end_of_data = base + data.len() as u64;
        // A file that shrank while read ends where reading ended.
        let at_end = end_of_data >= len || end_of_data < want;
        let start = match told {
            _ if k == 0 => Cut::At(0),
            Some(start) => Cut::At(start),
            None => cut_at(data, base, nominal, next, at_end),
        };
        let end = match start {
            Cut::At(_) if next >= end_of_data && at_end => Cut::At(end_of_data),
            Cut::At(_) => cut_at(data, base, end_from, u64::MAX, at_end),
            // No cut before the next block's start: this block is empty.
            Cut::Beyond => {
                return Ok(Some(Block {
                    range: (nominal, nominal),
                    base,
                    next_start: None,
                }));
            }
            other => other,
        };
        // The line at (or around) where the search stopped runs on to the end of what was
        // read without a newline.
        if let Cut::Unknown(from) = end
            && end_of_data - from > max_line_bytes as u64
        {
            return Ok(None);
        }
        match (start, end) {
            (Cut::At(start), Cut::At(end)) => {
                let start = start.min(end_of_data);
                let end = end.clamp(start, end_of_data);
                return Ok(Some(Block {
                    range: (start, end),
                    base,
                    next_start: Some(end),
                }));
            }
            (_, Cut::NeedBack) => {
                // Read again from further back (once: from there every cut is told).
                base = nominal.saturating_sub(BACK_BYTES);
                buf.filled = 0;
                continue;
            }
            (Cut::At(_), Cut::Unknown(from)) => end_from = from,
            _ => {}
        }
        if at_end {
            // Nothing begins a record from here to the end: an empty block.
            return Ok(Some(Block {
                range: (end_of_data, end_of_data),
                base,
                next_start: None,
            }));
        }
        want = want.saturating_add(block_bytes.max(step)).min(len);
    }
}

/// How far before a block's nominal start its buffer begins when a cut asks what is before it:
/// enough for [`opener_before`] and [`line_before`] of any line from there on.
const BACK_BYTES: u64 = DEFAULT_MAX_RECORD_BYTES as u64 + MAX_PREV_LINE_BYTES + 2;

/// Where the first cut at or after a point is, as far as a buffer tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// At this byte.
    At(u64),
    /// At or after the limit asked for.
    Beyond,
    /// The buffer does not reach far enough to tell: no cut before this byte, a line start to
    /// go on from when more is read.
    Unknown(u64),
    /// The buffer does not begin far enough back to tell: read it from [`BACK_BYTES`] before
    /// the block.
    NeedBack,
}

/// The cut at or after `at`: the start of the first line starting at or after `at` that
/// begins a record, by a rule of the file's bytes alone (whatever `at` and wherever the buffer
/// begins), or the end of the data when `at_end` and none does; [`Cut::Beyond`] when no line
/// starting before `limit` does. A line begins a record
/// - alone ([`LineAssembler::begins_record`]);
/// - after the line before it, when that is no longer than [`MAX_PREV_LINE_BYTES`]
///   ([`LineAssembler::begins_record_after`]);
/// - when no line in the [`DEFAULT_MAX_RECORD_BYTES`] before it
///   [opens a record](LineAssembler::opens_record) (the assembler's cap): so a log of lines of
///   no known shape is cut every block, not read as one.
///
/// `buf` holds the file from byte `base`: its start, or at least [`MAX_PREV_LINE_BYTES`]` + 2`
/// bytes before `at` (else [`Cut::NeedBack`] when the last rule is asked).
fn cut_at(buf: &[u8], base: u64, at: u64, limit: u64, at_end: bool) -> Cut {
    let end_of_data = base + buf.len() as u64;
    let to_end = |from: u64| {
        if at_end {
            Cut::At(end_of_data)
        } else {
            Cut::Unknown(from)
        }
    };
    if at >= end_of_data {
        return to_end(at);
    }
    let mut i = (at - base) as usize;
    // Move to the first line start at or after `at`.
    if i > 0 && buf[i - 1] != b'\n' {
        match memchr::memchr(b'\n', &buf[i..]) {
            Some(nl) => i += nl + 1,
            None => return to_end(at),
        }
    }
    // The start of the last line before line `i` that opens a record, once asked: `Some(None)`
    // when none is in the cap's bytes before it.
    let mut opener: Option<Option<u64>> = None;
    // The class of the line before line `i` once a line has been looked at (the default for a
    // line longer than `MAX_PREV_LINE_BYTES`).
    let mut prev: Option<CutClass> = None;
    loop {
        if i >= buf.len() {
            return to_end(base + i as u64);
        }
        let here = base + i as u64;
        if here >= limit {
            return Cut::Beyond;
        }
        let line_end = match memchr::memchr(b'\n', &buf[i..]) {
            Some(nl) => i + nl,
            // The line runs past what was read.
            None if !at_end => return Cut::Unknown(here),
            None => buf.len(),
        };
        let line = &buf[i..line_end];
        let class = cut_class(line);
        let prev_class = prev
            .unwrap_or_else(|| line_before(buf, base, i).map_or_else(CutClass::default, cut_class));
        if class.begins_after(prev_class) {
            return Cut::At(here);
        }
        prev = Some(if line.len() as u64 <= MAX_PREV_LINE_BYTES {
            class
        } else {
            CutClass::default()
        });
        let last = match opener {
            Some(last) => last,
            None => match opener_before(buf, base, i) {
                Some(last) => last,
                None => return Cut::NeedBack,
            },
        };
        if last.is_none_or(|o| o + (DEFAULT_MAX_RECORD_BYTES as u64) < here) {
            return Cut::At(here);
        }
        opener = Some(class.opens.then_some(here).or(last));
        i = line_end + 1;
    }
}

/// The line before the line starting at `buf[i]`, when it is no longer than
/// [`MAX_PREV_LINE_BYTES`]; `buf` holds the file from byte `base` (see [`cut_at`]).
fn line_before(buf: &[u8], base: u64, i: usize) -> Option<&[u8]> {
    let end = i.checked_sub(1)?;
    let from = end.saturating_sub(MAX_PREV_LINE_BYTES as usize + 1);
    match memchr::memrchr(b'\n', &buf[from..end]) {
        Some(nl) => Some(&buf[from + nl + 1..end]),
        // The line starts the file.
        None if from == 0 && base == 0 && end as u64 <= MAX_PREV_LINE_BYTES => Some(&buf[..end]),
        None => None,
    }
}

/// The start of the last line before the line starting at `buf[i]` that
/// [opens a record](LineAssembler::opens_record), if one starts in the
/// [`DEFAULT_MAX_RECORD_BYTES`] before it (`Some(None)` if none does); `None` when `buf`, which
/// holds the file from byte `base`, does not begin far enough back to tell (no such line in it,
/// and the window begins before it).
fn opener_before(buf: &[u8], base: u64, i: usize) -> Option<Option<u64>> {
    let here = base + i as u64;
    let window = here.saturating_sub(DEFAULT_MAX_RECORD_BYTES as u64);
    let mut end = i;
    while end > 0 {
        // The line `buf[start..end - 1]`, its newline at `end - 1`.
        let Some(start) = memchr::memrchr(b'\n', &buf[..end - 1]).map(|p| p + 1) else {
            break;
        };
        let at = base + start as u64;
        if at < window {
            return Some(None);
        }
        if cut_class(&buf[start..end - 1]).opens {
            return Some(Some(at));
        }
        end = start;
    }
    // The line at `buf[0]`, when `end > 0`, starts at `base` or before: at the file's start, it
    // is the last to look at; else it is told only when it starts before the window.
    if base == 0 {
        let first = &buf[..end.saturating_sub(1)];
        return Some((end > 0 && window == 0 && cut_class(first).opens).then_some(0));
    }
    (base < window).then_some(None)
}

/// A reusable read buffer: `bytes[..filled]` holds data; `bytes` only grows, so it is zeroed
/// once, not on every read.
#[derive(Default)]
struct ReadBuf {
    bytes: Vec<u8>,
    filled: usize,
}

impl ReadBuf {
    fn data(&self) -> &[u8] {
        &self.bytes[..self.filled]
    }
}

/// Appends the file's bytes from `from` up to `to` (exclusive) to `buf`; stops early at the end
/// of the file.
fn read_range(file: &File, from: u64, to: u64, buf: &mut ReadBuf) -> std::io::Result<()> {
    let mut pos = from;
    while pos < to {
        let room = usize::try_from(to - pos).unwrap_or(usize::MAX);
        if buf.bytes.len() < buf.filled.saturating_add(room) {
            buf.bytes.resize(buf.filled.saturating_add(room), 0);
        }
        match file.read_at(&mut buf.bytes[buf.filled..buf.filled + room], pos) {
            Ok(0) => break,
            Ok(got) => {
                buf.filled += got;
                pos += got as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The reading thread of a stream: reads `reader` to its end into buffers from `pool`, cuts it
/// into blocks sent to `work`, then sends [`Msg::End`] (or [`Msg::CutShort`]) to `msgs`. Stops
/// early when the merging side hangs up.
fn cut_stream(
    mut reader: Box<dyn Read + Send>,
    block_bytes: usize,
    pool: &Receiver<Vec<u8>>,
    work: &Sender<(u64, Vec<u8>)>,
    msgs: &Sender<Msg>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut k = 0u64;
    let mut eof = false;
    let mut failed = None;
    while !eof {
        let Ok(mut data) = pool.recv() else { return };
        data.clear();
        data.append(&mut carry);
        let mut want = block_bytes;
        let cut = loop {
            if data.len() < want {
                let ask = (want - data.len()) as u64;
                match (&mut reader).take(ask).read_to_end(&mut data) {
                    Ok(n) if (n as u64) < ask => eof = true,
                    Ok(_) => {}
                    // What was read before stays in `data` (`read_to_end`): it is read, and
                    // the stream ends there.
                    Err(error) => (eof, failed) = (true, Some(error)),
                }
            }
            if eof {
                break data.len();
            }
            match stream_cut(&data) {
                Some(at) => break at,
                // No place to cut yet (one long record): read on.
                None => want = data.len() + block_bytes.max(4096),
            }
        };
        carry.extend_from_slice(&data[cut..]);
        data.truncate(cut);
        if data.is_empty() {
            break;
        }
        if work.send((k, data)).is_err() {
            return;
        }
        k += 1;
    }
    let _ = msgs.send(match failed {
        Some(error) => Msg::CutShort(k, error),
        None => Msg::End(k),
    });
}

/// Where to cut `data`, a part of a stream that goes on and that begins with a record: the start
/// of one of its last whole lines that begins a record, after at least one line, else the first
/// line that no line opening a record precedes in the assembler's cap ([`cap_cut`]). `None`
/// when there is none.
fn stream_cut(data: &[u8]) -> Option<usize> {
    // `data[..=end]` holds whole lines.
    let mut end = memchr::memrchr(b'\n', data)?;
    for _ in 0..MAX_CUT_SEARCH_LINES {
        let start = memchr::memrchr(b'\n', &data[..end]).map_or(0, |p| p + 1);
        if start == 0 {
            return None;
        }
        let prev_start = memchr::memrchr(b'\n', &data[..start - 1]).map_or(0, |p| p + 1);
        if cut_class(&data[start..end]).begins_after(cut_class(&data[prev_start..start - 1])) {
            return Some(start);
        }
        end = start - 1;
    }
    cap_cut(data)
}

/// In `data`, which begins with a record, its last line start when no line
/// [opening a record](LineAssembler::opens_record) is in the [`DEFAULT_MAX_RECORD_BYTES`]
/// before it ([`opener_before`], `data` taken as the whole stream: nothing before it is
/// pending): the record pending there takes no more lines. So a stream of lines of no known
/// shape is cut as often as any.
fn cap_cut(data: &[u8]) -> Option<usize> {
    let at = memchr::memrchr(b'\n', data)? + 1;
    (opener_before(data, 0, at) == Some(None)).then_some(at)
}

#[cfg(test)]
mod tests;
