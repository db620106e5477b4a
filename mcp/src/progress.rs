//! A running script's output, sent as `notifications/progress`.
//!
//! The session's output sink appends each write to a bounded buffer and
//! wakes a task, which waits the coalescing interval, takes what has
//! gathered and sends it as one notification: `progress` is the count of
//! bytes written so far, `message` the new text (lossy UTF-8, with a
//! character split between two writes kept whole). When the client reads
//! slower than the script writes, the buffer stops growing at
//! [`MAX_PENDING_BYTES`] and the excess is left out of the notifications;
//! the count still includes it, and the final result carries every byte.
//!
//! Progress is for output written while the script runs: what is still
//! gathering when the eval ends is not sent (the result carries it), so a
//! script that ends within one interval sends none. A client may handle a
//! notification after a result that reached it just behind it (the
//! TypeScript SDK handles notifications a turn later than results, and
//! drops a progress notification whose call has its result as an error),
//! so a result also waits until one interval has passed since the call's
//! last notification.

use std::sync::Arc;
use std::time::{Duration, Instant};

use moonbox::OutputSink;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};

use crate::forwarder::{self, Task};

/// The most output waiting to be sent.
pub(crate) const MAX_PENDING_BYTES: usize = 64 << 10;

#[derive(Default)]
struct State {
    pending: Vec<u8>,
    written: u64,
    done: bool,
    /// When the last notification went out.
    last_sent: Option<Instant>,
}

type Shared = forwarder::Shared<State>;

/// One call's output forwarder. Dropping it stops the task.
pub(crate) struct Progress {
    shared: Arc<Shared>,
    task: Task,
    interval: Duration,
}

impl Progress {
    /// Starts the task that sends notifications to `peer` for `token`.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken, interval: Duration) -> Self {
        let shared = Arc::new(Shared::default());
        let task = Task::spawn(forward(shared.clone(), peer, token, interval));
        Progress {
            shared,
            task,
            interval,
        }
    }

    /// The sink to set on the session for the call.
    pub(crate) fn sink(&self) -> OutputSink {
        let shared = self.shared.clone();
        Arc::new(move |bytes: &[u8]| {
            {
                let mut state = shared.state();
                state.written = state
                    .written
                    .saturating_add(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
                let room = MAX_PENDING_BYTES.saturating_sub(state.pending.len());
                let take = bytes.len().min(room);
                state.pending.extend_from_slice(&bytes[..take]);
            }
            shared.wake();
        })
    }

    /// Stops the task, leaving what has not gone out to the result; waits
    /// for a notification being sent, then until one interval has passed
    /// since the last one (see the module).
    ///
    /// # Cancel safety
    /// Dropping the future stops the task.
    pub(crate) async fn finish(self) {
        self.shared.state().done = true;
        self.shared.wake();
        self.task.join().await;
        let last_sent = self.shared.state().last_sent;
        if let Some(left) = last_sent.and_then(|sent| self.interval.checked_sub(sent.elapsed())) {
            tokio::time::sleep(left).await;
        }
    }
}

/// The task body: sends each batch of output as one notification, until
/// [`Progress::finish`] or the client goes away.
///
/// # Cancel safety
/// Aborting it (dropping the [`Progress`]) loses the output not yet sent,
/// which the call's result still carries.
async fn forward(
    shared: Arc<Shared>,
    peer: Peer<RoleServer>,
    token: ProgressToken,
    interval: Duration,
) {
    loop {
        shared.woken().await;
        if shared.state().done {
            return;
        }
        // Let more writes gather into this notification.
        tokio::time::sleep(interval).await;
        let (bytes, written) = {
            let mut state = shared.state();
            if state.done {
                // The eval ended meanwhile: the result carries the rest.
                return;
            }
            let keep = incomplete_tail(&state.pending);
            let split = state.pending.len() - keep;
            let rest = state.pending.split_off(split);
            (std::mem::replace(&mut state.pending, rest), state.written)
        };
        if !bytes.is_empty() {
            // An f64 holds byte counts exactly up to 2^53, far beyond any
            // output limit.
            let progress = written as f64;
            let note = ProgressNotificationParam::new(token.clone(), progress)
                .with_message(String::from_utf8_lossy(&bytes).into_owned());
            let sent = peer.notify_progress(note).await;
            shared.state().last_sent = Some(Instant::now());
            if sent.is_err() {
                // The client is gone: nothing more to send.
                return;
            }
        }
    }
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that the
/// next write may complete (0 when they cannot).
fn incomplete_tail(bytes: &[u8]) -> usize {
    (1..=bytes.len().min(3))
        .find(|&n| {
            let tail = &bytes[bytes.len() - n..];
            tail[0] >= 0xC0 && std::str::from_utf8(tail).is_err_and(|e| e.error_len().is_none())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::incomplete_tail;

    #[test]
    fn a_split_character_is_held_back() {
        let euro = "€".as_bytes();
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail(&euro[..1]), 1);
        assert_eq!(incomplete_tail(&[b'a', euro[0], euro[1]]), 2);
        assert_eq!(incomplete_tail(euro), 0);
        assert_eq!(incomplete_tail(&[0xff, 0xff, euro[0]]), 1);
        assert_eq!(incomplete_tail(b""), 0);
    }
}
