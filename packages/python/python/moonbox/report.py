"""The report of one eval: the Rust crate's report (``moonbox run --json``
prints the same JSON), read through Python properties."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Union

from . import _native
from .errors import LIMIT_KINDS

#: A JSON-able value: what crosses between Python and Lua.
Json = Union[None, bool, int, float, str, list["Json"], dict[str, "Json"]]

#: The report format's version (``report.to_dict()["version"]``).
REPORT_VERSION: int = _native.REPORT_VERSION


@dataclass(frozen=True)
class LuaError:
    """Why an eval failed. ``kind`` is one of :data:`moonbox.ERROR_KINDS`."""

    kind: str
    message: str
    chunk: str
    line: int | None
    traceback: str | None
    #: The one line to read first: ``error[KIND]: MESSAGE``, the message on
    #: one line with its control characters escaped.
    summary: str

    @property
    def is_limit(self) -> bool:
        """Whether a limit stopped the script."""
        return self.kind in LIMIT_KINDS


@dataclass(frozen=True)
class LogEvent:
    """One ``log(level, message, fields)`` event of the script."""

    level: str
    message: str
    fields: dict[str, Json]

    @classmethod
    def _from(cls, event: dict[str, Any]) -> LogEvent:
        return cls(event["level"], event["message"], event["fields"])


@dataclass(frozen=True)
class Stats:
    """What an eval cost. ``instructions`` and ``peak_memory_bytes`` are the
    guest's own counts, ``None`` when the outer wall stopped it; ``fuel_used``
    is ``None`` unless fuel is metered."""

    instructions: int | None
    peak_memory_bytes: int | None
    capability_calls: int
    output_bytes: int
    fuel_used: int | None
    wall_time_us: int
    calls_unrecorded: int


class Report:
    """The outcome of one eval: its values or its error, and in both cases
    what the script wrote and what it cost.

    A script's failure (a Lua error, a limit, the deadline) is a report with
    ``ok`` false, never an exception, so that the output written before it is
    never lost.
    """

    __slots__ = ("_native", "__dict__")

    def __init__(self, native: _native.NativeReport) -> None:
        self._native = native

    @cached_property
    def _data(self) -> dict[str, Any]:
        data: dict[str, Any] = self._native.to_dict()
        return data

    @property
    def ok(self) -> bool:
        """Whether the eval finished without an error."""
        return self._native.ok

    @property
    def values(self) -> list[Json]:
        """The chunk's return values (empty on failure)."""
        values: list[Json] = self._data["values"]
        return values

    @property
    def output(self) -> str:
        """What the script wrote as text, each invalid UTF-8 sequence
        replaced by U+FFFD."""
        output: str = self._data["output"]
        return output

    @cached_property
    def output_bytes(self) -> bytes:
        """The exact bytes the script wrote."""
        encoded = self._data.get("output_base64")
        if encoded is not None:
            return base64.b64decode(encoded)
        return self.output.encode("utf-8")

    @cached_property
    def error(self) -> LuaError | None:
        """Why the eval failed, or ``None``."""
        error = self._data["error"]
        if error is None:
            return None
        return LuaError(
            kind=error["kind"],
            message=error["message"],
            chunk=error["chunk"],
            line=error.get("line"),
            traceback=error.get("traceback"),
            summary=error["summary"],
        )

    @property
    def exit_code(self) -> int | None:
        """The status of an allowed ``os.exit(n)``, else ``None``."""
        code: int | None = self._data.get("exit_code")
        return code

    @cached_property
    def logs(self) -> list[LogEvent]:
        """The script's log events, in order."""
        return [LogEvent._from(event) for event in self._data["logs"]]

    @cached_property
    def stats(self) -> Stats:
        """What the eval cost."""
        s = self._data["stats"]
        return Stats(
            instructions=s.get("instructions"),
            peak_memory_bytes=s.get("peak_memory_bytes"),
            capability_calls=s["capability_calls"],
            output_bytes=s["output_bytes"],
            fuel_used=s.get("fuel_used"),
            wall_time_us=s["wall_time_us"],
            calls_unrecorded=s.get("calls_unrecorded", 0),
        )

    @cached_property
    def files(self) -> dict[str, bytes]:
        """The files the eval created or wrote that still exist at its end,
        by name (in name order), with their exact bytes; mounted files are
        not among them. ``to_dict()["files"]`` lists the same, as text or
        base64, and is absent when there are none."""
        return dict(self._native.files())

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The audit trail of capability calls, when the sandbox keeps one."""
        calls: list[dict[str, Any]] = self._data.get("calls", [])
        return calls

    def to_dict(self) -> dict[str, Any]:
        """The report as ``moonbox run --json`` prints it (a fresh dict)."""
        data: dict[str, Any] = self._native.to_dict()
        return data

    def to_json(self) -> str:
        """The report as one line of JSON, values exact (``1`` and ``1.0``
        apart), as the crate writes it."""
        return self._native.to_json()

    def __str__(self) -> str:
        if self.error is not None:
            return self.error.summary
        return self._native.to_json() if not self.ok else _values_json(self)

    def __repr__(self) -> str:
        return f"<moonbox.Report {self}>"


def _values_json(report: Report) -> str:
    import json

    return json.dumps(report.values, ensure_ascii=False, separators=(",", ":"))


def error_report(message: str, chunk: str, kind: str = "runtime") -> Report:
    """A report for a call that never reached the guest (a tool call whose
    arguments are wrong), made by the crate."""
    return Report(_native.error_report(kind, message, chunk))
