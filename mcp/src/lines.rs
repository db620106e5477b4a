//! The stdio transport: one JSON-RPC message a line, in both directions.
//!
//! rmcp's own line transport ignores a line that is not JSON, so a client
//! that sent one waits for an answer that never comes. This one answers it,
//! as JSON-RPC says: a `-32700` parse error with a null id (the line has no
//! id to read). A line that is JSON but not a message (`-32600`), one longer
//! than the message bound (`-32600`, the rest of it skipped), and a request
//! before `initialize` that does not carry its protocol version inline as
//! protocol 2026-07-28 does (`-32600` with the request's id, saying to
//! initialize first; rmcp would answer it with a complaint about the newer
//! protocol's metadata) are answered too. `ping` and `server/discover` pass
//! before it, as rmcp answers them. So that a
//! peer which answers errors with more bad lines cannot start a storm, at
//! most [`MAX_ERRORS_PER_SECOND`] such answers go out a second; the rest are
//! dropped.
//!
//! Everything written goes through one buffer under one lock, drained by
//! cancel-safe writes: a message or an answer cut off midway (rmcp polls
//! `receive` in a `select!`) is finished by the next writer, so lines never
//! interleave.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The most error answers to bad lines sent in one second.
pub(crate) const MAX_ERRORS_PER_SECOND: u32 = 16;

/// The writing half: what is still to be written, and where.
struct Out<W> {
    write: Option<W>,
    pending: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Out<W> {
    /// Writes what is pending, then flushes. Cancel-safe: each `write`
    /// either wrote some bytes, which leave the buffer, or none.
    async fn drain(&mut self) -> std::io::Result<()> {
        let Some(write) = self.write.as_mut() else {
            return Err(std::io::ErrorKind::NotConnected.into());
        };
        while !self.pending.is_empty() {
            let n = write.write(&self.pending).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.pending.drain(..n);
        }
        write.flush().await
    }
}

/// One line of a [`LineReader`], without its newline.
pub(crate) struct Line {
    /// Its first bytes, at most the reader's bound.
    pub(crate) bytes: Vec<u8>,
    /// It was longer: the rest was skipped.
    pub(crate) cut: bool,
}

/// The lines of a byte stream, each kept up to a bound (the rest of a
/// longer one is read and skipped), so that no line, however long, holds
/// more memory than the bound.
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    /// The line read so far (kept when a read is cancelled).
    line: Vec<u8>,
    cut: bool,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Lines of `read`, each kept up to `max` bytes.
    pub(crate) fn new(read: R, max: usize) -> Self {
        LineReader {
            read: BufReader::new(read),
            line: Vec::new(),
            cut: false,
            max,
        }
    }

    /// The next whole line, `None` at the end of the input (a last line
    /// without a newline is incomplete) or on an error. Cancel-safe: the
    /// bytes taken so far stay in the reader.
    pub(crate) async fn next(&mut self) -> Option<Line> {
        loop {
            let available = self.read.fill_buf().await.ok()?;
            if available.is_empty() {
                return None;
            }
            let (take, ended) = match available.iter().position(|&b| b == b'\n') {
                Some(at) => (at, true),
                None => (available.len(), false),
            };
            let room = self.max.saturating_sub(self.line.len());
            self.line.extend_from_slice(&available[..take.min(room)]);
            self.cut |= take > room;
            self.read.consume(take + usize::from(ended));
            if ended {
                return Some(Line {
                    bytes: std::mem::take(&mut self.line),
                    cut: std::mem::take(&mut self.cut),
                });
            }
        }
    }
}

/// What [`LineTransport`] does with a line.
enum Verdict {
    /// Hand the message to rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing: a blank line, or a notification with nothing to act on.
    Skip,
    /// Answer with this error (within the rate bound).
    Answer(ErrorData, Option<RequestId>),
}

