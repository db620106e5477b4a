//! The open sessions: id -> moonbox session, with an idle TTL and a cap.
//!
//! Ids are 128 random bits in hex, so that one client cannot guess
//! another's. A session is used by one eval at a time: its tokio mutex is
//! held for the eval, and a second call on a busy session is refused (see
//! [`ToolError::Busy`]) rather than queued, so that a model never waits
//! behind a long script without knowing why.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Set while a call holds the session. The sweep reads this, never the
    /// lock: a sweep that tried the lock held it for a moment, in which a
    /// call arriving was told the session was busy.
    running: AtomicBool,
}

/// Marks a session as running a call; see [`Slot::running`].
pub(crate) struct Running<'a>(&'a Slot);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
    }
}

impl Slot {
    pub(crate) fn new(session: Session<()>) -> Arc<Slot> {
        let cancel = Mutex::new(session.cancel_handle());
        Arc::new(Slot {
            session: tokio::sync::Mutex::new(session),
            cancel,
            running: AtomicBool::new(false),
        })
    }

    /// Cancels the running eval, if any; the session is poisoned after.
    pub(crate) fn cancel(&self) {
        self.cancel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cancel();
    }

    /// Puts a fresh session in place of `old` (the guarded one), and
    /// returns the old one.
    fn replace(&self, old: &mut Session<()>, fresh: Session<()>) -> Session<()> {
        *self.cancel.lock().unwrap_or_else(PoisonError::into_inner) = fresh.cancel_handle();
        std::mem::replace(old, fresh)
    }

    /// Marks the session as running a call until the guard is dropped;
    /// call it while holding [`Slot::session`].
    pub(crate) fn running(&self) -> Running<'_> {
        self.running.store(true, Ordering::Release);
        Running(self)
    }

    fn is_busy(&self) -> bool {
        self.running.load(Ordering::Acquire)
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

    /// Closes a session, cancelling its eval if one is running, and any
    /// eval started in it later.
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
        // Whether or not an eval runs now: a call that already took the
        // slot but has not started its eval yet then fails at once (the
        // cancel is sticky) rather than running in a closed session.
        entry.slot.cancel();
        Ok(())
    }

    /// Puts `fresh` in place of `old`, the guarded session of `slot`, when
    /// `slot` is still the open session `id`; returns the session replaced,
    /// or `None` (and drops `fresh`) when `id` was closed meanwhile.
    ///
    /// Checked and done under the table's lock, so that a `close` either
    /// comes first (and nothing is restarted) or after (and cancels the
    /// fresh session).
    pub(crate) fn restart(
        &self,
        id: &str,
        slot: &Slot,
        old: &mut Session<()>,
        fresh: Session<()>,
    ) -> Option<Session<()>> {
        let table = self.table();
        let open = table
            .open
            .get(id)
            .is_some_and(|entry| std::ptr::eq(Arc::as_ptr(&entry.slot), slot));
        open.then(|| slot.replace(old, fresh))
    }

    /// Closes the sessions idle for longer than the TTL.
    pub(crate) fn sweep(&self) {
        sweep(&mut self.table(), self.ttl);
    }

    /// The error for an id that is not open.
    pub(crate) fn unknown(&self, id: &str) -> ToolError {
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
    use moonbox::ErrorKind;

    fn sandbox() -> Sandbox {
        Sandbox::builder().build().expect("the sandbox builds")
    }

    #[tokio::test]
    async fn a_call_that_looked_a_session_up_before_it_closed_does_not_run() {
        let sessions = Sessions::new(sandbox(), 4, Duration::from_secs(60));
        let id = sessions.open().await.unwrap();
        // A call finds the session; close_session runs before its eval
        // starts, while no eval is running.
        let slot = sessions.get(&id).unwrap();
        sessions.close(&id).unwrap();
        let mut session = slot.session.try_lock().unwrap();
        let err = session.eval("return 1").await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Cancelled);
    }

    #[tokio::test]
    async fn a_session_closed_during_its_restart_stays_closed() {
        let sandbox = sandbox();
        let sessions = Sessions::new(sandbox.clone(), 4, Duration::from_secs(60));

        let id = sessions.open().await.unwrap();
        let slot = sessions.get(&id).unwrap();
        let mut session = slot.session.try_lock().unwrap();
        let fresh = sandbox.session(()).await.unwrap();
        sessions.close(&id).unwrap();
        assert!(sessions.restart(&id, &slot, &mut session, fresh).is_none());
        assert!(!sessions.is_open(&id));

        // An open session is restarted; a close after that cancels the
        // fresh session.
        let id = sessions.open().await.unwrap();
        let slot = sessions.get(&id).unwrap();
        let mut session = slot.session.try_lock().unwrap();
        let fresh = sandbox.session(()).await.unwrap();
        assert!(sessions.restart(&id, &slot, &mut session, fresh).is_some());
        assert_eq!(session.eval("return 1").await.unwrap().values.len(), 1);
        sessions.close(&id).unwrap();
        let err = session.eval("return 1").await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Cancelled);
    }

    #[test]
    fn ids_are_32_hex_digits_and_differ() {
        let a = new_id().unwrap();
        let b = new_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
