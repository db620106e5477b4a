//! The `moonbox` command: run, check and describe sandboxed Lua.
//!
//! Exit codes: 0 success; 1 a Lua error (syntax, runtime, sandboxed,
//! capability, invalid value); 2 a usage, input or host error (internal
//! errors and poisoned sessions included); 3 a limit stopped the script; an
//! allowed `os.exit(n)` exits with `n` (modulo 256).

mod bench;
mod input;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use moonbox::tool::{self, SchemaFormat};
use moonbox::{Determinism, ErrorKind, Limits, Records, Report, Sandbox, SandboxBuilder};

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
    /// What the script writes (print, io.write) goes to stdout as it runs;
    /// values it returns follow as one JSON array line (none when it returns
    /// nothing, as lua5.4 prints nothing). An error is one line on stderr.
    /// Source is bytes: any encoding in strings and comments, a leading
    /// UTF-8 BOM and a first line starting with # are accepted.
    Run {
        /// The script, or `-` for standard input.
        file: PathBuf,
        /// Print one JSON object (the report: ok, values, output, error,
        /// stats) instead; unambiguous whatever the script returns.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Check that a Lua chunk compiles, without running it, under the same
    /// limits as `run`.
    Check {
        /// The script, or `-` for standard input.
        file: PathBuf,
        #[command(flatten)]
        sandbox: SandboxArgs,
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
    /// Lua VM instructions per run (at most 10^12).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_INSTRUCTIONS,
          value_parser = clap::value_parser!(u64).range(1..=Limits::MAX_MAX_INSTRUCTIONS))]
    max_instructions: u64,
    /// Frames on the Lua stack (at most 1000000).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_CALL_DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(Limits::MAX_MAX_CALL_DEPTH)))]
    max_call_depth: u32,
    /// Bytes in one string (accepts 16MiB, 512KiB, 1000; 1KiB to 1GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "16MiB")]
    max_string_bytes: u64,
    /// Bytes of Lua heap (accepts 64MiB, 1GiB...; 1MiB to 1GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64MiB")]
    memory: u64,
    /// Wall-clock time per run, reading the script included (accepts 2s,
    /// 500ms, 1m; at most 24h).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    timeout: Duration,
    /// Wasmtime fuel per run (at most 2^60).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_FUEL,
          value_parser = clap::value_parser!(u64).range(1..=Limits::MAX_FUEL))]
    fuel: u64,
    /// Bytes of output per run (print and io.write; at most 1GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1MiB")]
    max_output_bytes: u64,
    /// Largest script or module file read (at most 4GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "16MiB")]
    max_script_bytes: u64,
    /// Largest --records file read (at most 4GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "256MiB")]
    max_records_bytes: u64,
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

/// Parses a size. Every size flag accepts up to 4 GiB; each limit's own
/// bound is checked when the sandbox is built.
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
    let bytes = n
        .checked_mul(1 << shift)
        .filter(|&b| b <= Limits::MAX_WASM_MEMORY)
        .ok_or_else(|| format!("'{s}' is larger than the most allowed, 4GiB"))?;
    if bytes == 0 {
        return Err("the size must be greater than zero".to_owned());
    }
    Ok(bytes)
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a duration; try 2s or 500ms"))?;
    let d = match unit.trim() {
        "ms" => Duration::from_millis(n),
        "s" | "" => Duration::from_secs(n),
        "m" | "min" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        other => {
            return Err(format!(
                "unknown duration unit '{other}'; use ms, s, m or h"
            ));
        }
    };
    if d.is_zero() {
        return Err("the duration must be greater than zero".to_owned());
    }
    if d > Limits::MAX_TIMEOUT {
        return Err(format!("'{s}' is longer than the most allowed, 24h"));
    }
    Ok(d)
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
        let deadline = input::Deadline::after(self.timeout);
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
            let bytes = input::read(path, "records", self.max_records_bytes, &deadline)?;
            let text = std::str::from_utf8(&bytes).map_err(|e| {
                anyhow::anyhow!(
                    "records '{}' are not UTF-8 JSON (invalid byte at offset {})",
                    path.display(),
                    e.valid_up_to()
                )
            })?;
            let records =
                Records::from_json(text).with_context(|| format!("in '{}'", path.display()))?;
            drop(bytes);
            builder = builder.capability(records.capability());
        }
        let mut seen = Vec::new();
        for (name, file) in &self.module {
            if seen.contains(name) {
                bail!("module '{name}' is given twice with --module; each name may appear once");
            }
            seen.push(name.clone());
            let what = format!("module '{name}'");
            let source = input::read(file, &what, self.max_script_bytes, &deadline)?;
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
    let deadline = input::Deadline::after(args.timeout);
    let code = input::read(file, "script", args.max_script_bytes, &deadline)?;
    let chunk = input::chunk_name(file);
    // Standard output is checked before anything runs: a closed stdout is a
    // host error, not a silent success.
    let stdout = input::Stdout::open()?;
    let sandbox = args.build()?;
    let mut session = sandbox.session(()).await?;
    session.set_chunk_name(&chunk);
    if !json {
        // Output streams to stdout as the script writes it.
        session.set_output_sink(Some(stdout.sink()));
    }
    let outcome = session.eval(&code).await;
    if json {
        let report = Report::from(&outcome);
        stdout.write(format!("{}\n", report.to_json()).as_bytes());
        stdout.finish()?;
        return Ok(match &outcome {
            Ok(out) => out.exit_code.map_or(0, exit_status),
            Err(e) => exit_code(e.kind),
        });
    }
    match outcome {
        Ok(out) => {
            if out.exit_code.is_none() && !out.values.is_empty() {
                stdout.write(format!("{}\n", serde_json::Value::Array(out.values)).as_bytes());
            }
            stdout.finish()?;
            Ok(out.exit_code.map_or(0, exit_status))
        }
        Err(e) => {
            stdout.finish()?;
            eprintln!("{e}");
            if e.kind == ErrorKind::InvalidValue {
                eprintln!(
                    "note: `moonbox run` prints a chunk's return values as JSON; end the file without returning that value (or return something JSON can hold) to run it as lua5.4 would"
                );
            }
            Ok(exit_code(e.kind))
        }
    }
}

/// The process status for an allowed `os.exit(code)`: the low byte, as a
/// POSIX shell sees it.
fn exit_status(code: i32) -> u8 {
    (code & 0xff) as u8
}

async fn check(file: &Path, args: &SandboxArgs) -> Result<u8> {
    let deadline = input::Deadline::after(args.timeout);
    let code = input::read(file, "script", args.max_script_bytes, &deadline)?;
    let chunk = input::chunk_name(file);
    let sandbox = args.build()?;
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
            Command::Check { file, sandbox } => check(file, sandbox).await,
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
    fn durations_and_sizes_past_their_bound_are_refused_without_panicking() {
        assert!(
            parse_duration("18446744073709551615s")
                .unwrap_err()
                .contains("longer than the most allowed")
        );
        assert!(parse_duration("25h").is_err());
        assert!(parse_duration("0ms").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("17179869184GiB").unwrap_err().contains("larger"));
        assert!(parse_size("0").is_err());
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
