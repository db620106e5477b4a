//! [`ServeConfig`]: the server's address, keys and bounds.

use std::net::SocketAddr;
use std::time::Duration;

use moonbox_service::{ListenConfig, reply};

use crate::error::Error;
use crate::keys::Keys;

/// How the server listens and what it admits. Every bound has a default
/// and a largest value; [`ServeConfig::validate`] refuses one out of range
/// with a message that names it.
///
/// ```
/// use std::time::Duration;
/// let config = moonbox_serve::ServeConfig::new("127.0.0.1:0".parse().unwrap())
///     .max_running(8)
///     .max_queued(32)
///     .session_ttl(Duration::from_secs(60));
/// assert!(config.validate().is_ok());
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServeConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// Where to answer the health checks (`/healthz`, `/readyz`) alone, on
    /// a listener of their own that work never queues on, so that no load
    /// or attack on [`ServeConfig::addr`] fails a liveness probe. They are
    /// answered on `addr` too. Default: none.
    pub health_addr: Option<SocketAddr>,
    /// The tenants admitted; `None` admits every request without a key,
    /// which only a loopback address allows.
    pub keys: Option<Keys>,
    /// Evals running at once. Default [`ServeConfig::DEFAULT_MAX_RUNNING`].
    pub max_running: usize,
    /// Requests waiting for a turn to run, past which a request is refused
    /// at once (429). Default [`ServeConfig::DEFAULT_MAX_QUEUED`].
    pub max_queued: usize,
    /// How long a request waits for a turn before it is refused (429).
    /// Default [`ServeConfig::DEFAULT_QUEUE_WAIT`].
    pub queue_wait: Duration,
    /// Sessions open at once. Default [`ServeConfig::DEFAULT_MAX_SESSIONS`].
    pub max_sessions: usize,
    /// Sessions one tenant may hold open, with keys. Default
    /// [`ServeConfig::DEFAULT_MAX_SESSIONS_PER_TENANT`].
    pub max_sessions_per_tenant: usize,
    /// A session idle this long is closed. Default
    /// [`ServeConfig::DEFAULT_SESSION_TTL`].
    pub session_ttl: Duration,
    /// Bytes of Lua code in one request. Default
    /// [`ServeConfig::DEFAULT_MAX_CODE_BYTES`].
    pub max_code_bytes: usize,
    /// Bytes of one request body (code, inputs and the JSON around them);
    /// a longer body is refused (413). Default
    /// [`ServeConfig::DEFAULT_MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// Bytes of one answer's JSON; past it the answer is `413
    /// reply_too_large`, with the report minus its values. Default
    /// [`ServeConfig::DEFAULT_MAX_REPLY_BYTES`].
    pub max_reply_bytes: usize,
    /// Bytes that answers larger than 64 KiB may hold at once, from when
    /// they are encoded until their clients have taken them (or the write
    /// timeout has cut them off); an answer that does not fit is `503
    /// replies_busy`, with the report minus its values. Default
    /// [`ServeConfig::DEFAULT_REPLY_MEMORY`].
    pub reply_memory: usize,
    /// On shutdown, how long evals in flight may run on before they are
    /// cancelled. Default [`ServeConfig::DEFAULT_DRAIN_TIMEOUT`].
    pub drain_timeout: Duration,
    /// The HTTP transport's bounds: connections open, and the header,
    /// body and write timeouts ([`ListenConfig`], shared with `moonbox mcp
    /// --http`). Its `body_timeout` refuses a late body with 408.
    pub listen: ListenConfig,
}

