//! [`Fold`]: the events a diagnosis keeps, chosen as they are read, so that a pod logging the
//! same record again and again costs a few records, not one per line: memory grows with what
//! the log says (its entities and their messages), not with how often it says it.
//!
//! Two folds, each keeping what the rules read.
//!
//! **Repeats.** A record that says exactly what an earlier record of its source said, less the
//! time (the same event, [`LoggedEvent::content_key`] and file: the GC's `Failed to stop sandbox
//! before removing` for one sandbox every minute, containerd's `StopPodSandbox for "<id>"
//! failed` beside it, a pod worker's `Error syncing pod` every back-off), is a *repeat*. Of each
//! repetition the first [`FIRST`] records are kept, and the last [`LAST`]; each one between is
//! folded into the next record of its repetition still kept ([`LoggedEvent::absorb`]), which then
//! stands for it: its count, its time range and its attempts ([`crate::event::Folded`]). What
//! the rules read of a group of records stays exact:
//! - how many records and attempts, from when to when (`Tally`, `records`,
//!   `time_range`, `attempts` read the folded counts);
//! - the first three records of a group and its last, which a finding quotes: a folded record
//!   has the first three of its repetition before it, and the last of every repetition is kept;
//! - any question of whether some record of a repetition comes after (or before) a given
//!   record: the last (first) one answers it;
//! - the causes, IDs, callers and texts the rules read, which are the same in every record of a
//!   repetition.
//!
//! A repetition not met for a generation (`GENERATION` records) is forgotten once what may go
//! of it is folded, so a log whose every line names fresh IDs costs its records, not also one
//! entry per distinct record; met again, it starts anew (its next records kept as its first).
//!
//! A repetition never runs across a record the rules split others at (`ANCHORS`: a sandbox
//! stopped, removed or created, a pod added, deleted, removed or terminated, a container
//! removed, a kubelet start) that says something new: such a record begins a new *epoch* of the
//! entities it names (of all of them, for a kubelet start), and a record's repetition is keyed on
//! the epochs of the entities it names. So the failures after a sandbox's first successful stop
//! and those before it fold apart, and a rule that counts the records on one side of it counts
//! them exactly. What it does not keep: an anchor that repeats an earlier one (the same stop
//! answered again) begins no epoch, so a log whose every line repeats folds whole; a rule that
//! splits at the second of two such anchors counts the records folded into a record on that
//! record's side. That matters only when one repetition has more than `FIRST + LAST` records
//! on both sides of a repeated anchor.
//!
//! The rules that read a record's neighbours in its file get the same neighbours:
//! `container_race` (a NotFound line cut before its error joins the burst beside it, one naming
//! no container joins the `RemoveContainer` before it; [`RACE_KINDS`], one record either side)
//! and `teardown` (a failure naming no sandbox joins the failure of its own call next to it;
//! [`super::teardown::STEP_OVER`] records either side). Such a *reader* keeps a copy of its
//! neighbours as they were read ([`crate::event::Neighbours`], which `Logs::neighbour` reads), so
//! whatever is folded around it, it reads what was written beside it; and it repeats another
//! only when its neighbours repeat the other's too (its repetition is keyed on their keys and on
//! which of them are within a second of it). The copy is taken while its neighbours are all
//! still kept: a record is folded only [`WINDOW`] records after it was read (a repeat when
//! [`LAST`] later repeats are kept, a run's middle record [`WINDOW`] records on).
//!
//! **Runs.** The middle records of a *run*, the records of one pod of one kind that no other
//! record of that pod interrupts, for the two kinds a healthy node logs without end:
//! `ReadinessProbeReady` (`SyncLoop (probe)` … `status="ready"`) and `PodStartupObserved`
//! (`"Observed pod startup duration"`, with a valid SLI). The first and the last record of every
//! run are kept. A `SyncLoop UPDATE` of the pod ([`NOT_ANCHORS`]) does not interrupt a run: no
//! rule reads that kind, so none asks what comes before or after one. A record of a run never
//! folds as a repeat, nor does any `ReadinessProbeReady`: what the rules read of them is where a
//! run begins and ends:
//! - `startup::breakdown` reads the last `PodStartupObserved` of a pod (the last of its last
//!   run) and the first `ReadinessProbeReady` at or after the pod's start, which is a record of
//!   the pod of another kind (a `SyncLoop ADD`, a `Started container`, a PLEG
//!   `ContainerStarted`): that record ends the run, so the first ready after it begins one;
//! - `PodStatusFailing` and the sandbox wait ask whether the pod has such a record after a
//!   position: the run's last record answers as its middle ones did;
//! - `PodStartupMetricInvalid` counts and quotes every record with an impossible SLI: those are
//!   never folded; the candidates of `SlowPodStartup` are the pods named, which every kept
//!   record still names;
//! - a folded record names one pod by `namespace/name` and nothing else (no UID, sandbox,
//!   container or cut ID), so the identities the index links are those of its run's first
//!   record;
//!
//! The one thing it does not keep: a start time that no record of the pod gives (the CRI or API
//! view's, or the kubelet's `observedRunningTime`) and that falls inside a run takes the
//! readiness edge to the run's last record instead of a middle one.
//!
//! Both folds are symmetric in reading order but for which end keeps one record more (first and
//! last swap), so a source read newest first folds to records the rules read the same way.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use jiff::Timestamp;

