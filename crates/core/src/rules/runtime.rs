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
    crashed(logs, out);
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
    // syncLoop's "container runtime is down" without the PLEG: the runtime's Status failing.
    let (pleg, runtime_down): (Vec<&LoggedEvent>, Vec<&LoggedEvent>) = pleg
        .into_iter()
        .partition(|e| e.text.contains("PLEG") || !e.text.contains("container runtime is down"));
    if pleg.is_empty() {
        let before = out.len();
        slow_creates(logs, out);
        slow_syncs(logs, out);
        not_answering(logs, &runtime_down, out);
        if !out[before..]
            .iter()
            .any(|f| f.kind == FindingKind::RuntimeUnhealthy)
        {
            hung(logs, out);
        }
        return;
    }
    let down = pleg
        .iter()
        .chain(&runtime_down)
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

/// Go's `runtime/panic.go` (`fatal error: …`, `panic: …`) in the container runtime's log: the
/// runtime crashed. A warning, whatever came after: systemd restarts it and its containers keep
/// running under their shims, but no pod is started, stopped or inspected until it is back, and
/// a Go fatal error (`unexpected signal during runtime execution`, `concurrent map writes`) is
/// a bug or failing memory that comes back. The runtime's crashes only: its log, or a journal's
/// records of containerd, CRI-O or dockerd.
fn crashed(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    use crate::logs::Component;
    let crashes: Vec<&LoggedEvent> = logs
        .of(&[EventKind::GoCrash])
        .filter(|e| match e.event.component {
            Some(Component::Containerd | Component::Crio | Component::Docker) => true,
            None => e.log == LogKind::Runtime,
            Some(_) => false,
        })
        .collect();
    let Some(first) = crashes.first() else {
        return;
    };
    // The unit the crash's record or the logs name (`teardown::runtime_unit`).
    let program = super::teardown::runtime_unit(first, logs.runtime);
    let said = first
        .text
        .find("fatal error: ")
        .or_else(|| first.text.find("panic: "))
        .map_or(&*first.text, |at| &first.text[at..]);
    let mut f = finding(
        FindingKind::RuntimeUnhealthy,
        Severity::Warning,
        format!(
            "{} crashed ({}{}): no pod on this node is started, stopped or inspected until it \
             is back, and such a crash comes back",
            program.unwrap_or("the container runtime"),
            cut_quote(said),
            if records(&crashes) > 1 {
                format!("; {} crashes{}", records(&crashes), over(&crashes))
            } else {
                String::new()
            }
        ),
        "Go runtime/panic.go: `fatal error:` (throw) and an unrecovered `panic:` end the process \
         after its goroutine dump; systemd restarts the runtime, its containers go on under their \
         shims, and the kubelet's CRI calls fail until it answers",
        format!(
            "journalctl -u {unit} around the crash for the goroutine dump (which call crashed), \
             and systemctl status {unit} (is it back?); report it upstream with the dump and \
             the version; `fatal error: unexpected signal` with a SIGSEGV in the Go runtime \
             itself points at memory: run a memory test on the node",
            unit = program.unwrap_or("containerd (or crio, docker)")
        ),
    );
    f.evidence = quote(&crashes);
    out.push(f);
}

