//! The read-only HTTP status endpoint (axum): `/healthz`, `/readyz`, `/findings`,
//! `/pods/{uid}/timeline`, `/metrics`, `/`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Json, Response};
use axum::routing::get;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Shared, SourceHealth, lock};
use crate::store::Tracked;
use podcoroner_node::api::{SCHEMA, SkippedRuleView, Summary, TimelineReport};

/// The router of every endpoint.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/findings", get(findings))
        .route("/pods/{uid}/timeline", get(timeline))
        .route("/metrics", get(metrics))
        .route("/", get(index))
        .with_state(shared)
}

/// `/readyz`'s body.
#[derive(Debug, Serialize, Deserialize)]
pub struct Readiness {
    /// True when every enabled source is healthy.
    pub ready: bool,
    /// Each source's health.
    pub sources: BTreeMap<String, SourceHealthView>,
}

/// A source's health in `/readyz`.
#[derive(Debug, Serialize, Deserialize)]
pub struct SourceHealthView {
    /// True when the last read succeeded.
    pub healthy: bool,
    /// Since when it has been in this state.
    pub since: Timestamp,
    /// The last successful read.
    pub last_success: Option<Timestamp>,
    /// The last error, while unhealthy.
    pub last_error: Option<String>,
    /// What the last read saw, while healthy (while unhealthy, `last_error` says it).
    pub detail: Option<String>,
    /// What the last successful read saw, while unhealthy: the records, counts and times read
    /// before the source failed, never shown as if read now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_success_detail: Option<String>,
}

impl From<&SourceHealth> for SourceHealthView {
    fn from(h: &SourceHealth) -> Self {
        let healthy = h.healthy();
        let line = podcoroner_node::gather::status_line(&h.status);
        SourceHealthView {
            healthy,
            since: h.since,
            last_success: h.last_success,
            last_error: (!healthy).then_some(line),
            detail: healthy.then(|| h.last_success_detail.clone()).flatten(),
            last_success_detail: (!healthy).then(|| h.last_success_detail.clone()).flatten(),
        }
    }
}

/// The sources that must be healthy for `/readyz`: the CRI, the files, the API unless disabled,
/// and the logs that are configured.
pub fn enabled_sources(shared: &Shared) -> Vec<&'static str> {
    let o = &shared.options.sources;
    // `state`: the state directory, judged at each save of the findings store.
    let mut v = vec!["cri", "manifests", "pod_dirs", "state"];
    if !o.no_apiserver || o.pods_file.is_some() {
        v.push("apiserver");
    }
    if o.manifest_url.is_some() {
        v.push("manifest_url");
    }
    if !o.kubelet_logs.is_empty() {
        v.push("kubelet_log");
    }
    if !o.runtime_logs.is_empty() {
        v.push("runtime_log");
    }
    v
}

/// The readiness of every enabled source; a source never read yet is not ready.
pub fn readiness(shared: &Shared) -> Readiness {
    let health = lock(&shared.health);
    let mut sources = BTreeMap::new();
    let mut ready = true;
    for name in enabled_sources(shared) {
        match health.get(name) {
            Some(h) => {
                ready &= h.healthy();
                sources.insert(name.to_string(), SourceHealthView::from(h));
            }
            None => {
                ready = false;
                sources.insert(
                    name.to_string(),
                    SourceHealthView {
                        healthy: false,
                        since: shared.started,
                        last_success: None,
                        last_error: Some("not read yet".to_string()),
                        detail: None,
                        last_success_detail: None,
                    },
                );
            }
        }
    }
    Readiness { ready, sources }
}

async fn readyz(State(shared): State<Arc<Shared>>) -> Response {
    let r = readiness(&shared);
    let code = if r.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(r)).into_response()
}

/// `/findings` query parameters; any other key is a 400 naming it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingsQuery {
    /// Only this kind.
    pub kind: Option<String>,
    /// Only this severity.
    pub severity: Option<String>,
    /// Only pods of this namespace.
    pub namespace: Option<String>,
    /// `open` (default: both) or `resolved`.
    pub state: Option<String>,
}

/// `/findings`'s body: the `podcoroner.diagnosis/v1` schema, each finding with its history.
#[derive(Debug, Serialize, Deserialize)]
pub struct FindingsReport {
    /// Always `podcoroner.diagnosis/v1`.
    pub schema: String,
    /// The node.
    pub node: String,
    /// When this answer was made.
    pub generated_at: Timestamp,
    /// Each source's health.
    pub sources: BTreeMap<String, SourceHealthView>,
    /// Rules skipped by the last evaluation.
    pub skipped_rules: Vec<SkippedRuleView>,
    /// Counts of the findings returned, per severity.
    pub summary: Summary,
    /// The findings with `first_seen`, `last_seen`, `resolved_at` and `state`.
    pub findings: Vec<TrackedView>,
}

/// A finding with its history and state.
#[derive(Debug, Serialize, Deserialize)]
pub struct TrackedView {
    /// The finding and its history.
    #[serde(flatten)]
    pub tracked: Tracked,
    /// `open` or `resolved`.
    pub state: String,
}

