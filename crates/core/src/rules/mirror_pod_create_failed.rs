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
    for (pod, group) in refused {
        let cause = group.iter().rev().find_map(|e| e.event.cause);
        let why = match cause {
            Some(Cause::Forbidden) => {
                "forbidden (NodeRestriction, or the namespace is missing or terminating)"
            }
            Some(Cause::AlreadyExists) => {
                "a pod of that name already exists (a stale mirror pod with another hash)"
            }
            _ => "refused by the API server",
        };
        let mut target = split_pod(&pod);
        target.uid = static_uid(logs, &pod).unwrap_or_default();
        let mut f = finding(
            FindingKind::MirrorPodCreateFailed,
            Severity::Warning,
            format!(
                "the API server refuses the mirror pod of static pod {pod}: {why} ({}{})",
                plural(group.len(), "record", "records"),
                over(&group)
            ),
            "pod/mirror_client.go CreateMirrorPod: the kubelet creates a mirror pod for every static pod; on \
             AlreadyExists it accepts the existing pod only if its config.mirror matches (older kubelets \
             never replace it, k/k #6580)",
            match cause {
                Some(Cause::AlreadyExists) => format!(
                    "kubectl delete pod -n {} {} --grace-period=0 (the stale mirror pod) so the kubelet recreates it",
                    sh(&target.namespace),
                    sh(&target.name)
                ),
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

/// The registry's runner.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    mirror_pod_create_failed(input.logs, out);
}
