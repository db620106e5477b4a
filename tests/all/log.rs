//! The script's `log(level, message, fields)`: structured events that reach
//! the host apart from the output, in order with it, charged against the
//! output limit, and kept whatever stops the eval.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use moonbox::{ErrorKind, LOG_EVENT_BYTES, Limits, LogEvent, LogLevel, Sandbox};
use serde_json::json;

use crate::support::{assert_usable, fails, ok, sandbox, with_limits};

/// The events as `(level, message, fields)` for compact assertions.
fn shapes(logs: &[LogEvent]) -> Vec<(LogLevel, String, serde_json::Value)> {
    logs.iter()
        .map(|e| {
            (
                e.level,
                e.message.clone(),
                serde_json::Value::Object(e.fields.clone()),
            )
        })
        .collect()
}

#[tokio::test]
async fn every_level_arrives_with_its_message_and_fields() {
    let sb = sandbox();
    let out = ok(
        &sb,
        "log('debug', 'd') log('info', 'i', {}) log('warn', 'w', {free = 12}) \
         log('error', 'e', {user = {name = 'ada', ids = {1, 2}}, ok = false})",
    )
    .await;
    assert_eq!(
        shapes(&out.logs),
        [
            (LogLevel::Debug, "d".to_owned(), json!({})),
            (LogLevel::Info, "i".to_owned(), json!({})),
            (LogLevel::Warn, "w".to_owned(), json!({"free": 12})),
            (
                LogLevel::Error,
                "e".to_owned(),
                json!({"ok": false, "user": {"ids": [1, 2], "name": "ada"}})
            ),
        ]
    );
    assert_eq!(out.output, "", "log writes nothing to the output");
    assert_eq!(out.stats.output_bytes, 0);
}

#[tokio::test]
async fn log_returns_nothing_and_takes_numbers_as_print_shows_them() {
    let sb = sandbox();
    let out = ok(&sb, "return select('#', log('info', 42)), log('info', 2.5)").await;
    assert_eq!(out.values, [json!(0)]);
    assert_eq!(out.logs[0].message, "42");
    assert_eq!(out.logs[1].message, "2.5");
}

#[tokio::test]
async fn fields_follow_the_boundary_rules() {
    let sb = sandbox();
    let out = ok(
        &sb,
        "log('info', 'm', {i = 1, f = 1.0, s = 'x', b = true, arr = {}, nested = {k = {1.5}}})",
    )
    .await;
    // Integers and floats stay apart, members sorted by key, and the empty
    // table inside the fields is an empty array as everywhere else.
    let fields = &out.logs[0].fields;
    assert_eq!(
        serde_json::to_string(fields).unwrap(),
        r#"{"arr":[],"b":true,"f":1.0,"i":1,"nested":{"k":[1.5]},"s":"x"}"#
    );
}

