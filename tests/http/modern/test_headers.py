"""2026-07-28 over HTTP: the request metadata headers are checked against the body (400, -32020),
and the other envelope errors get the status the revision assigns them."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from jsonrpc_mcp.http import McpHttpApp

from ..support import assert_error_body, serving
from .support import (
    CLIENT_CAPABILITIES,
    MODERN,
    PROTOCOL_VERSION,
    UNICODE_URI,
    build_modern_server,
    headers_for,
    modern_request,
    send,
    valid,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
async def url() -> AsyncIterator[str]:
    async with serving(McpHttpApp(build_modern_server())) as base:
        yield base + "/mcp"


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def mismatch(response: httpx.Response, rid: Any = None) -> dict[str, Any]:
    error = assert_error_body(response, 400)
    assert error["code"] == -32020, error
    body = valid(response.json())
    if rid is not None:
        assert body["id"] == rid
    return error


def forecast(rid: int, arguments: dict[str, Any]) -> dict[str, Any]:
    return modern_request(rid, "tools/call", {"name": "forecast", "arguments": arguments})


# -- MCP-Protocol-Version ----------------------------------------------------------------------------
async def test_a_version_header_naming_another_revision_than_the_body_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:  # E01
    body = modern_request(1, "tools/list")
    mismatch(await send(http, url, body, headers_for(body, mcp_protocol_version="2025-11-25")), rid=1)


async def test_a_modern_body_without_the_version_header_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:
    # E20: this server does not read a modern envelope as 2025-03-26 traffic
    body = modern_request(2, "tools/list")
    mismatch(await send(http, url, body, headers_for(body, mcp_protocol_version=None)), rid=2)


async def test_an_unsupported_version_in_header_and_body_is_32022_with_the_supported_ones(
    http: httpx.AsyncClient, url: str
) -> None:  # E13
    body = modern_request(3, "tools/list", version="1900-01-01")
    response = await send(http, url, body)
    error = assert_error_body(response, 400)
    valid(response.json())
    assert error["code"] == -32022
    assert error["data"]["requested"] == "1900-01-01"
    assert MODERN in error["data"]["supported"]


# -- Mcp-Method --------------------------------------------------------------------------------------
async def test_a_request_without_mcp_method_is_a_mismatch(http: httpx.AsyncClient, url: str) -> None:  # E02
    body = modern_request(4, "tools/list")
    mismatch(await send(http, url, body, headers_for(body, mcp_method=None)), rid=4)


async def test_mcp_method_naming_another_method_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:  # E03
    body = modern_request(5, "prompts/list")
    mismatch(await send(http, url, body, headers_for(body, mcp_method="tools/list")), rid=5)


async def test_header_values_compare_case_sensitively(http: httpx.AsyncClient, url: str) -> None:  # E07
    body = modern_request(6, "tools/list")
    mismatch(await send(http, url, body, headers_for(body, mcp_method="TOOLS/LIST")), rid=6)


@pytest.mark.parametrize("spelling", ["mcp-method", "MCP-METHOD", "Mcp-Method"])
async def test_header_names_compare_case_insensitively(
    http: httpx.AsyncClient, url: str, spelling: str
) -> None:
    body = modern_request(7, "tools/list")  # E07
    headers = headers_for(body, mcp_method=None, mcp_protocol_version=None)
    headers[spelling] = "tools/list"
    headers["MCP-Protocol-Version"] = MODERN
    response = await send(http, url, body, headers)
    assert response.status_code == 200, response.text
    assert valid(response.json(), "tools/list")["id"] == 7


async def test_a_repeated_routing_header_is_a_mismatch(http: httpx.AsyncClient, url: str) -> None:
    body = modern_request(8, "tools/list")
    raw = [(k, v) for k, v in headers_for(body).items()] + [("mcp-method", "tools/list")]
    response = await http.post(url, content=httpx.Request("POST", url, json=body).content, headers=raw)
    mismatch(response, rid=8)


# -- Mcp-Name ----------------------------------------------------------------------------------------
async def test_tools_call_without_mcp_name_is_a_mismatch(http: httpx.AsyncClient, url: str) -> None:  # E04
    body = modern_request(10, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    mismatch(await send(http, url, body, headers_for(body, mcp_name=None)), rid=10)


async def test_tools_call_with_another_tools_name_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:  # E04
    body = modern_request(11, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    error = mismatch(await send(http, url, body, headers_for(body, mcp_name="other_tool")), rid=11)
    assert "other_tool" in error["message"]


async def test_resources_read_with_another_uri_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:  # E05
    body = modern_request(12, "resources/read", {"uri": "res://doc"})
    mismatch(await send(http, url, body, headers_for(body, mcp_name="res://other")), rid=12)


async def test_prompts_get_with_another_name_is_a_mismatch(http: httpx.AsyncClient, url: str) -> None:  # E05
    body = modern_request(13, "prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
    mismatch(await send(http, url, body, headers_for(body, mcp_name="farewell")), rid=13)


async def test_matching_names_are_served(http: httpx.AsyncClient, url: str) -> None:
    body = modern_request(14, "prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
    response = await send(http, url, body)
    assert response.status_code == 200
    result = valid(response.json(), "prompts/get")["result"]
    assert result["messages"][0]["content"]["text"] == "Hello Ada"


async def test_a_base64_encoded_name_is_decoded_before_comparing(
    http: httpx.AsyncClient, url: str
) -> None:  # E06
    body = modern_request(15, "resources/read", {"uri": UNICODE_URI})
    response = await send(http, url, body, headers_for(body, mcp_name=b64(UNICODE_URI)))
    assert response.status_code == 200, response.text
    assert valid(response.json(), "resources/read")["result"]["contents"][0]["text"] == "coffee"


async def test_a_base64_encoding_of_another_name_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:  # E06
    body = modern_request(16, "resources/read", {"uri": "res://doc"})
    mismatch(await send(http, url, body, headers_for(body, mcp_name=b64("res://other"))), rid=16)


async def test_a_name_that_is_not_base64_is_a_mismatch(http: httpx.AsyncClient, url: str) -> None:  # E06
    body = modern_request(17, "resources/read", {"uri": "res://doc"})
    mismatch(await send(http, url, body, headers_for(body, mcp_name="=?base64?not base64!?=")), rid=17)


async def test_a_header_value_outside_visible_ascii_is_a_mismatch(http: httpx.AsyncClient, url: str) -> None:
    body = modern_request(18, "resources/read", {"uri": UNICODE_URI})
    headers = list(headers_for(body, mcp_name=None).items())
    raw_headers = [(k.encode(), v.encode()) for k, v in headers] + [
        (b"mcp-name", UNICODE_URI.encode("latin-1"))
    ]
    response = await http.post(
        url, content=httpx.Request("POST", url, json=body).content, headers=raw_headers
    )
    mismatch(response, rid=18)


# -- Mcp-Param-* (x-mcp-header) ----------------------------------------------------------------------
async def test_a_header_parameter_without_its_header_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:  # E08
    body = forecast(20, {"region": "eu-west"})
    error = mismatch(await send(http, url, body), rid=20)
    assert "Mcp-Param-Region" in error["message"]


async def test_a_header_parameter_with_another_value_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:  # E08
    body = forecast(21, {"region": "eu-west"})
    mismatch(await send(http, url, body, headers_for(body, mcp_param_region="us-east")), rid=21)


async def test_a_matching_header_parameter_is_served(http: httpx.AsyncClient, url: str) -> None:  # E08
    body = forecast(22, {"region": "eu-west", "hourly": True})
    headers = headers_for(body, mcp_param_region="eu-west", mcp_param_hourly="true")
    response = await send(http, url, body, headers)
    assert response.status_code == 200, response.text
    result = valid(response.json(), "tools/call")["result"]
    assert "isError" not in result
    assert '"eu-west"' in result["content"][0]["text"]


@pytest.mark.parametrize("arguments", [{}, {"region": None}, {"note": "no header parameter"}])
async def test_an_absent_or_null_header_parameter_needs_no_header(
    http: httpx.AsyncClient, url: str, arguments: dict[str, Any]
) -> None:  # E08
    response = await send(http, url, forecast(23, arguments))
    assert response.status_code == 200, response.text
    assert "result" in valid(response.json(), "tools/call")  # (a null region fails the schema: isError)


async def test_a_header_for_an_absent_parameter_is_a_mismatch(http: httpx.AsyncClient, url: str) -> None:
    body = forecast(24, {})
    mismatch(await send(http, url, body, headers_for(body, mcp_param_region="eu-west")), rid=24)


async def test_integer_parameters_compare_numerically(http: httpx.AsyncClient, url: str) -> None:  # E09
    body = forecast(25, {"count": 42.0})
    response = await send(http, url, body, headers_for(body, mcp_param_count="42"))
    assert response.status_code == 200, response.text
    assert "isError" not in valid(response.json(), "tools/call")["result"]


async def test_an_integer_parameter_with_another_number_is_a_mismatch(
    http: httpx.AsyncClient, url: str
) -> None:
    body = forecast(26, {"count": 42})
    mismatch(await send(http, url, body, headers_for(body, mcp_param_count="43")), rid=26)


async def test_a_boolean_parameter_compares_as_true_or_false(http: httpx.AsyncClient, url: str) -> None:
    body = forecast(27, {"hourly": False})
    mismatch(await send(http, url, body, headers_for(body, mcp_param_hourly="False")), rid=27)


async def test_a_base64_encoded_parameter_is_decoded(http: httpx.AsyncClient, url: str) -> None:
    body = forecast(28, {"region": " Z\u00fcrich "})
    response = await send(http, url, body, headers_for(body, mcp_param_region=b64(" Z\u00fcrich ")))
    assert response.status_code == 200, response.text


# -- the other envelope errors -----------------------------------------------------------------------
async def test_a_missing_envelope_field_is_32602_with_400(http: httpx.AsyncClient, url: str) -> None:  # E21
    body = modern_request(30, "tools/list")
    del body["params"]["_meta"][CLIENT_CAPABILITIES]
    response = await send(http, url, body)
    error = assert_error_body(response, 400)
    assert error["code"] == -32602
    assert valid(response.json())["id"] == 30


async def test_a_modern_header_without_any_envelope_is_32602_with_400(
    http: httpx.AsyncClient, url: str
) -> None:
    body = {"jsonrpc": "2.0", "id": 31, "method": "tools/list"}
    response = await send(http, url, body, headers_for(body))
    assert assert_error_body(response, 400)["code"] == -32602


async def test_a_missing_client_capability_is_32021_with_400(
    http: httpx.AsyncClient, url: str
) -> None:  # E21
    body = modern_request(32, "tools/call", {"name": "needs_roots", "arguments": {}})
    response = await send(http, url, body)
    error = assert_error_body(response, 400)
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"roots": {}}}
    valid(response.json())


async def test_an_unknown_tool_is_an_ordinary_error_answered_with_200(
    http: httpx.AsyncClient, url: str
) -> None:
    # the revision assigns no status to -32602 from a handler (only to a missing envelope field)
    body = modern_request(33, "tools/call", {"name": "nope", "arguments": {}})
    response = await send(http, url, body)
    assert response.status_code == 200
    assert valid(response.json())["error"]["code"] == -32602


async def test_the_envelope_version_must_be_a_string(http: httpx.AsyncClient, url: str) -> None:
    body = modern_request(34, "tools/list")
    body["params"]["_meta"][PROTOCOL_VERSION] = 20260728
    response = await send(http, url, body, headers_for(body, mcp_protocol_version=MODERN))
    assert assert_error_body(response, 400)["code"] == -32602
