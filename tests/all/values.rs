//! The Lua -> JSON rules for returned values (docs/wit.md), one test per rule.

use moonbox::ErrorKind;
use serde_json::json;

use crate::support::{fails, sandbox, values};

#[tokio::test]
async fn integers_stay_integers_and_floats_stay_floats() {
    let sb = sandbox();
    let v = values(&sb, "return 1, 1.0, -0.0, 2^63, math.mininteger, 1e-7").await;
    assert_eq!(
        v,
        [
            json!(1),
            json!(1.0),
            json!(-0.0),
            json!(9.223372036854776e18),
            json!(i64::MIN),
            json!(1e-7)
        ]
    );
    assert!(v[0].is_i64() && v[1].is_f64() && v[4].is_i64());
}

#[tokio::test]
async fn nan_and_infinities_are_errors() {
    let sb = sandbox();
    let e = fails(&sb, "return 0/0", ErrorKind::InvalidValue).await;
    assert_eq!(e.message, "result[1] is NaN, which JSON cannot represent");
    let e = fails(
        &sb,
        "return 1, {x = {1, -math.huge}}",
        ErrorKind::InvalidValue,
    )
    .await;
    assert_eq!(
        e.message,
        "result[2].x[2] is -inf, which JSON cannot represent"
    );
}

#[tokio::test]
async fn sequences_become_arrays_and_string_keys_objects() {
    let sb = sandbox();
    let v = values(
        &sb,
        "return {1, 'a', {true}}, {name = 'x', ['with space'] = 1}, {}",
    )
    .await;
    assert_eq!(
        v,
        [
            json!([1, "a", [true]]),
            json!({"name": "x", "with space": 1}),
            json!([])
        ]
    );
}

#[tokio::test]
async fn mixed_sparse_and_non_string_keys_name_the_path() {
    let sb = sandbox();
    let e = fails(&sb, "return {1, 2, x = 3}", ErrorKind::InvalidValue).await;
    assert_eq!(
        e.message,
        "result[1] mixes integer and string keys; use either a sequence or string keys"
    );
    let e = fails(
        &sb,
        "return {a = {[1] = 1, [3] = 3}}",
        ErrorKind::InvalidValue,
    )
    .await;
    assert_eq!(
        e.message,
        "result[1].a is a sparse array (2 elements but index 3); fill the holes or use string keys"
    );
    let e = fails(&sb, "return {[true] = 1}", ErrorKind::InvalidValue).await;
    assert_eq!(
        e.message,
        "result[1] has a key that is a boolean; only string keys or a 1..n sequence convert to JSON"
    );
    let e = fails(&sb, "return {[1.5] = 1}", ErrorKind::InvalidValue).await;
    assert_eq!(
        e.message,
        "result[1] has the float key 1.5; only string keys or a 1..n sequence convert to JSON"
    );
    let e = fails(&sb, "return {[0] = 'zero'}", ErrorKind::InvalidValue).await;
    assert_eq!(
        e.message,
        "result[1] has the integer key 0; arrays start at index 1"
    );
}

#[tokio::test]
async fn functions_userdata_and_threads_name_the_path() {
    let sb = sandbox();
    let e = fails(&sb, "return 1, {cb = print}", ErrorKind::InvalidValue).await;
    assert_eq!(e.message, "result[2].cb is a function");
    let e = fails(
        &sb,
        "return {coroutine.create(print)}",
        ErrorKind::InvalidValue,
    )
    .await;
    assert_eq!(e.message, "result[1][1] is a thread");
    let e = fails(
        &sb,
        "return {['a b'] = {f = function() end}}",
        ErrorKind::InvalidValue,
    )
    .await;
    assert_eq!(e.message, "result[1][\"a b\"].f is a function");
}

#[tokio::test]
async fn cycles_are_errors_not_hangs() {
    let sb = sandbox();
    let e = fails(
        &sb,
        "local T = {} T.__index = T return T",
        ErrorKind::InvalidValue,
    )
    .await;
    assert_eq!(
        e.message,
        "result[1].__index refers back to result[1] (a cycle)"
    );
    // The same table twice, without a cycle, is fine.
    let v = values(&sb, "local t = {1} return {t, t}").await;
    assert_eq!(v, [json!([[1], [1]])]);
}

#[tokio::test]
async fn nesting_is_capped() {
    let sb = sandbox();
    let code = "local t = {} local cur = t for i = 1, 100 do cur.n = {} cur = cur.n end return t";
    let e = fails(&sb, code, ErrorKind::InvalidValue).await;
    assert!(
        e.message
            .ends_with("nests deeper than 64 levels (max-value-depth)"),
        "{}",
        e.message
    );
    let ok = "local t = {} local cur = t for i = 1, 60 do cur.n = {} cur = cur.n end return t";
    assert_eq!(values(&sb, ok).await.len(), 1);
}