#[tokio::test]
async fn a_bad_level_is_a_catchable_error_naming_the_four() {
    let sb = sandbox();
    for level in ["'fatal'", "'INFO'", "nil", "{}"] {
        let code = format!("log({level}, 'm')");
        let e = fails(&sb, &code, ErrorKind::Runtime).await;
        assert!(
            e.message.starts_with("main.lua:1: "),
            "{code}: {}",
            e.message
        );
        if level.starts_with('\'') {
            assert!(
                e.message
                    .contains(r#"level must be "debug", "info", "warn" or "error""#),
                "{code}: {}",
                e.message
            );
        } else {
            assert!(
                e.message.contains("bad argument #1 to 'log'"),
                "{}",
                e.message
            );
        }
        assert!(e.logs.is_empty());
    }
    let out = ok(
        &sb,
        "local ok, err = pcall(log, 'loud', 'x') log('info', 'after') return ok, err",
    )
    .await;
    assert_eq!(out.values[0], json!(false));
    assert!(out.values[1].as_str().unwrap().contains("got \"loud\""));
    assert_eq!(
        shapes(&out.logs),
        [(LogLevel::Info, "after".to_owned(), json!({}))]
    );
}

#[tokio::test]
async fn a_bad_message_or_fields_argument_is_refused() {
    let sb = sandbox();
    let cases = [
        (
            "log('info')",
            "bad argument #2 to 'log' (string expected, got no value)",
        ),
        (
            "log('info', {})",
            "bad argument #2 to 'log' (string expected, got table)",
        ),
        (
            "log('info', 'm', 'x')",
            "bad argument #3 to 'log' (table or nil expected, got string)",
        ),
        (
            "log('info', 'm', {1, 2})",
            "log: fields must be a table with string keys (an object), not a sequence",
        ),
        ("log('info', 'm', {print})", "log: fields[1] is a function"),
        (
            "log('info', 'm', {f = print})",
            "log: fields.f is a function",
        ),
        (
            "log('info', 'm', {[1] = 1, a = 2})",
            "log: fields mixes integer and string keys",
        ),
        ("log('info', 'm', {x = 0/0})", "log: fields.x is NaN"),
        (
            "log('info', 'm', {s = '\\xff'})",
            "log: fields.s is a string that is not valid UTF-8",
        ),
        (
            "local t = {} t.self = t log('info', 'm', t)",
            "log: fields.self",
        ),
        (
            "log('info', 'm', {}, 4)",
            "log expects at most 3 arguments (level, message, fields), got 4",
        ),
    ];
    for (code, expected) in cases {
        let e = fails(&sb, code, ErrorKind::Runtime).await;
        assert!(e.message.contains(expected), "{code}: {}", e.message);
        assert!(e.logs.is_empty(), "{code}: nothing was sent");
    }
}

#[tokio::test]
async fn a_message_that_is_not_utf8_is_sent_with_replacement_characters() {
    let sb = sandbox();
    let out = ok(&sb, "log('info', 'caf\\xe9 ok')").await;
    assert_eq!(out.logs[0].message, "caf\u{fffd} ok");
}

#[tokio::test]
async fn events_keep_their_order_with_output() {
    let sb = sandbox();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut s = sb.session(()).await.unwrap();
    let out_seen = seen.clone();
    s.set_output_sink(Some(Arc::new(move |b: &[u8]| {
        out_seen
            .lock()
            .unwrap()
            .push(format!("out:{}", String::from_utf8_lossy(b)));
    })));
    let log_seen = seen.clone();
    s.set_log_sink(Some(Arc::new(move |e: &LogEvent| {
        log_seen.lock().unwrap().push(format!("log:{e}"));
    })));
    let out = s
        .eval("io.write('a') log('info', 'one') io.write('b') log('warn', 'two', {n = 2}) io.write('c')")
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "out:a",
            "log:[info] one",
            "out:b",
            "log:[warn] two  n=2",
            "out:c"
        ]
    );
    assert_eq!(out.output, "abc");
    assert_eq!(out.logs.len(), 2);
    // Removing the sinks stops forwarding; results still carry the events.
    s.set_output_sink(None);
    s.set_log_sink(None);
    let out = s.eval("log('info', 'quiet') print('x')").await.unwrap();
    assert_eq!(out.logs.len(), 1);
    assert_eq!(seen.lock().unwrap().len(), 5);
}

#[tokio::test]
async fn logs_are_per_eval_in_a_session() {
    let sb = sandbox();
    let mut s = sb.session(()).await.unwrap();
    let first = s.eval("log('info', 'first')").await.unwrap();
    let second = s.eval("log('info', 'second')").await.unwrap();
    assert_eq!(first.logs[0].message, "first");
    assert_eq!(second.logs.len(), 1);
    assert_eq!(second.logs[0].message, "second");
}

