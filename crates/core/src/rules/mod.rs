//! The diagnosis rules: each joins the views of a [`NodeView`] the way the kubelet does and
//! reports where they disagree.
//!
//! Every rule names the kubelet behaviour it mirrors in [`Finding::kubelet_rule`]. A rule whose
//! input view is unavailable is not guessed: it is listed in [`Diagnosis::skipped`].
//!
//! One file per finding family (state and log rules alike); [`logs`] holds the index of log
//! events the log rules share and [`logs::diagnose_with_logs`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
use crate::logs::{Cause, CniFailure, ConfigSource, EventKind, SyncOp};
use crate::model::{ApiPod, Container, ContainerState, NodeView, PodRef, Sandbox, SandboxState};

pub use pod_startup::startup_breakdowns;
mod container_race;
mod container_start;
mod container_stop;
mod crash_loop;
mod duplicate_ready_sandboxes;
mod failed_pods;
pub mod fold;
mod image_pull;
mod kubelet_start;
pub(crate) mod leaked_sandbox;
pub mod logs;
mod manifests;
mod mirror_pod_create_failed;
mod mirror_pods;
mod node_pressure;
mod node_status;
mod orphaned_container;
mod pod_dirs;
pub(crate) mod pod_startup;
mod pod_status;
mod pod_workers;
pub mod registry;
mod runtime;
mod runtime_network;
mod sandbox_create;
mod sandbox_wait;
mod static_pods;
mod tally;
mod teardown;
mod volume_mount;
mod volume_teardown;

pub use teardown::{cause_class, sandbox_stop_failing, stop_failure_class};

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
    /// A pod that takes longer than this from bound to `Ready` is a `SlowPodStartup`. The CLI
    /// default is 3 minutes.
    pub slow_start: Duration,
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
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    /// The findings.
    pub findings: Vec<Finding>,
    /// The rules that were skipped or ran only in part.
    pub skipped: Vec<SkippedRule>,
    /// The startup breakdown of every pod whose start the views hold, as the `SlowPodStartup`
    /// rule made them ([`startup_breakdowns`]; empty from the state rules alone, [`diagnose`]):
    /// `diagnose`'s STARTUP PROFILE and the agent's startup metrics read these, so a diagnosis
    /// breaks each start down once.
    pub startup: Vec<crate::startup::Breakdown>,
}

/// Runs every state rule of [`registry::RULES`] over `view` as of `now`, in its order.
///
/// Pure and total: it never fails and never panics on any input; a view that is `None` makes
/// the rules that need it skip.
pub fn diagnose(view: &NodeView, config: &Config, now: Timestamp) -> Diagnosis {
    let ctx = Ctx::new(view, config, now);
    let mut findings = Vec::new();
    let mut skipped = Vec::new();

    for rule in registry::RULES {
        if let registry::Run::State(run) = rule.run {
            run(&ctx, &mut findings, &mut skipped);
        }
    }

    findings.sort_by(report_order);
    Diagnosis {
        findings,
        skipped,
        startup: Vec::new(),
    }
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
pub(crate) struct Ctx<'a> {
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
    /// The pods the static pod URL serves, when `--manifest-url` was given and its body read.
    url_pods: Option<&'a [crate::model::ManifestPod]>,
    /// Why the static pod URL's body is unknown, when `--manifest-url` was given and it could not
    /// be read (the kubelet then keeps the HTTP static pods it last read).
    url_unusable: Option<String>,
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
            .any(|s| s.is_static() && s.pod.name.ends_with(&node_suffix));
        let (url_pods, url_unusable) = match &view.manifest_url {
            None => (None, None),
            Some(u) => match &u.pods {
                Ok(pods) => (Some(pods.as_slice()), None),
                Err(e) => (
                    None,
                    Some(format!(
                        "the static pod URL {} could not be read ({e}): the kubelet keeps running \
                         the HTTP static pods it last read, so one removed from the URL cannot be \
                         told from one still served",
                        u.url
                    )),
                ),
            },
        };

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
            url_pods,
            url_unusable,
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

    /// Whether `m` declares the static pod `namespace/name` (a full pod name, with the node
    /// suffix) or the UID `uid`. Until a static pod confirms the node name, a pod whose name is a
    /// prefix of the pod name followed by `-` also counts, so a wrong `--node-name` can never make
    /// a live static pod look removed.
    fn declares(
        &self,
        m: &crate::model::ManifestPod,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> bool {
        m.uid.as_deref() == Some(uid)
            || (m.namespace == namespace
                && (m.full_name(&self.view.node_name) == name
                    || (!self.node_name_confirmed
                        && name
                            .strip_prefix(m.name.as_str())
                            .is_some_and(|rest| rest.starts_with('-')))))
    }

    /// The manifest that declares the static pod `namespace/name` or the UID `uid`
    /// ([`Ctx::declares`]).
    fn manifest_for(&self, namespace: &str, name: &str, uid: &str) -> Option<&'a str> {
        self.manifest_pods()
            .find(|(_, m)| self.declares(m, namespace, name, uid))
            .map(|(path, _)| path)
    }

    /// Whether the static pod URL's body declares the static pod `namespace/name` or the UID
    /// `uid`; `None` when the body is unknown or no URL was given.
    fn url_declares(&self, namespace: &str, name: &str, uid: &str) -> Option<bool> {
        self.url_pods
            .map(|pods| pods.iter().any(|m| self.declares(m, namespace, name, uid)))
    }

    /// The static pod URL, `""` without one.
    fn manifest_url(&self) -> &str {
        self.view
            .manifest_url
            .as_ref()
            .map_or("", |u| u.url.as_str())
    }

    /// Why the source of the static pod `s` cannot be known (its manifest directory, or for an
    /// HTTP static pod its URL when one was given), or `None` when it can or `s` is no static pod.
    fn static_source_unusable(&self, s: &Sandbox) -> Option<&String> {
        match s.config_source() {
            Some("file") => self.manifests_unusable.as_ref(),
            Some("http") if self.view.manifest_url.is_some() => self.url_unusable.as_ref(),
            Some("http") => self.manifests_unusable.as_ref(),
            _ => None,
        }
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
        // A static pod's own source, when it can be read, is the truth: a mirror pod left behind
        // does not keep a removed static pod alive (the kubelet deletes such mirror pods).
        let source_known = match s.config_source() {
            Some("file") => self.manifests_unusable.is_none(),
            Some("http") => self.url_pods.is_some(),
            _ => false,
        };
        if !source_known && let Some(m) = self.node_mirror_by_hash(uid) {
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
        if self.url_declares(&s.pod.namespace, &s.pod.name, uid) == Some(true) {
            return Some(format!(
                "the static pod URL {} declares pod {}/{}",
                self.manifest_url(),
                s.pod.namespace,
                s.pod.name
            ));
        }
        None
    }

    // === LeakedSandbox ===

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
pub(super) fn looks_like_config_hash(uid: &str) -> bool {
    uid.len() == 32 && uid.bytes().all(|b| b.is_ascii_hexdigit())
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
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
