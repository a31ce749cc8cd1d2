//! `OrphanedContainer`: a container whose pod sandbox no longer exists.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

impl Ctx<'_> {
    /// The CRI ties every container to a sandbox (`CreateContainer` takes `pod_sandbox_id`) and
    /// the kubelet sees containers only through their sandbox (`kuberuntime_manager.go`
    /// `GetPodStatus`); a container whose sandbox is gone is outside the kubelet's pod model.
    pub(super) fn orphaned_containers(
        &self,
        out: &mut Vec<Finding>,
        skipped: &mut Vec<SkippedRule>,
    ) {
        let Some(cri) = &self.view.cri else {
            skipped.push(skip(
                FindingKind::OrphanedContainer,
                "the CRI view is unavailable",
            ));
            return;
        };
        let sandbox_ids: HashSet<&str> = cri.sandboxes.iter().map(|s| s.id.as_str()).collect();
        for c in &cri.containers {
            if sandbox_ids.contains(c.sandbox_id.as_str()) || !self.past_min_age(c.created_at) {
                continue;
            }
            let pod = pod_of_container(c);
            out.push(Finding {
                kind: FindingKind::OrphanedContainer,
                severity: Severity::Warning,
                summary: format!(
                    "container {} ({}) is {} but its pod sandbox {} does not exist",
                    short(&c.id),
                    c.name,
                    c.state.cri_name(),
                    short(&c.sandbox_id)
                ),
                pod,
                sandbox_id: Some(c.sandbox_id.clone()),
                container_id: Some(c.id.clone()),
                path: None,
                evidence: vec![
                    Evidence::new(
                        EvidenceSource::Cri,
                        format!(
                            "container {} name={} attempt={} state={} created {} ({} ago) image={}",
                            c.id,
                            c.name,
                            c.attempt,
                            c.state.cri_name(),
                            c.created_at,
                            human(self.age(c.created_at)),
                            c.image
                        ),
                    ),
                    Evidence::new(
                        EvidenceSource::Cri,
                        format!(
                            "ListPodSandbox returned {} sandboxes, none with id {}",
                            cri.sandboxes.len(),
                            c.sandbox_id
                        ),
                    ),
                ],
                kubelet_rule: "CRI CreateContainer binds a container to pod_sandbox_id and the kubelet \
                               tracks containers only through their sandbox (kuberuntime_manager.go \
                               GetPodStatus), so nothing in the kubelet will stop or remove this one"
                    .into(),
                remediation: format!("crictl inspect {id}; crictl stop {id} && crictl rm {id}", id = sh(&c.id)),
                gc_eligible: false,
            });
        }
    }

    // === StaticPodNotRemoved ===
}