/// At most 200 characters of `s`, cut at a character boundary.
fn cut_quote(s: &str) -> &str {
    match s.char_indices().nth(200) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// Whether a failed CRI call `e` never reached the runtime, or found it hung: its socket
/// refuses or is gone (`code = Unavailable` with `connection refused`, `no such file or
/// directory`), or the kubelet's own checks of it fail (`Container runtime sanity check
/// failed`, the PLEG's `GenericPLEG: Unable to retrieve pods`).
fn runtime_unreachable(e: &LoggedEvent) -> bool {
    // The calls that say so are the CRI client's (a call refused, the Status check, the PLEG's
    // listing); the other failures of an outage say it again.
    if e.event.kind != EventKind::RuntimeCallFailed {
        return false;
    }
    let t = &e.text;
    // The runtime's own socket refusing is gRPC's Unavailable; a CNI plugin's socket refusing
    // (multus-shim's, cilium.sock) comes back inside the runtime's answer as `code = Unknown`,
    // and is the plugin's (trial 6).
    let unavailable = (t.contains("code = Unavailable") || t.contains("code =Unavailable"))
        && (t.contains("connection refused")
            || t.contains("no such file or directory")
            || t.contains("error reading from server")
            || t.contains("transport is closing"));
    t.contains("Container runtime sanity check failed")
        || serves_no_cri(e)
        || t.contains("GenericPLEG: Unable to retrieve pods")
        || unavailable
        || t.contains("Cannot connect to the Docker daemon")
        || t.contains("cannot connect to Docker endpoint")
}

/// Whether a failed CRI call `e` found no CRI at the kubelet's endpoint: gRPC's `code =
/// Unimplemented desc = unknown service runtime.v1alpha2.RuntimeService` (or `runtime.v1.…`,
/// `ImageService`), what a containerd with its `cri` plugin disabled answers, docker's own
/// containerd socket, or a runtime too old for the kubelet's CRI version.
fn serves_no_cri(e: &LoggedEvent) -> bool {
    e.text.contains("unknown service runtime.v1")
}

/// Whether `e` shows the runtime answering: a sandbox or container it started, stopped or
/// removed, a container state change the PLEG saw.
fn runtime_answered(e: &LoggedEvent) -> bool {
    use EventKind::*;
    match e.event.kind {
        RunPodSandboxDone | StopPodSandboxDone | RemovePodSandboxDone | StopContainerDone
        | RemoveContainerDone | ContainerFinished | SandboxLoaded => true,
        Pleg(t) | PlegRelist(t) => t != crate::logs::PlegType::Other,
        _ => false,
    }
}

/// How long the runtime may not answer, then answer again, and be only an info: a runtime
/// restarted (an upgrade, a config change) is unreachable for seconds.
const RUNTIME_RESTART: SignedDuration = SignedDuration::from_mins(1);
/// How long syncLoop's "container runtime is down" may last with no call failing beside it: the
/// kubelet checks the runtime's Status every 5 s, the first right after it starts.
const STARTUP_RUNTIME_DOWN: SignedDuration = SignedDuration::from_secs(30);

/// How long syncLoop's "container runtime is down" must last, at the end of the kubelet's log, to
/// be an info when shorter than [`STARTUP_RUNTIME_DOWN`]: two of the kubelet's 5 s Status checks
/// apart.
const SHORT_RUNTIME_DOWN: SignedDuration = SignedDuration::from_secs(10);

/// How close to syncLoop's "container runtime is down" a CRI call timing out says the runtime
/// hangs.
const HUNG_BESIDE_DOWN: SignedDuration = SignedDuration::from_mins(1);

/// Records of the runtime not answering less than this apart are one outage.
const OUTAGE_GAP: SignedDuration = SignedDuration::from_mins(5);

/// `kubelet.go` `updateRuntimeUp` and `syncLoop`, the CRI client: the runtime does not answer
/// the kubelet (its socket refuses, its Status fails, or its calls time out within a minute of
/// syncLoop saying it is down: hung) while the PLEG has not yet gone
/// unhealthy. A warning when it lasts over [`RUNTIME_RESTART`] or the log holds no answer of
/// the runtime after it (still down when the log ends); an info when it answered again within
/// [`RUNTIME_RESTART`] (a restart). `runtime_down`: syncLoop's "container runtime is down"
/// records.
fn not_answering(logs: &Logs<'_>, runtime_down: &[&LoggedEvent], out: &mut Vec<Finding>) {
    // A CRI call timing out (DeadlineExceeded) within a minute of syncLoop saying the runtime
    // is down is the runtime hung, not a slow call: the kubelet's own Status check failed too.
    let mut down_times: Vec<Timestamp> = record_times(runtime_down).collect();
    down_times.sort_unstable();
    let beside_down = |e: &LoggedEvent| {
        e.time.is_some_and(|t| {
            let at = down_times.partition_point(|&d| d < t);
            [at.checked_sub(1), Some(at)]
                .into_iter()
                .flatten()
                .filter_map(|i| down_times.get(i))
                .any(|&d| d.duration_since(t).abs() <= HUNG_BESIDE_DOWN)
        })
    };
    let unreachable: Vec<&LoggedEvent> = logs
        .of(&[EventKind::RuntimeCallFailed])
        .filter(|e| {
            runtime_unreachable(e) || (e.event.cause == Some(Cause::Timeout) && beside_down(e))
        })
        .collect();
    // syncLoop says the runtime is down from a kubelet's start until its first Status check
    // (kubelets before 1.13 did for a second or two, seen in case 67): alone, its records count
    // only when they run past that, or, an info, when they hold two Status checks apart
    // ([`SHORT_RUNTIME_DOWN`], three records or more) where the kubelet's log ends: a runtime
    // still starting and one that is not running look alike until the 30 s are past.
    // syncLoop's word alone: only its records since the runtime last answered before the last
    // of them (a PLEG event, a sandbox run) are the outage; the ones before it ended.
    let tail: Vec<&LoggedEvent>;
    let runtime_down = if unreachable.is_empty() {
        tail = since_last_answer(logs, runtime_down);
        tail.as_slice()
    } else {
        runtime_down
    };
    let short = unreachable.is_empty() && span(runtime_down) < STARTUP_RUNTIME_DOWN;
    if short
        && (records(runtime_down) < 3
            || span(runtime_down) < SHORT_RUNTIME_DOWN
            || kubelet_goes_on_after(logs, runtime_down, RUNTIME_RESTART))
    {
        return;
    }
    let mut down: Vec<&LoggedEvent> = unreachable
        .into_iter()
        .chain(runtime_down.iter().copied())
        .collect();
    down.sort_by_key(|e| e.time);
    let longest = longest_run(&down, OUTAGE_GAP);
    let last = record_times(&down).max();
    let answered = last.is_some_and(|last| {
        logs.all
            .iter()
            .any(|e| e.time.is_some_and(|t| t > last) && runtime_answered(e))
    });
    if let Some(no_cri) = down.iter().find(|e| serves_no_cri(e)) {
        let mut f = finding(
            FindingKind::RuntimeUnhealthy,
            Severity::Critical,
            format!(
                "the kubelet's runtime endpoint serves no CRI ({}; {}{}): the kubelet starts no \
                 pod on this node{}",
                super::teardown::error_quote(no_cri),
                plural(records(&down), "record", "records"),
                over(&down),
                if down.iter().any(|e| e.text.contains("failed to run Kubelet")) {
                    ", and it exited (failed to run Kubelet)"
                } else {
                    ""
                }
            ),
            "kubelet server.go run and kuberuntime NewKubeGenericRuntimeManager: the kubelet asks the \
             runtime's Version over CRI (validate service connection) before it starts, and exits when \
             the endpoint answers Unimplemented",
            "the endpoint (--container-runtime-endpoint, containerRuntimeEndpoint) must serve CRI: a \
             containerd with disabled_plugins = [\"cri\"] in /etc/containerd/config.toml (the config \
             Docker's containerd.io package ships) serves none: remove \"cri\" from it (or write \
             containerd config default > /etc/containerd/config.toml) and systemctl restart \
             containerd; docker's own containerd socket (/var/run/docker/containerd/…) never serves \
             CRI; a kubelet 1.26 or later needs CRI v1 (containerd 1.6+, CRI-O 1.23+); then \
             systemctl restart kubelet"
                .to_string(),
        );
        f.evidence = quote(&down);
        out.push(f);
        return;
    }
    if short && answered {
        return;
    }
    let severity = if short || (answered && longest < RUNTIME_RESTART) {
        Severity::Info
    } else {
        Severity::Warning
    };
    let why = down
        .iter()
        .find(|e| !e.text.contains("container runtime is down"))
        .map_or_else(
            || "container runtime is down".to_string(),
            |e| super::teardown::error_quote(e),
        );
    let mut f = finding(
        FindingKind::RuntimeUnhealthy,
        severity,
        format!(
            "the container runtime does not answer the kubelet ({why}; {}{}){}: no pod on this \
             node is started, stopped or inspected while it does not",
            plural(records(&down), "record", "records"),
            over(&down),
            if answered {
                format!(", then answered again (the longest outage {})", human(longest))
            } else if short {
                ", where the log ends; shorter than a kubelet start's first 30 s, so a runtime \
                 still starting is not ruled out: a warning if it lasts"
                    .to_string()
            } else {
                ", and nothing after shows it answering again".to_string()
            },
        ),
        "kubelet.go updateRuntimeUp (`Container runtime sanity check failed`, every 5 s) and syncLoop \
         (`Skipping pod synchronization` with `container runtime is down`); the CRI client's calls \
         fail with Unavailable while the runtime's socket refuses; past 3 minutes the PLEG goes \
         unhealthy and the node NotReady",
        "systemctl status containerd (or crio, docker): is it running? journalctl -u containerd for why \
         it stopped or hangs (a crash, a full disk, a hung shim); once crictl info answers, the kubelet \
         resumes by itself"
            .to_string(),
    );
    f.evidence = quote(&down);
    out.push(f);
}

/// The records of `down` after the runtime's last answer ([`runtime_answered`]) before the
/// last of them, and of those the last run with no gap over [`RUNTIME_RESTART`]: the outage
/// the log ends in, or the last one.
fn since_last_answer<'l>(logs: &Logs<'l>, down: &[&'l LoggedEvent]) -> Vec<&'l LoggedEvent> {
    let Some(last) = record_times(down).max() else {
        return down.to_vec();
    };
    let answered = logs
        .all
        .iter()
        .filter(|e| runtime_answered(e))
        .filter_map(|e| e.time)
        .filter(|&t| t < last)
        .max();
    let mut tail: Vec<&LoggedEvent> = match answered {
        Some(a) => down
            .iter()
            .copied()
            .filter(|e| e.time.is_none_or(|t| t > a))
            .collect(),
        None => down.to_vec(),
    };
    // syncLoop says so at each of its iterations (every second; every 5 s before 1.13) while
    // the runtime is down: records more than a minute apart are two outages, the last counts.
    tail.sort_by_key(|e| e.time);
    let start = tail
        .windows(2)
        .rposition(|w| match (w[0].time, w[1].time) {
            (Some(a), Some(b)) => b.duration_since(a) > RUNTIME_RESTART,
            _ => false,
        })
        .map_or(0, |k| k + 1);
    tail.split_off(start)
}

/// The CRI methods whose timing out [`hung`] counts: the kubelet's reads of the runtime's state
/// (its creates are [`slow_creates`]'s), and `ExecSync` beside them (it runs a probe's own
/// command, whose slowness alone is the application's).
const HUNG_METHODS: &[&str] = &[
    "ExecSync",
    "ListPodSandbox",
    "ListContainers",
    "ListContainerStats",
    "ListPodSandboxStats",
    "ContainerStatus",
    "PodSandboxStatus",
    "ContainerStats",
    "ImageStatus",
    "ListImages",
    "ImageFsInfo",
    "Status",
    "Version",
];

/// How close together the timed-out calls of [`hung`] must be.
const HUNG_WINDOW: SignedDuration = SignedDuration::from_mins(2);

/// The runtime hung without the PLEG saying so yet: three or more of the kubelet's calls of
/// [`HUNG_METHODS`] (two methods or more, two calls or more no `ExecSync`) timing out
/// (DeadlineExceeded) within [`HUNG_WINDOW`], nothing after shows the runtime answering, and
/// the kubelet's log does not go on past [`PLEG_RELIST_THRESHOLD`] without the PLEG going
/// unhealthy (which a runtime still hung would make it). A
/// warning: past 3 minutes of it the PLEG goes unhealthy and the node NotReady. One method
/// timing out alone is a slow call (a listing), or a slow probe (`ExecSync`).
fn hung(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let method = |e: &LoggedEvent| {
        HUNG_METHODS
            .iter()
            .filter_map(|m| e.text.find(&format!("{m} ")).map(|at| (at, *m)))
            .min()
            .map(|(_, m)| m)
    };
    let mut calls: Vec<(&LoggedEvent, &str)> = logs
        .of(&[EventKind::RuntimeCallFailed])
        .filter(|e| e.event.cause == Some(Cause::Timeout) && e.time.is_some())
        .filter_map(|e| method(e).map(|m| (e, m)))
        .collect();
    calls.sort_by_key(|(e, _)| e.time);
    // The first window of HUNG_WINDOW holding three calls of two methods or more.
    let mut window: Option<&[(&LoggedEvent, &str)]> = None;
    let mut from = 0;
    for to in 0..calls.len() {
        while calls[from]
            .0
            .time
            .zip(calls[to].0.time)
            .is_some_and(|(a, b)| b.duration_since(a) > HUNG_WINDOW)
        {
            from += 1;
        }
        let w = &calls[from..=to];
        let methods: BTreeSet<&str> = w.iter().map(|(_, m)| *m).collect();
        let reads = w.iter().filter(|(_, m)| *m != "ExecSync").count();
        if w.len() >= 3 && methods.len() >= 2 && reads >= 2 {
            window = Some(w);
            break;
        }
    }
    let Some(window) = window else {
        return;
    };
    let last = window.iter().filter_map(|(e, _)| e.time).max();
    // What a kubelet at -v=0 logs of the runtime answering, besides `runtime_answered`'s: a
    // sandbox created, a container started, an image pulled, a pod started, a probe passing
    // (it ran in the container).
    let answered = last.is_some_and(|last| {
        logs.all.iter().any(|e| {
            e.time.is_some_and(|t| t > last)
                && (runtime_answered(e)
                    || matches!(
                        e.event.kind,
                        EventKind::PodSandboxCreated
                            | EventKind::ContainerStartedLogged
                            | EventKind::ImagePulled
                            | EventKind::PodStartupObserved
                            | EventKind::ReadinessProbeReady
                    ))
        })
    });
    // A runtime still hung three minutes on makes the PLEG unhealthy, which the kubelet logs at
    // every verbosity: its log going on longer without saying so is the runtime answering.
    let group: Vec<&LoggedEvent> = window.iter().map(|(e, _)| *e).collect();
    if answered || kubelet_goes_on_after(logs, &group, PLEG_RELIST_THRESHOLD) {
        return;
    }
    let methods: BTreeSet<&str> = window.iter().map(|(_, m)| *m).collect();
    let mut f = finding(
        FindingKind::RuntimeUnhealthy,
        Severity::Warning,
        format!(
            "the container runtime does not answer the kubelet in time ({} timed out: {}; {}), and \
             nothing after shows it answering: the kubelet cannot list or inspect the node's pods, \
             and past 3 minutes of it the PLEG goes unhealthy and the node NotReady",
            plural(records(&group), "call", "calls"),
            methods.into_iter().collect::<Vec<_>>().join(", "),
            match over(&group) {
                o if o.is_empty() => "within a second".to_string(),
                o => o.trim_start().to_string(),
            }
        ),
        "the kubelet's CRI client (remote_runtime.go, remote_image.go): each call has the runtime \
         request timeout (2 minutes; listings less) and fails with DeadlineExceeded when the runtime \
         does not answer; pleg/generic.go relists through the same calls",
        "crictl info and crictl ps (does the runtime answer?); journalctl -u containerd (or crio, \
         docker) for a hung shim, storage errors or a full disk; iostat for disk I/O; systemctl \
         restart containerd"
            .to_string(),
    );
    f.evidence = quote(&group);
    out.push(f);
}

/// The events of `kinds` whose cause is a timeout (DeadlineExceeded), in reading order.
fn timed_out<'l>(logs: &Logs<'l>, kinds: &[EventKind]) -> Vec<&'l LoggedEvent> {
    logs.all
        .iter()
        .filter(|e| kinds.contains(&e.event.kind) && e.event.cause == Some(Cause::Timeout))
        .collect()
}

