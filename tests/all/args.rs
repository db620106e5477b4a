//! A script's arguments (`arg` and `...`, as `lua.c` sets them) and its
//! standard input.

use moonbox::{ErrorKind, Limits, Script};
use serde_json::json;

use crate::support::{sandbox, with_limits};

#[tokio::test]
async fn args_become_arg_and_the_chunk_s_varargs() {
    let sb = sandbox();
    let script =
        Script::new("local a, b = ... return arg[0], arg[1], arg[2], #arg, a, b, select('#', ...)")
            .chunk_name("tool.lua")
            .args(["one", "two"]);
    let out = sb.run(script).await.unwrap();
    assert_eq!(
        out.values,
        [
            json!("tool.lua"),
            json!("one"),
            json!("two"),
            json!(2),
            json!("one"),
            json!("two"),
            json!(2)
        ]
    );
    // No arguments given: `arg` stays nil and `...` is empty; given none,
    // `arg` holds only the chunk name.
    let out = sb
        .run(Script::new("return arg == nil, select('#', ...)"))
        .await
        .unwrap();
    assert_eq!(out.values, [json!(true), json!(0)]);
    let none: [&str; 0] = [];
    let out = sb
        .run(Script::new("return arg[0], #arg").args(none))
        .await
        .unwrap();
    assert_eq!(out.values, [json!("main.lua"), json!(0)]);
}

#[tokio::test]
async fn arguments_are_bytes_as_given_and_bounded_in_number() {
    let sb = sandbox();
    let out = sb
        .run(Script::new("return ...").args(["", "with space", "ünï", "a\nb"]))
        .await
        .unwrap();
    assert_eq!(
        out.values,
        [json!(""), json!("with space"), json!("ünï"), json!("a\nb")]
    );
    let many = (0..=Limits::MAX_ARGS).map(|i| i.to_string());
    let e = sb
        .run(Script::new("return 1").args(many))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidValue);
    assert!(
        e.message.contains("4097 arguments are more than the 4096"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn arguments_past_the_heap_limit_trip_the_memory_limit() {
    let sb = with_limits(Limits {
        max_memory_bytes: 1 << 20,
        ..Limits::default()
    });
    let big = "x".repeat(200_000);
    let e = sb
        .run(Script::new("return 1").args(vec![big; 8]))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::MemoryLimit, "{}", e.message);
}

#[tokio::test]
async fn stdin_is_what_io_stdin_reads_and_is_fresh_each_eval() {
    let sb = sandbox();
    let mut session = sb.session(()).await.unwrap();
    let code = "local lines = {} for l in io.lines() do lines[#lines + 1] = l end return lines, io.read('a')";
    let out = session
        .run(Script::new(code).stdin("a\nb\n\nc"))
        .await
        .unwrap();
    assert_eq!(out.values, [json!(["a", "b", "", "c"]), json!("")]);
    let out = session
        .run(
            Script::new(
                "local a, b = io.read('n', 'n') return a, b, io.read('l'), io.stdin:read(3), io.read('a')",
            )
                .stdin("12 3.5 rest\nxyz tail"),
        )
        .await
        .unwrap();
    assert_eq!(
        out.values,
        [
            json!(12),
            json!(3.5),
            json!(" rest"),
            json!("xyz"),
            json!(" tail")
        ]
    );
    // The next eval without stdin reads nothing.
    let out = session
        .run(Script::new("return io.read('a'), io.read()"))
        .await
        .unwrap();
    assert_eq!(out.values, [json!(""), json!(null)]);
    // Standard input larger than the heap limit is refused before the eval.
    let small = with_limits(Limits {
        max_memory_bytes: 1 << 20,
        ..Limits::default()
    });
    let e = small
        .run(Script::new("return 1").stdin(vec![b'x'; 2 << 20]))
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidValue);
    assert!(
        e.message.contains("more than max-memory-bytes"),
        "{}",
        e.message
    );
}
