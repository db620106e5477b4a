// Runs the shared case list through the moonbox component in Node.js.
//
//     node run.mjs [CASES.json]        (default: ../cases.json)
//
// The component is transpiled by jco (`npm run build`) into ./gen/ in
// "instantiation" mode, so this file hands it every import itself: the
// `moonbox:sandbox/capabilities` interface, implemented below, and the WASI
// 0.2 interfaces, taken from @bytecodealliance/preview2-shim with nothing
// granted (no preopened directories, no environment, no arguments).
//
// For each case it creates a session with the file's config (the case's
// `limits` merged over `config.limits`), evaluates the script and prints one
// JSON line. It does not judge the results: a separate checker compares the
// lines with the cases' expectations and with the other hosts' lines.
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

// Converts a config written with the WIT's field names (kebab-case, as in
// the case file) to the shape jco's bindings take: camelCase field names,
// bigint for 64-bit integers, `undefined` for an absent option.
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
    modules: (config.modules ?? []).map(({ name, source }) => ({ name, source })),
    capabilities: (config.capabilities ?? []).map((c) => ({
      name: c.name,
      minArgs: u32(c['min-args'], `${c.name}: min-args`),
      maxArgs: u32(c['max-args'], `${c.name}: max-args`),
      doc: c.doc ?? '',
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
// name and its arguments as a JSON array text, and returns jco's form of
// `result<string, string>`: `{ tag: 'ok', val }` with one JSON value as text,
// or `{ tag: 'err', val }` with a message, which the guest raises as a Lua
// error. (jco also takes a plain return value as `ok` and a thrown error
// carrying a `payload` as `err`; any other exception would trap the guest,
// so nothing is allowed to escape.)
function capabilities(records) {
  const handlers = {
    // records.get(id): the record stored under `id`, or null.
    'records.get': ([id]) => {
      if (typeof id !== 'string') return err('records.get: the id must be a string');
      return ok(Object.hasOwn(records, id) ? JSON.stringify(records[id]) : 'null');
    },
    // cases.fail(message): always fails with this message.
    'cases.fail': ([message]) => err(`cases.fail: ${message}`),
  };
  return {
    call(name, argsText) {
      if (!Object.hasOwn(handlers, name)) return err(`${name}: no such capability`);
      try {
        // Strings and plain numbers are all these handlers read; a host that
        // needs integers and floats apart, or 64-bit integers, would parse
        // with parseJson.
        return handlers[name](JSON.parse(argsText));
      } catch (e) {
        return err(`${name}: ${e.message}`);
      }
    },
  };
}

const ok = (val) => ({ tag: 'ok', val });
const err = (val) => ({ tag: 'err', val });

// ---------------------------------------------------------------------------
// WASI
// ---------------------------------------------------------------------------

// The WASI imports. The shim's sandbox options grant no directories, no
// environment and no arguments; the initial working directory is withheld
// too. The guest's stdout goes to the host's stderr, so that stdout carries
// only the result lines.
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

// A u64 from the guest (a bigint) as an exact JSON integer.
const exactInteger = (n) => JSON.rawJSON(BigInt(n).toString());

function statsLine(stats) {
  return {
    instructions: exactInteger(stats.instructions),
    'peak-memory-bytes': exactInteger(stats.peakMemoryBytes),
    'capability-calls': stats.capabilityCalls,
  };
}

// Runs one case in a new session and returns its result line as an object.
function runCase(lua, file, testCase) {
  const name = testCase.name;
  let config;
  try {
    config = witConfig(file.config, { ...file.config.limits, ...testCase.limits });
  } catch (e) {
    return { name, ok: false, kind: 'create', message: e.message };
  }

  let session;
  try {
    session = lua.Session.create(config);
  } catch (e) {
    return { name, ok: false, kind: 'create', message: String(resultError(e)) };
  }

  try {
    const success = session.eval(testCase.script, file['chunk-name']);
    return {
      name,
      ok: true,
      values: success.values,
      output: success.output,
      stats: statsLine(success.stats),
    };
  } catch (e) {
    const { error, output, stats } = resultError(e);
    return {
      name,
      ok: false,
      kind: error.kind,
      message: error.message,
      chunk: error.chunk,
      line: error.line ?? null,
      output,
      stats: statsLine(stats),
    };
  } finally {
    session[Symbol.dispose]();
  }
}

async function main() {
  // The core modules use WebAssembly exception references (exnref), which
  // this host needs Node 26 or later for.
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 26) throw new LoadError(`Node ${process.versions.node} is too old: Node 26 or later is needed`);

  const path = process.argv[2] ?? new URL('../cases.json', import.meta.url);
  const file = parseJson(readFileSync(path, 'utf8'));

  const imports = {
    ...wasiImports(witDeterminism(file.config.deterministic)),
    'moonbox:sandbox/capabilities': capabilities(file.records ?? {}),
  };
  const lua = await loadComponent(imports);

  for (const testCase of file.cases) {
    let line;
    try {
      line = runCase(lua, file, testCase);
    } catch (e) {
      // A trap leaves the instance unusable, so the run stops here.
      throw new Error(`case ${JSON.stringify(testCase.name)}: the component failed`, { cause: e });
    }
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}

try {
  await main();
} catch (e) {
  console.error(e instanceof LoadError ? `error: ${e.message}` : e);
  process.exitCode = 1;
}