/// Errors a client can cause: an unknown filter value.
fn bad_request(msg: String) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(serde_json::json!({ "error": msg })),
    )
        .into_response()
}

async fn findings(
    State(shared): State<Arc<Shared>>,
    q: Result<Query<FindingsQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    // An unknown key (`?kinds=`) would otherwise be ignored and answer everything.
    let q = match q {
        Ok(Query(q)) => q,
        Err(e) => {
            return bad_request(format!(
                "{}: the keys are kind, severity, namespace and state",
                e.body_text()
            ));
        }
    };
    if let Some(k) = &q.kind
        && podcoroner_core::FindingKind::parse(k).is_none()
    {
        return bad_request(format!("unknown kind {k:?}"));
    }
    if let Some(s) = &q.severity
        && !["critical", "warning", "info"].contains(&s.as_str())
    {
        return bad_request(format!("unknown severity {s:?}: critical, warning or info"));
    }
    if let Some(s) = &q.state
        && !["open", "resolved"].contains(&s.as_str())
    {
        return bad_request(format!("unknown state {s:?}: open or resolved"));
    }
    Json(findings_report(&shared, &q)).into_response()
}

/// The findings matching `q`, critical first.
pub fn findings_report(shared: &Shared, q: &FindingsQuery) -> FindingsReport {
    let store = lock(&shared.store);
    let mut list: Vec<TrackedView> = store
        .findings
        .values()
        .filter(|t| q.kind.as_ref().is_none_or(|k| &t.finding.kind == k))
        .filter(|t| {
            q.severity
                .as_ref()
                .is_none_or(|s| t.finding.severity.as_str() == s)
        })
        .filter(|t| {
            q.namespace
                .as_ref()
                .is_none_or(|ns| t.finding.pod.as_ref().is_some_and(|p| &p.namespace == ns))
        })
        .filter(|t| q.state.as_ref().is_none_or(|s| t.state() == s))
        .map(|t| TrackedView {
            tracked: t.clone(),
            state: t.state().to_string(),
        })
        .collect();
    list.sort_by(|a, b| {
        b.tracked
            .finding
            .severity
            .cmp(&a.tracked.finding.severity)
            .then(a.tracked.first_seen.cmp(&b.tracked.first_seen))
    });
    let summary: Summary = list
        .iter()
        .filter(|t| t.state == "open")
        .map(|t| t.tracked.finding.severity)
        .collect();
    FindingsReport {
        schema: SCHEMA.to_string(),
        node: shared.node.clone(),
        generated_at: Timestamp::now(),
        sources: readiness(shared).sources,
        skipped_rules: lock(&shared.skipped)
            .iter()
            .map(SkippedRuleView::from)
            .collect(),
        summary,
        findings: list,
    }
}

async fn timeline(State(shared): State<Arc<Shared>>, Path(uid): Path<String>) -> Response {
    let view = shared.node_view();
    let events = shared.events();
    let t = podcoroner_core::timeline::explain(&uid, &view, &events);
    if t.entries.is_empty() {
        return (
            StatusCode::NOT_FOUND,
            Json(serde_json::json!({ "error": format!("nothing on this node names {uid:?}") })),
        )
            .into_response();
    }
    Json(TimelineReport::new(
        &shared.node,
        Timestamp::now(),
        &uid,
        &t,
    ))
    .into_response()
}

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        shared.metrics.encode(),
    )
        .into_response()
}

async fn index(State(shared): State<Arc<Shared>>) -> Html<String> {
    Html(super::html::page(
        &shared.node,
        &readiness(&shared),
        &findings_report(
            &shared,
            &FindingsQuery {
                state: Some("open".into()),
                ..Default::default()
            },
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcoroner_node::api::SourceStatus;

    /// While a source is unhealthy, what its last success read is said as such, never as
    /// `detail`, which a reader takes for what is read now.
    #[test]
    fn an_unhealthy_source_says_its_last_success_apart() {
        let mut ok = SourceStatus::ok();
        ok.detail = Some("records from 10:00 to 10:05".to_string());
        let mut h = SourceHealth {
            status: ok,
            since: Timestamp::UNIX_EPOCH,
            last_success: Some(Timestamp::UNIX_EPOCH),
            last_success_detail: Some("kubelet.log; records from 10:00 to 10:05".to_string()),
        };
        let view = SourceHealthView::from(&h);
        assert_eq!(
            (
                view.detail.as_deref(),
                view.last_success_detail,
                view.last_error
            ),
            (Some("kubelet.log; records from 10:00 to 10:05"), None, None)
        );
        h.status = SourceStatus::error("kubelet.log does not exist".to_string());
        let view = SourceHealthView::from(&h);
        assert_eq!(
            (
                view.detail,
                view.last_success_detail.as_deref(),
                view.last_error.as_deref()
            ),
            (
                None,
                Some("kubelet.log; records from 10:00 to 10:05"),
                Some("kubelet.log does not exist")
            )
        );
    }
}
