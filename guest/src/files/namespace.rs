//! The session's files as plain Rust, apart from the C streams `files` puts
//! on top: how a name is resolved, the namespace (a map from path to
//! file), each file's bytes and what they are charged, and an open file's
//! mode and position. Natively unit-tested; nothing here calls Lua or the
//! C library.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::c_int;
use std::ptr::NonNull;
use std::rc::Rc;

use crate::contract;
use crate::errno;
use crate::vm::Vm;

use super::journal;

/// The longest name accepted, in bytes (Linux's `PATH_MAX`; the contract's
/// `max-file-name-bytes`); a longer one fails with `ENAMETOOLONG`.
pub const MAX_NAME_BYTES: usize = contract::MAX_FILE_NAME_BYTES as usize;

/// What each file is charged beyond its bytes and its name: the map entry,
/// the `Rc` and the bookkeeping, rounded up, so that a flood of empty files
/// is bounded by the memory limit too (the contract's
/// `file-overhead-bytes`).
pub const FILE_OVERHEAD: usize = contract::FILE_OVERHEAD_BYTES as usize;

/// The most files a namespace holds, mounted and written together (the
/// contract's `max-files`); one more is [`Error::TooMany`].
pub const MAX_FILES: usize = contract::MAX_FILES as usize;

/// What each open stream is charged: musl's `FILE` with its `BUFSIZ`
/// (1024-byte) buffer, which the C library allocates outside the Lua heap,
/// and the stream's own state, rounded up.
pub const STREAM_BYTES: usize = 1536;

/// Why an operation on the files failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// `ENOENT`: no file by that name (or an empty name).
    NotFound,
    /// `EISDIR`: the name can only be a directory, and the mode would
    /// create or write it.
    IsDirectory,
    /// `ENOTDIR`: a name ending in `/` (or `.`, `..`) where a file by the
    /// name before it exists.
    NotDirectory,
    /// `ENAMETOOLONG`: over [`MAX_NAME_BYTES`].
    NameTooLong,
    /// `EBUSY`: removing or renaming the root.
    Busy,
    /// `EBADF`: reading a stream opened only for writing, or writing one
    /// opened only for reading.
    BadDescriptor,
    /// `EINVAL`: a position before the start of the file, or a bad mode.
    InvalidArgument,
    /// `ENOSPC`: the bytes do not fit in `max-memory-bytes` beside the Lua
    /// heap and the other files; the caller trips the memory limit.
    NoRoom,
    /// `ENOMEM`: the linear memory itself is exhausted; the caller trips the
    /// memory limit too.
    Exhausted,
    /// `EACCES`: writing, removing or renaming a file the host mounted
    /// read-only.
    ReadOnly,
    /// `ENOSPC`: a new file past [`MAX_FILES`]; the caller trips the memory
    /// limit.
    TooMany,
}

impl Error {
    /// The `errno` value (Linux's numbering; see `errno`) for this error.
    pub fn errno(self) -> c_int {
        match self {
            Error::NotFound => errno::ENOENT,
            Error::IsDirectory => errno::EISDIR,
            Error::NotDirectory => errno::ENOTDIR,
            Error::NameTooLong => errno::ENAMETOOLONG,
            Error::Busy => errno::EBUSY,
            Error::BadDescriptor => errno::EBADF,
            Error::InvalidArgument => errno::EINVAL,
            Error::NoRoom | Error::TooMany => errno::ENOSPC,
            Error::Exhausted => errno::ENOMEM,
            Error::ReadOnly => errno::EACCES,
        }
    }
}

/// What a name resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    /// A file's path: `/` and the name's components joined by `/`.
    File(Vec<u8>),
    /// A name that can only stand for a directory (the root, or one that
    /// ends in `/`, `.` or `..`), with the path it resolves to (`/` for the
    /// root).
    Directory(Vec<u8>),
}

/// Resolves `name` against the working directory, the root: `a`, `./a`
/// and `/a` are the same file; `.` and empty components are dropped, `..`
/// drops the component before it and stays at the root at the top (as
/// `/..` is `/` in POSIX). Names are bytes. An empty name is `NotFound`,
/// one over [`MAX_NAME_BYTES`] `NameTooLong`.
pub fn resolve(name: &[u8]) -> Result<Name, Error> {
    if name.is_empty() {
        return Err(Error::NotFound);
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(Error::NameTooLong);
    }
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in name.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    let mut path = Vec::with_capacity(name.len() + 1);
    for part in &parts {
        path.push(b'/');
        path.extend_from_slice(part);
    }
    if path.is_empty() {
        path.push(b'/');
    }
    let last = name.rsplit(|&b| b == b'/').next().unwrap_or_default();
    if parts.is_empty() || matches!(last, b"" | b"." | b"..") {
        Ok(Name::Directory(path))
    } else {
        Ok(Name::File(path))
    }
}

/// How a file is opened: C's `fopen` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    pub read: bool,
    pub write: bool,
    /// Every write goes to the end.
    pub append: bool,
    /// A missing file is created.
    pub create: bool,
    /// An existing file is emptied.
    pub truncate: bool,
}

