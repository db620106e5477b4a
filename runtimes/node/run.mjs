// Runs the shared case list through the moonbox component in Node.js.
//
//     node run.mjs [CASES.json]        (default: ../cases.json)
//
// The component (`moonbox:sandbox@0.3.0`) is transpiled by jco (`npm run
// build`) into ./gen/ in "instantiation" mode, so this file hands it every
// import itself: the `moonbox:sandbox/output` and
// `moonbox:sandbox/capabilities` interfaces, implemented below, and the WASI
// 0.2 interfaces, taken from @bytecodealliance/preview2-shim with nothing
// granted (no preopened directories, no environment, no arguments).
//
// For each case it creates a session with the file's config (the case's
// `limits` merged over `config.limits`), evaluates the script, collects the
// bytes the script wrote through `output.write`, and prints one JSON line:
// the report shape of docs/wit.md plus the case's name (see
// docs/other-runtimes.md). It does not judge the results: a separate checker
// compares the lines with the cases' expectations and with the other hosts'
// lines.
//
// Exit status: 0 when every case ran, whatever its outcome; 1 when the host
// failed (the component could not be loaded, or it trapped).
//
// This host relies on the limits the guest enforces itself. Unlike the Rust
// host it puts no outer wall around a call (no fuel, no wall-clock deadline,
// no cap on linear memory), which an embedding that runs untrusted scripts
// would add, for example by running the component in a worker it can end.

import { readFileSync } from 'node:fs';
import { WASIShim } from '@bytecodealliance/preview2-shim/instantiation';

const GENERATED = new URL('./gen/', import.meta.url);

// ---------------------------------------------------------------------------
// Reading the case file
// ---------------------------------------------------------------------------

// Parses JSON, keeping every number whose text JSON.stringify would not give
// back (`1.0`, `2e3`, integers past 2^53) as that text. The contract keeps
// integers and floats apart, so records reach the guest exactly as written,
// and large integers in the config stay exact.
function parseJson(text) {
  return JSON.parse(text, (_key, value, context) =>
    typeof value === 'number' && JSON.stringify(value) !== context.source
      ? JSON.rawJSON(context.source)
      : value,
  );
}

// Reads an integer field of the config (a number, or a number kept as its
// source text by parseJson) as a bigint in [min, max].
function integer(value, what, min, max) {
  const text = JSON.isRawJSON(value) ? value.rawJSON : typeof value === 'number' ? String(value) : '';
  if (!/^-?\d+$/.test(text)) throw new Error(`${what} must be an integer`);
  const n = BigInt(text);
  if (n < min || n > max) throw new Error(`${what} is out of range`);
  return n;
}

const u32 = (value, what) => Number(integer(value, what, 0n, 2n ** 32n - 1n));
const u64 = (value, what) => integer(value, what, 0n, 2n ** 64n - 1n);
const s64 = (value, what) => integer(value, what, -(2n ** 63n), 2n ** 63n - 1n);

const utf8 = new TextEncoder();

// Converts a config written with the WIT's field names (kebab-case, as in
// the case file) to the shape jco's bindings take: camelCase field names,
// bigint for 64-bit integers, `undefined` for an absent option, and a
// Uint8Array for `list<u8>` (module sources are bytes; the case file's are
// text, sent as UTF-8).
function witConfig(config, limits) {
  const field = (name) => `config.limits.${name}`;
  return {
    limits: {
      maxInstructions: u64(limits['max-instructions'], field('max-instructions')),
      maxCallDepth: u32(limits['max-call-depth'], field('max-call-depth')),
      maxStringBytes: u64(limits['max-string-bytes'], field('max-string-bytes')),
      maxMemoryBytes: u64(limits['max-memory-bytes'], field('max-memory-bytes')),
      maxOutputBytes: u64(limits['max-output-bytes'], field('max-output-bytes')),
      maxValueDepth: u32(limits['max-value-depth'], field('max-value-depth')),
    },
    allow: config.allow ?? [],
    modules: (config.modules ?? []).map(({ name, source }) => ({ name, source: utf8.encode(source) })),
    capabilities: (config.capabilities ?? []).map((c) => ({
      name: c.name,
      minArgs: u32(c['min-args'], `${c.name}: min-args`),
      maxArgs: u32(c['max-args'], `${c.name}: max-args`),
      doc: c.doc ?? '',
      // The case list declares no JSON Schemas.
      paramsSchema: undefined,
      resultSchema: undefined,
    })),
    deterministic: witDeterminism(config.deterministic),
  };
}

