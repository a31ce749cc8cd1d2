//! `FindContainerRace`: the NotFound double-removal race during pod deletion.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

// === FindContainerRace ===

pub(super) const RACE_KINDS: [EventKind; 5] = [
    EventKind::DeleteContainerFailed,
    EventKind::ContainerStatusFailed,
    EventKind::RemoveContainerFailed,
    EventKind::GcContainerStatusFailed,
    EventKind::ContainerNotFound,
];

pub(super) fn is_race(e: &LoggedEvent) -> bool {
    RACE_KINDS.contains(&e.event.kind)
        && (e.event.not_found || e.event.kind == EventKind::ContainerNotFound)
}

/// A line of the race family cut before its error says what failed.
pub(super) fn is_cut_race(e: &LoggedEvent) -> bool {
    RACE_KINDS.contains(&e.event.kind)
        && e.event.truncated
        && !e.event.not_found
        && matches!(e.event.cause, None | Some(Cause::Other))
}

/// `pod_container_deletor.go` ("DeleteContainer returned error"), `kuberuntime_container.go`
/// `removeContainer` (which calls `ContainerStatus` first), `kuberuntime_gc.go` ("Failed to
/// remove container", "Error getting ContainerStatus for containerID" for a leftover log
/// symlink) and the runtime ("an error occurred when try to find container", CRI-O's "ID does not
/// exist"): a removed container is looked up again and the runtime answers NotFound. Benign
/// (info), k/k #99901; a warning when the same container keeps coming back for more than 10 min.
///
/// A NotFound line that names no container belongs to the `RemoveContainer` logged just before
/// it; a line cut before its error belongs to the NotFound burst it is logged in. Not a finding:
/// a container the CRI view still lists, "Container not found in pod's containers".
pub(super) fn find_container_race(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let all = logs.all;
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for (i, e) in all.iter().enumerate() {
        let neighbours = || {
            [
                logs.neighbour(i, Side::Before, 1),
                logs.neighbour(i, Side::After, 1),
            ]
            .into_iter()
            .flatten()
        };
        let member =
            is_race(e) || (is_cut_race(e) && neighbours().any(|n| is_race(n) && close(e, n)));
        if !member {
            continue;
        }
        let key = logs.container_key(e).or_else(|| {
            let n = logs.neighbour(i, Side::Before, 1)?;
            (n.event.kind == EventKind::RemoveContainer && close(e, n))
                .then(|| logs.container_key(n))?
        });
        if let Some(key) = key {
            groups.entry(key).or_default().push(e);
        }
    }
    let mut removes_of: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::RemoveContainer]) {
        if let Some(key) = logs.container_key(e).filter(|k| groups.contains_key(k)) {
            removes_of.entry(key).or_default().push(e);
        }
    }
    for (id, group) in groups {
        // A container the runtime still lists is not gone: not this race.
        if view
            .cri
            .as_ref()
            .is_some_and(|cri| cri.containers.iter().any(|c| c.id == id))
        {
            continue;
        }
        let removes = removes_of.remove(&id).unwrap_or_default();
        let lasting = span(&group) > RACE_LASTS;
        let n = plural(records(&group), "record", "records");
        let pod = logs.pod_of(
            view,
            &group,
            None,
            logs.container_pod.get(id.as_str()).copied(),
        );
        let summary = if lasting {
            format!(
                "container {}{} keeps being looked up after it was removed ({n} over {}): something holds a \
                 stale reference to it",
                shown(&id),
                of_pod(pod.as_ref()),
                human(span(&group))
            )
        } else if !group.iter().any(|e| is_race(e)) {
            format!(
                "container {}{} was looked up in a burst of lookups of removed containers ({n}, cut before \
                 the error): most likely the same benign race, nothing to do",
                shown(&id),
                of_pod(pod.as_ref())
            )
        } else if group
            .iter()
            .any(|e| e.event.kind == EventKind::GcContainerStatusFailed)
        {
            format!(
                "the kubelet's GC looked up container {} for a leftover log file after the container was \
                 removed (NotFound, {n}): benign, nothing to do",
                shown(&id)
            )
        } else if removes.len() >= 2
            || group
                .iter()
                .any(|e| e.event.kind == EventKind::DeleteContainerFailed)
        {
            format!(
                "container {}{} was removed twice during pod deletion and the second attempt got NotFound \
                 ({n}): the known benign race, nothing to do",
                shown(&id),
                of_pod(pod.as_ref())
            )
        } else {
            format!(
                "container {}{} was looked up after it was removed (NotFound, {n}): the benign race of the \
                 kubelet's cleanup with the removal, nothing to do",
                shown(&id),
                of_pod(pod.as_ref())
            )
        };
        let mut f = finding(
            FindingKind::FindContainerRace,
            if lasting {
                Severity::Warning
            } else {
                Severity::Info
            },
            summary,
            "pod_container_deletor.go and kuberuntime_container.go removeContainer: a deleted pod's container \
             is removed by the deletor, the pod worker and the GC, and removeContainer asks ContainerStatus \
             first; the later attempts get NotFound (\"an error occurred when try to find container\"), k/k \
             #99901; the GC's log cleanup does the same for leftover log symlinks (k/k #107670)",
            if lasting {
                format!(
                    "journalctl -u kubelet | grep {} to see who keeps asking (a stale /var/log/containers \
                     symlink, a stuck pod worker); restarting the kubelet clears a stuck worker",
                    sh(id.trim_end_matches('…'))
                )
            } else {
                "none: the container is already gone".to_string()
            },
        );
        f.pod = pod;
        f.container_id = Some(id);
        let mut quoted: Vec<&LoggedEvent> = removes;
        quoted.extend(group.iter().copied());
        quoted.sort_by_key(|e| e.time);
        f.evidence = quote(&quoted);
        out.push(f);
    }
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    find_container_race(input.logs, input.view, out);
}
