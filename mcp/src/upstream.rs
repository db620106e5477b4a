//! Code mode: the tools of other MCP servers, offered to Lua as typed
//! capabilities.
//!
//! [`Upstream::start`] connects to an MCP server, lists its tools, and
//! [`Upstream::capabilities`] turns each into a capability named
//! `<name>.<tool>` that takes one table of named arguments, checked
//! against the tool's input schema, and returns the tool's structured
//! content (or its text). A model then writes one script that calls many
//! tools, loops and filters locally, and returns only the result.
//!
//! An upstream is either a child process speaking MCP on its standard input
//! and output ([`Endpoint::Command`]) or a remote server over streamable
//! HTTP ([`Endpoint::Http`]), optionally with a bearer token. Either way its
//! credentials stay in the host: a child inherits this process's
//! environment (an API token), a remote server gets the token in a header,
//! and a script sees only what the tools return. The one variable a child
//! does not inherit is [`TOKEN_ENV`](crate::TOKEN_ENV), the MCP server's own
//! bearer token, which an upstream has no use for. The eval's timeout
//! covers every upstream call; a call cut short is cancelled upstream
//! (`notifications/cancelled`).

use std::sync::Arc;
use std::time::Duration;

use moonbox::{Capability, CapabilityError};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use serde_json::{Map, Value};

use crate::error::Error;

/// The most tools taken from one upstream server.
pub const MAX_TOOLS: usize = 256;
/// The longest description kept for one tool, in characters.
const MAX_DOC_CHARS: usize = 400;
/// The most bytes of text an upstream error message carries into Lua.
const MAX_ERROR_BYTES: usize = 2048;
/// How long an upstream server may take to start and list its tools.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to a remote upstream may take (TCP and TLS).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most bytes read from a remote upstream in one response (or one
/// event of a response stream); a larger one fails the call.
pub const MAX_RESPONSE_BYTES: usize = 16 << 20;
/// The longest bearer token accepted, in bytes.
pub const MAX_TOKEN_BYTES: usize = 8192;

/// What to connect to: a namespace for its tools and where the server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpstreamSpec {
    /// The Lua table its tools appear in (`github` for `github.search`);
    /// `None` takes the name the server reports.
    pub name: Option<String>,
    /// How to reach the server.
    pub endpoint: Endpoint,
}

/// Where an upstream server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A program started as a child process, speaking MCP on its standard
    /// input and output, killed when the upstream is dropped.
    Command {
        /// The program to run.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A remote server over streamable HTTP.
    Http(HttpEndpoint),
}

/// A remote MCP server's address and the bearer token sent to it.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpEndpoint {
    url: reqwest::Url,
    token: Option<String>,
}

impl HttpEndpoint {
    /// The server's MCP endpoint.
    pub fn url(&self) -> &reqwest::Url {
        &self.url
    }

    /// Whether a bearer token is sent with every request.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }
}

