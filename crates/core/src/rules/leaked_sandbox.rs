//! `LeakedSandbox`: the state rule (`kuberuntime_gc.go` `evictSandboxes`), the log rule for a dead
//! sandbox that keeps its pod's sandbox name reserved, and the log evidence added to every
//! leaked sandbox (`enrich`).

#[allow(unused_imports)]
use super::logs::*;
use super::teardown::{best_cause, failure_class};
#[allow(unused_imports)]
use super::*;

impl Ctx<'_> {
    /// `kuberuntime_gc.go` `evictSandboxes`: per pod UID, a sandbox that is not READY and holds
    /// no containers is removed when the pod is gone; when the pod exists, all such sandboxes
    /// but the most recently created one are removed (`removeOldestNSandboxes(len-1)`).
    pub(super) fn leaked_sandboxes(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
        if self.view.cri.is_none() {
            skipped.push(skip(
                FindingKind::LeakedSandbox,
                "the CRI view is unavailable",
            ));
            return;
        }
        let mut n_unjudged = 0;
        for group in self.sandboxes_by_uid.values() {
            let newest = group[0];
            for &s in group {
                if s.state != SandboxState::NotReady
                    || !self.containers_of(&s.id).is_empty()
                    || !self.past_min_age(s.created_at)
                {
                    continue;
                }
                let mut evidence = vec![self.sandbox_evidence(s)];
                let gone =
                    if self.api_unusable.is_some() || self.static_source_unusable(s).is_some() {
                        None
                    } else {
                        Some(self.pod_known_by(s).is_none())
                    };
                let summary;
                if s.id != newest.id {
                    evidence.push(Evidence::new(
                        EvidenceSource::Cri,
                        format!(
                            "pod sandbox {} (attempt {}, {}, created {}) is the pod's most recent",
                            newest.id,
                            newest.attempt,
                            newest.state.cri_name(),
                            newest.created_at
                        ),
                    ));
                    summary = format!(
                        "pod sandbox {} of {}/{} is NOTREADY with no containers for {} and is not \
                         the pod's newest sandbox; kubelet's sandbox GC should have removed it",
                        short(&s.id),
                        s.pod.namespace,
                        s.pod.name,
                        human(self.age(s.created_at))
                    );
                } else if gone == Some(true) {
                    evidence.extend(self.pod_gone_evidence(s));
                    summary = format!(
                        "pod sandbox {} of {}/{} is NOTREADY with no containers for {} and its pod \
                         is gone; kubelet's sandbox GC should have removed it",
                        short(&s.id),
                        s.pod.namespace,
                        s.pod.name,
                        human(self.age(s.created_at))
                    );
                } else {
                    if gone.is_none() {
                        n_unjudged += 1;
                    }
                    continue;
                }
                out.push(Finding {
                    kind: FindingKind::LeakedSandbox,
                    severity: Severity::Warning,
                    summary,
                    pod: Some(s.pod.clone()),
                    sandbox_id: Some(s.id.clone()),
                    container_id: None,
                    path: None,
                    evidence,
                    kubelet_rule: "kuberuntime_gc.go evictSandboxes: a pod sandbox that is not READY \
                                   and holds no containers is removed when its pod is gone \
                                   (ShouldPodContentBeRemoved); for a pod that still exists every such \
                                   sandbox but the most recently created one is removed \
                                   (removeOldestNSandboxes)"
                        .into(),
                    remediation: format!(
                        "journalctl -u kubelet | grep {id} (\"Failed to stop sandbox before removing\" \
                         means GC tries and the runtime or CNI fails); then crictl stopp {id} && \
                         crictl rmp {id}, or podcoroner gc",
                        id = sh(&s.id)
                    ),
                    gc_eligible: true,
                });
            }
        }
        // Unusable manifests leave only static sandboxes unjudged: partial only when there is one.
        if let Some(why) = self.api_unusable.as_ref().or(self
            .manifests_unusable
            .as_ref()
            .or(self.url_unusable.as_ref())
            .filter(|_| n_unjudged > 0))
        {
            skipped.push(SkippedRule {
                kind: FindingKind::LeakedSandbox,
                partial: true,
                reason: format!(
                    "{why}: only older sandboxes of a pod were judged; {n_unjudged} newest NOTREADY \
                     sandbox(es) could not be checked against the pod's existence"
                ),
            });
        }
    }

    pub(super) fn pod_gone_evidence(&self, s: &Sandbox) -> Vec<Evidence> {
        let uid = &s.pod.uid;
        let mut ev = vec![Evidence::new(
            EvidenceSource::Apiserver,
            format!(
                "no pod with uid {uid} among {} pods from {}, and no mirror pod on node {} with \
                 kubernetes.io/config.mirror={uid}",
                self.n_api_pods(),
                self.api_origin(),
                self.view.node_name
            ),
        )];
        if self.view.manifests.is_some() {
            ev.push(Evidence::new(
                EvidenceSource::Manifest,
                format!(
                    "no manifest in {} declares pod {}/{} or uid {uid}",
                    self.manifest_dir(),
                    s.pod.namespace,
                    s.pod.name
                ),
            ));
        }
        if let Some(pods) = self.url_pods {
            ev.push(Evidence::new(
                EvidenceSource::Manifest,
                format!(
                    "none of the {} pods the static pod URL {} serves is {}/{} or has uid {uid}",
                    pods.len(),
                    self.manifest_url(),
                    s.pod.namespace,
                    s.pod.name
                ),
            ));
        }
        ev
    }

    // === DuplicateReadySandboxes ===
}

