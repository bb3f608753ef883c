"""``max_requests_per_session``: POSTs of a session in flight at once, those whose client went away
included (they run on, as the spec asks), are bounded; past the bound a POST is answered 429 with a
JSON-RPC error and ``Retry-After``, and room comes back as they end. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.http import McpHttpApp

from .support import TIMEOUT, assert_error_body, call, open_session, post, serving, session_headers

pytestmark = pytest.mark.anyio


async def test_abandoned_requests_are_bounded_per_session() -> None:
    server = Server("busy")
    release, both_started = anyio.Event(), anyio.Event()
    started = 0

    @server.tool()
    async def hold() -> str:
        nonlocal started
        started += 1
        if started == 2:
            both_started.set()
        await release.wait()
        return "done"

    @server.tool()
    def quick() -> str:
        return "quick"

    app = McpHttpApp(server, max_requests_per_session=2, json_response=True)
    async with serving(app) as base, httpx.AsyncClient(timeout=TIMEOUT) as http:
        url = base + "/mcp"
        session = await open_session(http, url)
        headers = session_headers(session)
        for rid in (1, 2):  # sent, then given up on: the client goes away, the calls run on
            with anyio.move_on_after(0.5):
                await http.post(url, content=orjson.dumps(call(rid, "hold", {})), headers=headers)
        with anyio.fail_after(TIMEOUT):
            await both_started.wait()
        refused = await post(http, url, call(3, "quick", {}), headers)
        error = assert_error_body(refused, 429)
        assert "2 requests in flight (at most 2)" in error["message"]
        assert refused.headers["retry-after"]
        other = await open_session(http, url)  # another session is not held back by this one's
        answered = await post(http, url, call(4, "quick", {}), session_headers(other))
        assert answered.json()["result"]["content"][0]["text"] == "quick"
        release.set()
        with anyio.fail_after(TIMEOUT):  # the abandoned calls end: room again (evidence, not a delay)
            while (again := await post(http, url, call(5, "quick", {}), headers)).status_code == 429:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        assert again.json()["result"]["content"][0]["text"] == "quick"
