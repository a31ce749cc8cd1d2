//! Pasted views: the CRI and API views as an SRE pastes them into a bug report, read into
//! partial views and judged by the sandbox GC's keep-rules (`kuberuntime_gc.go`
//! `evictSandboxes`).
//!
//! | Paste | Reader | What it lacks |
//! |---|---|---|
//! | `crictl pods` (the human table) | [`crictl_pods_table`] | pod UID, labels, annotations, containers; IDs cut to 13 hex; CREATED relative (`11 minutes ago`) |
//! | `crictl inspectp ID` (JSON, may be cut) | [`crictl_inspectp`] | containers; any field after the cut |
//! | `kubectl get pods [-A] [-o wide]` (the table) | [`kubectl_pods_table`] | pod UID, labels, annotations, times |
//!
//! The tables are crictl's and kubectl's own (crictl `cmd/crictl/sandbox.go` `outputPodSandboxes`,
//! a tabwriter with CREATED from go-units `HumanDuration(now - createdAt) + " ago"`; kubectl's
//! printer, columns padded to 3 spaces): no library reads them, so this module does, leniently
//! (a missing header, a cut last row, shell prompts and `#` notes around them). A paste is as of
//! the moment it was taken, so ages are the CREATED column's, never compared with the clock.
//!
//! [`judge`] never makes a finding `gc_eligible`: a paste is not the node, and podcoroner
//! offline never deletes.

use std::collections::{HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};

use crate::finding::{Evidence, EvidenceSource, Finding, FindingKind, Severity};
use crate::model::{PodRef, SandboxState};
use crate::rules::{human, sh};

/// A bad paste: the file and line (1-based; 0 for the whole file) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasteError {
    /// `file:line` or the file alone.
    pub at: String,
    /// What is wrong, e.g. `no crictl pods row (a line starting with a pod sandbox ID)`.
    pub reason: String,
}

impl std::fmt::Display for PasteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.reason)
    }
}

impl std::error::Error for PasteError {}

/// One pod sandbox as a paste shows it; a field the paste does not hold is `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastedSandbox {
    /// The sandbox ID as printed: 13 hex digits in crictl's table, 64 in `inspectp`.
    pub id: String,
    /// `PodSandboxMetadata.namespace`.
    pub namespace: String,
    /// `PodSandboxMetadata.name`.
    pub name: String,
    /// `PodSandboxMetadata.uid` (`inspectp` only; a table has none).
    pub uid: Option<String>,
    /// `PodSandboxMetadata.attempt`.
    pub attempt: Option<u32>,
    /// `PodSandboxStatus.state`.
    pub state: Option<SandboxState>,
    /// The sandbox's age when the paste was taken (a lower bound: crictl's CREATED rounds down).
    pub age: Option<SignedDuration>,
    /// `createdAt` (`inspectp` only).
    pub created_at: Option<Timestamp>,
    /// `file:line` of the row (or of the `"id"` key).
    pub origin: String,
    /// The row as pasted, for evidence.
    pub text: String,
}

/// One pod as `kubectl get pods` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastedPod {
    /// NAMESPACE; `None` when the table has no such column (no `-A`).
    pub namespace: Option<String>,
    /// NAME.
    pub name: String,
    /// STATUS (`Running`, `Completed`, `Terminating`, …; `status.phase` from `-o json`).
    pub status: String,
    /// `metadata.uid` (`-o json` only; a table has none).
    pub uid: Option<String>,
    /// NODE (`-o wide`; `spec.nodeName` from `-o json`); `None` when the paste does not say
    /// (a table without `-o wide`, a pod not yet scheduled: `<none>`).
    pub node: Option<String>,
    /// `file:line` of the row.
    pub origin: String,
    /// Whether the row's listing is of every namespace: a table with the NAMESPACE column,
    /// which `kubectl get pods` prints only with `-A`. False for `-o json`, which does not say,
    /// and for a table without the column (one namespace).
    pub all_namespaces: bool,
}

/// A file's rows and the lines of it that were neither rows, headers, prompts nor blank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pasted<T> {
    /// The rows, in file order.
    pub rows: Vec<T>,
    /// `file:line` of each line not understood.
    pub not_understood: Vec<String>,
    /// What the paste cannot hold (`no pod UID or labels`, `cut after byte 232`), for the
    /// SOURCES block.
    pub lacks: Vec<String>,
}

/// `text` without the UTF-8 byte order mark an editor or a Windows tool may put before a paste
/// (it would hide a table's first column name, `NAMESPACE`, or the first row's ID).
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

