//! `cargo xtask`: podcoroner's repository automation (the alias is in `.cargo/config.toml`).
//!
//! Tasks:
//!
//! - `cargo xtask test [ARGS…]`: installs what the real-containerd tests need when it is missing
//!   (`apt-get update`, then `apt-get install -y containerd runc containernetworking-plugins`,
//!   plus `gcc libc6-dev` for the lab's static pause binary), builds the release image as
//!   `cargo xtask image` does and the real node's binaries as `cargo xtask real-node build` does
//!   (Go 1.24+ must be in PATH), then runs `cargo test --workspace ARGS…` with
//!   `PODCORONER_IMAGE_ARCHIVE` naming that image (crates/cli/tests/image.rs runs it in
//!   containerd) and exits with the tests' status. Works unattended (no stdin, `CI=true`) on a
//!   fresh Debian machine with only the Rust toolchain, as root.
//! - `cargo xtask image [--out PATH | --rootfs-dir DIR] [--binary PATH] [--reference REF]`:
//!   builds the container image without a Docker engine (crates/image): `cargo build --release`,
//!   `strip --strip-debug` of a copy of the binary, the distroless root filesystem from Debian
//!   packages, and an OCI image archive (default `target/image/podcoroner-<version>-<arch>.oci.tar`,
//!   reference `ghcr.io/podcoroner/podcoroner:<version>`), or with `--rootfs-dir` the bare tree
//!   (the Dockerfile's build stage). File times and `created` are `SOURCE_DATE_EPOCH`, else the
//!   commit time, so a rebuild of the same commit gives the same digest.
//!
//! - `cargo xtask real-node build`: builds kubelet and kube-apiserver (Kubernetes
//!   `podcoroner_test_support::real_node::KUBERNETES_VERSION`) and etcd (`ETCD_VERSION`) from
//!   their Go modules in a module generated under `target/real-node/go`, into
//!   `target/real-node/bin`; seconds when the pins are unchanged (docs/real-node.md).
//! - `cargo xtask real-node up DIR [--log-format text|json]`: starts a private containerd, etcd,
//!   kube-apiserver and a kubelet for node `lab-node` in DIR (building the binaries when
//!   missing), waits until the node is Ready, writes `DIR/env.json` and leaves them running.
//! - `cargo xtask real-node down DIR`: stops them by PID and restores what the kubelet changed.
//!
//! Exit codes: the test run's own code; 1 when preparing or building failed; 64 for an unknown
//! task or a bad argument.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <task> [args…]

tasks:
  test [ARGS…]   install the containerd lab's prerequisites if missing (apt-get, as root),
                 build the image and the real node's binaries, then run `cargo test --workspace ARGS…`
  image [--out PATH | --rootfs-dir DIR] [--binary PATH] [--reference REF]
                 build the container image as an OCI archive (no Docker engine needed):
                 default target/image/podcoroner-<version>-<arch>.oci.tar
  real-node build
                 build kubelet, kube-apiserver and etcd from their Go modules (pinned versions)
                 into target/real-node/bin; seconds when already built
  real-node up DIR [--log-format text|json]
                 start containerd, etcd, kube-apiserver and a kubelet (node lab-node) in DIR,
                 wait until Ready, write DIR/env.json, leave them running
  real-node down DIR
                 stop the node in DIR by PID, restore the sysctls the kubelet changed
  help           print this help";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let res = match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
        Some("image") => match ImageArgs::parse(&args[1..]) {
            Ok(image_args) => image(&image_args).map(|_| ExitCode::SUCCESS),
            Err(message) => {
                eprintln!("xtask image: {message}\n\n{USAGE}");
                Ok(ExitCode::from(64))
            }
        },
        Some("real-node") => real_node(&args[1..]),
        Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        Some(other) => {
            eprintln!("xtask: unknown task {other:?}\n\n{USAGE}");
            Ok(ExitCode::from(64))
        }
        None => {
            eprintln!("{USAGE}");
            Ok(ExitCode::from(64))
        }
    };
    res.unwrap_or_else(|error| {
        eprintln!("xtask: error: {error:#}");
        ExitCode::FAILURE
    })
}

// === test ===

/// A prerequisite of the containerd lab and the Debian package that provides it.
struct Prerequisite {
    what: &'static str,
    package: &'static str,
    present: fn() -> bool,
}

