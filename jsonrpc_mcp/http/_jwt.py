"""JWT access tokens (RFC 9068) checked locally against the issuer's JWKS, on PyJWT (the ``jwt``
extra: ``pip install 'jsonrpc-mcp[jwt]'``).

Theory of operation. A token is refused (None, the reason logged) unless, in this order: its
header names an allowed algorithm (never ``none``; HMAC only with an explicit shared secret, so a
public key can never be used as an HMAC secret), its key is found (by ``kid``), the signature
verifies, ``exp``, ``iss`` and ``aud`` are present, ``exp``/``nbf`` hold (with ``leeway``), ``iss``
is the configured issuer, and ``aud`` passes the audience policy (:func:`._auth.audience_matches`).

The key set. Fetched on first use (without blocking the loop: :mod:`._fetch`), kept ``jwks_ttl``
seconds, then refetched on the next request. A ``kid`` not in the set triggers a refetch (key
rotation: the issuer published a new key), but at most one fetch per ``refetch_interval``, so a
stream of made-up ``kid`` values cannot turn this server into a load on the issuer; concurrent
requests share one fetch. When the issuer is down: keys already held keep working (a failed
refresh keeps the old set); a token that needs a key we cannot get raises
:class:`._auth.AuthUnavailable` (503 + Retry-After), since it may be perfectly good; a ``kid``
still unknown after a successful fetch is a 401.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Sequence
from typing import Any

import anyio
import orjson

from ._auth import AccessToken, AuthUnavailable, audience_matches, log_refusal
from ._fetch import FetchError, fetch

__all__ = ["ASYMMETRIC_ALGORITHMS", "JwtVerifier", "scopes_of"]

logger = logging.getLogger("jsonrpc_mcp.http.auth")

ASYMMETRIC_ALGORITHMS = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip
_HMAC = ("HS256", "HS384", "HS512")
_KTY = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}  # algorithm family -> JWK key type


def _pyjwt() -> Any:
    try:
        import jwt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("JWT verification needs PyJWT: pip install 'jsonrpc-mcp[jwt]'") from exc
    return jwt


def scopes_of(claims: dict[str, Any]) -> frozenset[str]:
    """Granted scopes: ``scope`` (a space-separated string, RFC 9068 / RFC 8693) or ``scp``."""
    raw = claims.get("scope", claims.get("scp"))
    if isinstance(raw, str):
        return frozenset(raw.split())
    if isinstance(raw, list):
        return frozenset(s for s in raw if isinstance(s, str))
    return frozenset()


class JwtVerifier:
    """Verify JWT access tokens issued by ``issuer`` for ``audience``.

    ``audience``: the canonical URL of this MCP endpoint (a list accepts any of several; with
    ``audience_prefix=True`` also URLs below them, on path segments). ``jwks_url``: where the
    issuer publishes its keys; or ``shared_secret`` for HMAC tokens (then HS256 is the default
    algorithm). ``algorithms``: the allowlist (default: the asymmetric ones). ``leeway``: seconds
    of clock skew allowed on ``exp``/``nbf``. ``timeout``: bound of one JWKS fetch.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        jwks_url: str | None = None,
        shared_secret: bytes | None = None,
        algorithms: Sequence[str] | None = None,
        audience_prefix: bool = False,
        leeway: float = 30.0,
        jwks_ttl: float = 3600.0,
        refetch_interval: float = 30.0,
        timeout: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._jwt = _pyjwt()
        if (jwks_url is None) == (shared_secret is None):
            raise ValueError("give exactly one of jwks_url and shared_secret")
        default = _HMAC[:1] if shared_secret is not None else ASYMMETRIC_ALGORITHMS
        self.algorithms = tuple(algorithms or default)
        for alg in self.algorithms:
            if alg.lower() == "none":
                raise ValueError("the 'none' algorithm is never accepted")
            if alg in _HMAC and shared_secret is None:
                raise ValueError(f"{alg} needs shared_secret (with a JWKS a public key could act as secret)")
            if alg not in _HMAC and alg not in ASYMMETRIC_ALGORITHMS:
                raise ValueError(f"unsupported algorithm: {alg!r}")
            if shared_secret is not None and alg not in _HMAC:
                raise ValueError(f"{alg} needs jwks_url, not shared_secret")
        self.issuer = issuer
        self.audiences = [audience] if isinstance(audience, str) else list(audience)
        if not self.audiences:
            raise ValueError("audience must name at least one resource URL")
        self.audience_prefix = audience_prefix
        self.leeway = leeway
        self._secret = shared_secret
        self._jwks = _KeySet(jwks_url, jwks_ttl, refetch_interval, timeout, ssl_context) if jwks_url else None

    async def verify(self, token: str) -> AccessToken | None:
        """Check the JWT's signature against the issuer's JWKS and its claims (issuer, audience,
        expiry): its details, or None when any check fails."""
        jwt = self._jwt
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            log_refusal(token, f"malformed JWT ({exc})")
            return None
        alg = header.get("alg")
        if alg not in self.algorithms:
            log_refusal(token, f"algorithm {alg!r} is not allowed")
            return None
        if self._jwks is None:
            key: Any = self._secret
        else:
            kid = header.get("kid")
            key = await self._jwks.key(kid if isinstance(kid, str) else None, alg)
            if key is None:
                log_refusal(token, f"no key in the JWKS for kid {kid!r} and alg {alg}")
                return None
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[alg],
                issuer=self.issuer,
                leeway=self.leeway,
                options={"require": ["exp", "iss", "aud"], "verify_aud": False},
            )
        except (jwt.PyJWTError, TypeError, ValueError) as exc:
            log_refusal(token, f"{type(exc).__name__}: {exc}")
            return None
        if not audience_matches(claims.get("aud"), self.audiences, prefix=self.audience_prefix):
            log_refusal(token, f"audience {claims.get('aud')!r} is not this resource")
            return None
        client = claims.get("client_id") or claims.get("azp") or claims.get("sub") or ""
        exp = claims.get("exp")
        return AccessToken(
            token,
            client if isinstance(client, str) else str(client),
            scopes_of(claims),
            expires_at=int(exp + self.leeway) if isinstance(exp, (int, float)) else None,
            claims=claims,
        )


