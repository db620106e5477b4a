// `moonbox run`: runs one script and prints what it wrote and what it
// returned, or with --json the report. Exit codes: 0 success, 1 a Lua
// error, 2 a usage, input or host error, 3 a limit, n & 0xff for os.exit(n).

import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { LIMIT_KINDS, oneLine } from './report.js';
import { Sandbox } from './sandbox.js';
import { parseKeepingNumbers } from './values.js';

const USAGE = `Usage: moonbox run [FLAGS] FILE|-

Runs a Lua 5.4 script in the sandbox. Prints what the script writes, then
the values it returned as one JSON array line (--json: one JSON report).

Flags:
  --json                    print the report as one JSON object
  --input NAME=JSON         set global NAME to a JSON value (repeatable)
  --max-instructions N      Lua VM instructions (default 10000000)
  --max-call-depth N        call depth (default 1000)
  --max-string-bytes SIZE   longest string (default 16MiB)
  --max-memory-bytes SIZE   Lua heap (default 64MiB)
  --max-output-bytes SIZE   output (default 1MiB)
  --timeout DURATION        wall-clock time (default 5s; 2s, 500ms, 1m)
  --allow NAME              allow a sandboxed name back (repeatable)
  --deterministic           fixed clock and seed
  --seed N                  math.random seed (implies --deterministic)
  --records FILE.json       offer records.get(id) from a JSON object
  --module NAME=FILE        make FILE loadable as require(NAME) (repeatable)
  -h, --help                show this help
  --version                 show the version

Exit status: 0 success, 1 Lua error, 2 usage or host error, 3 a limit
stopped the script; os.exit(n) exits with n & 255.
`;

class UsageError extends Error {}

function parseSize(s, flag) {
  const m = /^(\d+)\s*([A-Za-z]*)$/.exec(s.trim());
  if (!m) throw new UsageError(`${flag}: '${s}' is not a size; try 64MiB, 512KiB or 1048576`);
  const shifts = { '': 0n, b: 0n, k: 10n, kb: 10n, kib: 10n, m: 20n, mb: 20n, mib: 20n, g: 30n, gb: 30n, gib: 30n };
  const shift = shifts[m[2].toLowerCase()];
  if (shift === undefined) throw new UsageError(`${flag}: unknown size unit '${m[2]}'; use B, KiB, MiB or GiB`);
  const bytes = BigInt(m[1]) << shift;
  if (bytes === 0n) throw new UsageError(`${flag}: the size must be greater than zero`);
  if (bytes > 4n << 30n) throw new UsageError(`${flag}: '${s}' is larger than the most allowed, 4GiB`);
  return Number(bytes);
}

function parseDuration(s, flag) {
  const m = /^(\d+)\s*([a-z]*)$/.exec(s.trim());
  if (!m) throw new UsageError(`${flag}: '${s}' is not a duration; try 2s or 500ms`);
  const scale = { ms: 1, s: 1000, '': 1000, m: 60_000, min: 60_000, h: 3_600_000 }[m[2]];
  if (scale === undefined) throw new UsageError(`${flag}: unknown duration unit '${m[2]}'; use ms, s, m or h`);
  const ms = Number(m[1]) * scale;
  if (ms === 0) throw new UsageError(`${flag}: the duration must be greater than zero`);
  if (ms > 24 * 3_600_000) throw new UsageError(`${flag}: '${s}' is longer than the most allowed, 24h`);
  return ms;
}

