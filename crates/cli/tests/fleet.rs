//! `podcoroner fleet` on a real node (test-support's `real_node`: kubelet v1.34.4, kube-apiserver,
//! etcd): agents as `podcoroner daemon` processes reached through the real API server's pod
//! proxy (`fleet_lab`), one node for every check (about a minute). Needs root (addresses on
//! `lo`) and the real node's binaries (`cargo xtask real-node build`), as `real_node.rs`.

use std::collections::BTreeMap;
use std::path::Path;

use podcoroner_test_support::real_node::{Options, RealNode};
use serde_json::{Value, json};

mod common;
mod fleet_lab;
use common::{free_port, ok, podcoroner};
use fleet_lab::{Address, Daemon, NAMESPACE, agent_pod, create, fake_node, manifests};

fn runtime() -> tokio::runtime::Runtime {
    ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build())
}

/// `podcoroner fleet ARGS --kubeconfig KC`: (exit code, stdout, stderr).
fn fleet(kubeconfig: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec![
        "fleet".to_string(),
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    podcoroner(&all)
}

/// node → (status, reason, kinds of its findings) of a `podcoroner.fleet/v1` report.
fn by_node(report: &Value) -> BTreeMap<String, (String, String, Vec<String>)> {
    report["nodes"]
        .as_array()
        .unwrap_or_else(|| panic!("no nodes in {report}"))
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                (
                    n["status"].as_str().unwrap().to_string(),
                    n["reason"].as_str().unwrap_or_default().to_string(),
                    n["findings"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| f["kind"].as_str().unwrap().to_string())
                        .collect(),
                ),
            )
        })
        .collect()
}

/// Runs `fleet`, which must exit 2 with every one of `wants` in its stderr.
fn fails(kubeconfig: &Path, args: &[&str], wants: &[&str]) {
    let (code, out, err) = fleet(kubeconfig, args);
    assert_eq!(code, 2, "fleet {args:?}: {err}\n{out}");
    for want in wants {
        assert!(err.contains(want), "fleet {args:?}: no {want:?} in {err}");
    }
}

const INVALID: &str = "InvalidStaticPodManifest";

