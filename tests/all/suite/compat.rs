//! The official Lua 5.4 test suite, run inside the sandbox (`just compat`
//! prints the per-file report). Files are read from `../shared/lua-5.4-tests`
//! byte for byte; the runner adapts the sandbox instead of the files.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use moonbox::{Limits, Sandbox};

/// What a file needs relaxed, and why.
struct File {
    name: &'static str,
    /// Sandboxed names the file needs back, each with its reason.
    allow: &'static [(&'static str, &'static str)],
    /// Why the file is not run, for files that cannot pass by design.
    skip: Option<&'static str>,
    /// Where the runner adapts what the file meets rather than the sandbox:
    /// Lua run before the file in its session, and exact lines of the file
    /// replaced, each with its reason.
    adapt: Adapt,
}

/// See [`File::adapt`].
#[derive(Clone, Copy)]
struct Adapt {
    prelude: Option<(&'static str, &'static str)>,
    lines: &'static [(&'static str, &'static str, &'static str)],
}

const NONE: Adapt = Adapt {
    prelude: None,
    lines: &[],
};

const DEBUG: (&str, &str) = (
    "debug",
    "the file tests the debug library or uses it to inspect frames",
);
const SETHOOK: (&str, &str) = (
    "debug.sethook",
    "the file tests hooks; a script hook replaces the instruction hook on its thread, so only the outer wall bounds that thread",
);
const DUMP: (&str, &str) = (
    "string.dump",
    "the file checks functions round-tripped through binary chunks",
);
const BINARY: (&str, &str) = ("binary-chunks", "the file loads the chunks it dumps");

const FILES: &[File] = &[
    File {
        name: "api.lua",
        allow: &[],
        skip: Some("needs the C test library T, which only a native build can link"),
        adapt: NONE,
    },
    File {
        name: "attrib.lua",
        allow: &[
            DEBUG,
            (
                "package",
                "the file checks the messages of Lua's C searchers, which the sandbox removes",
            ),
        ],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "big.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "bitwise.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "calls.lua",
        allow: &[DEBUG, DUMP, BINARY],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "closure.lua",
        allow: &[DEBUG],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "code.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "constructs.lua",
        allow: &[DEBUG],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "coroutine.lua",
        allow: &[DEBUG, SETHOOK],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "cstack.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "db.lua",
        allow: &[DEBUG, SETHOOK, DUMP, BINARY],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "errors.lua",
        allow: &[
            DEBUG,
            (
                "io",
                "the file checks error messages that name FILE* values (io.stdin, io.input)",
            ),
            DUMP,
            BINARY,
        ],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "events.lua",
        allow: &[DEBUG],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "files.lua",
        allow: &[DEBUG, DUMP, BINARY],
        skip: None,
        adapt: Adapt {
            prelude: Some((
                "local getenv = os.getenv os.getenv = function(name) if name == 'PATH' then return '/usr/bin' end return getenv(name) end",
                "the file asserts that PATH is set; the sandbox's environment is empty",
            )),
            lines: &[],
        },
    },
    File {
        name: "gc.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "gengc.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "goto.lua",
        allow: &[DEBUG],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "literals.lua",
        allow: &[DEBUG],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "locals.lua",
        allow: &[DEBUG, SETHOOK],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "main.lua",
        allow: &[],
        skip: Some("runs the stand-alone lua executable as a subprocess"),
        adapt: NONE,
    },
    File {
        name: "math.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "nextvar.lua",
        allow: &[(
            "io",
            "the file uses io.stdin as a userdata table key; io still finds no files",
        )],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "pm.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "sort.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "strings.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "tpack.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "utf8.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "vararg.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
    File {
        name: "verybig.lua",
        allow: &[],
        skip: None,
        adapt: NONE,
    },
];

/// Helper modules of the suite, offered through `require` as a host would.
const MODULES: &[&str] = &["bwcoercion", "tracegc"];

/// The limits a user would raise for a heavy job.
fn limits() -> Limits {
    Limits {
        max_instructions: 20_000_000_000,
        max_call_depth: 1_000_000,
        max_string_bytes: 256 << 20,
        max_memory_bytes: 1 << 30,
        max_output_bytes: 64 << 20,
        fuel: Some(Limits::MAX_FUEL),
        timeout: Duration::from_secs(300),
        ..Limits::default()
    }
}

fn suite_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/lua-5.4-tests");
    assert!(
        dir.join("all.lua").is_file(),
        "the official Lua 5.4 test suite is missing: expected it at {} (the shared/ folder beside the project)",
        dir.display()
    );
    dir
}

