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

use crate::catalog;
use crate::error::{ErrorKind, EvalError};
use crate::governance::CallOutcome;
use crate::outcome::{EvalOutput, File};
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

/// The arguments a `run_lua` call takes, as its input schema lists them.
pub const ARGUMENTS: [&str; 5] = ["code", "inputs", "args", "files", "stdin"];

/// Refuses an argument `tool` does not take (the first of `given` not in
/// `accepted`), naming those it does, as a model can act on.
///
/// ```
/// use moonbox::tool;
/// assert!(tool::unknown_argument("run_lua", &tool::ARGUMENTS, ["code", "files"]).is_ok());
/// assert_eq!(
///     tool::unknown_argument("run_lua", &tool::ARGUMENTS, ["code", "file"]).unwrap_err(),
///     "run_lua takes code, inputs, args, files and stdin, not 'file'"
/// );
/// ```
///
/// # Errors
/// The sentence, when an argument is not accepted.
pub fn unknown_argument<'a>(
    tool: &str,
    accepted: &[&str],
    given: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    match given.into_iter().find(|k| !accepted.contains(k)) {
        None => Ok(()),
        Some(unknown) => {
            let (last, first) = accepted.split_last().unwrap_or((&"", &[]));
            Err(format!(
                "{tool} takes {} and {last}, not '{}'",
                first.join(", "),
                unknown.chars().take(64).collect::<String>()
            ))
        }
    }
}

/// The tool's input, as a model sends it.
///
/// `inputs` and `files` are objects in the Anthropic and MCP forms;
/// OpenAI's strict mode cannot describe a free-form object, so there each is
/// a string holding that object's JSON (or `null`). [`RunLua::script`]
/// accepts both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLua {
    /// The Lua chunk to run.
    pub code: String,
    /// Globals set before the chunk runs: an object, or its JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Value>,
    /// The script's arguments (`arg` and `...`): an array of strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// Files to mount read-only: an object of name to text or to
    /// `{"base64": ...}`, or its JSON text (see [`extras`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Value>,
    /// What `io.stdin` reads: a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<Value>,
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
    /// text, nor null, or when `args`, `files` or `stdin` is not as
    /// [`extras`] takes it.
    pub fn script(&self) -> Result<Script, String> {
        let inputs = inputs(self.inputs.clone())?;
        let extras = extras(self.args.clone(), self.files.clone(), self.stdin.clone())?;
        Ok(extras.apply(Script::new(self.code.as_bytes()).inputs(inputs)))
    }
}

/// A `run_lua` call's `args`, `files` and `stdin`, checked by [`extras`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Extras {
    /// `arg[1..n]` and the chunk's `...`; `None` leaves `arg` nil.
    pub args: Option<Vec<String>>,
    /// Files to mount read-only, in the order given.
    pub files: Vec<File>,
    /// What `io.stdin` reads; `None` is empty.
    pub stdin: Option<Vec<u8>>,
}

impl Extras {
    /// `script` with these arguments, files and stdin.
    pub fn apply(self, mut script: Script) -> Script {
        if let Some(args) = self.args {
            script = script.args(args);
        }
        for file in self.files {
            script = script.file(file.name, file.bytes);
        }
        if let Some(stdin) = self.stdin {
            script = script.stdin(stdin);
        }
        script
    }

    /// The bytes they take together: the arguments', the files' names and
    /// contents, and stdin's, for a server that bounds a call's size.
    pub fn bytes(&self) -> u64 {
        let args = self.args.iter().flatten().map(String::len);
        let files = self.files.iter().map(|f| f.name.len() + f.bytes.len());
        let stdin = self.stdin.iter().map(Vec::len);
        args.chain(files)
            .chain(stdin)
            .fold(0u64, |sum, n| sum.saturating_add(n as u64))
    }
}

