"""A driver of the official Python SDK's client (the ``mcp`` package) for ``jsonrpc-mcp conformance client``.

    jsonrpc-mcp conformance client --transport both -- python tests/conformance/clients/sdk_client.py

It plays the harness's scenarios with the SDK's public API only (``mcp.client.Client``, given the
scenario server's URL or, over stdio, ``StdioServerParameters``), the way the SDK's own conformance
client plays the official suite's: the scenario from ``MCP_CONFORMANCE_SCENARIO``, the era from
``MCP_CONFORMANCE_PROTOCOL_VERSION`` (a 2026-07-28 run is ``mode="auto"``: ``server/discover``,
then the per-request envelope; a handshake revision is ``mode="legacy"``: ``initialize``), the
context from ``MCP_CONFORMANCE_CONTEXT``. Over HTTP the URL is the last argument; over stdio
``MCP_CONFORMANCE_SERVER_COMMAND`` holds the scenario server's command line (a JSON array).

Whatever the protocol asks (the handshake, ``_meta``, headers, retries, which tools to keep) is the
SDK's doing; this file only chooses what the application asks and answers. Exit status 0 when the
scenario's steps succeeded, 1 when one failed, 2 for a scenario it does not play (``NOT_PLAYED``
says why) or a bad invocation.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client, ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import FileUrl

CLIENT_INFO = types.Implementation(name="mcp-python-sdk-conformance-driver", version="1.0.0")
STEP_TIMEOUT = 20.0  # the whole scenario; the harness kills the process later

# Scenarios of `jsonrpc-mcp conformance client` (or the official suite) this driver does not play, and why.
NOT_PLAYED = {
    "auth/*": "the authorization scenarios need an OAuth redirect handler and token storage around the "
    "SDK's OAuthClientProvider; this driver has none (the SDK's own conformance client does)",
}


# -- what the application answers ------------------------------------------------------------------
async def answer_sampling(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    """A canned model answer (the scenario judges its shape)."""
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris"), model="conformance-model"
    )


async def one_root(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(
        roots=[types.Root(uri=FileUrl("file:///tmp/conformance-root"), name="conformance")]
    )


async def accept_with_defaults(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """Accept the form as it was pre-filled: every field with a default, with that default."""
    content: dict[str, Any] = {}
    if isinstance(params, types.ElicitRequestFormParams):
        for name, field in (params.requested_schema.get("properties") or {}).items():
            if isinstance(field, dict) and "default" in field:
                content[name] = field["default"]
    return types.ElicitResult(action="accept", content=content)


async def confirm(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirmed": True})


# -- connecting --------------------------------------------------------------------------------------
def connect(**options: Any) -> Client:
    """A ``Client`` to the scenario server: stdio when the harness gave its command line, else the URL."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    mode = "auto" if version is None or version in MODERN_PROTOCOL_VERSIONS else "legacy"
    command = os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND")
    server: str | StdioServerParameters
    if command:
        argv = json.loads(command)
        server = StdioServerParameters(command=argv[0], args=argv[1:])
    else:
        server = sys.argv[-1]
    return Client(server, mode=mode, client_info=CLIENT_INFO, read_timeout_seconds=STEP_TIMEOUT, **options)


def stub_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a schema's required parameters, made up from their types."""
    samples = {"string": "us-west1", "integer": 1, "number": 1.5, "boolean": True}
    properties = schema.get("properties") or {}
    return {
        name: samples.get(properties.get(name, {}).get("type"), "x") for name in schema.get("required") or []
    }


async def call(client: Client, name: str, arguments: dict[str, Any]) -> None:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise RuntimeError(f"tool {name!r} answered an error: {result.content!r}")


