//! Scale-out over NATS: workers in a queue group answer evals, sessions
//! stay on the worker that opened them, capabilities can be served by the
//! application, and [`RemoteSandbox`] is the client.
//!
//! Subjects, under a prefix (`moonbox` by default):
//!
//! | subject | who answers | body |
//! |---|---|---|
//! | `P.claim` | one worker of the queue group `P.workers` | empty; answers `{"worker", "claim", "ttl_ms"}` |
//! | `P.worker.W.eval` | worker `W` only | an eval request, as `POST /v1/eval`, with the header `Moonbox-Claim` |
//! | `P.worker.W.open` | worker `W` only | `{"limits"?}`, with the header `Moonbox-Claim` |
//! | `P.worker.W.session.S.eval` | worker `W` only | as `POST /v1/sessions/{id}/eval` |
//! | `P.worker.W.session.S.close` | worker `W` only | empty |
//! | `P.eval` | one worker of the queue group | an eval request, in one round trip |
//! | `P.sessions.open` | one worker of the queue group | `{"limits"?}`, in one round trip |
//! | `P.cap.NAME` | the application | the capability's arguments, a JSON array |
//!
//! A fresh eval or session open first claims a worker (`P.claim`), then
//! sends the request to that worker's own subject. A claim runs nothing,
//! so a claim lost while a worker leaves the queue group is simply claimed
//! again; a worker that drains still runs the evals it granted claims for
//! (and refuses a session open, which its client then claims elsewhere),
//! and leaves its own subjects only once no claim it granted can still be
//! used. So a drain loses no request. `P.eval` and
//! `P.sessions.open` take a request in one round trip, for clients without
//! claims; a request on them that the bus sends a worker in the moment it
//! leaves the queue group can go unanswered, and its client times out.
//!
//! A session id is `W.S`: the worker's id and the session's, so a client
//! finds its worker from the id, and a worker that has gone has no
//! subscriber left, which the client reports as a lost session.
//!
//! A worker answers with the same JSON as the HTTP API; a refusal is
//! `{"refused": {"status", "kind", "message", "retry_after_secs"?}}`.

mod capability;
mod client;
mod worker;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::{ApiError, Error, retry_secs};

pub use capability::{DEFAULT_REMOTE_CALL_BUDGET, remote_capability};
pub use client::{RemoteError, RemoteSandbox, RemoteSession};
pub use worker::Worker;
pub use worker::answer_message;

/// The subject prefix when none is set.
pub const DEFAULT_PREFIX: &str = "moonbox";

/// The header that carries a claim on a worker's own eval and open
/// subjects.
pub const CLAIM_HEADER: &str = "Moonbox-Claim";

/// How soon after asking for a claim a client must send its request; a
/// client whose claim came later claims again. A worker holds a claim for
/// twice as long, so the request has time to travel.
pub const CLAIM_USE_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// How a worker or a client reaches NATS: the server URL, credentials and
/// TLS.
///
/// ```
/// let config = moonbox_serve::NatsConfig::new("nats://127.0.0.1:4222")
///     .user_and_password("worker", "s3cret")
///     .prefix("moonbox");
/// assert!(config.validate().is_ok());
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct NatsConfig {
    /// The server URLs, comma-separated (`nats://host:4222`, `tls://…`).
    pub url: String,
    /// The subject prefix: letters, digits, `-` and `_`, dot-separated.
    pub prefix: String,
    /// Credentials, if the server asks for them.
    pub auth: NatsAuth,
    /// A CA certificate (PEM) to trust for the server's TLS certificate.
    pub tls_ca: Option<PathBuf>,
    /// A client certificate and key (PEM) for mutual TLS.
    pub tls_client: Option<(PathBuf, PathBuf)>,
    /// Refuse a connection without TLS.
    pub tls_required: bool,
    /// The prefix of this connection's reply subjects, in place of
    /// `_INBOX`: with one per role (or per application), subject
    /// permissions can keep each from reading the others' replies.
    pub inbox_prefix: Option<String>,
}

