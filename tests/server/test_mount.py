"""Composition: a server mounted into another under a namespace, seen by a real client in memory,
in both eras (``legacy``: the handshake; ``2026-07-28``: stateless requests)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Call, Context, Server
from jsonrpc_mcp.errors import RegistrationError
from jsonrpc_mcp.jsonrpc.errors import JsonRpcError
from jsonrpc_mcp.server import CallNext
from jsonrpc_mcp.testing import connect
from tests import timeouts

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
ERAS = pytest.mark.parametrize("mode", ["legacy", MODERN])
TIMEOUT = timeouts.STEP
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def weather_server(events: list[str] | None = None) -> Server:
    events = events if events is not None else []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append("weather up")
        try:
            yield {"unit": "celsius"}
        finally:
            events.append("weather down")

    weather = Server("weather", lifespan=lifespan)

    @weather.tool()
    def forecast(city: str, ctx: Context) -> str:
        """Tomorrow's weather."""
        return f"sunny in {city}, in {ctx.lifespan['unit']}"

    @weather.tool()
    async def ask(ctx: Context) -> str:
        """Ask the user's name first."""
        answer = await ctx.elicit("Your name?", NAME_FORM, key="name")
        return f"hello {answer['content']['name']}"

    @weather.resource("data://stations", mime_type="text/plain")
    def stations() -> str:
        return "north, south"

    @weather.resource("data://stations/{station}")
    def station(station: str) -> str:
        return f"station {station}"

    @weather.prompt()
    def report(city: str) -> str:
        return f"Write a weather report for {city}."

    @weather.completion(prompt="report", argument="city")
    def cities(value: str) -> list[str]:
        return [c for c in ("Paris", "Perth", "Oslo") if c.startswith(value)]

    @weather.completion(resource="data://stations/{station}", argument="station")
    def station_names(value: str) -> list[str]:
        return ["north", "south"]

    @weather.middleware
    async def tag(call: Call, call_next: CallNext) -> Any:
        events.append(f"weather middleware {call.method} {call.era}")
        return await call_next(call)

    return weather


def main_server(events: list[str] | None = None) -> Server:
    events = events if events is not None else []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        events.append("main up")
        try:
            yield
        finally:
            events.append("main down")

    main = Server("main", lifespan=lifespan)

    @main.tool()
    def hello() -> str:
        return "hello from main"

    @main.middleware
    async def tag(call: Call, call_next: CallNext) -> Any:
        events.append(f"main middleware {call.method} {call.era}")
        return await call_next(call)

    main.mount(weather_server(events), namespace="weather")
    return main


async def _elicit(params: Any) -> Any:
    return {"action": "accept", "content": {"name": "Ada"}}


@ERAS
async def test_a_mounted_server_is_listed_and_served_under_its_namespace(mode: str) -> None:
    async with connect(main_server(), mode=mode, timeout=TIMEOUT) as client:
        assert client.server_info["name"] == "main"
        caps = client.server_capabilities
        assert caps["tools"]["listChanged"] and caps["prompts"]["listChanged"]
        assert caps["resources"] == {"subscribe": True, "listChanged": True}
        assert "completions" in caps
        assert [t["name"] for t in await client.list_tools()] == ["hello", "weather_forecast", "weather_ask"]
        assert [r["uri"] for r in await client.list_resources()] == ["data://weather/stations"]
        templates = await client.list_resource_templates()
        assert [t["uriTemplate"] for t in templates] == ["data://weather/stations/{station}"]
        assert [p["name"] for p in await client.list_prompts()] == ["weather_report"]

        result = await client.call_tool("weather_forecast", {"city": "Paris"})
        assert result["content"] == [{"type": "text", "text": "sunny in Paris, in celsius"}]
        assert (await client.call_tool("hello"))["content"][0]["text"] == "hello from main"
        read = await client.read_resource("data://weather/stations")
        assert read["contents"] == [
            {"uri": "data://weather/stations", "mimeType": "text/plain", "text": "north, south"}
        ]
        read = await client.read_resource("data://weather/stations/north")
        assert read["contents"][0]["uri"] == "data://weather/stations/north"
        assert read["contents"][0]["text"] == "station north"
        prompt = await client.get_prompt("weather_report", {"city": "Oslo"})
        assert prompt["messages"][0]["content"]["text"] == "Write a weather report for Oslo."
        done = await client.complete(
            {"type": "ref/prompt", "name": "weather_report"}, {"name": "city", "value": "P"}
        )
        assert done["completion"]["values"] == ["Paris", "Perth"]
        done = await client.complete(
            {"type": "ref/resource", "uri": "data://weather/stations/{station}"},
            {"name": "station", "value": ""},
        )
        assert done["completion"]["values"] == ["north", "south"]


