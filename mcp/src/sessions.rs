//! The Lua sessions of `new_session`: moonbox sessions kept in the table
//! every moonbox server shares ([`moonbox_service::sessions`]), with an
//! idle TTL and a cap; and that table's refusals as tool errors.
//!
//! A session is used by one eval at a time: its lock is held for the eval,
//! and a second call on a busy session is refused (see
//! [`ToolError::Busy`]) rather than queued, so that a model never waits
//! behind a long script without knowing why. The one wait: a call that
//! arrives while a cancelled call winds down (its eval stopping, the
//! session restarting) waits for it, up to a few seconds. There are no tenants here:
//! whoever holds an id may use it.

use std::sync::Arc;
use std::time::Duration;

use moonbox::{Sandbox, Session};
use moonbox_service::sessions::{self, SessionError};

use crate::error::ToolError;

/// One open session.
pub(crate) type Slot = sessions::Slot<Session<()>>;

/// A slot for `session`, whose stop cancels its running eval (and poisons
/// it).
pub(crate) fn slot(session: Session<()>) -> Arc<Slot> {
    let cancel = session.cancel_handle();
    Slot::new(session, move || cancel.cancel())
}

/// The session table.
pub(crate) struct Sessions {
    sandbox: Sandbox,
    table: sessions::Sessions<Session<()>>,
}

impl Sessions {
    pub(crate) fn new(sandbox: Sandbox, max: usize, ttl: Duration) -> Sessions {
        Sessions {
            sandbox,
            table: sessions::Sessions::new(max, max, ttl),
        }
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
        let reservation = self.table.reserve(None).map_err(|e| self.refusal(e))?;
        let session = self
            .sandbox
            .session(())
            .await
            .map_err(|e| ToolError::Start(e.to_string()))?;
        reservation.fill(slot(session)).map_err(|e| self.refusal(e))
    }

    /// The session with this id. Only a call that runs in it marks it as
    /// used ([`Sessions::touch`]).
    ///
    /// # Errors
    /// [`ToolError::UnknownSession`] for an id that is not open.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Slot>, ToolError> {
        self.table.get(id, None).map_err(|e| self.refusal(e))
    }

    /// Whether `slot` is still the open session `id`.
    pub(crate) fn is_open(&self, id: &str, slot: &Slot) -> bool {
        self.table.is_open(id, slot)
    }

    /// Marks a session as used now, so that its idle time starts when its
    /// eval ends.
    pub(crate) fn touch(&self, id: &str) {
        self.table.touch(id);
    }

    /// Closes a session, cancelling its eval if one is running, and any
    /// eval started in it later: a call that already took the slot but has
    /// not started its eval yet then fails at once (the cancel is sticky)
    /// rather than running in a closed session.
    ///
    /// # Errors
    /// [`ToolError::UnknownSession`] for an id that is not open.
    pub(crate) fn close(&self, id: &str) -> Result<(), ToolError> {
        self.table.close(id, None).map_err(|e| self.refusal(e))
    }

    /// Puts `fresh` in place of `old`, the guarded session of `slot`, when
    /// `slot` is still the open session `id`; returns the session replaced,
    /// or `None` (and drops `fresh`) when `id` was closed meanwhile.
    pub(crate) fn restart(
        &self,
        id: &str,
        slot: &Slot,
        old: &mut Session<()>,
        fresh: Session<()>,
    ) -> Option<Session<()>> {
        let cancel = fresh.cancel_handle();
        self.table
            .replace(id, slot, old, fresh, move || cancel.cancel())
    }

    /// Closes the sessions idle for longer than the TTL.
    pub(crate) fn sweep(&self) {
        self.table.sweep();
    }

    /// The error for an id that is not open.
    pub(crate) fn unknown(&self, id: &str) -> ToolError {
        self.refusal(sessions::unknown(id))
    }

    /// The table's refusal as a tool error.
    fn refusal(&self, e: SessionError) -> ToolError {
        let ttl = self.table.ttl();
        match e {
            SessionError::Unknown { id } => ToolError::UnknownSession { id, ttl },
            SessionError::Full { max } => ToolError::TooManySessions { max, ttl },
            // No owners here, so no owner's cap; the server's is the same.
            SessionError::OwnerFull { held, .. } => ToolError::TooManySessions { max: held, ttl },
            other => ToolError::Start(other.to_string()),
        }
    }
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
        assert!(!sessions.is_open(&id, &slot));

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
}
