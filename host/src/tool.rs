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

use crate::error::{ErrorKind, EvalError};
use crate::outcome::EvalOutput;
use crate::report::Report;
use crate::sandbox::Sandbox;
use crate::script::Script;

/// The tool's name.
pub const NAME: &str = "run_lua";

/// Which API's tool format to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SchemaFormat {
    /// Anthropic's Messages API: `{"name", "description", "input_schema"}`.
    #[default]
    Anthropic,
    /// OpenAI's Chat Completions API:
    /// `{"type": "function", "function": {"name", "description", "parameters", "strict"}}`.
    OpenAi,
    /// OpenAI's Responses API, flat and strict:
    /// `{"type": "function", "name", "description", "parameters", "strict": true}`.
    OpenAiResponses,
    /// A Model Context Protocol tool: `{"name", "description", "inputSchema",
    /// "outputSchema"}`; the output schema is the [`Report`]'s.
    Mcp,
}

/// The tool's input, as a model sends it.
///
/// `inputs` is an object of name to JSON value in the Anthropic and MCP
/// forms; OpenAI's strict mode cannot describe a free-form object, so there
/// it is a string holding that object's JSON (or `null`).
/// [`RunLua::script`] accepts both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLua {
    /// The Lua chunk to run.
    pub code: String,
    /// Globals set before the chunk runs: an object, or its JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Value>,
}

impl RunLua {
    /// The [`Script`] to run: the code, and the inputs decoded from either
    /// form.
    ///
    /// ```
    /// use moonbox::tool::RunLua;
    /// let call: RunLua = serde_json::from_str(r#"{"code": "return n", "inputs": "{\"n\": 1}"}"#).unwrap();
    /// let script = call.script().unwrap();
    /// assert_eq!(script.input_values()[0].0, "n");
    /// ```
    ///
    /// # Errors
    /// A message for the model when `inputs` is neither an object, its JSON
    /// text, nor null.
    pub fn script(&self) -> Result<Script, String> {
        let inputs = inputs(self.inputs.clone())?;
        Ok(Script::new(self.code.as_bytes()).inputs(inputs))
    }
}

