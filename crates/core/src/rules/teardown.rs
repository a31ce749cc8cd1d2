//! Sandbox and pod teardown failures: `SandboxStopFailing` (from `podcoroner gc` and the logs),
//! `StuckTerminatingPod` (state and logs) and the log side of `StaticPodNotRemoved`; the classes
//! of stop errors.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;
use crate::logs::Component;

/// The `SandboxStopFailing` finding for a `StopPodSandbox` of `sandbox` that failed with `error`
/// (as `podcoroner gc` saw it, or as the kubelet logged it), with its classified cause.
///
/// Mirrors `kuberuntime_gc.go` `removeSandbox`: on a stop error the kubelet logs "Failed to stop
/// sandbox before removing" and returns without `RemovePodSandbox`, every GC period, forever.
///
/// Critical when the CNI plugin binary is missing, as for the log rule (`teardown_failures`): no sandbox
/// teardown on the node can succeed until it is back.
pub fn sandbox_stop_failing(sandbox: &Sandbox, error: &str, seen_by: &str) -> Finding {
    let cause = crate::logs::catalogue::classify_cause(error);
    let (class, fix) = cause_class(cause);
    let severity = if cause.node_wide() {
        Severity::Critical
    } else {
        Severity::Warning
    };
    Finding {
        kind: FindingKind::SandboxStopFailing,
        severity,
        summary: format!(
            "StopPodSandbox of {} ({}/{}) fails: {class}",
            short(&sandbox.id),
            sandbox.pod.namespace,
            sandbox.pod.name
        ),
        pod: Some(sandbox.pod.clone()),
        sandbox_id: Some(sandbox.id.clone()),
        container_id: None,
        path: None,
        evidence: vec![Evidence::new(
            EvidenceSource::Cri,
            format!("{seen_by}: {error}"),
        )],
        kubelet_rule:
            "kuberuntime_gc.go removeSandbox: StopPodSandbox runs the CNI teardown; on error the \
                       kubelet logs \"Failed to stop sandbox before removing\" and never calls \
                       RemovePodSandbox, so the sandbox leaks until the cause is fixed"
                .into(),
        remediation: format!(
            "{fix}; then crictl stopp {id} && crictl rmp {id}",
            id = sh(&sandbox.id)
        ),
        gc_eligible: false,
    }
}

/// The class of a `StopPodSandbox` error (`CNI teardown: …`, `runtime busy`, `timeout`,
/// `other`) and what to do about it, from `logs::catalogue::classify_cause`.
pub fn stop_failure_class(error: &str) -> (&'static str, &'static str) {
    cause_class(crate::logs::catalogue::classify_cause(error))
}

/// [`stop_failure_class`] for a cause already classified (e.g. from a log event, whose cut text
/// may no longer say it).
pub fn cause_class(cause: crate::logs::Cause) -> (&'static str, &'static str) {
    use crate::logs::catalogue::{Cause, CniFailure};
    match cause {
        Cause::CniTeardown(CniFailure::PluginNotInitialized) => (
            "CNI teardown: cni plugin not initialized",
            "check the CNI config in /etc/cni/net.d and the CNI daemonset on this node",
        ),
        Cause::CniTeardown(CniFailure::UnauthorizedDatastore) => (
            "CNI teardown: the CNI datastore refused (Unauthorized)",
            "renew the CNI plugin's credentials (e.g. Calico's kubeconfig token) and restart its node agent",
        ),
        Cause::CniTeardown(CniFailure::PluginNoErrorMessage) => (
            "CNI teardown: the CNI plugin failed with no error message (crashed or killed?)",
            "read the CNI plugin's own log and the kernel log (dmesg: an OOM kill, a segfault) at \
             the time of the DEL; a plugin that panics on DEL needs a fixed version",
        ),
        Cause::CniTeardown(CniFailure::EmptyCachedResult) => (
            "CNI teardown: empty cached CNI result",
            "remove the empty /var/lib/cni/results/<network>-<sandbox id>-<ifname> file, then stop again",
        ),
        Cause::CniTeardown(CniFailure::MissingNetns) => (
            "CNI teardown: the network namespace is gone",
            "the plugin's DEL must tolerate a missing netns; upgrade the CNI plugin",
        ),
        Cause::CniTeardown(CniFailure::PluginMissing) => (
            "CNI teardown: the CNI plugin binary is missing",
            "reinstall the CNI plugin binaries (/opt/cni/bin)",
        ),
        Cause::CniTeardown(CniFailure::DatastoreUnreachable) => (
            "CNI teardown: the CNI plugin cannot reach its datastore",
            "restore the CNI plugin's connection to its datastore or the API server (is it up, is \
             the address right?); when tearing down a node, remove the application pods before the \
             network plugin",
        ),
        Cause::CniTeardown(CniFailure::AgentNotRunning) => (
            "CNI teardown: the CNI plugin's node agent is not running",
            "check that the CNI plugin's node agent runs and is ready on this node (calico-node with \
             /var/lib/calico mounted, kube-flannel writing /run/flannel/subnet.env, the multus or \
             cilium daemon serving the socket the plugin dials, aws-node's ipamd): kubectl get pods \
             -A -o wide --field-selector spec.nodeName=<node>",
        ),
        Cause::CniTeardown(CniFailure::BadConfig) => (
            "CNI teardown: the network's CNI config is not usable (its cniVersion)",
            "fix the network's config in /etc/cni/net.d: set a cniVersion the plugin supports (in \
             the .conflist, and in the template its installer writes it from); every ADD and DEL \
             with it fails until then",
        ),
        Cause::CniTeardown(CniFailure::DestroyNetwork) => (
            "CNI teardown: failed to destroy network",
            "read the CNI plugin's own log for the DEL of this sandbox",
        ),
        Cause::RuntimeBusy => (
            "runtime busy",
            "find what holds the sandbox (mounts, shim) and retry",
        ),
        Cause::Timeout => (
            "timeout",
            "check the runtime's health (crictl info) and, for a sandbox stop, the CNI plugin's latency",
        ),
        _ => (
            "other",
            "read the runtime's log for this sandbox (journalctl -u containerd)",
        ),
    }
}

// === teardown failures: SandboxStopFailing, StuckTerminatingPod, StaticPodNotRemoved ===

/// Who asked for the sandbox to go, as far as one line tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    /// The sandbox GC (`kuberuntime_gc.go` `removeSandbox`).
    Gc,
    /// The pod worker killing the pod (`kuberuntime_manager.go` `killPodWithSyncResult`).
    Kill,
    /// The CRI client or the runtime: either of the above.
    Unknown,
}

