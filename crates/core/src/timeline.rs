//! One pod's life, merged from every view: what `podcoroner explain` prints.
//!
//! A pod is named by its UID, `namespace/name`, or a sandbox or container ID (full, or a prefix
//! of at least 6 characters as crictl accepts). Its identity grows as the views link IDs: a
//! sandbox names its pod UID, a container its sandbox, a log line may name a container and a
//! pod UID together. Then every log event naming any of those IDs, and the current CRI and API
//! state, become one list ordered by time.

use std::collections::BTreeSet;

use jiff::Timestamp;

use crate::event::{LogKind, LoggedEvent};
use crate::finding::EvidenceSource;
use crate::model::{NodeView, PodRef};

/// One line of a pod's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// When it happened; `None` for a log line without a timestamp (kept in reading order at
    /// the end).
    pub time: Option<Timestamp>,
    /// Where it was seen.
    pub source: EvidenceSource,
    /// What happened, e.g. `SyncLoop(Delete)`, `sandbox created`, `StopSandboxBeforeRemoveFailed`.
    pub what: String,
    /// The detail: the log record's text or the object's state.
    pub detail: String,
    /// `file:line` of a log record.
    pub origin: Option<String>,
}

/// The pod's identity as resolved, and its timeline.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    /// Pods (namespace, name, UID) the query resolved to; usually one.
    pub pods: Vec<PodRef>,
    /// Every pod UID, sandbox ID and container ID linked to the query.
    pub ids: BTreeSet<String>,
    /// The entries, ordered by time.
    pub entries: Vec<Entry>,
    /// Where each resolved pod's start went ([`crate::startup::breakdown`] over the records
    /// the timeline holds), for the pods whose start the views hold.
    pub startup: Vec<crate::startup::Breakdown>,
}

/// The identity of the pod a query names, grown as the views and the logs link IDs: its pod
/// UIDs, sandbox and container IDs (`ids`) and its `namespace/name`s. Grown in rounds, each over
/// the CRI and API views ([`Identity::grow_from_view`]) and then every log event in reading
/// order ([`Identity::grow_from`]), until a round adds nothing (at most [`Identity::ROUNDS`]): a
/// caller that cannot keep every event (a node's whole log) reads the log once per round and
/// keeps only the events of the last, which names the pod's every event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    ids: BTreeSet<String>,
    names: BTreeSet<(String, String)>,
}

impl Identity {
    /// The most rounds [`explain`] grows an identity in.
    pub const ROUNDS: usize = 4;

    /// The identity `query` names alone: a UID or ID (or an ID prefix of 6 characters or
    /// more), or `namespace/name`.
    pub fn new(query: &str) -> Identity {
        let q = query.trim();
        let mut id = Identity::default();
        if let Some((ns, name)) = q.split_once('/') {
            id.names.insert((ns.to_string(), name.to_string()));
        } else {
            id.ids.insert(q.to_string());
        }
        id
    }

    /// How many IDs and names it holds: a round that leaves it unchanged ends the growth.
    pub fn size(&self) -> (usize, usize) {
        (self.ids.len(), self.names.len())
    }

    fn matches_id(&self, id: &str) -> bool {
        !id.is_empty() && self.ids.iter().any(|k| id_matches(id, k))
    }

    /// One round over the CRI and API views: a sandbox of the pod (by ID, UID or name) gives its
    /// UID and name, a container its sandbox and UID, an API pod its UID, name and config hash.
    pub fn grow_from_view(&mut self, view: &NodeView) {
        if let Some(cri) = &view.cri {
            for s in &cri.sandboxes {
                let named = self
                    .names
                    .contains(&(s.pod.namespace.clone(), s.pod.name.clone()));
                if named || self.matches_id(&s.id) || self.matches_id(&s.pod.uid) {
                    self.ids.insert(s.id.clone());
                    self.ids.insert(s.pod.uid.clone());
                    self.names
                        .insert((s.pod.namespace.clone(), s.pod.name.clone()));
                }
            }
            for c in &cri.containers {
                if self.matches_id(&c.id)
                    || self.matches_id(&c.sandbox_id)
                    || c.pod_uid().is_some_and(|u| self.ids.contains(u))
                {
                    self.ids.insert(c.id.clone());
                    self.ids.insert(c.sandbox_id.clone());
                    if let Some(u) = c.pod_uid() {
                        self.ids.insert(u.to_string());
                    }
                }
            }
        }
        if let Some(api) = &view.api {
            for p in &api.pods {
                if self
                    .names
                    .contains(&(p.pod.namespace.clone(), p.pod.name.clone()))
                    || self.matches_id(&p.pod.uid)
                {
                    self.ids.insert(p.pod.uid.clone());
                    self.names
                        .insert((p.pod.namespace.clone(), p.pod.name.clone()));
                    if let Some(h) = p.mirror_hash() {
                        self.ids.insert(h.to_string());
                    }
                }
            }
        }
    }

