"""The client the official MCP conformance suite drives in its client mode.

    conformance client --command "python -m jsonrpc_mcp_conformance.official.client" --scenario NAME

The suite starts a scenario's server and runs ``COMMAND URL`` with three environment variables:
``MCP_CONFORMANCE_SCENARIO`` (which scenario), ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the revision
the scenario runs at: ``2026-07-28`` means the stateless era, a handshake revision means
``initialize`` asking for it) and, for some scenarios, ``MCP_CONFORMANCE_CONTEXT`` (a JSON object:
the tool calls to make, pre-registered OAuth credentials, a private key ...).

Every scenario here does what an application would do with the public API: ``jsonrpc_mcp.Client``
(``Client.http``), its ``request_handlers``, and ``jsonrpc_mcp.client.auth.OAuth`` for the
authorization scenarios. The table ``SCENARIOS`` only chooses which tools to call and what to
answer; the protocol is the library's. Exit status 0 when the scenario's steps all succeeded;
otherwise 1 with one line on stderr saying why (no traceback for a failure the scenario provokes,
such as an authorization the client must give up on).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from jsonrpc_mcp import Client, JsonRpcError, NoCommonVersion
from jsonrpc_mcp.revisions import get_revision

from . import client_more

if TYPE_CHECKING:
    from jsonrpc_mcp.client.auth import OAuth

__all__ = [
    "CLIENT_MODULE",
    "EXPECTED_REFUSALS",
    "PROG",
    "SCENARIOS",
    "UNSUPPORTED",
    "Setting",
    "client_options",
    "main",
]

PROG = "jsonrpc-mcp conformance client"
CLIENT_MODULE = "jsonrpc_mcp_conformance.official.client"
CLIENT_INFO = {"name": "jsonrpc-mcp-conformance-client", "version": "1.0.0"}
# Where the suite's CIMD scenarios expect the client's metadata document to be (the scenario's
# authorization server accepts this URL as a client_id; nothing is fetched from it).
CIMD_CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
STEP_TIMEOUT = 20.0  # each request; the suite gives the whole client 30 s

# Scenarios in which the client is meant to fail (it must refuse what the server does); the runner
# does not hold their non-zero exit against them.
EXPECTED_REFUSALS = frozenset(
    {
        "auth/scope-retry-limit",
        "auth/resource-mismatch",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "sep-2640-client-verify-digest",
        "sep-2640-client-verify-size",
        "sep-2640-client-verify-frontmatter",
    }
)

# Extension scenarios of the suite this client does not play, each with the reason: what the
# library does not implement. The runner reports them as unsupported; a scenario a revision
# requires can never be here.
UNSUPPORTED = {
    "auth/enterprise-managed-authorization": "Enterprise-Managed Authorization (SEP-990: a token "
    "exchange at the identity provider, then the JWT bearer grant) is not in jsonrpc_mcp.client.auth",
    "auth/cross-app-access-complete-flow": "Cross-App Access (SEP-990, the 0.1 line's name for "
    "Enterprise-Managed Authorization) is not in jsonrpc_mcp.client.auth",
    "auth/dpop": "DPoP-bound tokens (RFC 9449, SEP-1932) are not in jsonrpc_mcp.client.auth",
    "auth/dpop-nonce": "DPoP-bound tokens (RFC 9449, SEP-1932) are not in jsonrpc_mcp.client.auth",
    "auth/wif-jwt-bearer": "the JWT bearer grant with a workload identity assertion (RFC 7523, "
    "SEP-1933) is not in jsonrpc_mcp.client.auth",
}


class ScenarioFailed(Exception):
    """A step of the scenario did not go as the scenario needs (one line, shown as it is)."""


@dataclass(frozen=True)
class Setting:
    """What the suite told this run: the server's URL and the three environment variables."""

    url: str
    scenario: str
    protocol_version: str | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    # stdio (``jsonrpc-mcp conformance client --transport stdio``): the scenario server's command
    # line, from ``MCP_CONFORMANCE_SERVER_COMMAND`` (a JSON array); then there is no URL
    server_command: tuple[str, ...] = ()

    @classmethod
    def from_environment(cls, url: str, environ: Mapping[str, str] = os.environ) -> Setting:
        raw = environ.get("MCP_CONFORMANCE_CONTEXT")
        try:
            context = json.loads(raw) if raw else {}
        except ValueError as exc:
            raise ScenarioFailed(f"MCP_CONFORMANCE_CONTEXT is not JSON: {exc}") from None
        if not isinstance(context, dict):
            raise ScenarioFailed("MCP_CONFORMANCE_CONTEXT is not a JSON object")
        command = environ.get("MCP_CONFORMANCE_SERVER_COMMAND")
        try:
            argv = json.loads(command) if command else []
        except ValueError:
            argv = None
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise ScenarioFailed("MCP_CONFORMANCE_SERVER_COMMAND is not a JSON array of strings")
        return cls(
            url=url,
            scenario=environ.get("MCP_CONFORMANCE_SCENARIO", ""),
            protocol_version=environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None,
            context=context,
            server_command=tuple(argv),
        )

    def text(self, key: str) -> str:
        """A string the context must carry."""
        value = self.context.get(key)
        if not isinstance(value, str) or not value:
            raise ScenarioFailed(f"the scenario's context has no {key!r}")
        return value


