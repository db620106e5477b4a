// The contract's rules: error kinds, limits and shared constants.
// Generated from wit/contract.toml by `python3 wit/contract.py`; do not edit.

/** The WIT package the rules belong to. */
export const PACKAGE = 'moonbox:sandbox@0.5.0';

/** Every error kind, the guest's first, in the order of the WIT enum. */
export const ERROR_KINDS = Object.freeze([
  'syntax',
  'runtime',
  'sandboxed',
  'capability',
  'instruction_limit',
  'call_depth',
  'memory_limit',
  'string_size',
  'output_limit',
  'invalid_value',
  'fuel_exhausted',
  'timeout',
  'session_poisoned',
  'cancelled',
  'internal',
]);

/** The kinds the guest reports. */
export const GUEST_ERROR_KINDS = Object.freeze(ERROR_KINDS.slice(0, 10));

/** The kinds that mean a limit stopped the script. */
export const LIMIT_KINDS = new Set([
  'instruction_limit',
  'call_depth',
  'memory_limit',
  'string_size',
  'output_limit',
  'fuel_exhausted',
  'timeout',
]);

/** The exit status of `moonbox run` for each kind. */
export const EXIT_CODES = Object.freeze({
  syntax: 1,
  runtime: 1,
  sandboxed: 1,
  capability: 1,
  instruction_limit: 3,
  call_depth: 3,
  memory_limit: 3,
  string_size: 3,
  output_limit: 3,
  invalid_value: 1,
  fuel_exhausted: 3,
  timeout: 3,
  session_poisoned: 2,
  cancelled: 2,
  internal: 2,
});

/**
 * Every limit, the guest's first, keyed by its camelCase name. Bounds are
 * BigInts; `default` is null when the limit is derived from others.
 */
export const LIMITS = Object.freeze({
  maxInstructions: Object.freeze({ name: 'max_instructions', unit: 'instructions', default: 10000000n, min: 1n, max: 1000000000000n, guest: true }),
  maxCallDepth: Object.freeze({ name: 'max_call_depth', unit: 'frames', default: 1000n, min: 1n, max: 1000000n, guest: true }),
  maxStringBytes: Object.freeze({ name: 'max_string_bytes', unit: 'bytes', default: 16777216n, min: 1024n, max: 1073741824n, guest: true }),
  maxMemoryBytes: Object.freeze({ name: 'max_memory_bytes', unit: 'bytes', default: 67108864n, min: 1048576n, max: 1073741824n, guest: true }),
  maxOutputBytes: Object.freeze({ name: 'max_output_bytes', unit: 'bytes', default: 1048576n, min: 1n, max: 1073741824n, guest: true }),
  maxValueDepth: Object.freeze({ name: 'max_value_depth', unit: 'levels', default: 64n, min: 1n, max: 100n, guest: true }),
  fuel: Object.freeze({ name: 'fuel', unit: 'fuel', default: null, min: 1n, max: 1152921504606846976n, guest: false }),
  timeout: Object.freeze({ name: 'timeout', unit: 'milliseconds', default: 5000n, min: 1n, max: 86400000n, guest: false }),
  maxWasmMemoryBytes: Object.freeze({ name: 'max_wasm_memory_bytes', unit: 'bytes', default: null, min: 1n, max: 4294967296n, guest: false }),
  maxCallsInFlight: Object.freeze({ name: 'max_calls_in_flight', unit: 'calls', default: 16n, min: 1n, max: 1024n, guest: false }),
});

/** Bytes each `log` event is charged against `max_output_bytes` beyond its message and fields. */
export const LOG_EVENT_BYTES = 32;
/** The fewest bytes of an error's message (and traceback) that cross the boundary, whatever `max_output_bytes` is. */
export const MIN_ERROR_BYTES = 256;
/** The most bytes of an error's message (and traceback) that cross the boundary. */
export const MAX_ERROR_BYTES = 65536;
/** Fuel derived per allowed Lua instruction when `fuel` is not set. */
export const FUEL_PER_INSTRUCTION = 500;
/** The least fuel derived, whatever `max_instructions` is. */
export const DEFAULT_FUEL = 5000000000;
/** The derived linear memory holds this many Lua heaps... */
export const WASM_MEMORY_FACTOR = 2;
/** ...and this many bytes more. */
export const WASM_MEMORY_EXTRA_BYTES = 16777216;
/** The linear memory must exceed the Lua heap by at least this many bytes. */
export const WASM_MEMORY_HEADROOM_BYTES = 4194304;
/** The chunk name of an eval that names none. */
export const DEFAULT_CHUNK_NAME = 'main.lua';
/** The version of the JSON report (`moonbox run --json`, tool results). */
export const REPORT_VERSION = 1;
/** The most files a session's namespace holds (mounted and written together); one more trips `memory-limit`. */
export const MAX_FILES = 1024;
/** The longest file name, in bytes. */
export const MAX_FILE_NAME_BYTES = 4096;
/** Bytes each file is charged against `max_memory_bytes` beyond its name and contents. */
export const FILE_OVERHEAD_BYTES = 256;
/** The most arguments one eval takes (`eval-request.args`). */
export const MAX_ARGS = 4096;
