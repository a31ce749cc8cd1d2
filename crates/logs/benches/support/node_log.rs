//! Synthetic node logs for the benchmarks (`log_throughput` here, `diagnose_offline` in the CLI
//! crate, which includes this file): a healthy node's log with the case lines of
//! `testdata/cases/` spread in it ([`generate`]), and a troubled node's log made only of those
//! case lines, repeated with their own IDs or with fresh IDs per repetition
//! ([`generate_troubled`]); the healthy log in the CRI format ([`generate_cri`]), and lines of no
//! known shape ([`generate_no_shape`]).

#![allow(dead_code)]

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A case file split into text and ID slots.
pub struct Template {
    lines: Vec<Vec<Part>>,
}

enum Part {
    Text(String),
    /// An ID (64-hex, 32-hex, a UUID, or a hex prefix of 12+ characters) to vary.
    Id(String),
}

/// A fingerprint of the case files the generators read (their names and contents, 16 hex
/// digits): part of a cached input's path, so that a case added or changed builds the inputs
/// again instead of timing the lines of an older set (stop 41's bench timed cases 1 to 111
/// while the rules ran on 115).
pub fn cases_fingerprint() -> String {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same files give the same digits in every run.
    let mut h = std::hash::DefaultHasher::new();
    for f in case_files() {
        f.file_name().hash(&mut h);
        std::fs::read(&f).expect("case file").hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Every log file of `testdata/cases/`, split into text and ID slots.
pub fn case_templates() -> Vec<Template> {
    case_files()
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("case file");
            Template {
                lines: text.lines().map(split_ids).collect(),
            }
        })
        .collect()
}

/// Every log file (`.log`, `.jsonl`) of `testdata/cases/`, sorted by path.
fn case_files() -> Vec<PathBuf> {
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

/// Writes about `bytes` bytes of a healthy node's log to `path`.
pub fn generate(path: &Path, bytes: u64) {
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
        written += write_case(&mut w, case, &rep_key(rep), &mut line);
        rep += 1;
    }
    w.flush().expect("flush");
}

/// Writes about `bytes` bytes of a troubled node's log to `path`: every line of every case file
/// in turn, again and again; with `fresh_ids` each repetition's IDs are varied (new sandboxes,
/// containers and pods failing), else the same pods fail again and again.
pub fn generate_troubled(path: &Path, bytes: u64, fresh_ids: bool) {
    let cases = case_templates();
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let mut written = 0u64;
    let mut line = String::with_capacity(4096);
    let mut rep = 0u64;
    while written < bytes {
        let key = if fresh_ids && rep > 0 {
            rep_key(rep)
        } else {
            [0; 64]
        };
        for case in &cases {
            written += write_case(&mut w, case, &key, &mut line);
        }
        rep += 1;
    }
    w.flush().expect("flush");
}

/// Writes about `bytes` bytes of the healthy node's log of [`generate`] as a kubelet run in a
/// container logs it (kind, k3d: `/var/log/pods`): each line in the CRI format
/// (`<RFC 3339> stderr F <line>`), every 50th line longer than 100 bytes cut into `P` parts of
/// 100 bytes, as the runtime cuts a line at its buffer size.
pub fn generate_cri(path: &Path, bytes: u64) {
    let plain = path.with_extension("plain");
    generate(&plain, bytes * 9 / 10);
    let text = std::fs::read(&plain).expect("read plain");
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    for (n, line) in text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let ms = n as u64;
        let time = format!(
            "2025-06-13T{:02}:{:02}:{:02}.{:03}000000Z",
            (ms / 3_600_000) % 24,
            (ms / 60_000) % 60,
            (ms / 1000) % 60,
            ms % 1000
        );
        let mut rest = line;
        if n % 50 == 0 {
            while rest.len() > 100 {
                let cut = (1..=100)
                    .rev()
                    .find(|&c| std::str::from_utf8(&rest[..c]).is_ok())
                    .unwrap_or(100);
                write!(w, "{time} stderr P ").expect("write");
                w.write_all(&rest[..cut]).expect("write");
                w.write_all(b"\n").expect("write");
                rest = &rest[cut..];
            }
        }
        write!(w, "{time} stderr F ").expect("write");
        w.write_all(rest).expect("write");
        w.write_all(b"\n").expect("write");
    }
    w.flush().expect("flush");
    drop(std::fs::remove_file(&plain));
}

/// Writes about `bytes` bytes of lines of no known shape (an application's own output given as
/// a kubelet log): no line opens a record, so none is joined and every one is unparsed.
pub fn generate_no_shape(path: &Path, bytes: u64) {
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).expect("create"));
    let mut written = 0u64;
    let mut n = 0u64;
    let mut line = String::with_capacity(256);
    while written < bytes {
        line.clear();
        let _ = writeln!(
            line,
            "{n:>10} GET /api/v1/items?page={} 200 {}ms served from cache shard {}",
            n % 977,
            n % 89,
            n % 16
        );
        w.write_all(line.as_bytes()).expect("write");
        written += line.len() as u64;
        n += 1;
    }
    w.flush().expect("flush");
}

/// Copies the whole lines of `from` that fit in `bytes` to `to`.
pub fn copy_prefix(from: &Path, to: &Path, bytes: u64) {
    let data = std::fs::read(from).expect("read input");
    let mut end = (bytes as usize).min(data.len());
    while end > 0 && data[end - 1] != b'\n' {
        end -= 1;
    }
    let tmp = to.with_extension("tmp");
    std::fs::write(&tmp, &data[..end]).expect("write prefix");
    std::fs::rename(&tmp, to).expect("rename");
}

/// The path of `program` on `PATH`.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

/// The ID key of repetition `rep` (see [`vary`]).
fn rep_key(rep: u64) -> [u8; 64] {
    let mut key_rng = Rng(rep.wrapping_mul(0x1234_5678_9abc_def1));
    let mut key = [0u8; 64];
    for k in &mut key {
        *k = (key_rng.next() % 16) as u8;
    }
    key
}

/// Writes the lines of `case` with its IDs varied by `key`; returns the bytes written.
fn write_case(w: &mut impl Write, case: &Template, key: &[u8; 64], line: &mut String) -> u64 {
    let mut written = 0;
    for parts in &case.lines {
        line.clear();
        for part in parts {
            match part {
                Part::Text(t) => line.push_str(t),
                Part::Id(id) => vary(id, key, line),
            }
        }
        line.push('\n');
        w.write_all(line.as_bytes()).expect("write");
        written += line.len() as u64;
    }
    written
}

/// The best (shortest) of `runs` timed runs of `f`, with its result.
pub fn best_of<T>(
    runs: usize,
    mut f: impl FnMut() -> (std::time::Duration, T),
) -> (std::time::Duration, T) {
    let mut best = f();
    for _ in 1..runs {
        let next = f();
        if next.0 < best.0 {
            best = next;
        }
    }
    best
}
