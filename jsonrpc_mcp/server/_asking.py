"""Asking the client (elicitation, sampling, roots): one question, or several under chosen keys.

Theory of operation
-------------------
Every ask is an :class:`InputRequest`: the JSON-RPC request to send (``method``, ``params``) and
the function that checks and parses the client's result. ``ctx.elicitation(...)``,
``ctx.sampling(...)`` and ``ctx.roots()`` build one, checking the client's capabilities and the
revision first (so a missing capability is raised before anything is sent, as the single asks
``ctx.elicit`` / ``ctx.sample`` / ``ctx.list_roots`` always did). ``ctx.ask({key: request, ...})``
asks them all at once and returns ``{key: parsed result}``; a single ask is ``ask`` with one key
(named with ``key=``, or generated: ``elicit-1``, ``sample-2``...). A key may be asked once per run
of a handler: asking it again is a ``ValueError``.

The requests reach the client by the first of three paths that applies, the parsing being the same:

1. an :class:`~jsonrpc_mcp.server._mrtr.InputChannel` set in ``current_input_channel`` (e.g. a task
   of the Tasks extension, whose inputs travel by ``tasks/get`` / ``tasks/update``);
2. a modern (2026-07-28) request's :class:`~jsonrpc_mcp.server._mrtr.Exchange`: the answers come from
   the retry's ``inputResponses`` (all the unanswered keys go out in ONE ``InputRequiredResult``);
   an answer that does not parse is the client's protocol error, -32602;
3. server-to-client requests of a handshake session, sent concurrently, the answers gathered (an
   error answer is a :class:`~jsonrpc_mcp.errors.ClientError`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import anyio

from ..content import fit_all, for_revision, is_content_block
from ..errors import CapabilityError, ClientError, MissingClientCapability
from ..jsonrpc.errors import INTERNAL_ERROR, InvalidParams, JsonRpcError
from ..revisions import Revision
from ._elicitation import check_form_schema
from ._mrtr import INPUT_METHODS, current_input_channel

if TYPE_CHECKING:
    from ..jsonrpc.endpoint import RequestContext
    from ._mrtr import Exchange
    from ._session import ServerSession

__all__ = ["Asking", "Elicited", "InputRequest"]

T = TypeVar("T")
_DEFAULT: Any = object()

# ctx.sample(**params): Python names for the optional CreateMessageRequest fields
_SAMPLING_PARAMS = {
    "model_preferences": "modelPreferences",
    "include_context": "includeContext",
    "stop_sequences": "stopSequences",
    "tool_choice": "toolChoice",
}
_ACTIONS = frozenset({"accept", "decline", "cancel"})


@dataclass(frozen=True)
class Elicited(Generic[T]):
    """The user's answer to a form described by a type (``await ctx.elicit(message, Person)``):
    ``action`` ("accept", "decline" or "cancel") and, when accepted, ``content`` as that type."""

    action: str
    content: T | None = None

    @property
    def accepted(self) -> bool:
        """Whether the user accepted the form (``content`` is then set)."""
        return self.action == "accept"


def _form_of(described: type[Any]) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    """The form schema of a dataclass, TypedDict or pydantic model, and how to read an answer."""
    from ._introspect import converter_for, schema_for_type

    try:
        schema = schema_for_type(described, f"the form {getattr(described, '__name__', described)!r}")
    except TypeError as exc:
        raise TypeError(f"elicit: {exc}") from None
    convert = converter_for(described)
    return schema, (convert if convert is not None else (lambda value: value))


@dataclass(frozen=True)
class InputRequest(Generic[T]):
    """A question for the client, checked and ready to ask (build it with ``ctx.elicitation``,
    ``ctx.sampling`` or ``ctx.roots``; ask it with ``ctx.ask``)."""

    method: str
    params: dict[str, Any] | None
    parse: Callable[[dict[str, Any]], T]

    def to_wire(self) -> dict[str, Any]:
        """The JSON-RPC request object, without an id."""
        request: dict[str, Any] = {"method": self.method}
        if self.params is not None:
            request["params"] = self.params
        return request


class Asking:
    """The Context's requests to the client (a mixin of :class:`~jsonrpc_mcp.server.Context`)."""

    __slots__ = ("_asked", "_asks")
    _asked: set[str] | None  # the keys asked so far (see ask)
    _asks: int  # how many keys were generated

    if TYPE_CHECKING:
        session: ServerSession
        _rc: RequestContext
        _closed: bool
        _exchange: Exchange | None

        @property
        def method(self) -> str: ...

        @property
        def revision(self) -> Revision: ...

        @property
        def client_capabilities(self) -> dict[str, Any]: ...

        async def _flush(self) -> None: ...

    # -- building questions -----------------------------------------------------------------------
    def elicitation(self, message: str, requested_schema: dict[str, Any]) -> InputRequest[dict[str, Any]]:
        """A form for the user (``elicitation/create``), to pass to :meth:`ask`; its answer is the
        ElicitResult. Capabilities are checked now (see :meth:`elicit`)."""
        revision = self.revision
        if not revision.has_elicitation:
            raise CapabilityError(f"protocol revision {revision.version} has no elicitation")
        declared = self._client_capability("elicitation", "elicitation/create")
        if revision.has_url_elicitation and declared and "form" not in declared:
            raise self._missing(
                "the client declared only URL-mode elicitation, so the server cannot send a form",
                {"elicitation": {"form": {}}},
            )
        schema = check_form_schema(requested_schema, revision)
        params: dict[str, Any] = {"mode": "form"} if revision.has_url_elicitation else {}
        params["message"] = message
        params["requestedSchema"] = schema
        return InputRequest("elicitation/create", params, elicit_result)

    def elicitation_url(
        self, message: str, url: str, elicitation_id: str | None = None
    ) -> InputRequest[dict[str, Any]]:
        """A URL for the user to visit (URL-mode ``elicitation/create``), to pass to :meth:`ask`."""
        revision = self.revision
        if not revision.has_url_elicitation:
            raise CapabilityError(f"protocol revision {revision.version} has no URL-mode elicitation")
        declared = self._client_capability("elicitation", "elicitation/create")
        if "url" not in declared:
            raise self._missing(
                "the client did not declare URL-mode elicitation ('elicitation.url')",
                {"elicitation": {"url": {}}},
            )
        params = {"mode": "url", "message": message, "url": url}
        if revision.has_handshake:
            params["elicitationId"] = elicitation_id or str(uuid.uuid4())
        return InputRequest("elicitation/create", params, elicit_result)

    def sampling(
        self,
        messages: Iterable[str | dict[str, Any]],
        max_tokens: int = 100,
        system_prompt: str | None = None,
        **params: Any,
    ) -> InputRequest[dict[str, Any]]:
        """A question for the client's model (``sampling/createMessage``), to pass to :meth:`ask`;
        its answer is the CreateMessageResult. Arguments as :meth:`sample`."""
        declared = self._client_capability("sampling", "sampling/createMessage")
        revision = self.revision
        body: dict[str, Any] = {"messages": [_sampling_message(m, revision) for m in messages]}
        if system_prompt is not None:
            body["systemPrompt"] = system_prompt
        for key, value in params.items():
            if value is not None:
                body[_SAMPLING_PARAMS.get(key, key)] = value
        body["maxTokens"] = max_tokens
        if "tools" in body or "toolChoice" in body:
            if not revision.has_sampling_tools:
                raise CapabilityError(f"protocol revision {revision.version} has no tool use in sampling")
            if not isinstance(declared.get("tools"), dict):
                raise self._missing(
                    "the client did not declare 'sampling.tools', so sampling cannot offer tools",
                    {"sampling": {"tools": {}}},
                )
        if (
            not revision.has_handshake
            and body.get("includeContext") not in (None, "none")
            and not isinstance(declared.get("context"), dict)
        ):
            raise self._missing(
                "the client did not declare 'sampling.context', so sampling cannot include context",
                {"sampling": {"context": {}}},
            )
        return InputRequest("sampling/createMessage", body, sampling_result)

    def roots(self) -> InputRequest[list[dict[str, Any]]]:
        """The question for the client's roots (``roots/list``), to pass to :meth:`ask`."""
        self._client_capability("roots", "roots/list")
        return InputRequest("roots/list", None, roots_result)

    # -- asking -----------------------------------------------------------------------------------
    async def ask(
        self, requests: Mapping[str, InputRequest[Any]], *, timeout: float | None = _DEFAULT
    ) -> dict[str, Any]:
        """Ask several questions at once, under keys of your choosing; returns ``{key: answer}``
        (each answer parsed as the single asks return it).

        Handshake sessions send the requests together and wait (at most ``timeout``, default the
        server's ``request_timeout``) for every answer. A 2026-07-28 request answers with ONE
        ``InputRequiredResult`` carrying every key not answered yet, and the handler runs again
        when the client retries. A key may be asked once per request (ValueError otherwise).
        """
        if self._closed:
            raise RuntimeError(f"the {self.method} request this Context served has finished")
        for key, request in requests.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"an input request's key is a non-empty str, not {key!r}")
            if not isinstance(request, InputRequest):
                raise TypeError(
                    f"ctx.ask takes requests built by ctx.elicitation, ctx.sampling or ctx.roots, "
                    f"not {type(request).__name__} (key {key!r})"
                )
        if not requests:
            return {}
        self._claim(requests)
        raw = await self._gather({key: request.to_wire() for key, request in requests.items()}, timeout)
        modern = current_input_channel.get() is None and not self.revision.has_handshake
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            try:
                result = raw.get(key, _DEFAULT)
                if result is _DEFAULT:
                    raise ClientError(f"no answer for {key!r}", code=INTERNAL_ERROR)
                if not isinstance(result, dict):
                    raise ClientError(
                        f"the client's answer to {request.method} is not an object", code=INTERNAL_ERROR
                    )
                answers[key] = request.parse(result)
            except ClientError as exc:
                if modern:  # the client's retry carried something that is not an answer
                    raise InvalidParams(
                        f"Invalid params: inputResponses[{key!r}]: {exc.message}", {"inputResponse": key}
                    ) from None
                raise
        return answers

    async def _ask_one(self, request: InputRequest[T], key: str | None, timeout: float | None) -> T:
        if key is None:
            key = self._generated_key(request.method)
        answer: T = (await self.ask({key: request}, timeout=timeout))[key]
        return answer

    def _generated_key(self, method: str) -> str:
        self._asks += 1
        return f"{INPUT_METHODS[method]}-{self._asks}"

    def _claim(self, keys: Iterable[str]) -> None:
        """Each key is asked once in a run of the handler (its answer would be ambiguous)."""
        asked = self._asked
        if asked is None:
            asked = self._asked = set()
        again = [key for key in keys if key in asked]
        if again:
            raise ValueError(
                f"input request key {again[0]!r} was already asked in this {self.method} request; "
                "use a new key for a new question"
            )
        asked.update(keys)

    async def _gather(self, requests: dict[str, dict[str, Any]], timeout: float | None) -> dict[str, Any]:
        """The client's raw results, key by key: through an input channel, this modern request's
        exchange (which may stop the handler with InputRequired), or server-to-client requests."""
        channel = current_input_channel.get()
        if channel is not None:
            return await channel.ask(requests)
        if not self.revision.has_handshake:
            self._check_can_ask()
            assert self._exchange is not None
            return self._exchange.ask(requests)
        await self._flush()
        if timeout is _DEFAULT:
            timeout = self.session.server.request_timeout
        answers: dict[str, Any] = {}

        async def one(key: str, request: dict[str, Any]) -> None:
            method = request["method"]
            try:
                answers[key] = await self._rc.send_request(method, request.get("params"), timeout=timeout)
            except JsonRpcError as exc:
                raise ClientError(
                    f"the client answered {method} with error {exc.code}: {exc.message}",
                    exc.data,
                    code=exc.code,
                ) from exc

        if len(requests) == 1:
            ((key, request),) = requests.items()
            await one(key, request)
            return answers
        try:
            async with anyio.create_task_group() as group:
                for key, request in requests.items():
                    group.start_soon(one, key, request)
        except Exception as exc:  # an exception group: its first failure, as a single ask raises it
            inner = getattr(exc, "exceptions", None)
            if isinstance(inner, tuple) and inner and isinstance(inner[0], Exception):
                raise inner[0] from None
            raise
        return answers

    # -- single asks ------------------------------------------------------------------------------
    async def send_request(self, method: str, params: Any = None, *, timeout: float | None = _DEFAULT) -> Any:
        """Send a request to the client and wait (at most ``timeout``, default the server's
        ``request_timeout``) for its result. The client's error answer raises JsonRpcError;
        no answer in time raises RequestTimeout (the client is told to cancel).

        In a modern request there are no such requests: ``elicitation/create``,
        ``sampling/createMessage`` and ``roots/list`` become asks of the multi round-trip request
        (the client must have declared the capability); any other method is a CapabilityError."""
        if self._closed:
            raise RuntimeError(f"the {self.method} request this Context served has finished")
        if not self.revision.has_handshake:
            if method not in INPUT_METHODS:
                raise CapabilityError(
                    f"protocol revision {self.revision.version} has no requests from the server to the "
                    f"client; {method} cannot be sent"
                )
            name = method.split("/", 1)[0]
            declared = self._client_capability(name, method)
            mode = params.get("mode", "form") if isinstance(params, dict) else "form"
            # an empty elicitation capability means form mode only
            if name == "elicitation" and mode not in (declared or {"form": {}}):
                raise self._missing(
                    f"the client did not declare {mode}-mode elicitation", {"elicitation": {mode: {}}}
                )
        if method in INPUT_METHODS and (
            current_input_channel.get() is not None or not self.revision.has_handshake
        ):
            key = self._generated_key(method)
            self._claim((key,))
            request = InputRequest(method, params, _as_is).to_wire()
            return (await self._gather({key: request}, timeout))[key]
        await self._flush()
        if timeout is _DEFAULT:
            timeout = self.session.server.request_timeout
        return await self._rc.send_request(method, params, timeout=timeout)

    async def sample(
        self,
        messages: Iterable[str | dict[str, Any]],
        max_tokens: int = 100,
        system_prompt: str | None = None,
        *,
        key: str | None = None,
        timeout: float | None = _DEFAULT,
        **params: Any,
    ) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage``); returns the CreateMessageResult.

        ``messages``: strs (user text), content blocks (user messages) or ``{"role", "content"}``.
        More fields as keywords: ``temperature``, ``stop_sequences``, ``model_preferences``,
        ``include_context``, ``metadata``, and (2025-11-25, client capability ``sampling.tools``)
        ``tools`` and ``tool_choice``; other keywords are sent as they are named. ``key`` names the
        input request in 2026-07-28 (default ``sample-<n>``).
        """
        request = self.sampling(messages, max_tokens, system_prompt, **params)
        return await self._ask_one(request, key, timeout)

    @overload
    async def elicit(
        self, message: str, requested_schema: type[T], *, key: str | None = None, timeout: float | None = ...
    ) -> Elicited[T]: ...

    @overload
    async def elicit(
        self,
        message: str,
        requested_schema: dict[str, Any],
        *,
        key: str | None = None,
        timeout: float | None = ...,
    ) -> dict[str, Any]: ...

    async def elicit(
        self,
        message: str,
        requested_schema: dict[str, Any] | type[Any],
        *,
        key: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> Any:
        """Ask the user to fill a form (``elicitation/create``, 2025-06-18+); returns the ElicitResult
        (``{"action": "accept" | "decline" | "cancel", "content"?: {...}}``).

        ``requested_schema`` is a flat object schema of string / number / integer / boolean / enum
        fields (see :mod:`jsonrpc_mcp.server._elicitation`), or a dataclass, TypedDict or pydantic
        model of such fields: then the answer is an :class:`Elicited` whose ``content`` is one of
        it. Never ask for secrets in a form. ``key`` names the input request in 2026-07-28 (default
        ``elicit-<n>``).
        """
        if isinstance(requested_schema, dict):
            return await self._ask_one(self.elicitation(message, requested_schema), key, timeout)
        schema, convert = _form_of(requested_schema)
        answer = await self._ask_one(self.elicitation(message, schema), key, timeout)
        if answer.get("action") != "accept":
            return Elicited(answer.get("action", "cancel"))
        fields = schema.get("properties", {})  # (what the client added beyond the form is left out)
        content = {k: v for k, v in (answer.get("content") or {}).items() if k in fields}
        try:
            return Elicited("accept", convert(content))
        except (TypeError, ValueError) as exc:  # the client's answer does not fit the form it was sent
            raise InvalidParams(
                f"Invalid params: the accepted form does not fit {requested_schema.__name__}: {exc}"
            ) from None

    async def elicit_url(
        self,
        message: str,
        url: str,
        elicitation_id: str | None = None,
        *,
        key: str | None = None,
        timeout: float | None = _DEFAULT,
    ) -> dict[str, Any]:
        """Send the user to ``url`` (URL-mode ``elicitation/create``, 2025-11-25; for anything secret,
        e.g. credentials or payments); returns the ElicitResult. ``elicitation_id`` defaults to a new
        UUID; announce the out-of-band completion with ``ctx.session.notify_elicitation_complete``.
        Modern requests (2026-07-28) have no elicitation ids: ``elicitation_id`` is not sent there,
        and the client answers once the user is done."""
        return await self._ask_one(self.elicitation_url(message, url, elicitation_id), key, timeout)

    async def list_roots(
        self, *, key: str | None = None, timeout: float | None = _DEFAULT
    ) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``): ``[{"uri": "file://...", "name"?: ...}]``."""
        return await self._ask_one(self.roots(), key, timeout)

    # -- capability checks ------------------------------------------------------------------------
    def _check_can_ask(self) -> None:
        """Modern requests other than tools/call, prompts/get and resources/read cannot ask."""
        if self._exchange is None and not self.revision.has_handshake and current_input_channel.get() is None:
            raise CapabilityError(
                f"a {self.method} request cannot ask the client for input in protocol revision "
                f"{self.revision.version}; only {', '.join(sorted(self.revision.input_request_methods))} can"
            )

    def _missing(self, message: str, required: dict[str, Any]) -> CapabilityError:
        """The error for a capability the client did not declare: -32021 in modern requests."""
        if self.revision.has_handshake:
            return CapabilityError(message, {"requiredCapabilities": required})
        return MissingClientCapability(message, required)

    def _client_capability(self, name: str, method: str) -> dict[str, Any]:
        self._check_can_ask()
        declared = self.client_capabilities.get(name)
        if not isinstance(declared, dict):
            raise self._missing(
                f"the client did not declare the {name!r} capability, so the server cannot send {method}",
                {name: {}},
            )
        return declared


