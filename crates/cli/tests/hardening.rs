//! Hardening of the command line and the daemon's HTTP endpoint against bad input and abuse
//! (issue 16): `--since` overflow, `explain` queries nothing can match, `/findings` keys, and
//! connections that never finish or sit idle. No runtime needed: the daemon runs with an
//! unreachable CRI endpoint and no API server, its HTTP endpoint serving all the same.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{Daemon, free_port, get, ok, podcoroner, serves_healthz};

/// A kubelet log of one line, for the offline commands.
fn kubelet_log(dir: &Path) -> String {
    let path = dir.join("kubelet.log");
    ok(std::fs::write(
        &path,
        "I1129 10:00:00.000000    1234 kubelet.go:2431] \"SyncLoop ADD\" source=\"api\" pods=[\"shop/cart-0\"]\n",
    ));
    path.display().to_string()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Runs the binary with `args` and `stdin` written to its standard input, a pipe.
fn podcoroner_piped(args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut child = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn());
    let mut pipe = child.stdin.take().expect("piped");
    ok(pipe.write_all(stdin));
    drop(pipe);
    ok(child.wait_with_output())
}

#[test]
fn since_beyond_the_representable_past_is_a_usage_error() {
    let dir = ok(tempfile::tempdir());
    let log = kubelet_log(dir.path());
    let diagnose_since = |since: &str, extra: &[&str]| {
        let mut a = vec![
            "diagnose",
            "--offline",
            "--kubelet-log",
            &log,
            "--since",
            since,
        ];
        a.extend(extra);
        podcoroner(&args(&a))
    };
    for since in [
        "200000y",
        "99999999999h",
        "9223372036854775807s",
        // u64::MAX seconds used to wrap into the future and drop every record, exit 0.
        "18446744073709551615s",
    ] {
        let (code, out, err) = diagnose_since(since, &[]);
        assert_eq!(code, 64, "--since {since}: {out}\n{err}");
        assert!(
            err.contains(&format!(
                "{since:?} is outside the years -9999 to 9999, the times podcoroner handles"
            )),
            "--since {since}: {err}"
        );
        assert_eq!(out, "");
    }
    // A date past what jiff represents is said so, not as a shape it is not.
    let (code, _, err) = diagnose_since("9999-12-31", &[]);
    assert_eq!(code, 64);
    assert!(err.contains("is outside the years -9999 to 9999"), "{err}");
    // A long but representable duration still works.
    let (code, _, err) = diagnose_since("100y", &["-o", "json"]);
    assert_eq!(code, 0, "{err}");
    // journalctl's forms: a negative duration after a space, a date, a time without a zone
    // (this machine's). Before them all: read (exit 0); after them all: nothing judged (2).
    for (since, want) in [
        ("-100y", 0),
        ("2000-01-01", 0),
        ("2000-01-01T10:00:00", 0),
        ("2999-01-01", 2),
        ("2999-01-01T10:00:00", 2),
        // journalctl's forms after the log's one record (November 29th, within the last year).
        ("2000-01-01 10:00:00", 0),
        ("now", 2),
        ("+1h", 2),
    ] {
        let (code, out, err) = diagnose_since(since, &["-o", "json"]);
        assert_eq!(code, want, "--since {since}: {out}\n{err}");
    }
}