/// Whether a line reports a sandbox (or pod) teardown failure, and from which caller.
pub(super) fn teardown_caller(e: &LoggedEvent) -> Option<Caller> {
    use EventKind::*;
    match e.event.kind {
        // A kill that found what it kills already gone: the teardown is done, not failing
        // (kubernetes/kubernetes#28748: "not an error").
        KillPodFailed | ErrorSyncingPod if answered_gone(e) => None,
        StopSandboxBeforeRemoveFailed | RemoveSandboxFailed => Some(Caller::Gc),
        // `killPodWithSyncResult` logs "Failed to stop sandbox" with no error (ErrorS(nil, …));
        // dockershim's "Failed to stop sandbox "<id>": <err>" is the runtime side.
        KillPodSandboxFailed if e.event.error.is_none() => Some(Caller::Kill),
        KillPodFailed => Some(Caller::Kill),
        ErrorSyncingPod => {
            let t = e.event.error.as_deref().unwrap_or(&e.text);
            (t.contains("KillPodSandbox") || t.contains("KillContainer")).then_some(Caller::Kill)
        }
        KillPodSandboxFailed
        | StopPodSandboxFailed
        | RemovePodSandboxFailed
        | DestroyNetworkFailed => Some(Caller::Unknown),
        _ => None,
    }
}

/// Whether a stop or kill record `e` was answered NotFound or `no such container` (dockershim):
/// what it stops or kills is already gone, the deletion race. Read from its error (the whole
/// line when it has none).
pub(super) fn answered_gone(e: &LoggedEvent) -> bool {
    let t = e
        .event
        .error
        .as_deref()
        .unwrap_or(&e.text)
        .to_ascii_lowercase();
    e.event.cause == Some(Cause::NotFound)
        || t.contains("no such container")
        || t.contains("code = notfound")
}

/// How telling a cause is: a specific CNI cause beats a transient one (`cni plugin not
/// initialized`, typically right after boot), which beats a generic or cut CNI error, which
/// beats the rest; NotFound (the object is gone) tells least.
pub(super) fn cause_rank(c: Cause) -> u8 {
    match c {
        Cause::CniTeardown(CniFailure::PluginNotInitialized) => 6,
        Cause::CniTeardown(CniFailure::DestroyNetwork) => 5,
        Cause::CniTeardown(_) => 7,
        Cause::RuntimeBusy => 4,
        Cause::Timeout => 3,
        Cause::Forbidden | Cause::AlreadyExists => 2,
        Cause::Other => 1,
        Cause::NotFound => 0,
    }
}

/// The most telling cause of a group and the event that says it (the latest among equals). A
/// record that carries no error tells least of all: the kubelet's `Failed to stop sandbox
/// {"containerd" "<id>"}` (killPodWithSyncResult up to 1.20; `"Failed to stop sandbox"
/// podSandboxID=…` after) follows the CRI client's line that has the error, and its cause,
/// Other, is only that it says none.
pub(super) fn best_cause<'e>(group: &[&'e LoggedEvent]) -> Option<(Cause, &'e LoggedEvent)> {
    let telling = |c: Cause, e: &LoggedEvent| match (c, &e.event.error) {
        (Cause::Other, None) => 0,
        _ => 1 + cause_rank(c),
    };
    group
        .iter()
        .filter_map(|e| e.event.cause.map(|c| (c, *e)))
        .fold(None, |best, (c, e)| match best {
            Some((b, be)) if telling(b, be) > telling(c, e) => best,
            _ => Some((c, e)),
        })
}

/// [`error_text`] cut to 300 characters, for a person.
pub(super) fn error_quote(e: &LoggedEvent) -> String {
    let err = error_text(e);
    match err.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &err[..at]),
        None => err,
    }
}

/// The error text of an event without the gRPC wrapping and its quotes unescaped, whole: what
/// the rules read causes, plugins and sandboxes in ([`error_quote`] says it).
pub(super) fn error_text(e: &LoggedEvent) -> String {
    let err = e.event.error.as_deref().unwrap_or(&e.text);
    let err = match err
        .rsplit_once(" desc = ")
        .filter(|(head, _)| head.contains("rpc error"))
    {
        // An error quoted in the pod worker's own (`KillContainerError: "rpc error: … desc =
        // …"]`) ends with that quote: not the error's.
        Some((head, rest)) if head.contains("\"rpc error") => {
            let rest = rest.trim_end_matches(']');
            rest.strip_suffix("\\\"")
                .or_else(|| rest.strip_suffix('"'))
                .unwrap_or(rest)
        }
        // The same inside a quoted error of the pod worker's (`CreatePodSandboxError:
        // "CreatePodSandbox for pod … failed: rpc error: … desc = transport is closing"`): a
        // last quote that closes none opened in the desc is the pod worker's.
        Some((_, rest)) => match rest.strip_suffix('"') {
            Some(r) if rest.matches('"').count() % 2 == 1 => r.strip_suffix('\\').unwrap_or(r),
            _ => rest,
        },
        // A gRPC status whose `rpc error: ` prefix the record's message took (a bare error
        // line: `rpc error: code = Unknown desc = …` read as message `rpc error` and error).
        None => match err
            .strip_prefix("code = ")
            .and_then(|r| r.split_once(" desc = "))
        {
            Some((code, rest)) if !code.contains(' ') => rest,
            _ => err,
        },
    };
    err.replace("\\\"", "\"").replace("\\\\", "\\")
}

/// The quoted word after `key` in `text` (`network "cbr0"`, `plugin "flannel"`,
/// `type="weave-net"`), with any escaping of the quotes.
pub(super) fn quoted_after<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let rest = &text[text.find(key)? + key.len()..];
    // Spaces too: a line a terminal wrapped, joined again, holds a run of them (`is reserved
    // for              \"<id>\"`).
    let rest =
        rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\\' | '='));
    let end = rest.find(['"', '\\'])?;
    Some(&rest[..end]).filter(|w| !w.is_empty() && !w.contains(' '))
}

/// The CNI plugin an error names: `failed to find plugin "<p>"`, `plugin type="<p>"`,
/// `/opt/cni/bin/<p>`.
pub(super) fn cni_plugin(err: &str) -> Option<&str> {
    quoted_after(err, "find plugin ")
        .or_else(|| quoted_after(err, "type="))
        .or_else(|| {
            let at = err.find("/opt/cni/bin/")? + "/opt/cni/bin/".len();
            let name = &err[at..];
            Some(&name[..name.find([':', ' ', '>', '"', '\\']).unwrap_or(name.len())])
        })
        .filter(|p| !p.is_empty())
}

