//! Per-eval limits: the guest's deterministic ones and the host's outer wall.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The limits every eval runs under. Every limit is finite.
///
/// The first six are enforced inside the guest, deterministically: the same
/// script trips them at the same point on every run. The last three are the
/// host's outer wall, which also stops work the guest cannot see, such as a
/// pattern match backtracking inside one C call.
///
/// A tripped limit cannot be caught by `pcall`: the eval ends with the
/// limit's [`ErrorKind`](crate::ErrorKind).
///
/// ```
/// use std::time::Duration;
/// use moonbox::Limits;
///
/// let limits = Limits {
///     max_instructions: 1_000_000,
///     timeout: Duration::from_millis(500),
///     ..Limits::default()
/// };
/// assert_eq!(limits.memory, Limits::DEFAULT_MEMORY);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Lua VM instructions per eval, in every coroutine, checked every 1,000
    /// instructions on the main thread and every 100 in coroutines. Trips [`ErrorKind::InstructionLimit`](crate::ErrorKind::InstructionLimit).
    ///
    /// Default: [`Limits::DEFAULT_MAX_INSTRUCTIONS`].
    pub max_instructions: u64,
    /// Frames on one Lua stack, checked with the instruction count (a tight
    /// recursion may pass it by a few hundred frames before it stops). Trips
    /// [`ErrorKind::CallDepth`](crate::ErrorKind::CallDepth).
    ///
    /// Default: [`Limits::DEFAULT_MAX_CALL_DEPTH`].
    pub max_call_depth: u32,
    /// Bytes in one string, checked before the string is allocated. Trips
    /// [`ErrorKind::StringSize`](crate::ErrorKind::StringSize).
    ///
    /// Default: [`Limits::DEFAULT_MAX_STRING_BYTES`].
    pub max_string_bytes: u64,
    /// Bytes the Lua heap may hold. Trips
    /// [`ErrorKind::MemoryLimit`](crate::ErrorKind::MemoryLimit).
    ///
    /// Default: [`Limits::DEFAULT_MEMORY`].
    pub memory: u64,
    /// Bytes of `print` output per eval (each line counts its newline).
    /// Trips [`ErrorKind::OutputLimit`](crate::ErrorKind::OutputLimit).
    ///
    /// Default: [`Limits::DEFAULT_MAX_OUTPUT_BYTES`].
    pub max_output_bytes: u64,
    /// Nesting depth of a value crossing the JSON boundary (results and
    /// capability arguments). Deeper values are
    /// [`ErrorKind::InvalidValue`](crate::ErrorKind::InvalidValue) or a
    /// capability error.
    ///
    /// Default: [`Limits::DEFAULT_MAX_VALUE_DEPTH`].
    pub max_value_depth: u32,
    /// Wasmtime fuel per call into the guest (roughly one unit per wasm
    /// instruction): each eval gets this budget, and so does starting an
    /// instance. Trips
    /// [`ErrorKind::FuelExhausted`](crate::ErrorKind::FuelExhausted).
    ///
    /// Default: [`Limits::DEFAULT_FUEL`].
    pub fuel: u64,
    /// Wall-clock time per call into the guest, including time spent in
    /// capabilities; each eval gets this budget, and so does starting an
    /// instance. Trips [`ErrorKind::Timeout`](crate::ErrorKind::Timeout). Checked every
    /// few milliseconds.
    ///
    /// Default: [`Limits::DEFAULT_TIMEOUT`].
    #[serde(with = "duration_ms")]
    pub timeout: Duration,
    /// Bytes of wasm linear memory the instance may grow to: the Lua heap
    /// plus the guest's own buffers (JSON text, captured output). Trips
    /// [`ErrorKind::MemoryLimit`](crate::ErrorKind::MemoryLimit).
    ///
    /// Default: `2 * memory + 16 MiB` when left at zero.
    pub wasm_memory: u64,
}

