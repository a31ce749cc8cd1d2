//! `VolumeMountFailing`: pods that wait for volumes the kubelet cannot attach or mount.
//!
//! Before it starts a pod's containers, the kubelet's `syncPod` (`kubelet.go`) waits for the
//! volume manager to attach and mount every volume of the pod (`WaitForAttachAndMount`, 2 min
//! 3 s); when the wait runs out it logs `Unable to attach or mount volumes for pod; skipping pod`
//! (`unmounted volumes=[…], unattached volumes=[…]: timed out waiting for the condition`) and the
//! pod worker `Error syncing pod` with the same error, and tries again at the next sync. The
//! volume manager's reconciler meanwhile retries each failed mount with a back-off (500 ms
//! doubling to 2 min 2 s), logging `Operation for "…" failed. … Error: MountVolume.SetUp failed
//! for volume "<name>" … pod "<name>" (UID: "<uid>") : <error>` (`operation_generator.go`); the
//! populator logs a volume it cannot add to the pod's desired state (`Error processing volume`:
//! a claim not found or not bound).
//!
//! A pod counts when its wait ran out, or its mounts failed over more than the wait (the excerpt
//! may miss the wait's record), and nothing after shows it past its volumes (a container
//! started, an image pulled). A wait interrupted (`context canceled`: the pod was updated or
//! deleted while it waited) is not a failure. The cause is read from the mount failures: a CSI
//! driver not registered on this node, a mount command failing (an NFS server out of reach, a
//! missing mount helper), a hostPath or local volume's path missing are the node's, and a
//! warning while the pod still waits where the log ends (the kubelet's log not going on
//! [`STOPPED`] past its last failure); a missing Secret, ConfigMap or claim is the pod spec's, an
//! info. A wait whose cause no record gives is a warning too: the pod has waited two minutes.
//! A pod the kubelet is tearing down (its worker asked to remove it, its containers killed) is
//! not one: its sync fails on its volumes while it goes away. A pod a finding before this rule
//! already names at warning or above (`StuckPodWorker`,
//! `StuckTerminatingPod`: a pod going away whose sync fails on its volumes) is left to it.

use std::collections::{BTreeMap, HashSet};

use jiff::SignedDuration;

use crate::finding::{Finding, FindingKind, Severity};
use crate::logs::EventKind;
use crate::model::PodRef;

use super::image_pull::Index;
use super::logs::{
    LogInput, LoggedEvent, after, finding, going_away, kubelet_goes_on_after, over, plural,
    pod_list, quote, records, span,
};
use super::sandbox_create::pod_key;
use super::teardown::{error_quote, error_text, quoted_after};
use super::volume_teardown::pod_uid_of;

/// How long the kubelet's log must go on past a pod's last mount failure for the pod to count
/// as no longer waiting: a waiting pod's sync fails and is logged at least every 2 min 3 s.
const STOPPED: SignedDuration = SignedDuration::from_mins(10);

/// How long mount failures alone must run for the pod's wait to have run out (2 min 3 s).
const WAIT: SignedDuration = SignedDuration::from_secs(123);

/// Why a volume is not set up, from the mount failures; the node's causes first (`Ord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Why {
    /// The volume's CSI driver has no node plugin registered on this node (`driver name <d>
    /// not found in the list of registered CSI drivers`).
    CsiDriverMissing,
    /// The mount command fails (`mount failed: exit status 32`, `mount.nfs: Connection timed
    /// out`, `wrong fs type, bad option`: an NFS server out of reach, a missing mount helper).
    MountCommand,
    /// A hostPath or local volume's path is missing or of the wrong type (`hostPath type check
    /// failed`, `path "<p>" does not exist`).
    PathMissing,
    /// An error none of the above: said as it is.
    Other,
    /// Only the wait is logged, its cause not.
    Unknown,
    /// A Secret, ConfigMap or claim the pod names does not exist (`secret "<n>" not found`).
    ObjectMissing,
    /// The kubelet's cache has not registered the object yet (`object "<ns>"/"<n>" not
    /// registered`: a race after a kubelet restart that mends itself).
    NotRegistered,
}

impl Why {
    fn nodes(self) -> bool {
        self <= Why::Unknown
    }
}

fn why_of(err: &str) -> Why {
    let has = |ps: &[&str]| ps.iter().any(|p| err.contains(p));
    if has(&["not found in the list of registered CSI drivers"]) {
        Why::CsiDriverMissing
    } else if has(&[
        "mount failed",
        "exit status 32",
        "mount.nfs",
        "wrong fs type",
        "bad option",
        "Connection timed out",
    ]) {
        Why::MountCommand
    } else if has(&["hostPath type check failed", "does not exist"]) {
        Why::PathMissing
    } else if has(&[" not registered"]) {
        Why::NotRegistered
    } else if (has(&["secret \"", "secrets \"", "configmap \"", "configmaps \""])
        && has(&["not found"]))
        || (has(&["persistentvolumeclaim", "PVC "]) && has(&["not found", "not bound"]))
    {
        Why::ObjectMissing
    } else if has(&[
        "timed out waiting for the condition",
        "list of unmounted volumes",
    ]) || err.trim().is_empty()
    {
        Why::Unknown
    } else {
        Why::Other
    }
}