#[tokio::test]
async fn logs_in_coroutines_arrive_in_order() {
    let sb = sandbox();
    let out = ok(
        &sb,
        "local co = coroutine.wrap(function() log('info', 'in') coroutine.yield() log('info', 'again') end) \
         co() log('info', 'out') co()",
    )
    .await;
    let messages: Vec<&str> = out.logs.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages, ["in", "out", "again"]);
}

fn output_limit(bytes: u64) -> Sandbox {
    with_limits(Limits {
        max_output_bytes: bytes,
        ..Limits::default()
    })
}

#[tokio::test]
async fn an_event_that_does_not_fit_trips_the_output_limit() {
    // "hello\n" (6) and one event of 5 + 2 + LOG_EVENT_BYTES bytes fit in
    // exactly this budget; the next byte of anything does not.
    let budget = 6 + 5 + 2 + LOG_EVENT_BYTES;
    let sb = output_limit(budget);
    let out = ok(&sb, "print('hello') log('info', 'fits!')").await;
    assert_eq!(out.logs.len(), 1);
    assert_eq!(out.stats.output_bytes, 6, "events are not output bytes");

    let e = fails(
        &sb,
        "print('hello') log('info', 'fits!') io.write('x')",
        ErrorKind::OutputLimit,
    )
    .await;
    assert_eq!(e.output, "hello\n");
    assert_eq!(e.logs.len(), 1);

    let e = fails(
        &sb,
        "print('hello') log('info', 'fits!!') print('never')",
        ErrorKind::OutputLimit,
    )
    .await;
    assert_eq!(
        e.message,
        format!(
            "main.lua:1: output limit exceeded (max-output-bytes is {budget}; this log event needs {} bytes)",
            6 + 2 + LOG_EVENT_BYTES
        )
    );
    assert_eq!(e.output, "hello\n", "after the trip nothing is written");
    assert!(e.logs.is_empty(), "the event that did not fit was not sent");
    assert_usable(&sb).await;
}

#[tokio::test]
async fn fields_count_against_the_output_limit() {
    let sb = output_limit(1000);
    let e = fails(
        &sb,
        "log('info', '', {s = ('x'):rep(1000)})",
        ErrorKind::OutputLimit,
    )
    .await;
    assert!(e.logs.is_empty());
    let out = ok(&sb, "log('info', '', {s = ('x'):rep(900)})").await;
    assert_eq!(out.logs[0].fields["s"].as_str().unwrap().len(), 900);
}

#[tokio::test]
async fn a_flood_of_empty_events_is_bounded() {
    let budget = 64 << 10;
    let sb = output_limit(budget);
    let e = fails(
        &sb,
        "while true do log('debug', '') end",
        ErrorKind::OutputLimit,
    )
    .await;
    // Each empty event costs its `{}` and the fixed charge.
    let per_event = 2 + LOG_EVENT_BYTES;
    assert_eq!(e.logs.len() as u64, budget / per_event);
    // After the trip, pcall does not let the script send more.
    let e = fails(
        &sb,
        "for i = 1, 1e9 do pcall(log, 'debug', '') end",
        ErrorKind::OutputLimit,
    )
    .await;
    assert_eq!(e.logs.len() as u64, budget / per_event);
}

#[tokio::test]
async fn logs_made_before_an_error_are_kept() {
    let sb = sandbox();
    let e = fails(
        &sb,
        "log('info', 'before') error('boom')",
        ErrorKind::Runtime,
    )
    .await;
    assert_eq!(
        shapes(&e.logs),
        [(LogLevel::Info, "before".to_owned(), json!({}))]
    );
    let e = fails(
        &sb,
        "log('warn', 'looping') while true do end",
        ErrorKind::InstructionLimit,
    )
    .await;
    assert_eq!(e.logs.len(), 1);
}

#[tokio::test]
async fn after_a_trip_caught_by_pcall_nothing_more_is_sent() {
    let sb = with_limits(Limits {
        max_memory_bytes: 4 << 20,
        ..Limits::default()
    });
    let e = fails(
        &sb,
        "log('info', 'before') \
         pcall(function() local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(100) .. i end end) \
         pcall(log, 'info', 'after')",
        ErrorKind::MemoryLimit,
    )
    .await;
    let messages: Vec<&str> = e.logs.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages, ["before"]);
    assert_usable(&sb).await;
}

