"""Revisions as data: one module per revision, flags per the published specs, negotiation."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import jsonrpc_mcp
from jsonrpc_mcp import revisions
from jsonrpc_mcp.revisions import (
    HANDSHAKE_REVISIONS,
    LATEST_HANDSHAKE,
    REVISIONS,
    Revision,
    get_revision,
    negotiate,
)

PACKAGE = Path(jsonrpc_mcp.__file__).resolve().parent


def test_each_revision_module_holds_one_revision_named_after_its_date() -> None:
    modules = [m.name for m in pkgutil.iter_modules(revisions.__path__) if m.name.startswith("rev_")]
    assert modules
    for name in modules:
        module = importlib.import_module(f"jsonrpc_mcp.revisions.{name}")
        revision = module.REVISION
        assert isinstance(revision, Revision)
        assert name == "rev_" + revision.version.replace("-", "_")


def test_handshake_revisions_are_ordered_oldest_first() -> None:
    versions = [r.version for r in HANDSHAKE_REVISIONS]
    assert versions == ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    assert LATEST_HANDSHAKE.version == "2025-11-25"


def test_revisions_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        LATEST_HANDSHAKE.allows_batch = True  # type: ignore[misc]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_negotiate_returns_the_requested_revision_when_supported(version: str) -> None:
    assert negotiate(version).version == version


@pytest.mark.parametrize(
    "requested", ["2026-07-28", "2024-01-01", "", "latest", None, 20241105, ["2025-03-26"]]
)
def test_negotiate_returns_our_latest_otherwise(requested: object) -> None:
    assert negotiate(requested) is LATEST_HANDSHAKE


def test_negotiate_honours_a_narrower_supported_set() -> None:
    old = (REVISIONS["2024-11-05"], REVISIONS["2025-03-26"])
    assert negotiate("2025-11-25", old).version == "2025-03-26"
    assert negotiate("2024-11-05", old).version == "2024-11-05"


def test_get_revision_is_exact() -> None:
    assert get_revision("2025-06-18") is REVISIONS["2025-06-18"]
    assert get_revision("2025-06-18 ") is None


# Flags written out from the published change table (../shared/spec/NOTES.md section 1).
EXPECTED = {
    "allows_batch": {"2025-03-26"},
    "error_id_omittable": {"2025-11-25"},
    "input_errors_as_tool_results": {"2025-11-25"},
    "has_tool_annotations": {"2025-03-26", "2025-06-18", "2025-11-25"},
    "has_titles": {"2025-06-18", "2025-11-25"},
    "has_output_schema": {"2025-06-18", "2025-11-25"},
    "has_icons": {"2025-11-25"},
    "has_audio_content": {"2025-03-26", "2025-06-18", "2025-11-25"},
    "has_resource_links": {"2025-06-18", "2025-11-25"},
    "has_elicitation": {"2025-06-18", "2025-11-25"},
    "has_progress_message": {"2025-03-26", "2025-06-18", "2025-11-25"},
    "has_completions_capability": {"2025-03-26", "2025-06-18", "2025-11-25"},
    "has_definition_meta": {"2025-06-18", "2025-11-25"},
    "tool_name_rules": {"2025-11-25"},
    "has_content_meta": {"2025-06-18", "2025-11-25"},
    "has_annotation_last_modified": {"2025-06-18", "2025-11-25"},
    "has_completion_context": {"2025-06-18", "2025-11-25"},
    "has_url_elicitation": {"2025-11-25"},
    "has_extended_elicitation_schema": {"2025-11-25"},
    "has_sampling_tools": {"2025-11-25"},
    "has_streamable_http": {"2025-03-26", "2025-06-18", "2025-11-25"},
    "has_protocol_version_header": {"2025-06-18", "2025-11-25"},
    "has_sse_priming": {"2025-11-25"},
    "has_handshake": {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"},
    # the stateless revisions' rules: in no handshake revision
    "has_result_type": set(),
    "has_routing_headers": set(),
}


@pytest.mark.parametrize("flag", sorted(EXPECTED))
def test_flag_matches_the_published_revisions(flag: str) -> None:
    assert {r.version for r in HANDSHAKE_REVISIONS if getattr(r, flag)} == EXPECTED[flag]


def test_resource_not_found_is_32002_in_every_handshake_revision() -> None:
    assert {r.resource_not_found_code for r in HANDSHAKE_REVISIONS} == {-32002}


def test_every_boolean_flag_has_an_expectation() -> None:
    flags = {f.name for f in dataclasses.fields(Revision) if f.type in ("bool", bool)}
    assert flags == set(EXPECTED)


@pytest.mark.parametrize("layer", ["server", "client"])
def test_code_above_the_revisions_never_compares_version_strings(layer: str) -> None:
    date = re.compile(r"""["']20\d\d-\d\d-\d\d["']""")  # a revision named in code
    ordered = re.compile(r"""\.version\s*(<|>|[=!]=\s*["'])""")  # ordering, or equality with a literal
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if date.search(line) or ordered.search(line)
    ]
    assert offenders == []


def test_a_request_without_the_version_header_is_taken_to_speak_2025_03_26() -> None:
    assert revisions.DEFAULT_HTTP_VERSION == "2025-03-26"
    handshake = HANDSHAKE_REVISIONS
    assert revisions.assumed_http_revision(handshake).version == "2025-03-26"
    # read from the fields: the latest with Streamable HTTP and without the header, among a
    # server's own revisions; the latest handshake revision when there is none
    assert revisions.assumed_http_revision(revisions.ALL_REVISIONS).version == "2025-03-26"
    assert revisions.assumed_http_revision(handshake[2:]).version == "2025-11-25"
    assert revisions.assumed_http_revision(handshake[:1]).version == "2024-11-05"
    no_header = dataclasses.replace(REVISIONS["2025-06-18"], has_protocol_version_header=False)
    assert revisions.assumed_http_revision((*handshake[:2], no_header)) is no_header
