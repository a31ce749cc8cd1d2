//! The one-shot reader is bounded as the follower is: a run of NULs without a newline (a crash
//! leaves them) is one line cut to `MAX_LINE_BYTES`, counted, and the lines after it are read;
//! a gzip bomb is decompressed only to `MAX_GZIP_RATIO` times its size, and that is said.

use std::io::Write as _;

use podcoroner_logs::{LogKind, MAX_LINE_BYTES, MIN_GZIP_LIMIT_BYTES, Source, read};

const LINE: &str = "E0829 19:33:49.707784    2373 kuberuntime_gc.go:142] Failed to remove sandbox \"d2a22654e52de76722e6d3548dc4817df1f4ea5a3fe0227e9db9b058bd296718\": rpc error: code = 2 desc = device or resource busy\n";

#[test]
fn a_nul_hole_is_one_cut_line_and_what_follows_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("kubelet.log");
    // A rotated file with a 64 MiB hole (sparse: NULs), then lines; the live file after it.
    let old = dir.path().join("kubelet.log.1");
    let mut f = std::fs::File::create(&old).unwrap();
    f.write_all(LINE.as_bytes()).unwrap();
    f.set_len(LINE.len() as u64 + (64 << 20)).unwrap();
    drop(f);
    let mut f = std::fs::OpenOptions::new().append(true).open(&old).unwrap();
    f.write_all(format!("\n{LINE}{LINE}").as_bytes()).unwrap();
    drop(f);
    std::fs::write(&log, LINE).unwrap();
    let started = std::time::Instant::now();
    let got = read(&Source::File(log), LogKind::Kubelet, None).unwrap();
    // Not a benchmark (see the log_bounds bench): unbounded, this took minutes.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(got.lines, 5, "{got:?}");
    assert_eq!(got.cut_lines, 1);
    assert_eq!(got.cut_bytes, (64 << 20) - MAX_LINE_BYTES as u64);
    assert_eq!(got.events.len(), 4);
    assert!(got.unparsed <= 1, "{got:?}");
    assert!(got.skipped.is_empty());
}

#[test]
fn a_gzip_bomb_is_read_to_its_ratio_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("kubelet.log");
    std::fs::write(&log, LINE).unwrap();
    // 256 MiB of zero lines compress to about 250 KiB: the limit is the 64 MiB floor.
    let bomb = dir.path().join("kubelet.log.1.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&bomb).unwrap(),
        flate2::Compression::best(),
    );
    let zeros = vec![b'0'; 1 << 20];
    enc.write_all(LINE.as_bytes()).unwrap();
    for _ in 0..256 {
        enc.write_all(&zeros).unwrap();
    }
    enc.write_all(b"\n").unwrap();
    enc.finish().unwrap();
    assert!(std::fs::metadata(&bomb).unwrap().len() * 100 < MIN_GZIP_LIMIT_BYTES);
    let got = read(&Source::File(log), LogKind::Kubelet, None).unwrap();
    assert_eq!(
        got.events.len(),
        2,
        "the bomb's first line and the live file's"
    );
    assert!(got.lines >= 2, "{got:?}");
    assert_eq!(got.skipped.len(), 1, "{:?}", got.skipped);
    assert!(
        got.skipped[0].path == bomb
            && got.skipped[0].reason.starts_with(
                "decompressed to 64 MiB (100 times its size or 64 MiB) and not further"
            ),
        "{:?}",
        got.skipped
    );
    assert_eq!(got.cut_lines, 1);
}
