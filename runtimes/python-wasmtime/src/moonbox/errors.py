"""The exceptions the package raises. A script's own failures are not
exceptions: they are in the :class:`~moonbox.Report`."""

from __future__ import annotations

from ._contract import ERROR_KINDS, LIMIT_KINDS

__all__ = ["ERROR_KINDS", "LIMIT_KINDS", "ComponentError", "ConfigError", "MoonboxError"]


class MoonboxError(Exception):
    """The base of every exception the package raises."""


class ConfigError(MoonboxError, ValueError):
    """A limit, capability, module, input or other option is not valid; the
    message names it."""


class ComponentError(MoonboxError):
    """The guest component cannot be loaded or instantiated."""
