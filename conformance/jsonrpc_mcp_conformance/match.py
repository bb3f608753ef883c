"""The pattern language fixtures use to say what must come back.

A pattern is JSON. Objects match partially (members not named in the pattern may be present); arrays
match element by element and must have the same length; scalars compare equal *with their JSON type*
(``1`` does not match ``1.0``, ``"7"`` does not match ``7``). An object whose keys all start with ``$``
is an operator:

``{"$absent": true}``            (as a member value) the member must not be present
``{"$any": true}``               present, any value
``{"$type": "string"}``          JSON type: string, integer, number, boolean, null, object, array
``{"$in": [v, ...]}``            equal (with type) to one of the values
``{"$exact": v}``                equal to v as a whole (no partial object matching)
``{"$startswith": "..."}``       a string beginning with the text
``{"$contains": "..."}``         a string containing the text
``{"$one_of": [p, ...]}``        matches at least one pattern (used to accept each reading of an ambiguity)
``{"$all_of": [p, ...]}``        matches every pattern
``{"$not": p}``                  does not match p
``{"$each": p}``                 an array whose every element matches p (an object: every member value)
``{"$unordered": [p, ...]}``     an array matched as a multiset: same length, each pattern a distinct element
``{"$len": {"min": m, "max": n}}`` an array, string or object of that size
``{"$unique": true}``            an array without two equal elements
``{"$schema": {...}}``           valid against the JSON Schema (2020-12 unless ``$schema`` says otherwise; a
                                 ``$ref`` may name a vendored extension schema by its ``$id``: see
                                 :func:`vendored_schemas`)
``{"$var": "name"}``             equal to a value captured earlier in the fixture
``{"$some": p}``                 an array with at least one element matching p (an object: member value)
``{"$keys": p}``                 an object whose list of member names matches p
``{"$literal": {...}}``          an object having these members, names taken literally (``$ref`` too)
``{"$json": p}``                 a string holding JSON text whose value matches p
``{"$increasing": "a.b"}``       an array whose values at that dotted path are strictly increasing numbers
``{"$sha256": "sha256:<hex>"}``  a string whose UTF-8 bytes have that digest (SEP-2640 skill manifests)
``{"$endswith": "..."}``         a string ending with the text
``{"$frontmatter": p}``          a string opening with a ``---`` YAML frontmatter block whose value matches p
``{"$skills": "must"}``          an array of SEP-2640 skill entries that agree with themselves: each uri's
                                 last skill-path segment is its frontmatter name (naming rules kept), its
                                 file manifest lists its own uri and files of its directory, each once;
                                 ``"should"``: skill:// URIs, reg-name authorities, unique names, no more
                                 than 512 files or 16 MiB per skill, no reserved metadata keys

One generator is not a pattern but is expanded when the fixtures are loaded (``fixtures.py``), anywhere
in a fixture's steps, so that large values need not be stored: ``{"$repeat": "x", "$times": 1048576}``
(exactly these two members) becomes the string ``"x"`` repeated 1048576 times.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["describe_type", "json_equal", "match", "select"]

_TYPES = {"string", "integer", "number", "boolean", "null", "object", "array"}


def describe_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any) -> bool:
    """Equality of two JSON values that also compares their JSON types (1 != 1.0 != True)."""
    if describe_type(a) != describe_type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=False))
    return bool(a == b)


def _is_operator(pattern: Any) -> bool:
    return isinstance(pattern, dict) and bool(pattern) and all(k.startswith("$") for k in pattern)


def _short(value: Any, limit: int = 160) -> str:
    import orjson

    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_REGISTRY: Any = None


def vendored_schemas() -> Any:
    """The extension schemas shipped with the fixtures (``spec/extensions/*/schema.json``), as a
    ``referencing`` registry keyed by each document's ``$id``: a ``$schema`` pattern may ``$ref`` one
    of them by its full URI (a ``$ref`` to anything else is unresolvable: nothing is fetched)."""
    global _REGISTRY
    if _REGISTRY is None:
        import json

        import referencing
        import referencing.jsonschema

        from .fixtures import default_spec_dir

        resources = []
        for path in sorted((default_spec_dir() / "extensions").glob("*/schema.json")):
            document = json.loads(path.read_text(encoding="utf-8"))
            resource = referencing.jsonschema.DRAFT202012.create_resource(document)
            resources.append((document["$id"], resource))
        _REGISTRY = referencing.Registry().with_resources(resources)
    return _REGISTRY


def _schema_errors(value: Any, schema: Any) -> list[str]:
    import jsonschema

    if isinstance(schema, dict) and "$schema" in schema:
        cls = jsonschema.validators.validator_for(schema)
    else:
        cls = jsonschema.Draft202012Validator
    import referencing.exceptions

    validator = cls(schema, registry=vendored_schemas())
    try:
        return [
            f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
            for error in validator.iter_errors(value)
        ][:3]
    except referencing.exceptions.Unresolvable as exc:
        return [f"the pattern's schema refers to {exc.ref!r}, which is no schema the harness ships"]


def _accepts_absence(pattern: Any) -> bool:
    """Whether a member pattern is satisfied by the member being absent: ``{"$absent": true}``, or a
    ``$one_of`` with such an alternative (one reading of an ambiguity: "no body at all")."""
    if not isinstance(pattern, dict):
        return False
    if pattern.get("$absent") is True:
        return True
    alternatives = pattern.get("$one_of")
    return isinstance(alternatives, list) and any(_accepts_absence(alt) for alt in alternatives)


def match(
    actual: Any, pattern: Any, variables: Mapping[str, Any] | None = None, path: str = "$"
) -> list[str]:
    """The mismatches of ``actual`` against ``pattern`` (empty when it matches)."""
    variables = variables or {}
    if _is_operator(pattern):
        return _match_operator(actual, pattern, variables, path)
    if isinstance(pattern, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {describe_type(actual)} {_short(actual)}"]
        problems: list[str] = []
        operators = {k: v for k, v in pattern.items() if k.startswith("$")}
        if operators:  # operators beside members apply to the object itself
            problems.extend(_match_operator(actual, operators, variables, path))
        for key, sub in pattern.items():
            if key.startswith("$"):
                continue
            where = f"{path}.{key}"
            if isinstance(sub, dict) and sub.get("$absent") is True:
                if key in actual:
                    problems.append(f"{where}: must be absent, got {_short(actual[key])}")
                continue
            if key not in actual:
                if not _accepts_absence(sub):
                    problems.append(f"{where}: missing")
                continue
            problems.extend(match(actual[key], sub, variables, where))
        return problems
    if isinstance(pattern, list):
        if not isinstance(actual, list):
            return [f"{path}: expected an array, got {describe_type(actual)} {_short(actual)}"]
        if len(actual) != len(pattern):
            return [f"{path}: expected {len(pattern)} elements, got {len(actual)}: {_short(actual)}"]
        problems = []
        for index, (got, want) in enumerate(zip(actual, pattern, strict=False)):
            problems.extend(match(got, want, variables, f"{path}[{index}]"))
        return problems
    if json_equal(actual, pattern):
        return []
    return [f"{path}: expected {_short(pattern)}, got {_short(actual)}"]


def _match_operator(
    actual: Any, pattern: dict[str, Any], variables: Mapping[str, Any], path: str
) -> list[str]:
    problems: list[str] = []
    for op, arg in pattern.items():
        if op == "$any" or op == "$absent":
            continue  # presence is checked by the enclosing object
        if op == "$type":
            names = arg if isinstance(arg, list) else [arg]
            unknown = set(names) - _TYPES
            if unknown:
                raise ValueError(f"unknown $type {sorted(unknown)}")
            got = describe_type(actual)
            if got not in names and not (got == "integer" and "number" in names):
                problems.append(f"{path}: expected type {'|'.join(names)}, got {got} {_short(actual)}")
        elif op == "$in":
            if not any(json_equal(actual, v) for v in arg):
                problems.append(f"{path}: expected one of {_short(arg)}, got {_short(actual)}")
        elif op == "$exact":
            if not json_equal(actual, arg):
                problems.append(f"{path}: expected exactly {_short(arg)}, got {_short(actual)}")
        elif op == "$startswith":
            if not isinstance(actual, str) or not actual.startswith(arg):
                problems.append(f"{path}: expected a string starting {arg!r}, got {_short(actual)}")
        elif op == "$contains":
            if not isinstance(actual, str) or arg not in actual:
                problems.append(f"{path}: expected a string containing {arg!r}, got {_short(actual)}")
        elif op == "$one_of":
            readings = [match(actual, p, variables, path) for p in arg]
            if all(readings):
                detail = " | ".join("; ".join(r) for r in readings)
                problems.append(f"{path}: matches none of {len(arg)} accepted forms ({detail})")
        elif op == "$all_of":
            for sub in arg:
                problems.extend(match(actual, sub, variables, path))
        elif op == "$not":
            if not match(actual, arg, variables, path):
                problems.append(f"{path}: must not match {_short(arg)}, got {_short(actual)}")
        elif op == "$each" and isinstance(actual, dict):
            for key, item in actual.items():
                problems.extend(match(item, arg, variables, f"{path}.{key}"))
        elif op == "$each":
            if not isinstance(actual, list):
                problems.append(f"{path}: expected an array, got {describe_type(actual)}")
            else:
                for index, item in enumerate(actual):
                    problems.extend(match(item, arg, variables, f"{path}[{index}]"))
        elif op == "$unordered":
            problems.extend(_unordered(actual, arg, variables, path))
        elif op == "$len":
            if not isinstance(actual, (list, str, dict)):
                problems.append(f"{path}: expected something with a length, got {describe_type(actual)}")
            else:
                size = len(actual)
                if size < arg.get("min", 0) or ("max" in arg and size > arg["max"]):
                    problems.append(f"{path}: length {size} outside {_short(arg)}")
        elif op == "$unique":
            if not isinstance(actual, list):
                problems.append(f"{path}: expected an array, got {describe_type(actual)}")
            else:
                for index, item in enumerate(actual):
                    if any(json_equal(item, earlier) for earlier in actual[:index]):
                        problems.append(f"{path}[{index}]: {_short(item)} appears more than once")
                        break
        elif op == "$schema":
            problems.extend(f"{path}: {e}" for e in _schema_errors(actual, arg))
        elif op == "$var":
            if arg not in variables:
                problems.append(f"{path}: variable {arg!r} was never captured")
            elif not json_equal(actual, variables[arg]):
                problems.append(f"{path}: expected {_short(variables[arg])} (${arg}), got {_short(actual)}")
        elif op == "$some":
            items = list(actual.values()) if isinstance(actual, dict) else actual
            if not isinstance(items, list):
                problems.append(f"{path}: expected an array, got {describe_type(actual)}")
            elif all(match(item, arg, variables, path) for item in items):
                problems.append(f"{path}: no element matches {_short(arg)}: {_short(actual)}")
        elif op == "$keys":
            if not isinstance(actual, dict):
                problems.append(f"{path}: expected an object, got {describe_type(actual)}")
            else:
                problems.extend(match(list(actual), arg, variables, f"{path}(member names)"))
        elif op == "$literal":
            if not isinstance(actual, dict):
                problems.append(f"{path}: expected an object, got {describe_type(actual)}")
            else:
                for key, sub in arg.items():
                    if key not in actual:
                        problems.append(f"{path}.{key}: missing")
                    else:
                        problems.extend(match(actual[key], sub, variables, f"{path}.{key}"))
        elif op == "$json":
            problems.extend(_match_json_text(actual, arg, variables, path))
        elif op == "$increasing":
            problems.extend(_increasing(actual, str(arg), path))
        elif op == "$sha256":
            problems.extend(_sha256(actual, arg, path))
        elif op == "$endswith":
            if not isinstance(actual, str) or not actual.endswith(arg):
                problems.append(f"{path}: expected a string ending with {arg!r}, got {_short(actual)}")
        elif op == "$frontmatter":
            problems.extend(_frontmatter(actual, arg, variables, path))
        elif op == "$skills":
            from ._skills import skills_problems

            problems.extend(f"{path}: {p}" for p in skills_problems(actual, str(arg)))
        else:
            raise ValueError(f"unknown pattern operator {op}")
    return problems


def _frontmatter(actual: Any, pattern: Any, variables: Mapping[str, Any] | None, path: str) -> list[str]:
    from jsonrpc_mcp.skills._frontmatter import FrontmatterError, parse_frontmatter

    if not isinstance(actual, str):
        return [f"{path}: expected SKILL.md text, got {describe_type(actual)}"]
    try:
        value = parse_frontmatter(actual[1:] if actual.startswith("\ufeff") else actual)
    except FrontmatterError as error:
        return [f"{path}: {error}"]
    return match(value, pattern, variables, f"{path}(frontmatter)")


def _sha256(actual: Any, digest: Any, path: str) -> list[str]:
    import hashlib

    if not isinstance(actual, str):
        return [f"{path}: expected a string to hash, got {describe_type(actual)}"]
    data = actual.encode("utf-8")
    got = "sha256:" + hashlib.sha256(data).hexdigest()
    if got != digest:
        return [f"{path}: its {len(data)} bytes hash to {got}, not to the digest {_short(digest)}"]
    return []


def _unordered(actual: Any, patterns: list[Any], variables: Mapping[str, Any], path: str) -> list[str]:
    if not isinstance(actual, list):
        return [f"{path}: expected an array, got {describe_type(actual)} {_short(actual)}"]
    if len(actual) != len(patterns):
        return [f"{path}: expected {len(patterns)} elements (any order), got {len(actual)}: {_short(actual)}"]
    remaining = list(actual)
    for want in patterns:
        for index, got in enumerate(remaining):
            if not match(got, want, variables, path):
                del remaining[index]
                break
        else:
            return [f"{path}: no element matches {_short(want)} in {_short(actual)}"]
    return []


def _match_json_text(actual: Any, pattern: Any, variables: Mapping[str, Any], path: str) -> list[str]:
    import json

    if not isinstance(actual, str):
        return [f"{path}: expected a string of JSON text, got {describe_type(actual)}"]
    try:
        value = json.loads(actual)
    except ValueError:
        return [f"{path}: not JSON text: {_short(actual)}"]
    return match(value, pattern, variables, f"{path}(parsed)")


def _increasing(actual: Any, dotted: str, path: str) -> list[str]:
    """The values at ``dotted`` of an array's elements are numbers, each greater than the one before."""
    if not isinstance(actual, list):
        return [f"{path}: expected an array, got {describe_type(actual)}"]
    previous: Any = None
    for index, item in enumerate(actual):
        try:
            value = select(item, dotted)
        except KeyError:
            return [f"{path}[{index}]: has no {dotted}"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return [f"{path}[{index}].{dotted}: expected a number, got {_short(value)}"]
        if previous is not None and not value > previous:
            return [f"{path}[{index}].{dotted}: {value} does not increase on {previous}"]
        previous = value
    return []


def select(value: Any, dotted: str) -> Any:
    """``result.tools.0.name`` applied to a message; raises KeyError when the path is not there. A
    ``*`` takes every element of an array (or value of an object): ``events.*.id`` is the list of the
    ids of the events that have one."""
    return _select(value, dotted.split(".") if dotted else [], dotted)


def _select(value: Any, parts: list[str], dotted: str) -> Any:
    current = value
    for index, part in enumerate(parts):
        if part == "*":
            if not isinstance(current, (list, dict)):
                raise KeyError(dotted)
            found = []
            for item in current if isinstance(current, list) else current.values():
                try:
                    found.append(_select(item, parts[index + 1 :], dotted))
                except KeyError:
                    continue
            return found
        if isinstance(current, list):
            try:
                current = current[int(part)]
            except (ValueError, IndexError):
                raise KeyError(dotted) from None
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            raise KeyError(dotted)
    return current
