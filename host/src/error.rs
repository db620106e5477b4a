//! Errors: [`EvalError`] is a script's failure (what a model sees);
//! [`Error`] is the host's own (configuration, engine).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::config::DEFAULT_CHUNK_NAME;
use crate::contract;
use crate::outcome::{Output, Stats};
use crate::text::one_line;

/// Why an eval failed.
///
/// The first ten kinds come from the guest; the rest from the host's outer
/// wall. Serialized in `snake_case` (`"instruction_limit"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The chunk does not parse.
    Syntax,
    /// A Lua error while running: `error(...)`, a bad index, a bad argument.
    Runtime,
    /// The script called a function the sandbox removed (`os.execute is
    /// sandboxed`).
    Sandboxed,
    /// A capability failed: wrong argument count or type, or the handler
    /// returned an error. Scripts can catch these with `pcall`; this kind is
    /// reported only when one ends the eval.
    Capability,
    /// [`Limits::max_instructions`](crate::Limits::max_instructions) was reached.
    InstructionLimit,
    /// [`Limits::max_call_depth`](crate::Limits::max_call_depth) was reached,
    /// or the wasm stack ran out. (Lua's own stack guards, `stack overflow`
    /// and `C stack overflow`, are [`ErrorKind::Runtime`] errors, as in
    /// `lua5.4`.)
    CallDepth,
    /// The Lua heap ([`Limits::max_memory_bytes`](crate::Limits::max_memory_bytes)) or the
    /// linear memory ([`Limits::max_wasm_memory_bytes`](crate::Limits::max_wasm_memory_bytes))
    /// is exhausted.
    MemoryLimit,
    /// A string would exceed [`Limits::max_string_bytes`](crate::Limits::max_string_bytes).
    StringSize,
    /// Output (`print`, `io.write`) would exceed
    /// [`Limits::max_output_bytes`](crate::Limits::max_output_bytes); what
    /// fitted was written.
    OutputLimit,
    /// A returned value cannot become JSON (a function, a cycle, NaN...).
    InvalidValue,
    /// The eval used up [`Limits::fuel`](crate::Limits::fuel).
    FuelExhausted,
    /// The eval ran past [`Limits::timeout`](crate::Limits::timeout).
    Timeout,
    /// An earlier eval in this session was stopped by the outer wall, so the
    /// session's state is gone. Start a new session.
    SessionPoisoned,
    /// The host cancelled the eval through a [`CancelHandle`](crate::CancelHandle)
    /// (an MCP client's `notifications/cancelled`, a user pressing stop).
    /// What the script wrote before it is kept; the session is poisoned.
    Cancelled,
    /// Something the sandbox did not expect, such as a trap in the guest.
    /// Please report it.
    Internal,
}

impl ErrorKind {
    /// Every kind, in declaration order (for schemas and exhaustive tests).
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::Syntax,
        ErrorKind::Runtime,
        ErrorKind::Sandboxed,
        ErrorKind::Capability,
        ErrorKind::InstructionLimit,
        ErrorKind::CallDepth,
        ErrorKind::MemoryLimit,
        ErrorKind::StringSize,
        ErrorKind::OutputLimit,
        ErrorKind::InvalidValue,
        ErrorKind::FuelExhausted,
        ErrorKind::Timeout,
        ErrorKind::SessionPoisoned,
        ErrorKind::Cancelled,
        ErrorKind::Internal,
    ];

    /// The `snake_case` name used in JSON and in `error[...]` lines.
    pub fn as_str(self) -> &'static str {
        self.rule().name
    }

    /// Whether a limit stopped the script (as opposed to an error in it).
    ///
    /// ```
    /// use moonbox::ErrorKind;
    /// assert!(ErrorKind::Timeout.is_limit());
    /// assert!(!ErrorKind::Runtime.is_limit());
    /// ```
    pub fn is_limit(self) -> bool {
        self.rule().limit
    }

    /// The exit status of `moonbox run` and `moonbox check` when an eval
    /// ends with this kind: 1 for an error in the script, 2 for the host's
    /// own failures (`internal`, `session_poisoned`, `cancelled`), 3 for a
    /// limit.
    ///
    /// ```
    /// use moonbox::ErrorKind;
    /// assert_eq!(ErrorKind::Runtime.exit_code(), 1);
    /// assert_eq!(ErrorKind::Internal.exit_code(), 2);
    /// assert_eq!(ErrorKind::Timeout.exit_code(), 3);
    /// ```
    pub fn exit_code(self) -> u8 {
        self.rule().exit_code
    }

    /// The kind's rule in the contract table (`wit/contract.toml`), which
    /// lists the kinds in the order of this enum.
    fn rule(self) -> &'static contract::ErrorKindRule {
        &contract::ERROR_KINDS[self as usize]
    }
}