/// Whether two CNI failures may be the same plugin's (both name it, or one does not say).
pub(super) fn same_plugin(a: &LoggedEvent, b: &LoggedEvent) -> bool {
    let plugin = |e: &LoggedEvent| {
        cni_plugin(e.event.error.as_deref().unwrap_or(&e.text)).map(str::to_string)
    };
    match (plugin(a), plugin(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// The class of a failure and what to do, from its cause and, where the error names them, the
/// file or process to look at.
pub(super) fn failure_class(
    cause: Cause,
    e: &LoggedEvent,
    sandbox: Option<&str>,
    node_runtime: Option<Component>,
) -> (String, String) {
    let (class, fix) = cause_class(cause);
    let err = e.event.error.as_deref().unwrap_or(&e.text);
    let id = sandbox.map_or("<sandbox id>", |s| s.trim_end_matches('…'));
    match cause {
        Cause::CniTeardown(CniFailure::EmptyCachedResult) => {
            if let Some(net) = quoted_after(err, "get network ") {
                let glob = format!("/var/lib/cni/results/{net}-{id}-*");
                return (
                    format!("{class} (network {net})"),
                    format!(
                        "ls -la {glob} and remove the file if it is empty (it holds nothing), then the \
                         teardown succeeds on the next try"
                    ),
                );
            }
            if err.contains("netconf") {
                let plugin = quoted_after(err, "type=").unwrap_or("the CNI plugin");
                return (
                    format!("{class} (the cached netconf of {plugin} is empty)"),
                    format!(
                        "find {plugin}'s per-sandbox cache for {id} (flannel: /var/lib/cni/flannel/{id}) and \
                         remove it if it is empty, then the teardown succeeds on the next try"
                    ),
                );
            }
        }
        Cause::CniTeardown(CniFailure::DatastoreUnreachable) => {
            if let Some(at) = err.find("dial tcp ") {
                let rest = &err[at + "dial tcp ".len()..];
                let addr = rest.split([':', ' ']).next().unwrap_or("");
                let port = rest
                    .strip_prefix(addr)
                    .and_then(|r| r.strip_prefix(':'))
                    .map(|r| &r[..r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len())])
                    .filter(|p| !p.is_empty());
                let addr = match port {
                    Some(p) => format!("{addr}:{p}"),
                    None => addr.to_string(),
                };
                if !addr.is_empty() {
                    return (
                        format!("{class} ({addr})"),
                        format!(
                            "restore the CNI plugin's connection to {addr} (its datastore: etcd, the \
                             API server) before cleaning up; when tearing down a node, remove the \
                             application pods before the network plugin"
                        ),
                    );
                }
            }
        }
        // dockershim asks Docker for the sandbox's netns before calling the plugin: the plugin
        // never ran, the runtime lost the sandbox's container.
        Cause::CniTeardown(CniFailure::MissingNetns)
            if err.contains("failed to retrieve network namespace path") =>
        {
            return (
                "CNI teardown: the runtime cannot find the sandbox's network namespace (its \
                 container is gone; the CNI plugin never ran)"
                    .to_string(),
                format!(
                    "the runtime no longer has the sandbox's container (docker ps -a | grep {id}): \
                     remove the sandbox through the runtime (crictl rmp {id}), or restart the kubelet \
                     so that it stops asking"
                ),
            );
        }
        Cause::CniTeardown(CniFailure::PluginMissing) => {
            if let Some(p) = cni_plugin(err) {
                return (
                    format!("{class} (plugin {p})"),
                    format!(
                        "the CNI config in /etc/cni/net.d names plugin {p}: check that /opt/cni/bin/{p} \
                         exists and runs on this node's architecture (reinstall the CNI plugins)"
                    ),
                );
            }
        }
        Cause::RuntimeBusy if err.contains("device or resource busy") => {
            let shm = err.contains("/shm");
            return (
                format!(
                    "{class}: {} is busy (device or resource busy)",
                    if shm {
                        "the sandbox's shm mount"
                    } else {
                        "a mount of the sandbox"
                    }
                ),
                format!(
                    "grep -l {id} /proc/*/mountinfo finds the processes whose mount namespace holds it (a \
                     mount leaked into another namespace); restart them or umount it there"
                ),
            );
        }
        Cause::Other if err.contains("ttrpc: closed") => {
            return (
                "the runtime lost the sandbox's shim (ttrpc: closed)".to_string(),
                format!(
                    "look for the sandbox's shim or VM process (ps -ef | grep {id}); restart the runtime \
                     (CRI-O, containerd) and report it to the VM runtime (e.g. Kata)"
                ),
            );
        }
        Cause::Other => {
            let unit =
                runtime_unit(e, node_runtime).unwrap_or("containerd (or -u crio, -u docker)");
            return (
                class.to_string(),
                format!(
                    "read the runtime's log for this sandbox (journalctl -u {unit} | grep {id})"
                ),
            );
        }
        _ => {}
    }
    (class.to_string(), fix.to_string())
}

/// The systemd unit of the runtime a record names or was written by: the kubelet's
/// `Failed to stop sandbox {"docker" "<id>"}` (`kubecontainer.ContainerID`'s type), a
/// `docker://`, `cri-o://` or `containerd://` container ID, or the runtime's own line. `None`
/// when it names none and `node_runtime` (the runtime whose records the logs hold,
/// [`Logs::runtime`]) is none.
pub(super) fn runtime_unit(
    e: &LoggedEvent,
    node_runtime: Option<Component>,
) -> Option<&'static str> {
    let t = &e.text;
    let by_type = [
        ("docker", "docker"),
        ("cri-o", "crio"),
        ("containerd", "containerd"),
    ]
    .into_iter()
    .find(|(ty, _)| t.contains(&format!("{{\"{ty}\" ")) || t.contains(&format!("{ty}://")));
    by_type
        .map(|(_, unit)| unit)
        .or(match e.event.component.or(node_runtime) {
            Some(Component::Docker) => Some("docker"),
            Some(Component::Crio) => Some("crio"),
            Some(Component::Containerd) => Some("containerd"),
            _ => None,
        })
}

/// Groups every sandbox and pod teardown failure into incidents and reports each once:
/// `StaticPodNotRemoved` for a static pod REMOVEd from its source that cannot be killed,
/// `StuckTerminatingPod` for a pod the pod worker cannot kill, `SandboxStopFailing` otherwise.
///
/// `kuberuntime_gc.go` `removeSandbox` ("Failed to stop sandbox before removing", "Failed to
/// remove sandbox") and `kuberuntime_manager.go` `killPodWithSyncResult` ("Failed to stop
/// sandbox", "killPodWithSyncResult failed", `pod_workers.go` "Error syncing pod, skipping"
/// with `KillPodSandboxError`) retry forever while the cause lasts; the CRI client's
/// "StopPodSandbox from runtime service failed" and containerd's `StopPodSandbox for "<id>"
/// failed` are the same failure seen lower down.
///
/// Not a finding: a failure followed by the sandbox's successful stop or removal, the pod's
/// termination, or (for an API pod) its REMOVE; a sandbox the CRI view no longer lists; a
/// failure whose only cause is NotFound (the object is already gone); a line cut before it
/// names a sandbox or pod when other failures of the log name theirs.
pub(super) fn teardown_failures(
    logs: &Logs<'_>,
    view: &NodeView,
    seen: &BTreeSet<String>,
    out: &mut Vec<Finding>,
) {
    let all = logs.all;
    let t: Vec<usize> = (0..all.len())
        .filter(|&i| teardown_caller(&all[i]).is_some())
        .collect();
    if t.is_empty() {
        return;
    }
    let mut parent: Vec<usize> = (0..t.len()).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    fn union(parent: &mut [usize], a: usize, b: usize) {
        let (ra, rb) = (find(parent, a), find(parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    // One sandbox, or one pod UID: one incident.
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for (k, &i) in t.iter().enumerate() {
        let e = &all[i];
        let keys = [
            logs.sandbox_key(e).map(|s| format!("s:{s}")),
            own_uid(e).map(|u| format!("u:{u}")),
        ];
        for key in keys.into_iter().flatten() {
            match by_key.get(&key) {
                Some(&j) => union(&mut parent, k, j),
                None => {
                    by_key.insert(key, k);
                }
            }
        }
    }
    // A line naming no sandbox belongs with the failure of its own call logged next to it (the
    // kubelet logs "Failed to stop sandbox" then "killPodWithSyncResult failed"; dockershim logs
    // the CNI error, then the stop failure). Another goroutine's failure may be logged between
    // them (the sandbox GC's beside a pod worker's kill, or another pod's): a failure that cannot
    // be of the same call is stepped over, never joined.
    // A line naming nothing at all, and next to no failure that does, is one incident with
    // every such line of its kind and cause: they cannot be told apart, and one sandbox failing
    // again and again is one finding, not one per record.
    let owners = SandboxOwners::new(view);
    let mut anonymous: HashMap<(EventKind, Option<Cause>), usize> = HashMap::new();
    for (k, &i) in t.iter().enumerate() {
        if logs.sandbox_key(&all[i]).is_some() {
            continue;
        }
        let mut joined = false;
        'sides: for side in [Side::Before, Side::After] {
            for step in 1..=STEP_OVER {
                let Some(n) = logs.neighbour(i, side, step) else {
                    break;
                };
                if teardown_caller(n).is_none() || !close(&all[i], n) {
                    break;
                }
                // A line naming no sandbox either (CRI-O's ocicni `Error deleting network`, then
                // `Error while removing pod from CNI network`, then the `failed to destroy network
                // for pod sandbox k8s_…(<id>)` naming it) is stepped over: it joins too.
                if logs.sandbox_key(n).is_none() {
                    continue;
                }
                // Its incident: every failure of its sandbox is in one (`by_key`).
                let Some(kj) = logs
                    .sandbox_key(n)
                    .and_then(|s| by_key.get(&format!("s:{s}")).copied())
                else {
                    break;
                };
                if one_call(logs, &owners, &all[i], n) {
                    union(&mut parent, k, kj);
                    joined = true;
                    break 'sides;
                }
            }
        }
        let uid = logs.uid_of(&all[i]);
        if !joined && uid.is_none() && own_uid(&all[i]).is_none() {
            let e = &all[i].event;
            match anonymous.entry((e.kind, e.cause)) {
                std::collections::hash_map::Entry::Occupied(o) => union(&mut parent, k, *o.get()),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(k);
                }
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<&LoggedEvent>> = BTreeMap::new();
    for (k, &i) in t.iter().enumerate() {
        let root = find(&mut parent, k);
        groups.entry(root).or_default().push(&all[i]);
    }

    // A CNI plugin that cannot run fails every teardown on the node.
    let node_wide = t
        .iter()
        .map(|&i| &all[i])
        .find(|e| e.event.cause.is_some_and(Cause::node_wide));

    // The successful stops and removals of each sandbox, once for every incident.
    let mut done: HashMap<String, Vec<usize>> = HashMap::new();
    for kind in [
        EventKind::StopPodSandboxDone,
        EventKind::RemovePodSandboxDone,
        EventKind::TearDownNetworkDone,
    ] {
        for &i in logs.by_kind.get(&kind).map_or(&[][..], Vec::as_slice) {
            if let Some(k) = logs.sandbox_key(&all[i]) {
                done.entry(k).or_default().push(i);
            }
        }
    }
    let pod_index = PodIndex::new(logs, done);
    // A line cut before it names its sandbox or pod, in a log whose other teardown failures
    // name theirs, is one of those retried (case 22: the GC's next `StopPodSandbox … failed`
    // cut after `err="rpc error`): it names nothing to report on its own.
    let anonymous = |g: &[&LoggedEvent]| {
        g.iter()
            .all(|e| e.event.truncated && logs.sandbox_key(e).is_none() && logs.uid_of(e).is_none())
    };
    let named_elsewhere = groups.values().any(|g| !anonymous(g));
    let node = NodeCni {
        node_wide,
        setups: setup_failures(logs),
        waiting: super::sandbox_wait::waiting_for_sandbox(logs),
        starts: Starts::new(logs),
    };
    // A failed ADD's own cleanup (CRI-O's DEL of the sandbox it failed to set up, naming
    // nothing) is SandboxCreateFailing's: no sandbox stop failed.
    let adds = super::sandbox_create::anonymous_add_failures(logs);
    let cleans_up_an_add = |g: &[&LoggedEvent]| {
        !adds.is_empty()
            && g.iter()
                .all(|e| super::sandbox_create::cleans_up_an_add(logs, &adds, e).is_some())
    };
    for group in groups.into_values() {
        if named_elsewhere && anonymous(&group) || cleans_up_an_add(&group) {
            continue;
        }
        incident(logs, view, seen, &pod_index, &node, &group, out);
    }
}

/// How many failures of other calls a line naming no sandbox is looked past for the failure of
/// its own call (the events of one file, either way).
pub(super) const STEP_OVER: usize = 4;

/// The pod of each sandbox the CRI view lists: (namespace, name, UID).
pub(super) struct SandboxOwners<'v>(HashMap<&'v str, &'v PodRef>);

impl<'v> SandboxOwners<'v> {
    pub(super) fn new(view: &'v NodeView) -> SandboxOwners<'v> {
        SandboxOwners(view.cri.as_ref().map_or_else(HashMap::new, |cri| {
            cri.sandboxes
                .iter()
                .map(|s| (s.id.as_str(), &s.pod))
                .collect()
        }))
    }
}

/// Whether `anon`, a teardown failure naming no sandbox, can be the same failed call as `named`,
/// the failure logged near it that names its sandbox: not when one is the sandbox GC's
/// (`kuberuntime_gc.go` `removeSandbox`) and the other the pod worker's kill
/// (`killPodWithSyncResult`), two goroutines that never log one call between them, nor when
/// they belong to two pods (by UID, or by name when a line names its pod by name only), as the
/// logs or the CRI view (the sandbox's pod) tell.
pub(super) fn one_call(
    logs: &Logs<'_>,
    owners: &SandboxOwners<'_>,
    anon: &LoggedEvent,
    named: &LoggedEvent,
) -> bool {
    let callers = (teardown_caller(anon), teardown_caller(named));
    if matches!(
        callers,
        (Some(Caller::Gc), Some(Caller::Kill)) | (Some(Caller::Kill), Some(Caller::Gc))
    ) {
        return false;
    }
    let owner = logs
        .sandbox_key(named)
        .and_then(|s| owners.0.get(s.as_str()).copied());
    let named_uid = logs
        .uid_of(named)
        .or_else(|| owner.map(|p| p.uid.clone()))
        .filter(|u| !u.is_empty());
    if let (Some(a), Some(b)) = (logs.uid_of(anon), named_uid) {
        return a == b;
    }
    let named_pod =
        name_key(named).or(owner.map(|p| (Some(p.namespace.as_str()), p.name.as_str())));
    match (name_key(anon), named_pod) {
        (Some((ns_a, a)), Some((ns_b, b))) => {
            a == b && (ns_a.is_none() || ns_b.is_none() || ns_a == ns_b)
        }
        _ => true,
    }
}

/// What every teardown incident of the node shares about its CNI plugin: a failure that says
/// the plugin cannot run here at all, and the sandbox setups failing in each plugin.
pub(super) struct NodeCni<'l> {
    node_wide: Option<&'l LoggedEvent>,
    setups: HashMap<String, Vec<&'l LoggedEvent>>,
    /// The pods that need a new sandbox and get none (`sandbox_wait`).
    waiting: Vec<(String, &'l LoggedEvent)>,
    /// The kubelet's starts (its own log's `KubeletStarted` records).
    starts: Starts<'l>,
}

/// The kubelet's starts, indexed to find in logarithmic time the last one (in reading order)
/// that some record of a set was logged [`after`]: each incident asks it once, and a troubled
/// node's log holds as many starts as incidents, so a scan per incident was quadratic.
pub(super) struct Starts<'l> {
    /// The timed starts by time.
    timed: Ranked<Timestamp>,
    /// Per file, its timed and its untimed starts by line.
    timed_in: HashMap<&'l str, Ranked<u64>>,
    untimed_in: HashMap<&'l str, Ranked<u64>>,
    all: &'l [LoggedEvent],
}

/// Positions with a key, sorted by key, with the last position among those up to each.
#[derive(Default)]
struct Ranked<K> {
    keys: Vec<(K, usize)>,
    last: Vec<usize>,
}

impl<K: Ord + Copy> Ranked<K> {
    fn new(mut keys: Vec<(K, usize)>) -> Ranked<K> {
        keys.sort_unstable();
        let mut last = 0;
        let last = keys
            .iter()
            .map(|&(_, i)| {
                last = last.max(i);
                last
            })
            .collect();
        Ranked { keys, last }
    }

    /// The last position whose key is below `limit`.
    fn last_below(&self, limit: K) -> Option<usize> {
        let n = self.keys.partition_point(|&(k, _)| k < limit);
        n.checked_sub(1).map(|k| self.last[k])
    }
}

impl<'l> Starts<'l> {
    fn new(logs: &Logs<'l>) -> Starts<'l> {
        let all = logs.all;
        let mut timed = Vec::new();
        let mut timed_in: HashMap<&str, Vec<(u64, usize)>> = HashMap::new();
        let mut untimed_in: HashMap<&str, Vec<(u64, usize)>> = HashMap::new();
        for &i in logs
            .by_kind
            .get(&EventKind::KubeletStarted)
            .map_or(&[][..], Vec::as_slice)
        {
            let e = &all[i];
            if e.log != crate::event::LogKind::Kubelet {
                continue;
            }
            match e.time {
                Some(t) => {
                    timed.push((t, i));
                    timed_in.entry(&e.origin).or_default().push((e.line, i));
                }
                None => untimed_in.entry(&e.origin).or_default().push((e.line, i)),
            }
        }
        let ranked = |m: HashMap<&'l str, Vec<(u64, usize)>>| {
            m.into_iter().map(|(o, v)| (o, Ranked::new(v))).collect()
        };
        Starts {
            timed: Ranked::new(timed),
            timed_in: ranked(timed_in),
            untimed_in: ranked(untimed_in),
            all,
        }
    }

    /// The last start in reading order that some record of `records` was logged [`after`]
    /// (`records.any_after(start)`), by binary searches.
    fn last_before(&self, records: &Latest<'_>) -> Option<&'l LoggedEvent> {
        // A timed start before the latest timed record.
        let mut best = records.time.and_then(|t| self.timed.last_below(t));
        // A timed start above an untimed record of its file; an untimed start above any.
        for (origin, &line) in &records.untimed_line {
            let at = self.timed_in.get(origin).and_then(|r| r.last_below(line));
            best = best.max(at);
        }
        for (origin, &line) in &records.line {
            let at = self.untimed_in.get(origin).and_then(|r| r.last_below(line));
            best = best.max(at);
        }
        best.map(|i| &self.all[i])
    }
}

pub(super) fn incident(
    logs: &Logs<'_>,
    view: &NodeView,
    seen: &BTreeSet<String>,
    pod_index: &PodIndex<'_>,
    node: &NodeCni<'_>,
    group: &[&LoggedEvent],
    out: &mut Vec<Finding>,
) {
    use EventKind::*;
    let (node_wide, setup_failures) = (node.node_wide, &node.setups);
    let sandboxes: BTreeSet<String> = group.iter().filter_map(|e| logs.sandbox_key(e)).collect();
    // A full ID rather than a cut one; the latest named.
    let sandbox = group
        .iter()
        .rev()
        .filter_map(|e| logs.sandbox_key(e))
        .find(|s| !s.ends_with('…'))
        .or_else(|| sandboxes.iter().next().cloned());
    let uid = group.iter().find_map(|e| own_uid(e)).or_else(|| {
        sandbox
            .as_deref()
            .and_then(|s| logs.sandbox_pod.get(s).map(|u| (*u).to_string()))
    });
    let pod = logs.pod_of(view, group, sandbox.as_deref(), uid.as_deref());
    let pod_key = pod
        .as_ref()
        .filter(|p| !p.name.is_empty())
        .map(|p| format!("{}/{}", p.namespace, p.name));

    // The events of a kind that name the pod (by its UID or by its name), in reading order.
    let name_key: Option<NameKey<'_>> = pod_key
        .as_deref()
        .and_then(|k| k.split_once('/'))
        .map(|(ns, name)| (Some(ns), name));
    let naming = |kind: EventKind| pod_index.naming(logs.all, uid.as_deref(), name_key, kind);

    // A static pod REMOVEd from its source before the failures: its removal is what fails.
    let first = group[0];
    let static_remove = naming(SyncLoop(SyncOp::Remove)).find(|e| {
        matches!(
            e.event.config_source,
            Some(ConfigSource::File | ConfigSource::Http)
        ) && !after(e, first)
    });

    // Failures after the last success are what is still failing.
    let mut successes = Latest::default();
    for s in &sandboxes {
        for &i in pod_index
            .done
            .get(s.as_str())
            .map_or(&[][..], Vec::as_slice)
        {
            successes.add(&logs.all[i]);
        }
    }
    if let Some(u) = uid.as_deref() {
        for &i in logs.of_uid(u) {
            if logs.all[i].event.kind == PodTerminated {
                successes.add(&logs.all[i]);
            }
        }
    }
    // An API pod's REMOVE (by its UID or name), when the pod is no static one being removed.
    let api_removed = |f: &LoggedEvent| {
        static_remove.is_none()
            && (uid
                .as_deref()
                .and_then(|u| pod_index.api_remove_uid.get(u))
                .is_some_and(|l| l.any_after(f))
                || name_key
                    .and_then(|k| pod_index.api_remove_name.get(&k))
                    .is_some_and(|l| l.any_after(f)))
    };
    let failing: Vec<&LoggedEvent> = group
        .iter()
        .copied()
        .filter(|f| !successes.any_after(f) && !api_removed(f))
        .collect();
    let Some((cause, said)) = best_cause(&failing) else {
        return;
    };
    if cause == Cause::NotFound {
        return;
    }
    // The runtime no longer has it: healed.
    if let Some(cri) = &view.cri {
        let listed = match (&sandbox, &uid) {
            (Some(s), _) if !s.ends_with('…') => cri.sandboxes.iter().any(|x| &x.id == s),
            (_, Some(u)) => {
                cri.sandboxes.iter().any(|x| &x.pod.uid == u)
                    || cri.containers.iter().any(|c| c.pod_uid() == Some(u))
            }
            _ => true,
        };
        if !listed {
            return;
        }
    }
    // A kubelet start ends its pod workers' kills: a pod no config source gives any more (deleted
    // from the API while the kubelet was down) is not killed again, and what still fails after
    // the start is the sandbox GC's (seen on the real kubelet v1.34.4). So the pod is being
    // killed when a kill failed after the latest start that some failure follows.
    let mut latest_failure = Latest::default();
    for f in &failing {
        latest_failure.add(f);
    }
    let current: Vec<&LoggedEvent> = match node.starts.last_before(&latest_failure) {
        Some(start) => failing
            .iter()
            .copied()
            .filter(|f| after(f, start))
            .collect(),
        None => failing.clone(),
    };
    let killing = current
        .iter()
        .any(|e| teardown_caller(e) == Some(Caller::Kill));
    let by_gc = failing
        .iter()
        .any(|e| teardown_caller(e) == Some(Caller::Gc));
    let api_pod_alive = |u: &str| {
        view.api.as_ref().is_some_and(|api| {
            api.pods
                .iter()
                .any(|p| p.pod.uid == u && p.deletion_timestamp.is_none())
        })
    };
    let kind = if static_remove.is_some() {
        FindingKind::StaticPodNotRemoved
    } else if killing && !uid.as_deref().is_some_and(api_pod_alive) {
        if uid.as_ref().is_some_and(|u| seen.contains(u)) {
            return; // the state rule reports it, with these lines
        }
        FindingKind::StuckTerminatingPod
    } else {
        FindingKind::SandboxStopFailing
    };

    let (mut class, mut fix) = failure_class(cause, said, sandbox.as_deref(), logs.runtime);
    let generic_cni = cause == Cause::CniTeardown(CniFailure::DestroyNetwork);
    let mut severity = Severity::Warning;
    let mut node_note = None;
    if cause.node_wide() {
        // Node-wide: no sandbox on this node can be torn down (or set up) until the plugin is
        // back, the scale of RuntimeUnhealthy.
        severity = Severity::Critical;
        node_note = Some(
            if cause == Cause::CniTeardown(CniFailure::AgentNotRunning) {
                "; the CNI plugin's node agent is not running on this node, so every sandbox \
                 teardown and setup fails"
            } else {
                "; the CNI plugin cannot run on this node, so every sandbox teardown fails"
            }
            .to_string(),
        );
    } else if let (true, Some(nw)) = (generic_cni, node_wide)
        && same_plugin(said, nw)
    {
        // The error does not say why (a cut line, a generic DEL failure), but the same plugin
        // cannot run on this node at all.
        severity = Severity::Critical;
        let (c, f) = failure_class(
            nw.event
                .cause
                .unwrap_or(Cause::CniTeardown(CniFailure::PluginMissing)),
            nw,
            logs.sandbox_key(nw).as_deref(),
            logs.runtime,
        );
        class = format!(
            "{class} (no reason in this line; on this node {})",
            c.trim_start_matches("CNI teardown: ")
        );
        fix = f;
        node_note = Some(format!(
            "; the CNI plugin cannot run on this node (seen for {}), so every sandbox teardown fails",
            logs.sandbox_key(nw).as_deref().map_or_else(
                || "a sandbox the log does not name".to_string(),
                |id| format!("sandbox {}", shown(id))
            )
        ));
    }
    // The same plugin failing on ADD too: new pods cannot start either (case 22).
    let setups: &[&LoggedEvent] = match cause {
        Cause::CniTeardown(_) => cni_plugin(&error_text(said))
            .and_then(|p| setup_failures.get(p))
            .map_or(&[], Vec::as_slice),
        _ => &[],
    };
    let mut node_note = node_note.unwrap_or_default();
    if let Some(first) = setups.first() {
        let err = error_text(first);
        let plugin = cni_plugin(&err).unwrap_or("the CNI plugin");
        node_note.push_str(&format!(
            "; {} ({}{}), so new pods cannot start either{}",
            also_fails_on_add(plugin),
            plural(
                records(setups),
                "RunPodSandbox failure",
                "RunPodSandbox failures"
            ),
            of_pod(logs.pod_of(view, &setups[..1], None, None).as_ref()),
            super::sandbox_wait::waiting_note(&node.waiting)
        ));
    }
    let n_attempts = attempts(&failing);
    let tally = format!(
        "{}, {}{}",
        plural(n_attempts, "attempt", "attempts"),
        plural(records(&failing), "log record", "log records"),
        over(&failing)
    );
    let removal = failing
        .iter()
        .any(|e| matches!(e.event.kind, RemoveSandboxFailed | RemovePodSandboxFailed))
        && !failing.iter().any(|e| {
            matches!(
                e.event.kind,
                StopSandboxBeforeRemoveFailed | StopPodSandboxFailed | DestroyNetworkFailed
            )
        });
    let step = match (&sandbox, removal) {
        (Some(s), true) => format!("removing its sandbox {}", shown(s)),
        (Some(s), false) => format!("stopping its sandbox {}", shown(s)),
        // A record of the sandbox's stop whose ID a pager cut (`Failed to stop sandbox
        // {"docker" "40d5…>`) is still the sandbox's.
        (None, _)
            if failing.iter().any(|e| {
                e.text.contains("KillPodSandbox")
                    || matches!(
                        e.event.kind,
                        KillPodSandboxFailed
                            | StopPodSandboxFailed
                            | StopSandboxBeforeRemoveFailed
                            | DestroyNetworkFailed
                    )
            }) =>
        {
            "stopping its sandbox".to_string()
        }
        (None, _) => "stopping its containers".to_string(),
    };
    let crictl_by_uid = uid.as_deref().map(|u| {
        format!(
            "crictl pods --label io.kubernetes.pod.uid={u} finds its sandbox; crictl stopp <id> && crictl rmp <id>"
        )
    });
    let crictl = sandbox.as_deref().map(|s| {
        format!(
            "crictl stopp {id} && crictl rmp {id}",
            id = sh(s.trim_end_matches('…'))
        )
    });
    let mut f = match (kind, static_remove) {
        (FindingKind::StaticPodNotRemoved, Some(remove)) => {
            let source = match remove.event.config_source {
                Some(ConfigSource::Http) => "http",
                _ => "file",
            };
            finding(
                kind,
                severity,
                format!(
                    "static pod{} was removed from its {source} source{} but the kubelet cannot kill it: \
                     {step} fails: {class} ({tally}); its sandbox and mirror pod stay{node_note}",
                    of_pod(pod.as_ref()).trim_start_matches(" of pod"),
                    remove
                        .time
                        .map_or(String::new(), |t| format!(" at {t}")),
                ),
                "config/file.go REMOVEs a static pod whose manifest left the directory and its pod worker \
                 kills it (pod_workers.go, kuberuntime_manager.go killPodWithSyncResult: containers, then \
                 StopPodSandbox with the CNI teardown); when KillPodSandbox fails, 1.22 to 1.26 do not retry \
                 the termination of a removed static pod (k/k #105790, #126021; fixed in 1.27 by #113145), so \
                 its sandbox and mirror pod stay",
                format!(
                    "{fix}; then {}, or systemctl restart kubelet (it retries the termination)",
                    crictl.clone().or(crictl_by_uid).unwrap_or_else(|| {
                        "crictl pods --name <pod name> finds its sandbox; crictl stopp <id> && crictl rmp <id>"
                            .to_string()
                    })
                ),
            )
        }
        (FindingKind::StuckTerminatingPod, _) => finding(
            kind,
            severity,
            format!(
                "the kubelet cannot kill pod{}: {step} fails: {class} ({tally}); a deleted pod stays \
                 Terminating until this is fixed{node_note}",
                of_pod(pod.as_ref()).trim_start_matches(" of pod")
            ),
            "kuberuntime_manager.go killPodWithSyncResult: a pod is killed by stopping its containers, then its \
             sandbox (StopPodSandbox, which runs the CNI teardown); on error the pod worker logs \"Error syncing \
             pod, skipping\" with KillPodSandboxError and retries with back-off, and the API object of a \
             deleted pod goes only once the kill succeeds",
            format!(
                "{fix}; the kubelet then finishes by itself. kubectl delete pod --force only hides the pod: its \
                 sandbox stays{}",
                crictl
                    .as_ref()
                    .map_or(String::new(), |c| format!(" ({c} once the cause is fixed)"))
            ),
        ),
        _ => finding(
            FindingKind::SandboxStopFailing,
            severity,
            format!(
                "{} {}{} fails: {class} ({tally}){}{node_note}",
                if removal { "removing" } else { "stopping" },
                sandbox.as_deref().map_or_else(
                    || "a pod sandbox the log does not name".to_string(),
                    |id| format!("pod sandbox {}", shown(id))
                ),
                of_pod(pod.as_ref()),
                if by_gc {
                    "; the kubelet's GC retries it every minute and the sandbox leaks until the cause is fixed"
                } else {
                    ""
                }
            ),
            "kuberuntime_gc.go removeSandbox: StopPodSandbox runs the CNI teardown; on error the kubelet logs \
             \"Failed to stop sandbox before removing\" and never calls RemovePodSandbox, retrying every GC \
             period (1 min) with no Node event, so the sandbox leaks until the cause is fixed \
             (killPodWithSyncResult retries the same call for a pod being killed)",
            format!(
                "{fix}. Once the cause is fixed the kubelet's GC finishes by itself, or run {}",
                crictl
                    .clone()
                    .unwrap_or_else(|| "crictl stopp <id> && crictl rmp <id>".to_string())
            ),
        ),
    };
    // What led to it: the REMOVE, the containers killed.
    if kind != FindingKind::SandboxStopFailing {
        let killed =
            naming(KillingContainer).filter(|e| static_remove.is_none_or(|r| !after(r, e)));
        for e in static_remove.into_iter().chain(killed.take(2)) {
            f.evidence.push(line(e));
        }
    }
    f.evidence.push(Evidence::new(
        source_of(said),
        format!("cause: {class}: {}", error_quote(said)),
    ));
    f.evidence.extend(quote(&failing));
    // The caller still failing after the latest kubelet start (the GC's line, when a start ended
    // the kill), if the sample above left it out.
    if current.len() < failing.len()
        && let Some(e) = current
            .iter()
            .rev()
            .find(|e| teardown_caller(e).is_some_and(|c| c != Caller::Unknown))
    {
        let quoted = line(e);
        if !f.evidence.contains(&quoted) {
            f.evidence.push(quoted);
        }
    }
    if let Some(first) = setups.first() {
        f.evidence.push(line(first));
        // The first pod waiting for a sandbox, when the note names it.
        if let Some((_, e)) = node.waiting.first() {
            f.evidence.push(line(e));
        }
    }
    f.pod = pod;
    f.sandbox_id = sandbox;
    out.push(f);
}

/// The sandbox setups that fail in a CNI plugin (`RunPodSandbox … failed` with `failed to setup
/// network`, a CNI `(add)`), by the plugin their error names, in reading order: what a teardown
/// failing in the same plugin adds (read once for every incident).
fn setup_failures<'l>(logs: &Logs<'l>) -> HashMap<String, Vec<&'l LoggedEvent>> {
    let mut by_plugin: HashMap<String, Vec<&'l LoggedEvent>> = HashMap::new();
    let mut positions: Vec<usize> = [
        EventKind::RunPodSandboxFailed,
        EventKind::CreatePodSandboxFailed,
    ]
    .iter()
    .flat_map(|k| logs.by_kind.get(k).map_or(&[][..], Vec::as_slice))
    .copied()
    .collect();
    positions.sort_unstable();
    for i in positions {
        let e = &logs.all[i];
        let err = error_text(e);
        if !(err.contains("failed to setup network") || err.contains("(add)")) {
            continue;
        }
        if let Some(p) = cni_plugin(&err) {
            by_plugin.entry(p.to_string()).or_default().push(e);
        }
    }
    by_plugin
}

// === StuckTerminatingPod (state) ===

/// A pod the API marked for deletion past its grace period whose sandbox is still READY or whose
/// containers still run, with the kill errors the logs hold for it. Returns the UIDs reported.
pub(super) fn stuck_terminating_state(
    logs: &Logs<'_>,
    view: &NodeView,
    config: &Config,
    now: Timestamp,
    out: &mut Vec<Finding>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let (Some(api), Some(cri)) = (&view.api, &view.cri) else {
        return seen;
    };
    // The failures of each pod UID and sandbox, once for every pod.
    let mut failures_by_uid: HashMap<String, Vec<usize>> = HashMap::new();
    let mut failures_by_sandbox: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, e) in logs.all.iter().enumerate() {
        if !e.event.kind.is_failure() {
            continue;
        }
        if let Some(u) = logs.uid_of(e) {
            failures_by_uid.entry(u).or_default().push(i);
        }
        if let Some(s) = e.event.ids.sandbox_id.as_deref() {
            failures_by_sandbox.entry(s).or_default().push(i);
        }
    }
    for p in api.pods.iter().filter(|p| p.node_name == view.node_name) {
        let Some(deleted) = p.deletion_timestamp else {
            continue;
        };
        let grace = SignedDuration::from_secs(p.deletion_grace_period_seconds.unwrap_or(30));
        let past = now.duration_since(deleted) - grace;
        if past < SignedDuration::try_from(config.min_age).unwrap_or(SignedDuration::MAX) {
            continue;
        }
        let uid = p.mirror_hash().unwrap_or(&p.pod.uid);
        let ready: Vec<_> = cri
            .sandboxes
            .iter()
            .filter(|s| s.pod.uid == uid && s.state == SandboxState::Ready)
            .collect();
        let running = cri
            .containers
            .iter()
            .filter(|c| c.pod_uid() == Some(uid) && c.state == ContainerState::Running)
            .count();
        if ready.is_empty() && running == 0 {
            continue;
        }
        seen.insert(uid.to_string());
        let mut at: Vec<usize> = failures_by_uid.get(uid).cloned().unwrap_or_default();
        for s in &ready {
            at.extend(
                failures_by_sandbox
                    .get(s.id.as_str())
                    .map_or(&[][..], Vec::as_slice),
            );
        }
        at.sort_unstable();
        at.dedup();
        let failures: Vec<&LoggedEvent> = at.into_iter().map(|i| &logs.all[i]).collect();
        let mut f = finding(
            FindingKind::StuckTerminatingPod,
            Severity::Warning,
            format!(
                "pod {}/{} is Terminating {} past its grace period: {} READY sandbox(es), {running} running container(s)",
                p.pod.namespace,
                p.pod.name,
                human(past),
                ready.len()
            ),
            "kubelet pod_workers.go: a deleted pod's worker kills its containers (grace period) and then its \
             sandbox (StopPodSandbox, which runs the CNI teardown); the API object goes once both are done",
            format!(
                "journalctl -u kubelet | grep {uid} for the kill error (often a CNI teardown failure); fix it and \
                 the kubelet finishes; a force delete (kubectl delete pod --force) leaves the sandbox behind",
                uid = sh(uid)
            ),
        );
        f.pod = Some(PodRef {
            namespace: p.pod.namespace.clone(),
            name: p.pod.name.clone(),
            uid: uid.to_string(),
        });
        f.sandbox_id = ready.first().map(|s| s.id.clone());
        f.evidence = vec![Evidence::new(
            EvidenceSource::Apiserver,
            format!(
                "deletionTimestamp {deleted}, grace period {}s",
                grace.as_secs()
            ),
        )];
        f.evidence.extend(quote(&failures));
        out.push(f);
    }
    seen
}

/// The registry's runner: the state side of `StuckTerminatingPod` first (its pods are not
/// reported again from their log lines), then every teardown incident.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let seen = stuck_terminating_state(input.logs, input.view, input.config, input.now, out);
    teardown_failures(input.logs, input.view, &seen, out);
}

/// The latest of a set of records, to tell in one comparison whether any of them was logged
/// after a record ([`after`] against each, in constant time).
#[derive(Default)]
pub(super) struct Latest<'e> {
    /// The latest time among the timed records.
    time: Option<Timestamp>,
    /// Per file, the last line of an untimed record.
    untimed_line: HashMap<&'e str, u64>,
    /// Per file, the last line of any record.
    line: HashMap<&'e str, u64>,
}

impl<'e> Latest<'e> {
    pub(super) fn add(&mut self, e: &'e LoggedEvent) {
        if let Some(t) = e.time {
            self.time = self.time.max(Some(t));
        } else {
            let l = self.untimed_line.entry(&e.origin).or_default();
            *l = (*l).max(e.line);
        }
        let l = self.line.entry(&e.origin).or_default();
        *l = (*l).max(e.line);
    }

    /// Whether some record added was logged [`after`] `f`.
    pub(super) fn any_after(&self, f: &LoggedEvent) -> bool {
        let later_in = |m: &HashMap<&str, u64>| m.get(&*f.origin).is_some_and(|&l| l > f.line);
        match f.time {
            Some(t) => self.time.is_some_and(|s| s > t) || later_in(&self.untimed_line),
            None => later_in(&self.line),
        }
    }
}

/// The events of the few kinds an incident looks up for its pod (its REMOVE, the containers
/// killed), by (kind, UID) and (kind, name), and the latest API REMOVE of each UID and name:
/// built once, so an incident reads only its pod's records.
pub(super) struct PodIndex<'a> {
    /// The successful stops and removals of each sandbox (by its key).
    done: HashMap<String, Vec<usize>>,
    by_uid: HashMap<(EventKind, &'a str), Vec<usize>>,
    by_name: HashMap<(EventKind, NameKey<'a>), Vec<usize>>,
    api_remove_uid: HashMap<&'a str, Latest<'a>>,
    api_remove_name: HashMap<NameKey<'a>, Latest<'a>>,
}

impl<'a> PodIndex<'a> {
    fn new(logs: &Logs<'a>, done: HashMap<String, Vec<usize>>) -> PodIndex<'a> {
        let mut ix = PodIndex {
            done,
            by_uid: HashMap::new(),
            by_name: HashMap::new(),
            api_remove_uid: HashMap::new(),
            api_remove_name: HashMap::new(),
        };
        for kind in [
            EventKind::SyncLoop(SyncOp::Remove),
            EventKind::KillingContainer,
        ] {
            for &i in logs.by_kind.get(&kind).map_or(&[][..], Vec::as_slice) {
                let e: &'a LoggedEvent = &logs.all[i];
                let api = kind == EventKind::SyncLoop(SyncOp::Remove)
                    && e.event.config_source == Some(ConfigSource::Api);
                if let Some(u) = own_uid_ref(e) {
                    ix.by_uid.entry((kind, u)).or_default().push(i);
                    if api {
                        ix.api_remove_uid.entry(u).or_default().add(e);
                    }
                }
                if let Some(k) = name_key(e) {
                    ix.by_name.entry((kind, k)).or_default().push(i);
                    if api {
                        ix.api_remove_name.entry(k).or_default().add(e);
                    }
                }
            }
        }
        ix
    }

    /// The events of `kind` naming the pod by `uid` or by `name`, in reading order, each once.
    fn naming<'x>(
        &'x self,
        all: &'x [LoggedEvent],
        uid: Option<&'x str>,
        name: Option<NameKey<'x>>,
        kind: EventKind,
    ) -> impl Iterator<Item = &'x LoggedEvent> + use<'x, 'a> {
        let by_uid_map: &'x HashMap<(EventKind, &'x str), Vec<usize>> = &self.by_uid;
        let by_name_map: &'x HashMap<(EventKind, NameKey<'x>), Vec<usize>> = &self.by_name;
        let by_uid = uid
            .and_then(|u| by_uid_map.get(&(kind, u)))
            .map_or(&[][..], Vec::as_slice);
        let by_name = name
            .and_then(|k| by_name_map.get(&(kind, k)))
            .map_or(&[][..], Vec::as_slice);
        merged(by_uid, by_name).map(move |i| &all[i])
    }
}

