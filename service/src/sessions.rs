//! [`Sessions`]: the open sessions of a server, by id, with a cap in all and
//! per owner, and an idle time after which a session closes. `moonbox
//! serve` (over HTTP and NATS) and `moonbox mcp` keep theirs in it.
//!
//! The table knows nothing of what a session runs: it holds any `S`, with
//! a way to stop the work running in it ([`Slot::new`]'s `stop`). Ids are
//! 128 random bits in hex, so that one client cannot guess another's. A
//! session belongs to the owner that opened it (a tenant, or `None` on a
//! server without tenants): to any other owner it does not exist. One
//! call runs in a session at a time: its slot's lock is held for the call,
//! and [`Slot::running`] marks it busy, so that the sweep never closes a
//! session a call is using and never makes a call find it busy.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Why a session could not be opened or found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The server holds as many sessions as its cap.
    #[error("{max} sessions are open, the server's bound")]
    Full {
        /// The cap.
        max: usize,
    },
    /// The owner holds as many sessions as its cap.
    #[error("'{owner}' has {held} sessions open, its bound")]
    OwnerFull {
        /// The owner.
        owner: String,
        /// Sessions it holds or is starting.
        held: usize,
    },
    /// No open session has this id (for this owner).
    #[error("no open session has the id '{id}'")]
    Unknown {
        /// The id asked for, cut to 64 characters.
        id: String,
    },
    /// The system gave no random bytes for an id.
    #[error("no random bytes for a session id: {0}")]
    NoId(String),
}

/// Stops the work running in a session, from outside its lock.
type Stop = Box<dyn Fn() + Send + Sync>;

/// One open session, shared by the table and the calls using it.
pub struct Slot<S> {
    /// The session, held for the length of a call.
    pub session: tokio::sync::Mutex<S>,
    stop: Mutex<Stop>,
    /// Set while a call holds the session. The sweep reads this, never the
    /// lock: a sweep that tried the lock held it for a moment, in which a
    /// call arriving found the session busy.
    running: AtomicBool,
    /// Set by [`Slot::stop`] while a call runs, until that call ends: the
    /// session is busy only while its stopped call winds down.
    stopping: AtomicBool,
    /// Whether the running call was asked to stop by its client, before
    /// it has noticed (see [`Slot::stop_requested_by`]).
    asked_to_stop: Mutex<Option<AskedToStop>>,
}

/// See [`Slot::stop_requested_by`].
type AskedToStop = Box<dyn Fn() -> bool + Send + Sync>;

impl<S> std::fmt::Debug for Slot<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("running", &self.running.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Marks a session as running a call until dropped; see [`Slot::running`].
#[derive(Debug)]
pub struct Running<'a, S>(&'a Slot<S>);

impl<S> Drop for Running<'_, S> {
    fn drop(&mut self) {
        *self
            .0
            .asked_to_stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
        self.0.stopping.store(false, Ordering::Release);
        self.0.running.store(false, Ordering::Release);
    }
}

impl<S> Slot<S> {
    /// A slot for `session`; `stop` stops the work running in it (and is
    /// called when the session is closed).
    pub fn new(session: S, stop: impl Fn() + Send + Sync + 'static) -> Arc<Slot<S>> {
        Arc::new(Slot {
            session: tokio::sync::Mutex::new(session),
            stop: Mutex::new(Box::new(stop)),
            running: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            asked_to_stop: Mutex::new(None),
        })
    }

    /// Stops the work running in the session, if any.
    pub fn stop(&self) {
        if self.is_busy() {
            self.stopping.store(true, Ordering::Release);
        }
        (self.stop.lock().unwrap_or_else(PoisonError::into_inner))();
    }

    /// The session for a call: at once when it is free; when the call
    /// holding it was stopped ([`Slot::stop`]) and is winding down, once it
    /// has (at most `wait`); `None` when another call runs in it.
    ///
    /// # Cancel safety
    /// Dropping the future gives up the wait; nothing is held.
    pub async fn lock_for_call(
        &self,
        wait: std::time::Duration,
    ) -> Option<tokio::sync::MutexGuard<'_, S>> {
        if let Ok(session) = self.session.try_lock() {
            return Some(session);
        }
        let asked = self
            .asked_to_stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|asked| asked());
        if !asked && !self.stopping.load(Ordering::Acquire) {
            return None;
        }
        tokio::time::timeout(wait, self.session.lock()).await.ok()
    }

    /// Tells the slot how to see that the running call's client asked it to
    /// stop (a protocol's cancel), which it may not have noticed yet: until
    /// the call ends, [`Slot::lock_for_call`] then waits for it as for a
    /// [`stop`](Slot::stop). Call it after [`Slot::running`].
    pub fn stop_requested_by(&self, asked: impl Fn() -> bool + Send + Sync + 'static) {
        *self
            .asked_to_stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Box::new(asked));
    }

    /// Marks the session as running a call until the guard is dropped;
    /// call it while holding [`Slot::session`].
    pub fn running(&self) -> Running<'_, S> {
        self.stopping.store(false, Ordering::Release);
        self.running.store(true, Ordering::Release);
        Running(self)
    }

    fn is_busy(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }
}

