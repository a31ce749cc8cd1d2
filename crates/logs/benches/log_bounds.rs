//! What a log without newlines costs the one-shot reader: a rotated `kubelet.log.1` holding a
//! NUL hole (sparse, as a crash leaves it) of 50, 200 and 1000 MB, and an 18 MB gzip bomb (4 GB
//! of zeros), each read by `podcoroner_logs::read` in a child process: wall time and peak RSS
//! (VmHWM). `cargo bench -p podcoroner-logs --bench log_bounds`.

use std::io::Write as _;
use std::time::Instant;

use podcoroner_logs::{LogKind, Source, read};

const LINE: &str = "E0829 19:33:49.707784    2373 kuberuntime_gc.go:142] Failed to remove sandbox \"d2a2\": rpc error: code = 2 desc = device or resource busy\n";

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--child") {
        let log = std::path::PathBuf::from(&args[pos + 1]);
        let t = Instant::now();
        let got = read(&Source::File(log), LogKind::Kubelet, None).expect("read");
        println!(
            "{:.2} s, {} MiB peak RSS, {} lines, {} cut, {} left out",
            t.elapsed().as_secs_f64(),
            vm_hwm_kib() / 1024,
            got.lines,
            got.cut_lines,
            got.skipped.len()
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let case = |name: &str, make: &dyn Fn(&std::path::Path)| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).expect("dir");
        std::fs::write(d.join("kubelet.log"), LINE).expect("write");
        make(&d);
        let out = std::process::Command::new(&args[0])
            .args(["--child", &d.join("kubelet.log").display().to_string()])
            .output()
            .expect("child");
        println!("{name:<32} {}", String::from_utf8_lossy(&out.stdout).trim());
        let _ = std::fs::remove_dir_all(&d);
    };
    for mb in [50u64, 200, 1000] {
        case(&format!("NUL hole {mb} MB"), &|d| {
            let f = std::fs::File::create(d.join("kubelet.log.1")).expect("create");
            f.set_len(mb * 1_000_000).expect("set_len");
        });
    }
    case("gzip bomb (4 GB of zeros)", &|d| {
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(d.join("kubelet.log.1.gz")).expect("create"),
            flate2::Compression::best(),
        );
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..4096 {
            enc.write_all(&zeros).expect("gz");
        }
        enc.finish().expect("gz");
    });
}
