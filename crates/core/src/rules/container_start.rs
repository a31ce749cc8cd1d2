//! `ContainerStartFailing`: the runtime fails to create or start a pod's container.
//!
//! The pod worker's sync creates and starts each container through CRI (`CreateContainer`,
//! `StartContainer`, `kuberuntime_container.go` `startContainer`); when one fails, the sync
//! fails with the container's reason and logs `"Error syncing pod, skipping" err="failed to
//! \"StartContainer\" for \"<c>\" with RunContainerError: \"…\""` (`CreateContainerError`,
//! `CreateContainerConfigError`, `PreStartHookError`, `PostStartHookError`; legacy `Error
//! syncing pod <uid> (…), skipping: failed to "StartContainer" for "<c>" with …`), and tries
//! again at the pod's next sync. The error says whose fault it is: the pod spec's (a Secret or
//! ConfigMap not found: `CreateContainerConfigError`), the image's (`executable file not found
//! in $PATH`, `exec format error`), or the node's (the OCI runtime, cgroups, the disk, the
//! shim). A create call that times out or finds its name reserved is `RuntimeUnhealthy`'s.

use std::collections::BTreeMap;

use crate::finding::{Finding, FindingKind, Severity};
use crate::logs::EventKind;
use crate::model::PodRef;

use super::logs::{
    LogInput, LoggedEvent, attempts, finding, over, plural, pod_list, quote, records,
};
use super::sandbox_create::pod_key;

/// Whose fault a container's failure to start is, from its reason and error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Whose {
    /// The node's: the OCI runtime or its shim, cgroups, the disk, memory, file descriptors,
    /// mounts (`no space left on device`, `failed to create shim task`, `cgroup`, …).
    Node,
    /// The pod spec's: a Secret, ConfigMap or key it names is missing, or its security context
    /// cannot hold (`CreateContainerConfigError`).
    Spec,
    /// The image's or the container command's: `executable file not found in $PATH`, `exec
    /// format error` (an image of another architecture), a lifecycle hook failing.
    Workload,
    /// The error says no more.
    Other,
}

/// The words of an error that make it the node's.
const NODE_CAUSES: &[&str] = &[
    "no space left on device",
    "read-only file system",
    "too many open files",
    "cannot allocate memory",
    "resource temporarily unavailable",
    "cgroup",
    "shim",
    "ttrpc",
    "runc: not found",
    "unable to find runtime",
    "error mounting",
    "failed to mount",
    "device or resource busy",
    "input/output error",
    "operation not permitted",
    // docker 1.11-1.13's prefix of runc's failure (containerd 0.2), an executable not found
    // told apart first (`exec: "…": executable file not found`).
    "oci runtime error",
];

/// The container, the reason and the error of a pod worker's `failed to "StartContainer" for
/// "<c>" with <Reason>: "<error>"`, read from the record's error (its `err` field unescaped
/// once, or a legacy line's text after `skipping: `): `None` for another sync error.
fn start_failure(e: &LoggedEvent) -> Option<(&str, &str, &str)> {
    let t = e.event.error.as_deref().unwrap_or(&e.text);
    let at = t.find("StartContainer")? + "StartContainer".len();
    let rest = &t[at..];
    let rest = &rest[rest.find(" for ")? + " for ".len()..];
    let name_at = rest.find(|c: char| c != '\\' && c != '"')?;
    let rest = &rest[name_at..];
    let name_end = rest.find(['\\', '"'])?;
    let container = &rest[..name_end];
    let rest = &rest[name_end..];
    let with = rest.find(" with ")? + " with ".len();
    let rest = &rest[with..];
    let reason_end = rest.find(':')?;
    let reason = &rest[..reason_end];
    let error = rest[reason_end + 1..].trim_start_matches([' ', '\\', '"']);
    [
        "RunContainerError",
        "CreateContainerError",
        "CreateContainerConfigError",
        "PreStartHookError",
        "PostStartHookError",
    ]
    .contains(&reason)
    .then_some((container, reason, error))
}

/// Whether the error is a call that outlived its timeout or found its name reserved:
/// `RuntimeUnhealthy`'s (the runtime too slow to create containers).
fn too_slow(error: &str) -> bool {
    [
        "context deadline exceeded",
        "DeadlineExceeded",
        "operation timeout",
        "failed to reserve container name",
        "error reserving ctr name",
    ]
    .iter()
    .any(|p| error.contains(p))
}

fn whose(reason: &str, error: &str) -> Whose {
    if reason == "CreateContainerConfigError" {
        return Whose::Spec;
    }
    if reason.ends_with("HookError")
        || error.contains("executable file not found")
        || error.contains("exec format error")
        // dockerd 1.11-1.12's word for an executable not found.
        || (error.contains("Container command") && error.contains("not found or does not exist"))
        || (error.contains("exec: ") && error.contains("no such file or directory"))
        || (error.contains("exec: ") && error.contains("permission denied"))
    {
        return Whose::Workload;
    }
    if NODE_CAUSES.iter().any(|p| error.contains(p)) {
        return Whose::Node;
    }
    Whose::Other
}

