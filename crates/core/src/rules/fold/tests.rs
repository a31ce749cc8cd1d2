use super::*;
use crate::event::{LogKind, read_text};

fn ready(sec: u32, pod: &str) -> String {
    format!(
        "I0613 10:{:02}:{:02}.000000    1234 kubelet.go:2536] \"SyncLoop (probe)\" probe=\"readiness\" status=\"ready\" pod=\"{pod}\"",
        sec / 60,
        sec % 60
    )
}

fn observed(sec: u32, pod: &str, slo: &str) -> String {
    format!(
        "I0613 10:{:02}:{:02}.000000    1234 pod_startup_latency_tracker.go:102] \"Observed pod startup duration\" pod=\"{pod}\" podStartSLOduration={slo} podStartE2EDuration=\"5.1s\" podCreationTimestamp=\"2025-06-13 10:00:00 +0000 UTC\" firstStartedPulling=\"0001-01-01 00:00:00 +0000 UTC\" lastFinishedPulling=\"0001-01-01 00:00:00 +0000 UTC\"",
        sec / 60,
        sec % 60
    )
}

fn started(sec: u32, pod: &str) -> String {
    format!(
        "I0613 10:{:02}:{:02}.000000    1234 kubelet.go:2469] \"SyncLoop (PLEG): event for pod\" pod=\"{pod}\" event={{\"ID\":\"0b1c3f2e-5a8d-4c4e-9a51-0c6b0f3b9d11\",\"Type\":\"ContainerStarted\",\"Data\":\"{}\"}}",
        sec / 60,
        sec % 60,
        "a".repeat(64)
    )
}

/// The events of `lines`, all kept and folded: (kept lines, folded count).
fn fold(lines: &[String]) -> (Vec<u64>, u64) {
    let events = read_text(LogKind::Kubelet, "kubelet.log", 2025, &lines.join("\n"));
    assert_eq!(events.len(), lines.len(), "every line is an event");
    let mut f = Fold::new();
    for e in events {
        f.push(e);
    }
    let kept = f.finish();
    (kept.events.iter().map(|e| e.line).collect(), kept.folded)
}

#[test]
fn a_run_keeps_its_first_and_last_record() {
    let lines: Vec<String> = (0..6).map(|s| ready(s, "ns/a")).collect();
    assert_eq!(fold(&lines), (vec![1, 6], 4));
}

#[test]
fn two_pods_interleaved_fold_each_run_and_the_other_kind_does_not_end_a_run() {
    let mut lines = Vec::new();
    for s in 0..4 {
        lines.push(ready(s * 3, "ns/a"));
        lines.push(ready(s * 3 + 1, "ns/b"));
        lines.push(observed(s * 3 + 2, "ns/a", "1.5"));
    }
    // a: ready at 1, 4, 7, 10; observed at 3, 6, 9, 12; b: ready at 2, 5, 8, 11.
    let (kept, folded) = fold(&lines);
    assert_eq!(kept, vec![1, 2, 3, 10, 11, 12]);
    assert_eq!(folded, 6);
}

#[test]
fn another_record_of_the_pod_ends_the_run_so_the_first_ready_after_a_start_is_kept() {
    let lines = vec![
        ready(0, "ns/a"),
        ready(1, "ns/a"),
        ready(2, "ns/a"),
        started(3, "ns/a"),
        ready(4, "ns/a"),
        ready(5, "ns/a"),
        ready(6, "ns/a"),
    ];
    // Line 3 ends the run before the start, line 5 begins the one after it.
    assert_eq!(fold(&lines), (vec![1, 3, 4, 5, 7], 2));
}

fn update(sec: u32, pod: &str) -> String {
    format!(
        "I0613 10:{:02}:{:02}.000000    1234 kubelet.go:2441] \"SyncLoop UPDATE\" source=\"api\" pods=[\"{pod}\"]",
        sec / 60,
        sec % 60
    )
}

#[test]
fn a_syncloop_update_of_the_pod_does_not_end_its_run() {
    let lines = vec![
        ready(0, "ns/a"),
        ready(1, "ns/a"),
        update(2, "ns/a"),
        ready(3, "ns/a"),
        ready(4, "ns/a"),
    ];
    // One run of five readiness records from line 1 to 5: the two between its ends go, the
    // UPDATE stays.
    assert_eq!(fold(&lines), (vec![1, 3, 5], 2));
    // Any other record of the pod ends the run: with a start instead, both sides keep their ends.
    let mut with_start = lines.clone();
    with_start[2] = started(2, "ns/a");
    assert_eq!(fold(&with_start), (vec![1, 2, 3, 4, 5], 0));
}