/// Decodes `run_lua`'s `args`, `files` and `stdin` (absent or `null` for
/// none):
/// - `args`: an array of at most [`Limits::MAX_ARGS`](crate::Limits::MAX_ARGS)
///   strings;
/// - `files`: an object of at most [`Limits::MAX_FILES`](crate::Limits::MAX_FILES)
///   names, each to its text or to `{"base64": "..."}` for bytes, or that
///   object's JSON text (OpenAI's strict form; an empty string is none);
/// - `stdin`: a string.
///
/// The names are checked by the sandbox when the script runs.
///
/// ```
/// use serde_json::json;
/// let extras = moonbox::tool::extras(
///     Some(json!(["a", "b"])),
///     Some(json!({"in.txt": "hi", "raw.bin": {"base64": "AP8="}})),
///     Some(json!("typed")),
/// ).unwrap();
/// assert_eq!(extras.files[1].bytes, [0, 255]);
/// assert_eq!(extras.bytes(), 2 + 6 + 2 + 7 + 2 + 5);
/// assert!(moonbox::tool::extras(Some(json!([1])), None, None).is_err());
/// ```
///
/// # Errors
/// A message for the model naming what is wrong.
pub fn extras(
    args: Option<Value>,
    files: Option<Value>,
    stdin: Option<Value>,
) -> Result<Extras, String> {
    let mut extras = Extras::default();
    let not_strings = || "`args` must be an array of strings (arg[1..n] and `...`)".to_owned();
    match args {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            if items.len() > crate::Limits::MAX_ARGS {
                return Err(format!(
                    "`args` has {} items; a script takes at most {}",
                    items.len(),
                    crate::Limits::MAX_ARGS
                ));
            }
            let args = items
                .into_iter()
                .map(|item| match item {
                    Value::String(arg) => Ok(arg),
                    _ => Err(not_strings()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            extras.args = Some(args);
        }
        Some(_) => return Err(not_strings()),
    }
    let files = object_or_text(files, "files", FILES_SHAPE)?;
    if files.len() > crate::Limits::MAX_FILES {
        return Err(format!(
            "`files` has {} files; a script takes at most {}",
            files.len(),
            crate::Limits::MAX_FILES
        ));
    }
    for (name, content) in files {
        let bytes = file_bytes(&name, content)?;
        extras.files.push(File::new(name, bytes));
    }
    match stdin {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => extras.stdin = Some(text.into_bytes()),
        Some(_) => return Err("`stdin` must be a string: what io.read reads".to_owned()),
    }
    Ok(extras)
}

const FILES_SHAPE: &str =
    "`files` must be an object of file name -> text, or -> {\"base64\": \"...\"} for bytes";

/// A file's bytes: its text, or its `{"base64": ...}` decoded.
fn file_bytes(name: &str, content: Value) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    match content {
        Value::String(text) => Ok(text.into_bytes()),
        Value::Object(mut object) if object.len() == 1 => match object.remove("base64") {
            Some(Value::String(encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded.as_bytes())
                .map_err(|e| {
                    let shown: String = name
                        .chars()
                        .take(64)
                        .flat_map(char::escape_default)
                        .collect();
                    format!("files['{shown}'].base64 is not standard base64: {e}")
                }),
            _ => Err(FILES_SHAPE.to_owned()),
        },
        _ => Err(FILES_SHAPE.to_owned()),
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
    object_or_text(
        inputs,
        "inputs",
        "`inputs` must be an object of name -> JSON value",
    )
}

/// An argument that is an object, or (OpenAI's strict form) its JSON text:
/// absent, `null`, an empty string and the text `null` are an empty
/// object. `name` and `shape` say what is wrong otherwise.
fn object_or_text(
    value: Option<Value>,
    name: &str,
    shape: &str,
) -> Result<serde_json::Map<String, Value>, String> {
    match value {
        None | Some(Value::Null) => Ok(serde_json::Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(serde_json::Map::new()),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(Value::Null) => Ok(serde_json::Map::new()),
            Ok(_) => Err(shape.to_owned()),
            Err(e) => Err(format!("`{name}` is not valid JSON: {e}")),
        },
        Some(_) => Err(shape.to_owned()),
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
        let mut listing = String::new();
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
                let _ = writeln!(listing, "- {}: {doc}{rules}", cap.signature());
            } else {
                let (min, max) = cap.arity();
                let args = if min == max {
                    format!("{min}")
                } else {
                    format!("{min}-{max}")
                };
                let _ = writeln!(listing, "- {} ({args} args): {doc}{rules}", cap.name());
            }
        }
        if sandbox.discovery() && listing.len() > catalog::LISTING_BYTES {
            // Too many to list: where they are, and how to find them.
            let spaces: Vec<(String, usize)> =
                catalog::namespaces(capabilities.iter().map(|c| c.name()))
                    .into_iter()
                    .filter(|(space, _)| space != catalog::NAMESPACE)
                    .collect();
            let count: usize = spaces.iter().map(|(_, n)| n).sum();
            let spaces: Vec<String> = spaces
                .iter()
                .map(|(space, n)| format!("{space} ({n})"))
                .collect();
            let _ = writeln!(
                d,
                "- {} host functions, too many to list here, in: {}. Find them from Lua: \
                 catalog.search(words) returns the best matches as {{name, summary}} (at most {}), \
                 catalog.describe(name) one function's signature, description and JSON Schemas; \
                 then call it by its name, e.g. `for _, f in ipairs(catalog.search(\"issue\")) do \
                 print(f.name, f.summary) end`.",
                count,
                spaces.join(", "),
                catalog::MAX_MATCHES
            );
        } else {
            d.push_str(&listing);
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

/// The tool's input schema: `code`; `inputs` as an object of name to JSON
/// value; `args`, `files` and `stdin` as [`extras`] takes them. With
/// `strict` (OpenAI's strict mode, where every property is required and no
/// object is free-form), `inputs` and `files` are JSON strings or `null`
/// instead, and `args` and `stdin` may be `null`.
///
/// ```
/// let schema = moonbox::tool::input_schema(false);
/// let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
/// assert_eq!(names, ["args", "code", "files", "inputs", "stdin"]);
/// ```
pub fn input_schema(strict: bool) -> Value {
    const ARGS: &str = "Arguments, as `lua script.lua a b` gives them: the global `arg` (arg[1..n]; arg[0] is the chunk name) and the chunk's `...`. Without it, `arg` is nil.";
    const FILES: &str = "Files to mount read-only before the code runs: name (like data/in.csv) -> text, or -> {\"base64\": \"...\"} for bytes. io.open, io.lines, loadfile, dofile and require (./?.lua, ./?/init.lua) read them; files the code writes come back in the result's `files`.";
    const STDIN: &str = "What io.stdin, io.read and io.lines() read (empty without it).";
    let code = json!({ "type": "string", "description": "The Lua 5.4 chunk to run." });
    if strict {
        json!({
            "type": "object",
            "properties": {
                "code": code,
                "inputs": {
                    "type": ["string", "null"],
                    "description": "Globals to set before the chunk runs, as the JSON text of an object of name to value (null for none)."
                },
                "args": {
                    "type": ["array", "null"],
                    "items": { "type": "string" },
                    "description": ARGS
                },
                "files": {
                    "type": ["string", "null"],
                    "description": format!("{FILES} As the JSON text of that object (null for none).")
                },
                "stdin": { "type": ["string", "null"], "description": STDIN }
            },
            "required": ["code", "inputs", "args", "files", "stdin"],
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
                },
                "args": { "type": "array", "items": { "type": "string" }, "description": ARGS },
                "files": {
                    "type": "object",
                    "description": FILES,
                    "additionalProperties": {
                        "anyOf": [
                            { "type": "string" },
                            {
                                "type": "object",
                                "properties": { "base64": { "type": "string" } },
                                "required": ["base64"],
                                "additionalProperties": false
                            }
                        ]
                    }
                },
                "stdin": { "type": "string", "description": STDIN }
            },
            "required": ["code"],
            "additionalProperties": false
        })
    }
}

/// The JSON Schema of a result: the [`Report`], as [`result`] returns it
/// and an MCP server's `structuredContent` carries it (`moonbox mcp` as its
/// `report`, without nulls: [`output_schema_without_nulls`]).
pub fn output_schema() -> Value {
    let kinds: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
    let outcomes: Vec<&str> = CallOutcome::ALL.iter().map(|o| o.as_str()).collect();
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
                            "enum": outcomes
                        },
                        "args": { "type": "array" }
                    },
                    "required": ["capability", "arg_bytes", "reply_bytes", "duration_us", "outcome"]
                }
            },
            "files": {
                "type": "array",
                "description": "The files the run created or wrote that exist at its end, sorted by name (absent when none): text when UTF-8, else base64.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string" },
                        "size": { "type": "integer", "minimum": 0 },
                        "text": { "type": "string" },
                        "base64": { "type": "string" }
                    },
                    "required": ["name", "size"]
                }
            }
        },
        "required": ["version", "ok", "values", "output", "exit_code", "error", "stats", "logs"]
    })
}