#[tokio::test]
async fn logs_made_before_the_outer_wall_stops_are_kept() {
    let sb = with_limits(Limits {
        fuel: Some(Limits::MAX_FUEL),
        timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let code = "log('info', 'slow match ahead') \
                return ('a'):rep(28):match(('a?'):rep(28) .. ('a'):rep(28))";
    let e = fails(&sb, code, ErrorKind::Timeout).await;
    assert_eq!(e.logs[0].message, "slow match ahead");

    let sb = with_limits(Limits {
        fuel: Some(200_000_000),
        ..Limits::default()
    });
    let code = "log('info', 'fuel') return ('a'):rep(26):match(('a?'):rep(26) .. ('a'):rep(26))";
    let e = fails(&sb, code, ErrorKind::FuelExhausted).await;
    assert_eq!(e.logs[0].message, "fuel");
}

#[tokio::test]
async fn logs_made_before_a_cancel_are_kept() {
    let sb = sandbox();
    let mut s = sb.session(()).await.unwrap();
    let cancel = s.cancel_handle();
    let seen = Arc::new(Mutex::new(0usize));
    let counter = seen.clone();
    let trigger = cancel.clone();
    s.set_log_sink(Some(Arc::new(move |_: &LogEvent| {
        *counter.lock().unwrap() += 1;
        trigger.cancel();
    })));
    let e = s
        .eval("log('info', 'started') local x = 0 while true do x = x + 1 end")
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Cancelled);
    assert_eq!(e.logs.len(), 1);
    assert_eq!(e.logs[0].message, "started");
    assert_eq!(*seen.lock().unwrap(), 1);
}

#[tokio::test]
async fn the_report_carries_the_logs() {
    let sb = sandbox();
    let report = moonbox::Report::from(&sb.eval("log('info', 'r', {k = 'v'}) error('x')").await);
    assert_eq!(
        report.to_json()["logs"],
        json!([{"level": "info", "message": "r", "fields": {"k": "v"}}])
    );
    let report = moonbox::Report::from(&sb.eval("return 1").await);
    assert_eq!(report.to_json()["logs"], json!([]));
}

#[tokio::test]
async fn log_is_a_global_every_script_has() {
    let sb = sandbox();
    let out = ok(&sb, "return type(log), log == _G.log").await;
    assert_eq!(out.values, [json!("function"), json!(true)]);
}

/// An event's fields are parsed on the host within the Lua heap's limit
/// for the eval: fields whose tree would pass it are replaced by one member
/// that says so, and the event, its message and the events after it are
/// kept.
#[tokio::test]
async fn fields_too_large_for_the_host_are_dropped_and_say_so() {
    let sb = with_limits(Limits {
        max_memory_bytes: 4 << 20,
        max_output_bytes: 8 << 20,
        max_instructions: 100_000_000,
        ..Limits::default()
    });
    let out = ok(
        &sb,
        "local one = {x = 1} local many = {} for i = 1, 50000 do many[i] = one end \
         log('info', 'big', {many = many}) log('info', 'small', {n = 1})",
    )
    .await;
    assert_eq!(out.logs.len(), 2);
    assert_eq!(out.logs[0].message, "big");
    let why = out.logs[0].fields[moonbox::FIELDS_DROPPED]
        .as_str()
        .expect("the fields say why they were dropped");
    assert!(
        why.ends_with("bytes of fields would take more than the 4194304 bytes of host memory this eval's log fields may take once parsed (max-memory-bytes)"),
        "{why}"
    );
    assert_eq!(out.logs[0].fields.len(), 1);
    assert_eq!(shapes(&out.logs)[1].2, json!({"n": 1}));
}
