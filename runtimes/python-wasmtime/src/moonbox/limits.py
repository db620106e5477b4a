"""The limits of one eval: the guest's own (the Lua VM) and the outer wall's."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from .errors import ConfigError

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """What one eval may use; the same limits, defaults and bounds as the
    Rust crate's ``moonbox::Limits``.

    The first six are enforced inside the guest, by the Lua VM: a script
    that reaches one stops with an error of that kind and its session stays
    usable. The last three are the outer wall, enforced by wasmtime around
    the guest: they stop work the VM cannot see (a long pattern match inside
    one C call, say), and a session they stop is poisoned.

    >>> from moonbox import Limits
    >>> Limits(timeout=2.0).max_instructions
    10000000
    >>> Limits(max_memory_bytes=0)
    Traceback (most recent call last):
      ...
    moonbox.errors.ConfigError: limit max_memory_bytes must be between 1048576 and 1073741824, not 0
    """

    #: Lua VM instructions per eval.
    max_instructions: int = 10_000_000
    #: Frames on the Lua stack.
    max_call_depth: int = 1_000
    #: Bytes in one string.
    max_string_bytes: int = 16 * MIB
    #: Bytes of Lua heap.
    max_memory_bytes: int = 64 * MIB
    #: Bytes of output (``print``, ``io.write``, log events) per eval.
    max_output_bytes: int = 1 * MIB
    #: Nesting of values crossing the boundary (inputs, results, capability
    #: arguments and replies).
    max_value_depth: int = 64
    #: Wall-clock seconds per eval, capability calls included (the epoch
    #: deadline).
    timeout: float = 5.0
    #: Wasmtime fuel per eval (about one unit per wasm instruction); 0
    #: derives it from ``max_instructions`` (500 per instruction, at least
    #: five billion), as the Rust crate does.
    fuel: int = 0
    #: Bytes the guest's linear memory may grow to; 0 means
    #: ``2 * max_memory_bytes + 16 MiB``.
    max_wasm_memory_bytes: int = 0

    #: Fuel derived per Lua instruction when ``fuel`` is 0.
    FUEL_PER_INSTRUCTION = 500
    #: The least fuel derived.
    DEFAULT_FUEL = 5_000_000_000

    def __post_init__(self) -> None:
        bounds = {
            "max_instructions": (1, 1_000_000_000_000),
            "max_call_depth": (1, 1_000_000),
            "max_string_bytes": (KIB, GIB),
            "max_memory_bytes": (MIB, GIB),
            "max_output_bytes": (1, GIB),
            "max_value_depth": (1, 100),
            "fuel": (0, 1 << 60),
            "max_wasm_memory_bytes": (0, 4 * GIB),
        }
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"limit {name} must be an integer, not {type(value).__name__}")
            if not low <= value <= high:
                raise ConfigError(f"limit {name} must be between {low} and {high}, not {value}")
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise ConfigError(f"limit timeout must be a number of seconds, not {type(timeout).__name__}")
        if not 0 < timeout <= 24 * 60 * 60:
            raise ConfigError(f"limit timeout must be more than 0 and at most 86400 seconds, not {timeout}")
        if 0 < self.max_wasm_memory_bytes < self.max_memory_bytes:
            raise ConfigError(
                "limit max_wasm_memory_bytes must be at least max_memory_bytes "
                f"({self.max_memory_bytes}), not {self.max_wasm_memory_bytes}"
            )

    def replace(self, **changes: Any) -> Limits:
        """A copy with some limits changed, checked as a new one is."""
        known = {f.name for f in fields(self)}
        for name in changes:
            if name not in known:
                raise ConfigError(f"unknown limit {name!r}; the limits are {', '.join(sorted(known))}")
        return replace(self, **changes)

    @property
    def effective_fuel(self) -> int:
        """The fuel each eval gets."""
        if self.fuel:
            return self.fuel
        return min(max(self.max_instructions * self.FUEL_PER_INSTRUCTION, self.DEFAULT_FUEL), 1 << 60)

    @property
    def effective_max_wasm_memory_bytes(self) -> int:
        """The cap on the guest's linear memory."""
        return self.max_wasm_memory_bytes or 2 * self.max_memory_bytes + 16 * MIB
