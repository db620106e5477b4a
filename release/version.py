#!/usr/bin/env python3
"""The release's one version, and every place that must agree with it.

The version is `[workspace.package] version` in the root Cargo.toml. The
Python wheel takes it from there (maturin reads the crate's version); the
other places cannot read it and are checked:

- each publishable crate's requirement in `[workspace.dependencies]`
  (`moonbox = { path = "host", version = "X" }`), which crates.io needs;
- `packages/node/package.json` and each platform package under
  `packages/node/npm/` (release/dist.sh adds the `optionalDependencies` on
  them to the packed copy: in the checkout they would send `npm ci` to the
  registry for a package that only a release publishes);
- CHANGELOG.md, which has a `## X` section for it.

    python3 release/version.py            print the version
    python3 release/version.py --check    exit 1 naming each place that differs
    python3 release/version.py --set X    write X into every place (not the
                                          CHANGELOG, whose section is prose)
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CARGO = ROOT / "Cargo.toml"
NODE = ROOT / "packages" / "node"
CHANGELOG = ROOT / "CHANGELOG.md"
# The crates the `moonbox` command is built from, in dependency order.
CRATES = ("moonbox", "moonbox-service", "moonbox-mcp", "moonbox-serve", "moonbox-cli")
SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$")


def version() -> str:
    return tomllib.loads(CARGO.read_text())["workspace"]["package"]["version"]


def node_manifests() -> list[Path]:
    return [NODE / "package.json", *sorted((NODE / "npm").glob("*/package.json"))]


def differences(want: str) -> list[str]:
    """Each place that does not say `want`, as a sentence."""
    found = []
    deps = tomllib.loads(CARGO.read_text())["workspace"]["dependencies"]
    for crate in CRATES:
        have = deps.get(crate, {}).get("version") if isinstance(deps.get(crate), dict) else None
        if have != want:
            found.append(f"Cargo.toml: [workspace.dependencies] {crate} has version {have!r}, not {want!r}")
    manifests = node_manifests()
    if len(manifests) < 2:
        found.append("packages/node/npm: no platform package")
    for path in manifests:
        manifest = json.loads(path.read_text())
        if manifest.get("version") != want:
            found.append(f"{path.relative_to(ROOT)}: version {manifest.get('version')!r}, not {want!r}")
    if not re.search(rf"^## {re.escape(want)}\b", CHANGELOG.read_text(), re.MULTILINE):
        found.append(f"CHANGELOG.md: no '## {want}' section")
    return found


def set_version(new: str) -> None:
    old = version()
    text = CARGO.read_text()
    text = re.sub(r'(\[workspace\.package\][^\[]*?\nversion = )"[^"]*"', rf'\g<1>"{new}"', text, count=1)
    for crate in CRATES:
        text = re.sub(rf'(\n{re.escape(crate)} = \{{[^}}\n]*version = )"[^"]*"', rf'\g<1>"{new}"', text)
    CARGO.write_text(text)
    for path in node_manifests():
        manifest = json.loads(path.read_text())
        manifest["version"] = new
        path.write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"{old} -> {new}; add a '## {new}' section to CHANGELOG.md, then run `cargo update -w`, `npm install` in packages/node and `just mcp-transcript` (the transcript shows the version)")


def main(argv: list[str]) -> int:
    if argv == []:
        print(version())
        return 0
    if argv == ["--check"]:
        want = version()
        found = differences(want)
        for line in found:
            print(f"version: {line}", file=sys.stderr)
        if not found:
            print(f"version {want}: the crates, the wheel, the npm packages and the CHANGELOG agree")
        return 1 if found else 0
    if len(argv) == 2 and argv[0] == "--set":
        if not SEMVER.match(argv[1]):
            print(f"version: '{argv[1]}' is not a version such as 0.6.0", file=sys.stderr)
            return 2
        set_version(argv[1])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
