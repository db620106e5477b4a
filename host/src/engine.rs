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
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::component::Component;
use wasmtime::{Config, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::error::Error;

/// The guest component, built from `guest/` and committed.
pub(crate) const COMPONENT: &[u8] = include_bytes!("../component/moonbox.wasm");

/// How often the engine's epoch advances: the granularity of timeouts and of
/// yields to the async runtime.
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
/// uses [`Engine::shared`]: default settings, built on first use.
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
    component: Component,
    pooling: bool,
    cache_dir: Option<PathBuf>,
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("pooling_allocator", &self.inner.pooling)
            .field("cache_dir", &self.inner.cache_dir)
            .finish_non_exhaustive()
    }
}

/// The default engine once it has been built. A failed build is not
/// remembered: the next caller tries again and gets its own error.
static SHARED: Mutex<Option<Engine>> = Mutex::new(None);

impl Engine {
    /// A builder for an engine with non-default settings.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// The process-wide engine with default settings (on-demand instance
    /// allocation, no cache directory), built on first use and shared by
    /// every sandbox that does not name its own engine.
    ///
    /// # Errors
    /// [`Error::Engine`] if wasmtime cannot be configured or the guest not
    /// compiled. A failure is not remembered: a later call tries again.
    pub fn shared() -> Result<Engine, Error> {
        let mut shared = SHARED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(existing) = &*shared {
            return Ok(existing.clone());
        }
        let built = EngineBuilder::default().build()?;
        *shared = Some(built.clone());
        Ok(built)
    }

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
    /// command uses it; the library never does unless asked.
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
        if let Some(dir) = std::env::var_os("MOONBOX_CACHE_DIR") {
            return (!dir.is_empty()).then(|| PathBuf::from(dir));
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
    cache_dir: Option<PathBuf>,
}

impl EngineBuilder {
    /// Uses wasmtime's pooling instance allocator, which reserves instance
    /// slots up front instead of mapping memory per instance. It makes fresh
    /// evals faster (see BENCHMARKS.md) but caps how many instances can be
    /// live at once at wasmtime's pool size (1,000); past it, starting a
    /// session fails. Default: off.
    pub fn pooling_allocator(mut self, enabled: bool) -> Self {
        self.pooling = enabled;
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
        let engine = wasmtime_engine(self.pooling)?;
        let component = match &self.cache_dir {
            Some(dir) => cached_component(&engine, dir)?,
            None => Component::new(&engine, COMPONENT)
                .map_err(|e| Error::engine("compile the guest component", e))?,
        };
        Ok(Engine {
            inner: Arc::new(Inner {
                engine,
                component,
                pooling: self.pooling,
                cache_dir: self.cache_dir,
            }),
        })
    }
}

fn wasmtime_engine(pooling: bool) -> Result<wasmtime::Engine, Error> {
    let mut config = Config::new();
    config
        .consume_fuel(true)
        .epoch_interruption(true)
        .wasm_exceptions(true)
        .max_wasm_stack(MAX_WASM_STACK);
    if pooling {
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(
            PoolingAllocationConfig::default(),
        ));
    }
    let engine =
        wasmtime::Engine::new(&config).map_err(|e| Error::engine("configure wasmtime", e))?;
    start_ticker(&engine)?;
    Ok(engine)
}

/// One thread per engine advances the epoch; it stops when the engine is gone.
/// Without it no timeout could fire, so failing to start it is an error.
fn start_ticker(engine: &wasmtime::Engine) -> Result<(), Error> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("moonbox-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .map(drop)
        .map_err(|e| Error::engine("start the epoch thread that enforces timeouts", e))
}

/// The largest cache file read back: the compiled guest is a few MiB.
const MAX_CACHE_FILE_BYTES: u64 = 256 << 20;

/// Loads the compiled guest from `dir`, or compiles it and stores it there.
fn cached_component(engine: &wasmtime::Engine, dir: &Path) -> Result<Component, Error> {
    let path = dir.join(format!("moonbox-{:016x}.cwasm", cache_key(engine)));
    if let Some(bytes) = read_private_file(&path) {
        // SAFETY: deserialising runs native code from `bytes`, so they must
        // come from `store` below. `private_dir` checked that the directory
        // is this user's and writable by no one else, so no other user can
        // add or replace a file in it; `read_private_file` checked that the
        // file itself is a regular file of this user's that no one else can
        // write, which rules out a file left behind while the directory was
        // shared. The name is the hash of the engine configuration and the
        // component, and wasmtime still validates the header; a file that
        // fails to load is recompiled and replaced.
        if let Ok(component) = unsafe { Component::deserialize(engine, &bytes) } {
            return Ok(component);
        }
    }
    let bytes = engine
        .precompile_component(COMPONENT)
        .map_err(|e| Error::engine("compile the guest component", e))?;
    store(&path, &bytes);
    // SAFETY: `bytes` was produced just now by this engine.
    unsafe { Component::deserialize(engine, &bytes) }
        .map_err(|e| Error::engine("load the compiled guest component", e))
}

/// Reads a cache file if it is a regular file owned by this user and
/// writable by no one else (checked on the open file, not the path).
/// Anything else reads as missing, so it is recompiled and replaced.
fn read_private_file(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_CACHE_FILE_BYTES {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if meta.uid() != rustix::process::geteuid().as_raw()
            || meta.permissions().mode() & 0o022 != 0
        {
            return None;
        }
    }
    let mut bytes = Vec::new();
    file.take(MAX_CACHE_FILE_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
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

/// FNV-1a over the engine's compatibility hash and the component bytes:
/// stable across processes and Rust versions.
fn cache_key(engine: &wasmtime::Engine) -> u64 {
    struct Fnv(u64);
    impl Hasher for Fnv {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for b in bytes {
                self.0 ^= u64::from(*b);
                self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    engine.precompile_compatibility_hash().hash(&mut h);
    h.write(COMPONENT);
    h.finish()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("moonbox-engine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
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