use super::container_race::RACE_KINDS;
use super::logs::FastMap;
use crate::event::{LoggedEvent, Neighbours};
use crate::logs::{EventKind, SyncOp};

/// The kinds whose runs fold, each with its slot in a pod's runs.
const FOLDED: [EventKind; 2] = [
    EventKind::ReadinessProbeReady,
    EventKind::PodStartupObserved,
];

/// The kinds of record that do not end a pod's runs: no rule reads them by kind, so no rule
/// asks what comes before or after one of them. `SyncLoop UPDATE`, which a healthy node logs for
/// every status change of every pod.
const NOT_ANCHORS: [EventKind; 1] = [EventKind::SyncLoop(SyncOp::Update)];

/// The records of a repetition kept at its front: a finding quotes the first three of a group.
pub const FIRST: usize = 3;
/// The records of a repetition kept at its end; at least [`WINDOW`], so that a repeat is folded
/// only after every reader that may read it as a neighbour has been read and has pinned it.
pub const LAST: usize = 4;
/// How many records (by `seq`) a generation of repetitions lasts: a repetition met in neither
/// the last generation nor this one is forgotten, so memory goes with the repetitions of the
/// last two generations, not with every distinct record of a log whose lines all name fresh
/// IDs. A repetition met again after that starts anew: its next records are kept as its first,
/// so a forgotten one keeps more records, never fewer.
#[cfg(not(test))]
const GENERATION: u64 = 1 << 18;
/// Short in the unit tests, so that they forget repetitions too.
#[cfg(test)]
const GENERATION: u64 = 64;

/// How many records after a record it may be folded (`seq + OLD <= ` the next `seq`): a reader
/// whose window holds it is at most [`WINDOW`] records after it and has read its window
/// [`WINDOW`] records after that, so by then every such reader is closed (and not one closing
/// as the same record is read).
const OLD: u64 = 2 * WINDOW as u64 + 2;

/// The most records either side of a reader that its rule reads ([`super::teardown::STEP_OVER`]
/// for a teardown failure naming no sandbox, 1 for the container race).
pub const WINDOW: usize = super::teardown::STEP_OVER;
const _: () = assert!(LAST >= WINDOW && WINDOW >= 1);

/// Where one event kept so far was read.
struct Slot {
    seq: u64,
    /// Folded: the event goes at the next compaction.
    gone: bool,
    /// For a reader, how many records either side of it its rule reads (0: not a reader).
    width: u8,
    /// A reader whose neighbours were copied into it (one of them was folded).
    copied: bool,
}

/// The current run of one pod and kind.
#[derive(Clone, Copy)]
struct Run {
    /// The run's last record so far.
    last: u64,
    last_time: Timestamp,
    /// The time of the record before it in the run (the run's first, when `len == 2`).
    prev_time: Option<Timestamp>,
    len: usize,
}

/// One repetition: its first [`FIRST`] records in reading order (the first of them is what a
/// new record is compared with, so that a hash collision never folds two records that differ),
/// and once there are more, the rest.
struct Repeat {
    firsts: [u64; FIRST],
    n_firsts: u8,
    more: Option<Box<More>>,
}

/// A repetition's records past its first [`FIRST`]: those kept, oldest first, and which
/// records of the whole repetition come first and last by time (a rule may sort a group by
/// time: `sort_by_key(time)`, ties in reading order), which are kept too.
#[derive(Default)]
struct More {
    tail: VecDeque<u64>,
    /// The [`FIRST`] earliest (time, seq), ascending.
    early: Vec<(Option<Timestamp>, u64)>,
    /// The [`LAST`] latest (time, seq), ascending.
    late: Vec<(Option<Timestamp>, u64)>,
}

