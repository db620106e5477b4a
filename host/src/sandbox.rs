//! [`Sandbox`]: the compiled guest plus a configuration, cheap to clone and
//! share; and its builder.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use wasmtime::component::{HasSelf, Linker};

use crate::bindings::{GuestPre, types};
use crate::capability::Capability;
use crate::error::{Error, EvalError};
use crate::guest::{self, Shared};
use crate::host::{HostState, Registry};
use crate::limits::Limits;
use crate::outcome::EvalOutput;
use crate::session::Session;

/// The chunk name evals use unless told otherwise: messages read
/// `main.lua:3: ...`.
pub const DEFAULT_CHUNK_NAME: &str = "main.lua";

/// Deterministic mode: a fixed clock and a seeded random generator, inside
/// Lua (`os.time`, `os.date`, `os.clock`, `math.random`) and in the WASI
/// clocks and randomness the guest can see. A script's output then depends
/// only on its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Determinism {
    /// What `os.time()` returns: seconds since the Unix epoch.
    pub clock: i64,
    /// The seed of `math.random`.
    pub seed: i64,
}

impl Default for Determinism {
    /// 2024-01-01T00:00:00Z and seed 0.
    fn default() -> Self {
        Determinism {
            clock: 1_704_067_200,
            seed: 0,
        }
    }
}

/// Configures and builds a [`Sandbox`].
///
/// Nothing is allowed by default: no capabilities, no modules, every
/// sandboxed function removed, [`Limits::default`].
///
/// ```
/// use moonbox::{Limits, Sandbox};
///
/// # fn main() -> Result<(), moonbox::Error> {
/// let sandbox = Sandbox::builder()
///     .limits(Limits { max_instructions: 1_000_000, ..Limits::default() })
///     .module("greet", "return { hi = function(n) return 'hi ' .. n end }")
///     .deterministic(moonbox::Determinism::default())
///     .build()?;
/// # let _ = sandbox; Ok(()) }
/// ```
pub struct SandboxBuilder<T> {
    limits: Limits,
    allow: Vec<String>,
    modules: Vec<(String, Vec<u8>)>,
    capabilities: Vec<Capability<T>>,
    determinism: Option<Determinism>,
    cache_dir: Option<Option<PathBuf>>,
    pooling: bool,
}

impl<T> fmt::Debug for SandboxBuilder<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SandboxBuilder")
            .field("limits", &self.limits)
            .field("allow", &self.allow)
            .field(
                "modules",
                &self.modules.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .field("capabilities", &self.capabilities)
            .field("determinism", &self.determinism)
            .finish()
    }
}

impl<T: Send + Sync + 'static> Default for SandboxBuilder<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Send + Sync + 'static> SandboxBuilder<T> {
    /// A builder for a sandbox whose sessions carry a context of type `T`.
    /// (For no context, use [`Sandbox::builder`].)
    pub fn new() -> Self {
        SandboxBuilder {
            limits: Limits::default(),
            allow: Vec::new(),
            modules: Vec::new(),
            capabilities: Vec::new(),
            determinism: None,
            cache_dir: None,
            pooling: false,
        }
    }

    /// Sets every limit. Default: [`Limits::default`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Allows a sandboxed name back, such as `os.getenv`, `io.write`,
    /// `debug` or `binary-chunks` (see docs/wit.md for the list). Allowing a
    /// name does not grant the host resource behind it: the guest still has
    /// no files, environment or network. Default: nothing allowed.
    pub fn allow(mut self, name: impl Into<String>) -> Self {
        self.allow.push(name.into());
        self
    }

    /// Makes `require(name)` load `source` (Lua source, text or any bytes).
    /// The name may not be a standard library's (`string`, `table`...):
    /// [`build`](Self::build) refuses it. Default: no modules.
    pub fn module(mut self, name: impl Into<String>, source: impl Into<Vec<u8>>) -> Self {
        self.modules.push((name.into(), source.into()));
        self
    }

    /// Offers a capability to scripts. Default: none.
    pub fn capability(mut self, capability: Capability<T>) -> Self {
        self.capabilities.push(capability);
        self
    }

    /// Turns on deterministic mode. Default: off (real clocks, random seed).
    pub fn deterministic(mut self, determinism: Determinism) -> Self {
        self.determinism = Some(determinism);
        self
    }

