"""The pure rules of the OAuth client: challenges, canonical URIs, where metadata lives, scopes, PKCE."""

from __future__ import annotations

import base64
import hashlib

import pytest

from jsonrpc_mcp.client.auth._rules import (
    as_metadata_urls,
    canonical_resource,
    parse_challenge,
    pkce_pair,
    prm_urls,
    resource_matches,
    scope_union,
)


def test_a_bearer_challenge_is_read_with_quoted_and_bare_values() -> None:
    challenge = parse_challenge(
        'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'scope="files:read files:write", error=insufficient_scope, error_description="needs \\"write\\""'
    )
    assert challenge.scheme == "Bearer"
    assert challenge.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource"
    assert challenge.scope == "files:read files:write"
    assert challenge.error == "insufficient_scope"
    assert challenge.error_description == 'needs "write"'


def test_the_bearer_challenge_is_picked_among_several() -> None:
    challenge = parse_challenge('Basic realm="x", Bearer scope="a", error="invalid_token"')
    assert (challenge.scheme, challenge.scope, challenge.error) == ("Bearer", "a", "invalid_token")


@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer ,,,", "!!!"])
def test_an_empty_or_odd_challenge_has_no_parameters(header: str | None) -> None:
    assert parse_challenge(header).resource_metadata is None


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("HTTPS://MCP.Example.com/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com:443/mcp/", "https://mcp.example.com/mcp"),
        ("http://127.0.0.1:8000/mcp?x=1#frag", "http://127.0.0.1:8000/mcp"),
        ("https://mcp.example.com/", "https://mcp.example.com"),
    ],
)
def test_canonical_server_uri(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


def test_a_prm_resource_must_name_this_server_or_its_origin() -> None:
    assert resource_matches("https://mcp.example.com/mcp", "https://mcp.example.com/mcp")
    assert resource_matches("https://mcp.example.com", "https://mcp.example.com/mcp")
    assert not resource_matches("https://evil.example.com/mcp", "https://mcp.example.com/mcp")
    assert not resource_matches("https://mcp.example.com/other", "https://mcp.example.com/mcp")
    assert not resource_matches("https://mcp.example.com/mc", "https://mcp.example.com/mcp")


def test_prm_is_looked_for_in_the_spec_order() -> None:
    assert prm_urls("https://h/a/mcp", "https://h/custom.json") == [
        "https://h/custom.json",
        "https://h/.well-known/oauth-protected-resource/a/mcp",
        "https://h/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://h", None) == ["https://h/.well-known/oauth-protected-resource"]


def test_authorization_server_metadata_is_looked_for_in_the_spec_order() -> None:
    assert as_metadata_urls("https://as/tenant1") == [
        "https://as/.well-known/oauth-authorization-server/tenant1",
        "https://as/.well-known/openid-configuration/tenant1",
        "https://as/tenant1/.well-known/openid-configuration",
    ]
    assert as_metadata_urls("https://as/") == [
        "https://as/.well-known/oauth-authorization-server",
        "https://as/.well-known/openid-configuration",
    ]


def test_scopes_are_united_in_first_seen_order() -> None:
    assert scope_union("a b", None, ["b", "c"], "a") == "a b c"
    assert scope_union(None, "") is None


def test_pkce_is_s256_of_a_long_random_verifier() -> None:
    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = hashlib.sha256(verifier.encode()).digest()
    assert challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert pkce_pair()[0] != verifier
