//! The MCP server driven by rmcp's own client, in process over a duplex
//! stream; and its HTTP transport's token and Origin checks over raw TCP.

use std::time::{Duration, Instant};

use moonbox::{Limits, Sandbox};
use moonbox_mcp::{Error, HttpConfig, McpServer, ServerConfig};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, JsonObject, ProgressNotificationParam,
    Request, ServerResult,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// A client that forwards the progress notifications it receives.
struct Client {
    progress: mpsc::UnboundedSender<ProgressNotificationParam>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }
}

struct Connected {
    client: RunningService<RoleClient, Client>,
    progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
}

fn sandbox(limits: Limits) -> Sandbox {
    Sandbox::builder()
        .limits(limits)
        .build()
        .expect("the sandbox builds")
}

/// A server on one end of a duplex stream and an initialized client on the
/// other.
async fn connect(sandbox: Sandbox, config: ServerConfig) -> Connected {
    let server = McpServer::new(sandbox, config).expect("the configuration is valid");
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (tx, rx) = mpsc::unbounded_channel();
    let client = Client { progress: tx }
        .serve(client_io)
        .await
        .expect("the client initializes");
    Connected {
        client,
        progress: rx,
    }
}

async fn default_connection() -> Connected {
    connect(sandbox(Limits::default()), ServerConfig::default()).await
}

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => panic!("arguments are an object"),
    }
}

async fn call(conn: &Connected, tool: &'static str, arguments: Value) -> CallToolResult {
    conn.client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args(arguments)))
        .await
        .expect("the call is answered")
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn report(result: &CallToolResult) -> &Value {
    let structured = result
        .structured_content
        .as_ref()
        .expect("run_lua returns structured content");
    // The line a model acts on leads, the same as the text content.
    assert_eq!(structured["answer"], text(result), "{structured}");
    let report = &structured["report"];
    assert_eq!(
        result.is_error == Some(true),
        report["ok"] == false,
        "isError agrees with ok: {report}"
    );
    report
}

async fn open_session(conn: &Connected) -> String {
    let result = call(conn, "new_session", json!({})).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    let id = result.structured_content.as_ref().expect("an id")["session"]
        .as_str()
        .expect("the id is a string")
        .to_owned();
    assert_eq!(text(&result), id);
    id
}

#[tokio::test]
async fn tools_are_listed_with_schemas() {
    let conn = default_connection().await;
    let info = conn
        .client
        .peer_info()
        .expect("the server answered initialize");
    assert!(info.capabilities.tools.is_some());
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("moonbox")
    );

    let tools = conn
        .client
        .list_all_tools()
        .await
        .expect("tools are listed");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["run_lua", "check_lua", "new_session", "close_session"]
    );
    let run = &tools[0];
    assert!(
        run.description
            .as_deref()
            .is_some_and(|d| d.contains("Lua 5.4") && d.contains("new_session"))
    );
    assert_eq!(run.input_schema["required"], json!(["code"]));
    assert_eq!(run.input_schema["properties"]["session"]["type"], "string");
    assert_eq!(run.input_schema["properties"]["inputs"]["type"], "object");
    assert_eq!(
        run.input_schema["properties"]["args"]["items"]["type"],
        "string"
    );
    assert_eq!(run.input_schema["properties"]["files"]["type"], "object");
    assert_eq!(run.input_schema["properties"]["stdin"]["type"], "string");
    let output = run
        .output_schema
        .as_ref()
        .expect("run_lua has an output schema");
    assert_eq!(output["type"], "object");
    assert_eq!(output["required"], json!(["answer", "report"]));
    assert_eq!(output["properties"]["answer"]["type"], "string");
    for field in [
        "version", "ok", "values", "output", "error", "stats", "files",
    ] {
        assert!(
            output["properties"]["report"]["properties"]
                .get(field)
                .is_some(),
            "{field}"
        );
    }
    let check = &tools[1];
    assert_eq!(check.input_schema["required"], json!(["code"]));
    assert_eq!(
        check.input_schema["properties"]["session"]["type"],
        "string"
    );
    let output = check
        .output_schema
        .as_ref()
        .expect("check_lua has an output schema");
    assert_eq!(output["required"], json!(["ok", "diagnostics"]));
    assert_eq!(tools[3].input_schema["required"], json!(["session"]));
}

