//! `moonbox mcp`: the sandbox as MCP tools, over stdio or streamable HTTP.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::Args;
use moonbox_mcp::upstream::{self, Upstream, UpstreamSpec};
use moonbox_mcp::{HttpConfig, McpServer, ServerConfig, TOKEN_ENV};

use moonbox_service::ListenConfig;

use crate::args::{SandboxArgs, Wait, parse_count, read_secret};
use crate::listen::{ReplyArgs, TimeoutArgs, shutdown_signal};

#[derive(Args)]
pub(crate) struct McpArgs {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (ADDR
    /// defaults to 127.0.0.1:8765). An address that is not loopback needs
    /// a bearer token (--token-file or MOONBOX_MCP_TOKEN).
    #[arg(long, value_name = "ADDR", num_args = 0..=1,
          default_missing_value = "127.0.0.1:8765")]
    http: Option<SocketAddr>,
    /// With --http, also accept browser requests from this origin, as
    /// scheme://host[:port] or scheme://host:* (repeatable). Loopback
    /// origins and requests without an Origin are always accepted.
    #[arg(long, value_name = "URL", requires = "http")]
    allow_origin: Vec<String>,
    /// With --http, require `Authorization: Bearer TOKEN` on every request,
    /// TOKEN being this file's text (surrounding whitespace ignored; at
    /// least 16 bytes). Default: the MOONBOX_MCP_TOKEN environment
    /// variable, if set.
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// With --http, the most MCP connections (clients' initialized
    /// sessions) open at once (1 to 10000); an initialize past it is
    /// answered 503.
    #[arg(long, value_name = "N", requires = "http",
          default_value_t = HttpConfig::DEFAULT_MAX_CONNECTIONS,
          value_parser = parse_max_connections)]
    max_connections: usize,
    /// With --http, TCP connections open at once (1 to 65536); at the cap
    /// the idlest is closed, and with none idle a new one gets 503.
    #[arg(long, value_name = "N", requires = "http",
          default_value_t = ListenConfig::DEFAULT_MAX_CONNECTIONS,
          value_parser = |s: &str| parse_count(s, "connections", ListenConfig::MAX_MAX_CONNECTIONS))]
    max_http_connections: usize,
    #[command(flatten)]
    timeouts: TimeoutArgs,
    #[command(flatten)]
    replies: ReplyArgs,
    /// Close a session after this long without a call (accepts 30s, 10m,
    /// 1h; at most 24h).
    #[arg(long, value_name = "DURATION",
          default_value_t = Wait(ServerConfig::DEFAULT_SESSION_TTL))]
    session_ttl: Wait,
    /// The most sessions open at once (1 to 10000); new_session fails past
    /// it.
    #[arg(long, value_name = "N", default_value_t = ServerConfig::DEFAULT_MAX_SESSIONS,
          value_parser = parse_max_sessions)]
    max_sessions: usize,
    /// Code mode: start this MCP server (NAME=COMMAND ARGS, or COMMAND ARGS
    /// to take the name it reports), or connect to a remote one over
    /// streamable HTTP (NAME=URL), and offer its tools to Lua as
    /// NAME.TOOL{...} (repeatable). A command inherits this process's
    /// environment (but not MOONBOX_MCP_TOKEN), so its credentials never
    /// reach the script; the timeout covers its calls.
    #[arg(long, value_name = "NAME=COMMAND|URL", value_parser = parse_upstream)]
    upstream: Vec<UpstreamSpec>,
    /// Send the token in this file as a bearer token to the remote
    /// upstream NAME (repeatable; https://, or http:// to the loopback
    /// address only). Scripts never see it.
    #[arg(long, value_name = "NAME=FILE", value_parser = parse_token_file)]
    upstream_token_file: Vec<(String, PathBuf)>,
}

fn parse_token_file(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(path)))
        }
        _ => Err(format!(
            "'{s}' is not NAME=FILE (the upstream's name, then the token file)"
        )),
    }
}

/// The upstreams with their tokens: each `--upstream-token-file` names one
/// remote upstream, once.
fn upstreams(mcp: &McpArgs) -> Result<Vec<UpstreamSpec>> {
    let mut specs = mcp.upstream.clone();
    for (i, (name, path)) in mcp.upstream_token_file.iter().enumerate() {
        if mcp.upstream_token_file[..i].iter().any(|(n, _)| n == name) {
            bail!("--upstream-token-file names upstream '{name}' twice");
        }
        let Some(spec) = specs
            .iter_mut()
            .find(|s| s.name.as_deref() == Some(name.as_str()))
        else {
            bail!("--upstream-token-file names '{name}', but no --upstream is named {name}=URL");
        };
        let token = read_secret(path, "token")?;
        *spec = spec.clone().with_token(&token)?;
    }
    Ok(specs)
}

