"""The fault server's feature faults: skills, MCP Apps (issue 25) and content (issue 26) — how each
one changes what the wrapped server sends (see :mod:`.faultserver` for the list and its meaning).

Its own module to keep the fault server's within the size a reader takes in at once.
"""

from __future__ import annotations

from typing import Any

from jsonrpc_mcp import wire
from jsonrpc_mcp.apps import EXTENSION_ID, MIME_TYPE

from ._fault_details import _key

__all__ = [
    "APPS_EXTENSION",
    "APPS_FAULTS",
    "APPS_MIME",
    "CONTENT_FAULTS",
    "_apps_fault",
    "_content_fault",
    "_declare_apps",
    "_drops_log",
    "_items",
    "_skills_fault",
]


def _items(value: Any) -> list[Any]:
    """A frame's messages: a batch's, or the one."""
    return value if isinstance(value, list) else [value]


APPS_FAULTS = (
    "apps-undeclared",
    "apps-link-scheme",
    "apps-dangling-link",
    "apps-wrong-mime",
    "apps-tool-meta-malformed",
    "apps-resource-meta-malformed",
    "apps-app-only-shown",
)
APPS_EXTENSION, APPS_MIME = EXTENSION_ID, MIME_TYPE  # (the library's names for them)
CONTENT_FAULTS = (
    "content-as-text",
    "schema-keywords-stripped",
    "elicitation-schema-plain",
    "no-log-messages",
)