impl More {
    /// Puts a record in the earliest and latest by time when it is among them.
    fn place(&mut self, at: (Option<Timestamp>, u64)) {
        let i = self.early.partition_point(|x| *x < at);
        if i < FIRST {
            self.early.insert(i, at);
            self.early.truncate(FIRST);
        }
        let i = self.late.partition_point(|x| *x < at);
        self.late.insert(i, at);
        if self.late.len() > LAST {
            self.late.remove(0);
        }
    }

    /// Whether the record at `seq` is among the earliest or latest by time.
    fn ends(&self, seq: u64) -> bool {
        self.early.iter().chain(&self.late).any(|&(_, s)| s == seq)
    }
}

/// One of the last [`WINDOW`] records of the file being read, as a reader's window sees it.
#[derive(Clone, Copy)]
struct Near {
    key: Option<u64>,
    time: Option<Timestamp>,
}

/// A reader whose window after it is still being read.
struct Reader {
    seq: u64,
    /// Neighbours after it still to read.
    after_left: usize,
    time: Option<Timestamp>,
    /// Its key so far: its own, then its neighbours' before it, then after it.
    key: u64,
}

/// What a [`Fold`] kept.
pub struct Kept {
    /// The kept events, in reading order; each stands for itself and the repeats folded into it
    /// ([`LoggedEvent::records`]).
    pub events: Vec<LoggedEvent>,
    /// How many events were folded: read, classified and not kept (run middles and repeats).
    pub folded: u64,
}

/// The events kept for a diagnosis, pushed in reading order ([`Fold::push`]) and handed back
/// with [`Fold::finish`]; see the module doc for what is folded and why the rules read the same.
///
/// Memory: the kept events (of each repetition at most its first [`FIRST`] and last [`LAST`]
/// in reading order and in time; the ends of runs), a kept reader's copy of its neighbours, one
/// entry per repetition, one per pod with a run, one per pod UID linked to a name.
#[derive(Default)]
pub struct Fold {
    /// The events kept so far (with those folded since the last compaction, marked in their
    /// slot and emptied of their line), and beside each where it was read: two
    /// vectors, so that the events are never copied into another vector.
    events: Vec<LoggedEvent>,
    slots: Vec<Slot>,
    vacant: usize,
    seq: u64,
    /// `namespace/name` → its runs, one per [`FOLDED`] kind.
    runs: FastMap<String, [Option<Run>; 2]>,
    /// Pod UID → `namespace/name`, from records naming both.
    uid_pod: FastMap<String, String>,
    key: String,
    folded: u64,
    /// Repetition key → the repetition.
    repeats: FastMap<u64, Repeat>,
    /// The repetitions not met since the last generation began: met again, a repetition moves
    /// back into `repeats`; at the next generation the rest are forgotten.
    old_repeats: FastMap<u64, Repeat>,
    /// Entity (sandbox, container, pod UID, pod name) → how many anchors began a new epoch of
    /// it; `global_epoch` for every entity (kubelet starts).
    epochs: FastMap<String, u32>,
    global_epoch: u32,
    /// The [`repeat_key`]s of the anchors seen.
    anchors_seen: std::collections::HashSet<u64, foldhash::fast::RandomState>,
    /// The file being read and its last [`WINDOW`] records.
    file: Option<Arc<str>>,
    near: VecDeque<Near>,
    /// Readers whose window after them is still being read.
    open: Vec<Reader>,
    /// Run middles to fold once [`WINDOW`] records have been read after them.
    deferred: VecDeque<u64>,
}

impl Fold {
    /// A fold with nothing read.
    pub fn new() -> Fold {
        Fold::default()
    }

    /// How many events were folded (read, classified and not kept) so far; a fold decided late
    /// (a run's middle record, [`WINDOW`] records on) counts once done, so the total is
    /// [`Kept::folded`].
    pub fn folded(&self) -> u64 {
        self.folded
    }

