//! What the targets that drive a sandbox share: one runtime per process,
//! and the checks every eval's outcome must pass.
#![allow(dead_code, reason = "each target uses the part it needs")]

use std::future::Future;
use std::sync::OnceLock;

use moonbox::{EvalError, EvalOutput, Sandbox};

/// Runs `future` to completion on the process's one current-thread runtime.
pub fn block_on<F: Future>(future: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("a runtime")
        })
        .block_on(future)
}

/// Every outcome: its report is one JSON object of version 1, and an
/// error's `Display` is one line with no control characters.
pub fn assert_reportable(outcome: &Result<EvalOutput, EvalError>) {
    let report = moonbox::Report::from(outcome).to_json();
    assert!(report.is_object() && report["version"] == 1, "{report}");
    if let Err(e) = outcome {
        let line = e.to_string();
        assert!(
            !line.chars().any(char::is_control),
            "Display is one clean line: {line:?}"
        );
    }
}

/// The sandbox still serves: a clean eval gives its value.
pub async fn assert_serving<T: Default + Send + Sync + 'static>(sandbox: &Sandbox<T>) {
    let out = sandbox
        .eval_with(T::default(), "return 1 + 1")
        .await
        .expect("the sandbox keeps serving");
    assert_eq!(out.values, [serde_json::json!(2)]);
}