impl ServeConfig {
    /// Default [`ServeConfig::max_running`].
    pub const DEFAULT_MAX_RUNNING: usize = 16;
    /// Most [`ServeConfig::max_running`].
    pub const MAX_MAX_RUNNING: usize = 4096;
    /// Default [`ServeConfig::max_queued`].
    pub const DEFAULT_MAX_QUEUED: usize = 64;
    /// Most [`ServeConfig::max_queued`].
    pub const MAX_MAX_QUEUED: usize = 100_000;
    /// Default [`ServeConfig::queue_wait`].
    pub const DEFAULT_QUEUE_WAIT: Duration = Duration::from_secs(10);
    /// Most [`ServeConfig::queue_wait`].
    pub const MAX_QUEUE_WAIT: Duration = Duration::from_secs(600);
    /// Default [`ServeConfig::max_sessions`].
    pub const DEFAULT_MAX_SESSIONS: usize = 256;
    /// Most [`ServeConfig::max_sessions`] (and per tenant).
    pub const MAX_MAX_SESSIONS: usize = 10_000;
    /// Default [`ServeConfig::max_sessions_per_tenant`]: a quarter of the
    /// default cap, so that one tenant cannot hold them all.
    pub const DEFAULT_MAX_SESSIONS_PER_TENANT: usize = 64;
    /// Default [`ServeConfig::session_ttl`].
    pub const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(600);
    /// Most [`ServeConfig::session_ttl`].
    pub const MAX_SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);
    /// Default [`ServeConfig::max_code_bytes`].
    pub const DEFAULT_MAX_CODE_BYTES: usize = 1 << 20;
    /// Default [`ServeConfig::max_body_bytes`].
    pub const DEFAULT_MAX_BODY_BYTES: usize = 8 << 20;
    /// Most [`ServeConfig::max_body_bytes`] (and code bytes).
    pub const MAX_MAX_BODY_BYTES: usize = 1 << 30;
    /// Default [`ServeConfig::max_reply_bytes`].
    pub const DEFAULT_MAX_REPLY_BYTES: usize = reply::DEFAULT_MAX_REPLY_BYTES;
    /// Least [`ServeConfig::max_reply_bytes`].
    pub const MIN_MAX_REPLY_BYTES: usize = reply::MIN_MAX_REPLY_BYTES;
    /// Default [`ServeConfig::reply_memory`].
    pub const DEFAULT_REPLY_MEMORY: usize = reply::DEFAULT_REPLY_MEMORY;
    /// Most [`ServeConfig::max_reply_bytes`] and
    /// [`ServeConfig::reply_memory`].
    pub const MAX_REPLY_MEMORY: usize = reply::MAX_REPLY_MEMORY;
    /// Default [`ServeConfig::drain_timeout`].
    pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
    /// Most [`ServeConfig::drain_timeout`].
    pub const MAX_DRAIN_TIMEOUT: Duration = Duration::from_secs(3600);

    /// The defaults, listening on `addr`, without keys.
    pub fn new(addr: SocketAddr) -> ServeConfig {
        ServeConfig {
            addr,
            health_addr: None,
            keys: None,
            max_running: Self::DEFAULT_MAX_RUNNING,
            max_queued: Self::DEFAULT_MAX_QUEUED,
            queue_wait: Self::DEFAULT_QUEUE_WAIT,
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            max_sessions_per_tenant: Self::DEFAULT_MAX_SESSIONS_PER_TENANT,
            session_ttl: Self::DEFAULT_SESSION_TTL,
            max_code_bytes: Self::DEFAULT_MAX_CODE_BYTES,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            max_reply_bytes: Self::DEFAULT_MAX_REPLY_BYTES,
            reply_memory: Self::DEFAULT_REPLY_MEMORY,
            drain_timeout: Self::DEFAULT_DRAIN_TIMEOUT,
            listen: ListenConfig::default(),
        }
    }

    /// Sets [`ServeConfig::health_addr`].
    pub fn health_addr(mut self, addr: SocketAddr) -> Self {
        self.health_addr = Some(addr);
        self
    }

    /// Requires a key from [`Keys`] on every request but the health checks.
    pub fn keys(mut self, keys: Keys) -> Self {
        self.keys = Some(keys);
        self
    }

    /// Sets [`ServeConfig::max_running`].
    pub fn max_running(mut self, n: usize) -> Self {
        self.max_running = n;
        self
    }

    /// Sets [`ServeConfig::max_queued`].
    pub fn max_queued(mut self, n: usize) -> Self {
        self.max_queued = n;
        self
    }

    /// Sets [`ServeConfig::queue_wait`].
    pub fn queue_wait(mut self, wait: Duration) -> Self {
        self.queue_wait = wait;
        self
    }

    /// Sets [`ServeConfig::max_sessions`].
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n;
        self
    }

    /// Sets [`ServeConfig::max_sessions_per_tenant`].
    pub fn max_sessions_per_tenant(mut self, n: usize) -> Self {
        self.max_sessions_per_tenant = n;
        self
    }

    /// Sets [`ServeConfig::session_ttl`].
    pub fn session_ttl(mut self, ttl: Duration) -> Self {
        self.session_ttl = ttl;
        self
    }

    /// Sets [`ServeConfig::max_code_bytes`].
    pub fn max_code_bytes(mut self, n: usize) -> Self {
        self.max_code_bytes = n;
        self
    }

    /// Sets [`ServeConfig::max_body_bytes`].
    pub fn max_body_bytes(mut self, n: usize) -> Self {
        self.max_body_bytes = n;
        self
    }

    /// Sets [`ServeConfig::max_reply_bytes`].
    pub fn max_reply_bytes(mut self, n: usize) -> Self {
        self.max_reply_bytes = n;
        self
    }

    /// Sets [`ServeConfig::reply_memory`].
    pub fn reply_memory(mut self, n: usize) -> Self {
        self.reply_memory = n;
        self
    }

    /// Sets [`ServeConfig::drain_timeout`].
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Sets the transport's bounds ([`ServeConfig::listen`]).
    pub fn listen(mut self, listen: ListenConfig) -> Self {
        self.listen = listen;
        self
    }

    /// Sets [`ListenConfig::max_connections`].
    pub fn max_connections(mut self, n: usize) -> Self {
        self.listen.max_connections = n;
        self
    }

    /// Sets [`ListenConfig::header_timeout`].
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.listen.header_timeout = timeout;
        self
    }

    /// Sets [`ListenConfig::body_timeout`].
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.listen.body_timeout = timeout;
        self
    }

    /// Sets [`ListenConfig::write_timeout`].
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.listen.write_timeout = timeout;
        self
    }

    /// Checks every bound, and that an address other than loopback has
    /// keys.
    ///
    /// # Errors
    /// [`Error::Config`] naming the setting out of range;
    /// [`Error::KeysRequired`] for a public address without keys.
    pub fn validate(&self) -> Result<(), Error> {
        if self.keys.is_none() && !self.addr.ip().is_loopback() {
            return Err(Error::KeysRequired { addr: self.addr });
        }
        let counts = [
            ("max_running", self.max_running, Self::MAX_MAX_RUNNING),
            ("max_queued", self.max_queued, Self::MAX_MAX_QUEUED),
            ("max_sessions", self.max_sessions, Self::MAX_MAX_SESSIONS),
            (
                "max_sessions_per_tenant",
                self.max_sessions_per_tenant,
                Self::MAX_MAX_SESSIONS,
            ),
            (
                "max_code_bytes",
                self.max_code_bytes,
                Self::MAX_MAX_BODY_BYTES,
            ),
            (
                "max_body_bytes",
                self.max_body_bytes,
                Self::MAX_MAX_BODY_BYTES,
            ),
        ];
        for (name, n, max) in counts {
            // A queue of zero is allowed: refuse whatever cannot run now.
            let least = usize::from(name != "max_queued");
            if !(least..=max).contains(&n) {
                return Err(Error::Config(format!(
                    "{name} is {n}; use {least} to {max}"
                )));
            }
        }
        let durations = [
            ("queue_wait", self.queue_wait, Self::MAX_QUEUE_WAIT),
            ("session_ttl", self.session_ttl, Self::MAX_SESSION_TTL),
            ("drain_timeout", self.drain_timeout, Self::MAX_DRAIN_TIMEOUT),
        ];
        for (name, d, max) in durations {
            if d.is_zero() || d > max {
                return Err(Error::Config(format!(
                    "{name} is {} ms; use more than 0 and at most {} s",
                    d.as_millis(),
                    max.as_secs()
                )));
            }
        }
        self.listen
            .validate()
            .map_err(|e| Error::Config(e.to_string()))?;
        reply::check(self.max_reply_bytes, self.reply_memory)
            .map_err(|e| Error::Config(e.to_string()))?;
        if self.max_code_bytes > self.max_body_bytes {
            return Err(Error::Config(format!(
                "max_code_bytes ({}) is more than max_body_bytes ({}), so code at its bound could never arrive; raise max_body_bytes",
                self.max_code_bytes, self.max_body_bytes
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> ServeConfig {
        ServeConfig::new("127.0.0.1:0".parse().unwrap())
    }

    #[test]
    fn a_public_address_needs_keys() {
        let public = ServeConfig::new("0.0.0.0:8080".parse().unwrap());
        assert!(matches!(public.validate(), Err(Error::KeysRequired { .. })));
        let v6 = ServeConfig::new("[::]:8080".parse().unwrap());
        assert!(matches!(v6.validate(), Err(Error::KeysRequired { .. })));
        assert!(local().validate().is_ok());
        assert!(
            ServeConfig::new("[::1]:0".parse().unwrap())
                .validate()
                .is_ok()
        );
    }

    #[test]
    fn every_bound_is_checked() {
        let refused = |c: ServeConfig| c.validate().unwrap_err().to_string();
        assert!(refused(local().max_running(0)).contains("max_running is 0"));
        assert!(refused(local().max_running(5000)).contains("max_running"));
        assert!(local().max_queued(0).validate().is_ok());
        assert!(refused(local().max_queued(100_001)).contains("max_queued"));
        assert!(refused(local().max_sessions(0)).contains("max_sessions"));
        assert!(refused(local().session_ttl(Duration::ZERO)).contains("session_ttl"));
        assert!(refused(local().queue_wait(Duration::from_secs(601))).contains("queue_wait"));
        assert!(refused(local().drain_timeout(Duration::ZERO)).contains("drain_timeout"));
        assert!(refused(local().max_code_bytes(10).max_body_bytes(5)).contains("never arrive"));
        assert!(refused(local().max_connections(0)).contains("max_connections is 0"));
        assert!(refused(local().max_connections(65_537)).contains("max_connections"));
        assert!(refused(local().header_timeout(Duration::ZERO)).contains("header_timeout"));
        assert!(refused(local().body_timeout(Duration::from_secs(601))).contains("body_timeout"));
        assert!(refused(local().write_timeout(Duration::ZERO)).contains("write_timeout"));
        assert!(refused(local().max_reply_bytes(1000)).contains("max_reply_bytes"));
        assert!(refused(local().reply_memory(1 << 20)).contains("reply_memory"));
        assert!(
            local()
                .max_reply_bytes(1 << 20)
                .reply_memory(1 << 20)
                .validate()
                .is_ok()
        );
        assert!(
            local()
                .max_connections(1)
                .header_timeout(Duration::from_millis(1))
                .body_timeout(Duration::from_secs(600))
                .write_timeout(Duration::from_millis(1))
                .validate()
                .is_ok()
        );
    }
}
