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

import functools
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import mcp_types as types
from mcp.client import Client, ClientRequestContext
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyUrl, FileUrl

CLIENT_INFO = types.Implementation(name="mcp-python-sdk-conformance-driver", version="1.0.0")
STEP_TIMEOUT = 20.0  # the whole scenario; the harness kills the process later

# Scenarios of `jsonrpc-mcp conformance client` (or the official suite) this driver does not play, and why.
NO_SKILLS = (
    "the skills extension (SEP-2640): the Python SDK has no host-side skills API (no skills/list, "
    "no verification of a skill's files against its entry)"
)
NOT_PLAYED = {
    "sep-2640-client-no-prefetch": NO_SKILLS,
    "sep-2640-client-verify-digest": NO_SKILLS,
    "sep-2640-client-verify-size": NO_SKILLS,
    "sep-2640-client-verify-frontmatter": NO_SKILLS,
    "auth/enterprise-managed-authorization": "an extension (SEP-990): the driver does not play the "
    "identity provider's token exchange",
    "auth/dpop": "an extension (DPoP): the Python SDK offers no DPoP support",
    "auth/dpop-nonce": "an extension (DPoP): the Python SDK offers no DPoP support",
    "auth/wif-jwt-bearer": "an extension (workload identity federation): not played by this driver",
}
# The application's OAuth client: where the authorization server sends the user agent back (never
# reached: the redirect handler reads the code from the Location header), and the URL of its client
# ID metadata document (the one the official suite's auth/basic-cimd expects).
REDIRECT_URI = "http://localhost:3000/callback"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


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


