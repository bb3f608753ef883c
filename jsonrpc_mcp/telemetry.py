"""OpenTelemetry for MCP servers, by the semantic conventions for MCP; and a JSON access log.

Theory of operation
-------------------
Telemetry is a middleware (:class:`Telemetry`) on the server's one request pipeline, so every
request of every transport and era passes it. For each request it starts a SERVER span named
``{mcp.method.name} {target}`` (the target being the tool or prompt name when there is one) with
the attributes the conventions give (``mcp.method.name``, ``jsonrpc.request.id``,
``gen_ai.tool.name`` and ``gen_ai.operation.name = execute_tool``, ``gen_ai.prompt.name``,
``mcp.resource.uri``, ``mcp.protocol.version``, ``mcp.session.id`` in the handshake era,
``network.transport``: ``pipe`` for stdio, ``tcp`` for HTTP), and records its duration in the
``mcp.server.operation.duration`` histogram. A JSON-RPC error sets ``error.type`` and
``rpc.response.status_code`` to its code and the span status to ERROR; a tool result with
``isError`` sets ``error.type = tool_error``. Handshake sessions are timed from ``attach`` to
``detach`` into ``mcp.server.session.duration``.

The parent of the span is the trace context the client put in ``params._meta`` (``traceparent``,
``tracestate``, ``baggage``; reserved and normative in 2026-07-28), extracted with the globally
configured propagator; the context of the HTTP request that carried it (its ``traceparent``
headers) and the ambient one (an HTTP server span, if the ASGI app is instrumented) are linked.
A request carrying none in ``_meta`` falls back to the HTTP request's headers, then to the
ambient context.

Only the OpenTelemetry *API* is used (``pip install jsonrpc-mcp[otel]``), imported when telemetry
is switched on. ``Server(telemetry=None)`` (the default) switches it on when the server starts
serving, and only if an application has already configured OpenTelemetry (its ``opentelemetry``
modules are imported and a real tracer or meter provider is installed, as ``opentelemetry-instrument``
or the SDK in code does): a server nobody observes imports nothing and pays nothing.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server._pipeline import Call, CallNext
    from .server._server import Server
    from .server._session import ServerSession

__all__ = [
    "AccessLog",
    "ClientTelemetry",
    "JsonLogFormatter",
    "Telemetry",
    "configured",
    "instrument",
    "use_json_logs",
]

_TRANSPORT = {"stdio": "pipe", "http": "tcp", "sse": "tcp"}
_PROPAGATED = ("traceparent", "tracestate", "baggage")
# seconds: the bucket boundaries the MCP conventions advise for both duration histograms
_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
_SCOPE = "jsonrpc_mcp"


def configured() -> bool:
    """Whether an application has set up OpenTelemetry in this process (a real tracer or meter
    provider is installed). Never imports OpenTelemetry itself."""
    trace = sys.modules.get("opentelemetry.trace")
    metrics = sys.modules.get("opentelemetry.metrics")
    if trace is None and metrics is None:
        return False
    default = ("ProxyTracerProvider", "NoOpTracerProvider", "_ProxyMeterProvider", "NoOpMeterProvider")
    providers = []
    if trace is not None:
        providers.append(trace.get_tracer_provider())
    if metrics is not None:
        providers.append(metrics.get_meter_provider())
    return any(type(p).__name__ not in default for p in providers)


def _durations(metrics: Any, meter_provider: Any, side: str, observer: str) -> tuple[Any, Any]:
    """The two histograms of one side: ``mcp.{side}.operation.duration`` and ``.session.duration``."""
    meter = metrics.get_meter(_SCOPE, _version(), meter_provider=meter_provider)
    operations = meter.create_histogram(
        f"mcp.{side}.operation.duration",
        unit="s",
        description=f"MCP request duration as observed on the {observer}",
        explicit_bucket_boundaries_advisory=_BUCKETS,
    )
    sessions = meter.create_histogram(
        f"mcp.{side}.session.duration",
        unit="s",
        description=f"The duration of the MCP session as observed on the MCP {side}",
        explicit_bucket_boundaries_advisory=_BUCKETS,
    )
    return operations, sessions


def _version() -> str:
    from . import __version__

    return __version__


class Telemetry:
    """The middleware that makes spans and metrics (see the module docs).

    ``record_arguments`` / ``record_results`` opt into ``gen_ai.tool.call.arguments`` and
    ``gen_ai.tool.call.result`` (they may hold sensitive data); ``resource_uri_in_name`` opts into
    the resource URI as the span name's target (high cardinality). ``tracer_provider`` and
    ``meter_provider`` default to the global ones.
    """

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        record_arguments: bool = False,
        record_results: bool = False,
        resource_uri_in_name: bool = False,
    ) -> None:
        from opentelemetry import metrics, propagate, trace

        self._trace = trace
        self._propagate = propagate
        self.tracer = trace.get_tracer(_SCOPE, _version(), tracer_provider=tracer_provider)
        self.operations, self.sessions = _durations(metrics, meter_provider, "server", "receiver")
        self.record_arguments = record_arguments
        self.record_results = record_results
        self.resource_uri_in_name = resource_uri_in_name
        self._started: dict[int, float] = {}  # id(session) -> when it was attached

    # -- requests -----------------------------------------------------------------------------------
    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        attributes, name = self._describe(call)
        parent, links = self._parent(call)
        started = time.perf_counter()
        error: str | None = None
        with self.tracer.start_as_current_span(
            name,
            context=parent,
            kind=self._trace.SpanKind.SERVER,
            attributes=attributes,
            links=links,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await call_next(call)
            except BaseException as exc:
                error = _failure(span, self._trace, exc)
                raise
            else:
                if isinstance(result, dict) and result.get("isError") is True:
                    error = "tool_error"
                    span.set_attribute("error.type", error)
                    span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, "tool_error"))
                elif self.record_results and call.method == "tools/call" and isinstance(result, dict):
                    span.set_attribute("gen_ai.tool.call.result", _json(result))
                return result
            finally:
                metric = {k: v for k, v in attributes.items() if k not in _SPAN_ONLY}
                if error is not None:
                    metric["error.type"] = error
                    if error.lstrip("-").isdigit():
                        metric["rpc.response.status_code"] = error
                self.operations.record(time.perf_counter() - started, metric)

    def _parent(self, call: Call) -> tuple[Any, list[Any] | None]:
        """The span's parent and links: the context in ``params._meta`` (the HTTP request's own
        context, and the ambient one, linked); else the HTTP request's ``traceparent`` headers;
        else the ambient context (None)."""
        from .server._pipeline import current_http_headers  # (the server's side only: not at import)

        meta = call.params.get("_meta")
        carrier = {k: meta[k] for k in _PROPAGATED if isinstance(meta, dict) and isinstance(meta.get(k), str)}
        headers = current_http_headers.get()
        transport: dict[str, str] = {}
        for name, value in headers or ():
            key = name.decode("latin-1").lower()
            if key in _PROPAGATED:
                transport[key] = value.decode("latin-1")
        if not carrier:
            return (self._propagate.extract(transport) if transport else None), None
        links = []
        for context in (self._trace.get_current_span().get_span_context(), self._remote(transport)):
            if context is not None and context.is_valid:
                links.append(self._trace.Link(context))
        return self._propagate.extract(carrier), links or None

    def _remote(self, carrier: dict[str, str]) -> Any:
        if not carrier:
            return None
        return self._trace.get_current_span(self._propagate.extract(carrier)).get_span_context()

    def _describe(self, call: Call) -> tuple[dict[str, Any], str]:
        attributes: dict[str, Any] = {"mcp.method.name": call.method}
        target = None
        params = call.params
        if call.request_id is not None:
            attributes["jsonrpc.request.id"] = str(call.request_id)
        if call.revision is not None:
            attributes["mcp.protocol.version"] = call.revision.version
        transport = _TRANSPORT.get(call.transport)
        if transport is not None:
            attributes["network.transport"] = transport
        if call.method == "tools/call" and isinstance(params.get("name"), str):
            target = params["name"]
            attributes["gen_ai.tool.name"] = target
            attributes["gen_ai.operation.name"] = "execute_tool"
            if self.record_arguments and isinstance(params.get("arguments"), dict):
                attributes["gen_ai.tool.call.arguments"] = _json(params["arguments"])
        elif call.method == "prompts/get" and isinstance(params.get("name"), str):
            target = params["name"]
            attributes["gen_ai.prompt.name"] = target
        elif isinstance(params.get("uri"), str) and call.method.startswith("resources/"):
            attributes["mcp.resource.uri"] = params["uri"]
            if self.resource_uri_in_name:
                target = params["uri"]
        session_id = getattr(call.session, "session_id", None) if call.session is not None else None
        if session_id:
            attributes["mcp.session.id"] = session_id
        return attributes, f"{call.method} {target}" if target else call.method

    # -- sessions -----------------------------------------------------------------------------------
    def session_started(self, session: ServerSession) -> None:
        """Note when ``session`` started (for the session duration metric)."""
        self._started[id(session)] = time.perf_counter()

    def session_ended(self, session: ServerSession) -> None:
        """Record the session's duration (only for a session that negotiated a revision)."""
        started = self._started.pop(id(session), None)
        if started is None or session.revision is None:  # never opened: not an MCP session
            return
        attributes: dict[str, Any] = {"mcp.protocol.version": session.revision.version}
        transport = _TRANSPORT.get(session.transport)
        if transport is not None:
            attributes["network.transport"] = transport
        self.sessions.record(time.perf_counter() - started, attributes)


