"""The guest component, its engine and its linker: loaded once per process
and shared by every sandbox.

The linker's host functions are shared too, so they find the eval they
serve through a thread-local: a call into the guest runs on the calling
thread, and so do the imports it calls back.
"""

from __future__ import annotations

import os
import threading
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import wasmtime
from wasmtime import component as cm

from .errors import ComponentError

if TYPE_CHECKING:
    from ._eval import EvalContext

OUTPUT_IMPORT = "moonbox:sandbox/output@0.3.0"
CAPABILITIES_IMPORT = "moonbox:sandbox/capabilities@0.3.0"
LUA_EXPORT = "moonbox:sandbox/lua@0.3.0"

#: Native stack wasm code may use; deeper recursion traps (as in the Rust
#: crate).
MAX_WASM_STACK = 1 << 20
#: How often the epoch advances: the deadline's resolution.
EPOCH_TICK_SECONDS = 0.002

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
            with root.add_instance(CAPABILITIES_IMPORT) as iface:
                iface.add_func("call", _call)
                iface.add_func("call-many", _call_many)

        lua = self._export(LUA_EXPORT)
        self.create_index = self._export("[static]session.create", lua)
        self.eval_index = self._export("[method]session.eval", lua)

        self._ticker_lock = threading.Condition()
        self._running = 0
        self._ticker: threading.Thread | None = None

    def _export(self, name: str, parent: cm.ExportIndex | None = None) -> cm.ExportIndex:
        index = self.component.get_export_index(name, parent)
        if index is None:
            raise ComponentError(f"the component does not export {name}")
        return index

    # --- The epoch: the wall-clock deadline -----------------------------

    def epoch_ticks(self, seconds: float) -> int:
        """Epoch ticks that cover ``seconds``, and two more: the ticker's
        phase is not the eval's, so the first tick can come at once, and a
        tick can carry up to one tick of time from before the eval."""
        return int(seconds / EPOCH_TICK_SECONDS) + 2

    def running(self) -> _Running:
        """Keeps the ticker going while a call into the guest runs."""
        return _Running(self)

    def _enter(self) -> None:
        with self._ticker_lock:
            self._running += 1
            if self._ticker is None:
                self._ticker = threading.Thread(target=self._tick, name="moonbox-epoch", daemon=True)
                self._ticker.start()
            self._ticker_lock.notify()

    def _leave(self) -> None:
        with self._ticker_lock:
            self._running -= 1

    def _tick(self) -> None:
        """Advances the epoch by the time that passed, not by wake-ups: this
        thread needs the GIL to run, and a busy Python thread can keep it
        for milliseconds, so counting wake-ups would stretch the deadline.
        Ticks that were due while the thread waited are made up at once."""
        last = time.monotonic()
        while True:
            with self._ticker_lock:
                if self._running == 0:
                    while self._running == 0:
                        self._ticker_lock.wait()
                    last = time.monotonic()
            time.sleep(EPOCH_TICK_SECONDS)
            due = int((time.monotonic() - last) / EPOCH_TICK_SECONDS)
            for _ in range(due):
                self.engine.increment_epoch()
            last += due * EPOCH_TICK_SECONDS


class _Running:
    def __init__(self, guest: Guest) -> None:
        self.guest = guest

    def __enter__(self) -> None:
        self.guest._enter()

    def __exit__(self, *_: object) -> None:
        self.guest._leave()


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


def _call(_store: Any, name: str, args: list[cm.Variant]) -> cm.Variant | str:
    ctx = current_eval()
    try:
        return ctx.call(name, args)
    except BaseException as e:  # noqa: BLE001
        ctx.escaped(e)
        return f"{name}: the host failed ({type(e).__name__})"


def _call_many(_store: Any, calls: list[Any]) -> list[cm.Variant | str]:
    ctx = current_eval()
    try:
        return ctx.call_many([(getattr(c, "name"), getattr(c, "args")) for c in calls])
    except BaseException as e:  # noqa: BLE001
        ctx.escaped(e)
        return [f"{getattr(c, 'name', '?')}: the host failed ({type(e).__name__})" for c in calls]
