//! Timestamp shapes found in node logs, parsed by hand (fixed positions, no allocation):
//! klog's yearless `MMDD hh:mm:ss.uuuuuu`, syslog's yearless `Mon DD HH:MM:SS`, RFC 3339 (with
//! `T` or a space between date and time, with or without a zone), and epoch numbers (kubelet
//! JSON `ts` in milliseconds as a decimal, journald `__REALTIME_TIMESTAMP` in microseconds).
//!
//! Yearless times get their year from [`ParseContext`](super::ParseContext): see
//! [`resolve_year`].

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::Offset;

use super::record::ParseContext;

/// A wall-clock time without a year, as klog and syslog write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Yearless {
    pub month: i8,
    pub day: i8,
    pub hour: i8,
    pub minute: i8,
    pub second: i8,
    pub nanos: i32,
}

impl Yearless {
    /// The time on day `day` of month `month` (both checked by the caller) at what [`hms`]
    /// read: hour, minute, second and nanoseconds.
    pub(crate) fn on(
        month: i32,
        day: i32,
        (hour, minute, second, nanos): (i8, i8, i8, i32),
    ) -> Self {
        Yearless {
            month: month as i8,
            day: day as i8,
            hour,
            minute,
            second,
            nanos,
        }
    }
}

/// Picks the year of a yearless time of month `month`, given the context's year (the year of
/// the previous timestamp) and previous timestamp.
///
/// New Year: when the previous timestamp is in December and this one is in January the line is
/// from the next year; when the previous one is in January and this one in December (a line
/// out of order across New Year) it is from the year before. Otherwise the context's year.
pub(crate) fn resolve_year(ctx: &ParseContext, month: i8) -> i32 {
    let Some(last) = ctx.last else {
        return ctx.year;
    };
    let last_month = ctx.offset.to_datetime(last).month();
    match (last_month, month) {
        (12, 1) => ctx.year + 1,
        (1, 12) => ctx.year - 1,
        _ => ctx.year,
    }
}

/// Converts a yearless time to a timestamp in the context's offset; `None` for an impossible
/// date (Feb 30, or Feb 29 in a non-leap year).
pub(crate) fn yearless_to_timestamp(ctx: &ParseContext, t: Yearless) -> Option<Timestamp> {
    let year = i16::try_from(resolve_year(ctx, t.month)).ok()?;
    let time = civil_to_timestamp(year, t, ctx.offset)?;
    // The source's first yearless time, after the file was last written: last year's.
    if ctx.last.is_none()
        && let Some(limit) = ctx.not_after
        && time.duration_since(limit) > jiff::SignedDuration::from_hours(24)
    {
        return civil_to_timestamp(year - 1, t, ctx.offset);
    }
    Some(time)
}

fn civil_to_timestamp(year: i16, t: Yearless, offset: Offset) -> Option<Timestamp> {
    let dt = DateTime::new(year, t.month, t.day, t.hour, t.minute, t.second, t.nanos).ok()?;
    offset.to_timestamp(dt).ok()
}

/// Reads `n` ASCII digits at `at`.
pub(crate) fn digits(b: &[u8], at: usize, n: usize) -> Option<i32> {
    let d = b.get(at..at + n)?;
    let mut v = 0i32;
    for &c in d {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i32::from(c - b'0');
    }
    Some(v)
}

/// Parses `hh:mm:ss[.fraction]` at `at`. Returns the hour, minute, second, nanoseconds and the
/// index after the time; `None` when it is not a complete `hh:mm:ss`.
pub(crate) fn hms(b: &[u8], at: usize) -> Option<(i8, i8, i8, i32, usize)> {
    let h = digits(b, at, 2)?;
    if b.get(at + 2) != Some(&b':') {
        return None;
    }
    let m = digits(b, at + 3, 2)?;
    if b.get(at + 5) != Some(&b':') {
        return None;
    }
    let s = digits(b, at + 6, 2)?;
    let mut i = at + 8;
    let mut nanos = 0i32;
    if b.get(i) == Some(&b'.') || b.get(i) == Some(&b',') {
        i += 1;
        let mut scale = 100_000_000i32;
        while let Some(&c) = b.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            nanos += i32::from(c - b'0') * scale;
            scale /= 10;
            i += 1;
        }
    }
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    // A leap second (":60") is clamped, as jiff does not represent it.
    Some((h as i8, m as i8, s.min(59) as i8, nanos, i))
}

