//! JSON-RPC ids in flight, per MCP connection: a request whose id is the
//! same as one still in flight on its connection is refused before the
//! transport sees it.
//!
//! The transport keys a request's answer and its cancellation by the id: a
//! second request with the same id would take the first one's place, so
//! that the first answer is dropped and the first call can no longer be
//! cancelled.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The header naming the MCP connection.
const SESSION_HEADER: &str = "mcp-session-id";

/// The ids in flight: `(connection, id as JSON text)`.
#[derive(Default)]
pub(crate) struct InFlight {
    ids: Mutex<HashSet<(String, String)>>,
}

/// Removes its ids when the answer is done.
struct Release {
    table: Arc<InFlight>,
    keys: Vec<(String, String)>,
}

impl Drop for Release {
    fn drop(&mut self) {
        let mut ids = self
            .table
            .ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for key in &self.keys {
            ids.remove(key);
        }
    }
}

/// The ids of the requests in a JSON-RPC message (one, or a batch).
fn request_ids(message: &Value) -> Vec<String> {
    let one = |m: &Value| {
        (m.get("method").is_some())
            .then(|| m.get("id"))
            .flatten()
            .filter(|id| !id.is_null())
            .map(Value::to_string)
    };
    match message {
        Value::Array(batch) => batch.iter().filter_map(one).collect(),
        other => one(other).into_iter().collect(),
    }
}

/// Refuses a request whose id is in flight on its connection, with a
/// JSON-RPC error (`-32600`, HTTP 409); marks the ids of any other as in
/// flight until its answer is done. The body was read whole before this
/// (`read_body`), so reading it again costs nothing.
///
/// # Cancel safety
/// Dropping it releases the ids it marked.
pub(crate) async fn distinct_ids(
    State(table): State<Arc<InFlight>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(connection) = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return (
            StatusCode::BAD_REQUEST,
            "the request body could not be read\n",
        )
            .into_response();
    };
    let ids = serde_json::from_slice::<Value>(&bytes)
        .map(|m| request_ids(&m))
        .unwrap_or_default();
    let request = Request::from_parts(parts, Body::from(bytes));
    let mut keys = Vec::new();
    {
        let mut in_flight = table.ids.lock().unwrap_or_else(PoisonError::into_inner);
        // An id in flight, or one the message itself repeats.
        let mut seen = HashSet::new();
        if let Some(id) = ids.iter().find(|id| {
            !seen.insert((*id).clone()) || in_flight.contains(&(connection.clone(), (*id).clone()))
        }) {
            let id: Value = serde_json::from_str(id).unwrap_or(Value::Null);
            let error = json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32600,
                    "message": "a request with this id is already in flight on this connection (or twice in this batch); give each request its own id",
                },
            });
            return (
                StatusCode::CONFLICT,
                [(header::CONTENT_TYPE, "application/json")],
                error.to_string(),
            )
                .into_response();
        }
        for id in ids {
            let key = (connection.clone(), id);
            in_flight.insert(key.clone());
            keys.push(key);
        }
    }
    let release = Release { table, keys };
    let response = next.run(request).await;
    response.map(|body| moonbox_service::body::with_guard(body, release))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_requests_have_ids_that_count() {
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call"});
        assert_eq!(request_ids(&request), ["7"]);
        let text_id = json!({"jsonrpc": "2.0", "id": "a", "method": "ping"});
        assert_eq!(request_ids(&text_id), ["\"a\""]);
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(request_ids(&notification).is_empty());
        let response = json!({"jsonrpc": "2.0", "id": 7, "result": {}});
        assert!(request_ids(&response).is_empty());
        let batch = json!([request, notification, text_id]);
        assert_eq!(request_ids(&batch), ["7", "\"a\""]);
    }
}
