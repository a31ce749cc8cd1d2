//! The values a startup record carries in its fields and message: the kubelet's
//! `"Observed pod startup duration"` keys (both key sets), the durations of `Successfully pulled
//! image "<ref>" in 1.2s (1.5s including waiting)`, Go's `time.Time` and `time.Duration` as
//! klog's text and JSON formats write them. Hand-written: these are kubelet log formats.

use jiff::{SignedDuration, Timestamp};

use crate::event::LoggedEvent;
use crate::logs::{ParseContext, ParsedLine, parse};

/// What one `"Observed pod startup duration"` record says
/// (`pod_startup_latency_tracker.go` `ObservedPodOnWatch`).
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// `podStartSLOduration`, in seconds: creation to running as the watch saw it, less the
    /// image pulls (and, with the newer key set, the init containers).
    pub slo_seconds: Option<f64>,
    /// `podStartE2EDuration`: creation to running as the watch saw it.
    pub e2e: Option<SignedDuration>,
    /// `podCreationTimestamp` (whole seconds in the text format).
    pub created_at: Option<Timestamp>,
    /// `firstStartedPulling` (the older key set; Go's zero time when nothing was pulled).
    pub first_started_pulling: Option<Timestamp>,
    /// `lastFinishedPulling` (the older key set).
    pub last_finished_pulling: Option<Timestamp>,
    /// `totalImagesPullingTime` (the newer key set, k/k #131950).
    pub total_images_pulling: Option<SignedDuration>,
    /// `totalInitContainerRuntime` (the newer key set).
    pub total_init_container_runtime: Option<SignedDuration>,
    /// `observedRunningTime`: the status manager first saw every container running.
    pub observed_running: Option<Timestamp>,
    /// `watchObservedRunningTime`: the kubelet's pod watch saw it running.
    pub watch_observed_running: Option<Timestamp>,
}

/// The fields of a record, parsed again from its text (the event keeps none of them).
fn reparse(e: &LoggedEvent) -> ParsedLine<'_> {
    let mut ctx = ParseContext::new(
        e.time
            .map_or(1970, |t| t.to_zoned(jiff::tz::TimeZone::UTC).year().into()),
    );
    parse(&e.text, &mut ctx)
}

/// The values of an `"Observed pod startup duration"` record.
///
/// The kubelet's JSON format (v1.34.4, `testdata/cases/39`) writes every `time.Time` value of
/// this record as the record's own time (`podCreationTimestamp` equal to `ts` to the
/// microsecond), so from a JSON record only the durations are read, and the creation is the
/// record's time less `podStartE2EDuration`.
pub fn observed(e: &LoggedEvent) -> Observed {
    let line = reparse(e);
    let json = line.format == crate::logs::Format::Json;
    let time = |k: &str| line.field(k).filter(|_| !json).and_then(go_time);
    let duration = |k: &str| line.field(k).and_then(go_duration);
    let e2e = duration("podStartE2EDuration");
    let created_at = if json {
        e.time.zip(e2e).and_then(|(t, d)| t.checked_sub(d).ok())
    } else {
        time("podCreationTimestamp")
    };
    Observed {
        slo_seconds: line
            .field("podStartSLOduration")
            .and_then(|v| v.trim_matches('"').parse::<f64>().ok()),
        e2e,
        created_at,
        first_started_pulling: time("firstStartedPulling"),
        last_finished_pulling: time("lastFinishedPulling"),
        total_images_pulling: duration("totalImagesPullingTime"),
        total_init_container_runtime: duration("totalInitContainerRuntime"),
        observed_running: time("observedRunningTime"),
        watch_observed_running: time("watchObservedRunningTime"),
    }
}

/// Whether an `"Observed pod startup duration"` record's SLI is possible: `podStartSLOduration`
/// is a number not below 0 and `podStartE2EDuration` not negative ([`observed`] says the same).
/// Read from the text when each key is written once with a plain value right after it (the
/// kubelet's text and JSON formats): a diagnosis asks it of every such record as it reads, and
/// parsing the record again costs more than the rest of its reading. Anything else is parsed
/// again.
pub fn possible_sli(e: &LoggedEvent) -> bool {
    let value = |key: &str| -> Option<&str> {
        let text = &*e.text;
        let at = text.find(key)?;
        let rest = &text[at + key.len()..];
        if rest.contains(key) {
            return None;
        }
        let rest = rest
            .strip_prefix('=')
            .or_else(|| rest.strip_prefix("\":"))?
            .trim_start_matches(['"', '\\']);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
            .unwrap_or(rest.len());
        Some(&rest[..end]).filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
    };
    let quick = value("podStartSLOduration")
        .and_then(|v| v.parse::<f64>().ok())
        .zip(value("podStartE2EDuration").and_then(go_duration));
    match quick {
        Some((slo, e2e)) => slo >= 0.0 && !e2e.is_negative(),
        None => {
            let o = observed(e);
            o.slo_seconds.is_some_and(|v| v >= 0.0) && !o.e2e.is_some_and(|d| d.is_negative())
        }
    }
}

