//! The open sessions: id -> moonbox session, owned by a tenant, with a cap
//! and an idle TTL.
//!
//! Ids are 128 random bits in hex. A session belongs to the tenant that
//! opened it: to any other tenant it does not exist (404), so an id that
//! leaks opens nothing. One eval runs in a session at a time; a second is
//! refused (409) rather than queued.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use moonbox::{CancelHandle, Limits, Sandbox, Session};

use crate::error::ApiError;

/// One open session.
pub(crate) struct Slot {
    pub(crate) session: tokio::sync::Mutex<Session<()>>,
    /// The limits it opened with.
    pub(crate) limits: Limits,
    cancel: CancelHandle,
    /// Set while an eval holds the session. The sweep reads this, never
    /// the lock: a sweep that tried the lock held it for a moment, in
    /// which an eval arriving was told `session_busy`.
    running: AtomicBool,
}

impl Slot {
    /// Marks the session as running an eval until the guard is dropped;
    /// call it while holding [`Slot::session`].
    pub(crate) fn running(&self) -> Running<'_> {
        self.running.store(true, Ordering::Release);
        Running(self)
    }
}

/// Marks a session as running an eval; see [`Slot::running`].
pub(crate) struct Running<'a>(&'a Slot);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
    }
}

struct Entry {
    slot: Arc<Slot>,
    tenant: Option<String>,
    last_used: Instant,
}

#[derive(Default)]
struct Table {
    open: HashMap<String, Entry>,
    /// Sessions being started, counted against the caps: in all, and by
    /// tenant.
    starting: usize,
    starting_by: HashMap<String, usize>,
}

impl Table {
    /// Sessions `tenant` holds or is starting.
    fn held_by(&self, tenant: &str) -> usize {
        let open = self
            .open
            .values()
            .filter(|entry| entry.tenant.as_deref() == Some(tenant))
            .count();
        open + self.starting_by.get(tenant).copied().unwrap_or(0)
    }
}

pub(crate) struct Sessions {
    max: usize,
    /// Sessions one tenant may hold.
    per_tenant: usize,
    ttl: Duration,
    table: Mutex<Table>,
}

/// A place under the caps, held while a session starts: taken by
/// [`Sessions::reserve`], filled by [`Sessions::start`], given back when
/// dropped.
pub(crate) struct Reservation<'a> {
    sessions: &'a Sessions,
    tenant: Option<String>,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut table = self.sessions.table();
        table.starting -= 1;
        if let Some(tenant) = &self.tenant
            && let Some(n) = table.starting_by.get_mut(tenant)
        {
            *n -= 1;
            if *n == 0 {
                table.starting_by.remove(tenant);
            }
        }
    }
}

impl Sessions {
    pub(crate) fn new(max: usize, per_tenant: usize, ttl: Duration) -> Sessions {
        Sessions {
            max,
            per_tenant,
            ttl,
            table: Mutex::new(Table::default()),
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // The table holds no invariant a panic mid-update could break.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sessions open now.
    pub(crate) fn live(&self) -> usize {
        self.table().open.len()
    }

    /// Takes a place for a session of `tenant` under the caps.
    ///
    /// # Errors
    /// `too_many_sessions` (429) at the server's cap or the tenant's.
    pub(crate) fn reserve(&self, tenant: Option<&str>) -> Result<Reservation<'_>, ApiError> {
        let (closed, result) = {
            let mut table = self.table();
            let closed = sweep(&mut table, self.ttl);
            let result = self.take_place(&mut table, tenant);
            (closed, result)
        };
        // Closed sessions are dropped (their instances freed) unlocked.
        drop(closed);
        result?;
        Ok(Reservation {
            sessions: self,
            tenant: tenant.map(str::to_owned),
        })
    }

    fn take_place(&self, table: &mut Table, tenant: Option<&str>) -> Result<(), ApiError> {
        let full = |what: String| {
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_sessions",
                format!(
                    "{what}; close one (DELETE /v1/sessions/ID) or wait for an idle one to expire ({} s)",
                    self.ttl.as_secs()
                ),
            )
            .retry_after(Duration::from_secs(1))
        };
        if let Some(tenant) = tenant {
            let held = table.held_by(tenant);
            if held >= self.per_tenant {
                return Err(full(format!(
                    "tenant '{tenant}' has {held} sessions open, its bound"
                )));
            }
        }
        if table.open.len() + table.starting >= self.max {
            return Err(full(format!(
                "{} sessions are open, the server's bound",
                self.max
            )));
        }
        table.starting += 1;
        if let Some(tenant) = tenant {
            *table.starting_by.entry(tenant.to_owned()).or_default() += 1;
        }
        Ok(())
    }

