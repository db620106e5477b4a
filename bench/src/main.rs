//! `moonbox-bench`: cold start against processes and containers,
//! throughput, density, execution speed and the capability round trip,
//! each taken side by side with its comparison in the same run. Prints
//! Markdown; `--write` puts it into BENCHMARKS.md and `--chart` draws the
//! cold-start chart. `just bench` runs it; it is not part of the shipped
//! `moonbox` command, whose start it times.
//!
//! Exit codes: 0 success; 2 a usage error or a failed run.

mod attack;
mod attack_mcp;
mod awfy;
mod chart;
mod inproc;
mod load;
mod nats;
mod packages;
mod report;
mod spawn;
mod stats;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use clap::{Parser, ValueEnum};
use serde::de::DeserializeOwned;

use report::{Report, Row};

/// Benchmark cold start against processes and containers, throughput,
/// density, execution speed and capability round trips, each side by side
/// with its comparison (build with --release).
#[derive(Parser, Clone, Debug)]
#[command(name = "moonbox-bench", version)]
pub(crate) struct Options {
    /// Samples of each in-process timing.
    #[arg(long, default_value_t = 10_000)]
    samples: usize,
    /// Samples of each process or container start.
    #[arg(long, default_value_t = 50)]
    spawns: usize,
    /// Seconds of each throughput run.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Live idle session counts to measure RSS at, ascending.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    sessions: Vec<usize>,
    /// The Are-We-Fast-Yet Lua benchmarks directory; skipped when absent.
    #[arg(long, value_name = "DIR")]
    awfy: Option<PathBuf>,
    /// Runs of each Are-We-Fast-Yet benchmark, per side.
    #[arg(long, default_value_t = 5)]
    awfy_runs: usize,
    /// The `moonbox` binary whose process start is timed [default: the
    /// one beside this binary, which `cargo build -p moonbox-cli` puts
    /// there].
    #[arg(long, value_name = "FILE")]
    moonbox: Option<PathBuf>,
    /// Skip the runc and podman containers.
    #[arg(long)]
    no_containers: bool,
    /// A quick run with small sample counts: proves the benchmark works,
    /// times nothing worth quoting.
    #[arg(long)]
    smoke: bool,
    /// Fail when a part could not run (a peer missing, a container that
    /// does not start) instead of reporting it as not run.
    #[arg(long)]
    strict: bool,
    /// Put the report into this Markdown file, replacing its generated
    /// section (the rest of the file is kept).
    #[arg(long, value_name = "FILE")]
    write: Option<PathBuf>,
    /// Draw the cold-start chart (SVG) here.
    #[arg(long, value_name = "FILE")]
    chart: Option<PathBuf>,
    /// Measure only the capability fan-out (a loop of slow calls against
    /// `parallel`) and print its table.
    #[arg(long)]
    fan_out: bool,
    /// Measure only the Are-We-Fast-Yet benchmarks (needs `--awfy`) and
    /// print their table.
    #[arg(long, requires = "awfy")]
    awfy_only: bool,
    /// Measure only the capability round trips and print their table.
    #[arg(long)]
    round_trip: bool,
    /// Measure only `moonbox serve` under load (concurrent HTTP clients on
    /// loopback, with the library side by side) and print its table.
    #[arg(long)]
    serve: bool,
    /// Measure only `moonbox serve --nats` under load (a `nats-server` on
    /// loopback, one worker, concurrent clients with claims and in one
    /// round trip) and print its table. Needs `nats-server` on PATH.
    #[arg(long, conflicts_with = "serve")]
    nats: bool,
    /// Measure only the Python and Node packages beside the Rust crate
    /// (process start, fresh and reused evals, a capability round trip)
    /// and print their table. Needs the packages built: `just
    /// python-package` and `just node-package`.
    #[arg(long)]
    packages: bool,
    /// Measure only the soak under attack: `moonbox serve` with the
    /// Kubernetes example's flags, an honest tenant and a health probe,
    /// while an attacker runs each attack in turn; print its table.
    #[arg(long, conflicts_with_all = ["serve", "nats"])]
    attack: bool,
    /// Measure only the soak under attack of `moonbox mcp --http`: an
    /// honest client while an attacker runs each attack in turn; print its
    /// table.
    #[arg(long, conflicts_with_all = ["serve", "nats", "attack"])]
    attack_mcp: bool,
    /// Measure only these `moonbox` binaries (comma-separated): each one's
    /// file size and `moonbox run` process start, beside `lua5.4 -e`,
    /// their runs interleaved so that the machine's drift falls on all
    /// alike; print their table. For a release binary against another
    /// build (`just dist-bench`).
    #[arg(long, value_name = "FILE,FILE", value_delimiter = ',', num_args = 1..)]
    binaries: Vec<PathBuf>,
    /// Seconds each round of the soak under attack lasts.
    #[arg(long, default_value_t = 20)]
    attack_secs: u64,
    /// Concurrent clients of the serve load test.
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// Requests of the serve load test, over all clients.
    #[arg(long, default_value_t = 20_000)]
    requests: usize,
    /// Evals of each side of the fan-out.
    #[arg(long, default_value_t = 10)]
    fan_out_runs: usize,
    /// Loops timed for each capability round trip (10,000 calls each, or
    /// 1,000 for the page).
    #[arg(long, default_value_t = 20)]
    round_trip_runs: usize,
    /// Measure one part in this process and print it as JSON (used by the
    /// run itself for parts that need a fresh process).
    #[arg(long, value_enum, hide = true)]
    part: Option<Part>,
}

