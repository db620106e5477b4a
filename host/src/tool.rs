//! The `run_lua` agent tool: its definition for a model, and the shape of
//! its results.
//!
//! ```
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use moonbox::tool::{self, SchemaFormat};
//!
//! let sandbox = moonbox::Sandbox::builder().build()?;
//! let definition = tool::definition(&sandbox, SchemaFormat::Anthropic);
//! assert_eq!(definition["name"], "run_lua");
//!
//! // A model's tool call carries `{"code": "..."}`.
//! let input: tool::RunLua = serde_json::from_value(serde_json::json!({"code": "return 1 + 1"}))?;
//! let result = tool::result(&sandbox.eval(&input.code).await);
//! assert_eq!(result["ok"], true);
//! assert_eq!(result["values"], serde_json::json!([2]));
//! assert_eq!(result["version"], moonbox::Report::VERSION);
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::EvalError;
use crate::outcome::EvalOutput;
use crate::report::Report;
use crate::sandbox::Sandbox;

/// The tool's name.
pub const NAME: &str = "run_lua";

/// Which API's tool format to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SchemaFormat {
    /// `{"name", "description", "input_schema"}`.
    #[default]
    Anthropic,
    /// `{"type": "function", "function": {"name", "description", "parameters"}}`.
    OpenAi,
}

/// The tool's input, as a model sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLua {
    /// The Lua chunk to run.
    pub code: String,
}

/// The tool description: the sandbox, its limits, and every capability and
/// module on offer.
pub fn description<T: Send + Sync + 'static>(sandbox: &Sandbox<T>) -> String {
    let limits = sandbox.limits();
    let allowed = sandbox.allowed();
    let io = if allowed.iter().any(|a| a == "io") {
        "io (the whole library, though there are no files to open)"
    } else {
        "io.write, io.stdout:write and print (they write to the same output)"
    };
    let mut d = format!(
        "Run a Lua 5.4 chunk in a sandbox and get back what it wrote and the JSON form of the values it \
         returns. The full language and standard library are available (strings, patterns, tables, math, \
         utf8, coroutines, goto, integers and floats), including {io}. Names removed by the sandbox \
         (such as io.open, os.execute, os.getenv, dofile, loadfile, string.dump, binary chunks and most of \
         debug) raise '<name> is sandboxed' unless listed under 'Also allowed' below. There is no \
         filesystem or network. Use print for progress notes and `return` for results; tables with string \
         keys become JSON objects and sequences become arrays (an empty table is []).\n",
    );
    let _ = writeln!(
        d,
        "Limits per call: {} Lua instructions, call depth {}, {} of memory, strings up to {}, {} \
         of output, {} ms of wall time. A script that hits a limit is stopped; pcall cannot catch it.",
        limits.max_instructions,
        limits.max_call_depth,
        size(limits.max_memory_bytes),
        size(limits.max_string_bytes),
        size(limits.max_output_bytes),
        limits.timeout.as_millis()
    );
    let capabilities = sandbox.capabilities();
    if capabilities.is_empty() {
        d.push_str("No host functions are available.\n");
    } else {
        d.push_str("Host functions (errors they raise can be caught with pcall):\n");
        for cap in capabilities {
            let (min, max) = cap.arity();
            let args = if min == max {
                format!("{min}")
            } else {
                format!("{min}-{max}")
            };
            let doc = if cap.description().is_empty() {
                "(no description)"
            } else {
                cap.description()
            };
            let _ = writeln!(d, "- {} ({args} args): {doc}", cap.name());
        }
    }
    let modules = sandbox.modules();
    if !modules.is_empty() {
        let _ = writeln!(d, "Modules for require: {}.", modules.join(", "));
    }
    if !allowed.is_empty() {
        let _ = writeln!(d, "Also allowed: {}.", allowed.join(", "));
    }
    d
}

/// A byte count as a person reads it: `100 bytes`, `1 KiB`, `1.5 MiB`.
fn size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            let whole = bytes / unit;
            let tenths = (bytes % unit) * 10 / unit;
            return if tenths == 0 {
                format!("{whole} {name}")
            } else {
                format!("{whole}.{tenths} {name}")
            };
        }
    }
    if bytes == 1 {
        "1 byte".to_owned()
    } else {
        format!("{bytes} bytes")
    }
}

/// The full tool definition in the given format.
pub fn definition<T: Send + Sync + 'static>(sandbox: &Sandbox<T>, format: SchemaFormat) -> Value {
    let schema = json!({
        "type": "object",
        "properties": {
            "code": { "type": "string", "description": "The Lua 5.4 chunk to run." }
        },
        "required": ["code"],
        "additionalProperties": false
    });
    let description = description(sandbox);
    match format {
        SchemaFormat::Anthropic => {
            json!({ "name": NAME, "description": description, "input_schema": schema })
        }
        SchemaFormat::OpenAi => json!({
            "type": "function",
            "function": { "name": NAME, "description": description, "parameters": schema }
        }),
    }
}

/// The tool result to hand back to the model: the outcome's [`Report`] as
/// JSON. `error.summary` is the one line to read first.
pub fn result(outcome: &Result<EvalOutput, EvalError>) -> Value {
    Report::from(outcome).to_json()
}

#[cfg(test)]
mod tests {
    use super::size;

    #[test]
    fn sizes_read_as_a_person_would_write_them() {
        assert_eq!(size(1), "1 byte");
        assert_eq!(size(100), "100 bytes");
        assert_eq!(size(1024), "1 KiB");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(64 << 20), "64 MiB");
        assert_eq!(size(1 << 30), "1 GiB");
    }
}
