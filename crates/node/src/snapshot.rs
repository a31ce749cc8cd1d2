//! A captured node: what `podcoroner collect --out DIR` writes and `podcoroner diagnose
//! --snapshot DIR` reads. The layout (documented in `docs/snapshot.md`) reuses the formats an
//! SRE already has, so a snapshot can also be assembled by hand with crictl and kubectl:
//!
//! ```text
//! meta.json            {"schema": "podcoroner.snapshot/v1", "node", "collected_at", "sources", ...}
//! cri/version.json     crictl version -o json
//! cri/pods.json        crictl pods -o json
//! cri/containers.json  crictl ps -a -o json
//! api/pods.json        kubectl get pods -A -o json (absent when the API was unavailable)
//! manifests/           the manifest files the kubelet reads, secrets redacted (absent: no such directory)
//! manifest_url.json    with --manifest-url: the URL and the pods its body declared (names only), or
//!                      why it could not be read
//! (meta.json left_out: what was not copied and why)
//! kubelet/pods/<uid>/  the pod directory skeleton: entries and volumes/<plugin>/<volume>, no contents
//! logs/kubelet.log     the kubelet log window (--since, default the last 24 h), when --kubelet-log
//!                      (kubelet-2.log, … for each further --kubelet-log)
//! logs/runtime.log     the runtime log window, when --runtime-log
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use jiff::Timestamp;
use podcoroner_core::event::LogKind;
use podcoroner_core::{CriView, NodeView};
use serde::{Deserialize, Serialize};

use crate::api::{SourceState, SourceStatus};
use crate::gather::{self, Gathered, SourceOptions};
use podcoroner_hostfs::manifests::ManifestError;

/// The value of [`Meta::schema`].
pub const SCHEMA: &str = "podcoroner.snapshot/v1";

/// `meta.json`: when and where the snapshot was taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The node name.
    pub node: String,
    /// When the views were read; `diagnose --snapshot` judges ages as of this time.
    pub collected_at: Timestamp,
    /// The podcoroner version that collected it.
    pub podcoroner_version: String,
    /// The manifest directory on the node, for evidence lines.
    pub manifest_dir: String,
    /// The static pod URL (`--manifest-url`), when one was given; its pods are in
    /// `manifest_url.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_url: Option<String>,
    /// The kubelet root directory on the node, for evidence lines.
    pub kubelet_root_dir: String,
    /// Each source's status at collection time.
    pub sources: BTreeMap<String, SourceStatus>,
    /// The modification time of each pod directory on the node, by pod UID (the copies in
    /// `kubelet/pods/` carry the time of the copy, or of a git checkout).
    #[serde(default)]
    pub pod_dir_modified_at: BTreeMap<String, Timestamp>,
    /// What collect left out of the snapshot, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// How many values were redacted (`<redacted>`); `None` with `--keep-secrets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<usize>,
}

/// A file collect did not copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    /// The file on the node.
    pub path: String,
    /// Why it was not copied.
    pub reason: String,
    /// For a manifest: true when the kubelet may read it (a link out of the directory, a file
    /// this process could not read), so `diagnose --snapshot` treats what it declares as
    /// unknown; false when the kubelet rejects it too (its reason becomes the
    /// `InvalidStaticPodManifest` finding, as on the node).
    #[serde(default)]
    pub unknown: bool,
}

/// A snapshot read back.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// `meta.json`.
    pub meta: Meta,
    /// The views, with the node's original paths in them.
    pub view: NodeView,
    /// The events of the captured log windows.
    pub events: Vec<podcoroner_core::event::LoggedEvent>,
    /// Each source's status: as collected, with the snapshot's own reading problems.
    pub sources: BTreeMap<String, SourceStatus>,
}

