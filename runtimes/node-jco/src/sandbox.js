// The main thread's side: options, workers, the wall-clock deadline and
// capability calls.

import { MessageChannel, Worker } from 'node:worker_threads';
import { BINDINGS_URL, coreModules, pagesFor } from './modules.js';
import {
  DEFAULT_CHUNK_NAME,
  LIMITS,
  MAX_FILE_NAME_BYTES,
  MAX_FILES,
  MAX_ARGS,
  WASM_MEMORY_EXTRA_BYTES,
  WASM_MEMORY_FACTOR,
  WASM_MEMORY_HEADROOM_BYTES,
} from './contract.js';
import { Report, oneLine } from './report.js';
import { CTRL, CTRL_SLOTS, LEVELS } from './shared.js';
import { fromWit, parseExact, toWit } from './values.js';

/** The default limits, from wit/contract.toml. */
export const DEFAULT_LIMITS = Object.freeze({
  maxInstructions: Number(LIMITS.maxInstructions.default),
  maxCallDepth: Number(LIMITS.maxCallDepth.default),
  maxStringBytes: Number(LIMITS.maxStringBytes.default),
  maxMemoryBytes: Number(LIMITS.maxMemoryBytes.default),
  maxOutputBytes: Number(LIMITS.maxOutputBytes.default),
  maxValueDepth: Number(LIMITS.maxValueDepth.default),
  timeoutMs: Number(LIMITS.timeout.default),
  // Derived: WASM_MEMORY_FACTOR * maxMemoryBytes + WASM_MEMORY_EXTRA_BYTES.
  maxWasmMemoryBytes: undefined,
});

/** The default `resourceLimits` of each worker (see the README). */
export const DEFAULT_RESOURCE_LIMITS = Object.freeze({
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  codeRangeSizeMb: 64,
  stackSizeMb: 4,
});

/** The default clock of deterministic mode: 2024-01-01T00:00:00Z. */
export const DEFAULT_CLOCK = 1_704_067_200;

const MAX_TIMEOUT_MS = Number(LIMITS.timeout.max);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

function integerOption(value, what, min, max) {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`${what} must be an integer, got ${value}`);
    value = BigInt(value);
  } else if (typeof value !== 'bigint') {
    throw new TypeError(`${what} must be an integer (a number or a bigint), got ${typeof value}`);
  }
  if (value < BigInt(min) || value > BigInt(max)) {
    throw new RangeError(`${what} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function checkKeys(object, allowed, what) {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) throw new TypeError(`${what}: unknown option \`${key}\` (expected one of ${allowed.join(', ')})`);
  }
}

function plainObject(value, what) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`${what} must be an object`);
  return value;
}

function normalizeLimits(limits) {
  limits = plainObject(limits, 'limits');
  checkKeys(limits, Object.keys(DEFAULT_LIMITS), 'limits');
  const get = (key) => (limits[key] === undefined ? DEFAULT_LIMITS[key] : limits[key]);
  // The bounds of wit/contract.toml.
  const bounded = (key) => integerOption(get(key), `limits.${key}`, LIMITS[key].min, LIMITS[key].max);
  const out = {
    maxInstructions: bounded('maxInstructions'),
    maxCallDepth: Number(bounded('maxCallDepth')),
    maxStringBytes: bounded('maxStringBytes'),
    maxMemoryBytes: bounded('maxMemoryBytes'),
    maxOutputBytes: bounded('maxOutputBytes'),
    maxValueDepth: Number(bounded('maxValueDepth')),
  };
  const timeout = get('timeoutMs');
  if (typeof timeout !== 'number' || !Number.isFinite(timeout)) throw new TypeError('limits.timeoutMs must be a finite number of milliseconds');
  if (timeout <= 0 || timeout > MAX_TIMEOUT_MS) throw new RangeError(`limits.timeoutMs must be above 0 and at most ${MAX_TIMEOUT_MS} (a day), got ${timeout}`);
  out.timeoutMs = timeout;
  const wasmLimit = LIMITS.maxWasmMemoryBytes;
  const wasm = limits.maxWasmMemoryBytes ?? BigInt(WASM_MEMORY_FACTOR) * out.maxMemoryBytes + BigInt(WASM_MEMORY_EXTRA_BYTES);
  out.maxWasmMemoryBytes = Number(integerOption(wasm, 'limits.maxWasmMemoryBytes', wasmLimit.min, wasmLimit.max));
  const least = out.maxMemoryBytes + BigInt(WASM_MEMORY_HEADROOM_BYTES);
  if (BigInt(out.maxWasmMemoryBytes) < least) {
    throw new RangeError(`limits.maxWasmMemoryBytes (${out.maxWasmMemoryBytes}) must exceed limits.maxMemoryBytes (${out.maxMemoryBytes}) by at least ${WASM_MEMORY_HEADROOM_BYTES} bytes`);
  }
  return out;
}

