//! The Python and Node packages beside the Rust crate, in one run: a new
//! process's `run` of `return 1+1`, a fresh instance per eval, a reused
//! session, and a capability round trip. Each package times its own
//! in-process figures with its bench script (`packages/*/bench.*`), which
//! prints its samples as JSON; the processes are timed from here.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::inproc;
use crate::spawn;
use crate::stats::{Summary, ratio, time};

/// One package's figures; `None` where it could not run.
#[derive(Default)]
pub(crate) struct Figures {
    pub process: Option<Summary>,
    /// The interpreter alone: `python -c pass`, `node -e 0`.
    pub interpreter: Option<Summary>,
    pub first_result: Option<Summary>,
    pub fresh: Option<Summary>,
    pub session: Option<Summary>,
    pub round_trip: Option<Summary>,
}

/// What a package's bench script prints: samples in microseconds.
#[derive(Deserialize)]
struct Samples {
    import_to_first_result: Vec<f64>,
    fresh_eval: Vec<f64>,
    session_eval: Vec<f64>,
    round_trip: Vec<f64>,
}

fn summary(micros: &[f64]) -> Option<Summary> {
    Summary::of(
        micros
            .iter()
            .map(|us| Duration::from_secs_f64(us.max(0.0) / 1e6))
            .collect(),
    )
}

/// Runs a package's bench script and reads its samples.
fn script(program: &Path, args: &[&str]) -> Result<Samples> {
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("cannot start {}", program.display()))?;
    if !out.status.success() {
        bail!(
            "{} {} failed ({}): {}",
            program.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout).context("the bench script's output is not its JSON")
}

/// A package's figures: its bench script, then `spawns` processes of its
/// CLI's `run -`.
fn package(
    program: &Path,
    script_args: &[&str],
    run_args: &[&str],
    alone_args: &[&str],
    spawns: usize,
) -> Result<Figures> {
    let s = script(program, script_args)?;
    let program = program
        .to_str()
        .context("the interpreter's path is not UTF-8")?;
    Ok(Figures {
        process: Some(spawn::samples(spawns, program, run_args, b"return 1+1")?),
        interpreter: Some(spawn::samples(spawns, program, alone_args, b"")?),
        first_result: summary(&s.import_to_first_result),
        fresh: summary(&s.fresh_eval),
        session: summary(&s.session_eval),
        round_trip: summary(&s.round_trip),
    })
}

/// Where each package's interpreter is: the Python package's test venv
/// (`packages/python/build.sh`) and the `node` on PATH.
pub(crate) struct Interpreters {
    pub python: PathBuf,
    pub node: PathBuf,
}

impl Interpreters {
    pub fn in_repository(root: &Path) -> Interpreters {
        Interpreters {
            python: root.join("target/python/venv/bin/python"),
            node: spawn::which("node").unwrap_or_else(|| PathBuf::from("node")),
        }
    }
}

/// The three columns of the table.
pub(crate) struct Packages {
    pub rust: Figures,
    pub python: Result<Figures>,
    pub node: Result<Figures>,
    pub lua: Option<Summary>,
}

