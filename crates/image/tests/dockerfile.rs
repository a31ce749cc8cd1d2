//! The Dockerfile's final stage says what the OCI archive's configuration says (crates/image
//! writes both from the same constants), and its build stage builds the tree with
//! `cargo xtask image --rootfs-dir`, the code the archive is built with.

use std::path::Path;

/// The instructions of the Dockerfile's last stage, `(KEYWORD, rest)`, continuation lines joined.
fn stages() -> Vec<Vec<(String, String)>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Dockerfile");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut joined = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head);
                joined.push(' ');
            }
            None => {
                joined.push_str(line);
                joined.push('\n');
            }
        }
    }
    let mut stages: Vec<Vec<(String, String)>> = Vec::new();
    for line in joined.lines() {
        let (keyword, rest) = line.split_once(' ').unwrap_or((line, ""));
        let keyword = keyword.to_ascii_uppercase();
        if keyword == "FROM" {
            stages.push(Vec::new());
        }
        stages
            .last_mut()
            .expect("a FROM first")
            .push((keyword, rest.trim().to_owned()));
    }
    stages
}

fn get<'a>(stage: &'a [(String, String)], keyword: &str) -> Vec<&'a str> {
    stage
        .iter()
        .filter(|(k, _)| k == keyword)
        .map(|(_, v)| v.as_str())
        .collect()
}

fn exec_form(value: &str) -> Vec<String> {
    serde_json::from_str(value).unwrap_or_else(|e| panic!("not exec (JSON) form: {value}: {e}"))
}

#[test]
fn the_final_stage_matches_the_archive_configuration() {
    let stages = stages();
    let last = stages.last().expect("a stage");
    assert_eq!(
        get(last, "FROM"),
        ["scratch"],
        "distroless: nothing but the built tree"
    );
    assert_eq!(get(last, "COPY"), ["--from=build /rootfs/ /"]);
    assert_eq!(
        get(last, "ENTRYPOINT")
            .iter()
            .map(|v| exec_form(v))
            .collect::<Vec<_>>(),
        [podcoroner_image::ENTRYPOINT]
    );
    assert_eq!(
        get(last, "CMD")
            .iter()
            .map(|v| exec_form(v))
            .collect::<Vec<_>>(),
        [podcoroner_image::CMD]
    );
    assert_eq!(get(last, "USER"), [podcoroner_image::USER]);
    assert_eq!(get(last, "ENV"), [podcoroner_image::PATH_ENV]);
    assert_eq!(
        get(last, "EXPOSE"),
        [format!("{}/tcp", podcoroner_image::HTTP_PORT)]
    );
    assert_eq!(get(last, "STOPSIGNAL"), ["SIGTERM"]);
}

#[test]
fn the_build_stage_builds_the_tree_with_xtask() {
    let stages = stages();
    let build = stages
        .iter()
        .find(|s| get(s, "FROM").iter().any(|f| f.ends_with(" AS build")))
        .expect("a stage named build");
    let from = get(build, "FROM")[0];
    assert!(
        from.starts_with("rust:") && from.contains("-bookworm"),
        "the packages in podcoroner_image::PACKAGES are Debian 12's: {from}"
    );
    let run = get(build, "RUN").join(" ");
    assert!(
        run.contains("apt-get update") && run.contains("cargo xtask image --rootfs-dir /rootfs"),
        "{run}"
    );
}