// The token never reaches a log through `{:?}`.
impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("url", &self.url.as_str())
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl UpstreamSpec {
    /// The command that starts a child server: this process's environment
    /// without [`TOKEN_ENV`](crate::TOKEN_ENV), killed when dropped.
    fn command(program: &str, args: &[String]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .env_remove(crate::TOKEN_ENV)
            .kill_on_drop(true);
        command
    }

    /// Parses `NAME=WHERE` or `WHERE`, where `WHERE` is an `http://` or
    /// `https://` URL (a remote server over streamable HTTP) or a command
    /// line. A command's arguments split at whitespace; single or double
    /// quotes keep a space inside one, and a backslash escapes the next
    /// character (outside single quotes).
    ///
    /// ```
    /// use moonbox_mcp::upstream::{Endpoint, UpstreamSpec};
    /// let spec = UpstreamSpec::parse("gh=github-mcp-server stdio --toolsets 'issues,repos'").unwrap();
    /// assert_eq!(spec.name.as_deref(), Some("gh"));
    /// let Endpoint::Command { program, args } = &spec.endpoint else { unreachable!() };
    /// assert_eq!(program, "github-mcp-server");
    /// assert_eq!(args, &["stdio", "--toolsets", "issues,repos"]);
    ///
    /// let spec = UpstreamSpec::parse("docs=https://mcp.example.com/mcp").unwrap();
    /// let Endpoint::Http(http) = &spec.endpoint else { unreachable!() };
    /// assert_eq!(http.url().host_str(), Some("mcp.example.com"));
    /// ```
    ///
    /// # Errors
    /// [`Error::Config`] for an empty command, an unclosed quote, a name
    /// that is not a Lua identifier, or a URL that does not parse, carries
    /// a user name or password (give a token with
    /// [`with_token`](Self::with_token)) or has a fragment.
    pub fn parse(text: &str) -> Result<UpstreamSpec, Error> {
        let (name, rest) = match text.split_once('=') {
            Some((name, rest)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
                (Some(name.to_owned()), rest)
            }
            _ => (None, text),
        };
        if let Some(name) = &name
            && !is_identifier(name)
        {
            return Err(Error::Config(format!(
                "upstream name '{name}' is not a Lua identifier (letters, digits and _, not starting with a digit)"
            )));
        }
        let rest = rest.trim();
        let lower = rest.get(..8).unwrap_or(rest).to_ascii_lowercase();
        let endpoint = if lower.starts_with("http://") || lower.starts_with("https://") {
            Endpoint::Http(parse_url(rest)?)
        } else {
            let mut words = split_words(rest)?.into_iter();
            let Some(program) = words.next() else {
                return Err(Error::Config(format!(
                    "upstream '{text}' has no command; use NAME=COMMAND ARGS or NAME=URL"
                )));
            };
            Endpoint::Command {
                program,
                args: words.collect(),
            }
        };
        Ok(UpstreamSpec { name, endpoint })
    }

    /// Sends `token` as `Authorization: Bearer <token>` with every request
    /// to a remote upstream. The token stays in the host: scripts, reports
    /// and `{:?}` never show it.
    ///
    /// # Errors
    /// [`Error::Config`] if the upstream is a command, the token is empty,
    /// longer than [`MAX_TOKEN_BYTES`] or holds characters other than
    /// visible ASCII, or the URL is plain `http://` to a host other than
    /// the loopback one (a token would cross the network in clear text).
    pub fn with_token(mut self, token: &str) -> Result<UpstreamSpec, Error> {
        let what = self.describe();
        let Endpoint::Http(http) = &mut self.endpoint else {
            return Err(Error::Config(format!(
                "upstream {what} is a command, not a URL; a token is for a remote upstream (a command inherits this process's environment)"
            )));
        };
        let token = token.trim();
        if token.is_empty() || token.len() > MAX_TOKEN_BYTES {
            return Err(Error::Config(format!(
                "the token for upstream {what} is empty or longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::Config(format!(
                "the token for upstream {what} holds a character other than visible ASCII"
            )));
        }
        if http.url.scheme() == "http" && !is_loopback(&http.url) {
            return Err(Error::Config(format!(
                "upstream {what} is plain http:// to {}; a token is only sent over https:// (or http:// to the loopback address)",
                http.url.host_str().unwrap_or_default()
            )));
        }
        http.token = Some(token.to_owned());
        Ok(self)
    }

    /// The name given, or where the server is: for messages before the
    /// server has reported its own name.
    fn describe(&self) -> String {
        match (&self.name, &self.endpoint) {
            (Some(name), _) => name.clone(),
            (None, Endpoint::Command { program, .. }) => program.clone(),
            (None, Endpoint::Http(http)) => http.url.to_string(),
        }
    }
}

/// A remote upstream's URL: `http` or `https`, no credentials, no fragment.
fn parse_url(text: &str) -> Result<HttpEndpoint, Error> {
    if text.contains(char::is_whitespace) {
        return Err(Error::Config(format!(
            "upstream URL '{text}' has a space in it; a remote upstream is one URL"
        )));
    }
    let url = reqwest::Url::parse(text)
        .map_err(|e| Error::Config(format!("upstream URL '{text}' does not parse: {e}")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::Config(format!(
            "upstream URL '{}' carries a user name or password; give a bearer token from a file instead",
            url.host_str().unwrap_or_default()
        )));
    }
    if url.fragment().is_some() {
        return Err(Error::Config(format!(
            "upstream URL '{text}' has a fragment (#...), which HTTP never sends"
        )));
    }
    Ok(HttpEndpoint { url, token: None })
}

