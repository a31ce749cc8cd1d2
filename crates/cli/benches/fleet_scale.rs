//! `podcoroner fleet` against many agents, measured: a real node's API server (test-support's
//! `real_node`) with `PODCORONER_FLEET_AGENTS` (default 60) `podcoroner daemon` processes, each
//! the agent of a Node object of its own, on an address of its own (`10.251.1.N/32` on `lo`),
//! reached through the API server's pod proxy (`tests/fleet_lab`). Every third agent has a
//! finding. Reports the wall time of `podcoroner fleet -o json` (median of 3) for one node and
//! for all at `--concurrency` 32 (the default), 4 and 1, and the API server's requests during
//! each run from its own `/metrics` (`apiserver_request_total` before and after, per verb,
//! resource and subresource; a proxied GET counts as verb `CONNECT`).
//!
//! `cargo bench -p podcoroner --bench fleet_scale` (root, the real node's binaries as for
//! `real_node.rs`; about 2 minutes). Not part of the test command.

use std::collections::BTreeMap;
use std::time::Instant;

use podcoroner_test_support::real_node::{Options, RealNode};
use serde_json::{Value, json};

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/fleet_lab/mod.rs"]
mod fleet_lab;
use common::{free_port, ok};
use fleet_lab::{Address, Daemon, agent_pod, apiserver_requests, create, fake_node, manifests};

fn delta(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, d)| *d > 0.0)
        .collect()
}

fn main() {
    let n: usize = std::env::var("PODCORONER_FLEET_AGENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    assert!((1..=250).contains(&n), "PODCORONER_FLEET_AGENTS: 1 to 250");
    let rt = ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build());
    let dir = ok(tempfile::Builder::new().prefix("rnb-").tempdir_in("/tmp"));
    let node = ok(RealNode::up(dir.path(), &Options::default()));
    let env = node.env().clone();
    let client = rt.block_on(node.client()).unwrap();
    rt.block_on(async {
        create(&client, &manifests("base/namespace.yaml")[0]).await;
        create(&client, &manifests("base/daemonset.yaml")[0]).await;
    });

    let started = Instant::now();
    // Slow intervals: 60 agents on 2 cores must leave the API server and `fleet` the CPU.
    let slow = [
        "--cri-poll-interval",
        "60s",
        "--evaluate-interval",
        "10s",
        "--manifest-rescan-interval",
        "60s",
    ];
    let mut addrs = Vec::new();
    let mut daemons = Vec::new();
    for i in 1..=n {
        let ip = format!("10.251.1.{i}");
        let name = format!("scale-{i:03}");
        let port = free_port();
        addrs.push(Address::add(&ip));
        rt.block_on(async {
            fake_node(&client, &name, json!({"podcoroner.test/pool": "scale"})).await;
            agent_pod(
                &client,
                &format!("podcoroner-{name}"),
                &name,
                &ip,
                port,
                true,
            )
            .await;
        });
        daemons.push((
            Daemon::start(
                &env,
                &dir.path().join(&name),
                &name,
                &ip,
                port,
                usize::from(i % 3 == 0),
                &slow,
            ),
            usize::from(i % 3 == 0),
        ));
    }
    for (d, findings) in &daemons {
        d.wait_ready(*findings);
    }
    println!(
        "fleet_scale: {n} agents up and ready in {:.1}s",
        started.elapsed().as_secs_f64()
    );

    // One agent (`fleet NODE`): the fixed cost (process start, kubeconfig, TLS, the DaemonSet
    // GET and the two LISTs) beside one proxied GET.
    let run = |args: &[&str]| -> (std::time::Duration, BTreeMap<String, f64>, Value) {
        let before = rt.block_on(apiserver_requests(&client));
        let t = Instant::now();
        let out = ok(std::process::Command::new(env!("CARGO_BIN_EXE_podcoroner"))
            .arg("fleet")
            .args(args)
            .args(["-o", "json", "--kubeconfig"])
            .arg(&env.kubeconfig)
            .output());
        let wall = t.elapsed();
        let after = rt.block_on(apiserver_requests(&client));
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            wall,
            delta(&before, &after),
            ok(serde_json::from_slice(&out.stdout)),
        )
    };
    let median = |args: &[&str]| {
        let mut runs: Vec<_> = (0..3).map(|_| run(args)).collect();
        runs.sort_by_key(|r| r.0);
        let walls: Vec<String> = runs
            .iter()
            .map(|r| format!("{:.3}s", r.0.as_secs_f64()))
            .collect();
        (runs.swap_remove(1), walls)
    };
    let ((one, one_requests, _), walls) = median(&["scale-001"]);
    println!(
        "fleet_scale: fleet scale-001 (one agent): wall median {:.3}s (runs {walls:?}); requests {one_requests:?}",
        one.as_secs_f64()
    );
    let mut marginal32 = 0.0;
    for concurrency in ["32", "4", "1"] {
        let ((wall, d, report), walls) = median(&["--concurrency", concurrency]);
        assert_eq!(report["summary"]["read"], n, "every agent read");
        assert_eq!(report["summary"]["no_agent"], 1, "lab-node has none");
        assert_eq!(report["kinds"][0]["nodes"], n / 3);
        let bytes = serde_json::to_vec(&report).unwrap().len();
        let marginal = (wall.as_secs_f64() - one.as_secs_f64()).max(0.0) / (n - 1) as f64;
        if concurrency == "32" {
            marginal32 = marginal;
        }
        println!(
            "fleet_scale: --concurrency {concurrency}: wall median {:.3}s (runs {walls:?}), {:.2} ms per further agent, JSON {bytes} bytes",
            wall.as_secs_f64(),
            marginal * 1000.0
        );
        println!(
            "fleet_scale: --concurrency {concurrency}: API server requests during the run (all clients): {d:?}, total {}",
            d.values().sum::<f64>()
        );
    }
    println!(
        "fleet_scale: 5,000 nodes at --concurrency 32 extrapolated from these {n}: {:.1}s (this machine's API server; add the network round trip to the nodes), {} requests (1 GET daemonset, 10 LIST nodes, 10 LIST pods, 5000 CONNECT pods/proxy)",
        one.as_secs_f64() + 4999.0 * marginal32,
        1 + 10 + 10 + 5000
    );
    drop(daemons);
    drop(addrs);
    drop(node);
}
