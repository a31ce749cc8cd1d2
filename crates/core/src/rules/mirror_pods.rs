//! Mirror pods: `MissingMirrorPod`, `StaleMirrorPod`, `OrphanedMirrorPod` (state),
//! `MirrorPodRecreateLoop` and `MirrorPodCreateFailed` (logs).

#[allow(unused_imports)]
use super::logs::*;
#[allow(unused_imports)]
use super::*;
use crate::logs::ids::is_pod_uid;

impl Ctx<'_> {
    /// `pkg/kubelet/pod/mirror_client.go` and `kubelet.go` `syncPod`: for every running static
    /// pod the kubelet keeps one mirror pod whose `kubernetes.io/config.mirror` equals the config
    /// hash, deleting an outdated one ("Deleted mirror pod because it is outdated"); housekeeping
    /// deletes mirror pods whose static pod is gone (`HandlePodCleanups`, "Clean up orphaned
    /// mirror pods"). Joined by hash and by name, never by the mirror pod's UID.
    pub(super) fn mirror_pods(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
        if let Some(why) = self.missing(&[View::Cri, View::Api]) {
            for kind in [
                FindingKind::MissingMirrorPod,
                FindingKind::StaleMirrorPod,
                FindingKind::OrphanedMirrorPod,
            ] {
                skipped.push(skip(kind, &why));
            }
            return;
        }
        // The newest READY sandbox per static pod name.
        let mut running: BTreeMap<(&str, &str), &Sandbox> = BTreeMap::new();
        for group in self.sandboxes_by_uid.values() {
            for &s in group
                .iter()
                .filter(|s| s.is_static() && s.state == SandboxState::Ready)
            {
                let key = (s.pod.namespace.as_str(), s.pod.name.as_str());
                if running
                    .get(&key)
                    .is_none_or(|cur| newest_first(&s, cur).is_lt())
                {
                    running.insert(key, s);
                }
            }
        }
        let mirror_rule = "pod/mirror_client.go and kubelet.go syncPod: the kubelet keeps exactly one \
                           mirror pod per running static pod, with kubernetes.io/config.mirror equal to \
                           the static pod's config hash, and deletes and recreates an outdated one";
        for (&(ns, name), &s) in &running {
            if !self.past_min_age(s.created_at) {
                continue;
            }
            let hash = s.config_hash();
            if self.node_mirror_by_hash(hash).is_some() {
                continue;
            }
            let static_pod = PodRef {
                namespace: ns.to_string(),
                name: name.to_string(),
                uid: hash.to_string(),
            };
            match self.node_mirror_by_name(ns, name) {
                None => out.push(Finding {
                    kind: FindingKind::MissingMirrorPod,
                    severity: Severity::Warning,
                    summary: format!(
                        "static pod {ns}/{name} runs but the API server has no mirror pod for it; it is \
                         invisible to kubectl and the scheduler"
                    ),
                    pod: Some(static_pod),
                    sandbox_id: Some(s.id.clone()),
                    container_id: None,
                    path: None,
                    evidence: vec![
                        self.sandbox_evidence(s),
                        Evidence::new(
                            EvidenceSource::Apiserver,
                            format!(
                                "no pod on node {} named {ns}/{name} or with \
                                 kubernetes.io/config.mirror={hash} (from {})",
                                self.view.node_name,
                                self.api_origin()
                            ),
                        ),
                    ],
                    kubelet_rule: mirror_rule.into(),
                    remediation: format!(
                        "journalctl -u kubelet | grep -i 'mirror pod' (creation is refused when the \
                         namespace {ns} is missing or terminating, or by NodeRestriction); kubectl get \
                         ns {ns}"
                    ),
                    gc_eligible: false,
                }),
                Some(m) => out.push(Finding {
                    kind: FindingKind::StaleMirrorPod,
                    severity: Severity::Warning,
                    summary: format!(
                        "mirror pod {ns}/{name} mirrors config hash {} but the running static pod has \
                         config hash {hash}",
                        m.mirror_hash().unwrap_or("")
                    ),
                    pod: Some(static_pod),
                    sandbox_id: Some(s.id.clone()),
                    container_id: None,
                    path: None,
                    evidence: vec![
                        self.sandbox_evidence(s),
                        Evidence::new(
                            EvidenceSource::Apiserver,
                            format!(
                                "mirror pod {ns}/{name} (API uid {}) has kubernetes.io/config.mirror={}",
                                m.pod.uid,
                                m.mirror_hash().unwrap_or("")
                            ),
                        ),
                    ],
                    kubelet_rule: mirror_rule.into(),
                    remediation: format!(
                        "journalctl -u kubelet | grep 'Deleted mirror pod' (a repeating line means a \
                         delete and recreate loop); kubectl delete pod -n {ns} {name} lets the kubelet \
                         recreate it"
                    ),
                    gc_eligible: false,
                }),
            }
        }

        if let Some(why) = &self.manifests_unusable {
            skipped.push(skip(FindingKind::OrphanedMirrorPod, why));
            return;
        }
        let mut unjudged_http = 0usize;
        for &m in &self.node_mirrors {
            let hash = m.mirror_hash().unwrap_or("");
            let (ns, name) = (m.pod.namespace.as_str(), m.pod.name.as_str());
            // A file pod's mirror is orphaned once no manifest declares the pod, even if a
            // stopped sandbox lingers; so is an HTTP pod's once the static pod URL no longer
            // serves it. Without --manifest-url an HTTP-sourced static pod's source is unknown,
            // so any sandbox of it counts; with a URL that cannot be read it is not judged.
            let http = m
                .annotations
                .get(crate::model::ANNOTATION_CONFIG_SOURCE)
                .map(String::as_str)
                == Some("http");
            let created = m.created_at.unwrap_or(self.now);
            if http && self.url_unusable.is_some() {
                if self.past_min_age(created) {
                    unjudged_http += 1;
                }
                continue;
            }
            let url_known = http && self.url_pods.is_some();
            // A READY one is StaticPodNotRemoved's business, which names the same cause.
            let has_sandbox = self.sandboxes_by_uid.values().flatten().any(|s| {
                s.is_static()
                    && (s.pod.uid == hash || (s.pod.namespace == ns && s.pod.name == name))
                    && ((http && !url_known) || s.state == SandboxState::Ready)
            });
            if has_sandbox
                || self.manifest_for(ns, name, hash).is_some()
                || self.url_declares(ns, name, hash) == Some(true)
                || !self.past_min_age(created)
            {
                continue;
            }
            out.push(Finding {
                kind: FindingKind::OrphanedMirrorPod,
                severity: Severity::Warning,
                summary: format!(
                    "mirror pod {ns}/{name} on node {} matches no static pod: no manifest declares it",
                    self.view.node_name
                ),
                pod: Some(PodRef { namespace: ns.to_string(), name: name.to_string(), uid: hash.to_string() }),
                sandbox_id: None,
                container_id: None,
                path: None,
                evidence: vec![
                    Evidence::new(
                        EvidenceSource::Apiserver,
                        format!(
                            "mirror pod {ns}/{name} (API uid {}) has kubernetes.io/config.mirror={hash}, \
                             created {}",
                            m.pod.uid,
                            m.created_at.map_or("unknown".to_string(), |t| t.to_string())
                        ),
                    ),
                    Evidence::new(
                        EvidenceSource::Manifest,
                        if url_known {
                            format!(
                                "no manifest in {} declares pod {ns}/{name}, and the static pod URL {} \
                                 does not serve it",
                                self.manifest_dir(),
                                self.manifest_url()
                            )
                        } else {
                            format!("no manifest in {} declares pod {ns}/{name}", self.manifest_dir())
                        },
                    ),
                    Evidence::new(EvidenceSource::Cri, {
                        let n = self.sandboxes_by_uid.get(hash).map_or(0, Vec::len);
                        format!("{n} pod sandbox(es) with uid {hash}")
                    }),
                ],
                kubelet_rule: "kubelet_pods.go HandlePodCleanups (\"Clean up orphaned mirror pods\"): \
                               housekeeping deletes every mirror pod whose static pod the kubelet no \
                               longer has (DeleteMirrorPod)"
                    .into(),
                remediation: format!(
                    "journalctl -u kubelet | grep -e 'Failed deleting a mirror pod' -e {name}; kubectl \
                     delete pod -n {ns} {name}"
                ),
                gc_eligible: false,
            });
        }
        if unjudged_http > 0
            && let Some(why) = &self.url_unusable
        {
            skipped.push(SkippedRule {
                kind: FindingKind::OrphanedMirrorPod,
                partial: true,
                reason: format!("{why} ({unjudged_http} HTTP static pods' mirror pods not judged)"),
            });
        }
    }

    // === OrphanedPodDirectory ===
}

