//! The Lua ↔ boundary conversions: Lua values to the WIT `value` variant
//! (scalars typed, tables as JSON text) and back. The rules are the
//! contract's (see `value` in wit/moonbox.wit and docs/wit.md).
//!
//! Encoding reads the Lua stack without allocating Lua memory (only
//! `lua_next`, raw gets and reads of values that already are strings), so it
//! cannot raise a Lua error and may run outside a protected call. Decoding
//! pushes new values and may raise a memory error, so it runs inside one.

use std::cell::RefCell;
use std::ffi::c_int;
use std::fmt::Write as _;
use std::ptr::NonNull;

use crate::bindings::Value as WitValue;
use crate::jsontext::{Checked, NO_STACK, enter};
use crate::lua::{self, ffi, lua_State};
use crate::vm::{Extension, Limits, Vm};

/// One step of the path from a root value to the value being converted.
enum Segment {
    Index(i64),
    Key(String),
}

/// Converts Lua values to JSON text, tracking the path for error messages.
pub struct Encoder {
    out: String,
    root: String,
    path: Vec<Segment>,
    /// Tables on the current path (their addresses and path lengths), for
    /// cycle detection.
    open: Vec<(usize, usize)>,
    max_depth: u32,
    /// The most bytes of JSON text to produce: shared subtables can make a
    /// small Lua value expand exponentially.
    max_bytes: usize,
    /// Bytes of text held outside `out` while an object's members are
    /// encoded one by one, so the cap counts everything produced.
    elsewhere: usize,
    /// The path of the value at which the text passed `max_bytes`, once it
    /// has (so that `json.encode` can report the limit it stands for).
    too_long_at: Option<String>,
    /// The most text produced at any one time, failed members included:
    /// the work done, which callers charge for.
    high: usize,
    /// The input walked, in the same bytes: [`KEY_WORK`] per table entry
    /// visited, and the bytes of every string checked. A conversion that
    /// fails late has produced little text but may have walked much.
    walked: usize,
    /// The most work (see [`Encoder::work`]) to do before giving up: what
    /// the instruction budget has left, for conversions that are charged
    /// (see [`work_left`]), so that a charged conversion stops where the
    /// budget would.
    max_work: usize,
}

/// Bytes of work (JSON text produced, or input walked: see
/// [`last_encoded_bytes`]) per instruction charged against
/// `max-instructions`, so that a loop of calls cannot do unbounded work in
/// a few instructions, and the instruction limit, not fuel, stops it. With
/// the encoder's walk counted as it is, the densest values measured (nested
/// arrays of small integers, nested objects) cost 130 to 300 units of fuel
/// per charged instruction, within the 500 the host derives per
/// instruction. Each call costs at least one; a failed encoding pays for
/// the work it did before it failed.
pub const BYTES_PER_INSTRUCTION: u64 = 2;

/// What visiting one table entry counts in [`Encoder::walked`], in bytes of
/// work: an entry is walked twice (its shape, then its value) and its value
/// converted, about 1,000 units of fuel for a small integer in an array,
/// which this charges at 4 instructions (see
/// [`BYTES_PER_INSTRUCTION`]).
const KEY_WORK: usize = 8;

impl Encoder {
    fn new(root: String, limits: &Limits) -> Self {
        Encoder {
            out: String::new(),
            root,
            path: Vec::new(),
            open: Vec::new(),
            max_depth: limits.max_value_depth,
            max_bytes: usize::try_from(max_json_bytes(limits)).unwrap_or(usize::MAX),
            elsewhere: 0,
            high: 0,
            walked: 0,
            max_work: usize::MAX,
            too_long_at: None,
        }
    }

    /// The work done so far, in bytes: the most text held at once or the
    /// input walked, whichever is more.
    fn work(&self) -> usize {
        self.high
            .max(self.out.len().saturating_add(self.elsewhere))
            .max(self.walked)
    }

    /// Whether the work done has passed [`Encoder::max_work`]; the caller's
    /// charge for it then trips the instruction limit.
    fn spent(&self) -> bool {
        self.work() > self.max_work
    }

