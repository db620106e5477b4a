"""The limits of one eval: the guest's own (the Lua VM) and the outer wall's."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from . import _contract
from .errors import ConfigError


def _default(name: str) -> int:
    default = _contract.LIMITS[name].default
    assert default is not None, name
    return default


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
    max_instructions: int = _default("max_instructions")
    #: Frames on the Lua stack.
    max_call_depth: int = _default("max_call_depth")
    #: Bytes in one string.
    max_string_bytes: int = _default("max_string_bytes")
    #: Bytes of Lua heap.
    max_memory_bytes: int = _default("max_memory_bytes")
    #: Bytes of output (``print``, ``io.write``, log events) per eval.
    max_output_bytes: int = _default("max_output_bytes")
    #: Nesting of values crossing the boundary (inputs, results, capability
    #: arguments and replies).
    max_value_depth: int = _default("max_value_depth")
    #: Wall-clock seconds per eval, capability calls included (the epoch
    #: deadline).
    timeout: float = _default("timeout") / 1000
    #: Wasmtime fuel per eval (about one unit per wasm instruction); 0
    #: derives it from ``max_instructions`` (500 per instruction, at least
    #: five billion), as the Rust crate does.
    fuel: int = 0
    #: Bytes the guest's linear memory may grow to; 0 means
    #: ``2 * max_memory_bytes + 16 MiB``.
    max_wasm_memory_bytes: int = 0

    #: Fuel derived per Lua instruction when ``fuel`` is 0.
    FUEL_PER_INSTRUCTION = _contract.FUEL_PER_INSTRUCTION
    #: The least fuel derived.
    DEFAULT_FUEL = _contract.DEFAULT_FUEL

    def __post_init__(self) -> None:
        # The bounds of wit/contract.toml; 0 leaves fuel and the linear
        # memory derived.
        for name, rule in _contract.LIMITS.items():
            if name == "timeout" or not hasattr(self, name):
                continue
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"limit {name} must be an integer, not {type(value).__name__}")
            if value == 0 and rule.default is None:
                continue
            if not rule.min <= value <= rule.max:
                raise ConfigError(f"limit {name} must be between {rule.min} and {rule.max}, not {value}")
        timeout = self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise ConfigError(f"limit timeout must be a number of seconds, not {type(timeout).__name__}")
        rule = _contract.LIMITS["timeout"]
        if not 0 < timeout <= rule.max / 1000:
            raise ConfigError(f"limit timeout must be more than 0 and at most {rule.max // 1000} seconds, not {timeout}")
        wasm = self.effective_max_wasm_memory_bytes
        if wasm < self.max_memory_bytes + _contract.WASM_MEMORY_HEADROOM_BYTES:
            raise ConfigError(
                f"limit max_wasm_memory_bytes ({wasm} bytes) must exceed max_memory_bytes "
                f"({self.max_memory_bytes} bytes) by at least {_contract.WASM_MEMORY_HEADROOM_BYTES >> 20} MiB"
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
        derived = self.max_instructions * self.FUEL_PER_INSTRUCTION
        return min(max(derived, self.DEFAULT_FUEL), _contract.LIMITS["fuel"].max)

    @property
    def effective_max_wasm_memory_bytes(self) -> int:
        """The cap on the guest's linear memory."""
        return self.max_wasm_memory_bytes or (
            _contract.WASM_MEMORY_FACTOR * self.max_memory_bytes + _contract.WASM_MEMORY_EXTRA_BYTES
        )
