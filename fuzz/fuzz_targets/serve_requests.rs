//! `moonbox serve`'s request handling, end to end: arbitrary bytes as an
//! HTTP/1.1 connection's input (raw, or as the body of each API route,
//! including an eval in an open session), and as a NATS message's subject
//! tail and payload. Every input must end in an answer or a closed
//! connection within the limits, never a panic or a hang.
#![no_main]

mod servers;

use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use moonbox_serve::{ServeConfig, Server, fuzzing};
use servers::{INPUT_DEADLINE, MAX_OUTPUT};

struct Fixture {
    runtime: tokio::runtime::Runtime,
    server: Server,
    /// An open session, for the session routes.
    session: String,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = servers::runtime();
        let sandbox = servers::sandbox(&runtime);
        let config = ServeConfig::new("127.0.0.1:0".parse().expect("an address"))
            .session_ttl(Duration::from_secs(24 * 3600));
        let server = Server::new(sandbox, config).expect("the server starts");
        let opened = runtime.block_on(fuzzing::http_bytes(
            &server,
            &request("POST", "/v1/sessions", b"{}"),
            MAX_OUTPUT,
        ));
        let text = String::from_utf8_lossy(&opened);
        let session = text
            .split("\"id\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("a session opens")
            .to_owned();
        Fixture {
            runtime,
            server,
            session,
        }
    })
}

/// A well-formed request to `path` carrying `body`.
fn request(method: &str, path: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let fixture = fixture();
    let session_eval = format!("/v1/sessions/{}/eval", fixture.session);
    let work = async {
        match mode % 6 {
            0 => drop(fuzzing::http_bytes(&fixture.server, rest, MAX_OUTPUT).await),
            1 => {
                let input = request("POST", "/v1/eval", rest);
                let out = fuzzing::http_bytes(&fixture.server, &input, MAX_OUTPUT).await;
                assert!(out.starts_with(b"HTTP/1.1 "), "no answer to an eval");
            }
            2 => {
                let input = request("POST", "/v1/sessions", rest);
                let out = fuzzing::http_bytes(&fixture.server, &input, MAX_OUTPUT).await;
                assert!(out.starts_with(b"HTTP/1.1 "), "no answer to an open");
                // Close what opened, so that the cap is never reached.
                let text = String::from_utf8_lossy(&out);
                if let Some(id) = text
                    .split("\"id\":\"")
                    .nth(1)
                    .and_then(|r| r.split('"').next())
                {
                    let close = request("DELETE", &format!("/v1/sessions/{id}"), b"");
                    fuzzing::http_bytes(&fixture.server, &close, MAX_OUTPUT).await;
                }
            }
            3 => {
                let input = request("POST", &session_eval, rest);
                let out = fuzzing::http_bytes(&fixture.server, &input, MAX_OUTPUT).await;
                assert!(out.starts_with(b"HTTP/1.1 "), "no answer to a session eval");
            }
            4 => {
                // The payload after a subject tail of up to 64 bytes.
                let split = rest
                    .first()
                    .map_or(0, |n| usize::from(*n % 64))
                    .min(rest.len());
                let (tail, payload) = rest.split_at(split);
                let tail = String::from_utf8_lossy(tail);
                let out = fuzzing::nats_message(&fixture.server, &tail, payload, 64 << 10).await;
                assert!(out.len() <= 64 << 10, "an answer past max_payload");
                assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
            }
            _ => {
                let tail = format!("session.{}.eval", fixture.session);
                let out = fuzzing::nats_message(&fixture.server, &tail, rest, 64 << 10).await;
                assert!(serde_json::from_slice::<serde_json::Value>(&out).is_ok());
            }
        }
    };
    fixture
        .runtime
        .block_on(async { tokio::time::timeout(INPUT_DEADLINE, work).await })
        .expect("every request is answered within the limits");
});
