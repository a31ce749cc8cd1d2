//! `podcoroner diagnose --offline` and `explain --offline` with `--kubelet-log journald
//! --runtime-log journald --journal-dir DIR`, and `podcoroner daemon` with `journal_dir` in its
//! config file: a real journal, written by `systemd-journal-remote` (as a journal copied off a
//! broken node, or a host's journal mounted into the pod, would be), read back by the real
//! `journalctl`.
//! Without systemd-journal-remote these tests fail with the command that installs it
//! (`cargo xtask test`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use podcoroner_logs::test_util::{JournalEntry, MACHINE_ID, TestJournal};
use serde_json::Value;

mod common;
use common::{Daemon, free_port, get, ok, podcoroner, strs};

/// The leaked sandbox: the kubelet's GC fails to stop it because Calico's datastore refuses the
/// CNI DEL.
const SANDBOX: &str = "9d4e2f7a1c3b5d6e8f0a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e2f4a6b8c0d2e";

/// `mins` minutes back from now (klog has no year: the test holds on any day).
fn ago(mins: i64) -> Timestamp {
    Timestamp::now() - SignedDuration::from_mins(mins)
}

/// A node's journal as copied from `/var/log/journal`: a machine-ID subdirectory holding the
/// kubelet's three GC attempts 30, 20 and 10 minutes ago (CRI client and GC lines, kubelet 1.26
/// wording) and containerd's `StopPodSandbox … failed` before each, with sshd beside them.
fn node_journal(root: &Path) {
    let machine = root.join(MACHINE_ID);
    ok(std::fs::create_dir_all(&machine));
    let journal = ok(TestJournal::new(&machine));
    let err = format!(
        "failed to destroy network for sandbox \\\"{SANDBOX}\\\": plugin type=\\\"calico\\\" failed (delete): \
         error getting ClusterInformation: connection is unauthorized: Unauthorized"
    );
    let mut entries = vec![JournalEntry::new(
        "ssh",
        ago(35),
        "Accepted publickey for admin from 192.0.2.7 port 50122 ssh2",
    )];
    for mins in [30, 20, 10] {
        let t = ago(mins);
        let klog = |us: i64| {
            (t + SignedDuration::from_micros(us))
                .strftime("%m%d %H:%M:%S%.6f")
                .to_string()
        };
        entries.extend([
            JournalEntry::new(
                "containerd",
                t,
                &format!(
                    "time=\"{}\" level=error msg=\"StopPodSandbox for \\\"{SANDBOX}\\\" failed\" error=\"{err}\"",
                    t.strftime("%Y-%m-%dT%H:%M:%S%.9fZ")
                ),
            ),
            JournalEntry::new(
                "kubelet",
                t + SignedDuration::from_micros(1000),
                &format!(
                    "E{}    2783 remote_runtime.go:205] \"StopPodSandbox from runtime service failed\" \
                     err=\"rpc error: code = Unknown desc = {err}\" podSandboxID=\"{SANDBOX}\"",
                    klog(1000)
                ),
            ),
            JournalEntry::new(
                "kubelet",
                t + SignedDuration::from_micros(1050),
                &format!(
                    "E{}    2783 kuberuntime_gc.go:176] \"Failed to stop sandbox before removing\" \
                     err=\"rpc error: code = Unknown desc = {err}\" sandboxID=\"{SANDBOX}\"",
                    klog(1050)
                ),
            ),
        ]);
    }
    ok(journal.append(&entries));
}

