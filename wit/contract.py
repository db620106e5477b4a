#!/usr/bin/env python3
"""Writes every host's copy of the contract's rules from wit/contract.toml,
or with --check, fails when a copy differs from it.

    python3 wit/contract.py           # rewrite the copies
    python3 wit/contract.py --check   # exit 1 and name each copy that drifted

A copy is either a whole generated file or a region of a hand-written file
between two marker lines (`contract:begin NAME` and `contract:end`, in the
file's comment syntax). --check also reads wit/moonbox.wit: its package, the
cases of `error-kind` and the fields of `limits` must be the declaration's,
and every `moonbox:sandbox...@VERSION` a tracked file names must be the
declared version.
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DECLARATION = "wit/contract.toml"
WIT = "wit/moonbox.wit"
HEADER = "Generated from wit/contract.toml by `python3 wit/contract.py`; do not edit."

# Where each copy lives. Whole files first, then regions of hand-written files.
# One Rust copy, in the crate (which must be self-contained to publish); the
# guest and the wasmtime-CLI host's crates include the same file by path.
RUST_COPIES = ("host/src/contract.rs",)
PYTHON_COPY = "runtimes/python-wasmtime/src/moonbox/_contract.py"
JS_COPY = "runtimes/node-jco/src/contract.js"
REGIONS = {
    "runtimes/node-jco/src/index.d.ts": ("error-kind-type",),
    "packages/node/lib/index.d.ts": ("error-kind-type",),
    "docs/wit.md": ("error-kinds", "limits"),
    "README.md": ("limits",),
}
# Files that name the WIT package's version for history, not for use.
VERSION_HISTORY = ("CHANGELOG.md",)


class ContractError(Exception):
    """The declaration is malformed."""


@dataclass(frozen=True)
class Kind:
    name: str
    guest: bool
    limit: bool
    exit_code: int
    doc: str


@dataclass(frozen=True)
class Limit:
    name: str
    kind: str | None
    guest: bool
    type: str
    unit: str
    default: int | None
    derived: str | None
    min: int
    max: int
    doc: str


@dataclass(frozen=True)
class Constant:
    name: str
    value: int | str
    doc: str


@dataclass(frozen=True)
class Contract:
    package: str
    kinds: tuple[Kind, ...]
    limits: tuple[Limit, ...]
    constants: tuple[Constant, ...]

    @property
    def version(self) -> str:
        return self.package.rpartition("@")[2]


def load(text: str) -> Contract:
    """Reads and checks the declaration."""
    data = tomllib.loads(text)
    package = data.get("package")
    if not isinstance(package, str) or not re.fullmatch(r"moonbox:sandbox@\d+\.\d+\.\d+", package):
        raise ContractError("package must be moonbox:sandbox@MAJOR.MINOR.PATCH")
    kinds = []
    for k in data.get("error-kind", []):
        origin = k["origin"]
        if origin not in ("guest", "host"):
            raise ContractError(f"error kind {k['name']}: origin must be guest or host")
        if not 1 <= k["exit-code"] <= 125:
            raise ContractError(f"error kind {k['name']}: exit-code must be within 1..125")
        kinds.append(Kind(k["name"], origin == "guest", k["limit"], k["exit-code"], k["doc"]))
    names = [k.name for k in kinds]
    if len(set(names)) != len(names):
        raise ContractError("error kinds must be unique")
    guest = [k.guest for k in kinds]
    if guest != sorted(guest, reverse=True):
        raise ContractError("the guest's error kinds must come before the host's")
    limits = []
    for entry in data.get("limit", []):
        name = entry["name"]
        if entry["enforced-by"] not in ("guest", "host"):
            raise ContractError(f"limit {name}: enforced-by must be guest or host")
        if entry["type"] not in ("u32", "u64"):
            raise ContractError(f"limit {name}: type must be u32 or u64")
        if ("default" in entry) == ("derived" in entry):
            raise ContractError(f"limit {name}: give exactly one of default and derived")
        kind = entry.get("kind")
        if kind is not None and kind not in names:
            raise ContractError(f"limit {name}: unknown kind {kind}")
        limit = Limit(
            name,
            kind,
            entry["enforced-by"] == "guest",
            entry["type"],
            entry["unit"],
            entry.get("default"),
            entry.get("derived"),
            entry["min"],
            entry["max"],
            entry["doc"],
        )
        top = (1 << 32) - 1 if limit.type == "u32" else (1 << 64) - 1
        if not 1 <= limit.min <= limit.max <= top:
            raise ContractError(f"limit {name}: need 1 <= min <= max <= the type's largest value")
        if limit.default is not None and not limit.min <= limit.default <= limit.max:
            raise ContractError(f"limit {name}: the default is outside min..max")
        limits.append(limit)
    guest = [l.guest for l in limits]
    if guest != sorted(guest, reverse=True):
        raise ContractError("the guest's limits must come before the host's")
    constants = tuple(Constant(c["name"], c["value"], c["doc"]) for c in data.get("constant", []))
    return Contract(package, tuple(kinds), tuple(limits), constants)


# --- Rendering --------------------------------------------------------------


def upper(name: str) -> str:
    return name.replace("-", "_").upper()


def camel(name: str) -> str:
    head, *rest = name.replace("-", "_").split("_")
    return head + "".join(p.capitalize() for p in rest)


def kebab(name: str) -> str:
    return name.replace("_", "-")


def rust_int(n: int) -> str:
    return f"{n:_}"


def rust_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rust_doc(text: str, indent: str = "") -> list[str]:
    return [f"{indent}/// {line}" for line in wrap(text, 76 - len(indent))]


def wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def limit_suffix(limit: Limit) -> str:
    return "_MS" if limit.unit == "milliseconds" else ""


def render_rust(c: Contract) -> str:
    out = [
        "//! The contract's rules: error kinds, limits and shared constants.",
        "//!",
        f"//! {HEADER}",
        "",
        "#![allow(dead_code, reason = \"each host reads the part of the table it needs\")]",
        "",
        "/// The WIT package the rules belong to.",
        f"pub(crate) const PACKAGE: &str = {rust_str(c.package)};",
        "",
        "/// One error kind's rule.",
        "#[derive(Clone, Copy, Debug, PartialEq, Eq)]",
        "pub(crate) struct ErrorKindRule {",
        "    /// The name in `snake_case`, as reports and `error[...]` lines spell it.",
        "    pub(crate) name: &'static str,",
        "    /// Whether the guest reports it (a case of the WIT `error-kind`).",
        "    pub(crate) guest: bool,",
        "    /// Whether a limit stopped the script, rather than an error in it.",
        "    pub(crate) limit: bool,",
        "    /// The exit status of `moonbox run` when an eval ends with it.",
        "    pub(crate) exit_code: u8,",
        "}",
        "",
        "/// Every error kind, the guest's first, in the order of the WIT enum.",
        f"pub(crate) const ERROR_KINDS: [ErrorKindRule; {len(c.kinds)}] = [",
    ]
    for k in c.kinds:
        out += [
            "    ErrorKindRule {",
            f"        name: {rust_str(k.name)},",
            f"        guest: {str(k.guest).lower()},",
            f"        limit: {str(k.limit).lower()},",
            f"        exit_code: {k.exit_code},",
            "    },",
        ]
    out += [
        "];",
        "",
        "/// How many of [`ERROR_KINDS`] the guest reports.",
        f"pub(crate) const GUEST_ERROR_KINDS: usize = {sum(k.guest for k in c.kinds)};",
        "",
        "/// One limit's rule. Values are in the limit's unit.",
        "#[derive(Clone, Copy, Debug, PartialEq, Eq)]",
        "pub(crate) struct LimitRule {",
        "    /// The name in `snake_case` (the WIT field's name in kebab-case).",
        "    pub(crate) name: &'static str,",
        "    /// Whether the guest enforces it (a field of the WIT `limits`).",
        "    pub(crate) guest: bool,",
        "    /// What it counts.",
        "    pub(crate) unit: &'static str,",
        "    /// The default, or `None` when it is derived from other limits.",
        "    pub(crate) default: Option<u64>,",
        "    /// The least value accepted.",
        "    pub(crate) min: u64,",
        "    /// The most value accepted.",
        "    pub(crate) max: u64,",
        "}",
        "",
        "/// Every limit, the guest's first, in the order of the WIT record.",
        f"pub(crate) const LIMITS: [LimitRule; {len(c.limits)}] = [",
    ]
    for l in c.limits:
        default = f"Some({rust_int(l.default)})" if l.default is not None else "None"
        out += [
            "    LimitRule {",
            f"        name: {rust_str(l.name)},",
            f"        guest: {str(l.guest).lower()},",
            f"        unit: {rust_str(l.unit)},",
            f"        default: {default},",
            f"        min: {rust_int(l.min)},",
            f"        max: {rust_int(l.max)},",
            "    },",
        ]
    out += [
        "];",
        "",
        "/// How many of [`LIMITS`] the guest enforces.",
        f"pub(crate) const GUEST_LIMITS: usize = {sum(l.guest for l in c.limits)};",
        "",
    ]
    for l in c.limits:
        name, suffix = upper(l.name), limit_suffix(l)
        if l.default is not None:
            out += rust_doc(f"Default `{l.name}`, in {l.unit}.")
            out += [f"pub(crate) const DEFAULT_{name}{suffix}: {l.type} = {rust_int(l.default)};"]
        out += rust_doc(f"Least `{l.name}`, in {l.unit}.")
        out += [f"pub(crate) const MIN_{name}{suffix}: {l.type} = {rust_int(l.min)};"]
        out += rust_doc(f"Most `{l.name}`, in {l.unit}.")
        out += [f"pub(crate) const MAX_{name}{suffix}: {l.type} = {rust_int(l.max)};"]
    for k in c.constants:
        out += rust_doc(k.doc)
        if isinstance(k.value, str):
            out += [f"pub(crate) const {upper(k.name)}: &str = {rust_str(k.value)};"]
        else:
            out += [f"pub(crate) const {upper(k.name)}: u64 = {rust_int(k.value)};"]
    return "\n".join(out) + "\n"


def py_doc(text: str) -> list[str]:
    return [f"#: {line}" for line in wrap(text, 76)]


def render_python(c: Contract) -> str:
    out = [
        '"""The contract\'s rules: error kinds, limits and shared constants.',
        "",
        f'{HEADER}"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import NamedTuple",
        "",
        "#: The WIT package the rules belong to.",
        f'PACKAGE = "{c.package}"',
        "",
        "#: Every error kind, the guest's first, in the order of the WIT enum.",
        "ERROR_KINDS = (",
        *[f'    "{k.name}",' for k in c.kinds],
        ")",
        "#: The kinds the guest reports.",
        f"GUEST_ERROR_KINDS = ERROR_KINDS[:{sum(k.guest for k in c.kinds)}]",
        "#: The kinds that mean a limit stopped the script.",
        "LIMIT_KINDS = frozenset(",
        "    {",
        *[f'        "{k.name}",' for k in c.kinds if k.limit],
        "    }",
        ")",
        "#: The exit status of `moonbox run` for each kind.",
        "EXIT_CODES = {",
        *[f'    "{k.name}": {k.exit_code},' for k in c.kinds],
        "}",
        "",
        "",
        "class LimitRule(NamedTuple):",
        '    """One limit\'s rule; `default` is None when it is derived."""',
        "",
        "    unit: str",
        "    default: int | None",
        "    min: int",
        "    max: int",
        "    guest: bool",
        "",
        "",
        "#: Every limit, the guest's first, in the order of the WIT record.",
        "LIMITS = {",
    ]
    for l in c.limits:
        out.append(f'    "{l.name}": LimitRule("{l.unit}", {l.default!r}, {l.min}, {l.max}, {l.guest}),')
    out += ["}", ""]
    for k in c.constants:
        out += py_doc(k.doc)
        out.append(f"{upper(k.name)} = {k.value!r}" if isinstance(k.value, str) else f"{upper(k.name)} = {k.value:_}")
    return "\n".join(out) + "\n"


