"""Code mode: `moonbox mcp --upstream 'demo=COMMAND'` offers the upstream MCP
server's tools to Lua as `demo.<tool>{...}` (tests/mcp/upstream_server.py)."""

from __future__ import annotations

import subprocess
import time

import anyio
import pytest
from conftest import Server, error_of, report_of, run_lua, server_env, upstream_flag

pytestmark = pytest.mark.anyio

UPSTREAM = ("--upstream", upstream_flag())


@pytest.mark.server_flags(*UPSTREAM)
async def test_upstream_tools_are_described(server: Server) -> None:
    """run_lua's description names every upstream tool as demo.<tool>."""
    async with server.connect() as conn:
        tools = {t.name: t for t in (await conn.session.list_tools()).tools}
        description = tools["run_lua"].description or ""
        for name in ("demo.add", "demo.echo", "demo.fail", "demo.hang"):
            assert name in description, description
        # The upstream tools are reached through Lua, not listed beside it.
        assert not {"add", "echo", "fail", "hang"} & set(tools)


@pytest.mark.server_flags(*UPSTREAM)
async def test_structured_result_in_a_loop(server: Server) -> None:
    """demo.add returns the upstream tool's structuredContent, call after call."""
    async with server.connect() as conn:
        result = await run_lua(
            conn.session,
            """
            local first = demo.add{a = 1, b = 2}
            local sum = 0
            for i = 1, 20 do
              sum = sum + demo.add{a = i, b = 1000}.result
            end
            return first, sum
            """,
        )
        report = report_of(result)
        assert report["ok"] is True, report["error"]
        # FastMCP wraps a bare int result as {"result": n}.
        assert report["values"] == [{"result": 3}, sum(i + 1000 for i in range(1, 21))]


@pytest.mark.server_flags(*UPSTREAM)
async def test_text_result(server: Server) -> None:
    """A tool without structured content returns its text to Lua."""
    async with server.connect() as conn:
        report = report_of(await run_lua(conn.session, "return demo.echo{text = 'héllo, world'}"))
        assert report["values"] == ["héllo, world"]


@pytest.mark.server_flags(*UPSTREAM)
async def test_upstream_error_is_catchable(server: Server) -> None:
    """An upstream tool error is a Lua error that pcall catches, with the upstream message."""
    async with server.connect() as conn:
        report = report_of(
            await run_lua(conn.session, "local ok, err = pcall(demo.fail, {}) return ok, tostring(err)")
        )
        ok, message = report["values"]
        assert ok is False
        assert "failed on purpose" in message


@pytest.mark.server_flags(*UPSTREAM)
async def test_uncaught_upstream_error_has_capability_kind(server: Server) -> None:
    """Left uncaught, an upstream tool error ends the run with kind capability."""
    async with server.connect() as conn:
        result = await run_lua(conn.session, "print('calling')\ndemo.fail{}\nreturn 'unreached'")
        error = error_of(result)
        assert error["kind"] == "capability"
        assert "failed on purpose" in error["message"]
        assert report_of(result)["output"] == "calling\n"


@pytest.mark.server_flags(*UPSTREAM)
async def test_bad_arguments_are_a_lua_error(server: Server) -> None:
    """Arguments the upstream tool rejects raise a catchable error, not a crash."""
    async with server.connect() as conn:
        report = report_of(
            await run_lua(conn.session, "local ok, err = pcall(demo.add, {a = 'x'}) return ok, tostring(err)")
        )
        assert report["values"][0] is False
        # The server still calls the tool correctly afterwards.
        assert report_of(await run_lua(conn.session, "return demo.add{a = 2, b = 2}"))["values"] == [{"result": 4}]


@pytest.mark.server_flags(*UPSTREAM)
async def test_positional_arguments_are_a_capability_error(server: Server) -> None:
    """An upstream tool takes one table; other arguments fail with kind capability, naming the tool."""
    async with server.connect() as conn:
        error = error_of(await run_lua(conn.session, "return demo.add(1, 2)"))
        assert error["kind"] == "capability"
        assert "demo.add" in error["message"]