fn offline_args(journal: &Path) -> Vec<String> {
    [
        "--offline",
        "--node-name",
        "node-a",
        "--kubelet-log",
        "journald",
        "--runtime-log",
        "journald",
        "--journal-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([journal.display().to_string()])
    .collect()
}

#[test]
fn diagnose_offline_reads_a_copied_journal_directory() {
    let dir = ok(tempfile::tempdir());
    let journal = dir.path().join("var-log-journal");
    node_journal(&journal);
    let mut args: Vec<String> = ["diagnose", "-o", "json", "--min-age", "0s"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(offline_args(&journal));
    let (code, out, err) = podcoroner(&args);
    assert_eq!(
        code, 1,
        "a warning finding exits 1\nstdout:\n{out}\nstderr:\n{err}"
    );
    let report: Value = ok(serde_json::from_str(&out));

    let kubelet = &report["sources"]["kubelet_log"];
    assert_eq!(
        kubelet["path"],
        format!("journald:kubelet@{}", journal.display()),
        "{report:#}"
    );
    // Six kubelet entries (not sshd's, not containerd's), each one event.
    assert_eq!(kubelet["counts"]["lines"], 6, "{report:#}");
    assert_eq!(kubelet["counts"]["events"], 6, "{report:#}");
    assert_eq!(
        report["sources"]["runtime_log"]["counts"]["events"], 3,
        "{report:#}"
    );

    let findings = report["findings"].as_array().unwrap();
    assert_eq!(
        strs(&report["findings"], "kind"),
        ["SandboxStopFailing"],
        "{report:#}"
    );
    let f = &findings[0];
    assert_eq!(f["sandbox_id"], SANDBOX);
    assert_eq!(f["severity"], "warning");
    let summary = f["summary"].as_str().unwrap();
    // containerd's, the CRI client's and the GC's line of one attempt are one attempt.
    assert!(
        summary.starts_with(&format!(
            "stopping pod sandbox {} fails: CNI teardown: the CNI datastore refused (Unauthorized) \
             (3 attempts, 9 log records over 20m0s)",
            &SANDBOX[..13]
        )),
        "{summary}\n{report:#}"
    );
    let evidence = strs(&f["evidence"], "detail");
    let origin = format!("journald:kubelet@{}:", journal.display());
    assert!(
        evidence
            .iter()
            .any(|d| d.starts_with(&origin) && d.contains("kuberuntime_gc.go:176")),
        "{evidence:#?}"
    );
    // A runtime unit with no entry: the runtime's log is not judged, and its own flag is named.
    args.extend(["--runtime-unit".to_string(), "crio".to_string()]);
    let (code, out, err) = podcoroner(&args);
    assert_eq!(code, 1, "{err}");
    let report: Value = ok(serde_json::from_str(&out));
    let runtime = &report["sources"]["runtime_log"];
    assert_eq!(runtime["status"], "not_understood", "{report:#}");
    assert_eq!(
        runtime["detail"],
        "not understood: no line read, journalctl -u crio gave no entry: the wrong unit (--runtime-unit), none in the time asked (--since), or journal files it cannot read (journalctl --verify)?",
        "{report:#}"
    );
}

#[test]
fn explain_offline_and_journal_dir_misuse() {
    let dir = ok(tempfile::tempdir());
    let journal = dir.path().join("journal");
    node_journal(&journal);
    let mut args: Vec<String> = vec!["explain".into(), SANDBOX.into(), "-o".into(), "json".into()];
    args.extend(offline_args(&journal));
    let (code, out, err) = podcoroner(&args);
    assert_eq!(code, 0, "{err}");
    let t: Value = ok(serde_json::from_str(&out));
    let sources = strs(&t["entries"], "source");
    // containerd's and the kubelet's lines of the three attempts, in time order.
    assert_eq!(sources.len(), 9, "{t:#}");
    assert_eq!(
        sources.iter().filter(|s| **s == "kubelet-log").count(),
        6,
        "{t:#}"
    );
    assert_eq!(
        sources.iter().filter(|s| **s == "runtime-log").count(),
        3,
        "{t:#}"
    );

    // --journal-dir without a journald log would be ignored: refused.
    let log = dir.path().join("kubelet.log");
    ok(std::fs::write(&log, ""));
    let (code, _, err) = podcoroner(&[
        "diagnose".into(),
        "--offline".into(),
        "--kubelet-log".into(),
        log.display().to_string(),
        "--journal-dir".into(),
        journal.display().to_string(),
    ]);
    assert_eq!(code, 64, "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "error: --journal-dir: {} is read for a journald log, and neither the kubelet's log nor the runtime's is journald",
            journal.display()
        )
    );
    // A directory without a journal: the error names it.
    let empty = dir.path().join("empty");
    ok(std::fs::create_dir(&empty));
    let mut args = vec!["diagnose".to_string()];
    args.extend(offline_args(&empty));
    let (code, _, err) = podcoroner(&args);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "error: cannot read journal directory {}: no journal files (*.journal) in it or in a machine-ID subdirectory",
            empty.display()
        )
    );
}

