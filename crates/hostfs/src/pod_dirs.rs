//! The kubelet's pod directories: `<root>/pods/<uid>/` with `volumes/<plugin>/<volume>`
//! beneath (`pkg/kubelet/kubelet_getters.go`, `getPodDir`, `getPodVolumesDir`, pinned at
//! kubernetes v1.31.0).

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use podcoroner_core::PodDir;

use crate::{Error, Result};

/// Reads every `pods/<uid>` directory under the kubelet root directory `kubelet_root`.
///
/// Returns `Ok(None)` when `<kubelet_root>/pods` does not exist (not a kubelet node, or a
/// snapshot without pod directories).
///
/// # Errors
/// [`Error::PodDirReadFailed`] when the directory exists but cannot be listed.
pub fn read(kubelet_root: &Path) -> Result<Option<Vec<PodDir>>> {
    let pods = kubelet_root.join("pods");
    let fail = |path: &Path, error| Error::PodDirReadFailed {
        path: path.to_path_buf(),
        error,
    };
    let entries = match std::fs::read_dir(&pods) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fail(&pods, e)),
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| fail(&pods, e))?;
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let mut entries = names(&path);
        entries.retain(|n| n != "volumes");
        // Symlinks are not followed below the pod directory: the kubelet makes none there.
        let volumes = path.join("volumes");
        let volume_dirs = if is_real_dir(&volumes) {
            names(&volumes)
                .into_iter()
                .filter(|plugin| is_real_dir(&volumes.join(plugin)))
                .flat_map(|plugin| {
                    names(&volumes.join(&plugin))
                        .into_iter()
                        .map(move |v| format!("{plugin}/{v}"))
                })
                .collect()
        } else {
            vec![]
        };
        let modified_at = meta
            .modified()
            .ok()
            .and_then(|t| Timestamp::try_from(t).ok());
        dirs.push(PodDir {
            path: path.display().to_string(),
            uid: entry.file_name().to_string_lossy().into_owned(),
            volume_dirs,
            entries,
            modified_at,
        });
    }
    dirs.sort_by(|a, b| a.uid.cmp(&b.uid));
    Ok(Some(dirs))
}

/// True for a directory that is not a symlink.
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The sorted names in `dir`, hidden ones excluded; empty when it cannot be read.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Recreates the skeleton of `<kubelet_root>/pods` under `to`: every pod directory, its entries
/// as empty directories and its volume directories down to `volumes/<plugin>/<volume>`, with no
/// file contents (secrets stay on the node). A pod directory that is a symbolic link is never
/// followed (the kubelet makes none; one to `/etc` would list its names): it is left out and
/// returned with why. Returns the number of pod directories copied and those left out.
///
/// # Errors
/// [`Error::PodDirReadFailed`] or [`Error::CopyFailed`].
pub fn copy_skeleton(kubelet_root: &Path, to: &Path) -> Result<(usize, Vec<(PathBuf, String)>)> {
    let Some(mut dirs) = read(kubelet_root)? else {
        return Ok((0, vec![]));
    };
    let mut left_out = Vec::new();
    dirs.retain(|d| {
        let real = is_real_dir(Path::new(&d.path));
        if !real {
            left_out.push((
                PathBuf::from(&d.path),
                "a symbolic link, not a directory: not followed into a snapshot".to_string(),
            ));
        }
        real
    });
    for d in &dirs {
        let base: PathBuf = to.join("pods").join(&d.uid);
        let wanted = d
            .entries
            .iter()
            .map(|e| base.join(e))
            .chain(d.volume_dirs.iter().map(|v| base.join("volumes").join(v)))
            .chain(std::iter::once(base.clone()));
        for dir in wanted {
            std::fs::create_dir_all(&dir).map_err(|error| Error::CopyFailed {
                from: d.path.clone().into(),
                to: dir.clone(),
                error,
            })?;
        }
    }
    Ok((dirs.len(), left_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pod_dirs_with_their_volumes() {
        let root = tempfile::tempdir().unwrap();
        let pod = root.path().join("pods/0f0e-uid");
        std::fs::create_dir_all(pod.join("volumes/kubernetes.io~configmap/config")).unwrap();
        std::fs::create_dir_all(pod.join("volumes/kubernetes.io~projected/kube-api-access-x"))
            .unwrap();
        std::fs::create_dir_all(pod.join("containers/app")).unwrap();
        std::fs::write(pod.join("etc-hosts"), "127.0.0.1 localhost").unwrap();
        std::fs::create_dir_all(root.path().join("pods/empty-uid")).unwrap();
        std::fs::write(root.path().join("pods/stray-file"), "").unwrap();

        let dirs = read(root.path()).unwrap().unwrap();
        let uids: Vec<_> = dirs.iter().map(|d| d.uid.as_str()).collect();
        assert_eq!(uids, vec!["0f0e-uid", "empty-uid"]);
        assert_eq!(
            dirs[0].volume_dirs,
            vec![
                "kubernetes.io~configmap/config",
                "kubernetes.io~projected/kube-api-access-x"
            ]
        );
        assert_eq!(dirs[0].entries, vec!["containers", "etc-hosts"]);
        assert!(dirs[1].volume_dirs.is_empty() && dirs[1].entries.is_empty());
        assert!(dirs[0].modified_at.is_some());

        assert_eq!(read(&root.path().join("absent")).unwrap(), None);

        let copy = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc", root.path().join("pods/etc-uid")).unwrap();
        let (copied, left_out) = copy_skeleton(root.path(), copy.path()).unwrap();
        assert_eq!(copied, 2);
        assert_eq!(
            left_out,
            vec![(
                root.path().join("pods/etc-uid"),
                "a symbolic link, not a directory: not followed into a snapshot".to_string()
            )]
        );
        assert!(!copy.path().join("pods/etc-uid").exists());
        let copied = read(copy.path()).unwrap().unwrap();
        assert_eq!(copied[0].volume_dirs, dirs[0].volume_dirs);
        assert_eq!(copied[0].entries, dirs[0].entries);
    }
}