fn is_hex_id(s: &str) -> bool {
    (12..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A line of shell around a paste: a prompt (`$ crictl pods`, `user@node:~> …`, `# note`).
fn is_prompt(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('$')
        || t.starts_with('#')
        || t.split_whitespace().next().is_some_and(|w| {
            w.contains('@') && (w.ends_with('>') || w.ends_with('$') || w.ends_with('#'))
        })
}

/// go-units `HumanDuration` as crictl prints CREATED, without ` ago`: `Less than a second`,
/// `About a minute`, `11 minutes`, `About an hour`, `2 days`, `3 weeks`, `4 months`, `2 years`.
/// The lower bound of the age it stands for; `None` when it is none of these.
pub fn human_duration(words: &str) -> Option<SignedDuration> {
    let lower = words.trim().to_ascii_lowercase();
    let secs: i64 = match lower.as_str() {
        "less than a second" => 0,
        "about a minute" => 60,
        "about an hour" => 3600,
        _ => {
            let mut it = lower.split_whitespace();
            let n: i64 = it.next()?.parse().ok()?;
            let unit = match it.next()?.trim_end_matches('s') {
                "second" => 1,
                "minute" => 60,
                "hour" => 3600,
                "day" => 86_400,
                "week" => 7 * 86_400,
                "month" => 30 * 86_400,
                "year" => 365 * 86_400,
                _ => return None,
            };
            if it.next().is_some() {
                return None;
            }
            n.checked_mul(unit)?
        }
    };
    Some(SignedDuration::from_secs(secs))
}

/// Reads the table `crictl pods` prints (`POD ID  CREATED  STATE  NAME  NAMESPACE  ATTEMPT
/// RUNTIME`), with or without its header, the last row possibly cut (missing columns are
/// `None`), shell prompts and blank lines around it. Columns are read by words, not widths: a
/// row is an ID of 12-64 hex digits, CREATED up to `ago`, STATE, NAME, NAMESPACE, ATTEMPT.
///
/// # Errors
///
/// [`PasteError`] naming `origin` when no line is a row.
pub fn crictl_pods_table(text: &str, origin: &str) -> Result<Pasted<PastedSandbox>, PasteError> {
    let text = without_bom(text);
    let mut out = Pasted {
        rows: Vec::new(),
        not_understood: Vec::new(),
        lacks: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        let at = format!("{origin}:{}", i + 1);
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first() {
            None => continue,
            Some(_) if is_prompt(line) => continue,
            Some(&"POD") if words.get(1) == Some(&"ID") => continue,
            Some(w) if is_hex_id(w) => {}
            Some(_) => {
                out.not_understood.push(at);
                continue;
            }
        }
        let id = words[0].to_string();
        let mut rest = words[1..].iter();
        let mut created = Vec::new();
        for w in rest.by_ref() {
            if *w == "ago" {
                break;
            }
            created.push(*w);
        }
        let age = human_duration(&created.join(" "));
        let state = match rest.next() {
            Some(&"Ready") => Some(SandboxState::Ready),
            Some(&"NotReady") => Some(SandboxState::NotReady),
            Some(_) => {
                out.not_understood.push(at);
                continue;
            }
            None => None,
        };
        let name = rest.next().map_or_else(String::new, |s| s.to_string());
        let namespace = rest.next().map_or_else(String::new, |s| s.to_string());
        let attempt = rest.next().and_then(|a| a.parse().ok());
        if state.is_none() {
            out.lacks
                .push(format!("{at}: the row is cut before STATE (not judged)"));
        } else if name.is_empty() {
            out.lacks
                .push(format!("{at}: the row is cut before NAME (not judged)"));
        }
        out.rows.push(PastedSandbox {
            id,
            namespace,
            name,
            uid: None,
            attempt,
            state,
            age,
            created_at: None,
            origin: at,
            text: line.trim().to_string(),
        });
    }
    // `crictl pods --no-trunc` prints whole IDs.
    let cut = if out.rows.iter().any(|r| r.id.len() < 64) {
        "; IDs cut to 13 hex digits"
    } else {
        ""
    };
    out.lacks.insert(
        0,
        format!("a table: no pod UID, labels or containers{cut}; ages as of the paste"),
    );
    if out.rows.is_empty() {
        return Err(PasteError {
            at: origin.to_string(),
            reason:
                "no crictl pods row (a line starting with a pod sandbox ID of 12-64 hex digits)"
                    .to_string(),
        });
    }
    Ok(out)
}

/// Reads the table `kubectl get pods [-A] [-o wide]` prints. The header is required (it says
/// which columns there are); columns are split on runs of 2 or more spaces, since a cell may
/// hold single spaces (RESTARTS `1 (3h29m ago)`, `NOMINATED NODE`) and widths may not line up
/// (an anonymised paste). `No resources found …` is an empty listing.
///
/// # Errors
///
/// [`PasteError`] naming `origin` when there is no `NAME … STATUS` header, or naming
/// `origin:line` for a row with fewer cells than NAME and STATUS need.
pub fn kubectl_pods_table(text: &str, origin: &str) -> Result<Pasted<PastedPod>, PasteError> {
    let text = without_bom(text);
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut out = Pasted {
        rows: Vec::new(),
        not_understood: Vec::new(),
        lacks: vec!["a table: no pod UID, labels or times".to_string()],
    };
    let mut header: Option<Vec<String>> = None;
    let mut empty_listing = false;
    // `kubectl get all` prints a table per kind, each with its header; only the pods' is read.
    let mut other_table = false;
    for (i, line) in text.lines().enumerate() {
        let at = format!("{origin}:{}", i + 1);
        if line.trim().is_empty() || is_prompt(line) {
            continue;
        }
        if line.trim_start().starts_with("No resources found") {
            empty_listing = true;
            continue;
        }
        let mut c = cells(line);
        let is_header = c.iter().any(|h| h == "NAME") && !c.iter().any(|h| h.contains('/'));
        if is_header && !c.iter().any(|h| h == "STATUS") {
            // Another kind's table (`NAME  TYPE  CLUSTER-IP …`, `NAME  READY  UP-TO-DATE …`).
            other_table = true;
            continue;
        }
        if is_header {
            other_table = false;
            if header.is_some() {
                header = Some(c);
                continue;
            }
        }
        if other_table {
            continue;
        }
        // `kubectl get all` names pods `pod/<name>`; rows of other kinds are not pods.
        if let Some(name_at) = header
            .as_ref()
            .and_then(|h| h.iter().position(|x| x == "NAME"))
            && let Some(cell) = c.get_mut(name_at)
            && let Some((kind, name)) = cell.split_once('/')
        {
            if kind != "pod" && kind != "pods" {
                continue;
            }
            *cell = name.to_string();
        }
        if header.is_none() {
            if c.iter().any(|h| h == "NAME") && c.iter().any(|h| h == "STATUS") {
                header = Some(c);
            } else {
                out.not_understood.push(at);
            }
            continue;
        }
        let h = header.as_ref().expect("set above");
        let col = |name: &str| h.iter().position(|x| x == name).and_then(|p| c.get(p));
        let (Some(name), Some(status)) = (col("NAME"), col("STATUS")) else {
            return Err(PasteError {
                at,
                reason: format!(
                    "{} cells where the header has {} (columns are split on 2 or more spaces)",
                    c.len(),
                    h.len()
                ),
            });
        };
        let namespace = col("NAMESPACE").cloned();
        out.rows.push(PastedPod {
            all_namespaces: namespace.is_some(),
            node: col("NODE").filter(|n| *n != "<none>").cloned(),
            namespace,
            name: name.clone(),
            status: status.clone(),
            uid: None,
            origin: at,
        });
    }
    if header.is_none() && !empty_listing {
        return Err(PasteError {
            at: origin.to_string(),
            reason: "no kubectl get pods header (NAME … STATUS …)".to_string(),
        });
    }
    if header
        .as_ref()
        .is_some_and(|h| !h.iter().any(|c| c == "NAMESPACE"))
    {
        out.lacks
            .push("no NAMESPACE column (not -A): pods are matched by name".to_string());
    }
    Ok(out)
}

/// The first value of `"key":` in `text` from byte `from`: a string without its quotes, or a
/// bare word (number, `true`).
fn json_value<'t>(text: &'t str, key: &str, from: usize) -> Option<&'t str> {
    let needle = format!("\"{key}\"");
    let at = from + text.get(from..)?.find(&needle)? + needle.len();
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        return s.find('"').map(|end| &s[..end]);
    }
    let end = rest
        .find(|c: char| c == ',' || c == '}' || c == ']' || c.is_whitespace())
        .unwrap_or(rest.len());
    (end > 0 && end < rest.len()).then(|| &rest[..end])
}