def client_options(protocol_version: str | None) -> dict[str, Any]:
    """``Client`` options for the revision the scenario runs at: a stateless revision is the mode
    itself; a handshake revision is ``legacy`` asking ``initialize`` for that version. None (the
    0.1 line of the suite sets no version), or one we do not speak: ``legacy`` at our latest
    handshake revision, as the official example clients do."""
    revision = get_revision(protocol_version) if protocol_version else None
    if revision is None:
        return {"mode": "legacy"}
    if not revision.has_handshake:
        return {"mode": revision.version}
    return {"mode": "legacy", "protocol_version": revision.version}


# -- what the application answers ---------------------------------------------------------------
async def accept_with_defaults(params: Any) -> dict[str, Any]:
    """An elicitation answered as a person would who accepts the form as it was pre-filled: every
    field the requested schema gives a default, with that default."""
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    content = {
        name: spec["default"]
        for name, spec in (properties or {}).items()
        if isinstance(spec, dict) and "default" in spec
    }
    return {"action": "accept", "content": content}


async def confirm(params: Any) -> dict[str, Any]:
    """An elicitation answered by ticking every boolean field of the form."""
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    content = {
        name: True
        for name, spec in (properties or {}).items()
        if isinstance(spec, dict) and spec.get("type") == "boolean"
    }
    return {"action": "accept", "content": content}


async def no_roots(params: Any) -> dict[str, Any]:
    return {"roots": []}


async def decline_sampling(params: Any) -> dict[str, Any]:
    raise JsonRpcError("this client has no model to sample", code=-1)


# -- connecting --------------------------------------------------------------------------------------
def connect(
    setting: Setting,
    *,
    auth: OAuth | None = None,
    capabilities: dict[str, Any] | None = None,
    handlers: Mapping[str, Callable[[Any], Awaitable[Any]]] | None = None,
    extensions: Mapping[str, dict[str, Any]] | None = None,
    auto: bool = False,
) -> AbstractAsyncContextManager[Client]:
    """``Client.http`` to the scenario's server (``Client.stdio`` when the harness gave its command
    line), at the revision the suite asked for."""
    options: dict[str, Any] = dict(client_options(setting.protocol_version))
    if auto and options["mode"] != "legacy":  # era detection: the revision asked for, or the handshake
        options["mode"] = "auto"
    options.update(client_info=CLIENT_INFO, request_timeout=STEP_TIMEOUT)
    if capabilities is not None:
        options["capabilities"] = capabilities
    if handlers:
        options["request_handlers"] = dict(handlers)
    if extensions:
        options["extensions"] = dict(extensions)
    if auth is not None:
        options["auth"] = auth
    if setting.server_command:
        return Client.stdio(list(setting.server_command), **options)
    return Client.http(setting.url, timeout=STEP_TIMEOUT, read_timeout=STEP_TIMEOUT, **options)


