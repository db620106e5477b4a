//! Per-eval limits: the guest's deterministic ones and the host's outer wall.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::contract;

/// The limits every eval runs under. Every limit is finite.
///
/// The first six are enforced inside the guest, deterministically: the same
/// script trips them at the same point on every run. The last three are the
/// host's outer wall, which also stops work the guest cannot see, such as a
/// pattern match backtracking inside one C call.
///
/// A tripped limit cannot be caught by `pcall`: the eval ends with the
/// limit's [`ErrorKind`](crate::ErrorKind).
///
/// ```
/// use std::time::Duration;
/// use moonbox::Limits;
///
/// let limits = Limits {
///     max_instructions: 1_000_000,
///     timeout: Duration::from_millis(500),
///     ..Limits::default()
/// };
/// assert_eq!(limits.max_memory_bytes, Limits::DEFAULT_MAX_MEMORY_BYTES);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Lua VM instructions per eval, in every coroutine, checked at loop
    /// back-edges and function entries, so an eval stops within one loop
    /// iteration of the limit. Trips [`ErrorKind::InstructionLimit`](crate::ErrorKind::InstructionLimit).
    ///
    /// Default: [`Limits::DEFAULT_MAX_INSTRUCTIONS`].
    pub max_instructions: u64,
    /// Frames on one Lua stack, checked every 1,000 instructions (a tight
    /// recursion may pass it by a few hundred frames before it stops). Trips
    /// [`ErrorKind::CallDepth`](crate::ErrorKind::CallDepth).
    ///
    /// Default: [`Limits::DEFAULT_MAX_CALL_DEPTH`].
    pub max_call_depth: u32,
    /// Bytes in one string, checked before the string is allocated. Trips
    /// [`ErrorKind::StringSize`](crate::ErrorKind::StringSize).
    ///
    /// Default: [`Limits::DEFAULT_MAX_STRING_BYTES`].
    pub max_string_bytes: u64,
    /// Bytes the Lua heap may hold. Trips
    /// [`ErrorKind::MemoryLimit`](crate::ErrorKind::MemoryLimit).
    ///
    /// Default: [`Limits::DEFAULT_MAX_MEMORY_BYTES`].
    pub max_memory_bytes: u64,
    /// Bytes of output per eval: everything `print` (tabs and newline
    /// included), `io.write` and `io.stdout:write` write. The write that
    /// passes it is cut at the limit, then trips
    /// [`ErrorKind::OutputLimit`](crate::ErrorKind::OutputLimit).
    ///
    /// Default: [`Limits::DEFAULT_MAX_OUTPUT_BYTES`].
    pub max_output_bytes: u64,
    /// Nesting depth of a value crossing the JSON boundary (results and
    /// capability arguments) or converted by the script's `json` library.
    /// Deeper values are
    /// [`ErrorKind::InvalidValue`](crate::ErrorKind::InvalidValue), a
    /// capability error, or an error `json.encode` or `json.decode`
    /// raises.
    ///
    /// Default: [`Limits::DEFAULT_MAX_VALUE_DEPTH`].
    pub max_value_depth: u32,
    /// Wasmtime fuel per call into the guest (roughly one unit per wasm
    /// instruction): each eval gets this budget, and so does starting an
    /// instance. Trips
    /// [`ErrorKind::FuelExhausted`](crate::ErrorKind::FuelExhausted).
    /// Counted only when the sandbox's engine meters fuel
    /// ([`EngineBuilder::fuel`](crate::EngineBuilder::fuel)): in
    /// deterministic mode, or when this limit is set. Without fuel the
    /// timeout is the outer wall.
    ///
    /// `None`, the default, derives the fuel from
    /// [`Limits::max_instructions`] (see [`Limits::effective_fuel`]), so
    /// that raising the instruction limit raises the outer wall with it and
    /// a user meets one budget. `Some(n)` is used as given. In JSON, a
    /// missing or `null` `fuel` is `None`.
    ///
    /// Default: `None` (derived; [`Limits::DEFAULT_FUEL`] for the default
    /// instruction limit).
    pub fuel: Option<u64>,
    /// Wall-clock time per call into the guest, including time spent in
    /// capabilities; each eval gets this budget, and so does starting an
    /// instance. Trips [`ErrorKind::Timeout`](crate::ErrorKind::Timeout). Checked every
    /// few milliseconds.
    ///
    /// Default: [`Limits::DEFAULT_TIMEOUT`].
    #[serde(with = "duration_ms")]
    pub timeout: Duration,
    /// Bytes of wasm linear memory the instance may grow to: the Lua heap
    /// plus the guest's own buffers (JSON text). Trips
    /// [`ErrorKind::MemoryLimit`](crate::ErrorKind::MemoryLimit).
    ///
    /// `None`, the default, derives it from the heap: `2 * max_memory_bytes
    /// + 16 MiB` (see [`Limits::effective_max_wasm_memory_bytes`]). In
    /// JSON, a missing or `null` `max_wasm_memory_bytes` is `None`.
    ///
    /// Default: `None` (derived).
    pub max_wasm_memory_bytes: Option<u64>,
    /// Capability calls the host runs at the same time for one eval. A
    /// script's `parallel` hands the host its waiting calls as one batch;
    /// past this bound, the rest of the batch waits for a call to finish.
    /// The results reach the script in the same order whatever the bound.
    ///
    /// Default: [`Limits::DEFAULT_MAX_CALLS_IN_FLIGHT`].
    pub max_calls_in_flight: u32,
}

