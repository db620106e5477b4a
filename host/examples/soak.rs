//! A soak: many mixed evals (benign and hostile) on one `Sandbox`, at full
//! concurrency. Each worker evaluates in a session, as an agent conversation
//! would, and starts a fresh one every 500 evals (and whenever the host stops
//! one), so instances are created and dropped throughout. It checks every
//! outcome against its expected kind and that the process's resident memory
//! does not grow after warm-up.
//!
//! Run: `just soak` (or `cargo run --release -p moonbox --example soak -- 1000000`)
//!
//! Exits non-zero if any result is unexpected or RSS grows by 5% or more
//! between the end of warm-up and the end of the run.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use moonbox::{ErrorKind, Limits, Records, Sandbox};

/// Each case: a script and the kind it must end with (`None`: success).
const CASES: &[(&str, Option<ErrorKind>)] = &[
    ("return 1 + 1", None),
    (
        "local t = {} for i = 1, 200 do t[i] = i * i end return #t",
        None,
    ),
    (
        "local s = {} for w in ('a b c d'):gmatch('%a') do s[#s + 1] = w:upper() end return table.concat(s)",
        None,
    ),
    (
        "local r = records.get('123') print(r.name) return #r.visits",
        None,
    ),
    (
        "local co = coroutine.wrap(function() coroutine.yield(1) return 2 end) return co() + co()",
        None,
    ),
    (
        "return string.format('%5.2f', math.pi), utf8.char(8364)",
        None,
    ),
    ("error('boom')", Some(ErrorKind::Runtime)),
    ("return nope.x", Some(ErrorKind::Runtime)),
    ("os.execute('ls')", Some(ErrorKind::Sandboxed)),
    ("return records.get(1)", Some(ErrorKind::Capability)),
    ("while true do end", Some(ErrorKind::InstructionLimit)),
    (
        "pcall(function() while true do end end) return 1",
        Some(ErrorKind::InstructionLimit),
    ),
    (
        "local function f() return 1 + f() end return f()",
        Some(ErrorKind::CallDepth),
    ),
    (
        "local s = 'x' while true do s = s .. s end",
        Some(ErrorKind::StringSize),
    ),
    (
        "local t = {} while true do t[#t + 1] = ('x'):rep(512) .. #t end",
        Some(ErrorKind::MemoryLimit),
    ),
    (
        "while true do print('flood') end",
        Some(ErrorKind::OutputLimit),
    ),
    (
        "local T = {} T.__index = T return T",
        Some(ErrorKind::InvalidValue),
    ),
    ("return (", Some(ErrorKind::Syntax)),
];

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let total: u64 = std::env::args()
        .nth(1)
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let warmup = (total / 10).max(1);
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        * 4;
    let records = Records::from_json(r#"{"123": {"name": "Ada", "visits": [1, 2]}}"#)?;
    let limits = Limits {
        max_instructions: 20_000,
        max_memory_bytes: 1 << 20,
        max_string_bytes: 64 << 10,
        max_output_bytes: 1 << 10,
        timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    let sandbox = Sandbox::builder()
        .limits(limits)
        .capability(records.capability())
        .build()?;

    let next = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let unexpected = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut rss_after_warmup = 0;
    let mut handles = Vec::new();
    for _ in 0..workers {
        let (sandbox, next, done, unexpected) = (
            sandbox.clone(),
            next.clone(),
            done.clone(),
            unexpected.clone(),
        );
        handles.push(tokio::spawn(async move {
            let mut session = None;
            let mut used = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                if session.is_none() || used >= 500 {
                    session = match sandbox.session(()).await {
                        Ok(s) => Some(s),
                        Err(e) => {
                            eprintln!("cannot start a session: {e}");
                            unexpected.fetch_add(1, Ordering::Relaxed);
                            None
                        }
                    };
                    used = 0;
                }
                let Some(s) = session.as_mut() else { continue };
                used += 1;
                let (code, expected) = CASES[(i % CASES.len() as u64) as usize];
                let kind = s.eval(code).await.err().map(|e| e.kind);
                if s.is_poisoned() {
                    session = None;
                }
                if kind != expected && unexpected.fetch_add(1, Ordering::Relaxed) < 10 {
                    eprintln!("unexpected: {code:?} ended with {kind:?}, expected {expected:?}");
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let mut last_report = Instant::now();
    while done.load(Ordering::Relaxed) < total {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let n = done.load(Ordering::Relaxed);
        if rss_after_warmup == 0 && n >= warmup {
            rss_after_warmup = rss_kib();
            println!("warm-up done after {n} evals: RSS {rss_after_warmup} KiB");
        }
        if last_report.elapsed() > Duration::from_secs(30) {
            println!(
                "{n} evals, RSS {} KiB, {:.0} evals/s",
                rss_kib(),
                n as f64 / started.elapsed().as_secs_f64()
            );
            last_report = Instant::now();
        }
    }
    for h in handles {
        h.await?;
    }
    let elapsed = started.elapsed();
    let rss_end = rss_kib();
    let growth = if rss_after_warmup == 0 {
        0.0
    } else {
        (rss_end as f64 / rss_after_warmup as f64 - 1.0) * 100.0
    };
    let bad = unexpected.load(Ordering::Relaxed);
    println!(
        "soak: {total} evals ({} cases, {workers} concurrent) in {:.1} s, {:.0} evals/s; RSS {rss_after_warmup} KiB after warm-up, {rss_end} KiB at the end ({growth:+.2}%); {bad} unexpected results",
        CASES.len(),
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    if bad > 0 || growth >= 5.0 {
        return Err(
            format!("soak failed: {bad} unexpected results, RSS growth {growth:.2}%").into(),
        );
    }
    Ok(())
}