/// Reads `crictl inspectp` output, whole or cut (a paste often stops mid-document), older
/// (the `PodSandboxStatus` at the top) or newer (under `"status"`, the runtime's details under
/// `"info"`), one or several sandboxes: each `"id"` holding 64 hex digits starts a sandbox, and
/// its `metadata` (`name`, `namespace`, `uid`, `attempt`), `state` (`SANDBOX_READY`,
/// `SANDBOX_NOTREADY`, as crictl's JSON prints `PodSandboxState`) and `createdAt` (nanoseconds,
/// a string or a number, or RFC 3339) are the first such keys after it. A field after the cut is
/// `None` and said in [`Pasted::lacks`].
///
/// # Errors
///
/// [`PasteError`] naming `origin` when no `"id"` holds a sandbox ID.
pub fn crictl_inspectp(text: &str, origin: &str) -> Result<Pasted<PastedSandbox>, PasteError> {
    let text = without_bom(text);
    let needle = "\"id\"";
    let starts: Vec<usize> = text
        .match_indices(needle)
        .map(|(i, _)| i)
        .filter(|&i| json_value(text, "id", i).is_some_and(|v| v.len() == 64 && is_hex_id(v)))
        .collect();
    let mut out = Pasted {
        rows: Vec::new(),
        not_understood: Vec::new(),
        lacks: vec!["no containers".to_string()],
    };
    // The line of each start, counted on from the previous one (linear in the text).
    let (mut line, mut counted) = (1, 0);
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(text.len());
        let part = &text[..end];
        let get = |key: &str| json_value(part, key, start);
        line += text[counted..start].matches('\n').count();
        counted = start;
        let state = match get("state") {
            Some("SANDBOX_READY" | "0") => Some(SandboxState::Ready),
            Some("SANDBOX_NOTREADY" | "1") => Some(SandboxState::NotReady),
            _ => None,
        };
        let created_at = get("createdAt").and_then(|v| {
            v.parse::<i128>()
                .ok()
                .and_then(|ns| Timestamp::from_nanosecond(ns).ok())
                .or_else(|| v.parse().ok())
        });
        let sb = PastedSandbox {
            // The ID `starts` checked, read from the whole text: a value may run past the next
            // start (two `"id"` keys inside one quoted value of a mangled paste).
            id: json_value(text, "id", start)
                .unwrap_or_default()
                .to_string(),
            namespace: get("namespace").unwrap_or_default().to_string(),
            name: get("name").unwrap_or_default().to_string(),
            uid: get("uid").map(str::to_string),
            attempt: get("attempt").and_then(|a| a.parse().ok()),
            state,
            age: None,
            created_at,
            origin: format!("{origin}:{line}"),
            text: String::new(),
        };
        let missing: Vec<&str> = [
            ("name", sb.name.is_empty()),
            ("namespace", sb.namespace.is_empty()),
            ("uid", sb.uid.is_none()),
            ("attempt", sb.attempt.is_none()),
            ("state", sb.state.is_none()),
            ("createdAt", sb.created_at.is_none()),
        ]
        .into_iter()
        .filter(|(_, m)| *m)
        .map(|(k, _)| k)
        .collect();
        if !missing.is_empty() {
            out.lacks.push(format!(
                "sandbox {}: cut or incomplete, no {}{}",
                sb.id.get(..13).unwrap_or(&sb.id),
                missing.join(", "),
                if sb.state.is_none() {
                    " (not judged: its state is unknown)"
                } else {
                    ""
                }
            ));
        }
        out.rows.push(sb);
    }
    if out.rows.is_empty() {
        return Err(PasteError {
            at: origin.to_string(),
            reason: "no crictl inspectp document (an \"id\" of 64 hex digits)".to_string(),
        });
    }
    Ok(out)
}

