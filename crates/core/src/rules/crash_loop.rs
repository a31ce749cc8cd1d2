//! `ContainerCrashLooping`: containers the kubelet keeps restarting (`CrashLoopBackOff`).
//!
//! When a container exits, the kubelet restarts it after a back-off that doubles with each
//! exit in a row (10 s, 20 s, 40 s, … up to 5 min, `kuberuntime_manager.go`
//! `doBackOff`, reset once the container has run 10 min); while it waits, each sync of the pod
//! fails and the pod worker logs `"Error syncing pod, skipping" err="failed to \"StartContainer\"
//! for \"<c>\" with CrashLoopBackOff: \"back-off 2m40s restarting failed container=<c>
//! pod=<name>_<ns>(<uid>)\""` (legacy `Error syncing pod <uid> (…), skipping: … Back-off 5m0s
//! restarting failed container=…`). The back-off gives how many times in a row the container
//! has exited: [`crashes`].
//!
//! Why a container exits is in its own output, not the kubelet's log. What the log tells is
//! whose container it is. A static pod's (its UID a config hash: 32 hex digits, no dashes) is
//! the node's own: the control plane's or the node's agents from `/etc/kubernetes/manifests`; one
//! that has exited [`MANY`] times in a row where the log ends (the kubelet's log not going on
//! [`STOPPED`] past its last back-off) is a warning, since a control plane boot has its
//! components exit a few times while etcd and the API server come up. Any other pod's crash
//! loop is an info, all of them in one finding: the workload's, not the node's.

use std::collections::BTreeMap;

use jiff::SignedDuration;

use crate::finding::{Finding, FindingKind, Severity};
use crate::logs::EventKind;
use crate::model::PodRef;
use crate::startup::values::go_duration;

use super::logs::{
    LogInput, LoggedEvent, dur, finding, kubelet_goes_on_after, over, plural, pod_label, pod_list,
    quote, records,
};
use super::sandbox_create::pod_key;

/// How long the kubelet's log must go on past a pod's last back-off for the loop to count as
/// over: a crash-looping container is synced again at least every 5 min (the back-off's cap).
const STOPPED: SignedDuration = SignedDuration::from_mins(10);

/// How many exits in a row make a static pod's crash loop a finding: 4 (a back-off of 80 s).
const MANY: u32 = 4;

/// The exits in a row a back-off stands for: 10 s after the first, doubling to the 5 min cap
/// (so 5 min is "6 or more").
fn crashes(back_off: SignedDuration) -> u32 {
    let mut d = 10;
    let mut n = 1;
    while d < back_off.as_secs() && d < 300 {
        d *= 2;
        n += 1;
    }
    n
}

/// Whether the pod worker's `Error syncing pod` record `e` is a crash loop's back-off.
fn crash_looping(e: &LoggedEvent) -> bool {
    e.text.contains("with CrashLoopBackOff")
}

/// The back-off a record gives (`back-off 2m40s restarting failed container=…`, `Back-off
/// 5m0s …`).
fn back_off_of(e: &LoggedEvent) -> Option<SignedDuration> {
    let at = e.text.find("ack-off ")? + "ack-off ".len();
    let rest = &e.text[at..];
    go_duration(&rest[..rest.find(' ')?])
}

/// The container a record names (`restarting failed container=<c> pod=…`).
fn container_of(e: &LoggedEvent) -> Option<&str> {
    let at = e.text.find("failed container=")? + "failed container=".len();
    let rest = &e.text[at..];
    Some(&rest[..rest.find([' ', '"', '\\'])?]).filter(|c| !c.is_empty())
}

/// The pod the back-off's own text names (`restarting failed container=<c>
/// pod=<name>_<ns>(<uid>)`): what a record cut before its `pod=` field still gives.
fn pod_in_text(e: &LoggedEvent) -> Option<PodRef> {
    let at = e.text.find(" pod=")? + " pod=".len();
    let rest = &e.text[at..];
    let close = rest.find(')')?;
    let pod = crate::logs::ids::full_name(&rest[..=close])?;
    Some(PodRef {
        namespace: pod.namespace?.into_owned(),
        name: pod.name.into_owned(),
        uid: pod.uid?.into_owned(),
    })
}

/// A pod whose container crash-loops.
struct Looping<'l> {
    pod: Option<PodRef>,
    containers: Vec<String>,
    /// The longest back-off its records give.
    back_off: Option<SignedDuration>,
    records: Vec<&'l LoggedEvent>,
}

pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let logs = input.logs;
    let mut by_pod: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::ErrorSyncingPod]) {
        if !crash_looping(e) {
            continue;
        }
        if let Some(k) = pod_key(logs, e).or_else(|| pod_in_text(e).map(|p| p.uid)) {
            by_pod.entry(k).or_default().push(e);
        }
    }
    let mut workloads: Vec<Looping<'_>> = Vec::new();
    for (key, mut group) in by_pod {
        group.sort_by_key(|e| e.time);
        let mut containers: Vec<String> = group
            .iter()
            .filter_map(|e| container_of(e).map(str::to_string))
            .collect();
        containers.sort();
        containers.dedup();
        let back_off = group.iter().filter_map(|e| back_off_of(e)).max();
        let pod = logs
            .pod_of(
                input.view,
                &group,
                None,
                Some(key.as_str()).filter(|k| !k.contains('/')),
            )
            .filter(|p| !p.name.is_empty())
            .or_else(|| group.iter().find_map(|e| pod_in_text(e)));
        let looping = Looping {
            pod,
            containers,
            back_off,
            records: group,
        };
        let uid = looping.pod.as_ref().map_or("", |p| p.uid.as_str());
        let many = back_off.is_some_and(|b| crashes(b) >= MANY);
        if super::looks_like_config_hash(uid)
            && many
            && !kubelet_goes_on_after(logs, &looping.records, STOPPED)
        {
            out.push(static_finding(&looping));
        } else {
            workloads.push(looping);
        }
    }
    if !workloads.is_empty() {
        out.push(workload_finding(&workloads));
    }
}

/// How a back-off reads: `back-off 2m40s: 5 exits in a row`.
fn said(back_off: Option<SignedDuration>) -> String {
    match back_off {
        Some(b) if b.as_secs() >= 300 => format!("back-off {}: 6 or more exits in a row", dur(b)),
        Some(b) => format!(
            "back-off {}: {} in a row",
            dur(b),
            plural(crashes(b) as usize, "exit", "exits")
        ),
        None => "in back-off".to_string(),
    }
}

/// A static pod's crash loop: the node's own component does not run.
fn static_finding(p: &Looping<'_>) -> Finding {
    let who = p
        .pod
        .as_ref()
        .map_or_else(|| "a static pod".to_string(), pod_label);
    let containers = p.containers.join(", ");
    let mut f = finding(
        FindingKind::ContainerCrashLooping,
        Severity::Warning,
        format!(
            "static pod {who}'s container {containers} keeps exiting ({}; {}{}) where the log ends: \
             a component of this node (its manifest in /etc/kubernetes/manifests) does not run",
            said(p.back_off),
            plural(records(&p.records), "record", "records"),
            over(&p.records),
        ),
        "kuberuntime_manager.go SyncPod: a container that exited is restarted after a back-off \
         doubling from 10 s to 5 min (reset after 10 min of running), CrashLoopBackOff meanwhile",
        format!(
            "crictl ps -a --name {c}, then crictl logs <container id> of the last exited one says \
             why it exits (an expired certificate, a flag the new version removed, etcd or the API \
             server out of reach); the manifest in /etc/kubernetes/manifests",
            c = p.containers.first().map_or("<container>", String::as_str)
        ),
    );
    f.pod = p.pod.clone();
    f.evidence = quote(&p.records);
    f
}

/// The crash loops of the workloads' pods: their own, an info.
fn workload_finding(pods: &[Looping<'_>]) -> Finding {
    let listed = pod_list(pods.iter().map(|p| {
        (
            p.pod.as_ref(),
            format!("{}, {}", p.containers.join(", "), said(p.back_off)),
        )
    }));
    let mut all: Vec<&LoggedEvent> = pods.iter().flat_map(|p| p.records.clone()).collect();
    all.sort_by_key(|e| e.time);
    let mut f = finding(
        FindingKind::ContainerCrashLooping,
        Severity::Info,
        format!(
            "{} in CrashLoopBackOff: {listed}: their containers exit and the kubelet restarts them \
             after a back-off; why is in the containers' own output",
            match pods.len() {
                1 => "a pod's container is".to_string(),
                n => format!("{n} pods' containers are"),
            },
        ),
        "kuberuntime_manager.go SyncPod: a container that exited is restarted after a back-off \
         doubling from 10 s to 5 min (reset after 10 min of running), CrashLoopBackOff meanwhile",
        "kubectl logs <pod> -c <container> --previous (or crictl logs of the exited container) \
         says why it exits; kubectl describe pod <pod> gives the exit code (137: killed, OOMKilled)"
            .to_string(),
    );
    if let [one] = pods {
        f.pod = one.pod.clone();
    }
    f.evidence = quote(&all);
    f
}
