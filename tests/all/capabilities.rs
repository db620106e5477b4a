//! Capabilities: registration, arity and type errors, host errors, panics,
//! slow and blocking handlers, and secrets that must never reach a script.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use moonbox::{Capability, CapabilityError, ErrorKind, Limits, Records, SandboxBuilder};
use serde_json::json;

use crate::support::{assert_usable, fails, values};

fn records() -> Records {
    Records::from_json(
        r#"{"123": {"name": "Ada", "visits": [{"at": "2024-01-01"}, {"at": "2024-02-01"}]}}"#,
    )
    .unwrap()
}

#[tokio::test]
async fn records_get_returns_a_table_or_nil() {
    let sb = moonbox::Sandbox::builder()
        .capability(records().capability())
        .build()
        .unwrap();
    let code = "local r = records.get('123') print('visits:', #r.visits) return { name = r.name, last_visit = r.visits[#r.visits].at }, records.get('999')";
    let out = sb.eval(code).await.unwrap();
    assert_eq!(out.output, "visits:\t2\n");
    assert_eq!(
        out.values,
        [
            json!({"name": "Ada", "last_visit": "2024-02-01"}),
            json!(null)
        ]
    );
    assert_eq!(out.stats.capability_calls, 2);
}

#[tokio::test]
async fn arity_and_type_errors_are_actionable_and_catchable() {
    let sb = moonbox::Sandbox::builder()
        .capability(records().capability())
        .build()
        .unwrap();
    let e = fails(&sb, "return records.get('1', 2)", ErrorKind::Capability).await;
    assert_eq!(
        e.message,
        "main.lua:1: records.get: expected 1 argument, got 2"
    );
    let e = fails(&sb, "return records.get()", ErrorKind::Capability).await;
    assert_eq!(
        e.message,
        "main.lua:1: records.get: expected 1 argument, got 0"
    );
    let e = fails(&sb, "return records.get(123)", ErrorKind::Capability).await;
    assert_eq!(
        e.message,
        "main.lua:1: records.get: argument #1 (id) must be a string (got integer `123`)"
    );
    let e = fails(
        &sb,
        "return records.get({cb = print})",
        ErrorKind::Capability,
    )
    .await;
    assert_eq!(
        e.message,
        "main.lua:1: records.get: argument #1.cb is a function"
    );
    let caught = values(&sb, "return pcall(records.get, 5)").await;
    assert_eq!(
        caught,
        [
            json!(false),
            json!("records.get: argument #1 (id) must be a string (got integer `5`)")
        ]
    );
    // An error caught by the script and followed by another is that other kind.
    fails(
        &sb,
        "pcall(records.get, 5) error('later')",
        ErrorKind::Runtime,
    )
    .await;
}

#[tokio::test]
async fn optional_trailing_arguments_and_host_errors() {
    let cap = Capability::<()>::sync(
        "greet.hello",
        |_, (name, punct): (String, Option<String>)| {
            if name.is_empty() {
                return Err(CapabilityError::new("name must not be empty"));
            }
            Ok(format!("hello {name}{}", punct.unwrap_or_default()))
        },
    );
    assert_eq!(cap.arity(), (1, 2));
    let sb = moonbox::Sandbox::builder().capability(cap).build().unwrap();
    assert_eq!(
        values(&sb, "return greet.hello('a'), greet.hello('b', '!')").await,
        [json!("hello a"), json!("hello b!")]
    );
    let e = fails(&sb, "\ngreet.hello('')", ErrorKind::Capability).await;
    assert_eq!(e.message, "main.lua:2: greet.hello: name must not be empty");
    assert_eq!(e.line, Some(2));
    let e = fails(&sb, "greet.hello()", ErrorKind::Capability).await;
    assert_eq!(
        e.message,
        "main.lua:1: greet.hello: expected 1 to 2 arguments, got 0"
    );
}

