"""What an eval gives back: the same report as the Rust crate's
``moonbox::Report`` and ``moonbox run --json``."""

from __future__ import annotations

import base64
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from ._contract import LIMIT_KINDS, REPORT_VERSION
from .values import Json, to_json_text

# Characters that could forge a terminal line besides the C0/C1 controls:
# line and paragraph separators and the bidirectional overrides.
_FORGING = {0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def one_line(text: str) -> str:
    r"""``text`` as one line a terminal shows as it is, as the Rust crate
    writes messages: lines joined by a space (blank ones dropped), ``\r``
    and tabs written as escapes, and every other control character (an
    escape sequence's ESC among them) written as ``\u{..}``.

    >>> one_line("main.lua:1: x\r\x1b[2Kerror[ok]\n\t  more")
    'main.lua:1: x\\r\\u{1b}[2Kerror[ok] more'
    """
    out: list[str] = []
    lines = [line.rstrip(" \t") for line in text.split("\n")]
    kept = [line for line in lines if line.strip(" \t")]
    for i, line in enumerate(kept):
        if i:
            out.append(" ")
            line = line.lstrip(" \t")
        for c in line:
            if c == "\r":
                out.append("\\r")
            elif c == "\t":
                out.append("\\t")
            elif unicodedata.category(c) == "Cc" or ord(c) in _FORGING:
                out.append(f"\\u{{{ord(c):x}}}")
            else:
                out.append(c)
    return "".join(out)


@dataclass(frozen=True)
class LuaError:
    """Why an eval failed. ``kind`` is one of :data:`moonbox.ERROR_KINDS`."""

    kind: str
    message: str
    chunk: str
    line: int | None = None
    traceback: str | None = None

    @property
    def summary(self) -> str:
        """The one line to read first: ``error[KIND]: MESSAGE``, the message
        on one line with its control characters escaped."""
        return f"error[{self.kind}]: {one_line(self.message)}"

    @property
    def is_limit(self) -> bool:
        """Whether a limit stopped the script."""
        return self.kind in LIMIT_KINDS

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk": self.chunk,
            "kind": self.kind,
            "line": self.line,
            "message": self.message,
            "summary": self.summary,
            "traceback": self.traceback,
        }


@dataclass(frozen=True)
class LogEvent:
    """One ``log(level, message, fields)`` event of the script."""

    level: str
    message: str
    fields: dict[str, Json]

    def to_dict(self) -> dict[str, Any]:
        return {"fields": self.fields, "level": self.level, "message": self.message}


@dataclass(frozen=True)
class Stats:
    """What an eval cost. ``instructions`` and ``peak_memory_bytes`` are the
    guest's own counts, ``None`` when the outer wall stopped it."""

    instructions: int | None = None
    peak_memory_bytes: int | None = None
    capability_calls: int = 0
    output_bytes: int = 0
    fuel_used: int | None = None
    wall_time_us: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls_unrecorded": 0,
            "capability_calls": self.capability_calls,
            "fuel_used": self.fuel_used,
            "instructions": self.instructions,
            "output_bytes": self.output_bytes,
            "peak_memory_bytes": self.peak_memory_bytes,
            "wall_time_us": self.wall_time_us,
        }


def _file_dict(name: str, contents: bytes) -> dict[str, Any]:
    """A written file as the report lists it: its contents as ``text`` when
    they are UTF-8, else as ``base64``."""
    try:
        return {"name": name, "size": len(contents), "text": contents.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(contents).decode("ascii"), "name": name, "size": len(contents)}


@dataclass(frozen=True)
class Report:
    """The outcome of one eval: its values or its error, and in both cases
    what the script wrote and what it cost.

    A script's failure (a Lua error, a limit, the deadline) is a report with
    ``ok`` false, never an exception, so that the output written before it is
    never lost.
    """

    ok: bool
    #: The chunk's return values (empty on failure).
    values: list[Json] = field(default_factory=list)
    #: The exact bytes the script wrote.
    output_bytes: bytes = b""
    error: LuaError | None = None
    #: The status of an allowed ``os.exit(n)``, else ``None``.
    exit_code: int | None = None
    logs: list[LogEvent] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    #: The files the eval created or wrote that exist at its end, by name
    #: (sorted), with their bytes. Mounted files are not among them.
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def output(self) -> str:
        """What the script wrote as text, each invalid UTF-8 sequence
        replaced by U+FFFD."""
        return self.output_bytes.decode("utf-8", errors="replace")

    def to_dict(self) -> dict[str, Any]:
        """The report as ``moonbox run --json`` prints it."""
        report: dict[str, Any] = {
            "error": None if self.error is None else self.error.to_dict(),
            "exit_code": self.exit_code,
        }
        if self.files:
            report["files"] = [_file_dict(name, contents) for name, contents in self.files.items()]
        report |= {
            "logs": [event.to_dict() for event in self.logs],
            "ok": self.ok,
            "output": self.output,
        }
        try:
            self.output_bytes.decode("utf-8")
        except UnicodeDecodeError:
            report["output_base64"] = base64.b64encode(self.output_bytes).decode("ascii")
        report["stats"] = self.stats.to_dict()
        report["values"] = self.values
        report["version"] = REPORT_VERSION
        return report

    def to_json(self) -> str:
        """The report as one line of JSON, values exact (``1`` and ``1.0``
        apart)."""
        return to_json_text(self.to_dict())

    def __str__(self) -> str:
        if self.error is not None:
            return self.error.summary
        return to_json_text(self.values)