function normalizeCapabilities(capabilities) {
  capabilities = plainObject(capabilities, 'capabilities');
  const out = new Map();
  for (const [name, spec] of Object.entries(capabilities)) {
    if (!NAME.test(name)) throw new TypeError(`capabilities: ${JSON.stringify(name)} is not a dotted Lua name such as \`records.get\``);
    let entry;
    if (typeof spec === 'function') {
      entry = { fn: spec, minArgs: 0, maxArgs: 16 };
    } else if (spec && typeof spec === 'object' && typeof spec.fn === 'function') {
      checkKeys(spec, ['fn', 'minArgs', 'maxArgs'], `capabilities.${name}`);
      const minArgs = Number(integerOption(spec.minArgs ?? 0, `capabilities.${name}.minArgs`, 0, 255));
      const maxArgs = Number(integerOption(spec.maxArgs ?? Math.max(16, minArgs), `capabilities.${name}.maxArgs`, minArgs, 255));
      entry = { fn: spec.fn, minArgs, maxArgs };
    } else {
      throw new TypeError(`capabilities.${name} must be a function or { fn, minArgs, maxArgs }`);
    }
    out.set(name, entry);
  }
  return out;
}

function normalizeModules(modules) {
  if (modules === undefined) return [];
  const entries = Array.isArray(modules) ? modules.map((m) => [m?.name, m?.source]) : Object.entries(plainObject(modules, 'modules'));
  return entries.map(([name, source]) => {
    if (typeof name !== 'string' || !NAME.test(name)) throw new TypeError(`modules: ${JSON.stringify(name)} is not a module name`);
    if (typeof source === 'string') return { name, source: utf8.encode(source) };
    if (source instanceof Uint8Array) return { name, source };
    throw new TypeError(`modules.${name} must be Lua source (a string or a Uint8Array)`);
  });
}

function normalizeDeterminism(deterministic) {
  if (deterministic === undefined || deterministic === false) return undefined;
  if (deterministic === true) return { clock: BigInt(DEFAULT_CLOCK), seed: 0n };
  const d = plainObject(deterministic, 'deterministic');
  checkKeys(d, ['clock', 'seed'], 'deterministic');
  const S64 = 2n ** 63n;
  return {
    clock: integerOption(d.clock ?? DEFAULT_CLOCK, 'deterministic.clock', -S64, S64 - 1n),
    seed: integerOption(d.seed ?? 0, 'deterministic.seed', -S64, S64 - 1n),
  };
}

