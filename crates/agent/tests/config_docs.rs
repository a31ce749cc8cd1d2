//! `docs/configuration.md` is generated from the settings declaration
//! (`podcoroner_agent::config::Settings`: each setting's key, flag, default and doc, written
//! once), so the reference cannot drift: this test regenerates it and fails on a difference.
//! `UPDATE_EXPECT=1 cargo test -p podcoroner-agent --test config_docs` rewrites it.

use std::path::Path;

use podcoroner_agent::config::{FLAG_ONLY, Settings};

fn generate() -> String {
    let mut md = String::from(
        "# Configuration reference\n\n\
         <!-- Generated from the settings declaration in crates/agent/src/config.rs by crates/agent/tests/config_docs.rs \
         (UPDATE_EXPECT=1 cargo test -p podcoroner-agent --test config_docs); do not edit. -->\n\n\
         The daemon's YAML file (`podcoroner daemon --config FILE`; check it with `podcoroner config check FILE`).\n\
         Every key is optional; unknown keys are an error that names the key; durations take units (`30s`, `10m`, `1h`); \
         a list is a YAML list, or one value.\n\
         Every key is also a flag of `podcoroner daemon`; a flag wins over the file, which wins over the default. \
         The same flags, with the same defaults, serve `diagnose`, `collect`, `explain` (the source settings), \
         `diagnose` (`min_age`, `failed_pod_min_age`) and `gc` (the `gc_*` and `pods_max_age` settings).\n\n\
         | key | flag | default | meaning |\n|---|---|---|---|\n",
    );
    for s in Settings::reference() {
        let doc = s.doc.split_whitespace().collect::<Vec<_>>().join(" ");
        md.push_str(&format!(
            "| `{}` | `{}` | {} | {} |\n",
            s.key,
            s.flag,
            if s.default == "none" {
                "none".to_string()
            } else {
                format!("`{}`", s.default)
            },
            doc.replace('|', "\\|")
        ));
    }
    md.push_str("\nFlags that are no key:\n\n");
    for (flag, why) in FLAG_ONLY {
        md.push_str(&format!("- `--{flag}`: {why}.\n"));
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
    assert!(
        want.contains("| `cri_poll_interval` | `--cri-poll-interval` | `30s` |"),
        "{want}"
    );
    assert!(want.contains("| `pods_file` | `--pods` | none |"), "{want}");
}
