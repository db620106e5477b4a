// `moonbox mcp --http` driven by the official TypeScript SDK's streamable
// HTTP client: the bearer token, and the flows of stdio.test.mjs (fast
// scripts' progress, cancel then call, log notifications, schemas) over
// HTTP. Run by `just mcp-ts-test` against the binary `MOONBOX_BIN`.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { BIN, cancelThenCall, fastScriptsLeaveNoProgress, report } from './common.mjs';

const TOKEN = 'tok_ts-http-tests.5d1e';

let server;

/** `moonbox mcp --http` on a free loopback port with a token file; its URL
 * is read from the line it prints once it listens. */
async function startServer(flags) {
  const dir = mkdtempSync(join(tmpdir(), 'moonbox-mcp-ts-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const child = spawn(BIN, ['mcp', '--http', '127.0.0.1:0', '--token-file', tokenFile, ...flags], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log = [];
  const lines = createInterface({ input: child.stderr });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening after 60 s:\n${log.join('\n')}`)), 60_000);
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${log.join('\n')}`)));
    lines.on('line', (line) => {
      log.push(line);
      const found = line.match(/serving streamable HTTP at (\S+)/);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
  });
  return {
    url,
    log,
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

before(async () => {
  server = await startServer(['--max-instructions', '4000000000', '--timeout', '10s']);
});

after(async () => {
  await server.stop();
  assert.ok(!server.log.join('\n').includes(TOKEN), 'the token is in no log line');
});

/** A client connected over streamable HTTP, with every error the SDK reports. */
async function connect(token = TOKEN) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } });
  const client = new Client({ name: 'moonbox-ts-http-tests', version: '1.0.0' });
  const errors = [];
  client.onerror = (error) => errors.push(String(error));
  await client.connect(transport);
  return { client, errors };
}

test('a missing or wrong bearer token is refused before anything runs', async () => {
  for (const token of [null, 'tok_wrong']) {
    await assert.rejects(connect(token), (error) => {
      assert.match(String(error), /401|nauthorized/, String(error));
      return true;
    });
  }
});

test('fast scripts never leave a progress notification behind their result, over HTTP', async () => {
  const { client, errors } = await connect();
  try {
    await fastScriptsLeaveNoProgress(client, errors, 50);
  } finally {
    await client.close();
  }
});

test('a running script streams progress and log messages before its result, over HTTP', async () => {
  const { client, errors } = await connect();
  try {
    const logs = [];
    const progress = [];
    let done = false;
    client.setNotificationHandler(LoggingMessageNotificationSchema, (note) => {
      logs.push([note.params.level, note.params.data.message, done]);
    });
    const code = `
      for round = 1, 3 do
        print('round ' .. round)
        log('info', 'round', {n = round})
        local t = os.clock() while os.clock() - t < 0.2 do end
      end
      return 'done'`;
    const result = await client.callTool({ name: 'run_lua', arguments: { code } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ''),
    });
    done = true;
    assert.deepEqual(report(result).values, ['done']);
    assert.ok(progress.join('').startsWith('round 1\nround 2\n'), JSON.stringify(progress));
    assert.deepEqual(logs, [
      ['info', 'round', false],
      ['info', 'round', false],
      ['info', 'round', false],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(errors, []);
  } finally {
    await client.close();
  }
});

test('after a cancelled call, the next call on the same session runs, over HTTP', async () => {
  const { client, errors } = await connect();
  try {
    const session = await cancelThenCall(client, 3);
    // The SDK checks each structured result against the listed schema:
    // close_session's too.
    await client.listTools();
    const closed = await client.callTool({ name: 'close_session', arguments: { session } });
    assert.equal(closed.structuredContent.closed, true);
    assert.deepEqual(errors, []);
  } finally {
    await client.close();
  }
});
