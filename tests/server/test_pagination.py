"""Cursor pagination on every list method."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio

COUNT = 7
PAGE = 3

# method, result key, the field that names an item
LISTS = [
    ("tools/list", "tools", "name"),
    ("resources/list", "resources", "uri"),
    ("resources/templates/list", "resourceTemplates", "uriTemplate"),
    ("prompts/list", "prompts", "name"),
]


def _paged_server(count: int = COUNT, page_size: int = PAGE) -> Server:
    server = Server("paged", page_size=page_size)
    for i in range(count):
        server.add_tool(f"tool{i}", lambda: "x")
        server.add_resource(f"res://{i}", lambda: "x")
        server.add_resource(f"tpl{i}://{{id}}", lambda id: id)
        server.add_prompt(f"prompt{i}", lambda: "x")
    return server


async def _walk(client: Any, method: str, key: str) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    params: dict[str, Any] | None = None
    while True:
        page = await client.request(method, params)
        pages.append(page)
        if "nextCursor" not in page:
            return pages
        params = {"cursor": page["nextCursor"]}


@pytest.mark.parametrize(("method", "key", "field"), LISTS)
async def test_following_next_cursor_yields_every_item_exactly_once(
    method: str, key: str, field: str
) -> None:
    async with connect(_paged_server()) as client:
        pages = await _walk(client, method, key)
    names = [item[field] for page in pages for item in page[key]]
    assert len(names) == COUNT
    assert len(set(names)) == COUNT
    assert [len(page[key]) for page in pages] == [3, 3, 1]


@pytest.mark.parametrize(("method", "key", "field"), LISTS)
async def test_the_last_page_has_no_next_cursor(method: str, key: str, field: str) -> None:
    async with connect(_paged_server()) as client:
        pages = await _walk(client, method, key)
    assert all("nextCursor" in page for page in pages[:-1])
    assert "nextCursor" not in pages[-1]


@pytest.mark.parametrize(("method", "key", "field"), LISTS)
async def test_an_exact_multiple_of_the_page_size_ends_without_an_empty_page(
    method: str, key: str, field: str
) -> None:
    async with connect(_paged_server(count=6)) as client:
        pages = await _walk(client, method, key)
    assert [len(page[key]) for page in pages] == [3, 3]


@pytest.mark.parametrize(("method", "key", "field"), LISTS)
@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor",
        "",
        base64.urlsafe_b64encode(b"o:-1").decode(),
        base64.urlsafe_b64encode(b"o:999").decode(),
        base64.urlsafe_b64encode(b"x:1").decode(),
        42,
        {"offset": 1},
    ],
)
async def test_an_invalid_cursor_is_invalid_params(method: str, key: str, field: str, cursor: Any) -> None:
    async with connect(_paged_server()) as client:
        with pytest.raises(JsonRpcError) as info:
            await client.request(method, {"cursor": cursor})
    assert info.value.code == -32602


@pytest.mark.parametrize(("method", "key", "field"), LISTS)
async def test_the_client_lists_every_item_across_pages(method: str, key: str, field: str) -> None:
    async with connect(_paged_server()) as client:
        listing = {
            "tools/list": client.list_tools,
            "resources/list": client.list_resources,
            "resources/templates/list": client.list_resource_templates,
            "prompts/list": client.list_prompts,
        }[method]
        items = await listing()
    assert len({item[field] for item in items}) == COUNT == len(items)


async def test_a_single_page_has_no_next_cursor() -> None:
    async with connect(_paged_server(count=2)) as client:
        result = await client.request("tools/list")
    assert [t["name"] for t in result["tools"]] == ["tool0", "tool1"]
    assert "nextCursor" not in result


async def test_a_null_cursor_means_the_first_page() -> None:
    async with connect(_paged_server()) as client:
        result = await client.request("tools/list", {"cursor": None})
    assert [t["name"] for t in result["tools"]] == ["tool0", "tool1", "tool2"]
