//! The daemon's budget on a busy node, measured: 200 pods in a real containerd, the kubelet log
//! written at 100 lines per second, the daemon at its default intervals. Reports the daemon's
//! average CPU (share of one core, from /proc/<pid>/stat), its peak and final resident memory
//! (VmHWM, VmRSS), and how long a finding takes to appear in `/findings` after its log line is
//! written. Targets: under 1% of a core, under 30 MiB, under 2 s.
//!
//! `cargo bench -p podcoroner --bench daemon_budget` (root, containerd installed; about 3 min).
//! `PODCORONER_BUDGET_SECS` sets the measured window (default 60).

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use podcoroner_test_support::{ContainerdLab, PodSpec};

#[path = "../tests/common/mod.rs"]
mod common;
use serde_json::{Value, json};

const NODE: &str = "budget-node-1";
const PODS: usize = 200;
const LINES_PER_SEC: u64 = 100;

/// The body of a GET, `None` when nothing listens or the status is 0.
fn get(port: u16, path: &str) -> Option<String> {
    let (status, body) = common::get(port, path);
    (status != 0).then_some(body)
}

/// (utime + stime) in clock ticks, from /proc/<pid>/stat.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit_once(')').unwrap().1;
    let f: Vec<&str> = after.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn status_kib(pid: u32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

fn klog_now() -> String {
    jiff::Timestamp::now()
        .strftime("%m%d %H:%M:%S%.6f")
        .to_string()
}

#[tokio::main]
async fn main() {
    let window = Duration::from_secs(
        std::env::var("PODCORONER_BUDGET_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    let lab = ContainerdLab::start().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
    std::fs::create_dir_all(dir.path().join("kubelet/pods")).unwrap();
    let t = Instant::now();
    let mut items = Vec::new();
    let mut uids = Vec::new();
    for i in 0..PODS {
        let uid = format!("{:08x}-0000-4000-8000-{i:012x}", i);
        let p = PodSpec::api("shop", &format!("web-{i}"), &uid);
        let sandbox = lab
            .run_pod(&p.clone().with_host_network())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        lab.create_container(&sandbox, &p, "web", 0, true)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(
            dir.path()
                .join("kubelet/pods")
                .join(&uid)
                .join("volumes/kubernetes.io~projected/token"),
        )
        .unwrap();
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("web-{i}"), "namespace": "shop", "uid": uid, "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": {"nodeName": NODE, "containers": [{"name": "web", "image": "web"}]},
            "status": {"phase": "Running", "startTime": "2026-11-01T00:00:01Z"}}));
        uids.push(uid);
    }
    // One leaked sandbox the log will talk about.
    let gone = PodSpec::api("shop", "gone-0", "ffffffff-0000-4000-8000-000000000000");
    let leaked = lab.run_pod(&gone).await.unwrap();
    lab.stop_sandbox(&leaked).await.unwrap();
    std::fs::write(
        dir.path().join("pods.json"),
        serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "List", "items": items})).unwrap(),
    )
    .unwrap();
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
    let mut daemon = Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args([
            "daemon",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--runtime-endpoint",
            &lab.endpoint(),
            "--node-name",
            NODE,
        ])
        .args(if std::env::var_os("PODCORONER_BUDGET_NO_LOG").is_some() {
            vec![]
        } else {
            vec!["--kubelet-log".to_string(), log.display().to_string()]
        })
        .arg("--manifest-dir")
        .arg(dir.path().join("manifests"))
        .arg("--kubelet-root-dir")
        .arg(dir.path().join("kubelet"))
        .arg("--pods")
        .arg(dir.path().join("pods.json"))
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .args(["--log-level", "warn"])
        .args(
            std::env::var("PODCORONER_BUDGET_DAEMON_ARGS")
                .unwrap_or_default()
                .split_whitespace(),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
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
                    klog_now()
                ),
                1 => format!(
                    "I{} 4321 kubelet.go:2430] \"SyncLoop (probe)\" probe=\"readiness\" status=\"ready\" pod=\"shop/web-{n}\"\n",
                    klog_now()
                ),
                2 => format!(
                    "I{} 4321 reconciler_common.go:258] \"operationExecutor.VerifyControllerAttachedVolume started for volume \\\"token\\\" (UniqueName: \\\"kubernetes.io/projected/{uid}-token\\\") pod \\\"web-{n}\\\" (UID: \\\"{uid}\\\") \" pod=\"shop/web-{n}\"\n",
                    klog_now()
                ),
                _ => format!(
                    "I{} 4321 kubelet.go:2453] \"SyncLoop UPDATE\" source=\"api\" pods=[\"shop/web-{n}\"]\n",
                    klog_now()
                ),
            };
            f.write_all(line.as_bytes()).unwrap();
            written += 1;
        }
        if latency.is_none()
            && t0.elapsed() >= failure_at
            && std::env::var_os("PODCORONER_BUDGET_NO_LOG").is_none()
        {
            f.write_all(format!(
                "E{} 4321 kuberuntime_gc.go:176] \"Failed to stop sandbox before removing\" err=\"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"{leaked}\\\": cni plugin not initialized\" sandboxID=\"{leaked}\"\n",
                klog_now()
            ).as_bytes()).unwrap();
            let written_at = Instant::now();
            loop {
                if get(port, "/findings?kind=SandboxStopFailing")
                    .is_some_and(|b| b.contains(&leaked))
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
