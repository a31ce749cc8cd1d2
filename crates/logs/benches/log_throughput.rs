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

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
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
    let wc = best_of(|| command_count("wc", &["-l"], big));
    rows.push(Row::new("wc -l", wc.0, bytes, format!("{} lines", wc.1)));
    let mut rg_args = vec!["-c".to_string(), "-F".to_string()];
    for key in message_keys() {
        rg_args.push("-e".to_string());
        rg_args.push((*key).to_string());
    }
    let rg_args: Vec<&str> = rg_args.iter().map(String::as_str).collect();
    let rg = which("rg").map(|_| best_of(|| command_count("rg", &rg_args, big)));
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
    let (pc_time, summary) = best_of(|| {
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

fn best_of<T>(mut f: impl FnMut() -> (Duration, T)) -> (Duration, T) {
    let mut best = f();
    for _ in 1..RUNS {
        let next = f();
        if next.0 < best.0 {
            best = next;
        }
    }
    best
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

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
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
    let root = target.join("bench-logs").join(format!("v{INPUT_VERSION}"));
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
            copy_prefix(&big, &p, mib * MIB);
        }
        out.push(p);
    }
    out
}

/// Copies the whole lines of `from` that fit in `bytes`.
fn copy_prefix(from: &Path, to: &Path, bytes: u64) {
    let data = std::fs::read(from).expect("read input");
    let mut end = (bytes as usize).min(data.len());
    while end > 0 && data[end - 1] != b'\n' {
        end -= 1;
    }
    let tmp = to.with_extension("tmp");
    std::fs::write(&tmp, &data[..end]).expect("write prefix");
    std::fs::rename(&tmp, to).expect("rename");
}

/// A case file split into text and ID slots.
struct Template {
    lines: Vec<Vec<Part>>,
}

enum Part {
    Text(String),
    /// An ID (64-hex, 32-hex, a UUID, or a hex prefix of 12+ characters) to vary.
    Id(String),
}

fn case_templates() -> Vec<Template> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("testdata/cases")
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).expect("case dir").flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log" || x == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("case file");
            Template {
                lines: text.lines().map(split_ids).collect(),
            }
        })
        .collect()
}

fn split_ids(line: &str) -> Vec<Part> {
    let b = line.as_bytes();
    let mut parts = Vec::new();
    let mut text_start = 0;
    let mut i = 0;
    while i < b.len() {
        let boundary = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if boundary && b[i].is_ascii_hexdigit() {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_hexdigit() || b[j] == b'-') {
                j += 1;
            }
            // Trim to the ID shapes.
            let run = &line[i..j];
            let len = id_len(run);
            let end = i + len;
            let after_ok = end >= b.len() || !b[end].is_ascii_alphanumeric();
            if len > 0 && after_ok {
                if text_start < i {
                    parts.push(Part::Text(line[text_start..i].to_string()));
                }
                parts.push(Part::Id(line[i..end].to_string()));
                text_start = end;
                i = end;
                continue;
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    if text_start < b.len() {
        parts.push(Part::Text(line[text_start..].to_string()));
    }
    parts
}

/// Length of the ID at the start of `run` (hex digits and dashes): a UUID, or 12 to 64 hex
/// characters with at least one letter; 0 when none.
fn id_len(run: &str) -> usize {
    let b = run.as_bytes();
    let uuid = [8, 4, 4, 4, 12];
    let mut at = 0;
    let mut is_uuid = true;
    for (n, &len) in uuid.iter().enumerate() {
        if b.len() < at + len || !b[at..at + len].iter().all(u8::is_ascii_hexdigit) {
            is_uuid = false;
            break;
        }
        at += len;
        if n < 4 {
            if b.get(at) != Some(&b'-') {
                is_uuid = false;
                break;
            }
            at += 1;
        }
    }
    if is_uuid {
        return 36;
    }
    let hex = b.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    let letters = b[..hex].iter().any(|c| c.is_ascii_alphabetic());
    if (12..=64).contains(&hex) && letters && !b[..hex].iter().any(u8::is_ascii_uppercase) {
        hex
    } else {
        0
    }
}

/// SplitMix64: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Varies an ID for repetition `rep`: each hex digit is shifted by a key that depends only on
/// `rep` and its position, so equal IDs (and an ID and its prefixes) stay equal within a
/// repetition and differ between repetitions.
fn vary(id: &str, key: &[u8; 64], out: &mut String) {
    for (i, c) in id.bytes().enumerate() {
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => {
                out.push(c as char);
                continue;
            }
        };
        out.push(HEX[usize::from((v + key[i % 64]) % 16)] as char);
    }
}

/// One pod of the synthetic node.
struct Pod {
    ns: &'static str,
    name: String,
    uid: String,
    sandbox: String,
    container: String,
    cname: &'static str,
}

fn hex_id(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| HEX[rng.below(16) as usize] as char)
        .collect()
}

