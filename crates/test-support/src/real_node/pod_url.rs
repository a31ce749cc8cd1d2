//! The static pod URL of a real node: a plain HTTP/1.1 server on a loopback port, serving one
//! file (read at every request) as `/pods`, as a web server in front of a kubelet's
//! `staticPodURL` would (`pkg/kubelet/config/http.go` GETs it every `httpCheckFrequency`).

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Serves `body` (a file; 404 while it does not exist) at `http://127.0.0.1:PORT/pods` from a
/// thread, until [`PodUrlServer::stop`] or drop; then the port refuses connections.
#[derive(Debug)]
pub struct PodUrlServer {
    body: PathBuf,
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PodUrlServer {
    /// Starts serving `body` on `port` (a free one when `None`).
    ///
    /// # Errors
    ///
    /// When the port cannot be bound.
    pub fn start(body: &Path, port: Option<u16>) -> std::io::Result<PodUrlServer> {
        let mut server = PodUrlServer {
            body: body.to_path_buf(),
            port: port.unwrap_or(0),
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        };
        server.restart()?;
        Ok(server)
    }

    /// The URL, `http://127.0.0.1:PORT/pods`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/pods", self.port)
    }

    /// Stops serving: the listening socket is closed.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Serves again, on the same port.
    ///
    /// # Errors
    ///
    /// When the port cannot be bound again.
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.stop();
        let listener = TcpListener::bind(("127.0.0.1", self.port))?;
        self.port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        self.stop = stop.clone();
        let body = self.body.clone();
        self.thread = Some(std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => answer(stream, &body),
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        }));
        Ok(())
    }
}

impl Drop for PodUrlServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads one request's head and answers it with the file (200) or 404.
fn answer(mut stream: TcpStream, body: &Path) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let (status, content) = match std::fs::read(body) {
        Ok(bytes) => ("200 OK", bytes),
        Err(_) => ("404 Not Found", b"no such file\n".to_vec()),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/yaml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        content.len()
    );
    let _ = stream.write_all(&content);
}
