/**
 * Limits on one eval: the crate's `Limits`, in camelCase. Integers may be
 * numbers or bigints. The defaults are `DEFAULT_LIMITS`; the bounds are the
 * crate's (`Limits::validate`): out of them, `new Sandbox` throws a RangeError.
 */
export interface Limits {
  /** Lua VM instructions per eval. */
  maxInstructions?: number | bigint;
  /** Frames on one Lua stack. */
  maxCallDepth?: number;
  /** Bytes in one string. */
  maxStringBytes?: number | bigint;
  /** Bytes the Lua heap may hold. */
  maxMemoryBytes?: number | bigint;
  /** Bytes the script may write per eval (output and log events). */
  maxOutputBytes?: number | bigint;
  /** Nesting depth of values crossing as JSON. */
  maxValueDepth?: number;
  /** Wasmtime fuel per call into the guest; null (or 0, or absent) derives it from maxInstructions. */
  fuel?: number | bigint | null;
  /** Wall-clock time per eval, in milliseconds (the crate's `timeout`). */
  timeoutMs?: number;
  /** Cap on the guest's linear memory; null (or 0, or absent) means 2 * maxMemoryBytes + 16 MiB. */
  maxWasmMemoryBytes?: number | bigint | null;
  /** Capability calls of one `parallel` batch run at once. */
  maxCallsInFlight?: number;
}

/**
 * A value crossing the boundary. Integers arrive as number when they are
 * safe integers, else as bigint; floats as number; tables as parsed JSON.
 */
export type LuaValue = null | boolean | number | bigint | string | LuaValue[] | { [key: string]: LuaValue };

/**
 * A capability: receives one plain value per Lua argument (trailing nils
 * dropped) and returns, or resolves to, a JSON-able value. A thrown error or
 * a rejected promise becomes a catchable Lua error `NAME: message`.
 */
export type CapabilityFn = (...args: LuaValue[]) => unknown;

export interface CapabilitySpec {
  fn: CapabilityFn;
  /** Fewest arguments. Default 0. */
  minArgs?: number;
  /** Most arguments. Default 16 (the crate's default for such functions). */
  maxArgs?: number;
  /** One-line description. */
  doc?: string;
  /** Calls per eval (over it, the call fails without running). */
  callBudget?: number;
}

export interface SandboxOptions {
  limits?: Limits;
  /** Dotted names such as `records.get`. */
  capabilities?: Record<string, CapabilityFn | CapabilitySpec>;
  /** Sandboxed names to allow back, such as `os.exit` or `debug`. */
  allow?: string[];
  /** Lua sources for `require(name)`. */
  modules?: Record<string, string | Uint8Array> | { name: string; source: string | Uint8Array }[];
  /** A fixed clock (seconds since the epoch) and math.random seed; `true`: the crate's defaults. */
  deterministic?: boolean | { clock?: number | bigint; seed?: number | bigint };
  /** Same as `limits.maxCallsInFlight`. */
  maxCallsInFlight?: number;
  /** Calls per eval of each capability that sets no budget of its own. */
  callBudget?: number;
  /** Keep each call's arguments in the report's `calls`. Default false. */
  auditArgs?: boolean;
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
   * `arg` is left as it is (nil in a new session). At most 4096.
   */
  args?: string[];
  /**
   * Files mounted read-only for `io.open`, `io.lines`, `loadfile`, `dofile`
   * and `require`, by name; text is written as UTF-8. They stay in a session
   * for its later evals. Past the crate's bounds (1024 files, names of at
   * most 4096 bytes, with stdin within maxMemoryBytes) the report has kind
   * `invalid_value`.
   */
  files?: Record<string, string | Uint8Array> | Map<string, string | Uint8Array>;
  /** What `io.read` and `io.stdin` read. Default: empty. */
  stdin?: string | Uint8Array;
  /** Receives output while the script runs, on the main thread. */
  onOutput?: (bytes: Uint8Array) => void;
  /** Receives log events while the script runs, in order with the output. */
  onLog?: (event: LogEvent) => void;
  /** Aborting it stops the eval: the report has kind `cancelled`. */
  signal?: AbortSignal;
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
  /** Null when the engine does not meter fuel (it does in deterministic mode or with `limits.fuel`). */
  fuelUsed: number | null;
  /** Null when the host stopped the eval (timeout, cancel, trap). */
  instructions: number | null;
  peakMemoryBytes: number | null;
  wallTimeUs: number;
  capabilityCalls: number;
  outputBytes: number;
  callsUnrecorded: number;
}

/** One capability call of the audit trail. */
export interface CallRecord {
  capability: string;
  argBytes: number;
  replyBytes: number;
  durationUs: number;
  outcome: 'ok' | 'error' | 'invalid_args' | 'over_budget' | 'refused' | 'cut_off';
  /** Only with `auditArgs`. */
  args?: LuaValue[];
}

export declare class Report {
  readonly ok: boolean;
  readonly values: LuaValue[];
  /** The values as the crate's exact JSON text. */
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
  /** The capability calls, in order. */
  readonly calls: CallRecord[];
  /**
   * The files the eval created or wrote that exist at its end, by name in
   * name order, with their bytes; mounted files are not among them.
   */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The report JSON text, as `moonbox run --json` prints it. */
  toJson(): string;
  /** For JSON.stringify (exact numbers where Node has JSON.rawJSON). */
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
  readonly limits: Readonly<Required<Limits>>;
  /** Runs `code` in a fresh Lua state. Script failures are in the report. */
  eval(code: string | Uint8Array, options?: EvalOptions): Promise<Report>;
  /** A session: globals persist between its evals. */
  session(): Promise<Session>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export declare const DEFAULT_LIMITS: Readonly<Required<Limits>>;
export declare const DEFAULT_CLOCK: number;
export declare const REPORT_VERSION: number;
export declare const ERROR_KINDS: readonly ErrorKind[];
export declare const LIMIT_KINDS: ReadonlySet<ErrorKind>;
/** JSON.parse giving integers past Number.MAX_SAFE_INTEGER as bigint. */
export declare function parseExact(text: string): unknown;
