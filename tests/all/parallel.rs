//! `parallel(items, fn)`: capability calls made from its coroutines are in
//! flight on the host at the same time (observed by the capability, not by
//! timing), bounded by `max_calls_in_flight`, and reach the script in item
//! order; the limits, errors and the places where Lua cannot yield behave as
//! documented in docs/wit.md.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use moonbox::{
    Capability, CapabilityError, Determinism, ErrorKind, Limits, Sandbox, SandboxBuilder, Session,
};
use serde_json::json;

/// What the probe capability saw: how many calls were in flight at once,
/// and the order the calls started in.
#[derive(Default)]
struct Seen {
    in_flight: AtomicUsize,
    most: AtomicUsize,
    started: Mutex<Vec<i64>>,
}

#[derive(Clone, Default)]
struct Probe(Arc<Seen>);

/// `slow.get(n, ms)` waits `ms` milliseconds (async) and returns `n * 10`;
/// `slow.fail(n)` fails with a message naming `n`.
fn sandbox(limits: Limits) -> Sandbox<Probe> {
    SandboxBuilder::<Probe>::new()
        .limits(limits)
        .capability(Capability::new_async(
            "slow.get",
            |probe: Arc<Probe>, (n, ms): (i64, u64)| async move {
                let seen = &probe.0;
                seen.started.lock().unwrap().push(n);
                let now = seen.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                seen.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                seen.in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, CapabilityError>(n * 10)
            },
        ))
        .capability(Capability::sync("slow.fail", |_: &Probe, (n,): (i64,)| {
            Err::<(), _>(CapabilityError::new(format!("item {n} failed")))
        }))
        .build()
        .expect("the sandbox builds")
}

async fn session(limits: Limits) -> (Session<Probe>, Probe) {
    let probe = Probe::default();
    let session = sandbox(limits)
        .session(probe.clone())
        .await
        .expect("a session starts");
    (session, probe)
}

fn most(probe: &Probe) -> usize {
    probe.0.most.load(Ordering::SeqCst)
}

#[tokio::test]
async fn calls_from_parallel_are_in_flight_together_and_return_in_item_order() {
    let (mut s, probe) = session(Limits::default()).await;
    let out = s
        .eval(
            "local items = {} for i = 1, 20 do items[i] = i end
             return parallel(items, function(n) return slow.get(n, 50) end)",
        )
        .await
        .expect("the fan-out runs");
    let expected: Vec<i64> = (1..=20).map(|n| n * 10).collect();
    assert_eq!(out.values, [json!(expected)]);
    assert_eq!(
        most(&probe),
        Limits::DEFAULT_MAX_CALLS_IN_FLIGHT as usize,
        "20 calls, at most the default bound in flight at once"
    );
    assert_eq!(out.stats.capability_calls, 20);
}

#[tokio::test]
async fn the_bound_on_calls_in_flight_holds() {
    let (mut s, probe) = session(Limits {
        max_calls_in_flight: 3,
        ..Limits::default()
    })
    .await;
    let out = s
        .eval("return parallel({1, 2, 3, 4, 5, 6, 7}, function(n) return slow.get(n, 20) end)")
        .await
        .expect("the fan-out runs");
    assert_eq!(out.values, [json!([10, 20, 30, 40, 50, 60, 70])]);
    assert_eq!(most(&probe), 3);
    assert_eq!(
        *probe.0.started.lock().unwrap(),
        [1, 2, 3, 4, 5, 6, 7],
        "calls start in item order as room frees up"
    );
}

#[tokio::test]
async fn calls_made_one_after_another_are_never_in_flight_together() {
    let (mut s, probe) = session(Limits::default()).await;
    s.eval("for n = 1, 5 do slow.get(n, 5) end")
        .await
        .expect("the loop runs");
    assert_eq!(most(&probe), 1);
}

