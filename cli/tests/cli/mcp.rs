//! `moonbox mcp` as a process: how it stops.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[test]
fn sigterm_over_stdio_lets_the_call_in_flight_answer_then_exits_0() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args(["mcp", "--max-instructions", "300000000", "--timeout", "60s"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "0"}}}));
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // A call that runs until its instruction limit (most of a second):
    // cancelled, its answer would say so instead.
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "run_lua", "arguments": {"code": "while true do end"}}}));
    std::thread::sleep(Duration::from_millis(150));
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());

    let began = Instant::now();
    let mut answer = None;
    for line in stdout.lines() {
        let line = line.unwrap();
        if line.contains("\"id\":2") {
            answer = Some(line);
        }
    }
    let answer = answer.expect("the call in flight was answered before the exit");
    assert!(answer.contains("instruction_limit"), "{answer}");
    assert!(!answer.contains("cancelled"), "{answer}");
    let exit = child.wait().unwrap();
    assert_eq!(exit.code(), Some(0));
    assert!(began.elapsed() < Duration::from_secs(30));
}