#[tokio::test]
async fn a_panicking_capability_is_a_clean_error() {
    let cap = Capability::<()>::sync("boom.now", |_, (): ()| -> Result<(), CapabilityError> {
        panic!("secret-in-panic")
    });
    let acap = Capability::<()>::new_async("boom.later", |_, (): ()| async move {
        if true {
            panic!("secret-in-async-panic");
        }
        Ok::<(), CapabilityError>(())
    });
    let sb = moonbox::Sandbox::builder()
        .capability(cap)
        .capability(acap)
        .build()
        .unwrap();
    for code in ["boom.now()", "boom.later()"] {
        let e = fails(&sb, code, ErrorKind::Capability).await;
        assert!(e.message.contains("panicked"), "{}", e.message);
        assert!(!e.message.contains("secret"), "{}", e.message);
    }
    assert_eq!(
        values(&sb, "return (pcall(boom.now))").await,
        [json!(false)]
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn a_slow_async_capability_meets_the_timeout() {
    let slow = Capability::<()>::new_async("net.slow", |_, (): ()| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok::<_, CapabilityError>("late")
    });
    let limits = Limits {
        timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let sb = moonbox::Sandbox::builder()
        .limits(limits)
        .capability(slow)
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    fails(&sb, "return net.slow()", ErrorKind::Timeout).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_usable(&sb).await;
}

#[tokio::test]
async fn a_blocking_capability_meets_the_timeout() {
    let stuck = Capability::<()>::blocking("fs.stuck", |_, (): ()| {
        std::thread::sleep(Duration::from_secs(3));
        Ok::<_, CapabilityError>("late")
    });
    let limits = Limits {
        timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let sb = moonbox::Sandbox::builder()
        .limits(limits)
        .capability(stuck)
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    fails(&sb, "return fs.stuck()", ErrorKind::Timeout).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn async_capabilities_see_their_session_context() {
    struct Ctx {
        user: String,
        calls: AtomicUsize,
    }
    let whoami = Capability::<Ctx>::new_async("auth.whoami", |ctx: Arc<Ctx>, (): ()| async move {
        ctx.calls.fetch_add(1, Ordering::SeqCst);
        tokio::task::yield_now().await;
        Ok::<_, CapabilityError>(ctx.user.clone())
    });
    let sb = SandboxBuilder::<Ctx>::new()
        .capability(whoami)
        .build()
        .unwrap();
    let mut a = sb
        .session(Ctx {
            user: "alice".into(),
            calls: AtomicUsize::new(0),
        })
        .await
        .unwrap();
    let mut b = sb
        .session(Ctx {
            user: "bob".into(),
            calls: AtomicUsize::new(0),
        })
        .await
        .unwrap();
    assert_eq!(
        a.eval("return auth.whoami()").await.unwrap().values,
        [json!("alice")]
    );
    assert_eq!(
        b.eval("return auth.whoami(), auth.whoami()")
            .await
            .unwrap()
            .values,
        [json!("bob"), json!("bob")]
    );
}

#[tokio::test]
async fn secrets_in_the_context_never_reach_the_script() {
    const SECRET: &str = "sk-live-7f3a9c1e5b";
    struct Ctx {
        api_key: String,
    }
    let fetch = Capability::<Ctx>::sync("api.fetch", |ctx: &Ctx, (path,): (String,)| {
        if ctx.api_key.is_empty() {
            return Err(CapabilityError::new("not configured"));
        }
        if path.contains("..") {
            return Err(CapabilityError::new("bad path"));
        }
        Ok(json!({ "path": path, "authorized": true }))
    });
    let sb = SandboxBuilder::<Ctx>::new()
        .capability(fetch)
        .allow("debug")
        .allow("os.getenv")
        .build()
        .unwrap();
    let mut session = sb
        .session(Ctx {
            api_key: SECRET.into(),
        })
        .await
        .unwrap();
    // Walk everything reachable from the script: globals, the registry,
    // upvalues of every function, metatables, and the environment.
    let hunt = r#"
        local seen, found, budget = {}, {}, 200000
        local function visit(v, depth)
            budget = budget - 1
            if budget < 0 or depth > 30 then return end
            local t = type(v)
            if t == "string" then
                if v:find("sk-live", 1, true) then found[#found + 1] = v end
                return
            end
            if (t ~= "table" and t ~= "function" and t ~= "userdata" and t ~= "thread") or seen[v] then return end
            seen[v] = true
            if t == "table" then
                for k, x in next, v do visit(k, depth + 1) visit(x, depth + 1) end
            elseif t == "function" then
                for i = 1, 255 do
                    local name, up = debug.getupvalue(v, i)
                    if not name then break end
                    visit(up, depth + 1)
                end
            end
            visit(debug.getmetatable(v), depth + 1)
        end
        visit(_G, 0)
        visit(debug.getregistry(), 0)
        for _, name in ipairs({"API_KEY", "SECRET", "HOME"}) do visit(os.getenv(name), 0) end
        local ok, r = pcall(api.fetch, "../secret")
        visit(r, 0)
        visit(api.fetch("/x"), 0)
        return #found
    "#;
    let out = session.eval(hunt).await.unwrap();
    assert_eq!(out.values, [json!(0)]);
    let report = moonbox::Report::from(&out).to_json().to_string();
    assert!(!report.contains(SECRET));
}

#[tokio::test]
async fn huge_capability_results_are_refused() {
    let big = Capability::<()>::sync("data.big", |_, (): ()| {
        Ok::<_, CapabilityError>("x".repeat(3 << 20))
    });
    let limits = Limits {
        max_memory_bytes: 2 << 20,
        ..Limits::default()
    };
    let sb = moonbox::Sandbox::builder()
        .limits(limits)
        .capability(big)
        .build()
        .unwrap();
    let e = fails(&sb, "return #data.big()", ErrorKind::Capability).await;
    assert!(
        e.message
            .contains("more than 2097152 bytes of JSON, the sandbox's memory limit"),
        "{}",
        e.message
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn capability_names_are_validated() {
    for (name, needle) in [
        ("bad name", "not a dotted path"),
        ("end.x", "not a dotted path"),
        ("print", "would replace an existing value"),
        ("string.rep", "would replace an existing value"),
    ] {
        let cap = Capability::<()>::sync(name, |_, (): ()| Ok::<_, CapabilityError>(1));
        let err = moonbox::Sandbox::builder()
            .capability(cap)
            .build()
            .unwrap_err();
        assert!(err.to_string().contains(needle), "{name}: {err}");
    }
    let a = Capability::<()>::sync("x.y", |_, (): ()| Ok::<_, CapabilityError>(1));
    let err = moonbox::Sandbox::builder()
        .capability(a.clone())
        .capability(a)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("registered twice"), "{err}");
}

/// A `__gc` finalizer that calls a capability can run while another
/// capability's reply is being turned into Lua values (a collection step
/// during that conversion). The inner call must not overwrite or free the
/// outer reply: every entry of the big record reads back intact.
#[tokio::test]
async fn a_capability_called_by_a_finalizer_leaves_the_outer_reply_intact() {
    let big: Vec<_> = (0..3000)
        .map(|i| json!({ "k": format!("a{i}"), "v": [i] }))
        .collect();
    let records =
        Records::from_json(&json!({ "a": big, "b": { "k": "b", "v": [0, 1, 2] } }).to_string())
            .unwrap();
    let sb = moonbox::Sandbox::builder()
        .capability(records.capability())
        .limits(Limits {
            max_instructions: 100_000_000,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let code = r#"
        local calls = 0
        local mt = { __gc = function() calls = calls + 1; local r = records.get("b") end }
        collectgarbage("incremental", 0, 1000)
        local bad = 0
        for round = 1, 10 do
            for i = 1, 50 do setmetatable({}, mt) end
            local big = records.get("a")
            for i = 1, 3000 do
                local e = big[i]
                if type(e) ~= "table" or e.k ~= "a" .. (i - 1)
                    or type(e.v) ~= "table" or e.v[1] ~= i - 1 then
                    bad = bad + 1
                end
            end
        end
        return calls > 0, bad
    "#;
    assert_eq!(values(&sb, code).await, [json!(true), json!(0)]);
}

/// A table reply whose string has escapes costs the Lua heap the string
/// once, as any other string, and a string past `max_string_bytes` trips
/// that limit, not the heap's.
#[tokio::test]
async fn an_escaped_string_in_a_reply_is_charged_once() {
    let blob = Capability::sync("blob.get", |_, (n,): (i64,)| {
        let n = usize::try_from(n).map_err(|_| CapabilityError::new("bad size"))?;
        Ok::<_, CapabilityError>(json!({ "s": format!("{}\n", "a".repeat(n)) }))
    });
    let sb = moonbox::Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 4 << 20,
            max_string_bytes: 2 << 20,
            ..Limits::default()
        })
        .capability(blob)
        .build()
        .unwrap();
    // 1.5 MiB held, then a 1.2 MB string: within 4 MiB if the string is
    // charged once.
    let code = "local hold = ('h'):rep(1500000) local r = blob.get(1200000) return #r.s, #hold";
    assert_eq!(
        values(&sb, code).await,
        [json!(1_200_001), json!(1_500_000)]
    );
    let e = fails(&sb, "return blob.get(2100000)", ErrorKind::StringSize).await;
    assert!(e.message.contains("max-string-bytes"), "{}", e.message);
    assert_usable(&sb).await;
}

/// A capability whose arity is set at run time (what the Python and Node
/// packages build) takes the declared range, gets `null` for the arguments
/// left out, and is refused past the range; a range the crate cannot take
/// is refused when the sandbox is built, by name.
#[tokio::test]
async fn an_arity_set_at_run_time_is_checked_at_the_boundary_and_at_build() {
    // Replies how many arguments arrived, and how many of them as null.
    let count = Capability::<()>::sync("args.seen", |_ctx, args: Vec<serde_json::Value>| {
        Ok::<_, CapabilityError>((args.len(), args.iter().filter(|a| a.is_null()).count()))
    })
    .with_arity(1, 3);
    assert_eq!(count.arity(), (1, 3));
    let sandbox = SandboxBuilder::new().capability(count).build().unwrap();
    let out = sandbox
        .eval("return args.seen(1), args.seen(1, 'b', true)")
        .await
        .unwrap();
    assert_eq!(out.values, [json!([3, 2]), json!([3, 0])]);
    let err = sandbox
        .eval("return args.seen(1, 2, 3, 4)")
        .await
        .unwrap_err();
    assert_eq!(err.kind, moonbox::ErrorKind::Capability);
    assert_eq!(
        sandbox.eval("return args.seen()").await.unwrap_err().kind,
        moonbox::ErrorKind::Capability
    );

    for (min, max) in [(2, 1), (0, moonbox::Limits::MAX_CAPABILITY_ARGS + 1)] {
        let cap = Capability::<()>::sync("bad.range", |_ctx, args: Vec<serde_json::Value>| {
            Ok::<_, CapabilityError>(args.len())
        })
        .with_arity(min, max);
        let Err(moonbox::Error::Config(why)) = SandboxBuilder::new().capability(cap).build() else {
            panic!("the range {min}..={max} was accepted");
        };
        let moonbox::ConfigError::Arity {
            capability,
            min: m,
            max: n,
        } = &why
        else {
            panic!("expected an arity error, got {why}");
        };
        assert_eq!((capability.as_str(), *m, *n), ("bad.range", min, max));
        assert!(
            why.to_string().contains("capability 'bad.range' takes"),
            "{why}"
        );
    }
}

/// Discovery: a few capabilities are still listed one a line, with the
/// catalog beside them; past the listing's budget only their namespaces
/// are, and Lua finds and describes them, with clear errors.
#[tokio::test]
async fn discovery_lists_few_capabilities_and_finds_many_from_lua() {
    let widget = |i: usize| {
        Capability::sync(format!("shop.widget{i}"), move |_, (id,): (i64,)| {
            Ok::<_, CapabilityError>(json!({ "widget": i, "id": id }))
        })
        .with_description(format!("Look up widget {i} by its id."))
    };
    let few = moonbox::Sandbox::builder()
        .discovery(true)
        .capability(widget(1))
        .build()
        .unwrap();
    let description = moonbox::tool::description(&few);
    assert!(
        description.contains("- shop.widget1 (1 args): Look up widget 1 by its id."),
        "{description}"
    );
    assert!(
        description.contains("- catalog.search(words: string)"),
        "{description}"
    );
    let mut builder = moonbox::Sandbox::builder().discovery(true);
    for i in 0..150 {
        builder = builder.capability(widget(i));
    }
    let many = builder.build().unwrap();
    let description = moonbox::tool::description(&many);
    assert!(
        description.contains("150 host functions, too many to list here, in: shop (150)"),
        "{description}"
    );
    assert!(!description.contains("shop.widget7"), "{description}");
    assert_eq!(
        values(
            &many,
            "local found = catalog.search('widget 7') \
             local d = catalog.describe(found[1].name) \
             return #found, found[1].name, d.description, shop.widget7(3).id, #catalog.search('')"
        )
        .await,
        [
            json!(20),
            json!("shop.widget7"),
            json!("Look up widget 7 by its id."),
            json!(3),
            json!(150)
        ]
    );
    let e = fails(
        &many,
        "catalog.describe('shop.nope')",
        ErrorKind::Capability,
    )
    .await;
    assert!(
        e.message
            .ends_with("no host function is named 'shop.nope'; catalog.search(words) finds them"),
        "{e}"
    );
    let e = fails(&many, "catalog.search()", ErrorKind::Capability).await;
    assert!(e.message.contains("catalog.search"), "{e}");
}
