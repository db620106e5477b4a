//! JSON text from the host (a capability's reply, an input) pushed as Lua
//! values straight from the text, with no parsed tree in between.
//!
//! [`Checked::new`] runs serde_json over the text once, allocating only a
//! list of container sizes (and serde_json's scratch for an escaped string):
//! it refuses what parsing the text refuses, with the same messages, and
//! records how many elements or members each array and object has (in the
//! order they open), so that the push can size each Lua table once.
//! [`push`] then walks the checked text, reading numbers and strings by the
//! boundary's rules (those of `json::push`: null is nil, integers that fit
//! stay integers, `-0` is a float, a repeated key keeps its last value).
//!
//! A push may raise a Lua memory error. Its frames hold only borrows of the
//! checked text, which its owner (the Vm, see `json::hold`) keeps, and
//! a string with escapes is decoded outside the Lua heap (as the tree held
//! it, so it is charged once, as the Lua string) and handed to the Vm to
//! push (`Vm::push_owned`), so an error that unwinds past them leaks
//! nothing.

use std::cell::RefCell;
use std::ffi::c_int;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

use crate::lua::{self, ffi, lua_State};
use crate::vm::{Vm, to_c_int};

/// Why a push stops when the Lua stack cannot grow for the next level.
pub const NO_STACK: &str = "value nests too deeply for the Lua stack";

/// Refuses a table (here and in `json::push`) at nesting level `depth`
/// past `max_depth` (`max-value-depth`).
pub fn enter(depth: u32, max_depth: u32) -> Result<(), String> {
    if depth >= max_depth {
        Err(format!(
            "value nests deeper than {max_depth} levels (max-value-depth)"
        ))
    } else {
        Ok(())
    }
}

/// A JSON text that serde_json accepts, with the size of each container.
pub struct Checked {
    text: String,
    /// Elements (arrays) or members (objects), in the order containers open.
    sizes: Vec<u32>,
}

impl Checked {
    /// Checks one JSON text (nothing after the value but whitespace) and
    /// counts its containers' elements.
    pub fn new(text: String) -> Result<Checked, serde_json::Error> {
        let sizes = RefCell::new(Vec::new());
        let mut de = serde_json::Deserializer::from_slice(text.as_bytes());
        Sizer(&sizes).deserialize(&mut de)?;
        de.end()?;
        Ok(Checked {
            text,
            sizes: sizes.into_inner(),
        })
    }
}

/// Visits every value, recording each container's size.
#[derive(Clone, Copy)]
struct Sizer<'a>(&'a RefCell<Vec<u32>>);

impl Sizer<'_> {
    /// Reserves the next container's slot.
    fn open(self) -> usize {
        let mut sizes = self.0.borrow_mut();
        sizes.push(0);
        sizes.len() - 1
    }

    fn close(self, at: usize, count: usize) {
        if let Some(slot) = self.0.borrow_mut().get_mut(at) {
            *slot = u32::try_from(count).unwrap_or(u32::MAX);
        }
    }
}

impl<'de> DeserializeSeed<'de> for Sizer<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Sizer<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<(), E> {
        // serde_json itself refuses numbers beyond the range of a double.
        if f.is_finite() {
            Ok(())
        } else {
            Err(E::custom("number out of range"))
        }
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let at = self.open();
        let mut count = 0usize;
        while seq.next_element_seed(self)?.is_some() {
            count += 1;
        }
        self.close(at, count);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let at = self.open();
        let mut count = 0usize;
        // Keys go through the same visitor, so their escapes are checked.
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
            count += 1;
        }
        self.close(at, count);
        Ok(())
    }
}

/// Pushes the Lua form of a checked text. Nesting past `max_depth` is
/// refused with a message; memory errors are raised as Lua errors.
///
/// # Safety
/// `l` is a live thread of a Vm's state inside a protected call, and
/// `checked` outlives any error the push raises (its owner holds it, not
/// this call's frames).
pub unsafe fn push(l: *mut lua_State, checked: &Checked, max_depth: u32) -> Result<(), String> {
    // SAFETY: as this function's contract.
    unsafe { push_with(l, checked, max_depth, push_via_vm) }
}

/// Pushes bytes the caller gives up as a Lua string, leaving nothing owned
/// on the caller's frames if the push raises.
type PushOwned = unsafe fn(*mut lua_State, Vec<u8>);

