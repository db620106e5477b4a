//! The embedded guest component, the process-wide engine, and the on-disk
//! cache of precompiled code.
//!
//! Compiling the component with Cranelift takes a few hundred milliseconds;
//! loading precompiled code takes about one. The component is therefore
//! compiled at most once per process (the first [`shared`] call), and its
//! precompiled form is cached on disk, keyed by the engine's compatibility
//! hash and a hash of the component bytes, so later processes skip Cranelift.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use crate::error::Error;

/// The guest component, built from `guest/` and committed.
pub(crate) const COMPONENT: &[u8] = include_bytes!("../component/moonbox.wasm");

/// How often the engine's epoch advances: the granularity of timeouts and of
/// yields to the async runtime.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The most native stack wasm code may use; deeper recursion traps and is
/// reported as a call-depth error.
pub(crate) const MAX_WASM_STACK: usize = 1 << 20;

/// The engine and compiled component every `Sandbox` in the process shares.
pub(crate) struct Shared {
    pub(crate) engine: Engine,
    pub(crate) component: Component,
}

/// The engine once it has been built. A failed build is not remembered:
/// the next sandbox tries again and reports its own error.
static SHARED: Mutex<Option<Arc<Shared>>> = Mutex::new(None);

/// Engine settings chosen by the first sandbox of the process.
#[derive(Clone, Debug, Default)]
pub(crate) struct EngineOptions {
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) pooling: bool,
}

/// Returns the process-wide engine and component, compiling (or loading from
/// the cache) on first use. The options of the first call win.
pub(crate) fn shared(options: &EngineOptions) -> Result<Arc<Shared>, Error> {
    let mut shared = SHARED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(existing) = &*shared {
        return Ok(existing.clone());
    }
    let built = Arc::new(load(options).map_err(Error::Engine)?);
    *shared = Some(built.clone());
    Ok(built)
}

fn engine(pooling: bool) -> Result<Engine, String> {
    let mut config = Config::new();
    config
        .consume_fuel(true)
        .epoch_interruption(true)
        .wasm_exceptions(true)
        .max_wasm_stack(MAX_WASM_STACK);
    if pooling {
        config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(
            wasmtime::PoolingAllocationConfig::default(),
        ));
    }
    let engine = Engine::new(&config).map_err(|e| format!("cannot configure wasmtime: {e}"))?;
    start_ticker(&engine)?;
    Ok(engine)
}

/// One thread per engine advances the epoch; it stops when the engine is gone.
/// Without it no timeout could fire, so failing to start it is an error.
fn start_ticker(engine: &Engine) -> Result<(), String> {
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
        .map_err(|e| format!("cannot start the epoch thread that enforces timeouts: {e}"))
}

fn load(options: &EngineOptions) -> Result<Shared, String> {
    let engine = engine(options.pooling)?;
    let cache_dir = options.cache_dir.as_deref();
    let key = cache_key(&engine);
    if let Some(dir) = cache_dir {
        let path = dir.join(format!("moonbox-{key:016x}.cwasm"));
        if path.is_file() {
            // SAFETY: the file is ours: written by `store` below into a
            // directory created for this cache, and named by the hash of the
            // engine configuration and component. wasmtime still validates
            // its header; a file that fails to load is recompiled.
            if let Ok(component) = unsafe { Component::deserialize_file(&engine, &path) } {
                return Ok(Shared { engine, component });
            }
        }
        let bytes = engine
            .precompile_component(COMPONENT)
            .map_err(|e| format!("cannot compile the guest component: {e}"))?;
        store(dir, &path, &bytes);
        // SAFETY: `bytes` was produced just now by this engine.
        let component = unsafe { Component::deserialize(&engine, &bytes) }
            .map_err(|e| format!("cannot load the compiled guest component: {e}"))?;
        return Ok(Shared { engine, component });
    }
    let component = Component::new(&engine, COMPONENT)
        .map_err(|e| format!("cannot compile the guest component: {e}"))?;
    Ok(Shared { engine, component })
}

/// Writes the cache file atomically. Failures only cost the next process a
/// recompile, so they are ignored.
fn store(dir: &Path, path: &Path, bytes: &[u8]) {
    if create_private_dir(dir).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// FNV-1a over the engine's compatibility hash and the component bytes:
/// stable across processes and Rust versions.
fn cache_key(engine: &Engine) -> u64 {
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

/// The default cache directory: `$MOONBOX_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/moonbox`, else `$HOME/.cache/moonbox`.
pub(crate) fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MOONBOX_CACHE_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("moonbox"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|h| PathBuf::from(h).join(".cache").join("moonbox"))
}
