"""What the HTTP client transport knows of authorization: reading a ``WWW-Authenticate`` challenge,
the :class:`AuthorizationError` a request fails with when the server wants authorization the client
could not give, and :class:`HttpAuth`, what the transport asks of an auth object (the OAuth client
of :mod:`jsonrpc_mcp.client.auth` is one) so that it can add the ``Authorization`` header, run a flow
on a 401 or a 403 ``insufficient_scope``, and send the request once more."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = [
    "AUTH_FAILURE_KEY",
    "AuthorizationError",
    "Challenge",
    "HttpAuth",
    "claim_auth_failure",
    "is_challenge",
    "parse_challenge",
]


# the member of a refused request's JSON-RPC error data that names its AuthorizationError
AUTH_FAILURE_KEY = "authorizationFailure"


@dataclass(frozen=True, slots=True)
class Challenge:
    """A parsed ``WWW-Authenticate`` header: its scheme and auth-params (RFC 9110 §11.6.1)."""

    scheme: str = ""
    params: dict[str, str] = field(default_factory=dict)
    raw: str = ""

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata")

    @property
    def scope(self) -> str | None:
        return self.params.get("scope")

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def error_description(self) -> str | None:
        return self.params.get("error_description")


_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*,?')
_SCHEME = re.compile(rf"\s*({_TOKEN})(?:\s+|$)")


def parse_challenge(header: str | None) -> Challenge:
    """The Bearer challenge of a ``WWW-Authenticate`` value (the first challenge when there are
    several and none is Bearer); an empty :class:`Challenge` for None or an unreadable value."""
    if not header:
        return Challenge()
    challenges: list[Challenge] = []
    pos = 0
    while pos < len(header):
        scheme = _SCHEME.match(header, pos)
        if scheme is None:
            break
        pos = scheme.end()
        params: dict[str, str] = {}
        while pos < len(header):
            param = _PARAM.match(header, pos)
            if param is None or _SCHEME.fullmatch(header[pos : param.end()].strip(" ,") + " ") is not None:
                break
            name, quoted, bare = param.groups()
            value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
            params.setdefault(name.lower(), value)
            pos = param.end()
        challenges.append(Challenge(scheme.group(1), params, header))
        while pos < len(header) and header[pos] in " ,":
            pos += 1
        if not params and pos < len(header) and _PARAM.match(header, pos) is None:
            continue
    for challenge in challenges:
        if challenge.scheme.lower() == "bearer":
            return challenge
    return challenges[0] if challenges else Challenge(raw=header)


@runtime_checkable
class HttpAuth(Protocol):
    """An auth object for the HTTP client transport (``connect_http(url, auth=...)``)."""

    async def authorization(self, url: str) -> str | None:
        """The ``Authorization`` header's value for a request to ``url`` (None: none)."""
        ...

    async def challenged(self, url: str, status: int, www_authenticate: str | None, sent: str | None) -> bool:
        """The server answered ``status`` (401, or 403 ``insufficient_scope``) to a request that
        carried ``sent``: True when the request should be sent again (a new token is ready)."""
        ...

    def succeeded(self, url: str) -> None:
        """A request that carried a token was accepted."""
        ...


class AuthorizationError(Exception):
    """The server wants authorization this client could not obtain, or refused the token it got.

    ``status`` is the HTTP status that started it (401, 403; None when the flow itself failed, for
    example at the authorization server), ``challenge`` the server's ``WWW-Authenticate`` value,
    ``error`` and ``error_description`` what the server (resource or authorization server) said.
    Never carries a token or a secret."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        challenge: str | None = None,
        error: str | None = None,
        error_description: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.challenge = challenge
        self.error = error
        self.error_description = error_description

    @property
    def parsed_challenge(self) -> Challenge:
        """:attr:`challenge` parsed (scheme and auth-params)."""
        return parse_challenge(self.challenge)

    @classmethod
    def from_response(cls, status: int, challenge: str | None, what: str = "") -> AuthorizationError:
        """The error for an HTTP 401/403 answer with this ``WWW-Authenticate`` value."""
        parsed = parse_challenge(challenge)
        said = parsed.error_description or parsed.error
        message = f"HTTP {status}: {'the server wants authorization' if status == 401 else 'forbidden'}"
        if what:
            message += f" ({what})"
        if said:
            message += f": {said}"
        return cls(
            message,
            status=status,
            challenge=challenge,
            error=parsed.error,
            error_description=parsed.error_description,
        )


def is_challenge(status: int, www_authenticate: str | None) -> bool:
    """A 401, or a 403 whose Bearer challenge says ``insufficient_scope``: an answer authorization
    can change."""
    if status == 401:
        return True
    return (
        status == 403
        and www_authenticate is not None
        and parse_challenge(www_authenticate).error == "insufficient_scope"
    )


def claim_auth_failure(stream: object, data: object) -> AuthorizationError | None:
    """The :class:`AuthorizationError` behind a JSON-RPC error whose ``data`` the HTTP transport
    ``stream`` made for a refused request (each is claimed once), or None."""
    key = data.get(AUTH_FAILURE_KEY) if isinstance(data, dict) else None
    failures = getattr(stream, "auth_failures", None)
    if not isinstance(key, str) or not isinstance(failures, dict):
        return None
    failure = failures.pop(key, None)
    return failure if isinstance(failure, AuthorizationError) else None
