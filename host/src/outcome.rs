//! What a successful eval returns.

use serde::{Deserialize, Serialize};

/// The result of an eval that finished.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let out = sandbox.eval("print('hi') return 1, 2.5, {a = true}").await?;
/// assert_eq!(out.output, ["hi"]);
/// assert_eq!(out.values, [serde_json::json!(1), serde_json::json!(2.5), serde_json::json!({"a": true})]);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalOutput {
    /// The chunk's return values, converted to JSON (see docs/wit.md for
    /// the rules).
    pub values: Vec<serde_json::Value>,
    /// One entry per `print` call, without the newline.
    pub output: Vec<String>,
    /// What the eval cost.
    pub stats: Stats,
}

/// What an eval cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Wasmtime fuel the eval consumed (starting an instance has its own
    /// budget and is not included).
    pub fuel_used: u64,
    /// Lua VM instructions, counted in the guest's hook steps (1,000 on
    /// the main thread, 100 in coroutines).
    pub instructions: u64,
    /// The most bytes the Lua heap held during the eval.
    pub peak_memory_bytes: u64,
    /// Wall-clock time of the eval, in microseconds.
    pub wall_time_us: u64,
    /// Capability calls the script made.
    pub capability_calls: u32,
}