/// Whether a wait record `e` was interrupted rather than run out (the pod updated or deleted
/// while it waited): not a failure.
fn interrupted(e: &LoggedEvent) -> bool {
    e.text.contains("context canceled")
}

/// Whether the pod worker's `Error syncing pod` record `e` is its copy of a wait that ran out.
fn syncing_wait(e: &LoggedEvent) -> bool {
    e.text.contains("unmounted volumes=[") || e.text.contains("list of unmounted volumes=[")
}

/// The volumes a wait record lists as not mounted (`unmounted volumes=[a b]`).
fn unmounted(e: &LoggedEvent) -> Vec<String> {
    let Some(at) = e.text.find("unmounted volumes=[") else {
        return Vec::new();
    };
    let rest = &e.text[at + "unmounted volumes=[".len()..];
    rest[..rest.find(']').unwrap_or(rest.len())]
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// A pod that waits for its volumes.
struct Waiting<'l> {
    pod: Option<PodRef>,
    volumes: Vec<String>,
    records: Vec<&'l LoggedEvent>,
    /// The mount failure that names the cause.
    named: Option<&'l LoggedEvent>,
}

pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let logs = input.logs;
    // The waits by pod (its UID, else `namespace/name`), and each pod's name for the mount
    // failures, which name the pod without its namespace.
    let mut waits: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::VolumeMountWaitFailed, EventKind::ErrorSyncingPod]) {
        if (e.event.kind == EventKind::ErrorSyncingPod && !syncing_wait(e)) || interrupted(e) {
            continue;
        }
        if let Some(k) = pod_key(logs, e) {
            waits.entry(k).or_default().push(e);
        }
    }
    let mut mounts: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::VolumeMountFailed]) {
        // The volume manager's retry names the pod's UID in its text; the populator's
        // `Error processing volume` names the pod as a field.
        if let Some(k) = pod_uid_of(&e.text).or_else(|| pod_key(logs, e)) {
            mounts.entry(k).or_default().push(e);
        }
    }
    if waits.is_empty() && mounts.is_empty() {
        return;
    }
    // A wait keyed by name takes the failures of the pod of that name.
    let mut by_name: BTreeMap<String, String> = BTreeMap::new();
    for (uid, failed) in &mounts {
        if let Some(name) = failed.iter().find_map(|e| quoted_after(&e.text, ") pod ")) {
            by_name.insert(name.to_string(), uid.clone());
        }
    }
    let mut groups: BTreeMap<String, (Vec<&LoggedEvent>, Vec<&LoggedEvent>)> = BTreeMap::new();
    for (key, w) in waits {
        let uid = match key.split_once('/') {
            Some((_, name)) => by_name.get(name).cloned().unwrap_or(key),
            None => key,
        };
        groups.entry(uid).or_default().0.extend(w);
    }
    for (uid, m) in mounts {
        groups.entry(uid).or_default().1.extend(m);
    }
    // A pod a finding before already says more of (a pod worker stuck on it, a pod stuck
    // terminating, whose sync fails on its volumes because it is going away).
    // Looked up by UID and by name, not scanned per pod.
    let mut told_uids: HashSet<&str> = HashSet::new();
    let mut told_names: HashSet<(&str, &str)> = HashSet::new();
    for p in out
        .iter()
        .filter(|f| f.severity >= Severity::Warning)
        .filter_map(|f| f.pod.as_ref())
    {
        if !p.uid.is_empty() {
            told_uids.insert(&p.uid);
        }
        if !p.name.is_empty() {
            told_names.insert((&p.namespace, &p.name));
        }
    }
    let ix = Index::new(logs);
    let mut by_why: BTreeMap<(Why, bool), Vec<Waiting<'_>>> = BTreeMap::new();
    for (key, (mut waited, mut failed)) in groups {
        failed.sort_by_key(|e| e.time);
        // Mounts failing for less than the wait, no wait run out: a pod starting (a Secret
        // created just after it).
        if waited.is_empty() && span(&failed) <= WAIT {
            continue;
        }
        let mut all: Vec<&LoggedEvent> = waited.iter().chain(&failed).copied().collect();
        all.sort_by_key(|e| e.time);
        let last = *all.last().expect("a group has a record");
        if ix.mended_pod.get(&key).is_some_and(|e| after(e, last)) {
            continue;
        }
        let pod = logs.pod_of(
            input.view,
            &all,
            None,
            Some(key.as_str()).filter(|k| !k.contains('/')),
        );
        // A pod going away waits for no volume: its sync fails on them while it terminates.
        if going_away(logs, pod.as_ref(), all[0]) {
            continue;
        }
        // The cause: the latest mount failure's, else what a wait's own error says beyond its
        // timeout (`failed to process volumes=[…]: error processing PVC …`).
        let (why, named) = failed
            .iter()
            .rev()
            .chain(waited.iter().rev())
            .map(|e| (why_of(&error_text(e)), *e))
            .find(|(w, _)| *w != Why::Unknown)
            .map_or((Why::Unknown, None), |(w, e)| (w, Some(e)));
        let waiting = !kubelet_goes_on_after(logs, &all, STOPPED);
        waited.sort_by_key(|e| e.time);
        let mut volumes: Vec<String> = waited.iter().flat_map(|e| unmounted(e)).collect();
        volumes.sort();
        volumes.dedup();
        if pod.as_ref().is_some_and(|p| {
            told_uids.contains(p.uid.as_str())
                || told_names.contains(&(p.namespace.as_str(), p.name.as_str()))
        }) {
            continue;
        }
        by_why.entry((why, waiting)).or_default().push(Waiting {
            pod,
            volumes,
            records: all,
            named: named.filter(|_| why != Why::Unknown),
        });
    }
    for ((why, waiting), pods) in by_why {
        out.push(mount_finding(why, waiting, &pods));
    }
}

