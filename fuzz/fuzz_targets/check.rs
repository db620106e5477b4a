//! `check` on arbitrary bytes, in a live session: it reads the chunk and
//! never runs it (a capability the chunk calls is never called), it ends
//! with findings or a typed error (a syntax error or a limit on what it may
//! read), every finding points inside the chunk, and the session lives on
//! with its globals.
#![no_main]

mod shared;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use moonbox::{Capability, CapabilityError, ErrorKind, Limits, Sandbox};

static CALLS: AtomicU64 = AtomicU64::new(0);

fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        let limits = Limits {
            max_instructions: 200_000,
            max_memory_bytes: 4 << 20,
            max_string_bytes: 1 << 20,
            fuel: Some(200_000_000),
            timeout: Duration::from_secs(5),
            ..Limits::default()
        };
        let touch = Capability::<()>::sync("host.touch", |_, (): ()| {
            CALLS.fetch_add(1, Ordering::SeqCst);
            Ok::<_, CapabilityError>(true)
        });
        Sandbox::builder()
            .limits(limits)
            .capability(touch)
            .build()
            .expect("the sandbox builds")
    })
}

/// The lines of `chunk` as Lua counts them: `\n`, `\r`, `\r\n` and `\n\r`
/// each end one.
fn lines(chunk: &[u8]) -> usize {
    let mut count = 1;
    let mut i = 0;
    while i < chunk.len() {
        let b = chunk[i];
        if b == b'\n' || b == b'\r' {
            count += 1;
            if chunk
                .get(i + 1)
                .is_some_and(|&next| (next == b'\n' || next == b'\r') && next != b)
            {
                i += 1;
            }
        }
        i += 1;
    }
    count
}

fuzz_target!(|data: &[u8]| {
    shared::block_on(async {
        let mut session = sandbox().session(()).await.expect("a session");
        session.eval("kept = 41").await.expect("the session runs");
        let before = CALLS.load(Ordering::SeqCst);
        let lines = lines(data);
        match session.check(data, "main.lua").await {
            Ok(findings) => {
                for finding in &findings {
                    assert!(
                        (finding.line as usize) <= lines,
                        "line {} of a {lines}-line chunk: {finding:?}",
                        finding.line
                    );
                    assert!(!finding.message.is_empty());
                }
            }
            Err(e) => assert!(
                matches!(
                    e.kind,
                    ErrorKind::Syntax | ErrorKind::MemoryLimit | ErrorKind::StringSize
                ),
                "{e:#}"
            ),
        }
        assert_eq!(CALLS.load(Ordering::SeqCst), before, "check ran the chunk");
        let out = session
            .eval("return kept + 1")
            .await
            .expect("the session lives on after check");
        assert_eq!(out.values, [serde_json::json!(42)]);
    });
});
