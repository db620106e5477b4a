//! The `json` library scripts have (docs/wit.md, "`json`"): `json.encode`
//! follows the boundary's Lua -> JSON rules exactly (the cases of
//! values.rs, run both ways), `json.decode` the boundary's JSON -> Lua
//! rules, with accept/reject vectors for what JSON test suites cover, and
//! both hold the memory, string and instruction limits.

use moonbox::{ErrorKind, Limits, Sandbox, Script};
use serde_json::{Value, json};

use crate::support::{assert_usable, fails, ok, sandbox, values, with_limits};

/// `json.encode(expr)` under `pcall`: the text, or the error message.
async fn encode(sb: &Sandbox, expr: &str) -> Result<String, String> {
    let code = format!("local ok, r = pcall(json.encode, {expr}) return ok, r");
    let v = values(sb, &code).await;
    let text = v[1].as_str().expect("a string result").to_owned();
    if v[0] == json!(true) {
        Ok(text)
    } else {
        Err(text)
    }
}

/// `json.decode(text)` under `pcall`, `text` passed as an input: the
/// decoded value as it crosses the boundary, or the error message.
async fn decode(sb: &Sandbox, text: &str) -> Result<Value, String> {
    let script =
        Script::new("local ok, r = pcall(json.decode, text) return ok, r").input("text", text);
    let out = sb
        .run(script)
        .await
        .unwrap_or_else(|e| panic!("{text:?}: {e:#}"));
    if out.values[0] == json!(true) {
        Ok(out.values[1].clone())
    } else {
        Err(out.values[1].as_str().expect("a message").to_owned())
    }
}

/// The value expressions of values.rs, each with what the boundary does.
const BOUNDARY_CASES: &[&str] = &[
    "1",
    "1.0",
    "-0.0",
    "2^63",
    "math.mininteger",
    "1e-7",
    "0/0",
    "{x = {1, -math.huge}}",
    "{1, 'a', {true}}",
    "{name = 'x', ['with space'] = 1}",
    "{}",
    "{b = 1, a = 2, c = {z = 1, y = 2}, ['10'] = 1, ['9'] = 2, ['\\u{e9}'] = 0, B = 3}",
    "{1, 2, x = 3}",
    "{a = {[1] = 1, [3] = 3}}",
    "{[true] = 1}",
    "{[1.5] = 1}",
    "{[0] = 'zero'}",
    "{cb = print}",
    "{coroutine.create(print)}",
    "{['a b'] = {f = function() end}}",
    "(function() local T = {} T.__index = T return T end)()",
    "(function() local t = {1} return {t, t} end)()",
    "(function() local t = {} local cur = t for i = 1, 100 do cur.n = {} cur = cur.n end return t end)()",
    "(function() local t = {} local cur = t for i = 1, 60 do cur.n = {} cur = cur.n end return t end)()",
    "'\\xff\\xfe'",
    "{['\\xff'] = 1}",
    r#""tab\tquote\"nul\0é""#,
    "'moon'",
    "true",
    "nil",
];

#[tokio::test]
async fn encode_follows_the_boundary_rules_case_for_case() {
    let sb = sandbox();
    for expr in BOUNDARY_CASES {
        let boundary = match sb.eval(format!("return {expr}")).await {
            Ok(out) => Ok(out.values[0].clone()),
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::InvalidValue, "{expr}: {e:#}");
                Err(e.message)
            }
        };
        match (encode(&sb, expr).await, boundary) {
            (Ok(text), Ok(value)) => {
                let parsed: Value = serde_json::from_str(&text).expect("json.encode makes JSON");
                assert_eq!(parsed, value, "{expr}");
                // Integers and floats apart, -0.0 kept.
                assert_eq!(format!("{parsed:?}"), format!("{value:?}"), "{expr}");
            }
            (Err(mine), Err(theirs)) => {
                let expected = format!("json.encode: {}", theirs.replace("result[1]", "value"));
                assert_eq!(mine, expected, "{expr}");
            }
            (mine, theirs) => panic!("{expr}: json.encode gave {mine:?}, the boundary {theirs:?}"),
        }
    }
}

