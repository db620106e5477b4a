//! Admission control: a bound on evals running at once and on requests
//! waiting for a turn. A request past both is refused at once (429), and a
//! request that waits longer than the queue wait is refused too, so no
//! queue grows without bound and no client waits without knowing why.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

use crate::error::ApiError;

/// How long a refused client is told to wait before trying again.
const RETRY_AFTER_OVERLOAD: Duration = Duration::from_secs(1);

pub(crate) struct Admission {
    running: Arc<Semaphore>,
    admitted: Arc<Semaphore>,
    max_running: usize,
    max_queued: usize,
    queue_wait: Duration,
    queued: AtomicUsize,
}

/// A turn to run: held for the length of an eval.
pub(crate) struct Turn {
    _running: OwnedSemaphorePermit,
    _admitted: OwnedSemaphorePermit,
}

/// Counts a request as queued while it lives.
struct Queued<'a>(&'a AtomicUsize);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The refusal of a request that waited while the server stopped.
fn stopping() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "draining",
        "the server stopped before this request's turn came; send it to another instance",
    )
    .retry_after(Duration::from_secs(1))
}

impl Admission {
    /// Refuses every request waiting for a turn, and every later one.
    pub(crate) fn close(&self) {
        self.admitted.close();
        self.running.close();
    }

    pub(crate) fn new(max_running: usize, max_queued: usize, queue_wait: Duration) -> Admission {
        Admission {
            running: Arc::new(Semaphore::new(max_running)),
            admitted: Arc::new(Semaphore::new(max_running.saturating_add(max_queued))),
            max_running,
            max_queued,
            queue_wait,
            queued: AtomicUsize::new(0),
        }
    }

    /// Requests waiting for a turn now.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Evals running now.
    pub(crate) fn running(&self) -> usize {
        self.max_running
            .saturating_sub(self.running.available_permits())
    }

    /// Waits for a turn, or refuses.
    ///
    /// # Errors
    /// `overloaded` (429, `Retry-After`) when every turn and every place in
    /// the queue is taken, or after waiting the queue wait for a turn.
    ///
    /// # Cancel safety
    /// Dropping the future gives up the place in the queue.
    pub(crate) async fn enter(&self) -> Result<Turn, ApiError> {
        let overloaded = |why: String| {
            ApiError::new(StatusCode::TOO_MANY_REQUESTS, "overloaded", why)
                .retry_after(RETRY_AFTER_OVERLOAD)
        };
        let admitted = match self.admitted.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(TryAcquireError::Closed) => return Err(stopping()),
            Err(TryAcquireError::NoPermits) => {
                return Err(overloaded(format!(
                    "the server is running {} evals and {} more are waiting, its bounds; try again later",
                    self.max_running, self.max_queued
                )));
            }
        };
        self.queued.fetch_add(1, Ordering::Relaxed);
        let queued = Queued(&self.queued);
        let running = tokio::time::timeout(self.queue_wait, self.running.clone().acquire_owned())
            .await
            .map_err(|_| {
                overloaded(format!(
                    "waited {} ms for a turn to run; the server is busy, try again later",
                    self.queue_wait.as_millis()
                ))
            })?
            .map_err(|_| stopping())?;
        drop(queued);
        Ok(Turn {
            _running: running,
            _admitted: admitted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn past_the_running_and_queued_bounds_a_request_is_refused_at_once() {
        let admission = Admission::new(1, 1, Duration::from_secs(60));
        let first = admission.enter().await.unwrap();
        assert_eq!(admission.running(), 1);
        // The second waits in the queue.
        let waiting = tokio::spawn({
            let admission = Arc::new(admission);
            let a = admission.clone();
            async move {
                let turn = a.enter().await;
                (turn.is_ok(), a)
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(first);
        let (ok, admission) = waiting.await.unwrap();
        assert!(ok);
        assert_eq!(admission.queued(), 0);
    }

    #[tokio::test]
    async fn a_full_queue_refuses_with_retry_after() {
        let admission = Arc::new(Admission::new(1, 1, Duration::from_secs(60)));
        let _first = admission.enter().await.unwrap();
        let a = admission.clone();
        let _second = tokio::spawn(async move { a.enter().await.map(drop) });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(admission.queued(), 1);
        let third = admission.enter().await.err().unwrap();
        assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(third.kind, "overloaded");
        assert_eq!(third.retry_after, Some(RETRY_AFTER_OVERLOAD));
    }

    #[tokio::test]
    async fn a_request_does_not_wait_past_the_queue_wait() {
        let admission = Admission::new(1, 4, Duration::from_millis(50));
        let _first = admission.enter().await.unwrap();
        let second = admission.enter().await.err().unwrap();
        assert_eq!(second.kind, "overloaded");
        assert!(
            second.message.contains("waited 50 ms"),
            "{}",
            second.message
        );
        assert_eq!(admission.queued(), 0);
    }
}
