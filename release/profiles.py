#!/usr/bin/env python3
"""Prints the workspace's `[profile.*]` settings as cargo `--config`
arguments, one per line, for a build outside the workspace (the packed
crates that release/check-dist.sh installs), so that it builds with the
same profiles, `dist` included, from their one definition in Cargo.toml.

    mapfile -t args < <(python3 release/profiles.py)
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def flatten(prefix: str, table: dict) -> list[str]:
    args = []
    for key, value in table.items():
        # A key with characters outside a bare key's ("*") is quoted.
        part = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)
        name = f"{prefix}.{part}"
        if isinstance(value, dict):
            args += flatten(name, value)
        else:
            args.append(f"{name}={json.dumps(value)}")
    return args


if __name__ == "__main__":
    profiles = tomllib.loads((ROOT / "Cargo.toml").read_text()).get("profile", {})
    for arg in flatten("profile", profiles):
        print("--config")
        print(arg)
