"""Shared test configuration: which anyio backends a test runs on, and where things are.

The in-process JSON-RPC, server, client, in-memory and stdio tests run on asyncio and on trio
(``_BOTH_BACKENDS``); everything else (HTTP under uvicorn, which is asyncio-only, the interop and
conformance suites with their subprocess peers) runs on asyncio. A test that is inherently
asyncio-only inside a two-backend directory says so with ``@pytest.mark.asyncio_only`` (or its
module defines its own ``anyio_backend`` fixture), with a comment why.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
TESTS = REPO / "tests"

# Directories (every test below them) and files that run on both backends.
_BOTH_BACKENDS = (
    "jsonrpc/",
    "server/",
    "client/",
    "modern/",
    "proxy/test_proxy.py",
    "transports/test_fd_stream.py",
    "transports/test_fd_stream_writes.py",
    "transports/test_framing.py",
    "transports/test_memory.py",
    "transports/test_stdio_client.py",
    "transports/test_stdio_server.py",
)
# Below those, what needs asyncio (a file, or one test of a file):
_ASYNCIO_ONLY = (
    "client/test_modern_http.py",  # HTTP: an in-process uvicorn server (asyncio only)
    # The tool leaves an asyncio task behind (asyncio.get_running_loop().create_task) on purpose.
    "server/features/test_logging.py::test_nothing_is_logged_for_a_request_after_its_result",
    # The keys of concurrent questions follow the order their tasks start: FIFO on asyncio, while
    # trio deliberately starts tasks in a random order.
    "server/modern/test_mrtr.py::test_questions_asked_concurrently_share_one_round",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "asyncio_only: runs on asyncio only (the reason is in a comment)")


def _on_both_backends(metafunc: pytest.Metafunc) -> bool:
    try:
        where = Path(str(metafunc.definition.path)).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return False
    if not where.startswith(_BOTH_BACKENDS):
        return False
    if where in _ASYNCIO_ONLY or f"{where}::{metafunc.definition.originalname}" in _ASYNCIO_ONLY:
        return False
    if metafunc.definition.get_closest_marker("asyncio_only") is not None:
        return False
    # A module or class with its own anyio_backend fixture keeps it.
    return not any(
        owner is not None and "anyio_backend" in vars(owner) for owner in (metafunc.module, metafunc.cls)
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "anyio_backend" in metafunc.fixturenames and _on_both_backends(metafunc):
        metafunc.parametrize("anyio_backend", ["asyncio", "trio"])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture(autouse=True, scope="session")
def _private_state_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Per-user state (the request-state key file) goes to a temporary folder, for every server
    the tests start, in process or as a subprocess, never to the real home."""
    previous = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state-home"))
    yield
    if previous is None:
        os.environ.pop("XDG_STATE_HOME", None)
    else:
        os.environ["XDG_STATE_HOME"] = previous
