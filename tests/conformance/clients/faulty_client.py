"""A hand-written MCP client with fault switches, for ``jsonrpc-mcp conformance client``'s own tests.

    python faulty_client.py [--fault NAME]... [URL]

It plays the harness's scenarios (``MCP_CONFORMANCE_SCENARIO``) at the revision it is told
(``MCP_CONFORMANCE_PROTOCOL_VERSION``), over HTTP (the URL, last argument) or stdio (the server's
command line in ``MCP_CONFORMANCE_SERVER_COMMAND``). It speaks the wire itself (httpx and JSON, no
MCP library), so each fault breaks exactly one thing. Without a fault it is a correct client.

Faults (``FAULTS``): each names what it breaks; tests/conformance/test_client_mode.py checks that
the harness fails the requirement it names, and only requirements it should.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

try:  # (imported by the tests as a package module, run by the harness as a script)
    from .faulty_auth import AUTH_FAULTS, Authorizer
except ImportError:
    from faulty_auth import AUTH_FAULTS, Authorizer  # type: ignore[no-redef,import-not-found]
try:
    from . import faulty_more
except ImportError:  # run as a script: its folder is on sys.path
    import faulty_more  # type: ignore[no-redef,import-not-found]
try:
    from . import faulty_discover
except ImportError:  # run as a script: its folder is on sys.path
    import faulty_discover  # type: ignore[no-redef,import-not-found]

FAULTS = {
    "do-nothing": "exit at once, having sent nothing",
    "no-initialize": "skip initialize: the first request is tools/list",
    "bad-version": "initialize asks for protocol version 1999-01-01",
    "no-client-info": "initialize without clientInfo",
    "no-initialized": "never send notifications/initialized",
    "null-id": "tools/list with id null",
    "reuse-id": "every request with id 1",
    "no-accept": "HTTP: Accept: application/json only",
    "no-session-id": "HTTP: never send Mcp-Session-Id back",
    "no-version-header": "HTTP: no MCP-Protocol-Version header",
    "no-meta": "2026-07-28: requests without _meta",
    "no-meta-client-info": "2026-07-28: _meta without clientInfo",
    "wrong-tool-arguments": "call add_numbers with strings",
    "call-invalid-tools": "call the tools whose x-mcp-header is invalid too",
    "drop-valid-tool": "call no tool in http-invalid-tool-headers",
    "ignore-defaults": "accept the elicitation form empty",
    "bad-elicit-action": "answer elicitation/create with action 'ok'",
    "bad-sampling-result": "answer sampling/createMessage without a model",
    "bad-roots": "answer roots/list with an http:// root",
    "drop-capabilities-on-retry": "2026-07-28: retry with inputResponses declaring no capability",
    "early-request": "stdio: tools/list right after initialize, before its answer",
    "no-version-retry": "2026-07-28: give up when a request is refused with -32022",
    "deref-refs": "fetch every network $ref of the tools' input schemas",
    "no-standard-headers": "HTTP, 2026-07-28: no Mcp-Method / Mcp-Name headers",
    "undeclared-capabilities": "declare no capability, answer the server's requests all the same",
    "no-param-headers": "HTTP, 2026-07-28: no Mcp-Param-* headers",
    "raw-param-headers": "HTTP, 2026-07-28: Mcp-Param-* values never Base64 (latin-1 as it is)",
    # (the scenarios sep-2322-client-request-state, sse-retry, json-schema-2020-12-preservation)
    "alter-request-state": "2026-07-28: retry with the requestState re-serialised (json.loads, dumps)",
    "invent-request-state": "2026-07-28: retry with a requestState when the server sent none",
    "reuse-retry-id": "2026-07-28: retry with the JSON-RPC id of the first request",
    "leak-request-state": "2026-07-28: the call made during a round carries its inputResponses and state",
    "retry-complete-result": "2026-07-28: retry a result without resultType with inputResponses",
    "sse-no-reconnect": "HTTP: give up when a response stream closes before its response",
    "sse-ignore-retry": "HTTP: reconnect at once, whatever the stream's retry field says",
    "sse-no-last-event-id": "HTTP: resume a stream with a GET without Last-Event-ID",
    "strip-schema-keywords": "echo the 2020-12 tool's inputSchema without $schema, additionalProperties",
    "float-progress-token": "ask for progress with the token 1.5 (neither a string nor an integer)",
    "strip-schema-vocabulary": "send the 2020-12 tool's inputSchema back without allOf and if/then/else",
}
FAULTS.update(AUTH_FAULTS)  # the auth/* scenarios' faults (faulty_auth.py)
FAULTS.update(faulty_more.FAULTS)  # (cancellation, URL elicitation, the sep-2640-client-* scenarios)
FAULTS.update(faulty_discover.FAULTS)  # (era detection: discover-fallback*)
MODERN = "2026-07-28"
# the faults of those scenarios (tests/conformance/test_client_scenarios.py checks them)
SCENARIO_FAULTS = (
    "alter-request-state",
    "invent-request-state",
    "reuse-retry-id",
    "leak-request-state",
    "retry-complete-result",
    "sse-no-reconnect",
    "sse-ignore-retry",
    "sse-no-last-event-id",
    "strip-schema-keywords",
    "strip-schema-vocabulary",
    "float-progress-token",
    *faulty_more.SCENARIO_FAULTS,
    *faulty_discover.SCENARIO_FAULTS,
)
MORE_SCENARIOS = (
    "sep-2322-client-request-state",
    "sse-retry",
    "json-schema-2020-12-preservation",
    "http-standard-headers",
    "progress",
)
TIMEOUT = 10.0
TOKEN = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
Message = dict[str, Any]


def valid_headers(tool: dict[str, Any]) -> bool:
    """Whether the tool's x-mcp-header declarations are valid: each a non-empty HTTP token on a
    string, integer or boolean parameter, no two the same ignoring case."""
    schema = tool.get("inputSchema") or {}
    seen: set[str] = set()
    for spec in (schema.get("properties") or {}).values():
        if not isinstance(spec, dict) or "x-mcp-header" not in spec:
            continue
        name = spec["x-mcp-header"]
        if not isinstance(name, str) or not name or not set(name) <= TOKEN or name.lower() in seen:
            return False
        if spec.get("type") not in ("string", "integer", "boolean"):  # (not on number: the official scenario)
            return False
        seen.add(name.lower())
    return True


class Transport:
    on_notification: Callable[[Message], None] | None = None  # the server's notifications go there

    def request(self, message: Message, answer: Callable[[Message], Message]) -> Message:
        raise NotImplementedError

    def notify(self, message: Message) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class Http(Transport):
    def __init__(self, url: str, client: FaultyClient) -> None:
        self.url, self.owner = url, client
        self.http = httpx.Client(timeout=TIMEOUT)
        self.session: str | None = None
        self.version_header: str | None = None
        self.last_event_id: str | None = None
        self.retry_ms = 0

    def _headers(self, message: Message) -> dict[str, Any]:
        faults = self.owner.faults
        headers: dict[str, Any] = {"Content-Type": "application/json"}
        headers["Accept"] = (
            "application/json" if "no-accept" in faults else "application/json, text/event-stream"
        )
        if self.session and "no-session-id" not in faults:
            headers["Mcp-Session-Id"] = self.session
        if self.version_header and "no-version-header" not in faults:
            headers["MCP-Protocol-Version"] = self.version_header
        if self.owner.auth is not None:
            headers.update(self.owner.auth.headers())
        if self.owner.modern and "no-standard-headers" not in faults and message:
            headers["Mcp-Method"] = str(message.get("method", ""))
            name = (message.get("params") or {}).get("name") or (message.get("params") or {}).get("uri")
            if isinstance(name, str):
                headers["Mcp-Name"] = name
            for header, value in self.owner.param_headers(message).items():
                headers[header] = value
        return headers

    def _post(self, message: Message) -> httpx.Response:
        url = self.owner.auth.target(self.url) if self.owner.auth is not None else self.url
        return self.http.post(url, content=json.dumps(message), headers=self._headers(message))

    def notify(self, message: Message) -> None:
        response, auth = self._post(message), self.owner.auth
        challenge = response.headers.get("www-authenticate", "")
        if (
            response.status_code in (401, 403)
            and auth is not None
            and auth.challenged(self.url, response.status_code, challenge)
        ):
            self._post(message)

    def request(self, message: Message, answer: Callable[[Message], Message]) -> Message:
        url = self.owner.auth.target(self.url) if self.owner.auth is not None else self.url
        with self.http.stream(
            "POST", url, content=json.dumps(message), headers=self._headers(message)
        ) as response:
            auth = self.owner.auth
            if response.status_code in (401, 403) and auth is not None:
                response.read()
                if auth.challenged(
                    self.url, response.status_code, response.headers.get("www-authenticate", "")
                ):
                    return self.request(message, answer)
            if message.get("method") == "initialize":
                self.session = response.headers.get("mcp-session-id")
            kind = response.headers.get("content-type", "").split(";")[0].strip()
            if kind != "text/event-stream":
                response.read()
                return (
                    json.loads(response.content)
                    if response.content
                    else {"error": {"status": response.status_code}}
                )
            found = self._read_sse(response, message, answer)
        if found is not None:
            return found
        return self._resume(message, answer)

    def _read_sse(
        self, response: httpx.Response, message: Message, answer: Callable[[Message], Message]
    ) -> Message | None:
        data: list[str] = []
        for line in response.iter_lines():
            if line.startswith("id:"):
                self.last_event_id = line[3:].strip()
            elif line.startswith("retry:") and line[6:].strip().isdigit():
                self.retry_ms = int(line[6:].strip())
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line and data:
                text, data = "\n".join(data), []
                if not text.strip():  # the stream's priming event
                    continue
                incoming = json.loads(text)
                if "method" in incoming and "id" in incoming:  # a server request: answer it aside
                    reply = {"jsonrpc": "2.0", "id": incoming["id"], "result": answer(incoming)}
                    threading.Thread(target=self._post, args=(reply,), daemon=True).start()
                elif "method" in incoming and self.on_notification is not None:
                    self.on_notification(incoming)
                elif "method" not in incoming and incoming.get("id") == message.get("id"):
                    return dict(incoming)
        return None

    def _resume(self, message: Message, answer: Callable[[Message], Message]) -> Message:
        """The stream closed before its answer: after ``retry`` ms, GET it back (Last-Event-ID)."""
        faults = self.owner.faults
        if self.last_event_id is None or "sse-no-reconnect" in faults:
            raise ConnectionError("the response stream ended without the answer")
        if self.retry_ms and "sse-ignore-retry" not in faults:
            time.sleep(self.retry_ms / 1000)
        headers = {k: v for k, v in self._headers({}).items() if k != "Content-Type"}
        headers["Accept"] = "text/event-stream"
        if "sse-no-last-event-id" not in faults:
            headers["Last-Event-ID"] = self.last_event_id
        with self.http.stream("GET", self.url, headers=headers) as response:
            found = self._read_sse(response, message, answer)
        if found is None:
            raise ConnectionError("the resumed stream ended without the answer")
        return found

    def close(self) -> None:
        self.http.close()


class Stdio(Transport):
    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.then: Message | None = None  # a message written right after the next request

    def _write(self, message: Message) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def notify(self, message: Message) -> None:
        self._write(message)

    def request(self, message: Message, answer: Callable[[Message], Message]) -> Message:
        self._write(message)
        if self.then is not None:
            self._write(self.then)
            self.then = None
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            incoming = json.loads(line)
            if "method" in incoming and "id" in incoming:
                self._write({"jsonrpc": "2.0", "id": incoming["id"], "result": answer(incoming)})
            elif "method" in incoming and self.on_notification is not None:
                self.on_notification(incoming)
            elif "method" not in incoming and incoming.get("id") == message.get("id"):
                return dict(incoming)
        raise ConnectionError("the server closed its stdout")

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class FaultyClient:
    def __init__(self, faults: set[str], scenario: str, revision: str) -> None:
        self.faults, self.scenario, self.revision = faults, scenario, revision
        self.modern = revision == MODERN
        self.next_id = 0
        self.schemas: dict[str, dict[str, Any]] = {}  # tool -> inputSchema, from tools/list
        self.meanwhile: Callable[[Any, Any], None] | None = None  # called while an MRTR round is open
        self.transport: Transport
        self.auth: Authorizer | None = None
        self.capabilities: dict[str, Any] = (
            {}
            if "undeclared-capabilities" in faults
            else {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
        )
        if "url-undeclared" in faults:
            self.capabilities["elicitation"] = {"form": {}}
        self.elicitations: set[Any] = set()  # the URL-mode elicitation ids the server sent

    # -- messages -------------------------------------------------------------------------------
    def _id(self) -> int:
        self.next_id += 1
        return 1 if "reuse-id" in self.faults else self.next_id

    def _meta(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "io.modelcontextprotocol/protocolVersion": self.revision,
            "io.modelcontextprotocol/clientCapabilities": self.capabilities
            if capabilities is None
            else capabilities,
        }
        if "no-meta-client-info" not in self.faults:
            meta["io.modelcontextprotocol/clientInfo"] = {"name": "faulty-client", "version": "0.1"}
        return meta

    def request(self, method: str, params: dict[str, Any] | None = None, **extra: Any) -> Any:
        params = dict(params or {})
        if self.modern and "no-meta" not in self.faults:
            params["_meta"] = {**(params.get("_meta") or {}), **self._meta(extra.get("capabilities"))}
        message: Message = {"jsonrpc": "2.0", "id": extra.get("id") or self._id(), "method": method}
        if params:
            message["params"] = params
        if method == "tools/list" and "null-id" in self.faults:
            message["id"] = None
        answer = self.transport.request(message, self.answer)
        error = answer.get("error")
        if self.modern and isinstance(error, dict) and error.get("code") == -32022:
            supported = (error.get("data") or {}).get("supported") or []
            if "no-version-retry" in self.faults or self.revision not in supported:
                raise ConnectionError(f"the server does not support {self.revision}: {error}")
            return self.request(method, {k: v for k, v in params.items() if k != "_meta"}, **extra)
        result = answer.get("result")
        if self.modern and isinstance(result, dict) and result.get("resultType") == "input_required":
            responses = {
                key: self.answer(request) for key, request in (result.get("inputRequests") or {}).items()
            }
            if self.meanwhile is not None:  # a call made while this round is open
                meanwhile, self.meanwhile = self.meanwhile, None
                meanwhile(responses, result.get("requestState"))
            retry = {**(params or {}), "inputResponses": responses}
            retry.pop("_meta", None)
            if "requestState" in result:
                retry["requestState"] = self.state(result["requestState"])
            elif "invent-request-state" in self.faults:
                retry["requestState"] = "invented"
            dropped: dict[str, Any] | None = {} if "drop-capabilities-on-retry" in self.faults else None
            reuse = message["id"] if "reuse-retry-id" in self.faults else None
            return self.request(method, retry, capabilities=dropped, id=reuse)
        if (
            "retry-complete-result" in self.faults
            and isinstance(result, dict)
            and "resultType" not in result
            and "inputResponses" not in params
        ):
            retry = {k: v for k, v in params.items() if k != "_meta"}
            return self.request(method, {**retry, "inputResponses": {}})
        return result

    def state(self, state: Any) -> Any:
        """The requestState to echo (re-serialised, with the fault ``alter-request-state``)."""
        if "alter-request-state" not in self.faults or not isinstance(state, str):
            return state
        try:
            return json.dumps(json.loads(state))
        except ValueError:
            return state + " "

    def param_headers(self, message: Message) -> dict[str, Any]:
        """Mcp-Param-* for the x-mcp-header parameters of the tool called (from its listed schema)."""
        params = message.get("params") or {}
        if message.get("method") != "tools/call" or "no-param-headers" in self.faults:
            return {}
        schema = self.schemas.get(str(params.get("name"))) or {}
        headers = {}
        for name, spec in (schema.get("properties") or {}).items():
            value = (params.get("arguments") or {}).get(name)
            if not isinstance(spec, dict) or "x-mcp-header" not in spec or value is None:
                continue
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            plain = text.isascii() and text.isprintable() and text == text.strip()
            if not plain and "raw-param-headers" not in self.faults:
                text = "=?base64?" + base64.b64encode(text.encode()).decode() + "?="
            # (raw: latin-1 bytes, which httpx sends as they are)
            raw = "raw-param-headers" in self.faults and not plain
            headers[f"Mcp-Param-{spec['x-mcp-header']}"] = text.encode("latin-1") if raw else text
        return headers

    # -- answering the server -------------------------------------------------------------------
    def answer(self, request: Message) -> Message:
        method, params = request.get("method"), request.get("params") or {}
        if method == "elicitation/create" and params.get("mode") == "url":
            return faulty_more.url_answer(self, params)
        if method == "elicitation/create":
            if "bad-elicit-action" in self.faults:
                return {"action": "ok"}
            properties = (params.get("requestedSchema") or {}).get("properties") or {}
            content = (
                {}
                if "ignore-defaults" in self.faults
                else {name: spec["default"] for name, spec in properties.items() if "default" in spec}
            )
            return {"action": "accept", "content": content}
        if method == "sampling/createMessage":
            result = {
                "role": "assistant",
                "content": {"type": "text", "text": "Paris"},
                "model": "faulty-model",
            }
            if "bad-sampling-result" in self.faults:
                del result["model"]
            return result
        if method == "roots/list":
            uri = "http://example.com/root" if "bad-roots" in self.faults else "file:///tmp/root"
            return {"roots": [{"uri": uri, "name": "root"}]}
        return {}

    # -- the scenario ---------------------------------------------------------------------------
    def connect(self) -> None:
        if self.modern and self.scenario in faulty_discover.SCENARIOS:  # era detection
            faulty_discover.connect(self)
            return
        if self.modern:
            self.transport_version(self.revision)
            return
        if "no-initialize" in self.faults:
            return
        params: dict[str, Any] = {
            "protocolVersion": "1999-01-01" if "bad-version" in self.faults else self.revision,
            "capabilities": self.capabilities,
        }
        if "no-client-info" not in self.faults:
            params["clientInfo"] = {"name": "faulty-client", "version": "0.1"}
        if "early-request" in self.faults and isinstance(self.transport, Stdio):
            self.transport.then = {"jsonrpc": "2.0", "id": 1000, "method": "tools/list"}
        result = self.request("initialize", params) or {}
        self.transport_version(result.get("protocolVersion"))
        if "no-initialized" not in self.faults:
            self.transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def transport_version(self, version: str | None) -> None:
        if isinstance(self.transport, Http) and version and version >= "2025-06-18":
            self.transport.version_header = version

    def play(self) -> None:
        self.connect()
        tools = (self.request("tools/list") or {}).get("tools") or []
        self.schemas = {str(t.get("name")): t.get("inputSchema") or {} for t in tools}
        if "deref-refs" in self.faults:
            for ref in re.findall(r'"\$ref": "(https?://[^"]+)"', json.dumps(tools)):
                httpx.get(ref, timeout=TIMEOUT)
        if self.scenario in MORE_SCENARIOS:
            self.play_more(tools)
            return
        if self.scenario in faulty_more.SCENARIOS:
            faulty_more.play(self)
            return
        if self.scenario in faulty_discover.PLAYED:
            faulty_discover.play(self)
            return
        kept = [
            tool.get("name") for tool in tools if "call-invalid-tools" in self.faults or valid_headers(tool)
        ]
        calls: dict[str, list[tuple[str, dict[str, Any]]]] = {
            "tools_call": [
                (
                    "add_numbers",
                    {"a": "2", "b": "3"} if "wrong-tool-arguments" in self.faults else {"a": 2, "b": 3},
                )
            ],
            "elicitation-sep1034-client-defaults": [("test_client_elicitation_defaults", {})],
            "sampling": [("test_sampling", {})],
            "roots": [("test_roots", {})],
        }
        if self.scenario == "http-invalid-tool-headers":
            if "drop-valid-tool" in self.faults:
                return
            calls[self.scenario] = [
                (str(n), {"region": "us-west1"} if n == "valid_tool" else {}) for n in kept
            ]
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        if self.scenario == "http-custom-headers":
            calls[self.scenario] = [
                (c["name"], c.get("arguments") or {}) for c in context.get("toolCalls", [])
            ]
        if self.scenario.startswith("auth/") and "test-tool" in self.schemas:
            calls[self.scenario] = [("test-tool", {})]
        for name, arguments in calls.get(self.scenario, []):
            self.request("tools/call", {"name": name, "arguments": arguments})

    def play_more(self, tools: list[dict[str, Any]]) -> None:
        """The scenarios sep-2322-client-request-state, sse-retry, json-schema-2020-12-preservation
        and http-standard-headers."""
        if self.scenario == "sep-2322-client-request-state":

            def unrelated(responses: Any, state: Any) -> None:
                params: dict[str, Any] = {"name": "test_mrtr_unrelated", "arguments": {}}
                if "leak-request-state" in self.faults:
                    params["inputResponses"] = responses
                    if state is not None:
                        params["requestState"] = state
                self.request("tools/call", params)

            self.meanwhile = unrelated
            for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"):
                self.request("tools/call", {"name": name, "arguments": {}})
        elif self.scenario == "sse-retry":
            self.request("tools/call", {"name": "test_reconnection", "arguments": {}})
        elif self.scenario == "json-schema-2020-12-preservation":
            schema = dict(self.schemas.get("json_schema_2020_12_tool") or {})
            drop: tuple[str, ...] = ()
            if "strip-schema-keywords" in self.faults:
                drop += ("$schema", "additionalProperties")
            if "strip-schema-vocabulary" in self.faults:
                drop += ("allOf", "if", "then", "else")
            schema = {k: v for k, v in schema.items() if k not in drop}
            self.request("tools/call", {"name": "json_schema_echo", "arguments": {"schema": schema}})
        elif self.scenario == "progress":
            token = 1.5 if "float-progress-token" in self.faults else "faulty-progress-1"
            params = {"name": "test_progress", "arguments": {}, "_meta": {"progressToken": token}}
            self.request("tools/call", params)
        elif self.scenario == "http-standard-headers":
            for tool in tools:
                self.request("tools/call", {"name": tool.get("name"), "arguments": {}})
            for resource in (self.request("resources/list") or {}).get("resources") or []:
                self.request("resources/read", {"uri": resource.get("uri")})
            for prompt in (self.request("prompts/list") or {}).get("prompts") or []:
                self.request("prompts/get", {"name": prompt.get("name")})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="faulty_client")
    parser.add_argument("--fault", action="append", default=[], choices=sorted(FAULTS))
    parser.add_argument("url", nargs="?")
    args = parser.parse_args(argv)
    faults = set(args.fault)
    if "do-nothing" in faults:
        return 0
    client = FaultyClient(
        faults,
        os.environ.get("MCP_CONFORMANCE_SCENARIO", ""),
        os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25"),
    )
    command = os.environ.get("MCP_CONFORMANCE_SERVER_COMMAND")
    if client.scenario.startswith("auth/"):
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        client.auth = Authorizer(faults, client.scenario, context, TIMEOUT)
    client.transport = (
        Stdio(json.loads(command)) if command and not args.url else Http(args.url or "", client)
    )
    client.transport.on_notification = lambda message: faulty_more.notified(client, message)
    try:
        client.play()
    except (httpx.HTTPError, ConnectionError, ValueError, OSError) as exc:
        print(f"faulty_client: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        client.transport.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
