import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Sandbox } from '../src/index.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const sandbox = new Sandbox({
  capabilities: {
    add: { fn: (a, b) => a + b, minArgs: 2, maxArgs: 2 },
    later: async (x) => {
      await sleep(5);
      return { got: x };
    },
    fails: () => {
      throw new Error('quota exceeded');
    },
  },
});
after(() => sandbox.close());

describe('evals', () => {
  test('a first eval', async () => {
    const r = await sandbox.eval('print("hi") return 1 + 1');
    assert.equal(r.ok, true);
    assert.deepEqual(r.values, [2]);
    assert.equal(r.output, 'hi\n');
    assert.deepEqual([...r.outputBytes], [...Buffer.from('hi\n')]);
    assert.equal(r.error, null);
    assert.equal(r.stats.fuelUsed, null);
    assert.ok(r.stats.instructions > 0);
  });

  test('inputs', async () => {
    const r = await sandbox.eval('return name .. "!", n * 2, t.k', { inputs: { name: 'x', n: 21, t: { k: [1, 2] } } });
    assert.deepEqual(r.values, ['x!', 42, [1, 2]]);
  });

  test('values stay exact', async () => {
    const r = await sandbox.eval('return 1, 1.0, math.maxinteger, -0.0, {b=1, a=2.5}');
    assert.equal(r.valuesJson, '[1,1.0,9223372036854775807,-0.0,{"a":2.5,"b":1}]');
    assert.equal(r.values[2], 9223372036854775807n);
    const json = r.toJson();
    assert.ok(json.includes('"values":[1,1.0,9223372036854775807,-0.0,{"a":2.5,"b":1}]'));
    assert.equal(JSON.stringify(r), json);
  });

  test('the report JSON has the CLI shape', async () => {
    const r = JSON.parse((await sandbox.eval('error("boom")', { chunkName: 'x.lua' })).toJson());
    assert.deepEqual(Object.keys(r), ['error', 'exit_code', 'logs', 'ok', 'output', 'stats', 'values', 'version']);
    assert.deepEqual(Object.keys(r.error), ['chunk', 'kind', 'line', 'message', 'summary', 'traceback']);
    assert.deepEqual(Object.keys(r.stats), ['calls_unrecorded', 'capability_calls', 'fuel_used', 'instructions', 'output_bytes', 'peak_memory_bytes', 'wall_time_us']);
    assert.equal(r.error.kind, 'runtime');
    assert.equal(r.error.summary, 'error[runtime]: x.lua:1: boom');
    assert.equal(r.version, 1);
  });

  test('capabilities, sync and async', async () => {
    const r = await sandbox.eval('return add(2, 3), later("a")');
    assert.deepEqual(r.values, [5, { got: 'a' }]);
    assert.equal(r.stats.capabilityCalls, 2);
  });

  test('a capability error is catchable, and ends the eval uncaught', async () => {
    let r = await sandbox.eval('local ok, e = pcall(fails) return ok, e');
    assert.equal(r.values[0], false);
    assert.match(r.values[1], /fails: quota exceeded$/);
    r = await sandbox.eval('fails()');
    assert.equal(r.ok, false);
    assert.equal(r.error.kind, 'capability');
    assert.match(r.error.message, /fails: quota exceeded/);
  });

  test('parallel capability calls run concurrently', async () => {
    const slow = new Sandbox({ capabilities: { wait: async (ms) => (await sleep(ms), ms) } });
    try {
      const started = performance.now();
      const r = await slow.eval('return parallel({200, 200, 200}, wait)');
      assert.equal(r.ok, true, r.error?.message);
      assert.ok(performance.now() - started < 550, 'the batch ran one call at a time');
    } finally {
      await slow.close();
    }
  });

  test('memory past maxMemoryBytes', async () => {
    const small = new Sandbox({ limits: { maxMemoryBytes: 1024 * 1024 } });
    try {
      const r = await small.eval('local t = {} for i = 1, 1e7 do t[i] = ("x"):rep(64) .. i end');
      assert.equal(r.error.kind, 'memory_limit');
    } finally {
      await small.close();
    }
  });
});

