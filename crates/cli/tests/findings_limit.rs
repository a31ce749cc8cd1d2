//! `diagnose --max-findings-per-kind`: a report lists at most so many findings of each kind, the
//! first in report order, and counts the rest (`omitted` in the JSON, `NOT LISTED` in the table)
//! in its summary and its exit code. On `testdata/sample-node`, whose only kind with two findings
//! is `LeakedSandbox` (2 critical, 8 warning, 1 info in all).

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// `podcoroner diagnose --snapshot testdata/sample-node --min-age 0s` with `args`: the exit code
/// and stdout.
fn diagnose(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .args([
            "diagnose",
            "--snapshot",
            "testdata/sample-node",
            "--min-age",
            "0s",
        ])
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