    /// Counts `bytes` more of input walked, or, when that would pass
    /// [`Encoder::max_work`], counts the work as just past it (so the charge
    /// trips the limit without counting work not done) and returns false.
    fn walk(&mut self, bytes: usize) -> bool {
        match self.walked.checked_add(bytes) {
            Some(walked) if walked <= self.max_work => {
                self.walked = walked;
                true
            }
            _ => {
                self.walked = self.max_work.saturating_add(1);
                false
            }
        }
    }

    /// The error that stops a conversion whose work passed its budget.
    fn out_of_work(&self) -> String {
        format!(
            "{} needs more work than the instruction budget has left (max-instructions)",
            self.here()
        )
    }

    fn too_long(&mut self) -> String {
        self.too_long_at = Some(self.here());
        format!(
            "{} makes the JSON text longer than {} bytes; return less data",
            self.here(),
            self.max_bytes
        )
    }

    fn describe(&self, len: usize) -> String {
        let mut s = self.root.clone();
        for seg in &self.path[..len] {
            match seg {
                Segment::Index(i) => {
                    let _ = write!(s, "[{i}]");
                }
                Segment::Key(k) if is_identifier(k) => {
                    let _ = write!(s, ".{k}");
                }
                Segment::Key(k) => {
                    let _ = write!(s, "[{k:?}]");
                }
            }
        }
        s
    }

    fn here(&self) -> String {
        self.describe(self.path.len())
    }

    /// Encodes the value at absolute index `idx`.
    ///
    /// # Safety
    /// `l` is a live state and `idx` a valid absolute index. Never raises:
    /// the value is only read, and the stack only grows through
    /// `lua_checkstack`.
    unsafe fn value(&mut self, l: *mut lua_State, idx: c_int) -> Result<(), String> {
        self.high = self.high.max(self.elsewhere + self.out.len());
        if self.elsewhere + self.out.len() > self.max_bytes {
            return Err(self.too_long());
        }
        if self.spent() {
            return Err(self.out_of_work());
        }
        // SAFETY: `idx` is a valid absolute index on the live state `l`
        // (caller). The calls here only read the value, and none converts it in
        // place: a number is read with `lua_tointegerx` or `lua_tonumberx`, and
        // `string_bytes` reads only a value that already is a string, whose
        // bytes stay on the stack while `text` is used. Tables go to `table`,
        // which leaves the stack as it found it, so nothing here allocates Lua
        // memory or raises.
        unsafe {
            match ffi::lua_type(l, idx) {
                ffi::LUA_TNIL => self.out.push_str("null"),
                ffi::LUA_TBOOLEAN => self.out.push_str(if ffi::lua_toboolean(l, idx) != 0 {
                    "true"
                } else {
                    "false"
                }),
                ffi::LUA_TNUMBER => {
                    if ffi::lua_isinteger(l, idx) != 0 {
                        let _ = write!(
                            self.out,
                            "{}",
                            ffi::lua_tointegerx(l, idx, std::ptr::null_mut())
                        );
                    } else {
                        let f = ffi::lua_tonumberx(l, idx, std::ptr::null_mut());
                        self.float(f)?;
                    }
                }
                ffi::LUA_TSTRING => {
                    let bytes = lua::string_bytes(l, idx).unwrap_or_default();
                    if !self.walk(bytes.len()) {
                        // Not even checked: the charge trips the limit.
                        return Err(self.out_of_work());
                    }
                    let Ok(text) = std::str::from_utf8(bytes) else {
                        return Err(format!(
                            "{} is a string that is not valid UTF-8",
                            self.here()
                        ));
                    };
                    write_string(&mut self.out, text);
                    if self.elsewhere + self.out.len() > self.max_bytes {
                        return Err(self.too_long());
                    }
                }
                ffi::LUA_TTABLE => self.table(l, idx)?,
                ffi::LUA_TFUNCTION => return Err(format!("{} is a function", self.here())),
                ffi::LUA_TTHREAD => return Err(format!("{} is a thread", self.here())),
                _ => return Err(format!("{} is a userdata", self.here())),
            }
            Ok(())
        }
    }

    fn float(&mut self, f: f64) -> Result<(), String> {
        if !f.is_finite() {
            return Err(non_finite(&self.here(), f));
        }
        // Debug formatting is the shortest round-trip form and always marks a
        // float (`1.0`, `1e300`), so floats stay floats on the other side.
        let _ = write!(self.out, "{f:?}");
        Ok(())
    }

