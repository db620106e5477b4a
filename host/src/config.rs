//! Settings shared by the sandbox, its sessions and the host state:
//! deterministic mode and the default chunk name.

use serde::{Deserialize, Serialize};

/// The chunk name evals use unless told otherwise: messages read
/// `main.lua:3: ...`.
pub const DEFAULT_CHUNK_NAME: &str = crate::contract::DEFAULT_CHUNK_NAME;

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
