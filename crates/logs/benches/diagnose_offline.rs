//! The whole `podcoroner diagnose --offline` path (read, classify, rules, report) beside
//! `rg -c -F` with the catalogue's message set, on the same file in the same run (issue 10).
//!
//! Run with `cargo build --release -p podcoroner && cargo bench -p podcoroner-logs --bench
//! diagnose_offline` (it runs `target/release/podcoroner`; needs `rg`: `apt-get install -y
//! ripgrep`, and `/usr/bin/time` for the peak RSS). It lives here rather than in the CLI crate so
//! that it builds without the CLI's integration-test dependencies. Three logs, each at 256 MiB, 512 MiB and
//! 1 GiB (`PODCORONER_BENCH_LOG_MIB` sets the largest; the others are its half and quarter;
//! `PODCORONER_BENCH_LOGS=healthy,troubled` picks logs):
//! - `healthy`: a healthy node's log with the case lines spread in it (the `log_throughput`
//!   generator, about 0.35% events);
//! - `troubled`: only the lines of `testdata/cases/`, repeated with their own IDs (the same
//!   pods failing again and again);
//! - `troubled-fresh`: the same with fresh IDs per repetition (new pods failing);
//!
//! and, when named in `PODCORONER_BENCH_LOGS`, two shapes that once read in quadratic time:
//! - `cri-format`: the healthy log as a kubelet run in a container logs it (kind, k3d);
//! - `no-shape`: lines of no known shape.
//!
//! Each input is built once under `target/bench-logs/diagnose-v1-<cases>/` (`<cases>`: a
//! fingerprint of the case files, so that a case added builds them again). For every file: `rg` and
//! `podcoroner diagnose --offline --kubelet-log FILE -o json --fail-on none` (the release
//! binary) from the page cache, best of [`RUNS`] (`PODCORONER_BENCH_RUNS`) wall time, with that
//! run's CPU time (user plus system, `%U` + `%S`) and the peak RSS (`%M` of `/usr/bin/time`).
//! `x prev` and `cpu prev` divide a file's wall and CPU time by those of the file half its size
//! (a row whose `cpu prev` is over 2.5 says `THE CPU TIME MORE THAN DOUBLES`):
//! on a 2-core VM whose page cache cannot hold every input, wall time also counts the disk and
//! the neighbours, and the CPU ratio tells whether the work itself more than doubles. A run longer than `PODCORONER_BENCH_TIMEOUT_S` (default 900 s) is stopped
//! and shown as such.
//!
//! `PODCORONER_BENCH_BASELINE=/path/to/podcoroner` (an older build, say) runs that binary too on
//! every file, right after the release binary, and prints its wall and peak beside; its report
//! must equal the release binary's (less `generated_at`), or the row says so.

#![allow(missing_docs)]
// A benchmark reports on stdout.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use podcoroner_core::logs::catalogue::message_keys;

#[path = "support/node_log.rs"]
mod node_log;

/// Timed runs of each tool by default (`PODCORONER_BENCH_RUNS`); the best is reported.
const RUNS: usize = 2;
/// Bumped whenever a generator changes, so a stale cached input is not reused.
const INPUT_VERSION: u32 = 1;
const MIB: u64 = 1 << 20;
/// A file's CPU time over that of the file half its size above which the row says the work
/// more than doubles (2 is linear; the noise of this 2-core VM reaches about 2.3).
const SUPERLINEAR: f64 = 2.5;

#[derive(Clone, Copy)]
enum Kind {
    Healthy,
    Troubled,
    TroubledFresh,
    CriFormat,
    NoShape,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Healthy => "healthy",
            Kind::Troubled => "troubled",
            Kind::TroubledFresh => "troubled-fresh",
            Kind::CriFormat => "cri-format",
            Kind::NoShape => "no-shape",
        }
    }

    fn generate(self, path: &Path, bytes: u64) {
        match self {
            Kind::Healthy => node_log::generate(path, bytes),
            Kind::Troubled => node_log::generate_troubled(path, bytes, false),
            Kind::TroubledFresh => node_log::generate_troubled(path, bytes, true),
            Kind::CriFormat => node_log::generate_cri(path, bytes),
            Kind::NoShape => node_log::generate_no_shape(path, bytes),
        }
    }
}

