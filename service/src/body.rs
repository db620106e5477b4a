//! Reading a request body within a size and a time bound.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, header};

/// Why a body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// The body (or its declared length) is past the bound.
    #[error("the request body is larger than this server's {max} bytes")]
    TooLarge {
        /// The bound, in bytes.
        max: usize,
    },
    /// The body did not arrive in time.
    #[error("the request body did not arrive within {} ms", .after.as_millis())]
    Timeout {
        /// The body timeout.
        after: Duration,
    },
    /// The connection failed while the body was read.
    #[error("the request body could not be read: {0}")]
    Failed(String),
}

impl BodyError {
    /// The HTTP status of the refusal: 413, 408, or 400 for a failed
    /// connection.
    pub fn status(&self) -> axum::http::StatusCode {
        use axum::http::StatusCode;
        match self {
            BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::Timeout { .. } => StatusCode::REQUEST_TIMEOUT,
            BodyError::Failed(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// A body whose declared length is at most this many bytes is small: a
/// server may read it without taking one of its bounded places for
/// reading bodies, since each connection carries at most one and the
/// connection cap bounds them (512 connections hold at most 32 MiB of
/// them). So bodies that stall at their bound, holding every place, do
/// not lock out the small requests other clients send.
pub const SMALL_BODY_BYTES: usize = 64 << 10;

/// Whether the request declares a body of at most [`SMALL_BODY_BYTES`]
/// (a `Content-Length`; a body sent in chunks declares none, and is not
/// small). Read such a body with a bound of at most [`SMALL_BODY_BYTES`].
///
/// ```
/// use axum::http::{HeaderMap, header};
/// let mut headers = HeaderMap::new();
/// assert!(!moonbox_service::body::is_small(&headers));
/// headers.insert(header::CONTENT_LENGTH, "200".parse().unwrap());
/// assert!(moonbox_service::body::is_small(&headers));
/// ```
pub fn is_small(headers: &HeaderMap) -> bool {
    declared(headers).is_some_and(|n| n <= SMALL_BODY_BYTES as u64)
}

/// The length a request declares for its body.
fn declared(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// Reads `body` whole, refusing one declared or found longer than `max`
/// bytes before reading past it, and one that takes longer than `timeout`.
///
/// # Errors
/// [`BodyError`] says which bound it broke, or that the connection failed.
///
/// # Cancel safety
/// Dropping the future drops what was read.
pub async fn read(
    headers: &HeaderMap,
    body: Body,
    max: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError> {
    if declared(headers).is_some_and(|n| n > u64::try_from(max).unwrap_or(u64::MAX)) {
        return Err(BodyError::TooLarge { max });
    }
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, max)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => {
            // axum reports the limit as an error whose source is
            // `LengthLimitError`; anything else is the connection's.
            if is_length_limit(&e) {
                Err(BodyError::TooLarge { max })
            } else {
                Err(BodyError::Failed(e.to_string()))
            }
        }
        Err(_) => Err(BodyError::Timeout { after: timeout }),
    }
}

/// `body`, holding `guard` until it is dropped: once it is all sent, or
/// the connection is gone. Whatever `guard` releases on drop (a place, a
/// mark that a request is in flight) lasts as long as the answer.
pub fn with_guard<G: Send + Unpin + 'static>(body: Body, guard: G) -> Body {
    Body::new(Guarded {
        inner: body,
        _guard: guard,
    })
}

/// A body with a guard; see [`with_guard`].
struct Guarded<G> {
    inner: Body,
    _guard: G,
}

impl<G: Send + Unpin + 'static> http_body::Body for Guarded<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = std::pin::Pin::into_inner(self);
        std::pin::Pin::new(&mut this.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = s.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(length: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(n) = length {
            headers.insert(header::CONTENT_LENGTH, n.parse().unwrap());
        }
        headers
    }

    #[tokio::test]
    async fn a_body_within_the_bound_is_read_whole() {
        let read = read(&headers(None), Body::from("abc"), 3, Duration::from_secs(1)).await;
        assert_eq!(read, Ok(Bytes::from("abc")));
    }

    #[tokio::test]
    async fn a_long_body_is_refused_by_its_declared_or_its_read_length() {
        let timeout = Duration::from_secs(1);
        let declared = read(&headers(Some("4")), Body::from("abc"), 3, timeout).await;
        assert_eq!(declared, Err(BodyError::TooLarge { max: 3 }));
        let found = read(&headers(None), Body::from("abcd"), 3, timeout).await;
        assert_eq!(found, Err(BodyError::TooLarge { max: 3 }));
    }

    #[tokio::test]
    async fn a_body_that_never_ends_is_refused_at_the_timeout() {
        let stalled = Body::from_stream(futures_stall());
        let after = Duration::from_millis(50);
        let read = read(&headers(None), stalled, 100, after).await;
        assert_eq!(read, Err(BodyError::Timeout { after }));
    }

    /// A stream that sends one chunk and then nothing, forever.
    fn futures_stall() -> impl futures_core::Stream<Item = Result<Bytes, std::io::Error>> {
        struct Stall(bool);
        impl futures_core::Stream for Stall {
            type Item = Result<Bytes, std::io::Error>;
            fn poll_next(
                mut self: std::pin::Pin<&mut Self>,
                _: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Option<Self::Item>> {
                if self.0 {
                    std::task::Poll::Pending
                } else {
                    self.0 = true;
                    std::task::Poll::Ready(Some(Ok(Bytes::from("a"))))
                }
            }
        }
        Stall(false)
    }
}
