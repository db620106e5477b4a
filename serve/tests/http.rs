//! The HTTP API driven by a real HTTP client (reqwest) over loopback:
//! success, every refusal, the bounds (overload, sessions, quotas, bodies),
//! keys, and the drain.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use moonbox::{Capability, CapabilityError, Limits, Sandbox};
use moonbox_serve::{Keys, ServeConfig, Server};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server, stopped (drained) by [`Running::stop`].
struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), moonbox_serve::Error>>,
    client: reqwest::Client,
    /// The key `/metrics` is read with, on a server with keys.
    key: Option<&'static str>,
}

/// The key of the tenant `acme` in [`keys`].
const ACME_KEY: &str = "acme-key-0123456789";
/// The key of `keys()`'s tenant that may read the metrics.
const OPS_KEY: &str = "ops-key-0123456789";

/// A sandbox with `sleep(ms)`, a capability that waits, so that an eval
/// can be made to take a known wall time without burning CPU.
async fn sandbox(limits: Limits) -> Sandbox {
    Sandbox::builder()
        .limits(limits)
        .capability(Capability::new_async(
            "sleep",
            |_, (ms,): (u64,)| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok::<_, CapabilityError>(true)
            },
        ))
        .build_async()
        .await
        .expect("the sandbox builds")
}

fn local() -> ServeConfig {
    ServeConfig::new("127.0.0.1:0".parse().unwrap())
}

async fn start(config: ServeConfig) -> Running {
    start_with(sandbox(Limits::default()).await, config).await
}

async fn start_with(sandbox: Sandbox, config: ServeConfig) -> Running {
    let key = config.keys.is_some().then_some(ACME_KEY);
    let bound = Server::new(sandbox, config)
        .expect("the config is valid")
        .bind()
        .await
        .expect("loopback binds");
    let addr = bound.local_addr().unwrap();
    let (tx, rx) = oneshot::channel();
    let task = tokio::spawn(bound.run_until(async move {
        let _ = rx.await;
    }));
    Running {
        addr,
        stop: Some(tx),
        task,
        client: reqwest::Client::new(),
        key,
    }
}

impl Running {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn post(
        &self,
        path: &str,
        body: Value,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        // Null sends an empty body.
        let text = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        self.send(self.client.post(self.url(path)).body(text)).await
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        answer(request).await
    }

    async fn eval(&self, body: Value) -> (StatusCode, Value) {
        let (status, _, body) = self.post("/v1/eval", body).await;
        (status, body)
    }

    async fn metrics(&self) -> String {
        let request = self.client.get(self.url("/metrics"));
        // With keys, an operator's.
        let request = match self.key {
            Some(_) => request.bearer_auth(OPS_KEY),
            None => request,
        };
        request.send().await.unwrap().text().await.unwrap()
    }