#[tokio::test]
async fn encode_texts_keep_integers_floats_and_sorted_keys() {
    let sb = sandbox();
    let v = values(
        &sb,
        "return json.encode(1), json.encode(1.0), json.encode(-0.0), json.encode(2^53), \
         json.encode({b = 1, a = {2.5, 'x'}}), json.encode({}), json.encode('é\\n\\0'), json.encode(nil)",
    )
    .await;
    assert_eq!(
        v,
        [
            json!("1"),
            json!("1.0"),
            json!("-0.0"),
            json!("9007199254740992.0"),
            json!(r#"{"a":[2.5,"x"],"b":1}"#),
            json!("[]"),
            json!("\"é\\n\\u0000\""),
            json!("null")
        ]
    );
}

#[tokio::test]
async fn values_round_trip_through_encode_and_decode() {
    let sb = sandbox();
    let code = r#"
        local cases = {
            {1, -2, 3.5, 'x', true, false},
            {name = 'Ada', tags = {'a', 'b'}, nested = {deep = {deeper = {0.1}}}},
            {math.maxinteger, math.mininteger, 2^63, -0.0, 1e308, 5e-324},
            {s = 'tab\tquote"back\\nul\0é☾🌙', ['key with space'] = {}},
        }
        for i, v in ipairs(cases) do
            local text = json.encode(v)
            local again = json.encode(json.decode(text))
            assert(again == text, i .. ': ' .. text .. ' became ' .. again)
        end
        local t = json.decode(json.encode({math.maxinteger, 2^63, -0.0, 1}))
        return math.type(t[1]), math.type(t[2]), 1 / t[3] < 0, math.type(t[4])
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!("integer"),
            json!("float"),
            json!(true),
            json!("integer")
        ]
    );
}

#[tokio::test]
async fn decode_follows_the_boundary_json_to_lua_rules() {
    let sb = sandbox();
    let code = r#"
        local t = json.decode('{"a": [1, 2.0, null, 4], "b": null, "c": {"d": "e"}, "n": -0, "big": 9223372036854775808, "max": 9223372036854775807}')
        return math.type(t.a[1]), math.type(t.a[2]), t.a[3] == nil, t.a[4], #t.a >= 2,
            t.b == nil, rawget(t, 'b') == nil, t.c.d, math.type(t.n), 1 / t.n < 0,
            math.type(t.big), t.big, math.type(t.max), t.max == math.maxinteger,
            json.decode('null') == nil, select('#', json.decode('null')),
            json.decode('"nul\\u0000byte"') == 'nul\0byte', json.decode('5'), json.decode('"x"')
    "#;
    assert_eq!(
        values(&sb, code).await,
        [
            json!("integer"),
            json!("float"),
            json!(true),
            json!(4),
            json!(true),
            json!(true),
            json!(true),
            json!("e"),
            json!("float"),
            json!(true),
            json!("float"),
            json!(9.223372036854776e18),
            json!("integer"),
            json!(true),
            json!(true),
            json!(1),
            json!(true),
            json!(5),
            json!("x")
        ]
    );
}

#[tokio::test]
async fn an_empty_object_comes_back_as_an_empty_array() {
    // The boundary's rule for the empty table: Lua cannot tell {} from [].
    let sb = sandbox();
    let v = values(
        &sb,
        r#"return json.encode(json.decode('{}')), json.encode(json.decode('{"a": null}')), json.encode(json.decode('[1, null]'))"#,
    )
    .await;
    assert_eq!(v, [json!("[]"), json!("[]"), json!("[1]")]);
}

