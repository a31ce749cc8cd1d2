//! Fuzz target `pasted_views`: arbitrary bytes (lossy UTF-8) through the pasted-view readers of
//! `podcoroner_core::pasted` (crictl's `pods` table, `crictl inspectp` JSON whole or cut,
//! kubectl's `get pods` table), each input read by all three, and what they read merged into
//! `PastedViews` and judged (`judge_all`, `too_young`, `infer_node`). Any panic is a bug: a bad
//! paste is a `PasteError` or lines not understood. Also checks that no finding is
//! `gc_eligible`, that each sandbox is judged or listed as not judged at most once, that every
//! row's origin names its file, and that a merged view holds no more sandboxes than were read.
//! The JSON forms of `crictl pods -o json` and `kubectl get pods -o json` are read by serde
//! (podcoroner-cri, podcoroner-apiserver) and are not fuzzed here.
//!
//! Seeds: the cases' pasted files (`testdata/cases/*/crictl-pods.txt`, `crictl-inspectp.*`,
//! `kubectl-get-pods.txt`).
//!
//! Run: `cargo +nightly fuzz run pasted_views <corpus dir> -- -max_total_time=600` from `fuzz/`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use podcoroner_core::pasted::{
    PastedViews, crictl_inspectp, crictl_pods_table, judge_all, kubectl_pods_table, too_young,
};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut sandboxes = Vec::new();
    for read in [crictl_pods_table, crictl_inspectp] {
        if let Ok(got) = read(&text, "f") {
            assert!(!got.rows.is_empty(), "Ok with no row");
            for r in &got.rows {
                assert!(r.origin.starts_with("f:"), "{}", r.origin);
            }
            for at in &got.not_understood {
                assert!(at.starts_with("f:"), "{at}");
            }
            sandboxes.extend(got.rows);
        }
    }
    let pods = kubectl_pods_table(&text, "k").ok().map(|got| {
        for p in &got.rows {
            assert!(p.origin.starts_with("k:"), "{}", p.origin);
            assert!(!p.name.is_empty());
        }
        (got.rows, "kubectl get pods k".to_string())
    });
    let read = sandboxes.len();
    let mut views = PastedViews::new(sandboxes, pods);
    assert!(views.sandboxes().len() <= read);
    views.node = views.infer_node();
    let now = jiff::Timestamp::UNIX_EPOCH
        .checked_add(jiff::SignedDuration::from_hours(24 * 365 * 55))
        .unwrap();
    for min in [0u64, 600] {
        let min = std::time::Duration::from_secs(min);
        let (found, not_judged) = judge_all(&views, min, now);
        assert!(found.iter().all(|f| !f.gc_eligible), "offline never deletes");
        assert!(found.len() + not_judged.len() <= views.sandboxes().len());
        let _ = too_young(&views, min, now);
    }
});
