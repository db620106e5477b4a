//! Admission control: a bound on evals running at once and on requests
//! waiting for a turn. A request past both is refused at once (429), and a
//! request that waits longer than the queue wait is refused too, so no
//! queue grows without bound and no client waits without knowing why.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
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
    /// Each tenant's share, so that one tenant cannot take every turn or
    /// every place in the queue.
    tenants: Arc<Mutex<HashMap<Arc<str>, Share>>>,
}

/// What one tenant holds.
struct Share {
    /// Requests running or waiting.
    admitted: usize,
    /// Its turns to run: half the server's (at least one).
    running: Arc<Semaphore>,
}

/// A tenant's place among the admitted; released when dropped.
struct TenantPlace {
    tenants: Arc<Mutex<HashMap<Arc<str>, Share>>>,
    tenant: Arc<str>,
}

impl Drop for TenantPlace {
    fn drop(&mut self) {
        let mut tenants = self.tenants.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(share) = tenants.get_mut(&self.tenant) {
            share.admitted = share.admitted.saturating_sub(1);
        }
    }
}

/// A turn to run: held for the length of an eval.
pub(crate) struct Turn {
    _running: OwnedSemaphorePermit,
    _tenant_running: Option<OwnedSemaphorePermit>,
    _tenant: Option<TenantPlace>,
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
            tenants: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Requests one tenant may have running or waiting: a quarter of the
    /// server's (at least one).
    fn admitted_share(&self) -> usize {
        (self.max_running.saturating_add(self.max_queued) / 4).max(1)
    }

    /// Evals one tenant may run at once: half the server's (at least one).
    fn running_share(&self) -> usize {
        (self.max_running / 2).max(1)
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

    /// Waits for a turn of `tenant` (`None`: a server without keys), or
    /// refuses. With keys, a tenant has at most a quarter of the places
    /// (running and waiting) and half the turns, so that another tenant
    /// always finds room.
    ///
    /// # Errors
    /// `overloaded` (429, `Retry-After`) when every turn and every place in
    /// the queue is taken, when the tenant holds its share of them, or
    /// after waiting the queue wait for a turn.
    ///
    /// # Cancel safety
    /// Dropping the future gives up the place in the queue.
    pub(crate) async fn enter(&self, tenant: Option<&Arc<str>>) -> Result<Turn, ApiError> {
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
        let (place, tenant_turns) = match tenant {
            None => (None, None),
            Some(tenant) => {
                let mut tenants = self.tenants.lock().unwrap_or_else(PoisonError::into_inner);
                let share = tenants.entry(tenant.clone()).or_insert_with(|| Share {
                    admitted: 0,
                    running: Arc::new(Semaphore::new(self.running_share())),
                });
                if share.admitted >= self.admitted_share() {
                    return Err(overloaded(format!(
                        "this tenant has {} requests running or waiting, its share of the server's places; wait for one to finish",
                        share.admitted
                    )));
                }
                share.admitted += 1;
                let place = TenantPlace {
                    tenants: self.tenants.clone(),
                    tenant: tenant.clone(),
                };
                (Some(place), Some(share.running.clone()))
            }
        };
        self.queued.fetch_add(1, Ordering::Relaxed);
        let queued = Queued(&self.queued);
        // The tenant's turn first, then the server's: a tenant waiting for
        // its own turn holds none of the server's.
        let turns = async {
            let tenant_running = match tenant_turns {
                Some(turns) => Some(turns.acquire_owned().await.map_err(|_| stopping())?),
                None => None,
            };
            let running = self
                .running
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| stopping())?;
            Ok::<_, ApiError>((tenant_running, running))
        };
        let (tenant_running, running) = tokio::time::timeout(self.queue_wait, turns)
            .await
            .map_err(|_| {
                overloaded(format!(
                    "waited {} ms for a turn to run; the server is busy, try again later",
                    self.queue_wait.as_millis()
                ))
            })??;
        drop(queued);
        Ok(Turn {
            _running: running,
            _tenant_running: tenant_running,
            _tenant: place,
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
        let first = admission.enter(None).await.unwrap();
        assert_eq!(admission.running(), 1);
        // The second waits in the queue.
        let waiting = tokio::spawn({
            let admission = Arc::new(admission);
            let a = admission.clone();
            async move {
                let turn = a.enter(None).await;
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
        let _first = admission.enter(None).await.unwrap();
        let a = admission.clone();
        let _second = tokio::spawn(async move { a.enter(None).await.map(drop) });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(admission.queued(), 1);
        let third = admission.enter(None).await.err().unwrap();
        assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(third.kind, "overloaded");
        assert_eq!(third.retry_after, Some(RETRY_AFTER_OVERLOAD));
    }

    #[tokio::test]
    async fn a_tenant_takes_at_most_half_the_turns_and_a_quarter_of_the_places() {
        // 2 turns, 6 places waiting: a tenant runs 1 at once, and holds 2.
        let admission = Arc::new(Admission::new(2, 6, Duration::from_millis(200)));
        let (greedy, other): (Arc<str>, Arc<str>) = (Arc::from("greedy"), Arc::from("other"));
        let _running = admission.enter(Some(&greedy)).await.unwrap();
        // Its second waits for its own turn, though the server has one free.
        let second = admission.enter(Some(&greedy)).await.err().unwrap();
        assert!(
            second.message.contains("waited 200 ms"),
            "{}",
            second.message
        );
        let a = admission.clone();
        let g = greedy.clone();
        let waiting = tokio::spawn(async move { a.enter(Some(&g)).await.map(drop) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let third = admission.enter(Some(&greedy)).await.err().unwrap();
        assert!(third.message.contains("its share"), "{}", third.message);
        // Another tenant runs at once on the turn left.
        let began = std::time::Instant::now();
        let _other = admission.enter(Some(&other)).await.unwrap();
        assert!(began.elapsed() < Duration::from_millis(100));
        assert_eq!(admission.running(), 2);
        let _ = waiting.await;
    }

    #[tokio::test]
    async fn a_request_does_not_wait_past_the_queue_wait() {
        let admission = Admission::new(1, 4, Duration::from_millis(50));
        let _first = admission.enter(None).await.unwrap();
        let second = admission.enter(None).await.err().unwrap();
        assert_eq!(second.kind, "overloaded");
        assert!(
            second.message.contains("waited 50 ms"),
            "{}",
            second.message
        );
        assert_eq!(admission.queued(), 0);
    }
}
