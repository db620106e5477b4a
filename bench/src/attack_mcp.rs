//! The soak under attack for `moonbox mcp --http`, with the flags of
//! docs/mcp.md's sizing example but the default reply bound (16 MiB), so
//! that the unread answers are as large as in `moonbox serve`'s soak. In each round an
//! honest client, on its own MCP connection, sends one small `run_lua` call
//! at a time while an attacker, on another, runs one attack (none in the
//! first round). Each round has a fresh server, so its peak RSS is the
//! round's own.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio::task::JoinSet;

use crate::attack::{HONEST_SCRIPT, Honest, answered, one_at_a_time, raw_clients, share};
use crate::load::spawn_until;
use crate::stats::Summary;

/// How long the honest client waits for one answer.
const HONEST_WAIT: Duration = Duration::from_secs(15);

/// The flags the server runs with.
const FLAGS: [&str; 12] = [
    "--max-sessions",
    "4",
    "--max-memory-bytes",
    "16MiB",
    "--max-script-bytes",
    "1MiB",
    "--reply-memory",
    "128MiB",
    "--timeout",
    "5s",
    "--max-http-connections",
    "512",
];

/// The attacks, in the order they run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Attack {
    None,
    /// 200 connections, each calling for an answer of 15 MB (of JSON, from
    /// a 2.5 MB string) and never reading it.
    UnreadAnswers,
    /// 150 connections, each sending all of a 3 MiB body (the message
    /// bound) but its last byte.
    StalledBodies,
    /// 600 connections (past the 512 cap), each sending a byte of its
    /// headers every five seconds.
    SlowHeaders,
    /// 64 clients sending small calls as fast as they are answered.
    Flood,
    /// Every attack above at once.
    Everything,
}

impl Attack {
    const ALL: [Attack; 6] = [
        Attack::None,
        Attack::UnreadAnswers,
        Attack::StalledBodies,
        Attack::SlowHeaders,
        Attack::Flood,
        Attack::Everything,
    ];

    fn describe(self) -> &'static str {
        match self {
            Attack::None => "none",
            Attack::UnreadAnswers => {
                "unread answers: 200 connections each call for a 15 MB answer and never read"
            }
            Attack::StalledBodies => {
                "stalled bodies: 150 connections each send 3 MiB but its last byte"
            }
            Attack::SlowHeaders => {
                "slow headers: 600 connections each send a header byte every 5 s"
            }
            Attack::Flood => "flood: 64 clients send small calls back to back",
            Attack::Everything => "all of the above at once",
        }
    }
}

/// One round's figures.
pub(crate) struct Round {
    attack: Attack,
    /// The honest client's answers: ok of sent, and their latency.
    honest_ok: usize,
    honest_sent: usize,
    honest: Option<Summary>,
    /// The server's peak RSS over the round (VmHWM).
    rss_peak: u64,
}

/// Runs every attack for `secs` seconds each.
pub(crate) async fn run(moonbox: &Path, secs: u64) -> Result<Vec<Round>> {
    let mut rounds = Vec::new();
    for attack in Attack::ALL {
        crate::progress(&format!("mcp attack: {}", attack.describe()));
        rounds.push(round(moonbox, attack, Duration::from_secs(secs)).await?);
    }
    Ok(rounds)
}

/// The flags, for the report.
pub(crate) fn flags() -> String {
    FLAGS.join(" ")
}

async fn round(moonbox: &Path, attack: Attack, length: Duration) -> Result<Round> {
    let mut command = Command::new(moonbox);
    command.args(["mcp", "--http", "127.0.0.1:0"]).args(FLAGS);
    let (served, log) = spawn_until(command, "serving streamable HTTP at", "moonbox mcp")?;
    let addr: std::net::SocketAddr = log
        .split("serving streamable HTTP at http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .context("no address in the server's log")?
        .parse()?;
    let pid = served.0.id();
    let stop = Arc::new(AtomicBool::new(false));
    let mut attackers = JoinSet::new();
    let client = reqwest::Client::new();
    let attacker = connect(&client, addr).await?;
    start_attack(&mut attackers, attack, addr, &attacker, &stop);
    // The attack takes hold before the honest client starts.
    tokio::time::sleep(Duration::from_secs(2).min(length / 4)).await;
    let began = Instant::now();
    let (times, honest_ok, honest_sent) = honest(addr, began, length).await;
    let rss_peak =
        crate::proc_kib(&format!("/proc/{pid}/status"), "VmHWM:").map_or(0, |kib| kib * 1024);
    stop.store(true, Ordering::Relaxed);
    attackers.abort_all();
    while attackers.join_next().await.is_some() {}
    drop(served);
    Ok(Round {
        attack,
        honest_ok,
        honest_sent,
        honest: Summary::of(times),
        rss_peak,
    })
}

/// A `POST /mcp` of `body` on the MCP connection `session`.
fn post(
    client: &reqwest::Client,
    addr: std::net::SocketAddr,
    session: Option<&str>,
    body: String,
) -> reqwest::RequestBuilder {
    let request = client
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    match session {
        Some(id) => request.header("mcp-session-id", id),
        None => request,
    }
}

/// Opens an MCP connection (initialize, then initialized); its id.
async fn connect(client: &reqwest::Client, addr: std::net::SocketAddr) -> Result<String> {
    let init = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}
    });
    let answer = post(client, addr, None, init.to_string()).send().await?;
    let id = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .context("no Mcp-Session-Id in the answer to initialize")?
        .to_owned();
    answer.bytes().await?;
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(client, addr, Some(&id), initialized.to_string())
        .send()
        .await?;
    Ok(id)
}

