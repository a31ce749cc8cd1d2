//! `ContainerStopFailing`: a container the runtime fails to stop or kill.

use super::logs::*;
#[allow(unused_imports)]
use super::*;
#[allow(unused_imports)]
use std::collections::HashMap;

// === ContainerStopFailing ===

/// Why a container does not stop, from the error text of its failed stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum StopCause {
    /// The process is a zombie (exited, its parent never reaped it).
    Zombie,
    /// The runtime's shim is gone (`ttrpc: closed`, shim disconnected): nobody can signal it.
    ShimGone,
    /// The kill itself failed (`failed to kill`).
    KillFailed,
    /// SIGKILL was sent and the task did not exit in time (`an error occurs during waiting for
    /// container … to be killed`, DeadlineExceeded): usually a process in D state on a hung
    /// mount.
    Timeout,
    /// The runtime refuses the stop signal (`only SIGKILL is supported: invalid argument`, a
    /// WebAssembly shim such as containerd-shim-spin), so every StopContainer fails before it
    /// kills.
    SigtermRefused,
    /// The kubelet's call timed out before the grace period its kill gave ran out
    /// (dockertools' `termination failed after 2m0s` of a kill `with 600 second grace
    /// period`): the runtime was still waiting, after SIGTERM, for the process to exit, and
    /// SIGKILL had not been sent. Set by [`container_stop_failing`] from the kill's record.
    GaveUpBeforeGrace,
    /// Anything else.
    Other,
}

impl StopCause {
    fn of(text: &str) -> StopCause {
        let t = text.to_ascii_lowercase();
        if t.contains("zombie") {
            StopCause::Zombie
        } else if t.contains("ttrpc: closed")
            || t.contains("shim disconnected")
            || t.contains("shim: not found")
            || t.contains("connection refused: unknown")
        {
            StopCause::ShimGone
        } else if t.contains("failed to kill")
            || t.contains("kill container")
            || (t.contains("killing container") && t.contains(" failed: "))
        {
            StopCause::KillFailed
        } else if t.contains("only sigkill is supported") {
            StopCause::SigtermRefused
        } else if t.contains("uninterruptible sleep")
            || t.contains("with stop signal timed out")
            || t.contains("deadlineexceeded")
            || t.contains("deadline exceeded")
            || t.contains("to be killed")
            // dockerd's `failed to exit within 10 seconds of kill - trying direct SIGKILL`
            || t.contains("of kill - trying direct sigkill")
            || t.contains("timed out")
            || t.contains("timeout")
        {
            StopCause::Timeout
        } else {
            StopCause::Other
        }
    }

    fn says(self) -> &'static str {
        match self {
            StopCause::Zombie => "its process is a zombie",
            StopCause::ShimGone => "the runtime's shim is gone",
            StopCause::KillFailed => "the kill failed",
            StopCause::Timeout => "SIGKILL was sent and the process did not exit in time",
            StopCause::SigtermRefused => {
                "the runtime's shim refuses the stop signal (only SIGKILL is supported)"
            }
            StopCause::GaveUpBeforeGrace => {
                "the kubelet's call timed out before the grace period ran out (SIGTERM sent, \
                 SIGKILL not yet)"
            }
            StopCause::Other => "the runtime returned an error",
        }
    }

    fn fix(self, short_id: &str) -> String {
        let common = format!(
            "crictl inspect {short_id} | grep -m1 '\"pid\"' for the PID, then cat /proc/<pid>/status \
             (State: D is a process stuck in the kernel) and /proc/<pid>/stack"
        );
        match self {
            StopCause::Zombie => format!(
                "{common}; a zombie is reaped by its parent: restart the container's shim \
                 (systemctl restart containerd restarts no running shim) or the node"
            ),
            StopCause::ShimGone => format!(
                "{common}; with the shim gone, kill the process by PID and restart the runtime \
                 (systemctl restart containerd) so it reloads the task"
            ),
            StopCause::SigtermRefused => format!(
                "the container's runtime handler (its RuntimeClass's shim) accepts only SIGKILL: \
                 set the image's STOPSIGNAL to SIGKILL (or, from 1.33, the container's lifecycle.stopSignal), \
                 or upgrade the shim; crictl stop -t 0 {short_id} kills it now"
            ),
            StopCause::GaveUpBeforeGrace => format!(
                "the container may yet stop within its grace period (crictl ps -a | grep \
                 {short_id}); the pod worker kills it again at its next sync. A grace period \
                 longer than the kubelet's runtime request timeout (--runtime-request-timeout, \
                 2m) makes every slow stop fail so: shorten the pod's \
                 terminationGracePeriodSeconds, or make the process exit on SIGTERM"
            ),
            StopCause::KillFailed | StopCause::Timeout | StopCause::Other => format!(
                "{common}; a D-state process waits on a hung NFS/FUSE/CSI mount (grep the pod \
                 UID in /proc/mounts): fix or force-unmount the mount; if nothing helps, reboot \
                 the node"
            ),
        }
    }
}

