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
        // The API server's words: the error field of a structured line, unescaped.
        let latest_error = group
            .last()
            .and_then(|e| e.event.error.as_deref())
            .unwrap_or(latest);
        let forbidden = (cause == Some(Cause::Forbidden)).then(|| Forbidden::of(latest_error));
        let why = match (&webhook, cause) {
            (Some(w), _) => format!("refused by the admission webhook {w}"),
            _ if no_namespace => format!("its namespace {} does not exist", target.namespace),
            (None, Some(Cause::Forbidden)) => {
                forbidden.as_ref().map_or_else(String::new, Forbidden::says)
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
                (None, Some(Cause::Forbidden)) if !no_namespace => forbidden
                    .as_ref()
                    .map_or_else(String::new, |f| f.fix(&target.namespace)),
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

/// Which admission refused a mirror pod (`pods "<name>" is forbidden: <reason>`), read from the
/// API server's reason.
enum Forbidden {
    /// NodeRestriction: `node "<n>" can only create pods with spec.nodeName set to itself`, a
    /// node creating a pod it may not.
    NodeRestriction(String),
    /// PodSecurityPolicy (1.21 and before): `no providers available to validate pod request`, or
    /// `unable to validate against any pod security policy`: no policy the node may use admits it.
    PodSecurityPolicy(String),
    /// Pod Security admission: `violates PodSecurity "<level>:<version>": …` (the namespace's
    /// `pod-security.kubernetes.io/enforce` label).
    PodSecurity(String),
    /// The static pod's spec uses what no mirror pod may: the ServiceAccount admission's `a mirror
    /// pod may not reference service accounts` (or `secrets`), NodeRestriction's `node "<n>" can
    /// not create pods that reference secrets, configmaps, or persistentvolumeclaims` (`… that use
    /// …`). The manifest is at fault, not the node's rights.
    MirrorPodSpec(String),
    /// The namespace is being deleted: `unable to create new content in namespace <ns> because
    /// it is being terminated`.
    Terminating(String),
    /// Any other reason, quoted.
    Other(String),
}

impl Forbidden {
    fn of(text: &str) -> Forbidden {
        let reason = text
            .split_once("is forbidden: ")
            .map_or("", |(_, r)| r)
            .trim()
            .trim_end_matches(['"', '\\']);
        let reason: String = reason.chars().take(200).collect();
        if reason.contains("a mirror pod may not reference")
            || reason.contains("can not create pods that reference")
            || reason.contains("can not create pods that use")
        {
            Forbidden::MirrorPodSpec(reason)
        } else if reason.contains("can only create pods with spec.nodeName")
            || reason.contains("can only create mirror pods")
            || reason.contains("NodeRestriction")
        {
            Forbidden::NodeRestriction(reason)
        } else if reason.contains("no providers available to validate pod request")
            || reason.contains("unable to validate against any pod security policy")
        {
            Forbidden::PodSecurityPolicy(reason)
        } else if reason.contains("violates PodSecurity") {
            Forbidden::PodSecurity(reason)
        } else if reason.contains("because it is being terminated") {
            Forbidden::Terminating(reason)
        } else {
            Forbidden::Other(reason)
        }
    }

    /// The summary's words: who refused, and the API server's reason.
    fn says(&self) -> String {
        match self {
            Forbidden::NodeRestriction(r) => format!("forbidden by NodeRestriction ({r})"),
            Forbidden::PodSecurityPolicy(r) => {
                format!(
                    "forbidden by PodSecurityPolicy: no policy the node may use admits it ({r})"
                )
            }
            Forbidden::PodSecurity(r) => format!("forbidden by Pod Security admission ({r})"),
            Forbidden::MirrorPodSpec(r) => {
                format!("the static pod's spec uses what no mirror pod may ({r})")
            }
            Forbidden::Terminating(r) => format!("its namespace is being deleted ({r})"),
            Forbidden::Other(r) if r.is_empty() => "forbidden".to_string(),
            Forbidden::Other(r) => format!("forbidden: {r}"),
        }
    }

    /// The first thing to run, in namespace `ns`.
    fn fix(&self, ns: &str) -> String {
        let ns = sh(ns);
        match self {
            Forbidden::NodeRestriction(_) => format!(
                "the node's name and the static pod's spec.nodeName differ: compare kubectl get node \
                 with the kubelet's --hostname-override; kubectl get ns {ns}"
            ),
            Forbidden::PodSecurityPolicy(_) => format!(
                "kubectl get psp, and a (Cluster)RoleBinding granting use of one to the nodes \
                 (system:nodes) in namespace {ns}; or turn the PodSecurityPolicy admission plugin off"
            ),
            Forbidden::PodSecurity(_) => format!(
                "kubectl get ns {ns} --show-labels (pod-security.kubernetes.io/enforce): exempt the \
                 namespace or loosen its level, or fix the static pod's manifest"
            ),
            Forbidden::MirrorPodSpec(_) => "remove it from the static pod's manifest (in the \
                 kubelet's staticPodPath): a static pod may not name a service account \
                 (serviceAccountName) nor use secrets, config maps or persistent volume claims; \
                 the kubelet runs the pod, but the API server never shows it"
                .to_string(),
            Forbidden::Terminating(_) => format!(
                "kubectl get ns {ns} -o yaml (its finalizers): the mirror pod is created once the \
                 namespace is gone and made again"
            ),
            Forbidden::Other(_) => format!(
                "the API server's reason above names the admission plugin or rule; kubectl auth \
                 can-i create pods -n {ns} --as system:node:<node> --as-group system:nodes"
            ),
        }
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
    ("context deadline exceeded", "request timeout"),
    (": EOF", "connection closed (EOF)"),
    ("x509: ", "TLS: the API server's certificate is not trusted"),
    (
        "the server is currently unable to handle the request",
        "API server unavailable (503)",
    ),
];

/// The longest gap between two refusals of one outage: the kubelet retries the mirror pod at
/// every sync of the static pod (`syncFrequency`, 1 minute, and at once on a pod change), so a
/// gap longer than a few syncs is two outages, not one.
const SAME_OUTAGE: SignedDuration = SignedDuration::from_mins(5);

/// The longest run of `group`'s records (their folded repeats included) with no gap over
/// [`SAME_OUTAGE`]: how long the API server stayed out of reach at once.
fn longest_outage(group: &[&LoggedEvent]) -> SignedDuration {
    longest_run(group, SAME_OUTAGE)
}

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
    let lasting = longest_outage(group) >= API_UNREACHABLE_FOR;
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