/// Decodes `run_lua`'s `inputs` in either form: an object of name to JSON
/// value, or its JSON text (OpenAI's strict form); absent, `null` and an
/// empty string are no inputs.
///
/// ```
/// use serde_json::json;
/// let from_text = moonbox::tool::inputs(Some(json!("{\"n\": 1}"))).unwrap();
/// assert_eq!(from_text, moonbox::tool::inputs(Some(json!({"n": 1}))).unwrap());
/// assert!(moonbox::tool::inputs(Some(json!([1]))).is_err());
/// ```
///
/// # Errors
/// A message for the model when `inputs` is anything else.
pub fn inputs(inputs: Option<Value>) -> Result<serde_json::Map<String, Value>, String> {
    let not_object = || "`inputs` must be an object of name -> JSON value".to_owned();
    match inputs {
        None | Some(Value::Null) => Ok(serde_json::Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(serde_json::Map::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(Value::Null) => Ok(serde_json::Map::new()),
            Ok(_) => Err(not_object()),
            Err(e) => Err(format!("`inputs` is not valid JSON: {e}")),
        },
        Some(_) => Err(not_object()),
    }
}

/// The tool description: the sandbox, its limits, and every capability and
/// module on offer.
pub fn description<T: Send + Sync + 'static>(sandbox: &Sandbox<T>) -> String {
    let limits = sandbox.limits();
    let allowed = sandbox.allowed();
    let mut d = String::from(
        "Run a Lua 5.4 chunk in a sandbox and get back what it wrote and the JSON form of the values it \
         returns. The full language and standard library are available (strings, patterns, tables, math, \
         utf8, coroutines, goto, integers and floats, io, os.time/date/clock, os.exit, debug.traceback \
         and debug.getinfo). print, io.write and io.stderr write to the same output; io.stdin reads the \
         call's stdin, empty unless one is given. \
         Files: io.open, io.lines, loadfile, dofile, require, os.remove, os.rename and os.tmpname work on \
         the session's own files, kept in memory for the session and counted against its memory limit; \
         no host file is reachable. Names removed by the sandbox (io.popen, os.execute, string.dump, \
         binary chunks, debug.sethook and debug's other write access) are nil, and calling one raises \
         '<name> is sandboxed' unless listed under 'Also allowed' below. There is no network. Use print \
         for progress notes and `return` for results; tables with string keys become JSON objects and \
         sequences become arrays (an empty table is []).\n",
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
    d.push_str(
        "Also available: json.encode(value) and json.decode(text) (the same JSON rules as results; \
         JSON null is nil), and log(level, message, fields?) with level \"debug\", \"info\", \
         \"warn\" or \"error\" and an optional table of fields: a structured event the host \
         receives apart from printed output (it counts against the output limit).\n",
    );
    let capabilities = sandbox.capabilities();
    if capabilities.is_empty() {
        d.push_str("No host functions are available.\n");
    } else {
        d.push_str(
            "Host functions (Lua signatures: `T?` may be nil, `T[]` is an array, `{a: T}` a table with \
             field a; `f{...}` is called with one table; errors they raise can be caught with pcall):\n",
        );
        for cap in capabilities {
            let doc = if cap.description().is_empty() {
                "(no description)"
            } else {
                cap.description()
            };
            let mut rules = Vec::new();
            if let Some(calls) = sandbox.call_budget(cap) {
                rules.push(format!("at most {calls} calls per run"));
            }
            if cap.needs_approval() {
                rules.push("each call needs the host's approval and may be refused".to_owned());
            }
            let rules = if rules.is_empty() {
                String::new()
            } else {
                format!(" [{}]", rules.join("; "))
            };
            if cap.params_schemas().is_some() {
                let _ = writeln!(d, "- {}: {doc}{rules}", cap.signature());
            } else {
                let (min, max) = cap.arity();
                let args = if min == max {
                    format!("{min}")
                } else {
                    format!("{min}-{max}")
                };
                let _ = writeln!(d, "- {} ({args} args): {doc}{rules}", cap.name());
            }
        }
        let _ = writeln!(
            d,
            "To call host functions concurrently, use parallel(items, fn): it runs fn(item) for each \
             item in its own coroutine, their host calls are in flight at the same time (at most {} \
             at once), and it returns a table of each call's first result in item order, e.g. \
             `local users = parallel(ids, {})`. The first error in any item ends it; use pcall \
             inside fn to keep going past a failing item.",
            limits.max_calls_in_flight,
            capabilities[0].name()
        );
    }
    let modules = sandbox.modules();
    if !modules.is_empty() {
        let _ = writeln!(d, "Modules for require: {}.", modules.join(", "));
    }
    if !allowed.is_empty() {
        let _ = writeln!(d, "Also allowed: {}.", allowed.join(", "));
    }
    d.push_str(
        "Pass data through `inputs` (name -> JSON value; each becomes a global) instead of writing it into the code.\n",
    );
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

/// The tool's input schema: `code`, and `inputs` as an object of name to
/// JSON value. With `strict` (OpenAI's strict mode, where every property is
/// required and no object is free-form), `inputs` is a JSON string or
/// `null` instead.
pub fn input_schema(strict: bool) -> Value {
    let code = json!({ "type": "string", "description": "The Lua 5.4 chunk to run." });
    if strict {
        json!({
            "type": "object",
            "properties": {
                "code": code,
                "inputs": {
                    "type": ["string", "null"],
                    "description": "Globals to set before the chunk runs, as the JSON text of an object of name to value (null for none)."
                }
            },
            "required": ["code", "inputs"],
            "additionalProperties": false
        })
    } else {
        json!({
            "type": "object",
            "properties": {
                "code": code,
                "inputs": {
                    "type": "object",
                    "description": "Globals to set before the chunk runs: name (a Lua identifier) to JSON value.",
                    "additionalProperties": true
                }
            },
            "required": ["code"],
            "additionalProperties": false
        })
    }
}

/// The JSON Schema of a result: the [`Report`], as [`result`] returns it
/// and an MCP server's `structuredContent` carries it.
pub fn output_schema() -> Value {
    let kinds: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
    let count = json!({ "type": ["integer", "null"], "minimum": 0 });
    json!({
        "type": "object",
        "properties": {
            "version": { "type": "integer", "const": Report::VERSION },
            "ok": { "type": "boolean" },
            "values": { "type": "array", "description": "The chunk's return values, as JSON." },
            "output": { "type": "string", "description": "What the script wrote (invalid UTF-8 replaced)." },
            "output_base64": { "type": "string", "description": "The exact output bytes, present only when they are not UTF-8." },
            "exit_code": { "type": ["integer", "null"] },
            "error": {
                "anyOf": [
                    { "type": "null" },
                    {
                        "type": "object",
                        "properties": {
                            "kind": { "type": "string", "enum": kinds },
                            "message": { "type": "string" },
                            "chunk": { "type": "string" },
                            "line": { "type": ["integer", "null"], "minimum": 0 },
                            "traceback": { "type": ["string", "null"] },
                            "summary": { "type": "string", "description": "The one line to read first." }
                        },
                        "required": ["kind", "message", "chunk", "line", "traceback", "summary"]
                    }
                ]
            },
            "stats": {
                "type": "object",
                "properties": {
                    "instructions": count,
                    "peak_memory_bytes": count,
                    "fuel_used": { "type": ["integer", "null"], "minimum": 0 },
                    "wall_time_us": { "type": "integer", "minimum": 0 },
                    "capability_calls": { "type": "integer", "minimum": 0 },
                    "output_bytes": { "type": "integer", "minimum": 0 },
                    "calls_unrecorded": { "type": "integer", "minimum": 0 }
                }
            },
            "logs": {
                "type": "array",
                "description": "The script's log events, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "level": { "type": "string", "enum": ["debug", "info", "warn", "error"] },
                        "message": { "type": "string" },
                        "fields": { "type": "object" }
                    },
                    "required": ["level", "message", "fields"]
                }
            },
            "calls": {
                "type": "array",
                "description": "The capability calls the script made, in order (absent when none).",
                "items": {
                    "type": "object",
                    "properties": {
                        "capability": { "type": "string" },
                        "arg_bytes": { "type": "integer", "minimum": 0 },
                        "reply_bytes": { "type": "integer", "minimum": 0 },
                        "duration_us": { "type": "integer", "minimum": 0 },
                        "outcome": {
                            "type": "string",
                            "enum": ["ok", "error", "over_budget", "refused", "cut_off"]
                        },
                        "args": { "type": "array" }
                    },
                    "required": ["capability", "arg_bytes", "reply_bytes", "duration_us", "outcome"]
                }
            }
        },
        "required": ["version", "ok", "values", "output", "exit_code", "error", "stats", "logs"]
    })
}

