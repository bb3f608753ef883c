"""Definitions of tools, resources, resource templates and prompts, and the registries holding them.

A definition knows its wire form for a given revision (fields a revision does not define are left
out) and how to call its handler: keyword arguments from the request, the :class:`Context` to the
parameter annotated with it, async handlers on the event loop, plain functions in a worker thread.
"""

from __future__ import annotations

import base64
import functools
import inspect
import logging
import math
import re
import typing
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio.to_thread

from ..content import fit_annotations, for_revision, is_content_block
from ..errors import CapabilityError, ClientError, RegistrationError
from ..jsonrpc.errors import InternalError, InvalidParams, JsonRpcError
from ..revisions import Revision
from ._boundary import InvalidArguments, to_wire
from ._context import Context
from ._introspect import FunctionSpec, _annotated_callable, _context_annotation, describe_function
from ._output import ToolResult, infer_output, tool_result
from ._schema import CompiledSchema, SchemaDefinitionError
from ._types import conversion_problem, dumps

__all__ = [
    "Completer",
    "Prompt",
    "Registry",
    "Resource",
    "ResourceContent",
    "ResourceTemplate",
    "Tool",
    "ToolResult",
]

logger = logging.getLogger("jsonrpc_mcp.server")

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")  # the 2025-11-25 tool-name rules
MAX_COMPLETION_VALUES = 100


@dataclass(slots=True)
class ResourceContent:
    """One item of a ``resources/read`` result; give ``text`` or ``blob`` (bytes)."""

    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    uri: str | None = None
    meta: dict[str, Any] | None = None

    def to_wire(self, uri: str, default_mime: str | None, revision: Revision) -> dict[str, Any]:
        """The ``contents`` entry for a read of ``uri`` (text, or base64 ``blob``) in ``revision``."""
        out: dict[str, Any] = {"uri": self.uri or uri}
        mime = self.mime_type or default_mime
        if mime:
            out["mimeType"] = mime
        if self.blob is not None:
            out["blob"] = base64.b64encode(self.blob).decode("ascii")
        else:
            out["text"] = self.text if self.text is not None else ""
        if self.meta and revision.has_definition_meta:
            out["_meta"] = self.meta
        return out


class _Handler:
    """A user function and how to call it."""

    __slots__ = (
        "context_param",
        "converters",
        "fn",
        "is_async",
        "name",
        "never_waits",
        "params",
        "plain",
        "tool",
        "var_kwargs",
    )

    def __init__(
        self, fn: Callable[..., Any], spec: FunctionSpec, name: str = "", tool: bool = False
    ) -> None:
        self.fn = fn
        self.name = name  # "the tool's name", or "resource 'uri'" / "prompt 'name'" for messages
        self.tool = tool
        call = None if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)
        self.params = frozenset(spec.params)
        self.context_param = spec.context_param
        self.var_kwargs = spec.accepts_var_kwargs
        self.converters = spec.converters
        # a function taking its arguments as they come (no Context, no conversions), async or not
        self.plain = not self.converters and self.context_param is None
        self.never_waits: bool | None = None  # an async def with no await in it? (see ._waits)

    def in_thread(self, kwargs: dict[str, Any]) -> Coroutine[Any, Any, Any]:
        """Run the (plain ``def``) function with ``kwargs`` in a worker thread: await the result. A
        plain function handing on anyio's coroutine, so that a ``def`` handler's call has no more
        coroutine layers than an ``async def`` one's."""
        return anyio.to_thread.run_sync(functools.partial(self.fn, **kwargs), abandon_on_cancel=True)

    async def __call__(self, arguments: dict[str, Any], ctx: Context | None) -> Any:
        if self.plain and (self.var_kwargs or self.params.issuperset(arguments)):
            # (** makes the function its own copy)
            return await (self.fn(**arguments) if self.is_async else self.in_thread(arguments))
        if self.var_kwargs:
            kwargs = dict(arguments)
        else:
            kwargs = {k: v for k, v in arguments.items() if k in self.params}
        for name, convert in self.converters.items():  # JSON -> the annotated type (Enum, dataclass...)
            if name in kwargs:
                try:
                    kwargs[name] = convert(kwargs[name])
                except (ValueError, TypeError) as exc:  # valid JSON the type refuses: a bad argument
                    problems = conversion_problem(name, exc)
                    if self.tool:
                        raise InvalidArguments(self.name, problems) from None
                    raise InvalidParams(f"Invalid params: {self.name}: " + "; ".join(problems)) from None
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        if self.is_async:
            return await self.fn(**kwargs)
        return await self.in_thread(kwargs)


