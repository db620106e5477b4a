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

use crate::bindings::{FileChange, FileWrite, NamedFile};

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

/// The file `id` now has the resolved `path`.
pub fn named(id: u64, path: &[u8]) {
    let name = report_name(path);
    send(FileChange::Named(NamedFile { id, name }));
}

/// The file `id` has lost its name.
pub fn dropped(id: u64) {
    send(FileChange::Dropped(id));
}

/// `bytes` were written to the file `id` at `offset`.
pub fn wrote(id: u64, offset: u64, bytes: &[u8]) {
    let bytes = bytes.to_vec();
    send(FileChange::Wrote(FileWrite { id, offset, bytes }));
}

/// The file `id` was emptied.
pub fn emptied(id: u64) {
    send(FileChange::Emptied(id));
}

#[cfg(target_family = "wasm")]
fn send(change: FileChange) {
    crate::bindings::output::file(&change);
}

#[cfg(not(target_family = "wasm"))]
thread_local! {
    static CHANGES: std::cell::RefCell<Vec<FileChange>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(not(target_family = "wasm"))]
fn send(change: FileChange) {
    CHANGES.with(|changes| changes.borrow_mut().push(change));
}

/// The changes this thread has sent since the last call.
#[cfg(all(test, not(target_family = "wasm")))]
pub fn take() -> Vec<FileChange> {
    CHANGES.with(|changes| std::mem::take(&mut *changes.borrow_mut()))
}
