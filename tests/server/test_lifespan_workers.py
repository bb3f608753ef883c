"""The lifespan under ``serve --http --stateless --workers 2``: entered once in every worker process
at its start-up, before its first request, and exited in each at shutdown."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp import Client
from tests import timeouts

from ..http.support import spawned
from .servers import lifespan_server

pytestmark = pytest.mark.anyio

SERVER_FILE = Path(lifespan_server.__file__).resolve()
TIMEOUT = timeouts.STARTUP


def _events(log: Path) -> list[tuple[str, str]]:
    if not log.exists():
        return []
    return [
        (line.split()[0], line.split()[1]) for line in log.read_text(encoding="utf-8").splitlines() if line
    ]


def _wait_for_entries(log: Path, count: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while len({pid for event, pid in _events(log) if event == "enter"}) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} workers did not enter their lifespans: {_events(log)}")
        time.sleep(0.05)  # polling a file other processes write: there is no event to wait on


@pytest.mark.asyncio_only  # uvicorn runs on asyncio only
async def test_every_worker_runs_the_lifespan_once(tmp_path: Path) -> None:
    log = tmp_path / "lifespan.log"
    os.environ["LIFESPAN_LOG"] = str(log)
    try:
        with spawned(SERVER_FILE, "--stateless", "--workers", "2") as served:
            _wait_for_entries(log, 2)  # the port may open before the second worker has started
            texts = []
            with anyio.fail_after(TIMEOUT):
                for _ in range(6):
                    async with Client.http(served.url + "/mcp", mode="2026-07-28") as client:
                        texts.append((await client.call_tool("count", {}))["content"][0]["text"])
            running = _events(log)
    finally:
        os.environ.pop("LIFESPAN_LOG", None)
    entered = [pid for event, pid in running if event == "enter"]
    assert len(entered) == 2 and len(set(entered)) == 2  # once in each worker, and only once
    assert all(text.endswith(" of 1") for text in texts)  # every call saw its worker's lifespan state
    exited = sorted(pid for event, pid in _events(log) if event == "exit")
    assert exited == sorted(entered)  # each worker left its lifespan at shutdown
