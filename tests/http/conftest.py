"""Fixtures for the HTTP tests.

``anyio_backend`` is module-scoped here so that a module can share one in-process uvicorn server
between the tests that only read from it (a module-scoped async fixture).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests import timeouts

from .servers.toolbox import Controls


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def controls() -> Controls:
    return Controls()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """A raw HTTP client (no MCP logic at all)."""
    async with httpx.AsyncClient(timeout=timeouts.STEP) as client:
        yield client
