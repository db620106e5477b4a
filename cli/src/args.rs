//! The sandbox flags shared by `run`, `check` and `tool-schema`, and the
//! parsers of their values. Every numeric flag has an upper bound, checked
//! here or by `Limits` when the sandbox is built, and a value out of range
//! is a usage error, never a panic.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use moonbox::{Determinism, Engine, Limits, Records, Sandbox, SandboxBuilder};

use crate::input;

#[derive(Args)]
pub(crate) struct SandboxArgs {
    /// Lua VM instructions per run (at most 10^12).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_INSTRUCTIONS,
          value_parser = clap::value_parser!(u64).range(1..=Limits::MAX_MAX_INSTRUCTIONS))]
    max_instructions: u64,
    /// Frames on the Lua stack (at most 1000000).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_CALL_DEPTH,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(Limits::MAX_MAX_CALL_DEPTH)))]
    max_call_depth: u32,
    /// Bytes in one string (accepts 16MiB, 512KiB, 1000; 1KiB to 1GiB).
    #[arg(long, value_name = "SIZE", default_value_t = Size(Limits::DEFAULT_MAX_STRING_BYTES))]
    max_string_bytes: Size,
    /// Bytes of Lua heap (accepts 64MiB, 1GiB...; 1MiB to 1GiB).
    #[arg(long, value_name = "SIZE", default_value_t = Size(Limits::DEFAULT_MAX_MEMORY_BYTES))]
    max_memory_bytes: Size,
    /// Wall-clock time per run, reading the script included (accepts 2s,
    /// 500ms, 1m; at most 24h).
    #[arg(long, value_name = "DURATION", default_value_t = Wait(Limits::DEFAULT_TIMEOUT))]
    timeout: Wait,
    /// Wasmtime fuel per run, the outer wall's count of wasm work (at most
    /// 2^60). Fuel is metered only with this flag or --deterministic (it
    /// costs a tenth to a fifth of the speed; the timeout is the outer wall
    /// either way). With --deterministic and no --fuel: derived from
    /// --max-instructions (500 per instruction, at least 5 billion).
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=Limits::MAX_FUEL))]
    fuel: Option<u64>,
    /// Bytes of output per run (print and io.write; at most 1GiB).
    #[arg(long, value_name = "SIZE", default_value_t = Size(Limits::DEFAULT_MAX_OUTPUT_BYTES))]
    max_output_bytes: Size,
    /// Capability calls run at the same time when a script's parallel()
    /// hands over several (at most 1024).
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_CALLS_IN_FLIGHT,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(Limits::MAX_MAX_CALLS_IN_FLIGHT)))]
    max_calls_in_flight: u32,
    /// Largest script or module file read (at most 4GiB).
    #[arg(long, value_name = "SIZE", default_value_t = Size(DEFAULT_MAX_SCRIPT_BYTES))]
    max_script_bytes: Size,
    /// Largest --records file read (at most 4GiB).
    #[arg(long, value_name = "SIZE", default_value_t = Size(DEFAULT_MAX_RECORDS_BYTES))]
    max_records_bytes: Size,
    /// Allow a sandboxed name back, such as os.getenv or io.write (repeatable).
    #[arg(long, value_name = "NAME")]
    allow: Vec<String>,
    /// Fix the clock and seed math.random, and meter fuel, so that a run
    /// depends only on its inputs. The timeout then counts the script's own
    /// time; capability calls have a budget of one timeout of their own.
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
    /// Calls a run may make to each capability: N for every capability,
    /// NAME=N for one (repeatable; 0 to 1000000). A call past it fails with
    /// an error the script can catch. Default: unlimited.
    #[arg(long, value_name = "N|NAME=N", value_parser = parse_budget)]
    call_budget: Vec<(Option<String>, u32)>,
    /// Keep each capability call's arguments in the audit trail (the
    /// report's calls[].args, up to 4096 bytes of JSON per call).
    #[arg(long)]
    audit_args: bool,
}

/// Default --max-script-bytes: 16 MiB of Lua source.
pub(crate) const DEFAULT_MAX_SCRIPT_BYTES: u64 = 16 << 20;
/// Default --max-records-bytes: 256 MiB of JSON.
pub(crate) const DEFAULT_MAX_RECORDS_BYTES: u64 = 256 << 20;

