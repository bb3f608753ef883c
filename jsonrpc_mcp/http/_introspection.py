"""Opaque access tokens checked by asking the authorization server (RFC 7662 token introspection).

Each unknown token costs one POST to the introspection endpoint (form-encoded ``token``, the
resource server authenticating as an OAuth client with HTTP Basic, RFC 7662 §2.1), bounded by
``timeout``; no extra dependency. Answers are cached by a hash of the token: an active token until
its ``exp`` or ``cache_ttl`` seconds, whichever is first (so a revocation takes effect within
``cache_ttl``); an inactive one for ``negative_ttl``. The cache holds at most ``max_cache`` entries,
the oldest dropped first. An endpoint that cannot be reached, times out or answers anything but a
200 JSON object raises :class:`._auth.AuthUnavailable` (503): that says nothing about the token.

Checks on an active answer: ``exp``/``nbf`` (with ``leeway``), ``iss`` when ``issuer`` is set, and
``aud`` under the audience policy (:func:`._auth.audience_matches`): an answer without ``aud``
is refused, since MCP servers MUST only accept tokens issued for them.
"""

from __future__ import annotations

import base64
import hashlib
import ssl
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from ._auth import AccessToken, AuthUnavailable, audience_matches, log_refusal
from ._fetch import FetchError, fetch
from ._jwt import scopes_of

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    """Verify tokens at ``url``, an RFC 7662 endpoint, as client ``client_id``/``client_secret``.

    ``audience``/``audience_prefix``: as for :class:`._jwt.JwtVerifier`. ``issuer``: when given,
    the ``iss`` the answer must carry.
    """

    def __init__(
        self,
        *,
        url: str,
        audience: str | Sequence[str],
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        audience_prefix: bool = False,
        leeway: float = 30.0,
        cache_ttl: float = 60.0,
        negative_ttl: float = 10.0,
        max_cache: int = 10_000,
        timeout: float = 5.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if client_secret is not None and client_id is None:
            raise ValueError("client_secret needs client_id")
        self.url = url
        self.audiences = [audience] if isinstance(audience, str) else list(audience)
        if not self.audiences:
            raise ValueError("audience must name at least one resource URL")
        self.issuer, self.audience_prefix, self.leeway = issuer, audience_prefix, leeway
        self.cache_ttl, self.negative_ttl, self.max_cache = cache_ttl, negative_ttl, max_cache
        self.timeout, self._ssl = timeout, ssl_context
        self._headers = [
            (b"content-type", b"application/x-www-form-urlencoded"),
            (b"accept", b"application/json"),
        ]
        if client_id is not None:  # RFC 6749 §2.3.1: each part form-encoded, then Basic
            pair = f"{quote(client_id, safe='')}:{quote(client_secret or '', safe='')}"
            self._headers.append((b"authorization", b"Basic " + base64.b64encode(pair.encode())))
        self._cache: OrderedDict[bytes, tuple[float, AccessToken | None, str]] = OrderedDict()

    async def verify(self, token: str) -> AccessToken | None:
        """Ask the authorization server (RFC 7662) about ``token``, answers cached for a while: its
        details when active and meant for this server, else None."""
        key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        now = time.time()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            if cached[1] is None:
                log_refusal(token, cached[2] + " (cached)")
            return cached[1]
        answer = await self._introspect(token)
        access, reason = self._judge(token, answer, now)
        if access is None:
            log_refusal(token, reason)
            until = now + self.negative_ttl
        else:
            until = now + self.cache_ttl
            if access.expires_at is not None:
                until = min(until, access.expires_at)
        self._cache[key] = (until, access, reason)
        self._cache.move_to_end(key)
        while len(self._cache) > self.max_cache:
            self._cache.popitem(last=False)
        return access

    async def _introspect(self, token: str) -> dict[str, Any]:
        body = urlencode({"token": token, "token_type_hint": "access_token"}).encode("ascii")
        try:
            status, _, data = await fetch(
                "POST", self.url, headers=self._headers, body=body, timeout=self.timeout,
                ssl_context=self._ssl,
            )  # fmt: skip
        except FetchError as exc:
            raise AuthUnavailable(f"introspection failed: {exc}") from exc
        if status != 200:
            raise AuthUnavailable(f"introspection endpoint {self.url} answered HTTP {status}")
        try:
            answer = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise AuthUnavailable(f"introspection endpoint {self.url} answered no JSON") from exc
        if not isinstance(answer, dict):
            raise AuthUnavailable(f"introspection endpoint {self.url} answered no JSON object")
        return answer

    def _judge(self, token: str, answer: dict[str, Any], now: float) -> tuple[AccessToken | None, str]:
        if answer.get("active") is not True:
            return None, "inactive (introspection)"
        exp, nbf = answer.get("exp"), answer.get("nbf")
        if exp is not None and (not isinstance(exp, (int, float)) or now >= exp + self.leeway):
            return None, f"expired (exp {exp!r})"
        if nbf is not None and (not isinstance(nbf, (int, float)) or now < nbf - self.leeway):
            return None, f"not valid yet (nbf {nbf!r})"
        if self.issuer is not None and answer.get("iss") != self.issuer:
            return None, f"issuer {answer.get('iss')!r} is not {self.issuer!r}"
        if not audience_matches(answer.get("aud"), self.audiences, prefix=self.audience_prefix):
            return None, f"audience {answer.get('aud')!r} is not this resource"
        client = answer.get("client_id") or answer.get("sub") or ""
        access = AccessToken(
            token,
            client if isinstance(client, str) else str(client),
            scopes_of(answer),
            expires_at=int(exp + self.leeway) if isinstance(exp, (int, float)) else None,
            claims=answer,
        )
        return access, ""