/// The fleet's states, each named: lab-node (the real kubelet's node) has no agent pod;
/// fleet-1 and fleet-2 have agents with one and two findings; fleet-3's agent pod is Ready but
/// its daemon is stopped; fleet-4's agent pod is not Ready. Then the filters, one node as
/// `diagnose` prints it, `kubectl podcoroner`, deploy/fleet's RBAC (enough) against the agent's
/// (not enough), and the errors that exit 2.
#[test]
fn fleet_names_every_node_state_through_the_real_api_server() {
    let started = std::time::Instant::now();
    let rt = runtime();
    let dir = ok(tempfile::Builder::new().prefix("rnf-").tempdir_in("/tmp"));
    let node = ok(RealNode::up(dir.path(), &Options::default()));
    let env = node.env().clone();
    let admin = env.kubeconfig.clone();
    let client = rt.block_on(node.client()).unwrap();

    // A kubeconfig that is not one, and one whose server does not answer: exit 2, named.
    let bad = dir.path().join("bad.kubeconfig");
    ok(std::fs::write(&bad, "clusters: [\n"));
    fails(&bad, &[], &["bad.kubeconfig", "kubeconfig"]);
    let dead = dir.path().join("dead.kubeconfig");
    ok(std::fs::write(
        &dead,
        podcoroner_test_support::real_node::kubeconfig_yaml(
            &format!("https://127.0.0.1:{}", free_port()),
            &dir.path().join("pki/apiserver.crt"),
            "admin",
            node.admin_token(),
        ),
    ));
    fails(
        &dead,
        &["--timeout", "2s"],
        &["getting daemonset podcoroner/podcoroner"],
    );

    // No DaemonSet, then a DaemonSet with no pod (no controller manager creates them): exit 2.
    rt.block_on(create(&client, &manifests("base/namespace.yaml")[0]));
    fails(&admin, &[], &["daemonset podcoroner/podcoroner not found"]);
    rt.block_on(create(&client, &manifests("base/daemonset.yaml")[0]));
    fails(
        &admin,
        &[],
        &["has no pod", "app.kubernetes.io/name=podcoroner"],
    );

    // The fleet.
    let addrs: Vec<Address> = (1..=4)
        .map(|i| Address::add(&format!("10.251.0.{i}")))
        .collect();
    let fast = ["--cri-poll-interval", "1s", "--evaluate-interval", "1s"];
    let mut daemons = Vec::new();
    for (i, bad_manifests) in [(1, 1), (2, 2), (3, 0)] {
        let name = format!("fleet-{i}");
        let port = free_port();
        rt.block_on(fake_node(
            &client,
            &name,
            json!({"podcoroner.test/pool": "fleet"}),
        ));
        rt.block_on(agent_pod(
            &client,
            &format!("podcoroner-{name}"),
            &name,
            &addrs[i - 1].0,
            port,
            true,
        ));
        daemons.push(Daemon::start(
            &env,
            &dir.path().join(&name),
            &name,
            &addrs[i - 1].0,
            port,
            bad_manifests,
            &fast,
        ));
    }
    rt.block_on(fake_node(
        &client,
        "fleet-4",
        json!({"podcoroner.test/pool": "fleet"}),
    ));
    rt.block_on(agent_pod(
        &client,
        "podcoroner-fleet-4",
        "fleet-4",
        &addrs[3].0,
        free_port(),
        false,
    ));
    for (d, n) in daemons.iter().zip([1, 2, 0]) {
        d.wait_ready(n);
    }
    daemons[2].kill();

    let check = |kubeconfig: &Path, who: &str| {
        let (code, out, err) = fleet(kubeconfig, &["-o", "json"]);
        assert_eq!(code, 1, "{who}: warnings exit 1: {err}\n{out}");
        let report: Value = ok(serde_json::from_str(&out));
        assert_eq!(report["schema"], "podcoroner.fleet/v1");
        let nodes = by_node(&report);
        let status: BTreeMap<&str, &str> = nodes
            .iter()
            .map(|(n, (s, _, _))| (n.as_str(), s.as_str()))
            .collect();
        assert_eq!(
            status,
            BTreeMap::from([
                ("fleet-1", "ok"),
                ("fleet-2", "ok"),
                ("fleet-3", "unreachable"),
                ("fleet-4", "not_ready"),
                ("lab-node", "no_agent"),
            ]),
            "{who}: {report:#}"
        );
        assert_eq!(nodes["fleet-1"].2, [INVALID]);
        assert_eq!(nodes["fleet-2"].2, [INVALID, INVALID]);
        assert!(
            nodes["fleet-3"].1.contains("connection refused"),
            "{who}: {:?}",
            nodes["fleet-3"]
        );
        assert!(
            nodes["fleet-3"].1.contains("/proxy/findings"),
            "{who}: {:?}",
            nodes["fleet-3"]
        );
        assert!(
            nodes["fleet-4"].1.contains("ContainersNotReady"),
            "{who}: {:?}",
            nodes["fleet-4"]
        );
        assert!(
            nodes["lab-node"].1.contains("no pod of the daemonset"),
            "{who}"
        );
        assert_eq!(
            report["kinds"],
            json!([{"kind": INVALID, "nodes": 2, "findings": 3, "worst_severity": "warning",
                    "oldest_first_seen": report["kinds"][0]["oldest_first_seen"]}]),
            "{who}"
        );
        assert_eq!(report["summary"]["read"], 2);
        assert!(err.contains("3 of 5 nodes not read"), "{who}: {err}");
        report
    };
    check(&admin, "admin");

    // The table: by kind, then by node, then the nodes not read with the reason.
    let (code, table, _) = fleet(&admin, &[]);
    assert_eq!(code, 1);
    let kind_row = table
        .lines()
        .find(|l| l.starts_with(INVALID))
        .unwrap_or_else(|| panic!("{table}"));
    assert_eq!(
        kind_row.split_whitespace().take(4).collect::<Vec<_>>(),
        [INVALID, "2", "3", "warning"],
        "{table}"
    );
    let at = |s: &str| {
        table
            .find(s)
            .unwrap_or_else(|| panic!("no {s:?} in\n{table}"))
    };
    assert!(
        at("FINDINGS BY KIND") < at("FINDINGS BY NODE")
            && at("FINDINGS BY NODE") < at("NODES NOT READ")
    );
    assert!(
        at("fleet-2 (2 findings)") < at("fleet-1 (1 findings)"),
        "{table}"
    );
    for (n, s) in [
        ("fleet-3", "unreachable"),
        ("fleet-4", "not_ready"),
        ("lab-node", "no_agent"),
    ] {
        let row = table.lines().find(|l| l.starts_with(n) && l.contains(s));
        assert!(row.is_some(), "no {n} {s} row in\n{table}");
    }

    // Filters: --node (label selector), --severity (at or above), --kind.
    let (code, out, _) = fleet(
        &admin,
        &["-o", "json", "--node", "podcoroner.test/pool=fleet"],
    );
    assert_eq!(code, 1);
    let nodes = by_node(&ok(serde_json::from_str(&out)));
    assert_eq!(
        nodes.keys().collect::<Vec<_>>(),
        ["fleet-1", "fleet-2", "fleet-3", "fleet-4"]
    );
    let (code, out, _) = fleet(&admin, &["-o", "json", "--severity", "critical"]);
    assert_eq!(code, 0, "no critical finding: exit 0");
    let report: Value = ok(serde_json::from_str(&out));
    assert_eq!(report["kinds"], json!([]));
    assert_eq!(
        report["summary"]["findings"],
        json!({"critical": 0, "warning": 0, "info": 0})
    );
    let (code, out, _) = fleet(&admin, &["-o", "json", "--kind", "LeakedSandbox"]);
    assert_eq!(code, 0);
    assert_eq!(ok(serde_json::from_str::<Value>(&out))["kinds"], json!([]));
    let (code, out, _) = fleet(&admin, &["-o", "json", "--kind", INVALID]);
    assert_eq!(code, 1);
    assert_eq!(
        ok(serde_json::from_str::<Value>(&out))["kinds"][0]["findings"],
        3
    );
    fails(
        &admin,
        &["--node", "podcoroner.test/pool=none"],
        &["no node"],
    );

    // One node as `diagnose` prints it; a node not read is an error naming why.
    let (code, out, _) = fleet(&admin, &["fleet-2"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("podcoroner diagnose: node fleet-2 at "),
        "{out}"
    );
    assert!(out.matches(INVALID).count() >= 2, "{out}");
    let (code, out, _) = fleet(&admin, &["fleet-1", "-o", "json"]);
    assert_eq!(code, 1);
    let one: Value = ok(serde_json::from_str(&out));
    assert_eq!(
        (one["schema"].as_str(), one["node"].as_str()),
        (Some("podcoroner.diagnosis/v1"), Some("fleet-1"))
    );
    fails(&admin, &["fleet-3"], &["node fleet-3: unreachable"]);
    fails(&admin, &["no-such-node"], &["no-such-node"]);

    // `kubectl podcoroner`: the binary linked as kubectl-podcoroner on PATH, run by kubectl.
    let bin = dir.path().join("bin");
    ok(std::fs::create_dir_all(&bin));
    ok(std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_podcoroner"),
        bin.join("kubectl-podcoroner"),
    ));
    let out = ok(std::process::Command::new("kubectl")
        .args(["podcoroner", "fleet-1", "-o", "json", "--kubeconfig"])
        .arg(&admin)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output());
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let one: Value = ok(serde_json::from_slice(&out.stdout));
    assert_eq!(one["node"], "fleet-1");

    // deploy/fleet's roles are enough: a ServiceAccount bound exactly as its example bindings
    // bind their group.
    let reader = dir.path().join("reader.kubeconfig");
    rt.block_on(async {
        for obj in manifests("fleet/clusterrole.yaml") {
            create(&client, &obj).await;
        }
        for file in ["fleet/rolebinding.yaml", "fleet/clusterrolebinding.yaml"] {
            let mut b = manifests(file).remove(0);
            b["subjects"] =
                json!([{"kind": "ServiceAccount", "name": "fleet-reader", "namespace": "default"}]);
            create(&client, &b).await;
        }
        fleet_lab::service_account_kubeconfig(
            &client,
            &env,
            &dir.path().join("pki/apiserver.crt"),
            "default",
            "fleet-reader",
            &reader,
        )
        .await;
    });
    check(&reader, "deploy/fleet's role");

    // The agent's own role (deploy/base) is not.
    let agent = dir.path().join("agent.kubeconfig");
    rt.block_on(async {
        for file in [
            "base/serviceaccount.yaml",
            "base/clusterrole.yaml",
            "base/clusterrolebinding.yaml",
        ] {
            create(&client, &manifests(file)[0]).await;
        }
        fleet_lab::service_account_kubeconfig(
            &client,
            &env,
            &dir.path().join("pki/apiserver.crt"),
            NAMESPACE,
            "podcoroner",
            &agent,
        )
        .await;
    });
    fails(&agent, &[], &["403 Forbidden", "daemonsets"]);

    // An agent that accepts the connection and never answers: unreachable within --timeout.
    let silent_ip = Address::add("10.251.0.5");
    let silent = ok(std::net::TcpListener::bind((silent_ip.0.as_str(), 0)));
    let silent_port = ok(silent.local_addr()).port();
    rt.block_on(async {
        fake_node(
            &client,
            "fleet-5",
            json!({"podcoroner.test/pool": "silent"}),
        )
        .await;
        agent_pod(
            &client,
            "podcoroner-fleet-5",
            "fleet-5",
            &silent_ip.0,
            silent_port,
            true,
        )
        .await;
    });
    let t = std::time::Instant::now();
    let (code, out, err) = fleet(
        &admin,
        &[
            "-o",
            "json",
            "--timeout",
            "1s",
            "--node",
            "podcoroner.test/pool=silent",
        ],
    );
    let wall = t.elapsed();
    assert_eq!(code, 2, "no node read: {err}");
    let nodes = by_node(&ok(serde_json::from_str(&out)));
    assert_eq!(nodes["fleet-5"].0, "unreachable", "{nodes:?}");
    assert!(
        nodes["fleet-5"].1.contains("no answer within 1s"),
        "{nodes:?}"
    );
    assert!(
        wall < std::time::Duration::from_secs(4),
        "the timeout took {wall:?}"
    );
    drop(silent);

    drop(daemons);
    drop(addrs);
    drop(node);
    eprintln!("fleet test: {:.1}s", started.elapsed().as_secs_f64());
}