fn is_loopback(url: &reqwest::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(domain)) => domain.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// A running upstream MCP server and the tools it offers.
pub struct Upstream {
    name: String,
    tools: Vec<(String, Tool)>,
    service: Arc<RunningService<RoleClient, ()>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("name", &self.name)
            .field(
                "tools",
                &self.tools.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// Starts the server (or connects to it), initializes MCP with it and
    /// lists its tools, all within `timeout`.
    ///
    /// # Errors
    /// [`Error::Upstream`] if the program cannot start or the server cannot
    /// be reached (or refuses the token), does not speak MCP,
    /// takes longer than `timeout`, offers more than [`MAX_TOOLS`] tools,
    /// or offers two tools whose Lua names collide.
    ///
    /// # Cancel safety
    /// Dropping the future kills the child (or drops the connection).
    pub async fn start(spec: &UpstreamSpec, timeout: Duration) -> Result<Upstream, Error> {
        let what = spec.describe();
        let fail = |why: String| Error::Upstream {
            name: what.clone(),
            message: why,
        };
        let work = async {
            let service = match &spec.endpoint {
                Endpoint::Command { program, args } => {
                    let (transport, stderr) =
                        TokioChildProcess::builder(UpstreamSpec::command(program, args))
                            .stderr(std::process::Stdio::piped())
                            .spawn()
                            .map_err(|e| fail(format!("cannot start '{program}': {e}")))?;
                    if let Some(stderr) = stderr {
                        tokio::spawn(forward_stderr(what.clone(), stderr));
                    }
                    ().serve(transport).await.map_err(|e| {
                        fail(format!(
                            "'{program}' did not complete the MCP handshake: {e}"
                        ))
                    })?
                }
                Endpoint::Http(http) => {
                    let transport = http_transport(http).map_err(fail)?;
                    ().serve(transport).await.map_err(|e| match e {
                        // The transport's own error holds the reason (a
                        // refused certificate, a 401), a few sources down.
                        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
                            fail(unreachable(http, &*error.error))
                        }
                        other => fail(format!(
                            "{} did not complete the MCP handshake: {other}",
                            http.url
                        )),
                    })?
                }
            };
            let tools = service
                .peer()
                .list_all_tools()
                .await
                .map_err(|e| fail(format!("cannot list its tools: {e}")))?;
            Ok::<_, Error>((service, tools))
        };
        let (service, tools) = tokio::time::timeout(timeout, work).await.map_err(|_| {
            fail(format!(
                "it did not start and list its tools within {} s",
                timeout.as_secs()
            ))
        })??;
        if tools.len() > MAX_TOOLS {
            return Err(fail(format!(
                "it offers {} tools, more than the {MAX_TOOLS} taken from one server",
                tools.len()
            )));
        }
        let name = match &spec.name {
            Some(name) => name.clone(),
            None => {
                let reported = service
                    .peer()
                    .peer_info()
                    .and_then(|info| info.server_info.as_ref().map(|i| i.name.clone()))
                    .unwrap_or_default();
                lua_name(&reported).ok_or_else(|| {
                    fail(format!(
                        "the server's name '{reported}' cannot name a Lua table; give one as NAME=COMMAND"
                    ))
                })?
            }
        };
        let mut named: Vec<(String, Tool)> = Vec::with_capacity(tools.len());
        for tool in tools {
            let Some(lua) = lua_name(&tool.name) else {
                return Err(fail(format!(
                    "tool '{}' has no letters or digits to name it in Lua",
                    tool.name
                )));
            };
            if let Some((_, other)) = named.iter().find(|(n, _)| *n == lua) {
                return Err(fail(format!(
                    "tools '{}' and '{}' would both be {name}.{lua} in Lua",
                    other.name, tool.name
                )));
            }
            named.push((lua, tool));
        }
        Ok(Upstream {
            name,
            tools: named,
            service: Arc::new(service),
        })
    }