#[test]
fn a_line_whose_rule_reads_its_neighbours_keeps_them_as_read() {
    let id = "c".repeat(64);
    let race = format!(
        "E0613 10:00:02.000000    1234 remote_runtime.go:432] \"ContainerStatus from runtime service failed\" err=\"rpc error: code = NotFound desc = an error occurred when try to find container \\\"{id}\\\": not found\" containerID=\"{id}\""
    );
    let lines = [
        ready(0, "ns/a"),
        ready(1, "ns/a"),
        race,
        ready(3, "ns/a"),
        ready(4, "ns/a"),
        ready(5, "ns/a"),
    ];
    let events = read_text(LogKind::Kubelet, "kubelet.log", 2025, &lines.join("\n"));
    assert!(
        RACE_KINDS.contains(&events[2].event.kind),
        "{:?}",
        events[2].event.kind
    );
    // The race line names no pod, so pod a's run goes on through it and its middle records go;
    // the race line keeps a copy of the records beside it (lines 2 and 4), so `container_race`
    // reads the same neighbours.
    let mut f = Fold::new();
    for e in events {
        f.push(e);
    }
    let kept = f.finish();
    assert_eq!(
        kept.events.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![1, 3, 6]
    );
    assert_eq!(kept.folded, 3);
    let n = kept.events[1]
        .neighbours()
        .expect("the race line's neighbours");
    let lines = |v: &[LoggedEvent]| v.iter().map(|e| e.line).collect::<Vec<_>>();
    assert_eq!((lines(&n.before), lines(&n.after)), (vec![2], vec![4]));
    assert!(kept.events[0].neighbours().is_none());
}

#[test]
fn a_start_linked_by_uid_ends_the_run_of_its_pod() {
    let uid = "0b1c3f2e-5a8d-4c4e-9a51-0c6b0f3b9d11";
    let by_uid = |sec: u32| {
        format!(
            "I0613 10:00:{sec:02}.000000    1234 kubelet.go:2469] \"SyncLoop (PLEG): event for pod\" event={{\"ID\":\"{uid}\",\"Type\":\"ContainerStarted\",\"Data\":\"{}\"}}",
            "b".repeat(64)
        )
    };
    let lines = vec![
        started(0, "ns/a"),
        ready(1, "ns/a"),
        ready(2, "ns/a"),
        ready(3, "ns/a"),
        by_uid(4),
        ready(5, "ns/a"),
        ready(6, "ns/a"),
        ready(7, "ns/a"),
        ready(8, "ns/a"),
    ];
    let (kept, _) = fold(&lines);
    assert!(
        kept.contains(&6),
        "the first ready after the start named by UID: {kept:?}"
    );
    assert_eq!(kept, vec![1, 2, 4, 5, 6, 9]);
}

#[test]
fn an_impossible_sli_is_never_folded() {
    let lines: Vec<String> = (0..5)
        .map(|s| observed(s, "ns/a", "-9.223372036854776e+09"))
        .collect();
    assert_eq!(fold(&lines), (vec![1, 2, 3, 4, 5], 0));
}

#[test]
fn times_going_back_keep_the_record() {
    let lines = vec![
        ready(0, "ns/a"),
        ready(9, "ns/a"),
        ready(5, "ns/a"),
        ready(6, "ns/a"),
    ];
    assert_eq!(fold(&lines), (vec![1, 2, 3, 4], 0));
}

#[test]
fn a_breakdown_reads_the_same_from_the_folded_records() {
    use crate::model::NodeView;
    let mut lines = Vec::new();
    let mut sec = 0;
    for round in 0..5 {
        for p in ["ns/a", "ns/b", "ns/c"] {
            if round % 2 == 0 {
                lines.push(started(sec, p));
                sec += 1;
            }
            for _ in 0..3 {
                lines.push(ready(sec, p));
                sec += 1;
                lines.push(observed(sec, p, "2.5"));
                sec += 1;
            }
        }
    }
    let text = lines.join("\n");
    let all = read_text(LogKind::Kubelet, "kubelet.log", 2025, &text);
    let mut f = Fold::new();
    for e in all.clone() {
        f.push(e);
    }
    let kept = f.finish();
    assert!(kept.folded > 0);
    let kept = kept.events;
    let view = NodeView::empty();

    let text =
        |bs: Vec<crate::startup::Breakdown>| bs.iter().map(|b| b.to_text("")).collect::<String>();
    let whole = text(crate::rules::startup_breakdowns(&view, &all));
    assert!(whole.contains("readiness"), "{whole}");
    assert_eq!(whole, text(crate::rules::startup_breakdowns(&view, &kept)));
}

