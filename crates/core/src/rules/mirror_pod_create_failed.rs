//! `MirrorPodCreateFailed`: the API server refuses a static pod's mirror pod.

#[allow(unused_imports)]
use super::logs::*;
use super::mirror_pods::{split_pod, static_uid};
#[allow(unused_imports)]
use super::*;

/// `pod/mirror_client.go` `CreateMirrorPod`: "Failed creating a mirror pod" (forbidden by
/// NodeRestriction or a missing or terminating namespace; AlreadyExists for a stale mirror pod
/// with another hash). One finding per pod, with the latest cause.
pub(super) fn mirror_pod_create_failed(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let mut refused: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::MirrorPodCreateFailed]) {
        if let Some(key) = pod_name_key(e) {
            refused.entry(key).or_default().push(e);
        }
    }
    for (pod, mut group) in refused {
        group.sort_by_key(|e| e.time);
        let cause = group.iter().rev().find_map(|e| e.event.cause);
        // A kubelet whose CreateMirrorPod checks the existing pod's hash (the structured
        // messages of 1.21 and later, `"Failed creating a mirror pod"` and `"Failed creating a
        // mirror pod for"`, and the printf `Failed creating a mirror pod for "<name>_<ns>(<uid>)"`
        // of the glog kubelets before them, whose mirror_client.go has the same check) can be the
        // start race; the pre-1.0 form (`Failed creating a mirror pod "<name>_<ns>"`, k/k #6580,
        // a kubelet that never replaces a stale mirror pod) stays a warning.
        let checks_hash = group.iter().all(|e| {
            e.text.contains("\"Failed creating a mirror pod\"")
                || e.text.contains("Failed creating a mirror pod for")
        });
        if cause == Some(Cause::AlreadyExists) && checks_hash && !refused_again(&group) {
            out.push(mirror_start_race(logs, &pod, &group));
            continue;
        }
        let latest = group.last().map_or("", |e| &*e.text);
        if let Some(how) = api_unreachable(latest) {
            out.push(mirror_api_unreachable(logs, &pod, &group, how));
            continue;
        }
        let mut target = split_pod(&pod);
        target.uid = static_uid(logs, &pod).unwrap_or_default();
        // An admission webhook's refusal names it: `admission webhook "<name>" denied the request`.
        let webhook =
            super::teardown::quoted_after(latest, "admission webhook ").map(str::to_string);
        let no_namespace = latest
            .contains(&format!("namespaces \"{}\" not found", target.namespace))
            || latest.contains(&format!(
                "namespaces \\\"{}\\\" not found",
                target.namespace
            ));
        let why = match (&webhook, cause) {
            (Some(w), _) => format!("refused by the admission webhook {w}"),
            _ if no_namespace => format!("its namespace {} does not exist", target.namespace),
            (None, Some(Cause::Forbidden)) => {
                "forbidden (NodeRestriction, or the namespace is missing or terminating)"
                    .to_string()
            }
            (None, Some(Cause::AlreadyExists)) => {
                "a pod of that name already exists (a stale mirror pod with another hash)"
                    .to_string()
            }
            _ => "refused by the API server".to_string(),
        };
        let mut f = finding(
            FindingKind::MirrorPodCreateFailed,
            Severity::Warning,
            format!(
                "the API server refuses the mirror pod of static pod {pod}: {why} ({}{})",
                plural(records(&group), "record", "records"),
                over(&group)
            ),
            "pod/mirror_client.go CreateMirrorPod: the kubelet creates a mirror pod for every static pod; on \
             AlreadyExists it accepts the existing pod only if its config.mirror matches (older kubelets \
             never replace it, k/k #6580)",
            match (&webhook, cause) {
                (Some(w), _) => format!(
                    "kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations -o name \
                     and find the one serving {}; fix its backend or exempt mirror pods (annotation \
                     kubernetes.io/config.mirror) or namespace {} from it; the kubelet retries at \
                     every sync",
                    sh(w),
                    sh(&target.namespace)
                ),
                (None, Some(Cause::AlreadyExists)) => format!(
                    "kubectl delete pod -n {} {} --grace-period=0 (the stale mirror pod) so the kubelet recreates it",
                    sh(&target.namespace),
                    sh(&target.name)
                ),
                _ => format!(
                    "kubectl get ns {}; check the kubelet's RBAC and the NodeRestriction admission plugin",
                    sh(&target.namespace)
                ),
            },
        );
        f.pod = Some(target);
        f.evidence = quote(&group);
        out.push(f);
    }
}

/// How soon a second AlreadyExists refusal of one mirror pod shows the kubelet does not take the
/// existing pod for its mirror pod: it retries at every `syncPod` (`syncFrequency`, 1 minute by
/// default, plus jitter), while after a start its pod informer delivers the surviving mirror pod
/// within seconds.
const MIRROR_REFUSED_AGAIN: SignedDuration = SignedDuration::from_mins(3);

/// Whether two consecutive refusals of the group are more than 10 s (one start's burst) and at most [`MIRROR_REFUSED_AGAIN`] apart (or, without
/// times, whether there are three or more).
fn refused_again(group: &[&LoggedEvent]) -> bool {
    group.windows(2).any(|w| match (w[0].time, w[1].time) {
        // Refusals within seconds of each other are one start race (the pod workers of one
        // kubelet start retry at once, seen 775 ms apart on the real kubelet v1.34.4); a
        // later one within MIRROR_REFUSED_AGAIN is a sync refusing it again.
        (Some(a), Some(b)) => {
            let gap = b.duration_since(a);
            gap > SignedDuration::from_secs(10) && gap <= MIRROR_REFUSED_AGAIN
        }
        _ => false,
    }) || (records(group) >= 3 && group.iter().all(|e| e.time.is_none()))
}