    /// The Lua table the tools appear in.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tools' Lua names (`name.tool`), in the server's order.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|(lua, _)| format!("{}.{lua}", self.name))
            .collect()
    }

    /// One capability per tool: `name.tool{...}` calls it with the table as
    /// its arguments (`name.tool()` with none). Arguments are checked
    /// against the tool's input schema before the call; an upstream error
    /// result becomes a Lua error that `pcall` catches.
    pub fn capabilities<T: Send + Sync + 'static>(&self) -> Vec<Capability<T>> {
        self.tools
            .iter()
            .map(|(lua, tool)| {
                let service = self.service.clone();
                let remote = tool.name.to_string();
                let cap = Capability::new_async(
                    format!("{}.{lua}", self.name),
                    move |_ctx: Arc<T>, (args,): (Option<Value>,)| {
                        let service = service.clone();
                        let remote = remote.clone();
                        async move { call(&service, remote, args).await }
                    },
                )
                .with_description(doc(tool));
                let params = Value::Object((*tool.input_schema).clone());
                let result = tool
                    .output_schema
                    .as_ref()
                    .map(|s| Value::Object((**s).clone()));
                cap.schemas(vec![params], result)
            })
            .collect()
    }
}

/// The streamable HTTP transport to a remote upstream: TLS through rustls
/// with the *ring* provider and the platform's certificate store (on Linux
/// the system bundle, or the file `SSL_CERT_FILE` names), no redirects
/// (a token is never sent where it was not meant to go), and at most
/// [`MAX_RESPONSE_BYTES`] in one response or one event of a stream.
fn http_transport(
    http: &HttpEndpoint,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_platform_verifier())
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_no_client_auth();
    let client = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("moonbox-mcp/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot set up an HTTP client: {e}"))?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(http.url.as_str())
        .max_json_response_size(MAX_RESPONSE_BYTES)
        .max_sse_event_size(MAX_RESPONSE_BYTES);
    if let Some(token) = &http.token {
        config = config.auth_header(token.clone());
    }
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// Why a remote upstream could not be reached: a refused token said as
/// such, anything else with its causes.
fn unreachable(http: &HttpEndpoint, error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let refused = matches!(
        error.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_))
    );
    match (refused, http.has_token()) {
        (true, true) => format!("{} refused the bearer token (HTTP 401 or 403)", http.url),
        (true, false) => format!(
            "{} requires authorization (HTTP 401) and no bearer token was given for it",
            http.url
        ),
        (false, _) => format!("cannot reach {}: {}", http.url, causes(error)),
    }
}

/// An error and its sources, one after another (`a: b: c`), for an error
/// whose own message does not say why (a refused certificate is three
/// sources down from "error sending request").
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    // rmcp's HTTP client error holds reqwest's without naming it a source.
    if let Some(StreamableHttpError::Client(inner)) =
        error.downcast_ref::<StreamableHttpError<reqwest::Error>>()
    {
        return causes(inner);
    }
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The longest line of an upstream's standard error passed on, in bytes.
const MAX_STDERR_LINE: usize = 512;
/// The most lines of one upstream's standard error passed on per window.
const MAX_STDERR_LINES: u32 = 50;
/// The window [`MAX_STDERR_LINES`] counts in.
const STDERR_WINDOW: Duration = Duration::from_secs(10);

/// Passes an upstream's standard error on to this process's, each line
/// prefixed with the upstream's name, cut at [`MAX_STDERR_LINE`] bytes, and
/// at most [`MAX_STDERR_LINES`] lines per [`STDERR_WINDOW`] (then a count of
/// those dropped), so that a chatty or hostile upstream can neither flood
/// the client's log nor pass as this server. Reads until the pipe closes,
/// so the upstream never blocks on it.
async fn forward_stderr(name: String, stderr: impl tokio::io::AsyncRead + Unpin) {
    let mut lines = crate::lines::LineReader::new(stderr, MAX_STDERR_LINE);
    let (mut shown, mut dropped, mut since) = (0u32, 0u64, std::time::Instant::now());
    while let Some(line) = lines.next().await {
        if since.elapsed() >= STDERR_WINDOW {
            if dropped > 0 {
                eprintln!(
                    "moonbox mcp: upstream {name}: ({dropped} more lines of its standard error dropped)"
                );
            }
            (shown, dropped, since) = (0, 0, std::time::Instant::now());
        }
        if shown >= MAX_STDERR_LINES {
            dropped += 1;
            continue;
        }
        shown += 1;
        let text = String::from_utf8_lossy(&line.bytes);
        let text: String = text
            .trim_end()
            .chars()
            .filter(|c| !c.is_control() || *c == '\t')
            .collect();
        let more = if line.cut { " …" } else { "" };
        eprintln!("moonbox mcp: upstream {name}: {text}{more}");
    }
}