/// The largest value each limit accepts; building a sandbox refuses more
/// with a message that names the limit. Every bound and default is
/// declared once, in `wit/contract.toml`, which every host and the guest
/// follow.
impl Limits {
    /// Most [`Limits::max_instructions`]: a trillion, hours of Lua.
    pub const MAX_MAX_INSTRUCTIONS: u64 = contract::MAX_MAX_INSTRUCTIONS;
    /// Most [`Limits::max_call_depth`]: Lua's own stack holds a million
    /// slots, so deeper is never reached.
    pub const MAX_MAX_CALL_DEPTH: u32 = contract::MAX_MAX_CALL_DEPTH;
    /// Most [`Limits::max_string_bytes`]: 1 GiB.
    pub const MAX_MAX_STRING_BYTES: u64 = contract::MAX_MAX_STRING_BYTES;
    /// Most [`Limits::max_memory_bytes`]: 1 GiB, so that the linear memory around
    /// it stays within wasm32's 4 GiB.
    pub const MAX_MAX_MEMORY_BYTES: u64 = contract::MAX_MAX_MEMORY_BYTES;
    /// Most [`Limits::max_output_bytes`]: 1 GiB.
    pub const MAX_MAX_OUTPUT_BYTES: u64 = contract::MAX_MAX_OUTPUT_BYTES;
    /// Most [`Limits::max_value_depth`]: JSON parsers on both sides stop at
    /// 128 levels.
    pub const MAX_MAX_VALUE_DEPTH: u32 = contract::MAX_MAX_VALUE_DEPTH;
    /// Most [`Limits::fuel`].
    pub const MAX_FUEL: u64 = contract::MAX_FUEL;
    /// Most [`Limits::timeout`]: one day.
    pub const MAX_TIMEOUT: Duration = Duration::from_millis(contract::MAX_TIMEOUT_MS);
    /// Most [`Limits::max_wasm_memory_bytes`]: wasm32's 4 GiB.
    pub const MAX_MAX_WASM_MEMORY_BYTES: u64 = contract::MAX_MAX_WASM_MEMORY_BYTES;
    /// Most [`Limits::max_calls_in_flight`].
    pub const MAX_MAX_CALLS_IN_FLIGHT: u32 = contract::MAX_MAX_CALLS_IN_FLIGHT;
    /// Least [`Limits::max_memory_bytes`]: what a session needs to start.
    pub const MIN_MAX_MEMORY_BYTES: u64 = contract::MIN_MAX_MEMORY_BYTES;
    /// Least [`Limits::max_string_bytes`]: opening the standard library
    /// interns strings of a few hundred bytes.
    pub const MIN_MAX_STRING_BYTES: u64 = contract::MIN_MAX_STRING_BYTES;
}

