//! `FailedPodNotCleaned`: a pod in phase Failed that nothing on the node will remove.

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;

impl Ctx<'_> {
    /// The kubelet never deletes the API object of a Failed pod (its status manager finalizes
    /// only pods with a deletionTimestamp); kube-controller-manager's PodGC removes terminated
    /// pods only above `--terminated-pod-gc-threshold` (12500 by default).
    pub(super) fn failed_pods(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
        if let Some(why) = &self.api_unusable {
            skipped.push(skip(FindingKind::FailedPodNotCleaned, why));
            return;
        }
        let Some(api) = &self.view.api else { return };
        for p in &api.pods {
            if p.node_name != self.view.node_name
                || p.phase != "Failed"
                || p.mirror_hash().is_some()
                || p.deletion_timestamp.is_some()
            {
                continue;
            }
            let Some(since) = p.status_changed_at.or(p.created_at) else {
                continue;
            };
            if !self.old_enough(since, self.config.failed_pod_min_age) {
                continue;
            }
            let reason = p.reason.as_deref().unwrap_or("no reason given");
            out.push(Finding {
                kind: FindingKind::FailedPodNotCleaned,
                severity: Severity::Info,
                summary: format!(
                    "pod {}/{} has been Failed ({reason}) for {}; nothing on the node will delete it",
                    p.pod.namespace,
                    p.pod.name,
                    human(self.age(since))
                ),
                pod: Some(p.pod.clone()),
                sandbox_id: None,
                container_id: None,
                path: None,
                evidence: vec![Evidence::new(
                    EvidenceSource::Apiserver,
                    format!(
                        "pod {}/{} (uid {}) on node {}: phase Failed ({reason}), last status change {}",
                        p.pod.namespace, p.pod.name, p.pod.uid, p.node_name, since
                    ),
                )],
                kubelet_rule: "status_manager.go: the kubelet deletes a pod's API object only after a \
                               deletionTimestamp is set; Failed pods stay until deleted or until \
                               kube-controller-manager PodGC passes --terminated-pod-gc-threshold (12500)"
                    .into(),
                remediation: format!(
                    "kubectl delete pod -n {} {} (all on this node: kubectl delete pods -A \
                     --field-selector=spec.nodeName={},status.phase=Failed)",
                    sh(&p.pod.namespace),
                    sh(&p.pod.name),
                    sh(&self.view.node_name)
                ),
                gc_eligible: false,
            });
        }
    }
}
