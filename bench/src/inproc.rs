//! Figures taken inside this process: a fresh instance per eval, a reused
//! session, the capability round trip, throughput and idle-session density.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use moonbox::{Capability, CapabilityError, Engine, Records, Sandbox};

use super::stats::Summary;

/// Records in the page that `records.get('page')` returns.
pub(crate) const PAGE_RECORDS: usize = 50;

/// `records.get`'s records: `123`, a small table, and `page`, a list of
/// [`PAGE_RECORDS`] records with a string, numbers, a boolean, a list and a
/// null each (about 5 KB of JSON).
fn records() -> Records {
    let page: Vec<serde_json::Value> = (0..PAGE_RECORDS)
        .map(|i| {
            serde_json::json!({
                "id": i, "name": format!("user {i}"), "tags": ["a", "b"],
                "score": i as f64 * 1.5, "active": i % 2 == 0, "note": null,
            })
        })
        .collect();
    let mut records = serde_json::Map::new();
    records.insert(
        "123".to_owned(),
        serde_json::json!({"name": "Ada", "visits": [1, 2]}),
    );
    records.insert("page".to_owned(), serde_json::Value::from(page));
    Records::new(records)
}

/// The sandbox every in-process figure uses: default limits and
/// `records.get`, on the shared engine or on its own pooling engine.
pub(crate) fn sandbox(pooling: bool) -> Result<Sandbox> {
    let records = records();
    let engine = if pooling {
        Engine::builder().pooling_allocator(true).build()?
    } else {
        Engine::shared()?
    };
    Ok(Sandbox::builder()
        .engine(&engine)
        .capability(records.capability())
        .build()?)
}

/// `sandbox.eval("return 1+1")`, each in a new instance, after a warm-up.
pub(crate) async fn fresh_evals(sandbox: &Sandbox, samples: usize) -> Result<Summary> {
    for _ in 0..100.min(samples) {
        sandbox.eval("return 1+1").await?;
    }
    Summary::time_each(samples, async || {
        let out = sandbox.eval("return 1+1").await?;
        ensure!(
            out.values == [serde_json::json!(2)],
            "wrong result {:?}",
            out.values
        );
        Ok(())
    })
    .await
}

/// One fresh eval taken apart: a new session's two start steps (see
/// `Session::start_times`), its first eval (compile, run, result) and
/// dropping it, each summarised over `samples` fresh sessions.
pub(crate) async fn fresh_breakdown(
    sandbox: &Sandbox,
    samples: usize,
) -> Result<Vec<(&'static str, Summary)>> {
    let mut steps: [Vec<Duration>; 5] = Default::default();
    for i in 0..samples + 100.min(samples) {
        let started = Instant::now();
        let mut session = sandbox.session(()).await?;
        let whole_start = started.elapsed();
        let eval_started = Instant::now();
        let out = session.eval("return 1+1").await?;
        let eval = eval_started.elapsed();
        ensure!(out.values == [serde_json::json!(2)], "wrong result");
        let times = session.start_times();
        let drop_started = Instant::now();
        drop(session);
        let dropped = drop_started.elapsed();
        if i < 100.min(samples) {
            continue; // warm-up
        }
        let instantiate_and_create = times.instantiate + times.create;
        steps[0].push(times.instantiate);
        steps[1].push(times.create);
        steps[2].push(whole_start.saturating_sub(instantiate_and_create));
        steps[3].push(eval);
        steps[4].push(dropped);
    }
    let labels = [
        "new store and instance",
        "guest `session.create`",
        "rest of session start (store set-up, limits)",
        "first eval: compile, run, result",
        "drop the session and instance",
    ];
    labels
        .into_iter()
        .zip(steps)
        .map(|(label, times)| Ok((label, Summary::of(times).context("no samples")?)))
        .collect()
}

/// `session.eval("return 1+1")` on one session.
pub(crate) async fn session_evals(sandbox: &Sandbox, samples: usize) -> Result<Summary> {
    let mut session = sandbox.session(()).await?;
    Summary::time_each(samples, async || {
        session.eval("return 1+1").await?;
        Ok(())
    })
    .await
}

