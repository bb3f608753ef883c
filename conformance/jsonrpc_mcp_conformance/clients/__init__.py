"""``jsonrpc-mcp conformance client``: the harness testing MCP clients (issue 27).

For each scenario (``spec/client/*.json``) the harness serves a scenario server, runs the client
command against it, records every message the two exchange, and judges the client's requirements
from what it sent:

- ``servers``: the scenario servers (one ``jsonrpc_mcp.Server`` per scenario; ``python -m
  jsonrpc_mcp_conformance.clients.servers NAME`` serves one over stdio);
- ``tap``: the recording tap a stdio client starts (it relays the scenario server's stdio and writes
  every line to a record file);
- ``recording``: the exchanges as the harness saw them (the HTTP recorder, the tap's records);
- ``scenarios``: the scenarios and requirements loaded from ``spec/client``;
- ``checks``: one judge per requirement kind;
- ``runner`` and ``cli``: running the client scenario by scenario, and the command line.
"""
