"""The exceptions the package raises. A script's own failures are not
exceptions: they are in the :class:`~moonbox.Report`."""

from __future__ import annotations

#: Every kind a report's error can have, as the Rust crate names them. The
#: first ten come from the guest; the rest from the host.
ERROR_KINDS = (
    "syntax",
    "runtime",
    "sandboxed",
    "capability",
    "instruction_limit",
    "call_depth",
    "memory_limit",
    "string_size",
    "output_limit",
    "invalid_value",
    "fuel_exhausted",
    "timeout",
    "session_poisoned",
    "cancelled",
    "internal",
)

#: The kinds that mean a limit stopped the script.
LIMIT_KINDS = frozenset(
    {
        "instruction_limit",
        "call_depth",
        "memory_limit",
        "string_size",
        "output_limit",
        "fuel_exhausted",
        "timeout",
    }
)


class MoonboxError(Exception):
    """The base of every exception the package raises."""


class ConfigError(MoonboxError, ValueError):
    """A limit, capability, module, input or other option is not valid; the
    message names it."""


class ComponentError(MoonboxError):
    """The guest component cannot be loaded or instantiated."""
