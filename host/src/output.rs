//! The script's output as the host receives it: a bounded byte buffer per
//! eval, and an optional sink that sees each write as it happens; and the
//! structured events of the script's `log`, kept the same way.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::arguments::{ArgumentError, ArgumentPool, Held};

/// A function that receives the script's output while the eval runs, one
/// write at a time (a `print` arrives as its pieces: arguments, tabs and the
/// newline). It runs on the eval's thread, between two steps of the script:
/// keep it short (forward to a channel or a buffered writer).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let mut session = sandbox.session(()).await?;
/// session.set_output_sink(Some(Arc::new(move |bytes: &[u8]| {
///     sink.lock().unwrap().extend_from_slice(bytes);
/// })));
/// session.eval("io.write('a', 'b') print('c')").await?;
/// assert_eq!(&*seen.lock().unwrap(), b"abc\n");
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
pub type OutputSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// What one eval has written so far. The guest never writes past
/// `max-output-bytes`; the buffer keeps at most that many bytes anyway, so
/// a misbehaving guest cannot grow the host.
pub(crate) struct OutputBuffer {
    bytes: Vec<u8>,
    cap: usize,
    pub(crate) sink: Option<OutputSink>,
}

impl OutputBuffer {
    pub(crate) fn new(cap: u64) -> Self {
        OutputBuffer {
            bytes: Vec::new(),
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            sink: None,
        }
    }

    /// Appends what fits and forwards it to the sink.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.bytes.len());
        let kept = &bytes[..bytes.len().min(room)];
        if kept.is_empty() {
            return;
        }
        self.bytes.extend_from_slice(kept);
        if let Some(sink) = &self.sink {
            sink(kept);
        }
    }

    /// Takes what was written, leaving the buffer empty for the next eval.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

/// Bytes each log event is charged on top of its message and its fields'
/// JSON text, against [`Limits::max_output_bytes`](crate::Limits::max_output_bytes),
/// which events share with the output: the guest charges the same, so a
/// flood of empty events stops at the limit too.
pub const LOG_EVENT_BYTES: u64 = crate::contract::LOG_EVENT_BYTES;

/// The severity of a [`LogEvent`], ordered from `Debug` to `Error` (so
/// `level >= LogLevel::Warn` filters). Serialized in lowercase (`"warn"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum LogLevel {
    /// `log("debug", ...)`.
    Debug,
    /// `log("info", ...)`.
    Info,
    /// `log("warn", ...)`.
    Warn,
    /// `log("error", ...)`.
    Error,
}

impl LogLevel {
    /// The name the script passes and JSON carries: `debug`, `info`, `warn`
    /// or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }
}

impl From<crate::bindings::types::LogLevel> for LogLevel {
    fn from(level: crate::bindings::types::LogLevel) -> Self {
        use crate::bindings::types::LogLevel as Wit;
        match level {
            Wit::Debug => LogLevel::Debug,
            Wit::Info => LogLevel::Info,
            Wit::Warn => LogLevel::Warn,
            Wit::Error => LogLevel::Error,
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One structured event from the script's `log(level, message, fields)`,
/// received apart from its output.
///
/// `Display` is one readable line, `[level] message  key=value ...`, with
/// each field's value as JSON and control characters escaped, so a script
/// cannot forge a second line on a terminal.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let out = sandbox.eval("log('warn', 'disk low', {free = 12}) print('done')").await?;
/// assert_eq!(out.output, "done\n");
/// let event = &out.logs[0];
/// assert_eq!(event.level, moonbox::LogLevel::Warn);
/// assert_eq!(event.message, "disk low");
/// assert_eq!(event.fields["free"], 12);
/// assert_eq!(event.to_string(), "[warn] disk low  free=12");
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogEvent {
    /// The severity.
    pub level: LogLevel,
    /// The message (bytes that were not UTF-8 replaced with U+FFFD).
    pub message: String,
    /// The fields, converted by the boundary's rules (members sorted by
    /// key); empty when the script passed none.
    pub fields: serde_json::Map<String, serde_json::Value>,
}

impl LogEvent {
    /// An event, as a host that builds its own (a test, a replay) makes one.
    pub fn new(
        level: LogLevel,
        message: impl Into<String>,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        LogEvent {
            level,
            message: message.into(),
            fields,
        }
    }
}

impl fmt::Display for LogEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = format!("[{}] {}", self.level, self.message);
        let mut sep = "  ";
        for (key, value) in &self.fields {
            line.push_str(sep);
            line.push_str(key);
            line.push('=');
            line.push_str(&value.to_string());
            sep = " ";
        }
        f.write_str(&crate::text::one_line(&line))
    }
}

/// A function that receives each [`LogEvent`] while the eval runs, in order
/// with the [`OutputSink`]'s writes. Like the output sink it runs on the
/// eval's thread: keep it short.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let mut session = sandbox.session(()).await?;
/// session.set_log_sink(Some(Arc::new(move |event: &moonbox::LogEvent| {
///     sink.lock().unwrap().push(event.to_string());
/// })));
/// session.eval("log('info', 'step', {n = 1}) log('error', 'failed')").await?;
/// assert_eq!(*seen.lock().unwrap(), ["[info] step  n=1", "[error] failed"]);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
pub type LogSink = Arc<dyn Fn(&LogEvent) + Send + Sync>;

/// The one member a [`LogEvent`]'s fields hold when the fields the script
/// sent would take more host memory than the eval's budget for log fields
/// (`max_memory_bytes`) once parsed: its value says how large they were.
pub const FIELDS_DROPPED: &str = "moonbox.fields_dropped";

/// The log events of one eval. The guest charges each event (message,
/// fields and [`LOG_EVENT_BYTES`]) against `max-output-bytes` and never
/// sends past it; the buffer counts the same way and keeps no more, so a
/// misbehaving guest cannot grow the host. The fields' trees, which can
/// take a hundred times their text, are parsed against a pool of the Lua
/// heap's limit for the eval (as capability arguments are).
pub(crate) struct LogBuffer {
    events: Vec<LogEvent>,
    charged: u64,
    cap: u64,
    pool: ArgumentPool,
    held: Vec<Held>,
    pub(crate) sink: Option<LogSink>,
}

impl LogBuffer {
    /// A buffer of `cap` bytes of events whose fields' trees may take
    /// `max_tree_bytes` in all.
    pub(crate) fn new(cap: u64, max_tree_bytes: u64) -> Self {
        LogBuffer {
            events: Vec::new(),
            charged: 0,
            cap,
            pool: ArgumentPool::new(max_tree_bytes),
            held: Vec::new(),
            sink: None,
        }
    }

