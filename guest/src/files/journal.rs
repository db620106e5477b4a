//! What the host hears of the session's files as they change: the WIT
//! `output.file` import, one call per change, so that a host keeps what
//! the script wrote to files when the outer wall stops an eval (a timeout,
//! fuel, a trap), which ends it with neither `success` nor `failure`.
//!
//! Only named files that the script made are sent: a file is *journaled*
//! from the moment it gets a name by creation or rename ([`named`]) until
//! it loses it ([`dropped`]); what is written to it or empties it in
//! between is sent too. The host's mounted files (read-only, and the host
//! has them) and anonymous ones (`io.tmpfile`) never are.
//!
//! Natively (the unit tests) there is no host: the changes are kept in a
//! thread-local list that [`take`] hands to the test.

use std::cell::Cell;

thread_local! {
    /// The next number [`next_id`] gives.
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

/// A number no other file of this instance has had: the host knows a file
/// by it across renames.
pub fn next_id() -> u64 {
    NEXT_ID.with(|next| {
        let id = next.get();
        next.set(id.wrapping_add(1));
        id
    })
}

/// A resolved path as the contract reports names: relative to the root
/// (`out/a.csv`), as `Namespace::written` gives them.
pub fn report_name(path: &[u8]) -> String {
    let name = path.strip_prefix(b"/").unwrap_or(path);
    String::from_utf8_lossy(name).into_owned()
}

#[cfg(target_family = "wasm")]
mod host {
    use crate::bindings::output;
    use crate::bindings::{FileChange, FileWrite, NamedFile};

    pub fn named(id: u64, path: &[u8]) {
        let name = super::report_name(path);
        output::file(&FileChange::Named(NamedFile { id, name }));
    }

    pub fn dropped(id: u64) {
        output::file(&FileChange::Dropped(id));
    }

    pub fn wrote(id: u64, offset: u64, bytes: &[u8]) {
        let bytes = bytes.to_vec();
        output::file(&FileChange::Wrote(FileWrite { id, offset, bytes }));
    }

    pub fn emptied(id: u64) {
        output::file(&FileChange::Emptied(id));
    }
}

#[cfg(not(target_family = "wasm"))]
mod host {
    use std::cell::RefCell;

    /// A change as the unit tests see it.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Change {
        Named(u64, String),
        Dropped(u64),
        Wrote(u64, u64, Vec<u8>),
        Emptied(u64),
    }

    thread_local! {
        static CHANGES: RefCell<Vec<Change>> = const { RefCell::new(Vec::new()) };
    }

    fn push(change: Change) {
        CHANGES.with(|changes| changes.borrow_mut().push(change));
    }

    pub fn named(id: u64, path: &[u8]) {
        push(Change::Named(id, super::report_name(path)));
    }

    pub fn dropped(id: u64) {
        push(Change::Dropped(id));
    }

    pub fn wrote(id: u64, offset: u64, bytes: &[u8]) {
        push(Change::Wrote(id, offset, bytes.to_vec()));
    }

    pub fn emptied(id: u64) {
        push(Change::Emptied(id));
    }

    /// The changes this thread has sent since the last call.
    pub fn take() -> Vec<Change> {
        CHANGES.with(|changes| std::mem::take(&mut *changes.borrow_mut()))
    }
}

pub use host::{dropped, emptied, named, wrote};

#[cfg(not(target_family = "wasm"))]
#[cfg(test)]
pub use host::{Change, take};
