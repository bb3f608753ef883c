"""RFC 6570 URI template matching for resource templates."""

from __future__ import annotations

import time

import anyio
import pytest

from jsonrpc_mcp import JsonRpcError, Server
from jsonrpc_mcp.server._uritemplate import MAX_URI, UriTemplate
from jsonrpc_mcp.testing import connect
from tests import timeouts


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("a://{x}", "a://1", {"x": "1"}),
        ("a://{x}/{y}", "a://1/2", {"x": "1", "y": "2"}),
        ("a://{x}/z", "a://1/z", {"x": "1"}),
        ("a://{x}.json", "a://1.json", {"x": "1"}),
        ("a://{x,y}", "a://1,2", {"x": "1", "y": "2"}),
        ("a://{x}", "a://a%20b", {"x": "a b"}),
        ("a://{+path}", "a://a/b/c", {"path": "a/b/c"}),
        ("a://{#f}", "a://#x", {"f": "x"}),
        ("a://{x}{#f}", "a://1#frag", {"x": "1", "f": "frag"}),
        ("a://{x}{/y}", "a://1/2", {"x": "1", "y": "2"}),
        ("a://{x}{.ext}", "a://1.json", {"x": "1", "ext": "json"}),
        ("file://{/path*}", "file:///a/b/c", {"path": "a/b/c"}),
        ("a://{x}{;p}", "a://1;p=5", {"x": "1", "p": "5"}),
        ("a://{x}{?q,r}", "a://1?q=2&r=3", {"x": "1", "q": "2", "r": "3"}),
        ("a://{x}{?q,r}", "a://1?r=3", {"x": "1", "r": "3"}),
        ("a://{x}{?q,r}", "a://1", {"x": "1"}),
        ("a://{x}{?q}{&r}", "a://1?q=2&r=3", {"x": "1", "q": "2", "r": "3"}),
    ],
)
def test_matching_extracts_the_variables(template: str, uri: str, expected: dict[str, str]) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("a://{x}", "a://"),
        ("a://{x}", "a://1/2"),
        ("a://{x}", "b://1"),
        ("a://{x}/z", "a://1/y"),
        ("a://{x,y}", "a://1"),
        ("a://{#f}", "a://x"),
        ("a://fixed", "a://fixed/more"),
    ],
)
def test_non_matching_uris(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) is None


@pytest.mark.parametrize("template", ["a://{x", "a://x}", "a://{}", "a://{x y}", "a://x}{y}"])
def test_malformed_templates_are_rejected(template: str) -> None:
    with pytest.raises(ValueError):
        UriTemplate(template)


def test_variables_in_order() -> None:
    assert UriTemplate("a://{x}/{y}{?q,r}").variables == ["x", "y", "q", "r"]


def test_matching_a_hostile_uri_stays_fast() -> None:
    template = UriTemplate("a://{a}-{b}-{c}-{d}.json")
    uri = "a://" + "-" * 50_000 + "x"
    started = time.thread_time()  # CPU time of this thread: a busy machine does not stretch it
    assert template.match(uri) is None
    assert time.thread_time() - started < 1.0  # linear: milliseconds; backtracking: hours


@pytest.mark.anyio
async def test_a_template_with_an_optional_query_reads_with_and_without_it() -> None:
    server = Server("u")

    @server.resource("search://{query}{?limit}")
    def search(query: str, limit: str = "10") -> str:
        return f"{query} x{limit}"

    async with connect(server) as client:
        plain = await client.read_resource("search://cats")
        limited = await client.read_resource("search://cats?limit=3")
    assert plain["contents"][0]["text"] == "cats x10"
    assert limited["contents"][0]["text"] == "cats x3"


def test_a_uri_beyond_the_cap_matches_no_template_and_one_within_it_does() -> None:
    template = UriTemplate("search://q{?term,limit}")
    within = "search://q?term=" + "x" * (MAX_URI - len("search://q?term="))
    assert len(within) == MAX_URI
    assert template.match(within) == {"term": "x" * (MAX_URI - len("search://q?term="))}
    assert template.match(within + "x") is None


def test_values_without_percent_escapes_are_taken_as_they_are() -> None:
    template = UriTemplate("notes://{name}{?tag}")
    assert template.match("notes://a%20b?tag=x%2Fy") == {"name": "a b", "tag": "x/y"}
    assert template.match("notes://plain?tag=word") == {"name": "plain", "tag": "word"}


@pytest.mark.anyio
async def test_reading_a_huge_uri_is_answered_at_once_as_not_found() -> None:
    server = Server("big")

    @server.resource("search://q{?term}")
    def search(term: str = "") -> str:
        return term

    huge = "search://q?" + "&".join(f"term=x{i}" for i in range(400_000))  # ~3.9 MB
    async with connect(server) as client:
        with anyio.fail_after(timeouts.STEP):
            with pytest.raises(JsonRpcError) as raised:
                await client.read_resource(huge)
        ok = await client.read_resource("search://q?term=fine")
    assert raised.value.code == -32002
    assert ok["contents"][0]["text"] == "fine"
