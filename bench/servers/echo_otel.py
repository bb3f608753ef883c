"""The echo benchmark server with OpenTelemetry on (``jsonrpc_mcp.telemetry``).

``MCPBENCH_OTEL=api``: instrumented on the bare OpenTelemetry API (no SDK: its no-op tracer and
meter), what telemetry costs when nothing collects it. ``MCPBENCH_OTEL=sdk``: the SDK with an
in-memory span exporter (every span kept) and an in-memory metric reader, what it costs when
everything is recorded. (Telemetry off is ``echo.py`` itself: ``ours``.)
"""

from __future__ import annotations

import os
from pathlib import Path

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp.telemetry import instrument

server = load_target(str(Path(__file__).with_name("echo.py")))  # the same echo server as ours

if os.environ.get("MCPBENCH_OTEL") == "sdk":
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    instrument(server, tracer_provider=tracer_provider, meter_provider=meter_provider)
else:
    instrument(server)

if __name__ == "__main__":
    server.run()
