//! `DuplicateReadySandboxes`: more than one READY pod sandbox for one pod UID.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

impl Ctx<'_> {
    /// `kuberuntime_manager.go` `podSandboxChanged`: more than one READY sandbox makes the
    /// kubelet kill the pod and create a new sandbox ("Multiple sandboxes are ready for Pod.
    /// Need to reconcile them"); duplicates that outlive `min_age` mean that reconcile fails.
    pub(super) fn duplicate_ready_sandboxes(
        &self,
        out: &mut Vec<Finding>,
        skipped: &mut Vec<SkippedRule>,
    ) {
        if self.view.cri.is_none() {
            skipped.push(skip(
                FindingKind::DuplicateReadySandboxes,
                "the CRI view is unavailable",
            ));
            return;
        }
        for group in self.sandboxes_by_uid.values() {
            let ready: Vec<&Sandbox> = group
                .iter()
                .copied()
                .filter(|s| s.state == SandboxState::Ready)
                .collect();
            if ready.len() < 2 || !ready.iter().all(|s| self.past_min_age(s.created_at)) {
                continue;
            }
            let oldest = ready[ready.len() - 1];
            let ids: Vec<&str> = ready.iter().map(|s| s.id.as_str()).collect();
            out.push(Finding {
                kind: FindingKind::DuplicateReadySandboxes,
                severity: Severity::Critical,
                summary: format!(
                    "{} READY pod sandboxes for {}/{}: two copies of the pod's network and processes",
                    ready.len(),
                    oldest.pod.namespace,
                    oldest.pod.name
                ),
                pod: Some(oldest.pod.clone()),
                sandbox_id: Some(oldest.id.clone()),
                container_id: None,
                path: None,
                evidence: ready.iter().map(|s| self.sandbox_evidence(s)).collect(),
                kubelet_rule: "kuberuntime_manager.go podSandboxChanged: a pod must have exactly one \
                               READY sandbox; with more the kubelet kills the pod and recreates it \
                               (\"Multiple sandboxes are ready for Pod\")"
                    .into(),
                remediation: {
                    let quoted: Vec<String> = ids.iter().map(|id| sh(id).into_owned()).collect();
                    let idle: Vec<&&Sandbox> =
                        ready.iter().filter(|s| self.containers_of(&s.id).is_empty()).collect();
                    let stop = match idle.as_slice() {
                        [one] if idle.len() < ready.len() => format!(
                            "; if it does not, stop the one that runs none of the pod's containers: \
                             crictl stopp {}",
                            sh(&one.id)
                        ),
                        _ => String::new(),
                    };
                    format!(
                        "crictl ps -a --pod <id> for each of {}; journalctl -u kubelet | grep {} \
                         (\"Multiple sandboxes are ready\"); restarting the kubelet makes it kill the \
                         pod and recreate one sandbox{stop}",
                        quoted.join(" "),
                        sh(&oldest.pod.uid)
                    )
                },
                gc_eligible: false,
            });
        }
    }

    // === OrphanedContainer ===
}
