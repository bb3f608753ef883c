"""More scenarios of the driver (``client.py``), those of ``jsonrpc-mcp conformance client`` only:
``cancellation`` and ``elicitation-url``, added to its ``SCENARIOS`` (``client.py`` imports this).

As there, each does what an application would do with the public API and leaves the protocol to
the library: the call given up on is the library's request timeout (``call_tool(...,
timeout=...)``), which cancels the request as the revision and transport say.
"""

from __future__ import annotations

from typing import Any

from .client import (
    SCENARIOS,
    STEP_TIMEOUT,
    Scenario,
    ScenarioFailed,
    Setting,
    accept_with_defaults,
    connect,
    tool_named,
)

__all__ = ["MORE"]


async def give_up(setting: Setting) -> None:
    """Call the slow tool and give up on it after the context's ``cancelAfterMs``: the library
    cancels the request (``notifications/cancelled``, or over Streamable HTTP in 2026-07-28 by
    closing its response stream). That the call did not finish is the scenario's point."""
    name = setting.context.get("tool", "test_slow")
    after = setting.context.get("cancelAfterMs", 1000)
    if not isinstance(name, str) or not isinstance(after, int) or isinstance(after, bool) or after <= 0:
        raise ScenarioFailed("the scenario's context needs a tool name and a positive cancelAfterMs")
    async with connect(setting) as client:
        tool_named(await client.list_tools(), name)
        try:
            result = await client.call_tool(name, {}, timeout=after / 1000)
        except TimeoutError:
            return  # given up, and cancelled
        raise ScenarioFailed(f"{name} answered within {after} ms (it was to be given up on): {result!r}")


async def consent_to_url(params: Any) -> dict[str, Any]:
    """A URL-mode elicitation answered as a user who consents to open the page: ``accept``, with no
    content (the interaction happens out of band; this headless client opens nothing). A form is
    accepted with its defaults."""
    if isinstance(params, dict) and params.get("mode") == "url":
        return {"action": "accept"}
    return await accept_with_defaults(params)


async def url_elicitation(setting: Setting) -> None:
    """Declare elicitation with the url mode; call the tool that sends the user to a URL."""
    capabilities: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
    handlers = {"elicitation/create": consent_to_url}
    async with connect(setting, capabilities=capabilities, handlers=handlers) as client:
        tool_named(await client.list_tools(), "test_url_elicitation")
        result = await client.call_tool("test_url_elicitation", {}, timeout=STEP_TIMEOUT)
        if result.get("isError"):
            raise ScenarioFailed(f"test_url_elicitation answered an error: {result.get('content')!r}")


MORE: dict[str, Scenario] = {"cancellation": give_up, "elicitation-url": url_elicitation}
SCENARIOS.update(MORE)
