//! The `moonbox-bench` binary: a bad option is a usage error that exits 2
//! with a message that says what to fix, never a panic.

use std::process::{Command, Stdio};

#[test]
fn bad_options_exit_2_and_say_why() {
    let cases = [
        (
            vec!["--sessions", "1000,10"],
            "--sessions must be ascending counts above zero",
        ),
        (
            vec!["--sessions", "0,10"],
            "--sessions must be ascending counts above zero",
        ),
        (vec!["--samples", "lots"], "invalid value 'lots'"),
        (vec!["--part", "everything"], "invalid value 'everything'"),
    ];
    for (args, needle) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_moonbox-bench"))
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("the moonbox-bench binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
            "{args:?}: {stderr}"
        );
    }
}

/// A part the run measures in a child process is this binary started
/// again with `--part`: it prints its figure as JSON.
#[test]
fn a_part_prints_its_figure_as_json() {
    let out = Command::new(env!("CARGO_BIN_EXE_moonbox-bench"))
        .args(["--part", "density", "--sessions", "1,2"])
        .stdin(Stdio::null())
        .output()
        .expect("the moonbox-bench binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // (sessions, RSS per session, PSS per session)
    let figures: Vec<(usize, f64, f64)> =
        serde_json::from_slice(&out.stdout).expect("the part prints JSON");
    let counts: Vec<usize> = figures.iter().map(|&(n, _, _)| n).collect();
    assert_eq!(counts, [1, 2]);
}
