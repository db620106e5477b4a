// Loading the transpiled component's core modules on the main thread:
// read once, with their linear memory capped, compiled once per cap, and
// handed to workers as WebAssembly.Module objects (which can be posted to a
// worker without compiling again).

import { readFileSync } from 'node:fs';

const GENERATED = new URL('../gen/', import.meta.url);
const CORE_FILES = ['moonbox.core.wasm', 'moonbox.core2.wasm', 'moonbox.core3.wasm'];
const PAGE = 65536;

/** The URL of the generated bindings, for the worker to import. */
export const BINDINGS_URL = new URL('moonbox.js', GENERATED).href;

let sources = null;
const compiled = new Map();

function readSources() {
  if (sources) return sources;
  try {
    sources = CORE_FILES.map((name) => [name, readFileSync(new URL(name, GENERATED))]);
  } catch (e) {
    throw new Error(`moonbox: cannot read the transpiled component (run \`npm run build\` in the package): ${e.message}`);
  }
  return sources;
}

/**
 * The core modules, compiled with every defined memory's maximum set to at
 * most `maxPages` pages, as a map from file name to WebAssembly.Module.
 * Compiled once per distinct cap and kept for the process.
 */
export function coreModules(maxPages) {
  let modules = compiled.get(maxPages);
  if (!modules) {
    modules = new Map();
    for (const [name, bytes] of readSources()) {
      modules.set(name, new WebAssembly.Module(capMemory(bytes, maxPages)));
    }
    compiled.set(maxPages, modules);
  }
  return modules;
}

/** The page count for a byte cap (rounded down, at least one page). */
export const pagesFor = (bytes) => Math.max(1, Math.floor(bytes / PAGE));

// ---------------------------------------------------------------------------
// The memory section
// ---------------------------------------------------------------------------

function readUleb(bytes, at) {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const byte = bytes[at++];
    if (byte === undefined) throw new Error('truncated LEB128');
    result |= BigInt(byte & 0x7f) << shift;
    shift += 7n;
    if ((byte & 0x80) === 0) return [result, at];
  }
}

function uleb(value) {
  let n = BigInt(value);
  const out = [];
  do {
    let byte = Number(n & 0x7fn);
    n >>= 7n;
    if (n !== 0n) byte |= 0x80;
    out.push(byte);
  } while (n !== 0n);
  return out;
}

/**
 * A copy of the module `bytes` whose memory section (id 5) gives every
 * memory a maximum of at most `maxPages` pages, so that `memory.grow` fails
 * past it. Imported memories are capped by the module that defines them.
 * A module without a memory section is returned unchanged.
 */
export function capMemory(bytes, maxPages) {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new Error('not a core wasm module');
  }
  const parts = [bytes.subarray(0, 8)];
  let at = 8;
  let changed = false;
  while (at < bytes.length) {
    const start = at;
    const id = bytes[at++];
    let size;
    [size, at] = readUleb(bytes, at);
    const end = at + Number(size);
    if (id !== 5) {
      parts.push(bytes.subarray(start, end));
      at = end;
      continue;
    }
    let count;
    let p = at;
    [count, p] = readUleb(bytes, p);
    const body = [...uleb(count)];
    for (let i = 0n; i < count; i++) {
      const flags = bytes[p++];
      let min;
      [min, p] = readUleb(bytes, p);
      let max = null;
      if (flags & 1) [max, p] = readUleb(bytes, p);
      const cap = BigInt(maxPages);
      let newMax = max === null || max > cap ? cap : max;
      if (newMax < min) newMax = min;
      body.push(flags | 1, ...uleb(min), ...uleb(newMax));
    }
    if (p !== end) throw new Error('unexpected bytes in the memory section');
    parts.push(Uint8Array.of(5, ...uleb(body.length), ...body));
    changed = true;
    at = end;
  }
  if (!changed) return bytes;
  const total = parts.reduce((n, part) => n + part.length, 0);
  const out = new Uint8Array(total);
  let o = 0;
  for (const part of parts) {
    out.set(part, o);
    o += part.length;
  }
  return out;
}
