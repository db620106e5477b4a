"""Capabilities: the Python functions a script may call.

A call runs on a thread of the native module's pool with the GIL taken for
the call only, so the eval's deadline holds whatever the function does: a
call still running at the deadline ends the eval with ``timeout`` and is
left to finish on its own, its result dropped."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# asyncio, concurrent.futures and inspect are imported where they are used:
# together they are most of `import moonbox`'s time, which every
# `python -m moonbox` process pays.
if TYPE_CHECKING:
    import asyncio

from . import _native
from .errors import ConfigError

#: The most arguments a capability declares (the crate's bound).
MAX_ARGS: int = _native.MAX_CAPABILITY_ARGS


@dataclass(frozen=True)
class Capability:
    """A host function offered to scripts under ``name`` (``records.get``
    becomes the Lua function ``records.get``).

    ``func`` receives the Lua arguments as Python values and returns a
    JSON-able value, which becomes the Lua result. It may be a plain
    function or a coroutine function, which runs on an event loop: the
    caller's for ``eval_async``, a background one for ``eval``. An exception
    it raises becomes a Lua error ``NAME: message`` that the script can
    catch with ``pcall``.

    ``min_args`` and ``max_args`` are checked before the call; by default
    they come from ``func``'s signature. Arguments a script leaves out are
    left out of the call, so ``func``'s own defaults apply.

    >>> from moonbox import Capability
    >>> cap = Capability("math.add", lambda a, b: a + b)
    >>> (cap.min_args, cap.max_args)
    (2, 2)
    """

    name: str
    func: Callable[..., Any]
    min_args: int = -1
    max_args: int = -1
    doc: str = ""

    def __post_init__(self) -> None:
        # The crate checks the name's form when the sandbox is built.
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"a capability name must be a non-empty string, not {self.name!r}")
        if not callable(self.func):
            raise ConfigError(f"capability {self.name}: {self.func!r} is not callable")
        if not isinstance(self.doc, str):
            raise ConfigError(f"capability {self.name}: doc must be a str")
        low, high = self.min_args, self.max_args
        if low < 0 or high < 0:
            sig_low, sig_high = _arity(self.func)
            low = sig_low if low < 0 else low
            high = sig_high if high < 0 else high
            object.__setattr__(self, "min_args", low)
            object.__setattr__(self, "max_args", high)

    @property
    def is_async(self) -> bool:
        """Whether ``func`` is a coroutine function."""
        import inspect

        return inspect.iscoroutinefunction(self.func)

    def _spec(self, timeout: float) -> tuple[str, Callable[..., Any], int, int, str, Callable[..., Any]]:
        """The capability as the native module takes it: with the awaiter
        that runs an awaitable ``func`` returns on the eval's event loop."""

        def awaiter(awaitable: Awaitable[Any], event_loop: asyncio.AbstractEventLoop | None) -> Any:
            return _await(awaitable, event_loop, timeout)

        return (self.name, self.func, self.min_args, self.max_args, self.doc, awaiter)


def _arity(func: Callable[..., Any]) -> tuple[int, int]:
    """The positional arguments ``func`` requires and accepts."""
    import inspect

    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return 0, MAX_ARGS
    low = high = 0
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            high += 1
            if p.default is p.empty:
                low += 1
        elif p.kind == p.VAR_POSITIONAL:
            high = MAX_ARGS
    return low, min(high, MAX_ARGS)


def capability_list(
    capabilities: Mapping[str, Callable[..., Any]] | Sequence[Capability] | None,
) -> tuple[Capability, ...]:
    """Capabilities from a mapping of name to function, or a sequence of
    :class:`Capability`."""
    if capabilities is None:
        return ()
    if isinstance(capabilities, Mapping):
        return tuple(c if isinstance(c, Capability) else Capability(name, c) for name, c in capabilities.items())
    caps = tuple(capabilities)
    for c in caps:
        if not isinstance(c, Capability):
            raise ConfigError(f"capabilities must be Capability objects or a mapping, not {type(c).__name__}")
    return caps


# --- Where coroutines run -----------------------------------------------------

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    """An event loop on a daemon thread, for coroutine capabilities called
    from a synchronous eval."""
    import asyncio

    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="moonbox-async", daemon=True).start()
            _loop = loop
        return _loop


def _await(awaitable: Awaitable[Any], event_loop: asyncio.AbstractEventLoop | None, timeout: float) -> Any:
    """Runs ``awaitable`` on ``event_loop`` (or the background loop) and
    waits for it on this thread, at most the eval's timeout: past it the
    eval has ended, so the task is cancelled."""
    import asyncio
    import concurrent.futures

    target = event_loop if event_loop is not None and not event_loop.is_closed() else _background_loop()
    future = asyncio.run_coroutine_threadsafe(_awaited(awaitable), target)
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise TimeoutError("did not finish within the eval's timeout") from None


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable
