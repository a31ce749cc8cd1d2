//! Reading files with rotated siblings, gzip, `since`, and unparsed lines kept with positions.

use std::io::Write as _;

use super::*;

/// Real lines: every kubelet log of the cases in `testdata/cases/`, one after another.
fn case_lines() -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("kubelet.log"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn gz(path: &Path, text: &str) {
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::default(),
    );
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap();
}

#[test]
fn rotated_siblings_are_read_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in [
        "kubelet.log",
        "kubelet.log.1",
        "kubelet.log.2.gz",
        "kubelet.log.10.gz",
        "kubelet.log-20261128.gz",
        "kubelet.log.tmp",
        "other.log",
    ] {
        std::fs::write(d.join(name), "").unwrap();
    }
    let got: Vec<String> = with_rotated_siblings(&d.join("kubelet.log"))
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        got,
        vec![
            "kubelet.log-20261128.gz",
            "kubelet.log.10.gz",
            "kubelet.log.2.gz",
            "kubelet.log.1",
            "kubelet.log"
        ]
    );
}

#[test]
fn split_and_gzipped_reads_like_the_whole() {
    let lines = case_lines();
    assert!(lines.len() > 40, "too few case lines: {}", lines.len());
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.log");
    std::fs::write(&whole, lines.join("\n") + "\n").unwrap();
    let third = lines.len() / 3;
    let rotated = dir.path().join("kubelet.log");
    gz(
        &dir.path().join("kubelet.log.2.gz"),
        &(lines[..third].join("\n") + "\n"),
    );
    std::fs::write(
        dir.path().join("kubelet.log.1"),
        lines[third..2 * third].join("\n") + "\n",
    )
    .unwrap();
    std::fs::write(&rotated, lines[2 * third..].join("\n") + "\n").unwrap();

    let a = read(&Source::File(whole), LogKind::Kubelet, None).unwrap();
    let b = read(&Source::File(rotated), LogKind::Kubelet, None).unwrap();
    assert_eq!(b.origins.len(), 3);
    assert_eq!(a.lines, lines.len() as u64);
    assert_eq!(b.lines, a.lines);
    assert_eq!(b.parsed + b.unparsed, a.parsed + a.unparsed);
    let kinds = |r: &LogRead| {
        r.events
            .iter()
            .map(|e| (e.event.kind, e.event.time))
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&b), kinds(&a));
    assert!(
        a.events.len() > 10,
        "only {} events classified",
        a.events.len()
    );
    assert!(a.events[0].origin.ends_with("whole.log") && a.events[0].line >= 1);
}

#[test]
fn since_skips_older_records_and_unparsed_lines_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("containerd.log");
    std::fs::write(
        &path,
        "this is not a log line\n\
         time=\"2026-11-29T10:00:00Z\" level=info msg=\"StopPodSandbox for \\\"aaaa\\\"\"\n\
         time=\"2026-11-29T12:00:00Z\" level=error msg=\"StopPodSandbox for \\\"bbbb\\\" failed\" error=\"failed to destroy network for sandbox \\\"bbbb\\\": cni plugin not initialized\"\n",
    )
    .unwrap();
    let since: Timestamp = "2026-11-29T11:00:00Z".parse().unwrap();
    let got = read(&Source::File(path.clone()), LogKind::Runtime, Some(since)).unwrap();
    assert_eq!(got.lines, 3);
    assert_eq!(got.before_since, 1);
    assert_eq!((got.parsed, got.unparsed), (1, 1));
    assert_eq!(
        got.unparsed_samples,
        vec![Unparsed {
            origin: path.display().to_string(),
            line: 1,
            text: "this is not a log line".to_string()
        }]
    );
    assert_eq!(got.events.len(), 1);
    assert_eq!(got.events[0].line, 3);
    assert_eq!(
        got.events[0].event.cause,
        Some(podcoroner_core::logs::Cause::CniTeardown(
            podcoroner_core::logs::CniFailure::PluginNotInitialized
        ))
    );
}

#[test]
fn a_missing_file_names_it() {
    let err = read(
        &Source::File("/nonexistent/kubelet.log".into()),
        LogKind::Kubelet,
        None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot read log file /nonexistent/kubelet.log: No such file or directory (os error 2)"
    );
}

#[test]
fn copy_window_keeps_the_lines_from_since_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("containerd.log");
    std::fs::write(
        &path,
        "time=\"2026-11-29T10:00:00Z\" level=info msg=\"old\"\n\
         junk after old\n\
         time=\"2026-11-29T12:00:00Z\" level=info msg=\"new\"\n\
         junk after new\n",
    )
    .unwrap();
    let out = dir.path().join("window.log");
    let since: Timestamp = "2026-11-29T11:00:00Z".parse().unwrap();
    assert_eq!(
        copy_window(&Source::File(path.clone()), Some(since), &out).unwrap(),
        2
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "time=\"2026-11-29T12:00:00Z\" level=info msg=\"new\"\njunk after new\n"
    );
    assert_eq!(copy_window(&Source::File(path), None, &out).unwrap(), 4);
}
