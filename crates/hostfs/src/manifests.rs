//! The static pod manifest directory, read as the kubelet's file source reads it
//! (`pkg/kubelet/config/file.go`, `extractFromDir` and `extractFromFile`, pinned at
//! kubernetes v1.31.0):
//!
//! - `filepath.Glob(dir, "[^.]*")`: hidden files are ignored; sub-directories are not entered
//!   ("Not recursing into manifest path").
//! - Each file holds one Pod, YAML or JSON (`tryDecodeSinglePod`): it must decode to
//!   `apiVersion: v1`, `kind: Pod`, with a name and at least one container, or the kubelet skips it
//!   ("Can't process manifest file").
//! - The namespace defaults to `default`; the pod name gets `-<node name>` appended
//!   (`applyDefaults`).
//! - A directory that does not exist holds no pods; one that cannot be read is an error.

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::Pod;
use podcoroner_core::{ManifestPod, StaticManifest};
use serde::Deserialize;

use crate::{Error, Result};

/// The files of a manifest directory, in the kubelet's (lexical) order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestDir {
    /// The directory.
    pub path: PathBuf,
    /// False when the directory does not exist (which the kubelet treats as no static pods).
    pub exists: bool,
    /// One entry per regular, non-hidden file.
    pub manifests: Vec<StaticManifest>,
}

/// Reads every manifest in `dir`.
///
/// # Errors
/// [`Error::ManifestDirReadFailed`] when `dir` exists but cannot be listed. A file that cannot be
/// read or parsed is not an error: its [`StaticManifest::pod`] holds the reason.
pub fn read_dir(dir: &Path) -> Result<ManifestDir> {
    let fail = |source| Error::ManifestDirReadFailed { path: dir.to_path_buf(), source };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ManifestDir { path: dir.to_path_buf(), exists: false, manifests: vec![] });
        }
        Err(e) => return Err(fail(e)),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(fail)?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        // `os.Stat` follows symlinks, as the kubelet does.
        match std::fs::metadata(entry.path()) {
            Ok(meta) if meta.is_dir() => continue,
            _ => paths.push(entry.path()),
        }
    }
    paths.sort();
    let manifests = paths
        .into_iter()
        .map(|path| {
            let pod = match std::fs::read(&path) {
                Ok(bytes) => parse(&bytes),
                Err(e) => Err(format!("cannot read file: {e}")),
            };
            StaticManifest { path: path.display().to_string(), pod }
        })
        .collect();
    Ok(ManifestDir { path: dir.to_path_buf(), exists: true, manifests })
}

/// Parses one manifest file's bytes into the static pod the kubelet would create, or the reason
/// it would reject the file (with line and column where the YAML or JSON is malformed).
pub fn parse(bytes: &[u8]) -> Result<ManifestPod, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    // sigs.k8s.io/yaml reads the first document only; JSON is YAML.
    let first = serde_yaml::Deserializer::from_str(text).next().ok_or("empty file")?;
    let value = serde_yaml::Value::deserialize(first).map_err(|e| e.to_string())?;
    if value.is_null() {
        return Err("empty file".to_string());
    }
    let field = |name: &str| value.get(name).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if kind.is_empty() {
        return Err("Object 'Kind' is missing".to_string());
    }
    if api_version != "v1" || kind != "Pod" {
        return Err(format!("invalid pod: the file holds {api_version}/{kind}, not v1/Pod"));
    }
    // Decode again from the text, not the value, so type errors carry their field path and line.
    let doc = serde_yaml::Deserializer::from_str(text).next().ok_or("empty file")?;
    let pod = Pod::deserialize(doc).map_err(|e| format!("invalid pod: {e}"))?;
    let name = pod.metadata.name.unwrap_or_default();
    if name.is_empty() {
        return Err("invalid pod: metadata.name: Required value".to_string());
    }
    if pod.spec.is_none_or(|s| s.containers.is_empty()) {
        return Err("invalid pod: spec.containers: Required value".to_string());
    }
    Ok(ManifestPod {
        name,
        namespace: pod.metadata.namespace.filter(|n| !n.is_empty()).unwrap_or_else(|| "default".to_string()),
        uid: pod.metadata.uid.filter(|u| !u.is_empty()),
    })
}

