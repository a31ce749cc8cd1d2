//! How `rotations_missed` accounts for files: a creation at the path against an arrival (held,
//! opened at the path, read as a sibling, or back at the path), in the rotations and races a
//! fresh try at breaking it found.

use super::*;

/// A few polls with short sleeps, so inotify events arrive and the one-poll-late count settles.
fn settle(f: &mut Follower) -> Vec<FollowedLine> {
    let mut out = Vec::new();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(50));
        out.extend(drain(f));
    }
    out
}

/// A log holding `first`, and a follower of it with `config` that has read it.
fn start(first: &str, config: FollowConfig) -> (Log, Follower, Vec<FollowedLine>) {
    let log = Log::new();
    log.append(first);
    let mut f = Follower::new(&log.path, None, config);
    let got = settle(&mut f);
    (log, f, got)
}

/// Renames the file at the path out of the watched directory (into `sub/`); where it went.
fn move_out(log: &Log) -> PathBuf {
    let sub = log.dir.path().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let away = sub.join("kubelet.log");
    std::fs::rename(&log.path, &away).unwrap();
    away
}

/// The followed file (lines 1 and 2, not quiet for 2 s) moved out of the directory, `meanwhile`
/// done at the path, then the file moved back and `line 3` appended; what was read.
fn away_and_back(meanwhile: impl FnOnce(&Log)) -> (Log, Follower, Vec<FollowedLine>) {
    let (log, mut f, mut got) = start(&numbered(1, 2), cfg_wait(2000));
    let away = move_out(&log);
    meanwhile(&log);
    got.extend(settle(&mut f));
    std::fs::rename(&away, &log.path).unwrap();
    log.append("line 3\n");
    got.extend(settle(&mut f));
    (log, f, got)
}

fn cfg_wait(ms: u64) -> FollowConfig {
    FollowConfig {
        rotate_wait: Duration::from_millis(ms),
        ..config()
    }
}

/// Between two polls: the file at the path to `.1`, a new file, renamed over `.1` (lost), then
/// two more, the last left at the path.
fn lose_one(log: &Log) {
    log.rotate_rename(false);
    log.append("lost 1\n");
    std::fs::rename(&log.path, log.sibling(1)).unwrap();
    log.append("kept e\n");
    std::fs::rename(&log.path, log.sibling(1)).unwrap();
    log.append("kept f\n");
}

/// A new file renamed onto the path from the same directory (an atomic replace) is one creation:
/// inotify reports such a rename twice (`To`, then `Both`), and only the first counts.
#[test]
fn a_file_renamed_onto_the_path_from_its_directory_counts_once() {
    let (log, mut f, mut got) = start(&numbered(1, 2), config());
    let other = log.dir.path().join("staging");
    append(&other, &numbered(3, 4));
    std::fs::rename(&other, &log.path).unwrap();
    got.extend(settle(&mut f));
    assert_eq!(texts(&got), names(1, 4));
    assert_eq!(f.stats().rotations_missed, 0);
}

/// The followed file renamed out of the directory and back: its return is a creation event, and
/// an arrival, so nothing counts as missed.
#[test]
fn the_followed_file_renamed_away_and_back_is_no_miss() {
    let (_log, f, got) = away_and_back(|_| {});
    assert_eq!(texts(&got), names(1, 3));
    assert_eq!(f.stats().rotations_missed, 0);
}

/// The followed file renamed away, a new file held in its place, then the first renamed back over
/// it while still read: every line is read, in order, and nothing counts as missed.
#[test]
fn the_followed_file_renamed_back_over_a_held_file_is_no_miss() {
    // B is held while A (not quiet) is still read; A comes back over B (held: nothing lost).
    let (log, mut f, mut got) = away_and_back(|log| log.append("b 1\n"));
    let missed_while_back = f.stats().rotations_missed;
    // A leaves for good; B (held) is read, then C.
    log.rotate_rename(false);
    log.append("c 1\n");
    std::thread::sleep(Duration::from_millis(2100));
    got.extend(settle(&mut f));
    assert_eq!(texts(&got), ["line 1", "line 2", "line 3", "b 1", "c 1"]);
    assert_eq!(missed_while_back, 0, "{:?}", f.stats());
    assert_eq!(f.stats().rotations_missed, 0, "{:?}", f.stats());
}

/// Two rotations between polls while the old file is not yet quiet: the middle file waits as a
/// sibling until the old one is left. Creations are compared with arrivals only once the follower
/// has settled, so the wait is not counted as a miss.
#[test]
fn a_file_waiting_as_a_sibling_while_the_old_one_drains_is_no_miss() {
    let (log, mut f, mut got) = start(&numbered(1, 1), cfg_wait(300));
    log.append(&numbered(2, 2));
    log.rotate_rename(true);
    log.append(&numbered(3, 3));
    log.rotate_rename(true);
    log.append(&numbered(4, 4));
    got.extend(settle(&mut f));
    std::thread::sleep(Duration::from_millis(400));
    got.extend(settle(&mut f));
    assert_eq!(texts(&got), names(1, 4));
    assert_eq!(f.stats().rotations_missed, 0);
}

/// A restart reads a sibling rotated while the daemon was down (born before the watch: no
/// creation was counted for it), then a file is renamed over before it is read: 1 missed.
#[test]
fn a_restart_that_reads_a_sibling_still_counts_a_later_loss() {
    let (log, f, mut got) = start(&numbered(1, 2), config());
    let ck = f.checkpoint().unwrap();
    drop(f);
    log.rotate_rename(true);
    log.append(&numbered(3, 3));
    log.rotate_rename(true);
    log.append(&numbered(4, 4));
    let mut f = Follower::new(&log.path, Some(ck), config());
    got.extend(settle(&mut f));
    lose_one(&log);
    got.extend(settle(&mut f));
    assert_eq!(
        texts(&got),
        ["line 1", "line 2", "line 3", "line 4", "kept e", "kept f"]
    );
    assert_eq!(f.stats().rotations_missed, 1, "{:?}", f.stats());
}

