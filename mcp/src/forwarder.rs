//! What a call's notification forwarders (`progress`, `logging`) share: a
//! state the session's sink writes synchronously and a task reads, woken
//! when there is something to send; and the task, stopped when its
//! forwarder is dropped.

use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// A forwarder's state and the task's wake-up.
#[derive(Default)]
pub(crate) struct Shared<S> {
    state: Mutex<S>,
    wake: Notify,
}

impl<S> Shared<S> {
    /// The state. Each forwarder's is plain data (buffers, counts, flags)
    /// that a panic cannot leave half-made, so a poisoned lock is used as
    /// it is.
    pub(crate) fn state(&self) -> MutexGuard<'_, S> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the task (or its next wait, if it is not waiting).
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }

    /// Waits for [`Shared::wake`].
    pub(crate) async fn woken(&self) {
        self.wake.notified().await;
    }
}

/// A forwarder's task: aborted when dropped, unless joined.
pub(crate) struct Task(Option<JoinHandle<()>>);

impl Task {
    /// Runs `work` on the runtime.
    pub(crate) fn spawn(work: impl Future<Output = ()> + Send + 'static) -> Task {
        Task(Some(tokio::spawn(work)))
    }

    /// Waits for the task to end.
    pub(crate) async fn join(mut self) {
        if let Some(task) = self.0.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}
