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

    /// Runs one write-side operation under the deadline: fails it once
    /// the deadline has passed (even when the socket happens to take it);
    /// when it has to wait for the client, sets the deadline if it is not
    /// set.
    fn timed<T>(
        &mut self,
        cx: &mut Context<'_>,
        op: impl FnOnce(Pin<&mut S>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>>
    where
        S: Unpin,
    {
        if self.deadline.as_ref().is_some_and(|d| d.is_elapsed()) {
            return Poll::Ready(Err(self.timed_out()));
        }
        self.conn.writing.store(true, Ordering::Relaxed);
        match op(Pin::new(&mut self.inner), cx) {
            Poll::Pending => {
                let timeout = self.timeout;
                let deadline = self.deadline.get_or_insert_with(|| {
                    Box::pin(tokio::time::sleep_until(Instant::now() + timeout))
                });
                match deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(self.timed_out())),
                    Poll::Pending => Poll::Pending,
                }
            }
            ready => ready,
        }
    }

    fn timed_out(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the client did not take the answer within the write timeout ({} ms)",
                self.timeout.as_millis()
            ),
        )
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
        self.timed(cx, |inner, cx| inner.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.timed(cx, |inner, cx| inner.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = self.timed(cx, |inner, cx| inner.poll_flush(cx));
        if flushed.is_ready() {
            // Everything queued is with the system: nothing to wait for.
            self.deadline = None;
            self.conn.writing.store(false, Ordering::Relaxed);
        }
        flushed
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.timed(cx, |inner, cx| inner.poll_shutdown(cx))
    }
}