impl Mode {
    /// `w+`, the mode of `tmpfile`.
    pub const READ_WRITE_NEW: Mode = Mode {
        read: true,
        write: true,
        append: false,
        create: true,
        truncate: true,
    };

    /// Parses a C mode: `r`, `w` or `a`, then anything, in which a `+`
    /// adds the other direction (so `rb+` and `r+b` are `r+`; `b` and other
    /// letters are ignored, as the C library does). `None` if the first
    /// letter is none of those.
    pub fn parse(mode: &[u8]) -> Option<Mode> {
        let plus = mode.get(1..).unwrap_or_default().contains(&b'+');
        let (read, write, append, create, truncate) = match mode.first()? {
            b'r' => (true, plus, false, false, false),
            b'w' => (plus, true, false, true, true),
            b'a' => (plus, true, true, true, false),
            _ => return None,
        };
        Some(Mode {
            read,
            write,
            append,
            create,
            truncate,
        })
    }
}

/// One file's bytes, shared by its name in the namespace and by every
/// stream open on it, so a removed file lives on while a stream has it
/// open (as in POSIX).
///
/// Its cost counts against the Vm's memory limit (see
/// `Vm::charge_external`) for as long as it exists: [`FILE_OVERHEAD`],
/// its name's bytes while it has one, and its bytes. Dropping it gives
/// them back.
pub struct Data {
    /// The Vm whose limit the file counts against; it outlives the file
    /// (see [`Data::create`]).
    vm: NonNull<Vm>,
    bytes: RefCell<Vec<u8>>,
    /// The bytes of the name it is charged for (0 once it has none).
    name_bytes: Cell<usize>,
    /// Mounted by the host: no stream may write it, and it cannot be
    /// removed or renamed.
    read_only: Cell<bool>,
    /// Created, written, emptied or renamed in this eval: the eval returns
    /// it (see [`Namespace::written`]).
    written: Cell<bool>,
    /// The host knows the file by this number (see `journal`).
    id: u64,
    /// The host hears of its changes: it has a name the script gave it
    /// (see `journal`).
    journaled: Cell<bool>,
}

impl Data {
    /// A new, empty file charged to `vm`, with a name of `name_bytes` bytes
    /// (0 for an anonymous file). `NoRoom` if that does not fit.
    ///
    /// # Safety
    /// The file, and every clone of the `Rc`, is dropped before `vm` is
    /// freed: it is held only by `vm`'s namespace and streams, which the Vm
    /// frees (closing the streams) before itself.
    pub unsafe fn create(vm: &Vm, name_bytes: usize) -> Result<Rc<Data>, Error> {
        if !vm.charge_external(FILE_OVERHEAD.saturating_add(name_bytes)) {
            return Err(Error::NoRoom);
        }
        Ok(Rc::new(Data {
            vm: NonNull::from(vm),
            bytes: RefCell::new(Vec::new()),
            name_bytes: Cell::new(name_bytes),
            read_only: Cell::new(false),
            written: Cell::new(true),
            id: journal::next_id(),
            journaled: Cell::new(false),
        }))
    }

    fn vm(&self) -> &Vm {
        // SAFETY: `create`'s contract: the Vm outlives every `Data` charged
        // to it, and only shared references to a Vm are ever made.
        unsafe { self.vm.as_ref() }
    }

    /// The file's size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.borrow().len()
    }

    /// Empties the file, giving its bytes back.
    pub fn truncate(&self) {
        let freed = std::mem::take(&mut *self.bytes.borrow_mut()).len();
        self.vm().release_external(freed);
        self.written.set(true);
        if self.journaled.get() {
            journal::emptied(self.id);
        }
    }

    /// Copies the bytes at `pos` into `buf`; returns how many (0 at or past
    /// the end).
    pub fn read_at(&self, pos: u64, buf: &mut [u8]) -> usize {
        let bytes = self.bytes.borrow();
        let Some(rest) = usize::try_from(pos).ok().and_then(|p| bytes.get(p..)) else {
            return 0;
        };
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        n
    }

    /// Writes `buf` at `pos`, filling a gap past the end with zeros (as
    /// POSIX does after a seek past the end), and returns the position after
    /// it. Growing is charged first: `NoRoom` (nothing written) if it does
    /// not fit in the limit, `Exhausted` if the linear memory cannot hold it.
    pub fn write_at(&self, pos: u64, buf: &[u8]) -> Result<u64, Error> {
        let end = pos
            .checked_add(buf.len() as u64)
            .ok_or(Error::InvalidArgument)?;
        let mut bytes = self.bytes.borrow_mut();
        let len = bytes.len() as u64;
        if end > len {
            // Whatever cannot be addressed cannot fit in the limit either.
            let grow = usize::try_from(end - len).map_err(|_| Error::NoRoom)?;
            let vm = self.vm();
            if !vm.charge_external(grow) {
                return Err(Error::NoRoom);
            }
            if bytes.try_reserve(grow).is_err() && bytes.try_reserve_exact(grow).is_err() {
                vm.release_external(grow);
                return Err(Error::Exhausted);
            }
            // `end` fits in `usize`: `len + grow` does.
            let new_len = bytes.len() + grow;
            bytes.resize(new_len, 0);
        }
        let (start, stop) = (pos as usize, end as usize);
        bytes[start..stop].copy_from_slice(buf);
        self.written.set(true);
        if self.journaled.get() {
            journal::wrote(self.id, pos, buf);
        }
        Ok(end)
    }

    /// Charges a name of `name_bytes` instead of the current one (a
    /// rename). `NoRoom`, changing nothing, if it does not fit.
    fn rename(&self, name_bytes: usize) -> Result<(), Error> {
        let vm = self.vm();
        if !vm.charge_external(name_bytes) {
            return Err(Error::NoRoom);
        }
        vm.release_external(self.name_bytes.replace(name_bytes));
        Ok(())
    }

    /// Gives the name's bytes back: the file has left the namespace.
    fn unname(&self) {
        self.vm().release_external(self.name_bytes.replace(0));
        if self.journaled.replace(false) {
            journal::dropped(self.id);
        }
    }

    /// Tells the host that the script's file now has the resolved `path`
    /// (created, or renamed to it); from now on the host hears of its
    /// changes.
    fn announce(&self, path: &[u8]) {
        self.journaled.set(true);
        journal::named(self.id, path);
    }
}

