#!/usr/bin/env node
// The moonbox command line, as the Rust `moonbox` binary runs it:
// `moonbox run [flags] FILE|-`, `moonbox check`, ... (`moonbox --help`).

import { runCli } from '../lib/native.js';

process.exit(runCli(['moonbox', ...process.argv.slice(2)]));
