#!/usr/bin/env python3
"""Compares every host's results for the shared case list.

Usage: check.py CASES.json HOST=RESULTS.jsonl [HOST=RESULTS.jsonl ...]

Each results file holds one JSON line per case, in case order, as the
runners print them (see docs/other-runtimes.md). A host passes when each
line meets its case's `expect`; the run passes when, in addition, every
host printed the same lines (compared as JSON, key order aside, with the
guest's `values` text compared byte for byte).
"""

import json
import sys


def strictly_equal(a, b):
    """JSON equality that keeps integers, floats and booleans apart."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return a.hex() == b.hex()
    return a == b


def mismatch(case, result):
    """Why a result line does not meet its case's expectation, or None."""
    expect = case["expect"]
    if result.get("name") != case["name"]:
        return f"expected the line for {case['name']!r}, got {result.get('name')!r}"
    if "error" in expect:
        if result.get("ok") is not False or result.get("kind") != expect["error"]:
            return f"expected a {expect['error']} error, got {json.dumps(result)}"
        for field in ("message", "line"):
            if field in expect and expect[field] != result.get(field):
                return f"expected {field} {expect[field]!r}, got {result.get(field)!r}"
    else:
        if result.get("ok") is not True:
            return f"expected values, got {json.dumps(result)}"
        values = json.loads(result["values"])
        if not strictly_equal(values, expect["values"]):
            return f"expected values {json.dumps(expect['values'])}, got {result['values']}"
    output = expect.get("output", [])
    if result.get("output") != output:
        return f"expected output {output!r}, got {result.get('output')!r}"
    return None


def main(argv):
    if len(argv) < 3 or any("=" not in arg for arg in argv[2:]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    hosts = {}
    for arg in argv[2:]:
        host, path = arg.split("=", 1)
        with open(path, encoding="utf-8") as f:
            hosts[host] = [json.loads(line) for line in f if line.strip()]

    failed = False
    for host, results in hosts.items():
        problems = []
        if len(results) != len(cases):
            problems.append(f"{len(results)} result lines for {len(cases)} cases")
        for case, result in zip(cases, results):
            why = mismatch(case, result)
            if why:
                problems.append(f"{case['name']}: {why}")
        status = "ok" if not problems else "FAILED"
        print(f"{host:>8}: {len(results)}/{len(cases)} cases, {status}")
        for problem in problems:
            print(f"          {problem}")
        failed |= bool(problems)

    names = list(hosts)
    for other in names[1:]:
        first = names[0]
        differ = [
            f"{a.get('name')}: {json.dumps(a, ensure_ascii=False)} != {json.dumps(b, ensure_ascii=False)}"
            for a, b in zip(hosts[first], hosts[other])
            if not strictly_equal(a, b)
        ]
        if differ:
            failed = True
            print(f"{other} differs from {first}:")
            for line in differ:
                print(f"          {line}")
        else:
            print(f"{other} and {first}: identical results")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
