// Loads the native addon (the moonbox crate, built by scripts/build.mjs)
// and what the crate decides: default limits, error kinds, report version.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const platform = `${process.platform}-${process.arch}`;
const file = `../moonbox.${platform}${process.platform === 'linux' ? '-gnu' : ''}.node`;

function load() {
  try {
    return require(file);
  } catch (e) {
    throw new Error(
      `moonbox: cannot load the native addon ${file} for ${platform}: ${e.message}. ` +
        'This package is built for linux-x64 (glibc); from a source checkout, run `npm run build`.',
      { cause: e },
    );
  }
}

const native = load();

export const { NativeSandbox, Canceller, runCli, takeEngineWarning } = native;

/** The crate's rules, as `crate_info()` gives them (snake_case JSON). */
export const info = JSON.parse(native.crateInfo());
