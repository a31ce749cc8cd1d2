//! A classified log record with where it was read: what `podcoroner-logs` hands out and the log
//! rules, `timeline` and the daemon's event ring read. Depends only on the log-line layer
//! ([`crate::logs`]), so neither the readers nor the timeline depend on the rules.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use crate::logs::Event;

/// Records of one failure closer than this are one attempt (the kubelet's sandbox GC retries
/// every minute, a pod worker backs off from 10 s): [`Runs`] and the rules' attempt counts.
pub const ONE_ATTEMPT: SignedDuration = SignedDuration::from_secs(5);

/// A classified log record with where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    /// The event less its time, which is [`LoggedEvent::time`]: its `time` is always `None`, so
    /// that the records of a log that says the same at other times share one event (the
    /// parsing threads hand out one per content they remember), and copying or dropping such a
    /// record, or comparing it with another ([`Event::same_but_time`]), costs no more than its
    /// own text.
    pub event: Arc<Event<'static>>,
    /// When it was logged (the event's time, [`Event::time`], as classified).
    pub time: Option<Timestamp>,
    /// Which log: the kubelet's or the runtime's.
    pub log: LogKind,
    /// The file (or `journald:<unit>`) it was read from: one string per source, shared by its
    /// records.
    pub origin: Arc<str>,
    /// The 1-based number of its first physical line there.
    pub line: u64,
    /// The record's text (cut to a few KiB), shared with the evidence that quotes it
    /// ([`crate::finding::Evidence::record`]).
    pub text: Arc<str>,
    /// What the record says less when it says it: a hash of its parsed message, fields, caller,
    /// process and envelope, without its time ([`crate::logs::content_key`]); 0 when not
    /// computed. Two records of one source with the same event (less its time) and the same
    /// `content_key` repeat each other, and a diagnosis folds the middle ones of such a
    /// repetition ([`crate::rules::fold::Fold`]).
    pub content_key: u64,
    /// The records folded into this one: repeats of it read between the record kept before it
    /// and this one, counted with their times so that a finding says how many records and
    /// attempts there were ([`LoggedEvent::records`]). `None` for a record that stands for
    /// itself alone (always, outside a diagnosis).
    pub folded: Option<Box<Folded>>,
}

impl LoggedEvent {
    /// A record of `event`, read from `origin` at `line` as `text`, with its content key: the
    /// event's time goes into [`LoggedEvent::time`], the rest into [`LoggedEvent::event`].
    pub fn new(
        mut event: Event<'static>,
        log: LogKind,
        origin: Arc<str>,
        line: u64,
        text: Arc<str>,
        content_key: u64,
    ) -> LoggedEvent {
        let time = event.time.take();
        LoggedEvent {
            event: Arc::new(event),
            time,
            log,
            origin,
            line,
            text,
            content_key,
            folded: None,
        }
    }

    /// How many log records this one stands for: itself and those folded into it.
    pub fn records(&self) -> u64 {
        1 + self.folded.as_ref().map_or(0, |f| f.records)
    }

    /// Folds a repeat of this record (one with the same event and content at another time),
    /// logged at `time`, with what was folded into it (`folded`), into this one.
    pub fn absorb(&mut self, time: Option<Timestamp>, folded: Option<Box<Folded>>) {
        match (&mut self.folded, folded) {
            // The fold's usual step, a record that stood for itself alone taking in the repeats
            // before it: built in their memory rather than copied run by run into new memory.
            (None, Some(o)) => self.folded = Some(Folded::after(time, o)),
            (f, o) => {
                let f = f.get_or_insert_with(Box::default);
                f.add(time);
                if let Some(o) = o {
                    f.merge(&o);
                }
            }
        }
    }

    /// The records read beside this one in its file, when a fold kept a copy of them.
    pub fn neighbours(&self) -> Option<&Neighbours> {
        self.folded.as_ref()?.neighbours.as_deref()
    }
}

/// Repeats of a record folded into it ([`LoggedEvent::folded`]): how many, their time range and
/// their attempts, in memory bounded by [`Folded::MAX_RUNS`] whatever their number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folded {
    /// How many records.
    pub records: u64,
    /// The earliest and latest time among them, when one had a time.
    pub span: Option<(Timestamp, Timestamp)>,
    /// Their times as attempts ([`Runs`]), at most [`Folded::MAX_RUNS`] kept.
    pub runs: Runs,
    /// For a record whose rule reads its neighbours in its file (a teardown failure naming no
    /// sandbox, a container race line), those neighbours as they were read, which the fold may
    /// since have folded.
    pub neighbours: Option<Box<Neighbours>>,
}

