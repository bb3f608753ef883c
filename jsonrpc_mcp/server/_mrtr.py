"""Multi round-trip requests (2026-07-28): a handler's questions to the client, without requests.

Theory of operation
-------------------
The stateless revision has no server-to-client requests. A ``tools/call``, ``prompts/get`` or
``resources/read`` that needs the client's help (elicitation, sampling, roots) answers with an
``InputRequiredResult`` instead: ``{resultType: "input_required", inputRequests: {key: {method,
params}}, requestState}``. The client fulfils the input requests and sends the same request again
(a new JSON-RPC id) with ``inputResponses`` (the same keys) and ``requestState`` echoed exactly.

So that the same handler code (``await ctx.elicit(...)``, ``await ctx.ask({...})``) works in both
eras, a modern request is served by *replay*: the handler runs from the start on every round. Each
ask names its questions by key (chosen by the handler, or generated from the ask's order in the
run: ``elicit-1``, ``sample-2``, ``roots-3``...). A question whose answer is known (carried in the
``requestState`` from earlier rounds, or in this round's ``inputResponses``) and answers the same
question (a digest of the method and params asked) gets it at once; when some are not, the
:class:`Exchange` records every unanswered one of the ask and stops the handler with
:class:`InputRequired` (a ``BaseException``, so handlers catching ``Exception`` let it through),
and the server answers the round with ONE ``InputRequiredResult`` carrying those input requests
and a new ``requestState`` carrying every answer used so far. So a partial answer re-asks only
the rest; an answer to another question under the same key, or a key missing from the retry, is
asked again; ``inputResponses`` entries the state did not ask for are ignored. A first round
carrying ``inputResponses`` without a ``requestState`` (a client answering up front) has its
entries taken as the answers to whatever the handler asks under those keys.
Consequently a handler's side effects before an ask may run once per round in the modern era:
keep them idempotent, or put them after the asks.

Some requests get their inputs another way (a task of the Tasks extension, answered through
``tasks/update``): whoever runs such a handler sets :data:`current_input_channel` to an
:class:`InputChannel`, and every ask of the handler goes through it instead.

``requestState`` is attacker-controlled, so it is sealed (:class:`RequestStateSealer`): the compact
token ``v1.<base64url(JSON claims)>.<base64url(HMAC-SHA256)>`` binds the method, a digest of the
request's params (without ``inputResponses``, ``requestState`` and ``_meta``) and an expiry. A token
that was altered, sealed under another key, expired, or issued for another method or other params
is refused with -32602. The key is ``Server(state_key=...)``, else the ``JSONRPC_MCP_STATE_KEY``
environment variable, else a per-user key file (:func:`state_key_file`, created on first use with
mode 0600), so that a retry also works on a fresh process of the same server (a restarted stdio
server, another worker on the machine); only if that file cannot be used is the key random per
process. Servers on different machines sharing retries must share a key. The claims are signed,
not encrypted: the client can read the answers it gave.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any, Protocol

import orjson

from ..jsonrpc.errors import InvalidParams

__all__ = [
    "DEFAULT_STATE_TTL",
    "INPUT_METHODS",
    "STATE_KEY_ENV",
    "Exchange",
    "InputChannel",
    "InputRequired",
    "RequestStateSealer",
    "current_exchange",
    "current_input_channel",
    "is_input_required",
]

# the requests that may answer with an InputRequiredResult
# what may be asked, and the prefix of its keys
INPUT_METHODS = {"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}

STATE_KEY_ENV = "JSONRPC_MCP_STATE_KEY"
STATE_FILE_ENV = "JSONRPC_MCP_STATE_FILE"
DEFAULT_STATE_TTL = 600.0
MIN_KEY_BYTES = 16

_VERSION = "v1"
_CONTEXT = b"jsonrpc-mcp/request-state/v1\n"  # domain separation for the MAC
_EXCLUDED = frozenset({"inputResponses", "requestState", "_meta"})

# The exchange of the modern request being served (None outside one, and for modern requests that
# may not ask). Set by the modern-era dispatcher; a Context reads it once, when it is made.
current_exchange: ContextVar[Exchange | None] = ContextVar("jsonrpc_mcp_exchange", default=None)


class InputChannel(Protocol):
    """Another way for a handler's asks to reach the client (e.g. a task's ``tasks/update``)."""

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """``requests``: key -> ``{"method", "params"?}`` (JSON-RPC requests without an id); returns
        key -> the client's raw result (a dict) for every key."""
        ...