/// A size flag's value in bytes, shown in help with a binary unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Size(pub(crate) u64);

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_size(s).map(Size)
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0;
        for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
            if n != 0 && n.is_multiple_of(1 << shift) {
                return write!(f, "{}{unit}", n >> shift);
            }
        }
        write!(f, "{n}")
    }
}

/// The largest secret file read (a token, a password, an NKey seed).
const MAX_SECRET_FILE_BYTES: u64 = 4096;

/// Reads a secret from a file: UTF-8, at most [`MAX_SECRET_FILE_BYTES`],
/// surrounding whitespace ignored, not empty. `what` names it in errors
/// (`token`, `password`).
pub(crate) fn read_secret(path: &Path, what: &str) -> Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SECRET_FILE_BYTES + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read the {what} file '{}'", path.display()))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_SECRET_FILE_BYTES {
        bail!(
            "the {what} file '{}' is larger than {MAX_SECRET_FILE_BYTES} bytes; it should hold one {what}",
            path.display()
        );
    }
    let Ok(text) = String::from_utf8(bytes) else {
        bail!("the {what} file '{}' is not UTF-8 text", path.display());
    };
    let secret = text.trim();
    if secret.is_empty() {
        bail!("the {what} file '{}' is empty", path.display());
    }
    Ok(secret.to_owned())
}

/// A count from 1 to `max`.
pub(crate) fn parse_count(s: &str, what: &str, max: usize) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of {what}"))?;
    if !(1..=max).contains(&n) {
        return Err(format!("{n} is out of range; use 1 to {max}"));
    }
    Ok(n)
}

/// A duration flag's value, shown in help as `5s` or `500ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wait(pub(crate) Duration);

impl std::str::FromStr for Wait {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_duration(s).map(Wait)
    }
}

impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.0.as_millis();
        if ms.is_multiple_of(1000) {
            write!(f, "{}s", ms / 1000)
        } else {
            write!(f, "{ms}ms")
        }
    }
}

/// Parses a size. Every size flag accepts up to 4 GiB; each limit's own
/// bound is checked when the sandbox is built.
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
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
        .filter(|&b| b <= Limits::MAX_MAX_WASM_MEMORY_BYTES)
        .ok_or_else(|| format!("'{s}' is larger than the most allowed, 4GiB"))?;
    if bytes == 0 {
        return Err("the size must be greater than zero".to_owned());
    }
    Ok(bytes)
}

pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
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

/// The longest `moonbox probe --timeout`: a health check that waits longer
/// than this is no longer checking health.
const MAX_PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// A probe's timeout: a duration of at most [`MAX_PROBE_TIMEOUT`].
pub(crate) fn parse_probe_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d > MAX_PROBE_TIMEOUT {
        return Err(format!("'{s}' is longer than the most allowed, 1m"));
    }
    Ok(d)
}

pub(crate) fn parse_module(s: &str) -> Result<(String, PathBuf), String> {
    match s.split_once('=') {
        Some((name, file)) if !name.is_empty() && !file.is_empty() => {
            Ok((name.to_owned(), PathBuf::from(file)))
        }
        _ => Err(format!(
            "'{s}' is not NAME=FILE, as in --module util=lib/util.lua"
        )),
    }
}

/// Parses `--call-budget N` (every capability) or `NAME=N` (one).
pub(crate) fn parse_budget(s: &str) -> Result<(Option<String>, u32), String> {
    let (name, count) = match s.rsplit_once('=') {
        Some((name, count)) if !name.is_empty() => (Some(name.to_owned()), count),
        Some(_) => {
            return Err(format!(
                "'{s}' has no capability name before '='; use N, or NAME=N as in --call-budget records.get=10"
            ));
        }
        None => (None, s),
    };
    let calls = count
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|&n| n <= Limits::MAX_CALL_BUDGET)
        .ok_or_else(|| {
            format!(
                "'{count}' is not a call budget; use a whole number from 0 to {}, as in --call-budget 100 or --call-budget records.get=10",
                Limits::MAX_CALL_BUDGET
            )
        })?;
    Ok((name, calls))
}

/// The most bytes of JSON one `--input` may hold; larger data belongs in a
/// file read by a capability.
pub(crate) const MAX_INPUT_BYTES: usize = 1 << 20;

