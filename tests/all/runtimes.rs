//! The shared case list that every host of the component runs
//! (`runtimes/cases.json`) passes through the Rust host. Node, Python and
//! the wasmtime CLI run the same list with `just runtimes`, which also
//! checks that every host printed identical lines.

use std::path::Path;

use moonbox_tests::cases;
use serde_json::{Value, json};

#[tokio::test]
async fn shared_cases_pass_on_the_rust_host() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtimes/cases.json");
    let file = cases::load(&path).expect("the case list loads");
    assert!(file.cases.len() >= 20, "the case list lost cases");
    let mut failures = Vec::new();
    for case in &file.cases {
        let result = cases::run(&file, case).await;
        if let Err(e) = cases::check(case, &result) {
            failures.push(format!("{}: {e}", case["name"]));
        }
    }
    assert!(
        failures.is_empty(),
        "cases failed:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_checker_keeps_integers_and_floats_apart() {
    let case = serde_json::json!({"name": "n", "expect": {"values": [1.0]}});
    let int = serde_json::json!({"ok": true, "values": [1], "output": ""});
    let float = serde_json::json!({"ok": true, "values": [1.0], "output": "", "logs": []});
    assert!(cases::check(&case, &int).is_err());
    assert!(cases::check(&case, &float).is_ok());
    let case = serde_json::json!({"name": "n", "expect": {"values": [9007199254740993_u64]}});
    let near = serde_json::json!({"ok": true, "values": [9007199254740992_u64], "output": ""});
    assert!(
        cases::check(&case, &near).is_err(),
        "integers compare whole"
    );
}

#[test]
fn the_checker_rejects_a_wrong_kind_or_unexpected_output() {
    let case = serde_json::json!({"name": "n", "expect": {"error": "runtime"}});
    let syntax = serde_json::json!({"ok": false, "error": {"kind": "syntax"}, "output": ""});
    let printed = serde_json::json!({"ok": false, "error": {"kind": "runtime"}, "output": "x"});
    let right =
        serde_json::json!({"ok": false, "error": {"kind": "runtime"}, "output": "", "logs": []});
    assert!(cases::check(&case, &syntax).is_err());
    assert!(cases::check(&case, &printed).is_err());
    assert!(cases::check(&case, &right).is_ok());
}

#[test]
fn the_checker_compares_log_events_exactly() {
    let event = serde_json::json!({"level": "info", "message": "m", "fields": {"x": 1.0}});
    let case = serde_json::json!({"name": "n", "expect": {"values": [], "logs": [event]}});
    let line = |logs| serde_json::json!({"ok": true, "values": [], "output": "", "logs": logs});
    assert!(cases::check(&case, &line(serde_json::json!([event]))).is_ok());
    let int = serde_json::json!([{"level": "info", "message": "m", "fields": {"x": 1}}]);
    assert!(cases::check(&case, &line(int)).is_err(), "1 is not 1.0");
    assert!(cases::check(&case, &line(serde_json::json!([]))).is_err());
    // A case that expects no events rejects a line that has some, or none.
    let quiet = serde_json::json!({"name": "n", "expect": {"values": []}});
    assert!(cases::check(&quiet, &line(serde_json::json!([event]))).is_err());
    let missing = serde_json::json!({"ok": true, "values": [], "output": ""});
    assert!(cases::check(&quiet, &missing).is_err());
}

#[test]
fn the_checker_compares_written_files() {
    let file = serde_json::json!({"name": "out.txt", "size": 2, "text": "12"});
    let case = serde_json::json!({"name": "n", "expect": {"values": [], "files": [file]}});
    let line = |files| serde_json::json!({"ok": true, "values": [], "output": "", "logs": [], "files": files});
    assert!(cases::check(&case, &line(serde_json::json!([file]))).is_ok());
    let other = serde_json::json!([{"name": "out.txt", "size": 2, "text": "13"}]);
    assert!(cases::check(&case, &line(other)).is_err());
    assert!(cases::check(&case, &line(serde_json::json!(null))).is_err());
    // A case that expects none rejects a line with some; a report leaves
    // the member out when there are none.
    let quiet = serde_json::json!({"name": "n", "expect": {"values": []}});
    assert!(cases::check(&quiet, &line(serde_json::json!([file]))).is_err());
    assert!(cases::check(&quiet, &line(serde_json::json!(null))).is_ok());
}

/// The comparison the case list's expectations use keeps integers and
/// floats apart and compares numbers exactly.
#[test]
fn case_values_are_compared_exactly() {
    let big: Value = serde_json::from_str("9007199254740993").unwrap();
    let near: Value = serde_json::from_str("9007199254740992").unwrap();
    assert!(!cases::strictly_equal(&big, &near), "2^53 + 1 is not 2^53");
    assert!(!cases::strictly_equal(&json!(1), &json!(1.0)));
    assert!(!cases::strictly_equal(&json!(0.0), &json!(-0.0)));
    assert!(cases::strictly_equal(&json!(u64::MAX), &json!(u64::MAX)));
    assert!(!cases::strictly_equal(&json!(-1), &json!(u64::MAX)));
}
