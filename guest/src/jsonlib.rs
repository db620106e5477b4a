//! The `json` library every script has: `json.encode(value)` and
//! `json.decode(text)`, by the boundary's rules (`json`, docs/wit.md).
//!
//! `encode` runs the boundary's own encoder (sorted object keys, errors that
//! name the path, cycles, `max-value-depth`) with the text capped at
//! `max-string-bytes`, since it becomes a Lua string. `decode` parses the
//! text into a [`Tree`], then pushes it with the boundary's own
//! conversion (`json::push_received`): null is nil, integers that fit stay
//! integers, `max-value-depth` holds. Both raise ordinary (runtime) Lua
//! errors for a value or a text they refuse, and trip the memory and string
//! limits like any other allocation.
//!
//! The parsed document lives outside the Lua heap while its Lua values are
//! built, so the parser charges an estimate of its size against the room
//! left in the heap and stops past it: a script cannot make the guest hold
//! an unbounded document.

use std::cell::Cell;
use std::ffi::c_int;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use crate::json::{self, EncodeError, Received, Tree};
use crate::lua::{self, Raise, ffi, lua_State};
use crate::vm::{ErrorKind, Kind, Vm};

/// What a call that handles `bytes` of text costs in instructions.
pub fn cost(bytes: usize) -> u64 {
    1 + bytes as u64 / json::BYTES_PER_INSTRUCTION
}

/// What parsing JSON `text` into Lua values costs in instructions: one per
/// byte, since a dense document (`[1,2,3,...]`) builds a value every two
/// bytes (about 250 units of fuel per byte measured), and [`TABLE_COST`]
/// more for each `[` or `{` (strings included: counting them there
/// overcharges, never undercharges), since each makes a Lua table, which
/// costs as much as a constructor does in Lua code (about 1,500 units of
/// fuel with its share of the collector's work).
pub fn decode_cost(text: &[u8]) -> u64 {
    let tables = text.iter().filter(|&&b| b == b'[' || b == b'{').count() as u64;
    1 + text.len() as u64 + TABLE_COST * tables
}

/// The instructions charged for each table a decode builds, on top of its
/// bytes (see [`decode_cost`]).
pub const TABLE_COST: u64 = 4;

/// Installs the `json` table as a global and in `package.loaded`, so that
/// `require("json")` returns it.
///
/// # Safety
/// `l` is a live Vm-owned state in protected mode; `globals` and `loaded` are
/// the absolute indices of `_G` and `package.loaded`. Leaves the stack as it
/// found it.
pub unsafe fn install(l: *mut lua_State, globals: c_int, loaded: c_int) {
    // SAFETY: The caller's contract: a live state in protected mode, so the
    // pushes and raw sets may raise, with nothing owned on this frame. The new
    // table stays at its absolute index while the functions are stored into
    // it; one copy goes into `_G` and the table itself into `package.loaded`,
    // which pops it.
    unsafe {
        ffi::lua_createtable(l, 0, 2);
        let table = ffi::lua_gettop(l);
        ffi::lua_pushcfunction(l, encode_entry);
        lua::set_field(l, table, "encode");
        ffi::lua_pushcfunction(l, decode_entry);
        lua::set_field(l, table, "decode");
        ffi::lua_pushvalue(l, table);
        lua::set_field(l, globals, "json");
        lua::set_field(l, loaded, "json");
    }
}

/// Pushes `chunk:line: msg` (the caller's position) for an ordinary Lua
/// error, of kind `runtime` if the script lets it through.
///
/// # Safety
/// `l` is a live Vm-owned state inside a C function.
unsafe fn raise_runtime(l: *mut lua_State, msg: String) -> Raise {
    // SAFETY: The caller's contract is `raise_tagged`'s.
    unsafe { crate::limits::raise_tagged(l, ErrorKind::Runtime, msg) }
}

/// `prefix` followed by `msg`, in `msg`'s own allocation: the message a
/// caller moves into the Vm is then the only owned value it had.
fn prefixed(prefix: &str, mut msg: String) -> String {
    msg.insert_str(0, prefix);
    msg
}

