//! [`Fold`]: the events a diagnosis keeps, chosen as they are read, so that a pod logging the
//! same record again and again costs a few records, not one per line.
//!
//! Folded: the middle records of a *run*, the records of one pod of one kind that no other
//! record of that pod interrupts, for the two kinds a healthy node logs without end:
//! `ReadinessProbeReady` (`SyncLoop (probe)` … `status="ready"`) and `PodStartupObserved`
//! (`"Observed pod startup duration"`, with a valid SLI). The first and the last record of every
//! run are kept. A `SyncLoop UPDATE` of the pod ([`NOT_ANCHORS`]) does not interrupt a run: no
//! rule reads that kind, so none asks what comes before or after one. What the rules read of
//! the folded kinds is kept exactly:
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
//! - the one rule that reads a record's neighbours in its file, `container_race` (a NotFound
//!   line cut before its error joins the burst beside it; one naming no container joins the
//!   `RemoveContainer` before it), reads them only around records of [`RACE_KINDS`]: a record
//!   next to one of those is never folded, so their neighbours do not change.
//!
//! The one thing it does not keep: a start time that no record of the pod gives (the CRI or API
//! view's, or the kubelet's `observedRunningTime`) and that falls inside a run takes the
//! readiness edge to the run's last record instead of a middle one.
//!
//! The decision is symmetric in reading order (first and last of a run swap), so a source read
//! newest first folds to the same records.

use std::sync::Arc;

use jiff::Timestamp;

use super::container_race::RACE_KINDS;
use super::logs::FastMap;
use crate::event::LoggedEvent;
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

/// Where one event kept so far was read.
struct Slot {
    seq: u64,
    /// The event before or after it in the same file is of a kind whose rule reads its
    /// neighbours ([`RACE_KINDS`]; the one after sets it when it is read).
    beside_reader: bool,
    /// Folded: the event goes at the next compaction.
    gone: bool,
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

/// The events kept for a diagnosis, pushed in reading order ([`Fold::push`]) and handed back
/// with [`Fold::finish`]; see the module doc for what is folded and why the rules read the same.
///
/// Memory: the kept events, one entry per pod with a run, one per pod UID linked to a name.
#[derive(Default)]
pub struct Fold {
    /// The events kept so far (with those folded since the last compaction, marked in their
    /// slot and emptied of their line and names), and beside each where it was read: two vectors, so that the events are never
    /// copied into another vector (a troubled node's log keeps most of them).
    events: Vec<LoggedEvent>,
    slots: Vec<Slot>,
    vacant: usize,
    seq: u64,
    /// `namespace/name` → its runs, one per [`FOLDED`] kind.
    runs: FastMap<String, [Option<Run>; 2]>,
    /// Pod UID → `namespace/name`, from records naming both.
    uid_pod: FastMap<String, String>,
    /// The last event read: whether its rule reads its neighbours, and its file.
    last: Option<(bool, Arc<str>)>,
    key: String,
    folded: u64,
}

impl Fold {
    /// A fold with nothing read.
    pub fn new() -> Fold {
        Fold::default()
    }

    /// How many events were folded (read, classified and not kept) so far.
    pub fn folded(&self) -> u64 {
        self.folded
    }

    /// Reads the next event.
    pub fn push(&mut self, e: LoggedEvent) {
        let reads_neighbours = RACE_KINDS.contains(&e.event.kind);
        let same_file = self
            .last
            .as_ref()
            .is_some_and(|(_, o)| Arc::ptr_eq(o, &e.origin) || *o == e.origin);
        let prev_reads_neighbours = same_file && self.last.as_ref().is_some_and(|(r, _)| *r);
        if same_file
            && reads_neighbours
            && let Some(s) = self.slots.last_mut()
        {
            s.beside_reader = true;
        }
        match &mut self.last {
            Some((r, o)) => {
                *r = reads_neighbours;
                if !Arc::ptr_eq(o, &e.origin) {
                    o.clone_from(&e.origin);
                }
            }
            None => self.last = Some((reads_neighbours, e.origin.clone())),
        }
        let seq = self.seq;
        self.seq += 1;
        match foldable(&e) {
            Some((slot, t, ns, name)) => {
                pod_key_into(&mut self.key, ns, name);
                self.extend_run(slot, t, seq);
            }
            None => self.interrupt(&e),
        }
        grow(&mut self.events);
        grow(&mut self.slots);
        self.events.push(e);
        self.slots.push(Slot {
            seq,
            beside_reader: prev_reads_neighbours,
            gone: false,
        });
    }

    /// The kept events, in reading order.
    pub fn finish(mut self) -> Vec<LoggedEvent> {
        self.compact();
        self.events
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
            self.fold(middle);
        }
    }

    /// Folds the record at `seq` unless a record next to it in its file reads its neighbours.
    fn fold(&mut self, seq: u64) {
        let Ok(i) = self.slots.binary_search_by_key(&seq, |s| s.seq) else {
            return;
        };
        let s = &mut self.slots[i];
        if s.beside_reader || s.gone {
            return;
        }
        s.gone = true;
        self.folded += 1;
        self.vacant += 1;
        // What the folded record holds on the heap (its line, its pod's name) goes now; only its
        // place in the vector waits for the compaction.
        let e = &mut self.events[i];
        e.text = String::new();
        e.event.ids = crate::logs::Ids::default();
        e.event.error = None;
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
/// of its length, so a troubled node's log, which keeps most of its records, leaves at most a
/// quarter of the kept events' size unused instead of as much again.
fn grow<T>(v: &mut Vec<T>) {
    if v.len() == v.capacity() && v.len() >= GROW_DOUBLING_UP_TO {
        v.reserve_exact(v.len() / 4);
    }
}

/// Whether `e` may fold: a record of a [`FOLDED`] kind with a time, naming exactly one pod by
/// `namespace/name` and nothing else; a `PodStartupObserved` only with a valid SLI. Its slot in
/// the pod's runs, its time and its pod's namespace and name.
fn foldable(e: &LoggedEvent) -> Option<(usize, Timestamp, &str, &str)> {
    let slot = FOLDED.iter().position(|k| *k == e.event.kind)?;
    let t = e.event.time?;
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
    if e.event.kind == EventKind::PodStartupObserved {
        let o = crate::startup::values::observed(e);
        if o.slo_seconds.is_none_or(|v| v < 0.0) || o.e2e.is_some_and(|d| d.is_negative()) {
            return None;
        }
    }
    Some((slot, t, p.namespace.as_deref()?, &p.name))
}

#[cfg(test)]
mod tests;