/// Whether a record says a create call outlived the kubelet's timeout without saying it timed
/// out: the kubelet's retry refused for the name the first call still holds (containerd's
/// `failed to reserve container name`, CRI-O's `error reserving ctr name`, logged by the runtime
/// or inside the kubelet's `CreateContainer … failed`), or CRI-O waiting for the first call
/// (`Creation of container … not yet finished`). A sandbox's, CRI-O's `Creation of sandbox …`
/// included, is `SandboxCreateFailing`'s and `LeakedSandbox`'s.
fn create_outlived(e: &LoggedEvent) -> bool {
    use crate::logs::catalogue::contains_words;
    match e.event.kind {
        EventKind::ContainerNameReserved => true,
        EventKind::CreateStillRunning => e.text.contains("Creation of container "),
        EventKind::CreateContainerFailed => {
            let err = e.event.error.as_deref().unwrap_or(&e.text);
            contains_words(err, "failed to reserve container name")
                || contains_words(err, "error reserving ctr name")
        }
        _ => false,
    }
}

/// The warning of [`runtime_unhealthy`] without PLEG trouble: creating containers or pod
/// sandboxes times out, or a retry finds the first call still running ([`create_outlived`]).
fn slow_creates(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let create_kinds = [
        EventKind::CreateContainerFailed,
        EventKind::CreatePodSandboxFailed,
    ];
    let timeout = |e: &LoggedEvent| {
        create_kinds.contains(&e.event.kind) && e.event.cause == Some(Cause::Timeout)
    };
    // In reading order.
    let creates: Vec<&LoggedEvent> = logs
        .all
        .iter()
        .filter(|e| timeout(e) || create_outlived(e))
        .collect();
    if creates.is_empty() {
        return;
    }
    let timeouts = creates.iter().any(|e| timeout(e));
    let held = creates.iter().any(|e| !timeout(e));
    // CRI-O says where the first call is (`Currently at stage container runtime creation.`).
    let stage = creates.iter().find_map(|e| {
        let at = e.text.find("Currently at stage ")? + "Currently at stage ".len();
        let rest = &e.text[at..];
        Some(&rest[..rest.find(". ").unwrap_or(rest.len())])
    });
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
            "the runtime is too slow to create containers: {} {}{}; \
             their pods do not start {} ({}{}){}",
            plural(calls.max(1), "create call", "create calls"),
            match (timeouts, held) {
                (true, false) => "timed out (DeadlineExceeded)".to_string(),
                (false, _) => format!(
                    "found an earlier call of the same name still running past the kubelet's \
                     timeout (name is reserved, creation not yet finished{})",
                    stage.map(|s| format!(": at stage {s}")).unwrap_or_default()
                ),
                (true, true) => "timed out (DeadlineExceeded) or found an earlier call of the same \
                                 name still running"
                    .to_string(),
            },
            if names.is_empty() {
                if sandboxes.is_empty() {
                    String::new()
                } else {
                    format!(" in {}", plural(sandboxes.len(), "sandbox", "sandboxes"))
                }
            } else {
                format!(" for {} ({})", plural(names.len(), "pod", "pods"), listed(&names))
            },
            if timeouts {
                "and the kubelet recreates their sandboxes"
            } else {
                "until the first call finishes"
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

/// A pod's syncs timing out again and again this long is the runtime's doing, not one slow call:
/// the runtime request timeout is 2 minutes, so two such syncs a minute apart are two calls.
const SYNCS_TIMING_OUT: SignedDuration = SignedDuration::from_mins(1);

/// The warning of [`runtime_unhealthy`] without PLEG trouble: a pod worker's syncs failing with
/// the runtime's bare `DeadlineExceeded` (`Error syncing pod …, skipping: rpc error: code =
/// DeadlineExceeded`; `pod_workers.go` with the error of `GetPodStatus`, the status read
/// before every sync), twice or more over [`SYNCS_TIMING_OUT`] for one pod: the runtime does
/// not answer for that pod, so the kubelet neither starts nor stops its containers
/// (kubernetes/kubernetes#45419, the node going NotReady soon after). A sync that names its
/// step (`failed to "CreatePodSandbox"`) is the step's rule's.
fn slow_syncs(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let mut by_pod: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in timed_out(logs, &[EventKind::ErrorSyncingPod]) {
        let err = e.event.error.as_deref().unwrap_or(&e.text);
        if err
            .trim_start()
            .starts_with("rpc error: code = DeadlineExceeded")
            && let Some(k) = super::sandbox_create::pod_key(logs, e)
        {
            by_pod.entry(k).or_default().push(e);
        }
    }
    by_pod.retain(|_, g| g.len() >= 2 && span(g) >= SYNCS_TIMING_OUT);
    if by_pod.is_empty() {
        return;
    }
    let all: Vec<&LoggedEvent> = by_pod.values().flatten().copied().collect();
    let pods: Vec<PodRef> = by_pod
        .values()
        .filter_map(|g| logs.pod_of(&NodeView::empty(), g, None, None))
        .collect();
    let names: Vec<String> = by_pod
        .values()
        .zip(pods.iter().map(pod_label))
        .map(|(g, name)| {
            format!(
                "{name}: {} over {}",
                plural(records(g), "sync", "syncs"),
                human(span(g))
            )
        })
        .collect();
    let mut f = finding(
        FindingKind::RuntimeUnhealthy,
        Severity::Warning,
        format!(
            "the runtime times out on the syncs of {} ({}): the kubelet cannot read {} status \
             (DeadlineExceeded), so it neither starts nor stops {} containers",
            plural(by_pod.len(), "pod", "pods"),
            listed(&names),
            if by_pod.len() == 1 { "its" } else { "their" },
            if by_pod.len() == 1 { "its" } else { "their" },
        ),
        "pod_workers.go managePodLoop: syncPod reads the pod's status from the runtime (GetPodStatus: \
         ListPodSandbox, PodSandboxStatus, ContainerStatus) first; each call runs out of the runtime \
         request timeout (2m) and the worker logs \"Error syncing pod, skipping\" and retries; the PLEG \
         relists through the same runtime and goes unhealthy next",
        "crictl pods and crictl ps --pod <pod sandbox id> for the pod (which call hangs?); the runtime's \
         log around these times (journalctl -u containerd, -u crio or -u docker): a hung shim or \
         container, a slow disk; restart the runtime if it persists"
            .to_string(),
    );
    if let [pod] = pods.as_slice() {
        f.pod = Some(pod.clone());
    }
    f.evidence = quote(&all);
    out.push(f);
}

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    runtime_unhealthy(input.logs, out);
}
