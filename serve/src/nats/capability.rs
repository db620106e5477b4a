//! Remote capabilities: a capability whose calls are NATS requests to
//! `P.cap.NAME`, answered by the application, so that its secrets stay in
//! the application's own service and never reach the workers.

use std::time::Duration;

use async_nats::Client;
use async_nats::client::RequestErrorKind;
use moonbox::{Capability, CapabilityError};
use serde_json::Value;

use crate::error::Error;
use crate::nats::is_subject;

/// The arguments a remote capability accepts: up to four JSON values.
type Four = (Option<Value>, Option<Value>, Option<Value>, Option<Value>);

/// The calls one eval may make to one remote capability unless its budget
/// is set otherwise ([`Capability::call_budget`] on the returned
/// capability, or `--call-budget NAME=N`): each call is a request the
/// application must answer, so a loop of them would otherwise load it
/// without bound.
pub const DEFAULT_REMOTE_CALL_BUDGET: u32 = 1000;

/// A capability `name` whose calls are requests to `PREFIX.cap.NAME`.
///
/// The request's body is the call's arguments as a JSON array (up to four,
/// trailing `nil`s dropped). The application answers `{"ok": VALUE}`,
/// which the script receives, or `{"error": "message"}`, which the script
/// sees as the capability's error. A call waits at most `timeout`, and the
/// eval's own timeout covers it too; with no application listening it
/// fails at once. One eval may call it [`DEFAULT_REMOTE_CALL_BUDGET`] times
/// unless its budget is set otherwise.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let config = moonbox_serve::NatsConfig::new("nats://127.0.0.1:4222");
/// let client = config.connect().await?;
/// let lookup = moonbox_serve::remote_capability(
///     client, &config.prefix, "secrets.lookup", std::time::Duration::from_secs(2))?;
/// let sandbox = moonbox::Sandbox::builder().capability(lookup).build_async().await?;
/// # let _ = sandbox; Ok(()) }
/// ```
///
/// # Errors
/// [`Error::Config`] for a name that is not plain subject tokens, or one
/// the sandbox would refuse.
pub fn remote_capability(
    client: Client,
    prefix: &str,
    name: &str,
    timeout: Duration,
) -> Result<Capability<()>, Error> {
    if !is_subject(name) {
        return Err(Error::Config(format!(
            "the remote capability name '{name}' is not usable; use letters, digits, '-' and '_' in dot-separated tokens"
        )));
    }
    let subject = format!("{prefix}.cap.{name}");
    let shown = name.to_owned();
    let capability = Capability::new_async(name, move |_, args: Four| {
        let client = client.clone();
        let subject = subject.clone();
        let name = shown.clone();
        async move { call(&client, subject, &name, args, timeout).await }
    })
    .with_description(format!(
        "Served by the application over NATS ({prefix}.cap.{name})."
    ))
    .call_budget(DEFAULT_REMOTE_CALL_BUDGET);
    Ok(capability)
}

async fn call(
    client: &Client,
    subject: String,
    name: &str,
    (a, b, c, d): Four,
    timeout: Duration,
) -> Result<Value, CapabilityError> {
    let mut args: Vec<Value> = [a, b, c, d]
        .into_iter()
        .map(|v| v.unwrap_or(Value::Null))
        .collect();
    while args.last() == Some(&Value::Null) {
        args.pop();
    }
    // The NATS server closes the connection of a client that publishes
    // past its max_payload, which would take the worker (and every eval
    // on it) off the bus while it reconnects: such a call fails here, and
    // only the call.
    let max = client.server_info().max_payload;
    let payload = moonbox_service::reply::within(&Value::Array(args), max).ok_or_else(|| {
        CapabilityError::new(format!(
            "the arguments of {name} are larger than the NATS server's max_payload ({max} bytes); pass less, or raise max_payload"
        ))
    })?;
    // The call's own timeout, whatever the client's default.
    let request = client.send_request(
        subject.clone(),
        async_nats::Request::new()
            .payload(payload.into())
            .timeout(Some(timeout)),
    );
    let reply = match tokio::time::timeout(timeout, request).await {
        Err(_) => {
            return Err(CapabilityError::new(format!(
                "{name} did not answer within {} ms",
                timeout.as_millis()
            )));
        }
        Ok(Err(e)) if e.kind() == RequestErrorKind::NoResponders => {
            return Err(CapabilityError::new(format!(
                "{name} is not available: no application answers {subject}"
            )));
        }
        Ok(Err(e)) => {
            return Err(CapabilityError::new(format!(
                "{name} failed on the bus: {e}"
            )));
        }
        Ok(Ok(reply)) => reply,
    };
    let answer: Value = serde_json::from_slice(&reply.payload).map_err(|e| {
        CapabilityError::new(format!("{name} answered something that is not JSON ({e})"))
    })?;
    match answer {
        Value::Object(mut map) if map.len() == 1 && map.contains_key("ok") => {
            Ok(map.remove("ok").unwrap_or(Value::Null))
        }
        Value::Object(map) if map.len() == 1 && map.get("error").is_some_and(Value::is_string) => {
            Err(CapabilityError::new(
                map.get("error").and_then(Value::as_str).unwrap_or_default(),
            ))
        }
        _ => Err(CapabilityError::new(format!(
            "{name} answered neither {{\"ok\": value}} nor {{\"error\": \"message\"}}"
        ))),
    }
}