/// The guest's kinds, as the WIT contract declares them: each is the kind
/// of the same name.
impl From<crate::bindings::types::ErrorKind> for ErrorKind {
    fn from(kind: crate::bindings::types::ErrorKind) -> Self {
        use crate::bindings::types::ErrorKind as Wit;
        match kind {
            Wit::Syntax => ErrorKind::Syntax,
            Wit::Runtime => ErrorKind::Runtime,
            Wit::Sandboxed => ErrorKind::Sandboxed,
            Wit::Capability => ErrorKind::Capability,
            Wit::InstructionLimit => ErrorKind::InstructionLimit,
            Wit::CallDepth => ErrorKind::CallDepth,
            Wit::MemoryLimit => ErrorKind::MemoryLimit,
            Wit::StringSize => ErrorKind::StringSize,
            Wit::OutputLimit => ErrorKind::OutputLimit,
            Wit::InvalidValue => ErrorKind::InvalidValue,
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A script's failure, as a model should see it.
///
/// `Display` is one line without ANSI codes or backtraces (line breaks
/// become spaces, and every other control or line-separator character is
/// escaped, so a script cannot forge a second line on a terminal):
/// `error[runtime]: main.lua:3: attempt to index a nil value (global 'nope')`.
/// The alternate form (`{:#}`) adds the traceback. Its JSON form, for logs,
/// UIs and tool results, is the [`Report`](crate::Report)
/// (`Report::from(&err)`), the one serialised form of an outcome.
///
/// ```
/// # async fn demo() -> Result<(), moonbox::Error> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let err = sandbox.eval("return nope.x").await.unwrap_err();
/// assert_eq!(err.kind, moonbox::ErrorKind::Runtime);
/// assert_eq!(err.line, Some(1));
/// assert_eq!(
///     err.to_string(),
///     "error[runtime]: main.lua:1: attempt to index a nil value (global 'nope')"
/// );
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The message exactly as Lua puts it (with its `chunk:line:` prefix),
    /// or the host's description for outer-wall kinds.
    pub message: String,
    /// The chunk the error points at.
    pub chunk: String,
    /// The line the error points at, when known.
    pub line: Option<u32>,
    /// The Lua traceback, for errors raised while running.
    pub traceback: Option<String>,
    /// Everything the script wrote before it failed, byte for byte, whatever
    /// stopped it.
    pub output: Output,
    /// What the eval cost up to the failure.
    pub stats: Stats,
    /// The capability calls made before the failure, in order, as on
    /// [`EvalOutput::calls`](crate::EvalOutput::calls); a call the stop
    /// interrupted is [`CallOutcome::CutOff`](crate::CallOutcome::CutOff).
    pub calls: Vec<crate::CallRecord>,
    /// The events of the script's `log` before it failed, in order, whatever
    /// stopped it.
    pub logs: Vec<crate::output::LogEvent>,
    /// The files the script created or wrote before it failed, as on
    /// [`EvalOutput::files`](crate::EvalOutput::files). Empty when the host
    /// stopped the guest (a timeout, fuel, a trap): the instance, and the
    /// files in it, end with the stop.
    pub files: Vec<crate::File>,
}

impl EvalError {
    pub(crate) fn host(
        kind: ErrorKind,
        message: impl Into<String>,
        chunk: &str,
        stats: Stats,
    ) -> Self {
        EvalError {
            kind,
            message: message.into(),
            chunk: chunk.to_owned(),
            line: None,
            traceback: None,
            output: Output::default(),
            stats,
            calls: Vec::new(),
            logs: Vec::new(),
            files: Vec::new(),
        }
    }

    /// A failure of the sandbox itself ([`ErrorKind::Internal`]), outside
    /// any chunk.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::host(
            ErrorKind::Internal,
            message,
            DEFAULT_CHUNK_NAME,
            Stats::default(),
        )
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error[{}]: {}", self.kind, one_line(&self.message))?;
        if let (true, Some(tb)) = (f.alternate(), &self.traceback) {
            write!(f, "\n{tb}")?;
        }
        Ok(())
    }
}

impl std::error::Error for EvalError {}

