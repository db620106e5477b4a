// moonbox: untrusted Lua 5.4 in a WebAssembly sandbox, for Node.js: the
// moonbox Rust crate (its engine, limits, capabilities, sessions and
// report) as a native addon. This file only shapes the crate's API for
// JavaScript; every rule (limits and their bounds, error kinds, the
// report) is the crate's.

import { Canceller, NativeSandbox, info, takeEngineWarning } from './native.js';
import { camel, camelKeys, parseExact, stringifyExact } from './values.js';

/** The report format's version (the crate's `Report::VERSION`). */
export const REPORT_VERSION = info.report_version;

/** Every error kind, in the crate's order (`ErrorKind::ALL`). */
export const ERROR_KINDS = Object.freeze([...info.error_kinds]);

/** The kinds that are a limit stopping the script (`ErrorKind::is_limit`). */
export const LIMIT_KINDS = new Set(info.limit_kinds);

// The crate's JSON names limits in snake_case, the timeout in milliseconds
// (`timeout`); JavaScript names them in camelCase, the timeout `timeoutMs`
// to say its unit.
const jsLimitName = (name) => (name === 'timeout' ? 'timeoutMs' : camel(name));
const crateLimitNames = new Map(Object.keys(info.limits).map((name) => [jsLimitName(name), name]));

function jsLimits(limits) {
  const out = {};
  for (const [name, value] of Object.entries(limits)) out[jsLimitName(name)] = value;
  return Object.freeze(out);
}

/** The crate's `Limits::default()`; `fuel` and `maxWasmMemoryBytes` null mean derived. */
export const DEFAULT_LIMITS = jsLimits(info.limits);

/** Deterministic mode's default clock (seconds since the epoch) and seed. */
export const DEFAULT_CLOCK = info.determinism.clock;

const lossyUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const haveRawJson = typeof JSON.rawJSON === 'function';

/**
 * The outcome of one eval: the crate's report (`moonbox run --json`),
 * with JavaScript names.
 */
export class Report {
  #text;
  #valuesJson;
  #logsJson;
  #values;
  #logs;

