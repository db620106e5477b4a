#!/usr/bin/env node
// The moonbox command line: `moonbox run [flags] FILE|-`.

const major = Number(process.versions.node.split('.')[0]);
if (major < 26) {
  process.stderr.write(
    `error: moonbox needs Node.js 26 or later (this is ${process.versions.node}): the sandbox's WebAssembly uses exception references\n`,
  );
  process.exit(2);
}

const { main } = await import('../src/cli.js');
process.exitCode = await main(process.argv.slice(2));