/// `json.encode`; see [`encode_body`].
///
/// # Safety
/// Called by Lua only, as `json.encode`.
unsafe extern "C-unwind" fn encode_entry(l: *mut lua_State) -> c_int {
    // SAFETY: Lua calls `json.encode` as a C function on a live thread of a
    // Vm-owned state, inside a protected call. `encode_body` returns `Err`
    // only with the error pushed and nothing owned left on its frame, so
    // `lua_error` unwinds only frames without destructors.
    unsafe {
        match encode_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// `json.encode(value)`: the JSON text of `value` as a Lua string.
///
/// # Safety
/// As for [`encode_entry`], from it.
unsafe fn encode_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `l` is a live thread of a Vm-owned state running `json.encode`
    // (caller), so `Vm::from_state` is valid and Lua gave the function free
    // slots. `luaL_checkany` raises while this frame owns nothing, and
    // `lua_settop` only drops extra arguments. `json::encode` reads argument 1
    // without raising. Its text, or a message, then moves into the Vm
    // (`push_owned`, `raise_trip`, `raise_runtime`) before anything can raise;
    // `charge` runs with nothing owned left on the frame.
    unsafe {
        let vm = Vm::from_state(l);
        ffi::luaL_checkany(l, 1);
        ffi::lua_settop(l, 1);
        let limits = vm.limits();
        let strings = limits.max_string_bytes;
        let cap = json::max_json_bytes(&limits).min(strings);
        let text = json::encode(
            l,
            1,
            "value",
            &limits,
            usize::try_from(cap).unwrap_or(usize::MAX),
        );
        match text {
            Ok(text) => {
                // The work, which for nested values is more than the text.
                let work = text.len().max(json::last_encoded_bytes());
                vm.push_owned(l, text);
                if crate::limits::charge(l, cost(work)) {
                    return Err(Raise);
                }
                Ok(1)
            }
            Err(EncodeError::TooLong(at)) => {
                let (kind, limit) = if cap == strings {
                    (
                        ErrorKind::StringSize,
                        "the limit on strings (max-string-bytes)",
                    )
                } else {
                    (
                        ErrorKind::MemoryLimit,
                        "the Lua heap's limit (max-memory-bytes)",
                    )
                };
                let message = format!(
                    "{}json.encode: {at} makes the JSON text longer than {cap} bytes, {limit}",
                    lua::position(l, 1)
                );
                drop(at);
                crate::limits::raise_trip(l, vm, Kind::Error(kind), message);
                Err(Raise)
            }
            Err(EncodeError::Invalid(msg)) => {
                let raise = raise_runtime(l, prefixed("json.encode: ", msg));
                // The work done before the failure is paid for too; a trip
                // raises over the error.
                crate::limits::charge(l, cost(json::last_encoded_bytes()));
                Err(raise)
            }
        }
    }
}

/// `json.decode`; see [`decode_body`].
///
/// # Safety
/// Called by Lua only, as `json.decode`.
unsafe extern "C-unwind" fn decode_entry(l: *mut lua_State) -> c_int {
    // SAFETY: As in `encode_entry`: `decode_body` returns `Err` only with the
    // error pushed and nothing owned left on its frame.
    unsafe {
        match decode_body(l) {
            Ok(n) => n,
            Err(Raise) => ffi::lua_error(l),
        }
    }
}

/// `json.decode(text)`: the Lua value of one JSON text.
///
/// # Safety
/// As for [`decode_entry`], from it.
unsafe fn decode_body(l: *mut lua_State) -> Result<c_int, Raise> {
    // SAFETY: `l` is a live thread of a Vm-owned state running `json.decode`
    // (caller), so `Vm::from_state` is valid and Lua gave the function free
    // slots. `luaL_checklstring` raises (or converts a number in place) while
    // this frame owns nothing, and returns `len` bytes of the string at index
    // 1, which stays on the stack while `parse` reads them; `charge` runs
    // before anything is built. `parse` calls no Lua function. The document is
    // boxed in the Vm (`json::hold`) while it is pushed, since a push may raise
    // a memory error: only `json::release` or the next eval frees it, so
    // `reply.as_ref()` stays valid until then and is not used after. Messages
    // move into the Vm through `raise_trip` and `raise_runtime`;
    // `lua_settop` only drops values.
    unsafe {
        let vm = Vm::from_state(l);
        let mut len = 0usize;
        let p = ffi::luaL_checklstring(l, 1, &mut len);
        let text = std::slice::from_raw_parts(p.cast::<u8>(), len);
        if crate::limits::charge(l, decode_cost(text)) {
            return Err(Raise);
        }
        let limits = vm.limits();
        let room = limits
            .max_memory_bytes
            .saturating_sub(vm.used_bytes() as u64);
        let budget = usize::try_from(room).unwrap_or(usize::MAX);
        let value = match parse(text, budget, limits.max_value_depth) {
            Ok(value) => value,
            Err(ParseError::TooLarge) => {
                // Built in one expression: no owned temporary outlives it.
                let message = format!(
                    "{}not enough memory (json.decode: the document needs more than the {room} bytes left in the Lua heap, which max-memory-bytes limits to {} bytes)",
                    lua::position(l, 1),
                    limits.max_memory_bytes
                );
                crate::limits::raise_trip(l, vm, Kind::Error(ErrorKind::MemoryLimit), message);
                return Err(Raise);
            }
            Err(ParseError::Invalid(msg)) => {
                return Err(raise_runtime(l, prefixed("json.decode: ", msg)));
            }
        };
        let reply = json::hold(vm, Received::Json(value));
        ffi::lua_settop(l, 0);
        let pushed = json::push_received(l, reply.as_ref(), limits.max_value_depth);
        json::release(vm, reply);
        if let Err(msg) = pushed {
            ffi::lua_settop(l, 0);
            return Err(raise_runtime(l, prefixed("json.decode: ", msg)));
        }
        Ok(1)
    }
}

/// Why [`parse`] refused a text.
#[derive(Debug, PartialEq)]
pub enum ParseError {
    /// The parsed document would take more than the budget.
    TooLarge,
    /// Not one JSON value: what was wrong and where.
    Invalid(String),
}

/// Bytes one element of an array, or one member of an object beyond its
/// key's text, takes in the parsed document.
const ELEMENT: usize = size_of::<Tree>();
const MEMBER: usize = size_of::<(String, Tree)>();

/// The estimated bytes the parsed document may still take.
struct Budget {
    left: Cell<usize>,
    exceeded: Cell<bool>,
}

impl Budget {
    fn take<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        match self.left.get().checked_sub(bytes) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.exceeded.set(true);
                Err(E::custom("the document is too large"))
            }
        }
    }
}