/// One `records.get` call from Lua to the host and back: a loop of calls
/// minus the same loop without them, per call, repeated `reps` times.
async fn capability_round_trip(sandbox: &Sandbox, reps: usize) -> Result<Summary> {
    round_trip(
        sandbox,
        reps,
        10_000,
        "local r = records.get('123')",
        "local r = nil",
    )
    .await
}

/// One `records.get('page')` call, a reply of [`PAGE_RECORDS`] records,
/// timed as [`capability_round_trip`] times a small one (in loops of 1,000).
async fn page_round_trip(sandbox: &Sandbox, reps: usize) -> Result<Summary> {
    round_trip(
        sandbox,
        reps,
        1_000,
        "local r = records.get('page')",
        "local r = nil",
    )
    .await
}

/// One call of a synchronous capability that takes and returns an integer
/// (`count.next(n)`, returning `n + 1`), timed as
/// [`capability_round_trip`] times `records.get`.
pub(crate) async fn scalar_round_trip(reps: usize) -> Result<Summary> {
    let next = Capability::sync("count.next", |_, (n,): (i64,)| {
        Ok::<_, CapabilityError>(n.wrapping_add(1))
    });
    let sandbox = Sandbox::builder().capability(next).build()?;
    round_trip(&sandbox, reps, 10_000, "n = count.next(n)", "n = n + 1").await
}

/// The three round trips of the report, in its row order: a scalar
/// capability, `records.get` on `sandbox`, and a page of records, each
/// timed `reps` times.
pub(crate) async fn round_trips(sandbox: &Sandbox, reps: usize) -> Result<[Summary; 3]> {
    Ok([
        scalar_round_trip(reps).await?,
        capability_round_trip(sandbox, reps).await?,
        page_round_trip(sandbox, reps).await?,
    ])
}

/// Per call: a loop of `calls` `call`s minus the same loop of `instead`s,
/// `reps` times in one session.
async fn round_trip(
    sandbox: &Sandbox,
    reps: usize,
    calls: u32,
    call: &str,
    instead: &str,
) -> Result<Summary> {
    let with_calls = format!("local n = 0 for i = 1, {calls} do {call} end");
    let without = format!("local n = 0 for i = 1, {calls} do {instead} end");
    let mut session = sandbox.session(()).await?;
    let mut per_call = Vec::with_capacity(reps);
    for _ in 0..reps {
        let a = Instant::now();
        let out = session.eval(&with_calls).await?;
        let a = a.elapsed();
        ensure!(
            out.stats.capability_calls == calls,
            "the loop did not call the capability"
        );
        let b = Instant::now();
        session.eval(&without).await?;
        per_call.push(a.saturating_sub(b.elapsed()) / calls);
    }
    Summary::of(per_call).context("no samples")
}

/// How long the fan-out's capability waits, as a slow API would.
pub(crate) const FAN_OUT_WAIT: Duration = Duration::from_millis(50);
/// Calls in one fan-out.
pub(crate) const FAN_OUT_CALLS: u32 = 20;

/// [`FAN_OUT_CALLS`] calls to an async capability that waits
/// [`FAN_OUT_WAIT`]: one after another in a loop, through `parallel` with
/// the default bound on calls in flight, and through `parallel` with room
/// for every call, alternating, `reps` times each. Returns the three
/// summaries in that order.
pub(crate) async fn fan_out(reps: usize) -> Result<[Summary; 3]> {
    let wait = Capability::new_async("api.wait", |_, (n,): (i64,)| async move {
        tokio::time::sleep(FAN_OUT_WAIT).await;
        Ok::<_, CapabilityError>(n)
    });
    let sandbox = Sandbox::builder().capability(wait.clone()).build()?;
    let roomy = Sandbox::builder()
        .limits(moonbox::Limits {
            max_calls_in_flight: FAN_OUT_CALLS,
            ..moonbox::Limits::default()
        })
        .capability(wait)
        .build()?;
    let mut session = sandbox.session(()).await?;
    let mut roomy = roomy.session(()).await?;
    let sequential =
        format!("local r = {{}} for i = 1, {FAN_OUT_CALLS} do r[i] = api.wait(i) end return #r");
    let parallel = format!(
        "local items = {{}} for i = 1, {FAN_OUT_CALLS} do items[i] = i end \
         return #parallel(items, api.wait)"
    );
    let mut times: [Vec<Duration>; 3] = Default::default();
    for _ in 0..reps {
        for (i, code) in [&sequential, &parallel, &parallel].into_iter().enumerate() {
            let session = if i == 2 { &mut roomy } else { &mut session };
            let started = Instant::now();
            let out = session.eval(code).await?;
            times[i].push(started.elapsed());
            ensure!(
                out.values == [serde_json::json!(FAN_OUT_CALLS)]
                    && out.stats.capability_calls == FAN_OUT_CALLS,
                "the fan-out did not make its {FAN_OUT_CALLS} calls: {:?}",
                out.values
            );
        }
    }
    let [a, b, c] = times.map(Summary::of);
    Ok([
        a.context("no samples")?,
        b.context("no samples")?,
        c.context("no samples")?,
    ])
}

