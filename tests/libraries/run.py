#!/usr/bin/env python3
"""Runs the library battery: each library's own upstream test suite under the
native lua5.4 and inside moonbox, and compares the two.

For every library in manifest.toml it runs `lua5.4 ENTRY` (cwd = the
library's cwd, LUA_PATH from the manifest, no C modules), then
`MOONBOX run ENTRY --module NAME=PATH ...` in the same cwd, and compares exit
status and stdout (after the manifest's normalisations, such as table
addresses). A library passes in moonbox when the native run succeeded and
moonbox gave the same status and the same stdout.

Exit status: 0 when every library did what its `expect` says; 1 when one
did not (a library expected to fail that now passes counts too: update the
manifest); 2 when the battery itself is broken (a native run failed, a module
in the manifest does not resolve natively to the file moonbox gets).

    python3 tests/libraries/run.py [--moonbox PATH] [--only NAME] [--verbose]
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TIMEOUT = 60  # seconds, each run
DIFF_LINES = 30


def load_manifest(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def tree_modules(root):
    """Every .lua file under root as a module: a/b.lua is a.b, a/init.lua is a."""
    out = {}
    for p in sorted(root.rglob("*.lua")):
        rel = p.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "init":
            parts.pop()
        out[".".join(parts)] = p
    return out


def searchpath(name, templates, cwd):
    """package.searchpath: the first template whose file exists."""
    name = name.replace(".", "/")
    for t in templates:
        p = cwd / t.replace("?", name)
        if p.is_file():
            return p
    return None


class Library:
    def __init__(self, spec, manifest):
        self.name = spec["name"]
        self.kind = spec.get("kind", "")
        self.dir = HERE / spec["dir"]
        self.cwd = (self.dir / spec.get("cwd", ".")).resolve()
        self.entry = spec["entry"]
        self.expect = spec.get("expect", "pass")
        self.allow = list(spec.get("allow", []))
        if self.allow and not spec.get("allow_reason"):
            raise SystemExit(f"manifest: {self.name}: allow needs an allow_reason")
        self.reason = spec.get("reason", "")
        self.known_error = spec.get("error", "")
        if self.expect not in ("pass", "fail"):
            raise SystemExit(f"manifest: {self.name}: expect must be 'pass' or 'fail'")
        if self.expect == "fail" and not self.reason:
            raise SystemExit(f"manifest: {self.name}: expect = 'fail' needs a reason")
        # LUA_PATH templates, relative to cwd; group paths are relative to HERE.
        self.path = list(spec.get("path", []))
        # Modules: name -> absolute file.
        self.modules = {}
        for group in spec.get("uses", []):
            g = manifest["groups"][group]
            for t in g.get("path", []):
                self.path.append(os.path.relpath(HERE / t, self.cwd))
            for tree in g.get("trees", []):
                self.modules.update(tree_modules(HERE / tree))
        for name, rel in spec.get("modules", {}).items():
            self.modules[name] = (self.cwd / rel).resolve()
        # Files mounted in the session (paths relative to cwd), under the
        # name the script opens them by: the sandbox's working directory is
        # the root of its files, where a leading ../ stays at the root.
        self.files = {}
        for rel in spec.get("files", []):
            name = os.path.normpath("/" + rel).lstrip("/")
            self.files[name] = (self.cwd / rel).resolve()
        self.normalize = [(re.compile(p), r) for p, r in manifest.get("normalize", [])]
        self.normalize += [(re.compile(p), r) for p, r in spec.get("normalize", [])]

    def check(self):
        """Every module must be what lua5.4 finds through LUA_PATH."""
        problems = []
        if not (self.cwd / self.entry).is_file():
            problems.append(f"entry {self.entry} not found in {self.cwd}")
        for name, file in self.files.items():
            if not file.is_file():
                problems.append(f"file {name}: {file} does not exist")
        for name, file in self.modules.items():
            if not file.is_file():
                problems.append(f"module {name}: {file} does not exist")
                continue
            found = searchpath(name, self.path, self.cwd)
            if found is None or found.resolve() != file.resolve():
                problems.append(f"module {name}: moonbox gets {os.path.relpath(file, self.cwd)}, "
                                f"lua5.4 finds {found and os.path.relpath(found, self.cwd)}")
        return problems

    def norm(self, text):
        for pattern, repl in self.normalize:
            text = pattern.sub(repl, text)
        return text


class Run:
    def __init__(self, argv, cwd, env=None):
        start = time.monotonic()
        try:
            p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=TIMEOUT)
            self.rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            self.rc, out, err = "timeout", e.stdout or b"", (e.stderr or b"") + \
                f"\n(run.py: killed after {TIMEOUT} s)".encode()
        self.seconds = time.monotonic() - start
        self.stdout = out.decode("utf-8", "surrogateescape")
        self.stderr = err.decode("utf-8", "replace")

    @property
    def status(self):
        if self.rc == 0:
            return "ok"
        return "timeout" if self.rc == "timeout" else f"exit {self.rc}"


def native_env(lib):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LUA_")}
    lua_path = ";".join(lib.path)
    env["LUA_PATH"] = env["LUA_PATH_5_4"] = lua_path
    env["LUA_CPATH"] = env["LUA_CPATH_5_4"] = "/nonexistent/?.so"  # pure Lua only
    return env


def moonbox_argv(moonbox, lib, manifest, allow):
    argv = [str(moonbox), "run", lib.entry, *manifest.get("moonbox", {}).get("args", [])]
    for name in [*lib.allow, *allow]:
        argv += ["--allow", name]
    for name, file in sorted(lib.modules.items()):
        argv += ["--module", f"{name}={os.path.relpath(file, lib.cwd)}"]
    for name, file in sorted(lib.files.items()):
        argv += ["--file", f"{name}={os.path.relpath(file, lib.cwd)}"]
    return argv


def first_error(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[0] if lines else "(nothing on stderr)"


def clip(line, width=160):
    return line if len(line) <= width else line[:width] + "..."


def indent(text, prefix="    "):
    return "\n".join(prefix + line for line in text.splitlines())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--moonbox", default=str(REPO / "target/debug/moonbox"),
                    help="the moonbox binary (default: target/debug/moonbox)")
    ap.add_argument("--lua", default="lua5.4", help="the native interpreter (default: lua5.4)")
    ap.add_argument("--only", action="append", metavar="NAME", help="run only this library (repeatable)")
    ap.add_argument("--verbose", action="store_true", help="print both runs' whole stdout and stderr")
    ap.add_argument("--native-only", action="store_true", help="run only lua5.4 (checks the battery itself)")
    ap.add_argument("--allow", action="append", default=[], metavar="NAME",
                    help="pass --allow NAME to moonbox (repeatable); results are then "
                         "reported but not held against `expect`")
    ap.add_argument("--manifest", default=str(HERE / "manifest.toml"))
    args = ap.parse_args()

    manifest = load_manifest(args.manifest)
    libs = [Library(spec, manifest) for spec in manifest["library"]]
    if args.only:
        unknown = set(args.only) - {lib.name for lib in libs}
        if unknown:
            raise SystemExit(f"--only: no library named {', '.join(sorted(unknown))}")
        libs = [lib for lib in libs if lib.name in args.only]
    moonbox = Path(args.moonbox).resolve()
    if not args.native_only and not moonbox.is_file():
        raise SystemExit(f"no moonbox binary at {moonbox} (build it, or pass --moonbox PATH)")

    if not args.native_only:
        try:
            version = subprocess.run([str(moonbox), "--version"], capture_output=True,
                                     text=True, timeout=TIMEOUT).stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as e:
            version = f"(--version failed: {e})"
        built = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(moonbox.stat().st_mtime))
        print(f"moonbox: {moonbox} ({version}, built {built})")

    broken, unexpected = [], []
    total_native = total_moonbox = 0.0
    width = max(len(lib.name) for lib in libs)
    for lib in libs:
        problems = lib.check()
        if problems:
            broken.append(lib.name)
            print(f"{lib.name:<{width}}  manifest error")
            print(indent("\n".join(problems)))
            continue
        native = Run([args.lua, lib.entry], lib.cwd, native_env(lib))
        total_native += native.seconds
        if args.native_only:
            print(f"{lib.name:<{width}}  native {native.status:<8} ({native.seconds:.2f} s)")
            if native.rc != 0:
                broken.append(lib.name)
                print(indent(native.stderr.strip()))
            elif args.verbose:
                print(indent(native.stdout))
            continue
        box = Run(moonbox_argv(moonbox, lib, manifest, args.allow), lib.cwd)
        total_moonbox += box.seconds
        n_out, b_out = lib.norm(native.stdout), lib.norm(box.stdout)
        same = native.rc == box.rc and n_out == b_out
        passes = native.rc == 0 and same
        print(f"{lib.name:<{width}}  native {native.status:<8} moonbox {box.status:<8} "
              f"{'identical' if same else 'DIFFERENT':<9}  "
              f"({native.seconds:.2f} s / {box.seconds:.2f} s)")
        if native.rc != 0:
            broken.append(lib.name)
            print("    the native run failed: the battery entry is broken")
            print(indent(native.stderr.strip()))
        if not same or args.verbose:
            if native.rc != box.rc:
                print(f"    exit status: native {native.rc}, moonbox {box.rc}")
            if box.stderr.strip():
                print("    moonbox stderr: " + (box.stderr.strip() if args.verbose
                                                 else first_error(box.stderr)))
            if n_out != b_out:
                n_lines, b_lines = n_out.splitlines(), b_out.splitlines()
                i = next((i for i, (a, b) in enumerate(zip(n_lines, b_lines)) if a != b),
                         min(len(n_lines), len(b_lines)))
                print(f"    first difference, stdout line {i + 1}:")
                print("      lua5.4 : " + (clip(n_lines[i]) if i < len(n_lines) else "(end of output)"))
                print("      moonbox: " + (clip(b_lines[i]) if i < len(b_lines) else "(end of output)"))
                for line in b_lines[i + 1:i + 3]:
                    print("               " + clip(line))
                if i == len(b_lines) and b_lines == n_lines[:i]:
                    print("    moonbox printed nothing on stdout" if i == 0 else
                          f"    moonbox's stdout stops after line {i} of lua5.4's {len(n_lines)}; "
                          "the lines before are identical")
                    diff = []
                else:
                    diff = [clip(line) for line in difflib.unified_diff(
                        n_lines, b_lines, "lua5.4", "moonbox", lineterm="", n=1)]
                shown = diff if args.verbose else diff[:DIFF_LINES]
                if shown:
                    print(indent("\n".join(shown)))
                if len(shown) < len(diff):
                    print(f"    ... ({len(diff) - len(shown)} more diff lines; --verbose for all)")
            if args.verbose and native.stderr.strip():
                print("    lua5.4 stderr:\n" + indent(native.stderr.strip(), "      "))
        if args.verbose:
            print("    native stdout:\n" + indent(native.stdout, "      "))
            print("    moonbox stdout:\n" + indent(box.stdout, "      "))
        if args.allow or native.rc != 0:
            continue
        if lib.expect == "pass" and not passes:
            unexpected.append(lib.name)
            print(f"    UNEXPECTED: expected to pass in moonbox")
        elif lib.expect == "fail" and passes:
            unexpected.append(lib.name)
            print(f"    UNEXPECTED: now passes in moonbox; set expect = \"pass\" for "
                  f"{lib.name} in manifest.toml (was: {lib.reason})")
        elif lib.expect == "fail":
            print(f"    expected failure: {lib.reason}")
            if lib.known_error and lib.known_error not in box.stderr + box.stdout:
                print(f"    note: the first error changed; the manifest has: {lib.known_error}")

    print(f"time: lua5.4 {total_native:.2f} s" +
          ("" if args.native_only else f", moonbox {total_moonbox:.2f} s"))
    if broken:
        print(f"battery broken for: {', '.join(broken)}")
        return 2
    if unexpected:
        print(f"unexpected results: {', '.join(unexpected)}")
        return 1
    if args.allow:
        print("--allow given: results not checked against the manifest")
    return 0


if __name__ == "__main__":
    sys.exit(main())