/// Copies the top-level regular files of `from` (hidden ones too, so the reading rules apply the
/// same way to the copy) into `to`, for a snapshot. A missing `from` copies nothing.
///
/// # Errors
/// [`Error::CopyFailed`] on any I/O error.
pub fn copy_dir(from: &Path, to: &Path) -> Result<usize> {
    let fail = |source| Error::CopyFailed { from: from.to_path_buf(), to: to.to_path_buf(), source };
    std::fs::create_dir_all(to).map_err(fail)?;
    let entries = match std::fs::read_dir(from) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(fail(e)),
    };
    let mut n = 0;
    for entry in entries {
        let entry = entry.map_err(fail)?;
        if std::fs::metadata(entry.path()).map_err(fail)?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).map_err(fail)?;
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd\n    image: registry.k8s.io/etcd:3.5.15-0\n";

    #[test]
    fn parses_the_shapes_the_kubelet_accepts() {
        type Want = Result<(&'static str, &'static str, Option<&'static str>), &'static str>;
        let cases: &[(&str, Want)] = &[
            (POD, Ok(("etcd", "kube-system", None))),
            (
                r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","uid":"u-1"},"spec":{"containers":[{"name":"a","image":"b"}]}}"#,
                Ok(("web", "default", Some("u-1"))),
            ),
            ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: a\n    image: b\n---\nkind: Junk\n", Ok(("x", "default", None))),
            ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  unknownField: 1\nspec:\n  containers:\n  - {name: a, image: b}\n", Ok(("x", "default", None))),
            ("", Err("empty file")),
            ("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n", Err("invalid pod: the file holds v1/Service, not v1/Pod")),
            ("apiVersion: v1\nmetadata:\n  name: x\n", Err("Object 'Kind' is missing")),
            ("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec:\n  containers: [{name: a}]\n", Err("invalid pod: metadata.name: Required value")),
            ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec: {}\n", Err("invalid pod: spec.containers: Required value")),
        ];
        for (text, want) in cases {
            let got = parse(text.as_bytes());
            let got = got.as_ref().map(|p| (p.name.as_str(), p.namespace.as_str(), p.uid.as_deref()));
            assert_eq!(got.map_err(String::as_str), *want, "{text}");
        }
    }

    #[test]
    fn malformed_yaml_names_line_and_column() {
        let err = parse(b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: [a\n").unwrap_err();
        assert!(err.contains("line 5") || err.contains("line 6"), "{err}");
        let err = parse(b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: 7\n").unwrap_err();
        assert!(err.starts_with("invalid pod:") && err.contains("containers"), "{err}");
    }

    #[test]
    fn reads_a_directory_like_the_file_source() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("etcd.yaml"), POD).unwrap();
        std::fs::write(p.join(".etcd.yaml.swp"), "junk").unwrap();
        std::fs::write(p.join("broken.yaml"), "kind: Pod\napiVersion: v1\nmetadata: [").unwrap();
        std::fs::create_dir(p.join("sub")).unwrap();
        std::fs::write(p.join("sub/other.yaml"), POD).unwrap();
        let got = read_dir(p).unwrap();
        assert!(got.exists);
        let names: Vec<_> = got.manifests.iter().map(|m| m.path.rsplit('/').next().unwrap().to_string()).collect();
        assert_eq!(names, vec!["broken.yaml", "etcd.yaml"]);
        assert!(got.manifests[0].pod.is_err());
        assert_eq!(got.manifests[1].pod.as_ref().unwrap().name, "etcd");

        let missing = read_dir(&p.join("nope")).unwrap();
        assert!(!missing.exists && missing.manifests.is_empty());
        let not_dir = read_dir(&p.join("etcd.yaml")).unwrap_err();
        assert!(not_dir.to_string().contains("etcd.yaml"), "{not_dir}");
    }
}
