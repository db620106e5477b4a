//! The hostile-script corpus in `tests/hostile/`: every script states, on its
//! first line, the kind it must end with (`-- expect: <kind>` or `-- expect:
//! ok`, optionally followed by `-- returns: <json>`). Each runs in a
//! session and must end that way, within its limits. Afterwards the same
//! session must still run a clean eval when the guest's own limits stopped
//! the script, and must say it is poisoned when the host's outer wall did.

use std::path::{Path, PathBuf};
use std::time::Duration;

use moonbox::{
    Capability, CapabilityError, Determinism, ErrorKind, Limits, Records, Sandbox, SandboxBuilder,
};
use serde_json::Value;

/// The limits every hostile script runs under.
pub fn limits() -> Limits {
    Limits {
        max_instructions: 2_000_000,
        max_call_depth: 200,
        max_string_bytes: 1 << 20,
        max_memory_bytes: 16 << 20,
        max_output_bytes: 64 << 10,
        fuel: Some(2_000_000_000),
        timeout: Duration::from_secs(20),
        ..Limits::default()
    }
}

/// A session context holding a secret no script may see.
pub struct Secret(pub String);

pub const SECRET: &str = "sk-live-0d9f3c2a7b";

/// The sandbox hostile scripts run in: `records.get`, `auth.ping` (which
/// uses the secret on the host side), deterministic mode.
pub fn hostile_sandbox() -> Sandbox<Secret> {
    let records =
        Records::from_json(r#"{"123": {"name": "Ada", "visits": [1, 2]}}"#).expect("records parse");
    let ping = Capability::<Secret>::sync("auth.ping", |secret: &Secret, (): ()| {
        Ok::<_, CapabilityError>(secret.0.starts_with("sk-live"))
    });
    SandboxBuilder::<Secret>::new()
        .limits(limits())
        .capability(records.capability())
        .capability(ping)
        .deterministic(Determinism::default())
        .build()
        .expect("the hostile sandbox builds")
}

pub struct Case {
    pub path: PathBuf,
    pub expect: Option<ErrorKind>,
    pub returns: Option<Value>,
    pub code: String,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "lua") {
            out.push(path);
        }
    }
}

/// Every case in the corpus, sorted by path. Panics on a script without a
/// valid expectation, so no case can be added without one.
pub fn corpus() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("hostile");
    let mut paths = Vec::new();
    collect(&dir, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let code = std::fs::read_to_string(&path).expect("a UTF-8 script");
            let mut lines = code.lines();
            let expect = lines
                .next()
                .and_then(|l| l.strip_prefix("-- expect: "))
                .unwrap_or_else(|| {
                    panic!("{} does not start with '-- expect: <kind>'", path.display())
                })
                .trim();
            let expect = match expect {
                "ok" => None,
                kind => Some(
                    serde_json::from_value::<ErrorKind>(Value::String(kind.to_owned()))
                        .unwrap_or_else(|_| panic!("{}: unknown kind '{kind}'", path.display())),
                ),
            };
            let returns = lines
                .next()
                .and_then(|l| l.strip_prefix("-- returns: "))
                .map(|json| {
                    serde_json::from_str(json)
                        .unwrap_or_else(|e| panic!("{}: bad returns line: {e}", path.display()))
                });
            Case {
                path,
                expect,
                returns,
                code,
            }
        })
        .collect()
}

/// Runs one case; returns a description of what went wrong, if anything.
pub async fn check(sandbox: &Sandbox<Secret>, case: &Case) -> Option<String> {
    let name = case.path.display();
    let mut session = match sandbox.session(Secret(SECRET.into())).await {
        Ok(session) => session,
        Err(e) => return Some(format!("{name}: cannot start a session: {e}")),
    };
    let outcome = session.eval(&case.code).await;
    let limits = limits();
    let problem = match (&case.expect, &outcome) {
        (None, Ok(out)) => match &case.returns {
            Some(expected) if Value::Array(out.values.clone()) != *expected => Some(format!(
                "{name}: returned {:?}, expected {expected}",
                out.values
            )),
            _ => None,
        },
        (None, Err(e)) => Some(format!("{name}: expected success, got {e}")),
        (Some(kind), Ok(out)) => Some(format!(
            "{name}: expected {kind}, got values {:?}",
            out.values
        )),
        (Some(kind), Err(e)) if e.kind != *kind => {
            Some(format!("{name}: expected {kind}, got {e}"))
        }
        (Some(_), Err(e)) if e.stats.peak_memory_bytes > Some(limits.max_memory_bytes) => {
            Some(format!(
                "{name}: the heap reached {:?} bytes",
                e.stats.peak_memory_bytes
            ))
        }
        (Some(_), Err(e)) if e.stats.instructions > Some(limits.max_instructions + 1000) => Some(
            format!("{name}: ran {:?} instructions", e.stats.instructions),
        ),
        (Some(_), Err(_)) => None,
    };
    if let Some(problem) = problem {
        return Some(problem);
    }
    let text = moonbox::Report::from(&outcome).to_json().to_string();
    if text.contains(SECRET) {
        return Some(format!("{name}: the secret reached the result"));
    }
    // An error's report holds the output, the message, the traceback and
    // the call records, each bounded: escaped as JSON, at most six bytes
    // per byte of output and of the two 64 KiB texts, and the records.
    let max_error_report = 6 * (limits.max_output_bytes as usize + 2 * (64 << 10)) + (256 << 10);
    if outcome.is_err() && text.len() > max_error_report {
        return Some(format!(
            "{name}: the error's report is {} bytes, over {max_error_report}",
            text.len()
        ));
    }
    // Only the guest reports instruction counts: none means the host's
    // outer wall stopped the instance.
    let outer_wall = matches!(&outcome, Err(e) if e.stats.instructions.is_none());
    let after = session.eval("return 1 + 1").await;
    match (outer_wall, after) {
        (false, Ok(out)) if out.values == [serde_json::json!(2)] => None,
        (false, other) => Some(format!(
            "{name}: the session did not survive a guest limit: {other:?}"
        )),
        (true, Err(e)) if e.kind == ErrorKind::SessionPoisoned && session.is_poisoned() => None,
        (true, other) => Some(format!(
            "{name}: an outer-wall stop did not poison the session: {other:?}"
        )),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_script_ends_as_stated() {
    let cases = corpus();
    assert!(cases.len() >= 50, "the corpus has {} scripts", cases.len());
    let sandbox = hostile_sandbox();
    // Two workers, each running its share in order: the timeout is wall
    // clock, so the cases must not queue behind each other for the CPU.
    let cases = std::sync::Arc::new(cases);
    let workers = 2;
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let (sandbox, cases) = (sandbox.clone(), cases.clone());
            tokio::spawn(async move {
                let mut problems = Vec::new();
                for case in cases.iter().skip(w).step_by(workers) {
                    problems.extend(check(&sandbox, case).await);
                }
                problems
            })
        })
        .collect();
    let mut failures = Vec::new();
    for task in tasks {
        failures.extend(task.await.expect("the worker finishes"));
    }
    assert!(
        failures.is_empty(),
        "{} hostile scripts misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
