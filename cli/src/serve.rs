//! `moonbox serve`: the sandbox as an HTTP JSON service.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use moonbox_serve::{Keys, ServeConfig, Server};

use crate::args::{SandboxArgs, Size, Wait, parse_count};

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on. Without --keys it must be loopback.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// The API keys file: tenants, the SHA-256 of their keys and their
    /// quotas (docs/serve.md). With it, every request but /healthz and
    /// /readyz needs `Authorization: Bearer KEY`; without it, the server
    /// listens on loopback only and needs no key.
    #[arg(long, value_name = "FILE.json")]
    keys: Option<PathBuf>,
    /// Evals running at once (1 to 4096).
    #[arg(long, value_name = "N", default_value_t = ServeConfig::DEFAULT_MAX_RUNNING,
          value_parser = |s: &str| parse_count(s, "evals", ServeConfig::MAX_MAX_RUNNING))]
    max_running: usize,
    /// Requests waiting for a turn (0 to 100000); past it a request gets
    /// 429 at once.
    #[arg(long, value_name = "N", default_value_t = ServeConfig::DEFAULT_MAX_QUEUED as u64,
          value_parser = clap::value_parser!(u64).range(0..=ServeConfig::MAX_MAX_QUEUED as u64))]
    max_queued: u64,
    /// How long a request waits for a turn before it gets 429 (at most
    /// 10m).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(ServeConfig::DEFAULT_QUEUE_WAIT))]
    queue_wait: Wait,
    /// Sessions open at once (1 to 10000).
    #[arg(long, value_name = "N", default_value_t = ServeConfig::DEFAULT_MAX_SESSIONS,
          value_parser = |s: &str| parse_count(s, "sessions", ServeConfig::MAX_MAX_SESSIONS))]
    max_sessions: usize,
    /// Close a session idle this long (at most 24h).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(ServeConfig::DEFAULT_SESSION_TTL))]
    session_ttl: Wait,
    /// Bytes of one request body (at most 1GiB); code is bounded by
    /// --max-script-bytes.
    #[arg(long, value_name = "SIZE", default_value_t = Size(ServeConfig::DEFAULT_MAX_BODY_BYTES as u64))]
    max_body_bytes: Size,
    /// On SIGTERM or Ctrl-C, how long evals in flight may finish before
    /// they are cancelled (at most 1h).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(ServeConfig::DEFAULT_DRAIN_TIMEOUT))]
    drain_timeout: Wait,
}

/// Serves until SIGTERM or Ctrl-C, then drains.
pub(crate) async fn serve(args: &ServeArgs, sandbox_args: &SandboxArgs) -> Result<u8> {
    let too_big = |what: &str, n: u64| {
        anyhow::anyhow!("{what} is {n} bytes, more than this machine can address")
    };
    let body = usize::try_from(args.max_body_bytes.0)
        .map_err(|_| too_big("--max-body-bytes", args.max_body_bytes.0))?;
    let code = usize::try_from(sandbox_args.max_script_bytes())
        .map_err(|_| too_big("--max-script-bytes", sandbox_args.max_script_bytes()))?;
    let mut config = ServeConfig::new(args.addr)
        .max_running(args.max_running)
        .max_queued(usize::try_from(args.max_queued).unwrap_or(usize::MAX))
        .queue_wait(args.queue_wait.0)
        .max_sessions(args.max_sessions)
        .session_ttl(args.session_ttl.0)
        .max_body_bytes(body)
        // Code at the script bound, but never more than a body holds.
        .max_code_bytes(code.min(body))
        .drain_timeout(args.drain_timeout.0);
    if let Some(path) = &args.keys {
        config = config.keys(Keys::load(path)?);
    }
    // A refused configuration fails before the sandbox is built.
    config.validate()?;
    let sandbox = sandbox_args.builder()?.build_async().await?;
    let bound = Server::new(sandbox, config)?.bind().await?;
    eprintln!(
        "moonbox serve: listening on http://{} ({})",
        bound.local_addr()?,
        if args.keys.is_some() {
            "API keys required"
        } else {
            "loopback, no keys"
        }
    );
    bound.run_until(shutdown_signal()).await?;
    eprintln!("moonbox serve: drained, stopping");
    Ok(0)
}

/// Completes on SIGTERM (what a container runtime sends) or Ctrl-C.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Logs to stderr, one line per event, at info and above: an eval's
/// tenant, outcome and cost, never its code, inputs or keys.
pub(crate) fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .try_init();
}
