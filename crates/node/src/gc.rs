//! `podcoroner gc`: removes the pod sandboxes the kubelet's GC should have removed, through the
//! CRI exactly as the kubelet does (`StopPodSandbox`, which runs the CNI teardown and frees the
//! IP, then `RemovePodSandbox`; NotFound counts as done), and nothing else.
//!
//! Eligibility is `podcoroner_core::gc`; this module adds the I/O: reading the node, checking
//! eligibility again on a fresh view right before each action, the rate limit, and the audit log
//! (`<state dir>/gc-audit.jsonl`, one JSON object per line, documented in `docs/gc.md`).
//!
//! With `--apply`, an `intent` record is written and flushed (`fsync`) before each action, and
//! the run stops when that fails: nothing is done that is not audited first. One acting run at a
//! time per state directory: `--apply` holds an exclusive `flock` on `<state dir>/gc.lock` for
//! the whole run, and a second run refuses ([`GcError::Locked`]).

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use jiff::Timestamp;
use podcoroner_core::gc::{self, Plan, Policy};
use podcoroner_core::{Finding, PodRef};
use podcoroner_cri::RuntimeClient;

pub use crate::api::AuditRecord;
use crate::gather::{self, SourceOptions};
use crate::selector::LabelSelector;

/// How `gc` runs.
#[derive(Debug, Clone)]
pub struct GcOptions {
    /// The eligibility guards.
    pub policy: Policy,
    /// Sandboxes whose labels match any of these are left alone (`--exclude-selector`).
    pub exclude_selectors: Vec<LabelSelector>,
    /// At most this many actions per minute (`--gc-rate`, default 10).
    pub rate_per_minute: u32,
    /// Act (`--apply`); otherwise only plan (the default).
    pub apply: bool,
    /// Where the audit log and the lock live (`--state-dir`, default `/var/lib/podcoroner`).
    pub state_dir: PathBuf,
    /// A `--pods` file older than this (by its modification time) is refused: it cannot prove a
    /// pod is gone (`--pods-max-age`, default 1 h). Separate from [`Policy::min_age`]; a sandbox
    /// created after the file was written is never judged from it either (the effective minimum
    /// age is the larger of the two ages).
    pub pods_max_age: Duration,
}

/// Why a `gc` run refused to act.
#[derive(Debug, thiserror::Error)]
pub enum GcError {
    /// Another acting run holds the state directory's lock.
    #[error(
        "another podcoroner gc --apply is acting on {} ({holder}); this run does nothing: wait for it, or give another --state-dir only if it manages another node",
        path.display()
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// What the lock file says about its holder (`pid N since TIME`), or `holder unknown`.
        holder: String,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock {}: {error}", path.display())]
    LockFailed {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The audit record of an action could not be written and flushed: the action was not taken.
    #[error(
        "refusing to act without an audit record: {detail}; {done} action(s) done before it, each audited (free space in or fix --state-dir {})",
        state_dir.display()
    )]
    AuditFailed {
        /// The state directory.
        state_dir: PathBuf,
        /// The failed write.
        detail: String,
        /// Actions done (and audited) earlier in this run.
        done: usize,
    },
}

/// What one run did.
#[derive(Debug, Clone)]
pub struct GcOutcome {
    /// The node.
    pub node: String,
    /// The plan made from the first view.
    pub plan: Plan,
    /// Every audited record of this run but the `intent` ones, in order.
    pub records: Vec<AuditRecord>,
    /// A `SandboxStopFailing` finding per failed stop.
    pub stop_failures: Vec<Finding>,
    /// Where the API view came from, and for a `--pods` file its age.
    pub api_origin: String,
    /// The audit log path, and the error when it could not be written (dry runs go on).
    pub audit_log: (PathBuf, Option<String>),
}

impl GcOptions {
    /// Why a sandbox's labels exclude it (`--exclude-selector`), or `None`.
    pub fn selector_reason(
        &self,
    ) -> impl Fn(&std::collections::BTreeMap<String, String>) -> Option<String> + '_ {
        move |labels| {
            self.exclude_selectors
                .iter()
                .find(|s| s.matches(labels))
                .map(|s| format!("labels match --exclude-selector {:?}", s.text()))
        }
    }
}

