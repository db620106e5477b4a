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
         "expect": {"values": [True], "output": "x\n"}},
        {"name": "limit", "script": "while true do end",
         "expect": {"error": "instruction_limit", "line": 1}},
    ]
}

GOOD = [
    {"name": "float", "ok": True, "values": [1.0], "output": "", "logs": [], "exit_code": None,
     "error": None, "stats": {"instructions": 0}},
    {"name": "printed", "ok": True, "values": [True], "output": "x\n", "logs": [], "exit_code": None,
     "error": None, "stats": {"instructions": 0}},
    {"name": "limit", "ok": False, "values": [], "output": "", "logs": [], "exit_code": None,
     "error": {"kind": "instruction_limit", "message": "main.lua:1: ...", "chunk": "main.lua",
               "line": 1},
     "stats": {"instructions": 101000}},
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
        bad = [dict(GOOD[0], values=[1]), *GOOD[1:]]
        status, out = self.run_check(f"bad={self.results('bad.jsonl', bad)}")
        self.assertEqual(status, 1)
        self.assertIn("float: expected values [1.0], got [1]", out)

    def test_true_is_not_one(self):
        self.assertFalse(check.strictly_equal(True, 1))
        self.assertFalse(check.strictly_equal([1], [1.0]))
        self.assertTrue(check.strictly_equal({"a": [1.5]}, {"a": [1.5]}))

    def test_object_members_must_come_in_the_same_order(self):
        self.assertFalse(check.strictly_equal({"a": 1, "b": 2}, {"b": 2, "a": 1}))
        self.assertTrue(check.strictly_equal({"a": 1, "b": 2}, {"a": 1, "b": 2}))

    def test_integers_are_compared_whole(self):
        self.assertFalse(check.strictly_equal(2**53, 2**53 + 1))
        self.assertTrue(check.strictly_equal(2**63 - 1, 2**63 - 1))
        self.assertFalse(check.strictly_equal(0.0, -0.0))

    def test_a_wrong_kind_line_or_output_fails(self):
        for field, value, needle in [
            ("kind", "timeout", "expected a instruction_limit error"),
            ("line", 2, "expected line 1"),
        ]:
            bad = [*GOOD[:2], dict(GOOD[2], error=dict(GOOD[2]["error"], **{field: value}))]
            status, out = self.run_check(f"bad={self.results('bad.jsonl', bad)}")
            self.assertEqual(status, 1, field)
            self.assertIn(needle, out)
        for field, value, needle in [
            ("output", "y", "expected output ''"),
            ("output_base64", "eQ==", "expected output_base64 None"),
            ("logs", [{"level": "info", "message": "m", "fields": {}}], "expected logs []"),
            ("logs", None, "expected logs []"),
        ]:
            bad = [*GOOD[:2], dict(GOOD[2], **{field: value})]
            status, out = self.run_check(f"bad={self.results('bad.jsonl', bad)}")
            self.assertEqual(status, 1, field)
            self.assertIn(needle, out)

    def test_log_events_compare_their_fields_in_order_but_not_their_members(self):
        case = {"name": "n", "expect": {"values": [], "logs": [
            {"level": "info", "message": "m", "fields": {"a": 1, "b": 2.0}}]}}
        line = {"name": "n", "ok": True, "values": [], "output": ""}
        reordered = [{"fields": {"a": 1, "b": 2.0}, "message": "m", "level": "info"}]
        self.assertIsNone(check.mismatch(case, dict(line, logs=reordered)))
        swapped = [{"level": "info", "message": "m", "fields": {"b": 2.0, "a": 1}}]
        self.assertIn("expected logs", check.mismatch(case, dict(line, logs=swapped)))
        integer = [{"level": "info", "message": "m", "fields": {"a": 1, "b": 2}}]
        self.assertIn("expected logs", check.mismatch(case, dict(line, logs=integer)))

    def test_written_files_compare_exactly_but_not_their_members_order(self):
        written = [{"name": "out.txt", "size": 3, "text": "12\n"}]
        case = {"name": "n", "expect": {"values": [], "files": written}}
        line = {"name": "n", "ok": True, "values": [], "output": "", "logs": []}
        self.assertIsNone(check.mismatch(case, dict(line, files=written)))
        reordered = [{"text": "12\n", "size": 3, "name": "out.txt"}]
        self.assertIsNone(check.mismatch(case, dict(line, files=reordered)))
        for bad in (
            None,
            [],
            [{"name": "out.txt", "size": 3, "text": "13\n"}],
            [{"name": "out.txt", "size": 3.0, "text": "12\n"}],
            [{"name": "out.txt", "size": 3, "base64": "MTIK"}],
            [*written, {"name": "more.txt", "size": 0, "text": ""}],
        ):
            self.assertIn("expected files", check.mismatch(case, dict(line, files=bad)), bad)
        # A case that expects no files rejects a line that has some; a line
        # without the member (as a report leaves it out) has none.
        quiet = {"name": "n", "expect": {"values": []}}
        self.assertIn("expected files []", check.mismatch(quiet, dict(line, files=written)))
        self.assertIsNone(check.mismatch(quiet, line))
        self.assertIsNone(check.mismatch(quiet, dict(line, files=[])))

    def test_hosts_that_differ_only_in_files_fail(self):
        a = self.results("a.jsonl", GOOD)
        other = [*GOOD[:2], dict(GOOD[2], files=[{"name": "x", "size": 0, "text": ""}])]
        b = self.results("b.jsonl", other)
        status, out = self.run_check(f"a={a}", f"b={b}")
        self.assertEqual(status, 1)
        self.assertIn("b differs from a", out)

    def test_missing_lines_fail(self):
        status, out = self.run_check(f"short={self.results('short.jsonl', GOOD[:2])}")
        self.assertEqual(status, 1)
        self.assertIn("2 result lines for 3 cases", out)

    def test_host_only_stats_and_fields_are_not_compared(self):
        a = self.results("a.jsonl", GOOD)
        other = [dict(line, stats=dict(line["stats"], fuel_used=7, wall_time_us=9), version=1)
                 for line in GOOD]
        b = self.results("b.jsonl", other)
        status, out = self.run_check(f"a={a}", f"b={b}")
        self.assertEqual(status, 0, out)

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
