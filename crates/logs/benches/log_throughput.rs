//! Log-reading throughput and memory: podcoroner's full read path on a 1 GiB node log, beside
//! `wc -l` and `rg -c` with the catalogue's message set, in one run (issue 3, "Tests").
//!
//! Run with `cargo bench -p podcoroner-logs --bench log_throughput` (needs `rg`:
//! `apt-get install -y ripgrep`). `PODCORONER_BENCH_LOG_MIB` sets the size (default 1024).
//!
//! The input is built once and cached under `target/bench-logs/`: the real lines of every log
//! file in `testdata/cases/` (legacy and structured klog, kubelet JSON, syslog and journald
//! prefixes, containerd and CRI-O logfmt, wrapped and cut lines, shell prompts), each case file
//! repeated with fresh 64-hex IDs, UUIDs and 32-hex UIDs per repetition, spread between the
//! lines a healthy node writes most of the time (probes, volume reconciler, status manager,
//! cAdvisor stats, containerd exec probes and image events, a few SyncLoop and PLEG events).
//! The catalogue names about 0.35% of the records as events (the table prints the ratio);
//! [`read`] keeps every event, so its memory grows with them, while the reading itself stays
//! flat.
//!
//! Measured, each on the same file from the page cache (it is read once first):
//! - `wc -l`, `rg -c` (one `-F -e` per [`message_keys`] entry), and [`read`] as `diagnose`
//!   calls it (every line counted, every record parsed and classified, the events kept), best of
//!   [`RUNS`];
//! - the peak RSS (`VmHWM`) of a child process that reads 256 MiB, 512 MiB and 1 GiB prefixes
//!   with [`read`] (every event kept, as `diagnose` does: memory grows with the events, about
//!   1 KiB each) and with [`read_each`] (events counted as they come: flat).

#![allow(missing_docs)]
// A benchmark reports on stdout.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use podcoroner_core::logs::catalogue::message_keys;
use podcoroner_logs::{LogKind, Source, read, read_each};

