//! Test helpers (this crate's tests, and others' with the `test-util` feature): a real journal,
//! written without journald by `systemd-journal-remote` from the journal export format, for the
//! real `journalctl` to read back (`journalctl --directory`).
//!
//! [`TestJournal::append`] runs `systemd-journal-remote -o <dir>/system.journal -` once per call;
//! a later call appends to the same file (same sequence-number ID, the next sequence numbers),
//! so a `journalctl -f --directory <dir>` that is following it sees the new entries.
//! Without `systemd-journal-remote` or `journalctl`, [`TestJournal::new`] fails with
//! [`JournalWriteError::PrerequisitesMissing`], which names the Debian packages, so a journal
//! test never passes silently.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use jiff::Timestamp;

/// The `systemd-journal-remote` binary (Debian package [`JOURNAL_REMOTE_PACKAGE`]).
pub const JOURNAL_REMOTE: &str = "/lib/systemd/systemd-journal-remote";
/// The Debian package that provides [`JOURNAL_REMOTE`].
pub const JOURNAL_REMOTE_PACKAGE: &str = "systemd-journal-remote";
/// The `_BOOT_ID` of every entry a [`TestJournal`] writes (32 hex digits).
pub const BOOT_ID: &str = "4f1c2b7e9a0d4c3e8b6f5a2d1c0e9b8a";
/// The `_MACHINE_ID` of every entry a [`TestJournal`] writes (32 hex digits).
pub const MACHINE_ID: &str = "b2a4c6e8f0a2c4e6a8b0d2f4a6c8e0f2";
/// The boot time behind `__MONOTONIC_TIMESTAMP` (realtime minus this), as Unix seconds:
/// 2020-01-01T00:00:00Z. Entries must not be older.
const BOOT_UNIX_SECONDS: i64 = 1_577_836_800;

/// Why a test journal could not be written.
#[derive(Debug, thiserror::Error)]
pub enum JournalWriteError {
    /// `systemd-journal-remote` or `journalctl` is not installed.
    #[error(
        "a test journal needs {}: run `cargo xtask test` (it installs them), or as root \
         `apt-get update && apt-get install -y {}`",
        missing.iter().map(|(what, package)| format!("{what} (package {package})")).collect::<Vec<_>>().join(" and "),
        missing.iter().map(|(_, package)| *package).collect::<Vec<_>>().join(" ")
    )]
    PrerequisitesMissing {
        /// What is missing, with its Debian package: `(path or program, package)`.
        missing: Vec<(String, &'static str)>,
    },
    /// `systemd-journal-remote` could not be run or failed.
    #[error("systemd-journal-remote -o {} failed: {detail}", file.display())]
    WriteFailed {
        /// The journal file it wrote.
        file: PathBuf,
        /// What went wrong, with its stderr.
        detail: String,
    },
}

/// One journal entry, as a unit's process writes it to its standard error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    /// `_SYSTEMD_UNIT`, e.g. `kubelet.service`.
    pub unit: String,
    /// `SYSLOG_IDENTIFIER`, e.g. `kubelet`.
    pub identifier: String,
    /// `_PID`.
    pub pid: u32,
    /// `__REALTIME_TIMESTAMP` (microseconds are kept; must not be before 2020).
    pub time: Timestamp,
    /// `PRIORITY`, the syslog level (3 error, 4 warning, 6 info).
    pub priority: u8,
    /// `MESSAGE`; written in the binary export form when it holds a newline.
    pub message: String,
    /// More fields (name, value without a newline), after `MESSAGE`.
    pub extra: Vec<(String, String)>,
}

impl JournalEntry {
    /// An entry of `<name>.service` (identifier `name`, PID 1000 + the name's length, priority
    /// from a klog severity letter `E`/`W` as the message's first character, else 6).
    pub fn new(name: &str, time: Timestamp, message: &str) -> JournalEntry {
        let priority = match message.as_bytes().first() {
            Some(b'E') => 3,
            Some(b'W') => 4,
            _ => 6,
        };
        JournalEntry {
            unit: format!("{name}.service"),
            identifier: name.to_string(),
            pid: 1000 + u32::try_from(name.len()).unwrap_or(0),
            time,
            priority,
            message: message.to_string(),
            extra: Vec::new(),
        }
    }

