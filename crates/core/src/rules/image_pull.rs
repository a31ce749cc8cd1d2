//! `ImagePullFailing`: pods whose container images the node cannot pull.
//!
//! The kubelet's pod worker calls `EnsureImageExists` (`images/image_manager.go`) before it
//! creates each container; a failed CRI `PullImage` fails the sync with `ErrImagePull` and
//! puts the image in a back-off (10 s doubling to 5 min) during which every sync fails at once
//! with `ImagePullBackOff` (`Back-off pulling image "<ref>"`). The pod worker logs each as
//! `Error syncing pod, skipping` with `failed to "StartContainer" for "<container>" with
//! ErrImagePull: …` (or `ImagePullBackOff: …`); the CRI client logs `PullImage "<ref>" from
//! image service failed`, containerd `PullImage "<ref>" failed`.
//!
//! Whose fault it is decides the severity. A cause on the node (the registry out of the node's
//! reach, its certificate not trusted by the runtime, the registry limiting this node's
//! address, the image filesystem full, a pull slower than the runtime request timeout, layers
//! the runtime cannot unpack) is a warning when the pod still fails where the log ends: two
//! attempts or a back-off, nothing after showing the image pulled or a container of the pod
//! started, and the kubelet's log not going on [`STOPPED`] past its last failure. A cause in
//! the pod's spec (the image or tag does not exist, credentials refused) and a back-off whose
//! cause the records do not give are infos: the node is not at fault, or not shown to be.

use std::collections::BTreeMap;

use jiff::SignedDuration;

use crate::finding::{Finding, FindingKind, Severity};
use crate::logs::{EventKind, PlegType};
use crate::model::PodRef;

use super::logs::{
    LogInput, LoggedEvent, Logs, after, attempts, finding, going_away, kubelet_goes_on_after, line,
    over, plural, pod_list, quote, records,
};
use super::sandbox_create::pod_key;
use super::teardown::{error_text, quoted_after};

/// How long the kubelet's log must go on past a pod's last pull failure for the pod to count
/// as no longer failing: a pod in `ImagePullBackOff` is synced again at least every 5 min (the
/// back-off's cap) and logs each failed sync.
const STOPPED: SignedDuration = SignedDuration::from_mins(10);

/// Why a pull fails, from its error; the node's causes first (`Ord`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Why {
    /// The image filesystem is full (`no space left on device`).
    DiskFull,
    /// The runtime does not trust the registry's certificate (`x509: …`).
    Certificate,
    /// The registry is out of the node's reach: DNS, routes, proxies, firewalls (`dial tcp`,
    /// `no such host`, `i/o timeout`, `TLS handshake timeout`, `connection refused`).
    Unreachable,
    /// The registry limits pulls from this node's address (`toomanyrequests`, `429`).
    RateLimited,
    /// The pull ran past the runtime request timeout (2 min) or docker's progress deadline
    /// (`context deadline exceeded`, `context canceled`, `DeadlineExceeded`).
    TooSlow,
    /// The runtime fails to unpack the layers it fetched (`failed to extract layer`,
    /// `failed to unpack image`, a snapshot it cannot prepare).
    Unpack,
    /// The image or tag does not exist (`not found`, `manifest unknown`): the pod's spec.
    NotFound,
    /// The registry refuses the credentials (`unauthorized`, `pull access denied`,
    /// `authentication required`, `403 Forbidden`): the pod's pull secrets.
    Credentials,
    /// An error none of the above (`invalid reference format`): said as it is.
    Other,
    /// Only the back-off is logged (`Back-off pulling image`): the cause was in an earlier
    /// record.
    Unknown,
}

impl Why {
    /// Whether the cause is the node's, not the pod's spec's.
    fn nodes(self) -> bool {
        self < Why::NotFound
    }
}

