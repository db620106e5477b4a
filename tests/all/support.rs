//! Shared helpers: a default sandbox and assertions on outcomes.

use moonbox::{ErrorKind, EvalError, EvalOutput, Limits, Sandbox};
use serde_json::Value;

/// A sandbox with default limits and nothing allowed.
pub fn sandbox() -> Sandbox {
    Sandbox::builder()
        .build()
        .expect("the default sandbox builds")
}

/// A sandbox with the given limits.
pub fn with_limits(limits: Limits) -> Sandbox {
    Sandbox::builder()
        .limits(limits)
        .build()
        .expect("the sandbox builds")
}

/// Runs `code` and returns its output, failing the test on an error.
pub async fn ok<T: Default + Send + Sync + 'static>(
    sandbox: &Sandbox<T>,
    code: &str,
) -> EvalOutput {
    match sandbox.eval_with(T::default(), code).await {
        Ok(out) => out,
        Err(e) => panic!("expected {code:?} to succeed, got {e:#}"),
    }
}

/// Runs `code` and returns its values.
pub async fn values<T: Default + Send + Sync + 'static>(
    sandbox: &Sandbox<T>,
    code: &str,
) -> Vec<Value> {
    ok(sandbox, code).await.values
}

/// Runs `code`, expecting an error of `kind`, and returns it.
pub async fn fails<T: Default + Send + Sync + 'static>(
    sandbox: &Sandbox<T>,
    code: &str,
    kind: ErrorKind,
) -> EvalError {
    match sandbox.eval_with(T::default(), code).await {
        Ok(out) => panic!(
            "expected {code:?} to fail with {kind}, got {:?}",
            out.values
        ),
        Err(e) => {
            assert_eq!(e.kind, kind, "wrong kind for {code:?}: {e:#}");
            e
        }
    }
}

/// The sandbox still runs a clean eval.
pub async fn assert_usable<T: Default + Send + Sync + 'static>(sandbox: &Sandbox<T>) {
    assert_eq!(
        values(sandbox, "return 1 + 1").await,
        [serde_json::json!(2)]
    );
}