/// A `tools/call` of `run_lua` with `code`, as JSON-RPC request `n`.
fn call(n: u64, code: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                       "params": {"name": "run_lua", "arguments": {"code": code}}})
    .to_string()
}

/// One small call at a time, for `length`, on its own MCP connection; an
/// attempt to open the connection that fails counts as a failed call.
async fn honest(addr: std::net::SocketAddr, began: Instant, length: Duration) -> Honest {
    let client = reqwest::Client::new();
    let session = tokio::sync::Mutex::new(None::<String>);
    one_at_a_time(began, length, |n| {
        let (client, session) = (&client, &session);
        async move {
            let mut session = session.lock().await;
            let id = match session.as_ref() {
                Some(id) => id.clone(),
                None => match connect(client, addr).await {
                    Ok(id) => session.insert(id).clone(),
                    Err(_) => return false,
                },
            };
            let answer = post(client, addr, Some(&id), call(n, HONEST_SCRIPT))
                .timeout(HONEST_WAIT)
                .send()
                .await;
            answered(answer, "\"isError\":false").await
        }
    })
    .await
}

fn start_attack(
    tasks: &mut JoinSet<()>,
    attack: Attack,
    addr: std::net::SocketAddr,
    session: &str,
    stop: &Arc<AtomicBool>,
) {
    let head = |length: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
             Content-Length: {length}\r\n\r\n"
        )
    };
    match attack {
        Attack::None => {}
        Attack::Everything => {
            for one in &Attack::ALL[1..Attack::ALL.len() - 1] {
                start_attack(tasks, *one, addr, session, stop);
            }
        }
        Attack::UnreadAnswers => {
            // 2.5 MB of a control character is 15 MB of JSON. Each
            // connection's call has an id of its own (the server refuses
            // an id in flight), so the request is made per connection.
            for n in 0..200u64 {
                let body = call(1_000_000 + n, "return string.rep('\\1', 2500000)");
                let request = format!("{}{body}", head(body.len())).into_bytes();
                raw_clients(tasks, addr, 1, request, None, stop);
            }
        }
        Attack::StalledBodies => {
            let length = 3 << 20;
            let mut request = head(length).into_bytes();
            request.extend(std::iter::repeat_n(b' ', length - 1));
            raw_clients(tasks, addr, 150, request, None, stop);
        }
        Attack::SlowHeaders => {
            let opening = b"POST /mcp HTTP/1.1\r\n".to_vec();
            raw_clients(
                tasks,
                addr,
                600,
                opening,
                Some(Duration::from_secs(5)),
                stop,
            );
        }
        Attack::Flood => {
            let client = reqwest::Client::new();
            for c in 0..64u64 {
                let (client, stop, session) = (client.clone(), stop.clone(), session.to_owned());
                tasks.spawn(async move {
                    let mut n = 2_000_000 + c * 1_000_000;
                    while !stop.load(Ordering::Relaxed) {
                        n += 1;
                        let answer = post(&client, addr, Some(&session), call(n, HONEST_SCRIPT))
                            .timeout(Duration::from_secs(30))
                            .send()
                            .await;
                        match answer {
                            Ok(response) => drop(response.bytes().await),
                            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                        }
                    }
                });
            }
        }
    }
}

/// The rounds as a Markdown table.
pub(crate) fn table(s: &mut String, rounds: &[Round]) {
    use crate::stats::{bytes, time};
    s.push_str(
        "\n| attack | honest calls ok | honest p50 | honest p99 | server peak RSS |\n\
         |---|---|---|---|---|\n",
    );
    for r in rounds {
        let (p50, p99) = r.honest.map_or(("-".to_owned(), "-".to_owned()), |h| {
            (time(h.median), time(h.p99))
        });
        #[allow(clippy::cast_precision_loss, reason = "a byte count far below 2^52")]
        let rss = bytes(r.rss_peak as f64);
        s.push_str(&format!(
            "| {} | {} | {p50} | {p99} | {rss} |\n",
            r.attack.describe(),
            share(r.honest_ok, r.honest_sent),
        ));
    }
}