@ERAS
async def test_unknown_names_are_refused_in_the_parents_words(mode: str) -> None:
    async with connect(main_server(), mode=mode, timeout=TIMEOUT) as client:
        with pytest.raises(JsonRpcError) as refused:
            await client.get_prompt("weather_nope")
        assert "weather_nope" in refused.value.message
        with pytest.raises(JsonRpcError) as refused:
            await client.call_tool("weather_nope", {})
        assert "weather_nope" in refused.value.message
        with pytest.raises(JsonRpcError):
            await client.read_resource("data://weather/nothing")
        with pytest.raises(JsonRpcError):  # not renamed: not the mounted server's
            await client.read_resource("data://stations")


@ERAS
async def test_both_servers_middleware_and_the_mounted_lifespan_run(mode: str) -> None:
    events: list[str] = []
    era = "stateless" if mode == MODERN else "handshake"
    async with connect(main_server(events), mode=mode, timeout=TIMEOUT) as client:
        assert events[:2] == ["main up", "weather up"]  # nested: the mounted one inside
        events.clear()
        await client.call_tool("weather_forecast", {"city": "Oslo"})
        assert events == [f"main middleware tools/call {era}", f"weather middleware tools/call {era}"]
    assert events[-2:] == ["weather down", "main down"]


@ERAS
async def test_a_mounted_tool_asks_the_client(mode: str) -> None:
    handlers = {"elicitation/create": _elicit}
    async with connect(
        main_server(), mode=mode, timeout=TIMEOUT, capabilities={"elicitation": {}}, request_handlers=handlers
    ) as client:
        result = await client.call_tool("weather_ask")
        assert result["content"] == [{"type": "text", "text": "hello Ada"}]


async def test_list_changes_and_updates_of_a_mounted_server_reach_a_handshake_client() -> None:
    weather = weather_server()
    main = Server("main")
    main.mount(weather, namespace="weather")
    seen: list[tuple[str, Any]] = []
    arrived = anyio.Event()

    def on_notification(method: str, params: Any) -> None:
        seen.append((method, params))
        arrived.set()

    async with connect(main, mode="legacy", timeout=TIMEOUT, on_notification=on_notification) as client:
        await client.subscribe_resource("data://weather/stations")
        weather.add_tool("late", lambda: "late")
        assert await weather.notify_resource_updated("data://stations") >= 1
        with anyio.fail_after(TIMEOUT):
            while len(seen) < 2:
                arrived = anyio.Event()
                await arrived.wait()
        assert ("notifications/resources/updated", {"uri": "data://weather/stations"}) in seen
        assert ("notifications/tools/list_changed", None) in seen or any(
            m == "notifications/tools/list_changed" for m, _ in seen
        )
        assert "weather_late" in [t["name"] for t in await client.list_tools()]
        await client.unsubscribe_resource("data://weather/stations")
        assert await weather.notify_resource_updated("data://stations") == 0


async def test_list_changes_and_updates_of_a_mounted_server_reach_a_listen_stream() -> None:
    weather = weather_server()
    main = Server("main")
    main.mount(weather, namespace="weather")
    async with connect(main, mode=MODERN, timeout=TIMEOUT) as client:
        wanted = {"toolsListChanged": True, "resourceSubscriptions": ["data://weather/stations"]}
        async with client.listen(wanted) as subscription:
            weather.add_tool("late", lambda: "late")
            await weather.notify_resource_updated("data://stations")
            with anyio.fail_after(TIMEOUT):
                got = [await subscription.receive() for _ in range(2)]
        methods = {method for method, _ in got}
        assert methods == {"notifications/tools/list_changed", "notifications/resources/updated"}
        updated = next(params for method, params in got if method == "notifications/resources/updated")
        assert updated["uri"] == "data://weather/stations"