/// A pod worker's `Error syncing pod` whose kill failed on a container it names by ID
/// (`failed to "KillContainer" for "<name>" with KillContainerError: "… container \"<id>\" …"`,
/// the only record of the failure when the runtime's own line is not in the log).
fn kill_container_error(e: &LoggedEvent) -> bool {
    e.text.contains("KillContainerError") && e.event.ids.container_id.is_some()
}

/// `kuberuntime_container.go` `killContainer` calls CRI `StopContainer` with the grace period;
/// the runtime sends SIGTERM, then SIGKILL, and waits for the task to exit. When it fails
/// ("StopContainer from runtime service failed", containerd's `StopContainer for "<id>" failed`),
/// the pod worker retries at every sync and the pod stays Terminating. One finding per
/// container, warning, with the attempts and the cause (zombie, shim gone, kill failed,
/// timeout). A container the CRI view lists as exited is not a finding: it did stop.
///
/// CRI-O's own stop loop counts too: `Killing container <id> failed`, `Detected process (…)
/// blocked in uninterruptible sleep … for container <id>`, and its `Stopping container <id>
/// with stop signal timed out` warning when it repeats ([`KILL_LOOP_RECORDS`] times or more):
/// once is only the grace period running out before SIGKILL.
pub(super) fn container_stop_failing(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs
        .of(&[
            EventKind::StopContainerFailed,
            EventKind::StopSignalTimedOut,
            EventKind::ErrorSyncingPod,
        ])
        .filter(|e| e.event.kind != EventKind::ErrorSyncingPod || kill_container_error(e))
    {
        // A stop or kill answered NotFound (`an error occurred when try to find container`,
        // `no such container`) found the container already gone: the deletion race, not a
        // container that will not stop (FindContainerRace's).
        if super::teardown::answered_gone(e) {
            continue;
        }
        if let Some(key) = logs.container_key(e) {
            groups.entry(key).or_default().push(e);
        }
    }
    groups.retain(|_, g| {
        g.iter().any(|e| {
            e.event.kind == EventKind::StopContainerFailed
                || e.event.kind == EventKind::ErrorSyncingPod
        }) || records(g) >= KILL_LOOP_RECORDS
    });
    // The kubelet's kills by container, with their grace periods, once for every group.
    let mut kills: HashMap<String, Vec<(Timestamp, i64)>> = HashMap::new();
    for k in logs.of(&[EventKind::KillingContainer]) {
        if let (Some(key), Some(t), Some(grace)) =
            (logs.container_key(k), k.time, k.event.grace_period_secs())
        {
            kills.entry(key).or_default().push((t, grace));
        }
    }
    for (id, group) in groups {
        if exited(view, &id) {
            continue;
        }
        let cause = group
            .iter()
            .map(|e| StopCause::of(e.event.error.as_deref().unwrap_or(&e.text)))
            .min()
            .unwrap_or(StopCause::Other);
        let early = (cause == StopCause::Timeout)
            .then(|| failed_within_grace(kills.get(&id).map_or(&[][..], Vec::as_slice), &group))
            .flatten();
        let cause = if early.is_some() {
            StopCause::GaveUpBeforeGrace
        } else {
            cause
        };
        let shown = shown(&id).to_string();
        let pod = logs.pod_of(view, &group, None, None);
        // The kubelet killing it again a minute or more after its stop first failed: it still
        // runs (deckhouse/deckhouse#336: 86 minutes after dockerd's SIGKILL was not obeyed).
        let first = group.iter().filter_map(|e| e.time).min();
        let again = first.and_then(|first| {
            let last = kills
                .get(&id)?
                .iter()
                .map(|&(t, _)| t)
                .filter(|&t| t > first)
                .max()?;
            let d = last.duration_since(first);
            (d >= KILLED_AGAIN).then_some((last, d))
        });
        let mut f = finding(
            FindingKind::ContainerStopFailing,
            Severity::Warning,
            format!(
                "the runtime fails to stop container {shown}{}: {}{} ({}, {}{})",
                of_pod(pod.as_ref()),
                cause.says(),
                early.map_or(String::new(), |(waited, grace)| format!(
                    ": it failed {} after a kill with a {} s grace period",
                    human(waited),
                    grace.as_secs()
                )),
                plural(attempts(&group).max(1), "attempt", "attempts"),
                plural(records(&group), "record", "records"),
                over(&group),
            ) + &again.map_or(String::new(), |(_, d)| {
                format!("; the kubelet still kills it {} later", human(d))
            }),
            "kuberuntime_container.go killContainer and CRI StopContainer: the runtime sends SIGTERM, \
             SIGKILL after the grace period, and waits for the task to exit; while it fails the pod \
             worker retries every sync and the pod stays Terminating",
            cause.fix(&shown),
        );
        f.container_id = Some(id.clone());
        f.pod = pod;
        f.evidence = quote(&group);
        if let Some((at, d)) = again {
            f.evidence.push(Evidence::new(
                EvidenceSource::KubeletLog,
                format!(
                    "the kubelet kills the container again at {at}, {} after its stop first failed",
                    human(d)
                ),
            ));
        }
        out.push(f);
    }
}

