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
//! - Only regular files are read, at most 10 MiB each (`maxConfigLength`); anything else (a FIFO,
//!   a device) makes the kubelet fail the whole directory ("manifest path ... is not a directory
//!   or file") and is reported here without being opened, so it can never block or flood.
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
    let fail = |error| Error::ManifestDirReadFailed {
        path: dir.to_path_buf(),
        error,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ManifestDir {
                path: dir.to_path_buf(),
                exists: false,
                manifests: vec![],
            });
        }
        Err(e) => return Err(fail(e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(fail)?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        // `os.Stat` follows symlinks, as the kubelet does.
        let pod = match std::fs::metadata(entry.path()) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(meta) if meta.is_file() => None,
            Ok(meta) => Some(Err(format!(
                "a {}, not a directory or regular file: the kubelet stops reading the whole \
                 directory (\"manifest path is not a directory or file\")",
                file_kind(meta.file_type())
            ))),
            Err(e) => Some(Err(format!("cannot stat: {e}"))),
        };
        found.push((entry.path(), pod));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let manifests = found
        .into_iter()
        .map(|(path, pod)| {
            let pod = pod.unwrap_or_else(|| match read_at_most(&path, MAX_CONFIG_BYTES) {
                Ok(bytes) => parse(&bytes),
                Err(e) => Err(e),
            });
            StaticManifest {
                path: path.display().to_string(),
                pod,
            }
        })
        .collect();
    Ok(ManifestDir {
        path: dir.to_path_buf(),
        exists: true,
        manifests,
    })
}

/// A person's name for a special file type.
fn file_kind(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    match () {
        _ if t.is_fifo() => "named pipe (FIFO)",
        _ if t.is_socket() => "unix socket",
        _ if t.is_char_device() => "character device",
        _ if t.is_block_device() => "block device",
        _ => "special file",
    }
}

/// The kubelet's limit on a manifest's size (`pkg/kubelet/config/file.go`, `maxConfigLength`).
pub const MAX_CONFIG_BYTES: u64 = 10 * 1024 * 1024;

/// Reads at most `max_bytes` of `path`, or says the file is larger, as `utilio.ReadAtMost`.
fn read_at_most(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read file: {e}"))?;
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read file: {e}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "the file is larger than the kubelet's limit of {} MiB (maxConfigLength): it is never read",
            max_bytes / (1024 * 1024)
        ));
    }
    Ok(bytes)
}

/// Parses one manifest file's bytes into the static pod the kubelet would create, or the reason
/// it would reject the file (with line and column where the YAML or JSON is malformed).
pub fn parse(bytes: &[u8]) -> Result<ManifestPod, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    // sigs.k8s.io/yaml reads the first document only; JSON is YAML.
    let first = serde_yaml::Deserializer::from_str(text)
        .next()
        .ok_or("empty file")?;
    let value = serde_yaml::Value::deserialize(first).map_err(|e| e.to_string())?;
    if value.is_null() {
        return Err("empty file".to_string());
    }
    let field = |name: &str| {
        value
            .get(name)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if kind.is_empty() {
        return Err("Object 'Kind' is missing".to_string());
    }
    if api_version != "v1" || kind != "Pod" {
        return Err(format!(
            "invalid pod: the file holds {api_version}/{kind}, not v1/Pod"
        ));
    }
    // Decode again from the text, not the value, so type errors carry their field path and line.
    let doc = serde_yaml::Deserializer::from_str(text)
        .next()
        .ok_or("empty file")?;
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
        namespace: pod
            .metadata
            .namespace
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string()),
        uid: pod.metadata.uid.filter(|u| !u.is_empty()),
    })
}

