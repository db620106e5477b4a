//! The session's files under arbitrary operations: the input is read as a
//! program of file operations (open in every mode, write, read in every
//! format, seek, close, remove, rename, `os.tmpname`, `io.lines`,
//! `loadfile`, `dofile`, `require`) on names made of arbitrary bytes (`..`,
//! `/`, NUL, long runs), over files mounted read-only. Whatever it does:
//! the eval ends with a Lua error or a guest limit, never an internal
//! error or a trap; the files it reports are named as the contract says
//! (normalised, relative, at most 4,096 bytes) and are never the mounted
//! ones; they fit in the memory limit; and the session goes on.
#![no_main]

mod shared;

use std::fmt::Write as _;
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use moonbox::{ErrorKind, Limits, Sandbox, Script};

const MAX_MEMORY: u64 = 4 << 20;

fn sandbox() -> &'static Sandbox {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| {
        let limits = Limits {
            max_instructions: 500_000,
            max_memory_bytes: MAX_MEMORY,
            max_string_bytes: 1 << 20,
            fuel: Some(500_000_000),
            timeout: Duration::from_secs(5),
            ..Limits::default()
        };
        Sandbox::builder()
            .limits(limits)
            .build()
            .expect("the sandbox builds")
    })
}

/// A Lua string literal whose value is exactly `bytes`.
fn literal(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in bytes {
        let _ = write!(out, "\\{b}");
    }
    out.push('"');
    out
}

/// Reads the input a byte at a time.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    /// A name: a few well-known ones, or up to 32 raw bytes, or a long run.
    fn name(&mut self) -> String {
        let names: [&[u8]; 10] = [
            b"a.txt",
            b"./a.txt",
            b"/a.txt",
            b"../../a.txt",
            b"dir/b.lua",
            b"mounted.txt",
            b"lib/mod.lua",
            b"a\0b",
            b"",
            b"dir/",
        ];
        match self.byte().unwrap_or(0) {
            n @ 0..=199 => literal(names[usize::from(n) % names.len()]),
            n @ 200..=249 => {
                let len = usize::from(n - 200).min(self.0.len());
                let (raw, rest) = self.0.split_at(len);
                self.0 = rest;
                literal(raw)
            }
            n => format!("('x'):rep({})", 4000 + usize::from(n) * 10),
        }
    }
}

/// The Lua program the input stands for. Each operation is wrapped in
/// `pcall`, so a failing one (a closed file, a bad mode) does not end it.
fn program(data: &[u8]) -> String {
    let mut input = Input(data);
    let mut code = String::from("local f = {}\nlocal function slot(i) return f[i % 4] end\n");
    while let Some(op) = input.byte() {
        let slot = input.byte().unwrap_or(0) % 4;
        let line = match op % 14 {
            0 => {
                let modes = ["r", "w", "a", "r+", "w+", "a+", "rb", "x", ""];
                let mode = modes[usize::from(input.byte().unwrap_or(0)) % modes.len()];
                format!("f[{slot}] = io.open({}, '{mode}')", input.name())
            }
            1 => format!(
                "slot({slot}):write(('{}'):rep({}))",
                char::from(b'a' + input.byte().unwrap_or(0) % 26),
                u32::from(input.byte().unwrap_or(0)) * 97
            ),
            2 => {
                let formats = ["'a'", "'l'", "'L'", "'n'", "7", "0", "'a', 'l'"];
                let format = formats[usize::from(input.byte().unwrap_or(0)) % formats.len()];
                format!("slot({slot}):read({format})")
            }
            3 => {
                let whence = ["set", "cur", "end"][usize::from(input.byte().unwrap_or(0)) % 3];
                let offset = i32::from(input.byte().unwrap_or(0) as i8) * 13;
                format!("slot({slot}):seek('{whence}', {offset})")
            }
            4 => format!("slot({slot}):close()"),
            5 => format!("os.remove({})", input.name()),
            6 => format!("os.rename({}, {})", input.name(), input.name()),
            7 => format!("f[{slot}] = io.open(os.tmpname(), 'w')"),
            8 => format!("for l in io.lines({}) do end", input.name()),
            9 => format!("loadfile({})", input.name()),
            10 => format!("dofile({})", input.name()),
            11 => "require('lib.mod')".to_owned(),
            12 => format!("slot({slot}):flush() slot({slot}):setvbuf('no')"),
            _ => format!("f[{slot}] = io.tmpfile()"),
        };
        let _ = writeln!(code, "pcall(function() {line} end)");
    }
    code
}

/// A name as the contract reports it.
fn is_normalised(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= Limits::MAX_FILE_NAME_BYTES
        && !name.starts_with('/')
        && !name.ends_with('/')
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

fuzz_target!(|data: &[u8]| {
    shared::block_on(async {
        let mut session = sandbox().session(()).await.expect("a session");
        let script = Script::new(program(data))
            .file("mounted.txt", "one\ntwo\n3\n")
            .file("lib/mod.lua", "return {}");
        let outcome = session.run(script).await;
        shared::assert_reportable(&outcome);
        let files = match &outcome {
            Ok(out) => &out.files,
            Err(e) => {
                assert!(
                    matches!(
                        e.kind,
                        ErrorKind::Runtime
                            | ErrorKind::MemoryLimit
                            | ErrorKind::InstructionLimit
                            | ErrorKind::StringSize
                            | ErrorKind::OutputLimit
                    ),
                    "{e}"
                );
                &e.files
            }
        };
        let mut total = 0;
        for file in files {
            assert!(is_normalised(&file.name), "{:?}", file.name);
            assert!(
                file.name != "mounted.txt" && file.name != "lib/mod.lua",
                "a mounted file came back: {:?}",
                file.name
            );
            total += file.bytes.len() as u64;
        }
        assert!(total <= MAX_MEMORY, "{total} bytes of files");
        let again = session
            .eval("return io.open('mounted.txt'):read('a')")
            .await
            .expect("the session goes on");
        assert_eq!(again.values, [serde_json::json!("one\ntwo\n3\n")]);
    });
});