/// Evals per second with one task per core for `duration`: fresh instances
/// when `fresh`, else one reused session per task.
pub(crate) async fn throughput(sandbox: &Sandbox, fresh: bool, duration: Duration) -> Result<f64> {
    let workers = super::cores();
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(workers);
    for _ in 0..workers {
        let sandbox = sandbox.clone();
        tasks.push(tokio::spawn(async move {
            let mut session = if fresh {
                None
            } else {
                Some(sandbox.session(()).await?)
            };
            let mut done = 0u64;
            while started.elapsed() < duration {
                match &mut session {
                    Some(session) => session.eval("return 1+1").await?,
                    None => sandbox.eval("return 1+1").await?,
                };
                done += 1;
            }
            anyhow::Ok(done)
        }));
    }
    let mut total = 0;
    for task in tasks {
        total += task.await??;
    }
    Ok(total as f64 / started.elapsed().as_secs_f64())
}

/// Resident memory of this process, in bytes, from /proc.
fn rss_bytes() -> Result<u64> {
    super::proc_kib("/proc/self/status", "VmRSS:")
        .map(|kib| kib * 1024)
        .context("no VmRSS in /proc/self/status")
}

/// Proportional set size of this process, in bytes: resident pages, with
/// a page mapped N times counted 1/N each time. Every instance maps the
/// guest's snapshot copy-on-write, and RSS counts a shared snapshot page
/// once per mapping; PSS counts it once.
fn pss_bytes() -> Result<u64> {
    super::proc_kib("/proc/self/smaps_rollup", "Pss:")
        .map(|kib| kib * 1024)
        .context("no Pss in /proc/self/smaps_rollup")
}

/// Memory per live idle session: each session has run one eval and holds
/// its instance and Lua state. Returns `(sessions, RSS per session, PSS per
/// session)` at each count in `counts` (ascending), sessions accumulating
/// between counts.
pub(crate) async fn density(sandbox: &Sandbox, counts: &[usize]) -> Result<Vec<(usize, f64, f64)>> {
    // Warm up the engine and allocator so the baseline holds them.
    {
        let mut s = sandbox.session(()).await?;
        s.eval("return 1+1").await?;
    }
    let base = rss_bytes()?;
    let base_pss = pss_bytes()?;
    let mut sessions = Vec::new();
    let mut figures = Vec::new();
    for &count in counts {
        while sessions.len() < count {
            let mut session = match sandbox.session(()).await {
                Ok(session) => session,
                Err(e) => bail!(
                    "session {} of {count}: {e}{}",
                    sessions.len() + 1,
                    map_hint()
                ),
            };
            session.eval("local x = 1 + 1").await?;
            sessions.push(session);
        }
        let grown = rss_bytes()?.saturating_sub(base);
        let grown_pss = pss_bytes()?.saturating_sub(base_pss);
        figures.push((
            count,
            grown as f64 / count as f64,
            grown_pss as f64 / count as f64,
        ));
    }
    Ok(figures)
}

/// Why the kernel may have refused a session: every live instance holds
/// several memory mappings, and Linux caps them per process.
fn map_hint() -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").map_or(0, |m| m.lines().count());
    let limit = std::fs::read_to_string("/proc/sys/vm/max_map_count").unwrap_or_default();
    format!(
        " (this process holds {maps} memory mappings and vm.max_map_count is {}; \
         raise it, e.g. `sysctl -w vm.max_map_count=262144`, to hold more sessions)",
        limit.trim()
    )
}