/// `n` kubelet entries from `start` on, a millisecond apart, each a GC attempt on [`SANDBOX`].
fn gc_entries(start: Timestamp, n: usize) -> Vec<JournalEntry> {
    (0..n)
        .map(|i| {
            let t = start + SignedDuration::from_millis(i as i64);
            JournalEntry::new(
                "kubelet",
                t,
                &format!(
                    "E{}    2783 kuberuntime_gc.go:176] \"Failed to stop sandbox before removing\" \
                     err=\"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"{SANDBOX}\\\": \
                     plugin type=\\\"calico\\\" failed (delete): error getting ClusterInformation: connection is \
                     unauthorized: Unauthorized\" sandboxID=\"{SANDBOX}\"",
                    t.strftime("%m%d %H:%M:%S%.6f")
                ),
            )
        })
        .collect()
}

/// A journal in `journal_dir` (created) and the config file `<dir>/config.yaml` of a daemon
/// that follows the kubelet's unit there, with no runtime, no API server and its state in
/// `<dir>/state`.
fn journal_daemon(dir: &Path, journal_dir: &Path) -> (TestJournal, PathBuf) {
    ok(std::fs::create_dir(journal_dir));
    let journal = ok(TestJournal::new(journal_dir));
    let config = dir.join("config.yaml");
    ok(std::fs::write(
        &config,
        format!(
            "node_name: node-a\nruntime_endpoint: unix://{}/no-runtime.sock\nno_apiserver: true\n\
             kubelet_log: journald\njournal_dir: {}\nstate_dir: {}\nmin_age: 0s\nevaluate_interval: 1s\n",
            dir.display(),
            journal_dir.display(),
            dir.join("state").display()
        ),
    ));
    (journal, config)
}

fn start_daemon(config: &Path, port: u16) -> Daemon {
    Daemon::new(ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .arg("daemon")
        .arg("--config")
        .arg(config)
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--log-level",
            "warn",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()))
}

/// The `kubelet_log` source's detail in `/readyz` once it reads `want`, within 20 s.
fn wait_for_kubelet_log(port: u16, want: &str) -> Value {
    kubelet_log_when(port, want, |s| {
        s["detail"].as_str().is_some_and(|d| d.starts_with(want))
    })
}