function witDeterminism(determinism) {
  if (!determinism) return undefined;
  return {
    clock: s64(determinism.clock, 'config.deterministic.clock'),
    seed: s64(determinism.seed, 'config.deterministic.seed'),
  };
}

// ---------------------------------------------------------------------------
// Capabilities
// ---------------------------------------------------------------------------

// The `moonbox:sandbox/capabilities` import. `call` receives the capability's
// name and one `value` per Lua argument, in jco's form of a WIT variant:
// `{ tag: 'nil' }`, `{ tag: 'boolean' | 'integer' | 'float' | 'text' |
// 'json', val }` (an integer's `val` is a bigint, a table arrives as JSON
// text). It returns jco's form of `result<value, string>`: `{ tag: 'ok', val
// }` with one `value`, or `{ tag: 'err', val }` with a message, which the
// guest raises as a Lua error. (jco also takes a return value without an
// `ok`/`err` tag as `ok` and a thrown error carrying a `payload` as `err`;
// any other exception would trap the guest, so nothing is allowed to
// escape.)
function capabilities(records) {
  const handlers = {
    // records.get(id): the record stored under `id` as JSON, or nil.
    'records.get': ([id]) => {
      if (id.tag !== 'text') return err('records.get: the id must be a string');
      // JSON.stringify writes back the number texts parseJson kept, so the
      // record reaches the guest exactly as the case file wrote it.
      return Object.hasOwn(records, id.val) ? ok(json(JSON.stringify(records[id.val]))) : ok(nil);
    },
    // cases.fail(message): always fails with this message.
    'cases.fail': ([message]) => err(`cases.fail: ${message.tag === 'text' ? message.val : valueText(message)}`),
  };
  const call = (name, args) => {
    if (!Object.hasOwn(handlers, name)) return err(`${name}: no such capability`);
    try {
      return handlers[name](args);
    } catch (e) {
      return err(`${name}: ${e.message}`);
    }
  };
  return {
    call,
    // A batch: these handlers are synchronous, so the calls run one after
    // another, and the replies are in request order.
    callMany: (calls) => calls.map((request) => call(request.name, request.args)),
  };
}

// A `value` written as JSON text, for messages.
function valueText(value) {
  switch (value.tag) {
    case 'nil':
      return 'null';
    case 'json':
      return value.val;
    case 'integer':
      return value.val.toString();
    default:
      return JSON.stringify(value.val);
  }
}

const nil = { tag: 'nil' };
const json = (val) => ({ tag: 'json', val });
const ok = (val) => ({ tag: 'ok', val });
const err = (val) => ({ tag: 'err', val });

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

// The `moonbox:sandbox/output` import. The guest writes the script's bytes
// as it runs, in order; they belong to whichever eval is running. The
// imports are bound once, to the one instance all sessions share, so `write`
// appends to the collector of the current eval, which `runCase` starts
// before `eval` and takes after it, whatever the outcome: bytes written
// before an error count too.
class OutputCollector {
  #chunks = [];
  #kept = 0;
  #limit = 0;
  #logs = [];
  #logRoom = 0;

  // Starts collecting for one eval, keeping at most `limit` bytes. The guest
  // never writes past `max-output-bytes`, but a host should not rely on
  // another component to bound its own memory.
  start(limit) {
    this.#chunks = [];
    this.#kept = 0;
    this.#limit = limit;
    this.#logs = [];
    this.#logRoom = limit;
  }

