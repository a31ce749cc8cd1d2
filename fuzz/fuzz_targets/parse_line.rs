//! Fuzz target `parse_line`: arbitrary bytes (lossy UTF-8) through the line assembler, the
//! parser and the classifier, line by line and as one multi-line record, with and without
//! message-only mode, and again with every line behind a prefix real pastes carry (Markdown
//! indentation and quotes, `grep -n`, grep over files, Docker Desktop, talosctl, a cloud
//! export's JSON). Any panic is a bug: the parser must take every input. Also checks that
//! `event_kind` agrees with `classify`, that a prefixed record reads as the bare one does, that
//! cutting the input before a line that begins a record assembles the same records (what the
//! parallel block reader relies on), and that the understanding counts add up.
//!
//! Run: `cargo +nightly fuzz run parse_line -- -max_total_time=600` from `fuzz/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use podcoroner_core::logs::{
    Format, LineAssembler, ParseContext, Understanding, classify, event_kind, parse, record_start,
};

/// Prefixes seen in the wild; the first byte of the input picks one.
const PREFIXES: &[&str] = &[
    "    ",
    "\t",
    "> ",
    "> > ",
    "2149: ",
    "2149:\t",
    "kubelet.err.log:123:",
    "C:\\var\\log\\kubelet.log:12:",
    "[2023-01-10T14:00:14.373845500Z][kubelet][I] ",
    "10.0.0.8: ",
    "2023-06-01T10:00:00.000Z\tnode-a\t",
];

/// Records of `text` (lines split on `\n`), as (first line, line count, text).
fn assemble(lines: &[&str]) -> Vec<(u64, u32, String)> {
    let mut asm = LineAssembler::with_max_record_bytes(256);
    let mut out = Vec::new();
    for line in lines {
        if let Some(r) = asm.push(line) {
            out.push((r.first_line, r.lines, r.text.to_owned()));
        }
    }
    if let Some(r) = asm.finish() {
        out.push((r.first_line, r.lines, r.text.to_owned()));
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let year = 1970 + i32::from(data.first().copied().unwrap_or(0));
    let mut ctx = ParseContext::new(year);
    ctx.message_only = data.len() % 2 == 1;

    // Line by line, through the assembler.
    let lines: Vec<&str> = text.split('\n').collect();
    let records = assemble(&lines);
    let mut understanding = Understanding::default();
    for (first, _, rec) in &records {
        let parsed = parse(rec, &mut ctx);
        understanding.count(rec, parsed.is_parsed(), *first);
        let event = classify(&parsed).map(|e| e.into_owned());
        // The cheap kind-only path agrees with the full classification.
        assert_eq!(event_kind(&parsed), event.map(|e| e.kind));
    }
    let counted = understanding.understood + understanding.not_understood + understanding.non_records;
    assert_eq!(counted, records.len() as u64);
    let _ = understanding.verdict();
    // Every physical line is in exactly one record.
    assert_eq!(records.iter().map(|r| u64::from(r.1)).sum::<u64>(), lines.len() as u64);

    // Cut before any line that begins a record, alone or after the line before it: the same
    // records.
    let begins = |i: usize| {
        LineAssembler::begins_record(lines[i])
            || LineAssembler::begins_record_after(lines[i - 1], lines[i])
    };
    for at in (1..lines.len()).filter(|&i| begins(i)).take(2) {
        let mut parts = assemble(&lines[..at]);
        parts.extend(
            assemble(&lines[at..])
                .into_iter()
                .map(|(first, n, t)| (first + at as u64, n, t)),
        );
        assert_eq!(parts, records);
    }

    // Every line behind a prefix: never a panic, and a bare record that parses with a time
    // parses behind the prefix too.
    let prefix = PREFIXES[usize::from(data.first().copied().unwrap_or(0)) % PREFIXES.len()];
    let prefixed: Vec<String> = lines.iter().map(|l| format!("{prefix}{l}")).collect();
    let refs: Vec<&str> = prefixed.iter().map(String::as_str).collect();
    for (_, _, rec) in assemble(&refs) {
        let parsed = parse(&rec, &mut ctx);
        let _ = classify(&parsed);
    }
    for line in lines.iter().take(8) {
        let mut c = ParseContext::new(year);
        let bare = parse(line, &mut c);
        let p = format!("{prefix}{line}");
        let behind = parse(&p, &mut c);
        // A record that begins at column 0 reads the same behind a prefix.
        if record_start(line) == Some(0)
            && bare.is_parsed()
            && bare.format != Format::Plain
            && bare.time.is_some()
            && !line.starts_with([' ', '\t'])
        {
            assert!(behind.is_parsed(), "{p:?}");
        }
    }
    // As a cloud export's JSON member.
    let wrapped = format!(
        "{{\"textPayload\":{},\"timestamp\":\"2023-06-01T10:00:00Z\"}}",
        serde_json_string(&text)
    );
    let _ = classify(&parse(&wrapped, &mut ctx));

    // The whole input as one record (embedded newlines, klog blocks).
    let parsed = parse(&text, &mut ctx);
    let _ = parsed.field("err");
    let _ = classify(&parsed);
});

/// `s` as a JSON string literal.
fn serde_json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
