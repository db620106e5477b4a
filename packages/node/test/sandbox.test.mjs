import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DEFAULT_LIMITS, ERROR_KINDS, LIMIT_KINDS, REPORT_VERSION, Report, Sandbox } from '../lib/index.js';

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
    rejects: async () => {
      throw new Error('backend down');
    },
    count: (...args) => args.length,
    echo: (x) => x,
  },
});
after(() => sandbox.close());

// An instruction limit no loop below reaches before the wall or a cancel.
const endless = { maxInstructions: 1e12 };

describe('the crate decides the rules', () => {
  test('defaults, kinds and the report version come from the crate', () => {
    assert.equal(DEFAULT_LIMITS.maxInstructions, 10_000_000);
    assert.equal(DEFAULT_LIMITS.timeoutMs, 5000);
    assert.equal(DEFAULT_LIMITS.maxCallsInFlight, 16);
    assert.ok(Object.isFrozen(DEFAULT_LIMITS));
    assert.equal(ERROR_KINDS.length, 15);
    assert.ok(ERROR_KINDS.includes('cancelled') && ERROR_KINDS.includes('fuel_exhausted'));
    assert.deepEqual(
      [...LIMIT_KINDS].sort(),
      ['call_depth', 'fuel_exhausted', 'instruction_limit', 'memory_limit', 'output_limit', 'string_size', 'timeout'],
    );
    assert.equal(REPORT_VERSION, 1);
    assert.deepEqual(sandbox.limits, DEFAULT_LIMITS);
  });

  test('derived limits are null, and null or 0 asks for them', () => {
    assert.equal(DEFAULT_LIMITS.fuel, null);
    assert.equal(DEFAULT_LIMITS.maxWasmMemoryBytes, null);
    for (const derived of [null, 0]) {
      const s = new Sandbox({ limits: { fuel: derived, maxWasmMemoryBytes: derived } });
      assert.deepEqual(s.limits, DEFAULT_LIMITS);
    }
    assert.equal(new Sandbox({ limits: { fuel: 1e9 } }).limits.fuel, 1e9);
  });
});

