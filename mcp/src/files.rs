//! `run_lua`'s arguments, files and standard input, and the files a run
//! wrote as MCP embedded resources.
//!
//! In: `args` (an array of strings: the global `arg` and the chunk's
//! `...`), `files` (an object of name to text, or to `{"base64": ...}` for
//! bytes, mounted read-only) and `stdin` (a string `io.stdin` reads). At
//! most [`Limits::MAX_ARGS`] arguments and [`Limits::MAX_FILES`] files, and
//! all of them together (the files' bytes, the arguments' and stdin's) at
//! most the server's `max_code_bytes`; the sandbox then counts the files
//! and stdin against its memory limit.
//!
//! Out: each file the run wrote is in the report (`structuredContent`'s
//! `files`) and, when the answer has room for both, an embedded resource
//! `file:///NAME` in `content`.

use base64::Engine as _;
use moonbox::{Limits, ReportFile, Script};
use rmcp::model::{ContentBlock, ResourceContents};
use serde_json::{Map, Value, json};

use crate::error::ToolError;

/// A call's `args`, `files` and `stdin`, checked.
#[derive(Default)]
pub(crate) struct Extras {
    args: Option<Vec<String>>,
    files: Vec<(String, Vec<u8>)>,
    stdin: Option<Vec<u8>>,
}

impl Extras {
    /// `script` with these arguments, files and stdin.
    pub(crate) fn apply(self, mut script: Script) -> Script {
        if let Some(args) = self.args {
            script = script.args(args);
        }
        for (name, bytes) in self.files {
            script = script.file(name, bytes);
        }
        if let Some(stdin) = self.stdin {
            script = script.stdin(stdin);
        }
        script
    }
}

/// Takes `args`, `files` and `stdin` out of `arguments`.
///
/// # Errors
/// [`ToolError::Arguments`] for a value of the wrong shape, more arguments
/// or files than a script takes, or base64 that does not decode;
/// [`ToolError::FilesTooLarge`] past `max_bytes` together.
pub(crate) fn take(
    arguments: &mut Map<String, Value>,
    max_bytes: u64,
) -> Result<Extras, ToolError> {
    let mut extras = Extras::default();
    let mut total: u64 = 0;
    let mut count = |len: usize| -> Result<(), ToolError> {
        total = total.saturating_add(u64::try_from(len).unwrap_or(u64::MAX));
        if total > max_bytes {
            return Err(ToolError::FilesTooLarge { max: max_bytes });
        }
        Ok(())
    };
    let not_strings = || {
        ToolError::Arguments("`args` must be an array of strings (arg[1..n] and `...`)".to_owned())
    };
    match arguments.remove("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            if items.len() > Limits::MAX_ARGS {
                return Err(ToolError::Arguments(format!(
                    "`args` has {} items; a script takes at most {}",
                    items.len(),
                    Limits::MAX_ARGS
                )));
            }
            let mut args = Vec::with_capacity(items.len());
            for item in items {
                let Value::String(arg) = item else {
                    return Err(not_strings());
                };
                count(arg.len())?;
                args.push(arg);
            }
            extras.args = Some(args);
        }
        Some(_) => return Err(not_strings()),
    }
    match arguments.remove("files") {
        None | Some(Value::Null) => {}
        Some(Value::Object(files)) => {
            if files.len() > Limits::MAX_FILES {
                return Err(ToolError::Arguments(format!(
                    "`files` has {} files; a script takes at most {}",
                    files.len(),
                    Limits::MAX_FILES
                )));
            }
            for (name, content) in files {
                count(name.len())?;
                let bytes = file_bytes(&name, content)?;
                count(bytes.len())?;
                extras.files.push((name, bytes));
            }
        }
        Some(_) => return Err(ToolError::Arguments(FILES_SHAPE.to_owned())),
    }
    match arguments.remove("stdin") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => {
            count(text.len())?;
            extras.stdin = Some(text.into_bytes());
        }
        Some(_) => {
            return Err(ToolError::Arguments(
                "`stdin` must be a string: what io.read reads".to_owned(),
            ));
        }
    }
    Ok(extras)
}

const FILES_SHAPE: &str =
    "`files` must be an object of file name -> text, or -> {\"base64\": \"...\"} for bytes";

