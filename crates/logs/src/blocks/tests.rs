//! The block reader against a straightforward loop (every line through one [`LineAssembler`],
//! every record parsed and classified with one [`ParseContext`]): the same counts, span,
//! unparsed samples and events, in the same order, for every block size and worker count, on
//! every file of `testdata/cases/`, on all of them joined, and on a generated log whose year
//! and New Year state change all the time, and on one whose zone and year change every few
//! records (so that guessed contexts are wrong and blocks are mended or parsed again).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::mpsc::channel;

use super::*;
use podcoroner_core::logs::parse;

/// The straightforward path: what [`crate::read`] computed before it was parallel.
fn reference(data: &[u8], origin: &str, year: i32, since: Option<Timestamp>) -> LogRead {
    let opts = StreamOpts {
        since,
        ..StreamOpts::new(origin, LogKind::Kubelet, since)
    };
    let mut ctx = ParseContext::new(year);
    let mut read = LogRead::default();
    let mut asm = LineAssembler::new();
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for line in lines {
        read.lines += 1;
        let text = String::from_utf8_lossy(line);
        if let Some(rec) = asm.push(&text) {
            let (text, first) = (rec.text.to_string(), rec.first_line);
            handle(&text, first, &mut ctx, &opts, &mut read);
        }
    }
    if let Some(rec) = asm.finish() {
        let (text, first) = (rec.text.to_string(), rec.first_line);
        handle(&text, first, &mut ctx, &opts, &mut read);
    }
    read
}

fn assert_same(got: &LogRead, want: &LogRead, what: &str) {
    assert_eq!(got.lines, want.lines, "{what}: lines");
    assert_eq!(got.parsed, want.parsed, "{what}: parsed");
    assert_eq!(got.unparsed, want.unparsed, "{what}: unparsed");
    assert_eq!(got.before_since, want.before_since, "{what}: before_since");
    assert_eq!(got.span, want.span, "{what}: span");
    assert_eq!(
        got.understanding, want.understanding,
        "{what}: understanding"
    );
    assert_eq!(got.dated_year, want.dated_year, "{what}: dated_year");
    assert_eq!(got.yearless_times, want.yearless_times, "{what}: yearless");
    assert_eq!(got.zone_shown, want.zone_shown, "{what}: zone_shown");
    assert_eq!(
        got.zoneless_before_zone, want.zoneless_before_zone,
        "{what}: zoneless_before_zone"
    );
    assert_eq!(
        got.unparsed_samples, want.unparsed_samples,
        "{what}: samples"
    );
    assert_eq!(got.events.len(), want.events.len(), "{what}: events");
    for (g, w) in got.events.iter().zip(&want.events) {
        assert_eq!(g, w, "{what}: event");
    }
}

/// Reads `len` bytes of `file` in blocks with `opts`, from a context of `year`, with the events
/// in the result.
fn read_file_all(file: &File, len: u64, opts: &StreamOpts<'_>, year: i32) -> LogRead {
    with_events(|got, sink| read_file(file, len, opts, ParseContext::new(year), got, sink))
}

/// What `read` put in a [`LogRead`], with the events it handed out in it.
fn with_events(
    read: impl FnOnce(&mut LogRead, &mut dyn FnMut(LoggedEvent)) -> std::io::Result<()>,
) -> LogRead {
    let mut got = LogRead::default();
    let mut events = Vec::new();
    read(&mut got, &mut |e| events.push(e)).unwrap();
    got.events = events;
    got
}

/// Block sizes for small inputs: a block per byte, per line or so, and larger.
const SMALL_BLOCKS: &[usize] = &[1, 7, 64, 300, 4096, BLOCK_BYTES];
/// Block sizes for larger inputs (a block per byte takes long in a debug build).
const BLOCKS: &[usize] = &[64, 300, 4096, BLOCK_BYTES];

/// Reads `data` with both block paths, for each of `block_sizes` and 1 to 3 workers, and
/// compares with [`reference`].
fn check(data: &[u8], what: &str, since: Option<Timestamp>, block_sizes: &[usize]) {
    let year = 2025;
    let want = reference(data, "f", year, since);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    std::fs::write(&path, data).unwrap();
    let file = File::open(&path).unwrap();
    let defaults = StreamOpts::new("f", LogKind::Kubelet, since);
    each_reader(block_sizes, &defaults, |opts, label| {
        let label = format!("{what}, {label}");
        let got = read_file_all(&file, data.len() as u64, opts, year);
        assert_same(&got, &want, &format!("file, {label}"));

        let stream = Box::new(std::io::Cursor::new(data.to_vec()));
        let ctx = ParseContext::new(year);
        let got = with_events(|got, sink| read_stream(stream, opts, ctx, got, sink));
        assert_same(&got, &want, &format!("stream, {label}"));
    });
}

