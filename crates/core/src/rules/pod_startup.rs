//! `SlowPodStartup` and `PodStartupMetricInvalid`: the pod start of every pod the views hold,
//! broken down by [`crate::startup::breakdown`] from the records of that one pod.
//!
//! The records of one pod are what the log index gives for it ([`pod_records`]: the events
//! naming its `namespace/name`, its UIDs, and the `SyncLoop ADD` lines that list it), so each
//! pod's breakdown is linear in its own records.

use std::collections::{BTreeMap, HashMap};

use jiff::{SignedDuration, Timestamp};

use crate::event::LoggedEvent;
use crate::finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
use crate::logs::{ConfigSource, EventKind, SyncOp};
use crate::model::{ApiPod, NodeView, PodRef};
use crate::startup::{self, Breakdown, Phase, PhaseSpan};

use super::logs::{LogInput, Logs, SAME_EVENT, dur, finding, line, plural};

/// A slow start is judged while it is this recent (its `Ready` this close to the diagnosis),
/// unless the logs hold it: an old slow start is history, not a finding.
const RECENT: SignedDuration = SignedDuration::from_hours(1);

/// One pod to judge: its identity, its records (reading order) and its API object.
struct Candidate<'l, 'v> {
    pod: PodRef,
    records: Vec<&'l LoggedEvent>,
    api: Option<&'v ApiPod>,
}

/// The pods whose start the views may hold: the API pods of the node (not mirror pods) and the
/// pods the logs show the kubelet receiving (`SyncLoop ADD` from the API) or timing
/// (`"Observed pod startup duration"`); static pods are left out (they are not bound).
fn candidates<'l, 'v>(logs: &Logs<'l>, view: &'v NodeView) -> Vec<Candidate<'l, 'v>> {
    // `namespace/name` → the positions of the SyncLoop ADD lines that list it.
    let mut adds: HashMap<(String, String), Vec<usize>> = HashMap::new();
    let mut keys: BTreeMap<(String, String), Option<&'v ApiPod>> = BTreeMap::new();
    let mut static_pods: Vec<(String, String)> = Vec::new();
    for &i in logs
        .by_kind
        .get(&EventKind::SyncLoop(SyncOp::Add))
        .map_or(&[][..], Vec::as_slice)
    {
        let e = &logs.all[i];
        let is_static = matches!(
            e.event.config_source,
            Some(ConfigSource::File | ConfigSource::Http)
        );
        for p in &e.event.ids.pods {
            let Some(ns) = &p.namespace else { continue };
            let key = (ns.to_string(), p.name.to_string());
            if is_static {
                static_pods.push(key);
                continue;
            }
            adds.entry(key.clone()).or_default().push(i);
            keys.entry(key).or_insert(None);
        }
    }
    for e in logs.of(&[EventKind::PodStartupObserved]) {
        if let Some(p) = e.event.ids.pods.first()
            && let Some(ns) = &p.namespace
        {
            keys.entry((ns.to_string(), p.name.to_string()))
                .or_insert(None);
        }
    }
    if let Some(api) = &view.api {
        for a in &api.pods {
            if a.mirror_hash().is_some()
                || (!view.node_name.is_empty() && a.node_name != view.node_name)
            {
                continue;
            }
            keys.insert((a.pod.namespace.clone(), a.pod.name.clone()), Some(a));
        }
    }
    let pulls = joined_pulls(logs);
    keys.into_iter()
        .filter(|(k, _)| !static_pods.contains(k))
        .map(|((ns, name), api)| {
            let key = format!("{ns}/{name}");
            let uid = api
                .map(|a| a.pod.uid.clone())
                .or_else(|| logs.uids_of(&key).last().map(|u| (*u).to_string()))
                .unwrap_or_default();
            let pod_key = (ns.clone(), name.clone());
            let mut extra: Vec<usize> = adds.get(&pod_key).cloned().unwrap_or_default();
            extra.extend(pulls.get(&pod_key).into_iter().flatten());
            let records = pod_records(logs, &key, &uid, Some(&extra));
            Candidate {
                pod: PodRef {
                    namespace: ns,
                    name,
                    uid,
                },
                records,
                api,
            }
        })
        .collect()
}

