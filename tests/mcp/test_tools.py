"""The MCP tools of `moonbox mcp` (run_lua, check_lua, new_session, close_session),
driven by the Python SDK over both transports."""

from __future__ import annotations

import time

import anyio
import pytest
from conftest import Server, error_of, new_session, report_of, run_lua, text_of
from mcp import types
from mcp.shared.exceptions import McpError
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS

pytestmark = pytest.mark.anyio

# Lets a spinning script run until the timeout rather than the instruction limit.
NO_INSTRUCTION_LIMIT = ("--max-instructions", "1000000000000")


async def failure_text(call) -> str:
    """The text of a tool call that must fail, as a tool error or a protocol error."""
    try:
        result = await call
    except McpError as e:
        return e.error.message
    assert result.isError is True, f"expected an error, got {result}"
    return text_of(result)


async def test_initialize_reports_server_and_tools_capability(server: Server) -> None:
    """initialize agrees on a protocol version the SDK speaks and announces tools."""
    async with server.connect() as conn:
        assert conn.init.protocolVersion in SUPPORTED_PROTOCOL_VERSIONS
        assert conn.init.capabilities.tools is not None
        assert conn.init.serverInfo.name
        assert conn.init.serverInfo.version


async def test_list_tools_has_schemas(server: Server) -> None:
    """tools/list offers the four tools; run_lua has an input and an output schema."""
    async with server.connect() as conn:
        tools = {t.name: t for t in (await conn.session.list_tools()).tools}
        assert {"run_lua", "check_lua", "new_session", "close_session"} <= set(tools)

        run = tools["run_lua"]
        assert run.description and "Lua" in run.description
        schema = run.inputSchema
        assert schema["type"] == "object"
        assert schema["required"] == ["code"]
        assert schema["properties"]["code"]["type"] == "string"
        assert schema["properties"]["inputs"]["type"] == "object"
        assert schema["properties"]["session"]["type"] == "string"

        out = run.outputSchema
        assert out is not None and out["type"] == "object"
        # The line a model acts on, then the report.
        assert out["required"] == ["answer", "report"]
        assert out["properties"]["answer"]["type"] == "string"
        assert {"version", "ok", "values", "output", "error", "stats"} <= set(out["properties"]["report"]["properties"])

        assert "session" in tools["close_session"].inputSchema["properties"]
        assert tools["close_session"].inputSchema.get("required") == ["session"]


async def test_success_returns_values_and_output(server: Server) -> None:
    """A script's printed output and returned values come back in the report."""
    async with server.connect() as conn:
        result = await run_lua(conn.session, "print('hello', 1) io.write('more') return 1, 'two', {a = true}, {3, 4}")
        report = report_of(result)
        assert report["ok"] is True
        assert "error" not in report, "a success has no error member"
        assert report["values"] == [1, "two", {"a": True}, [3, 4]]
        assert report["output"] == "hello\t1\nmore"
        assert report["version"] == 1
        assert not result.isError
        assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
        assert "\n" not in result.content[0].text.strip()


async def test_runtime_error_has_kind_and_line(server: Server) -> None:
    """A Lua runtime error is a tool error with kind runtime, the line, and the output before it."""
    async with server.connect() as conn:
        result = await run_lua(conn.session, "print('before')\nlocal t = nil\nreturn t.field\n")
        error = error_of(result)
        assert error["kind"] == "runtime"
        assert error["line"] == 3
        assert "attempt to index" in error["message"]
        assert report_of(result)["output"] == "before\n"
        assert report_of(result)["values"] == []
        assert "runtime" in text_of(result)


async def test_syntax_error_is_a_tool_error(server: Server) -> None:
    """Code that does not compile is a tool error of kind syntax with its line."""
    async with server.connect() as conn:
        error = error_of(await run_lua(conn.session, "local x =\n\nreturn = 1"))
        assert error["kind"] == "syntax"
        assert error["line"] == 3


async def test_check_lua_reports_findings_without_running(server: Server) -> None:
    """check_lua returns the sandbox's findings as structured content and text; a syntax error is a tool error."""
    async with server.connect() as conn:
        code = "while true do end\nlocal f = io.popen('x')\nreturn require('socket')"
        result = await conn.session.call_tool("check_lua", {"code": code})
        assert not result.isError, text_of(result)
        content = result.structuredContent
        assert isinstance(content, dict) and content["ok"] is True
        found = [(d["kind"], d["name"], d["line"]) for d in content["diagnostics"]]
        assert found == [("sandboxed", "io.popen", 2), ("unknown_module", 'require("socket")', 3)]
        assert text_of(result).startswith("main.lua:2: warning[sandboxed]: io.popen is sandboxed")

        bad = await conn.session.call_tool("check_lua", {"code": "return ("})
        assert bad.isError is True
        assert isinstance(bad.structuredContent, dict)
        assert bad.structuredContent["ok"] is False
        assert bad.structuredContent["error"]["kind"] == "syntax"


