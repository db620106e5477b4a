//! The threads Python capabilities run on.
//!
//! A capability must not run on the eval's own thread: a function that
//! never returns (or holds the GIL) would then hold the eval past its
//! deadline. Handing each call to another thread costs two wake-ups, which
//! through tokio's blocking pool took 30-45 µs per call on the benchmark
//! machine (a futex wake of a parked thread costs an interrupt in a VM).
//! So this pool keeps its threads, and the eval waiting for a reply, awake
//! for a short while (`SPIN`) before they park: in a script that calls
//! capabilities in a loop both sides are still awake at the next hand-off,
//! and a call costs a few microseconds. A thread parks after `SPIN` without
//! work, so an idle process spends no CPU.
//!
//! Each worker thread keeps one Python thread state for its whole life, so
//! a call takes the GIL without creating one.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

/// How long a worker, or an eval waiting for a reply, stays awake.
const SPIN: Duration = Duration::from_micros(50);

/// The most calls that run at once in the process; more wait for a thread.
/// A call abandoned at its eval's deadline keeps its thread until it
/// returns.
pub(crate) const MAX_THREADS: usize = 64;

type Job = Box<dyn FnOnce() + Send>;

struct Pool {
    state: Mutex<State>,
    /// Signalled when a job is queued and a worker is parked.
    work: Condvar,
    /// Jobs queued, read without the lock by spinning workers.
    queued: AtomicUsize,
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Threads started.
    threads: usize,
    /// Threads without a job (spinning or parked).
    idle: usize,
    /// Threads parked on `work`.
    parked: usize,
}

static POOL: Pool = Pool {
    state: Mutex::new(State {
        jobs: VecDeque::new(),
        threads: 0,
        idle: 0,
        parked: 0,
    }),
    work: Condvar::new(),
    queued: AtomicUsize::new(0),
};

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn submit(&'static self, job: Job) {
        let mut state = self.lock();
        state.jobs.push_back(job);
        self.queued.fetch_add(1, Ordering::Release);
        if state.parked > 0 {
            self.work.notify_one();
        } else if state.idle == 0 && state.threads < MAX_THREADS {
            // No thread is free: start one. If the system refuses, the job
            // waits for a thread that is.
            let started = std::thread::Builder::new()
                .name("moonbox-capability".into())
                .spawn(move || self.worker());
            if started.is_ok() {
                state.threads += 1;
                state.idle += 1;
            }
        }
    }

    /// A worker's life: with a Python thread state of its own, released
    /// while it waits, take jobs until the process ends.
    fn worker(&'static self) {
        let work = || loop {
            let job = self.next();
            job();
            self.lock().idle += 1;
        };
        // The outer attach gives the thread its Python thread state for
        // good; the detach releases the GIL while the thread waits, and each
        // call takes it back. Past the interpreter's exit there is nothing
        // to attach to, and jobs run without it (they refuse themselves).
        if Python::try_attach(|py| py.detach(work)).is_none() {
            work();
        }
    }

    /// The next job: spin for one while `SPIN` lasts, then park.
    fn next(&self) -> Job {
        let spin_until = Instant::now() + SPIN;
        loop {
            if self.queued.load(Ordering::Acquire) > 0 {
                let mut state = self.lock();
                if let Some(job) = state.jobs.pop_front() {
                    self.queued.fetch_sub(1, Ordering::Release);
                    state.idle -= 1;
                    return job;
                }
            }
            if Instant::now() >= spin_until {
                break;
            }
            std::hint::spin_loop();
        }
        let mut state = self.lock();
        loop {
            if let Some(job) = state.jobs.pop_front() {
                self.queued.fetch_sub(1, Ordering::Release);
                state.idle -= 1;
                return job;
            }
            state.parked += 1;
            state = self.work.wait(state).unwrap_or_else(|e| e.into_inner());
            state.parked -= 1;
        }
    }
}

/// Where a call's reply lands.
struct Slot<R> {
    done: AtomicBool,
    value: Mutex<(Option<R>, Option<Waker>)>,
}

/// Runs `f` on a pool thread; the future resolves to its result. Dropping
/// the future abandons the call: it runs on, and its result is dropped.
pub(crate) fn call<R, F>(f: F) -> Reply<R>
where
    R: Send + 'static,
    F: FnOnce() -> R + Send + 'static,
{
    let slot = Arc::new(Slot {
        done: AtomicBool::new(false),
        value: Mutex::new((None, None)),
    });
    let filled = slot.clone();
    POOL.submit(Box::new(move || {
        let result = f();
        let mut value = filled.value.lock().unwrap_or_else(|e| e.into_inner());
        value.0 = Some(result);
        filled.done.store(true, Ordering::Release);
        if let Some(waker) = value.1.take() {
            waker.wake();
        }
    }));
    Reply { slot, spun: false }
}

/// The reply of one [`call`].
pub(crate) struct Reply<R> {
    slot: Arc<Slot<R>>,
    /// Whether the first poll spun already: later polls come from a wake.
    spun: bool,
}

impl<R> Reply<R> {
    fn take(&self) -> Option<R> {
        self.slot
            .value
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .take()
    }
}

impl<R> Future for Reply<R> {
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        if !self.spun {
            // The eval's thread has nothing else to do: wait awake for a
            // moment before parking, for a reply that comes quickly.
            self.spun = true;
            let spin_until = Instant::now() + SPIN;
            while !self.slot.done.load(Ordering::Acquire) && Instant::now() < spin_until {
                std::hint::spin_loop();
            }
        }
        if self.slot.done.load(Ordering::Acquire)
            && let Some(value) = self.take()
        {
            return Poll::Ready(value);
        }
        let mut value = self.slot.value.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(result) = value.0.take() {
            return Poll::Ready(result);
        }
        value.1 = Some(cx.waker().clone());
        Poll::Pending
    }
}