/// The `message` field of a pod event record (`"Event occurred" … message="…"`).
pub fn event_message(e: &LoggedEvent) -> Option<String> {
    reparse(e).field("message").map(str::to_string)
}

/// The pull durations of `Successfully pulled image "<ref>" in 1.2s (1.5s including waiting)`:
/// (the pull, the pull with the wait in the kubelet's image puller queue). `None` for
/// `already present on machine`.
pub fn pulled_in(message: &str) -> Option<(SignedDuration, Option<SignedDuration>)> {
    let at = message.find("\" in ")?;
    let rest = &message[at + 5..];
    let token = |s: &str| go_duration(s.split(' ').next()?.trim_end_matches(['.', ')']));
    let pull = token(rest)?;
    let waiting = rest.find('(').and_then(|o| token(&rest[o + 1..]));
    Some((pull, waiting))
}

/// A Go `time.Duration` as `String()` writes it (`2m3.4s`, `180.183041ms`, `0s`, `1h2m`), or
/// quoted; `None` when it is not one.
pub fn go_duration(s: &str) -> Option<SignedDuration> {
    let s = s.trim().trim_matches('"');
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    if rest.is_empty() {
        return None;
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "h" => 3.6e12,
            "m" => 6e10,
            "s" => 1e9,
            "ms" => 1e6,
            "us" | "µs" | "μs" => 1e3,
            "ns" => 1.0,
            _ => return None,
        };
        nanos += n * scale;
        rest = &rest[unit_end..];
    }
    // Go's durations are i64 nanoseconds: saturate as it does.
    let nanos = nanos.min(i64::MAX as f64) as i64;
    Some(SignedDuration::from_nanos(if neg { -nanos } else { nanos }))
}