struct Entry<S> {
    slot: Arc<Slot<S>>,
    owner: Option<String>,
    last_used: Instant,
}

struct Table<S> {
    open: HashMap<String, Entry<S>>,
    /// Sessions being started, counted against the caps: in all, and by
    /// owner.
    starting: usize,
    starting_by: HashMap<String, usize>,
}

impl<S> Table<S> {
    /// Sessions `owner` holds or is starting.
    fn held_by(&self, owner: &str) -> usize {
        let open = self
            .open
            .values()
            .filter(|entry| entry.owner.as_deref() == Some(owner))
            .count();
        open + self.starting_by.get(owner).copied().unwrap_or(0)
    }

    /// Closes the sessions idle past `ttl` (one running a call is never
    /// idle) and returns them, for the caller to drop once the table is
    /// unlocked: dropping a session frees what it holds, which should not
    /// hold up other lookups.
    #[must_use]
    fn sweep(&mut self, ttl: Duration) -> Vec<Entry<S>> {
        let now = Instant::now();
        let idle: Vec<String> = self
            .open
            .iter()
            .filter(|(_, entry)| {
                !entry.slot.is_busy() && now.saturating_duration_since(entry.last_used) >= ttl
            })
            .map(|(id, _)| id.clone())
            .collect();
        let mut closed = Vec::with_capacity(idle.len());
        for id in idle {
            if let Some(entry) = self.open.remove(&id) {
                entry.slot.stop();
                closed.push(entry);
            }
        }
        closed
    }
}

/// The open sessions: see the [module](self). A `Sync` value; share it
/// behind the server's `Arc`.
///
/// ```
/// use std::time::Duration;
/// use moonbox_service::sessions::{Sessions, Slot};
///
/// let sessions = Sessions::new(8, 2, Duration::from_secs(600));
/// let place = sessions.reserve(Some("tenant-a")).unwrap();
/// let id = place.fill(Slot::new("a session", || {})).unwrap();
/// let slot = sessions.get(&id, Some("tenant-a")).unwrap();
/// assert_eq!(*slot.session.try_lock().unwrap(), "a session");
/// // To anyone else, it does not exist.
/// assert!(sessions.get(&id, Some("tenant-b")).is_err());
/// ```
pub struct Sessions<S> {
    max: usize,
    per_owner: usize,
    ttl: Duration,
    table: Mutex<Table<S>>,
}

impl<S> std::fmt::Debug for Sessions<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("max", &self.max)
            .field("per_owner", &self.per_owner)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// A place under the caps, held while a session starts: taken by
/// [`Sessions::reserve`], filled by [`Reservation::fill`], given back when
/// dropped unfilled (an error, a cancelled start).
pub struct Reservation<'a, S> {
    sessions: &'a Sessions<S>,
    owner: Option<String>,
    /// Set once the place holds the session.
    filled: bool,
}

impl<S> std::fmt::Debug for Reservation<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reservation")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

impl<S> Reservation<'_, S> {
    /// Opens `slot` in the reserved place and returns its new id.
    ///
    /// # Errors
    /// [`SessionError::NoId`] when the system gives no random bytes; the
    /// place is given back.
    pub fn fill(mut self, slot: Arc<Slot<S>>) -> Result<String, SessionError> {
        let id = new_id()?;
        let mut table = self.sessions.table();
        // One step under the lock: the session stops counting as starting
        // as it starts counting as open, so that no `reserve` in between
        // sees it twice.
        give_back(&mut table, self.owner.as_deref());
        table.open.insert(
            id.clone(),
            Entry {
                slot,
                owner: self.owner.take(),
                last_used: Instant::now(),
            },
        );
        self.filled = true;
        Ok(id)
    }
}

impl<S> Drop for Reservation<'_, S> {
    fn drop(&mut self) {
        if !self.filled {
            give_back(&mut self.sessions.table(), self.owner.as_deref());
        }
    }
}