function normalizeResourceLimits(value) {
  const r = plainObject(value, 'resourceLimits');
  checkKeys(r, Object.keys(DEFAULT_RESOURCE_LIMITS), 'resourceLimits');
  const out = { ...DEFAULT_RESOURCE_LIMITS };
  for (const [key, v] of Object.entries(r)) {
    if (typeof v !== 'number' || !(v > 0)) throw new RangeError(`resourceLimits.${key} must be a positive number`);
    out[key] = v;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Capability calls, on the main thread
// ---------------------------------------------------------------------------

// Runs one call; never throws: a failure is an `err` with the message the
// Rust host gives (`NAME: message`).
async function runCall(capabilities, name, args, maxReply) {
  const cap = capabilities.get(name);
  if (!cap) return { tag: 'err', val: `${name}: no such capability` };
  try {
    if (args.length > cap.maxArgs) throw new Error(`expected at most ${cap.maxArgs} arguments, got ${args.length}`);
    const result = await cap.fn(...args.map(fromWit));
    return { tag: 'ok', val: toWit(result, maxReply) };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return { tag: 'err', val: `${name}: ${message}` };
  }
}

// The bytes a reply carries into the guest.
function replyBytes({ val }) {
  if (typeof val === 'string') return Buffer.byteLength(val, 'utf8');
  if (val && typeof val.val === 'string') return Buffer.byteLength(val.val, 'utf8');
  return 8;
}

// Runs a batch at most `limit` at a time; the replies are in request order.
async function runBatch(capabilities, calls, limit, maxReply) {
  const results = new Array(calls.length);
  let next = 0;
  const lane = async () => {
    while (next < calls.length) {
      const i = next++;
      results[i] = await runCall(capabilities, calls[i].name, calls[i].args, maxReply);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, calls.length) }, lane));
  return results;
}

// ---------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------

const statsFrom = (s) => ({
  instructions: Number(s.instructions),
  peakMemoryBytes: Number(s.peakMemoryBytes),
});

// One worker and its shared buffers. Requests are answered in order; evals
// are run one at a time.
class GuestWorker {
  #options;
  #worker;
  #port;
  #pending = [];
  #queue = Promise.resolve();
  #ready;
  /** Why the worker is gone, once it is. */
  dead = null;
  capabilityCalls = 0;

