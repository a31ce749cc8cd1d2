//! The lab itself against the real containerd: it starts, creates pods the kubelet's way (pod
//! network and host network), and leaves nothing behind when dropped.

use std::path::PathBuf;

use podcoroner_test_support::{ContainerdLab, PodSpec};

fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            pids.push(pid);
        }
    }
    pids
}

#[tokio::test]
async fn lab_creates_pods_and_cleans_up_after_itself() {
    let lab = ContainerdLab::start().unwrap_or_else(|e| panic!("{e}"));
    let dir: PathBuf = lab.dir().to_owned();
    let socket = lab.socket().display().to_string();
    let bridge = lab.network().1.to_owned();
    assert!(lab.endpoint().starts_with("unix:///") && lab.endpoint().ends_with("containerd.sock"));

    let pod = PodSpec::api("default", "web-0", "0b6f2c5e-2b1d-4e8a-9c1f-3d2e1f0a9b8c");
    let sandbox = lab.run_pod(&pod).await.unwrap_or_else(|e| panic!("{e}"));
    let container = lab
        .create_container(&sandbox, &pod, "app", 0, true)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sandbox.len(), 64);
    assert_eq!(container.len(), 64);
    assert!(lab.pod_log_dir(&pod).join("app").is_dir());

    let host = PodSpec::static_pod(
        "kube-system",
        "etcd-node-1",
        "8d4c9a1e0f3b2a6c7d5e4f3a2b1c0d9e",
    )
    .with_host_network();
    lab.run_pod(&host).await.unwrap_or_else(|e| panic!("{e}"));

    let shims = processes_mentioning(&socket);
    assert!(
        shims.len() >= 2,
        "expected a shim per sandbox, found {shims:?}"
    );
    drop(lab);

    assert!(
        processes_mentioning(&socket).is_empty(),
        "shims left behind"
    );
    assert!(!dir.exists(), "{} left behind", dir.display());
    assert!(
        !std::path::Path::new("/sys/class/net")
            .join(&bridge)
            .exists(),
        "bridge {bridge} left behind"
    );
}

#[tokio::test]
async fn drop_does_not_hang_when_containerd_already_died() {
    let lab = ContainerdLab::start().unwrap_or_else(|e| panic!("{e}"));
    let dir: PathBuf = lab.dir().to_owned();
    let socket = lab.socket().display().to_string();
    let pod = PodSpec::api("default", "orphan", "33333333-3333-3333-3333-333333333333");
    let sandbox = lab.run_pod(&pod).await.unwrap_or_else(|e| panic!("{e}"));
    lab.create_container(&sandbox, &pod, "app", 0, true)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(lab.containerd_pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let started = std::time::Instant::now();
    drop(lab);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "drop took {:?}",
        started.elapsed()
    );
    assert!(
        processes_mentioning(&socket).is_empty(),
        "shims left behind"
    );
    assert!(!dir.exists(), "{} left behind", dir.display());
}
