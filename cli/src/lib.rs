//! The `moonbox` command: run, check and describe sandboxed Lua.
//!
//! The command is a library so that every program that offers it runs the
//! same code: the `moonbox` binary, and the Python and Node packages, whose
//! `moonbox` commands enter it through their native modules.
//!
//! Exit codes: 0 success; 1 a Lua error (syntax, runtime, sandboxed,
//! capability, invalid value); 2 a usage, input or host error (internal
//! errors and poisoned sessions included); 3 a limit stopped the script; 4
//! `check --strict` found warnings; `os.exit(n)` exits with `n`
//! (modulo 256).

mod args;
mod files;
mod input;
mod listen;
mod mcp;
mod probe;
mod serve;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use moonbox::tool::{self, SchemaFormat};
use moonbox::{ErrorKind, Report, Script};

use args::SandboxArgs;

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
    /// nothing, as lua5.4 prints nothing; --json is the unambiguous form).
    /// A value JSON cannot hold (a function) is an invalid_value error: to
    /// ignore what a file returns, as lua5.4 does, load it as a module
    /// (echo "require('m')" | moonbox run --module m=FILE -). An error is one
    /// line on stderr, and so is each event of the script's log(level,
    /// message, fields), as it happens: [warn] disk low  free=12. Source is
    /// bytes: any encoding in strings and comments, a leading UTF-8 BOM and
    /// a first line starting with # are accepted.
    ///
    /// ARGS reach the script as lua5.4 FILE ARGS gives them: the global arg
    /// (the chunk name, FILE's file name or stdin, at 0, ARGS at 1..n) and
    /// the chunk's `...`. Flags go before FILE; after the first of ARGS
    /// everything is the script's, and `--` passes ARGS that start with -.
    ///
    /// The script has files of its own, in memory: --file mounts host files
    /// in them, read-only. The files it writes are named on stderr after the
    /// run (wrote NAME (N bytes)), whatever stopped it, or with --json are in
    /// the report; --out-dir DIR writes them into DIR. No host path is
    /// reachable from the script.
    Run {
        /// The script, or `-` for standard input.
        file: PathBuf,
        /// Arguments for the script: arg[1..n] and `...`.
        #[arg(value_name = "ARGS", trailing_var_arg = true)]
        args: Vec<String>,
        /// Print one JSON object (the report: ok, values, output, error,
        /// stats, logs, files) instead; unambiguous whatever the script
        /// returns. Log events are then only in the report, and written
        /// files are named on stderr only when --out-dir writes them.
        #[arg(long)]
        json: bool,
        /// Set the global NAME to a JSON value before the script runs
        /// (repeatable): --input n=41 --input 'user={"name": "Ada"}'.
        #[arg(long, value_name = "NAME=JSON", value_parser = args::parse_input)]
        input: Vec<(String, serde_json::Value)>,
        #[command(flatten)]
        files: files::FileArgs,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Check a Lua chunk without running it, under the same limits and
    /// sandbox flags as `run`.
    ///
    /// A syntax error is an error (exit 1). Each reference the sandbox will
    /// refuse is a warning on stderr, `chunk:line: warning[kind]: message`:
    /// a sandboxed name not allowed (os.execute, io.open), require of a
    /// module the sandbox does not offer, a missing capability of a
    /// namespace (records.fetch), a global read that is never assigned and
    /// is nil. Warnings alone exit 0, or 4 with --strict.
    Check {
        /// The script, or `-` for standard input.
        file: PathBuf,
        /// Fail (exit 4) when there is any warning.
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Serve the sandbox to agents over the Model Context Protocol.
    ///
    /// Tools: run_lua (code, optional inputs, args, files, stdin and
    /// session; the files the script wrote come back as embedded
    /// resources), check_lua (code, optional inputs and session),
    /// new_session and close_session. Speaks MCP on stdin and stdout, or streamable HTTP at
    /// /mcp with --http. The sandbox flags apply to every run; a run
    /// without a session gets a fresh state. See docs/mcp.md.
    Mcp {
        #[command(flatten)]
        mcp: mcp::McpArgs,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Serve the sandbox as an HTTP JSON API: evals, sessions, health and
    /// metrics.
    ///
    /// POST /v1/eval runs {"code", "inputs", "args", "files", "stdin",
    /// "limits"} in a fresh sandbox and answers the same report as `run
    /// --json`, with the files the script wrote; POST /v1/sessions,
    /// POST /v1/sessions/ID/eval and DELETE /v1/sessions/ID keep state
    /// across evals. The sandbox flags are the ceiling a request's limits
    /// must stay under. Past the bounds, requests get 429 with Retry-After.
    /// Drains on SIGTERM. See docs/serve.md.
    Serve {
        #[command(flatten)]
        serve: Box<serve::ServeArgs>,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Print the `run_lua` tool definition for an agent.
    ToolSchema {
        /// The API whose tool format to print.
        #[arg(long, value_enum, default_value_t = Format::Anthropic)]
        format: Format,
        #[command(flatten)]
        sandbox: SandboxArgs,
    },
    /// Check a server's health endpoint: exit 0 when it answers 2xx within
    /// the timeout, 1 otherwise. For health checks in images that hold
    /// only this binary: moonbox probe http://127.0.0.1:8080/readyz.
    Probe {
        /// The endpoint, as http://HOST[:PORT]/PATH.
        url: String,
        /// How long connecting and the answer may take together (accepts
        /// 500ms, 2s; at most 1m).
        #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = args::parse_probe_timeout)]
        timeout: std::time::Duration,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Chat Completions API (strict).
    Openai,
    /// OpenAI's Responses API (flat, strict).
    OpenaiResponses,
    /// A Model Context Protocol tool, with its output schema.
    Mcp,
}

/// What `run` was asked to run: the script, its arguments and inputs, and
/// its files.
struct RunArgs<'a> {
    file: &'a Path,
    args: &'a [String],
    json: bool,
    inputs: &'a [(String, serde_json::Value)],
    files: &'a files::FileArgs,
}

async fn run(what: RunArgs<'_>, args: &SandboxArgs) -> Result<u8> {
    let RunArgs {
        file,
        json,
        inputs,
        files,
        ..
    } = what;
    if files.stdin && file == Path::new("-") {
        bail!(
            "--stdin gives the script this command's standard input, which `-` already reads the script from; save the script to a file, or mount the data with --file"
        );
    }
    let (code, chunk) = args.read_script(file)?;
    // Files and standard input share the sandbox's memory bound, as it
    // counts them; reading them is bounded by the run's timeout.
    let deadline = input::Deadline::after(args.limits().timeout);
    let script = Script::new(code)
        .inputs(inputs.iter().cloned())
        .args(what.args.iter().cloned());
    let script = files.add_to(script, args.limits().max_memory_bytes, &deadline)?;
    files.prepare_out_dir()?;
    // Standard output is checked before anything runs: a closed stdout is a
    // host error, not a silent success.
    let stdout = input::Stdout::open()?;
    // The session that proves the configuration is the one that runs.
    let (sandbox, mut session) = args.builder()?.build_with_session(()).await?;
    session.set_chunk_name(&chunk);
    if !json {
        // Output streams to stdout as the script writes it, log events to
        // stderr, one line each, in the order the script made them.
        session.set_output_sink(Some(stdout.sink()));
        session.set_log_sink(Some(stdout.log_sink()));
    }
    let outcome = session.run(script).await;
    exiting((sandbox, session));
    let written = match &outcome {
        Ok(out) => &out.files,
        Err(e) => &e.files,
    };
    if json {
        let report = Report::from(&outcome);
        stdout.write(format!("{}\n", report.to_json()).as_bytes());
        stdout.finish()?;
        let delivered = files.deliver(written, true);
        let code = match &outcome {
            Ok(out) => out.exit_code.map_or(0, exit_status),
            Err(e) => e.kind.exit_code(),
        };
        return Ok(undelivered(code, delivered));
    }
    match &outcome {
        Ok(out) => {
            if out.exit_code.is_none() && !out.values.is_empty() {
                stdout.write(
                    format!("{}\n", serde_json::Value::Array(out.values.clone())).as_bytes(),
                );
            }
            stdout.finish()?;
            let delivered = files.deliver(written, false);
            Ok(undelivered(out.exit_code.map_or(0, exit_status), delivered))
        }
        Err(e) => {
            stdout.finish()?;
            let delivered = files.deliver(written, false);
            eprintln!("{e}");
            if let Some(note) = flag_note(e.kind) {
                eprintln!("{note}");
            }
            // The note is about a returned value JSON cannot hold
            // (`result[1] is a function`), not about a refused input, file
            // or argument.
            if e.kind == ErrorKind::InvalidValue && e.message.starts_with("result") {
                eprintln!(
                    "note: `moonbox run` prints a chunk's return values as JSON, and this one cannot become JSON; to run the file as lua5.4 would, ignoring what it returns, load it as a module: echo \"require('m')\" | moonbox run --module m=FILE -"
                );
            }
            Ok(undelivered(e.kind.exit_code(), delivered))
        }
    }
}

/// Leaves the sandbox and its session to the process's exit, which is next
/// for every caller of [`main_from`]: unmapping the instance's memory and
/// the compiled guest one by one (with the epoch thread's CPU told of each)
/// took longer than the exit that frees them all at once.
fn exiting<T>(kept: T) {
    let _ = std::mem::ManuallyDrop::new(kept);
}

/// The exit status once the script's files are delivered: a run that
/// succeeded but whose files could not all be written is a host error (2);
/// a failed run keeps its own status.
fn undelivered(code: u8, delivered: bool) -> u8 {
    if code == 0 && !delivered { 2 } else { code }
}

/// The flags that set the limit behind an outer-wall stop: the library's
/// message names the `Limits` field, which a command-line user does not set.
fn flag_note(kind: ErrorKind) -> Option<&'static str> {
    match kind {
        ErrorKind::Timeout => Some("note: the timeout is set with --timeout"),
        ErrorKind::FuelExhausted => {
            Some("note: fuel is set with --fuel, or derived from --max-instructions")
        }
        _ => None,
    }
}

/// The process status for `os.exit(code)`: the low byte, as a
/// POSIX shell sees it.
fn exit_status(code: i32) -> u8 {
    (code & 0xff) as u8
}

/// The exit code of `check --strict` when there are warnings.
const STRICT_WARNINGS: u8 = 4;

async fn check(file: &Path, strict: bool, args: &SandboxArgs) -> Result<u8> {
    let (code, chunk) = args.read_script(file)?;
    let sandbox = args.builder()?.build_async().await?;
    let checked = sandbox.check(&code, &chunk).await;
    exiting(sandbox);
    match checked {
        Ok(warnings) => {
            for warning in &warnings {
                eprintln!("{warning}");
            }
            Ok(if strict && !warnings.is_empty() {
                STRICT_WARNINGS
            } else {
                0
            })
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(e.kind.exit_code())
        }
    }
}

fn tool_schema(format: Format, args: &SandboxArgs) -> Result<u8> {
    let sandbox = args.build()?;
    let format = match format {
        Format::Anthropic => SchemaFormat::Anthropic,
        Format::Openai => SchemaFormat::OpenAi,
        Format::OpenaiResponses => SchemaFormat::OpenAiResponses,
        Format::Mcp => SchemaFormat::Mcp,
    };
    let definition = tool::definition(&sandbox, format);
    println!("{}", serde_json::to_string_pretty(&definition)?);
    Ok(0)
}

/// Runs the command line `args` (the program's name first, as
/// [`std::env::args_os`] gives it) and returns the process's exit status.
///
/// A usage error, `--help` and `--version` print what clap prints and exit
/// the process, as a command does. The caller exits with the status
/// returned once its own output is flushed; `run` and `check` leave their
/// sandbox's memory for that exit to free, so a caller that stays alive
/// keeps it.
pub fn main_from<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    // One eval needs one thread: `run`, `check` and `tool-schema` run on
    // the calling thread (blocking capabilities still get tokio's blocking
    // pool); the MCP server, which serves clients at once, on one thread
    // per core.
    let serving = matches!(cli.command, Command::Mcp { .. } | Command::Serve { .. });
    let runtime = if serving {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
    };
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 2;
        }
    };
    let result = runtime.block_on(async {
        match &cli.command {
            Command::Run {
                file,
                args,
                json,
                input,
                files,
                sandbox,
            } => {
                let what = RunArgs {
                    file,
                    args,
                    json: *json,
                    inputs: input,
                    files,
                };
                run(what, sandbox).await
            }
            Command::Check {
                file,
                strict,
                sandbox,
            } => check(file, *strict, sandbox).await,
            Command::ToolSchema { format, sandbox } => tool_schema(*format, sandbox),
            Command::Probe { url, timeout } => probe::probe(url, *timeout),
            Command::Mcp { mcp, sandbox } => mcp::serve(mcp, sandbox).await,
            Command::Serve { serve, sandbox } => {
                serve::init_logs();
                serve::serve(serve, sandbox).await
            }
        }
    });
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    };
    if serving {
        // The MCP server's upstream servers are child processes, killed when
        // their tasks are dropped with the runtime. The wait is bounded: a
        // blocking read of stdin (or a blocking capability) on tokio's pool
        // cannot be cancelled, and must not keep the process alive.
        runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    } else {
        // A blocking capability abandoned at the deadline may still run;
        // the caller is about to exit and must not wait for it.
        runtime.shutdown_background();
    }
    code
}