impl Limits {
    /// Default [`Limits::max_instructions`]: ten million, about a tenth of
    /// a second of Lua.
    pub const DEFAULT_MAX_INSTRUCTIONS: u64 = contract::DEFAULT_MAX_INSTRUCTIONS;
    /// Default [`Limits::max_call_depth`].
    pub const DEFAULT_MAX_CALL_DEPTH: u32 = contract::DEFAULT_MAX_CALL_DEPTH;
    /// Default [`Limits::max_string_bytes`]: 16 MiB.
    pub const DEFAULT_MAX_STRING_BYTES: u64 = contract::DEFAULT_MAX_STRING_BYTES;
    /// Default [`Limits::max_memory_bytes`]: 64 MiB.
    pub const DEFAULT_MAX_MEMORY_BYTES: u64 = contract::DEFAULT_MAX_MEMORY_BYTES;
    /// Default [`Limits::max_output_bytes`]: 1 MiB.
    pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = contract::DEFAULT_MAX_OUTPUT_BYTES;
    /// Default [`Limits::max_value_depth`].
    pub const DEFAULT_MAX_VALUE_DEPTH: u32 = contract::DEFAULT_MAX_VALUE_DEPTH;
    /// Fuel derived per Lua instruction when [`Limits::fuel`] is `None`. A plain
    /// loop costs about 90 fuel per instruction; the margin leaves room for
    /// instructions that do more work in the C library (string building,
    /// table resizing, conversions), so the instruction limit, not fuel,
    /// stops ordinary Lua.
    pub const FUEL_PER_INSTRUCTION: u64 = contract::FUEL_PER_INSTRUCTION;
    /// The least fuel derived, whatever the instruction limit: five
    /// billion, several seconds of wasm. A small instruction limit keeps this
    /// much room for work in the C library (building strings, loading
    /// chunks), so that the guest's own limits, which leave a session
    /// usable, stop a script before the outer wall does.
    pub const DEFAULT_FUEL: u64 = contract::DEFAULT_FUEL;
    /// Default [`Limits::timeout`]: five seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(contract::DEFAULT_TIMEOUT_MS);
    /// Default [`Limits::max_calls_in_flight`].
    pub const DEFAULT_MAX_CALLS_IN_FLIGHT: u32 = contract::DEFAULT_MAX_CALLS_IN_FLIGHT;

    /// The fuel each call into the guest gets: [`Limits::fuel`], or when it
    /// is `None`, [`Limits::FUEL_PER_INSTRUCTION`] for each of
    /// [`Limits::max_instructions`], and never less than
    /// [`Limits::DEFAULT_FUEL`].
    ///
    /// ```
    /// use moonbox::Limits;
    /// assert_eq!(Limits::default().effective_fuel(), Limits::DEFAULT_FUEL);
    /// let limits = Limits { max_instructions: 1_000_000_000, ..Limits::default() };
    /// assert_eq!(limits.effective_fuel(), 500_000_000_000);
    /// let explicit = Limits { fuel: Some(1_000_000), ..limits };
    /// assert_eq!(explicit.effective_fuel(), 1_000_000);
    /// ```
    pub fn effective_fuel(&self) -> u64 {
        self.fuel.unwrap_or_else(|| {
            self.max_instructions
                .saturating_mul(Self::FUEL_PER_INSTRUCTION)
                .clamp(Self::DEFAULT_FUEL, Self::MAX_FUEL)
        })
    }

    /// The linear memory each instance may grow to:
    /// [`Limits::max_wasm_memory_bytes`], or when it is `None`,
    /// `2 * max_memory_bytes + 16 MiB`.
    ///
    /// ```
    /// use moonbox::Limits;
    /// assert_eq!(Limits::default().effective_max_wasm_memory_bytes(), 144 << 20);
    /// let explicit = Limits { max_wasm_memory_bytes: Some(80 << 20), ..Limits::default() };
    /// assert_eq!(explicit.effective_max_wasm_memory_bytes(), 80 << 20);
    /// ```
    pub fn effective_max_wasm_memory_bytes(&self) -> u64 {
        self.max_wasm_memory_bytes.unwrap_or_else(|| {
            self.max_memory_bytes
                .saturating_mul(contract::WASM_MEMORY_FACTOR)
                .saturating_add(contract::WASM_MEMORY_EXTRA_BYTES)
        })
    }

