//! How far the one-shot readers ([`read`](crate::read), [`read_each`](crate::read_each),
//! [`copy_window`](crate::copy_window)) are through a source, for a progress display.
//!
//! The readers report to one process-wide [`Progress`] observer, set with [`set_observer`]
//! (the CLI sets one only when stderr is a terminal); none is set by default, and reporting
//! then costs one relaxed atomic load per block of about 1 MiB. The followers report nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// Told how a read goes: which file, how many bytes it has, how many are read.
pub trait Progress: Send + Sync {
    /// A file (or journal) begins: `origin` as in events, and its size in bytes when it is
    /// known up front (a plain file; not a `.gz`, whose size after decompression is unknown,
    /// nor journalctl's output).
    fn begin(&self, origin: &str, total_bytes: Option<u64>);
    /// `bytes` more of the current source were read (decompressed bytes for a `.gz`).
    fn advance(&self, bytes: u64);
    /// The current source is read to its end (or failed).
    fn end(&self);
}

static SET: AtomicBool = AtomicBool::new(false);
static OBSERVER: RwLock<Option<Arc<dyn Progress>>> = RwLock::new(None);

/// Sets (or with `None` removes) the process-wide observer every later read reports to.
pub fn set_observer(observer: Option<Arc<dyn Progress>>) {
    let set = observer.is_some();
    match OBSERVER.write() {
        Ok(mut o) => *o = observer,
        Err(poisoned) => *poisoned.into_inner() = observer,
    }
    SET.store(set, Ordering::Release);
}

/// Calls `f` with the observer, when one is set.
fn with(f: impl FnOnce(&dyn Progress)) {
    if !SET.load(Ordering::Acquire) {
        return;
    }
    let observer = match OBSERVER.read() {
        Ok(o) => o.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    };
    if let Some(o) = observer {
        f(&*o);
    }
}

/// Reports one source from its beginning; its end is reported when the guard drops, however
/// the read ends.
pub(crate) struct Reading(());

impl Reading {
    /// Reports that `origin` (of `total_bytes`, when known) begins.
    pub(crate) fn begin(origin: &str, total_bytes: Option<u64>) -> Reading {
        with(|o| o.begin(origin, total_bytes));
        Reading(())
    }
}

/// Reports `bytes` more read of the current source.
pub(crate) fn advance(bytes: u64) {
    with(|o| o.advance(bytes));
}

impl Drop for Reading {
    fn drop(&mut self) {
        with(|o| o.end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// What the readers on one thread reported (other tests read at the same time, on their
    /// own threads; a read reports from the thread that called it).
    struct Record(Mutex<Vec<String>>, std::thread::ThreadId);

    impl Record {
        fn push(&self, s: String) {
            if std::thread::current().id() == self.1 {
                self.0.lock().unwrap().push(s);
            }
        }
    }

    impl Progress for Record {
        fn begin(&self, origin: &str, total_bytes: Option<u64>) {
            self.push(format!("begin {origin} {total_bytes:?}"));
        }
        fn advance(&self, bytes: u64) {
            self.push(format!("advance {bytes}"));
        }
        fn end(&self) {
            self.push("end".to_string());
        }
    }

    /// A plain file reports its size, and the bytes advanced add up to it; a removed observer
    /// is told nothing more. (One test: the observer is process-wide.)
    #[test]
    fn a_read_reports_its_file_size_and_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubelet.log");
        let line = "I1128 10:00:00.000000    1 kubelet.go:1 \"SyncLoop ADD\" source=\"api\" pods=[\"ns/p\"]\n";
        let text = line.repeat(50_000);
        std::fs::write(&path, &text).unwrap();
        let record = Arc::new(Record(Mutex::default(), std::thread::current().id()));
        set_observer(Some(record.clone()));
        let source = crate::Source::File(path.clone());
        crate::read(&source, crate::LogKind::Kubelet, None).unwrap();
        let out = dir.path().join("copy.log");
        crate::copy_window(&source, None, &out).unwrap();
        set_observer(None);
        crate::read(&source, crate::LogKind::Kubelet, None).unwrap();
        let seen = record.0.lock().unwrap().clone();
        let origin = path.display().to_string();
        let begin = format!("begin {origin} Some({})", text.len());
        assert_eq!(seen.iter().filter(|s| **s == begin).count(), 2, "{seen:?}");
        assert_eq!(seen.iter().filter(|s| *s == "end").count(), 2, "{seen:?}");
        // Every byte of each of the two reads, and nothing of the third.
        let advanced: u64 = seen
            .iter()
            .filter_map(|s| s.strip_prefix("advance ")?.parse::<u64>().ok())
            .sum();
        assert_eq!(advanced, 2 * text.len() as u64, "{seen:?}");
        assert_eq!(seen.first(), Some(&begin));
        assert_eq!(seen.last().map(String::as_str), Some("end"));
    }
}
