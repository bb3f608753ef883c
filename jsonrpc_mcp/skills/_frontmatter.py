"""The YAML frontmatter of a ``SKILL.md``: split it from the body and parse it to JSON values.

Theory of operation
-------------------
A SKILL.md starts with ``---``, its YAML frontmatter, and a closing ``---``. The skills extension
sends that frontmatter as a JSON object that hosts compare, key by key, with their own parse of the
file, so the parse must give what a YAML 1.2 parser gives, or fail at registration.

:func:`parse_yaml` handles the subset Agent Skills use: a top-level mapping whose values are scalars
(plain, ``"double"`` or ``'single'`` quoted, ``|``/``>`` block scalars), flow lists of scalars, block
lists of scalars, and nested mappings (``metadata:``) of the same. Plain scalars resolve as the YAML
1.2 core schema does (null, booleans, integers, floats, else strings). A plain scalar that YAML 1.1
parsers read differently (``yes``, ``off``, ``012``, ``1_000``, ``2024-01-01``...), a duplicate key,
or a tab in the indentation is refused with a :class:`FrontmatterError` naming the line: quoting
it says what is meant. A frontmatter outside the subset (flow mappings, multi-line plain scalars,
anchors...) is handed to PyYAML when it is installed (``safe_load``; the result must be JSON: a date
or a non-string key is refused), and refused otherwise. So the same file gives the same JSON with
or without PyYAML, wherever the subset reads it.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["FrontmatterError", "parse_frontmatter", "parse_yaml", "split_frontmatter", "to_json_value"]


class FrontmatterError(ValueError):
    """A SKILL.md whose frontmatter is missing or cannot be parsed (the message says where)."""


class _Unsupported(FrontmatterError):
    """Valid YAML, perhaps, but outside the built-in parser's subset (PyYAML may read it)."""


_OPEN = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
_KEY = re.compile(  # a plain, "double" or 'single' quoted key, ':', and what follows it
    r"""^(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"\-?:,\[\]{}&*!|>%@`][^:#]*?)"""
    r"""[ \t]*:(?:[ \t]+(?P<rest>.*?))?[ \t]*$"""
)
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
# plain scalars that YAML 1.1 (PyYAML, many hosts) and YAML 1.2 resolve differently
_AMBIGUOUS = re.compile(
    r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF"
    r"|[-+]?0[0-7]+|[-+]?0b[01_]+|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"
    r"|[-+]?[0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?|=|<<"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?)"
)
_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
    "L": "\u2028", "P": "\u2029",
}  # fmt: skip
_HEX = {"x": 2, "u": 4, "U": 8}


