//! [`ListenConfig`]: the bounds every HTTP server of moonbox enforces.

use std::time::Duration;

/// A setting out of its bounds; the message names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The bounds of an HTTP transport: how many connections it holds open,
/// and how long a client has for each step of a request. Every bound has a
/// default and a largest value; [`ListenConfig::validate`] refuses one out
/// of range with a message that names it.
///
/// ```
/// use std::time::Duration;
/// let listen = moonbox_service::ListenConfig::default()
///     .max_connections(64)
///     .write_timeout(Duration::from_secs(10));
/// assert!(listen.validate().is_ok());
/// assert!(listen.max_connections(0).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListenConfig {
    /// TCP connections open at once. At the cap, the connection idle
    /// longest (between requests, or still sending its first headers) is
    /// closed to make room; when none is idle, a new connection is answered
    /// `503 too_many_connections` and closed. Keep it below the process's
    /// open-file limit (`ulimit -n`), less a hundred or so for the server's
    /// other files. Default [`ListenConfig::DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// How long a client may take to send a request's headers, counted
    /// from when the connection opens or its previous answer was sent: an
    /// idle keep-alive connection is closed after it too. Default
    /// [`ListenConfig::DEFAULT_HEADER_TIMEOUT`].
    pub header_timeout: Duration,
    /// How long a request body may take to arrive once its headers have.
    /// Default [`ListenConfig::DEFAULT_BODY_TIMEOUT`].
    pub body_timeout: Duration,
    /// How long a client may take to read what the server has to send,
    /// counted from when the server first has to wait for it until all of
    /// it is sent: a client that stops reading an answer is disconnected
    /// after this, and the answer freed. Default
    /// [`ListenConfig::DEFAULT_WRITE_TIMEOUT`].
    pub write_timeout: Duration,
}

impl ListenConfig {
    /// Default [`ListenConfig::max_connections`]: below the usual open-file
    /// limit of 1,024, with room for the server's other files.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
    /// Most [`ListenConfig::max_connections`].
    pub const MAX_MAX_CONNECTIONS: usize = 65_536;
    /// Default [`ListenConfig::header_timeout`].
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default [`ListenConfig::body_timeout`].
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default [`ListenConfig::write_timeout`].
    pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(30);
    /// Most of each timeout.
    pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);

    /// Sets [`ListenConfig::max_connections`].
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n;
        self
    }

    /// Sets [`ListenConfig::header_timeout`].
    #[must_use]
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// Sets [`ListenConfig::body_timeout`].
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Sets [`ListenConfig::write_timeout`].
    #[must_use]
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// Checks every bound.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first setting out of range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=Self::MAX_MAX_CONNECTIONS).contains(&self.max_connections) {
            return Err(ConfigError(format!(
                "max_connections is {}; it must be 1 to {}",
                self.max_connections,
                Self::MAX_MAX_CONNECTIONS
            )));
        }
        for (name, value) in [
            ("header_timeout", self.header_timeout),
            ("body_timeout", self.body_timeout),
            ("write_timeout", self.write_timeout),
        ] {
            if value.is_zero() || value > Self::MAX_TIMEOUT {
                return Err(ConfigError(format!(
                    "{name} is {} ms; it must be above 0 and at most {} s",
                    value.as_millis(),
                    Self::MAX_TIMEOUT.as_secs()
                )));
            }
        }
        Ok(())
    }
}

impl Default for ListenConfig {
    fn default() -> Self {
        ListenConfig {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            write_timeout: Self::DEFAULT_WRITE_TIMEOUT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_is_checked_and_named() {
        let listen = ListenConfig::default();
        assert!(listen.validate().is_ok());
        let refused = |l: ListenConfig| l.validate().unwrap_err().0;
        assert!(refused(listen.max_connections(0)).contains("max_connections is 0"));
        assert!(refused(listen.max_connections(65_537)).contains("max_connections"));
        assert!(refused(listen.header_timeout(Duration::ZERO)).contains("header_timeout"));
        assert!(refused(listen.body_timeout(Duration::from_secs(601))).contains("body_timeout"));
        assert!(refused(listen.write_timeout(Duration::ZERO)).contains("write_timeout"));
        assert!(
            listen
                .write_timeout(Duration::from_secs(600))
                .validate()
                .is_ok()
        );
    }
}