fn uuid(rng: &mut Rng) -> String {
    let h = hex_id(rng, 32);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

fn new_pod(rng: &mut Rng, n: usize) -> Pod {
    const NS: [&str; 5] = ["team-a", "team-b", "kube-system", "monitoring", "shop"];
    const APPS: [(&str, &str); 6] = [
        ("web", "nginx"),
        ("api", "api"),
        ("cart", "cart"),
        ("node-exporter", "node-exporter"),
        ("postgres", "postgres"),
        ("worker", "worker"),
    ];
    let (app, cname) = APPS[n % APPS.len()];
    Pod {
        ns: NS[n % NS.len()],
        name: format!("{app}-{}-{}", &hex_id(rng, 10)[..9], &hex_id(rng, 5)[..5]),
        uid: uuid(rng),
        sandbox: hex_id(rng, 64),
        container: hex_id(rng, 64),
        cname,
    }
}

/// Wall-clock parts of the synthetic node's clock.
struct Clock {
    /// Microseconds since the Unix epoch.
    micros: i64,
}

impl Clock {
    fn civil(&self) -> jiff::civil::DateTime {
        jiff::Timestamp::from_microsecond(self.micros)
            .expect("time")
            .to_zoned(jiff::tz::TimeZone::UTC)
            .datetime()
    }

    /// `I0613 10:15:42.123456    1234 file.go:1] ` with the given level letter.
    fn klog(&self, out: &mut String, level: char, caller: &str) {
        let d = self.civil();
        let _ = write!(
            out,
            "{level}{:02}{:02} {:02}:{:02}:{:02}.{:06}    2417 {caller}] ",
            d.month(),
            d.day(),
            d.hour(),
            d.minute(),
            d.second(),
            d.subsec_nanosecond() / 1000
        );
    }

    /// `Jun 13 10:15:42 node-a ident[pid]: `.
    fn syslog(&self, out: &mut String, ident: &str) {
        const MON: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let d = self.civil();
        let _ = write!(
            out,
            "{} {:02} {:02}:{:02}:{:02} node-a {ident}: ",
            MON[d.month() as usize - 1],
            d.day(),
            d.hour(),
            d.minute(),
            d.second()
        );
    }

    fn rfc3339(&self, out: &mut String) {
        let d = self.civil();
        let _ = write!(
            out,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}Z",
            d.year(),
            d.month(),
            d.day(),
            d.hour(),
            d.minute(),
            d.second(),
            d.subsec_nanosecond()
        );
    }
}

