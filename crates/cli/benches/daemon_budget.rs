//! The daemon's budget on a busy node, measured: 200 pods in a real containerd, the kubelet log
//! written at 100 lines per second, the daemon at its default intervals. Reports the daemon's
//! average CPU (share of one core, from /proc/<pid>/stat), its peak and final resident memory
//! (VmHWM, VmRSS), and how long a finding takes to appear in `/findings` after its log line is
//! written. Targets: under 1% of a core, under 30 MiB, under 2 s.
//!
//! `cargo bench -p podcoroner --bench daemon_budget` (root, containerd installed; about 3 min).
//! `PODCORONER_BUDGET_SECS` sets the measured window (default 60).

use std::io::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/mod.rs"]
mod common;
use common::{LabNode, cpu_ticks, status_kib};
use serde_json::{Value, json};

const NODE: &str = "budget-node-1";
const PODS: usize = 200;
const LINES_PER_SEC: u64 = 100;

/// The body of a GET, `None` when nothing listens or the status is 0.
fn get(port: u16, path: &str) -> Option<String> {
    let (status, body) = common::get(port, path);
    (status != 0).then_some(body)
}

#[tokio::main]
async fn main() {
    let window = Duration::from_secs(
        std::env::var("PODCORONER_BUDGET_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    let t = Instant::now();
    let node = LabNode::start(NODE, PODS, Some("volumes/kubernetes.io~projected/token")).await;
    let (uids, leaked, dir) = (&node.uids, &node.leaked, &node.dir);
    eprintln!(
        "node: {PODS} pods in containerd in {:.1}s",
        t.elapsed().as_secs_f64()
    );

    let log = dir.path().join("kubelet.log");
    std::fs::write(&log, "").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut daemon = node
        .daemon(NODE, port)
        .args(if std::env::var_os("PODCORONER_BUDGET_NO_LOG").is_some() {
            vec![]
        } else {
            vec!["--kubelet-log".to_string(), log.display().to_string()]
        })
        .args(
            std::env::var("PODCORONER_BUDGET_DAEMON_ARGS")
                .unwrap_or_default()
                .split_whitespace(),
        )
        .spawn()
        .unwrap();
    let pid = daemon.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !get(port, "/readyz").is_some_and(|b| b.contains("\"ready\":true")) {
        assert!(Instant::now() < deadline, "daemon not ready");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Warm up one CRI poll and evaluation, then measure.
    std::thread::sleep(Duration::from_secs(12));
    let ticks0 = cpu_ticks(pid);
    let t0 = Instant::now();
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    let mut written: u64 = 0;
    let mut latency = None;
    let failure_at = window / 2;
    while t0.elapsed() < window {
        let due = (t0.elapsed().as_secs_f64() * LINES_PER_SEC as f64) as u64;
        while written < due {
            let uid = &uids[written as usize % PODS];
            let n = written as usize % PODS;
            let line = match written % 4 {
                0 => format!(
                    "I{} 4321 prober.go:107] \"Probe succeeded\" probeType=\"Readiness\" pod=\"shop/web-{n}\" podUID=\"{uid}\" containerName=\"web\"\n",
                    common::klog_now()
                ),
                1 => format!(
                    "I{} 4321 kubelet.go:2430] \"SyncLoop (probe)\" probe=\"readiness\" status=\"ready\" pod=\"shop/web-{n}\"\n",
                    common::klog_now()
                ),
                2 => format!(
                    "I{} 4321 reconciler_common.go:258] \"operationExecutor.VerifyControllerAttachedVolume started for volume \\\"token\\\" (UniqueName: \\\"kubernetes.io/projected/{uid}-token\\\") pod \\\"web-{n}\\\" (UID: \\\"{uid}\\\") \" pod=\"shop/web-{n}\"\n",
                    common::klog_now()
                ),
                _ => format!(
                    "I{} 4321 kubelet.go:2453] \"SyncLoop UPDATE\" source=\"api\" pods=[\"shop/web-{n}\"]\n",
                    common::klog_now()
                ),
            };
            f.write_all(line.as_bytes()).unwrap();
            written += 1;
        }
        if latency.is_none()
            && t0.elapsed() >= failure_at
            && std::env::var_os("PODCORONER_BUDGET_NO_LOG").is_none()
        {
            f.write_all(common::gc_stop_failed_line(leaked).as_bytes())
                .unwrap();
            let written_at = Instant::now();
            loop {
                if get(port, "/findings?kind=SandboxStopFailing")
                    .is_some_and(|b| b.contains(leaked.as_str()))
                {
                    latency = Some(written_at.elapsed());
                    break;
                }
                assert!(
                    written_at.elapsed() < Duration::from_secs(30),
                    "no finding from the log line within 30 s"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let secs = t0.elapsed().as_secs_f64();
    let ticks = cpu_ticks(pid) - ticks0;
    let clk = 100.0; // USER_HZ on Linux
    let cpu = ticks as f64 / clk / secs * 100.0;
    let hwm = status_kib(pid, "VmHWM:") as f64 / 1024.0;
    let rss = status_kib(pid, "VmRSS:") as f64 / 1024.0;
    let metrics = get(port, "/metrics").unwrap_or_default();
    let lines_read: Value = metrics
        .lines()
        .find(|l| l.starts_with("podcoroner_log_lines_total{source=\"kubelet_log\"}"))
        .and_then(|l| l.rsplit(' ').next())
        .map_or(Value::Null, |v| json!(v));
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
    let _ = daemon.wait();
    println!("| measure | value | target |");
    println!("|---|---|---|");
    println!("| pods (sandboxes + containers) | {PODS} (+1 leaked) | 200 |");
    println!(
        "| kubelet log lines written | {} in {secs:.0} s ({:.0}/s), daemon read {lines_read} | 100/s |",
        written + 1,
        written as f64 / secs
    );
    println!("| daemon CPU, average | {cpu:.2}% of one core ({ticks} ticks) | < 1% |");
    println!("| daemon memory, peak (VmHWM) | {hwm:.1} MiB | < 30 MiB |");
    println!("| daemon memory, at the end (VmRSS) | {rss:.1} MiB | |");
    println!(
        "| log line -> /findings | {:.0} ms | < 2000 ms |",
        latency.map_or(f64::NAN, |l| l.as_secs_f64() * 1000.0)
    );
}
