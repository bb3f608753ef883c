"""Import direction of the HTTP server package: ``serve`` does not reach back into the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jsonrpc_mcp import _targets, cli

TARGET = """
from jsonrpc_mcp import Server

server = Server("worker-target")
"""

# what a `serve --http --workers N` worker process does: uvicorn calls the app factory
WORKER = """
import sys
from jsonrpc_mcp.http._serve import worker_app

app = worker_app()
print(app.server.name, "jsonrpc_mcp.cli" in sys.modules)
"""


def test_a_worker_loads_its_target_without_the_command_line(tmp_path: Path) -> None:
    target = tmp_path / "target.py"
    target.write_text(TARGET, encoding="utf-8")
    spec = {"target": str(target), "args": [], "options": {"stateless": True}}
    env = {**os.environ, "JSONRPC_MCP_HTTP_WORKER": json.dumps(spec)}
    done = subprocess.run(
        [sys.executable, "-c", WORKER], capture_output=True, text=True, timeout=60, env=env, check=True
    )
    assert done.stdout.split() == ["worker-target", "False"]


def test_the_command_line_still_exports_load_target() -> None:
    assert cli.load_target is _targets.load_target
    assert "load_target" in cli.__all__
