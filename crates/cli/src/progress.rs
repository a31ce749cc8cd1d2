//! The progress bar of long log reads (`diagnose`, `explain`, `collect`): bytes read of the
//! file's size and the rate, on stderr, drawn only when stderr is a terminal and only once a
//! read has taken [`SHOW_AFTER`]; nothing at all when stderr is piped or redirected.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use podcoroner_logs::progress::{Progress, set_observer};

/// A read shorter than this shows no bar.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Installs the bar as the log readers' observer when stderr is a terminal; otherwise nothing.
pub(crate) fn install() {
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        set_observer(Some(Arc::new(Bar::default())));
    }
}

/// One bar per source read, hidden until the read has taken [`SHOW_AFTER`].
#[derive(Default)]
struct Bar {
    current: Mutex<Option<Current>>,
}

struct Current {
    bar: ProgressBar,
    started: Instant,
    shown: bool,
}

impl Progress for Bar {
    fn begin(&self, origin: &str, total_bytes: Option<u64>) {
        let bar = ProgressBar::with_draw_target(total_bytes, ProgressDrawTarget::hidden());
        let template = if total_bytes.is_some() {
            "reading {msg} {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} {eta}"
        } else {
            "reading {msg} {spinner} {bytes} {bytes_per_sec}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_message(origin.to_string());
        if let Ok(mut c) = self.current.lock() {
            *c = Some(Current {
                bar,
                started: Instant::now(),
                shown: false,
            });
        }
    }

    fn advance(&self, bytes: u64) {
        let Ok(mut c) = self.current.lock() else {
            return;
        };
        let Some(c) = c.as_mut() else { return };
        c.bar.inc(bytes);
        if !c.shown && c.started.elapsed() >= SHOW_AFTER {
            c.shown = true;
            c.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn end(&self) {
        if let Ok(mut c) = self.current.lock()
            && let Some(c) = c.take()
        {
            c.bar.finish_and_clear();
        }
    }
}