/// Gives back a place counted as starting for `owner`.
fn give_back<S>(table: &mut Table<S>, owner: Option<&str>) {
    table.starting = table.starting.saturating_sub(1);
    if let Some(owner) = owner
        && let Some(n) = table.starting_by.get_mut(owner)
    {
        *n = n.saturating_sub(1);
        if *n == 0 {
            table.starting_by.remove(owner);
        }
    }
}

impl<S> Sessions<S> {
    /// A table of at most `max` sessions, `per_owner` of them for one
    /// owner, each closed after `ttl` without a call.
    pub fn new(max: usize, per_owner: usize, ttl: Duration) -> Sessions<S> {
        Sessions {
            max,
            per_owner,
            ttl,
            table: Mutex::new(Table {
                open: HashMap::new(),
                starting: 0,
                starting_by: HashMap::new(),
            }),
        }
    }

    fn table(&self) -> MutexGuard<'_, Table<S>> {
        // The table holds no invariant a panic mid-update could break.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long a session may go without a call.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Sessions open now.
    pub fn live(&self) -> usize {
        self.table().open.len()
    }

    /// Takes a place for a session of `owner` under the caps (closing idle
    /// sessions first).
    ///
    /// # Errors
    /// [`SessionError::OwnerFull`] at the owner's cap,
    /// [`SessionError::Full`] at the server's.
    pub fn reserve(&self, owner: Option<&str>) -> Result<Reservation<'_, S>, SessionError> {
        let (closed, taken) = {
            let mut table = self.table();
            let closed = table.sweep(self.ttl);
            (closed, self.take_place(&mut table, owner))
        };
        drop(closed);
        taken?;
        Ok(Reservation {
            sessions: self,
            owner: owner.map(str::to_owned),
            filled: false,
        })
    }

    fn take_place(&self, table: &mut Table<S>, owner: Option<&str>) -> Result<(), SessionError> {
        if let Some(owner) = owner {
            let held = table.held_by(owner);
            if held >= self.per_owner {
                return Err(SessionError::OwnerFull {
                    owner: owner.to_owned(),
                    held,
                });
            }
        }
        if table.open.len() + table.starting >= self.max {
            return Err(SessionError::Full { max: self.max });
        }
        table.starting += 1;
        if let Some(owner) = owner {
            *table.starting_by.entry(owner.to_owned()).or_default() += 1;
        }
        Ok(())
    }

    /// The session `id` of `owner`. Only a call that runs in it marks it
    /// as used ([`Sessions::touch`]): a refused request does not keep a
    /// session alive.
    ///
    /// # Errors
    /// [`SessionError::Unknown`] for an id that is not open, or is another
    /// owner's.
    pub fn get(&self, id: &str, owner: Option<&str>) -> Result<Arc<Slot<S>>, SessionError> {
        let (found, closed) = {
            let mut table = self.table();
            let closed = table.sweep(self.ttl);
            let found = match table.open.get(id) {
                Some(entry) if entry.owner.as_deref() == owner => Ok(entry.slot.clone()),
                _ => Err(unknown(id)),
            };
            (found, closed)
        };
        drop(closed);
        found
    }

    /// Whether `slot` is still the open session `id`.
    pub fn is_open(&self, id: &str, slot: &Slot<S>) -> bool {
        self.table()
            .open
            .get(id)
            .is_some_and(|entry| std::ptr::eq(Arc::as_ptr(&entry.slot), slot))
    }

    /// Marks a session as used now, so that its idle time starts when its
    /// call ends.
    pub fn touch(&self, id: &str) {
        if let Some(entry) = self.table().open.get_mut(id) {
            entry.last_used = Instant::now();
        }
    }

    /// Closes the session `id` of `owner`, stopping the work running in it
    /// (and, where the session's stop is sticky, any started in it later).
    ///
    /// # Errors
    /// [`SessionError::Unknown`], as for [`Sessions::get`].
    pub fn close(&self, id: &str, owner: Option<&str>) -> Result<(), SessionError> {
        let (found, closed) = {
            let mut table = self.table();
            let closed = table.sweep(self.ttl);
            let found = match table.open.get(id) {
                Some(entry) if entry.owner.as_deref() == owner => table.open.remove(id),
                _ => None,
            };
            (found, closed)
        };
        drop(closed);
        let entry = found.ok_or_else(|| unknown(id))?;
        entry.slot.stop();
        Ok(())
    }

    /// Puts `fresh` (with its `stop`) in place of `old`, the session of
    /// `slot` that the caller holds locked, when `slot` is still the open
    /// session `id`; returns the session replaced, or `None` (dropping
    /// `fresh`) when `id` was closed meanwhile.
    ///
    /// Checked and done under the table's lock, so that a `close` either
    /// comes first (and nothing is replaced) or after (and stops the fresh
    /// session).
    pub fn replace(
        &self,
        id: &str,
        slot: &Slot<S>,
        old: &mut S,
        fresh: S,
        stop: impl Fn() + Send + Sync + 'static,
    ) -> Option<S> {
        let table = self.table();
        let open = table
            .open
            .get(id)
            .is_some_and(|entry| std::ptr::eq(Arc::as_ptr(&entry.slot), slot));
        if !open {
            return None;
        }
        *slot.stop.lock().unwrap_or_else(PoisonError::into_inner) = Box::new(stop);
        Some(std::mem::replace(old, fresh))
    }

    /// Closes the sessions idle past the TTL.
    pub fn sweep(&self) {
        let closed = self.table().sweep(self.ttl);
        drop(closed);
    }

    /// Closes every session, stopping the work running in them.
    pub fn close_all(&self) {
        let closed: Vec<Entry<S>> = self.table().open.drain().map(|(_, entry)| entry).collect();
        for entry in &closed {
            entry.slot.stop();
        }
    }
}