#[tokio::test]
async fn check_lua_returns_findings_without_running_the_code() {
    let conn = default_connection().await;
    let code = "while true do end\nos.execute('ls')\nreturn helper()";
    let result = call(&conn, "check_lua", json!({ "code": code })).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let content = result.structured_content.as_ref().expect("structured");
    assert_eq!(content["ok"], true);
    let found = content["diagnostics"].as_array().expect("a list");
    assert_eq!(found.len(), 2, "{content}");
    assert_eq!(found[0]["kind"], "sandboxed");
    assert_eq!(found[0]["name"], "os.execute");
    assert_eq!(found[0]["line"], 2);
    assert_eq!(found[1]["kind"], "undefined_global");
    let lines = text(&result);
    assert!(
        lines.starts_with("main.lua:2: warning[sandboxed]: os.execute is sandboxed")
            && lines.contains("\nmain.lua:3: warning[undefined_global]: helper "),
        "{lines}"
    );

    // In a session, what the session defined counts.
    let id = open_session(&conn).await;
    let set = call(
        &conn,
        "run_lua",
        json!({"code": "function helper() end", "session": id}),
    )
    .await;
    assert_eq!(report(&set)["ok"], true);
    let in_session = call(
        &conn,
        "check_lua",
        json!({"code": "return helper()", "session": id}),
    )
    .await;
    assert_eq!(
        in_session.structured_content.as_ref().expect("structured")["diagnostics"],
        json!([])
    );
    assert!(
        text(&in_session).starts_with("no findings"),
        "{}",
        text(&in_session)
    );

    // The names of the inputs a run would set are defined.
    let with_inputs = call(
        &conn,
        "check_lua",
        json!({"code": "return n + 1, other", "inputs": {"n": 41}}),
    )
    .await;
    let found = &with_inputs.structured_content.as_ref().expect("structured")["diagnostics"];
    assert_eq!(found.as_array().map(Vec::len), Some(1), "{found}");
    assert_eq!(found[0]["name"], "other");

    // A syntax error is a tool error with the error's report.
    let bad = call(&conn, "check_lua", json!({"code": "return ("})).await;
    assert_eq!(bad.is_error, Some(true));
    let content = bad.structured_content.as_ref().expect("structured");
    assert_eq!(content["ok"], false);
    assert_eq!(content["error"]["kind"], "syntax");
    assert!(text(&bad).contains("main.lua:1:"), "{}", text(&bad));
}

#[tokio::test]
async fn check_lua_arguments_are_bounded_and_checked() {
    let config = ServerConfig::default().max_code_bytes(100);
    let conn = connect(sandbox(Limits::default()), config).await;
    let code = format!("return '{}'", "x".repeat(200));
    for (arguments, needle) in [
        (json!({ "code": code }), "more than the 100 bytes allowed"),
        (json!({}), "`code` is required"),
        (json!({"code": 1}), "`code` must be a string"),
        (json!({"code": "return 1", "extra": {}}), "not 'extra'"),
        (
            json!({"code": "return 1", "inputs": [1]}),
            "`inputs` must be an object",
        ),
        (
            json!({"code": "return 1", "session": "nope"}),
            "unknown session 'nope'",
        ),
    ] {
        let result = call(&conn, "check_lua", arguments).await;
        assert_eq!(result.is_error, Some(true));
        assert!(text(&result).contains(needle), "{}", text(&result));
    }
}

