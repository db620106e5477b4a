//! `moonbox bench`: cold start and round-trip figures, each taken side by
//! side with its comparison in the same run, printed as a Markdown table.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use moonbox::{Records, Sandbox};

/// Median, 99th percentile and sample count of a set of durations.
struct Summary {
    median: Duration,
    p99: Duration,
    samples: usize,
}

fn summarize(mut samples: Vec<Duration>) -> Summary {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    Summary {
        median: at(0.5),
        p99: at(0.99),
        samples: samples.len(),
    }
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

/// Times `n` runs of a command that must exit 0.
fn spawn_samples(n: usize, program: &str, args: &[&str], stdin: &[u8]) -> Result<Vec<Duration>> {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {program}"))?;
        if let Some(mut pipe) = child.stdin.take() {
            std::io::Write::write_all(&mut pipe, stdin)?;
        }
        let status = child.wait()?;
        samples.push(started.elapsed());
        anyhow::ensure!(status.success(), "{program} {args:?} failed: {status}");
    }
    Ok(samples)
}

pub(crate) async fn run(samples: usize, pooling: bool) -> Result<()> {
    let samples = samples.max(10);
    let records = Records::from_json(r#"{"123": {"name": "Ada", "visits": [1, 2]}}"#)?;
    let sandbox = Sandbox::builder()
        .capability(records.capability())
        .pooling_allocator(pooling)
        .build()?;

    // Warm up the allocator and caches.
    for _ in 0..100 {
        sandbox.eval("return 1+1").await?;
    }
    let mut fresh = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        let out = sandbox.eval("return 1+1").await?;
        fresh.push(started.elapsed());
        anyhow::ensure!(
            out.values == [serde_json::json!(2)],
            "wrong result {:?}",
            out.values
        );
    }
    let mut session = sandbox.session(()).await?;
    let mut reused = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        session.eval("return 1+1").await?;
        reused.push(started.elapsed());
    }

    // Capability round trip: a loop of calls, minus the same loop without them.
    let calls = 10_000;
    let with_calls = format!("for i = 1, {calls} do local r = records.get('123') end");
    let without = format!("for i = 1, {calls} do local r = nil end");
    let mut per_call = Vec::new();
    for _ in 0..20 {
        let a = Instant::now();
        session.eval(&with_calls).await?;
        let a = a.elapsed();
        let b = Instant::now();
        session.eval(&without).await?;
        let b = b.elapsed();
        per_call.push(a.saturating_sub(b) / calls);
    }

    let exe = std::env::current_exe()?;
    let exe = exe.to_string_lossy();
    let spawn_n = (samples / 100).clamp(10, 50);
    let first_eval = spawn_samples(spawn_n, &exe, &["run", "-"], b"return 1+1")?;
    let native = spawn_samples(spawn_n, "lua5.4", &["-e", "return 1+1"], b"").ok();

    let fresh = summarize(fresh);
    let reused = summarize(reused);
    let per_call = summarize(per_call);
    let first_eval = summarize(first_eval);
    println!("| what | median | p99 | samples | vs fresh eval |");
    println!("|---|---|---|---|---|");
    let ratio = |s: &Summary| s.median.as_secs_f64() / fresh.median.as_secs_f64();
    for (name, s) in [
        ("`sandbox.eval(\"return 1+1\")`, fresh instance", &fresh),
        ("`session.eval(\"return 1+1\")`, reused session", &reused),
        ("`records.get` round trip, per call", &per_call),
        (
            "`moonbox run -` process, first eval (cached component)",
            &first_eval,
        ),
    ] {
        println!(
            "| {name} | {} | {} | {} | {:.2}x |",
            fmt(s.median),
            fmt(s.p99),
            s.samples,
            ratio(s)
        );
    }
    match native {
        Some(native) => {
            let native = summarize(native);
            println!(
                "| `lua5.4 -e \"return 1+1\"` process spawn | {} | {} | {} | {:.2}x |",
                fmt(native.median),
                fmt(native.p99),
                native.samples,
                ratio(&native)
            );
        }
        None => println!("| `lua5.4 -e` process spawn | not run: lua5.4 is not installed | | | |"),
    }
    Ok(())
}