def _describe(fn: Callable[..., Any], what: str) -> FunctionSpec:
    if not callable(fn):
        raise RegistrationError(f"{what}: the handler must be callable, got {fn!r}")
    try:
        return describe_function(fn, Context)
    except TypeError as exc:
        raise RegistrationError(f"{what}: {exc}") from None


def _common(out: dict[str, Any], revision: Revision, title: str | None, icons: Any, meta: Any) -> None:
    if title and revision.has_titles:
        out["title"] = title
    if icons and revision.has_icons:
        out["icons"] = icons
    if meta and revision.has_definition_meta:
        out["_meta"] = meta


class Tool:
    """A registered tool."""

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        what = f"tool {name!r}"
        if not isinstance(name, str) or not name:
            raise RegistrationError("a tool needs a non-empty string name")
        spec = _describe(fn, what)
        schema = input_schema if input_schema is not None else spec.input_schema
        self.wrap_output = False  # the value travels as {"result": value} (see ._output)
        if output_schema is None:
            inferred = infer_output(spec.returns, f"{what} return annotation")
            if inferred is not None:
                output_schema, self.wrap_output = inferred
        try:
            self.input_validator = CompiledSchema(schema, what=f"{what} inputSchema", require_object=True)
            self.output_validator = (
                CompiledSchema(output_schema, what=f"{what} outputSchema", require_object=True)
                if output_schema is not None
                else None
            )
        except SchemaDefinitionError as exc:
            raise RegistrationError(str(exc)) from None
        self.name = name
        self.description = description if description is not None else spec.description
        self.input_schema = schema
        self.output_schema = output_schema
        self.title = title
        self.annotations = dict(annotations) if annotations else None
        self.icons = icons
        self.meta = meta
        self.handler = _Handler(fn, spec, name, tool=True)
        # (input_schema, its x-mcp-header parameters): kept by jsonrpc_mcp.http._headers
        self.header_parameters: tuple[dict[str, Any], list[tuple[tuple[str, ...], str]]] | None = None

    def to_wire(self, revision: Revision) -> dict[str, Any]:
        """The tool's ``tools/list`` entry, as ``revision`` spells it."""
        out: dict[str, Any] = {"name": self.name}
        _common(out, revision, self.title, self.icons, self.meta)
        if self.description:
            out["description"] = self.description
        out["inputSchema"] = self.input_schema
        if self.output_schema is not None and revision.has_output_schema:
            out["outputSchema"] = self.output_schema
        if self.annotations and revision.has_tool_annotations:
            out["annotations"] = self.annotations
        return out

    def check_arguments(self, arguments: dict[str, Any]) -> list[str] | None:
        """The schema errors of ``arguments`` against the input schema, or None when they are valid."""
        return self.input_validator.errors(arguments)

    def to_result(self, value: Any, revision: Revision) -> dict[str, Any]:
        """Turn what the handler returned into a ``CallToolResult`` (see :mod:`._output`)."""
        if type(value) is str and self.output_validator is None:  # the common case, first
            return {"content": [{"type": "text", "text": value}]}
        return tool_result(
            value, revision, name=self.name, validator=self.output_validator, wrap=self.wrap_output
        )


