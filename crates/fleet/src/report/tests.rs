use super::*;
use serde_json::json;

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

/// An agent's `/findings` body with `findings` as (kind, severity, first_seen, resolved).
fn agent(node: &str, findings: &[(&str, &str, &str, bool)]) -> FindingsReport {
    let findings: Vec<serde_json::Value> = findings
        .iter()
        .map(|(kind, severity, first_seen, resolved)| {
            json!({
                "kind": kind, "severity": severity, "summary": format!("{kind} on {node}"),
                "pod": null, "sandbox_id": null, "container_id": null, "path": null,
                "evidence": [], "kubelet_rule": "r", "remediation": "fix", "gc_eligible": false,
                "first_seen": first_seen, "last_seen": "2026-12-01T12:00:00Z",
                "resolved_at": if *resolved { json!("2026-12-01T11:00:00Z") } else { json!(null) },
                "misses": 0, "state": if *resolved { "resolved" } else { "open" },
            })
        })
        .collect();
    serde_json::from_value(json!({
        "schema": "podcoroner.diagnosis/v1", "node": node, "generated_at": "2026-12-01T12:00:01Z",
        "sources": {
            "cri": {"healthy": true, "since": "2026-12-01T10:00:00Z", "last_success": "2026-12-01T12:00:00Z", "last_error": null, "detail": "3 sandboxes"},
            "apiserver": {"healthy": false, "since": "2026-12-01T11:00:00Z", "last_success": null, "last_error": "error: connection refused", "detail": null},
        },
        "skipped_rules": [], "summary": {"critical": 0, "warning": 0, "info": 0},
        "findings": findings,
    }))
    .unwrap()
}