/// Calls `f` with `defaults` at each of `block_sizes` and with 1 to 3 workers, and a label
/// saying which.
fn each_reader(
    block_sizes: &[usize],
    defaults: &StreamOpts<'_>,
    mut f: impl FnMut(&StreamOpts<'_>, String),
) {
    for &block_bytes in block_sizes {
        for workers in [1, 2, 3] {
            let opts = StreamOpts {
                block_bytes,
                workers,
                shared_origin: Arc::clone(&defaults.shared_origin),
                ..*defaults
            };
            f(
                &opts,
                format!("blocks of {block_bytes} bytes, {workers} workers"),
            );
        }
    }
}

fn case_files() -> Vec<PathBuf> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|e| e.path())
        // The case's inputs: not its human reading (`expected.md`) nor its golden findings.
        .filter(|p| p.extension().is_some_and(|x| x != "md") && !p.ends_with("findings.txt"))
        .collect();
    files.sort();
    files
}

/// The records of case file `f`, as one [`LineAssembler`] joins its lines.
fn case_records(f: &std::path::Path) -> Vec<String> {
    let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
    let mut asm = LineAssembler::new();
    let mut records: Vec<String> = text
        .lines()
        .filter_map(|l| asm.push(l).map(|r| r.text.to_string()))
        .collect();
    records.extend(asm.finish().map(|r| r.text.to_string()));
    records
}

#[test]
fn every_case_file_reads_as_one_loop_does() {
    let files = case_files();
    assert!(files.len() > 30, "{files:?}");
    let mut all = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        check(&data, &f.display().to_string(), None, SMALL_BLOCKS);
        all.extend_from_slice(&data);
    }
    check(&all, "all case files", None, BLOCKS);
    let since = "2023-01-01T00:00:00Z".parse().ok();
    check(&all, "all case files since 2023", since, BLOCKS);
}

/// A log whose year and New Year state change every few lines: klog and syslog lines across
/// New Year, containerd lines of other years, JSON lines, wrapped and multi-line records,
/// prompts, CRLF, invalid UTF-8, a line and a record longer than the blocks, and case lines.
fn generated() -> Vec<u8> {
    let mut out = Vec::new();
    let cases: Vec<String> = case_files()
        .iter()
        .filter(|f| f.extension().is_some_and(|x| x == "log"))
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let c = "7d0f1944976c8b4d75f44226e5f1ae59d08da416e4d776f47a2a265a2015548a";
    for i in 0..400usize {
        let (mon, day, sm) = match i % 4 {
            0 => (12, 31, "Dec"),
            1 => (1, 1, "Jan"),
            2 => (6, 13, "Jun"),
            _ => (1, 2, "Jan"),
        };
        let year = 2015 + (i * 7) % 11;
        let _ = match i % 9 {
            0 => writeln!(
                out,
                "I{mon:02}{day:02} 23:59:59.{i:06}    1234 kubelet.go:2449] \"SyncLoop DELETE\" source=\"api\" pods=[\"team-a/web-{i}\"]"
            ),
            1 => writeln!(
                out,
                "{sm} {day:02} 00:00:01 node-a kubelet[1234]: E{mon:02}{day:02} 00:00:01.000001    1234 remote_runtime.go:1] \"StopPodSandbox from runtime service failed\" err=\"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"{c}\\\": cni plugin not initialized\" podSandboxID=\"{c}\""
            ),
            2 => writeln!(
                out,
                "time=\"{year}-{mon:02}-{day:02}T00:00:00.000000001Z\" level=error msg=\"ContainerStatus for \\\"{c}\\\" failed\" error=\"rpc error: code = NotFound desc = an error occurred when try to find container \\\"{c}\\\": not found\""
            ),
            3 => writeln!(
                out,
                "I{mon:02}{day:02} 10:00:00.000000    1234 prober.go:107] \"Probe failed\" probeType=\"Readiness\" pod=\"team-a/web-{i}\" probeResult=\"failure\"\r"
            ),
            4 => writeln!(
                out,
                "E{mon:02}{day:02} 10:00:00.000000    1234 pod_workers.go:1] \"Error syncing pod, skipping\" err=<\n\tfailed to \"KillPodSandbox\" for \"ab7e1b0b-453f-4627-a749-47e48c2265a6\"\n\twith a second line\n > pod=\"team-a/web-{i}\""
            ),
            5 => writeln!(
                out,
                "{{\"ts\":{}.5,\"caller\":\"kubelet/kubelet.go:2102\",\"msg\":\"SyncLoop REMOVE\",\"v\":2,\"source\":\"api\",\"pods\":[{{\"name\":\"web-{i}\",\"namespace\":\"team-a\"}}]}}",
                1_420_070_400_000u64 + (i as u64) * 86_400_000 * 37
            ),
            6 => writeln!(
                out,
                "W{mon:02}{day:02} 06:48:09.771347  250135 container.go:507] Failed to update stats for container \"/system.slice/a.se\nrvice/memory.usage_in_bytes: no such device"
            ),
            7 => {
                out.extend_from_slice(
                    b"user@node-a:~> sudo journalctl -u kubelet\n\xff\xfe not utf-8 \xc3\n\n",
                );
                Ok(())
            }
            _ => writeln!(out, "{}", cases[i % cases.len()]),
        };
    }
    // A line longer than most blocks, and a record of many lines.
    let _ = writeln!(
        out,
        "I0101 00:00:00.000000    1234 kubelet.go:1] \"Probe failed\" output=\"{}\"",
        "x".repeat(10_000)
    );
    let _ = write!(
        out,
        "E0101 00:00:01.000000    1234 pod_workers.go:1] \"Error syncing pod, skipping\" err=<\n{}",
        "\tcontext deadline exceeded\n".repeat(500)
    );
    // The last line has no newline.
    out.extend_from_slice(b"Dec 31 23:59:59 node-a kubelet[1]: I1231 23:59:59.999999 1 a.go:1] \"SyncLoop ADD\" source=\"api\" pods=[\"a/b\"]");
    out
}

