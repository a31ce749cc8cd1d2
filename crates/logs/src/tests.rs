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
            .map(|e| (e.event.kind, e.time))
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
fn lone_carriage_returns_and_utf16_read_like_the_plain_log() {
    let lines = case_lines();
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.log");
    std::fs::write(&whole, lines.join("\n") + "\n").unwrap();
    let cr = dir.path().join("cr.log");
    std::fs::write(&cr, lines.join("\r") + "\r").unwrap();
    let cr_gz = dir.path().join("cr.log.gz");
    gz(&cr_gz, &(lines.join("\r") + "\r"));
    let a = read(&Source::File(whole), LogKind::Kubelet, None).unwrap();
    assert!(a.lone_cr_files.is_empty());
    for file in [cr, cr_gz] {
        let b = read(&Source::File(file.clone()), LogKind::Kubelet, None).unwrap();
        assert_eq!(b.lines, a.lines, "{}", file.display());
        assert_eq!(b.events.len(), a.events.len(), "{}", file.display());
        assert_eq!(b.lone_cr_files, vec![file]);
    }
    // UTF-16 with its byte order mark and CRLF line ends, as PowerShell's `>` writes a log.
    let utf16 = dir.path().join("utf16.log");
    let mut bytes = vec![0xFF, 0xFE];
    for unit in (lines.join("\r\n") + "\r\n").encode_utf16() {
        bytes.extend_from_slice(&unit.to_le_bytes());
    }
    std::fs::write(&utf16, bytes).unwrap();
    let b = read(&Source::File(utf16.clone()), LogKind::Kubelet, None).unwrap();
    assert_eq!((b.lines, b.events.len()), (a.lines, a.events.len()));
    assert_eq!((b.utf16_files, b.lone_cr_files), (vec![utf16], vec![]));
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

// === journald: a real journal ===

/// A journal written by `systemd-journal-remote` in `dir`: fails, naming the package, when it is
/// not installed.
fn test_journal(dir: &Path) -> test_util::TestJournal {
    test_util::TestJournal::new(dir).unwrap_or_else(|e| panic!("{e}"))
}

/// A leaked sandbox the kubelet's GC fails to stop (Calico's datastore refuses the CNI DEL).
const SANDBOX: &str = "3f2a9c7d1e5b48a6c0d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c6d8e0f2a4b6";

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// The kubelet's and containerd's entries around one GC cycle at `10:0<minute>:01`: containerd's
/// `StopPodSandbox … failed`, then the kubelet's CRI client and GC lines for the same failure,
/// as kubelet 1.26 (`remote_runtime.go`, `kuberuntime_gc.go`) and containerd 1.6 write them.
fn gc_cycle(minute: u32) -> Vec<test_util::JournalEntry> {
    use test_util::JournalEntry;
    let err = format!(
        "failed to destroy network for sandbox \\\"{SANDBOX}\\\": plugin type=\\\"calico\\\" failed (delete): \
         error getting ClusterInformation: connection is unauthorized: Unauthorized"
    );
    vec![
        JournalEntry::new(
            "containerd",
            at(&format!("2026-11-29T10:0{minute}:01.099Z")),
            &format!(
                "time=\"2026-11-29T10:0{minute}:01.099000000Z\" level=error msg=\"StopPodSandbox for \\\"{SANDBOX}\\\" failed\" error=\"{err}\""
            ),
        ),
        JournalEntry::new(
            "kubelet",
            at(&format!("2026-11-29T10:0{minute}:01.100Z")),
            &format!(
                "E1129 10:0{minute}:01.100000    2783 remote_runtime.go:205] \"StopPodSandbox from runtime service failed\" \
                 err=\"rpc error: code = Unknown desc = {err}\" podSandboxID=\"{SANDBOX}\""
            ),
        ),
        JournalEntry::new(
            "kubelet",
            at(&format!("2026-11-29T10:0{minute}:01.101Z")),
            &format!(
                "E1129 10:0{minute}:01.100050    2783 kuberuntime_gc.go:176] \"Failed to stop sandbox before removing\" \
                 err=\"rpc error: code = Unknown desc = {err}\" sandboxID=\"{SANDBOX}\""
            ),
        ),
    ]
}

/// A journal holding: sshd's login, the kubelet's start-up `SyncLoop ADD` of 200 pods (a
/// 5.6 KB message), three GC cycles (10:00, 10:01, 10:02) of [`gc_cycle`], and
/// containerd's lines among them. 8 kubelet entries.
fn node_journal(dir: &Path) -> test_util::TestJournal {
    use test_util::JournalEntry;
    let journal = test_journal(dir);
    let pods: Vec<String> = (0..200)
        .map(|i| format!("\"shop/cart-6b7c8d9e5-{i:05}\""))
        .collect();
    assert!(pods.join(",").len() > 5000);
    let mut entries = vec![
        JournalEntry::new(
            "ssh",
            at("2026-11-29T09:58:00Z"),
            "Accepted publickey for admin from 192.0.2.7 port 50122 ssh2",
        ),
        JournalEntry::new(
            "kubelet",
            at("2026-11-29T09:59:00.5Z"),
            &format!(
                "I1129 09:59:00.500000    2783 kubelet.go:2449] \"SyncLoop ADD\" source=\"api\" pods=[{}]",
                pods.join(",")
            ),
        ),
        JournalEntry::new(
            "containerd",
            at("2026-11-29T09:59:30Z"),
            "time=\"2026-11-29T09:59:30.000000000Z\" level=info msg=\"StopPodSandbox for \\\"3f2a9c7d1e5b\\\"\"",
        ),
    ];
    for minute in 0..3 {
        entries.extend(gc_cycle(minute));
    }
    journal.append(&entries).unwrap_or_else(|e| panic!("{e}"));
    journal
}

/// (kind, time, sandbox ID, cause) of each event.
type EventRow = (
    podcoroner_core::logs::EventKind,
    Option<Timestamp>,
    Option<String>,
    Option<podcoroner_core::logs::Cause>,
);

fn event_rows(read: &LogRead) -> Vec<EventRow> {
    read.events
        .iter()
        .map(|e| {
            (
                e.event.kind,
                e.time,
                e.event.ids.sandbox_id.as_deref().map(str::to_string),
                e.event.cause,
            )
        })
        .collect()
}

/// The two failure events of the kubelet in the GC cycle at `10:0<minute>:01`.
fn gc_cycle_events(minute: u32) -> Vec<EventRow> {
    use podcoroner_core::logs::{Cause, CniFailure, EventKind};
    let cause = Some(Cause::CniTeardown(CniFailure::UnauthorizedDatastore));
    vec![
        (
            EventKind::StopPodSandboxFailed,
            Some(at(&format!("2026-11-29T10:0{minute}:01.1Z"))),
            Some(SANDBOX.to_string()),
            cause,
        ),
        (
            EventKind::StopSandboxBeforeRemoveFailed,
            Some(at(&format!("2026-11-29T10:0{minute}:01.10005Z"))),
            Some(SANDBOX.to_string()),
            cause,
        ),
    ]
}

#[test]
fn journal_directory_reads_only_the_units_entries_in_order() {
    use podcoroner_core::logs::{EventKind, SyncOp};
    let dir = tempfile::tempdir().unwrap();
    let journal = node_journal(dir.path());
    let source = Source::from_arg("journald", "kubelet", Some(journal.dir()));
    let got = read(&source, LogKind::Kubelet, None).unwrap();
    let origin = format!("journald:kubelet@{}", dir.path().display());
    assert_eq!(got.origins.len(), 1);
    assert_eq!(got.origins[0], origin);
    // One `journalctl -o json` line per kubelet entry: none of ssh's or containerd's.
    assert_eq!((got.lines, got.parsed, got.unparsed), (7, 7, 0));
    let mut want = vec![(
        EventKind::SyncLoop(SyncOp::Add),
        Some(at("2026-11-29T09:59:00.5Z")),
        None,
        None,
    )];
    for minute in 0..3 {
        want.extend(gc_cycle_events(minute));
    }
    assert_eq!(event_rows(&got), want);
    // The 5.6 KB message came whole (journalctl's JSON shows a field over 4096 bytes as null
    // without --all).
    assert_eq!(got.events[0].event.ids.pods.len(), 200);
    assert_eq!(
        got.events[0].event.ids.pods[199].name,
        "cart-6b7c8d9e5-00199"
    );
    assert!(got.events.iter().all(|e| *e.origin == *origin));
    let lines: Vec<u64> = got.events.iter().map(|e| e.line).collect();
    assert_eq!(lines, [1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(
        got.span,
        Some((
            at("2026-11-29T09:59:00.5Z"),
            at("2026-11-29T10:02:01.10005Z")
        ))
    );

    // The runtime's unit in the same journal: containerd's four lines, none of the kubelet's.
    let runtime = Source::from_arg("journald", "containerd", Some(journal.dir()));
    let got = read(&runtime, LogKind::Runtime, None).unwrap();
    assert_eq!(got.lines, 4);
    let kinds: Vec<EventKind> = got.events.iter().map(|e| e.event.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::StopPodSandboxStarted,
            EventKind::StopPodSandboxFailed,
            EventKind::StopPodSandboxFailed,
            EventKind::StopPodSandboxFailed
        ]
    );
}

#[test]
fn a_log_piped_in_is_read_to_its_end() {
    // `journalctl -u kubelet | podcoroner diagnose --offline --kubelet-log -`: a pipe has no
    // length, and was read as an empty file (0 lines, said "ok").
    use std::os::fd::AsRawFd as _;
    let data = case_lines().join("\n") + "\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kubelet.log");
    std::fs::write(&file, &data).unwrap();
    let want = read(&Source::File(file), LogKind::Kubelet, None).unwrap();
    let (reader, mut writer) = std::io::pipe().unwrap();
    let path = PathBuf::from(format!("/proc/self/fd/{}", reader.as_raw_fd()));
    // The writer stops at a broken pipe if the reader stops early.
    let writing = std::thread::spawn(move || writer.write_all(data.as_bytes()).is_ok());
    let got = read(&Source::File(path), LogKind::Kubelet, None).unwrap();
    drop(reader);
    assert!(writing.join().unwrap(), "the reader stopped before the end");
    assert!(
        want.lines > 500 && want.events.len() > 30,
        "{} lines, {} events",
        want.lines,
        want.events.len()
    );
    assert_eq!(
        (got.lines, got.parsed, got.unparsed, got.events.len()),
        (want.lines, want.parsed, want.unparsed, want.events.len())
    );
    assert_eq!(event_rows(&got), event_rows(&want));
    assert!(matches!(
        Source::from_arg("-", "kubelet", None),
        Source::File(p) if p == Path::new("/dev/stdin")
    ));
}

#[test]
fn journal_entries_are_quoted_in_one_field_order() {
    // journalctl writes an entry's fields in an order that changes from run to run; the record
    // a finding quotes must read the same on every diagnosis, with its time, host and unit
    // ahead of the message (a record cut to MAX_KEPT_TEXT_BYTES keeps them).
    let dir = tempfile::tempdir().unwrap();
    let journal = node_journal(dir.path());
    let source = Source::from_arg("journald", "kubelet", Some(journal.dir()));
    let texts = || -> Vec<String> {
        let got = read(&source, LogKind::Kubelet, None).unwrap();
        got.events.iter().map(|e| e.text.to_string()).collect()
    };
    let first = texts();
    assert_eq!(first.len(), 7);
    for _ in 0..4 {
        assert_eq!(texts(), first);
    }
    let cause = format!(
        "failed to destroy network for sandbox \\\\\\\"{SANDBOX}\\\\\\\": plugin type=\\\\\\\"calico\\\\\\\" failed (delete): \
         error getting ClusterInformation: connection is unauthorized: Unauthorized"
    );
    assert_eq!(
        first[1],
        format!(
            "{{\"__REALTIME_TIMESTAMP\":\"1795946401100000\",\"_HOSTNAME\":\"node-a\",\
             \"SYSLOG_IDENTIFIER\":\"kubelet\",\"_SYSTEMD_UNIT\":\"kubelet.service\",\"_PID\":\"1007\",\
             \"PRIORITY\":\"3\",\"MESSAGE\":\"E1129 10:00:01.100000    2783 remote_runtime.go:205] \
             \\\"StopPodSandbox from runtime service failed\\\" err=\\\"rpc error: code = Unknown desc = \
             {cause}\\\" podSandboxID=\\\"{SANDBOX}\\\"\"}}"
        )
    );
    // The 5.6 KB entry is cut after its message's start, not before it.
    assert!(first[0].len() < 4200, "{}", first[0].len());
    assert!(
        first[0].starts_with(
            "{\"__REALTIME_TIMESTAMP\":\"1795946340500000\",\"_HOSTNAME\":\"node-a\",\
             \"SYSLOG_IDENTIFIER\":\"kubelet\",\"_SYSTEMD_UNIT\":\"kubelet.service\",\"_PID\":\"1007\",\
             \"PRIORITY\":\"6\",\"MESSAGE\":\"I1129 09:59:00.500000    2783 kubelet.go:2449] \\\"SyncLoop ADD\\\""
        ),
        "{}",
        first[0]
    );
    assert!(first[0].ends_with('…'));

    // A snapshot's copy holds the same lines, read back as the same records.
    let out = dir.path().join("kubelet.log");
    assert_eq!(copy_window(&source, None, &out).unwrap(), 7);
    let copied = read(&Source::File(out.clone()), LogKind::Kubelet, None).unwrap();
    let copied: Vec<String> = copied.events.iter().map(|e| e.text.to_string()).collect();
    assert_eq!(copied, first);
}

#[test]
fn a_large_field_the_reader_leaves_out_does_not_change_what_it_reads() {
    // An entry with a 9 MiB field of its own: journalctl's JSON line is too long to put in
    // order, and the field, written first or last at random, would decide whether the entry's
    // message is read at all. journalctl is asked for the fields read (`--output-fields`).
    let dir = tempfile::tempdir().unwrap();
    let journal = test_journal(dir.path());
    let mut entries = gc_cycle(0);
    for e in &mut entries {
        e.extra.push(("BLOB".to_string(), "x".repeat(9 << 20)));
    }
    journal.append(&entries).unwrap_or_else(|e| panic!("{e}"));
    let source = Source::from_arg("journald", "kubelet", Some(journal.dir()));
    let first = read(&source, LogKind::Kubelet, None).unwrap();
    assert_eq!((first.lines, first.parsed, first.cut_lines), (2, 2, 0));
    assert_eq!(event_rows(&first), gc_cycle_events(0));
    for _ in 0..4 {
        let again = read(&source, LogKind::Kubelet, None).unwrap();
        let texts =
            |r: &LogRead| -> Vec<String> { r.events.iter().map(|e| e.text.to_string()).collect() };
        assert_eq!(texts(&again), texts(&first));
    }
}

#[test]
fn journal_directory_since_and_copy_window() {
    let dir = tempfile::tempdir().unwrap();
    let journal = node_journal(dir.path());
    let source = Source::from_arg("journald", "kubelet", Some(journal.dir()));
    // journalctl --since takes whole seconds: 10:01:01 keeps the 10:01:01.1 cycle.
    let since = at("2026-11-29T10:01:01Z");
    let got = read(&source, LogKind::Kubelet, Some(since)).unwrap();
    assert_eq!((got.lines, got.before_since), (4, 0));
    let mut want = gc_cycle_events(1);
    want.extend(gc_cycle_events(2));
    assert_eq!(event_rows(&got), want);

    // The window a snapshot keeps: journalctl's JSON lines from `since` on, which read back as a
    // file give the same events.
    let out = dir.path().join("kubelet.log");
    assert_eq!(copy_window(&source, Some(since), &out).unwrap(), 4);
    let text = std::fs::read_to_string(&out).unwrap();
    let messages: Vec<String> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["_SYSTEMD_UNIT"], "kubelet.service", "{l}");
            v["MESSAGE"].as_str().unwrap().to_string()
        })
        .collect();
    let want_messages: Vec<String> = [gc_cycle(1), gc_cycle(2)]
        .concat()
        .into_iter()
        .filter(|e| e.identifier == "kubelet")
        .map(|e| e.message)
        .collect();
    assert_eq!(messages, want_messages);
    let copied = read(&Source::File(out), LogKind::Kubelet, None).unwrap();
    assert_eq!(event_rows(&copied), want);
    // Without `since`, the whole unit: 7 entries.
    let all = dir.path().join("all.log");
    assert_eq!(copy_window(&source, None, &all).unwrap(), 7);
}