def _skills_fault(faults: set[str], method: str | None, item: dict[str, Any]) -> bool:
    """The skills faults: rewrite a ``skills/list`` or ``skills/get`` answer (True when changed)."""
    result, error = item.get("result"), item.get("error")
    if method not in ("skills/list", "skills/get"):
        return False
    if method == "skills/get" and "skills-unknown-32002" in faults and isinstance(error, dict):
        error["code"] = -32002
        return True
    if not isinstance(result, dict):
        return False
    listed = result.get("skills") if method == "skills/list" else [result.get("skill")]
    entries: list[dict[str, Any]] = (
        [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
    )
    changed = False
    for entry in entries:
        if "skills-no-manifest" in faults and method == "skills/list":
            changed = entry.pop("resources", None) is not None or changed
        for file in entry.get("resources", []) if "skills-stale-digest" in faults else []:
            if isinstance(file, dict) and isinstance(file.get("digest"), str):
                file["digest"] = file["digest"][:-1] + ("0" if file["digest"][-1] != "0" else "1")
                changed = True
    if "skills-get-bare" in faults and method == "skills/get" and isinstance(result.get("skill"), dict):
        result.update(result.pop("skill"))
        changed = True
    return changed


# -- the MCP Apps faults (issue 25) ----------------------------------------------------------------


def _declare_apps(method: str, params: Any) -> bool:
    """apps-app-only-shown: the request's client capabilities declare the extension (True when changed)."""
    if not isinstance(params, dict):
        return False
    if method == wire.INITIALIZE:
        caps = params.get("capabilities")
    else:
        meta = params.get("_meta")
        caps = meta.get(wire.CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    if not isinstance(caps, dict):
        return False
    found = caps.get("extensions")
    extensions: dict[str, Any] = found if isinstance(found, dict) else {}
    if APPS_EXTENSION in extensions:
        return False
    caps["extensions"] = {**extensions, APPS_EXTENSION: {"mimeTypes": [APPS_MIME]}}
    return True


def _ui(entry: Any) -> dict[str, Any] | None:
    """An entry's ``_meta.ui`` object, or None."""
    meta = entry.get("_meta") if isinstance(entry, dict) else None
    ui = meta.get("ui") if isinstance(meta, dict) else None
    return ui if isinstance(ui, dict) else None


def _apps_fault(faults: set[str], methods: dict[Any, str], value: Any) -> bool:
    """The MCP Apps faults: rewrite an answer in place (True when changed)."""
    changed = False
    for item in _items(value):
        result = item.get("result") if isinstance(item, dict) and "method" not in item else None
        if not isinstance(result, dict):
            continue
        method = methods.get(_key(item.get("id")))
        caps = result.get("capabilities")
        extensions = caps.get("extensions") if isinstance(caps, dict) else None
        if "apps-undeclared" in faults and isinstance(extensions, dict):
            changed = extensions.pop(APPS_EXTENSION, None) is not None or changed
        if method == "tools/list":
            changed = _apps_tools(faults, result.get("tools")) or changed
        elif method in ("resources/list", "resources/read"):
            entries = result.get("resources" if method == "resources/list" else "contents")
            changed = _apps_resources(faults, method, entries) or changed
    return changed


def _apps_tools(faults: set[str], tools: Any) -> bool:
    changed = False
    for tool in tools if isinstance(tools, list) else ():
        ui = _ui(tool)
        if ui is None:
            continue
        uri = ui.get("resourceUri")
        if "apps-link-scheme" in faults and isinstance(uri, str) and uri.startswith("ui://"):
            ui["resourceUri"] = "https://" + uri[len("ui://") :]
            changed = True
        visibility = ui.get("visibility")
        app_only = isinstance(visibility, list) and "model" not in visibility
        if "apps-dangling-link" in faults and app_only and isinstance(uri, str):
            ui["resourceUri"] = "ui://conformance-fault/no-such-view"
            changed = True
        if "apps-tool-meta-malformed" in faults:
            ui["visibility"] = ",".join(visibility if isinstance(visibility, list) else ["model", "app"])
            changed = True
    return changed


def _apps_resources(faults: set[str], method: str, entries: Any) -> bool:
    changed = False
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, dict):
            continue
        is_view = str(entry.get("uri", "")).startswith("ui://")
        if "apps-wrong-mime" in faults and method == "resources/read" and entry.get("mimeType") == APPS_MIME:
            entry["mimeType"] = "text/html"
            changed = True
        if "apps-resource-meta-malformed" in faults and is_view:
            meta = entry.get("_meta")
            entry["_meta"] = meta = meta if isinstance(meta, dict) else {}
            ui = meta.get("ui")
            meta["ui"] = {**(ui if isinstance(ui, dict) else {}), "prefersBorder": "true"}
            changed = True
    return changed


# -- the content faults (issue 26) ---------------------------------------------------------------

_STRIPPED_KEYWORDS = ("$schema", "$defs", "allOf", "if", "then", "else", "additionalProperties")


def _drops_log(faults: set[str], value: Any) -> bool:
    """no-log-messages: whether ``value`` is a notifications/message (never sent)."""
    return "no-log-messages" in faults and isinstance(value, dict) and value.get("method") == wire.MESSAGE


def _content_fault(faults: set[str], methods: dict[Any, str], value: Any) -> bool:
    """The content faults: rewrite an answer or a server request in place (True when changed)."""
    changed = False
    for item in _items(value):
        if not isinstance(item, dict):
            continue
        if "elicitation-schema-plain" in faults and item.get("method") == "elicitation/create":
            changed = _plain_elicitation(item.get("params")) or changed
        result = item.get("result")
        method = methods.get(_key(item.get("id"))) if "method" not in item else None
        if isinstance(result, dict) and method is not None:
            if "content-as-text" in faults:
                changed = _as_text(method, result) or changed
            if "schema-keywords-stripped" in faults and method == "tools/list":
                for tool in result.get("tools") or ():
                    schema = tool.get("inputSchema") if isinstance(tool, dict) else None
                    if isinstance(schema, dict):
                        for key in _STRIPPED_KEYWORDS:
                            changed = schema.pop(key, None) is not None or changed
    return changed


def _plain_elicitation(params: Any) -> bool:
    """elicitation-schema-plain: the asked properties lose their defaults and enum forms."""
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    changed = False
    for prop in properties.values() if isinstance(properties, dict) else ():
        for key in ("default", "oneOf", "enumNames", "items") if isinstance(prop, dict) else ():
            changed = prop.pop(key, None) is not None or changed
    return changed


def _as_text(method: str, result: dict[str, Any]) -> bool:
    """content-as-text: content items become text, resource contents lose their text and blob."""
    plain = {"type": "text", "text": "rewritten"}
    changed = False
    if method == "tools/call" and isinstance(result.get("content"), list):
        result["content"] = [dict(plain) for _ in result["content"]]
        result.pop("isError", None)
        changed = True
    messages = result.get("messages") if method == "prompts/get" else None
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict):
            message["content"] = dict(plain)
            changed = True
    contents = result.get("contents") if method == "resources/read" else None
    for entry in contents if isinstance(contents, list) else ():
        if isinstance(entry, dict):
            changed = entry.pop("text", None) is not None or changed
            changed = entry.pop("blob", None) is not None or changed
    return changed