#[test]
fn a_log_whose_year_keeps_changing_reads_as_one_loop_does() {
    let data = generated();
    assert!(data.len() > 50_000, "{}", data.len());
    check(&data, "generated", None, BLOCKS);
    let since = "2020-01-01T00:00:00Z".parse().ok();
    check(&data, "generated since 2020", since, &[300]);
}

/// A log read as one file from the excerpts of bug reports from nodes in other years and zones:
/// every 7 records the zone (learned from a journal's RFC 3339 time beside the klog header of
/// the same moment) and the year change, and yearless klog lines follow.
fn zones_and_years() -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..700usize {
        let group = i / 7;
        let hours = [0, 3, 8, 5][group % 4];
        let year = 2019 + group % 6;
        let _ = match i % 7 {
            0 => writeln!(
                out,
                "{year}-06-13T{:02}:00:00.000000+{hours:02}:00 node-a kubelet[1234]: I0613 {:02}:00:00.000000    1234 kubelet.go:1] \"SyncLoop ADD\" source=\"api\" pods=[\"team-a/web-{i}\"]",
                10 + group % 10,
                10 + group % 10,
            ),
            3 => writeln!(
                out,
                "time=\"{year}-06-13T10:00:0{}.000000001Z\" level=info msg=\"StopPodSandbox for \\\"{}\\\"\"",
                i % 10,
                "a".repeat(64)
            ),
            n => writeln!(
                out,
                "E0613 {:02}:00:0{n}.000000    1234 remote_runtime.go:1] \"StopPodSandbox from runtime service failed\" err=\"rpc error: code = Unknown desc = cni plugin not initialized\" podSandboxID=\"{}\"",
                10 + group % 10,
                "b".repeat(64)
            ),
        };
    }
    out
}

#[test]
fn a_log_whose_zone_and_year_keep_changing_is_mended_not_parsed_again() {
    let data = zones_and_years();
    // Each block's first records, read again from the right context, are the whole correction:
    // the rest of most blocks is the worker's.
    MENDED.with(|m| m.set(0));
    check(&data, "zones and years", None, &[300, 4096]);
    let mended = MENDED.with(std::cell::Cell::get);
    assert!(mended > 20, "blocks mended: {mended}");
}

#[test]
fn empty_and_blank_inputs() {
    check(b"", "empty", None, SMALL_BLOCKS);
    check(b"\n", "one blank line", None, SMALL_BLOCKS);
    check(b"\n\n\r\n", "blank lines", None, SMALL_BLOCKS);
    check(b"no newline at the end", "one line", None, SMALL_BLOCKS);
}

#[test]
fn a_file_read_past_its_length_is_cut_at_that_length() {
    // A live log grows while it is read: only the length it had when opened is read.
    let data = generated();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    std::fs::write(&path, &data).unwrap();
    let len = data.iter().rposition(|&b| b == b'\n').unwrap() as u64 + 1;
    let want = reference(&data[..len as usize], "f", 2025, None);
    let file = File::open(&path).unwrap();
    let opts = StreamOpts {
        block_bytes: 300,
        workers: 2,
        ..StreamOpts::new("f", LogKind::Kubelet, None)
    };
    let got = read_file_all(&file, len, &opts, 2025);
    assert_same(&got, &want, "first part");
}