/// Parses `--input NAME=JSON`. The name's validity as a Lua identifier is
/// the sandbox's to judge (an invalid_value error naming it).
pub(crate) fn parse_input(s: &str) -> Result<(String, serde_json::Value), String> {
    let Some((name, json)) = s.split_once('=').filter(|(n, _)| !n.is_empty()) else {
        return Err(format!(
            "'{s}' is not NAME=JSON, as in --input n=41 or --input 'user={{\"name\": \"Ada\"}}'"
        ));
    };
    if json.len() > MAX_INPUT_BYTES {
        return Err(format!(
            "input '{name}' is {} bytes; --input takes at most {MAX_INPUT_BYTES} bytes of JSON",
            json.len()
        ));
    }
    let value = serde_json::from_str(json).map_err(|e| {
        format!(
            "input '{name}' is not JSON ({e}); quote a string as JSON: --input '{name}=\"text\"'"
        )
    })?;
    Ok((name.to_owned(), value))
}

/// The command's engine: it caches compiled code in the conventional
/// directory (see `Engine::default_cache_dir`), so that only the first run
/// on a machine compiles the guest. `MOONBOX_CACHE_DIR=` (empty) turns the
/// cache off. A directory named by `MOONBOX_CACHE_DIR` that cannot be used
/// is an error; the default one (under `XDG_CACHE_HOME` or `HOME`) only
/// costs a warning and a run without the cache, so that a read-only or
/// foreign home still runs scripts.
/// With `fuel`, the engine meters fuel (deterministic mode, `--fuel`).
fn engine(fuel: bool, pooling: bool) -> Result<Engine> {
    let builder = Engine::builder().fuel(fuel).pooling_allocator(pooling);
    match builder.build_with_default_cache() {
        Ok((engine, None)) => Ok(engine),
        Ok((engine, Some(e))) => {
            eprintln!(
                "warning: {:#}; running without the cache (set MOONBOX_CACHE_DIR to choose a directory)",
                anyhow::Error::new(e)
            );
            Ok(engine)
        }
        Err(e @ moonbox::Error::Cache { .. }) => bail!(
            "{:#}; set MOONBOX_CACHE_DIR to a private directory, or to nothing to turn the cache off",
            anyhow::Error::new(e)
        ),
        Err(e) => Err(e.into()),
    }
}

impl SandboxArgs {
    /// Reads the script (`-` for stdin) within the size cap and the
    /// timeout; returns it with its chunk name.
    pub(crate) fn read_script(&self, file: &Path) -> Result<(Vec<u8>, String)> {
        let deadline = input::Deadline::after(self.timeout.0);
        let code = input::read(
            file,
            "script",
            self.max_script_bytes.0,
            "--max-script-bytes",
            &deadline,
        )?;
        Ok((code, input::chunk_name(file)))
    }

    /// The largest script the flags allow, in bytes.
    pub(crate) fn max_script_bytes(&self) -> u64 {
        self.max_script_bytes.0
    }