/// The full tool definition in the given format.
///
/// ```
/// use moonbox::tool::{self, SchemaFormat};
/// # fn main() -> Result<(), moonbox::Error> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let responses = tool::definition(&sandbox, SchemaFormat::OpenAiResponses);
/// assert_eq!(responses["strict"], true);
/// assert_eq!(responses["parameters"]["required"], serde_json::json!(["code", "inputs"]));
/// let mcp = tool::definition(&sandbox, SchemaFormat::Mcp);
/// assert_eq!(mcp["outputSchema"]["type"], "object");
/// # Ok(()) }
/// ```
pub fn definition<T: Send + Sync + 'static>(sandbox: &Sandbox<T>, format: SchemaFormat) -> Value {
    let description = description(sandbox);
    match format {
        SchemaFormat::Anthropic => json!({
            "name": NAME,
            "description": description,
            "input_schema": input_schema(false)
        }),
        SchemaFormat::OpenAi => json!({
            "type": "function",
            "function": {
                "name": NAME,
                "description": description,
                "parameters": input_schema(true),
                "strict": true
            }
        }),
        SchemaFormat::OpenAiResponses => json!({
            "type": "function",
            "name": NAME,
            "description": description,
            "parameters": input_schema(true),
            "strict": true
        }),
        SchemaFormat::Mcp => json!({
            "name": NAME,
            "description": description,
            "inputSchema": input_schema(false),
            "outputSchema": output_schema()
        }),
    }
}