impl Drop for Data {
    fn drop(&mut self) {
        let charged = FILE_OVERHEAD + self.name_bytes.get() + self.bytes.get_mut().len();
        self.vm().release_external(charged);
    }
}

/// The session's files: a map from resolved path to file. Directories are
/// implicit, as in an archive: the root, `/tmp`, and every directory a file
/// is in exist, so mounting `data/in.csv` makes `data` one. A file may be
/// created only in a directory that exists, as POSIX says (a script has no
/// `mkdir`, so it writes beside its files, or where the host mounted some);
/// a directory vanishes with its last file.
#[derive(Default)]
pub struct Namespace {
    files: RefCell<BTreeMap<Vec<u8>, Rc<Data>>>,
    /// The last number [`Namespace::create_temporary`] used.
    temporaries: Cell<u64>,
}

impl Namespace {
    /// Whether a file has the resolved `path`.
    pub fn exists(&self, path: &[u8]) -> bool {
        self.files.borrow().contains_key(path)
    }

    /// How many files there are.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.files.borrow().len()
    }

    /// Whether `path` is a directory: the root, `/tmp`, or the directory of
    /// some file.
    fn is_directory(&self, path: &[u8]) -> bool {
        if path == b"/" || path == b"/tmp" {
            return true;
        }
        let mut prefix = path.to_vec();
        prefix.push(b'/');
        self.files
            .borrow()
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(name, _)| name.starts_with(&prefix))
    }

    /// Why a file cannot be created at `path`, if it cannot: its name is a
    /// directory's (`IsDirectory`), its directory does not exist
    /// (`NotFound`), or a file stands where its directory should
    /// (`NotDirectory`).
    fn check_creatable(&self, path: &[u8]) -> Result<(), Error> {
        if self.is_directory(path) {
            return Err(Error::IsDirectory);
        }
        let parent = match path.iter().rposition(|&b| b == b'/') {
            Some(0) | None => return Ok(()),
            Some(at) => &path[..at],
        };
        if self.is_directory(parent) {
            Ok(())
        } else if self.exists(parent) {
            Err(Error::NotDirectory)
        } else {
            Err(Error::NotFound)
        }
    }

    /// The error for a name that can only be a directory, when the
    /// operation needs a file at `path`: the root is `root`'s error; any
    /// other is `NotDirectory` if a file by that path exists (as for
    /// `x/` where `x` is a file), else `NotFound`.
    fn not_a_file(&self, path: &[u8], root: Error) -> Error {
        if path == b"/" {
            root
        } else if self.exists(path) {
            Error::NotDirectory
        } else {
            Error::NotFound
        }
    }

    /// Opens the file `name` as `mode` says: a missing file is created when
    /// the mode creates (charged to `vm`), or `NotFound`; an existing one is
    /// emptied when the mode truncates. Returns its path and data.
    ///
    /// A name that can only be a directory is `IsDirectory` when the mode
    /// creates (Linux's answer for `open("x/", O_CREAT)`), else as
    /// [`Namespace::not_a_file`] says, the root being `IsDirectory`.
    ///
    /// # Safety
    /// `vm` is the Vm whose namespace this is (see [`Data::create`]).
    pub unsafe fn open(
        &self,
        vm: &Vm,
        name: &[u8],
        mode: Mode,
    ) -> Result<(Vec<u8>, Rc<Data>), Error> {
        let path = match resolve(name)? {
            Name::File(path) => path,
            Name::Directory(_) if mode.create => return Err(Error::IsDirectory),
            Name::Directory(path) => return Err(self.not_a_file(&path, Error::IsDirectory)),
        };
        let found = self.files.borrow().get(&path).cloned();
        let data = match found {
            Some(data) => {
                if data.read_only.get() && (mode.write || mode.truncate) {
                    return Err(Error::ReadOnly);
                }
                if mode.truncate {
                    data.truncate();
                }
                data
            }
            None if self.is_directory(&path) => return Err(Error::IsDirectory),
            None if !mode.create => return Err(Error::NotFound),
            None if self.files.borrow().len() >= MAX_FILES => return Err(Error::TooMany),
            None => {
                self.check_creatable(&path)?;
                // SAFETY: The caller's: the file goes into `vm`'s namespace.
                let data = unsafe { Data::create(vm, path.len())? };
                self.files
                    .borrow_mut()
                    .insert(path.clone(), Rc::clone(&data));
                data.announce(&path);
                data
            }
        };
        Ok((path, data))
    }

    /// Removes the file `name` from the namespace (streams open on it keep
    /// its bytes until they close). The root is `Busy`.
    pub fn remove(&self, name: &[u8]) -> Result<(), Error> {
        let path = match resolve(name)? {
            Name::File(path) => path,
            Name::Directory(path) => return Err(self.not_a_file(&path, Error::Busy)),
        };
        if self
            .files
            .borrow()
            .get(&path)
            .is_some_and(|data| data.read_only.get())
        {
            return Err(Error::ReadOnly);
        }
        let removed = self.files.borrow_mut().remove(&path);
        match removed {
            Some(data) => {
                data.unname();
                Ok(())
            }
            None => Err(Error::NotFound),
        }
    }

    /// Gives the file `from` the name `to`, replacing a file that has it.
    /// A missing `from` is `NotFound`; the root on either side `Busy`;
    /// the new name is charged first (`NoRoom`, changing nothing).
    pub fn rename(&self, from: &[u8], to: &[u8]) -> Result<(), Error> {
        let from = match resolve(from)? {
            Name::File(path) => path,
            Name::Directory(path) => return Err(self.not_a_file(&path, Error::Busy)),
        };
        let to = resolve(to)?;
        let found = self.files.borrow().get(&from).cloned();
        let Some(data) = found else {
            return Err(Error::NotFound);
        };
        let to = match to {
            Name::File(path) => path,
            Name::Directory(path) if path == b"/" => return Err(Error::Busy),
            Name::Directory(_) => return Err(Error::NotDirectory),
        };
        let target_read_only = self
            .files
            .borrow()
            .get(&to)
            .is_some_and(|data| data.read_only.get());
        if data.read_only.get() || target_read_only {
            return Err(Error::ReadOnly);
        }
        if from == to {
            return Ok(());
        }
        if !self.exists(&to) {
            self.check_creatable(&to)?;
        }
        data.rename(to.len())?;
        data.written.set(true);
        let replaced = {
            let mut files = self.files.borrow_mut();
            files.remove(&from);
            files.insert(to.clone(), Rc::clone(&data))
        };
        if let Some(old) = replaced {
            old.unname();
        }
        data.announce(&to);
        Ok(())
    }

    /// Creates an empty file `/tmp/lua_NNNNNN`, numbered after the last one
    /// this namespace made and skipping names that exist, and returns its
    /// path: the same script gets the same names in every session.
    ///
    /// # Safety
    /// As for [`Namespace::open`].
    pub unsafe fn create_temporary(&self, vm: &Vm) -> Result<Vec<u8>, Error> {
        if self.files.borrow().len() >= MAX_FILES {
            return Err(Error::TooMany);
        }
        loop {
            let n = self.temporaries.get().wrapping_add(1);
            self.temporaries.set(n);
            let path = format!("/tmp/lua_{n:06}").into_bytes();
            if self.exists(&path) {
                continue;
            }
            // SAFETY: The caller's, as for `open`.
            let data = unsafe { Data::create(vm, path.len())? };
            self.files
                .borrow_mut()
                .insert(path.clone(), Rc::clone(&data));
            data.announce(&path);
            return Ok(path);
        }
    }
}

