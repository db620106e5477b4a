//! `check`'s static analysis, without running anything: the compiled chunk,
//! dumped by `lua_dump` with its line information and the names of its
//! `_ENV` upvalues only (`strip` 2, a moonbox addition; see
//! guest/lua/budget.diff), is parsed as a Lua 5.4 binary chunk (ldump.c)
//! and its instructions decoded (lopcodes.h), so globals are told from
//! locals exactly as the compiler told them apart.
//!
//! This module only reads bytes: it finds the references a chunk makes
//! ([`Reference`]). Which of them are findings depends on the live session
//! and is decided in `session`.
//!
//! Everything here is bounded by the dump's size and never panics: a dump
//! that does not parse yields `None`.

use std::collections::HashSet;

/// The longest dotted path followed from a global (`a.b.c.d.e.f.g.h`).
const MAX_PATH: usize = 8;
/// The deepest nesting of functions parsed; the compiler's own limit on
/// syntax levels (200) is below it.
const MAX_NESTING: usize = 250;

/// A reference a chunk makes to a global, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// A global read, with the fields read from it straight after through
    /// constant keys: `os.execute` is `["os", "execute"]`.
    Global { path: Vec<String>, line: u32 },
    /// `require` called with one constant string: `require("socket")`.
    Require { name: String, line: u32 },
}

impl Reference {
    pub fn line(&self) -> u32 {
        match self {
            Reference::Global { line, .. } | Reference::Require { line, .. } => *line,
        }
    }
}

/// What the analysis found.
#[derive(Debug, Default)]
pub struct Analysis {
    /// References in source order (by line, then as compiled), without
    /// repeats of the same reference on the same line.
    pub references: Vec<Reference>,
    /// Globals the chunk assigns anywhere.
    pub assigned: HashSet<String>,
    /// The chunk assigns `_ENV` itself, or a global whose name it computes
    /// at run time, so global names may mean another table or be defined
    /// unseen.
    pub env_replaced: bool,
    /// The chunk has more than [`MAX_REFERENCES`] global references; the
    /// ones past it were not kept.
    pub truncated: bool,
}

/// The most global references one check keeps (in the order compiled),
/// so that the analysis of a huge chunk stays within memory and fuel.
pub const MAX_REFERENCES: usize = 10_000;

/// Parses an unstripped Lua 5.4 binary chunk and collects its references;
/// `None` when the bytes are not one.
pub fn analyse(dump: &[u8]) -> Option<Analysis> {
    let mut r = Reader {
        bytes: dump,
        pos: 0,
    };
    r.header()?;
    let _main_upvalues = r.byte()?;
    let main = r.function(0)?;
    let mut analysis = Analysis::default();
    let mut found: Vec<(u32, usize, Reference)> = Vec::new();
    // Main's upvalues: `_ENV` (the only one the compiler gives a main chunk)
    // is the environment.
    let env: Vec<bool> = (0..main.upvalues.len())
        .map(|i| main.upvalue_names.get(i).copied().flatten() == Some(b"_ENV".as_slice()))
        .collect();
    walk(&main, &env, &mut analysis, &mut found, 0);
    // Source order: by line, then in the order found (stable).
    found.sort_by_key(|(line, order, _)| (*line, *order));
    let mut seen: HashSet<(u32, String)> = HashSet::new();
    for (line, _, reference) in found {
        let key = match &reference {
            Reference::Global { path, .. } => path.join("."),
            Reference::Require { name, .. } => format!("require\0{name}"),
        };
        if seen.insert((line, key)) {
            analysis.references.push(reference);
        }
    }
    Some(analysis)
}

/// The most findings one check reports; past it the last one says how many
/// more were cut.
pub const MAX_FINDINGS: usize = 100;

/// Globals that every script has, whatever the session's state says.
pub const BUILT_IN_GLOBALS: &[&str] = &["json", "log", "parallel"];

/// What a finding is about (the WIT `finding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    Sandboxed,
    UnknownModule,
    UnknownCapability,
    UndefinedGlobal,
}

