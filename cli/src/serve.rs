//! `moonbox serve`: the sandbox as an HTTP JSON service.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use moonbox_serve::{Keys, NatsAuth, NatsConfig, ServeConfig, Server, Worker, remote_capability};

use moonbox_service::ListenConfig;

use crate::args::{SandboxArgs, Size, Wait, parse_count, read_secret};
use crate::listen::{ReplyArgs, TimeoutArgs};

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// The address to listen on. Without --keys it must be loopback.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Also answer /healthz and /readyz alone at this address, on a
    /// listener that work never queues on: point liveness and readiness
    /// probes there, so that no load or attack on --addr fails them.
    #[arg(long, value_name = "ADDR")]
    health_addr: Option<SocketAddr>,
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
    /// Sessions one tenant of --keys may hold open (1 to 10000).
    #[arg(long, value_name = "N", default_value_t = ServeConfig::DEFAULT_MAX_SESSIONS_PER_TENANT,
          value_parser = |s: &str| parse_count(s, "sessions", ServeConfig::MAX_MAX_SESSIONS))]
    max_sessions_per_tenant: usize,
    /// Close a session idle this long (at most 24h).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(ServeConfig::DEFAULT_SESSION_TTL))]
    session_ttl: Wait,
    /// Bytes of one request body (at most 1GiB); code is bounded by
    /// --max-script-bytes.
    #[arg(long, value_name = "SIZE", default_value_t = Size(ServeConfig::DEFAULT_MAX_BODY_BYTES as u64))]
    max_body_bytes: Size,
    #[command(flatten)]
    replies: ReplyArgs,
    /// On SIGTERM or Ctrl-C, how long evals in flight may finish before
    /// they are cancelled (at most 1h).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(ServeConfig::DEFAULT_DRAIN_TIMEOUT))]
    drain_timeout: Wait,
    /// HTTP connections open at once (1 to 65536); at the cap the idlest
    /// is closed to make room, and with none idle a new connection gets
    /// 503 and is closed.
    #[arg(long, value_name = "N", default_value_t = ListenConfig::DEFAULT_MAX_CONNECTIONS,
          value_parser = |s: &str| parse_count(s, "connections", ListenConfig::MAX_MAX_CONNECTIONS))]
    max_connections: usize,
    #[command(flatten)]
    timeouts: TimeoutArgs,
    /// Run instances in wasmtime's pooling allocator: fresh evals start
    /// several times faster (BENCHMARKS.md), and at most 1,000 instances
    /// live at once, so --max-running plus --max-sessions must stay within
    /// that.
    #[arg(long)]
    pooling: bool,
    #[command(flatten)]
    nats: NatsArgs,
}

/// Instances the pooling allocator holds at once.
const POOL_SLOTS: usize = moonbox::Engine::POOL_INSTANCES as usize;

#[derive(Args)]
#[group(id = "nats_auth", multiple = false)]
struct NatsAuthArgs {
    /// A NATS .creds file (JWT and NKey seed).
    #[arg(long, value_name = "FILE", requires = "nats")]
    nats_creds: Option<PathBuf>,
    /// A NATS user; the password is read from --nats-password-file.
    #[arg(long, value_name = "USER", requires_all = ["nats", "nats_password_file"])]
    nats_user: Option<String>,
    /// A file holding an NKey seed (SU...).
    #[arg(long, value_name = "FILE", requires = "nats")]
    nats_nkey_file: Option<PathBuf>,
    /// A file holding a NATS token.
    #[arg(long, value_name = "FILE", requires = "nats")]
    nats_token_file: Option<PathBuf>,
}

#[derive(Args)]
struct NatsArgs {
    /// Also join the NATS queue group at URL as a worker: answer evals and
    /// sessions from the bus (nats://host:4222; comma-separated for a
    /// cluster). See docs/serve.md.
    #[arg(long, value_name = "URL")]
    nats: Option<String>,
    /// The subject prefix of the eval, session and capability subjects.
    #[arg(long, value_name = "PREFIX", default_value = moonbox_serve::DEFAULT_PREFIX,
          requires = "nats")]
    nats_prefix: String,
    #[command(flatten)]
    auth: NatsAuthArgs,
    /// The password of --nats-user, read from this file.
    #[arg(long, value_name = "FILE", requires = "nats_user")]
    nats_password_file: Option<PathBuf>,
    /// Trust this CA certificate (PEM) for the NATS server, and require TLS.
    #[arg(long, value_name = "FILE", requires = "nats")]
    nats_tls_ca: Option<PathBuf>,
    /// Present this client certificate (PEM) to NATS (needs --nats-tls-key).
    #[arg(long, value_name = "FILE", requires_all = ["nats", "nats_tls_key"])]
    nats_tls_cert: Option<PathBuf>,
    /// The key of --nats-tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "nats_tls_cert")]
    nats_tls_key: Option<PathBuf>,
    /// Refuse a NATS connection without TLS.
    #[arg(long, requires = "nats")]
    nats_tls_required: bool,
    /// The prefix of this worker's reply subjects, in place of _INBOX: give
    /// workers and each application their own, and subject permissions
    /// keep each from reading the others' replies (docs/serve.md).
    #[arg(long, value_name = "PREFIX", requires = "nats")]
    nats_inbox_prefix: Option<String>,
    /// Offer capability NAME to scripts, served by the application over
    /// NATS: each call is a request to PREFIX.cap.NAME (repeatable). Its
    /// secrets stay in the application.
    #[arg(long, value_name = "NAME", requires = "nats")]
    remote_capability: Vec<String>,
    /// How long one remote capability call may wait for its answer (the
    /// eval's timeout covers it too; at most 24h).
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    remote_timeout: Wait,
}

