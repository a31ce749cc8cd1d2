//! The table `podcoroner diagnose` prints by default: sources, skipped rules, then findings
//! grouped by severity with their evidence and remediation.

use std::fmt::Write;

use podcoroner_core::Severity;

use crate::api::{DiagnosisReport, SourceState};

/// Renders `report` for a terminal. Pure: the same report always gives the same text.
pub fn table(report: &DiagnosisReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "podcoroner diagnose: node {} at {}", report.node, report.generated_at);
    let _ = writeln!(out);
    let _ = writeln!(out, "SOURCES");
    for (name, s) in &report.sources {
        let state = match s.status {
            Some(SourceState::Ok) => "ok",
            Some(SourceState::Unavailable) => "unavailable",
            Some(SourceState::Error) => "error",
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
            what.push(s.counts.iter().map(|(k, v)| format!("{v} {k}")).collect::<Vec<_>>().join(", "));
        }
        if let Some(d) = &s.detail {
            what.push(d.clone());
        }
        let _ = writeln!(out, "  {name:<10} {state:<12} {}", what.join("; "));
    }
    if !report.skipped_rules.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "SKIPPED RULES");
        for s in &report.skipped_rules {
            let part = if s.partial { " (in part)" } else { "" };
            let _ = writeln!(out, "  {}{part}: {}", s.kind, s.reason);
        }
    }
    for sev in [Severity::Critical, Severity::Warning, Severity::Info] {
        let group: Vec<_> = report.findings.iter().filter(|f| f.severity == sev).collect();
        if group.is_empty() {
            continue;
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "{} ({})", sev.as_str().to_uppercase(), group.len());
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
            let _ = writeln!(out, "{head}");
            let _ = writeln!(out, "    {}", f.summary);
            for e in &f.evidence {
                let _ = writeln!(out, "    {:<12} {}", format!("[{}]", e.source), e.detail);
            }
            let _ = writeln!(out, "    {:<12} {}", "kubelet:", f.kubelet_rule);
            let _ = writeln!(out, "    {:<12} {}", "fix:", f.remediation);
        }
    }
    let _ = writeln!(out);
    let s = &report.summary;
    let n = s.critical + s.warning + s.info;
    let _ = writeln!(
        out,
        "{n} finding{}: {} critical, {} warning, {} info",
        if n == 1 { "" } else { "s" },
        s.critical,
        s.warning,
        s.info
    );
    out
}