/// Appends one line a healthy node writes (without its newline). Returns whether the
/// catalogue names it as an event.
fn normal_line(out: &mut String, rng: &mut Rng, clock: &Clock, pods: &mut [Pod]) -> bool {
    let n = rng.below(pods.len() as u64) as usize;
    let p = &pods[n];
    let (ns, name, uid) = (p.ns, p.name.as_str(), p.uid.as_str());
    let roll = rng.below(1000);
    // Shapes: 40% bare structured klog (kubelet.log), 25% journald-prefixed structured klog,
    // 20% journald-prefixed containerd logfmt, 7% kubelet JSON, 8% legacy klog.
    let shape = rng.below(100);
    let kubelet_prefix = |out: &mut String, clock: &Clock| {
        if shape >= 40 {
            clock.syslog(out, "kubelet[2417]");
        }
    };
    if (60..80).contains(&shape) {
        clock.syslog(out, "containerd[912]");
        out.push_str("time=\"");
        clock.rfc3339(out);
        out.push('"');
        let c = &p.container;
        let s = &p.sandbox;
        let event = match roll {
            0..=399 => {
                let _ = write!(
                    out,
                    " level=info msg=\"ExecSync for \\\"{c}\\\" with command [/bin/sh -c pg_isready -U postgres] and timeout 1 (s)\""
                );
                false
            }
            400..=799 => {
                let _ = write!(
                    out,
                    " level=info msg=\"ExecSync for \\\"{c}\\\" returns with exit code 0\""
                );
                false
            }
            800..=899 => {
                let _ = write!(
                    out,
                    " level=info msg=\"ImageCreate event name:\\\"docker.io/library/{}:1.25\\\" labels:{{key:\\\"io.cri-containerd.image\\\" value:\\\"managed\\\"}}\"",
                    p.cname
                );
                false
            }
            900..=949 => {
                let _ = write!(
                    out,
                    " level=info msg=\"received exit event container_id:\\\"{c}\\\" id:\\\"{c}\\\" pid:{} exit_status:0 exited_at:{{seconds:{} nanos:{}}}\"",
                    10_000 + rng.below(90_000),
                    clock.micros / 1_000_000,
                    rng.below(1_000_000_000)
                );
                false
            }
            950..=997 => {
                let _ = write!(
                    out,
                    " level=info msg=\"CreateContainer within sandbox \\\"{s}\\\" for container &ContainerMetadata{{Name:{},Attempt:0,}}\"",
                    p.cname
                );
                false
            }
            _ => {
                let _ = write!(out, " level=info msg=\"StopPodSandbox for \\\"{s}\\\"\"");
                true
            }
        };
        return event;
    }
    if (80..87).contains(&shape) {
        let ts = clock.micros as f64 / 1000.0;
        let event = if roll < 997 {
            let _ = write!(
                out,
                "{{\"ts\":{ts:.3},\"caller\":\"prober/prober.go:107\",\"msg\":\"Probe failed\",\"v\":0,\"probeType\":\"Readiness\",\"pod\":{{\"name\":\"{name}\",\"namespace\":\"{ns}\"}},\"podUID\":\"{uid}\",\"containerName\":\"{}\",\"probeResult\":\"failure\",\"output\":\"HTTP probe failed with statuscode: 503\"}}",
                p.cname
            );
            false
        } else {
            let _ = write!(
                out,
                "{{\"ts\":{ts:.3},\"caller\":\"kubelet/kubelet.go:2449\",\"msg\":\"SyncLoop UPDATE\",\"v\":2,\"source\":\"api\",\"pods\":[{{\"name\":\"{name}\",\"namespace\":\"{ns}\"}}]}}"
            );
            true
        };
        return event;
    }
    kubelet_prefix(out, clock);
    if shape >= 87 {
        // Legacy printf klog (kubelet up to 1.20), still written by cAdvisor and the volume
        // code of current releases.
        match roll {
            0..=499 => {
                clock.klog(out, 'W', "container.go:586");
                let _ = write!(
                    out,
                    "Failed to get RecentStats(\"/kubepods/burstable/pod{uid}/{}\") while determining the next housekeeping: unable to find data in memory cache",
                    p.container
                );
            }
            500..=899 => {
                clock.klog(out, 'I', "operation_generator.go:878");
                let _ = write!(
                    out,
                    "UnmountVolume.TearDown succeeded for volume \"kubernetes.io/projected/{uid}-kube-api-access-{0}\" (OuterVolumeSpecName: \"kube-api-access-{0}\") pod \"{uid}\" (UID: \"{uid}\"). InnerVolumeSpecName \"kube-api-access-{0}\". PluginName \"kubernetes.io/projected\", VolumeGidValue \"\"",
                    &p.sandbox[..5]
                );
            }
            _ => {
                clock.klog(out, 'I', "log.go:245");
                let _ = write!(
                    out,
                    "http: TLS handshake error from 10.0.{}.{}:{}: EOF",
                    rng.below(4),
                    rng.below(250),
                    30_000 + rng.below(30_000)
                );
            }
        }
        return false;
    }
    let c = &p.container;
    match roll {
        0..=249 => {
            clock.klog(out, 'I', "prober.go:107");
            let _ = write!(
                out,
                "\"Probe failed\" probeType=\"Readiness\" pod=\"{ns}/{name}\" podUID=\"{uid}\" containerName=\"{}\" probeResult=\"failure\" output=\"Get \\\"http://10.244.1.{}:8080/healthz\\\": dial tcp 10.244.1.{}:8080: connect: connection refused\"",
                p.cname,
                n % 250,
                n % 250
            );
        }
        250..=399 => {
            clock.klog(out, 'I', "kubelet.go:2536");
            let _ = write!(
                out,
                "\"SyncLoop (probe)\" probe=\"readiness\" status=\"ready\" pod=\"{ns}/{name}\""
            );
        }
        400..=499 => {
            clock.klog(out, 'I', "reconciler_common.go:258");
            let _ = write!(
                out,
                "\"operationExecutor.VerifyControllerAttachedVolume started for volume \\\"kube-api-access-{0}\\\" (UniqueName: \\\"kubernetes.io/projected/{uid}-kube-api-access-{0}\\\") pod \\\"{name}\\\" (UID: \\\"{uid}\\\") \" pod=\"{ns}/{name}\"",
                &p.sandbox[..5]
            );
        }
        500..=599 => {
            clock.klog(out, 'I', "operation_generator.go:721");
            let _ = write!(
                out,
                "\"MountVolume.SetUp succeeded for volume \\\"config\\\" (UniqueName: \\\"kubernetes.io/configmap/{uid}-config\\\") pod \\\"{name}\\\" (UID: \\\"{uid}\\\") \" pod=\"{ns}/{name}\""
            );
        }
        600..=699 => {
            clock.klog(out, 'I', "status_manager.go:877");
            let _ = write!(
                out,
                "\"Status for pod updated successfully\" pod=\"{ns}/{name}\" statusVersion={} status={{Phase:Running Conditions:[{{Type:Initialized Status:True LastProbeTime:0001-01-01 00:00:00 +0000 UTC}} {{Type:Ready Status:True}}] PodIP:10.244.1.{} StartTime:2025-06-13 00:00:01 +0000 UTC}}",
                rng.below(9) + 1,
                n % 250
            );
        }
        700..=779 => {
            clock.klog(out, 'E', "cadvisor_stats_provider.go:444");
            let _ = write!(
                out,
                "\"Partial failure issuing cadvisor.ContainerInfoV2\" err=\"partial failures: [\\\"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{c}.scope\\\": RecentStats: unable to find data in memory cache]\"",
                uid.replace('-', "_")
            );
        }
        780..=859 => {
            clock.klog(out, 'E', "summary_sys_containers.go:48");
            out.push_str("\"Failed to get system container stats\" err=\"failed to get cgroup stats for \\\"/system.slice/docker.service\\\": failed to get container info for \\\"/system.slice/docker.service\\\": unknown container \\\"/system.slice/docker.service\\\"\" containerName=\"/system.slice/docker.service\"");
        }
        860..=929 => {
            clock.klog(out, 'I', "kuberuntime_manager.go:1034");
            let _ = write!(
                out,
                "\"computePodActions got for pod\" podActions={{KillPod:false CreateSandbox:false SandboxID:{} Attempt:0 NextInitContainerToStart:nil ContainersToStart:[] ContainersToKill:map[] EphemeralContainersToStart:[]}} pod=\"{ns}/{name}\"",
                p.sandbox
            );
        }
        930..=995 => {
            clock.klog(out, 'I', "pod_startup_latency_tracker.go:102");
            let _ = write!(
                out,
                "\"Observed pod startup duration\" pod=\"{ns}/{name}\" podStartSLOduration={}.{:03} podStartE2EDuration=\"5.1s\" podCreationTimestamp=\"2025-06-13 10:15:37 +0000 UTC\" firstStartedPulling=\"0001-01-01 00:00:00 +0000 UTC\" lastFinishedPulling=\"0001-01-01 00:00:00 +0000 UTC\"",
                rng.below(9),
                rng.below(1000)
            );
        }
        996..=997 => {
            clock.klog(out, 'I', "kubelet.go:2469");
            let _ = write!(
                out,
                "\"SyncLoop (PLEG): event for pod\" pod=\"{ns}/{name}\" event={{\"ID\":\"{uid}\",\"Type\":\"ContainerStarted\",\"Data\":\"{c}\"}}"
            );
            return true;
        }
        _ => {
            clock.klog(out, 'I', "kubelet.go:2449");
            let _ = write!(
                out,
                "\"SyncLoop UPDATE\" source=\"api\" pods=[\"{ns}/{name}\"]"
            );
            // Pod churn: a pod that was updated is sometimes replaced.
            if rng.below(4) == 0 {
                pods[n] = new_pod(rng, n);
            }
            return true;
        }
    }
    false
}

