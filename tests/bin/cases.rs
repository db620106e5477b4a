//! Runs the shared case list through the Rust host and prints one JSON line
//! per case: `cargo run -p moonbox-tests --bin cases [-- CASES.json]`.
//! `runtimes/check.py` compares the lines with every other host's.

use std::path::PathBuf;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let path = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../runtimes/cases.json"
            ))
        });
    let file = match moonbox_tests::cases::load(&path) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    for case in &file.cases {
        println!("{}", moonbox_tests::cases::run(&file, case).await);
    }
    ExitCode::SUCCESS
}
