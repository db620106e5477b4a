//! Answers within a bound: an eval's report is encoded only up to the bound
//! it must fit (`--max-reply-bytes` over HTTP, the NATS server's
//! `max_payload` over NATS), so a script that returns a huge value costs
//! the server no more than that; past it, the answer is the refusal
//! `reply_too_large` with the report minus its values. Remote capability
//! calls use the same bounded encoding for their arguments.

use axum::http::StatusCode;
use moonbox_service::reply::{shrink, within};
use serde_json::Value;

use crate::error::ApiError;

/// What a refusal's message adds when the files the script wrote were
/// dropped too.
const FILES_DROPPED: &str = " (the files it wrote were dropped too)";

/// Gives `e` the report of the eval that ran, with as little dropped as
/// lets it fit in `max` bytes: its values, then its output, then the files
/// it wrote (and the message says so); without it when even the stats do
/// not fit.
pub(crate) fn with_report(e: ApiError, report: &Value, max: usize) -> ApiError {
    let fits = |e: &ApiError, kept: &Value| {
        within(&e.clone().with_report(kept.clone()).body(), max).is_some()
    };
    if let Some(kept) = shrink(report, |kept| fits(&e, kept)) {
        return e.with_report(kept);
    }
    let Some(without_files) = report
        .as_object()
        .filter(|r| r.contains_key("files"))
        .map(|r| {
            let mut r = r.clone();
            r.remove("files");
            Value::Object(r)
        })
    else {
        return e;
    };
    let mut dropped = e.clone();
    dropped.message.push_str(FILES_DROPPED);
    match shrink(&without_files, |kept| fits(&dropped, kept)) {
        Some(kept) => dropped.with_report(kept),
        None => e,
    }
}

/// The answer `value` as JSON of at most `max` bytes.
///
/// # Errors
/// `reply_too_large` (413), naming `bound`, with the report minus its
/// values (and minus its output, if that does not fit either).
pub(crate) fn encode(value: &Value, max: usize, bound: &str) -> Result<Vec<u8>, ApiError> {
    if let Some(bytes) = within(value, max) {
        return Ok(bytes);
    }
    let e = ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "reply_too_large",
        format!(
            "the answer is larger than {bound} ({max} bytes), so its values were dropped; return less (or a summary), or raise the bound"
        ),
    );
    Err(with_report(e, value, max))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn report(value: &str, output: &str) -> Value {
        json!({"ok": true, "values": [value], "output": output, "logs": [],
               "stats": {"instructions": 3}})
    }

    #[test]
    fn an_answer_within_the_bound_is_sent_as_it_is() {
        let value = report("small", "");
        let bytes = encode(&value, 1000, "the bound").unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), value);
    }

    #[test]
    fn past_the_bound_the_values_are_dropped_and_the_rest_kept() {
        let value = report(&"x".repeat(5000), "printed\n");
        let e = encode(&value, 1000, "--max-reply-bytes").unwrap_err();
        assert_eq!(e.kind, "reply_too_large");
        assert!(e.message.contains("--max-reply-bytes (1000 bytes)"));
        let kept = e.report.as_ref().unwrap();
        assert_eq!(kept["values"], json!([]));
        assert_eq!(kept["output"], "printed\n");
        assert_eq!(kept["stats"]["instructions"], 3);
        assert!(e.body().to_string().len() <= 1000);
    }

    #[test]
    fn the_files_a_script_wrote_are_dropped_last_and_the_message_says_so() {
        let mut value = report(&"x".repeat(5000), "printed\n");
        value["files"] = json!([{"name": "a.txt", "size": 3000, "text": "f".repeat(3000)}]);
        // Room for the files once the value is gone: they are kept.
        let e = encode(&value, 4000, "the bound").unwrap_err();
        assert_eq!(e.report.as_ref().unwrap()["files"][0]["size"], 3000);
        assert!(!e.message.contains("files"), "{}", e.message);
        let mut value = report("small", "printed\n");
        value["files"] = json!([{"name": "a.txt", "size": 5000, "text": "f".repeat(5000)}]);
        let e = encode(&value, 1000, "the bound").unwrap_err();
        let kept = e.report.as_ref().unwrap();
        assert!(kept.get("files").is_none(), "{kept}");
        assert_eq!(kept["stats"]["instructions"], 3);
        assert!(e.message.ends_with(FILES_DROPPED), "{}", e.message);
        assert!(e.body().to_string().len() <= 1000);
    }

    #[test]
    fn when_the_output_does_not_fit_either_only_the_costs_are_kept() {
        let value = report(&"x".repeat(5000), &"y".repeat(5000));
        let e = encode(&value, 1000, "the bound").unwrap_err();
        let kept = e.report.as_ref().unwrap();
        assert_eq!(kept["values"], json!([]));
        assert_eq!(kept["output"], "");
        assert_eq!(kept["stats"]["instructions"], 3);
        // And with no room for even that, the refusal alone.
        let e = encode(&value, 100, "the bound").unwrap_err();
        assert!(e.report.is_none());
    }
}