@pytest.mark.parametrize("command", ["/nonexistent/upstream-server", "true"])
def test_upstream_that_cannot_start_stops_the_server(moonbox_bin: str, command: str) -> None:
    """An upstream that is missing, or exits without speaking MCP, makes moonbox mcp exit 2 naming it."""
    proc = subprocess.run(
        [moonbox_bin, "mcp", "--upstream", f"broken={command}"],
        stdin=subprocess.DEVNULL,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "broken" in proc.stderr, proc.stderr


@pytest.mark.server_flags(*UPSTREAM, "--timeout", "2s")
async def test_hanging_upstream_call_hits_the_timeout(server: Server) -> None:
    """An upstream call that never answers is stopped by --timeout (kind timeout); the upstream stays usable."""
    async with server.connect() as conn:
        started = time.monotonic()
        with anyio.fail_after(20):
            result = await run_lua(conn.session, "print('before hang') demo.hang{} return 'unreached'")
        elapsed = time.monotonic() - started
        error = error_of(result)
        assert error["kind"] == "timeout"
        assert report_of(result)["output"] == "before hang\n"
        assert elapsed < 10, f"the timed-out call took {elapsed:.1f} s"

        with anyio.fail_after(10):
            report = report_of(await run_lua(conn.session, "return demo.add{a = 40, b = 2}.result"))
        assert report["values"] == [42]


MANY = ("--upstream", upstream_flag() + " --many 196")


@pytest.mark.server_flags(*MANY)
async def test_a_200_tool_upstream_is_found_from_lua_not_listed(server: Server) -> None:
    """With 200 upstream tools, run_lua's description names the namespace and
    how to search it, within 4 KiB; a script finds two tools and calls them."""
    async with server.connect() as conn:
        tools = {t.name: t for t in (await conn.session.list_tools()).tools}
        description = tools["run_lua"].description or ""
        assert len(description.encode()) <= 4096, len(description.encode())
        assert "200 host functions" in description and "demo (200)" in description, description
        assert "widget_042" not in description
        code = """
            local found = catalog.search("valve bin 012")
            local first = found[1].name
            local spec = catalog.describe("demo.widget_017")
            local a = demo.widget_012{id = 7}
            local b = demo[spec.name:match("%.(.+)$")]{id = 8}
            return first, #found <= 20, spec.signature, a, b
        """
        report = report_of(await run_lua(conn.session, code))
        first, bounded, signature, a, b = report["values"]
        assert first == "demo.widget_012"
        assert bounded is True
        assert signature.startswith("demo.widget_017{id: integer}"), signature
        assert a == {"widget": 12, "kind": "valve", "id": 7}
        assert b == {"widget": 17, "kind": "spring", "id": 8}


def test_upstream_stderr_is_named_cut_and_bounded(moonbox_bin: str) -> None:
    """An upstream's standard error reaches moonbox's prefixed with its name,
    each line cut at 512 bytes and at most 50 lines per 10 s."""
    initialize = (
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
        '"2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}\n'
    )
    proc = subprocess.run(
        [moonbox_bin, "mcp", "--upstream", upstream_flag("noisy") + " --noisy"],
        input=initialize,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = proc.stderr.splitlines()
    from_upstream = [
        line for line in lines if line.startswith("moonbox mcp: upstream noisy: ") and "tools, started in" not in line
    ]
    assert from_upstream[0] == "moonbox mcp: upstream noisy: demo upstream starting", lines[:3]
    # Once it is up, the server says how long the wait was.
    started = [line for line in lines if line.startswith("moonbox mcp: upstream noisy: 4 tools, started in ")]
    assert len(started) == 1 and started[0].endswith(" ms"), lines[-3:]
    assert from_upstream[1] == "moonbox mcp: upstream noisy: " + "x" * 512 + " …"
    # Control characters are gone: the line cannot recolour or rewrite the log.
    assert from_upstream[2] == "moonbox mcp: upstream noisy: [31mmoonbox mcp: serving"
    assert len(from_upstream) == 50, len(from_upstream)
    assert all(line.startswith("moonbox mcp: upstream noisy: ") for line in lines if "flood" in line)
    assert len(proc.stderr) < 40_000, len(proc.stderr)