/// A host-side failure: bad configuration, an engine that cannot start, or
/// a session that cannot be created.
///
/// Each variant is a kind of failure; the underlying cause, where there is
/// one, is its [`source`](std::error::Error::source), so `Display` is the
/// host's sentence and the chain says why.
///
/// ```
/// use moonbox::{ConfigError, Error, Limits, Sandbox};
///
/// let err = Sandbox::builder()
///     .limits(Limits { max_instructions: 0, ..Limits::default() })
///     .build()
///     .unwrap_err();
/// let Error::Config(ConfigError::Limit(why)) = &err else { panic!("{err}") };
/// assert_eq!(why.limit(), "max_instructions");
/// assert_eq!(
///     err.to_string(),
///     "invalid sandbox configuration: limit max_instructions must be greater than zero"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The sandbox configuration is invalid (a zero limit, an unknown
    /// `allow` name, a module that does not compile, a duplicate name...).
    /// The [`ConfigError`] says which setting and why.
    #[error("invalid sandbox configuration: {0}")]
    Config(#[from] ConfigError),
    /// wasmtime could not be configured, or the guest not compiled.
    #[error("cannot {action}")]
    Engine {
        /// What the host was doing, as a verb phrase ("compile the guest
        /// component").
        action: &'static str,
        /// wasmtime's or the system's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The cache directory cannot be created, or is not private to the
    /// user (see [`EngineBuilder::cache_dir`](crate::EngineBuilder::cache_dir)).
    #[error("cannot use {} as the compiled-code cache", path.display())]
    Cache {
        /// The directory.
        path: std::path::PathBuf,
        /// Why it was refused.
        #[source]
        source: std::io::Error,
    },
    /// A session could not be started. The source is the [`EvalError`]
    /// that stopped it, with its kind (a timeout, the memory limit, an
    /// internal failure...).
    #[error("cannot start a session")]
    Session(#[source] Box<EvalError>),
}

impl Error {
    pub(crate) fn engine(
        action: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        Error::Engine {
            action,
            source: source.into(),
        }
    }

    /// The eval error behind a [`Error::Session`], or behind a
    /// [`ConfigError::TooSmall`], if this is one.
    pub fn eval_error(&self) -> Option<&EvalError> {
        match self {
            Error::Session(e) => Some(e),
            Error::Config(ConfigError::TooSmall(e)) => Some(e),
            _ => None,
        }
    }
}

/// Which setting of a sandbox is invalid, and why: the cause of an
/// [`Error::Config`]. `Display` is one sentence that names the setting.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A limit is out of bounds ([`Limits::validate`](crate::Limits::validate)).
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
    /// A limit is too small to start a session at all. The eval error has
    /// the limit's kind (a timeout, fuel, the memory limit), and its
    /// message names the limit to raise.
    #[error("{}", .0.message)]
    TooSmall(Box<EvalError>),
    /// The guest refused the configuration: an unknown `allow` name, a
    /// malformed or duplicate capability or module name, a module that
    /// does not compile. The text is the guest's and names the setting.
    #[error("{0}")]
    Refused(String),
    /// A setting (deterministic mode, or an explicit
    /// [`Limits::fuel`](crate::Limits::fuel)) needs an engine that meters
    /// fuel, and the sandbox's does not.
    #[error(
        "{setting} needs an engine that meters fuel; build it with Engine::builder().fuel(true)"
    )]
    NeedsFuel {
        /// The setting: `deterministic mode` or `limit fuel`.
        setting: &'static str,
    },
    /// A call budget is over [`Limits::MAX_CALL_BUDGET`](crate::Limits::MAX_CALL_BUDGET).
    #[error(
        "the call budget of {} is {calls}, more than the most allowed ({}); lower it",
        budget_owner(.capability),
        crate::governance::MAX_CALL_BUDGET
    )]
    CallBudgetTooLarge {
        /// The capability whose budget it is; `None` for the sandbox's
        /// default budget.
        capability: Option<String>,
        /// The budget asked for.
        calls: u32,
    },
    /// A call budget names a capability the sandbox does not have.
    #[error(
        "a call budget is set for '{name}', but no capability has that name (the capabilities are: {}); fix the name or drop the budget",
        name_list(.capabilities)
    )]
    UnknownCapability {
        /// The name the budget gives.
        name: String,
        /// The names the sandbox's capabilities have.
        capabilities: Vec<String>,
    },
    /// A capability's argument counts are out of order or over
    /// [`Limits::MAX_CAPABILITY_ARGS`](crate::Limits::MAX_CAPABILITY_ARGS).
    #[error(
        "capability '{capability}' takes {min} to {max} arguments; the fewest must not pass the most, and the most is {}",
        crate::capability::MAX_CAPABILITY_ARGS
    )]
    Arity {
        /// The capability.
        capability: String,
        /// The fewest arguments it takes.
        min: u32,
        /// The most arguments it takes.
        max: u32,
    },
    /// A capability needs approval and the sandbox has no
    /// [`Approver`](crate::Approver).
    #[error(
        "capability '{capability}' needs approval, but the sandbox has no approver to ask; set one with SandboxBuilder::approver, or do not require approval"
    )]
    NoApprover {
        /// The capability.
        capability: String,
    },
    /// [`Records::from_json`](crate::Records::from_json) got text that is
    /// not JSON; the source is the parser's error.
    #[error("records are not valid JSON")]
    RecordsNotJson(#[source] serde_json::Error),
    /// [`Records::from_json`](crate::Records::from_json) got JSON that is
    /// not an object.
    #[error("records must be a JSON object mapping ids to records, not {kind}")]
    RecordsNotAnObject {
        /// The JSON type it got (`an array`, `a string`...).
        kind: &'static str,
    },
}