def tool_named(tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for tool in tools:
        if tool.get("name") == name:
            return tool
    raise ScenarioFailed(f"the server lists no tool {name!r}")


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """``tools/call``; a tool that reports an error fails the scenario."""
    result = await client.call_tool(name, arguments)
    if result.get("isError"):
        raise ScenarioFailed(f"tool {name!r} answered an error: {result.get('content')!r}")
    return result


# -- the scenarios -----------------------------------------------------------------------------------
Scenario = Callable[[Setting], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*names: str) -> Callable[[Scenario], Scenario]:
    def register(function: Scenario) -> Scenario:
        for name in names:
            SCENARIOS[name] = function
        return function

    return register


@scenario("initialize", "tools_call")
async def list_and_call_first_tool(setting: Setting) -> None:
    """Connect, list the tools, call the first one with ``a=2, b=3`` (what the scenarios serve)."""
    async with connect(setting) as client:
        tools = await client.list_tools()
        if tools:
            await call(client, tools[0]["name"], {"a": 2, "b": 3})


@scenario("json-schema-ref-no-deref")
async def list_tools_only(setting: Setting) -> None:
    """List the tools (whose schema has a remote ``$ref`` the client must not fetch), nothing more."""
    async with connect(setting) as client:
        await client.list_tools()


@scenario("json-schema-2020-12-preservation")
async def echo_schema(setting: Setting) -> None:
    """Send the focal tool's input schema, as listed, to the echo tool."""
    async with connect(setting) as client:
        focal = tool_named(await client.list_tools(), "json_schema_2020_12_tool")
        await call(client, "json_schema_echo", {"schema": focal.get("inputSchema")})


@scenario("elicitation-sep1034-client-defaults")
async def elicitation_defaults(setting: Setting) -> None:
    """Call the tool that elicits a form; accept it with its defaults."""
    async with connect(
        setting,
        capabilities={"elicitation": {"form": {}}},
        handlers={"elicitation/create": accept_with_defaults},
    ) as client:
        tool_named(await client.list_tools(), "test_client_elicitation_defaults")
        await call(client, "test_client_elicitation_defaults", {})


@scenario("sse-retry")
async def sse_retry(setting: Setting) -> None:
    """Call the tool whose response stream the server closes early: the answer comes after the
    client reconnects (honouring the stream's ``retry``)."""
    async with connect(setting) as client:
        tool_named(await client.list_tools(), "test_reconnection")
        await call(client, "test_reconnection", {})


@scenario("request-metadata")
async def request_metadata(setting: Setting) -> None:
    """Discover the server and list its tools, declaring roots, sampling and elicitation."""
    capabilities: dict[str, Any] = {"roots": {}, "sampling": {}, "elicitation": {"form": {}}}
    handlers = {
        "roots/list": no_roots,
        "sampling/createMessage": decline_sampling,
        "elicitation/create": confirm,
    }
    async with connect(setting, capabilities=capabilities, handlers=handlers) as client:
        await client.list_tools()


@scenario("sep-2322-client-request-state")
async def input_rounds(setting: Setting) -> None:
    """The multi round-trip tools: each asks for a confirmation (answered, and the call retried by
    the library); while the first waits for it, an unrelated tool is called, which must carry
    nothing of the other's round."""
    unrelated_called = False

    async def confirm_after_unrelated_call(params: Any) -> dict[str, Any]:
        nonlocal unrelated_called
        if not unrelated_called:
            unrelated_called = True
            await call(client, "test_mrtr_unrelated", {})
        return await confirm(params)

    capabilities: dict[str, Any] = {"elicitation": {"form": {}}}
    handlers = {"elicitation/create": confirm_after_unrelated_call}
    async with connect(setting, capabilities=capabilities, handlers=handlers) as client:
        names = {tool.get("name") for tool in await client.list_tools()}
        for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"):
            if name not in names:
                raise ScenarioFailed(f"the server lists no tool {name!r}")
            result = await call(client, name, {})
            if result.get("resultType", "complete") != "complete":
                raise ScenarioFailed(f"{name}: the call ended without a complete result: {result!r}")


@scenario("http-standard-headers")
async def standard_headers(setting: Setting) -> None:
    """Use every kind of request the scenario watches: list and call each tool, list and read each
    resource, list and get each prompt."""
    async with connect(setting) as client:
        for tool in await client.list_tools():
            await call(client, tool["name"], {})
        for resource in await client.list_resources():
            await client.read_resource(resource["uri"])
        for prompt in await client.list_prompts():
            await client.get_prompt(prompt["name"])


@scenario("http-custom-headers")
async def custom_headers(setting: Setting) -> None:
    """List the tools, then make the tool calls the scenario's context names (the client mirrors
    the parameters the tools mark with ``x-mcp-header`` into ``Mcp-Param-*`` headers)."""
    calls = setting.context.get("toolCalls")
    async with connect(setting) as client:
        names = {tool.get("name") for tool in await client.list_tools()}
        if not isinstance(calls, list) or not calls:
            raise ScenarioFailed("the scenario's context names no toolCalls")
        for item in calls:
            name = item.get("name") if isinstance(item, dict) else None
            arguments = item.get("arguments") if isinstance(item, dict) else None
            if not isinstance(name, str) or name not in names:
                raise ScenarioFailed(f"the context's tool call {item!r} names no tool the server lists")
            await call(client, name, arguments if isinstance(arguments, dict) else {})


def sample_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool's required parameters, made up from their types."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    required = schema.get("required", []) if isinstance(schema, dict) else []
    samples = {"string": "us-west1", "integer": 1, "number": 1.5, "boolean": True}
    arguments: dict[str, Any] = {}
    for name in required if isinstance(required, list) else []:
        spec = properties.get(name) if isinstance(properties, dict) else None
        kind = spec.get("type") if isinstance(spec, dict) else None
        arguments[name] = samples.get(kind, "value") if isinstance(kind, str) else "value"
    return arguments


@scenario("http-invalid-tool-headers")
async def call_every_usable_tool(setting: Setting) -> None:
    """List the tools and call every one the client kept (it leaves out those whose
    ``x-mcp-header`` declarations are invalid), with made-up arguments."""
    async with connect(setting) as client:
        tools = await client.list_tools()
        if not tools:
            raise ScenarioFailed("the client kept none of the server's tools")
        for tool in tools:
            await call(client, tool["name"], sample_arguments(tool))


async def answer_sampling(params: Any) -> dict[str, Any]:
    """A canned model answer (the harness's ``sampling`` scenario judges its shape, not its wit)."""
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "conformance-model"}


