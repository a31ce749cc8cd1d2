//! `cargo xtask`: podcoroner's repository automation (the alias is in `.cargo/config.toml`).
//!
//! Tasks:
//!
//! - `cargo xtask test [ARGS…]`: installs what the real-containerd tests need when it is missing
//!   (`apt-get update`, then `apt-get install -y containerd runc containernetworking-plugins`,
//!   plus `gcc libc6-dev` for the lab's static pause binary), then runs
//!   `cargo test --workspace ARGS…` and exits with its status. Works unattended (no stdin,
//!   `CI=true`) on a fresh Debian machine with only the Rust toolchain, as root.
//!
//! Exit codes: the test run's own code; 1 when preparing failed; 64 for an unknown task.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, bail};

const USAGE: &str = "usage: cargo xtask <task> [args…]

tasks:
  test [ARGS…]   install the containerd lab's prerequisites if missing (apt-get, as root),
                 then run `cargo test --workspace ARGS…`
  help           print this help";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let res = match args.first().map(String::as_str) {
        Some("test") => test(&args[1..]),
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
        what: "chromium (the daemon's page, rendered headless)",
        package: "chromium",
        present: || in_path("chromium"),
    },
    Prerequisite {
        what: "/lib/systemd/systemd-journal-remote (writes the real journals the journald tests read)",
        package: "systemd-journal-remote",
        present: || Path::new("/lib/systemd/systemd-journal-remote").is_file(),
    },
];

fn test(args: &[String]) -> anyhow::Result<ExitCode> {
    ensure_prerequisites()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let root = workspace_root();
    println!("xtask: $ cargo test --workspace {}", args.join(" "));
    let status = Command::new(&cargo)
        .args(["test", "--workspace"])
        .args(args)
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
