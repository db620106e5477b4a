//! The `moonbox` command: run, check and describe sandboxed Lua.
//!
//! Exit codes: 0 success; 1 a Lua error (syntax, runtime, sandboxed,
//! capability, invalid value); 2 a usage or host I/O error; 3 a limit
//! stopped the script.

mod bench;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use moonbox::tool::{self, SchemaFormat};
use moonbox::{
    Determinism, ErrorKind, EvalError, EvalOutput, Limits, Records, Sandbox, SandboxBuilder,
};

#[derive(Parser)]
#[command(
    name = "moonbox",
    version,
    about = "Run untrusted Lua 5.4 in a WebAssembly sandbox"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a Lua chunk in a fresh sandbox.
    ///
    /// What the script prints goes to stdout; values it returns follow as one
    /// JSON array line. An error is one line on stderr.
    Run {
        /// The script, or `-` for standard input.
        file: PathBuf,
        /// Print one JSON object (ok, values, output, error, stats) instead.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Check a Lua chunk's syntax without running it.
    Check {
        /// The script, or `-` for standard input.
        file: PathBuf,
    },
    /// Benchmark cold start against processes and containers, throughput,
    /// density, execution speed and capability round trips, each side by
    /// side with its comparison (build with --release).
    Bench(bench::Options),
    /// Print the `run_lua` tool definition for an agent.
    ToolSchema {
        /// The API whose tool format to print.
        #[arg(long, value_enum, default_value_t = Format::Anthropic)]
        format: Format,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Anthropic,
    Openai,
}

#[derive(Args)]
struct SandboxArgs {
    /// Lua VM instructions per run.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_INSTRUCTIONS)]
    max_instructions: u64,
    /// Frames on the Lua stack.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_CALL_DEPTH)]
    max_call_depth: u32,
    /// Bytes in one string (accepts 16MiB, 512KiB, 1000).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "16MiB")]
    max_string_bytes: u64,
    /// Bytes of Lua heap (accepts 64MiB, 1GiB...).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64MiB")]
    memory: u64,
    /// Wall-clock time per run (accepts 2s, 500ms, 1m).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    timeout: Duration,
    /// Wasmtime fuel per run.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_FUEL)]
    fuel: u64,
    /// Bytes of printed output per run.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1MiB")]
    max_output_bytes: u64,
    /// Allow a sandboxed name back, such as os.getenv or io.write (repeatable).
    #[arg(long, value_name = "NAME")]
    allow: Vec<String>,
    /// Fix the clock and seed math.random.
    #[arg(long)]
    deterministic: bool,
    /// The math.random seed in deterministic mode (implies --deterministic).
    #[arg(long, value_name = "N")]
    seed: Option<i64>,
    /// Offer records.get(id), backed by this JSON object of id -> record.
    #[arg(long, value_name = "FILE.json")]
    records: Option<PathBuf>,
    /// Make require(NAME) load FILE's text (repeatable).
    #[arg(long, value_name = "NAME=FILE", value_parser = parse_module)]
    module: Vec<(String, PathBuf)>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a size; try 64MiB, 512KiB or 1048576"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => {
            return Err(format!(
                "unknown size unit '{other}'; use B, KiB, MiB or GiB"
            ));
        }
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("'{s}' is too large"))
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a duration; try 2s or 500ms"))?;
    match unit.trim() {
        "ms" => Ok(Duration::from_millis(n)),
        "s" | "" => Ok(Duration::from_secs(n)),
        "m" | "min" => Ok(Duration::from_secs(n.saturating_mul(60))),
        other => Err(format!("unknown duration unit '{other}'; use ms, s or m")),
    }
}

fn parse_module(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(file)))
        }
        _ => Err(format!(
            "'{s}' is not NAME=FILE, as in --module json=lib/json.lua"
        )),
    }
}

/// Reads a script (or `-` for stdin) as UTF-8 text; returns it with its chunk name.
fn read_script(path: &Path) -> Result<(String, String)> {
    let (bytes, chunk) = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the script from standard input")?;
        (bytes, "stdin".to_owned())
    } else {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read '{}'", path.display()))?;
        let chunk = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        (bytes, chunk)
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "'{}' is not UTF-8 text (invalid byte at offset {}); moonbox runs UTF-8 Lua source",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok((text, chunk))
}

