//! Scale-out on NATS with real parts: a `nats-server` started here on
//! loopback, `moonbox serve --nats` workers as processes, the crate's
//! `RemoteSandbox` as the client, and a remote capability served by this
//! test process (the application). Needs `nats-server` on PATH (`.ci/run`
//! installs Debian's), so every test here is ignored by a plain `cargo test`;
//! `just nats-test` runs them (`cargo test --test cli -- --ignored nats::`).

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use moonbox::Script;
use moonbox_serve::{NatsConfig, RemoteError, RemoteSandbox};
use serde_json::{Value, json};

/// A `nats-server` on a free loopback port, stopped on drop.
struct NatsServer {
    child: Child,
    url: String,
    _dir: Option<TempDir>,
}

impl NatsServer {
    /// Stops the server for `down`, then starts an open one on the same
    /// port: every client loses its connection and reconnects.
    fn restart_open(&mut self, down: Duration) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(down);
        let port = self.url.rsplit(':').next().unwrap().to_owned();
        self.child = Command::new(nats_server())
            .args(["-a", "127.0.0.1", "-p", &port])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
    }
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("moonbox-nats-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// The `nats-server` binary: `NATS_SERVER`, else the one on PATH, else
/// Debian's, which installs it in /usr/sbin.
fn nats_server() -> PathBuf {
    if let Some(path) = std::env::var_os("NATS_SERVER") {
        return PathBuf::from(path);
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("nats-server"))
        .find(|candidate| candidate.is_file());
    on_path.unwrap_or_else(|| PathBuf::from("/usr/sbin/nats-server"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl NatsServer {
    /// Starts `nats-server`; `config` is the text of a config file (its
    /// `listen` is added here), or `None` for an open server.
    fn start(config: Option<&str>) -> NatsServer {
        let port = free_port();
        let mut command = Command::new(nats_server());
        let dir = config.map(|text| {
            let dir = temp_dir(&format!("conf{port}"));
            let file = dir.0.join("nats.conf");
            std::fs::write(&file, format!("listen: 127.0.0.1:{port}\n{text}")).unwrap();
            command.arg("-c").arg(&file);
            dir
        });
        if config.is_none() {
            command.args(["-a", "127.0.0.1", "-p", &port.to_string()]);
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server is installed (apt install nats-server, or set NATS_SERVER)");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let began = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                began.elapsed() < Duration::from_secs(10),
                "nats-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        NatsServer {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            _dir: dir,
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `moonbox serve --nats` process.
struct Worker {
    child: Child,
    id: String,
    http: String,
    log: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    fn start(url: &str, args: &[&str]) -> Worker {
        let mut child = Command::new(env!("CARGO_BIN_EXE_moonbox"))
            .args(["serve", "--addr", "127.0.0.1:0", "--nats", url])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::new(Mutex::new(String::new()));
        let (mut id, mut http) = (None, None);
        let mut line = String::new();
        while id.is_none() || http.is_none() || !log.lock().unwrap().contains("subscribed") {
            line.clear();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the worker exited before it subscribed:\n{}",
                    log.lock().unwrap()
                );
            }
            log.lock().unwrap().push_str(&line);
            if let Some(rest) = line.split("NATS worker ").nth(1) {
                id = rest.split_whitespace().next().map(str::to_owned);
            }
            if let Some(rest) = line.split("listening on http://").nth(1) {
                http = rest.split_whitespace().next().map(str::to_owned);
            }
        }
        // Keep reading, so that the pipe never fills.
        let sink = log.clone();
        let reader = std::thread::spawn(move || {
            let mut line = String::new();
            while stderr.read_line(&mut line).unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Worker {
            child,
            id: id.unwrap(),
            http: http.unwrap(),
            log,
            reader: Some(reader),
        }
    }

    /// The worker's Prometheus text.
    async fn metrics(&self) -> String {
        reqwest::get(format!("http://{}/metrics", self.http))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// Waits until the worker runs an eval.
    async fn wait_running(&self) {
        let began = Instant::now();
        while !self
            .metrics()
            .await
            .lines()
            .any(|l| l == "moonbox_evals_running 1")
        {
            assert!(
                began.elapsed() < Duration::from_secs(10),
                "the eval never started"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Evals this worker finished, from its metrics.
    async fn evals(&self) -> u64 {
        self.metrics()
            .await
            .lines()
            .filter(|l| l.starts_with("moonbox_evals_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn wait(mut self) -> (Option<i32>, String) {
        let status = self.child.wait().unwrap();
        // The reader thread ends with the pipe.
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        let log = self.log.lock().unwrap().clone();
        (status.code(), log)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serves `P.cap.secret.get` as the application: the secret stays here.
async fn serve_secret(config: NatsConfig) -> tokio::task::JoinHandle<()> {
    let client = config.connect().await.unwrap();
    let mut requests = client.subscribe("moonbox.cap.secret.get").await.unwrap();
    client.flush().await.unwrap();
    tokio::spawn(async move {
        while let Some(message) = requests.next().await {
            let args: Vec<Value> = serde_json::from_slice(&message.payload).unwrap_or_default();
            let answer = match args.first().and_then(Value::as_str) {
                Some(name) => json!({"ok": format!("s3cret-for-{name}")}),
                None => json!({"error": "secret.get takes a name"}),
            };
            if let Some(reply) = message.reply {
                let _ = client.publish(reply, answer.to_string().into()).await;
            }
        }
    })
}

/// A client that takes a session's worker as gone after half a second
/// without a subscriber (the tests lose workers on purpose).
async fn remote(url: &str) -> RemoteSandbox {
    let client = NatsConfig::new(url).connect().await.unwrap();
    RemoteSandbox::new(client)
        .timeout(Duration::from_secs(20))
        .session_grace(Duration::from_millis(500))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn three_workers_share_the_load_keep_sessions_pinned_and_survive_a_loss() {
    let nats = NatsServer::start(None);
    let _secret = serve_secret(NatsConfig::new(nats.url.clone())).await;
    let flags = [
        "--remote-capability",
        "secret.get",
        "--max-instructions",
        "100000000000",
        "--timeout",
        "30s",
    ];
    let workers: Vec<Worker> = (0..3).map(|_| Worker::start(&nats.url, &flags)).collect();
    let remote = remote(&nats.url).await;

    // A bounded load: 150 evals, 12 at a time. Each is answered once, with
    // its own result.
    let limit = Arc::new(tokio::sync::Semaphore::new(12));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..150_i64 {
        let remote = remote.clone();
        let permit = limit.clone().acquire_owned().await.unwrap();
        tasks.spawn(async move {
            let report = remote.run(Script::new("return n * 2").input("n", i)).await;
            drop(permit);
            (i, report)
        });
    }
    let mut answered = vec![0; 150];
    while let Some(joined) = tasks.join_next().await {
        let (i, report) = joined.unwrap();
        let report = report.unwrap_or_else(|e| panic!("eval {i} failed: {e}"));
        assert!(report.ok, "{report:?}");
        assert_eq!(report.values, [json!(i * 2)]);
        answered[usize::try_from(i).unwrap()] += 1;
    }
    assert!(answered.iter().all(|&n| n == 1));
    // Spread over every worker, and counted once in all.
    let mut total = 0;
    for worker in &workers {
        let evals = worker.evals().await;
        assert!(evals > 0, "worker {} ran no eval", worker.id);
        total += evals;
    }
    assert_eq!(total, 150);

    // The capability is answered by this process; the workers never hold
    // the secret.
    let report = remote.eval("return secret.get('db')").await.unwrap();
    assert_eq!(report.values, [json!("s3cret-for-db")], "{report:?}");
    let report = remote.eval("return secret.get()").await.unwrap();
    let error = report.error.unwrap();
    assert!(
        error.message.contains("secret.get takes a name"),
        "{}",
        error.message
    );

    // Sessions stay on the worker that opened them.
    let mut sessions = Vec::new();
    for i in 0..9 {
        let mut session = remote.session().await.unwrap();
        session
            .run(Script::new("x = n").input("n", i))
            .await
            .unwrap();
        sessions.push((i, session));
    }
    let on = |id: &str| id.split('.').next().unwrap().to_owned();
    for (i, session) in &mut sessions {
        assert_eq!(session.eval("return x").await.unwrap().values, [json!(*i)]);
        assert!(workers.iter().any(|w| w.id == on(session.id())));
    }
    let victim = &workers[0];
    // A session on the worker about to go (open more until one lands there).
    let mut doomed = None;
    for _ in 0..60 {
        let session = remote.session().await.unwrap();
        if on(session.id()) == victim.id {
            doomed = Some(session);
            break;
        }
        session.close().await.unwrap();
    }
    let mut doomed = doomed.expect("the queue group sends some sessions to every worker");

    // Kill it mid-eval: that eval fails with a clear error, its sessions are
    // lost, and everything else keeps working.
    let short = remote.clone().timeout(Duration::from_secs(3));
    let mut in_flight_session = short.session().await.unwrap();
    while on(in_flight_session.id()) != victim.id {
        in_flight_session = short.session().await.unwrap();
    }
    let in_flight = tokio::spawn(async move {
        in_flight_session
            .eval("local t = 0 for i = 1, 1e10 do t = t + 1 end return t")
            .await
    });
    victim.wait_running().await;
    victim.signal("-KILL");
    let lost = in_flight.await.unwrap().unwrap_err();
    assert!(matches!(lost, RemoteError::Timeout(_)), "{lost}");
    let lost = doomed.eval("return 1").await.unwrap_err();
    assert!(matches!(lost, RemoteError::SessionLost { .. }), "{lost}");
    assert!(lost.to_string().contains("session lost"));
    for (i, session) in &mut sessions {
        let result = session.eval("return x").await;
        if on(session.id()) == victim.id {
            assert!(matches!(result, Err(RemoteError::SessionLost { .. })));
        } else {
            assert_eq!(result.unwrap().values, [json!(*i)]);
        }
    }
    for i in 0..30_i64 {
        let report = remote
            .run(Script::new("return n").input("n", i))
            .await
            .unwrap();
        assert_eq!(report.values, [json!(i)]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn a_worker_drains_on_sigterm_then_its_sessions_are_lost() {
    let nats = NatsServer::start(None);
    let worker = Worker::start(
        &nats.url,
        &["--max-instructions", "100000000000", "--timeout", "30s"],
    );
    let remote = remote(&nats.url).await;
    let mut session = remote.session().await.unwrap();
    let mut other = remote.session().await.unwrap();
    let in_flight = tokio::spawn(async move {
        let report = session
            .eval("local t = 0 for i = 1, 1e8 do t = t + 1 end return t")
            .await;
        (report, session)
    });
    worker.wait_running().await;
    worker.signal("-TERM");
    let (report, mut session) = in_flight.await.unwrap();
    let report = report.expect("the eval in flight finishes during the drain");
    assert_eq!(report.values, [json!(100_000_000)]);
    let (code, log) = worker.wait();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("nats worker draining"), "{log}");
    assert!(!log.contains("1e8"), "the log never carries code: {log}");
    for result in [session.eval("return 1").await, other.eval("return 1").await] {
        assert!(
            matches!(result, Err(RemoteError::SessionLost { .. })),
            "{result:?}"
        );
    }
    let none = remote.eval("return 1").await.unwrap_err();
    assert!(matches!(none, RemoteError::NoWorkers { .. }), "{none}");
}

/// The permissions docs/serve.md gives: workers answer the eval subjects
/// and ask `moonbox.cap.>`; an application asks evals and answers
/// capabilities; each role receives replies on its own inbox prefix, so
/// a second application on the bus cannot read the first one's reports.
const PERMISSIONS: &str = r#"
authorization {
  users = [
    {user: worker, password: worker-pass-0123, permissions: {
      publish: {allow: ["moonbox.cap.>"]}
      subscribe: {allow: ["moonbox.claim", "moonbox.eval", "moonbox.sessions.open", "moonbox.worker.>", "_INBOX_worker.>"]}
      allow_responses: true
    }}
    {user: app, password: app-pass-0123, permissions: {
      publish: {allow: ["moonbox.claim", "moonbox.eval", "moonbox.sessions.open", "moonbox.worker.>"]}
      subscribe: {allow: ["moonbox.cap.>", "_INBOX_app.>"]}
      allow_responses: true
    }}
    {user: other, password: other-pass-0123, permissions: {
      publish: {allow: ["moonbox.claim", "moonbox.eval", "moonbox.sessions.open", "moonbox.worker.>"]}
      subscribe: {allow: ["_INBOX_other.>"]}
      allow_responses: true
    }}
  ]
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn the_bus_needs_credentials_and_subject_permissions_hold() {
    let nats = NatsServer::start(Some(PERMISSIONS));
    let dir = temp_dir("creds");
    let password = dir.0.join("worker.pass");
    std::fs::write(&password, "worker-pass-0123\n").unwrap();
    let wrong = dir.0.join("wrong.pass");
    std::fs::write(&wrong, "not-the-password\n").unwrap();

    // Without credentials, or with the wrong ones, a worker does not start.
    for args in [
        vec![],
        vec![
            "--nats-user",
            "worker",
            "--nats-password-file",
            wrong.to_str().unwrap(),
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_moonbox"))
            .args(["serve", "--addr", "127.0.0.1:0", "--nats", &nats.url])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("cannot connect to NATS"), "{stderr}");
        assert!(!stderr.contains("not-the-password"), "{stderr}");
    }

    let _worker = Worker::start(
        &nats.url,
        &[
            "--nats-user",
            "worker",
            "--nats-password-file",
            password.to_str().unwrap(),
            "--nats-inbox-prefix",
            "_INBOX_worker",
            "--remote-capability",
            "secret.get",
        ],
    );
    let app = NatsConfig::new(nats.url.clone())
        .user_and_password("app", "app-pass-0123")
        .inbox_prefix("_INBOX_app");
    let _secret = serve_secret(app.clone()).await;
    let remote = RemoteSandbox::new(app.connect().await.unwrap()).timeout(Duration::from_secs(20));
    let report = remote.eval("return secret.get('api')").await.unwrap();
    assert_eq!(report.values, [json!("s3cret-for-api")], "{report:?}");

    // The application cannot pose as a worker: its subscription to the
    // eval subject is refused, so it never sees a request.
    let rogue = app.connect().await.unwrap();
    let mut sub = rogue.subscribe("moonbox.eval").await.unwrap();
    let _ = rogue.flush().await;
    for _ in 0..5 {
        assert_eq!(remote.eval("return 1").await.unwrap().values, [json!(1)]);
    }
    let stolen = tokio::time::timeout(Duration::from_millis(300), sub.next()).await;
    assert!(
        !matches!(stolen, Ok(Some(_))),
        "the application received an eval request"
    );

    // Another application on the bus runs evals on its own inbox, and
    // cannot read the first one's reports (nor with the default `_INBOX`
    // prefix, which it is not allowed at all).
    let other = NatsConfig::new(nats.url.clone())
        .user_and_password("other", "other-pass-0123")
        .inbox_prefix("_INBOX_other");
    let other_remote =
        RemoteSandbox::new(other.connect().await.unwrap()).timeout(Duration::from_secs(20));
    assert_eq!(
        other_remote.eval("return 2").await.unwrap().values,
        [json!(2)]
    );
    let snoop = other.connect().await.unwrap();
    let mut replies = snoop.subscribe("_INBOX_app.>").await.unwrap();
    let mut default_inbox = snoop.subscribe("_INBOX.>").await.unwrap();
    let _ = snoop.flush().await;
    for _ in 0..5 {
        let report = remote.eval("return secret.get('api')").await.unwrap();
        assert_eq!(report.values, [json!("s3cret-for-api")]);
    }
    for sub in [&mut replies, &mut default_inbox] {
        let read = tokio::time::timeout(Duration::from_millis(300), sub.next()).await;
        assert!(
            !matches!(read, Ok(Some(_))),
            "another application read this one's replies"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn past_its_drain_timeout_a_worker_cancels_its_evals_and_exits_0() {
    let nats = NatsServer::start(None);
    let worker = Worker::start(
        &nats.url,
        &[
            "--max-instructions",
            "100000000000",
            "--timeout",
            "60s",
            "--drain-timeout",
            "500ms",
        ],
    );
    let remote = remote(&nats.url).await;
    let mut session = remote.session().await.unwrap();
    let in_flight = tokio::spawn(async move {
        session
            .eval("print('started') local t = 0 for i = 1, 1e11 do t = t + 1 end return t")
            .await
    });
    worker.wait_running().await;
    let began = Instant::now();
    worker.signal("-TERM");
    let report = in_flight
        .await
        .unwrap()
        .expect("the cancelled eval is answered");
    assert_eq!(
        report.error.map(|e| e.kind),
        Some(moonbox::ErrorKind::Cancelled)
    );
    assert_eq!(report.output, "started\n");
    let (code, log) = worker.wait();
    assert_eq!(code, Some(0), "{log}");
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    assert!(log.contains("drain timeout passed"), "{log}");
}

/// Makes a CA and a server certificate for 127.0.0.1 with `openssl`; returns
/// the CA's and the server's certificate and key paths.
fn certificates(dir: &std::path::Path) -> (PathBuf, PathBuf, PathBuf) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl is installed");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    run(&[
        &["req", "-x509"][..],
        &ec,
        &[
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "1",
            "-subj",
            "/CN=moonbox test CA",
        ],
    ]
    .concat());
    run(&[
        &["req"][..],
        &ec,
        &[
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
    ]
    .concat());
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "1",
        "-extfile",
        "san.ext",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn over_tls_a_worker_trusts_only_the_given_ca() {
    let dir = temp_dir("tls");
    let (ca, cert, key) = certificates(&dir.0);
    let nats = NatsServer::start(Some(&format!(
        "tls {{ cert_file: {:?}, key_file: {:?} }}\n",
        cert.to_str().unwrap(),
        key.to_str().unwrap()
    )));
    let url = nats.url.replace("nats://", "tls://");

    // Without the CA, the server's certificate is not trusted.
    let out = Command::new(env!("CARGO_BIN_EXE_moonbox"))
        .args(["serve", "--addr", "127.0.0.1:0", "--nats", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot connect to NATS"), "{stderr}");
    assert!(stderr.to_lowercase().contains("certificate"), "{stderr}");

    let _worker = Worker::start(&url, &["--nats-tls-ca", ca.to_str().unwrap()]);
    let client = NatsConfig::new(url.clone())
        .tls_ca(ca.clone())
        .connect()
        .await
        .unwrap();
    let remote = RemoteSandbox::new(client).timeout(Duration::from_secs(20));
    assert_eq!(
        remote.eval("return 40 + 2").await.unwrap().values,
        [json!(42)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn a_worker_drained_under_load_loses_no_request() {
    let nats = NatsServer::start(None);
    let mut workers: Vec<Worker> = (0..3).map(|_| Worker::start(&nats.url, &[])).collect();
    let remote = remote(&nats.url).await;
    // Clients send evals back to back while one worker drains and exits.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut clients = tokio::task::JoinSet::new();
    for client in 0..8_i64 {
        let remote = remote.clone();
        let stop = stop.clone();
        clients.spawn(async move {
            let mut results = Vec::new();
            let mut i = client * 1_000_000;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let report = remote.run(Script::new("return n").input("n", i)).await;
                results.push((i, report));
                i += 1;
            }
            results
        });
    }
    let leaving = workers.remove(0);
    let began = Instant::now();
    while leaving.evals().await < 50 {
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "no load reached the worker"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    leaving.signal("-TERM");
    let (code, log) = leaving.wait();
    assert_eq!(code, Some(0), "{log}");
    // The others keep serving the same load for a while.
    let mut served = 0;
    for worker in &workers {
        served += worker.evals().await;
    }
    let began = Instant::now();
    loop {
        let mut now = 0;
        for worker in &workers {
            now += worker.evals().await;
        }
        if now >= served + 200 {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(20),
            "the others stopped serving"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (mut answered, mut failed) = (0, Vec::new());
    while let Some(joined) = clients.join_next().await {
        for (i, report) in joined.unwrap() {
            match report {
                Ok(report) => {
                    assert_eq!(report.values, [json!(i)]);
                    answered += 1;
                }
                Err(e) => failed.push(e.to_string()),
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} failed: {failed:?}",
        failed.len(),
        answered + failed.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn a_draining_worker_runs_what_it_granted_claims_for_and_nothing_else() {
    let nats = NatsServer::start(None);
    let worker = Worker::start(&nats.url, &["--max-instructions", "100000000000"]);
    let client = NatsConfig::new(nats.url.clone()).connect().await.unwrap();
    let ask = |subject: String, claim: Option<String>, body: Value| {
        let client = client.clone();
        async move {
            let mut headers = async_nats::HeaderMap::new();
            if let Some(claim) = claim {
                headers.insert(moonbox_serve::CLAIM_HEADER, claim.as_str());
            }
            let request = client.request_with_headers(subject, headers, body.to_string().into());
            let reply = tokio::time::timeout(Duration::from_secs(20), request)
                .await
                .expect("an answer within 20 s")?;
            Ok::<_, async_nats::RequestError>(
                serde_json::from_slice::<Value>(&reply.payload).unwrap(),
            )
        }
    };
    // Keep the worker busy, so that it is draining while it runs this.
    let remote = remote(&nats.url).await;
    let busy = tokio::spawn(async move {
        remote
            .eval("local t = 0 for i = 1, 3e7 do t = t + 1 end return t")
            .await
    });
    worker.wait_running().await;
    // Three claims, granted just before the drain; each holds the worker
    // for 10 s unless used.
    let mut claims = Vec::new();
    for _ in 0..3 {
        let claim = ask("moonbox.claim".into(), None, Value::Null)
            .await
            .unwrap();
        assert_eq!(claim["worker"], json!(worker.id), "{claim}");
        assert_eq!(claim["ttl_ms"], json!(10_000), "{claim}");
        claims.push(claim["claim"].as_str().unwrap().to_owned());
    }
    worker.signal("-TERM");
    let began = Instant::now();
    while !worker.log.lock().unwrap().contains("nats worker draining") {
        assert!(began.elapsed() < Duration::from_secs(10), "no drain");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let own = |op: &str| format!("moonbox.worker.{}.{op}", worker.id);
    // An eval on a claim granted before the drain runs.
    let report = ask(
        own("eval"),
        Some(claims[0].clone()),
        json!({"code": "return 'claimed'"}),
    )
    .await
    .unwrap();
    assert_eq!(report["values"], json!(["claimed"]), "{report}");
    // An eval without a claim, or with one used already, and a session
    // open even with a claim (the session could run nothing), are refused
    // as draining: they did not run.
    for (op, claim) in [
        ("eval", None),
        ("eval", Some(claims[0].clone())),
        ("open", Some(claims[1].clone())),
    ] {
        let refused = ask(own(op), claim, json!({})).await.unwrap();
        assert_eq!(refused["refused"]["kind"], "draining", "{op}: {refused}");
    }
    // The worker has left the queue group, so a new claim finds nobody.
    let none = ask("moonbox.claim".into(), None, Value::Null)
        .await
        .unwrap_err();
    assert_eq!(
        none.kind(),
        async_nats::client::RequestErrorKind::NoResponders
    );
    assert_eq!(busy.await.unwrap().unwrap().values, [json!(30_000_000)]);
    // The last claim still runs; with it used, the worker leaves at once
    // rather than at its expiry.
    let report = ask(
        own("eval"),
        Some(claims[2].clone()),
        json!({"code": "return 'last'"}),
    )
    .await
    .unwrap();
    assert_eq!(report["values"], json!(["last"]), "{report}");
    // With every claim used, the worker leaves in about two quiet spells of
    // 250 ms, not at the claims' expiry (10 s after they were granted).
    let began = Instant::now();
    let (code, log) = worker.wait();
    assert_eq!(code, Some(0), "{log}");
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "the worker waited {:?} after its last claim was used",
        began.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn the_client_refuses_bad_claims_and_says_when_none_is_answered() {
    let nats = NatsServer::start(None);
    let remote = remote(&nats.url).await;
    // Something on the claim subject that is not a worker: first it answers
    // ids that would not be a subject token, then nothing at all.
    let fake = NatsConfig::new(nats.url.clone()).connect().await.unwrap();
    let mut claims = fake
        .queue_subscribe("moonbox.claim", "moonbox.workers".into())
        .await
        .unwrap();
    fake.flush().await.unwrap();
    let answering = tokio::spawn(async move {
        let message = claims.next().await.unwrap();
        let bad = json!({"worker": "w1 x", "claim": "c1\r\nPUB moonbox.eval 0"});
        fake.publish(message.reply.unwrap(), bad.to_string().into())
            .await
            .unwrap();
        fake.flush().await.unwrap();
        // Then read claims without answering, counting them.
        let mut asked = 0;
        while let Ok(Some(_)) = tokio::time::timeout(Duration::from_secs(3), claims.next()).await {
            asked += 1;
        }
        asked
    });
    let refused = remote.eval("return 1").await.unwrap_err();
    assert!(matches!(refused, RemoteError::Transport(_)), "{refused}");

    let began = Instant::now();
    let unanswered = remote.eval("return 1").await.unwrap_err();
    assert!(
        matches!(unanswered, RemoteError::NoClaim { tries: 5, .. }),
        "{unanswered}"
    );
    assert!(
        unanswered.to_string().contains("nothing ran"),
        "{unanswered}"
    );
    // Each claim waited a second, not the client's whole timeout.
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(answering.await.unwrap(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn past_max_payload_a_call_fails_alone_and_an_answer_keeps_its_report() {
    let nats = NatsServer::start(Some("max_payload: 65536\n"));
    let _secret = serve_secret(NatsConfig::new(&nats.url)).await;
    let worker = Worker::start(&nats.url, &["--remote-capability", "secret.get"]);
    let remote = remote(&nats.url).await;
    let mut session = remote.session().await.unwrap();

    // Arguments past max_payload fail that call, with the reason, and the
    // worker stays on the bus: the session answers at once.
    let report = session
        .eval("local ok, e = pcall(secret.get, string.rep('x', 100000)) return ok, e")
        .await
        .unwrap();
    assert_eq!(report.values[0], json!(false), "{report:?}");
    let why = report.values[1].as_str().unwrap();
    assert!(why.contains("max_payload (65536 bytes)"), "{why}");
    let report = session.eval("return secret.get('db')").await.unwrap();
    assert_eq!(report.values, [json!("s3cret-for-db")]);

    // Remote calls are bounded by default: a loop of them stops at the
    // budget instead of loading the application without end.
    // (Its audit trail of a thousand calls is past this bus's max_payload,
    // so the report comes back without it, beside reply_too_large.)
    let report = match remote
        .eval("local n = 0 while true do secret.get('x') n = n + 1 end")
        .await
    {
        Ok(report) => report,
        Err(RemoteError::Refused {
            report: Some(report),
            ..
        }) => *report,
        Err(e) => panic!("{e}"),
    };
    let error = report.error.expect("the loop ends at the budget");
    assert!(error.message.contains("at most 1000 times"), "{error:?}");
    assert!(
        (1000..=1001).contains(&report.stats.capability_calls),
        "{:?}",
        report.stats
    );

    // An answer past max_payload is refused with the report minus its
    // values: what the script printed and cost is kept.
    let refused = remote
        .eval("print('made it') return string.rep('x', 100000)")
        .await
        .unwrap_err();
    let RemoteError::Refused { kind, report, .. } = refused else {
        panic!("{refused}");
    };
    assert_eq!(kind, "reply_too_large");
    let report = report.expect("the report is kept");
    assert_eq!(report.output, "made it\n");
    assert!(report.values.is_empty());
    let (_, log) = {
        worker.signal("-TERM");
        worker.wait()
    };
    assert!(!log.to_lowercase().contains("disconnect"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn a_session_survives_its_worker_reconnecting_to_nats() {
    let mut nats = NatsServer::start(None);
    let _worker = Worker::start(&nats.url, &[]);
    // The default grace, which a reconnection must fit in.
    let remote = remote(&nats.url)
        .await
        .session_grace(RemoteSandbox::DEFAULT_SESSION_GRACE);
    let mut session = remote.session().await.unwrap();
    session.eval("x = 41").await.unwrap();
    // Both the client and the worker lose the bus and reconnect; whichever
    // comes back first, the session is not taken as lost.
    nats.restart_open(Duration::from_millis(200));
    let began = Instant::now();
    let report = loop {
        match session.eval("return x + 1").await {
            Ok(report) => break report,
            // The client's own reconnection is not the session's loss.
            Err(RemoteError::Transport(_) | RemoteError::Timeout(_))
                if began.elapsed() < Duration::from_secs(20) =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(report.values, [json!(42)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn a_client_hoarding_claims_cannot_lock_others_out() {
    let nats = NatsServer::start(None);
    let _worker = Worker::start(&nats.url, &["--max-running", "2", "--max-queued", "6"]);
    // A client that asks for claims and never uses them, more than the
    // worker grants (2 running + 6 queued + 64 spare handlers = 72).
    let hoarder = NatsConfig::new(&nats.url).connect().await.unwrap();
    let mut granted = 0;
    let mut refused = 0;
    for _ in 0..100 {
        let answer = hoarder.request("moonbox.claim", "".into()).await.unwrap();
        let answer: Value = serde_json::from_slice(&answer.payload).unwrap();
        if answer.get("claim").is_some() {
            granted += 1;
        } else {
            assert_eq!(answer["refused"]["kind"], "overloaded", "{answer}");
            refused += 1;
        }
    }
    // A quarter of them.
    assert_eq!((granted, refused), (18, 82));
    // Another client is served all along.
    let remote = remote(&nats.url).await;
    for _ in 0..5 {
        let report = remote.eval("return 1").await.unwrap();
        assert_eq!(report.values, [json!(1)]);
    }
}

/// Two applications on one bus, each with its own worker pool (prefix),
/// inbox and capability subjects: docs/serve.md's layout for applications
/// that must not see each other's calls.
const TWO_APPLICATIONS: &str = r#"
authorization {
  users = [
    {user: worker_a, password: worker-a-pass-0123, permissions: {
      publish: {allow: ["appa.cap.>"]}
      subscribe: {allow: ["appa.claim", "appa.eval", "appa.sessions.open", "appa.worker.>", "_INBOX_worker_a.>"]}
      allow_responses: true
    }}
    {user: app_a, password: app-a-pass-0123, permissions: {
      publish: {allow: ["appa.claim", "appa.eval", "appa.sessions.open", "appa.worker.>"]}
      subscribe: {allow: ["appa.cap.>", "_INBOX_a.>"]}
      allow_responses: true
    }}
    {user: worker_b, password: worker-b-pass-0123, permissions: {
      publish: {allow: ["appb.cap.>"]}
      subscribe: {allow: ["appb.claim", "appb.eval", "appb.sessions.open", "appb.worker.>", "_INBOX_worker_b.>"]}
      allow_responses: true
    }}
    {user: app_b, password: app-b-pass-0123, permissions: {
      publish: {allow: ["appb.claim", "appb.eval", "appb.sessions.open", "appb.worker.>"]}
      subscribe: {allow: ["appb.cap.>", "_INBOX_b.>"]}
      allow_responses: true
    }}
  ]
}
"#;

/// Answers `SUBJECT` with `{"ok": "ANSWER-for-ARG"}` as an application.
async fn answer_capability(
    config: NatsConfig,
    subject: &'static str,
    answer: &'static str,
) -> (tokio::task::JoinHandle<()>, Arc<Mutex<Vec<String>>>) {
    let client = config.connect().await.unwrap();
    let mut requests = client.subscribe(subject).await.unwrap();
    client.flush().await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let task = tokio::spawn(async move {
        while let Some(message) = requests.next().await {
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&message.payload).into_owned());
            if let Some(reply) = message.reply {
                let reply_body = json!({"ok": answer}).to_string();
                let _ = client.publish(reply, reply_body.into()).await;
            }
        }
    });
    (task, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn applications_with_their_own_pools_never_see_each_others_capability_calls() {
    let nats = NatsServer::start(Some(TWO_APPLICATIONS));
    let dir = temp_dir("apps");
    let mut workers = Vec::new();
    for (who, prefix) in [("a", "appa"), ("b", "appb")] {
        let password = dir.0.join(format!("worker_{who}.pass"));
        std::fs::write(&password, format!("worker-{who}-pass-0123")).unwrap();
        let user = format!("worker_{who}");
        let inbox = format!("_INBOX_worker_{who}");
        workers.push(Worker::start(
            &nats.url,
            &[
                "--nats-user",
                &user,
                "--nats-password-file",
                password.to_str().unwrap(),
                "--nats-inbox-prefix",
                &inbox,
                "--nats-prefix",
                prefix,
                "--remote-capability",
                "secret.get",
            ],
        ));
    }
    let app = |who: &str| {
        NatsConfig::new(nats.url.clone())
            .user_and_password(format!("app_{who}"), format!("app-{who}-pass-0123"))
            .inbox_prefix(format!("_INBOX_{who}"))
    };
    let (_a_task, a_seen) = answer_capability(app("a"), "appa.cap.secret.get", "secret-of-a").await;
    let (_b_task, b_seen) = answer_capability(app("b"), "appb.cap.secret.get", "secret-of-b").await;
    // B also tries to listen to, and answer, A's capability subjects; the
    // bus refuses the subscription, so it never sees a call.
    let (_spy_task, spy_seen) =
        answer_capability(app("b"), "appa.cap.secret.get", "forged-by-b").await;

    let remote_a = RemoteSandbox::new(app("a").connect().await.unwrap())
        .prefix("appa")
        .timeout(Duration::from_secs(20));
    let remote_b = RemoteSandbox::new(app("b").connect().await.unwrap())
        .prefix("appb")
        .timeout(Duration::from_secs(20));
    for _ in 0..5 {
        let a = remote_a.eval("return secret.get('from-a')").await.unwrap();
        assert_eq!(a.values, [json!("secret-of-a")], "{a:?}");
        let b = remote_b.eval("return secret.get('from-b')").await.unwrap();
        assert_eq!(b.values, [json!("secret-of-b")], "{b:?}");
    }
    assert!(spy_seen.lock().unwrap().is_empty(), "B read A's calls");
    assert!(
        a_seen
            .lock()
            .unwrap()
            .iter()
            .all(|call| call.contains("from-a"))
    );
    assert!(
        b_seen
            .lock()
            .unwrap()
            .iter()
            .all(|call| call.contains("from-b"))
    );
    // Nor can B send work to A's pool, where A's capabilities answer.
    let b_on_a = RemoteSandbox::new(app("b").connect().await.unwrap())
        .prefix("appa")
        .timeout(Duration::from_secs(3));
    assert!(b_on_a.eval("return secret.get('stolen')").await.is_err());
    assert!(
        !a_seen
            .lock()
            .unwrap()
            .iter()
            .any(|call| call.contains("stolen"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn a_worker_whose_nats_server_is_gone_drains_without_waiting_for_it() {
    let mut nats = NatsServer::start(None);
    let worker = Worker::start(&nats.url, &["--drain-timeout", "60s"]);
    let remote = remote(&nats.url).await;
    // A claim granted and never used, which a drain would wait for.
    remote.eval("return 1").await.unwrap();
    let _ = nats.child.kill();
    let _ = nats.child.wait();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let began = Instant::now();
    worker.signal("-TERM");
    let (code, log) = tokio::task::spawn_blocking(move || worker.wait())
        .await
        .unwrap();
    assert_eq!(code, Some(0), "{log}");
    assert!(
        began.elapsed() < Duration::from_secs(8),
        "the drain took {:?}:\n{log}",
        began.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs nats-server; run with `just nats-test`"]
async fn args_stdin_and_files_cross_the_bus_both_ways() {
    let nats = NatsServer::start(None);
    let _worker = Worker::start(&nats.url, &[]);
    let remote = remote(&nats.url).await;
    // The request carries the arguments, standard input and mounted files
    // (text, and bytes as base64);
    // the report carries the files the script wrote.
    let script = Script::new(
        "local n = 0 for _ in io.lines('data/in.csv') do n = n + 1 end\n\
         local raw = io.open('bytes.bin', 'rb'):read('a')\n\
         io.open('count.txt', 'w'):write(n):close()\n\
         io.open('/tmp/copy.bin', 'wb'):write(raw):close()\n\
         return n, #raw, arg[1], select('#', ...), io.read('a')",
    )
    .file("data/in.csv", "a\nb\nc\n")
    .file("bytes.bin", vec![0_u8, 0xff])
    .args(["first", "second"])
    .stdin("piped");
    let report = remote.run(script).await.unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(
        report.values,
        [json!(3), json!(2), json!("first"), json!(2), json!("piped")]
    );
    let files = serde_json::to_value(&report.files).unwrap();
    assert_eq!(
        files,
        json!([
            {"name": "count.txt", "size": 1, "text": "3"},
            {"name": "tmp/copy.bin", "size": 2, "base64": "AP8="}
        ])
    );
    // In a session, the files stay on its worker for its later evals.
    let mut session = remote.session().await.unwrap();
    session
        .run(Script::new("io.open('kept.txt', 'w'):write('k'):close()").file("m.txt", "m"))
        .await
        .unwrap();
    let report = session
        .eval("return io.open('kept.txt'):read('a') .. io.open('m.txt'):read('a')")
        .await
        .unwrap();
    assert_eq!(report.values, [json!("km")]);
}
