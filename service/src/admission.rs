//! [`Admission`]: a bound on the work running at once and on the requests
//! waiting for a turn, for every server. A request past both is refused at
//! once, and one that waits longer than the queue wait is refused too, so
//! no queue grows without bound and no client waits without knowing why.
//! With owners (tenants), one owner holds at most half the turns and a
//! quarter of the places, so that another always finds room.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// Why a request was given no turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    /// Every turn and every place in the queue is taken.
    #[error(
        "the server is running {running} evals and {queued} more are waiting, its bounds; try again later"
    )]
    Full {
        /// Turns in all.
        running: usize,
        /// Places in the queue in all.
        queued: usize,
    },
    /// The owner holds its share of the places.
    #[error(
        "this tenant has {held} requests running or waiting, its share of the server's places; wait for one to finish"
    )]
    Share {
        /// Places it holds.
        held: usize,
    },
    /// The request waited the queue wait for a turn.
    #[error("waited {} ms for a turn to run; the server is busy, try again later", .waited.as_millis())]
    Waited {
        /// The queue wait.
        waited: Duration,
    },
    /// The server stopped (see [`Admission::close`]).
    #[error("the server stopped before this request's turn came")]
    Stopped,
}

/// Turns to run and places to wait for one: see the [module](self).
#[derive(Debug)]
pub struct Admission {
    running: Arc<Semaphore>,
    admitted: Arc<Semaphore>,
    max_running: usize,
    max_queued: usize,
    queue_wait: Option<Duration>,
    queued: AtomicUsize,
    /// Each tenant's share, so that one tenant cannot take every turn or
    /// every place in the queue.
    tenants: Arc<Mutex<HashMap<Arc<str>, Share>>>,
}

/// What one tenant holds.
#[derive(Debug)]
struct Share {
    /// Requests running or waiting.
    admitted: usize,
    /// Its turns to run: half the server's (at least one).
    running: Arc<Semaphore>,
}

/// A tenant's place among the admitted; released when dropped.
#[derive(Debug)]
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

/// A turn to run: hold it for the length of the work.
#[derive(Debug)]
pub struct Turn {
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

impl Admission {
    /// Refuses every request waiting for a turn, and every later one.
    pub fn close(&self) {
        self.admitted.close();
        self.running.close();
    }

    /// `max_running` turns, with `max_queued` places to wait for one, for
    /// at most `queue_wait` (`None`: until a turn comes, or the waiter
    /// gives up).
    pub fn new(max_running: usize, max_queued: usize, queue_wait: Option<Duration>) -> Admission {
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
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// Evals running now.
    pub fn running(&self) -> usize {
        self.max_running
            .saturating_sub(self.running.available_permits())
    }

    /// Waits for a turn of `tenant` (`None`: a server without tenants), or
    /// refuses. A tenant has at most a quarter of the places (running and
    /// waiting) and half the turns, so that another tenant always finds
    /// room.
    ///
    /// # Errors
    /// [`Refused::Full`] when every turn and every place in the queue is
    /// taken, [`Refused::Share`] when the tenant holds its share of them,
    /// [`Refused::Waited`] after waiting the queue wait for a turn,
    /// [`Refused::Stopped`] once the server stopped.
    ///
    /// # Cancel safety
    /// Dropping the future gives up the place in the queue.
    pub async fn enter(&self, tenant: Option<&Arc<str>>) -> Result<Turn, Refused> {
        let admitted = match self.admitted.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(TryAcquireError::Closed) => return Err(Refused::Stopped),
            Err(TryAcquireError::NoPermits) => {
                return Err(Refused::Full {
                    running: self.max_running,
                    queued: self.max_queued,
                });
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
                    return Err(Refused::Share {
                        held: share.admitted,
                    });
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
                Some(turns) => Some(turns.acquire_owned().await.map_err(|_| Refused::Stopped)?),
                None => None,
            };
            let running = self
                .running
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| Refused::Stopped)?;
            Ok::<_, Refused>((tenant_running, running))
        };
        let (tenant_running, running) = match self.queue_wait {
            Some(wait) => tokio::time::timeout(wait, turns)
                .await
                .map_err(|_| Refused::Waited { waited: wait })??,
            None => turns.await?,
        };
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
        let admission = Admission::new(1, 1, Some(Duration::from_secs(60)));
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
        let admission = Arc::new(Admission::new(1, 1, Some(Duration::from_secs(60))));
        let _first = admission.enter(None).await.unwrap();
        let a = admission.clone();
        let _second = tokio::spawn(async move { a.enter(None).await.map(drop) });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(admission.queued(), 1);
        let third = admission.enter(None).await.err().unwrap();
        assert_eq!(
            third,
            Refused::Full {
                running: 1,
                queued: 1
            }
        );
    }

    #[tokio::test]
    async fn a_tenant_takes_at_most_half_the_turns_and_a_quarter_of_the_places() {
        // 2 turns, 6 places waiting: a tenant runs 1 at once, and holds 2.
        let admission = Arc::new(Admission::new(2, 6, Some(Duration::from_millis(200))));
        let (greedy, other): (Arc<str>, Arc<str>) = (Arc::from("greedy"), Arc::from("other"));
        let _running = admission.enter(Some(&greedy)).await.unwrap();
        // Its second waits for its own turn, though the server has one free.
        let second = admission.enter(Some(&greedy)).await.err().unwrap();
        assert!(second.to_string().contains("waited 200 ms"), "{second}");
        let a = admission.clone();
        let g = greedy.clone();
        let waiting = tokio::spawn(async move { a.enter(Some(&g)).await.map(drop) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let third = admission.enter(Some(&greedy)).await.err().unwrap();
        assert_eq!(third, Refused::Share { held: 2 });
        // Another tenant runs at once on the turn left.
        let began = std::time::Instant::now();
        let _other = admission.enter(Some(&other)).await.unwrap();
        assert!(began.elapsed() < Duration::from_millis(100));
        assert_eq!(admission.running(), 2);
        let _ = waiting.await;
    }

    #[tokio::test]
    async fn a_request_does_not_wait_past_the_queue_wait() {
        let admission = Admission::new(1, 4, Some(Duration::from_millis(50)));
        let _first = admission.enter(None).await.unwrap();
        let second = admission.enter(None).await.err().unwrap();
        assert_eq!(
            second,
            Refused::Waited {
                waited: Duration::from_millis(50)
            }
        );
        assert_eq!(admission.queued(), 0);
    }

    #[tokio::test]
    async fn without_a_queue_wait_a_request_waits_for_its_turn_and_a_stop_refuses_it() {
        let admission = Arc::new(Admission::new(1, 1, None));
        let first = admission.enter(None).await.unwrap();
        let a = admission.clone();
        let waiting = tokio::spawn(async move { a.enter(None).await.map(drop) });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(admission.queued(), 1);
        admission.close();
        assert_eq!(waiting.await.unwrap(), Err(Refused::Stopped));
        drop(first);
        assert_eq!(admission.enter(None).await.err(), Some(Refused::Stopped));
    }
}
