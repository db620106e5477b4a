"""Capabilities: the Python functions a script may call, and how a call
crosses from the guest's thread to them and back within the deadline."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError

#: The most arguments a capability declares.
MAX_ARGS = 255
#: Threads that run synchronous capabilities, for every sandbox of the
#: process. A call still running at its eval's deadline keeps its thread
#: until it returns; the eval does not wait for it.
CAPABILITY_THREADS = 32


@dataclass(frozen=True)
class Capability:
    """A host function offered to scripts under ``name`` (``records.get``
    becomes the Lua function ``records.get``).

    ``func`` receives the Lua arguments as Python values (see
    :mod:`moonbox.values`) and returns a JSON-able value, which becomes the
    Lua result. It may be a plain function, which runs on a worker thread, or
    a coroutine function, which runs on an event loop: the caller's for
    :meth:`Sandbox.eval_async`, a background one for :meth:`Sandbox.eval`.
    An exception it raises becomes a Lua error ``NAME: message`` that the
    script can catch with ``pcall``.

    ``min_args`` and ``max_args`` are checked by the guest before the call;
    by default they come from ``func``'s signature.

    >>> from moonbox import Capability
    >>> cap = Capability("math.add", lambda a, b: a + b)
    >>> (cap.min_args, cap.max_args)
    (2, 2)
    """

    name: str
    func: Callable[..., Any]
    min_args: int = -1
    max_args: int = -1

    def __post_init__(self) -> None:
        # The guest checks the name's form when a session starts.
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"a capability name must be a non-empty string, not {self.name!r}")
        if not callable(self.func):
            raise ConfigError(f"capability {self.name}: {self.func!r} is not callable")
        low, high = self.min_args, self.max_args
        if low < 0 or high < 0:
            sig_low, sig_high = _arity(self.func)
            low = sig_low if low < 0 else low
            high = sig_high if high < 0 else high
            object.__setattr__(self, "min_args", low)
            object.__setattr__(self, "max_args", high)
        if not 0 <= low <= high <= MAX_ARGS:
            raise ConfigError(
                f"capability {self.name}: min_args {low} and max_args {high} must satisfy 0 <= min <= max <= {MAX_ARGS}"
            )

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.func)


def _arity(func: Callable[..., Any]) -> tuple[int, int]:
    """The positional arguments ``func`` requires and accepts."""
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
    :class:`Capability`; names must be unique."""
    if capabilities is None:
        return ()
    if isinstance(capabilities, Mapping):
        caps = [c if isinstance(c, Capability) else Capability(name, c) for name, c in capabilities.items()]
    else:
        caps = list(capabilities)
        for c in caps:
            if not isinstance(c, Capability):
                raise ConfigError(f"capabilities must be Capability objects or a mapping, not {type(c).__name__}")
    seen: set[str] = set()
    for c in caps:
        if c.name in seen:
            raise ConfigError(f"capability {c.name} is offered twice")
        seen.add(c.name)
    return tuple(caps)


# --- Where capabilities run ---------------------------------------------------

_executor: concurrent.futures.ThreadPoolExecutor | None = None
_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _threads() -> concurrent.futures.ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(
                CAPABILITY_THREADS, thread_name_prefix="moonbox-capability"
            )
        return _executor


def _background_loop() -> asyncio.AbstractEventLoop:
    """An event loop on a daemon thread, for coroutine capabilities called
    from a synchronous eval."""
    global _loop
    with _lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="moonbox-async", daemon=True).start()
            _loop = loop
        return _loop


def start_call(
    cap: Capability, args: list[Any], loop: asyncio.AbstractEventLoop | None
) -> concurrent.futures.Future[Any]:
    """Starts one call; its result or exception arrives in the future."""
    if cap.is_async:
        target = loop if loop is not None else _background_loop()
        return asyncio.run_coroutine_threadsafe(cap.func(*args), target)
    return _threads().submit(_run_sync, cap.func, args, loop)


def _run_sync(func: Callable[..., Any], args: list[Any], loop: asyncio.AbstractEventLoop | None) -> Any:
    result = func(*args)
    if inspect.isawaitable(result):
        # A plain function that returned an awaitable (a functools.partial of
        # a coroutine function, say).
        target = loop if loop is not None else _background_loop()
        return asyncio.run_coroutine_threadsafe(_awaited(result), target).result()
    return result


async def _awaited(awaitable: Any) -> Any:
    return await awaitable
