"""The exceptions the package raises, and the error kinds a report can
have. A script's own failures are not exceptions: they are in the
:class:`~moonbox.Report`."""

from __future__ import annotations

from . import _native

#: Every kind a report's error can have, in the Rust crate's order and
#: spelling (taken from the crate, not written here).
ERROR_KINDS: tuple[str, ...] = tuple(kind for kind, _ in _native.error_kinds())

#: The kinds that mean a limit stopped the script.
LIMIT_KINDS: frozenset[str] = frozenset(kind for kind, is_limit in _native.error_kinds() if is_limit)


class MoonboxError(Exception):
    """The base of every exception the package raises."""


class ConfigError(MoonboxError, ValueError):
    """A limit, capability, module, input or other option is not valid; the
    message names it."""


class ComponentError(MoonboxError):
    """A session cannot start for a reason that is not its configuration."""
