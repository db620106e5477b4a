//! `run_lua`'s arguments, files and standard input, and the files a run
//! wrote as MCP embedded resources.
//!
//! In: `args` (an array of strings: the global `arg` and the chunk's
//! `...`), `files` (an object of name to text, or to `{"base64": ...}` for
//! bytes, mounted read-only) and `stdin` (a string `io.stdin` reads), as
//! the crate decodes and describes them (`moonbox::tool`). At
//! most [`moonbox::Limits::MAX_ARGS`] arguments and [`moonbox::Limits::MAX_FILES`] files, and
//! all of them together (the files' bytes, the arguments' and stdin's) at
//! most the server's `max_code_bytes`; the sandbox then counts the files
//! and stdin against its memory limit.
//!
//! Out: each file the run wrote is in the report (`structuredContent`'s
//! `files`) and, when the answer has room for both, an embedded resource
//! `file:///NAME` in `content`.

use moonbox::ReportFile;
use moonbox::tool::{self, Extras};
use rmcp::model::{ContentBlock, ResourceContents};
use serde_json::{Map, Value};

use crate::error::ToolError;

/// Takes `args`, `files` and `stdin` out of `arguments`, decoded by the
/// crate's rule (`moonbox::tool::extras`, which the tool's schema
/// describes), and bounds them together by `max_bytes`.
///
/// # Errors
/// [`ToolError::Arguments`] for a value of the wrong shape, more arguments
/// or files than a script takes, or base64 that does not decode;
/// [`ToolError::FilesTooLarge`] past `max_bytes` together.
pub(crate) fn take(
    arguments: &mut Map<String, Value>,
    max_bytes: u64,
) -> Result<Extras, ToolError> {
    let extras = tool::extras(
        arguments.remove("args"),
        arguments.remove("files"),
        arguments.remove("stdin"),
    )
    .map_err(ToolError::Arguments)?;
    if extras.bytes() > max_bytes {
        return Err(ToolError::FilesTooLarge { max: max_bytes });
    }
    Ok(extras)
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
    use moonbox::Script;
    use serde_json::json;

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
        let many: Vec<Value> = (0..=moonbox::Limits::MAX_ARGS).map(|_| json!("")).collect();
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