    /// Where compiled code is cached between processes; `None` disables the
    /// cache. Only the first sandbox of a process compiles, so only its
    /// setting matters. Default: `$MOONBOX_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/moonbox`, else `~/.cache/moonbox`.
    pub fn cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = Some(dir);
        self
    }

    /// Uses wasmtime's pooling instance allocator, which reserves instance
    /// slots up front instead of mapping memory per instance. It makes fresh
    /// evals faster (see BENCHMARKS.md) but caps how many instances can be
    /// live at once at wasmtime's pool size (1,000 by default); past it,
    /// starting a session fails. Only the first sandbox of a process creates
    /// the engine, so only its setting matters. Default: off.
    pub fn pooling_allocator(mut self, enabled: bool) -> Self {
        self.pooling = enabled;
        self
    }

    /// Validates the configuration and prepares the sandbox.
    ///
    /// The first call in a process compiles the guest (or loads it from the
    /// cache); later calls reuse it. `build` also starts one session to prove
    /// the configuration works.
    ///
    /// # Errors
    /// [`Error::Config`] for invalid limits, an unknown `allow` name, a
    /// duplicate or malformed capability or module name, or a module that
    /// does not compile; [`Error::Engine`] if wasmtime cannot start.
    pub fn build(self) -> Result<Sandbox<T>, Error> {
        self.limits.validate().map_err(Error::Config)?;
        let cache_dir = self.cache_dir.unwrap_or_else(guest::default_cache_dir);
        let shared = guest::shared(&guest::EngineOptions {
            cache_dir,
            pooling: self.pooling,
        })?;
        let mut linker = Linker::<HostState<T>>::new(&shared.engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| Error::Engine(format!("cannot link WASI: {e}")))?;
        crate::bindings::Guest::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
            .map_err(|e| Error::Engine(format!("cannot link capabilities: {e}")))?;
        let pre = linker
            .instantiate_pre(&shared.component)
            .map_err(|e| Error::Engine(format!("cannot prepare the guest: {e}")))?;
        let pre = GuestPre::new(pre)
            .map_err(|e| Error::Engine(format!("the guest does not match wit/: {e}")))?;
        let config = types::Config {
            limits: types::Limits {
                max_instructions: self.limits.max_instructions,
                max_call_depth: self.limits.max_call_depth,
                max_string_bytes: self.limits.max_string_bytes,
                max_memory_bytes: self.limits.memory,
                max_output_bytes: self.limits.max_output_bytes,
                max_value_depth: self.limits.max_value_depth,
            },
            allow: self.allow,
            modules: self
                .modules
                .into_iter()
                .map(|(name, source)| types::Module { name, source })
                .collect(),
            capabilities: self
                .capabilities
                .iter()
                .map(|c| types::Capability {
                    name: c.name().to_owned(),
                    min_args: c.arity().0,
                    max_args: c.arity().1,
                    doc: c.description().to_owned(),
                    params_schema: None,
                    result_schema: None,
                })
                .collect(),
            deterministic: self.determinism.map(|d| types::Determinism {
                clock: d.clock,
                seed: d.seed,
            }),
        };
        let sandbox = Sandbox {
            inner: Arc::new(Inner {
                shared,
                pre,
                registry: Arc::new(Registry {
                    capabilities: self.capabilities,
                }),
                limits: self.limits,
                config,
                determinism: self.determinism,
            }),
        };
        sandbox.probe()?;
        Ok(sandbox)
    }
}

/// A configured Lua sandbox: the compiled guest, the limits, the sandbox
/// rules and the capabilities.
///
/// `Sandbox` is cheap to clone (an `Arc`) and `Send + Sync`: build one per
/// configuration and share it across tasks. Each [`Sandbox::eval`] runs in a
/// fresh, isolated instance; a [`Session`] keeps Lua globals across evals.
///
/// ```
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let out = sandbox.eval("return 1 + 1").await?;
/// assert_eq!(out.values, [serde_json::json!(2)]);
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
pub struct Sandbox<T: 'static = ()> {
    inner: Arc<Inner<T>>,
}

pub(crate) struct Inner<T: 'static> {
    pub(crate) shared: Arc<Shared>,
    pub(crate) pre: GuestPre<HostState<T>>,
    pub(crate) registry: Arc<Registry<T>>,
    pub(crate) limits: Limits,
    pub(crate) config: types::Config,
    pub(crate) determinism: Option<Determinism>,
}

impl<T> Clone for Sandbox<T> {
    fn clone(&self) -> Self {
        Sandbox {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for Sandbox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sandbox")
            .field("limits", &self.inner.limits)
            .field("allow", &self.inner.config.allow)
            .field("capabilities", &self.inner.registry.capabilities)
            .field("determinism", &self.inner.determinism)
            .finish_non_exhaustive()
    }
}

impl Sandbox<()> {
    /// A builder for a sandbox without a session context. For a context
    /// type, use [`SandboxBuilder::new`].
    pub fn builder() -> SandboxBuilder<()> {
        SandboxBuilder::new()
    }
}

impl<T: Send + Sync + 'static> Sandbox<T> {
    pub(crate) fn inner(&self) -> &Inner<T> {
        &self.inner
    }