# -- the client's answers, checked (the same on every path) ------------------------------------------
def elicit_result(result: dict[str, Any]) -> dict[str, Any]:
    action = result.get("action")
    if action not in _ACTIONS:
        raise ClientError(
            f"the client's elicitation result has action {action!r}, not accept/decline/cancel",
            code=INTERNAL_ERROR,
        )
    return result


def sampling_result(result: dict[str, Any]) -> dict[str, Any]:
    if "role" not in result or "content" not in result or not isinstance(result.get("model"), str):
        raise ClientError(
            "the client's sampling result lacks 'role', 'content' or 'model'", code=INTERNAL_ERROR
        )
    return result


def roots_result(result: dict[str, Any]) -> list[dict[str, Any]]:
    roots = result.get("roots")
    if not isinstance(roots, list) or not all(isinstance(r, dict) and "uri" in r for r in roots):
        raise ClientError("the client's roots/list result has no valid 'roots' list", code=INTERNAL_ERROR)
    return roots


def _as_is(result: dict[str, Any]) -> dict[str, Any]:
    return result


def _sampling_message(item: str | dict[str, Any], revision: Revision) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, dict) and "role" in item and "content" in item:
        content = item["content"]
        if isinstance(content, dict):
            fitted = for_revision(content, revision)
            return item if fitted is content else {**item, "content": fitted}
        if isinstance(content, list):
            blocks = fit_all(content, revision)
            return item if blocks is content else {**item, "content": blocks}
        return item
    if is_content_block(item):
        assert isinstance(item, dict)
        return {"role": "user", "content": for_revision(item, revision)}
    raise TypeError(f"a sampling message is a str, a content block or {{'role', 'content'}}, not {item!r}")