/// Runs one file, in deterministic mode when asked; returns Ok(seconds) or
/// the failure.
async fn run(dir: &std::path::Path, file: &File, deterministic: bool) -> Result<f64, String> {
    let mut source = std::fs::read(dir.join(file.name)).map_err(|e| format!("cannot read: {e}"))?;
    for (from, to, _) in file.adapt.lines {
        let at = source
            .windows(from.len())
            .position(|w| w == from.as_bytes())
            .ok_or_else(|| format!("the line to adapt is not in the file: {from}"))?;
        source.splice(at..at + from.len(), to.bytes());
    }
    let mut builder = Sandbox::builder().limits(limits());
    if deterministic {
        builder = builder.deterministic(moonbox::Determinism::default());
    }
    for (name, _) in file.allow {
        builder = builder.allow(*name);
    }
    for module in MODULES {
        let text = std::fs::read_to_string(dir.join(format!("{module}.lua")))
            .map_err(|e| e.to_string())?;
        builder = builder.module(*module, text);
    }
    let sandbox = builder.build().map_err(|e| e.to_string())?;
    let mut session = sandbox.session(()).await.map_err(|e| e.to_string())?;
    // What all.lua sets for a run without the C test library and without I/O.
    session
        .eval("_soft = true _port = true _nomsg = true")
        .await
        .map_err(|e| e.to_string())?;
    if let Some((prelude, _)) = file.adapt.prelude {
        session.eval(prelude).await.map_err(|e| e.to_string())?;
    }
    // The file is loaded by Lua's own `load`, from a literal that spells its
    // exact bytes with escapes: files with non-UTF-8 bytes in their string
    // literals then run unchanged, and the values a file returns are ignored.
    let runner = format!(
        "local f = assert(load({}, '@{}', 't')) f()",
        lua_literal(&source),
        file.name
    );
    let started = Instant::now();
    match session.eval_chunk(&runner, "runner").await {
        Ok(_) => Ok(started.elapsed().as_secs_f64()),
        Err(e) => Err(format!("{e}")),
    }
}

/// A Lua string literal whose value is exactly `bytes`.
fn lua_literal(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 4 + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b' '..=b'~' => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs ../shared/lua-5.4-tests and lua5.4; run with `just compat`"]
async fn official_suite_runs_inside_the_sandbox() {
    run_suite(false).await;
}

/// Deterministic mode must not change what the suite sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs ../shared/lua-5.4-tests and lua5.4; run with `just compat`"]
async fn official_suite_runs_in_deterministic_mode() {
    run_suite(true).await;
}

async fn run_suite(deterministic: bool) {
    let mode = if deterministic {
        "in deterministic mode"
    } else {
        "inside the sandbox"
    };
    let dir = suite_dir();
    let mut report = Vec::new();
    let mut passed = 0;
    let mut failed = Vec::new();
    for file in FILES {
        if let Some(reason) = file.skip {
            report.push(format!("| {} | skipped | {reason} |", file.name));
            continue;
        }
        match run(&dir, file, deterministic).await {
            Ok(secs) => {
                passed += 1;
                let adapted: Vec<&str> = file
                    .adapt
                    .prelude
                    .map(|(_, why)| why)
                    .into_iter()
                    .chain(file.adapt.lines.iter().map(|(_, _, why)| *why))
                    .collect();
                let note = if adapted.is_empty() {
                    String::new()
                } else {
                    format!(" (adapted: {})", adapted.join("; "))
                };
                report.push(format!("| {} | passes | {secs:.2} s{note} |", file.name));
            }
            Err(e) => {
                report.push(format!("| {} | FAILS | {e} |", file.name));
                failed.push(file.name);
            }
        }
    }
    println!(
        "{} of {} official test files pass {mode}",
        passed,
        FILES.len()
    );
    println!("{}", report.join("\n"));
    assert!(
        failed.is_empty(),
        "files that fail: {failed:?}\n{}",
        report.join("\n")
    );
}
