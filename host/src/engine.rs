//! [`Engine`]: wasmtime configured for the guest, with the guest compiled
//! for it, and the optional on-disk cache of that compiled code.
//!
//! Compiling the component with Cranelift takes a few hundred milliseconds;
//! loading precompiled code takes about one. An engine compiles the guest
//! once, and every sandbox built on it shares the result. With a cache
//! directory, the precompiled form is kept on disk, keyed by the engine's
//! compatibility hash and a hash of the component bytes, so later processes
//! skip Cranelift.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use wasmtime::component::Component;
use wasmtime::{Config, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::error::{Error, EvalError};

/// The guest component, built from `guest/` and committed.
pub(crate) const COMPONENT: &[u8] = include_bytes!("../component/moonbox.wasm");

/// How often the engine's epoch advances while a call into the guest runs:
/// the granularity of timeouts and of yields to the async runtime.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The most native stack wasm code may use; deeper recursion traps and is
/// reported as a call-depth error.
pub(crate) const MAX_WASM_STACK: usize = 1 << 20;

/// wasmtime, configured for the guest, with the guest compiled for it.
///
/// Every [`Sandbox`](crate::Sandbox) runs on an engine. Building one
/// compiles the guest (or loads it from the cache directory), which takes a
/// few hundred milliseconds, so build it once and share it: `Engine` is an
/// `Arc` inside, cheap to clone and `Send + Sync`. Sandboxes that need
/// different engine settings (say, one with the pooling allocator) use
/// different engines in the same process.
///
/// A sandbox built without [`SandboxBuilder::engine`](crate::SandboxBuilder::engine)
/// uses [`Engine::shared`] (default settings, built on first use), or
/// [`Engine::shared_metered`] when it needs fuel: in deterministic mode, or
/// with an explicit [`Limits::fuel`](crate::Limits::fuel).
///
/// Each engine has one thread of its own, `moonbox-epoch`, which enforces
/// timeouts. The engine's first call into the guest starts it; while any
/// call runs (a session starting, an eval, a check), it advances the
/// engine's epoch every 5 ms; while none does, it sleeps until one starts.
/// It ends when the engine is dropped.
///
/// ```
/// use moonbox::{Engine, Sandbox};
///
/// # fn main() -> Result<(), moonbox::Error> {
/// let engine = Engine::builder().pooling_allocator(true).build()?;
/// let fast = Sandbox::builder().engine(&engine).build()?;
/// let other = Sandbox::builder().engine(&engine).build()?;
/// # let _ = (fast, other); Ok(()) }
/// ```
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    engine: wasmtime::Engine,
    ticker: Arc<Ticker>,
    component: Component,
    pooling: bool,
    fuel: bool,
    cache_dir: Option<PathBuf>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.ticker.stop();
    }
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("pooling_allocator", &self.inner.pooling)
            .field("fuel", &self.inner.fuel)
            .field("cache_dir", &self.inner.cache_dir)
            .finish_non_exhaustive()
    }
}

/// What `MOONBOX_CACHE_DIR` says about the compiled-code cache: `None`
/// when it is unset, `Some(None)` when it is empty (caching turned off),
/// `Some(Some(dir))` when it names a directory. The one reading of the
/// variable, for the shared engines and [`Engine::default_cache_dir`].
fn cache_dir_from_env() -> Option<Option<PathBuf>> {
    std::env::var_os("MOONBOX_CACHE_DIR").map(|dir| (!dir.is_empty()).then(|| PathBuf::from(dir)))
}

/// The default engines once they have been built: without fuel, then with.
/// A failed build is not remembered: the next caller tries again and gets
/// its own error.
static SHARED: [Mutex<Option<Engine>>; 2] = [Mutex::new(None), Mutex::new(None)];