    /// Reads the next event.
    pub fn push(&mut self, e: LoggedEvent) {
        let seq = self.seq;
        self.seq += 1;
        if seq > 0 && seq.is_multiple_of(GENERATION) {
            self.next_generation();
        }
        let same_file = self.file.as_ref().is_some_and(|o| same_file(o, &e.origin));
        if !same_file {
            self.end_file();
            self.file = Some(Arc::clone(&e.origin));
        }
        let plain = repeat_key(&e);
        let key = plain.map(|plain| self.epoch_key(&e, plain));
        if let Some(plain) = plain {
            self.see_anchor(&e, plain);
        }
        let width = reader_width(&e);
        let time = e.time;
        // A readiness record goes by its runs only: what the start breakdown reads of them is the
        // first after each start.
        let mut repeats = width.is_none() && e.event.kind != EventKind::ReadinessProbeReady;
        match foldable(&e) {
            Some((slot, t, ns, name)) => {
                pod_key_into(&mut self.key, ns, name);
                self.extend_run(slot, t, seq);
                repeats = false;
            }
            None => self.interrupt(&e),
        }
        // The readers before it read it as a neighbour after them.
        let mut k = 0;
        while k < self.open.len() {
            let r = &mut self.open[k];
            mix(
                &mut r.key,
                Some(key.unwrap_or(0)),
                close_times(r.time, time),
            );
            r.after_left -= 1;
            if r.after_left == 0 {
                let r = self.open.swap_remove(k);
                self.close_reader(r);
            } else {
                k += 1;
            }
        }
        // A reader reads its neighbours before it now, and those after it as they come.
        if let Some(width) = width {
            let mut r = Reader {
                seq,
                after_left: width,
                time,
                key: key.unwrap_or(0),
            };
            for n in self.near.iter().rev().take(width) {
                mix(
                    &mut r.key,
                    Some(n.key.unwrap_or(0)),
                    close_times(time, n.time),
                );
            }
            mix(&mut r.key, None, false);
            self.open.push(r);
        }
        grow(&mut self.events);
        grow(&mut self.slots);
        self.events.push(e);
        self.slots.push(Slot {
            seq,
            gone: false,
            width: width.map_or(0, |w| u8::try_from(w).unwrap_or(u8::MAX)),
            copied: false,
        });
        self.near.push_back(Near { key, time });
        if self.near.len() > WINDOW {
            self.near.pop_front();
        }
        if repeats && let Some(k) = key {
            self.repeat(k, seq);
        }
        while self.deferred.front().is_some_and(|&s| s + OLD <= self.seq) {
            if let Some(s) = self.deferred.pop_front() {
                self.fold_run_middle(s);
            }
        }
    }

    /// The key of the repetition `e` belongs to, from its [`repeat_key`] `plain`: that and the
    /// epochs of the entities it names ([`Fold::see_anchor`]), so that a repetition never runs
    /// across a record that ends it.
    fn epoch_key(&self, e: &LoggedEvent, plain: u64) -> u64 {
        let mut h = foldhash::fast::FixedState::with_seed(plain).build_hasher();
        self.global_epoch.hash(&mut h);
        let mut any = self.global_epoch != 0;
        for entity in entities(e) {
            let epoch = self.epochs.get(entity).copied().unwrap_or(0);
            any |= epoch != 0;
            epoch.hash(&mut h);
        }
        // No anchor before it: the key it had before any was read.
        if any { h.finish() } else { plain }
    }

    /// A record the rules split others at ([`ANCHORS`]: a sandbox stopped or removed, a pod
    /// terminated, added or removed, a sandbox created, a kubelet start), when it says something
    /// new (no earlier record of its source said it), begins a new epoch of the entities it
    /// names (of every entity, for a kubelet start): the repeats after it are another
    /// repetition than those before, so a rule that asks which side of it a record is on counts
    /// every repeat on its side. A repeat of an anchor (the same stop answered again) ends
    /// nothing: a log whose every line repeats folds whole.
    fn see_anchor(&mut self, e: &LoggedEvent, plain: u64) {
        if !ANCHORS.contains(&e.event.kind) {
            return;
        }
        if self.anchors_seen.len() >= ANCHORS_KEPT {
            // A log whose anchors all name fresh IDs: forget them, and begin an epoch of every
            // entity so that no repetition runs across what was forgotten.
            self.anchors_seen.clear();
            self.epochs.clear();
            self.global_epoch += 1;
        }
        if !self.anchors_seen.insert(plain) {
            return;
        }
        if e.event.kind == EventKind::KubeletStarted {
            self.global_epoch += 1;
            return;
        }
        for entity in entities(e) {
            match self.epochs.get_mut(entity) {
                Some(n) => *n += 1,
                None => {
                    self.epochs.insert(entity.to_string(), 1);
                }
            }
        }
    }