/// The pasted views of one diagnosis, each sandbox once: a sandbox pasted twice (the same file
/// twice, or crictl's table beside `inspectp`, which prints its ID cut to 13 hex digits) is one,
/// merged field by field as it is added, the first paste's row kept for evidence. Two rows are
/// one sandbox when one ID begins the other and their pod names do not differ. Built by
/// [`PastedViews::new`] and [`PastedViews::add_sandboxes`] only, so [`judge`] and [`too_young`]
/// read merged sandboxes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PastedViews {
    /// Every sandbox of every `crictl pods` and `crictl inspectp` paste, merged.
    sandboxes: Vec<PastedSandbox>,
    /// The merged sandboxes by the first 12 hex digits of their ID, lowercased.
    by_prefix: HashMap<String, Vec<usize>>,
    /// The pods of the `kubectl get pods` pastes, with the files' names; `None` when none was
    /// given (the pods' existence is then unknown).
    pub pods: Option<(Vec<PastedPod>, String)>,
    /// The node the pasted CRI view is of, to read the API view's NODE column against (a pod of
    /// the same name on another node is not this node's pod); `None` when unknown, and then NODE
    /// is not read. `--node-name`, else [`PastedViews::infer_node`].
    pub node: Option<String>,
}

impl PastedViews {
    /// The views of `sandboxes` (merged) and `pods`.
    pub fn new(
        sandboxes: Vec<PastedSandbox>,
        pods: Option<(Vec<PastedPod>, String)>,
    ) -> PastedViews {
        let mut v = PastedViews {
            pods,
            ..PastedViews::default()
        };
        v.add_sandboxes(sandboxes);
        v
    }

    /// The node the pasted sandboxes are of, from the API view's NODE column: the node of most
    /// of the listed pods that a pasted sandbox names (by namespace and name, or UID), since a
    /// `crictl` paste is of one node; `None` on a tie, or when no such pod has a node.
    pub fn infer_node(&self) -> Option<String> {
        let (pods, _) = self.pods.as_ref()?;
        let names: HashSet<(&str, &str)> = self
            .sandboxes
            .iter()
            .map(|s| (s.namespace.as_str(), s.name.as_str()))
            .collect();
        let uids: HashSet<&str> = self
            .sandboxes
            .iter()
            .filter_map(|s| s.uid.as_deref())
            .collect();
        let mut votes: HashMap<&str, usize> = HashMap::new();
        for p in pods {
            let Some(node) = p.node.as_deref() else {
                continue;
            };
            let named = match &p.namespace {
                Some(ns) => names.contains(&(ns.as_str(), p.name.as_str())),
                None => self.sandboxes.iter().any(|s| s.name == p.name),
            };
            if named || p.uid.as_deref().is_some_and(|u| uids.contains(u)) {
                *votes.entry(node).or_default() += 1;
            }
        }
        let most = votes.values().copied().max()?;
        let mut top = votes.iter().filter(|(_, v)| **v == most);
        let (node, _) = top.next()?;
        top.next().is_none().then(|| node.to_string())
    }