describe('evals', () => {
  test('a first eval', async () => {
    const r = await sandbox.eval('print("hi") return 1 + 1');
    assert.ok(r instanceof Report);
    assert.equal(r.ok, true);
    assert.deepEqual(r.values, [2]);
    assert.equal(r.output, 'hi\n');
    assert.deepEqual([...r.outputBytes], [...Buffer.from('hi\n')]);
    assert.equal(r.outputBase64, undefined);
    assert.equal(r.error, null);
    assert.equal(r.exitCode, null);
    assert.equal(r.stats.fuelUsed, null, 'the shared engine does not meter fuel');
    assert.ok(r.stats.instructions > 0);
    assert.ok(r.stats.wallTimeUs > 0);
  });

  test('inputs become globals, without being spliced into the code', async () => {
    const r = await sandbox.eval('return name .. "!", n * 2, t.k, big', {
      inputs: { name: "'); os.exit() --", n: 21, t: { k: [1, 2] }, big: 9007199254740993n },
    });
    assert.deepEqual(r.values, ["'); os.exit() --!", 42, [1, 2], 9007199254740993n]);
  });

  test('code as bytes, and output that is not UTF-8', async () => {
    const r = await sandbox.eval(new TextEncoder().encode('io.write("\\255ok") return 1'));
    assert.equal(r.output, '\ufffdok');
    assert.equal(r.outputBase64, '/29r');
    assert.deepEqual([...r.outputBytes], [255, 111, 107]);
  });

  test('values stay exact', async () => {
    const r = await sandbox.eval('return 1, 1.0, math.maxinteger, -0.0, {b=1, a=2.5}');
    assert.equal(r.valuesJson, '[1,1.0,9223372036854775807,-0.0,{"a":2.5,"b":1}]');
    assert.equal(r.values[2], 9223372036854775807n);
    assert.ok(r.toJson().includes('"values":[1,1.0,9223372036854775807,-0.0,{"a":2.5,"b":1}]'));
    if (typeof JSON.rawJSON === 'function') assert.equal(JSON.stringify(r), r.toJson());
    else assert.equal(JSON.stringify(r), JSON.stringify(JSON.parse(r.toJson())));
  });

  test('the report JSON has the CLI shape', async () => {
    const r = JSON.parse((await sandbox.eval('error("boom")', { chunkName: 'x.lua' })).toJson());
    assert.deepEqual(Object.keys(r), ['error', 'exit_code', 'logs', 'ok', 'output', 'stats', 'values', 'version']);
    assert.deepEqual(Object.keys(r.error), ['chunk', 'kind', 'line', 'message', 'summary', 'traceback']);
    assert.deepEqual(Object.keys(r.stats), [
      'calls_unrecorded',
      'capability_calls',
      'fuel_used',
      'instructions',
      'output_bytes',
      'peak_memory_bytes',
      'wall_time_us',
    ]);
    assert.equal(r.error.kind, 'runtime');
    assert.equal(r.error.summary, 'error[runtime]: x.lua:1: boom');
    assert.equal(r.error.line, 1);
    assert.equal(r.version, 1);
  });

  test('a summary is one line, control characters escaped', async () => {
    const r = await sandbox.eval('error("l1\\n  l2\\27[2K", 0)');
    assert.equal(r.error.summary, 'error[runtime]: l1 l2\\u{1b}[2K');
  });

  test('a script failure resolves to a report, never a rejection', async () => {
    for (const [code, kind] of [
      ['return (', 'syntax'],
      ['return nope.x', 'runtime'],
      ['return io.popen("x")', 'sandboxed'],
      ['return function() end', 'invalid_value'],
    ]) {
      const r = await sandbox.eval(code);
      assert.equal(r.ok, false, code);
      assert.equal(r.error.kind, kind, code);
      assert.deepEqual(r.values, []);
    }
  });

  test('log events are in the report, in order', async () => {
    const r = await sandbox.eval('log("warn", "disk low", {free = 12}) log("info", "done")');
    assert.deepEqual(r.logs, [
      { fields: { free: 12 }, level: 'warn', message: 'disk low' },
      { fields: {}, level: 'info', message: 'done' },
    ]);
    assert.equal(r.logsJson, '[{"fields":{"free":12},"level":"warn","message":"disk low"},{"fields":{},"level":"info","message":"done"}]');
  });

  test('onOutput and onLog receive the data while the script runs, in order', async () => {
    const seen = [];
    const r = await sandbox.eval('io.write("a") log("info", "step", {n = 1}) print("b")', {
      onOutput: (bytes) => seen.push(['out', Buffer.from(bytes).toString()]),
      onLog: (event) => seen.push(['log', event.message, event.fields.n]),
    });
    assert.equal(r.ok, true);
    // Every call has arrived before the eval resolves.
    assert.deepEqual(seen, [
      ['out', 'a'],
      ['log', 'step', 1],
      ['out', 'b'],
      ['out', '\n'],
    ]);
  });

  test('a callback that throws rejects the eval once it has finished', async () => {
    await assert.rejects(
      sandbox.eval('print("x")', {
        onOutput: () => {
          throw new Error('sink broke');
        },
      }),
      /an onOutput or onLog callback threw: sink broke/,
    );
  });

  test('memory past maxMemoryBytes', async () => {
    const small = new Sandbox({ limits: { maxMemoryBytes: 1024 * 1024 } });
    const r = await small.eval('local t = {} for i = 1, 1e7 do t[i] = ("x"):rep(64) .. i end');
    assert.equal(r.error.kind, 'memory_limit');
    assert.ok(LIMIT_KINDS.has(r.error.kind));
  });

  test('instruction limit', async () => {
    const tight = new Sandbox({ limits: { maxInstructions: 1000 } });
    const r = await tight.eval('while true do end');
    assert.equal(r.error.kind, 'instruction_limit');
  });

  test('deterministic mode fixes the clock and the seed', async () => {
    const d = new Sandbox({ deterministic: { clock: 86400, seed: 7 } });
    const [a, b] = await Promise.all([d.eval('return os.time(), math.random(1000)'), d.eval('return os.time(), math.random(1000)')]);
    assert.equal(a.values[0], 86400);
    assert.deepEqual(a.values, b.values);
    assert.equal(typeof a.stats.fuelUsed, 'number', 'deterministic mode meters fuel');
  });

  test('modules and allow', async () => {
    const s = new Sandbox({
      modules: { greet: 'return { hi = function(n) return "hi " .. n end }' },
      allow: ['os.exit'],
    });
    assert.deepEqual((await s.eval('return require("greet").hi("moon")')).values, ['hi moon']);
    assert.equal((await s.eval('os.exit(3)')).exitCode, 3);
  });

  test('a closed sandbox refuses evals', async () => {
    const s = new Sandbox();
    await s.close();
    await assert.rejects(s.eval('return 1'), /closed/);
  });
});

