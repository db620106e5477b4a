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
use moonbox::{CancelHandle, Sandbox, Session};

use crate::error::ApiError;

/// One open session.
pub(crate) struct Slot {
    pub(crate) session: tokio::sync::Mutex<Session<()>>,
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
    pub(crate) fn new(max: usize, ttl: Duration) -> Sessions {
        Sessions {
            max,
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
        {
            let mut table = self.table();
            sweep(&mut table, self.ttl);
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
        }
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

    /// The session `id` of `tenant`, marked as used now.
    ///
    /// # Errors
    /// `unknown_session` (404) for an id that is not open or is another
    /// tenant's.
    pub(crate) fn get(&self, id: &str, tenant: Option<&str>) -> Result<Arc<Slot>, ApiError> {
        let mut table = self.table();
        sweep(&mut table, self.ttl);
        match table.open.get_mut(id) {
            Some(entry) if entry.tenant.as_deref() == tenant => {
                entry.last_used = Instant::now();
                Ok(entry.slot.clone())
            }
            _ => Err(self.unknown(id)),
        }
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
        let mut table = self.table();
        sweep(&mut table, self.ttl);
        match table.open.get(id) {
            Some(entry) if entry.tenant.as_deref() == tenant => {
                if let Some(entry) = table.open.remove(id) {
                    entry.slot.cancel.cancel();
                }
                Ok(())
            }
            _ => Err(self.unknown(id)),
        }
    }

    /// Closes the sessions idle past the TTL.
    pub(crate) fn sweep(&self) {
        sweep(&mut self.table(), self.ttl);
    }

    /// Closes every session, cancelling their evals.
    pub(crate) fn close_all(&self) {
        for (_, entry) in self.table().open.drain() {
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

/// Closes idle sessions; one running an eval is never idle.
fn sweep(table: &mut Table, ttl: Duration) {
    let now = Instant::now();
    table.open.retain(|_, entry| {
        let busy = entry.slot.session.try_lock().is_err();
        let keep = busy || now.saturating_duration_since(entry.last_used) < ttl;
        if !keep {
            entry.slot.cancel.cancel();
        }
        keep
    });
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