    /// The sandboxes, each once, in the order first pasted.
    pub fn sandboxes(&self) -> &[PastedSandbox] {
        &self.sandboxes
    }

    /// Adds pasted sandboxes, merging each into the one it repeats (linear: an index by ID
    /// prefix). A merged sandbox keeps the longer ID, the first non-empty name and namespace,
    /// and each field the first paste lacked.
    pub fn add_sandboxes(&mut self, rows: impl IntoIterator<Item = PastedSandbox>) {
        for s in rows {
            let key = s.id[..s.id.len().min(12)].to_ascii_lowercase();
            let same = |m: &PastedSandbox| {
                let (a, b) = (m.id.to_ascii_lowercase(), s.id.to_ascii_lowercase());
                let agree = |x: &str, y: &str| x.is_empty() || y.is_empty() || x == y;
                (a.starts_with(&b) || b.starts_with(&a))
                    && agree(&m.name, &s.name)
                    && agree(&m.namespace, &s.namespace)
            };
            let found = self
                .by_prefix
                .get(&key)
                .and_then(|is| is.iter().copied().find(|&i| same(&self.sandboxes[i])));
            match found {
                Some(i) => {
                    let m = &mut self.sandboxes[i];
                    if s.id.len() > m.id.len() {
                        m.id = s.id.clone();
                    }
                    if m.namespace.is_empty() {
                        m.namespace = s.namespace.clone();
                    }
                    if m.name.is_empty() {
                        m.name = s.name.clone();
                    }
                    m.uid = m.uid.take().or_else(|| s.uid.clone());
                    m.attempt = m.attempt.or(s.attempt);
                    m.state = m.state.or(s.state);
                    m.age = m.age.or(s.age);
                    m.created_at = m.created_at.or(s.created_at);
                }
                None => {
                    self.by_prefix
                        .entry(key)
                        .or_default()
                        .push(self.sandboxes.len());
                    self.sandboxes.push(s);
                }
            }
        }
    }
}

/// The pod a pasted sandbox belongs to: its UID when the paste has it, else namespace/name.
fn pod_key(s: &PastedSandbox) -> String {
    match &s.uid {
        Some(u) => u.clone(),
        None => format!("{}/{}", s.namespace, s.name),
    }
}

impl PastedSandbox {
    /// Its age as of the paste: crictl's CREATED, else (an `inspectp` or `crictl pods -o json`
    /// paste, which does not say when it was taken) from `createdAt` to `now`.
    pub fn age_at(&self, now: Timestamp) -> Option<SignedDuration> {
        self.age
            .or_else(|| self.created_at.map(|t| now.duration_since(t)))
    }

    /// When the paste was taken, at the earliest: `createdAt` plus CREATED's age, known when
    /// the sandbox was pasted both as a table row and as `inspectp` (CREATED rounds down).
    pub fn pasted_at(&self) -> Option<Timestamp> {
        self.created_at?.checked_add(self.age?).ok()
    }
}

/// The pasted API view, indexed: pods by UID and by (namespace, name) (namespace `None` for a
/// table without the NAMESPACE column), the namespaces it lists pods of, and whether it is of
/// every namespace.
struct ApiIndex<'p> {
    by_uid: HashMap<&'p str, &'p PastedPod>,
    by_name: HashMap<(Option<&'p str>, &'p str), Vec<&'p PastedPod>>,
    namespaces: HashSet<&'p str>,
    all_namespaces: bool,
    /// The pods on another node than the pasted sandboxes', by (namespace, name).
    elsewhere: HashMap<(Option<&'p str>, &'p str), &'p PastedPod>,
}

impl<'p> ApiIndex<'p> {
    /// The pods of `pods` on `node` (all of them when `node` is `None` or a pod's NODE is not
    /// pasted); the pods on another node are kept apart in `elsewhere`, for evidence.
    fn new(pods: &'p [PastedPod], node: Option<&str>) -> ApiIndex<'p> {
        let mut index = ApiIndex {
            by_uid: HashMap::new(),
            by_name: HashMap::new(),
            namespaces: HashSet::new(),
            all_namespaces: pods.iter().any(|p| p.all_namespaces),
            elsewhere: HashMap::new(),
        };
        for p in pods {
            if let Some(ns) = &p.namespace {
                index.namespaces.insert(ns.as_str());
            }
            if let (Some(here), Some(there)) = (node, p.node.as_deref())
                && here != there
            {
                index
                    .elsewhere
                    .entry((p.namespace.as_deref(), p.name.as_str()))
                    .or_insert(p);
                continue;
            }
            if let Some(u) = &p.uid {
                index.by_uid.entry(u.as_str()).or_insert(p);
            }
            index
                .by_name
                .entry((p.namespace.as_deref(), p.name.as_str()))
                .or_default()
                .push(p);
        }
        index
    }

    /// A pod of the name of `s` that the API view puts on another node.
    fn elsewhere(&self, s: &PastedSandbox) -> Option<&'p PastedPod> {
        [Some(s.namespace.as_str()), None]
            .into_iter()
            .find_map(|ns| self.elsewhere.get(&(ns, s.name.as_str())).copied())
    }