describe('capabilities', () => {
  test('sync and async', async () => {
    const r = await sandbox.eval('return add(2, 3), later("a")');
    assert.deepEqual(r.values, [5, { got: 'a' }]);
    assert.equal(r.stats.capabilityCalls, 2);
    assert.deepEqual(
      r.calls.map((c) => [c.capability, c.outcome]),
      [
        ['add', 'ok'],
        ['later', 'ok'],
      ],
    );
  });

  test('a thrown error is catchable, and ends the eval uncaught', async () => {
    let r = await sandbox.eval('local ok, e = pcall(fails) return ok, e');
    assert.deepEqual(r.values, [false, 'fails: quota exceeded']);
    r = await sandbox.eval('fails()');
    assert.equal(r.ok, false);
    assert.equal(r.error.kind, 'capability');
    assert.match(r.error.message, /fails: quota exceeded/);
  });

  test('a rejected promise is a capability error too', async () => {
    const r = await sandbox.eval('local ok, e = pcall(rejects) return ok, e');
    assert.deepEqual(r.values, [false, 'rejects: backend down']);
  });

  test('arity: the spec is the crate\'s check, trailing nils are absent', async () => {
    const r = await sandbox.eval('return count(), count(1, nil, 3), count(1, nil), pcall(add, 1)');
    assert.equal(r.values[0], 0);
    assert.equal(r.values[1], 3);
    assert.equal(r.values[2], 1);
    assert.equal(r.values[3], false);
    assert.match(r.values[4], /add/);
  });

  test('values: big integers as bigint both ways, floats as numbers', async () => {
    const r = await sandbox.eval('return echo(math.maxinteger), echo(2.5), echo({1, "x", {k = true}}), math.type(echo(2^53))');
    assert.equal(r.values[0], 9223372036854775807n);
    assert.equal(r.values[1], 2.5);
    assert.deepEqual(r.values[2], [1, 'x', { k: true }]);
    // 2^53 is a float in Lua, an integral number in JavaScript: it comes
    // back an integer.
    assert.equal(r.values[3], 'integer');
  });

  test('a reply that cannot become Lua is a capability error', async () => {
    const s = new Sandbox({ capabilities: { nan: () => NaN, huge: () => 2n ** 70n, cyclic: () => { const o = {}; o.o = o; return o; } } });
    const r = await s.eval('return select(2, pcall(nan)), select(2, pcall(huge)), select(2, pcall(cyclic))');
    assert.match(r.values[0], /^nan: NaN cannot become a Lua value/);
    assert.match(r.values[1], /^huge: the integer 1180591620717411303424 is outside 64 bits/);
    assert.match(r.values[2], /^cyclic: .*circular/i);
  });

  test('a reply larger than the heap limit never enters the guest', async () => {
    const s = new Sandbox({ limits: { maxMemoryBytes: 1 << 20 }, capabilities: { big: () => 'x'.repeat(4 << 20), small: () => 'ok' } });
    const r = await s.eval('local a, e = pcall(big) return a, e, small()');
    assert.equal(r.values[0], false);
    assert.match(r.values[1], /^big: the result is more than \d+ bytes of JSON/);
    assert.equal(r.values[2], 'ok');
  });

  test('parallel runs a batch concurrently, results in order', async () => {
    let inFlight = 0;
    let most = 0;
    const slow = new Sandbox({
      capabilities: {
        wait: async (ms) => {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await sleep(ms);
          inFlight -= 1;
          return ms;
        },
      },
    });
    const started = performance.now();
    const r = await slow.eval('return parallel({200, 150, 100}, wait)');
    assert.equal(r.ok, true, r.error?.message);
    assert.deepEqual(r.values, [[200, 150, 100]]);
    assert.equal(most, 3);
    assert.ok(performance.now() - started < 550, 'the batch ran one call at a time');
  });

  test('a hung async capability meets the deadline', async () => {
    const s = new Sandbox({ limits: { timeoutMs: 300 }, capabilities: { hang: () => new Promise(() => {}) } });
    const started = performance.now();
    const r = await s.eval('print("calling") return hang()');
    const took = performance.now() - started;
    assert.equal(r.error.kind, 'timeout');
    assert.equal(r.output, 'calling\n');
    assert.equal(r.stats.capabilityCalls, 1);
    assert.equal(r.calls[0].outcome, 'cut_off');
    assert.ok(took < 1500, `took ${took} ms`);
  });

  test('call budgets', async () => {
    const s = new Sandbox({ capabilities: { ping: { fn: () => true, callBudget: 2 } } });
    const r = await s.eval('local n = 0 for i = 1, 5 do if pcall(ping) then n = n + 1 end end return n');
    assert.deepEqual(r.values, [2]);
    assert.equal(r.calls[2].outcome, 'over_budget');
  });
});

