"""MCP Apps (SEP-1865, the ``io.modelcontextprotocol/ui`` extension): its names and wire shapes.

Shared by the server (:mod:`._extension`), the client (:mod:`jsonrpc_mcp.client._apps`) and the
harness: nothing here imports either side.

On the wire (the 2026-01-26 specification):

* a *UI resource* is an ordinary resource whose URI starts with ``ui://`` and whose MIME type is
  ``text/html;profile=mcp-app``; its ``_meta.ui`` (:func:`resource_meta`) carries ``csp``
  (``connectDomains``, ``resourceDomains``, ``frameDomains``, ``baseUriDomains``: origins),
  ``permissions`` (``camera``, ``microphone``, ``geolocation``, ``clipboardWrite``: each ``{}``),
  ``domain`` (a host-specific dedicated origin) and ``prefersBorder`` (a boolean), on the
  ``resources/read`` content item and optionally on the ``resources/list`` entry (the content
  item's wins);
* a tool links to one with ``_meta.ui.resourceUri`` (:func:`tool_meta`), and says who may use it
  with ``_meta.ui.visibility``: ``"model"`` (the agent sees and calls it), ``"app"`` (the view may
  call it), both when omitted;
* each side declares the extension in ``capabilities.extensions`` (SEP-2133); a client's settings
  are ``{"mimeTypes": ["text/html;profile=mcp-app"]}`` (:data:`CLIENT_SETTINGS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CLIENT_SETTINGS",
    "CSP_KEYS",
    "EXTENSION_ID",
    "MIME_TYPE",
    "PERMISSION_KEYS",
    "SCHEME",
    "VISIBILITIES",
    "AppLink",
    "Visibility",
    "app_link",
    "content_security_policy",
    "declares_apps",
    "model_tools",
    "resource_meta",
    "resource_meta_problems",
    "tool_meta",
    "tool_meta_problems",
]

EXTENSION_ID = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
SCHEME = "ui://"
CLIENT_SETTINGS: dict[str, Any] = {"mimeTypes": [MIME_TYPE]}  # a host's settings for the extension
Visibility = Literal["model", "app"]
VISIBILITIES: tuple[Visibility, ...] = ("model", "app")  # the default when a tool says nothing
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSION_KEYS = ("camera", "microphone", "geolocation", "clipboardWrite")
_RESOURCE_META_KEYS = ("csp", "permissions", "domain", "prefersBorder")
_TOOL_META_KEYS = ("resourceUri", "visibility")


def resource_meta(
    *,
    connect_domains: Sequence[str] = (),
    resource_domains: Sequence[str] = (),
    frame_domains: Sequence[str] = (),
    base_uri_domains: Sequence[str] = (),
    permissions: Iterable[str] = (),
    domain: str | None = None,
    prefers_border: bool | None = None,
) -> dict[str, Any]:
    """A UI resource's ``_meta.ui`` object (empty lists and None left out; ``permissions`` named as
    the wire names them: "camera", "microphone", "geolocation", "clipboardWrite"). Raises
    ValueError for an unknown permission or a value of the wrong type."""
    ui: dict[str, Any] = {}
    csp: dict[str, list[str]] = {}
    given = (connect_domains, resource_domains, frame_domains, base_uri_domains)
    for key, domains in zip(CSP_KEYS, given, strict=True):
        if isinstance(domains, str):
            raise ValueError(f"{key}: give a list of origins, not the string {domains!r}")
        if domains:
            csp[key] = list(domains)
    if csp:
        ui["csp"] = csp
    wanted = list(permissions)
    if isinstance(permissions, str):
        raise ValueError(f"permissions: give a list of names, not the string {permissions!r}")
    unknown = [p for p in wanted if p not in PERMISSION_KEYS]
    if unknown:
        raise ValueError(f"unknown permission(s) {unknown}: use {', '.join(PERMISSION_KEYS)}")
    if wanted:
        ui["permissions"] = {p: {} for p in PERMISSION_KEYS if p in wanted}
    if domain is not None:
        ui["domain"] = domain
    if prefers_border is not None:
        ui["prefersBorder"] = bool(prefers_border)
    problems = resource_meta_problems(ui)
    if problems:
        raise ValueError("; ".join(problems))
    return ui


def tool_meta(resource_uri: str | None, visibility: Iterable[Visibility] | None = None) -> dict[str, Any]:
    """A tool's ``_meta.ui`` object linking it to ``resource_uri`` (a ``ui://`` URI), with its
    ``visibility`` when given. Raises ValueError for a URI of another scheme or an unknown or empty
    visibility."""
    ui: dict[str, Any] = {}
    if resource_uri is not None:
        ui["resourceUri"] = resource_uri
    if visibility is not None:
        if isinstance(visibility, str):
            raise ValueError(f"visibility: give a list such as ['app'], not the string {visibility!r}")
        ui["visibility"] = list(dict.fromkeys(visibility))
    problems = tool_meta_problems(ui)
    if problems:
        raise ValueError("; ".join(problems))
    return ui


def _domains_problems(value: Any, where: str) -> list[str]:
    if type(value) is not list or not all(type(v) is str for v in value):
        return [f"{where} must be a list of strings, got {value!r}"]
    return []


def resource_meta_problems(ui: Any, where: str = "_meta.ui") -> list[str]:
    """What is wrong with a UI resource's ``_meta.ui`` (empty when it has the shape the extension's
    schema gives ``McpUiResourceMeta``)."""
    if type(ui) is not dict:
        return [f"{where} must be an object, got {ui!r}"]
    problems = [f"{where} has the unknown member {k!r}" for k in ui if k not in _RESOURCE_META_KEYS]
    csp = ui.get("csp")
    if csp is not None:
        if type(csp) is not dict:
            problems.append(f"{where}.csp must be an object, got {csp!r}")
        else:
            problems += [f"{where}.csp has the unknown member {k!r}" for k in csp if k not in CSP_KEYS]
            for key in CSP_KEYS:
                if key in csp:
                    problems += _domains_problems(csp[key], f"{where}.csp.{key}")
    permissions = ui.get("permissions")
    if permissions is not None:
        if type(permissions) is not dict:
            problems.append(f"{where}.permissions must be an object, got {permissions!r}")
        else:
            for key, value in permissions.items():
                if key not in PERMISSION_KEYS:
                    problems.append(f"{where}.permissions has the unknown member {key!r}")
                elif value != {} or type(value) is not dict:
                    problems.append(f"{where}.permissions.{key} must be {{}}, got {value!r}")
    if "domain" in ui and type(ui["domain"]) is not str:
        problems.append(f"{where}.domain must be a string, got {ui['domain']!r}")
    if "prefersBorder" in ui and type(ui["prefersBorder"]) is not bool:
        problems.append(f"{where}.prefersBorder must be a boolean, got {ui['prefersBorder']!r}")
    return problems


def tool_meta_problems(ui: Any, where: str = "_meta.ui") -> list[str]:
    """What is wrong with a tool's ``_meta.ui`` (empty when it has the shape of ``McpUiToolMeta``:
    a ``ui://`` ``resourceUri`` and a ``visibility`` of "model"/"app")."""
    if type(ui) is not dict:
        return [f"{where} must be an object, got {ui!r}"]
    problems = [f"{where} has the unknown member {k!r}" for k in ui if k not in _TOOL_META_KEYS]
    uri = ui.get("resourceUri")
    if "resourceUri" in ui and (type(uri) is not str or not uri.startswith(SCHEME)):
        problems.append(f"{where}.resourceUri must be a {SCHEME} URI, got {uri!r}")
    if "visibility" in ui:
        visibility = ui["visibility"]
        if type(visibility) is not list or not all(v in VISIBILITIES for v in visibility):
            problems.append(f'{where}.visibility must be a list of "model" and "app", got {visibility!r}')
        elif not visibility:
            problems.append(f"{where}.visibility is empty: nobody could call the tool")
    return problems