# Set by whoever runs a handler whose asks take another path (None: the request's own era decides).
# Read at every ask, before the modern exchange and the server-to-client requests.
current_input_channel: ContextVar[InputChannel | None] = ContextVar("jsonrpc_mcp_input_channel", default=None)


class InputRequired(BaseException):
    """Control flow, not an error: the handler asked something the client has not answered yet.

    A ``BaseException`` so that a handler's ``except Exception`` does not swallow it; the modern
    dispatcher turns it into an ``InputRequiredResult``.
    """

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def is_input_required(exc: BaseException) -> bool:
    """Whether ``exc`` is :class:`InputRequired`, or an exception group of nothing else (a handler
    that asked from a task group)."""
    if isinstance(exc, InputRequired):
        return True
    inner = getattr(exc, "exceptions", None)
    if isinstance(exc, BaseException) and isinstance(inner, tuple) and inner:
        return all(isinstance(e, BaseException) and is_input_required(e) for e in inner)
    return False


def _canonical(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # e.g. an integer beyond 64 bits
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sha256(data: bytes) -> bytes:
    # hashlib and hmac are imported on first use (about 1.5 ms at start-up otherwise): only a server
    # whose 2026-07-28 handlers ask the client something, or that gets a requestState, needs them.
    import hashlib

    return hashlib.sha256(data).digest()


def params_digest(params: dict[str, Any]) -> str:
    """What a ``requestState`` is bound to: the request's params minus the MRTR fields and ``_meta``
    (no ``arguments`` and empty ``arguments`` are the same request)."""
    kept = {k: v for k, v in params.items() if k not in _EXCLUDED}
    if kept.get("arguments", 0) in (None, {}):
        del kept["arguments"]
    return _b64(_sha256(_canonical(kept))[:16])


def question_digest(method: str, params: Any) -> str:
    """Which question an answer answers (so a handler asking something else is asked again)."""
    return _b64(_sha256(_canonical([method, params]))[:12])


logger = logging.getLogger("jsonrpc_mcp.server")


def state_key_file() -> str | None:
    """Where the per-user request-state key lives: ``$JSONRPC_MCP_STATE_FILE`` (empty: nowhere, the
    key is then random per process), else ``$XDG_STATE_HOME/jsonrpc-mcp/request-state.key``
    (``~/.local/state/...`` without ``XDG_STATE_HOME``)."""
    configured = os.environ.get(STATE_FILE_ENV)
    if configured is not None:
        return configured or None
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "jsonrpc-mcp", "request-state.key")


