// moonbox: untrusted Lua 5.4 in a WebAssembly sandbox, for Node.js 26+.

export { Sandbox, Session, DEFAULT_LIMITS, DEFAULT_RESOURCE_LIMITS, DEFAULT_CLOCK } from './sandbox.js';
export { Report, REPORT_VERSION, LIMIT_KINDS } from './report.js';
export { parseKeepingNumbers } from './values.js';