    /// Keeps an event the guest sent, if it fits and its fields are a JSON
    /// object (the guest sends nothing else), and forwards it to the sink.
    pub(crate) fn push(&mut self, level: LogLevel, message: String, fields: &str) {
        let cost = (message.len() as u64)
            .saturating_add(fields.len() as u64)
            .saturating_add(LOG_EVENT_BYTES);
        if cost > self.cap.saturating_sub(self.charged) {
            return;
        }
        let fields = match self.pool.parse_text(fields) {
            Ok((serde_json::Value::Object(fields), held)) => {
                self.held.push(held);
                fields
            }
            Ok(_) | Err(ArgumentError::Malformed(_)) => return,
            // The event is kept, and says what became of its fields.
            Err(ArgumentError::TooLarge { capacity, .. }) => {
                let why = format!(
                    "{} bytes of fields would take more than the {capacity} bytes of host memory \
                     this eval's log fields may take once parsed (max-memory-bytes)",
                    fields.len()
                );
                serde_json::Map::from_iter([(FIELDS_DROPPED.to_owned(), why.into())])
            }
        };
        self.charged += cost;
        let event = LogEvent {
            level,
            message,
            fields,
        };
        if let Some(sink) = &self.sink {
            sink(&event);
        }
        self.events.push(event);
    }

    /// Takes the events, leaving the buffer empty for the next eval.
    pub(crate) fn take(&mut self) -> Vec<LogEvent> {
        self.charged = 0;
        self.held.clear();
        std::mem::take(&mut self.events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn keeps_at_most_its_cap_and_forwards_only_what_it_keeps() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let mut buffer = OutputBuffer::new(5);
        buffer.sink = Some(Arc::new(move |b: &[u8]| {
            sink.lock().unwrap().extend_from_slice(b)
        }));
        buffer.write(b"abc");
        buffer.write(b"defg");
        buffer.write(b"h");
        assert_eq!(buffer.take(), b"abcde");
        assert_eq!(&*seen.lock().unwrap(), b"abcde");
        assert!(buffer.take().is_empty());
    }

    #[test]
    fn log_buffer_keeps_events_in_order_up_to_its_cap() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        // Room for exactly two events of message "ab" and fields "{}".
        let mut logs = LogBuffer::new(2 * (2 + 2 + LOG_EVENT_BYTES), 1 << 20);
        logs.sink = Some(Arc::new(move |e: &LogEvent| {
            sink.lock().unwrap().push(e.message.clone())
        }));
        logs.push(LogLevel::Info, "ab".into(), "{}");
        logs.push(LogLevel::Warn, "cd".into(), "{}");
        logs.push(LogLevel::Error, "ef".into(), "{}");
        let kept = logs.take();
        assert_eq!(kept.len(), 2);
        assert_eq!(
            (kept[0].level, kept[1].level),
            (LogLevel::Info, LogLevel::Warn)
        );
        assert_eq!(*seen.lock().unwrap(), ["ab", "cd"]);
        // A new eval starts with the whole budget again.
        logs.push(LogLevel::Debug, "gh".into(), "{}");
        assert_eq!(logs.take().len(), 1);
    }

    #[test]
    fn log_buffer_drops_fields_that_are_not_a_json_object() {
        let mut logs = LogBuffer::new(1 << 20, 1 << 20);
        for fields in ["[]", "1", "not json", ""] {
            logs.push(LogLevel::Info, "m".into(), fields);
        }
        assert!(logs.take().is_empty());
    }

    #[test]
    fn an_event_displays_on_one_line() {
        let mut fields = serde_json::Map::new();
        fields.insert("b".into(), serde_json::json!("x\ny"));
        fields.insert("a".into(), serde_json::json!([1, true]));
        let event = LogEvent::new(LogLevel::Debug, "two\nlines\r\u{1b}[31m", fields);
        assert_eq!(
            event.to_string(),
            r#"[debug] two lines\r\u{1b}[31m  a=[1,true] b="x\ny""#
        );
        let bare = LogEvent::new(LogLevel::Error, "", serde_json::Map::new());
        assert_eq!(bare.to_string(), "[error]");
    }
}