def split_frontmatter(text: str) -> tuple[str, str]:
    """``(frontmatter block, body)`` of a SKILL.md; :class:`FrontmatterError` without one."""
    opening = _OPEN.match(text)
    if opening is None:
        raise FrontmatterError("SKILL.md must begin with a '---' line opening its YAML frontmatter")
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        raise FrontmatterError("SKILL.md frontmatter has no closing '---' line")
    return text[opening.end() : closing.start()], text[closing.end() :]


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a SKILL.md as a JSON object: :func:`parse_yaml`, or PyYAML (when installed)
    for a frontmatter outside the built-in subset (never for one the subset refuses outright)."""
    block, _ = split_frontmatter(text)
    try:
        value: Any = parse_yaml(block)
    except _Unsupported as exc:
        yaml = _pyyaml()
        if yaml is None:
            raise FrontmatterError(f"{exc} (install PyYAML for the whole of YAML)") from None
        try:
            value = yaml.safe_load(block)
        except yaml.YAMLError as error:
            raise FrontmatterError(f"SKILL.md frontmatter is not valid YAML: {error}") from None
        value = {} if value is None else value
    if not isinstance(value, dict):
        raise FrontmatterError("SKILL.md frontmatter must be a YAML mapping")
    return to_json_value(value, "frontmatter")  # type: ignore[no-any-return]


def _pyyaml() -> Any:
    """The ``yaml`` module (PyYAML, an optional extra), or None."""
    try:
        import yaml  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return None
    return yaml


def to_json_value(value: Any, where: str) -> Any:
    """``value`` if it is JSON (str keys; str, int, finite float, bool, None, lists, dicts)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FrontmatterError(f"{where}: {value} is not a JSON number")
        return value
    if isinstance(value, list):
        return [to_json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise FrontmatterError(f"{where}: key {key!r} is not a string (quote it)")
            out[key] = to_json_value(item, f"{where}.{key}")
        return out
    raise FrontmatterError(f"{where}: a {type(value).__name__} is not a JSON value (quote it)")


# -- the built-in parser of the subset ------------------------------------------------------------
class _Lines:
    def __init__(self, block: str) -> None:
        self.lines = block.replace("\r\n", "\n").split("\n")
        self.i = 0

    def fail(self, message: str, line: int | None = None, *, unsupported: bool = False) -> FrontmatterError:
        number = (self.i if line is None else line) + 2  # +1 for the opening ---, +1 for 1-based
        kind = _Unsupported if unsupported else FrontmatterError
        return kind(f"SKILL.md line {number}: {message}")

    def next_content(self) -> tuple[int, str] | None:
        """(indent, text) of the next line that is not blank or a comment, without consuming it."""
        while self.i < len(self.lines):
            line = self.lines[self.i]
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                if "\t" in line[: len(line) - len(line.lstrip())]:
                    raise self.fail("tabs cannot indent YAML")
                return len(line) - len(line.lstrip(" ")), stripped
            self.i += 1
        return None


def parse_yaml(block: str) -> dict[str, Any]:
    """The subset of YAML that skill frontmatter uses (see the module docstring), strictly."""
    lines = _Lines(block)
    first = lines.next_content()
    if first is None:
        return {}
    if first[0] != 0:
        raise lines.fail("the frontmatter must start at the left margin", unsupported=True)
    value = _mapping(lines, 0)
    if lines.next_content() is not None:
        raise lines.fail("unexpected indentation", unsupported=True)
    return value


def _mapping(lines: _Lines, indent: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    while True:
        found = lines.next_content()
        if found is None or found[0] < indent:
            return out
        if found[0] > indent:
            raise lines.fail("unexpected indentation", unsupported=True)
        match = _KEY.match(found[1])
        if match is None:
            raise lines.fail(f"expected 'key: value', got {found[1]!r}", unsupported=True)
        key = _key(match.group("key"), lines)
        if key in out:
            raise lines.fail(f"duplicate key {key!r}")
        rest = match.group("rest")
        line = lines.i
        lines.i += 1
        if rest is None or rest.startswith("#"):
            out[key] = _nested(lines, indent)
        elif rest[0] in "|>":
            out[key] = _block_scalar(lines, rest, indent, line)
        else:
            out[key] = _inline(rest, lines, line)


def _key(raw: str, lines: _Lines) -> str:
    if raw[0] in "\"'":
        value = _quoted(raw, lines, lines.i)
        assert isinstance(value, str)
        return value
    return raw.strip()


def _nested(lines: _Lines, indent: int) -> Any:
    """The value of ``key:`` with nothing after it: an indented mapping or list, else null."""
    found = lines.next_content()
    if found is None:
        return None
    if found[1].startswith("- ") or found[1] == "-":
        if found[0] < indent:
            return None
        return _sequence(lines, found[0])
    if found[0] <= indent:
        return None
    return _mapping(lines, found[0])


def _sequence(lines: _Lines, indent: int) -> list[Any]:
    out: list[Any] = []
    while True:
        found = lines.next_content()
        if found is None or found[0] < indent:
            return out
        if found[0] > indent or not (found[1].startswith("- ") or found[1] == "-"):
            if found[0] == indent:
                return out  # the list ended; the enclosing mapping goes on
            raise lines.fail("unexpected indentation", unsupported=True)
        item = found[1][1:].strip()
        line = lines.i
        lines.i += 1
        if not item or item.startswith("#"):
            raise lines.fail(
                "nested list items are not supported; write the item on the '-' line", line, unsupported=True
            )
        if _KEY.match(item) and item[0] not in "\"'[":
            raise lines.fail("mappings inside lists are not supported", line, unsupported=True)
        out.append(_inline(item, lines, line))


def _inline(text: str, lines: _Lines, line: int) -> Any:
    """A value written on its key's line: a quoted or plain scalar, or a flow list of scalars."""
    if text[0] in "\"'":
        return _quoted(text, lines, line)
    if text[0] == "[":
        return _flow_list(text, lines, line)
    if text[0] in "{&*!%@`" or text.startswith("- ") or text == "-":
        raise lines.fail(f"unsupported YAML value {text!r} (quote it)", line, unsupported=True)
    return _plain(_strip_comment(text), lines, line)


def _strip_comment(text: str) -> str:
    cut = text.find(" #")
    return (text if cut < 0 else text[:cut]).rstrip()


def _plain(text: str, lines: _Lines, line: int) -> Any:
    if ": " in text or text.endswith(":"):
        raise lines.fail(f"a plain value cannot contain ': ' ({text!r}); quote it", line)
    if _AMBIGUOUS.fullmatch(text):
        raise lines.fail(f"{text!r} reads differently in YAML 1.1 and 1.2; quote it", line)
    if text in ("~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.fullmatch(text):
        return int(text)
    if re.fullmatch(r"0o[0-7]+", text):
        return int(text[2:], 8)
    if re.fullmatch(r"0x[0-9a-fA-F]+", text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    if re.fullmatch(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)", text):
        raise lines.fail(f"{text!r} is not a JSON number; quote it", line)
    return text


def _quoted(text: str, lines: _Lines, line: int) -> Any:
    """A whole quoted scalar (with at most a comment after it)."""
    value, end = _scan_quoted(text, 0, lines, line)
    tail = text[end:].strip()
    if tail and not tail.startswith("#"):
        raise lines.fail(f"unexpected text after the quoted value: {tail!r}", line)
    return value


def _scan_quoted(text: str, start: int, lines: _Lines, line: int) -> tuple[str, int]:
    quote = text[start]
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if quote == "'" and ch == "'":
            if text[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), i + 1
        if quote == '"' and ch == '"':
            return "".join(out), i + 1
        if quote == '"' and ch == "\\":
            code = text[i + 1 : i + 2]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                i += 2
                continue
            digits = _HEX.get(code)
            hexits = text[i + 2 : i + 2 + digits] if digits else ""
            if not digits or not re.fullmatch(r"[0-9a-fA-F]+", hexits) or len(hexits) != digits:
                raise lines.fail(f"invalid escape \\{code} in a double-quoted value", line)
            out.append(chr(int(hexits, 16)))
            i += 2 + digits
            continue
        out.append(ch)
        i += 1
    raise lines.fail("a quoted value must end on its own line", line, unsupported=True)


def _flow_list(text: str, lines: _Lines, line: int) -> list[Any]:
    items: list[Any] = []
    i = 1
    expect_item = True
    while i < len(text):
        ch = text[i]
        if ch == " ":
            i += 1
        elif ch == "]" and (expect_item is False or not items):
            tail = text[i + 1 :].strip()
            if tail and not tail.startswith("#"):
                raise lines.fail(f"unexpected text after the list: {tail!r}", line)
            return items
        elif ch == "," and not expect_item:
            expect_item = True
            i += 1
        elif expect_item and ch in "\"'":
            value, i = _scan_quoted(text, i, lines, line)
            items.append(value)
            expect_item = False
        elif expect_item and ch not in "[]{},#":
            end = i
            while end < len(text) and text[end] not in ",]":
                end += 1
            items.append(_plain(text[i:end].strip(), lines, line))
            expect_item = False
            i = end
        else:
            break
    raise lines.fail("only one-line flow lists of scalars are supported ('[a, b]')", line, unsupported=True)


def _block_scalar(lines: _Lines, header: str, indent: int, line: int) -> str:
    """``|`` (literal) or ``>`` (folded), with ``-`` (strip) or ``+`` (keep) chomping."""
    spec = _strip_comment(header)
    if not re.fullmatch(r"[|>][-+]?", spec):
        raise lines.fail(f"unsupported block scalar header {header!r}", line, unsupported=True)
    folded, chomp = spec[0] == ">", spec[1:]
    body: list[str] = []
    block_indent: int | None = None
    while lines.i < len(lines.lines):
        raw = lines.lines[lines.i]
        if not raw.strip():
            body.append("")
            lines.i += 1
            continue
        width = len(raw) - len(raw.lstrip(" "))
        if block_indent is None:
            if width <= indent:
                break
            block_indent = width
        if width < block_indent:
            break
        if folded and width > block_indent:
            raise lines.fail(
                "more-indented lines in a folded ('>') value are not supported; use '|'", unsupported=True
            )
        body.append(raw[block_indent:])
        lines.i += 1
    trailing = 0
    while body and body[-1] == "":
        body.pop()
        trailing += 1
    if lines.i >= len(lines.lines) and trailing:
        trailing -= 1  # the block's own final line break is not a trailing blank line
    if folded:
        text, blank = "", 0
        for part in body:
            if part == "":
                blank += 1
                continue
            text += ("\n" * blank if blank else " ") + part if text else part
            blank = 0
    else:
        text = "\n".join(body)
    if not body:
        return "" if chomp != "+" else "\n" * trailing
    if chomp == "-":
        return text
    if chomp == "+":
        return text + "\n" + "\n" * trailing
    return text + "\n"
