//! The static pod URL (`staticPodURL`, `--manifest-url`), read as the kubelet's HTTP source reads
//! it (`pkg/kubelet/config/http.go` `extractFromURL`, `common.go` `tryDecodeSinglePod` and
//! `tryDecodePodList`, kubernetes v1.34.4):
//!
//! - a GET with a timeout (the kubelet's is 10 s); a status other than 200 is an error;
//! - at most 10 MiB of body (`maxConfigLength`; more is an error);
//! - an empty body is an empty pod list: the kubelet SETs no pods, so it removes every HTTP
//!   static pod (and logs "zero-length data received");
//! - the body is one Pod, or else a `PodList` (YAML or JSON); each pod needs a name and a
//!   container, its namespace defaults to `default` and `-<node name>` is appended to its name.
//!   Any other kind (`List` too: the kubelet type-asserts `*api.PodList`) is an error.
//!
//! On an error the kubelet keeps the HTTP static pods it last read, so what it runs is unknown:
//! [`UrlManifestView::pods`] is `Err` with the reason, never an empty list.

use std::time::Duration;

use http_body_util::BodyExt as _;
use k8s_openapi::api::core::v1::Pod;
use podcoroner_core::{ManifestPod, UrlManifestView};
use serde::Deserialize as _;

use crate::manifests::{MAX_CONFIG_BYTES, ManifestError, check_nesting, parse, static_pod};

/// Reads the body of `url` (status and bytes, at most [`MAX_CONFIG_BYTES`]) within `timeout`
/// and decodes it with [`parse_body`]. `http://` and `https://` (verified against the system's
/// CA certificates, as the kubelet's Go client does). Never fails: what went wrong is the view's
/// `Err`, naming the URL.
pub async fn fetch(url: &str, timeout: Duration) -> UrlManifestView {
    let pods = match tokio::time::timeout(timeout, get(url)).await {
        Err(_) => Err(format!("GET {url}: no answer within {timeout:?}")),
        Ok(Err(e)) => Err(format!("GET {url}: {e}")),
        Ok(Ok((200, body))) => parse_body(&body),
        Ok(Ok((status, _))) => Err(format!("GET {url}: status {status}, not 200")),
    };
    UrlManifestView {
        url: url.to_string(),
        pods,
    }
}

/// One GET: (status, body). A body longer than [`MAX_CONFIG_BYTES`] is an error.
async fn get(url: &str) -> Result<(u16, Vec<u8>), String> {
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    type Body = http_body_util::Empty<hyper::body::Bytes>;
    let uri: hyper::Uri = url.parse().map_err(|e| format!("not a URL: {e}"))?;
    let request = hyper::Request::get(uri)
        .body(Body::new())
        .map_err(|e| e.to_string())?;
    let response = if url.starts_with("https://") {
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map_err(|e| format!("cannot load the system's CA certificates: {e}"))?
            .https_only()
            .enable_http1()
            .build();
        Client::builder(TokioExecutor::new())
            .build::<_, Body>(https)
            .request(request)
            .await
    } else {
        Client::builder(TokioExecutor::new())
            .build_http::<Body>()
            .request(request)
            .await
    }
    .map_err(|e| error_chain(&e))?;
    let status = response.status().as_u16();
    let limit = usize::try_from(MAX_CONFIG_BYTES).unwrap_or(usize::MAX);
    let body = http_body_util::Limited::new(response.into_body(), limit)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                format!("the body is longer than the kubelet's {limit} bytes")
            } else {
                format!("reading the body: {e}")
            }
        })?;
    Ok((status, body.to_bytes().to_vec()))
}

