//! JavaScript functions as [`moonbox::Capability`]s.
//!
//! Each capability holds a threadsafe function: the eval's task (on a
//! tokio thread) queues a call on Node's main thread and awaits the reply,
//! inside the crate's async handler ([`Capability::new`]), so the eval's
//! deadline and a cancel cover a JavaScript function that never answers.
//!
//! The package's JavaScript wraps the user's function so that the call
//! crosses as text both ways: the arguments as one JSON array, the reply
//! as the result's JSON text, or `!` and the message when the function
//! threw or its promise rejected (JSON text never starts with `!`). The
//! wrapper returns a string for a synchronous function and a promise of
//! one for an async function.

use std::sync::Arc;

use moonbox::{Capability, CapabilityError};
use napi::Status;
use napi::bindgen_prelude::{Either, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use serde_json::Value;
use serde_json::value::RawValue;

/// The wrapped JavaScript function: takes the arguments' JSON array text,
/// answers the reply text or a promise of it. Weak: a sandbox that is no
/// longer used does not keep Node's event loop alive.
pub(crate) type JsHandler =
    ThreadsafeFunction<String, Either<String, Promise<String>>, String, Status, false, true>;

/// The capability `name`, taking `min..=max` arguments (the crate checks
/// the range when the sandbox is built), answered by `handler` on Node's
/// main thread.
///
/// The crate pads a call's arguments with `null` up to `max`; trailing
/// `null`s past `min` are dropped again, so that the function sees as many
/// arguments as the script passed (a trailing `nil` counts as absent, as
/// Lua's own functions mostly treat it).
pub(crate) fn js_capability(
    name: String,
    min: u32,
    max: u32,
    handler: Arc<JsHandler>,
) -> Capability<()> {
    let keep = usize::try_from(min).unwrap_or(usize::MAX);
    Capability::new(name, move |_ctx: Arc<()>, mut args: Vec<Value>| {
        while args.len() > keep && args.last() == Some(&Value::Null) {
            args.pop();
        }
        call(handler.clone(), args)
    })
    .with_arity(min, max)
}

/// One call: the arguments to the main thread, the reply back.
async fn call(handler: Arc<JsHandler>, args: Vec<Value>) -> Result<Box<RawValue>, CapabilityError> {
    let text = Value::Array(args).to_string();
    let reply = handler
        .call_async(text)
        .await
        .map_err(|e| CapabilityError::new(format!("the JavaScript function could not run: {e}")))?;
    let text = match reply {
        Either::A(text) => text,
        Either::B(promise) => promise.await.map_err(|e| {
            CapabilityError::new(format!("the JavaScript function's promise failed: {e}"))
        })?,
    };
    decode(text)
}

/// The reply text as a result or a capability error.
fn decode(text: String) -> Result<Box<RawValue>, CapabilityError> {
    if let Some(message) = text.strip_prefix('!') {
        return Err(CapabilityError::new(message));
    }
    RawValue::from_string(text)
        .map_err(|e| CapabilityError::new(format!("the result is not JSON: {e}")))
}
