//! `diagnose --max-findings-per-kind`: a report lists at most so many findings of each kind, the
//! first in report order, and counts the rest (`omitted` in the JSON, `NOT LISTED` in the table)
//! in its summary and its exit code; by default the table lists 1000 of each kind and the JSON
//! every one. On `testdata/sample-node`, whose only kind with two findings is `LeakedSandbox`
//! (2 critical, 8 warning, 1 info in all), and on a kubelet log naming 1001 orphaned pods.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// `podcoroner diagnose --snapshot testdata/sample-node --min-age 0s` with `args`: the exit code
/// and stdout.
fn diagnose(args: &[&str]) -> (i32, String) {
    let mut all = vec!["--snapshot", "testdata/sample-node"];
    all.extend(args);
    run(&all)
}

/// `podcoroner diagnose --min-age 0s` with `args`, from the workspace root: the exit code and
/// stdout.
fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args(["diagnose", "--min-age", "0s"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run podcoroner");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "stderr: {stderr}");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
    )
}

fn json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["-o", "json"];
    all.extend(args);
    let (code, out) = diagnose(&all);
    (code, serde_json::from_str(&out).expect("JSON report"))
}

/// The pods of the report's findings of `kind`, in report order.
fn pods_of(report: &Value, kind: &str) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["kind"] == kind)
        .map(|f| format!("{}/{}", f["pod"]["namespace"], f["pod"]["name"]))
        .collect()
}

#[test]
fn past_the_limit_findings_are_counted_not_listed() {
    let (code, all) = json(&[]);
    assert_eq!(code, 1);
    assert_eq!(all["findings"].as_array().map(Vec::len), Some(11));
    assert!(all.get("omitted").is_none(), "{}", all["omitted"]);
    let leaked = pods_of(&all, "LeakedSandbox");
    assert_eq!(leaked.len(), 2);
    // 0 lists every finding, as the default does on this node.
    let (_, unlimited) = json(&["--max-findings-per-kind", "0"]);
    assert_eq!(unlimited["findings"], all["findings"]);

    let (code, one) = json(&["--max-findings-per-kind", "1"]);
    assert_eq!(code, 1, "omitted findings still set the exit code");
    assert_eq!(one["findings"].as_array().map(Vec::len), Some(10));
    assert_eq!(pods_of(&one, "LeakedSandbox"), leaked[..1]);
    assert_eq!(
        one["omitted"],
        serde_json::json!([{
            "kind": "LeakedSandbox",
            "count": 1,
            "summary": {"critical": 0, "warning": 1, "info": 0},
            "pods": 1,
            "listed": 1,
        }])
    );
    // The summary counts every finding, listed or not.
    assert_eq!(
        one["summary"],
        serde_json::json!({"critical": 2, "warning": 8, "info": 1})
    );

    let (code, table) = diagnose(&["--max-findings-per-kind", "1"]);
    assert_eq!(code, 1);
    // The headings count every finding of their severity and say how many are listed.
    assert!(
        table.contains("\nCRITICAL (2)\n") && table.contains("\nINFO (1)\n"),
        "{table}"
    );
    assert!(
        table.contains("\nWARNING (7 of 8 listed; the rest under NOT LISTED)\n"),
        "{table}"
    );
    assert!(
        table.contains(
            "NOT LISTED (1: past the findings listed per kind; --max-findings-per-kind 0 lists all)\n  \
             LeakedSandbox              1 more after the first 1 (0 critical, 1 warning, 0 info; 1 pod)\n"
        ),
        "{table}"
    );
    assert!(
        table.contains("11 findings: 2 critical, 8 warning, 1 info"),
        "{table}"
    );
    let (_, full_table) = diagnose(&[]);
    assert!(!full_table.contains("NOT LISTED"), "{full_table}");
}

#[test]
fn the_table_lists_a_thousand_of_a_kind_and_the_json_every_one() {
    // Case 09's orphaned pod line, once for each of 1001 pods, two seconds apart.
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("kubelet.log");
    let lines: String = (0..1001)
        .map(|i| {
            let at = format!("14:{:02}:{:02}", i * 2 / 60, i * 2 % 60);
            format!(
                "Aug 31 {at} node-a kubelet[22]: E0831 {at}.324206 22 kubelet_volumes.go:154] \
                 Orphaned pod \"5da3387d-ad1c-11ea-a025-{i:012x}\" found, but volume paths are \
                 still present on disk : There were a total of 1 errors similar to this. Turn up \
                 verbosity to see them.\n"
            )
        })
        .collect();
    std::fs::write(&log, lines).expect("write log");
    let log = log.to_str().expect("utf-8 path");
    let offline = ["--offline", "--kubelet-log", log];

    let (code, table) = run(&offline);
    assert_eq!(code, 1);
    assert!(
        table.contains("\nWARNING (1000 of 1001 listed; the rest under NOT LISTED)\n"),
        "{table}"
    );
    assert!(
        table.contains(
            "  OrphanedPodVolumes         1 more after the first 1000 (0 critical, 1 warning, 0 \
             info; 1 pod)\n"
        ),
        "{table}"
    );
    assert!(
        table.ends_with("1001 findings: 0 critical, 1001 warning, 0 info\n"),
        "{table}"
    );

    let mut args = offline.to_vec();
    args.extend(["-o", "json"]);
    let (code, out) = run(&args);
    let report: Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(code, 1);
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(1001));
    assert!(report.get("omitted").is_none(), "{}", report["omitted"]);

    args.extend(["--max-findings-per-kind", "1000"]);
    let (_, out) = run(&args);
    let report: Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(1000));
    assert_eq!(report["omitted"][0]["count"], 1);
}