fn why_of(err: &str) -> Why {
    let has = |ps: &[&str]| ps.iter().any(|p| err.contains(p));
    if has(&["no space left on device"]) {
        Why::DiskFull
    } else if has(&["x509: "]) {
        Why::Certificate
    } else if has(&["toomanyrequests", "429 Too Many Requests", "rate limit"]) {
        Why::RateLimited
    } else if has(&[
        "pull access denied",
        "unauthorized",
        "Unauthorized",
        "authentication required",
        "403 Forbidden",
        "denied: ",
    ]) {
        Why::Credentials
    } else if has(&[
        "dial tcp",
        "no such host",
        "i/o timeout",
        "TLS handshake timeout",
        "connection refused",
        "connection reset by peer",
        "network is unreachable",
        "no route to host",
        "Client.Timeout exceeded",
        "server misbehaving",
    ]) {
        Why::Unreachable
    } else if has(&[
        "context deadline exceeded",
        "context canceled",
        "DeadlineExceeded",
    ]) {
        Why::TooSlow
    } else if has(&[
        "failed to extract layer",
        "failed to unpack image",
        "failed to prepare extraction snapshot",
        "failed to register layer",
    ]) {
        Why::Unpack
    } else if has(&[
        "not found",
        "manifest unknown",
        "does not exist",
        "NotFound",
    ]) {
        Why::NotFound
    } else if has(&["Back-off pulling image", "ImagePullBackOff"]) || err.trim().is_empty() {
        Why::Unknown
    } else {
        Why::Other
    }
}

/// Whether the pod worker's `Error syncing pod` record `e` is an image pull failure: `failed to
/// "StartContainer" for "<c>" with ErrImagePull: …` or `… with ImagePullBackOff: …`, its quotes
/// escaped once (structured klog) or not (legacy klog).
///
/// dockershim's `for "POD"` is the pod's infra container, its sandbox: `SandboxCreateFailing`'s.
fn syncing_failed_pull(e: &LoggedEvent) -> bool {
    (e.text.contains("with ErrImagePull") || e.text.contains("with ImagePullBackOff"))
        && (e.text.contains("failed to \"StartContainer\"")
            || e.text.contains("failed to \\\"StartContainer\\\""))
        && !e.text.contains("for \"POD\"")
        && !e.text.contains("for \\\"POD\\\"")
}

/// Whether `e` is a back-off, not a pull that failed.
fn back_off(e: &LoggedEvent) -> bool {
    e.text.contains("ImagePullBackOff") || e.text.contains("Back-off pulling image")
}

/// The image a record names: its `image="<ref>"` field, else the reference quoted after
/// `image` (`Back-off pulling image \"<ref>\"`, `failed to pull and unpack image "<ref>"`,
/// `PullImage "<ref>"`).
fn image_of(e: &LoggedEvent) -> Option<String> {
    [
        " image=",
        "pulling image ",
        "pull image ",
        "unpack image ",
        "PullImage ",
    ]
    .iter()
    .find_map(|k| quoted_after(&e.text, k))
    .map(str::to_string)
}

/// A pod that fails to pull.
struct Pulling<'l> {
    pod: Option<PodRef>,
    images: Vec<String>,
    failures: Vec<&'l LoggedEvent>,
    /// The record whose error names the cause.
    named: Option<&'l LoggedEvent>,
}

/// The later of two records ([`after`]), `b` when there is no `a`.
fn later<'l>(a: Option<&'l LoggedEvent>, b: &'l LoggedEvent) -> &'l LoggedEvent {
    match a {
        Some(a) if !after(b, a) => a,
        _ => b,
    }
}

/// What the pods' pulls are judged against, each built once: the latest sign of each pod
/// started or its image pulled, by pod and by image, and each image's latest pull error.
#[derive(Default)]
pub(super) struct Index<'l> {
    /// The latest PLEG `ContainerStarted` of a container (not of the pod's sandbox: its pause
    /// container starts before any pull), event `Started` or `Pulled` (V3+), by pod.
    pub(super) mended_pod: BTreeMap<String, &'l LoggedEvent>,
    /// The latest pull of each image (containerd's `PullImage "<ref>" returns image
    /// reference`, the event `Pulled`): the runtime's names no pod.
    pulled_image: BTreeMap<String, &'l LoggedEvent>,
    /// Each image's latest pull error (the CRI client's, the runtime's, the events'), with its
    /// cause: a back-off's cause.
    image_cause: BTreeMap<String, (Why, &'l LoggedEvent)>,
}