async def test_error_does_not_poison_the_server(server: Server) -> None:
    """After a failed run the same connection runs the next script normally."""
    async with server.connect() as conn:
        error_of(await run_lua(conn.session, "error('first')"))
        assert report_of(await run_lua(conn.session, "return 'second'"))["values"] == ["second"]


@pytest.mark.server_flags("--max-instructions", "10000")
async def test_instruction_limit(server: Server) -> None:
    """--max-instructions stops a long loop with kind instruction_limit; pcall cannot catch it."""
    async with server.connect() as conn:
        result = await run_lua(conn.session, "print('start') pcall(function() for i = 1, 1e9 do end end) return 'caught'")
        error = error_of(result)
        assert error["kind"] == "instruction_limit"
        assert report_of(result)["output"] == "start\n"
        # A short script stays under the same limit.
        assert report_of(await run_lua(conn.session, "return 1 + 1"))["values"] == [2]


async def test_inputs_become_globals(server: Server) -> None:
    """run_lua's inputs are JSON values visible to the script under their names."""
    async with server.connect() as conn:
        result = await run_lua(conn.session, "return n + 1", inputs={"n": 41})
        assert report_of(result)["values"] == [42]

        result = await run_lua(
            conn.session,
            "return who.name .. ':' .. #list, list[3], flag",
            inputs={"who": {"name": "Ada"}, "list": [1, 2, 30], "flag": False},
        )
        assert report_of(result)["values"] == ["Ada:3", 30, False]


async def test_invalid_inputs_are_refused(server: Server) -> None:
    """Inputs that cannot become Lua globals, or are not an object, fail the call without running it."""
    async with server.connect() as conn:
        s = conn.session
        message = await failure_text(run_lua(s, "print('ran') return 1", inputs={"not a name": 1}))
        assert "not a name" in message
        assert "ran" not in message
        assert "inputs" in await failure_text(run_lua(s, "return 1", inputs=5))
        assert "code" in await failure_text(s.call_tool("run_lua", {}))


async def test_inputs_do_not_leak_between_runs(server: Server) -> None:
    """Inputs given to one stateless run are not there in the next."""
    async with server.connect() as conn:
        assert report_of(await run_lua(conn.session, "return n", inputs={"n": 1}))["values"] == [1]
        assert report_of(await run_lua(conn.session, "return n == nil"))["values"] == [True]


async def test_session_keeps_globals_and_runs_are_isolated_without_one(server: Server) -> None:
    """Globals persist within a session, not across sessions or in stateless runs."""
    async with server.connect() as conn:
        s = conn.session
        sid = await new_session(s)
        other = await new_session(s)
        assert sid != other

        assert report_of(await run_lua(s, "counter = 41", session=sid))["ok"] is True
        assert report_of(await run_lua(s, "counter = counter + 1 return counter", session=sid))["values"] == [42]
        assert report_of(await run_lua(s, "return counter == nil", session=other))["values"] == [True]
        assert report_of(await run_lua(s, "return counter == nil"))["values"] == [True]


async def test_closed_session_is_unknown(server: Server) -> None:
    """After close_session, run_lua on that session is an error naming it."""
    async with server.connect() as conn:
        s = conn.session
        sid = await new_session(s)
        closed = await s.call_tool("close_session", {"session": sid})
        assert not closed.isError, text_of(closed)
        message = await failure_text(run_lua(s, "return 1", session=sid))
        assert sid in message


async def test_unknown_session_is_an_error(server: Server) -> None:
    """run_lua and close_session on a session that never existed fail, naming it."""
    async with server.connect() as conn:
        assert "no-such-session" in await failure_text(run_lua(conn.session, "return 1", session="no-such-session"))
        closing = conn.session.call_tool("close_session", {"session": "no-such-session"})
        assert "no-such-session" in await failure_text(closing)


@pytest.mark.server_flags("--session-ttl", "1s")
async def test_idle_session_expires(server: Server) -> None:
    """A session idle past --session-ttl is gone; one in use past it is kept."""
    async with server.connect() as conn:
        s = conn.session
        idle = await new_session(s)
        busy = await new_session(s)
        await run_lua(s, "x = 'idle'", session=idle)
        await run_lua(s, "x = 'busy'", session=busy)

        # Use `busy` every 0.3 s for 2.5 s, more than twice the TTL; `idle`
        # sits untouched meanwhile. Elapsed time is the condition here.
        start = time.monotonic()
        while time.monotonic() - start < 2.5:
            assert report_of(await run_lua(s, "return x", session=busy))["values"] == ["busy"]
            await anyio.sleep(0.3)

        assert report_of(await run_lua(s, "return x", session=busy))["values"] == ["busy"]
        message = await failure_text(run_lua(s, "return x", session=idle))
        assert idle in message