impl Engine {
    /// A builder for an engine with non-default settings.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// The process-wide engine with default settings (on-demand instance
    /// allocation, no fuel), built on first use and shared by every sandbox
    /// that names no engine and needs no fuel.
    ///
    /// It caches compiled code only when the `MOONBOX_CACHE_DIR`
    /// environment variable names a directory (with the checks of
    /// [`EngineBuilder::cache_dir`]); unset or empty, it compiles the guest
    /// in memory. That lets a deployment, or a test suite that starts many
    /// processes, compile the guest once rather than once per process,
    /// without a line of code. The library reads no other variable and
    /// never falls back to a directory of its own choosing.
    ///
    /// # Errors
    /// [`Error::Cache`] if `MOONBOX_CACHE_DIR` names a directory that
    /// cannot be created or is not private to the user; [`Error::Engine`] if
    /// wasmtime cannot be configured or the guest not compiled. A failure is
    /// not remembered: a later call tries again.
    pub fn shared() -> Result<Engine, Error> {
        Self::shared_with(false)
    }

    /// The process-wide engine that meters fuel (see
    /// [`EngineBuilder::fuel`]), otherwise like [`Engine::shared`] (the same
    /// cache directory included). Sandboxes
    /// in deterministic mode or with an explicit [`Limits::fuel`](crate::Limits::fuel)
    /// use it when they name no engine.
    ///
    /// # Errors
    /// As for [`Engine::shared`].
    pub fn shared_metered() -> Result<Engine, Error> {
        Self::shared_with(true)
    }

    fn shared_with(fuel: bool) -> Result<Engine, Error> {
        let mut shared = SHARED[usize::from(fuel)]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(existing) = &*shared {
            return Ok(existing.clone());
        }
        let mut builder = EngineBuilder::default().fuel(fuel);
        if let Some(dir) = cache_dir_from_env().flatten() {
            builder = builder.cache_dir(dir);
        }
        let built = builder.build()?;
        *shared = Some(built.clone());
        Ok(built)
    }

    /// Whether this engine meters wasmtime fuel (see [`EngineBuilder::fuel`]).
    pub fn meters_fuel(&self) -> bool {
        self.inner.fuel
    }

    /// Instances (sessions, and fresh evals while they run) an engine with
    /// the pooling allocator holds at once; past it, starting one fails.
    pub const POOL_INSTANCES: u32 = 1000;

    /// Whether this engine uses the pooling instance allocator.
    pub fn is_pooling(&self) -> bool {
        self.inner.pooling
    }

    /// The directory this engine caches compiled code in, if any.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.inner.cache_dir.as_deref()
    }

    /// The conventional cache directory for a program that wants one:
    /// `$MOONBOX_CACHE_DIR`, else `$XDG_CACHE_HOME/moonbox`, else
    /// `$HOME/.cache/moonbox` (the last two only when absolute). `None`
    /// when `MOONBOX_CACHE_DIR` is set but empty (caching turned off) or no
    /// variable gives a directory. The `moonbox`
    /// command uses it; the library never does unless asked (the shared
    /// engines follow `MOONBOX_CACHE_DIR` alone, see [`Engine::shared`]).
    ///
    /// ```
    /// # fn main() -> Result<(), moonbox::Error> {
    /// let mut builder = moonbox::Engine::builder();
    /// if let Some(dir) = moonbox::Engine::default_cache_dir() {
    ///     builder = builder.cache_dir(dir);
    /// }
    /// # let _ = builder; Ok(()) }
    /// ```
    pub fn default_cache_dir() -> Option<PathBuf> {
        if let Some(set) = cache_dir_from_env() {
            return set;
        }
        // The XDG specification ignores a relative XDG_CACHE_HOME.
        let absolute = |d: &std::ffi::OsString| Path::new(d).is_absolute();
        if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(absolute) {
            return Some(PathBuf::from(dir).join("moonbox"));
        }
        std::env::var_os("HOME")
            .filter(absolute)
            .map(|h| PathBuf::from(h).join(".cache").join("moonbox"))
    }

    /// Keeps the epoch advancing until the guard is dropped: hold it for
    /// every call into the guest.
    ///
    /// # Errors
    /// An internal error if the epoch thread, started by the engine's first
    /// call, cannot be started: the call fails rather than run without a
    /// timeout.
    pub(crate) fn ticking(&self) -> Result<Ticking, EvalError> {
        Ticking::new(&self.inner.ticker).map_err(|e| EvalError::internal(e.to_string()))
    }

    pub(crate) fn wasmtime(&self) -> &wasmtime::Engine {
        &self.inner.engine
    }

    pub(crate) fn component(&self) -> &Component {
        &self.inner.component
    }
}

