//! The NATS load test: a `nats-server` on loopback, one `moonbox serve
//! --nats` worker, and concurrent clients sending evals two ways side by
//! side: through `RemoteSandbox` (a claim, then the request on the
//! worker's own subject) and as one request on `moonbox.eval`.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use moonbox_serve::{NatsConfig, RemoteSandbox};

use crate::load::{Killed, SCRIPT, spawn_until};
use crate::stats::Summary;

/// What the NATS load test saw.
pub(crate) struct NatsLoad {
    pub clients: usize,
    pub requests: usize,
    /// Through `RemoteSandbox` (claims), then one round trip on
    /// `moonbox.eval`.
    pub rows: [Side; 2],
}

/// One way of sending the load.
pub(crate) struct Side {
    pub latency: Summary,
    pub throughput: f64,
    /// Reports with `ok: true`, and anything else (an error, a refusal, no
    /// answer).
    pub ok: usize,
    pub failed: usize,
}

impl NatsLoad {
    /// Requests that failed or were not answered.
    pub(crate) fn lost(&self) -> usize {
        self.rows
            .iter()
            .map(|side| side.failed + self.requests.saturating_sub(side.ok + side.failed))
            .sum()
    }
}

/// The `nats-server` binary: `NATS_SERVER`, else the one on PATH, else
/// Debian's in /usr/sbin.
pub(crate) fn nats_server() -> PathBuf {
    if let Some(path) = std::env::var_os("NATS_SERVER") {
        return PathBuf::from(path);
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("nats-server"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| PathBuf::from("/usr/sbin/nats-server"))
}

/// Starts `nats-server` on a free loopback port; returns it and its URL.
fn start_nats() -> Result<(Killed, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let binary = nats_server();
    let child = Command::new(&binary)
        .args(["-a", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| {
            format!(
                "cannot start {} (apt install nats-server, or set NATS_SERVER)",
                binary.display()
            )
        })?;
    let server = Killed(child);
    let began = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if began.elapsed() > Duration::from_secs(10) {
            bail!("nats-server did not start listening within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((server, format!("nats://127.0.0.1:{port}")))
}

/// Starts a `moonbox serve --nats` worker with `--pooling`, one eval per
/// core and a queue for every client; returns once it has subscribed.
fn start_worker(moonbox: &Path, url: &str, clients: usize) -> Result<Killed> {
    let mut command = Command::new(moonbox);
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--nats", url, "--pooling"])
        .args(["--max-running", &crate::cores().to_string()])
        .args(["--max-queued", &clients.to_string(), "--queue-wait", "60s"]);
    let (worker, _) = spawn_until(command, "nats worker subscribed", "the NATS worker")?;
    Ok(worker)
}

/// Runs `requests` evals from `clients` concurrent tasks each way, each
/// way for at most `limit`.
pub(crate) async fn run(
    moonbox: &Path,
    clients: usize,
    requests: usize,
    limit: Duration,
) -> Result<NatsLoad> {
    let (_nats, url) = start_nats()?;
    let _worker = start_worker(moonbox, &url, clients)?;
    let client = NatsConfig::new(url.as_str())
        .connect()
        .await
        .context("cannot connect to the nats-server just started")?;
    let remote = RemoteSandbox::new(client.clone());
    let claimed = side(clients, requests, limit, move || {
        let remote = remote.clone();
        async move { remote.eval(SCRIPT).await.is_ok_and(|report| report.ok) }
    })
    .await?;
    let body = bytes::Bytes::from(serde_json::json!({ "code": SCRIPT }).to_string());
    let direct = side(clients, requests, limit, move || {
        let (client, body) = (client.clone(), body.clone());
        async move {
            client
                .request("moonbox.eval", body)
                .await
                .is_ok_and(|reply| {
                    serde_json::from_slice::<serde_json::Value>(&reply.payload)
                        .is_ok_and(|answer| answer["ok"] == true)
                })
        }
    })
    .await?;
    Ok(NatsLoad {
        clients,
        requests,
        rows: [claimed, direct],
    })
}

/// `requests` sends from `clients` tasks; `send` answers whether the eval
/// came back `ok`.
async fn side<F, Fut>(clients: usize, requests: usize, limit: Duration, send: F) -> Result<Side>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(clients);
    for _ in 0..clients {
        let (next, send) = (next.clone(), send.clone());
        tasks.push(tokio::spawn(async move {
            let (mut times, mut ok, mut failed) = (Vec::new(), 0usize, 0usize);
            while next.fetch_add(1, Ordering::Relaxed) < requests && started.elapsed() < limit {
                let sent = Instant::now();
                let answered = send().await;
                times.push(sent.elapsed());
                if answered {
                    ok += 1;
                } else {
                    failed += 1;
                }
            }
            (times, ok, failed)
        }));
    }
    let (mut times, mut ok, mut failed) = (Vec::new(), 0, 0);
    for task in tasks {
        let (t, o, f) = task.await?;
        times.extend(t);
        ok += o;
        failed += f;
    }
    let throughput = times.len() as f64 / started.elapsed().as_secs_f64();
    Ok(Side {
        latency: Summary::of(times).context("no request ran")?,
        throughput,
        ok,
        failed,
    })
}
