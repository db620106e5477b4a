//! `moonbox mcp`'s message handling, end to end: arbitrary bytes as the
//! lines a client sends over the line (stdio) transport after a valid
//! handshake, and as an HTTP/1.1 connection's input to the streamable
//! HTTP endpoint (raw, or as a POST body). Every input must end in answers
//! or a closed connection, never a panic or a hang.
#![no_main]

mod servers;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use moonbox_mcp::{HttpConfig, McpServer, ServerConfig, fuzzing};
use servers::{INPUT_DEADLINE, MAX_OUTPUT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Fixture {
    runtime: tokio::runtime::Runtime,
    server: McpServer,
    http: HttpConfig,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = servers::runtime();
        let sandbox = servers::sandbox(&runtime);
        let server = McpServer::new(sandbox, ServerConfig::default()).expect("the server starts");
        let http = HttpConfig::new("127.0.0.1:0".parse().expect("an address"));
        Fixture {
            runtime,
            server,
            http,
        }
    })
}

/// The handshake a client sends first, a message a line.
const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
);

/// Sends the handshake and `lines` over the line transport, closes the
/// client's side, and reads what the server wrote until it closes.
async fn lines(server: McpServer, lines: &[u8]) -> Vec<u8> {
    let (client, server_end) = tokio::io::duplex(64 << 10);
    let (input, output) = tokio::io::split(server_end);
    let serving = tokio::spawn(server.serve_io_until(input, output, std::future::pending()));
    let (mut read, mut write) = tokio::io::split(client);
    let send = async {
        let _ = write.write_all(HANDSHAKE.as_bytes()).await;
        let _ = write.write_all(lines).await;
        let _ = write.write_all(b"\n").await;
        let _ = write.shutdown().await;
    };
    let mut out = Vec::new();
    let receive = async {
        let mut buf = [0u8; 8 << 10];
        // Read to the end, keeping at most MAX_OUTPUT: a reader that
        // stopped would leave the server blocked on a full pipe.
        while let Ok(n) = read.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let room = MAX_OUTPUT.saturating_sub(out.len());
            out.extend_from_slice(&buf[..n.min(room)]);
        }
    };
    tokio::join!(send, receive);
    let _ = serving.await;
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let fixture = fixture();
    let work = async {
        match mode % 3 {
            0 => {
                let out = lines(fixture.server.clone(), rest).await;
                // The handshake is always answered.
                assert!(out.starts_with(b"{"), "no answer to initialize");
            }
            1 => {
                let mut input = format!(
                    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                     Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
                    rest.len()
                )
                .into_bytes();
                input.extend_from_slice(rest);
                let out =
                    fuzzing::http_bytes(&fixture.server, &fixture.http, &input, MAX_OUTPUT).await;
                assert!(out.starts_with(b"HTTP/1.1 "), "no answer to a POST");
            }
            _ => drop(fuzzing::http_bytes(&fixture.server, &fixture.http, rest, MAX_OUTPUT).await),
        }
    };
    fixture
        .runtime
        .block_on(async { tokio::time::timeout(INPUT_DEADLINE, work).await })
        .expect("every message is answered within the limits");
});
