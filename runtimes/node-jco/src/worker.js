// The worker that runs the guest. The main thread (src/sandbox.js) starts
// one per session (and one for the sandbox's one-shot evals), hands it the
// core modules it compiled, and may end it at any moment with
// `worker.terminate()`: everything the main thread needs after that (the
// output written so far, the log events) lives in shared memory, not here.
//
// Messages from the main thread, on `parentPort`, each answered in order:
//   {op: 'open', id}                 create guest session `id`
//   {op: 'eval', id, oneShot, request, deadline}
//                                    run one eval (in a fresh guest session
//                                    when `oneShot`)
// Capability calls go to the main thread on `workerData.capPort`; the worker
// blocks in Atomics.wait until the reply is there (or the deadline passes).

import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { WASIShim } from '@bytecodealliance/preview2-shim/instantiation';
import { CTRL, LEVELS } from './shared.js';

const { modules, bindingsUrl, config, capPort, shared, maxWasmBytes } = workerData;
const determinism = config.deterministic;
const ctrl = new Int32Array(shared.ctrl);
const outBytes = new Uint8Array(shared.output);
const logBytes = new Uint8Array(shared.logs);
const logView = new DataView(shared.logs);
const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------
// Imports
// ---------------------------------------------------------------------------

const output = {
  // The guest never writes past max-output-bytes per eval; the buffer is
  // that large, so only a host bug could overflow it, and then the tail is
  // dropped rather than written out of bounds.
  write(bytes) {
    const at = Atomics.load(ctrl, CTRL.OUTPUT_LEN);
    const room = outBytes.length - at;
    const n = Math.min(room, bytes.length);
    if (n > 0) outBytes.set(n === bytes.length ? bytes : bytes.subarray(0, n), at);
    Atomics.store(ctrl, CTRL.OUTPUT_LEN, at + n);
  },
  // Events as [level u8][message length u32][message][fields length u32]
  // [fields]: 9 bytes of framing, less than the 32 the guest charges each
  // event against max-output-bytes, so the buffer (that size) holds them.
  log(level, message, fields) {
    const m = utf8.encode(message);
    const f = utf8.encode(fields);
    const at = Atomics.load(ctrl, CTRL.LOG_LEN);
    const size = 9 + m.length + f.length;
    if (at + size > logBytes.length) return;
    logView.setUint8(at, LEVELS.indexOf(level));
    logView.setUint32(at + 1, m.length, true);
    logBytes.set(m, at + 5);
    logView.setUint32(at + 5 + m.length, f.length, true);
    logBytes.set(f, at + 9 + m.length);
    Atomics.store(ctrl, CTRL.LOG_LEN, at + size);
  },
  // The guest's file changes, dropped: this host reports the guest's own
  // account of the files, and a timeout here ends the eval without it
  // (docs/other-runtimes.md).
  file(_change) {},
};

let deadline = Infinity;

// How long past the deadline the worker still waits for a reply: the main
// thread ends the worker at the deadline, and the wait must not end first
// (that would turn the timeout into a capability error).
const GRACE_MS = 2000;

// Sends a batch to the main thread and waits for the replies, at most until
// the eval's deadline (at which the main thread ends this worker anyway).
function remote(calls) {
  Atomics.store(ctrl, CTRL.REPLY, 0);
  capPort.postMessage(calls);
  for (;;) {
    const left = deadline + GRACE_MS - Date.now();
    if (left <= 0) break;
    Atomics.wait(ctrl, CTRL.REPLY, 0, left);
    if (Atomics.load(ctrl, CTRL.REPLY) === 1) break;
  }
  const reply = receiveMessageOnPort(capPort);
  if (!reply) {
    return calls.map(({ name }) => ({ tag: 'err', val: `${name}: the host did not answer before the deadline` }));
  }
  return reply.message;
}

const capabilities = {
  call: (name, args) => remote([{ name, args }])[0],
  callMany: (calls) => remote(calls.map(({ name, args }) => ({ name, args }))),
};