#[test]
fn explain_says_why_a_query_cannot_match_and_prints_nothing_for_an_unknown_pod() {
    let dir = ok(tempfile::tempdir());
    let log = kubelet_log(dir.path());
    let empty = dir.path().join("empty.log");
    ok(std::fs::write(&empty, ""));
    let empty = empty.display().to_string();
    // `explain QUERY --offline` with the logs given.
    let explain = |query: &str, logs: &[&str]| {
        let mut a = vec!["explain", query, "--offline"];
        a.extend(logs);
        podcoroner(&args(&a))
    };
    let (code, out, err) = explain("72b0a", &["--kubelet-log", &log]);
    assert_eq!(code, 64, "{out}\n{err}");
    assert_eq!(out, "");
    assert!(
        err.contains("\"72b0a\" is 5 characters: use 6 or more characters"),
        "{err}"
    );
    let (code, out, err) = explain("0f0f0f0f-dead-beef", &["--kubelet-log", &log]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(out, "", "nothing on stdout before the error");
    assert!(
        err.contains("nothing in the logs given names \"0f0f0f0f-dead-beef\""),
        "{err}"
    );
    // A pod that is there still gets its timeline.
    let (code, out, err) = explain("shop/cart-0", &["--kubelet-log", &log]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("SyncLoop ADD"), "{out}");
    assert_eq!(err, "", "every source read and understood");
    // A log not read is said: beside the timeline on stderr, and in the error of a pod found in
    // nothing read (an empty file is no proof the pod was never there).
    let (code, out, err) = explain(
        "shop/cart-0",
        &["--kubelet-log", &log, "--runtime-log", &empty],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("SyncLoop ADD"), "{out}");
    assert_eq!(
        err,
        format!(
            "warning: runtime_log ({empty}) not understood: no line read, the file is empty: the wrong file, or rotated away?\n"
        )
    );
    let (code, out, err) = explain("shop/cart-0", &["--kubelet-log", &empty]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains(&format!(
            "nothing in the logs given names \"shop/cart-0\" (a pod UID, namespace/name, sandbox or container ID) in what was read; kubelet_log ({empty}) not understood: no line read"
        )),
        "{err}"
    );
}

#[test]
fn help_names_each_commands_own_json_schema() {
    let help = |cmd: &str| podcoroner(&args(&[cmd, "--help"])).1;
    let explain = help("explain");
    assert!(explain.contains("podcoroner.timeline/v1"), "{explain}");
    assert!(!explain.contains("podcoroner.diagnosis/v1"), "{explain}");
    assert!(!explain.contains("grouped by severity"), "{explain}");
    let gc = help("gc");
    assert!(gc.contains("podcoroner.gc/v1"), "{gc}");
    assert!(!gc.contains("podcoroner.diagnosis/v1"), "{gc}");
    assert!(gc.contains("--pods-max-age"), "{gc}");
    let diagnose = help("diagnose");
    assert!(diagnose.contains("podcoroner.diagnosis/v1"), "{diagnose}");
    assert!(diagnose.contains("grouped by severity"), "{diagnose}");
}

/// A daemon with no runtime and no API server, its HTTP settings from `config`.
fn daemon(dir: &Path, port: u16, config: &str) -> Child {
    let path = dir.join("config.yaml");
    ok(std::fs::write(&path, config));
    let child = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(["daemon", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--config")
        .arg(&path)
        .args([
            "--runtime-endpoint",
            "unix:///nonexistent/podcoroner-test.sock",
            "--node-name",
            "hard-node",
            "--no-apiserver",
            "--log-level",
            "warn",
        ])
        .arg("--manifest-dir")
        .arg(dir.join("manifests"))
        .arg("--kubelet-root-dir")
        .arg(dir.join("kubelet"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !serves_healthz(port) {
        assert!(
            Instant::now() < deadline,
            "the daemon never served /healthz"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

#[test]
fn findings_refuses_unknown_query_keys() {
    let dir = ok(tempfile::tempdir());
    let port = free_port();
    let child = Daemon::new(daemon(dir.path(), port, "{}\n"));
    let (status, body) = get(port, "/findings?kinds=LeakedSandbox");
    assert_eq!(status, 400, "{body}");
    let v: serde_json::Value = ok(serde_json::from_str(&body));
    let error = v["error"].as_str().unwrap();
    assert!(
        error.contains("unknown field `kinds`")
            && error.contains("the keys are kind, severity, namespace and state"),
        "{error}"
    );
    // The known keys and values still answer.
    assert_eq!(get(port, "/findings?kind=LeakedSandbox&state=open").0, 200);
    assert_eq!(get(port, "/findings?kind=NoSuchKind").0, 400);
    child.terminate();
}

/// The descriptors `pid` holds now.
fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// True once the server closed `s` (EOF or reset); reads what it sent meanwhile.
fn closed(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// 150 idle connections, 50 that send half a request head and stop, 10 that finish one
/// keep-alive request and then sit idle, and 5 that send a request head one byte every 100 ms
/// (never idle, never done), against a limit of 40 connections: the daemon never holds more than
/// 40 of them (the oldest are closed to admit new ones), answers `/healthz` within 5 s during the
/// flood, and closes every one within its timeouts (header read 2 s, idle 3 s). Bounded: 215
/// connections, 30 s.
#[test]
fn idle_and_half_sent_connections_are_closed_within_the_limits() {
    let dir = ok(tempfile::tempdir());
    let port = free_port();
    let daemon = Daemon::new(daemon(
        dir.path(),
        port,
        "http_header_read_timeout: 2s\nhttp_idle_timeout: 3s\nhttp_max_connections: 40\n",
    ));
    let pid = daemon.pid();
    let baseline = fds(pid);
    let mut conns = Vec::new();
    // Each connection's own start: a connect can wait a second in the kernel (a SYN retried
    // while the daemon's accept backlog is full), so the loop's end is no start for any of them.
    let mut connected_at = Vec::new();
    for i in 0..215 {
        let mut s = ok(TcpStream::connect(("127.0.0.1", port)));
        connected_at.push(Instant::now());
        ok(s.set_read_timeout(Some(Duration::from_millis(5))));
        if (150..200).contains(&i) {
            ok(s.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n"));
        } else if (200..210).contains(&i) {
            ok(s.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
        }
        conns.push(s);
    }
    let slow = 210..215;
    let probe = Instant::now();
    assert_eq!(get(port, "/healthz"), (200, "ok\n".to_string()));
    let probe = probe.elapsed();
    assert!(
        probe < Duration::from_secs(5),
        "/healthz took {probe:?} during the flood"
    );
    let mut open = vec![true; conns.len()];
    let mut closed_at = vec![Duration::ZERO; conns.len()];
    let mut peak = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while open.iter().any(|o| *o) {
        assert!(
            Instant::now() < deadline,
            "{} of {} connections still open after 30 s (open: {:?})",
            open.iter().filter(|o| **o).count(),
            conns.len(),
            open.iter()
                .enumerate()
                .filter(|(_, o)| **o)
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        );
        peak = peak.max(fds(pid).saturating_sub(baseline));
        for (i, (s, o)) in conns.iter_mut().zip(open.iter_mut()).enumerate() {
            if slow.contains(&i) && *o {
                // One more byte of a header that never ends.
                let _ = s.write_all(b"X");
            }
            if *o && closed(s) {
                *o = false;
                closed_at[i] = connected_at[i].elapsed();
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // The limit holds (a few descriptors of the daemon's own work may come and go).
    assert!(
        peak <= 40 + 8,
        "the daemon held {peak} more descriptors than at rest"
    );
    // The trickling ones lasted until the header-read timeout (counted from their accept, which
    // is after their connect), not the idle one.
    for i in slow {
        assert!(
            closed_at[i] >= Duration::from_millis(1500) && closed_at[i] < Duration::from_secs(15),
            "slow connection {i} closed after {:?}",
            closed_at[i]
        );
    }
    assert_eq!(get(port, "/healthz"), (200, "ok\n".to_string()));
    daemon.terminate();
}

/// A first start (no saved read position) reads the kubelet log back `log_lookback` (1 h by
/// default, and never before this machine booted), not only what comes next: a pod seen inside
/// that window has a timeline, one seen before it does not, and `/readyz` says how far back it
/// read and how many older records it skipped. A restart then resumes at its saved position and
/// reads no line twice.
#[test]
fn a_first_start_reads_the_log_back_log_lookback() {
    let dir = ok(tempfile::tempdir());
    let log = dir.path().join("kubelet.log");
    let line = |t: jiff::Timestamp, pod: &str| {
        format!(
            "I{}    1234 kubelet.go:2431] \"SyncLoop ADD\" source=\"api\" pods=[\"shop/{pod}\"]\n",
            t.strftime("%m%d %H:%M:%S%.6f")
        )
    };
    // The window the daemon reads: since max(now - 1 h, boot time), as node-problem-detector's
    // lookback, so that the test holds on a machine booted minutes ago.
    let now = jiff::Timestamp::now();
    let from = (now - jiff::SignedDuration::from_hours(1)).max(booted());
    let inside = from + now.duration_since(from) / 2;
    ok(std::fs::write(
        &log,
        line(from - jiff::SignedDuration::from_mins(30), "old-0")
            + &line(inside, "recent-0")
            + &line(now - jiff::SignedDuration::from_secs(1), "recent-1"),
    ));
    let config = format!("kubelet_log: {}\n", log.display());
    let port = free_port();
    let daemon_ = Daemon::new(daemon(dir.path(), port, &config));
    let deadline = Instant::now() + Duration::from_secs(20);
    let detail = loop {
        let (_, body) = get(port, "/readyz");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let d = v["sources"]["kubelet_log"]["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if d.contains("3 lines") {
            break d;
        }
        assert!(
            Instant::now() < deadline,
            "kubelet_log never read 3 lines: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        detail.contains("first start: read back to")
            && detail.contains("(log_lookback), 1 older records skipped"),
        "{detail}"
    );
    assert_eq!(get(port, "/pods/shop%2Frecent-0/timeline").0, 200);
    assert_eq!(get(port, "/pods/shop%2Frecent-1/timeline").0, 200);
    assert_eq!(get(port, "/pods/shop%2Fold-0/timeline").0, 404);
    daemon_.terminate();

    // A restart resumes after the last line: one new line, read once, and no look back.
    ok(std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .and_then(|mut f| f.write_all(line(jiff::Timestamp::now(), "after-0").as_bytes())));
    let daemon_ = Daemon::new(daemon(dir.path(), port, &config));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let m = get(port, "/metrics").1;
        if m.contains("podcoroner_log_lines_total{source=\"kubelet_log\"} 1") {
            break;
        }
        assert!(Instant::now() < deadline, "the line after the restart: {m}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, body) = get(port, "/readyz");
    assert!(!body.contains("first start"), "{body}");
    assert_eq!(get(port, "/pods/shop%2Fafter-0/timeline").0, 200);
    daemon_.terminate();
}

/// When this machine booted: `btime` of `/proc/stat`, as the daemon reads it.
fn booted() -> jiff::Timestamp {
    let stat = ok(std::fs::read_to_string("/proc/stat"));
    let secs = stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|s| s.trim().parse::<i64>().ok())
        .expect("btime in /proc/stat");
    ok(jiff::Timestamp::from_second(secs))
}

/// The bundled sample with the default `--min-age 10m`: the table and the JSON say how many
/// objects were too young to judge, of which kinds, and from when they will be judged.
#[test]
fn objects_too_young_to_judge_are_counted_with_their_time() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/sample-node");
    let (_, table, err) = podcoroner(&args(&["diagnose", "--snapshot", sample]));
    assert!(
        table.contains(
            "NOT JUDGED YET\n  37 objects younger than --min-age 10m0s (12 containers, 11 pod dirs, 14 sandboxes): all judged from 2026-11-29T16:32:57Z"
        ),
        "{table}{err}"
    );
    let (_, json, _) = podcoroner(&args(&["diagnose", "--snapshot", sample, "-o", "json"]));
    let v: serde_json::Value = ok(serde_json::from_str(&json));
    assert_eq!(
        v["too_young"],
        serde_json::json!({
            "count": 37,
            "counts": {"containers": 12, "pod_dirs": 11, "sandboxes": 14},
            "min_age_seconds": 600,
            "until": v["too_young"]["until"],
        })
    );
    assert!(
        v["too_young"]["until"]
            .as_str()
            .unwrap()
            .starts_with("2026-11-29T16:32:5"),
        "{v}"
    );
    // Judging everything: nothing left out, and nothing said.
    let (_, json, _) = podcoroner(&args(&[
        "diagnose",
        "--snapshot",
        sample,
        "--min-age",
        "0s",
        "-o",
        "json",
    ]));
    let v: serde_json::Value = ok(serde_json::from_str(&json));
    assert_eq!(v.get("too_young"), None, "{v}");
}

/// `--offline` skips the state rule of `StaticPodNotRemoved` (it needs the CRI view) while the
/// log rule still reports one: the skip says it is partial, and why, instead of contradicting the
/// finding below it; the SOURCES column is aligned on its longest name (`kubelet_log`).
#[test]
fn offline_skips_agree_with_the_findings_reported() {
    let log = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/cases/18-static-pod-not-removed-killpodsandbox-cni/kubelet.log"
    );
    let (_, table, err) = podcoroner(&args(&["diagnose", "--offline", "--kubelet-log", log]));
    assert!(
        table.contains(
            "  StaticPodNotRemoved (in part): the CRI view is unavailable; findings of this kind from the logs alone are still reported\n"
        ) && table.contains("\nWARNING (1)\n  StaticPodNotRemoved  "),
        "{table}{err}"
    );
    assert!(table.contains("\n  kubelet_log  ok    "), "{table}");
    assert!(table.contains("\n  cri          unavailable  "), "{table}");
}

/// `--offline` judges logs that may come from any node: without `--node-name` the header does
/// not name this machine's hostname; with it, it names that node.
#[test]
fn offline_reports_name_the_logs_node_not_this_host() {
    let dir = ok(tempfile::tempdir());
    let log = kubelet_log(dir.path());
    let run = |extra: &[&str]| {
        let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
            .args(["diagnose", "--offline", "--kubelet-log", &log])
            .args(extra)
            .env_remove("NODE_NAME")
            .output());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let host = ok(std::fs::read_to_string("/proc/sys/kernel/hostname"))
        .trim()
        .to_lowercase();
    let table = run(&[]);
    let header = table.lines().next().unwrap();
    assert!(
        header.starts_with(
            "podcoroner diagnose: node unknown (--offline reads logs only: --node-name names their node) at "
        ),
        "{header}"
    );
    assert!(!header.contains(&format!("node {host} ")), "{header}");
    // JSON gives no name rather than the table's sentence: a script grouping by `.node` gets
    // an empty string.
    let json: serde_json::Value = serde_json::from_str(&run(&["-o", "json"])).unwrap();
    assert_eq!(json["node"], "");
    let table = run(&["--node-name", "node-a"]);
    assert!(
        table.starts_with("podcoroner diagnose: node node-a at "),
        "{table}"
    );
}

/// Yearless times (klog, journalctl's short prefix) are read in the file's modification year
/// unless a dated record says otherwise: a log's own dated records (systemd's `Started …` line
/// amid CRI-O's `time="2023-…"` ones, cri-o/cri-o#6699's paste), or the other log's. Their zone
/// (UTC unless shown) is the one a record shows, a local time beside a zoned one: journalctl's
/// prefix before cri-dockerd's `time="…+02:00"` (flannel-io/flannel#1798's paste), in the
/// same log before it or in the other log.
#[test]
fn yearless_times_take_the_year_and_zone_of_dated_records() {
    let dir = ok(tempfile::tempdir());
    // Each log's text written to a file, `diagnose --offline -o json` on them, and each source's
    // detail.
    let details = |kubelet: Option<&str>, runtime: &str| -> serde_json::Value {
        let mut a = vec!["diagnose".to_string(), "--offline".to_string()];
        for (flag, text, file) in [
            ("--kubelet-log", kubelet, "kubelet.log"),
            ("--runtime-log", Some(runtime), "runtime.log"),
        ] {
            if let Some(text) = text {
                let path = dir.path().join(file);
                ok(std::fs::write(&path, text));
                a.extend([flag.to_string(), path.display().to_string()]);
            }
        }
        a.extend(["-o".to_string(), "json".to_string()]);
        let (code, out, err) = podcoroner(&a);
        assert_eq!(code, 0, "{err}");
        let report: serde_json::Value = ok(serde_json::from_str(&out));
        report["sources"]
            .as_object()
            .unwrap()
            .iter()
            .filter_map(|(name, s)| Some((name.clone(), s["detail"].as_str()?.into())))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let both = details(
        Some(
            "I0302 20:05:10.000000    4321 kubelet.go:2453] \"SyncLoop DELETE\" source=\"api\" pods=[\"shop/web-0\"]\n",
        ),
        "Mar 02 20:04:59 node-a systemd[1]: Started Container Runtime Interface for OCI (CRI-O).\n\
         Mar 02 20:05:11 node-a crio[1364180]: time=\"2023-03-02 20:05:11.244414510Z\" level=info msg=\"Stopping pod sandbox: c826ce942387614e0910805bd1b9e26c7dc11140fc4ed6a5f0a69432e45e6f7f\"\n",
    );
    assert_eq!(
        both["runtime_log"],
        "records from 2023-03-02T20:04:59Z to 2023-03-02T20:05:11.24441451Z; yearless times read in 2023, the year of its dated records"
    );
    assert_eq!(
        both["kubelet_log"],
        "records from 2023-03-02T20:05:10Z to 2023-03-02T20:05:10Z; yearless times read in 2023, the year of the other log"
    );
    // A yearless line before the first dated one is read in that year too, and journalctl's
    // header dates a log of yearless lines alone.
    assert_eq!(
        details(
            None,
            "Jun 14 23:50:30 node1 systemd[1]: Starting containerd container runtime...\n\
             Jun 14 23:50:30 node1 containerd[812]: time=\"2023-06-14T23:50:30.100000000Z\" level=info msg=\"starting containerd\"\n"
        )["runtime_log"],
        "records from 2023-06-14T23:50:30Z to 2023-06-14T23:50:30.1Z; yearless times read in 2023, the year of its dated records"
    );
    assert_eq!(
        details(
            None,
            "-- Logs begin at Wed 2023-06-14 20:00:01 UTC, end at Thu 2023-06-15 08:00:00 UTC. --\n\
             Jun 14 23:50:29 node1 systemd[1]: Started kubelet: The Kubernetes Node Agent.\n"
        )["runtime_log"],
        "records from 2023-06-14T23:50:29Z to 2023-06-14T23:50:29Z; yearless times read in 2023, the year of its dated records"
    );
    let shown = "Aug 28 08:03:00 master cri-dockerd[14922]: time=\"2023-08-28T08:03:00+02:00\" level=info msg=\"Stop pulling image docker.io/flannel/flannel-cni-plugin:v1.2.0\"\n";
    let kubelet = "Aug 28 08:02:58 master kubelet[48553]: E0828 08:02:58.445528   48553 kubelet.go:2855] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:docker: network plugin is not ready: cni config uninitialized\"\n";
    assert_eq!(
        details(None, &format!("{kubelet}{shown}"))["runtime_log"],
        "records from 2023-08-28T06:02:58.445528Z to 2023-08-28T06:03:00Z; yearless times read in 2023, the year of its dated records; zone-less times read in UTC+02:00, the zone its records show (a local time beside a zoned one)"
    );
    let both = details(Some(kubelet), shown);
    assert_eq!(
        both["kubelet_log"],
        "records from 2023-08-28T06:02:58.445528Z to 2023-08-28T06:02:58.445528Z; yearless times read in 2023, the year of the other log; zone-less times read in UTC+02:00, the zone runtime_log shows (a local time beside a zoned one)"
    );
    assert_eq!(
        both["runtime_log"],
        "records from 2023-08-28T06:03:00Z to 2023-08-28T06:03:00Z"
    );
}

/// `explain` reads a log given as a pipe (the standard input from one, `<(zcat …)`) once, every
/// event kept: its rounds read a regular file again, and a pipe is empty the second time.
#[test]
fn explain_reads_a_piped_log_once() {
    let out = podcoroner_piped(
        &["explain", "shop/cart-0", "--offline", "--kubelet-log", "-"],
        b"I1129 10:00:00.000000    1234 kubelet.go:2431] \"SyncLoop ADD\" source=\"api\" pods=[\"shop/cart-0\"]\n",
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("SyncLoop ADD"), "{stdout}");
}

/// A gzip stream on the standard input (`cat kubelet.log.1.gz | podcoroner diagnose
/// --kubelet-log -`) and a gzip file named without `.gz` are read decompressed, as a `.gz` is:
/// they were refused as binary (fresh user 39).
#[test]
fn gzip_is_read_by_its_magic_on_a_pipe_and_without_its_suffix() {
    let dir = ok(tempfile::tempdir());
    let plain = kubelet_log(dir.path());
    let gz = ok(std::process::Command::new("gzip")
        .args(["-c", &plain])
        .output());
    let diagnose = |log: &str, stdin: Option<&[u8]>| {
        let out = podcoroner_piped(
            &["diagnose", "--offline", "--kubelet-log", log, "-o", "json"],
            stdin.unwrap_or_default(),
        );
        let json: serde_json::Value = ok(serde_json::from_slice(&out.stdout));
        (
            out.status.code(),
            json["sources"]["kubelet_log"]["counts"].clone(),
        )
    };
    let (code, want) = diagnose(&plain, None);
    assert_ne!(code, Some(2));
    assert!(want["events"].as_u64().unwrap_or(0) > 0, "{want}");
    let unnamed = dir.path().join("kubelet.log.1");
    ok(std::fs::write(&unnamed, &gz.stdout));
    assert_eq!(
        diagnose(&unnamed.to_string_lossy(), None),
        (code, want.clone())
    );
    assert_eq!(diagnose("-", Some(&gz.stdout)), (code, want));
}

#[test]
fn a_log_read_in_part_is_no_clean_bill() {
    // A `.gz` cut short in a copy: its lines up to the cut are read, and the footer says the
    // rest was not judged though no finding was made.
    let dir = ok(tempfile::tempdir());
    let plain = kubelet_log(dir.path());
    let text = ok(std::fs::read_to_string(&plain)).repeat(2000);
    ok(std::fs::write(&plain, text));
    let gz = ok(std::process::Command::new("gzip")
        .args(["-c", &plain])
        .output());
    let cut = dir.path().join("cut.log.gz");
    ok(std::fs::write(&cut, &gz.stdout[..gz.stdout.len() / 2]));
    let (code, out, err) = podcoroner(&args(&[
        "diagnose",
        "--offline",
        "--kubelet-log",
        &cut.display().to_string(),
    ]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("kubelet_log  degraded")
            && out.contains("not a clean bill: kubelet_log read in part (see SOURCES)"),
        "{out}"
    );
}

/// A kubelet crash loop that recovered (the config file missing until `kubeadm join` wrote
/// it), then records no rule reads for five minutes: the log's end shows the kubelet running,
/// so no KubeletStartFailing (fresh user 40: it was a false alarm on most kubeadm nodes).
#[test]
fn a_crash_loop_that_recovered_is_no_finding() {
    let dir = ok(tempfile::tempdir());
    let log = dir.path().join("kubelet.log");
    let exit = "E1129 07:58:00.090000    1000 run.go:74] \"command failed\" err=\"failed to load kubelet config file, path: /var/lib/kubelet/config.yaml, error: open /var/lib/kubelet/config.yaml: no such file or directory\"\n";
    let running = (0..6)
        .map(|m| {
            format!(
                "I1129 08:0{m}:00.000000    1100 reflector.go:368] \"Caches populated\" type=\"*v1.Node\"\n"
            )
        })
        .collect::<String>();
    ok(std::fs::write(&log, format!("{exit}{running}")));
    let (code, out, err) = podcoroner(&args(&[
        "diagnose",
        "--offline",
        "--kubelet-log",
        &log.display().to_string(),
    ]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("KubeletStartFailing"), "{out}");
    // The same exit with the log ending there: the kubelet is not running.
    ok(std::fs::write(&log, exit));
    let (code, out, _) = podcoroner(&args(&[
        "diagnose",
        "--offline",
        "--kubelet-log",
        &log.display().to_string(),
    ]));
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("KubeletStartFailing"), "{out}");
}

/// Two nodes' logs given as one node's (`--kubelet-log` twice, from two hosts) are said to be
/// so: their records would be judged together, one node's hiding another's finding (fresh user
/// 40). The same host by its short name and its FQDN is one host.
#[test]
fn logs_of_two_hosts_are_no_clean_bill() {
    let dir = ok(tempfile::tempdir());
    let line = |host: &str| {
        format!(
            "Nov 29 10:00:00 {host} kubelet[1234]: I1129 10:00:00.000000    1234 kubelet.go:2431] \"SyncLoop ADD\" source=\"api\" pods=[\"shop/cart-0\"]\n"
        )
    };
    let write = |name: &str, host: &str| {
        let path = dir.path().join(name);
        ok(std::fs::write(&path, line(host)));
        path.display().to_string()
    };
    let (a, b, fqdn) = (
        write("a.log", "node-a"),
        write("b.log", "node-b"),
        write("a-fqdn.log", "node-a.example.com"),
    );
    let diagnose = |logs: [&str; 2]| {
        podcoroner(&args(&[
            "diagnose",
            "--offline",
            "--kubelet-log",
            logs[0],
            "--kubelet-log",
            logs[1],
        ]))
    };
    let (_, out, err) = diagnose([&a, &b]);
    assert!(
        out.contains("not a clean bill: kubelet_log, kubelet_log_2 name more than one host")
            && out
                .contains("its records are host node-a's, the logs read are node-a's and node-b's"),
        "{out}\n{err}"
    );
    let (_, out, err) = diagnose([&a, &fqdn]);
    assert!(!out.contains("more than one host"), "{out}\n{err}");
    // A node renamed as it was set up (the image's default name, then its own): its logs end
    // under one name (the adversarial run of stop 40).
    let renamed = dir.path().join("renamed.log");
    ok(std::fs::write(
        &renamed,
        format!("{}{}{}", line("ubuntu"), line("ubuntu"), line("node-a")),
    ));
    let (_, out, err) = diagnose([&renamed.display().to_string(), &a]);
    assert!(!out.contains("more than one host"), "{out}\n{err}");
}

/// A piped log of December 31st read before its year's end: its yearless times are last
/// year's, and the year note says so (it said "the year it was read in": fresh user 40).
#[test]
fn a_piped_logs_year_note_says_the_year_before() {
    let out = podcoroner_piped(
        &["diagnose", "--offline", "--kubelet-log", "-", "-o", "json"],
        b"I1231 23:59:59.000000    1234 kubelet.go:2431] \"SyncLoop ADD\" source=\"api\" pods=[\"shop/cart-0\"]\n",
    );
    let json: serde_json::Value = ok(serde_json::from_slice(&out.stdout));
    let detail = json["sources"]["kubelet_log"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(
        detail.contains("the year before it was read in: in ")
            && detail.contains(" its times would be after now"),
        "{detail}"
    );
}
