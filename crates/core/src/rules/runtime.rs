//! `RuntimeUnhealthy`: PLEG not healthy, container runtime down.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

// === RuntimeUnhealthy ===

/// What a kubelet before 1.14 said for a PLEG that has not relisted yet, in place of "pleg has
/// yet to be successful": its `Healthy` measured `time.Since` the zero time, which Go's
/// `time.Duration` saturates to its largest value.
const PLEG_NEVER_RELISTED: &str = "last seen active 2562047h47m16.854775807s ago";

/// Whether `e` is a PLEG not yet relisted since the kubelet started: "pleg has yet to be
/// successful", or [`PLEG_NEVER_RELISTED`].
fn pleg_not_yet_relisted(e: &LoggedEvent) -> bool {
    e.text.contains("pleg has yet to be successful") || e.text.contains(PLEG_NEVER_RELISTED)
}

/// "pleg was last seen active <duration> ago", the longest in the group (not
/// [`PLEG_NEVER_RELISTED`], which is no duration).
pub(super) fn pleg_inactive(group: &[&LoggedEvent]) -> Option<SignedDuration> {
    group
        .iter()
        .filter(|e| !e.text.contains(PLEG_NEVER_RELISTED))
        .filter_map(|e| {
            let t = &e.text;
            let at = t.find("last seen active ")? + "last seen active ".len();
            let d = t[at..].split(' ').next()?;
            crate::startup::values::go_duration(d)
        })
        .max()
}

/// How long `pleg/generic.go` `Healthy` tolerates a PLEG that has not relisted
/// (`relistThreshold`).
const PLEG_RELIST_THRESHOLD: SignedDuration = SignedDuration::from_mins(3);
/// The gap that ends a run of "pleg has yet to be successful" records: the kubelet's `syncLoop`
/// logs one at least every 5 s (its backoff) while the PLEG has not relisted.
const PLEG_STARTUP_GAP: SignedDuration = SignedDuration::from_secs(30);

/// Drops the "pleg has yet to be successful" records of a kubelet start (or their older form,
/// [`pleg_not_yet_relisted`]): `Healthy` returns that error until the PLEG's first relist, so
/// every start logs it for a moment (seen on the real kubelet v1.34.4). A run of them (no gap
/// over [`PLEG_STARTUP_GAP`]) counts only when it lasts [`PLEG_RELIST_THRESHOLD`]: a PLEG that
/// never relists. Other PLEG records always count.
fn without_startup_pleg(pleg: Vec<&LoggedEvent>) -> Vec<&LoggedEvent> {
    let startup = pleg_not_yet_relisted;
    let mut starts: Vec<&LoggedEvent> = pleg.iter().copied().filter(|e| startup(e)).collect();
    starts.sort_by_key(|e| e.time);
    let span = |a: &LoggedEvent, b: &LoggedEvent| match (a.time, b.time) {
        (Some(a), Some(b)) => b.duration_since(a),
        _ => SignedDuration::ZERO,
    };
    // Runs of records with no gap over PLEG_STARTUP_GAP, as index ranges into `starts`.
    let mut kept: Vec<&LoggedEvent> = Vec::new();
    let mut first = 0;
    for i in 0..starts.len() {
        let ends = i + 1 == starts.len() || span(starts[i], starts[i + 1]) > PLEG_STARTUP_GAP;
        if ends {
            if span(starts[first], starts[i]) >= PLEG_RELIST_THRESHOLD {
                kept.extend(&starts[first..=i]);
            }
            first = i + 1;
        }
    }
    let kept: std::collections::HashSet<*const LoggedEvent> =
        kept.into_iter().map(std::ptr::from_ref).collect();
    pleg.into_iter()
        .filter(|e| !startup(e) || kept.contains(&std::ptr::from_ref(*e)))
        .collect()
}

/// `kubelet.go` `syncLoop` with `pleg/generic.go` `Healthy`: "Skipping pod synchronization" with
/// "PLEG is not healthy" or "container runtime is down": no pod on the node is started, stopped
/// or removed. Critical. The CRI calls timing out at the same time (`ListContainers`,
/// `ListPodSandbox`, `Status` with DeadlineExceeded) are its evidence; on their own they are not
/// a finding. Without PLEG trouble, the calls that create a pod's sandbox or containers
/// (`CreateContainer in sandbox … from runtime service failed`, `RunPodSandbox …`) timing out
/// are a warning: the runtime answers too slowly for the pods to start (the runtime request
/// timeout, 2 minutes by default, ran out), though it still lists its containers.
pub(super) fn runtime_unhealthy(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let pleg: Vec<&LoggedEvent> = logs
        .all
        .iter()
        .filter(|e| e.event.kind == EventKind::PlegUnhealthy)
        .collect();
    let pleg = without_startup_pleg(pleg);
    let timeouts = timed_out(
        logs,
        &[
            EventKind::RuntimeCallFailed,
            EventKind::CreateContainerFailed,
        ],
    );
    if pleg.is_empty() {
        slow_creates(logs, out);
        return;
    }
    let down = pleg
        .iter()
        .any(|e| e.text.contains("container runtime is down"));
    let mut all: Vec<&LoggedEvent> = pleg.iter().chain(timeouts.iter()).copied().collect();
    all.sort_by_key(|e| e.time);
    let mut f = finding(
        FindingKind::RuntimeUnhealthy,
        Severity::Critical,
        format!(
            "PLEG is not healthy{}{}{}: the kubelet starts, stops and removes no pod on this node ({}{})",
            pleg_inactive(&pleg).map_or(String::new(), |d| format!(
                " (last active {} ago)",
                human(d)
            )),
            if down {
                " and the container runtime is down"
            } else {
                ""
            },
            if timeouts.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} to the runtime timed out",
                    plural(records(&timeouts), "call", "calls")
                )
            },
            plural(records(&all), "record", "records"),
            over(&all)
        ),
        "kubelet.go syncLoop and pleg/generic.go Healthy: when the PLEG has not relisted within 3 minutes the \
         kubelet skips every pod sync and the node goes NotReady",
        "crictl info and crictl ps (does the runtime answer?); the runtime's log (journalctl -u containerd, \
         -u crio or -u docker) for hung shims or storage errors; restart the runtime (systemctl restart \
         containerd, crio or docker)"
            .to_string(),
    );
    f.evidence = quote(&all);
    out.push(f);
}

