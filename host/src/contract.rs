//! The contract's rules: error kinds, limits and shared constants.
//!
//! Generated from wit/contract.toml by `python3 wit/contract.py`; do not edit.

#![allow(dead_code, reason = "each host reads the part of the table it needs")]

/// The WIT package the rules belong to.
pub(crate) const PACKAGE: &str = "moonbox:sandbox@0.5.0";

/// One error kind's rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ErrorKindRule {
    /// The name in `snake_case`, as reports and `error[...]` lines spell it.
    pub(crate) name: &'static str,
    /// Whether the guest reports it (a case of the WIT `error-kind`).
    pub(crate) guest: bool,
    /// Whether a limit stopped the script, rather than an error in it.
    pub(crate) limit: bool,
    /// The exit status of `moonbox run` when an eval ends with it.
    pub(crate) exit_code: u8,
}

/// Every error kind, the guest's first, in the order of the WIT enum.
pub(crate) const ERROR_KINDS: [ErrorKindRule; 15] = [
    ErrorKindRule {
        name: "syntax",
        guest: true,
        limit: false,
        exit_code: 1,
    },
    ErrorKindRule {
        name: "runtime",
        guest: true,
        limit: false,
        exit_code: 1,
    },
    ErrorKindRule {
        name: "sandboxed",
        guest: true,
        limit: false,
        exit_code: 1,
    },
    ErrorKindRule {
        name: "capability",
        guest: true,
        limit: false,
        exit_code: 1,
    },
    ErrorKindRule {
        name: "instruction_limit",
        guest: true,
        limit: true,
        exit_code: 3,
    },
    ErrorKindRule {
        name: "call_depth",
        guest: true,
        limit: true,
        exit_code: 3,
    },
    ErrorKindRule {
        name: "memory_limit",
        guest: true,
        limit: true,
        exit_code: 3,
    },
    ErrorKindRule {
        name: "string_size",
        guest: true,
        limit: true,
        exit_code: 3,
    },
    ErrorKindRule {
        name: "output_limit",
        guest: true,
        limit: true,
        exit_code: 3,
    },
    ErrorKindRule {
        name: "invalid_value",
        guest: true,
        limit: false,
        exit_code: 1,
    },
    ErrorKindRule {
        name: "fuel_exhausted",
        guest: false,
        limit: true,
        exit_code: 3,
    },
    ErrorKindRule {
        name: "timeout",
        guest: false,
        limit: true,
        exit_code: 3,
    },
    ErrorKindRule {
        name: "session_poisoned",
        guest: false,
        limit: false,
        exit_code: 2,
    },
    ErrorKindRule {
        name: "cancelled",
        guest: false,
        limit: false,
        exit_code: 2,
    },
    ErrorKindRule {
        name: "internal",
        guest: false,
        limit: false,
        exit_code: 2,
    },
];

/// How many of [`ERROR_KINDS`] the guest reports.
pub(crate) const GUEST_ERROR_KINDS: usize = 10;

/// One limit's rule. Values are in the limit's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LimitRule {
    /// The name in `snake_case` (the WIT field's name in kebab-case).
    pub(crate) name: &'static str,
    /// Whether the guest enforces it (a field of the WIT `limits`).
    pub(crate) guest: bool,
    /// What it counts.
    pub(crate) unit: &'static str,
    /// The default, or `None` when it is derived from other limits.
    pub(crate) default: Option<u64>,
    /// The least value accepted.
    pub(crate) min: u64,
    /// The most value accepted.
    pub(crate) max: u64,
}

/// Every limit, the guest's first, in the order of the WIT record.
pub(crate) const LIMITS: [LimitRule; 10] = [
    LimitRule {
        name: "max_instructions",
        guest: true,
        unit: "instructions",
        default: Some(10_000_000),
        min: 1,
        max: 1_000_000_000_000,
    },
    LimitRule {
        name: "max_call_depth",
        guest: true,
        unit: "frames",
        default: Some(1_000),
        min: 1,
        max: 1_000_000,
    },
    LimitRule {
        name: "max_string_bytes",
        guest: true,
        unit: "bytes",
        default: Some(16_777_216),
        min: 1_024,
        max: 1_073_741_824,
    },
    LimitRule {
        name: "max_memory_bytes",
        guest: true,
        unit: "bytes",
        default: Some(67_108_864),
        min: 1_048_576,
        max: 1_073_741_824,
    },
    LimitRule {
        name: "max_output_bytes",
        guest: true,
        unit: "bytes",
        default: Some(1_048_576),
        min: 1,
        max: 1_073_741_824,
    },
    LimitRule {
        name: "max_value_depth",
        guest: true,
        unit: "levels",
        default: Some(64),
        min: 1,
        max: 100,
    },
    LimitRule {
        name: "fuel",
        guest: false,
        unit: "fuel",
        default: None,
        min: 1,
        max: 1_152_921_504_606_846_976,
    },
    LimitRule {
        name: "timeout",
        guest: false,
        unit: "milliseconds",
        default: Some(5_000),
        min: 1,
        max: 86_400_000,
    },
    LimitRule {
        name: "max_wasm_memory_bytes",
        guest: false,
        unit: "bytes",
        default: None,
        min: 1,
        max: 4_294_967_296,
    },
    LimitRule {
        name: "max_calls_in_flight",
        guest: false,
        unit: "calls",
        default: Some(16),
        min: 1,
        max: 1_024,
    },
];

/// How many of [`LIMITS`] the guest enforces.
pub(crate) const GUEST_LIMITS: usize = 6;