    /// Encodes the table at absolute index `idx` as an array or an object.
    ///
    /// # Safety
    /// As for [`Encoder::value`]; the value at `idx` is a table.
    unsafe fn table(&mut self, l: *mut lua_State, idx: c_int) -> Result<(), String> {
        // SAFETY: `idx` is a valid absolute index of a table on the live state
        // `l` (caller). `lua_topointer` only reads its address.
        // `lua_checkstack` makes room for what this level pushes (an element,
        // or a key and a value in `shape` and `object`) and reports failure
        // rather than raising; `lua_rawgeti` invokes no metamethod and
        // allocates nothing, and each element is popped after it is encoded.
        unsafe {
            // The cycle check scans the tables open above this one: work
            // that grows with the depth (about 17 units of fuel a level),
            // charged at a byte per 8 levels.
            if !self.walk(self.open.len() / 8) {
                return Err(self.out_of_work());
            }
            let address = ffi::lua_topointer(l, idx) as usize;
            if let Some(&(_, len)) = self.open.iter().find(|(a, _)| *a == address) {
                return Err(format!(
                    "{} refers back to {} (a cycle)",
                    self.here(),
                    self.describe(len)
                ));
            }
            if self.open.len() >= self.max_depth as usize {
                return Err(format!(
                    "{} nests deeper than {} levels (max-value-depth)",
                    self.here(),
                    self.max_depth
                ));
            }
            if ffi::lua_checkstack(l, 4) == 0 {
                return Err(format!(
                    "{} nests too deeply for the Lua stack",
                    self.here()
                ));
            }
            self.open.push((address, self.path.len()));
            let shape = self.shape(l, idx)?;
            match shape {
                Shape::Array(n) => {
                    self.out.push('[');
                    for i in 1..=n {
                        if i > 1 {
                            self.out.push(',');
                        }
                        ffi::lua_rawgeti(l, idx, i);
                        self.path.push(Segment::Index(i));
                        let r = self.value(l, ffi::lua_gettop(l));
                        self.path.pop();
                        ffi::lua_pop(l, 1);
                        r?;
                    }
                    self.out.push(']');
                }
                Shape::Object => self.object(l, idx)?,
            }
            self.open.pop();
            Ok(())
        }
    }

