//! Building the real node's binaries from their Go modules: `kubelet` and `kube-apiserver` from
//! `k8s.io/kubernetes` at [`KUBERNETES_VERSION`], `etcd` from `go.etcd.io/etcd/server/v3` at
//! [`ETCD_VERSION`], with plain `go build` in a module generated under the target directory.
//!
//! `k8s.io/kubernetes` requires its staging repositories at `v0.0.0` and maps them to
//! `./staging/...`, which Go ignores in a dependency (kubernetes/kubernetes#79384); the generated
//! module replaces each one with its published tag `v0.<minor>.<patch>`, the set read from the
//! tag's own go.mod so it follows the release. The three main packages are `tool` directives
//! (Go 1.24+), so `go mod tidy` keeps them. The version ldflags are those of
//! `hack/lib/version.sh`, so the binaries report their real version (podcoroner reads it from the
//! kubelet's startup lines).
//!
//! A stamp beside the binaries records the pins, the flags and `go version`: a second build with
//! the same stamp returns at once.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::RealNodeError;

/// The pinned Kubernetes release the kubelet and kube-apiserver are built from (a 1.34 patch:
/// it runs on cgroup v1 without `failCgroupV1: false`, and still falls back to `cgroupDriver`
/// with containerd 1.6, which lacks the `RuntimeConfig` RPC).
pub const KUBERNETES_VERSION: &str = "1.34.4";
/// The pinned etcd release (`go.etcd.io/etcd/server/v3`).
pub const ETCD_VERSION: &str = "3.6.16";
/// The `go` directive of the generated module before `go get` raises it to what the
/// dependencies need; upstream's go.mod also has `godebug default=go1.24`.
const GO_DIRECTIVE: &str = "1.24.0";

const KUBELET_PKG: &str = "k8s.io/kubernetes/cmd/kubelet";
const APISERVER_PKG: &str = "k8s.io/kubernetes/cmd/kube-apiserver";
const ETCD_PKG: &str = "go.etcd.io/etcd/server/v3";

/// The three binaries in one directory.
#[derive(Debug, Clone)]
pub struct Binaries {
    dir: PathBuf,
}

impl Binaries {
    /// Where `cargo xtask real-node build` puts them: `$PODCORONER_REAL_NODE_BIN` when set, else
    /// `<target dir>/real-node/bin` (`$CARGO_TARGET_DIR` or the workspace's `target/`).
    pub fn default_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("PODCORONER_REAL_NODE_BIN") {
            return PathBuf::from(dir);
        }
        work_root().join("bin")
    }

    /// The binaries in [`Binaries::default_dir`], checked: all three present and built from the
    /// pinned versions (the stamp `cargo xtask real-node build` writes).
    ///
    /// # Errors
    ///
    /// [`RealNodeError::BinariesMissing`] naming what is missing and how to build it.
    pub fn find() -> Result<Binaries, RealNodeError> {
        Binaries::in_dir(&Binaries::default_dir())
    }

    /// As [`Binaries::find`] for `dir`.
    ///
    /// # Errors
    ///
    /// [`RealNodeError::BinariesMissing`].
    pub fn in_dir(dir: &Path) -> Result<Binaries, RealNodeError> {
        let bins = Binaries {
            dir: dir.to_path_buf(),
        };
        let missing: Vec<String> = [bins.kubelet(), bins.kube_apiserver(), bins.etcd()]
            .iter()
            .filter(|p| !p.is_file())
            .map(|p| p.display().to_string())
            .collect();
        if !missing.is_empty() {
            return Err(RealNodeError::BinariesMissing {
                reason: format!("{} not found", missing.join(", ")),
            });
        }
        let stamp = std::fs::read_to_string(dir.join(STAMP)).unwrap_or_default();
        if !stamp.starts_with(&pins()) {
            return Err(RealNodeError::BinariesMissing {
                reason: format!(
                    "the binaries in {} were not built from kubernetes v{KUBERNETES_VERSION} and etcd v{ETCD_VERSION}",
                    dir.display()
                ),
            });
        }
        Ok(bins)
    }

    /// The directory holding them.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `kubelet`.
    pub fn kubelet(&self) -> PathBuf {
        self.dir.join("kubelet")
    }

    /// `kube-apiserver`.
    pub fn kube_apiserver(&self) -> PathBuf {
        self.dir.join("kube-apiserver")
    }

    /// `etcd`.
    pub fn etcd(&self) -> PathBuf {
        self.dir.join("etcd")
    }
}

const STAMP: &str = ".pins";

