//! `StuckTerminatingPod` from a pod's volume the kubelet cannot unmount.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

/// The longest back-off of the volume manager's retries (`nestedpendingoperations.go`
/// `maxDurationBeforeRetry`: 2m2s, 2m0s before 1.5, `goroutinemap.go` in 1.3): an unmount
/// retried this far apart has failed about ten times over four minutes or more.
const MAX_BACKOFF: SignedDuration = SignedDuration::from_mins(2);

/// How late after its `No retries permitted until` a retry may be logged: the reconciler
/// looks every 100 ms, but a busy kubelet's loop runs late.
const RETRY_SLACK: SignedDuration = SignedDuration::from_secs(30);

/// How long an unmount may keep failing and be a passing state (a CSI driver's node plugin
/// restarting, `NodeUnpublish operation … still ongoing`).
const PASSING: SignedDuration = SignedDuration::from_mins(2);

/// `operation_generator.go` `GenerateUnmountVolumeFunc` retried by `nestedpendingoperations.go`:
/// `UnmountVolume.TearDown failed for volume "<name>" … pod "<uid>"` that the kubelet keeps
/// retrying, still failing where the log ends. A last failure followed, past its next retry
/// (`durationBeforeRetry` and [`RETRY_SLACK`]), by more of the log and no other failure went
/// through; a healthy node's `UnmountVolume.TearDown succeeded` lines, one per volume of every
/// pod it removes, are not read. The kubelet removes a terminated pod's directory, and a deleted
/// pod's API object, only once its volumes are unmounted, so the pod stays Terminating. A
/// warning when the retries reached the longest back-off (`durationBeforeRetry 2m2s`, `2m0s`
/// before 1.5) or ran over two minutes; a shorter run is a passing state.
pub(super) fn volume_teardown_failing(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::VolumeTearDownFailed]) {
        if let Some(uid) = pod_uid_of(&e.text) {
            groups.entry(uid).or_default().push(e);
        }
    }
    if groups.is_empty() {
        return;
    }
    // Where the log ends: a failure the kubelet did not log again by its next retry, with the
    // log going on past it, went through.
    let log_end = logs.all.iter().filter_map(|e| e.time).max();
    for (uid, group) in groups {
        let latest = group[group.len() - 1];
        let retried_by = latest
            .time
            .zip(duration_before_retry(&latest.text))
            .and_then(|(t, d)| {
                t.checked_add(d)
                    .and_then(|t| t.checked_add(RETRY_SLACK))
                    .ok()
            });
        let healed = matches!((retried_by, log_end), (Some(r), Some(end)) if end > r);
        let backoff = group
            .iter()
            .filter_map(|e| duration_before_retry(&e.text))
            .max()
            .unwrap_or_default();
        if healed || (backoff < MAX_BACKOFF && span(&group) < PASSING) {
            continue;
        }
        let volume = volume_of(&latest.text);
        let error = latest
            .text
            .rsplit_once(") : ")
            .or_else(|| latest.text.rsplit_once(") with: "))
            .map(|(_, e)| {
                e.trim()
                    .trim_end_matches('"')
                    .trim_end_matches('\\')
                    .to_string()
            })
            .unwrap_or_default();
        let why = cause_of(&error, &uid);
        let mut f = finding(
            FindingKind::StuckTerminatingPod,
            Severity::Warning,
            format!(
                "the kubelet cannot unmount volume {volume} of pod {uid} ({}; {}{}{}): the pod cannot \
                 finish terminating and its directory stays{}",
                cut(&error, 200),
                plural(records(&group), "record", "records"),
                over(&group),
                if backoff >= MAX_BACKOFF {
                    format!(", retried every {}", human(backoff))
                } else {
                    String::new()
                },
                why.0
            ),
            "operation_generator.go GenerateUnmountVolumeFunc and nestedpendingoperations.go: the volume \
             manager retries a failed unmount with a back-off doubling to 2m2s; a terminated pod's \
             directory, and a deleted pod's API object, go only once its volumes are unmounted",
            why.1,
        );
        // A UID as a pod has one, not one a bug report redacted (`xxxx-xxxx-…`).
        if uid.len() >= 32 && uid.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            f.pod = Some(PodRef {
                namespace: String::new(),
                name: String::new(),
                uid: uid.clone(),
            });
        }
        f.evidence = quote(&group);
        out.push(f);
    }
}

