//! The service's sessions: moonbox sessions, each with the limits it opened
//! with, kept in the table every moonbox server shares
//! ([`moonbox_service::sessions`]) and owned by tenants; and that table's
//! refusals as the API's errors.
//!
//! A session belongs to the tenant that opened it: to any other tenant it
//! does not exist (404), so an id that leaks opens nothing. One eval runs
//! in a session at a time; a second is refused (409) rather than queued.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use moonbox::{Limits, Sandbox, Session};
use moonbox_service::sessions::{self, Reservation, SessionError};

use crate::error::ApiError;

/// An open session and the limits it opened with.
pub(crate) struct Open {
    pub(crate) session: Session<()>,
    pub(crate) limits: Limits,
}

/// One open session, as the table holds it.
pub(crate) type Slot = sessions::Slot<Open>;

/// The open sessions.
pub(crate) struct Sessions {
    table: sessions::Sessions<Open>,
}

impl Sessions {
    pub(crate) fn new(max: usize, per_tenant: usize, ttl: Duration) -> Sessions {
        Sessions {
            table: sessions::Sessions::new(max, per_tenant, ttl),
        }
    }

    /// Sessions open now.
    pub(crate) fn live(&self) -> usize {
        self.table.live()
    }

    /// Takes a place for a session of `tenant` under the caps.
    ///
    /// # Errors
    /// `too_many_sessions` (429) at the server's cap or the tenant's.
    pub(crate) fn reserve(&self, tenant: Option<&str>) -> Result<Reservation<'_, Open>, ApiError> {
        self.table.reserve(tenant).map_err(|e| self.refusal(e))
    }

    /// Starts a session of `sandbox` in a reserved place and returns its id.
    ///
    /// # Errors
    /// The start's failure as an [`moonbox::EvalError`] (a limit too small
    /// to start one); `internal` (500) when it fails otherwise or no id can
    /// be made.
    ///
    /// # Cancel safety
    /// Dropping the future releases the place.
    pub(crate) async fn start(
        &self,
        reservation: Reservation<'_, Open>,
        sandbox: &Sandbox,
    ) -> Result<Result<String, moonbox::EvalError>, ApiError> {
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
        let cancel = session.cancel_handle();
        let open = Open {
            session,
            limits: *sandbox.limits(),
        };
        let slot = sessions::Slot::new(open, move || cancel.cancel());
        reservation.fill(slot).map(Ok).map_err(|e| self.refusal(e))
    }

    /// Whether `slot` is still the open session `id`.
    pub(crate) fn is_open(&self, id: &str, slot: &Slot) -> bool {
        self.table.is_open(id, slot)
    }

    /// The session `id` of `tenant`; only an eval that runs in it marks it
    /// as used ([`Sessions::touch`]).
    ///
    /// # Errors
    /// `unknown_session` (404) for an id that is not open or is another
    /// tenant's.
    pub(crate) fn get(&self, id: &str, tenant: Option<&str>) -> Result<Arc<Slot>, ApiError> {
        self.table.get(id, tenant).map_err(|e| self.refusal(e))
    }

    /// Marks a session as used now.
    pub(crate) fn touch(&self, id: &str) {
        self.table.touch(id);
    }

    /// Closes a session of `tenant`, cancelling its running eval.
    ///
    /// # Errors
    /// `unknown_session` (404), as for [`Sessions::get`].
    pub(crate) fn close(&self, id: &str, tenant: Option<&str>) -> Result<(), ApiError> {
        self.table.close(id, tenant).map_err(|e| self.refusal(e))
    }

    /// Closes the sessions idle past the TTL.
    pub(crate) fn sweep(&self) {
        self.table.sweep();
    }

    /// Closes every session, cancelling their evals.
    pub(crate) fn close_all(&self) {
        self.table.close_all();
    }

    /// The refusal of an id that is not open.
    pub(crate) fn unknown(&self, id: &str) -> ApiError {
        self.refusal(sessions::unknown(id))
    }

    /// The table's refusal as the API's error.
    fn refusal(&self, e: SessionError) -> ApiError {
        let ttl = self.table.ttl().as_secs();
        match e {
            SessionError::Full { .. } | SessionError::OwnerFull { .. } => {
                let what = match &e {
                    SessionError::OwnerFull { owner, held } => {
                        format!("tenant '{owner}' has {held} sessions open, its bound")
                    }
                    other => other.to_string(),
                };
                ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "too_many_sessions",
                    format!(
                        "{what}; close one (DELETE /v1/sessions/ID) or wait for an idle one to expire ({ttl} s)"
                    ),
                )
                .retry_after(Duration::from_secs(1))
            }
            SessionError::Unknown { id } => ApiError::new(
                StatusCode::NOT_FOUND,
                "unknown_session",
                format!(
                    "no open session has the id '{id}': it was closed, or idle for longer than {ttl} s; open a new one with POST /v1/sessions"
                ),
            ),
            other => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                other.to_string(),
            ),
        }
    }
}
