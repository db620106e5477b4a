//! The Rust crate's own figures for what `bench.mjs` times through the
//! addon, in one process, for comparing the two:
//! `cargo run --release -p moonbox-node --example crate_bench [SAMPLES]`.
//! Prints the medians in microseconds: a fresh eval of `return 1+1`, the
//! same on a reused session, and a round trip to a sync capability.

use std::time::Instant;

use moonbox::{Capability, CapabilityError, Sandbox};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let samples: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1000);
    let sandbox = Sandbox::builder()
        .capability(Capability::sync("count.next", |_: &(), (n,): (i64,)| {
            Ok::<_, CapabilityError>(n + 1)
        }))
        .build_async()
        .await?;
    for _ in 0..100 {
        sandbox.eval("return 1+1").await?;
    }
    let mut fresh = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t = Instant::now();
        sandbox.eval("return 1+1").await?;
        fresh.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let mut session = sandbox.session(()).await?;
    let mut reused = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t = Instant::now();
        session.eval("return 1+1").await?;
        reused.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let calls = "local n = 0 for i = 1, 1000 do n = count.next(n) end return n";
    let empty = "local n = 0 for i = 1, 1000 do n = n + 1 end return n";
    let mut round_trip = Vec::new();
    for _ in 0..(samples / 50).max(5) {
        let t = Instant::now();
        session.eval(calls).await?;
        let with_calls = t.elapsed().as_secs_f64();
        let t = Instant::now();
        session.eval(empty).await?;
        let without = t.elapsed().as_secs_f64();
        round_trip.push((with_calls - without) * 1e6 / 1000.0);
    }
    println!(
        "{{\"fresh_eval\": {:.1}, \"session_eval\": {:.1}, \"round_trip\": {:.2}}}",
        median(fresh),
        median(reused),
        median(round_trip)
    );
    Ok(())
}