/// The registry's runner of the volume teardown rule.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    volume_teardown_failing(input.logs, out);
}

/// The pod UID an unmount record names: `pod "<uid>" (UID: "<uid>")`, quotes escaped or not.
pub(super) fn pod_uid_of(text: &str) -> Option<String> {
    let at = text.find("(UID: ")? + "(UID: ".len();
    let uid: String = text[at..]
        .trim_start_matches(['\\', '"'])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    (uid.len() >= 8).then_some(uid)
}

/// The volume an unmount record names: `TearDown failed for volume "<name>"`, its quotes
/// escaped or not (`\"default-token-6tpnm\"` in the legacy record's quoted error).
fn volume_of(text: &str) -> String {
    const AT: &str = "TearDown failed for volume ";
    let Some(at) = text.find(AT) else {
        return String::new();
    };
    let rest = text[at + AT.len()..].trim_start_matches(['\\', '"']);
    rest.split('"')
        .next()
        .unwrap_or_default()
        .trim_end_matches('\\')
        .to_string()
}

/// `durationBeforeRetry 2m2s` of a retry record.
fn duration_before_retry(text: &str) -> Option<SignedDuration> {
    let d = between(text, "(durationBeforeRetry ", ")")?;
    let d: jiff::Span = d.parse().ok()?;
    SignedDuration::try_from(d).ok()
}

/// The text of `s` between `open` and the next `close` after it.
fn between<'s>(s: &'s str, open: &str, close: &str) -> Option<&'s str> {
    let at = s.find(open)? + open.len();
    let end = s[at..].find(close)?;
    Some(&s[at..at + end])
}

/// `s` in at most about `n` characters: its start and its end, where an error says what failed
/// (`…: device or resource busy`), with ` … ` between.
fn cut(s: &str, n: usize) -> String {
    let chars = s.chars().count();
    if chars <= n {
        return s.to_string();
    }
    let head: String = s.chars().take(n / 2).collect();
    let tail: String = s.chars().skip(chars - n / 2).collect();
    format!("{head} … {tail}")
}

/// What an unmount's error says of its cause (a note for the summary) and the fix.
fn cause_of(error: &str, uid: &str) -> (String, String) {
    let u = sh(uid);
    if error.contains("device or resource busy") {
        (
            "; the mount is busy: a process or another mount namespace still holds it".to_string(),
            format!(
                "find who holds it: grep -l {u} /proc/*/mountinfo names the processes whose mount \
                 namespace still has the pod's volume (a container that mounts /var/lib/kubelet or / \
                 with rslave or rshared propagation, a daemon started with MountFlags=slave, a shell \
                 cd'd into it); stop that process or umount the path in its namespace (nsenter -t <pid> \
                 -m umount <path>); the kubelet's next retry then removes the volume"
            ),
        )
    } else if error.contains("CSI") || error.contains("csi") || error.contains("rpc error") {
        (
            "; the CSI driver's node plugin fails the unmount".to_string(),
            format!(
                "the CSI driver's node plugin on this node: is it running and registered (kubectl get \
                 csinode <node> -o yaml; `not found in the list of registered CSI drivers`)? its logs \
                 for NodeUnpublishVolume of pod {u}; once it unmounts, the kubelet removes the volume"
            ),
        )
    } else if error.contains("stale NFS file handle")
        || error.contains("transport endpoint is not connected")
    {
        (
            "; the mount is stale: its server or FUSE daemon is gone".to_string(),
            format!(
                "umount -l the stale mount (grep {u} /proc/mounts lists it); the kubelet's next retry \
                 then removes the volume"
            ),
        )
    } else {
        (
            String::new(),
            format!(
                "grep {u} /proc/mounts for what stays mounted, and the error in the evidence; once the \
                 volume is unmounted the kubelet removes it and the pod finishes terminating"
            ),
        )
    }
}