  constructor(options) {
    this.#options = options;
    const { limits } = options;
    const outputSize = Number(limits.maxOutputBytes);
    this.ctrl = new Int32Array(new SharedArrayBuffer(CTRL_SLOTS * 4));
    this.output = new SharedArrayBuffer(outputSize);
    this.logs = new SharedArrayBuffer(outputSize);
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    port1.on('message', (calls) => this.#onCalls(calls));
    port1.unref();
    this.#worker = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: {
        modules: coreModules(pagesFor(limits.maxWasmMemoryBytes)),
        bindingsUrl: BINDINGS_URL,
        config: options.witConfig,
        capPort: port2,
        shared: { ctrl: this.ctrl.buffer, output: this.output, logs: this.logs },
        maxWasmBytes: limits.maxWasmMemoryBytes,
      },
      transferList: [port2],
      resourceLimits: options.resourceLimits,
      stdout: false,
      stderr: false,
    });
    this.#worker.unref();
    let readyResolve;
    this.#ready = new Promise((resolve) => (readyResolve = resolve));
    this.#worker.on('message', (msg) => {
      if (msg?.ready) return readyResolve();
      this.#pending.shift()?.resolve(msg);
      this.#refresh();
    });
    const fail = (why) => {
      if (!this.dead) this.dead = why;
      readyResolve();
      for (const p of this.#pending.splice(0)) p.resolve({ gone: this.dead });
      this.#refresh();
      this.#port.close();
    };
    this.#worker.on('error', (e) => {
      const oom = e?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      fail({
        kind: oom ? 'memory_limit' : 'internal',
        message: oom
          ? 'the worker running the script ran out of JavaScript heap (its resourceLimits)'
          : `the worker running the script failed: ${e?.message ?? e}`,
      });
    });
    this.#worker.on('exit', () => fail({ kind: 'internal', message: 'the worker running the script exited' }));
  }

  #refresh() {
    if (this.#pending.length > 0) this.#worker.ref();
    else this.#worker.unref();
  }

  async #onCalls(calls) {
    this.capabilityCalls += calls.length;
    const { capabilities, maxCallsInFlight, limits } = this.#options;
    const maxReply = Number(limits.maxMemoryBytes);
    let replies = await runBatch(capabilities, calls, maxCallsInFlight, maxReply);
    if (this.dead) return;
    // A batch holds at most the memory limit of replies in all, as in the
    // Rust crate.
    const total = replies.reduce((sum, r) => sum + replyBytes(r), 0);
    if (total > maxReply) {
      const message = `parallel: the batch's replies hold ${total} bytes, more than maxMemoryBytes (${maxReply})`;
      replies = replies.map(() => ({ tag: 'err', val: message }));
    }
    this.#port.postMessage(replies);
    Atomics.store(this.ctrl, CTRL.REPLY, 1);
    Atomics.notify(this.ctrl, CTRL.REPLY);
  }

  // Sends one request and waits for its reply (or the worker's end).
  #request(msg) {
    if (this.dead) return Promise.resolve({ gone: this.dead });
    return new Promise((resolve) => {
      this.#pending.push({ resolve });
      this.#refresh();
      this.#worker.postMessage(msg);
    });
  }

  // Runs `fn` after the work queued before it.
  #serial(fn) {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  open(id) {
    return this.#serial(async () => {
      this.#worker.ref();
      await this.#ready;
      return this.#request({ op: 'open', id });
    });
  }

  /**
   * Runs one eval under the deadline. Resolves to the worker's reply, or
   * to `{timedOut: true}` once the worker has been ended at the deadline,
   * with `wallTimeUs`; either way the shared buffers hold the output.
   */
  eval(msg, timeoutMs, sinks = {}) {
    return this.#serial(async () => {
      this.#worker.ref();
      await this.#ready;
      // Ended before this eval began: it never ran. `byStop` says an
      // earlier eval's stop ended the worker (not its own start-up).
      if (this.dead) return { gone: this.dead, notRun: true, wallTimeUs: 0 };
      Atomics.store(this.ctrl, CTRL.OUTPUT_LEN, 0);
      Atomics.store(this.ctrl, CTRL.LOG_LEN, 0);
      this.capabilityCalls = 0;
      const started = performance.now();
      let timer;
      const deadline = new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs, { timedOut: true });
      });
      const streaming = sinks.onOutput || sinks.onLog;
      const sent = { output: 0, logs: 0 };
      const poll = streaming ? setInterval(() => this.#drain(sinks, sent), 10) : null;
      const reply = await Promise.race([this.#request({ ...msg, deadline: Date.now() + timeoutMs }), deadline]);
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      if (reply.timedOut) {
        this.dead = { kind: 'timeout', message: 'an earlier eval was stopped by the host (timeout)', byStop: true };
        await this.#worker.terminate();
      } else if (reply.fatal) {
        this.dead = { kind: reply.trap, message: `an earlier eval was stopped by the host (${reply.trap})`, byStop: true };
        await this.#worker.terminate();
      }
      reply.wallTimeUs = Math.round((performance.now() - started) * 1000);
      if (streaming) this.#drain(sinks, sent);
      return reply;
    });
  }

  // Hands the output and log events written since the last call to the
  // eval's sinks. A sink that throws is not called again.
  #drain(sinks, sent) {
    const outLen = Atomics.load(this.ctrl, CTRL.OUTPUT_LEN);
    if (sinks.onOutput && outLen > sent.output) {
      const chunk = new Uint8Array(this.output, sent.output, outLen - sent.output).slice();
      sent.output = outLen;
      try {
        sinks.onOutput(chunk);
      } catch {
        sinks.onOutput = null;
      }
    }
    if (sinks.onLog) {
      const { events, end } = this.#events(sent.logs, Atomics.load(this.ctrl, CTRL.LOG_LEN));
      sent.logs = end;
      for (const { level, message, fieldsJson } of events) {
        try {
          sinks.onLog?.({ level, message, fields: parseExact(fieldsJson), fieldsJson });
        } catch {
          sinks.onLog = null;
        }
      }
    }
  }

  /** The output bytes and log events of the last eval. */
  collected() {
    const outLen = Atomics.load(this.ctrl, CTRL.OUTPUT_LEN);
    const outputBytes = new Uint8Array(outLen);
    outputBytes.set(new Uint8Array(this.output, 0, outLen));
    const { events: logs } = this.#events(0, Atomics.load(this.ctrl, CTRL.LOG_LEN));
    return { outputBytes, logs };
  }

  // The log events between two offsets of the log buffer.
  #events(from, logLen) {
    const logs = [];
    const bytes = new Uint8Array(this.logs);
    const view = new DataView(this.logs);
    let at = from;
    for (; at < logLen; ) {
      const level = LEVELS[view.getUint8(at)];
      const m = view.getUint32(at + 1, true);
      const message = utf8Decoder.decode(bytes.slice(at + 5, at + 5 + m));
      const f = view.getUint32(at + 5 + m, true);
      const fieldsJson = utf8Decoder.decode(bytes.slice(at + 9 + m, at + 9 + m + f));
      logs.push({ level, message, fieldsJson });
      at += 9 + m + f;
    }
    return { events: logs, end: at };
  }

  terminate() {
    if (!this.dead) this.dead = { kind: 'internal', message: 'it was closed' };
    return this.#worker.terminate();
  }
}