/// A pod by `(namespace, name)`.
type PodKey = (String, String);

/// containerd's `PullImage "<ref>"` lines (they name the image, never the pod), joined to the
/// pod whose kubelet `Pulling image "<ref>"` is within [`SAME_EVENT`] of the call: the kubelet
/// logs the event and calls CRI `PullImage` back to back (`image_manager.go`
/// `EnsureImageExists`). The call's next line of the same image (`PullImage "<ref>" returns
/// image reference`, `Pulled image "<ref>" with image id`, `PullImage "<ref>" failed`) goes with
/// it. A call near no kubelet line naming a pod, or near two pods' pulls of the same image,
/// stays unjoined: never guessed. By `(namespace, name)`: the positions in `logs.all`.
///
/// Linear: each image's kubelet pulls are sorted once and each call looks its window up by
/// binary search.
fn joined_pulls(logs: &Logs<'_>) -> HashMap<PodKey, Vec<usize>> {
    use super::teardown::quoted_after;
    let at = |kind: EventKind| logs.by_kind.get(&kind).map_or(&[][..], Vec::as_slice);
    // The kubelet's pulls by image: (time, pod), sorted.
    let mut kubelet: HashMap<&str, Vec<(Timestamp, PodKey)>> = HashMap::new();
    for &i in at(EventKind::ImagePulling) {
        let e = &logs.all[i];
        if e.log != crate::event::LogKind::Kubelet {
            continue;
        }
        let (Some(t), Some(image), Some(p)) = (
            e.time,
            quoted_after(&e.text, "Pulling image "),
            e.event.ids.pods.first(),
        ) else {
            continue;
        };
        let Some(ns) = &p.namespace else { continue };
        kubelet
            .entry(image)
            .or_default()
            .push((t, (ns.to_string(), p.name.to_string())));
    }
    if kubelet.is_empty() {
        return HashMap::new();
    }
    for v in kubelet.values_mut() {
        v.sort();
    }
    // The runtime's pull lines by image, in reading order.
    let mut runtime: HashMap<&str, Vec<usize>> = HashMap::new();
    for kind in [
        EventKind::ImagePulling,
        EventKind::ImagePulled,
        EventKind::ImagePullFailed,
    ] {
        for &i in at(kind) {
            let e = &logs.all[i];
            if e.log != crate::event::LogKind::Runtime {
                continue;
            }
            if let Some(image) = quoted_after(&e.text, "PullImage ")
                .or_else(|| quoted_after(&e.text, "Pulled image "))
            {
                runtime.entry(image).or_default().push(i);
            }
        }
    }
    let mut out: HashMap<PodKey, Vec<usize>> = HashMap::new();
    for (image, lines) in &mut runtime {
        let Some(pulls) = kubelet.get(image) else {
            continue;
        };
        lines.sort_unstable();
        for (n, &i) in lines.iter().enumerate() {
            let e = &logs.all[i];
            let Some(t) = e.time.filter(|_| e.event.kind == EventKind::ImagePulling) else {
                continue;
            };
            let from = pulls.partition_point(|(k, _)| *k < t - SAME_EVENT);
            let to = pulls.partition_point(|(k, _)| *k <= t + SAME_EVENT);
            let mut near = pulls[from..to].iter().map(|(_, p)| p);
            let Some(pod) = near.next() else { continue };
            if near.any(|q| q != pod) {
                continue;
            }
            let joined = out.entry(pod.clone()).or_default();
            joined.push(i);
            if let Some(&end) = lines.get(n + 1)
                && logs.all[end].event.kind != EventKind::ImagePulling
            {
                joined.push(end);
            }
        }
    }
    out
}