/// Month names as journalctl and syslog print them under the C locale and under the locales
/// seen in pasted journals (French `sept.`, `févr.`, `déc.`; German `Mär`, `Okt`, `Dez`; Spanish
/// `ene`, `abr`, `ago`, `dic`; Russian `ноя`, `нояб.`): glibc's `%b` abbreviations, any case, a
/// trailing `.` included.
const MONTH_NAMES: &[(&str, i8)] = &[
    ("janv.", 1),
    ("févr.", 2),
    ("avr.", 4),
    ("juil.", 7),
    ("août", 8),
    ("sept.", 9),
    ("déc.", 12),
    ("mars", 3),
    ("juin", 6),
    ("oct.", 10),
    ("nov.", 11),
    ("mai", 5),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("mär", 3),
    ("apr", 4),
    ("may", 5),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("oct", 10),
    ("okt", 10),
    ("nov", 11),
    ("dec", 12),
    ("dez", 12),
    ("ene", 1),
    ("abr", 4),
    ("ago", 8),
    ("dic", 12),
    // ru_RU: glibc's `%b` before and since 2.27, and its abbreviations with a point.
    ("янв", 1),
    ("фев", 2),
    ("мар", 3),
    ("апр", 4),
    ("май", 5),
    ("мая", 5),
    ("июн", 6),
    ("июл", 7),
    ("авг", 8),
    ("сен", 9),
    ("окт", 10),
    ("ноя", 11),
    ("дек", 12),
    ("янв.", 1),
    ("февр.", 2),
    ("мар.", 3),
    ("апр.", 4),
    ("июн.", 6),
    ("июл.", 7),
    ("авг.", 8),
    ("сент.", 9),
    ("окт.", 10),
    ("нояб.", 11),
    ("дек.", 12),
];

/// The three-letter ASCII names of [`MONTH_NAMES`], sorted, for [`month_name`]'s common case.
static ASCII_MONTH_NAMES: std::sync::LazyLock<Vec<([u8; 3], i8)>> =
    std::sync::LazyLock::new(|| {
        let mut names: Vec<([u8; 3], i8)> = MONTH_NAMES
            .iter()
            .filter_map(|&(name, month)| Some((<[u8; 3]>::try_from(name.as_bytes()).ok()?, month)))
            .collect();
        names.sort_unstable();
        names
    });

/// A month name at `at` (see [`MONTH_NAMES`]): the month (1–12) and the name's length in bytes.
/// The name must be followed by a space.
pub(crate) fn month_name(b: &[u8], at: usize) -> Option<(i8, usize)> {
    let rest = b.get(at..)?;
    if rest.first()?.is_ascii_digit() {
        return numbered_month(rest);
    }
    // A name begins with one of these letters (a klog `I0613`, a `2025-…` does not).
    if !matches!(
        rest.first()?.to_ascii_lowercase(),
        // 0xD0, 0xD1: the first byte of a Cyrillic letter.
        b'a' | b'd' | b'e' | b'f' | b'j' | b'm' | b'n' | b'o' | b's' | 0xD0 | 0xD1
    ) {
        return None;
    }
    // No name holds a space, so the one that can match is as long as the word before the first
    // space: a line's first word (a klog `I0613`, a `2025-06-13T…`) is ruled out by one short
    // scan instead of a comparison with every name.
    let head = &rest[..rest.len().min(MONTH_NAME_MAX_BYTES + 1)];
    let len = memchr::memchr(b' ', head)?;
    if head[..len].iter().any(u8::is_ascii_digit) {
        return None;
    }
    if len == 3 && head[..3].is_ascii() {
        // The common case (`Jun`, a syslog or journalctl prefix), in one comparison.
        let word = [
            head[0].to_ascii_lowercase(),
            head[1].to_ascii_lowercase(),
            head[2].to_ascii_lowercase(),
        ];
        return ASCII_MONTH_NAMES
            .binary_search_by(|(name, _)| name.as_slice().cmp(word.as_slice()))
            .ok()
            .map(|i| (ASCII_MONTH_NAMES[i].1, 3));
    }
    MONTH_NAMES.iter().find_map(|&(name, month)| {
        let n = name.as_bytes();
        (n.len() == len && eq_ignore_case_utf8(&rest[..len], n)).then_some((month, len))
    })
}

