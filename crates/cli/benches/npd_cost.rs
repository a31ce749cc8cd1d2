//! The agent's cost beside node-problem-detector's, in one run, on the same input: a kubelet log
//! growing 100 lines per second, the lines drawn in order from the real kubelet logs of
//! `testdata/cases/*/` with fresh IDs (every 64-hex sandbox or container ID and every pod UID
//! replaced, consistently within one pass over the cases) and the klog header's time set to now.
//!
//! - node-problem-detector v0.8.20 (`NPD_VERSION`), built from the Go module proxy into a
//!   generated module under `target/npd/` (built once per version, flags and `go version`;
//!   never committed), runs its `filelog` system log monitor on the log with the kubelet
//!   messages of podcoroner's catalogue (`podcoroner_core::logs::catalogue::message_keys`) as its rules:
//!   by default one rule whose pattern is their alternation (NPD compiles each rule's pattern at
//!   every line, so this is its cheapest form of the same messages), or with
//!   `PODCORONER_NPD_RULE_PER_KEY=1` one rule per message, as an operator writes them.
//! - `podcoroner daemon` runs on a real containerd lab (20 pods and one leaked sandbox), with
//!   `--pods`, at its default intervals.
//!
//! Each runs alone for the window (`PODCORONER_NPD_SECS`, default 30 s) after a warm-up; halfway
//! a `Failed to stop sandbox before removing` line names the lab's leaked sandbox, and the time
//! until it shows (podcoroner: in `/findings`; NPD: in its `problem_counter` metric) is the
//! latency. Reported: CPU (share of one core, utime + stime from /proc), peak RSS (VmHWM), the
//! latency, and the ratios against the goals (agent CPU <= 0.2x NPD's, RSS <= NPD's, < 2 s).
//!
//! `cargo bench -p podcoroner --bench npd_cost` (root, containerd and Go 1.23+ installed; about
//! 2 min after the first NPD build). `PODCORONER_NPD_PERF=FILE` records the daemon's window
//! with `perf record -g` into FILE.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

#[path = "support/mod.rs"]
mod common;
use common::{LabNode, cpu_ticks, free_port, status_kib};

/// The node-problem-detector release measured.
const NPD_VERSION: &str = "v0.8.20";
/// Build tags: the exporters and monitors this benchmark does not run are left out.
const NPD_TAGS: &str =
    "disable_stackdriver_exporter disable_system_stats_monitor disable_custom_plugin_monitor";
const NODE: &str = "npd-bench-node";
const PODS: usize = 20;
const LINES_PER_SEC: u64 = 100;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Builds node-problem-detector into `target/npd/bin`, once per version, tags and Go version.
///
/// A generated module requires `k8s.io/node-problem-detector` at [`NPD_VERSION`] and builds its
/// `cmd/nodeproblemdetector`; its `go.sum` is NPD's own (the module's dependencies are checked
/// against the sums NPD ships), and NPD itself is exempt from the checksum database
/// (`GONOSUMDB`), which does not serve it through the module proxy.
fn npd_binary() -> PathBuf {
    let root = workspace().join("target/npd");
    let bin = root.join("bin/node-problem-detector");
    let go_version = run(Command::new("go").arg("version"));
    let stamp = format!("{NPD_VERSION}\n{NPD_TAGS}\n{go_version}");
    if bin.exists() && std::fs::read_to_string(root.join("stamp")).ok().as_deref() == Some(&stamp) {
        return bin;
    }
    let module = root.join("go");
    std::fs::create_dir_all(&module).unwrap();
    let go = |args: &[&str]| {
        let mut c = Command::new("go");
        c.args(args)
            .current_dir(&module)
            .env("GONOSUMDB", "k8s.io/node-problem-detector")
            .env("GOFLAGS", "-mod=mod")
            .env("CGO_ENABLED", "0");
        c
    };
    std::fs::write(
        module.join("go.mod"),
        format!(
            "module podcoroner.invalid/npd-bench\n\ngo 1.23.1\n\nrequire k8s.io/node-problem-detector {NPD_VERSION}\n"
        ),
    )
    .unwrap();
    let info: serde_json::Value = serde_json::from_str(&run(&mut go(&[
        "mod",
        "download",
        "-json",
        &format!("k8s.io/node-problem-detector@{NPD_VERSION}"),
    ])))
    .unwrap();
    let dir = PathBuf::from(info["Dir"].as_str().expect("the module's directory"));
    std::fs::copy(dir.join("go.sum"), module.join("go.sum")).unwrap();
    eprintln!("building node-problem-detector {NPD_VERSION} (first run only)");
    run(&mut go(&[
        "build",
        "-trimpath",
        "-tags",
        NPD_TAGS,
        "-o",
        bin.to_str().unwrap(),
        "k8s.io/node-problem-detector/cmd/nodeproblemdetector",
    ]));
    std::fs::write(root.join("stamp"), stamp).unwrap();
    bin
}

