// Transpiles the moonbox component into ./gen/ for run.mjs, with jco's
// transpile library alone: the same as
//
//     jco transpile ../../host/component/moonbox.wasm --name moonbox --out-dir gen \
//       --instantiation sync --bindgen-enable-wasm-exnref --no-typescript
//
// without the jco command's other tools and their packages.

import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transpile } from '@bytecodealliance/jco-transpile';

const component = fileURLToPath(new URL('../../host/component/moonbox.wasm', import.meta.url));
const out = fileURLToPath(new URL('./gen/', import.meta.url));

const { files } = await transpile(component, {
  name: 'moonbox',
  // run.mjs passes every import itself, WASI included.
  instantiation: 'sync',
  // The guest's core modules use exception references.
  bindgenEnableWasmExnref: true,
  emitTypescriptDeclarations: false,
  // Keep the jco command's default: a top-level `err` is thrown as a
  // ComponentError.
  noComponentErrorWrapping: false,
});

await rm(out, { recursive: true, force: true });
for (const [name, bytes] of Object.entries(files)) {
  const path = out + name;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
}
