//! Typed capabilities and tool definitions: schemas derived from Rust types
//! check arguments at the boundary and reach the model as Lua signatures;
//! every tool format obeys its provider's schema rules.

use moonbox::tool::{self, SchemaFormat};
use moonbox::{Capability, CapabilityError, ErrorKind, Records, Sandbox, SandboxBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::support::{fails, values};

#[derive(Serialize, Deserialize, JsonSchema)]
struct Visit {
    date: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Patient {
    name: String,
    visits: Vec<Visit>,
}

#[derive(Deserialize, JsonSchema)]
struct Query {
    text: String,
    limit: Option<u32>,
}

fn typed_sandbox() -> Sandbox {
    let get = Capability::sync_typed("records.get", |_ctx, (id,): (String,)| {
        Ok::<_, CapabilityError>(Patient {
            name: format!("patient {id}"),
            visits: vec![Visit {
                date: "2024-06-11".into(),
            }],
        })
    })
    .arg_names(["id"])
    .with_description("A patient by id.");
    let search = Capability::sync_typed("docs.search", |_ctx, (q,): (Query,)| {
        Ok::<_, CapabilityError>(vec![q.text; q.limit.unwrap_or(1) as usize])
    })
    .with_description("Searches the docs.");
    let scale = Capability::sync_typed("math2.scale", |_ctx, (x, by): (f64, Option<i64>)| {
        Ok::<_, CapabilityError>(x * by.unwrap_or(2) as f64)
    })
    .arg_names(["x", "by"]);
    let plain = Capability::sync("plain.echo", |_ctx, (v,): (Value,)| {
        Ok::<_, CapabilityError>(v)
    });
    Sandbox::builder()
        .capability(get)
        .capability(search)
        .capability(scale)
        .capability(plain)
        .build()
        .expect("builds")
}

#[tokio::test]
async fn the_description_shows_typed_capabilities_as_lua_signatures() {
    let d = tool::description(&typed_sandbox());
    for line in [
        "- records.get(id: string) -> {name: string, visits: {date: string}[]}: A patient by id.",
        "- docs.search{limit?: integer?, text: string} -> string[]: Searches the docs.",
        "- math2.scale(x: number, by?: integer?) -> number: (no description)",
        "- plain.echo (0-1 args): (no description)",
    ] {
        assert!(d.contains(line), "missing {line:?} in:\n{d}");
    }
    let records = Sandbox::builder()
        .capability(
            Records::from_json(r#"{"1": {"a": 1}}"#)
                .unwrap()
                .capability(),
        )
        .build()
        .unwrap();
    assert!(
        tool::description(&records).contains("- records.get(id: string) -> table?: "),
        "{}",
        tool::description(&records)
    );
}

#[tokio::test]
async fn typed_calls_succeed_with_well_typed_arguments() {
    let sb = typed_sandbox();
    assert_eq!(
        values(
            &sb,
            "local p = records.get('7') return p.name, p.visits[1].date"
        )
        .await,
        [json!("patient 7"), json!("2024-06-11")]
    );
    assert_eq!(
        values(&sb, "return docs.search{text = 'x', limit = 2}").await,
        [json!(["x", "x"])]
    );
    assert_eq!(
        values(
            &sb,
            "return math2.scale(1.5), math2.scale(2, 3), math2.scale(2.0, 3.0)"
        )
        .await,
        [json!(3.0), json!(6.0), json!(6.0)]
    );
}

#[tokio::test]
async fn a_wrong_type_is_a_catchable_capability_error_naming_the_argument_and_field() {
    let sb = typed_sandbox();
    for (code, expected) in [
        (
            "return records.get(42)",
            "records.get: argument #1 (id) must be a string (got integer `42`)",
        ),
        (
            "return docs.search{text = 5}",
            "docs.search: argument #1: .text must be a string (got integer `5`)",
        ),
        (
            "return docs.search{limit = 1}",
            "docs.search: argument #1: .text is required but missing",
        ),
        (
            "return docs.search{text = 'a', limit = -1}",
            "docs.search: argument #1: .limit must be at least 0",
        ),
        (
            "return math2.scale('x')",
            "math2.scale: argument #1 (x) must be a number (got string \"x\")",
        ),
        (
            "return math2.scale(1, 1.5)",
            "math2.scale: argument #2 (by) must be an integer or nil (got number `1.5`)",
        ),
    ] {
        let err = fails(&sb, code, ErrorKind::Capability).await;
        assert!(
            err.message.ends_with(expected),
            "{code}: got {:?}, want it to end with {expected:?}",
            err.message
        );
    }
    // pcall catches it; the script goes on.
    assert_eq!(
        values(
            &sb,
            "local ok, e = pcall(records.get, {}) return ok, e:match('must be a string') ~= nil"
        )
        .await,
        [json!(false), json!(true)]
    );
}

#[tokio::test]
async fn raw_schemas_check_arguments_the_handler_never_sees_bad_ones() {
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let cap = Capability::<()>::sync("tickets.create", move |_ctx, (args,): (Value,)| {
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok::<_, CapabilityError>(args["title"].clone())
    })
    .schemas(
        vec![json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1},
                "priority": {"enum": ["low", "high"]}
            },
            "required": ["title"],
            "additionalProperties": false
        })],
        Some(json!({"type": "string"})),
    );
    assert_eq!(
        cap.signature(),
        r#"tickets.create{priority?: "low"|"high", title: string} -> string"#
    );
    let sb = SandboxBuilder::<()>::new().capability(cap).build().unwrap();
    for (code, expected) in [
        (
            "return tickets.create{title = ''}",
            ".title must be at least 1 characters long",
        ),
        (
            "return tickets.create{title = 'a', priority = 'urgent'}",
            ".priority must be one of [\"low\",\"high\"]",
        ),
        (
            "return tickets.create{title = 'a', owner = 'me'}",
            ".owner is not a known field (known: priority, title)",
        ),
        (
            "return tickets.create('a')",
            "must be an object (got string \"a\")",
        ),
    ] {
        let err = fails(&sb, code, ErrorKind::Capability).await;
        assert!(err.message.contains(expected), "{code}: {}", err.message);
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(
        values(&sb, "return tickets.create{title = 'ok', priority = 'low'}").await,
        [json!("ok")]
    );
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_missing_or_empty_table_argument_still_needs_its_required_fields() {
    // The shape of a code-mode tool: one optional table of named arguments.
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = calls.clone();
    let cap = Capability::<()>::sync("svc.find", move |_ctx, (_args,): (Option<Value>,)| {
        seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok::<_, CapabilityError>(true)
    })
    .schemas(
        vec![json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]})],
        None,
    );
    let sb = SandboxBuilder::<()>::new().capability(cap).build().unwrap();
    for code in ["return svc.find()", "return svc.find{}"] {
        let err = fails(&sb, code, ErrorKind::Capability).await;
        assert!(
            err.message
                .ends_with("svc.find: argument #1: .q is required but missing"),
            "{code}: {}",
            err.message
        );
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(values(&sb, "return svc.find{q = 'x'}").await, [json!(true)]);
}

