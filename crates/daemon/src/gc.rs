//! `podcoroner gc`: removes the pod sandboxes the kubelet's GC should have removed, through the
//! CRI exactly as the kubelet does (`StopPodSandbox`, which runs the CNI teardown and frees the
//! IP, then `RemovePodSandbox`; NotFound counts as done), and nothing else.
//!
//! Eligibility is `podcoroner_core::gc`; this module adds the I/O: reading the node, checking
//! eligibility again on a fresh view right before each action, the rate limit, and the audit log
//! (`<state dir>/gc-audit.jsonl`, one JSON object per line, documented in `docs/gc.md`).

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use jiff::Timestamp;
use podcoroner_core::gc::{self, Plan, Policy};
use podcoroner_core::{Finding, PodRef};
use podcoroner_cri::RuntimeClient;
use serde::{Deserialize, Serialize};

use crate::gather::{self, Gathered, SourceOptions};
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
    /// Where the audit log lives (`--state-dir`, default `/var/lib/podcoroner`).
    pub state_dir: PathBuf,
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// When, RFC 3339.
    pub time: Timestamp,
    /// The node.
    pub node: String,
    /// The pod sandbox ID.
    pub sandbox_id: String,
    /// Its pod.
    pub pod: PodRef,
    /// Why it was a candidate: the `LeakedSandbox` summary.
    pub rule: String,
    /// `planned` (dry run), `removed`, `already_gone`, `skipped` (no longer eligible at
    /// re-check), `held` (policy), `stop_failed`, `remove_failed`.
    pub result: String,
    /// The error or the reason, for every result but `planned` and `removed`.
    pub error: Option<String>,
    /// For `stop_failed`: the classified cause (`SandboxStopFailing`).
    pub error_class: Option<String>,
    /// True for a dry run.
    pub dry_run: bool,
}

/// What one run did.
#[derive(Debug, Clone)]
pub struct GcOutcome {
    /// The node.
    pub node: String,
    /// The plan made from the first view.
    pub plan: Plan,
    /// Every audited record of this run, in order.
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

/// Plans, and with [`GcOptions::apply`] acts.
///
/// # Errors
/// Reading the node failed (as `diagnose`), or with `--apply` the audit log cannot be written
/// (nothing is done without a record).
pub async fn run(sources: &SourceOptions, opts: &GcOptions) -> anyhow::Result<GcOutcome> {
    let first = gather::gather(sources).await?;
    let now = Timestamp::now();
    let selector = opts.selector_reason();
    let mut plan = gc::plan(&first.view, &opts.policy, &selector, now);
    let mut api_origin = first
        .view
        .api
        .as_ref()
        .map_or("none".to_string(), |a| a.origin.clone());
    if let Some(path) = &sources.pods_file {
        let age = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .unwrap_or(Duration::MAX);
        api_origin = format!("{api_origin}, {} old", humanize(age));
        if age > opts.policy.min_age && plan.refused.is_none() {
            plan.refused = Some(format!(
                "the pods file {} is {} old, older than --gc-min-age {}: it cannot prove a pod is gone",
                path.display(),
                humanize(age),
                humanize(opts.policy.min_age)
            ));
            plan.removals.clear();
        }
    }

    let audit_path = opts.state_dir.join("gc-audit.jsonl");
    let mut audit = Audit::open(&audit_path);
    if opts.apply
        && let Some(e) = &audit.error
    {
        anyhow::bail!("refusing to act without an audit log: {e} (set --state-dir)");
    }
    let node = first.view.node_name.clone();
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
        let endpoint = first
            .runtime
            .as_ref()
            .map(|r| r.endpoint.clone())
            .context("no CRI runtime")?;
        let client = RuntimeClient::connect(&endpoint, sources.timeout).await?;
        let pause = Duration::from_secs_f64(60.0 / f64::from(opts.rate_per_minute.max(1)));
        for (i, r) in plan.removals.iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(pause).await;
            }
            // Check again on a fresh view: the node may have changed since planning.
            let fresh: Gathered = gather::gather(sources).await?;
            if let Err(reason) = gc::still_eligible(
                &fresh.view,
                &r.sandbox_id,
                &opts.policy,
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
                audit.append(records.last().unwrap());
                continue;
            }
            let sandbox = fresh
                .view
                .cri
                .as_ref()
                .and_then(|c| c.sandboxes.iter().find(|s| s.id == r.sandbox_id))
                .cloned()
                .context("sandbox vanished between re-check and action")?;
            let rec = match client.stop_sandbox(&r.sandbox_id).await {
                Err(e) if !e.is_not_found() => {
                    let finding = podcoroner_core::rules::sandbox_stop_failing(
                        &sandbox,
                        &e.to_string(),
                        "podcoroner gc",
                    );
                    let class = Some(
                        podcoroner_core::rules::stop_failure_class(&e.to_string())
                            .0
                            .to_string(),
                    );
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
            audit.append(records.last().unwrap());
        }
    }
    if !opts.apply {
        for r in &records {
            audit.append(r);
        }
    } else {
        for r in records.iter().filter(|r| r.result == "held") {
            audit.append(r);
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

/// The append-only audit log. A write error is kept, not raised: `run` refuses to act when the
/// log cannot be opened, and a dry run reports it.
struct Audit {
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
                file: Some(file),
                error: None,
            },
            Err(e) => Audit {
                file: None,
                error: Some(format!("cannot open audit log {}: {e}", path.display())),
            },
        }
    }

    fn append(&mut self, record: &AuditRecord) {
        let Some(file) = &mut self.file else { return };
        let mut line = serde_json::to_vec(record).unwrap_or_default();
        line.push(b'\n');
        if let Err(e) = file.write_all(&line).and_then(|()| file.sync_data()) {
            self.error = Some(format!("writing the audit log: {e}"));
        }
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