/// Writes `gathered` (read with `opts` at `collected_at`) into the empty or new directory `out`,
/// atomically: everything is written into a temporary directory beside `out`, renamed to `out`
/// at the end, so `out` either holds a whole snapshot with its `meta.json` or nothing. What is
/// left out (a manifest link out of its directory, a FIFO, a file that cannot be read, a
/// symlinked pod directory) is recorded in [`Meta::left_out`] with why. Unless `keep_secrets`,
/// env values and secret-shaped fields of manifests and API pods are redacted
/// ([`crate::redact`]); a manifest that cannot be parsed to redact it is left out, with the
/// kubelet's reason.
///
/// # Errors
/// When `out` exists and is not empty, or on any read or write error (naming the file).
pub fn write(
    out: &Path,
    gathered: &Gathered,
    opts: &SourceOptions,
    collected_at: Timestamp,
    keep_secrets: bool,
) -> anyhow::Result<()> {
    if out.exists()
        && std::fs::read_dir(out)
            .with_context(|| format!("reading {}", out.display()))?
            .next()
            .is_some()
    {
        bail!("snapshot directory {} is not empty", out.display());
    }
    let name = out
        .file_name()
        .with_context(|| format!("{} names no directory", out.display()))?;
    let tmp = out.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    let written = write_into(&tmp, gathered, opts, collected_at, keep_secrets).and_then(|()| {
        // An empty `out` is replaced; rename(2) takes an empty directory as its target.
        std::fs::rename(&tmp, out)
            .with_context(|| format!("renaming {} to {}", tmp.display(), out.display()))
    });
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    written
}

/// [`write`]'s work, into the new directory `out`.
fn write_into(
    out: &Path,
    gathered: &Gathered,
    opts: &SourceOptions,
    collected_at: Timestamp,
    keep_secrets: bool,
) -> anyhow::Result<()> {
    for sub in ["cri", "api", "kubelet"] {
        std::fs::create_dir_all(out.join(sub))
            .with_context(|| format!("creating {}", out.join(sub).display()))?;
    }
    let mut redacted = 0;
    let mut left_out = Vec::new();
    if let (Some(cri), Some(runtime)) = (&gathered.view.cri, &gathered.runtime) {
        use podcoroner_cri::crictl_json;
        write_text(
            &out.join("cri/version.json"),
            &crictl_json::write_version(runtime),
        )?;
        write_text(
            &out.join("cri/pods.json"),
            &crictl_json::write_pods(&cri.sandboxes),
        )?;
        write_text(
            &out.join("cri/containers.json"),
            &crictl_json::write_containers(&cri.containers),
        )?;
    }
    if let Some(pods) = &gathered.raw_pods {
        let mut list = podcoroner_apiserver::pod_list_json(pods);
        if !keep_secrets {
            redacted += crate::redact::redact(&mut list);
        }
        write_json(&out.join("api/pods.json"), &list)?;
    }
    if let Some(files) = podcoroner_hostfs::manifests::capture(&opts.manifest_dir)? {
        let dir = out.join("manifests");
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for file in files {
            let (bytes, n) = match file.content {
                Ok(bytes) if keep_secrets => (Ok(bytes), 0),
                Ok(bytes) => match redacted_manifest(&bytes) {
                    Ok((bytes, n)) => (Ok(bytes), n),
                    Err(ManifestError::Rejected(reason)) => (Err((reason, false)), 0),
                    Err(ManifestError::Unreadable(reason)) => (Err((reason, true)), 0),
                },
                Err(ManifestError::Rejected(reason)) => (Err((reason, false)), 0),
                Err(ManifestError::Unreadable(reason)) => (Err((reason, true)), 0),
            };
            redacted += n;
            match bytes {
                Ok(bytes) => {
                    let to = dir.join(file.path.file_name().unwrap_or_default());
                    std::fs::write(&to, bytes)
                        .with_context(|| format!("writing {}", to.display()))?;
                }
                Err((reason, unknown)) => left_out.push(LeftOut {
                    path: file.path.display().to_string(),
                    reason,
                    unknown,
                }),
            }
        }
    }
    if let Some(u) = &gathered.view.manifest_url {
        write_json(&out.join("manifest_url.json"), u)?;
    }
    let (_, pods_left_out) =
        podcoroner_hostfs::pod_dirs::copy_skeleton(&opts.kubelet_root_dir, &out.join("kubelet"))?;
    left_out.extend(pods_left_out.into_iter().map(|(path, reason)| LeftOut {
        path: path.display().to_string(),
        reason,
        unknown: false,
    }));
    let window_start = opts
        .since
        .unwrap_or(collected_at - jiff::SignedDuration::from_hours(24));
    for (kind, logs) in [
        (LogKind::Kubelet, &opts.kubelet_logs),
        (LogKind::Runtime, &opts.runtime_logs),
    ] {
        for (i, source) in logs.iter().enumerate() {
            std::fs::create_dir_all(out.join("logs"))
                .with_context(|| format!("creating {}", out.join("logs").display()))?;
            let file = log_file_name(kind, i);
            podcoroner_logs::copy_window(source, Some(window_start), &out.join("logs").join(file))?;
        }
    }
    let meta = Meta {
        schema: SCHEMA.to_string(),
        node: gathered.view.node_name.clone(),
        collected_at,
        podcoroner_version: env!("CARGO_PKG_VERSION").to_string(),
        manifest_dir: opts.manifest_dir.display().to_string(),
        manifest_url: opts.manifest_url.clone(),
        kubelet_root_dir: opts.kubelet_root_dir.display().to_string(),
        sources: gathered.sources.clone(),
        pod_dir_modified_at: gathered
            .view
            .pod_dirs
            .iter()
            .flatten()
            .filter_map(|d| d.modified_at.map(|t| (d.uid.clone(), t)))
            .collect(),
        left_out,
        redacted: (!keep_secrets).then_some(redacted),
    };
    write_json(&out.join("meta.json"), &meta)
}