/// Configures and builds an [`Engine`].
///
/// ```
/// # fn main() -> Result<(), moonbox::Error> {
/// let dir = std::env::temp_dir().join(format!("moonbox-doc-{}", std::process::id()));
/// let engine = moonbox::Engine::builder().cache_dir(&dir).build()?;
/// assert_eq!(engine.cache_dir(), Some(dir.as_path()));
/// # std::fs::remove_dir_all(&dir).ok(); Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct EngineBuilder {
    pooling: bool,
    fuel: bool,
    cache_dir: Option<PathBuf>,
}

impl EngineBuilder {
    /// Uses wasmtime's pooling instance allocator, which reserves instance
    /// slots up front instead of mapping memory per instance. It makes fresh
    /// evals faster (see BENCHMARKS.md) but caps how many instances can be
    /// live at once at [`Engine::POOL_INSTANCES`] (1,000); past it, starting a
    /// session fails. Default: off.
    pub fn pooling_allocator(mut self, enabled: bool) -> Self {
        self.pooling = enabled;
        self
    }

    /// Meters wasmtime fuel: the compiled guest counts the wasm instructions
    /// it runs, and each call into it stops at [`Limits::effective_fuel`](crate::Limits::effective_fuel)
    /// with [`ErrorKind::FuelExhausted`](crate::ErrorKind::FuelExhausted), at
    /// the same point on every run. The metering costs about a tenth of the
    /// guest's speed (BENCHMARKS.md), and without it the timeout still stops
    /// any work, inside a single C call included, by wall clock. Sandboxes in
    /// deterministic mode or with an explicit [`Limits::fuel`](crate::Limits::fuel)
    /// need it. Default: off.
    ///
    /// ```
    /// # fn main() -> Result<(), moonbox::Error> {
    /// let engine = moonbox::Engine::builder().fuel(true).build()?;
    /// assert!(engine.meters_fuel());
    /// let sandbox = moonbox::Sandbox::builder()
    ///     .engine(&engine)
    ///     .deterministic(moonbox::Determinism::default())
    ///     .build()?;
    /// # let _ = sandbox; Ok(()) }
    /// ```
    pub fn fuel(mut self, enabled: bool) -> Self {
        self.fuel = enabled;
        self
    }

    /// Caches compiled code in `dir` between processes, so that only the
    /// first process compiles the guest. The engine loads native code from
    /// it, so on Unix the directory is created (mode 0700) if missing, an
    /// existing one must be a real directory owned by the current user and
    /// writable by no one else, and only cache files of the same kind are
    /// loaded. Its parent directories must not let other users rename
    /// entries. Off Unix a cache directory is refused. Default: no cache.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// [`build`](Self::build) with the conventional cache directory of a
    /// program ([`Engine::default_cache_dir`]), as the `moonbox` command
    /// and the Python and Node packages build theirs, so that only the
    /// first process on a machine compiles the guest.
    ///
    /// A directory named by `MOONBOX_CACHE_DIR` that cannot be used is an
    /// error; the default one (under `XDG_CACHE_HOME` or `HOME`) is not,
    /// so that a read-only or foreign home still runs scripts: the engine
    /// is then built without a cache, and the [`Error::Cache`] that says
    /// why comes back beside it for the program to show as a warning.
    ///
    /// # Errors
    /// As for [`build`](Self::build).
    pub fn build_with_default_cache(self) -> Result<(Engine, Option<Error>), Error> {
        let Some(dir) = Engine::default_cache_dir() else {
            return Ok((self.build()?, None));
        };
        match self.clone().cache_dir(dir).build() {
            Ok(engine) => Ok((engine, None)),
            Err(e @ Error::Cache { .. }) if std::env::var_os("MOONBOX_CACHE_DIR").is_none() => {
                Ok((self.build()?, Some(e)))
            }
            Err(e) => Err(e),
        }
    }

