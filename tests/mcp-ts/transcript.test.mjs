// The transcript in docs/mcp.md is a real run: a fresh one must match it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { DOC, transcript, withTranscript } from './transcript.mjs';

const BIN = process.env.MOONBOX_BIN ?? '../../target/debug/moonbox';

test("docs/mcp.md's transcript is what the server answers today", async () => {
  const text = readFileSync(DOC, 'utf8');
  const fresh = withTranscript(text, await transcript(BIN));
  assert.equal(text, fresh, 'docs/mcp.md differs from a fresh run: `just mcp-transcript` rewrites it');
});
