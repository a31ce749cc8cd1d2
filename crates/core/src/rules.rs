//! The diagnosis rules: each joins the views of a [`NodeView`] the way the kubelet does and
//! reports where they disagree.
//!
//! Every rule names the kubelet behaviour it mirrors in [`Finding::kubelet_rule`]. A rule whose
//! input view is unavailable is not guessed: it is listed in [`Diagnosis::skipped`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
use crate::model::{ApiPod, Container, NodeView, PodRef, Sandbox, SandboxState};

/// Thresholds of the rules. There is no `Default`: callers state every value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// A sandbox, container, mirror pod or pod directory younger than this is never reported:
    /// the kubelet may simply not have caught up yet. The CLI default is 10 minutes.
    pub min_age: Duration,
    /// A pod in phase Failed is reported once its last status change is older than this. The
    /// CLI default is 1 hour.
    pub failed_pod_min_age: Duration,
    /// When the API view is unavailable, treat every pod that no mirror pod or manifest knows as
    /// deleted instead of skipping the rules that need the API (`gc --assume-pods-deleted`, for
    /// nodes cut off from their API server). `false` for `diagnose`.
    pub assume_pods_deleted: bool,
}

/// A rule that did not run, or ran on part of its input, because a view was unavailable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRule {
    /// The finding kind the rule produces.
    pub kind: FindingKind,
    /// True when the rule ran but could not judge every case (e.g. `LeakedSandbox` still
    /// reports older sandboxes of a pod without the API view).
    pub partial: bool,
    /// Why, naming the missing view.
    pub reason: String,
}

/// The result of [`diagnose`]: findings sorted by severity (critical first), kind, pod and ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    /// The findings.
    pub findings: Vec<Finding>,
    /// The rules that were skipped or ran only in part.
    pub skipped: Vec<SkippedRule>,
}

/// Runs every rule over `view` as of `now`.
///
/// Pure and total: it never fails and never panics on any input; a view that is `None` makes
/// the rules that need it skip.
pub fn diagnose(view: &NodeView, config: &Config, now: Timestamp) -> Diagnosis {
    let ctx = Ctx::new(view, config, now);
    let mut findings = Vec::new();
    let mut skipped = Vec::new();

    ctx.leaked_sandboxes(&mut findings, &mut skipped);
    ctx.duplicate_ready_sandboxes(&mut findings, &mut skipped);
    ctx.orphaned_containers(&mut findings, &mut skipped);
    ctx.static_pods_not_removed(&mut findings, &mut skipped);
    ctx.mirror_pods(&mut findings, &mut skipped);
    ctx.orphaned_pod_directories(&mut findings, &mut skipped);
    ctx.invalid_manifests(&mut findings, &mut skipped);
    ctx.failed_pods(&mut findings, &mut skipped);

    findings.sort_by(report_order);
    Diagnosis { findings, skipped }
}

/// The order findings are reported in: severity (critical first), kind, pod, sandbox ID,
/// container ID, summary.
pub fn report_order(a: &Finding, b: &Finding) -> std::cmp::Ordering {
    b.severity
        .cmp(&a.severity)
        .then(a.kind.cmp(&b.kind))
        .then_with(|| a.pod.cmp(&b.pod))
        .then_with(|| a.sandbox_id.cmp(&b.sandbox_id))
        .then_with(|| a.container_id.cmp(&b.container_id))
        .then_with(|| a.summary.cmp(&b.summary))
}

/// The indexes every rule shares, built once per diagnosis.
struct Ctx<'a> {
    view: &'a NodeView,
    config: &'a Config,
    now: Timestamp,
    /// Containers per sandbox ID.
    containers_by_sandbox: HashMap<&'a str, Vec<&'a Container>>,
    /// Kubelet-managed sandboxes per pod UID, newest first.
    sandboxes_by_uid: BTreeMap<&'a str, Vec<&'a Sandbox>>,
    /// Why the API view cannot be used, when it cannot.
    api_unusable: Option<String>,
    /// UIDs of every pod the API returned.
    api_uids: HashSet<&'a str>,
    /// Mirror pods bound to this node.
    node_mirrors: Vec<&'a ApiPod>,
    /// Why the manifest view is missing, when it is.
    manifests_unusable: Option<String>,
    /// Whether some static pod's name ends with `-<node name>`, confirming the node name.
    node_name_confirmed: bool,
}