/// The error for `id`, quoting a bounded part of it: an id of any length
/// may arrive.
pub fn unknown(id: &str) -> SessionError {
    SessionError::Unknown {
        id: id.chars().take(64).collect(),
    }
}

/// 128 bits from the operating system's generator, as 32 hex digits.
fn new_id() -> Result<String, SessionError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| SessionError::NoId(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// A session that counts how often it was stopped.
    fn slot(stops: &Arc<AtomicUsize>) -> Arc<Slot<&'static str>> {
        let stops = stops.clone();
        Slot::new("session", move || {
            stops.fetch_add(1, Ordering::Relaxed);
        })
    }

    #[tokio::test]
    async fn a_call_waits_only_for_a_stopped_call_to_wind_down() {
        let stops = Arc::new(AtomicUsize::new(0));
        let slot = slot(&stops);
        let wait = Duration::from_secs(5);
        assert!(slot.lock_for_call(wait).await.is_some(), "free: at once");
        // A call runs: another is refused at once, however long it may wait.
        let held = slot.session.try_lock().unwrap();
        let running = slot.running();
        assert!(slot.lock_for_call(wait).await.is_none());
        // Stopped, it winds down; the next call waits for it.
        slot.stop();
        assert_eq!(stops.load(Ordering::Relaxed), 1);
        let slot2 = slot.clone();
        let next = tokio::spawn(async move { slot2.lock_for_call(wait).await.is_some() });
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(running);
        drop(held);
        assert!(next.await.unwrap(), "the next call got the session");
        // A client's cancel the call has not noticed yet counts as a stop.
        let asked = Arc::new(AtomicBool::new(false));
        let held = slot.session.try_lock().unwrap();
        let running = slot.running();
        let flag = asked.clone();
        slot.stop_requested_by(move || flag.load(Ordering::Relaxed));
        assert!(slot.lock_for_call(Duration::ZERO).await.is_none());
        asked.store(true, Ordering::Relaxed);
        let slot2 = slot.clone();
        let next = tokio::spawn(async move { slot2.lock_for_call(wait).await.is_some() });
        tokio::time::sleep(Duration::from_millis(50)).await;
        drop(running);
        drop(held);
        assert!(next.await.unwrap());
        // A stop while nothing runs leaves no mark on later calls.
        slot.stop();
        let held = slot.session.try_lock().unwrap();
        let _running = slot.running();
        assert!(slot.lock_for_call(wait).await.is_none());
        drop(held);
    }

    #[test]
    fn the_caps_count_sessions_starting_and_open_in_all_and_by_owner() {
        let sessions = Sessions::<&str>::new(3, 2, Duration::from_secs(60));
        let stops = Arc::new(AtomicUsize::new(0));
        let a1 = sessions.reserve(Some("a")).unwrap();
        let _a2 = sessions.reserve(Some("a")).unwrap();
        // Two starting: the owner's cap.
        let third = sessions.reserve(Some("a")).unwrap_err();
        assert_eq!(
            third,
            SessionError::OwnerFull {
                owner: "a".into(),
                held: 2
            }
        );
        a1.fill(slot(&stops)).unwrap();
        assert_eq!(sessions.live(), 1);
        // Filled, it counts once: open, no longer starting.
        assert_eq!(
            sessions.reserve(Some("a")).unwrap_err(),
            SessionError::OwnerFull {
                owner: "a".into(),
                held: 2
            }
        );
        let _b = sessions.reserve(Some("b")).unwrap();
        assert_eq!(
            sessions.reserve(None).unwrap_err(),
            SessionError::Full { max: 3 }
        );
        // A start given up gives its place back.
        drop(_b);
        assert!(sessions.reserve(Some("b")).is_ok());
    }

    #[test]
    fn a_session_is_another_owners_to_no_one_and_closing_stops_it() {
        let sessions = Sessions::new(4, 4, Duration::from_secs(60));
        let stops = Arc::new(AtomicUsize::new(0));
        let id = sessions
            .reserve(Some("a"))
            .unwrap()
            .fill(slot(&stops))
            .unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(matches!(
            sessions.get(&id, Some("b")),
            Err(SessionError::Unknown { .. })
        ));
        assert!(sessions.close(&id, Some("b")).is_err());
        assert!(sessions.get(&id, None).is_err());
        sessions.close(&id, Some("a")).unwrap();
        assert_eq!(stops.load(Ordering::Relaxed), 1);
        assert!(sessions.get(&id, Some("a")).is_err());
        // An unknown id is quoted in part.
        let long = "x".repeat(10_000);
        let SessionError::Unknown { id } = sessions.get(&long, None).unwrap_err() else {
            panic!("unknown");
        };
        assert_eq!(id.len(), 64);
    }

    #[test]
    fn idle_sessions_close_and_busy_ones_do_not() {
        let sessions = Sessions::new(4, 4, Duration::from_millis(20));
        let stops = Arc::new(AtomicUsize::new(0));
        let idle = sessions.reserve(None).unwrap().fill(slot(&stops)).unwrap();
        let busy = sessions.reserve(None).unwrap().fill(slot(&stops)).unwrap();
        let busy_slot = sessions.get(&busy, None).unwrap();
        let _running = busy_slot.running();
        std::thread::sleep(Duration::from_millis(40));
        sessions.sweep();
        assert!(sessions.get(&idle, None).is_err());
        assert!(sessions.get(&busy, None).is_ok());
        assert_eq!(stops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_session_closed_before_its_replacement_stays_closed() {
        let sessions = Sessions::new(4, 4, Duration::from_secs(60));
        let stops = Arc::new(AtomicUsize::new(0));
        let id = sessions.reserve(None).unwrap().fill(slot(&stops)).unwrap();
        let held = sessions.get(&id, None).unwrap();
        let mut session = held.session.try_lock().unwrap();
        sessions.close(&id, None).unwrap();
        assert!(
            sessions
                .replace(&id, &held, &mut session, "fresh", || {})
                .is_none()
        );
        assert_eq!(*session, "session");

        // Replaced while open: a close after that stops the fresh one.
        let id = sessions.reserve(None).unwrap().fill(slot(&stops)).unwrap();
        let held = sessions.get(&id, None).unwrap();
        let mut session = held.session.try_lock().unwrap();
        let fresh_stops = Arc::new(AtomicUsize::new(0));
        let counter = fresh_stops.clone();
        let replaced = sessions.replace(&id, &held, &mut session, "fresh", move || {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(replaced, Some("session"));
        sessions.close(&id, None).unwrap();
        assert_eq!(fresh_stops.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn the_sweep_never_makes_a_call_find_its_session_busy() {
        let sessions = Arc::new(Sessions::new(4, 4, Duration::from_secs(600)));
        let stops = Arc::new(AtomicUsize::new(0));
        let id = sessions.reserve(None).unwrap().fill(slot(&stops)).unwrap();
        let held = sessions.get(&id, None).unwrap();
        // Sweeps in a loop, as the sweeper and every lookup do.
        let stop = Arc::new(AtomicBool::new(false));
        let sweeper = {
            let (sessions, stop) = (sessions.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut sweeps = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    sessions.sweep();
                    sweeps += 1;
                }
                sweeps
            })
        };
        // Calls taking the idle session, as the servers do.
        let mut busy = 0;
        for _ in 0..200_000 {
            match held.session.try_lock() {
                Ok(_session) => {
                    let _running = held.running();
                }
                Err(_) => busy += 1,
            }
        }
        stop.store(true, Ordering::Relaxed);
        let sweeps = sweeper.join().unwrap();
        assert!(sweeps > 0);
        assert_eq!(busy, 0, "{busy} calls found the session busy");
    }
}