impl<'l> Index<'l> {
    pub(super) fn new(logs: &Logs<'l>) -> Index<'l> {
        let mut ix = Index::default();
        let pleg_started = EventKind::Pleg(PlegType::ContainerStarted);
        for e in logs.of(&[
            pleg_started,
            EventKind::ContainerStartedLogged,
            EventKind::ImagePulled,
        ]) {
            let sandbox = e.event.kind == pleg_started
                && e.event
                    .ids
                    .container_id
                    .as_deref()
                    .is_some_and(|c| logs.sandbox_pod.contains_key(c));
            if !sandbox && let Some(k) = pod_key(logs, e) {
                let latest = later(ix.mended_pod.get(&k).copied(), e);
                ix.mended_pod.insert(k, latest);
            }
            if e.event.kind == EventKind::ImagePulled
                && let Some(i) = image_of(e)
            {
                let latest = later(ix.pulled_image.get(&i).copied(), e);
                ix.pulled_image.insert(i, latest);
            }
        }
        for e in logs.of(&[EventKind::RuntimeCallFailed, EventKind::ImagePullFailed]) {
            if e.event.kind == EventKind::RuntimeCallFailed && !e.text.contains("PullImage") {
                continue;
            }
            let Some(i) = image_of(e) else { continue };
            let why = why_of(&error_text(e));
            match ix.image_cause.get(&i) {
                Some((_, latest)) if !after(e, latest) => {}
                _ => {
                    ix.image_cause.insert(i, (why, e));
                }
            }
        }
        ix
    }

    /// Whether the pod `key` started, or one of its `images` was pulled, after `last`.
    fn mended(&self, key: &str, images: &[String], last: &LoggedEvent) -> bool {
        self.mended_pod.get(key).is_some_and(|e| after(e, last))
            || images
                .iter()
                .filter_map(|i| self.pulled_image.get(i))
                .any(|e| after(e, last))
    }
}

pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    let logs = input.logs;
    let mut by_pod: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::ErrorSyncingPod, EventKind::ImagePullFailed]) {
        if e.event.kind == EventKind::ErrorSyncingPod && !syncing_failed_pull(e) {
            continue;
        }
        if let Some(k) = pod_key(logs, e) {
            by_pod.entry(k).or_default().push(e);
        }
    }
    if by_pod.is_empty() {
        return;
    }
    let ix = Index::new(logs);
    let mut by_why: BTreeMap<(Why, bool), Vec<Pulling<'_>>> = BTreeMap::new();
    for (key, mut group) in by_pod {
        group.sort_by_key(|e| e.time);
        let last = *group.last().expect("a group has a record");
        let mut images: Vec<String> = group.iter().filter_map(|e| image_of(e)).collect();
        images.sort();
        images.dedup();
        if ix.mended(&key, &images, last) {
            continue;
        }
        // The cause: the latest failure's the pod's own records give, else its images' pulls'
        // (a registry out of reach, then a tag that does not exist: the tag).
        let own = group
            .iter()
            .rev()
            .find(|e| !back_off(e))
            .map(|e| (why_of(&error_text(e)), *e));
        let (why, named) = own
            .or_else(|| {
                images
                    .iter()
                    .filter_map(|i| ix.image_cause.get(i).copied())
                    .reduce(|a, b| if after(b.1, a.1) { b } else { a })
            })
            .map_or((Why::Unknown, None), |(w, e)| (w, Some(e)));
        let pod = logs.pod_of(input.view, &group, None, None);
        // A pod going away waits for no image: deleted while in back-off.
        if going_away(logs, pod.as_ref(), group[0]) {
            continue;
        }
        let failing = (attempts(&group) >= 2 || group.iter().any(|e| back_off(e)))
            && !kubelet_goes_on_after(logs, &group, STOPPED);
        by_why.entry((why, failing)).or_default().push(Pulling {
            pod,
            images,
            failures: group,
            named: named.filter(|_| why != Why::Unknown),
        });
    }
    for ((why, failing), pods) in by_why {
        out.push(pull_finding(why, failing, &pods));
    }
}

