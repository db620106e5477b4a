//! Capability arguments a script builds: the input is a small program
//! (one byte per step) that builds Lua values (integers, floats at their
//! edges, strings with invalid UTF-8, long strings, arrays, maps with keys
//! JSON cannot hold, shared subtables, cycles, deep nesting) and passes
//! them to capabilities with typed and untyped parameters. Whatever the
//! arguments, the eval ends as a value or a typed error, the host's parse
//! stays inside the sandbox's limits (a heap of 4 MiB here), the report is
//! one JSON object and the sandbox keeps serving.
#![no_main]

mod shared;

use std::fmt::Write as _;
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use moonbox::{Capability, CapabilityError, ErrorKind, Limits, Sandbox};
use serde_json::Value;

fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        let limits = Limits {
            max_instructions: 500_000,
            max_memory_bytes: 4 << 20,
            max_string_bytes: 1 << 20,
            max_output_bytes: 16 << 10,
            // What fuel derived from the instruction limit would be (500
            // per instruction): the guest's limits must trip first.
            fuel: Some(250_000_000),
            timeout: Duration::from_secs(5),
            ..Limits::default()
        };
        let echo = Capability::<()>::sync("echo", |_, (v,): (Value,)| Ok::<_, CapabilityError>(v));
        let typed = Capability::<()>::sync(
            "typed",
            |_, (n, s, list): (i64, String, Option<Vec<f64>>)| {
                Ok::<_, CapabilityError>(format!("{n}:{}:{}", s.len(), list.map_or(0, |l| l.len())))
            },
        );
        let count = Capability::<()>::sync("count", |_, (a, b, c): (Value, Value, Value)| {
            let size = |v: &Value| serde_json::to_string(v).map_or(0, |t| t.len());
            Ok::<_, CapabilityError>(size(&a) + size(&b) + size(&c))
        });
        Sandbox::builder()
            .limits(limits)
            .capability(echo)
            .capability(typed)
            .capability(count)
            .build()
            .expect("the sandbox builds")
    })
}

/// Lua source for a string of `bytes`, each byte escaped, so any byte
/// (invalid UTF-8 included) can be in it.
fn lua_string(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for b in bytes {
        let _ = write!(s, "\\{b}");
    }
    s.push('"');
    s
}

/// The Lua program the input stands for: the first byte picks the
/// capability; the rest, two bytes per step, build a stack of values
/// (`v[1]`...) whose top values the capability is called with.
fn program(data: &[u8]) -> String {
    let mut code = String::from("local v = {}\nlocal function top(k) return v[#v - k] end\n");
    let mut bytes = data.iter().copied().skip(1);
    let mut depth = 0usize;
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        let line = match op % 16 {
            0 => format!("v[#v + 1] = {}", i64::from(arg as i8) << (arg % 56)),
            1 => {
                let specials = [
                    "0/0",
                    "1/0",
                    "-1/0",
                    "-0.0",
                    "2^53",
                    "math.maxinteger",
                    "math.mininteger",
                    "0.1",
                ];
                format!("v[#v + 1] = {}", specials[usize::from(arg % 8)])
            }
            2 => {
                let len = usize::from(arg % 24);
                let text: Vec<u8> = bytes.by_ref().take(len).collect();
                format!("v[#v + 1] = {}", lua_string(&text))
            }
            3 => format!("v[#v + 1] = ('ab'):rep({})", u32::from(arg) << 12),
            4 => format!("v[#v + 1] = {}", arg % 2 == 0),
            5 => "v[#v + 1] = {}".to_owned(),
            // An array of the top k values, which leave the stack.
            6 => {
                let k = arg % 5;
                format!(
                    "do local t = {{}} for i = {k}, 1, -1 do t[#t + 1] = table.remove(v) end v[#v + 1] = t end"
                )
            }
            // A map: the top value under a key of some kind.
            7 => {
                let keys = [
                    "'k'",
                    "1",
                    "2.5",
                    "true",
                    "0/0 == 0/0 and 1 or 'nan'",
                    "''",
                    "-3",
                    "'\\255'",
                ];
                format!(
                    "do local t = {{}} t[{}] = table.remove(v) v[#v + 1] = t end",
                    keys[usize::from(arg % 8)]
                )
            }
            // Shared subtables: the top value, used twice.
            8 => "v[#v + 1] = top(0)".to_owned(),
            9 => "do local t = top(0) if type(t) == 'table' then t[#t + 1] = t end end".to_owned(),
            10 => {
                depth += 1;
                format!(
                    "do local t = table.remove(v) for i = 1, {} do t = {{t}} end v[#v + 1] = t end",
                    arg % 80
                )
            }
            11 => "do local t = top(0) v[#v + 1] = {t, t, t, t, t, t, t, t} end".to_owned(),
            12 => "v[#v + 1] = setmetatable({}, {__index = function() return 1 end})".to_owned(),
            13 => "v[#v + 1] = print".to_owned(),
            14 => format!("v[#v + 1] = {}", f64::from(arg) / 7.0),
            _ => "table.remove(v)".to_owned(),
        };
        code.push_str(&line);
        code.push('\n');
        if code.len() > 64 << 10 || depth > 64 {
            break;
        }
    }
    let call = match data.first().copied().unwrap_or(0) % 3 {
        0 => "return echo(top(0))",
        1 => "return typed(top(2), top(1), top(0))",
        _ => "return count(top(2), top(1), top(0))",
    };
    code.push_str(call);
    code
}

fuzz_target!(|data: &[u8]| {
    let sandbox = sandbox();
    let code = program(data);
    shared::block_on(async {
        let outcome = sandbox.eval(&code).await;
        shared::assert_reportable(&outcome);
        if let Err(e) = &outcome {
            // Arguments a capability cannot take are the script's error
            // (caught or not), or a limit; never a host stop.
            assert!(
                matches!(
                    e.kind,
                    ErrorKind::Capability
                        | ErrorKind::Runtime
                        | ErrorKind::InvalidValue
                        | ErrorKind::InstructionLimit
                        | ErrorKind::MemoryLimit
                        | ErrorKind::StringSize
                        | ErrorKind::CallDepth
                ),
                "{code}\n{e:#}"
            );
        }
        shared::assert_serving(sandbox).await;
    });
});
