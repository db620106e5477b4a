//! [`Script`]: one eval's code, chunk name and inputs; and [`CancelHandle`],
//! which stops a session's eval from another task.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tokio::sync::Notify;

use crate::bindings::types;

/// One eval: the code, the chunk name its messages use, and named inputs
/// the script receives as globals.
///
/// Inputs carry data into a script without splicing it into the code: a
/// value is converted by the boundary's rules (docs/wit.md), so a string
/// stays a string whatever quotes or brackets it holds.
///
/// ```
/// use moonbox::Script;
/// use serde_json::json;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let script = Script::new("return #rows, rows[1].name .. who")
///     .input("rows", json!([{"name": "Ada"}, {"name": "Grace"}]))
///     .input("who", "'); os.exit() --")
///     .chunk_name("report.lua");
/// let out = sandbox.run(script).await?;
/// assert_eq!(out.values, [json!(2), json!("Ada'); os.exit() --")]);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
///
/// An input whose name is not a Lua identifier (or is a keyword), or whose
/// value cannot become Lua (nesting past `max_value_depth`), fails the eval
/// with [`ErrorKind::InvalidValue`](crate::ErrorKind::InvalidValue) before
/// any of the script runs; inputs whose JSON exceeds the session's
/// `max_memory_bytes` are refused the same way.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub(crate) code: Vec<u8>,
    pub(crate) chunk_name: Option<String>,
    pub(crate) inputs: Vec<(String, Value)>,
    /// Where each input name is in `inputs`, so that adding many stays
    /// linear.
    index: HashMap<String, usize>,
    pub(crate) args: Option<Vec<String>>,
    pub(crate) files: Vec<crate::File>,
    pub(crate) stdin: Vec<u8>,
}

/// [`Limits::MAX_INPUTS`](crate::Limits::MAX_INPUTS), for this module.
pub(crate) const MAX_INPUTS: usize = crate::limits::Limits::MAX_INPUTS;

impl Script {
    /// A script with this code (Lua source: text, or any bytes), no inputs,
    /// and the session's chunk name.
    pub fn new(code: impl Into<Vec<u8>>) -> Script {
        Script {
            code: code.into(),
            chunk_name: None,
            inputs: Vec::new(),
            index: HashMap::new(),
            args: None,
            files: Vec::new(),
            stdin: Vec::new(),
        }
    }

    /// Names the chunk in messages (`report.lua:3: ...`). Default: the
    /// session's chunk name ([`Session::set_chunk_name`](crate::Session::set_chunk_name)),
    /// which defaults to [`DEFAULT_CHUNK_NAME`](crate::DEFAULT_CHUNK_NAME).
    pub fn chunk_name(mut self, name: impl Into<String>) -> Script {
        self.chunk_name = Some(name.into());
        self
    }

    /// Sets the global `name` to `value` before the chunk runs. A later
    /// input of the same name replaces an earlier one. At most
    /// [`Limits::MAX_INPUTS`](crate::Limits::MAX_INPUTS) names: past it the eval fails with `invalid_value`.
    /// Default: no inputs.
    pub fn input(mut self, name: impl Into<String>, value: impl Into<Value>) -> Script {
        let name = name.into();
        let value = value.into();
        match self.index.get(&name) {
            Some(&at) => self.inputs[at].1 = value,
            None => {
                self.index.insert(name.clone(), self.inputs.len());
                self.inputs.push((name, value));
            }
        }
        self
    }

    /// Adds several inputs, as [`input`](Self::input) would one by one.
    pub fn inputs<I, S>(self, inputs: I) -> Script
    where
        I: IntoIterator<Item = (S, Value)>,
        S: Into<String>,
    {
        inputs
            .into_iter()
            .fold(self, |script, (name, value)| script.input(name, value))
    }

