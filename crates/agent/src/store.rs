//! Findings over time: each finding's `first_seen`, `last_seen` and, once its condition clears,
//! `resolved_at`, kept across evaluations and daemon restarts.
//!
//! A finding is resolved only after it is missing from [`Store::resolve_after_misses`]
//! consecutive evaluations in which its rule ran, so one missed poll (or a source that is down,
//! which makes the rule skip) never makes it flap. Resolved findings stay visible for
//! [`Store::retention`], then are dropped. The store is saved atomically (temp file, fsync,
//! rename) as versioned JSON.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;
use podcoroner_core::{Finding, SkippedRule};
use serde::{Deserialize, Serialize};

use podcoroner_node::api::FindingView;

/// The value of the state file's `schema`.
pub const STATE_SCHEMA: &str = "podcoroner.state/v1";

/// A finding with its history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tracked {
    /// The finding as last seen.
    #[serde(flatten)]
    pub finding: FindingView,
    /// When it was first seen.
    pub first_seen: Timestamp,
    /// When it was last seen.
    pub last_seen: Timestamp,
    /// When its condition cleared; `None` while open.
    pub resolved_at: Option<Timestamp>,
    /// Consecutive evaluations that ran its rule without finding it.
    #[serde(default)]
    pub misses: u32,
}

impl Tracked {
    /// `open` or `resolved`.
    pub fn state(&self) -> &'static str {
        if self.resolved_at.is_some() {
            "resolved"
        } else {
            "open"
        }
    }
}

/// The findings store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    /// Tracked findings by [`key`].
    pub findings: BTreeMap<String, Tracked>,
    /// Evaluations a finding must be missing from before it is resolved (default 2).
    pub resolve_after_misses: u32,
    /// How long a resolved finding stays visible (default 24 h).
    pub retention: Duration,
}

/// The state file.
#[derive(Debug, Serialize, Deserialize)]
struct StateFile {
    schema: String,
    findings: Vec<(String, Tracked)>,
}

/// A finding's identity across evaluations: its kind and the objects it names.
pub fn key(f: &Finding) -> String {
    let pod = f.pod.as_ref().map_or(String::new(), |p| {
        format!("{}/{}/{}", p.namespace, p.name, p.uid)
    });
    format!(
        "{}|{pod}|{}|{}|{}",
        f.kind.as_str(),
        f.sandbox_id.as_deref().unwrap_or(""),
        f.container_id.as_deref().unwrap_or(""),
        f.path.as_deref().unwrap_or("")
    )
}

impl Store {
    /// An empty store.
    pub fn new(resolve_after_misses: u32, retention: Duration) -> Store {
        Store {
            findings: BTreeMap::new(),
            resolve_after_misses: resolve_after_misses.max(1),
            retention,
        }
    }

    /// Folds one evaluation in: `current` findings at `now`, with the rules `skipped` in it.
    /// Returns the keys of findings that are new or reopened.
    pub fn update(
        &mut self,
        current: &[Finding],
        skipped: &[SkippedRule],
        now: Timestamp,
    ) -> Vec<String> {
        let mut opened = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for f in current {
            let k = key(f);
            seen.insert(k.clone());
            match self.findings.get_mut(&k) {
                Some(t) => {
                    if t.resolved_at.is_some() {
                        opened.push(k.clone());
                    }
                    t.finding = FindingView::from(f);
                    t.last_seen = now;
                    t.resolved_at = None;
                    t.misses = 0;
                }
                None => {
                    opened.push(k.clone());
                    self.findings.insert(
                        k,
                        Tracked {
                            finding: FindingView::from(f),
                            first_seen: now,
                            last_seen: now,
                            resolved_at: None,
                            misses: 0,
                        },
                    );
                }
            }
        }
        let skipped_kinds: Vec<&str> = skipped.iter().map(|s| s.kind.as_str()).collect();
        let retention =
            jiff::SignedDuration::try_from(self.retention).unwrap_or(jiff::SignedDuration::MAX);
        self.findings.retain(|k, t| {
            if seen.contains(k) {
                return true;
            }
            if let Some(at) = t.resolved_at {
                return now.duration_since(at) < retention;
            }
            // A rule that did not run this time says nothing about its findings.
            if !skipped_kinds.contains(&t.finding.kind.as_str()) {
                t.misses += 1;
                if t.misses >= self.resolve_after_misses {
                    t.resolved_at = Some(now);
                }
            }
            true
        });
        opened
    }

    /// The open findings.
    pub fn open(&self) -> impl Iterator<Item = &Tracked> {
        self.findings.values().filter(|t| t.resolved_at.is_none())
    }