function wasiImports() {
  const imports = new WASIShim({ sandbox: { preopens: {}, env: {}, args: [] } }).getImportObject();
  imports['wasi:cli/environment'] = {
    getEnvironment: () => [],
    getArguments: () => [],
    initialCwd: () => undefined,
  };
  // The script's output travels through `output`; anything on WASI stdout
  // goes to the process's stderr.
  imports['wasi:cli/stdout'] = { getStdout: () => imports['wasi:cli/stderr'].getStderr() };
  if (determinism) {
    const seconds = determinism.clock < 0n ? 0n : determinism.clock;
    imports['wasi:clocks/wall-clock'] = {
      now: () => ({ seconds, nanoseconds: 0 }),
      resolution: () => ({ seconds: 1n, nanoseconds: 0 }),
    };
    imports['wasi:clocks/monotonic-clock'] = {
      ...imports['wasi:clocks/monotonic-clock'],
      now: () => 0n,
      resolution: () => 1_000_000_000n,
    };
    const getRandomBytes = (len) => {
      const bytes = new Uint8Array(Number(len));
      for (let i = 0; i < bytes.length; i += 8) {
        let word = random.next();
        for (let j = i; j < Math.min(i + 8, bytes.length); j++, word >>= 8n) bytes[j] = Number(word & 0xffn);
      }
      return bytes;
    };
    imports['wasi:random/random'] = { getRandomBytes, getRandomU64: () => random.next() };
  }
  return imports;
}

// SplitMix64, reset to the seed for every guest session, so that what a
// session reads from WASI random does not depend on the sessions before it.
const random = {
  state: 0n,
  reset() {
    this.state = determinism ? BigInt.asUintN(64, determinism.seed) : 0n;
  },
  next() {
    this.state = BigInt.asUintN(64, this.state + 0x9e3779b97f4a7c15n);
    let z = this.state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  },
};

// ---------------------------------------------------------------------------
// The instance
// ---------------------------------------------------------------------------

let memory = null;
const bindings = await import(bindingsUrl);
const lua = bindings.instantiate(
  (name) => modules.get(name),
  {
    ...wasiImports(),
    'moonbox:sandbox/output': output,
    'moonbox:sandbox/capabilities': capabilities,
  },
  (module, importObject) => {
    const instance = new WebAssembly.Instance(module, importObject);
    if (!memory && instance.exports.memory instanceof WebAssembly.Memory) memory = instance.exports.memory;
    return instance;
  },
).lua;

const sessions = new Map();

// A result error from an export (jco throws it with a `payload`); anything
// else is a trap.
function payload(e) {
  if (e instanceof Error && Object.hasOwn(e, 'payload')) return e.payload;
  throw e;
}

function create() {
  random.reset();
  try {
    return { session: lua.Session.create(config) };
  } catch (e) {
    return { createError: String(payload(e)) };
  }
}

const stats = (s) => ({
  instructions: s.instructions.toString(),
  peakMemoryBytes: s.peakMemoryBytes.toString(),
  capabilityCalls: s.capabilityCalls,
  outputBytes: s.outputBytes.toString(),
});

function trap(e) {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof RangeError && /call stack/i.test(message)) {
    return { trap: 'call_depth', message: 'the script exhausted the wasm stack (recursion through C functions is too deep)' };
  }
  if (memory && memory.buffer.byteLength >= maxWasmBytes - 65536) {
    return { trap: 'memory_limit', message: 'the sandbox ran out of linear memory (the maxWasmMemoryBytes limit)' };
  }
  return { trap: 'internal', message: `the guest trapped: ${message}` };
}

// The files an eval wrote, as the main thread takes them.
const files = (list) => list.map(({ name, bytes }) => ({ name, bytes }));

function runEval(session, request) {
  try {
    const s = session.eval(request);
    return { ok: true, values: s.values, exitCode: s.exitCode ?? null, stats: stats(s.stats), files: files(s.files) };
  } catch (e) {
    const failure = payload(e);
    const { error } = failure;
    return {
      ok: false,
      stats: stats(failure.stats),
      files: files(failure.files),
      error: {
        kind: error.kind.replaceAll('-', '_'),
        message: error.message,
        chunk: error.chunk,
        line: error.line ?? null,
        traceback: error.traceback ?? null,
      },
    };
  }
}

parentPort.on('message', (msg) => {
  let reply;
  try {
    if (msg.op === 'open') {
      const made = create();
      if (made.session) sessions.set(msg.id, made.session);
      reply = { createError: made.createError ?? null };
    } else if (msg.op === 'eval') {
      deadline = msg.deadline;
      if (msg.oneShot) {
        const made = create();
        if (!made.session) {
          reply = { createError: made.createError };
        } else {
          reply = runEval(made.session, msg.request);
          made.session[Symbol.dispose]();
        }
      } else {
        const session = sessions.get(msg.id);
        reply = session ? runEval(session, msg.request) : { trap: 'internal', message: 'no such session in the worker' };
      }
      deadline = Infinity;
    }
  } catch (e) {
    // A trap leaves the instance unusable: report it and stop taking work.
    reply = trap(e);
    reply.fatal = true;
  }
  parentPort.postMessage(reply);
});
parentPort.postMessage({ ready: true });
