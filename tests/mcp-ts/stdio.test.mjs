// `moonbox mcp` over stdio, driven by the official TypeScript SDK: the
// flows where that client behaves differently from the Python SDK
// (tests/mcp). Run by `just mcp-ts-test` against the binary `MOONBOX_BIN`.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, cancelThenCall, fastScriptsLeaveNoProgress, report } from './common.mjs';

/** A connected client over stdio, with every error the SDK reports. */
async function connect(flags = []) {
  const transport = new StdioClientTransport({ command: BIN, args: ['mcp', ...flags], stderr: 'pipe' });
  const client = new Client({ name: 'moonbox-ts-tests', version: '1.0.0' });
  const errors = [];
  client.onerror = (error) => errors.push(String(error));
  await client.connect(transport);
  return { client, errors };
}


test('fast scripts never leave a progress notification behind their result', async () => {
  const { client, errors } = await connect();
  try {
    // The SDK handles a notification one turn after a result that arrived
    // with it, and then finds no handler for its token: an error. So a
    // notification must never travel right behind... the result it belongs to.
    await fastScriptsLeaveNoProgress(client, errors, 100);
  } finally {
    await client.close();
  }
});

test('a running script streams progress, and its result follows without a lost notification', async () => {
  const { client, errors } = await connect(['--max-instructions', '4000000000', '--timeout', '10s']);
  try {
    const messages = [];
    // Prints, runs for a while, prints again, and ends soon after.
    const code = `
      for round = 1, 3 do
        print('round ' .. round)
        local t = os.clock() while os.clock() - t < 0.2 do end
      end
      print('last') return 'done'`;
    const result = await client.callTool({ name: 'run_lua', arguments: { code } }, undefined, {
      onprogress: (p) => messages.push(p.message ?? ''),
    });
    assert.deepEqual(report(result).values, ['done']);
    assert.equal(report(result).output, 'round 1\nround 2\nround 3\nlast\n');
    assert.ok(messages.join('').startsWith('round 1\nround 2\n'), JSON.stringify(messages));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(errors, []);
  } finally {
    await client.close();
  }
});

test('after a cancelled call, the next call on the same session runs', async () => {
  const { client, errors } = await connect(['--max-instructions', '4000000000', '--timeout', '30s']);
  try {
    await cancelThenCall(client, 5);
    assert.deepEqual(errors, []);
  } finally {
    await client.close();
  }
});

/** `moonbox mcp` as a bare process: lines in, lines out. */
function bare(flags = []) {
  const child = spawn(BIN, ['mcp', ...flags], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout });
  const queue = [];
  const waiting = [];
  lines.on('line', (line) => {
    const next = waiting.shift();
    if (next) next(JSON.parse(line));
    else queue.push(JSON.parse(line));
  });
  return {
    send: (text) => child.stdin.write(`${text}\n`),
    /** The next message the server writes, within five seconds. */
    next: () =>
      new Promise((resolve, reject) => {
        if (queue.length > 0) return resolve(queue.shift());
        const timer = setTimeout(() => reject(new Error('no answer within 5 s')), 5000);
        waiting.push((message) => {
          clearTimeout(timer);
          resolve(message);
        });
      }),
    close: async () => {
      child.stdin.end();
      await once(child, 'exit');
    },
  };
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bare', version: '1' } },
});

test('a line that is not JSON is answered with a parse error, and the connection goes on', async () => {
  const server = bare();
  try {
    server.send('{"jsonrpc": "2.0", "id": 1, "method": "initialize"'); // cut short
    const parse = await server.next();
    assert.equal(parse.id, null);
    assert.equal(parse.error.code, -32700);
    assert.match(parse.error.message, /not JSON/);
    server.send('["not", "a", "message"]');
    const invalid = await server.next();
    assert.equal(invalid.error.code, -32600);
    server.send(INITIALIZE);
    const init = await server.next();
    assert.equal(init.id, 1);
    assert.ok(init.result.serverInfo, JSON.stringify(init));
    server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    server.send('not json either');
    assert.equal((await server.next()).error.code, -32700);
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    const tools = await server.next();
    assert.equal(tools.id, 2);
    assert.ok(tools.result.tools.some((t) => t.name === 'run_lua'));
  } finally {
    await server.close();
  }
});

test('a request before initialize is told to initialize first', async () => {
  const server = bare();
  try {
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 'early', method: 'tools/list' }));
    const early = await server.next();
    assert.equal(early.id, 'early');
    assert.equal(early.error.code, -32600);
    assert.match(early.error.message, /`tools\/list` before `initialize`: initialize the connection first/);
    server.send(INITIALIZE);
    assert.equal((await server.next()).id, 1);
  } finally {
    await server.close();
  }
});

test('a line past the message bound is skipped and answered', async () => {
  const server = bare(['--max-script-bytes', '1KiB']);
  try {
    server.send(`{"jsonrpc": "2.0", "id": 1, "method": "x", "params": "${'a'.repeat(2 << 20)}"}`);
    const long = await server.next();
    assert.equal(long.error.code, -32600);
    assert.match(long.error.message, /longer than the \d+ bytes this server reads/);
    server.send(INITIALIZE);
    assert.equal((await server.next()).id, 1);
  } finally {
    await server.close();
  }
});