    /// Whether the listing shows which pods of namespace `ns` exist: it is of every namespace
    /// (`-A`), or it lists pods of `ns`.
    fn covers(&self, ns: &str) -> bool {
        self.all_namespaces || self.namespaces.contains(ns)
    }

    /// The pod of `s`: by UID when both have one; else by namespace and name (by name alone
    /// against a table without NAMESPACE), among the pods the UID does not already tell apart.
    fn find(&self, s: &PastedSandbox) -> Option<&'p PastedPod> {
        if let Some(p) = s.uid.as_deref().and_then(|u| self.by_uid.get(u)) {
            return Some(p);
        }
        [Some(s.namespace.as_str()), None]
            .into_iter()
            .filter_map(|ns| self.by_name.get(&(ns, s.name.as_str())))
            .flatten()
            .copied()
            .find(|p| s.uid.is_none() || p.uid.is_none())
    }
}

/// How many NOTREADY pasted sandboxes are younger than `min_age` (a `createdAt` after `now`,
/// a skewed clock, among them), which [`judge`] leaves alone, and when the youngest is old
/// enough; `None` when there are none.
pub fn too_young(
    views: &PastedViews,
    min_age: std::time::Duration,
    now: Timestamp,
) -> Option<(usize, Timestamp)> {
    let min = SignedDuration::try_from(min_age).unwrap_or(SignedDuration::MAX);
    let mut count = 0;
    let mut until: Option<Timestamp> = None;
    for s in views.sandboxes() {
        if s.state != Some(SandboxState::NotReady) {
            continue;
        }
        if let Some(age) = s.age_at(now).filter(|a| *a < min) {
            count += 1;
            let at = now.checked_add(min - age).unwrap_or(Timestamp::MAX);
            until = Some(until.map_or(at, |u| u.max(at)));
        }
    }
    until.map(|u| (count, u))
}

/// `kuberuntime_gc.go` `evictSandboxes` over pasted views, per pod (UID when the paste has it,
/// else namespace and name): a NOTREADY sandbox past `min_age` (its age as of the paste) that is
/// not its pod's newest is a `LeakedSandbox` warning; the pod's newest NOTREADY sandbox is a
/// warning when the pasted API view lacks the pod, and an info leftover when it has the pod
/// (the kubelet keeps the newest sandbox of a live pod) or when no API view was pasted (its
/// pod's existence is unknown, or the view does not cover the pod's namespace: a listing shows
/// a pod gone only when it is of every namespace, a `-A` table, or lists other pods of that
/// namespace, since `kubectl get pods` without `-A` lists one). A sandbox pasted twice is judged once. A sandbox whose state, age or pod (a row
/// cut before NAME) the paste lacks is not judged; one younger than `min_age` is counted by
/// [`too_young`]. The pods are indexed once, so the rule is linear in the sandboxes. No
/// finding is `gc_eligible`. A sandbox with `createdAt` but no CREATED column (`inspectp`,
/// `crictl pods -o json`) is aged from it to `now`, since such a paste does not say when it was
/// taken.
pub fn judge(views: &PastedViews, min_age: std::time::Duration, now: Timestamp) -> Vec<Finding> {
    judge_all(views, min_age, now).0
}

/// A pasted sandbox read but not judged, and why: what the report's NOT JUDGED block lists, so
/// that a paste whose sandboxes could not be judged never reads as a clean bill.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotJudged {
    /// The sandbox ID as pasted (13 hex digits from a table, 64 from `inspectp`).
    pub sandbox_id: String,
    /// `namespace/name` of its pod, empty when the paste does not name it.
    pub pod: String,
    /// `file:line` of its row or `"id"` key.
    pub at: String,
    /// Why it was not judged, and what paste would let it be.
    pub why: String,
}