    /// Configures wasmtime and compiles the guest (or loads it from the
    /// cache directory).
    ///
    /// # Errors
    /// [`Error::Cache`] if the cache directory cannot be created or is not
    /// private to the user; [`Error::Engine`] if wasmtime cannot be
    /// configured or the guest not compiled. A cache file that cannot be read
    /// or written is not an error: the guest is compiled instead.
    pub fn build(self) -> Result<Engine, Error> {
        if let Some(dir) = &self.cache_dir {
            private_dir(dir).map_err(|source| Error::Cache {
                path: dir.clone(),
                source,
            })?;
        }
        let (engine, ticker) = wasmtime_engine(self.pooling, self.fuel)?;
        let component = match &self.cache_dir {
            Some(dir) => cached_component(&engine, dir)?,
            None => Component::new(&engine, COMPONENT)
                .map_err(|e| Error::engine("compile the guest component", e))?,
        };
        Ok(Engine {
            inner: Arc::new(Inner {
                engine,
                ticker,
                component,
                pooling: self.pooling,
                fuel: self.fuel,
                cache_dir: self.cache_dir,
            }),
        })
    }
}

/// Bytes of each pooled linear memory kept mapped when its instance goes:
/// the guest's snapshot is 1.1 MiB, and a short eval's heap stays within
/// 2 MiB. Within them, the pages an instance wrote are copied back from the
/// snapshot (only those pages, where the kernel can list them:
/// `PAGEMAP_SCAN`, Linux 6.7) instead of being unmapped, so the next
/// instance in the slot takes no page faults on them. Beyond them, memory
/// is unmapped as usual.
pub(crate) const LINEAR_MEMORY_KEEP_RESIDENT: usize = 2 << 20;

/// The same for each pooled table (the guest's function tables).
pub(crate) const TABLE_KEEP_RESIDENT: usize = 64 << 10;

/// Core instances (and, at most, tables) one guest instance uses: the
/// component's core modules and their glue.
const CORE_INSTANCES_PER_GUEST: u32 = 4;

/// Linear memories one guest instance uses (the component defines two).
const MEMORIES_PER_GUEST: u32 = 2;

/// The pooling allocator's settings, chosen by measurement (BENCHMARKS.md:
/// "Instance memory"): slots keep their pages resident and are reset to
/// the snapshot's contents page by page.
pub(crate) fn pooling_config() -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::default();
    // The guest component instantiates several core modules, tables and
    // memories;
    // room for each of Engine::POOL_INSTANCES components at once (wasmtime's
    // defaults count 1,000 of each kind, which a third as many components
    // would use up).
    pool.total_component_instances(Engine::POOL_INSTANCES)
        .total_core_instances(Engine::POOL_INSTANCES * CORE_INSTANCES_PER_GUEST)
        .total_tables(Engine::POOL_INSTANCES * CORE_INSTANCES_PER_GUEST)
        .total_memories(Engine::POOL_INSTANCES * MEMORIES_PER_GUEST)
        .linear_memory_keep_resident(LINEAR_MEMORY_KEEP_RESIDENT)
        .table_keep_resident(TABLE_KEEP_RESIDENT)
        .pagemap_scan(wasmtime::Enabled::Auto);
    pool
}