    /// Forgets the repetitions not met for a generation, folding what may go of each first
    /// (its records are all a generation old, past any reader's window).
    fn next_generation(&mut self) {
        let forgotten = std::mem::replace(&mut self.old_repeats, std::mem::take(&mut self.repeats));
        for (key, r) in forgotten {
            if r.more.as_ref().is_some_and(|m| m.tail.len() > LAST) {
                self.repeats.insert(key, r);
                self.settle(key);
                self.repeats.remove(&key);
            }
        }
    }

    /// The kept events, in reading order, and how many were folded.
    pub fn finish(mut self) -> Kept {
        self.end_file();
        while let Some(s) = self.deferred.pop_front() {
            self.fold_run_middle(s);
        }
        // Every window is read: what was too young to fold when its repetition last grew goes.
        self.seq += OLD;
        let old = std::mem::take(&mut self.old_repeats);
        self.repeats.extend(old);
        let growing: Vec<u64> = self
            .repeats
            .iter()
            .filter(|(_, r)| r.more.as_ref().is_some_and(|m| m.tail.len() > LAST))
            .map(|(&k, _)| k)
            .collect();
        for key in growing {
            self.settle(key);
        }
        self.compact();
        // The list is kept through the rules: it gives back what its last doubling left spare.
        self.events.shrink_to_fit();
        Kept {
            events: self.events,
            folded: self.folded,
        }
    }

    /// The file changed or ended: its readers' windows end here.
    fn end_file(&mut self) {
        for r in std::mem::take(&mut self.open) {
            self.close_reader(r);
        }
        self.near.clear();
    }

    /// A reader's window is read: it joins the repetition of its key.
    fn close_reader(&mut self, mut r: Reader) {
        mix(&mut r.key, None, false);
        let Some(i) = self.index(r.seq) else {
            return;
        };
        if self.events[i].content_key != 0 {
            self.repeat(r.key, r.seq);
        }
    }

    /// Gives the kept reader at `i` a copy of its neighbours in its file, all still kept: the
    /// records read just before and after it (events are pushed in reading order, so its
    /// neighbours are the `seq`s beside its own, as far as its file goes).
    fn copy_neighbours(&mut self, i: usize) {
        let (seq, width) = (self.slots[i].seq, u64::from(self.slots[i].width));
        self.slots[i].copied = true;
        let origin = Arc::clone(&self.events[i].origin);
        let side = |f: &Fold, seqs: &mut dyn Iterator<Item = u64>| -> Vec<LoggedEvent> {
            seqs.map_while(|s| f.index(s))
                .map_while(|j| {
                    same_file(&f.events[j].origin, &origin).then(|| shadow(&f.events[j]))
                })
                .collect()
        };
        let before = side(self, &mut (seq.saturating_sub(width)..seq).rev());
        let after = side(self, &mut (seq + 1..=seq + width));
        let n = Neighbours { before, after };
        self.events[i]
            .folded
            .get_or_insert_with(Box::default)
            .neighbours = Some(Box::new(n));
    }

    /// The record at `seq`, whose repetition key is `key`, joins its repetition; the
    /// repetition's records past its first [`FIRST`] and before its last [`LAST`], but for its
    /// first and last by time, are folded into the next one kept.
    fn repeat(&mut self, key: u64, seq: u64) {
        if let Some(r) = self.old_repeats.remove(&key) {
            self.repeats.insert(key, r);
        }
        let first = match self.repeats.get(&key) {
            None => {
                let mut firsts = [0; FIRST];
                firsts[0] = seq;
                self.repeats.insert(
                    key,
                    Repeat {
                        firsts,
                        n_firsts: 1,
                        more: None,
                    },
                );
                return;
            }
            Some(r) => r.firsts[0],
        };
        let same = match (self.index(first), self.index(seq)) {
            (Some(a), Some(b)) => same_but_time(&self.events[a], &self.events[b]),
            _ => false,
        };
        if !same {
            return;
        }
        let at = |f: &Fold, s: u64| (f.index(s).and_then(|i| f.events[i].time), s);
        let Some(r) = self.repeats.get(&key) else {
            return;
        };
        let n = usize::from(r.n_firsts);
        if n < FIRST {
            if let Some(r) = self.repeats.get_mut(&key) {
                r.firsts[n] = seq;
                r.n_firsts += 1;
            }
            return;
        }
        let firsts: Option<Vec<(Option<Timestamp>, u64)>> = r
            .more
            .is_none()
            .then(|| r.firsts.iter().map(|&s| at(self, s)).collect());
        let this = at(self, seq);
        let Some(r) = self.repeats.get_mut(&key) else {
            return;
        };
        let more = r.more.get_or_insert_with(Box::default);
        for f in firsts.into_iter().flatten() {
            more.place(f);
        }
        more.place(this);
        more.tail.push_back(seq);
        self.settle(key);
    }

