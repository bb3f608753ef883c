"""Spans and metrics by the OpenTelemetry semantic conventions for MCP, read back from the SDK's
in-memory exporters: in memory, over real HTTP on 127.0.0.1, in both eras."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from tests import timeouts

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from jsonrpc_mcp import Client, JsonRpcError, Server, ToolError
from jsonrpc_mcp.telemetry import instrument
from jsonrpc_mcp.testing import connect

from ..http.support import serving

pytestmark = pytest.mark.anyio
TIMEOUT = timeouts.STEP
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class Observed:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.metrics = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.metrics])

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def histogram(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        points = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        assert metric.unit == "s"
                        points += list(metric.data.data_points)
        return points


@pytest.fixture
def observed() -> Iterator[Observed]:
    seen = Observed()
    yield seen
    seen.tracer_provider.shutdown()
    seen.meter_provider.shutdown()


def make_server(observed: Observed, **options: Any) -> Server:
    server = Server("observed", "1.0.0")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool
    def broken() -> str:
        """Always fails."""
        raise ToolError("it broke")

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    instrument(
        server, tracer_provider=observed.tracer_provider, meter_provider=observed.meter_provider, **options
    )
    return server


def _by_name(spans: list[ReadableSpan]) -> dict[str, ReadableSpan]:
    return {span.name: span for span in spans}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_tool_call_is_a_server_span_named_and_attributed_by_the_conventions(
    observed: Observed, mode: str
) -> None:
    server = make_server(observed)
    with anyio.fail_after(TIMEOUT):
        async with connect(server, mode=mode) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
    span = _by_name(observed.finished())["tools/call add"]
    assert span.kind is SpanKind.SERVER
    attributes = dict(span.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "add" and attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["mcp.protocol.version"] == ("2026-07-28" if mode != "legacy" else "2025-11-25")
    assert isinstance(attributes["jsonrpc.request.id"], str)
    assert "error.type" not in attributes and span.status.status_code is not StatusCode.ERROR
    assert "mcp.session.id" not in attributes  # no session id in memory (nor ever in 2026-07-28)
    assert "gen_ai.tool.call.arguments" not in attributes  # opt-in only
    (point,) = [
        p for p in observed.histogram("mcp.server.operation.duration") if p.attributes.get("gen_ai.tool.name")
    ]
    assert point.count == 1 and point.sum >= 0
    assert "jsonrpc.request.id" not in point.attributes  # a metric attribute of low cardinality only


async def test_errors_set_error_type_the_status_and_the_code(observed: Observed) -> None:
    server = make_server(observed)
    with anyio.fail_after(TIMEOUT):
        async with connect(server) as client:
            await client.call_tool("broken", {})
            with pytest.raises(JsonRpcError):
                await client.request("prompts/get", {"name": "nope"})
            await client.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    spans = _by_name(observed.finished())
    tool = spans["tools/call broken"]
    assert tool.attributes is not None and tool.attributes["error.type"] == "tool_error"
    assert tool.status.status_code is StatusCode.ERROR
    unknown = spans["prompts/get nope"]
    assert unknown.attributes is not None and unknown.attributes["error.type"] == "-32602"
    assert unknown.attributes["rpc.response.status_code"] == "-32602"
    assert unknown.status.status_code is StatusCode.ERROR and unknown.status.description
    greet = spans["prompts/get greet"]
    assert greet.attributes is not None and greet.attributes["gen_ai.prompt.name"] == "greet"
    failures = [
        p for p in observed.histogram("mcp.server.operation.duration") if "error.type" in p.attributes
    ]
    assert sorted(p.attributes["error.type"] for p in failures) == ["-32602", "tool_error"]


async def test_the_clients_trace_context_in_meta_is_the_parent(observed: Observed) -> None:
    server = make_server(observed)
    meta = {"traceparent": TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7"}
    with anyio.fail_after(TIMEOUT):
        async with connect(server) as client:
            await client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}, "_meta": meta})
    span = _by_name(observed.finished())["tools/call add"]
    assert span.parent is not None and span.parent.is_remote
    assert f"{span.context.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert f"{span.parent.span_id:016x}" == "00f067aa0ba902b7"


async def test_tool_arguments_and_results_are_recorded_only_when_opted_in(observed: Observed) -> None:
    server = make_server(observed, record_arguments=True, record_results=True)
    with anyio.fail_after(TIMEOUT):
        async with connect(server) as client:
            await client.call_tool("add", {"a": 2, "b": 3})
    attributes = dict(_by_name(observed.finished())["tools/call add"].attributes or {})
    assert attributes["gen_ai.tool.call.arguments"] == '{"a": 2, "b": 3}'
    result = attributes["gen_ai.tool.call.result"]
    # (add is annotated -> int: its outputSchema wraps the value, see docs/types.md)
    assert json.loads(str(result)) == {
        "content": [{"type": "text", "text": '{"result":5}'}],  # the JSON of the structured content
        "structuredContent": {"result": 5},
    }


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_over_http_the_transport_is_tcp_and_the_session_is_named_in_the_handshake_era(
    observed: Observed, mode: str
) -> None:
    server = make_server(observed)
    app = server.http_app()
    with anyio.fail_after(TIMEOUT):
        async with serving(app) as base, Client.http(f"{base}/mcp", mode=mode) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
    attributes = dict(_by_name(observed.finished())["tools/call add"].attributes or {})
    assert attributes["network.transport"] == "tcp"
    if mode == "legacy":
        assert isinstance(attributes.get("mcp.session.id"), str) and attributes["mcp.session.id"]
    else:
        assert "mcp.session.id" not in attributes


async def test_over_http_the_traceparent_header_is_the_fallback_and_a_link_beside_meta(
    observed: Observed,
) -> None:
    server = make_server(observed)
    app = server.http_app()
    header = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    with anyio.fail_after(TIMEOUT):
        async with (
            serving(app) as base,
            Client.http(f"{base}/mcp", headers={"traceparent": header}) as client,
        ):
            await client.call_tool("add", {"a": 1, "b": 2})  # no context in _meta: the header is the parent
            meta = {"traceparent": TRACEPARENT}
            await client.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}, "_meta": meta})
    first, second = [s for s in observed.finished() if s.name == "tools/call add"]
    assert first.parent is not None and f"{first.context.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"
    assert f"{second.context.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"  # _meta wins ...
    assert [f"{link.context.span_id:016x}" for link in second.links] == [
        "b7ad6b7169203331"
    ]  # ... HTTP linked


async def test_middleware_reads_the_http_headers_of_a_call_in_both_eras(observed: Observed) -> None:
    server = Server("headers")
    seen: list[str | None] = []

    @server.middleware
    async def record(call: Any, call_next: Any) -> Any:
        if call.method == "tools/call":
            seen.append(call.http_headers.get("x-tenant"))
        return await call_next(call)

    @server.tool
    def ping() -> str:
        """Answer."""
        return "pong"

    with anyio.fail_after(TIMEOUT):
        async with serving(server.http_app()) as base:
            for mode in ("legacy", "2026-07-28"):
                async with Client.http(f"{base}/mcp", mode=mode, headers={"X-Tenant": "acme"}) as client:
                    await client.call_tool("ping", {})
        async with connect(server) as client:
            await client.call_tool("ping", {})
    assert seen == ["acme", "acme", None]
