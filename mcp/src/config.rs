//! The server's settings: sessions, bounds and the HTTP transport.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use moonbox_service::{ListenConfig, reply};

use crate::error::Error;

/// What the server allows, apart from the sandbox's own limits.
///
/// Build one with [`ServerConfig::default`] and set the fields to change;
/// [`McpServer::new`](crate::McpServer::new) checks them.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The most sessions open at once (1 to [`ServerConfig::MAX_MAX_SESSIONS`]).
    /// Past it, `new_session` is a tool error until one is closed or
    /// expires. It also bounds how many calls without a session run at
    /// once: up to four times as many more wait their turn, and a call past
    /// that is a tool error. Default: 64.
    pub max_sessions: usize,
    /// How long a session may sit idle (no call using it) before it is
    /// closed. A session whose eval is running is never idle. Default: 10
    /// minutes.
    pub session_ttl: Duration,
    /// The largest `code` a call may carry, in bytes; the same bound
    /// applies to `inputs`, measured as JSON, and to `args`, `files` and
    /// `stdin` together (their bytes and the files' names). Default: 16
    /// MiB, as `moonbox run --max-script-bytes`.
    pub max_code_bytes: u64,
    /// The shortest time between two progress notifications of one call's
    /// output: writes in between are sent together. Default: 25 ms.
    pub progress_interval: Duration,
    /// Extra text appended to `run_lua`'s description, for what the
    /// embedder adds to the sandbox beyond what the description lists
    /// (capabilities offered from elsewhere, conventions). Default: none.
    pub extra_description: Option<String>,
    /// The largest answer to a call, in bytes of its JSON (the report in
    /// `structuredContent`, with the text line). An eval whose report is
    /// larger is answered as a tool error, `reply_too_large`, with the
    /// report minus its values (and minus its output, if that does not fit
    /// either). Default [`reply::DEFAULT_MAX_REPLY_BYTES`] (16 MiB); at
    /// least [`reply::MIN_MAX_REPLY_BYTES`].
    pub max_reply_bytes: usize,
}

impl ServerConfig {
    /// The largest [`max_sessions`](Self::max_sessions) accepted.
    pub const MAX_MAX_SESSIONS: usize = 10_000;
    /// The default [`max_sessions`](Self::max_sessions).
    pub const DEFAULT_MAX_SESSIONS: usize = 64;
    /// The default [`session_ttl`](Self::session_ttl).
    pub const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(600);
    /// The default [`max_code_bytes`](Self::max_code_bytes).
    pub const DEFAULT_MAX_CODE_BYTES: u64 = 16 << 20;
    /// The default [`progress_interval`](Self::progress_interval).
    pub const DEFAULT_PROGRESS_INTERVAL: Duration = Duration::from_millis(25);

    /// Sets [`max_sessions`](Self::max_sessions).
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }

    /// Sets [`session_ttl`](Self::session_ttl).
    pub fn session_ttl(mut self, ttl: Duration) -> Self {
        self.session_ttl = ttl;
        self
    }

    /// Sets [`max_code_bytes`](Self::max_code_bytes).
    pub fn max_code_bytes(mut self, max: u64) -> Self {
        self.max_code_bytes = max;
        self
    }

    /// Sets [`progress_interval`](Self::progress_interval).
    pub fn progress_interval(mut self, interval: Duration) -> Self {
        self.progress_interval = interval;
        self
    }

    /// Sets [`max_reply_bytes`](Self::max_reply_bytes).
    pub fn max_reply_bytes(mut self, max: usize) -> Self {
        self.max_reply_bytes = max;
        self
    }

    /// Sets [`extra_description`](Self::extra_description).
    pub fn extra_description(mut self, text: impl Into<String>) -> Self {
        self.extra_description = Some(text.into());
        self
    }

    /// Checks that every field is within its bounds.
    ///
    /// # Errors
    /// [`Error::Config`] naming the field.
    pub fn validate(&self) -> Result<(), Error> {
        if !(1..=Self::MAX_MAX_SESSIONS).contains(&self.max_sessions) {
            return Err(Error::Config(format!(
                "max_sessions is {}; it must be 1 to {}",
                self.max_sessions,
                Self::MAX_MAX_SESSIONS
            )));
        }
        if self.session_ttl.is_zero() {
            return Err(Error::Config(
                "session_ttl must be greater than zero".to_owned(),
            ));
        }
        if self.max_code_bytes == 0 {
            return Err(Error::Config(
                "max_code_bytes must be greater than zero".to_owned(),
            ));
        }
        if self.progress_interval > Duration::from_secs(10) {
            return Err(Error::Config(
                "progress_interval must be at most 10s".to_owned(),
            ));
        }
        // Checked against the most memory answers may have.
        reply::check(self.max_reply_bytes, reply::MAX_REPLY_MEMORY)
            .map_err(|e| Error::Config(e.to_string()))?;
        Ok(())
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            session_ttl: Self::DEFAULT_SESSION_TTL,
            max_code_bytes: Self::DEFAULT_MAX_CODE_BYTES,
            progress_interval: Self::DEFAULT_PROGRESS_INTERVAL,
            extra_description: None,
            max_reply_bytes: reply::DEFAULT_MAX_REPLY_BYTES,
        }
    }
}

