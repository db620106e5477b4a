//! A cap on the streamable HTTP transport's own sessions: the MCP
//! connections a client opens with `initialize` and names with the
//! `Mcp-Session-Id` header (not the Lua sessions of `new_session`).
//!
//! rmcp's session manager keeps every connection until the client deletes
//! it or it idles out, with no limit on how many are open. [`Capped`] wraps
//! it: past the cap, creating a connection fails, and
//! [`limit_connections`] turns that failure into a `503` that says why.

use std::cell::Cell;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::{
    EventStore, ServerSseMessage, SessionId, SessionManager,
};

tokio::task_local! {
    /// Set when [`Capped`] refused a connection while serving the request
    /// of the current task.
    static REFUSED: Cell<bool>;
}

/// A session manager that holds at most `max` connections open.
pub(crate) struct Capped<M> {
    inner: M,
    max: usize,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    open: HashSet<SessionId>,
    /// Connections being created, counted against the cap.
    starting: usize,
}

/// Why a [`Capped`] manager failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CappedError<E: std::error::Error> {
    /// The cap is reached.
    #[error("{}", full(*.0))]
    Full(usize),
    /// The wrapped manager's error.
    #[error(transparent)]
    Inner(E),
}

/// What a client past the cap reads.
fn full(max: usize) -> String {
    format!(
        "the limit of {max} open MCP connections is reached; close one (an HTTP DELETE with its \
         Mcp-Session-Id) or wait for an idle one to expire"
    )
}

impl<M> Capped<M> {
    pub(crate) fn new(inner: M, max: usize) -> Capped<M> {
        Capped {
            inner,
            max,
            table: Mutex::new(Table::default()),
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // The table holds no invariant a panic mid-update could break.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A place reserved by `create_session`: released when dropped (on error
/// or cancellation), or filled with the created connection's id.
struct Reservation<'a, M> {
    capped: &'a Capped<M>,
    held: bool,
}

impl<M> Reservation<'_, M> {
    fn fill(mut self, id: SessionId) {
        let mut table = self.capped.table();
        table.starting = table.starting.saturating_sub(1);
        table.open.insert(id);
        self.held = false;
    }
}

impl<M> Drop for Reservation<'_, M> {
    fn drop(&mut self) {
        if self.held {
            let mut table = self.capped.table();
            table.starting = table.starting.saturating_sub(1);
        }
    }
}

impl<M: SessionManager> SessionManager for Capped<M> {
    type Error = CappedError<M::Error>;
    type Transport = M::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        {
            let mut table = self.table();
            if table.open.len() + table.starting >= self.max {
                // Outside a request's task (not the case in rmcp today) the
                // client gets rmcp's 500 with the same text.
                let _ = REFUSED.try_with(|refused| refused.set(true));
                return Err(CappedError::Full(self.max));
            }
            table.starting += 1;
        }
        let reservation = Reservation {
            capped: self,
            held: true,
        };
        let (id, transport) = self
            .inner
            .create_session()
            .await
            .map_err(CappedError::Inner)?;
        reservation.fill(id.clone());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner
            .initialize_session(id, message)
            .await
            .map_err(CappedError::Inner)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await.map_err(CappedError::Inner)
    }

    /// Called for a DELETE, and by rmcp when a connection's service ends
    /// (the client went away, or it idled out): either frees its place.
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.table().open.remove(id);
        self.inner
            .close_session(id)
            .await
            .map_err(CappedError::Inner)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner
            .create_stream(id, message)
            .await
            .map_err(CappedError::Inner)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner
            .accept_message(id, message)
            .await
            .map_err(CappedError::Inner)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner
            .create_standalone_stream(id)
            .await
            .map_err(CappedError::Inner)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner
            .resume(id, last_event_id)
            .await
            .map_err(CappedError::Inner)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

/// Answers `503` with the reason when serving the request would have opened
/// a connection past the cap; passes every other response on.
///
/// # Cancel safety
/// Holds no state: dropping it drops the request.
pub(crate) async fn limit_connections(
    State(max): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    let (refused, response) = REFUSED
        .scope(Cell::new(false), async {
            let response = next.run(request).await;
            (REFUSED.with(Cell::get), response)
        })
        .await;
    if refused {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("Service Unavailable: {}\n", full(max)),
        )
            .into_response();
    }
    response
}