// ---------------------------------------------------------------------------
// Evals
// ---------------------------------------------------------------------------

// The guest refused the config (an unknown `allow` name, a bad module): an
// Error whose `reason` is the guest's sentence.
function configError(reason) {
  return Object.assign(new Error(`moonbox: the sandbox refused its configuration: ${reason}`), { reason });
}

function hostReport(kind, message, chunk, extra = {}) {
  return new Report({
    ok: false,
    valuesJson: '[]',
    exitCode: null,
    error: { kind, message, chunk, line: null, traceback: null },
    outputBytes: extra.outputBytes ?? new Uint8Array(0),
    logs: extra.logs ?? [],
    files: [],
    stats: {
      fuelUsed: null,
      instructions: null,
      peakMemoryBytes: null,
      wallTimeUs: extra.wallTimeUs ?? 0,
      capabilityCalls: extra.capabilityCalls ?? 0,
      outputBytes: extra.outputBytes?.length ?? 0,
      callsUnrecorded: 0,
    },
  });
}

// Text as UTF-8, or bytes as they are.
function bytesOf(value, what) {
  if (typeof value === 'string') return utf8.encode(value);
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`${what} must be a string or a Uint8Array`);
}

function evalArgs(args) {
  if (args === undefined) return undefined;
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new TypeError('args must be an array of strings');
  return [...args];
}

// `files` as an object or a Map of name to contents.
function evalFiles(files) {
  if (files === undefined) return [];
  const entries = files instanceof Map ? [...files] : Object.entries(plainObject(files, 'files'));
  return entries.map(([name, contents]) => {
    if (typeof name !== 'string') throw new TypeError('files: each name must be a string');
    return { name, bytes: bytesOf(contents, `files[${JSON.stringify(name)}]`) };
  });
}

// Why the arguments, files or standard input cannot cross, as the Rust
// crate words it (`script::check_files`), or null.
function checkFiles({ args, files, stdin }, maxMemory) {
  if (args !== undefined && args.length > MAX_ARGS) {
    return `${args.length} arguments are more than the ${MAX_ARGS} an eval takes`;
  }
  if (files.length > MAX_FILES) return `${files.length} files are more than the ${MAX_FILES} a session holds`;
  let total = stdin.length;
  for (const { name, bytes } of files) {
    if (name === '' || utf8.encode(name).length > MAX_FILE_NAME_BYTES || name.includes('\0')) {
      const shown = oneLine([...name].slice(0, 80).join(''));
      return `file name '${shown}' is empty, longer than ${MAX_FILE_NAME_BYTES} bytes or contains NUL`;
    }
    total += bytes.length;
  }
  if (total > maxMemory) return `the files and stdin take ${total} bytes, more than max-memory-bytes (${maxMemory})`;
  return null;
}