/// [`output_schema`] for tool formats that take one type per field (an
/// MCP client's strict lint, Gemini's function declarations): every field
/// that may be `null` there has its one other type here and is optional,
/// because [`without_nulls`] leaves it out instead.
///
/// ```
/// let schema = moonbox::tool::output_schema_without_nulls();
/// assert_eq!(schema["properties"]["exit_code"]["type"], "integer");
/// assert_eq!(schema["properties"]["error"]["type"], "object");
/// assert!(!schema.to_string().contains("null"));
/// ```
pub fn output_schema_without_nulls() -> Value {
    let mut schema = output_schema();
    single_typed(&mut schema);
    schema
}

/// A report's JSON ([`result`]) without its `null` members, at any depth,
/// as [`output_schema_without_nulls`] describes it: a success has no
/// `error`, an error no `line` when it has none.
///
/// ```
/// use serde_json::json;
/// let report = json!({"ok": true, "error": null, "values": [null, 1], "stats": {"fuel_used": null}});
/// assert_eq!(moonbox::tool::without_nulls(report), json!({"ok": true, "values": [null, 1], "stats": {}}));
/// ```
pub fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .into_iter()
                .filter(|(_, member)| !member.is_null())
                .map(|(name, member)| {
                    // The script's own values keep their nulls.
                    let member = if name == "values" || name == "fields" || name == "args" {
                        member
                    } else {
                        without_nulls(member)
                    };
                    (name, member)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// Rewrites every nullable property of `schema`, at any depth, as its
/// non-null form, and takes it out of `required`.
fn single_typed(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        let mut optional = Vec::new();
        for (name, property) in properties.iter_mut() {
            if drop_null(property) {
                optional.push(name.clone());
            }
            single_typed(property);
        }
        if let Some(Value::Array(required)) = object.get_mut("required") {
            required.retain(|r| !optional.iter().any(|o| r == o.as_str()));
        }
    }
    if let Some(items) = object.get_mut("items") {
        single_typed(items);
    }
}

/// Makes a nullable schema (`"type": [T, "null"]`, or `anyOf` of a null
/// and one other) its non-null form; whether it was nullable.
fn drop_null(schema: &mut Value) -> bool {
    let Some(object) = schema.as_object_mut() else {
        return false;
    };
    if let Some(Value::Array(types)) = object.get("type") {
        let others: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if others.len() < types.len() {
            let single = match others.as_slice() {
                [one] => one.clone(),
                _ => Value::Array(others),
            };
            object.insert("type".to_owned(), single);
            return true;
        }
    }
    let null = json!({ "type": "null" });
    if let Some(Value::Array(branches)) = object.get("anyOf")
        && branches.len() == 2
        && branches.contains(&null)
        && let Some(Value::Object(other)) = branches.iter().find(|b| **b != null).cloned()
    {
        object.remove("anyOf");
        for (key, value) in other {
            object.entry(key).or_insert(value);
        }
        return true;
    }
    false
}

/// The full tool definition in the given format.
///
/// ```
/// use moonbox::tool::{self, SchemaFormat};
/// # fn main() -> Result<(), moonbox::Error> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let responses = tool::definition(&sandbox, SchemaFormat::OpenAiResponses);
/// assert_eq!(responses["strict"], true);
/// assert_eq!(responses["parameters"]["required"], serde_json::json!(["code", "inputs", "args", "files", "stdin"]));
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
    use super::*;

    #[test]
    fn extras_refuse_every_wrong_shape_with_a_sentence_for_the_model() {
        let err = |args: Option<Value>, files: Option<Value>, stdin: Option<Value>| {
            extras(args, files, stdin).expect_err("refused")
        };
        let strings = "`args` must be an array of strings (arg[1..n] and `...`)";
        assert_eq!(err(Some(json!("a b")), None, None), strings);
        assert_eq!(err(Some(json!(["a", 1])), None, None), strings);
        let many = Value::Array(vec![json!(""); crate::Limits::MAX_ARGS + 1]);
        assert_eq!(
            err(Some(many), None, None),
            "`args` has 4097 items; a script takes at most 4096"
        );
        for files in [
            json!(["a"]),
            json!({"a": 1}),
            json!({"a": {"text": "x"}}),
            json!("[1]"),
        ] {
            assert_eq!(err(None, Some(files), None), FILES_SHAPE);
        }
        assert!(err(None, Some(json!("{not json")), None).starts_with("`files` is not valid JSON"));
        let mut too_many = serde_json::Map::new();
        for i in 0..=crate::Limits::MAX_FILES {
            too_many.insert(format!("f{i}"), json!(""));
        }
        assert_eq!(
            err(None, Some(Value::Object(too_many)), None),
            "`files` has 1025 files; a script takes at most 1024"
        );
        assert_eq!(
            err(None, Some(json!({"a\nb": {"base64": "%%"}})), None),
            "files['a\\nb'].base64 is not standard base64: Invalid symbol 37, offset 0."
        );
        assert_eq!(
            err(None, None, Some(json!(["x"]))),
            "`stdin` must be a string: what io.read reads"
        );
        let none = extras(Some(Value::Null), Some(json!(" ")), Some(Value::Null)).unwrap();
        assert_eq!(none, Extras::default());
    }

    #[test]
    fn a_strict_call_decodes_as_the_plain_one() {
        let plain: RunLua = serde_json::from_value(json!({
            "code": "return 1", "args": ["x"], "files": {"a.txt": "hi"}, "stdin": "in"
        }))
        .unwrap();
        let strict: RunLua = serde_json::from_value(json!({
            "code": "return 1", "inputs": null, "args": ["x"],
            "files": "{\"a.txt\": \"hi\"}", "stdin": "in"
        }))
        .unwrap();
        for call in [plain, strict] {
            let script = call.script().unwrap();
            assert_eq!(script.arg_values(), Some(&["x".to_owned()][..]));
            assert_eq!(script.files(), [File::new("a.txt", "hi")]);
            assert_eq!(script.stdin_bytes(), b"in");
        }
        let unknown = serde_json::from_value::<RunLua>(json!({"code": "", "file": {}}));
        assert!(unknown.is_err(), "unknown fields are refused");
    }

    /// Every `type` in `schema`, with its path.
    fn types(schema: &Value, path: &str, out: &mut Vec<(String, Value)>) {
        match schema {
            Value::Object(object) => {
                for (key, value) in object {
                    if key == "type" {
                        out.push((path.to_owned(), value.clone()));
                    }
                    types(value, &format!("{path}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    types(item, &format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn the_schema_without_nulls_has_one_type_per_field_and_nothing_required_that_may_be_absent() {
        let schema = output_schema_without_nulls();
        let mut found = Vec::new();
        types(&schema, "", &mut found);
        for (path, ty) in &found {
            assert!(ty.is_string() && ty != "null", "{path}: {ty}");
        }
        assert!(!schema.to_string().contains("anyOf"));
        assert_eq!(
            schema["required"],
            json!(["version", "ok", "values", "output", "stats", "logs"])
        );
        assert_eq!(
            schema["properties"]["error"]["required"],
            json!(["kind", "message", "chunk", "summary"])
        );
        // The plain schema's nullable fields: six typed `[T, "null"]`
        // (`exit_code`, `error.line`, `error.traceback` and three stats),
        // and `error`, a null or an object.
        let mut plain = Vec::new();
        types(&output_schema(), "", &mut plain);
        let nullable = plain
            .iter()
            .filter(|(_, ty)| ty.as_array().is_some_and(|t| t.contains(&json!("null"))))
            .count();
        assert_eq!(nullable, 6, "{plain:?}");
    }

    #[test]
    fn reports_without_nulls_keep_the_script_s_own_nulls() {
        let report = json!({
            "ok": false, "values": [], "exit_code": null,
            "error": {"kind": "runtime", "line": null, "traceback": null},
            "logs": [{"level": "info", "message": "m", "fields": {"gone": null}}],
            "calls": [{"capability": "c", "args": [null]}],
            "stats": {"instructions": null, "wall_time_us": 3}
        });
        assert_eq!(
            without_nulls(report),
            json!({
                "ok": false, "values": [],
                "error": {"kind": "runtime"},
                "logs": [{"level": "info", "message": "m", "fields": {"gone": null}}],
                "calls": [{"capability": "c", "args": [null]}],
                "stats": {"wall_time_us": 3}
            })
        );
    }

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