/// A file's bytes: its text, or its `{"base64": ...}` decoded.
fn file_bytes(name: &str, content: Value) -> Result<Vec<u8>, ToolError> {
    match content {
        Value::String(text) => Ok(text.into_bytes()),
        Value::Object(mut object) if object.len() == 1 => match object.remove("base64") {
            Some(Value::String(encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded.as_bytes())
                .map_err(|e| {
                    ToolError::Arguments(format!(
                        "files['{}'].base64 is not standard base64: {e}",
                        shown(name)
                    ))
                }),
            _ => Err(ToolError::Arguments(FILES_SHAPE.to_owned())),
        },
        _ => Err(ToolError::Arguments(FILES_SHAPE.to_owned())),
    }
}

/// A name as a message shows it: its first 64 characters, controls escaped.
fn shown(name: &str) -> String {
    name.chars()
        .take(64)
        .flat_map(char::escape_default)
        .collect()
}

/// The properties `run_lua`'s input schema gains.
pub(crate) fn input_properties() -> Value {
    json!({
        "args": {
            "type": "array",
            "items": { "type": "string" },
            "description": "Arguments, as `lua script.lua a b` gives them: the global `arg` (arg[1..n]; arg[0] is the chunk name) and the chunk's `...`. Without it, `arg` is nil."
        },
        "files": {
            "type": "object",
            "description": "Files to mount read-only before the code runs: name (like data/in.csv) -> text, or -> {\"base64\": \"...\"} for bytes. io.open, io.lines, loadfile, dofile and require (./?.lua, ./?/init.lua) read them. In a session they stay for later calls.",
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
        "stdin": {
            "type": "string",
            "description": "What io.stdin, io.read and io.lines() read (empty without it)."
        }
    })
}

/// The `files` property of `run_lua`'s output schema: the report's
/// [`ReportFile`]s.
pub(crate) fn output_property() -> Value {
    json!({
        "type": "array",
        "description": "The files the run created or wrote that exist at its end, sorted by name (absent when none): text when UTF-8, else base64. Also in content as embedded resources file:///NAME.",
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
    })
}

/// The files of a report (its JSON) as embedded resources: `file:///NAME`
/// (the name percent-encoded), `text/plain` with their text, or
/// `application/octet-stream` with their base64.
pub(crate) fn resources(report: &Value) -> Vec<ContentBlock> {
    let Some(files) = report.get("files").and_then(Value::as_array) else {
        return Vec::new();
    };
    files
        .iter()
        .filter_map(|file| serde_json::from_value::<ReportFile>(file.clone()).ok())
        .map(|file| {
            let uri = uri(&file.name);
            let contents = match (file.text, file.base64) {
                (Some(text), _) => ResourceContents::text(text, uri),
                (None, blob) => ResourceContents::blob(blob.unwrap_or_default(), uri)
                    .with_mime_type("application/octet-stream"),
            };
            ContentBlock::resource(contents)
        })
        .collect()
}

/// `file:///` and the name, each byte outside the unreserved set and `/`
/// percent-encoded.
fn uri(name: &str) -> String {
    let mut uri = String::from("file:///");
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The report without its files, for an answer that has no room for them.
pub(crate) fn without_files(report: &Value) -> Value {
    let mut kept = report.clone();
    if let Some(map) = kept.as_object_mut() {
        map.remove("files");
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: Value, max: u64) -> Result<Script, ToolError> {
        let Value::Object(mut map) = value else {
            unreachable!()
        };
        take(&mut map, max).map(|extras| extras.apply(Script::new("")))
    }

    #[test]
    fn files_are_text_or_base64_and_bounded() {
        let script = parse(
            json!({"files": {"a.txt": "hi", "b.bin": {"base64": "AP8="}}, "stdin": "in", "args": ["x"]}),
            100,
        )
        .unwrap();
        assert_eq!(script.files()[0].bytes, b"hi");
        assert_eq!(script.files()[1].bytes, b"\0\xff");
        let err = parse(json!({"files": {"a": {"base64": "%%"}}}), 100).unwrap_err();
        assert!(err.to_string().contains("files['a'].base64"), "{err}");
        let err = parse(json!({"files": {"a": 1}}), 100).unwrap_err();
        assert!(err.to_string().contains("name -> text"), "{err}");
        let err = parse(json!({"files": ["a"]}), 100).unwrap_err();
        assert!(err.to_string().contains("name -> text"), "{err}");
        let err = parse(
            json!({"files": {"a": "x".repeat(60)}, "stdin": "y".repeat(60)}),
            100,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`args`, `files` and `stdin` take more than the 100 bytes allowed together"
        );
        let err = parse(json!({"args": [1]}), 100).unwrap_err();
        assert!(err.to_string().contains("array of strings"), "{err}");
        let many: Vec<Value> = (0..=Limits::MAX_ARGS).map(|_| json!("")).collect();
        let err = parse(json!({ "args": many }), 100).unwrap_err();
        assert!(err.to_string().contains("at most 4096"), "{err}");
        let err = parse(json!({"stdin": [1]}), 100).unwrap_err();
        assert!(
            err.to_string().contains("`stdin` must be a string"),
            "{err}"
        );
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri("out/a b#1.txt"), "file:///out/a%20b%231.txt");
        assert_eq!(uri("é"), "file:///%C3%A9");
    }

    #[test]
    fn text_files_are_text_resources_and_bytes_blobs() {
        let report = json!({"files": [
            {"name": "a.txt", "size": 2, "text": "hi"},
            {"name": "b.bin", "size": 2, "base64": "AP8="}
        ]});
        let blocks = serde_json::to_value(resources(&report)).unwrap();
        assert_eq!(
            blocks,
            json!([
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hi"}},
                {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "AP8="}}
            ])
        );
        assert!(resources(&json!({"ok": true})).is_empty());
    }
}
