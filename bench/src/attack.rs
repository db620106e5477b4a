//! The soak under attack: `moonbox serve` with the Kubernetes example's
//! flags (docs/serve.md) and two tenants. In each round an honest tenant
//! sends one small eval at a time and a probe asks `/healthz` on the health
//! port (`--health-addr`) on a new connection every second, as a kubelet
//! does, while an attacker runs one
//! attack (none in the first round). Each round has a fresh server, so its
//! peak RSS is the round's own.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::load::spawn_until;
use crate::stats::Summary;

/// The honest tenant's key and the attacker's.
const HONEST_KEY: &str = "honest-key-0123456789abcdef";
const ATTACKER_KEY: &str = "attacker-key-0123456789abcdef";

/// What the honest tenant runs.
pub(crate) const HONEST_SCRIPT: &str = "local t = {} for i = 1, 100 do t[i] = i * 2 end return #t";

/// How long the honest tenant waits for one answer, and the probe for
/// `/healthz` (a kubelet's default probe timeout is 1 s).
const HONEST_WAIT: Duration = Duration::from_secs(15);
const PROBE_WAIT: Duration = Duration::from_secs(1);

/// The attacks, in the order they run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Attack {
    None,
    /// 200 connections, each asking for an answer of 15 MB (of JSON, from
    /// a 2.5 MB string) and never reading it.
    UnreadAnswers,
    /// 150 connections, each sending all of a 1 MiB body (the example's
    /// bound) but its last byte.
    StalledBodies,
    /// 600 connections (past the 512 cap), each sending a byte of its
    /// headers every five seconds.
    SlowHeaders,
    /// 8 clients running a backtracking pattern, work inside one C call
    /// that only the timeout stops.
    Cpu,
    /// 64 clients sending small evals as fast as they are answered.
    Flood,
    /// The attacker's sessions (4, its bound), each holding 12 MB.
    Sessions,
    /// Every attack above at once.
    Everything,
}

impl Attack {
    pub(crate) const ALL: [Attack; 8] = [
        Attack::None,
        Attack::UnreadAnswers,
        Attack::StalledBodies,
        Attack::SlowHeaders,
        Attack::Cpu,
        Attack::Flood,
        Attack::Sessions,
        Attack::Everything,
    ];

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Attack::None => "none",
            Attack::UnreadAnswers => {
                "unread answers: 200 connections each ask for a 15 MB answer and never read"
            }
            Attack::StalledBodies => {
                "stalled bodies: 150 connections each send 1 MiB but its last byte"
            }
            Attack::SlowHeaders => {
                "slow headers: 600 connections (cap 512) each send 1 header byte per 5 s"
            }
            Attack::Cpu => "CPU: 8 clients run a backtracking pattern until the 5 s timeout",
            Attack::Flood => "flood: 64 clients send small evals back to back",
            Attack::Sessions => "sessions: the attacker's 4 sessions each hold 12 MB",
            Attack::Everything => "all of the above at once",
        }
    }
}

/// One round's figures.
pub(crate) struct Round {
    pub attack: Attack,
    /// The honest tenant's answers: ok of sent, and their latency.
    pub honest_ok: usize,
    pub honest_sent: usize,
    pub honest: Option<Summary>,
    /// The probe's answers: 200 within a second, of sent.
    pub health_ok: usize,
    pub health_sent: usize,
    /// The server's peak RSS over the round (VmHWM).
    pub rss_peak: u64,
}