    /// The most memory one eval can make the host hold, in bytes, on top
    /// of what the engine and the compiled guest hold before it starts:
    ///
    /// - twice the linear memory ([`Limits::effective_max_wasm_memory_bytes`]):
    ///   the instance's own, and what is copied out of it (capability
    ///   arguments, log events, the returned values' text, the error);
    /// - three times the Lua heap's limit ([`Limits::max_memory_bytes`]): the
    ///   trees parsed from capability arguments (the calls in flight share
    ///   one budget of that size), the replies of the calls in flight, and
    ///   the trees of the log events' fields; the returned values are parsed
    ///   within the same budget as arguments, once no call is in flight;
    /// - twice [`Limits::max_output_bytes`]: the output and the log events
    ///   kept.
    ///
    /// Error messages and tracebacks are cut to at most 64 KiB each, and a
    /// sandbox that keeps arguments in its audit trail
    /// ([`SandboxBuilder::audit_args`](crate::SandboxBuilder::audit_args))
    /// keeps at most 64 MiB of them
    /// ([`Limits::MAX_RECORDED_ARG_TREE_BYTES`](crate::Limits::MAX_RECORDED_ARG_TREE_BYTES)
    /// for each of [`Limits::MAX_CALL_RECORDS`](crate::Limits::MAX_CALL_RECORDS)). Each
    /// bound is enforced where the data is made, with an error that names
    /// its limit; `tests/all/host_memory.rs` drives each one to its bound
    /// and measures the process's peak resident memory against this sum.
    ///
    /// ```
    /// let limits = moonbox::Limits::default();
    /// // 64 MiB of heap: 2 * 144 MiB + 3 * 64 MiB + 2 * 1 MiB.
    /// assert_eq!(limits.max_host_bytes_per_eval(), 482 << 20);
    /// ```
    pub fn max_host_bytes_per_eval(&self) -> u64 {
        self.effective_max_wasm_memory_bytes()
            .saturating_mul(2)
            .saturating_add(self.max_memory_bytes.saturating_mul(3))
            .saturating_add(self.max_output_bytes.saturating_mul(2))
    }

    /// Checks that every limit is usable: non-zero, within its documented
    /// bound, and a linear memory large enough for the Lua heap. Never
    /// panics, whatever the values. Building a sandbox runs the same check;
    /// bindings for other languages use it to refuse bad limits as they are
    /// made.
    ///
    /// # Errors
    /// A [`LimitError`] for the first limit out of bounds: its name, and a
    /// sentence that names it and its bound.
    ///
    /// ```
    /// let limits = moonbox::Limits { max_call_depth: 0, ..moonbox::Limits::default() };
    /// let err = limits.validate().unwrap_err();
    /// assert_eq!(err.limit(), "max_call_depth");
    /// assert_eq!(err.to_string(), "limit max_call_depth must be greater than zero");
    /// ```
    pub fn validate(&self) -> Result<(), LimitError> {
        for (rule, value) in contract::LIMITS.iter().zip(self.contract_values()) {
            let Some(value) = value else { continue };
            let unit = if rule.unit == "milliseconds" {
                " ms"
            } else {
                ""
            };
            let name = rule.name;
            if value == 0 {
                return Err(LimitError::zero(name));
            }
            if value < rule.min {
                return Err(LimitError::new(
                    name,
                    format!(
                        "limit {name} must be at least {}{unit}, got {value}{unit}",
                        rule.min
                    ),
                ));
            }
            if value > rule.max {
                return Err(LimitError::new(
                    name,
                    format!(
                        "limit {name} must be at most {}{unit}, got {value}{unit}",
                        rule.max
                    ),
                ));
            }
        }
        if self.effective_max_wasm_memory_bytes()
            < self
                .max_memory_bytes
                .saturating_add(contract::WASM_MEMORY_HEADROOM_BYTES)
        {
            return Err(LimitError::new(
                "max_wasm_memory_bytes",
                format!(
                    "limit max_wasm_memory_bytes ({} bytes) must exceed max_memory_bytes ({} bytes) by at least {} MiB",
                    self.effective_max_wasm_memory_bytes(),
                    self.max_memory_bytes,
                    contract::WASM_MEMORY_HEADROOM_BYTES >> 20
                ),
            ));
        }
        Ok(())
    }

