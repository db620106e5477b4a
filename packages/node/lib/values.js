// Values crossing between JavaScript and the crate, as JSON text: exact
// for integers past Number.MAX_SAFE_INTEGER (as bigint) both ways.

const nonce = Math.random().toString(36).slice(2);
// A marker no value the guest sends can be: a NUL, then a per-process nonce.
const MARK = `\u0000moonbox-bigint-${nonce}:`;
const MARK_JSON = `\\u0000moonbox-bigint-${nonce}:`;
const MARKED = new RegExp(`"${MARK_JSON.replace(/\\/g, '\\\\')}(-?\\d+)"`, 'g');
// A JSON string or a JSON number, whichever comes first.
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
const INTEGER = /^-?\d+$/;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/**
 * Parses JSON, giving integers past Number.MAX_SAFE_INTEGER as bigint
 * (floats stay numbers). Text without a 16-digit run takes JSON.parse alone.
 */
export function parseExact(text) {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  let big = false;
  const marked = text.replace(TOKEN, (token) => {
    if (token[0] === '"' || !INTEGER.test(token) || Number.isSafeInteger(Number(token))) return token;
    big = true;
    return `"${MARK_JSON}${token}"`;
  });
  if (!big) return JSON.parse(text);
  return JSON.parse(marked, (_key, value) =>
    typeof value === 'string' && value.startsWith(MARK) ? BigInt(value.slice(MARK.length)) : value,
  );
}

/**
 * JSON text of a value: bigints written as exact integers (a RangeError
 * outside 64 bits), JSON.rawJSON values (where Node has them) as their
 * text, undefined as null. A non-finite number is a RangeError, not null.
 */
export function stringifyExact(value) {
  switch (typeof value) {
    case 'undefined':
      return 'null';
    case 'number':
      if (!Number.isFinite(value)) throw new RangeError(`${value} cannot become a Lua value`);
      return JSON.stringify(value);
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'bigint':
      return bigintText(value);
    default: {
      let big = false;
      const text = JSON.stringify(value, (_key, v) => {
        if (typeof v !== 'bigint') return v;
        big = true;
        return MARK + bigintText(v);
      });
      if (text === undefined) return 'null';
      return big ? text.replace(MARKED, '$1') : text;
    }
  }
}

function bigintText(n) {
  if (n < I64_MIN || n > I64_MAX) throw new RangeError(`the integer ${n} is outside 64 bits`);
  return n.toString();
}

/** snake_case to camelCase. */
export const camel = (name) => name.replace(/_([a-z0-9])/g, (_m, c) => c.toUpperCase());

/** An object's keys in camelCase (one level). */
export function camelKeys(object) {
  if (object === null || typeof object !== 'object') return object;
  const out = {};
  for (const [k, v] of Object.entries(object)) out[camel(k)] = v;
  return out;
}