/// The streamable HTTP transport's settings.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Where to listen. Default: `127.0.0.1:8765`. Any address that is not
    /// loopback needs a [`token`](Self::token).
    pub addr: SocketAddr,
    /// Browser origins accepted besides the loopback ones
    /// (`http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`), as
    /// `scheme://host[:port]`, with `:*` for any port. A request without an
    /// `Origin` header is accepted. Default: none.
    pub allowed_origins: Vec<String>,
    /// The bearer token every request must carry (`Authorization: Bearer
    /// TOKEN`), compared in constant time. Required on a non-loopback
    /// address. Default: none.
    pub token: Option<String>,
    /// The most MCP connections (the transport's sessions, opened by
    /// `initialize` and named by the `Mcp-Session-Id` header) open at once,
    /// 1 to [`HttpConfig::MAX_MAX_CONNECTIONS`]. Past it, an `initialize`
    /// is answered `503` until a client closes its connection (HTTP
    /// `DELETE`) or one idles out. Default: 256.
    pub max_connections: usize,
    /// The TCP transport's bounds, shared with `moonbox serve`: sockets
    /// open at once, and the header, body and write timeouts. Default:
    /// [`ListenConfig::default`].
    pub listen: ListenConfig,
    /// The memory answers over [`reply::SMALL_REPLY_BYTES`] may hold at
    /// once, from when a call's answer is made until its client has taken
    /// it (or the write timeout has cut the client off). An answer that
    /// does not fit is a tool error, `replies_busy`, with the report minus
    /// its values. At least the server's
    /// [`max_reply_bytes`](ServerConfig::max_reply_bytes). Default
    /// [`reply::DEFAULT_REPLY_MEMORY`] (256 MiB).
    pub reply_memory: usize,
}

impl HttpConfig {
    /// The default listening address.
    pub const DEFAULT_ADDR: SocketAddr =
        SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 8765);
    /// The largest [`max_connections`](Self::max_connections) accepted.
    pub const MAX_MAX_CONNECTIONS: usize = 10_000;
    /// The default [`max_connections`](Self::max_connections).
    pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
    /// The origins always accepted.
    pub const LOOPBACK_ORIGINS: [&'static str; 3] =
        ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

    /// Settings for listening on `addr`, with no extra origins and no
    /// token.
    pub fn new(addr: SocketAddr) -> Self {
        HttpConfig {
            addr,
            allowed_origins: Vec::new(),
            token: None,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            listen: ListenConfig::default(),
            reply_memory: reply::DEFAULT_REPLY_MEMORY,
        }
    }

    /// Adds an accepted browser origin (see
    /// [`allowed_origins`](Self::allowed_origins)).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins.push(origin.into());
        self
    }

    /// Sets the bearer token.
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Sets [`max_connections`](Self::max_connections).
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max;
        self
    }

    /// Sets [`reply_memory`](Self::reply_memory).
    pub fn reply_memory(mut self, bytes: usize) -> Self {
        self.reply_memory = bytes;
        self
    }

    /// Sets the TCP transport's bounds ([`listen`](Self::listen)).
    pub fn listen(mut self, listen: ListenConfig) -> Self {
        self.listen = listen;
        self
    }

    /// Checks the settings: a token on a non-loopback address, a token
    /// that is a plausible secret, origins that parse, and a connection
    /// cap within bounds.
    ///
    /// # Errors
    /// [`Error::TokenRequired`], [`Error::BadToken`], [`Error::BadOrigin`]
    /// or [`Error::Config`].
    pub fn validate(&self) -> Result<(), Error> {
        if !(1..=Self::MAX_MAX_CONNECTIONS).contains(&self.max_connections) {
            return Err(Error::Config(format!(
                "max_connections is {}; it must be 1 to {}",
                self.max_connections,
                Self::MAX_MAX_CONNECTIONS
            )));
        }
        self.listen
            .validate()
            .map_err(|e| Error::Config(e.to_string()))?;
        reply::check(reply::MIN_MAX_REPLY_BYTES, self.reply_memory)
            .map_err(|e| Error::Config(e.to_string()))?;
        if let Some(token) = &self.token {
            check_token(token)?;
        } else if !self.addr.ip().is_loopback() {
            return Err(Error::TokenRequired { addr: self.addr });
        }
        for origin in &self.allowed_origins {
            check_origin(origin)?;
        }
        Ok(())
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig::new(Self::DEFAULT_ADDR)
    }
}

