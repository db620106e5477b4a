//! The sandbox flags shared by `run`, `check` and `tool-schema`, and the
//! parsers of their values. Every numeric flag has an upper bound, checked
//! here or by `Limits` when the sandbox is built, and a value out of range
//! is a usage error, never a panic.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use moonbox::{Determinism, Limits, Records, Sandbox, SandboxBuilder};

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
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "16MiB")]
    max_string_bytes: u64,
    /// Bytes of Lua heap (accepts 64MiB, 1GiB...; 1MiB to 1GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64MiB")]
    memory: u64,
    /// Wall-clock time per run, reading the script included (accepts 2s,
    /// 500ms, 1m; at most 24h).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    timeout: Duration,
    /// Wasmtime fuel per run, the outer wall's count of wasm work (at most
    /// 2^60). Default: derived from --max-instructions (500 per instruction
    /// plus 10 million), so raising the instruction limit raises it too.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=Limits::MAX_FUEL))]
    fuel: Option<u64>,
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
        .filter(|&b| b <= Limits::MAX_WASM_MEMORY)
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

pub(crate) fn parse_module(s: &str) -> Result<(String, PathBuf), String> {
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
    /// Reads the script (`-` for stdin) within the size cap and the
    /// timeout; returns it with its chunk name.
    pub(crate) fn read_script(&self, file: &Path) -> Result<(Vec<u8>, String)> {
        let deadline = input::Deadline::after(self.timeout);
        let code = input::read(
            file,
            "script",
            self.max_script_bytes,
            "--max-script-bytes",
            &deadline,
        )?;
        Ok((code, input::chunk_name(file)))
    }

    /// The limits the flags set.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_instructions: self.max_instructions,
            max_call_depth: self.max_call_depth,
            max_string_bytes: self.max_string_bytes,
            memory: self.memory,
            max_output_bytes: self.max_output_bytes,
            fuel: self.fuel.unwrap_or(0),
            timeout: self.timeout,
            ..Limits::default()
        }
    }

    /// Reads the records and modules (bounded, within the timeout) and
    /// builds the sandbox.
    pub(crate) fn build(&self) -> Result<Sandbox> {
        let limits = self.limits();
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
            let bytes = input::read(
                path,
                "records",
                self.max_records_bytes,
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
                self.max_script_bytes,
                "--max-script-bytes",
                &deadline,
            )?;
            builder = builder.module(name, source);
        }
        Ok(builder.build()?)
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
