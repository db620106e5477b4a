//! A finished eval's answer, within bounds: the report once, in
//! `structuredContent`, and a text line of at most [`TEXT_BYTES`] for a
//! client that reads only text. The structured content leads with the same
//! line, as [`structured`] wraps them, so that a client that shows a model
//! the JSON shows the line first; the whole at most
//! [`ServerConfig::max_reply_bytes`](crate::ServerConfig::max_reply_bytes)
//! (else `reply_too_large`), and, over HTTP, within the memory for answers
//! not yet taken (else `replies_busy`).

use moonbox::{EvalError, EvalOutput, Report, tool};

use crate::files;
use moonbox_service::reply::{self, Pending, SMALL_REPLY_BYTES};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

/// The most bytes of an answer's text line: a longer line is cut, and its
/// values are in the structured content alone, so that an answer does not
/// carry them twice.
pub(crate) const TEXT_BYTES: usize = 8 << 10;

/// Room left in the bound for the JSON-RPC envelope and the event's
/// framing around the report and the text.
const ENVELOPE_BYTES: usize = 1 << 10;

/// What became of a call's named session, when the result should say.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum After {
    /// Nothing to say: the session goes on, or there was none.
    Nothing,
    /// The eval left the session unusable, so it was restarted with fresh
    /// globals.
    Restarted(String),
    /// close_session closed the session while the call ran.
    Closed(String),
}

/// What a refusal's line adds when the files the script wrote were dropped.
const FILES_DROPPED: &str = " (the files it wrote were dropped too)";

/// What the line says when the files are in the report only.
const NO_ROOM_FOR_RESOURCES: &str = " (the files it wrote are only in the structured content: the answer has no room for them twice)";

/// Where the rest of a cut line is.
const REST_IN_REPORT: &str = "; the whole report is in the structured content";

/// The structured content of a `run_lua` answer: `answer`, the line a
/// model acts on (the text content's), then `report`, the moonbox report
/// without its nulls. Object members go out in name order, so `answer`
/// leads and the report's heavy fields (traceback, stats, calls) follow.
pub(crate) fn structured(line: &str, report: Value) -> Value {
    json!({ "answer": line, "report": report })
}

/// The schema of [`structured`]: the line, and the crate's report schema
/// with one type per field.
pub(crate) fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "description": "The one line to read first: the values (and what was printed), or error[kind]: chunk:line: message. The same as the text content."
            },
            "report": tool::output_schema_without_nulls()
        },
        "required": ["answer", "report"]
    })
}

/// `line`, the first bytes of one `whole` bytes long, saying so when it
/// was cut, and where the rest is (`rest`).
fn said_cut(mut line: String, whole: usize, rest: &str) -> String {
    if whole > line.len() {
        line.push_str(&format!(
            " ... (the first {} of {whole} bytes{rest})",
            line.len()
        ));
    }
    line
}

/// `text` cut to at most [`TEXT_BYTES`] on a character boundary, saying so
/// when it was.
fn cut(mut text: String) -> String {
    let whole = text.len();
    let mut end = TEXT_BYTES.min(whole);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    said_cut(text, whole, "")
}

/// A finished eval's answer: one line for the model, the report as
/// structured content, and `isError` for any failure. `pending` is the
/// HTTP request's share of the memory for answers (none over stdio).
pub(crate) fn finished(
    outcome: &Result<EvalOutput, EvalError>,
    after: After,
    max_reply_bytes: usize,
    pending: Option<&Pending>,
) -> CallToolResult {
    let (line, whole) = tool::summary_cut(outcome, TEXT_BYTES);
    let mut line = said_cut(line, whole, REST_IN_REPORT);
    match after {
        After::Nothing => {}
        After::Restarted(id) => line.push_str(&format!(
            " (session {id} could not go on after this, so it was restarted: its globals are gone)"
        )),
        After::Closed(id) => {
            line.push_str(&format!(" (session {id} was closed while this call ran)"))
        }
    }
    // As the output schema describes it: what would be null left out.
    let report = tool::without_nulls(Report::from(outcome).to_json());
    // The line goes twice: as the text content and as the structured
    // content's `answer`.
    let line_bytes = text_bytes(&line);
    let room = max_reply_bytes.saturating_sub(2 * line_bytes + ENVELOPE_BYTES);
    let reserve = |bytes: usize| pending.is_none_or(|pending| pending.reserve(bytes));
    if let Some(size) = reply::size_within(&report, room) {
        // The files the script wrote go as resources too, when the answer
        // has room for them twice; else only in the report, and the line
        // says so.
        let resources = files::resources(&report);
        let resource_bytes = if resources.is_empty() {
            Some(0)
        } else {
            serde_json::to_value(&resources)
                .ok()
                .and_then(|blocks| reply::size_within(&blocks, room - size))
        };
        let mut content = Vec::with_capacity(1 + resources.len());
        let extra = match resource_bytes {
            Some(bytes) => {
                content.push(ContentBlock::text(line.clone()));
                content.extend(resources);
                bytes
            }
            None => {
                line.push_str(NO_ROOM_FOR_RESOURCES);
                content.push(ContentBlock::text(line.clone()));
                2 * NO_ROOM_FOR_RESOURCES.len()
            }
        };
        let answer_line = line;
        if !reserve(size + line_bytes + extra + ENVELOPE_BYTES) {
            return busy(outcome, &report);
        }
        let mut result = match outcome {
            Ok(_) => CallToolResult::success(content),
            Err(_) => CallToolResult::error(content),
        };
        result.structured_content = Some(structured(&answer_line, report));
        return result;
    }
    let why = format!(
        "error[reply_too_large]: the answer is larger than max_reply_bytes ({max_reply_bytes} bytes), so its values were dropped; return less (or a summary), or raise --max-reply-bytes"
    );
    let (result, size) = refusal(why, outcome, &report, room);
    // What is kept (the output, the logs) may be large too: it holds its
    // part of the memory for answers like any answer.
    if !reserve(size + ENVELOPE_BYTES) {
        return busy(outcome, &report);
    }
    result
}

