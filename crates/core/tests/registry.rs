//! The rules registry (`rules::registry::RULES`) against what is written from it: the kinds
//! tables of docs/findings.md and README.md (`UPDATE_DOCS=1 cargo test -p podcoroner-core --test
//! registry` writes them), a section per kind in docs/findings.md, and each rule's file.

use std::path::{Path, PathBuf};

use podcoroner_core::FindingKind;
use podcoroner_core::rules::registry::{RULES, rules_of};

const BEGIN: &str = "<!-- generated from crates/core/src/rules/registry.rs: UPDATE_DOCS=1 cargo test -p podcoroner-core --test registry -->";
const END: &str = "<!-- end of generated table -->";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The docs/findings.md table: one row per rule.
fn findings_table() -> String {
    let mut t = String::from(
        "| kind | severity | views needed | kubelet source | first step |\n|---|---|---|---|---|\n",
    );
    for r in RULES {
        let name = r.kind.as_str();
        let variant = match r.variant {
            "" => String::new(),
            v => format!(" ({v})"),
        };
        t.push_str(&format!(
            "| [{name}](#{}){variant} | {} | {} | `{}` | {} |\n",
            name.to_lowercase(),
            r.severity,
            r.views,
            r.kubelet_source,
            r.remediation.replace('|', "\\|")
        ));
    }
    t
}

/// The README table: one row per kind, from its first rule.
fn readme_table() -> String {
    let mut t = String::from("| kind | severity | what |\n|---|---|---|\n");
    for kind in FindingKind::ALL {
        let r = rules_of(kind).next().unwrap();
        t.push_str(&format!(
            "| `{}` | {} | {} |\n",
            kind.as_str(),
            r.severity,
            r.summary
        ));
    }
    t
}

/// Checks (or with `UPDATE_DOCS=1` writes) the generated block of `file`.
fn check_block(file: &str, table: &str) {
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        panic!("{file} has no generated block ({BEGIN} … {END})");
    };
    let current = &text[b + BEGIN.len() + 1..e];
    if current == table {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{BEGIN}\n{table}{}", &text[..b], &text[e..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    panic!(
        "{file}'s kinds table differs from rules::registry::RULES; run UPDATE_DOCS=1 cargo test -p \
         podcoroner-core --test registry\n--- in {file}:\n{current}\n--- from the registry:\n{table}"
    );
}

#[test]
fn docs_tables_are_the_registry() {
    check_block("docs/findings.md", &findings_table());
    check_block("README.md", &readme_table());
}

#[test]
fn every_kind_has_a_section_and_every_rule_its_file() {
    let findings = std::fs::read_to_string(root().join("docs/findings.md")).unwrap();
    for kind in FindingKind::ALL {
        assert!(
            findings.lines().any(|l| l == format!("## {kind}")),
            "docs/findings.md has no section ## {kind}"
        );
        assert_eq!(FindingKind::parse(kind.as_str()), Some(kind));
    }
    for r in RULES {
        let file = root().join("crates/core/src/rules").join(r.file);
        assert!(file.exists(), "{}: no {}", r.kind, file.display());
    }
    // Every kind in ALL once, and nothing else: ALL is generated from the table.
    let mut kinds: Vec<FindingKind> = RULES.iter().map(|r| r.kind).collect();
    kinds.sort();
    kinds.dedup();
    let mut all = FindingKind::ALL.to_vec();
    all.sort();
    assert_eq!(kinds, all);
}
