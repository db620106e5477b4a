"""An upstream MCP server for the code-mode tests.

`moonbox mcp --upstream 'demo=python3 upstream_server.py'` starts it and
offers its tools to Lua as `demo.add`, `demo.echo`, `demo.fail` and
`demo.hang`.

`upstream_server.py --http TOKEN_FILE [CERT KEY]` serves the same tools as a
remote server over streamable HTTP on a free loopback port (over TLS with
CERT and KEY), printing `port N` once it listens. Every request must carry
`Authorization: Bearer <the token in TOKEN_FILE>`; others get 401.
"""

import socket
import sys
from pathlib import Path

import anyio
from mcp.server.fastmcp import FastMCP

server = FastMCP("demo", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# Unstructured on purpose: its result is text content only, so the tests
# cover both shapes of an upstream result.
@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def fail() -> str:
    """Always raise an error."""
    raise RuntimeError("the upstream tool failed on purpose")


@server.tool()
async def hang() -> str:
    """Sleep for a minute before answering."""
    await anyio.sleep(60)
    return "woke up"


# `--many N` adds N generated tools, `widget_000` ... (a large upstream, as
# GitHub's or a cloud's MCP server is, for the discovery tests).
KINDS = ("gear", "spring", "lever", "pulley", "valve", "sensor", "motor", "switch")


def _widget_tool(i: int):  # noqa: ANN202 - FastMCP reads the signature
    def widget(id: int) -> dict[str, object]:
        return {"widget": i, "kind": KINDS[i % len(KINDS)], "id": id}

    return widget


def _add_many(n: int) -> None:
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        server.add_tool(
            _widget_tool(i),
            name=f"widget_{i:03}",
            description=f"Look up a {kind} in bin {i:03} by its id. Returns the {kind}'s record.",
        )


def _serve_http(token_file: str, tls: list[str]) -> None:
    import uvicorn

    expected = f"Bearer {Path(token_file).read_text().strip()}".encode()
    app = server.streamable_http_app()

    async def bearer_only(scope, receive, send):  # noqa: ANN001, ANN202 - an ASGI app
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", b"Bearer"), (b"content-type", b"text/plain")],
                }
            )
            await send({"type": "http.response.body", "body": b"a bearer token is required"})
            return
        await app(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    tls_files = {"ssl_certfile": tls[0], "ssl_keyfile": tls[1]} if tls else {}
    config = uvicorn.Config(bearer_only, log_level="warning", lifespan="on", **tls_files)
    print(f"port {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--http":
        _serve_http(sys.argv[2], sys.argv[3:])
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "--many":
        _add_many(int(sys.argv[2]))
    if sys.argv[1:] == ["--noisy"]:
        # A banner, a line far too long, a line that pretends to be moonbox,
        # then a flood.
        print("demo upstream starting", file=sys.stderr)
        print("x" * 100_000, file=sys.stderr)
        print("\x1b[31mmoonbox mcp: serving\r", file=sys.stderr)
        for i in range(1000):
            print(f"INFO flood line {i}", file=sys.stderr)
        sys.stderr.flush()
    server.run("stdio")