const PREREQUISITES: &[Prerequisite] = &[
    Prerequisite {
        what: "containerd",
        package: "containerd",
        present: || in_path("containerd"),
    },
    Prerequisite {
        what: "ctr",
        package: "containerd",
        present: || in_path("ctr"),
    },
    Prerequisite {
        what: "runc",
        package: "runc",
        present: || in_path("runc"),
    },
    Prerequisite {
        what: "/usr/lib/cni/{bridge,host-local,loopback}",
        package: "containernetworking-plugins",
        present: || {
            ["bridge", "host-local", "loopback"]
                .iter()
                .all(|p| Path::new("/usr/lib/cni").join(p).is_file())
        },
    },
    Prerequisite {
        what: "gcc",
        package: "gcc",
        present: || in_path("gcc"),
    },
    Prerequisite {
        what: "libc.a (for gcc -static)",
        package: "libc6-dev",
        present: static_libc,
    },
    Prerequisite {
        what: "openssl (the real node's service account key)",
        package: "openssl",
        present: || in_path("openssl"),
    },
    Prerequisite {
        what: "chromium (the daemon's page, rendered headless)",
        package: "chromium",
        present: || in_path("chromium"),
    },
    Prerequisite {
        what: "kubectl (`kubectl kustomize` in the deploy tests, `kubectl podcoroner` in the fleet test)",
        package: "kubernetes-client",
        present: || in_path("kubectl"),
    },
    Prerequisite {
        what: "ip (the fleet tests' agent addresses on lo)",
        package: "iproute2",
        present: || in_path("ip"),
    },
    Prerequisite {
        what: "/lib/systemd/systemd-journal-remote (writes the real journals the journald tests read)",
        package: "systemd-journal-remote",
        present: || Path::new("/lib/systemd/systemd-journal-remote").is_file(),
    },
];

fn test(args: &[String]) -> anyhow::Result<ExitCode> {
    ensure_prerequisites()?;
    warn_if_disk_short(&target_dir(&workspace_root()));
    let archive = image(&ImageArgs::default()).context("building the image for its test")?;
    // The real-node tests (crates/cli/tests/real_node.rs) need kubelet, kube-apiserver and etcd:
    // built once from their Go modules, then seconds. Without Go this fails, never skips.
    build_real_node()?;
    let cargo = cargo();
    let root = workspace_root();
    println!(
        "xtask: $ PODCORONER_IMAGE_ARCHIVE={} cargo test --workspace {}",
        archive.display(),
        args.join(" ")
    );
    let status = Command::new(&cargo)
        .args(["test", "--workspace"])
        .args(args)
        .env("PODCORONER_IMAGE_ARCHIVE", &archive)
        .current_dir(&root)
        .stdin(Stdio::null())
        .status()
        .with_context(|| format!("running {cargo} test in {}", root.display()))?;
    println!("xtask: cargo test exited with {status}");
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

// === real-node ===

fn real_node(args: &[String]) -> anyhow::Result<ExitCode> {
    use podcoroner_test_support::real_node;
    let usage = |message: &str| {
        eprintln!("xtask real-node: {message}\n\n{USAGE}");
        Ok(ExitCode::from(64))
    };
    match args.first().map(String::as_str) {
        Some("build") if args.len() == 1 => {
            build_real_node()?;
            Ok(ExitCode::SUCCESS)
        }
        Some("up") => {
            let Some(dir) = args.get(1) else {
                return usage("up needs DIR");
            };
            let mut options = real_node::Options::default();
            let mut rest = args[2..].iter();
            while let Some(flag) = rest.next() {
                match (flag.as_str(), rest.next().map(String::as_str)) {
                    ("--log-format", Some("text")) => {
                        options.log_format = real_node::LogFormat::Text
                    }
                    ("--log-format", Some("json")) => {
                        options.log_format = real_node::LogFormat::Json
                    }
                    _ => return usage(&format!("unknown argument {flag:?}")),
                }
            }
            build_real_node()?;
            let start = std::time::Instant::now();
            println!("xtask: starting containerd, etcd, kube-apiserver and the kubelet in {dir}");
            let node = real_node::RealNode::up(Path::new(dir), &options)?;
            let env = node.detach();
            println!(
                "xtask: node {} is Ready after {:.1?} ({}); {}/env.json:\n{}",
                env.node_name,
                start.elapsed(),
                env.kubelet_version,
                dir,
                serde_json::to_string_pretty(&env)?
            );
            println!(
                "xtask: diagnose it with\n  cargo run -p podcoroner -- diagnose --runtime-endpoint {} --kubeconfig {} --node-name {} --manifest-dir {} --kubelet-root-dir {} --kubelet-log {}\nxtask: stop it with `cargo xtask real-node down {dir}`",
                env.runtime_endpoint,
                env.kubeconfig.display(),
                env.node_name,
                env.manifest_dir.display(),
                env.kubelet_root_dir.display(),
                env.kubelet_log.display(),
            );
            Ok(ExitCode::SUCCESS)
        }
        Some("down") if args.len() == 2 => {
            real_node::down(Path::new(&args[1]))?;
            println!(
                "xtask: the node in {} is down (its logs stay there)",
                args[1]
            );
            Ok(ExitCode::SUCCESS)
        }
        _ => usage("expected `build`, `up DIR` or `down DIR`"),
    }
}

/// `cargo xtask real-node build`: the binaries, built when missing or from other pins.
fn build_real_node() -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let bins = podcoroner_test_support::real_node::build(&mut |line| println!("xtask: {line}"))
        .context("building the real node's binaries")?;
    println!(
        "xtask: kubelet, kube-apiserver and etcd in {} ({:.1?})",
        bins.dir().display(),
        start.elapsed()
    );
    Ok(())
}