/// NATS credentials.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum NatsAuth {
    /// No credentials.
    #[default]
    None,
    /// A user and password.
    UserPassword(String, String),
    /// A token.
    Token(String),
    /// An NKey seed (`SU…`).
    Nkey(String),
    /// A `.creds` file (a JWT and an NKey seed).
    CredsFile(PathBuf),
}

impl std::fmt::Debug for NatsAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret itself.
        f.write_str(match self {
            NatsAuth::None => "None",
            NatsAuth::UserPassword(..) => "UserPassword(..)",
            NatsAuth::Token(_) => "Token(..)",
            NatsAuth::Nkey(_) => "Nkey(..)",
            NatsAuth::CredsFile(_) => "CredsFile(..)",
        })
    }
}

impl std::fmt::Debug for NatsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsConfig")
            .field("url", &redacted(&self.url))
            .field("prefix", &self.prefix)
            .field("auth", &self.auth)
            .field("tls_ca", &self.tls_ca)
            .field("tls_client", &self.tls_client)
            .field("tls_required", &self.tls_required)
            .field("inbox_prefix", &self.inbox_prefix)
            .finish()
    }
}

/// The URLs to print: as given, or a placeholder when they hold an `@`
/// (credentials, which may themselves hold `/`, `,` or `:`).
pub(crate) fn redacted(urls: &str) -> String {
    if urls.contains('@') {
        "(a URL with credentials, not shown)".to_owned()
    } else {
        urls.to_owned()
    }
}

impl NatsConfig {
    /// The URLs, with any credentials in them hidden: what to print.
    pub fn display_url(&self) -> String {
        redacted(&self.url)
    }

    /// No credentials, no TLS required, the default prefix.
    pub fn new(url: impl Into<String>) -> NatsConfig {
        NatsConfig {
            url: url.into(),
            prefix: DEFAULT_PREFIX.to_owned(),
            auth: NatsAuth::None,
            tls_ca: None,
            tls_client: None,
            tls_required: false,
            inbox_prefix: None,
        }
    }

    /// Sets [`NatsConfig::inbox_prefix`].
    pub fn inbox_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.inbox_prefix = Some(prefix.into());
        self
    }

    /// Sets [`NatsConfig::prefix`].
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Authenticates with a user and password.
    pub fn user_and_password(
        mut self,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.auth = NatsAuth::UserPassword(user.into(), password.into());
        self
    }

    /// Sets [`NatsConfig::auth`].
    pub fn auth(mut self, auth: NatsAuth) -> Self {
        self.auth = auth;
        self
    }

    /// Trusts this CA (PEM) for the server's certificate, and requires TLS.
    pub fn tls_ca(mut self, ca: PathBuf) -> Self {
        self.tls_ca = Some(ca);
        self.tls_required = true;
        self
    }

    /// Presents this client certificate and key (PEM), and requires TLS.
    pub fn tls_client(mut self, cert: PathBuf, key: PathBuf) -> Self {
        self.tls_client = Some((cert, key));
        self.tls_required = true;
        self
    }

    /// Checks the prefixes and the URL.
    ///
    /// # Errors
    /// [`Error::Config`] for a prefix that is not plain subject tokens, or
    /// a URL with credentials in it.
    pub fn validate(&self) -> Result<(), Error> {
        if self.url.contains('@') {
            return Err(Error::Config(
                "the NATS URL carries credentials (user:password@); give them apart (a creds file, a user and a password file) so that they are never printed"
                    .to_owned(),
            ));
        }
        if !is_subject(&self.prefix) {
            return Err(Error::Config(format!(
                "the NATS prefix '{}' is not usable; use letters, digits, '-' and '_' in dot-separated tokens",
                self.prefix
            )));
        }
        if let Some(inbox) = &self.inbox_prefix
            && !is_subject(inbox)
        {
            return Err(Error::Config(format!(
                "the NATS inbox prefix '{inbox}' is not usable; use letters, digits, '-' and '_' in dot-separated tokens"
            )));
        }
        Ok(())
    }

    /// Connects to NATS.
    ///
    /// # Errors
    /// [`Error::Config`] for a bad prefix; [`Error::Nats`] when the
    /// credentials cannot be read or the server cannot be reached or
    /// refuses them.
    ///
    /// # Cancel safety
    /// Dropping the future drops the half-made connection.
    pub async fn connect(&self) -> Result<async_nats::Client, Error> {
        self.validate()?;
        let mut options = async_nats::ConnectOptions::new()
            .name("moonbox")
            .connection_timeout(Duration::from_secs(5))
            // Requests time out by their own deadlines.
            .request_timeout(None);
        options = match &self.auth {
            NatsAuth::None => options,
            NatsAuth::UserPassword(user, password) => {
                options.user_and_password(user.clone(), password.clone())
            }
            NatsAuth::Token(token) => options.token(token.clone()),
            NatsAuth::Nkey(seed) => options.nkey(seed.clone()),
            NatsAuth::CredsFile(path) => options.credentials_file(path).await.map_err(|e| {
                Error::Nats(format!(
                    "cannot read the credentials file '{}': {e}",
                    path.display()
                ))
            })?,
        };
        if let Some(ca) = &self.tls_ca {
            options = options.add_root_certificates(ca.clone());
        }
        if let Some((cert, key)) = &self.tls_client {
            options = options.add_client_certificate(cert.clone(), key.clone());
        }
        options = options.require_tls(self.tls_required);
        if let Some(inbox) = &self.inbox_prefix {
            options = options.custom_inbox_prefix(inbox.clone());
        }
        options.connect(self.url.as_str()).await.map_err(|e| {
            Error::Nats(format!(
                "cannot connect to NATS at {}: {e}",
                redacted(&self.url)
            ))
        })
    }
}