/// The finding for the pods that wait on volumes for `why`, still `waiting` where the log
/// ends or not.
fn mount_finding(why: Why, waiting: bool, pods: &[Waiting<'_>]) -> Finding {
    let severity = if why.nodes() && waiting {
        Severity::Warning
    } else {
        Severity::Info
    };
    let listed = pod_list(pods.iter().map(|p| {
        let volumes = if p.volumes.is_empty() {
            String::new()
        } else {
            format!("volumes {}", p.volumes.join(", "))
        };
        (p.pod.as_ref(), volumes)
    }));
    let all: Vec<&LoggedEvent> = pods.iter().flat_map(|p| p.records.clone()).collect();
    let named = pods.iter().find_map(|p| p.named);
    let (cause, fix) = reading(why);
    let state = if waiting {
        "and nothing after shows the pod past its volumes"
    } else {
        "and the log goes on without it failing again (the pod deleted, or the mount mended)"
    };
    let mut f = finding(
        FindingKind::VolumeMountFailing,
        severity,
        format!(
            "{} for {} volumes: {cause}{} ({}{}, {state}): {}",
            match pods.len() {
                1 => "a pod waits".to_string(),
                n => format!("{n} pods wait"),
            },
            if pods.len() == 1 { "its" } else { "their" },
            named.map_or_else(String::new, |e| format!(" ({})", error_quote(e))),
            plural(records(&all), "record", "records"),
            over(&all),
            listed,
        ),
        "kubelet.go syncPod: volumemanager WaitForAttachAndMount (2 min 3 s) before the pod's \
         containers start; operation_generator.go MountVolume.SetUp retried by \
         nestedpendingoperations (500 ms doubling to 2 min 2 s)",
        fix.to_string(),
    );
    if let [one] = pods {
        f.pod = one.pod.clone();
    }
    let mut evidence_of = all;
    evidence_of.sort_by_key(|e| e.time);
    f.evidence = quote(&evidence_of);
    f
}

/// What a cause means and what to do.
fn reading(why: Why) -> (&'static str, &'static str) {
    match why {
        Why::CsiDriverMissing => (
            "the volume's CSI driver is not registered on this node",
            "is the driver's node plugin running on this node? kubectl get pods -A -o wide | grep \
             csi; ls /var/lib/kubelet/plugins_registry/; kubectl get csinode <node> -o yaml",
        ),
        Why::MountCommand => (
            "the mount command fails on this node",
            "the error names it: the storage server's reach from the node (showmount -e <server>, \
             ping), the mount helper installed (nfs-common / nfs-utils, cifs-utils), then \
             journalctl -u kubelet | grep MountVolume",
        ),
        Why::PathMissing => (
            "the volume's path is missing on this node",
            "create the hostPath or local volume's directory on the node, or fix the pod's path \
             and type; a local PersistentVolume needs its path on the node it is bound to",
        ),
        Why::Other => (
            "the volume's mount fails",
            "the error names what fails: the volume's plugin or CSI driver on this node \
             (journalctl -u kubelet | grep MountVolume), the storage it mounts",
        ),
        Why::Unknown => (
            "the volumes were not attached and mounted in the kubelet's wait (2 min), their \
             error not in these records",
            "kubectl describe pod <pod> (Events: FailedMount); journalctl -u kubelet | grep -E \
             'MountVolume|AttachVolume' for the volume's own error; a volume with many files and \
             fsGroup set is slow to chown (fsGroupChangePolicy: OnRootMismatch)",
        ),
        Why::ObjectMissing => (
            "an object the pod's volumes name does not exist (the pod's spec, not the node)",
            "create the Secret, ConfigMap or claim the error names, or fix the pod's volume",
        ),
        Why::NotRegistered => (
            "the kubelet's cache has not registered an object the volume names (a race after a \
             kubelet restart)",
            "it usually mends itself; if it persists, systemctl restart kubelet",
        ),
    }
}
