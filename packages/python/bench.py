"""Timings of the Python package, printed as one JSON object for
moonbox-bench (``--packages``), which sets them beside the Rust crate's and
the Node package's in the same run.

    python bench.py [--samples N]

Times are microseconds:

- ``import_to_first_result``: from before ``import moonbox`` to the first
  result of a new Sandbox, with the compiled guest in the cache;
- ``fresh_eval``: ``Sandbox.eval("return 1+1")``, a new instance each time;
- ``session_eval``: the same on one live session;
- ``round_trip``: one call to a plain Python function capability (a loop
  of calls minus the same loop without them, per call).
"""

import argparse
import json
import time

started = time.perf_counter()
import moonbox  # noqa: E402 - timed from before the import

first = moonbox.Sandbox().eval("return 1+1")
import_to_first_result = (time.perf_counter() - started) * 1e6
assert first.values == [2], first

CALLS = 1000


def timed(f, samples):
    out = []
    for _ in range(samples):
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1e6)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=1000)
    args = p.parse_args()
    sandbox = moonbox.Sandbox(capabilities={"count.next": lambda n: n + 1})
    for _ in range(20):
        sandbox.eval("return 1+1")
    fresh = timed(lambda: sandbox.eval("return 1+1"), args.samples)
    with sandbox.session() as session:
        session_eval = timed(lambda: session.eval("return 1+1"), args.samples)
        calls = f"local n = 0 for i = 1, {CALLS} do n = count.next(n) end return n"
        empty = f"local n = 0 for i = 1, {CALLS} do n = n + 1 end return n"
        round_trip = []
        for _ in range(max(args.samples // 50, 5)):
            with_calls = timed(lambda: session.eval(calls), 1)[0]
            without = timed(lambda: session.eval(empty), 1)[0]
            round_trip.append((with_calls - without) / CALLS)
        assert session.eval(calls).values == [CALLS]
    print(json.dumps({
        "import_to_first_result": [import_to_first_result],
        "fresh_eval": fresh,
        "session_eval": session_eval,
        "round_trip": round_trip,
    }))


main()