#[tokio::test]
async fn results_do_not_depend_on_which_call_finishes_first() {
    // Item 1 waits longest and item 5 least: the host finishes them in
    // reverse, the script sees them in order, and what each coroutine
    // prints after its reply comes out in item order too.
    let code = "local r = parallel({1, 2, 3, 4, 5}, function(n)
                    local v = slow.get(n, (6 - n) * 15)
                    print('got', n)
                    return v + slow.get(n, n * 5)
                end)
                return r";
    let limits = Limits::default();
    let deterministic = SandboxBuilder::<Probe>::new()
        .limits(limits)
        .deterministic(Determinism::default())
        .capability(sandbox(limits).capabilities()[0].clone())
        .build()
        .expect("builds");
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let mut s = deterministic
            .session(Probe::default())
            .await
            .expect("starts");
        let out = s.eval(code).await.expect("runs");
        assert_eq!(out.values, [json!([20, 40, 60, 80, 100])]);
        outputs.push(out.output.to_string());
    }
    assert_eq!(outputs[0], "got\t1\ngot\t2\ngot\t3\ngot\t4\ngot\t5\n");
    assert_eq!(outputs[0], outputs[1]);
}

#[tokio::test]
async fn the_first_error_in_item_order_ends_parallel_unchanged() {
    let (mut s, _) = session(Limits::default()).await;
    let e = s
        .eval(
            "return parallel({1, 2, 3}, function(n)
                 slow.get(n, 5)
                 if n >= 2 then slow.fail(n) end
                 return n
             end)",
        )
        .await
        .expect_err("item 2 fails");
    assert_eq!(e.kind, ErrorKind::Capability);
    assert_eq!(e.message, "main.lua:3: slow.fail: item 2 failed");
    assert_eq!(e.line, Some(3));
}

#[tokio::test]
async fn errors_are_caught_per_item_with_pcall() {
    let (mut s, _) = session(Limits::default()).await;
    let out = s
        .eval(
            "local r = parallel({1, 2, 3}, function(n)
                 local ok, err = pcall(function()
                     local v = slow.get(n, 5)
                     if n == 2 then error('bad ' .. v, 0) end
                     return v
                 end)
                 return ok and err or ('caught: ' .. err)
             end)
             local e = select(2, pcall(parallel, {'x'}, function(id) return slow.get(id, 1) end))
             return r, e",
        )
        .await
        .expect("errors are caught");
    assert_eq!(out.values[0], json!([10, "caught: bad 20", 30]));
    let e = out.values[1].as_str().unwrap_or_default();
    assert!(e.starts_with("main.lua:9: slow.get: "), "{e}");
}

#[tokio::test]
async fn where_lua_cannot_yield_a_call_runs_in_place() {
    // A sort comparator and a gsub callback are called from C: the calls in
    // them cannot yield to parallel, so they run one at a time, in place.
    let (mut s, probe) = session(Limits::default()).await;
    let out = s
        .eval(
            "return parallel({1, 2}, function(n)
                 local xs = {3, 1, 2}
                 table.sort(xs, function(a, b) return slow.get(a, 1) < slow.get(b, 1) end)
                 local text = ('ab'):gsub('%w', function() return tostring(slow.get(n, 1)) end)
                 return table.concat(xs) .. text
             end)",
        )
        .await
        .expect("calls run in place");
    assert_eq!(out.values, [json!(["1231010", "1232020"])]);
    assert_eq!(most(&probe), 1);

    // An `__index` metamethod called from C (`table.unpack` reads through
    // `lua_geti`) cannot yield either; called from Lua code it can.
    let (mut s, probe) = session(Limits::default()).await;
    let out = s
        .eval(
            "local proxy = setmetatable({}, {__index = function(_, k) return slow.get(k, 5) end})
             local from_c = parallel({1, 2}, function() return table.unpack(proxy, 1, 1) end)
             return from_c",
        )
        .await
        .expect("calls run in place");
    assert_eq!(out.values, [json!([10, 10])]);
    assert_eq!(most(&probe), 1);
    let (mut s, probe) = session(Limits::default()).await;
    let out = s
        .eval(
            "local proxy = setmetatable({}, {__index = function(_, k) return slow.get(k, 5) end})
             return parallel({1, 2}, function(n) return proxy[n] end)",
        )
        .await
        .expect("the calls overlap");
    assert_eq!(out.values, [json!([10, 20])]);
    assert_eq!(most(&probe), 2);
}