    /// Each limit's value in its unit, in the order of
    /// [`contract::LIMITS`]; `None` where the limit is derived. A timeout
    /// counts whole milliseconds, rounded up, so that any non-zero
    /// duration is at least one.
    fn contract_values(&self) -> [Option<u64>; contract::LIMITS.len()] {
        let timeout_ms = self.timeout.as_nanos().div_ceil(1_000_000);
        [
            Some(self.max_instructions),
            Some(u64::from(self.max_call_depth)),
            Some(self.max_string_bytes),
            Some(self.max_memory_bytes),
            Some(self.max_output_bytes),
            Some(u64::from(self.max_value_depth)),
            self.fuel,
            Some(u64::try_from(timeout_ms).unwrap_or(u64::MAX)),
            self.max_wasm_memory_bytes,
            Some(u64::from(self.max_calls_in_flight)),
        ]
    }
}

/// The bounds of what is not a [`Limits`] field: capability arity, call
/// budgets, the audit trail and script inputs. Kept here, beside the
/// limits' own bounds, so that every bound is in one place.
impl Limits {
    /// The most arguments a capability may declare with
    /// [`Capability::with_arity`](crate::Capability::with_arity); building a sandbox refuses more.
    pub const MAX_CAPABILITY_ARGS: u32 = 255;
    /// The largest call budget a sandbox accepts, for the default and for each
    /// capability.
    pub const MAX_CALL_BUDGET: u32 = 1_000_000;
    /// The most call records one eval keeps. Calls past it still run (within
    /// their budgets) and are counted in
    /// [`Stats::calls_unrecorded`](crate::Stats::calls_unrecorded).
    pub const MAX_CALL_RECORDS: usize = 1000;
    /// The most bytes of JSON a recorded call's arguments may take to be kept
    /// in [`CallRecord::args`](crate::CallRecord::args) (when the host opted in with
    /// [`SandboxBuilder::audit_args`](crate::SandboxBuilder::audit_args)).
    /// Larger arguments are left out; [`CallRecord::arg_bytes`](crate::CallRecord::arg_bytes) still says how
    /// large they were. Arguments whose parsed values take more than
    /// [`Limits::MAX_RECORDED_ARG_TREE_BYTES`] on the host are left out too.
    pub const MAX_RECORDED_ARG_BYTES: u64 = 4096;
    /// The most host memory a recorded call's parsed arguments may take to be
    /// kept (by the estimate the host parses arguments with): 4 KiB of text can
    /// stand for a hundred times that as values (`[{"":0},...]`). With
    /// [`Limits::MAX_CALL_RECORDS`], this bounds the arguments an eval's
    /// audit trail keeps to 64 MiB.
    pub const MAX_RECORDED_ARG_TREE_BYTES: u64 = 64 << 10;
    /// The most inputs one eval takes; more data belongs in one table.
    pub const MAX_INPUTS: usize = 1024;
    /// The most arguments one eval takes ([`Script::args`](crate::Script::args);
    /// `wit/contract.toml`).
    pub const MAX_ARGS: usize = crate::contract::MAX_ARGS as usize;
    /// The most files a session's namespace holds, mounted and written
    /// together (`wit/contract.toml`); a script that would create one more
    /// trips `memory_limit`.
    pub const MAX_FILES: usize = crate::contract::MAX_FILES as usize;
    /// The longest file name, in bytes.
    pub const MAX_FILE_NAME_BYTES: usize = crate::contract::MAX_FILE_NAME_BYTES as usize;
}

/// Why [`Limits::validate`] refused a set of limits: the limit, and a
/// sentence that names it and its bound
/// (`limit max_call_depth must be greater than zero`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LimitError {
    limit: &'static str,
    message: String,
}