/// The records of one pod: those naming `key` (`namespace/name`) first, those naming `uid` or
/// another UID the logs give the name, and the `SyncLoop ADD` lines and joined runtime pulls at
/// `adds`; reading order.
fn pod_records<'l>(
    logs: &Logs<'l>,
    key: &str,
    uid: &str,
    adds: Option<&Vec<usize>>,
) -> Vec<&'l LoggedEvent> {
    let mut at: Vec<usize> = logs.of_name(key).to_vec();
    at.extend_from_slice(logs.of_uid(uid));
    for u in logs.uids_of(key) {
        if *u != uid {
            at.extend_from_slice(logs.of_uid(u));
        }
    }
    if let Some(a) = adds {
        at.extend_from_slice(a);
    }
    at.sort_unstable();
    at.dedup();
    at.into_iter().map(|i| &logs.all[i]).collect()
}

/// The startup breakdown of every pod whose start `view` and `events` hold, by pod: what
/// `SlowPodStartup` judges and [`crate::rules::Diagnosis::startup`] carries (a diagnosis with
/// logs gets them from the rule; this builds them for one without).
pub fn startup_breakdowns(view: &NodeView, events: &[LoggedEvent]) -> Vec<Breakdown> {
    let logs = Logs::new(events);
    breakdowns(&logs, view)
        .into_iter()
        .filter_map(|(_, b)| b)
        .collect()
}

/// Every candidate with its breakdown.
fn breakdowns<'l, 'v>(
    logs: &Logs<'l>,
    view: &'v NodeView,
) -> Vec<(Candidate<'l, 'v>, Option<Breakdown>)> {
    candidates(logs, view)
        .into_iter()
        .map(|c| {
            let b = startup::breakdown(&c.pod, &c.records, c.api, view.cri.as_ref());
            (c, b)
        })
        .collect()
}

fn from_logs(e: &startup::Edge) -> bool {
    matches!(
        e.source,
        EvidenceSource::KubeletLog | EvidenceSource::RuntimeLog
    )
}

/// One phase as an evidence line: `image_pull 2m3s: Pulling image (kubelet.log:12 at …) →
/// image pulled (kubelet.log:40 at …)`.
fn phase_evidence(s: &PhaseSpan) -> Evidence {
    let edge = |e: &startup::Edge| {
        format!(
            "{} ({}{})",
            e.what,
            e.origin
                .as_deref()
                .map_or_else(|| e.source.as_str().to_string(), str::to_string),
            format_args!(" at {}", e.at)
        )
    };
    Evidence::new(
        s.end.source,
        format!(
            "{} {}: {} → {}",
            s.phase.as_str(),
            dur(s.duration()),
            edge(&s.start),
            edge(&s.end)
        ),
    )
}

/// `SlowPodStartup`: bound to `Ready` over `--slow-start`, the dominant phase named.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let threshold =
        SignedDuration::try_from(input.config.slow_start).unwrap_or(SignedDuration::MAX);
    let logs = input.logs;
    let judged = breakdowns(logs, input.view);
    for (c, b) in &judged {
        if let Some(f) = still_starting(c, b.as_ref(), threshold, input.now, out) {
            out.push(f);
            continue;
        }
        let Some(b) = b else {
            continue;
        };
        let (Some(total), Some(ready), Some(dominant)) = (b.total(), &b.ready, b.dominant()) else {
            continue;
        };
        if total <= threshold {
            continue;
        }
        // A kubelet start between bound and ready: the Ready transition is the restart's (its
        // probes start again), not the pod's start.
        let bound_at = b.bound.as_ref().map(|e| e.at);
        if logs.of(&[EventKind::KubeletStarted]).any(|k| {
            k.time
                .is_some_and(|t| bound_at.is_some_and(|a| t > a) && t < ready.at)
        }) {
            continue;
        }
        let recent = input.now.duration_since(ready.at) <= RECENT;
        if !(recent || from_logs(ready) || b.phases.iter().any(|p| from_logs(&p.end))) {
            continue;
        }
        out.push(slow_finding(b, c, total, threshold, dominant, input.now));
    }
    // What the rule broke down is the diagnosis's (the profile and the agent's metrics).
    let _ = input
        .startup
        .set(judged.into_iter().filter_map(|(_, b)| b).collect());
}

