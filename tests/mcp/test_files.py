"""run_lua's `args`, `files` and `stdin`, and the files a script wrote as
embedded resources, driven by the Python SDK over both transports.

The SDK checks every structuredContent against the tool's declared output
schema, so these calls also show that a report with `files` fits it."""

from __future__ import annotations

import base64

import pytest
from conftest import Server, new_session, report_of, run_lua, text_of
from mcp import types

pytestmark = pytest.mark.anyio

SCRIPT = """
local total = 0
for line in io.lines('data/sales.csv') do
  local amount = line:match(',(%d+)$')
  if amount then total = total + tonumber(amount) end
end
local fmt = require('lib.fmt')
local out = assert(io.open('/tmp/summary.txt', 'w'))
out:write(fmt.line(arg[1], total), '\\n')
out:close()
io.open('raw.bin', 'wb'):write('\\0\\1\\255'):close()
return select('#', ...), arg[2], io.read('l')
"""


async def test_list_tools_declares_args_files_and_stdin(server: Server) -> None:
    """run_lua's input schema has args, files and stdin; its output schema has files."""
    async with server.connect() as conn:
        tools = {t.name: t for t in (await conn.session.list_tools()).tools}
        run = tools["run_lua"]
        props = run.inputSchema["properties"]
        assert props["args"] == {**props["args"], "type": "array", "items": {"type": "string"}}
        assert props["files"]["type"] == "object"
        assert props["stdin"]["type"] == "string"
        assert run.outputSchema is not None
        assert run.outputSchema["properties"]["report"]["properties"]["files"]["type"] == "array"
        assert "file:///" in (run.description or "")


async def test_a_script_reads_a_mounted_file_uses_args_and_returns_what_it_wrote(server: Server) -> None:
    """The files mounted are read by io.lines and require, args reach arg and ..., stdin reaches
    io.read; the files written come back in the report and as embedded resources."""
    async with server.connect() as conn:
        result = await run_lua(
            conn.session,
            SCRIPT,
            args=["Total", "second"],
            files={
                "data/sales.csv": "region,amount\nnorth,120\nsouth,80\n",
                "lib/fmt.lua": "return { line = function(label, n) return label .. ': ' .. n end }",
            },
            stdin="first line\nsecond line\n",
        )
        report = report_of(result)
        assert report["ok"] is True, text_of(result)
        assert report["values"] == [2, "second", "first line"]
        assert report["files"] == [
            {"name": "raw.bin", "size": 3, "base64": base64.b64encode(b"\0\1\xff").decode()},
            {"name": "tmp/summary.txt", "size": 11, "text": "Total: 200\n"},
        ]

        resources = [c for c in result.content if isinstance(c, types.EmbeddedResource)]
        by_uri = {str(r.resource.uri): r.resource for r in resources}
        assert set(by_uri) == {"file:///raw.bin", "file:///tmp/summary.txt"}
        summary = by_uri["file:///tmp/summary.txt"]
        assert isinstance(summary, types.TextResourceContents)
        assert summary.mimeType == "text/plain"
        assert summary.text == "Total: 200\n"
        raw = by_uri["file:///raw.bin"]
        assert isinstance(raw, types.BlobResourceContents)
        assert raw.mimeType == "application/octet-stream"
        assert base64.b64decode(raw.blob) == b"\0\1\xff"
        # The text line is still first, and there is one.
        assert isinstance(result.content[0], types.TextContent)
        assert len([c for c in result.content if isinstance(c, types.TextContent)]) == 1


async def test_binary_files_go_in_as_base64_and_mounts_are_read_only(server: Server) -> None:
    """A file given as {"base64": ...} is mounted byte for byte; writing a mounted file fails."""
    async with server.connect() as conn:
        result = await run_lua(
            conn.session,
            "local f = io.open('in.bin', 'rb') local s = f:read('a') f:close() "
            "return #s, {s:byte(1, -1)}, (select(2, io.open('in.bin', 'w')))",
            files={"in.bin": {"base64": base64.b64encode(b"\0\xfe\xff").decode()}},
        )
        report = report_of(result)
        assert report["values"] == [3, [0, 254, 255], "in.bin: Permission denied"]
        assert "files" not in report
        assert not [c for c in result.content if isinstance(c, types.EmbeddedResource)]


async def test_a_failed_run_still_returns_the_files_it_wrote(server: Server) -> None:
    """Whatever stops the script, the files it wrote are in the result."""
    async with server.connect() as conn:
        result = await run_lua(conn.session, "io.open('partial.txt', 'w'):write('so far'):close() error('boom')")
        report = report_of(result)
        assert result.isError is True
        assert report["error"]["kind"] == "runtime"
        assert report["files"] == [{"name": "partial.txt", "size": 6, "text": "so far"}]
        resources = [c for c in result.content if isinstance(c, types.EmbeddedResource)]
        assert [str(r.resource.uri) for r in resources] == ["file:///partial.txt"]


async def test_files_stay_in_a_session(server: Server) -> None:
    """Files mounted or written in a session are there for its later calls."""
    async with server.connect() as conn:
        sid = await new_session(conn.session)
        first = await run_lua(
            conn.session,
            "io.open('notes.txt', 'w'):write(io.open('seed.txt'):read('a'), '+1'):close()",
            files={"seed.txt": "0"},
            session=sid,
        )
        assert report_of(first)["files"] == [{"name": "notes.txt", "size": 3, "text": "0+1"}]
        later = await run_lua(
            conn.session, "return io.open('notes.txt'):read('a'), io.open('seed.txt'):read('a')", session=sid
        )
        assert report_of(later)["values"] == ["0+1", "0"]


@pytest.mark.server_flags("--max-script-bytes", "1KiB")
async def test_bad_or_oversized_files_are_tool_errors(server: Server) -> None:
    """files, args and stdin of the wrong shape, or past the bound together, are refused before any Lua runs."""
    async with server.connect() as conn:
        too_big = await run_lua(conn.session, "return 1", files={"a.txt": "x" * 600}, stdin="y" * 600)
        assert too_big.isError is True
        assert "`args`, `files` and `stdin` take more than the 1024 bytes allowed together" in text_of(too_big)
        bad = await run_lua(conn.session, "return 1", files={"a.txt": 1})
        assert bad.isError is True
        assert "`files` must be an object of file name -> text" in text_of(bad)
        bad = await run_lua(conn.session, "return 1", args="a b")
        assert bad.isError is True
        assert "`args` must be an array of strings" in text_of(bad)