/// The finding for the pods whose pulls fail for `why`, still `failing` where the log ends or
/// not.
fn pull_finding(why: Why, failing: bool, pods: &[Pulling<'_>]) -> Finding {
    let severity = if why.nodes() && failing {
        Severity::Warning
    } else {
        Severity::Info
    };
    let listed = pod_list(pods.iter().map(|p| (p.pod.as_ref(), p.images.join(", "))));
    let mut failures: Vec<&LoggedEvent> = pods.iter().flat_map(|p| p.failures.clone()).collect();
    let named = pods.iter().find_map(|p| p.named);
    let error = named.map(super::teardown::error_quote);
    failures.sort_by_key(|e| e.time);
    let (cause, fix) = reading(why);
    let pods_said = match pods.len() {
        1 => "a pod cannot".to_string(),
        n => format!("{n} pods cannot"),
    };
    let state = if failing {
        "and nothing after shows the image pulled or the container started"
    } else if attempts(&failures) < 2 && !failures.iter().any(|e| back_off(e)) {
        "once, not retried in the logs"
    } else {
        "and the log goes on without it failing again (the pod deleted, or the pull mended)"
    };
    let mut f = finding(
        FindingKind::ImagePullFailing,
        severity,
        format!(
            "{pods_said} pull {} image: {cause}{} ({}{}, {state}): {}",
            if pods.len() == 1 { "its" } else { "their" },
            error.map_or_else(String::new, |e| format!(" ({e})")),
            plural(records(&failures), "failed sync", "failed syncs"),
            over(&failures),
            listed,
        ),
        "images/image_manager.go EnsureImageExists (CRI PullImage; the image's back-off 10 s \
         doubling to 5 min, ImagePullBackOff), kuberuntime_manager.go SyncPod",
        fix_for(fix, pods),
    );
    if let [one] = pods {
        f.pod = one.pod.clone();
    }
    f.evidence = quote(&failures);
    if let Some(c) = named.filter(|c| !failures.iter().any(|e| std::ptr::eq(*e, *c))) {
        f.evidence.push(line(c));
    }
    f
}

/// `fix` with the image in place of `<image>` when the pods name one image.
fn fix_for(fix: &str, pods: &[Pulling<'_>]) -> String {
    let mut images = pods.iter().flat_map(|p| &p.images);
    match (
        images.next(),
        images.all(|i| Some(i) == pods[0].images.first()),
    ) {
        (Some(image), true) => fix.replace("<image>", image),
        _ => fix.to_string(),
    }
}

/// What a cause means and what to do.
fn reading(why: Why) -> (&'static str, &'static str) {
    match why {
        Why::DiskFull => (
            "the runtime's image filesystem is full",
            "crictl imagefsinfo; df -h /var/lib/containerd (or /var/lib/docker); crictl rmi \
             --prune; the kubelet's imageGCHighThresholdPercent",
        ),
        Why::Certificate => (
            "the runtime does not accept the registry's certificate",
            "an unknown authority: add the registry's CA for the runtime \
             (/etc/containerd/certs.d/<registry>/ca.crt, or the system trust store) and restart \
             it; expired or not yet valid: the registry's certificate, or this node's clock \
             (timedatectl); crictl pull <image> on the node checks",
        ),
        Why::Unreachable => (
            "the node does not reach the registry",
            "crictl pull <image> on the node; the registry's name in the node's DNS, the \
             runtime's proxy (systemctl show containerd -p Environment: HTTPS_PROXY, NO_PROXY), \
             routes and firewalls to the registry, a mirror in /etc/containerd/config.toml",
        ),
        Why::RateLimited => (
            "the registry limits pulls from this node's address",
            "pull with an account (imagePullSecrets) or through a pull-through cache or mirror; \
             Docker Hub allows 100 anonymous pulls per 6 h per address",
        ),
        Why::TooSlow => (
            "the pull runs past the runtime's deadline",
            "time crictl pull <image> on the node; the registry's throughput, a mirror or a \
             smaller image; the kubelet's runtimeRequestTimeout (2 min)",
        ),
        Why::Unpack => (
            "the runtime cannot unpack the image's layers",
            "journalctl -u containerd around the pull; the snapshotter's filesystem (overlayfs \
             support, disk errors); crictl rmi <image> and pull again",
        ),
        Why::NotFound => (
            "the image or its tag does not exist (the pod's spec, not the node)",
            "kubectl get pod <pod> -o jsonpath='{.spec.containers[*].image}': the registry, \
             repository and tag",
        ),
        Why::Credentials => (
            "the registry refuses the pull's credentials (the pod's pull secrets, not the node)",
            "the pod's imagePullSecrets and its service account's; kubectl get secret <secret> \
             -o jsonpath='{.data.\\.dockerconfigjson}' | base64 -d names the registry",
        ),
        Why::Other => (
            "the pull fails",
            "the error names what fails; crictl pull <image> on the node tells whether the node \
             can pull it",
        ),
        Why::Unknown => (
            "the image is in back-off, its error not in these records",
            "kubectl describe pod <pod> (Events: Failed to pull image …) or the kubelet's earlier \
             ErrImagePull record give the error; crictl pull <image> on the node tells whether \
             the node can pull it",
        ),
    }
}