/// A kubelet-created sandbox is newer than another when it was created later; the attempt
/// breaks ties (`kuberuntime_gc.go`, `sandboxByCreated`).
fn newest_first(a: &&Sandbox, b: &&Sandbox) -> std::cmp::Ordering {
    b.created_at
        .cmp(&a.created_at)
        .then(b.attempt.cmp(&a.attempt))
        .then(a.id.cmp(&b.id))
}

impl<'a> Ctx<'a> {
    fn new(view: &'a NodeView, config: &'a Config, now: Timestamp) -> Ctx<'a> {
        let mut containers_by_sandbox: HashMap<&str, Vec<&Container>> = HashMap::new();
        let mut sandboxes_by_uid: BTreeMap<&str, Vec<&Sandbox>> = BTreeMap::new();
        if let Some(cri) = &view.cri {
            for c in &cri.containers {
                containers_by_sandbox
                    .entry(c.sandbox_id.as_str())
                    .or_default()
                    .push(c);
            }
            for s in cri.sandboxes.iter().filter(|s| s.is_kubelet_managed()) {
                sandboxes_by_uid
                    .entry(s.pod.uid.as_str())
                    .or_default()
                    .push(s);
            }
            for group in sandboxes_by_uid.values_mut() {
                group.sort_by(newest_first);
            }
        }

        let mut api_unusable = None;
        let mut api_uids = HashSet::new();
        let mut node_mirrors = Vec::new();
        match &view.api {
            None if config.assume_pods_deleted => {}
            None => api_unusable = Some("the API view is unavailable".to_string()),
            Some(api) => {
                api_uids = api.pods.iter().map(|p| p.pod.uid.as_str()).collect();
                node_mirrors = api
                    .pods
                    .iter()
                    .filter(|p| p.node_name == view.node_name && p.mirror_hash().is_some())
                    .collect();
                // A wrong node name, or a partial listing (a --pods file of one namespace),
                // makes live pods look gone. When the API view lacks most of the pods the runtime
                // runs, refuse to judge by it.
                let running: Vec<&str> = view.cri.as_ref().map_or(vec![], |cri| {
                    cri.sandboxes
                        .iter()
                        .filter(|s| {
                            s.state == SandboxState::Ready
                                && s.is_kubelet_managed()
                                && s.config_source() == Some("api")
                        })
                        .map(|s| s.pod.uid.as_str())
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .collect()
                });
                let on_node: HashSet<&str> = api
                    .pods
                    .iter()
                    .filter(|p| p.node_name == view.node_name)
                    .map(|p| p.pod.uid.as_str())
                    .collect();
                let missing = running.iter().filter(|uid| !on_node.contains(*uid)).count();
                if !running.is_empty() && missing * 2 > running.len() {
                    let n_on_node = on_node.len();
                    api_unusable = Some(format!(
                        "the API view ({}) lacks {missing} of the {} pods the runtime runs (READY \
                         sandboxes with config.source=api) and has {n_on_node} pods on node {:?}: \
                         it is incomplete (a --pods file of one namespace?) or the node name is \
                         wrong (set --node-name)",
                        api.origin,
                        running.len(),
                        view.node_name
                    ));
                }
            }
        }
        // Static pods running while the manifest directory does not exist: --manifest-dir is
        // wrong, and every static pod would look removed.
        let n_static_running = view.cri.as_ref().map_or(0, |cri| {
            cri.sandboxes
                .iter()
                .filter(|s| s.state == SandboxState::Ready && s.config_source() == Some("file"))
                .count()
        });
        // A missing directory is what the kubelet reads as "no static pods", but a configured
        // one that is missing is more often a mount the agent lacks: not trusted either way. A
        // file podcoroner cannot read may declare any static pod.
        let manifests_unusable = match &view.manifests {
            None => Some("the static pod manifest view is unavailable".to_string()),
            Some(m) if !m.exists && n_static_running > 0 => Some(format!(
                "the manifest directory {} does not exist, yet the runtime runs {n_static_running} \
                 static pod sandbox(es) (config.source=file): --manifest-dir is probably wrong",
                m.dir
            )),
            Some(m) if !m.exists => Some(format!(
                "the manifest directory {} does not exist: a missing mount or a wrong \
                 --manifest-dir cannot be told from a node without static pods",
                m.dir
            )),
            Some(m) if !m.unreadable.is_empty() => Some(format!(
                "podcoroner cannot read {} file(s) of the manifest directory {} ({}: {}): a \
                 static pod declared there cannot be told from a removed one",
                m.unreadable.len(),
                m.dir,
                m.unreadable[0].path,
                m.unreadable[0].reason
            )),
            Some(_) => None,
        };
        // The node name is confirmed when a static pod's name ends with it (the kubelet appends
        // it); only then are manifest names matched exactly.
        let node_suffix = format!("-{}", view.node_name.to_lowercase());
        let node_name_confirmed = sandboxes_by_uid
            .values()
            .flatten()
            .any(|s| s.config_source() == Some("file") && s.pod.name.ends_with(&node_suffix));

