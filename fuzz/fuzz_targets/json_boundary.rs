//! The JSON boundary, both ways: arbitrary JSON goes into Lua as a capability
//! result, and comes back out as the chunk's return value. Values with no
//! nulls and no empty objects (the two documented lossy cases) must round-trip
//! exactly; anything else must end as a value or a typed error, never a crash.
#![no_main]

mod shared;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use moonbox::{Capability, CapabilityError, ErrorKind, Sandbox, SandboxBuilder};
use serde_json::Value;

fn sandbox() -> &'static Sandbox<Value> {
    static SANDBOX: OnceLock<Sandbox<Value>> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        // The context is the value under test; `input()` hands it to Lua.
        let input = Capability::<Value>::sync("input", |v: &Value, (): ()| {
            Ok::<_, CapabilityError>(v.clone())
        });
        let echo =
            Capability::<Value>::sync("echo", |_, (v,): (Value,)| Ok::<_, CapabilityError>(v));
        SandboxBuilder::<Value>::new()
            .capability(input)
            .capability(echo)
            .build()
            .expect("builds")
    })
}

/// Whether the value avoids the documented lossy conversions.
fn lossless(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Array(items) => items.iter().all(lossless),
        Value::Object(members) => !members.is_empty() && members.values().all(lossless),
        Value::Number(n) => n.is_i64() || (n.is_f64() && !n.is_u64()),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    shared::block_on(async {
        let expect_exact = lossless(&value);
        let outcome = sandbox()
            .eval_with(value.clone(), "return echo(input())")
            .await;
        match outcome {
            Ok(out) => {
                if expect_exact {
                    assert_eq!(out.values, [value], "round trip changed the value");
                }
            }
            Err(e) => assert!(
                matches!(
                    e.kind,
                    ErrorKind::Capability
                        | ErrorKind::InvalidValue
                        | ErrorKind::MemoryLimit
                        | ErrorKind::StringSize
                ),
                "unexpected error kind for a JSON value: {e}"
            ),
        }
    });
});