/// The `kubelet_log` source in `/readyz` once `ready` holds of it (`what`), within 20 s.
fn kubelet_log_when(port: u16, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = Value::Null;
    while Instant::now() < deadline {
        let (_, body) = get(port, "/readyz");
        if let Ok(v) = serde_json::from_str::<Value>(&body) {
            last = v["sources"]["kubelet_log"].clone();
            if ready(&last) {
                return last;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("kubelet_log never read {what:?}; last: {last:#}");
}

/// The daemon follows the kubelet's unit in a journal directory named in its config file, saves
/// the cursor under `kubelet@<dir>`, and after a restart reads only the entries written while
/// it was down.
#[test]
fn daemon_follows_a_journal_directory_across_restarts() {
    let dir = ok(tempfile::tempdir());
    let journal_dir = dir.path().join("host-journal");
    let (journal, config) = journal_daemon(dir.path(), &journal_dir);
    // Written before the daemon starts: history within `log_lookback` (1h by default), which a
    // first start reads; and one entry older than that, which it does not.
    ok(journal.append(&gc_entries(ago(90), 1)));
    ok(journal.append(&gc_entries(ago(5), 1)));
    let state = dir.path().join("state");
    let (code, out, err) = podcoroner(&[
        "config".into(),
        "check".into(),
        config.display().to_string(),
    ]);
    assert_eq!(code, 0, "{out}{err}");

    let port = free_port();
    let daemon = start_daemon(&config, port);
    let key = format!("kubelet@{}", journal_dir.display());
    // journalctl -f is running before the entries are written.
    std::thread::sleep(Duration::from_millis(1500));
    ok(journal.append(&gc_entries(Timestamp::now(), 3)));
    let source = wait_for_kubelet_log(port, &format!("journald {key}; 4 entries"));
    assert_eq!(source["healthy"], true, "{source:#}");
    assert!(
        source["detail"]
            .as_str()
            .unwrap()
            .contains("first start: read back to"),
        "{source:#}"
    );
    daemon.terminate();
    let saved: Value = ok(serde_json::from_str(&ok(std::fs::read_to_string(
        state.join("log-checkpoints.json"),
    ))));
    let cursor = saved["journald"][&key]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        cursor.contains(";i=5;"),
        "the 5th entry's cursor under {key}: {saved:#}"
    );

    // Two entries while the daemon is down: a restart reads exactly those.
    ok(journal.append(&gc_entries(Timestamp::now(), 2)));
    let daemon = start_daemon(&config, port);
    wait_for_kubelet_log(port, &format!("journald {key}; 2 entries"));
    std::thread::sleep(Duration::from_millis(1500));
    let source = wait_for_kubelet_log(port, &format!("journald {key}; 2 entries"));
    assert_eq!(source["healthy"], true, "{source:#}");
    daemon.terminate();
}

/// Journal messages longer than the line limit are read cut to it, that of an entry over 8 MiB
/// of JSON too (from its first bytes, as `diagnose` reads it): said in `/readyz`, counted in
/// `/metrics`, the source healthy, and the entries after them read.
#[test]
fn daemon_reads_journal_messages_past_the_line_and_entry_limits_cut() {
    let dir = ok(tempfile::tempdir());
    let journal_dir = dir.path().join("host-journal");
    let (journal, config) = journal_daemon(dir.path(), &journal_dir);
    ok(journal.append(&gc_entries(ago(5), 1)));
    let port = free_port();
    let daemon = start_daemon(&config, port);
    let key = format!("kubelet@{}", journal_dir.display());
    let mut entries = gc_entries(ago(4), 3);
    let padding = |bytes: usize| format!("{} {}", entries[0].message, "x".repeat(bytes));
    let (cut, past_limit) = (padding(1 << 20), padding(9 << 20));
    entries[0].message = cut;
    entries[1].message = past_limit;
    ok(journal.append(&entries));
    let source = wait_for_kubelet_log(port, &format!("journald {key}; 2 cut_lines, 4 entries"));
    assert_eq!(source["healthy"], true, "{source:#}");
    let detail = source["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("2 line(s) longer than 64 KiB cut to it"),
        "{source:#}"
    );
    let (_, metrics) = get(port, "/metrics");
    assert!(
        metrics.contains("podcoroner_log_lines_cut_total{source=\"kubelet_log\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("podcoroner_log_entries_unread_total{source=\"kubelet_log\"} 0"),
        "{metrics}"
    );
    daemon.terminate();
}

/// A first start that finds no entry of its unit in the journal, back to `log_lookback` and on
/// for a while, says so (a wrong unit name) rather than stay a quiet healthy source; the entries
/// of other units are there.
#[test]
fn daemon_says_a_unit_with_no_entry() {
    let dir = ok(tempfile::tempdir());
    let journal_dir = dir.path().join("host-journal");
    let (journal, config) = journal_daemon(dir.path(), &journal_dir);
    ok(journal.append(&gc_entries(ago(5), 2)));
    let text = ok(std::fs::read_to_string(&config));
    ok(std::fs::write(
        &config,
        format!("{text}kubelet_unit: kubelet2\n"),
    ));
    let port = free_port();
    let daemon = start_daemon(&config, port);
    let source = kubelet_log_when(port, "no entry of the unit", |s| {
        s["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("gave no entry"))
    });
    assert_eq!(source["healthy"], false, "{source:#}");
    let error = source["last_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("journalctl -u kubelet2 gave no entry since ")
            && error
                .contains("(log_lookback): the wrong unit (kubelet_unit)? It is read once it logs")
            && error.contains("no entry yet, "),
        "{source:#}"
    );
    daemon.terminate();
}