/// How long after a container's stop first failed a kill by the kubelet says it still runs
/// (the pod worker retries a failed kill at its next sync, seconds later).
const KILLED_AGAIN: SignedDuration = SignedDuration::from_mins(1);

/// When the first failure of `group` came before the grace period of the kill before it ran
/// out: (the time from that kill, its grace period). `kills`: the container's kills by the
/// kubelet, `Killing container … with <n> second grace period` (`gracePeriod=<n>`), as (time,
/// grace period in seconds).
fn failed_within_grace(
    kills: &[(Timestamp, i64)],
    group: &[&LoggedEvent],
) -> Option<(SignedDuration, SignedDuration)> {
    let failed = group
        .iter()
        .filter(|e| e.event.kind == EventKind::StopContainerFailed)
        .filter_map(|e| e.time)
        .min()?;
    let (killed, grace) = kills
        .iter()
        .copied()
        .filter(|(t, _)| *t <= failed)
        .max_by_key(|(t, _)| *t)?;
    let (waited, grace) = (
        failed.duration_since(killed),
        SignedDuration::from_secs(grace),
    );
    (waited < grace).then_some((waited, grace))
}

/// Whether the CRI view lists container `id` as not running: it did stop.
fn exited(view: &NodeView, id: &str) -> bool {
    view.cri.as_ref().is_some_and(|c| {
        c.containers
            .iter()
            .any(|k| k.id == id && k.state != ContainerState::Running)
    })
}

/// How many of CRI-O's `… with stop signal timed out` warnings for one container make a kill
/// that does not end (its stop loop retries SIGKILL with a backoff from 20 ms).
const KILL_LOOP_RECORDS: usize = 3;

pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let before = out.len();
    container_stop_failing(input.logs, input.view, out);
    unanswered_stops(input.logs, input.view, before, out);
    name_stuck_pods_containers(out, before);
}

/// How long after a `StopContainer` request a second one shows the first did not complete,
/// when its line gives no timeout: the kubelet's default grace period.
const STOP_GRACE: SignedDuration = SignedDuration::from_secs(30);

/// The grace period a `StopContainer` request gives (`(timeout: 30s)`, `with timeout 30 (s)`).
fn stop_timeout(e: &LoggedEvent) -> Option<SignedDuration> {
    let t = &*e.text;
    let digits = t
        .split_once("(timeout: ")
        .or_else(|| t.split_once("with timeout "))?
        .1;
    let n: i64 = digits
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    Some(SignedDuration::from_secs(n))
}