/// Whether `s` is dot-separated tokens of letters, digits, `-` and `_`.
pub(crate) fn is_subject(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|token| {
            !token.is_empty()
                && token
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        })
}

/// The JSON of a refusal on the bus.
pub(crate) fn refused(e: &ApiError) -> Value {
    let mut refused = json!({
        "status": e.status.as_u16(),
        "kind": e.kind,
        "message": e.message,
    });
    if let Some(after) = e.retry_after {
        refused["retry_after_secs"] = json!(retry_secs(after));
    }
    let mut answer = json!({ "refused": refused });
    if let Some(report) = &e.report {
        answer["report"] = report.clone();
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_plain_subject_tokens() {
        for good in ["moonbox", "acme.moonbox", "a-b_c.d1"] {
            assert!(is_subject(good), "{good}");
        }
        for bad in ["", ".", "a..b", "a.*", "a.>", "a b", "a.", "ü"] {
            assert!(!is_subject(bad), "{bad}");
        }
        assert!(
            NatsConfig::new("nats://x")
                .prefix("a.>")
                .validate()
                .is_err()
        );
        let inbox = |p: &str| NatsConfig::new("nats://x").inbox_prefix(p).validate();
        assert!(inbox("_INBOX_app").is_ok());
        let err = inbox("_INBOX.*").unwrap_err().to_string();
        assert!(err.contains("inbox prefix '_INBOX.*'"), "{err}");
    }

    #[test]
    fn credentials_in_a_url_are_refused_and_never_shown() {
        assert_eq!(
            redacted("nats://a:4222,tls://b:4222"),
            "nats://a:4222,tls://b:4222"
        );
        for secret in [
            "nats://u:hunter2@a:4222",
            "nats://u:hun/ter2@a",
            "nats://u:hun,ter2@a",
        ] {
            assert!(!redacted(secret).contains("hunter2") && !redacted(secret).contains("ter2"));
        }
        let config = NatsConfig::new("nats://user:hunter2@a:4222");
        let err = config.validate().unwrap_err().to_string();
        assert!(
            err.contains("carries credentials") && !err.contains("hunter2"),
            "{err}"
        );
        assert!(!format!("{config:?}").contains("hunter2"));
    }

    #[test]
    fn credentials_never_show_in_debug() {
        let config = NatsConfig::new("nats://x").user_and_password("u", "hunter2");
        assert!(!format!("{config:?}").contains("hunter2"));
        let config = config.auth(NatsAuth::Token("tok-123".into()));
        assert!(!format!("{config:?}").contains("tok-123"));
    }
}