impl Namespace {
    /// Mounts `bytes` read-only as `name`, replacing a file of that name
    /// (streams open on the old one keep it). `InvalidArgument` for a name
    /// that cannot be a file; `TooMany`, `NoRoom` or `Exhausted` when it does
    /// not fit.
    ///
    /// # Safety
    /// As for [`Namespace::open`].
    pub unsafe fn mount(&self, vm: &Vm, name: &[u8], bytes: &[u8]) -> Result<(), Error> {
        let Name::File(path) = resolve(name)? else {
            return Err(Error::InvalidArgument);
        };
        let replacing = self.exists(&path);
        if !replacing && self.files.borrow().len() >= MAX_FILES {
            return Err(Error::TooMany);
        }
        // SAFETY: The caller's, as for `open`.
        let data = unsafe { Data::create(vm, path.len())? };
        data.write_at(0, bytes)?;
        data.read_only.set(true);
        data.written.set(false);
        let replaced = self.files.borrow_mut().insert(path, data);
        if let Some(old) = replaced {
            old.unname();
        }
        Ok(())
    }

    /// Forgets which files were written: a new eval starts.
    pub fn begin_eval(&self) {
        for data in self.files.borrow().values() {
            data.written.set(false);
        }
    }

    /// The files written in this eval that are still named, with their
    /// names relative to the root (`out/a.csv`), in name order.
    pub fn written(&self) -> Vec<(String, Vec<u8>)> {
        self.files
            .borrow()
            .iter()
            .filter(|(_, data)| data.written.get() && !data.read_only.get())
            .map(|(path, data)| (journal::report_name(path), data.bytes.borrow().clone()))
            .collect()
    }
}

