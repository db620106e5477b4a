//! [`Timed`]: a connection whose writes must be taken by the client within
//! the write timeout.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::accept::Conn;

/// A stream whose pending output has a deadline.
///
/// The deadline is set when a write or a flush first has to wait for the
/// client (its receive window and the socket's buffer are full), and is
/// cleared only when a flush completes, that is, when everything the
/// server had to send has been handed to the system. So a client must take
/// a whole answer within the timeout once the server waits on it, however
/// it paces its reads; past it every write fails with
/// [`io::ErrorKind::TimedOut`], which ends the connection and frees what it
/// held.
pub(crate) struct Timed<S> {
    inner: S,
    timeout: Duration,
    deadline: Option<Pin<Box<Sleep>>>,
    conn: Arc<Conn>,
}

impl<S> Timed<S> {
    pub(crate) fn new(inner: S, timeout: Duration, conn: Arc<Conn>) -> Timed<S> {
        Timed {
            inner,
            timeout,
            deadline: None,
            conn,
        }
    }

    /// The write cannot go on yet: sets the deadline if it is not set, and
    /// fails once it has passed.
    fn wait<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let timeout = self.timeout;
        let deadline = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(Instant::now() + timeout)));
        self.conn.writing.store(true, Ordering::Relaxed);
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client did not take the answer within the write timeout ({} ms)",
                    timeout.as_millis()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Fails a write attempted after the deadline passed, even when the
    /// socket happens to take it.
    fn expired(&self) -> bool {
        self.deadline.as_ref().is_some_and(|d| d.is_elapsed())
    }

    fn timed_out<T>(&self) -> Poll<io::Result<T>> {
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client did not take the answer within the write timeout",
        )))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Timed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Timed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.expired() {
            return self.timed_out();
        }
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => self.wait(cx),
            ready => {
                self.conn.writing.store(true, Ordering::Relaxed);
                ready
            }
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.expired() {
            return self.timed_out();
        }
        match Pin::new(&mut self.inner).poll_write_vectored(cx, bufs) {
            Poll::Pending => self.wait(cx),
            ready => {
                self.conn.writing.store(true, Ordering::Relaxed);
                ready
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.expired() {
            return self.timed_out();
        }
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending => self.wait(cx),
            Poll::Ready(result) => {
                // Everything queued is with the system: nothing to wait for.
                self.deadline = None;
                self.conn.writing.store(false, Ordering::Relaxed);
                Poll::Ready(result)
            }
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.expired() {
            return self.timed_out();
        }
        match Pin::new(&mut self.inner).poll_shutdown(cx) {
            Poll::Pending => self.wait(cx),
            ready => ready,
        }
    }
}
