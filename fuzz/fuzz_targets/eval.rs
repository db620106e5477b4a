//! `Sandbox::eval` on arbitrary bytes (Lua source is bytes): whatever the
//! script, the host must not crash, the result must be a value or a typed
//! error whose report is one JSON object, output never passes its limit, and
//! the sandbox must keep serving.
#![no_main]

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use moonbox::{Capability, CapabilityError, ErrorKind, Limits, Sandbox};

struct Fixture {
    runtime: tokio::runtime::Runtime,
    sandbox: Sandbox,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        let limits = Limits {
            max_instructions: 200_000,
            max_memory_bytes: 8 << 20,
            max_string_bytes: 1 << 20,
            max_output_bytes: 16 << 10,
            fuel: 100_000_000,
            timeout: Duration::from_secs(2),
            ..Limits::default()
        };
        let echo = Capability::<()>::sync("echo", |_, (v,): (serde_json::Value,)| {
            Ok::<_, CapabilityError>(v)
        });
        let sandbox = Sandbox::builder()
            .limits(limits)
            .capability(echo)
            .build()
            .expect("the sandbox builds");
        Fixture { runtime, sandbox }
    })
}

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    f.runtime.block_on(async {
        let outcome = f.sandbox.eval(data).await;
        let report = moonbox::Report::from(&outcome).to_json();
        assert!(report.is_object() && report["version"] == 1, "{report}");
        let max_output = f.sandbox.limits().max_output_bytes as usize;
        match outcome {
            Ok(out) => {
                assert!(out.output.len() <= max_output);
                serde_json::to_string(&out).expect("outputs serialize");
            }
            Err(e) => {
                assert!(e.output.len() <= max_output);
                assert_ne!(
                    e.kind,
                    ErrorKind::SessionPoisoned,
                    "a fresh eval is never poisoned"
                );
                let line = e.to_string();
                assert!(
                    !line.chars().any(char::is_control),
                    "Display is one clean line: {line:?}"
                );
            }
        }
        let out = f
            .sandbox
            .eval("return 1 + 1")
            .await
            .expect("the sandbox keeps serving");
        assert_eq!(out.values, [serde_json::json!(2)]);
    });
});
