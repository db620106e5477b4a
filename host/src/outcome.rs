//! What an eval produces: its values, its output and what it cost.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The result of an eval that finished.
///
/// Its JSON form is the [`Report`](crate::Report) (`Report::from(&out)`),
/// the one serialised form of an outcome.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let out = sandbox.eval("print('hi') return 1, 2.5, {a = true}").await?;
/// assert_eq!(out.output, "hi\n");
/// assert_eq!(out.values, [serde_json::json!(1), serde_json::json!(2.5), serde_json::json!({"a": true})]);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct EvalOutput {
    /// The chunk's return values, converted to JSON (see docs/wit.md for
    /// the rules). Empty when the script ended with `os.exit`.
    pub values: Vec<serde_json::Value>,
    /// Everything the script wrote (`print`, `io.write`), byte for byte.
    pub output: Output,
    /// The status of an `os.exit` that ended the script, if any.
    pub exit_code: Option<i32>,
    /// What the eval cost.
    pub stats: Stats,
    /// The capability calls the eval made, in the order they were made
    /// (the first [`Limits::MAX_CALL_RECORDS`](crate::Limits::MAX_CALL_RECORDS); see
    /// [`Stats::calls_unrecorded`]).
    pub calls: Vec<crate::CallRecord>,
    /// The events of the script's `log`, in the order it made them.
    pub logs: Vec<crate::output::LogEvent>,
    /// The files the eval created or wrote that exist at its end, sorted by
    /// name (see [`File`]).
    pub files: Vec<File>,
}

/// A file in a session's namespace: one a [`Script`](crate::Script) mounts,
/// or one the script wrote ([`EvalOutput::files`]).
///
/// The namespace is the guest's own, in memory; no host path is reachable
/// from a script. Names are relative to its root (`data/in.csv`): `./x`
/// and `/x` name `x`, and `..` cannot climb above the root. docs/wit.md
/// (Files) has the rules and limits.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use moonbox::Script;
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let script = Script::new("local n = 0 for _ in io.lines('in.csv') do n = n + 1 end \
///                           local f = io.open('out.txt', 'w') f:write(n) f:close()")
///     .file("in.csv", "a,1\nb,2\n");
/// let out = sandbox.run(script).await?;
/// assert_eq!(out.files[0].name, "out.txt");
/// assert_eq!(out.files[0].bytes, b"2");
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct File {
    /// The file's name, normalised (`data/in.csv`).
    pub name: String,
    /// Its contents.
    pub bytes: Vec<u8>,
}

impl File {
    /// A file with this name and contents.
    pub fn new(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> File {
        File {
            name: name.into(),
            bytes: bytes.into(),
        }
    }
}

/// What an eval cost.
///
/// The host measures fuel, wall time, output bytes and capability calls on
/// every stop. Instruction and heap figures come from inside the guest, so
/// they are absent (`None`) when the host stopped the guest (a timeout, fuel,
/// a trap), never a misleading zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Stats {
    /// Wasmtime fuel the eval consumed (starting an instance has its own
    /// budget and is not included); `None` when the engine does not meter
    /// fuel (see [`EngineBuilder::fuel`](crate::EngineBuilder::fuel)).
    pub fuel_used: Option<u64>,
    /// Lua VM instructions the eval ran (every instruction the VM fetched),
    /// in every coroutine, plus the fixed charges for coroutines and
    /// capability calls.
    pub instructions: Option<u64>,
    /// The most bytes the Lua heap held during the eval.
    pub peak_memory_bytes: Option<u64>,
    /// Wall-clock time of the eval, in microseconds.
    pub wall_time_us: u64,
    /// Capability calls the script made.
    pub capability_calls: u32,
    /// Bytes the script wrote.
    pub output_bytes: u64,
    /// Capability calls left out of the eval's `calls` because it already
    /// held [`Limits::MAX_CALL_RECORDS`](crate::Limits::MAX_CALL_RECORDS) records.
    #[serde(default)]
    pub calls_unrecorded: u32,
}

/// The bytes a script wrote, exactly as it wrote them.
///
/// Lua strings are bytes, so output need not be UTF-8. [`Output::as_bytes`]
/// is exact; [`Output::to_str_lossy`] replaces invalid sequences with
/// U+FFFD, and so does the serde form (a JSON string). The
/// [`Report`](crate::Report) adds the exact bytes in base64 when they are not
/// UTF-8.
///
/// ```
/// let out = moonbox::Output::from(b"caf\xc3\xa9\n".to_vec());
/// assert_eq!(out, "café\n");
/// assert_eq!(out.as_bytes().len(), 6);
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Output(Vec<u8>);

impl Output {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The output as text, with invalid UTF-8 replaced by U+FFFD.
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    /// Whether the output is valid UTF-8 (so the lossy form is exact).
    pub fn is_utf8(&self) -> bool {
        std::str::from_utf8(&self.0).is_ok()
    }

    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Vec<u8>> for Output {
    fn from(bytes: Vec<u8>) -> Self {
        Output(bytes)
    }
}

impl From<&str> for Output {
    fn from(text: &str) -> Self {
        Output(text.as_bytes().to_vec())
    }
}

impl AsRef<[u8]> for Output {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl PartialEq<str> for Output {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for Output {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_str_lossy(), f)
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_str_lossy())
    }
}

impl Serialize for Output {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_str_lossy())
    }
}

impl<'de> Deserialize<'de> for Output {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| Output(s.into_bytes()))
    }
}