/// Runs every attack for `secs` seconds each.
pub(crate) async fn run(moonbox: &Path, secs: u64) -> Result<Vec<Round>> {
    let dir = std::env::temp_dir().join(format!("moonbox-attack-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let keys = dir.join("keys.json");
    let digest = |key: &str| moonbox_serve::Keys::digest_hex(key);
    std::fs::write(
        &keys,
        serde_json::json!({"tenants": [
            {"name": "honest", "key_sha256": digest(HONEST_KEY)},
            {"name": "attacker", "key_sha256": digest(ATTACKER_KEY)},
        ]})
        .to_string(),
    )?;
    let mut rounds = Vec::new();
    for attack in Attack::ALL {
        crate::progress(&format!("attack: {}", attack.describe()));
        rounds.push(round(moonbox, &keys, attack, Duration::from_secs(secs)).await?);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(rounds)
}

async fn round(moonbox: &Path, keys: &Path, attack: Attack, length: Duration) -> Result<Round> {
    let mut command = Command::new(moonbox);
    command
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--health-addr",
            "127.0.0.1:0",
            "--keys",
        ])
        .arg(keys)
        .args(["--pooling", "--max-running", "2", "--max-queued", "64"])
        .args(["--max-memory-bytes", "16MiB", "--max-sessions", "16"])
        .args(["--max-sessions-per-tenant", "4", "--max-body-bytes", "1MiB"])
        .args(["--reply-memory", "128MiB"])
        .args(["--timeout", "5s", "--drain-timeout", "30s"]);
    let (served, log) = spawn_until(command, "listening on http://", "moonbox serve")?;
    let health: std::net::SocketAddr = log
        .split("health checks on http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .context("no health address in the server's log")?
        .parse()?;
    let addr: std::net::SocketAddr = log
        .split("listening on http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .context("no address in the server's log")?
        .parse()?;
    let pid = served.0.id();
    let stop = Arc::new(AtomicBool::new(false));
    let mut attackers = JoinSet::new();
    start_attack(&mut attackers, attack, addr, stop.clone());
    // The attack takes hold before the honest tenant starts.
    tokio::time::sleep(Duration::from_secs(2).min(length / 4)).await;
    let began = Instant::now();
    let honest = tokio::spawn(honest(addr, began, length));
    let probe = tokio::spawn(probe(health, began, length));
    let (times, honest_ok, honest_sent) = honest.await?;
    let (health_ok, health_sent) = probe.await?;
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
        health_ok,
        health_sent,
        rss_peak,
    })
}

/// What the honest client of a soak saw: its requests' latencies, how
/// many were answered well, and how many it sent.
pub(crate) type Honest = (Vec<Duration>, usize, usize);

/// Sends one request at a time with `one` (its number; whether it was
/// answered well) from `began` for `length`; after a failure, waits a
/// moment before the next, as a client would.
pub(crate) async fn one_at_a_time<F, Fut>(began: Instant, length: Duration, mut one: F) -> Honest
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = bool>,
{
    let (mut times, mut ok, mut sent) = (Vec::new(), 0, 0);
    while began.elapsed() < length {
        sent += 1;
        let at = Instant::now();
        let good = one(sent as u64).await;
        times.push(at.elapsed());
        ok += usize::from(good);
        if !good {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    (times, ok, sent)
}

/// Whether `answer` is a success whose body contains `needle`.
pub(crate) async fn answered(answer: reqwest::Result<reqwest::Response>, needle: &str) -> bool {
    match answer {
        Ok(response) if response.status().is_success() => {
            response.text().await.is_ok_and(|t| t.contains(needle))
        }
        _ => false,
    }
}

/// One small eval at a time, for `length`.
async fn honest(addr: std::net::SocketAddr, began: Instant, length: Duration) -> Honest {
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/v1/eval");
    let body = serde_json::json!({ "code": HONEST_SCRIPT }).to_string();
    one_at_a_time(began, length, |_| {
        let answer = client
            .post(&url)
            .bearer_auth(HONEST_KEY)
            .timeout(HONEST_WAIT)
            .body(body.clone())
            .send();
        async move { answered(answer.await, "\"ok\":true").await }
    })
    .await
}

/// `ok` of `sent` and its percentage, for a table.
pub(crate) fn share(ok: usize, sent: usize) -> String {
    #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    let p = if sent == 0 {
        0.0
    } else {
        ok as f64 * 100.0 / sent as f64
    };
    format!("{ok} / {sent} ({p:.1}%)")
}

/// `GET /healthz` on a new connection every second, for `length`.
async fn probe(addr: std::net::SocketAddr, began: Instant, length: Duration) -> (usize, usize) {
    let (mut ok, mut sent) = (0, 0);
    while began.elapsed() < length {
        let client = reqwest::Client::new();
        sent += 1;
        let answer = client
            .get(format!("http://{addr}/healthz"))
            .timeout(PROBE_WAIT)
            .send()
            .await;
        ok += usize::from(answer.is_ok_and(|r| r.status().is_success()));
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    (ok, sent)
}

fn start_attack(
    tasks: &mut JoinSet<()>,
    attack: Attack,
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
) {
    match attack {
        Attack::None => {}
        Attack::Everything => {
            for one in &Attack::ALL[1..Attack::ALL.len() - 1] {
                start_attack(tasks, *one, addr, stop.clone());
            }
        }
        Attack::UnreadAnswers => {
            // 2.5 MB of a control character is 15 MB of JSON (each byte
            // becomes `\u0001`), just under the reply bound.
            let body = serde_json::json!({"code": "return string.rep('\\1', 2500000)"}).to_string();
            let request = post(&body, body.len()).into_bytes();
            raw_clients(tasks, addr, 200, request, None, &stop);
        }
        Attack::StalledBodies => {
            let length = 1 << 20;
            let mut request = post("", length).into_bytes();
            request.extend(std::iter::repeat_n(b' ', length - 1));
            raw_clients(tasks, addr, 150, request, None, &stop);
        }
        Attack::SlowHeaders => {
            let opening = b"POST /v1/eval HTTP/1.1\r\n".to_vec();
            raw_clients(
                tasks,
                addr,
                600,
                opening,
                Some(Duration::from_secs(5)),
                &stop,
            );
        }
        Attack::Sessions => {
            tasks.spawn(async move {
                let client = reqwest::Client::new();
                for _ in 0..4 {
                    let opened = client
                        .post(format!("http://{addr}/v1/sessions"))
                        .bearer_auth(ATTACKER_KEY)
                        .send()
                        .await;
                    let Ok(opened) = opened else { continue };
                    let Ok(opened) = opened.bytes().await else {
                        continue;
                    };
                    let Ok(opened) = serde_json::from_slice::<serde_json::Value>(&opened) else {
                        continue;
                    };
                    let Some(id) = opened["id"].as_str() else {
                        continue;
                    };
                    let body =
                        serde_json::json!({"code": "keep = string.rep('x', 12000000) return #keep"});
                    let _ = client
                        .post(format!("http://{addr}/v1/sessions/{id}/eval"))
                        .bearer_auth(ATTACKER_KEY)
                        .body(body.to_string())
                        .send()
                        .await;
                }
                // The sessions stay open (and full) while the round lasts.
                std::future::pending::<()>().await;
            });
        }
        Attack::Cpu => {
            // Cubic backtracking inside one string.find.
            let code = "return string.find(string.rep('a', 3000), 'a*a*a*b')";
            evals(tasks, addr, 8, code, stop);
        }
        Attack::Flood => evals(tasks, addr, 64, HONEST_SCRIPT, stop),
    }
}

/// `count` connections that each send `opening`, then either a byte every
/// `trickle` or nothing, never reading, and open again whenever the server
/// lets one go.
pub(crate) fn raw_clients(
    tasks: &mut JoinSet<()>,
    addr: std::net::SocketAddr,
    count: usize,
    opening: Vec<u8>,
    trickle_every: Option<Duration>,
    stop: &Arc<AtomicBool>,
) {
    let opening = Arc::new(opening);
    for _ in 0..count {
        let (opening, stop) = (opening.clone(), stop.clone());
        tasks.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Ok(mut stream) = TcpStream::connect(addr).await else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                if stream.write_all(&opening).await.is_err() {
                    continue;
                }
                match trickle_every {
                    Some(every) => trickle(&mut stream, every).await,
                    None => hold(&stream).await,
                }
            }
        });
    }
}

