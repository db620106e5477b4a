// Builds the native addon with cargo and copies it to the file the
// package loads (moonbox.linux-x64-gnu.node, beside package.json).
//
//     node scripts/build.mjs          (MOONBOX_NODE_PROFILE: dev, the default, or release)
//
// Respects CARGO_TARGET_DIR; every other cargo setting comes from the
// environment too.

import { spawnSync } from 'node:child_process';
import { copyFileSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = resolve(here, '..');
const root = resolve(pkg, '../..');
const profile = process.env.MOONBOX_NODE_PROFILE || 'dev';
if (!/^[A-Za-z0-9_-]+$/.test(profile)) {
  console.error(`build: MOONBOX_NODE_PROFILE must be a cargo profile name, got ${JSON.stringify(profile)}`);
  process.exit(2);
}

const cargo = spawnSync('cargo', ['build', '-p', 'moonbox-node', '--profile', profile], { cwd: root, stdio: 'inherit' });
if (cargo.error) {
  console.error(`build: cannot run cargo: ${cargo.error.message}`);
  process.exit(2);
}
if (cargo.status !== 0) process.exit(cargo.status ?? 1);

// cargo's directory for a profile: `debug` for dev, else the profile's name.
const targetDir = resolve(root, process.env.CARGO_TARGET_DIR || 'target');
const built = join(targetDir, profile === 'dev' ? 'debug' : profile, 'libmoonbox_node.so');
const dest = join(pkg, 'moonbox.linux-x64-gnu.node');
// Copied beside, then renamed: a process that has the old file loaded
// keeps its mapping intact.
copyFileSync(built, `${dest}.tmp`);
renameSync(`${dest}.tmp`, dest);
console.error(`build: ${built} -> ${dest}`);
