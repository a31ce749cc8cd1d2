//! The log-line layer of the log forensics: every kubelet, containerd and CRI-O line shape
//! real nodes write, parsed into a [`ParsedLine`], and classified into an [`Event`].
//!
//! Pure and allocation-light: `&str` in, borrowed records out; no I/O, no clock (the year of
//! yearless timestamps comes from the caller through [`ParseContext`]). Reading files, journals
//! and rotated siblings is the caller's job.
//!
//! Pipeline for one source:
//! 1. [`LineAssembler`] joins the physical lines of a record (klog `key=<` blocks, hard-wrapped
//!    pastes) and numbers them;
//! 2. [`parse`] turns a record into a [`ParsedLine`] (envelope + inner shape), never failing:
//!    what fits no shape is [`Format::Unparsed`], to be counted with its position;
//! 3. [`classify`] maps a parsed line to an [`Event`] by message text, with the IDs it names
//!    and, for failures, a [`Cause`].
//!
//! ```text
//! let mut ctx = ParseContext::new(2025);
//! let mut asm = LineAssembler::new();
//! for line in text.lines() {
//!     if let Some(rec) = asm.push(line) {
//!         let parsed = parse(rec.text, &mut ctx);
//!         if let Some(event) = classify(&parsed) { … }
//!     }
//! }
//! // … and asm.finish() for the last record.
//! ```

mod assemble;
pub mod callers;
pub mod catalogue;
mod envelope;
pub mod ids;
mod journald;
mod json;
mod klog;
mod kv;
mod opening;
mod parse;
mod prefix;
pub mod record;
pub mod recorder;
mod shape;
mod text;
mod time;
mod understood;

pub use assemble::{CutClass, DEFAULT_MAX_RECORD_BYTES, LineAssembler, Record};
pub use catalogue::{
    Cause, CniFailure, ConfigSource, Event, EventKind, Named, PlegType, SyncOp, classify,
    classify_cause, event_kind, named,
};
pub use ids::{IdKind, Ids, PartialId, PodName};
pub use opening::{Opening, opening};
pub use parse::{Skimmed, parse, parse_unless_unnamed, record_start};
pub use record::{
    Component, Envelope, EnvelopeKind, Field, FieldValue, Format, Level, ParseContext, ParsedLine,
    content_key,
};
pub use understood::{
    KEPT_FAILED_BYTES, KEPT_FAILED_RECORDS, MAX_NOT_UNDERSTOOD_PER_MILLE, NonRecord, Understanding,
    Verdict, non_record,
};
