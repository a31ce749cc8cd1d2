//! `journalctl -o json` entries in one field order.
//!
//! journalctl writes an entry's fields in an order that changes from run to run: systemd 252
//! (Debian 12) gave the same entry of the same journal a different order on each of two runs.
//! A record quoted as evidence would then read differently on every diagnosis, and a record cut
//! to [`crate::MAX_KEPT_TEXT_BYTES`] would keep whichever fields came first. So each entry read
//! from journalctl is written again with the fields a journald record is parsed from
//! (`podcoroner_core::logs`' journald envelope), in the order of [`FIELD_ORDER`], `MESSAGE`
//! last; the other fields (`__CURSOR`, `_BOOT_ID`, `_TRANSPORT`, …) are left out. Each value is
//! kept byte for byte as journalctl wrote it (a string, or `MESSAGE`'s array of byte values).

use std::collections::HashMap;
use std::io::{self, BufRead, Read};

use serde_json::value::RawValue;

/// The fields kept of an entry, in the order they are written again; a field the entry lacks
/// is left out. journalctl is asked for these only (`--output-fields`), when it can be.
pub(crate) const FIELD_ORDER: [&str; 7] = [
    "__REALTIME_TIMESTAMP",
    "_HOSTNAME",
    "SYSLOG_IDENTIFIER",
    "_SYSTEMD_UNIT",
    "_PID",
    "PRIORITY",
    "MESSAGE",
];

/// Writes the journalctl entry `line` (one JSON object, without its newline) to `out` with the
/// fields of [`FIELD_ORDER`] in its order, without a newline. `false`, with nothing written,
/// when `line` is not a JSON object (journalctl's error text, a cut line) or has a field name
/// with an escape (journald's names have none): the caller passes such a line on as it is.
pub(crate) fn reorder(line: &[u8], out: &mut Vec<u8>) -> bool {
    let Ok(fields) = serde_json::from_slice::<HashMap<&str, &RawValue>>(line) else {
        return false;
    };
    let start = out.len();
    out.push(b'{');
    for (name, value) in FIELD_ORDER
        .iter()
        .filter_map(|&name| Some((name, fields.get(name)?)))
    {
        if out.len() > start + 1 {
            out.push(b',');
        }
        // The names need no escapes; the value is kept as journalctl wrote it.
        for piece in ["\"", name, "\":", value.get()] {
            out.extend_from_slice(piece.as_bytes());
        }
    }
    out.push(b'}');
    true
}

/// The longest entry reordered: 8 MiB. journald cuts a line a unit writes to its output at
/// `LineMax` (48 KiB by default), which JSON's escapes make at most 6 times longer; a longer
/// entry (a message sent through journald's own protocol) passes as journalctl wrote it.
pub(crate) const MAX_ENTRY_BYTES: usize = 8 << 20;

/// The capacity [`InFieldOrder`]'s two buffers keep from one line to the next: 128 KiB, more
/// than an entry of a `LineMax` message takes with its fields. A longer entry's buffers are
/// given back once it is read, so one entry of 8 MiB does not hold 16 MiB for the rest of the
/// read.
pub(crate) const KEPT_BUFFER_BYTES: usize = 128 << 10;

/// A reader of journalctl's output that gives every entry in [`FIELD_ORDER`]'s order (see
/// [`reorder`]), one per line. A line that is no entry, or longer than `max_entry_bytes`, is
/// passed on unchanged (the reader after this one cuts it).
pub(crate) struct InFieldOrder<R> {
    inner: R,
    max_entry_bytes: u64,
    /// The line being read.
    line: Vec<u8>,
    /// What is to be given out, from `at`.
    out: Vec<u8>,
    at: usize,
    /// The rest of an overlong line is passed on as it comes, up to its newline.
    passing: bool,
}

impl<R: BufRead> InFieldOrder<R> {
    /// Reads `inner`, reordering entries of at most `max_entry_bytes` bytes.
    pub(crate) fn new(inner: R, max_entry_bytes: usize) -> InFieldOrder<R> {
        InFieldOrder {
            inner,
            max_entry_bytes: max_entry_bytes as u64,
            line: Vec::new(),
            out: Vec::new(),
            at: 0,
            passing: false,
        }
    }

    /// Fills `out` with the next line (or piece of an overlong one); `false` at the end.
    fn fill(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.at = 0;
        self.line.clear();
        self.out.shrink_to(KEPT_BUFFER_BYTES);
        self.line.shrink_to(KEPT_BUFFER_BYTES);
        let limit = if self.passing {
            1 << 16
        } else {
            self.max_entry_bytes
        };
        (&mut self.inner)
            .take(limit)
            .read_until(b'\n', &mut self.line)?;
        if self.line.is_empty() {
            return Ok(false);
        }
        let whole = self.line.last() == Some(&b'\n');
        let was_passing = self.passing;
        // Still no newline after `limit` bytes: an overlong line, given out as it comes.
        self.passing = !whole && self.line.len() as u64 == limit;
        let entry = &self.line[..self.line.len() - usize::from(whole)];
        // A piece of an overlong line is no entry; the last line may lack its newline.
        if !was_passing && !self.passing && reorder(entry, &mut self.out) {
            if whole {
                self.out.push(b'\n');
            }
            return Ok(true);
        }
        self.out.clear();
        std::mem::swap(&mut self.out, &mut self.line);
        Ok(true)
    }
}

