//! The log rules' entry points, kept at their old path: the rules live under
//! [`crate::rules`] (one file per finding family), the event record in [`crate::event`].

pub use crate::event::{LogKind, LoggedEvent};
pub use crate::rules::logs::{diagnose_logs, diagnose_with_logs, diagnose_with_logs_until, enrich};
