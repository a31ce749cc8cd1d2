//! Pod start forensics: where one pod's start went, phase by phase, from whatever views hold it
//! ([`breakdown`]), and the node's startup profile over many pods ([`profile`]).
//!
//! The phases follow the kubelet's order of work for a new pod (`kubelet.go` `SyncPod`,
//! `kuberuntime_manager.go` `SyncPod`): the pod bound to the node until the kubelet sees it
//! (`SyncLoop ADD`), the pod sandbox and its network (CRI `RunPodSandbox`, the CNI ADD), the
//! image pulls, the init containers, the containers' start, and the readiness probes until the
//! pod is `Ready`. Every edge says where it was read (API condition, CRI `created_at`, a log
//! record with its `file:line`), so a person can check it.
//!
//! The input is the records of ONE pod (`&[&LoggedEvent]`, the per-pod records the log index
//! gives) with the pod's API object and the CRI view: the breakdown never reads every event.

use jiff::{SignedDuration, Timestamp};

use crate::event::LoggedEvent;
use crate::finding::EvidenceSource;
use crate::logs::{EventKind, PlegType, SyncOp};
use crate::model::{ApiPod, CriView, PodRef};

pub mod profile;
pub mod values;

pub use profile::{PhaseStats, Profile, profile};
pub use values::Observed;

/// One phase of a pod's start, in the kubelet's order of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Bound to the node (API `PodScheduled`) until the kubelet sees the pod (`SyncLoop ADD`):
    /// the API server's watch and the kubelet's admission.
    Admission,
    /// CRI `RunPodSandbox`: the pause container and the CNI ADD.
    Sandbox,
    /// The image pulls (`Pulling image` to the last `Successfully pulled image`).
    ImagePull,
    /// The init containers, one after the other (API `Initialized`).
    InitContainers,
    /// Creating and starting the containers (`Started container`, `startedAt`).
    ContainerStart,
    /// The containers running until the pod is `Ready` (readiness probes).
    Readiness,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 6] = [
        Phase::Admission,
        Phase::Sandbox,
        Phase::ImagePull,
        Phase::InitContainers,
        Phase::ContainerStart,
        Phase::Readiness,
    ];

    /// The name in JSON, metrics labels and output: `admission`, `sandbox`, `image_pull`,
    /// `init_containers`, `container_start`, `readiness`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Admission => "admission",
            Phase::Sandbox => "sandbox",
            Phase::ImagePull => "image_pull",
            Phase::InitContainers => "init_containers",
            Phase::ContainerStart => "container_start",
            Phase::Readiness => "readiness",
        }
    }

    /// What an SRE does when this phase dominates a slow start.
    pub fn remediation(self) -> &'static str {
        match self {
            Phase::Admission => {
                "the kubelet saw the pod late: check the kubelet's API watch and its QPS (kubeAPIQPS, \
                 kubeAPIBurst), PLEG health, and the node's CPU pressure"
            }
            Phase::Sandbox => {
                "the pod sandbox (the CNI ADD) is slow: read the CNI plugin's log for the ADD of this \
                 pod, check IPAM exhaustion and the plugin's agent on this node; crictl runp timings \
                 in the runtime's log show where it waits"
            }
            Phase::ImagePull => {
                "the image pull dominates: pre-pull the image (a DaemonSet or the node image), use a \
                 smaller image, a registry mirror or pull-through cache near the node, or \
                 serializeImagePulls: false with maxParallelImagePulls"
            }
            Phase::InitContainers => {
                "the init containers take the time: read their logs (kubectl logs -c <init>), and \
                 move waits on other services out of the start path"
            }
            Phase::ContainerStart => {
                "creating and starting the containers is slow: check the runtime (crictl info, its \
                 log), volume mounts and the container's entrypoint"
            }
            Phase::Readiness => {
                "the readiness probe passes late: tune initialDelaySeconds and periodSeconds to the \
                 application's real warm-up, or use a startupProbe; check what the application \
                 waits for"
            }
        }
    }
}