# -- the scenarios -----------------------------------------------------------------------------------
Scenario = Callable[[], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(function: Scenario) -> Scenario:
        SCENARIOS.update(dict.fromkeys(names, function))
        return function

    return register


@scenario("initialize", "json-schema-ref-no-deref")
async def list_tools() -> None:
    async with connect() as client:
        await client.list_tools()


@scenario("tools_call")
async def add_numbers() -> None:
    async with connect() as client:
        await client.list_tools()
        await call(client, "add_numbers", {"a": 5, "b": 3})


@scenario("http-standard-headers")
async def every_named_request() -> None:
    """Each kind of request that names something: call every tool, read every resource, get every
    prompt (the SDK adds ``Mcp-Method`` and ``Mcp-Name``)."""
    async with connect() as client:
        for tool in (await client.list_tools()).tools:
            await call(client, tool.name, stub_arguments(tool.input_schema))
        for resource in (await client.list_resources()).resources:
            await client.read_resource(resource.uri)
        for prompt in (await client.list_prompts()).prompts:
            await client.get_prompt(prompt.name)


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults() -> None:
    async with connect(elicitation_callback=accept_with_defaults) as client:
        await client.list_tools()
        await call(client, "test_client_elicitation_defaults", {})


@scenario("sampling")
async def sampling() -> None:
    async with connect(sampling_callback=answer_sampling) as client:
        await client.list_tools()
        await call(client, "test_sampling", {})


@scenario("roots")
async def roots() -> None:
    async with connect(list_roots_callback=one_root) as client:
        await client.list_tools()
        await call(client, "test_roots", {})


@scenario("request-metadata")
async def request_metadata() -> None:
    """Every client capability declared (each by its callback); discover and list."""
    async with connect(
        sampling_callback=answer_sampling, list_roots_callback=one_root, elicitation_callback=confirm
    ) as client:
        await client.list_tools()


@scenario("http-invalid-tool-headers")
async def call_every_kept_tool() -> None:
    """Call every tool the SDK keeps (it leaves out those with invalid ``x-mcp-header``)."""
    async with connect() as client:
        for tool in (await client.list_tools()).tools:
            await call(client, tool.name, stub_arguments(tool.input_schema))


@scenario("http-custom-headers")
async def context_tool_calls() -> None:
    """Make the context's ``toolCalls`` (the SDK mirrors ``x-mcp-header`` parameters into headers)."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    async with connect() as client:
        kept = {tool.name for tool in (await client.list_tools()).tools}
        for item in context.get("toolCalls") or []:
            if item["name"] not in kept:
                raise RuntimeError(f"the SDK did not keep the tool {item['name']!r}")
            # (the tool may refuse an argument, the null one: its error is the server's to give)
            await client.call_tool(item["name"], item.get("arguments") or {})


@scenario("sse-retry")
async def reconnection() -> None:
    async with connect() as client:
        await client.list_tools()
        await call(client, "test_reconnection", {})


@scenario("json-schema-2020-12-preservation")
async def echo_schema() -> None:
    async with connect() as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        await call(client, "json_schema_echo", {"schema": tools["json_schema_2020_12_tool"].input_schema})


@scenario("sep-2322-client-request-state")
async def input_rounds() -> None:
    """The multi round-trip tools, each retried by the SDK with the round's answers."""
    async with connect(elicitation_callback=confirm) as client:
        await client.list_tools()
        for name in (
            "test_mrtr_echo_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_state",
            "test_mrtr_no_result_type",
        ):
            await call(client, name, {})


@scenario("progress")
async def progress() -> None:
    """Call ``test_progress`` with a progress callback (the SDK sends a ``progressToken``); its three
    ``notifications/progress`` must reach the callback before the result."""
    steps: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append(progress)

    async with connect() as client:
        await client.list_tools()
        result = await client.call_tool("test_progress", {}, progress_callback=on_progress)
        if result.is_error:
            raise RuntimeError(f"tool 'test_progress' answered an error: {result.content!r}")
    if not steps:
        raise RuntimeError("no notifications/progress reached the progress callback")


def main() -> int:
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if not os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND") and len(sys.argv) < 2:
        print("usage: sdk_client.py URL (or MCP_CONFORMANCE_SERVER_COMMAND for stdio)", file=sys.stderr)
        return 2
    function = SCENARIOS.get(name)
    if function is None:
        reason = NOT_PLAYED["auth/*"] if name.startswith("auth/") else "no such scenario in this driver"
        print(f"scenario {name!r} is not played by the Python SDK driver: {reason}", file=sys.stderr)
        return 2
    try:
        anyio.run(_bounded, function)
    except Exception as exc:  # the scenario failed: one line, the harness shows it
        cause: BaseException = exc
        while getattr(cause, "exceptions", None):  # an exception group (Python 3.10: its backport)
            cause = cause.exceptions[0]  # type: ignore[attr-defined]
        print(f"scenario {name!r} failed: {type(cause).__name__}: {cause}", file=sys.stderr)
        return 1
    return 0


async def _bounded(function: Scenario) -> None:
    with anyio.fail_after(STEP_TIMEOUT):
        await function()


if __name__ == "__main__":
    sys.exit(main())