// === LeakedSandbox (name reserved) ===

/// CRI-O's `ReservePodName` failure, `error reserving pod name k8s_<name>_<ns>_<uid>_<attempt>
/// for id <id>: name is reserved`: `<id>` is the new `RunPodSandbox`'s, the holder is not named.
pub(super) fn crio_name_reservation(e: &LoggedEvent) -> bool {
    // CRI-O 1.18 logged it as a warning of its own, capitalised.
    crate::logs::catalogue::contains_words(&e.text, "error reserving pod name")
}

/// containerd's CRI plugin (`sandbox_run.go`, `RunPodSandbox`): "failed to reserve sandbox name
/// "<name>_<ns>_<uid>_<attempt>": name "…" is reserved for "<id>"": a dead sandbox (typically
/// reloaded after an unclean restart, containerd/cri #1014) keeps the pod's sandbox name and no
/// new sandbox of the pod can be created. Reported as that sandbox's `LeakedSandbox`.
///
/// Not a finding: a reserving sandbox the CRI view no longer lists.
pub(super) fn sandbox_name_reserved(logs: &Logs<'_>, view: &NodeView, out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<String, Vec<&LoggedEvent>> = BTreeMap::new();
    // CRI-O's reservation names the new request's sandbox, not the holder: no leaked sandbox
    // to name.
    for e in logs
        .all
        .iter()
        .filter(|e| e.event.kind == EventKind::SandboxNameReserved && !crio_name_reservation(e))
    {
        if let Some(id) = logs.sandbox_key(e) {
            groups.entry(id).or_default().push(e);
        }
    }
    for (id, group) in groups {
        if let Some(cri) = &view.cri
            && !id.ends_with('…')
            && !cri.sandboxes.iter().any(|s| s.id == id)
        {
            continue;
        }
        let pod = logs.pod_of(view, &group, Some(&id), None);
        let mut f = finding(
            FindingKind::LeakedSandbox,
            Severity::Warning,
            format!(
                "pod sandbox {}{} keeps the pod's sandbox name reserved, so no new sandbox of the pod can be \
                 created (\"{}\", {}{})",
                shown(&id),
                of_pod(pod.as_ref()),
                if group
                    .iter()
                    .any(|e| e.text.contains("is already in use by sandbox"))
                {
                    "is already in use by sandbox"
                } else {
                    "failed to reserve sandbox name"
                },
                plural(records(&group), "record", "records"),
                over(&group)
            ),
            "containerd CRI RunPodSandbox reserves the name <name>_<namespace>_<uid>_<attempt> (iSulad: \
             k8s_POD_<name>_<namespace>_<uid>_<attempt>) for the sandbox that holds it; a dead sandbox reloaded after an unclean restart keeps it until it is removed, and \
             every RunPodSandbox of the pod fails (containerd/cri #1014)",
            format!(
                "crictl inspectp {id} (its state); crictl stopp {id} && crictl rmp {id} frees the name and the \
                 kubelet then creates the pod's sandbox",
                id = sh(id.trim_end_matches('…'))
            ),
        );
        f.pod = pod;
        f.sandbox_id = Some(id);
        f.evidence = quote(&group);
        out.push(f);
    }
}

