"""More scenarios of the driver (``client.py``), those of ``jsonrpc-mcp conformance client`` only:
``cancellation``, ``elicitation-url``, ``caching-hints`` and the era detection ones
(``discover-fallback*``: the library's ``mode="auto"``). ``client.py`` connects as each
:class:`Play` says (the capabilities it declares, the handlers answering the server, era detection)
and runs it; a play returns why the scenario failed, or None.

As there, each does what an application would do with the public API and leaves the protocol to
the library: the call given up on is the library's request timeout (``call_tool(...,
timeout=...)``), which cancels the request as the revision and transport say.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonrpc_mcp import Client

__all__ = ["MORE", "Play"]

STEP_TIMEOUT = 20.0  # (client.py's)


@dataclass(frozen=True)
class Play:
    run: Callable[[Client, Mapping[str, Any]], Awaitable[str | None]]
    capabilities: dict[str, Any] | None = None
    handlers: dict[str, Callable[[Any], Awaitable[Any]]] = field(default_factory=dict)
    auto: bool = False  # at a stateless revision: era detection (mode "auto"), not that revision alone


async def give_up(client: Client, context: Mapping[str, Any]) -> str | None:
    """Call the slow tool and give up on it after the context's ``cancelAfterMs``: the library
    cancels the request (``notifications/cancelled``, or over Streamable HTTP in 2026-07-28 by
    closing its response stream). That the call did not finish is the scenario's point."""
    name, after = context.get("tool", "test_slow"), context.get("cancelAfterMs", 1000)
    if not isinstance(name, str) or not isinstance(after, int) or isinstance(after, bool) or after <= 0:
        return "the scenario's context needs a tool name and a positive cancelAfterMs"
    if name not in {tool.get("name") for tool in await client.list_tools()}:
        return f"the server lists no tool {name!r}"
    try:
        result = await client.call_tool(name, {}, timeout=after / 1000)
    except TimeoutError:
        return None  # given up, and cancelled
    return f"{name} answered within {after} ms (it was to be given up on): {result!r}"


async def consent_to_url(params: Any) -> dict[str, Any]:
    """A URL-mode elicitation answered as a user who consents to open the page: ``accept``, with no
    content (the interaction happens out of band; this headless client opens nothing). This client
    fills no form."""
    if isinstance(params, dict) and params.get("mode") == "url":
        return {"action": "accept"}
    return {"action": "decline"}


async def url_elicitation(client: Client, context: Mapping[str, Any]) -> str | None:
    """Call the tool that sends the user to a URL (elicitation with the url mode declared)."""
    if "test_url_elicitation" not in {tool.get("name") for tool in await client.list_tools()}:
        return "the server lists no tool 'test_url_elicitation'"
    result = await client.call_tool("test_url_elicitation", {}, timeout=STEP_TIMEOUT)
    return (
        f"test_url_elicitation answered an error: {result.get('content')!r}"
        if result.get("isError")
        else None
    )


async def list_after_detection(client: Client, context: Mapping[str, Any]) -> str | None:
    """Era detection against a legacy server: the library probes ``server/discover`` and, refused
    with an error that is not a modern one, falls back to ``initialize``; then list the tools."""
    if "add_numbers" not in {tool.get("name") for tool in await client.list_tools()}:
        return "the server lists no tool 'add_numbers'"
    return None


async def list_and_read(client: Client, context: Mapping[str, Any]) -> str | None:
    """List the tools as many times as the context's ``listTools`` says, then list the resources and
    read each (whatever the results' caching hints: this client keeps no cache)."""
    times = context.get("listTools", 2)
    if not isinstance(times, int) or isinstance(times, bool) or times < 1:
        return "the scenario's context needs a positive listTools"
    for _ in range(times):
        await client.list_tools()
    for resource in await client.list_resources():
        await client.read_resource(resource["uri"])
    return None


MORE: dict[str, Play] = {
    "caching-hints": Play(list_and_read),
    "discover-fallback": Play(list_after_detection, auto=True),
    "discover-fallback-any-error": Play(list_after_detection, auto=True),
    "cancellation": Play(give_up),
    "elicitation-url": Play(
        url_elicitation,
        capabilities={"elicitation": {"form": {}, "url": {}}},
        handlers={"elicitation/create": consent_to_url},
    ),
}
