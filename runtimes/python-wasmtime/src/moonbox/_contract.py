"""The contract's rules: error kinds, limits and shared constants.

Generated from wit/contract.toml by `python3 wit/contract.py`; do not edit."""

from __future__ import annotations

from typing import NamedTuple

#: The WIT package the rules belong to.
PACKAGE = "moonbox:sandbox@0.5.0"

#: Every error kind, the guest's first, in the order of the WIT enum.
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
#: The kinds the guest reports.
GUEST_ERROR_KINDS = ERROR_KINDS[:10]
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
#: The exit status of `moonbox run` for each kind.
EXIT_CODES = {
    "syntax": 1,
    "runtime": 1,
    "sandboxed": 1,
    "capability": 1,
    "instruction_limit": 3,
    "call_depth": 3,
    "memory_limit": 3,
    "string_size": 3,
    "output_limit": 3,
    "invalid_value": 1,
    "fuel_exhausted": 3,
    "timeout": 3,
    "session_poisoned": 2,
    "cancelled": 2,
    "internal": 2,
}


class LimitRule(NamedTuple):
    """One limit's rule; `default` is None when it is derived."""

    unit: str
    default: int | None
    min: int
    max: int
    guest: bool


#: Every limit, the guest's first, in the order of the WIT record.
LIMITS = {
    "max_instructions": LimitRule("instructions", 10000000, 1, 1000000000000, True),
    "max_call_depth": LimitRule("frames", 1000, 1, 1000000, True),
    "max_string_bytes": LimitRule("bytes", 16777216, 1024, 1073741824, True),
    "max_memory_bytes": LimitRule("bytes", 67108864, 1048576, 1073741824, True),
    "max_output_bytes": LimitRule("bytes", 1048576, 1, 1073741824, True),
    "max_value_depth": LimitRule("levels", 64, 1, 100, True),
    "fuel": LimitRule("fuel", None, 1, 1152921504606846976, False),
    "timeout": LimitRule("milliseconds", 5000, 1, 86400000, False),
    "max_wasm_memory_bytes": LimitRule("bytes", None, 1, 4294967296, False),
    "max_calls_in_flight": LimitRule("calls", 16, 1, 1024, False),
}

#: Bytes each `log` event is charged against `max_output_bytes` beyond its
#: message and fields.
LOG_EVENT_BYTES = 32
#: The fewest bytes of an error's message (and traceback) that cross the
#: boundary, whatever `max_output_bytes` is.
MIN_ERROR_BYTES = 256
#: The most bytes of an error's message (and traceback) that cross the
#: boundary.
MAX_ERROR_BYTES = 65_536
#: Fuel derived per allowed Lua instruction when `fuel` is not set.
FUEL_PER_INSTRUCTION = 500
#: The least fuel derived, whatever `max_instructions` is.
DEFAULT_FUEL = 5_000_000_000
#: The derived linear memory holds this many Lua heaps...
WASM_MEMORY_FACTOR = 2
#: ...and this many bytes more.
WASM_MEMORY_EXTRA_BYTES = 16_777_216
#: The linear memory must exceed the Lua heap by at least this many bytes.
WASM_MEMORY_HEADROOM_BYTES = 4_194_304
#: The chunk name of an eval that names none.
DEFAULT_CHUNK_NAME = 'main.lua'
#: The version of the JSON report (`moonbox run --json`, tool results).
REPORT_VERSION = 1
#: The most files a session's namespace holds (mounted and written together);
#: one more trips `memory-limit`.
MAX_FILES = 1_024
#: The longest file name, in bytes.
MAX_FILE_NAME_BYTES = 4_096
#: Bytes each file is charged against `max_memory_bytes` beyond its name and
#: contents.
FILE_OVERHEAD_BYTES = 256
#: The most arguments one eval takes (`eval-request.args`).
MAX_ARGS = 4_096