/// A byte stream pair as an MCP transport (see the module).
pub(crate) struct LineTransport<R, W> {
    lines: LineReader<R>,
    initialized: bool,
    out: Arc<Mutex<Out<W>>>,
    /// Error answers to bad lines, serialized but not yet handed to `out`.
    /// `receive` queues one here without awaiting anything, so that a
    /// caller that drops `receive` (rmcp selects over it) while the writer
    /// holds `out` loses no answer; the next `receive` writes it.
    answers: Vec<u8>,
    /// Error answers sent in the current second, and when it began.
    errors: (u32, Instant),
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Reads messages from `read` and writes them to `write`, lines up to
    /// `max_line` bytes.
    pub(crate) fn new(read: R, write: W, max_line: usize) -> Self {
        LineTransport {
            lines: LineReader::new(read, max_line),
            initialized: false,
            out: Arc::new(Mutex::new(Out {
                write: Some(write),
                pending: Vec::new(),
            })),
            answers: Vec::new(),
            errors: (0, Instant::now()),
        }
    }

    /// What to do with `line`; a message that begins the lifecycle marks
    /// the connection initialized.
    fn judge(&mut self, line: &Line) -> Verdict {
        if line.cut {
            let error = ErrorData::invalid_request(
                format!(
                    "a message is longer than the {} bytes this server reads; it was skipped",
                    self.lines.max
                ),
                None,
            );
            return Verdict::Answer(error, None);
        }
        let text = line.bytes.strip_suffix(b"\r").unwrap_or(&line.bytes);
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            return Verdict::Skip;
        }
        let value: Value = match serde_json::from_slice(text) {
            Ok(value) => value,
            Err(e) => {
                let error = ErrorData::parse_error(
                    format!("the line is not JSON ({e}); send one JSON-RPC message a line"),
                    None,
                );
                return Verdict::Answer(error, None);
            }
        };
        let id: Option<RequestId> = value
            .get("id")
            .and_then(|id| serde_json::from_value(id.clone()).ok());
        let method = value
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let inline_version = value
            .pointer("/params/_meta")
            .and_then(|meta| meta.get("io.modelcontextprotocol/protocolVersion"))
            .is_some();
        let message = match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
            Ok(message) => message,
            // A notification of a method no one knows is ignored, as MCP's
            // SDKs ignore them.
            Err(_) if id.is_none() && method.is_some() => return Verdict::Skip,
            Err(e) => {
                let error = ErrorData::invalid_request(
                    format!("not a JSON-RPC message this server takes: {e}"),
                    None,
                );
                return Verdict::Answer(error, id);
            }
        };
        if self.initialized {
            return Verdict::Message(Box::new(message));
        }
        match early(&message, inline_version) {
            Early::Begins => {
                self.initialized = true;
                Verdict::Message(Box::new(message))
            }
            Early::Probe => Verdict::Message(Box::new(message)),
            Early::Refused => {
                let error = ErrorData::invalid_request(
                    format!(
                        "`{}` before `initialize`: initialize the connection first (or, in \
                         protocol 2026-07-28, give each request its protocolVersion and \
                         clientCapabilities in _meta)",
                        method.unwrap_or_default()
                    ),
                    None,
                );
                Verdict::Answer(error, id)
            }
        }
    }

    /// Queues an error answer, within the rate bound, for the next
    /// [`flush`](Self::flush). Awaits nothing, so it cannot be cut short.
    fn queue_answer(&mut self, error: ErrorData, id: Option<RequestId>) {
        let (sent, since) = &mut self.errors;
        if since.elapsed() >= Duration::from_secs(1) {
            (*sent, *since) = (0, Instant::now());
        }
        if *sent >= MAX_ERRORS_PER_SECOND {
            return;
        }
        *sent += 1;
        let message = TxJsonRpcMessage::<RoleServer>::error(error, id);
        if let Ok(Value::Object(mut object)) = serde_json::to_value(&message) {
            // JSON-RPC writes the id of an answer to no request as null;
            // rmcp leaves it out.
            object.entry("id").or_insert(Value::Null);
            if let Ok(mut line) = serde_json::to_vec(&object) {
                line.push(b'\n');
                self.answers.extend_from_slice(&line);
            }
        }
    }

    /// Writes the queued answers and what a cancelled writer left. Cancel
    /// safe: the answers move to `out` only once its lock is held, and
    /// `drain` leaves there what it did not write.
    async fn flush(&mut self) -> std::io::Result<()> {
        let mut out = match self.out.try_lock() {
            Ok(out) => out,
            // A writer holds it and drains what it left; only queued
            // answers are worth the wait.
            Err(_) if self.answers.is_empty() => return Ok(()),
            Err(_) => self.out.lock().await,
        };
        out.pending.append(&mut self.answers);
        if out.pending.is_empty() {
            return Ok(());
        }
        out.drain().await
    }
}

