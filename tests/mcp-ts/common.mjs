// What the TypeScript SDK tests share: the binary under test and how a
// run_lua result is read.

import assert from 'node:assert/strict';

/** The `moonbox` binary under test. */
export const BIN = process.env.MOONBOX_BIN ?? '../../target/debug/moonbox';

/** The report in a run_lua result, after the line that leads it. */
export function report(result) {
  assert.equal(result.structuredContent.answer, result.content[0].text, 'the line leads');
  return result.structuredContent.report;
}

/** Runs `count` fast scripts that print, each checked, and then checks that
 * no progress notification was sent (each ends within one interval, so the
 * result has its output) and that the SDK reported no error: a notification
 * travelling right behind its result would be one ("unknown token"). */
export async function fastScriptsLeaveNoProgress(client, errors, count) {
  let progress = 0;
  for (let i = 0; i < count; i++) {
    const result = await client.callTool(
      { name: 'run_lua', arguments: { code: `print('line ${i}') return ${i}` } },
      undefined,
      { onprogress: () => progress++ },
    );
    assert.deepEqual(report(result).values, [i]);
    assert.equal(report(result).output, `line ${i}\n`);
  }
  // Give a late notification time to surface as an error.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(errors, []);
  assert.equal(progress, 0);
}

/** Opens a session and, `rounds` times, cancels a call that never ends and
 * at once calls again on the same session: the call runs (the cancelled
 * one may still be winding down in the server) on a restarted session.
 * Returns the session. */
export async function cancelThenCall(client, rounds) {
  const opened = await client.callTool({ name: 'new_session', arguments: {} });
  const session = opened.structuredContent.session;
  assert.ok(session, JSON.stringify(opened));
  for (let i = 0; i < rounds; i++) {
    await client.callTool({ name: 'run_lua', arguments: { session, code: 'kept = 41' } });
    const abort = new AbortController();
    const running = client.callTool(
      { name: 'run_lua', arguments: { session, code: 'while true do end' } },
      undefined,
      { signal: abort.signal },
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    abort.abort('the user changed their mind');
    await assert.rejects(running);
    const next = await client.callTool({ name: 'run_lua', arguments: { session, code: 'return kept' } });
    assert.ok(!next.isError, JSON.stringify(next.content));
    // The cancel restarted the session: its globals are gone.
    assert.deepEqual(report(next).values, [null]);
  }
  return session;
}