/// `<target dir>/real-node`.
pub(crate) fn work_root() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || {
            // crates/test-support → the workspace root.
            let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
            crate_dir
                .parent()
                .and_then(Path::parent)
                .unwrap_or(crate_dir)
                .join("target")
        },
        PathBuf::from,
    );
    target.join("real-node")
}

/// The version ldflags of `hack/lib/version.sh` (and `-s -w`).
fn ldflags() -> String {
    let minor = KUBERNETES_VERSION.split('.').nth(1).unwrap_or("0");
    format!(
        "-s -w -X k8s.io/component-base/version.gitVersion=v{KUBERNETES_VERSION} \
         -X k8s.io/component-base/version.gitMajor=1 \
         -X k8s.io/component-base/version.gitMinor={minor} \
         -X k8s.io/client-go/pkg/version.gitVersion=v{KUBERNETES_VERSION}"
    )
}

/// What the stamp starts with: the pins and the flags.
fn pins() -> String {
    format!(
        "kubernetes v{KUBERNETES_VERSION}\netcd v{ETCD_VERSION}\ngo directive {GO_DIRECTIVE}\n\
         build -trimpath -ldflags {}\n",
        ldflags()
    )
}

/// Builds the binaries into [`Binaries::default_dir`] (the module in `<target>/real-node/go`),
/// or returns at once when the stamp there matches the pins, the flags and `go version`.
/// `progress` receives each step (the commands run), for a person watching.
///
/// Needs `go` (1.24 or newer) in `PATH` and the Go module proxy (or a filled `GOMODCACHE`).
/// `GOTOOLCHAIN=local`, so no other toolchain is downloaded.
///
/// # Errors
///
/// [`RealNodeError::PrerequisiteMissing`] without `go`; [`RealNodeError::CommandFailed`] naming
/// the go command and its output; [`RealNodeError::Io`].
pub fn build(progress: &mut dyn FnMut(&str)) -> Result<Binaries, RealNodeError> {
    let bin = Binaries::default_dir();
    let module = work_root().join("go");
    let go_version = go(&module, &["version"], progress, false)?;
    let stamp = format!("{}{}\n", pins(), go_version.trim());
    if std::fs::read_to_string(bin.join(STAMP)).is_ok_and(|s| s == stamp)
        && let Ok(found) = Binaries::in_dir(&bin)
    {
        progress(&format!(
            "kubelet, kube-apiserver v{KUBERNETES_VERSION} and etcd v{ETCD_VERSION} are up to date in {}",
            bin.display()
        ));
        return Ok(found);
    }
    for dir in [&module, &bin] {
        std::fs::create_dir_all(dir).map_err(|source| RealNodeError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let _ = std::fs::remove_file(bin.join(STAMP));
    for file in ["go.mod", "go.sum"] {
        let _ = std::fs::remove_file(module.join(file));
    }
    go(
        &module,
        &["mod", "init", "example.invalid/podcoroner-real-node"],
        progress,
        true,
    )?;
    go(
        &module,
        &["mod", "edit", &format!("-go={GO_DIRECTIVE}")],
        progress,
        true,
    )?;
    let info = go(
        &module,
        &[
            "mod",
            "download",
            "-json",
            &format!("k8s.io/kubernetes@v{KUBERNETES_VERSION}"),
        ],
        progress,
        true,
    )?;
    let info: serde_json::Value =
        serde_json::from_str(&info).map_err(|e| RealNodeError::CommandFailed {
            command: "go mod download -json k8s.io/kubernetes".to_owned(),
            output: format!("not JSON: {e}"),
        })?;
    let upstream_mod = info["GoMod"]
        .as_str()
        .ok_or_else(|| RealNodeError::CommandFailed {
            command: "go mod download -json k8s.io/kubernetes".to_owned(),
            output: format!("no GoMod in {info}"),
        })?;
    let upstream = std::fs::read_to_string(upstream_mod).map_err(|source| RealNodeError::Io {
        path: PathBuf::from(upstream_mod),
        source,
    })?;
    let staging = staging_modules(&upstream);
    if staging.is_empty() {
        return Err(RealNodeError::CommandFailed {
            command: format!("reading {upstream_mod}"),
            output: "no `k8s.io/... => ./staging/...` replace directives".to_owned(),
        });
    }
    let tag = format!(
        "v0.{}",
        KUBERNETES_VERSION.split_once('.').map_or("", |(_, r)| r)
    );
    let mut edit = vec!["mod".to_owned(), "edit".to_owned()];
    edit.extend(staging.iter().map(|m| format!("-replace={m}={m}@{tag}")));
    let edit: Vec<&str> = edit.iter().map(String::as_str).collect();
    go(&module, &edit, progress, true)?;
    let go_mod = module.join("go.mod");
    let mut text = std::fs::read_to_string(&go_mod).map_err(|source| RealNodeError::Io {
        path: go_mod.clone(),
        source,
    })?;
    text.push_str("godebug default=go1.24\n");
    std::fs::write(&go_mod, text).map_err(|source| RealNodeError::Io {
        path: go_mod.clone(),
        source,
    })?;
    go(
        &module,
        &[
            "get",
            "-tool",
            &format!("{KUBELET_PKG}@v{KUBERNETES_VERSION}"),
            &format!("{APISERVER_PKG}@v{KUBERNETES_VERSION}"),
            &format!("{ETCD_PKG}@v{ETCD_VERSION}"),
        ],
        progress,
        true,
    )?;
    let out = format!("{}/", bin.display());
    let ld = ldflags();
    go(
        &module,
        &[
            "build",
            "-trimpath",
            "-ldflags",
            &ld,
            "-o",
            &out,
            KUBELET_PKG,
            APISERVER_PKG,
        ],
        progress,
        true,
    )?;
    let etcd = bin.join("etcd");
    go(
        &module,
        &[
            "build",
            "-trimpath",
            "-ldflags",
            "-s -w",
            "-o",
            &etcd.to_string_lossy(),
            ETCD_PKG,
        ],
        progress,
        true,
    )?;
    std::fs::write(bin.join(STAMP), stamp).map_err(|source| RealNodeError::Io {
        path: bin.join(STAMP),
        source,
    })?;
    Binaries::in_dir(&bin)
}

/// The staging modules of a k8s.io/kubernetes go.mod: every `k8s.io/X => ./staging/...`, in a
/// `replace ( … )` block or on a `replace` line.
pub(crate) fn staging_modules(go_mod: &str) -> Vec<String> {
    go_mod
        .lines()
        .filter_map(|line| {
            let line = line.trim().trim_start_matches("replace").trim();
            let (module, target) = line.split_once("=>")?;
            let module = module.split_whitespace().next()?;
            (module.starts_with("k8s.io/") && target.trim().starts_with("./staging/"))
                .then(|| module.to_owned())
        })
        .collect()
}

/// Runs `go args…` in `dir` (`GOTOOLCHAIN=local`, `GOFLAGS=-buildvcs=false`: the module sits inside the
/// repository's checkout, whose commit must not enter the binaries); returns its stdout.
fn go(
    dir: &Path,
    args: &[&str],
    progress: &mut dyn FnMut(&str),
    announce: bool,
) -> Result<String, RealNodeError> {
    if super::find_in_path("go").is_none() {
        return Err(RealNodeError::PrerequisiteMissing {
            what: "go (1.24 or newer) in PATH".to_owned(),
            hint: "install Go from go.dev/dl or the Debian package golang-1.24 or newer; the build fetches modules through the Go module proxy".to_owned(),
        });
    }
    if announce {
        progress(&format!("$ (cd {}) go {}", dir.display(), args.join(" ")));
    }
    let start = std::time::Instant::now();
    let out = Command::new("go")
        .args(args)
        .current_dir(if dir.is_dir() { dir } else { Path::new("/") })
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-buildvcs=false")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| RealNodeError::CommandFailed {
            command: format!("go {}", args.join(" ")),
            output: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(RealNodeError::CommandFailed {
            command: format!("go {} (in {})", args.join(" "), dir.display()),
            output: format!(
                "{}: {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    if announce && start.elapsed().as_secs() >= 5 {
        progress(&format!("  took {:.0?}", start.elapsed()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_modules_from_block_and_lines() {
        let go_mod = "module k8s.io/kubernetes\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/kubelet => ./staging/src/k8s.io/kubelet\n\tgithub.com/x/y => github.com/x/y v1.0.0\n)\nreplace k8s.io/kms => ./staging/src/k8s.io/kms\n";
        assert_eq!(
            staging_modules(go_mod),
            ["k8s.io/api", "k8s.io/kubelet", "k8s.io/kms"]
        );
    }

    #[test]
    fn ldflags_name_the_pinned_version() {
        let ld = ldflags();
        assert!(ld.contains(&format!(
            "k8s.io/component-base/version.gitVersion=v{KUBERNETES_VERSION}"
        )));
        assert!(ld.contains("k8s.io/component-base/version.gitMinor=34"));
    }
}
