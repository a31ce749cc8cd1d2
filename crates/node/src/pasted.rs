//! `diagnose --offline --crictl-pods FILE --crictl-inspectp FILE --kubectl-pods FILE`: the CRI
//! and API views an SRE pastes into a bug report, read into [`podcoroner_core::pasted`]'s
//! partial views, each with its status for the SOURCES block (`crictl_pods`, `crictl_inspectp`,
//! `kubectl_pods`).
//!
//! A file is JSON when its first non-blank character is `{` (`crictl pods -o json`, read by
//! `podcoroner_cri::crictl_json`; `kubectl get pods -o json`, read by `podcoroner_apiserver`);
//! otherwise it is the command's table. A pasted view is `degraded` (what it lacks is said: a
//! table has no pod UID or labels), or `not_understood` when no row of it could be read, never
//! silently empty.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use podcoroner_core::pasted::{self, Pasted, PastedPod, PastedSandbox, PastedViews};

use crate::api::{SourceState, SourceStatus};

/// The pasted files of one diagnosis, by command.
#[derive(Debug, Clone, Default)]
pub struct PastedFiles {
    /// `--crictl-pods`: `crictl pods` (the table) or `crictl pods -o json`.
    pub crictl_pods: Vec<PathBuf>,
    /// `--crictl-inspectp`: `crictl inspectp ID…` (JSON, whole or cut).
    pub crictl_inspectp: Vec<PathBuf>,
    /// `--kubectl-pods`: `kubectl get pods [-A] [-o wide]` (the table) or `-o json`.
    pub kubectl_pods: Vec<PathBuf>,
    /// The node the pasted CRI view is of, when the user named it (`--node-name`): the kubectl
    /// view's NODE column is read against it. Without it, the node of most listed pods whose
    /// sandboxes are pasted (`PastedViews::infer_node`).
    pub node_name: Option<String>,
}

impl PastedFiles {
    /// True when no file was given.
    pub fn is_empty(&self) -> bool {
        self.crictl_pods.is_empty()
            && self.crictl_inspectp.is_empty()
            && self.kubectl_pods.is_empty()
    }
}

fn is_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// The rows of one file, or why it was not understood.
type Read<T> = Result<Pasted<T>, String>;

fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    // A byte order mark would hide `{` from `is_json` and a table's first column name.
    Ok(pasted::without_bom(&text).to_string())
}

fn crictl_pods(path: &Path) -> Read<PastedSandbox> {
    let text = read_text(path)?;
    let origin = path.display().to_string();
    if !is_json(&text) {
        return pasted::crictl_pods_table(&text, &origin).map_err(|e| e.to_string());
    }
    let sandboxes = podcoroner_cri::crictl_json::parse_pods(&text, &origin).map_err(|e| {
        // The serde error says what was wrong there (`missing field `items``).
        match std::error::Error::source(&e) {
            Some(why) => format!("{e}: {why}"),
            None => e.to_string(),
        }
    })?;
    Ok(Pasted {
        rows: sandboxes
            .into_iter()
            .map(|s| PastedSandbox {
                uid: Some(s.pod.uid.clone()).filter(|u| !u.is_empty()),
                namespace: s.pod.namespace,
                name: s.pod.name,
                attempt: Some(s.attempt),
                state: Some(s.state),
                age: None,
                created_at: Some(s.created_at),
                origin: origin.clone(),
                text: String::new(),
                id: s.id,
            })
            .collect(),
        not_understood: Vec::new(),
        lacks: vec!["no containers (crictl ps -a -o json); ages from createdAt to now".to_string()],
    })
}

fn crictl_inspectp(path: &Path) -> Read<PastedSandbox> {
    let text = read_text(path)?;
    pasted::crictl_inspectp(&text, &path.display().to_string()).map_err(|e| e.to_string())
}

fn kubectl_pods(path: &Path) -> Read<PastedPod> {
    let text = read_text(path)?;
    let origin = path.display().to_string();
    if !is_json(&text) {
        return pasted::kubectl_pods_table(&text, &origin).map_err(|e| e.to_string());
    }
    let pods =
        podcoroner_apiserver::parse_pod_list(path, text.as_bytes()).map_err(|e| e.to_string())?;
    Ok(Pasted {
        rows: pods
            .view
            .pods
            .into_iter()
            .map(|p| PastedPod {
                namespace: Some(p.pod.namespace),
                name: p.pod.name,
                status: p.phase,
                uid: Some(p.pod.uid),
                node: Some(p.node_name).filter(|n| !n.is_empty()),
                origin: origin.clone(),
                // `-o json` does not say whether it was `-A`.
                all_namespaces: false,
            })
            .collect(),
        not_understood: Vec::new(),
        lacks: Vec::new(),
    })
}

/// A pasted file's reader.
type Reader<T> = fn(&Path) -> Read<T>;