/// [`judge`]'s findings, and the pasted sandboxes it read but could not judge: a state the paste
/// lacks (a table row cut before STATE, `inspectp` cut before `"state"`), a NOTREADY sandbox
/// whose pod it does not name (cut before NAME), or one whose age it lacks (no CREATED, cut before
/// `createdAt`) beside an API view that does not list its pod. One younger than `min_age` is
/// [`too_young`]'s, not listed here.
pub fn judge_all(
    views: &PastedViews,
    min_age: std::time::Duration,
    now: Timestamp,
) -> (Vec<Finding>, Vec<NotJudged>) {
    let mut not_judged = Vec::new();
    let mut skip = |s: &PastedSandbox, why: &str| {
        not_judged.push(NotJudged {
            sandbox_id: s.id.clone(),
            pod: if s.name.is_empty() {
                String::new()
            } else {
                format!("{}/{}", s.namespace, s.name)
            },
            at: s.origin.clone(),
            why: why.to_string(),
        })
    };
    let min = SignedDuration::try_from(min_age).unwrap_or(SignedDuration::MAX);
    let aged = views.sandboxes();
    let ages: Vec<Option<SignedDuration>> = aged.iter().map(|s| s.age_at(now)).collect();
    // Each pod's sandboxes, and the API view's pods, indexed once: the rule is linear in the
    // sandboxes (a node leaking for months pastes thousands).
    let mut by_pod: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, s) in aged.iter().enumerate() {
        by_pod.entry(pod_key(s)).or_default().push(i);
    }
    let api = views
        .pods
        .as_ref()
        .map(|(pods, _)| ApiIndex::new(pods, views.node.as_deref()));
    let mut out = Vec::new();
    for (i, s) in aged.iter().enumerate() {
        let age = ages[i];
        if s.state.is_none() {
            skip(
                s,
                "its state is not in the paste (cut before STATE or \"state\"): paste the whole crictl pods or crictl inspectp output",
            );
        }
        if s.state != Some(SandboxState::NotReady) {
            continue;
        }
        // A row cut before NAME names no pod: its pod's absence cannot be claimed (the reader
        // says so in the source's detail).
        if s.uid.is_none() && s.name.is_empty() {
            skip(
                s,
                "NOTREADY, but the row is cut before NAME: its pod is unknown",
            );
            continue;
        }
        let old = age.is_some_and(|a| a >= min);
        let newer = by_pod[&pod_key(s)]
            .iter()
            .map(|&j| (&aged[j], ages[j]))
            .find(|(o, o_age)| {
                o.id != s.id
                    && match (*o_age, age, o.attempt, s.attempt) {
                        (Some(a), Some(b), _, _) if a != b => a < b,
                        (_, _, Some(a), Some(b)) => a > b,
                        _ => false,
                    }
            })
            .map(|(o, _)| o);
        let pod_in_api = api.as_ref().map(|a| a.find(s));
        // A pasted listing shows whether a pod is gone only for the namespaces it covers:
        // `kubectl get pods` without `-A` lists one namespace (and prints no NAMESPACE column).
        let covered = api.as_ref().is_some_and(|a| a.covers(&s.namespace));
        let mut evidence = vec![Evidence::new(
            EvidenceSource::Cri,
            format!(
                "{}: {} (pod sandbox {} of {}/{}, attempt {}, NOTREADY{})",
                s.origin,
                if s.text.is_empty() {
                    "crictl inspectp"
                } else {
                    &s.text
                },
                s.id,
                s.namespace,
                s.name,
                s.attempt.map_or("unknown".to_string(), |a| a.to_string()),
                age.map_or(String::new(), |a| format!(
                    ", created {} before the paste",
                    human(a)
                ))
            ),
        )];
        let id = if s.id.len() < 64 {
            format!("{}…", s.id)
        } else {
            s.id.clone()
        };
        let (severity, summary) = if let (Some(n), true) = (newer, old) {
            evidence.push(Evidence::new(
                EvidenceSource::Cri,
                format!(
                    "{}: pod sandbox {} is the pod's newer sandbox",
                    n.origin, n.id
                ),
            ));
            (
                Severity::Warning,
                format!(
                    "pod sandbox {} of {}/{} is NOTREADY for {} and is not the pod's newest sandbox; \
                     kubelet's sandbox GC should have removed it (from a pasted view: its containers \
                     are not shown)",
                    s.id,
                    s.namespace,
                    s.name,
                    human(age.unwrap_or_default())
                ),
            )
        } else {
            match pod_in_api {
                Some(None) if old && covered => {
                    let (pods, files) = views.pods.as_ref().expect("Some above");
                    evidence.push(Evidence::new(
                        EvidenceSource::Apiserver,
                        format!(
                            "no pod {}/{} among the {} pods of the pasted {files}",
                            s.namespace,
                            s.name,
                            pods.len()
                        ),
                    ));
                    if let Some(p) = api.as_ref().and_then(|a| a.elsewhere(s)) {
                        evidence.push(Evidence::new(
                            EvidenceSource::Apiserver,
                            format!(
                                "{}: a pod {} is on node {} (NODE), not on {}: another pod of that name",
                                p.origin,
                                p.name,
                                p.node.as_deref().unwrap_or_default(),
                                views.node.as_deref().unwrap_or_default()
                            ),
                        ));
                    }
                    (
                        Severity::Warning,
                        format!(
                            "pod sandbox {} of {}/{} is NOTREADY for {} and its pod is gone from the \
                             API; kubelet's sandbox GC should have removed it (from pasted views)",
                            s.id,
                            s.namespace,
                            s.name,
                            human(age.unwrap_or_default())
                        ),
                    )
                }
                Some(Some(p)) => {
                    evidence.push(Evidence::new(
                        EvidenceSource::Apiserver,
                        format!("{}: pod {} is {} in the API", p.origin, p.name, p.status),
                    ));
                    (
                        Severity::Info,
                        format!(
                            "pod sandbox {} of {}/{} is NOTREADY but its pod is still in the API: the \
                             kubelet keeps a live pod's newest sandbox, and removes it once the pod is \
                             deleted or a newer sandbox replaces it and its containers are pruned",
                            s.id, s.namespace, s.name
                        ),
                    )
                }
                Some(None) if old => {
                    let (_, files) = views.pods.as_ref().expect("Some above");
                    evidence.push(Evidence::new(
                        EvidenceSource::Apiserver,
                        format!(
                            "the pasted {files} lists no pod of namespace {} (kubectl get pods \
                             without -A lists one namespace)",
                            s.namespace
                        ),
                    ));
                    (
                        Severity::Info,
                        format!(
                            "pod sandbox {} of {}/{} is NOTREADY for {}; the pasted API view does not \
                             cover namespace {}, so podcoroner cannot tell a leak (its pod gone) from \
                             the newest sandbox the kubelet keeps for a live pod (paste kubectl get \
                             pods -A)",
                            s.id,
                            s.namespace,
                            s.name,
                            human(age.unwrap_or_default()),
                            s.namespace
                        ),
                    )
                }
                Some(None) => {
                    if age.is_none() {
                        skip(
                            s,
                            "NOTREADY, but its age is not in the paste (no CREATED, cut before createdAt), so the pasted API view's lack of its pod cannot be weighed against --min-age",
                        );
                    }
                    continue;
                }
                None if age.is_some() && !old => continue,
                None => (
                    Severity::Info,
                    format!(
                        "pod sandbox {} of {}/{} is NOTREADY{}; without the API view (--kubectl-pods) \
                         podcoroner cannot tell a leak (its pod gone) from the newest sandbox the \
                         kubelet keeps for a live pod",
                        s.id,
                        s.namespace,
                        s.name,
                        age.map_or(String::new(), |a| format!(" for {}", human(a)))
                    ),
                ),
            }
        };
        out.push(Finding {
            kind: FindingKind::LeakedSandbox,
            severity,
            summary,
            pod: Some(PodRef {
                namespace: s.namespace.clone(),
                name: s.name.clone(),
                uid: s.uid.clone().unwrap_or_default(),
            }),
            sandbox_id: Some(id),
            container_id: None,
            path: None,
            evidence,
            kubelet_rule: "kuberuntime_gc.go evictSandboxes: a pod sandbox that is not READY and holds \
                           no containers is removed when its pod is gone; for a pod that still exists \
                           every such sandbox but the most recently created one is removed"
                .into(),
            remediation: format!(
                "on the node: crictl ps -a --pod {id} (exited containers keep it) and kubectl get pod \
                 -n {ns} {name}; when the pod is gone, crictl stopp {id} && crictl rmp {id}",
                id = sh(&s.id),
                ns = sh(&s.namespace),
                name = sh(&s.name)
            ),
            gc_eligible: false,
        });
    }
    (out, not_judged)
}

