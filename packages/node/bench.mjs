// Timings of the Node package, printed as one JSON object for
// moonbox-bench (`--packages`), which sets them beside the Rust crate's and
// the Python package's in the same run.
//
//     node bench.mjs [--samples N]
//
// Build the addon with MOONBOX_NODE_PROFILE=release first. Times are
// microseconds:
// - import_to_first_result: from before importing the package to the first
//   result of a new Sandbox (loading the addon and the engine, building
//   the sandbox, one eval);
// - fresh_eval: `sandbox.eval("return 1+1")`, a new instance each time;
// - session_eval: the same on one live session;
// - round_trip: one call to a synchronous JavaScript capability, from the
//   eval's thread to Node's main thread and back (a loop of calls minus
//   the same loop without them, per call).

import { parseArgs } from 'node:util';

const started = performance.now();
const { Sandbox } = await import('./lib/index.js');
const first = await new Sandbox().eval('return 1+1');
const importToFirstResult = (performance.now() - started) * 1000;
if (first.valuesJson !== '[2]') throw new Error(`wrong first result ${first.valuesJson}`);

const CALLS = 1000;
const { values } = parseArgs({ options: { samples: { type: 'string', default: '1000' } } });
const samples = Number(values.samples);

async function timed(f, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f();
    out.push((performance.now() - t) * 1000);
  }
  return out;
}

const sandbox = new Sandbox({ capabilities: { 'count.next': (n) => n + 1 } });
for (let i = 0; i < 20; i++) await sandbox.eval('return 1+1');
const fresh = await timed(() => sandbox.eval('return 1+1'), samples);
const session = await sandbox.session();
for (let i = 0; i < 20; i++) await session.eval('return 1+1');
const sessionEval = await timed(() => session.eval('return 1+1'), samples);
const calls = `local n = 0 for i = 1, ${CALLS} do n = count.next(n) end return n`;
const empty = `local n = 0 for i = 1, ${CALLS} do n = n + 1 end return n`;
const roundTrip = [];
for (let i = 0; i < Math.max(Math.floor(samples / 50), 5); i++) {
  const [withCalls] = await timed(() => session.eval(calls), 1);
  const [without] = await timed(() => session.eval(empty), 1);
  roundTrip.push((withCalls - without) / CALLS);
}
const check = await session.eval(calls);
if (check.valuesJson !== `[${CALLS}]`) throw new Error(`wrong count ${check.valuesJson}`);
await session.close();
await sandbox.close();

console.log(
  JSON.stringify({
    import_to_first_result: [importToFirstResult],
    fresh_eval: fresh,
    session_eval: sessionEval,
    round_trip: roundTrip,
  }),
);