/// One edge of a phase: when, and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// When.
    pub at: Timestamp,
    /// Which view.
    pub source: EvidenceSource,
    /// What was read: `API condition PodScheduled`, `SyncLoop ADD`, `CRI sandbox created_at`, …
    pub what: String,
    /// `file:line` of a log record.
    pub origin: Option<String>,
}

/// One phase with its start and end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseSpan {
    /// Which phase.
    pub phase: Phase,
    /// Its start.
    pub start: Edge,
    /// Its end.
    pub end: Edge,
}

impl PhaseSpan {
    /// `end - start`, never negative (edges from different clocks are clamped at zero).
    pub fn duration(&self) -> SignedDuration {
        self.end
            .at
            .duration_since(self.start.at)
            .max(SignedDuration::ZERO)
    }
}

/// Where one pod's start went.
#[derive(Debug, Clone, PartialEq)]
pub struct Breakdown {
    /// The pod.
    pub pod: PodRef,
    /// The phases the views give both edges of, in order.
    pub phases: Vec<PhaseSpan>,
    /// Bound to the node (or created, when the bind is not known).
    pub bound: Option<Edge>,
    /// `Ready` (or, when no view says `Ready`, the containers running).
    pub ready: Option<Edge>,
    /// Whether [`Self::ready`] is the pod's `Ready` (API condition or readiness probe) rather
    /// than its containers running.
    pub ready_is_ready: bool,
    /// The kubelet's own `"Observed pod startup duration"` record, when logged.
    pub observed: Option<(Observed, String)>,
}

impl Breakdown {
    /// Bound to ready, when both are known.
    pub fn total(&self) -> Option<SignedDuration> {
        Some(
            self.ready
                .as_ref()?
                .at
                .duration_since(self.bound.as_ref()?.at),
        )
    }

    /// The longest phase.
    pub fn dominant(&self) -> Option<&PhaseSpan> {
        self.phases.iter().max_by_key(|p| p.duration())
    }

    /// The span of `phase`.
    pub fn phase(&self, phase: Phase) -> Option<&PhaseSpan> {
        self.phases.iter().find(|p| p.phase == phase)
    }
}

fn log_edge(e: &LoggedEvent, what: &str) -> Option<Edge> {
    Some(Edge {
        at: e.time?,
        source: crate::rules::logs::source_of(e),
        what: what.to_string(),
        origin: Some(format!("{}:{}", e.origin, e.line)),
    })
}

/// An edge read from the kubelet's `"Observed pod startup duration"` record: `pick` chooses the
/// key.
fn observed_edge(
    observed: Option<&(Observed, String)>,
    pick: impl Fn(&Observed) -> Option<Timestamp>,
    what: &str,
) -> Option<Edge> {
    let (o, at) = observed?;
    Some(Edge {
        at: pick(o)?,
        source: EvidenceSource::KubeletLog,
        what: what.to_string(),
        origin: Some(at.clone()),
    })
}

fn view_edge(at: Timestamp, source: EvidenceSource, what: &str) -> Edge {
    Edge {
        at,
        source,
        what: what.to_string(),
        origin: None,
    }
}

/// The first record of `kinds` at or after `from`.
fn first_of<'a>(
    records: &[&'a LoggedEvent],
    kinds: &[EventKind],
    from: Option<Timestamp>,
) -> Option<&'a LoggedEvent> {
    records.iter().copied().find(|e| {
        kinds.contains(&e.event.kind) && e.time.is_some_and(|t| from.is_none_or(|f| t >= f))
    })
}

/// The last record of `kinds` at or after `from`.
fn last_of<'a>(
    records: &[&'a LoggedEvent],
    kinds: &[EventKind],
    from: Option<Timestamp>,
) -> Option<&'a LoggedEvent> {
    records.iter().rev().copied().find(|e| {
        kinds.contains(&e.event.kind) && e.time.is_some_and(|t| from.is_none_or(|f| t >= f))
    })
}