/// Adds to [`judge`]'s findings what the logs say of each sandbox, as for every
/// `LeakedSandbox` (`rules::logs::enrich`: the GC trying and failing, with its cause, or not
/// trying), and makes an info a warning when the kubelet's StopPodSandbox or RemovePodSandbox
/// of it failed (the sandbox is then not the leftover the GC keeps but one it cannot remove),
/// or when the logs show its pod stopped for good (`stopped`: the recorder's `Killing` or a
/// `SyncLoop DELETE`/`REMOVE`, no later record of the pod, the stop at least `min_age` before
/// the paste). Each finding's pod UID is named from the logs when they link its name to one.
/// `views` are the views `findings` were judged from. Call it only when logs were read (else
/// "no attempt in the logs" says nothing).
pub fn add_logs(
    findings: &mut [Finding],
    views: &PastedViews,
    events: &[crate::event::LoggedEvent],
    min_age: std::time::Duration,
    now: Timestamp,
) {
    crate::rules::logs::enrich(findings, events);
    for f in findings.iter_mut().filter(|f| f.severity == Severity::Info) {
        if f.evidence.iter().any(|e| {
            e.detail()
                .starts_with(crate::rules::leaked_sandbox::GC_FAILING)
        }) {
            f.severity = Severity::Warning;
            f.summary
                .push_str("; the kubelet's attempts to stop or remove it fail (see the logs)");
        }
    }
    let min = SignedDuration::try_from(min_age).unwrap_or(SignedDuration::MAX);
    stopped::add_stops(findings, views, events, min, now);
}

mod stopped;

#[cfg(test)]
mod tests;
