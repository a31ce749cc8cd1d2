//! `PodStatusFailing`: the kubelet cannot read a pod's container statuses.
//!
//! `kuberuntime_manager.go` `GetPodStatus` lists the pod's sandboxes and containers, then
//! inspects each container (`getPodContainerStatuses`, CRI `ContainerStatus`). When that fails
//! it logs "getPodContainerStatuses for pod failed" (legacy `getPodContainerStatuses for pod
//! "<name>" failed: <err>`) and returns the error: the pod worker's sync stops there, before it
//! kills, starts or cleans up anything, and the next sync meets the same error. Since 1.15 the
//! kubelet logs one error once per pod (`logReduction`), so a single line stands for a failure
//! that may repeat at every sync.
//!
//! With NotFound (`No such container`, `an error occurred when try to find container`, `ID does
//! not exist`), a container the runtime removed between the list and the inspect: benign in the
//! GC and deletion paths (`FindContainerRace`), but in kubelet 1.22 before k/k #107670 it was
//! fatal to `syncTerminatingPod`, so a static pod whose manifest came back never restarted
//! (case 20). The outcome decides, not the message: a finding only when no later record of the
//! same pod shows its worker getting past `GetPodStatus`.
//!
//! Must: a failure with no progress of its pod after it (a line cut before its `pod=` field
//! names no pod, so nothing can show progress: it stands). Must not: a later record of the pod
//! that needs its status read (a container killed or started, a sandbox created, the pod
//! terminated or observed running, a readiness probe passing); a timed-out call
//! (`RuntimeUnhealthy` reports the slow runtime).

use std::collections::BTreeMap;

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

// === PodStatusFailing ===

/// Records of a pod that its worker writes only after `GetPodStatus` returned.
const PROGRESS: &[EventKind] = &[
    EventKind::KillingContainer,
    EventKind::PodTerminated,
    EventKind::PodSandboxCreated,
    EventKind::RunPodSandboxDone,
    EventKind::ContainerStartedLogged,
    EventKind::PodStartupObserved,
    EventKind::ReadinessProbeReady,
    EventKind::RemoveAllHistory,
];

/// Whether an error says the container is gone (NotFound in any runtime's words).
fn not_found(err: &str) -> bool {
    let e = err.to_ascii_lowercase();
    [
        "no such container",
        "notfound",
        "not found",
        "does not exist",
    ]
    .iter()
    .any(|w| e.contains(w))
}

/// Whether an error is the kubelet's CRI client rejecting the runtime's answer
/// (`verifyContainerStatus` in `remote_runtime.go`: `status.Image is not set`, `status.ImageRef is
/// not set`, `status.CreatedAt is not set`, `status.Metadata is not set`, `status.Id is not set`,
/// `metadata.Name is not in metadata …`): the runtime answered, without a field the kubelet
/// requires.
pub(super) fn malformed_answer(err: &str) -> bool {
    (err.contains("status.") && err.contains(" is not set")) || err.contains("is not in metadata")
}

/// What names a failure's pod: `ns/name` from `pod=`, else its UID, else `None` (a cut line).
fn pod_key(e: &LoggedEvent) -> Option<String> {
    pod_name_key(e).or_else(|| own_uid(e))
}

/// Whether a record of the pod after position `i` shows its worker past `GetPodStatus`.
fn progressed(logs: &Logs<'_>, key: &str, i: usize) -> bool {
    let at = if key.contains('/') {
        logs.of_name(key)
    } else {
        logs.of_uid(key)
    };
    after_pos(at, i)
        .iter()
        .any(|&j| PROGRESS.contains(&logs.all[j].event.kind))
}