/// What a request before the lifecycle began may be.
enum Early {
    /// `initialize`, or (protocol 2026-07-28) a request that carries its
    /// protocol version inline: it begins the lifecycle.
    Begins,
    /// `ping` or `server/discover`, answered before any lifecycle.
    Probe,
    /// Anything else: the client forgot `initialize`.
    Refused,
}

/// How `message`, which carries its protocol version in `_meta` when
/// `inline_version`, stands before the lifecycle began.
fn early(message: &RxJsonRpcMessage<RoleServer>, inline_version: bool) -> Early {
    match message {
        JsonRpcMessage::Request(request) => match request.request {
            ClientRequest::InitializeRequest(_) => Early::Begins,
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => Early::Probe,
            _ if inline_version => Early::Begins,
            _ => Early::Refused,
        },
        // A notification or a response has nothing to act on yet; rmcp
        // drops what it cannot use.
        _ => Early::Probe,
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut out = out.lock().await;
            out.pending.extend_from_slice(&line);
            out.drain().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // The answers to bad lines, and what a cancelled writer left.
            if self.flush().await.is_err() {
                return None;
            }
            let line = self.lines.next().await?;
            match self.judge(&line) {
                Verdict::Message(message) => return Some(*message),
                Verdict::Skip => {}
                Verdict::Answer(error, id) => self.queue_answer(error, id),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut out = self.out.lock().await;
        out.pending.append(&mut self.answers);
        let _ = out.drain().await;
        drop(out.write.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    /// What the transport wrote while it read all of `input`.
    async fn answers(input: &[u8]) -> Vec<Value> {
        let (mut client, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, mut from_server) = tokio::io::duplex(1 << 20);
        client.write_all(input).await.unwrap();
        drop(client);
        let mut transport = LineTransport::new(server_in, server_out, 1024);
        assert!(transport.receive().await.is_none(), "nothing but errors");
        transport.close().await.unwrap();
        drop(transport);
        let mut text = String::new();
        from_server.read_to_string(&mut text).await.unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn bad_lines_are_answered_up_to_the_rate_bound() {
        let answers = answers(&b"{oops\n".repeat(40)).await;
        assert_eq!(answers.len(), MAX_ERRORS_PER_SECOND as usize);
        for answer in answers {
            assert_eq!(answer["id"], Value::Null);
            assert_eq!(answer["error"]["code"], -32700);
        }
    }

    #[tokio::test]
    async fn an_answer_survives_a_receive_dropped_while_the_writer_holds_the_output() {
        // rmcp selects over `receive`: a response being written holds the
        // output when a bad line arrives, and the select drops `receive`.
        let (mut client, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, mut from_server) = tokio::io::duplex(1 << 20);
        let mut transport = LineTransport::new(server_in, server_out, 1024);
        let writer = transport.out.clone();
        let wait = Duration::from_millis(50);
        let mut receiving = Box::pin(transport.receive());
        // Waiting for a line, the output free.
        assert!(tokio::time::timeout(wait, &mut receiving).await.is_err());
        // A writer takes the output; then a bad line arrives.
        let held = writer.lock().await;
        client
            .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 11\n")
            .await
            .unwrap();
        assert!(tokio::time::timeout(wait, &mut receiving).await.is_err());
        // The select drops `receive` with the line read and not answered.
        drop(receiving);
        drop(held);
        drop(client);
        assert!(transport.receive().await.is_none());
        transport.close().await.unwrap();
        drop(transport);
        let mut text = String::new();
        from_server.read_to_string(&mut text).await.unwrap();
        let answer: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(answer["error"]["code"], -32700, "{text}");
    }

    #[tokio::test]
    async fn blank_lines_and_a_cut_last_line_are_not_answered() {
        assert!(answers(b"\n \r\n\n{\"jsonrpc\":").await.is_empty());
        let long = format!("{}\n[1]\n", "x".repeat(5000));
        let answers = answers(long.as_bytes()).await;
        assert_eq!(answers.len(), 2, "{answers:?}");
        assert!(
            answers[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("longer than the 1024 bytes")
        );
        assert_eq!(answers[1]["error"]["code"], -32600);
    }
}
