//! Helpers shared by the CLI's integration tests: running the binary, and API pods in the shape
//! `kubectl get pods -o json` prints.

#![allow(dead_code)]

pub mod apiserver;
pub mod real_node;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

/// Unwraps, panicking with the error's message (not its Debug form).
pub fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// RFC 3339 at second precision, as the API server writes timestamps.
pub fn ts(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// One pod object as `kubectl get pods -o json` prints it.
pub fn pod(
    ns: &str,
    name: &str,
    uid: &str,
    node: &str,
    phase: &str,
    annotations: Value,
    owner: Value,
) -> Value {
    let now = Timestamp::now();
    let created = ts(now - SignedDuration::from_hours(30));
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "namespace": ns, "uid": uid, "resourceVersion": "48213",
            "creationTimestamp": created, "annotations": annotations, "ownerReferences": owner,
        },
        "spec": {
            "nodeName": node, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "containers": [{"name": "main", "image": "registry.local/main:1", "imagePullPolicy": "IfNotPresent"}],
        },
        "status": {
            "phase": phase, "hostIP": "192.0.2.10", "qosClass": "BestEffort", "startTime": created,
            "conditions": [{"type": "Ready", "status": if phase == "Running" { "True" } else { "False" },
                            "lastProbeTime": null, "lastTransitionTime": created}],
        },
    })
}

/// Runs the `podcoroner` binary: (exit code, stdout, stderr).
pub fn podcoroner(args: &[String]) -> (i32, String, String) {
    let out = ok(Command::new(env!("CARGO_BIN_EXE_podcoroner"))
        .args(args)
        .output());
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Sends a running `podcoroner daemon` SIGTERM and checks that it exits 0 within 10 s (it saves
/// its state, findings and log positions on the way out).
pub fn terminate(mut child: Child) {
    ok(Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match ok(child.try_wait()) {
            Some(status) => break status,
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            None => {
                let _ = child.kill();
                panic!("the daemon did not stop within 10 s of SIGTERM");
            }
        }
    };
    assert!(
        status.success(),
        "the daemon exited with {status} on SIGTERM"
    );
}

/// A started `podcoroner daemon`, killed when dropped: a test that fails before
/// [`Daemon::terminate`] leaves no daemon behind to hold its port and state directory.
pub struct Daemon(Option<Child>);

impl Daemon {
    /// Guards a spawned daemon.
    pub fn new(child: Child) -> Daemon {
        Daemon(Some(child))
    }

    /// Its process ID (0 once terminated).
    pub fn pid(&self) -> u32 {
        self.0.as_ref().map_or(0, Child::id)
    }

    /// SIGTERM, and a clean exit within 10 s ([`terminate`]).
    pub fn terminate(mut self) {
        if let Some(child) = self.0.take() {
            terminate(child);
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The string `field` of every object in the JSON array `items` (a report's findings, a
/// finding's evidence, a timeline's entries), in order; panics on another shape.
pub fn strs<'a>(items: &'a Value, field: &str) -> Vec<&'a str> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items}"))
        .iter()
        .map(|v| {
            v[field]
                .as_str()
                .unwrap_or_else(|| panic!("no string {field:?} in {v}"))
        })
        .collect()
}

/// Polls `f` every 100 ms until it returns `Some`, for at most `secs`; the panic names `what`.
pub fn wait_for<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {secs}s waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    ok(std::net::TcpListener::bind("127.0.0.1:0"))
        .local_addr()
        .unwrap()
        .port()
}

/// A `kubectl get pods -o json` document holding `items`.
pub fn pod_list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

/// A plain HTTP/1.1 GET of `127.0.0.1:port`: (status, body); status 0 when nothing listens yet.
pub fn get(port: u16, path: &str) -> (u16, String) {
    get_from("127.0.0.1", port, path)
}

/// A plain HTTP/1.1 GET of `host:port` (an IP address): (status, body); status 0 when nothing
/// listens yet.
pub fn get_from(host: &str, port: u16, path: &str) -> (u16, String) {
    let Ok(s) = TcpStream::connect((host, port)) else {
        return (0, String::new());
    };
    ok(exchange(s, path))
}

/// Whether a GET of `/healthz` on `127.0.0.1:port` answers 200 now; any failure to answer (none
/// listening yet, a connection reset while the daemon starts on a loaded machine) is `false`,
/// so a wait for the daemon to come up stops at its own deadline, not at the first reset.
pub fn serves_healthz(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port))
        .and_then(|s| exchange(s, "/healthz"))
        .is_ok_and(|(status, _)| status == 200)
}

/// One `GET path` on `s` with `Connection: close`: (status, body).
fn exchange(mut s: TcpStream, path: &str) -> std::io::Result<(u16, String)> {
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_string());
    // Undo chunked transfer encoding when present.
    let body = if text
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(&body)
    } else {
        body
    };
    Ok((status, body))
}

pub fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n.min(rest.len())]);
        s = rest.get(n + 2..).unwrap_or("");
    }
    out
}