    /// Whether `e` names the pod; if so, the IDs it names are the pod's too, and so is the name
    /// it gives beside one of them.
    pub fn grow_from(&mut self, e: &LoggedEvent) -> bool {
        if !self.names_event(e) {
            return false;
        }
        let i = &e.event.ids;
        for id in [&i.pod_uid, &i.sandbox_id, &i.container_id]
            .into_iter()
            .flatten()
        {
            self.ids.insert(id.to_string());
        }
        // A line that names the pod beside one of its IDs gives its name, for the lines that
        // name it alone (SyncLoop ADD/DELETE/REMOVE), as the CRI view does online.
        if let [p] = i.pods.as_slice()
            && let Some(ns) = &p.namespace
            && (i.pod_uid.is_some() || i.sandbox_id.is_some() || i.container_id.is_some())
        {
            self.names.insert((ns.to_string(), p.name.to_string()));
        }
        true
    }

    /// Whether `e` names one of its IDs (whole, by an ID prefix the user gave, or by a prefix
    /// the log itself cut) or names.
    pub fn names_event(&self, e: &LoggedEvent) -> bool {
        event_matches(e, &self.ids, &self.names)
    }

    /// Grown to its end over `view` and `events`, as [`explain`] grows it.
    pub fn resolve(query: &str, view: &NodeView, events: &[LoggedEvent]) -> Identity {
        let mut id = Identity::new(query);
        for _ in 0..Self::ROUNDS {
            let before = id.size();
            id.grow_from_view(view);
            for e in events {
                id.grow_from(e);
            }
            if id.size() == before {
                break;
            }
        }
        id
    }
}

