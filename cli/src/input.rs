//! The CLI's inputs and its standard output: every file is read with a size
//! cap and within the run's timeout (a FIFO or a slow stdin cannot hold the
//! process), and every write to stdout is checked.

use std::fs::File;
use std::io::{LineWriter, Read, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow, bail};
use moonbox::{LogEvent, LogSink, OutputSink};

/// When reading inputs must be done: the run's timeout, from the start.
pub(crate) struct Deadline {
    at: Instant,
    timeout: Duration,
}

impl Deadline {
    pub(crate) fn after(timeout: Duration) -> Self {
        Deadline {
            at: Instant::now() + timeout,
            timeout,
        }
    }
}

/// Reads `path` (`-` for stdin) whole, refusing more than `max` bytes and
/// giving up at the deadline. `what` names the input in messages, and
/// `flag` the option that raises `max`.
pub(crate) fn read(
    path: &Path,
    what: &str,
    max: u64,
    flag: &str,
    deadline: &Deadline,
) -> Result<Vec<u8>> {
    match read_within(path, what, max, deadline)? {
        Some(bytes) => Ok(bytes),
        None => bail!(
            "the {what} {} is larger than {max} bytes; raise {flag} to read it",
            shown(path)
        ),
    }
}

/// How messages name `path`: quoted, or `standard input` for `-`.
pub(crate) fn shown(path: &Path) -> String {
    if path == Path::new("-") {
        "standard input".to_owned()
    } else {
        format!("'{}'", path.display())
    }
}

/// Reads `path` (`-` for stdin) whole, giving up at the deadline: `None`
/// when it holds more than `max` bytes, so that the caller can say which
/// bound it passed.
pub(crate) fn read_within(
    path: &Path,
    what: &str,
    max: u64,
    deadline: &Deadline,
) -> Result<Option<Vec<u8>>> {
    let shown = shown(path);
    let read = if path == Path::new("-") {
        read_stdin(max, deadline)
    } else if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        // A regular file is read in place.
        read_capped(path, max).map_err(ReadError::Io)
    } else {
        read_on_a_thread(path, max, deadline)
    };
    match read {
        Ok(bytes) => Ok(bytes),
        Err(ReadError::Io(e)) => bail!("cannot read the {what} {shown}: {e}"),
        Err(ReadError::Late) => bail!(
            "reading the {what} {shown} took longer than the {} ms timeout",
            deadline.timeout.as_millis()
        ),
        Err(ReadError::Thread(e)) => bail!("cannot start a thread to read the {what}: {e}"),
    }
}

/// Why an input could not be read.
enum ReadError {
    /// The deadline passed first.
    Late,
    Io(std::io::Error),
    /// The thread that reads it could not start.
    Thread(std::io::Error),
}

/// Reads anything but stdin and a regular file (a FIFO, a device) on a
/// thread of its own, so that a reader that never finishes (or an open that
/// waits for a FIFO's writer) only costs the deadline.
fn read_on_a_thread(
    path: &Path,
    max: u64,
    deadline: &Deadline,
) -> Result<Option<Vec<u8>>, ReadError> {
    let (tx, rx) = mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::Builder::new()
        .name("moonbox-read".into())
        .spawn(move || {
            let result = read_capped(&owned, max);
            let _ = tx.send(result);
        })
        .map_err(ReadError::Thread)?;
    let wait = deadline.at.saturating_duration_since(Instant::now());
    match rx.recv_timeout(wait) {
        Ok(read) => read.map_err(ReadError::Io),
        Err(_) => Err(ReadError::Late),
    }
}