def _file_key(path: str) -> bytes:
    """The key kept in ``path`` (hex text), made there first if there is none. Concurrent first
    uses agree: the new key is written to a private temporary file that is then linked into
    place, which fails for all but one writer, and the others read the winner's key."""
    try:
        with open(path, "rb") as existing:
            return _key_bytes(existing.read().strip())
    except FileNotFoundError:
        pass
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, mode=0o700, exist_ok=True)
    temporary = os.path.join(folder, f".request-state.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(os.urandom(32).hex().encode("ascii"))  # what secrets.token_hex(32) does
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs counts
            os.link(temporary, path)
    finally:
        os.unlink(temporary)
    with open(path, "rb") as made:
        return _key_bytes(made.read().strip())


def _default_key() -> bytes:
    path = state_key_file()
    if path is not None:
        try:
            return _file_key(path)
        except (OSError, ValueError) as exc:
            logger.warning(
                "request-state key file %s unusable (%s): using a key of this process only, so "
                "2026-07-28 retries reaching another process will be refused; set %s",
                path,
                exc,
                STATE_KEY_ENV,
            )
    return os.urandom(32)


def _key_bytes(key: bytes | str) -> bytes:
    if isinstance(key, str):
        key = key.encode("utf-8")
    if not isinstance(key, (bytes, bytearray)):
        raise TypeError(f"a request-state key is bytes or str, not {type(key).__name__}")
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(
            f"a request-state key needs at least {MIN_KEY_BYTES} bytes of secret randomness "
            '(e.g. python -c "import secrets; print(secrets.token_hex(32))")'
        )
    return bytes(key)


class RequestStateSealer:
    """Seals and opens ``requestState`` tokens under a server key (HMAC-SHA256), with an expiry.

    ``keys``: the first seals, every one opens (rotate by prepending the new key, and drop the old
    one after ``ttl``); None: the per-user default key (:func:`state_key_file`). ``clock`` (wall-clock
    seconds; workers share it) may be replaced in tests.
    """

    def __init__(self, keys: Sequence[bytes | str] | None, *, ttl: float = DEFAULT_STATE_TTL) -> None:
        if keys is not None and not keys:
            raise ValueError("a request-state sealer needs at least one key")
        if not ttl > 0:
            raise ValueError(f"state_ttl must be a positive number of seconds, got {ttl!r}")
        # None: the default key, looked up when first needed (a file: see state_key_file)
        self._given = None if keys is None else [_key_bytes(k) for k in keys]
        self._defaulted = keys is None  # no key given: a shared one may be adopted
        self.ttl = ttl
        self.clock: Callable[[], float] = time.time

    @property
    def _keys(self) -> list[bytes]:
        if self._given is None:
            self._given = [_default_key()]
        return self._given

    def adopt_shared_key(self, key: bytes | str) -> bool:
        """Seal and open under ``key`` (one several servers share, e.g. through Redis) unless a key
        was given (argument or environment); whether it was adopted."""
        if not self._defaulted:
            return False
        self._given = [_key_bytes(key)]
        return True

    @classmethod
    def create(
        cls, state_key: bytes | str | Sequence[bytes | str] | None = None, *, ttl: float = DEFAULT_STATE_TTL
    ) -> RequestStateSealer:
        """The sealer for ``Server(state_key=..., state_ttl=...)``: the given key(s), else the key in
        ``$JSONRPC_MCP_STATE_KEY``, else the per-user key file (read when first needed)."""
        if state_key is None:
            from_env = os.environ.get(STATE_KEY_ENV)
            keys: list[bytes | str] | None = [from_env] if from_env else None
        elif isinstance(state_key, (bytes, bytearray, str)):
            keys = [state_key]
        else:
            keys = list(state_key)
        return cls(keys, ttl=ttl)

    def _mac(self, key: bytes, body: str) -> str:
        import hmac  # on first use, as hashlib (see _sha256)

        return _b64(hmac.digest(key, _CONTEXT + body.encode("ascii"), "sha256"))

    def seal(self, claims: dict[str, Any]) -> str:
        """A token carrying ``claims`` (a JSON object), valid for ``ttl`` seconds from now."""
        body = f"{_VERSION}.{_b64(orjson.dumps({**claims, 'x': int(self.clock() + self.ttl)}))}"
        return f"{body}.{self._mac(self._keys[0], body)}"

    def open(self, token: str, method: str, digest: str) -> dict[str, Any]:
        """The claims of a token this server sealed for this method and params; -32602 otherwise."""
        version, _, rest = token.partition(".")
        payload, _, mac = rest.partition(".")
        if version != _VERSION or not payload or not mac:
            raise _refused("is not a request state this server issued", "malformed")
        body = f"{version}.{payload}"
        try:
            body.encode("ascii")
            mac.encode("ascii")
        except UnicodeError:
            raise _refused("is not a request state this server issued", "malformed") from None
        import hmac

        if not any(hmac.compare_digest(self._mac(key, body), mac) for key in self._keys):
            raise _refused("failed verification (altered, or issued under another key)", "tampered")
        try:
            claims = orjson.loads(_unb64(payload))
        except (ValueError, binascii.Error):  # only a token sealed by a buggy writer gets here
            raise _refused("is not a request state this server issued", "malformed") from None
        if type(claims) is not dict:
            raise _refused("is not a request state this server issued", "malformed")
        expires = claims.get("x")
        if not isinstance(expires, int) or self.clock() >= expires:
            raise _refused("has expired; send the request again without it", "expired")
        if claims.get("m") != method:
            raise _refused(f"was issued for a {claims.get('m')} request, not {method}", "mismatch")
        if claims.get("d") != digest:
            raise _refused(f"was issued for other parameters of this {method} request", "mismatch")
        return claims


def _refused(why: str, reason: str) -> InvalidParams:
    return InvalidParams(f"Invalid params: requestState {why}", {"requestState": reason})


class Exchange:
    """The asks of one round of a modern request: the answers known, and the questions to send."""

    __slots__ = ("_digest", "_known", "_params", "_used", "method", "pending", "retried")

    def __init__(
        self,
        method: str,
        params: dict[str, Any],
        digest: str | None,
        known: dict[str, tuple[str | None, Any]],
        retried: bool,
    ) -> None:
        self.method = method
        self._params = params
        self._digest = digest
        self._known = known  # key -> (question digest, None: any question; answer)
        self._used: dict[str, tuple[str, Any]] = {}
        self.pending: dict[str, tuple[str, dict[str, Any]]] = {}  # key -> (question digest, request)
        self.retried = retried

    @property
    def digest(self) -> str:
        """The digest of the request's parameters, computed only when a state is read or issued:
        most requests never ask for anything, and they should not pay for it."""
        if self._digest is None:
            self._digest = params_digest(self._params)
        return self._digest

    @classmethod
    def start(cls, sealer: RequestStateSealer, method: str, params: dict[str, Any]) -> Exchange:
        """Read a round's ``requestState`` (verified) and ``inputResponses``; -32602 if unusable."""
        state = params.get("requestState")
        responses = params.get("inputResponses")
        if state is None and responses is None:  # a first round (most requests): nothing to read
            return cls(method, params, None, {}, retried=False)
        digest: str | None = None
        if responses is not None and type(responses) is not dict:
            raise InvalidParams("Invalid params: 'inputResponses' must be an object")
        known: dict[str, tuple[str | None, Any]] = {}
        if state is None:  # answers sent up front: each answers what the handler asks under its key
            for key, answer in (responses or {}).items():
                known[key] = (None, answer)
        else:
            if type(state) is not str:
                raise InvalidParams("Invalid params: 'requestState' must be a string")
            digest = params_digest(params)
            claims = sealer.open(state, method, digest)
            answers = claims.get("a")
            asked = claims.get("q")
            if type(answers) is not dict or type(asked) is not dict:
                raise _refused("is not a request state this server issued", "malformed")
            for key, entry in answers.items():
                if type(entry) is list and len(entry) == 2 and isinstance(entry[0], str):
                    known[key] = (entry[0], entry[1])
            if responses:
                for key, question in asked.items():  # entries we did not ask for are ignored
                    if key in responses and isinstance(question, str):
                        known[key] = (question, responses[key])
        return cls(method, params, digest, known, retried=state is not None or responses is not None)

    def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The client's raw answers to these questions (key -> ``{method, params?}``), or
        :class:`InputRequired` after recording every one of them not answered yet."""
        answers: dict[str, Any] = {}
        missing: dict[str, tuple[str, dict[str, Any]]] = {}
        for key, request in requests.items():
            question = question_digest(request["method"], request.get("params"))
            known = self._known.get(key)
            if known is not None and known[0] in (None, question):
                self._used[key] = (question, known[1])
                answers[key] = known[1]
            else:
                missing[key] = (question, request)
        if missing:
            self.pending.update(missing)
            raise InputRequired(next(iter(missing)))
        return answers

    def input_required_result(self, sealer: RequestStateSealer) -> dict[str, Any]:
        """The ``InputRequiredResult`` asking what is pending, its state carrying what was answered."""
        claims = {
            "m": self.method,
            "d": self.digest,
            "a": {key: [question, answer] for key, (question, answer) in self._used.items()},
            "q": {key: question for key, (question, _) in self.pending.items()},
        }
        return {
            "resultType": "input_required",
            "inputRequests": {key: request for key, (_, request) in self.pending.items()},
            "requestState": sealer.seal(claims),
        }