describe('the event loop and the outer wall', () => {
  test('the event loop keeps running during a long eval', async () => {
    const s = new Sandbox({ limits: { ...endless, timeoutMs: 600 } });
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 20);
    try {
      const r = await s.eval('while true do end');
      assert.equal(r.error.kind, 'timeout');
      assert.ok(ticks >= 10, `only ${ticks} timer ticks in 600 ms of Lua`);
    } finally {
      clearInterval(timer);
    }
  });

  test('timers run while a script calls a sync capability in a loop', async () => {
    // The main thread runs such calls back to back, but returns to the
    // event loop every millisecond or so. The timer starts at the first
    // call, so only a turn of the loop during the script can fire it.
    let fired = false;
    let timer;
    const fn = () => {
      timer ??= setTimeout(() => (fired = true), 20);
      return fired;
    };
    const s = new Sandbox({ limits: { ...endless, timeoutMs: 3000 }, capabilities: { fired: fn } });
    try {
      const r = await s.eval('local n = 0 while not fired() do n = n + 1 end return n');
      assert.equal(r.ok, true, r.error?.message);
      assert.ok(r.values[0] > 0);
    } finally {
      clearTimeout(timer);
    }
  });

  test('a runaway loop stops at the deadline, keeping its output', async () => {
    const s = new Sandbox({ limits: { ...endless, timeoutMs: 300 } });
    const started = performance.now();
    const r = await s.eval('print("before") io.write("more") while true do end');
    const took = performance.now() - started;
    assert.equal(r.error.kind, 'timeout');
    assert.match(r.error.message, /300 ms/);
    assert.equal(r.output, 'before\nmore');
    assert.equal(r.stats.instructions, null);
    assert.equal(r.stats.peakMemoryBytes, null);
    assert.ok(took < 2000, `took ${took} ms`);
    assert.deepEqual((await s.eval('return 7')).values, [7]);
  });

  test('pattern backtracking inside one C call stops at the deadline', async () => {
    const s = new Sandbox({ limits: { timeoutMs: 300 } });
    const started = performance.now();
    const r = await s.eval(`print("start") local s = string.rep('a', 60) .. 'b' return string.find(s, '^${'(.-)'.repeat(8)}c$')`);
    assert.equal(r.error?.kind, 'timeout');
    assert.equal(r.output, 'start\n');
    assert.ok(performance.now() - started < 2000);
  });

  test('evals run concurrently, each in its own instance', async () => {
    const s = new Sandbox({ limits: { ...endless, timeoutMs: 300 } });
    const [stopped, next, last] = await Promise.all([s.eval('while true do end'), s.eval('return 1'), s.eval('return 2')]);
    assert.equal(stopped.error?.kind, 'timeout');
    assert.equal(next.valuesJson, '[1]');
    assert.equal(last.valuesJson, '[2]');
  });
});

