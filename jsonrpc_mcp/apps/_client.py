"""The host side of MCP Apps: a view read and checked, ready for a host to render.

A host renders a tool's view only when the ``resources/read`` of its ``_meta.ui.resourceUri``
answers one content item of that URI, of MIME type ``text/html;profile=mcp-app``, carrying the
document as ``text`` (or base64 ``blob``), with a ``_meta.ui`` of the extension's shape (from the
content item, else from the ``resources/list`` entry when the host has it). :func:`check_view` does
those checks and raises :class:`AppError` naming what is wrong; used by ``Client.read_app``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._model import MIME_TYPE, SCHEME, content_security_policy, resource_meta_problems

__all__ = ["AppError", "AppView", "check_view"]


class AppError(ValueError):
    """A tool's view that a host must not render: the message says what is wrong."""


@dataclass(frozen=True)
class AppView:
    """A view read from a server: its document, its ``_meta.ui`` and what a host derives from it."""

    uri: str
    html: str
    mime_type: str = MIME_TYPE
    ui: dict[str, Any] = field(default_factory=dict)

    @property
    def csp(self) -> dict[str, list[str]]:
        """The declared CSP origins (``connectDomains``, ``resourceDomains``, ...; empty: none)."""
        return dict(self.ui.get("csp") or {})

    @property
    def permissions(self) -> list[str]:
        """The browser permissions the view asks for ("camera", "clipboardWrite", ...)."""
        return list(self.ui.get("permissions") or {})

    @property
    def domain(self) -> str | None:
        """The dedicated sandbox origin the view asks for (host-specific), if any."""
        return self.ui.get("domain")

    @property
    def prefers_border(self) -> bool | None:
        """Whether the view wants a border and background (None: the host decides)."""
        return self.ui.get("prefersBorder")

    @property
    def content_security_policy(self) -> str:
        """The Content-Security-Policy a host applies to the view (see ``content_security_policy``)."""
        return content_security_policy(self.ui)


def check_view(uri: str, result: Mapping[str, Any], listing: Mapping[str, Any] | None = None) -> AppView:
    """The :class:`AppView` of ``uri`` from its ``resources/read`` ``result`` (and its
    ``resources/list`` entry, whose ``_meta.ui`` is used when the content item has none); raises
    :class:`AppError` when a host must not render it."""
    if not uri.startswith(SCHEME):
        raise AppError(f"{uri!r} is not a view: a view's URI starts with {SCHEME!r}")
    contents = result.get("contents")
    if type(contents) is not list or not contents:
        raise AppError(f"the read of {uri!r} returned no contents")
    items = [c for c in contents if type(c) is dict and c.get("uri") == uri]
    if len(items) != 1:
        raise AppError(f"the read of {uri!r} returned {len(items)} content items for that URI, not one")
    item = items[0]
    mime = item.get("mimeType")
    if mime != MIME_TYPE:
        raise AppError(f"{uri!r} has the MIME type {mime!r}: a view must be {MIME_TYPE!r}")
    html = _document(uri, item)
    ui = _ui_meta(item)
    where = "the content item's _meta.ui"
    if ui is None and listing is not None:
        ui, where = _ui_meta(listing), "the resources/list entry's _meta.ui"
    problems = resource_meta_problems(ui if ui is not None else {}, f"{uri}: {where}")
    if problems:
        raise AppError("; ".join(problems))
    return AppView(uri, html, mime, dict(ui or {}))


def _document(uri: str, item: Mapping[str, Any]) -> str:
    if type(item.get("text")) is str:
        return str(item["text"])
    blob = item.get("blob")
    if type(blob) is not str:
        raise AppError(f"the content of {uri!r} has neither text nor blob")
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise AppError(f"the blob of {uri!r} is not base64 of UTF-8 HTML: {exc}") from None


def _ui_meta(item: Mapping[str, Any]) -> Any:
    meta = item.get("_meta")
    if meta is None:
        return None
    if type(meta) is not dict:
        raise AppError(f"_meta of {item.get('uri')!r} must be an object, got {meta!r}")
    return meta.get("ui")