@dataclass(frozen=True, slots=True)
class AppLink:
    """What a tool's ``_meta.ui`` says: the view that renders its results and who may call it."""

    resource_uri: str | None
    visibility: tuple[str, ...] = VISIBILITIES

    @property
    def model_visible(self) -> bool:
        """Whether a host shows the tool to the model (``"model"`` in its visibility)."""
        return "model" in self.visibility

    @property
    def app_callable(self) -> bool:
        """Whether a host lets the view call the tool (``"app"`` in its visibility)."""
        return "app" in self.visibility


def app_link(tool: Mapping[str, Any]) -> AppLink | None:
    """The app link of a ``tools/list`` entry, or None when it has no ``_meta.ui`` (nor the
    deprecated flat ``_meta["ui/resourceUri"]``). Raises ValueError when ``_meta.ui`` is malformed."""
    meta = tool.get("_meta")
    if type(meta) is not dict:
        return None
    ui = meta.get("ui")
    if ui is None:
        flat = meta.get("ui/resourceUri")
        return AppLink(flat) if type(flat) is str else None
    problems = tool_meta_problems(ui, f"tool {tool.get('name')!r}: _meta.ui")
    if problems:
        raise ValueError("; ".join(problems))
    visibility = ui.get("visibility")
    return AppLink(ui.get("resourceUri"), tuple(visibility) if visibility is not None else VISIBILITIES)


def model_tools(tools: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The tools a host puts in the model's tool list: every tool whose visibility includes
    ``"model"`` (the spec's tools/list rule for hosts); a malformed ``_meta.ui`` is left out too."""
    kept = []
    for tool in tools:
        try:
            link = app_link(tool)
        except ValueError:
            continue
        if link is None or link.model_visible:
            kept.append(tool)
    return kept


def declares_apps(extensions: Mapping[str, Any]) -> bool:
    """Whether declared extensions (id -> settings) include MCP Apps with the HTML MIME type."""
    settings = extensions.get(EXTENSION_ID)
    if type(settings) is not dict:
        return False
    mime_types = settings.get("mimeTypes")
    return type(mime_types) is list and MIME_TYPE in mime_types


def content_security_policy(ui: Mapping[str, Any] | None) -> str:
    """The Content-Security-Policy a host applies to a view with this ``_meta.ui`` (the spec's
    construction; without ``csp`` its restrictive default: no network at all)."""
    csp = ui.get("csp") if ui else None
    if type(csp) is not dict:
        return (
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'"
        )

    def joined(key: str) -> str:
        value = csp.get(key)
        return " ".join(v for v in value if type(v) is str) if type(value) is list else ""

    resources, connect = joined("resourceDomains"), joined("connectDomains")
    none, this = "'none'", "'self'"
    directives = [
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline' {resources}",
        f"style-src 'self' 'unsafe-inline' {resources}",
        f"connect-src 'self' {connect}" if connect else "connect-src 'none'",
        f"img-src 'self' data: {resources}",
        f"font-src 'self' {resources}",
        f"media-src 'self' data: {resources}",
        f"frame-src {joined('frameDomains') or none}",
        "object-src 'none'",
        f"base-uri {joined('baseUriDomains') or this}",
    ]
    return "; ".join(" ".join(d.split()) for d in directives)