    /// Waits until the metrics hold `line` (a gauge reaching a value), so
    /// that a test goes on once the server is in the state it needs.
    async fn wait_for(&self, line: &str) {
        let began = Instant::now();
        loop {
            let metrics = self.metrics().await;
            if metrics.lines().any(|l| l == line) {
                return;
            }
            assert!(
                began.elapsed() < Duration::from_secs(10),
                "the metrics never showed {line}:\n{metrics}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(Duration::from_secs(30), self.task)
            .await
            .expect("the server drains in time")
            .unwrap()
            .expect("the server stops cleanly");
    }
}

/// Sends `POST /v1/eval` with `body` on a task of its own: the status and
/// the answer's JSON.
fn spawn_eval(server: &Running, body: Value) -> JoinHandle<(StatusCode, Value)> {
    spawn_send(
        server
            .client
            .post(server.url("/v1/eval"))
            .body(body.to_string()),
    )
}

/// Sends `request` on a task of its own: the status and the answer's JSON.
fn spawn_send(request: reqwest::RequestBuilder) -> JoinHandle<(StatusCode, Value)> {
    tokio::spawn(async move {
        let (status, _, body) = answer(request).await;
        (status, body)
    })
}

/// Sends `request`: the status, the headers and the answer's JSON (`null`
/// for an empty body, a string for one that is not JSON).
async fn answer(
    request: reqwest::RequestBuilder,
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let response = request.send().await.expect("the server answers");
    let status = response.status();
    let headers = response.headers().clone();
    let text = response.text().await.expect("a body");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, headers, body)
}

/// The error kind of a refusal.
fn kind(body: &Value) -> &str {
    body["error"]["kind"].as_str().unwrap_or("<none>")
}

#[tokio::test]
async fn an_eval_answers_the_same_report_as_the_library() {
    let server = start(local()).await;
    let (status, body) = server
        .eval(json!({"code": "print('hi') return n + 1, {a = true}", "inputs": {"n": 41}}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["ok"], true);
    assert_eq!(body["values"], json!([42, {"a": true}]));
    assert_eq!(body["output"], "hi\n");
    assert_eq!(body["version"], moonbox::Report::VERSION);
    // The report parses as the crate's own type.
    let report: moonbox::Report = serde_json::from_value(body).unwrap();
    assert!(report.ok);

    // A script's failure is a report too (200), with what it printed.
    let (status, body) = server
        .eval(json!({"code": "print('before') error('boom')", "chunk_name": "tool.lua"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["ok"], false);
    assert_eq!(body["output"], "before\n");
    assert_eq!(body["error"]["kind"], "runtime");
    assert_eq!(body["error"]["chunk"], "tool.lua");
    let (_, body) = server.eval(json!({"code": "return ("})).await;
    assert_eq!(body["error"]["kind"], "syntax");
    server.stop().await;
}

#[tokio::test]
async fn a_request_may_lower_the_limits_but_not_raise_them() {
    let server = start(local()).await;
    let (status, body) = server
        .eval(json!({"code": "print('spin') while true do end", "limits": {"max_instructions": 1000}}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["kind"], "instruction_limit");
    assert_eq!(body["output"], "spin\n");
    assert!(body["error"]["message"].as_str().unwrap().contains("1000"));

    let (status, body) = server
        .eval(json!({"code": "sleep(2000)", "limits": {"timeout_ms": 100}}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["kind"], "timeout");

    for (name, value) in [
        (
            "max_instructions",
            json!(Limits::DEFAULT_MAX_INSTRUCTIONS + 1),
        ),
        (
            "max_memory_bytes",
            json!(Limits::DEFAULT_MAX_MEMORY_BYTES + 1),
        ),
        ("timeout_ms", json!(5001)),
    ] {
        let (status, body) = server
            .eval(json!({"code": "return 1", "limits": {name: value}}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name}");
        assert_eq!(kind(&body), "limit_above_ceiling");
        assert!(body["error"]["message"].as_str().unwrap().contains(name));
    }
    // Below the least a sandbox accepts: refused by the library's check.
    let (status, body) = server
        .eval(json!({"code": "return 1", "limits": {"max_instructions": 0}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(kind(&body), "invalid_limits");
    // A limit the API does not take.
    let (status, body) = server
        .eval(json!({"code": "return 1", "limits": {"fuel": 5}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"]["message"].as_str().unwrap().contains("fuel"));
    server.stop().await;
}

#[tokio::test]
async fn malformed_and_oversized_requests_are_refused_with_their_kind() {
    let server = start(local().max_code_bytes(100).max_body_bytes(1000)).await;
    let raw = |body: &'static str| server.client.post(server.url("/v1/eval")).body(body);
    let (status, _, body) = server.send(raw("{not json")).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    let (status, _, body) = server.send(raw(r#"{"code": "x", "extra": 1}"#)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"]["message"].as_str().unwrap().contains("extra"));
    let (status, _, body) = server.send(raw("")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let (status, body) = server.eval(json!({"code": "x".repeat(101)})).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::PAYLOAD_TOO_LARGE, "code_too_large")
    );
    let (status, body) = server
        .eval(json!({"code": "return 1", "inputs": {"big": "y".repeat(2000)}}))
        .await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large")
    );
    // A chunked body (no Content-Length) past the bound too.
    let stream = futures_stream(vec![
        b"{\"code\": \"".to_vec(),
        vec![b' '; 2000],
        b"\"}".to_vec(),
    ]);
    let (status, _, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/eval"))
                .body(reqwest::Body::wrap_stream(stream)),
        )
        .await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large")
    );

    let (status, _, body) = server.send(server.client.get(server.url("/v2/eval"))).await;
    assert_eq!((status, kind(&body)), (StatusCode::NOT_FOUND, "not_found"));
    // A known route with a method it does not take, and a session id that
    // is not text, get the same JSON shape as every other refusal.
    let (status, headers, body) = server.post("/healthz", Value::Null).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
        "{body}"
    );
    assert_eq!(headers[reqwest::header::ALLOW], "GET,HEAD");
    let (status, _, body) = server.send(server.client.get(server.url("/v1/eval"))).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
        "{body}"
    );
    for request in [
        server.client.post(server.url("/v1/sessions/%FF%FE/eval")),
        server.client.delete(server.url("/v1/sessions/%FF")),
    ] {
        let (status, _, body) = server.send(request.body("{}")).await;
        assert_eq!(
            (status, kind(&body)),
            (StatusCode::BAD_REQUEST, "bad_request"),
            "{body}"
        );
    }
    let metrics = server.metrics().await;
    assert!(
        metrics.contains("moonbox_requests_refused_total{kind=\"body_too_large\"} 2"),
        "{metrics}"
    );
    assert!(metrics.contains("moonbox_requests_refused_total{kind=\"code_too_large\"} 1"));
    server.stop().await;
}

/// A stream of chunks, sent without a Content-Length.
fn futures_stream(
    chunks: Vec<Vec<u8>>,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send + Sync + 'static {
    futures_util::stream::iter(chunks.into_iter().map(Ok))
}

#[tokio::test]
async fn sessions_keep_state_until_closed_and_refuse_a_second_eval_at_once() {
    let server = start(local()).await;
    let (status, _, opened) = server.post("/v1/sessions", Value::Null).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    let id = opened["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32);
    let path = format!("/v1/sessions/{id}/eval");
    let (status, _, body) = server.post(&path, json!({"code": "n = 41"})).await;
    assert_eq!((status, body["ok"].clone()), (StatusCode::OK, json!(true)));
    let (_, _, body) = server.post(&path, json!({"code": "return n + 1"})).await;
    assert_eq!(body["values"], json!([42]));

    // One eval at a time: the second, sent while the first sleeps, is 409.
    let slow = spawn_send(
        server
            .client
            .post(server.url(&path))
            .body(json!({"code": "sleep(500) return 'done'"}).to_string()),
    );
    server.wait_for("moonbox_evals_running 1").await;
    let (status, _, body) = server.post(&path, json!({"code": "return 1"})).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::CONFLICT, "session_busy")
    );
    let (_, slow) = slow.await.unwrap();
    assert_eq!(slow["values"], json!(["done"]));

    // A session's limits are fixed when it opens.
    let (status, _, body) = server
        .post(&path, json!({"code": "return 1", "limits": {}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let delete = |id: &str| {
        server
            .client
            .delete(server.url(&format!("/v1/sessions/{id}")))
    };
    let (status, _, _) = server.send(delete(&id)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _, body) = server.post(&path, json!({"code": "return n"})).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::NOT_FOUND, "unknown_session")
    );
    let (status, _, _) = server.send(delete(&id)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    server.stop().await;
}

#[tokio::test]
async fn a_session_opens_with_its_own_limits() {
    let server = start(local()).await;
    let (status, _, opened) = server
        .post("/v1/sessions", json!({"limits": {"max_instructions": 500}}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(opened["limits"]["max_instructions"], 500);
    let id = opened["id"].as_str().unwrap();
    let (_, _, body) = server
        .post(
            &format!("/v1/sessions/{id}/eval"),
            json!({"code": "for i = 1, 1e6 do end"}),
        )
        .await;
    assert_eq!(body["error"]["kind"], "instruction_limit");
    let (status, _, body) = server
        .post(
            "/v1/sessions",
            json!({"limits": {"max_instructions": 1e12}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    server.stop().await;
}

#[tokio::test]
async fn the_session_cap_and_idle_ttl_hold() {
    let server = start(local().max_sessions(2).session_ttl(Duration::from_secs(1))).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (status, _, body) = server.post("/v1/sessions", Value::Null).await;
        assert_eq!(status, StatusCode::CREATED);
        ids.push(body["id"].as_str().unwrap().to_owned());
    }
    let (status, headers, body) = server.post("/v1/sessions", Value::Null).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::TOO_MANY_REQUESTS, "too_many_sessions")
    );
    assert!(headers.contains_key("retry-after"));
    assert!(server.metrics().await.contains("moonbox_sessions_live 2"));

    // Idle past the TTL: closed, and their places are free again.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let (status, _, body) = server
        .post(
            &format!("/v1/sessions/{}/eval", ids[0]),
            json!({"code": "return 1"}),
        )
        .await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::NOT_FOUND, "unknown_session")
    );
    let (status, _, _) = server.post("/v1/sessions", Value::Null).await;
    assert_eq!(status, StatusCode::CREATED);
    server.stop().await;
}

#[tokio::test]
async fn past_the_running_and_queued_bounds_requests_get_429_at_once() {
    let server = start(local().max_running(1).max_queued(1)).await;
    let spawn_slow = || spawn_eval(&server, json!({"code": "sleep(600) return 'slow'"}));
    let running = spawn_slow();
    server.wait_for("moonbox_evals_running 1").await;
    let queued = spawn_slow();
    server.wait_for("moonbox_queue_depth 1").await;
    let metrics = server.metrics().await;
    assert!(metrics.contains("moonbox_queue_depth 1"), "{metrics}");
    assert!(metrics.contains("moonbox_evals_running 1"), "{metrics}");

    let asked = Instant::now();
    let (status, headers, body) = server.post("/v1/eval", json!({"code": "return 1"})).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::TOO_MANY_REQUESTS, "overloaded")
    );
    assert_eq!(headers["retry-after"], "1");
    assert!(
        asked.elapsed() < Duration::from_millis(400),
        "refused at once, not queued"
    );

    // The two admitted still finish: nothing lost.
    for task in [running, queued] {
        let (status, body) = task.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["values"], json!(["slow"]));
    }
    server.stop().await;
}

fn keys() -> Keys {
    let text = json!({"tenants": [
        {"name": "acme", "key_sha256": Keys::digest_hex(ACME_KEY)},
        {"name": "tiny", "key_sha256": Keys::digest_hex("tiny-key-0123456789"),
         "wall_ms_per_minute": 200},
        {"name": "ops", "key_sha256": Keys::digest_hex(OPS_KEY), "metrics": true},
    ]});
    Keys::parse(text.to_string().as_bytes()).unwrap()
}

#[tokio::test]
async fn with_keys_every_request_needs_a_known_key_and_tenants_are_apart() {
    let server = start(local().keys(keys())).await;
    let eval = |key: Option<&str>| {
        let request = server
            .client
            .post(server.url("/v1/eval"))
            .body(json!({"code": "return 1"}).to_string());
        match key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    };
    let (status, headers, body) = server.send(eval(None)).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    assert_eq!(headers["www-authenticate"], "Bearer");
    let (status, _, body) = server.send(eval(Some("wrong-key"))).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let (status, _, body) = server.send(eval(Some("acme-key-0123456789"))).await;
    assert_eq!(
        (status, body["values"].clone()),
        (StatusCode::OK, json!([1]))
    );
    // Metrics need an operator's key; health checks need none.
    let metrics = |key: Option<&str>| {
        let request = server.client.get(server.url("/metrics"));
        match key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    };
    let (status, _, _) = server.send(metrics(None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, body) = server.send(metrics(Some(ACME_KEY))).await;
    assert_eq!((status, kind(&body)), (StatusCode::FORBIDDEN, "forbidden"));
    let (status, _, _) = server.send(metrics(Some(OPS_KEY))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = server.send(server.client.get(server.url("/healthz"))).await;
    assert_eq!(status, StatusCode::OK);

    // A session is its tenant's: to another tenant it does not exist.
    let (status, _, opened) = server
        .send(
            server
                .client
                .post(server.url("/v1/sessions"))
                .bearer_auth("acme-key-0123456789"),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let path = format!("/v1/sessions/{}/eval", opened["id"].as_str().unwrap());
    let (status, _, body) = server
        .send(
            server
                .client
                .post(server.url(&path))
                .bearer_auth("tiny-key-0123456789")
                .body(json!({"code": "return 1"}).to_string()),
        )
        .await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::NOT_FOUND, "unknown_session")
    );
    server.stop().await;
}

#[tokio::test]
async fn a_tenant_past_its_quota_gets_429_with_the_refill_time() {
    let server = start(local().keys(keys())).await;
    let eval = |key: &str, code: &str| {
        server
            .client
            .post(server.url("/v1/eval"))
            .bearer_auth(key)
            .body(json!({ "code": code }).to_string())
    };
    // 300 ms of wall time spends tiny's 200 ms a minute.
    let (status, _, body) = server.send(eval("tiny-key-0123456789", "sleep(300)")).await;
    assert_eq!((status, body["ok"].clone()), (StatusCode::OK, json!(true)));
    let (status, headers, body) = server.send(eval("tiny-key-0123456789", "return 1")).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::TOO_MANY_REQUESTS, "quota_exceeded")
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("wall_ms_per_minute")
    );
    let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // Another tenant is not affected.
    let (status, _, _) = server.send(eval("acme-key-0123456789", "return 1")).await;
    assert_eq!(status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn without_keys_only_local_clients_are_served() {
    let server = start(local()).await;
    let (status, _, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/eval"))
                .header("host", "attacker.example")
                .body(json!({"code": "return 1"}).to_string()),
        )
        .await;
    assert_eq!((status, kind(&body)), (StatusCode::FORBIDDEN, "forbidden"));
    let (status, _, _) = server
        .send(
            server
                .client
                .post(server.url("/v1/eval"))
                .header("origin", "https://attacker.example")
                .body(json!({"code": "return 1"}).to_string()),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    server.stop().await;
    // And it cannot listen anywhere else.
    let public = ServeConfig::new("0.0.0.0:0".parse().unwrap());
    let err = Server::new(sandbox(Limits::default()).await, public).unwrap_err();
    assert!(err.to_string().contains("without API keys"), "{err}");
}

#[tokio::test]
async fn a_drain_finishes_evals_in_flight_and_takes_no_new_work() {
    let server = start(local()).await;
    let (status, _, _) = server.send(server.client.get(server.url("/readyz"))).await;
    assert_eq!(status, StatusCode::OK);
    let in_flight = spawn_eval(
        &server,
        json!({"code": "print('working') sleep(400) return 'finished'"}),
    );
    server.wait_for("moonbox_evals_running 1").await;
    let addr = server.addr;
    let stopped = tokio::spawn(server.stop());
    // Once the drain begins, a new connection is answered `503 draining`
    // (until then one may still be served), never reset.
    let began = Instant::now();
    loop {
        let attempt = reqwest::Client::new()
            .post(format!("http://{addr}/v1/eval"))
            .body(json!({"code": "return 1"}).to_string())
            .send()
            .await
            .expect("a connection during the drain is answered, not reset");
        if attempt.status() == StatusCode::SERVICE_UNAVAILABLE {
            assert_eq!(attempt.headers()["retry-after"], "1");
            let body: Value = serde_json::from_slice(&attempt.bytes().await.unwrap()).unwrap();
            assert_eq!(kind(&body), "draining", "{body}");
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "new connections are still served"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (status, body) = in_flight.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["values"], json!(["finished"]));
    assert_eq!(body["output"], "working\n");
    stopped.await.unwrap();
}

#[tokio::test]
async fn past_the_drain_timeout_evals_are_cancelled_with_their_output() {
    let limits = Limits {
        timeout: Duration::from_secs(60),
        ..Limits::default()
    };
    let server = start_with(
        sandbox(limits).await,
        local().drain_timeout(Duration::from_millis(300)),
    )
    .await;
    let in_flight = spawn_eval(&server, json!({"code": "print('started') sleep(30000)"}));
    server.wait_for("moonbox_evals_running 1").await;
    let began = Instant::now();
    server.stop().await;
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    let (status, body) = in_flight.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["kind"], "cancelled");
    assert_eq!(body["output"], "started\n");
}

#[tokio::test]
async fn metrics_count_evals_by_kind_and_outcome() {
    let server = start(local()).await;
    server.eval(json!({"code": "return 1"})).await;
    server.eval(json!({"code": "error('x')"})).await;
    let (_, _, opened) = server.post("/v1/sessions", Value::Null).await;
    let path = format!("/v1/sessions/{}/eval", opened["id"].as_str().unwrap());
    server.post(&path, json!({"code": "return 2"})).await;
    let metrics = server.metrics().await;
    for line in [
        "moonbox_evals_total{kind=\"eval\",outcome=\"ok\"} 1",
        "moonbox_evals_total{kind=\"eval\",outcome=\"runtime\"} 1",
        "moonbox_evals_total{kind=\"session\",outcome=\"ok\"} 1",
        "moonbox_eval_duration_seconds_count{kind=\"eval\"} 2",
        "moonbox_sessions_live 1",
        "moonbox_draining 0",
    ] {
        assert!(metrics.contains(line), "missing {line} in\n{metrics}");
    }
    server.stop().await;
}

#[tokio::test]
async fn past_the_drain_timeout_queued_requests_are_refused_not_started() {
    let limits = Limits {
        timeout: Duration::from_secs(60),
        ..Limits::default()
    };
    let server = start_with(
        sandbox(limits).await,
        local()
            .max_running(1)
            .drain_timeout(Duration::from_millis(300)),
    )
    .await;
    let send = |code: &'static str| spawn_eval(&server, json!({ "code": code }));
    let running = send("print('first') sleep(30000)");
    server.wait_for("moonbox_evals_running 1").await;
    let queued = send("print('second') return 2");
    server.wait_for("moonbox_queue_depth 1").await;
    server.stop().await;
    let (status, body) = running.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["error"]["kind"], "cancelled");
    assert_eq!(body["output"], "first\n");
    // The queued one never started: refused, and it says why.
    let (status, body) = queued.await.unwrap();
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::SERVICE_UNAVAILABLE, "draining"),
        "{body}"
    );
}

#[tokio::test]
async fn one_tenant_cannot_hold_every_session() {
    let server = start(local().keys(keys()).max_sessions_per_tenant(1)).await;
    let open = |key: &str| {
        server
            .client
            .post(server.url("/v1/sessions"))
            .bearer_auth(key)
    };
    let (status, _, _) = server.send(open("acme-key-0123456789")).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _, body) = server.send(open("acme-key-0123456789")).await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::TOO_MANY_REQUESTS, "too_many_sessions")
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tenant 'acme'")
    );
    let (status, _, _) = server.send(open("tiny-key-0123456789")).await;
    assert_eq!(status, StatusCode::CREATED);
    server.stop().await;
}

#[tokio::test]
async fn evals_started_together_cannot_overdraw_a_quota() {
    let server = start(local().keys(keys())).await;
    // tiny has 200 ms of wall time a minute; the first eval takes its worst
    // case (the 5 s timeout) at admission, so the second is refused at once
    // even though the first has not finished.
    let slow = spawn_send(
        server
            .client
            .post(server.url("/v1/eval"))
            .bearer_auth("tiny-key-0123456789")
            .body(json!({"code": "sleep(300) return 1"}).to_string()),
    );
    server.wait_for("moonbox_evals_running 1").await;
    let (status, _, body) = server
        .send(
            server
                .client
                .post(server.url("/v1/eval"))
                .bearer_auth("tiny-key-0123456789")
                .body(json!({"code": "return 1"}).to_string()),
        )
        .await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::TOO_MANY_REQUESTS, "quota_exceeded")
    );
    assert_eq!(slow.await.unwrap().0, StatusCode::OK);
    server.stop().await;
}

/// Reads from `stream` until the peer closes it (or 10 s pass): what it
/// sent, and how long that took.
async fn read_to_close(stream: &mut tokio::net::TcpStream) -> (String, Duration) {
    let (got, took, ended) = read_until(stream, |_| false).await;
    assert!(ended, "the server kept the connection open");
    (got, took)
}

/// Reads from `stream` until the peer closes it, `enough` says what was
/// read is enough, or 10 s pass: what was read, how long that took, and
/// whether it ended before the 10 s.
async fn read_until(
    stream: &mut tokio::net::TcpStream,
    enough: impl Fn(&[u8]) -> bool,
) -> (String, Duration, bool) {
    use tokio::io::AsyncReadExt;
    let began = Instant::now();
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
            if enough(&got) {
                break;
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&got).into_owned();
    (text, began.elapsed(), read.is_ok())
}

/// Opens a raw connection and sends `POST /v1/eval` with `key` (if any),
/// a declared body of `length` bytes, and `sent` of it.
async fn raw_post(
    addr: std::net::SocketAddr,
    key: Option<&str>,
    length: usize,
    sent: &[u8],
) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let auth = key.map_or(String::new(), |key| {
        format!("Authorization: Bearer {key}\r\n")
    });
    let head = format!(
        "POST /v1/eval HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Length: {length}\r\n\r\n"
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(sent).await.unwrap();
    stream
}

/// Opens a connection that sends a request's headers and part of its
/// body, so that it stays busy until the body timeout.
async fn busy_connection(server: &Running) -> tokio::net::TcpStream {
    raw_post(server.addr, None, 100, b"{\"code\":").await
}

#[tokio::test]
async fn past_the_connection_cap_with_every_connection_busy_a_new_one_gets_503() {
    let config = local()
        .max_connections(2)
        .body_timeout(Duration::from_secs(3));
    let server = start(config).await;
    let first = busy_connection(&server).await;
    let _second = busy_connection(&server).await;
    // Both are read and waiting for their bodies.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let (status, headers, body) = answer(
        reqwest::Client::new()
            .post(server.url("/v1/eval"))
            .body(json!({"code": "return 1"}).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(kind(&body), "too_many_connections");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2 connections"),
        "{body}"
    );
    assert_eq!(headers["retry-after"], "1");

    // A place freed is a place taken again.
    drop(first);
    let (status, _, body) = answer(
        reqwest::Client::new()
            .post(server.url("/v1/eval"))
            .body(json!({"code": "return 1"}).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["values"], json!([1]));
    assert!(
        server
            .metrics()
            .await
            .contains("moonbox_requests_refused_total{kind=\"too_many_connections\"} 1")
    );
    server.stop().await;
}

#[tokio::test]
async fn at_the_connection_cap_the_idlest_connection_makes_room_for_a_health_probe() {
    use tokio::io::AsyncWriteExt;
    let server = start(local().max_connections(3)).await;
    // The metrics client's pooled connection is one place; slow clients
    // that never finish their headers take the others.
    server.wait_for("moonbox_http_connections 1").await;
    let mut slow = Vec::new();
    for _ in 0..2 {
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .unwrap();
        slow.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Each probe, on a connection of its own that it keeps, takes the
    // place of the connection idle longest (the metrics client's first,
    // then the slow clients), well before the header timeout.
    let mut probes = Vec::new();
    for _ in 0..3 {
        let began = Instant::now();
        let probe = reqwest::Client::new();
        let (status, _, body) = answer(probe.get(server.url("/healthz"))).await;
        probes.push(probe);
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "{:?}",
            began.elapsed()
        );
    }
    for mut stream in slow {
        let (sent, took) = read_to_close(&mut stream).await;
        assert_eq!(sent, "", "a closed slow client gets no answer");
        assert!(took < Duration::from_secs(5), "closed after {took:?}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_does_not_read_its_answer_is_cut_off_at_the_write_timeout() {
    let config = local()
        .write_timeout(Duration::from_millis(500))
        .max_reply_bytes(64 << 20)
        .reply_memory(64 << 20);
    let server = start(config).await;
    server.wait_for("moonbox_http_connections 1").await;
    // A short request whose answer (about 25 MB of JSON) is far more than
    // the sockets' buffers hold, from a client that never reads.
    let body = json!({"code": "return string.rep('\\1', 4 * 1024 * 1024)"}).to_string();
    let stream = raw_post(server.addr, None, body.len(), body.as_bytes()).await;
    server.wait_for("moonbox_http_connections 2").await;
    // The server gives up on it, and its place (and the answer) is freed,
    // though the client still holds its end.
    let began = Instant::now();
    server.wait_for("moonbox_http_connections 1").await;
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    drop(stream);
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_closed_and_holds_a_drain_only_that_long() {
    use tokio::io::AsyncWriteExt;
    let config = local()
        .header_timeout(Duration::from_millis(300))
        .drain_timeout(Duration::from_secs(60));
    let server = start(config).await;
    let mut slow = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(b"POST /v1/eval HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let (_, took) = read_to_close(&mut slow).await;
    assert!(took >= Duration::from_millis(250), "closed after {took:?}");

    // An idle connection is closed after the same time, so it holds no
    // place either.
    let mut idle = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (sent, _) = read_to_close(&mut idle).await;
    assert_eq!(sent, "");

    // A drain waits for a connection that stalls in its headers only until
    // the header timeout closes it, not for its own 60 s.
    let opened = Instant::now();
    let mut stalled = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    stalled
        .write_all(b"POST /v1/eval HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    // The metrics' own connection, and the stalled one.
    server.wait_for("moonbox_http_connections 2").await;
    let began = Instant::now();
    server.stop().await;
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "the drain took {:?}",
        began.elapsed()
    );
    assert!(
        opened.elapsed() >= Duration::from_millis(250),
        "the drain did not wait for the stalled connection"
    );
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_gets_408() {
    let server = start(local().body_timeout(Duration::from_millis(300))).await;
    let mut stream = raw_post(server.addr, None, 100, b"{\"code\":").await;
    let (answer, took) = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"kind\":\"body_timeout\""), "{answer}");
    assert!(answer.contains("within 300 ms"), "{answer}");
    assert!(
        took >= Duration::from_millis(250),
        "answered after {took:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_answer_past_the_reply_bound_is_refused_with_the_report_minus_its_values() {
    let server = start(local().max_reply_bytes(64 << 10)).await;
    let (status, _, body) = server
        .post(
            "/v1/eval",
            json!({"code": "print('made it') return string.rep('x', 100000)"}),
        )
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(kind(&body), "reply_too_large");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--max-reply-bytes (65536 bytes)"),
        "{body}"
    );
    // What the eval wrote and cost is kept.
    assert_eq!(body["report"]["values"], json!([]));
    assert_eq!(body["report"]["output"], "made it\n");
    assert!(body["report"]["stats"]["instructions"].as_u64().unwrap() > 0);
    server.stop().await;
}

#[tokio::test]
async fn clients_that_do_not_read_hold_no_more_than_the_reply_memory() {
    let config = local()
        .max_reply_bytes(16 << 20)
        .reply_memory(16 << 20)
        .write_timeout(Duration::from_secs(20));
    let server = start(config).await;
    // An answer of 15 MB, more than the sockets' buffers take, for a
    // client that never reads: it holds most of the memory for answers.
    let big = json!({"code": "return string.rep('x', 15000000)"}).to_string();
    let holder = raw_post(server.addr, None, big.len(), big.as_bytes()).await;
    server
        .wait_for("moonbox_evals_total{kind=\"eval\",outcome=\"ok\"} 1")
        .await;

    // A second large answer does not fit: refused, with its report.
    let (status, _, body) = server
        .post(
            "/v1/eval",
            json!({"code": "print('second') return string.rep('x', 15000000)"}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(kind(&body), "replies_busy");
    assert_eq!(body["report"]["output"], "second\n");
    assert_eq!(body["report"]["values"], json!([]));

    // A small answer always fits.
    let (status, _, body) = server.post("/v1/eval", json!({"code": "return 1"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Once the holder goes, the memory is free again.
    drop(holder);
    let began = Instant::now();
    loop {
        let (status, _, body) = server
            .post(
                "/v1/eval",
                json!({"code": "return string.rep('x', 15000000)"}),
            )
            .await;
        if status == StatusCode::OK {
            assert_eq!(body["values"][0].as_str().map(str::len), Some(15_000_000));
            break;
        }
        assert!(began.elapsed() < Duration::from_secs(10), "{body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.stop().await;
}

/// Sends a request's headers with `key` and part of its body, so that the
/// body stays unfinished.
async fn stalled_body(server: &Running, key: &str) -> tokio::net::TcpStream {
    raw_post(server.addr, Some(key), 100, b"{\"code\":").await
}

#[tokio::test]
async fn one_tenant_stalling_bodies_cannot_lock_another_out() {
    let keys = json!({"tenants": [
        {"name": "attacker", "key_sha256": Keys::digest_hex("attacker-key-0123456789")},
        {"name": "honest", "key_sha256": Keys::digest_hex("honest-key-0123456789")},
    ]});
    let keys = Keys::parse(keys.to_string().as_bytes()).unwrap();
    // 1 + 3 + 64 reading places; a tenant holds a quarter, 17.
    let config = local()
        .keys(keys)
        .max_running(1)
        .max_queued(3)
        .body_timeout(Duration::from_secs(5));
    let server = start(config).await;
    let mut stalled = Vec::new();
    for _ in 0..17 {
        stalled.push(stalled_body(&server, "attacker-key-0123456789").await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let eval = |key: &str| {
        server
            .client
            .post(server.url("/v1/eval"))
            .bearer_auth(key)
            .body(json!({"code": "return 1"}).to_string())
    };
    // The attacker's next body is refused: it holds its share.
    let (status, _, body) = server.send(eval("attacker-key-0123456789")).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(kind(&body), "overloaded");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("17 request bodies at once"),
        "{body}"
    );
    // The honest tenant is served all along.
    for _ in 0..5 {
        let (status, _, body) = server.send(eval("honest-key-0123456789")).await;
        assert_eq!(
            (status, body["values"].clone()),
            (StatusCode::OK, json!([1]))
        );
    }
    drop(stalled);
    server.stop().await;
}

#[tokio::test]
async fn slow_bodies_are_charged_to_their_tenant_which_is_then_refused_unread() {
    use tokio::io::AsyncWriteExt;
    let server = start(local().keys(keys())).await;
    // tiny's 200 ms a minute would admit this eval, but its body takes
    // 400 ms to arrive, which the quota pays first.
    let body = json!({"code": "return 1"}).to_string();
    let mut stream = raw_post(
        server.addr,
        Some("tiny-key-0123456789"),
        body.len(),
        &body.as_bytes()[..5],
    )
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    stream.write_all(&body.as_bytes()[5..]).await.unwrap();
    let (answer, _) = read_to_close_or_answer(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(answer.contains("wall_ms_per_minute"), "{answer}");

    // In debt, its next request is refused at once, its body never read
    // (it never finishes sending it).
    let mut stream = stalled_body(&server, "tiny-key-0123456789").await;
    let (answer, took) = read_to_close_or_answer(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(answer.contains("quota_exceeded"), "{answer}");
    assert!(took < Duration::from_secs(5), "answered after {took:?}");
    // Another tenant is not affected.
    let (status, _, _) = server
        .send(
            server
                .client
                .post(server.url("/v1/eval"))
                .bearer_auth(ACME_KEY)
                .body(json!({"code": "return 1"}).to_string()),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    server.stop().await;
}

/// Reads until a whole answer of known length has arrived or the server
/// closes the connection (or 10 s pass).
async fn read_to_close_or_answer(stream: &mut tokio::net::TcpStream) -> (String, Duration) {
    let whole = |got: &[u8]| {
        let text = String::from_utf8_lossy(got);
        text.split_once("\r\n\r\n").is_some_and(|(head, body)| {
            head.lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .and_then(|n| n.trim().parse::<usize>().ok())
                .is_some_and(|n| body.len() >= n)
        })
    };
    let (got, took, _) = read_until(stream, whole).await;
    (got, took)
}

#[tokio::test]
async fn the_health_listener_answers_when_the_work_listener_is_full() {
    let config = local()
        .max_connections(1)
        .body_timeout(Duration::from_secs(5))
        .health_addr("127.0.0.1:0".parse().unwrap());
    let sandbox = sandbox(Limits::default()).await;
    let bound = Server::new(sandbox, config).unwrap().bind().await.unwrap();
    let (addr, health) = (
        bound.local_addr().unwrap(),
        bound.health_addr().unwrap().expect("a health listener"),
    );
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(bound.run_until(async move {
        let _ = stopped.await;
    }));
    // The one place for work is held by a request in progress.
    use tokio::io::AsyncWriteExt;
    let mut busy = tokio::net::TcpStream::connect(addr).await.unwrap();
    busy.write_all(b"POST /v1/eval HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let client = reqwest::Client::new();
    let full = client
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(full.status(), StatusCode::SERVICE_UNAVAILABLE);
    // The health listener answers, and serves nothing else.
    for path in ["/healthz", "/readyz"] {
        let answer = client
            .get(format!("http://{health}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "{path}");
    }
    let eval = client
        .post(format!("http://{health}/v1/eval"))
        .body(json!({"code": "return 1"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(eval.status(), StatusCode::NOT_FOUND);
    drop(busy);
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_request_head_past_64_kib_is_refused() {
    let server = start(local()).await;
    let big = "x".repeat(70 << 10);
    let answer = reqwest::Client::new()
        .post(server.url("/v1/eval"))
        .header("x-padding", big)
        .body(json!({"code": "return 1"}).to_string())
        .send()
        .await;
    // hyper answers 431 and closes; a client may see the close first.
    if let Ok(response) = answer {
        assert_eq!(response.status().as_u16(), 431);
    }
    let (status, _, _) = server.post("/v1/eval", json!({"code": "return 1"})).await;
    assert_eq!(status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn an_eval_takes_args_files_and_stdin_and_answers_the_files_it_wrote() {
    let server = start(local()).await;
    let code = "local n = 0 for line in io.lines('data/in.csv') do n = n + 1 end\n\
                local util = require('lib.util')\n\
                io.open('report.txt', 'w'):write(util.shout(arg[1]), ' ', n):close()\n\
                io.open('/tmp/raw.bin', 'wb'):write(io.open('bytes.bin', 'rb'):read('a')):close()\n\
                return select('#', ...), io.read('l'), (select(2, io.open('data/in.csv', 'w')))";
    let (status, body) = server
        .eval(json!({
            "code": code,
            "args": ["hello", "two"],
            "files": [
                {"name": "data/in.csv", "text": "a,1\nb,2\nc,3\n"},
                {"name": "lib/util.lua", "text": "return { shout = function(s) return s:upper() end }"},
                {"name": "bytes.bin", "base64": "AP8="}
            ],
            "stdin": "first\nsecond\n"
        }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["values"],
        json!([2, "first", "data/in.csv: Permission denied"]),
        "{body}"
    );
    assert_eq!(
        body["files"],
        json!([
            {"name": "report.txt", "size": 7, "text": "HELLO 3"},
            {"name": "tmp/raw.bin", "size": 2, "base64": "AP8="}
        ])
    );
    // stdin may be bytes too; a failed eval answers its files as well; an
    // eval that wrote none has no files field.
    let (_, body) = server
        .eval(json!({
            "code": "io.open('partial.txt', 'w'):write(io.read('a')):close() error('late')",
            "stdin": {"base64": "c28gZmFy"}
        }))
        .await;
    assert_eq!(body["ok"], false);
    assert_eq!(
        body["files"],
        json!([{"name": "partial.txt", "size": 6, "text": "so far"}])
    );
    let (_, body) = server.eval(json!({"code": "return arg"})).await;
    assert_eq!(body["values"], json!([null]));
    // arg[0] is the chunk name.
    let (_, body) = server
        .eval(json!({"code": "return arg[0], #arg", "args": [], "chunk_name": "tool.lua"}))
        .await;
    assert_eq!(body["values"], json!(["tool.lua", 0]));
    assert!(body.get("files").is_none(), "{body}");

    // In a session, mounted files stay for its later evals, and so do the
    // ones it wrote.
    let (_, _, opened) = server.post("/v1/sessions", Value::Null).await;
    let path = format!("/v1/sessions/{}/eval", opened["id"].as_str().unwrap());
    let (status, _, body) = server
        .post(
            &path,
            json!({"code": "io.open('b.txt', 'w'):write('b'):close()", "files": [{"name": "a.txt", "text": "a"}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["files"],
        json!([{"name": "b.txt", "size": 1, "text": "b"}])
    );
    let (_, _, body) = server
        .post(
            &path,
            json!({"code": "return io.open('a.txt'):read('a') .. io.open('b.txt'):read('a'), ...", "args": ["x"]}),
        )
        .await;
    assert_eq!(body["values"], json!(["ab", "x"]));
    server.stop().await;
}

#[tokio::test]
async fn args_files_and_stdin_are_checked_and_bounded_by_the_body() {
    let server = start(local().max_code_bytes(100).max_body_bytes(1000)).await;
    for (request, needle) in [
        (
            json!({"code": "", "args": "a b"}),
            "args must be an array of strings",
        ),
        (
            json!({"code": "", "args": [1]}),
            "args must be an array of strings",
        ),
        (
            json!({"code": "", "files": {"a": "x"}}),
            "files must be an array of",
        ),
        (
            json!({"code": "", "files": [{"name": "a", "text": "x", "mode": 1}]}),
            "unknown field `mode`",
        ),
        (
            json!({"code": "", "files": [{"name": "a"}]}),
            "files: 'a' needs either text or base64",
        ),
        (
            json!({"code": "", "files": [{"name": "a", "text": "x", "base64": "eA=="}]}),
            "files: 'a' needs either text or base64",
        ),
        (
            json!({"code": "", "files": [{"name": "a", "base64": "!"}]}),
            "files: the base64 of 'a' does not decode",
        ),
        (
            json!({"code": "", "files": [{"name": "a", "text": ""}, {"name": "a", "text": ""}]}),
            "files: 'a' is given twice",
        ),
        (json!({"code": "", "stdin": 1}), "stdin must be a string"),
        (
            json!({"code": "", "stdin": {"text": "x"}}),
            "stdin must be a string",
        ),
    ] {
        let (status, body) = server.eval(request.clone()).await;
        assert_eq!(
            (status, kind(&body)),
            (StatusCode::BAD_REQUEST, "bad_request"),
            "{request}: {body}"
        );
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{request}: {message}");
    }
    let many: Vec<Value> = (0..=Limits::MAX_FILES)
        .map(|i| json!({"name": format!("{i}"), "text": ""}))
        .collect();
    let server_many = start(local()).await;
    let (status, body) = server_many.eval(json!({"code": "", "files": many})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1025 files, more than 1024"),
        "{body}"
    );
    server_many.stop().await;
    // Files count against the body's bound like any part of it.
    let (status, body) = server
        .eval(json!({"code": "", "files": [{"name": "big", "text": "x".repeat(2000)}]}))
        .await;
    assert_eq!(
        (status, kind(&body)),
        (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large")
    );
    server.stop().await;
}

#[tokio::test]
async fn written_files_past_the_reply_bound_are_dropped_last_and_said() {
    let server = start(local().max_reply_bytes(64 << 10)).await;
    let (status, body) = server
        .eval(json!({"code": "io.open('big.txt', 'w'):write(string.rep('f', 100 * 1024)):close() print('kept') return 1"}))
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(kind(&body), "reply_too_large");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.ends_with("(the files it wrote were dropped too)"),
        "{message}"
    );
    let report = &body["report"];
    assert!(report.get("files").is_none(), "{report}");
    assert_eq!(report["output"], "kept\n");
    server.stop().await;
}
