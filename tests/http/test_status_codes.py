"""The Streamable HTTP status codes (NOTES.md §5.3 and §10 C01-C16), row by row, on real uvicorn.

Every error answer is checked to be a JSON-RPC error body with a non-zero integer code (never an
empty 500, never a traceback). The module shares one server: each test makes its own session.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import orjson
import pytest

from jsonrpc_mcp.http import EventStore, McpHttpApp

from .servers.toolbox import build_server
from .support import (
    ACCEPT_BOTH,
    INITIALIZED,
    JSON_HEADERS,
    LATEST,
    TIMEOUT,
    SseReader,
    assert_error_body,
    call,
    delete_session,
    initialize,
    notification,
    open_session,
    post,
    request,
    serving,
    session_headers,
)

pytestmark = pytest.mark.anyio

BAD_VERSIONS = ["invalid-protocol-version", "2000-01-01", "2099-01-01"]


@pytest.fixture(scope="module")
async def base() -> AsyncIterator[str]:
    async with serving(McpHttpApp(build_server())) as url:
        yield url


@pytest.fixture
def url(base: str) -> str:
    return base + "/mcp"


# -- POST: notifications, responses, requests -----------------------------------------------------
async def test_a_notification_is_accepted_with_202_and_no_body(http: httpx.AsyncClient, url: str) -> None:
    response = await post(http, url, initialize(), JSON_HEADERS)
    session_id = response.headers["mcp-session-id"]
    accepted = await post(http, url, INITIALIZED, session_headers(session_id))
    assert accepted.status_code == 202
    assert accepted.content == b""


async def test_a_response_is_accepted_with_202_and_no_body(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url)
    answer = {"jsonrpc": "2.0", "id": 12345, "result": {}}  # to no request of ours: dropped, still accepted
    accepted = await post(http, url, answer, session_headers(session_id))
    assert accepted.status_code == 202
    assert accepted.content == b""


async def test_a_plain_request_is_answered_with_json(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url)
    response = await post(http, url, call(7, "add", {"a": 2, "b": 3}), session_headers(session_id))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"] == 7
    assert body["result"]["content"][0]["text"] == "5"


async def test_a_request_that_reports_progress_is_answered_with_an_event_stream(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    response = await post(http, url, call(8, "progress", {"steps": 1}, "tok"), session_headers(session_id))
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"


async def test_the_initialize_answer_carries_the_session_header(http: httpx.AsyncClient, url: str) -> None:
    response = await post(http, url, initialize(), JSON_HEADERS)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["protocolVersion"] == LATEST
    assert response.headers["mcp-session-id"]


async def test_a_failed_initialize_mints_no_session(http: httpx.AsyncClient, url: str) -> None:
    response = await post(http, url, request(0, "initialize", {"capabilities": {}}), JSON_HEADERS)
    assert response.json()["error"]["code"] == -32602
    assert "mcp-session-id" not in response.headers


# -- GET ------------------------------------------------------------------------------------------
async def test_get_opens_the_standalone_stream(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url)
    headers = {"accept": "text/event-stream", "mcp-session-id": session_id, "mcp-protocol-version": LATEST}
    with anyio.fail_after(TIMEOUT):
        async with http.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["mcp-session-id"] == session_id
            priming = await SseReader(response).next()
    assert priming is not None and priming.id and priming.data == "" and priming.retry is not None


async def test_get_without_accepting_an_event_stream_is_406(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url)
    with anyio.fail_after(TIMEOUT):
        response = await http.get(url, headers={"accept": "application/json", "mcp-session-id": session_id})
    assert_error_body(response, 406)


# -- sessions -------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_a_missing_session_id_is_400(http: httpx.AsyncClient, url: str, method: str) -> None:
    headers = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
    body = orjson.dumps(request(1, "tools/list")) if method == "POST" else None
    with anyio.fail_after(TIMEOUT):
        response = await http.request(method, url, content=body, headers=headers)
    assert_error_body(response, 400)


@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
async def test_an_unknown_session_id_is_404(http: httpx.AsyncClient, url: str, method: str) -> None:
    headers = {"accept": ACCEPT_BOTH, "content-type": "application/json", "mcp-session-id": "no-such-session"}
    body = orjson.dumps(request(1, "tools/list")) if method == "POST" else None
    with anyio.fail_after(TIMEOUT):
        response = await http.request(method, url, content=body, headers=headers)
    assert_error_body(response, 404)


async def test_delete_ends_the_session_then_it_is_404(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url)
    deleted = await delete_session(http, url, session_id)
    assert deleted.status_code == 200
    after = await post(http, url, request(2, "tools/list"), session_headers(session_id))
    assert_error_body(after, 404)
    again = await delete_session(http, url, session_id)
    assert_error_body(again, 404)


async def test_session_ids_are_visible_ascii_and_unique(http: httpx.AsyncClient, url: str) -> None:
    ids = {await open_session(http, url) for _ in range(20)}
    assert len(ids) == 20
    for session_id in ids:
        assert session_id and all(0x21 <= ord(c) <= 0x7E for c in session_id), session_id
        assert len(session_id) >= 22  # at least 128 random bits, URL-safe base64


# -- MCP-Protocol-Version -------------------------------------------------------------------------
@pytest.mark.parametrize("version", BAD_VERSIONS)
async def test_a_bad_protocol_version_header_before_initialize_is_400(
    http: httpx.AsyncClient, url: str, version: str
) -> None:
    response = await post(http, url, initialize(), {**JSON_HEADERS, "mcp-protocol-version": version})
    assert_error_body(response, 400)
    assert "mcp-session-id" not in response.headers


@pytest.mark.parametrize("version", BAD_VERSIONS)
async def test_a_bad_protocol_version_header_after_initialize_is_400(
    http: httpx.AsyncClient, url: str, version: str
) -> None:
    session_id = await open_session(http, url)
    response = await post(http, url, request(1, "tools/list"), session_headers(session_id, version))
    assert_error_body(response, 400)


@pytest.mark.parametrize("method", ["GET", "DELETE"])
@pytest.mark.parametrize("version", BAD_VERSIONS)
async def test_a_bad_protocol_version_header_on_get_and_delete_is_400(
    http: httpx.AsyncClient, url: str, method: str, version: str
) -> None:
    session_id = await open_session(http, url)
    headers = {"accept": "text/event-stream", "mcp-session-id": session_id, "mcp-protocol-version": version}
    with anyio.fail_after(TIMEOUT):
        response = await http.request(method, url, headers=headers)
    assert_error_body(response, 400)


async def test_no_protocol_version_header_after_initialize_is_processed(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    response = await post(http, url, request(1, "tools/list"), session_headers(session_id, None))
    assert response.status_code == 200
    assert "tools" in response.json()["result"]


async def test_a_header_naming_another_supported_revision_is_served_under_the_negotiated_one(
    http: httpx.AsyncClient, url: str
) -> None:
    # Only an invalid or unsupported value is a 400 (and the official conformance suite sends a
    # different supported revision on purpose); the session keeps the revision it negotiated.
    session_id = await open_session(http, url, "2025-06-18")
    response = await post(http, url, request(1, "tools/list"), session_headers(session_id, LATEST))
    assert response.status_code == 200
    assert "tools" in response.json()["result"]


# -- DNS rebinding protection ---------------------------------------------------------------------
@pytest.mark.parametrize("origin", ["https://evil.example", "http://evil.example:80", "null"])
async def test_a_foreign_origin_is_403_with_an_id_less_error(
    http: httpx.AsyncClient, url: str, origin: str
) -> None:
    response = await post(http, url, initialize(), {**JSON_HEADERS, "origin": origin})
    error = assert_error_body(response, 403)
    assert "id" not in response.json()
    assert error["message"]
    assert "mcp-session-id" not in response.headers


async def test_a_loopback_origin_is_allowed(http: httpx.AsyncClient, url: str) -> None:
    port = httpx.URL(url).port
    response = await post(http, url, initialize(), {**JSON_HEADERS, "origin": f"http://localhost:{port}"})
    assert response.status_code == 200


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_a_foreign_origin_is_403_on_every_method(
    http: httpx.AsyncClient, url: str, method: str
) -> None:
    session_id = await open_session(http, url)
    headers = {"accept": "text/event-stream", "mcp-session-id": session_id, "origin": "https://evil.example"}
    with anyio.fail_after(TIMEOUT):
        response = await http.request(method, url, headers=headers)
    assert_error_body(response, 403)


async def test_a_foreign_host_is_403(http: httpx.AsyncClient, url: str) -> None:
    response = await post(http, url, initialize(), {**JSON_HEADERS, "host": "evil.example"})
    assert_error_body(response, 403)


# -- bodies and media types -----------------------------------------------------------------------
async def test_a_body_over_the_limit_is_413(http: httpx.AsyncClient, url: str) -> None:
    body = b'{"jsonrpc":"2.0","method":"x","params":{"pad":"' + b"a" * (4 * 1024 * 1024) + b'"}}'
    response = await post(http, url, body, JSON_HEADERS)
    assert_error_body(response, 413)


async def test_a_chunked_body_over_the_limit_is_413(http: httpx.AsyncClient, url: str) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(5):
            yield b" " * (1024 * 1024)

    with anyio.fail_after(TIMEOUT):
        response = await http.post(url, content=chunks(), headers=JSON_HEADERS)
    assert "content-length" not in response.request.headers
    assert_error_body(response, 413)


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
async def test_a_body_that_is_not_json_is_415(
    http: httpx.AsyncClient, url: str, content_type: str | None
) -> None:
    headers = {"accept": ACCEPT_BOTH}
    if content_type is not None:
        headers["content-type"] = content_type
    response = await post(http, url, initialize(), headers)
    assert_error_body(response, 415)


async def test_a_json_content_type_with_parameters_is_accepted(http: httpx.AsyncClient, url: str) -> None:
    headers = {"accept": ACCEPT_BOTH, "content-type": "application/json; charset=utf-8"}
    response = await post(http, url, initialize(), headers)
    assert response.status_code == 200


@pytest.mark.parametrize("accept", ["application/json", "text/event-stream", None])
async def test_accept_must_list_json_and_event_stream(
    http: httpx.AsyncClient, url: str, accept: str | None
) -> None:
    outgoing = http.build_request("POST", url, content=orjson.dumps(initialize()))
    outgoing.headers["content-type"] = "application/json"
    del outgoing.headers["accept"]  # httpx sends "*/*" by default
    if accept is not None:
        outgoing.headers["accept"] = accept
    with anyio.fail_after(TIMEOUT):
        response = await http.send(outgoing)
    assert_error_body(response, 406)


async def test_unparseable_json_is_400_with_a_parse_error(http: httpx.AsyncClient, url: str) -> None:
    response = await post(http, url, b'{"jsonrpc": "2.0", "method": ', JSON_HEADERS)
    assert assert_error_body(response, 400)["code"] == -32700


async def test_a_message_that_is_not_json_rpc_is_400_with_an_invalid_request(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url)
    response = await post(
        http, url, {"jsonrpc": "1.0", "id": 3, "method": "ping"}, session_headers(session_id)
    )
    assert assert_error_body(response, 400)["code"] == -32600


# -- batches --------------------------------------------------------------------------------------
async def test_a_batch_of_requests_under_2025_03_26_is_answered_with_an_array(
    http: httpx.AsyncClient, url: str
) -> None:
    session_id = await open_session(http, url, "2025-03-26")
    batch = [call(1, "add", {"a": 1, "b": 1}), request(2, "ping")]
    response = await post(http, url, batch, session_headers(session_id, "2025-03-26"))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    answers = response.json()
    assert sorted(answer["id"] for answer in answers) == [1, 2]


async def test_a_batch_of_notifications_under_2025_03_26_is_202(http: httpx.AsyncClient, url: str) -> None:
    session_id = await open_session(http, url, "2025-03-26")
    batch = [notification("notifications/cancelled", {"requestId": 99}), notification("x/unknown")]
    response = await post(http, url, batch, session_headers(session_id, "2025-03-26"))
    assert response.status_code == 202
    assert response.content == b""


@pytest.mark.parametrize("version", ["2025-06-18", LATEST])
async def test_a_batch_after_2025_03_26_is_refused(http: httpx.AsyncClient, url: str, version: str) -> None:
    session_id = await open_session(http, url, version)
    batch = [request(1, "ping"), request(2, "ping")]
    response = await post(http, url, batch, session_headers(session_id, version))
    assert 400 <= response.status_code < 500
    assert assert_error_body(response, response.status_code)["code"] == -32600


# -- paths and methods ----------------------------------------------------------------------------
async def test_an_unknown_path_is_404(http: httpx.AsyncClient, base: str) -> None:
    response = await post(http, base + "/elsewhere", initialize(), JSON_HEADERS)
    assert_error_body(response, 404)


@pytest.mark.parametrize("method", ["PUT", "PATCH", "OPTIONS"])
async def test_another_method_on_the_endpoint_is_405(http: httpx.AsyncClient, url: str, method: str) -> None:
    with anyio.fail_after(TIMEOUT):
        response = await http.request(method, url, headers=JSON_HEADERS)
    assert_error_body(response, 405)
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "POST", "DELETE"}


async def test_the_endpoint_answers_with_a_trailing_slash(http: httpx.AsyncClient, url: str) -> None:
    response = await post(http, url + "/", initialize(), JSON_HEADERS)
    assert response.status_code == 200


async def test_a_request_racing_initialized_is_served(http: httpx.AsyncClient, url: str) -> None:
    response = await post(http, url, initialize(), JSON_HEADERS)
    session_id = response.headers["mcp-session-id"]
    listed = await post(http, url, request(1, "tools/list"), session_headers(session_id))
    assert listed.status_code == 200
    assert "add" in {tool["name"] for tool in listed.json()["result"]["tools"]}


# -- failures inside the app ----------------------------------------------------------------------
def broken_store() -> EventStore:
    raise RuntimeError("the event store is down")


async def test_an_internal_failure_is_a_json_rpc_500_not_a_bare_one(http: httpx.AsyncClient) -> None:
    async with serving(McpHttpApp(build_server(), event_store_factory=broken_store)) as base:
        response = await post(http, base + "/mcp", initialize(), JSON_HEADERS)
    assert assert_error_body(response, 500)["code"] == -32603
    assert "event store" not in response.text  # no internals leak out


@pytest.mark.parametrize(
    ("body", "rid"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":1}', 7),  # params neither object nor array
        (b'{"jsonrpc":"1.0","id":"x","method":"ping"}', "x"),  # the wrong version, a readable id
    ],
)
async def test_an_invalid_request_keeps_its_readable_id(
    http: httpx.AsyncClient, url: str, body: bytes, rid: object
) -> None:
    response = await http.post(url, content=body, headers=JSON_HEADERS)
    error = assert_error_body(response, 400)
    assert error["code"] == -32600
    assert response.json()["id"] == rid  # as over stdio


async def test_unparseable_json_is_answered_without_an_id(http: httpx.AsyncClient, url: str) -> None:
    response = await http.post(url, content=b'{"jsonrpc":"2.0","id":7,', headers=JSON_HEADERS)
    assert assert_error_body(response, 400)["code"] == -32700
    assert response.json().get("id") is None
