//! docs/output.md's `podcoroner.fleet/v1` section is the schema: its example is a
//! [`FleetReport`] field for field (read and written back unchanged), and its table names every
//! field a report carries.

use std::collections::BTreeSet;
use std::path::Path;

use podcoroner_fleet::report::{FleetReport, SCHEMA};
use serde_json::Value;

/// The fleet section of docs/output.md: (its JSON example, its field table's first column).
fn section() -> (String, String) {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/output.md"))
            .unwrap();
    let heading = format!("## `podcoroner fleet -o json`: schema `{SCHEMA}`");
    let start = text
        .find(&heading)
        .unwrap_or_else(|| panic!("docs/output.md has no {heading:?}"));
    let section = &text[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let json = section
        .split("```json\n")
        .nth(1)
        .and_then(|s| s.split("\n```").next())
        .expect("a ```json example")
        .to_string();
    let fields = section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split(" | ").next().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    (json, fields)
}

/// Every field path of `v` (`nodes[].findings[].kind`), objects' keys only; under a finding
/// (`nodes[].findings[]`) only its fleet fields, the rest being the diagnosis schema's.
fn paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let p = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                out.insert(p.clone());
                if at != "nodes[].findings[]" {
                    paths(v, &p, out);
                }
            }
        }
        Value::Array(a) => {
            for v in a {
                paths(v, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_documented_example_is_a_report_field_for_field() {
    let (json, _) = section();
    let doc: Value = serde_json::from_str(&json).unwrap();
    let report: FleetReport = serde_json::from_value(doc.clone()).unwrap();
    assert_eq!(report.schema, SCHEMA);
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        doc,
        "the example has a field the type does not write, or lacks one it does"
    );
}

#[test]
fn the_table_names_every_field() {
    let (json, fields) = section();
    let mut all = BTreeSet::new();
    paths(&serde_json::from_str(&json).unwrap(), "", &mut all);
    // The finding fields under nodes[].findings[] are documented by the diagnosis schema; the
    // fleet ones beside them by the `nodes[].findings[]` row.
    let mut missing = Vec::new();
    for p in &all {
        let last = p.rsplit('.').next().unwrap();
        let named = [format!("`{p}`"), format!("`{p}[]`"), format!("`{p}.")]
            .iter()
            .any(|f| fields.contains(f.as_str()))
            || (p.starts_with("summary.") && fields.contains(&format!("`{last}`")))
            || (p.starts_with("nodes[].findings[].") && fields.contains("`nodes[].findings[]`"))
            || p.starts_with("nodes[].summary.")
            || p.starts_with("summary.findings.")
            || (["namespace", "daemonset"].contains(&p.as_str())
                && fields.contains("`namespace`, `daemonset`"));
        if !named {
            missing.push(p.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/output.md's fleet table does not name {missing:?}"
    );
    assert!(all.len() > 30, "only {} paths: {all:?}", all.len());
}