impl NatsArgs {
    /// The connection settings, secrets read from their files.
    fn config(&self, url: &str) -> Result<NatsConfig> {
        let mut config = NatsConfig::new(url).prefix(&self.nats_prefix);
        let auth = &self.auth;
        if let Some(path) = &auth.nats_creds {
            config = config.auth(NatsAuth::CredsFile(path.clone()));
        } else if let Some(user) = &auth.nats_user {
            let path = self
                .nats_password_file
                .as_deref()
                .ok_or_else(|| anyhow::anyhow!("--nats-user needs --nats-password-file"))?;
            config = config.user_and_password(user, read_secret(path, "password")?);
        } else if let Some(path) = &auth.nats_nkey_file {
            config = config.auth(NatsAuth::Nkey(read_secret(path, "NKey seed")?));
        } else if let Some(path) = &auth.nats_token_file {
            config = config.auth(NatsAuth::Token(read_secret(path, "token")?));
        }
        if let Some(ca) = &self.nats_tls_ca {
            config = config.tls_ca(ca.clone());
        }
        if let (Some(cert), Some(key)) = (&self.nats_tls_cert, &self.nats_tls_key) {
            config = config.tls_client(cert.clone(), key.clone());
        }
        if self.nats_tls_required {
            config.tls_required = true;
        }
        if let Some(inbox) = &self.nats_inbox_prefix {
            config = config.inbox_prefix(inbox);
        }
        config.validate()?;
        Ok(config)
    }
}

/// Serves until SIGTERM or Ctrl-C, then drains.
pub(crate) async fn serve(args: &ServeArgs, sandbox_args: &SandboxArgs) -> Result<u8> {
    let too_big = |what: &str, n: u64| {
        anyhow::anyhow!("{what} is {n} bytes, more than this machine can address")
    };
    let body = usize::try_from(args.max_body_bytes.0)
        .map_err(|_| too_big("--max-body-bytes", args.max_body_bytes.0))?;
    let (max_reply, reply_memory) = args.replies.bytes(true)?;
    let code = usize::try_from(sandbox_args.max_script_bytes())
        .map_err(|_| too_big("--max-script-bytes", sandbox_args.max_script_bytes()))?;
    let mut config = ServeConfig::new(args.addr)
        .max_running(args.max_running)
        .max_queued(usize::try_from(args.max_queued).unwrap_or(usize::MAX))
        .queue_wait(args.queue_wait.0)
        .max_sessions(args.max_sessions)
        .max_sessions_per_tenant(args.max_sessions_per_tenant)
        .session_ttl(args.session_ttl.0)
        .max_body_bytes(body)
        // Code at the script bound, but never more than a body holds.
        .max_code_bytes(code.min(body))
        .max_reply_bytes(max_reply)
        .reply_memory(reply_memory)
        .drain_timeout(args.drain_timeout.0)
        .listen(args.timeouts.listen(args.max_connections));
    if let Some(path) = &args.keys {
        config = config.keys(Keys::load(path)?);
    }
    if let Some(addr) = args.health_addr {
        config = config.health_addr(addr);
    }
    // A refused configuration fails before the sandbox is built.
    config.validate()?;
    if args.pooling && args.max_running + args.max_sessions > POOL_SLOTS {
        anyhow::bail!(
            "--pooling holds {POOL_SLOTS} instances, and --max-running ({}) plus --max-sessions ({}) could need more; lower them",
            args.max_running,
            args.max_sessions
        );
    }
    let mut builder = sandbox_args.builder_on(args.pooling)?;
    let mut nats_url = String::new();
    let nats = match &args.nats.nats {
        Some(url) => {
            let nats = args.nats.config(url)?;
            nats_url = nats.display_url();
            let client = nats.connect().await?;
            for name in &args.nats.remote_capability {
                builder = builder.capability(remote_capability(
                    client.clone(),
                    &nats.prefix,
                    name,
                    args.nats.remote_timeout.0,
                )?);
            }
            Some(Worker::new(client, &nats)?)
        }
        None => None,
    };
    let sandbox = builder.build_async().await?;
    let shutdown = crate::listen::shutdown_signal()?;
    let mut bound = Server::new(sandbox, config)?.bind().await?;
    if let Some(worker) = nats {
        eprintln!("moonbox serve: NATS worker {} on {nats_url}", worker.id());
        bound = bound.nats(worker);
    }
    if let Some(addr) = bound.health_addr()? {
        eprintln!("moonbox serve: health checks on http://{addr}");
    }
    eprintln!(
        "moonbox serve: listening on http://{} ({})",
        bound.local_addr()?,
        if args.keys.is_some() {
            "API keys required"
        } else {
            "loopback, no keys"
        }
    );
    bound.run_until(shutdown).await?;
    eprintln!("moonbox serve: drained, stopping");
    Ok(0)
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
