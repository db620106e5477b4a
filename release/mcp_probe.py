#!/usr/bin/env python3
"""Speaks MCP over stdio to a command that should be `moonbox mcp`: the
handshake, `tools/list` (which must offer run_lua and check_lua) and one
`run_lua` call (`return 6 * 7`, which must answer 42). Exits 0 and prints
one line when all of it holds, else 1 with what went wrong.

    python3 release/mcp_probe.py COMMAND [ARGS...]

release/check-dist.sh runs it through every artifact that ships the
command: the binary, the wheel's console script and uvx, npx, the image.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

TIMEOUT_S = 120


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "mcp_probe", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "run_lua", "arguments": {"code": "return 6 * 7"}},
        },
    ]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int, dict] = {}
    timer = threading.Timer(TIMEOUT_S, proc.kill)
    timer.start()
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" not in message:
                continue
            while message["id"] not in answers:
                line = proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"the server closed its output before answering {message['method']}")
                answer = json.loads(line)
                if "id" in answer and "method" not in answer:
                    answers[answer["id"]] = answer
        proc.stdin.close()
        proc.wait()
    except (RuntimeError, json.JSONDecodeError, BrokenPipeError) as e:
        proc.kill()
        proc.wait()
        print(f"mcp_probe: {' '.join(argv)}: {e}\n{proc.stderr.read() if proc.stderr else ''}", file=sys.stderr)
        return 1
    finally:
        timer.cancel()
    tools = sorted(t["name"] for t in answers[2].get("result", {}).get("tools", []))
    call = answers[3].get("result", {})
    values = call.get("structuredContent", {}).get("report", {}).get("values")
    server = answers[1].get("result", {}).get("serverInfo", {})
    if not {"run_lua", "check_lua"} <= set(tools) or values != [42]:
        print(f"mcp_probe: {' '.join(argv)}: tools {tools}, run_lua answered {call}", file=sys.stderr)
        return 1
    print(f"mcp: {server.get('name')} {server.get('version')}: {len(tools)} tools ({', '.join(tools)}); run_lua -> 42")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
