//! The progress bar of long log reads (issue 10 item 6): `diagnose` draws bytes read of the
//! file's size and the rate on stderr when stderr is a terminal and the read takes over a
//! second, and writes nothing of it when stderr is piped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A kubelet log of at least `mib` MiB: a real case's lines, repeated.
fn big_log(dir: &Path, mib: usize) -> PathBuf {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/cases/02-sandbox-not-gc-until-kubelet-restart/kubelet.log");
    let text = std::fs::read_to_string(&case).expect("case log");
    let mut out = String::with_capacity(mib << 20);
    while out.len() < mib << 20 {
        out.push_str(&text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    let path = dir.join("kubelet.log");
    std::fs::write(&path, out).expect("write log");
    path
}

/// Long enough that a debug build reads it for well over a second.
const LOG_MIB: usize = 48;

#[test]
fn a_piped_stderr_gets_no_progress_bar() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = big_log(dir.path(), LOG_MIB);
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["diagnose", "--offline", "--kubelet-log"])
        .arg(&log)
        .args(["-o", "json", "--fail-on", "none"])
        .stdin(Stdio::null())
        .output()
        .expect("run podcoroner");
    let took = started.elapsed();
    assert!(out.status.success(), "{out:?}");
    // Only meaningful when the read was long enough for a terminal to get a bar.
    assert!(
        took > Duration::from_secs(2),
        "diagnose took {took:?}: make the log longer"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("reading") && !stderr.contains('\r') && !stderr.contains('\u{1b}'),
        "progress output on a piped stderr: {stderr:?}"
    );
    assert!(stderr.is_empty(), "stderr: {stderr:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let events = report["sources"]["kubelet_log"]["counts"]["events"].as_u64();
    assert!(events.is_some_and(|n| n > 10_000), "{events:?} events read");
}

#[test]
fn a_terminal_gets_a_progress_bar_on_a_long_read() {
    // `script` (util-linux) runs the command on a pseudo-terminal and copies what it drew.
    if Command::new("script").arg("--version").output().is_err() {
        panic!("`script` (util-linux) is needed to give podcoroner a terminal");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let log = big_log(dir.path(), LOG_MIB);
    let command = format!(
        "{} diagnose --offline --kubelet-log {} -o json --fail-on none > /dev/null",
        env!("CARGO_BIN_EXE_podcoroner"),
        log.display()
    );
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .expect("run script");
    assert!(out.status.success(), "{out:?}");
    let drawn = String::from_utf8_lossy(&out.stdout);
    assert!(
        drawn.contains(&format!("reading {}", log.display())),
        "no progress bar on a terminal: {drawn:?}"
    );
    assert!(drawn.contains("MiB/s"), "no rate: {drawn:?}");
    assert!(
        drawn.contains(&format!("/{LOG_MIB}")),
        "no total: {drawn:?}"
    );
}
