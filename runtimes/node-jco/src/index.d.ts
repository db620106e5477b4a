/** Limits on one eval. Integers may be numbers or bigints. */
export interface Limits {
  /** Lua VM instructions per eval. Default 10_000_000. */
  maxInstructions?: number | bigint;
  /** Frames on one Lua stack. Default 1000. */
  maxCallDepth?: number;
  /** Length of any one string, in bytes (at least 1 KiB). Default 16 MiB. */
  maxStringBytes?: number | bigint;
  /** Bytes the Lua heap may hold (1 MiB to 1 GiB). Default 64 MiB. */
  maxMemoryBytes?: number | bigint;
  /** Bytes the script may write per eval (at most 1 GiB here). Default 1 MiB. */
  maxOutputBytes?: number | bigint;
  /** Nesting depth of values converted to or from JSON (1..100). Default 64. */
  maxValueDepth?: number;
  /** Wall-clock time per eval, in milliseconds. Default 5000. */
  timeoutMs?: number;
  /** Cap on the guest's linear memory. Default 2 * maxMemoryBytes + 16 MiB. */
  maxWasmMemoryBytes?: number | bigint;
}

/**
 * A JSON-able value. Integers arrive as number when they are safe integers,
 * else as bigint; floats as number; tables as parsed JSON.
 */
export type LuaValue = null | boolean | number | bigint | string | LuaValue[] | { [key: string]: LuaValue };

/**
 * A capability. Receives one plain value per Lua argument and returns (or
 * resolves to) a JSON-able value. A thrown error becomes a catchable Lua
 * error `NAME: message`. Return JSON.rawJSON('2.0') for an exact number.
 */
export type CapabilityFn = (...args: LuaValue[]) => unknown;

export interface CapabilitySpec {
  fn: CapabilityFn;
  /** Fewest arguments. Default 0. */
  minArgs?: number;
  /** Most arguments. Default 16. */
  maxArgs?: number;
}

/** `resourceLimits` of each worker (node:worker_threads). */
export interface WorkerResourceLimits {
  maxOldGenerationSizeMb?: number;
  maxYoungGenerationSizeMb?: number;
  codeRangeSizeMb?: number;
  stackSizeMb?: number;
}

export interface SandboxOptions {
  limits?: Limits;
  /** Dotted names such as `records.get`. */
  capabilities?: Record<string, CapabilityFn | CapabilitySpec>;
  /** Sandboxed names to allow back, such as `os.exit` or `debug`. */
  allow?: string[];
  /** Lua sources for `require(name)`. */
  modules?: Record<string, string | Uint8Array> | { name: string; source: string | Uint8Array }[];
  /** Fixed clock (seconds since the epoch) and math.random seed. `true`: 2024-01-01, seed 0. */
  deterministic?: boolean | { clock?: number | bigint; seed?: number | bigint };
  /** Calls of one `parallel` batch run at once. Default 16. */
  maxCallsInFlight?: number;
  /** The workers' resourceLimits. Defaults: DEFAULT_RESOURCE_LIMITS. */
  resourceLimits?: WorkerResourceLimits;
}

export interface LogEvent {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: { [key: string]: LuaValue };
}

export interface EvalOptions {
  /** Globals set before the chunk runs. */
  inputs?: Record<string, unknown>;
  /** The chunk's name in messages. Default `main.lua`. */
  chunkName?: string;
  /**
   * The script's arguments: the global `arg` (the chunk name at 0, these at
   * 1..n) and the chunk's `...`, as `lua5.4 script.lua a b`. Without it
   * `arg` is left as it is (nil in a new session).
   */
  args?: string[];
  /**
   * Files mounted read-only for `io.open`, `io.lines`, `loadfile`, `dofile`
   * and `require`, by name; text is written as UTF-8. They stay in a session
   * for its later evals.
   */
  files?: Record<string, string | Uint8Array> | Map<string, string | Uint8Array>;
  /** What `io.read` and `io.stdin` read. Default: empty. */
  stdin?: string | Uint8Array;
  /** Receives output while the script runs (polled every 10 ms). */
  onOutput?: (bytes: Uint8Array) => void;
  /** Receives log events while the script runs. */
  onLog?: (event: LogEvent & { fieldsJson: string }) => void;
}

// The error kinds of wit/contract.toml.
// contract:begin error-kind-type
export type ErrorKind =
  | 'syntax'
  | 'runtime'
  | 'sandboxed'
  | 'capability'
  | 'instruction_limit'
  | 'call_depth'
  | 'memory_limit'
  | 'string_size'
  | 'output_limit'
  | 'invalid_value'
  | 'fuel_exhausted'
  | 'timeout'
  | 'session_poisoned'
  | 'cancelled'
  | 'internal';
// contract:end

export interface ReportError {
  kind: ErrorKind;
  message: string;
  chunk: string;
  line: number | null;
  traceback: string | null;
  /** `error[kind]: message`, on one line. */
  summary: string;
}

export interface Stats {
  /** Always null: V8 does not meter fuel. */
  fuelUsed: null;
  /** Null when the host stopped the eval (timeout, trap). */
  instructions: number | null;
  peakMemoryBytes: number | null;
  wallTimeUs: number;
  capabilityCalls: number;
  outputBytes: number;
  callsUnrecorded: number;
}

export declare class Report {
  readonly ok: boolean;
  readonly values: LuaValue[];
  /** The values as the guest's exact JSON text. */
  readonly valuesJson: string;
  /** The output as text (invalid UTF-8 replaced). */
  readonly output: string;
  readonly outputBytes: Uint8Array;
  /** Present only when the output is not valid UTF-8. */
  readonly outputBase64?: string;
  readonly error: ReportError | null;
  readonly exitCode: number | null;
  readonly logs: LogEvent[];
  readonly logsJson: string;
  readonly stats: Stats;
  /** The files the eval created or wrote that exist at its end, by name, sorted. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The report JSON text, as `moonbox run --json` prints it. */
  toJson(): string;
  /** For JSON.stringify: gives the same text as toJson(). */
  toJSON(): unknown;
}

export declare class Session {
  eval(code: string | Uint8Array, options?: EvalOptions): Promise<Report>;
  readonly poisoned: boolean;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export declare class Sandbox {
  constructor(options?: SandboxOptions);
  readonly limits: Required<Limits>;
  /** Runs `code` in a fresh guest session. Script failures are in the report. */
  eval(code: string | Uint8Array, options?: EvalOptions): Promise<Report>;
  /** A session with its own worker; globals persist between its evals. */
  session(): Promise<Session>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export declare const DEFAULT_LIMITS: Readonly<Limits>;
export declare const DEFAULT_RESOURCE_LIMITS: Readonly<Required<WorkerResourceLimits>>;
export declare const DEFAULT_CLOCK: number;
export declare const REPORT_VERSION: 1;
export declare const LIMIT_KINDS: ReadonlySet<ErrorKind>;
/** JSON.parse keeping numbers JSON.stringify would not give back as JSON.rawJSON. */
export declare function parseKeepingNumbers(text: string): unknown;
