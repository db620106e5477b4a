//! `records.get`: the worked example of a capability, over a JSON map.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::capability::{Capability, CapabilityError};
use crate::error::Error;

/// A read-only store of JSON records by id, offered to Lua as
/// `records.get(id)`.
///
/// `records.get` returns the record as a table, or `nil` when there is no
/// record with that id. A non-string id is a capability error that names the
/// argument: `records.get: argument #1 must be a string (got integer `7`)`.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use moonbox::{Records, Sandbox};
///
/// let records = Records::from_json(r#"{"123": {"name": "Ada", "visits": [1, 2]}}"#)?;
/// let sandbox = Sandbox::builder().capability(records.capability()).build()?;
/// let out = sandbox.eval("local r = records.get('123') return r.name, #r.visits").await?;
/// assert_eq!(out.values, [serde_json::json!("Ada"), serde_json::json!(2)]);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, Default)]
pub struct Records {
    records: Arc<Map<String, Value>>,
}

impl Records {
    /// Records from a JSON object whose keys are ids.
    ///
    /// # Errors
    /// [`Error::Config`] when the text is not JSON or not an object.
    pub fn from_json(text: &str) -> Result<Self, Error> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::Config(format!("records are not valid JSON: {e}")))?;
        match value {
            Value::Object(records) => Ok(Records {
                records: Arc::new(records),
            }),
            other => Err(Error::Config(format!(
                "records must be a JSON object mapping ids to records, not {}",
                json_type(&other)
            ))),
        }
    }

    /// Records from an existing map.
    pub fn new(records: Map<String, Value>) -> Self {
        Records {
            records: Arc::new(records),
        }
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The `records.get(id)` capability, for a sandbox with any context.
    pub fn capability<T: Send + Sync + 'static>(&self) -> Capability<T> {
        let records = self.records.clone();
        Capability::sync("records.get", move |_ctx: &T, (id,): (String,)| {
            Ok::<_, CapabilityError>(records.get(&id).cloned().unwrap_or(Value::Null))
        })
        .doc("records.get(id: string) -> table|nil: the record with this id, or nil if there is none.")
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
