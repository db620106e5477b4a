//! `run`'s files: host files mounted read-only in the script's namespace
//! (`--file`), the command's standard input given to the script
//! (`--stdin`), and the files the script wrote, written into a directory
//! (`--out-dir`) or named on stderr.
//!
//! Everything read is bounded: the mounted files and standard input share
//! `--max-memory-bytes`, as the sandbox counts them, and each is read within
//! the run's timeout. Everything written stays inside the directory given:
//! a name that is absolute, or has an empty, `.` or `..` part, is refused,
//! and no symbolic link is followed below the directory.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use moonbox::{File, Limits, Script};

use crate::input::{self, Deadline};

/// The flags of `run` about files and standard input.
#[derive(Args)]
pub(crate) struct FileArgs {
    /// Mount the host file PATH read-only as NAME in the script's files
    /// (repeatable): io.open, io.lines, loadfile, dofile and require read
    /// it; PATH alone mounts it under PATH as given, so the script opens it
    /// by the path it would under lua5.4. No other host file is reachable.
    /// The files and --stdin count against --max-memory-bytes together; at
    /// most 1024 files.
    #[arg(long = "file", id = "mount", value_name = "NAME=PATH", value_parser = parse_mount)]
    pub(crate) mounts: Vec<(String, PathBuf)>,
    /// Give this command's standard input to the script as io.stdin (what
    /// io.read and io.lines() read); not with `-`, which reads the script
    /// from it. Counts against --max-memory-bytes.
    #[arg(long)]
    pub(crate) stdin: bool,
    /// Write the files the script wrote into DIR (created if missing),
    /// naming each on stderr; without it they are only named, with their
    /// sizes. With --json they are in the report's files too. No symbolic
    /// link inside DIR is followed; a file that cannot be written is an
    /// error on stderr, and exit 2 unless the script failed.
    #[arg(long, value_name = "DIR")]
    pub(crate) out_dir: Option<PathBuf>,
}

/// Parses `--file NAME=PATH`, or `--file PATH`, mounted under PATH as
/// given (the sandbox normalises it: `./data/x.csv` and `data/x.csv` are
/// one name, `/tmp/x.csv` is `tmp/x.csv`), so that a script opens it by the
/// path it would open under lua5.4. The first `=` splits a name from a
/// path: a path that holds `=` needs its name given.
pub(crate) fn parse_mount(s: &str) -> Result<(String, PathBuf), String> {
    let (name, path) = match s.split_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => (name, path),
        None if !s.is_empty() => (s, s),
        _ => {
            return Err(format!(
                "'{s}' is not NAME=PATH or PATH, as in --file data.csv=/tmp/export.csv or --file data/in.csv"
            ));
        }
    };
    // Standard input is the script's (`-`) or io.stdin's (--stdin), never
    // a mounted file's.
    if path == "-" {
        return Err(
            "--file mounts a host file, not standard input; give the script standard input with --stdin, or name the file ./-".to_owned(),
        );
    }
    Ok((name.to_owned(), PathBuf::from(path)))
}

impl FileArgs {
    /// Adds the mounted files and standard input to `script`, reading each
    /// within what is left of `max_memory` bytes and within the deadline.
    ///
    /// # Errors
    /// More than [`Limits::MAX_FILES`] files, a name given twice, a file
    /// that cannot be read, or files and standard input larger than
    /// `max_memory` together: a message that names the flag.
    pub(crate) fn add_to(
        &self,
        mut script: Script,
        max_memory: u64,
        deadline: &Deadline,
    ) -> Result<Script> {
        if self.mounts.len() > Limits::MAX_FILES {
            bail!(
                "--file is given {} times; a script can have at most {} files",
                self.mounts.len(),
                Limits::MAX_FILES
            );
        }
        let mut left = max_memory;
        let mut names: Vec<&str> = Vec::with_capacity(self.mounts.len());
        for (name, path) in &self.mounts {
            if names.contains(&name.as_str()) {
                bail!("file '{name}' is given twice with --file; each name may appear once");
            }
            names.push(name);
            let Some(bytes) = input::read_within(path, "file", left, deadline)
                .with_context(|| format!("--file {name}"))?
            else {
                bail!(
                    "the file {} (--file {name}) does not fit: mounted files and --stdin take at most --max-memory-bytes ({max_memory} bytes) together, and {left} are left; raise --max-memory-bytes to mount it",
                    input::shown(path)
                );
            };
            left -= u64::try_from(bytes.len()).unwrap_or(u64::MAX).min(left);
            script = script.file(name, bytes);
        }
        if self.stdin {
            let Some(bytes) = input::read_within(Path::new("-"), "--stdin", left, deadline)? else {
                bail!(
                    "standard input (--stdin) does not fit: mounted files and --stdin take at most --max-memory-bytes ({max_memory} bytes) together, and {left} are left; raise --max-memory-bytes to give it"
                );
            };
            script = script.stdin(bytes);
        }
        Ok(script)
    }

