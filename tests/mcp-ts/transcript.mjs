// The transcript in docs/mcp.md ("A session, from the client's side"),
// from a real run of `moonbox mcp` over stdio. transcript.test.mjs fails
// when the docs differ from a fresh run; `node transcript.mjs --write`
// (`just mcp-transcript`) puts a fresh run in the docs.

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DOC = `${ROOT}docs/mcp.md`;
const START = '<!-- transcript: written by tests/mcp-ts/transcript.mjs -->';
const END = '<!-- transcript end -->';

/** The server's flags, as the docs give them. */
export const FLAGS = ['--records', 'examples/records.json', '--timeout', '2s', '--max-instructions', '1000000'];

/** What the client sends, a line each (`SESSION` becomes the id new_session returned). */
const SENT = [
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'transcript', version: '1' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: {
      name: 'run_lua',
      arguments: { code: 'local r = records.get(id) print(r.name) return #r.visits', inputs: { id: '123' } },
    },
  },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'run_lua', arguments: { code: 'return records.get(123)' } } },
  {
    jsonrpc: '2.0',
    id: 5,
    method: 'tools/call',
    params: { name: 'check_lua', arguments: { code: 'os.execute("ls") return totl' } },
  },
  { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'new_session', arguments: {} } },
  {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'run_lua', arguments: { code: 'seen = (seen or 0) + 1 return seen', session: 'SESSION' } },
  },
  {
    jsonrpc: '2.0',
    id: 8,
    method: 'tools/call',
    params: { name: 'run_lua', arguments: { code: 'seen = (seen or 0) + 1 return seen', session: 'SESSION' } },
  },
  { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'run_lua', arguments: { code: 'while true do end' } } },
  { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'close_session', arguments: { session: 'SESSION' } } },
  '{"jsonrpc": "2.0", "id": 11, "method": "tools/list"', // cut short: not JSON
];

/** JSON with a space after `:` and `,`, as the docs show it. */
function show(value) {
  if (Array.isArray(value)) return `[${value.map(show).join(', ')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${v === ELIDED ? '…' : show(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

const ELIDED = Symbol('elided');

/** Cuts long texts and elides what differs from run to run. */
function trim(value, key = '') {
  if (Array.isArray(value)) return value.map((v) => trim(v));
  if (value && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      if (['wall_time_us', 'duration_us', 'peak_memory_bytes'].includes(k) || k === 'traceback') out[k] = ELIDED;
      else if ((k === 'inputSchema' || k === 'outputSchema') && value.name === 'run_lua') out[k] = ELIDED;
      else out[k] = trim(v, k);
    }
    return out;
  }
  if (typeof value === 'string' && key === 'description' && value.length > 160) {
    return `${value.slice(0, 60)} … [${value.length} characters]`;
  }
  return value;
}

/** The transcript's lines, from a fresh run of the binary `bin`. */
export async function transcript(bin) {
  // Relative to where the caller stands, not to the server's directory.
  const child = spawn(resolve(bin), ['mcp', ...FLAGS], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const out = [];
  let session = null;
  const secret = (text) => (session ? text.replaceAll(session, 'SESSION_ID') : text);
  for (const message of SENT) {
    const line = typeof message === 'string' ? message : JSON.stringify(message).replaceAll('"SESSION"', JSON.stringify(session));
    child.stdin.write(`${line}\n`);
    out.push(`--> ${typeof message === 'string' ? message : secret(show(JSON.parse(line)))}`);
    if (typeof message !== 'string' && message.id === undefined) continue;
    const answer = JSON.parse((await lines.next()).value);
    if (answer.result?.structuredContent?.session && !session) session = answer.result.structuredContent.session;
    out.push(`<-- ${secret(show(trim(answer)))}`);
  }
  child.stdin.end();
  await new Promise((resolve) => child.on('exit', resolve));
  return out;
}

/** The docs' text with `lines` as its transcript. */
export function withTranscript(text, lines) {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/mcp.md has no ${START} ... ${END} block`);
  return `${text.slice(0, start)}${START}\n\n\`\`\`text\n${lines.join('\n')}\n\`\`\`\n\n${text.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bin = process.env.MOONBOX_BIN ?? `${ROOT}target/debug/moonbox`;
  const lines = await transcript(bin);
  const text = readFileSync(DOC, 'utf8');
  if (process.argv.includes('--write')) {
    writeFileSync(DOC, withTranscript(text, lines));
    console.log(`wrote ${lines.length} lines into docs/mcp.md`);
  } else {
    console.log(lines.join('\n'));
  }
}