/// Default `max_instructions`, in instructions.
pub(crate) const DEFAULT_MAX_INSTRUCTIONS: u64 = 10_000_000;
/// Least `max_instructions`, in instructions.
pub(crate) const MIN_MAX_INSTRUCTIONS: u64 = 1;
/// Most `max_instructions`, in instructions.
pub(crate) const MAX_MAX_INSTRUCTIONS: u64 = 1_000_000_000_000;
/// Default `max_call_depth`, in frames.
pub(crate) const DEFAULT_MAX_CALL_DEPTH: u32 = 1_000;
/// Least `max_call_depth`, in frames.
pub(crate) const MIN_MAX_CALL_DEPTH: u32 = 1;
/// Most `max_call_depth`, in frames.
pub(crate) const MAX_MAX_CALL_DEPTH: u32 = 1_000_000;
/// Default `max_string_bytes`, in bytes.
pub(crate) const DEFAULT_MAX_STRING_BYTES: u64 = 16_777_216;
/// Least `max_string_bytes`, in bytes.
pub(crate) const MIN_MAX_STRING_BYTES: u64 = 1_024;
/// Most `max_string_bytes`, in bytes.
pub(crate) const MAX_MAX_STRING_BYTES: u64 = 1_073_741_824;
/// Default `max_memory_bytes`, in bytes.
pub(crate) const DEFAULT_MAX_MEMORY_BYTES: u64 = 67_108_864;
/// Least `max_memory_bytes`, in bytes.
pub(crate) const MIN_MAX_MEMORY_BYTES: u64 = 1_048_576;
/// Most `max_memory_bytes`, in bytes.
pub(crate) const MAX_MAX_MEMORY_BYTES: u64 = 1_073_741_824;
/// Default `max_output_bytes`, in bytes.
pub(crate) const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1_048_576;
/// Least `max_output_bytes`, in bytes.
pub(crate) const MIN_MAX_OUTPUT_BYTES: u64 = 1;
/// Most `max_output_bytes`, in bytes.
pub(crate) const MAX_MAX_OUTPUT_BYTES: u64 = 1_073_741_824;
/// Default `max_value_depth`, in levels.
pub(crate) const DEFAULT_MAX_VALUE_DEPTH: u32 = 64;
/// Least `max_value_depth`, in levels.
pub(crate) const MIN_MAX_VALUE_DEPTH: u32 = 1;
/// Most `max_value_depth`, in levels.
pub(crate) const MAX_MAX_VALUE_DEPTH: u32 = 100;
/// Least `fuel`, in fuel.
pub(crate) const MIN_FUEL: u64 = 1;
/// Most `fuel`, in fuel.
pub(crate) const MAX_FUEL: u64 = 1_152_921_504_606_846_976;
/// Default `timeout`, in milliseconds.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Least `timeout`, in milliseconds.
pub(crate) const MIN_TIMEOUT_MS: u64 = 1;
/// Most `timeout`, in milliseconds.
pub(crate) const MAX_TIMEOUT_MS: u64 = 86_400_000;
/// Least `max_wasm_memory_bytes`, in bytes.
pub(crate) const MIN_MAX_WASM_MEMORY_BYTES: u64 = 1;
/// Most `max_wasm_memory_bytes`, in bytes.
pub(crate) const MAX_MAX_WASM_MEMORY_BYTES: u64 = 4_294_967_296;
/// Default `max_calls_in_flight`, in calls.
pub(crate) const DEFAULT_MAX_CALLS_IN_FLIGHT: u32 = 16;
/// Least `max_calls_in_flight`, in calls.
pub(crate) const MIN_MAX_CALLS_IN_FLIGHT: u32 = 1;
/// Most `max_calls_in_flight`, in calls.
pub(crate) const MAX_MAX_CALLS_IN_FLIGHT: u32 = 1_024;
/// Bytes each `log` event is charged against `max_output_bytes` beyond its
/// message and fields.
pub(crate) const LOG_EVENT_BYTES: u64 = 32;
/// The fewest bytes of an error's message (and traceback) that cross the
/// boundary, whatever `max_output_bytes` is.
pub(crate) const MIN_ERROR_BYTES: u64 = 256;
/// The most bytes of an error's message (and traceback) that cross the
/// boundary.
pub(crate) const MAX_ERROR_BYTES: u64 = 65_536;
/// Fuel derived per allowed Lua instruction when `fuel` is not set.
pub(crate) const FUEL_PER_INSTRUCTION: u64 = 500;
/// The least fuel derived, whatever `max_instructions` is.
pub(crate) const DEFAULT_FUEL: u64 = 5_000_000_000;
/// The derived linear memory holds this many Lua heaps...
pub(crate) const WASM_MEMORY_FACTOR: u64 = 2;
/// ...and this many bytes more.
pub(crate) const WASM_MEMORY_EXTRA_BYTES: u64 = 16_777_216;
/// The linear memory must exceed the Lua heap by at least this many bytes.
pub(crate) const WASM_MEMORY_HEADROOM_BYTES: u64 = 4_194_304;
/// The chunk name of an eval that names none.
pub(crate) const DEFAULT_CHUNK_NAME: &str = "main.lua";
/// The version of the JSON report (`moonbox run --json`, tool results).
pub(crate) const REPORT_VERSION: u64 = 1;
/// The most files a session's namespace holds (mounted and written together);
/// one more trips `memory-limit`.
pub(crate) const MAX_FILES: u64 = 1_024;
/// The longest file name, in bytes.
pub(crate) const MAX_FILE_NAME_BYTES: u64 = 4_096;
/// Bytes each file is charged against `max_memory_bytes` beyond its name and
/// contents.
pub(crate) const FILE_OVERHEAD_BYTES: u64 = 256;
/// The most arguments one eval takes (`eval-request.args`).
pub(crate) const MAX_ARGS: u64 = 4_096;