/// What a pull edge read: the kubelet's wording, or containerd's when the record is the
/// runtime's.
fn pull_what<'w>(e: &LoggedEvent, kubelet: &'w str, runtime: &'w str) -> &'w str {
    if e.log == crate::event::LogKind::Runtime {
        runtime
    } else {
        kubelet
    }
}

/// The image pull phase from the newer key set's `totalImagesPullingTime` (kubelet 1.34 after
/// k/k #131950: a sum of the pull sessions, with no times), when no record gives the pulls'
/// edges: from `after` (the sandbox ready; the kubelet pulls after `RunPodSandbox`) for that
/// long. The end is derived, and says so. `None` when nothing was pulled (`0s`).
fn total_pulling_span(
    observed: Option<&(Observed, String)>,
    after: Option<&Edge>,
) -> Option<(Edge, Edge)> {
    let (o, origin) = observed?;
    let total = o.total_images_pulling.filter(|d| d.is_positive())?;
    let start = after?;
    let end = Edge {
        at: start.at.checked_add(total).ok()?,
        source: EvidenceSource::KubeletLog,
        what: format!(
            "{} + totalImagesPullingTime {total:#} (\"Observed pod startup duration\")",
            start.what
        ),
        origin: Some(origin.clone()),
    };
    Some((start.clone(), end))
}

/// The CRI edges of the containers' start in the pod's sandbox `sandbox_id`: the first
/// container's `created_at` (CRI `ListContainers`) and the last one's `started_at` (CRI
/// `ContainerStatus`), of the first attempt (`attempt` 0) of every container created at or after
/// `after` (the end of the phase before: the init containers, created before `Initialized`, are
/// left out). The runtime stamps both itself, to the nanosecond, where the kubelet's `Started
/// container` is logged after `StartContainer` returned, so these are preferred.
///
/// `(None, None)` when the sandbox has no such container, when a container's first attempt is
/// gone (a restart: the later attempt's times are not the start), or, for `started_at`, when one
/// of them has not started (or its status was not read).
fn cri_container_edges(
    cri: Option<&CriView>,
    sandbox_id: Option<&str>,
    after: Option<Timestamp>,
) -> (Option<Edge>, Option<Edge>) {
    let (Some(cri), Some(sandbox_id)) = (cri, sandbox_id) else {
        return (None, None);
    };
    let of_sandbox: Vec<&crate::model::Container> = cri
        .containers
        .iter()
        .filter(|c| c.sandbox_id == sandbox_id)
        .collect();
    let restarted = of_sandbox.iter().any(|c| {
        c.attempt > 0
            && !of_sandbox
                .iter()
                .any(|o| o.name == c.name && o.attempt == 0)
    });
    let first: Vec<&crate::model::Container> = of_sandbox
        .into_iter()
        .filter(|c| c.attempt == 0 && after.is_none_or(|a| c.created_at >= a))
        .collect();
    if restarted || first.is_empty() {
        return (None, None);
    }
    let created = first.iter().min_by_key(|c| c.created_at).map(|c| {
        view_edge(
            c.created_at,
            EvidenceSource::Cri,
            &format!("CRI container {} created_at", c.name),
        )
    });
    let started = first
        .iter()
        .map(|c| c.started_at.map(|t| (t, c)))
        .collect::<Option<Vec<_>>>()
        .and_then(|v| v.into_iter().max_by_key(|(t, _)| *t))
        .map(|(t, c)| {
            view_edge(
                t,
                EvidenceSource::Cri,
                &format!("CRI container {} started_at", c.name),
            )
        });
    (created, started)
}