    /// Loads a store saved by [`Store::save`]; a missing file is an empty store.
    ///
    /// # Errors
    /// A file that cannot be read or parsed, naming it.
    pub fn load(
        path: &Path,
        resolve_after_misses: u32,
        retention: Duration,
    ) -> anyhow::Result<Store> {
        use anyhow::Context as _;
        let mut store = Store::new(resolve_after_misses, retention);
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(store),
            Err(e) => return Err(e).with_context(|| format!("reading state {}", path.display())),
        };
        let file: StateFile = serde_json::from_slice(&bytes)
            .with_context(|| format!("malformed state {}", path.display()))?;
        anyhow::ensure!(
            file.schema == STATE_SCHEMA,
            "{}: schema {:?} is not {STATE_SCHEMA:?}",
            path.display(),
            file.schema
        );
        store.findings = file.findings.into_iter().collect();
        Ok(store)
    }

    /// Saves the store atomically: a temp file beside `path`, fsync, rename, fsync of the
    /// directory.
    ///
    /// # Errors
    /// Any I/O error, naming the file.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let file = StateFile {
            schema: STATE_SCHEMA.to_string(),
            findings: self
                .findings
                .iter()
                .map(|(k, t)| (k.clone(), t.clone()))
                .collect(),
        };
        write_atomically(path, &serde_json::to_vec_pretty(&file)?)
    }
}

/// Writes `bytes` to `path` through a temp file, fsync and rename, so a crash leaves either the
/// old or the new file, never a torn one.
///
/// # Errors
/// Any I/O error, naming the file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;

    use anyhow::Context as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = path.with_extension("tmp");
    let mut f =
        std::fs::File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcoroner_core::{FindingKind, PodRef, Severity};

    fn leaked(id: &str) -> Finding {
        Finding {
            kind: FindingKind::LeakedSandbox,
            severity: Severity::Warning,
            summary: format!("sandbox {id} leaked"),
            pod: Some(PodRef {
                namespace: "shop".into(),
                name: "cart".into(),
                uid: "u-1".into(),
            }),
            sandbox_id: Some(id.to_string()),
            container_id: None,
            path: None,
            evidence: vec![],
            kubelet_rule: "".into(),
            remediation: String::new(),
            gc_eligible: true,
        }
    }

    fn at(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    #[test]
    fn first_seen_survives_and_one_miss_does_not_resolve() {
        let mut s = Store::new(2, Duration::from_secs(3600));
        assert_eq!(s.update(&[leaked("a")], &[], at(0)).len(), 1);
        assert!(s.update(&[leaked("a")], &[], at(30)).is_empty());
        // One missed poll: still open.
        s.update(&[], &[], at(60));
        let t = s.findings.values().next().unwrap();
        assert_eq!(
            (t.first_seen, t.last_seen, t.resolved_at, t.misses),
            (at(0), at(30), None, 1)
        );
        // Back: misses reset, first_seen kept.
        s.update(&[leaked("a")], &[], at(90));
        let t = s.findings.values().next().unwrap();
        assert_eq!((t.first_seen, t.last_seen, t.misses), (at(0), at(90), 0));
        // Two misses in a row: resolved, and still listed.
        s.update(&[], &[], at(120));
        s.update(&[], &[], at(150));
        let t = s.findings.values().next().unwrap();
        assert_eq!(t.resolved_at, Some(at(150)));
        assert_eq!(t.state(), "resolved");
        // Reopened when it comes back.
        assert_eq!(s.update(&[leaked("a")], &[], at(180)).len(), 1);
        assert_eq!(s.findings.values().next().unwrap().first_seen, at(0));
        // Resolved ones go after the retention period.
        s.update(&[], &[], at(200));
        s.update(&[], &[], at(210));
        s.update(&[], &[], at(210 + 3599));
        assert_eq!(s.findings.len(), 1);
        s.update(&[], &[], at(210 + 3600));
        assert!(s.findings.is_empty());
    }

    #[test]
    fn a_skipped_rule_does_not_resolve_its_findings() {
        let mut s = Store::new(2, Duration::from_secs(3600));
        s.update(&[leaked("a")], &[], at(0));
        let skipped = [SkippedRule {
            kind: FindingKind::LeakedSandbox,
            partial: false,
            reason: "the CRI view is unavailable".into(),
        }];
        for i in 1..10 {
            s.update(&[], &skipped, at(i * 30));
        }
        assert_eq!(s.open().count(), 1);
    }

    #[test]
    fn save_and_load_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/state.json");
        let mut s = Store::new(2, Duration::from_secs(3600));
        s.update(&[leaked("a"), leaked("b")], &[], at(0));
        s.save(&path).unwrap();
        let back = Store::load(&path, 2, Duration::from_secs(3600)).unwrap();
        assert_eq!(back, s);
        assert!(!path.with_extension("tmp").exists());
        std::fs::write(&path, "{\"schema\": \"other\", \"findings\": []}").unwrap();
        let err = Store::load(&path, 2, Duration::from_secs(3600))
            .unwrap_err()
            .to_string();
        assert!(err.contains("schema \"other\""), "{err}");
        assert_eq!(
            Store::load(&dir.path().join("none.json"), 2, Duration::from_secs(1))
                .unwrap()
                .findings
                .len(),
            0
        );
    }
}
