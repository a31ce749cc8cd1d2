//! The bounded aggregate of a group of log records: what a finding says about the records of
//! one entity (how many, from when to when, how many attempts, the first few and the last with
//! their `file:line`), kept in memory bounded by the number of attempts, not of records.
//!
//! [`quote`](super::logs::quote) and [`attempts`](super::logs::attempts) render through it, so
//! every golden finding checks that a [`Tally`] fed one record at a time says exactly what the
//! whole group said. It is the unit of the streaming fold (records folded into per-entity
//! aggregates as they are read): a rule that folds its records into a `Tally` instead of
//! collecting them gives the same evidence.

use jiff::Timestamp;

use super::logs::{MAX_QUOTED, dur, line, source_of};
use crate::event::{Folded, LoggedEvent, Runs};
use crate::finding::Evidence;

/// The aggregate of a group of records, fed in reading order with [`Tally::add`].
///
/// `S` is how a quoted record is kept: `&LoggedEvent` while the records are in memory, an owned
/// sample when they are folded as read. Holds at most [`MAX_QUOTED`] samples and one entry per
/// attempt of the records added one by one (those folded into a record come as their
/// [`Folded`] aggregate, whose attempts are capped).
#[derive(Debug, Clone)]
pub(crate) struct Tally<S> {
    /// Records added, with those folded into them.
    count: u64,
    /// Samples added.
    samples: usize,
    /// The first `MAX_QUOTED - 1` samples, in the order added.
    first: Vec<S>,
    /// The last sample added after those.
    last: Option<S>,
    /// The earliest and latest record time.
    range: Option<(Timestamp, Timestamp)>,
    /// The attempts: maximal runs of record times less than [`ONE_ATTEMPT`] apart
    /// (`kuberuntime_gc.go` retries every minute, a pod worker backs off from 10 s), in time
    /// order whatever order the records come in.
    ///
    /// [`ONE_ATTEMPT`]: crate::event::ONE_ATTEMPT
    runs: Runs,
    /// The most attempts a folded aggregate counted past its cap ([`Runs::beyond`]): the
    /// repeats of one failure's lines (the runtime's, the CRI client's, the caller's) are folded
    /// apart and repeat together, so their uncounted attempts are taken to be the same ones.
    beyond: u64,
}

impl<S> Default for Tally<S> {
    fn default() -> Self {
        Tally {
            count: 0,
            samples: 0,
            first: Vec::new(),
            last: None,
            range: None,
            runs: Runs::default(),
            beyond: 0,
        }
    }
}

impl<S> Tally<S> {
    /// Adds the next record: `sample` (kept when it may be quoted) and its time.
    #[cfg(test)]
    pub(crate) fn add(&mut self, sample: S, time: Option<Timestamp>) {
        self.add_folded(sample, time, None);
    }

    /// Adds the next record with the repeats folded into it (`folded`, read before it).
    pub(crate) fn add_folded(
        &mut self,
        sample: S,
        time: Option<Timestamp>,
        folded: Option<&Folded>,
    ) {
        self.count += 1;
        self.samples += 1;
        if self.first.len() < MAX_QUOTED - 1 {
            self.first.push(sample);
        } else {
            self.last = Some(sample);
        }
        if let Some(t) = time {
            self.widen(t, t);
            self.runs.add(t);
        }
        if let Some(f) = folded {
            self.count += f.records;
            if let Some((a, b)) = f.span {
                self.widen(a, b);
            }
            for (s, e) in f.runs.iter() {
                self.runs.add_run(s, e, usize::MAX);
            }
            self.beyond = self.beyond.max(f.runs.beyond);
        }
    }

    fn widen(&mut self, a: Timestamp, b: Timestamp) {
        self.range = Some(match self.range {
            None => (a, b),
            Some((x, y)) => (x.min(a), y.max(b)),
        });
    }

    /// How many records were added, with those folded into them.
    pub(crate) fn count(&self) -> usize {
        usize::try_from(self.count).unwrap_or(usize::MAX)
    }

    /// The earliest and latest record time, when any record had one.
    pub(crate) fn time_range(&self) -> Option<(Timestamp, Timestamp)> {
        self.range
    }

    /// How many attempts the records stand for: records less than [`ONE_ATTEMPT`] apart are one,
    /// untimed records count as one together; at least 1.
    ///
    /// [`ONE_ATTEMPT`]: crate::event::ONE_ATTEMPT
    pub(crate) fn attempts(&self) -> usize {
        usize::try_from(self.runs.attempts() + self.beyond)
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// The records a finding quotes, in the order added: the first `MAX_QUOTED - 1`, and the
    /// last when there are [`MAX_QUOTED`] or more.
    pub(crate) fn quoted(&self) -> impl Iterator<Item = &S> {
        self.first.iter().chain(self.last.as_ref())
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
            t.add_folded(*e, e.time, e.folded.as_deref());
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
    use crate::event::ONE_ATTEMPT;
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