    /// Gives the script arguments, as `lua5.4 script.lua a b` does: the
    /// global `arg` holds the chunk name at index 0 and these at 1..n, and
    /// the chunk receives them as `...`. Without it `arg` is left as it is
    /// (nil in a new session). At most
    /// [`Limits::MAX_ARGS`](crate::Limits::MAX_ARGS): past it the eval fails
    /// with `invalid_value`.
    pub fn args<I, S>(mut self, args: I) -> Script
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = Some(args.into_iter().map(Into::into).collect());
        self
    }

    /// Mounts a read-only file the script can open, read, `loadfile`,
    /// `dofile` and `require` (see [`File`](crate::File) for names). A later
    /// file of the same name replaces an earlier one. Mounted files stay in
    /// a session for its later evals. Their bytes count against
    /// `max_memory_bytes`; at most [`Limits::MAX_FILES`](crate::Limits::MAX_FILES)
    /// files in a session, and a name of at most
    /// [`Limits::MAX_FILE_NAME_BYTES`](crate::Limits::MAX_FILE_NAME_BYTES).
    pub fn file(mut self, name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Script {
        let file = crate::File::new(name, bytes);
        match self.files.iter_mut().find(|f| f.name == file.name) {
            Some(same) => *same = file,
            None => self.files.push(file),
        }
        self
    }

    /// What `io.stdin` (and `io.read`, `io.lines()`, `loadfile()` without a
    /// name) read. Default: empty, end of file at once. Counts against
    /// `max_memory_bytes` while the eval runs.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Script {
        self.stdin = bytes.into();
        self
    }

    /// The arguments given with [`args`](Self::args), if any.
    pub fn arg_values(&self) -> Option<&[String]> {
        self.args.as_deref()
    }

    /// The standard input given with [`stdin`](Self::stdin).
    pub fn stdin_bytes(&self) -> &[u8] {
        &self.stdin
    }

    /// The files mounted, in the order they were given.
    pub fn files(&self) -> &[crate::File] {
        &self.files
    }

    /// The code.
    pub fn code(&self) -> &[u8] {
        &self.code
    }

    /// The inputs, in the order they were given.
    pub fn input_values(&self) -> &[(String, Value)] {
        &self.inputs
    }
}

impl From<&str> for Script {
    fn from(code: &str) -> Script {
        Script::new(code)
    }
}

impl From<String> for Script {
    fn from(code: String) -> Script {
        Script::new(code)
    }
}

impl From<&[u8]> for Script {
    fn from(code: &[u8]) -> Script {
        Script::new(code)
    }
}

impl From<Vec<u8>> for Script {
    fn from(code: Vec<u8>) -> Script {
        Script::new(code)
    }
}

/// Why a script's arguments, files or standard input cannot cross, if they
/// cannot: more than [`Limits::MAX_ARGS`](crate::Limits::MAX_ARGS)
/// arguments, more than [`Limits::MAX_FILES`](crate::Limits::MAX_FILES)
/// files, a name past [`Limits::MAX_FILE_NAME_BYTES`](crate::Limits::MAX_FILE_NAME_BYTES)
/// or with NUL, or files and standard input together larger than
/// `max_memory_bytes`, which the guest would refuse after copying them in.
pub(crate) fn check_files(script: &Script, max_memory_bytes: u64) -> Result<(), String> {
    let max_args = crate::Limits::MAX_ARGS;
    if let Some(args) = &script.args
        && args.len() > max_args
    {
        return Err(format!(
            "{} arguments are more than the {max_args} an eval takes",
            args.len()
        ));
    }
    let max_files = crate::Limits::MAX_FILES;
    if script.files.len() > max_files {
        return Err(format!(
            "{} files are more than the {max_files} a session holds",
            script.files.len()
        ));
    }
    let max_name = crate::Limits::MAX_FILE_NAME_BYTES;
    let mut total = script.stdin.len() as u64;
    for file in &script.files {
        if file.name.is_empty() || file.name.len() > max_name || file.name.contains('\0') {
            return Err(format!(
                "file name '{}' is empty, longer than {max_name} bytes or contains NUL",
                crate::text::one_line(&file.name.chars().take(80).collect::<String>())
            ));
        }
        total = total.saturating_add(file.bytes.len() as u64);
    }
    if total > max_memory_bytes {
        return Err(format!(
            "the files and stdin take {total} bytes, more than max-memory-bytes ({max_memory_bytes})"
        ));
    }
    Ok(())
}

