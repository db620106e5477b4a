#!/usr/bin/env python3
"""Compares every host's results for the shared case list.

Usage: check.py CASES.json HOST=RESULTS.jsonl [HOST=RESULTS.jsonl ...]

Each results file holds one JSON line per case, in case order, as the
runners print them: the report shape of docs/wit.md plus the case's
`name` (see docs/other-runtimes.md). A host passes when each line meets
its case's `expect`; the run passes when, in addition, every host reported
the same outcome: the same values (exactly: integers and floats apart,
integers compared whole, floats by their bits), output, log events, files
written, error and the guest's own stats. What only a host measures (fuel, wall time) and the
traceback's text are not compared.
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
        # Members in the same order too: the guest writes them sorted by key.
        return list(a) == list(b) and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return a.hex() == b.hex()
    return a == b


def events(logs):
    """Log events with their members in one order (level, message, fields):
    how a host orders an event's own members is its serialiser's choice,
    while the order inside `fields` is the guest's and stays compared."""
    if not isinstance(logs, list):
        return logs
    return [
        {k: e.get(k) for k in ("level", "message", "fields")} if isinstance(e, dict) else e
        for e in logs
    ]


def files(entries):
    """Written files with their members in one order (name, size, text,
    base64): how a host orders a file's own members is its serialiser's
    choice. A line without `files` wrote none, as a report leaves the
    member out when it is empty."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        return entries
    return [
        {k: e[k] for k in ("name", "size", "text", "base64") if k in e} if isinstance(e, dict) else e
        for e in entries
    ]


def mismatch(case, result):
    """Why a result line does not meet its case's expectation, or None."""
    expect = case["expect"]
    if result.get("name") != case["name"]:
        return f"expected the line for {case['name']!r}, got {result.get('name')!r}"
    error = result.get("error") or {}
    if "error" in expect:
        if result.get("ok") is not False or error.get("kind") != expect["error"]:
            return f"expected a {expect['error']} error, got {json.dumps(result)}"
        for field in ("message", "line"):
            if field in expect and expect[field] != error.get(field):
                return f"expected {field} {expect[field]!r}, got {error.get(field)!r}"
    else:
        if result.get("ok") is not True:
            return f"expected values, got {json.dumps(result)}"
        if not strictly_equal(result.get("values"), expect["values"]):
            return f"expected values {json.dumps(expect['values'])}, got {json.dumps(result.get('values'))}"
    output = expect.get("output", "")
    if result.get("output") != output:
        return f"expected output {output!r}, got {result.get('output')!r}"
    if result.get("output_base64") != expect.get("output_base64"):
        return (f"expected output_base64 {expect.get('output_base64')!r}, "
                f"got {result.get('output_base64')!r}")
    logs = expect.get("logs", [])
    if not strictly_equal(events(result.get("logs")), events(logs)):
        return f"expected logs {json.dumps(logs)}, got {json.dumps(result.get('logs'))}"
    written = expect.get("files", [])
    if not strictly_equal(files(result.get("files")), files(written)):
        return f"expected files {json.dumps(written)}, got {json.dumps(result.get('files'))}"
    return None


# The guest's own stats: every host must report the same figures.
GUEST_STATS = ("instructions", "peak_memory_bytes", "capability_calls", "output_bytes")


def comparable(line):
    """The part of a result line every host must agree on."""
    error = line.get("error")
    stats = line.get("stats") or {}
    return {
        "name": line.get("name"),
        "ok": line.get("ok"),
        "values": line.get("values"),
        "output": line.get("output"),
        "output_base64": line.get("output_base64"),
        "logs": events(line.get("logs")),
        "exit_code": line.get("exit_code"),
        "files": files(line.get("files")),
        "error": None if error is None else {
            k: error.get(k) for k in ("kind", "message", "chunk", "line")
        },
        "stats": {k: stats.get(k) for k in GUEST_STATS},
    }


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
            f"{a['name']}: {json.dumps(a, ensure_ascii=False)} != {json.dumps(b, ensure_ascii=False)}"
            for a, b in (
                (comparable(x), comparable(y)) for x, y in zip(hosts[first], hosts[other])
            )
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