/// `podcoroner gc`: reads the node as `diagnose` does, plans, and with [`GcOptions::apply`] acts
/// through [`run_on`], re-reading the node's state (not its logs) before each action.
///
/// # Errors
/// Reading the node failed (as `diagnose`); with `--apply`, another run holds the state
/// directory's lock ([`GcError::Locked`]), or an audit record cannot be written and flushed
/// ([`GcError::AuditFailed`]: the action it announces is not taken, nor any after it).
pub async fn run(sources: &SourceOptions, opts: &GcOptions) -> anyhow::Result<GcOutcome> {
    // Held to the end of the run: one acting run per state directory.
    let _lock = if opts.apply {
        Some(lock_state_dir(&opts.state_dir)?)
    } else {
        None
    };
    let first = gather::gather(sources).await?;
    // The re-checks judge the node's state only: the logs would be read whole and dropped.
    let state_only = SourceOptions {
        kubelet_logs: vec![],
        runtime_logs: vec![],
        ..sources.clone()
    };
    let endpoint = first.runtime.as_ref().map(|r| r.endpoint.clone());
    run_on(
        &first.view,
        &RunContext {
            pods_file: sources.pods_file.as_deref(),
            endpoint: endpoint.as_deref(),
            timeout: sources.timeout,
        },
        opts,
        async |_| Ok(gather::gather(&state_only).await?.view),
    )
    .await
}

/// Where a GC run acts and what its API view rests on.
#[derive(Debug, Clone, Copy)]
pub struct RunContext<'a> {
    /// The `--pods` file the API view was read from, if any: its age bounds the sandboxes it
    /// may judge, and past [`GcOptions::pods_max_age`] it is refused.
    pub pods_file: Option<&'a std::path::Path>,
    /// The CRI endpoint to act through; `None` when the runtime was not read (no action then).
    pub endpoint: Option<&'a str>,
    /// The timeout of every CRI RPC.
    pub timeout: Duration,
}