/// An open file: the file, its path (none for an anonymous one), its mode
/// and the position the next read or write starts at.
pub struct Open {
    pub data: Rc<Data>,
    pub path: Option<Vec<u8>>,
    pub mode: Mode,
    pub pos: u64,
}

impl Open {
    /// Starts at the beginning, or for `a` at the end (as glibc places a
    /// stream opened for appending only; `a+` starts at the beginning).
    pub fn new(data: Rc<Data>, path: Option<Vec<u8>>, mode: Mode) -> Open {
        let pos = if mode.append && !mode.read {
            data.len() as u64
        } else {
            0
        };
        Open {
            data,
            path,
            mode,
            pos,
        }
    }

    /// Reads into `buf` from the position, advancing it; 0 at the end.
    /// `BadDescriptor` if the mode does not read.
    pub fn read(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        if !self.mode.read {
            return Err(Error::BadDescriptor);
        }
        let n = self.data.read_at(self.pos, buf);
        self.pos += n as u64;
        Ok(n)
    }

    /// Writes all of `buf` at the position (at the end, in an append mode),
    /// which then follows it. `BadDescriptor` if the mode does not write;
    /// otherwise as [`Data::write_at`].
    pub fn write(&mut self, buf: &[u8]) -> Result<usize, Error> {
        if !self.mode.write {
            return Err(Error::BadDescriptor);
        }
        if self.mode.append {
            self.pos = self.data.len() as u64;
        }
        self.pos = self.data.write_at(self.pos, buf)?;
        Ok(buf.len())
    }