/// The answer when the memory for answers has no room for this one: the
/// report cut to a small answer, which needs no part of it.
fn busy(outcome: &Result<EvalOutput, EvalError>, report: &Value) -> CallToolResult {
    let why = "error[replies_busy]: the server holds as many answers as it may while their clients take them, so this answer's values were dropped; try again shortly, or return less".to_owned();
    refusal(why, outcome, report, SMALL_REPLY_BYTES - ENVELOPE_BYTES).0
}

/// The bytes `text` takes as a JSON string, escapes included.
fn text_bytes(text: &str) -> usize {
    reply::size_within(&Value::String(text.to_owned()), usize::MAX).unwrap_or(usize::MAX)
}

/// An answer that could not be sent whole: `why`, then the script's own
/// error if it failed, and the report with as little dropped as fits in
/// `room` bytes (its stats are always kept when anything is); with the
/// bytes it takes, less the envelope.
fn refusal(
    mut why: String,
    outcome: &Result<EvalOutput, EvalError>,
    report: &Value,
    room: usize,
) -> (CallToolResult, usize) {
    if let Err(e) = outcome {
        why.push_str(&format!(" (the script itself failed: {e})"));
    }
    let mut why = cut(why.replace(['\n', '\r'], " "));
    // Twice: the text content and the structured content's `answer`.
    let why_bytes = 2 * (text_bytes(&why) + FILES_DROPPED.len());
    let room = room.saturating_sub(why_bytes);
    let mut kept_bytes = 0;
    let mut fits = |kept: &Value| {
        reply::size_within(kept, room)
            .inspect(|n| kept_bytes = *n)
            .is_some()
    };
    // The files the script wrote are dropped last, after its values and
    // output, and the line says so.
    let mut kept = reply::shrink(report, &mut fits);
    if kept.is_none() && report.get("files").is_some() {
        kept = reply::shrink(&files::without_files(report), &mut fits);
        if kept.is_some() {
            why.push_str(FILES_DROPPED);
        }
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(why.clone())]);
    result.structured_content = kept.map(|report| structured(&why, report));
    (result, why_bytes + kept_bytes)
}

#[cfg(test)]
mod tests {
    use moonbox_service::reply::Budget;

    use super::*;

    fn text(result: &CallToolResult) -> String {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    }

    #[tokio::test]
    async fn what_a_refusal_keeps_holds_its_part_of_the_reply_memory() {
        let sandbox = moonbox::Sandbox::builder().build().unwrap();
        // 600 KiB of output, and a value past the reply bound.
        let outcome = sandbox
            .eval("io.write(string.rep('o', 600 * 1024)) return string.rep('v', 2 * 1024 * 1024)")
            .await;
        let budget = Budget::new(1 << 20);
        let first = Pending::new(budget.clone());
        let kept = finished(&outcome, After::Nothing, 1 << 20, Some(&first));
        assert!(
            text(&kept).starts_with("error[reply_too_large]"),
            "{}",
            text(&kept)
        );
        let structured = kept.structured_content.as_ref().unwrap();
        assert_eq!(structured["answer"], text(&kept), "the line leads");
        let report = &structured["report"];
        assert_eq!(report["output"].as_str().unwrap().len(), 600 * 1024);
        // The first refusal holds 600 KiB of the 1 MiB: a second does not fit,
        // and is cut to a small answer.
        let second = finished(
            &outcome,
            After::Nothing,
            1 << 20,
            Some(&Pending::new(budget)),
        );
        assert!(
            text(&second).starts_with("error[replies_busy]"),
            "{}",
            text(&second)
        );
        let report = &second.structured_content.as_ref().unwrap()["report"];
        assert_eq!(report["output"], "");
        assert!(report["stats"]["instructions"].as_u64().unwrap() > 0);
    }

    #[test]
    fn a_long_text_is_cut_on_a_character_boundary_and_says_so() {
        assert_eq!(cut("short".to_owned()), "short");
        let long = "é".repeat(TEXT_BYTES);
        let kept = cut(long.clone());
        assert!(kept.starts_with(&"é".repeat(TEXT_BYTES / 2)));
        assert!(kept.len() < TEXT_BYTES + 200);
        assert!(
            kept.ends_with(&format!("of {} bytes)", long.len())),
            "{kept}"
        );
    }
}
