"""Build JSON Schemas from Python signatures, type hints and docstrings (for the decorators).

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``, ``list[T]``,
``tuple[...]``, ``set[T]``, ``dict[str, T]``, ``X | Y`` / ``Optional[X]``, ``Literal[...]``, ``Enum``
subclasses, ``TypedDict`` and dataclasses, ``datetime``, ``date``, ``time``, ``timedelta``, ``UUID``,
``Path`` and ``Decimal`` (see :mod:`._types`), pydantic models and ``Field`` (when the developer uses
pydantic), and ``Annotated[T, ...]`` with an :class:`Arg`, a description string, annotated-types constraints
(``Ge(1)``, ``MaxLen(20)``...) or a pydantic ``Field``. Anything else is a registration error that
names the parameter, so the developer can pass an explicit schema instead.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Union

import orjson

from . import _types

__all__ = ["Arg", "FunctionSpec", "describe_function", "schema_for_type"]


class Arg:
    """Extra schema for one parameter: ``Annotated[int, Arg("How many", minimum=1, maximum=50)]``."""

    __slots__ = ("description", "schema")

    def __init__(self, description: str | None = None, **schema: Any) -> None:
        self.description = description
        self.schema = schema


_SIMPLE: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def schema_for_type(tp: Any, where: str = "value", *, output: bool = False) -> dict[str, Any]:
    """The JSON Schema for a Python annotation; raises TypeError for what cannot be expressed.

    ``output``: the schema of a returned value (pydantic describes a model's serialized form)."""
    if tp is Any or tp is object or tp is inspect.Parameter.empty:
        return {}
    if tp in _SIMPLE:
        return {"type": _SIMPLE[tp]}
    if _types.uses_pydantic(tp):
        try:
            return _types.pydantic_schema(tp, output=output)
        except Exception as exc:
            raise TypeError(f"{where}: pydantic cannot describe {tp!r}: {exc}") from None
    scalar = _types.scalar_schema(tp, output=output)
    if scalar is not None:
        return scalar
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)

    def inner(sub: Any, at: str = where) -> dict[str, Any]:
        return schema_for_type(sub, at, output=output)

    if origin is typing.Annotated:
        schema = dict(inner(args[0]))
        for extra in args[1:]:
            if isinstance(extra, Arg):
                if extra.description:
                    schema["description"] = extra.description
                schema.update(extra.schema)
            elif isinstance(extra, str):
                schema["description"] = extra
            elif isinstance(extra, Mapping):
                schema.update(extra)
            else:
                keywords = _types.constraint_keywords(extra, schema)
                if keywords:
                    schema.update(keywords)
        return schema
    if origin is Union or origin is types.UnionType:
        members = [inner(a) for a in args]
        if all(set(m) == {"type"} and isinstance(m["type"], str) for m in members):
            return {"type": [m["type"] for m in members]}
        return {"anyOf": members}
    if origin is Literal:
        schema = {"enum": list(args)}
        kinds = {_SIMPLE.get(type(a)) for a in args}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [member.value for member in tp]}
    if origin in (list, Sequence, typing.Sequence, set, frozenset) or tp in (list, set, frozenset):
        schema = {"type": "array"}
        if args:
            schema["items"] = inner(args[0])
        if origin in (set, frozenset) or tp in (set, frozenset):
            schema["uniqueItems"] = True
        return schema
    if origin is tuple or tp is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "items": inner(args[0])} if args else {"type": "array"}
        items = [inner(a) for a in args]
        return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    if origin in (dict, Mapping, typing.Mapping) or tp is dict:
        schema = {"type": "object"}
        if args and args[0] is not str:
            raise TypeError(f"{where}: JSON object keys are strings; {tp!r} cannot be expressed")
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = inner(args[1])
        return schema
    if _is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return {
            "type": "object",
            "properties": {k: inner(v, f"{where}.{k}") for k, v in hints.items()},
            "required": sorted(tp.__required_keys__),
        }
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp, include_extras=True)
        fields = dataclasses.fields(tp)
        required = [
            f.name
            for f in fields
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        if output:  # a returned dataclass always has every field
            required = [f.name for f in fields]
        return {
            "type": "object",
            "properties": {f.name: inner(hints[f.name], f"{where}.{f.name}") for f in fields},
            "required": required,
        }
    raise TypeError(f"{where}: cannot express the annotation {tp!r} as JSON Schema; pass an explicit schema")


# -- docstrings ---------------------------------------------------------------------------------
_HEADERS = (
    "args",
    "arguments",
    "parameters",
    "params",
    "returns",
    "return",
    "raises",
    "yields",
    "example",
    "examples",
    "note",
    "notes",
    "see also",
)
_PARAM_HEADERS = ("args", "arguments", "parameters", "params")
# Patterns, not compiled here: re compiles them on first use (and caches them), so a server whose
# docstrings have no parameter sections never pays the ~0.3 ms of compiling them at start-up.
_REST_PARAM = r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$"
_ENTRY = r"^\*{0,2}(\w+)(?:\s*\([^)]*\))?(\s*):\s*(.*)$"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """(summary, {param: description}) from a Google, NumPy or reST style docstring."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    mode = "summary"
    current: str | None = None
    entry_indent: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        rest = re.match(_REST_PARAM, line) if ":param" in line else None
        if rest:
            mode, current = "rest", rest.group(1)
            params[current] = rest.group(2).strip()
        elif stripped and nxt and set(nxt) == {"-"} and stripped.lower() in _HEADERS:  # NumPy header
            mode = "params" if stripped.lower() in _PARAM_HEADERS else "other"
            current, entry_indent = None, None
            i += 1
        elif stripped.endswith(":") and stripped[:-1].strip().lower() in _HEADERS:  # Google header
            mode = "params" if stripped[:-1].strip().lower() in _PARAM_HEADERS else "other"
            current, entry_indent = None, None
        elif mode == "summary":
            summary.append(line)
        elif mode == "params" and stripped:
            if entry_indent is None:
                entry_indent = _indent(line)
            entry = re.match(_ENTRY, stripped) if _indent(line) <= entry_indent else None
            if entry:
                current = entry.group(1)
                numpy_style = bool(entry.group(2))  # "name : type", the description follows
                params[current] = "" if numpy_style else entry.group(3).strip()
            elif current is not None:
                params[current] = (params[current] + " " + stripped).strip()
        elif mode == "rest" and stripped and current is not None and _indent(line) > 0:
            params[current] = (params[current] + " " + stripped).strip()
        i += 1
    text = "\n".join(summary).strip()
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    return (" ".join(paragraphs[0].split()) if paragraphs else None), params


# -- converting validated JSON into the annotated Python types -------------------------------------
Converter = Callable[[Any], Any]


def converter_for(tp: Any) -> Converter | None:
    """How to turn a validated JSON value into ``tp`` (an Enum member, a dataclass, a tuple, ...).

    None when the JSON value already is what the annotation says (str, int, list[str], dict, ...).
    """
    if _types.uses_pydantic(tp):
        return _types.pydantic_converter(tp)
    scalar = _types.scalar_converter(tp)
    if scalar is not None:
        return scalar
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return converter_for(args[0])
    if origin is Union or origin is types.UnionType:
        members = [a for a in args if a is not type(None)]
        converters = [converter_for(m) for m in members]
        if all(c is None for c in converters):
            return None  # every member takes the JSON value as it is
        if len(members) == 1:
            inner = converters[0]
            assert inner is not None
            return lambda value: None if value is None else inner(value)
        return _union_converter(members, converters)
    if tp is int:
        return _whole  # JSON Schema's "integer" admits 2.0; an int parameter gets 2
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if origin in (list, Sequence, typing.Sequence) and args:
        item = converter_for(args[0])
        return None if item is None else (lambda value: [item(v) for v in value])
    if origin in (set, frozenset) or tp in (set, frozenset):
        kind: Any = frozenset if (origin or tp) is frozenset else set
        return _collection(kind, converter_for(args[0]) if args else None)
    if origin is tuple or tp is tuple:
        if args and not (len(args) == 2 and args[1] is Ellipsis):
            each = [converter_for(a) or _identity for a in args]
            return lambda value: tuple(c(v) for c, v in zip(each, value, strict=False))
        return _collection(tuple, converter_for(args[0]) if args else None)
    if origin in (dict, Mapping, typing.Mapping) and len(args) == 2:
        val = converter_for(args[1])
        return None if val is None else (lambda value: {k: val(v) for k, v in value.items()})
    if _is_typeddict(tp):
        fields = _field_converters(typing.get_type_hints(tp, include_extras=True))
        if not fields:
            return None
        return lambda value: {k: (fields[k](v) if k in fields else v) for k, v in value.items()}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp, include_extras=True)
        fields = _field_converters({f.name: hints[f.name] for f in dataclasses.fields(tp)})
        cls = tp
        return lambda value: cls(**{k: (fields[k](v) if k in fields else v) for k, v in value.items()})
    return None


def _union_converter(members: list[Any], converters: list[Converter | None]) -> Converter:
    """``A | B | ...``: the value becomes the first member, in the annotation's order, whose schema it
    fits and whose conversion takes it (``{"x": 1, "y": 2}`` is not a ``A(x)`` dataclass: then ``B``).

    The member schemas are compiled on the first call (registration stays cheap)."""
    checks: list[Any] = []

    def convert(value: Any) -> Any:
        if value is None:
            return None  # an Optional's None (schema validation let it through)
        if not checks:
            from ._schema import CompiledSchema

            checks.extend(CompiledSchema(schema_for_type(m)) for m in members)
        problems: list[str] = []
        for member, check, conv in zip(members, checks, converters, strict=True):
            if check.errors(value) is not None:
                continue
            if conv is None:
                return value
            try:
                return conv(value)
            except (TypeError, ValueError) as exc:
                problems.append(f"{getattr(member, '__name__', member)}: {exc}")
        names = " | ".join(getattr(m, "__name__", repr(m)) for m in members)
        raise ValueError(f"fits none of {names}" + (f" ({'; '.join(problems)})" if problems else ""))

    return convert


def _identity(value: Any) -> Any:
    return value


def _whole(value: Any) -> Any:
    return int(value) if type(value) is float else value


def _collection(kind: Callable[[Any], Any], item: Converter | None) -> Converter:
    """A JSON array into ``kind`` (set, frozenset, tuple), converting each item when needed."""
    if item is None:
        return kind
    convert = item
    return lambda value: kind(convert(v) for v in value)


def _field_converters(hints: dict[str, Any]) -> dict[str, Converter]:
    out: dict[str, Converter] = {}
    for name, hint in hints.items():
        conv = converter_for(hint)
        if conv is not None:
            out[name] = conv
    return out


# -- functions ----------------------------------------------------------------------------------
class FunctionSpec:
    """What the decorators learn from a function.

    (A plain class, not a dataclass: defining a dataclass costs about 0.4 ms at import.)
    """

    __slots__ = (
        "accepts_var_kwargs",
        "context_param",
        "converters",
        "description",
        "input_schema",
        "param_descriptions",
        "params",
        "required",
        "returns",
    )

    def __init__(
        self,
        description: str | None,
        input_schema: dict[str, Any],
        params: list[str],  # parameters filled from arguments
        context_param: str | None,  # parameter that receives the Context
        accepts_var_kwargs: bool,
        required: list[str],
        param_descriptions: dict[str, str],
        converters: dict[str, Converter] | None = None,
        returns: Any = inspect.Parameter.empty,  # the return annotation
    ) -> None:
        self.description = description
        self.input_schema = input_schema
        self.params = params
        self.context_param = context_param
        self.accepts_var_kwargs = accepts_var_kwargs
        self.required = required
        self.param_descriptions = param_descriptions
        self.converters: dict[str, Converter] = {} if converters is None else converters
        self.returns = returns


def _context_annotation(annotation: Any, context_type: type) -> bool:
    """``Context``, ``Annotated[Context, ...]``, ``Context | None`` and ``Optional[Context]``."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            return False
        annotation = members[0]
    return isinstance(annotation, type) and issubclass(annotation, context_type)


def _annotated_callable(fn: Any) -> Any:
    """What carries the annotations: the function itself, a partial's function, an object's __call__."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn) or inspect.isbuiltin(fn):
        return fn
    return type(fn).__call__ if callable(fn) else fn


def _qualname(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None)
    if isinstance(name, str):
        return name
    if isinstance(fn, functools.partial):
        return f"partial({_qualname(fn.func)})"
    return f"{type(fn).__qualname__} instance"


def describe_function(
    fn: Callable[..., Any], context_type: type, *, skip_first: bool = False
) -> FunctionSpec:
    """Inspect ``fn``: its input schema, the Context parameter (by annotation), and its docs."""
    signature = inspect.signature(fn)
    qualname = _qualname(fn)
    try:
        hints = typing.get_type_hints(_annotated_callable(fn), include_extras=True)
    except Exception as exc:
        raise TypeError(f"cannot resolve the type hints of {qualname}: {exc}") from None
    summary, docs = parse_docstring(inspect.getdoc(fn))
    properties: dict[str, Any] = {}
    required: list[str] = []
    params: list[str] = []
    converters: dict[str, Converter] = {}
    context_param: str | None = None
    var_kwargs = False
    for index, (name, param) in enumerate(signature.parameters.items()):
        if skip_first and index == 0:
            continue
        annotation = hints.get(name, inspect.Parameter.empty)
        if _context_annotation(annotation, context_type):
            context_param = name
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            var_kwargs = True
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            raise TypeError(f"{qualname}: parameter {name!r} must be passable by keyword")
        schema = schema_for_type(annotation, f"{qualname}({name})")
        if name in docs and docs[name] and "description" not in schema:
            schema = {**schema, "description": docs[name]}
        if param.default is inspect.Parameter.empty:
            required.append(name)
        else:
            try:
                orjson.dumps(param.default)
            except TypeError:
                pass
            else:
                schema = {**schema, "default": param.default}
        properties[name] = schema
        params.append(name)
        conv = converter_for(annotation)
        if conv is not None:
            converters[name] = conv
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    if b'"$defs"' in orjson.dumps(properties):
        input_schema = _types.hoist_defs(input_schema, qualname)  # pydantic's nested models
    returns = hints.get("return", inspect.Parameter.empty)
    return FunctionSpec(
        summary, input_schema, params, context_param, var_kwargs, required, docs, converters, returns
    )
