//! Instances start from the guest's snapshot (a Lua state built at build
//! time): every fresh instance gets it pristine, whatever the one before it
//! did, on either allocator; what the snapshot fixes (the string-hash seed)
//! is the same everywhere, but `math.random` is seeded anew per instance
//! unless deterministic mode asks for a fixed seed; and a session that
//! allows names back builds its own state with the same behaviour.

use moonbox::{Determinism, Engine, Limits, Sandbox};
use serde_json::{Value, json};

use crate::support::values;

fn engines() -> Vec<(&'static str, Engine)> {
    engines_with(false)
}

/// Both allocators, with fuel metered or not.
fn engines_with(fuel: bool) -> Vec<(&'static str, Engine)> {
    let shared = if fuel {
        Engine::shared_metered()
    } else {
        Engine::shared()
    };
    vec![
        ("default allocator", shared.unwrap()),
        (
            "pooling allocator",
            Engine::builder()
                .pooling_allocator(true)
                .fuel(fuel)
                .build()
                .unwrap(),
        ),
    ]
}

#[tokio::test]
async fn a_fresh_instance_never_sees_what_the_one_before_it_changed() {
    // Each eval changes state the snapshot holds (library tables, the
    // registry's loaded modules, the string table, a metatable) and leaves
    // a secret in a long string on the heap; the next fresh instance, in
    // the same pooled slot or a new mapping, starts from the snapshot.
    let meddle = r#"
        local seen = {
            string.secret, math.pi, package.loaded.planted, getmetatable('').__index.upper ~= nil,
            rawget(_G, 'left_behind'), io.write == nil, collectgarbage('count') < 512,
        }
        string.secret = 'hunter2'
        math.pi = 3
        package.loaded.planted = true
        getmetatable('').__index = {}
        left_behind = string.rep('secret ', 10000)
        io.write = nil
        return table.unpack(seen, 1, 7)
    "#;
    for (name, engine) in engines() {
        let sandbox = Sandbox::builder().engine(&engine).build().unwrap();
        for round in 0..5 {
            let seen = values(&sandbox, meddle).await;
            assert_eq!(
                seen,
                [
                    Value::Null,
                    json!(std::f64::consts::PI),
                    Value::Null,
                    json!(true),
                    Value::Null,
                    json!(false),
                    json!(true)
                ],
                "{name}, round {round}: the instance saw an earlier one's changes"
            );
        }
    }
}

#[tokio::test]
async fn every_fresh_instance_draws_its_own_random_sequence() {
    let draw = "local t = {} for i = 1, 4 do t[i] = math.random(0, 1 << 40) end return t";
    for (name, engine) in engines() {
        let sandbox = Sandbox::builder().engine(&engine).build().unwrap();
        let mut sequences = Vec::new();
        for _ in 0..8 {
            sequences.push(values(&sandbox, draw).await);
        }
        for (i, a) in sequences.iter().enumerate() {
            for b in &sequences[i + 1..] {
                assert_ne!(a, b, "{name}: two fresh instances drew the same sequence");
            }
        }
        // Sessions too; and `math.randomseed()` with no argument still works
        // (it reseeds from the clock and an address, as stock Lua does).
        let mut one = sandbox.session(()).await.unwrap();
        let mut two = sandbox.session(()).await.unwrap();
        let a = one.eval(draw).await.unwrap().values;
        let b = two.eval(draw).await.unwrap().values;
        assert_ne!(a, b, "{name}: two sessions drew the same sequence");
        let reseeded = one
            .eval("math.randomseed() return math.random(1, 10)")
            .await
            .unwrap();
        assert!(
            reseeded.values[0]
                .as_i64()
                .is_some_and(|n| (1..=10).contains(&n))
        );
    }
}

#[tokio::test]
async fn deterministic_mode_repeats_the_same_sequence_in_every_instance() {
    let draw =
        "local t = {} for i = 1, 4 do t[i] = math.random(0, 1 << 40) end return t, math.random()";
    let mut firsts = Vec::new();
    for (name, engine) in engines_with(true) {
        let sandbox = Sandbox::builder()
            .engine(&engine)
            .deterministic(Determinism { clock: 0, seed: 42 })
            .build()
            .unwrap();
        let first = values(&sandbox, draw).await;
        for _ in 0..4 {
            assert_eq!(values(&sandbox, draw).await, first, "{name}");
        }
        let mut session = sandbox.session(()).await.unwrap();
        assert_eq!(session.eval(draw).await.unwrap().values, first, "{name}");
        firsts.push(first);
    }
    assert_eq!(
        firsts[0], firsts[1],
        "both allocators draw the same sequence"
    );
    // `math.randomseed(42)` in the script gives the same sequence: the
    // session's seed is exactly Lua's own seeding with that integer.
    let plain = Sandbox::builder().build().unwrap();
    assert_eq!(
        values(&plain, &format!("math.randomseed(42) {draw}")).await,
        firsts[0]
    );
}

#[tokio::test]
async fn a_session_that_allows_names_back_builds_its_own_state_alike() {
    // The snapshot holds the sandbox with nothing allowed; a session that
    // allows names builds its state from scratch. Both must behave the
    // same on what they share.
    // Every global, and every field of every library table, with its type.
    let code = r#"
        local names = {}
        for k, v in pairs(_G) do
            names[#names + 1] = k .. ':' .. type(v)
            if type(v) == 'table' and k ~= '_G' then
                for field, value in pairs(v) do
                    names[#names + 1] = k .. '.' .. tostring(field) .. ':' .. type(value)
                end
            end
        end
        table.sort(names)
        return table.concat(names, ' '), package.path, type(require('json').encode),
            pcall(string.dump, print)
    "#;
    let snapshot = Sandbox::builder().build().unwrap();
    let own = Sandbox::builder().allow("os.execute").build().unwrap();
    let a = values(&snapshot, code).await;
    let b = values(&own, code).await;
    // The allowed name is the one difference.
    let allowed = |v: &Value| {
        v.as_str()
            .unwrap()
            .split(' ')
            .filter(|n| !n.starts_with("os.execute:"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(allowed(&a[0]), allowed(&b[0]));
    assert!(a[0].as_str().unwrap().contains("string.format:function"));
    assert_eq!(a[1..], b[1..]);
    assert_eq!(
        a[1],
        json!("./?.lua;./?/init.lua"),
        "require searches the session's files"
    );
    assert_eq!(a[3], json!(false), "string.dump stays sandboxed");
    // What was allowed is back only where it was allowed.
    assert_eq!(
        values(&own, "return type(os.execute)").await,
        [json!("function")]
    );
    let refused = snapshot.eval("return os.execute('id')").await.unwrap_err();
    assert_eq!(refused.kind, moonbox::ErrorKind::Sandboxed);
}

#[tokio::test]
async fn the_smallest_heap_still_starts_from_the_snapshot() {
    // The snapshot's state is charged to the session's heap: the smallest
    // `max_memory_bytes` the host accepts (1 MiB) still leaves room to work.
    let sandbox = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 1 << 20,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let out = sandbox
        .eval("local t = {} for i = 1, 1000 do t[i] = i end return #t, collectgarbage('count') < 1024")
        .await
        .unwrap();
    assert_eq!(out.values, [json!(1000), json!(true)]);
    let over = sandbox
        .eval("local t = {} for i = 1, 1e6 do t[i] = i end")
        .await
        .unwrap_err();
    assert_eq!(over.kind, moonbox::ErrorKind::MemoryLimit);
}
