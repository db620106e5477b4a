#!/usr/bin/env python3
"""Tests for check.py: a checker that passed everything would let a host
that disagrees with the others go unnoticed, so its failure paths are
tested as hard as its passing one.

Run: python3 runtimes/test_check.py
"""

import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import check

CASES = {
    "cases": [
        {"name": "float", "script": "return 1.0", "expect": {"values": [1.0]}},
        {"name": "printed", "script": "print('x') return true",
         "expect": {"values": [True], "output": ["x"]}},
        {"name": "limit", "script": "while true do end",
         "expect": {"error": "instruction-limit", "line": 1}},
    ]
}

GOOD = [
    {"name": "float", "ok": True, "values": "[1.0]", "output": [], "stats": {"instructions": 0}},
    {"name": "printed", "ok": True, "values": "[true]", "output": ["x"], "stats": {"instructions": 0}},
    {"name": "limit", "ok": False, "kind": "instruction-limit", "message": "main.lua:1: ...",
     "chunk": "main.lua", "line": 1, "output": [], "stats": {"instructions": 101000}},
]


class CheckTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.cases = self.write("cases.json", json.dumps(CASES))

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def results(self, name, lines):
        return self.write(name, "".join(json.dumps(line) + "\n" for line in lines))

    def run_check(self, *hosts):
        out = io.StringIO()
        with redirect_stdout(out):
            status = check.main(["check.py", self.cases, *hosts])
        return status, out.getvalue()

    def test_identical_hosts_that_meet_the_expectations_pass(self):
        a = self.results("a.jsonl", GOOD)
        b = self.results("b.jsonl", [dict(reversed(list(line.items()))) for line in GOOD])
        status, out = self.run_check(f"a={a}", f"b={b}")
        self.assertEqual(status, 0, out)
        self.assertIn("identical results", out)

    def test_an_integer_is_not_a_float(self):
        bad = [dict(GOOD[0], values="[1]"), *GOOD[1:]]
        status, out = self.run_check(f"bad={self.results('bad.jsonl', bad)}")
        self.assertEqual(status, 1)
        self.assertIn("float: expected values [1.0], got [1]", out)

    def test_true_is_not_one(self):
        self.assertFalse(check.strictly_equal(True, 1))
        self.assertFalse(check.strictly_equal([1], [1.0]))
        self.assertTrue(check.strictly_equal({"a": [1.5]}, {"a": [1.5]}))

    def test_a_wrong_kind_line_or_output_fails(self):
        for field, value, needle in [
            ("kind", "timeout", "expected a instruction-limit error"),
            ("line", 2, "expected line 1"),
            ("output", ["y"], "expected output []"),
        ]:
            bad = [*GOOD[:2], dict(GOOD[2], **{field: value})]
            status, out = self.run_check(f"bad={self.results('bad.jsonl', bad)}")
            self.assertEqual(status, 1, field)
            self.assertIn(needle, out)

    def test_missing_lines_fail(self):
        status, out = self.run_check(f"short={self.results('short.jsonl', GOOD[:2])}")
        self.assertEqual(status, 1)
        self.assertIn("2 result lines for 3 cases", out)

    def test_hosts_that_differ_only_in_stats_fail(self):
        a = self.results("a.jsonl", GOOD)
        other = [*GOOD[:2], dict(GOOD[2], stats={"instructions": 102000})]
        b = self.results("b.jsonl", other)
        status, out = self.run_check(f"a={a}", f"b={b}")
        self.assertEqual(status, 1)
        self.assertIn("b differs from a", out)

    def test_bad_arguments_print_usage(self):
        err = io.StringIO()
        with redirect_stderr(err):
            self.assertEqual(check.main(["check.py", self.cases, "no-equals-sign"]), 2)
        self.assertIn("Usage: check.py", err.getvalue())


if __name__ == "__main__":
    unittest.main()
