"""A program that uses the whole public API, for ``mypy --strict`` to
check against the installed wheel (check.sh); run by the tests too."""

from __future__ import annotations

import asyncio

import moonbox
from moonbox import tool


async def fetch(symbol: str) -> float:
    await asyncio.sleep(0)
    return 101.5


def main() -> list[moonbox.Json]:
    limits: moonbox.Limits = moonbox.Limits(timeout=2.0, max_instructions=1_000_000).replace(max_call_depth=200)
    caps = [moonbox.Capability("prices.get", fetch, doc="prices.get(symbol) -> number")]
    sandbox = moonbox.Sandbox(limits=limits, capabilities=caps, deterministic=moonbox.Determinism(seed=1))
    report: moonbox.Report = sandbox.eval("return prices.get('A')", inputs={"n": 1}, chunk_name="typed.lua")
    error: moonbox.LuaError | None = report.error
    stats: moonbox.Stats = report.stats
    logs: list[moonbox.LogEvent] = report.logs
    assert error is None and stats.capability_calls == 1 and logs == []
    written = sandbox.eval(
        "io.open('out.txt', 'w'):write(io.read('a'), ...):close()",
        args=["!"],
        files={"in.txt": "text", "raw.bin": b"\x00"},
        stdin=b"piped",
    )
    files: dict[str, bytes] = written.files
    assert files == {"out.txt": b"piped!"}
    with sandbox.session() as session:
        session.eval("x = 1", on_output=lambda b: None, on_log=lambda e: None)
        again: moonbox.Report = session.eval("return x")
        assert again.values == [1]
    definition: dict[str, object] = tool.definition(sandbox, "mcp")
    assert definition["name"] == "run_lua"
    kinds: tuple[str, ...] = moonbox.ERROR_KINDS
    assert "timeout" in kinds and "timeout" in moonbox.LIMIT_KINDS
    return report.values


async def main_async() -> str:
    sandbox = moonbox.Sandbox()
    async with sandbox.session() as session:
        report = await session.eval_async("return 'ok'")
    return report.to_json()


def test_the_typed_program_runs() -> None:
    assert main() == [101.5]
    assert '"values":["ok"]' in asyncio.run(main_async())
