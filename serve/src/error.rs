//! Errors: [`Error`] for starting the server, [`ApiError`] for a refused
//! request.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting is out of bounds; the message names it.
    #[error("{0}")]
    Config(String),
    /// The address is not loopback and the server has no keys.
    #[error(
        "refusing to serve on {addr} without API keys: an address other than loopback needs a keys file (--keys FILE), and every request then needs a key"
    )]
    KeysRequired {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The keys file cannot be read or is malformed; the message says where.
    #[error("the keys file '{}': {why}", path.display())]
    Keys {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The system's error.
        source: std::io::Error,
    },
    /// The listener failed while serving.
    #[error("the listener failed: {0}")]
    Io(#[from] std::io::Error),
    /// NATS cannot be reached, refused the credentials, or a subscription
    /// failed; the message says which.
    #[error("{0}")]
    Nats(String),
}

/// A request the server refused before or instead of running it: an HTTP
/// status and a JSON body `{"error": {"kind": ..., "message": ...}}`, with
/// `Retry-After` when trying again later can succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    /// A stable snake_case name (docs/serve.md lists them).
    pub(crate) kind: &'static str,
    pub(crate) message: String,
    pub(crate) retry_after: Option<Duration>,
    /// The report of an eval that ran but whose answer could not be sent
    /// whole (its values dropped), so that what it wrote and cost is not
    /// lost.
    pub(crate) report: Option<serde_json::Value>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            kind,
            message: message.into(),
            retry_after: None,
            report: None,
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub(crate) fn retry_after(mut self, after: Duration) -> Self {
        self.retry_after = Some(after);
        self
    }

    /// Attaches the report of the eval that ran.
    pub(crate) fn with_report(mut self, report: serde_json::Value) -> Self {
        self.report = Some(report);
        self
    }

    /// The JSON body: `{"error": {"kind", "message", "retry_after_secs"?},
    /// "report"?}`.
    pub(crate) fn body(&self) -> serde_json::Value {
        let retry = self.retry_after.map(retry_secs);
        let mut body = moonbox_service::error_body(self.kind, &self.message, retry);
        if let Some(report) = &self.report {
            body["report"] = report.clone();
        }
        body
    }
}

/// Whole seconds for `Retry-After`, rounded up and at least 1.
pub(crate) fn retry_secs(after: Duration) -> u64 {
    let secs = after.as_secs() + u64::from(after.subsec_nanos() > 0);
    secs.max(1)
}

/// How long a client refused a turn is told to wait before trying again.
const RETRY_AFTER_OVERLOAD: Duration = Duration::from_secs(1);

/// A request given no turn to run: `overloaded` (429), or `draining` (503)
/// when the server stopped while it waited.
impl From<moonbox_service::admission::Refused> for ApiError {
    fn from(refused: moonbox_service::admission::Refused) -> ApiError {
        use moonbox_service::admission::Refused;
        match refused {
            Refused::Stopped => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "draining",
                "the server stopped before this request's turn came; send it to another instance",
            ),
            other => ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "overloaded",
                other.to_string(),
            ),
        }
        .retry_after(RETRY_AFTER_OVERLOAD)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = axum::body::Body::from(self.body().to_string());
        self.response(body)
    }
}

impl ApiError {
    /// The refusal's response with `body`, its JSON encoded already.
    pub(crate) fn response(&self, body: axum::body::Body) -> Response {
        let mut response = (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        if let Some(after) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_secs(after)));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(retry_secs(Duration::ZERO), 1);
        assert_eq!(retry_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_secs(Duration::from_millis(1001)), 2);
        assert_eq!(retry_secs(Duration::from_secs(60)), 60);
    }
}