def js_int(n: int) -> str:
    return f"{n}n"


def render_js(c: Contract) -> str:
    out = [
        "// The contract's rules: error kinds, limits and shared constants.",
        f"// {HEADER}",
        "",
        "/** The WIT package the rules belong to. */",
        f"export const PACKAGE = '{c.package}';",
        "",
        "/** Every error kind, the guest's first, in the order of the WIT enum. */",
        "export const ERROR_KINDS = Object.freeze([",
        *[f"  '{k.name}'," for k in c.kinds],
        "]);",
        "",
        "/** The kinds the guest reports. */",
        f"export const GUEST_ERROR_KINDS = Object.freeze(ERROR_KINDS.slice(0, {sum(k.guest for k in c.kinds)}));",
        "",
        "/** The kinds that mean a limit stopped the script. */",
        "export const LIMIT_KINDS = new Set([",
        *[f"  '{k.name}'," for k in c.kinds if k.limit],
        "]);",
        "",
        "/** The exit status of `moonbox run` for each kind. */",
        "export const EXIT_CODES = Object.freeze({",
        *[f"  {k.name}: {k.exit_code}," for k in c.kinds],
        "});",
        "",
        "/**",
        " * Every limit, the guest's first, keyed by its camelCase name. Bounds are",
        " * BigInts; `default` is null when the limit is derived from others.",
        " */",
        "export const LIMITS = Object.freeze({",
    ]
    for l in c.limits:
        default = js_int(l.default) if l.default is not None else "null"
        out.append(
            f"  {camel(l.name)}: Object.freeze({{ name: '{l.name}', unit: '{l.unit}', default: {default}, "
            f"min: {js_int(l.min)}, max: {js_int(l.max)}, guest: {str(l.guest).lower()} }}),"
        )
    out += ["});", ""]
    for k in c.constants:
        out.append(f"/** {k.doc} */")
        value = f"'{k.value}'" if isinstance(k.value, str) else str(k.value)
        out.append(f"export const {upper(k.name)} = {value};")
    return "\n".join(out) + "\n"