/// Takes every figure: Rust first, then Python, then Node.
pub(crate) async fn measure(
    root: &Path,
    moonbox: &Path,
    interpreters: &Interpreters,
    samples: usize,
    spawns: usize,
) -> Result<Packages> {
    let sandbox = inproc::sandbox(false)?;
    let moonbox = moonbox.to_str().context("the moonbox path is not UTF-8")?;
    let rust = Figures {
        interpreter: None,
        process: Some(spawn::samples(
            spawns,
            moonbox,
            &["run", "-"],
            b"return 1+1",
        )?),
        first_result: None,
        fresh: Some(inproc::fresh_evals(&sandbox, samples).await?),
        session: Some(inproc::session_evals(&sandbox, samples).await?),
        round_trip: Some(inproc::scalar_round_trip(20).await?),
    };
    let n = samples.to_string();
    let python_bench = root.join("packages/python/bench.py");
    let python = package(
        &interpreters.python,
        &[path(&python_bench)?, "--samples", &n],
        &["-m", "moonbox", "run", "-"],
        &["-c", "pass"],
        spawns,
    );
    let node_bench = root.join("packages/node/bench.mjs");
    let node_cli = root.join("packages/node/bin/moonbox.mjs");
    let node = package(
        &interpreters.node,
        &[path(&node_bench)?, "--samples", &n],
        &[path(&node_cli)?, "run", "-"],
        &["-e", "0"],
        spawns,
    );
    let lua = spawn::which("lua5.4")
        .and_then(|lua| spawn::samples(spawns, lua.to_str()?, &["-e", "return 1+1"], b"").ok());
    Ok(Packages {
        rust,
        python,
        node,
        lua,
    })
}

fn path(p: &Path) -> Result<&str> {
    p.to_str().context("a path is not UTF-8")
}

/// The table: one row per figure, a column per package with its ratio to
/// the Rust crate's.
pub(crate) fn table(s: &mut String, p: &Packages) {
    let cell = |f: Option<&Summary>, rust: Option<&Summary>| -> String {
        match (f, rust) {
            (Some(f), Some(r)) if r.secs() > 0.0 => {
                format!("{} ({})", time(f.median), ratio(f.secs() / r.secs()))
            }
            (Some(f), _) => time(f.median),
            (None, _) => "n/a".to_owned(),
        }
    };
    let column = |r: &Result<Figures>, pick: fn(&Figures) -> Option<&Summary>| -> Option<Summary> {
        r.as_ref().ok().and_then(|f| pick(f).copied())
    };
    type Pick = fn(&Figures) -> Option<&Summary>;
    let rows: [(&str, Pick); 6] = [
        ("new process: `run -` with `return 1+1`, to its exit", |f| {
            f.process.as_ref()
        }),
        (
            "new process of the interpreter alone (`python -c pass`, `node -e 0`)",
            |f| f.interpreter.as_ref(),
        ),
        (
            "in a new process: from loading the package to the first result",
            |f| f.first_result.as_ref(),
        ),
        ("fresh instance per eval: `eval(\"return 1+1\")`", |f| {
            f.fresh.as_ref()
        }),
        ("one reused session: `eval(\"return 1+1\")`", |f| {
            f.session.as_ref()
        }),
        (
            "capability round trip (`count.next(n)`, synchronous)",
            |f| f.round_trip.as_ref(),
        ),
    ];
    s.push_str("| what | Rust crate | Python package | Node package |\n|---|---|---|---|\n");
    for (what, pick) in rows {
        let rust = pick(&p.rust);
        let rust_cell = rust.map_or_else(|| "n/a".to_owned(), |r| time(r.median));
        s.push_str(&format!(
            "| {what} | {rust_cell} | {} | {} |\n",
            cell(column(&p.python, pick).as_ref(), rust),
            cell(column(&p.node, pick).as_ref(), rust),
        ));
    }
    for (name, r) in [("Python", &p.python), ("Node", &p.node)] {
        if let Ok(Figures {
            process: Some(process),
            interpreter: Some(alone),
            ..
        }) = r
            && alone.secs() > 0.0
        {
            s.push_str(&format!(
                "\nThe {name} package's `run -` process took {} the interpreter's own start.\n",
                ratio(process.secs() / alone.secs())
            ));
        }
    }
    if let Some(lua) = &p.lua {
        s.push_str(&format!(
            "\nFor scale: a `lua5.4 -e \"return 1+1\"` process (no isolation) took {} in the same run.\n",
            time(lua.median)
        ));
    }
    for (name, r) in [("Python", &p.python), ("Node", &p.node)] {
        if let Err(e) = r {
            s.push_str(&format!("\nThe {name} package did not run: {e:#}\n"));
        }
    }
}