/// [`PushOwned`] through the Vm's slot for owned bytes.
///
/// # Safety
/// `l` is a live thread of a Vm's state with a free slot, in protected mode.
unsafe fn push_via_vm(l: *mut lua_State, bytes: Vec<u8>) {
    // SAFETY: the caller's contract is `Vm::from_state`'s and `push_owned`'s.
    unsafe { Vm::from_state(l).push_owned(l, bytes) }
}

/// [`push`], with strings that had escapes pushed by `owned`.
///
/// # Safety
/// As for [`push`], with `owned`'s contract met wherever a value is pushed.
unsafe fn push_with(
    l: *mut lua_State,
    checked: &Checked,
    max_depth: u32,
    owned: PushOwned,
) -> Result<(), String> {
    let mut walk = Walk {
        text: checked.text.as_bytes(),
        pos: 0,
        sizes: &checked.sizes,
        next: 0,
        max_depth,
        owned,
    };
    // SAFETY: as this function's contract; `Walk` holds only borrows.
    unsafe { walk.value(l, 0) }
}

/// A position in a checked text; owns nothing.
struct Walk<'a> {
    text: &'a [u8],
    pos: usize,
    sizes: &'a [u32],
    /// The next container's entry in `sizes`.
    next: usize,
    max_depth: u32,
    owned: PushOwned,
}

/// What a push reports if the text is not what [`Checked`] accepted, which
/// cannot happen for a text it checked.
const MALFORMED: &str = "is not valid JSON";