    /// Folds the records of repetition `key` that may go.
    fn settle(&mut self, key: u64) {
        let Some(mut more) = self.repeats.get_mut(&key).and_then(|r| r.more.take()) else {
            return;
        };
        let mut k = 0;
        while more.tail.len() > LAST && k < more.tail.len() - LAST {
            let (x, y) = (more.tail[k], more.tail[k + 1]);
            let (Some(ix), Some(iy)) = (self.index(x), self.index(y)) else {
                k += 1;
                continue;
            };
            if more.ends(x) || x + OLD > self.seq {
                k += 1;
                continue;
            }
            let time = self.events[ix].time;
            let folded = self.events[ix].folded.take();
            self.events[iy].absorb(time, folded);
            more.tail.remove(k);
            self.drop_record(ix);
        }
        if let Some(r) = self.repeats.get_mut(&key) {
            r.more = Some(more);
        }
    }

    /// The position of the event read as `seq`, when it is still kept. The records read since
    /// the last compaction have a slot each at the end, one per `seq`, which is where most
    /// lookups are (the record just read, the last of its repetition): that place is tried
    /// first, then a binary search.
    fn index(&self, seq: u64) -> Option<usize> {
        let last = self.slots.last()?.seq;
        let guess = usize::try_from(last.checked_sub(seq)?)
            .ok()
            .and_then(|back| (self.slots.len() - 1).checked_sub(back))
            .filter(|&i| self.slots[i].seq == seq);
        let search = || self.slots.binary_search_by_key(&seq, |s| s.seq).ok();
        debug_assert!(guess.is_none() || guess == search(), "slot of {seq}");
        guess.or_else(search).filter(|&i| !self.slots[i].gone)
    }

    /// Drops the events folded since the last compaction, in place.
    fn compact(&mut self) {
        if self.vacant == 0 {
            return;
        }
        let mut k = 0;
        let slots = &self.slots;
        self.events.retain(|_| {
            k += 1;
            !slots[k - 1].gone
        });
        self.slots.retain(|s| !s.gone);
        self.vacant = 0;
    }

    /// A foldable record of the pod in `self.key` at `seq`: it extends the pod's run of its
    /// kind, and the run's last record so far, now in its middle, is folded when it may be.
    fn extend_run(&mut self, slot: usize, t: Timestamp, seq: u64) {
        let runs = match self.runs.get_mut(self.key.as_str()) {
            Some(r) => r,
            None => self.runs.entry(self.key.clone()).or_default(),
        };
        let Some(run) = &mut runs[slot] else {
            runs[slot] = Some(Run {
                last: seq,
                last_time: t,
                prev_time: None,
                len: 1,
            });
            return;
        };
        let middle = run.last;
        let between = run.prev_time.is_some_and(|p| {
            (p <= run.last_time && run.last_time <= t) || (p >= run.last_time && run.last_time >= t)
        });
        run.prev_time = Some(run.last_time);
        run.last = seq;
        run.last_time = t;
        run.len += 1;
        if between {
            self.deferred.push_back(middle);
        }
    }

    /// Folds the run's middle record at `seq`.
    fn fold_run_middle(&mut self, seq: u64) {
        if let Some(i) = self.index(seq) {
            self.drop_record(i);
        }
    }

    /// Marks the record at `i` folded and frees its line and what the fold added to it; its
    /// event (shared, as a rule, with the records of its repetition) and its place in the vector
    /// wait for the compaction. The kept readers beside it get a copy of their neighbours first.
    fn drop_record(&mut self, i: usize) {
        let seq = self.slots[i].seq;
        // The kept readers beside it whose rule reads it: the slots whose `seq` is within
        // WINDOW of its own, which (slots in `seq` order, one per `seq`) are the WINDOW slots
        // either side of it at most.
        let w = WINDOW as u64;
        let lo = (i.saturating_sub(WINDOW)..i)
            .find(|&j| self.slots[j].seq + w >= seq)
            .unwrap_or(i);
        let hi = (i + 1..self.slots.len().min(i + WINDOW + 1))
            .take_while(|&j| self.slots[j].seq <= seq + w)
            .last()
            .unwrap_or(i);
        for j in lo..=hi {
            let r = self.slots[j].seq;
            if j == i || self.slots[j].gone {
                continue;
            }
            if !self.slots[j].copied
                && u64::from(self.slots[j].width) >= r.abs_diff(seq)
                && same_file(&self.events[j].origin, &self.events[i].origin)
            {
                self.copy_neighbours(j);
            }
        }
        self.slots[i].gone = true;
        self.folded += 1;
        self.vacant += 1;
        let e = &mut self.events[i];
        e.text = Arc::default();
        e.folded = None;
        if self.vacant > COMPACT_AFTER && self.vacant * 4 > self.slots.len() {
            self.compact();
        }
    }