/// Plans from `view` (the node as read, or as the agent holds it), and with
/// [`GcOptions::apply`] acts: before each action, `fresh(client)` gives the node as it is now
/// (at least a CRI listing through `client` taken right then), and the sandbox is judged again
/// on it ([`gc::still_eligible`]). The caller holds the state directory's lock
/// ([`lock_state_dir`]) when acting.
///
/// # Errors
/// `fresh` failed; the runtime cannot be reached to act; an audit record cannot be written and
/// flushed ([`GcError::AuditFailed`]).
pub async fn run_on(
    view: &podcoroner_core::NodeView,
    ctx: &RunContext<'_>,
    opts: &GcOptions,
    mut fresh: impl AsyncFnMut(&RuntimeClient) -> anyhow::Result<podcoroner_core::NodeView>,
) -> anyhow::Result<GcOutcome> {
    let now = Timestamp::now();
    let selector = opts.selector_reason();
    let policy = effective_policy(ctx.pods_file, opts);
    let mut plan = gc::plan(view, &policy, &selector, now);
    let mut api_origin = view
        .api
        .as_ref()
        .map_or("none".to_string(), |a| a.origin.clone());
    if let Some(path) = ctx.pods_file {
        let age = pods_file_age(path);
        api_origin = format!("{api_origin}, {} old", humanize(age));
        if age > opts.pods_max_age && plan.refused.is_none() {
            plan.refused = Some(format!(
                "the pods file {} is {} old, older than --pods-max-age {}: it cannot prove a pod is gone",
                path.display(),
                humanize(age),
                humanize(opts.pods_max_age)
            ));
            plan.removals.clear();
        }
    }

    let audit_path = opts.state_dir.join("gc-audit.jsonl");
    let mut audit = Audit::open(&audit_path);
    if opts.apply
        && let Some(e) = &audit.error
    {
        return Err(GcError::AuditFailed {
            state_dir: opts.state_dir.clone(),
            detail: e.clone(),
            done: 0,
        }
        .into());
    }
    let node = view.node_name.clone();
    let record = |s: &str,
                  pod: &PodRef,
                  rule: &str,
                  result: &str,
                  error: Option<String>,
                  class: Option<String>| AuditRecord {
        time: Timestamp::now(),
        node: node.clone(),
        sandbox_id: s.to_string(),
        pod: pod.clone(),
        rule: rule.to_string(),
        result: result.to_string(),
        error,
        error_class: class,
        dry_run: !opts.apply,
    };
    let mut records = Vec::new();
    for h in &plan.held {
        records.push(record(
            &h.sandbox_id,
            &h.pod,
            "LeakedSandbox",
            "held",
            Some(h.reason.clone()),
            None,
        ));
    }
    let mut stop_failures = Vec::new();
    if !opts.apply {
        for r in &plan.removals {
            records.push(record(
                &r.sandbox_id,
                &r.pod,
                &r.rule,
                "planned",
                None,
                None,
            ));
        }
    } else if !plan.removals.is_empty() {
        let endpoint = ctx.endpoint.context("no CRI runtime")?;
        let client = RuntimeClient::connect(endpoint, ctx.timeout).await?;
        let pause = Duration::from_secs_f64(60.0 / f64::from(opts.rate_per_minute.max(1)));
        let mut done = 0;
        for (i, r) in plan.removals.iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(pause).await;
            }
            // Check again on a fresh view: the node may have changed since planning.
            let fresh = fresh(&client).await?;
            if let Err(reason) = gc::still_eligible(
                &fresh,
                &r.sandbox_id,
                &effective_policy(ctx.pods_file, opts),
                &selector,
                Timestamp::now(),
            ) {
                let result = if reason == "the sandbox no longer exists" {
                    "already_gone"
                } else {
                    "skipped"
                };
                records.push(record(
                    &r.sandbox_id,
                    &r.pod,
                    &r.rule,
                    result,
                    Some(reason),
                    None,
                ));
                audit_or_stop(&mut audit, records.last().unwrap(), opts, done)?;
                continue;
            }
            let sandbox = fresh
                .cri
                .as_ref()
                .and_then(|c| c.sandboxes.iter().find(|s| s.id == r.sandbox_id))
                .cloned()
                .context("sandbox vanished between re-check and action")?;
            // The intent, on disk before the first CRI call: a crash or a full disk between
            // here and the outcome record still leaves a trace of what was attempted.
            let intent = record(
                &r.sandbox_id,
                &r.pod,
                &r.rule,
                "intent",
                Some("StopPodSandbox then RemovePodSandbox".to_string()),
                None,
            );
            audit_or_stop(&mut audit, &intent, opts, done)?;
            done += 1;
            let rec = match client.stop_sandbox(&r.sandbox_id).await {
                Err(e) if !e.is_not_found() => {
                    let failed = gc::stop_failed(&sandbox, &e.to_string());
                    let class = Some(failed.class.to_string());
                    let finding = failed.finding;
                    stop_failures.push(finding);
                    record(
                        &r.sandbox_id,
                        &r.pod,
                        &r.rule,
                        "stop_failed",
                        Some(e.to_string()),
                        class,
                    )
                }
                _ => match client.remove_sandbox(&r.sandbox_id).await {
                    Ok(()) => record(&r.sandbox_id, &r.pod, &r.rule, "removed", None, None),
                    Err(e) if e.is_not_found() => {
                        record(&r.sandbox_id, &r.pod, &r.rule, "already_gone", None, None)
                    }
                    Err(e) => record(
                        &r.sandbox_id,
                        &r.pod,
                        &r.rule,
                        "remove_failed",
                        Some(e.to_string()),
                        None,
                    ),
                },
            };
            records.push(rec);
            audit_or_stop(&mut audit, records.last().unwrap(), opts, done)?;
        }
    }
    if !opts.apply {
        for r in &records {
            let _ = audit.append(r);
        }
    } else {
        // After the actions: a failure here is reported with the outcome (`audit_log`), not
        // raised, since nothing is left to act on.
        for r in records.iter().filter(|r| r.result == "held") {
            let _ = audit.append(r);
        }
    }
    Ok(GcOutcome {
        node,
        plan,
        records,
        stop_failures,
        api_origin,
        audit_log: (audit_path, audit.error),
    })
}

/// Appends `record`; with `--apply` a failed write (or flush) ends the run before the next action.
fn audit_or_stop(
    audit: &mut Audit,
    record: &AuditRecord,
    opts: &GcOptions,
    done: usize,
) -> Result<(), GcError> {
    match audit.append(record) {
        Ok(()) => Ok(()),
        Err(detail) if opts.apply => Err(GcError::AuditFailed {
            state_dir: opts.state_dir.clone(),
            detail,
            done,
        }),
        Err(_) => Ok(()),
    }
}

impl crate::api::GcReport {
    /// Builds the report of `outcome`.
    pub fn new(
        outcome: &GcOutcome,
        dry_run: bool,
        generated_at: Timestamp,
    ) -> crate::api::GcReport {
        let pod = |p: &podcoroner_core::PodRef| crate::api::PodView {
            namespace: p.namespace.clone(),
            name: p.name.clone(),
            uid: p.uid.clone(),
        };
        crate::api::GcReport {
            schema: crate::api::GC_SCHEMA.to_string(),
            node: outcome.node.clone(),
            generated_at,
            dry_run,
            api_origin: outcome.api_origin.clone(),
            refused: outcome.plan.refused.clone(),
            removals: outcome
                .plan
                .removals
                .iter()
                .map(|r| crate::api::GcCandidateView {
                    sandbox_id: r.sandbox_id.clone(),
                    pod: pod(&r.pod),
                    reason: r.rule.clone(),
                })
                .collect(),
            held: outcome
                .plan
                .held
                .iter()
                .map(|h| crate::api::GcCandidateView {
                    sandbox_id: h.sandbox_id.clone(),
                    pod: pod(&h.pod),
                    reason: h.reason.clone(),
                })
                .collect(),
            results: outcome.records.clone(),
            findings: outcome
                .stop_failures
                .iter()
                .map(crate::api::FindingView::from)
                .collect(),
            audit_log: outcome.audit_log.0.display().to_string(),
            audit_error: outcome.audit_log.1.clone(),
        }
    }
}