impl Walk<'_> {
    fn peek(&self) -> u8 {
        self.text.get(self.pos).copied().unwrap_or(0)
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The next container's size, as a table-size hint.
    fn size(&mut self) -> c_int {
        let n = self.sizes.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        to_c_int(n as usize)
    }

    /// Pushes the value at the current position, nested `depth` levels.
    ///
    /// # Safety
    /// As for [`push`].
    unsafe fn value(&mut self, l: *mut lua_State, depth: u32) -> Result<(), String> {
        // SAFETY: `lua_checkstack` makes room for a table, a key and a value
        // before anything is pushed, and reports failure instead of raising.
        // `table` is the absolute index of the table just created, so the raw
        // sets store into it without metamethods. A push may raise a memory
        // error inside the caller's protected call; these frames own nothing.
        unsafe {
            if ffi::lua_checkstack(l, 3) == 0 {
                return Err(NO_STACK.to_owned());
            }
            self.skip_space();
            match self.peek() {
                b'n' => {
                    self.pos += 4;
                    ffi::lua_pushnil(l);
                }
                b't' => {
                    self.pos += 4;
                    ffi::lua_pushboolean(l, 1);
                }
                b'f' => {
                    self.pos += 5;
                    ffi::lua_pushboolean(l, 0);
                }
                b'"' => self.string(l)?,
                b'[' => {
                    enter(depth, self.max_depth)?;
                    self.pos += 1;
                    ffi::lua_createtable(l, self.size(), 0);
                    let table = ffi::lua_gettop(l);
                    let mut index: i64 = 0;
                    loop {
                        self.skip_space();
                        match self.peek() {
                            b']' => {
                                self.pos += 1;
                                break;
                            }
                            b',' => self.pos += 1,
                            0 => return Err(MALFORMED.to_owned()),
                            b'n' => {
                                // A null element is a hole.
                                self.pos += 4;
                                index += 1;
                            }
                            _ => {
                                self.value(l, depth + 1)?;
                                index += 1;
                                ffi::lua_rawseti(l, table, index);
                            }
                        }
                    }
                }
                b'{' => {
                    enter(depth, self.max_depth)?;
                    self.pos += 1;
                    ffi::lua_createtable(l, 0, self.size());
                    let table = ffi::lua_gettop(l);
                    loop {
                        self.skip_space();
                        match self.peek() {
                            b'}' => {
                                self.pos += 1;
                                break;
                            }
                            b',' => self.pos += 1,
                            b'"' => {
                                self.string(l)?;
                                self.skip_space();
                                if self.peek() != b':' {
                                    return Err(MALFORMED.to_owned());
                                }
                                self.pos += 1;
                                // A null member is set to nil, which also
                                // drops an earlier member of the same key.
                                self.value(l, depth + 1)?;
                                ffi::lua_rawset(l, table);
                            }
                            _ => return Err(MALFORMED.to_owned()),
                        }
                    }
                }
                b'-' | b'0'..=b'9' => self.number(l)?,
                _ => return Err(MALFORMED.to_owned()),
            }
            Ok(())
        }
    }

    /// Pushes the number at the current position: an integer if it has no
    /// fraction or exponent and fits (`-0` excepted), else a float.
    ///
    /// # Safety
    /// `l` is a live state with a free slot.
    unsafe fn number(&mut self, l: *mut lua_State) -> Result<(), String> {
        let start = self.pos;
        let mut integral = true;
        while let Some(&b) = self.text.get(self.pos) {
            match b {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => integral = false,
                _ => break,
            }
            self.pos += 1;
        }
        let token = std::str::from_utf8(&self.text[start..self.pos]).map_err(|_| MALFORMED)?;
        // SAFETY: the caller's contract; pushing a number allocates nothing.
        unsafe {
            if integral {
                match token.parse::<i64>() {
                    Ok(0) if token.starts_with('-') => ffi::lua_pushnumber(l, -0.0),
                    Ok(i) => ffi::lua_pushinteger(l, i),
                    // Past i64: a float, as in Lua's own reading of the numeral.
                    Err(_) => ffi::lua_pushnumber(l, float(token)?),
                }
            } else {
                ffi::lua_pushnumber(l, float(token)?);
            }
        }
        Ok(())
    }

    /// Pushes the string at the current position (its opening quote).
    ///
    /// # Safety
    /// `l` is a live state with a free slot, inside a protected call.
    unsafe fn string(&mut self, l: *mut lua_State) -> Result<(), String> {
        self.pos += 1;
        let rest = self.text.get(self.pos..).unwrap_or_default();
        match rest.iter().position(|&b| b == b'"' || b == b'\\') {
            Some(end) if rest[end] == b'"' => {
                // SAFETY: the caller's contract.
                unsafe { lua::push_bytes(l, &rest[..end]) };
                self.pos += end + 1;
                Ok(())
            }
            Some(_) => {
                // SAFETY: the caller's contract.
                unsafe { self.escaped(l) }
            }
            None => Err(MALFORMED.to_owned()),
        }
    }

    /// Pushes a string with escapes: decoded into bytes outside the Lua
    /// heap, then given up to [`Walk::owned`] to push.
    ///
    /// # Safety
    /// As for [`Walk::string`].
    unsafe fn escaped(&mut self, l: *mut lua_State) -> Result<(), String> {
        let mut bytes = Vec::new();
        loop {
            let rest = self.text.get(self.pos..).unwrap_or_default();
            let run = rest
                .iter()
                .position(|&c| c == b'"' || c == b'\\')
                .ok_or(MALFORMED)?;
            bytes.extend_from_slice(&rest[..run]);
            self.pos += run + 1;
            if rest[run] == b'"' {
                break;
            }
            let escape = self.peek();
            self.pos += 1;
            let c = match escape {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => self.code_point()?,
                _ => return Err(MALFORMED.to_owned()),
            };
            let mut utf8 = [0u8; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        }
        // SAFETY: the caller's contract is `owned`'s; the bytes move to it,
        // so this frame owns nothing while the push may raise.
        unsafe { (self.owned)(l, bytes) };
        Ok(())
    }

    /// The character of a `\u` escape (after its `\u`), joining a
    /// surrogate pair.
    fn code_point(&mut self) -> Result<char, &'static str> {
        let high = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&high) {
            if self.text.get(self.pos..self.pos + 2) != Some(b"\\u") {
                return Err(MALFORMED);
            }
            self.pos += 2;
            let low = self.hex4()?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err(MALFORMED);
            }
            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        } else {
            high
        };
        char::from_u32(code).ok_or(MALFORMED)
    }

    fn hex4(&mut self) -> Result<u32, &'static str> {
        let digits = self.text.get(self.pos..self.pos + 4).ok_or(MALFORMED)?;
        let digits = std::str::from_utf8(digits).map_err(|_| MALFORMED)?;
        let value = u32::from_str_radix(digits, 16).map_err(|_| MALFORMED)?;
        self.pos += 4;
        Ok(value)
    }
}

/// A JSON number as the nearest double (serde_json's `float_roundtrip`
/// reading, which Rust's own parser also gives).
fn float(token: &str) -> Result<f64, &'static str> {
    token
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .ok_or(MALFORMED)
}

