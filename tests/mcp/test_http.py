"""What only the streamable HTTP transport of `moonbox mcp` does: the Origin
check, the refusal to listen beyond loopback without a token, and bearer
tokens."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from conftest import Server, free_port, report_of, run_lua, server_env

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "moonbox-tests", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def post_initialize(server: Server, **headers: str) -> httpx.Response:
    """One raw initialize POST to /mcp with extra headers."""
    return httpx.post(server.url, json=INITIALIZE, headers={**HEADERS, **headers}, timeout=30)


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "https://evil.example",
        "http://127.0.0.1.evil.example",
        "http://localhost.evil.example",
        "null",
    ],
)
def test_foreign_origin_is_refused(http_server: Server, origin: str) -> None:
    """A request whose Origin is not loopback gets 403, however it is dressed up."""
    response = post_initialize(http_server, Origin=origin)
    assert response.status_code == 403, response.text


def test_loopback_origin_and_no_origin_are_accepted(http_server: Server) -> None:
    """The same request from a loopback page, or with no Origin, is served."""
    port = http_server.port
    for headers in ({}, {"Origin": f"http://127.0.0.1:{port}"}, {"Origin": f"http://localhost:{port}"}):
        response = post_initialize(http_server, **headers)
        assert response.status_code == 200, (headers, response.status_code, response.text)
        assert "protocolVersion" in response.text


def test_allow_origin_admits_that_origin_only(start_http: Callable[..., Server]) -> None:
    """--allow-origin URL lets that one foreign origin in; others are still refused."""
    server = start_http("--allow-origin", "http://app.example")
    assert post_initialize(server, Origin="http://app.example").status_code == 200
    assert post_initialize(server, Origin="http://evil.example").status_code == 403


def test_non_loopback_bind_without_token_refuses_to_start(moonbox_bin: str) -> None:
    """--http on a non-loopback address without --token-file exits 2, saying a token is needed."""
    proc = subprocess.run(
        [moonbox_bin, "mcp", "--http", f"0.0.0.0:{free_port()}"],
        stdin=subprocess.DEVNULL,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "token" in proc.stderr.lower(), proc.stderr


@pytest.fixture
def token_server(start_http: Callable[..., Server], tmp_path: Path) -> tuple[Server, str]:
    token = "s3cret-token-for-tests"
    token_file = tmp_path / "token"
    # Written as `echo TOKEN > FILE` writes it, with a final newline.
    token_file.write_text(token + "\n")
    return start_http("--token-file", str(token_file)), token


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token", "Bearer s3cret-token-for-test", "s3cret-token-for-tests", "Basic czNjcmV0"],
)
def test_token_required(token_server: tuple[Server, str], authorization: str | None) -> None:
    """With --token-file, a request without the exact bearer token gets 401."""
    server, _ = token_server
    headers = {} if authorization is None else {"Authorization": authorization}
    response = post_initialize(server, **headers)
    assert response.status_code == 401, (authorization, response.status_code, response.text)


def test_token_accepted_over_raw_http(token_server: tuple[Server, str]) -> None:
    """The right bearer token gets the initialize answer."""
    server, token = token_server
    response = post_initialize(server, Authorization=f"Bearer {token}")
    assert response.status_code == 200, response.text
    assert "protocolVersion" in response.text


@pytest.mark.anyio
async def test_token_accepted_by_the_sdk(token_server: tuple[Server, str]) -> None:
    """The SDK with the bearer token header lists tools and runs Lua."""
    server, token = token_server
    async with server.connect(headers={"Authorization": f"Bearer {token}"}) as conn:
        names = {t.name for t in (await conn.session.list_tools()).tools}
        assert "run_lua" in names
        assert report_of(await run_lua(conn.session, "return 6 * 7"))["values"] == [42]
