//! The node's startup profile: p50, p90 and max of each phase, and of bound-to-ready, over the
//! pods whose start the views hold.

use jiff::SignedDuration;

use super::{Breakdown, Phase};

/// The distribution of one phase (or of the whole start) over the pods that have it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseStats {
    /// How many pods have both edges of it.
    pub pods: usize,
    /// The median (nearest rank).
    pub p50: SignedDuration,
    /// The 90th percentile (nearest rank).
    pub p90: SignedDuration,
    /// The longest.
    pub max: SignedDuration,
}

/// The startup profile of a node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Profile {
    /// Each phase with at least one pod, in [`Phase::ALL`] order.
    pub phases: Vec<(Phase, PhaseStats)>,
    /// Bound to ready (or to running, see [`Breakdown::ready_is_ready`]).
    pub total: Option<PhaseStats>,
    /// How many of the pods in [`Profile::total`] end at running, not Ready: no readiness was
    /// seen for them (`ready_is_ready` false). 0 when every total ends at Ready.
    pub total_to_running: usize,
}

/// The nearest-rank percentile `p` (0..=100) of sorted `v`.
fn rank(v: &[SignedDuration], p: usize) -> SignedDuration {
    let i = (v.len() * p).div_ceil(100).max(1) - 1;
    v[i.min(v.len() - 1)]
}

fn stats(mut v: Vec<SignedDuration>) -> Option<PhaseStats> {
    if v.is_empty() {
        return None;
    }
    v.sort();
    Some(PhaseStats {
        pods: v.len(),
        p50: rank(&v, 50),
        p90: rank(&v, 90),
        max: *v.last()?,
    })
}

/// The profile of `breakdowns`.
pub fn profile(breakdowns: &[Breakdown]) -> Profile {
    let phases = Phase::ALL
        .iter()
        .filter_map(|&ph| {
            let v: Vec<SignedDuration> = breakdowns
                .iter()
                .filter_map(|b| b.phase(ph).map(|s| s.duration()))
                .collect();
            Some((ph, stats(v)?))
        })
        .collect();
    let totals: Vec<(SignedDuration, bool)> = breakdowns
        .iter()
        .filter_map(|b| Some((b.total()?, b.ready_is_ready)))
        .filter(|(d, _)| !d.is_negative())
        .collect();
    let total_to_running = totals.iter().filter(|(_, ready)| !ready).count();
    let total = stats(totals.into_iter().map(|(d, _)| d).collect());
    Profile {
        phases,
        total,
        total_to_running,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<SignedDuration> = (1..=10).map(SignedDuration::from_secs).collect();
        let s = stats(v).unwrap();
        assert_eq!(s.pods, 10);
        assert_eq!(s.p50, SignedDuration::from_secs(5));
        assert_eq!(s.p90, SignedDuration::from_secs(9));
        assert_eq!(s.max, SignedDuration::from_secs(10));
        let one = stats(vec![SignedDuration::from_secs(3)]).unwrap();
        let three = SignedDuration::from_secs(3);
        assert_eq!((one.p50, one.p90, one.max), (three, three, three));
        assert!(stats(vec![]).is_none());
    }
}