/// What the live session says about one reference. The count is how many
/// segments of the path name the finding (`os.execute` of `os.execute.x`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Fine,
    Sandboxed(usize),
    UnknownCapability(usize),
    UndefinedGlobal,
    UnknownModule,
}

/// A finding, before it becomes the WIT record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: Finding,
    pub name: String,
    pub message: String,
    pub line: u32,
}

/// What the messages name: the session's configuration.
pub struct Context<'a> {
    /// Names `allow` accepts, to say what would allow a sandboxed name.
    pub allowable: &'a [String],
    /// The host's modules.
    pub modules: &'a [String],
    /// The installed capabilities' names.
    pub capabilities: &'a [&'a str],
}

/// Turns the references and their verdicts (in the same order) into
/// findings: one per (name, line), at most [`MAX_FINDINGS`].
pub fn findings(
    references: &[Reference],
    verdicts: &[Verdict],
    cx: &Context,
    truncated: bool,
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut seen: HashSet<(u32, String)> = HashSet::new();
    let mut cut = 0usize;
    for (reference, verdict) in references.iter().zip(verdicts) {
        let line = reference.line();
        let (kind, name) = match (reference, *verdict) {
            (_, Verdict::Fine) => continue,
            (Reference::Require { name, .. }, Verdict::UnknownModule) => {
                (Finding::UnknownModule, format!("require(\"{name}\")"))
            }
            (Reference::Global { path, .. }, Verdict::UndefinedGlobal) => {
                (Finding::UndefinedGlobal, path[..1].join("."))
            }
            (Reference::Global { path, .. }, Verdict::Sandboxed(n)) => {
                (Finding::Sandboxed, path[..n.min(path.len())].join("."))
            }
            (Reference::Global { path, .. }, Verdict::UnknownCapability(n)) => (
                Finding::UnknownCapability,
                path[..n.min(path.len())].join("."),
            ),
            _ => continue,
        };
        if !seen.insert((line, name.clone())) {
            continue;
        }
        if out.len() == MAX_FINDINGS {
            cut += 1;
            continue;
        }
        let message = message(kind, &name, reference, cx);
        out.push(Diagnostic {
            kind,
            name,
            message,
            line,
        });
    }
    if cut > 0
        && let Some(last) = out.last_mut()
    {
        last.message.push_str(&format!(
            " ({cut} more findings were cut: check reports at most {MAX_FINDINGS})"
        ));
    }
    if truncated && let Some(last) = out.last_mut() {
        last.message.push_str(&format!(
            " (the chunk has more than {MAX_REFERENCES} global references; check read only \
             the first {MAX_REFERENCES})"
        ));
    }
    out
}

fn message(kind: Finding, name: &str, reference: &Reference, cx: &Context) -> String {
    match kind {
        Finding::Sandboxed => {
            let lib = name.split('.').next().unwrap_or(name);
            let allow = if cx.allowable.iter().any(|a| a == name) {
                Some(name)
            } else if cx.allowable.iter().any(|a| a == lib) {
                Some(lib)
            } else {
                None
            };
            match allow {
                Some(a) => format!(
                    "{name} is sandboxed in this session: calling it raises an error. Do without it, or have the host allow \"{a}\""
                ),
                None => format!(
                    "{name} is sandboxed in this session: calling it raises an error. Do without it"
                ),
            }
        }
        Finding::UnknownModule => {
            let module = match reference {
                Reference::Require { name, .. } => name.as_str(),
                Reference::Global { .. } => name,
            };
            let offered = if cx.modules.is_empty() {
                "this session has no host modules".to_owned()
            } else {
                format!("the host's modules are: {}", cx.modules.join(", "))
            };
            format!(
                "require(\"{module}\") will fail: no module '{module}' is offered. require returns the standard libraries and json; {offered}"
            )
        }
        Finding::UnknownCapability => {
            let namespace = name.rsplit_once('.').map_or("", |(ns, _)| ns);
            let siblings: Vec<&str> = cx
                .capabilities
                .iter()
                .copied()
                .filter(|c| {
                    c.strip_prefix(namespace)
                        .is_some_and(|rest| rest.starts_with('.'))
                })
                .collect();
            format!(
                "{name} is not a capability of this session (it is nil); the capabilities under {namespace} are: {}",
                siblings.join(", ")
            )
        }
        Finding::UndefinedGlobal => format!(
            "{name} is a global that this chunk never assigns and that is nil in this session: reading it gives nil. Is it a typo, or a missing local?"
        ),
    }
}

