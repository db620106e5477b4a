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

/// Gives `e` the report of the eval that ran, with as little dropped as
/// lets it fit in `max` bytes; without it when even the stats do not.
pub(crate) fn with_report(e: ApiError, report: &Value, max: usize) -> ApiError {
    let fits = |kept: &Value| within(&e.clone().with_report(kept.clone()).body(), max).is_some();
    match shrink(report, fits) {
        Some(kept) => e.with_report(kept),
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
