"""Telemetry switched on the usual ways, over real processes: the SDK configured in the server's
own code (stdio), ``opentelemetry-instrument`` with no code at all (HTTP), ``telemetry=False``;
and one trace crossing the project's client and server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests import timeouts
from tests.announced import SERVE_LINE, Output

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from jsonrpc_mcp import Client
from jsonrpc_mcp.telemetry import ClientTelemetry

from ..http.support import stop

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SERVER = HERE / "spans_to_file.py"
TIMEOUT = timeouts.STARTUP


def _spans(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_server_that_configures_the_sdk_is_traced_over_stdio_and_stdout_stays_clean(
    tmp_path: Path, mode: str
) -> None:
    spans = tmp_path / "spans.jsonl"
    env = {**os.environ, "SPANS_FILE": str(spans)}
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER)]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(command, env=env, mode=mode, telemetry=False) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
    assert result["content"][0]["text"] == '{"result":5}'  # the protocol stream was not disturbed
    (call,) = [s for s in _spans(spans) if s["name"] == "tools/call add"]
    assert call["kind"] == "SERVER" and call["attributes"]["network.transport"] == "pipe"
    assert call["attributes"]["mcp.method.name"] == "tools/call"


async def test_telemetry_false_turns_it_off_even_with_the_sdk_configured(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    env = {**os.environ, "SPANS_FILE": str(spans), "TELEMETRY": "off"}
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER)]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(command, env=env, telemetry=False) as client:
            await client.call_tool("add", {"a": 1, "b": 1})
    assert _spans(spans) == []


async def test_one_trace_crosses_the_projects_client_and_server(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    env = {**os.environ, "SPANS_FILE": str(spans)}
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(SERVER)]
    with anyio.fail_after(TIMEOUT):
        async with Client.stdio(command, env=env, telemetry=False) as client:
            client.telemetry = ClientTelemetry(tracer_provider=provider)
            await client.call_tool("add", {"a": 1, "b": 2})
    (mine,) = [s for s in exporter.get_finished_spans() if s.name == "tools/call add"]
    assert mine.kind.name == "CLIENT" and (mine.attributes or {})["network.transport"] == "pipe"
    (theirs,) = [s for s in _spans(spans) if s["name"] == "tools/call add"]
    assert theirs["trace"] == f"{mine.context.trace_id:032x}"  # one trace ...
    assert theirs["parent"] == f"{mine.context.span_id:016x}"  # ... the server's span a child of ours
    provider.shutdown()


def test_opentelemetry_instrument_with_the_console_exporter_prints_a_tools_call_span() -> None:
    instrument = shutil.which("opentelemetry-instrument", path=str(Path(sys.executable).parent))
    if instrument is None:
        pytest.skip("opentelemetry-instrument is not installed (pip install opentelemetry-distro)")
    everything = REPO / "examples" / "everything" / "server.py"
    command = [
        instrument,
        "--traces_exporter",
        "console",
        "--metrics_exporter",
        "none",
        "--logs_exporter",
        "none",
    ]
    command += [sys.executable, "-m", "jsonrpc_mcp", "serve", str(everything), "--http", "--port", "0"]
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=subprocess.PIPE)
        output = Output(process.stderr)
        try:
            url = output.wait_for(SERVE_LINE, process).group("url").decode()

            async def call() -> None:
                with anyio.fail_after(TIMEOUT):
                    async with Client.http(url, telemetry=False) as client:
                        await client.call_tool("test_simple_text", {})

            anyio.run(call)
        finally:
            stop(process)  # the SDK flushes its batch of spans on the way out
            output.close()
        out.seek(0)
        printed = out.read().decode()
    assert '"name": "tools/call test_simple_text"' in printed
    assert '"kind": "SpanKind.SERVER"' in printed and '"gen_ai.tool.name": "test_simple_text"' in printed