async def consent_to_url(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """A URL-mode elicitation answered as a user who consents to open the page (out of band: this
    headless application opens nothing); a form is declined."""
    if isinstance(params, types.ElicitRequestURLParams):
        return types.ElicitResult(action="accept")
    return types.ElicitResult(action="decline")


async def confirm(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirmed": True})


# -- connecting --------------------------------------------------------------------------------------
def connect(transport: Any = None, **options: Any) -> Client:
    """A ``Client`` to the scenario server: the given transport, stdio when the harness gave its
    command line, else the URL."""
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION")
    mode = "auto" if version is None or version in MODERN_PROTOCOL_VERSIONS else "legacy"
    command = os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND")
    server: Any
    if transport is not None:
        server = transport
    elif command:
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


@scenario("discover-fallback", "discover-fallback-any-error")
async def era_fallback() -> None:
    """A legacy server refuses the modern request: the SDK's ``auto`` mode falls back by itself."""
    async with connect() as client:
        await client.list_tools()


@scenario("caching-hints")
async def list_again() -> None:
    """List the tools as often as the context says, list the resources and read each one (what the
    SDK caches, and for how long, is its own)."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    async with connect() as client:
        for _ in range(int(context.get("listTools", 2))):
            await client.list_tools()
        for resource in (await client.list_resources()).resources:
            await client.read_resource(resource.uri)


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


@scenario("cancellation")
async def give_up() -> None:
    """Call the slow tool and give up after the context's ``cancelAfterMs``: the SDK's request
    timeout (``read_timeout_seconds``), on whose expiry the SDK cancels the request itself."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    name, after = context.get("tool", "test_slow"), context.get("cancelAfterMs", 1000)
    async with connect() as client:
        await client.list_tools()
        try:
            result = await client.call_tool(name, {}, read_timeout_seconds=after / 1000)
        except MCPError as exc:
            if exc.error.code != types.REQUEST_TIMEOUT:
                raise
            return  # given up (and cancelled by the SDK)
    raise RuntimeError(f"{name} answered within {after} ms (it was to be given up on): {result!r}")


@scenario("elicitation-url")
async def url_elicitation() -> None:
    """Declare elicitation (the SDK declares form and url for an elicitation callback) and call the
    tool that sends the user to a URL."""
    async with connect(elicitation_callback=consent_to_url) as client:
        await client.list_tools()
        await call(client, "test_url_elicitation", {})


# -- authorization (auth/*, HTTP only) ----------------------------------------------------------------
class MemoryTokenStorage:
    """The SDK's ``TokenStorage``, in memory: the tokens and the client's registration of one run."""

    def __init__(self, client_info: OAuthClientInformationFull | None = None) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info = client_info

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class UserAgent:
    """The user's browser, automated: the redirect handler follows the authorization URL with one
    GET (the scenario's authorization server approves at once) and keeps what the redirect's
    ``Location`` carries back (``code``, ``state``, ``iss``); the callback handler returns it."""

    def __init__(self) -> None:
        self.pending: AuthorizationCodeResult | None = None

    async def redirect(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False, timeout=STEP_TIMEOUT) as http:
            response = await http.get(authorization_url)
        location = response.headers.get("location")
        if response.status_code not in (301, 302, 303, 307, 308) or not location:
            raise RuntimeError(f"the authorization endpoint answered {response.status_code}, not a redirect")
        query = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
        if "code" not in query:
            raise RuntimeError(f"the redirect carries no code (error: {query.get('error')!r})")
        self.pending = AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    async def callback(self) -> AuthorizationCodeResult:
        result, self.pending = self.pending, None
        if result is None:
            raise RuntimeError("no authorization code: the redirect was not followed")
        return result


def authorization_provider(name: str, url: str, context: dict[str, Any]) -> httpx2.Auth:
    """The SDK's provider for the scenario: client credentials (a secret, or a private key JWT) when
    the scenario is one, else the authorization code flow with PKCE (pre-registered when the
    context gives a ``client_id``; else a client ID metadata document or dynamic registration, as
    the authorization server offers)."""
    if name == "auth/client-credentials-basic":
        return ClientCredentialsOAuthProvider(
            url, MemoryTokenStorage(), context["client_id"], context["client_secret"]
        )
    if name == "auth/client-credentials-jwt":
        signer = SignedJWTParameters(
            issuer=context["client_id"],
            subject=context["client_id"],
            signing_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm", "ES256"),
        )
        return PrivateKeyJWTOAuthProvider(
            url, MemoryTokenStorage(), context["client_id"], signer.create_assertion_provider()
        )
    registered = None
    if context.get("client_id"):
        secret = context.get("client_secret")
        registered = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=secret,
            redirect_uris=[AnyUrl(REDIRECT_URI)],
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
        )
    agent = UserAgent()
    return OAuthClientProvider(
        url,
        OAuthClientMetadata(
            client_name="mcp-python-sdk-conformance-driver",
            redirect_uris=[AnyUrl(REDIRECT_URI)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        MemoryTokenStorage(registered),
        redirect_handler=agent.redirect,
        callback_handler=agent.callback,
        client_metadata_url=CLIENT_METADATA_URL,
    )


async def authorized_session(name: str) -> None:
    """Connect through the SDK's OAuth support (it follows the server's 401 or 403 challenge), list
    the tools and call each (a tool's own error answer is the server's to give)."""
    url = sys.argv[-1]
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    async with (
        httpx2.AsyncClient(auth=authorization_provider(name, url, context), timeout=STEP_TIMEOUT) as http,
        connect(transport=streamable_http_client(url, http_client=http)) as client,
    ):
        for tool in (await client.list_tools()).tools:
            await client.call_tool(tool.name, stub_arguments(tool.input_schema))


def main() -> int:
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if not os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND") and len(sys.argv) < 2:
        print("usage: sdk_client.py URL (or MCP_CONFORMANCE_SERVER_COMMAND for stdio)", file=sys.stderr)
        return 2
    function = SCENARIOS.get(name)
    if function is None and name.startswith("auth/") and name not in NOT_PLAYED:
        function = functools.partial(authorized_session, name)
    if function is None:
        reason = NOT_PLAYED.get(name, "no such scenario in this driver")
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
