//! Garbage-collection eligibility: which leaked pod sandboxes `podcoroner gc` may remove, decided
//! exactly as the kubelet's sandbox GC would (`kuberuntime_gc.go` `evictSandboxes`), plus the
//! operator's guards (minimum age, exclusions, a cap per run).
//!
//! Pure: the caller passes the node view, the policy and the time. The same predicate runs at
//! planning time and again, on a fresh view, right before each removal
//! ([`still_eligible`]).
//!
//! Invariants (property-tested in `tests`): a planned removal is never a READY sandbox, never a
//! sandbox holding a container in any state, never younger than [`Policy::min_age`], and never
//! the newest sandbox of a pod the API server, a mirror pod or a manifest still knows.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use jiff::Timestamp;

use crate::finding::FindingKind;
use crate::model::{NodeView, PodRef, SandboxState};
use crate::rules::{Config, diagnose};

/// The operator's guards on top of the kubelet's rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Only sandboxes created longer ago than this (`--gc-min-age`, default 1 h).
    pub min_age: Duration,
    /// Namespaces never touched (`--exclude-namespace`, default `kube-system`).
    pub exclude_namespaces: BTreeSet<String>,
    /// Without an API view, treat pods no mirror pod or manifest knows as deleted
    /// (`--assume-pods-deleted`); otherwise nothing is eligible without the API.
    pub assume_pods_deleted: bool,
    /// At most this many removals per run (`--gc-max-per-run`, default 20).
    pub max_per_run: usize,
}

/// A sandbox `gc` will stop and remove.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The pod sandbox ID.
    pub sandbox_id: String,
    /// Its pod.
    pub pod: PodRef,
    /// When the sandbox was created.
    pub created_at: Timestamp,
    /// Why the kubelet's GC should have removed it: the `LeakedSandbox` finding's summary.
    pub rule: String,
}

/// A `LeakedSandbox` that the policy holds back, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The pod sandbox ID.
    pub sandbox_id: String,
    /// Its pod.
    pub pod: PodRef,
    /// Why it is not removed, e.g. `namespace kube-system is excluded`.
    pub reason: String,
}

/// What one `gc` run would do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The removals, oldest sandbox first, at most [`Policy::max_per_run`].
    pub removals: Vec<Removal>,
    /// Leaked sandboxes not removed, and why.
    pub held: Vec<Held>,
    /// Why nothing at all is eligible (e.g. no API view), when that is the case.
    pub refused: Option<String>,
}

/// Plans a run over `view` at `now`. `excluded_by_selector` returns the reason a sandbox's labels
/// exclude it (`--exclude-selector`), or `None`.
pub fn plan(
    view: &NodeView,
    policy: &Policy,
    excluded_by_selector: &dyn Fn(&BTreeMap<String, String>) -> Option<String>,
    now: Timestamp,
) -> Plan {
    let config = Config {
        min_age: policy.min_age,
        failed_pod_min_age: Duration::MAX,
        assume_pods_deleted: policy.assume_pods_deleted,
        slow_start: Duration::MAX,
    };
    let diagnosis = diagnose(view, &config, now);
    if let Some(skip) = diagnosis
        .skipped
        .iter()
        .find(|s| s.kind == FindingKind::LeakedSandbox)
    {
        return Plan {
            refused: Some(format!(
                "no sandbox is eligible without API truth ({}); pass --pods FILE or \
                 --assume-pods-deleted",
                skip.reason
            )),
            ..Plan::default()
        };
    }
    let sandboxes: BTreeMap<&str, _> = view
        .cri
        .iter()
        .flat_map(|c| c.sandboxes.iter())
        .map(|s| (s.id.as_str(), s))
        .collect();
    let mut removals = Vec::new();
    let mut held = Vec::new();
    for f in diagnosis
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::LeakedSandbox && f.gc_eligible)
    {
        let (Some(id), Some(pod)) = (&f.sandbox_id, &f.pod) else {
            continue;
        };
        let Some(sandbox) = sandboxes.get(id.as_str()) else {
            continue;
        };
        let hold = |reason: String| Held {
            sandbox_id: id.clone(),
            pod: pod.clone(),
            reason,
        };
        if policy.exclude_namespaces.contains(&pod.namespace) {
            held.push(hold(format!("namespace {} is excluded", pod.namespace)));
        } else if let Some(reason) = excluded_by_selector(&sandbox.labels) {
            held.push(hold(reason));
        } else {
            removals.push(Removal {
                sandbox_id: id.clone(),
                pod: pod.clone(),
                created_at: sandbox.created_at,
                rule: f.summary.clone(),
            });
        }
    }
    removals.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then(a.sandbox_id.cmp(&b.sandbox_id))
    });
    for r in removals.split_off(removals.len().min(policy.max_per_run)) {
        held.push(Held {
            sandbox_id: r.sandbox_id,
            pod: r.pod,
            reason: format!(
                "over --gc-max-per-run {}; left for the next run",
                policy.max_per_run
            ),
        });
    }
    Plan {
        removals,
        held,
        refused: None,
    }
}