/// Builds a [`Tree`], charging each allocation to the budget before it is
/// made (a key or a string just after: at most one string past the budget,
/// and no longer than the text).
#[derive(Clone, Copy)]
struct Node<'a>(&'a Budget);

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Tree;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Tree, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Tree, E> {
        Ok(Tree::Int(i))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Tree, E> {
        // Past `i64`, a float, as in Lua's own reading of such a numeral.
        Ok(i64::try_from(u).map_or(Tree::Float(u as f64), Tree::Int))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Tree, E> {
        // serde_json itself refuses numbers beyond the range of a double.
        if f.is_finite() {
            Ok(Tree::Float(f))
        } else {
            Err(E::custom("number out of range"))
        }
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Tree, E> {
        self.0.take(s.len())?;
        Ok(Tree::Str(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Tree, E> {
        self.0.take(s.capacity())?;
        Ok(Tree::Str(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items: Vec<Tree> = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            if items.len() == items.capacity() {
                // Grow by hand, charged first, as a `Vec` would.
                let more = items.capacity().max(4);
                self.0.take(more * ELEMENT)?;
                items.reserve_exact(more);
            }
            items.push(item);
        }
        Ok(Tree::Arr(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut members: Vec<(String, Tree)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            self.0.take(key.capacity())?;
            if members.len() == members.capacity() {
                let more = members.capacity().max(4);
                self.0.take(more * MEMBER)?;
                members.reserve_exact(more);
            }
            let value = map.next_value_seed(self)?;
            members.push((key, value));
        }
        Ok(Tree::Obj(members))
    }
}

/// Parses a JSON text into a [`Tree`] with no budget: the reference that
/// `jsontext`'s tests compare its pushes against.
#[cfg(test)]
pub fn parse_unbounded(text: &[u8]) -> Result<Tree, serde_json::Error> {
    let budget = Budget {
        left: Cell::new(usize::MAX),
        exceeded: Cell::new(false),
    };
    let mut de = serde_json::Deserializer::from_slice(text);
    let tree = Node(&budget).deserialize(&mut de)?;
    de.end()?;
    Ok(tree)
}

/// Parses one JSON text (RFC 8259, UTF-8, no byte-order mark, nothing after
/// the value but whitespace) into a [`Tree`], refusing one whose estimated
/// size passes `budget` bytes. Messages say what was wrong and where (line
/// and column); nesting past serde_json's own limit of 128 levels is
/// reported against `max_depth` (`max-value-depth`), which is lower.
pub fn parse(text: &[u8], budget: usize, max_depth: u32) -> Result<Tree, ParseError> {
    if text.starts_with(b"\xEF\xBB\xBF") {
        return Err(ParseError::Invalid(
            "invalid JSON (the text starts with a byte-order mark, U+FEFF, at line 1 column 1; remove it)".to_owned(),
        ));
    }
    let budget = Budget {
        left: Cell::new(budget),
        exceeded: Cell::new(false),
    };
    let mut de = serde_json::Deserializer::from_slice(text);
    let parsed = Node(&budget)
        .deserialize(&mut de)
        .and_then(|value| de.end().map(|()| value));
    parsed.map_err(|e| {
        if budget.exceeded.get() {
            return ParseError::TooLarge;
        }
        let what = e.to_string();
        // serde_json names a lone surrogate by what it read next.
        if what.starts_with("lone leading surrogate") || what.starts_with("unexpected end of hex escape") {
            ParseError::Invalid(format!(
                "invalid JSON (lone UTF-16 surrogate in a \\u escape at line {} column {}; a high surrogate \\uD800-\\uDBFF must be followed by a low one \\uDC00-\\uDFFF)",
                e.line(),
                e.column()
            ))
        } else if what.starts_with("recursion limit exceeded") {
            ParseError::Invalid(format!(
                "value nests deeper than {max_depth} levels (max-value-depth) at line {} column {}",
                e.line(),
                e.column()
            ))
        } else {
            ParseError::Invalid(format!("invalid JSON ({what})"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{ParseError, parse};
    use crate::json::Tree;
    use serde_json::{Value, json};

    /// The tree as serde_json's `Value`, for comparisons; a repeated key
    /// keeps its last value, as pushing the tree does.
    fn value(tree: Tree) -> Value {
        match tree {
            Tree::Null => Value::Null,
            Tree::Bool(b) => Value::Bool(b),
            Tree::Int(i) => Value::from(i),
            Tree::Float(f) => Value::from(f),
            Tree::Str(s) => Value::String(s),
            Tree::Arr(items) => Value::Array(items.into_iter().map(value).collect()),
            Tree::Obj(members) => {
                Value::Object(members.into_iter().map(|(k, v)| (k, value(v))).collect())
            }
        }
    }

    fn ok(text: &str) -> Value {
        match parse(text.as_bytes(), 1 << 20, 64) {
            Ok(v) => value(v),
            Err(e) => panic!("{text:?} should parse, got {e:?}"),
        }
    }

    fn invalid(text: &[u8]) -> String {
        match parse(text, 1 << 20, 64) {
            Err(ParseError::Invalid(msg)) => msg,
            other => panic!("{text:?} should be invalid, got {other:?}"),
        }
    }

    #[test]
    fn numbers_keep_integers_and_floats_apart() {
        let v = ok("[1, -7, 1.0, 1E+2, -0, 9223372036854775807, 9223372036854775808]");
        assert!(v[0].is_i64() && v[1].is_i64());
        assert!(v[2].is_f64() && v[3].is_f64());
        assert_eq!(v[3], json!(100.0));
        assert!(
            v[4].as_f64()
                .is_some_and(|f| f == 0.0 && f.is_sign_negative())
        );
        assert!(v[5].is_i64());
        // Past i64 (as u64): not an i64, so it becomes a float in Lua.
        assert!(v[6].as_i64().is_none());
    }

    #[test]
    fn number_forms_json_does_not_have_are_refused_with_a_position() {
        assert_eq!(
            invalid(b"01"),
            "invalid JSON (invalid number at line 1 column 2)"
        );
        assert_eq!(
            invalid(b".5"),
            "invalid JSON (expected value at line 1 column 1)"
        );
        assert_eq!(
            invalid(b"+1"),
            "invalid JSON (expected value at line 1 column 1)"
        );
        assert_eq!(
            invalid(b"0x10"),
            "invalid JSON (trailing characters at line 1 column 2)"
        );
        assert_eq!(
            invalid(b"1e400"),
            "invalid JSON (number out of range at line 1 column 5)"
        );
        assert!(invalid(b"NaN").starts_with("invalid JSON (expected value"));
    }

    #[test]
    fn duplicate_keys_keep_the_last_value() {
        assert_eq!(ok(r#"{"a": 1, "a": 2}"#), json!({"a": 2}));
    }

    #[test]
    fn surrogates_must_pair() {
        assert_eq!(ok(r#""\ud83c\udf19""#), json!("🌙"));
        let lone = "invalid JSON (lone UTF-16 surrogate in a \\u escape at line 1 column";
        assert!(invalid(br#""\ud800""#).starts_with(lone));
        assert!(invalid(br#""\udc00""#).starts_with(lone));
        assert!(invalid(br#""\ud800\u0041""#).starts_with(lone));
        assert_eq!(
            invalid(b"\"\x01\""),
            "invalid JSON (control character (\\u0000-\\u001F) found while parsing a string at line 1 column 2)"
        );
        assert_eq!(
            invalid(b"\"\xff\""),
            "invalid JSON (invalid unicode code point at line 1 column 2)"
        );
        assert_eq!(
            invalid(br#""\x""#),
            "invalid JSON (invalid escape at line 1 column 3)"
        );
    }

    #[test]
    fn text_around_the_value() {
        assert_eq!(
            invalid(b""),
            "invalid JSON (EOF while parsing a value at line 1 column 0)"
        );
        assert_eq!(
            invalid(b"[1] x"),
            "invalid JSON (trailing characters at line 1 column 5)"
        );
        assert_eq!(ok(" \n\t[1]\r\n "), json!([1]));
        assert!(invalid(b"\xEF\xBB\xBF[1]").contains("byte-order mark"));
    }

    #[test]
    fn nesting_past_the_parser_limit_names_max_value_depth() {
        let text = "[".repeat(200);
        assert_eq!(
            invalid(text.as_bytes()),
            "value nests deeper than 64 levels (max-value-depth) at line 1 column 128"
        );
    }

    #[test]
    fn the_budget_stops_a_large_document() {
        let text = format!("[{}1]", "[],".repeat(10_000));
        assert_eq!(
            parse(text.as_bytes(), 10_000, 64),
            Err(ParseError::TooLarge)
        );
        assert!(parse(text.as_bytes(), 10 << 20, 64).is_ok());
        let objects = format!("[{}1]", r#"{"k":1},"#.repeat(1_000));
        assert_eq!(
            parse(objects.as_bytes(), 100_000, 64),
            Err(ParseError::TooLarge)
        );
        let strings = format!(r#"["{}"]"#, "x".repeat(5_000));
        assert_eq!(
            parse(strings.as_bytes(), 4_000, 64),
            Err(ParseError::TooLarge)
        );
    }
}
