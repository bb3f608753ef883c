"""MCP Apps on a server, in memory, in both eras: views from a string, a file and a function, tools
linked to them, visibility, the extension's negotiation, structured content passed through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jsonrpc_mcp import Context, JsonRpcError, RegistrationError, Server, ToolResult
from jsonrpc_mcp.apps import CLIENT_SETTINGS, EXTENSION_ID, MIME_TYPE, AppError, Apps
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]
APPS = {EXTENSION_ID: CLIENT_SETTINGS}
PAGE = "<!doctype html><html><head><title>board</title></head><body>board</body></html>"


def make_server(tmp_path: Path) -> Server:
    server = Server("boards")
    server.apps.add_view("ui://boards/text", html=PAGE, title="Board", prefers_border=True)
    page = tmp_path / "file.html"
    page.write_text(PAGE.replace("board", "file"), encoding="utf-8")
    server.apps.add_view(
        "ui://boards/file",
        path=page,
        connect_domains=["https://api.example.com"],
        resource_domains=["https://cdn.example.com"],
        permissions=["clipboardWrite"],
        domain="boards.example.com",
    )

    @server.apps.view("ui://boards/made", description="Made at each read")
    def made(ctx: Context) -> str:
        return PAGE.replace("board", f"made for {ctx.method}")

    @server.apps.tool(view="ui://boards/text", output_schema={"type": "object"})
    def show(n: int = 1) -> ToolResult:
        """Show the board."""
        return ToolResult(content=[{"type": "text", "text": f"{n} cards"}], structured_content={"cards": n})

    @server.apps.tool(view="ui://boards/text", visibility=["app"])
    def move(card: int) -> str:
        """Move a card (the view's button)."""
        return f"moved {card}"

    @server.tool
    def plain() -> str:
        return "plain"

    return server


@pytest.mark.parametrize("mode", MODES)
async def test_the_extension_is_declared_in_both_eras(tmp_path: Path, mode: str) -> None:
    async with connect(make_server(tmp_path), mode=mode) as client:
        assert client.server_extensions[EXTENSION_ID] == {"mimeTypes": [MIME_TYPE]}


async def test_the_extension_is_not_declared_where_definitions_carry_no_meta(tmp_path: Path) -> None:
    async with connect(make_server(tmp_path), mode="legacy", protocol_version="2025-03-26") as client:
        assert client.protocol_version == "2025-03-26"
        assert EXTENSION_ID not in client.server_extensions


async def test_a_server_without_apps_adds_no_extension_and_no_middleware() -> None:
    server = Server("plain")
    assert EXTENSION_ID not in server.extensions and server.router.middleware == ()


@pytest.mark.parametrize("mode", MODES)
async def test_tools_carry_their_link_and_an_apps_client_sees_app_only_tools(
    tmp_path: Path, mode: str
) -> None:
    async with connect(make_server(tmp_path), mode=mode, extensions=APPS) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        assert tools["show"]["_meta"] == {"ui": {"resourceUri": "ui://boards/text"}}
        assert tools["move"]["_meta"] == {"ui": {"resourceUri": "ui://boards/text", "visibility": ["app"]}}
        assert "_meta" not in tools["plain"]
        assert [t["name"] for t in await client.model_tools()] == ["show", "plain"]
        assert (await client.call_tool("move", {"card": 2}))["content"][0]["text"] == "moved 2"
        link = await client.app_link("move")
        assert link is not None and link.app_callable and not link.model_visible


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_the_extension_never_sees_app_only_tools(tmp_path: Path, mode: str) -> None:
    async with connect(make_server(tmp_path), mode=mode) as client:
        assert [t["name"] for t in await client.list_tools()] == ["show", "plain"]
        with pytest.raises(JsonRpcError) as caught:
            await client.call_tool("move", {"card": 2})
        assert caught.value.code == -32602 and "unknown tool 'move'" in caught.value.message
        assert (await client.call_tool("show"))["content"][0]["text"] == "1 cards"


async def test_declaring_the_extension_without_the_html_mime_type_is_not_declaring_apps(
    tmp_path: Path,
) -> None:
    async with connect(
        make_server(tmp_path), extensions={EXTENSION_ID: {"mimeTypes": ["text/plain"]}}
    ) as client:
        assert "move" not in [t["name"] for t in await client.list_tools()]


@pytest.mark.parametrize("mode", MODES)
async def test_views_are_listed_and_read_with_their_meta(tmp_path: Path, mode: str) -> None:
    async with connect(make_server(tmp_path), mode=mode, extensions=APPS) as client:
        listed = {r["uri"]: r for r in await client.list_resources()}
        assert listed["ui://boards/text"] == {
            "uri": "ui://boards/text",
            "name": "boards/text",
            "title": "Board",
            "mimeType": MIME_TYPE,
            "_meta": {"ui": {"prefersBorder": True}},
        }
        assert listed["ui://boards/made"]["description"] == "Made at each read"
        assert "_meta" not in listed["ui://boards/made"]
        read = await client.read_resource("ui://boards/file")
        (item,) = read["contents"]
        assert item["mimeType"] == MIME_TYPE and "<body>file</body>" in item["text"]
        assert item["_meta"]["ui"] == {
            "csp": {
                "connectDomains": ["https://api.example.com"],
                "resourceDomains": ["https://cdn.example.com"],
            },
            "permissions": {"clipboardWrite": {}},
            "domain": "boards.example.com",
        }
        made = await client.read_app("ui://boards/made")
        assert "made for resources/read" in made.html and made.ui == {}
        view = await client.read_app("show")
        assert view.uri == "ui://boards/text" and view.prefers_border is True and view.html == PAGE


@pytest.mark.parametrize("mode", MODES)
async def test_structured_content_reaches_the_host_untouched(tmp_path: Path, mode: str) -> None:
    async with connect(make_server(tmp_path), mode=mode, extensions=APPS) as client:
        result = await client.call_tool("show", {"n": 3})
        assert result["structuredContent"] == {"cards": 3}
        assert result["content"] == [{"type": "text", "text": "3 cards"}]


async def test_a_file_view_is_read_as_the_file_is_now(tmp_path: Path) -> None:
    server = make_server(tmp_path)
    (tmp_path / "file.html").write_text("<!doctype html><html><body>edited</body></html>", encoding="utf-8")
    async with connect(server) as client:
        assert "edited" in (await client.read_app("ui://boards/file")).html


async def test_link_an_existing_tool_and_the_list_changes(tmp_path: Path) -> None:
    server = make_server(tmp_path)
    server.apps.link("plain", "ui://boards/made", visibility=["model", "app"])
    async with connect(server) as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        assert tools["plain"]["_meta"]["ui"] == {
            "resourceUri": "ui://boards/made",
            "visibility": ["model", "app"],
        }
    assert server.apps.check() == []
    server.apps.link("plain", "ui://boards/missing")
    assert server.apps.check() == [
        "tool 'plain' links to 'ui://boards/missing', which is no resource of the server"
    ]


async def test_an_apps_made_before_its_server_registers_everything_when_added() -> None:
    apps = Apps()
    apps.add_view("ui://early/view", html=PAGE)

    @apps.tool(view="ui://early/view")
    def early() -> str:
        return "early"

    server = Server("early", extensions=[apps])
    assert server.apps is apps
    async with connect(server, extensions=APPS) as client:
        assert (await client.app_link("early")) is not None
        assert (await client.read_app("early")).html == PAGE


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"html": PAGE, "uri": "https://x/y"}, "must start with 'ui://'"),
        ({"uri": "ui://a/b"}, "exactly one of html=, path= or fn="),
        ({"uri": "ui://a/b", "html": PAGE, "path": "x.html"}, "exactly one of"),
        ({"uri": "ui://a/b", "path": "/nonexistent/x.html"}, "no file at"),
        ({"uri": "ui://a/b", "html": PAGE, "permissions": ["telepathy"]}, "unknown permission"),
        ({"uri": "ui://a/b", "html": PAGE, "connect_domains": "https://x"}, "list of origins"),
        ({"uri": "ui://a/{x}", "html": PAGE}, "not a URI template"),
    ],
)
def test_a_bad_view_is_refused_at_registration(options: dict[str, Any], says: str) -> None:
    uri = options.pop("uri")
    with pytest.raises(RegistrationError, match=says):
        Server("bad").apps.add_view(uri, **options)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"view": "https://x/y"}, "must be a ui:// URI"),
        ({"view": "ui://a/b", "visibility": ["agent"]}, "visibility must be a list"),
        ({"view": "ui://a/b", "visibility": []}, "nobody could call"),
        ({"view": "ui://a/b", "visibility": "app"}, "not the string"),
        ({}, "needs view= or visibility="),
        ({"view": "ui://a/b", "meta": {"ui": {}}}, "instead of meta"),
    ],
)
def test_a_bad_link_is_refused_at_registration(options: dict[str, Any], says: str) -> None:
    with pytest.raises(RegistrationError, match=says):
        Server("bad").apps.add_tool("t", lambda: "x", **options)


