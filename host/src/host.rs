//! The store's host state: WASI that grants nothing, the memory limiter, and
//! capability dispatch for the guest's `capabilities.call` import.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{
    HostMonotonicClock, HostWallClock, ResourceTable, WasiCtx, WasiCtxView, WasiView,
};

use crate::bindings::moonbox::sandbox::capabilities;
use crate::capability::Capability;
use crate::sandbox::Determinism;

/// Bytes of guest stdout/stderr kept (the guest never writes there unless a
/// script is allowed `io.write`; the pipes only keep it from the host's own).
const STDIO_CAPACITY: usize = 64 << 10;

/// Capabilities by name, shared by every store of a sandbox.
pub(crate) struct Registry<T> {
    pub(crate) capabilities: Vec<Capability<T>>,
}

impl<T> Registry<T> {
    fn get(&self, name: &str) -> Option<&Capability<T>> {
        self.capabilities.iter().find(|c| c.name() == name)
    }
}

/// Everything one store holds on the host side.
pub(crate) struct HostState<T> {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: Limiter,
    registry: Arc<Registry<T>>,
    ctx: Option<Arc<T>>,
    /// When the current eval must stop; read by the epoch callback.
    pub(crate) deadline: Option<Instant>,
    /// Largest reply a capability may hand the guest, in bytes.
    max_reply_bytes: usize,
}

impl<T: Send + Sync + 'static> HostState<T> {
    pub(crate) fn new(
        registry: Arc<Registry<T>>,
        ctx: Option<Arc<T>>,
        wasm_memory: u64,
        max_reply_bytes: u64,
        determinism: Option<Determinism>,
    ) -> Self {
        let mut wasi = WasiCtx::builder();
        // Defaults already grant no preopens, environment, arguments, stdin
        // or network; the stdio pipes are bounded and never read back.
        wasi.stdout(MemoryOutputPipe::new(STDIO_CAPACITY))
            .stderr(MemoryOutputPipe::new(STDIO_CAPACITY))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        if let Some(d) = determinism {
            let seed = d.seed as u64;
            wasi.wall_clock(FixedClock(Duration::from_secs(
                u64::try_from(d.clock).unwrap_or(0),
            )))
            .monotonic_clock(FixedClock(Duration::ZERO))
            .secure_random(rand::rngs::StdRng::seed_from_u64(seed))
            .insecure_random(rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed))
            .insecure_random_seed(u128::from(seed));
        }
        HostState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limiter: Limiter::new(wasm_memory),
            registry,
            ctx,
            deadline: None,
            max_reply_bytes: usize::try_from(max_reply_bytes).unwrap_or(usize::MAX),
        }
    }
}

impl<T: Send + Sync + 'static> WasiView for HostState<T> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl<T> crate::bindings::types::Host for HostState<T> {}

impl<T: Send + Sync + 'static> capabilities::Host for HostState<T> {
    async fn call(&mut self, name: String, args: String) -> Result<String, String> {
        let Some(cap) = self.registry.get(&name) else {
            return Err(format!("{name}: no such capability"));
        };
        let values: Vec<serde_json::Value> = serde_json::from_str(&args)
            .map_err(|e| format!("{name}: malformed arguments from the guest ({e})"))?;
        let Some(ctx) = &self.ctx else {
            return Err(format!(
                "{name}: capabilities are unavailable in this instance"
            ));
        };
        let cap = cap.clone();
        let reply = cap
            .invoke(ctx, values)
            .await
            .map_err(|e| format!("{name}: {e}"))?;
        let text = serde_json::to_string(&reply)
            .map_err(|e| format!("{name}: cannot encode the result ({e})"))?;
        if text.len() > self.max_reply_bytes {
            return Err(format!(
                "{name}: the result is {} bytes of JSON, more than the sandbox's memory limit of {} bytes",
                text.len(),
                self.max_reply_bytes
            ));
        }
        Ok(text)
    }
}

/// Caps linear memory, tables and instances, and remembers a refusal so a
/// resulting trap can be reported as a memory limit.
pub(crate) struct Limiter {
    max_memory: usize,
    pub(crate) refused: bool,
}

impl Limiter {
    fn new(max_memory: u64) -> Self {
        Limiter {
            max_memory: usize::try_from(max_memory).unwrap_or(usize::MAX),
            refused: false,
        }
    }
}

/// Table elements the guest may have: ample for its function table.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= self.max_memory;
        self.refused |= !ok;
        Ok(ok)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = desired <= MAX_TABLE_ELEMENTS;
        self.refused |= !ok;
        Ok(ok)
    }

    fn instances(&self) -> usize {
        // The guest component is a handful of core instances (the program
        // and the WASI adapter pieces).
        32
    }

    fn tables(&self) -> usize {
        32
    }

    fn memories(&self) -> usize {
        8
    }
}

/// A clock that never moves, for deterministic mode.
struct FixedClock(Duration);

impl HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        self.0
    }
}

impl HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        u64::try_from(self.0.as_nanos()).unwrap_or(u64::MAX)
    }
}