/// Reads standard input whole on this thread, waiting for it with `poll`
/// until the deadline: `None` when it holds more than `max` bytes. A
/// closed descriptor reads as empty, as Rust's `stdin()` reads it.
fn read_stdin(max: u64, deadline: &Deadline) -> Result<Option<Vec<u8>>, ReadError> {
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let wait = deadline.at.saturating_duration_since(Instant::now());
        // Rounded up, so that a wait of less than a millisecond is not a
        // busy loop of zero-timeout polls.
        let ms = i32::try_from(wait.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
        let mut fd = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid `pollfd`, and the count says one.
        let ready = unsafe { libc::poll(&mut fd, 1, ms) };
        if ready < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(ReadError::Io(e));
        }
        if ready == 0 {
            return Err(ReadError::Late);
        }
        let room = usize::try_from(max.saturating_add(1) - bytes.len() as u64)
            .unwrap_or(usize::MAX)
            .min(chunk.len());
        // SAFETY: `chunk` is valid for writes of `room` bytes.
        let read = unsafe { libc::read(libc::STDIN_FILENO, chunk.as_mut_ptr().cast(), room) };
        match usize::try_from(read) {
            Ok(0) => break,
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() as u64 > max {
                    return Ok(None);
                }
            }
            Err(_) => {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR | libc::EAGAIN) => continue,
                    Some(libc::EBADF) => break,
                    _ => return Err(ReadError::Io(e)),
                }
            }
        }
    }
    Ok(Some(bytes))
}

/// `None` when the input has more than `max` bytes.
fn read_capped(path: &Path, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    let limit = max.saturating_add(1);
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(std::io::Error::other("it is a directory"));
    }
    file.take(limit).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

/// The chunk name for messages: the file's name, or `stdin`.
pub(crate) fn chunk_name(path: &Path) -> String {
    if path == Path::new("-") {
        return "stdin".to_owned();
    }
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Standard output, written through its own descriptor so that a closed or
/// broken stdout is an error (Rust's `stdout()` hides a closed descriptor),
/// line-buffered, with the first write error kept for the exit status.
#[derive(Clone)]
pub(crate) struct Stdout {
    inner: Arc<Mutex<(LineWriter<File>, Option<std::io::Error>)>>,
}

impl Stdout {
    /// Fails when standard output is closed.
    pub(crate) fn open() -> Result<Stdout> {
        let fd = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| anyhow!("cannot write to standard output: {e}"))?;
        Ok(Stdout {
            inner: Arc::new(Mutex::new((LineWriter::new(File::from(fd)), None))),
        })
    }

    /// Writes `bytes`, remembering the first failure.
    pub(crate) fn write(&self, bytes: &[u8]) {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (writer, error) = &mut *guard;
        if error.is_none()
            && let Err(e) = writer.write_all(bytes)
        {
            *error = Some(e);
        }
    }

    /// A sink that streams a session's output here.
    pub(crate) fn sink(&self) -> OutputSink {
        let this = self.clone();
        Arc::new(move |bytes: &[u8]| this.write(bytes))
    }

    /// Writes out what the line buffer holds, so that what follows on
    /// another stream (a log line on stderr) comes after it.
    pub(crate) fn flush(&self) {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (writer, error) = &mut *guard;
        if error.is_none()
            && let Err(e) = writer.flush()
        {
            *error = Some(e);
        }
    }

    /// A sink that prints each log event as one line on stderr, after
    /// flushing this stdout so that the two streams keep the script's order.
    pub(crate) fn log_sink(&self) -> LogSink {
        let this = self.clone();
        Arc::new(move |event: &LogEvent| {
            this.flush();
            let mut stderr = std::io::stderr().lock();
            // A closed stderr loses the line, as it would lose an error.
            let _ = writeln!(stderr, "{event}");
        })
    }

    /// Flushes, and reports the first write error.
    pub(crate) fn finish(&self) -> Result<()> {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (writer, error) = &mut *guard;
        if error.is_none()
            && let Err(e) = writer.flush()
        {
            *error = Some(e);
        }
        match error.take() {
            Some(e) => bail!("cannot write to standard output: {e}"),
            None => Ok(()),
        }
    }
}