/// copytruncate of a file that was empty at the last poll reads its copy as a sibling (born after
/// the file at the path: not created there), then a file is renamed over unread: 1 missed.
#[test]
fn a_copy_read_as_a_sibling_does_not_hide_a_later_loss() {
    let (log, mut f, mut got) = start("", config());
    log.append(&numbered(1, 2));
    log.copy_truncate();
    log.append(&numbered(3, 3));
    got.extend(settle(&mut f));
    lose_one(&log);
    got.extend(settle(&mut f));
    assert_eq!(
        texts(&got),
        ["line 1", "line 2", "line 3", "kept e", "kept f"]
    );
    assert_eq!(f.stats().rotations_missed, 1, "{:?}", f.stats());
}

/// More files than [`MAX_HELD`] rotated away while the first is not quiet, each kept under a dated
/// name and read as a sibling later: every line is read, and nothing counts as missed.
#[test]
fn more_files_than_can_be_held_all_read_are_no_miss() {
    let (log, mut f, mut got) = start("line 0\n", cfg_wait(1500));
    let mut old = OpenOptions::new().append(true).open(&log.path).unwrap();
    std::fs::rename(&log.path, log.dir.path().join("kubelet.log-20260000")).unwrap();
    let n = MAX_HELD as u32 + 3;
    for k in 1..=n {
        log.append(&format!("line {k}\n"));
        got.extend(drain(&mut f));
        old.write_all(b"").unwrap();
        std::fs::rename(
            &log.path,
            log.dir.path().join(format!("kubelet.log-2026{k:04}")),
        )
        .unwrap();
    }
    log.append(&format!("line {}\n", n + 1));
    drop(old);
    for _ in 0..10 {
        got.extend(settle(&mut f));
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(texts(&got), names(0, n + 1));
    assert_eq!(f.stats().rotations_missed, 0, "{:?}", f.stats());
}

/// The race of [`a_file_renamed_over_between_two_looks_is_counted_missed`], but the glimpsed file
/// goes to a free sibling name: it is read once the old file is left, and nothing counts as
/// missed, not even while it waits.
#[test]
fn a_file_glimpsed_and_renamed_to_a_free_name_is_read_and_no_miss() {
    let (log, mut f, mut got) = start("line 0\n", cfg_wait(600));
    // A goes to .2 (a free name); P holds lines 1 to 3.
    std::fs::rename(&log.path, log.sibling(2)).unwrap();
    log.append(&numbered(1, 3));
    let (path, one) = (log.path.clone(), log.sibling(1));
    RACE_AFTER_LOOK.with(|r| {
        *r.borrow_mut() = Some(Box::new(move || {
            std::fs::rename(&path, &one).unwrap();
            append(&path, "line 4\n");
        }))
    });
    got.extend(drain(&mut f));
    got.extend(settle(&mut f)); // A is not quiet yet: P waits at .1
    std::thread::sleep(Duration::from_millis(700));
    got.extend(settle(&mut f));
    assert_eq!(texts(&got), names(0, 4));
    assert_eq!(f.stats().rotations_missed, 0, "{:?}", f.stats());
}

/// A file A (`a 1`) read and left: moved out of the directory while B (`b 1`) is created at the
/// path and read; then B is rotated to `.1` and written (its writer kept open: B stays busy), and
/// A is renamed back onto the path. The follower has looked once since; B's writer.
fn a_back_at_the_path() -> (Log, Follower, Vec<FollowedLine>, File) {
    let (log, mut f, mut got) = start("a 1\n", cfg_wait(300));
    let away = move_out(&log);
    log.append("b 1\n");
    let mut b_writer = OpenOptions::new().append(true).open(&log.path).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    got.extend(settle(&mut f));
    log.rotate_rename(false);
    std::fs::rename(&away, &log.path).unwrap();
    b_writer.write_all(b"b 2\n").unwrap();
    got.extend(settle(&mut f));
    (log, f, got, b_writer)
}

/// A file read and left comes back onto the path and is written: what is written is read, from
/// where the file was left.
#[test]
fn a_file_read_before_and_back_at_the_path_is_read_on() {
    let (log, mut f, mut got, b_writer) = a_back_at_the_path();
    log.append("a 2\n");
    got.extend(settle(&mut f));
    drop(b_writer);
    std::thread::sleep(Duration::from_millis(400));
    got.extend(settle(&mut f));
    assert_eq!(texts(&got), ["a 1", "b 1", "b 2", "a 2"]);
}

/// The same, then the file is renamed away again (to `.2`, then to a name no sibling has)
/// before the follower gets to it: it was held, so what it got is read.
#[test]
fn a_file_back_at_the_path_and_gone_again_loses_nothing_uncounted() {
    let (log, mut f, mut got, b_writer) = a_back_at_the_path();
    log.append("a 2\n");
    let two = log.sibling(2);
    std::fs::rename(&log.path, &two).unwrap();
    std::fs::rename(&two, log.dir.path().join("gone")).unwrap();
    log.append("c 1\n");
    drop(b_writer);
    std::thread::sleep(Duration::from_millis(400));
    got.extend(settle(&mut f));
    assert_eq!(texts(&got), ["a 1", "b 1", "b 2", "a 2", "c 1"]);
    assert_eq!(f.stats().rotations_missed, 0, "{:?}", f.stats());
}