/// Copies the top-level regular files of `from` (hidden ones too, so the reading rules apply the
/// same way to the copy) into `to`, for a snapshot. A missing `from` copies nothing.
///
/// # Errors
/// [`Error::CopyFailed`] on any I/O error.
pub fn copy_dir(from: &Path, to: &Path) -> Result<usize> {
    let fail = |error| Error::CopyFailed {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        error,
    };
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
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: a\n    image: b\n---\nkind: Junk\n",
                Ok(("x", "default", None)),
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  unknownField: 1\nspec:\n  containers:\n  - {name: a, image: b}\n",
                Ok(("x", "default", None)),
            ),
            ("", Err("empty file")),
            (
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n",
                Err("invalid pod: the file holds v1/Service, not v1/Pod"),
            ),
            (
                "apiVersion: v1\nmetadata:\n  name: x\n",
                Err("Object 'Kind' is missing"),
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata: {}\nspec:\n  containers: [{name: a}]\n",
                Err("invalid pod: metadata.name: Required value"),
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec: {}\n",
                Err("invalid pod: spec.containers: Required value"),
            ),
        ];
        for (text, want) in cases {
            let got = parse(text.as_bytes());
            let got = got
                .as_ref()
                .map(|p| (p.name.as_str(), p.namespace.as_str(), p.uid.as_deref()));
            assert_eq!(got.map_err(String::as_str), *want, "{text}");
        }
    }

    #[test]
    fn malformed_yaml_names_line_and_column() {
        let err =
            parse(b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: [a\n").unwrap_err();
        assert!(err.contains("line 5") || err.contains("line 6"), "{err}");
        let err =
            parse(b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: 7\n")
                .unwrap_err();
        assert!(
            err.starts_with("invalid pod:") && err.contains("containers"),
            "{err}"
        );
    }

    #[test]
    fn reads_a_directory_like_the_file_source() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("etcd.yaml"), POD).unwrap();
        std::fs::write(p.join(".etcd.yaml.swp"), "junk").unwrap();
        std::fs::write(
            p.join("broken.yaml"),
            "kind: Pod\napiVersion: v1\nmetadata: [",
        )
        .unwrap();
        std::fs::create_dir(p.join("sub")).unwrap();
        std::fs::write(p.join("sub/other.yaml"), POD).unwrap();
        let status = std::process::Command::new("mkfifo")
            .arg(p.join("fifo.yaml"))
            .status()
            .unwrap();
        assert!(status.success());
        std::os::unix::fs::symlink("/dev/zero", p.join("zero.yaml")).unwrap();
        let big = format!("{POD}{}", "# padding\n".repeat(1_100_000));
        std::fs::write(p.join("huge.yaml"), big).unwrap();
        let got = read_dir(p).unwrap();
        assert!(got.exists);
        let errors: Vec<(String, String)> = got
            .manifests
            .iter()
            .filter_map(|m| {
                m.pod
                    .as_ref()
                    .err()
                    .map(|e| (m.path.rsplit('/').next().unwrap().to_string(), e.clone()))
            })
            .collect();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(
            errors[1].0 == "fifo.yaml"
                && errors[1]
                    .1
                    .starts_with("a named pipe (FIFO), not a directory or regular file"),
            "{errors:?}"
        );
        assert!(
            errors[2].0 == "huge.yaml"
                && errors[2]
                    .1
                    .contains("larger than the kubelet's limit of 10 MiB"),
            "{errors:?}"
        );
        assert!(
            errors[3].0 == "zero.yaml"
                && errors[3]
                    .1
                    .starts_with("a character device, not a directory or regular file"),
            "{errors:?}"
        );
        for name in ["fifo.yaml", "zero.yaml", "huge.yaml"] {
            std::fs::remove_file(p.join(name)).unwrap();
        }
        let got = read_dir(p).unwrap();
        let names: Vec<_> = got
            .manifests
            .iter()
            .map(|m| m.path.rsplit('/').next().unwrap().to_string())
            .collect();
        assert_eq!(names, vec!["broken.yaml", "etcd.yaml"]);
        assert!(got.manifests[0].pod.is_err());
        assert_eq!(got.manifests[1].pod.as_ref().unwrap().name, "etcd");

        let missing = read_dir(&p.join("nope")).unwrap();
        assert!(!missing.exists && missing.manifests.is_empty());
        let not_dir = read_dir(&p.join("etcd.yaml")).unwrap_err();
        assert!(not_dir.to_string().contains("etcd.yaml"), "{not_dir}");
    }
}