/// The file under `logs/` of a snapshot that holds the `index`th (from 0) log of `kind`:
/// `kubelet.log` or `runtime.log`, then `kubelet-2.log`, … (`--kubelet-log` given more than once).
fn log_file_name(kind: LogKind, index: usize) -> String {
    let base = match kind {
        LogKind::Kubelet => "kubelet",
        LogKind::Runtime => "runtime",
    };
    match index {
        0 => format!("{base}.log"),
        i => format!("{base}-{}.log", i + 1),
    }
}

/// A manifest's first document with its secrets redacted, as YAML, and how many values were
/// redacted; or why it cannot be: the kubelet's reason to reject the file, or (nested past what
/// podcoroner parses) podcoroner's reason to not read it.
fn redacted_manifest(bytes: &[u8]) -> Result<(Vec<u8>, usize), ManifestError> {
    use podcoroner_hostfs::manifests::{
        KUBELET_MAX_DEPTH, MAX_PARSED_DEPTH, nesting_depth, parse_file,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    // Bounded first: serde_yaml is never given a file nested past what it takes.
    if nesting_depth(text, KUBELET_MAX_DEPTH + 1) > MAX_PARSED_DEPTH {
        return Err(parse_file(bytes).err().unwrap_or_else(|| "too deep".into()));
    }
    use serde::Deserialize as _;
    let first = serde_yaml::Deserializer::from_str(text)
        .next()
        .ok_or("empty file")?;
    // Not YAML: the kubelet's reason, and nothing of it in the snapshot.
    let mut value = serde_json::Value::deserialize(first).map_err(|e| {
        parse_file(bytes)
            .err()
            .unwrap_or_else(|| ManifestError::Rejected(e.to_string()))
    })?;
    let n = crate::redact::redact(&mut value);
    let yaml = serde_yaml::to_string(&value).map_err(|e| ManifestError::Rejected(e.to_string()))?;
    Ok((yaml.into_bytes(), n))
}

fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let mut bytes =
        serde_json::to_vec_pretty(value).with_context(|| format!("encoding {}", path.display()))?;
    bytes.push(b'\n');
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Reads the snapshot in `dir`, with every event of its log windows (`explain`).
///
/// A view whose files are absent is unavailable (its rules skip), with the reason recorded at
/// collection time when there is one.
///
/// # Errors
/// A missing or malformed `meta.json`, or a malformed file (naming it, with line and column).
pub fn read(dir: &Path) -> anyhow::Result<Snapshot> {
    read_with(dir, false)
}

/// [`read`] for `diagnose`: the log windows are read with
/// [`podcoroner_logs::read_for_diagnosis`], so [`Snapshot::events`] holds what the rules read
/// (a record repeated without end costs a few), as [`gather::gather_for_diagnosis`] does on a
/// live node.
///
/// # Errors
/// As [`read`].
pub fn read_for_diagnosis(dir: &Path) -> anyhow::Result<Snapshot> {
    read_with(dir, true)
}

fn read_with(dir: &Path, fold: bool) -> anyhow::Result<Snapshot> {
    let meta_path = dir.join("meta.json");
    let meta_bytes = std::fs::read(&meta_path).with_context(|| {
        format!(
            "{} is not a podcoroner snapshot: cannot read {}",
            dir.display(),
            meta_path.display()
        )
    })?;
    let schema = serde_json::from_slice::<serde_json::Value>(&meta_bytes)
        .with_context(|| format!("malformed {}", meta_path.display()))?
        .get("schema")
        .and_then(|s| s.as_str().map(str::to_string));
    if schema.as_deref() != Some(SCHEMA) {
        bail!(
            "{}: schema is {schema:?}, not {SCHEMA:?}",
            meta_path.display()
        );
    }
    let meta: Meta = serde_json::from_slice(&meta_bytes)
        .with_context(|| format!("malformed {}", meta_path.display()))?;
    // Each source's status comes from what is read here; the collection-time status explains
    // what is absent, and lends its endpoint or path.
    let collected = |name: &str| meta.sources.get(name).cloned().unwrap_or_default();
    let absent = |name: &str, what: &str| {
        let c = collected(name);
        if c.status.is_some() && c.status != Some(SourceState::Ok) {
            c
        } else {
            SourceStatus::unavailable(format!("{what} is not in the snapshot"))
        }
    };
    let mut sources = BTreeMap::new();

    // CRI: both listings or neither (a sandbox list without its containers would make every
    // sandbox look empty).
    let pods_json = dir.join("cri/pods.json");
    let cri = if pods_json.exists() {
        use podcoroner_cri::crictl_json;
        let sandboxes = crictl_json::read_pods(&pods_json)?;
        let containers = crictl_json::read_containers(&dir.join("cri/containers.json"))?;
        let cri = CriView {
            sandboxes,
            containers,
        };
        let version_json = dir.join("cri/version.json");
        let endpoint = collected("cri").endpoint.unwrap_or_default();
        let status = if version_json.exists() {
            let text = std::fs::read_to_string(&version_json)
                .with_context(|| format!("reading {}", version_json.display()))?;
            let runtime =
                crictl_json::parse_version(&text, &version_json.display().to_string(), &endpoint)?;
            let mut s = gather::cri_status(&runtime, &cri);
            if endpoint.is_empty() {
                s.endpoint = None;
            }
            s
        } else {
            let mut s = SourceStatus::ok();
            s.counts
                .insert("sandboxes".to_string(), cri.sandboxes.len());
            s.counts
                .insert("containers".to_string(), cri.containers.len());
            s.detail = Some("cri/version.json is not in the snapshot: runtime unknown".to_string());
            s
        };
        sources.insert("cri".to_string(), status);
        Some(cri)
    } else {
        sources.insert("cri".to_string(), absent("cri", "cri/pods.json"));
        None
    };

    // API pods.
    let api_json = dir.join("api/pods.json");
    let api = if api_json.exists() {
        let mut pods = podcoroner_apiserver::read_pod_list(&api_json)?;
        // The snapshot's own file, not the path a --pods file had on the capturing machine.
        let c = collected("apiserver");
        let origin = c
            .endpoint
            .clone()
            .unwrap_or_else(|| api_json.display().to_string());
        pods.view.origin = format!("{origin} (snapshot)");
        let mut s = SourceStatus::ok();
        s.endpoint = c.endpoint;
        s.path = Some(api_json.display().to_string());
        s.counts.insert("pods".to_string(), pods.raw.len());
        s.detail = pods.note.clone();
        sources.insert("apiserver".to_string(), s);
        Some(pods.view)
    } else {
        sources.insert(
            "apiserver".to_string(),
            absent("apiserver", "api/pods.json"),
        );
        None
    };

    // Manifests, with the node's paths. An absent manifests/ is a directory that did not exist
    // on the node (collect copies it whenever it exists).
    let manifest_copy = dir.join("manifests");
    let mut read = podcoroner_hostfs::manifests::read_dir(&manifest_copy)?;
    for m in &mut read.manifests {
        m.path = rebase(&m.path, &manifest_copy, &meta.manifest_dir);
    }
    read.path = PathBuf::from(&meta.manifest_dir);
    // What collect left out of manifests/ is judged as on the node: rejected, or unknown.
    let under_manifests = format!("{}/", meta.manifest_dir.trim_end_matches('/'));
    for l in meta
        .left_out
        .iter()
        .filter(|l| l.path.starts_with(&under_manifests))
    {
        if l.unknown {
            read.unreadable.push(podcoroner_core::UnreadableManifest {
                path: l.path.clone(),
                reason: l.reason.clone(),
            });
        } else {
            read.manifests.push(podcoroner_core::StaticManifest {
                path: l.path.clone(),
                pod: Err(l.reason.clone()),
            });
        }
    }
    read.manifests.sort_by(|a, b| a.path.cmp(&b.path));
    sources.insert("manifests".to_string(), gather::manifests_status(&read));
    let manifests = Some(gather::manifest_view(read));

    // The static pod URL's pods as collect read them.
    let manifest_url = match &meta.manifest_url {
        None => None,
        Some(url) => {
            let path = dir.join("manifest_url.json");
            let view = if path.is_file() {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                serde_json::from_str::<podcoroner_core::UrlManifestView>(&text)
                    .with_context(|| format!("parsing {}", path.display()))?
            } else {
                podcoroner_core::UrlManifestView {
                    url: url.clone(),
                    pods: Err("manifest_url.json is not in the snapshot".to_string()),
                }
            };
            sources.insert(
                "manifest_url".to_string(),
                gather::manifest_url_status(&view),
            );
            Some(view)
        }
    };

    // Pod directories, with the node's paths.
    let kubelet_copy = dir.join("kubelet");
    let pod_dirs = podcoroner_hostfs::pod_dirs::read(&kubelet_copy)?.map(|mut dirs| {
        for d in &mut dirs {
            d.path = rebase(&d.path, &kubelet_copy, &meta.kubelet_root_dir);
            d.modified_at = meta.pod_dir_modified_at.get(&d.uid).copied();
        }
        dirs
    });
    match &pod_dirs {
        Some(d) => {
            sources.insert(
                "pod_dirs".to_string(),
                gather::pod_dirs_status(Path::new(&meta.kubelet_root_dir), Some(d)),
            );
        }
        None => {
            sources.insert("pod_dirs".to_string(), absent("pod_dirs", "kubelet/pods/"));
        }
    }

    // Log windows.
    let mut events = Vec::new();
    for kind in [LogKind::Kubelet, LogKind::Runtime] {
        // kubelet.log, then kubelet-2.log, … as `write` numbered them.
        for i in 0.. {
            let path = dir.join("logs").join(log_file_name(kind, i));
            if !path.is_file() {
                break;
            }
            let source = podcoroner_logs::Source::File(path);
            let read = if fold {
                podcoroner_logs::read_for_diagnosis(&source, kind, None, Default::default())?
            } else {
                podcoroner_logs::read(&source, kind, None)?
            };
            sources.insert(
                gather::log_source_name(kind, i),
                gather::log_status(&source, kind, &read),
            );
            events.extend(read.events);
        }
    }

    let view = NodeView {
        node_name: meta.node.clone(),
        cri,
        api,
        manifests,
        pod_dirs,
        manifest_url,
    };
    Ok(Snapshot {
        meta,
        view,
        events,
        sources,
    })
}

fn write_text(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut text = text.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// `path` (under `from`) moved under `to`.
fn rebase(path: &str, from: &Path, to: &str) -> String {
    match Path::new(path).strip_prefix(from) {
        Ok(rest) => PathBuf::from(to).join(rest).display().to_string(),
        Err(_) => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(dir: &Path) -> SourceOptions {
        SourceOptions {
            runtime_endpoint: None,
            timeout: std::time::Duration::from_secs(1),
            node_name: "node-1".to_string(),
            manifest_dir: dir.join("manifests"),
            manifest_url: None,
            kubeconfig: None,
            pods_file: None,
            no_apiserver: true,
            kubelet_root_dir: dir.join("kubelet"),
            kubelet_logs: vec![],
            runtime_logs: vec![],
            since: None,
            offline: false,
        }
    }

    fn gathered() -> Gathered {
        Gathered {
            view: NodeView::empty(),
            sources: BTreeMap::new(),
            runtime: None,
            raw_pods: None,
            events: vec![],
            kubelet_log_end: None,
            log_reads: vec![],
        }
    }

    #[test]
    fn a_failed_collect_leaves_no_half_written_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
        std::fs::write(
            dir.path().join("manifests/etcd.yaml"),
            "apiVersion: v1\nkind: Pod\nmetadata: {name: etcd}\nspec: {containers: [{name: e}]}\n",
        )
        .unwrap();
        let mut o = opts(dir.path());
        // Fails after the manifests are written: the log window cannot be copied.
        o.kubelet_logs = vec![podcoroner_logs::Source::File(dir.path().join("gone.log"))];
        let out = dir.path().join("snap");
        let err = write(&out, &gathered(), &o, Timestamp::now(), false).unwrap_err();
        assert!(format!("{err:#}").contains("gone.log"), "{err:#}");
        assert!(!out.exists(), "a half-written snapshot was left");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.contains(".tmp-")), "{names:?}");
        // An empty --out is filled whole.
        std::fs::create_dir(&out).unwrap();
        o.kubelet_logs = vec![];
        write(&out, &gathered(), &o, Timestamp::now(), false).unwrap();
        assert!(out.join("meta.json").is_file() && out.join("manifests/etcd.yaml").is_file());
        let back = read(&out).unwrap();
        assert_eq!(back.meta.redacted, Some(0));
    }

    #[test]
    fn several_kubelet_logs_are_kept_and_read_back_each_its_own_source() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
        let mut o = opts(dir.path());
        for (f, uid) in [("a.log", "1111"), ("b.log", "2222")] {
            std::fs::write(
                dir.path().join(f),
                format!(
                    "I1201 10:00:00.000000    1234 pod_workers.go:1170] \"Pod worker has been requested for removal but is still not fully terminated\" podUID={uid}\n"
                ),
            )
            .unwrap();
            o.kubelet_logs
                .push(podcoroner_logs::Source::File(dir.path().join(f)));
        }
        let out = dir.path().join("snap");
        let collected_at: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        write(&out, &gathered(), &o, collected_at, false).unwrap();
        assert!(out.join("logs/kubelet.log").is_file());
        assert!(out.join("logs/kubelet-2.log").is_file());
        let back = read(&out).unwrap();
        let names: Vec<&str> = back.sources.keys().map(String::as_str).collect();
        assert!(
            names.contains(&"kubelet_log") && names.contains(&"kubelet_log_2"),
            "{names:?}"
        );
        assert!(!names.contains(&"kubelet_log_3"), "{names:?}");
        assert_eq!(back.events.len(), 2);
        assert!(
            back.sources["kubelet_log_2"]
                .path
                .as_deref()
                .unwrap()
                .ends_with("kubelet-2.log")
        );
    }

    #[test]
    fn the_static_pod_url_is_captured_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let url = "http://127.0.0.1:8080/pods".to_string();
        let mut o = opts(dir.path());
        o.manifest_url = Some(url.clone());
        for pods in [
            Ok(vec![podcoroner_core::ManifestPod {
                name: "edge".to_string(),
                namespace: "kube-system".to_string(),
                uid: None,
            }]),
            Err("GET http://127.0.0.1:8080/pods: status 503, not 200".to_string()),
        ] {
            let view = podcoroner_core::UrlManifestView {
                url: url.clone(),
                pods,
            };
            let mut g = gathered();
            g.view.manifest_url = Some(view.clone());
            let out = dir.path().join(format!("snap-{}", view.pods.is_ok()));
            write(&out, &g, &o, Timestamp::now(), false).unwrap();
            let back = read(&out).unwrap();
            assert_eq!(back.meta.manifest_url.as_deref(), Some(url.as_str()));
            assert_eq!(back.view.manifest_url.as_ref(), Some(&view));
            let status = &back.sources["manifest_url"];
            assert_eq!(status.endpoint.as_deref(), Some(url.as_str()));
            match &view.pods {
                Ok(_) => {
                    assert!(status.is_ok(), "{status:?}");
                    assert_eq!(status.counts["pods"], 1);
                }
                Err(e) => {
                    assert_eq!(status.status, Some(SourceState::Degraded));
                    assert!(status.detail.as_deref().unwrap().starts_with(e.as_str()));
                }
            }
        }
        // A snapshot without manifest_url.json is degraded, never no HTTP static pods.
        let out = dir.path().join("snap-true");
        std::fs::remove_file(out.join("manifest_url.json")).unwrap();
        let back = read(&out).unwrap();
        assert!(back.view.manifest_url.unwrap().pods.is_err());
        assert_eq!(
            back.sources["manifest_url"].status,
            Some(SourceState::Degraded)
        );
        // Without --manifest-url nothing of it is written or read.
        let out = dir.path().join("snap-none");
        write(
            &out,
            &gathered(),
            &opts(dir.path()),
            Timestamp::now(),
            false,
        )
        .unwrap();
        assert!(!out.join("manifest_url.json").exists());
        let back = read(&out).unwrap();
        assert_eq!(back.view.manifest_url, None);
        assert!(!back.sources.contains_key("manifest_url"));
    }
}