    /// Moves the position to `offset` from the start (`whence` 0), the
    /// position (1) or the end (2), and returns it. A position past the end
    /// is allowed (a write there fills the gap); one before the start, or
    /// another `whence`, is `InvalidArgument`.
    pub fn seek(&mut self, offset: i64, whence: c_int) -> Result<u64, Error> {
        let base = match whence {
            0 => 0,
            1 => self.pos,
            2 => self.data.len() as u64,
            _ => return Err(Error::InvalidArgument),
        };
        let target = i128::from(base) + i128::from(offset);
        let pos = u64::try_from(target)
            .ok()
            .filter(|&p| i64::try_from(p).is_ok())
            .ok_or(Error::InvalidArgument)?;
        self.pos = pos;
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::FileChange;
    use crate::lua::lua_State;
    use crate::vm::{Handle, Limits};

    /// A trip arms nothing here.
    unsafe fn no_arming(_l: *mut lua_State) {}

    fn vm(max_memory_bytes: u64) -> Handle {
        let limits = Limits {
            max_instructions: 1_000,
            max_call_depth: 200,
            max_string_bytes: 1 << 20,
            max_memory_bytes,
            max_output_bytes: 1,
            max_value_depth: 1,
        };
        Vm::open(limits, Vec::new(), None, no_arming).expect("a Lua state")
    }

    fn file(path: &str) -> Result<Name, Error> {
        Ok(Name::File(path.as_bytes().to_vec()))
    }

    fn directory(path: &str) -> Result<Name, Error> {
        Ok(Name::Directory(path.as_bytes().to_vec()))
    }

    const R: Mode = Mode {
        read: true,
        write: false,
        append: false,
        create: false,
        truncate: false,
    };

    fn mode(text: &str) -> Mode {
        Mode::parse(text.as_bytes()).expect("a valid mode")
    }

    #[test]
    fn names_resolve_against_the_root() {
        assert_eq!(resolve(b"a.txt"), file("/a.txt"));
        assert_eq!(resolve(b"./a.txt"), file("/a.txt"));
        assert_eq!(resolve(b"/a.txt"), file("/a.txt"));
        assert_eq!(resolve(b"//a//b///c"), file("/a/b/c"));
        assert_eq!(resolve(b"a/./b/../c"), file("/a/c"));
        assert_eq!(resolve(b"../../etc/passwd"), file("/etc/passwd"));
        assert_eq!(resolve(b"/../../x"), file("/x"));
        assert_eq!(
            resolve(b"a/\xff\x00b"),
            Ok(Name::File(b"/a/\xff\x00b".to_vec()))
        );
        assert_eq!(resolve(b"/"), directory("/"));
        assert_eq!(resolve(b"/.."), directory("/"));
        assert_eq!(resolve(b"."), directory("/"));
        assert_eq!(resolve(b"a/.."), directory("/"));
        assert_eq!(resolve(b"dir/"), directory("/dir"));
        assert_eq!(resolve(b"a/b/."), directory("/a/b"));
        assert_eq!(resolve(b""), Err(Error::NotFound));
        let long = vec![b'a'; MAX_NAME_BYTES];
        assert!(matches!(resolve(&long), Ok(Name::File(_))));
        let longer = vec![b'a'; MAX_NAME_BYTES + 1];
        assert_eq!(resolve(&longer), Err(Error::NameTooLong));
    }

    #[test]
    fn modes_parse_as_c_reads_them() {
        assert_eq!(Mode::parse(b"r"), Some(R));
        assert_eq!(mode("rb"), R);
        let rw = Mode { write: true, ..R };
        assert_eq!(mode("r+"), rw);
        assert_eq!(mode("r+b"), rw);
        assert_eq!(mode("rb+"), rw);
        assert_eq!(mode("w+"), Mode::READ_WRITE_NEW);
        let w = mode("w");
        assert!(!w.read && w.write && w.create && w.truncate && !w.append);
        let a = mode("ab");
        assert!(!a.read && a.write && a.create && !a.truncate && a.append);
        assert!(mode("a+").read);
        assert_eq!(Mode::parse(b"x"), None);
        assert_eq!(Mode::parse(b""), None);
    }

    #[test]
    fn opening_creates_truncates_and_refuses_as_posix() {
        let vm = vm(1 << 20);
        let ns = Namespace::default();
        // SAFETY: The namespace and its files are dropped before `vm`.
        unsafe {
            assert_eq!(ns.open(&vm, b"x", R).err(), Some(Error::NotFound));
            let (path, data) = ns.open(&vm, b"./x", mode("w")).unwrap();
            assert_eq!(path, b"/x");
            data.write_at(0, b"hello").unwrap();
            let (_, again) = ns.open(&vm, b"/x", R).unwrap();
            assert!(Rc::ptr_eq(&data, &again));
            assert_eq!(again.len(), 5);
            ns.open(&vm, b"x", mode("a")).unwrap();
            assert_eq!(data.len(), 5, "a keeps the bytes");
            ns.open(&vm, b"x", mode("w+")).unwrap();
            assert_eq!(data.len(), 0, "w empties the file");
            assert_eq!(ns.open(&vm, b"/", R).err(), Some(Error::IsDirectory));
            assert_eq!(
                ns.open(&vm, b".", mode("w")).err(),
                Some(Error::IsDirectory)
            );
            assert_eq!(
                ns.open(&vm, b"d/", mode("a")).err(),
                Some(Error::IsDirectory)
            );
            assert_eq!(ns.open(&vm, b"d/", R).err(), Some(Error::NotFound));
            assert_eq!(
                ns.open(&vm, b"x/", mode("r+")).err(),
                Some(Error::NotDirectory)
            );
            assert_eq!(ns.open(&vm, b"", mode("w")).err(), Some(Error::NotFound));
            // Directories are implicit: a file may be created only in one
            // that exists (the root, /tmp, or where a file is).
            assert_eq!(
                ns.open(&vm, b"x/y", mode("w")).err(),
                Some(Error::NotDirectory),
                "x is a file"
            );
            assert_eq!(
                ns.open(&vm, b"/a/b/c/d", mode("w")).err(),
                Some(Error::NotFound)
            );
            ns.open(&vm, b"/tmp/t", mode("w")).unwrap();
            ns.mount(&vm, b"data/in.csv", b"1").unwrap();
            ns.open(&vm, b"data/out.csv", mode("w")).unwrap();
            assert_eq!(
                ns.open(&vm, b"data", mode("w")).err(),
                Some(Error::IsDirectory)
            );
            assert_eq!(ns.open(&vm, b"data", R).err(), Some(Error::IsDirectory));
            assert_eq!(ns.len(), 4);
        }
    }

    #[test]
    fn remove_and_rename_follow_posix() {
        let vm = vm(1 << 20);
        let ns = Namespace::default();
        // SAFETY: The namespace and the files are dropped before `vm`.
        let (a, b) = unsafe {
            let (_, a) = ns.open(&vm, b"a", mode("w")).unwrap();
            let (_, b) = ns.open(&vm, b"b", mode("w")).unwrap();
            (a, b)
        };
        a.write_at(0, b"A").unwrap();
        b.write_at(0, b"BB").unwrap();
        assert_eq!(ns.rename(b"nope", b"c"), Err(Error::NotFound));
        assert_eq!(ns.rename(b"a", b"/"), Err(Error::Busy));
        assert_eq!(ns.rename(b"/", b"a"), Err(Error::Busy));
        assert_eq!(ns.rename(b"a/", b"c"), Err(Error::NotDirectory));
        assert_eq!(ns.rename(b"a", b"c/"), Err(Error::NotDirectory));
        assert_eq!(ns.rename(b"a", b"./a"), Ok(()));
        // Over an existing file: it is replaced.
        assert_eq!(ns.rename(b"a", b"b"), Ok(()));
        assert!(!ns.exists(b"/a"));
        assert_eq!(ns.len(), 1);
        // SAFETY: As above.
        let (_, now) = unsafe { ns.open(&vm, b"b", R).unwrap() };
        assert!(Rc::ptr_eq(&now, &a));
        drop(now);
        assert_eq!(ns.remove(b"b"), Ok(()));
        assert_eq!(ns.remove(b"b"), Err(Error::NotFound));
        assert_eq!(ns.remove(b"/"), Err(Error::Busy));
        assert_eq!(ns.remove(b""), Err(Error::NotFound));
        assert_eq!(ns.len(), 0);
        // A removed file's bytes live on while held.
        assert_eq!(a.len(), 1);
        drop((a, b));
        assert_eq!(vm.external_bytes(), 0);
    }

    #[test]
    fn files_are_charged_and_give_their_bytes_back() {
        let vm = vm(1 << 20);
        let ns = Namespace::default();
        let before = vm.external_bytes();
        assert_eq!(before, 0);
        // SAFETY: The namespace and the file are dropped before `vm`.
        let (_, data) = unsafe { ns.open(&vm, b"f", mode("w")).unwrap() };
        assert_eq!(vm.external_bytes(), FILE_OVERHEAD + 2);
        data.write_at(10, b"xyz").unwrap();
        assert_eq!(vm.external_bytes(), FILE_OVERHEAD + 2 + 13);
        let mut buf = [9u8; 16];
        assert_eq!(data.read_at(0, &mut buf), 13);
        assert_eq!(&buf[..13], b"\0\0\0\0\0\0\0\0\0\0xyz");
        ns.rename(b"f", b"longer").unwrap();
        assert_eq!(vm.external_bytes(), FILE_OVERHEAD + 7 + 13);
        data.truncate();
        assert_eq!(vm.external_bytes(), FILE_OVERHEAD + 7);
        ns.remove(b"longer").unwrap();
        assert_eq!(vm.external_bytes(), FILE_OVERHEAD, "open, so still charged");
        drop(data);
        assert_eq!(vm.external_bytes(), 0);
        assert!(vm.peak_bytes() >= vm.used_bytes() + FILE_OVERHEAD + 7 + 13);
    }

    #[test]
    fn the_limit_is_shared_with_the_heap() {
        let vm = vm(1 << 20);
        let ns = Namespace::default();
        // SAFETY: The namespace and the file are dropped before `vm`.
        let (_, data) = unsafe { ns.open(&vm, b"big", mode("w")).unwrap() };
        let room = (1usize << 20) - vm.used_bytes() - vm.external_bytes();
        assert_eq!(data.write_at(0, &vec![1; room + 1]), Err(Error::NoRoom));
        assert_eq!(data.len(), 0, "nothing written");
        assert_eq!(data.write_at(0, &vec![1; room]), Ok(room as u64));
        assert_eq!(data.write_at(room as u64, b"x"), Err(Error::NoRoom));
        // Past what can be addressed is past the limit too.
        assert_eq!(data.write_at(u64::MAX - 1, b"x"), Err(Error::NoRoom));
        assert_eq!(data.write_at(u64::MAX, b"xx"), Err(Error::InvalidArgument));
        // SAFETY: As above.
        let refused = unsafe { ns.open(&vm, b"another", mode("w")) };
        assert_eq!(refused.err(), Some(Error::NoRoom));
        assert!(!ns.exists(b"/another"));
        assert_eq!(ns.rename(b"big", b"a-longer-name"), Err(Error::NoRoom));
        assert!(ns.exists(b"/big"));
        data.truncate();
        assert_eq!(ns.rename(b"big", b"a-longer-name"), Ok(()));
    }

    #[test]
    fn open_files_read_write_and_seek() {
        let vm = vm(1 << 20);
        let ns = Namespace::default();
        // SAFETY: The namespace and the files are dropped before `vm`.
        let (path, data) = unsafe { ns.open(&vm, b"f", mode("w+")).unwrap() };
        let mut w = Open::new(Rc::clone(&data), Some(path), mode("w+"));
        assert_eq!(w.write(b"hello\nworld\n"), Ok(12));
        assert_eq!(w.seek(0, 1), Ok(12));
        assert_eq!(w.seek(-6, 2), Ok(6));
        let mut buf = [0u8; 5];
        assert_eq!(w.read(&mut buf), Ok(5));
        assert_eq!(&buf, b"world");
        assert_eq!(w.seek(-1, 0), Err(Error::InvalidArgument));
        assert_eq!(w.seek(0, 3), Err(Error::InvalidArgument));
        assert_eq!(w.seek(i64::MAX, 2), Err(Error::InvalidArgument));
        assert_eq!(w.seek(10, 2), Ok(22));
        assert_eq!(w.read(&mut buf), Ok(0));
        // An append-only stream starts at the end and always writes there.
        let mut a = Open::new(Rc::clone(&data), None, mode("a"));
        assert_eq!(a.pos, 12);
        assert_eq!(a.seek(0, 0), Ok(0));
        assert_eq!(a.write(b"A"), Ok(1));
        assert_eq!(a.pos, 13);
        assert_eq!(a.read(&mut buf), Err(Error::BadDescriptor));
        let mut ap = Open::new(Rc::clone(&data), None, mode("a+"));
        assert_eq!(ap.pos, 0);
        assert_eq!(ap.read(&mut buf), Ok(5));
        assert_eq!(ap.write(b"B"), Ok(1));
        assert_eq!(ap.pos, 14);
        let mut r = Open::new(data, None, R);
        assert_eq!(r.write(b"no"), Err(Error::BadDescriptor));
        let mut all = [0u8; 32];
        assert_eq!(r.read(&mut all), Ok(14));
        assert_eq!(&all[..14], b"hello\nworld\nAB");
    }

    #[test]
    fn temporary_names_are_numbered_and_skip_taken_ones() {
        let vm = vm(1 << 20);
        let ns = Namespace::default();
        // SAFETY: The namespace is dropped before `vm`.
        unsafe {
            ns.open(&vm, b"/tmp/lua_000002", mode("w")).unwrap();
            assert_eq!(ns.create_temporary(&vm).unwrap(), b"/tmp/lua_000001");
            assert_eq!(ns.create_temporary(&vm).unwrap(), b"/tmp/lua_000003");
        }
        assert!(ns.exists(b"/tmp/lua_000003"));
        let other = Namespace::default();
        // SAFETY: As above.
        let first = unsafe { other.create_temporary(&vm).unwrap() };
        assert_eq!(first, b"/tmp/lua_000001", "the same names in each session");
    }

    /// What a host rebuilds from the journal, as the WIT `output.file` says
    /// one should: by id, the name and bytes, and whether this eval touched
    /// it.
    #[derive(Default)]
    struct Mirror {
        files: BTreeMap<u64, (String, Vec<u8>, bool)>,
    }

    impl Mirror {
        fn apply(&mut self, changes: Vec<FileChange>) {
            for change in changes {
                match change {
                    FileChange::Named(named) => {
                        let file = self.files.entry(named.id).or_default();
                        file.0 = named.name;
                        file.2 = true;
                    }
                    FileChange::Dropped(id) => {
                        self.files.remove(&id);
                    }
                    FileChange::Wrote(write) => {
                        if let Some(file) = self.files.get_mut(&write.id) {
                            let offset = write.offset as usize;
                            let end = offset + write.bytes.len();
                            if file.1.len() < end {
                                file.1.resize(end, 0);
                            }
                            file.1[offset..end].copy_from_slice(&write.bytes);
                            file.2 = true;
                        }
                    }
                    FileChange::Emptied(id) => {
                        if let Some(file) = self.files.get_mut(&id) {
                            file.1.clear();
                            file.2 = true;
                        }
                    }
                }
            }
        }

        fn written(&self) -> Vec<(String, Vec<u8>)> {
            let mut files: Vec<_> = self
                .files
                .values()
                .filter(|file| file.2)
                .map(|file| (file.0.clone(), file.1.clone()))
                .collect();
            files.sort();
            files
        }

        fn begin_eval(&mut self) {
            for file in self.files.values_mut() {
                file.2 = false;
            }
        }
    }

    #[test]
    fn the_journal_tells_the_host_what_written_reports() {
        let vm = vm(1 << 20);
        let ns = Namespace::default();
        journal::take();
        let mut mirror = Mirror::default();
        // SAFETY: The namespace and every file are dropped before `vm`.
        unsafe {
            ns.mount(&vm, b"in.txt", b"mounted").unwrap();
            let (_, a) = ns.open(&vm, b"a.txt", mode("w")).unwrap();
            Open::new(Rc::clone(&a), None, mode("w"))
                .write(b"alpha")
                .unwrap();
            let (_, b) = ns.open(&vm, b"b.txt", mode("w")).unwrap();
            let mut gap = Open::new(Rc::clone(&b), None, mode("w"));
            gap.seek(3, 0).unwrap();
            gap.write(b"b").unwrap();
            ns.open(&vm, b"gone.txt", mode("w")).unwrap();
            let (_, kept_open) = ns.open(&vm, b"open.txt", mode("w")).unwrap();
            ns.remove(b"open.txt").unwrap();
            // Written under no name: nothing the host keeps.
            Open::new(kept_open, None, mode("w")).write(b"x").unwrap();
            ns.remove(b"gone.txt").unwrap();
            // Renamed over another file, then emptied and written again.
            ns.rename(b"a.txt", b"b.txt").unwrap();
            ns.open(&vm, b"b.txt", mode("w")).unwrap();
            Open::new(a, None, mode("a")).write(b"again").unwrap();
            ns.create_temporary(&vm).unwrap();
            // An anonymous file, as `io.tmpfile` makes, is never sent.
            let anonymous = Data::create(&vm, 0).unwrap();
            anonymous.write_at(0, b"private").unwrap();
        }
        let changes = journal::take();
        assert!(
            !changes.iter().any(|c| matches!(c, FileChange::Wrote(w) if w.bytes == b"mounted" || w.bytes == b"private")),
            "mounted and anonymous files are not sent: {changes:?}"
        );
        mirror.apply(changes);
        assert_eq!(mirror.written(), ns.written());
        assert_eq!(
            mirror.written(),
            [
                ("b.txt".to_owned(), b"again".to_vec()),
                ("tmp/lua_000001".to_owned(), Vec::new()),
            ]
        );
        // The next eval: only what it touches is reported, by both.
        ns.begin_eval();
        mirror.begin_eval();
        // SAFETY: As above.
        unsafe {
            let (_, c) = ns.open(&vm, b"tmp/lua_000001", mode("a")).unwrap();
            Open::new(c, None, mode("a")).write(b"t").unwrap();
            // Mounting over a script's file takes its name from it.
            ns.mount(&vm, b"b.txt", b"host").unwrap();
        }
        mirror.apply(journal::take());
        assert_eq!(mirror.written(), ns.written());
        assert_eq!(
            mirror.written(),
            [("tmp/lua_000001".to_owned(), b"t".to_vec())]
        );
    }
}