class _KeySet:
    """The issuer's JWKS: keys by ``kid``, refreshed as the module docstring says."""

    def __init__(
        self, url: str, ttl: float, interval: float, timeout: float, context: ssl.SSLContext | None
    ) -> None:
        self.url, self.ttl, self.interval, self.timeout, self.context = url, ttl, interval, timeout, context
        self.keys: list[tuple[str | None, dict[str, Any], Any]] | None = None  # (kid, jwk, key object)
        self.fetched = 0.0  # monotonic time of the last successful fetch
        self.attempted: float | None = None  # ... of the last attempt
        self.failed: str | None = None  # why the last attempt failed (None: it succeeded)
        self._lock: anyio.Lock | None = None

    def _find(self, kid: str | None, alg: str) -> Any:
        fits = [
            key
            for k, jwk, key in self.keys or []
            if (kid is None or k == kid)
            and jwk.get("kty") == _KTY[alg[:2]]
            and jwk.get("alg", alg) == alg
            and jwk.get("use", "sig") == "sig"
        ]
        # no kid: only an unambiguous key will do
        return fits[0] if fits and (kid is not None or len(fits) == 1) else None

    async def key(self, kid: str | None, alg: str) -> Any:
        if self.keys is None or time.monotonic() - self.fetched >= self.ttl:
            await self._refresh()
        found = self._find(kid, alg)
        if found is None and kid is not None:
            await self._refresh()  # an unknown kid: perhaps a rotated key (rate-limited)
            found = self._find(kid, alg)
        if found is None and self.failed is not None:
            reason = f"JWKS {self.url} unavailable: {self.failed}"
            raise AuthUnavailable(reason, retry_after=max(1, int(self.interval)))
        return found

    async def _refresh(self) -> None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self.attempted is not None and time.monotonic() - self.attempted < self.interval:
                return  # fetched (or tried) moments ago, perhaps by a concurrent request
            self.attempted = time.monotonic()
            try:
                self.keys = self._parse(await self._fetch())
                self.fetched, self.failed = self.attempted, None
                logger.info("JWKS %s: %d usable key(s)", self.url, len(self.keys))
            except (FetchError, ValueError) as exc:
                self.failed = str(exc)
                logger.warning("JWKS %s could not be fetched: %s", self.url, exc)

    async def _fetch(self) -> bytes:
        status, _, body = await fetch(
            "GET", self.url, headers=[(b"accept", b"application/json")], timeout=self.timeout,
            ssl_context=self.context,
        )  # fmt: skip
        if status != 200:
            raise ValueError(f"HTTP {status}")
        return body

    @staticmethod
    def _parse(body: bytes) -> list[tuple[str | None, dict[str, Any], Any]]:
        jwt = _pyjwt()
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"not JSON: {exc}") from exc
        if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
            raise ValueError("not a JWK Set (no 'keys' list)")
        out = []
        for jwk in document["keys"]:
            if not isinstance(jwk, dict) or jwk.get("kty") not in _KTY.values():
                continue
            try:
                key = jwt.PyJWK(jwk).key
            except (jwt.PyJWTError, TypeError, ValueError) as exc:
                logger.info("JWKS: skipping an unusable key %r: %s", jwk.get("kid"), exc)
                continue
            kid = jwk.get("kid")
            out.append((kid if isinstance(kid, str) else None, jwk, key))
        return out