/// A month as the Chinese and Japanese locales' `%b` print it, its number and `月` (`6月 24
/// 13:16:48`), or the Korean, `월`: the month and the name's length in bytes; followed by a space.
fn numbered_month(rest: &[u8]) -> Option<(i8, usize)> {
    let digits = rest
        .iter()
        .take(3)
        .take_while(|b| b.is_ascii_digit())
        .count();
    let month: i8 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let after = &rest[digits..];
    let len = ["月", "월"]
        .iter()
        .find(|w| after.starts_with(w.as_bytes()))
        .map(|w| w.len())?;
    ((1..=12).contains(&month) && after.get(len) == Some(&b' ')).then_some((month, digits + len))
}

/// The longest of [`MONTH_NAMES`] in bytes (`февр.`).
const MONTH_NAME_MAX_BYTES: usize = 9;

/// ASCII-case-insensitive comparison that also folds the Latin-1 capitals of `é`, `û`, `ä`
/// (`FÉVR.`, `AOÛT`, `MÄR`).
fn eq_ignore_case_utf8(a: &[u8], lower: &[u8]) -> bool {
    if a.eq_ignore_ascii_case(lower) {
        return true;
    }
    // Lower-casing ASCII is what `eq_ignore_ascii_case` did: only a non-ASCII byte can fold
    // (no allocation per line for the names that do not match).
    if a.is_ascii() {
        return false;
    }
    let Ok(a) = std::str::from_utf8(a) else {
        return false;
    };
    a.to_lowercase().as_bytes() == lower
}

/// An RFC 3339-like timestamp found by [`rfc3339`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FullTime {
    /// The instant; a time without a zone is read in the context's offset.
    pub time: Timestamp,
    /// Index after the timestamp text.
    pub end: usize,
    /// Whether the text carried its zone (`Z`, `±hh:mm`, `±hhmm`, `±hh`); `false` when it was
    /// read in the context's offset.
    pub zoned: bool,
}