describe('cancellation', () => {
  test('an AbortSignal stops a `while true do end` quickly with kind cancelled', async () => {
    const s = new Sandbox({ limits: endless });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const r = await s.eval('print("started") while true do end', { signal: controller.signal });
    const took = performance.now() - started;
    assert.equal(r.error.kind, 'cancelled');
    assert.equal(r.output, 'started\n');
    assert.ok(took < 1000, `took ${took} ms`);
    // The sandbox is unaffected.
    assert.deepEqual((await s.eval('return 1')).values, [1]);
  });

  test('a signal aborted before the eval cancels it before it runs', async () => {
    const r = await sandbox.eval('print("ran")', { signal: AbortSignal.abort() });
    assert.equal(r.error.kind, 'cancelled');
    assert.equal(r.output, '');
  });

  test('a cancel stops a wait on a capability too', async () => {
    const s = new Sandbox({ capabilities: { hang: () => new Promise(() => {}) } });
    const r = await s.eval('return hang()', { signal: AbortSignal.timeout(100) });
    assert.equal(r.error.kind, 'cancelled');
    assert.equal(r.calls[0].outcome, 'cut_off');
  });

  test('a cancelled session is poisoned; a new session works', async () => {
    const s = new Sandbox({ limits: endless });
    const session = await s.session();
    await session.eval('x = 1');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const r = await session.eval('while true do end', { signal: controller.signal });
    assert.equal(r.error.kind, 'cancelled');
    assert.equal(session.poisoned, true);
    const after = await session.eval('return x');
    assert.equal(after.ok, false);
    assert.ok(['cancelled', 'session_poisoned'].includes(after.error.kind), after.error.kind);
    await session.close();
    const fresh = await s.session();
    assert.deepEqual((await fresh.eval('x = 2 return x')).values, [2]);
    await fresh[Symbol.asyncDispose]();
  });

  test('a signal that never aborts changes nothing', async () => {
    const r = await sandbox.eval('return 1', { signal: new AbortController().signal });
    assert.deepEqual(r.values, [1]);
  });
});

describe('sessions', () => {
  test('state persists across evals', async () => {
    // (`await using` needs Node 22+; the dispose method is what it calls.)
    const session = await sandbox.session();
    await session.eval('counter = 1');
    await session.eval('counter = counter + 1');
    assert.deepEqual((await session.eval('return counter')).values, [2]);
    assert.equal(session.poisoned, false);
    await session[Symbol.asyncDispose]();
    await assert.rejects(session.eval('return 1'), /closed/);
  });

  test('evals of one session run in order', async () => {
    const session = await sandbox.session();
    const rs = await Promise.all([session.eval('n = 1'), session.eval('n = n * 10'), session.eval('return n + 1')]);
    assert.deepEqual(rs[2].values, [11]);
    await session.close();
  });

  test('a timeout poisons its session only', async () => {
    const s = new Sandbox({ limits: { ...endless, timeoutMs: 300 } });
    const a = await s.session();
    const b = await s.session();
    await a.eval('x = 1');
    await b.eval('y = 2');
    assert.equal((await a.eval('while true do end')).error.kind, 'timeout');
    assert.equal(a.poisoned, true);
    const r = await a.eval('return x');
    assert.equal(r.error.kind, 'session_poisoned');
    assert.match(r.error.message, /^this session can no longer run code: .*; start a new session$/);
    assert.deepEqual((await b.eval('return y')).values, [2]);
    await a.close();
    await b.close();
  });

  test('a closed session refuses evals', async () => {
    const session = await sandbox.session();
    await session.close();
    await assert.rejects(session.eval('return 1'), /closed/);
  });
});

