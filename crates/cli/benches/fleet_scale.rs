//! `podcoroner fleet` against many agents, measured: a real node's API server (test-support's
//! `real_node`) with `PODCORONER_FLEET_AGENTS` (default 60) `podcoroner daemon` processes, each
//! the agent of a Node object of its own, on an address of its own (`10.251.1.N/32` on `lo`),
//! reached through the API server's pod proxy (`tests/fleet_lab`). Every third agent has a
//! finding. Reports the wall time of `podcoroner fleet -o json` (median of 3) at
//! `--concurrency` 32 (the default) and 4, and the API server's requests during each run from
//! its own `/metrics` (`apiserver_request_total` before and after, per verb, resource and
//! subresource).
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

    let mut rows = Vec::new();
    for concurrency in ["32", "4"] {
        let mut walls = Vec::new();
        let mut last = (BTreeMap::new(), Value::Null);
        for _ in 0..3 {
            let before = rt.block_on(apiserver_requests(&client));
            let t = Instant::now();
            let out = ok(std::process::Command::new(env!("CARGO_BIN_EXE_podcoroner"))
                .args([
                    "fleet",
                    "-o",
                    "json",
                    "--concurrency",
                    concurrency,
                    "--kubeconfig",
                ])
                .arg(&env.kubeconfig)
                .output());
            let wall = t.elapsed();
            let after = rt.block_on(apiserver_requests(&client));
            assert_eq!(
                out.status.code(),
                Some(1),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let report: Value = ok(serde_json::from_slice(&out.stdout));
            assert_eq!(report["summary"]["read"], n, "every agent read");
            assert_eq!(report["summary"]["no_agent"], 1, "lab-node has none");
            assert_eq!(report["kinds"][0]["nodes"], n / 3);
            walls.push(wall);
            last = (delta(&before, &after), report);
        }
        walls.sort();
        let median = walls[1];
        let (d, report) = last;
        let bytes = serde_json::to_vec(&report).unwrap().len();
        println!(
            "fleet_scale: --concurrency {concurrency}: wall median {:.3}s (runs {:?}), JSON {bytes} bytes",
            median.as_secs_f64(),
            walls
                .iter()
                .map(|w| format!("{:.3}s", w.as_secs_f64()))
                .collect::<Vec<_>>()
        );
        println!(
            "fleet_scale: --concurrency {concurrency}: API server requests during one run (all clients): {d:?}, total {}",
            d.values().sum::<f64>()
        );
        rows.push((concurrency, median, d));
    }
    let per_agent = rows[0].1.as_secs_f64() / n as f64;
    println!(
        "fleet_scale: {n} agents: {:.1} ms of wall per agent at --concurrency 32; 5,000 nodes extrapolated: {:.1}s, {} requests (1 GET daemonset, 10 LIST nodes, 10 LIST pods, 5000 GET pods/proxy)",
        per_agent * 1000.0,
        per_agent * 5000.0,
        1 + 10 + 10 + 5000
    );
    drop(daemons);
    drop(addrs);
    drop(node);
}