/// Checks again, on a view read right before acting, that `sandbox_id` is still eligible.
///
/// # Errors
/// The reason it no longer is: gone already, READY, holding containers, its pod known again, no
/// longer the leak the plan saw.
pub fn still_eligible(
    view: &NodeView,
    sandbox_id: &str,
    policy: &Policy,
    excluded_by_selector: &dyn Fn(&BTreeMap<String, String>) -> Option<String>,
    now: Timestamp,
) -> Result<(), String> {
    let cri = view.cri.as_ref().ok_or("the CRI view is unavailable")?;
    let sandbox = cri
        .sandboxes
        .iter()
        .find(|s| s.id == sandbox_id)
        .ok_or("the sandbox no longer exists")?;
    if sandbox.state == SandboxState::Ready {
        return Err("the sandbox is READY again".to_string());
    }
    let n = cri
        .containers
        .iter()
        .filter(|c| c.sandbox_id == sandbox_id)
        .count();
    if n > 0 {
        return Err(format!("the sandbox now holds {n} container(s)"));
    }
    let fresh = plan(
        view,
        &Policy {
            max_per_run: usize::MAX,
            ..policy.clone()
        },
        excluded_by_selector,
        now,
    );
    if let Some(refused) = fresh.refused {
        return Err(refused);
    }
    if fresh.removals.iter().any(|r| r.sandbox_id == sandbox_id) {
        return Ok(());
    }
    if let Some(h) = fresh.held.iter().find(|h| h.sandbox_id == sandbox_id) {
        return Err(h.reason.clone());
    }
    Err(format!(
        "it is no longer a leaked sandbox: pod uid {} is known again (API server, mirror pod or \
         manifest) or the sandbox is now its pod's newest",
        sandbox.pod.uid
    ))
}

/// What GC saw when the runtime refused to stop a sandbox it planned to remove
/// (`StopPodSandbox` failed with `error`, not NotFound): the `SandboxStopFailing` finding
/// (`rules::sandbox_stop_failing`, seen by `podcoroner gc`) and the error's class
/// (`rules::stop_failure_class`: `CNI teardown: …`, `runtime busy`, `timeout`, `other`), which
/// the audit record keeps as `error_class`.
#[derive(Debug, Clone, PartialEq)]
pub struct StopFailure {
    /// The `SandboxStopFailing` finding.
    pub finding: crate::finding::Finding,
    /// The class of the stop error.
    pub class: &'static str,
}

/// The [`StopFailure`] of `sandbox` whose `StopPodSandbox` failed with `error`, as the kubelet's
/// `kuberuntime_gc.go` `removeSandbox` meets it ("Failed to stop sandbox before removing").
pub fn stop_failed(sandbox: &crate::model::Sandbox, error: &str) -> StopFailure {
    StopFailure {
        finding: crate::rules::sandbox_stop_failing(sandbox, error, "podcoroner gc"),
        class: crate::rules::stop_failure_class(error).0,
    }
}

/// Adds to `findings` (an evaluation's) the `SandboxStopFailing` findings of the last GC run
/// (`gc`) whose sandbox the runtime still lists, all of them while the runtime cannot be read
/// (`view.cri` is `None`: a rule that did not run resolves nothing). A sandbox the kubelet's
/// log already reports failing gets GC's evidence on that finding instead of a second one.
pub fn add_stop_failures(
    findings: &mut Vec<crate::finding::Finding>,
    gc: &[crate::finding::Finding],
    view: &NodeView,
) {
    for f in gc {
        let listed = view.cri.as_ref().is_none_or(|cri| {
            cri.sandboxes
                .iter()
                .any(|s| f.sandbox_id.as_ref() == Some(&s.id))
        });
        if !listed {
            continue;
        }
        match findings
            .iter_mut()
            .find(|d| d.kind == f.kind && d.sandbox_id == f.sandbox_id)
        {
            Some(d) => d.evidence.extend(f.evidence.iter().cloned()),
            None => findings.push(f.clone()),
        }
    }
}

#[cfg(test)]
mod tests;