    /// The entry in the journal export format, with the blank line that ends it.
    fn export(&self) -> Vec<u8> {
        let usec = self.time.as_microsecond();
        let monotonic = (usec - BOOT_UNIX_SECONDS * 1_000_000).max(1);
        let mut out = format!(
            "__REALTIME_TIMESTAMP={usec}\n__MONOTONIC_TIMESTAMP={monotonic}\n_BOOT_ID={BOOT_ID}\n\
             _MACHINE_ID={MACHINE_ID}\n_HOSTNAME=node-a\n_TRANSPORT=stdout\n_PID={}\n\
             _SYSTEMD_UNIT={}\nSYSLOG_IDENTIFIER={}\nPRIORITY={}\n",
            self.pid, self.unit, self.identifier, self.priority
        )
        .into_bytes();
        if self.message.contains('\n') {
            // Binary form: the name, a newline, the length as little-endian u64, the bytes.
            out.extend_from_slice(b"MESSAGE\n");
            out.extend_from_slice(&(self.message.len() as u64).to_le_bytes());
            out.extend_from_slice(self.message.as_bytes());
            out.push(b'\n');
        } else {
            out.extend_from_slice(format!("MESSAGE={}\n", self.message).as_bytes());
        }
        for (name, value) in &self.extra {
            out.extend_from_slice(format!("{name}={value}\n").as_bytes());
        }
        out.push(b'\n');
        out
    }
}

/// A journal directory holding one journal file, `system.journal`, written by
/// `systemd-journal-remote`.
#[derive(Debug)]
pub struct TestJournal {
    dir: PathBuf,
}

impl TestJournal {
    /// A journal in `dir` (which must exist); nothing is written until [`append`](Self::append).
    ///
    /// # Errors
    /// [`JournalWriteError::PrerequisitesMissing`] without [`JOURNAL_REMOTE`] or `journalctl`.
    pub fn new(dir: &Path) -> Result<TestJournal, JournalWriteError> {
        let mut missing = Vec::new();
        if !Path::new(JOURNAL_REMOTE).is_file() {
            missing.push((JOURNAL_REMOTE.to_string(), JOURNAL_REMOTE_PACKAGE));
        }
        let journalctl = Command::new("journalctl")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !journalctl.is_ok_and(|s| s.success()) {
            missing.push(("journalctl".to_string(), "systemd"));
        }
        if !missing.is_empty() {
            return Err(JournalWriteError::PrerequisitesMissing { missing });
        }
        Ok(TestJournal {
            dir: dir.to_path_buf(),
        })
    }

    /// The journal directory, for `journalctl --directory`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `entries`, in order, after those already in the journal (one
    /// `systemd-journal-remote` run).
    ///
    /// # Errors
    /// [`JournalWriteError::WriteFailed`].
    pub fn append(&self, entries: &[JournalEntry]) -> Result<(), JournalWriteError> {
        let file = self.dir.join("system.journal");
        let fail = |detail: String| JournalWriteError::WriteFailed {
            file: file.clone(),
            detail,
        };
        let mut child = Command::new(JOURNAL_REMOTE)
            .arg("-o")
            .arg(&file)
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("cannot run {JOURNAL_REMOTE}: {e}")))?;
        let mut stdin = child.stdin.take().ok_or_else(|| fail("no stdin".into()))?;
        for e in entries {
            stdin
                .write_all(&e.export())
                .map_err(|e| fail(format!("writing its input: {e}")))?;
        }
        drop(stdin);
        let out = child
            .wait_with_output()
            .map_err(|e| fail(format!("waiting for it: {e}")))?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let want = format!("writing {} entries", entries.len());
        if !out.status.success() || !stderr.contains(&want) {
            return Err(fail(format!(
                "{} (wanted \"{want}\"): {}",
                out.status,
                stderr.trim()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_prerequisite_names_its_package() {
        let err = JournalWriteError::PrerequisitesMissing {
            missing: vec![(JOURNAL_REMOTE.to_string(), JOURNAL_REMOTE_PACKAGE)],
        };
        assert_eq!(
            err.to_string(),
            "a test journal needs /lib/systemd/systemd-journal-remote (package systemd-journal-remote): \
             run `cargo xtask test` (it installs them), or as root \
             `apt-get update && apt-get install -y systemd-journal-remote`"
        );
    }
}
