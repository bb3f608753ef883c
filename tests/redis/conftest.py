"""Fixtures of the Redis tests: a fresh ``redis-server`` per test (skipped when not installed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests import timeouts

from .support import RedisServer, redis_server_or_skip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(redis_server_or_skip(), tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=timeouts.STEP) as client:
        yield client