#[test]
fn journalctl_failures_name_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let source = |d: &Path| Source::from_arg("journald", "kubelet", Some(d));
    // An empty directory: journalctl would read nothing and succeed, but a directory named on
    // purpose must hold a journal.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = read(&source(&empty), LogKind::Kubelet, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read journal directory {}: no journal files (*.journal) in it or in a machine-ID subdirectory",
            empty.display()
        )
    );
    // A journal copied from /var/log/journal keeps its machine-ID subdirectory: journalctl reads
    // it there.
    let copied = dir.path().join("var-log-journal");
    let machine = copied.join(test_util::MACHINE_ID);
    std::fs::create_dir_all(&machine).unwrap();
    test_journal(&machine)
        .append(&gc_cycle(0))
        .unwrap_or_else(|e| panic!("{e}"));
    let got = read(&source(&copied), LogKind::Kubelet, None).unwrap();
    assert_eq!(event_rows(&got), gc_cycle_events(0));
    // journalctl fails on a file: the error names the directory and says why.
    let file = machine.join("system.journal");
    let err = read(&source(&file), LogKind::Kubelet, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read journal directory {}: Not a directory (os error 20)",
            file.display()
        )
    );
    // journalctl itself fails (an empty unit name): its stderr, after the directory.
    let no_unit = Source::from_arg("journald", "", Some(&copied));
    let err = read(&no_unit, LogKind::Kubelet, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "journalctl -D {} -u  failed: exit status: 1: Failed to add filter for units: Invalid argument",
            copied.display()
        )
    );
    let missing = dir.path().join("missing");
    let err = copy_window(&source(&missing), None, &dir.path().join("out.log")).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read journal directory {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
    assert_eq!(
        source(&missing).name(),
        format!("journald:kubelet@{}", missing.display())
    );
    assert_eq!(
        Source::from_arg("journald", "containerd", None).name(),
        "journald:containerd"
    );
}