    /// Starts a session of `sandbox` in a reserved place and returns its id.
    ///
    /// # Errors
    /// The start's failure as an [`moonbox::EvalError`] (a limit too small
    /// to start one); `internal` (500) when no id can be made.
    ///
    /// # Cancel safety
    /// Dropping the future releases the place.
    pub(crate) async fn start(
        &self,
        reservation: Reservation<'_>,
        sandbox: &Sandbox,
    ) -> Result<Result<String, moonbox::EvalError>, ApiError> {
        let id = new_id()?;
        let session = match sandbox.session(()).await {
            Ok(session) => session,
            Err(e) => {
                return match e.eval_error() {
                    Some(stop) => Ok(Err(stop.clone())),
                    None => Err(ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "internal",
                        format!("cannot start a session: {e}"),
                    )),
                };
            }
        };
        let slot = Arc::new(Slot {
            limits: *sandbox.limits(),
            cancel: session.cancel_handle(),
            session: tokio::sync::Mutex::new(session),
            running: AtomicBool::new(false),
        });
        let tenant = reservation.tenant.clone();
        self.table().open.insert(
            id.clone(),
            Entry {
                slot,
                tenant,
                last_used: Instant::now(),
            },
        );
        drop(reservation);
        Ok(Ok(id))
    }

    /// Whether `slot` is still the open session `id`.
    pub(crate) fn is_open(&self, id: &str, slot: &Arc<Slot>) -> bool {
        self.table()
            .open
            .get(id)
            .is_some_and(|entry| Arc::ptr_eq(&entry.slot, slot))
    }

    /// The session `id` of `tenant`. Only an eval that runs in it marks it
    /// as used ([`Sessions::touch`]): a refused request does not keep a
    /// session alive.
    ///
    /// # Errors
    /// `unknown_session` (404) for an id that is not open or is another
    /// tenant's.
    pub(crate) fn get(&self, id: &str, tenant: Option<&str>) -> Result<Arc<Slot>, ApiError> {
        let (found, _closed) = {
            let mut table = self.table();
            let closed = sweep(&mut table, self.ttl);
            let found = match table.open.get(id) {
                Some(entry) if entry.tenant.as_deref() == tenant => Ok(entry.slot.clone()),
                _ => Err(self.unknown(id)),
            };
            (found, closed)
        };
        found
    }

    /// Marks a session as used now, so that its idle time starts when its
    /// eval ends.
    pub(crate) fn touch(&self, id: &str) {
        if let Some(entry) = self.table().open.get_mut(id) {
            entry.last_used = Instant::now();
        }
    }

    /// Closes a session of `tenant`, cancelling its running eval.
    ///
    /// # Errors
    /// `unknown_session` (404), as for [`Sessions::get`].
    pub(crate) fn close(&self, id: &str, tenant: Option<&str>) -> Result<(), ApiError> {
        let (found, _closed) = {
            let mut table = self.table();
            let closed = sweep(&mut table, self.ttl);
            let found = match table.open.get(id) {
                Some(entry) if entry.tenant.as_deref() == tenant => table.open.remove(id),
                _ => None,
            };
            (found, closed)
        };
        let entry = found.ok_or_else(|| self.unknown(id))?;
        entry.slot.cancel.cancel();
        Ok(())
    }

    /// Closes the sessions idle past the TTL.
    pub(crate) fn sweep(&self) {
        let closed = sweep(&mut self.table(), self.ttl);
        drop(closed);
    }

    /// Closes every session, cancelling their evals.
    pub(crate) fn close_all(&self) {
        let closed: Vec<Entry> = self.table().open.drain().map(|(_, entry)| entry).collect();
        for entry in &closed {
            entry.slot.cancel.cancel();
        }
    }

    pub(crate) fn unknown(&self, id: &str) -> ApiError {
        let shown: String = id.chars().take(64).collect();
        ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_session",
            format!(
                "no open session has the id '{shown}': it was closed, or idle for longer than {} s; open a new one with POST /v1/sessions",
                self.ttl.as_secs()
            ),
        )
    }
}

/// Closes idle sessions (one running an eval is never idle) and returns
/// them, for the caller to drop once the table is unlocked: dropping a
/// session frees its instance, which should not hold up other requests.
#[must_use]
fn sweep(table: &mut Table, ttl: Duration) -> Vec<Entry> {
    let now = Instant::now();
    let idle: Vec<String> = table
        .open
        .iter()
        .filter(|(_, entry)| {
            let busy = entry.slot.running.load(Ordering::Acquire);
            !busy && now.saturating_duration_since(entry.last_used) >= ttl
        })
        .map(|(id, _)| id.clone())
        .collect();
    let mut closed = Vec::with_capacity(idle.len());
    for id in idle {
        if let Some(entry) = table.open.remove(&id) {
            entry.slot.cancel.cancel();
            closed.push(entry);
        }
    }
    closed
}

fn new_id() -> Result<String, ApiError> {
    crate::hex::random::<16>().map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("no random bytes for a session id: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_sweep_never_makes_an_eval_find_its_session_busy() {
        let sessions = Arc::new(Sessions::new(4, 4, Duration::from_secs(600)));
        let sandbox = Sandbox::builder().build().unwrap();
        let reservation = sessions.reserve(None).unwrap();
        let id = sessions
            .start(reservation, &sandbox)
            .await
            .unwrap()
            .unwrap();
        let slot = sessions.get(&id, None).unwrap();
        // Sweeps in a loop, as the sweeper and every lookup do.
        let stop = Arc::new(AtomicBool::new(false));
        let sweeper = {
            let (sessions, stop) = (sessions.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut sweeps = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    sessions.sweep();
                    sweeps += 1;
                }
                sweeps
            })
        };
        // Evals taking the idle session, as `eval_in` does.
        let mut busy = 0;
        for _ in 0..200_000 {
            match slot.session.try_lock() {
                Ok(_session) => {
                    let _running = slot.running();
                }
                Err(_) => busy += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
        let sweeps = sweeper.join().unwrap();
        assert!(sweeps > 0);
        assert_eq!(
            busy, 0,
            "{busy} evals found the session busy in {sweeps} sweeps"
        );
    }
}