/// wasmtime's configuration for the guest.
pub(crate) fn wasmtime_config(pooling: Option<PoolingAllocationConfig>, fuel: bool) -> Config {
    let mut config = Config::new();
    config
        .consume_fuel(fuel)
        .epoch_interruption(true)
        .wasm_exceptions(true)
        .max_wasm_stack(MAX_WASM_STACK);
    if let Some(pool) = pooling {
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

fn wasmtime_engine(pooling: bool, fuel: bool) -> Result<(wasmtime::Engine, Arc<Ticker>), Error> {
    let config = wasmtime_config(pooling.then(pooling_config), fuel);
    let engine =
        wasmtime::Engine::new(&config).map_err(|e| Error::engine("configure wasmtime", e))?;
    let ticker = Arc::new(Ticker::new(&engine));
    Ok((engine, ticker))
}

/// The epoch thread's state, shared by the engine and the thread. The
/// thread starts with the first call into the guest, not with the engine:
/// an engine that never runs the guest (a one-shot `check` of a syntax
/// error) never starts it, and a process maps and protects the compiled
/// guest before it has a second thread to tell of each change.
pub(crate) struct Ticker {
    engine: wasmtime::EngineWeak,
    state: Mutex<TickerState>,
    wake: Condvar,
}

#[derive(Default)]
struct TickerState {
    /// Calls into the guest running now ([`Ticking`] guards alive).
    running: usize,
    /// Whether the thread has been started.
    started: bool,
    /// Set when the engine is dropped: the thread ends.
    stopped: bool,
    /// Epochs the thread has advanced (for tests).
    ticks: u64,
}

impl Ticker {
    fn new(engine: &wasmtime::Engine) -> Self {
        Ticker {
            engine: engine.weak(),
            state: Mutex::default(),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, TickerState> {
        // The state is a few counters, consistent after any panic.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn stop(&self) {
        self.lock().stopped = true;
        self.wake.notify_all();
    }

    /// Waits while no call into the guest runs; `false` once the engine is
    /// gone.
    fn wait_for_work(&self) -> bool {
        let mut state = self.lock();
        while state.running == 0 && !state.stopped {
            state = self
                .wake
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        !state.stopped
    }
}

/// A running call into the guest, for which the epoch advances.
pub(crate) struct Ticking(Arc<Ticker>);

impl Ticking {
    /// Counts a call in, starting the epoch thread if this is the engine's
    /// first. Without the thread no timeout could fire, so failing to start
    /// it fails the call (and the next call tries again).
    fn new(ticker: &Arc<Ticker>) -> Result<Self, Error> {
        let first = {
            let mut state = ticker.lock();
            if !state.started {
                start_ticker(ticker)?;
                state.started = true;
            }
            state.running += 1;
            state.running == 1
        };
        if first {
            ticker.wake.notify_all();
        }
        Ok(Ticking(ticker.clone()))
    }
}

impl Drop for Ticking {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.running = state.running.saturating_sub(1);
    }
}

/// One thread per engine advances the epoch while a call into the guest
/// runs, and sleeps while none does; it stops when the engine is gone.
fn start_ticker(ticker: &Arc<Ticker>) -> Result<(), Error> {
    let shared = ticker.clone();
    std::thread::Builder::new()
        .name("moonbox-epoch".into())
        .spawn(move || {
            while shared.wait_for_work() {
                let Some(engine) = shared.engine.upgrade() else {
                    return;
                };
                engine.increment_epoch();
                drop(engine);
                shared.lock().ticks += 1;
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map_err(|e| Error::engine("start the epoch thread that enforces timeouts", e))?;
    Ok(())
}

/// The largest cache file read back: the compiled guest is a few MiB.
const MAX_CACHE_FILE_BYTES: u64 = 256 << 20;

/// Loads the compiled guest from `dir`, or compiles it and stores it there.
fn cached_component(engine: &wasmtime::Engine, dir: &Path) -> Result<Component, Error> {
    let path = dir.join(format!("moonbox-{:016x}.cwasm", cache_key(engine)));
    if is_private_file(&path) {
        // SAFETY: deserialising runs native code from the file, so it must
        // come from `store` below. `private_dir` checked that the directory
        // is this user's and writable by no one else, so no other user can
        // add, replace or rename a file in it between the check and the
        // load; `is_private_file` checked that the file itself is a regular
        // file of this user's that no one else can write, which rules out a
        // file left behind while the directory was shared. The name is the
        // hash of the engine configuration and the component, and wasmtime
        // still validates the header; a file that fails to load is
        // recompiled and replaced. wasmtime maps the file instead of copying
        // it, so a process loads only the code pages it runs.
        if let Ok(component) = unsafe { Component::deserialize_file(engine, &path) } {
            return Ok(component);
        }
    }
    let bytes = engine
        .precompile_component(COMPONENT)
        .map_err(|e| Error::engine("compile the guest component", e))?;
    store(&path, &bytes);
    prune(dir, &path);
    // SAFETY: `bytes` was produced just now by this engine.
    unsafe { Component::deserialize(engine, &bytes) }
        .map_err(|e| Error::engine("load the compiled guest component", e))
}

/// Whether a cache file is a regular file owned by this user, writable by
/// no one else and of a plausible size (checked on an open file, so a
/// symbolic link is followed, not judged by its own mode). Anything else
/// counts as missing, so it is recompiled and replaced. wasmtime then opens
/// the path again to map it: between the two opens only this user can
/// change the file, since `private_dir` made sure no one else can write to
/// the directory.
fn is_private_file(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !meta.is_file() || meta.len() > MAX_CACHE_FILE_BYTES {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if meta.uid() != rustix::process::geteuid().as_raw()
            || meta.permissions().mode() & 0o022 != 0
        {
            return false;
        }
    }
    true
}

/// The most compiled guests a cache directory keeps: one per engine
/// configuration and moonbox version in use, the newest first.
const MAX_CACHE_FILES: usize = 8;

/// How old a temporary file must be before [`prune`] deletes it: one left
/// by a process that died while writing, never one being written.
const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Deletes the oldest `moonbox-*.cwasm` files past [`MAX_CACHE_FILES`]
/// (never `keep`, the one just written), and temporary files that a killed
/// process left, so that upgrades and other engine settings do not grow the
/// directory without bound. Runs only after a compile; failures are
/// ignored, as for `store`.
fn prune(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.starts_with("moonbox-") {
            continue;
        }
        let Some(modified) = entry.metadata().ok().and_then(|m| m.modified().ok()) else {
            continue;
        };
        if name.ends_with(".cwasm") {
            files.push((modified, entry.path()));
        } else if name.contains(".tmp")
            && now.duration_since(modified).unwrap_or_default() > STALE_TEMPORARY
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut kept = usize::from(files.iter().any(|(_, path)| path == keep));
    for (_, path) in files {
        if path == keep {
            continue;
        }
        if kept < MAX_CACHE_FILES {
            kept += 1;
        } else {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Writes the cache file atomically: a new temporary file (mode 0600, a
/// name no other writer in this or another process uses), then a rename.
/// Failures only cost the next process a recompile, so they are ignored.
fn store(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let tmp = path.with_extension(format!(
        "tmp{}-{}",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&tmp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Creates `dir` (mode 0700) if it is missing, and refuses a directory that
/// someone else could write native code into: a symlink, one owned by
/// another user, or one writable by its group or by others. Parent
/// directories are not checked: like ssh's key files, the cache must not
/// sit under a directory that other users can rename entries in. Off Unix,
/// where these checks cannot be made, a cache directory is refused.
fn private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
        if std::fs::symlink_metadata(dir).is_err() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        let meta = std::fs::symlink_metadata(dir)?;
        let refuse = |why: &str| Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
        if meta.file_type().is_symlink() {
            return refuse("the cache directory is a symbolic link");
        }
        if !meta.is_dir() {
            return refuse("the cache path is not a directory");
        }
        if meta.uid() != rustix::process::geteuid().as_raw() {
            return refuse("the cache directory is owned by another user");
        }
        if meta.permissions().mode() & 0o022 != 0 {
            return refuse(
                "the cache directory is writable by other users (make it 0700; files others left in it are not loaded)",
            );
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "a compiled-code cache is supported on Unix only, where its privacy can be checked",
        ))
    }
}

/// The cache key: the engine's compatibility hash and [`COMPONENT_HASH`],
/// stable across processes and Rust versions.
fn cache_key(engine: &wasmtime::Engine) -> u64 {
    let mut h = Fnv(COMPONENT_HASH);
    engine.precompile_compatibility_hash().hash(&mut h);
    h.finish()
}

/// FNV-1a, for the cache key.
struct Fnv(u64);

const FNV_PRIME: u64 = 0x0100_0000_01b3;

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }
}

/// A hash of the component (see `build.rs`), computed when the crate is
/// compiled rather than in every process that loads the cache.
const COMPONENT_HASH: u64 = match u64::from_str_radix(env!("MOONBOX_COMPONENT_HASH"), 16) {
    Ok(hash) => hash,
    Err(_) => panic!("build.rs sets MOONBOX_COMPONENT_HASH to 16 hex digits"),
};

#[cfg(all(test, unix))]
mod tests {
    /// A core module with a one-page memory whose image starts with
    /// `IMAGE`, and `write(addr, byte)`, `read(addr) -> byte` and
    /// `grow(pages) -> old`.
    const PROBE: &[u8] = &[
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
        0x01, 0x0b, 0x02, // types: 2
        0x60, 0x02, 0x7f, 0x7f, 0x00, // (i32, i32) -> ()
        0x60, 0x01, 0x7f, 0x01, 0x7f, // (i32) -> i32
        0x03, 0x04, 0x03, 0x00, 0x01, 0x01, // functions: write, read, grow
        0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1 page
        0x07, 0x17, 0x03, // exports: 3
        0x05, b'w', b'r', b'i', b't', b'e', 0x00, 0x00, //
        0x04, b'r', b'e', b'a', b'd', 0x00, 0x01, //
        0x04, b'g', b'r', b'o', b'w', 0x00, 0x02, //
        0x0a, 0x1a, 0x03, // code: 3 bodies
        0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x3a, 0x00, 0x00, 0x0b, // i32.store8
        0x07, 0x00, 0x20, 0x00, 0x2d, 0x00, 0x00, 0x0b, // i32.load8_u
        0x06, 0x00, 0x20, 0x00, 0x40, 0x00, 0x0b, // memory.grow
        0x0b, 0x0b, 0x01, 0x00, 0x41, 0x00, 0x0b, 0x05, // data at 0: 5 bytes
        b'I', b'M', b'A', b'G', b'E',
    ];

    /// The pooling allocator as `pooling_config` sets it up, with a single
    /// slot, so that every instance reuses the one before it.
    fn one_slot_engine() -> wasmtime::Engine {
        let mut pool = super::pooling_config();
        pool.total_memories(1)
            .total_core_instances(1)
            .total_tables(1)
            .max_memory_size(1 << 30);
        wasmtime::Engine::new(&super::wasmtime_config(Some(pool), true)).expect("engine")
    }

    /// Addresses written with a secret: in the image, elsewhere in the
    /// first page, across the resident part, and past it in grown memory.
    const SECRET_AT: &[u32] = &[
        0,
        4,
        100,
        65_535,
        65_536,
        1 << 20,
        (super::LINEAR_MEMORY_KEEP_RESIDENT as u32) - 1,
        super::LINEAR_MEMORY_KEEP_RESIDENT as u32,
        (4 << 20) - 1,
    ];

    #[test]
    fn a_pooled_slot_never_shows_the_previous_instance_s_memory() {
        let engine = one_slot_engine();
        let module = wasmtime::Module::new(&engine, PROBE).expect("module");
        for round in 0..3 {
            let mut store = wasmtime::Store::new(&engine, ());
            store.set_fuel(u64::MAX).expect("fuel");
            store.set_epoch_deadline(u64::MAX);
            let instance =
                wasmtime::Instance::new(&mut store, &module, &[]).expect("the slot is free again");
            let write = instance
                .get_typed_func::<(u32, u32), ()>(&mut store, "write")
                .expect("write");
            let read = instance
                .get_typed_func::<u32, u32>(&mut store, "read")
                .expect("read");
            let grow = instance
                .get_typed_func::<u32, i32>(&mut store, "grow")
                .expect("grow");
            assert_eq!(grow.call(&mut store, 63).expect("grow"), 1);
            // What this instance sees before writing anything: the image and
            // zeros, whatever the instance before it in this slot wrote.
            for (i, &addr) in SECRET_AT.iter().enumerate() {
                let expected = match addr {
                    0..5 => u32::from(b"IMAGE"[addr as usize]),
                    _ => 0,
                };
                let seen = read.call(&mut store, addr).expect("read");
                assert_eq!(
                    seen, expected,
                    "round {round}: address {addr} holds {seen}, left by an earlier instance"
                );
                write
                    .call(&mut store, (addr, 0xA0 + i as u32))
                    .expect("write");
            }
            drop(store);
        }
    }

    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("moonbox-engine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_epoch_advances_only_while_a_call_runs() {
        let engine = wasmtime::Engine::new(&super::wasmtime_config(None, false)).expect("engine");
        let ticker = Arc::new(super::Ticker::new(&engine));
        let ticks = || ticker.lock().ticks;
        let pause = || std::thread::sleep(super::EPOCH_TICK * 6);
        assert!(!ticker.lock().started, "no thread before the first call");
        drop(super::Ticking::new(&ticker).expect("ticking"));
        assert!(ticker.lock().started, "the first call starts the thread");
        pause();
        let idle = ticks();
        pause();
        assert_eq!(ticks(), idle, "an idle engine's thread sleeps");
        let running = super::Ticking::new(&ticker).expect("ticking");
        pause();
        let during = ticks();
        assert!(during >= 2, "{during} ticks while a call ran");
        drop(running);
        pause();
        let after = ticks();
        pause();
        assert_eq!(ticks(), after, "the thread sleeps again once no call runs");
        ticker.stop();
    }

    #[test]
    fn pruning_keeps_the_newest_compiled_guests_and_drops_stale_temporaries() {
        let dir = scratch("prune");
        std::fs::create_dir_all(&dir).unwrap();
        let now = std::time::SystemTime::now();
        let aged = |name: &str, age_secs: u64| {
            let path = dir.join(name);
            let file = std::fs::File::create(&path).unwrap();
            file.set_modified(now - std::time::Duration::from_secs(age_secs))
                .unwrap();
            path
        };
        // Twelve compiled guests, a minute apart; the one just written is
        // the oldest by its clock, and must survive anyway.
        let cached: Vec<PathBuf> = (0..12)
            .map(|i| aged(&format!("moonbox-{i:016x}.cwasm"), 60 * (i + 1)))
            .collect();
        let keep = cached[11].clone();
        let stale = aged("moonbox-1.tmp42-0", 2 * 3600);
        let writing = aged("moonbox-2.tmp43-0", 1);
        let other = aged("notes.txt", 10 * 3600);
        super::prune(&dir, &keep);
        let left: Vec<bool> = cached.iter().map(|p| p.exists()).collect();
        let mut expected = vec![true; super::MAX_CACHE_FILES - 1];
        expected.resize(11, false);
        expected.push(true);
        assert_eq!(left, expected, "the seven newest and the one just written");
        assert!(!stale.exists(), "a temporary file a killed process left");
        assert!(writing.exists(), "a temporary file being written");
        assert!(other.exists(), "a file that is not the cache's");
        // When the file just written is among the newest, eight are kept.
        let more: Vec<PathBuf> = (0..4)
            .map(|i| aged(&format!("moonbox-{:016x}.cwasm", 100 + i), i + 1))
            .collect();
        super::prune(&dir, &more[0]);
        let count = std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".cwasm")
            })
            .count();
        assert_eq!(count, super::MAX_CACHE_FILES);
        assert!(more.iter().all(|p| p.exists()), "the four newest stay");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_cache_dir_is_created_private() {
        let dir = scratch("create").join("nested");
        private_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_cache_dir_others_can_write_is_refused() {
        let dir = scratch("shared");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = private_dir(&dir).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert!(err.to_string().contains("writable by other users"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlinked_cache_dir_or_a_file_is_refused() {
        let dir = scratch("link");
        std::fs::create_dir(&dir).unwrap();
        let target = dir.join("target");
        std::fs::create_dir(&target).unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(
            private_dir(&link)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        let file = dir.join("file");
        std::fs::write(&file, b"").unwrap();
        assert!(
            private_dir(&file)
                .unwrap_err()
                .to_string()
                .contains("not a directory")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