/// Writes about `bytes` bytes of node log to `path`.
fn generate(path: &Path, bytes: u64) {
    let cases = case_templates();
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let mut rng = Rng(0x5eed);
    let mut pods: Vec<Pod> = (0..300).map(|n| new_pod(&mut rng, n)).collect();
    // 2025-06-13T00:00:00Z
    let mut clock = Clock {
        micros: 1_749_772_800_000_000,
    };
    let mut written = 0u64;
    let mut line = String::with_capacity(4096);
    let mut rep = 0u64;
    // Each case file comes after this many normal lines: the catalogue then names about 0.5% of
    // the records.
    const GAP: u64 = 6_000;
    while written < bytes {
        for _ in 0..GAP {
            line.clear();
            normal_line(&mut line, &mut rng, &clock, &mut pods);
            line.push('\n');
            w.write_all(line.as_bytes()).expect("write");
            written += line.len() as u64;
            clock.micros += 5_000 + rng.below(30_000) as i64;
        }
        let case = &cases[(rep % cases.len() as u64) as usize];
        let mut key_rng = Rng(rep.wrapping_mul(0x1234_5678_9abc_def1));
        let mut key = [0u8; 64];
        for k in &mut key {
            *k = (key_rng.next() % 16) as u8;
        }
        for parts in &case.lines {
            line.clear();
            for part in parts {
                match part {
                    Part::Text(t) => line.push_str(t),
                    Part::Id(id) => vary(id, &key, &mut line),
                }
            }
            line.push('\n');
            w.write_all(line.as_bytes()).expect("write");
            written += line.len() as u64;
        }
        rep += 1;
    }
    w.flush().expect("flush");
}
