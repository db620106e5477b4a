//! The open sessions: id -> moonbox session, owned by a tenant, with a cap
//! and an idle TTL.
//!
//! Ids are 128 random bits in hex. A session belongs to the tenant that
//! opened it: to any other tenant it does not exist (404), so an id that
//! leaks opens nothing. One eval runs in a session at a time; a second is
//! refused (409) rather than queued.

use std::collections::HashMap;
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
}

struct Entry {
    slot: Arc<Slot>,
    tenant: Option<String>,
    last_used: Instant,
}

#[derive(Default)]
struct Table {
    open: HashMap<String, Entry>,
    /// Sessions being started, counted against the cap.
    starting: usize,
}

pub(crate) struct Sessions {
    max: usize,
    /// Sessions one tenant may hold.
    per_tenant: usize,
    ttl: Duration,
    table: Mutex<Table>,
}

/// A place under the cap, held while a session starts.
struct Reservation<'a>(&'a Sessions);

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.0.table().starting -= 1;
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

    /// Opens a session of `sandbox` for `tenant` and returns its id.
    ///
    /// # Errors
    /// `too_many_sessions` (429) at the cap; the start's failure as an
    /// [`moonbox::EvalError`] (a limit too small to start one).
    ///
    /// # Cancel safety
    /// Dropping the future releases the reserved place.
    pub(crate) async fn open(
        &self,
        sandbox: &Sandbox,
        tenant: Option<&str>,
    ) -> Result<Result<String, moonbox::EvalError>, ApiError> {
        let closed = {
            let mut table = self.table();
            let closed = sweep(&mut table, self.ttl);
            if let Some(tenant) = tenant {
                let held = table
                    .open
                    .values()
                    .filter(|entry| entry.tenant.as_deref() == Some(tenant))
                    .count();
                if held >= self.per_tenant {
                    return Err(ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        "too_many_sessions",
                        format!(
                            "tenant '{tenant}' has {held} sessions open, its bound; close one (DELETE /v1/sessions/ID) or wait for an idle one to expire ({} s)",
                            self.ttl.as_secs()
                        ),
                    )
                    .retry_after(Duration::from_secs(1)));
                }
            }
            if table.open.len() + table.starting >= self.max {
                return Err(ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "too_many_sessions",
                    format!(
                        "{} sessions are open, the server's bound; close one (DELETE /v1/sessions/ID) or wait for an idle one to expire ({} s)",
                        self.max,
                        self.ttl.as_secs()
                    ),
                )
                .retry_after(Duration::from_secs(1)));
            }
            table.starting += 1;
            closed
        };
        drop(closed);
        let reservation = Reservation(self);
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
        });
        let mut table = self.table();
        table.open.insert(
            id.clone(),
            Entry {
                slot,
                tenant: tenant.map(str::to_owned),
                last_used: Instant::now(),
            },
        );
        drop(table);
        drop(reservation);
        Ok(Ok(id))
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

    fn unknown(&self, id: &str) -> ApiError {
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
            let busy = entry.slot.session.try_lock().is_err();
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
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("no random bytes for a session id: {e}"),
        )
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
