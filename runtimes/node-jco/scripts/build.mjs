// Transpiles the moonbox component (host/component/moonbox.wasm in the
// repository) into ./gen/ with jco: the JavaScript bindings and the core
// wasm modules that src/worker.js instantiates.

import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transpile } from '@bytecodealliance/jco-transpile';

const component = fileURLToPath(new URL('../../../host/component/moonbox.wasm', import.meta.url));
const out = fileURLToPath(new URL('../gen/', import.meta.url));

if (!existsSync(component)) {
  console.error(`error: the component is missing: ${component} (build it first)`);
  process.exit(1);
}

const { files } = await transpile(component, {
  name: 'moonbox',
  // The worker passes every import itself, WASI included, and the core
  // modules compiled once on the main thread.
  instantiation: 'sync',
  // The guest's core modules use exception references (Node 26+).
  bindgenEnableWasmExnref: true,
  emitTypescriptDeclarations: false,
  noComponentErrorWrapping: false,
});

await rm(out, { recursive: true, force: true });
for (const [name, bytes] of Object.entries(files)) {
  const path = out + name;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
}
console.log(`transpiled ${Object.keys(files).length} files into gen/`);
