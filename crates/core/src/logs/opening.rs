//! [`Opening`]: where a record's times are, for the records that [`parse`](super::parse) reads
//! the same as any record identical to them outside their times. A log repeats its lines at
//! other times (a pod worker's `Error syncing pod` at every back-off, the GC's `Failed to stop
//! sandbox` every minute), and a reader that has parsed one such record need not parse the next:
//! it reads the time alone ([`Opening::read_time`]).

use jiff::Timestamp;

use super::envelope;
use super::parse::at_start;
use super::record::{EnvelopeKind, Format, ParseContext};
use super::text::trim_end;
use super::time::{Yearless, yearless_to_timestamp};
use super::{json, klog};

/// The opening of a record, up to the end of its time, of one of these shapes ([`opening`]):
/// - klog whose header is whole up to its caller (`Lmmdd hh:mm:ss.uuuuuu threadid `, the thread
///   ID optional), bare or after a syslog envelope (`Mon DD HH:MM:SS host ident[pid]: `, as
///   `journalctl` prints the kubelet's log);
/// - kubelet JSON whose first member is its time as a plain decimal of milliseconds
///   (`{"ts":1655581336244.2942,`, what `k8s.io/component-base/logs/json` writes).
///
/// What `parse` gives such a record depends only on its bytes outside its times
/// ([`Opening::times`], [`Opening::outside_times`]) but for the time, which is
/// [`Opening::read_time`]'s:
/// - no other shape starts with a severity letter and four digits, or with a month name and a
///   syslog time; and an object whose first member is `"ts"` is kubelet JSON (a journald export
///   object is told by its member names, which are outside the time);
/// - the envelope's zone-less time and klog's show no zone, and kubelet JSON has no envelope, so
///   no time moves the context's zone;
/// - what the envelope's time gives is read by nothing but the envelope's own field (neither
///   the record's time, klog's, nor its content key);
/// - a JSON time is a bare value that ends at the comma, so the members after it are read from
///   the same bytes; it is taken only when it reads as a time, as it does in `parse` (where a
///   `"ts"` that does not would let a later `"time"` give the time).
///
/// So a record the same as another but for its times parses the same but for its time: what a
/// log repeating its lines at other times costs once.
#[derive(Debug, Clone, Copy)]
pub struct Opening {
    time: OpeningTime,
    /// The bytes outside the times before the record's own time: between the envelope's time
    /// and the end of klog's severity letter (the letter alone for a bare record), or JSON's
    /// `{"ts":`.
    head: (usize, usize),
    /// Where the record's own time ends.
    rest: usize,
}

/// The time an [`Opening`] gives.
#[derive(Debug, Clone, Copy)]
enum OpeningTime {
    /// klog's: its year comes from the [`ParseContext`].
    Yearless(Yearless),
    /// kubelet JSON's: milliseconds since the epoch.
    Epoch(Timestamp),
}

impl Opening {
    /// A bare klog record's opening: its time, which ends at `rest`.
    pub(crate) fn klog(time: Yearless, rest: usize) -> Opening {
        Opening {
            time: OpeningTime::Yearless(time),
            head: (0, 1),
            rest,
        }
    }

    /// A kubelet JSON record's opening: its time `time`, written between `head_end` and `rest`.
    pub(crate) fn epoch(time: Timestamp, head_end: usize, rest: usize) -> Opening {
        Opening {
            time: OpeningTime::Epoch(time),
            head: (0, head_end),
            rest,
        }
    }

    /// The byte ranges of the record's times: the envelope's (empty without one) and the
    /// record's own (klog's date and time, JSON's `ts` value).
    pub fn times(&self) -> [std::ops::Range<usize>; 2] {
        [0..self.head.0, self.head.1..self.rest]
    }