#[test]
fn a_file_that_shrank_after_it_was_measured_reads_what_is_left() {
    // Truncated (copytruncate, or by hand) after its length was taken: a block's read ends
    // short, and the start it tells the next block is before that block's own. From a fresh
    // try at breaking c28cefb, where the told start was taken and the slice panicked.
    let data = generated();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    let left = data.len() / 3;
    let left = data[..left].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    std::fs::write(&path, &data[..left]).unwrap();
    let want = reference(&data[..left], "f", 2025, None);
    let file = File::open(&path).unwrap();
    for workers in [1, 2, 3] {
        let opts = StreamOpts {
            block_bytes: 300,
            workers,
            ..StreamOpts::new("f", LogKind::Kubelet, None)
        };
        let got = read_file_all(&file, data.len() as u64, &opts, 2025);
        assert_same(&got, &want, &format!("{workers} workers"));
    }
    // A block told a start before its own finds its start itself.
    let len = left as u64;
    let k = len / 300 - 1;
    let block = |told| {
        file_block(
            &file,
            len,
            k,
            300,
            usize::MAX,
            told,
            &mut ReadBuf::default(),
        )
        .unwrap()
        .unwrap()
    };
    assert_eq!(block(Some(k * 300 - 1)).range, block(None).range);
}

#[test]
fn a_line_too_long_for_the_blocks_is_read_in_order_from_the_block_before_it() {
    // What one loop over the file read through `Bounded` gives (what `read` did for any file
    // holding such a line), with the cut counted.
    fn through_the_cut(data: &[u8], max: usize) -> LogRead {
        let (mut cut, cuts) = Bounded::new(data, max, None);
        let mut bytes = Vec::new();
        cut.read_to_end(&mut bytes).unwrap();
        let mut want = reference(&bytes, "f", 2025, None);
        want.cut_lines = cuts.lines.load(Ordering::Relaxed);
        want.cut_bytes = cuts.bytes.load(Ordering::Relaxed);
        want
    }
    let cases: Vec<u8> = case_files()
        .iter()
        .filter(|f| f.extension().is_some_and(|x| x == "log"))
        .flat_map(|f| std::fs::read(f).unwrap())
        .take(60_000)
        .collect();
    let line_start = |at: usize| {
        cases[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1)
    };
    let max = cases.split(|&b| b == b'\n').map(<[u8]>::len).max().unwrap() + 10;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    // At the start, in the middle, a NUL run (a crash), one line just short of too long, and
    // the last line without a newline.
    let long = |n: usize, byte: u8| vec![byte; n];
    let inputs: Vec<(String, Vec<u8>)> = [0, cases.len() / 3, 2 * cases.len() / 3]
        .into_iter()
        .flat_map(|at| {
            let at = line_start(at);
            [(max + 1, b'x'), (5 * max, 0), (max, b'y')].map(|(n, byte)| {
                let mut data = cases[..at].to_vec();
                data.extend(long(n, byte));
                data.push(b'\n');
                data.extend(&cases[at..]);
                (format!("{n} bytes of {byte} at {at}"), data)
            })
        })
        .chain(std::iter::once({
            let mut data = cases.clone();
            data.extend(long(3 * max, b'z'));
            ("a long last line".to_string(), data)
        }))
        .collect();
    for (what, data) in &inputs {
        std::fs::write(&path, data).unwrap();
        let want = through_the_cut(data, max);
        let file = File::open(&path).unwrap();
        let defaults = StreamOpts {
            max_line_bytes: max,
            ..StreamOpts::new("f", LogKind::Kubelet, None)
        };
        each_reader(BLOCKS, &defaults, |opts, label| {
            let label = format!("{what}, {label}");
            let got = read_file_all(&file, data.len() as u64, opts, 2025);
            assert_same(&got, &want, &label);
            assert_eq!(
                (got.cut_lines, got.cut_bytes),
                (want.cut_lines, want.cut_bytes),
                "{label}: cut"
            );
        });
    }
    // The cut is what the inputs hold: one line each, but the line just short of too long.
    let cut: Vec<u64> = inputs
        .iter()
        .map(|(_, d)| through_the_cut(d, max).cut_lines)
        .collect();
    assert_eq!(cut, [1, 1, 0, 1, 1, 0, 1, 1, 0, 1]);
}