    /// Creates the output directory, before the script runs, so that a
    /// directory that cannot be made costs no run.
    ///
    /// # Errors
    /// The directory cannot be created, or the path is not a directory.
    pub(crate) fn prepare_out_dir(&self) -> Result<()> {
        if let Some(dir) = &self.out_dir {
            std::fs::create_dir_all(dir).with_context(|| {
                format!("cannot create the --out-dir directory '{}'", dir.display())
            })?;
        }
        Ok(())
    }

    /// Says on stderr what became of the files the script wrote: each
    /// written into the output directory, or, without one, named with its
    /// size (unless `quiet`: the report carries them). Returns whether
    /// every file was written.
    pub(crate) fn deliver(&self, files: &[File], quiet: bool) -> bool {
        let mut stderr = std::io::stderr().lock();
        let Some(dir) = &self.out_dir else {
            if !quiet {
                for file in files {
                    // A closed stderr loses the line, as it would an error.
                    let _ = writeln!(
                        stderr,
                        "wrote {} ({}); pass --out-dir DIR to keep it",
                        escaped(&file.name),
                        bytes(file.bytes.len())
                    );
                }
            }
            return true;
        };
        let mut all = true;
        for file in files {
            match write_into(dir, &file.name, &file.bytes) {
                Ok(path) => {
                    let _ = writeln!(
                        stderr,
                        "wrote {} ({})",
                        escaped(&path.display().to_string()),
                        bytes(file.bytes.len())
                    );
                }
                Err(e) => {
                    all = false;
                    let _ = writeln!(
                        stderr,
                        "error: cannot write the script's file '{}' into '{}': {e:#}",
                        escaped(&file.name),
                        dir.display()
                    );
                }
            }
        }
        all
    }
}

/// A size as a person writes it: `1 byte`, `42 bytes`.
fn bytes(n: usize) -> String {
    if n == 1 {
        "1 byte".to_owned()
    } else {
        format!("{n} bytes")
    }
}

/// `name` with control characters escaped, so that a name the script chose
/// cannot forge a line on the terminal.
fn escaped(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The parts of a file name the script wrote, when it is relative and has
/// no empty, `.` or `..` part (the sandbox reports names normalised, so
/// this refuses only what it never reports).
fn parts(name: &str) -> Result<Vec<&str>> {
    if name.starts_with('/') {
        bail!("the name is absolute");
    }
    let parts: Vec<&str> = name.split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == ".." || p.contains('\0'))
    {
        bail!("the name has an empty, '.' or '..' part, which could leave the directory");
    }
    Ok(parts)
}

/// Writes `bytes` as `name` under `dir`, creating the directories the name
/// has, without following a symbolic link below `dir`; returns the path
/// written.
fn write_into(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    let parts = parts(name)?;
    let mut path = dir.to_path_buf();
    let (last, parents) = parts.split_last().context("the name is empty")?;
    for part in parents {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_dir() => {}
            Ok(meta) if meta.file_type().is_symlink() => {
                bail!("'{}' is a symbolic link, not followed", path.display())
            }
            Ok(_) => bail!("'{}' is not a directory", path.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&path)
                    .with_context(|| format!("cannot create '{}'", path.display()))?;
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read '{}'", path.display())),
        }
    }
    path.push(last);
    // O_NOFOLLOW: a symbolic link in the name's place is refused (ELOOP),
    // not written through.
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                anyhow::anyhow!("'{}' is a symbolic link, not followed", path.display())
            } else {
                anyhow::Error::new(e).context(format!("cannot open '{}'", path.display()))
            }
        })?;
    out.write_all(bytes)
        .with_context(|| format!("cannot write '{}'", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_is_name_equals_path_or_a_path() {
        assert_eq!(
            parse_mount("in.csv=/tmp/x.csv"),
            Ok(("in.csv".to_owned(), PathBuf::from("/tmp/x.csv")))
        );
        assert_eq!(
            parse_mount("/tmp/data/x.csv"),
            Ok((
                "/tmp/data/x.csv".to_owned(),
                PathBuf::from("/tmp/data/x.csv")
            ))
        );
        assert_eq!(
            parse_mount("lib/util.lua=src/util.lua"),
            Ok(("lib/util.lua".to_owned(), PathBuf::from("src/util.lua")))
        );
        assert!(parse_mount("=x").unwrap_err().contains("NAME=PATH"));
        assert!(parse_mount("x=").unwrap_err().contains("NAME=PATH"));
        assert!(parse_mount("").unwrap_err().contains("NAME=PATH"));
        assert!(parse_mount("in.csv=-").unwrap_err().contains("--stdin"));
        assert!(parse_mount("-").unwrap_err().contains("--stdin"));
    }

    #[test]
    fn names_that_could_leave_the_directory_are_refused() {
        assert_eq!(parts("a/b.txt").unwrap(), ["a", "b.txt"]);
        for bad in ["/etc/passwd", "../x", "a/../../x", "a//b", "./a", "a/", ""] {
            assert!(parts(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn control_characters_in_names_are_escaped() {
        assert_eq!(
            escaped("a\nerror[x]: b\u{1b}[2J"),
            "a\\nerror[x]: b\\u{1b}[2J"
        );
        assert_eq!(escaped("données.csv"), "données.csv");
    }
}
