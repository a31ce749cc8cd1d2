//! deploy/grafana's dashboard queries only metrics the agent exports: every metric name in every
//! panel's PromQL is one of the series `/metrics` writes, taken from the agent's own registry
//! (`Metrics::default().encode()`, its `# TYPE` lines), not from a list kept by hand.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

/// Every series name the agent's `/metrics` may write: a counter's `_total`, a histogram's
/// `_bucket`, `_sum` and `_count`, a gauge's own name. The registry writes a family only once
/// it holds a series, so each metric gets one first; the destructuring has no `..`, so a metric
/// added to `Metrics` does not compile here until it gets one too.
fn exported() -> BTreeSet<String> {
    use podcoroner_agent::metrics::{
        InfoLabels, KindLabels, Metrics, ResultLabels, RpcLabels, SourceLabels, StateLabels,
    };
    use podcoroner_agent::startup_metrics::PhaseLabels;
    let m = Metrics::default();
    let Metrics {
        registry: _,
        findings,
        sandboxes,
        containers,
        log_lines,
        log_unparsed,
        log_dropped,
        log_cut,
        log_unread,
        cri_duration,
        source_up,
        gc_actions,
        evaluations,
        gc_candidates,
        events,
        info,
        startup,
    } = &m;
    let kind = KindLabels {
        kind: "k".into(),
        severity: "s".into(),
    };
    let state = StateLabels { state: "s".into() };
    let source = SourceLabels { source: "s".into() };
    let result = ResultLabels { result: "r".into() };
    findings.get_or_create(&kind).set(1);
    sandboxes.get_or_create(&state).set(1);
    containers.get_or_create(&state).set(1);
    log_lines.get_or_create(&source).inc();
    log_unparsed.get_or_create(&source).inc();
    log_dropped.get_or_create(&source).inc();
    log_cut.get_or_create(&source).inc();
    log_unread.get_or_create(&source).inc();
    cri_duration
        .get_or_create(&RpcLabels { rpc: "r".into() })
        .observe(0.1);
    source_up.get_or_create(&source).set(1);
    gc_actions.get_or_create(&result).inc();
    evaluations.inc();
    gc_candidates.set(1);
    events.get_or_create(&result).inc();
    info.get_or_create(&InfoLabels {
        version: "v".into(),
        gc: "off".into(),
        events: "true".into(),
    })
    .set(1);
    startup
        .phase
        .get_or_create(&PhaseLabels { phase: "p".into() })
        .observe(1.0);
    startup.total.observe(1.0);
    let text = m.encode();
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let (name, kind) = rest.split_once(' ').unwrap();
        match kind {
            "counter" => {
                names.insert(format!("{name}_total"));
            }
            "histogram" => {
                for s in ["_bucket", "_sum", "_count"] {
                    names.insert(format!("{name}{s}"));
                }
            }
            _ => {
                names.insert(name.to_string());
            }
        }
    }
    assert!(
        names.contains("podcoroner_findings"),
        "no podcoroner_findings in {text}"
    );
    names
}

/// The metric names a PromQL expression reads: the identifiers left once strings, label
/// matchers (`{…}`), ranges (`[…]`), grouping clauses (`by (…)`, `without (…)`, `on (…)`,
/// `ignoring (…)`), function calls (a name before `(`), keywords and numbers are taken out.
fn metric_names(expr: &str) -> Vec<String> {
    let mut out = String::new();
    let mut chars = expr.chars().peekable();
    let mut depth_brace = 0;
    let mut depth_bracket = 0;
    let mut in_string = None;
    while let Some(c) = chars.next() {
        if let Some(q) = in_string {
            if c == '\\' {
                chars.next();
            } else if c == q {
                in_string = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => in_string = Some(c),
            '{' => depth_brace += 1,
            '}' => depth_brace -= 1,
            '[' => depth_bracket += 1,
            ']' => depth_bracket -= 1,
            _ if depth_brace > 0 || depth_bracket > 0 => {}
            _ => out.push(c),
        }
        if matches!(c, '{' | '[') {
            out.push(' ');
        }
    }
    // Identifiers, each with whether a `(` follows it.
    let chars: Vec<char> = out.chars().collect();
    let mut tokens: Vec<(String, bool, usize)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || matches!(chars[i], '_' | ':' | '$'))
            {
                i += 1;
            }
            let mut j = i;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            let called = j < chars.len() && chars[j] == '(';
            tokens.push((chars[start..i].iter().collect(), called, j));
        } else {
            i += 1;
        }
    }
    let grouping = [
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
    ];
    let operators = ["bool", "and", "or", "unless", "offset"];
    // Aggregation operators: `sum by (…) (…)` has its call after the clause.
    let aggregations = [
        "sum",
        "min",
        "max",
        "avg",
        "count",
        "group",
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "quantile",
        "count_values",
        "limitk",
        "limit_ratio",
    ];
    let mut names = Vec::new();
    let mut skip_until = 0;
    for (tok, called, paren) in tokens {
        let at = paren;
        if at <= skip_until && skip_until > 0 {
            continue;
        }
        if grouping.contains(&tok.as_str()) && called {
            // The label names up to the clause's `)`.
            skip_until = paren + chars[paren..].iter().position(|c| *c == ')').unwrap_or(0);
            continue;
        }
        if called
            || operators.contains(&tok.as_str())
            || aggregations.contains(&tok.as_str())
            || tok.starts_with('$')
            || tok.chars().next().unwrap().is_ascii_digit()
        {
            continue;
        }
        names.push(tok);
    }
    names
}

#[test]
fn the_extraction_finds_metrics_and_leaves_labels() {
    assert_eq!(
        metric_names(
            r#"sum by (node, kind) (increase(podcoroner_gc_actions_total{node=~"$node", result="x"}[$__rate_interval])) > 0 or podcoroner_info"#
        ),
        ["podcoroner_gc_actions_total", "podcoroner_info"]
    );
    assert_eq!(
        metric_names("count(min by (node) (up) == 1)"),
        ["up"],
        "a metric the agent does not export is found, to be refused"
    );
}

#[test]
fn every_dashboard_query_names_an_exported_metric() {
    let exported = exported();
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/grafana/podcoroner-fleet.json");
    let dash: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut exprs = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().into_iter().flatten() {
            exprs.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    for v in dash["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["definition"].as_str() {
            exprs.push(
                q.trim_start_matches("label_values(")
                    .split(',')
                    .next()
                    .unwrap()
                    .to_string(),
            );
        }
    }
    assert!(exprs.len() >= 12, "only {} queries", exprs.len());
    let mut used = BTreeSet::new();
    for e in &exprs {
        let names = metric_names(e);
        assert!(!names.is_empty(), "no metric in {e:?}");
        for n in names {
            assert!(
                exported.contains(&n),
                "{e:?} reads {n}, which the agent does not export (it exports {exported:?})"
            );
            used.insert(n);
        }
    }
    // The dashboard's purpose: findings, readiness, GC.
    for want in [
        "podcoroner_findings",
        "podcoroner_source_up",
        "podcoroner_gc_actions_total",
        "podcoroner_info",
    ] {
        assert!(used.contains(want), "no panel reads {want}");
    }
}