function evalRequest(code, options, maxReply) {
  options = plainObject(options, 'eval options');
  checkKeys(options, ['inputs', 'chunkName', 'args', 'files', 'stdin', 'onOutput', 'onLog'], 'eval options');
  for (const key of ['onOutput', 'onLog']) {
    if (options[key] !== undefined && typeof options[key] !== 'function') throw new TypeError(`${key} must be a function`);
  }
  let bytes;
  if (typeof code === 'string') bytes = utf8.encode(code);
  else if (code instanceof Uint8Array) bytes = code;
  else throw new TypeError('code must be Lua source: a string or a Uint8Array');
  const chunkName = options.chunkName ?? DEFAULT_CHUNK_NAME;
  if (typeof chunkName !== 'string') throw new TypeError('chunkName must be a string');
  const inputs = [];
  let inputError = null;
  for (const [name, value] of Object.entries(plainObject(options.inputs, 'inputs'))) {
    try {
      inputs.push({ name, value: toWit(value, maxReply) });
    } catch (e) {
      inputError ??= `input ${name}: ${e.message}`;
    }
  }
  const request = {
    code: bytes,
    chunkName,
    inputs,
    args: evalArgs(options.args),
    files: evalFiles(options.files),
    stdin: options.stdin === undefined ? new Uint8Array(0) : bytesOf(options.stdin, 'stdin'),
  };
  const filesError = checkFiles(request, maxReply);
  return { request, inputError, filesError, sinks: { onOutput: options.onOutput, onLog: options.onLog } };
}

// What runEval gives for a one-shot eval whose worker was ended before it
// began, by another eval's stop: it runs again on a fresh worker.
const NOT_RUN = Symbol('not run');

async function runEval(worker, msg, options) {
  const { request, inputError, filesError, sinks } = msg;
  const chunk = request.chunkName;
  if (inputError) return hostReport('invalid_value', inputError, chunk);
  if (filesError) return hostReport('invalid_value', filesError, chunk);
  const reply = await worker.eval({ op: 'eval', id: msg.id, oneShot: msg.oneShot, request }, options.limits.timeoutMs, sinks);
  if (reply.notRun) {
    // Another eval's stop ended the worker before this one began. A one-shot
    // eval runs again on a fresh worker; a session's state is gone.
    if (msg.oneShot && reply.gone.byStop) return NOT_RUN;
    const kind = msg.oneShot ? reply.gone.kind : 'session_poisoned';
    const message = msg.oneShot
      ? reply.gone.message
      : `this session can no longer run code: ${reply.gone.message}; start a new session`;
    return hostReport(kind, message, chunk);
  }
  if (reply.createError !== undefined && reply.createError !== null) {
    throw configError(reply.createError);
  }
  const { outputBytes, logs } = worker.collected();
  const extra = { outputBytes, logs, wallTimeUs: reply.wallTimeUs, capabilityCalls: worker.capabilityCalls };
  if (reply.timedOut) {
    return hostReport(
      'timeout',
      `the script ran longer than the ${options.limits.timeoutMs} ms timeout (raise the timeout limit, --timeout)`,
      chunk,
      extra,
    );
  }
  if (reply.trap) return hostReport(reply.trap, reply.message, chunk, extra);
  if (reply.gone) return hostReport(reply.gone.kind, reply.gone.message, chunk, extra);
  const stats = {
    fuelUsed: null,
    ...statsFrom(reply.stats),
    wallTimeUs: reply.wallTimeUs,
    capabilityCalls: reply.stats.capabilityCalls,
    outputBytes: Number(reply.stats.outputBytes),
    callsUnrecorded: 0,
  };
  return new Report({
    ok: reply.ok,
    valuesJson: reply.ok ? reply.values : '[]',
    exitCode: reply.ok ? reply.exitCode : null,
    error: reply.ok ? null : reply.error,
    outputBytes,
    logs,
    stats,
    files: reply.files,
  });
}

// ---------------------------------------------------------------------------
// The public classes
// ---------------------------------------------------------------------------

export class Sandbox {
  #options;
  #worker = null;
  #closed = false;