/// The error quoted: up to the quote that closes it (the pod worker quotes the reason's
/// message) or 200 characters, its nested quotes' escapes dropped.
fn quoted(error: &str) -> String {
    let error = match error.rfind('"') {
        Some(end) => &error[..end],
        None => error,
    };
    let plain: String = error.replace("\\\\\\\"", "\"").replace("\\\"", "\"");
    let plain = plain.trim_end_matches(['"', '\\', ' ', '\n']);
    let mut out: String = plain.chars().take(200).collect();
    if plain.chars().count() > 200 {
        out.push('…');
    }
    out
}

/// A pod whose container does not start.
struct Failing<'l> {
    pod: Option<PodRef>,
    container: String,
    reason: String,
    error: String,
    whose: Whose,
    records: Vec<&'l LoggedEvent>,
}

/// `kuberuntime_container.go` `startContainer` through the pod worker's sync: the pod worker's
/// `failed to "StartContainer" for "<c>" with <Reason>` records, by pod and container, with no
/// container of the pod started after the last (PLEG `ContainerStarted`). The node's causes
/// ([`NODE_CAUSES`]) are a warning once a pod failed twice or two pods failed (one finding for
/// them all: the node cannot start containers), an info for one failure; the pod spec's and
/// the image's are an info (one finding for them all: the workloads' own). Timeouts and names
/// reserved are left to `RuntimeUnhealthy`.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let logs = input.logs;
    let mut by_pod: BTreeMap<(String, String), Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::ErrorSyncingPod]) {
        let Some((container, _, error)) = start_failure(e) else {
            continue;
        };
        if too_slow(error) {
            continue;
        }
        if let Some(k) = pod_key(logs, e) {
            by_pod
                .entry((k, container.to_string()))
                .or_default()
                .push(e);
        }
    }
    let runtime_only = by_pod.is_empty();
    let mut failing: Vec<Failing<'_>> = Vec::new();
    for ((key, container), mut group) in by_pod {
        group.sort_by_key(|e| e.time);
        let Some(&last) = group.last() else {
            continue;
        };
        let Some((_, reason, error)) = start_failure(last) else {
            continue;
        };
        let pod = logs
            .pod_of(
                input.view,
                &group,
                None,
                Some(key.as_str()).filter(|k| crate::logs::ids::is_pod_uid(k)),
            )
            .filter(|p| !p.name.is_empty() || !p.uid.is_empty());
        if super::logs::started_after(logs, pod.as_ref(), last) {
            continue;
        }
        failing.push(Failing {
            pod,
            container,
            reason: reason.to_string(),
            error: quoted(error),
            whose: whose(reason, error),
            records: group,
        });
    }
    // The runtime's own word, only when the kubelet's says nothing of a container failing to
    // start (a runtime log given alone): the same failures, without the pod.
    if runtime_only {
        failing = runtime_failures(input);
    }
    let (node, others): (Vec<Failing<'_>>, Vec<Failing<'_>>) =
        failing.into_iter().partition(|f| f.whose == Whose::Node);
    if !node.is_empty() {
        let mut f = node_finding(&node);
        // The runtime's word alone cannot tell a container retried under a new ID and started
        // (the kubelet creates a new container for each attempt) from one that never did: an
        // info, however many failed.
        if runtime_only && f.severity > Severity::Info {
            f.severity = Severity::Info;
            f.summary.push_str(
                " (the runtime's log alone: whether the kubelet's next attempts, new containers, \
                 started is not in it; its log tells)",
            );
        }
        out.push(f);
    }
    if !others.is_empty() {
        out.push(workload_finding(&others));
    }
}

/// The runtime's `RuntimeStartContainerFailed` records (containerd's `StartContainer for "<id>"
/// failed`, dockerd's `Handler for POST /containers/<id>/start returned error`), by container
/// ID, as [`Failing`] containers (the pod when the log links the container to one), with the
/// latest error of each; timeouts left to `RuntimeUnhealthy` as the pod worker's are.
fn runtime_failures<'l>(input: &LogInput<'_, 'l>) -> Vec<Failing<'l>> {
    let logs = input.logs;
    let mut by_container: BTreeMap<String, Vec<&'l LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::RuntimeStartContainerFailed]) {
        let Some(id) = e.event.ids.container_id.as_deref() else {
            continue;
        };
        // dockerd's handler of an exec's start (`POST /exec/<id>/start`: a probe's command
        // racing a container that stops) is no container's start.
        if e.text.contains("Handler for POST") && !e.text.contains("/containers/") {
            continue;
        }
        if too_slow(&runtime_error(e)) {
            continue;
        }
        by_container.entry(id.to_string()).or_default().push(e);
    }
    by_container
        .into_iter()
        .map(|(id, mut group)| {
            // docker 1.11's containerd logs the same failed start as dockerd's handler: the
            // handler's record, which every dockerd logs, counts.
            if group.iter().any(|e| e.text.contains("Handler for POST")) {
                group.retain(|e| e.text.contains("Handler for POST"));
            }
            group.sort_by_key(|e| e.time);
            let error = runtime_error(group[group.len() - 1]);
            let pod = logs
                .pod_of(input.view, &group, None, None)
                .filter(|p| !p.name.is_empty() || !p.uid.is_empty());
            Failing {
                pod,
                container: format!("container {}", super::logs::shown(&id)),
                reason: "StartContainer".to_string(),
                whose: whose("", &error),
                error: quoted(&error),
                records: group,
            }
        })
        .collect()
}