/// The case logs' lines as a kubelet run in a container logs them (kind, k3d:
/// `/var/log/pods`): each line in the CRI format, every fifth cut into `P` parts, every
/// seventh on stdout.
fn cri_format() -> Vec<u8> {
    let mut out = Vec::new();
    let lines = case_files()
        .iter()
        .filter(|f| f.extension().is_some_and(|x| x == "log"))
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.lines().map(str::to_string).collect::<Vec<_>>()
        })
        .collect::<Vec<_>>();
    for (i, line) in lines.iter().enumerate() {
        let stream = if i % 7 == 0 { "stdout" } else { "stderr" };
        let time = format!("2024-05-01T10:{:02}:{:02}.{i:06}Z", (i / 60) % 60, i % 60);
        let mut rest = line.as_str();
        // Cut into `P` parts of 40 bytes: a line of a few hundred bytes, so that its parts fit
        // in a test block (a 3 KiB line cut so spans two blocks, which then hold no record
        // start: which lines fall on `i % 5` moves as cases are added).
        if i % 5 == 0 && line.len() < 1000 {
            while rest.len() > 40 {
                let cut = (1..=40).rev().find(|&c| rest.is_char_boundary(c)).unwrap();
                let _ = writeln!(out, "{time} {stream} P {}", &rest[..cut]);
                rest = &rest[cut..];
            }
        }
        let _ = writeln!(out, "{time} {stream} F {rest}");
    }
    out
}

/// Reads every block of `data` as a worker does, told its start by the block before, and
/// returns each block's byte range and how many bytes its worker read. Checks that each block
/// has the range it finds when it is not told its start.
fn blocks_of(data: &[u8], block_bytes: u64) -> Vec<((u64, u64), usize)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    std::fs::write(&path, data).unwrap();
    let file = File::open(&path).unwrap();
    let len = data.len() as u64;
    let mut told = Some(0);
    (0..len.div_ceil(block_bytes))
        .map(|k| {
            let mut buf = ReadBuf::default();
            let max = usize::MAX;
            let block = file_block(&file, len, k, block_bytes, max, told, &mut buf);
            let block = block.unwrap().expect("no long line");
            let alone = file_block(
                &file,
                len,
                k,
                block_bytes,
                max,
                None,
                &mut ReadBuf::default(),
            );
            assert_eq!(
                block.range,
                alone.unwrap().expect("no long line").range,
                "block {k}"
            );
            told = block.next_start;
            (block.range, buf.filled)
        })
        .collect()
}

#[test]
fn a_cri_format_log_reads_as_one_loop_does_in_blocks_of_its_own() {
    let data = cri_format();
    assert!(data.len() > 200_000, "{}", data.len());
    check(&data, "CRI format", None, BLOCKS);
    // Cut before most of its lines, a block holds about its own bytes (no CRI line begins a
    // record alone: it may continue a `P` line).
    let block_bytes = 4096;
    let blocks = blocks_of(&data, block_bytes);
    let longest = blocks.iter().map(|((s, e), _)| e - s).max().unwrap();
    assert!(longest < 2 * block_bytes, "{longest}");
    // Every block but the last holds a record's start; the last holds the file's tail, shorter
    // than a block, which may begin none (the P parts of a line and its F end: where the tail
    // falls moves as cases are added).
    let (_, all_but_last) = blocks.split_last().unwrap();
    assert!(all_but_last.iter().all(|((s, e), _)| s < e));
}

/// The sizes of the blocks the stream reader cuts `data` into, in order.
fn stream_blocks(data: &[u8], block_bytes: usize) -> Vec<usize> {
    let (pool_tx, pool_rx) = channel::<Vec<u8>>();
    let (work_tx, work_rx) = channel::<(u64, Vec<u8>)>();
    let (msg_tx, _msg_rx) = channel::<Msg>();
    let reader = Box::new(std::io::Cursor::new(data.to_vec()));
    let mut sizes = Vec::new();
    std::thread::scope(|scope| {
        scope.spawn(move || cut_stream(reader, block_bytes, &pool_rx, &work_tx, &msg_tx));
        let _ = pool_tx.send(Vec::new());
        while let Ok((_, block)) = work_rx.recv() {
            sizes.push(block.len());
            let _ = pool_tx.send(block);
        }
    });
    sizes
}

#[test]
fn lines_of_no_shape_are_cut_every_block() {
    // No line opens a record: each begins one, and a block holds about its own bytes.
    let mut data = Vec::new();
    for i in 0..12_000 {
        let _ = writeln!(data, "{i:>8} some output of no known shape, line {i}");
    }
    check(&data, "no shape", None, &[64 << 10]);
    let block_bytes = 64 << 10;
    let blocks = blocks_of(&data, block_bytes);
    assert!(blocks.len() > 5, "{}", blocks.len());
    for (k, ((start, end), read)) in blocks.iter().enumerate() {
        assert!(end - start < block_bytes + 100, "block {k}: {start}..{end}");
        assert!(
            (*read as u64) <= 2 * block_bytes + BACK_BYTES,
            "block {k} read {read}"
        );
    }
    // A stream of them too.
    let sizes = stream_blocks(&data, block_bytes as usize);
    assert_eq!(sizes.iter().sum::<usize>(), data.len());
    assert!(sizes.len() > 5, "{sizes:?}");
    assert!(
        sizes.iter().all(|&n| n < 2 * block_bytes as usize),
        "{sizes:?}"
    );
}