fn main() {
    let mib: u64 = std::env::var("PODCORONER_BENCH_LOG_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let timeout: u64 = std::env::var("PODCORONER_BENCH_TIMEOUT_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(900);
    let kinds: Vec<Kind> = match std::env::var("PODCORONER_BENCH_LOGS").ok().as_deref() {
        Some(list) => [
            Kind::Healthy,
            Kind::Troubled,
            Kind::TroubledFresh,
            Kind::CriFormat,
            Kind::NoShape,
        ]
        .into_iter()
        .filter(|k| list.split(',').any(|n| n == k.name()))
        .collect(),
        None => vec![Kind::Healthy, Kind::Troubled, Kind::TroubledFresh],
    };
    let runs: usize = std::env::var("PODCORONER_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUNS);
    // target/<profile>/deps/<bench> → target/release/podcoroner
    let podcoroner = std::env::current_exe()
        .expect("current exe")
        .ancestors()
        .nth(3)
        .expect("bench binary under target/")
        .join("release/podcoroner");
    if !podcoroner.is_file() {
        println!(
            "{} not found: build it first with `cargo build --release -p podcoroner`",
            podcoroner.display()
        );
        return;
    }
    let Some(rg) = node_log::which("rg") else {
        println!("rg not found: install it with `apt-get install -y ripgrep`");
        return;
    };
    let mut rg_args = vec!["-c".to_string(), "-F".to_string()];
    for key in message_keys() {
        rg_args.push("-e".to_string());
        rg_args.push((*key).to_string());
    }
    let baseline: Option<PathBuf> =
        std::env::var_os("PODCORONER_BENCH_BASELINE").map(PathBuf::from);
    let started = Instant::now();
    println!(
        "diagnose --offline beside rg -c -F ({} patterns); {} cores, load average at start {}",
        message_keys().len(),
        std::thread::available_parallelism().map_or(1, usize::from),
        loadavg()
    );
    if let Some(b) = &baseline {
        println!("baseline: {}", b.display());
    }
    println!(
        "{:<15} {:>6} {:>10} {:>8} {:>7} {:>9} {:>9} {:>7} {:>8} {:>7} {:>9}  result",
        "log",
        "MiB",
        "diagnose s",
        "rg s",
        "x rg",
        "peak MiB",
        "x prev",
        "cpu s",
        "cpu prev",
        "base s",
        "base MiB"
    );
    for kind in kinds {
        let files = input(kind, &[mib / 4, mib / 2, mib]);
        let mut prev: Option<(f64, f64)> = None;
        for file in &files {
            let bytes = std::fs::metadata(file).expect("input").len();
            drop(std::fs::read(file)); // page cache
            let rg_time = node_log::best_of(runs, || {
                let t = Instant::now();
                let out = Command::new(&rg)
                    .args(&rg_args)
                    .arg(file)
                    .stdin(Stdio::null())
                    .output()
                    .expect("run rg");
                (
                    t.elapsed(),
                    String::from_utf8_lossy(&out.stdout).trim().to_string(),
                )
            });
            let run = node_log::best_of(runs, || {
                let r = diagnose(&podcoroner, file, timeout);
                (r.wall, r)
            })
            .1;
            let base = baseline.as_ref().map(|b| {
                node_log::best_of(runs, || {
                    let r = diagnose(b, file, timeout);
                    (r.wall, r)
                })
                .1
            });
            let secs = run.wall.as_secs_f64();
            let cpu = run.cpu_secs;
            let (growth, cpu_growth) = prev.map_or(("-".to_string(), "-".to_string()), |(p, c)| {
                (format!("{:.2}", secs / p), format!("{:.2}", cpu / c))
            });
            // The work more than doubling with the input: a rule gone superlinear (stop 42's
            // fresh-ID log: 3.2 to 3.5 per doubling, a scan of every record per pod).
            let superlinear = match prev {
                Some((_, c)) if cpu / c > SUPERLINEAR => "; THE CPU TIME MORE THAN DOUBLES",
                _ => "",
            };
            prev = Some((secs, cpu));
            let (base_s, base_mib, same) = match &base {
                Some(b) => (
                    format!("{:.3}", b.wall.as_secs_f64()),
                    format!("{:.1}", b.peak_kib as f64 / 1024.0),
                    if b.report == run.report {
                        ""
                    } else {
                        "; THE BASELINE'S REPORT DIFFERS"
                    },
                ),
                None => ("-".to_string(), "-".to_string(), ""),
            };
            println!(
                "{:<15} {:>6.0} {:>10} {:>8.3} {:>7} {:>9.1} {:>9} {:>7.2} {:>8} {:>7} {:>9}  {}; rg: {} lines{same}{superlinear}",
                kind.name(),
                bytes as f64 / MIB as f64,
                if run.timed_out {
                    format!(">{timeout}")
                } else {
                    format!("{secs:.3}")
                },
                rg_time.0.as_secs_f64(),
                format!("{:.2}", secs / rg_time.0.as_secs_f64()),
                run.peak_kib as f64 / 1024.0,
                growth,
                cpu,
                cpu_growth,
                base_s,
                base_mib,
                run.summary,
                rg_time.1
            );
        }
    }
    println!(
        "load average at end {}; total bench time {:.0} s",
        loadavg(),
        started.elapsed().as_secs_f64()
    );
}

struct Run {
    wall: Duration,
    /// User plus system CPU time (`%U` + `%S`): unlike wall time, it does not count waiting for
    /// the disk or for a busy machine's cores, so it tells whether the work itself doubles.
    cpu_secs: f64,
    peak_kib: u64,
    timed_out: bool,
    summary: String,
    /// A hash of the JSON report's lines less its `generated_at`.
    report: u64,
}

/// `podcoroner diagnose --offline` on `file` under `/usr/bin/time` (and `timeout`).
fn diagnose(podcoroner: &Path, file: &Path, timeout: u64) -> Run {
    let t = Instant::now();
    let out = Command::new("timeout")
        .arg(timeout.to_string())
        .args(["/usr/bin/time", "-f", "peak-kib %M\ncpu-s %U %S"])
        .arg(podcoroner)
        .args(["diagnose", "--offline", "--kubelet-log"])
        .arg(file)
        .args(["-o", "json", "--fail-on", "none"])
        .stdin(Stdio::null())
        .output()
        .expect("run timeout /usr/bin/time podcoroner");
    let wall = t.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak_kib = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("peak-kib "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let cpu_secs = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("cpu-s "))
        .map_or(0.0, |v| {
            v.split_whitespace()
                .filter_map(|x| x.parse::<f64>().ok())
                .sum()
        });
    let timed_out = out.status.code() == Some(124);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    // Every finding, listed or past `--max-findings-per-kind` (`omitted`).
    let findings: u64 = ["critical", "warning", "info"]
        .iter()
        .filter_map(|s| json["summary"][s].as_u64())
        .sum();
    let events = json["sources"]["kubelet_log"]["counts"]["events"]
        .as_u64()
        .unwrap_or(0);
    let summary = if timed_out {
        "stopped at the timeout".to_string()
    } else if json.is_object() && !out.status.success() {
        // Exit 2: a source not understood, said in the report.
        format!(
            "exit {}, kubelet log {}: {findings} findings from {events} events",
            out.status.code().unwrap_or(-1),
            json["sources"]["kubelet_log"]["status"]
                .as_str()
                .unwrap_or("?")
        )
    } else if !out.status.success() {
        format!("failed: {}", stderr.lines().last().unwrap_or(""))
    } else {
        format!("{findings} findings from {events} events")
    };
    let report = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        out.stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.trim_ascii_start().starts_with(b"\"generated_at\""))
            .for_each(|l| l.hash(&mut h));
        h.finish()
    };
    Run {
        wall,
        cpu_secs,
        peak_kib,
        timed_out,
        summary,
        report,
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split(' ')
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cached inputs of `kind`, one per size in MiB (each a prefix of the largest), each alone
/// in its own folder so that no rotated sibling is picked up.
fn input(kind: Kind, sizes: &[u64]) -> Vec<PathBuf> {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<bench> → target/
    let target = exe
        .ancestors()
        .nth(3)
        .expect("bench binary under target/")
        .to_path_buf();
    let root = target
        .join("bench-logs")
        .join(format!(
            "diagnose-v{INPUT_VERSION}-{}",
            node_log::cases_fingerprint()
        ))
        .join(kind.name());
    let largest = *sizes.iter().max().expect("sizes");
    let path_of = |mib: u64| root.join(format!("{mib}m")).join("kubelet.log");
    let big = path_of(largest);
    if !big.is_file() {
        std::fs::create_dir_all(big.parent().expect("parent")).expect("mkdir");
        let tmp = big.with_extension("tmp");
        kind.generate(&tmp, largest * MIB);
        std::fs::rename(&tmp, &big).expect("rename");
    }
    sizes
        .iter()
        .map(|&mib| {
            let p = path_of(mib);
            if !p.is_file() {
                std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
                node_log::copy_prefix(&big, &p, mib * MIB);
            }
            p
        })
        .collect()
}
