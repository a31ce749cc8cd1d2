//! What the daemon benchmarks share (`daemon_budget`, `npd_cost`): the lab node the daemon runs
//! on, the daemon's command line on it, and a process's cost read from `/proc`. The CLI tests'
//! helpers (`get`, `free_port`, …) are re-exported from `tests/common`.

#![allow(dead_code)]

#[path = "../../tests/common/mod.rs"]
mod cli_common;
pub use cli_common::*;

use std::process::{Command, Stdio};

use podcoroner_test_support::{ContainerdLab, PodSpec};
use serde_json::json;

/// The leaked sandbox's pod: no list holds it, so its stopped sandbox is what the benchmarks'
/// injected `Failed to stop sandbox before removing` line names.
pub const GONE_UID: &str = "ffffffff-0000-4000-8000-000000000000";

/// A node in a real containerd lab: API pods `shop/web-<i>`, each a READY sandbox (host
/// network) with one running container `web`, its pod directory, and its object in
/// `<dir>/pods.json` (`kubectl get pods -o json`'s shape); one stopped sandbox of a pod no list
/// holds (`leaked`); an empty `<dir>/manifests`.
pub struct LabNode {
    /// The containerd lab (stopped on drop).
    pub lab: ContainerdLab,
    /// Holds `manifests/`, `kubelet/pods/<uid>/`, `pods.json` and the daemon's state.
    pub dir: tempfile::TempDir,
    /// The pods' UIDs, in order.
    pub uids: Vec<String>,
    /// The leaked sandbox's ID.
    pub leaked: String,
}

impl LabNode {
    /// Builds the node `node` with `pods` pods; `volume` (e.g.
    /// `volumes/kubernetes.io~projected/token`) is made under each pod directory when given.
    pub async fn start(node: &str, pods: usize, volume: Option<&str>) -> LabNode {
        let lab = ok(ContainerdLab::start());
        let dir = ok(tempfile::tempdir());
        ok(std::fs::create_dir_all(dir.path().join("manifests")));
        ok(std::fs::create_dir_all(dir.path().join("kubelet/pods")));
        let mut items = Vec::new();
        let mut uids = Vec::new();
        for i in 0..pods {
            let uid = format!("{i:08x}-0000-4000-8000-{i:012x}");
            let p = PodSpec::api("shop", &format!("web-{i}"), &uid);
            let sandbox = ok(lab.run_pod(&p.clone().with_host_network()).await);
            ok(lab.create_container(&sandbox, &p, "web", 0, true).await);
            let pod_dir = dir.path().join("kubelet/pods").join(&uid);
            ok(std::fs::create_dir_all(
                volume.map_or(pod_dir.clone(), |v| pod_dir.join(v)),
            ));
            items.push(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("web-{i}"), "namespace": "shop", "uid": uid, "creationTimestamp": "2026-11-01T00:00:00Z"},
                "spec": {"nodeName": node, "containers": [{"name": "web", "image": "web"}]},
                "status": {"phase": "Running", "startTime": "2026-11-01T00:00:01Z"}}));
            uids.push(uid);
        }
        let gone = PodSpec::api("shop", "gone-0", GONE_UID);
        let leaked = ok(lab.run_pod(&gone).await);
        ok(lab.stop_sandbox(&leaked).await);
        ok(std::fs::write(
            dir.path().join("pods.json"),
            ok(serde_json::to_vec(
                &json!({"apiVersion": "v1", "kind": "List", "items": items}),
            )),
        ));
        LabNode {
            lab,
            dir,
            uids,
            leaked,
        }
    }

    /// `podcoroner daemon` on this node, listening on `port`, as `node`: the lab's CRI socket,
    /// the node's manifest and kubelet directories, `--pods pods.json`, its state under the
    /// node's directory, `--log-level warn`, output discarded. The caller adds the logs.
    pub fn daemon(&self, node: &str, port: u16) -> Command {
        let dir = self.dir.path();
        let mut c = Command::new(env!("CARGO_BIN_EXE_podcoroner"));
        c.args(["daemon", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--runtime-endpoint", &self.lab.endpoint()])
            .args(["--node-name", node, "--log-level", "warn"])
            .arg("--manifest-dir")
            .arg(dir.join("manifests"))
            .arg("--kubelet-root-dir")
            .arg(dir.join("kubelet"))
            .arg("--pods")
            .arg(dir.join("pods.json"))
            .arg("--state-dir")
            .arg(dir.join("state"))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        c
    }
}

/// A process's CPU time so far, utime + stime in clock ticks (`/proc/<pid>/stat`).
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = ok(std::fs::read_to_string(format!("/proc/{pid}/stat")));
    let after = stat.rsplit_once(')').expect("a /proc stat line").1;
    let f: Vec<&str> = after.split_whitespace().collect();
    f[11].parse::<u64>().expect("utime") + f[12].parse::<u64>().expect("stime")
}

/// A `/proc/<pid>/status` size in KiB (`VmHWM:`, `VmRSS:`).
pub fn status_kib(pid: u32, key: &str) -> u64 {
    let s = ok(std::fs::read_to_string(format!("/proc/{pid}/status")));
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"))
}

/// The klog header's time of now (`MMDD hh:mm:ss.uuuuuu`, UTC).
pub fn klog_now() -> String {
    jiff::Timestamp::now()
        .strftime("%m%d %H:%M:%S%.6f")
        .to_string()
}

/// The kubelet's GC line for a sandbox whose CNI teardown fails, as the benchmarks inject it.
pub fn gc_stop_failed_line(sandbox: &str) -> String {
    format!(
        "E{} 4321 kuberuntime_gc.go:176] \"Failed to stop sandbox before removing\" err=\"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"{sandbox}\\\": cni plugin not initialized\" sandboxID=\"{sandbox}\"\n",
        klog_now()
    )
}
