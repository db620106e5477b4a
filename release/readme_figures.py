#!/usr/bin/env python3
"""The README's benchmark figures, taken from BENCHMARKS.md's latest run.

A figure in README.md is written between markers, `<!--bench:KEY-->19.4
µs<!--/bench-->`, and KEY names a row of the latest run's cold-start table
in BENCHMARKS.md (its median). `--check` fails naming each figure that
differs from the table (CI runs it); `--write` rewrites them (after `just
bench`).

    python3 release/readme_figures.py --check | --write
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BENCHMARKS = ROOT / "BENCHMARKS.md"
# KEY -> the first cell of its row in the latest run's "### Cold start" table.
ROWS = {
    "reused": "moonbox: reused session",
    "pooling": "moonbox: fresh instance, pooling allocator",
    "fresh": "moonbox: fresh instance",
    "process": "moonbox: new `moonbox run` process",
    "lua": "`lua5.4 -e` process (no isolation)",
    "runc": "`runc run` container with lua5.4",
    "podman": "`podman run` container with lua5.4",
}
MARKER = re.compile(r"<!--bench:([a-z]+)-->(.*?)<!--/bench-->")


def medians() -> dict[str, str]:
    text = BENCHMARKS.read_text()
    latest = text.split("## Latest run", 1)[1]
    table = latest.split("### Cold start", 1)[1].split("\n### ", 1)[0]
    cells = {}
    for line in table.splitlines():
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) >= 2:
            cells[parts[0]] = parts[1]
    found = {}
    for key, row in ROWS.items():
        if row not in cells:
            raise SystemExit(f"readme_figures: BENCHMARKS.md's latest cold-start table has no row '{row}'")
        found[key] = cells[row]
    return found


def main(argv: list[str]) -> int:
    if argv not in (["--check"], ["--write"]):
        print(__doc__, file=sys.stderr)
        return 2
    want = medians()
    text = README.read_text()
    wrong = []

    def fix(match: re.Match[str]) -> str:
        key, have = match.group(1), match.group(2)
        if key not in want:
            wrong.append(f"unknown figure '{key}' (one of {', '.join(want)})")
            return match.group(0)
        if have != want[key]:
            wrong.append(f"{key} is '{have}', BENCHMARKS.md's latest run says '{want[key]}'")
        return f"<!--bench:{key}-->{want[key]}<!--/bench-->"

    new = MARKER.sub(fix, text)
    if not MARKER.search(text):
        wrong.append("no <!--bench:KEY--> figure at all")
    if argv == ["--write"]:
        README.write_text(new)
        print(f"readme_figures: {len(MARKER.findall(new))} figures from BENCHMARKS.md")
        return 0
    for line in wrong:
        print(f"README.md: {line}", file=sys.stderr)
    if not wrong:
        print(f"README.md: {len(MARKER.findall(text))} figures agree with BENCHMARKS.md's latest run")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
