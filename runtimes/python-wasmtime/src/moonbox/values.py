"""Values crossing the wall: Python values to the WIT ``value`` variant and
back.

A script's values reach Python as JSON: integers stay ``int`` and floats
stay ``float`` (``1`` and ``1.0`` are different), a table with string keys
is a ``dict`` and a sequence a ``list`` (an empty table is ``[]``), and
``nil`` is ``None``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from wasmtime import component as cm

from .errors import ConfigError

#: A JSON value as Python holds it.
Json = Any

I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1

NIL = cm.Variant("nil")


def to_json_text(value: Json) -> str:
    """Compact JSON text, keeping non-ASCII characters as they are; NaN and
    the infinities are refused, as the guest refuses them."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def to_wit(value: Json, what: str) -> cm.Variant:
    """A Python value as a WIT ``value``. Raises :class:`ConfigError`, which
    names ``what``, for a value JSON cannot hold."""
    if value is None:
        return NIL
    if isinstance(value, bool):
        return cm.Variant("boolean", value)
    if isinstance(value, int):
        if not I64_MIN <= value <= I64_MAX:
            raise ConfigError(f"{what}: the integer {value} does not fit in 64 bits")
        return cm.Variant("integer", value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{what}: {value} is not a JSON number")
        return cm.Variant("float", value)
    if isinstance(value, str):
        _check_utf8(value, what)
        return cm.Variant("text", value)
    if isinstance(value, (dict, list, tuple)):
        try:
            text = to_json_text(value)
        except (TypeError, ValueError, RecursionError) as e:
            raise ConfigError(f"{what}: cannot become JSON ({type(e).__name__}: {e})") from None
        _check_utf8(text, what)
        return cm.Variant("json", text)
    raise ConfigError(f"{what}: a {type(value).__name__} cannot cross into Lua (use None, bool, int, float, str, list or dict)")


def _check_utf8(text: str, what: str) -> None:
    """Lua strings from the host are UTF-8; a lone surrogate (as
    ``os.fsdecode`` makes of a badly encoded name) has no UTF-8 form."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ConfigError(f"{what}: the text is not valid Unicode ({e.reason} at {e.start})") from None


def from_wit(value: cm.Variant) -> Json:
    """A WIT ``value`` from the guest as a Python value."""
    tag = value.tag
    if tag == "nil":
        return None
    if tag == "json":
        return json.loads(str(value.payload))
    return value.payload