/// `clients` attacker clients sending `code` back to back.
fn evals(
    tasks: &mut JoinSet<()>,
    addr: std::net::SocketAddr,
    clients: usize,
    code: &str,
    stop: Arc<AtomicBool>,
) {
    let body = serde_json::json!({ "code": code }).to_string();
    let client = reqwest::Client::new();
    for _ in 0..clients {
        let (client, body, stop) = (client.clone(), body.clone(), stop.clone());
        tasks.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let answer = client
                    .post(format!("http://{addr}/v1/eval"))
                    .bearer_auth(ATTACKER_KEY)
                    .timeout(Duration::from_secs(30))
                    .body(body.clone())
                    .send()
                    .await;
                match answer {
                    // Refused: as a hostile client would, at once again.
                    Ok(response) => drop(response.bytes().await),
                    Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                }
            }
        });
    }
}

/// A `POST /v1/eval` head with the attacker's key, and `body`.
fn post(body: &str, length: usize) -> String {
    format!(
        "POST /v1/eval HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {ATTACKER_KEY}\r\nContent-Length: {length}\r\n\r\n{body}"
    )
}

/// Holds a connection open without reading until the server closes it.
async fn hold(stream: &TcpStream) {
    // Readable means the server closed it (or sent something, which is
    // never read): check every second whether it has gone.
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let mut probe = [0u8; 1];
        match stream.try_read(&mut probe) {
            Ok(0) => return,
            Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => return,
            _ => {}
        }
    }
}

/// Sends a byte every `every` until the server closes the connection.
async fn trickle(stream: &mut TcpStream, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        if stream.write_all(b"a").await.is_err() {
            return;
        }
    }
}

/// The rounds as a Markdown table.
pub(crate) fn table(s: &mut String, rounds: &[Round]) {
    use crate::stats::{bytes, time};
    s.push_str(
        "\n| attack | honest evals ok | honest p50 | honest p99 | `/healthz` ok (1 s) | server peak RSS |\n\
         |---|---|---|---|---|---|\n",
    );
    for r in rounds {
        let (p50, p99) = r.honest.map_or(("-".to_owned(), "-".to_owned()), |h| {
            (time(h.median), time(h.p99))
        });
        #[allow(clippy::cast_precision_loss, reason = "a byte count far below 2^52")]
        let rss = bytes(r.rss_peak as f64);
        s.push_str(&format!(
            "| {} | {} | {p50} | {p99} | {} | {rss} |\n",
            r.attack.describe(),
            share(r.honest_ok, r.honest_sent),
            share(r.health_ok, r.health_sent),
        ));
    }
}