        Ctx {
            view,
            config,
            now,
            containers_by_sandbox,
            sandboxes_by_uid,
            api_unusable,
            api_uids,
            node_mirrors,
            manifests_unusable,
            node_name_confirmed,
        }
    }

    // === helpers ===

    fn age(&self, t: Timestamp) -> SignedDuration {
        self.now.duration_since(t)
    }

    fn old_enough(&self, t: Timestamp, min: Duration) -> bool {
        let min = SignedDuration::try_from(min).unwrap_or(SignedDuration::MAX);
        self.age(t) >= min
    }

    fn past_min_age(&self, t: Timestamp) -> bool {
        self.old_enough(t, self.config.min_age)
    }

    fn containers_of(&self, sandbox_id: &str) -> &[&'a Container] {
        self.containers_by_sandbox
            .get(sandbox_id)
            .map_or(&[], Vec::as_slice)
    }

    fn manifest_dir(&self) -> &str {
        self.view.manifests.as_ref().map_or("", |m| m.dir.as_str())
    }

    /// The valid manifests, with their pods.
    fn manifest_pods(&self) -> impl Iterator<Item = (&'a str, &'a crate::model::ManifestPod)> {
        self.view
            .manifests
            .iter()
            .flat_map(|m| m.files.iter())
            .filter_map(|m| m.pod.as_ref().ok().map(|p| (m.path.as_str(), p)))
    }

    /// The manifest that declares the static pod `namespace/name` (a full pod name, with the node
    /// suffix) or the UID `uid`. Until a static pod confirms the node name, a manifest whose name
    /// is a prefix of the pod name followed by `-` also counts, so a wrong `--node-name` can never
    /// make a live static pod look removed.
    fn manifest_for(&self, namespace: &str, name: &str, uid: &str) -> Option<&'a str> {
        let node = &self.view.node_name;
        self.manifest_pods()
            .find(|(_, m)| {
                m.uid.as_deref() == Some(uid)
                    || (m.namespace == namespace
                        && (m.full_name(node) == name
                            || (!self.node_name_confirmed
                                && name
                                    .strip_prefix(m.name.as_str())
                                    .is_some_and(|rest| rest.starts_with('-')))))
            })
            .map(|(path, _)| path)
    }

    fn node_mirror_by_hash(&self, hash: &str) -> Option<&'a ApiPod> {
        self.node_mirrors
            .iter()
            .copied()
            .find(|m| m.mirror_hash() == Some(hash))
    }

    fn node_mirror_by_name(&self, namespace: &str, name: &str) -> Option<&'a ApiPod> {
        self.node_mirrors
            .iter()
            .copied()
            .find(|m| m.pod.namespace == namespace && m.pod.name == name)
    }

    fn api_origin(&self) -> &str {
        self.view
            .api
            .as_ref()
            .map_or("no API server (pods assumed deleted)", |a| {
                a.origin.as_str()
            })
    }

    fn n_api_pods(&self) -> usize {
        self.view.api.as_ref().map_or(0, |a| a.pods.len())
    }

    fn sandbox_evidence(&self, s: &Sandbox) -> Evidence {
        let n = self.containers_of(&s.id).len();
        let mut detail = format!(
            "pod sandbox {} of {}/{} is {}, created {} ({} ago), attempt {}, {} container{}",
            s.id,
            s.pod.namespace,
            s.pod.name,
            s.state.cri_name(),
            s.created_at,
            human(self.age(s.created_at)),
            s.attempt,
            n,
            if n == 1 { "" } else { "s" },
        );
        if let Some(source) = s.config_source() {
            detail.push_str(&format!(", config.source={source}"));
        }
        if s.is_static() {
            detail.push_str(&format!(", config.hash={}", s.config_hash()));
        }
        Evidence::new(EvidenceSource::Cri, detail)
    }

    /// Why the pod `uid` is still known to the kubelet, or `None` when nobody knows it.
    /// Requires the API view; for a static pod also the manifest view.
    ///
    /// For a file-sourced static pod the manifest directory is the truth: a mirror pod left
    /// behind does not keep a removed static pod alive (the kubelet deletes such mirror pods).
    fn pod_known_by(&self, s: &Sandbox) -> Option<String> {
        let uid = s.pod.uid.as_str();
        if self.api_uids.contains(uid) {
            return Some(format!("the API server has pod uid {uid}"));
        }
        let file_pod = s.config_source() == Some("file") && self.manifests_unusable.is_none();
        if !file_pod && let Some(m) = self.node_mirror_by_hash(uid) {
            return Some(format!(
                "mirror pod {}/{} has kubernetes.io/config.mirror={uid}",
                m.pod.namespace, m.pod.name
            ));
        }
        if let Some(path) = self.manifest_for(&s.pod.namespace, &s.pod.name, uid) {
            return Some(format!(
                "manifest {path} declares pod {}/{}",
                s.pod.namespace, s.pod.name
            ));
        }
        None
    }

    // === LeakedSandbox ===

    /// `kuberuntime_gc.go` `evictSandboxes`: per pod UID, a sandbox that is not READY and holds
    /// no containers is removed when the pod is gone; when the pod exists, all such sandboxes
    /// but the most recently created one are removed (`removeOldestNSandboxes(len-1)`).
    fn leaked_sandboxes(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
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
                let gone = if self.api_unusable.is_some()
                    || (s.is_static() && self.manifests_unusable.is_some())
                {
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
                        .to_string(),
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
        if let Some(why) = self
            .api_unusable
            .as_ref()
            .or(self.manifests_unusable.as_ref().filter(|_| n_unjudged > 0))
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

    fn pod_gone_evidence(&self, s: &Sandbox) -> Vec<Evidence> {
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
        ev
    }

    // === DuplicateReadySandboxes ===

    /// `kuberuntime_manager.go` `podSandboxChanged`: more than one READY sandbox makes the
    /// kubelet kill the pod and create a new sandbox ("Multiple sandboxes are ready for Pod.
    /// Need to reconcile them"); duplicates that outlive `min_age` mean that reconcile fails.
    fn duplicate_ready_sandboxes(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
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
                    .to_string(),
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

    /// The CRI ties every container to a sandbox (`CreateContainer` takes `pod_sandbox_id`) and
    /// the kubelet sees containers only through their sandbox (`kuberuntime_manager.go`
    /// `GetPodStatus`); a container whose sandbox is gone is outside the kubelet's pod model.
    fn orphaned_containers(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
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
                    .to_string(),
                remediation: format!("crictl inspect {id}; crictl stop {id} && crictl rm {id}", id = sh(&c.id)),
                gc_eligible: false,
            });
        }
    }

    // === StaticPodNotRemoved ===

    /// `config/file.go`: the file source re-lists the manifest directory and a pod whose file is
    /// gone is REMOVEd, which makes its pod worker kill the sandbox. A READY static sandbox with
    /// no manifest past `min_age` means that removal never happened.
    fn static_pods_not_removed(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
        if let Some(why) = self.missing(&[View::Cri, View::Manifests]) {
            skipped.push(skip(FindingKind::StaticPodNotRemoved, &why));
            return;
        }
        for group in self.sandboxes_by_uid.values() {
            for &s in group {
                if s.state != SandboxState::Ready
                    || s.config_source() != Some("file")
                    || !self.past_min_age(s.created_at)
                    || self
                        .manifest_for(&s.pod.namespace, &s.pod.name, &s.pod.uid)
                        .is_some()
                {
                    continue;
                }
                let n_files = self.view.manifests.as_ref().map_or(0, |m| m.files.len());
                out.push(Finding {
                    kind: FindingKind::StaticPodNotRemoved,
                    severity: Severity::Critical,
                    summary: format!(
                        "static pod {}/{} still runs (sandbox {} READY for {}) but its manifest is gone",
                        s.pod.namespace,
                        s.pod.name,
                        short(&s.id),
                        human(self.age(s.created_at))
                    ),
                    pod: Some(s.pod.clone()),
                    sandbox_id: Some(s.id.clone()),
                    container_id: None,
                    path: None,
                    evidence: vec![
                        self.sandbox_evidence(s),
                        Evidence::new(
                            EvidenceSource::Manifest,
                            format!(
                                "none of the {n_files} files in {} declares pod {}/{} (name + \"-\" + \
                                 node {})",
                                self.manifest_dir(),
                                s.pod.namespace,
                                s.pod.name,
                                self.view.node_name
                            ),
                        ),
                    ],
                    kubelet_rule: "config/file.go: a static pod whose manifest file disappears is \
                                   REMOVEd and its pod worker kills the sandbox (pod_workers.go \
                                   SyncPodKill); kubelet.go HandlePodRemoves holds the removal back \
                                   while sources are not ready (\"skipping delete because sources \
                                   aren't ready yet\")"
                        .to_string(),
                    remediation: format!(
                        "journalctl -u kubelet | grep -e 'sources aren' -e {name}; if the manifest was \
                         removed on purpose: crictl stopp {id} && crictl rmp {id}, then systemctl \
                         restart kubelet",
                        name = sh(&s.pod.name),
                        id = sh(&s.id)
                    ),
                    gc_eligible: false,
                });
            }
        }
    }

    // === MissingMirrorPod, StaleMirrorPod, OrphanedMirrorPod ===

    /// `pkg/kubelet/pod/mirror_client.go` and `kubelet.go` `syncPod`: for every running static
    /// pod the kubelet keeps one mirror pod whose `kubernetes.io/config.mirror` equals the config
    /// hash, deleting an outdated one ("Deleted mirror pod because it is outdated"); housekeeping
    /// deletes mirror pods whose static pod is gone (`HandlePodCleanups`, "Clean up orphaned
    /// mirror pods"). Joined by hash and by name, never by the mirror pod's UID.
    fn mirror_pods(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
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
                    kubelet_rule: mirror_rule.to_string(),
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
                    kubelet_rule: mirror_rule.to_string(),
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
        for &m in &self.node_mirrors {
            let hash = m.mirror_hash().unwrap_or("");
            let (ns, name) = (m.pod.namespace.as_str(), m.pod.name.as_str());
            // A file pod's mirror is orphaned once no manifest declares the pod, even if a
            // stopped sandbox lingers; an HTTP-sourced static pod has no manifest, so any sandbox
            // of it counts.
            let http = m
                .annotations
                .get(crate::model::ANNOTATION_CONFIG_SOURCE)
                .map(String::as_str)
                == Some("http");
            // A READY one is StaticPodNotRemoved's business, which names the same cause.
            let has_sandbox = self.sandboxes_by_uid.values().flatten().any(|s| {
                s.is_static()
                    && (s.pod.uid == hash || (s.pod.namespace == ns && s.pod.name == name))
                    && (http || s.state == SandboxState::Ready)
            });
            let created = m.created_at.unwrap_or(self.now);
            if has_sandbox
                || self.manifest_for(ns, name, hash).is_some()
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
                        format!("no manifest in {} declares pod {ns}/{name}", self.manifest_dir()),
                    ),
                    Evidence::new(EvidenceSource::Cri, {
                        let n = self.sandboxes_by_uid.get(hash).map_or(0, Vec::len);
                        format!("{n} pod sandbox(es) with uid {hash}")
                    }),
                ],
                kubelet_rule: "kubelet_pods.go HandlePodCleanups (\"Clean up orphaned mirror pods\"): \
                               housekeeping deletes every mirror pod whose static pod the kubelet no \
                               longer has (DeleteMirrorPod)"
                    .to_string(),
                remediation: format!(
                    "journalctl -u kubelet | grep -e 'Failed deleting a mirror pod' -e {name}; kubectl \
                     delete pod -n {ns} {name}"
                ),
                gc_eligible: false,
            });
        }
    }

    // === OrphanedPodDirectory ===

    /// `kubelet_volumes.go` `cleanupOrphanedPodDirs`, run by housekeeping every 2 s: a
    /// `pods/<uid>` directory of a pod neither desired nor running is removed once its volumes
    /// are unmounted; only empty volume directories are rmdir'ed, so a directory that stays
    /// holds a mounted or non-empty volume.
    fn orphaned_pod_directories(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
        if let Some(why) = self.missing(&[View::PodDirs, View::Cri, View::Api, View::Manifests]) {
            skipped.push(skip(FindingKind::OrphanedPodDirectory, &why));
            return;
        }
        let (Some(dirs), Some(cri)) = (&self.view.pod_dirs, &self.view.cri) else {
            return;
        };
        let mut known: HashSet<&str> = self.api_uids.clone();
        known.extend(cri.sandboxes.iter().map(|s| s.pod.uid.as_str()));
        known.extend(cri.containers.iter().filter_map(Container::pod_uid));
        known.extend(self.node_mirrors.iter().filter_map(|m| m.mirror_hash()));
        known.extend(self.manifest_pods().filter_map(|(_, m)| m.uid.as_deref()));
        // A valid manifest without a sandbox or mirror pod has a UID (its config hash) that
        // podcoroner cannot compute; a static-looking directory may be that pod's.
        let unmatched_manifests: Vec<&str> = self
            .manifest_pods()
            .filter(|(_, m)| {
                let full = m.full_name(&self.view.node_name);
                m.uid.is_none()
                    && !cri
                        .sandboxes
                        .iter()
                        .any(|s| s.pod.namespace == m.namespace && s.pod.name == full)
                    && self.node_mirror_by_name(&m.namespace, &full).is_none()
            })
            .map(|(path, _)| path)
            .collect();
        for d in dirs {
            if known.contains(d.uid.as_str())
                || d.modified_at.is_some_and(|t| !self.past_min_age(t))
            {
                continue;
            }
            if looks_like_config_hash(&d.uid) && !unmatched_manifests.is_empty() {
                continue;
            }
            let left = if d.volume_dirs.is_empty() {
                format!(
                    "no volume directories left; entries: {}",
                    list_or_none(&d.entries)
                )
            } else {
                format!("volume directories left: {}", d.volume_dirs.join(", "))
            };
            out.push(Finding {
                kind: FindingKind::OrphanedPodDirectory,
                severity: Severity::Warning,
                summary: format!("pod directory {} belongs to no known pod; {left}", d.path),
                pod: Some(PodRef { namespace: String::new(), name: String::new(), uid: d.uid.clone() }),
                sandbox_id: None,
                container_id: None,
                path: Some(d.path.clone()),
                evidence: vec![
                    Evidence::new(
                        EvidenceSource::Filesystem,
                        format!(
                            "{} exists{}; {left}",
                            d.path,
                            d.modified_at.map_or(String::new(), |t| format!(", modified {t}"))
                        ),
                    ),
                    Evidence::new(
                        EvidenceSource::Apiserver,
                        format!(
                            "no pod with uid {} among {} pods from {}",
                            d.uid,
                            self.n_api_pods(),
                            self.api_origin()
                        ),
                    ),
                    Evidence::new(
                        EvidenceSource::Cri,
                        format!("no pod sandbox or container labelled io.kubernetes.pod.uid={}", d.uid),
                    ),
                ],
                kubelet_rule: "kubelet_volumes.go cleanupOrphanedPodDirs (housekeeping, every 2 s): the \
                               directory of a pod neither desired nor running is removed once its volumes \
                               are unmounted; only empty volume directories are removed (\"Orphaned pod \
                               found, but volume paths are still present on disk\")"
                    .to_string(),
                remediation: format!(
                    "grep {uid} /proc/mounts and umount what is listed; the kubelet then removes the \
                     directory at its next housekeeping, but only rmdirs volume directories: one that \
                     is unmounted yet not empty stays until you inspect and remove it (ls -la \
                     {path}/volumes/*/*)",
                    uid = sh(&d.uid),
                    path = sh(&d.path)
                ),
                gc_eligible: false,
            });
        }
    }

    // === InvalidStaticPodManifest ===

    /// `config/file.go` `extractFromFile`: a file that does not decode into one valid Pod is
    /// skipped ("Can't process manifest file"), so its static pod never starts.
    fn invalid_manifests(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
        let Some(crate::model::ManifestView { dir, files, .. }) = &self.view.manifests else {
            skipped.push(skip(
                FindingKind::InvalidStaticPodManifest,
                "the static pod manifest view is unavailable",
            ));
            return;
        };
        for m in files {
            let Err(error) = &m.pod else { continue };
            out.push(Finding {
                kind: FindingKind::InvalidStaticPodManifest,
                severity: Severity::Warning,
                summary: format!("static pod manifest {} cannot be read by the kubelet: {error}", m.path),
                pod: None,
                sandbox_id: None,
                container_id: None,
                path: Some(m.path.clone()),
                evidence: vec![Evidence::new(EvidenceSource::Manifest, format!("{}: {error}", m.path))],
                kubelet_rule: "config/file.go extractFromFile: a file in the static pod directory that \
                               does not decode to one valid Pod is skipped (\"Can't process manifest \
                               file\"), so the pod it defines never starts"
                    .to_string(),
                remediation: format!(
                    "fix {path}, or move it out of {dir} (editor backups belong elsewhere: every \
                     non-hidden file there is read); check with kubectl create --dry-run=client -f {path}",
                    path = sh(&m.path),
                    dir = sh(dir)
                ),
                gc_eligible: false,
            });
        }
    }

    // === FailedPodNotCleaned ===

    /// The kubelet never deletes the API object of a Failed pod (its status manager finalizes
    /// only pods with a deletionTimestamp); kube-controller-manager's PodGC removes terminated
    /// pods only above `--terminated-pod-gc-threshold` (12500 by default).
    fn failed_pods(&self, out: &mut Vec<Finding>, skipped: &mut Vec<SkippedRule>) {
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
                    .to_string(),
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

    /// The reason the first missing or unusable view of `views` is missing.
    fn missing(&self, views: &[View]) -> Option<String> {
        views.iter().find_map(|v| match v {
            View::Cri => self
                .view
                .cri
                .is_none()
                .then(|| "the CRI view is unavailable".to_string()),
            View::Api => self.api_unusable.clone(),
            View::Manifests => self.manifests_unusable.clone(),
            View::PodDirs => self
                .view
                .pod_dirs
                .is_none()
                .then(|| "the kubelet pod directory view is unavailable".to_string()),
        })
    }
}

