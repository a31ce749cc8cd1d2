//! The API server is the one boundary we cannot run here: a fake serves the `PodList` JSON the
//! API server returns for `spec.nodeName=<node>` (a list, and a watch that stays open and quiet,
//! as on a node whose pods do not change) and records the Events posted to it.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{ok, pod_list};

/// The Events the fake API server received, in order.
pub type Posted = Arc<Mutex<Vec<Value>>>;

/// A running fake API server.
pub struct FakeApiServer {
    /// The port it listens on.
    pub port: u16,
    /// The Events posted to it.
    pub posted: Posted,
}

/// Starts a fake API server on `bind`:0 serving `pods` as the node's `PodList`
/// (`resourceVersion` 1001).
pub async fn start(bind: IpAddr, pods: Vec<Value>) -> FakeApiServer {
    use axum::extract::{Path as UrlPath, Query, State};
    use axum::response::IntoResponse as _;
    use axum::routing::{get, post};
    let mut list = pod_list(pods);
    list["kind"] = json!("PodList");
    list["metadata"] = json!({"resourceVersion": "1001"});
    let posted: Posted = Posted::default();
    let app = axum::Router::new()
        .route(
            "/api/v1/pods",
            get(move |Query(q): Query<BTreeMap<String, String>>| {
                let list = list.clone();
                async move {
                    if q.get("watch").is_some_and(|w| w == "true" || w == "1") {
                        let quiet = futures::stream::pending::<Result<String, std::io::Error>>();
                        return axum::body::Body::from_stream(quiet).into_response();
                    }
                    axum::Json(list).into_response()
                }
            }),
        )
        .route(
            "/api/v1/namespaces/{ns}/events",
            post(
                |State(posted): State<Posted>,
                 UrlPath(ns): UrlPath<String>,
                 axum::Json(mut ev): axum::Json<Value>| async move {
                    let n = posted.lock().unwrap().len();
                    ev["metadata"]["name"] = json!(format!(
                        "{}{n}",
                        ev["metadata"]["generateName"].as_str().unwrap_or("e.")
                    ));
                    ev["metadata"]["namespace"] = json!(ns);
                    posted.lock().unwrap().push(ev.clone());
                    (axum::http::StatusCode::CREATED, axum::Json(ev))
                },
            ),
        )
        .with_state(posted.clone());
    let listener = ok(tokio::net::TcpListener::bind((bind, 0)).await);
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    FakeApiServer { port, posted }
}

/// Writes `dir/kubeconfig` for an anonymous user of the API server at `server`
/// (e.g. `http://127.0.0.1:1234`) and returns its path.
pub fn kubeconfig(dir: &Path, server: &str) -> PathBuf {
    let path = dir.join("kubeconfig");
    ok(std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {server}\n\
             contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: podcoroner\ncurrent-context: fake\n\
             users:\n- name: podcoroner\n  user: {{}}\n"
        ),
    ));
    path
}
