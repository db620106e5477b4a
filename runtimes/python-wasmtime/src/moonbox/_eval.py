"""One eval's state on the host side: the output it collects, its log
events, and its capability calls, all bounded by its limits and deadline."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import Callable
from typing import Any

from wasmtime import component as cm

from .capabilities import Capability, start_call
from ._contract import LOG_EVENT_BYTES
from .errors import ConfigError
from .report import LogEvent
from .values import from_wit, to_wit

#: What each log event is charged beyond its message and fields bytes, as
#: the guest charges it against ``max_output_bytes``.


class EvalContext:
    """Collects what one eval writes and answers its capability calls."""

    def __init__(
        self,
        *,
        max_output_bytes: int,
        deadline: float,
        capabilities: dict[str, Capability],
        loop: asyncio.AbstractEventLoop | None,
        max_reply_bytes: int,
    ) -> None:
        self.chunks: list[bytes] = []
        self.kept = 0
        self.limit = max_output_bytes
        self.logs: list[LogEvent] = []
        self.log_room = max_output_bytes
        self.deadline = deadline
        self.capabilities = capabilities
        self.loop = loop
        self.calls = 0
        #: The most bytes one reply, or one batch's replies, may hold: as
        #: in the Rust crate, the Lua heap limit.
        self.max_reply_bytes = max_reply_bytes
        #: Set when a capability was still running at the deadline.
        self.timed_out = False
        #: An exception that reached an import: the eval reports it as
        #: ``internal`` (or re-raises KeyboardInterrupt and SystemExit).
        self.escape: BaseException | None = None
        #: Where output and log events go as they arrive, besides the report.
        self.on_output: Callable[[bytes], object] | None = None
        self.on_log: Callable[[LogEvent], object] | None = None

    def escaped(self, e: BaseException) -> None:
        if self.escape is None or not isinstance(self.escape, (KeyboardInterrupt, SystemExit)):
            self.escape = e

    # --- output ---------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Keeps the bytes while they fit: the guest never writes past
        ``max_output_bytes``, and the host does not rely on it."""
        room = self.limit - self.kept
        if room > 0:
            kept = data[:room]
            self.chunks.append(kept)
            self.kept += len(kept)
            if self.on_output is not None:
                try:
                    self.on_output(kept)
                except Exception:  # noqa: BLE001 - a failing sink is not called again
                    self.on_output = None

    def output(self) -> bytes:
        return b"".join(self.chunks)

    def log(self, level: str, message: str, fields: str) -> None:
        cost = len(message.encode("utf-8")) + len(fields.encode("utf-8")) + LOG_EVENT_BYTES
        if cost > self.log_room:
            return
        self.log_room -= cost
        try:
            parsed = json.loads(fields)
        except ValueError:
            parsed = {}
        event = LogEvent(level, message, parsed)
        self.logs.append(event)
        if self.on_log is not None:
            try:
                self.on_log(event)
            except Exception:  # noqa: BLE001 - a failing sink is not called again
                self.on_log = None

    # --- capabilities ---------------------------------------------------

    def call(self, name: str, args: list[cm.Variant]) -> cm.Variant | str:
        started = self._start(name, args)
        if isinstance(started, str):
            return started
        return self._finish(name, started)

    def call_many(self, calls: list[tuple[str, list[cm.Variant]]]) -> list[cm.Variant | str]:
        """A batch from ``parallel``: every call starts at once, and the
        replies come back in request order."""
        started = [(name, self._start(name, args)) for name, args in calls]
        replies = [s if isinstance(s, str) else self._finish(name, s) for name, s in started]
        total = sum(_reply_bytes(r) for r in replies)
        if total > self.max_reply_bytes:
            message = (
                f"parallel: the batch's replies hold {total} bytes, more than max_memory_bytes "
                f"({self.max_reply_bytes})"
            )
            return [message for _ in replies]
        return replies

    def _start(self, name: str, args: list[cm.Variant]) -> concurrent.futures.Future[Any] | str:
        self.calls += 1
        cap = self.capabilities.get(name)
        if cap is None:
            return f"{name}: no such capability"
        try:
            values = [from_wit(a) for a in args]
            return start_call(cap, values, self.loop)
        except Exception as e:  # noqa: BLE001 - any failure is the script's Lua error
            return f"{name}: {e}"

    def _finish(self, name: str, future: concurrent.futures.Future[Any]) -> cm.Variant | str:
        remaining = self.deadline - time.monotonic()
        try:
            concurrent.futures.wait([future], timeout=max(remaining, 0.0))
        except BaseException as e:  # noqa: BLE001 - KeyboardInterrupt while waiting
            future.cancel()
            self.escaped(e)
            return f"{name}: the host was interrupted"
        if not future.done():
            # Still running at the deadline: the eval ends as a timeout; the
            # call's thread or task is left to finish on its own.
            future.cancel()
            self.timed_out = True
            return f"{name}: still running at the eval's deadline"
        try:
            result = future.result()
        except concurrent.futures.CancelledError:
            return f"{name}: the call was cancelled"
        except BaseException as e:  # noqa: BLE001 - any failure is the script's Lua error
            if not isinstance(e, Exception):
                self.escaped(e)
            return f"{name}: {e}" if str(e) else f"{name}: {type(e).__name__}"
        try:
            reply = to_wit(result, f"{name}: its result")
        except ConfigError as e:
            return str(e)
        size = _reply_bytes(reply)
        if size > self.max_reply_bytes:
            return f"{name}: its reply holds {size} bytes, more than max_memory_bytes ({self.max_reply_bytes})"
        return reply


def _reply_bytes(reply: cm.Variant | str) -> int:
    """The bytes a reply carries into the guest: its text, or its JSON."""
    text = reply if isinstance(reply, str) else reply.payload
    return len(text.encode("utf-8", "replace")) if isinstance(text, str) else 8


def utf8_safe(text: str) -> str:
    """``text`` with anything UTF-8 cannot hold (a lone surrogate, as
    ``os.fsdecode`` makes of a badly encoded name) replaced, so that an
    error message always crosses into the guest."""
    return text.encode("utf-8", "replace").decode("utf-8")
