//! Helpers for the tests on a real node (`test-support::real_node`): the node in a fresh
//! directory, its logs kept, the flags that point podcoroner at it, and CNI faults injected into
//! its containerd.

use std::path::Path;

use k8s_openapi::api::core::v1::Pod;
use kube::api::DeleteParams;
use podcoroner_test_support::real_node::{Env, Options, RealNode};
use podcoroner_test_support::{BrokenCni, CniFault};

use super::ok;

/// A two-worker tokio runtime for the kube client.
pub fn runtime() -> tokio::runtime::Runtime {
    ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build())
}

/// A node in a fresh directory under /tmp (short: containerd's socket path is limited).
pub fn up(options: &Options) -> (tempfile::TempDir, RealNode) {
    let dir = ok(tempfile::Builder::new().prefix("rn-").tempdir_in("/tmp"));
    let node = ok(RealNode::up(dir.path(), options));
    (dir, node)
}

/// Copies the node's logs (`*.log`) to `target/real-node/logs/<name>/` when dropped, passed or
/// failed: what the kubelet said is there to read (and to keep as a case).
pub struct KeepLogs(pub std::path::PathBuf, pub &'static str);

impl Drop for KeepLogs {
    fn drop(&mut self) {
        let out = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/real-node/logs")
            .join(self.1);
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::create_dir_all(&out);
        for entry in std::fs::read_dir(&self.0).into_iter().flatten().flatten() {
            if entry
                .path()
                .extension()
                .is_some_and(|e| e == "log" || e == "stderr")
            {
                let _ = std::fs::copy(entry.path(), out.join(entry.file_name()));
            }
        }
    }
}

/// The flags that point podcoroner at the node, without `--manifest-url`.
pub fn node_flags_without_url(env: &Env) -> Vec<String> {
    vec![
        "--runtime-endpoint".into(),
        env.runtime_endpoint.clone(),
        "--kubeconfig".into(),
        env.kubeconfig.display().to_string(),
        "--node-name".into(),
        env.node_name.clone(),
        "--manifest-dir".into(),
        env.manifest_dir.display().to_string(),
        "--kubelet-root-dir".into(),
        env.kubelet_root_dir.display().to_string(),
        "--kubelet-log".into(),
        env.kubelet_log.display().to_string(),
        "--runtime-log".into(),
        env.runtime_log.display().to_string(),
        "--min-age".into(),
        "0s".into(),
    ]
}

/// Breaks the node's CNI with `fault` (waiting until containerd has loaded it).
pub fn inject_cni_fault(
    rt: &tokio::runtime::Runtime,
    node: &RealNode,
    fault: CniFault,
) -> BrokenCni {
    ok(rt.block_on(BrokenCni::inject_at(
        &node.cni_conf_dir(),
        &node.socket(),
        fault,
    )))
}

/// The CNI plugin gone ([`CniFault::PluginMissing`]), then API pod `name` deleted: its sandbox
/// cannot be torn down. Returns the fault, to repair.
pub fn break_cni_then_delete(
    rt: &tokio::runtime::Runtime,
    node: &RealNode,
    pods_api: &kube::Api<Pod>,
    name: &str,
) -> BrokenCni {
    let broken = inject_cni_fault(rt, node, CniFault::PluginMissing);
    rt.block_on(pods_api.delete(name, &DeleteParams::default()))
        .unwrap();
    broken
}