    /// Writes the object at `idx` with its members in the byte order of
    /// their keys, so that the text does not depend on the table's
    /// traversal order (which follows the string-hash seed). Each member's
    /// value is encoded into a buffer of its own; the members are then
    /// sorted and joined.
    ///
    /// # Safety
    /// As for [`Encoder::value`]; the value at `idx` is a table whose keys
    /// [`Encoder::shape`] has found to be UTF-8 strings.
    unsafe fn object(&mut self, l: *mut lua_State, idx: c_int) -> Result<(), String> {
        // SAFETY: `idx` is a valid absolute index of a table on the live state
        // `l`, with room for a key and a value (see `table`). The traversal
        // follows `lua_next`'s rule: the key left on top is never modified,
        // since `string_bytes` reads it without converting and the value above
        // it is popped after it is encoded, and on an early exit the key is
        // popped too. Encoding a value leaves the stack as it found it, and
        // nothing here allocates Lua memory or raises.
        unsafe {
            let outer = std::mem::take(&mut self.out);
            let held = self.elsewhere;
            self.elsewhere += outer.len();
            let mut members: Vec<(String, String)> = Vec::new();
            let mut result = Ok(());
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, idx) != 0 {
                let key = lua::string_bytes(l, -2).unwrap_or_default();
                // `shape` has checked every key is a UTF-8 string.
                let key = String::from_utf8_lossy(key).into_owned();
                self.path.push(Segment::Key(key));
                let r = self.value(l, ffi::lua_gettop(l));
                let key = match self.path.pop() {
                    Some(Segment::Key(key)) => key,
                    _ => String::new(),
                };
                ffi::lua_pop(l, 1);
                let value = std::mem::take(&mut self.out);
                self.elsewhere += key.len() + value.len() + 4;
                members.push((key, value));
                if let Err(e) = r {
                    ffi::lua_pop(l, 1);
                    result = Err(e);
                    break;
                }
            }
            self.elsewhere = held;
            self.out = outer;
            result?;
            members.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            // Joining copies every member's text once more, at each level
            // of nesting: work the text's length does not show.
            let copied = members
                .iter()
                .map(|(key, value)| key.len() + value.len() + 4)
                .fold(0usize, usize::saturating_add);
            if !self.walk(copied) {
                return Err(self.out_of_work());
            }
            self.out.push('{');
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                write_string(&mut self.out, key);
                self.out.push(':');
                self.out.push_str(value);
            }
            self.out.push('}');
            if self.elsewhere + self.out.len() > self.max_bytes {
                return Err(self.too_long());
            }
            Ok(())
        }
    }

    /// Decides whether the table at `idx` is an array (keys exactly 1..n) or
    /// an object (all keys strings), or explains why it is neither.
    ///
    /// # Safety
    /// As for [`Encoder::value`]; the value at `idx` is a table.
    unsafe fn shape(&mut self, l: *mut lua_State, idx: c_int) -> Result<Shape, String> {
        // SAFETY: As in `object`: `lua_next` walks the table at the valid
        // absolute index `idx` with room for a key and a value, and the key
        // left on top is only read, never converted (`string_bytes`,
        // `lua_tointegerx` and `lua_tonumberx` leave it as it is). The value is
        // popped at once, and on an early exit the key too; nothing allocates
        // Lua memory or raises.
        unsafe {
            let mut count: i64 = 0;
            let mut largest: i64 = 0;
            let mut strings = false;
            let mut integers = false;
            let mut problem = None;
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, idx) != 0 {
                count += 1;
                if !self.walk(KEY_WORK) {
                    ffi::lua_pop(l, 2);
                    return Err(self.out_of_work());
                }
                match ffi::lua_type(l, -2) {
                    ffi::LUA_TSTRING => {
                        strings = true;
                        let key = lua::string_bytes(l, -2).unwrap_or_default();
                        if !self.walk(key.len()) {
                            problem = Some(self.out_of_work());
                        } else if std::str::from_utf8(key).is_err() {
                            problem =
                                Some(format!("{} has a key that is not valid UTF-8", self.here()));
                        }
                    }
                    ffi::LUA_TNUMBER if ffi::lua_isinteger(l, -2) != 0 => {
                        let k = ffi::lua_tointegerx(l, -2, std::ptr::null_mut());
                        if k < 1 {
                            problem = Some(format!(
                                "{} has the integer key {k}; arrays start at index 1",
                                self.here()
                            ));
                        }
                        integers = true;
                        largest = largest.max(k);
                    }
                    t => {
                        let kind = type_name(l, t);
                        let key = if t == ffi::LUA_TNUMBER {
                            format!(
                                "the float key {:?}",
                                ffi::lua_tonumberx(l, -2, std::ptr::null_mut())
                            )
                        } else {
                            format!("a key that is a {kind}")
                        };
                        problem = Some(format!(
                            "{} has {key}; only string keys or a 1..n sequence convert to JSON",
                            self.here()
                        ));
                    }
                }
                ffi::lua_pop(l, 1);
                if problem.is_some() {
                    ffi::lua_pop(l, 1);
                    break;
                }
            }
            if let Some(problem) = problem {
                return Err(problem);
            }
            if strings && integers {
                return Err(format!(
                    "{} mixes integer and string keys; use either a sequence or string keys",
                    self.here()
                ));
            }
            if integers && largest != count {
                return Err(format!(
                    "{} is a sparse array ({count} elements but index {largest}); fill the holes or use string keys",
                    self.here()
                ));
            }
            Ok(if strings {
                Shape::Object
            } else {
                Shape::Array(count)
            })
        }
    }
}

enum Shape {
    Array(i64),
    Object,
}

