//! The node's pod start profile as metrics: `podcoroner_pod_startup_phase_seconds` (a histogram
//! by phase) and `podcoroner_pod_startup_seconds` (bound to ready), each pod start observed once.

use std::collections::HashSet;
use std::sync::Mutex;

use jiff::Timestamp;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use podcoroner_core::startup::Breakdown;

/// A startup phase (`admission`, `sandbox`, `image_pull`, `init_containers`,
/// `container_start`, `readiness`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PhaseLabels {
    /// The phase.
    pub phase: String,
}

/// The kubelet's own buckets for pod start durations (`kubelet_pod_start_duration_seconds`,
/// `pkg/kubelet/metrics/metrics.go`), in seconds.
const BUCKETS: [f64; 25] = [
    0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 20.0, 30.0, 45.0, 60.0, 120.0, 180.0, 240.0,
    300.0, 360.0, 480.0, 600.0, 900.0, 1200.0, 1800.0, 2700.0, 3600.0,
];

fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// A pod start: (pod UID or `namespace/name`, when it became ready).
type StartKey = (String, Timestamp);

/// The two histograms and the starts already observed.
#[derive(Debug)]
pub struct StartupMetrics {
    /// `podcoroner_pod_startup_phase_seconds{phase}`.
    pub phase: Family<PhaseLabels, Histogram, fn() -> Histogram>,
    /// `podcoroner_pod_startup_seconds`.
    pub total: Histogram,
    /// (pod UID or `namespace/name`, when it became ready) of the starts observed.
    seen: Mutex<HashSet<StartKey>>,
}

impl Default for StartupMetrics {
    fn default() -> Self {
        StartupMetrics {
            phase: Family::new_with_constructor(histogram as fn() -> Histogram),
            total: histogram(),
            seen: Mutex::new(HashSet::new()),
        }
    }
}