/// A pod the API shows `Pending` (its containers not all started), not being deleted, bound
/// longer than `threshold` before `now`: a start still going on, with the phase it waits in (the
/// first whose end no view gives). Not when another finding already names the pod (a sandbox
/// that cannot be created or torn down says more).
fn still_starting(
    c: &Candidate<'_, '_>,
    b: Option<&Breakdown>,
    threshold: SignedDuration,
    now: Timestamp,
    out: &[Finding],
) -> Option<Finding> {
    let api = c.api?;
    if api.phase != "Pending" || api.deletion_timestamp.is_some() {
        return None;
    }
    let bound = api.startup.scheduled_at.or(api.created_at)?;
    let waited = now.duration_since(bound);
    if waited <= threshold {
        return None;
    }
    if out.iter().any(|f| {
        f.severity >= Severity::Warning
            && f.pod.as_ref().is_some_and(|p| {
                (!p.uid.is_empty() && p.uid == api.pod.uid)
                    || (p.namespace == api.pod.namespace && p.name == api.pod.name)
            })
    }) {
        return None;
    }
    let has = |ph: Phase| b.is_some_and(|b| b.phase(ph).is_some());
    let pulling = c.records.iter().any(|e| {
        matches!(
            e.event.kind,
            EventKind::ImagePulling | EventKind::ImagePullFailed
        )
    });
    let waiting = if !has(Phase::Sandbox) && !pulling {
        Phase::Sandbox
    } else if !has(Phase::ImagePull) && pulling {
        Phase::ImagePull
    } else if api.startup.init_containers > 0 && api.startup.initialized_at.is_none() {
        Phase::InitContainers
    } else {
        Phase::ContainerStart
    };
    let mut f = finding(
        FindingKind::SlowPodStartup,
        Severity::Warning,
        format!(
            "pod {}/{} has not started {} after it was bound (over --slow-start {}): it waits in {}",
            api.pod.namespace,
            api.pod.name,
            dur(waited),
            dur(threshold),
            waiting.as_str()
        ),
        "the kubelet starts a pod in order (kubelet.go SyncPod, kuberuntime_manager.go SyncPod); a pod stays \
         Pending until every container has started",
        waiting.remediation().to_string(),
    );
    f.pod = Some(api.pod.clone());
    f.evidence.push(Evidence::new(
        EvidenceSource::Apiserver,
        format!("bound {bound}, phase Pending at {now}"),
    ));
    if let Some(b) = b {
        f.evidence.extend(b.phases.iter().map(phase_evidence));
    }
    if let Some(last) = c.records.last() {
        f.evidence.push(line(last));
    }
    Some(f)
}