    /// The record's text (`text`, the record this was found in) outside [`Opening::times`]: the
    /// envelope's host and identifier with klog's severity letter (JSON's `{"ts":`), and what
    /// follows the record's own time.
    pub fn outside_times<'a>(&self, text: &'a str) -> (&'a str, &'a str) {
        (&text[self.head.0..self.head.1], &text[self.rest..])
    }

    /// The record's time as [`parse`](super::parse) reads it in `ctx`, advancing `ctx` as
    /// `parse` does; `None` for a klog date not in the context's year (Feb 29 in a non-leap
    /// year), which `parse` reads as no klog time (and `ctx` is left as it was).
    pub fn read_time(&self, ctx: &mut ParseContext) -> Option<Timestamp> {
        let t = match self.time {
            OpeningTime::Yearless(t) => yearless_to_timestamp(ctx, t)?,
            OpeningTime::Epoch(t) => t,
        };
        ctx.observe(t);
        Some(t)
    }

    /// Whether [`parse`](super::parse) reads `text`, the record this opening was found in,
    /// from its first byte as the shape the opening says: klog, bare or in a syslog envelope,
    /// or kubelet JSON with no envelope. Only then is a record the same as it but for its times
    /// read the same but for its time. An object that starts as kubelet JSON may be read
    /// otherwise: one with a syntax error as the record after a prefix (`{"ts":1,I0613 …`), one
    /// with journald's members (`MESSAGE`, `__CURSOR`, `__REALTIME_TIMESTAMP`) as a journald
    /// export; and so would be a record the same as it but for its `ts`, which nothing here
    /// reads. Costs a parse.
    pub fn read_from_start(&self, text: &str) -> bool {
        let s = trim_end(text);
        let Some(p) = at_start(text, s, &ParseContext::new(2000)) else {
            return false;
        };
        let envelope = p.envelope.as_ref().map(|e| e.kind);
        match self.time {
            OpeningTime::Yearless(_) => {
                matches!(p.format, Format::KlogText | Format::KlogStructured)
                    && matches!(envelope, None | Some(EnvelopeKind::Syslog))
            }
            OpeningTime::Epoch(_) => p.format == Format::Json && envelope.is_none(),
        }
    }

    /// Whether the record's time carries its year (JSON's does; klog's and a syslog envelope's
    /// do not).
    pub fn carries_year(&self) -> bool {
        matches!(self.time, OpeningTime::Epoch(_))
    }

    /// This record's opening after `at` bytes of envelope whose time ends at `env_time_end`.
    fn after(self, env_time_end: usize, at: usize) -> Opening {
        Opening {
            time: self.time,
            head: (env_time_end, at + self.head.1),
            rest: at + self.rest,
        }
    }
}

/// The opening of `line` when [`parse`](super::parse) reads it as one of [`Opening`]'s shapes;
/// `None` for any other record.
pub fn opening(line: &str) -> Option<Opening> {
    let s = trim_end(line);
    if let Some(k) = klog::start(s).or_else(|| json::start(s)) {
        return Some(k);
    }
    let sc = envelope::scan(s)?;
    if sc.kind != EnvelopeKind::Syslog || sc.yearless.is_none() {
        return None;
    }
    let at = sc.body_start?;
    Some(klog::start(&s[at..])?.after(sc.time_end, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the times are, for each shape; and what has no opening: a JSON time that is not a
    /// plain decimal followed by the next member, or not a time at all, and klog whose header
    /// is cut or in an envelope other than syslog's.
    #[test]
    fn openings_of_each_shape_and_of_none() {
        let times = |line: &str| opening(line).map(|k| k.times());
        assert_eq!(
            times(r#"{"ts":1655581336244.2942,"caller":"kubelet/kubelet.go:2102","msg":"x"}"#),
            Some([0..0, 6..24])
        );
        assert_eq!(times(r#"{"ts":0,"msg":"x"}"#), Some([0..0, 6..7]));
        assert_eq!(
            times("I0613 00:00:00.000000    2417 kubelet.go:1] \"x\""),
            Some([0..0, 1..21])
        );
        assert_eq!(
            times("Jun 13 00:00:00 node-a kubelet[2417]: I0613 00:00:00.5 2417 kubelet.go:1] x"),
            Some([0..15, 39..54])
        );
        for none in [
            r#"{"ts":1.6e12,"msg":"x"}"#,
            r#"{"ts":-1,"msg":"x"}"#,
            r#"{"ts":1655581336244.,"msg":"x"}"#,
            r#"{"ts":.5,"msg":"x"}"#,
            r#"{"ts":1655581336244 ,"msg":"x"}"#,
            r#"{"ts":1655581336244}"#,
            r#"{"ts":"2022-06-18T19:42:16Z","msg":"x"}"#,
            r#"{ "ts":1655581336244,"msg":"x"}"#,
            r#"{"ts":123456789012345678901,"msg":"x"}"#,
            r#"{"ts":99999999999999999999,"msg":"x"}"#,
            r#"{"msg":"x","ts":1655581336244}"#,
            "I0613 00:00:00.000000",
            "2025-06-13T00:00:00.000000+00:00 node-a kubelet[2417]: I0613 00:00:00.5 2417 a.go:1] x",
        ] {
            assert!(times(none).is_none(), "{none}");
        }
    }

    /// A JSON opening's time is the one [`parse`](super::super::parse) gives the record, and
    /// reading it moves the context as parsing does.
    #[test]
    fn a_json_opening_reads_the_time_parse_does() {
        let line =
            r#"{"ts":1655581336244.2942,"caller":"kubelet/kubelet.go:2102","msg":"x","v":2}"#;
        let mut parsed_ctx = ParseContext::new(2025);
        let want = super::super::parse(line, &mut parsed_ctx).time;
        let mut ctx = ParseContext::new(2025);
        let k = opening(line).expect("a JSON opening");
        assert_eq!(k.read_time(&mut ctx), want);
        assert_eq!(
            want.map(|t| t.to_string()).as_deref(),
            Some("2022-06-18T19:42:16.2442942Z")
        );
        assert_eq!(ctx, parsed_ctx);
        assert!(k.carries_year());
        assert!(!opening("I0613 00:00:00.5 2417 a.go:1] x").is_some_and(|k| k.carries_year()));
    }
}
