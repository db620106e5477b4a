//! The host's copy of the files a session's scripts wrote, kept from the
//! guest's `output.file` changes as they happen, so that an eval the outer
//! wall stops (a timeout, fuel, a trap, a cancel), which ends with neither
//! `success` nor `failure`, still reports what its script wrote to files,
//! as its output is kept.
//!
//! When the guest ends an eval itself, its own account (`success.files`,
//! `failure.files`) is the one reported; this copy agrees with it, less the
//! bytes a stream still buffered (docs/wit.md, Files). The copy counts
//! against nothing in the guest, so it is bounded here: by the session's
//! `max-memory-bytes`, which the guest's files count against too, so a
//! guest that keeps to its limit never reaches it.

use std::collections::HashMap;

use crate::File;
use crate::bindings::types::FileChange;

/// What the host keeps for one of the script's files (see the module).
#[derive(Debug, Default)]
struct Entry {
    name: String,
    bytes: Vec<u8>,
    /// Created, written, emptied or renamed in the current eval.
    touched: bool,
}

/// A session's files as the guest's changes describe them.
#[derive(Debug)]
pub(crate) struct FileMirror {
    files: HashMap<u64, Entry>,
    /// Names and bytes held, against `max_bytes`.
    held: usize,
    max_bytes: usize,
    /// A change did not fit in `max_bytes` (only a guest that broke its own
    /// limit sends one): the copy is incomplete from then on.
    overflowed: bool,
}

impl FileMirror {
    /// An empty copy holding at most `max_bytes` of names and contents.
    pub(crate) fn new(max_bytes: u64) -> FileMirror {
        FileMirror {
            files: HashMap::new(),
            held: 0,
            max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
            overflowed: false,
        }
    }

    /// A new eval starts: no file is touched yet.
    pub(crate) fn begin_eval(&mut self) {
        for entry in self.files.values_mut() {
            entry.touched = false;
        }
    }

    /// Applies one change from the guest.
    pub(crate) fn apply(&mut self, change: FileChange) {
        match change {
            // The name is free: a file that had it was dropped before.
            FileChange::Named(named) => {
                let name_len = named.name.len();
                match self.files.get_mut(&named.id) {
                    Some(entry) => {
                        self.held = self.held - entry.name.len() + name_len;
                        entry.name = named.name;
                        entry.touched = true;
                    }
                    None => {
                        if !self.reserve(name_len) {
                            return;
                        }
                        self.files.insert(
                            named.id,
                            Entry {
                                name: named.name,
                                bytes: Vec::new(),
                                touched: true,
                            },
                        );
                    }
                }
            }
            FileChange::Dropped(id) => self.drop_file(id),
            FileChange::Wrote(write) => {
                let Some(len) = self.files.get(&write.id).map(|e| e.bytes.len()) else {
                    return;
                };
                let end = usize::try_from(write.offset)
                    .ok()
                    .and_then(|offset| offset.checked_add(write.bytes.len()));
                let Some(end) = end else {
                    self.overflowed = true;
                    return;
                };
                if end > len && !self.reserve(end - len) {
                    return;
                }
                let Some(entry) = self.files.get_mut(&write.id) else {
                    return;
                };
                if end > len {
                    entry.bytes.resize(end, 0);
                }
                let start = end - write.bytes.len();
                entry.bytes[start..end].copy_from_slice(&write.bytes);
                entry.touched = true;
            }
            FileChange::Emptied(id) => {
                if let Some(entry) = self.files.get_mut(&id) {
                    self.held -= entry.bytes.len();
                    entry.bytes = Vec::new();
                    entry.touched = true;
                }
            }
        }
    }

    /// The files the current eval touched that still have a name, sorted
    /// by name, as the guest reports them; `None` if the copy overflowed
    /// (then nothing it holds is reported as a file the script wrote).
    pub(crate) fn touched(&self) -> Option<Vec<File>> {
        if self.overflowed {
            return None;
        }
        let mut files: Vec<File> = self
            .files
            .values()
            .filter(|entry| entry.touched)
            .map(|entry| File::new(entry.name.clone(), entry.bytes.clone()))
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Some(files)
    }

    /// Counts `bytes` more against the bound, or marks the copy incomplete.
    fn reserve(&mut self, bytes: usize) -> bool {
        match self.held.checked_add(bytes) {
            Some(held) if held <= self.max_bytes => {
                self.held = held;
                true
            }
            _ => {
                self.overflowed = true;
                false
            }
        }
    }

    fn drop_file(&mut self, id: u64) {
        if let Some(entry) = self.files.remove(&id) {
            self.held -= entry.name.len() + entry.bytes.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::types::{FileWrite, NamedFile};

    fn named(id: u64, name: &str) -> FileChange {
        FileChange::Named(NamedFile {
            id,
            name: name.to_owned(),
        })
    }

    fn wrote(id: u64, offset: u64, bytes: &[u8]) -> FileChange {
        FileChange::Wrote(FileWrite {
            id,
            offset,
            bytes: bytes.to_vec(),
        })
    }

    fn names(mirror: &FileMirror) -> Vec<(String, Vec<u8>)> {
        mirror
            .touched()
            .expect("complete")
            .into_iter()
            .map(|f| (f.name, f.bytes))
            .collect()
    }

    #[test]
    fn changes_rebuild_the_files_an_eval_touched() {
        let mut mirror = FileMirror::new(1 << 20);
        mirror.apply(named(1, "a.txt"));
        mirror.apply(wrote(1, 0, b"hello"));
        mirror.apply(wrote(1, 7, b"!"));
        mirror.apply(named(2, "b.txt"));
        // A rename over b.txt: the guest drops the file that had the name.
        mirror.apply(FileChange::Dropped(2));
        mirror.apply(named(1, "b.txt"));
        mirror.apply(wrote(9, 0, b"unknown id: ignored"));
        assert_eq!(
            names(&mirror),
            [("b.txt".to_owned(), b"hello\0\0!".to_vec())]
        );
        mirror.begin_eval();
        assert!(names(&mirror).is_empty(), "a new eval has touched nothing");
        mirror.apply(FileChange::Emptied(1));
        assert_eq!(names(&mirror), [("b.txt".to_owned(), Vec::new())]);
        mirror.apply(FileChange::Dropped(1));
        assert!(names(&mirror).is_empty());
        assert_eq!(mirror.held, 0, "everything given back");
    }

    #[test]
    fn a_copy_past_its_bound_reports_nothing_rather_than_a_wrong_file() {
        let mut mirror = FileMirror::new(16);
        mirror.apply(named(1, "a"));
        mirror.apply(wrote(1, 0, b"0123456789"));
        assert_eq!(names(&mirror).len(), 1);
        mirror.apply(wrote(1, 10, b"0123456789"));
        assert_eq!(mirror.touched(), None);
        let mut far = FileMirror::new(16);
        far.apply(named(1, "a"));
        far.apply(wrote(1, u64::MAX, b"x"));
        assert_eq!(far.touched(), None, "an offset past any address overflows");
    }
}
