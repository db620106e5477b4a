//! [`Sandbox`]: the compiled guest plus a configuration, cheap to clone and
//! share; and its builder.

use std::fmt;
use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker};

use crate::bindings::{GuestPre, types};
use crate::capability::{Capability, MAX_CAPABILITY_ARGS};
use crate::config::Determinism;
use crate::engine::Engine;
use crate::error::{ConfigError, Error, EvalError};
use crate::governance::{Approver, Governance, MAX_CALL_BUDGET};
use crate::host::{HostState, Registry};
use crate::limits::Limits;
use crate::outcome::EvalOutput;
use crate::prepared::Prepared;
use crate::script::Script;
use crate::session::{Session, StartError};

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
    engine: Option<Engine>,
    governance: Governance,
    budgets: Vec<(String, u32)>,
    discovery: bool,
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
            .field("engine", &self.engine)
            .field("governance", &self.governance)
            .field("budgets", &self.budgets)
            .field("discovery", &self.discovery)
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
            engine: None,
            governance: Governance::default(),
            budgets: Vec::new(),
            discovery: false,
        }
    }

    /// Sets every limit. Default: [`Limits::default`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Allows a sandboxed name back, such as `os.execute`, `io.popen`,
    /// `debug` or `binary-chunks` (see docs/wit.md for the list). Allowing a
    /// name does not grant the host resource behind it: the guest still has
    /// no files, environment or network. Default: nothing allowed.
    pub fn allow(mut self, name: impl Into<String>) -> Self {
        self.allow.push(name.into());
        self
    }

    /// Makes `require(name)` load `source` (Lua source, text or any bytes).
    /// The name may not be a standard library's (`string`, `table`...)
    /// or `json`, which every script has:
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

    /// Lets scripts find the capabilities from Lua, for a sandbox with more
    /// of them than a model's tool description should list (an MCP code
    /// mode over large servers): adds `catalog.search(words)`, the best
    /// matches as `{name, summary}`, and `catalog.describe(name)`, one
    /// capability's signature, description and schemas. Then
    /// [`tool::description`](crate::tool::description) lists the
    /// capabilities one a line only while the list fits in
    /// [`catalog::LISTING_BYTES`](crate::catalog::LISTING_BYTES), and past
    /// it their namespaces and counts, with how to find them. Default: off.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use moonbox::{Capability, CapabilityError, Sandbox};
    /// let mut builder = Sandbox::builder().discovery(true);
    /// for i in 0..200 {
    ///     let add = Capability::sync(format!("math.add{i}"), move |_, (x,): (i64,)| {
    ///         Ok::<_, CapabilityError>(x + i)
    ///     })
    ///     .with_description(format!("Adds {i} to a number."));
    ///     builder = builder.capability(add);
    /// }
    /// let sandbox = builder.build()?;
    /// assert!(moonbox::tool::description(&sandbox).len() < 4096);
    /// let out = sandbox
    ///     .eval("local found = catalog.search('adds 42') return found[1].name, math.add42(1)")
    ///     .await?;
    /// assert_eq!(out.values, [serde_json::json!("math.add42"), serde_json::json!(43)]);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn discovery(mut self, on: bool) -> Self {
        self.discovery = on;
        self
    }

    /// Sets how many times one eval may call each capability that sets no
    /// budget of its own ([`Capability::call_budget`]). Each capability
    /// counts its own calls; counters restart at every eval. A call past
    /// the budget does not run: the script gets a capability error it can
    /// catch, naming the capability and the budget. At most
    /// [`Limits::MAX_CALL_BUDGET`](crate::Limits::MAX_CALL_BUDGET). Default: unlimited.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use moonbox::{CallOutcome, Capability, CapabilityError, Sandbox};
    ///
    /// let sandbox = Sandbox::builder()
    ///     .capability(Capability::sync("kv.get", |_ctx, (k,): (String,)| {
    ///         Ok::<_, CapabilityError>(k.len())
    ///     }))
    ///     .call_budget(2)
    ///     .build()?;
    /// let out = sandbox
    ///     .eval("local n = 0 for i = 1, 5 do if pcall(kv.get, 'k') then n = n + 1 end end return n")
    ///     .await?;
    /// assert_eq!(out.values, [serde_json::json!(2)]);
    /// assert_eq!(out.calls[2].outcome, CallOutcome::OverBudget);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    pub fn call_budget(mut self, calls: u32) -> Self {
        self.governance.default_budget = Some(calls);
        self
    }

    /// Sets the call budget of the capability named `name`, as
    /// [`Capability::call_budget`] does, for a capability added by other
    /// code (the command line's `--call-budget NAME=N`). It wins over the
    /// capability's own. [`build`](Self::build) refuses a name that no
    /// capability has.
    pub fn call_budget_for(mut self, name: impl Into<String>, calls: u32) -> Self {
        self.budgets.push((name.into(), calls));
        self
    }

    /// Keeps each call's arguments, as JSON, in its [`CallRecord`](crate::CallRecord)
    /// (up to [`Limits::MAX_RECORDED_ARG_BYTES`](crate::Limits::MAX_RECORDED_ARG_BYTES) per
    /// call). Arguments are what the script chose to send, so they may
    /// carry what it read from other capabilities: opt in only where the
    /// records are kept as carefully as the data. Default: off (sizes,
    /// durations and outcomes only).
    pub fn audit_args(mut self, keep: bool) -> Self {
        self.governance.audit_args = keep;
        self
    }

    /// Decides calls to capabilities that
    /// [require approval](Capability::require_approval). See [`Approver`].
    /// Default: none, and then a sandbox with such a capability does not
    /// build.
    pub fn approver(mut self, approver: Approver) -> Self {
        self.governance.approver = Some(approver);
        self
    }

    /// Turns on deterministic mode. Default: off (real clocks, random seed).
    /// It needs fuel metered: without an explicit [`engine`](Self::engine)
    /// the sandbox runs on [`Engine::shared_metered`], and an explicit one
    /// must meter fuel ([`EngineBuilder::fuel`](crate::EngineBuilder::fuel)).
    pub fn deterministic(mut self, determinism: Determinism) -> Self {
        self.determinism = Some(determinism);
        self
    }

    /// Runs the sandbox on `engine` (see [`Engine`] for when to share one
    /// and when to build another). Default: [`Engine::shared`], or
    /// [`Engine::shared_metered`] in deterministic mode or with an explicit
    /// [`Limits::fuel`].
    pub fn engine(mut self, engine: &Engine) -> Self {
        self.engine = Some(engine.clone());
        self
    }

    /// Validates the configuration and prepares the sandbox, blocking the
    /// calling thread until it is ready.
    ///
    /// Without an explicit [`engine`](Self::engine), the first sandbox of
    /// the process builds [`Engine::shared`] (or [`Engine::shared_metered`]),
    /// compiling the guest under a process-wide lock: a few hundred
    /// milliseconds, or about one with a cache directory. Later ones reuse
    /// it. `build` also starts one session to prove the configuration
    /// works, on a thread of its own when `build` is called inside a
    /// runtime, and waits for it. From async code, use
    /// [`build_async`](Self::build_async), which keeps that work off the
    /// runtime's workers, or [`build_with_session`](Self::build_with_session)
    /// to keep the session.
    ///
    /// # Errors
    /// [`Error::Config`] for invalid limits, an unknown `allow` name, a
    /// duplicate or malformed capability or module name, a module that does
    /// not compile, a limit too small to start a session, a call budget
    /// over [`Limits::MAX_CALL_BUDGET`](crate::Limits::MAX_CALL_BUDGET) or for a name no capability has, or a
    /// capability that needs approval in a sandbox without an approver, or
    /// an engine that does not meter fuel for a sandbox in deterministic
    /// mode or with an explicit [`Limits::fuel`];
    /// [`Error::Engine`] if wasmtime cannot start; [`Error::Session`] if
    /// the probe session fails for another reason.
    pub fn build(self) -> Result<Sandbox<T>, Error> {
        let sandbox = self.prepare()?;
        sandbox.probe()?;
        Ok(sandbox)
    }

    /// [`build`](Self::build) for async callers, which never blocks the
    /// runtime's worker: building the engine (compiling the guest, waiting
    /// for the process-wide lock another build holds) and linking it run on
    /// tokio's blocking pool ([`tokio::task::spawn_blocking`]), and the
    /// probe session runs on the caller's runtime like any eval. On a
    /// current-thread runtime with an [`engine`](Self::engine) given, where
    /// only linking is left (a fraction of a millisecond), it links in
    /// place instead of starting a pool thread to wait for.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let sandbox = moonbox::Sandbox::builder().build_async().await?;
    /// assert_eq!(sandbox.eval("return 1 + 1").await?.values, [serde_json::json!(2)]);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    /// As for [`build`](Self::build).
    ///
    /// # Panics
    /// Outside a tokio runtime, as [`tokio::task::spawn_blocking`] does.
    ///
    /// # Cancel safety
    /// Dropping the future drops the half-built sandbox; an engine being
    /// compiled on the blocking pool is finished and kept for later builds.
    pub async fn build_async(self) -> Result<Sandbox<T>, Error> {
        self.build_probed(None).await.map(|(sandbox, _)| sandbox)
    }

    /// Builds the sandbox and hands back the session that proved its
    /// configuration, with `ctx` as its context, instead of discarding it:
    /// for a caller that wants one session right away (a command-line run),
    /// this starts one instance instead of two.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let (sandbox, mut session) = moonbox::Sandbox::builder().build_with_session(()).await?;
    /// session.eval("n = 41").await?;
    /// assert_eq!(session.eval("return n + 1").await?.values, [serde_json::json!(42)]);
    /// # let _ = sandbox; Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// Like [`build_async`](Self::build_async), it does its blocking work
    /// on tokio's blocking pool.
    ///
    /// # Errors
    /// As for [`build`](Self::build).
    ///
    /// # Panics
    /// Outside a tokio runtime, as [`tokio::task::spawn_blocking`] does.
    ///
    /// # Cancel safety
    /// As for [`build_async`](Self::build_async).
    pub async fn build_with_session(self, ctx: T) -> Result<(Sandbox<T>, Session<T>), Error> {
        self.build_probed(Some(Arc::new(ctx))).await
    }

    /// Prepares the sandbox and starts the session that proves it, with
    /// `ctx` as its context (`None` for a throw-away probe).
    async fn build_probed(self, ctx: Option<Arc<T>>) -> Result<(Sandbox<T>, Session<T>), Error> {
        // Compiling the guest and waiting for the shared engine's lock block
        // for hundreds of milliseconds: never on the caller's worker. With
        // an engine given, only linking is left (a fraction of a
        // millisecond); on a current-thread runtime, whose one thread would
        // only wait for the pool's, it is done in place, and a one-shot
        // command starts no thread for it.
        let inline = self.engine.is_some()
            && tokio::runtime::Handle::current().runtime_flavor()
                == tokio::runtime::RuntimeFlavor::CurrentThread;
        let sandbox = if inline {
            self.prepare()?
        } else {
            match tokio::task::spawn_blocking(move || self.prepare()).await {
                Ok(prepared) => prepared?,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => return Err(Error::engine("prepare the sandbox", e)),
            }
        };
        let session = Session::start(sandbox.inner.clone(), ctx)
            .await
            .map_err(probe_error)?;
        Ok((sandbox, session))
    }

    /// Validates the configuration and links the guest, without starting a
    /// session.
    fn prepare(mut self) -> Result<Sandbox<T>, Error> {
        self.limits.validate().map_err(ConfigError::from)?;
        if self.discovery {
            let found = crate::catalog::capabilities(&self.capabilities);
            self.capabilities.extend(found);
        }
        self.govern()?;
        // Deterministic mode and an explicit fuel budget need fuel metered.
        let fuel = if self.determinism.is_some() {
            Some("deterministic mode")
        } else if self.limits.fuel.is_some() {
            Some("limit fuel")
        } else {
            None
        };
        let engine = match (self.engine, fuel) {
            (Some(engine), Some(why)) if !engine.meters_fuel() => {
                return Err(needs_fuel(why));
            }
            (Some(engine), _) => engine,
            (None, Some(_)) => Engine::shared_metered()?,
            (None, None) => Engine::shared()?,
        };
        let mut linker = Linker::<HostState<T>>::new(engine.wasmtime());
        crate::wasi::add_to_linker(&mut linker).map_err(|e| Error::engine("link WASI", e))?;
        crate::bindings::Guest::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
            .map_err(|e| Error::engine("link the host interfaces", e))?;
        let pre = linker
            .instantiate_pre(engine.component())
            .map_err(|e| Error::engine("prepare the guest", e))?;
        let pre = GuestPre::new(pre)
            .map_err(|e| Error::engine("match the guest's exports to the WIT contract", e))?;
        let config = types::Config {
            limits: guest_limits(&self.limits),
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
                })
                .collect(),
            deterministic: self.determinism.map(|d| types::Determinism {
                clock: d.clock,
                seed: d.seed,
            }),
        };
        let sandbox = Sandbox {
            inner: Arc::new(Prepared {
                engine,
                pre,
                registry: Arc::new(Registry {
                    capabilities: self.capabilities,
                    governance: Arc::new(self.governance),
                }),
                limits: self.limits,
                config,
                determinism: self.determinism,
                discovery: self.discovery,
            }),
        };
        Ok(sandbox)
    }
}