/// Calls one upstream tool and turns its result into the capability's.
async fn call(
    service: &RunningService<RoleClient, ()>,
    tool: String,
    args: Option<Value>,
) -> Result<Value, CapabilityError> {
    let arguments = match args {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        // The empty Lua table crosses as [].
        Some(Value::Array(items)) if items.is_empty() => Map::new(),
        Some(_) => {
            return Err(CapabilityError::new(
                "takes one table of named arguments, as in tool{name = value}",
            ));
        }
    };
    let params = CallToolRequestParams::new(tool).with_arguments(arguments);
    let result = service
        .peer()
        .call_tool(params)
        .await
        .map_err(|e| CapabilityError::new(format!("the upstream call failed: {e}")))?;
    result_value(result)
}

/// A tool result as the value Lua receives: the structured content when
/// there is some, else the text (one text block is a string; several, or
/// other kinds of content, are the content blocks themselves).
fn result_value(result: CallToolResult) -> Result<Value, CapabilityError> {
    if result.is_error == Some(true) {
        let text = text_of(&result.content);
        let text = if text.is_empty() {
            "the upstream tool reported an error".to_owned()
        } else {
            truncate(text, MAX_ERROR_BYTES)
        };
        return Err(CapabilityError::new(text));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    match result.content.as_slice() {
        [] => Ok(Value::Null),
        [ContentBlock::Text(text)] => Ok(Value::String(text.text.clone())),
        blocks => serde_json::to_value(blocks)
            .map_err(|e| CapabilityError::new(format!("cannot read the upstream result: {e}"))),
    }
}

fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// A tool's description for the model: its first paragraph, bounded.
fn doc(tool: &Tool) -> String {
    let text = tool.description.as_deref().unwrap_or_default();
    let first = text.split("\n\n").next().unwrap_or_default();
    let flat = first.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= MAX_DOC_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(MAX_DOC_CHARS - 3).collect();
    format!("{cut}...")
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_keyword(name)
}

fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "and"
            | "break"
            | "do"
            | "else"
            | "elseif"
            | "end"
            | "false"
            | "for"
            | "function"
            | "goto"
            | "if"
            | "in"
            | "local"
            | "nil"
            | "not"
            | "or"
            | "repeat"
            | "return"
            | "then"
            | "true"
            | "until"
            | "while"
    )
}