describe('options', () => {
  test('limits out of bounds are RangeErrors with the crate\'s sentence', () => {
    assert.throws(() => new Sandbox({ limits: { maxInstructions: 0 } }), {
      name: 'RangeError',
      message: 'limit max_instructions must be greater than zero',
    });
    assert.throws(() => new Sandbox({ limits: { maxMemoryBytes: 1000 } }), { name: 'RangeError', message: /max_memory_bytes must be at least 1048576/ });
    assert.throws(() => new Sandbox({ limits: { maxValueDepth: 101 } }), { name: 'RangeError', message: /max_value_depth must be at most 100/ });
    assert.throws(() => new Sandbox({ limits: { timeoutMs: 2 * 86400 * 1000 } }), { name: 'RangeError', message: /timeout must be at most/ });
  });

  test('wrong types are TypeErrors naming the option', () => {
    assert.throws(() => new Sandbox({ limits: { timeoutMs: 'soon' } }), { name: 'TypeError', message: /timeoutMs/ });
    assert.throws(() => new Sandbox({ limits: { maxInstructions: -1 } }), { name: 'TypeError', message: /limit max_instructions/ });
    assert.throws(() => new Sandbox({ limits: { maxInstructions: 1.5 } }), TypeError);
    assert.throws(() => new Sandbox({ limits: { nope: 1 } }), { name: 'TypeError', message: /unknown limit `nope`/ });
    assert.throws(() => new Sandbox({ nope: 1 }), /unknown sandbox option `nope`/);
    assert.throws(() => new Sandbox({ capabilities: { f: 42 } }), TypeError);
    assert.throws(() => new Sandbox({ capabilities: { f: { fn: () => 1, minArgs: -1 } } }), TypeError);
    assert.throws(() => new Sandbox({ allow: 'os.exit' }), TypeError);
  });

  test('what else the crate refuses is an Error with its sentence', () => {
    assert.throws(() => new Sandbox({ allow: ['nope'] }), /nope/);
    assert.throws(() => new Sandbox({ capabilities: { 'bad name': () => 1 } }), /bad name/);
    assert.throws(() => new Sandbox({ capabilities: { f: { fn: () => 1, minArgs: 3, maxArgs: 2 } } }), /3 to 2 arguments/);
    assert.throws(() => new Sandbox({ modules: { string: 'return {}' } }), /string/);
  });

  test('eval options are checked', async () => {
    await assert.rejects(sandbox.eval('return 1', { inputs: 5 }), TypeError);
    await assert.rejects(sandbox.eval('return 1', { nope: 1 }), TypeError);
    await assert.rejects(sandbox.eval(42), TypeError);
    const r = await sandbox.eval('return 1', { inputs: { ['not a name']: 1 } });
    assert.equal(r.error.kind, 'invalid_value');
  });
});