/// The limits the guest enforces, as the WIT contract carries them.
fn guest_limits(limits: &Limits) -> types::Limits {
    types::Limits {
        max_instructions: limits.max_instructions,
        max_call_depth: limits.max_call_depth,
        max_string_bytes: limits.max_string_bytes,
        max_memory_bytes: limits.max_memory_bytes,
        max_output_bytes: limits.max_output_bytes,
        max_value_depth: limits.max_value_depth,
    }
}

/// The error for a setting that needs fuel on an engine without it.
fn needs_fuel(setting: &'static str) -> Error {
    Error::Config(ConfigError::NeedsFuel { setting })
}

/// What a failed probe session means for `build`: the guest's refusal is a
/// configuration error, any other stop a session error.
fn probe_error(e: StartError) -> Error {
    match e {
        StartError::Refused(why) => Error::Config(ConfigError::Refused(why)),
        StartError::TooSmall(stop) => Error::Config(ConfigError::TooSmall(Box::new(stop))),
        StartError::Stopped(stop) => Error::Session(Box::new(stop)),
    }
}

impl<T> SandboxBuilder<T> {
    /// Applies the per-name budgets and checks the governance settings:
    /// bounded budgets, no budget for a missing capability, and no
    /// capability needing approval without an approver (fail closed).
    fn govern(&mut self) -> Result<(), Error> {
        let too_large = |capability: Option<String>, calls: u32| {
            Error::Config(ConfigError::CallBudgetTooLarge { capability, calls })
        };
        if let Some(calls) = self.governance.default_budget
            && calls > MAX_CALL_BUDGET
        {
            return Err(too_large(None, calls));
        }
        for (name, calls) in std::mem::take(&mut self.budgets) {
            let Some(cap) = self.capabilities.iter_mut().find(|c| c.name() == name) else {
                return Err(Error::Config(ConfigError::UnknownCapability {
                    name,
                    capabilities: self
                        .capabilities
                        .iter()
                        .map(|c| c.name().to_owned())
                        .collect(),
                }));
            };
            *cap = cap.clone().call_budget(calls);
        }
        for cap in &self.capabilities {
            let (min, max) = cap.arity();
            if min > max || max > MAX_CAPABILITY_ARGS {
                return Err(Error::Config(ConfigError::Arity {
                    capability: cap.name().to_owned(),
                    min,
                    max,
                }));
            }
            if let Some(calls) = cap.budget()
                && calls > MAX_CALL_BUDGET
            {
                return Err(too_large(Some(cap.name().to_owned()), calls));
            }
            if cap.needs_approval() && self.governance.approver.is_none() {
                return Err(Error::Config(ConfigError::NoApprover {
                    capability: cap.name().to_owned(),
                }));
            }
        }
        Ok(())
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
    inner: Arc<Prepared<T>>,
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
            .field("engine", &self.inner.engine)
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
    /// The engine this sandbox runs on.
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// The limits every eval runs under.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The same sandbox (engine, capabilities, modules, rules) under other
    /// limits. Cheap: the linked guest and the capabilities are shared, not
    /// rebuilt, and no session is started, so a server can give each
    /// request its own limits.
    ///
    /// Unlike [`SandboxBuilder::build`], nothing proves that a session can
    /// start under `limits`: a limit too small to start one fails the first
    /// eval or [`Sandbox::session`] instead, with a message that names it.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use moonbox::{ErrorKind, Limits, Sandbox};
    /// let sandbox = Sandbox::builder().build_async().await?;
    /// let tight = sandbox.with_limits(Limits { max_instructions: 1_000, ..*sandbox.limits() })?;
    /// let err = tight.eval("while true do end").await.unwrap_err();
    /// assert_eq!(err.kind, ErrorKind::InstructionLimit);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    /// [`Error::Config`] for limits that [`SandboxBuilder::build`] would
    /// refuse: out of bounds, or an explicit [`Limits::fuel`] on an engine
    /// that does not meter fuel.
    pub fn with_limits(&self, limits: Limits) -> Result<Sandbox<T>, Error> {
        limits.validate().map_err(ConfigError::from)?;
        if limits.fuel.is_some() && !self.inner.engine.meters_fuel() {
            return Err(needs_fuel("limit fuel"));
        }
        let inner = &*self.inner;
        let mut config = inner.config.clone();
        config.limits = guest_limits(&limits);
        Ok(Sandbox {
            inner: Arc::new(Prepared {
                engine: inner.engine.clone(),
                pre: inner.pre.clone(),
                registry: inner.registry.clone(),
                limits,
                config,
                determinism: inner.determinism,
                discovery: inner.discovery,
            }),
        })
    }

    /// The capabilities offered to scripts.
    pub fn capabilities(&self) -> &[Capability<T>] {
        &self.inner.registry.capabilities
    }

    /// The call budget per eval of `capability` (its own, else the
    /// sandbox's default), or `None` when its calls are not counted.
    ///
    /// ```
    /// use moonbox::{Capability, CapabilityError, Sandbox};
    /// # fn main() -> Result<(), moonbox::Error> {
    /// let ping = || Capability::sync("net.ping", |_, (): ()| Ok::<_, CapabilityError>(true));
    /// let sandbox = Sandbox::builder().capability(ping()).call_budget(5).build()?;
    /// assert_eq!(sandbox.call_budget(&sandbox.capabilities()[0]), Some(5));
    /// let own = Sandbox::builder().capability(ping().call_budget(2)).call_budget(5).build()?;
    /// assert_eq!(own.call_budget(&own.capabilities()[0]), Some(2));
    /// # Ok(()) }
    /// ```
    pub fn call_budget(&self, capability: &Capability<T>) -> Option<u32> {
        capability
            .budget()
            .or(self.inner.registry.governance.default_budget)
    }

    /// Whether scripts find the capabilities from Lua
    /// ([`SandboxBuilder::discovery`]).
    pub fn discovery(&self) -> bool {
        self.inner.discovery
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
    /// the pooling allocator's slots are all in use); its source is the
    /// [`EvalError`] with the kind that stopped it.
    ///
    /// # Cancel safety
    /// Dropping the future loses only the half-made session.
    pub async fn session(&self, ctx: T) -> Result<Session<T>, Error> {
        Session::start(self.inner.clone(), Some(Arc::new(ctx)))
            .await
            .map_err(|e| Error::Session(Box::new(e.into())))
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
        self.run_with(ctx, Script::new(code.as_ref())).await
    }

    /// Runs a [`Script`] (code, chunk name, inputs) in a fresh, isolated
    /// instance with the given context, then discards the instance.
    ///
    /// # Errors
    /// The script's failure as an [`EvalError`].
    ///
    /// # Cancel safety
    /// Dropping the future discards the instance; nothing else is affected.
    pub async fn run_with(&self, ctx: T, script: Script) -> Result<EvalOutput, EvalError> {
        let mut session = Session::start(self.inner.clone(), Some(Arc::new(ctx))).await?;
        session.run(script).await
    }

    /// Checks `code` without running it: compiles it exactly as an eval
    /// under this sandbox's limits would (a string literal past
    /// `max_string_bytes` fails both), then reads the compiled chunk for
    /// references this sandbox will refuse, returned as warnings in source
    /// order: sandboxed names not allowed back, `require` of a module the
    /// sandbox does not offer, a missing field of a capability namespace,
    /// and globals that are read, never assigned and nil in a fresh
    /// session. The rules and limits are in docs/wit.md (`check`); to check
    /// against a session's live state, use [`Session::check`].
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let sandbox = moonbox::Sandbox::builder().build()?;
    /// let err = sandbox.check("return (", "tool.lua").await.unwrap_err();
    /// assert_eq!(err.kind, moonbox::ErrorKind::Syntax);
    /// assert_eq!(err.message, "tool.lua:1: unexpected symbol near <eof>");
    ///
    /// let found = sandbox.check("local f = io.popen('ls')", "tool.lua").await?;
    /// assert_eq!(found[0].kind, moonbox::Finding::Sandboxed);
    /// assert_eq!((found[0].name.as_str(), found[0].line), ("io.popen", 1));
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
    pub async fn check(
        &self,
        code: impl AsRef<[u8]>,
        chunk_name: &str,
    ) -> Result<Vec<crate::Diagnostic>, EvalError> {
        let mut session = Session::start(self.inner.clone(), None).await?;
        session.check(code.as_ref(), chunk_name).await
    }

    /// Starts one session to prove the configuration: the guest's refusal
    /// is a configuration error, any other stop a session error.
    fn probe(&self) -> Result<(), Error> {
        let prepared = self.inner.clone();
        let run = async move { Session::start(prepared, None).await.map(drop) };
        let result = match tokio::runtime::Handle::try_current() {
            // `build` is synchronous; inside a runtime, validate on a
            // separate thread rather than block the caller's executor.
            Ok(_) => std::thread::scope(|s| {
                s.spawn(|| block_on(run)).join().unwrap_or_else(|_| {
                    Err(StartError::Stopped(EvalError::internal(
                        "validating the sandbox panicked",
                    )))
                })
            }),
            Err(_) => block_on(run),
        };
        result.map_err(probe_error)
    }
}

impl<T: Send + Sync + 'static> Session<T> {
    /// The sandbox this session belongs to.
    pub fn sandbox(&self) -> Sandbox<T> {
        Sandbox {
            inner: self.prepared().clone(),
        }
    }
}

/// Evals without a context, for a sandbox whose sessions carry none. A
/// sandbox with a context type gives one to every eval
/// ([`Sandbox::eval_with`], [`Sandbox::run_with`]): none is made up for it.
impl Sandbox<()> {
    /// Runs `code` in a fresh, isolated instance, then discards the
    /// instance. The chunk is named
    /// [`DEFAULT_CHUNK_NAME`](crate::DEFAULT_CHUNK_NAME).
    ///
    /// # Errors
    /// The script's failure as an [`EvalError`]: its kind says whether the
    /// script erred or a limit stopped it.
    ///
    /// # Cancel safety
    /// Dropping the future discards the instance; nothing else is affected.
    pub async fn eval(&self, code: impl AsRef<[u8]>) -> Result<EvalOutput, EvalError> {
        self.eval_with((), code).await
    }

