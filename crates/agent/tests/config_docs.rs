//! `docs/configuration.md` is generated from `FileConfig`'s doc comments and defaults, so the
//! reference cannot drift: this test regenerates it and fails on a difference.
//! `UPDATE_EXPECT=1 cargo test -p podcoroner-agent --test config_docs` rewrites it.

use std::path::Path;

use podcoroner_agent::config::FileConfig;

/// `(field, doc)` of every `pub` field of `FileConfig`, in source order.
fn fields(src: &str) -> Vec<(String, String)> {
    let body = src
        .split("pub struct FileConfig {")
        .nth(1)
        .unwrap()
        .split("\n}\n")
        .next()
        .unwrap();
    let mut out = Vec::new();
    let mut doc = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("pub ") {
            let name = rest.split(':').next().unwrap().to_string();
            out.push((name, doc.join(" ")));
            doc.clear();
        }
    }
    out
}

fn generate() -> String {
    let src = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config.rs"))
        .unwrap();
    let defaults: serde_json::Value = serde_json::to_value(FileConfig::default()).unwrap();
    let mut md = String::from(
        "# Configuration reference\n\n\
         <!-- Generated from crates/agent/src/config.rs by crates/agent/tests/config_docs.rs; do not edit. -->\n\n\
         The daemon's YAML file (`podcoroner daemon --config FILE`; check it with `podcoroner config check FILE`).\n\
         Every key is optional; unknown keys are an error that names the key; durations take units (`30s`, `10m`, `1h`).\n\
         Flags of `podcoroner daemon` win over the file.\n\n\
         | key | default | meaning |\n|---|---|---|\n",
    );
    for (name, doc) in fields(&src) {
        let d = &defaults[&name];
        let shown = match d {
            serde_json::Value::Null => "none".to_string(),
            serde_json::Value::String(s) if s.is_empty() => "\"\"".to_string(),
            serde_json::Value::String(s) => format!("`{s}`"),
            serde_json::Value::Array(a) if a.is_empty() => "`[]`".to_string(),
            other => format!("`{}`", other.to_string().replace('"', "")),
        };
        md.push_str(&format!(
            "| `{name}` | {shown} | {} |\n",
            doc.replace('|', "\\|")
        ));
    }
    md
}

#[test]
fn configuration_reference_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md");
    let want = generate();
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/configuration.md is stale: run UPDATE_EXPECT=1 cargo test -p podcoroner-agent --test config_docs"
    );
    assert!(want.contains("| `cri_poll_interval` | `30s` |"), "{want}");
}