describe('args, files and stdin', () => {
  const text = (bytes) => new TextDecoder().decode(bytes);

  test('args become arg and the chunk\'s ...', async () => {
    const r = await sandbox.eval('return arg[0], arg[1], arg[2], #arg, ...', { args: ['a', 'b c'], chunkName: 'job.lua' });
    assert.deepEqual(r.values, ['job.lua', 'a', 'b c', 2, 'a', 'b c']);
    // Without args, arg is nil and ... empty; an empty array sets both.
    assert.deepEqual((await sandbox.eval("return arg == nil, select('#', ...)")).values, [true, 0]);
    assert.deepEqual((await sandbox.eval("return #arg, arg[0], select('#', ...)", { args: [] })).values, [0, 'main.lua', 0]);
  });

  test('stdin is what io.read reads, as text or bytes', async () => {
    const script = "return io.read('l'), io.read('a'), io.read('a')";
    assert.deepEqual((await sandbox.eval(script, { stdin: 'one\ntwo\n' })).values, ['one', 'two\n', '']);
    assert.deepEqual((await sandbox.eval("return #io.read('a')", { stdin: new Uint8Array([255, 0]) })).values, [2]);
    assert.deepEqual((await sandbox.eval("return io.read('a')")).values, ['']);
    assert.deepEqual((await sandbox.eval("return io.stdin:read('a')", { stdin: 's' })).values, ['s']);
  });

  test('mounted files are read; the files written come back by name', async () => {
    const script = `
      local n = 0 for line in io.lines('data/in.csv') do n = n + 1 end
      local b = io.open('raw.bin', 'rb'):read('a')
      io.open('out.txt', 'w'):write(n):close()
      io.open('b.bin', 'wb'):write(b:reverse()):close()
      return n, #b`;
    const r = await sandbox.eval(script, { files: { 'data/in.csv': 'a,1\nb,2\n', 'raw.bin': new Uint8Array([0, 255]) } });
    assert.deepEqual(r.values, [2, 2]);
    // Name order; mounted files are not among them.
    assert.deepEqual([...r.files.keys()], ['b.bin', 'out.txt']);
    assert.ok(r.files.get('b.bin') instanceof Uint8Array);
    assert.deepEqual([...r.files.get('b.bin')], [255, 0]);
    assert.equal(text(r.files.get('out.txt')), '2');
    assert.deepEqual(JSON.parse(r.toJson()).files, [
      { base64: '/wA=', name: 'b.bin', size: 2 },
      { name: 'out.txt', size: 1, text: '2' },
    ]);
    // A report without written files leaves the member out.
    const plain = await sandbox.eval('return 1');
    assert.equal(plain.files.size, 0);
    assert.equal(JSON.parse(plain.toJson()).files, undefined);
  });

  test('files as a Map, for names an object cannot hold', async () => {
    const r = await sandbox.eval("return io.open('__proto__'):read('a')", { files: new Map([['__proto__', 'x']]) });
    assert.deepEqual(r.values, ['x']);
  });

  test('files written before an error are in the report', async () => {
    const r = await sandbox.eval("io.open('partial.txt', 'w'):write('half'):close() error('boom')");
    assert.equal(r.error.kind, 'runtime');
    assert.equal(text(r.files.get('partial.txt')), 'half');
  });

  test('mounted files are read-only and stay in the session', async () => {
    const session = await sandbox.session();
    try {
      const first = await session.eval("return io.open('m.txt', 'w')", { files: { 'm.txt': 'kept' } });
      assert.deepEqual(first.values, [null, 'm.txt: Permission denied', 13]);
      await session.eval("io.open('w.txt', 'w'):write('mine'):close()");
      const later = await session.eval("return io.open('m.txt'):read('a'), io.open('w.txt'):read('a'), ...", { args: ['y'] });
      assert.deepEqual(later.values, ['kept', 'mine', 'y']);
      // Only the eval that wrote a file reports it.
      assert.equal(later.files.size, 0);
    } finally {
      await session.close();
    }
  });

  test('wrong types are TypeErrors naming the option', async () => {
    for (const [options, message] of [
      [{ args: 'ab' }, /args must be an array of strings/],
      [{ args: [1] }, /args must be an array of strings/],
      [{ files: [['a', 'b']] }, /files must be an object or a Map/],
      [{ files: 'a' }, /files must be an object or a Map/],
      [{ files: { a: 1 } }, /files\["a"\] must be a string or a Uint8Array/],
      [{ files: new Map([[1, 'a']]) }, /each name must be a string/],
      [{ stdin: 1 }, /stdin must be a string or a Uint8Array/],
    ]) {
      await assert.rejects(sandbox.eval('return 1', options), { name: 'TypeError', message }, JSON.stringify(options));
    }
  });

  test('past the crate\'s bounds, the report has kind invalid_value', async () => {
    const small = new Sandbox({ limits: { maxMemoryBytes: 1 << 20 } });
    const many = Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`f${i}`, '']));
    for (const [options, message] of [
      [{ args: Array(4097).fill('x') }, '4097 arguments are more than the 4096 an eval takes'],
      [{ files: many }, '1025 files are more than the 1024 a session holds'],
      [{ files: { '': '' } }, "file name '' is empty, longer than 4096 bytes or contains NUL"],
      [{ files: { 'a\0b': '' } }, "file name 'a\\u{0}b' is empty"],
      [{ files: { ['x'.repeat(4097)]: '' } }, 'longer than 4096 bytes'],
      [{ stdin: new Uint8Array((1 << 20) + 1) }, 'the files and stdin take 1048577 bytes, more than max-memory-bytes (1048576)'],
      [{ files: { 'data/': 'x' } }, "file name 'data/' names a directory"],
    ]) {
      const r = await small.eval('return 1', options);
      assert.equal(r.error?.kind, 'invalid_value', message);
      assert.ok(r.error.message.includes(message), `${r.error.message} lacks ${message}`);
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
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'hi\n[2.5,1]\n');
  });

  test('`run -` reads the script from standard input', () => {
    const r = spawnSync(process.execPath, [bin, 'run', '-'], { input: 'print("hi") return 1, {a = 2}', encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'hi\n[1,{"a":2}]\n');
  });

  test('output without a final newline is not lost', () => {
    const r = run([], 'io.write("no newline")');
    assert.equal(r.status, 0);
    assert.equal(r.stdout, 'no newline');
  });

  test('a Lua error exits 1 with one line on stderr', () => {
    const r = run([], 'error("boom")');
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'error[runtime]: main.lua:1: boom\n');
  });

  test('a bad flag exits 2', () => {
    const r = run(['--max-memory-bytes', 'lots'], 'return 1');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /lots/);
    assert.equal(run(['--nope'], 'return 1').status, 2);
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

  test('--json prints the report, as Report.toJson() does', async () => {
    const r = run(['--json'], 'print("hi") return 1, {a=2}');
    assert.equal(r.status, 0);
    assert.equal(r.stdout.split('\n').length, 2);
    const cli = JSON.parse(r.stdout);
    const api = JSON.parse((await sandbox.eval('print("hi") return 1, {a=2}')).toJson());
    // What the host measures, and the heap's peak, differ between two runs.
    for (const report of [cli, api]) {
      delete report.stats.wall_time_us;
      delete report.stats.peak_memory_bytes;
    }
    assert.deepEqual(cli, api);
  });
});

