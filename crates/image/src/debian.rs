//! Debian packages, fetched with `apt-get download` and unpacked with `dpkg-deb`: each package's
//! tree stays in its own directory, so every image file knows the package it came from.

use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{ImageError, Result};

/// One unpacked package.
#[derive(Debug)]
pub(crate) struct Package {
    /// `Package:` from its control file.
    pub name: String,
    /// `Version:`.
    pub version: String,
    /// The control file as `dpkg-deb --field` prints it (what `/var/lib/dpkg/status.d/` holds).
    pub control: String,
    /// Where `dpkg-deb --extract` unpacked it.
    pub tree: PathBuf,
}

/// The unpacked packages, in the order of [`crate::PACKAGES`].
#[derive(Debug)]
pub(crate) struct Packages {
    pub list: Vec<Package>,
}

impl Packages {
    /// Downloads `names` into `work/debs` (one `apt-get download`) and unpacks each into
    /// `work/trees/<name>`.
    ///
    /// # Errors
    /// [`ImageError::CommandFailed`] when apt-get or dpkg-deb fails (with a hint to run
    /// `apt-get update` when apt knows no package lists), [`ImageError::Io`].
    pub(crate) fn fetch(names: &[&str], work: &Path) -> Result<Packages> {
        let debs = work.join("debs");
        let trees = work.join("trees");
        for dir in [&debs, &trees] {
            std::fs::create_dir_all(dir).map_err(|source| ImageError::Io {
                path: dir.clone(),
                source,
            })?;
        }
        let mut apt = Command::new("apt-get");
        apt.arg("download").args(names).current_dir(&debs);
        run(
            &mut apt,
            "; run `apt-get update` first if apt has no package lists (a fresh container does not)",
        )?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(&debs)
            .map_err(|source| ImageError::Io {
                path: debs.clone(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "deb"))
            .collect();
        files.sort();
        let mut list = Vec::with_capacity(names.len());
        for deb in files {
            let control = run(Command::new("dpkg-deb").arg("--field").arg(&deb), "")?;
            let field = |key: &str| {
                control
                    .lines()
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
                    .map(|v| v.trim().to_owned())
                    .unwrap_or_default()
            };
            let name = field("Package");
            let version = field("Version");
            let tree = trees.join(&name);
            run(
                Command::new("dpkg-deb")
                    .arg("--extract")
                    .arg(&deb)
                    .arg(&tree),
                "",
            )?;
            list.push(Package {
                name,
                version,
                control,
                tree,
            });
        }
        list.sort_by_key(|p| names.iter().position(|n| *n == p.name));
        if let Some(missing) = names.iter().find(|n| !list.iter().any(|p| p.name == **n)) {
            return Err(ImageError::CommandFailed {
                command: format!("apt-get download {}", names.join(" ")),
                detail: format!("no .deb for {missing} was downloaded"),
                hint: "",
            });
        }
        Ok(Packages { list })
    }

    /// The package holding `image_path` (absolute, `/`-separated), without following a symbolic
    /// link in its last component: `(package index, path on the build machine, metadata)`.
    pub(crate) fn find(&self, image_path: &str) -> Option<(usize, PathBuf, Metadata)> {
        let rel = image_path.trim_start_matches('/');
        self.list.iter().enumerate().find_map(|(i, p)| {
            let host = p.tree.join(rel);
            // A directory symlink inside a tree (usr/share/doc/libgcc-s1 -> gcc-12-base) would let
            // a lookup through it land in another package's files: only accept real parents.
            let parent_is_real = Path::new(rel).ancestors().skip(1).all(|a| {
                a.as_os_str().is_empty()
                    || std::fs::symlink_metadata(p.tree.join(a)).is_ok_and(|m| m.is_dir())
            });
            if !parent_is_real {
                return None;
            }
            std::fs::symlink_metadata(&host)
                .ok()
                .map(|meta| (i, host, meta))
        })
    }
}

/// Runs `cmd` with no stdin and returns its standard output.
fn run(cmd: &mut Command, hint: &'static str) -> Result<String> {
    let line = format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let out = cmd
        .stdin(Stdio::null())
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|e| ImageError::CommandFailed {
            command: line.clone(),
            detail: format!("cannot run it: {e}"),
            hint: "; the image is built from Debian packages and needs apt-get and dpkg-deb",
        })?;
    if !out.status.success() {
        return Err(ImageError::CommandFailed {
            command: line,
            detail: format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            hint,
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
