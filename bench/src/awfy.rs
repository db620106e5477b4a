//! Execution speed: the Are-We-Fast-Yet Lua benchmarks inside a sandbox
//! against native `lua5.4`, on the same workloads.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use moonbox::{Engine, Limits, Sandbox};

use super::spawn;
use super::stats::Summary;

/// Each benchmark, its inner-iteration count and its smallest verified
/// count. The first is the problem size the benchmark verifies its result
/// at, chosen so one run takes 0.05-2 s in native `lua5.4`, except Havlak,
/// whose smallest verified size (one inner iteration) takes several
/// seconds. The second is what a smoke run uses: the smallest size whose
/// result the benchmark still checks.
pub(crate) const BENCHMARKS: &[(&str, u32, u32)] = &[
    ("bounce", 50, 1),
    ("cd", 10, 2),
    ("deltablue", 1000, 1),
    ("havlak", 1, 1),
    ("json", 5, 1),
    ("list", 50, 1),
    ("mandelbrot", 500, 1),
    ("nbody", 250_000, 1),
    ("permute", 20, 1),
    ("queens", 50, 1),
    ("richards", 2, 1),
    ("sieve", 500, 1),
    ("storage", 20, 1),
    ("towers", 50, 1),
];

/// One benchmark's medians.
pub(crate) struct Speed {
    pub name: &'static str,
    pub inner: u32,
    pub moonbox: Summary,
    /// The same in a sandbox whose engine meters fuel (deterministic mode,
    /// or an explicit fuel limit): what fuel costs.
    pub moonbox_fuel: Summary,
    pub native: Summary,
    /// Native `lua5.4` with a count hook every 1,000 instructions, the
    /// stock way to count instructions: what the guest's budget saves.
    pub native_hooked: Summary,
}

impl Speed {
    /// moonbox time over native time.
    pub fn ratio(&self) -> f64 {
        self.moonbox.secs() / self.native.secs()
    }

    /// moonbox time with fuel metered over native time.
    pub fn fuel_ratio(&self) -> f64 {
        self.moonbox_fuel.secs() / self.native.secs()
    }

    /// moonbox time over native time with a count hook.
    pub fn hooked_ratio(&self) -> f64 {
        self.moonbox.secs() / self.native_hooked.secs()
    }
}

/// The module name a benchmark file takes in the sandbox: its stem, except
/// that `json` is the sandbox's own library, so the Json benchmark is
/// `awfy_json` there (natively it stays `json`).
fn module_name(stem: &str) -> &str {
    if stem == "json" { "awfy_json" } else { stem }
}

/// The sandbox the benchmarks run in: every `.lua` file of `dir` is a
/// module for `require`. The guest limits are all on; only the instruction
/// count, call depth and timeout are raised so the standard workloads fit
/// (the default instruction limit is about 0.1 s of Lua, and Havlak's
/// depth-first search recurses past the default depth). With `fuel`, its
/// engine meters fuel, derived from the instruction limit.
fn sandbox(dir: &Path, fuel: bool) -> Result<Sandbox> {
    let limits = Limits {
        max_instructions: 1_000_000_000_000,
        max_call_depth: 100_000,
        timeout: Duration::from_secs(600),
        ..Limits::default()
    };
    let engine = if fuel {
        Engine::shared_metered()?
    } else {
        Engine::shared()?
    };
    let mut builder = Sandbox::builder().engine(&engine).limits(limits);
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "lua") && stem != "harness" {
            let source = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            builder = builder.module(module_name(stem), source);
        }
    }
    Ok(builder.build()?)
}

/// Runs every benchmark `reps` times in a sandbox and natively. With
/// `smoke`, each runs at its smallest verified size and the native runs go
/// alongside the sandbox's (a smoke run times nothing, so they may share
/// the cores). `progress` is told each benchmark's name as it starts.
pub(crate) async fn run(
    dir: &Path,
    reps: usize,
    smoke: bool,
    progress: impl Fn(&str),
) -> Result<Vec<Speed>> {
    ensure!(spawn::which("lua5.4").is_some(), "lua5.4 is not installed");
    let plain = sandbox(dir, false)?;
    let metered = sandbox(dir, true)?;
    let path = format!(
        "package.path = [==[{}/?.lua;]==] .. package.path",
        dir.display()
    );
    let mut speeds = Vec::new();
    for &(name, verified, smallest) in BENCHMARKS {
        progress(name);
        let inner = if smoke { smallest } else { verified };
        let work = format!("assert(B:inner_benchmark_loop({inner}))");

        // Natively: the whole process, minus a process that only loads
        // the benchmark, so both sides time the same work.
        let load = format!("{path} B = require('{name}')");
        let base = spawn::samples(reps, "lua5.4", &["-e", &load], b"")?;
        let hook = "debug.sethook(function() end, '', 1000)";
        let native = move |script: String| {
            move || -> Result<Summary> {
                let with = spawn::samples(reps, "lua5.4", &["-e", &script], b"")
                    .with_context(|| format!("{name} natively"))?;
                Ok(Summary {
                    median: with.median.saturating_sub(base.median),
                    p99: with.p99.saturating_sub(base.median),
                    samples: with.samples,
                })
            }
        };
        let plain_native = native(format!("{load} {work}"));
        let hooked_native = native(format!("{load} {hook} {work}"));
        let alongside = smoke.then(|| {
            (
                tokio::task::spawn_blocking(plain_native.clone()),
                tokio::task::spawn_blocking(hooked_native.clone()),
            )
        });

        let mut timed = Vec::new();
        for sandbox in [&plain, &metered] {
            let mut session = sandbox.session(()).await?;
            session
                .eval(&format!("B = require('{}')", module_name(name)))
                .await
                .with_context(|| format!("{name}: require failed"))?;
            timed.push(
                Summary::time_each(reps, async || {
                    session
                        .eval(&work)
                        .await
                        .with_context(|| format!("{name} in moonbox"))?;
                    Ok(())
                })
                .await?,
            );
        }
        let (moonbox, moonbox_fuel) = (timed[0], timed[1]);
        let (native, native_hooked) = match alongside {
            Some((plain, hooked)) => (plain.await??, hooked.await??),
            None => (plain_native()?, hooked_native()?),
        };
        speeds.push(Speed {
            name,
            inner,
            moonbox,
            moonbox_fuel,
            native,
            native_hooked,
        });
    }
    Ok(speeds)
}
