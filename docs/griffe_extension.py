"""A griffe extension for the API reference (mkdocs.yml loads it; the sources stay as they are).

- The docstrings use Sphinx roles (``:class:`Server```, ``:meth:`~x.Y.z```): each becomes inline
  code of the name as a reader writes it (``Server``, ``z``; the target of ``title <target>`` is
  dropped), instead of showing the role itself.
- An instance attribute (``self.x = ...`` in a method) shows no value (the expression assigned in
  ``__init__`` says nothing to a reader), and one with neither a docstring nor an annotation is
  left out: the class docstring describes the constructor's parameters.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`<]+?)\s*(?:<[^>]*>)?`")


def _name(match: re.Match[str]) -> str:
    tilde, target = match.group(1), match.group(2).strip()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


def _objects(obj: griffe.Object) -> list[griffe.Object]:
    found = [obj]
    for member in obj.members.values():
        if not member.is_alias and isinstance(member, griffe.Object):
            found.extend(_objects(member))
    return found


class ReferenceDocstrings(griffe.Extension):
    """Rewrites the roles and trims the instance attributes of every object of a loaded package."""

    def on_package(self, *, pkg: griffe.Module, loader: Any, **kwargs: Any) -> None:
        """Visit every object of ``pkg`` once it is loaded."""
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = _ROLE.sub(_name, obj.docstring.value)
            if not obj.is_class:
                continue
            for name, member in list(obj.members.items()):
                if member.is_alias or not isinstance(member, griffe.Attribute):
                    continue
                labels = member.labels
                if "instance-attribute" not in labels or "class-attribute" in labels:
                    continue
                if member.docstring is None and member.annotation is None:
                    obj.del_member(name)
                else:
                    member.value = None
