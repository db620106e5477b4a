//! Every fuzz target, built as `cargo test` builds it (without coverage
//! instrumentation), runs each of its seed inputs in `fuzz/seeds/TARGET`:
//! the targets' own assertions hold on inputs that reach every mode they
//! have, and the harnesses keep building and running between fuzzing
//! campaigns. The seeds are also the corpus `just fuzz` starts from.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The seed files of `target`, sorted.
fn seeds(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no seeds", dir.display());
    files
}

/// Runs the libFuzzer binary on every seed of `target`: it must exit
/// successfully having executed each of them.
fn replay(target: &str, binary: &str) {
    let files = seeds(target);
    let out = Command::new(binary)
        // libFuzzer runs the files given and exits; its own limits stay
        // above the targets' (a slow or large seed is a target's failure).
        .arg("-rss_limit_mb=4096")
        .arg("-timeout=60")
        .args(&files)
        .output()
        .unwrap_or_else(|e| panic!("{binary}: {e}"));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{target} failed on a seed:\n{log}");
    for file in &files {
        let executed = format!("Executed {}", file.display());
        assert!(
            log.contains(&executed),
            "{target} did not run {file:?}:\n{log}"
        );
    }
}

#[test]
fn eval_runs_its_seeds() {
    replay("eval", env!("CARGO_BIN_EXE_eval"));
}

#[test]
fn json_boundary_runs_its_seeds() {
    replay("json_boundary", env!("CARGO_BIN_EXE_json_boundary"));
}

#[test]
fn capability_args_runs_its_seeds() {
    replay("capability_args", env!("CARGO_BIN_EXE_capability_args"));
}

#[test]
fn files_runs_its_seeds() {
    replay("files", env!("CARGO_BIN_EXE_files"));
}

#[test]
fn check_runs_its_seeds() {
    replay("check", env!("CARGO_BIN_EXE_check"));
}

#[test]
fn serve_requests_runs_its_seeds() {
    replay("serve_requests", env!("CARGO_BIN_EXE_serve_requests"));
}

#[test]
fn mcp_messages_runs_its_seeds() {
    replay("mcp_messages", env!("CARGO_BIN_EXE_mcp_messages"));
}

#[test]
fn cli_args_runs_its_seeds() {
    replay("cli_args", env!("CARGO_BIN_EXE_cli_args"));
}

/// A seed directory per target and a target per seed directory, so that a
/// new target cannot go without seeds.
#[test]
fn every_target_has_seeds() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .expect("the manifest");
    let targets: Vec<&str> = manifest
        .lines()
        .filter_map(|line| line.strip_prefix("name = \""))
        .filter_map(|rest| rest.strip_suffix('"'))
        .filter(|name| *name != "moonbox-fuzz")
        .collect();
    let mut dirs: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds"))
            .expect("fuzz/seeds")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
    dirs.sort();
    let mut sorted = targets.clone();
    sorted.sort();
    assert_eq!(sorted, dirs, "fuzz targets and seed directories differ");
}