/// The policy a sandbox is judged by: with a `--pods` file, nothing created after the file was
/// written (the file cannot know its pod), so the minimum age is at least the file's age.
fn effective_policy(pods_file: Option<&std::path::Path>, opts: &GcOptions) -> Policy {
    let mut policy = opts.policy.clone();
    if let Some(path) = pods_file {
        let age = pods_file_age(path);
        policy.min_age = policy.min_age.max(age);
    }
    policy
}

/// How long ago the pods file was last modified; [`Duration::MAX`] when that cannot be read.
fn pods_file_age(path: &std::path::Path) -> Duration {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .unwrap_or(Duration::MAX)
}

/// The exclusive lock of an acting run: `<state dir>/gc.lock`, `flock`ed (released when the
/// file is closed, so also when the process dies), holding the holder's pid and start time.
#[derive(Debug)]
pub struct StateLock {
    _file: std::fs::File,
}

/// Takes the state directory's GC lock without waiting.
///
/// # Errors
/// [`GcError::Locked`] when another process holds it, [`GcError::LockFailed`] when the file
/// cannot be created or locked.
pub fn lock_state_dir(state_dir: &std::path::Path) -> Result<StateLock, GcError> {
    let path = state_dir.join("gc.lock");
    let failed = |error| GcError::LockFailed {
        path: path.clone(),
        error,
    };
    std::fs::create_dir_all(state_dir).map_err(failed)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(failed)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "holder unknown".to_string());
            return Err(GcError::Locked { path, holder });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(failed(e)),
    }
    // Who holds it, for the refusal of a second run; best effort (a full disk must not stop a
    // run that could still audit: the audit write is the check that matters).
    let _ = file.set_len(0).and_then(|()| {
        write!(
            file,
            "pid {} since {}",
            std::process::id(),
            Timestamp::now()
                .round(jiff::Unit::Second)
                .unwrap_or_default()
        )
    });
    Ok(StateLock { _file: file })
}

/// The append-only audit log. The open error is kept: `run` refuses to act when the log cannot
/// be opened, and a dry run reports it.
struct Audit {
    path: PathBuf,
    file: Option<std::fs::File>,
    error: Option<String>,
}

impl Audit {
    fn open(path: &std::path::Path) -> Audit {
        let res = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
            });
        match res {
            Ok(file) => Audit {
                path: path.to_path_buf(),
                file: Some(file),
                error: None,
            },
            Err(e) => Audit {
                path: path.to_path_buf(),
                file: None,
                error: Some(format!("cannot open audit log {}: {e}", path.display())),
            },
        }
    }

    /// Writes one line and flushes it to disk (`fsync`). A failed write is truncated away so
    /// the log keeps whole lines.
    ///
    /// # Errors
    /// The log is not open, or the write or the flush failed; the message names the file.
    fn append(&mut self, record: &AuditRecord) -> Result<(), String> {
        let Some(file) = &mut self.file else {
            return Err(self
                .error
                .clone()
                .unwrap_or_else(|| "the audit log is not open".to_string()));
        };
        let mut line = serde_json::to_vec(record).unwrap_or_default();
        line.push(b'\n');
        let before = file.metadata().map(|m| m.len()).ok();
        if let Err(e) = file.write_all(&line).and_then(|()| file.sync_data()) {
            if let Some(len) = before {
                let _ = file.set_len(len);
            }
            let e = format!("cannot write the audit log {}: {e}", self.path.display());
            self.error = Some(e.clone());
            return Err(e);
        }
        Ok(())
    }
}

/// A duration for a person: `1h30m`, `45s`.
pub fn humanize(d: Duration) -> String {
    if d == Duration::MAX {
        return "unknown".to_string();
    }
    podcoroner_core::rules::human(
        jiff::SignedDuration::try_from(d).unwrap_or(jiff::SignedDuration::MAX),
    )
}