/// A single AlreadyExists for a mirror pod (per kubelet start) from a kubelet whose
/// `CreateMirrorPod` checks the existing pod's hash (structured messages, 1.21 and later, and the
/// printf `… mirror pod for "<pod>(<uid>)"` before them): `tryReconcileMirrorPods` calls
/// `CreateMirrorPod` before the pod informer has delivered the mirror pod that survived the
/// restart, and `CreateMirrorPod`'s hash check reads the empty object `Create` returns with the
/// error, so it reports AlreadyExists even for a matching mirror pod (mirror_client.go, seen after
/// every restart of the real kubelet v1.34.4). Info.
fn mirror_start_race(logs: &Logs<'_>, pod: &str, group: &[&LoggedEvent]) -> Finding {
    let mut target = split_pod(pod);
    target.uid = static_uid(logs, pod).unwrap_or_default();
    let mut f = finding(
        FindingKind::MirrorPodCreateFailed,
        Severity::Info,
        format!(
            "the kubelet's creation of the mirror pod of static pod {pod} met the existing one \
             (AlreadyExists, {}, never twice within {}): the start race of a kubelet restart, benign",
            plural(records(group), "record", "records"),
            human(MIRROR_REFUSED_AGAIN)
        ),
        "kubelet.go tryReconcileMirrorPods and pod/mirror_client.go CreateMirrorPod: after a kubelet \
         start the mirror pod is created before the pod informer has delivered the one that exists, \
         and CreateMirrorPod compares the hash on the empty object Create returns with the error, so \
         the refusal is logged even when the existing mirror pod matches; once the informer has it, \
         the kubelet stops creating",
        format!(
            "none; if it repeats at every sync, the pod of that name is not this static pod's \
             mirror pod: kubectl get pod -n {} {} -o yaml | grep config.mirror",
            sh(&target.namespace),
            sh(&target.name)
        ),
    );
    f.pod = Some(target);
    f.evidence = quote(group);
    f
}

/// The transport errors of a request that never reached an API server serving it, as Go's
/// `net/http` and `net` word them, with what each says: the kubelet's `Post …/pods` failed
/// before any API server judged the mirror pod.
const UNREACHABLE: &[(&str, &str)] = &[
    ("connection refused", "connection refused"),
    ("no route to host", "no route to host"),
    ("i/o timeout", "i/o timeout"),
    ("TLS handshake timeout", "TLS handshake timeout"),
    ("connection reset by peer", "connection reset"),
    ("http2: client connection lost", "connection lost"),
    ("Client.Timeout exceeded", "request timeout"),
    (
        "the server is currently unable to handle the request",
        "API server unavailable (503)",
    ),
];

/// How long the kubelet may fail to reach the API server with its mirror pods before it is more
/// than a start: a static API server comes up within a minute or two of its kubelet, and a
/// control plane node's kubelet logs these refusals until it does.
const API_UNREACHABLE_FOR: SignedDuration = SignedDuration::from_mins(10);

/// What keeps the request of `text` from the API server, if it never reached one
/// ([`UNREACHABLE`]).
fn api_unreachable(text: &str) -> Option<&'static str> {
    UNREACHABLE
        .iter()
        .find(|(wording, _)| text.contains(wording))
        .map(|(_, how)| *how)
}

/// The kubelet's `CreateMirrorPod` could not reach the API server (`Post …: dial tcp …:
/// connection refused`): no API server refused the mirror pod, none was serving. A kubelet
/// that runs its own API server as a static pod logs it at every start until that pod serves
///; info while it lasts less than [`API_UNREACHABLE_FOR`], a warning
/// when the API server stays out of reach longer (then every API call of the kubelet fails,
/// and the mirror pod is the least of it).
fn mirror_api_unreachable(
    logs: &Logs<'_>,
    pod: &str,
    group: &[&LoggedEvent],
    how: &str,
) -> Finding {
    let mut target = split_pod(pod);
    target.uid = static_uid(logs, pod).unwrap_or_default();
    let lasting = span(group) >= API_UNREACHABLE_FOR;
    let summary = if lasting {
        format!(
            "the kubelet cannot reach the API server to create the mirror pod of static pod {pod} ({how}, {}{}): \
             the API server has been out of reach for {} or more, so no mirror pod, status or node update of this \
             kubelet reaches it",
            plural(records(group), "record", "records"),
            over(group),
            human(API_UNREACHABLE_FOR)
        )
    } else {
        format!(
            "the kubelet could not reach the API server to create the mirror pod of static pod {pod} ({how}, {}{}): \
             no API server was serving yet, as at a control plane node's start (a static kube-apiserver starting); \
             the kubelet creates it at a later sync",
            plural(records(group), "record", "records"),
            over(group)
        )
    };
    let mut f = finding(
        FindingKind::MirrorPodCreateFailed,
        if lasting {
            Severity::Warning
        } else {
            Severity::Info
        },
        summary,
        "pod/mirror_client.go CreateMirrorPod: the kubelet creates a mirror pod for every static pod \
         at each sync; a request that never reached an API server fails in the transport (net/http), \
         not with a refusal",
        if lasting {
            "check the API server the kubelet's kubeconfig names (a static kube-apiserver: crictl ps \
             --name kube-apiserver -a and its logs; else the load balancer in front of it) and this \
             node's route to it"
                .to_string()
        } else {
            format!(
                "none if it stops once the API server serves; else kubectl get pod -n {} {} and \
                 the API server the kubelet's kubeconfig names",
                sh(&target.namespace),
                sh(&target.name)
            )
        },
    );
    f.pod = Some(target);
    f.evidence = quote(group);
    f
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    mirror_pod_create_failed(input.logs, out);
}