fn slow_finding(
    b: &Breakdown,
    c: &Candidate<'_, '_>,
    total: SignedDuration,
    threshold: SignedDuration,
    dominant: &PhaseSpan,
    _now: Timestamp,
) -> Finding {
    let share = dominant.duration().as_secs_f64() / total.as_secs_f64().max(1e-9) * 100.0;
    let end = if b.ready_is_ready { "Ready" } else { "running" };
    let mut f = finding(
        FindingKind::SlowPodStartup,
        Severity::Warning,
        format!(
            "pod {}/{} took {} from bound to {end} (over --slow-start {}): {} took {} ({share:.0} %)",
            b.pod.namespace,
            b.pod.name,
            dur(total),
            dur(threshold),
            dominant.phase.as_str(),
            dur(dominant.duration()),
        ),
        "the kubelet starts a pod in order (kubelet.go SyncPod, kuberuntime_manager.go SyncPod): the pod \
         sandbox and its network (CRI RunPodSandbox, the CNI ADD), the image pulls (EnsureImageExists), the \
         init containers one by one, the containers, then the readiness probes until Ready",
        dominant.phase.remediation().to_string(),
    );
    f.pod = Some(b.pod.clone());
    if let (Some(bound), Some(ready)) = (&b.bound, &b.ready) {
        f.evidence.push(Evidence::new(
            bound.source,
            format!(
                "bound {} ({}) → {end} {} ({})",
                bound.at, bound.what, ready.at, ready.what
            ),
        ));
    }
    f.evidence.extend(b.phases.iter().map(phase_evidence));
    // The records of the dominant phase's edges, as they were logged.
    for edge in [&dominant.start, &dominant.end] {
        if let Some(origin) = &edge.origin
            && let Some(e) = c
                .records
                .iter()
                .find(|e| format!("{}:{}", e.origin, e.line) == *origin)
        {
            let quoted = line(e);
            if !f.evidence.contains(&quoted) {
                f.evidence.push(quoted);
            }
        }
    }
    f
}

/// `PodStartupMetricInvalid`: `"Observed pod startup duration"` records with a negative
/// `podStartSLOduration` (or E2E duration), one finding for the node.
///
/// The kubelet computes the SLI as `podStartE2EDuration - (lastFinishedPulling -
/// firstStartedPulling)`. A pull recorded without its other end (a pull that failed and then
/// found the image present, which records no finish: the real node's case, `crates/cli/tests/
/// real_startup.rs`; or with parallel pulls, `serializeImagePulls: false`, a finish without a
/// start) makes the difference from Go's zero time saturate at the largest `time.Duration`, and
/// the SLI is about -9.22e+09 s; overlapping pulls give smaller negative values (k/k #130432,
/// fixed by k/k #131324, which records the finish when the image is already present).
pub(super) fn run_metric(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let bad: Vec<(&LoggedEvent, f64)> = input
        .logs
        .of(&[EventKind::PodStartupObserved])
        .filter_map(|e| {
            let o = startup::values::observed(e);
            let v = o.slo_seconds?;
            (v < 0.0 || o.e2e.is_some_and(|d| d.is_negative())).then_some((e, v))
        })
        .collect();
    if bad.is_empty() {
        return;
    }
    let saturated = bad.iter().filter(|(_, v)| *v < -1e9).count();
    let worst = bad.iter().map(|(_, v)| *v).fold(f64::INFINITY, f64::min);
    let mut f = finding(
        FindingKind::PodStartupMetricInvalid,
        Severity::Info,
        format!(
            "the kubelet's pod startup SLI is impossible in {} (podStartSLOduration down to {worst:.3e} s{}): \
             kubelet_pod_start_sli_duration_seconds cannot be trusted on this node",
            plural(bad.iter().map(|(e, _)| e.records() as usize).sum::<usize>(), "record", "records"),
            if saturated > 0 {
                ", an image pull recorded without its other end: the difference from Go's zero time saturates (k/k #130432)"
            } else {
                ", image pulls counted twice (k/k #130432)"
            }
        ),
        "pod_startup_latency_tracker.go ObservedPodOnWatch: podStartSLOduration = podStartE2EDuration - \
         (lastFinishedPulling - firstStartedPulling); a pull recorded without its other end (a failed pull \
         whose image then appears, parallel pulls with serializeImagePulls: false) makes the difference from \
         Go's zero time saturate (about 9.22e+09 s); k/k #130432, fixed by k/k #131324",
        "read pod startup latency from podcoroner_pod_startup_seconds or podStartE2EDuration; upgrade the \
         kubelet to a release with k/k #131324, or set serializeImagePulls: true"
            .to_string(),
    );
    let group: Vec<&LoggedEvent> = bad.iter().map(|(e, _)| *e).collect();
    f.evidence = super::logs::quote(&group);
    out.push(f);
}

#[cfg(test)]
#[path = "pod_startup_tests.rs"]
mod tests;