/// The views a rule may need.
enum View {
    Cri,
    Api,
    Manifests,
    PodDirs,
}

fn skip(kind: FindingKind, reason: &str) -> SkippedRule {
    SkippedRule {
        kind,
        partial: false,
        reason: reason.to_string(),
    }
}

fn pod_of_container(c: &Container) -> Option<PodRef> {
    use crate::model::{LABEL_POD_NAME, LABEL_POD_NAMESPACE};
    let uid = c.pod_uid()?;
    Some(PodRef {
        namespace: c
            .labels
            .get(LABEL_POD_NAMESPACE)
            .cloned()
            .unwrap_or_default(),
        name: c.labels.get(LABEL_POD_NAME).cloned().unwrap_or_default(),
        uid: uid.to_string(),
    })
}

/// A static pod's UID is a 32-hex-digit config hash; API UIDs are dashed UUIDs.
fn looks_like_config_hash(uid: &str) -> bool {
    uid.len() == 32 && uid.bytes().all(|b| b.is_ascii_hexdigit())
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// The `SandboxStopFailing` finding for a `StopPodSandbox` of `sandbox` that failed with `error`
/// (as `podcoroner gc` saw it, or as the kubelet logged it), with its classified cause.
///
/// Mirrors `kuberuntime_gc.go` `removeSandbox`: on a stop error the kubelet logs "Failed to stop
/// sandbox before removing" and returns without `RemovePodSandbox`, every GC period, forever.
///
/// Critical when the CNI plugin binary is missing, as for the log rule (`log_rules`): no sandbox
/// teardown on the node can succeed until it is back.
pub fn sandbox_stop_failing(sandbox: &Sandbox, error: &str, seen_by: &str) -> Finding {
    use crate::logs::catalogue::{Cause, CniFailure};
    let cause = crate::logs::catalogue::classify_cause(error);
    let (class, fix) = cause_class(cause);
    let severity = if cause == Cause::CniTeardown(CniFailure::PluginMissing) {
        Severity::Critical
    } else {
        Severity::Warning
    };
    Finding {
        kind: FindingKind::SandboxStopFailing,
        severity,
        summary: format!(
            "StopPodSandbox of {} ({}/{}) fails: {class}",
            short(&sandbox.id),
            sandbox.pod.namespace,
            sandbox.pod.name
        ),
        pod: Some(sandbox.pod.clone()),
        sandbox_id: Some(sandbox.id.clone()),
        container_id: None,
        path: None,
        evidence: vec![Evidence::new(
            EvidenceSource::Cri,
            format!("{seen_by}: {error}"),
        )],
        kubelet_rule:
            "kuberuntime_gc.go removeSandbox: StopPodSandbox runs the CNI teardown; on error the \
                       kubelet logs \"Failed to stop sandbox before removing\" and never calls \
                       RemovePodSandbox, so the sandbox leaks until the cause is fixed"
                .to_string(),
        remediation: format!(
            "{fix}; then crictl stopp {id} && crictl rmp {id}",
            id = sh(&sandbox.id)
        ),
        gc_eligible: false,
    }
}

/// The class of a `StopPodSandbox` error (`CNI teardown: …`, `runtime busy`, `timeout`,
/// `other`) and what to do about it, from `logs::catalogue::classify_cause`.
pub fn stop_failure_class(error: &str) -> (&'static str, &'static str) {
    cause_class(crate::logs::catalogue::classify_cause(error))
}

/// [`stop_failure_class`] for a cause already classified (e.g. from a log event, whose cut text
/// may no longer say it).
pub fn cause_class(cause: crate::logs::Cause) -> (&'static str, &'static str) {
    use crate::logs::catalogue::{Cause, CniFailure};
    match cause {
        Cause::CniTeardown(CniFailure::PluginNotInitialized) => (
            "CNI teardown: cni plugin not initialized",
            "check the CNI config in /etc/cni/net.d and the CNI daemonset on this node",
        ),
        Cause::CniTeardown(CniFailure::UnauthorizedDatastore) => (
            "CNI teardown: the CNI datastore refused (Unauthorized)",
            "renew the CNI plugin's credentials (e.g. Calico's kubeconfig token) and restart its node agent",
        ),
        Cause::CniTeardown(CniFailure::EmptyCachedResult) => (
            "CNI teardown: empty cached CNI result",
            "remove the empty /var/lib/cni/results/<network>-<sandbox id>-<ifname> file, then stop again",
        ),
        Cause::CniTeardown(CniFailure::MissingNetns) => (
            "CNI teardown: the network namespace is gone",
            "the plugin's DEL must tolerate a missing netns; upgrade the CNI plugin",
        ),
        Cause::CniTeardown(CniFailure::PluginMissing) => (
            "CNI teardown: the CNI plugin binary is missing",
            "reinstall the CNI plugin binaries (/opt/cni/bin)",
        ),
        Cause::CniTeardown(CniFailure::DestroyNetwork) => (
            "CNI teardown: failed to destroy network",
            "read the CNI plugin's own log for the DEL of this sandbox",
        ),
        Cause::RuntimeBusy => (
            "runtime busy",
            "find what holds the sandbox (mounts, shim) and retry",
        ),
        Cause::Timeout => (
            "timeout",
            "check the runtime's health (crictl info) and the CNI plugin's latency",
        ),
        _ => (
            "other",
            "read the runtime's log for this sandbox (journalctl -u containerd)",
        ),
    }
}

/// `s` quoted for a POSIX shell when it needs it, so a remediation can be pasted safely whatever
/// a file name, pod name or runtime-provided ID holds.
pub fn sh(s: &str) -> std::borrow::Cow<'_, str> {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:=@%+,-".contains(&b));
    if plain {
        s.into()
    } else {
        format!("'{}'", s.replace('\'', "'\\''")).into()
    }
}

/// The first 13 characters of an ID, as crictl prints it.
pub fn short(id: &str) -> &str {
    id.get(..13).unwrap_or(id)
}

/// A duration for a person, to the two largest units: `3d4h`, `2h15m`, `45s`.
pub fn human(d: SignedDuration) -> String {
    let secs = d.as_secs().max(0);
    let (days, hours, mins, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    match () {
        _ if days > 0 => format!("{days}d{hours}h"),
        _ if hours > 0 => format!("{hours}h{mins}m"),
        _ if mins > 0 => format!("{mins}m{s}s"),
        _ => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests;