/// Whether `line` starts with a klog header (`I1201 15:04:05.123456`).
fn klog_header(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() > 21
        && b"IWEF".contains(&b[0])
        && b[1..5].iter().all(u8::is_ascii_digit)
        && b[5] == b' '
        && b[8] == b':'
        && b[14] == b'.'
}

/// The kubelet's klog records of every case, in order, as a kubelet log file holds them: each
/// line from its klog header on (a syslog or journal prefix, a `grep -n` or a quote left out).
fn case_lines() -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(workspace().join("testdata/cases"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .filter(|d| d.is_dir())
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|f| f.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !matches!(n, "expected.md" | "findings.txt" | "source.txt"))
        })
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|t| {
            t.lines()
                .filter_map(|l| {
                    let start = (0..l.len().min(80))
                        .find(|&i| l.is_char_boundary(i) && klog_header(&l[i..]))?;
                    Some(l[start..].to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A hex ID derived from `orig` and the pass `n`: the same ID within a pass, fresh in the next.
fn fresh_hex(orig: &str, n: u64, len: usize) -> String {
    use std::hash::{BuildHasher as _, BuildHasherDefault, DefaultHasher};
    let h = BuildHasherDefault::<DefaultHasher>::default().hash_one((orig, n));
    let mut s = String::new();
    let mut i = 0u64;
    while s.len() < len {
        s.push_str(&format!("{:016x}", h.rotate_left(i as u32 * 7) ^ i));
        i += 1;
    }
    s.truncate(len);
    s
}

/// `line` with its IDs fresh for pass `n` and its klog time now.
fn freshen(line: &str, n: u64) -> String {
    let now = common::klog_now();
    let mut out = String::with_capacity(line.len());
    out.push_str(&line[..1]);
    out.push_str(&now);
    let rest = &line[21..];
    let b = rest.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && (b[i].is_ascii_hexdigit() || b[i] == b'-') {
            i += 1;
        }
        if i == start {
            let c = rest[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let run = &rest[start..i];
        let hex64 = run.len() == 64 && run.bytes().all(|c| c.is_ascii_hexdigit());
        let parts: Vec<usize> = run.split('-').map(str::len).collect();
        let uuid = parts == [8, 4, 4, 4, 12];
        if hex64 {
            out.push_str(&fresh_hex(run, n, 64));
        } else if uuid {
            let h = fresh_hex(run, n, 32);
            out.push_str(&format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            ));
        } else {
            out.push_str(run);
        }
    }
    out.push('\n');
    out
}

/// What one process cost over the window.
struct Cost {
    cpu_percent: f64,
    hwm_mib: f64,
    latency: Option<Duration>,
    lines: u64,
}

/// Writes the case lines into `log` at [`LINES_PER_SEC`] for `window` while `pid` runs, the
/// stop failure of `sandbox` halfway, and times `seen` (polled every 20 ms) from that line.
fn measure(
    pid: u32,
    log: &Path,
    lines: &[String],
    window: Duration,
    sandbox: &str,
    seen: &dyn Fn() -> bool,
) -> Cost {
    let ticks0 = cpu_ticks(pid);
    let t0 = Instant::now();
    let mut f = std::fs::OpenOptions::new().append(true).open(log).unwrap();
    let mut written: u64 = 0;
    let mut latency = None;
    let mut failure_written: Option<Instant> = None;
    while t0.elapsed() < window {
        let due = (t0.elapsed().as_secs_f64() * LINES_PER_SEC as f64) as u64;
        let mut batch = String::new();
        while written < due {
            let i = (written % lines.len() as u64) as usize;
            batch.push_str(&freshen(&lines[i], written / lines.len() as u64));
            written += 1;
        }
        if failure_written.is_none() && t0.elapsed() >= window / 2 {
            batch.push_str(&common::gc_stop_failed_line(sandbox));
            failure_written = Some(Instant::now());
        }
        f.write_all(batch.as_bytes()).unwrap();
        if let Some(at) = failure_written
            && latency.is_none()
            && seen()
        {
            latency = Some(at.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let secs = t0.elapsed().as_secs_f64();
    let ticks = cpu_ticks(pid) - ticks0;
    Cost {
        cpu_percent: ticks as f64 / 100.0 / secs * 100.0,
        hwm_mib: status_kib(pid, "VmHWM:") as f64 / 1024.0,
        latency,
        lines: written,
    }
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
}

/// NPD's filelog monitor config for `log`, with the catalogue's messages as rules.
fn npd_config(log: &Path) -> (serde_json::Value, usize) {
    let escape = |k: &str| {
        let mut s = String::new();
        for c in k.chars() {
            if "\\.+*?()|[]{}^$".contains(c) {
                s.push('\\');
            }
            s.push(c);
        }
        s
    };
    let keys = podcoroner_core::logs::catalogue::message_keys();
    let mut rules = vec![json!({"type": "temporary", "reason": "SandboxStopFailing",
        "pattern": ".*Failed to stop sandbox before removing.*"})];
    if std::env::var_os("PODCORONER_NPD_RULE_PER_KEY").is_some() {
        for (i, k) in keys.iter().enumerate() {
            rules.push(
                json!({"type": "temporary", "reason": format!("KubeletMessage{i}"),
                "pattern": format!(".*{}.*", escape(k))}),
            );
        }
    } else {
        let alternation = keys.iter().map(|k| escape(k)).collect::<Vec<_>>().join("|");
        rules.push(json!({"type": "temporary", "reason": "KubeletMessage",
            "pattern": format!(".*(?:{alternation}).*")}));
    }
    let n = rules.len();
    (
        json!({
            "plugin": "filelog",
            "pluginConfig": {
                "timestamp": "^.(\\d{4} \\d{2}:\\d{2}:\\d{2}\\.\\d{6})",
                "message": "^.\\d{4} \\d{2}:\\d{2}:\\d{2}\\.\\d{6}\\s+\\d+\\s+\\S+\\] (.*)",
                "timestampFormat": "0102 15:04:05.000000"
            },
            "logPath": log,
            "lookback": "1m",
            "bufferSize": 1,
            "source": "kubelet-monitor",
            "conditions": [],
            "rules": rules
        }),
        n,
    )
}

#[tokio::main]
async fn main() {
    let window = Duration::from_secs(
        std::env::var("PODCORONER_NPD_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(30),
    );
    let npd = npd_binary();
    let lines = case_lines();
    assert!(lines.len() > 100, "{} case lines", lines.len());
    let node = LabNode::start(NODE, PODS, None).await;
    let leaked = node.leaked.clone();
    let dir = &node.dir;

    // node-problem-detector.
    let npd_log = dir.path().join("npd-kubelet.log");
    std::fs::write(&npd_log, "").unwrap();
    let (config, rules) = npd_config(&npd_log);
    let config_path = dir.path().join("kubelet-monitor.json");
    std::fs::write(&config_path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    let npd_port = free_port();
    let child = Command::new(&npd)
        .arg(format!(
            "--config.system-log-monitor={}",
            config_path.display()
        ))
        .args([
            "--enable-k8s-exporter=false",
            "--prometheus-address=127.0.0.1",
            &format!("--prometheus-port={npd_port}"),
            "--address=127.0.0.1",
            &format!("--port={}", free_port()),
            &format!("--hostname-override={NODE}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    while common::get(npd_port, "/metrics").0 != 200 {
        assert!(
            Instant::now() < deadline,
            "node-problem-detector did not start"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(5));
    let npd_seen = || {
        common::get(npd_port, "/metrics").1.lines().any(|l| {
            l.starts_with("problem_counter{")
                && l.contains("reason=\"SandboxStopFailing\"")
                && !l.ends_with(" 0")
        })
    };
    let npd_cost = measure(pid, &npd_log, &lines, window, &leaked, &npd_seen);
    stop(child);

    // podcoroner daemon.
    let log = dir.path().join("kubelet.log");
    std::fs::write(&log, "").unwrap();
    let port = free_port();
    let child = node
        .daemon(NODE, port)
        .arg("--kubelet-log")
        .arg(&log)
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !common::get(port, "/readyz").1.contains("\"ready\":true") {
        assert!(Instant::now() < deadline, "the daemon was not ready");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(5));
    let ours_seen = || {
        common::get(port, "/findings?kind=SandboxStopFailing")
            .1
            .contains(&leaked)
    };
    // `PODCORONER_NPD_PERF=FILE`: the daemon's window sampled by `perf record` into FILE.
    let perf = std::env::var_os("PODCORONER_NPD_PERF").map(|out| {
        Command::new("perf")
            .args(["record", "-F", "997", "-g", "-p", &pid.to_string(), "-o"])
            .arg(out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("perf")
    });
    let ours = measure(pid, &log, &lines, window, &leaked, &ours_seen);
    if ours.latency.is_none() {
        eprintln!(
            "not seen: /findings?kind=SandboxStopFailing: {}\n/readyz: {}",
            common::get(port, "/findings?kind=SandboxStopFailing")
                .1
                .chars()
                .take(1500)
                .collect::<String>(),
            common::get(port, "/readyz").1
        );
    }
    if let Some(p) = perf {
        let _ = Command::new("kill")
            .arg("-INT")
            .arg(p.id().to_string())
            .status();
        let _ = p.wait_with_output();
    }
    stop(child);

    let ms = |l: Option<Duration>| {
        l.map_or("not seen".to_string(), |l| {
            format!("{:.0} ms", l.as_secs_f64() * 1000.0)
        })
    };
    println!(
        "{} s each, {LINES_PER_SEC} lines/s from {} real case lines; NPD {NPD_VERSION} with {rules} filelog rule(s) over {} catalogue messages",
        window.as_secs(),
        lines.len(),
        podcoroner_core::logs::catalogue::message_keys().len()
    );
    println!("| measure | podcoroner daemon | node-problem-detector | ratio | goal |");
    println!("|---|---|---|---|---|");
    println!(
        "| lines written | {} | {} | | |",
        ours.lines, npd_cost.lines
    );
    println!(
        "| CPU, share of one core | {:.2}% | {:.2}% | {:.2}x | <= 0.20x |",
        ours.cpu_percent,
        npd_cost.cpu_percent,
        ours.cpu_percent / npd_cost.cpu_percent
    );
    println!(
        "| peak RSS (VmHWM) | {:.1} MiB | {:.1} MiB | {:.2}x | <= 1.00x |",
        ours.hwm_mib,
        npd_cost.hwm_mib,
        ours.hwm_mib / npd_cost.hwm_mib
    );
    println!(
        "| log line -> finding | {} (/findings) | {} (problem_counter) | | < 2000 ms |",
        ms(ours.latency),
        ms(npd_cost.latency)
    );
}