/// A runtime record's error: its error field, else the text after `returned error: ` (dockerd).
fn runtime_error(e: &LoggedEvent) -> String {
    match e.event.error.as_deref() {
        Some(err) => err.to_string(),
        None => {
            let t = &e.text;
            match t.find("returned error: ") {
                Some(at) => t[at + "returned error: ".len()..].to_string(),
                None => t.to_string(),
            }
        }
    }
}

const RULE: &str = "kuberuntime_container.go startContainer (CRI CreateContainer, then \
     StartContainer) in the pod worker's SyncPod: a container that cannot be created or started \
     fails the sync with its reason (RunContainerError, CreateContainerError, \
     CreateContainerConfigError), and the next sync tries again after a back-off";

/// The containers the node cannot start: the runtime, its shim, cgroups or the disk.
fn node_finding(pods: &[Failing<'_>]) -> Finding {
    let many = pods.len() >= 2 || pods.iter().any(|p| attempts(&p.records) >= 2);
    let listed = pod_list(
        pods.iter()
            .map(|p| (p.pod.as_ref(), format!("{}, {}", p.container, p.reason))),
    );
    let error = &pods.last().expect("a finding has a pod").error;
    let mut all: Vec<&LoggedEvent> = pods.iter().flat_map(|p| p.records.clone()).collect();
    all.sort_by_key(|e| e.time);
    let mut f = finding(
        FindingKind::ContainerStartFailing,
        if many {
            Severity::Warning
        } else {
            Severity::Info
        },
        format!(
            "the runtime fails to start containers for a cause of the node's ({error}; {}{}): \
             {listed}{}",
            plural(records(&all), "failure", "failures"),
            over(&all),
            if many {
                ", and nothing after shows them started: their pods do not run"
            } else {
                ": once, which the next sync may mend; a second failure makes this a warning"
            },
        ),
        RULE,
        "the runtime's log for the container (journalctl -u containerd or -u crio, crictl ps -a): \
         no space left (df -h, df -i on /var/lib/containerd), cgroups (the kubelet's and the \
         runtime's cgroup driver, /sys/fs/cgroup), the OCI runtime and its shim (runc --version, \
         the runtime's handler config), file descriptors and PIDs (ulimit, pids.max); a runtime \
         or kernel upgrade just before is the usual suspect"
            .to_string(),
    );
    if let [one] = pods {
        f.pod = one.pod.clone();
    }
    f.evidence = quote(&all);
    f
}

/// The containers that do not start for their own pod's reasons: the spec's or the image's.
fn workload_finding(pods: &[Failing<'_>]) -> Finding {
    let listed = pod_list(pods.iter().map(|p| {
        (
            p.pod.as_ref(),
            format!("{}, {}: {}", p.container, p.reason, p.error),
        )
    }));
    let mut all: Vec<&LoggedEvent> = pods.iter().flat_map(|p| p.records.clone()).collect();
    all.sort_by_key(|e| e.time);
    let mut fixes: Vec<&str> = Vec::new();
    for p in pods {
        let fix = match p.whose {
            Whose::Spec => {
                "the pod spec names what is missing (kubectl describe pod: the Secret or \
                 ConfigMap, its key; runAsNonRoot against the image's user): create it or fix \
                 the spec"
            }
            Whose::Workload => {
                "the image or the container's command: the executable is not in the image, or \
                 the image is for another architecture (docker manifest inspect), or its \
                 lifecycle hook fails"
            }
            Whose::Node | Whose::Other => {
                "the error names the cause; the runtime's log for the container (crictl ps -a; \
                 journalctl -u containerd or -u crio)"
            }
        };
        if !fixes.contains(&fix) {
            fixes.push(fix);
        }
    }
    let mut f = finding(
        FindingKind::ContainerStartFailing,
        Severity::Info,
        format!(
            "{} cannot be created or started: {listed}; the kubelet tries again at each sync, and \
             the cause is the pod's own ({}{})",
            match pods.len() {
                1 => "a pod's container".to_string(),
                n => format!("{n} pods' containers"),
            },
            plural(records(&all), "failure", "failures"),
            over(&all),
        ),
        RULE,
        fixes.join("; "),
    );
    if let [one] = pods {
        f.pod = one.pod.clone();
    }
    f.evidence = quote(&all);
    f
}