#[test]
fn a_long_run_compacts_and_keeps_its_ends() {
    let lines: Vec<String> = (0..10_000).map(|s| ready(s % 3600, "ns/a")).collect();
    // Times wrap at the hour: each wrap keeps the records around it.
    let (kept, folded) = fold(&lines);
    assert_eq!(kept.len() as u64 + folded, 10_000);
    assert_eq!(kept.first(), Some(&1));
    assert_eq!(kept.last(), Some(&10_000));
    assert!(kept.contains(&3600) && kept.contains(&3601), "{kept:?}");
    assert!(kept.len() < 12, "{kept:?}");
}

/// `lines` (each one event, `n` in all) through a fold.
fn fold_lines(lines: &[String], n: usize) -> Kept {
    let events = read_text(LogKind::Kubelet, "kubelet.log", 2025, &lines.join("\n"));
    assert_eq!(events.len(), n);
    let mut f = Fold::new();
    for e in events {
        f.push(e);
    }
    f.finish()
}

/// The kept records of sandbox `c` repeated 64 times.
fn of_sandbox(kept: &Kept, c: char) -> Vec<&LoggedEvent> {
    let id = c.to_string().repeat(64);
    kept.events
        .iter()
        .filter(|e| e.event.ids.sandbox_id.as_deref() == Some(id.as_str()))
        .collect()
}

fn stop_failed(sec: u32, sandbox: char) -> String {
    format!(
        "E0613 10:{:02}:{:02}.000000    1234 kuberuntime_gc.go:180] \"Failed to stop sandbox before removing\" err=\"rpc error: code = Unknown desc = failed to destroy network for sandbox \\\"{id}\\\": plugin type=\\\"calico\\\" failed (delete): error getting ClusterInformation: connection is unauthorized: Unauthorized\" sandboxID=\"{id}\"",
        sec / 60,
        sec % 60,
        id = sandbox.to_string().repeat(64)
    )
}

#[test]
fn a_repeated_record_keeps_its_first_and_last_and_counts_the_rest() {
    // One sandbox's stop failing every minute for 50 minutes, another's twice.
    let mut lines: Vec<String> = (0..50).map(|m| stop_failed(m * 60 % 3600, 'a')).collect();
    lines.insert(10, stop_failed(605, 'b'));
    lines.insert(30, stop_failed(1805, 'b'));
    let kept = fold_lines(&lines, 52);
    let a = of_sandbox(&kept, 'a');
    // The first 3 and the last 4 of sandbox a's 50 (lines 1-3 and 49-52), which are also its
    // earliest and latest by time; both of b's.
    assert_eq!(
        a.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![1, 2, 3, 49, 50, 51, 52]
    );
    assert_eq!(kept.events.len(), 9);
    assert_eq!(kept.folded, 43);
    assert_eq!(a.iter().map(|e| e.records()).sum::<u64>(), 50);
    // The record after the folded ones stands for them: 43 records from 10:03 to 10:45, one
    // attempt each.
    let carrier = a[3].folded.as_deref().expect("the folded repeats");
    assert_eq!(carrier.records, 43);
    let (from, to) = carrier.span.unwrap();
    assert_eq!(
        (from.as_second() % 3600, to.as_second() % 3600),
        (180, 2700)
    );
    assert_eq!(
        carrier.runs.attempts(),
        32 + 11,
        "32 runs kept, 11 counted beyond"
    );
    let t = crate::rules::tally::Tally::of(&a);
    assert_eq!((t.count(), t.attempts()), (50, 50));
}

#[test]
fn records_that_differ_in_anything_but_time_never_fold_together() {
    // The same failure for 12 sandboxes, each once: nothing repeats.
    let lines: Vec<String> = "abcdef0123456789"
        .chars()
        .take(12)
        .enumerate()
        .map(|(m, c)| stop_failed(m as u32 * 60, c))
        .collect();
    assert_eq!(fold(&lines), ((1..=12).collect(), 0));
}

#[test]
fn the_earliest_and_latest_by_time_are_kept_wherever_they_are_read() {
    // Twenty repeats whose times go back and forth (two excerpts of one log pasted in turn):
    // the earliest (line 11, 10:00) and the latest (line 10, 10:19) are kept, as a rule that
    // sorts a group by time quotes them.
    let lines: Vec<String> = (0..20)
        .map(|k| stop_failed(if k < 10 { (k + 10) * 60 } else { (k - 10) * 60 }, 'a'))
        .collect();
    let (kept, folded) = fold(&lines);
    for line in [1, 2, 3, 10, 11, 12, 13, 17, 18, 19, 20] {
        assert!(kept.contains(&line), "line {line} in {kept:?}");
    }
    assert_eq!(kept.len() as u64 + folded, 20);
}

