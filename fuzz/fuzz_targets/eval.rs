//! `Sandbox::eval` on arbitrary bytes (Lua source is bytes): whatever the
//! script, the host must not crash, the result must be a value or a typed
//! error whose report is one JSON object, output never passes its limit, and
//! the sandbox must keep serving.
#![no_main]

mod shared;

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use moonbox::{Capability, CapabilityError, ErrorKind, Limits, Sandbox};

fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        let limits = Limits {
            max_instructions: 200_000,
            max_memory_bytes: 8 << 20,
            max_string_bytes: 1 << 20,
            max_output_bytes: 16 << 10,
            fuel: Some(100_000_000),
            timeout: Duration::from_secs(2),
            ..Limits::default()
        };
        let echo = Capability::<()>::sync("echo", |_, (v,): (serde_json::Value,)| {
            Ok::<_, CapabilityError>(v)
        });
        Sandbox::builder()
            .limits(limits)
            .capability(echo)
            .build()
            .expect("the sandbox builds")
    })
}

fuzz_target!(|data: &[u8]| {
    let sandbox = sandbox();
    shared::block_on(async {
        let outcome = sandbox.eval(data).await;
        shared::assert_reportable(&outcome);
        let max_output = sandbox.limits().max_output_bytes as usize;
        match outcome {
            Ok(out) => {
                assert!(out.output.len() <= max_output);
                serde_json::to_string(&moonbox::Report::from(&out)).expect("outputs serialize");
            }
            Err(e) => {
                assert!(e.output.len() <= max_output);
                assert_ne!(
                    e.kind,
                    ErrorKind::SessionPoisoned,
                    "a fresh eval is never poisoned"
                );
            }
        }
        shared::assert_serving(sandbox).await;
    });
});
