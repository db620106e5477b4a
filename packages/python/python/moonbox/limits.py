"""The limits of one eval: the guest's own (the Lua VM) and the outer wall's.

Defaults, bounds and derived values are the Rust crate's ``moonbox::Limits``:
this module names them for Python and converts the timeout to seconds."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from . import _native
from .errors import ConfigError

_DEFAULTS: dict[str, Any] = _native.default_limits()


@dataclass(frozen=True)
class Limits:
    """What one eval may use, checked by the crate's rules when made.

    The first six are enforced inside the guest, by the Lua VM: a script
    that reaches one stops with an error of that kind and its session stays
    usable. ``timeout``, ``fuel`` and ``max_wasm_memory_bytes`` are the
    outer wall, enforced by wasmtime around the guest: they stop work the VM
    cannot see (a long pattern match inside one C call, say), and a session
    they stop is poisoned.

    >>> from moonbox import Limits
    >>> Limits(timeout=2.0).max_instructions
    10000000
    >>> Limits(max_memory_bytes=0)
    Traceback (most recent call last):
      ...
    moonbox.errors.ConfigError: limit max_memory_bytes must be greater than zero
    """

    #: Lua VM instructions per eval.
    max_instructions: int = _DEFAULTS["max_instructions"]
    #: Frames on the Lua stack.
    max_call_depth: int = _DEFAULTS["max_call_depth"]
    #: Bytes in one string.
    max_string_bytes: int = _DEFAULTS["max_string_bytes"]
    #: Bytes of Lua heap.
    max_memory_bytes: int = _DEFAULTS["max_memory_bytes"]
    #: Bytes of output (``print``, ``io.write``, log events) per eval.
    max_output_bytes: int = _DEFAULTS["max_output_bytes"]
    #: Nesting of values crossing the boundary (inputs, results, capability
    #: arguments and replies).
    max_value_depth: int = _DEFAULTS["max_value_depth"]
    #: Wall-clock seconds per eval, capability calls included (the epoch
    #: deadline); kept to the millisecond.
    timeout: float = _DEFAULTS["timeout"] / 1000
    #: Wasmtime fuel per eval (about one unit per wasm instruction).
    #: ``None``, the default, meters no fuel (the timeout is the outer wall)
    #: and, where fuel is metered (deterministic mode), derives it from
    #: ``max_instructions``; a number turns metering on. ``0`` is read as
    #: ``None``.
    fuel: int | None = _DEFAULTS["fuel"]
    #: Bytes the guest's linear memory may grow to; ``None``, the default,
    #: derives it from the heap (see :attr:`effective_max_wasm_memory_bytes`).
    #: ``0`` is read as ``None``.
    max_wasm_memory_bytes: int | None = _DEFAULTS["max_wasm_memory_bytes"]
    #: Capability calls of one ``parallel`` batch that run at once.
    max_calls_in_flight: int = _DEFAULTS["max_calls_in_flight"]

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _DERIVED and value == 0 and not isinstance(value, bool):
                # 0 meant "derived" before None did.
                object.__setattr__(self, f.name, None)
                continue
            if f.name in _DERIVED and value is None:
                continue
            # The types the crate's fields hold; the crate checks the bounds.
            if f.name == "timeout":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise ConfigError(f"limit timeout must be a finite number of seconds, not {value!r}")
                if value < 0:
                    raise ConfigError(f"limit timeout must not be negative, got {value}")
            elif isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"limit {f.name} must be an integer, not {type(value).__name__}")
            elif not 0 <= value < 1 << 64:
                raise ConfigError(f"limit {f.name} must be an integer from 0 to 2**64 - 1, got {value}")
        _effective(self)

    def _crate(self) -> dict[str, Any]:
        """The limits as the crate names them (the timeout in milliseconds)."""
        crate = asdict(self)
        crate["timeout"] = round(self.timeout * 1000)
        return crate

    def replace(self, **changes: Any) -> Limits:
        """A copy with some limits changed, checked as a new one is."""
        known = {f.name for f in fields(self)}
        for name in changes:
            if name not in known:
                raise ConfigError(f"unknown limit {name!r}; the limits are {', '.join(sorted(known))}")
        return replace(self, **changes)

    @property
    def effective_fuel(self) -> int:
        """The fuel each eval gets where fuel is metered."""
        fuel: int = _effective(self)["fuel"]
        return fuel

    @property
    def effective_max_wasm_memory_bytes(self) -> int:
        """The cap on the guest's linear memory."""
        cap: int = _effective(self)["max_wasm_memory_bytes"]
        return cap


#: The limits whose ``None`` means derived from the others.
_DERIVED = frozenset({"fuel", "max_wasm_memory_bytes"})


def _effective(limits: Limits) -> dict[str, Any]:
    try:
        effective: dict[str, Any] = _native.effective_limits(limits._crate())
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return effective