/// A tool or server name as a Lua identifier: every other character becomes
/// `_`, a leading digit or a keyword gets a leading `_`. `None` when nothing
/// of the name is a letter or digit.
fn lua_name(name: &str) -> Option<String> {
    if !name.chars().any(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let mut lua: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if lua.starts_with(|c: char| c.is_ascii_digit()) || is_keyword(&lua) {
        lua.insert(0, '_');
    }
    Some(lua)
}

/// Splits a command line into words: whitespace separates, quotes group,
/// a backslash escapes (not inside single quotes).
fn split_words(text: &str) -> Result<Vec<String>, Error> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), c) => word.push(c),
            (_, '\\') => match chars.next() {
                Some(next) => {
                    word.push(next);
                    in_word = true;
                }
                None => word.push('\\'),
            },
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(Error::Config(format!(
            "upstream command '{text}' has an unclosed quote"
        )));
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_child_does_not_inherit_the_bearer_token() {
        let command = UpstreamSpec::command("server", &["--flag".to_owned()]);
        let removed: Vec<_> = command
            .as_std()
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(key, _)| key.to_owned())
            .collect();
        assert_eq!(removed, [std::ffi::OsString::from(crate::TOKEN_ENV)]);
        assert_eq!(command.as_std().get_program(), "server");
    }

    fn command_of(spec: &UpstreamSpec) -> (&str, &[String]) {
        match &spec.endpoint {
            Endpoint::Command { program, args } => (program, args),
            Endpoint::Http(http) => panic!("{http:?} is not a command"),
        }
    }

    #[test]
    fn specs_take_an_optional_name_and_quoted_arguments() {
        let spec = UpstreamSpec::parse("python3 server.py --flag").unwrap();
        assert_eq!(spec.name, None);
        assert_eq!(
            command_of(&spec),
            (
                "python3",
                &["server.py".to_owned(), "--flag".to_owned()][..]
            )
        );
        let spec = UpstreamSpec::parse(r#"fs=npx -y "my server" a\ b 'x=y'"#).unwrap();
        assert_eq!(spec.name.as_deref(), Some("fs"));
        assert_eq!(command_of(&spec).1, ["-y", "my server", "a b", "x=y"]);
        assert!(UpstreamSpec::parse("gh=").is_err());
        assert!(UpstreamSpec::parse("").is_err());
        assert!(UpstreamSpec::parse("cmd 'open").is_err());
        assert!(UpstreamSpec::parse("end=cmd").is_err());
        assert!(UpstreamSpec::parse("9x=cmd").is_err());
        // An `=` inside the command is not a name.
        let spec = UpstreamSpec::parse("env A=1 cmd").unwrap();
        assert_eq!(spec.name, None);
        assert_eq!(command_of(&spec).0, "env");
    }

    #[test]
    fn a_url_is_a_remote_upstream_and_refuses_credentials_in_it() {
        let spec = UpstreamSpec::parse("docs=HTTPS://mcp.example.com/mcp?x=1").unwrap();
        let Endpoint::Http(http) = &spec.endpoint else {
            panic!("not http: {spec:?}")
        };
        assert_eq!(http.url().as_str(), "https://mcp.example.com/mcp?x=1");
        assert!(!http.has_token());
        // Without a name, the server's reported name is taken later.
        let spec = UpstreamSpec::parse("http://127.0.0.1:9/mcp").unwrap();
        assert_eq!(spec.name, None);
        for bad in [
            "docs=https://user:secret@mcp.example.com/mcp",
            "docs=https://mcp.example.com/mcp#part",
            "docs=https://mcp.example.com/mcp extra",
            "docs=https://",
        ] {
            let err = UpstreamSpec::parse(bad).unwrap_err().to_string();
            assert!(!err.contains("secret"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_token_goes_only_to_a_remote_upstream_over_tls_or_loopback() {
        let https = UpstreamSpec::parse("docs=https://mcp.example.com/mcp").unwrap();
        let spec = https.clone().with_token(" tok_123.abc \n").unwrap();
        let Endpoint::Http(http) = &spec.endpoint else {
            panic!("not http")
        };
        assert_eq!(http.token.as_deref(), Some("tok_123.abc"));
        assert!(!format!("{spec:?}").contains("tok_123"));
        for host in ["127.0.0.1:8080", "localhost", "[::1]:80"] {
            let plain = UpstreamSpec::parse(&format!("lo=http://{host}/mcp")).unwrap();
            assert!(plain.with_token("t").is_ok(), "{host}");
        }
        let remote = UpstreamSpec::parse("docs=http://mcp.example.com/mcp").unwrap();
        let err = remote.with_token("t").unwrap_err().to_string();
        assert!(err.contains("https://"), "{err}");
        let command = UpstreamSpec::parse("gh=server").unwrap();
        assert!(
            command
                .with_token("t")
                .unwrap_err()
                .to_string()
                .contains("command")
        );
        for bad in [
            "",
            "two words",
            "caf\u{e9}",
            &"x".repeat(MAX_TOKEN_BYTES + 1),
        ] {
            assert!(https.clone().with_token(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names_become_lua_identifiers() {
        assert_eq!(lua_name("search-issues").as_deref(), Some("search_issues"));
        assert_eq!(lua_name("2fa.check").as_deref(), Some("_2fa_check"));
        assert_eq!(lua_name("end").as_deref(), Some("_end"));
        assert_eq!(lua_name("--"), None);
        assert!(is_identifier("gh"));
        assert!(!is_identifier("while"));
    }

    #[test]
    fn results_prefer_structured_content_then_text() {
        let structured = CallToolResult::structured(json!({"result": 3}));
        assert_eq!(result_value(structured).unwrap(), json!({"result": 3}));
        let text = CallToolResult::success(vec![ContentBlock::text("hello")]);
        assert_eq!(result_value(text).unwrap(), json!("hello"));
        let empty = CallToolResult::success(vec![]);
        assert_eq!(result_value(empty).unwrap(), Value::Null);
        let error = CallToolResult::error(vec![ContentBlock::text("x".repeat(5000))]);
        let err = result_value(error).unwrap_err();
        assert!(err.message().len() <= MAX_ERROR_BYTES + 3);
    }
}
