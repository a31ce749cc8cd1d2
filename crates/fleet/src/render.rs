//! The table `podcoroner fleet` prints: the nodes' states, the findings grouped by kind (nodes
//! affected, worst severity, oldest first seen), then each node's findings, then the nodes not
//! read with the reason. Pure: the same report always gives the same text.

use std::fmt::Write as _;

use crate::report::{FleetReport, NodeStatus};

/// Renders `report` for a terminal. Control characters from the agents (a pod name with an ANSI
/// escape or a newline) are escaped, so they cannot fake or hide table lines.
pub fn table(report: &FleetReport) -> String {
    let mut out = String::new();
    let s = &report.summary;
    let _ = writeln!(
        out,
        "podcoroner fleet: daemonset {}/{} at {}",
        report.namespace, report.daemonset, report.generated_at
    );
    let mut states = vec![format!("{} read", s.read)];
    for (n, what) in [
        (s.no_agent, "no agent"),
        (s.not_ready, "agent not ready"),
        (s.unreachable, "agent unreachable"),
        (s.invalid_response, "invalid answer"),
    ] {
        if n > 0 {
            states.push(format!("{n} {what}"));
        }
    }
    let _ = writeln!(out, "NODES {}: {}", s.nodes, states.join(", "));
    let f = &report.filters;
    let mut filters = Vec::new();
    if let Some(sel) = &f.node_selector {
        filters.push(format!("nodes {sel}"));
    }
    if !f.kinds.is_empty() {
        filters.push(format!("kind {}", f.kinds.join(",")));
    }
    if let Some(sev) = f.severity {
        filters.push(format!("severity >= {}", sev.as_str()));
    }
    if !filters.is_empty() {
        let _ = writeln!(out, "FILTERS {}", filters.join("; "));
    }
    let _ = writeln!(out);

    if report.kinds.is_empty() {
        let _ = writeln!(
            out,
            "No open finding on the {} node(s) read.",
            report.summary.read
        );
    } else {
        let _ = writeln!(
            out,
            "FINDINGS BY KIND ({} critical, {} warning, {} info)",
            s.findings.critical, s.findings.warning, s.findings.info
        );
        let rows: Vec<[String; 5]> = report
            .kinds
            .iter()
            .map(|k| {
                [
                    k.kind.clone(),
                    k.nodes.to_string(),
                    k.findings.to_string(),
                    k.worst_severity.as_str().to_string(),
                    k.oldest_first_seen.to_string(),
                ]
            })
            .collect();
        columns(
            &mut out,
            ["KIND", "NODES", "FINDINGS", "WORST", "OLDEST FIRST SEEN"],
            &rows,
        );
        let _ = writeln!(out);
        let _ = writeln!(out, "FINDINGS BY NODE");
        for n in report
            .nodes
            .iter()
            .filter(|n| n.status == NodeStatus::Ok && !n.findings.is_empty())
        {
            let _ = writeln!(out, "{} ({} findings)", n.node, n.findings.len());
            for x in &n.findings {
                let _ = writeln!(
                    out,
                    "  {:<8} {}  {}  (first seen {})",
                    x.finding.severity.as_str(),
                    x.finding.kind,
                    podcoroner_node::render::one_line(&x.finding.summary),
                    x.first_seen
                );
            }
        }
    }
    let degraded: Vec<[String; 3]> = report
        .nodes
        .iter()
        .filter(|n| n.status == NodeStatus::Ok && !n.unhealthy_sources.is_empty())
        .map(|n| {
            [
                n.node.clone(),
                n.unhealthy_sources
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(","),
                n.unhealthy_sources
                    .values()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; "),
            ]
        })
        .collect();
    if !degraded.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "NODES READ WITH UNHEALTHY SOURCES (a finding there may be missing)"
        );
        columns(&mut out, ["NODE", "SOURCES", "LAST ERROR"], &degraded);
    }
    let unread: Vec<[String; 4]> = report
        .nodes
        .iter()
        .filter(|n| n.status != NodeStatus::Ok)
        .map(|n| {
            [
                n.node.clone(),
                n.status.as_str().to_string(),
                n.agent_pod.clone().unwrap_or_else(|| "-".to_string()),
                podcoroner_node::render::one_line(n.reason.as_deref().unwrap_or_default()),
            ]
        })
        .collect();
    if !unread.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "NODES NOT READ (their findings are unknown)");
        columns(&mut out, ["NODE", "STATUS", "AGENT POD", "REASON"], &unread);
    }
    podcoroner_node::render::clean(&out)
}

/// Left-aligned columns, the last one unpadded.
fn columns<const N: usize>(out: &mut String, header: [&str; N], rows: &[[String; N]]) {
    let mut width = header.map(|h| h.chars().count());
    for r in rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == N {
                l.push_str(c);
            } else {
                let _ = write!(l, "{c:<w$}  ", w = width[i]);
            }
        }
        let _ = writeln!(out, "{}", l.trim_end());
    };
    line(header.to_vec());
    for r in rows {
        line(r.iter().map(String::as_str).collect());
    }
}
