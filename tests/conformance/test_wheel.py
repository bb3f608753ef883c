"""The harness as a user installs it: from the wheel, in a fresh virtual environment, no checkout.

One test, marked ``wheel`` because it is slow (about a minute on a quiet machine): it builds the
wheel, installs it with its runtime dependencies (from the configured package index) into a new
virtual environment under ``tmp_path``, and runs ``jsonrpc-mcp conformance`` from a directory outside
the checkout against a copy of ``examples/everything/server.py``, for one revision, so that the
fixtures come from the copy packaged in the wheel. Every step is a subprocess with a timeout.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jsonrpc_mcp_conformance.fixtures import ALL_REVISIONS
from tests import timeouts

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = timeouts.BUILD
INSTALL_TIMEOUT = timeouts.BUILD  # the runtime dependencies may come from the network
RUN_TIMEOUT = timeouts.LONG_RUN
REVISION = "2025-11-25"

pytestmark = pytest.mark.wheel

PROBE = """
import json, sys
import jsonrpc_mcp, jsonrpc_mcp_conformance
from jsonrpc_mcp_conformance.fixtures import default_spec_dir
print(json.dumps({
    "path": sys.path,
    "files": [jsonrpc_mcp.__file__, jsonrpc_mcp_conformance.__file__],
    "spec": str(default_spec_dir()),
}))
"""


def _env() -> dict[str, str]:
    """The environment, less whatever would put the checkout or this virtual environment in reach."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["NO_CONFORMANCE_HINT"] = "1"
    return env


def _run(command: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command,
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def _inside(path: Path, directory: Path) -> bool:
    return path.resolve().is_relative_to(directory.resolve())


def _build_wheel(out: Path) -> Path:
    # without build isolation when hatchling is here (the dev extra has it): no index needed
    no_isolation = ["--no-build-isolation"] if importlib.util.find_spec("hatchling") else []
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", *no_isolation]
    _run([*command, "--wheel-dir", str(out), str(ROOT)], ROOT, BUILD_TIMEOUT)
    (wheel,) = out.glob("jsonrpc_mcp-*.whl")
    return wheel


def test_the_wheel_runs_the_harness_with_no_checkout_anywhere(tmp_path: Path) -> None:
    assert not _inside(tmp_path, ROOT)
    wheel = _build_wheel(tmp_path / "dist")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (
        "jsonrpc_mcp/py.typed",
        "jsonrpc_mcp_conformance/py.typed",
        "jsonrpc_mcp_conformance/spec/manifest.json",
        "jsonrpc_mcp_conformance/spec/jsonrpc/examples.json",
        "jsonrpc_mcp_conformance/spec/official-checks.json",  # the known official check ids
        # the official schemas (jsonrpc:message:schema-valid needs no --schema-dir)
        *(f"jsonrpc_mcp_conformance/spec/schema/{r}/schema.json" for r in ALL_REVISIONS),
    ):
        assert name in names
    assert not [n for n in names if n.startswith(("spec/", "tests/", "examples/", "conformance/"))]

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, BUILD_TIMEOUT)
    python = venv / "bin" / "python"
    # this environment's pip installs into the new one (pip >= 22.3), dependencies included
    _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", str(wheel)],
        tmp_path,
        INSTALL_TIMEOUT,
    )

    elsewhere = tmp_path / "elsewhere"  # the example, with its sibling modules (tasks.py, skills.py...)
    shutil.copytree(ROOT / "examples" / "everything", elsewhere, ignore=shutil.ignore_patterns("__pycache__"))

    probe = json.loads(_run([str(python), "-c", PROBE], elsewhere, RUN_TIMEOUT).stdout)
    assert [p for p in probe["path"] if p and _inside(Path(p), ROOT)] == []
    assert all(_inside(Path(f), venv) for f in probe["files"]), probe["files"]
    spec = Path(probe["spec"])
    assert _inside(spec, venv) and spec.parts[-2:] == ("jsonrpc_mcp_conformance", "spec")

    jsonrpc_mcp = str(venv / "bin" / "jsonrpc-mcp")
    server = [jsonrpc_mcp, "serve", "server.py"]
    done = _run(
        [jsonrpc_mcp, "conformance", "--revision", REVISION, "--timeout", "30", "stdio", "--", *server],
        elsewhere,
        RUN_TIMEOUT,
    )
    assert f"revision {REVISION}: supported" in done.stdout
    summary = re.search(r"^(\d+) passed, (\d+) failed, ", done.stdout, re.MULTILINE)
    assert summary is not None, done.stdout
    passed, failed = int(summary.group(1)), int(summary.group(2))
    assert failed == 0
    assert passed > 100, done.stdout
