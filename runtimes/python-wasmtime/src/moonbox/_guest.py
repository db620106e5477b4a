"""The guest component, its engine and its linker: loaded once per process
and shared by every sandbox.

The linker's host functions are shared too, so they find the eval they
serve through a thread-local: a call into the guest runs on the calling
thread, and so do the imports it calls back.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import wasmtime
from wasmtime import component as cm

from .errors import ComponentError

from ._eval import utf8_safe

if TYPE_CHECKING:
    from ._eval import EvalContext

OUTPUT_IMPORT = "moonbox:sandbox/output@0.5.0"
CAPABILITIES_IMPORT = "moonbox:sandbox/capabilities@0.5.0"
LUA_EXPORT = "moonbox:sandbox/lua@0.5.0"

#: Native stack wasm code may use; deeper recursion traps (as in the Rust
#: crate).
MAX_WASM_STACK = 1 << 20
#: How often the epoch advances: the deadline's resolution.
EPOCH_TICK_SECONDS = 0.002
#: The most ticks one wake-up of the ticker delivers.
MAX_TICKS_PER_WAKE = 10_000

#: Where the component is read from: ``MOONBOX_COMPONENT`` when set (a build
#: of one's own), else the one shipped in the package.
COMPONENT_ENV = "MOONBOX_COMPONENT"
#: Set to turn off the cache of compiled code.
NO_CACHE_ENV = "MOONBOX_NO_CACHE"

_current = threading.local()


def current_eval() -> EvalContext:
    """The eval running on this thread; the imports serve it."""
    ctx: EvalContext | None = getattr(_current, "eval", None)
    if ctx is None:
        # Only a call into the guest runs the imports, and every call sets
        # the context first.
        raise RuntimeError("a guest import ran outside an eval")
    return ctx


def set_current_eval(ctx: EvalContext | None) -> None:
    _current.eval = ctx


class Guest:
    """The compiled component, its engine and linker, and the epoch ticker."""

    def __init__(self, path: Path | None = None) -> None:
        config = wasmtime.Config()
        config.wasm_exceptions = True  # the guest's Lua errors are wasm exceptions
        config.consume_fuel = True
        config.epoch_interruption = True
        config.max_wasm_stack = MAX_WASM_STACK
        # Wasmtime's own cache of compiled code (in the user's cache
        # directory): the first process compiles the component, later ones
        # load it in a tenth of the time. MOONBOX_NO_CACHE=1 turns it off.
        if not os.environ.get(NO_CACHE_ENV):
            config.cache = True
        self.engine = wasmtime.Engine(config)
        try:
            if path is not None:
                self.component = cm.Component.from_file(self.engine, str(path))
            elif os.environ.get(COMPONENT_ENV):
                self.component = cm.Component.from_file(self.engine, os.environ[COMPONENT_ENV])
            else:
                wasm = resources.files(__package__).joinpath("moonbox.wasm").read_bytes()
                self.component = cm.Component(self.engine, wasm)
        except (OSError, wasmtime.WasmtimeError) as e:
            raise ComponentError(f"cannot load the moonbox component: {e}") from None

        self.linker = cm.Linker(self.engine)
        self.linker.add_wasip2()
        with self.linker.root() as root:
            with root.add_instance(OUTPUT_IMPORT) as iface:
                iface.add_func("write", _write)
                iface.add_func("log", _log)
                iface.add_func("file", _file)
            with root.add_instance(CAPABILITIES_IMPORT) as iface:
                iface.add_func("call", _call)
                iface.add_func("call-many", _call_many)

        lua = self._export(LUA_EXPORT)
        self.create_index = self._export("[static]session.create", lua)
        self.eval_index = self._export("[method]session.eval", lua)

        self._ticker_lock = threading.Condition()
        self._running = 0
        self._last = time.monotonic()
        self._ticker: threading.Thread | None = None

    def _export(self, name: str, parent: cm.ExportIndex | None = None) -> cm.ExportIndex:
        index = self.component.get_export_index(name, parent)
        if index is None:
            raise ComponentError(f"the component does not export {name}")
        return index

    # --- The epoch: the wall-clock deadline -----------------------------
    #
    # A ticker thread advances the engine's epoch every EPOCH_TICK_SECONDS
    # while any call into the guest runs. It needs the GIL to do so, and a
    # busy thread can hold the GIL for milliseconds (or a long C call for
    # more), so the ticker counts the clock, not its wake-ups: `_last` is
    # the time up to which ticks were delivered, and a late wake-up delivers
    # every tick owed. A call arms its deadline under the same lock,
    # counting the ticks owed but not yet delivered, so that ticks for time
    # before it began never count against it: a deadline is neither early
    # nor stretched by load.

    @contextmanager
    def running(self, store: wasmtime.Store, seconds: float) -> Iterator[None]:
        """Arms ``store``'s deadline ``seconds`` from now and keeps the
        ticker going while the call into the guest runs."""
        with self._ticker_lock:
            now = time.monotonic()
            if self._running == 0:
                # Nothing ran since the last tick: no time is owed.
                self._last = now
            self._running += 1
            owed = int((now - self._last) / EPOCH_TICK_SECONDS)
            # One tick more for the partial tick already under way.
            store.set_epoch_deadline(math.ceil(seconds / EPOCH_TICK_SECONDS) + owed + 1)
            if self._ticker is None:
                self._ticker = threading.Thread(target=self._tick, name="moonbox-epoch", daemon=True)
                self._ticker.start()
            self._ticker_lock.notify()
        try:
            yield
        finally:
            with self._ticker_lock:
                self._running -= 1

    def _tick(self) -> None:
        while True:
            with self._ticker_lock:
                while self._running == 0:
                    self._ticker_lock.wait()
            time.sleep(EPOCH_TICK_SECONDS)
            with self._ticker_lock:
                owed = int((time.monotonic() - self._last) / EPOCH_TICK_SECONDS)
                # A long stall (a stopped process) is made up over several
                # wake-ups rather than in one long hold of the lock.
                due = min(owed, MAX_TICKS_PER_WAKE)
                for _ in range(due):
                    self.engine.increment_epoch()
                self._last += due * EPOCH_TICK_SECONDS


_guest: Guest | None = None
_guest_lock = threading.Lock()


def guest() -> Guest:
    """The process's guest, loaded and compiled on first use."""
    global _guest
    with _guest_lock:
        if _guest is None:
            _guest = Guest()
        return _guest