/// Whose call budget [`ConfigError::CallBudgetTooLarge`] is about.
fn budget_owner(capability: &Option<String>) -> String {
    match capability {
        Some(name) => format!("'{name}'"),
        None => "every capability".to_owned(),
    }
}

/// The capabilities [`ConfigError::UnknownCapability`] lists.
fn name_list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_kind_once_with_its_serde_name() {
        // A new variant must be added here, which the match below enforces.
        for kind in ErrorKind::ALL {
            match kind {
                ErrorKind::Syntax
                | ErrorKind::Runtime
                | ErrorKind::Sandboxed
                | ErrorKind::Capability
                | ErrorKind::InstructionLimit
                | ErrorKind::CallDepth
                | ErrorKind::MemoryLimit
                | ErrorKind::StringSize
                | ErrorKind::OutputLimit
                | ErrorKind::InvalidValue
                | ErrorKind::FuelExhausted
                | ErrorKind::Timeout
                | ErrorKind::SessionPoisoned
                | ErrorKind::Internal
                | ErrorKind::Cancelled => {}
            }
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, kind.as_str());
        }
        let mut names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 15);
    }

    /// The enum follows the contract table: the same kinds in the same
    /// order (so `rule` indexes it), the guest's first, each guest kind
    /// converted from the WIT case of the same name.
    #[test]
    fn the_enum_is_the_contract_table() {
        use crate::bindings::types::ErrorKind as Wit;
        assert_eq!(ErrorKind::ALL.len(), contract::ERROR_KINDS.len());
        for (i, kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(*kind as usize, i);
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                contract::ERROR_KINDS[i].name
            );
        }
        let wit = [
            Wit::Syntax,
            Wit::Runtime,
            Wit::Sandboxed,
            Wit::Capability,
            Wit::InstructionLimit,
            Wit::CallDepth,
            Wit::MemoryLimit,
            Wit::StringSize,
            Wit::OutputLimit,
            Wit::InvalidValue,
        ];
        assert_eq!(wit.len(), contract::GUEST_ERROR_KINDS);
        for (i, case) in wit.into_iter().enumerate() {
            assert!(contract::ERROR_KINDS[i].guest);
            assert_eq!(ErrorKind::from(case), ErrorKind::ALL[i]);
        }
    }

    #[test]
    fn display_is_one_line() {
        let err = EvalError {
            kind: ErrorKind::Runtime,
            message: "main.lua:1: module 'x' not found:\n\tno field package.preload['x']".into(),
            chunk: "main.lua".into(),
            line: Some(1),
            traceback: Some("stack traceback:\n\t[C]: in ?".into()),
            output: Output::default(),
            stats: Stats::default(),
            calls: Vec::new(),
            logs: Vec::new(),
            files: Vec::new(),
        };
        assert_eq!(
            err.to_string(),
            "error[runtime]: main.lua:1: module 'x' not found: no field package.preload['x']"
        );
        assert!(format!("{err:#}").ends_with("stack traceback:\n\t[C]: in ?"));
    }

    #[test]
    fn kinds_serialize_in_snake_case() {
        for kind in [
            ErrorKind::InstructionLimit,
            ErrorKind::FuelExhausted,
            ErrorKind::SessionPoisoned,
        ] {
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.as_str())
            );
        }
    }
}