impl StartupMetrics {
    /// Registers both histograms in `registry` (prefix `podcoroner_`).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "pod_startup_phase_seconds",
            "Pod start phases (bound to ready) by phase, each pod start once",
            self.phase.clone(),
        );
        registry.register(
            "pod_startup_seconds",
            "Pod starts from bound to the node to Ready, each once",
            self.total.clone(),
        );
    }

    /// Observes the starts of `breakdowns` (an evaluation's [`Diagnosis::startup`], the ones
    /// its `SlowPodStartup` rule made: nothing is broken down again here) not observed yet. The
    /// starts remembered are replaced by those of `breakdowns`, so they are bounded by the
    /// starts the agent's kept events and views hold.
    ///
    /// [`Diagnosis::startup`]: podcoroner_core::rules::Diagnosis::startup
    pub fn observe(&self, breakdowns: &[Breakdown]) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let keys = self.observe_new(breakdowns, &seen);
        *seen = keys;
    }

    /// Observes the breakdowns whose key is not in `seen`; the keys of `breakdowns` (what is
    /// still to remember).
    fn observe_new(&self, breakdowns: &[Breakdown], seen: &HashSet<StartKey>) -> HashSet<StartKey> {
        let mut keys = HashSet::new();
        for b in breakdowns {
            let (Some(ready), Some(total)) = (&b.ready, b.total()) else {
                continue;
            };
            let id = if b.pod.uid.is_empty() {
                format!("{}/{}", b.pod.namespace, b.pod.name)
            } else {
                b.pod.uid.clone()
            };
            let key = (id, ready.at);
            if !seen.contains(&key) {
                if !total.is_negative() {
                    self.total.observe(total.as_secs_f64());
                }
                for p in &b.phases {
                    self.phase
                        .get_or_create(&PhaseLabels {
                            phase: p.phase.as_str().to_string(),
                        })
                        .observe(p.duration().as_secs_f64());
                }
            }
            keys.insert(key);
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcoroner_core::event::LoggedEvent;
    use podcoroner_core::model::NodeView;

    fn config() -> podcoroner_core::Config {
        podcoroner_core::Config {
            min_age: std::time::Duration::from_secs(600),
            failed_pod_min_age: std::time::Duration::from_secs(3600),
            assume_pods_deleted: false,
            slow_start: std::time::Duration::from_secs(180),
        }
    }

    /// A day after the records: their start is history, still broken down.
    fn now() -> Timestamp {
        "2026-12-02T12:30:00Z".parse().unwrap()
    }

    #[test]
    fn each_start_is_observed_once() {
        let m = StartupMetrics::default();
        let mut registry = Registry::with_prefix("podcoroner");
        m.register(&mut registry);
        let kubelet = r#"I1201 12:30:21.819561   21520 kubelet.go:2515] "SyncLoop ADD" source="api" pods=["shop/web-0"]
I1201 12:30:21.821317   21520 pod_workers.go:788] "Pod is being synced for the first time" pod="shop/web-0" podUID="646c7313-d413-43a6-98c6-aeb38a4f4979" updateType="create"
I1201 12:30:27.415267   21520 kuberuntime_manager.go:1351] "Created PodSandbox for pod" podSandboxID="09d1a39d1dc2b0012a98fec817a9d39e4f7bcd3f980e0711e85c21b6cc3d4b75" pod="shop/web-0"
I1201 12:30:27.629273   21520 event.go:389] "Event occurred" object="shop/web-0" fieldPath="spec.containers{main}" kind="Pod" apiVersion="v1" type="Normal" reason="Started" message="Started container main"
I1201 12:30:27.950712   21520 pod_startup_latency_tracker.go:104] "Observed pod startup duration" pod="shop/web-0" podStartSLOduration=7.95 podStartE2EDuration="7.95s" podCreationTimestamp="2026-12-01 12:30:20 +0000 UTC" firstStartedPulling="0001-01-01 00:00:00 +0000 UTC" lastFinishedPulling="0001-01-01 00:00:00 +0000 UTC" observedRunningTime="2026-12-01 12:30:27.9 +0000 UTC m=+2.5" watchObservedRunningTime="2026-12-01 12:30:27.95 +0000 UTC m=+2.53"
"#;
        let mut ctx = podcoroner_core::logs::ParseContext::new(2026);
        let events: Vec<LoggedEvent> = kubelet
            .lines()
            .enumerate()
            .filter_map(|(i, l)| {
                let p = podcoroner_core::logs::parse(l, &mut ctx);
                Some(LoggedEvent::new(
                    podcoroner_core::logs::classify(&p)?.into_owned(),
                    podcoroner_core::event::LogKind::Kubelet,
                    "kubelet.log".into(),
                    i as u64 + 1,
                    l.into(),
                    podcoroner_core::logs::content_key(&p),
                ))
            })
            .collect();
        let view = NodeView::empty();
        let diagnose = |events: &[LoggedEvent]| {
            podcoroner_core::log_rules::diagnose_with_logs(&view, events, &config(), now()).startup
        };
        let startup = diagnose(&events);
        assert_eq!(startup.len(), 1, "{startup:#?}");
        m.observe(&startup);
        m.observe(&startup);
        // The same events again with one more record: still one start.
        let mut more = events.clone();
        more.push(LoggedEvent {
            line: 99,
            ..events[0].clone()
        });
        m.observe(&diagnose(&more));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for want in [
            "podcoroner_pod_startup_seconds_count 1",
            // Bound 12:30:20 (podCreationTimestamp) to running 12:30:27.63.
            "podcoroner_pod_startup_seconds_sum 7.62927",
            "podcoroner_pod_startup_seconds_bucket{le=\"8.0\"} 1",
            "podcoroner_pod_startup_seconds_bucket{le=\"6.0\"} 0",
            "podcoroner_pod_startup_phase_seconds_count{phase=\"sandbox\"} 1",
            "podcoroner_pod_startup_phase_seconds_bucket{le=\"6.0\",phase=\"sandbox\"} 1",
            "podcoroner_pod_startup_phase_seconds_bucket{le=\"5.0\",phase=\"sandbox\"} 0",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
    }
}
