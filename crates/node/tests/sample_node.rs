//! `testdata/sample-node` (a snapshot of a real containerd node holding one case of every state
//! finding kind) diagnosed as `podcoroner diagnose --snapshot testdata/sample-node --min-age 0s`
//! does, against its golden file `testdata/sample-node/findings.txt` (`UPDATE_EXPECT=1 cargo
//! test -p podcoroner-node --test sample_node` writes it).

use std::path::Path;
use std::time::Duration;

use expect_test::expect_file;
use podcoroner_core::Config;
use podcoroner_core::log_rules::diagnose_with_logs;

#[test]
fn sample_node_findings() {
    // From the workspace root, as the README's main job runs it, so the paths the report names
    // are the snapshot's own (`testdata/sample-node/api/pods.json`), not this checkout's.
    std::env::set_current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")).unwrap();
    let snap =
        podcoroner_node::snapshot::read_for_diagnosis(Path::new("testdata/sample-node")).unwrap();
    let config = Config {
        min_age: Duration::ZERO,
        failed_pod_min_age: Duration::from_secs(3600),
        assume_pods_deleted: false,
        slow_start: std::time::Duration::from_secs(180),
    };
    let d = diagnose_with_logs(&snap.view, &snap.events, &config, snap.meta.collected_at);
    let mut text = String::from(
        "# testdata/sample-node: diagnose --snapshot --min-age 0s (UPDATE_EXPECT=1 cargo test -p \
         podcoroner-node --test sample_node writes this file)\n\n",
    );
    for f in &d.findings {
        text.push_str(&f.to_text(""));
    }
    for s in &d.skipped {
        text.push_str(&format!(
            "skipped {} (partial: {}): {}\n",
            s.kind, s.partial, s.reason
        ));
    }
    // README.md: one case of every state kind, 2 critical, 8 warning, 1 info.
    let count = |sev| d.findings.iter().filter(|f| f.severity == sev).count();
    assert_eq!(
        (
            count(podcoroner_core::Severity::Critical),
            count(podcoroner_core::Severity::Warning),
            count(podcoroner_core::Severity::Info)
        ),
        (2, 8, 1)
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/sample-node");
    expect_file![dir.join("findings.txt")].assert_eq(&text);
}
