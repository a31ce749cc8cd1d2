//! Rotated siblings that are not what they seem: a link to the live file is read once, a FIFO,
//! a directory or a dangling link is skipped (a FIFO would block the reader forever), and one
//! corrupt old rotation leaves the source read in part, said in `LogRead::skipped`, instead of
//! stopping the diagnosis.

use std::io::Write as _;
use std::path::Path;

use podcoroner_logs::{LogKind, Source, read, rotated_siblings, with_rotated_siblings};

/// A real kubelet line: a GC failure, which classifies as an event.
const LINE: &str = "E0829 19:33:49.707784    2373 kuberuntime_gc.go:142] Failed to remove sandbox \"d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718\": rpc error: code = 2 desc = Error response from daemon: remove /var/lib/docker/containers/d2a2/shm: device or resource busy\n";

fn lines(n: usize) -> String {
    LINE.repeat(n)
}

fn names(files: &[std::path::PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_link_to_the_live_file_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("kubelet.log");
    std::fs::write(&log, lines(20)).unwrap();
    std::os::unix::fs::symlink(&log, dir.path().join("kubelet.log.1")).unwrap();
    std::fs::write(dir.path().join("kubelet.log.3"), lines(5)).unwrap();
    std::fs::hard_link(
        dir.path().join("kubelet.log.3"),
        dir.path().join("kubelet.log.2"),
    )
    .unwrap();
    assert_eq!(
        names(&with_rotated_siblings(&log)),
        vec!["kubelet.log.3", "kubelet.log"]
    );
    let got = read(&Source::File(log), LogKind::Kubelet, None).unwrap();
    assert_eq!((got.lines, got.events.len()), (25, 25));
    assert!(got.skipped.is_empty(), "{:?}", got.skipped);
}

#[test]
fn siblings_that_are_not_regular_files_are_skipped_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = d.join("kubelet.log");
    std::fs::write(&log, lines(3)).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(d.join("kubelet.log.1"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir(d.join("kubelet.log.2")).unwrap();
    std::os::unix::fs::symlink(d.join("gone"), d.join("kubelet.log.3")).unwrap();
    std::fs::write(d.join("kubelet.log.4"), lines(2)).unwrap();
    let siblings = rotated_siblings(&log);
    assert_eq!(names(&siblings.files), vec!["kubelet.log.4", "kubelet.log"]);
    let skipped: Vec<(String, String)> = siblings
        .skipped
        .iter()
        .map(|s| {
            (
                s.path.file_name().unwrap().to_string_lossy().into_owned(),
                s.reason.clone(),
            )
        })
        .collect();
    assert_eq!(
        skipped,
        vec![
            (
                "kubelet.log.3".to_string(),
                "cannot stat: No such file or directory (os error 2)".to_string()
            ),
            (
                "kubelet.log.2".to_string(),
                "a directory, not a regular file".to_string()
            ),
            (
                "kubelet.log.1".to_string(),
                "a named pipe (FIFO), not a regular file".to_string()
            ),
        ]
    );
    // Reading does not block on the FIFO, and says what it left out.
    let (tx, rx) = std::sync::mpsc::channel();
    let source = Source::File(log.clone());
    std::thread::spawn(move || {
        let _ = tx.send(read(&source, LogKind::Kubelet, None));
    });
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("reading blocked on a FIFO sibling")
        .unwrap();
    assert_eq!(got.events.len(), 5);
    assert_eq!(got.skipped.len(), 3);
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
fn a_corrupt_old_rotation_degrades_the_source_not_the_diagnosis() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = d.join("kubelet.log");
    std::fs::write(&log, lines(4)).unwrap();
    gz(&d.join("kubelet.log.2.gz"), &lines(6));
    // Not gzip at all.
    std::fs::write(d.join("kubelet.log.3.gz"), b"this is not gzip\n").unwrap();
    // A gzip file cut in the middle of its deflate stream.
    gz(&d.join("kubelet.log.4.gz"), &lines(3000));
    let whole = std::fs::read(d.join("kubelet.log.4.gz")).unwrap();
    std::fs::write(d.join("kubelet.log.4.gz"), &whole[..whole.len() / 2]).unwrap();
    let got = read(&Source::File(log.clone()), LogKind::Kubelet, None).unwrap();
    let skipped: Vec<String> = got
        .skipped
        .iter()
        .map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(skipped, vec!["kubelet.log.4.gz", "kubelet.log.3.gz"]);
    // The cut one is read to its cut, and says how far; the one that is no gzip is left out.
    let (cut, not_gzip) = (&got.skipped[0], &got.skipped[1]);
    assert!(
        cut.lines_read > 100
            && cut.lines_read < 3000
            && cut.reason
                == format!(
                    "incomplete deflate stream after {} lines (a truncated or damaged file?): \
                     the rest is not read",
                    cut.lines_read
                ),
        "{cut:?}"
    );
    assert_eq!(
        (not_gzip.lines_read, not_gzip.reason.as_str()),
        (0, "cannot read: invalid gzip header")
    );
    // The live file and the good rotation are all there.
    assert_eq!(
        names(
            &got.origins
                .iter()
                .map(std::path::PathBuf::from)
                .collect::<Vec<_>>()
        ),
        vec!["kubelet.log.4.gz", "kubelet.log.2.gz", "kubelet.log"]
    );
    assert!(got.events.len() >= 10, "{}", got.events.len());
    assert_eq!(got.lines, cut.lines_read + 6 + 4);
    // A cut `.gz` given as the log itself is read in part as well, not refused.
    let live = d.join("kubelet.log.4.gz");
    let alone = read(&Source::File(live.clone()), LogKind::Kubelet, None).unwrap();
    assert_eq!(
        (
            alone.lines,
            alone.skipped.len(),
            alone.skipped[0].path.clone()
        ),
        (cut.lines_read, 1, live)
    );
    // The live file failing is still an error.
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(d.join("gone"), &log).unwrap();
    assert!(read(&Source::File(log), LogKind::Kubelet, None).is_err());
}