/// The rule: one finding per pod (or per container, when the line names no pod), warning.
pub(super) fn pod_status_failing(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    // (pod key or "container <id>") → the positions of its failures, in reading order.
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for &i in logs
        .by_kind
        .get(&EventKind::PodContainerStatusesFailed)
        .map_or(&[][..], Vec::as_slice)
    {
        let e = &logs.all[i];
        if e.event.cause == Some(Cause::Timeout) {
            continue;
        }
        let key = pod_key(e)
            .or_else(|| logs.container_key(e).map(|c| format!("container {c}")))
            .unwrap_or_default();
        groups.entry(key).or_default().push(i);
    }
    for (key, at) in groups {
        let last = *at.last().expect("a group has a failure");
        if !key.is_empty() && !key.starts_with("container ") && progressed(logs, &key, last) {
            continue;
        }
        let group: Vec<&LoggedEvent> = at.iter().map(|&i| &logs.all[i]).collect();
        let err = group
            .iter()
            .rev()
            .find_map(|e| e.event.error.as_deref())
            .unwrap_or(&group[group.len() - 1].text);
        let gone = not_found(err);
        let malformed = !gone && malformed_answer(err);
        // The CRI client's own line names the container whose answer it rejected.
        // The CRI client's own line of the same error names the container (`verify
        // ContainerStatus failed`, `ContainerStatus from runtime service failed`).
        let rejected = (!gone)
            .then(|| rejected_answer(logs, err, &group))
            .flatten();
        let container = group
            .iter()
            .find_map(|e| logs.container_key(e))
            .or_else(|| rejected.and_then(|e| logs.container_key(e)));
        let pod = logs.pod_of(view, &group, None, None);
        let whose = match of_pod(pod.as_ref()) {
            p if p.is_empty() => {
                " of a pod the line does not name (cut before its pod= field)".to_string()
            }
            p => p,
        };
        let what = match (&container, gone) {
            (Some(c), true) => {
                format!("container {} is gone from the runtime (NotFound)", shown(c))
            }
            (None, true) => "a container is gone from the runtime (NotFound)".to_string(),
            (_, false) if malformed => format!(
                "the runtime's ContainerStatus answer{} lacks a field the kubelet requires ({err}): \
                 a runtime bug, the kubelet rejects every answer for it",
                container
                    .as_deref()
                    .map_or(String::new(), |c| format!(" for container {}", shown(c)))
            ),
            (_, false) => format!(
                "the runtime returned an error{} ({})",
                container
                    .as_deref()
                    .map_or(String::new(), |c| format!(" for container {}", shown(c))),
                err.chars().take(200).collect::<String>()
            ),
        };
        let mut summary = format!(
            "the kubelet cannot read the container statuses{whose}: {what} ({}{}); GetPodStatus fails, \
             so the pod worker stops before it kills, restarts or cleans up the pod, and no later \
             record shows the pod getting past it (the kubelet logs one error once, so one line may \
             stand for every sync since)",
            plural(records(&group), "record", "records"),
            over(&group)
        );
        if gone {
            summary.push_str(
                "; a NotFound here is what kubelet 1.22 before k/k #107670 never got past: a static \
                 pod re-added with its manifest is not restarted",
            );
        }
        let fix = if malformed {
            format!(
                "the runtime's answer is at fault, not the kubelet: crictl inspect {} shows the fields \
                 it returns; upgrade the runtime (its release notes for ContainerStatus) or restart it, \
                 and recreate the container if its stored state lacks the field",
                container.as_deref().map_or("<id>", shown)
            )
        } else if !gone {
            format!(
                "the runtime's error is the cause: crictl inspect {} and the runtime's log (journalctl \
                 -u containerd, -u crio or -u docker) for it; systemctl restart kubelet once it is fixed \
                 (the kubelet reads the pod's containers afresh)",
                container.as_deref().map_or("<id>", shown)
            )
        } else {
            format!(
                "systemctl restart kubelet (it reads the pod's containers afresh); {}then check that \
                 the pod runs again (crictl pods --name <pod>); if it recurs, upgrade the kubelet to a \
                 release with k/k #107670 (a later 1.22 patch release or newer)",
                container.as_deref().map_or(String::new(), |c| format!(
                    "crictl inspect {} should say the container is gone; ",
                    shown(c)
                ))
            )
        };
        let mut f = finding(
            FindingKind::PodStatusFailing,
            Severity::Warning,
            summary,
            "kuberuntime_manager.go GetPodStatus (getPodContainerStatuses): a ContainerStatus error \
             fails the pod's status, and the pod worker's sync returns before it acts; k/k #107670 \
             made NotFound tolerated there; remote_runtime.go verifyContainerStatus rejects an answer \
             missing a required field",
            fix,
        );
        f.container_id = container;
        f.pod = pod;
        f.evidence = quote(&group);
        f.evidence.extend(rejected.map(line));
        out.push(f);
    }
}

/// The kubelet's CRI client's record of rejecting a `ContainerStatus` answer with `err` (`verify
/// ContainerStatus failed` containerID=…, naming the container), logged at most [`ONE_ATTEMPT`]
/// before the last of `group`.
fn rejected_answer<'l>(
    logs: &Logs<'l>,
    err: &str,
    group: &[&LoggedEvent],
) -> Option<&'l LoggedEvent> {
    let last = group.last()?.time?;
    logs.of(&[EventKind::ContainerStatusFailed])
        .filter(|e| {
            e.event.error.as_deref() == Some(err)
                && e.time
                    .is_some_and(|t| t <= last && last.duration_since(t) < ONE_ATTEMPT)
        })
        .filter(|e| logs.container_key(e).is_some())
        .last()
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    pod_status_failing(input.logs, input.view, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_in_every_runtime_s_words() {
        for (err, want) in [
            (
                "Error: No such container: 740ab753973f7ad32c5ef2c9778fb061469fc1a664710988569a46deb7eea66e",
                true,
            ),
            (
                "rpc error: code = NotFound desc = an error occurred when try to find container \"x\": not found",
                true,
            ),
            (
                "rpc error: code = NotFound desc = could not find container \"x\": ID does not exist",
                true,
            ),
            ("rpc error: code = Unknown desc = permission denied", false),
        ] {
            assert_eq!(not_found(err), want, "{err}");
        }
    }
}