    /// The limits the flags set.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_instructions: self.max_instructions,
            max_call_depth: self.max_call_depth,
            max_string_bytes: self.max_string_bytes.0,
            max_memory_bytes: self.max_memory_bytes.0,
            max_output_bytes: self.max_output_bytes.0,
            fuel: self.fuel,
            timeout: self.timeout.0,
            max_calls_in_flight: self.max_calls_in_flight,
            ..Limits::default()
        }
    }

    /// Reads the records and modules (bounded, within the timeout) and
    /// builds the sandbox.
    pub(crate) fn build(&self) -> Result<Sandbox> {
        Ok(self.builder()?.build()?)
    }

    /// Reads the records and modules (bounded, within the timeout) into a
    /// builder, for a caller that adds capabilities of its own.
    pub(crate) fn builder(&self) -> Result<SandboxBuilder<()>> {
        self.builder_on(false)
    }

    /// [`SandboxArgs::builder`] on an engine with wasmtime's pooling
    /// allocator when `pooling` is set.
    pub(crate) fn builder_on(&self, pooling: bool) -> Result<SandboxBuilder<()>> {
        let limits = self.limits();
        let deadline = input::Deadline::after(self.timeout.0);
        let deterministic = self.deterministic || self.seed.is_some();
        let fuel = deterministic || self.fuel.is_some();
        let mut builder: SandboxBuilder<()> = Sandbox::builder()
            .engine(&engine(fuel, pooling)?)
            .limits(limits);
        for name in &self.allow {
            builder = builder.allow(name);
        }
        if deterministic {
            builder = builder.deterministic(Determinism {
                seed: self.seed.unwrap_or(0),
                ..Determinism::default()
            });
        }
        let mut default_budget = None;
        let mut named = Vec::new();
        for (name, calls) in &self.call_budget {
            match name {
                None if default_budget.is_some() => {
                    bail!("--call-budget N is given twice; give the default budget once")
                }
                None => default_budget = Some(*calls),
                Some(name) if named.contains(name) => {
                    bail!("--call-budget {name}=N is given twice; each capability may appear once")
                }
                Some(name) => {
                    named.push(name.clone());
                    builder = builder.call_budget_for(name, *calls);
                }
            }
        }
        if let Some(calls) = default_budget {
            builder = builder.call_budget(calls);
        }
        builder = builder.audit_args(self.audit_args);
        if let Some(path) = &self.records {
            let bytes = input::read(
                path,
                "records",
                self.max_records_bytes.0,
                "--max-records-bytes",
                &deadline,
            )?;
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
            let source = input::read(
                file,
                &what,
                self.max_script_bytes.0,
                "--max-script-bytes",
                &deadline,
            )?;
            builder = builder.module(name, source);
        }
        Ok(builder)
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
    fn defaults_show_in_the_units_users_type() {
        assert_eq!(Size(Limits::DEFAULT_MAX_MEMORY_BYTES).to_string(), "64MiB");
        assert_eq!(Size(1536).to_string(), "1536");
        assert_eq!(Size(1 << 30).to_string(), "1GiB");
        assert_eq!(Wait(Limits::DEFAULT_TIMEOUT).to_string(), "5s");
        assert_eq!(Wait(Duration::from_millis(1500)).to_string(), "1500ms");
        for shown in ["64MiB", "1536", "1GiB"] {
            assert_eq!(
                shown.parse::<Size>().map(|s| s.to_string()).as_deref(),
                Ok(shown)
            );
        }
    }

    #[test]
    fn inputs_are_name_equals_json() {
        assert_eq!(
            parse_input("n=41"),
            Ok(("n".to_owned(), serde_json::json!(41)))
        );
        assert_eq!(
            parse_input(r#"u={"a":[1]}"#),
            Ok(("u".to_owned(), serde_json::json!({"a": [1]})))
        );
        assert!(parse_input("s=text").unwrap_err().contains("not JSON"));
        assert!(parse_input("=1").unwrap_err().contains("NAME=JSON"));
        assert!(parse_input("n").is_err());
        let big = format!("n=\"{}\"", "x".repeat(MAX_INPUT_BYTES));
        assert!(parse_input(&big).unwrap_err().contains("at most"));
    }

    #[test]
    fn call_budgets_are_a_number_or_name_equals_number_within_bounds() {
        assert_eq!(parse_budget("5"), Ok((None, 5)));
        assert_eq!(parse_budget("0"), Ok((None, 0)));
        assert_eq!(
            parse_budget("records.get=10"),
            Ok((Some("records.get".to_owned()), 10))
        );
        assert_eq!(
            parse_budget(&Limits::MAX_CALL_BUDGET.to_string()),
            Ok((None, Limits::MAX_CALL_BUDGET))
        );
        for bad in [
            "",
            "-1",
            "lots",
            "1000001",
            "99999999999999999999",
            "a=",
            "a=x",
        ] {
            let err = parse_budget(bad).unwrap_err();
            assert!(err.contains("from 0 to 1000000"), "{bad}: {err}");
        }
        assert!(
            parse_budget("=3")
                .unwrap_err()
                .contains("no capability name")
        );
    }

    #[test]
    fn modules_need_name_and_file() {
        assert_eq!(
            parse_module("util=lib/util.lua"),
            Ok(("util".into(), PathBuf::from("lib/util.lua")))
        );
        assert!(parse_module("util").is_err());
        assert!(parse_module("=x.lua").is_err());
    }
}