# --- The imports -------------------------------------------------------------
#
# wasmtime-py passes the store context first. They never raise: an exception
# in an import traps the guest and ends the instance, so one that escapes
# the eval's own handling is kept for the eval to report (or, for
# KeyboardInterrupt and SystemExit, to raise once the guest has returned),
# and the guest gets an error it can handle.


def _write(_store: Any, data: bytes) -> None:
    ctx = current_eval()
    try:
        ctx.write(data)
    except BaseException as e:  # noqa: BLE001 - kept for the eval, see above
        ctx.escaped(e)


def _log(_store: Any, level: Any, message: str, fields: str) -> None:
    ctx = current_eval()
    try:
        ctx.log(str(level), message, fields)
    except BaseException as e:  # noqa: BLE001
        ctx.escaped(e)


def _file(_store: Any, _change: Any) -> None:
    """The guest's file changes, dropped: this host reports the guest's own
    account of the files (``success.files``, ``failure.files``), and a
    timeout here ends the eval without it (docs/other-runtimes.md)."""


def _call(_store: Any, name: str, args: list[cm.Variant]) -> cm.Variant | str:
    ctx = current_eval()
    try:
        reply = ctx.call(name, args)
        return utf8_safe(reply) if isinstance(reply, str) else reply
    except BaseException as e:  # noqa: BLE001
        ctx.escaped(e)
        return f"{name}: the host failed ({type(e).__name__})"


def _call_many(_store: Any, calls: list[Any]) -> list[cm.Variant | str]:
    ctx = current_eval()
    try:
        replies = ctx.call_many([(getattr(c, "name"), getattr(c, "args")) for c in calls])
        return [utf8_safe(r) if isinstance(r, str) else r for r in replies]
    except BaseException as e:  # noqa: BLE001
        ctx.escaped(e)
        return [f"{getattr(c, 'name', '?')}: the host failed ({type(e).__name__})" for c in calls]
