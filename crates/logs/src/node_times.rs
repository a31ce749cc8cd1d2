//! A node's logs read in the year and zone they show together: a yearless log (klog, syslog)
//! beside one whose times carry their year is read in that year, and the zone-less times of a
//! node whose zone one log shows (journalctl's local prefix before containerd's
//! `time="…+02:00"`) in that zone, so the logs line up. What `node::gather` reads a node's logs
//! with, and the case goldens (`tests/case_findings.rs`), so both read alike.

use jiff::tz::Offset;

use crate::{LogKind, LogRead, ReadAs, Source, times_at_start};

/// One log of a node as [`read_in_node_times`] read it.
#[derive(Debug)]
pub struct NodeLog<'s> {
    /// The log's source name (`kubelet_log`, `runtime_log_2`, …), which the zone note names.
    pub name: String,
    /// Where it was read from.
    pub source: &'s Source,
    /// Whose log.
    pub kind: LogKind,
    /// What was read, in [`Self::read_as`].
    pub read: LogRead,
    /// The year and zone its yearless and zone-less times were read in.
    pub read_as: ReadAs,
    /// Whose year its yearless times were read in, when it read any: the year and `the year of
    /// the other log`, `the year of its dated records`, or the year its file was last modified
    /// when nothing gives one.
    pub year_note: Option<(i32, String)>,
    /// Whose zone its zone-less times were read in when not UTC: the offset and `the zone its
    /// records show` or `the zone <source name> shows`.
    pub zone_note: Option<(Offset, String)>,
}

/// Reads `logs` (source name, source, kind) with `read_log`, each first in the year and zone
/// its own start shows ([`times_at_start`]), then again, when a regular file, in the year of
/// the first log with dated records (when its own times carry none, or its yearless records
/// before its first dated one were read in another year) and in the zone the first log showing
/// one shows (when it had zone-less times before knowing it).
///
/// # Errors
/// The first error of `read_log`.
pub fn read_in_node_times<'s, E>(
    logs: Vec<(String, &'s Source, LogKind)>,
    mut read_log: impl FnMut(&Source, LogKind, ReadAs) -> Result<LogRead, E>,
) -> Result<Vec<NodeLog<'s>>, E> {
    let mut reads = Vec::new();
    for (name, source, kind) in logs {
        // The year and zone the file's start shows, so that it is read once in them.
        let start_as = times_at_start(source);
        let mut read = read_log(source, kind, start_as)?;
        if let Some(zone) = start_as.offset {
            // Read in it from the first record on: shown before any zone-less time.
            read.zone_shown = Some(zone);
            read.zoneless_before_zone = false;
        }
        reads.push(NodeLog {
            name,
            source,
            kind,
            read,
            read_as: start_as,
            year_note: None,
            zone_note: None,
        });
    }
    // A yearless log beside a dated one is read in its year; so are a log's own yearless
    // records (journalctl's short prefix on a line with no time of its own: systemd's
    // `Started …`) beside its dated ones.
    let dated = reads.iter().find_map(|r| r.read.dated_year);
    let node_zone = reads
        .iter()
        .find_map(|r| r.read.zone_shown.map(|z| (z, r.name.clone())));
    for log in &mut reads {
        let read = &log.read;
        let year = match (dated, read.dated_year, read.year_before_dated()) {
            (Some(year), None, _) => Some((year, "the year of the other log")),
            // Yearless records before the first dated one read in another year (the file's
            // start held none to read them in from the first): read again in its year (those
            // after it follow the dated records already).
            (_, _, Some(own)) => Some((own, "the year of its dated records")),
            _ => None,
        };
        let zone = match (read.zone_shown, &node_zone) {
            (Some(own), _) if read.zoneless_before_zone => {
                Some((own, "the zone its records show".to_string()))
            }
            (None, Some((zone, whose))) if read.zoneless_before_zone => {
                Some((*zone, format!("the zone {whose} shows")))
            }
            _ => None,
        };
        let start_as = log.read_as;
        let read_as = ReadAs {
            year: year.map(|(y, _)| y).or(start_as.year),
            offset: zone.as_ref().map(|(z, _)| *z).or(start_as.offset),
        };
        // Read again: only a regular file can be (a pipe is empty the second time).
        let again = read_as != start_as
            && matches!(log.source, Source::File(path)
                if std::fs::metadata(path).is_ok_and(|m| m.is_file()))
            && read.span.is_some();
        if again {
            log.read = read_log(log.source, log.kind, read_as)?;
            log.read_as = read_as;
        }
        // Said only of a log that read yearless times: a JSON log's times carry their year.
        log.year_note = match (year.filter(|_| again), log.read_as.year) {
            _ if log.read.yearless_years().is_none() => None,
            (Some((year, whose)), _) => Some((year, whose.to_string())),
            (None, Some(year)) => Some((year, "the year of its dated records".to_string())),
            // Never a silent guess: yearless times no record or other log dates.
            (None, None) => log
                .read
                .yearless_years()
                .map(|(first, _)| (first, undated_year(log.source, first))),
        };
        log.zone_note = zone.filter(|_| again).or_else(|| {
            log.read_as
                .offset
                .map(|z| (z, "the zone its records show".to_string()))
        });
    }
    Ok(reads)
}

/// Whose year the yearless times of a log that no record nor other log dates were read in,
/// `first` the year of its first: its file's modification year, or the year before when a time
/// in that year would be after the file was last written (`ParseContext::not_after`: a log of
/// December modified on January 1st); the year it was read in for a pipe, whose modification
/// time is when it was written to.
fn undated_year(source: &Source, first: i32) -> String {
    const UNDATED: &str = "no record nor other log gives one";
    let modified = match source {
        Source::File(path) if std::fs::metadata(path).is_ok_and(|m| m.is_file()) => {
            crate::modified_at(path)
        }
        _ => None,
    };
    let Some(modified) = modified else {
        // A pipe's times are read as of now: December's, read on January 1st, are last year's.
        let now = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC);
        if i32::from(now.year()) == first {
            return format!("the year it was read in ({UNDATED})");
        }
        return format!(
            "the year before it was read in: in {} its times would be after now ({UNDATED})",
            now.year()
        );
    };
    let modified = modified.to_zoned(jiff::tz::TimeZone::UTC);
    if i32::from(modified.year()) == first {
        format!("the year its file was last modified ({UNDATED})")
    } else {
        format!(
            "the year before its file was last modified ({}): in {} its times would be after \
             that ({UNDATED})",
            modified.strftime("%Y-%m-%dT%H:%M:%SZ"),
            modified.year()
        )
    }
}
