// Runs the shared case list (runtimes/cases.json in the repository) through
// the package's public API and prints one JSON line per case, in the format
// runtimes/check.py reads (docs/other-runtimes.md, "The shared case list").
//
//     node test/cases.mjs [CASES.json]     (default: ../../runtimes/cases.json)
//
// Exit status: 0 when every case ran, whatever its outcome; 1 when the host
// failed.

import { readFileSync } from 'node:fs';
import { Sandbox, parseKeepingNumbers } from '../src/index.js';

const path = process.argv[2] ?? new URL('../../../runtimes/cases.json', import.meta.url);
const file = parseKeepingNumbers(readFileSync(path, 'utf8'));
const records = file.records ?? {};

// An integer of the config, kept as a bigint when JSON could not hold it.
const integer = (v) => (JSON.isRawJSON(v) ? BigInt(v.rawJSON) : v);

function limitsOf(limits) {
  return {
    maxInstructions: integer(limits['max-instructions']),
    maxCallDepth: integer(limits['max-call-depth']),
    maxStringBytes: integer(limits['max-string-bytes']),
    maxMemoryBytes: integer(limits['max-memory-bytes']),
    maxOutputBytes: integer(limits['max-output-bytes']),
    maxValueDepth: integer(limits['max-value-depth']),
  };
}

// What the two capabilities do (the file's `capability-behaviour`).
const behaviour = {
  'records.get': (id) => {
    if (typeof id !== 'string') throw new Error('the id must be a string');
    return Object.hasOwn(records, id) ? records[id] : null;
  },
  'cases.fail': (message) => {
    throw new Error(typeof message === 'string' ? message : JSON.stringify(message ?? null, (_k, v) => (typeof v === 'bigint' ? JSON.rawJSON(String(v)) : v)));
  },
};

function capabilitiesOf(list) {
  const out = {};
  for (const c of list ?? []) {
    const fn = behaviour[c.name] ?? (() => { throw new Error('no such capability'); });
    out[c.name] = { fn, minArgs: integer(c['min-args']), maxArgs: integer(c['max-args']) };
  }
  return out;
}

const config = file.config;
const sandboxes = new Map();
function sandboxFor(caseLimits) {
  const limits = { ...config.limits, ...caseLimits };
  const key = JSON.stringify(limits);
  let sandbox = sandboxes.get(key);
  if (!sandbox) {
    const d = config.deterministic;
    sandbox = new Sandbox({
      limits: limitsOf(limits),
      allow: config.allow ?? [],
      modules: (config.modules ?? []).map(({ name, source }) => ({ name, source })),
      capabilities: capabilitiesOf(config.capabilities),
      deterministic: d ? { clock: integer(d.clock), seed: integer(d.seed) } : undefined,
    });
    sandboxes.set(key, sandbox);
  }
  return sandbox;
}

// The case's args, files (each a name and its bytes as `text` or `base64`)
// and stdin as eval options.
function evalOptions(testCase) {
  const options = { chunkName: file['chunk-name'] };
  if (testCase.args !== undefined) options.args = testCase.args;
  if (testCase.files !== undefined) {
    options.files = new Map(
      testCase.files.map((f) => [f.name, f.text ?? new Uint8Array(Buffer.from(f.base64, 'base64'))]),
    );
  }
  if (testCase.stdin !== undefined) options.stdin = testCase.stdin;
  return options;
}

function line(name, report) {
  const files = JSON.parse(report.toJson()).files;
  const rest = JSON.stringify({
    output: report.output,
    ...(report.outputBase64 === undefined ? {} : { output_base64: report.outputBase64 }),
    exit_code: report.exitCode,
    ...(files === undefined ? {} : { files }),
    error: report.error && {
      kind: report.error.kind,
      message: report.error.message,
      chunk: report.error.chunk,
      line: report.error.line,
      traceback: report.error.traceback,
    },
    stats: {
      instructions: report.stats.instructions,
      peak_memory_bytes: report.stats.peakMemoryBytes,
      capability_calls: report.stats.capabilityCalls,
      output_bytes: report.stats.outputBytes,
    },
  });
  // The values and the logs' fields are the guest's text, spliced unparsed.
  return `{"name":${JSON.stringify(name)},"ok":${report.ok},"values":${report.valuesJson},"logs":${report.logsJson},${rest.slice(1)}`;
}

try {
  for (const testCase of file.cases) {
    let text;
    try {
      const report = await sandboxFor(testCase.limits).eval(testCase.script, evalOptions(testCase));
      text = line(testCase.name, report);
      // A stop of the host's own is a failure of this host, not a result.
      if (report.error && ['internal', 'session_poisoned'].includes(report.error.kind)) process.exitCode = 1;
    } catch (e) {
      text = JSON.stringify({ name: testCase.name, ok: false, error: { kind: 'create', message: e.reason ?? e.message } });
    }
    process.stdout.write(`${text}\n`);
  }
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  await Promise.all([...sandboxes.values()].map((s) => s.close()));
}
