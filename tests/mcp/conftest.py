"""Fixtures that start `moonbox mcp` and connect the Python MCP SDK to it.

The binary is `MOONBOX_BIN` when set (`just mcp-test` sets it to the one
its `build` step made), else `target/debug/moonbox`, built once per run
the way `just build` builds it: with the workspace's one feature set, so
that nothing already built for the tests is compiled again.

A test declares the server's flags with `@pytest.mark.server_flags(...)`.
The `server` fixture runs every test over both transports: stdio (the SDK
spawns the process for each connection) and streamable HTTP on 127.0.0.1
(the fixture starts the process on a free port, waits until the port
answers, and stops it afterwards). `http_server` is the HTTP-only variant.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

# How long a server may take to start answering: the first start of a
# debug build compiles the guest component.
START_TIMEOUT_S = 120.0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "server_flags(*flags): flags for `moonbox mcp` in this test")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def moonbox_bin() -> str:
    override = os.environ.get("MOONBOX_BIN")
    if override:
        # Absolute, so that the processes the tests start find it from any directory.
        return str(Path(shutil.which(override) or override).absolute())
    subprocess.run(["cargo", "test", "-q", "--workspace", "--no-run"], cwd=REPO, check=True)
    return str(REPO / "target" / "debug" / "moonbox")


def server_env() -> dict[str, str]:
    """This environment without a token, so each test's flags alone decide whether one is needed."""
    return {k: v for k, v in os.environ.items() if k != "MOONBOX_MCP_TOKEN"}


def upstream_flag(name: str = "demo") -> str:
    """The `--upstream` value that starts tests/mcp/upstream_server.py under this Python."""
    return f"{name}={sys.executable} {HERE / 'upstream_server.py'}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Connection:
    """An initialized client session and the server's answer to initialize."""

    session: ClientSession
    init: types.InitializeResult


class Server:
    """One `moonbox mcp` configuration, reachable over one transport."""

    def __init__(self, transport: str, binary: str, flags: list[str], log_dir: Path) -> None:
        self.transport = transport
        self.binary = binary
        self.flags = flags
        self.log_path = log_dir / f"moonbox-mcp-{transport}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None

    # --- HTTP process management -------------------------------------------------

    def start_http(self) -> None:
        """Start the server on a free loopback port and wait until the port answers."""
        self.port = free_port()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [self.binary, "mcp", *self.flags, "--http", f"127.0.0.1:{self.port}"],
                stdin=subprocess.DEVNULL,
                env=server_env(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"moonbox mcp exited with {self.proc.returncode} before listening:\n{self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"moonbox mcp did not listen on port {self.port} in {START_TIMEOUT_S} s:\n{self.log()}")
                time.sleep(0.05)

    def stop(self) -> int | None:
        """Stop the HTTP server; returns its exit status if it had already exited."""
        if self.proc is None:
            return None
        early = self.proc.poll()
        if early is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return early

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    @property
    def url(self) -> str:
        assert self.port is not None, "not an HTTP server"
        return f"http://127.0.0.1:{self.port}/mcp"

    # --- clients -----------------------------------------------------------------

    @asynccontextmanager
    async def connect(self, headers: dict[str, str] | None = None) -> AsyncIterator[Connection]:
        """An initialized MCP client session over this server's transport."""
        if self.transport == "stdio":
            params = StdioServerParameters(command=self.binary, args=["mcp", *self.flags], env=server_env())
            with open(self.log_path, "a") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with ClientSession(read, write) as session:
                        init = await session.initialize()
                        yield Connection(session, init)
        else:
            timeout = httpx.Timeout(30.0, read=300.0)
            async with httpx.AsyncClient(headers=headers, timeout=timeout, follow_redirects=True) as http:
                async with streamable_http_client(self.url, http_client=http) as (read, write, _):
                    async with ClientSession(read, write) as session:
                        init = await session.initialize()
                        yield Connection(session, init)


def _flags(request: pytest.FixtureRequest) -> list[str]:
    marker = request.node.get_closest_marker("server_flags")
    return [str(f) for f in marker.args] if marker else []


def _serve(transport: str, request: pytest.FixtureRequest, moonbox_bin: str, tmp_path: Path) -> Iterator[Server]:
    server = Server(transport, moonbox_bin, _flags(request), tmp_path)
    if transport == "http":
        server.start_http()
    try:
        yield server
    finally:
        early = server.stop()
        # Shown by pytest when the test fails.
        print(f"--- moonbox mcp ({transport}) log ---\n{server.log()}")
    assert early is None, f"moonbox mcp exited with {early} during the test:\n{server.log()}"


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest, moonbox_bin: str, tmp_path: Path) -> Iterator[Server]:
    """`moonbox mcp` with the test's flags, over stdio and over streamable HTTP."""
    yield from _serve(request.param, request, moonbox_bin, tmp_path)