/// The breakdown of the start of `pod` from its log `records` (reading order; the records that
/// name the pod, its UID or its sandbox), its API object and the CRI view. `None` when no view
/// holds two edges of any phase.
///
/// The latest start in the records is judged: a pod the kubelet saw twice (a kubelet restart)
/// is judged from its last `SyncLoop ADD`.
pub fn breakdown(
    pod: &PodRef,
    records: &[&LoggedEvent],
    api: Option<&ApiPod>,
    cri: Option<&CriView>,
) -> Option<Breakdown> {
    let observed_rec = last_of(records, &[EventKind::PodStartupObserved], None);
    let observed = observed_rec.map(|e| (values::observed(e), format!("{}:{}", e.origin, e.line)));
    let obs = observed.as_ref().map(|(o, _)| o);
    let st = api.map(|a| &a.startup);

    // Bound: the API's PodScheduled, its creation, the kubelet's podCreationTimestamp.
    let bound = st
        .and_then(|s| s.scheduled_at)
        .map(|t| view_edge(t, EvidenceSource::Apiserver, "API condition PodScheduled"))
        .or_else(|| {
            api.and_then(|a| a.created_at)
                .map(|t| view_edge(t, EvidenceSource::Apiserver, "API creationTimestamp"))
        })
        .or_else(|| {
            observed_edge(
                observed.as_ref(),
                |o| o.created_at,
                "podCreationTimestamp of \"Observed pod startup duration\"",
            )
        });

    // Seen by the kubelet: the last SyncLoop ADD naming the pod, else its worker's first sync.
    let seen = last_of(records, &[EventKind::SyncLoop(SyncOp::Add)], None)
        .and_then(|e| log_edge(e, "SyncLoop ADD"))
        .or_else(|| {
            first_of(records, &[EventKind::PodSyncedFirstTime], None)
                .and_then(|e| log_edge(e, "Pod is being synced for the first time"))
        });
    let from = seen.as_ref().map(|e| e.at);

    // The sandbox: RunPodSandbox started (runtime log) or the CRI sandbox's created_at, to
    // RunPodSandbox returned (runtime log, or the kubelet's V4 "Created PodSandbox for pod").
    let sandbox = cri.and_then(|c| {
        c.sandboxes
            .iter()
            .filter(|s| s.pod.uid == pod.uid && !pod.uid.is_empty())
            .max_by_key(|s| (s.attempt, s.created_at))
    });
    let sandbox_start = first_of(records, &[EventKind::RunPodSandboxStarted], from)
        .and_then(|e| log_edge(e, "RunPodSandbox started"))
        .or_else(|| {
            sandbox.map(|s| view_edge(s.created_at, EvidenceSource::Cri, "CRI sandbox created_at"))
        })
        .or_else(|| seen.clone());
    let sandbox_end = first_of(
        records,
        &[EventKind::RunPodSandboxDone, EventKind::PodSandboxCreated],
        sandbox_start.as_ref().map(|e| e.at),
    )
    .and_then(|e| {
        let what = if e.event.kind == EventKind::RunPodSandboxDone {
            "RunPodSandbox returned a sandbox"
        } else {
            "Created PodSandbox for pod"
        };
        log_edge(e, what)
    });

    // The image pulls: the first Pulling to the last Pulled, else the kubelet's own record.
    let after_sandbox = sandbox_end
        .as_ref()
        .or(sandbox_start.as_ref())
        .map(|e| e.at);
    // The pod's records hold containerd's own `PullImage` lines when they could be joined to
    // the pod (`rules::pod_startup`), so either log may give an edge.
    let pull_start = first_of(records, &[EventKind::ImagePulling], after_sandbox.or(from));
    let pull = match pull_start {
        Some(p) => {
            let end = last_of(records, &[EventKind::ImagePulled], p.time);
            log_edge(p, pull_what(p, "Pulling image", "containerd PullImage")).zip(end.and_then(
                |e| {
                    log_edge(
                        e,
                        pull_what(e, "image pulled", "containerd PullImage returned"),
                    )
                },
            ))
        }
        None => obs
            .filter(|o| o.last_finished_pulling >= o.first_started_pulling)
            .and_then(|_| {
                observed_edge(
                    observed.as_ref(),
                    |o| o.first_started_pulling,
                    "firstStartedPulling",
                )
                .zip(observed_edge(
                    observed.as_ref(),
                    |o| o.last_finished_pulling,
                    "lastFinishedPulling",
                ))
            })
            .or_else(|| {
                total_pulling_span(
                    observed.as_ref(),
                    sandbox_end
                        .as_ref()
                        .or(sandbox_start.as_ref())
                        .or(seen.as_ref()),
                )
            }),
    };

    // The init containers: to the API's Initialized, when the pod has init containers.
    let before_init = pull
        .as_ref()
        .map(|(_, e)| e.clone())
        .or_else(|| sandbox_end.clone());
    let init_end = st
        .filter(|s| s.init_containers > 0)
        .and_then(|s| s.initialized_at)
        .map(|t| view_edge(t, EvidenceSource::Apiserver, "API condition Initialized"));

    // The containers started: the last `Started container` event, the API's startedAt, the
    // kubelet's observedRunningTime, the last PLEG ContainerStarted of a container.
    let start_from = init_end.clone().or_else(|| before_init.clone());
    let after = start_from.as_ref().map(|e| e.at).or(from);
    let sandbox_id = sandbox.map(|s| s.id.as_str());
    let (cri_created, cri_started) = cri_container_edges(cri, sandbox_id, after);
    let start_from = cri_created.or(start_from);
    let started = cri_started
        .or_else(|| {
            last_of(records, &[EventKind::ContainerStartedLogged], after)
                .and_then(|e| log_edge(e, "Started container"))
        })
        .or_else(|| {
            st.and_then(|s| s.containers_started_at.iter().map(|(_, t)| *t).max())
                .map(|t| {
                    view_edge(
                        t,
                        EvidenceSource::Apiserver,
                        "API containerStatuses startedAt",
                    )
                })
        })
        .or_else(|| {
            // A PLEG ContainerStarted names the sandbox too: skip every sandbox ID known.
            let sandboxes: Vec<&str> = records
                .iter()
                .filter(|r| {
                    matches!(
                        r.event.kind,
                        EventKind::RunPodSandboxDone | EventKind::PodSandboxCreated
                    )
                })
                .filter_map(|r| r.event.ids.sandbox_id.as_deref())
                .chain(sandbox_id)
                .collect();
            records
                .iter()
                .rev()
                .find(|e| {
                    e.event.kind == EventKind::Pleg(PlegType::ContainerStarted)
                        && e.time.is_some_and(|t| after.is_none_or(|a| t >= a))
                        && e.event
                            .ids
                            .container_id
                            .as_deref()
                            .is_some_and(|c| !sandboxes.contains(&c))
                })
                .and_then(|e| log_edge(e, "PLEG ContainerStarted"))
        })
        .or_else(|| {
            observed_edge(
                observed.as_ref(),
                |o| o.observed_running,
                "observedRunningTime",
            )
        });

    // Ready: the API's Ready, else the first readiness probe passing after the start.
    let ready_api = st
        .and_then(|s| s.ready_at.or(s.containers_ready_at))
        .map(|t| view_edge(t, EvidenceSource::Apiserver, "API condition Ready"));
    let ready_log = first_of(
        records,
        &[EventKind::ReadinessProbeReady],
        started.as_ref().map(|e| e.at).or(from),
    )
    .and_then(|e| log_edge(e, "readiness probe ready"));
    let ready_edge = ready_api.or(ready_log);

    let mut phases = Vec::new();
    let mut push = |phase: Phase, start: Option<Edge>, end: Option<Edge>| {
        if let (Some(start), Some(end)) = (start, end) {
            phases.push(PhaseSpan { phase, start, end });
        }
    };
    push(Phase::Admission, bound.clone(), seen.clone());
    push(Phase::Sandbox, sandbox_start.clone(), sandbox_end.clone());
    let (pull_s, pull_e) = pull.clone().unzip();
    push(Phase::ImagePull, pull_s, pull_e);
    push(Phase::InitContainers, before_init.clone(), init_end.clone());
    push(Phase::ContainerStart, start_from.clone(), started.clone());
    push(Phase::Readiness, started.clone(), ready_edge.clone());
    if phases.is_empty() && observed.is_none() {
        return None;
    }
    let ready_is_ready = ready_edge.is_some();
    let ready = ready_edge.or_else(|| started.clone()).or_else(|| {
        observed_edge(
            observed.as_ref(),
            |o| o.watch_observed_running,
            "watchObservedRunningTime",
        )
    });
    Some(Breakdown {
        pod: pod.clone(),
        phases,
        bound,
        ready,
        ready_is_ready,
        observed,
    })
}