/// The records read beside a record in its file, nearest first, as many as its rule reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Neighbours {
    /// The records before it.
    pub before: Vec<LoggedEvent>,
    /// The records after it.
    pub after: Vec<LoggedEvent>,
}

impl Folded {
    /// The attempts one folded group keeps exactly; past it, [`Runs::beyond`] counts the runs of
    /// times that start after the last one kept.
    pub const MAX_RUNS: usize = 32;

    /// Adds one record at `time`.
    pub fn add(&mut self, time: Option<Timestamp>) {
        self.count(time);
        if let Some(t) = time {
            self.runs.add_capped(t, Self::MAX_RUNS);
        }
    }

    /// Counts one record at `time` in `records` and `span`.
    fn count(&mut self, time: Option<Timestamp>) {
        self.records += 1;
        if let Some(t) = time {
            self.span = Some(match self.span {
                None => (t, t),
                Some((a, b)) => (a.min(t), b.max(t)),
            });
        }
    }

    /// What a record with nothing folded into it becomes when it [`add`](Folded::add)s one at
    /// `time` and then [`merge`](Folded::merge)s `before` (what that one stood for): the same
    /// counts, span and runs (neighbours are a record's own and are not merged), built in
    /// `before`'s memory.
    pub fn after(time: Option<Timestamp>, mut before: Box<Folded>) -> Box<Folded> {
        before.neighbours = None;
        before.count(time);
        before.runs.put_first(time, Self::MAX_RUNS);
        before
    }

    /// Adds the records of `other`.
    pub fn merge(&mut self, other: &Folded) {
        self.records += other.records;
        if let Some((a, b)) = other.span {
            self.span = Some(match self.span {
                None => (a, b),
                Some((x, y)) => (x.min(a), y.max(b)),
            });
        }
        self.runs.merge_capped(&other.runs, Self::MAX_RUNS);
    }
}

/// Record times as attempts: each maximal run of times less than [`ONE_ATTEMPT`] apart is one
/// attempt, whatever order the times come in (start → end of each run). A capped `Runs` keeps
/// its runs up to a bound and counts in [`Runs::beyond`] each later time that would begin a
/// run of its own, so its attempt count is exact while under the bound and, past it, exact for
/// times read in order (the kubelet's own log) and an upper bound otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs {
    runs: BTreeMap<Timestamp, Timestamp>,
    /// Times that began a run past the cap.
    pub beyond: u64,
    /// The latest time counted in `beyond`, so that the times of one attempt past the cap
    /// count once.
    beyond_last: Option<Timestamp>,
}

impl Runs {
    /// How many attempts: the runs kept and those counted beyond them.
    pub fn attempts(&self) -> u64 {
        self.runs.len() as u64 + self.beyond
    }

