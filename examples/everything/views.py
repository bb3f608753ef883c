"""The MCP Apps fixtures of the everything server (SEP-1865, ``io.modelcontextprotocol/ui``): one
view, ``ui://everything/structured-output``, linked from ``test_structured_output`` (which every
client sees, the link included), and ``refresh_structured_output``, a tool only for the view
(visibility ``["app"]``: listed only to clients that declare the extension, so a client without it,
such as the official conformance suite, sees the same tools as before)."""

from __future__ import annotations

from typing import Any

from jsonrpc_mcp import Server, ToolResult

VIEW_URI = "ui://everything/structured-output"
LINKED_TOOL = "test_structured_output"
APP_ONLY_TOOL = "refresh_structured_output"

# Self-contained: no network fetch, no external script or style (the view declares no CSP origins).
# JSON-RPC 2.0 over postMessage, by hand: ui/initialize, ui/notifications/initialized, then the
# host's tool-result notification, and tools/call of the app-only tool from the Refresh button.
VIEW_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Structured output</title>
<style>body { font: 14px/1.4 system-ui, sans-serif; margin: 12px; } dt { font-weight: 600; }</style>
</head><body>
<dl><dt>Temperature</dt><dd id="temperature">-</dd><dt>Conditions</dt><dd id="conditions">-</dd>
<dt>Humidity</dt><dd id="humidity">-</dd></dl>
<button id="refresh" type="button">Refresh</button>
<script>
"use strict";
(() => {
  const pending = new Map();
  let nextId = 1;
  const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });
  const show = (result) => {
    const data = (result && result.structuredContent) || {};
    for (const key of ["temperature", "conditions", "humidity"]) {
      document.getElementById(key).textContent = key in data ? String(data[key]) : "-";
    }
  };
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if ("error" in message) reject(message.error); else resolve(message.result);
    } else if (message.method === "ui/notifications/tool-result") {
      show(message.params);
    }
  });
  document.getElementById("refresh").addEventListener("click", () => {
    request("tools/call", { name: "refresh_structured_output", arguments: {} }).then(show, () => {});
  });
  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "everything-structured-output", version: "1.0.0" },
    appCapabilities: {},
  }).then(() => send({ method: "ui/notifications/initialized", params: {} }), () => {});
})();
</script></body></html>
"""


def _reading() -> dict[str, Any]:
    return {"temperature": 22.5, "conditions": "sunny", "humidity": 65}


def add_app_fixtures(server: Server) -> None:
    """Declare the view, link ``test_structured_output`` to it and add the app-only refresh tool."""
    server.apps.add_view(
        VIEW_URI,
        html=VIEW_HTML,
        name="structured-output-view",
        title="Structured output",
        description="Draws test_structured_output's result (an MCP Apps view)",
        prefers_border=True,
    )
    server.apps.link(LINKED_TOOL, VIEW_URI)

    @server.apps.tool(view=VIEW_URI, visibility=["app"], annotations={"readOnlyHint": True})
    def refresh_structured_output() -> ToolResult:
        """The view's Refresh button: the same reading again (for the view alone)."""
        data = _reading()
        text = f"{data['temperature']} C, {data['conditions']}, humidity {data['humidity']}%"
        return ToolResult(content=[{"type": "text", "text": text}], structured_content=data)