async def test_the_client_refuses_a_view_of_another_mime_type_or_meta() -> None:
    server = Server("liar")
    server.add_resource("ui://liar/plain", lambda: PAGE, mime_type="text/html")
    server.add_resource("ui://liar/meta", lambda: PAGE, mime_type=MIME_TYPE, meta={"ui": {"csp": "*"}})
    server.apps.add_tool("t", lambda: "x", view="ui://liar/nothing")
    async with connect(server, extensions=APPS) as client:
        with pytest.raises(AppError, match="has the MIME type 'text/html': a view must be"):
            await client.read_app("ui://liar/plain")
        with pytest.raises(AppError, match=r"_meta.ui.csp must be an object"):
            await client.read_app("ui://liar/meta")  # (the listing's _meta, the item having none)
        with pytest.raises(JsonRpcError):
            await client.read_app("t")
        with pytest.raises(AppError, match="lists no tool 'nonexistent-tool'"):
            await client.read_app("nonexistent-tool")


async def test_inspect_shows_each_view_its_tools_and_what_would_stop_a_host(tmp_path: Path) -> None:
    from jsonrpc_mcp._inspect import collect, render_text

    server = make_server(tmp_path)
    server.add_resource("ui://boards/plain", lambda: PAGE, mime_type="text/html")
    server.apps.add_tool("odd", lambda: "x", view="ui://boards/plain")
    async with connect(server, extensions=APPS) as client:
        report = await collect(client)
    text = render_text(report)
    assert "Apps (2 views):\n  ui://boards/text (" in text
    assert "    tool show (model, app)\n    tool move (app)\n" in text
    assert '    _meta.ui: {"prefersBorder": true}' in text
    assert "  ui://boards/plain\n    tool odd (model, app)\n" in text
    assert "    NOT RENDERABLE: 'ui://boards/plain' has the MIME type 'text/html'" in text