async def one_root(params: Any) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///tmp/conformance-root", "name": "conformance"}]}


@scenario("sampling")
async def sampling(setting: Setting) -> None:
    """(``jsonrpc-mcp conformance client`` only) Declare sampling; call the tool that samples."""
    handlers = {"sampling/createMessage": answer_sampling}
    async with connect(setting, capabilities={"sampling": {}}, handlers=handlers) as client:
        tool_named(await client.list_tools(), "test_sampling")
        await call(client, "test_sampling", {})


@scenario("roots")
async def roots(setting: Setting) -> None:
    """(``jsonrpc-mcp conformance client`` only) Declare roots; call the tool that lists them."""
    async with connect(setting, capabilities={"roots": {}}, handlers={"roots/list": one_root}) as client:
        tool_named(await client.list_tools(), "test_roots")
        await call(client, "test_roots", {})


@scenario("progress")
async def progress(setting: Setting) -> None:
    """(``jsonrpc-mcp conformance client`` only) Call the tool that reports progress, listening."""
    heard: list[float] = []

    def listen(value: float, total: float | None, message: str | None) -> None:
        heard.append(value)

    async with connect(setting) as client:
        tool_named(await client.list_tools(), "test_progress")
        await client.call_tool("test_progress", {}, progress=listen)
    if not heard:
        raise ScenarioFailed("no progress was heard from test_progress")


@scenario(*client_more.MORE)
async def more(setting: Setting) -> None:
    """(``jsonrpc-mcp conformance client`` only) cancellation, elicitation-url, discover-fallback*:
    ``client_more.py``."""
    play = client_more.MORE[setting.scenario]
    async with connect(
        setting, capabilities=play.capabilities, handlers=play.handlers, auto=play.auto
    ) as client:
        why = await play.run(client, setting.context)
    if why:
        raise ScenarioFailed(why)


# -- the skills extension (SEP-2640) ------------------------------------------------------------------
@scenario("sep-2640-client-no-prefetch")
async def list_skills_only(setting: Setting) -> None:
    """List the skills and load none: no file of a skill is read ahead of need."""
    from jsonrpc_mcp.skills import EXTENSION_ID

    async with connect(setting, extensions={EXTENSION_ID: {}}) as client:
        await client.list_skills()


@scenario(
    "sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter"
)
async def load_first_skill(setting: Setting) -> None:
    """Load the first skill: read its SKILL.md, then its other files, each verified against the
    skill's entry (the library refuses a file that does not match, and the load stops there)."""
    from jsonrpc_mcp.skills import EXTENSION_ID

    async with connect(setting, extensions={EXTENSION_ID: {}}) as client:
        skills = await client.list_skills()
        if not skills:
            raise ScenarioFailed("the server lists no skill")
        entry = skills[0]
        await client.read_skill_file(entry)
        for item in entry.get("resources") or []:
            uri = item.get("uri") if isinstance(item, dict) else None
            if isinstance(uri, str) and uri != entry.get("uri"):
                await client.read_skill_file(entry, uri)


# -- authorization -----------------------------------------------------------------------------------
# The authorization code scenarios: the well-behaved client signs in (the browser step is
# HeadlessBrowser, which follows the authorization server's redirects), lists the tools and calls
# the scenario's tool. Those in EXPECTED_REFUSALS must end in AuthorizationError instead.
AUTHORIZATION_CODE = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/token-refresh",  # (jsonrpc-mcp conformance client only: the access token expires after one use)
)


def auth_module() -> Any:
    """``jsonrpc_mcp.client.auth``, imported only by the authorization scenarios."""
    try:
        import jsonrpc_mcp.client.auth as module
    except ImportError as exc:
        raise ScenarioFailed(f"jsonrpc_mcp.client.auth is not available: {exc}") from None
    return module