@pytest.fixture
def http_server(request: pytest.FixtureRequest, moonbox_bin: str, tmp_path: Path) -> Iterator[Server]:
    """`moonbox mcp --http 127.0.0.1:PORT` with the test's flags."""
    yield from _serve("http", request, moonbox_bin, tmp_path)


@pytest.fixture
def start_http(moonbox_bin: str, tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Starts `moonbox mcp --http 127.0.0.1:PORT` with the given flags; stops them all afterwards."""
    servers: list[Server] = []

    def start(*flags: str) -> Server:
        log_dir = tmp_path / f"server{len(servers)}"
        log_dir.mkdir()
        server = Server("http", moonbox_bin, list(flags), log_dir)
        servers.append(server)
        server.start_http()
        return server

    yield start
    crashed = []
    for server in servers:
        early = server.stop()
        print(f"--- moonbox mcp {server.flags} log ---\n{server.log()}")
        if early is not None:
            crashed.append(f"{server.flags} exited with {early}")
    assert not crashed, crashed


# --- helpers shared by the test modules ----------------------------------------------


async def run_lua(client: ClientSession, code: str, **arguments: Any) -> types.CallToolResult:
    """Call run_lua with the code and any other arguments (inputs, session)."""
    return await client.call_tool("run_lua", {"code": code, **arguments})


def text_of(result: types.CallToolResult) -> str:
    """The text of a result's content items, joined."""
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def report_of(result: types.CallToolResult) -> dict[str, Any]:
    """run_lua's structured report, checked for the fields every report has."""
    structured = result.structuredContent
    assert isinstance(structured, dict), f"no structuredContent: {result}"
    # The line a model acts on leads, the same as the text content's first item.
    assert structured["answer"] == result.content[0].text, structured
    report = structured["report"]
    for field in ("version", "ok", "values", "output", "stats"):
        assert field in report, f"report lacks {field!r}: {report}"
    # What would be null is left out (one type per field in the schema).
    assert None not in (v for k, v in report.items() if k != "values"), report
    assert bool(result.isError) == ("error" in report) == (not report["ok"]), f"isError disagrees with ok: {result}"
    return report


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    """The error of a failed run_lua, checked for its fields."""
    report = report_of(result)
    assert result.isError is True, f"expected an error: {report}"
    error = report["error"]
    assert isinstance(error, dict), report
    for field in ("kind", "message", "chunk", "summary"):
        assert field in error, f"error lacks {field!r}: {error}"
    assert error["summary"].startswith(f"error[{error['kind']}]"), error
    return error


async def new_session(client: ClientSession) -> str:
    """A new session's id, checked to come back as text and as structuredContent."""
    result = await client.call_tool("new_session", {})
    assert not result.isError, text_of(result)
    assert isinstance(result.structuredContent, dict), result
    sid = result.structuredContent["session"]
    assert isinstance(sid, str) and sid, result
    assert sid in text_of(result)
    return sid