/// The tool result to hand back to the model: the outcome's [`Report`] as
/// JSON. `error.summary` is the one line to read first.
pub fn result(outcome: &Result<EvalOutput, EvalError>) -> Value {
    Report::from(outcome).to_json()
}

/// The outcome as one line of text for a model that reads text: the
/// values as a JSON array (or the error's line), then, when the script
/// wrote anything, ` output: ` and the output as a JSON string, so that a
/// newline in the output cannot start a line of its own. The MCP server's
/// text content.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let ok = sandbox.eval("print('hi') return 1, 'a'").await;
/// assert_eq!(moonbox::tool::summary(&ok), r#"[1,"a"] output: "hi\n""#);
/// let err = sandbox.eval("error('no')").await;
/// assert_eq!(moonbox::tool::summary(&err), "error[runtime]: main.lua:1: no");
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
pub fn summary(outcome: &Result<EvalOutput, EvalError>) -> String {
    summary_cut(outcome, usize::MAX).0
}

/// [`summary`] cut to its first `max_bytes` (on a character boundary),
/// with the length of the whole line: the line is never built whole, so a
/// large value costs no more memory than the cut. For a transport that
/// shows the start of the line and says where the rest is.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let big = sandbox.eval("return string.rep('x', 1000)").await;
/// let (line, whole) = moonbox::tool::summary_cut(&big, 10);
/// assert_eq!(line, r#"["xxxxxxxx"#);
/// assert_eq!(whole, 1004);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
pub fn summary_cut(outcome: &Result<EvalOutput, EvalError>, max_bytes: usize) -> (String, usize) {
    let mut line = Cut::new(max_bytes);
    let output = match outcome {
        Ok(out) => {
            match out.exit_code {
                Some(code) => line.push(&format!("(the script exited with status {code})")),
                None => {
                    // The writer never fails: it keeps what fits and counts
                    // the rest.
                    let _ = serde_json::to_writer(&mut line, &out.values);
                }
            }
            &out.output
        }
        Err(e) => {
            line.push(&e.to_string());
            &e.output
        }
    };
    let output = output.to_str_lossy();
    if !output.is_empty() {
        line.push(" output: ");
        let _ = serde_json::to_writer(&mut line, output.as_ref());
    }
    line.finish()
}

/// A line that keeps its first `max` bytes and counts the rest, with its
/// newlines made spaces (an error's line is one line already; this keeps
/// it so whatever a message holds).
struct Cut {
    kept: Vec<u8>,
    max: usize,
    len: usize,
}

impl Cut {
    fn new(max: usize) -> Cut {
        Cut {
            kept: Vec::new(),
            max,
            len: 0,
        }
    }

    fn push(&mut self, s: &str) {
        let _ = std::io::Write::write_all(self, s.as_bytes());
    }

    /// The line kept, cut back to a character boundary, and the whole
    /// line's length.
    fn finish(self) -> (String, usize) {
        let text = match String::from_utf8(self.kept) {
            Ok(text) => text,
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).unwrap_or_default()
            }
        };
        (text, self.len)
    }
}

impl std::io::Write for Cut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.len = self.len.saturating_add(buf.len());
        let room = self.max.saturating_sub(self.kept.len());
        self.kept.extend(
            buf[..buf.len().min(room)]
                .iter()
                .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
        );
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Cut, size};

    #[test]
    fn a_cut_line_ends_on_a_character_boundary_and_counts_the_whole() {
        let mut line = Cut::new(5);
        line.push("ab\u{e9}\u{e9}\ncd");
        // "ab" and one two-byte character fit in 5 bytes; the next is cut.
        assert_eq!(line.finish(), ("ab\u{e9}".to_owned(), 9));
        let mut whole = Cut::new(usize::MAX);
        whole.push("a\r\nb");
        assert_eq!(whole.finish(), ("a  b".to_owned(), 4));
    }

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