fn parse_upstream(s: &str) -> Result<UpstreamSpec, String> {
    UpstreamSpec::parse(s).map_err(|e| e.to_string())
}

fn parse_max_sessions(s: &str) -> Result<usize, String> {
    parse_count(s, "sessions", ServerConfig::MAX_MAX_SESSIONS)
}

fn parse_max_connections(s: &str) -> Result<usize, String> {
    parse_count(s, "connections", HttpConfig::MAX_MAX_CONNECTIONS)
}

/// Reads the bearer token: the file when given, else the environment.
fn token(file: Option<&Path>) -> Result<Option<String>> {
    if let Some(path) = file {
        return read_secret(path, "token").map(Some);
    }
    let raw = match std::env::var(TOKEN_ENV) {
        Ok(text) => text,
        Err(std::env::VarError::NotPresent) => return Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => bail!("{TOKEN_ENV} is not UTF-8 text"),
    };
    let token = raw.trim();
    if token.is_empty() {
        bail!("{TOKEN_ENV} is set but empty; unset it or give a token");
    }
    Ok(Some(token.to_owned()))
}

/// Runs the server until the client disconnects (stdio) or the process is
/// stopped (HTTP).
pub(crate) async fn serve(mcp: &McpArgs, sandbox_args: &SandboxArgs) -> Result<u8> {
    // The token and origins are checked before the sandbox is built, so
    // that a refused configuration fails at once.
    let (max_reply, reply_memory) = mcp.replies.bytes(mcp.http.is_some())?;
    let http = match mcp.http {
        Some(addr) => {
            let mut http = HttpConfig::new(addr)
                .max_connections(mcp.max_connections)
                .reply_memory(reply_memory)
                .listen(mcp.timeouts.listen(mcp.max_http_connections));
            for origin in &mcp.allow_origin {
                http = http.allow_origin(origin);
            }
            // Only HTTP reads the environment's token; stdio has no use for one.
            if let Some(token) = token(mcp.token_file.as_deref())? {
                http = http.token(token);
            }
            http.validate()?;
            Some(http)
        }
        None => None,
    };
    let config = ServerConfig::default()
        .max_sessions(mcp.max_sessions)
        .session_ttl(mcp.session_ttl.0)
        .max_code_bytes(sandbox_args.max_script_bytes())
        .max_reply_bytes(max_reply);
    // With upstreams, scripts find their tools from Lua (catalog.search,
    // catalog.describe), so a large upstream does not fill run_lua's
    // description.
    let specs = upstreams(mcp)?;
    let mut builder = sandbox_args.builder()?.discovery(!specs.is_empty());
    let mut names: Vec<String> = Vec::new();
    for spec in &specs {
        let started = std::time::Instant::now();
        let upstream = Upstream::start(spec, upstream::DEFAULT_START_TIMEOUT).await?;
        // The server answers nothing until its upstreams are up: say what
        // the wait was for.
        eprintln!(
            "moonbox mcp: upstream {}: {} tools, started in {} ms",
            upstream.name(),
            upstream.tool_names().len(),
            started.elapsed().as_millis()
        );
        if names.iter().any(|n| n == upstream.name()) {
            bail!(
                "two upstream servers are named '{}'; name them apart with NAME=COMMAND",
                upstream.name()
            );
        }
        names.push(upstream.name().to_owned());
        for capability in upstream.capabilities() {
            builder = builder.capability(capability);
        }
        // The capabilities hold the connection; the child lives as long as
        // the server does.
    }
    let server = McpServer::new(builder.build()?, config)?;
    // SIGTERM or Ctrl-C drains either transport: calls in flight finish
    // and are answered, new ones are refused.
    let shutdown = shutdown_signal()?;
    match http {
        Some(http) => {
            let bound = server.bind_http(http).await?;
            eprintln!(
                "moonbox mcp: serving streamable HTTP at http://{}{}",
                bound.local_addr()?,
                moonbox_mcp::PATH
            );
            bound.run_until(shutdown).await?;
        }
        None => server.serve_stdio_until(shutdown).await?,
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_cap_is_bounded() {
        assert_eq!(parse_max_sessions("64"), Ok(64));
        assert!(parse_max_sessions("0").is_err());
        assert!(parse_max_sessions("10001").is_err());
        assert!(parse_max_sessions("many").is_err());
        assert_eq!(parse_max_connections("256"), Ok(256));
        assert!(parse_max_connections("0").is_err());
        assert!(parse_max_connections("10001").is_err());
    }

    #[test]
    fn token_file_is_trimmed_and_must_not_be_empty() {
        let dir = std::env::temp_dir().join(format!("moonbox-mcp-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "s3cret-token-for-tests\n").unwrap();
        assert_eq!(
            token(Some(&file)).unwrap().as_deref(),
            Some("s3cret-token-for-tests")
        );
        std::fs::write(&file, " \n").unwrap();
        assert!(token(Some(&file)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
