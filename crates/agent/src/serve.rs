//! The HTTP server loop, bounded: the status endpoint listens on the node's network
//! (`hostNetwork`, `0.0.0.0:9657`), so whoever can reach the port must not be able to hold its
//! connections, its file descriptors or its memory.
//!
//! - **Header-read timeout** ([`Limits::header_read_timeout`]): a request's head must arrive
//!   within it, counted from the accept (hyper's `header_read_timeout`); a client that opens a
//!   connection and sends nothing, or sends a head a byte at a time, is cut off.
//! - **Idle timeout** ([`Limits::idle_timeout`]): a connection on which nothing is read or
//!   written for this long is closed (a keep-alive connection between requests, a client that
//!   stops reading its response).
//! - **Connection limit** ([`Limits::max_connections`]): at the limit, accepting one more
//!   closes the oldest open connection first, so a flood of connections that never finish
//!   cannot keep the kubelet's probe of `/healthz` waiting in the kernel's backlog behind them
//!   (a request takes milliseconds; the oldest connection is the one most likely stuck).
//! - **File-descriptor reserve**: the limit is lowered so that at least [`FD_RESERVE`]
//!   descriptors below the soft `RLIMIT_NOFILE` stay free for the state saves (a temporary file
//!   and its directory per save), the CRI socket, the followed logs and the watches, whatever
//!   the clients do.
//!
//! `accept` errors (`EMFILE` despite all this, `ECONNABORTED`) are logged and retried after a
//! pause, never fatal.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::time::{Instant, Sleep};

/// Descriptors kept free below the soft `RLIMIT_NOFILE` for everything but HTTP connections.
pub const FD_RESERVE: usize = 64;

/// The bounds of the HTTP server (config keys `http_header_read_timeout`, `http_idle_timeout`,
/// `http_max_connections`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A request head must be read within this, from the accept. Default 10 s.
    pub header_read_timeout: Duration,
    /// A connection with no byte read or written for this long is closed. Default 60 s.
    pub idle_timeout: Duration,
    /// At most this many connections at once, the oldest closed to admit a new one (lowered to
    /// keep [`FD_RESERVE`]). Default 128.
    pub max_connections: usize,
}

/// The connection limit actually applied: `max_connections`, lowered so that the descriptors
/// open now, the connections and [`FD_RESERVE`] fit under `nofile_soft`; at least 1. Without a
/// known limit (`None`), `max_connections`.
pub fn effective_max_connections(
    max_connections: usize,
    nofile_soft: Option<u64>,
    open_now: usize,
) -> usize {
    let room = nofile_soft.map_or(usize::MAX, |soft| {
        usize::try_from(soft)
            .unwrap_or(usize::MAX)
            .saturating_sub(open_now)
            .saturating_sub(FD_RESERVE)
    });
    max_connections.min(room).max(1)
}

/// This process's soft `RLIMIT_NOFILE` (from `/proc/self/limits`, `Max open files`), and the
/// descriptors open now (`/proc/self/fd`). `None` for what cannot be read.
pub fn fd_budget() -> (Option<u64>, usize) {
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3).map(str::to_string))
        })
        .and_then(|v| v.parse::<u64>().ok());
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count());
    (soft, open)
}

/// Serves `router` on `listener` within `limits` until `shutdown` completes, then lets the
/// open connections finish their request (at most 10 s).
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let (soft, open) = fd_budget();
    let max = effective_max_connections(limits.max_connections, soft, open);
    if max < limits.max_connections {
        tracing::warn!(
            configured = limits.max_connections,
            applied = max,
            nofile = soft,
            reserve = FD_RESERVE,
            "HTTP connection limit lowered to keep file descriptors for state saves"
        );
    }
    // The open connections by age (accept order), each with the sender that closes it.
    let open: Arc<Mutex<BTreeMap<u64, oneshot::Sender<()>>>> = Arc::default();
    let mut next_id: u64 = 0;
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "HTTP accept failed; retrying in 100 ms");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let (close, closed) = oneshot::channel();
        let id = next_id;
        next_id += 1;
        {
            let mut open = open.lock().unwrap_or_else(|e| e.into_inner());
            while open.len() >= max {
                if let Some((_, oldest)) = open.pop_first() {
                    let _ = oldest.send(());
                }
            }
            open.insert(id, close);
        }
        let io = TokioIo::new(Idle::new(stream, limits.idle_timeout));
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let conn = graceful.watch(builder.serve_connection(io, service));
        let open = open.clone();
        tokio::spawn(async move {
            // A timed-out or reset connection is the client's business, not an error of ours;
            // an evicted one is dropped, which closes its socket.
            tokio::select! {
                _ = conn => {}
                _ = closed => {}
            }
            open.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(10)) => {
            tracing::warn!("HTTP connections still open after 10 s of shutdown; closing them");
        }
    }
}

/// A TCP stream that fails its reads and writes with `TimedOut` once nothing has been read or
/// written for `timeout`.
struct Idle {
    stream: TcpStream,
    timeout: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl Idle {
    fn new(stream: TcpStream, timeout: Duration) -> Idle {
        Idle {
            stream,
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }

    fn touch(&mut self) {
        let at = Instant::now() + self.timeout;
        self.deadline.as_mut().reset(at);
    }

    /// `Ready(Err)` once the deadline passed while the stream had nothing to do.
    fn check(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        ready!(self.deadline.as_mut().poll(cx));
        Poll::Ready(io::Error::new(
            io::ErrorKind::TimedOut,
            "idle HTTP connection closed",
        ))
    }
}

impl AsyncRead for Idle {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.touch();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.check(cx).map(Err),
        }
    }
}

impl AsyncWrite for Idle {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.stream).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.touch();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.check(cx).map(Err),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.stream).poll_flush(cx) {
            Poll::Pending => self.check(cx).map(Err),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_keeps_the_reserve() {
        // nofile 1024 with 40 open: 1024 - 40 - 64 = 920 room, the configured 128 fits.
        assert_eq!(effective_max_connections(128, Some(1024), 40), 128);
        // nofile 200 with 40 open: 96 room.
        assert_eq!(effective_max_connections(128, Some(200), 40), 96);
        // No room at all: still one connection, so /healthz can answer.
        assert_eq!(effective_max_connections(128, Some(64), 40), 1);
        assert_eq!(effective_max_connections(128, None, 40), 128);
    }

    #[test]
    fn fd_budget_reads_this_process() {
        let (soft, open) = fd_budget();
        assert!(soft.is_some_and(|s| s >= 3), "{soft:?}");
        assert!(open >= 3, "{open}");
    }
}
