//! The CLI's flag parsing on arbitrary arguments: the `run` flags exactly as
//! the binary parses them (its `args` module, included by path), then the
//! limits they set checked by the library. Whatever the arguments, parsing
//! and validation return a value or an error, never a panic, and every
//! accepted set of limits builds a working sandbox.
#![no_main]

#[path = "../../cli/src/args.rs"]
#[allow(
    dead_code,
    reason = "the fuzz target uses only the parsing half of the module"
)]
mod args;
#[path = "../../cli/src/input.rs"]
#[allow(dead_code, reason = "args.rs reads its files through this module")]
mod input;
mod shared;

use std::path::PathBuf;

use clap::Parser;
use libfuzzer_sys::fuzz_target;
use moonbox::Sandbox;

/// `moonbox run`'s arguments.
#[derive(Parser)]
struct Run {
    file: PathBuf,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    sandbox: args::SandboxArgs,
}

fuzz_target!(|data: &[u8]| {
    // Arguments are NUL-separated pieces of the input.
    let argv: Vec<String> = std::iter::once("run".to_owned())
        .chain(
            data.split(|&b| b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned()),
        )
        .collect();
    let Ok(run) = Run::try_parse_from(&argv) else {
        return;
    };
    let limits = run.sandbox.limits();
    // Only the limits are built: files named by --records or --module are
    // not read here.
    let built = Sandbox::builder().limits(limits).build();
    if let Ok(sandbox) = built {
        let out = shared::block_on(sandbox.eval("return 1"))
            .expect("accepted limits run a trivial chunk");
        assert_eq!(out.values, [serde_json::json!(1)]);
    }
});