/// Whether `prefix` is a capability namespace: some installed capability's
/// name continues it with at least one more segment. Allocates nothing.
pub fn is_namespace(capabilities: &[crate::vm::Capability], prefix: &[String]) -> bool {
    capabilities.iter().any(|cap| {
        let mut segments = cap.name.split('.');
        prefix.iter().all(|p| segments.next() == Some(p.as_str())) && segments.next().is_some()
    })
}

/// A constant of a function: only strings matter here.
enum Constant<'a> {
    Str(&'a [u8]),
    Other,
}

/// One function prototype, as dumped.
struct Proto<'a> {
    line_defined: u64,
    code: Vec<u32>,
    constants: Vec<Constant<'a>>,
    /// `(instack, idx)` of each upvalue.
    upvalues: Vec<(bool, u8)>,
    protos: Vec<Proto<'a>>,
    line_info: &'a [u8],
    abs_line_info: Vec<(u64, u64)>,
    upvalue_names: Vec<Option<&'a [u8]>>,
}

impl Proto<'_> {
    fn string(&self, k: u32) -> Option<&str> {
        match self.constants.get(k as usize)? {
            Constant::Str(s) => std::str::from_utf8(s).ok(),
            Constant::Other => None,
        }
    }

    /// The line of every instruction: `luaG_getfuncline`'s walk, done once
    /// for all of them.
    fn lines(&self) -> Vec<u32> {
        let mut lines = Vec::with_capacity(self.code.len());
        let mut line = i64::try_from(self.line_defined).unwrap_or(0);
        let mut abs = 0;
        for pc in 0..self.code.len() {
            match self.line_info.get(pc).map(|&b| b as i8) {
                // ABSLINEINFO: the line is in `abs_line_info`.
                Some(-128) => {
                    while abs < self.abs_line_info.len() && self.abs_line_info[abs].0 < pc as u64 {
                        abs += 1;
                    }
                    if let Some(&(at, l)) = self.abs_line_info.get(abs)
                        && at == pc as u64
                    {
                        line = i64::try_from(l).unwrap_or(0);
                    }
                }
                Some(delta) => line += i64::from(delta),
                None => {}
            }
            lines.push(u32::try_from(line.max(0)).unwrap_or(u32::MAX));
        }
        lines
    }
}

// Opcodes of Lua 5.4 (lopcodes.h).
const OP_LOADK: u32 = 3;
const OP_LOADKX: u32 = 4;
const OP_GETUPVAL: u32 = 9;
const OP_SETUPVAL: u32 = 10;
const OP_GETTABUP: u32 = 11;
const OP_GETTABLE: u32 = 12;
const OP_GETFIELD: u32 = 14;
const OP_SETTABUP: u32 = 15;
const OP_SETTABLE: u32 = 16;
const OP_SETFIELD: u32 = 18;
const OP_SELF: u32 = 20;
const OP_CALL: u32 = 68;
const OP_TAILCALL: u32 = 69;
const OP_EXTRAARG: u32 = 82;

/// How far back [`Walk::writer`] looks for the instruction that set a
/// register.
const MAX_LOOKBACK: usize = 256;

/// The fields of an iABC (or iABx, iAx) instruction.
#[derive(Clone, Copy)]
struct Ins {
    op: u32,
    a: u32,
    k: bool,
    b: u32,
    c: u32,
    bx: u32,
    ax: u32,
}

fn decode(i: u32) -> Ins {
    Ins {
        op: i & 0x7f,
        a: (i >> 7) & 0xff,
        k: (i >> 15) & 1 == 1,
        b: (i >> 16) & 0xff,
        c: (i >> 24) & 0xff,
        bx: i >> 15,
        ax: i >> 7,
    }
}

/// Whether an instruction of this opcode leaves its `A` register as it was
/// (it reads `A`, or `A` names no register).
fn keeps_a(op: u32) -> bool {
    matches!(op, 10 | 15..=18 | 46..=48 | 54..=66 | 70..=72 | 75 | 78 | 81 | 82)
}