// === image ===

/// The arguments of `cargo xtask image`.
#[derive(Debug, Default)]
struct ImageArgs {
    /// `--out PATH`: the archive to write.
    out: Option<PathBuf>,
    /// `--rootfs-dir DIR`: write the bare tree instead of an archive.
    rootfs_dir: Option<PathBuf>,
    /// `--binary PATH`: use this podcoroner binary instead of a release build.
    binary: Option<PathBuf>,
    /// `--reference REF`: the image name and tag.
    reference: Option<String>,
}

impl ImageArgs {
    fn parse(args: &[String]) -> Result<ImageArgs, String> {
        let mut out = ImageArgs::default();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            match flag.as_str() {
                "--out" => out.out = Some(value()?.into()),
                "--rootfs-dir" => out.rootfs_dir = Some(value()?.into()),
                "--binary" => out.binary = Some(value()?.into()),
                "--reference" => out.reference = Some(value()?),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if out.out.is_some() && out.rootfs_dir.is_some() {
            return Err("--out and --rootfs-dir exclude each other".to_owned());
        }
        Ok(out)
    }
}

/// Builds the image; returns the archive (or root filesystem directory) written.
fn image(args: &ImageArgs) -> anyhow::Result<PathBuf> {
    let root = workspace_root();
    let version = env!("CARGO_PKG_VERSION");
    let binary = match &args.binary {
        Some(binary) => binary.clone(),
        None => {
            println!("xtask: $ cargo build --release --locked -p podcoroner");
            let status = Command::new(cargo())
                .args(["build", "--release", "--locked", "-p", "podcoroner"])
                .current_dir(&root)
                .stdin(Stdio::null())
                .status()
                .context("running cargo build")?;
            if !status.success() {
                bail!("cargo build --release -p podcoroner failed with {status}");
            }
            target_dir(&root).join("release/podcoroner")
        }
    };
    let scratch = tempfile::tempdir().context("creating a temporary directory")?;
    let stripped = scratch.path().join("podcoroner");
    if in_path("strip") {
        // Symbols stay (backtraces name functions); line tables and debug info go: 120 → 27 MB.
        run(
            "strip",
            &[
                "--strip-debug",
                "-o",
                &stripped.to_string_lossy(),
                &binary.to_string_lossy(),
            ],
        )?;
    } else {
        println!("xtask: warning: no `strip` (binutils): the binary goes in with its debug info");
        std::fs::copy(&binary, &stripped)
            .with_context(|| format!("copying {}", binary.display()))?;
    }
    if is_root() && !apt_has_lists() {
        run("apt-get", &["update"])?;
    }
    println!(
        "xtask: assembling the root filesystem from {} Debian packages",
        podcoroner_image::PACKAGES.len()
    );
    let fs = podcoroner_image::Rootfs::from_debian(&stripped)?;
    if let Some(dir) = &args.rootfs_dir {
        fs.write_to_dir(dir)?;
        println!("xtask: wrote the root filesystem to {}", dir.display());
        return Ok(dir.clone());
    }
    let reference = args
        .reference
        .clone()
        .unwrap_or_else(|| format!("ghcr.io/podcoroner/podcoroner:{version}"));
    let out = args.out.clone().unwrap_or_else(|| {
        target_dir(&root).join(format!(
            "image/podcoroner-{version}-{}.oci.tar",
            podcoroner_image::oci_arch()
        ))
    });
    let meta = podcoroner_image::ImageMetadata {
        reference: reference.clone(),
        version: version.to_owned(),
        revision: git(&root, &["rev-parse", "HEAD"]),
        source: Some(env!("CARGO_PKG_REPOSITORY").to_owned()).filter(|s| !s.is_empty()),
        created_unix_seconds: source_date_epoch(&root),
    };
    let summary = podcoroner_image::write_oci_archive(&fs, &meta, &out)?;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!(
        "xtask: wrote {} ({:.1} MiB): {reference}\n  manifest {}\n  config   {}\n  layer    {} ({:.1} MiB, {:.1} MiB unpacked, {} entries)\n  packages {}",
        out.display(),
        mib(summary.archive_bytes),
        summary.manifest_digest,
        summary.config_digest,
        summary.layer_digest,
        mib(summary.layer_bytes),
        mib(summary.uncompressed_layer_bytes),
        summary.entries,
        fs.packages()
            .iter()
            .map(|(p, v)| format!("{p}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    );
    println!(
        "xtask: load it with `docker load -i {0}`, `podman load -i {0}`, \
         `ctr -n k8s.io images import {0}`, or push it with `skopeo copy oci-archive:{0} docker://REGISTRY/podcoroner:{version}`",
        out.display()
    );
    Ok(out)
}

/// `SOURCE_DATE_EPOCH`, else the time of the `HEAD` commit, else 0.
fn source_date_epoch(root: &Path) -> i64 {
    std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .or_else(|| git(root, &["log", "-1", "--format=%ct"]))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

/// Whether apt has any package list (a fresh Debian container has none until `apt-get update`).
fn apt_has_lists() -> bool {
    std::fs::read_dir("/var/lib/apt/lists").is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().contains("_Packages"))
    })
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

fn ensure_prerequisites() -> anyhow::Result<()> {
    println!("xtask: checking the containerd lab prerequisites");
    let missing = missing_prerequisites();
    if missing.is_empty() {
        println!("xtask: containerd, runc, ctr, CNI plugins and gcc are installed");
        if !is_root() {
            println!(
                "xtask: warning: not root; the containerd lab tests will fail (they need root)"
            );
        }
        return Ok(());
    }
    let mut packages: Vec<&str> = missing.iter().map(|p| p.package).collect();
    packages.dedup();
    println!(
        "xtask: missing {}",
        missing
            .iter()
            .map(|p| p.what)
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !is_root() {
        bail!(
            "installing the missing packages needs root: run `cargo xtask test` as root, or `apt-get install -y {}`",
            packages.join(" ")
        );
    }
    if !in_path("apt-get") {
        bail!(
            "apt-get not found: install {} with this system's package manager",
            packages.join(" ")
        );
    }
    run("apt-get", &["update"])?;
    let mut install = vec!["install", "-y"];
    install.extend(&packages);
    run("apt-get", &install)?;
    let still_missing = missing_prerequisites();
    if !still_missing.is_empty() {
        bail!(
            "still missing after apt-get install: {}",
            still_missing
                .iter()
                .map(|p| p.what)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

fn missing_prerequisites() -> Vec<&'static Prerequisite> {
    PREREQUISITES.iter().filter(|p| !(p.present)()).collect()
}

/// Runs `program args…` non-interactively, printing it first.
fn run(program: &str, args: &[&str]) -> anyhow::Result<()> {
    println!("xtask: $ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .status()
        .with_context(|| format!("running {program}"))?;
    if !status.success() {
        bail!("`{program} {}` failed with {status}", args.join(" "));
    }
    Ok(())
}

/// Free space a cold `cargo xtask test` needs in the target directory: the debug test binaries,
/// the release build of the image, and the real node's Go build (a cold CI run measured 4.3 GiB
/// in all, its Go build cache aside).
const TEST_DISK_NEEDED_GIB: u64 = 8;

/// Says on stderr when the filesystem holding `dir` (or its nearest existing parent) has less than
/// [`TEST_DISK_NEEDED_GIB`] free, read from POSIX `df -Pk`: a full disk otherwise surfaces as a
/// linker's bus error or `No space left on device` minutes into the build. A warning, not a
/// refusal: a warm target needs far less.
fn warn_if_disk_short(dir: &Path) {
    let existing = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("/"));
    let Ok(out) = Command::new("df").arg("-Pk").arg(existing).output() else {
        return;
    };
    // `df -P`: one header line, then `filesystem 1024-blocks used available capacity mount`.
    let text = String::from_utf8_lossy(&out.stdout);
    let available_kib = text
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|field| field.parse::<u64>().ok());
    if let Some(kib) = available_kib
        && kib < TEST_DISK_NEEDED_GIB << 20
    {
        eprintln!(
            "xtask: warning: {:.1} GiB free on the filesystem of {}; a cold test build writes \
             about {TEST_DISK_NEEDED_GIB} GiB (free space, or set CARGO_TARGET_DIR elsewhere)",
            kib as f64 / f64::from(1 << 20),
            existing.display()
        );
    }
}

fn in_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}

/// Whether `gcc -static` can link: gcc knows a `libc.a`.
fn static_libc() -> bool {
    if !in_path("gcc") {
        return false;
    }
    Command::new("gcc")
        .arg("-print-file-name=libc.a")
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        .is_some_and(|path| path.is_absolute() && path.is_file())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned)
}
