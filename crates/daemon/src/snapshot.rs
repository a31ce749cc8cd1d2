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
//! manifests/           the static pod manifest files, as they were (absent: no such directory)
//! kubelet/pods/<uid>/  the pod directory skeleton: entries and volumes/<plugin>/<volume>, no contents
//! logs/kubelet.log     the kubelet log window (--since, default the last 24 h), when --kubelet-log
//! logs/runtime.log     the runtime log window, when --runtime-log
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use jiff::Timestamp;
use podcoroner_core::{CriView, NodeView};
use serde::{Deserialize, Serialize};

use crate::api::{SourceState, SourceStatus};
use crate::gather::{self, Gathered, SourceOptions};

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
    /// The kubelet root directory on the node, for evidence lines.
    pub kubelet_root_dir: String,
    /// Each source's status at collection time.
    pub sources: BTreeMap<String, SourceStatus>,
    /// The modification time of each pod directory on the node, by pod UID (the copies in
    /// `kubelet/pods/` carry the time of the copy, or of a git checkout).
    #[serde(default)]
    pub pod_dir_modified_at: BTreeMap<String, Timestamp>,
}

/// A snapshot read back.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// `meta.json`.
    pub meta: Meta,
    /// The views, with the node's original paths in them.
    pub view: NodeView,
    /// The events of the captured log windows.
    pub events: Vec<podcoroner_core::log_rules::LoggedEvent>,
    /// Each source's status: as collected, with the snapshot's own reading problems.
    pub sources: BTreeMap<String, SourceStatus>,
}

/// Writes `gathered` (read with `opts` at `collected_at`) into the empty or new directory `out`.
///
/// # Errors
/// When `out` exists and is not empty, or on any write error (naming the file).
pub fn write(
    out: &Path,
    gathered: &Gathered,
    opts: &SourceOptions,
    collected_at: Timestamp,
) -> anyhow::Result<()> {
    if out.exists()
        && std::fs::read_dir(out)
            .with_context(|| format!("reading {}", out.display()))?
            .next()
            .is_some()
    {
        bail!("snapshot directory {} is not empty", out.display());
    }
    for sub in ["cri", "api", "kubelet"] {
        std::fs::create_dir_all(out.join(sub))
            .with_context(|| format!("creating {}", out.join(sub).display()))?;
    }
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
        write_json(
            &out.join("api/pods.json"),
            &podcoroner_apiserver::pod_list_json(pods),
        )?;
    }
    if opts.manifest_dir.is_dir() {
        podcoroner_hostfs::manifests::copy_dir(&opts.manifest_dir, &out.join("manifests"))?;
    }
    podcoroner_hostfs::pod_dirs::copy_skeleton(&opts.kubelet_root_dir, &out.join("kubelet"))?;
    let window_start = opts
        .since
        .unwrap_or(collected_at - jiff::SignedDuration::from_hours(24));
    for (source, file) in [
        (&opts.kubelet_log, "kubelet.log"),
        (&opts.runtime_log, "runtime.log"),
    ] {
        if let Some(source) = source {
            std::fs::create_dir_all(out.join("logs"))
                .with_context(|| format!("creating {}", out.join("logs").display()))?;
            podcoroner_logs::copy_window(source, Some(window_start), &out.join("logs").join(file))?;
        }
    }
    let meta = Meta {
        schema: SCHEMA.to_string(),
        node: gathered.view.node_name.clone(),
        collected_at,
        podcoroner_version: env!("CARGO_PKG_VERSION").to_string(),
        manifest_dir: opts.manifest_dir.display().to_string(),
        kubelet_root_dir: opts.kubelet_root_dir.display().to_string(),
        sources: gathered.sources.clone(),
        pod_dir_modified_at: gathered
            .view
            .pod_dirs
            .iter()
            .flatten()
            .filter_map(|d| d.modified_at.map(|t| (d.uid.clone(), t)))
            .collect(),
    };
    write_json(&out.join("meta.json"), &meta)
}

fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let mut bytes =
        serde_json::to_vec_pretty(value).with_context(|| format!("encoding {}", path.display()))?;
    bytes.push(b'\n');
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Reads the snapshot in `dir`.
///
/// A view whose files are absent is unavailable (its rules skip), with the reason recorded at
/// collection time when there is one.
///
/// # Errors
/// A missing or malformed `meta.json`, or a malformed file (naming it, with line and column).
pub fn read(dir: &Path) -> anyhow::Result<Snapshot> {
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
        let c = collected("apiserver");
        let origin = c
            .endpoint
            .clone()
            .or(c.path.clone())
            .unwrap_or_else(|| "api/pods.json".to_string());
        pods.view.origin = format!("{origin} (snapshot)");
        let mut s = SourceStatus::ok();
        s.endpoint = c.endpoint;
        s.path = c.path.or_else(|| Some(api_json.display().to_string()));
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
    sources.insert("manifests".to_string(), gather::manifests_status(&read));
    let manifests = Some(gather::manifest_view(read));

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
    for (name, file, kind) in [
        (
            "kubelet_log",
            "kubelet.log",
            podcoroner_core::log_rules::LogKind::Kubelet,
        ),
        (
            "runtime_log",
            "runtime.log",
            podcoroner_core::log_rules::LogKind::Runtime,
        ),
    ] {
        let path = dir.join("logs").join(file);
        if path.is_file() {
            let source = podcoroner_logs::Source::File(path);
            let read = podcoroner_logs::read(&source, kind, None)?;
            sources.insert(name.to_string(), gather::log_status(&source, &read));
            events.extend(read.events);
        }
    }

    let view = NodeView {
        node_name: meta.node.clone(),
        cri,
        api,
        manifests,
        pod_dirs,
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