impl Limits {
    /// Default [`Limits::max_instructions`]: ten million, about a tenth of
    /// a second of Lua.
    pub const DEFAULT_MAX_INSTRUCTIONS: u64 = 10_000_000;
    /// Default [`Limits::max_call_depth`].
    pub const DEFAULT_MAX_CALL_DEPTH: u32 = 1_000;
    /// Default [`Limits::max_string_bytes`]: 16 MiB.
    pub const DEFAULT_MAX_STRING_BYTES: u64 = 16 << 20;
    /// Default [`Limits::memory`]: 64 MiB.
    pub const DEFAULT_MEMORY: u64 = 64 << 20;
    /// Default [`Limits::max_output_bytes`]: 1 MiB.
    pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1 << 20;
    /// Default [`Limits::max_value_depth`].
    pub const DEFAULT_MAX_VALUE_DEPTH: u32 = 64;
    /// Default [`Limits::fuel`]: five billion, several seconds of wasm; the
    /// instruction limit trips long before for ordinary Lua.
    pub const DEFAULT_FUEL: u64 = 5_000_000_000;
    /// Default [`Limits::timeout`]: five seconds.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

    /// The effective [`Limits::wasm_memory`].
    pub fn effective_wasm_memory(&self) -> u64 {
        if self.wasm_memory == 0 {
            self.memory.saturating_mul(2).saturating_add(16 << 20)
        } else {
            self.wasm_memory
        }
    }

    /// Checks that every limit is usable: non-zero, and a linear memory large
    /// enough for the Lua heap.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let fields = [
            ("max_instructions", self.max_instructions),
            ("max_call_depth", u64::from(self.max_call_depth)),
            ("max_string_bytes", self.max_string_bytes),
            ("memory", self.memory),
            ("max_output_bytes", self.max_output_bytes),
            ("max_value_depth", u64::from(self.max_value_depth)),
            ("fuel", self.fuel),
        ];
        for (name, value) in fields {
            if value == 0 {
                return Err(format!("limit {name} must be greater than zero"));
            }
        }
        if self.timeout.is_zero() {
            return Err("limit timeout must be greater than zero".into());
        }
        if self.memory < 1 << 20 {
            return Err(format!(
                "limit memory must be at least 1 MiB, got {} bytes",
                self.memory
            ));
        }
        if self.effective_wasm_memory() < self.memory.saturating_add(4 << 20) {
            return Err(format!(
                "limit wasm_memory ({} bytes) must exceed memory ({} bytes) by at least 4 MiB",
                self.effective_wasm_memory(),
                self.memory
            ));
        }
        Ok(())
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_instructions: Self::DEFAULT_MAX_INSTRUCTIONS,
            max_call_depth: Self::DEFAULT_MAX_CALL_DEPTH,
            max_string_bytes: Self::DEFAULT_MAX_STRING_BYTES,
            memory: Self::DEFAULT_MEMORY,
            max_output_bytes: Self::DEFAULT_MAX_OUTPUT_BYTES,
            max_value_depth: Self::DEFAULT_MAX_VALUE_DEPTH,
            fuel: Self::DEFAULT_FUEL,
            timeout: Self::DEFAULT_TIMEOUT,
            wasm_memory: 0,
        }
    }
}

mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_finite_and_valid() {
        let limits = Limits::default();
        assert_eq!(limits.validate(), Ok(()));
        assert_eq!(
            limits.effective_wasm_memory(),
            2 * Limits::DEFAULT_MEMORY + (16 << 20)
        );
    }

    #[test]
    fn zero_limits_are_refused_by_name() {
        let limits = Limits {
            max_instructions: 0,
            ..Limits::default()
        };
        assert_eq!(
            limits.validate(),
            Err("limit max_instructions must be greater than zero".into())
        );
        let limits = Limits {
            timeout: Duration::ZERO,
            ..Limits::default()
        };
        assert_eq!(
            limits.validate(),
            Err("limit timeout must be greater than zero".into())
        );
    }

    #[test]
    fn linear_memory_must_hold_the_heap() {
        let limits = Limits {
            memory: 64 << 20,
            wasm_memory: 65 << 20,
            ..Limits::default()
        };
        assert!(
            limits
                .validate()
                .unwrap_err()
                .contains("must exceed memory")
        );
    }
}
