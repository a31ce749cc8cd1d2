//! The table `podcoroner diagnose` prints by default: sources, skipped rules, then findings
//! grouped by severity with their evidence and remediation.

use std::fmt::Write;

use podcoroner_core::Severity;

use crate::api::{DiagnosisReport, SourceState};

/// Renders `report` for a terminal. Pure: the same report always gives the same text.
///
/// Control characters from the node (a sandbox name with an ANSI escape or a newline) are
/// escaped, so they cannot fake or hide table lines.
pub fn table(report: &DiagnosisReport) -> String {
    clean(&table_raw(report))
}

/// Escapes every control character but the newlines the renderer itself writes.
pub fn clean(text: &str) -> String {
    text.split('\n')
        .map(|line| {
            line.chars()
                .flat_map(|c| {
                    if c.is_control() {
                        c.escape_default().collect::<Vec<_>>()
                    } else {
                        vec![c]
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Escapes newlines inside one value, which [`clean`] would otherwise keep.
pub fn one_line(value: &str) -> String {
    value.replace('\n', "\\n").replace('\r', "\\r")
}

/// What a table names as the node of a report whose `node` is empty: `diagnose --offline` and
/// `explain --offline` without `--node-name`, whose logs may come from any node.
pub const UNNAMED_NODE: &str = "unknown (--offline reads logs only: --node-name names their node)";

/// The node a table names: the report's, or [`UNNAMED_NODE`].
fn node_named(node: &str) -> &str {
    if node.is_empty() { UNNAMED_NODE } else { node }
}

fn table_raw(report: &DiagnosisReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "podcoroner diagnose: node {} at {}",
        node_named(&report.node),
        report.generated_at
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "SOURCES");
    let width = report.sources.keys().map(String::len).max().unwrap_or(0);
    let mut not_understood = Vec::new();
    for (name, s) in &report.sources {
        let state = match s.status {
            Some(SourceState::Ok) => "ok",
            Some(SourceState::Unavailable) => "unavailable",
            Some(SourceState::Error) => "error",
            Some(SourceState::NotUnderstood) => "NOT UNDERSTOOD",
            Some(SourceState::Degraded) => "degraded",
            None => "-",
        };
        let mut what = Vec::new();
        if let (Some(n), Some(v)) = (&s.runtime_name, &s.runtime_version) {
            what.push(format!("{n} {v}"));
        }
        if let Some(api) = &s.cri_api_version {
            what.push(format!("CRI {api}"));
        }
        if let Some(e) = s.endpoint.as_ref().or(s.path.as_ref()) {
            what.push(e.clone());
        }
        if !s.counts.is_empty() {
            what.push(
                s.counts
                    .iter()
                    .map(|(k, v)| format!("{v} {k}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        if let Some(d) = &s.detail {
            what.push(d.clone());
        }
        let _ = writeln!(out, "  {name:<width$}  {state:<12} {}", what.join("; "));
        if s.status == Some(SourceState::NotUnderstood) {
            not_understood.push(name.as_str());
        }
    }
    if !report.skipped_rules.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "SKIPPED RULES");
        for s in &report.skipped_rules {
            let part = if s.partial { " (in part)" } else { "" };
            let _ = writeln!(out, "  {}{part}: {}", s.kind, s.reason);
        }
    }
    if let Some(y) = &report.too_young {
        let _ = writeln!(out);
        let _ = writeln!(out, "NOT JUDGED YET");
        let parts: Vec<String> = y
            .counts
            .iter()
            .map(|(k, v)| format!("{v} {}", k.replace('_', " ")))
            .collect();
        let _ = writeln!(
            out,
            "  {} object{} younger than --min-age {} ({}): all judged from {}; --min-age 0s judges them now",
            y.count,
            if y.count == 1 { "" } else { "s" },
            crate::gc::humanize(std::time::Duration::from_secs(y.min_age_seconds)),
            parts.join(", "),
            y.until.round(jiff::Unit::Second).unwrap_or(y.until)
        );
    }
    not_judged_block(&mut out, &report.not_judged);
    if !report.startup_profile.is_empty() {
        let _ = writeln!(out);
        let ends = match report.startup_profile.iter().find(|r| r.phase == "total") {
            Some(t) if t.to_running == t.pods => "running, no Ready seen".to_string(),
            Some(t) if t.to_running > 0 => format!(
                "Ready, or running for the {} of {} with no Ready seen",
                t.to_running, t.pods
            ),
            _ => "Ready".to_string(),
        };
        let _ = writeln!(out, "STARTUP PROFILE (per phase; total: bound to {ends})");
        let _ = writeln!(
            out,
            "  {:<16} {:>5} {:>9} {:>9} {:>9}",
            "phase", "pods", "p50", "p90", "max"
        );
        for r in &report.startup_profile {
            let _ = writeln!(
                out,
                "  {:<16} {:>5} {:>8.1}s {:>8.1}s {:>8.1}s",
                r.phase, r.pods, r.p50_seconds, r.p90_seconds, r.max_seconds
            );
        }
    }
    for sev in [Severity::Critical, Severity::Warning, Severity::Info] {
        let group: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity == sev)
            .collect();
        // Every finding of the severity, listed or past --max-findings-per-kind.
        let total = report.summary.of(sev);
        if total == 0 && group.is_empty() {
            continue;
        }
        let _ = writeln!(out);
        if total == group.len() {
            let _ = writeln!(out, "{} ({total})", sev.as_str().to_uppercase());
        } else {
            let _ = writeln!(
                out,
                "{} ({} of {total} listed; the rest under NOT LISTED)",
                sev.as_str().to_uppercase(),
                group.len()
            );
        }
        for f in group {
            let mut head = format!("  {}", f.kind);
            if let Some(p) = &f.pod {
                if p.name.is_empty() {
                    let _ = write!(head, "  pod uid {}", p.uid);
                } else {
                    let _ = write!(head, "  {}/{}", p.namespace, p.name);
                }
            }
            if let Some(id) = &f.container_id {
                let _ = write!(head, "  container {}", podcoroner_core::rules::short(id));
            } else if let Some(id) = &f.sandbox_id {
                let _ = write!(head, "  sandbox {}", podcoroner_core::rules::short(id));
            }
            if f.gc_eligible {
                head.push_str("  [gc-eligible]");
            }
            let _ = writeln!(out, "{}", one_line(&head));
            let _ = writeln!(out, "    {}", one_line(&f.summary));
            for e in &f.evidence {
                let _ = writeln!(
                    out,
                    "    {:<12} {}",
                    format!("[{}]", e.source),
                    one_line(&e.detail)
                );
            }
            let _ = writeln!(out, "    {:<12} {}", "kubelet:", f.kubelet_rule);
            let _ = writeln!(out, "    {:<12} {}", "fix:", one_line(&f.remediation));
        }
    }
    if !report.omitted.is_empty() {
        let _ = writeln!(out);
        let n: usize = report.omitted.iter().map(|o| o.count).sum();
        let _ = writeln!(
            out,
            "NOT LISTED ({n}: past the findings listed per kind; --max-findings-per-kind 0 lists all)"
        );
        for o in &report.omitted {
            let _ = writeln!(
                out,
                "  {:<26} {} more after the first {} ({} critical, {} warning, {} info; {} pod{})",
                o.kind,
                o.count,
                o.listed,
                o.summary.critical,
                o.summary.warning,
                o.summary.info,
                o.pods,
                if o.pods == 1 { "" } else { "s" },
            );
        }
    }
    let _ = writeln!(out);
    let s = &report.summary;
    let n = s.total();
    let _ = writeln!(
        out,
        "{n} finding{}: {} critical, {} warning, {} info",
        if n == 1 { "" } else { "s" },
        s.critical,
        s.warning,
        s.info
    );
    if !not_understood.is_empty() {
        let _ = writeln!(
            out,
            "not a clean bill: {} not understood (see SOURCES); what it holds was not judged",
            not_understood.join(", ")
        );
    }
    // A log read in part (a rotation left out, a `.gz` cut short): what was not read was not
    // judged, whatever the count says.
    let in_part: Vec<&str> = report
        .sources
        .iter()
        .filter(|(_, s)| s.counts.get("skipped_files").is_some_and(|&n| n > 0))
        .map(|(name, _)| name.as_str())
        .collect();
    if !in_part.is_empty() {
        let _ = writeln!(
            out,
            "not a clean bill: {} read in part (see SOURCES); what was left out was not judged",
            in_part.join(", ")
        );
    }
    // Logs of more than one node judged as one: a finding of one may be hidden by another's
    // records.
    let hosts: Vec<&str> = report
        .sources
        .iter()
        .filter(|(_, s)| s.counts.get("hosts").is_some_and(|&n| n > 1))
        .map(|(name, _)| name.as_str())
        .collect();
    if !hosts.is_empty() {
        let _ = writeln!(
            out,
            "not a clean bill: {} name more than one host (see SOURCES): several nodes' logs were judged as one node's",
            hosts.join(", ")
        );
    }
    if !report.not_judged.is_empty() {
        let n = report.not_judged.len();
        let _ = writeln!(
            out,
            "not a clean bill: {n} pasted sandbox{} read but not judged (see NOT JUDGED)",
            if n == 1 { "" } else { "es" }
        );
    }
    out
}

/// The NOT JUDGED block: each pasted sandbox read but not judged, with why (at most
/// [`NOT_JUDGED_SHOWN`], then how many more).
fn not_judged_block(out: &mut String, items: &[podcoroner_core::pasted::NotJudged]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "NOT JUDGED");
    for n in items.iter().take(NOT_JUDGED_SHOWN) {
        let pod = if n.pod.is_empty() {
            String::new()
        } else {
            format!(" of {}", n.pod)
        };
        let _ = writeln!(
            out,
            "  pod sandbox {}{pod} ({}): {}",
            podcoroner_core::rules::short(&n.sandbox_id),
            n.at,
            one_line(&n.why)
        );
    }
    if items.len() > NOT_JUDGED_SHOWN {
        let _ = writeln!(
            out,
            "  … and {} more (-o json lists them all)",
            items.len() - NOT_JUDGED_SHOWN
        );
    }
}

/// How many not-judged sandboxes the table lists.
const NOT_JUDGED_SHOWN: usize = 10;

/// Renders a `gc` report for a terminal, control characters escaped as in [`table`].
pub fn gc_table(report: &crate::api::GcReport) -> String {
    clean(&gc_table_raw(report))
}

fn gc_table_raw(report: &crate::api::GcReport) -> String {
    let mut out = String::new();
    let mode = if report.dry_run {
        "dry run: nothing is changed (pass --apply to act)"
    } else {
        "applying"
    };
    let _ = writeln!(out, "podcoroner gc: node {}, {mode}", report.node);
    let _ = writeln!(out, "API view: {}", report.api_origin);
    if let Some(r) = &report.refused {
        let _ = writeln!(out, "\nNOTHING IS ELIGIBLE: {r}");
    }
    let pod = |p: &crate::api::PodView| format!("{}/{}", p.namespace, p.name);
    if report.dry_run {
        let _ = writeln!(out, "\nWOULD REMOVE ({})", report.removals.len());
        for r in &report.removals {
            let _ = writeln!(
                out,
                "  crictl stopp {id} && crictl rmp {id}",
                id = r.sandbox_id
            );
            let _ = writeln!(out, "    {}: {}", pod(&r.pod), r.reason);
        }
    } else {
        let acted: Vec<_> = report
            .results
            .iter()
            .filter(|r| r.result != "held")
            .collect();
        let _ = writeln!(out, "\nACTIONS ({})", acted.len());
        for r in acted {
            let _ = writeln!(
                out,
                "  {:<13} {}  {}/{}{}",
                r.result,
                r.sandbox_id,
                r.pod.namespace,
                r.pod.name,
                r.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
            );
        }
    }
    if !report.held.is_empty() {
        let _ = writeln!(out, "\nHELD BACK ({})", report.held.len());
        for h in &report.held {
            let _ = writeln!(out, "  {}  {}: {}", h.sandbox_id, pod(&h.pod), h.reason);
        }
    }
    for f in &report.findings {
        let _ = writeln!(
            out,
            "\n{} {}\n    fix: {}",
            f.kind, f.summary, f.remediation
        );
    }
    match &report.audit_error {
        Some(e) => {
            let _ = writeln!(out, "\naudit log NOT written: {e}");
        }
        None => {
            let _ = writeln!(out, "\naudit log: {}", report.audit_log);
        }
    }
    out
}

/// Renders a pod's timeline for a terminal: one line per entry, `time  [source]  what  detail`.
pub fn timeline_table(report: &crate::api::TimelineReport) -> String {
    let mut out = String::new();
    let pods: Vec<String> = report
        .pods
        .iter()
        .map(|p| {
            format!(
                "{}/{}{}",
                p.namespace,
                p.name,
                if p.uid.is_empty() {
                    String::new()
                } else {
                    format!(" (uid {})", p.uid)
                }
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "podcoroner explain {}: node {}",
        report.query,
        node_named(&report.node)
    );
    let _ = writeln!(
        out,
        "pod: {}",
        if pods.is_empty() {
            "not found".to_string()
        } else {
            pods.join(", ")
        }
    );
    let _ = writeln!(out, "ids: {}", report.ids.join(" "));
    let _ = writeln!(out);
    for e in &report.entries {
        let time = e.time.map_or("-".repeat(24), |t| {
            t.strftime("%Y-%m-%d %H:%M:%S%.3f").to_string()
        });
        let _ = writeln!(
            out,
            "{time}  {:<13} {:<28} {}",
            format!("[{}]", e.source),
            e.what,
            one_line(&e.detail)
        );
        if let Some(o) = &e.origin {
            let _ = writeln!(out, "{:<24}  {:<13} {:<28} ({o})", "", "", "");
        }
    }
    let _ = writeln!(out, "\n{} entries", report.entries.len());
    for st in &report.startup {
        let _ = writeln!(
            out,
            "\nSTARTUP {}/{}: {}{}",
            st.pod.namespace,
            st.pod.name,
            st.total_seconds
                .map_or("bound to ready unknown".to_string(), |t| format!(
                    "{t:.1}s from bound to {}",
                    if st.ready_is_ready {
                        "Ready"
                    } else {
                        "running"
                    }
                )),
            st.dominant
                .as_deref()
                .map_or(String::new(), |d| format!(", dominant phase {d}"))
        );
        for p in &st.phases {
            let edge = |e: &crate::api::EdgeView| {
                format!("{} ({})", e.what, e.origin.as_deref().unwrap_or(&e.source))
            };
            let _ = writeln!(
                out,
                "  {:<16} {:>8.1}s  {} -> {}",
                p.phase,
                p.seconds,
                edge(&p.start),
                edge(&p.end)
            );
        }
        if let Some(k) = &st.kubelet {
            let _ = writeln!(
                out,
                "  kubelet: podStartSLOduration {} podStartE2EDuration {} ({})",
                k.slo_seconds
                    .map_or("-".to_string(), |v| format!("{v:.3}s")),
                k.e2e_seconds
                    .map_or("-".to_string(), |v| format!("{v:.3}s")),
                k.origin
            );
        }
    }
    clean(&out)
}