/// One function's instructions, with what the walk needs to read them.
struct Walk<'p, 'a> {
    f: &'p Proto<'a>,
    env: &'p [bool],
    /// The pc the walk is at, and for each register the pc of the nearest
    /// instruction before it that set the register (`usize::MAX`: none),
    /// so that [`Walk::writer`] at the walk's own pc takes one step, not a
    /// scan of [`MAX_LOOKBACK`] instructions: a chunk of a million field
    /// assignments took seconds.
    recent: std::cell::RefCell<(usize, [usize; 256])>,
}

impl<'p, 'a> Walk<'p, 'a> {
    fn at(&self, pc: usize) -> Option<Ins> {
        self.f.code.get(pc).copied().map(decode)
    }

    fn is_env(&self, upvalue: u32) -> bool {
        self.env.get(upvalue as usize).copied().unwrap_or(false)
    }

    fn new(f: &'p Proto<'a>, env: &'p [bool]) -> Self {
        Walk {
            f,
            env,
            recent: std::cell::RefCell::new((0, [usize::MAX; 256])),
        }
    }

    /// Moves the walk to `pc`, the instruction after the one it was at.
    fn advance(&self, pc: usize) {
        let mut recent = self.recent.borrow_mut();
        if let Some(prev) = pc.checked_sub(1)
            && let Some(ins) = self.at(prev)
            && !keeps_a(ins.op)
            && let Some(slot) = recent.1.get_mut(ins.a as usize)
        {
            *slot = prev;
        }
        recent.0 = pc;
    }

    /// The nearest instruction before `pc` that set register `reg`, looking
    /// back at most [`MAX_LOOKBACK`] instructions.
    fn writer(&self, pc: usize, reg: u32) -> Option<(usize, Ins)> {
        let recent = self.recent.borrow();
        if recent.0 == pc && pc > 0 {
            let p = recent.1.get(reg as usize).copied().unwrap_or(usize::MAX);
            if p == usize::MAX || pc - p > MAX_LOOKBACK {
                return None;
            }
            return Some((p, self.at(p)?));
        }
        drop(recent);
        (pc.saturating_sub(MAX_LOOKBACK)..pc)
            .rev()
            .filter_map(|p| Some((p, self.at(p)?)))
            .find(|(_, ins)| ins.a == reg && !keeps_a(ins.op))
    }

    /// A constant string loaded by the instruction at `pc` (`LOADK`, or
    /// `LOADKX` with its `EXTRAARG`): its register and the next pc.
    fn string_load(&self, pc: usize) -> Option<(u32, &'p str, usize)> {
        let ins = self.at(pc)?;
        match ins.op {
            OP_LOADK => Some((ins.a, self.f.string(ins.bx)?, pc + 1)),
            OP_LOADKX => {
                let extra = self.at(pc + 1).filter(|e| e.op == OP_EXTRAARG)?;
                Some((ins.a, self.f.string(extra.ax)?, pc + 2))
            }
            _ => None,
        }
    }

