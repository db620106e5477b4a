//! `records.get`: a supported read-only capability over a JSON map, and the
//! worked example of writing one.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::capability::{self, Args, Capability};
use crate::error::{ConfigError, Error};

/// A read-only store of JSON records by id, offered to Lua as
/// `records.get(id)`.
///
/// It is part of the supported API (the `moonbox` command's `--records`
/// flag and every host of the shared case list use it), and at about a
/// hundred lines it is also the example to read before writing your own
/// capability.
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
///
/// Records are kept as their JSON text, so memory stays close to the size of
/// the source, and a lookup copies one record's text (refused, without
/// copying, when it is larger than the sandbox's memory limit).
#[derive(Clone, Debug, Default)]
pub struct Records {
    records: Arc<HashMap<String, Box<RawValue>>>,
}

impl Records {
    /// Records from a JSON object whose keys are ids.
    ///
    /// # Errors
    /// [`Error::Config`] ([`ConfigError::RecordsNotJson`] or
    /// [`ConfigError::RecordsNotAnObject`]) when the text is not JSON or not
    /// an object.
    pub fn from_json(text: &str) -> Result<Self, Error> {
        match serde_json::from_str::<HashMap<String, Box<RawValue>>>(text) {
            Ok(records) => Ok(Records {
                records: Arc::new(records),
            }),
            Err(e) => {
                // Say what the document is when it is valid JSON of another
                // shape.
                let shape = serde_json::from_str::<Value>(text)
                    .ok()
                    .filter(|v| !v.is_object())
                    .map(|v| json_type(&v));
                Err(Error::Config(match shape {
                    Some(kind) => ConfigError::RecordsNotAnObject { kind },
                    None => ConfigError::RecordsNotJson(e),
                }))
            }
        }
    }

    /// Records from an existing map.
    pub fn new(records: Map<String, Value>) -> Self {
        let records = records
            .into_iter()
            .filter_map(|(id, v)| {
                serde_json::value::to_raw_value(&v)
                    .ok()
                    .map(|raw| (id, raw))
            })
            .collect();
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
        let get = move |_ctx: &T, values: Vec<Value>, max: usize| {
            let (id,) = <(String,)>::from_values(values)?;
            match records.get(&id) {
                Some(raw) if raw.get().len() > max => Err(capability::too_large(max)),
                Some(raw) => Ok(raw.get().to_owned()),
                None => Ok("null".to_owned()),
            }
        };
        Capability::raw("records.get", 1, 1, Arc::new(get))
            .with_description("The record with this id, or nil if there is none.")
            .arg_names(["id"])
            .schemas(
                vec![serde_json::json!({"type": "string"})],
                Some(serde_json::json!({"type": ["object", "null"]})),
            )
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