  /**
   * @param {object} [options] See index.d.ts.
   */
  constructor(options = {}) {
    options = plainObject(options, 'Sandbox options');
    checkKeys(options, ['limits', 'capabilities', 'allow', 'modules', 'deterministic', 'maxCallsInFlight', 'resourceLimits'], 'Sandbox options');
    const limits = normalizeLimits(options.limits);
    const capabilities = normalizeCapabilities(options.capabilities);
    const allow = options.allow ?? [];
    if (!Array.isArray(allow) || !allow.every((a) => typeof a === 'string')) throw new TypeError('allow must be an array of strings');
    const modules = normalizeModules(options.modules);
    const deterministic = normalizeDeterminism(options.deterministic);
    const maxCallsInFlight = Number(integerOption(options.maxCallsInFlight ?? 16, 'maxCallsInFlight', 1, 1024));
    const resourceLimits = normalizeResourceLimits(options.resourceLimits);
    this.#options = {
      limits,
      capabilities,
      maxCallsInFlight,
      resourceLimits,
      witConfig: {
        limits: {
          maxInstructions: limits.maxInstructions,
          maxCallDepth: limits.maxCallDepth,
          maxStringBytes: limits.maxStringBytes,
          maxMemoryBytes: limits.maxMemoryBytes,
          maxOutputBytes: limits.maxOutputBytes,
          maxValueDepth: limits.maxValueDepth,
        },
        allow: [...allow],
        modules,
        capabilities: [...capabilities].map(([name, c]) => ({
          name,
          minArgs: c.minArgs,
          maxArgs: c.maxArgs,
        })),
        deterministic,
      },
    };
  }

  /** The limits in effect, defaults filled in. */
  get limits() {
    const l = this.#options.limits;
    return { ...l, maxInstructions: Number(l.maxInstructions), maxStringBytes: Number(l.maxStringBytes), maxMemoryBytes: Number(l.maxMemoryBytes), maxOutputBytes: Number(l.maxOutputBytes) };
  }

  #check() {
    if (this.#closed) throw new Error('moonbox: the sandbox is closed');
  }

  /**
   * Runs `code` in a fresh guest session and resolves to its Report. A
   * script's failure is in the report; only bad arguments throw.
   */
  async eval(code, options = {}) {
    this.#check();
    const msg = evalRequest(code, options, Number(this.#options.limits.maxMemoryBytes));
    // Evals queued behind one the wall stopped never ran on that worker:
    // each goes to a fresh worker instead of reporting the other's stop.
    // Each retry follows a stop of another eval, so retries are bounded by
    // the evals started before this one; a worker that dies on its own
    // (at start-up, say) gives its report at once.
    for (;;) {
      this.#check();
      if (!this.#worker || this.#worker.dead) this.#worker = new GuestWorker(this.#options);
      const report = await runEval(this.#worker, { ...msg, oneShot: true }, this.#options);
      if (report !== NOT_RUN) return report;
    }
  }

  /** A session: globals persist between its evals. It has its own worker. */
  async session() {
    this.#check();
    const worker = new GuestWorker(this.#options);
    const reply = await worker.open(1);
    if (reply.gone) {
      await worker.terminate();
      throw new Error(`moonbox: cannot start a session: ${reply.gone.message}`);
    }
    if (reply.createError) {
      await worker.terminate();
      throw configError(reply.createError);
    }
    return new Session(worker, this.#options);
  }

  /** Ends the sandbox's one-shot worker. Sessions are closed on their own. */
  async close() {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    if (worker) await worker.terminate();
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}

export class Session {
  #worker;
  #options;
  #closed = false;

  /** @internal Made by Sandbox.session(). */
  constructor(worker, options) {
    this.#worker = worker;
    this.#options = options;
  }

  /** Runs `code` with the session's globals; resolves to its Report. */
  async eval(code, options = {}) {
    if (this.#closed) throw new Error('moonbox: the session is closed');
    const msg = evalRequest(code, options, Number(this.#options.limits.maxMemoryBytes));
    if (this.#worker.dead) {
      return hostReport(
        'session_poisoned',
        `this session can no longer run code: ${this.#worker.dead.message}; start a new session`,
        msg.request.chunkName,
      );
    }
    return runEval(this.#worker, { ...msg, id: 1, oneShot: false }, this.#options);
  }

  /** Whether a stop (a timeout, a trap) has ended this session. */
  get poisoned() {
    return this.#worker.dead !== null && !this.#closed;
  }

  /** Drops the guest session and ends its worker. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    await this.#worker.terminate();
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}