describe('the outer wall', () => {
  test('a runaway loop stops at the deadline, keeping its output', async () => {
    const s = new Sandbox({ limits: { maxInstructions: 1e12, timeoutMs: 300 } });
    try {
      const started = performance.now();
      const r = await s.eval('print("before") io.write("more") while true do end');
      const took = performance.now() - started;
      assert.equal(r.error.kind, 'timeout');
      assert.equal(r.error.message, 'the script ran longer than the 300 ms timeout (raise the timeout limit, --timeout)');
      assert.equal(r.output, 'before\nmore');
      assert.equal(r.stats.instructions, null);
      assert.equal(r.stats.peakMemoryBytes, null);
      assert.ok(took < 2000, `took ${took} ms`);
      // The one-shot worker is replaced.
      assert.deepEqual((await s.eval('return 7')).values, [7]);
    } finally {
      await s.close();
    }
  });

  // One string.find call: backtracking inside C, which the instruction
  // count does not see. The work grows with the subject's length (about
  // n^5 here), and a longer subject does at least the work of a shorter one.
  const backtrack = (n) =>
    `local s = string.rep('a', ${n}) .. 'b' return string.find(s, '^${'(.-)'.repeat(8)}c$')`;

  test('the backtracking pattern really takes long without the wall', async () => {
    const s = new Sandbox({ limits: { timeoutMs: 60_000 } });
    try {
      const r = await s.eval(backtrack(30));
      assert.equal(r.ok, true);
      assert.ok(r.stats.instructions < 100, 'the work is inside one C call');
      // Already longer than the 300 ms deadline below, at half the length;
      // n = 60 would take about 2^5 = 32 times as long.
      assert.ok(r.stats.wallTimeUs > 300_000, `n=30 took ${r.stats.wallTimeUs / 1000} ms`);
    } finally {
      await s.close();
    }
  });

  test('pattern backtracking in one C call stops at the deadline', async () => {
    const s = new Sandbox({ limits: { timeoutMs: 300 } });
    try {
      const started = performance.now();
      const r = await s.eval(`print("start") ${backtrack(60)}`);
      assert.equal(r.error?.kind, 'timeout');
      assert.equal(r.output, 'start\n');
      assert.ok(performance.now() - started < 2000);
    } finally {
      await s.close();
    }
  });

  test('a slow async capability meets the deadline', async () => {
    const s = new Sandbox({ limits: { timeoutMs: 300 }, capabilities: { slow: async () => (await sleep(5000), 1) } });
    try {
      const started = performance.now();
      const r = await s.eval('print("calling") return slow()');
      const took = performance.now() - started;
      assert.equal(r.error.kind, 'timeout');
      assert.equal(r.output, 'calling\n');
      assert.equal(r.stats.capabilityCalls, 1);
      assert.ok(took < 1500, `took ${took} ms`);
    } finally {
      await s.close();
    }
  });
});