function parseCount(s, flag) {
  if (!/^\d+$/.test(s.trim())) throw new UsageError(`${flag}: '${s}' is not a whole number`);
  const n = BigInt(s.trim());
  if (n === 0n) throw new UsageError(`${flag}: must be greater than zero`);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

function splitPair(s, flag) {
  const at = s.indexOf('=');
  if (at <= 0) throw new UsageError(`${flag}: expected NAME=VALUE, got '${s}'`);
  return [s.slice(0, at), s.slice(at + 1)];
}

// The largest script or module file read, and the largest --records file:
// the Rust CLI's --max-script-bytes and --max-records-bytes defaults.
const MAX_SCRIPT_BYTES = 16 * 1024 * 1024;
const MAX_RECORDS_BYTES = 256 * 1024 * 1024;

// A file's bytes (`-`: standard input), read in pieces and refused past
// `limit` before more is read.
function readSource(path, limit = MAX_SCRIPT_BYTES) {
  const fd = path === '-' ? 0 : openSync(path, 'r');
  try {
    const chunks = [];
    let total = 0;
    const piece = Buffer.allocUnsafe(1 << 16);
    for (;;) {
      let n;
      try {
        n = readSync(fd, piece, 0, piece.length, null);
      } catch (e) {
        if (e.code === 'EAGAIN') continue;
        if (e.code === 'EOF') break;
        throw e;
      }
      if (n === 0) break;
      total += n;
      if (total > limit) throw new UsageError(`${path === '-' ? 'standard input' : path} is larger than ${limit} bytes`);
      chunks.push(Buffer.from(piece.subarray(0, n)));
    }
    return Buffer.concat(chunks, total);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

// Writes to stdout and waits until it is flushed.
const write = (text) => new Promise((resolve) => (text.length === 0 ? resolve() : process.stdout.write(text, () => resolve())));

function exitFor(kind) {
  if (LIMIT_KINDS.has(kind)) return 3;
  if (kind === 'internal' || kind === 'session_poisoned' || kind === 'cancelled') return 2;
  return 1;
}

function logLine({ level, message, fieldsJson }) {
  let line = `[${level}] ${message}`;
  let sep = '  ';
  // The fields' numbers as the script gave them (1.0 stays 1.0).
  for (const [key, value] of Object.entries(parseKeepingNumbers(fieldsJson))) {
    line += `${sep}${key}=${JSON.stringify(value)}`;
    sep = ' ';
  }
  // One line whatever the script put in it, control characters escaped.
  return oneLine(line);
}

/** Runs the command line `argv`; resolves to the exit status. */
export async function main(argv) {
  let sandbox;
  try {
    if (argv[0] === '--version' || argv[0] === '-V') {
      const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
      await write(`moonbox ${pkg.version}\n`);
      return 0;
    }
    if (argv.length === 0 || argv[0] === '-h' || argv[0] === '--help' || argv[0] === 'help') {
      await write(USAGE);
      return argv.length === 0 ? 2 : 0;
    }
    if (argv[0] !== 'run') throw new UsageError(`unknown command '${argv[0]}' (this package has \`moonbox run\`)`);
    let parsed;
    try {
      parsed = parseArgs({
        args: argv.slice(1),
        allowPositionals: true,
        strict: true,
        options: {
          json: { type: 'boolean' },
          input: { type: 'string', multiple: true },
          'max-instructions': { type: 'string' },
          'max-call-depth': { type: 'string' },
          'max-string-bytes': { type: 'string' },
          'max-memory-bytes': { type: 'string' },
          'max-output-bytes': { type: 'string' },
          timeout: { type: 'string' },
          allow: { type: 'string', multiple: true },
          deterministic: { type: 'boolean' },
          seed: { type: 'string' },
          records: { type: 'string' },
          module: { type: 'string', multiple: true },
          help: { type: 'boolean', short: 'h' },
        },
      });
    } catch (e) {
      throw new UsageError(e.message);
    }
    const { values: flags, positionals } = parsed;
    if (flags.help) {
      await write(USAGE);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError('expected one script: moonbox run [FLAGS] FILE|-');
    const file = positionals[0];

    const limits = {};
    if (flags['max-instructions'] !== undefined) limits.maxInstructions = parseCount(flags['max-instructions'], '--max-instructions');
    if (flags['max-call-depth'] !== undefined) limits.maxCallDepth = parseCount(flags['max-call-depth'], '--max-call-depth');
    if (flags['max-string-bytes'] !== undefined) limits.maxStringBytes = parseSize(flags['max-string-bytes'], '--max-string-bytes');
    if (flags['max-memory-bytes'] !== undefined) limits.maxMemoryBytes = parseSize(flags['max-memory-bytes'], '--max-memory-bytes');
    if (flags['max-output-bytes'] !== undefined) limits.maxOutputBytes = parseSize(flags['max-output-bytes'], '--max-output-bytes');
    if (flags.timeout !== undefined) limits.timeoutMs = parseDuration(flags.timeout, '--timeout');

    const inputs = {};
    for (const pair of flags.input ?? []) {
      const [name, text] = splitPair(pair, '--input');
      try {
        inputs[name] = parseKeepingNumbers(text);
      } catch (e) {
        throw new UsageError(`--input ${name}: not JSON: ${e.message}`);
      }
    }

    let deterministic;
    if (flags.seed !== undefined) {
      if (!/^-?\d+$/.test(flags.seed)) throw new UsageError(`--seed: '${flags.seed}' is not an integer`);
      deterministic = { seed: BigInt(flags.seed) };
    } else if (flags.deterministic) {
      deterministic = true;
    }

    const capabilities = {};
    if (flags.records !== undefined) {
      let records;
      try {
        records = parseKeepingNumbers(readSource(flags.records, MAX_RECORDS_BYTES).toString('utf8'));
      } catch (e) {
        throw new UsageError(`--records ${flags.records}: ${e.message}`);
      }
      if (records === null || typeof records !== 'object' || Array.isArray(records)) {
        throw new UsageError(`--records ${flags.records}: expected a JSON object of records by id`);
      }
      capabilities['records.get'] = {
        minArgs: 1,
        maxArgs: 1,
        doc: 'records.get(id: string) -> table|nil: the record with this id, or nil if there is none.',
        fn: (id) => {
          if (typeof id !== 'string') throw new Error('the id must be a string');
          return Object.hasOwn(records, id) ? records[id] : null;
        },
      };
    }

    const modules = [];
    for (const pair of flags.module ?? []) {
      const [name, path] = splitPair(pair, '--module');
      try {
        modules.push({ name, source: new Uint8Array(readSource(path)) });
      } catch (e) {
        throw new UsageError(`--module ${name}: ${e.message}`);
      }
    }

    let code;
    try {
      code = new Uint8Array(readSource(file));
    } catch (e) {
      throw new UsageError(`cannot read the script ${file}: ${e.message}`);
    }
    const chunkName = file === '-' ? 'stdin' : basename(file);

    try {
      sandbox = new Sandbox({ limits, allow: flags.allow ?? [], modules, capabilities, deterministic });
    } catch (e) {
      throw new UsageError(e.message);
    }

    if (flags.json) {
      const report = await sandbox.eval(code, { inputs, chunkName });
      await write(`${report.toJson()}\n`);
      if (report.ok) return report.exitCode === null ? 0 : report.exitCode & 0xff;
      return exitFor(report.error.kind);
    }

    // Output streams as the script writes it; log events go to stderr.
    let pending = Promise.resolve();
    const report = await sandbox.eval(code, {
      inputs,
      chunkName,
      onOutput: (bytes) => {
        pending = pending.then(() => new Promise((resolve) => process.stdout.write(bytes, () => resolve())));
      },
      onLog: (event) => process.stderr.write(`${logLine(event)}\n`),
    });
    await pending;
    if (report.ok) {
      if (report.exitCode !== null) return report.exitCode & 0xff;
      if (report.values.length > 0) await write(`${report.valuesJson}\n`);
      return 0;
    }
    process.stderr.write(`${report.error.summary}\n`);
    return exitFor(report.error.kind);
  } catch (e) {
    const message = e instanceof UsageError ? e.message : e?.reason ? `the configuration was refused: ${e.reason}` : e?.message ?? String(e);
    process.stderr.write(`error: ${message}\n`);
    if (e instanceof UsageError) process.stderr.write("Run 'moonbox run --help' for the flags.\n");
    return 2;
  } finally {
    await sandbox?.close();
  }
}