#[test]
fn a_log_written_newest_first_is_read_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    // journalctl -r: newest first, across New Year (yearless syslog and klog times).
    let lines = [
        r#"Jan 01 00:00:05 node-a kubelet[1]: I0101 00:00:05.000000       1 kubelet.go:2063] "SyncLoop REMOVE" source="api" pods=[default/c]"#,
        r#"Dec 31 23:59:59 node-a kubelet[1]: I1231 23:59:59.000000       1 kubelet.go:2063] "SyncLoop REMOVE" source="api" pods=[default/b]"#,
        r#"Dec 31 23:00:00 node-a kubelet[1]: I1231 23:00:00.000000       1 kubelet.go:2063] "SyncLoop REMOVE" source="api" pods=[default/a]"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let got = read(&Source::File(path.clone()), LogKind::Kubelet, None).unwrap();
    assert!(got.newest_first);
    let names: Vec<&str> = got
        .events
        .iter()
        .map(|e| e.event.ids.pods[0].name.as_ref())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    let times: Vec<_> = got.events.iter().map(|e| e.time.unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    // Lines keep their positions in the file.
    assert_eq!(got.events[0].line, 3);
    // In order: left as read.
    let rev: Vec<&str> = lines.iter().rev().copied().collect();
    std::fs::write(&path, rev.join("\n") + "\n").unwrap();
    let got = read(&Source::File(path), LogKind::Kubelet, None).unwrap();
    assert!(!got.newest_first);
    assert_eq!(got.events[0].line, 1);
}

#[test]
fn a_yearless_log_is_read_in_the_year_of_a_dated_one() {
    let dir = tempfile::tempdir().unwrap();
    let kubelet = dir.path().join("kubelet.log");
    let containerd = dir.path().join("containerd.log");
    std::fs::write(
        &kubelet,
        "May 12 11:18:48 node-a kubelet[1]: E0512 11:18:48.474993       1 remote_runtime.go:205] \"StopPodSandbox from runtime service failed\" err=\"rpc error: code = DeadlineExceeded desc = context deadline exceeded\" podSandboxID=\"b25b1fe9f0eae615534102c4a2d370897be12abe05d26408e6baed4556c3d1f1\"\n",
    )
    .unwrap();
    std::fs::write(
        &containerd,
        "May 11 16:09:21 node-a containerd[765]: time=\"2023-05-11T16:09:21.922301939+08:00\" level=info msg=\"StopPodSandbox for \\\"f1f5708a3613e62a4d38161c36417538dbc3b1e46020bea2a4a7c4cca87603a0\\\"\"\n",
    )
    .unwrap();
    let k = read(&Source::File(kubelet.clone()), LogKind::Kubelet, None).unwrap();
    let c = read(&Source::File(containerd), LogKind::Runtime, None).unwrap();
    assert_eq!(k.dated_year, None);
    assert_eq!(c.dated_year, Some(2023));
    let again = read_as(
        &Source::File(kubelet),
        LogKind::Kubelet,
        None,
        ReadAs {
            year: Some(2023),
            offset: None,
        },
    )
    .unwrap();
    assert_eq!(
        again.events[0].time.unwrap().to_string(),
        "2023-05-12T11:18:48.474993Z"
    );
}

#[test]
fn an_indented_journalctl_header_dates_the_log_and_is_no_record() {
    // deckhouse/deckhouse#336: the header pasted with its block's indentation.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    std::fs::write(
        &path,
        "  -- Logs begin at Wed 2021-11-17 13:38:23 MSK, end at Tue 2021-11-30 16:48:44 MSK. --\n\
         Nov 30 16:20:18 kube-master-3 kubelet[1977858]: I1130 16:20:18.795210 1977863 kubelet_pods.go:1247] Killing unwanted pod \"upmeter-kbgrc\"\n",
    )
    .unwrap();
    let got = read(&Source::File(path.clone()), LogKind::Kubelet, None).unwrap();
    assert_eq!(got.dated_year, Some(2021));
    assert_eq!(got.understanding.not_understood, 0);
    assert_eq!(got.understanding.non_records, 1);
    assert_eq!(times_at_start(&Source::File(path)).year, Some(2021));
}