#[cfg(test)]
mod tests {
    use std::ffi::CString;

    use super::{Checked, push_with};
    use crate::json;
    use crate::lua::{ffi, lua_State};

    /// A Lua function `same(a, b)`: deep equality that tells integers from
    /// floats and `0.0` from `-0.0`.
    const SAME: &str = r#"
        local function same(a, b)
          if type(a) ~= type(b) then return false end
          if type(a) == "number" then
            return math.type(a) == math.type(b) and a == b and 1 / a == 1 / b
          end
          if type(a) ~= "table" then return a == b end
          for k, v in pairs(a) do
            if not same(v, b[k]) then return false end
          end
          for k in pairs(b) do
            if a[k] == nil then return false end
          end
          return true
        end
        return same
    "#;

    struct State(*mut lua_State);

    /// Pushes owned bytes directly: these tests' states have room, and
    /// nothing in them raises.
    unsafe fn push_direct(l: *mut lua_State, bytes: Vec<u8>) {
        // SAFETY: `l` is a live state with a free slot (the walker's check).
        unsafe { crate::lua::push_bytes(l, &bytes) }
    }

    impl State {
        fn new() -> State {
            // SAFETY: a new state, used by this thread only; the chunk is
            // valid Lua and leaves `same` at index 1.
            unsafe {
                let l = ffi::luaL_newstate();
                assert!(!l.is_null());
                ffi::luaL_openlibs(l);
                let chunk = CString::new(SAME).unwrap();
                assert_eq!(ffi::luaL_loadstring(l, chunk.as_ptr()), 0);
                assert_eq!(ffi::lua_pcall(l, 0, 1, 0), 0);
                State(l)
            }
        }

        /// Pushes `text` both ways (through a parsed tree, and straight
        /// from the text) and says whether the two Lua values are the same.
        fn both_ways(&self, text: &str, max_depth: u32) -> Result<bool, (String, String)> {
            let l = self.0;
            let tree = crate::jsonlib::parse_unbounded(text.as_bytes()).map_err(|e| {
                let checked = Checked::new(text.to_owned()).err().map(|e| e.to_string());
                (e.to_string(), checked.unwrap_or_default())
            })?;
            let checked = Checked::new(text.to_owned()).expect("serde_json accepted it");
            // SAFETY: `l` is live with room checked by the pushes; the
            // values are compared by `same` and popped.
            unsafe {
                ffi::lua_settop(l, 1);
                ffi::lua_pushvalue(l, 1);
                let a = json::push(l, &tree, max_depth);
                let b = push_with(l, &checked, max_depth, push_direct);
                match (a, b) {
                    (Ok(()), Ok(())) => {
                        assert_eq!(ffi::lua_pcall(l, 2, 1, 0), 0);
                        Ok(ffi::lua_toboolean(l, -1) != 0)
                    }
                    (Err(a), Err(b)) => Err((a, b)),
                    (a, b) => panic!("{text}: the tree gave {a:?}, the text {b:?}"),
                }
            }
        }
    }

    impl Drop for State {
        fn drop(&mut self) {
            // SAFETY: the state is closed once, by its only owner.
            unsafe { ffi::lua_close(self.0) }
        }
    }

    fn same(state: &State, text: &str) {
        assert_eq!(state.both_ways(text, 64), Ok(true), "{text}");
    }

    #[test]
    fn pushes_what_the_tree_pushes() {
        let state = State::new();
        for text in [
            "null",
            "true",
            " false ",
            "0",
            "-0",
            "-0.0",
            "17",
            "-17",
            "1.5",
            "1E+2",
            "2.5e-3",
            "1e-400",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "123456789012345678901234567890",
            "0.1",
            "\"\"",
            "\"plain\"",
            r#""tab\tquote\"slash\/back\\nl\nff\fbs\bcr\r""#,
            r#""\u00e9\u4e2d\ud83d\ude00\u0000end""#,
            "\"caf\u{e9} \u{1F600}\"",
            "[]",
            "{}",
            "[1, null, 3, null]",
            "[null, null]",
            r#"{"a": 1, "b": null, "a": 2}"#,
            r#"{"a": 1, "a": null}"#,
            r#"{"k\u00e9y": {"x": [true, false, {"y": []}]}, "": ""}"#,
            r#"{"name": "Ada", "visits": [1, 2]}"#,
            " \t\n\r[ 1 , [ 2 , [ 3 ] ] , { \"a\" : [ ] } ] \n",
        ] {
            same(&state, text);
        }
    }