// === MirrorPodRecreateLoop, MirrorPodCreateFailed ===

/// `kubelet.go` `syncPod` deletes a mirror pod that is not `IsMirrorPodOf` its static pod
/// ("Deleted mirror pod because it is outdated"; before 1.21 "Deleted mirror pod "<name>_<ns>
/// (<uid>)" because it is outdated", earlier "Deleting mirror pod …") and `mirror_client.go`
/// `CreateMirrorPod` recreates it: two deletions of one pod within a minute are a loop
/// (warning); a single one is the normal follow-up of a manifest edit (info). The API refusing
/// the creation is `mirror_pod_create_failed.rs`.
pub(super) fn mirror_pods(logs: &Logs<'_>, out: &mut Vec<Finding>) {
    let mut deleted: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    for e in logs.of(&[EventKind::MirrorPodOutdatedDeleted]) {
        if let Some(key) = pod_name_key(e) {
            deleted.entry(key).or_default().push(e);
        }
    }
    for (pod, mut group) in deleted {
        group.sort_by_key(|e| e.time);
        let looping = group
            .windows(2)
            .any(|w| match (w[0].time, w[1].time) {
                (Some(a), Some(b)) => b.duration_since(a) <= MIRROR_LOOP,
                _ => false,
            })
            || (records(&group) >= 3 && group.iter().all(|e| e.time.is_none()))
            // Repeats folded into a record: more of them than minutes between their first and
            // last time means two within a minute.
            || group.iter().any(|e| {
                e.folded.as_ref().is_some_and(|f| {
                    f.span.is_some_and(|(a, b)| {
                        f.records >= 2
                            && b.duration_since(a)
                                <= MIRROR_LOOP * i32::try_from(f.records - 1).unwrap_or(i32::MAX)
                    })
                })
            });
        let mut mirror_uids: Vec<String> = Vec::new();
        let mut seen_uids: HashSet<String> = HashSet::new();
        for u in group.iter().filter_map(|e| own_uid(e)) {
            if seen_uids.insert(u.clone()) {
                mirror_uids.push(u);
            }
        }
        let uids = match mirror_uids.as_slice() {
            [] => String::new(),
            few if few.len() <= LISTED => format!(" (mirror UIDs {})", few.join(" → ")),
            // The first ones and the last: a loop of thousands stays one line.
            [first @ .., last] => format!(
                " (mirror UIDs {} → … → {last}, {} in all)",
                first[..LISTED - 1].join(" → "),
                mirror_uids.len()
            ),
        };
        let mut target = split_pod(&pod);
        target.uid = static_uid(logs, &pod).unwrap_or_default();
        let (ns, name) = (sh(&target.namespace), sh(&target.name));
        let mut f = if looping {
            finding(
                FindingKind::MirrorPodRecreateLoop,
                Severity::Warning,
                format!(
                    "mirror pod {pod} was deleted as outdated {} in {}{uids}: a delete and recreate loop",
                    plural(records(&group), "time", "times"),
                    human(span(&group))
                ),
                "kubelet.go syncPod: a mirror pod that is not IsMirrorPodOf the static pod (its \
                 kubernetes.io/config.mirror differs from the static pod's config hash, or it is being deleted) \
                 is deleted and recreated; a loop means each new mirror is judged outdated again (two kubelets \
                 or two manifests with one pod name, or an admission webhook mutating it)",
                format!(
                    "kubectl get pod -n {ns} {name} -o yaml | grep config.mirror and compare it with the static \
                     pod's config.hash (crictl inspectp); look for a mutating webhook on {ns}, a second manifest \
                     or a second node with the name of this one"
                ),
            )
        } else {
            finding(
                FindingKind::MirrorPodRecreateLoop,
                Severity::Info,
                format!(
                    "mirror pod {pod} was deleted as outdated {}{uids}: normal after an edit of the static pod's \
                     manifest; a loop if it repeats",
                    if records(&group) == 1 {
                        "once".to_string()
                    } else {
                        format!("{} times, more than a minute apart", records(&group))
                    }
                ),
                "kubelet.go syncPod: a mirror pod that is not IsMirrorPodOf the static pod is deleted and \
                 recreated, as after every change of the manifest",
                format!(
                    "none; if it repeats: kubectl get pod -n {ns} {name} -o yaml | grep config.mirror"
                ),
            )
        };
        f.pod = Some(target);
        f.evidence = quote(&group);
        out.push(f);
    }
}

/// The static UID (32-hex config hash) the logs name for `ns/name`, if any.
pub(super) fn static_uid(logs: &Logs<'_>, pod: &str) -> Option<String> {
    logs.uids_of(pod)
        .iter()
        .find(|u| u.len() == 32 && is_pod_uid(u))
        .map(|u| (*u).to_string())
}

pub(super) fn split_pod(key: &str) -> PodRef {
    match key.split_once('/') {
        Some((ns, name)) => PodRef {
            namespace: ns.to_string(),
            name: name.to_string(),
            uid: String::new(),
        },
        None => PodRef {
            namespace: String::new(),
            name: key.to_string(),
            uid: String::new(),
        },
    }
}

/// The registry's runner of the log rules.
pub(super) fn run(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    mirror_pods(input.logs, out);
}