/// Sets `path`'s modification time to `at` (RFC 3339).
fn set_modified(path: &Path, at: &str) {
    let at: Timestamp = at.parse().unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(std::time::SystemTime::from(at))
        .unwrap();
}

#[test]
fn node_logs_say_whose_year_their_yearless_times_take() {
    let dir = tempfile::tempdir().unwrap();
    let kubelet = dir.path().join("kubelet.log");
    let klog = "E0512 11:18:48.474993       1 remote_runtime.go:205] \"StopPodSandbox from runtime service failed\" err=\"rpc error: code = DeadlineExceeded desc = context deadline exceeded\" podSandboxID=\"b25b1fe9f0eae615534102c4a2d370897be12abe05d26408e6baed4556c3d1f1\"\n";
    std::fs::write(&kubelet, klog).unwrap();
    set_modified(&kubelet, "2024-06-01T00:00:00Z");
    let source = Source::File(kubelet);
    fn read<'s>(logs: Vec<(String, &'s Source, LogKind)>) -> Vec<NodeLog<'s>> {
        read_in_node_times(logs, |s, k, a| read_as(s, k, None, a)).unwrap()
    }
    // Alone: the file's year, said.
    let got = read(vec![("kubelet_log".into(), &source, LogKind::Kubelet)]);
    let (year, whose) = got[0].year_note.clone().unwrap();
    assert_eq!(year, 2024);
    assert!(
        whose.starts_with("the year its file was last modified"),
        "{whose}"
    );
    // A log of December last written on January 1st: the year before, and why.
    let december = dir.path().join("december.log");
    std::fs::write(&december, klog.replacen("E0512", "E1231", 1)).unwrap();
    set_modified(&december, "2025-01-01T00:05:00Z");
    let december = Source::File(december);
    let got = read(vec![("kubelet_log".into(), &december, LogKind::Kubelet)]);
    assert_eq!(
        got[0].year_note,
        Some((
            2024,
            "the year before its file was last modified (2025-01-01T00:05:00Z): in 2025 its \
             times would be after that (no record nor other log gives one)"
                .to_string()
        ))
    );
    // A JSON log's times carry their year: nothing to say; nor do a zap log's, whose lines
    // open with an RFC 3339 time (a fresh user's try).
    let records = r#"{"ts": 1891227870992.7715, "caller": "app/server.go:529", "msg": "Kubelet version", "v": 0, "kubeletVersion": "v1.34.4"}
{"ts": 1891227871294.6, "caller": "kuberuntime/kuberuntime_gc.go:394", "msg": "Removed symlink", "v": 4, "path": "/var/log/containers/web-0_shop_main-3aa0af74caef6e7a010361cd5a32ccb970cc4427de7cc5e0abb4e64210045ea3.log"}
{"ts": 1891227871302.4253, "caller": "kuberuntime/kuberuntime_gc.go:394", "msg": "Removed symlink", "v": 4, "path": "/var/log/containers/web-0_shop_main-892ef6f7305a28f98f1d8b24fd664ff2575260ebbba48a69c145deb2afe5dfb8.log"}
"#;
    let zap =
        "2026-12-01T12:00:00.000Z\tINFO\tcontroller\tStarting workers\t{\"worker count\": 1}\n";
    for (name, text) in [("json.log", records), ("zap.log", zap)] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let log = Source::File(path);
        let got = read(vec![("kubelet_log".into(), &log, LogKind::Kubelet)]);
        assert_eq!(got[0].year_note, None, "{name}");
    }
    // Beside a dated log: its year, read again.
    let containerd = dir.path().join("containerd.log");
    std::fs::write(
        &containerd,
        "time=\"2023-05-11T16:09:21.922301939Z\" level=info msg=\"StopPodSandbox for \\\"f1f5708a3613e62a4d38161c36417538dbc3b1e46020bea2a4a7c4cca87603a0\\\"\"\n",
    )
    .unwrap();
    let runtime = Source::File(containerd);
    let got = read(vec![
        ("kubelet_log".into(), &source, LogKind::Kubelet),
        ("runtime_log".into(), &runtime, LogKind::Runtime),
    ]);
    assert_eq!(
        got[0].year_note,
        Some((2023, "the year of the other log".to_string()))
    );
    assert_eq!(
        got[0].read.events[0].time.unwrap().to_string(),
        "2023-05-12T11:18:48.474993Z"
    );
    // A log whose times all carry their year says nothing.
    assert_eq!(got[1].year_note, None);
}

