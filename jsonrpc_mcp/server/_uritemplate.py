"""RFC 6570 URI templates, matched without backtracking.

A template is split into literal text and expressions. Matching walks the URI once, left to right:
each expression takes the text up to the next literal (or the end), so the cost is linear in the
URI and no regular expression can be made to backtrack. Supported expressions: ``{var}``,
``{+var}``, ``{#var}``, ``{/var}``, ``{.var}``, ``{;var}``, ``{?a,b}`` and ``{&a,b}``.
"""

from __future__ import annotations

import re

__all__ = ["MAX_URI", "UriTemplate"]


def unquote(text: str) -> str:
    """``urllib.parse.unquote``, imported on first use (a server without templates never needs it);
    text without a ``%`` is returned as it is."""
    if "%" not in text:
        return text
    from urllib.parse import unquote as urllib_unquote

    return urllib_unquote(text)


# The longest URI matched against a template: beyond any real URI (RFC 9110 asks for 8,000 octets),
# short enough that matching one never stalls the event loop.
MAX_URI = 16 * 1024


_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_OPERATORS = "+#./;?&"


class UriTemplate:
    """A parsed template that can tell whether a URI matches and extract its variables."""

    __slots__ = ("_parts", "template", "variables")

    def __init__(self, template: str) -> None:
        self.template = template
        # (literal, operator, names, explode); the last part is literal only (no names)
        self._parts: list[tuple[str, str, list[str], bool]] = []
        self.variables: list[str] = []
        pos = 0
        for m in _EXPRESSION.finditer(template):
            literal = template[pos : m.start()]
            if "{" in literal or "}" in literal:
                raise ValueError(f"unbalanced braces in URI template {template!r}")
            body = m.group(1)
            op = body[0] if body and body[0] in _OPERATORS else ""
            specs = body[len(op) :].split(",")
            names = [n.rstrip("*").split(":")[0] for n in specs]
            if not all(n and re.fullmatch(r"[A-Za-z0-9_.%]+", n) for n in names):
                raise ValueError(f"invalid expression {{{body}}} in URI template {template!r}")
            self._parts.append((literal, op, names, any(n.endswith("*") for n in specs)))
            self.variables.extend(names)
            pos = m.end()
        if "{" in template[pos:] or "}" in template[pos:]:
            raise ValueError(f"unbalanced braces in URI template {template!r}")
        self._parts.append((template[pos:], "", [], False))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables if ``uri`` matches, else None. Linear in the URI for a given template; a
        URI longer than :data:`MAX_URI` matches nothing."""
        if len(uri) > MAX_URI:
            return None
        values: dict[str, str] = {}
        pos = 0
        parts = self._parts
        for index, (literal, op, names, explode) in enumerate(parts):
            if not uri.startswith(literal, pos):
                return None
            pos += len(literal)
            if not names:
                continue
            end = self._end(uri, pos, parts[index + 1])
            if end < 0:
                return None
            if not self._extract(op, names, explode, uri[pos:end], values):
                return None
            pos = end
        return values if pos == len(uri) else None

    @staticmethod
    def _end(uri: str, pos: int, following: tuple[str, str, list[str], bool]) -> int:
        """Where the expression starting at ``pos`` ends: at the next literal, or where the next
        expression's operator (``?``, ``/``, ``#``...) begins, or at the end of the URI."""
        literal, op, names, _ = following
        if literal:
            return uri.find(literal, pos)
        if names and op and op != "+":
            lead = uri.find("&" if op == "&" else op, pos)
            return lead if lead >= 0 else len(uri)
        return len(uri)

    @staticmethod
    def _extract(op: str, names: list[str], explode: bool, segment: str, values: dict[str, str]) -> bool:
        if op in ("", "+", "#"):
            if op == "#":
                if not segment.startswith("#"):
                    return False
                segment = segment[1:]
            if op == "" and "/" in segment:
                return False  # a simple {var} never spans path segments
            pieces = segment.split(",") if len(names) > 1 else [segment]
            if len(pieces) != len(names) or any(p == "" for p in pieces):
                return False
            for name, piece in zip(names, pieces, strict=True):
                values[name] = unquote(piece)
            return True
        if op in "./":
            pieces = segment.split(op)
            if pieces[0] != "":
                return False
            if explode and len(names) == 1:  # {/path*}: every remaining segment, joined
                values[names[0]] = unquote(op.join(pieces[1:]))
                return True
            if len(pieces) - 1 != len(names):
                return False
            for name, piece in zip(names, pieces[1:], strict=True):
                values[name] = unquote(piece)
            return True
        if segment == "":
            return True  # "?a,b", "&a", ";a": every variable left undefined
        if not segment.startswith(op):  # ";a=1;b=2", "?a=1&b=2", "&a=1"
            return False
        separator = ";" if op == ";" else "&"
        for pair in segment[1:].split(separator):
            key, _, value = pair.partition("=")
            if key in names:
                values[key] = unquote(value)
        return True

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"