#[tokio::test]
async fn decode_accepts_every_json_form() {
    let sb = sandbox();
    let accept: &[(&str, Value)] = &[
        ("0", json!(0)),
        ("-0", json!(-0.0)),
        ("-1", json!(-1)),
        ("1.5", json!(1.5)),
        ("1E+2", json!(100.0)),
        ("1e2", json!(100.0)),
        ("1E-2", json!(0.01)),
        ("-1.25e-3", json!(-0.00125)),
        ("0.1", json!(0.1)),
        ("1e-400", json!(0.0)),
        ("9223372036854775807", json!(i64::MAX)),
        ("-9223372036854775808", json!(i64::MIN)),
        ("9223372036854775808", json!(9.223372036854776e18)),
        ("-9223372036854775809", json!(-9.223372036854776e18)),
        ("18446744073709551616", json!(1.8446744073709552e19)),
        (
            "123456789012345678901234567890",
            json!(1.2345678901234568e29),
        ),
        ("1.7976931348623157e308", json!(1.7976931348623157e308)),
        ("true", json!(true)),
        ("false", json!(false)),
        ("null", json!(null)),
        (r#""""#, json!("")),
        (r#""\"\\\/\b\f\n\r\t""#, json!("\"\\/\u{8}\u{c}\n\r\t")),
        (r#""\u0041\u00e9\u263E""#, json!("Aé☾")),
        (r#""\ud83c\udf19""#, json!("🌙")),
        (r#""\uD83C\uDF19""#, json!("🌙")),
        (r#""\u0000""#, json!("\u{0}")),
        ("\"é☾🌙\"", json!("é☾🌙")),
        ("\"\u{7f}\"", json!("\u{7f}")),
        (" \t\r\n[ 1 , [ ] , { } ]\n ", json!([1, [], []])),
        (
            r#"{"a": {"b": [true, false]}}"#,
            json!({"a": {"b": [true, false]}}),
        ),
        (r#"{"": 1, " ": 2}"#, json!({"": 1, " ": 2})),
        // Duplicate keys: the last one wins, as in serde_json and JSON.parse.
        (r#"{"a": 1, "a": 2}"#, json!({"a": 2})),
        (r#"{"a": 1, "a": null}"#, json!([])),
        (r#"{"a": null, "a": 1}"#, json!({"a": 1})),
    ];
    for (text, expected) in accept {
        let got = decode(&sb, text)
            .await
            .unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(&got, expected, "{text:?}");
        assert_eq!(
            format!("{got:?}"),
            format!("{expected:?}"),
            "{text:?}: integers and floats apart"
        );
    }
}

#[tokio::test]
async fn decode_rejects_what_json_does_not_allow_saying_where() {
    let sb = sandbox();
    let reject: &[(&str, &str)] = &[
        (
            "",
            "invalid JSON (EOF while parsing a value at line 1 column 0)",
        ),
        (
            "   ",
            "invalid JSON (EOF while parsing a value at line 1 column 3)",
        ),
        ("01", "invalid JSON (invalid number at line 1 column 2)"),
        ("-01", "invalid JSON (invalid number at line 1 column 3)"),
        (".5", "invalid JSON (expected value at line 1 column 1)"),
        ("+1", "invalid JSON (expected value at line 1 column 1)"),
        (
            "1.",
            "invalid JSON (EOF while parsing a value at line 1 column 2)",
        ),
        ("1.e3", "invalid JSON (invalid number at line 1 column 3)"),
        (
            "1e",
            "invalid JSON (EOF while parsing a value at line 1 column 2)",
        ),
        (
            "-",
            "invalid JSON (EOF while parsing a value at line 1 column 1)",
        ),
        (
            "0x10",
            "invalid JSON (trailing characters at line 1 column 2)",
        ),
        (
            "1e400",
            "invalid JSON (number out of range at line 1 column 5)",
        ),
        (
            "-1e400",
            "invalid JSON (number out of range at line 1 column 6)",
        ),
        ("NaN", "invalid JSON (expected value at line 1 column 1)"),
        (
            "Infinity",
            "invalid JSON (expected value at line 1 column 1)",
        ),
        (
            "tru",
            "invalid JSON (EOF while parsing a value at line 1 column 3)",
        ),
        ("True", "invalid JSON (expected value at line 1 column 1)"),
        ("[1,]", "invalid JSON (trailing comma at line 1 column 4)"),
        (
            r#"{"a":1,}"#,
            "invalid JSON (trailing comma at line 1 column 8)",
        ),
        (
            "[1 2]",
            "invalid JSON (expected `,` or `]` at line 1 column 4)",
        ),
        (
            "[1, 2",
            "invalid JSON (EOF while parsing a list at line 1 column 5)",
        ),
        (
            "{'a': 1}",
            "invalid JSON (key must be a string at line 1 column 2)",
        ),
        (
            "{a: 1}",
            "invalid JSON (key must be a string at line 1 column 2)",
        ),
        (
            r#"{"a" 1}"#,
            "invalid JSON (expected `:` at line 1 column 6)",
        ),
        (
            r#"{1: 2}"#,
            "invalid JSON (key must be a string at line 1 column 2)",
        ),
        (
            r#""abc"#,
            "invalid JSON (EOF while parsing a string at line 1 column 4)",
        ),
        (
            r#""\x""#,
            "invalid JSON (invalid escape at line 1 column 3)",
        ),
        (
            r#""\u12""#,
            "invalid JSON (EOF while parsing a string at line 1 column 6)",
        ),
        (
            r#""\uZZZZ""#,
            "invalid JSON (invalid escape at line 1 column 7)",
        ),
        (
            "\"a\u{1}b\"",
            "invalid JSON (control character (\\u0000-\\u001F) found while parsing a string at line 1 column 3)",
        ),
        (
            "\"a\nb\"",
            "invalid JSON (control character (\\u0000-\\u001F) found while parsing a string at line 2 column 0)",
        ),
        (
            "[1] x",
            "invalid JSON (trailing characters at line 1 column 5)",
        ),
        (
            "[1][2]",
            "invalid JSON (trailing characters at line 1 column 4)",
        ),
        (
            "1 2",
            "invalid JSON (trailing characters at line 1 column 3)",
        ),
        (
            "{}\n\n}",
            "invalid JSON (trailing characters at line 3 column 1)",
        ),
        (
            "\u{feff}[1]",
            "invalid JSON (the text starts with a byte-order mark, U+FEFF, at line 1 column 1; remove it)",
        ),
        // A comment is not JSON.
        (
            "[1] // x",
            "invalid JSON (trailing characters at line 1 column 5)",
        ),
    ];
    for (text, message) in reject {
        assert_eq!(
            decode(&sb, text).await,
            Err(format!("json.decode: {message}")),
            "{text:?}"
        );
    }
}

#[tokio::test]
async fn lone_surrogates_and_invalid_utf8_are_refused() {
    let sb = sandbox();
    let lone = "json.decode: invalid JSON (lone UTF-16 surrogate in a \\u escape at line 1 column";
    for text in [
        r#""\ud800""#,
        r#""\udc00""#,
        r#""\ud800\u0041""#,
        r#""\udbff\ud800""#,
        r#"["\ud83c"]"#,
    ] {
        let e = decode(&sb, text).await.expect_err(text);
        assert!(e.starts_with(lone), "{text}: {e}");
        assert!(
            e.ends_with(
                "a high surrogate \\uD800-\\uDBFF must be followed by a low one \\uDC00-\\uDFFF)"
            ),
            "{e}"
        );
    }
    // Bytes that are not UTF-8 (Lua strings are bytes; JSON text is not).
    let v = values(
        &sb,
        r#"return select(2, pcall(json.decode, '"\xff"')), select(2, pcall(json.decode, '"\xc3"')), select(2, pcall(json.decode, '\xff'))"#,
    )
    .await;
    assert_eq!(
        v,
        [
            json!("json.decode: invalid JSON (invalid unicode code point at line 1 column 2)"),
            json!("json.decode: invalid JSON (invalid unicode code point at line 1 column 2)"),
            json!("json.decode: invalid JSON (expected value at line 1 column 1)")
        ]
    );
}

#[tokio::test]
async fn nesting_is_capped_by_max_value_depth_both_ways() {
    let sb = sandbox();
    let ok64 = format!("{}{}", "[".repeat(64), "]".repeat(64));
    assert!(decode(&sb, &ok64).await.is_ok());
    let deep65 = format!("{}{}", "[".repeat(65), "]".repeat(65));
    assert_eq!(
        decode(&sb, &deep65).await,
        Err("json.decode: value nests deeper than 64 levels (max-value-depth)".to_owned())
    );
    let objects = format!("{}1{}", r#"{"a":"#.repeat(65), "}".repeat(65));
    assert_eq!(
        decode(&sb, &objects).await,
        Err("json.decode: value nests deeper than 64 levels (max-value-depth)".to_owned())
    );
    // Past the parser's own limit (128), the same limit is named, with where.
    let deeper = "[".repeat(10_000);
    assert_eq!(
        decode(&sb, &deeper).await,
        Err(
            "json.decode: value nests deeper than 64 levels (max-value-depth) at line 1 column 128"
                .to_owned()
        )
    );
    // A lower max-value-depth applies to both directions.
    let shallow = with_limits(Limits {
        max_value_depth: 3,
        ..Limits::default()
    });
    assert_eq!(
        decode(&shallow, "[[[[1]]]]").await,
        Err("json.decode: value nests deeper than 3 levels (max-value-depth)".to_owned())
    );
    assert_eq!(
        encode(&shallow, "{{{{1}}}}").await,
        Err("json.encode: value[1][1][1] nests deeper than 3 levels (max-value-depth)".to_owned())
    );
    assert!(decode(&shallow, "[[[1]]]").await.is_ok());
}

#[tokio::test]
async fn uncaught_errors_are_runtime_errors_at_the_callers_line() {
    let sb = sandbox();
    let e = fails(
        &sb,
        "local x = 1\nlocal t = json.decode('[1,')",
        ErrorKind::Runtime,
    )
    .await;
    assert_eq!(
        e.message,
        "main.lua:2: json.decode: invalid JSON (EOF while parsing a value at line 1 column 3)"
    );
    assert_eq!(e.line, Some(2));
    let e = fails(
        &sb,
        "return json.encode({items = {1, 2, print}})",
        ErrorKind::Runtime,
    )
    .await;
    assert_eq!(
        e.message,
        "main.lua:1: json.encode: value.items[3] is a function"
    );
    let e = fails(&sb, "json.decode({})", ErrorKind::Runtime).await;
    assert_eq!(
        e.message,
        "main.lua:1: bad argument #1 to 'decode' (string expected, got table)"
    );
    let e = fails(&sb, "json.encode()", ErrorKind::Runtime).await;
    assert_eq!(
        e.message,
        "main.lua:1: bad argument #1 to 'encode' (value expected)"
    );
    // Caught, the message is an ordinary string value.
    let v = values(
        &sb,
        "local ok, e = pcall(function() return json.decode('nope') end) return ok, e",
    )
    .await;
    assert_eq!(
        v,
        [
            json!(false),
            json!("main.lua:1: json.decode: invalid JSON (expected ident at line 1 column 2)")
        ]
    );
}

#[tokio::test]
async fn require_json_finds_a_module_of_that_name_first_and_moonbox_json_last() {
    // Without a module of that name, require finds moonbox's own, which is
    // also the global every script has.
    let sb = sandbox();
    assert_eq!(
        values(
            &sb,
            "return require('json') == json, package.loaded.json == json, type(json.encode)"
        )
        .await,
        [json!(true), json!(true), json!("function")]
    );
    // A host module named json is what require returns; the global stays
    // moonbox's until the script assigns it.
    let own = Sandbox::builder()
        .module("json", "return { encode = function() return 'mine' end }")
        .build()
        .expect("a module may take the name json");
    assert_eq!(
        values(
            &own,
            "local j = require('json') return j.encode({}), json.encode({}), require('json') == j"
        )
        .await,
        [json!("mine"), json!("[]"), json!(true)]
    );
    // A standard library's name is still refused.
    let e = Sandbox::builder()
        .module("string", "return {}")
        .build()
        .expect_err("a module may not take the name string");
    assert!(
        e.to_string()
            .contains("module 'string' has the name of a standard library"),
        "{e}"
    );
}

#[tokio::test]
async fn encode_trips_the_string_limit_and_pcall_cannot_catch_it() {
    let sb = with_limits(Limits {
        max_string_bytes: 64 << 10,
        ..Limits::default()
    });
    let code = "print('before')\npcall(function() local s = json.encode({('x'):rep(60000), ('y'):rep(10000)}) end)\nprint('after')";
    let e = fails(&sb, code, ErrorKind::StringSize).await;
    assert_eq!(
        e.message,
        "main.lua:2: json.encode: value[2] makes the JSON text longer than 65536 bytes, the limit on strings (max-string-bytes)"
    );
    assert_eq!(e.output, "before\n");
    // Just under the limit is fine.
    let v = values(&sb, "return #json.encode({('x'):rep(60000)})").await;
    assert_eq!(v, [json!(60004)]);
    assert_usable(&sb).await;
}

#[tokio::test]
async fn shared_subtables_cannot_expand_without_bound() {
    let sb = with_limits(Limits {
        max_string_bytes: 1 << 20,
        ..Limits::default()
    });
    let code = "local t = {'leaf'} for i = 1, 40 do t = {t, t} end return json.encode(t)";
    let e = fails(&sb, code, ErrorKind::StringSize).await;
    assert!(
        e.message.ends_with(
            "makes the JSON text longer than 1048576 bytes, the limit on strings (max-string-bytes)"
        ),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn encoded_text_counts_against_the_heap() {
    let sb = with_limits(Limits {
        max_memory_bytes: 2 << 20,
        ..Limits::default()
    });
    let code = "local t = {} for i = 1, 100 do t[i] = ('x'):rep(1000) end \
                local keep = {} for i = 1, 1e6 do keep[i] = json.encode({i, t}) end";
    let e = fails(&sb, code, ErrorKind::MemoryLimit).await;
    assert!(e.message.contains("max-memory-bytes"), "{}", e.message);
    assert_usable(&sb).await;
}

#[tokio::test]
async fn decoded_values_count_against_the_heap() {
    let sb = with_limits(Limits {
        max_memory_bytes: 4 << 20,
        ..Limits::default()
    });
    // The same document, kept and not kept: the heap holds its Lua values.
    let doc = format!("[{}0]", "{\"k\": [1, 2, 3]},".repeat(5_000));
    let peak = |keep: bool| {
        let code = if keep {
            "KEPT = json.decode(text) return #KEPT"
        } else {
            "return #text"
        };
        let script = Script::new(code).input("text", doc.as_str());
        let sb = &sb;
        async move {
            let out = sb.run(script).await.expect("runs");
            out.stats.peak_memory_bytes.expect("a heap figure")
        }
    };
    let without = peak(false).await;
    let with = peak(true).await;
    assert!(
        with > without + 5_000 * 64,
        "decoding 5,000 tables should raise the heap by well over 320 KB: {without} -> {with}"
    );
    // Kept copies fill the heap: the memory limit trips, and pcall cannot
    // catch it.
    let script = Script::new(
        "local keep = {} for i = 1, 1000 do pcall(function() keep[i] = json.decode(text) end) end",
    )
    .input("text", doc.as_str());
    let e = sb.run(script).await.expect_err("the heap fills");
    assert_eq!(e.kind, ErrorKind::MemoryLimit, "{e:#}");
    assert!(e.message.contains("max-memory-bytes"), "{}", e.message);
    assert_usable(&sb).await;
}

#[tokio::test]
async fn a_document_too_large_for_the_heap_is_refused_before_it_is_built() {
    let sb = with_limits(Limits {
        max_memory_bytes: 2 << 20,
        ..Limits::default()
    });
    let code = "local text = '[' .. ('[],'):rep(200000) .. '[]]'\nlocal ok = pcall(function() return json.decode(text) end)";
    let e = fails(&sb, code, ErrorKind::MemoryLimit).await;
    assert!(
        e.message.starts_with(
            "main.lua:2: not enough memory (json.decode: the document needs more than the "
        ),
        "{}",
        e.message
    );
    assert!(
        e.message.ends_with(
            "bytes left in the Lua heap, which max-memory-bytes limits to 2097152 bytes)"
        ),
        "{}",
        e.message
    );
    assert_usable(&sb).await;
}

#[tokio::test]
async fn the_work_counts_against_max_instructions() {
    let sb = sandbox();
    let small = ok(&sb, "json.decode('[1]')")
        .await
        .stats
        .instructions
        .unwrap();
    let script =
        Script::new("json.decode(text)").input("text", format!("[{}1]", "1,".repeat(500_000)));
    let large = sb
        .run(script)
        .await
        .expect("runs")
        .stats
        .instructions
        .unwrap();
    assert!(
        large >= small + 1_000_000 / 2,
        "a megabyte of text should cost at least 500,000 instructions: {small} -> {large}"
    );
    // A loop of calls on a large value stops at the limit.
    let sb = with_limits(Limits {
        max_instructions: 1_000_000,
        ..Limits::default()
    });
    let code = "local t = {} for i = 1, 10000 do t[i] = i end while true do json.decode(json.encode(t)) end";
    fails(&sb, code, ErrorKind::InstructionLimit).await;
}

#[tokio::test]
async fn failed_conversions_are_charged_so_the_instruction_limit_stops_them() {
    // A large table with a function at its end converts almost entirely
    // before it fails: a loop of such calls under pcall must run into the
    // instruction limit, not the outer wall's fuel.
    let sb = sandbox();
    let setup = "local t = {} for i = 1, 100000 do t[i] = i end t[100001] = print ";
    for call in ["pcall(json.encode, t)", "pcall(log, 'info', 'm', {a = t})"] {
        let code = format!("{setup} for i = 1, 1000 do {call} end");
        let e = fails(&sb, &code, ErrorKind::InstructionLimit).await;
        assert!(
            e.message.contains("instruction limit exceeded"),
            "{call}: {}",
            e.message
        );
    }
}

/// A key that repeats keeps its last value, null included (which leaves the
/// key absent). Capability replies go through the same parser.
#[tokio::test]
async fn a_repeated_key_keeps_its_last_value_null_included() {
    let sb = sandbox();
    let v = values(
        &sb,
        r#"local d = json.decode('{"a": 1, "a": null, "b": 1, "b": 2, "c": null, "c": 3}')
           return d.a == nil, d.b, d.c"#,
    )
    .await;
    assert_eq!(v, [json!(true), json!(2), json!(3)]);
}