#[tokio::test]
async fn nested_parallel_and_capabilities_passed_directly() {
    let (mut s, _) = session(Limits::default()).await;
    let out = s
        .eval(
            "local function get(n) return slow.get(n, 1) end
             return parallel({{1, 2}, {3}, {}}, function(ns) return parallel(ns, get) end)",
        )
        .await
        .expect("nested fan-out runs");
    assert_eq!(out.values, [json!([[10, 20], [30], []])]);
}

#[tokio::test]
async fn a_function_that_yields_by_itself_is_refused() {
    let (mut s, _) = session(Limits::default()).await;
    let e = s
        .eval("parallel({1}, function() coroutine.yield(1) end)")
        .await
        .expect_err("a bare yield is refused");
    assert_eq!(e.kind, ErrorKind::Runtime);
    assert!(
        e.message
            .contains("parallel: the function yielded for item #1; a function run by parallel may call capabilities but not coroutine.yield"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn a_script_cannot_forge_a_reply_by_resuming_a_waiting_coroutine() {
    let (mut s, _) = session(Limits::default()).await;
    let out = s
        .eval(
            "local waiting, forged
             local ok, err = pcall(parallel, {1, 2}, function(n)
                 if n == 1 then waiting = coroutine.running() return slow.get(1, 20) end
                 forged = {coroutine.resume(waiting, true, 'forged')}
             end)
             return forged, ok, err",
        )
        .await
        .expect("the forged resume fails inside the coroutine");
    // Item 2 runs while item 1 waits: resuming item 1 by hand fails and
    // kills item 1's coroutine, so parallel then fails on item 1.
    let forged = out.values[0].to_string();
    assert!(forged.contains("only parallel may resume it"), "{forged}");
    assert_eq!(out.values[1], json!(false));
    assert_eq!(out.values[2], json!("cannot resume dead coroutine"));
}

#[tokio::test]
async fn limits_hold_across_the_coroutines() {
    let (mut s, _) = session(Limits {
        max_instructions: 200_000,
        ..Limits::default()
    })
    .await;
    let e = s
        .eval("parallel({1, 2}, function(n) slow.get(n, 1) while true do end end)")
        .await
        .expect_err("the loop is stopped");
    assert_eq!(e.kind, ErrorKind::InstructionLimit);
    let e = s
        .eval("return parallel({1, 2}, function(n) return pcall(function() while true do end end) end)")
        .await
        .expect_err("pcall cannot catch the trip");
    assert_eq!(e.kind, ErrorKind::InstructionLimit);

    let (mut s, _) = session(Limits {
        max_output_bytes: 10,
        ..Limits::default()
    })
    .await;
    let e = s
        .eval("parallel({1, 2, 3}, function(n) slow.get(n, 1) io.write('abcd') end)")
        .await
        .expect_err("the output limit holds across coroutines");
    assert_eq!(e.kind, ErrorKind::OutputLimit);
    assert_eq!(e.output, "abcdabcdab");
    // The session survives.
    let out = s
        .eval("return parallel({4}, function(n) return slow.get(n, 1) end)")
        .await;
    assert_eq!(out.expect("usable").values, [json!([40])]);
}

#[tokio::test]
async fn the_timeout_covers_the_whole_fan_out_and_keeps_the_output() {
    let (mut s, probe) = session(Limits {
        timeout: Duration::from_millis(300),
        ..Limits::default()
    })
    .await;
    let e = s
        .eval("print('before') parallel({1, 2, 3}, function(n) return slow.get(n, 60000) end)")
        .await
        .expect_err("the deadline stops the wait");
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert_eq!(e.output, "before\n");
    assert_eq!(most(&probe), 3, "the three calls were in flight together");
}

#[tokio::test]
async fn bad_arguments_and_edge_cases() {
    let (mut s, _) = session(Limits::default()).await;
    let e = s
        .eval("parallel(nil, print)")
        .await
        .expect_err("items must be a table");
    assert_eq!(
        e.message,
        "main.lua:1: bad argument #1 to 'parallel' (table expected, got nil)"
    );
    let e = s
        .eval("parallel({}, 5)")
        .await
        .expect_err("fn must be a function");
    assert_eq!(
        e.message,
        "main.lua:1: bad argument #2 to 'parallel' (function expected, got number)"
    );
    let out = s
        .eval(
            "local r = parallel({}, print)
             local holes = parallel({1, 2, 3}, function(n) if n ~= 2 then return n end end)
             return next(r) == nil, holes[1], holes[2], holes[3]",
        )
        .await
        .expect("empty items and nil results");
    assert_eq!(out.values, [json!(true), json!(1), json!(null), json!(3)]);
}

#[tokio::test]
async fn a_capability_may_not_take_the_name_parallel() {
    let e = Sandbox::builder()
        .capability(Capability::sync("parallel", |_: &(), (): ()| {
            Ok::<_, CapabilityError>(1)
        }))
        .build()
        .expect_err("the name is taken");
    assert!(
        e.to_string()
            .contains("capability 'parallel' would replace an existing value of the same name"),
        "{e}"
    );
}

#[test]
fn the_bound_is_validated() {
    for (n, text) in [
        (0, "limit max_calls_in_flight must be greater than zero"),
        (
            1025,
            "limit max_calls_in_flight must be at most 1024, got 1025",
        ),
    ] {
        let built = Sandbox::builder()
            .limits(Limits {
                max_calls_in_flight: n,
                ..Limits::default()
            })
            .build();
        let Err(e) = built else {
            panic!("max_calls_in_flight {n} was accepted");
        };
        assert!(e.to_string().contains(text), "{e}");
    }
}

#[test]
fn the_tool_description_tells_a_model_about_the_orchestration_functions() {
    use moonbox::{Approval, Approver, tool};
    let sandbox = Sandbox::builder()
        .capability(Capability::sync("net.ping", |_: &(), (): ()| {
            Ok::<_, CapabilityError>(true)
        }))
        .capability(
            Capability::sync("mail.send", |_: &(), (_to,): (String,)| {
                Ok::<_, CapabilityError>(true)
            })
            .call_budget(2)
            .require_approval(),
        )
        .call_budget(10)
        .approver(Approver::from_fn(|_| Approval::Allow))
        .build()
        .expect("builds");
    let text = tool::description(&sandbox);
    for needle in [
        "parallel(items, fn)",
        "at most 16 at once",
        "local users = parallel(ids, net.ping)",
        "json.encode(value) and json.decode(text)",
        "log(level, message, fields?)",
        "- net.ping (0 args): (no description) [at most 10 calls per run]",
        "- mail.send (1 args): (no description) [at most 2 calls per run; each call needs the host's approval and may be refused]",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    // Without capabilities there is nothing to fan out.
    let bare = tool::description(&Sandbox::builder().build().expect("builds"));
    assert!(!bare.contains("parallel("), "{bare}");
    assert!(bare.contains("json.encode"), "{bare}");
}

#[tokio::test]
async fn a_batch_holds_at_most_the_memory_limit_of_replies() {
    // Each reply fits the heap limit, but a batch of them would make the
    // host hold them all at once: past the limit the whole batch fails,
    // whichever calls finish first, and the session goes on.
    let sb = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 1 << 20,
            ..Limits::default()
        })
        .capability(Capability::new_async(
            "big.text",
            |_, (n,): (usize,)| async move { Ok::<_, CapabilityError>("x".repeat(n)) },
        ))
        .build()
        .expect("builds");
    let mut s = sb.session(()).await.expect("starts");
    let code = "local r = parallel({1, 2, 3, 4, 5, 6, 7, 8}, function()
                    local ok, v = pcall(big.text, N)
                    return ok and #v or v
                end)
                return r[1], r[8]";
    let fits = s
        .eval(code.replace("N", "100000"))
        .await
        .expect("800 KB of replies fit");
    assert_eq!(fits.values, [json!(100000), json!(100000)]);
    let out = s
        .eval(code.replace("N", "300000"))
        .await
        .expect("the failure is catchable per item");
    let message = "the replies of this batch of 8 calls from parallel passed 1048576 bytes, \
                   the sandbox's memory limit; fan out over fewer items at a time";
    for value in &out.values {
        assert!(
            value.as_str().unwrap_or_default().ends_with(message),
            "{value}"
        );
    }
    let after = s.eval("return #big.text(300000)").await.expect("usable");
    assert_eq!(after.values, [json!(300000)]);
}
