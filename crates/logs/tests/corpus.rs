//! Every line of every case file accounted for: each physical line of each file in
//! `testdata/cases/*/` (but `source.txt`, `expected.md` and the goldens `findings.txt`, `startup.txt`) is read
//! with [`read`], the real reader (blocks, assembler, parser), and must be a record of a known
//! shape, part of one (a
//! klog block line, a hard wrap, a prefixed continuation), a non-record (blank, a shell prompt
//! or command echo, Markdown markup: `podcoroner_core::logs::non_record`), or listed below with
//! why it is no log line. A new line of no known shape fails with its `file:line` and text, and
//! a listed line that now reads as a record fails too, so the list stays true.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use podcoroner_core::event::LogKind;
use podcoroner_logs::{Source, read};

/// Lines that are no log records: `(case/file, first lines of the records, why)`; an empty
/// line list means the whole file (crictl, kubectl and `ls` output).
const NOT_RECORDS: &[(&str, &[u64], &str)] = &[
    (
        "02-sandbox-not-gc-until-kubelet-restart/crictl-pods.txt",
        &[],
        "a crictl pods table",
    ),
    (
        "02-sandbox-not-gc-until-kubelet-restart/kubectl-get-pods.txt",
        &[],
        "a kubectl get pods table",
    ),
    (
        "03-notready-sandbox-left-after-shim-disconnect/crictl-pods.txt",
        &[],
        "a crictl pods table",
    ),
    (
        "03-notready-sandbox-left-after-shim-disconnect/crictl-rmp.txt",
        &[],
        "crictl rmp output and its stderr",
    ),
    (
        "09-orphaned-pod-volume-paths-multi-version/pod-dir-listing.txt",
        &[],
        "ls output of a pod directory",
    ),
    (
        "16-mirror-pod-create-alreadyexists-2015/docker-ps.txt",
        &[],
        "a docker ps table",
    ),
    (
        "27-crictl-stopp-calico-datastore-unreachable/crictl-stopp.txt",
        &[1],
        "the crictl command, pasted without its prompt",
    ),
    (
        "28-stuck-terminating-empty-cni-cache-aws/cni-results-ls.txt",
        &[],
        "ls -l of the CNI cache",
    ),
    (
        "28-stuck-terminating-empty-cni-cache-aws/kubectl-describe-event.txt",
        &[],
        "a kubectl describe event (message-only text)",
    ),
    (
        "29-blog-talos-stoppodsandbox-empty-cni-cache/cni-results-ls.txt",
        &[],
        "ls -la of the CNI cache",
    ),
    (
        "29-blog-talos-stoppodsandbox-empty-cni-cache/crictl-session.txt",
        &[],
        "a crictl session: commands and tables",
    ),
    (
        "29-blog-talos-stoppodsandbox-empty-cni-cache/kubelet-message.txt",
        &[],
        "a message-only kubelet line (Loki)",
    ),
    (
        "30-stuck-terminating-crio-kata-stop-infra-loop/crictl.txt",
        &[],
        "crictl output",
    ),
    (
        "33-notready-sandboxes-after-reboot-crictl-inspectp/crictl-inspectp-summary.txt",
        &[],
        "the reporter's summary of crictl inspectp",
    ),
    (
        "33-notready-sandboxes-after-reboot-crictl-inspectp/crictl-inspectp.json",
        &[],
        "crictl inspectp JSON, pretty-printed and cut",
    ),
    (
        "33-notready-sandboxes-after-reboot-crictl-inspectp/find-empty-cni-files.txt",
        &[],
        "find output",
    ),
    (
        "73-crio-status-image-not-set-5709/kubelet.log",
        &[1],
        "the tail of a line cut before it, as posted (`containerID=\"…\"` alone)",
    ),
    (
        "100-static-pod-blocked-by-old-pod-worker-grep-n/kubelet.log",
        &[5],
        "the reporter's comment between the grep -n blocks",
    ),
];

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cases")
}

/// Every case file, as `case/file`.
fn case_files() -> Vec<String> {
    let mut out = Vec::new();
    for case in fs::read_dir(cases_dir()).unwrap().flatten() {
        if !case.path().is_dir() {
            continue;
        }
        for f in fs::read_dir(case.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if !matches!(
                name.as_str(),
                "source.txt" | "expected.md" | "findings.txt" | "startup.txt"
            ) {
                out.push(format!("{}/{name}", case.file_name().to_string_lossy()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_line_of_every_case_file_is_accounted_for() {
    let files = case_files();
    assert!(files.len() > 60, "{files:?}");
    let mut failures = Vec::new();
    let mut used = BTreeSet::new();
    let (mut lines, mut records) = (0, 0);
    for file in &files {
        let path = cases_dir().join(file);
        let got = read(&Source::File(path.clone()), LogKind::Kubelet, None).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(
            got.lines,
            text.lines().count() as u64,
            "{file}: every line is read"
        );
        lines += got.lines;
        records += got.parsed + got.unparsed;
        let listed = NOT_RECORDS.iter().find(|(f, _, _)| f == file);
        if let Some((_, at, _)) = listed {
            used.insert(file.clone());
            if at.is_empty() {
                // A file that is not a log: nothing of it may read as a record by accident
                // either, save what is one (crictl's own klog or logrus lines).
                continue;
            }
        }
        let allowed: &[u64] = listed.map_or(&[], |(_, at, _)| at);
        let failed: BTreeSet<u64> = got.unparsed_samples.iter().map(|u| u.line).collect();
        for u in &got.unparsed_samples {
            if !allowed.contains(&u.line) {
                failures.push(format!("{file}:{}: no known shape: {}", u.line, u.text));
            }
        }
        for at in allowed {
            if !failed.contains(at) {
                failures.push(format!(
                    "{file}:{at}: listed as no record, but it reads as one now: drop it from NOT_RECORDS"
                ));
            }
        }
    }
    for (f, _, _) in NOT_RECORDS {
        if !used.contains(*f) {
            failures.push(format!("{f}: listed in NOT_RECORDS but not a case file"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} lines of {} files ({} records):\n{}",
        lines,
        files.len(),
        records,
        failures.join("\n")
    );
}

/// `testdata/shapes/*.log`: shapes no case has yet (wrapped JSON, CRI `P`/`F` parts, RFC 3339
/// time and level), each read whole with the real reader: `(file, lines, records, events)`.
const SHAPES: &[(&str, u64, u64, usize)] = &[
    ("cri-partial.log", 4, 3, 3),
    ("time-level.log", 4, 4, 3),
    ("wrapped-json.log", 12, 2, 2),
];

#[test]
fn shapes_are_read_whole() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/shapes");
    let on_disk: BTreeSet<String> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    let listed: BTreeSet<String> = SHAPES.iter().map(|s| s.0.to_owned()).collect();
    assert_eq!(on_disk, listed, "every shape file has a row");
    for (file, lines, records, events) in SHAPES {
        let got = read(&Source::File(dir.join(file)), LogKind::Kubelet, None).unwrap();
        let samples: Vec<_> = got.unparsed_samples.iter().map(|u| &u.text).collect();
        assert_eq!(
            (got.lines, got.parsed + got.unparsed, got.unparsed),
            (*lines, *records, 0),
            "{file}: lines, records, unparsed {samples:?}"
        );
        assert_eq!(got.events.len(), *events, "{file}: {:#?}", got.events);
        for e in &got.events {
            // Every record was read whole: no event of a cut one.
            assert!(!e.event.truncated, "{file}:{}: cut: {}", e.line, e.text);
        }
    }
}