  // The bytes collected since `start`, in one array, and the log events as
  // JSON text; collection stops.
  take() {
    const bytes = Buffer.concat(this.#chunks, this.#kept);
    const logs = `[${this.#logs.join(',')}]`;
    this.start(0);
    return { bytes, logs };
  }

  imports() {
    return {
      write: (bytes) => {
        const room = this.#limit - this.#kept;
        if (room <= 0) return;
        // `bytes` is a copy jco made of the guest's memory, so keeping it is safe.
        const kept = bytes.length <= room ? bytes : bytes.subarray(0, room);
        this.#chunks.push(kept);
        this.#kept += kept.length;
      },
      // Structured log events, apart from the byte stream, kept while their
      // message and fields bytes plus LOG_EVENT_BYTES fit, as the guest
      // counts them. The fields (the guest's JSON object) are spliced in
      // verbatim, as the values are: JSON.parse would lose `1.0`.
      log: (level, message, fields) => {
        const cost = utf8.encode(message).length + utf8.encode(fields).length + LOG_EVENT_BYTES;
        if (cost > this.#logRoom) return;
        this.#logRoom -= cost;
        this.#logs.push(`{"level":${JSON.stringify(level)},"message":${JSON.stringify(message)},"fields":${fields}}`);
      },
    };
  }
}

// ---------------------------------------------------------------------------
// WASI
// ---------------------------------------------------------------------------

// The WASI imports. The shim's sandbox options grant no directories, no
// environment and no arguments; the initial working directory is withheld
// too. The guest never writes to WASI stdout (the script's output travels
// through `output`); should it, that goes to the host's stderr, so that
// stdout carries only the result lines.
//
// With a deterministic config the clocks stand still at the configured
// instant and random bytes come from a generator seeded by the config, as
// in the Rust host, so nothing the guest reads from WASI varies between runs.
// (These imports belong to the instance, which all sessions share, so they
// follow the case file's one config.)
function wasiImports(determinism) {
  const imports = new WASIShim({ sandbox: { preopens: {}, env: {}, args: [] } }).getImportObject();
  imports['wasi:cli/environment'] = {
    getEnvironment: () => [],
    getArguments: () => [],
    initialCwd: () => undefined,
  };
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
    const next = splitMix64(BigInt.asUintN(64, determinism.seed));
    const getRandomBytes = (len) => {
      const bytes = new Uint8Array(Number(len));
      for (let i = 0; i < bytes.length; i += 8) {
        let word = next();
        for (let j = i; j < Math.min(i + 8, bytes.length); j++, word >>= 8n) {
          bytes[j] = Number(word & 0xffn);
        }
      }
      return bytes;
    };
    imports['wasi:random/random'] = { getRandomBytes, getRandomU64: next };
  }
  return imports;
}

// SplitMix64: a small, well-mixed generator, ample for seeding the guest.
function splitMix64(seed) {
  let state = seed;
  return () => {
    state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
    let z = state;
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
    return z ^ (z >> 31n);
  };
}

// ---------------------------------------------------------------------------
// Loading the component
// ---------------------------------------------------------------------------

// A failure to start: reported by its message alone, without a stack.
class LoadError extends Error {}

// Instantiates the transpiled component and returns its `lua` export.
async function loadComponent(imports) {
  let bindings;
  try {
    bindings = await import(new URL('moonbox.js', GENERATED));
  } catch (e) {
    throw new LoadError(`cannot load the transpiled component (run \`npm run build\` first): ${e.message}`);
  }
  const compile = (path) => new WebAssembly.Module(readFileSync(new URL(path, GENERATED)));
  return bindings.instantiate(compile, imports).lua;
}

// A `result` error returned by an export: jco throws it as an Error whose
// `payload` is the `err` value. Anything else thrown is a trap or a host bug.
function resultError(e) {
  if (e instanceof Error && Object.hasOwn(e, 'payload')) return e.payload;
  throw e;
}

// ---------------------------------------------------------------------------
// Running the cases
// ---------------------------------------------------------------------------

// The most output bytes kept for one eval, whatever the limit says: far more
// than any case writes, and within what one Buffer can hold.
const MAX_KEPT_OUTPUT = 1 << 30;

// What each log event is charged beyond its message and fields bytes, as the
// guest charges it against `max-output-bytes`.
const LOG_EVENT_BYTES = 32;

// A u64 from the guest (a bigint) as an exact JSON integer.
const exactInteger = (n) => JSON.rawJSON(BigInt(n).toString());

function statsLine(stats) {
  return {
    instructions: exactInteger(stats.instructions),
    peak_memory_bytes: exactInteger(stats.peakMemoryBytes),
    capability_calls: stats.capabilityCalls,
    output_bytes: exactInteger(stats.outputBytes),
  };
}

// Output as text, with each invalid UTF-8 sequence replaced by U+FFFD, as
// the Rust host does. `ignoreBOM` keeps a leading byte-order mark, which
// is part of what the script wrote.
const lossyUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const strictUtf8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });

// The `output` fields of a line: the text, and the exact bytes in base64
// when the text cannot hold them.
function outputFields(bytes) {
  try {
    return { output: strictUtf8.decode(bytes) };
  } catch {
    return { output: lossyUtf8.decode(bytes), output_base64: bytes.toString('base64') };
  }
}

// A result line as JSON text. `outcome.values` is the guest's JSON array
// text, spliced in verbatim: JSON.parse would turn `1.0` into `1` and round
// integers past 2^53 (JSON.rawJSON cannot hold an array), and the values must
// reach the checker exactly.
function resultLine(name, outcome, { bytes: outputBytes, logs }) {
  const rest = JSON.stringify({
    ...outputFields(outputBytes),
    exit_code: outcome.exitCode,
    error: outcome.error,
    stats: statsLine(outcome.stats),
  });
  // `rest` is `{"output":...}`: name, ok and values go in front of its members.
  // `logs` is JSON text too, with the guest's fields spliced in verbatim.
  return `{"name":${JSON.stringify(name)},"ok":${outcome.ok},"values":${outcome.values},"logs":${logs},${rest.slice(1)}`;
}

// The line for a case whose session could not be created.
const createFailed = (name, message) =>
  JSON.stringify({ name, ok: false, error: { kind: 'create', message } });

// Runs one case in a new session and returns its result line as JSON text.
function runCase(lua, output, file, testCase) {
  const name = testCase.name;
  let config;
  try {
    config = witConfig(file.config, { ...file.config.limits, ...testCase.limits });
  } catch (e) {
    return createFailed(name, e.message);
  }

  let session;
  try {
    session = lua.Session.create(config);
  } catch (e) {
    return createFailed(name, String(resultError(e)));
  }

  output.start(Math.min(Number(config.limits.maxOutputBytes), MAX_KEPT_OUTPUT));
  const request = { code: utf8.encode(testCase.script), chunkName: file['chunk-name'], inputs: [] };
  let outcome;
  try {
    const success = session.eval(request);
    outcome = { ok: true, values: success.values, exitCode: success.exitCode ?? null, error: null, stats: success.stats };
  } catch (e) {
    // A `failure` holds no output: what the script wrote before it failed
    // has already come through `output`.
    const { error, stats } = resultError(e);
    outcome = {
      ok: false,
      values: '[]',
      exitCode: null,
      stats,
      error: {
        // The line uses snake_case for the WIT's kebab-case enum cases.
        kind: error.kind.replaceAll('-', '_'),
        message: error.message,
        chunk: error.chunk,
        line: error.line ?? null,
        traceback: error.traceback ?? null,
      },
    };
  } finally {
    session[Symbol.dispose]();
  }
  return resultLine(name, outcome, output.take());
}

async function main() {
  // The core modules use WebAssembly exception references (exnref), which
  // this host needs Node 26 or later for.
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 26) throw new LoadError(`Node ${process.versions.node} is too old: Node 26 or later is needed`);

  const path = process.argv[2] ?? new URL('../cases.json', import.meta.url);
  const file = parseJson(readFileSync(path, 'utf8'));

  const output = new OutputCollector();
  const imports = {
    ...wasiImports(witDeterminism(file.config.deterministic)),
    'moonbox:sandbox/output': output.imports(),
    'moonbox:sandbox/capabilities': capabilities(file.records ?? {}),
  };
  const lua = await loadComponent(imports);

  for (const testCase of file.cases) {
    let line;
    try {
      line = runCase(lua, output, file, testCase);
    } catch (e) {
      // A trap leaves the instance unusable, so the run stops here.
      throw new Error(`case ${JSON.stringify(testCase.name)}: the component failed`, { cause: e });
    }
    process.stdout.write(`${line}\n`);
  }
}

try {
  await main();
} catch (e) {
  console.error(e instanceof LoadError ? `error: ${e.message}` : e);
  process.exitCode = 1;
}