/// Timed runs of each tool; the best is reported.
const RUNS: usize = 3;
/// Bumped whenever the generator changes, so a stale cached input is not reused.
const INPUT_VERSION: u32 = 1;
const MIB: u64 = 1 << 20;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--rss-child") {
        rss_child(
            Path::new(&args[at + 1]),
            args.get(at + 2).is_some_and(|m| m == "keep"),
        );
        return;
    }
    let mib: u64 = std::env::var("PODCORONER_BENCH_LOG_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let started = Instant::now();
    let sizes = [mib / 4, mib / 2, mib];
    let files = input(&sizes);
    let big = files.last().expect("three sizes");
    let bytes = std::fs::metadata(big).expect("input").len();
    // Warm the page cache so every tool reads from memory.
    drop(std::fs::read(big));

    let mut rows = Vec::new();
    let wc = node_log::best_of(RUNS, || command_count("wc", &["-l"], big));
    rows.push(Row::new("wc -l", wc.0, bytes, format!("{} lines", wc.1)));
    let mut rg_args = vec!["-c".to_string(), "-F".to_string()];
    for key in message_keys() {
        rg_args.push("-e".to_string());
        rg_args.push((*key).to_string());
    }
    let rg_args: Vec<&str> = rg_args.iter().map(String::as_str).collect();
    let rg = node_log::which("rg")
        .map(|_| node_log::best_of(RUNS, || command_count("rg", &rg_args, big)));
    match rg {
        Some(rg) => rows.push(Row::new(
            &format!("rg -c -F ({} patterns)", message_keys().len()),
            rg.0,
            bytes,
            format!("{} matching lines", rg.1),
        )),
        None => println!("rg not found: install it with `apt-get install -y ripgrep`"),
    }
    let source = Source::File(big.clone());
    let (pc_time, summary) = node_log::best_of(RUNS, || {
        let t = Instant::now();
        let res = read(&source, LogKind::Kubelet, None).expect("read");
        let el = t.elapsed();
        let s = format!(
            "{} lines, {} parsed, {} unparsed, {} events ({:.2}% of records)",
            res.lines,
            res.parsed,
            res.unparsed,
            res.events.len(),
            100.0 * res.events.len() as f64 / (res.parsed + res.unparsed).max(1) as f64
        );
        (el, s)
    });
    rows.push(Row::new("podcoroner read", pc_time, bytes, summary));

    println!();
    println!(
        "log throughput on {} ({:.0} MiB, page cache, best of {RUNS}; {} cores, load average {})",
        big.display(),
        bytes as f64 / MIB as f64,
        std::thread::available_parallelism().map_or(1, usize::from),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split(' ')
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("{:<28} {:>8} {:>10}  result", "tool", "seconds", "MB/s");
    for r in &rows {
        println!(
            "{:<28} {:>8.3} {:>10.0}  {}",
            r.name, r.secs, r.mb_per_s, r.note
        );
    }
    if let Some(rg) = rg {
        println!(
            "podcoroner / rg -c speed: {:.2}x",
            rg.0.as_secs_f64() / pc_time.as_secs_f64()
        );
    }

    println!();
    println!("peak RSS (VmHWM of a child process that only reads the file)");
    println!(
        "{:>10} {:>10} {:>22} {:>24}",
        "input MiB", "events", "read (keeps events) MiB", "read_each (counts) MiB"
    );
    for f in &files {
        let len = std::fs::metadata(f).expect("input").len();
        let (keep_kib, events) = rss_of(f, "keep");
        let (count_kib, _) = rss_of(f, "count");
        println!(
            "{:>10.0} {:>10} {:>22.1} {:>24.1}",
            len as f64 / MIB as f64,
            events,
            keep_kib as f64 / 1024.0,
            count_kib as f64 / 1024.0
        );
    }
    println!();
    println!("total bench time {:.0} s", started.elapsed().as_secs_f64());
}

struct Row {
    name: String,
    secs: f64,
    mb_per_s: f64,
    note: String,
}

impl Row {
    fn new(name: &str, t: Duration, bytes: u64, note: String) -> Row {
        Row {
            name: name.to_string(),
            secs: t.as_secs_f64(),
            mb_per_s: bytes as f64 / 1e6 / t.as_secs_f64(),
            note,
        }
    }
}

/// Runs `program args file` and returns its wall time and its output's first number.
fn command_count(program: &str, args: &[&str], file: &Path) -> (Duration, u64) {
    let t = Instant::now();
    let out = Command::new(program)
        .args(args)
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let el = t.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    let n = text
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{program} printed {text:?}"));
    (el, n)
}

/// Reads `file` in a child process (`mode` `keep`: [`read`], keeping every event; `count`:
/// [`read_each`], counting them); returns its VmHWM in KiB and the number of events.
fn rss_of(file: &Path, mode: &str) -> (u64, usize) {
    let exe = std::env::current_exe().expect("current exe");
    let out = Command::new(exe)
        .arg("--rss-child")
        .arg(file)
        .arg(mode)
        .stdin(Stdio::null())
        .output()
        .expect("run the rss child");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut it = text.split_whitespace().map(|w| w.parse::<u64>().ok());
    match (it.next().flatten(), it.next().flatten()) {
        (Some(hwm), Some(events)) => (hwm, events as usize),
        _ => panic!(
            "rss child printed {text:?} {:?}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn rss_child(file: &Path, keep: bool) {
    let source = Source::File(file.to_path_buf());
    let events = if keep {
        let res = read(&source, LogKind::Kubelet, None).expect("read");
        res.events.len()
    } else {
        let mut n = 0;
        read_each(&source, LogKind::Kubelet, None, |_| n += 1).expect("read_each");
        n
    };
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmHWM");
    println!("{hwm} {events}");
}

// === input ===

/// The cached input files, one per size in MiB (each a prefix of the largest), each alone in its
/// own folder so that no rotated sibling is picked up.
fn input(sizes: &[u64]) -> Vec<PathBuf> {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<bench> → target/
    let target = exe
        .ancestors()
        .nth(3)
        .expect("bench binary under target/")
        .to_path_buf();
    let root = target.join("bench-logs").join(format!(
        "v{INPUT_VERSION}-{}",
        node_log::cases_fingerprint()
    ));
    let largest = *sizes.iter().max().expect("sizes");
    let path_of = |mib: u64| root.join(format!("{mib}m")).join("kubelet.log");
    let big = path_of(largest);
    if !big.is_file() {
        let t = Instant::now();
        std::fs::create_dir_all(big.parent().expect("parent")).expect("mkdir");
        let tmp = big.with_extension("tmp");
        generate(&tmp, largest * MIB);
        std::fs::rename(&tmp, &big).expect("rename");
        println!(
            "built {} in {:.1} s",
            big.display(),
            t.elapsed().as_secs_f64()
        );
    }
    let mut out = Vec::new();
    for &mib in sizes {
        let p = path_of(mib);
        if !p.is_file() {
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            node_log::copy_prefix(&big, &p, mib * MIB);
        }
        out.push(p);
    }
    out
}

#[path = "support/node_log.rs"]
mod node_log;
use node_log::generate;
