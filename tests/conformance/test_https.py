"""The harness over https: our server under uvicorn with a self-signed certificate made by openssl."""

from __future__ import annotations

import io
import shutil
import ssl
import subprocess
from pathlib import Path

import anyio
import anyio.streams.tls
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp_conformance import HttpTarget, load_spec
from jsonrpc_mcp_conformance.cli import EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, main
from tests import timeouts

from ..http.support import REPO, serving, spawned

pytestmark = pytest.mark.anyio

EVERYTHING = REPO / "examples" / "everything" / "server.py"
SPEC = load_spec(check=False)
HTTP_RUNS = sum(
    len([r for r in f.revisions if r != "2024-11-05"])
    for f in SPEC.fixtures
    if f.transports == ("http",) and f.area == "http"
)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for the name ``localhost`` only (not for 127.0.0.1): (cert, key)."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl binary to make a self-signed certificate (and no cryptography package)")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", str(key),
         "-out", str(cert), "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def conformance(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--only", "http:*"], out=out)
    return code, out.getvalue()


async def test_https_with_the_ca_file_insecure_or_neither(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    app = McpHttpApp(load_target(str(EVERYTHING)))
    async with serving(app, ssl_certfile=str(cert), ssl_keyfile=str(key)) as base:
        port = base.rsplit(":", 1)[1]
        by_name, by_address = f"https://localhost:{port}/mcp", f"https://127.0.0.1:{port}/mcp"
        with anyio.fail_after(timeouts.LONG_RUN):
            trusted = await anyio.to_thread.run_sync(conformance, "http", by_name, "--ca-file", str(cert))
            untrusted = await anyio.to_thread.run_sync(conformance, "http", by_name)
            wrong_name = await anyio.to_thread.run_sync(
                conformance, "http", by_address, "--ca-file", str(cert)
            )
            insecure = await anyio.to_thread.run_sync(conformance, "http", by_address, "--insecure")
    assert trusted[0] == EXIT_OK, trusted[1]
    assert f"{HTTP_RUNS} passed, 0 failed" in trusted[1]
    assert untrusted[0] == EXIT_UNREACHABLE, untrusted[1]
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted[1]
    assert wrong_name[0] == EXIT_UNREACHABLE and "CERTIFICATE_VERIFY_FAILED" in wrong_name[1]
    assert insecure[0] == EXIT_OK, insecure[1]


async def test_the_server_name_is_sent_with_sni(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    names: list[str | None] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)
    listener = anyio.streams.tls.TLSListener(
        await anyio.create_tcp_listener(local_host="127.0.0.1"), context, standard_compatible=False
    )
    port = listener.listener.extra(anyio.abc.SocketAttribute.local_port)

    async def handle(stream: anyio.abc.ByteStream) -> None:
        await stream.aclose()

    target = HttpTarget(f"https://localhost:{port}/mcp", ca_file=str(cert))
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        with anyio.fail_after(timeouts.STEP):
            stream = await target.open_stream(target.endpoint())
            await stream.aclose()
        tg.cancel_scope.cancel()
    assert names == ["localhost"]


def test_serve_http_passes_tls_through_to_uvicorn(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with spawned(EVERYTHING, "--ssl-certfile", str(cert), "--ssl-keyfile", str(key)) as server:
        port = server.url.rsplit(":", 1)[1]
        code, out = conformance("http", f"https://localhost:{port}/mcp", "--ca-file", str(cert))
    assert code == EXIT_OK, out
    assert f"{HTTP_RUNS} passed, 0 failed" in out


def test_an_unreadable_ca_file_is_a_usage_error(tmp_path: Path) -> None:
    assert (
        conformance("http", "https://localhost:1/mcp", "--ca-file", str(tmp_path / "none.pem"))[0]
        == EXIT_USAGE
    )