describe('the compiled-code cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'moonbox-cache-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const index = new URL('../lib/index.js', import.meta.url).href;
  const script = `
    const { Sandbox } = await import(${JSON.stringify(index)});
    const plain = await new Sandbox().eval('return 1 + 1');
    const metered = await new Sandbox({ deterministic: true }).eval('return 2 + 2');
    console.log(plain.valuesJson, metered.valuesJson);
  `;
  const node = (env) =>
    spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000, env });
  const bare = () => {
    const env = { ...process.env };
    for (const name of ['MOONBOX_CACHE_DIR', 'XDG_CACHE_HOME', 'HOME']) delete env[name];
    return env;
  };

  test('the engines cache compiled code where MOONBOX_CACHE_DIR says', () => {
    const cache = join(dir, 'cache');
    const r = node({ ...bare(), MOONBOX_CACHE_DIR: cache });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '[2] [4]\n');
    assert.equal(r.stderr, '');
    assert.ok(readdirSync(cache).length > 0, 'the cache directory holds files');
    // A second process loads them.
    assert.equal(node({ ...bare(), MOONBOX_CACHE_DIR: cache }).stdout, '[2] [4]\n');
  });

  test('an unusable default cache directory is one warning, not a failure', () => {
    // HOME is a file: $HOME/.cache/moonbox cannot be made.
    const home = join(dir, 'home-file');
    writeFileSync(home, '');
    const r = node({ ...bare(), HOME: home });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '[2] [4]\n');
    assert.equal(r.stderr.match(/MOONBOX_CACHE/g)?.length, 2, r.stderr); // the code, then the hint
    assert.match(r.stderr, /running without the cache/);
  });
});
