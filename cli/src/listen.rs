//! What `moonbox serve` and `moonbox mcp` share: the HTTP transport's
//! timeouts (one flag, one default and one bound each, from
//! [`ListenConfig`]), the bounds of their answers (from
//! [`moonbox_service::reply`]) and the signals that stop them.

use anyhow::Result;
use clap::Args;
use moonbox_service::{ListenConfig, reply};

use crate::args::{Size, Wait};

#[derive(Args)]
pub(crate) struct TimeoutArgs {
    /// How long a client may take to send a request's headers; an idle
    /// keep-alive connection is closed after it too (at most 10m).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(ListenConfig::DEFAULT_HEADER_TIMEOUT))]
    header_timeout: Wait,
    /// How long a request body may take to arrive; past it, 408 (at most
    /// 10m).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(ListenConfig::DEFAULT_BODY_TIMEOUT))]
    body_timeout: Wait,
    /// How long a client may take to read an answer once the server waits
    /// on it; past it, the connection is closed and the answer freed (at
    /// most 10m).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(ListenConfig::DEFAULT_WRITE_TIMEOUT))]
    write_timeout: Wait,
}

impl TimeoutArgs {
    /// The transport's bounds, with `max_connections` as given.
    pub(crate) fn listen(&self, max_connections: usize) -> ListenConfig {
        ListenConfig::default()
            .max_connections(max_connections)
            .header_timeout(self.header_timeout.0)
            .body_timeout(self.body_timeout.0)
            .write_timeout(self.write_timeout.0)
    }
}

#[derive(Args)]
pub(crate) struct ReplyArgs {
    /// Bytes of one answer's JSON (at least 64KiB); past it the answer is
    /// refused as reply_too_large, with the report minus its values.
    #[arg(long, value_name = "SIZE", default_value_t = Size(reply::DEFAULT_MAX_REPLY_BYTES as u64))]
    max_reply_bytes: Size,
    /// Over HTTP, memory that answers over 64KiB may hold at once while
    /// clients take them (at least --max-reply-bytes); an answer that does
    /// not fit is refused as replies_busy, with the report minus its values.
    #[arg(long, value_name = "SIZE", default_value_t = Size(reply::DEFAULT_REPLY_MEMORY as u64))]
    reply_memory: Size,
}

impl ReplyArgs {
    /// `--max-reply-bytes` and `--reply-memory`, checked; `--reply-memory`
    /// only when `http` (over stdio it is not used).
    pub(crate) fn bytes(&self, http: bool) -> Result<(usize, usize)> {
        let addressable = |flag: &str, n: u64| {
            usize::try_from(n).map_err(|_| {
                anyhow::anyhow!("{flag} is {n} bytes, more than this machine can address")
            })
        };
        let max = addressable("--max-reply-bytes", self.max_reply_bytes.0)?;
        let memory = addressable("--reply-memory", self.reply_memory.0)?;
        reply::check(
            max,
            if http {
                memory
            } else {
                reply::MAX_REPLY_MEMORY
            },
        )?;
        Ok((max, memory))
    }
}

/// Listens for SIGTERM (what a container runtime sends) and Ctrl-C from
/// this call on; the future completes on the first of them. Called before
/// the server binds, so that a signal sent once it is listening always
/// drains it: a handler installed later, as the server begins to serve,
/// left a moment in which SIGTERM still killed the process, evals in
/// flight and all. `moonbox serve` and `moonbox mcp` both drain on it.
pub(crate) fn shutdown_signal() -> Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use anyhow::Context;
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
        let mut interrupt =
            signal(SignalKind::interrupt()).context("cannot listen for Ctrl-C (SIGINT)")?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