impl std::fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConfig")
            .field("addr", &self.addr)
            .field("allowed_origins", &self.allowed_origins)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("max_connections", &self.max_connections)
            .field("listen", &self.listen)
            .field("reply_memory", &self.reply_memory)
            .finish()
    }
}

/// The shortest token accepted, in bytes.
const MIN_TOKEN_BYTES: usize = 16;

fn check_token(token: &str) -> Result<(), Error> {
    if token.len() < MIN_TOKEN_BYTES {
        return Err(Error::BadToken(format!(
            "it is {} bytes; use at least {MIN_TOKEN_BYTES} random bytes (for example, 32 hex digits)",
            token.len()
        )));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::BadToken(
            "it must be printable ASCII without spaces, as an HTTP header carries it".to_owned(),
        ));
    }
    Ok(())
}

/// An origin is `scheme://host[:port]` or `scheme://host:*`, with no path.
fn check_origin(origin: &str) -> Result<(), Error> {
    let bad = |why: &str| Error::BadOrigin {
        origin: origin.to_owned(),
        why: why.to_owned(),
    };
    let base = origin.strip_suffix(":*").unwrap_or(origin);
    let uri: axum::http::Uri = base
        .parse()
        .map_err(|_| bad("it is not a URL such as https://app.example.com:8443"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(bad("the scheme must be http or https")),
    }
    if uri.authority().is_none_or(|a| a.host().is_empty()) {
        return Err(bad("it has no host"));
    }
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return Err(bad("an origin has no path or query"));
    }
    if base.len() != origin.len() && uri.port().is_some() {
        return Err(bad("give either a port or :*, not both"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_within_bounds() {
        assert!(ServerConfig::default().validate().is_ok());
        assert!(HttpConfig::default().validate().is_ok());
    }

    #[test]
    fn session_cap_is_bounded() {
        let config = ServerConfig::default();
        assert!(config.clone().max_sessions(0).validate().is_err());
        let over = ServerConfig::MAX_MAX_SESSIONS + 1;
        assert!(config.clone().max_sessions(over).validate().is_err());
        assert!(config.max_sessions(1).validate().is_ok());
    }

    #[test]
    fn answer_bounds_are_checked() {
        let small = ServerConfig::default().max_reply_bytes(1000).validate();
        assert!(matches!(small, Err(Error::Config(m)) if m.contains("max_reply_bytes is 1000")));
        let memory = HttpConfig::default().reply_memory(1000).validate();
        assert!(matches!(memory, Err(Error::Config(m)) if m.contains("reply_memory is 1000")));
    }

    #[test]
    fn a_public_address_needs_a_token() {
        let http = HttpConfig::new("0.0.0.0:8765".parse().unwrap());
        assert!(matches!(http.validate(), Err(Error::TokenRequired { .. })));
        let http = http.token("0123456789abcdef0123456789abcdef");
        assert!(http.validate().is_ok());
        let loopback = HttpConfig::new("[::1]:0".parse().unwrap());
        assert!(loopback.validate().is_ok());
    }

    #[test]
    fn the_connection_cap_is_bounded() {
        let http = HttpConfig::default();
        assert!(http.clone().max_connections(0).validate().is_err());
        let over = HttpConfig::MAX_MAX_CONNECTIONS + 1;
        assert!(http.clone().max_connections(over).validate().is_err());
        assert!(http.max_connections(1).validate().is_ok());
    }

    #[test]
    fn short_or_spaced_tokens_are_refused() {
        assert!(HttpConfig::default().token("short").validate().is_err());
        assert!(
            HttpConfig::default()
                .token("0123456789 abcdef0123456789")
                .validate()
                .is_err()
        );
    }

    #[test]
    fn origins_are_scheme_host_and_port() {
        for good in [
            "https://app.example.com",
            "https://app.example.com:8443",
            "http://intranet:*",
            "http://[::1]:3000",
        ] {
            assert!(check_origin(good).is_ok(), "{good}");
        }
        for bad in [
            "app.example.com",
            "ftp://x",
            "https://x/path",
            "https://x:1:*",
            "",
        ] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn debug_hides_the_token() {
        let http = HttpConfig::default().token("0123456789abcdef0123456789abcdef");
        assert!(!format!("{http:?}").contains("0123"));
    }
}