#[tokio::test]
async fn success_returns_values_output_and_one_line() {
    let conn = default_connection().await;
    let result = call(
        &conn,
        "run_lua",
        json!({"code": "print('hello', 1) io.write('more') return 1 + 1, {a = true}"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false));
    let report = report(&result);
    assert_eq!(report["ok"], true);
    assert_eq!(report["values"], json!([2, {"a": true}]));
    assert_eq!(report["output"], "hello\t1\nmore");
    assert_eq!(result.content.len(), 1);
    let line = text(&result);
    assert!(!line.contains('\n'), "{line}");
    assert!(line.starts_with(r#"[2,{"a":true}]"#), "{line}");
    assert!(line.contains(r#""hello\t1\nmore""#), "{line}");
}

#[tokio::test]
async fn a_value_is_carried_once_and_the_text_line_is_bounded() {
    let conn = default_connection().await;
    let result = call(
        &conn,
        "run_lua",
        json!({"code": "return string.rep('v', 100000)"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false));
    let value = report(&result)["values"][0].as_str().expect("a string");
    assert_eq!(value.len(), 100_000);
    // The line shows the start of it and says where the rest is.
    let line = text(&result);
    assert!(line.len() < 9 << 10, "a line of {} bytes", line.len());
    assert!(line.starts_with(r#"["vvvv"#), "{line}");
    assert!(
        line.ends_with("the whole report is in the structured content)"),
        "{line}"
    );
}

#[tokio::test]
async fn an_answer_past_max_reply_bytes_is_refused_with_its_output_and_costs() {
    let config = ServerConfig::default().max_reply_bytes(64 << 10);
    let conn = connect(sandbox(Limits::default()), config).await;
    let result = call(
        &conn,
        "run_lua",
        json!({"code": "print('kept') return string.rep('v', 100000)"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let line = text(&result);
    assert!(line.starts_with("error[reply_too_large]: "), "{line}");
    assert!(line.contains("max_reply_bytes (65536 bytes)"), "{line}");
    let kept = &result
        .structured_content
        .as_ref()
        .expect("the report minus its values")["report"];
    assert_eq!(kept["values"], json!([]));
    assert_eq!(kept["output"], "kept\n");
    assert!(
        kept["stats"]["instructions"].as_u64().unwrap() > 0,
        "{kept}"
    );

    // A script that failed says so too.
    let failed = call(
        &conn,
        "run_lua",
        json!({"code": "print(string.rep('o', 100000)) error('own')"}),
    )
    .await;
    let line = text(&failed);
    assert!(line.starts_with("error[reply_too_large]: "), "{line}");
    assert!(line.contains("error[runtime]: main.lua:1: own"), "{line}");
    let kept = &failed.structured_content.as_ref().expect("a report")["report"];
    assert_eq!(kept["output"], "", "the output does not fit either");
    assert_eq!(kept["error"]["kind"], "runtime");
}

#[tokio::test]
async fn a_lua_error_is_a_tool_error_with_its_kind() {
    let conn = default_connection().await;
    let result = call(
        &conn,
        "run_lua",
        json!({"code": "print('before')\nerror('boom')"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let failed = report(&result);
    assert_eq!(failed["error"]["kind"], "runtime");
    assert_eq!(failed["error"]["line"], 2);
    assert_eq!(failed["output"], "before\n");
    assert!(text(&result).contains("boom"));
    // The connection goes on.
    let next = call(&conn, "run_lua", json!({"code": "return 'next'"})).await;
    assert_eq!(report(&next)["values"], json!(["next"]));
}

#[tokio::test]
async fn an_instruction_limit_stops_the_script() {
    let limits = Limits {
        max_instructions: 10_000,
        ..Limits::default()
    };
    let conn = connect(sandbox(limits), ServerConfig::default()).await;
    let result = call(
        &conn,
        "run_lua",
        json!({"code": "pcall(function() while true do end end) return 'caught'"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(report(&result)["error"]["kind"], "instruction_limit");
}

#[tokio::test]
async fn inputs_become_globals_for_one_run() {
    let conn = default_connection().await;
    let result = call(
        &conn,
        "run_lua",
        json!({"code": "return n + 1, who.name, #list", "inputs": {"n": 41, "who": {"name": "Ada"}, "list": [1, 2, 3]}}),
    )
    .await;
    assert_eq!(report(&result)["values"], json!([42, "Ada", 3]));
    let next = call(&conn, "run_lua", json!({"code": "return n == nil"})).await;
    assert_eq!(report(&next)["values"], json!([true]));
    let bad = call(&conn, "run_lua", json!({"code": "return 1", "inputs": [1]})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("inputs"), "{}", text(&bad));
}

#[tokio::test]
async fn sessions_keep_globals_until_closed() {
    let conn = default_connection().await;
    let id = open_session(&conn).await;
    assert_eq!(id.len(), 32);
    let set = call(&conn, "run_lua", json!({"code": "x = 41", "session": id})).await;
    assert_eq!(report(&set)["ok"], true);
    let read = call(
        &conn,
        "run_lua",
        json!({"code": "x = x + 1 return x", "session": id}),
    )
    .await;
    assert_eq!(report(&read)["values"], json!([42]));
    let fresh = call(&conn, "run_lua", json!({"code": "return x == nil"})).await;
    assert_eq!(report(&fresh)["values"], json!([true]));

    let closed = call(&conn, "close_session", json!({"session": id})).await;
    assert_eq!(closed.is_error, Some(false), "{}", text(&closed));
    let gone = call(&conn, "run_lua", json!({"code": "return x", "session": id})).await;
    assert_eq!(gone.is_error, Some(true));
    assert!(text(&gone).contains(&id), "{}", text(&gone));
    assert!(gone.structured_content.is_none());
    let again = call(&conn, "close_session", json!({"session": id})).await;
    assert_eq!(again.is_error, Some(true));
}

#[tokio::test]
async fn the_session_cap_holds_and_idle_sessions_expire() {
    let config = ServerConfig::default()
        .max_sessions(2)
        .session_ttl(Duration::from_millis(600));
    let conn = connect(sandbox(Limits::default()), config).await;
    let first = open_session(&conn).await;
    let _second = open_session(&conn).await;
    let refused = call(&conn, "new_session", json!({})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).starts_with(
            "the session limit (2 open at once) is reached; close one with close_session"
        ),
        "{}",
        text(&refused)
    );
    call(&conn, "close_session", json!({"session": first})).await;
    let third = open_session(&conn).await;

    // Past the TTL every idle session is gone, and the cap frees up.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let expired = call(
        &conn,
        "run_lua",
        json!({"code": "return 1", "session": third}),
    )
    .await;
    assert_eq!(expired.is_error, Some(true));
    assert!(text(&expired).contains(&third), "{}", text(&expired));
    open_session(&conn).await;
    open_session(&conn).await;
}

#[tokio::test]
async fn oversized_code_is_refused() {
    let config = ServerConfig::default().max_code_bytes(100);
    let conn = connect(sandbox(Limits::default()), config).await;
    let code = format!("return '{}'", "x".repeat(200));
    let result = call(&conn, "run_lua", json!({"code": code})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("more than the 100 bytes allowed"),
        "{}",
        text(&result)
    );
    let inputs = call(
        &conn,
        "run_lua",
        json!({"code": "return 1", "inputs": {"s": "y".repeat(200)}}),
    )
    .await;
    assert!(text(&inputs).contains("`inputs`"), "{}", text(&inputs));
}

#[tokio::test]
async fn bad_arguments_are_tool_errors() {
    let conn = default_connection().await;
    for (arguments, needle) in [
        (json!({}), "`code` is required"),
        (json!({"code": 1}), "`code` must be a string"),
        (
            json!({"code": "return 1", "session": 7}),
            "`session` must be a string",
        ),
        (json!({"code": "return 1", "extra": true}), "not 'extra'"),
    ] {
        let result = call(&conn, "run_lua", arguments).await;
        assert_eq!(result.is_error, Some(true));
        assert!(text(&result).contains(needle), "{}", text(&result));
    }
}

#[tokio::test]
async fn args_files_and_stdin_reach_the_script_and_written_files_come_back() {
    let conn = default_connection().await;
    let code = "local n = 0 for line in io.lines('data/in.csv') do n = n + 1 end\n\
                local util = require('lib.util')\n\
                local f = io.open('report.txt', 'w') f:write(util.shout(arg[1]), ' ', n) f:close()\n\
                io.open('raw.bin', 'wb'):write('\\0\\255'):close()\n\
                return select('#', ...), io.read('a'), io.open('bytes.bin', 'rb'):read('a'), arg[0]";
    let result = call(
        &conn,
        "run_lua",
        json!({
            "code": code,
            "args": ["hello", "two"],
            "files": {
                "data/in.csv": "a,1\nb,2\nc,3\n",
                "lib/util.lua": "return { shout = function(s) return s:upper() end }",
                "bytes.bin": {"base64": "AAE="}
            },
            "stdin": "from stdin"
        }),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let got = report(&result);
    assert_eq!(
        got["values"],
        json!([2, "from stdin", "\u{0}\u{1}", "main.lua"])
    );
    assert_eq!(
        got["files"],
        json!([
            {"name": "raw.bin", "size": 2, "base64": "AP8="},
            {"name": "report.txt", "size": 7, "text": "HELLO 3"}
        ])
    );
    // The text line, then one embedded resource per file.
    let blocks = serde_json::to_value(&result.content).unwrap();
    assert_eq!(blocks.as_array().map(Vec::len), Some(3), "{blocks}");
    assert_eq!(blocks[0]["type"], "text");
    assert_eq!(
        blocks[1],
        json!({"type": "resource", "resource": {"uri": "file:///raw.bin", "mimeType": "application/octet-stream", "blob": "AP8="}})
    );
    assert_eq!(
        blocks[2],
        json!({"type": "resource", "resource": {"uri": "file:///report.txt", "mimeType": "text/plain", "text": "HELLO 3"}})
    );

    // A failed run carries what it wrote too; one without args has arg nil.
    let failed = call(
        &conn,
        "run_lua",
        json!({"code": "io.open('a.txt', 'w'):write(tostring(arg)):close() error('late')"}),
    )
    .await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(
        report(&failed)["files"],
        json!([{"name": "a.txt", "size": 3, "text": "nil"}])
    );
    assert_eq!(failed.content.len(), 2);
}

#[tokio::test]
async fn args_files_and_stdin_are_checked_and_bounded() {
    let config = ServerConfig::default().max_code_bytes(100);
    let conn = connect(sandbox(Limits::default()), config).await;
    for (arguments, needle) in [
        (
            json!({"code": "", "files": {"a": "x".repeat(60)}, "stdin": "y".repeat(60)}),
            "`args`, `files` and `stdin` take more than the 100 bytes allowed together",
        ),
        (
            json!({"code": "", "args": "a b"}),
            "`args` must be an array of strings",
        ),
        (
            json!({"code": "", "files": {"a": 1}}),
            "`files` must be an object",
        ),
        (
            json!({"code": "", "files": {"a": {"base64": "!"}}}),
            "files['a'].base64 is not standard base64",
        ),
        (json!({"code": "", "stdin": 1}), "`stdin` must be a string"),
        (
            json!({"code": "", "extra": 1}),
            "run_lua takes code, inputs, session, args, files and stdin, not 'extra'",
        ),
    ] {
        let result = call(&conn, "run_lua", arguments).await;
        assert_eq!(result.is_error, Some(true));
        assert!(text(&result).contains(needle), "{}", text(&result));
        assert!(result.structured_content.is_none());
    }
    // check_lua takes none of them.
    let result = call(&conn, "check_lua", json!({"code": "", "files": {}})).await;
    assert!(
        text(&result).contains("check_lua takes code, inputs and session, not 'files'"),
        "{}",
        text(&result)
    );
    // A mounted file is read-only, and stays in a session for later calls.
    let id = open_session(&conn).await;
    let first = call(
        &conn,
        "run_lua",
        json!({"code": "return (io.open('a.txt', 'w'))", "files": {"a.txt": "kept"}, "session": id}),
    )
    .await;
    assert_eq!(report(&first)["values"], json!([null]));
    let later = call(
        &conn,
        "run_lua",
        json!({"code": "return io.open('a.txt'):read('a')", "session": id}),
    )
    .await;
    assert_eq!(report(&later)["values"], json!(["kept"]));
}

#[tokio::test]
async fn written_files_are_kept_in_the_report_when_the_answer_has_no_room_for_both() {
    let config = ServerConfig::default().max_reply_bytes(64 << 10);
    let conn = connect(sandbox(Limits::default()), config).await;
    // 40 KiB written: once fits, twice does not.
    let result = call(
        &conn,
        "run_lua",
        json!({"code": "io.open('big.txt', 'w'):write(string.rep('f', 40 * 1024)):close()"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(report(&result)["files"][0]["size"], 40 * 1024);
    assert_eq!(result.content.len(), 1);
    assert!(
        text(&result).contains("the files it wrote are only in the structured content"),
        "{}",
        text(&result)
    );
    // 100 KiB written: the report keeps its costs, the line says the files
    // were dropped.
    let result = call(
        &conn,
        "run_lua",
        json!({"code": "io.open('big.txt', 'w'):write(string.rep('f', 100 * 1024)):close() return 1"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let line = text(&result);
    assert!(line.starts_with("error[reply_too_large]"), "{line}");
    assert!(
        line.ends_with("(the files it wrote were dropped too)"),
        "{line}"
    );
    let kept = &result.structured_content.as_ref().expect("the costs")["report"];
    assert!(kept.get("files").is_none(), "{kept}");
    assert!(kept["stats"]["instructions"].as_u64().unwrap() > 0);
}

/// A long-running script under a long timeout.
fn spinning() -> Limits {
    Limits {
        max_instructions: Limits::MAX_MAX_INSTRUCTIONS,
        timeout: Duration::from_secs(60),
        ..Limits::default()
    }
}

fn run_request(arguments: Value) -> ClientRequest {
    ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("run_lua").with_arguments(args(arguments)),
    ))
}

#[tokio::test]
async fn cancellation_stops_the_eval_and_the_session_answers_again() {
    let mut conn = connect(sandbox(spinning()), ServerConfig::default()).await;
    let id = open_session(&conn).await;
    call(&conn, "run_lua", json!({"code": "kept = 1", "session": id})).await;
    let handle = conn
        .client
        .send_cancellable_request(
            run_request(json!({"code": "print('spinning') while true do end", "session": id})),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("the request is sent");
    // Its output arrives as progress once it runs.
    let first = tokio::time::timeout(Duration::from_secs(30), conn.progress.recv())
        .await
        .expect("progress arrives while the script runs")
        .expect("the client is alive");
    assert_eq!(first.message.as_deref(), Some("spinning\n"));
    assert_eq!(first.progress, 9.0);

    // While it runs, a second call on the session is refused at once.
    let busy = call(&conn, "run_lua", json!({"code": "return 1", "session": id})).await;
    assert_eq!(busy.is_error, Some(true));
    assert!(
        text(&busy).contains("running another run_lua call"),
        "{}",
        text(&busy)
    );

    let cancelled = Instant::now();
    handle
        .cancel(Some("the test cancels".to_owned()))
        .await
        .expect("the cancellation is sent");
    // The session answers again well before the 60 s timeout; it was
    // restarted, so its globals are gone.
    let after = loop {
        let result = call(
            &conn,
            "run_lua",
            json!({"code": "return kept == nil", "session": id}),
        )
        .await;
        if result.is_error != Some(true) {
            break result;
        }
        assert!(
            cancelled.elapsed() < Duration::from_secs(15),
            "{}",
            text(&result)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(report(&after)["values"], json!([true]));
}

#[tokio::test]
async fn closing_a_busy_session_cancels_its_call() {
    let mut conn = connect(sandbox(spinning()), ServerConfig::default()).await;
    let id = open_session(&conn).await;
    let handle = conn
        .client
        .send_cancellable_request(
            run_request(json!({"code": "print('spinning') while true do end", "session": id})),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("the request is sent");
    tokio::time::timeout(Duration::from_secs(30), conn.progress.recv())
        .await
        .expect("the script runs")
        .expect("the client is alive");
    let closed = call(&conn, "close_session", json!({"session": id})).await;
    assert_eq!(closed.is_error, Some(false), "{}", text(&closed));
    let answer = tokio::time::timeout(Duration::from_secs(15), handle.await_response())
        .await
        .expect("the call ends well before its timeout")
        .expect("an answer");
    let ServerResult::CallToolResult(result) = answer else {
        panic!("a tool result")
    };
    assert_eq!(report(&result)["error"]["kind"], "cancelled");
    assert_eq!(report(&result)["output"], "spinning\n");
    assert!(!text(&result).contains("restarted"), "{}", text(&result));
    assert!(
        text(&result).ends_with(&format!(" (session {id} was closed while this call ran)")),
        "{}",
        text(&result)
    );
    let gone = call(&conn, "run_lua", json!({"code": "return 1", "session": id})).await;
    assert!(
        text(&gone).starts_with("unknown session"),
        "{}",
        text(&gone)
    );
}

#[tokio::test]
async fn output_streams_as_progress_before_the_result() {
    // The script spins until the timeout, so progress that arrives well
    // before it was streamed while the script ran (a loaded machine may be
    // slow to deliver it, so the bound is loose).
    let limits = Limits {
        timeout: Duration::from_secs(5),
        ..spinning()
    };
    let mut conn = connect(sandbox(limits), ServerConfig::default()).await;
    let started = Instant::now();
    let handle = conn
        .client
        .send_cancellable_request(
            run_request(
                json!({"code": "print('streamed') io.write('caf', '\\u{e9}') while true do end"}),
            ),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("the request is sent");
    let mut streamed = String::new();
    while !streamed.contains("café") {
        let note = tokio::time::timeout(Duration::from_secs(10), conn.progress.recv())
            .await
            .expect("progress arrives")
            .expect("the client is alive");
        streamed.push_str(note.message.as_deref().unwrap_or_default());
    }
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(streamed, "streamed\ncafé");
    let ServerResult::CallToolResult(result) = handle.await_response().await.expect("an answer")
    else {
        panic!("a tool result")
    };
    assert!(started.elapsed() >= Duration::from_secs(5));
    let report = report(&result);
    assert_eq!(report["error"]["kind"], "timeout");
    assert_eq!(report["output"], "streamed\ncafé");
}

/// A response's status code and head (status line and headers), and the
/// connection, left at the start of the body.
struct Answer {
    status: u16,
    head: String,
    stream: tokio::net::TcpStream,
}

impl Answer {
    /// A header's value, by its name in any case.
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    /// The rest of the response, up to the end of the connection.
    async fn body(mut self) -> String {
        let mut body = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), self.stream.read_to_end(&mut body))
            .await
            .expect("the response ends")
            .expect("reads the body");
        String::from_utf8_lossy(&body).into_owned()
    }
}

/// Sends one raw HTTP/1.1 request to `/mcp` (on a connection closed after
/// it) and reads the response's head.
async fn exchange(
    addr: std::net::SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    stream.write_all(request.as_bytes()).await.expect("sends");
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let byte = tokio::time::timeout(Duration::from_secs(30), stream.read_u8())
            .await
            .expect("the head arrives")
            .expect("a response head");
        head.push(byte);
    }
    let head = String::from_utf8(head).expect("the head is text");
    let status = head
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    Answer {
        status,
        head,
        stream,
    }
}

fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}
    })
    .to_string()
}

/// Sends one raw HTTP/1.1 initialize POST and returns the status code.
async fn post_initialize(addr: std::net::SocketAddr, headers: &[(&str, &str)]) -> u16 {
    exchange(addr, "POST", headers, &initialize_body())
        .await
        .status
}

/// Opens an MCP connection over HTTP: initialize, then initialized.
/// Returns its `Mcp-Session-Id`.
async fn http_connect(addr: std::net::SocketAddr) -> String {
    let init = exchange(addr, "POST", &[], &initialize_body()).await;
    assert_eq!(init.status, 200, "{}", init.head);
    let id = init
        .header("mcp-session-id")
        .expect("a connection id")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let done = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &initialized).await;
    assert_eq!(done.status, 202, "{}", done.head);
    id
}

#[tokio::test]
async fn http_checks_the_token_then_the_origin() {
    const TOKEN: &str = "0123456789abcdef0123456789abcdef";
    let server = McpServer::new(sandbox(Limits::default()), ServerConfig::default()).unwrap();
    let http = HttpConfig::new("127.0.0.1:0".parse().unwrap())
        .token(TOKEN)
        .allow_origin("https://app.example");
    let bound = server.bind_http(http).await.expect("binds");
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.run());
    let bearer = format!("Bearer {TOKEN}");

    assert_eq!(post_initialize(addr, &[]).await, 401);
    assert_eq!(
        post_initialize(addr, &[("Authorization", "Bearer wrong")]).await,
        401
    );
    assert_eq!(
        post_initialize(addr, &[("Authorization", &bearer)]).await,
        200
    );
    for (origin, status) in [
        ("http://localhost:3000", 200),
        ("http://127.0.0.1:9", 200),
        ("https://app.example", 200),
        ("http://evil.example", 403),
        ("http://localhost.evil.example", 403),
        ("null", 403),
    ] {
        let got = post_initialize(addr, &[("Authorization", &bearer), ("Origin", origin)]).await;
        assert_eq!(got, status, "{origin}");
    }
    // A rebound name reaches the loopback server with a foreign Host.
    let mut rebound =
        format!("POST /mcp HTTP/1.1\r\nHost: evil.example\r\nAuthorization: {bearer}\r\n");
    rebound.push_str("Content-Length: 2\r\nConnection: close\r\n\r\n{}");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(rebound.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head[9..12], b"403");
}

#[tokio::test]
async fn http_beyond_loopback_needs_a_token() {
    let server = McpServer::new(sandbox(Limits::default()), ServerConfig::default()).unwrap();
    let err = server
        .bind_http(HttpConfig::new("0.0.0.0:0".parse().unwrap()))
        .await
        .expect_err("refused without a token");
    assert!(matches!(err, Error::TokenRequired { .. }));
    assert!(err.to_string().contains("--token-file"));
}

#[tokio::test]
async fn http_on_any_loopback_address_accepts_its_own_host() {
    let server = McpServer::new(sandbox(Limits::default()), ServerConfig::default()).unwrap();
    let bound = server
        .bind_http(HttpConfig::new("127.0.0.2:0".parse().unwrap()))
        .await
        .expect("binds without a token on loopback");
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.run());
    assert_eq!(post_initialize(addr, &[]).await, 200);
}

#[tokio::test]
async fn http_shutdown_ends_open_event_streams() {
    let server = McpServer::new(sandbox(Limits::default()), ServerConfig::default()).unwrap();
    let bound = server
        .bind_http(HttpConfig::new("127.0.0.1:0".parse().unwrap()))
        .await
        .expect("binds");
    let addr = bound.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(bound.run_until(async {
        let _ = stopped.await;
    }));
    let id = http_connect(addr).await;
    // The standalone event stream stays open until the server ends it.
    let events = exchange(addr, "GET", &[("Mcp-Session-Id", &id)], "").await;
    assert_eq!(events.status, 200, "{}", events.head);
    assert!(
        events
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream")),
        "{}",
        events.head
    );

    stop.send(()).expect("the server is running");
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("run_until returns although an event stream was open")
        .expect("the server task did not panic")
        .expect("the server stopped without an error");
    // The stream ended with it.
    events.body().await;
}

#[tokio::test]
async fn http_connections_are_capped() {
    let server = McpServer::new(sandbox(Limits::default()), ServerConfig::default()).unwrap();
    let bound = server
        .bind_http(HttpConfig::new("127.0.0.1:0".parse().unwrap()).max_connections(2))
        .await
        .expect("binds");
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.run());
    let first = http_connect(addr).await;
    http_connect(addr).await;

    let refused = exchange(addr, "POST", &[], &initialize_body()).await;
    assert_eq!(refused.status, 503, "{}", refused.head);
    let why = refused.body().await;
    assert!(
        why.contains("the limit of 2 open MCP connections is reached"),
        "{why}"
    );
    // A call on an open connection still goes through.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let listed = exchange(addr, "POST", &[("Mcp-Session-Id", &first)], &list).await;
    assert_eq!(listed.status, 200, "{}", listed.head);
    assert!(listed.body().await.contains("run_lua"));

    // Closing a connection frees its place.
    let closed = exchange(addr, "DELETE", &[("Mcp-Session-Id", &first)], "").await;
    assert!((200..300).contains(&closed.status), "{}", closed.head);
    http_connect(addr).await;
}

#[tokio::test]
async fn calls_without_a_session_wait_in_a_bounded_queue() {
    // One call runs at once, four more may wait: the sixth is refused.
    let config = ServerConfig::default().max_sessions(1);
    let conn = connect(sandbox(spinning()), config).await;
    let mut handles = Vec::new();
    for _ in 0..6 {
        let handle = conn
            .client
            .send_cancellable_request(
                run_request(json!({"code": "while true do end"})),
                PeerRequestOptions::no_options(),
            )
            .await
            .expect("the request is sent");
        handles.push(handle);
    }
    // Whichever arrived last is answered at once; the others spin or wait.
    let started = Instant::now();
    let (refused, answer) = loop {
        if let Some(found) = handles
            .iter_mut()
            .enumerate()
            .find_map(|(i, h)| h.rx.try_recv().ok().map(|answer| (i, answer)))
        {
            break found;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no call was refused"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let Ok(ServerResult::CallToolResult(result)) = answer else {
        panic!("a tool result: {answer:?}")
    };
    assert_eq!(result.is_error, Some(true));
    assert!(result.structured_content.is_none());
    assert_eq!(
        text(&result),
        "too many calls without a session (1 running and 4 waiting, the most allowed); try again when one finishes"
    );
    handles.remove(refused);
    for handle in handles {
        handle
            .cancel(Some("the test is done".to_owned()))
            .await
            .expect("the cancellation is sent");
    }
    // The queue drains: a new call runs.
    let again = Instant::now();
    let after = loop {
        let result = call(&conn, "run_lua", json!({"code": "return 'ran'"})).await;
        if result.is_error != Some(true) {
            break result;
        }
        assert!(
            again.elapsed() < Duration::from_secs(15),
            "{}",
            text(&result)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(report(&after)["values"], json!(["ran"]));
}

/// Binds an HTTP server with `listen` and serves it until the returned
/// sender fires (or is dropped).
async fn serve_http(
    limits: Limits,
    http: HttpConfig,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), Error>>,
) {
    let server = McpServer::new(sandbox(limits), ServerConfig::default()).unwrap();
    let bound = server.bind_http(http).await.expect("binds");
    let addr = bound.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(bound.run_until(async {
        let _ = stopped.await;
    }));
    (addr, stop, serving)
}

/// Reads until the server closes the connection (or 10 s pass): what it
/// sent, and how long that took.
async fn read_to_close(stream: &mut tokio::net::TcpStream) -> (String, Duration) {
    let began = Instant::now();
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server kept the connection open");
    (String::from_utf8_lossy(&got).into_owned(), began.elapsed())
}

#[tokio::test]
async fn http_slow_headers_and_stalled_bodies_are_cut_off_at_their_timeouts() {
    let listen = moonbox_service::ListenConfig::default()
        .header_timeout(Duration::from_millis(300))
        .body_timeout(Duration::from_millis(300));
    let http = HttpConfig::new("127.0.0.1:0".parse().unwrap()).listen(listen);
    let (addr, _stop, _serving) = serve_http(Limits::default(), http).await;

    // Headers that never end: closed without an answer.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let (sent, took) = read_to_close(&mut slow).await;
    assert_eq!(sent, "");
    assert!(took >= Duration::from_millis(250), "closed after {took:?}");

    // A body that never ends: 408, and the connection is let go.
    let mut stalled = tokio::net::TcpStream::connect(addr).await.unwrap();
    stalled
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":",
        )
        .await
        .unwrap();
    let (answer, took) = read_to_close(&mut stalled).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 300 ms"), "{answer}");
    assert!(
        took >= Duration::from_millis(250),
        "answered after {took:?}"
    );
}

#[tokio::test]
async fn http_large_bodies_that_stall_cannot_lock_out_small_calls() {
    let (addr, _stop, _serving) = serve_http(
        Limits::default(),
        HttpConfig::new("127.0.0.1:0".parse().unwrap()),
    )
    .await;
    let large = || async move {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                  Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":",
            )
            .await
            .unwrap();
        stream
    };
    // Sixteen large bodies that never end hold every place for reading.
    let mut stalled = Vec::new();
    for _ in 0..16 {
        stalled.push(large().await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut refused = large().await;
    let (answer, _) = read_to_close(&mut refused).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("over 64 KiB"), "{answer}");

    // Small requests need no place: a client still connects and calls.
    let id = http_connect(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "run_lua", "arguments": {"code": "return 6 * 7"}}});
    let answer = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &call.to_string()).await;
    assert_eq!(answer.status, 200, "{}", answer.head);
    assert!(answer.body().await.contains("[42]"));
    drop(stalled);
}

#[tokio::test]
async fn http_tcp_connections_are_capped_and_idle_ones_make_room() {
    let listen = moonbox_service::ListenConfig::default()
        .max_connections(2)
        .body_timeout(Duration::from_secs(3));
    let http = HttpConfig::new("127.0.0.1:0".parse().unwrap()).listen(listen);
    let (addr, _stop, _serving) = serve_http(Limits::default(), http).await;

    // Two sockets that send nothing take both places, yet a client that
    // sends a request gets in: the idlest makes room.
    let mut idle = Vec::new();
    for _ in 0..2 {
        idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(post_initialize(addr, &[]).await, 200);

    // With both places held by requests in progress, a new one is refused.
    let mut busy = Vec::new();
    for _ in 0..2 {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
            .await
            .unwrap();
        busy.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = exchange(addr, "POST", &[], &initialize_body()).await;
    assert_eq!(refused.status, 503, "{}", refused.head);
    assert_eq!(refused.header("retry-after"), Some("1"));
    let why = refused.body().await;
    assert!(why.contains("\"kind\":\"too_many_connections\""), "{why}");
}

#[tokio::test]
async fn http_a_stop_lets_a_call_in_flight_finish_and_refuses_new_ones() {
    // A call that runs until its instruction limit, well within the
    // timeout: cancelled, it would say so instead.
    let limits = Limits {
        max_instructions: 200_000_000,
        timeout: Duration::from_secs(60),
        ..Limits::default()
    };
    let (addr, stop, serving) =
        serve_http(limits, HttpConfig::new("127.0.0.1:0".parse().unwrap())).await;
    let id = http_connect(addr).await;
    let call = |n: u32| {
        json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
               "params": {"name": "run_lua", "arguments": {"code": "while true do end"}}})
        .to_string()
    };
    let first = {
        let (id, body) = (id.clone(), call(3));
        tokio::spawn(async move {
            let answer = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &body).await;
            (answer.status, answer.body().await)
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.send(()).expect("the server is running");
    tokio::time::sleep(Duration::from_millis(100)).await;

    // A call sent during the stop is refused with a reason.
    let refused = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &call(4)).await;
    let why = refused.body().await;
    assert!(why.contains("the server is stopping"), "{why}");

    let (status, body) = first.await.unwrap();
    assert_eq!(status, 200);
    assert!(body.contains("instruction_limit"), "{body}");
    assert!(!body.contains("cancelled"), "{body}");
    tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("run_until returns")
        .expect("the server task did not panic")
        .expect("the server stopped without an error");
}

#[tokio::test]
async fn http_answers_not_taken_hold_reply_memory_and_past_it_calls_are_refused() {
    const BIG: usize = 10 << 20;
    let config = ServerConfig::default().max_reply_bytes(12 << 20);
    let server = McpServer::new(sandbox(Limits::default()), config).unwrap();
    let http = HttpConfig::new("127.0.0.1:0".parse().unwrap()).reply_memory(12 << 20);
    let bound = server.bind_http(http).await.expect("binds");
    let addr = bound.local_addr().unwrap();
    tokio::spawn(bound.run());
    let id = http_connect(addr).await;
    let call = |n: u32| {
        json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
               "params": {"name": "run_lua",
                          "arguments": {"code": format!("return string.rep('w', {BIG})")}}})
        .to_string()
    };

    // A client with a small receive window asks for a 10 MiB answer and
    // does not read it: more than the sockets' buffers hold, so the
    // answer waits in the server, holding its part of the memory.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(addr).await.expect("connects");
    let body = call(2);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {id}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stalled.write_all(request.as_bytes()).await.unwrap();

    // Once that answer is made, another as large does not fit: it is
    // refused with its report, the values dropped.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 3;
    let refused = loop {
        assert!(Instant::now() < deadline, "no call was refused");
        let answer = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &call(n)).await;
        n += 1;
        let body = answer.body().await;
        if body.contains("replies_busy") {
            break body;
        }
        assert!(
            body.len() > BIG,
            "an answer is whole or refused: {}",
            body.len()
        );
    };
    assert!(refused.len() < 64 << 10, "{} bytes", refused.len());
    assert!(refused.contains(r#""values":[]"#), "{refused}");
    assert!(refused.contains(r#""instructions":"#), "{refused}");

    // When the client that did not read goes away, its part is free.
    drop(stalled);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "the memory was never given back");
        let answer = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &call(n)).await;
        n += 1;
        if answer.body().await.len() > BIG {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// Two workers, as the server runs: on one thread, the first call's eval
// yields every few milliseconds, but tokio then polls its timers and sockets
// only every few dozen polls, so the second request could arrive only after
// the first had finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_a_second_request_with_an_id_in_flight_is_refused_and_the_first_answered() {
    let limits = Limits {
        max_instructions: 1_000_000_000,
        timeout: Duration::from_secs(60),
        ..Limits::default()
    };
    let (addr, _stop, _serving) =
        serve_http(limits, HttpConfig::new("127.0.0.1:0".parse().unwrap())).await;
    let id = http_connect(addr).await;
    let call = |code: &str| {
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": "run_lua", "arguments": {"code": code}}})
        .to_string()
    };
    let first = {
        let (id, body) = (id.clone(), call("while true do end"));
        tokio::spawn(async move {
            let answer = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &body).await;
            (answer.status, answer.body().await)
        })
    };
    // Until the first call is in flight (on a loaded machine that can take
    // longer than any fixed wait), the same id is free and simply runs.
    let mut second;
    let mut tries = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        second = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &call("return 2")).await;
        if second.status == 409 {
            break;
        }
        assert_eq!(second.status, 200, "{}", second.head);
        tries += 1;
        assert!(tries < 100, "the first call never showed as in flight");
    }
    let why = second.body().await;
    assert!(why.contains("already in flight"), "{why}");
    assert!(why.contains("\"id\":5"), "{why}");

    // The first call is answered as if nothing happened.
    let (status, body) = first.await.unwrap();
    assert_eq!(status, 200);
    assert!(body.contains("instruction_limit"), "{body}");
    // Its id is free again.
    let again = exchange(addr, "POST", &[("Mcp-Session-Id", &id)], &call("return 3")).await;
    assert_eq!(again.status, 200, "{}", again.head);
    assert!(again.body().await.contains('3'));
}