class Resource:
    """A registered resource with a fixed URI."""

    def __init__(
        self,
        uri: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        spec = _describe(fn, f"resource {uri!r}")
        variables = set(self.template.variables) if isinstance(self, ResourceTemplate) else set()
        unfilled = [p for p in spec.required if p not in variables]
        if unfilled:
            raise RegistrationError(
                f"resource {uri!r}: the URI gives no value for the handler's required parameter(s) "
                f"{', '.join(unfilled)} (give them defaults, or name them in a URI template)"
            )
        self.uri = uri
        self.name = name or getattr(fn, "__name__", uri)
        self.title = title
        self.description = description if description is not None else spec.description
        self.mime_type = mime_type
        self.size = size
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        self.handler = _Handler(fn, spec, f"resource {uri!r}")

    def to_wire(self, revision: Revision) -> dict[str, Any]:
        """The resource's ``resources/list`` entry, as ``revision`` spells it."""
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        _common(out, revision, self.title, self.icons, self.meta)
        if self.description:
            out["description"] = self.description
        if self.mime_type:
            out["mimeType"] = self.mime_type
        if self.size is not None:
            out["size"] = self.size
        if self.annotations:
            out["annotations"] = fit_annotations(self.annotations, revision)
        return out

    async def read(self, uri: str, variables: dict[str, str], ctx: Context) -> list[dict[str, Any]]:
        """Call the handler (with the template's ``variables``) and return the ``contents`` of the read;
        raises -32603 when it returns what cannot be content."""
        value = await _run(self.handler, variables, ctx, f"resource {uri!r}")
        try:
            return contents_from(value, uri, self.mime_type, ctx.revision)
        except TypeError:
            logger.error("resource %r: the handler returned %s, which is not JSON", uri, type(value).__name__)
            raise InternalError(
                f"Internal error: the handler of resource {uri!r} returned a {type(value).__name__}, "
                "which is not text, bytes or JSON"
            ) from None


class ResourceTemplate(Resource):
    """A registered resource template (RFC 6570); its handler receives the template variables."""

    def __init__(self, uri_template: str, fn: Callable[..., Any], **kwargs: Any) -> None:
        from ._uritemplate import UriTemplate  # on first use: most servers have no templates

        try:
            self.template = UriTemplate(uri_template)
        except ValueError as exc:
            raise RegistrationError(str(exc)) from None
        super().__init__(uri_template, fn, **kwargs)
        properties = _describe(fn, f"resource {uri_template!r}").input_schema.get("properties", {})
        self._casts = {
            name: cast
            for name in self.template.variables
            if (cast := _CASTS.get(_scalar_type(properties.get(name)))) is not None
        }
        missing = set(self.template.variables) - set(self.handler.params)
        if missing and not self.handler.var_kwargs:
            raise RegistrationError(
                f"resource template {uri_template!r}: the handler has no parameter for {sorted(missing)}"
            )

    def match(self, uri: str) -> dict[str, Any] | None:
        """The template's variables in ``uri``, each converted to its parameter's annotated type
        (``int``, ``float``, ``bool``); None when ``uri`` does not match, or a value is not of
        that type (``items://abc`` is not ``items://{id}`` with ``id: int``: another template or
        "not found" answers)."""
        variables: dict[str, Any] | None = self.template.match(uri)
        if variables is None or not self._casts:
            return variables
        for name, cast in self._casts.items():
            value = variables.get(name)
            if isinstance(value, str):
                try:
                    variables[name] = cast(value)
                except ValueError:
                    return None
        return variables

    def to_wire(self, revision: Revision) -> dict[str, Any]:
        """The template's ``resources/templates/list`` entry, as ``revision`` spells it."""
        out = super().to_wire(revision)
        out["uriTemplate"] = out.pop("uri")
        out.pop("size", None)
        return out


def _integer(text: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise ValueError(text)
    return int(text)


def _number(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or text.strip() != text or "_" in text:
        raise ValueError(text)
    return value


def _boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ValueError(text)
    return lowered == "true"


_INTEGER = re.compile(r"-?[0-9]+")
_CASTS: dict[str | None, Callable[[str], Any]] = {"integer": _integer, "number": _number, "boolean": _boolean}


def _scalar_type(schema: Any) -> str | None:
    """The JSON type a parameter's schema names, ``null`` aside (``int | None`` is ``integer``)."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind is None and isinstance(schema.get("anyOf"), list):
        kinds = [
            _scalar_type(s) for s in schema["anyOf"] if not (isinstance(s, dict) and s.get("type") == "null")
        ]
        kind = kinds[0] if len(kinds) == 1 else None
    return kind if isinstance(kind, str) else None


def contents_from(value: Any, uri: str, mime_type: str | None, revision: Revision) -> list[dict[str, Any]]:
    """str -> text, bytes -> blob, ResourceContent(s) as given, anything else -> JSON text."""
    if isinstance(value, ResourceContent):
        return [value.to_wire(uri, mime_type, revision)]
    if isinstance(value, list) and value and all(isinstance(v, ResourceContent) for v in value):
        return [v.to_wire(uri, mime_type, revision) for v in value]
    if isinstance(value, str):
        return [ResourceContent(text=value).to_wire(uri, mime_type, revision)]
    if isinstance(value, (bytes, bytearray)):
        blob = ResourceContent(blob=bytes(value))
        return [blob.to_wire(uri, mime_type or "application/octet-stream", revision)]
    text = dumps(value).decode()  # (pydantic models, dataclasses, datetimes... too)
    return [ResourceContent(text=text).to_wire(uri, mime_type or "application/json", revision)]


async def _run(handler: _Handler, arguments: dict[str, Any], ctx: Context, what: str) -> Any:
    """Call a resource or prompt handler; what escapes it becomes a JSON-RPC error (see
    :func:`._boundary.to_wire`: an unexpected failure is -32603, logged with its traceback)."""
    try:
        return await handler(arguments, ctx)
    except Exception as exc:
        error = to_wire(exc, ctx.revision, ctx.method, handler=what, mask=ctx.session.server.mask_errors)
        if error is exc:
            raise
        assert isinstance(error, JsonRpcError)
        raise error from None


class Prompt:
    """A registered prompt; its arguments come from the handler's parameters (all strings)."""

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        *,
        title: str | None = None,
        description: str | None = None,
        arguments: list[dict[str, Any]] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        spec = _describe(fn, f"prompt {name!r}")
        self.name = name
        self.title = title
        self.description = description if description is not None else spec.description
        if arguments is None:
            arguments = []
            for param in spec.params:
                arg: dict[str, Any] = {"name": param}
                doc = spec.param_descriptions.get(param)
                if doc:
                    arg["description"] = doc
                arg["required"] = param in spec.required
                arguments.append(arg)
        self.arguments = arguments
        self.icons = icons
        self.meta = meta
        self.handler = _Handler(fn, spec, f"prompt {name!r}")

    def to_wire(self, revision: Revision) -> dict[str, Any]:
        """The prompt's ``prompts/list`` entry, as ``revision`` spells it."""
        out: dict[str, Any] = {"name": self.name}
        _common(out, revision, self.title, self.icons, self.meta)
        if self.description:
            out["description"] = self.description
        if self.arguments:
            args = (
                self.arguments
                if revision.has_titles
                else [{k: v for k, v in a.items() if k != "title"} for a in self.arguments]
            )
            out["arguments"] = args
        return out

    def check_arguments(self, arguments: Any) -> dict[str, str]:
        """The arguments as given (None: none), checked: an object of strings, the required ones
        present and none unknown; raises :class:`InvalidParams` otherwise."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidParams(f"Invalid params: arguments of prompt {self.name!r} must be an object")
        bad = [k for k, v in arguments.items() if not isinstance(v, str)]
        if bad:
            raise InvalidParams(f"Invalid params: prompt arguments must be strings: {', '.join(sorted(bad))}")
        known = {a["name"] for a in self.arguments}
        unknown = sorted(set(arguments) - known)
        if unknown and not self.handler.var_kwargs:
            raise InvalidParams(f"Invalid params: prompt {self.name!r} has no argument {', '.join(unknown)}")
        missing = [a["name"] for a in self.arguments if a.get("required") and a["name"] not in arguments]
        if missing:
            raise InvalidParams(
                f"Invalid params: prompt {self.name!r} is missing required argument(s): {', '.join(missing)}"
            )
        return arguments

    async def render(self, arguments: dict[str, str], ctx: Context) -> dict[str, Any]:
        """Call the handler and return the GetPromptResult (what it returned turned into messages)."""
        value = await _run(self.handler, arguments, ctx, f"prompt {self.name!r}")
        revision = ctx.revision
        if isinstance(value, dict) and "messages" in value:
            result = dict(value)
            messages = result["messages"]
            if isinstance(messages, list):
                result["messages"] = [_message(item, revision) for item in messages]
        else:
            items = value if isinstance(value, list) else [value]
            result = {"messages": [_message(item, revision) for item in items]}
        if self.description and "description" not in result:
            result["description"] = self.description
        return result


def _message(item: Any, revision: Revision) -> dict[str, Any]:
    """A prompt message: a str or a content block (user messages), or ``{"role", "content"}``."""
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, dict) and "role" in item and "content" in item:
        content = item["content"]
        if type(content) is dict:
            fitted = for_revision(content, revision)
            if fitted is not content:
                return {**item, "content": fitted}
        return item
    if is_content_block(item):
        return {"role": "user", "content": for_revision(item, revision)}
    raise InternalError("Internal error: a prompt returned something that is not a message")


class Completer:
    """A completion handler: ``fn(value, context)`` -> a list of values, or ``{"values", "total"?,
    "hasMore"?}``. It may take fewer parameters (``fn(value)``), and a Context parameter."""

    __slots__ = ("context_param", "fn", "is_async", "names", "what")

    def __init__(self, fn: Callable[..., Any], what: str) -> None:
        if not callable(fn):
            raise RegistrationError(f"{what}: the handler must be callable, got {fn!r}")
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise RegistrationError(f"{what}: cannot read the handler's signature: {exc}") from None
        try:
            hints = typing.get_type_hints(_annotated_callable(fn))
        except Exception:
            hints = {}
        names: list[str] = []
        context_param = None
        for name, param in signature.parameters.items():
            if _context_annotation(hints.get(name), Context):
                context_param = name
            elif param.kind is inspect.Parameter.POSITIONAL_ONLY:
                raise RegistrationError(f"{what}: parameter {name!r} must be passable by keyword")
            elif param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
                if len(names) == 2 and param.default is inspect.Parameter.empty:
                    raise RegistrationError(
                        f"{what}: the handler takes (value, context); {name!r} has no default"
                    )
                names.append(name)
        self.fn = fn
        self.what = what
        self.names = names[:2]
        self.context_param = context_param
        call = None if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)

    async def __call__(self, value: str, context: dict[str, str], ctx: Context) -> dict[str, Any]:
        kwargs: dict[str, Any] = dict(zip(self.names, (value, context)[: len(self.names)], strict=True))
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        try:
            if self.is_async:
                result = await self.fn(**kwargs)
            else:
                result = await anyio.to_thread.run_sync(
                    functools.partial(self.fn, **kwargs), abandon_on_cancel=True
                )
        except (CapabilityError, ClientError) as exc:
            raise InternalError(f"Internal error: {self.what} failed: {exc.message}") from None
        except JsonRpcError:
            raise
        except Exception as exc:
            logger.exception("%s: the handler raised", self.what)
            raise InternalError(f"Internal error: {self.what} failed: {type(exc).__name__}: {exc}") from None
        return completion_values(result, self.what)


def completion_values(result: Any, what: str) -> dict[str, Any]:
    """A completion handler's answer as a ``completion`` object: at most 100 values (more are cut,
    with ``total`` and ``hasMore: true``)."""
    total: Any = None
    has_more: Any = None
    if isinstance(result, dict):
        values = result.get("values", [])
        total = result.get("total")
        has_more = result.get("hasMore")
    else:
        values = result
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        values = list(values) if isinstance(values, Iterator) else None
    if values is None or not all(isinstance(v, str) for v in values):
        logger.error("%s returned %r, not a list of strings", what, result)
        raise InternalError(f"Internal error: {what} did not return a list of strings")
    values = list(values)
    if len(values) > MAX_COMPLETION_VALUES:
        total = total if isinstance(total, int) and total >= len(values) else len(values)
        values = values[:MAX_COMPLETION_VALUES]
        has_more = True
    out: dict[str, Any] = {"values": values}
    if isinstance(total, int) and not isinstance(total, bool):
        out["total"] = total
    if isinstance(has_more, bool):
        out["hasMore"] = has_more
    return out


T = TypeVar("T")


class Registry(Generic[T]):
    """Named definitions in registration order; every change bumps ``generation`` and is reported."""

    def __init__(self, kind: str, on_change: Callable[[str], None]) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._on_change = on_change
        self.generation = 0

    def add(self, key: str, item: T, *, replace: bool = False) -> None:
        if key in self._items and not replace:
            raise RegistrationError(f"a {self.kind} named {key!r} is already registered")
        self._items[key] = item
        self._changed()

    def remove(self, key: str) -> bool:
        if self._items.pop(key, None) is None:
            return False
        self._changed()
        return True

    def _changed(self) -> None:
        self.generation += 1
        self._on_change(self.kind)

    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def values(self) -> list[T]:
        return list(self._items.values())

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items
