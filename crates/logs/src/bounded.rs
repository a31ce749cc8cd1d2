//! The one-shot reader's bounds, as the follower's: a line longer than [`MAX_LINE_BYTES`] is cut
//! to it (the rest of the line is skipped and counted), and a gzip file is decompressed to at
//! most [`MAX_GZIP_RATIO`] times its size. A run of NULs after a crash (no newline for hundreds of
//! megabytes) or a gzip bomb then costs its length in time and [`MAX_LINE_BYTES`] in memory.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The longest line kept whole: the follower's default
/// ([`crate::follow::DEFAULT_MAX_LINE_BYTES`], 64 KiB).
pub const MAX_LINE_BYTES: usize = crate::follow::DEFAULT_MAX_LINE_BYTES;

/// A gzip file is decompressed to at most this many times its compressed size (and at least
/// [`MIN_GZIP_LIMIT_BYTES`]): kubelet logs compress about 10 to 20 times; a gzip bomb of zeros
/// about 1000.
pub const MAX_GZIP_RATIO: u64 = 100;

/// The smallest decompression limit, whatever the compressed size: 64 MiB.
pub const MIN_GZIP_LIMIT_BYTES: u64 = 64 << 20;

/// What a [`Bounded`] reader cut, shared with whoever reads its counts after it moved to a
/// reading thread.
#[derive(Debug, Default)]
pub(crate) struct Cuts {
    /// Lines cut to [`MAX_LINE_BYTES`].
    pub lines: AtomicU64,
    /// Bytes skipped from cut lines.
    pub bytes: AtomicU64,
    /// The total limit was reached: the rest of the stream was not read.
    pub stopped: AtomicBool,
}

/// A reader that cuts lines to `max_line_bytes` and stops after `max_total_bytes`.
pub(crate) struct Bounded<R> {
    inner: R,
    max_line_bytes: usize,
    /// Bytes of the current line kept so far.
    run: usize,
    /// The current line is being cut (counted once).
    cutting: bool,
    /// Bytes left before the total limit, if any.
    left: Option<u64>,
    cuts: Arc<Cuts>,
}

impl<R: Read> Bounded<R> {
    /// `inner` with lines cut to `max_line_bytes`, and at most `max_total_bytes` of it read.
    pub(crate) fn new(
        inner: R,
        max_line_bytes: usize,
        max_total_bytes: Option<u64>,
    ) -> (Self, Arc<Cuts>) {
        let cuts = Arc::new(Cuts::default());
        (
            Bounded {
                inner,
                max_line_bytes: max_line_bytes.max(1),
                run: 0,
                cutting: false,
                left: max_total_bytes,
                cuts: Arc::clone(&cuts),
            },
            cuts,
        )
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let want = match self.left {
                Some(0) => {
                    // Stopped at the limit; say so if anything was left.
                    let mut probe = [0u8; 1];
                    if self.inner.read(&mut probe)? > 0 {
                        self.cuts.stopped.store(true, Ordering::Relaxed);
                    }
                    return Ok(0);
                }
                Some(left) => out.len().min(usize::try_from(left).unwrap_or(usize::MAX)),
                None => out.len(),
            };
            let n = self.inner.read(&mut out[..want])?;
            if n == 0 {
                return Ok(0);
            }
            if let Some(left) = &mut self.left {
                *left -= n as u64;
            }
            // Compact in place: every byte kept moves left, never right.
            let (mut w, mut r) = (0, 0);
            while r < n {
                let nl = memchr::memchr(b'\n', &out[r..n]).map(|p| r + p);
                let seg_end = nl.unwrap_or(n);
                let seg = seg_end - r;
                let room = self.max_line_bytes.saturating_sub(self.run);
                let keep = seg.min(room);
                out.copy_within(r..r + keep, w);
                w += keep;
                if seg > room {
                    if !self.cutting {
                        self.cutting = true;
                        self.cuts.lines.fetch_add(1, Ordering::Relaxed);
                    }
                    self.cuts
                        .bytes
                        .fetch_add((seg - keep) as u64, Ordering::Relaxed);
                }
                self.run += keep;
                match nl {
                    Some(p) => {
                        out[w] = b'\n';
                        w += 1;
                        self.run = 0;
                        self.cutting = false;
                        r = p + 1;
                    }
                    None => r = n,
                }
            }
            if w > 0 {
                return Ok(w);
            }
            // Everything read was skipped: read on rather than report the end.
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(
        input: &[u8],
        max_line: usize,
        max_total: Option<u64>,
        chunk: usize,
    ) -> (Vec<u8>, u64, u64, bool) {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(out.len()).min(self.1);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let (mut r, cuts) = Bounded::new(Chunks(input, chunk), max_line, max_total);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        (
            got,
            cuts.lines.load(Ordering::Relaxed),
            cuts.bytes.load(Ordering::Relaxed),
            cuts.stopped.load(Ordering::Relaxed),
        )
    }

    #[test]
    fn long_lines_are_cut_and_counted_in_any_chunking() {
        let input = b"short\n0123456789abcdef\nok\n0123456789\nend";
        for chunk in [1, 3, 7, 64] {
            let (got, lines, bytes, stopped) = through(input, 10, None, chunk);
            assert_eq!(
                got, b"short\n0123456789\nok\n0123456789\nend",
                "chunk {chunk}"
            );
            assert_eq!((lines, bytes, stopped), (1, 6, false), "chunk {chunk}");
        }
        let (got, lines, bytes, _) = through(&vec![0u8; 1 << 20], 100, None, 4096);
        assert_eq!((got.len(), lines, bytes), (100, 1, (1 << 20) - 100));
        let (got, _, _, stopped) = through(b"a\nb\nc\nd\n", 10, Some(4), 3);
        assert_eq!((got.as_slice(), stopped), (&b"a\nb\n"[..], true));
        let (_, _, _, stopped) = through(b"a\nb\n", 10, Some(4), 3);
        assert!(!stopped);
    }
}