/// A stop the runtime was asked for again and never answered: CRI-O logs `Stopping container:
/// <id> (timeout: <n>s)` when asked and `Stopped container <id>: …` when done, and nothing at
/// all when a stop does not end (its stop loop waits, the kubelet's call times out and its pod
/// worker asks again). Two requests of one container, the second past the first's grace period,
/// with no `Stopped container` for it after the first and no failure another rule reports
/// (`out[from..]`): a `ContainerStopFailing`. A warning when the log holds `Stopped container`
/// lines of other containers (the runtime's whole log); else an info, since a log cut down to
/// the requests (`grep Stopping`) cannot show the answer. A container already gone is answered
/// with neither an error nor a `Stopped` line, but the kubelet asks again only for a container
/// the runtime still lists.
fn unanswered_stops(logs: &Logs<'_>, view: &NodeView, from: usize, out: &mut Vec<Finding>) {
    let starts: Vec<&LoggedEvent> = logs.of(&[EventKind::StopContainerStarted]).collect();
    if starts.len() < 2 {
        return;
    }
    let mut done: HashMap<String, Vec<Timestamp>> = HashMap::new();
    for e in logs.of(&[EventKind::StopContainerDone]) {
        if let (Some(k), Some(t)) = (logs.container_key(e), e.time) {
            done.entry(k).or_default().push(t);
        }
    }
    let whole_log = !done.is_empty();
    let reported: HashSet<&str> = out[from..]
        .iter()
        .filter_map(|f| f.container_id.as_deref())
        .collect();
    let mut by_id: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in starts {
        if let Some(k) = logs.container_key(e)
            && !reported.contains(k.as_str())
        {
            by_id.entry(k).or_default().push(e);
        }
    }
    for (id, mut group) in by_id {
        group.sort_by_key(|e| e.time);
        // The repeats folded into a kept record count, with their times.
        let Some((first, last)) = time_range(&group) else {
            continue;
        };
        let grace = stop_timeout(group[0]).unwrap_or(STOP_GRACE);
        // A second request at the grace period's end may be the kubelet's own timing: past it.
        if records(&group) < 2 || last.duration_since(first) <= grace {
            continue;
        }
        if done
            .get(&id)
            .is_some_and(|ts| ts.iter().any(|t| *t >= first))
        {
            continue;
        }
        if exited(view, &id) {
            continue;
        }
        let shown = shown(&id).to_string();
        let pod = logs.pod_of(view, &group, None, None);
        let mut f = finding(
            FindingKind::ContainerStopFailing,
            if whole_log {
                Severity::Warning
            } else {
                Severity::Info
            },
            format!(
                "the runtime was asked to stop container {shown}{} {} (each with a {} grace period){} \
                 and never logged it stopped{}",
                of_pod(pod.as_ref()),
                plural(records(&group), "time", "times"),
                human(grace),
                over(&group),
                if whole_log {
                    ": a stop that does not end (the kubelet's call times out and its pod worker asks \
                     again), the process likely stuck in the kernel"
                        .to_string()
                } else {
                    ": a stop that does not end, or a log holding only the requests (it has no \
                     `Stopped container` line at all)"
                        .to_string()
                }
            ),
            "CRI StopContainer (CRI-O server/container_stop.go, containerd's CRI plugin): the runtime \
             logs the request and, once the task exited, that it stopped; the kubelet's \
             killContainer asks again at every sync while the stop does not end",
            StopCause::Timeout.fix(&shown),
        );
        f.container_id = Some(id);
        f.pod = pod;
        f.evidence = quote(&group);
        out.push(f);
    }
}