/// The positions of two ascending lists, merged in order, each once.
fn merged<'s>(a: &'s [usize], b: &'s [usize]) -> impl Iterator<Item = usize> + 's {
    let (mut i, mut j) = (0, 0);
    std::iter::from_fn(move || {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => return None,
        };
        Some(next)
    })
}

/// How a teardown finding says that the same CNI plugin fails on ADD too (its RunPodSandbox
/// failures counted after it): `SandboxCreateFailing` leaves a single ADD failure of that plugin
/// to the finding that says so.
pub(super) fn also_fails_on_add(plugin: &str) -> String {
    format!("the same CNI plugin ({plugin}) also fails to set up new sandboxes")
}

#[cfg(test)]
mod ranked_tests {
    use super::Ranked;

    #[test]
    fn last_below_is_the_last_position_among_the_smaller_keys() {
        // Keys in any order (a file read newest first has its lines descending).
        let r = Ranked::new(vec![(30u64, 0), (20, 1), (10, 2), (40, 3)]);
        assert_eq!(r.last_below(10), None);
        assert_eq!(r.last_below(11), Some(2));
        assert_eq!(r.last_below(21), Some(2));
        assert_eq!(r.last_below(31), Some(2));
        assert_eq!(r.last_below(41), Some(3));
        assert_eq!(Ranked::<u64>::new(vec![]).last_below(5), None);
    }
}
