"""The restricted JSON Schema of an elicitation form, checked before it is sent.

A form is a flat object: every property is a string (optionally with ``format`` email, uri, date or
date-time, or an ``enum``), a number, an integer or a boolean. 2025-11-25 adds defaults on every
kind, single-select enums with titles (``oneOf`` of ``{const, title}``) and multi-select enums
(``type: array`` whose ``items`` carry the choices). A schema outside these rules is a developer
error (``ValueError``); defaults a revision does not define are left out.
"""

from __future__ import annotations

from typing import Any

from ..revisions import Revision

__all__ = ["check_form_schema"]

_FORMATS = frozenset({"email", "uri", "date", "date-time"})
_NESTING = ("properties", "items", "anyOf", "allOf", "oneOf", "$ref", "additionalProperties")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _titled(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(o, dict) and isinstance(o.get("const"), str) for o in value)
    )


def _check_property(name: str, prop: Any, revision: Revision) -> dict[str, Any]:
    where = f"elicitation field {name!r}"
    if not isinstance(prop, dict):
        raise ValueError(f"{where}: must be a schema object")
    kind = prop.get("type")
    extended = revision.has_extended_elicitation_schema
    allowed_nesting: set[str] = set()
    if kind == "string":
        if "enum" in prop and not _strings(prop["enum"]):
            raise ValueError(f"{where}: 'enum' must be a list of strings")
        if "enumNames" in prop and (
            not _strings(prop["enumNames"]) or len(prop["enumNames"]) != len(prop.get("enum", []))
        ):
            raise ValueError(f"{where}: 'enumNames' must be strings, one per 'enum' value")
        if "oneOf" in prop:
            if not extended:
                raise ValueError(
                    f"{where}: titled enums (oneOf) do not exist in protocol revision {revision.version}; "
                    "use 'enum' (with 'enumNames')"
                )
            if not _titled(prop["oneOf"]):
                raise ValueError(f"{where}: 'oneOf' must list {{'const': str, 'title': str}} options")
            allowed_nesting.add("oneOf")
        if "format" in prop and prop["format"] not in _FORMATS:
            raise ValueError(f"{where}: format {prop['format']!r} is not one of {sorted(_FORMATS)}")
    elif kind == "array":
        if not extended:
            raise ValueError(
                f"{where}: multi-select fields (type 'array') do not exist in protocol revision "
                f"{revision.version}"
            )
        items = prop.get("items")
        ok = isinstance(items, dict) and (
            (items.get("type") == "string" and _strings(items.get("enum")))
            or (_titled(items.get("anyOf")) and set(items) <= {"anyOf", "type"})
        )
        if not ok:
            raise ValueError(
                f"{where}: a multi-select field's 'items' must be {{'type': 'string', 'enum': [...]}} "
                "or {'anyOf': [{'const': ..., 'title': ...}]}"
            )
        allowed_nesting.add("items")
    elif kind not in ("number", "integer", "boolean"):
        raise ValueError(
            f"{where}: forms hold only string, number, integer, boolean (and enum) fields, not {kind!r}"
        )
    nested = [k for k in _NESTING if k in prop and k not in allowed_nesting]
    if nested:
        raise ValueError(f"{where}: forms are flat; {', '.join(nested)} is not allowed")
    checked: dict[str, Any] = prop
    if "default" in checked and kind != "boolean" and not extended:
        checked = {k: v for k, v in checked.items() if k != "default"}
    return checked


def check_form_schema(schema: Any, revision: Revision) -> dict[str, Any]:
    """The schema to send (defaults the revision lacks removed); ValueError if it is not a form."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ValueError("an elicitation schema must be {'type': 'object', 'properties': {...}}")
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise ValueError("an elicitation schema needs 'properties' (an object of field schemas)")
    required = schema.get("required", [])
    if not _strings(required) or any(r not in properties for r in required):
        raise ValueError("an elicitation schema's 'required' must list names of its properties")
    fields = {name: _check_property(name, prop, revision) for name, prop in properties.items()}
    if all(fields[n] is properties[n] for n in fields):
        return schema
    return {**schema, "properties": fields}
