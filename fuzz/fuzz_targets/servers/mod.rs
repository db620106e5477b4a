//! What the server targets share: a runtime, and a sandbox whose limits
//! end every script fast, so that an input that runs Lua costs little.

use std::time::Duration;

use moonbox::{Limits, Sandbox};

/// The most of an answer kept: enough for every status line and refusal.
pub const MAX_OUTPUT: usize = 1 << 20;

/// How long one input may take before it counts as a hang.
pub const INPUT_DEADLINE: Duration = Duration::from_secs(10);

/// A single-threaded runtime with timers and I/O.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// A sandbox that stops a script after 100,000 instructions or 500 ms.
pub fn sandbox(runtime: &tokio::runtime::Runtime) -> Sandbox {
    let limits = Limits {
        max_instructions: 100_000,
        timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    runtime
        .block_on(Sandbox::builder().limits(limits).build_async())
        .expect("the sandbox builds")
}
