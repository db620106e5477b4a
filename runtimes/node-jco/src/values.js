// Values crossing between JavaScript and the guest.

/** Parses JSON, giving integers past Number.MAX_SAFE_INTEGER as bigint. */
export function parseExact(text) {
  return JSON.parse(text, (_key, value, context) => {
    if (typeof value === 'number' && !Number.isSafeInteger(value) && /^-?\d+$/.test(context.source)) {
      return BigInt(context.source);
    }
    return value;
  });
}

/** JSON.stringify that writes bigints as exact integers. */
export function stringifyExact(value) {
  return JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? JSON.rawJSON(v.toString()) : v));
}

const S64_MIN = -(2n ** 63n);
const S64_MAX = 2n ** 63n - 1n;

/** A WIT `value` (jco's form) as a plain JavaScript value. */
export function fromWit(value) {
  switch (value.tag) {
    case 'nil':
      return null;
    case 'boolean':
    case 'float':
    case 'text':
      return value.val;
    case 'integer': {
      const n = value.val;
      return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
    }
    case 'json':
      return parseExact(value.val);
    default:
      throw new TypeError(`unknown value tag ${value.tag}`);
  }
}

/**
 * A plain JavaScript value as a WIT `value`: null and undefined are nil, an
 * integral number or a bigint is an integer, another number a float, a
 * string is text, JSON.rawJSON(text) is sent as that JSON text exactly, and
 * anything else goes through JSON.stringify (bigints written exactly).
 * `maxBytes` bounds the text or the JSON text, in UTF-8 bytes.
 */
export function toWit(value, maxBytes) {
  switch (typeof value) {
    case 'undefined':
      return { tag: 'nil' };
    case 'boolean':
      return { tag: 'boolean', val: value };
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`the result ${value} cannot become a Lua value`);
      if (Number.isInteger(value) && !Object.is(value, -0) && Math.abs(value) <= Number.MAX_SAFE_INTEGER) {
        return { tag: 'integer', val: BigInt(value) };
      }
      return { tag: 'float', val: value };
    case 'bigint':
      if (value < S64_MIN || value > S64_MAX) throw new Error('the result is an integer outside 64 bits');
      return { tag: 'integer', val: value };
    case 'string':
      if (Buffer.byteLength(value, 'utf8') > maxBytes) {
        throw new Error(`the result is more than ${maxBytes} bytes of text, the sandbox's memory limit; return less data`);
      }
      return { tag: 'text', val: value };
    case 'object': {
      if (value === null) return { tag: 'nil' };
      if (JSON.isRawJSON(value)) {
        // A scalar's exact text: `1.0` stays a float, a long integer whole.
        const raw = value.rawJSON;
        if (/^-?\d+$/.test(raw)) return toWit(BigInt(raw), maxBytes);
        if (/^-?[\d.eE+-]+$/.test(raw)) return { tag: 'float', val: Number(raw) };
        return toWit(JSON.parse(raw), maxBytes);
      }
      const text = stringifyExact(value);
      if (text === undefined) return { tag: 'nil' };
      if (Buffer.byteLength(text, 'utf8') > maxBytes) {
        throw new Error(`the result is more than ${maxBytes} bytes of JSON, the sandbox's memory limit; return less data`);
      }
      return { tag: 'json', val: text };
    }
    default:
      throw new Error(`a ${typeof value} cannot become a Lua value`);
  }
}

/**
 * Parses JSON, keeping every number whose text JSON.stringify would not give
 * back (`1.0`, `2e3`, integers past 2^53) as JSON.rawJSON of that text, so
 * that stringifying the result, or passing it to the sandbox, writes the
 * numbers exactly as they were written.
 */
export function parseKeepingNumbers(text) {
  return JSON.parse(text, (_key, value, context) =>
    typeof value === 'number' && JSON.stringify(value) !== context.source ? JSON.rawJSON(context.source) : value,
  );
}
