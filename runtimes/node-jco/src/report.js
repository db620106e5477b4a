// The outcome of one eval: the same shape, field for field, as the report
// `moonbox run --json` prints.

import { LIMIT_KINDS, REPORT_VERSION } from './contract.js';
import { parseExact, parseKeepingNumbers } from './values.js';

export { LIMIT_KINDS, REPORT_VERSION };

const lossyUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const strictUtf8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });

/**
 * A message on one line, as the Rust host's `error[kind]: message` puts it:
 * line breaks (with the indentation around them) become one space, and other
 * characters that could move a terminal's cursor are escaped.
 */
export function oneLine(s) {
  const lines = s
    .split('\n')
    .map((l) => l.replace(/[ \t]+$/, ''))
    .filter((l) => l.replace(/^[ \t]+/, '') !== '');
  const escape = (line) =>
    line.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
      if (c === '\r') return '\\r';
      if (c === '\t') return '\\t';
      return `\\u{${c.codePointAt(0).toString(16)}}`;
    });
  return lines.map((l, i) => escape(i === 0 ? l : l.replace(/^[ \t]+/, ''))).join(' ');
}

// A written file as the report lists it: its contents as `text` when they
// are UTF-8, else as `base64`.
function fileJson(name, bytes) {
  const size = bytes.length;
  try {
    return `{"name":${JSON.stringify(name)},"size":${size},"text":${JSON.stringify(strictUtf8.decode(bytes))}}`;
  } catch {
    const encoded = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');
    return `{"base64":"${encoded}","name":${JSON.stringify(name)},"size":${size}}`;
  }
}

export class Report {
  #valuesJson;
  #logsJson;

  /** @internal Built by the sandbox. */
  constructor({ ok, valuesJson, exitCode, error, outputBytes, logs, stats, files }) {
    this.ok = ok;
    this.#valuesJson = valuesJson;
    this.values = parseExact(valuesJson);
    this.outputBytes = outputBytes;
    let text;
    try {
      text = strictUtf8.decode(outputBytes);
    } catch {
      text = lossyUtf8.decode(outputBytes);
      this.outputBase64 = Buffer.from(outputBytes.buffer, outputBytes.byteOffset, outputBytes.length).toString('base64');
    }
    this.output = text;
    this.exitCode = exitCode;
    this.error = error && { ...error, summary: `error[${error.kind}]: ${oneLine(error.message)}` };
    this.logs = logs.map(({ level, message, fieldsJson }) => ({ level, message, fields: parseExact(fieldsJson) }));
    this.#logsJson = `[${logs
      .map(({ level, message, fieldsJson }) => `{"fields":${fieldsJson},"level":${JSON.stringify(level)},"message":${JSON.stringify(message)}}`)
      .join(',')}]`;
    this.stats = stats;
    // The files the eval wrote, by name (sorted, as the guest lists them).
    this.files = new Map(files.map(({ name, bytes }) => [name, bytes]));
  }

  /** The returned values as the guest's exact JSON array text. */
  get valuesJson() {
    return this.#valuesJson;
  }

  /** The log events as exact JSON array text. */
  get logsJson() {
    return this.#logsJson;
  }

  /** The report as JSON text, exactly as `moonbox run --json` writes it. */
  toJson() {
    const s = this.stats;
    const error =
      this.error &&
      JSON.stringify({
        chunk: this.error.chunk,
        kind: this.error.kind,
        line: this.error.line,
        message: this.error.message,
        summary: this.error.summary,
        traceback: this.error.traceback,
      });
    const stats = JSON.stringify({
      calls_unrecorded: s.callsUnrecorded,
      capability_calls: s.capabilityCalls,
      fuel_used: s.fuelUsed,
      instructions: s.instructions,
      output_bytes: s.outputBytes,
      peak_memory_bytes: s.peakMemoryBytes,
      wall_time_us: s.wallTimeUs,
    });
    const output =
      `"output":${JSON.stringify(this.output)}` +
      (this.outputBase64 === undefined ? '' : `,"output_base64":${JSON.stringify(this.outputBase64)}`);
    // Present only when the eval wrote some, as the Rust host leaves it out.
    const files =
      this.files.size === 0
        ? ''
        : `"files":[${[...this.files].map(([name, bytes]) => fileJson(name, bytes)).join(',')}],`;
    return (
      `{"error":${error ?? 'null'},"exit_code":${JSON.stringify(this.exitCode)},${files}"logs":${this.#logsJson},` +
      `"ok":${this.ok},${output},"stats":${stats},"values":${this.#valuesJson},"version":${REPORT_VERSION}}`
    );
  }

  /**
   * For JSON.stringify: the report as a plain object with the same members,
   * its numbers kept exact (`1.0`, long integers) as JSON.rawJSON leaves, so
   * that `JSON.stringify(report)` writes the same report as `toJson()`.
   */
  toJSON() {
    return parseKeepingNumbers(this.toJson());
  }
}