_SPAN_ONLY = frozenset({"jsonrpc.request.id", "mcp.session.id", "gen_ai.tool.call.arguments"})


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def instrument(server: Server, **options: Any) -> Telemetry:
    """Switch telemetry on for ``server`` (options: see :class:`Telemetry`); returns the middleware."""
    telemetry = Telemetry(**options)
    server.add_middleware(telemetry)
    server.telemetry = telemetry  # it also times the server's sessions (see Serving.attach/detach)
    return telemetry


# -- logs ---------------------------------------------------------------------------------------------
class JsonLogFormatter(logging.Formatter):
    """One JSON object per log record: ``ts``, ``level``, ``logger``, ``message``, and the access
    log's fields when the record carries them."""

    FIELDS = ("request_id", "method", "revision", "session", "transport", "duration_ms", "outcome")

    def format(self, record: logging.LogRecord) -> str:
        """One JSON object on one line: time, level, logger, message and the known extra fields."""
        entry: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in self.FIELDS:
            if hasattr(record, name):
                entry[name] = getattr(record, name)
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info).splitlines()[-1]
        return json.dumps(entry, ensure_ascii=False, default=str)


class AccessLog:
    """A middleware writing one INFO record per request to ``jsonrpc_mcp.access``: its id, method,
    revision, session, transport, duration and outcome (``ok``, ``tool_error`` or the error code)."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.logger = logger or logging.getLogger("jsonrpc_mcp.access")

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        started = time.perf_counter()
        outcome = "ok"
        try:
            result = await call_next(call)
            if isinstance(result, dict) and result.get("isError") is True:
                outcome = "tool_error"
            return result
        except BaseException as exc:
            code = getattr(exc, "code", None)
            outcome = str(code) if isinstance(code, int) else type(exc).__qualname__
            raise
        finally:
            duration = round((time.perf_counter() - started) * 1000, 3)
            self.logger.info(
                "%s %s",
                call.method,
                outcome,
                extra={
                    "request_id": call.request_id,
                    "method": call.method,
                    "revision": call.revision.version if call.revision is not None else None,
                    "session": getattr(call.session, "session_id", None)
                    if call.session is not None
                    else None,
                    "transport": call.transport,
                    "duration_ms": duration,
                    "outcome": outcome,
                },
            )


LOG_FORMAT_ENV = "JSONRPC_MCP_LOG_FORMAT"  # "json": what ``serve --log-format json`` sets for its workers


def use_json_logs(server: Server) -> None:
    """``serve --log-format json``: every record on stderr as one JSON object (the root logger's
    handlers get :class:`JsonLogFormatter`), and one access record per request (:class:`AccessLog`,
    at INFO whatever the level of the rest)."""
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler(sys.stderr))
    for handler in root.handlers:
        handler.setFormatter(JsonLogFormatter())
    access = logging.getLogger("jsonrpc_mcp.access")
    access.setLevel(logging.INFO)
    if root.level > logging.INFO:  # the root's handlers may filter by level too: let access records by
        for handler in root.handlers:
            handler.setLevel(logging.NOTSET)
        root.setLevel(logging.INFO)
        for name in ("jsonrpc_mcp", "uvicorn", "uvicorn.error"):
            logging.getLogger(name).setLevel(logging.WARNING)
    server.add_middleware(AccessLog(access))


# -- the client's side ------------------------------------------------------------------------------
class ClientTelemetry:
    """CLIENT spans and the two client metrics for :class:`~jsonrpc_mcp.client.Client`, with the
    trace context injected into each request's ``params._meta`` (``traceparent``, ``tracestate``,
    ``baggage``) so that the server's span is a child of the client's."""

    def __init__(self, *, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        from opentelemetry import metrics, propagate, trace

        self._trace = trace
        self._propagate = propagate
        self.tracer = trace.get_tracer(_SCOPE, _version(), tracer_provider=tracer_provider)
        self.operations, self.sessions = _durations(metrics, meter_provider, "client", "sender")

    def describe(
        self, method: str, params: Any, version: str | None, transport: str | None
    ) -> dict[str, Any]:
        """The span attributes of an outgoing request (method, protocol version, transport, and the
        tool, prompt or resource it names)."""
        attributes: dict[str, Any] = {"mcp.method.name": method}
        if version is not None:
            attributes["mcp.protocol.version"] = version
        if transport in _TRANSPORT:
            attributes["network.transport"] = _TRANSPORT[transport]
        if isinstance(params, dict):
            if method == "tools/call" and isinstance(params.get("name"), str):
                attributes["gen_ai.tool.name"] = params["name"]
                attributes["gen_ai.operation.name"] = "execute_tool"
            elif method == "prompts/get" and isinstance(params.get("name"), str):
                attributes["gen_ai.prompt.name"] = params["name"]
            elif method.startswith("resources/") and isinstance(params.get("uri"), str):
                attributes["mcp.resource.uri"] = params["uri"]
        return attributes

    async def request(self, client: Any, method: str, params: Any, send: Any) -> Any:
        """``await send(params)`` inside a CLIENT span, ``params._meta`` carrying its context; the
        duration goes to ``mcp.client.operation.duration``. ``client``: the Client sending it."""
        attributes = self.describe(method, params, client.protocol_version, client.transport)
        session = getattr(getattr(client, "_stream", None), "session_id", None)
        session_id = session if isinstance(session, str) else None
        target = attributes.get("gen_ai.tool.name") or attributes.get("gen_ai.prompt.name")
        name = f"{method} {target}" if target else method
        span_attributes = dict(attributes, **({"mcp.session.id": session_id} if session_id else {}))
        error: str | None = None
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            name,
            kind=self._trace.SpanKind.CLIENT,
            attributes=span_attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            carrier: dict[str, str] = {}
            self._propagate.inject(carrier)
            if carrier and (params is None or isinstance(params, dict)):
                params = dict(params or {})
                meta = params.get("_meta")
                params["_meta"] = {**carrier, **meta} if isinstance(meta, dict) else carrier
            try:
                result = await send(params)
                if isinstance(result, dict) and result.get("isError") is True:
                    error = "tool_error"
                    span.set_attribute("error.type", error)
                    span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, "tool_error"))
                return result
            except BaseException as exc:
                error = _failure(span, self._trace, exc)
                raise
            finally:
                metric = dict(attributes)
                if error is not None:
                    metric["error.type"] = error
                self.operations.record(time.perf_counter() - started, metric)

    def session_ended(self, client: Any, seconds: float) -> None:
        """Record a client's session (from entering it to leaving it) in ``mcp.client.session.duration``."""
        attributes: dict[str, Any] = {}
        if client.protocol_version is not None:
            attributes["mcp.protocol.version"] = client.protocol_version
        if client.transport in _TRANSPORT:
            attributes["network.transport"] = _TRANSPORT[client.transport]
        self.sessions.record(seconds, attributes)


def _failure(span: Any, trace: Any, exc: BaseException) -> str:
    """Mark ``span`` failed by ``exc``; the ``error.type`` (the JSON-RPC code, or the class)."""
    code = getattr(exc, "code", None)
    if isinstance(code, int) and not isinstance(code, bool):
        kind = str(code)
        span.set_attribute("rpc.response.status_code", kind)
    else:
        kind = type(exc).__qualname__
    span.set_attribute("error.type", kind)
    span.set_status(trace.Status(trace.StatusCode.ERROR, getattr(exc, "message", None) or str(exc) or kind))
    return kind


def client_telemetry(wanted: bool | None) -> ClientTelemetry | None:
    """``Client(telemetry=...)``: on if asked, off if refused, and (None) on if the application has
    configured OpenTelemetry (see :func:`configured`)."""
    if wanted is False or (wanted is None and not configured()):
        return None
    return ClientTelemetry()