/// The name of the Lua type tag `t`, as `type()` gives it.
///
/// # Safety
/// `l` is a live state and `t` a tag that `lua_type` returned.
unsafe fn type_name(l: *mut lua_State, t: c_int) -> String {
    // SAFETY: `t` came from `lua_type` (caller), and `lua_typename` returns a
    // static NUL-terminated name for every such tag.
    unsafe {
        let name = ffi::lua_typename(l, t);
        std::ffi::CStr::from_ptr(name)
            .to_string_lossy()
            .into_owned()
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The most bytes of JSON text one conversion may produce: enough for any
/// legal string with every byte escaped (six bytes each), but never more than
/// the Lua heap limit, so the text always fits in the linear memory beside
/// the heap. Shared subtables, which can make a small value expand
/// exponentially, stop at this bound.
pub fn max_json_bytes(limits: &Limits) -> u64 {
    limits
        .max_string_bytes
        .saturating_mul(6)
        .saturating_add(2)
        .min(limits.max_memory_bytes)
}

/// Writes `s` as a JSON string literal in two linear passes: the first
/// measures the escaped length (from a table), the second writes into memory
/// reserved once. A string of control characters costs a few instructions
/// per byte, like any other.
fn write_string(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let escaped: usize = bytes
        .iter()
        .map(|&b| usize::from(ESCAPED_LEN[usize::from(b)]))
        .sum();
    let total = escaped + 2;
    // SAFETY: only ASCII escapes and bytes of `s` copied in order are
    // written, so the string stays valid UTF-8; exactly `total` bytes are
    // written into capacity reserved for them before the length is set.
    unsafe {
        let vec = out.as_mut_vec();
        // A large string gets exactly its room (plus a little for the
        // punctuation that follows), so that the text is not doubled by
        // amortised growth: the linear memory must hold it beside the heap.
        if total > 1 << 20 {
            vec.reserve_exact(total + 64);
        } else {
            vec.reserve(total);
        }
        let mut at = vec.as_mut_ptr().add(vec.len());
        *at = b'"';
        at = at.add(1);
        if escaped == bytes.len() {
            // Nothing to escape: one copy.
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len());
            at = at.add(bytes.len());
        } else {
            at = write_escaped(bytes, at);
        }
        *at = b'"';
        let len = vec.len() + total;
        vec.set_len(len);
    }
}

/// Writes `bytes` escaped at `at`; returns the end.
///
/// # Safety
/// `at` has room for the escaped length of `bytes` (see [`ESCAPED_LEN`]).
unsafe fn write_escaped(bytes: &[u8], mut at: *mut u8) -> *mut u8 {
    // SAFETY: the caller reserved room for every escape written here.
    unsafe {
        for &b in bytes {
            match ESCAPED_LEN[usize::from(b)] {
                1 => {
                    *at = b;
                    at = at.add(1);
                }
                2 => {
                    *at = b'\\';
                    *at.add(1) = SHORT[usize::from(b)];
                    at = at.add(2);
                }
                _ => {
                    std::ptr::copy_nonoverlapping(CONTROL[usize::from(b)].as_ptr(), at, 6);
                    at = at.add(6);
                }
            }
        }
        at
    }
}

/// How many bytes each byte becomes inside a JSON string: 1 (itself), 2 (a
/// short escape) or 6 (`\u00XX`).
const ESCAPED_LEN: [u8; 256] = {
    let mut table = [1u8; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = 6;
        i += 1;
    }
    table[b'\n' as usize] = 2;
    table[b'\r' as usize] = 2;
    table[b'\t' as usize] = 2;
    table[b'"' as usize] = 2;
    table[b'\\' as usize] = 2;
    table
};

/// The letter after the backslash of each short escape.
const SHORT: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// `\u00XX` for each control character.
const CONTROL: [[u8; 6]; 32] = {
    let hex = b"0123456789abcdef";
    let mut table = [*b"\\u0000"; 32];
    let mut i = 0;
    while i < 32 {
        table[i][4] = hex[i >> 4];
        table[i][5] = hex[i & 0xf];
        i += 1;
    }
    table
};

/// Encodes stack values `first..=last` as a JSON array. Paths are named
/// `{root}[i]`, counting from 1.
///
/// # Safety
/// `l` is a live state and the indices are absolute and valid. Never raises,
/// so it may run outside a protected call.
pub unsafe fn encode_values(
    l: *mut lua_State,
    first: c_int,
    last: c_int,
    root: &str,
    limits: &Limits,
) -> Result<String, String> {
    // SAFETY: The caller passes valid absolute indices on a live state, and
    // `Encoder::value` only reads them without raising, which is why `eval` may
    // call this after its protected call has returned.
    unsafe {
        let mut enc = Encoder::new(root.to_owned(), limits);
        enc.out.push('[');
        for (n, idx) in (first..=last).enumerate() {
            if n > 0 {
                enc.out.push(',');
            }
            enc.path.push(Segment::Index(n as i64 + 1));
            enc.value(l, idx)?;
            enc.path.pop();
        }
        enc.out.push(']');
        Ok(enc.out)
    }
}

/// Why [`encode`] refused a value.
pub enum EncodeError {
    /// The text would pass the byte cap; the path of the value it was at.
    TooLong(String),
    /// The value does not convert (a function, a cycle...): the message
    /// names its path.
    Invalid(String),
}

/// Encodes the value at absolute index `idx` as JSON text by the boundary's
/// rules (`json.encode`), with paths named from `root` and the text capped
/// at `max_bytes` (never more than [`max_json_bytes`]).
///
/// # Safety
/// `l` is a live state and `idx` a valid absolute index. Never raises.
pub unsafe fn encode(
    l: *mut lua_State,
    idx: c_int,
    root: &str,
    limits: &Limits,
    max_bytes: usize,
) -> Result<String, EncodeError> {
    // SAFETY: `idx` is a valid absolute index on a live state (caller), and
    // `Encoder::value` only reads it, without raising.
    unsafe {
        let mut enc = Encoder::new(root.to_owned(), limits);
        enc.max_bytes = enc.max_bytes.min(max_bytes);
        enc.max_work = work_left(l);
        let result = enc.value(l, idx);
        ENCODED.set(enc.work());
        match result {
            Ok(()) => Ok(enc.out),
            Err(msg) => Err(match enc.too_long_at.take() {
                Some(at) => EncodeError::TooLong(at),
                None => EncodeError::Invalid(msg),
            }),
        }
    }
}

/// Converts the Lua value at absolute index `idx` to a WIT `value`:
/// scalars typed, tables as JSON text. Errors name the path from the root
/// that `root` spells, which is called only for a table or an error.
///
/// # Safety
/// `l` is a live state and `idx` a valid absolute index. Never raises.
pub unsafe fn to_value(
    l: *mut lua_State,
    idx: c_int,
    root: impl FnOnce() -> String,
    limits: &Limits,
) -> Result<WitValue, String> {
    // SAFETY: `idx` is a valid absolute index on a live state (caller). The
    // scalars are read without converting them in place, a string's bytes are
    // copied while it is on the stack, and `Encoder::value` never raises.
    unsafe {
        // A scalar is no work; a string is the bytes checked, below.
        ENCODED.set(0);
        Ok(match ffi::lua_type(l, idx) {
            ffi::LUA_TNIL | ffi::LUA_TNONE => WitValue::Nil,
            ffi::LUA_TBOOLEAN => WitValue::Boolean(ffi::lua_toboolean(l, idx) != 0),
            ffi::LUA_TNUMBER if ffi::lua_isinteger(l, idx) != 0 => {
                WitValue::Integer(ffi::lua_tointegerx(l, idx, std::ptr::null_mut()))
            }
            ffi::LUA_TNUMBER => {
                let f = ffi::lua_tonumberx(l, idx, std::ptr::null_mut());
                if !f.is_finite() {
                    return Err(non_finite(&root(), f));
                }
                WitValue::Float(f)
            }
            ffi::LUA_TSTRING => {
                let bytes = lua::string_bytes(l, idx).unwrap_or_default();
                let left = work_left(l);
                if bytes.len() > left {
                    // Not even checked: the caller's charge trips the limit.
                    ENCODED.set(left.saturating_add(1));
                    return Err(format!(
                        "{} needs more work than the instruction budget has left (max-instructions)",
                        root()
                    ));
                }
                ENCODED.set(bytes.len());
                match std::str::from_utf8(bytes) {
                    Ok(text) => WitValue::Text(text.to_owned()),
                    Err(_) => {
                        return Err(format!("{} is a string that is not valid UTF-8", root()));
                    }
                }
            }
            _ => {
                let mut enc = Encoder::new(root(), limits);
                enc.max_work = work_left(l);
                let result = enc.value(l, idx);
                ENCODED.set(enc.work());
                result?;
                WitValue::Json(enc.out)
            }
        })
    }
}

/// The work, in bytes of JSON text, that the instruction budget of the
/// thread `l` has left at [`BYTES_PER_INSTRUCTION`]: a
/// charged conversion gives up past it, so its charge ends the eval at the
/// limit rather than after the work.
///
/// # Safety
/// `l` is a live thread of a Vm-owned state.
unsafe fn work_left(l: *mut lua_State) -> usize {
    // SAFETY: `Vm::from_state` is valid on a Vm-owned state and `lua::count`
    // reads one field (caller).
    unsafe {
        let max = Vm::from_state(l).limits().max_instructions;
        let left = max.saturating_sub(lua::count(l));
        usize::try_from(left.saturating_mul(BYTES_PER_INSTRUCTION)).unwrap_or(usize::MAX)
    }
}

std::thread_local! {
    /// The work of the last conversion, finished or failed, in bytes of
    /// JSON text: what a caller charges for (see `last_encoded_bytes`).
    static ENCODED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The work of the last conversion ([`encode`] or [`to_value`]), in bytes
/// of JSON text, whether it succeeded or not: the most text it held at
/// once, or the input it walked (entries visited, strings checked) when
/// that is more.
pub fn last_encoded_bytes() -> usize {
    ENCODED.get()
}

/// Why `f` (NaN or an infinity) at `path` cannot cross the boundary.
fn non_finite(path: &str, f: f64) -> String {
    let what = if f.is_nan() {
        "NaN"
    } else if f < 0.0 {
        "-inf"
    } else {
        "inf"
    };
    format!("{path} is {what}, which JSON cannot represent")
}

/// A parsed JSON value in the shape it is pushed in: numbers already
/// integers or floats, and an object's members in text order (when a key
/// repeats, its last value wins, as it is set last).
#[derive(Debug, PartialEq)]
pub enum Tree {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Arr(Vec<Tree>),
    Obj(Vec<(String, Tree)>),
}

/// A value received from the host (or parsed by `json.decode`), owned by
/// the Vm while it is pushed (a push can raise; see [`hold`]).
pub enum Received {
    Scalar(WitValue),
    /// A `json` value from the host, checked and pushed from its text.
    Text(Checked),
    /// A tree that `json.decode` parsed within its memory budget.
    Json(Tree),
}

impl Received {
    /// Checks a `json` value; scalars pass through.
    pub fn parse(value: WitValue) -> Result<Received, String> {
        match value {
            WitValue::Json(text) => Checked::new(text)
                .map(Received::Text)
                .map_err(|e| format!("invalid JSON ({e})")),
            scalar => Ok(Received::Scalar(scalar)),
        }
    }
}

/// What this module keeps in the Vm: the received values being converted
/// to Lua values, innermost last. A push can raise a memory error, which
/// unwinds without running Rust destructors, so each value is boxed here
/// and freed by [`release`], or by the next eval (or the Vm's end) if a
/// push raised. One slot would not do: the pushes can run finalizers,
/// which can call a capability while an outer reply is still being read.
#[derive(Default)]
struct Held(RefCell<Vec<NonNull<Received>>>);

impl Held {
    /// Frees the values left by pushes that raised.
    fn free(&self) {
        for value in self.0.take() {
            // SAFETY: every listed pointer came from `Box::leak` in `hold`
            // and is freed once, after leaving the list. This runs between
            // evals or once the state is closed, when no push is reading a
            // value.
            drop(unsafe { Box::from_raw(value.as_ptr()) });
        }
    }
}

impl Extension for Held {
    fn begin_eval(&self) {
        self.free();
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.free();
    }
}

/// Moves a received value into the Vm while it becomes Lua values. The
/// value stays where the pointer says until [`release`] or the next eval,
/// whichever comes first.
pub fn hold(vm: &Vm, value: Received) -> NonNull<Received> {
    let value = NonNull::from(Box::leak(Box::new(value)));
    vm.extension::<Held>().0.borrow_mut().push(value);
    value
}

/// Frees a value that [`hold`] returned, unless the next eval already has.
///
/// # Safety
/// No reference to the value is used afterwards.
pub unsafe fn release(vm: &Vm, value: NonNull<Received>) {
    let held = {
        let mut values = vm.extension::<Held>().0.borrow_mut();
        let at = values.iter().rposition(|&v| v == value);
        at.map(|i| values.remove(i))
    };
    if let Some(value) = held {
        // SAFETY: the pointer was still listed, so it came from `Box::leak`
        // in `hold` and has not been freed; it is unlisted now, so it is
        // freed once, and the caller uses no reference to it any more.
        drop(unsafe { Box::from_raw(value.as_ptr()) });
    }
}

/// Pushes the Lua form of a received value. Nesting past `max_depth` is
/// refused with a message; memory errors are raised as Lua errors.
///
/// # Safety
/// `l` is a live state inside a protected call.
pub unsafe fn push_received(
    l: *mut lua_State,
    value: &Received,
    max_depth: u32,
) -> Result<(), String> {
    // SAFETY: The caller runs on a live state inside a protected call with a
    // free slot, so a scalar's push may raise a memory error; this frame only
    // borrows the value, which its owner (the Vm, or `set_inputs`' frame) keeps
    // alive. Tables go to `push`.
    unsafe {
        match value {
            Received::Json(v) => push(l, v, max_depth),
            Received::Text(checked) => crate::jsontext::push(l, checked, max_depth),
            Received::Scalar(v) => {
                match v {
                    WitValue::Nil => ffi::lua_pushnil(l),
                    WitValue::Boolean(b) => ffi::lua_pushboolean(l, c_int::from(*b)),
                    WitValue::Integer(i) => ffi::lua_pushinteger(l, *i),
                    WitValue::Float(f) => ffi::lua_pushnumber(l, *f),
                    WitValue::Text(s) | WitValue::Json(s) => lua::push_bytes(l, s.as_bytes()),
                }
                Ok(())
            }
        }
    }
}

/// Pushes the Lua form of a JSON value. Nesting past `max_depth` is refused
/// with a message; memory errors are raised as Lua errors.
///
/// # Safety
/// `l` is a live state inside a protected call.
pub unsafe fn push(l: *mut lua_State, value: &Tree, max_depth: u32) -> Result<(), String> {
    // SAFETY: `push_at` has the same contract as this function, starting at
    // depth 0.
    unsafe { push_at(l, value, max_depth, 0) }
}

/// [`push`] at nesting level `depth`.
///
/// # Safety
/// As for [`push`].
unsafe fn push_at(
    l: *mut lua_State,
    value: &Tree,
    max_depth: u32,
    depth: u32,
) -> Result<(), String> {
    // SAFETY: `lua_checkstack` makes room at each level for the table, a key
    // and a value before anything is pushed, and reports failure instead of
    // raising. `table` is the absolute index of the table just created, so the
    // raw sets store into it without metamethods. A push may raise a memory
    // error inside the caller's protected call: these frames hold only borrows
    // of the value, whose owner keeps it alive (the Vm or `set_inputs`' frame),
    // and iterators over it that own nothing.
    unsafe {
        if ffi::lua_checkstack(l, 3) == 0 {
            return Err(NO_STACK.to_owned());
        }
        match value {
            Tree::Null => ffi::lua_pushnil(l),
            Tree::Bool(b) => ffi::lua_pushboolean(l, c_int::from(*b)),
            Tree::Int(i) => ffi::lua_pushinteger(l, *i),
            Tree::Float(f) => ffi::lua_pushnumber(l, *f),
            Tree::Str(s) => lua::push_bytes(l, s.as_bytes()),
            Tree::Arr(items) => {
                enter(depth, max_depth)?;
                ffi::lua_createtable(l, crate::vm::to_c_int(items.len()), 0);
                let table = ffi::lua_gettop(l);
                for (i, item) in items.iter().enumerate() {
                    if *item == Tree::Null {
                        continue;
                    }
                    push_at(l, item, max_depth, depth + 1)?;
                    ffi::lua_rawseti(l, table, i as i64 + 1);
                }
            }
            Tree::Obj(members) => {
                enter(depth, max_depth)?;
                ffi::lua_createtable(l, 0, crate::vm::to_c_int(members.len()));
                let table = ffi::lua_gettop(l);
                for (key, item) in members {
                    // A null member is absent: setting it to nil also drops
                    // an earlier member of the same key.
                    lua::push_bytes(l, key.as_bytes());
                    push_at(l, item, max_depth, depth + 1)?;
                    ffi::lua_rawset(l, table);
                }
            }
        }
        Ok(())
    }
}