/// Parses `YYYY-MM-DD[T ]hh:mm:ss[.frac][Z|±hh:mm|±hhmm|±hh]` at `at`.
///
/// Accepts containerd's `2023-01-20T13:26:08.948042485+01:00`, CRI-O's
/// `2021-06-29 17:14:10.292290977+02:00` (a space for `T`) and rsyslog's
/// `2023-01-20T12:26:08.948163+00:00`. A zone-less time uses `default_offset`.
pub(crate) fn rfc3339(b: &[u8], at: usize, default_offset: Offset) -> Option<FullTime> {
    let year = digits(b, at, 4)?;
    if b.get(at + 4) != Some(&b'-') || b.get(at + 7) != Some(&b'-') {
        return None;
    }
    let month = digits(b, at + 5, 2)?;
    let day = digits(b, at + 8, 2)?;
    if !matches!(b.get(at + 10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (hour, minute, second, nanos, mut i) = hms(b, at + 11)?;
    let mut offset = default_offset;
    let zoned = matches!(b.get(i), Some(b'Z' | b'z' | b'+' | b'-'));
    match b.get(i) {
        Some(b'Z' | b'z') => {
            offset = Offset::UTC;
            i += 1;
        }
        Some(&sign @ (b'+' | b'-')) => {
            let oh = digits(b, i + 1, 2)?;
            let (om, len) = if b.get(i + 3) == Some(&b':') {
                (digits(b, i + 4, 2)?, 6)
            } else if let Some(om) = digits(b, i + 3, 2) {
                (om, 5)
            } else {
                (0, 3)
            };
            let secs = (oh * 3600 + om * 60) * if sign == b'-' { -1 } else { 1 };
            offset = Offset::from_seconds(secs).ok()?;
            i += len;
        }
        _ => {}
    }
    let t = Yearless {
        month: i8::try_from(month).ok()?,
        day: i8::try_from(day).ok()?,
        hour,
        minute,
        second,
        nanos,
    };
    let time = civil_to_timestamp(i16::try_from(year).ok()?, t, offset)?;
    Some(FullTime {
        time,
        end: i,
        zoned,
    })
}

/// Parses an epoch time written as a decimal number of `unit_nanos`-nanosecond units, with an
/// optional fraction: kubelet JSON `ts` (`1655581336244.2942`, milliseconds) or journald
/// `__REALTIME_TIMESTAMP` (`1655581336244294`, microseconds). Exact (no float rounding);
/// an exponent form falls back to `f64`.
pub(crate) fn epoch_decimal(s: &str, unit_nanos: i128) -> Option<Timestamp> {
    let s = s.trim();
    if s.contains(['e', 'E']) {
        let v: f64 = s.parse().ok()?;
        if !v.is_finite() {
            return None;
        }
        return Timestamp::from_nanosecond((v * unit_nanos as f64) as i128).ok();
    }
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    if int.is_empty() || int.len() > 20 || !int.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let int: i128 = int.parse().ok()?;
    let mut nanos = int.checked_mul(unit_nanos)?;
    let mut scale = unit_nanos / 10;
    for c in frac.bytes() {
        if !c.is_ascii_digit() {
            return None;
        }
        if scale == 0 {
            break;
        }
        nanos += i128::from(c - b'0') * scale;
        scale /= 10;
    }
    Timestamp::from_nanosecond(nanos).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn month_names_are_read_by_their_word_alone() {
        let longest = MONTH_NAMES.iter().map(|(n, _)| n.len()).max();
        assert_eq!(longest, Some(MONTH_NAME_MAX_BYTES));
        for (name, _) in MONTH_NAMES {
            let line = format!("{} 13 07:44:44", name.to_uppercase());
            assert!(month_name(line.as_bytes(), 0).is_some(), "{line}");
        }
        assert_eq!(month_name("févr. 13 07:44:44".as_bytes(), 0), Some((2, 6)));
        assert_eq!(month_name(b"x Jun 26", 2), Some((6, 3)));
        assert_eq!(month_name(b"JUIL. 4", 0), Some((7, 5)));
        // A name must be the whole word before the space.
        assert_eq!(month_name(b"June 26", 0), None);
        assert_eq!(month_name(b"Ju 26", 0), None);
        assert_eq!(month_name(b"I0613 07:44:44", 0), None);
        assert_eq!(month_name(b"Jun", 0), None);
        assert_eq!(month_name("ноя 29 07:44:44".as_bytes(), 0), Some((11, 6)));
        assert_eq!(month_name("нояб. 29 07:44:44".as_bytes(), 0), Some((11, 9)));
        // zh_CN's and ja_JP's `%b`, ko_KR's.
        assert_eq!(month_name("6月 24 13:16:48".as_bytes(), 0), Some((6, 4)));
        assert_eq!(month_name("12月 1 00:00:00".as_bytes(), 0), Some((12, 5)));
        assert_eq!(month_name("10월 3 08:00:00".as_bytes(), 0), Some((10, 5)));
        assert_eq!(month_name("13月 24".as_bytes(), 0), None);
        assert_eq!(month_name("6月24".as_bytes(), 0), None);
    }

    fn ctx(year: i32) -> ParseContext {
        ParseContext::new(year)
    }

    #[test]
    fn a_first_time_after_the_file_was_written_is_last_years() {
        let dec28 = Yearless {
            month: 12,
            day: 28,
            hour: 7,
            minute: 24,
            second: 45,
            nanos: 0,
        };
        let mut c = ctx(2026);
        c.not_after = Some("2026-12-02T00:30:00Z".parse().unwrap());
        let t = yearless_to_timestamp(&c, dec28).unwrap();
        assert_eq!(t.to_string(), "2025-12-28T07:24:45Z");
        // Within a day of the modification time: this year's (a clock a little ahead).
        c.not_after = Some("2026-12-27T12:00:00Z".parse().unwrap());
        assert_eq!(
            yearless_to_timestamp(&c, dec28).unwrap().to_string(),
            "2026-12-28T07:24:45Z"
        );
        // Only the source's first time: later ones follow it (New Year included).
        c.not_after = Some("2026-12-02T00:30:00Z".parse().unwrap());
        c.last = Some("2025-12-27T00:00:00Z".parse().unwrap());
        c.year = 2025;
        assert_eq!(
            yearless_to_timestamp(&c, dec28).unwrap().to_string(),
            "2025-12-28T07:24:45Z"
        );
        // No bound: the context's year, as before.
        assert_eq!(
            yearless_to_timestamp(&ctx(2026), dec28)
                .unwrap()
                .to_string(),
            "2026-12-28T07:24:45Z"
        );
    }

    #[test]
    fn rfc3339_table() {
        let utc = Offset::UTC;
        let cases: &[(&str, &str)] = &[
            // containerd logfmt, case 03
            (
                "2023-01-20T13:26:08.948042485+01:00",
                "2023-01-20T12:26:08.948042485Z",
            ),
            // CRI-O, case 30
            (
                "2021-06-29 17:14:10.292290977+02:00",
                "2021-06-29T15:14:10.292290977Z",
            ),
            // rsyslog, case 03
            (
                "2023-01-20T12:26:08.948163+00:00",
                "2023-01-20T12:26:08.948163Z",
            ),
            // containerd, case 21
            (
                "2019-10-02T23:27:34.417871363Z",
                "2019-10-02T23:27:34.417871363Z",
            ),
            // dockerd, case 24
            (
                "2018-06-08T22:53:30.195593926-07:00",
                "2018-06-09T05:53:30.195593926Z",
            ),
            // journalctl -o short-iso
            ("2023-01-20T13:26:08+0100", "2023-01-20T12:26:08Z"),
            // no zone: default offset
            ("2023-01-20 13:26:08", "2023-01-20T13:26:08Z"),
        ];
        for &(input, want) in cases {
            let got = rfc3339(input.as_bytes(), 0, utc).unwrap();
            assert_eq!(got.time.to_string(), want, "{input}");
            assert_eq!(got.end, input.len(), "{input}");
        }
        assert!(rfc3339(b"2023-02-30T00:00:00Z", 0, utc).is_none());
        assert!(rfc3339(b"2023-01-20", 0, utc).is_none());
    }

    #[test]
    fn epoch_table() {
        let cases: &[(&str, i128, &str)] = &[
            (
                "1655581336244.2942",
                1_000_000,
                "2022-06-18T19:42:16.2442942Z",
            ),
            (
                "1757010309253.551",
                1_000_000,
                "2025-09-04T18:25:09.253551Z",
            ),
            ("1655581336244294", 1_000, "2022-06-18T19:42:16.244294Z"),
            (
                "1.6555813362442942e12",
                1_000_000,
                "2022-06-18T19:42:16.244294144Z",
            ),
        ];
        for &(input, unit, want) in cases {
            assert_eq!(
                epoch_decimal(input, unit).unwrap().to_string(),
                want,
                "{input}"
            );
        }
        assert!(epoch_decimal("12x", 1000).is_none());
        assert!(epoch_decimal("", 1000).is_none());
    }

    #[test]
    fn new_year_rollover() {
        let mut c = ctx(2022);
        let dec = Yearless {
            month: 12,
            day: 31,
            hour: 23,
            minute: 59,
            second: 59,
            nanos: 0,
        };
        let jan = Yearless {
            month: 1,
            day: 1,
            hour: 0,
            minute: 0,
            second: 1,
            nanos: 0,
        };
        let t_dec = yearless_to_timestamp(&c, dec).unwrap();
        assert_eq!(t_dec.to_string(), "2022-12-31T23:59:59Z");
        c.last = Some(t_dec);
        assert_eq!(resolve_year(&c, 1), 2023);
        assert_eq!(
            yearless_to_timestamp(&c, jan).unwrap().to_string(),
            "2023-01-01T00:00:01Z"
        );
        // A January context sees a straggling December line as the previous year.
        let mut c = ctx(2023);
        c.last = Some("2023-01-01T00:00:01Z".parse().unwrap());
        assert_eq!(resolve_year(&c, 12), 2022);
        assert_eq!(resolve_year(&c, 1), 2023);
        // Feb 29 in a non-leap year is not a date.
        let feb29 = Yearless {
            month: 2,
            day: 29,
            hour: 0,
            minute: 0,
            second: 0,
            nanos: 0,
        };
        assert!(yearless_to_timestamp(&ctx(2023), feb29).is_none());
        assert!(yearless_to_timestamp(&ctx(2024), feb29).is_some());
    }
}