#[test]
fn a_record_cut_at_the_cap_reads_as_one_loop_does() {
    // A record that opens and takes 3 MiB of lines of no shape: joined up to the assembler's
    // cap, then a record per line, cut where the cap ends its reach.
    let mut data = b"E0613 10:15:42.123456    1234 a.go:1] \"m\" err=<\n".to_vec();
    for i in 0..70_000 {
        let _ = writeln!(data, "{i:>8} wrapped output of no known shape, line {i}");
    }
    data.extend_from_slice(b"I0613 10:15:43.000000    1234 kubelet.go:1] next\n");
    check(&data, "a record at the cap", None, &[BLOCK_BYTES]);
    let blocks = blocks_of(&data, BLOCK_BYTES as u64);
    let cap = DEFAULT_MAX_RECORD_BYTES as u64;
    // The first block holds the joined record and the lines up to the cut after it.
    assert!(
        blocks[0].0.1 > cap && blocks[0].0.1 < 2 * cap + 1000,
        "{:?}",
        blocks[0]
    );
    assert!(blocks[2..].iter().all(|((s, e), _)| s < e), "{blocks:?}");
    // A stream: the joined record and the lines up to the cap in the first blocks, then blocks
    // of about their nominal size.
    let sizes = stream_blocks(&data, 256 << 10);
    assert_eq!(sizes.iter().sum::<usize>(), data.len());
    assert!(
        sizes[0] > cap as usize && sizes[0] < 2 * cap as usize,
        "{sizes:?}"
    );
    assert!(sizes[1..].iter().all(|&n| n < 512 << 10), "{sizes:?}");
}

/// The classification a parsing thread remembers is the one `classify` gives: every record of
/// every case, read three times over (the first sighting classifies, the second caches, the
/// third hits), is the event `classify` makes of it, less its time.
#[test]
fn a_remembered_classification_is_what_classify_gives() {
    let mut hits = 0;
    for _ in 0..3 {
        for f in case_files() {
            let mut ctx = ParseContext::new(2025);
            for r in case_records(&f) {
                let parsed = parse(&r, &mut ctx);
                let want = podcoroner_core::logs::classify(&parsed).map(|e| {
                    let mut e = e.into_owned();
                    e.time = None;
                    e
                });
                let got = classified(&parsed);
                assert_eq!(got.as_ref().map(|(e, _)| &**e), want.as_ref(), "{r}");
                if let Some((_, key)) = got {
                    assert_eq!(key, podcoroner_core::logs::content_key(&parsed));
                    hits += usize::from(RECENT.with_borrow(|c| c.events.contains_key(&key)));
                }
            }
        }
    }
    assert!(hits > 500, "{hits} records met a remembered classification");
}

/// `r` with the times of its opening `k` replaced: the envelope's (when it has one) by `env`,
/// the record's own by `own` (klog's `MMDD hh:mm:ss…`, JSON's `ts`).
fn at_time(r: &str, k: Opening, env: &str, own: &str) -> String {
    let [env_time, own_time] = k.times();
    let env = if env_time.is_empty() { "" } else { env };
    format!(
        "{env}{}{own}{}",
        &r[env_time.end..own_time.start],
        &r[own_time.end..]
    )
}

/// A record with an [`Opening`] read again at other times is read as parsing it gives: every
/// klog record of every case (bare or in a syslog envelope), each bare one in a syslog envelope,
/// and every kubelet JSON record, read twice (the second reading remembers it), then at other
/// dates and times (klog's: a shorter and a longer fraction, none, a comma, a leap second, New
/// Year's Eve, an impossible date, another month; the envelope's: a padded day, a fraction,
/// another month; JSON's: no fraction, a long one, the epoch, a year before and after), gives
/// what a thread that never read it gets, to the same context after.
#[test]
fn a_record_read_again_at_other_times_reads_as_parsing_does() {
    const KLOG: [&str; 8] = [
        "0613 00:00:00.000000",
        "0613 23:59:59.5",
        "0101 01:02:03.123456789",
        "1231 23:59:59.999999",
        "0229 12:00:00.000001",
        "0712 08:00:60",
        "0930 10:11:12",
        "0613 00:00:00,250",
    ];
    const JSON: [&str; 6] = [
        "1655581336244.2942",
        "1655581336244",
        "1655581336244.29420000000000000001",
        "0",
        "1623958936000.5",
        "1718931736999.0",
    ];
    const ENV: [&str; 4] = [
        "Jun 13 00:00:00",
        "Jan  1 01:02:03",
        "Dec 31 23:59:59.999",
        "Feb 30 12:00:00",
    ];
    let opts = StreamOpts::new("f", LogKind::Kubelet, None);
    let (mut bare, mut enveloped, mut json) = (0, 0, 0);
    for f in case_files() {
        let records = case_records(&f);
        let wrapped: Vec<String> = records
            .iter()
            .filter(|r| !r.starts_with('{') && opening(r).is_some_and(|k| k.times()[0].is_empty()))
            .map(|r| format!("Jun 13 00:00:00 node-a kubelet[2417]: {r}"))
            .collect();
        let mut ctx = ParseContext::new(2025);
        for r in records.iter().chain(&wrapped) {
            let mut read = LogRead::default();
            handle(r, 1, &mut ctx, &opts, &mut read);
            handle(r, 2, &mut ctx, &opts, &mut read);
            let Some(k) = opening(r) else {
                continue;
            };
            let is_json = r.starts_with('{');
            let times: &[&str] = if is_json { &JSON } else { &KLOG };
            for (i, own) in times.iter().enumerate() {
                let again = at_time(r, k, ENV[i % ENV.len()], own);
                assert!(
                    opening(&again).is_some(),
                    "an opening with times of KLOG, JSON and ENV: {again}"
                );
                if read_as_by_a_new_thread(&again, &mut ctx, &opts) {
                    *if is_json {
                        &mut json
                    } else if k.times()[0].is_empty() {
                        &mut bare
                    } else {
                        &mut enveloped
                    } += 1;
                }
            }
        }
    }
    assert!(
        bare > 1000 && enveloped > 1000 && json > 50,
        "read again: {bare} bare klog records, {enveloped} in a syslog envelope, {json} JSON"
    );
}