/// OpenAI's strict mode: every object lists all its properties as required
/// and forbids additional ones; no object is free-form.
fn assert_openai_strict(schema: &Value, path: &str) {
    match schema {
        Value::Object(s) => {
            if s.get("type") == Some(&json!("object")) {
                let props = s["properties"]
                    .as_object()
                    .unwrap_or_else(|| panic!("{path}: object without properties"));
                let mut required: Vec<&str> = s["required"]
                    .as_array()
                    .unwrap_or_else(|| panic!("{path}: no required"))
                    .iter()
                    .map(|v| v.as_str().unwrap())
                    .collect();
                let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
                required.sort_unstable();
                names.sort_unstable();
                assert_eq!(
                    required, names,
                    "{path}: strict mode requires every property"
                );
                assert_eq!(s.get("additionalProperties"), Some(&json!(false)), "{path}");
            }
            for (k, v) in s {
                assert_openai_strict(v, &format!("{path}.{k}"));
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                assert_openai_strict(v, &format!("{path}[{i}]"));
            }
        }
        _ => {}
    }
}

fn assert_tool_name(name: &Value) {
    let name = name.as_str().expect("a string name");
    assert!(
        !name.is_empty()
            && name.len() <= 64
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "{name}"
    );
}

#[tokio::test]
async fn every_tool_format_follows_its_providers_rules() {
    let sb = typed_sandbox();

    let anthropic = tool::definition(&sb, SchemaFormat::Anthropic);
    assert_tool_name(&anthropic["name"]);
    assert_eq!(anthropic["input_schema"]["type"], "object");
    assert_eq!(anthropic["input_schema"]["required"], json!(["code"]));
    assert_eq!(
        anthropic["input_schema"]["properties"]["inputs"]["type"],
        "object"
    );
    assert!(
        anthropic["description"]
            .as_str()
            .unwrap()
            .contains("docs.search{")
    );

    let chat = tool::definition(&sb, SchemaFormat::OpenAi);
    assert_eq!(chat["type"], "function");
    assert_tool_name(&chat["function"]["name"]);
    assert_eq!(chat["function"]["strict"], true);
    assert_openai_strict(&chat["function"]["parameters"], "parameters");

    let responses = tool::definition(&sb, SchemaFormat::OpenAiResponses);
    assert_eq!(responses["type"], "function");
    assert_tool_name(&responses["name"]);
    assert_eq!(responses["strict"], true);
    assert!(
        responses.get("function").is_none(),
        "the Responses form is flat"
    );
    assert_openai_strict(&responses["parameters"], "parameters");
    assert_eq!(
        responses["parameters"]["properties"]["inputs"]["type"],
        json!(["string", "null"])
    );

    let mcp = tool::definition(&sb, SchemaFormat::Mcp);
    assert_tool_name(&mcp["name"]);
    assert_eq!(mcp["inputSchema"]["type"], "object");
    assert_eq!(mcp["outputSchema"]["type"], "object");

    // A real result fits the output schema, on success and on failure.
    let output_schema = tool::output_schema();
    for code in [
        "print('x') return {a = 1}",
        "error('boom')",
        "while true do end",
        "log('info', 'step', {n = 1}) return plain.echo(1), pcall(records.get, 7)",
    ] {
        let result = tool::result(&sb.eval(code).await);
        check_instance(&output_schema, &result, code);
    }
}

