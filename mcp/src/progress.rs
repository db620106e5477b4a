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

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use moonbox::OutputSink;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// The most output waiting to be sent.
pub(crate) const MAX_PENDING_BYTES: usize = 64 << 10;

#[derive(Default)]
struct State {
    pending: Vec<u8>,
    written: u64,
    done: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Notify,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // A byte buffer and a count: nothing a panic could leave half-made.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One call's output forwarder. Dropping it stops the task.
pub(crate) struct Progress {
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts the task that sends notifications to `peer` for `token`.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken, interval: Duration) -> Self {
        let shared = Arc::new(Shared::default());
        let task = tokio::spawn(forward(shared.clone(), peer, token, interval));
        Progress {
            shared,
            task: Some(task),
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
            shared.wake.notify_one();
        })
    }

    /// Sends what is left and waits for the task, so that every
    /// notification goes out before the call's result.
    ///
    /// # Cancel safety
    /// Dropping the future stops the task; notifications not yet sent are
    /// lost.
    pub(crate) async fn finish(mut self) {
        self.shared.state().done = true;
        self.shared.wake.notify_one();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
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
        shared.wake.notified().await;
        let done = shared.state().done;
        if !done {
            // Let more writes gather into this notification.
            tokio::time::sleep(interval).await;
        }
        let (bytes, written, done) = {
            let mut state = shared.state();
            let keep = incomplete_tail(&state.pending, state.done);
            let split = state.pending.len() - keep;
            let rest = state.pending.split_off(split);
            let bytes = std::mem::replace(&mut state.pending, rest);
            (bytes, state.written, state.done)
        };
        if !bytes.is_empty() {
            // An f64 holds byte counts exactly up to 2^53, far beyond any
            // output limit.
            let progress = written as f64;
            let note = ProgressNotificationParam::new(token.clone(), progress)
                .with_message(String::from_utf8_lossy(&bytes).into_owned());
            if peer.notify_progress(note).await.is_err() {
                // The client is gone: nothing more to send.
                return;
            }
        }
        if done {
            return;
        }
    }
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that the
/// next write may complete (0 when `done`, or when they cannot).
fn incomplete_tail(bytes: &[u8], done: bool) -> usize {
    if done {
        return 0;
    }
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
        assert_eq!(incomplete_tail(b"abc", false), 0);
        assert_eq!(incomplete_tail(&euro[..1], false), 1);
        assert_eq!(incomplete_tail(&[b'a', euro[0], euro[1]], false), 2);
        assert_eq!(incomplete_tail(&[b'a', euro[0], euro[1]], true), 0);
        assert_eq!(incomplete_tail(euro, false), 0);
        assert_eq!(incomplete_tail(&[0xff, 0xff, euro[0]], false), 1);
        assert_eq!(incomplete_tail(b"", false), 0);
    }
}
