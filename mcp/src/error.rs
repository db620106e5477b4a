//! Why the server did not start or stopped, and why a tool call was
//! refused before any Lua ran.

use std::net::SocketAddr;
use std::time::Duration;

/// Why the server did not start, or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A [`ServerConfig`](crate::ServerConfig) field is out of bounds.
    #[error("invalid server configuration: {0}")]
    Config(String),
    /// HTTP on a non-loopback address without a bearer token.
    #[error(
        "refusing to serve HTTP on {addr}, which is not a loopback address, without a bearer token; \
         give one with --token-file FILE or MOONBOX_MCP_TOKEN, or listen on 127.0.0.1"
    )]
    TokenRequired {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The bearer token is too short or has characters a header cannot
    /// carry.
    #[error("the bearer token is not usable: {0}")]
    BadToken(String),
    /// An allowed origin does not parse.
    #[error("allowed origin '{origin}' is not valid: {why}")]
    BadOrigin {
        /// The origin as given.
        origin: String,
        /// What is wrong with it.
        why: String,
    },
    /// The HTTP address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Reading or writing the transport failed.
    #[error("transport error: {0}")]
    Io(#[from] std::io::Error),
    /// The MCP handshake or the connection failed.
    #[error("MCP connection error: {0}")]
    Protocol(String),
    /// An upstream MCP server (code mode) could not be started or used.
    #[error("upstream '{name}': {message}")]
    Upstream {
        /// The upstream's name, or its program when it has none yet.
        name: String,
        /// What went wrong.
        message: String,
    },
}

/// Why a tool call was refused before any Lua ran: the text is the one line
/// the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    #[error(
        "unknown session '{id}': it was closed, expired after {} idle, or never existed; open one with new_session",
        human(*ttl)
    )]
    UnknownSession { id: String, ttl: Duration },
    #[error(
        "the session limit ({max} open at once) is reached; close one with close_session or wait for idle ones to expire after {}",
        human(*ttl)
    )]
    TooManySessions { max: usize, ttl: Duration },
    #[error(
        "too many calls without a session ({running} running and {waiting} waiting, the most allowed); try again when one finishes"
    )]
    TooManyWaiting { running: usize, waiting: usize },
    #[error("{0}")]
    NoTurn(moonbox_service::admission::Refused),
    #[error(
        "session '{0}' is running another run_lua call; wait for it to finish (or cancel it), or use another session"
    )]
    Busy(String),
    #[error("`{what}` is {len} bytes, more than the {max} bytes allowed")]
    TooLarge {
        what: &'static str,
        len: u64,
        max: u64,
    },
    #[error("`args`, `files` and `stdin` take more than the {max} bytes allowed together")]
    FilesTooLarge { max: u64 },
    #[error("invalid arguments: {0}")]
    Arguments(String),
    #[error("the session did not start: {0}")]
    Start(String),
    #[error("the call was cancelled before it ran")]
    Cancelled,
}

impl From<moonbox_service::admission::Refused> for ToolError {
    fn from(refused: moonbox_service::admission::Refused) -> ToolError {
        use moonbox_service::admission::Refused;
        match refused {
            Refused::Full { running, queued } => ToolError::TooManyWaiting {
                running,
                waiting: queued,
            },
            other => ToolError::NoTurn(other),
        }
    }
}

/// A duration as a person writes it: `10 minutes`, `90 seconds`.
pub(crate) fn human(d: Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        format!("{} ms", d.as_millis())
    } else if secs.is_multiple_of(3600) {
        plural(secs / 3600, "hour")
    } else if secs.is_multiple_of(60) {
        plural(secs / 60, "minute")
    } else {
        plural(secs, "second")
    }
}

fn plural(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human(Duration::from_secs(600)), "10 minutes");
        assert_eq!(human(Duration::from_secs(3600)), "1 hour");
        assert_eq!(human(Duration::from_secs(90)), "90 seconds");
        assert_eq!(human(Duration::from_millis(250)), "250 ms");
    }

    #[test]
    fn the_cap_message_says_what_to_do() {
        let e = ToolError::TooManySessions {
            max: 3,
            ttl: Duration::from_secs(600),
        };
        assert_eq!(
            e.to_string(),
            "the session limit (3 open at once) is reached; close one with close_session or wait for idle ones to expire after 10 minutes"
        );
    }
}