/// Parts that run alone in a process: density, because RSS is cleanest in a
/// fresh process; pooling, so that a profiler sees nothing else.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Part {
    Pooling,
    Density,
}

impl Options {
    fn effective(&self) -> Options {
        let mut o = self.clone();
        if o.smoke {
            o.samples = o.samples.min(200);
            o.requests = o.requests.min(200);
            o.spawns = o.spawns.min(3);
            o.seconds = o.seconds.min(0.2);
            o.sessions = vec![10, 100];
            o.awfy_runs = 1;
            o.fan_out_runs = 1;
            o.round_trip_runs = o.round_trip_runs.min(2);
        }
        o.fan_out_runs = o.fan_out_runs.max(1);
        o.round_trip_runs = o.round_trip_runs.max(1);
        o.samples = o.samples.max(10);
        o.spawns = o.spawns.max(1);
        o.awfy_runs = o.awfy_runs.max(1);
        o
    }
}

fn progress(what: &str) {
    eprintln!("moonbox-bench: {what}");
}

/// The lines that open a part's table: the command that made it, the
/// machine and the date. `cli`: the part times the `moonbox` binary, so the
/// command builds it first.
fn header(args: &str, cli: bool) -> String {
    let release = release_flag();
    let build = if cli {
        format!("cargo build{release} -p moonbox-cli && ")
    } else {
        String::new()
    };
    format!(
        "Command: `{build}cargo run{release} -p moonbox-bench -- {args}`\nMachine: {}\nDate: {}\n",
        report::machine(),
        report::today()
    )
}

