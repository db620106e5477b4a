"""An upstream MCP server over stdio for the code-mode tests.

`moonbox mcp --upstream 'demo=python3 upstream_server.py'` starts it and
offers its tools to Lua as `demo.add`, `demo.echo`, `demo.fail` and
`demo.hang`.
"""

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


if __name__ == "__main__":
    server.run("stdio")