type Spec<'a> = &'a [(&'a str, &'a str, &'a str, bool)];

fn read(node: &str, f: Spec<'_>) -> NodeOutcome {
    NodeOutcome {
        node: node.to_string(),
        agent_pod: Some(format!("podcoroner-{node}")),
        outcome: Outcome::Read(Box::new(agent(node, f))),
    }
}

fn outcomes() -> Vec<NodeOutcome> {
    vec![
        read(
            "b",
            &[
                ("LeakedSandbox", "warning", "2026-12-01T09:00:00Z", false),
                ("LeakedSandbox", "warning", "2026-12-01T08:00:00Z", false),
                ("FindContainerRace", "info", "2026-12-01T07:00:00Z", false),
            ],
        ),
        read(
            "a",
            &[
                ("LeakedSandbox", "warning", "2026-12-01T10:00:00Z", false),
                (
                    "StaticPodNotRemoved",
                    "critical",
                    "2026-12-01T11:00:00Z",
                    false,
                ),
                ("OrphanedContainer", "warning", "2026-11-30T10:00:00Z", true),
            ],
        ),
        read("c", &[]),
        NodeOutcome {
            node: "d".into(),
            agent_pod: None,
            outcome: Outcome::NotRead(NodeStatus::NoAgent, "no pod".into()),
        },
        NodeOutcome {
            node: "0-first".into(),
            agent_pod: Some("podcoroner-x".into()),
            outcome: Outcome::NotRead(NodeStatus::Unreachable, "refused".into()),
        },
    ]
}

fn report(filters: Filters) -> FleetReport {
    FleetReport::new(
        "podcoroner",
        "podcoroner",
        filters,
        outcomes(),
        at("2026-12-01T12:00:02Z"),
    )
}

#[test]
fn kinds_count_nodes_and_findings_with_worst_and_oldest() {
    let r = report(Filters::default());
    let kinds: Vec<(&str, usize, usize, Severity, String)> = r
        .kinds
        .iter()
        .map(|k| {
            (
                k.kind.as_str(),
                k.nodes,
                k.findings,
                k.worst_severity,
                k.oldest_first_seen.to_string(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (
                "LeakedSandbox",
                2,
                3,
                Severity::Warning,
                "2026-12-01T08:00:00Z".to_string()
            ),
            (
                "StaticPodNotRemoved",
                1,
                1,
                Severity::Critical,
                "2026-12-01T11:00:00Z".to_string()
            ),
            (
                "FindContainerRace",
                1,
                1,
                Severity::Info,
                "2026-12-01T07:00:00Z".to_string()
            ),
        ],
        "the resolved OrphanedContainer is not shown"
    );
    assert_eq!(r.max_severity(), Some(Severity::Critical));
    let s = r.summary;
    assert_eq!(
        (s.nodes, s.read, s.no_agent, s.unreachable, s.not_ready),
        (5, 3, 1, 1, 0)
    );
    assert_eq!(
        (s.findings.critical, s.findings.warning, s.findings.info),
        (1, 3, 1)
    );
}

#[test]
fn nodes_read_come_first_worst_first_then_the_unread_by_name() {
    let r = report(Filters::default());
    let order: Vec<(&str, &str)> = r
        .nodes
        .iter()
        .map(|n| (n.node.as_str(), n.status.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            ("a", "ok"),
            ("b", "ok"),
            ("c", "ok"),
            ("0-first", "unreachable"),
            ("d", "no_agent")
        ]
    );
    let b = &r.nodes[1];
    let firsts: Vec<String> = b
        .findings
        .iter()
        .map(|f| f.first_seen.to_string())
        .collect();
    assert_eq!(
        firsts,
        [
            "2026-12-01T08:00:00Z",
            "2026-12-01T09:00:00Z",
            "2026-12-01T07:00:00Z"
        ],
        "warning oldest first, then info"
    );
    assert_eq!(
        b.unhealthy_sources.get("apiserver").map(String::as_str),
        Some("error: connection refused")
    );
    assert_eq!(
        r.nodes[2].summary,
        Some(Summary::default()),
        "a node read with nothing is zero"
    );
    assert_eq!(
        r.nodes[3].summary, None,
        "a node not read is unknown, not zero"
    );
}

#[test]
fn filters_keep_kinds_and_severities_at_or_above() {
    let r = report(Filters {
        severity: Some(Severity::Warning),
        ..Filters::default()
    });
    assert!(r.kinds.iter().all(|k| k.kind != "FindContainerRace"));
    assert_eq!(r.summary.findings.info, 0);
    assert_eq!(r.summary.findings.warning, 3);
    let r = report(Filters {
        kinds: vec!["StaticPodNotRemoved".into()],
        ..Filters::default()
    });
    assert_eq!(r.kinds.len(), 1);
    assert_eq!(r.nodes[0].node, "a");
    assert_eq!(
        r.nodes[1].summary,
        Some(Summary::default()),
        "b has none of that kind"
    );
}

#[test]
fn node_diagnosis_is_what_diagnose_renders() {
    let a = agent(
        "a",
        &[
            ("LeakedSandbox", "warning", "2026-12-01T10:00:00Z", false),
            ("OrphanedContainer", "warning", "2026-12-01T10:00:00Z", true),
        ],
    );
    let d = node_diagnosis(&a, &Filters::default());
    assert_eq!(d.schema, "podcoroner.diagnosis/v1");
    assert_eq!(d.findings.len(), 1);
    assert_eq!(d.summary.warning, 1);
    assert!(d.sources["cri"].is_ok());
    assert_eq!(
        d.sources["apiserver"].detail.as_deref(),
        Some("error: connection refused")
    );
    let text = podcoroner_node::render::table(&d);
    assert!(
        text.starts_with("podcoroner diagnose: node a at 2026-12-01T12:00:01Z"),
        "{text}"
    );
    assert!(text.contains("LeakedSandbox on a"), "{text}");
}

#[test]
fn table_groups_by_kind_then_node_and_lists_the_unread() {
    let r = report(Filters::default());
    expect_test::expect_file!["table.txt"].assert_eq(&crate::render::table(&r));
}

#[test]
fn json_round_trips_with_the_schema_name() {
    let r = report(Filters::default());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["schema"], "podcoroner.fleet/v1");
    assert_eq!(v["nodes"][3]["summary"], serde_json::Value::Null);
    assert_eq!(v["nodes"][3]["status"], "unreachable");
    let back: FleetReport = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}