/// A pasted CRI view as [`read`] takes it: its files, source key, command and reader.
type SandboxView<'f> = (
    &'f [PathBuf],
    &'static str,
    &'static str,
    Reader<PastedSandbox>,
);

/// Reads every file of `paths` with `read` into one status: `degraded` saying what the pastes
/// lack and which lines were not understood, or `not_understood` when a file gave no row.
fn read_all<T>(
    paths: &[PathBuf],
    what: &str,
    unit: &str,
    read: Reader<T>,
    rows: &mut Vec<T>,
) -> SourceStatus {
    let mut lacks: Vec<String> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let mut unread: Vec<String> = Vec::new();
    let mut n = 0;
    for p in paths {
        match read(p) {
            Ok(got) => {
                n += got.rows.len();
                rows.extend(got.rows);
                unread.extend(got.not_understood);
                for l in got.lacks {
                    if !lacks.contains(&l) {
                        lacks.push(l);
                    }
                }
            }
            Err(e) => failed.push(e),
        }
    }
    let mut detail = format!("pasted {what}");
    if !lacks.is_empty() {
        detail.push_str(&format!(": {}", lacks.join("; ")));
    }
    if let Some(first) = unread.first() {
        detail.push_str(&format!(
            "; {} line(s) not understood, the first at {first}",
            unread.len()
        ));
    }
    if !failed.is_empty() {
        detail.push_str(&format!("; not understood: {}", failed.join("; ")));
    }
    let mut s = SourceStatus::degraded(detail);
    if !failed.is_empty() {
        s.status = Some(SourceState::NotUnderstood);
    }
    s.path = Some(
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.counts.insert(unit.to_string(), n);
    s
}

/// Reads the pasted files into partial views and their statuses, keyed `crictl_pods`,
/// `crictl_inspectp`, `kubectl_pods` (only those given). Never fails: a file that cannot be
/// read or holds no row is a `not_understood` source naming the file (and line).
pub fn read(files: &PastedFiles) -> (PastedViews, BTreeMap<String, SourceStatus>) {
    let mut views = PastedViews::default();
    let mut sources = BTreeMap::new();
    // The two pasted CRI views: (files, source key, command, reader).
    let sandbox_views: [SandboxView<'_>; 2] = [
        (
            &files.crictl_pods,
            "crictl_pods",
            "crictl pods",
            crictl_pods,
        ),
        (
            &files.crictl_inspectp,
            "crictl_inspectp",
            "crictl inspectp",
            crictl_inspectp,
        ),
    ];
    for (paths, key, what, parse) in sandbox_views {
        if paths.is_empty() {
            continue;
        }
        let mut rows = Vec::new();
        let s = read_all(paths, what, "sandboxes", parse, &mut rows);
        // Merged with the rows of the views before as they are added: `judge` and
        // `too_young` read each sandbox once.
        views.add_sandboxes(rows);
        sources.insert(key.to_string(), s);
    }
    if !files.kubectl_pods.is_empty() {
        let mut pods = Vec::new();
        let s = read_all(
            &files.kubectl_pods,
            "kubectl get pods",
            "pods",
            kubectl_pods,
            &mut pods,
        );
        // A listing not understood is no API view: the pods' existence stays unknown.
        if s.status != Some(SourceState::NotUnderstood) {
            let names = files
                .kubectl_pods
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            views.pods = Some((pods, format!("kubectl get pods {names}")));
        }
        let mut s = s;
        views.node = files.node_name.clone().or_else(|| views.infer_node());
        let has_node = views
            .pods
            .as_ref()
            .is_some_and(|(pods, _)| pods.iter().any(|p| p.node.is_some()));
        if has_node {
            let what = match (&views.node, &files.node_name) {
                (Some(n), Some(_)) => format!("NODE read against {n} (--node-name)"),
                (Some(n), None) => format!(
                    "NODE read against {n}, the node of most listed pods whose sandboxes are pasted (--node-name sets it)"
                ),
                (None, _) => "NODE not read: the node of the pasted sandboxes is unknown (--node-name names it)".to_string(),
            };
            let d = s.detail.get_or_insert_with(String::new);
            d.push_str(&format!("; {what}"));
        }
        sources.insert("kubectl_pods".to_string(), s);
    }
    (views, sources)
}

#[cfg(test)]
mod tests {
    /// A pasted `crictl pods -o json` of the wrong shape says what is wrong where, not only
    /// where (`failed at `.`` was all it said: fresh user 39).
    #[test]
    fn a_crictl_json_of_the_wrong_shape_says_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pods.json");
        std::fs::write(&path, "{\"foo\": 1}\n").unwrap();
        let err = super::crictl_pods(&path).err().unwrap_or_default();
        assert!(
            err.ends_with("failed at `.`: missing field `items` at line 1 column 10"),
            "{err}"
        );
    }
}