// === enrichment ===

/// The evidence line [`enrich`] adds when the logs hold the kubelet's failing attempts to stop
/// or remove the sandbox (`crate::pasted::add_logs` escalates on it).
pub(crate) const GC_FAILING: &str = "the kubelet's GC is trying and failing";

/// Adds to every `LeakedSandbox` what the logs say of it: the kubelet's GC trying and failing
/// (stop errors, with their cause) or not trying (a stuck pod worker), because the remedies differ.
pub fn enrich(findings: &mut [Finding], events: &[LoggedEvent]) {
    enrich_with(findings, &Logs::new(events));
}

/// [`enrich`] with the log index of the diagnosis.
pub(super) fn enrich_with(findings: &mut [Finding], logs: &Logs<'_>) {
    if !findings
        .iter()
        .any(|f| f.kind == FindingKind::LeakedSandbox)
    {
        return;
    }
    // The failures of each sandbox (full ID), and those naming a cut one, in reading order.
    let mut by_sandbox: HashMap<String, Vec<usize>> = HashMap::new();
    let mut cut: Vec<(String, usize)> = Vec::new();
    for (i, e) in logs.all.iter().enumerate() {
        if !e.event.kind.is_failure() {
            continue;
        }
        match logs.sandbox_key(e) {
            Some(k) if k.ends_with('…') => cut.push((k, i)),
            Some(k) => by_sandbox.entry(k).or_default().push(i),
            None => {}
        }
    }
    for f in findings
        .iter_mut()
        .filter(|f| f.kind == FindingKind::LeakedSandbox)
    {
        let Some(id) = f.sandbox_id.clone() else {
            continue;
        };
        let uid = f.pod.as_ref().map(|p| p.uid.clone()).unwrap_or_default();
        let mut at: Vec<usize> = by_sandbox.get(&id).cloned().unwrap_or_default();
        at.extend(
            cut.iter()
                .filter(|(k, _)| *k == id || id.starts_with(k.trim_end_matches('…')))
                .map(|(_, i)| *i),
        );
        // A full key that is a prefix of the sandbox's ID (an ID of unstated length); for a
        // pasted sandbox's cut ID (`9ae3dcda0548f…`, crictl's table), the full keys it begins.
        let pasted_prefix = id.strip_suffix('…').filter(|_| !f.gc_eligible);
        for (k, is) in &by_sandbox {
            if *k != id
                && (id.starts_with(k.as_str()) || pasted_prefix.is_some_and(|p| k.starts_with(p)))
            {
                at.extend(is);
            }
        }
        at.sort_unstable();
        let failures: Vec<&LoggedEvent> = at.into_iter().map(|i| &logs.all[i]).collect();
        let stuck = logs
            .of(&[EventKind::PodWorkerNotTerminated])
            .any(|e| e.event.ids.pod_uid.as_deref() == Some(uid.as_str()));
        if let Some((cause, said)) = best_cause(&failures) {
            let (class, fix) = failure_class(cause, said, Some(&id), logs.runtime);
            f.evidence.push(Evidence::new(
                source_of(failures[0]),
                format!(
                    "{GC_FAILING}: {} failure records, cause {class}",
                    records(&failures)
                ),
            ));
            f.evidence.extend(quote(&failures));
            f.remediation = format!("{fix}; GC then removes it by itself. {}", f.remediation);
        } else if stuck {
            f.evidence.push(Evidence::new(
                EvidenceSource::KubeletLog,
                format!("the kubelet's GC is not trying: the pod worker of {uid} is stuck (\"still not fully terminated\")"),
            ));
            f.remediation = format!(
                "systemctl restart kubelet (a stuck pod worker holds it); {}",
                f.remediation
            );
        } else {
            f.evidence.push(Evidence::new(
                EvidenceSource::KubeletLog,
                "no stop or removal attempt for this sandbox in the logs read (the GC logs \"Removing sandbox\" only \
                 at -v=4; failures at every level)",
            ));
        }
    }
}

/// The registry's runner of the name-reserved log rule.
pub(super) fn run_name_reserved(input: &LogInput<'_, '_>, out: &mut Vec<Finding>) {
    sandbox_name_reserved(input.logs, input.view, out);
}