/// A small structural check of a result against the output schema: every
/// required member present, every member and stat declared, every error kind
/// in the enum.
fn check_instance(schema: &Value, result: &Value, code: &str) {
    for name in schema["required"].as_array().unwrap() {
        assert!(
            result.get(name.as_str().unwrap()).is_some(),
            "{code}: missing {name}"
        );
    }
    for (name, declared) in [
        (result.as_object(), &schema["properties"]),
        (
            result["stats"].as_object(),
            &schema["properties"]["stats"]["properties"],
        ),
    ] {
        for key in name.unwrap().keys() {
            assert!(
                declared.get(key).is_some(),
                "{code}: `{key}` is not in the output schema"
            );
        }
    }
    for section in ["logs", "calls"] {
        let Some(items) = result.get(section).and_then(Value::as_array) else {
            continue;
        };
        let item = &schema["properties"][section]["items"];
        for entry in items {
            for key in entry.as_object().unwrap().keys() {
                assert!(
                    item["properties"].get(key).is_some(),
                    "{code}: `{section}[].{key}` is not in the output schema"
                );
            }
        }
    }
    if let Some(kind) = result["error"].get("kind") {
        let kinds = &schema["properties"]["error"]["anyOf"][1]["properties"]["kind"]["enum"];
        assert!(kinds.as_array().unwrap().contains(kind), "{code}: {kind}");
    }
}

#[tokio::test]
async fn run_lua_input_takes_inputs_as_an_object_or_as_json_text() {
    let sb = typed_sandbox();
    for call in [
        json!({"code": "return n + 1", "inputs": {"n": 41}}),
        json!({"code": "return n + 1", "inputs": "{\"n\": 41}"}),
    ] {
        let call: tool::RunLua = serde_json::from_value(call).unwrap();
        let out = sb.run(call.script().unwrap()).await.unwrap();
        assert_eq!(out.values, [json!(42)]);
    }
    let none: tool::RunLua =
        serde_json::from_value(json!({"code": "return 1", "inputs": null})).unwrap();
    assert!(none.script().unwrap().input_values().is_empty());
    for bad in [json!("[1]"), json!("{"), json!(3)] {
        let call: tool::RunLua =
            serde_json::from_value(json!({"code": "return 1", "inputs": bad})).unwrap();
        assert!(call.script().is_err(), "{bad}");
    }
}