/// Runs the benchmark.
pub(crate) async fn run(options: &Options) -> Result<()> {
    let o = options.effective();
    if let Some(part) = o.part {
        return run_part(part, &o).await;
    }
    if o.fan_out {
        progress(&format!("capability fan-out ({} runs)", o.fan_out_runs));
        let fan_out = inproc::fan_out(o.fan_out_runs).await?;
        let mut s = header(
            &format!("--fan-out --fan-out-runs {}", o.fan_out_runs),
            false,
        );
        report::fan_out_table(&mut s, fan_out);
        println!("{s}");
        return Ok(());
    }
    if !o.binaries.is_empty() {
        progress(&format!(
            "process starts of {} binaries ({} each)",
            o.binaries.len(),
            o.spawns
        ));
        let rows = spawn::binaries(&o.binaries, o.spawns)?;
        let names: Vec<String> = o.binaries.iter().map(|b| b.display().to_string()).collect();
        let mut s = header(
            &format!("--binaries {} --spawns {}", names.join(","), o.spawns),
            false,
        );
        report::binaries_table(&mut s, &rows);
        println!("{s}");
        return Ok(());
    }
    if o.round_trip {
        progress("capability round trips");
        let sandbox = inproc::sandbox(false)?;
        let rows = inproc::round_trips(&sandbox, o.round_trip_runs).await?;
        let mut s = header(
            &format!("--round-trip --round-trip-runs {}", o.round_trip_runs),
            false,
        );
        report::round_trip_table(&mut s, &rows);
        println!("{s}");
        return Ok(());
    }
    if o.packages {
        let moonbox = moonbox_binary(&o)?;
        progress("the Rust crate, the Python package and the Node package");
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .context("the bench crate has no parent directory")?;
        let interpreters = packages::Interpreters::in_repository(root);
        let figures = packages::measure(root, &moonbox, &interpreters, o.samples, o.spawns).await?;
        let mut s = header(
            &format!("--packages --samples {} --spawns {}", o.samples, o.spawns),
            true,
        );
        s.push('\n');
        packages::table(&mut s, &figures);
        println!("{s}");
        if o.strict {
            ensure!(
                figures.python.is_ok() && figures.node.is_ok(),
                "a package did not run (see the table)"
            );
        }
        return Ok(());
    }
    if o.attack {
        let moonbox = moonbox_binary(&o)?;
        let secs = o.attack_secs.clamp(5, 600);
        let rounds = attack::run(&moonbox, secs).await?;
        let mut s = header(&format!("--attack --attack-secs {secs}"), true);
        attack::table(&mut s, &rounds);
        println!("{s}");
        return Ok(());
    }
    if o.attack_mcp {
        let moonbox = moonbox_binary(&o)?;
        let secs = o.attack_secs.clamp(5, 600);
        let rounds = attack_mcp::run(&moonbox, secs).await?;
        let mut s = header(&format!("--attack-mcp --attack-secs {secs}"), true);
        writeln!(
            s,
            "Server: `moonbox mcp --http 127.0.0.1:0 {}`",
            attack_mcp::flags()
        )?;
        attack_mcp::table(&mut s, &rounds);
        println!("{s}");
        return Ok(());
    }
    if o.serve || o.nats {
        let moonbox = moonbox_binary(&o)?;
        let (clients, requests) = (o.clients.clamp(1, 1024), o.requests.max(1));
        let (flag, what) = if o.serve {
            ("--serve", "moonbox serve")
        } else {
            ("--nats", "moonbox serve --nats")
        };
        progress(&format!(
            "{what} under load ({clients} clients, {requests} requests)"
        ));
        let mut s = header(
            &format!("{flag} --clients {clients} --requests {requests}"),
            true,
        );
        let limit = Duration::from_secs(300);
        let lost = if o.serve {
            let load = load::run(&moonbox, clients, requests, limit).await?;
            report::load_table(&mut s, &load);
            load.lost()
        } else {
            let load = nats::run(&moonbox, clients, requests, limit).await?;
            report::nats_table(&mut s, &load);
            load.lost()
        };
        println!("{s}");
        if lost > 0 {
            bail!("{lost} requests failed or were not answered in time");
        }
        return Ok(());
    }
    if o.awfy_only {
        let dir = o.awfy.as_deref().context("--awfy-only needs --awfy DIR")?;
        let awfy = awfy::run(dir, o.awfy_runs, o.smoke, |name| {
            progress(&format!("awfy {name}"))
        })
        .await
        .map_err(|e| format!("{e:#}"));
        let smoke = if o.smoke { "--smoke " } else { "" };
        let mut s = header(
            &format!("{smoke}--awfy-only --awfy DIR --awfy-runs {}", o.awfy_runs),
            false,
        );
        report::awfy_table(&mut s, &awfy);
        println!("{s}");
        return Ok(());
    }
    if !o.sessions.windows(2).all(|w| w[0] < w[1]) || o.sessions.contains(&0) {
        bail!("--sessions must be ascending counts above zero");
    }
    if cfg!(debug_assertions) && !o.smoke {
        eprintln!("moonbox-bench: warning: a debug build; build with --release for real figures");
    }
    let exe = std::env::current_exe()?;

    let sandbox = inproc::sandbox(false)?;
    progress(&format!("fresh instances ({} samples)", o.samples));
    let fresh = inproc::fresh_evals(&sandbox, o.samples).await?;
    progress("fresh instances, pooling allocator");
    let pooled = inproc::sandbox(true)?;
    let fresh_pooling = inproc::fresh_evals(&pooled, o.samples).await;
    progress("one fresh eval, step by step");
    let breakdown = [
        inproc::fresh_breakdown(&sandbox, o.samples).await?,
        inproc::fresh_breakdown(&pooled, o.samples).await?,
    ];
    progress("reused session");
    let session = inproc::session_evals(&sandbox, o.samples).await?;
    progress("capability round trip");
    let round_trip = inproc::round_trips(&sandbox, o.round_trip_runs).await?;
    progress("capability fan-out");
    let fan_out = inproc::fan_out(o.fan_out_runs).await?;
    progress("throughput");
    let seconds = Duration::from_secs_f64(o.seconds.max(0.01));
    let throughput_fresh = inproc::throughput(&sandbox, true, seconds).await?;
    let throughput_pooled = inproc::throughput(&pooled, true, seconds).await?;
    let throughput_session = inproc::throughput(&sandbox, false, seconds).await?;

    progress(&format!("process starts ({} each)", o.spawns));
    let process = moonbox_binary(&o).and_then(|moonbox| {
        let moonbox = moonbox.to_string_lossy();
        spawn::samples(o.spawns, &moonbox, &["run", "-"], b"return 1+1")
    });
    let native = spawn::samples(o.spawns, "lua5.4", &["-e", "return 1+1"], b"");
    let (runc, podman) = if o.no_containers {
        let skipped = || Err(anyhow::anyhow!("--no-containers"));
        (skipped(), skipped())
    } else {
        progress("containers");
        match spawn::Bundle::new() {
            Ok(bundle) => (bundle.runc(o.spawns), bundle.podman(o.spawns)),
            Err(e) => (Err(anyhow::anyhow!("{e:#}")), Err(anyhow::anyhow!("{e:#}"))),
        }
    };

    let awfy = match &o.awfy {
        Some(dir) => awfy::run(dir, o.awfy_runs, o.smoke, |name| {
            progress(&format!("awfy {name}"))
        })
        .await
        .map_err(|e| format!("{e:#}")),
        None => Err("pass --awfy DIR".to_owned()),
    };
    progress(&format!(
        "density at {:?} sessions (child process)",
        o.sessions
    ));
    let density = child::<Vec<(usize, f64, f64)>>(&exe, Part::Density, &o);

    let workers = cores();
    let mut report = Report {
        command: command_line(options),
        fresh,
        fresh_pooling: row(fresh_pooling),
        breakdown,
        session,
        round_trip,
        fan_out,
        process: row(process),
        native: row(native),
        runc: row(runc),
        podman: row(podman),
        throughput_fresh,
        throughput_pooled,
        throughput_session,
        workers,
        density: row(density),
        awfy,
        chart: None,
    };
    if let Some(path) = &o.chart {
        let bars: Vec<chart::Bar> = report::contenders(&report)
            .into_iter()
            .filter_map(|(label, row, ours)| {
                row.ok().map(|s| chart::Bar {
                    label: label.replace('`', ""),
                    median: s.median,
                    ours,
                })
            })
            .collect();
        let subtitle = format!("{}, {}; medians", report::today(), report::machine());
        let svg = chart::svg(
            "Cold start: moonbox against processes and containers",
            &subtitle,
            &bars,
        );
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
        report.chart = Some(relative_to(path, o.write.as_deref()));
    }
    if o.strict {
        let missing = report.not_run();
        if !missing.is_empty() {
            bail!(
                "--strict: some parts did not run:\n  {}",
                missing.join("\n  ")
            );
        }
    }
    let markdown = report::markdown(&report);
    println!("{markdown}");
    if let Some(path) = &o.write {
        report::write_section(path, &markdown)?;
        progress(&format!("wrote {}", path.display()));
    }
    Ok(())
}

