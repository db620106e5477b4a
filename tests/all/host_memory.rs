//! Host memory per eval is bounded by `Limits::max_host_bytes_per_eval`:
//! each test drives one channel (a capability argument, a log event's
//! fields, an error, a returned value) to its bound in a process of its
//! own, and measures that process's peak resident memory over what it held
//! before the eval.
//!
//! The measuring runs in a child: this test binary, started again on the
//! ignored test `host_memory::child` with the case in the environment, so
//! that no other test shares its peak. The child resets the kernel's
//! peak-RSS mark (`/proc/self/clear_refs`) after a first eval has compiled
//! and started everything, so the peak it reports is the eval's own.

use std::process::Command;
use std::time::Duration;

use moonbox::{Capability, CapabilityError, ErrorKind, Limits, Sandbox};

const CASE: &str = "MOONBOX_HOST_MEMORY_CASE";

fn limits() -> Limits {
    Limits {
        max_memory_bytes: 32 << 20,
        max_string_bytes: 16 << 20,
        max_output_bytes: 16 << 20,
        max_instructions: 500_000_000,
        timeout: Duration::from_secs(60),
        ..Limits::default()
    }
}

/// A table of `n` references to one small object: about 8 bytes of JSON
/// text each, and a hundred times that as a tree on the host.
fn many(n: u32) -> String {
    format!("local one = {{x = 1}} local many = {{}} for i = 1, {n} do many[i] = one end")
}

/// Each case: its script and the kind it must end with (`None`: success).
fn case(name: &str) -> (String, Option<ErrorKind>) {
    match name {
        "argument" => (
            format!("{} host.take(many)", many(1_000_000)),
            Some(ErrorKind::Capability),
        ),
        "log" => (
            format!("{} log('info', 'big', {{many = many}})", many(1_000_000)),
            None,
        ),
        "error" => (
            "error(('\\1'):rep(12 * 1024 * 1024))".to_owned(),
            Some(ErrorKind::Runtime),
        ),
        "value" => (
            format!("{} return many", many(1_000_000)),
            Some(ErrorKind::InvalidValue),
        ),
        other => panic!("no case {other}"),
    }
}

fn status(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"));
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a number of kB");
    kb * 1024
}

/// The child: runs one case and prints the eval's peak over its start.
/// Ignored, and a no-op without the case in the environment.
#[tokio::test]
#[ignore = "run by the host_memory tests, in a process of its own"]
async fn child() {
    let Ok(name) = std::env::var(CASE) else {
        return;
    };
    let take = Capability::<()>::sync("host.take", |_, (_,): (serde_json::Value,)| {
        Ok::<_, CapabilityError>(true)
    });
    let sb = Sandbox::builder()
        .capability(take)
        .limits(limits())
        .build()
        .unwrap();
    sb.eval("return 1").await.expect("warms up");
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak-RSS mark resets");
    let before = status("VmRSS:");
    let (code, kind) = case(&name);
    let outcome = sb.eval(&code).await;
    let peak = status("VmHWM:");
    assert_eq!(outcome.as_ref().err().map(|e| e.kind), kind, "{name}");
    println!("PEAK {}", peak.saturating_sub(before));
}

fn measure(name: &str) -> u64 {
    let out = Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "host_memory::child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CASE, name)
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{name}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // libtest writes the test's name on the line the child prints on.
    stdout
        .split("PEAK ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{name}: no PEAK line in {stdout}"))
}

fn within_bound(name: &str) {
    let bound = limits().max_host_bytes_per_eval();
    let peak = measure(name);
    assert!(
        peak <= bound,
        "{name}: the eval took the host {} MiB past its start, over the {} MiB bound",
        peak >> 20,
        bound >> 20
    );
}

#[test]
fn a_capability_argument_stays_within_the_bound() {
    within_bound("argument");
}

#[test]
fn a_log_event_stays_within_the_bound() {
    within_bound("log");
}

#[test]
fn an_error_stays_within_the_bound() {
    within_bound("error");
}

#[test]
fn a_returned_value_stays_within_the_bound() {
    within_bound("value");
}