    /// The limits every eval runs under.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The capabilities offered to scripts.
    pub fn capabilities(&self) -> &[Capability<T>] {
        &self.inner.registry.capabilities
    }

    /// The sandboxed names this sandbox allows back.
    pub fn allowed(&self) -> &[String] {
        &self.inner.config.allow
    }

    /// The names of the modules `require` can load.
    pub fn modules(&self) -> Vec<&str> {
        self.inner
            .config
            .modules
            .iter()
            .map(|m| m.name.as_str())
            .collect()
    }

    /// Starts a session with its own Lua state and context. Globals persist
    /// between its evals.
    ///
    /// # Errors
    /// [`Error::Session`] if the instance cannot start (for instance when
    /// the process is out of memory).
    ///
    /// # Cancel safety
    /// Dropping the future loses only the half-made session.
    pub async fn session(&self, ctx: T) -> Result<Session<T>, Error> {
        Session::start(self.clone(), Some(Arc::new(ctx)))
            .await
            .map_err(|e| Error::Session(e.message))
    }

    /// Runs `code` in a fresh, isolated instance with the given context,
    /// then discards the instance.
    ///
    /// # Errors
    /// The script's failure as an [`EvalError`].
    ///
    /// # Cancel safety
    /// Dropping the future discards the instance; nothing else is affected.
    pub async fn eval_with(&self, ctx: T, code: impl AsRef<[u8]>) -> Result<EvalOutput, EvalError> {
        let mut session = Session::start(self.clone(), Some(Arc::new(ctx))).await?;
        session.eval(code).await
    }

    /// Checks that `code` compiles, without running it: exactly what an
    /// eval under this sandbox's limits would compile, so the two agree
    /// (a string literal past `max_string_bytes` fails both).
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let sandbox = moonbox::Sandbox::builder().build()?;
    /// let err = sandbox.check("return (", "tool.lua").await.unwrap_err();
    /// assert_eq!(err.kind, moonbox::ErrorKind::Syntax);
    /// assert_eq!(err.message, "tool.lua:1: unexpected symbol near <eof>");
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    /// A [`ErrorKind::Syntax`](crate::ErrorKind::Syntax) error for code that
    /// does not parse, or the limit ([`ErrorKind::StringSize`](crate::ErrorKind::StringSize),
    /// [`ErrorKind::MemoryLimit`](crate::ErrorKind::MemoryLimit)) that refused it.
    ///
    /// # Cancel safety
    /// Dropping the future discards a throw-away instance.
    pub async fn check(&self, code: impl AsRef<[u8]>, chunk_name: &str) -> Result<(), EvalError> {
        let mut session = Session::start(self.clone(), None).await?;
        session.check(code.as_ref(), chunk_name).await
    }

    /// Starts one session to prove the configuration, reporting the guest's
    /// refusal as a configuration error.
    fn probe(&self) -> Result<(), Error> {
        let sandbox = self.clone();
        let run = async move { Session::start(sandbox, None).await.map(drop) };
        let result = match tokio::runtime::Handle::try_current() {
            // `build` is synchronous; inside a runtime, validate on a
            // separate thread rather than block the caller's executor.
            Ok(_) => std::thread::scope(|s| {
                s.spawn(|| block_on(run)).join().unwrap_or_else(|_| {
                    Err(crate::session::internal("validating the sandbox panicked"))
                })
            }),
            Err(_) => block_on(run),
        };
        result.map_err(|e| match e.kind {
            crate::ErrorKind::Internal if e.message.starts_with(crate::session::CONFIG_REFUSED) => {
                Error::Config(e.message[crate::session::CONFIG_REFUSED.len()..].to_owned())
            }
            _ => Error::Session(e.message),
        })
    }
}

impl<T: Default + Send + Sync + 'static> Sandbox<T> {
    /// Runs `code` in a fresh, isolated instance (with `T::default()` as the
    /// context), then discards the instance. The chunk is named
    /// [`DEFAULT_CHUNK_NAME`].
    ///
    /// # Errors
    /// The script's failure as an [`EvalError`]: its kind says whether the
    /// script erred or a limit stopped it.
    ///
    /// # Cancel safety
    /// Dropping the future discards the instance; nothing else is affected.
    pub async fn eval(&self, code: impl AsRef<[u8]>) -> Result<EvalOutput, EvalError> {
        self.eval_with(T::default(), code).await
    }
}

/// Runs a session start to completion on a private current-thread runtime.
/// Used only by `build`, which is synchronous.
fn block_on<F>(f: F) -> Result<(), EvalError>
where
    F: std::future::Future<Output = Result<(), EvalError>>,
{
    match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(rt) => rt.block_on(f),
        Err(e) => Err(crate::session::internal(format!(
            "cannot start a runtime to validate the sandbox: {e}"
        ))),
    }
}
