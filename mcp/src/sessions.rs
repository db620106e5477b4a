//! The open sessions: id -> moonbox session, with an idle TTL and a cap.
//!
//! Ids are 128 random bits in hex, so that one client cannot guess
//! another's. A session is used by one eval at a time: its tokio mutex is
//! held for the eval, and a second call on a busy session is refused (see
//! [`ToolError::Busy`]) rather than queued, so that a model never waits
//! behind a long script without knowing why.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use moonbox::{CancelHandle, Sandbox, Session};

use crate::error::ToolError;

/// One open session.
pub(crate) struct Slot {
    /// Held for the length of an eval.
    pub(crate) session: tokio::sync::Mutex<Session<()>>,
    /// Stops the session's running eval (and poisons the session); swapped
    /// when the session is restarted.
    cancel: Mutex<CancelHandle>,
}

impl Slot {
    pub(crate) fn new(session: Session<()>) -> Arc<Slot> {
        let cancel = Mutex::new(session.cancel_handle());
        Arc::new(Slot {
            session: tokio::sync::Mutex::new(session),
            cancel,
        })
    }

    /// Cancels the running eval, if any; the session is poisoned after.
    pub(crate) fn cancel(&self) {
        self.cancel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cancel();
    }

    /// Puts a fresh session in place of `old` (the guarded one).
    pub(crate) fn replace(&self, old: &mut Session<()>, fresh: Session<()>) {
        *self.cancel.lock().unwrap_or_else(PoisonError::into_inner) = fresh.cancel_handle();
        *old = fresh;
    }

    fn is_busy(&self) -> bool {
        self.session.try_lock().is_err()
    }
}

struct Entry {
    slot: Arc<Slot>,
    last_used: Instant,
}

#[derive(Default)]
struct Table {
    open: HashMap<String, Entry>,
    /// Sessions being started, counted against the cap.
    starting: usize,
}

/// The session table.
pub(crate) struct Sessions {
    sandbox: Sandbox,
    max: usize,
    ttl: Duration,
    table: Mutex<Table>,
}

impl Sessions {
    pub(crate) fn new(sandbox: Sandbox, max: usize, ttl: Duration) -> Sessions {
        Sessions {
            sandbox,
            max,
            ttl,
            table: Mutex::new(Table::default()),
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // The table holds no invariant a panic mid-update could break.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a session and returns its id.
    ///
    /// # Errors
    /// [`ToolError::TooManySessions`] at the cap; [`ToolError::Start`] when
    /// the sandbox cannot start a session.
    ///
    /// # Cancel safety
    /// Dropping the future releases the reserved place; no session is
    /// left half-open.
    pub(crate) async fn open(&self) -> Result<String, ToolError> {
        {
            let mut table = self.table();
            sweep(&mut table, self.ttl);
            if table.open.len() + table.starting >= self.max {
                return Err(ToolError::TooManySessions {
                    max: self.max,
                    ttl: self.ttl,
                });
            }
            table.starting += 1;
        }
        let reservation = Reservation {
            sessions: self,
            held: true,
        };
        let id = new_id()?;
        let session = self
            .sandbox
            .session(())
            .await
            .map_err(|e| ToolError::Start(e.to_string()))?;
        reservation.fill(id.clone(), Slot::new(session));
        Ok(id)
    }

    /// The session with this id, marked as used now.
    ///
    /// # Errors
    /// [`ToolError::UnknownSession`] for an id that is not open.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Slot>, ToolError> {
        let mut table = self.table();
        sweep(&mut table, self.ttl);
        match table.open.get_mut(id) {
            Some(entry) => {
                entry.last_used = Instant::now();
                Ok(entry.slot.clone())
            }
            None => Err(self.unknown(id)),
        }
    }

    /// Whether a session with this id is open.
    pub(crate) fn is_open(&self, id: &str) -> bool {
        self.table().open.contains_key(id)
    }

    /// Marks a session as used now, so that its idle time starts when its
    /// eval ends.
    pub(crate) fn touch(&self, id: &str) {
        if let Some(entry) = self.table().open.get_mut(id) {
            entry.last_used = Instant::now();
        }
    }

    /// Closes a session, cancelling its eval if one is running.
    ///
    /// # Errors
    /// [`ToolError::UnknownSession`] for an id that is not open.
    pub(crate) fn close(&self, id: &str) -> Result<(), ToolError> {
        let entry = {
            let mut table = self.table();
            sweep(&mut table, self.ttl);
            table.open.remove(id)
        };
        let entry = entry.ok_or_else(|| self.unknown(id))?;
        if entry.slot.is_busy() {
            entry.slot.cancel();
        }
        Ok(())
    }

    /// Closes the sessions idle for longer than the TTL.
    pub(crate) fn sweep(&self) {
        sweep(&mut self.table(), self.ttl);
    }

    fn unknown(&self, id: &str) -> ToolError {
        // An id of any length may arrive; the message quotes a bounded part.
        let shown: String = id.chars().take(64).collect();
        ToolError::UnknownSession {
            id: shown,
            ttl: self.ttl,
        }
    }
}

/// A place reserved by [`Sessions::open`]: released when dropped (on
/// error or cancellation), or filled with the started session.
struct Reservation<'a> {
    sessions: &'a Sessions,
    held: bool,
}

impl Reservation<'_> {
    fn fill(mut self, id: String, slot: Arc<Slot>) {
        let mut table = self.sessions.table();
        table.starting = table.starting.saturating_sub(1);
        table.open.insert(
            id,
            Entry {
                slot,
                last_used: Instant::now(),
            },
        );
        self.held = false;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.held {
            let mut table = self.sessions.table();
            table.starting = table.starting.saturating_sub(1);
        }
    }
}

fn sweep(table: &mut Table, ttl: Duration) {
    let now = Instant::now();
    table
        .open
        .retain(|_, entry| now.duration_since(entry.last_used) < ttl || entry.slot.is_busy());
}

/// 128 bits from the operating system's generator, as 32 hex digits.
fn new_id() -> Result<String, ToolError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ToolError::Start(format!("no random bytes for a session id: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_32_hex_digits_and_differ() {
        let a = new_id().unwrap();
        let b = new_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
