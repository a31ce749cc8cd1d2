//! The bounded aggregate of a group of log records: what a finding says about the records of
//! one entity (how many, from when to when, how many attempts, the first few and the last with
//! their `file:line`), kept in memory bounded by the number of attempts, not of records.
//!
//! [`quote`](super::logs::quote) and [`attempts`](super::logs::attempts) render through it, so
//! every golden finding checks that a [`Tally`] fed one record at a time says exactly what the
//! whole group said. It is the unit of the streaming fold (records folded into per-entity
//! aggregates as they are read): a rule that folds its records into a `Tally` instead of
//! collecting them gives the same evidence.

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::logs::{MAX_QUOTED, ONE_ATTEMPT, dur, line, source_of};
use crate::event::LoggedEvent;
use crate::finding::Evidence;

/// The aggregate of a group of records, fed in reading order with [`Tally::add`].
///
/// `S` is how a quoted record is kept: `&LoggedEvent` while the records are in memory, an owned
/// sample when they are folded as read. Holds at most [`MAX_QUOTED`] samples and one entry per
/// attempt.
#[derive(Debug, Clone)]
pub(crate) struct Tally<S> {
    /// Records added.
    count: usize,
    /// The first `MAX_QUOTED - 1` records, in the order added.
    first: Vec<S>,
    /// The last record added after those.
    last: Option<S>,
    /// The earliest and latest record time.
    range: Option<(Timestamp, Timestamp)>,
    /// The attempts: start → end of each maximal run of record times less than
    /// [`ONE_ATTEMPT`] apart (`kuberuntime_gc.go` retries every minute, a pod worker backs off
    /// from 10 s), in time order whatever order the records come in.
    runs: BTreeMap<Timestamp, Timestamp>,
}

impl<S> Default for Tally<S> {
    fn default() -> Self {
        Tally {
            count: 0,
            first: Vec::new(),
            last: None,
            range: None,
            runs: BTreeMap::new(),
        }
    }
}

impl<S> Tally<S> {
    /// Adds the next record: `sample` (kept when it may be quoted) and its time.
    pub(crate) fn add(&mut self, sample: S, time: Option<Timestamp>) {
        self.count += 1;
        if self.first.len() < MAX_QUOTED - 1 {
            self.first.push(sample);
        } else {
            self.last = Some(sample);
        }
        if let Some(t) = time {
            self.range = Some(match self.range {
                None => (t, t),
                Some((a, b)) => (a.min(t), b.max(t)),
            });
            self.add_time(t);
        }
    }

    /// Puts `t` in its attempt: a run it falls in or within [`ONE_ATTEMPT`] of (joining two
    /// runs it bridges), else a run of its own.
    fn add_time(&mut self, t: Timestamp) {
        let left = self.runs.range(..=t).next_back().map(|(&s, &e)| (s, e));
        if let Some((_, end)) = left
            && end >= t
        {
            return;
        }
        let right = self
            .runs
            .range((std::ops::Bound::Excluded(t), std::ops::Bound::Unbounded))
            .next()
            .map(|(&s, &e)| (s, e));
        let near = |a: Timestamp, b: Timestamp| b.duration_since(a) <= ONE_ATTEMPT;
        let joins_left = left.filter(|&(_, end)| near(end, t));
        let joins_right = right.filter(|&(start, _)| near(t, start));
        match (joins_left, joins_right) {
            (Some((start, _)), Some((r_start, r_end))) => {
                self.runs.remove(&r_start);
                self.runs.insert(start, r_end);
            }
            (Some((start, _)), None) => {
                self.runs.insert(start, t);
            }
            (None, Some((r_start, r_end))) => {
                self.runs.remove(&r_start);
                self.runs.insert(t, r_end);
            }
            (None, None) => {
                self.runs.insert(t, t);
            }
        }
    }

    /// How many records were added.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The earliest and latest record time, when any record had one.
    pub(crate) fn time_range(&self) -> Option<(Timestamp, Timestamp)> {
        self.range
    }

    /// How many attempts the records stand for: records less than [`ONE_ATTEMPT`] apart are one,
    /// untimed records count as one together; at least 1.
    pub(crate) fn attempts(&self) -> usize {
        self.runs.len().max(1)
    }

    /// The records a finding quotes, in the order added: the first `MAX_QUOTED - 1`, and the
    /// last when there are [`MAX_QUOTED`] or more.
    pub(crate) fn quoted(&self) -> impl Iterator<Item = &S> {
        self.first
            .iter()
            .chain(self.last.as_ref().filter(|_| self.count >= MAX_QUOTED))
    }

    /// The first record added.
    pub(crate) fn first(&self) -> Option<&S> {
        self.first.first()
    }
}

impl<'e> Tally<&'e LoggedEvent> {
    /// The tally of `group`, a group of records in reading order.
    pub(crate) fn of(group: &[&'e LoggedEvent]) -> Self {
        let mut t = Tally::default();
        for e in group {
            t.add(*e, e.event.time);
        }
        t
    }

    /// Evidence lines: a count line (`N log records from A to B (span)`) when there is more
    /// than one record, then the quoted records as `file:line: text`.
    pub(crate) fn quote(&self) -> Vec<Evidence> {
        let mut ev = Vec::new();
        let Some(first) = self.first() else {
            return ev;
        };
        if self.count() > 1 {
            let span = match self.time_range() {
                Some((a, b)) => format!(" from {a} to {b} ({})", dur(b.duration_since(a))),
                None => String::new(),
            };
            ev.push(Evidence::new(
                source_of(first),
                format!("{} log records{span}", self.count()),
            ));
        }
        ev.extend(self.quoted().map(|e| line(e)));
        ev
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The attempts of a list of times as the rules counted them before the tally: sorted,
    /// gaps longer than [`ONE_ATTEMPT`] counted.
    fn attempts_sorted(times: &[Timestamp]) -> usize {
        let mut times = times.to_vec();
        times.sort();
        let timed = times
            .windows(2)
            .filter(|w| w[1].duration_since(w[0]) > ONE_ATTEMPT)
            .count()
            + usize::from(!times.is_empty());
        timed.max(1)
    }

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + secs).unwrap()
    }

    #[test]
    fn a_time_bridging_two_attempts_makes_them_one() {
        let mut t: Tally<()> = Tally::default();
        for s in [0, 10, 5] {
            t.add((), Some(at(s)));
        }
        assert_eq!(t.attempts(), 1);
        t.add((), Some(at(16)));
        assert_eq!(t.attempts(), 2);
        assert_eq!(t.time_range(), Some((at(0), at(16))));
    }

    #[test]
    fn quoted_are_the_first_three_and_the_last() {
        let mut t: Tally<u32> = Tally::default();
        for n in 0..3 {
            t.add(n, None);
        }
        assert_eq!(t.quoted().copied().collect::<Vec<_>>(), [0, 1, 2]);
        for n in 3..9 {
            t.add(n, None);
        }
        assert_eq!(t.quoted().copied().collect::<Vec<_>>(), [0, 1, 2, 8]);
        assert_eq!((t.count(), t.attempts()), (9, 1));
    }

    proptest! {
        #[test]
        fn attempts_match_the_sorted_count(secs in proptest::collection::vec(0i64..200, 0..60)) {
            let times: Vec<Timestamp> = secs.iter().map(|&s| at(s)).collect();
            let mut t: Tally<()> = Tally::default();
            for &x in &times {
                t.add((), Some(x));
            }
            prop_assert_eq!(t.attempts(), attempts_sorted(&times));
        }
    }
}
