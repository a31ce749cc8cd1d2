//! Logs whose lines end in a lone carriage return (`\r`, classic Mac OS line ends, a paste
//! through some editors and terminals): every reader splits lines at `\n`, so such a log would
//! read as one line. [`LoneCr`] turns their `\r` into `\n` as they are read. [`Start`] says
//! from a file's first bytes whether it needs that, or decoding from UTF-16.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether `start` (a log's first bytes) ends its lines in a lone `\r`: it holds a `\r` and no
/// `\n`. A log of CRLF line ends, or of `\n` with a stray `\r` in a line, does not.
pub(crate) fn lone_cr(start: &[u8]) -> bool {
    memchr::memchr(b'\n', start).is_none() && memchr::memchr(b'\r', start).is_some()
}

/// What a regular file's first 64 KiB show of how it is to be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Start {
    /// Its lines end in a lone `\r` ([`lone_cr`]).
    pub(crate) lone_cr: bool,
    /// It begins with a UTF-16 byte order mark (`FF FE` or `FE FF`).
    pub(crate) utf16: bool,
}

impl Start {
    /// What `file`'s first 64 KiB show; nothing when they cannot be read (the read that
    /// follows says why).
    pub(crate) fn of(file: &std::fs::File) -> Start {
        use std::os::unix::fs::FileExt as _;
        let mut start = vec![0u8; 1 << 16];
        let Ok(n) = file.read_at(&mut start, 0) else {
            return Start::default();
        };
        let start = &start[..n];
        let utf16 = start.starts_with(&[0xFF, 0xFE]) || start.starts_with(&[0xFE, 0xFF]);
        Start {
            // Judged on the decoded text, as it is read.
            lone_cr: !utf16 && lone_cr(start),
            utf16,
        }
    }
}

/// How far [`LoneCr`] reads ahead for a line end before it judges: 64 KiB.
const JUDGE_BYTES: usize = 1 << 16;

/// A reader that judges from its first bytes holding a line end whether the stream ends its
/// lines in a lone `\r` ([`lone_cr`]) and, if so, reads every `\r` as `\n`. It reads ahead
/// until those bytes hold a `\n` or a `\r` with a byte after it (a CRLF's halves may come
/// apart in two reads), at most [`JUDGE_BYTES`]. `turned` is set when it turns them, for the
/// source's status to say.
pub(crate) struct LoneCr<R> {
    inner: R,
    /// `None` until the first read judged.
    mode: Option<bool>,
    /// The bytes read ahead to judge, and how many of them were served.
    ahead: Vec<u8>,
    served: usize,
    turned: Arc<AtomicBool>,
}

impl<R: Read> LoneCr<R> {
    /// `inner`, with whether its line ends were turned shared in the flag returned.
    pub(crate) fn new(inner: R) -> (Self, Arc<AtomicBool>) {
        let turned = Arc::new(AtomicBool::new(false));
        (
            LoneCr {
                inner,
                mode: None,
                ahead: Vec::new(),
                served: 0,
                turned: Arc::clone(&turned),
            },
            turned,
        )
    }

    fn judge(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 8192];
        loop {
            let n = match self.inner.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                break;
            }
            self.ahead.extend_from_slice(&chunk[..n]);
            let judged = memchr::memchr(b'\n', &self.ahead).is_some()
                || memchr::memchr(b'\r', &self.ahead[..self.ahead.len() - 1]).is_some();
            if judged || self.ahead.len() >= JUDGE_BYTES {
                break;
            }
        }
        let cr = lone_cr(&self.ahead);
        self.mode = Some(cr);
        self.turned.store(cr, Ordering::Relaxed);
        Ok(())
    }
}

impl<R: Read> Read for LoneCr<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.mode.is_none() {
            self.judge()?;
        }
        let n = if self.served < self.ahead.len() {
            let n = (self.ahead.len() - self.served).min(buf.len());
            buf[..n].copy_from_slice(&self.ahead[self.served..self.served + n]);
            self.served += n;
            if self.served == self.ahead.len() {
                self.ahead = Vec::new();
                self.served = 0;
            }
            n
        } else {
            self.inner.read(buf)?
        };
        if self.mode == Some(true) {
            for b in &mut buf[..n] {
                if *b == b'\r' {
                    *b = b'\n';
                }
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(bytes: &[u8], chunk: usize) -> (String, bool) {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let (mut r, turned) = LoneCr::new(Chunks(bytes, chunk));
        let mut out = String::new();
        r.read_to_string(&mut out).unwrap();
        (out, turned.load(Ordering::Relaxed))
    }

    #[test]
    fn lone_carriage_returns_are_line_ends() {
        assert_eq!(through(b"a\rb\rc\r", 64), ("a\nb\nc\n".to_string(), true));
        // Judged on the first chunk holding a line end, whatever came before it.
        assert_eq!(
            through(b"abcdef\rgh\r", 3),
            ("abcdef\ngh\n".to_string(), true)
        );
        assert_eq!(through(b"one line\r", 64), ("one line\n".to_string(), true));
    }

    #[test]
    fn crlf_and_stray_carriage_returns_are_kept() {
        assert_eq!(
            through(b"a\r\nb\r\n", 64),
            ("a\r\nb\r\n".to_string(), false)
        );
        // A CRLF split between two reads is a CRLF.
        assert_eq!(
            through(b"ab\r\ncd\r\n", 3),
            ("ab\r\ncd\r\n".to_string(), false)
        );
        assert_eq!(through(b"a\nb\rc\n", 64), ("a\nb\rc\n".to_string(), false));
        assert_eq!(
            through(b"no line end", 4),
            ("no line end".to_string(), false)
        );
    }
}