    /// Runs a [`Script`] (code, chunk name, inputs) in a fresh, isolated
    /// instance.
    ///
    /// ```
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let sandbox = moonbox::Sandbox::builder().build()?;
    /// let script = moonbox::Script::new("return greeting .. ', ' .. user.name")
    ///     .input("greeting", "hello")
    ///     .input("user", serde_json::json!({"name": "Ada"}));
    /// let out = sandbox.run(script).await?;
    /// assert_eq!(out.values, [serde_json::json!("hello, Ada")]);
    /// # Ok(()) }
    /// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
    /// ```
    ///
    /// # Errors
    /// The script's failure as an [`EvalError`];
    /// [`ErrorKind::InvalidValue`](crate::ErrorKind::InvalidValue) for an
    /// input that cannot become a Lua global.
    ///
    /// # Cancel safety
    /// Dropping the future discards the instance; nothing else is affected.
    pub async fn run(&self, script: Script) -> Result<EvalOutput, EvalError> {
        self.run_with((), script).await
    }
}

/// Runs a session start to completion on a private current-thread runtime.
/// Used only by `build`, which is synchronous.
fn block_on<F>(f: F) -> Result<(), StartError>
where
    F: std::future::Future<Output = Result<(), StartError>>,
{
    match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(rt) => rt.block_on(f),
        Err(e) => Err(StartError::Stopped(EvalError::internal(format!(
            "cannot start a runtime to validate the sandbox: {e}"
        )))),
    }
}
