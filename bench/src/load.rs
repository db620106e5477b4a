//! The `moonbox serve` load test: concurrent HTTP clients on loopback
//! against the server process, bounded in requests and time, with the
//! same load on the library in this process side by side.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use moonbox::Sandbox;

use crate::stats::Summary;

/// The script every request runs: a little table work, as a tool call does.
pub(crate) const SCRIPT: &str = "local t = {} for i = 1, 100 do t[i] = i * 2 end return #t";

/// What the load test saw.
pub(crate) struct Load {
    pub clients: usize,
    pub requests: usize,
    /// The server on the default engine, and with `--pooling`.
    pub http: [Http; 2],
    /// The same evals through the library in this process, same
    /// concurrency and bound.
    pub library_latency: Summary,
    pub library_throughput: f64,
}

/// One server run.
pub(crate) struct Http {
    /// Every request's latency, client side.
    pub latency: Summary,
    pub throughput: f64,
    /// Answers by kind: 200 with `ok`, a refusal (429, 503), anything else
    /// (another status, a broken connection).
    pub ok: usize,
    pub refused: usize,
    pub failed: usize,
    /// The server's RSS after the first tenth of the load, and at the end.
    pub rss_warm: u64,
    pub rss_end: u64,
}

impl Load {
    /// Requests that failed or were never answered, over both servers.
    pub(crate) fn lost(&self) -> usize {
        self.http
            .iter()
            .map(|h| h.failed + self.requests.saturating_sub(h.ok + h.refused + h.failed))
            .sum()
    }
}

/// A child process, killed on drop.
pub(crate) struct Killed(pub(crate) Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `command` with its stderr piped, and reads its stderr until a
/// line holds `needle`; returns the child and the lines read, that one
/// last. The rest of the
/// log is read on a thread of its own, so that the pipe never fills.
pub(crate) fn spawn_until(
    mut command: Command,
    needle: &str,
    what: &str,
) -> Result<(Killed, String)> {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {what}"))?;
    let stderr = child.stderr.take().context("no stderr")?;
    let child = Killed(child);
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = String::new();
    let found = loop {
        let Some(line) = lines.next() else {
            bail!("{what} exited before its log said '{needle}'");
        };
        let line = line?;
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(needle) {
            break seen;
        }
    };
    std::thread::spawn(move || for _ in lines.by_ref() {});
    Ok((child, found))
}

/// Starts `moonbox serve` on a free loopback port; returns it and its
/// address.
fn start(moonbox: &std::path::Path, clients: usize, pooling: bool) -> Result<(Killed, String)> {
    let running = crate::cores().to_string();
    let queued = clients.to_string();
    let mut command = Command::new(moonbox);
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--max-running", &running])
        .args(["--max-queued", &queued, "--queue-wait", "60s"])
        .args(if pooling { &["--pooling"][..] } else { &[] });
    let (served, line) = spawn_until(command, "listening on http://", "moonbox serve")?;
    let addr = line
        .split("listening on http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_default()
        .to_owned();
    Ok((served, addr))
}

fn rss(pid: u32) -> u64 {
    crate::proc_kib(&format!("/proc/{pid}/status"), "VmRSS:").map_or(0, |kib| kib * 1024)
}

/// Runs `requests` evals over `clients` concurrent connections against
/// each server, then on the library, each for at most `limit`.
pub(crate) async fn run(
    moonbox: &std::path::Path,
    clients: usize,
    requests: usize,
    limit: Duration,
) -> Result<Load> {
    let http = [
        http(moonbox, clients, requests, limit, false).await?,
        http(moonbox, clients, requests, limit, true).await?,
    ];
    let (library_latency, library_throughput) = library(clients, requests).await?;
    Ok(Load {
        clients,
        requests,
        http,
        library_latency,
        library_throughput,
    })
}

async fn http(
    moonbox: &std::path::Path,
    clients: usize,
    requests: usize,
    limit: Duration,
    pooling: bool,
) -> Result<Http> {
    let (served, addr) = start(moonbox, clients, pooling)?;
    let pid = served.0.id();
    let url = format!("http://{addr}/v1/eval");
    let body = serde_json::json!({ "code": SCRIPT }).to_string();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .build()?;
    let next = Arc::new(AtomicUsize::new(0));
    let warm_at = requests / 10;
    let rss_warm = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(clients);
    for _ in 0..clients {
        let (client, url, body, next, rss_warm) = (
            client.clone(),
            url.clone(),
            body.clone(),
            next.clone(),
            rss_warm.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut seen = (Vec::new(), 0usize, 0usize, 0usize);
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= requests || started.elapsed() > limit {
                    break;
                }
                if n == warm_at {
                    rss_warm.store(rss(pid), Ordering::Relaxed);
                }
                let sent = Instant::now();
                let answer = client.post(&url).body(body.clone()).send().await;
                let status = match answer {
                    Ok(response) => {
                        let status = response.status();
                        let text = response.text().await.unwrap_or_default();
                        Some((status, text.contains("\"ok\":true")))
                    }
                    Err(_) => None,
                };
                seen.0.push(sent.elapsed());
                match status {
                    Some((s, true)) if s.is_success() => seen.1 += 1,
                    Some((s, _)) if s.as_u16() == 429 || s.as_u16() == 503 => seen.2 += 1,
                    _ => seen.3 += 1,
                }
            }
            seen
        }));
    }
    let (mut times, mut ok, mut refused, mut failed) = (Vec::new(), 0, 0, 0);
    for task in tasks {
        let (t, o, r, f) = task.await?;
        times.extend(t);
        ok += o;
        refused += r;
        failed += f;
    }
    let elapsed = started.elapsed();
    let rss_end = rss(pid);
    drop(served);
    let answered = times.len();
    let latency = Summary::of(times).context("no request ran")?;
    Ok(Http {
        latency,
        throughput: answered as f64 / elapsed.as_secs_f64(),
        ok,
        refused,
        failed,
        rss_warm: rss_warm.load(Ordering::Relaxed),
        rss_end,
    })
}

/// The same evals on the library in this process, `clients` tasks at a
/// time, with the server's bound on evals running at once.
async fn library(clients: usize, requests: usize) -> Result<(Summary, f64)> {
    let sandbox = Sandbox::builder().build_async().await?;
    let running = Arc::new(tokio::sync::Semaphore::new(crate::cores()));
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(clients);
    for _ in 0..clients {
        let (sandbox, running, next) = (sandbox.clone(), running.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < requests {
                let sent = Instant::now();
                let _turn = running.acquire().await?;
                sandbox.eval(SCRIPT).await?;
                times.push(sent.elapsed());
            }
            anyhow::Ok(times)
        }));
    }
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await??);
    }
    let throughput = times.len() as f64 / started.elapsed().as_secs_f64();
    Ok((Summary::of(times).context("no eval ran")?, throughput))
}