/// The cores this process may run on: the throughput runs one task on
/// each.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A `KEY: N kB` line of a /proc file, in KiB.
fn proc_kib(path: &str, key: &str) -> Option<u64> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(key))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn row<T>(r: Result<T>) -> Row<T> {
    r.map_err(|e| format!("{e:#}"))
}

/// How the chart is linked from the report: relative to the report's
/// directory when it is inside it.
fn relative_to(chart: &Path, report: Option<&Path>) -> String {
    let base = report
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty());
    let rel = base
        .and_then(|b| chart.strip_prefix(b).ok())
        .unwrap_or(chart);
    rel.to_string_lossy().into_owned()
}

/// The `moonbox` binary to time: `--moonbox`, else the one the same
/// cargo build put beside this binary.
fn moonbox_binary(o: &Options) -> Result<PathBuf> {
    if let Some(path) = &o.moonbox {
        return Ok(path.clone());
    }
    let name = format!("moonbox{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe()?.with_file_name(name);
    ensure!(
        beside.is_file(),
        "no moonbox binary beside moonbox-bench; build it with `cargo build{} -p moonbox-cli` or pass --moonbox",
        release_flag()
    );
    Ok(beside)
}

/// ` --release` in a release build, for the commands this binary prints.
fn release_flag() -> &'static str {
    if cfg!(debug_assertions) {
        ""
    } else {
        " --release"
    }
}