/// The events of `kinds` whose cause is a timeout (DeadlineExceeded), in reading order.
fn timed_out<'l>(logs: &Logs<'l>, kinds: &[EventKind]) -> Vec<&'l LoggedEvent> {
    logs.all
        .iter()
        .filter(|e| kinds.contains(&e.event.kind) && e.event.cause == Some(Cause::Timeout))
        .collect()
}

/// The warning of [`runtime_unhealthy`] without PLEG trouble: creating containers or pod
/// sandboxes times out.
fn slow_creates(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let creates = timed_out(
        logs,
        &[
            EventKind::CreateContainerFailed,
            EventKind::CreatePodSandboxFailed,
        ],
    );
    if creates.is_empty() {
        return;
    }
    let sandboxes: BTreeSet<String> = creates.iter().filter_map(|e| logs.sandbox_key(e)).collect();
    // One call is logged by up to three layers (the CRI client, createPodSandbox, SyncPod) within
    // microseconds: calls are counted as each pod's attempts, a record naming no pod joining a
    // named one of its attempt.
    let mut by_pod: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    let mut podless: Vec<&LoggedEvent> = Vec::new();
    for e in &creates {
        match super::sandbox_create::pod_key(logs, e) {
            Some(k) => by_pod.entry(k).or_default().push(e),
            None => podless.push(e),
        }
    }
    let mut named: Vec<Timestamp> = by_pod.values().flatten().filter_map(|e| e.time).collect();
    named.sort_unstable();
    podless.retain(|e| !within_an_attempt(&named, e));
    let calls = by_pod.values().map(|g| attempts(g)).sum::<usize>()
        + if podless.is_empty() {
            0
        } else {
            attempts(&podless)
        };
    let pods: Vec<PodRef> = by_pod
        .values()
        .filter_map(|g| logs.pod_of(&NodeView::empty(), g, None, None))
        .collect();
    let names: Vec<String> = pods.iter().map(pod_label).collect();
    // Other calls timing out beside them (the container GC, a status read) say the same.
    let others = timed_out(
        logs,
        &[EventKind::RuntimeCallFailed, EventKind::ContainerGcFailed],
    );
    let mut f = finding(
        FindingKind::RuntimeUnhealthy,
        Severity::Warning,
        format!(
            "the runtime is too slow to create containers: {} timed out (DeadlineExceeded){}; \
             their pods do not start and the kubelet recreates their sandboxes ({}{}){}",
            plural(calls.max(1), "create call", "create calls"),
            if names.is_empty() {
                format!(" in {}", plural(sandboxes.len().max(1), "sandbox", "sandboxes"))
            } else {
                format!(" for {} ({})", plural(names.len(), "pod", "pods"), names.join(", "))
            },
            plural(records(&creates), "record", "records"),
            over(&creates),
            if others.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} to the runtime timed out too",
                    plural(records(&others), "other call", "other calls")
                )
            }
        ),
        "kuberuntime_container.go startContainer and kuberuntime_sandbox.go createPodSandbox: the CRI \
         CreateContainer / RunPodSandbox call runs out of the runtime request timeout (2m); the pod \
         worker retries at the next sync and the sandbox may be killed and recreated (SandboxChanged)",
        "crictl info and the runtime's log around these times (journalctl -u containerd, -u docker or \
         -u crio): image unpacking, a slow disk (iostat), or a hung mount; if it persists, restart the runtime"
            .to_string(),
    );
    f.sandbox_id = (sandboxes.len() == 1)
        .then(|| sandboxes.iter().next().cloned())
        .flatten();
    if let [pod] = pods.as_slice() {
        f.pod = Some(pod.clone());
    }
    f.evidence = quote(&creates);
    f.evidence.extend(quote(&others));
    out.push(f);
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    runtime_unhealthy(input.logs, out);
}