    /// The runs kept, start → end, in time order.
    pub fn iter(&self) -> impl Iterator<Item = (Timestamp, Timestamp)> + '_ {
        self.runs.iter().map(|(&s, &e)| (s, e))
    }

    /// Puts `t` in its run: a run it falls in or within [`ONE_ATTEMPT`] of (joining two runs it
    /// bridges), else a run of its own.
    pub fn add(&mut self, t: Timestamp) {
        self.add_run(t, t, usize::MAX);
    }

    /// [`Runs::add`], keeping at most `cap` runs: a time that would begin one more is counted in
    /// [`Runs::beyond`] (once per attempt, when read in time order).
    pub fn add_capped(&mut self, t: Timestamp, cap: usize) {
        self.add_run(t, t, cap);
    }

    /// Adds the run `start..=end` (times less than [`ONE_ATTEMPT`] apart): it joins every run
    /// it overlaps or comes within [`ONE_ATTEMPT`] of, else it is a run of its own, or past `cap`
    /// runs one counted in [`Runs::beyond`].
    pub fn add_run(&mut self, start: Timestamp, end: Timestamp, cap: usize) {
        let (mut s, mut e) = (start, end);
        // The runs that start at most ONE_ATTEMPT after `end` and end at most ONE_ATTEMPT
        // before `start` touch it; they are consecutive, the last of them the latest start, so
        // each one joined is the latest start left in range.
        let mut joined = false;
        while let Some((&rs, &re)) = self.runs.range(..=reach(end)).next_back()
            && reach(re) >= start
        {
            self.runs.remove(&rs);
            (s, e, joined) = (s.min(rs), e.max(re), true);
        }
        if !joined && self.runs.len() >= cap {
            self.count_beyond(start, end);
            return;
        }
        self.runs.insert(s, e);
    }

    /// Counts the run `start..=end` past the cap: one attempt more unless it continues the
    /// latest one counted so.
    fn count_beyond(&mut self, start: Timestamp, end: Timestamp) {
        if !self
            .beyond_last
            .is_some_and(|l| l <= start && reach(l) >= start)
        {
            self.beyond += 1;
        }
        self.beyond_last = Some(self.beyond_last.map_or(end, |l| l.max(end)));
    }

    /// Becomes what [`Runs::default`] becomes when it adds `time` (when there is one) and then
    /// [`merge_capped`](Runs::merge_capped)s these runs, keeping at most `cap`: the same runs and
    /// counts, found in one pass over these runs and changed in place (a run joined to `time`'s
    /// or past the cap taken out, `time`'s put in) instead of built anew run by run.
    ///
    /// Why one pass gives the same: these runs touch no other, so the one a later run may join
    /// is `time`'s alone (a run between them would have joined `time`'s first); and past the cap
    /// every run that does not join `time`'s is counted beyond, in time order as `merge_capped`
    /// adds them.
    pub fn put_first(&mut self, time: Option<Timestamp>, cap: usize) {
        let before_beyond = self.beyond;
        self.beyond_last = None;
        self.beyond = 0;
        if cap == 0 {
            // Nothing is kept: every run is counted beyond, `time`'s first.
            let runs = std::mem::take(&mut self.runs);
            if let Some(t) = time {
                self.count_beyond(t, t);
            }
            for (s, e) in runs {
                self.count_beyond(s, e);
            }
            self.beyond += before_beyond;
            return;
        }
        let mut first = time.map(|t| (t, t));
        let mut kept = usize::from(first.is_some());
        // The runs that join `time`'s (consecutive: `from..=to`), and the first counted beyond.
        let mut joined: Option<(Timestamp, Timestamp)> = None;
        let mut cut_from = None;
        let runs = std::mem::take(&mut self.runs);
        for (&rs, &re) in &runs {
            if let Some((s, e)) = &mut first
                && rs <= reach(*e)
                && reach(re) >= *s
            {
                (*s, *e) = ((*s).min(rs), (*e).max(re));
                joined = Some(joined.map_or((rs, rs), |(from, _)| (from, rs)));
            } else if kept < cap {
                kept += 1;
            } else {
                self.count_beyond(rs, re);
                cut_from.get_or_insert(rs);
            }
        }
        self.runs = runs;
        if joined.is_some() || cut_from.is_some() {
            self.runs.retain(|&k, _| {
                !(joined.is_some_and(|(from, to)| from <= k && k <= to)
                    || cut_from.is_some_and(|c| k >= c))
            });
        }
        if let Some((s, e)) = first {
            self.runs.insert(s, e);
        }
        self.beyond += before_beyond;
    }

    /// Adds the runs of `other`, keeping at most `cap`; its [`Runs::beyond`] adds to this one's.
    pub fn merge_capped(&mut self, other: &Runs, cap: usize) {
        for (s, e) in other.iter() {
            self.add_run(s, e, cap);
        }
        self.beyond += other.beyond;
    }
}

/// The latest time one attempt reaches from a record at `t`: [`ONE_ATTEMPT`] after it.
fn reach(t: Timestamp) -> Timestamp {
    t.checked_add(ONE_ATTEMPT).unwrap_or(t)
}

/// Which component's log a record comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogKind {
    /// The kubelet's log (`--kubelet-log`).
    Kubelet,
    /// The container runtime's log (`--runtime-log`).
    Runtime,
}

/// The events of one log's `text`, as `podcoroner-logs` reads them (records assembled across
/// continuation lines, dates without a year in `year`): the unit tests' reader.
#[cfg(test)]
pub(crate) fn read_text(log: LogKind, origin: &str, year: i32, text: &str) -> Vec<LoggedEvent> {
    read_text_with(crate::logs::ParseContext::new(year), log, origin, text)
}