@ERAS
async def test_the_parent_wins_and_the_latest_mount_wins(mode: str) -> None:
    first, second, main = Server("first"), Server("second"), Server("main")
    first.add_tool("same", lambda: "first")
    first.add_tool("only_first", lambda: "first")
    second.add_tool("same", lambda: "second")
    second.add_tool("hello", lambda: "second")
    main.add_tool("hello", lambda: "main")
    main.mount(first)
    main.mount(second)
    async with connect(main, mode=mode, timeout=TIMEOUT) as client:
        assert sorted(t["name"] for t in await client.list_tools()) == ["hello", "only_first", "same"]
        assert (await client.call_tool("hello"))["content"][0]["text"] == "main"
        assert (await client.call_tool("same"))["content"][0]["text"] == "second"
        assert (await client.call_tool("only_first"))["content"][0]["text"] == "first"


@ERAS
async def test_mounts_nest_and_lists_page(mode: str) -> None:
    inner, middle, main = Server("inner"), Server("middle", page_size=1), Server("main", page_size=2)
    inner.add_tool("deep", lambda: "deep")
    inner.add_resource("file:///a.txt", lambda: "a")
    middle.add_tool("one", lambda: "one")
    middle.mount(inner, namespace="in")
    main.mount(middle, namespace="mid")
    async with connect(main, mode=mode, timeout=TIMEOUT) as client:
        assert [t["name"] for t in await client.list_tools()] == ["mid_one", "mid_in_deep"]
        page = await client.request("tools/list")
        assert len(page["tools"]) == 2 and "nextCursor" not in page
        assert (await client.call_tool("mid_in_deep"))["content"][0]["text"] == "deep"
        assert [r["uri"] for r in await client.list_resources()] == ["file://mid/in//a.txt"]
        read = await client.read_resource("file://mid/in//a.txt")
        assert read["contents"][0]["text"] == "a"


async def test_import_server_copies_once() -> None:
    weather, main = weather_server(), Server("main")
    main.import_server(weather, namespace="w")
    weather.add_tool("late", lambda: "late")
    async with connect(main, mode="legacy", timeout=TIMEOUT) as client:
        assert [t["name"] for t in await client.list_tools()] == ["w_forecast", "w_ask"]
        assert [t["uriTemplate"] for t in await client.list_resource_templates()] == [
            "data://w/stations/{station}"
        ]
        read = await client.read_resource("data://w/stations/south")
        assert read["contents"][0]["text"] == "station south"
        done = await client.complete(
            {"type": "ref/prompt", "name": "w_report"}, {"name": "city", "value": "O"}
        )
        assert done["completion"]["values"] == ["Oslo"]


def test_mounting_refuses_cycles_and_bad_namespaces() -> None:
    a, b = Server("a"), Server("b")
    a.mount(b, namespace="b")
    with pytest.raises(RegistrationError):
        b.mount(a, namespace="a")
    with pytest.raises(RegistrationError):
        a.mount(a)
    with pytest.raises(RegistrationError):
        a.mount(b, namespace="b")
    for bad in ("", "with space", "a/b", "_x", "x_"):
        with pytest.raises(RegistrationError):
            a.mount(Server("c"), namespace=bad)


@pytest.mark.parametrize("how", ["mount", "import_server"])
async def test_a_mounted_apps_tool_links_to_its_view_under_the_new_name(how: str) -> None:
    from jsonrpc_mcp.apps import CLIENT_SETTINGS, EXTENSION_ID

    weather = Server("weather")
    weather.apps.add_view("ui://weather/board", html="<!DOCTYPE html><html><body>board</body></html>")

    @weather.apps.tool(view="ui://weather/board")
    def forecast(city: str) -> str:
        return f"{city}: 12-21 C"

    main = Server("main")
    getattr(main, how)(weather, namespace="wx")
    async with connect(main, extensions={EXTENSION_ID: CLIENT_SETTINGS}) as client:
        (tool,) = await client.list_tools()
        link = tool["_meta"]["ui"]["resourceUri"]
        assert (tool["name"], link) == ("wx_forecast", "ui://wx/weather/board")
        assert link in [r["uri"] for r in await client.list_resources()]
        view = await client.read_app("wx_forecast")  # the link resolves, the view checks out
        assert view.uri == link and "board" in view.html