    /// A record that is not foldable ends the runs of every pod it names (by `namespace/name`,
    /// or by a UID linked to one), and links its UID to its pod.
    fn interrupt(&mut self, e: &LoggedEvent) {
        let ids = &e.event.ids;
        let uid = ids
            .pod_uid
            .as_deref()
            .or_else(|| ids.pods.first().and_then(|p| p.uid.as_deref()));
        let ends_runs = !NOT_ANCHORS.contains(&e.event.kind);
        for p in &ids.pods {
            let Some(ns) = p.namespace.as_deref() else {
                continue;
            };
            pod_key_into(&mut self.key, ns, &p.name);
            if ends_runs {
                self.runs.remove(self.key.as_str());
            }
        }
        if let (Some(uid), [p]) = (uid, ids.pods.as_slice())
            && p.uid.as_deref().is_none_or(|u| u == uid)
            && p.namespace.is_some()
            && !self.uid_pod.contains_key(uid)
        {
            self.uid_pod.insert(uid.to_string(), self.key.clone());
        }
        if ends_runs
            && let Some(uid) = uid
            && let Some(pod) = self.uid_pod.get(uid)
        {
            self.runs.remove(pod.as_str());
        }
    }
}

/// The key of the repetition `e` belongs to: its source, event kind and
/// [`LoggedEvent::content_key`]; `None` when its content key was not computed.
fn repeat_key(e: &LoggedEvent) -> Option<u64> {
    if e.content_key == 0 {
        return None;
    }
    let mut h = foldhash::fast::FixedState::with_seed(0x6675_6c64).build_hasher();
    e.content_key.hash(&mut h);
    e.event.kind.hash(&mut h);
    e.log.hash(&mut h);
    e.origin.hash(&mut h);
    Some(h.finish())
}

/// How many distinct anchors the fold remembers before it forgets them all (a new epoch of
/// every entity): their entities' epochs cost memory, bounded so.
#[cfg(not(test))]
const ANCHORS_KEPT: usize = 1 << 16;
/// Small in the unit tests, so that they forget anchors too.
#[cfg(test)]
const ANCHORS_KEPT: usize = 4;

/// The records a rule splits others at: what happens to a sandbox, pod or container after which
/// its failures are over or begin again (the successful stop, removal and teardown of a sandbox,
/// a pod terminated, a `SyncLoop` ADD, DELETE or REMOVE, a sandbox created, a container
/// removed), and a kubelet start, which ends its pod workers' kills.
const ANCHORS: [EventKind; 12] = [
    EventKind::StopPodSandboxDone,
    EventKind::RemovePodSandboxDone,
    EventKind::TearDownNetworkDone,
    EventKind::PodTerminated,
    EventKind::SyncLoop(SyncOp::Add),
    EventKind::SyncLoop(SyncOp::Delete),
    EventKind::SyncLoop(SyncOp::Remove),
    EventKind::PodSandboxCreated,
    EventKind::RunPodSandboxDone,
    EventKind::RemoveContainerDone,
    EventKind::OrphanedPodVolumesCleaned,
    EventKind::KubeletStarted,
];

/// The entities a record names: its sandbox, container, pod UID and first pod's name (without
/// its namespace: an anchor of a pod of the same name in another namespace begins an epoch of
/// it too, so more is kept, never less), as far as it names them.
fn entities(e: &LoggedEvent) -> impl Iterator<Item = &str> {
    let ids = &e.event.ids;
    [
        ids.sandbox_id.as_deref(),
        ids.container_id.as_deref(),
        ids.pod_uid.as_deref(),
        ids.pods.first().map(|p| &*p.name),
    ]
    .into_iter()
    .flatten()
}

