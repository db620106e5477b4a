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
//! # Ok(()) }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::EvalError;
use crate::outcome::EvalOutput;
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
    let mut d = String::from(
        "Run a Lua 5.4 chunk in a sandbox and get back what it printed and the JSON form of the values it \
         returns. The full language and standard library are available (strings, patterns, tables, math, \
         utf8, coroutines, goto, integers and floats), except io, os.execute, os.getenv, os.exit, \
         os.remove, os.rename, os.tmpname, dofile, loadfile, string.dump, binary chunks and most of debug: \
         calling one raises '<name> is sandboxed'. There is no filesystem or network. Use print for \
         progress notes and `return` for results; tables with string keys become JSON objects and \
         sequences become arrays (an empty table is []).\n",
    );
    let _ = writeln!(
        d,
        "Limits per call: {} Lua instructions, call depth {}, {} MiB of memory, strings up to {} MiB, {} KiB \
         of printed output, {} ms of wall time. A script that hits a limit is stopped; pcall cannot catch it.",
        limits.max_instructions,
        limits.max_call_depth,
        limits.memory >> 20,
        limits.max_string_bytes >> 20,
        limits.max_output_bytes >> 10,
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
    let allowed = sandbox.allowed();
    if !allowed.is_empty() {
        let _ = writeln!(d, "Also allowed: {}.", allowed.join(", "));
    }
    d
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

/// The tool result to hand back to the model: `{"ok": true, "values",
/// "output"}` or `{"ok": false, "error": "error[kind]: message", "kind",
/// "line", "output"}`.
pub fn result(outcome: &Result<EvalOutput, EvalError>) -> Value {
    match outcome {
        Ok(out) => json!({ "ok": true, "values": out.values, "output": out.output }),
        Err(e) => json!({
            "ok": false,
            "error": e.to_string(),
            "kind": e.kind,
            "line": e.line,
            "output": e.output,
        }),
    }
}
