//! `moonbox serve` as a process: it refuses a public address without keys,
//! answers a real HTTP client, and on SIGTERM finishes the eval in flight
//! before it exits 0.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

fn serve(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_moonbox"));
    command.arg("serve").args(args);
    command
}

#[test]
fn a_public_address_without_keys_is_refused_before_listening() {
    let out = serve(&["--addr", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("without API keys"), "{stderr}");
    assert!(stderr.contains("--keys"), "{stderr}");
}

#[test]
fn a_bad_keys_file_or_flag_is_a_usage_error() {
    let dir = std::env::temp_dir().join(format!("moonbox-serve-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys = dir.join("keys.json");
    std::fs::write(
        &keys,
        r#"{"tenants": [{"name": "a", "key_sha256": "xyz"}]}"#,
    )
    .unwrap();
    let out = serve(&["--addr", "127.0.0.1:0", "--keys", keys.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("64 hex digits"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();

    for (flag, value) in [
        ("--max-running", "0"),
        ("--max-sessions", "10001"),
        ("--max-queued", "-1"),
        ("--drain-timeout", "forever"),
        ("--max-connections", "0"),
        ("--max-connections", "65537"),
        ("--header-timeout", "11m"),
        ("--body-timeout", "0s"),
    ] {
        let out = serve(&[flag, value]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
    }
}

/// Starts the server on a port the system picks; returns it and its
/// address, read from the line it prints on stderr.
fn start(args: &[&str]) -> (Child, String, BufReader<std::process::ChildStderr>) {
    let mut child = serve(&[&["--addr", "127.0.0.1:0"], args].concat())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            break None;
        }
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest.split_whitespace().next().map(str::to_owned);
        }
    };
    match addr {
        Some(addr) => (child, addr, stderr),
        None => {
            let _ = child.kill();
            let status = child.wait();
            panic!("serve exited before it listened: {status:?}");
        }
    }
}

#[tokio::test]
async fn sigterm_drains_the_eval_in_flight_then_exits_0() {
    let (mut child, addr, mut stderr) = start(&[
        "--drain-timeout",
        "20s",
        "--max-instructions",
        "1000000000",
        "--timeout",
        "20s",
    ]);
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/v1/eval");
    // Most of a second of Lua, so that SIGTERM lands mid-eval.
    let code = "local n = 0 for i = 1, 1e8 do n = n + i end return n";
    let in_flight = tokio::spawn({
        let client = client.clone();
        let url = url.clone();
        async move {
            let body = json!({ "code": code }).to_string();
            let response = client.post(url).body(body).send().await.unwrap();
            (response.status(), response.text().await.unwrap())
        }
    });
    // SIGTERM once the eval runs.
    let metrics = format!("http://{addr}/metrics");
    let began = std::time::Instant::now();
    while !client
        .get(&metrics)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
        .lines()
        .any(|l| l == "moonbox_evals_running 1")
    {
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "the eval never started"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let (status, text) = in_flight.await.unwrap();
    assert_eq!(status, reqwest::StatusCode::OK, "{text}");
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        report["values"],
        json!([5_000_000_050_000_000_i64]),
        "{report}"
    );
    assert!(
        report["stats"]["wall_time_us"].as_u64().unwrap() > 100_000,
        "the eval was still running at SIGTERM: {report}"
    );
    let exit = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(exit.code(), Some(0));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(rest.contains("draining"), "{rest}");
    assert!(rest.contains("drained, stopping"), "{rest}");
    // The log never carries the script.
    assert!(!rest.contains("1e8"), "{rest}");
}