describe('one-shot evals and replies', () => {
  test('evals queued behind one the wall stopped run on a fresh worker', async () => {
    const s = new Sandbox({ limits: { timeoutMs: 300, maxInstructions: 1e12 } });
    try {
      const [stopped, next, after] = await Promise.all([
        s.eval('while true do end'),
        s.eval('return 1'),
        s.eval('return 2'),
      ]);
      assert.equal(stopped.error?.kind, 'timeout');
      assert.equal(next.valuesJson, '[1]');
      assert.equal(after.valuesJson, '[2]');
    } finally {
      await s.close();
    }
  });

  test('a worker that cannot start gives a report, not a retry', async () => {
    const s = new Sandbox({ resourceLimits: { maxOldGenerationSizeMb: 6, maxYoungGenerationSizeMb: 4 } });
    try {
      const started = performance.now();
      const r = await s.eval('return 1');
      assert.equal(r.ok, false);
      assert.ok(['memory_limit', 'internal'].includes(r.error.kind), r.error.summary);
      assert.ok(performance.now() - started < 10_000);
    } finally {
      await s.close();
    }
  });

  test('a session eval queued behind a stopped one is poisoned, without the other eval\'s output', async () => {
    const s = new Sandbox({ limits: { timeoutMs: 300, maxInstructions: 1e12 } });
    const session = await s.session();
    try {
      const [stopped, queued] = await Promise.all([
        session.eval('print("from A") while true do end'),
        session.eval('print("from B") return 1'),
      ]);
      assert.equal(stopped.error?.kind, 'timeout');
      assert.equal(stopped.output, 'from A\n');
      assert.equal(queued.error?.kind, 'session_poisoned');
      assert.equal(queued.output, '');
      assert.deepEqual(queued.logs, []);
    } finally {
      await session.close();
      await s.close();
    }
  });

  test('a reply or a batch larger than the heap limit never enters the guest', async () => {
    const s = new Sandbox({
      limits: { maxMemoryBytes: 1 << 20 },
      capabilities: { big: () => 'x'.repeat(4 << 20), part: () => 'y'.repeat(400 << 10), small: () => 'ok' },
    });
    try {
      const r = await s.eval('local a, e = pcall(big) local b, f = pcall(parallel, {1, 2, 3}, part) return a, e, b, f, small()');
      assert.equal(r.ok, true);
      const [a, e, b, f, small] = r.values;
      assert.equal(a, false);
      assert.match(e, /^big: the result is more than 1048576 bytes of text/);
      assert.equal(b, false);
      assert.match(f, /the batch's replies hold 1228800 bytes, more than maxMemoryBytes/);
      assert.equal(small, 'ok');
    } finally {
      await s.close();
    }
  });

  test('a summary is one line, control characters escaped', async () => {
    const s = new Sandbox();
    try {
      const r = await s.eval('error("l1\\n  l2\\27[2K", 0)');
      assert.equal(r.error.summary, 'error[runtime]: l1 l2\\u{1b}[2K');
    } finally {
      await s.close();
    }
  });
});

describe('sessions', () => {
  test('state persists across evals', async () => {
    await using session = await sandbox.session();
    await session.eval('counter = 1');
    await session.eval('counter = counter + 1');
    assert.deepEqual((await session.eval('return counter')).values, [2]);
  });

  test('a timeout poisons its session only', async () => {
    const s = new Sandbox({ limits: { maxInstructions: 1e12, timeoutMs: 300 } });
    const a = await s.session();
    const b = await s.session();
    try {
      await a.eval('x = 1');
      await b.eval('y = 2');
      assert.equal((await a.eval('while true do end')).error.kind, 'timeout');
      const r = await a.eval('return x');
      assert.equal(r.error.kind, 'session_poisoned');
      assert.match(r.error.message, /^this session can no longer run code: .*timeout.*; start a new session$/);
      assert.deepEqual((await b.eval('return y')).values, [2]);
    } finally {
      await a.close();
      await b.close();
      await s.close();
    }
  });
});

describe('options', () => {
  test('bad options are rejected', () => {
    assert.throws(() => new Sandbox({ limits: { maxInstructions: 0 } }), RangeError);
    assert.throws(() => new Sandbox({ limits: { maxMemoryBytes: 1000 } }), /maxMemoryBytes/);
    assert.throws(() => new Sandbox({ limits: { timeoutMs: 'soon' } }), TypeError);
    assert.throws(() => new Sandbox({ limits: { nope: 1 } }), /unknown option `nope`/);
    assert.throws(() => new Sandbox({ capabilities: { 'bad name': () => 1 } }), TypeError);
    assert.throws(() => new Sandbox({ capabilities: { f: 42 } }), TypeError);
    assert.throws(() => new Sandbox({ limits: { maxValueDepth: 101 } }), RangeError);
  });

  test('a config the guest refuses throws on eval', async () => {
    const s = new Sandbox({ allow: ['nope'] });
    try {
      await assert.rejects(s.eval('return 1'), /unknown sandboxed name 'nope'/);
    } finally {
      await s.close();
    }
  });
});

describe('the CLI', () => {
  const bin = new URL('../bin/moonbox.mjs', import.meta.url).pathname;
  const dir = mkdtempSync(join(tmpdir(), 'moonbox-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const run = (args, script) => {
    const file = join(dir, 'main.lua');
    writeFileSync(file, script);
    return spawnSync(process.execPath, [bin, 'run', ...args, file], { encoding: 'utf8', timeout: 20_000 });
  };

  test('success prints the output and the values line (exit 0)', () => {
    const r = run(['--input', 'x=2.50'], 'print("hi") return x, 1');
    assert.equal(r.status, 0);
    assert.equal(r.stdout, 'hi\n[2.5,1]\n');
  });

  test('a Lua error exits 1 with one line on stderr', () => {
    const r = run([], 'error("boom")');
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'error[runtime]: main.lua:1: boom\n');
  });

  test('a bad flag exits 2', () => {
    const r = run(['--max-memory-bytes', 'lots'], 'return 1');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--max-memory-bytes: 'lots' is not a size/);
    assert.equal(run(['--nope'], 'return 1').status, 2);
  });

  test('a script past 16 MiB is refused before it runs (exit 2)', () => {
    const r = run([], '-'.repeat(16 * 1024 * 1024 + 1));
    assert.equal(r.status, 2);
    assert.match(r.stderr, /is larger than 16777216 bytes/);
  });

  test('log events go to stderr on one line each, control characters escaped', () => {
    const r = run([], 'log("warn", "disk\\nlow\\27[31m", {free = 12}) print("x")');
    assert.equal(r.status, 0);
    assert.equal(r.stdout, 'x\n');
    assert.equal(r.stderr, '[warn] disk low\\u{1b}[31m  free=12\n');
  });

  test('a limit exits 3', () => {
    assert.equal(run(['--max-instructions', '1000'], 'while true do end').status, 3);
    assert.equal(run(['--timeout', '200ms', '--max-instructions', '1000000000000'], 'while true do end').status, 3);
  });

  test('os.exit(n) exits n & 255', () => {
    assert.equal(run(['--allow', 'os.exit'], 'os.exit(300)').status, 44);
  });

  test('--json prints the report', () => {
    const r = run(['--json'], 'print("hi") return 1, {a=2}');
    assert.equal(r.status, 0);
    const report = JSON.parse(r.stdout);
    assert.equal(r.stdout.split('\n').length, 2);
    assert.deepEqual(Object.keys(report), ['error', 'exit_code', 'logs', 'ok', 'output', 'stats', 'values', 'version']);
    assert.equal(report.output, 'hi\n');
    assert.ok(r.stdout.includes('"values":[1,{"a":2}]'));
  });
});