    /// The constant string register `reg` holds at `pc`, if a `LOADK` set it.
    fn string_in(&self, pc: usize, reg: u32) -> Option<&'p str> {
        let (p, _) = self.writer(pc, reg)?;
        self.string_load(p).map(|(_, s, _)| s)
    }

    /// Whether register `reg` holds the environment at `pc`.
    fn env_in(&self, pc: usize, reg: u32) -> bool {
        matches!(self.writer(pc, reg), Some((_, w)) if w.op == OP_GETUPVAL && self.is_env(w.b))
    }

    /// The global the instruction at `pc` reads, if it reads one: `GETTABUP`
    /// on the environment with a constant key, or (when the key is not a
    /// short constant the instruction can hold) `GETTABLE` on the
    /// environment in a register with a constant string key.
    fn global_read(&self, pc: usize) -> Option<&'p str> {
        let ins = self.at(pc)?;
        match ins.op {
            OP_GETTABUP if self.is_env(ins.b) => self.f.string(ins.c),
            OP_GETTABLE if self.env_in(pc, ins.b) => self.string_in(pc, ins.c),
            _ => None,
        }
    }

    /// Whether register `reg` holds the global `_G` at `pc`.
    fn g_in(&self, pc: usize, reg: u32) -> bool {
        matches!(self.writer(pc, reg), Some((p, _)) if self.global_read(p) == Some("_G"))
    }

    /// The field read at `pc` from register `reg` with a constant key, the
    /// register it lands in and the next pc.
    fn field_read(&self, pc: usize, reg: u32) -> Option<(&'p str, u32, usize, bool)> {
        let ins = self.at(pc)?;
        match ins.op {
            OP_GETFIELD if ins.b == reg => Some((self.f.string(ins.c)?, ins.a, pc + 1, false)),
            OP_SELF if ins.b == reg && ins.k => Some((self.f.string(ins.c)?, ins.a, pc + 1, true)),
            OP_LOADK | OP_LOADKX => {
                let (key_reg, key, next) = self.string_load(pc)?;
                let get = self.at(next)?;
                (get.op == OP_GETTABLE && get.b == reg && get.c == key_reg).then_some((
                    key,
                    get.a,
                    next + 1,
                    false,
                ))
            }
            _ => None,
        }
    }
}

/// Collects the references of `f` and its nested functions. `env[i]` says
/// whether upvalue `i` of `f` is the chunk's own `_ENV`.
fn walk(
    f: &Proto,
    env: &[bool],
    analysis: &mut Analysis,
    found: &mut Vec<(u32, usize, Reference)>,
    depth: usize,
) {
    let lines = f.lines();
    let w = Walk::new(f, env);
    for (pc, &word) in f.code.iter().enumerate() {
        w.advance(pc);
        let ins = decode(word);
        let line = lines.get(pc).copied().unwrap_or(0);
        if let Some(name) = w.global_read(pc) {
            if found.len() >= MAX_REFERENCES {
                analysis.truncated = true;
                continue;
            }
            if name == "require"
                && let Some((arg, module, next)) = w.string_load(pc + 1)
                && arg == ins.a + 1
                && let Some(call) = w.at(next)
                && matches!(call.op, OP_CALL | OP_TAILCALL)
                && call.a == ins.a
                && call.b == 2
            {
                let order = found.len();
                let name = module.to_owned();
                found.push((line, order, Reference::Require { name, line }));
            }
            let mut path = vec![name.to_owned()];
            let mut reg = ins.a;
            let mut next = pc + 1;
            while path.len() < MAX_PATH
                && let Some((key, to, after, method)) = w.field_read(next, reg)
            {
                path.push(key.to_owned());
                if method {
                    break;
                }
                reg = to;
                next = after;
            }
            // `_G.os.execute` is `os.execute`.
            if path.len() > 1 && path[0] == "_G" {
                path.remove(0);
            }
            let order = found.len();
            found.push((line, order, Reference::Global { path, line }));
            continue;
        }
        match ins.op {
            OP_SETTABUP if w.is_env(ins.a) => {
                if let Some(name) = f.string(ins.b) {
                    analysis.assigned.insert(name.to_owned());
                }
            }
            OP_SETFIELD if w.env_in(pc, ins.a) || w.g_in(pc, ins.a) => {
                if let Some(name) = f.string(ins.b) {
                    analysis.assigned.insert(name.to_owned());
                }
            }
            OP_SETTABLE if w.env_in(pc, ins.a) || w.g_in(pc, ins.a) => {
                match w.string_in(pc, ins.b) {
                    Some(name) => {
                        analysis.assigned.insert(name.to_owned());
                    }
                    // `_ENV[name] = v` with a name computed at run time.
                    None => analysis.env_replaced = true,
                }
            }
            OP_SETUPVAL if w.is_env(ins.b) => analysis.env_replaced = true,
            _ => {}
        }
    }
    if depth >= MAX_NESTING {
        return;
    }
    for p in &f.protos {
        // A nested function's upvalue is the environment when it is the
        // enclosing function's environment upvalue; one captured from the
        // enclosing function's registers is a local (`local _ENV`).
        let child_env: Vec<bool> = p
            .upvalues
            .iter()
            .map(|&(instack, idx)| !instack && w.is_env(u32::from(idx)))
            .collect();
        walk(p, &child_env, analysis, found, depth + 1);
    }
}