#[test]
fn a_glog_file_header_dates_the_log_and_is_no_record() {
    // kubernetes-sigs/sig-windows-tools#76
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    std::fs::write(
        &path,
        "Log file created at: 2020/05/03 13:38:35\n\
         Running on machine: w1\n\
         Binary: Built with gc go1.13.9 for windows/amd64\n\
         Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg\n\
         I0503 13:38:36.024877    5324 kubelet.go:1] \"Killing unwanted pod\" podName=\"web-0\"\n",
    )
    .unwrap();
    let got = read(&Source::File(path.clone()), LogKind::Kubelet, None).unwrap();
    assert_eq!(got.dated_year, Some(2020));
    assert_eq!(got.understanding.not_understood, 0);
    assert_eq!(got.understanding.non_records, 4);
    assert_eq!(times_at_start(&Source::File(path)).year, Some(2020));
}

#[test]
fn journalctls_header_gives_the_zone_of_its_short_prefix() {
    // kubernetes/minikube#4084: `+0430`, the times of the lines after it local
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubelet.log");
    std::fs::write(
        &path,
        "-- Logs begin at Thu 2019-04-11 23:51:07 +0430, end at Fri 2019-04-12 09:29:01 +0430. --\n\
         Apr 12 09:28:14 node-a kubelet[14260]: W0412 09:28:14.744599   14260 eviction_manager.go:333] eviction manager: attempting to reclaim ephemeral-storage\n",
    )
    .unwrap();
    let start = times_at_start(&Source::File(path));
    assert_eq!(start.year, Some(2019));
    assert_eq!(start.offset.map(|o| o.seconds()), Some(4 * 3600 + 1800));
    assert_eq!(
        blocks::journal_header_offset(
            "-- Journal begins at Mon 2023-06-12 08:00:01 UTC, ends at Mon 2023-06-12 09:00:00 UTC. --"
        ),
        None,
        "UTC is how zone-less times are read already"
    );
    assert_eq!(
        blocks::journal_header_offset(
            "-- Logs begin at Mon 2023-06-12 08:00:01 +0000, end at Mon 2023-06-12 09:00:00 +0000. --"
        ),
        None
    );
    assert_eq!(
        blocks::journal_header_offset(
            "-- Logs begin at Wed 2021-11-17 13:38:23 MSK, end at Tue 2021-11-30 16:48:44 MSK. --"
        ),
        None
    );
    assert_eq!(
        blocks::journal_header_year(
            "  -- Journal begins at Mon 2023-06-12 08:00:01 UTC, ends at Mon 2023-06-12 09:00:00 UTC. --"
        ),
        Some(2023)
    );
}