@pytest.mark.server_flags("--max-sessions", "2")
async def test_session_cap(server: Server) -> None:
    """Past --max-sessions, new_session is a tool error naming the cap; closing one frees a slot."""
    async with server.connect() as conn:
        s = conn.session
        first = await new_session(s)
        await new_session(s)

        refused = await s.call_tool("new_session", {})
        assert refused.isError is True
        assert "2" in text_of(refused) and "session" in text_of(refused).lower()

        closed = await s.call_tool("close_session", {"session": first})
        assert not closed.isError, text_of(closed)
        third = await new_session(s)
        assert report_of(await run_lua(s, "return 'ok'", session=third))["values"] == ["ok"]

        # Still full again.
        assert (await s.call_tool("new_session", {})).isError is True


@pytest.mark.server_flags(*NO_INSTRUCTION_LIMIT, "--timeout", "60s")
async def test_cancellation_stops_the_eval(server: Server) -> None:
    """notifications/cancelled stops a running eval: its session answers again at once.

    The spinning script runs in a session; the session runs one eval at a
    time, so the follow-up call there succeeds well before the 60 s timeout
    only if the cancelled eval really stopped.
    """
    async with server.connect() as conn:
        s = conn.session
        sid = await new_session(s)
        running = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if message and "spinning" in message:
                running.set()

        # The SDK numbers requests in order; this is the id of the next one.
        request_id = s._request_id
        outcome: list[types.CallToolResult | McpError] = []

        async def spin() -> None:
            try:
                outcome.append(
                    await s.call_tool(
                        "run_lua",
                        {"code": "print('spinning') while true do end", "session": sid},
                        progress_callback=on_progress,
                    )
                )
            except McpError as e:
                outcome.append(e)

        async with anyio.create_task_group() as tg:
            tg.start_soon(spin)
            with anyio.fail_after(30):
                await running.wait()
            await s.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=request_id, reason="test cancels")
                    )
                )
            )
            # The cancelled call stays open on our side meanwhile, so only the
            # notification can have stopped the eval. While it runs the
            # session answers "busy"; poll until it runs the next call.
            started = time.monotonic()
            with anyio.fail_after(15):
                while True:
                    result = await run_lua(s, "return 'after'", session=sid)
                    text = text_of(result).lower()
                    if not (result.isError and ("running" in text or "busy" in text)):
                        break
                    await anyio.sleep(0.1)
            assert report_of(result)["values"] == ["after"], text_of(result)
            assert time.monotonic() - started < 15
            # A cancelled request gets no answer, or an error; stop waiting for it.
            tg.cancel_scope.cancel()
        # Whatever answer came was not a success.
        assert not outcome or isinstance(outcome[0], McpError) or outcome[0].isError

        # A stateless run is quick too.
        with anyio.fail_after(10):
            assert report_of(await run_lua(s, "return 1"))["values"] == [1]


@pytest.mark.server_flags(*NO_INSTRUCTION_LIMIT, "--timeout", "6s")
async def test_output_streams_as_progress(server: Server) -> None:
    """Printed text arrives as progress notifications while the script still runs.

    The script prints, then spins until the 6 s timeout; its line must reach
    the progress callback well before that, not with the result.
    """
    async with server.connect() as conn:
        s = conn.session
        messages: list[str] = []
        seen = anyio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")
            if "streamed line" in "".join(messages):
                seen.set()

        results: list[types.CallToolResult] = []

        async def call() -> None:
            results.append(
                await s.call_tool(
                    "run_lua",
                    {"code": "print('streamed line') while true do end"},
                    progress_callback=on_progress,
                )
            )

        async with anyio.create_task_group() as tg:
            sent = time.monotonic()
            tg.start_soon(call)
            with anyio.fail_after(20):
                await seen.wait()
            streamed_after = time.monotonic() - sent
            assert not results, "the output came only with the result"
            assert streamed_after < 4, f"the output took {streamed_after:.1f} s to stream"

        # The script ended at the timeout, its output kept in the report.
        assert time.monotonic() - sent >= 5
        error = error_of(results[0])
        assert error["kind"] == "timeout"
        assert report_of(results[0])["output"] == "streamed line\n"


async def test_no_progress_without_a_token(server: Server) -> None:
    """A call without a progress token still gets its output in the result."""
    async with server.connect() as conn:
        result = await run_lua(conn.session, "for i = 1, 3 do print(i) end return 'done'")
        report = report_of(result)
        assert report["output"] == "1\n2\n3\n"
        assert report["values"] == ["done"]