/// A `StuckTerminatingPod` (found by an earlier rule) names the containers behind it: the
/// `ContainerStopFailing` findings from `out[from..]` of the same pod (by UID, else by name).
fn name_stuck_pods_containers(out: &mut [Finding], from: usize) {
    let stops: Vec<(PodRef, String)> = out[from..]
        .iter()
        .filter_map(|f| {
            Some((
                f.pod.clone()?,
                shown(f.container_id.as_deref()?).to_string(),
            ))
        })
        .collect();
    // The stops by UID and by namespace/name, found once: a pod is the same by either (a
    // lookup per stuck pod, not a scan of every stop: both grow with the pods a log names).
    let mut by_uid: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_name: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (k, (p, _)) in stops.iter().enumerate() {
        if !p.uid.is_empty() {
            by_uid.entry(p.uid.as_str()).or_default().push(k);
        }
        if !p.name.is_empty() {
            by_name
                .entry((p.namespace.as_str(), p.name.as_str()))
                .or_default()
                .push(k);
        }
    }
    for f in out[..from]
        .iter_mut()
        .filter(|f| f.kind == FindingKind::StuckTerminatingPod)
    {
        let Some(pod) = &f.pod else { continue };
        // By name only where one side has no UID: a pod of the same name under another UID (a
        // StatefulSet's pod recreated, a static pod re-added) is another pod.
        let mut found: Vec<usize> = by_uid
            .get(pod.uid.as_str())
            .into_iter()
            .flatten()
            .copied()
            .chain(
                by_name
                    .get(&(pod.namespace.as_str(), pod.name.as_str()))
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|&k| pod.uid.is_empty() || stops[k].0.uid.is_empty()),
            )
            .collect();
        found.sort_unstable();
        found.dedup();
        let ids: Vec<&str> = found.iter().map(|&k| stops[k].1.as_str()).collect();
        if !ids.is_empty() {
            f.summary.push_str(&format!(
                "; the runtime cannot stop its {} {} (ContainerStopFailing)",
                if ids.len() == 1 {
                    "container"
                } else {
                    "containers"
                },
                listed(&ids)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pod shop/cart-0 and a `StuckTerminatingPod` of it.
    fn cart_0_stuck() -> (PodRef, Finding) {
        let pod = PodRef {
            namespace: "shop".into(),
            name: "cart-0".into(),
            uid: "3f2a1b0c-0000-4000-8000-000000000001".into(),
        };
        let mut stuck = finding(
            FindingKind::StuckTerminatingPod,
            Severity::Warning,
            "the kubelet cannot kill pod shop/cart-0".into(),
            "",
            String::new(),
        );
        stuck.pod = Some(pod.clone());
        (pod, stuck)
    }

    #[test]
    fn a_stuck_pod_names_the_containers_that_do_not_stop() {
        let (pod, stuck) = cart_0_stuck();
        let mut other = stuck.clone();
        other.pod = Some(PodRef {
            uid: "3f2a1b0c-0000-4000-8000-000000000002".into(),
            name: "cart-1".into(),
            ..pod.clone()
        });
        let mut stop = finding(
            FindingKind::ContainerStopFailing,
            Severity::Warning,
            String::new(),
            "",
            String::new(),
        );
        stop.pod = Some(pod);
        stop.container_id =
            Some("a96e7dc6ce5cae0af965d63a71238f78932e00520f8103fc24850db7a7b94bb8".into());
        let mut out = vec![stuck, other, stop];
        name_stuck_pods_containers(&mut out, 2);
        assert_eq!(
            out[0].summary,
            "the kubelet cannot kill pod shop/cart-0; the runtime cannot stop its container a96e7dc6ce5ca (ContainerStopFailing)"
        );
        assert_eq!(out[1].summary, "the kubelet cannot kill pod shop/cart-0");
    }

    /// A StatefulSet's pod recreated under a new UID keeps its name: the stuck pod is named the
    /// containers of its own UID, and of a stop that names the pod without a UID, never the
    /// containers of the pod's other UIDs; many are listed five and a count.
    #[test]
    fn a_stuck_pod_is_not_named_the_containers_of_its_name_under_another_uid() {
        let (pod, stuck) = cart_0_stuck();
        let stop = |uid: &str, id: String| {
            let mut f = finding(
                FindingKind::ContainerStopFailing,
                Severity::Warning,
                String::new(),
                "",
                String::new(),
            );
            f.pod = Some(PodRef {
                uid: uid.into(),
                ..pod.clone()
            });
            f.container_id = Some(id);
            f
        };
        let mut out = vec![stuck];
        for n in 0..3 {
            // The same name under other UIDs.
            out.push(stop(
                &format!("3f2a1b0c-0000-4000-8000-00000000010{n}"),
                format!("b{n}{}", "0".repeat(63)),
            ));
        }
        for n in 0..7 {
            out.push(stop(&pod.uid, format!("c{n}{}", "0".repeat(63))));
        }
        out.push(stop("", format!("d{}", "0".repeat(63))));
        name_stuck_pods_containers(&mut out, 1);
        assert_eq!(
            out[0].summary,
            "the kubelet cannot kill pod shop/cart-0; the runtime cannot stop its containers \
             c000000000000, c100000000000, c200000000000, c300000000000, c400000000000 and \
             3 more (ContainerStopFailing)"
        );
    }

    #[test]
    fn causes() {
        for (text, want) in [
            (
                "rpc error: code = DeadlineExceeded desc = an error occurs during waiting for container \"a96e\" to be killed: wait container \"a96e\": context deadline exceeded",
                StopCause::Timeout,
            ),
            (
                "failed to kill container \"a96e\": unknown error after kill: runc did not terminate successfully",
                StopCause::KillFailed,
            ),
            ("ttrpc: closed: unknown", StopCause::ShimGone),
            ("process is a zombie", StopCause::Zombie),
            ("permission denied", StopCause::Other),
        ] {
            assert_eq!(StopCause::of(text), want, "{text}");
        }
    }
}