impl LimitError {
    fn new(limit: &'static str, message: String) -> Self {
        LimitError { limit, message }
    }

    fn zero(limit: &'static str) -> Self {
        Self::new(limit, format!("limit {limit} must be greater than zero"))
    }

    /// The [`Limits`] field out of bounds, by its name (`max_call_depth`).
    pub fn limit(&self) -> &'static str {
        self.limit
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_instructions: Self::DEFAULT_MAX_INSTRUCTIONS,
            max_call_depth: Self::DEFAULT_MAX_CALL_DEPTH,
            max_string_bytes: Self::DEFAULT_MAX_STRING_BYTES,
            max_memory_bytes: Self::DEFAULT_MAX_MEMORY_BYTES,
            max_output_bytes: Self::DEFAULT_MAX_OUTPUT_BYTES,
            max_value_depth: Self::DEFAULT_MAX_VALUE_DEPTH,
            fuel: None,
            timeout: Self::DEFAULT_TIMEOUT,
            max_wasm_memory_bytes: None,
            max_calls_in_flight: Self::DEFAULT_MAX_CALLS_IN_FLIGHT,
        }
    }
}

mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_finite_and_valid() {
        let limits = Limits::default();
        assert_eq!(limits.validate(), Ok(()));
        assert_eq!(
            limits.effective_max_wasm_memory_bytes(),
            2 * Limits::DEFAULT_MAX_MEMORY_BYTES + (16 << 20)
        );
    }

    #[test]
    fn zero_limits_are_refused_by_name() {
        let limits = Limits {
            max_instructions: 0,
            ..Limits::default()
        };
        assert_eq!(
            limits.validate().map_err(|e| e.to_string()),
            Err("limit max_instructions must be greater than zero".into())
        );
        let limits = Limits {
            timeout: Duration::ZERO,
            ..Limits::default()
        };
        assert_eq!(
            limits.validate().map_err(|e| e.to_string()),
            Err("limit timeout must be greater than zero".into())
        );
    }

    /// A small xorshift generator: the property test below needs spread,
    /// not cryptographic quality, and no extra dependency.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Values at and around every boundary, and random ones.
    fn pick(state: &mut u64) -> u64 {
        const EDGES: &[u64] = &[
            0,
            1,
            1 << 10,
            1 << 20,
            1 << 30,
            (1 << 30) + 1,
            4 << 30,
            1 << 60,
            (1 << 60) + 1,
            u64::MAX / 2,
            u64::MAX - 1,
            u64::MAX,
        ];
        let r = next(state);
        if r.is_multiple_of(3) {
            EDGES[(r / 3) as usize % EDGES.len()]
        } else {
            next(state) >> (r % 64)
        }
    }

    #[test]
    fn no_limits_value_panics_and_accepted_ones_are_in_bounds() {
        let mut state = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            let limits = Limits {
                max_instructions: pick(&mut state),
                max_call_depth: pick(&mut state) as u32,
                max_string_bytes: pick(&mut state),
                max_memory_bytes: pick(&mut state),
                max_output_bytes: pick(&mut state),
                max_value_depth: pick(&mut state) as u32,
                fuel: Some(pick(&mut state)).filter(|_| !next(&mut state).is_multiple_of(4)),
                timeout: Duration::from_millis(pick(&mut state)),
                max_wasm_memory_bytes: Some(pick(&mut state))
                    .filter(|_| !next(&mut state).is_multiple_of(4)),
                max_calls_in_flight: pick(&mut state) as u32,
            };
            let verdict = limits.validate();
            let wasm = limits.effective_max_wasm_memory_bytes();
            if verdict.is_ok() {
                assert!(limits.max_instructions <= Limits::MAX_MAX_INSTRUCTIONS);
                assert!(limits.max_memory_bytes <= Limits::MAX_MAX_MEMORY_BYTES);
                assert!(limits.timeout <= Limits::MAX_TIMEOUT);
                assert!(wasm <= Limits::MAX_MAX_WASM_MEMORY_BYTES);
                assert!(
                    std::time::Instant::now()
                        .checked_add(limits.timeout)
                        .is_some()
                );
            }
        }
    }

    #[test]
    fn out_of_range_limits_are_refused_by_name_and_bound() {
        let limits = Limits {
            timeout: Duration::from_secs(u64::MAX),
            ..Limits::default()
        };
        assert_eq!(
            limits.validate().map_err(|e| e.to_string()),
            Err(format!(
                "limit timeout must be at most 86400000 ms, got {} ms",
                u64::MAX
            ))
        );
        let limits = Limits {
            max_value_depth: 101,
            ..Limits::default()
        };
        assert_eq!(
            limits.validate().map_err(|e| e.to_string()),
            Err("limit max_value_depth must be at most 100, got 101".into())
        );
        let limits = Limits {
            max_string_bytes: 100,
            ..Limits::default()
        };
        assert_eq!(
            limits.validate().map_err(|e| e.to_string()),
            Err("limit max_string_bytes must be at least 1024, got 100".into())
        );
    }

    /// `contract_values` lists the fields in the contract's order: pushing
    /// each field past its bound alone is refused under that field's name.
    #[test]
    fn every_limit_is_checked_under_its_contract_name() {
        let over = |i: usize| {
            let mut limits = Limits::default();
            let rule = contract::LIMITS[i];
            let big = rule.max.saturating_add(1);
            match rule.name {
                "max_instructions" => limits.max_instructions = big,
                "max_call_depth" => limits.max_call_depth = u32::try_from(big).unwrap(),
                "max_string_bytes" => limits.max_string_bytes = big,
                "max_memory_bytes" => limits.max_memory_bytes = big,
                "max_output_bytes" => limits.max_output_bytes = big,
                "max_value_depth" => limits.max_value_depth = u32::try_from(big).unwrap(),
                "fuel" => limits.fuel = Some(big),
                "timeout" => limits.timeout = Duration::from_millis(big),
                "max_wasm_memory_bytes" => limits.max_wasm_memory_bytes = Some(big),
                "max_calls_in_flight" => limits.max_calls_in_flight = u32::try_from(big).unwrap(),
                other => panic!("the contract names a limit Limits lacks: {other}"),
            }
            limits
        };
        for (i, rule) in contract::LIMITS.iter().enumerate() {
            let err = over(i).validate().unwrap_err();
            assert_eq!(err.limit(), rule.name);
            let err = err.to_string();
            assert!(
                err.starts_with(&format!("limit {} must be at most {}", rule.name, rule.max)),
                "{}: {err}",
                rule.name
            );
        }
        // Every serialised field is a contract limit.
        let json = serde_json::to_value(Limits::default()).unwrap();
        let mut fields: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut names: Vec<&str> = contract::LIMITS.iter().map(|r| r.name).collect();
        fields.sort_unstable();
        names.sort_unstable();
        assert_eq!(fields, names);
    }

    #[test]
    fn derived_limits_are_none_in_rust_and_absent_or_null_in_json() {
        let absent: Limits = serde_json::from_str("{}").unwrap();
        let null: Limits =
            serde_json::from_str(r#"{"fuel": null, "max_wasm_memory_bytes": null}"#).unwrap();
        assert_eq!(absent, Limits::default());
        assert_eq!(null, Limits::default());
        assert_eq!((absent.fuel, absent.max_wasm_memory_bytes), (None, None));
        let set: Limits =
            serde_json::from_str(r#"{"fuel": 7, "max_wasm_memory_bytes": 83886080}"#).unwrap();
        assert_eq!(
            (set.fuel, set.max_wasm_memory_bytes),
            (Some(7), Some(80 << 20))
        );
        let zero = Limits {
            fuel: Some(0),
            ..Limits::default()
        };
        assert_eq!(
            zero.validate().map_err(|e| e.to_string()),
            Err("limit fuel must be greater than zero".into())
        );
    }

    #[test]
    fn linear_memory_must_hold_the_heap() {
        let limits = Limits {
            max_memory_bytes: 64 << 20,
            max_wasm_memory_bytes: Some(65 << 20),
            ..Limits::default()
        };
        assert!(
            limits
                .validate()
                .unwrap_err()
                .to_string()
                .contains("must exceed max_memory_bytes")
        );
    }
}