impl SandboxArgs {
    fn build(&self) -> Result<Sandbox> {
        let limits = Limits {
            max_instructions: self.max_instructions,
            max_call_depth: self.max_call_depth,
            max_string_bytes: self.max_string_bytes,
            memory: self.memory,
            max_output_bytes: self.max_output_bytes,
            fuel: self.fuel,
            timeout: self.timeout,
            ..Limits::default()
        };
        let mut builder: SandboxBuilder<()> = Sandbox::builder().limits(limits);
        for name in &self.allow {
            builder = builder.allow(name);
        }
        if self.deterministic || self.seed.is_some() {
            builder = builder.deterministic(Determinism {
                seed: self.seed.unwrap_or(0),
                ..Determinism::default()
            });
        }
        if let Some(path) = &self.records {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read records '{}'", path.display()))?;
            let records =
                Records::from_json(&text).with_context(|| format!("in '{}'", path.display()))?;
            builder = builder.capability(records.capability());
        }
        let mut seen = Vec::new();
        for (name, file) in &self.module {
            if seen.contains(name) {
                bail!("module '{name}' is given twice with --module; each name may appear once");
            }
            seen.push(name.clone());
            let source = std::fs::read_to_string(file).with_context(|| {
                format!("cannot read module '{name}' from '{}'", file.display())
            })?;
            builder = builder.module(name, source);
        }
        Ok(builder.build()?)
    }
}

fn exit_code(kind: ErrorKind) -> u8 {
    if kind.is_limit() {
        3
    } else if matches!(kind, ErrorKind::Internal | ErrorKind::SessionPoisoned) {
        2
    } else {
        1
    }
}

async fn run(file: &Path, json: bool, args: &SandboxArgs) -> Result<u8> {
    let (code, chunk) = read_script(file)?;
    let sandbox = args.build()?;
    let mut session = sandbox.session(()).await?;
    session.set_chunk_name(&chunk);
    let outcome = session.eval(&code).await;
    let mut stdout = std::io::stdout().lock();
    if json {
        let report = report(&outcome);
        writeln!(stdout, "{report}")?;
        return Ok(outcome.as_ref().err().map_or(0, |e| exit_code(e.kind)));
    }
    let output = match &outcome {
        Ok(out) => &out.output,
        Err(e) => &e.output,
    };
    for line in output {
        writeln!(stdout, "{line}")?;
    }
    match outcome {
        Ok(out) => {
            if !out.values.is_empty() {
                writeln!(stdout, "{}", serde_json::Value::Array(out.values))?;
            }
            Ok(0)
        }
        Err(e) => {
            stdout.flush()?;
            eprintln!("{e}");
            Ok(exit_code(e.kind))
        }
    }
}

fn report(outcome: &Result<EvalOutput, EvalError>) -> serde_json::Value {
    match outcome {
        Ok(out) => serde_json::json!({
            "ok": true, "values": out.values, "output": out.output, "error": null, "stats": out.stats,
        }),
        Err(e) => serde_json::json!({
            "ok": false,
            "values": [],
            "output": e.output,
            "error": { "kind": e.kind, "message": e.message, "chunk": e.chunk, "line": e.line, "traceback": e.traceback },
            "stats": e.stats,
        }),
    }
}

async fn check(file: &Path) -> Result<u8> {
    let (code, chunk) = read_script(file)?;
    let sandbox = Sandbox::builder().build()?;
    match sandbox.check(&code, &chunk).await {
        Ok(()) => Ok(0),
        Err(e) => {
            eprintln!("{e}");
            Ok(exit_code(e.kind))
        }
    }
}

fn tool_schema(format: Format, args: &SandboxArgs) -> Result<u8> {
    let sandbox = args.build()?;
    let format = match format {
        Format::Anthropic => SchemaFormat::Anthropic,
        Format::Openai => SchemaFormat::OpenAi,
    };
    let definition = tool::definition(&sandbox, format);
    println!("{}", serde_json::to_string_pretty(&definition)?);
    Ok(0)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    let result = runtime.block_on(async {
        match &cli.command {
            Command::Run {
                file,
                json,
                sandbox,
            } => run(file, *json, sandbox).await,
            Command::Check { file } => check(file).await,
            Command::ToolSchema { format, sandbox } => tool_schema(*format, sandbox),
            Command::Bench(options) => bench::run(options).await.map(|()| 0),
        }
    });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_accept_binary_units() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("512kib"), Ok(512 << 10));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(
            parse_size("12 parsecs")
                .unwrap_err()
                .contains("unknown size unit")
        );
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn durations_accept_ms_and_s() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("2 fortnights").is_err());
    }

    #[test]
    fn modules_need_name_and_file() {
        assert_eq!(
            parse_module("json=lib/json.lua"),
            Ok(("json".into(), PathBuf::from("lib/json.lua")))
        );
        assert!(parse_module("json").is_err());
        assert!(parse_module("=x.lua").is_err());
    }
}