#[tokio::test]
async fn non_utf8_strings_are_errors() {
    let sb = sandbox();
    let e = fails(&sb, "return 'ok', '\\xff\\xfe'", ErrorKind::InvalidValue).await;
    assert_eq!(e.message, "result[2] is a string that is not valid UTF-8");
    let e = fails(&sb, "return {['\\xff'] = 1}", ErrorKind::InvalidValue).await;
    assert_eq!(e.message, "result[1] has a key that is not valid UTF-8");
    // Escapes that are valid UTF-8 survive exactly.
    assert_eq!(
        values(&sb, r#"return "tab\tquote\"nul\0é""#).await,
        [json!("tab\tquote\"nul\u{0}é")]
    );
}

#[tokio::test]
async fn output_before_an_invalid_value_is_kept() {
    let sb = sandbox();
    let e = fails(&sb, "print('before') return print", ErrorKind::InvalidValue).await;
    assert_eq!(e.output, "before\n");
}

#[tokio::test]
async fn shared_subtables_cannot_expand_without_bound() {
    let sb = crate::support::with_limits(moonbox::Limits {
        max_string_bytes: 1 << 20,
        ..moonbox::Limits::default()
    });
    let code = "local t = {'leaf'} for i = 1, 40 do t = {t, t} end return t";
    let e = fails(&sb, code, ErrorKind::InvalidValue).await;
    assert!(
        e.message
            .ends_with("makes the JSON text longer than 6291458 bytes; return less data"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn floats_round_trip_exactly_through_capabilities() {
    // Found by the json_boundary fuzz target: a float that a fast parser
    // read one unit in the last place off.
    let echo = moonbox::Capability::<()>::sync("echo", |_, (v,): (serde_json::Value,)| {
        Ok::<_, moonbox::CapabilityError>(v)
    });
    let sb = moonbox::Sandbox::builder()
        .capability(echo)
        .build()
        .unwrap();
    let input: serde_json::Value = serde_json::from_str(
        "[922,33720368547752036854775808,372036854775808,-0.0,0.1,1e-310,1.7976931348623157e308]",
    )
    .unwrap();
    let code = format!("return echo({})", lua_literal_of(&input));
    assert_eq!(values(&sb, &code).await, [input]);
}

/// A Lua table constructor for a JSON array of numbers.
fn lua_literal_of(v: &serde_json::Value) -> String {
    let items: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|n| match n.as_i64() {
            Some(i) => i.to_string(),
            None => format!("{:?}", n.as_f64().unwrap()),
        })
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// A legal string full of control characters crosses the boundary at a cost
/// linear in its size, within the default fuel and linear memory.
#[tokio::test]
async fn control_characters_cross_cheaply() {
    let sb = moonbox::Sandbox::builder()
        .engine(&moonbox::Engine::shared_metered().unwrap())
        .build()
        .unwrap();
    let out = crate::support::ok(&sb, "return ('\\1\\31'):rep(4 << 20)").await;
    let text = out.values[0].as_str().expect("a string");
    assert_eq!(text.len(), 8 << 20);
    assert!(text.bytes().all(|b| b < 0x20));
    assert!(
        out.stats.fuel_used.expect("fuel is metered") < moonbox::Limits::DEFAULT_FUEL / 4,
        "fuel used: {:?}",
        out.stats.fuel_used
    );
}

/// Returned values are parsed on the host within the Lua heap's limit: a
/// small table referenced many times is little text but a large tree, and
/// the eval ends with `invalid_value` before the tree passes the limit; the
/// same shape, smaller, returns whole.
#[tokio::test]
async fn returned_values_are_parsed_within_the_heap_limit() {
    let sb = crate::support::with_limits(moonbox::Limits {
        max_memory_bytes: 16 << 20,
        max_instructions: 100_000_000,
        ..moonbox::Limits::default()
    });
    let code = |n: u32| {
        format!(
            "local one = {{x = 1}} local t = {{}} for i = 1, {n} do t[i] = one end print('kept') return t"
        )
    };
    let e = fails(&sb, &code(200_000), ErrorKind::InvalidValue).await;
    assert_eq!(
        e.message,
        "the returned values would take more than 16777216 bytes of host memory once parsed (max-memory-bytes); return less data"
    );
    assert_eq!(e.output, "kept\n", "the output is kept");
    let out = values(&sb, &code(1_000)).await;
    assert_eq!(out[0].as_array().map(Vec::len), Some(1_000));
    assert_eq!(out[0][999], json!({"x": 1}));
}