/** Every `type` in a schema, with its path. */
function types(schema, path = '', out = []) {
  if (Array.isArray(schema)) schema.forEach((item, i) => types(item, `${path}/${i}`, out));
  else if (schema && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'type') out.push([path, value]);
      types(value, `${path}/${key}`, out);
    }
  }
  return out;
}

test('the tools are portable: one type per field, annotated, and their results match their schemas', async () => {
  const { client, errors } = await connect(['--timeout', '300ms', '--max-instructions', '4000000000']);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['check_lua', 'close_session', 'new_session', 'run_lua']);
    for (const tool of tools) {
      assert.ok(tool.annotations?.title, `${tool.name} has a title`);
      assert.ok(tool.outputSchema, `${tool.name} declares the structured content it returns`);
      for (const [path, type] of [...types(tool.inputSchema), ...types(tool.outputSchema)]) {
        assert.equal(typeof type, 'string', `${tool.name}${path}: one type, not ${JSON.stringify(type)}`);
        assert.notEqual(type, 'null', `${tool.name}${path}`);
      }
      assert.ok(!JSON.stringify(tool.outputSchema).includes('anyOf'), tool.name);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.equal(byName.check_lua.annotations.readOnlyHint, true);
    assert.equal(byName.run_lua.annotations.openWorldHint, false);
    // The SDK checks each result's structured content against the listed
    // schema, and throws when it does not match: every kind of report.
    const run = (code) => client.callTool({ name: 'run_lua', arguments: { code } });
    const ok = await run('return 1, nil, {a = false}');
    assert.deepEqual(report(ok).values, [1, null, { a: false }]);
    assert.equal('error' in report(ok), false);
    const failed = await run('error("boom")');
    assert.equal(report(failed).error.kind, 'runtime');
    assert.equal(report(failed).error.line, 1);
    const stopped = await run('while true do end');
    assert.equal(report(stopped).error.kind, 'timeout');
    assert.equal('instructions' in report(stopped).stats, false, 'the host stopped the guest');
    const exited = await run('os.exit(3)');
    assert.equal(report(exited).exit_code, 3);
    const opened = await client.callTool({ name: 'new_session', arguments: {} });
    const closed = await client.callTool({ name: 'close_session', arguments: { session: opened.structuredContent.session } });
    assert.equal(closed.structuredContent.closed, true);
    assert.deepEqual(errors, []);
  } finally {
    await client.close();
  }
});

test('each protocol revision the server speaks: 2025-06-18 and 2025-11-25 by initialize, 2026-07-28 per request', async () => {
  for (const version of ['2025-06-18', '2025-11-25']) {
    const server = bare();
    try {
      server.send(INITIALIZE.replace('2025-06-18', version));
      const init = await server.next();
      assert.equal(init.result.protocolVersion, version);
      server.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_lua', arguments: { code: 'return 6 * 7' } } }));
      const answer = await server.next();
      assert.deepEqual(answer.result.structuredContent.report.values, [42], version);
    } finally {
      await server.close();
    }
  }
  // 2026-07-28 has no initialize: each request carries its version and
  // the client's capabilities.
  const server = bare();
  try {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }));
    const tools = await server.next();
    assert.ok(tools.result.tools.some((t) => t.name === 'run_lua'), JSON.stringify(tools).slice(0, 300));
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { _meta: meta, name: 'run_lua', arguments: { code: 'return 6 * 7' } } }));
    const answer = await server.next();
    assert.deepEqual(answer.result.structuredContent.report.values, [42], JSON.stringify(answer).slice(0, 300));
  } finally {
    await server.close();
  }
});

test("a script's log events arrive as notifications/message while it runs, from the level the client set", async () => {
  const { client, errors } = await connect(['--max-instructions', '4000000000', '--timeout', '10s']);
  try {
    const messages = [];
    let resultAt = null;
    client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => {
      messages.push({ ...note.params, beforeResult: resultAt === null });
    });
    const code = `
      log('debug', 'not wanted')
      log('info', 'step', {n = 1})
      local t = os.clock() while os.clock() - t < 0.3 do end
      log('warn', 'almost done')
      return 1`;
    const run = () => client.callTool({ name: 'run_lua', arguments: { code } });
    const result = await run();
    resultAt = Date.now();
    assert.deepEqual(report(result).values, [1]);
    assert.equal(report(result).logs.length, 3, 'the report has every event');
    assert.deepEqual(
      messages.map((m) => [m.level, m.logger, m.data.message, m.beforeResult]),
      [
        ['info', 'lua', 'step', true],
        ['warning', 'lua', 'almost done', true],
      ],
    );
    assert.deepEqual(messages[0].data.fields, { n: 1 });
    // The client raises the bar.
    messages.length = 0;
    resultAt = null;
    await client.setLoggingLevel('warning');
    await run();
    assert.deepEqual(messages.map((m) => m.data.message), ['almost done']);
    assert.deepEqual(errors, []);
  } finally {
    await client.close();
  }
});