  /** @internal Made by the sandbox from the addon's result. */
  constructor({ report, values, logs, files }) {
    const r = JSON.parse(report);
    this.#text = report;
    this.#valuesJson = values;
    this.#logsJson = logs;
    this.ok = r.ok;
    this.output = r.output;
    if (r.output_base64 !== undefined) this.outputBase64 = r.output_base64;
    this.exitCode = r.exit_code;
    this.error = r.error;
    this.stats = camelKeys(r.stats);
    this.calls = (r.calls ?? []).map(camelKeys);
    this.files = new Map(files.map(({ name, bytes }) => [name, new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length)]));
  }

  /** The returned values: integers past 2^53 as bigint. */
  get values() {
    this.#values ??= parseExact(this.#valuesJson);
    return this.#values;
  }

  /** The returned values as the crate's exact JSON array text. */
  get valuesJson() {
    return this.#valuesJson;
  }

  /** The script's log events, in order. */
  get logs() {
    this.#logs ??= parseExact(this.#logsJson);
    return this.#logs;
  }

  /** The log events as exact JSON array text. */
  get logsJson() {
    return this.#logsJson;
  }

  /** The exact bytes the script wrote. */
  get outputBytes() {
    const b = this.outputBase64 === undefined ? Buffer.from(this.output, 'utf8') : Buffer.from(this.outputBase64, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.length);
  }

  /** The report as JSON text, exactly as `moonbox run --json` writes it. */
  toJson() {
    return this.#text;
  }

  /**
   * For JSON.stringify: the report as a plain object. Where Node has
   * JSON.rawJSON (21 and later) its numbers keep their exact text, so that
   * `JSON.stringify(report)` is `toJson()`; on Node 20 a float such as
   * `1.0` comes out as `1` and integers past 2^53 rounded.
   */
  toJSON() {
    if (!haveRawJson) return JSON.parse(this.#text);
    return JSON.parse(this.#text, (_key, value, context) =>
      typeof value === 'number' && JSON.stringify(value) !== context.source ? JSON.rawJSON(context.source) : value,
    );
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInteger = (v) => (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint';

// The limits whose null (or absence) means derived from the others; 0, the
// older spelling of it, is read the same way.
const derivedLimits = new Set(['fuel', 'maxWasmMemoryBytes']);

function limitsConfig(limits, maxCallsInFlight) {
  if (limits !== undefined && !isObject(limits)) throw new TypeError('limits must be an object');
  const out = {};
  for (const [name, value] of Object.entries(limits ?? {})) {
    const crateName = crateLimitNames.get(name);
    if (crateName === undefined) {
      throw new TypeError(`unknown limit \`${name}\` (the limits are ${[...crateLimitNames.keys()].join(', ')})`);
    }
    if (value === undefined) continue;
    if (derivedLimits.has(name) && (value === null || value === 0 || value === 0n)) continue;
    if (typeof value !== 'number' && typeof value !== 'bigint') {
      throw new TypeError(`limits.${name} must be a number or a bigint, got ${typeof value}`);
    }
    out[crateName] = value;
  }
  if (maxCallsInFlight !== undefined) out.max_calls_in_flight = maxCallsInFlight;
  return out;
}

const defaultMaxArgs = info.default_capability_max_args;

// The user's function, wrapped as the addon calls it: the arguments as one
// JSON array text; the reply as JSON text, or `!` and the message when the
// function threw or its promise rejected. A promise for an async function.
function wrap(name, fn) {
  const encode = (value) => {
    try {
      return stringifyExact(value);
    } catch (e) {
      return `!${messageOf(e)}`;
    }
  };
  const failed = (e) => `!${messageOf(e)}`;
  return (argsJson) => {
    let result;
    try {
      result = fn(...parseExact(argsJson));
    } catch (e) {
      return failed(e);
    }
    if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
      return Promise.resolve(result).then(encode, failed);
    }
    return encode(result);
  };
}

function messageOf(e) {
  if (e instanceof Error) return e.message;
  try {
    return String(e);
  } catch {
    return 'the capability failed';
  }
}

function capabilitiesConfig(capabilities) {
  if (capabilities === undefined) return [];
  if (!isObject(capabilities)) throw new TypeError('capabilities must be an object of name: function or spec');
  return Object.entries(capabilities).map(([name, spec]) => {
    if (typeof spec === 'function') spec = { fn: spec };
    if (!isObject(spec) || typeof spec.fn !== 'function') {
      throw new TypeError(`capability ${name} must be a function or { fn, minArgs?, maxArgs?, doc?, callBudget? }`);
    }
    const min = spec.minArgs ?? 0;
    const max = spec.maxArgs ?? defaultMaxArgs;
    for (const [key, v] of [['minArgs', min], ['maxArgs', max]]) {
      if (!Number.isInteger(v) || v < 0 || v > 2 ** 32 - 1) {
        throw new TypeError(`capability ${name}: ${key} must be a non-negative integer`);
      }
    }
    if (spec.doc !== undefined && typeof spec.doc !== 'string') throw new TypeError(`capability ${name}: doc must be a string`);
    if (spec.callBudget !== undefined && !Number.isInteger(spec.callBudget)) {
      throw new TypeError(`capability ${name}: callBudget must be an integer`);
    }
    return {
      name,
      minArgs: min,
      maxArgs: max,
      doc: spec.doc ?? '',
      callBudget: spec.callBudget,
      fn: wrap(name, spec.fn),
    };
  });
}

const bytes = (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

function source(what, v) {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return bytes(v);
  throw new TypeError(`${what} must be a string or a Uint8Array`);
}

function modulesConfig(modules) {
  if (modules === undefined) return [];
  const list = Array.isArray(modules)
    ? modules
    : isObject(modules)
      ? Object.entries(modules).map(([name, src]) => ({ name, source: src }))
      : null;
  if (list === null) throw new TypeError('modules must be an object of name: source or an array of { name, source }');
  return list.map((m) => {
    if (!isObject(m) || typeof m.name !== 'string') throw new TypeError('each module needs a string name');
    return { name: m.name, source: source(`module ${m.name}`, m.source) };
  });
}

function determinismConfig(d) {
  if (d === undefined || d === false) return undefined;
  if (d === true) return info.determinism;
  if (!isObject(d)) throw new TypeError('deterministic must be a boolean or { clock?, seed? }');
  const out = { ...info.determinism };
  for (const key of ['clock', 'seed']) {
    if (d[key] === undefined) continue;
    if (!isInteger(d[key])) throw new TypeError(`deterministic.${key} must be an integer`);
    out[key] = d[key];
  }
  return out;
}

const SANDBOX_OPTIONS = new Set([
  'limits',
  'capabilities',
  'allow',
  'modules',
  'deterministic',
  'maxCallsInFlight',
  'callBudget',
  'auditArgs',
]);

function nativeOptions(options) {
  if (!isObject(options)) throw new TypeError('the sandbox options must be an object');
  for (const key of Object.keys(options)) {
    if (!SANDBOX_OPTIONS.has(key)) throw new TypeError(`unknown sandbox option \`${key}\``);
  }
  const { allow = [], callBudget, auditArgs = false } = options;
  if (!Array.isArray(allow) || !allow.every((a) => typeof a === 'string')) {
    throw new TypeError('allow must be an array of strings');
  }
  if (callBudget !== undefined && !Number.isInteger(callBudget)) throw new TypeError('callBudget must be an integer');
  if (typeof auditArgs !== 'boolean') throw new TypeError('auditArgs must be a boolean');
  const config = {
    limits: limitsConfig(options.limits, options.maxCallsInFlight),
    allow,
    deterministic: determinismConfig(options.deterministic),
    call_budget: callBudget,
    audit_args: auditArgs,
  };
  const capabilities = capabilitiesConfig(options.capabilities);
  return {
    config: stringifyExact(config),
    modules: modulesConfig(options.modules),
    capabilities: capabilities.map(({ fn, ...spec }) => spec),
    fns: capabilities.map((c) => c.fn),
  };
}

// The addon calls this on the main thread, with the sandbox's mailbox,
// when capability calls wait (see src/capability.rs); it runs them one by
// one. After a synchronous function's reply, `nextCall` waits at most
// 50 µs for the next call, and only while an eval of the sandbox runs; the
// drain returns to the event loop within about 1 ms (and runs again if
// calls still wait).
function drainer(fns) {
  return (mailbox) => {
    // A call is `ID CAPABILITY ARGS`.
    let call = mailbox.nextCall(true, false);
    while (call !== null) {
      const a = call.indexOf(' ');
      const b = call.indexOf(' ', a + 1);
      const id = Number(call.slice(0, a));
      const reply = fns[Number(call.slice(a + 1, b))](call.slice(b + 1));
      if (typeof reply === 'string') {
        mailbox.reply(id, reply);
        call = mailbox.nextCall(false, true);
      } else {
        reply.then((text) => mailbox.reply(id, text));
        call = mailbox.nextCall(false, false);
      }
    }
  };
}

const EVAL_OPTIONS = new Set(['inputs', 'chunkName', 'args', 'files', 'stdin', 'onOutput', 'onLog', 'signal']);

// `args` as the addon takes them: an array of strings, or undefined.
function argsOption(args) {
  if (args === undefined) return undefined;
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new TypeError('args must be an array of strings');
  return args;
}

// `files` (an object or a Map of name to contents) as the addon takes them.
function filesOption(files) {
  if (files === undefined) return undefined;
  let entries;
  if (files instanceof Map) entries = [...files];
  else if (isObject(files)) entries = Object.entries(files);
  else throw new TypeError('files must be an object or a Map of name to a string or a Uint8Array');
  return entries.map(([name, contents]) => {
    if (typeof name !== 'string') throw new TypeError('files: each name must be a string');
    return { name, contents: source(`files[${JSON.stringify(name)}]`, contents) };
  });
}

// The addon's eval options, and the callbacks' first error, if one threw.
function evalOptions(options) {
  if (!isObject(options)) throw new TypeError('the eval options must be an object');
  for (const key of Object.keys(options)) {
    if (!EVAL_OPTIONS.has(key)) throw new TypeError(`unknown eval option \`${key}\``);
  }
  const { inputs, chunkName, args, files, stdin, onOutput, onLog, signal } = options;
  if (inputs !== undefined && !isObject(inputs)) throw new TypeError('inputs must be an object');
  if (chunkName !== undefined && typeof chunkName !== 'string') throw new TypeError('chunkName must be a string');
  for (const [key, f] of [['onOutput', onOutput], ['onLog', onLog]]) {
    if (f !== undefined && typeof f !== 'function') throw new TypeError(`${key} must be a function`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  const state = { failure: undefined };
  const sink =
    onOutput || onLog
      ? (item) => {
          try {
            if (typeof item !== 'string') onOutput?.(new Uint8Array(item.buffer, item.byteOffset, item.length));
            else if (item !== '') onLog?.(parseExact(item));
          } catch (e) {
            state.failure ??= e;
          }
        }
      : undefined;
  return {
    native: {
      inputs: inputs === undefined ? undefined : stringifyExact(inputs),
      chunkName,
      args: argsOption(args),
      files: filesOption(files),
      stdin: stdin === undefined ? undefined : source('stdin', stdin),
      sink,
    },
    signal,
    state,
  };
}

function code(c) {
  if (typeof c === 'string') return c;
  if (c instanceof Uint8Array) return bytes(c);
  throw new TypeError('code must be a string or a Uint8Array');
}

// Runs one eval, cancelling it when `signal` aborts; a callback's error
// rejects the eval once it has finished.
async function evaluate(run, options, cancel) {
  const { native, signal, state } = evalOptions(options);
  const onAbort = () => cancel();
  if (signal) {
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  }
  try {
    const report = new Report(await run(native));
    if (state.failure !== undefined) {
      throw new Error(`an onOutput or onLog callback threw: ${messageOf(state.failure)}`, { cause: state.failure });
    }
    return report;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * A session: one Lua state whose globals persist between evals, which run
 * one at a time in the order they were asked for.
 */
export class Session {
  #native;
  #closed = false;

  /** @internal Made by `Sandbox.session()`. */
  constructor(native) {
    this.#native = native;
  }

  /** Runs `code` with the session's globals. A script's failure is in the report. */
  async eval(c, options = {}) {
    if (this.#closed) throw new Error('the session is closed');
    const text = code(c);
    return evaluate((native) => this.#native.eval(text, native), options, () => this.#native.cancel());
  }

  /** Whether an earlier eval was stopped by the host or cancelled: later evals fail. */
  get poisoned() {
    return this.#native.poisoned;
  }

  /** Ends the session once the evals already asked for have run. */
  async close() {
    this.#closed = true;
    await this.#native.close();
  }

  [Symbol.asyncDispose]() {
    return this.close();
  }
}

/** A sandbox: the crate's, built from the options; share one. */
export class Sandbox {
  #native;
  #closed = false;

  /**
   * Builds the sandbox as the crate does, validating everything: a wrong
   * type is a TypeError, a limit out of its bounds a RangeError, anything
   * else the crate refuses (an unknown `allow` name, a bad module or
   * capability name) an Error with the crate's sentence.
   */
  constructor(options = {}) {
    const { fns, ...native } = nativeOptions(options);
    try {
      this.#native = new NativeSandbox({ ...native, drain: drainer(fns) });
    } finally {
      // Once per process: the user's cache directory could not be used,
      // so every process compiles the guest.
      const warning = takeEngineWarning();
      if (warning) process.emitWarning(warning, { code: 'MOONBOX_CACHE' });
    }
  }

  /** The limits every eval runs under. */
  get limits() {
    return jsLimits(JSON.parse(this.#native.limits));
  }

  /** Runs `code` in a fresh Lua state. A script's failure is in the report. */
  async eval(c, options = {}) {
    if (this.#closed) throw new Error('the sandbox is closed');
    const text = code(c);
    const canceller = options?.signal === undefined ? undefined : new Canceller();
    return evaluate((native) => this.#native.eval(text, native, canceller), options, () => canceller?.cancel());
  }

  /** A session with its own Lua state; globals persist between its evals. */
  async session() {
    if (this.#closed) throw new Error('the sandbox is closed');
    return new Session(await this.#native.session());
  }

  /** Refuses later evals and sessions. Sessions already made keep working. */
  async close() {
    this.#closed = true;
  }

  [Symbol.asyncDispose]() {
    return this.close();
  }
}

export { parseExact };
