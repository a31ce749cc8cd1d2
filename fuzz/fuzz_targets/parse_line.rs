//! Fuzz target `parse_line`: arbitrary bytes (lossy UTF-8) through the line assembler, the
//! parser and the classifier, line by line and as one multi-line record, with and without
//! message-only mode. Any panic is a bug: the parser must take every input. Also checks that
//! `event_kind` agrees with `classify`.
//!
//! Run: `cargo +nightly fuzz run parse_line -- -max_total_time=600` from `fuzz/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use podcoroner_core::logs::{LineAssembler, ParseContext, classify, event_kind, parse};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let year = 1970 + i32::from(data.first().copied().unwrap_or(0));
    let mut ctx = ParseContext::new(year);
    ctx.message_only = data.len() % 2 == 1;

    // Line by line, through the assembler.
    let mut asm = LineAssembler::with_max_record_bytes(256);
    for line in text.split('\n') {
        if let Some(rec) = asm.push(line) {
            let parsed = parse(rec.text, &mut ctx);
            let event = classify(&parsed).map(|e| e.into_owned());
            // The cheap kind-only path agrees with the full classification.
            assert_eq!(event_kind(&parsed), event.map(|e| e.kind));
        }
    }
    if let Some(rec) = asm.finish() {
        let parsed = parse(rec.text, &mut ctx);
        let _ = classify(&parsed).map(|e| e.into_owned());
    }

    // The whole input as one record (embedded newlines, klog blocks).
    let parsed = parse(&text, &mut ctx);
    let _ = parsed.field("err");
    let _ = classify(&parsed);
});
