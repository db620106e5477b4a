"""Code mode with a remote upstream: `moonbox mcp --upstream 'demo=https://...'
--upstream-token-file demo=FILE` reaches an MCP server over streamable HTTP
(the Python SDK's, served by uvicorn: tests/mcp/upstream_server.py --http)
with a bearer token that scripts never see."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import HERE, Server, error_of, report_of, run_lua, server_env

pytestmark = pytest.mark.anyio

TOKEN = "tok_remote.upstream-7f3a9c"


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A test certificate authority and a server certificate it signed for
    localhost and 127.0.0.1; a second, self-signed certificate nobody trusts."""
    d = tmp_path_factory.mktemp("tls")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=moonbox test CA",
             "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"))
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
             "-keyout", str(d / "server.key"), "-out", str(d / "server.csr"))
    (d / "ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", str(d / "server.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
             "-CAcreateserial", "-days", "2", "-extfile", str(d / "ext"), "-out", str(d / "server.pem"))
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
             "-keyout", str(d / "untrusted.key"), "-out", str(d / "untrusted.pem"))
    return {"ca": d / "ca.pem", "cert": d / "server.pem", "key": d / "server.key",
            "untrusted_cert": d / "untrusted.pem", "untrusted_key": d / "untrusted.key"}


def _start_remote(token_file: Path, *tls_files: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "upstream_server.py"), "--http", str(token_file), *map(str, tls_files)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("port "), f"the remote upstream did not start: {line!r}"
    return proc, int(line.split()[1])


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("token") / "token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture(scope="module")
def remote(token_file: Path, tls: dict[str, Path]) -> Iterator[dict[str, str]]:
    """The remote upstream over TLS (`https`), over TLS with a certificate
    nobody trusts (`untrusted`) and over plain HTTP on loopback (`http`)."""
    started = [
        ("https", _start_remote(token_file, tls["cert"], tls["key"])),
        ("untrusted", _start_remote(token_file, tls["untrusted_cert"], tls["untrusted_key"])),
        ("http", _start_remote(token_file)),
    ]
    urls = {}
    for name, (_, port) in started:
        scheme = "http" if name == "http" else "https"
        urls[name] = f"{scheme}://localhost:{port}/mcp"
    yield urls
    for _, (proc, _) in started:
        proc.terminate()
        proc.wait(timeout=10)


def _mcp(moonbox_bin: str, *flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs `moonbox mcp` with the flags until its standard input closes."""
    return subprocess.run(
        [moonbox_bin, "mcp", *flags],
        stdin=subprocess.DEVNULL,
        env=env or server_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("kind", ["https", "http"])
async def test_a_script_calls_a_remote_upstream_with_a_token_it_cannot_see(
    kind: str, remote: dict[str, str], token_file: Path, tls: dict[str, Path], moonbox_bin: str,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over TLS (a CA from SSL_CERT_FILE) and over plain loopback HTTP, a
    script finds the remote tools and calls them; the token is in no reply."""
    monkeypatch.setenv("SSL_CERT_FILE", str(tls["ca"]))
    flags = ["--upstream", f"demo={remote[kind]}", "--upstream-token-file", f"demo={token_file}"]
    server = Server("stdio", moonbox_bin, flags, tmp_path)
    async with server.connect() as conn:
        code = """
            local found = catalog.search("add two integers")
            local sum = demo.add{a = 40, b = 2}
            local ok, err = pcall(demo.fail)
            return found[1].name, sum.result, demo.echo{text = "over the wire"}, ok, tostring(err)
        """
        result = await run_lua(conn.session, code)
        report = report_of(result)
        name, total, echoed, ok, err = report["values"]
        assert (name, total, echoed, ok) == ("demo.add", 42, "over the wire", False)
        assert "failed on purpose" in err
        outcomes = [(c["capability"], c["outcome"]) for c in report["calls"]]
        assert outcomes == [
            ("catalog.search", "ok"), ("demo.add", "ok"), ("demo.fail", "error"), ("demo.echo", "ok")
        ], outcomes
        everything = json.dumps(result.model_dump(mode="json"))
        tools = json.dumps((await conn.session.list_tools()).model_dump(mode="json"))
    assert TOKEN not in everything and TOKEN not in tools
    assert TOKEN not in server.log()


def test_a_wrong_token_stops_the_server_naming_the_upstream(
    remote: dict[str, str], tmp_path: Path, moonbox_bin: str
) -> None:
    """A token the upstream refuses (401) makes moonbox mcp exit 2 naming
    the upstream; neither token is printed."""
    wrong = tmp_path / "wrong"
    wrong.write_text("tok_not-the-right-one\n")
    proc = _mcp(moonbox_bin, "--upstream", f"demo={remote['http']}", "--upstream-token-file", f"demo={wrong}")
    assert proc.returncode == 2, proc.stderr
    assert "upstream 'demo'" in proc.stderr, proc.stderr
    assert "refused the bearer token" in proc.stderr, proc.stderr
    assert "tok_not-the-right-one" not in proc.stderr and TOKEN not in proc.stderr
    # No token at all is refused the same way.
    proc = _mcp(moonbox_bin, "--upstream", f"demo={remote['http']}")
    assert proc.returncode == 2, proc.stderr
    assert "requires authorization" in proc.stderr and "no bearer token" in proc.stderr, proc.stderr


def test_an_untrusted_certificate_is_refused(
    remote: dict[str, str], token_file: Path, tls: dict[str, Path], moonbox_bin: str
) -> None:
    """A server whose certificate no trusted authority signed is never sent
    the token: the handshake fails and the server exits 2 naming it."""
    env = {**server_env(), "SSL_CERT_FILE": str(tls["ca"])}
    proc = _mcp(
        moonbox_bin, "--upstream", f"demo={remote['untrusted']}", "--upstream-token-file", f"demo={token_file}",
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    assert "upstream 'demo': cannot reach" in proc.stderr, proc.stderr
    assert "invalid peer certificate" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--upstream", "demo=http://mcp.example.com/mcp", "--upstream-token-file", "demo={token}"], "https://"),
        (["--upstream", "demo=https://mcp.example.com/mcp", "--upstream-token-file", "other={token}"], "other"),
        (["--upstream", "demo=https://mcp.example.com/mcp", "--upstream-token-file", "demo={token}",
          "--upstream-token-file", "demo={token}"], "twice"),
        (["--upstream", "demo=python3 server.py", "--upstream-token-file", "demo={token}"], "command"),
        (["--upstream", "demo=https://u:p@mcp.example.com/mcp"], "token from a file"),
        (["--upstream", "demo=https://mcp.example.com/mcp", "--upstream-token-file", "demo=/nonexistent/token"],
         "/nonexistent/token"),
    ],
)
def test_bad_remote_upstream_flags_are_refused_before_anything_starts(
    flags: list[str], says: str, token_file: Path, moonbox_bin: str
) -> None:
    """Each misuse of --upstream URL and --upstream-token-file exits 2 with
    a sentence that names the problem, and connects to nothing."""
    proc = _mcp(moonbox_bin, *(f.replace("{token}", str(token_file)) for f in flags))
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr, proc.stderr
    assert TOKEN not in proc.stderr