    #[test]
    fn long_strings_with_escapes_push_whole() {
        let state = State::new();
        let long = "x\\n\\u00e9".repeat(2000);
        same(&state, &format!("\"{long}\""));
        same(&state, &format!("{{\"{long}\": [\"{long}\", 1]}}"));
    }

    #[test]
    fn refuses_what_serde_json_refuses_with_its_messages() {
        for text in [
            "",
            "nul",
            "[1,]",
            "{\"a\" 1}",
            "01",
            "1.",
            "1e400",
            "-",
            "[1] x",
            r#""\ud800""#,
            r#""\ud800\u0041""#,
            r#"{"\udc00": 1}"#,
            "\"a\u{1}b\"",
            r#""\x""#,
        ] {
            let tree = crate::jsonlib::parse_unbounded(text.as_bytes()).map(drop);
            let checked = Checked::new(text.to_owned()).map(drop);
            match (tree, checked) {
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text:?}"),
                (a, b) => panic!("{text:?}: the tree gave {a:?}, the check {b:?}"),
            }
        }
    }

    #[test]
    fn depth_past_the_limit_is_refused_the_same_way() {
        let state = State::new();
        let deep = format!("{}1{}", "[".repeat(5), "]".repeat(5));
        assert_eq!(state.both_ways(&deep, 5), Ok(true));
        let (a, b) = state.both_ways(&deep, 4).expect_err("too deep");
        assert_eq!(a, b);
        assert!(a.contains("max-value-depth"), "{a}");
        let object = format!("{}1{}", "{\"k\":".repeat(5), "}".repeat(5));
        let (a, b) = state.both_ways(&object, 3).expect_err("too deep");
        assert_eq!(a, b);
    }

    /// A small deterministic generator of JSON values: nesting, escapes,
    /// every kind of number, repeated keys and nulls.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }

        fn string(&mut self) -> String {
            const PIECES: [&str; 12] = [
                "a",
                "key",
                "\\n",
                "\\\"",
                "\\\\",
                "\\u00e9",
                "\\ud83d\\ude00",
                "é",
                "\\/",
                "\\t",
                "x y",
                "",
            ];
            let mut s = String::from("\"");
            for _ in 0..self.next(4) {
                s.push_str(PIECES[self.next(PIECES.len() as u64) as usize]);
            }
            s.push('"');
            s
        }

        fn value(&mut self, depth: u32) -> String {
            let pick = if depth > 4 {
                self.next(6)
            } else {
                self.next(8)
            };
            match pick {
                0 => "null".to_owned(),
                1 => ["true", "false"][self.next(2) as usize].to_owned(),
                2 => {
                    const NUMBERS: [&str; 10] = [
                        "0",
                        "-0",
                        "42",
                        "-7",
                        "3.25",
                        "-1e-3",
                        "6.02E23",
                        "9223372036854775808",
                        "-9223372036854775808",
                        "1e-320",
                    ];
                    NUMBERS[self.next(NUMBERS.len() as u64) as usize].to_owned()
                }
                3 | 4 => self.string(),
                5 => format!("{}", self.next(1 << 40)),
                6 => {
                    let items: Vec<String> =
                        (0..self.next(6)).map(|_| self.value(depth + 1)).collect();
                    format!("[{}]", items.join(", "))
                }
                _ => {
                    let members: Vec<String> = (0..self.next(6))
                        .map(|_| {
                            let key = if self.next(3) == 0 {
                                "\"dup\"".to_owned()
                            } else {
                                self.string()
                            };
                            format!("{key}: {}", self.value(depth + 1))
                        })
                        .collect();
                    format!("{{{}}}", members.join(","))
                }
            }
        }
    }

    #[test]
    fn generated_values_push_the_same_both_ways() {
        let state = State::new();
        let mut generate = Gen(7);
        for _ in 0..3000 {
            let text = generate.value(0);
            same(&state, &text);
        }
    }

    #[test]
    fn sizes_follow_containers_in_the_order_they_open() {
        let checked = Checked::new(r#"[1, {"a": [], "b": [2, 3]}, []]"#.to_owned()).unwrap();
        assert_eq!(checked.sizes, [3, 2, 0, 2, 0]);
    }
}