/// Whether two records repeat each other: same source, same event but for its time, same
/// content.
fn same_but_time(a: &LoggedEvent, b: &LoggedEvent) -> bool {
    a.content_key == b.content_key
        && a.log == b.log
        && a.origin == b.origin
        && (Arc::ptr_eq(&a.event, &b.event) || a.event.same_but_time(&b.event))
}

/// How many records either side of `e` its rule reads, when it reads any: one for a record of
/// the container race's kinds, [`super::teardown::STEP_OVER`] for a teardown failure naming no
/// sandbox.
fn reader_width(e: &LoggedEvent) -> Option<usize> {
    if RACE_KINDS.contains(&e.event.kind) {
        return Some(1);
    }
    let ids = &e.event.ids;
    let names_sandbox = ids.sandbox_id.is_some()
        || ids.partial().iter().any(|p| {
            matches!(
                p.kind,
                crate::logs::IdKind::Sandbox | crate::logs::IdKind::Object
            )
        });
    (!names_sandbox && super::teardown::teardown_caller(e).is_some())
        .then_some(super::teardown::STEP_OVER)
}

/// Adds to a reader's key a neighbour's repetition key and whether it is within a second of the
/// reader (`None`: the end of one side; a neighbour without a key counts as key 0).
fn mix(key: &mut u64, neighbour: Option<u64>, close: bool) {
    let mut h = foldhash::fast::FixedState::with_seed(*key).build_hasher();
    match neighbour {
        Some(k) => {
            k.hash(&mut h);
            close.hash(&mut h);
        }
        None => h.write_u8(0xff),
    }
    *key = h.finish();
}

/// Whether two records were read from one file (one string per source, shared by its records).
fn same_file(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

/// A copy of a neighbour of a reader, without what the fold added to it.
fn shadow(e: &LoggedEvent) -> LoggedEvent {
    LoggedEvent {
        event: Arc::clone(&e.event),
        time: e.time,
        log: e.log,
        origin: Arc::clone(&e.origin),
        line: e.line,
        text: e.text.clone(),
        content_key: e.content_key,
        folded: None,
    }
}

/// Whether two records' times are close enough for one logical event (`logs::close`).
fn close_times(a: Option<Timestamp>, b: Option<Timestamp>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.duration_since(y).abs() <= super::logs::SAME_EVENT,
        (None, None) => true,
        _ => false,
    }
}

/// Writes `namespace/name` into `key`, the one buffer the runs are looked up with (no string
/// made per record).
fn pod_key_into(key: &mut String, namespace: &str, name: &str) {
    key.clear();
    key.push_str(namespace);
    key.push('/');
    key.push_str(name);
}

/// Folded records are dropped from the vectors once there are more than this many and they are
/// more than a quarter of the entries: each compaction moves at most four entries per record it
/// drops, and the vectors hold at most a third more entries than the records kept.
const COMPACT_AFTER: usize = 1024;

/// Below this many entries a full vector of kept events doubles as any vector does.
const GROW_DOUBLING_UP_TO: usize = 1 << 16;

/// Makes room for one more entry in a full `v`: by doubling while it is small, then by a quarter
/// of its length, so a log that keeps most of its records (fresh IDs in every line) leaves at
/// most a quarter of the kept events' size unused instead of as much again.
fn grow<T>(v: &mut Vec<T>) {
    if v.len() == v.capacity() && v.len() >= GROW_DOUBLING_UP_TO {
        v.reserve_exact(v.len() / 4);
    }
}

/// Whether `e` may fold in a run: a record of a [`FOLDED`] kind with a time, naming exactly one
/// pod by `namespace/name` and nothing else; a `PodStartupObserved` only with a valid SLI. Its
/// slot in the pod's runs, its time and its pod's namespace and name.
fn foldable(e: &LoggedEvent) -> Option<(usize, Timestamp, &str, &str)> {
    let slot = FOLDED.iter().position(|k| *k == e.event.kind)?;
    let t = e.time?;
    let ids = &e.event.ids;
    let [p] = ids.pods.as_slice() else {
        return None;
    };
    if p.namespace.is_none()
        || p.uid.is_some()
        || ids.pod_uid.is_some()
        || ids.sandbox_id.is_some()
        || ids.container_id.is_some()
        || ids.object_id().is_some()
        || ids.container_name().is_some()
        || !ids.partial().is_empty()
    {
        return None;
    }
    if e.event.kind == EventKind::PodStartupObserved && !crate::startup::values::possible_sli(e) {
        return None;
    }
    Some((slot, t, p.namespace.as_deref()?, &p.name))
}

#[cfg(test)]
mod tests;
