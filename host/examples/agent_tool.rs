//! The `run_lua` agent-tool flow, end to end and offline: a scripted model
//! turn calls the tool, the sandbox runs the code against a capability, and
//! the tool result goes back to the "model".
//!
//! Run: `cargo run -p moonbox --example agent_tool`

use moonbox::tool::{self, RunLua, SchemaFormat};
use moonbox::{Capability, CapabilityError, ErrorKind, Records, SandboxBuilder};
use serde_json::{Value, json};

/// Per-conversation state the host keeps. Capabilities see it; Lua never can.
struct Conversation {
    user: String,
    api_token: String,
}

/// The tool calls a scripted model makes, in order.
fn model_turns() -> Vec<Value> {
    vec![
        json!({ "code": r#"
            local r = records.get(id)
            print("visits:", #r.visits)
            return { name = r.name, last_visit = r.visits[#r.visits].at }
        "#, "inputs": { "id": "123" } }),
        json!({ "code": "return nope.x" }),
        json!({ "code": "while true do end" }),
        json!({ "code": "os.execute('ls')" }),
        json!({ "code": "return whoami()" }),
    ]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. One sandbox per application: the capabilities and the limits.
    let records = Records::from_json(include_str!("../../examples/records.json"))?;
    let whoami = Capability::<Conversation>::sync("whoami", |conv: &Conversation, (): ()| {
        // The token is used here, on the host, and never handed to Lua.
        if conv.api_token.is_empty() {
            return Err(CapabilityError::new("not signed in"));
        }
        Ok(conv.user.clone())
    })
    .with_description("whoami() -> string: the signed-in user's name.");
    let sandbox = SandboxBuilder::<Conversation>::new()
        .capability(records.capability())
        .capability(whoami)
        .build()?;

    // 2. The tool definition the model is given.
    let definition = tool::definition(&sandbox, SchemaFormat::Anthropic);
    println!("tool: {}\n", definition["name"]);

    // 3. One session per conversation, with its private context.
    let conversation = Conversation {
        user: "ada".into(),
        api_token: "tok-3f9c".into(),
    };
    let mut session = sandbox.session(conversation).await?;
    session.set_chunk_name("tool.lua");

    let mut results = Vec::new();
    for call in model_turns() {
        let input: RunLua = serde_json::from_value(call)?;
        // Inputs arrive as globals; nothing is spliced into the code.
        let outcome = session.run(input.script()?).await;
        let result = tool::result(&outcome);
        println!("tool result: {result}");
        results.push((outcome, result));
    }

    // 4. What the model saw, checked.
    let (first, first_result) = &results[0];
    let out = first.as_ref().map_err(|e| e.to_string())?;
    assert_eq!(out.output, "visits:\t2\n");
    assert_eq!(
        out.values,
        [json!({ "name": "Ada Lovelace", "last_visit": "2024-06-11" })]
    );
    assert_eq!(first_result["output"], "visits:\t2\n");
    assert_eq!(first_result["version"], moonbox::Report::VERSION);

    let err = results[1].0.as_ref().err().ok_or("nope.x should fail")?;
    assert_eq!(err.kind, ErrorKind::Runtime);
    assert_eq!(
        err.message,
        "tool.lua:1: attempt to index a nil value (global 'nope')"
    );
    assert_eq!((err.chunk.as_str(), err.line), ("tool.lua", Some(1)));

    let err = results[2]
        .0
        .as_ref()
        .err()
        .ok_or("the loop should be stopped")?;
    assert_eq!(err.kind, ErrorKind::InstructionLimit);
    assert_eq!(
        results[2].1["error"]["summary"],
        "error[instruction_limit]: tool.lua:1: instruction limit exceeded (max-instructions is 10000000)"
    );

    let err = results[3]
        .0
        .as_ref()
        .err()
        .ok_or("os.execute should be refused")?;
    assert_eq!(err.kind, ErrorKind::Sandboxed);
    assert!(
        err.message
            .starts_with("tool.lua:1: os.execute is sandboxed")
    );

    assert_eq!(results[4].1["values"], json!(["ada"]));
    let everything = serde_json::to_string(&results.iter().map(|(_, r)| r).collect::<Vec<_>>())?;
    assert!(
        !everything.contains("tok-3f9c"),
        "the token never reaches a tool result"
    );

    println!("\nagent_tool: all checks passed");
    Ok(())
}