#[test]
fn a_repetition_forgotten_for_two_generations_starts_anew_and_loses_no_count() {
    // Sandbox a's stop fails 10 times, then 150 other records (other sandboxes, each once:
    // past two generations of 64), then a's 10 more.
    let others: Vec<char> = "0123456789bcdef".chars().collect();
    let mut lines: Vec<String> = (0..10).map(|m| stop_failed(m * 60, 'a')).collect();
    for k in 0..150u32 {
        let c = others[k as usize % others.len()];
        lines.push(
            stop_failed(600 + k, c).replace(&c.to_string().repeat(64), &format!("{c}{k:063x}")),
        );
    }
    lines.extend((0..10).map(|m| stop_failed(1200 + m * 60, 'a')));
    let kept = fold_lines(&lines, 170);
    let a = of_sandbox(&kept, 'a');
    // Each run of ten keeps its first 3 and last 4: the second is a new repetition.
    assert_eq!(
        a.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![1, 2, 3, 7, 8, 9, 10, 161, 162, 163, 167, 168, 169, 170]
    );
    assert_eq!(a.iter().map(|e| e.records()).sum::<u64>(), 20);
    assert_eq!(kept.events.len() as u64 + kept.folded, 170);
}

fn stop_done(sec: u32, sandbox: char) -> String {
    format!(
        "I0613 10:{:02}:{:02}.000000    1234 kuberuntime_sandbox.go:120] \"Stopped pod sandbox: {id}\"",
        sec / 60,
        sec % 60,
        id = sandbox.to_string().repeat(64)
    )
}

#[test]
fn a_repetition_never_runs_across_the_record_that_ends_it() {
    // Sandbox a's stop fails 20 times, is stopped, fails 20 times more: a rule counting the
    // failures after the stop (or before it) counts 20 through the fold as from every record.
    let mut lines: Vec<String> = (0..20).map(|m| stop_failed(m * 60, 'a')).collect();
    lines.push(stop_done(20 * 60, 'a'));
    lines.extend((21..41).map(|m| stop_failed(m * 60, 'a')));
    let kept = fold_lines(&lines, 41);
    let a = of_sandbox(&kept, 'a');
    assert_eq!(
        a.iter().map(|e| e.event.kind).collect::<Vec<_>>()[7],
        EventKind::StopPodSandboxDone
    );
    let failures = |side: &dyn Fn(u64) -> bool| {
        a.iter()
            .filter(|e| e.event.kind == EventKind::StopSandboxBeforeRemoveFailed && side(e.line))
            .map(|e| e.records())
            .sum::<u64>()
    };
    assert_eq!((failures(&|l| l < 21), failures(&|l| l > 21)), (20, 20));
    // Each side keeps its own first 3 and last 4.
    assert_eq!(
        a.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![1, 2, 3, 17, 18, 19, 20, 21, 22, 23, 24, 38, 39, 40, 41]
    );
    // The same stop answered again ends nothing: a log whose every line repeats folds whole.
    let mut again = lines.clone();
    again.push(stop_done(41 * 60 + 20, 'a'));
    again.extend((42..62).map(|m| stop_failed(41 * 60 + m, 'a')));
    let kept = fold_lines(&again, 62);
    let a = of_sandbox(&kept, 'a');
    assert_eq!(a.iter().map(|e| e.records()).sum::<u64>(), 62);
    // The failures after either stop are one repetition (lines 22-41 and 43-62).
    assert_eq!(
        a.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![1, 2, 3, 17, 18, 19, 20, 21, 22, 23, 24, 42, 59, 60, 61, 62]
    );
}

#[test]
fn anchors_forgotten_begin_an_epoch_of_everything_and_lose_no_count() {
    // Sandbox a's stop fails 10 times; five other sandboxes are stopped (more anchors than the
    // fold remembers in a unit test); a's stop fails 10 times more.
    let mut lines: Vec<String> = (0..10).map(|m| stop_failed(m * 60, 'a')).collect();
    lines.extend(
        "bcdef"
            .chars()
            .enumerate()
            .map(|(k, c)| stop_done(600 + k as u32, c)),
    );
    lines.extend((0..10).map(|m| stop_failed(1200 + m * 60, 'a')));
    let kept = fold_lines(&lines, 25);
    let a = of_sandbox(&kept, 'a');
    // Forgetting split a's failures in two repetitions: more kept, the same count.
    assert_eq!(
        a.iter().map(|e| e.line).collect::<Vec<_>>(),
        vec![1, 2, 3, 7, 8, 9, 10, 16, 17, 18, 22, 23, 24, 25]
    );
    assert_eq!(a.iter().map(|e| e.records()).sum::<u64>(), 20);
    assert_eq!(kept.events.len() as u64 + kept.folded, 25);
}
