//! A running script's `log` events, sent as MCP `notifications/message`
//! while it runs (the report's `logs` still has every one).
//!
//! A connection's client sets the least level it wants with
//! `logging/setLevel` ([`Level`]; `info` until it does). Each event becomes
//! a notification from the logger `lua` whose `data` is `{"message",
//! "fields"}`, at the matching MCP level (`warn` is `warning`). The call's
//! sink queues events for a task that sends them in order; the queue holds
//! at most [`MAX_PENDING_BYTES`], and events past it are counted and
//! said to be missing in one last notification. Every queued event goes
//! out before the call's result.
//!
//! MCP's logging is deprecated by SEP-2577 (protocol 2026-07-28), which
//! rmcp marks; clients of 2025-06-18 and 2025-11-25 use it, hence the
//! `allow`s.
#![allow(
    deprecated,
    reason = "MCP logging is deprecated by SEP-2577; clients of 2025-06-18 and 2025-11-25 use it"
)]

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use moonbox::{LogEvent, LogLevel, LogSink};
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::forwarder::{self, Task};

/// The most bytes of events (message and fields) waiting to be sent.
pub(crate) const MAX_PENDING_BYTES: usize = 64 << 10;

/// The least severity a connection's client wants, as `logging/setLevel`
/// set it. Cheap to clone; clones share it.
#[derive(Clone, Debug)]
pub(crate) struct Level(Arc<AtomicU8>);

impl Default for Level {
    fn default() -> Self {
        Level(Arc::new(AtomicU8::new(rank(LoggingLevel::Info))))
    }
}

impl Level {
    /// Sets the least severity sent.
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    fn admits(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::Relaxed)
    }
}

/// MCP's levels in order of severity.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// A script's level as MCP's.
fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        _ => LoggingLevel::Error,
    }
}

#[derive(Default)]
struct State {
    /// Each event, with its level and its size in `bytes`.
    pending: VecDeque<(LoggingLevel, Value, usize)>,
    bytes: usize,
    dropped: u64,
    done: bool,
}

type Shared = forwarder::Shared<State>;

/// One call's log forwarder. Dropping it stops the task.
pub(crate) struct Forwarder {
    shared: Arc<Shared>,
    level: Level,
    task: Task,
}

impl Forwarder {
    /// Starts the task that sends `peer` the events at or above `level`.
    pub(crate) fn start(peer: Peer<RoleServer>, level: Level) -> Self {
        let shared = Arc::new(Shared::default());
        let task = Task::spawn(forward(shared.clone(), peer));
        Forwarder {
            shared,
            level,
            task,
        }
    }

    /// The sink to set on the session for the call.
    pub(crate) fn sink(&self) -> LogSink {
        let (shared, level) = (self.shared.clone(), self.level.clone());
        Arc::new(move |event: &LogEvent| {
            let mcp = mcp_level(event.level);
            if !level.admits(mcp) {
                return;
            }
            let data = json!({ "message": event.message, "fields": event.fields });
            let size = data.to_string().len();
            {
                let mut state = shared.state();
                if state.bytes + size > MAX_PENDING_BYTES {
                    state.dropped += 1;
                    return;
                }
                state.bytes += size;
                state.pending.push_back((mcp, data, size));
            }
            shared.wake();
        })
    }

    /// Sends what is queued, then stops the task: every event goes out
    /// before the call's result.
    ///
    /// # Cancel safety
    /// Dropping the future stops the task; events not yet sent are lost
    /// (the result's `logs` has them).
    pub(crate) async fn finish(self) {
        self.shared.state().done = true;
        self.shared.wake();
        self.task.join().await;
    }
}

/// The task body: sends each queued event, until [`Forwarder::finish`] and
/// an empty queue, or the client goes away.
async fn forward(shared: Arc<Shared>, peer: Peer<RoleServer>) {
    /// What the loop does next.
    enum Next {
        Send(LoggingLevel, Value),
        Wait,
        /// The call ended; this many events did not fit in the queue.
        End(u64),
    }
    loop {
        let next = {
            let mut state = shared.state();
            match state.pending.pop_front() {
                Some((level, data, size)) => {
                    state.bytes -= size;
                    Next::Send(level, data)
                }
                None if state.done => Next::End(std::mem::take(&mut state.dropped)),
                None => Next::Wait,
            }
        };
        match next {
            Next::Send(level, data) => {
                let note = LoggingMessageNotificationParam::new(level, data).with_logger("lua");
                if peer.notify_logging_message(note).await.is_err() {
                    return;
                }
            }
            Next::Wait => shared.woken().await,
            Next::End(0) => return,
            Next::End(dropped) => {
                let note = json!({
                    "message": format!("{dropped} more log events were not sent while the script ran; the result's logs has every event"),
                    "fields": {}
                });
                let note = LoggingMessageNotificationParam::new(LoggingLevel::Warning, note)
                    .with_logger("moonbox");
                let _ = peer.notify_logging_message(note).await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_admit_what_is_at_least_as_severe() {
        let level = Level::default();
        assert!(!level.admits(LoggingLevel::Debug));
        assert!(level.admits(LoggingLevel::Info));
        level.set(LoggingLevel::Warning);
        assert!(!level.admits(mcp_level(LogLevel::Info)));
        assert!(level.admits(mcp_level(LogLevel::Warn)));
        assert!(level.admits(mcp_level(LogLevel::Error)));
        level.set(LoggingLevel::Debug);
        assert!(level.admits(mcp_level(LogLevel::Debug)));
    }
}
