"""Calling an operation: a tool's arguments as an HTTP request (on httpx), its answer as a result.

Path parameters are percent-encoded into the path; query parameters follow the ``form`` style
(an array repeats the key unless ``explode`` is false, then it is comma-joined; ``deepObject``
gives ``key[prop]=value``); headers are sent as text; the body as JSON, or form-encoded, or as
text, by the operation's media type. A 2xx answer is the tool's result (JSON: structured content
when the operation has an output schema; text otherwise); any other status, and a request that
fails on the network, is the tool's error (``isError``), in one line that names the operation by
its path template, the status and the API's own message, with the values of the configured headers
cut out (no token or key ever appears in a result, a log line or an exception).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import orjson

from ..errors import ToolError
from ..server import ToolResult
from ._document import Argument, Operation

if TYPE_CHECKING:
    import httpx

__all__ = ["Caller", "call_operation"]

logger = logging.getLogger("jsonrpc_mcp.openapi")

MAX_ERROR_TEXT = 300  # characters of the API's error body quoted in a tool error
_SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie", "api-key", "token", "secret", "key")


class Caller:
    """The HTTP client the tools share: the one given, or one made on first use (and closed by
    :meth:`aclose`), with the base URL and the headers every request carries."""

    def __init__(
        self, base_url: str, client: httpx.AsyncClient | None, headers: dict[str, str], timeout: float
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.given = client
        self.owned: httpx.AsyncClient | None = None
        self.headers = dict(headers)
        self.timeout = timeout

    def client(self) -> httpx.AsyncClient:
        if self.given is not None:
            return self.given
        if self.owned is None:
            try:
                import httpx
            except ImportError:  # pragma: no cover - the openapi extra
                raise RuntimeError(
                    'OpenAPI tools call their API with httpx: pip install "jsonrpc-mcp[openapi]"'
                ) from None
            self.owned = httpx.AsyncClient(timeout=self.timeout, follow_redirects=True)
        return self.owned

    async def aclose(self) -> None:
        owned, self.owned = self.owned, None
        if owned is not None:
            await owned.aclose()

    def secrets(self) -> list[str]:
        """The header values no message may show (ours, and the client's sensitive ones)."""
        values = [v for v in self.headers.values() if v]
        client = self.given
        if client is not None:
            values += [
                v for k, v in client.headers.items() if any(s in k.lower() for s in _SECRET_HEADERS) and v
            ]
        return sorted(set(values), key=len, reverse=True)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return orjson.dumps(value).decode()
    return str(value)


def _query(argument: Argument, value: Any) -> list[tuple[str, str]]:
    name = argument.wire_name
    explode = argument.explode if argument.explode is not None else argument.style in (None, "form")
    if isinstance(value, list):
        if explode:
            return [(name, _text(v)) for v in value]
        separator = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(argument.style or "", ",")
        return [(name, separator.join(_text(v) for v in value))]
    if isinstance(value, dict):
        if argument.style == "deepObject":
            return [(f"{name}[{k}]", _text(v)) for k, v in value.items()]
        if explode:
            return [(str(k), _text(v)) for k, v in value.items()]
        return [(name, ",".join(f"{k},{_text(v)}" for k, v in value.items()))]
    return [(name, _text(value))]


def _header(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k},{_text(v)}" for k, v in value.items())
    return _text(value)


async def call_operation(caller: Caller, op: Operation, arguments: dict[str, Any]) -> Any:
    """Send the operation's request with these (validated) arguments; its result or a ToolError."""
    import httpx

    path = op.path
    query: list[tuple[str, str]] = []
    headers = dict(caller.headers)
    body: Any = None
    has_body = False
    fields: dict[str, Any] = {}
    for argument in op.arguments:
        if argument.name not in arguments:
            continue
        value = arguments[argument.name]
        if argument.location == "path":
            path = path.replace("{" + argument.wire_name + "}", quote(_text(value), safe=""))
        elif argument.location == "query":
            if value is not None:
                query.extend(_query(argument, value))
        elif argument.location == "header":
            headers[argument.wire_name] = _header(value)
        elif argument.location == "body":
            body, has_body = value, True
        else:
            fields[argument.wire_name] = value
    if fields:
        body, has_body = fields, True
    options: dict[str, Any] = {"params": query, "headers": headers}
    if has_body:
        media = (op.body_media_type or "application/json").split(";")[0].strip().lower()
        if media == "application/json" or media.endswith("+json"):
            options["content"] = orjson.dumps(body)
            headers["content-type"] = op.body_media_type or "application/json"
        elif media == "application/x-www-form-urlencoded" and isinstance(body, dict):
            options["data"] = {k: _text(v) for k, v in body.items()}
        else:
            options["content"] = body.encode() if isinstance(body, str) else orjson.dumps(body)
            headers["content-type"] = op.body_media_type or "text/plain"
    try:
        response = await caller.client().request(op.method, caller.base_url + path, **options)
    except httpx.HTTPError as exc:  # (its text may hold the URL and its query: not shown)
        logger.info("%s failed: %s", op.key, type(exc).__name__)
        raise ToolError(f"{op.key} failed: {type(exc).__name__} (the API could not be reached)") from None
    if not 200 <= response.status_code < 300:
        raise ToolError(_refusal(caller, op, response))
    return _result(op, response)


def _refusal(caller: Caller, op: Operation, response: httpx.Response) -> str:
    """The one line a failed call is reported in: the operation, the status, the API's message."""
    message = f"{op.key} answered HTTP {response.status_code}"
    if response.reason_phrase:
        message += f" {response.reason_phrase}"
    detail = ""
    try:
        data = response.json()
    except ValueError:
        detail = response.text
    else:
        if isinstance(data, dict):
            picked = next((data[k] for k in ("message", "detail", "error", "title") if data.get(k)), None)
            detail = (
                picked
                if isinstance(picked, str)
                else orjson.dumps(picked if picked is not None else data).decode()
            )
        else:
            detail = orjson.dumps(data).decode()
    detail = " ".join(detail.split())
    for secret in caller.secrets():
        detail = detail.replace(secret, "[redacted]")
    if len(detail) > MAX_ERROR_TEXT:
        detail = detail[:MAX_ERROR_TEXT] + "..."
    return f"{message}: {detail}" if detail else message


def _result(op: Operation, response: httpx.Response) -> Any:
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if not response.content:
        return ToolResult(
            content=[
                {"type": "text", "text": f"HTTP {response.status_code} {response.reason_phrase}".strip()}
            ]
        )
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            value = response.json()
        except ValueError:
            return response.text
        text = [{"type": "text", "text": response.text}]
        if op.output_schema is None:
            return ToolResult(content=text)
        return ToolResult(content=text, structured_content={"result": value} if op.wrap_output else value)
    if content_type.startswith("text/") or not content_type:
        return response.text
    return ToolResult(content=[{"type": "text", "text": f"{len(response.content)} bytes of {content_type}"}])
