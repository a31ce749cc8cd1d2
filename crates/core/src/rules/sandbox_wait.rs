//! Pods the kubelet wants a new sandbox for and that get none: what a CNI plugin failing on
//! ADD keeps from starting (added to `SandboxStopFailing`'s note when the same plugin fails its
//! teardown, case 22).
//!
//! `kuberuntime/util/util.go` `PodSandboxChanged` (`kuberuntime_manager.go` `podSandboxChanged`
//! before it) logs at V2, before `SyncPod` creates the sandbox: "No ready sandbox for pod can be
//! found. Need to start a new one" (also "No sandbox for pod …", "Multiple sandboxes are ready
//! for Pod …", "Sandbox for pod has changed …", "… has no IP address …"; legacy `No ready
//! sandbox for pod "<name>_<ns>(<uid>)" can be found. Need to start a new one`). A pod whose
//! sandbox is then created (the kubelet's "Created PodSandbox for pod", containerd's
//! `RunPodSandbox … returns sandbox id`) or whose containers start is no longer waiting.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

/// A pod's records that end its wait for a sandbox.
const GOT_ONE: &[EventKind] = &[
    EventKind::PodSandboxCreated,
    EventKind::RunPodSandboxDone,
    EventKind::ContainerStartedLogged,
    EventKind::PodStartupObserved,
];

/// The pods (`ns/name`, else the UID) that needed a new sandbox and have no record of getting
/// one after, in reading order, each once with its last such record. Linear in the
/// `PodSandboxNeeded` records and their pods' records.
pub(super) fn waiting_for_sandbox<'l>(logs: &Logs<'l>) -> Vec<(String, &'l LoggedEvent)> {
    let mut waiting = Vec::new();
    let needed = logs
        .by_kind
        .get(&EventKind::PodSandboxNeeded)
        .map_or(&[][..], Vec::as_slice);
    // The last need of each pod decides.
    let mut last: BTreeMap<String, usize> = BTreeMap::new();
    let mut order = Vec::new();
    for &i in needed {
        let e = &logs.all[i];
        let Some(key) = pod_name_key(e).or_else(|| own_uid(e)) else {
            continue;
        };
        if last.insert(key.clone(), i).is_none() {
            order.push(key);
        }
    }
    for key in order {
        let i = last[&key];
        let at = if key.contains('/') {
            logs.of_name(&key)
        } else {
            logs.of_uid(&key)
        };
        let got = after_pos(at, i)
            .iter()
            .any(|&j| GOT_ONE.contains(&logs.all[j].event.kind));
        if !got {
            waiting.push((key, &logs.all[i]));
        }
    }
    waiting
}

/// `"; 2 pods wait for a new sandbox (ns/a, ns/b)"`, or `""` when none does.
pub(super) fn waiting_note(waiting: &[(String, &LoggedEvent)]) -> String {
    let pods: Vec<&str> = waiting.iter().map(|(p, _)| p.as_str()).collect();
    match pods.as_slice() {
        [] => String::new(),
        [one] => format!("; 1 pod waits for a new sandbox ({one})"),
        many => format!(
            "; {} pods wait for a new sandbox ({})",
            many.len(),
            listed(many)
        ),
    }
}
