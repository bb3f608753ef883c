"""The official TypeScript SDK's client (``@modelcontextprotocol/client``, npm) as a peer of
``jsonrpc-mcp conformance client``: ``ts/client.mjs`` (plain JavaScript, ESM) plays the harness's
scenarios with the SDK's public API, over HTTP and stdio.

:func:`install` runs ``npm ci`` of ``ts/package.json`` and its lock file (the SDK client and the
Node.js it runs on) into ``.cache/ts-sdk-client`` (``$TS_SDK_CLIENT_CACHE`` moves it), as the project
installs every Node package; ``.ci/run`` runs it ahead of the tests (``python -m
tests.conformance.clients.ts_client``), and copies ``client.mjs`` beside the install's
``node_modules`` (where Node.js resolves the SDK's package from it). :func:`command` is the client
command for the harness.
"""

from __future__ import annotations

import os
from pathlib import Path

from jsonrpc_mcp_conformance import npm

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "ts"
REPO = HERE.parents[2]
CACHE_ENV = "TS_SDK_CLIENT_CACHE"
PACKAGE = "@modelcontextprotocol/client"
ENTRY = Path("node_modules/@modelcontextprotocol/client/package.json")


class Unavailable(Exception):
    """The SDK's npm packages cannot be installed here (no npm): the reason, for a skip."""


def prefix() -> Path:
    return Path(os.environ.get(CACHE_ENV, REPO / ".cache" / "ts-sdk-client")) / "npm"


def install() -> list[str]:
    """The client command (Node.js, then ``client.mjs`` beside the install's ``node_modules``),
    after ``npm ci`` unless already done for this lock file. Raises :class:`Unavailable` without
    npm; an install that fails otherwise raises."""
    where = prefix()
    try:
        node = npm.ensure_installed(SOURCE, where, [where / ENTRY], log=False)
    except npm.NpmInstallError as exc:
        if "npm is needed" in str(exc):
            raise Unavailable(str(exc)) from exc
        raise
    script = where / "client.mjs"
    source = (SOURCE / "client.mjs").read_bytes()
    if not script.is_file() or script.read_bytes() != source:
        script.write_bytes(source)
    return [str(node), str(script)]


if __name__ == "__main__":  # .ci/run: install ahead of the tests
    argv = install()
    print(f"TypeScript SDK client ({PACKAGE} {npm.installed_version(prefix(), PACKAGE)}): {' '.join(argv)}")
