//! The one-shot reader's bounds, as the follower's: a line longer than [`MAX_LINE_BYTES`] is cut
//! to it (the rest of the line is skipped and counted), and a gzip file is decompressed to at
//! most [`MAX_GZIP_RATIO`] times its size. A run of NULs after a crash (no newline for hundreds of
//! megabytes) or a gzip bomb then costs its length in time and [`MAX_LINE_BYTES`] in memory.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt as _;
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

/// Whether `file` (its first `len` bytes) holds a line longer than `max_line_bytes`: the file is
/// cut into one range per core (at most 4), each scanned with memchr in 1 MiB reads on its own
/// thread, and the line that runs across a cut is judged from the two ranges' ends. Far cheaper
/// than parsing, and no longer a pass on one core before the parallel parse.
///
/// # Errors
/// A read that fails, unless a range already found a long line (the ordered reader it leads to
/// then meets the error itself).
pub(crate) fn has_long_line(file: &File, len: u64, max_line_bytes: usize) -> io::Result<bool> {
    let ranges = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 4);
    has_long_line_in(file, len, max_line_bytes, ranges as u64, 1 << 20)
}

/// [`has_long_line`] with `ranges` ranges read `chunk_bytes` at a time.
fn has_long_line_in(
    file: &File,
    len: u64,
    max_line_bytes: usize,
    ranges: u64,
    chunk_bytes: usize,
) -> io::Result<bool> {
    let max = max_line_bytes as u64;
    let ranges = ranges.clamp(1, len.max(1));
    let bounds: Vec<(u64, u64)> = (0..ranges)
        .map(|k| (len * k / ranges, len * (k + 1) / ranges))
        .collect();
    // `Ok(None)`: a range holds a long line by itself.
    let scans: Vec<io::Result<Option<Fragments>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = bounds
            .iter()
            .map(|&(start, end)| scope.spawn(move || fragments(file, start, end, max, chunk_bytes)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    if scans.iter().any(|s| matches!(s, Ok(None))) {
        return Ok(true);
    }
    // The line open at the end of the ranges so far.
    let mut open = 0u64;
    for scan in scans {
        let Some(f) = scan? else {
            return Ok(true);
        };
        if f.newline {
            if open + f.lead > max {
                return Ok(true);
            }
            open = f.tail;
        } else {
            open += f.lead;
        }
        if open > max {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The line lengths one range of a file shows on its own, when none of them is too long.
struct Fragments {
    /// Bytes before the range's first newline (the whole range when it has none).
    lead: u64,
    /// Whether the range holds a newline.
    newline: bool,
    /// Bytes after its last newline.
    tail: u64,
}

/// Scans bytes `start..end` of `file`, `chunk_bytes` at a time, for [`has_long_line_in`]:
/// `None` when a line, or a piece of one, longer than `max` lies in the range.
fn fragments(
    file: &File,
    start: u64,
    end: u64,
    max: u64,
    chunk_bytes: usize,
) -> io::Result<Option<Fragments>> {
    let mut buf = vec![0u8; chunk_bytes.max(1)];
    let (mut pos, mut run) = (start, 0u64);
    let mut lead = None;
    while pos < end {
        let want = buf
            .len()
            .min(usize::try_from(end - pos).unwrap_or(usize::MAX));
        let n = match file.read_at(&mut buf[..want], pos) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let data = &buf[..n];
        let mut from = 0;
        for nl in memchr::memchr_iter(b'\n', data) {
            let piece = run + (nl - from) as u64;
            lead.get_or_insert(piece);
            if piece > max {
                return Ok(None);
            }
            run = 0;
            from = nl + 1;
        }
        run += (n - from) as u64;
        if run > max {
            return Ok(None);
        }
        pos += n as u64;
    }
    Ok(Some(Fragments {
        lead: lead.unwrap_or(run),
        newline: lead.is_some(),
        tail: run,
    }))
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

    #[test]
    fn a_long_line_is_found_across_every_cut_of_the_file() {
        // The longest line of `text`, as one loop over it would see it.
        fn longest(text: &[u8]) -> usize {
            text.split(|&b| b == b'\n')
                .map(<[u8]>::len)
                .max()
                .unwrap_or(0)
        }
        let texts: [&[u8]; 7] = [
            b"",
            b"0123456789",
            b"0123456789a",
            b"ab\n0123456789\ncd\n",
            b"ab\n0123456789a\ncd\n",
            b"\n\n\n\n0123456789a",
            b"0123\n456789abcdef0123\n45\n",
        ];
        let dir = tempfile::tempdir().unwrap();
        for (i, text) in texts.iter().enumerate() {
            let path = dir.path().join(format!("{i}.log"));
            std::fs::write(&path, text).unwrap();
            let file = File::open(&path).unwrap();
            let len = text.len() as u64;
            let want = longest(text) > 10;
            for ranges in 1..=5 {
                for chunk in [1, 2, 3, 5, 64] {
                    assert_eq!(
                        has_long_line_in(&file, len, 10, ranges, chunk).unwrap(),
                        want,
                        "text {i}, {ranges} ranges, {chunk}-byte reads"
                    );
                }
            }
        }
    }
}