impl<R: BufRead> Read for InFieldOrder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.out.len() && !self.fill()? {
            return Ok(0);
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(input: &[u8], max_entry_bytes: usize) -> String {
        let mut got = String::new();
        InFieldOrder::new(input, max_entry_bytes)
            .read_to_string(&mut got)
            .unwrap();
        got
    }

    #[test]
    fn an_entry_is_written_in_one_order_whatever_order_it_came_in() {
        let a = br#"{"__CURSOR":"s=1;i=2","_PID":"1007","MESSAGE":"I1019 07:20:46.701627 6774 a.go:1] \"x\" y=\"z\"","_BOOT_ID":"b","PRIORITY":"6","_HOSTNAME":"node-a","__REALTIME_TIMESTAMP":"1764000000032000","SYSLOG_IDENTIFIER":"kubelet","_SYSTEMD_UNIT":"kubelet.service"}"#;
        let b = br#"{"_SYSTEMD_UNIT":"kubelet.service","__REALTIME_TIMESTAMP":"1764000000032000","SYSLOG_IDENTIFIER":"kubelet","_HOSTNAME":"node-a","PRIORITY":"6","MESSAGE":"I1019 07:20:46.701627 6774 a.go:1] \"x\" y=\"z\"","_TRANSPORT":"stdout","_PID":"1007","__MONOTONIC_TIMESTAMP":"9"}"#;
        let want = r#"{"__REALTIME_TIMESTAMP":"1764000000032000","_HOSTNAME":"node-a","SYSLOG_IDENTIFIER":"kubelet","_SYSTEMD_UNIT":"kubelet.service","_PID":"1007","PRIORITY":"6","MESSAGE":"I1019 07:20:46.701627 6774 a.go:1] \"x\" y=\"z\""}"#;
        for line in [&a[..], &b[..]] {
            let mut out = Vec::new();
            assert!(reorder(line, &mut out));
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
        // A message that is not UTF-8 comes as an array of byte values, kept as it came; a
        // missing field is left out.
        let mut out = Vec::new();
        assert!(reorder(
            br#"{"MESSAGE":[73,255,10],"__CURSOR":"c","PRIORITY":"3"}"#,
            &mut out
        ));
        assert_eq!(out, br#"{"PRIORITY":"3","MESSAGE":[73,255,10]}"#);
    }

    #[test]
    fn what_is_no_entry_passes_unchanged() {
        for line in [
            &b"-- No entries --"[..],
            b"{\"MESSAGE\":\"cut",
            b"[1,2]",
            b"{\"MESS\\u0041GE\":\"a\"}",
            b"{\"MESSAGE\":\"\xff\"}",
        ] {
            let mut out = Vec::new();
            assert!(!reorder(line, &mut out), "{line:?}");
            assert!(out.is_empty());
        }
        let input = "-- No entries --\n{\"_PID\":\"1\",\"MESSAGE\":\"m\"}\n\n{\"MESSAGE\":\"cut";
        assert_eq!(
            through(input.as_bytes(), 1 << 10),
            "-- No entries --\n{\"_PID\":\"1\",\"MESSAGE\":\"m\"}\n\n{\"MESSAGE\":\"cut"
        );
        // The last entry without its newline is still reordered.
        assert_eq!(
            through(b"{\"MESSAGE\":\"m\",\"_PID\":\"1\"}", 1 << 10),
            "{\"_PID\":\"1\",\"MESSAGE\":\"m\"}"
        );
    }

    #[test]
    fn a_long_entrys_buffers_are_given_back_once_it_is_read() {
        let long = format!("{{\"MESSAGE\":\"{}\",\"_PID\":\"1\"}}", "x".repeat(1 << 20));
        let input = format!("{long}\n{{\"MESSAGE\":\"m\",\"_PID\":\"2\"}}\n");
        let mut r = InFieldOrder::new(input.as_bytes(), MAX_ENTRY_BYTES);
        assert!(r.fill().unwrap());
        assert_eq!(r.out.len(), long.len() + 1, "the long entry, reordered");
        assert!(r.fill().unwrap());
        assert_eq!(r.out, b"{\"_PID\":\"2\",\"MESSAGE\":\"m\"}\n");
        assert!(
            r.out.capacity() <= KEPT_BUFFER_BYTES && r.line.capacity() <= KEPT_BUFFER_BYTES,
            "{} and {} bytes kept",
            r.out.capacity(),
            r.line.capacity()
        );
    }

    #[test]
    fn an_overlong_entry_passes_whole_and_the_next_is_reordered() {
        let long = format!("{{\"MESSAGE\":\"{}\",\"_PID\":\"1\"}}", "x".repeat(300));
        let input = format!("{long}\n{{\"MESSAGE\":\"m\",\"_PID\":\"2\"}}\n");
        // 100 bytes an entry: the long one is given out as it came, in pieces, up to its
        // newline; the short one after it is reordered.
        assert_eq!(
            through(input.as_bytes(), 100),
            format!("{long}\n{{\"_PID\":\"2\",\"MESSAGE\":\"m\"}}\n")
        );
        // A line of exactly the limit with its newline is whole.
        let exact = "{\"MESSAGE\":\"m\",\"_PID\":\"3\"}\n";
        assert_eq!(
            through(exact.as_bytes(), exact.len()),
            "{\"_PID\":\"3\",\"MESSAGE\":\"m\"}\n"
        );
    }
}
