"""A server that configures the OpenTelemetry SDK in code, the usual way, exporting every finished
span as one JSON line to ``$SPANS_FILE``; ``$TELEMETRY=off`` passes ``telemetry=False``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from jsonrpc_mcp import Server


class FileExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(os.environ["SPANS_FILE"], "a", encoding="utf-8") as out:
            for span in spans:
                parent = span.parent
                out.write(
                    json.dumps(
                        {
                            "name": span.name,
                            "kind": span.kind.name,
                            "trace": f"{span.context.trace_id:032x}",
                            "parent": f"{parent.span_id:016x}" if parent else None,
                            "attributes": dict(span.attributes or {}),
                        }
                    )
                    + "\n"
                )
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(FileExporter()))
trace.set_tracer_provider(provider)

server = Server("traced", "1.0.0", telemetry=False if os.environ.get("TELEMETRY") == "off" else None)


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