def human(n: int, unit: str) -> str:
    if unit == "bytes":
        for size, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if n >= size and n % size == 0:
                return f"{n // size} {name}"
        return f"{n:,} B" if n != 1 else "1 B"
    if unit == "milliseconds":
        if n % 86_400_000 == 0:
            days = n // 86_400_000
            return f"{days} day" + ("s" if days > 1 else "")
        if n % 1000 == 0:
            return f"{n // 1000} s"
        return f"{n:,} ms"
    if n >= 1 << 32 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def derived_text(text: str, c: Contract) -> str:
    values = {k.name: k.value for k in c.constants}

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in values:
            v = values[name]
            if name.endswith("-bytes") and isinstance(v, int):
                return human(v, "bytes")
            return f"{v:,}" if isinstance(v, int) else v
        return f"`{name}`"

    return re.sub(r"`([a-z_-]+)`", sub, text)


def render_region(name: str, c: Contract, path: str) -> list[str]:
    if name == "error-kind-type":
        lines = ["export type ErrorKind ="]
        lines += [f"  | '{k.name}'" + (";" if i == len(c.kinds) - 1 else "") for i, k in enumerate(c.kinds)]
        return lines
    if name == "error-kinds":
        lines = [
            "| Kind | Reported by | A limit | `moonbox run` exits with |",
            "| --- | --- | --- | --- |",
        ]
        for k in c.kinds:
            origin = "the guest (WIT `error-kind`)" if k.guest else "the host"
            lines.append(f"| `{k.name}` | {origin} | {'yes' if k.limit else 'no'} | {k.exit_code} |")
        return lines
    if name == "limits" and path == "README.md":
        lines = ["| limit | default | accepted | past it |", "|---|---|---|---|"]
        for l in c.limits:
            default = human(l.default, l.unit) if l.default is not None else derived_text(l.derived or "", c)
            bounds = f"{human(l.min, l.unit)} to {human(l.max, l.unit)}"
            kind = f"`{l.kind}`" if l.kind else "calls wait"
            lines.append(f"| `{l.name}` | {default} | {bounds} | {kind} |")
        return lines
    if name == "limits":
        lines = [
            "| Limit | Enforced by | Unit | Default | Least | Most | Past it |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for l in c.limits:
            field = f"`{kebab(l.name)}`" if l.guest else f"`{l.name}`"
            by = "the guest" if l.guest else "the host"
            default = f"{l.default:,}" if l.default is not None else derived_text(l.derived or "", c)
            kind = f"`{l.kind}`" if l.kind else "calls wait"
            lines.append(f"| {field} | {by} | {l.unit} | {default} | {l.min:,} | {l.max:,} | {kind} |")
        return lines
    raise ContractError(f"{path}: unknown contract region {name}")


MARKER = re.compile(r"contract:(begin|end)(?: ([a-z-]+))?")


def fill_regions(text: str, path: str, c: Contract) -> str:
    """The text with every marked region rendered again."""
    out, lines, i = [], text.split("\n"), 0
    seen = set()
    while i < len(lines):
        line = lines[i]
        out.append(line)
        m = MARKER.search(line)
        i += 1
        if m and m.group(1) == "begin":
            name = m.group(2)
            if name is None:
                raise ContractError(f"{path}:{i}: contract:begin needs a name")
            seen.add(name)
            end = i
            while end < len(lines) and not (MARKER.search(lines[end]) and MARKER.search(lines[end]).group(1) == "end"):
                end += 1
            if end == len(lines):
                raise ContractError(f"{path}:{i}: contract:begin {name} has no contract:end")
            out += render_region(name, c, path)
            out.append(lines[end])
            i = end + 1
    missing = set(REGIONS.get(path, ())) - seen
    if missing:
        raise ContractError(f"{path}: missing the contract region(s) {', '.join(sorted(missing))}")
    return "\n".join(out)


def expected(root: Path, c: Contract) -> dict[str, str]:
    """Every copy's path and the text it should have."""
    files = {p: render_rust(c) for p in RUST_COPIES}
    files[PYTHON_COPY] = render_python(c)
    files[JS_COPY] = render_js(c)
    for path in REGIONS:
        current = (root / path).read_text()
        files[path] = fill_regions(current, path, c)
    return files


# --- Checks on wit/moonbox.wit ----------------------------------------------


def wit_block(text: str, keyword: str, name: str) -> list[tuple[str, str | None]]:
    """The cases of an enum, or the fields and types of a record."""
    m = re.search(rf"^\s*{keyword} {name} \{{(.*?)^\s*\}}", text, re.S | re.M)
    if not m:
        raise ContractError(f"{WIT}: no {keyword} {name}")
    items = []
    for line in m.group(1).split("\n"):
        line = line.strip()
        if not line or line.startswith("//"):
            continue
        fm = re.fullmatch(r"([a-z][a-z0-9-]*)\s*(?::\s*([a-z0-9<>]+))?,", line)
        if not fm:
            raise ContractError(f"{WIT}: cannot read `{line}` in {keyword} {name}")
        items.append((fm.group(1), fm.group(2)))
    return items


def check_wit(root: Path, c: Contract) -> list[str]:
    text = (root / WIT).read_text()
    problems = []
    m = re.search(r"^package ([^;]+);", text, re.M)
    if not m or m.group(1) != c.package:
        problems.append(f"{WIT}: the package is {m.group(1) if m else 'missing'}, the declaration says {c.package}")
    cases = [name for name, _ in wit_block(text, "enum", "error-kind")]
    declared = [kebab(k.name) for k in c.kinds if k.guest]
    if cases != declared:
        problems.append(f"{WIT}: error-kind has {cases}, the declaration's guest kinds are {declared}")
    fields = wit_block(text, "record", "limits")
    declared_fields = [(kebab(l.name), l.type) for l in c.limits if l.guest]
    if fields != declared_fields:
        problems.append(f"{WIT}: limits has {fields}, the declaration's guest limits are {declared_fields}")
    return problems


def check_versions(root: Path, c: Contract) -> list[str]:
    """Every tracked text file that names the package names this version."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True
        ).stdout.split(b"\0")
    except (OSError, subprocess.CalledProcessError):
        return []
    pattern = re.compile(r"moonbox:sandbox(?:/[a-z-]+)?@(\d+\.\d+\.\d+)")
    problems = []
    for raw in listed:
        path = raw.decode()
        if not path or path in VERSION_HISTORY or path.endswith((".wasm", ".lock")):
            continue
        try:
            text = (root / path).read_text()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            for m in pattern.finditer(line):
                if m.group(1) != c.version:
                    problems.append(f"{path}:{n}: names version {m.group(1)}, the package is {c.version}")
    return problems


def run(root: Path, check: bool) -> list[str]:
    """Writes or checks every copy under `root`; returns the problems."""
    c = load((root / DECLARATION).read_text())
    problems = []
    for path, text in expected(root, c).items():
        target = root / path
        current = target.read_text() if target.exists() else None
        if current == text:
            continue
        if check:
            diff = difflib.unified_diff(
                (current or "").splitlines(), text.splitlines(), "committed", "declared", n=0, lineterm=""
            )
            shown = [line for line in diff if not line.startswith(("---", "+++", "@@"))][:6]
            problems.append(f"{path}: differs from {DECLARATION}:\n    " + "\n    ".join(shown))
        else:
            target.write_text(text)
            print(f"wrote {path}")
    problems += check_wit(root, c)
    problems += check_versions(root, c)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if a copy differs; write nothing")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        problems = run(args.root, args.check)
    except (ContractError, KeyError, tomllib.TOMLDecodeError) as e:
        print(f"error: {DECLARATION}: {e}", file=sys.stderr)
        return 1
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    if problems:
        if args.check:
            print("the contract's copies drifted; run `python3 wit/contract.py` and review the diff", file=sys.stderr)
        return 1
    if args.check:
        print(f"contract: every copy matches {DECLARATION}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
