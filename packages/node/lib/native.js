// Loads the native addon (the moonbox crate, built by scripts/build.mjs)
// and what the crate decides: default limits, error kinds, report version.

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const platform = `${process.platform}-${process.arch}`;
const libc = process.platform === 'linux' ? '-gnu' : '';
// Installed from npm, the addon is the platform package's (an
// optionalDependency that npm installs on its platform only); in a source
// checkout, the file scripts/build.mjs writes beside package.json.
const candidates = [`moonbox-${platform}${libc}`, `../moonbox.${platform}${libc}.node`];

function load() {
  const failures = [];
  for (const candidate of candidates) {
    try {
      return require(candidate);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') {
        throw new Error(`moonbox: cannot load the native addon ${candidate} for ${platform}: ${e.message}`, { cause: e });
      }
      failures.push(candidate);
    }
  }
  throw new Error(
    `moonbox: no native addon for ${platform} (looked for ${failures.join(' and ')}). ` +
      'The package ships one for linux-x64 (glibc), as moonbox-linux-x64-gnu; ' +
      'check that npm installed optional dependencies (not --omit=optional), ' +
      'or from a source checkout run `npm run build`.',
  );
}

const native = load();

export const { NativeSandbox, Canceller, runCli, takeEngineWarning } = native;

/** The crate's rules, as `crate_info()` gives them (snake_case JSON). */
export const info = JSON.parse(native.crateInfo());