/// Reads `again` on this thread, looked up whatever the thread judged of its lookups so far,
/// and asserts that it reads as on a thread that never read a record, from the same context
/// `ctx`: the same [`LogRead`], context after, and answer of whether it dates its block.
/// Whether it was found remembered.
fn read_as_by_a_new_thread(again: &str, ctx: &mut ParseContext, opts: &StreamOpts<'_>) -> bool {
    let remembered = AGAIN.with_borrow_mut(|a| {
        a.resting = 0;
        opening(again).is_some_and(|k| a.remembered(again, k).is_some())
    });
    let before = ctx.clone();
    let mut got = LogRead::default();
    let dated = handle(again, 3, ctx, opts, &mut got);
    let (want, want_ctx, want_dated) = std::thread::scope(|s| {
        s.spawn(|| {
            let mut ctx = before.clone();
            let mut read = LogRead::default();
            let dated = handle(again, 3, &mut ctx, opts, &mut read);
            (read, ctx, dated)
        })
        .join()
        .unwrap()
    });
    assert_same(&got, &want, again);
    assert_eq!(*ctx, want_ctx, "{again}");
    assert_eq!(dated, want_dated, "{again}: dates its block");
    remembered
}

/// A record that starts as kubelet JSON with a `ts` but is read otherwise is never remembered,
/// and one the same but for its `ts` is read as parsing reads it: an object with a syntax error
/// before a record that `parse` finds after it as after a prefix (klog, klog in a syslog
/// envelope, kubelet JSON, a whole record after a cut one), and an object with journald's
/// members (read as a journald export) or of no known shape, read with and without
/// `message_only`. From a fresh try at breaking the memo.
#[test]
fn a_record_that_starts_as_json_but_is_read_otherwise_is_not_remembered() {
    let cut_before_whole = |ts: &str| {
        format!(
            r#"{{"ts":{ts},"caller":"kubelet/kubelet.go:2102","msg":"Error syncing pod, {{"ts":1655581340000,"caller":"kubelet/pod_workers.go:1301","msg":"Error syncing pod, skipping","err":"x","pod":{{"name":"web","namespace":"shop"}}}}"#
        )
    };
    let tails = [
        "I0613 00:00:00.000000 1 a.go:1] x",
        r#"{"ts":5,"msg":"x"}"#,
        " Jun 13 00:00:00 node-a kubelet[2417]: E0613 00:00:00.000000 2417 a.go:1] x",
        r#""MESSAGE":"hello"}"#,
        r#""__CURSOR":"s=1"}"#,
        r#""__REALTIME_TIMESTAMP":"1655581336244000","msg":"x"}"#,
        r#" time="2024-01-01T00:00:00Z" level=error msg="x""#,
        " node-a: I0613 00:00:00.000000 1 a.go:1] x",
        " 2024-05-01T10:00:00.123Z ERROR message",
        " 2023-01-20T12:26:08+00:00 node-a kubelet[1]: I0120 13:26:08 1 a.go:1] x",
        "}",
        r#""msg":"x" garbage"#,
    ];
    let opts = StreamOpts::new("f", LogKind::Kubelet, None);
    let mut pairs: Vec<(String, String)> = tails
        .iter()
        .map(|t| (format!(r#"{{"ts":1,{t}"#), format!(r#"{{"ts":2,{t}"#)))
        .collect();
    pairs.push((
        cut_before_whole("1655581336244.2942"),
        cut_before_whole("1655581400000"),
    ));
    for message_only in [false, true] {
        for (r, again) in &pairs {
            let (r, again) = (r.clone(), again.clone());
            on_a_new_thread(move |_| {
                let opts = StreamOpts::new("f", LogKind::Kubelet, None);
                let mut ctx = ParseContext::new(2025);
                ctx.message_only = message_only;
                let mut read = LogRead::default();
                handle(&r, 1, &mut ctx, &opts, &mut read);
                handle(&r, 2, &mut ctx, &opts, &mut read);
                assert!(opening(&again).is_some(), "{again}");
                assert!(
                    !read_as_by_a_new_thread(&again, &mut ctx, &opts),
                    "{again} remembered"
                );
            });
        }
    }
    // A whole kubelet JSON record is remembered all the same.
    let r = r#"{"ts":1,"caller":"a.go:1","msg":"Error syncing pod, skipping","err":"x","pod":{"name":"web","namespace":"shop"}}"#;
    let mut ctx = ParseContext::new(2025);
    let mut read = LogRead::default();
    handle(r, 1, &mut ctx, &opts, &mut read);
    handle(r, 2, &mut ctx, &opts, &mut read);
    assert!(read_as_by_a_new_thread(
        &r.replace(":1,", ":2,"),
        &mut ctx,
        &opts
    ));
}

/// `f` with a reader of its own (`handle` of a record at line `n`), on a thread of its own, so
/// that it starts with nothing remembered; the thread's [`LogRead`] after.
fn on_a_new_thread(f: impl FnOnce(&mut dyn FnMut(&str, u64)) + Send + 'static) -> LogRead {
    std::thread::spawn(move || {
        let opts = StreamOpts::new("f", LogKind::Kubelet, None);
        let mut ctx = ParseContext::new(2025);
        let mut read = LogRead::default();
        f(&mut |text, n| {
            handle(text, n, &mut ctx, &opts, &mut read);
        });
        read
    })
    .join()
    .unwrap()
}

/// A thread that finds few records remembered stops looking them up for a while, then tries
/// again: records each read once (none ever remembered) rest it after [`AGAIN_TRIES`] lookups;
/// [`AGAIN_RESTS`] records later it looks up again, and one read three times over in a row is
/// then remembered and found.
#[test]
fn a_thread_that_finds_few_records_remembered_rests_then_tries_again() {
    let read = on_a_new_thread(|handle| {
        let record = |n: u32| {
            format!(
                "E0613 00:00:00.000000    2417 pod_workers.go:1] \"Error syncing pod, skipping\" \
                 pod=\"shop/web-{n}\""
            )
        };
        let state = || AGAIN.with_borrow(|a| (a.tried, a.found, a.resting));
        for n in 0..AGAIN_TRIES - 1 {
            handle(&record(n), 1);
        }
        assert_eq!(state(), (AGAIN_TRIES - 1, 0, 0));
        handle(&record(AGAIN_TRIES), 1);
        assert_eq!(state(), (0, 0, AGAIN_RESTS));
        for n in 0..AGAIN_RESTS {
            handle(&record(n), 1);
        }
        assert_eq!(state(), (0, 0, 0), "no lookup while resting");
        for _ in 0..3 {
            handle(&record(7), 1);
        }
        assert_eq!(state(), (3, 1, 0));
    });
    assert_eq!(read.parsed, u64::from(AGAIN_TRIES + AGAIN_RESTS + 3));
}

/// A record longer than [`AGAIN_MAX_RECORD_BYTES`] is neither looked up nor remembered, so what
/// a thread remembers stays small whatever the log: read three times, it is parsed each time.
/// A record the catalogue cannot name is looked up but never remembered.
#[test]
fn a_long_record_is_not_remembered() {
    let read = on_a_new_thread(|handle| {
        let long = format!(
            "E0613 00:00:00.000000    2417 kubelet.go:1] \"Error syncing pod, skipping\" err=\"{}\"",
            "x".repeat(AGAIN_MAX_RECORD_BYTES)
        );
        let short = "E0613 00:00:00.000000    2417 kubelet.go:1] \"Error syncing pod, skipping\"";
        let unnamed = "I0613 00:00:00.000000    2417 kubelet.go:1] \"no rule reads this\"";
        for _ in 0..3 {
            handle(&long, 1);
            handle(short, 2);
            handle(unnamed, 3);
        }
        let (tried, found, seen) = AGAIN.with_borrow(|a| (a.tried, a.found, a.seen.len()));
        assert_eq!(
            (tried, found, seen),
            (6, 1, 1),
            "the long record is not looked up"
        );
    });
    assert_eq!(read.parsed, 9);
}