/// An error with its causes, `a: b: c` (hyper's own message is only "client error (Connect)").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// The pods a 200 body declares, as the kubelet's HTTP source decodes it: empty is no pods; one
/// Pod; else a `PodList`. `Err` (the kubelet keeps what it last read) for anything else, an
/// invalid pod, or nesting its decoder refuses.
pub fn parse_body(body: &[u8]) -> Result<Vec<ManifestPod>, String> {
    if body.is_empty() {
        return Ok(Vec::new());
    }
    check_nesting(body).map_err(|e| match e {
        ManifestError::Rejected(r) => r,
        ManifestError::Unreadable(r) => format!("podcoroner cannot read the body: {r}"),
    })?;
    let text = std::str::from_utf8(body).map_err(|e| format!("not UTF-8: {e}"))?;
    let first = serde_yaml::Deserializer::from_str(text)
        .next()
        .ok_or("an empty document")?;
    let value = serde_yaml::Value::deserialize(first)
        .map_err(|e| format!("couldn't parse as a single pod or a PodList: {e}"))?;
    let field = |name: &str| value.get(name).and_then(|v| v.as_str()).unwrap_or("");
    match (field("apiVersion"), field("kind")) {
        (_, "Pod") => parse(body).map(|p| vec![p]),
        ("v1", "PodList") => {
            let items = match value.get("items") {
                None | Some(serde_yaml::Value::Null) => return Ok(Vec::new()),
                Some(serde_yaml::Value::Sequence(items)) => items,
                Some(_) => return Err("invalid pods list: items is not a list".to_string()),
            };
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let pod: Pod = serde_yaml::from_value(item.clone())
                        .map_err(|e| format!("invalid pod items[{i}]: {e}"))?;
                    static_pod(pod).map_err(|e| format!("items[{i}]: {e}"))
                })
                .collect()
        }
        (api_version, kind) => Err(format!(
            "couldn't parse as a single pod or a PodList: the body holds {api_version}/{kind} \
             (the kubelet takes v1/Pod or v1/PodList)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: edge\nspec:\n  containers:\n  - name: main\n    image: x\n";

    fn names(r: Result<Vec<ManifestPod>, String>) -> Vec<String> {
        r.unwrap()
            .into_iter()
            .map(|p| format!("{}/{}", p.namespace, p.name))
            .collect()
    }

    #[test]
    fn a_single_pod_or_a_pod_list_in_yaml_or_json() {
        assert_eq!(names(parse_body(POD.as_bytes())), ["edge/web"]);
        let list = r#"{"apiVersion":"v1","kind":"PodList","items":[
            {"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x"}]}},
            {"metadata":{"name":"b","namespace":"kube-system","uid":"u-1"},"spec":{"containers":[{"name":"c","image":"x"}]}}]}"#;
        let pods = parse_body(list.as_bytes()).unwrap();
        assert_eq!(
            pods,
            vec![
                ManifestPod {
                    name: "a".into(),
                    namespace: "default".into(),
                    uid: None
                },
                ManifestPod {
                    name: "b".into(),
                    namespace: "kube-system".into(),
                    uid: Some("u-1".into())
                },
            ]
        );
        let yaml_list = format!(
            "apiVersion: v1\nkind: PodList\nitems:\n- {}",
            POD.replace('\n', "\n  ").trim_end()
        );
        assert_eq!(names(parse_body(yaml_list.as_bytes())), ["edge/web"]);
        assert_eq!(
            names(parse_body(b"apiVersion: v1\nkind: PodList\nitems: []\n")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_empty_body_is_no_pods_as_the_kubelet_reads_it() {
        assert_eq!(parse_body(b""), Ok(vec![]));
    }

    #[test]
    fn a_body_the_kubelet_rejects_is_an_error_never_no_pods() {
        for (body, want) in [
            ("<html>503</html>", "couldn't parse"),
            ("apiVersion: v1\nkind: List\nitems: []\n", "v1/List"),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: []\n",
                "spec.containers",
            ),
            (
                "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {}\n  spec:\n    containers: [{name: c, image: x}]\n",
                "items[0]: invalid pod: metadata.name",
            ),
            ("{\"kind\": \"Pod\", ", "did not find expected node content"),
        ] {
            let err = parse_body(body.as_bytes()).unwrap_err();
            assert!(err.contains(want), "{body:?}: {err}");
        }
    }

    /// One HTTP/1.1 answer per connection from a thread: (status line, body).
    fn serve(answers: Vec<(&'static str, Vec<u8>)>) -> String {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/pods", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for (status, body) in answers {
                let (mut s, _) = listener.accept().unwrap();
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(&body);
            }
        });
        url
    }

    #[test]
    fn fetch_reads_the_url_and_says_why_it_cannot() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let url = serve(vec![
            ("200 OK", POD.as_bytes().to_vec()),
            ("404 Not Found", b"no".to_vec()),
            (
                "200 OK",
                vec![b' '; usize::try_from(MAX_CONFIG_BYTES).unwrap() + 1],
            ),
        ]);
        let t = Duration::from_secs(10);
        let v = rt.block_on(fetch(&url, t));
        assert_eq!(v.url, url);
        assert_eq!(names(v.pods), ["edge/web"]);
        let err = rt.block_on(fetch(&url, t)).pods.unwrap_err();
        assert_eq!(err, format!("GET {url}: status 404, not 200"));
        let err = rt.block_on(fetch(&url, t)).pods.unwrap_err();
        assert!(
            err.contains("longer than the kubelet's 10485760 bytes"),
            "{err}"
        );
        // Nothing listens any more.
        let err = rt.block_on(fetch(&url, t)).pods.unwrap_err();
        assert!(
            err.starts_with(&format!("GET {url}: ")) && err.contains("onnect"),
            "{err}"
        );
    }
}
