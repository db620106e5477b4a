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
    let sandboxes = [sandbox(dir, false)?, sandbox(dir, true)?];
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
        let plain = format!("{load} {work}");
        let hooked = format!("{load} debug.sethook(function() end, '', 1000) {work}");
        let (sandboxed, native, native_hooked) = if smoke {
            let plain = tokio::task::spawn_blocking(move || natively(reps, name, &plain, base));
            let hooked = tokio::task::spawn_blocking(move || natively(reps, name, &hooked, base));
            let sandboxed = in_sandboxes(&sandboxes, reps, name, &work).await?;
            (sandboxed, plain.await??, hooked.await??)
        } else {
            let sandboxed = in_sandboxes(&sandboxes, reps, name, &work).await?;
            let native = natively(reps, name, &plain, base)?;
            (sandboxed, native, natively(reps, name, &hooked, base)?)
        };
        let (moonbox, moonbox_fuel) = sandboxed;
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

/// `work` after the benchmark `name` is loaded, `reps` times in a session
/// of each sandbox: the plain one, then the metered one.
async fn in_sandboxes(
    sandboxes: &[Sandbox; 2],
    reps: usize,
    name: &str,
    work: &str,
) -> Result<(Summary, Summary)> {
    let timed = async |sandbox: &Sandbox| -> Result<Summary> {
        let mut session = sandbox.session(()).await?;
        session
            .eval(&format!("B = require('{}')", module_name(name)))
            .await
            .with_context(|| format!("{name}: require failed"))?;
        Summary::time_each(reps, async || {
            session
                .eval(work)
                .await
                .with_context(|| format!("{name} in moonbox"))?;
            Ok(())
        })
        .await
    };
    let [plain, metered] = sandboxes;
    Ok((timed(plain).await?, timed(metered).await?))
}

/// `lua5.4 -e script`, `reps` times, less `base` (a process that only
/// loads the benchmark).
fn natively(reps: usize, name: &str, script: &str, base: Summary) -> Result<Summary> {
    let with = spawn::samples(reps, "lua5.4", &["-e", script], b"")
        .with_context(|| format!("{name} natively"))?;
    Ok(Summary {
        median: with.median.saturating_sub(base.median),
        p99: with.p99.saturating_sub(base.median),
        samples: with.samples,
    })
}