/// The inputs as WIT values, or why they cannot cross: there are more than
/// [`Limits::MAX_INPUTS`](crate::Limits::MAX_INPUTS), or their JSON would take more than `max_bytes`.
pub(crate) fn wit_inputs(
    inputs: &[(String, Value)],
    max_bytes: u64,
) -> Result<Vec<types::Input>, String> {
    if inputs.len() > MAX_INPUTS {
        return Err(format!(
            "{} inputs are more than the {MAX_INPUTS} an eval takes; pass related data as one table",
            inputs.len()
        ));
    }
    let mut total: u64 = 0;
    let mut out = Vec::with_capacity(inputs.len());
    for (name, value) in inputs {
        let value = match value {
            Value::Null => types::Value::Nil,
            Value::Bool(b) => types::Value::Boolean(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => types::Value::Integer(i),
                None => types::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => {
                total = total.saturating_add(s.len() as u64);
                types::Value::Text(s.clone())
            }
            Value::Array(_) | Value::Object(_) => {
                let text = value.to_string();
                total = total.saturating_add(text.len() as u64);
                types::Value::Json(text)
            }
        };
        total = total.saturating_add(name.len() as u64);
        if total > max_bytes {
            return Err(format!(
                "the inputs are more than {max_bytes} bytes, the sandbox's memory limit (max_memory_bytes); pass less data"
            ));
        }
        out.push(types::Input {
            name: name.clone(),
            value,
        });
    }
    Ok(out)
}

/// Stops a session's eval from another task or thread.
///
/// Cheap to clone, `Send + Sync`. [`cancel`](Self::cancel) ends the eval
/// running now with [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled),
/// within one epoch tick, whether the script is computing or waiting on a
/// capability; the error keeps the output written before it and the host's
/// stats (wall time, fuel, capability calls, output bytes; instructions and
/// peak memory are absent, as after any host stop).
/// A cancelled session is poisoned: an eval started after `cancel` fails at
/// once with [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled), so a
/// cancel that races the start of an eval is never lost.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// // An instruction limit the loop cannot reach before the cancel.
/// let limits = moonbox::Limits {
///     max_instructions: moonbox::Limits::MAX_MAX_INSTRUCTIONS,
///     ..moonbox::Limits::default()
/// };
/// let sandbox = moonbox::Sandbox::builder().limits(limits).build()?;
/// let mut session = sandbox.session(()).await?;
/// let cancel = session.cancel_handle();
/// tokio::spawn(async move {
///     tokio::time::sleep(std::time::Duration::from_millis(50)).await;
///     cancel.cancel();
/// });
/// let err = session.eval("print('started') while true do end").await.unwrap_err();
/// assert_eq!(err.kind, moonbox::ErrorKind::Cancelled);
/// assert_eq!(err.output, "started\n");
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelHandle {
    state: Arc<CancelState>,
}

#[derive(Debug, Default)]
struct CancelState {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancelHandle {
    /// Cancels the session's current eval, and every later one.
    pub fn cancel(&self) {
        self.state.cancelled.store(true, Ordering::SeqCst);
        self.state.notify.notify_waiters();
    }

    /// Whether [`cancel`](Self::cancel) has been called.
    pub fn is_cancelled(&self) -> bool {
        self.state.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves once the handle is cancelled.
    ///
    /// # Cancel safety
    /// Safe to drop; a later call waits again.
    pub(crate) async fn cancelled(&self) {
        loop {
            // Registered before the check, so a cancel between the two is
            // still seen.
            let notified = self.state.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_repeated_input_name_replaces_the_earlier_value() {
        let script = Script::new("return x")
            .input("x", 1)
            .input("y", 2)
            .input("x", 3);
        assert_eq!(
            script.input_values(),
            [("x".to_owned(), json!(3)), ("y".to_owned(), json!(2))]
        );
    }

    #[test]
    fn scalars_cross_typed_and_tables_as_json() {
        let inputs = [
            ("a".to_owned(), json!(null)),
            ("b".to_owned(), json!(7)),
            ("c".to_owned(), json!(1.5)),
            ("d".to_owned(), json!("s")),
            ("e".to_owned(), json!({"k": [1]})),
            ("f".to_owned(), json!(u64::MAX)),
        ];
        let wit = wit_inputs(&inputs, 1 << 20).unwrap();
        assert!(matches!(wit[0].value, types::Value::Nil));
        assert!(matches!(wit[1].value, types::Value::Integer(7)));
        assert!(matches!(wit[2].value, types::Value::Float(f) if f == 1.5));
        assert!(matches!(&wit[3].value, types::Value::Text(s) if s == "s"));
        assert!(matches!(&wit[4].value, types::Value::Json(s) if s == r#"{"k":[1]}"#));
        assert!(matches!(wit[5].value, types::Value::Float(_)));
    }

    #[test]
    fn many_inputs_are_added_in_linear_time_and_past_the_cap_refused() {
        let many: Vec<(String, Value)> =
            (0..200_000).map(|i| (format!("k{i}"), json!(i))).collect();
        let script = Script::new("").inputs(many.clone()).inputs(many);
        assert_eq!(script.input_values().len(), 200_000);
        let err = wit_inputs(script.input_values(), u64::MAX).unwrap_err();
        assert!(err.contains("1024"), "{err}");
        let fits: Vec<(String, Value)> = (0..MAX_INPUTS)
            .map(|i| (format!("k{i}"), json!(i)))
            .collect();
        assert!(wit_inputs(&fits, u64::MAX).is_ok());
    }

    #[test]
    fn inputs_past_the_byte_bound_are_refused_with_the_limit_named() {
        let inputs = [("big".to_owned(), json!("x".repeat(2000)))];
        let err = wit_inputs(&inputs, 1000).unwrap_err();
        assert!(err.contains("max_memory_bytes"), "{err}");
    }

    #[tokio::test]
    async fn a_cancel_before_the_wait_is_not_lost() {
        let handle = CancelHandle::default();
        handle.clone().cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), handle.cancelled())
            .await
            .expect("cancelled() resolves after an earlier cancel");
        assert!(handle.is_cancelled());
    }
}