/// Builds the timeline of `query` from `view` (any part may be missing) and `events`.
/// Returns an empty timeline when nothing matches.
pub fn explain(query: &str, view: &NodeView, events: &[LoggedEvent]) -> Timeline {
    let Identity { mut ids, names } = Identity::resolve(query, view, events);
    ids.retain(|i| !i.is_empty());

    let mut entries = Vec::new();
    let mut pods = BTreeSet::new();
    if let Some(cri) = &view.cri {
        for s in cri.sandboxes.iter().filter(|s| ids.contains(&s.id)) {
            pods.insert(s.pod.clone());
            entries.push(Entry {
                time: Some(s.created_at),
                source: EvidenceSource::Cri,
                what: "sandbox created".to_string(),
                detail: format!(
                    "pod sandbox {} attempt {}, now {}",
                    s.id,
                    s.attempt,
                    s.state.cri_name()
                ),
                origin: None,
            });
        }
        for c in cri.containers.iter().filter(|c| ids.contains(&c.id)) {
            entries.push(Entry {
                time: Some(c.created_at),
                source: EvidenceSource::Cri,
                what: "container created".to_string(),
                detail: format!(
                    "container {} ({}, attempt {}) in sandbox {}, now {}",
                    c.id,
                    c.name,
                    c.attempt,
                    c.sandbox_id,
                    c.state.cri_name()
                ),
                origin: None,
            });
        }
    }
    if let Some(api) = &view.api {
        for p in api.pods.iter().filter(|p| ids.contains(&p.pod.uid)) {
            pods.insert(PodRef {
                namespace: p.pod.namespace.clone(),
                name: p.pod.name.clone(),
                uid: p.mirror_hash().unwrap_or(&p.pod.uid).to_string(),
            });
            if let Some(t) = p.created_at {
                entries.push(Entry {
                    time: Some(t),
                    source: EvidenceSource::Apiserver,
                    what: "pod created".to_string(),
                    detail: format!(
                        "{}/{} uid {} on node {}",
                        p.pod.namespace, p.pod.name, p.pod.uid, p.node_name
                    ),
                    origin: None,
                });
            }
            if let Some(t) = p.deletion_timestamp {
                entries.push(Entry {
                    time: Some(t),
                    source: EvidenceSource::Apiserver,
                    what: "pod deletion requested".to_string(),
                    detail: format!(
                        "deletionTimestamp set, grace period {}s",
                        p.deletion_grace_period_seconds
                            .map_or("?".to_string(), |g| g.to_string())
                    ),
                    origin: None,
                });
            }
            if let Some(t) = p.status_changed_at {
                entries.push(Entry {
                    time: Some(t),
                    source: EvidenceSource::Apiserver,
                    what: "status".to_string(),
                    detail: format!(
                        "phase {}{}",
                        p.phase,
                        p.reason
                            .as_ref()
                            .map_or(String::new(), |r| format!(" ({r})"))
                    ),
                    origin: None,
                });
            }
        }
    }
    let matched: Vec<&LoggedEvent> = events
        .iter()
        .filter(|e| event_matches(e, &ids, &names))
        .collect();
    for e in matched.iter().copied() {
        entries.push(Entry {
            time: e.time,
            source: match e.log {
                LogKind::Kubelet => EvidenceSource::KubeletLog,
                LogKind::Runtime => EvidenceSource::RuntimeLog,
            },
            what: format!("{:?}", e.event.kind),
            detail: e.text.to_string(),
            origin: Some(format!("{}:{}", e.origin, e.line)),
        });
    }
    // Stable: entries of equal time keep their reading order; untimed ones go last.
    entries.sort_by_key(|e| (e.time.is_none(), e.time));
    if pods.is_empty() {
        // No view names the pod: the records that name it beside its UID do (one per UID: a
        // StatefulSet's pod recreated under its name is a pod of another UID).
        for (ns, name) in &names {
            let uids: BTreeSet<&str> = matched
                .iter()
                .filter_map(|e| {
                    let i = &e.event.ids;
                    match i.pods.as_slice() {
                        [p] if p.namespace.as_deref() == Some(ns.as_str()) && p.name == *name => {
                            i.pod_uid.as_deref()
                        }
                        _ => None,
                    }
                })
                .collect();
            if uids.is_empty() {
                pods.insert(PodRef {
                    namespace: ns.clone(),
                    name: name.clone(),
                    uid: String::new(),
                });
            }
            for uid in uids {
                pods.insert(PodRef {
                    namespace: ns.clone(),
                    name: name.clone(),
                    uid: uid.to_string(),
                });
            }
        }
    }
    let startup = pods
        .iter()
        .filter_map(|p| {
            let api = view
                .api
                .as_ref()
                .and_then(|a| a.pods.iter().find(|a| a.pod.uid == p.uid));
            crate::startup::breakdown(p, &matched, api, view.cri.as_ref())
        })
        .collect();
    Timeline {
        pods: pods.into_iter().collect(),
        ids,
        entries,
        startup,
    }
}

/// Whether `id` is `key`, or starts with it when `key` has at least 6 characters (a sandbox or
/// container ID cut as `crictl` prints it, `3f2a1b0c9d8e`).
fn id_matches(id: &str, key: &str) -> bool {
    id == key || (key.len() >= 6 && id.starts_with(key))
}

/// Whether a log event names one of `ids` (whole, by an ID prefix the user gave, or by a prefix
/// the log itself cut) or one of `names`.
fn event_matches(
    e: &LoggedEvent,
    ids: &BTreeSet<String>,
    names: &BTreeSet<(String, String)>,
) -> bool {
    let i = &e.event.ids;
    let whole = [
        i.pod_uid.as_deref(),
        i.sandbox_id.as_deref(),
        i.container_id.as_deref(),
        i.object_id(),
    ]
    .into_iter()
    .flatten()
    .any(|id| ids.iter().any(|k| id_matches(id, k)));
    let partial = i
        .partial()
        .iter()
        .any(|p| p.prefix.len() >= 6 && ids.iter().any(|k| k.starts_with(p.prefix.as_ref())));
    let named = i.pods.iter().any(|p| {
        p.uid.as_ref().is_some_and(|u| ids.contains(u.as_ref()))
            || names.iter().any(|(ns, n)| {
                n == p.name.as_ref() && p.namespace.as_ref().is_none_or(|pns| pns == ns)
            })
    });
    whole || partial || named
}

#[cfg(test)]
mod tests;