/// A Go `time.Time` as klog writes it: `2026-12-01 12:30:22.94219947 +0000 UTC m=+2.52` in
/// the text format, epoch milliseconds (`1796128210272.48`) in the JSON format. Go's zero
/// time (`0001-01-01 00:00:00 +0000 UTC`) is `None`: nothing was recorded.
pub fn go_time(s: &str) -> Option<Timestamp> {
    let s = s.trim().trim_matches('"');
    if let Ok(ms) = s.parse::<f64>() {
        // The JSON format: milliseconds since the epoch; Go's zero time is far negative.
        if ms <= 0.0 {
            return None;
        }
        return Timestamp::from_nanosecond((ms * 1e6) as i128).ok();
    }
    let s = s.split(" m=").next()?;
    // `<date> <time> <offset> <zone name>`: the zone name is redundant with the offset.
    let mut parts = s.split(' ');
    let (date, time, offset) = (parts.next()?, parts.next()?, parts.next()?);
    if date.starts_with("0001-") {
        return None;
    }
    let text = format!("{date} {time} {offset}");
    jiff::fmt::strtime::parse("%Y-%m-%d %H:%M:%S%.f %z", &text)
        .ok()?
        .to_timestamp()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`possible_sli`] must say: the check on the values [`observed`] reads.
    fn possible_by_observed(e: &LoggedEvent) -> bool {
        let o = observed(e);
        o.slo_seconds.is_some_and(|v| v >= 0.0) && !o.e2e.is_some_and(|d| d.is_negative())
    }

    #[test]
    fn a_possible_sli_read_from_the_text_is_what_the_fields_say() {
        let klog = |slo: &str, e2e: &str| {
            format!(
                "I1201 12:30:22.950712   21520 pod_startup_latency_tracker.go:104] \"Observed pod startup duration\" pod=\"shop/web-0\" podStartSLOduration={slo} podStartE2EDuration=\"{e2e}\" podCreationTimestamp=\"2026-12-01 12:30:21 +0000 UTC\""
            )
        };
        let json = |slo: &str, e2e: &str| {
            format!(
                "{{\"ts\":1796128210272.48,\"caller\":\"util/pod_startup_latency_tracker.go:104\",\"msg\":\"Observed pod startup duration\",\"v\":0,\"pod\":{{\"name\":\"web-0\",\"namespace\":\"shop\"}},\"podStartSLOduration\":{slo},\"podStartE2EDuration\":\"{e2e}\"}}"
            )
        };
        let mut lines = Vec::new();
        for (slo, e2e) in [
            ("1.95", "1.95s"),
            ("0", "0s"),
            ("-9.2233720368547758e+09", "2.1s"),
            ("-0.5", "3s"),
            ("2.5", "-1s"),
            ("1e-05", "2m3.4s"),
            ("x", "1s"),
            ("3.1", "12µs"),
            ("3.1", "abc"),
        ] {
            lines.push(klog(slo, e2e));
            lines.push(json(slo, e2e));
        }
        // A key written twice, and a record without the SLI.
        lines.push(format!("{} podStartSLOduration=-1", klog("2", "2s")));
        lines.push(
            "I1201 12:30:22.950712   21520 pod_startup_latency_tracker.go:104] \"Observed pod startup duration\" pod=\"shop/web-0\""
                .to_string(),
        );
        let mut from_cases = 0;
        for (_, text) in crate::case_files::case_files() {
            for l in text
                .lines()
                .filter(|l| l.contains("Observed pod startup duration"))
            {
                lines.push(l.to_string());
                from_cases += 1;
            }
        }
        assert!(from_cases >= 5, "{from_cases}");
        let (mut possible, mut not) = (0, 0);
        for l in &lines {
            let events = crate::event::read_text(crate::event::LogKind::Kubelet, "k.log", 2026, l);
            for e in events
                .iter()
                .filter(|e| e.event.kind == crate::logs::EventKind::PodStartupObserved)
            {
                let want = possible_by_observed(e);
                assert_eq!(possible_sli(e), want, "{l}");
                if want {
                    possible += 1;
                } else {
                    not += 1;
                }
            }
        }
        assert!(possible >= 8 && not >= 8, "{possible} possible, {not} not");
    }

    #[test]
    fn go_durations() {
        let d = |s| go_duration(s).map(|d: SignedDuration| d.as_secs_f64());
        assert_eq!(d("2.272456427s"), Some(2.272456427));
        assert_eq!(d("\"2m3.4s\""), Some(123.4));
        assert_eq!(d("180.183041ms"), Some(0.180183041));
        assert_eq!(d("0s"), Some(0.0));
        assert_eq!(d("1h2m"), Some(3720.0));
        assert_eq!(d("-1.5s"), Some(-1.5));
        assert_eq!(d("abc"), None);
        assert_eq!(d(""), None);
        assert_eq!(d("12"), None);
    }

    #[test]
    fn go_times() {
        let t = go_time("2026-12-01 12:30:22.94219947 +0000 UTC m=+2.521798272").unwrap();
        assert_eq!(t.to_string(), "2026-12-01T12:30:22.94219947Z");
        let t = go_time("\"2025-03-03 22:04:49 +0800 CST\"").unwrap();
        assert_eq!(t.to_string(), "2025-03-03T14:04:49Z");
        assert_eq!(go_time("0001-01-01 00:00:00 +0000 UTC"), None);
        let t = go_time("1796128210272.48").unwrap();
        assert_eq!(t.as_millisecond(), 1796128210272);
        assert_eq!(go_time("-62135596800000"), None);
        assert_eq!(go_time("yesterday"), None);
    }

    #[test]
    fn pulled_messages() {
        let (pull, wait) = pulled_in(
            "Successfully pulled image \"nginx:1.27\" in 2m3.4s (2m5.1s including waiting). Image size: 123 bytes.",
        )
        .unwrap();
        assert_eq!(pull.as_secs_f64(), 123.4);
        assert_eq!(wait.unwrap().as_secs_f64(), 125.1);
        let (pull, wait) = pulled_in("Successfully pulled image \"busybox\" in 812ms").unwrap();
        assert_eq!(pull.as_millis(), 812);
        assert_eq!(wait, None);
        assert_eq!(
            pulled_in("Container image \"busybox\" already present on machine"),
            None
        );
    }
}
