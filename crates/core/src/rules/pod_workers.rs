//! `StuckPodWorker`: a pod worker that never finishes terminating.

use std::borrow::Cow;

#[allow(unused_imports)]
use super::logs::*;
use super::teardown::Latest;
#[allow(unused_imports)]
use super::*;

// === StuckPodWorker ===

/// 1.22 to 1.26 pod workers (`pod_workers.go`):
/// - "Pod worker has been requested for removal but is still not fully terminated" repeating
///   (3 times or more) for one UID;
/// - "Pod has been terminated and is no longer known to the kubelet, remove all history"
///   followed within 2 s by "Pod is orphaned and must be torn down" for the same UID (k/k
///   #107730);
/// - a static pod REMOVEd from its source and ADDed again with the same UID (an unchanged
///   manifest put back) that starts no container within a minute while the log goes on (the
///   1.22.0/1.22.1 regression, k/k #104648: the worker still holds the terminated UID). The
///   UIDs come from the SyncLoop lines (legacy) or the nearest lines naming the pod.
///
/// Not a finding: the re-added pod starting a container; a re-add with another UID (the manifest
/// changed); a log that ends before the minute is up.
pub(super) fn stuck_pod_workers(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let all = logs.all;
    let mut by_uid: BTreeMap<String, (Vec<&LoggedEvent>, Cow<'static, str>)> = BTreeMap::new();
    let mut not_terminated: BTreeMap<&str, Vec<&LoggedEvent>> = BTreeMap::new();
    let mut worker: BTreeMap<&str, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in all {
        let Some(uid) = own_uid_ref(e) else { continue };
        match e.event.kind {
            EventKind::PodWorkerNotTerminated => not_terminated.entry(uid).or_default().push(e),
            EventKind::RemoveAllHistory
            | EventKind::PodOrphanedTornDown
            | EventKind::PodSyncedFirstTime => worker.entry(uid).or_default().push(e),
            _ => {}
        }
    }
    for (uid, group) in not_terminated {
        if records(&group) >= 3 {
            by_uid.insert(
                uid.to_string(),
                (
                    group,
                    "\"Pod worker has been requested for removal but is still not fully terminated\" repeating"
                        .into(),
                ),
            );
        }
    }
    for (uid, group) in worker {
        // "remove all history" then "orphaned, must be torn down" within 2 s: one sorted pass.
        let mut torn_down: Vec<jiff::Timestamp> = group
            .iter()
            .filter(|o| o.event.kind == EventKind::PodOrphanedTornDown)
            .filter_map(|o| o.time)
            .collect();
        torn_down.sort_unstable();
        let race = group.iter().any(|h| {
            h.event.kind == EventKind::RemoveAllHistory
                && h.time.is_some_and(|a| {
                    let at = torn_down.partition_point(|&b| b < a);
                    torn_down
                        .get(at)
                        .is_some_and(|&b| b.duration_since(a) <= SignedDuration::from_secs(2))
                })
        });
        if race {
            by_uid.entry(uid.to_string()).or_insert((
                group,
                "\"remove all history\" then \"Pod is orphaned and must be torn down\" (k/k #107730)"
                    .into(),
            ));
        }
    }
    // Static pod removed and re-added with the same UID.
    let end = all.iter().filter_map(|e| e.time).max();
    let static_op = |e: &LoggedEvent, op: SyncOp| {
        e.event.kind == EventKind::SyncLoop(op)
            && matches!(
                e.event.config_source,
                Some(ConfigSource::File | ConfigSource::Http)
            )
    };
    let adds = logs
        .by_kind
        .get(&EventKind::SyncLoop(SyncOp::Add))
        .map_or(&[][..], Vec::as_slice);
    // Per UID, its containers' starts, to tell in one comparison whether one came after an ADD.
    let mut started_of: HashMap<String, Latest<'_>> = HashMap::new();
    let mut name_index: HashMap<String, (Vec<usize>, Vec<usize>)> = HashMap::new();
    for &i in adds {
        let add = &all[i];
        if !static_op(add, SyncOp::Add) {
            continue;
        }
        let Some(name) = pod_name_key(add) else {
            continue;
        };
        let named = logs.of_name(&name);
        // The name's static REMOVEs and its records naming a UID, found once per name: a pod
        // ADDed again and again looks back through them by binary search, not by a scan.
        let (removes, with_uid) = name_index.entry(name.clone()).or_insert_with(|| {
            let removes = named
                .iter()
                .copied()
                .filter(|&j| static_op(&all[j], SyncOp::Remove))
                .collect::<Vec<usize>>();
            let with_uid = named
                .iter()
                .copied()
                .filter(|&j| own_uid_ref(&all[j]).is_some())
                .collect::<Vec<usize>>();
            (removes, with_uid)
        });
        let Some(remove) = before(removes, i).last().map(|&j| &all[j]) else {
            continue;
        };
        let uid_before =
            own_uid(remove).or_else(|| before(with_uid, i).last().and_then(|&j| own_uid(&all[j])));
        let uid_after = own_uid(add).or_else(|| {
            after_pos(with_uid, i)
                .first()
                .and_then(|&j| own_uid(&all[j]))
        });
        let (Some(before), Some(uid)) = (uid_before, uid_after) else {
            continue;
        };
        if before != uid {
            continue;
        }
        // A changed manifest gives a new UID, yet the old pod's teardown lines still name the old
        // one after the ADD: the same UID is only shown when no other UID of that name follows
        // within the window the rule waits for a start.
        // The walk stops where the log's time leaves that window, forward or back: a log of
        // several excerpts, or a clock stepped back, starts over in time, and a walk that went
        // on through every later part was quadratic in the ADDs (stop 42's bench).
        let window_end = add.time.map(|t| t + READD_START);
        let other_uid_follows = after_pos(named, i)
            .iter()
            .map(|&j| &all[j])
            .take_while(|e| match (e.time, add.time, window_end) {
                (Some(t), Some(a), Some(w)) => a <= t && t <= w,
                _ => true,
            })
            .filter_map(own_uid)
            .any(|u| u != uid);
        if other_uid_follows {
            continue;
        }
        let started = started_of
            .entry(uid.clone())
            .or_insert_with(|| {
                let mut l = Latest::default();
                for &j in logs.of_uid(&uid) {
                    if all[j].event.kind == EventKind::Pleg(crate::logs::PlegType::ContainerStarted)
                    {
                        l.add(&all[j]);
                    }
                }
                l
            })
            .any_after(add);
        let waited = match (add.time, end) {
            (Some(t), Some(end)) => end.duration_since(t) >= READD_START,
            _ => false,
        };
        if started || !waited {
            continue;
        }
        by_uid.entry(uid).or_insert((
            vec![remove, add],
            "static pod removed and re-added with the same UID; it starts no container (1.22.0 and 1.22.1, k/k \
             #104648, fixed in 1.22.2)"
                .into(),
        ));
    }
    for (old, group, signature) in blocked_static_pods(logs) {
        by_uid.entry(old).or_insert((group, signature.into()));
    }
    for (uid, (group, signature)) in by_uid {
        let sandbox = view
            .cri
            .iter()
            .flat_map(|c| c.sandboxes.iter())
            .filter(|s| s.pod.uid == uid)
            .max_by_key(|s| s.created_at);
        let pod = logs.pod_of(view, &group, None, Some(&uid));
        let mut f = finding(
            FindingKind::StuckPodWorker,
            Severity::Warning,
            format!(
                "the kubelet's pod worker for pod{} is stuck: {signature}{}",
                of_pod(pod.as_ref()).trim_start_matches(" of pod"),
                sandbox.map_or(String::new(), |s| format!(
                    "; it holds sandbox {} ({})",
                    short(&s.id),
                    s.state.cri_name()
                ))
            ),
            "pod_workers.go (1.22 to 1.26): a pod worker that never reaches terminated keeps the pod's sandbox \
             and blocks a pod with the same UID from starting; the kubelet's GC does not try to remove its \
             sandbox (k/k #107730, #104648; fixed in 1.27)",
            format!(
                "systemctl restart kubelet (a restart rebuilds the pod workers); upgrade the kubelet to 1.27 or \
                 later{}",
                sandbox.map_or(String::new(), |s| format!(
                    "; the sandbox: crictl stopp {id} && crictl rmp {id}",
                    id = sh(&s.id)
                ))
            ),
        );
        f.pod = pod;
        f.sandbox_id = sandbox.map(|s| s.id.clone());
        f.evidence = quote(&group);
        out.push(f);
    }
}

/// How long the pod of a static pod's previous UID may go on after the new one first cannot
/// start, at least: its containers' grace period (30 s unless the kill says more) and the
/// teardown after it.
const STATIC_BLOCKED: SignedDuration = SignedDuration::from_secs(90);

/// `pod_workers.go` `allowPodStart` (1.22 and later): a static pod does not start until the pod
/// of its full name under its previous UID (the manifest changed) has terminated, saying "Pod
/// cannot start yet". That pod's records going on [`STATIC_BLOCKED`] or more (or its kill's
/// grace period and 30 s) after the new pod first waited, with no container of the new pod
/// started, is a worker that does not terminate blocking the static pod (kube-apiserver after
/// an upgrade, its old pod's volumes never unmounted). Returns the old UID, the records, and
/// what they show.
///
/// Not a finding: the old pod gone within that time (a manifest change as usual); the new pod
/// starting a container; a log that ends before.
fn blocked_static_pods<'l>(logs: &Logs<'l>) -> Vec<(String, Vec<&'l LoggedEvent>, String)> {
    let all = logs.all;
    // The first "cannot start yet" of each (name, UID), with its position.
    let mut first: BTreeMap<(String, &str), usize> = BTreeMap::new();
    let waiting = logs
        .by_kind
        .get(&EventKind::PodCannotStartYet)
        .map_or(&[][..], Vec::as_slice);
    for &i in waiting {
        let e = &all[i];
        if let (Some(name), Some(uid), Some(_)) = (pod_name_key(e), own_uid_ref(e), e.time) {
            first.entry((name, uid)).or_insert(i);
        }
    }
    let mut out = Vec::new();
    for ((name, new_uid), at) in first {
        let waits = &all[at];
        let Some(since) = waits.time else { continue };
        let new_started = logs.of_uid(new_uid).iter().any(|&j| {
            all[j].event.kind == EventKind::Pleg(crate::logs::PlegType::ContainerStarted)
                && all[j].time.is_some_and(|t| t > since)
        });
        if new_started {
            continue;
        }
        // The old pod's records after the new one first waited, by UID: read on from that wait
        // up to the name's next static ADD or its next wait of another UID (the next episode of
        // the name: a log of several excerpts, or the same static pod added again), so each
        // wait reads its own episode
        // and not every later one (quadratic in the waits on the bench's repeated cases).
        let mut old: BTreeMap<&str, Vec<&LoggedEvent>> = BTreeMap::new();
        for &j in after_pos(logs.of_name(&name), at) {
            let e = &all[j];
            // The next episode: a static ADD of the name, or a wait of another UID of it (an
            // ADD listing several pods is indexed under its first).
            let next_add = e.event.kind == EventKind::SyncLoop(SyncOp::Add)
                && matches!(
                    e.event.config_source,
                    Some(ConfigSource::File | ConfigSource::Http)
                );
            let next_wait = e.event.kind == EventKind::PodCannotStartYet
                && own_uid_ref(e).is_some_and(|u| u != new_uid);
            if next_add || next_wait {
                break;
            }
            if let Some(u) = own_uid_ref(e)
                && u != new_uid
                && e.time.is_some_and(|t| t >= since)
            {
                old.entry(u).or_default().push(e);
            }
        }
        let Some((old_uid, records)) = old
            .into_iter()
            .max_by_key(|(_, g)| g.iter().filter_map(|e| e.time).max())
        else {
            continue;
        };
        let Some(last) = records.iter().filter_map(|e| e.time).max() else {
            continue;
        };
        // Its records naming only its UID too ("requested for removal but is still not fully
        // terminated").
        let records: Vec<&LoggedEvent> = logs
            .of_uid(old_uid)
            .iter()
            .map(|&j| &all[j])
            .filter(|e| e.time.is_some_and(|t| t >= since))
            .collect();
        let grace = logs
            .of_uid(old_uid)
            .iter()
            .filter_map(|&j| all[j].event.grace_period_secs())
            .max()
            .map_or(SignedDuration::ZERO, |g| {
                SignedDuration::from_secs(g) + SignedDuration::from_secs(30)
            });
        let waited = last.duration_since(since);
        if waited < STATIC_BLOCKED.max(grace) {
            continue;
        }
        let failing = records
            .iter()
            .rev()
            .find(|e| e.event.error.is_some())
            .map(|e| format!("; its sync fails: {}", super::teardown::error_quote(e)));
        let signature = format!(
            "static pod {name} (UID {new_uid}) cannot start while the pod of its previous UID has not \
             terminated (\"Pod cannot start yet\", and the old pod's worker still at work {} later){}",
            human(waited),
            failing.unwrap_or_default()
        );
        let mut group = vec![waits];
        group.extend(records);
        out.push((old_uid.to_string(), group, signature));
    }
    out
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    stuck_pod_workers(input.logs, input.view, out);
}