impl Breakdown {
    /// The breakdown as text, the golden files' form (`testdata/cases/*/startup.txt`): the pod,
    /// bound and ready, each phase with its seconds and both edges (what, source, `file:line`
    /// with `strip` removed from it), the kubelet's own record.
    pub fn to_text(&self, strip: &str) -> String {
        let edge = |e: &Edge| {
            format!(
                "{} {} ({}{})",
                e.at,
                e.what,
                e.source.as_str(),
                e.origin
                    .as_deref()
                    .map(|o| format!(" {}", o.replace(strip, "")))
                    .unwrap_or_default()
            )
        };
        let mut out = format!(
            "- pod {}/{} uid={}\n",
            self.pod.namespace, self.pod.name, self.pod.uid
        );
        for (what, e) in [("bound", &self.bound), ("ready", &self.ready)] {
            if let Some(e) = e {
                out.push_str(&format!("  {what}: {}\n", edge(e)));
            }
        }
        out.push_str(&format!(
            "  total: {}{}; dominant: {}\n",
            self.total()
                .map_or_else(|| "?".to_string(), |d| format!("{:.3}s", d.as_secs_f64())),
            if self.ready_is_ready {
                " to Ready"
            } else {
                " to running"
            },
            self.dominant().map_or("none", |p| p.phase.as_str())
        ));
        for p in &self.phases {
            out.push_str(&format!(
                "  {} {:.3}s: {} -> {}\n",
                p.phase.as_str(),
                p.duration().as_secs_f64(),
                edge(&p.start),
                edge(&p.end)
            ));
        }
        if let Some((o, origin)) = &self.observed {
            out.push_str(&format!(
                "  kubelet ({}): podStartSLOduration={:?} podStartE2EDuration={:?} totalImagesPullingTime={:?}\n",
                origin.replace(strip, ""),
                o.slo_seconds,
                o.e2e.map(|d| format!("{d:#}")),
                o.total_images_pulling.map(|d| format!("{d:#}")),
            ));
        }
        out
    }
}

impl Profile {
    /// The profile as text, the golden files' form: one line per phase with its pods, p50, p90
    /// and max in seconds, then the total.
    pub fn to_text(&self) -> String {
        let row = |name: &str, s: &PhaseStats| {
            format!(
                "  {name}: pods={} p50={:.3}s p90={:.3}s max={:.3}s\n",
                s.pods,
                s.p50.as_secs_f64(),
                s.p90.as_secs_f64(),
                s.max.as_secs_f64()
            )
        };
        let mut out = String::new();
        for (phase, s) in &self.phases {
            out.push_str(&row(phase.as_str(), s));
        }
        if let Some(t) = &self.total {
            let mut total = row("total", t);
            if self.total_to_running > 0 {
                total.insert_str(
                    total.len() - 1,
                    &format!(" ({} to running, no Ready seen)", self.total_to_running),
                );
            }
            out.push_str(&total);
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests;