/// The commands that reproduce the run, without machine paths: the
/// `moonbox` binary it times is built first, unless `--moonbox` named one.
fn command_line(o: &Options) -> String {
    let release = release_flag();
    let mut s = match &o.moonbox {
        Some(_) => String::new(),
        None => format!("cargo build{release} -p moonbox-cli && "),
    };
    s.push_str(&format!("cargo run{release} -p moonbox-bench --"));
    if o.smoke {
        s.push_str(" --smoke");
    }
    s.push_str(&format!(
        " --samples {} --spawns {} --seconds {}",
        o.samples, o.spawns, o.seconds
    ));
    let sessions: Vec<String> = o.sessions.iter().map(usize::to_string).collect();
    s.push_str(&format!(" --sessions {}", sessions.join(",")));
    if let Some(dir) = &o.awfy {
        let name = dir
            .file_name()
            .map_or_else(|| dir.to_string_lossy(), |n| n.to_string_lossy());
        s.push_str(&format!(" --awfy .../{name} --awfy-runs {}", o.awfy_runs));
    }
    if let Some(path) = &o.moonbox {
        let name = path
            .file_name()
            .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy());
        s.push_str(&format!(" --moonbox .../{name}"));
    }
    if o.no_containers {
        s.push_str(" --no-containers");
    }
    s.push_str(&format!(
        " --fan-out-runs {} --round-trip-runs {}",
        o.fan_out_runs, o.round_trip_runs
    ));
    s
}

/// Runs this binary again with `--part PART` and parses the JSON it
/// prints.
fn child<R: DeserializeOwned>(exe: &Path, part: Part, o: &Options) -> Result<R> {
    let sessions: Vec<String> = o.sessions.iter().map(usize::to_string).collect();
    let name = match part {
        Part::Pooling => "pooling",
        Part::Density => "density",
    };
    let out = std::process::Command::new(exe)
        .args(["--part", name, "--samples", &o.samples.to_string()])
        .args(["--sessions", &sessions.join(",")])
        .output()
        .context("cannot start a child moonbox-bench")?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!("the {name} child failed: {}", stderr.trim());
    }
    serde_json::from_slice(&out.stdout).with_context(|| format!("the {name} child printed no JSON"))
}

async fn run_part(part: Part, o: &Options) -> Result<()> {
    let value = match part {
        Part::Pooling => {
            let sandbox = inproc::sandbox(true)?;
            serde_json::to_value(inproc::fresh_evals(&sandbox, o.samples).await?)?
        }
        Part::Density => {
            let sandbox = inproc::sandbox(false)?;
            serde_json::to_value(inproc::density(&sandbox, &o.sessions).await?)?
        }
    };
    println!("{value}");
    Ok(())
}

fn main() -> ExitCode {
    let options = Options::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(&options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