/// The events of one log held in memory, `text`, read with `ctx` (its year for dates without
/// one, `message_only` for excerpts of bare messages): records are assembled across
/// continuation lines, parsed and classified as `podcoroner-logs` does, and each keeps its
/// 1-based first line in `text` and `origin` as its file. Unclassified records are dropped;
/// nothing fails. For tests and tools that hold a log as a string; `podcoroner-logs` reads files
/// and journals.
pub fn read_text_with(
    mut ctx: crate::logs::ParseContext,
    log: LogKind,
    origin: &str,
    text: &str,
) -> Vec<LoggedEvent> {
    use crate::logs::{LineAssembler, classify, parse};
    let mut asm = LineAssembler::new();
    let mut out = Vec::new();
    let origin: Arc<str> = Arc::from(origin);
    let mut take = |text: &str, line: u64, ctx: &mut crate::logs::ParseContext| {
        let parsed = parse(text, ctx);
        if let Some(e) = classify(&parsed) {
            out.push(LoggedEvent::new(
                e.into_owned(),
                log,
                Arc::clone(&origin),
                line,
                Arc::from(text),
                crate::logs::content_key(&parsed),
            ));
        }
    };
    for l in text.lines() {
        if let Some(r) = asm.push(l) {
            let (t, n) = (r.text.to_string(), r.first_line);
            take(&t, n, &mut ctx);
        }
    }
    if let Some(r) = asm.finish() {
        let (t, n) = (r.text.to_string(), r.first_line);
        take(&t, n, &mut ctx);
    }
    out
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    /// A diagnosis keeps every record of a log whose every line names fresh IDs: what one costs
    /// inline is a budget (it was 328 bytes with the rare IDs and figures inline and a `String`
    /// origin, 232 before the content key and the folded repeats, 248 before the event was
    /// shared), and so is its event, which a record saying something new has to itself.
    #[test]
    fn a_kept_record_stays_small() {
        assert!(size_of::<super::LoggedEvent>() <= 96);
        assert!(size_of::<crate::logs::Event<'static>>() <= 176);
        assert!(size_of::<crate::logs::Ids<'static>>() <= 104);
    }
}

#[cfg(test)]
mod runs_tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + secs).unwrap()
    }

    #[test]
    fn a_run_added_whole_joins_every_run_it_touches() {
        let mut r = Runs::default();
        for s in [0, 20, 40] {
            r.add(at(s));
        }
        assert_eq!(r.attempts(), 3);
        // 4..=36, each end within 5 s of a run: one run from 0 to 40.
        r.add_run(at(4), at(36), usize::MAX);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(at(0), at(40))]);
        r.add_run(at(46), at(50), usize::MAX);
        assert_eq!(r.attempts(), 2);
    }

    #[test]
    fn past_its_cap_a_run_counts_each_attempt_once() {
        let mut r = Runs::default();
        // Attempts a minute apart, each logged as three lines within 2 s.
        for m in 0..10 {
            for s in [0, 1, 2] {
                r.add_capped(at(m * 60 + s), 4);
            }
        }
        assert_eq!(r.iter().count(), 4);
        assert_eq!((r.beyond, r.attempts()), (6, 10));
    }

    /// What `put_first` stands for: a new `Runs` that adds `time`, then merges `runs`.
    fn put_first_by_merging(runs: &Runs, time: Option<Timestamp>, cap: usize) -> Runs {
        let mut r = Runs::default();
        if let Some(t) = time {
            r.add_capped(t, cap);
        }
        r.merge_capped(runs, cap);
        r
    }

    proptest::proptest! {
        /// Runs built from times in any order and under any cap (so some counted beyond, some
        /// touching `time`'s, some around it), then `time` put first: the same runs, counts and
        /// latest time beyond as adding it to new runs and merging these.
        #[test]
        fn putting_a_time_first_is_merging_into_it(
            times in proptest::collection::vec(0i64..400, 0..60),
            time in proptest::option::of(0i64..400),
            build_cap in 1usize..40,
            cap in 0usize..40,
        ) {
            let mut runs = Runs::default();
            for t in &times {
                runs.add_capped(at(*t), build_cap);
            }
            let expected = put_first_by_merging(&runs, time.map(at), cap);
            runs.put_first(time.map(at), cap);
            proptest::prop_assert_eq!(runs, expected);
        }
    }

    #[test]
    fn a_record_absorbing_repeats_is_what_adding_then_merging_gives() {
        let mut before = Folded::default();
        for m in 0..40 {
            before.add(Some(at(m * 60)));
        }
        before.neighbours = Some(Box::default());
        let mut by_merging = Folded::default();
        by_merging.add(Some(at(40 * 60 + 2)));
        by_merging.merge(&before);
        let after = Folded::after(Some(at(40 * 60 + 2)), Box::new(before));
        assert_eq!(*after, by_merging);
        assert_eq!((after.records, after.runs.attempts()), (41, 41));
    }

    #[test]
    fn folded_repeats_merge_their_counts_and_spans() {
        let mut a = Folded::default();
        a.add(Some(at(0)));
        a.add(None);
        let mut b = Folded::default();
        b.add(Some(at(100)));
        a.merge(&b);
        assert_eq!(a.records, 3);
        assert_eq!(a.span, Some((at(0), at(100))));
        assert_eq!(a.runs.attempts(), 2);
    }
}