/// A cursor over the dump. Every read checks the bounds.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    /// `loadSize`: 7 bits a byte, most significant first, the last byte
    /// marked by its high bit.
    fn size(&mut self) -> Option<u64> {
        let mut x: u64 = 0;
        loop {
            let b = self.byte()?;
            if x > (u64::MAX >> 7) {
                return None;
            }
            x = (x << 7) | u64::from(b & 0x7f);
            if b & 0x80 != 0 {
                return Some(x);
            }
        }
    }

    /// A count of items of at least `min_bytes` each, refused when the rest
    /// of the dump cannot hold that many.
    fn count(&mut self, min_bytes: usize) -> Option<usize> {
        let n = usize::try_from(self.size()?).ok()?;
        let left = self.bytes.len() - self.pos;
        (n.checked_mul(min_bytes.max(1))? <= left).then_some(n)
    }

    fn string(&mut self) -> Option<Option<&'a [u8]>> {
        let size = usize::try_from(self.size()?).ok()?;
        if size == 0 {
            return Some(None);
        }
        self.take(size - 1).map(Some)
    }

    fn header(&mut self) -> Option<()> {
        let ok = self.take(4)? == b"\x1bLua"
            && self.byte()? == 0x54
            && self.byte()? == 0
            && self.take(6)? == b"\x19\x93\r\n\x1a\n"
            && self.byte()? == 4
            && self.byte()? == 8
            && self.byte()? == 8
            && self.take(8)? == 0x5678i64.to_le_bytes()
            && self.take(8)? == 370.5f64.to_le_bytes();
        ok.then_some(())
    }

    fn function(&mut self, depth: usize) -> Option<Proto<'a>> {
        if depth > MAX_NESTING {
            return None;
        }
        let _source = self.string()?;
        let line_defined = self.size()?;
        let _last_line = self.size()?;
        let _params = self.byte()?;
        let _vararg = self.byte()?;
        let _stack = self.byte()?;
        let n = self.count(4)?;
        let code = self
            .take(n * 4)?
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let n = self.count(1)?;
        let mut constants = Vec::with_capacity(n);
        for _ in 0..n {
            constants.push(match self.byte()? {
                // LUA_VNUMFLT, LUA_VNUMINT
                0x13 | 0x03 => {
                    self.take(8)?;
                    Constant::Other
                }
                // LUA_VSHRSTR, LUA_VLNGSTR
                0x04 | 0x14 => match self.string()? {
                    Some(s) => Constant::Str(s),
                    None => Constant::Other,
                },
                // nil, false, true
                0x00 | 0x01 | 0x11 => Constant::Other,
                _ => return None,
            });
        }
        let n = self.count(3)?;
        let mut upvalues = Vec::with_capacity(n);
        for _ in 0..n {
            let instack = self.byte()? != 0;
            let idx = self.byte()?;
            let _kind = self.byte()?;
            upvalues.push((instack, idx));
        }
        let n = self.count(1)?;
        let mut protos = Vec::with_capacity(n);
        for _ in 0..n {
            protos.push(self.function(depth + 1)?);
        }
        let n = self.count(1)?;
        let line_info = self.take(n)?;
        let n = self.count(2)?;
        let mut abs_line_info = Vec::with_capacity(n);
        for _ in 0..n {
            abs_line_info.push((self.size()?, self.size()?));
        }
        let n = self.count(3)?;
        for _ in 0..n {
            self.string()?;
            self.size()?;
            self.size()?;
        }
        let n = self.count(1)?;
        let mut upvalue_names = Vec::with_capacity(n);
        for _ in 0..n {
            upvalue_names.push(self.string()?);
        }
        Some(Proto {
            line_defined,
            code,
            constants,
            upvalues,
            protos,
            line_info,
            abs_line_info,
            upvalue_names,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncations_are_refused_without_panicking() {
        assert!(analyse(b"").is_none());
        assert!(analyse(b"\x1bLua").is_none());
        assert!(analyse(&[0xff; 64]).is_none());
        // A huge count in an otherwise valid header.
        let mut bytes = b"\x1bLua\x54\x00\x19\x93\r\n\x1a\n\x04\x08\x08".to_vec();
        bytes.extend(0x5678i64.to_le_bytes());
        bytes.extend(370.5f64.to_le_bytes());
        bytes.push(1);
        assert!(analyse(&bytes).is_none());
        bytes.extend([0x80, 0x81, 0x80, 0x00, 0x00, 0x02]);
        bytes.extend([0x7f; 12]);
        bytes.push(0xff);
        assert!(analyse(&bytes).is_none());
    }

    /// The unstripped dump of `code`, compiled by the vendored Lua.
    fn dump(code: &str) -> Vec<u8> {
        use crate::lua::ffi;
        unsafe extern "C-unwind" fn writer(
            _l: *mut ffi::lua_State,
            p: *const std::ffi::c_void,
            sz: usize,
            ud: *mut std::ffi::c_void,
        ) -> std::ffi::c_int {
            // SAFETY: `ud` is the test's vector and `p` holds `sz` bytes.
            unsafe {
                let out = &mut *(ud as *mut Vec<u8>);
                if sz > 0 {
                    out.extend_from_slice(std::slice::from_raw_parts(p.cast::<u8>(), sz));
                }
            }
            0
        }
        let mut out = Vec::new();
        // SAFETY: A fresh state loads one text chunk (which raises nothing),
        // dumps it into `out` and is closed.
        unsafe {
            let l = ffi::luaL_newstate();
            let status = ffi::luaL_loadbufferx(
                l,
                code.as_ptr().cast(),
                code.len(),
                c"=t".as_ptr(),
                c"t".as_ptr(),
            );
            assert_eq!(status, ffi::LUA_OK, "{code}");
            ffi::lua_dump(l, writer, (&mut out as *mut Vec<u8>).cast(), 2);
            ffi::lua_close(l);
        }
        out
    }

    fn globals(a: &Analysis) -> Vec<(String, u32)> {
        a.references
            .iter()
            .map(|r| match r {
                Reference::Global { path, line } => (path.join("."), *line),
                Reference::Require { name, line } => (format!("require {name}"), *line),
            })
            .collect()
    }

    #[test]
    fn real_dumps_give_globals_fields_and_requires_with_lines() {
        let a = analyse(&dump(
            "local x = 1\nos.execute(x)\nlocal function f(io)\n  return io.open, string.rep\nend\nlocal m = require('sock')\ny = 2",
        ))
        .unwrap();
        assert_eq!(
            globals(&a),
            vec![
                ("os.execute".to_owned(), 2),
                ("string.rep".to_owned(), 4),
                ("require sock".to_owned(), 6),
                ("require".to_owned(), 6),
            ]
        );
        assert!(a.assigned.contains("y"));
        assert!(!a.env_replaced);
        assert!(analyse(&dump("_ENV = {}")).unwrap().env_replaced);
    }

    #[test]
    fn mangled_dumps_never_panic() {
        let code = "local t = {}\nfor i = 1, 10 do t[i] = os.time() + i end\n\
                    local function f(a, ...) return require('x'), a.b.c, ... end\n\
                    return t, f, 1.5, 'str', true, nil, 9007199254740993";
        let good = dump(code);
        assert!(analyse(&good).is_some());
        for end in 0..good.len() {
            assert!(
                analyse(&good[..end]).is_none(),
                "a dump cut at {end} parsed"
            );
        }
        let mut seed: u32 = 0x9e37_79b9;
        for _ in 0..5000 {
            let mut bytes = good.clone();
            for _ in 0..4 {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let at = seed as usize % bytes.len();
                bytes[at] = (seed >> 24) as u8;
            }
            // Either outcome is fine; panicking or hanging is not.
            let _ = analyse(&bytes);
        }
    }

    #[test]
    fn sizes_that_overflow_are_refused() {
        let mut r = Reader {
            bytes: &[0x7f; 20],
            pos: 0,
        };
        assert_eq!(r.size(), None);
    }
}
