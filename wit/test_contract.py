"""Tests of wit/contract.py: the committed copies match the declaration, and
a difference planted in any copy, in the declaration or in the WIT fails the
check with a message that names the file.

    python3 -m unittest wit/test_contract.py
"""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contract  # noqa: E402

ROOT = contract.ROOT


class ContractCheck(unittest.TestCase):
    tmp: tempfile.TemporaryDirectory[str] | None = None

    def setUp(self) -> None:
        # A copy of every file the check reads, in a scratch git repository
        # (the version scan lists tracked files).
        self.tearDown()
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        paths = [contract.DECLARATION, contract.WIT, *contract.RUST_COPIES, contract.PYTHON_COPY, contract.JS_COPY, *contract.REGIONS]
        for path in paths:
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / path, target)
        subprocess.run(["git", "init", "-q"], cwd=self.root, check=True)
        subprocess.run(["git", "add", "."], cwd=self.root, check=True)

    def tearDown(self) -> None:
        if self.tmp is not None:
            self.tmp.cleanup()
            self.tmp = None

    def check(self) -> tuple[int, str]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = contract.main(["--check", "--root", str(self.root)])
        return code, err.getvalue()

    def plant(self, path: str, old: str, new: str) -> None:
        target = self.root / path
        text = target.read_text()
        self.assertIn(old, text, f"{path} no longer holds {old!r}; update the test")
        target.write_text(text.replace(old, new, 1))

    def test_the_committed_copies_match(self) -> None:
        self.assertEqual(self.check(), (0, ""))

    def test_a_changed_rust_bound_fails(self) -> None:
        for path in contract.RUST_COPIES:
            with self.subTest(path=path):
                self.setUp()
                self.plant(path, "max: 100,", "max: 101,")
                code, err = self.check()
                self.assertEqual(code, 1)
                self.assertIn(f"{path}: differs from wit/contract.toml", err)

    def test_a_changed_python_or_javascript_table_fails(self) -> None:
        self.plant(contract.PYTHON_COPY, "LOG_EVENT_BYTES = 32", "LOG_EVENT_BYTES = 33")
        self.plant(contract.JS_COPY, "  'timeout',\n", "")
        code, err = self.check()
        self.assertEqual(code, 1)
        self.assertIn(f"{contract.PYTHON_COPY}: differs", err)
        self.assertIn(f"{contract.JS_COPY}: differs", err)

    def test_a_changed_region_fails_and_a_missing_one_is_named(self) -> None:
        self.plant("docs/wit.md", "| `timeout` | the host | yes | 3 |", "| `timeout` | the host | no | 3 |")
        code, err = self.check()
        self.assertEqual(code, 1)
        self.assertIn("docs/wit.md: differs", err)
        self.setUp()
        self.plant("packages/node/lib/index.d.ts", "// contract:begin error-kind-type", "// (removed)")
        code, err = self.check()
        self.assertEqual(code, 1)
        self.assertIn("missing the contract region(s) error-kind-type", err)

    def test_a_wit_that_differs_from_the_declaration_fails(self) -> None:
        self.plant(contract.WIT, "        invalid-value,\n", "        invalid-value,\n        too-slow,\n")
        self.plant(contract.WIT, "        max-value-depth: u32,", "        max-value-depth: u64,")
        code, err = self.check()
        self.assertEqual(code, 1)
        self.assertIn("error-kind has", err)
        self.assertIn("limits has", err)

    def test_another_package_version_anywhere_fails(self) -> None:
        self.plant(contract.WIT, "package moonbox:sandbox@", "package moonbox:sandbox@9")
        # Spelled in two parts so that this file does not name another version.
        (self.root / "notes.md").write_text("links moonbox:sandbox/lua" + "@0.1.0\n")
        subprocess.run(["git", "add", "notes.md"], cwd=self.root, check=True)
        code, err = self.check()
        self.assertEqual(code, 1)
        self.assertIn("wit/moonbox.wit: the package is", err)
        self.assertIn("notes.md:1: names version 0.1.0", err)

    def test_a_malformed_declaration_is_refused_by_name(self) -> None:
        self.plant(contract.DECLARATION, "default = 64\nmin = 1\nmax = 100", "default = 640\nmin = 1\nmax = 100")
        code, err = self.check()
        self.assertEqual(code, 1)
        self.assertIn("limit max_value_depth: the default is outside min..max", err)

    def test_writing_repairs_every_copy(self) -> None:
        self.plant(contract.PYTHON_COPY, "LOG_EVENT_BYTES = 32", "LOG_EVENT_BYTES = 33")
        self.plant("README.md", "| `max_call_depth` | 1,000 |", "| `max_call_depth` | 2,000 |")
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(contract.main(["--root", str(self.root)]), 0)
        self.assertEqual(self.check(), (0, ""))


if __name__ == "__main__":
    unittest.main()
