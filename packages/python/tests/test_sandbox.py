"""The package's behaviour: values, capabilities, sessions, both walls, the
GIL and asyncio."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import time

import pytest

import moonbox
from moonbox import Capability, ConfigError, Limits, Sandbox, tool

# A pattern match that backtracks inside one C call (string.find): with no
# outer wall it runs for minutes, and the Lua instruction count does not
# move while it does.
BACKTRACK = 'local s = string.rep("a", 5000) return s:find(".-.-.-.-.-b")'


def test_a_first_eval_returns_values_output_and_stats():
    report = Sandbox().eval('print("hi") return 1, 2.0, "x", {a = {1, 2}}, nil')
    assert report.ok
    assert report.values == [1, 2.0, "x", {"a": [1, 2]}, None]
    # Integers and floats stay apart.
    assert [type(v) for v in report.values[:2]] == [int, float]
    assert report.output == "hi\n"
    assert report.stats.instructions > 0
    # Fuel is metered only where asked, as in the Rust crate.
    assert report.stats.fuel_used is None
    assert report.stats.output_bytes == 3


def test_the_report_json_has_the_rust_shape():
    report = json.loads(Sandbox().eval("return 1.0, 9007199254740993").to_json())
    assert list(report) == ["error", "exit_code", "logs", "ok", "output", "stats", "values", "version"]
    assert report["version"] == 1
    assert Sandbox().eval("return 1.0, 9007199254740993").to_json().endswith('"values":[1.0,9007199254740993],"version":1}')
    assert sorted(report["stats"]) == [
        "calls_unrecorded", "capability_calls", "fuel_used", "instructions",
        "output_bytes", "peak_memory_bytes", "wall_time_us",
    ]


def test_output_that_is_not_utf8_is_kept_exactly():
    report = Sandbox().eval(r'io.write("\255ok")')
    assert report.output_bytes == b"\xffok"
    assert report.output == "\ufffdok"
    assert report.to_dict()["output_base64"] == "/29r"


def test_inputs_become_globals():
    report = Sandbox().eval("return n + 1, user.name", inputs={"n": 41, "user": {"name": "Ada"}})
    assert report.values == [42, "Ada"]


@pytest.mark.parametrize(
    "value, message",
    [(float("nan"), "has no JSON form"), (1 << 64, "does not fit in 64 bits"), (object(), "cannot cross into Lua")],
)
def test_inputs_json_cannot_hold_are_refused_by_name(value, message):
    with pytest.raises(ConfigError, match=f"input x: .*{message}"):
        Sandbox().eval("return x", inputs={"x": value})


def test_errors_are_reports_with_kind_line_and_summary():
    report = Sandbox().eval("local x = 1\nerror('boom')")
    assert not report.ok
    assert report.error.kind == "runtime"
    assert report.error.line == 2
    assert report.error.summary == "error[runtime]: main.lua:2: boom"
    assert Sandbox().eval("return +").error.kind == "syntax"
    assert Sandbox().eval("os.execute('ls')").error.kind == "sandboxed"


def test_sync_and_async_capabilities():
    async def fetch(id):
        await asyncio.sleep(0.01)
        return {"id": id, "n": 1.5}

    sandbox = Sandbox(capabilities={"add": lambda a, b: a + b, "records.fetch": fetch})
    report = sandbox.eval("return add(2, 3), records.fetch('x')")
    assert report.values == [5, {"id": "x", "n": 1.5}]
    assert report.stats.capability_calls == 2


def test_async_capabilities_run_on_the_callers_loop():
    seen = []

    async def where():
        seen.append(asyncio.get_running_loop())
        return "ok"

    async def main():
        sandbox = Sandbox(capabilities={"where": where})
        report = await sandbox.eval_async("return where()")
        return report, asyncio.get_running_loop()

    report, loop = asyncio.run(main())
    assert report.values == ["ok"]
    assert seen == [loop]


def test_parallel_runs_a_batch_at_once():
    def slow(x):
        time.sleep(0.2)
        return x * 2

    sandbox = Sandbox(capabilities=[Capability("slow", slow, doc="doubles, slowly")])
    started = time.monotonic()
    report = sandbox.eval("return parallel({1, 2, 3, 4}, slow)")
    assert report.values == [[2, 4, 6, 8]]
    # Four calls of 0.2 s in flight together, not one after another.
    assert time.monotonic() - started < 0.6


def test_a_failing_capability_is_a_catchable_lua_error():
    def broken(_id):
        raise KeyError("no record")

    sandbox = Sandbox(capabilities={"records.get": broken})
    caught = sandbox.eval("local ok, e = pcall(records.get, 'a') return ok, e")
    assert caught.values == [False, "records.get: 'no record'"]
    uncaught = sandbox.eval("return records.get('a')")
    assert uncaught.error.kind == "capability"
    assert "no record" in uncaught.error.message


def test_a_capability_result_json_cannot_hold_is_a_lua_error():
    sandbox = Sandbox(capabilities={"bad": lambda: {1, 2}})
    report = sandbox.eval("return pcall(bad)")
    assert report.values[0] is False
    assert "bad: its result" in report.values[1]


def test_the_guest_checks_capability_arity_from_the_signature():
    sandbox = Sandbox(capabilities={"one": lambda a: a})
    report = sandbox.eval("return one(1, 2)")
    assert report.error.kind == "capability"


def test_a_runaway_loop_stops_at_the_deadline_with_its_output():
    sandbox = Sandbox(limits=Limits(timeout=0.3, max_instructions=10**12))
    started = time.monotonic()
    report = sandbox.eval("print('before') while true do end")
    elapsed = time.monotonic() - started
    assert report.error.kind == "timeout"
    assert report.error.message.startswith("the script ran longer than the 300 ms timeout")
    assert report.output == "before\n"
    assert report.stats.instructions is None
    assert 0.3 <= elapsed < 2.0


def test_backtracking_inside_one_c_call_stops_at_the_deadline():
    sandbox = Sandbox(limits=Limits(timeout=0.3, fuel=1 << 60))
    started = time.monotonic()
    report = sandbox.eval("print('start') " + BACKTRACK)
    assert report.error.kind == "timeout"
    assert report.stats.wall_time_us >= 300_000
    assert report.output == "start\n"
    assert time.monotonic() - started < 2.0


def test_fuel_stops_work_inside_one_c_call():
    report = Sandbox(limits=Limits(fuel=50_000_000, timeout=60)).eval(BACKTRACK)
    assert report.error.kind == "fuel_exhausted"
    assert "raise the fuel limit" in report.error.message
    assert report.stats.fuel_used == 50_000_000


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_slow_capability_meets_the_deadline(asynchronous):
    release = threading.Event()

    def slow_sync():
        release.wait(10)
        return 1

    async def slow_async():
        await asyncio.sleep(10)
        return 1

    sandbox = Sandbox(
        limits=Limits(timeout=0.3),
        capabilities={"slow": slow_async if asynchronous else slow_sync},
    )
    started = time.monotonic()
    report = sandbox.eval("print('calling') return slow()")
    release.set()
    assert report.error.kind == "timeout"
    assert report.output == "calling\n"
    assert time.monotonic() - started < 2.0


def test_a_slow_async_capability_meets_the_deadline_under_eval_async():
    async def slow():
        await asyncio.sleep(10)

    async def main():
        sandbox = Sandbox(limits=Limits(timeout=0.3), capabilities={"slow": slow})
        return await sandbox.eval_async("return slow()")

    started = time.monotonic()
    report = asyncio.run(main())
    assert report.error.kind == "timeout"
    assert time.monotonic() - started < 2.0


def test_a_session_keeps_state_and_a_timeout_poisons_only_it():
    sandbox = Sandbox(limits=Limits(timeout=0.3, max_instructions=10**12))
    with sandbox.session() as a, sandbox.session() as b:
        assert a.eval("counter = 1").ok
        assert b.eval("counter = 10").ok
        assert a.eval("counter = counter + 1 return counter").values == [2]
        assert a.eval("while true do end").error.kind == "timeout"
        assert a.is_poisoned
        poisoned = a.eval("return counter")
        assert poisoned.error.kind == "session_poisoned"
        assert "start a new session" in poisoned.error.message
        assert b.eval("return counter").values == [10]


def test_a_guest_limit_leaves_the_session_usable():
    with Sandbox(limits=Limits(max_instructions=100_000)).session() as s:
        assert s.eval("x = 5 while true do end").error.kind == "instruction_limit"
        assert s.eval("return x").values == [5]


def test_memory_past_the_heap_limit_is_a_memory_error():
    sandbox = Sandbox(limits=Limits(max_memory_bytes=2 << 20))
    report = sandbox.eval("local t = {} for i = 1, 1e7 do t[i] = i end")
    assert report.error.kind == "memory_limit"


def test_the_output_limit_keeps_what_fitted():
    report = Sandbox(limits=Limits(max_output_bytes=10)).eval("io.write(string.rep('x', 8)) io.write('yyyy')")
    assert report.error.kind == "output_limit"
    assert report.output.startswith("xxxxxxxx")
    assert len(report.output_bytes) <= 10


def test_log_events_are_collected_apart_from_output():
    report = Sandbox().eval("log('warn', 'disk low', {free = 12}) print('x')")
    assert report.output == "x\n"
    assert [(e.level, e.message, e.fields) for e in report.logs] == [("warn", "disk low", {"free": 12})]


def test_modules_allow_and_determinism():
    sandbox = Sandbox(
        modules={"greet": "return {hi = function(n) return 'hi ' .. n end}"},
        allow=["os.getenv"],
        deterministic=moonbox.Determinism(seed=7),
    )
    report = sandbox.eval("return require('greet').hi('Ada'), os.time(), os.getenv('HOME')")
    assert report.values == ["hi Ada", 1_704_067_200, None]
    again = sandbox.eval("return math.random(1000)")
    assert again.values == sandbox.eval("return math.random(1000)").values


@pytest.mark.parametrize(
    "options, message",
    [
        ({"allow": ["no.such.name"]}, "no.such.name"),
        ({"capabilities": {"bad name!": lambda: 1}}, "bad name!"),
        ({"capabilities": [Capability("a", lambda: 1), Capability("a", lambda: 2)]}, "registered twice"),
        ({"modules": {"m": 5}}, "module 'm'"),
        ({"limits": "fast"}, "moonbox.Limits"),
    ],
)
def test_bad_options_are_refused_clearly(options, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        Sandbox(**options)


@pytest.mark.parametrize(
    "limit, value",
    [
        ("max_instructions", 0),
        ("max_memory_bytes", 1024),
        ("timeout", 0),
        ("timeout", -1.0),
        ("timeout", float("inf")),
        ("max_call_depth", True),
        ("max_instructions", -1),
        ("max_output_bytes", 1 << 64),
    ],
)
def test_limits_out_of_bounds_are_refused_by_name(limit, value):
    with pytest.raises(ConfigError, match=f"limit {limit}"):
        Limits(**{limit: value})


def test_code_must_be_text_or_bytes():
    with pytest.raises(ConfigError, match="code must be str or bytes"):
        Sandbox().eval(42)  # type: ignore[arg-type]


def test_a_closed_session_refuses_evals():
    session = Sandbox().session()
    session.close()
    session.close()
    with pytest.raises(ConfigError, match="closed"):
        session.eval("return 1")


def test_tool_definitions_and_calls():
    sandbox = Sandbox(capabilities=[Capability("records.get", lambda id: {"id": id}, doc="a record by id")])
    for fmt in tool.FORMATS:
        definition = tool.definition(sandbox, fmt)
        assert "run_lua" in json.dumps(definition)
        assert "records.get (1 args): a record by id" in json.dumps(definition)
    strict = tool.definition(sandbox, "openai")["function"]["parameters"]
    assert strict["required"] == ["code", "inputs", "args", "files", "stdin"]
    assert tool.run_lua(sandbox, '{"code": "return n * 2", "inputs": "{\\"n\\": 21}"}')["values"] == [42]
    assert tool.run_lua(sandbox, {"code": 5})["error"]["message"] == "`code` must be a string holding the Lua chunk"
    assert tool.run_lua(sandbox, "not json")["ok"] is False
    assert asyncio.run(tool.run_lua_async(sandbox, {"code": "return 1"}))["values"] == [1]
    # args, files and stdin, by the crate's rules: objects, or (OpenAI's
    # strict form) the files as JSON text.
    code = "io.open('out.txt', 'w'):write(io.read('a')) return select('#', ...), io.open('in.bin', 'rb'):read('a'):byte(2)"
    for files in ({"in.bin": {"base64": "AP8="}}, '{"in.bin": {"base64": "AP8="}}'):
        report = tool.run_lua(sandbox, {"code": code, "args": ["a", "b"], "files": files, "stdin": "typed"})
        assert report["values"] == [2, 255], report
        assert report["files"] == [{"name": "out.txt", "size": 5, "text": "typed"}]
    assert tool.run_lua(sandbox, {"code": "return 1", "args": [1]})["error"]["message"] == (
        "`args` must be an array of strings (arg[1..n] and `...`)"
    )
    bad_base64 = tool.run_lua(sandbox, {"code": "", "files": {"a": {"base64": "%%"}}})
    assert "files['a'].base64 is not standard base64" in bad_base64["error"]["message"]
    assert tool.run_lua(sandbox, {"code": "", "file": {}})["error"]["message"] == (
        "run_lua takes code, inputs, args, files and stdin, not 'file'"
    )
    assert asyncio.run(tool.run_lua_async(sandbox, {"code": "return ...", "args": ["x"]}))["values"] == ["x"]
    with pytest.raises(ConfigError, match="unknown tool format"):
        tool.definition(sandbox, "langchain")


def test_derived_limits_are_none_and_zero_still_means_derived():
    assert (Limits().fuel, Limits().max_wasm_memory_bytes) == (None, None)
    old = Limits(fuel=0, max_wasm_memory_bytes=0)
    assert old == Limits()
    assert old.effective_fuel == Limits().effective_fuel
    assert Limits(fuel=7).fuel == 7


def test_the_linear_memory_cap_follows_the_crates_rule():
    # The crate's rule: the cap on linear memory leaves the heap 4 MiB of
    # room. Below it is refused by name; at it, a script that fills the heap
    # stops with a memory error either way.
    with pytest.raises(ConfigError, match="max_wasm_memory_bytes .* must exceed max_memory_bytes"):
        Limits(max_memory_bytes=256 << 20, max_wasm_memory_bytes=256 << 20)
    limits = Limits(max_memory_bytes=64 << 20, max_wasm_memory_bytes=68 << 20)
    assert limits.effective_max_wasm_memory_bytes == 68 << 20
    assert Limits().effective_max_wasm_memory_bytes == 2 * Limits().max_memory_bytes + (16 << 20)
    report = Sandbox(limits=limits).eval("local t = {} for i = 1, 1e8 do t[i] = i end")
    assert report.error.kind == "memory_limit"


def test_a_reply_larger_than_the_heap_limit_never_enters_the_guest():
    big = "x" * (2 << 20)
    sandbox = Sandbox(limits=Limits(max_memory_bytes=1 << 20), capabilities={"big": lambda: big, "small": lambda: "ok"})
    report = sandbox.eval("local ok, e = pcall(big) return ok, e, small()")
    assert report.values[0] is False
    assert "more than 1048576 bytes of JSON" in report.values[1]
    assert report.values[2] == "ok"


def test_a_batch_holds_at_most_the_heap_limit_of_replies():
    part = "x" * (400 << 10)
    sandbox = Sandbox(limits=Limits(max_memory_bytes=1 << 20), capabilities={"part": lambda _i: part})
    report = sandbox.eval("return pcall(parallel, {1, 2, 3}, part)")
    assert report.values[0] is False
    assert "the replies of this batch of 3 calls" in report.values[1]


# The outer wall is in Rust, off the GIL: threads busy in Python or inside
# a long C call that holds the GIL neither stretch nor shorten a deadline.
@pytest.mark.parametrize("busy", ["python", "c_call"])
def test_a_busy_thread_neither_stretches_nor_shortens_the_deadline(busy):
    # The epoch ticker needs the GIL. A thread spinning in Python, or one
    # holding the GIL inside a long C call, must not make the deadline
    # count slower than the clock, nor deliver ticks owed from before an
    # eval began against it.
    stop = threading.Event()
    # The spinners stop themselves after this long, more than any bound
    # below allows for the whole test: where the ticker is starved, the
    # eval ends when they stop (and the test fails) rather than whenever
    # the scheduler relents (once four minutes).
    give_up = time.monotonic() + 15.0

    def spin():
        n = 0
        while not stop.is_set() and time.monotonic() < give_up:
            n = n + 1 if busy == "python" else sum(range(3_000_000))

    sandbox = Sandbox(limits=Limits(timeout=0.05, max_instructions=10**12))
    threads = [threading.Thread(target=spin, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(10 if busy == "python" else 4):
            started = time.monotonic()
            report = sandbox.eval("while true do end")
            elapsed = time.monotonic() - started
            assert report.error.kind == "timeout"
            # The eval's own stats, taken in the guest's thread.
            assert report.stats.wall_time_us >= 50_000, f"stopped after {report.stats.wall_time_us} us"
            # Python code around the eval waits for the GIL like any other
            # thread: behind a C call that holds it for tens of
            # milliseconds, that wait, not the deadline, is what grows.
            bound = 1.0 if busy == "python" else 5.0
            assert elapsed < bound, f"a 50 ms deadline took {elapsed:.2f} s"
    finally:
        stop.set()


def test_a_capability_raising_timeout_error_is_an_ordinary_capability_error():
    def upstream():
        raise TimeoutError("upstream slow")

    with Sandbox(capabilities={"t": upstream}).session() as s:
        report = s.eval("return pcall(t)")
        assert report.values == [False, "t: upstream slow"]
        assert not s.is_poisoned


def test_a_reply_too_deep_to_encode_is_a_lua_error_not_an_exception():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with Sandbox(capabilities={"deep": lambda: deep}).session() as s:
        report = s.eval("print('before') local ok, e = pcall(deep) return ok, e")
        assert report.ok
        assert report.values[0] is False
        assert "nests deeper than" in report.values[1]
        assert report.output == "before\n"
        assert s.eval("return 1").values == [1]


def test_a_failing_output_sink_is_dropped_and_nothing_is_lost():
    seen, reported = [], []

    def sink(data):
        seen.append(data)
        raise OSError("closed")

    old, sys.unraisablehook = sys.unraisablehook, lambda u: reported.append(u.exc_value)
    try:
        report = Sandbox().eval("print('a') print('b')", on_output=sink)
    finally:
        sys.unraisablehook = old
    assert report.output == "a\nb\n"
    assert seen == [b"a"]
    assert [str(e) for e in reported] == ["closed"]


def test_sinks_see_output_and_logs_as_they_happen():
    chunks, events = [], []
    report = Sandbox().eval(
        "io.write('x') log('info', 'step', {n = 1}) io.write('y')",
        on_output=chunks.append,
        on_log=events.append,
    )
    assert b"".join(chunks) == report.output_bytes == b"xy"
    assert [(e.level, e.message) for e in events] == [("info", "step")]


def test_the_summary_is_one_line_with_control_characters_escaped():
    report = Sandbox().eval('error("line1\\n  line2\\27[31mred\\r", 0)')
    assert report.error.message == "line1\n  line2\x1b[31mred\r"
    assert report.error.summary == "error[runtime]: line1 line2\\u{1b}[31mred\\r"


@pytest.mark.parametrize(
    "determinism, message",
    [({"clock": 2**70}, "clock"), ({"seed": -(2**64)}, "seed"), ({"seed": "7"}, "seed must be an integer")],
)
def test_determinism_out_of_range_is_refused(determinism, message):
    with pytest.raises(ConfigError, match=message):
        moonbox.Determinism(**determinism)


def test_chunk_name_must_be_text():
    with pytest.raises(ConfigError, match="chunk_name"):
        Sandbox(chunk_name=5)  # type: ignore[arg-type]


def test_text_that_is_not_unicode_is_a_lua_error_not_a_trap():
    bad = "name\udcff"  # what os.fsdecode makes of a badly encoded name

    def raises():
        raise ValueError(bad)

    with Sandbox(capabilities={"returns": lambda: bad, "raises": raises}).session() as s:
        report = s.eval("local a, e = pcall(returns) local b, f = pcall(raises) return a, e, b, f")
        assert report.ok
        assert report.values[0] is False and "not valid Unicode" in report.values[1]
        # The message crosses with the surrogate replaced.
        assert report.values[2] is False and report.values[3].startswith("raises: name")
        assert not s.is_poisoned
    with pytest.raises(ConfigError, match="input x: the text is not valid Unicode"):
        Sandbox().eval("return x", inputs={"x": bad})


def test_a_raising_sink_goes_to_the_unraisable_hook_and_the_eval_goes_on():
    seen = []

    def hook(unraisable):
        seen.append(unraisable.exc_value)

    def interrupt(_data):
        raise KeyboardInterrupt

    old, sys.unraisablehook = sys.unraisablehook, hook
    try:
        with Sandbox().session() as s:
            report = s.eval("print('x') print('y') return 1", on_output=interrupt)
            assert report.values == [1]
            assert report.output == "x\ny\n"
            assert not s.is_poisoned
    finally:
        sys.unraisablehook = old
    assert [type(e) for e in seen] == [KeyboardInterrupt]


def test_an_eval_releases_the_gil_while_lua_runs():
    # A Python thread counts while a Lua loop runs for 0.3 s: with the GIL
    # held by the eval it could not count at all.
    counted = 0
    stop = threading.Event()

    def count():
        nonlocal counted
        while not stop.is_set():
            counted += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        report = Sandbox(limits=Limits(timeout=0.3, max_instructions=10**12)).eval("while true do end")
    finally:
        stop.set()
        counter.join()
    assert report.error.kind == "timeout"
    assert counted > 1000


def test_a_capability_holding_the_gil_cannot_hold_the_deadline():
    # The capability spins in Python for 3 s; the eval still ends at its
    # 0.3 s deadline, and the call finishes on its own afterwards.
    finished = threading.Event()

    def spin():
        end = time.monotonic() + 3
        while time.monotonic() < end:
            pass
        finished.set()
        return 1

    started = time.monotonic()
    report = Sandbox(limits=Limits(timeout=0.3), capabilities={"spin": spin}).eval("print('a') return spin()")
    elapsed = time.monotonic() - started
    assert report.error.kind == "timeout"
    assert report.output == "a\n"
    assert elapsed < 2.0, f"a 0.3 s deadline took {elapsed:.2f} s"
    assert finished.wait(10)


def test_cancelling_eval_async_stops_the_guest():
    async def main():
        sandbox = Sandbox(limits=Limits(timeout=30, max_instructions=10**12))
        task = asyncio.create_task(sandbox.eval_async("print('started') while true do end"))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(main()) < 2.0


def test_a_session_cancel_ends_its_eval_with_cancelled():
    sandbox = Sandbox(limits=Limits(timeout=30, max_instructions=10**12))
    with sandbox.session() as s:
        threading.Timer(0.2, s.cancel).start()
        report = s.eval("print('started') while true do end")
        assert report.error.kind == "cancelled"
        assert report.output == "started\n"
        # A cancel holds for the session's later evals too.
        assert s.eval("return 1").error.kind == "cancelled"


def test_the_event_loop_keeps_running_during_eval_async():
    async def main():
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        sandbox = Sandbox(limits=Limits(timeout=0.5, max_instructions=10**12))
        async with sandbox.session() as s:
            report = await s.eval_async("while true do end")
        ticker.cancel()
        return report, ticks

    report, ticks = asyncio.run(main())
    assert report.error.kind == "timeout"
    assert ticks >= 10


def test_the_interpreter_exits_cleanly_with_a_capability_still_running():
    # The capability outlives its eval's deadline; at exit the package waits
    # for it to return rather than let the interpreter stop it half-way.
    script = (
        "import time, moonbox\n"
        "def slow():\n"
        "    time.sleep(1)\n"
        "    return 1\n"
        "r = moonbox.Sandbox(limits=moonbox.Limits(timeout=0.2), capabilities={'slow': slow}).eval('return slow()')\n"
        "print(r.error.kind)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "timeout\n"


def test_capability_arity_the_script_leaves_out_takes_python_defaults():
    sandbox = Sandbox(capabilities={"greet": lambda name, greeting="hello": f"{greeting}, {name}"})
    assert sandbox.eval("return greet('Ada'), greet('Ada', 'hi')").values == ["hello, Ada", "hi, Ada"]
    assert sandbox.eval("return greet()").error.kind == "capability"


def test_a_capability_that_calls_eval_runs_a_nested_sandbox():
    inner = Sandbox()
    outer = Sandbox(capabilities={"inner": lambda code: inner.eval(code).values[0]})
    assert outer.eval("return inner('return 6 * 7')").values == [42]


def test_a_declared_arity_past_the_crates_bound_is_refused():
    with pytest.raises(ConfigError, match="the most is 255"):
        Sandbox(capabilities=[Capability("many", lambda *a: 1, min_args=0, max_args=300)])


def test_args_become_arg_and_the_chunks_varargs():
    report = Sandbox().eval("return arg[0], arg[1], arg[2], #arg, ...", args=["a", "b c"], chunk_name="job.lua")
    assert report.values == ["job.lua", "a", "b c", 2, "a", "b c"]
    # Without args, `arg` is nil and `...` empty; an empty list sets both.
    assert Sandbox().eval("return arg == nil, select('#', ...)").values == [True, 0]
    assert Sandbox().eval("return #arg, arg[0], select('#', ...)", args=()).values == [0, "main.lua", 0]


def test_stdin_is_what_io_read_reads():
    script = "return io.read('l'), io.read('a'), io.read('a')"
    assert Sandbox().eval(script, stdin="one\ntwo\n").values == ["one", "two\n", ""]
    assert Sandbox().eval("return #io.read('a')", stdin=b"\xff\x00").values == [2]
    assert Sandbox().eval("return io.read('a')").values == [""]
    assert Sandbox().eval("return io.stdin:read('a')", stdin="s").values == ["s"]


def test_mounted_files_are_read_and_written_files_come_back():
    script = (
        "local n = 0 for line in io.lines('data/in.csv') do n = n + 1 end\n"
        "local b = io.open('raw.bin', 'rb'):read('a')\n"
        "io.open('out.txt', 'w'):write(n):close()\n"
        "io.open('b.bin', 'wb'):write(b:reverse()):close()\n"
        "return n, #b"
    )
    report = Sandbox().eval(script, files={"data/in.csv": "a,1\nb,2\n", "raw.bin": b"\x00\xff"})
    assert report.values == [2, 2]
    # Name order; mounted files are not among them.
    assert report.files == {"b.bin": b"\xff\x00", "out.txt": b"2"}
    assert list(report.files) == ["b.bin", "out.txt"]
    assert report.to_dict()["files"] == [
        {"base64": "/wA=", "name": "b.bin", "size": 2},
        {"name": "out.txt", "size": 1, "text": "2"},
    ]
    # A report without written files leaves the member out.
    plain = Sandbox().eval("return 1")
    assert plain.files == {}
    assert "files" not in plain.to_dict()


def test_files_written_before_an_error_are_in_the_report():
    report = Sandbox().eval("io.open('partial.txt', 'w'):write('half'):close() error('boom')")
    assert report.error.kind == "runtime"
    assert report.files == {"partial.txt": b"half"}


def test_mounted_files_are_read_only_and_stay_in_the_session():
    with Sandbox().session() as s:
        first = s.eval("return io.open('m.txt', 'w')", files={"m.txt": "kept"})
        assert first.values == [None, "m.txt: Permission denied", 13]
        s.eval("io.open('w.txt', 'w'):write('mine'):close()")
        later = s.eval("return io.open('m.txt'):read('a'), io.open('w.txt'):read('a')")
        assert later.values == ["kept", "mine"]
        # Only the eval that wrote a file reports it.
        assert later.files == {}


def test_args_files_and_stdin_reach_eval_async():
    async def main():
        sandbox = Sandbox()
        report = await sandbox.eval_async(
            "io.open('o.txt', 'w'):write(io.read('a')):close() return ..., io.open('i.txt'):read('a')",
            args=["x"],
            files={"i.txt": b"in"},
            stdin="piped",
        )
        async with sandbox.session() as s:
            again = await s.eval_async("return ...", args=["y"])
        return report, again

    report, again = asyncio.run(main())
    assert report.values == ["x", "in"]
    assert report.files == {"o.txt": b"piped"}
    assert again.values == ["y"]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"args": "ab"}, "args must be a sequence of str, not a single string"),
        ({"args": [1]}, "args: 1 is not a str"),
        ({"args": ["\ud800"]}, "an argument is not valid Unicode"),
        ({"files": [("a", "b")]}, "files must be a mapping of name to str or bytes, not list"),
        ({"files": {"a": 1}}, "file 'a' must be str or bytes, not int"),
        ({"files": {1: "a"}}, "file name 1 is not a str"),
        ({"files": {"\ud800": "a"}}, "is not valid Unicode"),
        ({"stdin": 1}, "stdin must be str or bytes, not int"),
    ],
)
def test_args_files_and_stdin_of_the_wrong_type_are_refused(options, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        Sandbox().eval("return 1", **options)
    with Sandbox().session() as s, pytest.raises(ConfigError, match=re.escape(message)):
        s.eval("return 1", **options)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"args": ["x"] * 4097}, "4097 arguments are more than the 4096 an eval takes"),
        ({"files": {f"f{i}": b"" for i in range(1025)}}, "1025 files are more than the 1024 a session holds"),
        ({"files": {"": b""}}, "file name '' is empty, longer than 4096 bytes or contains NUL"),
        ({"files": {"a\0b": b""}}, "file name 'a\\u{0}b' is empty"),
        ({"files": {"x" * 4097: b""}}, "longer than 4096 bytes"),
        ({"stdin": b"x" * ((1 << 20) + 1)}, "the files and stdin take 1048577 bytes, more than max-memory-bytes (1048576)"),
        ({"files": {"data/": "x"}}, "file name 'data/' names a directory"),
    ],
)
def test_args_files_and_stdin_past_the_crates_bounds_are_invalid_value(options, message):
    report = Sandbox(limits=Limits(max_memory_bytes=1 << 20)).eval("return 1", **options)
    assert report.error.kind == "invalid_value"
    assert message in report.error.message
