// Uses the whole public API, so that `npm run typecheck` checks
// lib/index.d.ts against it. Not run.

import {
  DEFAULT_CLOCK,
  DEFAULT_LIMITS,
  ERROR_KINDS,
  LIMIT_KINDS,
  REPORT_VERSION,
  Report,
  Sandbox,
  Session,
  parseExact,
  type CallRecord,
  type CapabilitySpec,
  type ErrorKind,
  type EvalOptions,
  type Limits,
  type LogEvent,
  type LuaValue,
  type ReportError,
  type SandboxOptions,
  type Stats,
} from 'moonbox';

const limits: Limits = { maxInstructions: 1_000_000n, timeoutMs: 500, maxCallsInFlight: 4 };
const spec: CapabilitySpec = { fn: async (id) => ({ id }), minArgs: 1, maxArgs: 1, doc: 'users.get(id)', callBudget: 10 };
const options: SandboxOptions = {
  limits,
  capabilities: { 'math2.add': (a, b) => Number(a) + Number(b), 'users.get': spec },
  allow: ['os.exit'],
  modules: { greet: 'return {}' },
  deterministic: { clock: DEFAULT_CLOCK, seed: 7n },
  callBudget: 100,
  auditArgs: false,
};

async function main(): Promise<void> {
  const sandbox = new Sandbox(options);
  const max: number | bigint = sandbox.limits.maxInstructions;
  const controller = new AbortController();
  const evalOptions: EvalOptions = {
    inputs: { n: 21 },
    chunkName: 'x.lua',
    onOutput: (bytes: Uint8Array) => bytes.length,
    onLog: (event: LogEvent) => event.level,
    signal: controller.signal,
    args: ['a', 'b'],
    files: { 'in.txt': 'text', 'raw.bin': new Uint8Array([0]) },
    stdin: 'piped',
  };
  await sandbox.eval('return 1', { files: new Map([['m.txt', new Uint8Array(0)]]), stdin: new Uint8Array(0) });
  const report: Report = await sandbox.eval('return n * 2', evalOptions);
  const values: LuaValue[] = report.values;
  const text: string = report.valuesJson + report.logsJson + report.output + report.toJson();
  const bytes: Uint8Array = report.outputBytes;
  const b64: string | undefined = report.outputBase64;
  const error: ReportError | null = report.error;
  const kind: ErrorKind | undefined = error?.kind;
  const line: number | null | undefined = error?.line;
  const stats: Stats = report.stats;
  const fuel: number | null = stats.fuelUsed;
  const calls: CallRecord[] = report.calls;
  const exit: number | null = report.exitCode;
  const logs: LogEvent[] = report.logs;
  const files: ReadonlyMap<string, Uint8Array> = report.files;
  const written: Uint8Array | undefined = files.get('out.txt');
  const json: unknown = report.toJSON();
  const limit: boolean = kind !== undefined && LIMIT_KINDS.has(kind);
  const kinds: readonly ErrorKind[] = ERROR_KINDS;
  const version: number = REPORT_VERSION;
  const timeout: number = DEFAULT_LIMITS.timeoutMs;

  const session: Session = await sandbox.session();
  await session.eval(new TextEncoder().encode('x = 1'));
  const poisoned: boolean = session.poisoned;
  await session[Symbol.asyncDispose]();
  await session.close();
  await sandbox[Symbol.asyncDispose]();
  await sandbox.close();
  const parsed: unknown = parseExact('[1]');
  void [max, values, text, bytes, b64, line, fuel, calls, exit, logs, files, written, json, limit, kinds, version, timeout, poisoned, parsed];
}

void main();