async def sign_in_and_use(setting: Setting, oauth: OAuth) -> None:
    """Connect with ``oauth``, list the tools, and call ``test-tool`` when the server has it (the
    authorization scenarios' servers do; some refuse only the call, asking for more scopes)."""
    async with connect(setting, auth=oauth) as client:
        tools = await client.list_tools()
        if any(tool.get("name") == "test-tool" for tool in tools):
            await call(client, "test-tool", {})


@scenario(*AUTHORIZATION_CODE)
async def authorization_code(setting: Setting) -> None:
    """The authorization code flow, registering dynamically (the client has no credentials)."""
    auth = auth_module()
    await sign_in_and_use(setting, auth.OAuth(agent=auth.HeadlessBrowser(), client_name=CLIENT_INFO["name"]))


@scenario("auth/basic-cimd")
async def client_id_metadata_document(setting: Setting) -> None:
    """The authorization code flow with a Client ID Metadata Document URL as the client_id (the
    URL the scenario's authorization server expects; it fetches nothing)."""
    auth = auth_module()
    oauth = auth.OAuth(
        client_metadata_url=CIMD_CLIENT_METADATA_URL,
        agent=auth.HeadlessBrowser(),
        client_name=CLIENT_INFO["name"],
    )
    await sign_in_and_use(setting, oauth)


@scenario("auth/pre-registration")
async def pre_registered(setting: Setting) -> None:
    """The authorization code flow with the credentials registered beforehand (the context's)."""
    auth = auth_module()
    oauth = auth.OAuth(
        client_id=setting.text("client_id"),
        client_secret=setting.context.get("client_secret"),
        agent=auth.HeadlessBrowser(),
        client_name=CLIENT_INFO["name"],
    )
    await sign_in_and_use(setting, oauth)


@scenario("auth/client-credentials-basic", "auth/client-credentials-jwt")
async def client_credentials(setting: Setting) -> None:
    """Machine to machine (SEP-1046): the client_credentials grant with the context's client_id and
    its secret, or its private key (private_key_jwt, signed with the context's algorithm)."""
    auth = auth_module()
    private_key = setting.context.get("private_key_pem")
    method = setting.context.get("token_endpoint_auth_method")
    if method is None and private_key:
        method = "private_key_jwt"
    oauth = auth.OAuth(
        grant="client_credentials",
        client_id=setting.text("client_id"),
        client_secret=setting.context.get("client_secret"),
        private_key=private_key,
        signing_algorithm=setting.context.get("signing_algorithm"),
        token_endpoint_auth_method=method,
        client_name=CLIENT_INFO["name"],
    )
    async with connect(setting, auth=oauth) as client:
        await client.list_tools()


# -- running -----------------------------------------------------------------------------------------
def expected_failures() -> tuple[type[BaseException], ...]:
    """The exceptions that end a scenario with a one-line reason: what a server can provoke."""
    kinds: list[type[BaseException]] = [
        ScenarioFailed,
        JsonRpcError,
        NoCommonVersion,
        ConnectionError,
        TimeoutError,
        OSError,
    ]
    if "jsonrpc_mcp.client.auth" in sys.modules:
        kinds.append(sys.modules["jsonrpc_mcp.client.auth"].AuthorizationError)
    if "jsonrpc_mcp.skills" in sys.modules:
        kinds.append(sys.modules["jsonrpc_mcp.skills"].SkillVerificationError)
    return tuple(kinds)


def describe(exc: BaseException) -> str:
    if isinstance(exc, JsonRpcError):
        return f"JSON-RPC error {exc.code}: {exc.message}"
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ScenarioFailed) else f"{type(exc).__name__}: {text}"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args and os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND"):
        args = [""]  # stdio: the server's command line instead of a URL
    if len(args) != 1:
        print(f"{PROG}: usage: MCP_CONFORMANCE_SCENARIO=NAME python -m {CLIENT_MODULE} URL", file=sys.stderr)
        return 2
    try:
        setting = Setting.from_environment(args[0])
    except ScenarioFailed as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    run = SCENARIOS.get(setting.scenario)
    if run is None:
        why = UNSUPPORTED.get(setting.scenario, "no such scenario (MCP_CONFORMANCE_SCENARIO)")
        print(f"{PROG}: {setting.scenario or '(none)'}: not played: {why}", file=sys.stderr)
        return 2
    try:
        anyio.run(run, setting)
    except expected_failures() as exc:
        print(f"{PROG}: {setting.scenario}: {describe(exc)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
