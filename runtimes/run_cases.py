"""Runs the shared case list (runtimes/cases.json) through the public API
of the Python ``moonbox`` that the interpreter imports (the native package,
or the portable host on wasmtime-py: they share the API), and prints one
JSON line per case, in case order, for runtimes/check.py to judge (the
line format is in docs/other-runtimes.md).

    python runtimes/run_cases.py [CASES.json]

Exit status: 0 when every case ran, whatever its outcome; 1 when the host
itself failed on a case; 2 when the case list cannot be read.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import moonbox

DEFAULT_CASES = Path(__file__).resolve().parent / "cases.json"


def to_json_text(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class CaseFailure(Exception):
    """What ``cases.fail`` raises: the message becomes the Lua error."""


def capabilities(file: dict[str, Any]) -> list[moonbox.Capability]:
    records = file.get("records", {})

    def records_get(id: Any) -> Any:
        return records.get(id) if isinstance(id, str) else None

    def cases_fail(message: Any) -> Any:  # noqa: ANN401 - any JSON value
        raise CaseFailure(message if isinstance(message, str) else to_json_text(message))

    funcs = {"records.get": records_get, "cases.fail": cases_fail}
    return [
        moonbox.Capability(c["name"], funcs[c["name"]], min_args=c["min-args"], max_args=c["max-args"])
        for c in file["config"].get("capabilities", [])
    ]


def sandbox(file: dict[str, Any], case: dict[str, Any]) -> moonbox.Sandbox:
    config = file["config"]
    limits = {**config["limits"], **case.get("limits", {})}
    det = config.get("deterministic")
    return moonbox.Sandbox(
        limits=moonbox.Limits(**{k.replace("-", "_"): v for k, v in limits.items()}),
        capabilities=capabilities(file),
        allow=config.get("allow", []),
        modules={m["name"]: m["source"] for m in config.get("modules", [])},
        deterministic=None if det is None else moonbox.Determinism(clock=det["clock"], seed=det["seed"]),
        chunk_name=file["chunk-name"],
    )


def eval_options(case: dict[str, Any]) -> dict[str, Any]:
    """The case's ``args``, ``files`` (each a name and its bytes as ``text``
    or ``base64``) and ``stdin`` as the eval's keyword arguments."""
    options: dict[str, Any] = {}
    if "args" in case:
        options["args"] = case["args"]
    if "files" in case:
        options["files"] = {
            f["name"]: f["text"] if "text" in f else base64.b64decode(f["base64"], validate=True)
            for f in case["files"]
        }
    if "stdin" in case:
        options["stdin"] = case["stdin"]
    return options


def line(name: str, report: moonbox.Report) -> dict[str, Any]:
    full = report.to_dict()
    error = full["error"]
    if error is not None:
        del error["summary"]
    stats = full["stats"]
    out: dict[str, Any] = {"name": name, "ok": report.ok, "values": report.values, "logs": full["logs"]}
    out["output"] = full["output"]
    if "output_base64" in full:
        out["output_base64"] = full["output_base64"]
    out["exit_code"] = report.exit_code
    if "files" in full:
        out["files"] = full["files"]
    out["error"] = None if error is None else {k: error[k] for k in ("kind", "message", "chunk", "line", "traceback")}
    out["stats"] = {k: stats[k] for k in ("instructions", "peak_memory_bytes", "capability_calls", "output_bytes")}
    return out


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_CASES
    try:
        file = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"run_cases.py: cannot read {path}: {e}", file=sys.stderr)
        return 2
    host_failed = False
    for case in file["cases"]:
        name = case["name"]
        try:
            report = sandbox(file, case).eval(case["script"], **eval_options(case))
        except moonbox.ConfigError as e:
            print(to_json_text({"name": name, "ok": False, "error": {"kind": "create", "message": str(e)}}), flush=True)
            continue
        if report.error is not None and report.error.kind in ("internal", "session_poisoned"):
            host_failed = True
        print(to_json_text(line(name, report)), flush=True)
    return 1 if host_failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
