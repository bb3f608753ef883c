"""HTTP request checks, sans-IO: Host/Origin allowlists (DNS rebinding), Accept, Content-Type, ids."""

from __future__ import annotations

import pytest

from jsonrpc_mcp.http._security import (
    ALLOWED,
    LOOPBACK_HOSTS,
    LOOPBACK_ORIGINS,
    Decision,
    TransportSecurity,
    accepts,
    content_length,
    content_type_is_json,
    default_allowed_hosts,
    default_allowed_origins,
    header,
    header_values,
    is_loopback,
    is_visible_ascii,
    split_host,
)

Headers = list[tuple[bytes, bytes]]


def hdrs(*pairs: tuple[str, str]) -> Headers:
    """ASGI headers from (name, value) strings; names lower-cased as ASGI servers deliver them."""
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in pairs]


LOOPBACK = TransportSecurity.for_bind("127.0.0.1", 8000)


# -- header helpers ------------------------------------------------------------------------------------


def test_header_finds_a_value_by_name_in_any_case() -> None:
    headers = hdrs(("host", "localhost"), ("content-type", "application/json"))
    assert header(headers, "Content-Type") == "application/json"
    assert header(headers, b"CONTENT-TYPE") == "application/json"


def test_header_is_none_when_absent() -> None:
    assert header(hdrs(("host", "localhost")), "origin") is None


def test_header_joins_repeated_lines_with_a_comma() -> None:
    headers = hdrs(("accept", "application/json"), ("accept", "text/event-stream"))
    assert header(headers, "accept") == "application/json, text/event-stream"


def test_header_values_keeps_each_line_and_decodes_latin1() -> None:
    headers = [(b"x-a", b"one"), (b"x-b", b"skip"), (b"x-a", b"caf\xe9")]
    assert header_values(headers, "x-a") == ["one", "café"]


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([], None),
        (["0"], 0),
        (["4194304"], 4194304),
        ([" 12 "], 12),
        (["12", "12"], 12),
        (["12", "13"], None),
        (["-1"], None),
        (["1e3"], None),
        (["\u00b2"], None),  # a latin-1 "digit" that int() refuses
        ([""], None),
    ],
)
def test_content_length(values: list[str], expected: int | None) -> None:
    assert content_length(hdrs(*[("content-length", v) for v in values])) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a", True),
        ("3f9c0e4b-8d1a-4c55-a0b7-2f6e1d9c8b7a", True),
        ("!~all-visible_ASCII.0123456789", True),
        (b"bytes-work-too", True),
        ("", False),
        (b"", False),
        ("has space", False),
        ("tab\there", False),
        ("newline\n", False),
        ("del\x7f", False),
        ("caf\u00e9", False),
        (b"caf\xe9", False),
    ],
)
def test_is_visible_ascii_accepts_only_0x21_to_0x7e(value: str | bytes, expected: bool) -> None:
    assert is_visible_ascii(value) is expected


# -- Accept ----------------------------------------------------------------------------------------------

BOTH = ("application/json", "text/event-stream")


@pytest.mark.parametrize(
    "accept",
    [
        "application/json, text/event-stream",
        "text/event-stream, application/json",
        "application/json,text/event-stream",
        "Application/JSON, Text/Event-Stream",
        "application/json;q=0.9, text/event-stream;q=0.1",
        "*/*",
        "application/*, text/*",
        "application/json, text/*",
        "text/event-stream, */*;q=0.5",
        'application/json; profile="a,b", text/event-stream',
        "application/json; charset=utf-8, text/event-stream",
        "application/json ; q=1.0 , text/event-stream ; q=0.001",
    ],
)
def test_accepts_both_media_types(accept: str) -> None:
    assert accepts(hdrs(("accept", accept)), *BOTH)


@pytest.mark.parametrize(
    "accept",
    [
        "application/json",
        "text/event-stream",
        "text/html",
        "application/*",
        "",
        "application/json, text/event-stream;q=0",
        "*/*, text/event-stream;q=0",
        "text/*;q=0, */*",
        "application/json;q=0, application/*, text/event-stream",
        "application/json, text/event-stream;q=abc",  # a malformed range is ignored
        "application/json, text/event-stream;q=1.5",
        "application/json, event-stream",
    ],
)
def test_does_not_accept_both_media_types(accept: str) -> None:
    assert not accepts(hdrs(("accept", accept)), *BOTH)


def test_accepts_reads_repeated_accept_lines_as_one_list() -> None:
    headers = hdrs(("accept", "application/json"), ("accept", "text/event-stream"))
    assert accepts(headers, *BOTH)


def test_accepts_a_single_type() -> None:
    assert accepts(hdrs(("accept", "text/event-stream")), "text/event-stream")
    assert not accepts(hdrs(("accept", "application/json")), "text/event-stream")


def test_most_specific_range_wins_over_a_broader_zero() -> None:
    assert accepts(hdrs(("accept", "*/*;q=0, text/event-stream")), "text/event-stream")


def test_repeated_range_at_the_same_specificity_takes_the_highest_q() -> None:
    accept = "text/event-stream;q=0.5, text/event-stream;q=0"
    assert accepts(hdrs(("accept", accept)), "text/event-stream")


def test_missing_accept_is_refused_by_default() -> None:
    assert not accepts(hdrs(("host", "localhost")), *BOTH)


def test_missing_accept_can_mean_anything_on_request() -> None:
    assert accepts(hdrs(("host", "localhost")), *BOTH, if_absent=True)


def test_present_but_empty_accept_is_not_taken_as_absent() -> None:
    assert not accepts(hdrs(("accept", "")), *BOTH, if_absent=True)


# -- Content-Type --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "Application/JSON",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        'application/json; charset="utf-8"',
        "application/json ; foo=bar",
    ],
)
def test_json_content_types(content_type: str) -> None:
    assert content_type_is_json(hdrs(("content-type", content_type)))


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/jsonx",
        "application/vnd.api+json",
        "application/json-seq",
        "application",
        "",
        "application/json; charset=utf-16",
        "application/json; charset=latin-1",
        "application/json; broken",
        "application/json, text/plain",
    ],
)
def test_non_json_content_types(content_type: str) -> None:
    assert not content_type_is_json(hdrs(("content-type", content_type)))


def test_missing_content_type_is_not_json() -> None:
    assert not content_type_is_json(hdrs(("host", "localhost")))


def test_repeated_content_type_is_not_json() -> None:
    headers = hdrs(("content-type", "application/json"), ("content-type", "application/json"))
    assert not content_type_is_json(headers)


# -- Host syntax, loopback ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("localhost", ("localhost", None)),
        ("LocalHost:8000", ("localhost", 8000)),
        ("127.0.0.1:65535", ("127.0.0.1", 65535)),
        ("[::1]", ("[::1]", None)),
        ("[::1]:8000", ("[::1]", 8000)),
        ("[0:0:0:0:0:0:0:1]:8000", ("[::1]", 8000)),
        ("[FE80::A]", ("[fe80::a]", None)),
        ("localhost:", ("localhost", None)),
        ("mcp.example.com:443", ("mcp.example.com", 443)),
        ("", None),
        ("::1", None),
        ("[::1", None),
        ("[::1]8000", None),
        ("[not-ipv6]", None),
        ("localhost:99999", None),
        ("localhost:80:80", None),
        ("localhost:http", None),
        ("user@localhost", None),
        ("local host", None),
        ("localhost/path", None),
    ],
)
def test_split_host(value: str, expected: tuple[str, int | None] | None) -> None:
    assert split_host(value) == expected


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("localhost", True),
        ("LOCALHOST", True),
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("localhost.example.com", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


# -- default allowlists from the bind address --------------------------------------------------------


def test_loopback_bind_allows_the_loopback_names_with_any_port() -> None:
    assert default_allowed_hosts("127.0.0.1") == list(LOOPBACK_HOSTS)
    assert LOOPBACK_HOSTS == ("localhost:*", "127.0.0.1:*", "[::1]:*")
    assert default_allowed_origins("127.0.0.1") == list(LOOPBACK_ORIGINS)
    assert set(LOOPBACK_ORIGINS) == {
        "http://localhost:*",
        "https://localhost:*",
        "http://127.0.0.1:*",
        "https://127.0.0.1:*",
        "http://[::1]:*",
        "https://[::1]:*",
    }


@pytest.mark.parametrize("bind", ["localhost", "::1", "[::1]", "127.0.0.1"])
def test_every_spelling_of_a_loopback_bind_gives_the_loopback_names(bind: str) -> None:
    assert default_allowed_hosts(bind) == list(LOOPBACK_HOSTS)


def test_another_loopback_address_is_added_to_the_loopback_names() -> None:
    assert default_allowed_hosts("127.0.0.2") == [*LOOPBACK_HOSTS, "127.0.0.2:*"]


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", ""])
def test_wildcard_bind_defaults_to_the_loopback_names_only(bind: str) -> None:
    assert default_allowed_hosts(bind) == list(LOOPBACK_HOSTS)
    assert default_allowed_origins(bind) == list(LOOPBACK_ORIGINS)


def test_specific_bind_defaults_to_the_bound_host() -> None:
    assert default_allowed_hosts("192.168.1.5") == ["192.168.1.5:*"]
    assert default_allowed_hosts("fe80::1") == ["[fe80::1]:*"]
    assert default_allowed_hosts("MCP.example.com") == ["mcp.example.com:*"]
    assert default_allowed_origins("192.168.1.5") == ["http://192.168.1.5:*", "https://192.168.1.5:*"]


def test_exact_port_pins_the_defaults_to_the_bound_port() -> None:
    assert default_allowed_hosts("127.0.0.1", 8000, exact_port=True) == [
        "localhost:8000",
        "127.0.0.1:8000",
        "[::1]:8000",
    ]
    assert default_allowed_origins("192.168.1.5", 8000, exact_port=True) == [
        "http://192.168.1.5:8000",
        "https://192.168.1.5:8000",
    ]


def test_exact_default_port_also_allows_host_without_port() -> None:
    assert default_allowed_hosts("192.168.1.5", 443, exact_port=True) == ["192.168.1.5:443", "192.168.1.5"]


@pytest.mark.parametrize("port", [None, 0])
def test_exact_port_without_a_known_port_falls_back_to_any_port(port: int | None) -> None:
    assert default_allowed_hosts("127.0.0.1", port, exact_port=True) == list(LOOPBACK_HOSTS)


# -- Host check ------------------------------------------------------------------------------------------


def host_check(security: TransportSecurity, host: str) -> Decision:
    return security.check_host(hdrs(("host", host)))


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "localhost:8000",
        "LocalHost:8000",
        "localhost:1",
        "127.0.0.1",
        "127.0.0.1:8000",
        "[::1]",
        "[::1]:8000",
        "[0:0:0:0:0:0:0:1]:8000",
    ],
)
def test_loopback_bound_server_allows_loopback_hosts(host: str) -> None:
    assert host_check(LOOPBACK, host) == ALLOWED


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8000",
        "localhost.evil.example:8000",
        "127.0.0.1.nip.io:8000",
        "localhost.:8000",
        "127.0.0.2:8000",
        "[::2]:8000",
        "192.168.1.5:8000",
    ],
)
def test_loopback_bound_server_forbids_other_hosts(host: str) -> None:
    decision = host_check(LOOPBACK, host)
    assert (decision.allowed, decision.status) == (False, 403)
    assert decision.reason == f"Forbidden: Host {host!r} is not allowed"


@pytest.mark.parametrize("host", ["", "::1", "[::1", "localhost:99999", "local host", "user@localhost"])
def test_malformed_host_is_a_bad_request(host: str) -> None:
    decision = host_check(LOOPBACK, host)
    assert (decision.allowed, decision.status) == (False, 400)
    assert decision.reason.startswith("Bad Request: malformed Host header")


def test_missing_host_is_a_bad_request() -> None:
    assert LOOPBACK.check_host(hdrs(("accept", "*/*"))) == Decision(
        False, 400, "Bad Request: missing Host header"
    )


def test_repeated_host_is_a_bad_request() -> None:
    decision = LOOPBACK.check_host(hdrs(("host", "localhost"), ("host", "localhost")))
    assert decision == Decision(False, 400, "Bad Request: more than one Host header")


def test_wildcard_bound_server_allows_loopback_but_not_its_lan_address_by_default() -> None:
    security = TransportSecurity.for_bind("0.0.0.0", 8000)
    assert host_check(security, "localhost:8000").allowed
    assert host_check(security, "192.168.1.5:8000").status == 403


def test_wildcard_bound_server_allows_what_its_explicit_list_names() -> None:
    security = TransportSecurity.for_bind("0.0.0.0", 8000, allowed_hosts=["192.168.1.5:*", "mcp.example.com"])
    assert host_check(security, "192.168.1.5:8000").allowed
    assert host_check(security, "mcp.example.com").allowed
    assert host_check(security, "localhost:8000").status == 403  # an explicit list replaces the default


def test_an_explicit_list_can_extend_the_default() -> None:
    hosts = [*default_allowed_hosts("0.0.0.0"), "mcp.example.com:*"]
    security = TransportSecurity.for_bind("0.0.0.0", allowed_hosts=hosts)
    assert host_check(security, "localhost:8000").allowed
    assert host_check(security, "mcp.example.com:8000").allowed


def test_specific_bound_server_allows_its_own_address_only() -> None:
    security = TransportSecurity.for_bind("192.168.1.5", 8000)
    assert host_check(security, "192.168.1.5:8000").allowed
    assert host_check(security, "localhost:8000").status == 403


def test_ipv6_bound_server_allows_its_bracketed_address() -> None:
    security = TransportSecurity.for_bind("fe80::1", 8000)
    assert host_check(security, "[fe80::1]:8000").allowed
    assert host_check(security, "[FE80:0::1]").allowed
    assert host_check(security, "[fe80::2]:8000").status == 403


def test_exact_port_forbids_other_ports() -> None:
    security = TransportSecurity.for_bind("127.0.0.1", 8000, exact_port=True)
    assert host_check(security, "localhost:8000").allowed
    assert host_check(security, "localhost:8001").status == 403
    assert host_check(security, "localhost").status == 403


def test_star_host_disables_the_host_check_even_without_a_host_header() -> None:
    security = TransportSecurity(["*"], [])
    assert host_check(security, "anything.example:1").allowed
    assert security.check_host(hdrs(("accept", "*/*"))) == ALLOWED


@pytest.mark.parametrize(
    ("pattern", "host", "allowed"),
    [
        ("mcp.example.com", "mcp.example.com", True),
        ("mcp.example.com", "MCP.Example.COM", True),
        ("mcp.example.com", "mcp.example.com:8443", False),
        ("MCP.example.com:8443", "mcp.example.com:8443", True),
        ("mcp.example.com:8443", "mcp.example.com", False),
        ("mcp.example.com:8443", "mcp.example.com:8444", False),
        ("mcp.example.com:*", "mcp.example.com", True),
        ("mcp.example.com:*", "mcp.example.com:1", True),
        ("mcp.example.com:*", "api.mcp.example.com:1", False),
        ("*.example.com", "a.example.com", True),
        ("*.example.com", "a.b.example.com", True),
        ("*.example.com", "example.com", False),
        ("*.example.com", "badexample.com", False),
        ("*.example.com", ".example.com", False),
        ("*.example.com", "a.example.com:8000", False),
        ("*.example.com:*", "a.example.com:8000", True),
        ("[::1]:*", "[::1]:8000", True),
        ("[0::1]:8000", "[::1]:8000", True),
        ("[::1]:8000", "[::1]:9000", False),
    ],
)
def test_host_patterns(pattern: str, host: str, allowed: bool) -> None:
    assert TransportSecurity([pattern], []).host_allowed(host) is allowed


@pytest.mark.parametrize(
    "pattern",
    ["", "exa mple.com", "http://example.com", "example.com:*:*", "*:80", "[::1", "host:99999", "a*.b"],
)
def test_bad_host_pattern_is_refused_at_construction(pattern: str) -> None:
    with pytest.raises(ValueError, match="not a host pattern"):
        TransportSecurity([pattern], [])


# -- Origin check --------------------------------------------------------------------------------------


def origin_check(security: TransportSecurity, origin: str) -> Decision:
    return security.check_origin(hdrs(("host", "localhost:8000"), ("origin", origin)))


def test_absent_origin_is_allowed() -> None:
    assert LOOPBACK.check_origin(hdrs(("host", "localhost:8000"))) == ALLOWED


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost",
        "http://localhost:8000",
        "http://localhost:5173",
        "https://localhost",
        "HTTP://LocalHost:3000",
        "http://127.0.0.1:8000",
        "https://127.0.0.1",
        "http://[::1]:8000",
        "https://[::1]",
    ],
)
def test_loopback_bound_server_allows_loopback_origins(origin: str) -> None:
    assert origin_check(LOOPBACK, origin) == ALLOWED


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://evil.example:8000",
        "http://localhost.evil.example",
        "http://127.0.0.1.nip.io:8000",
        "null",
        "ftp://localhost",
        "file://",
        "http://localhost:8000/",
        "http://localhost/path",
        "localhost:8000",
        "http://user@localhost",
        "",
        "http://localhost:99999",
    ],
)
def test_loopback_bound_server_forbids_other_or_malformed_origins(origin: str) -> None:
    decision = origin_check(LOOPBACK, origin)
    assert (decision.allowed, decision.status) == (False, 403)
    assert decision.reason == f"Forbidden: Origin {origin!r} is not allowed"


def test_repeated_origin_is_forbidden() -> None:
    headers = hdrs(("host", "localhost"), ("origin", "http://localhost"), ("origin", "http://localhost"))
    assert LOOPBACK.check_origin(headers) == Decision(False, 403, "Forbidden: more than one Origin header")


def test_specific_bound_server_allows_pages_from_its_own_address() -> None:
    security = TransportSecurity.for_bind("192.168.1.5", 8000)
    assert origin_check(security, "http://192.168.1.5:8000").allowed
    assert origin_check(security, "http://localhost:8000").status == 403


def test_wildcard_bound_server_allows_loopback_origins_by_default() -> None:
    security = TransportSecurity.for_bind("0.0.0.0", 8000)
    assert origin_check(security, "http://localhost:3000").allowed
    assert origin_check(security, "http://192.168.1.5:8000").status == 403


def test_exact_port_origins_are_same_origin_only() -> None:
    security = TransportSecurity.for_bind("127.0.0.1", 8000, exact_port=True)
    assert origin_check(security, "http://localhost:8000").allowed
    assert origin_check(security, "http://localhost:5173").status == 403


@pytest.mark.parametrize(
    ("pattern", "origin", "allowed"),
    [
        ("https://app.example.com", "https://app.example.com", True),
        ("https://app.example.com", "HTTPS://APP.EXAMPLE.COM", True),
        ("https://app.example.com", "https://app.example.com:443", True),
        ("https://app.example.com:443", "https://app.example.com", True),
        ("http://app.example.com:80", "http://app.example.com", True),
        ("https://app.example.com", "http://app.example.com", False),
        ("https://app.example.com", "https://app.example.com:8443", False),
        ("https://app.example.com", "https://app.example.com.evil.example", False),
        ("https://app.example.com:8443", "https://app.example.com:8443", True),
        ("https://app.example.com:*", "https://app.example.com:8443", True),
        ("https://app.example.com:*", "https://app.example.com", True),
        ("https://*.example.com", "https://a.example.com", True),
        ("https://*.example.com", "https://example.com", False),
        ("https://*.example.com", "https://a.example.com:8443", False),
        ("https://*.example.com:*", "https://a.example.com:8443", True),
        ("http://[::1]:*", "http://[0:0::1]:3000", True),
        ("null", "null", True),
        ("null", "https://app.example.com", False),
        ("vscode-webview://abc", "vscode-webview://abc", True),
    ],
)
def test_origin_patterns(pattern: str, origin: str, allowed: bool) -> None:
    assert TransportSecurity(["*"], [pattern]).origin_allowed(origin) is allowed


def test_star_origin_allows_any_origin_including_null() -> None:
    security = TransportSecurity(["*"], ["*"])
    for origin in ("https://evil.example", "null", "whatever"):
        assert origin_check(security, origin).allowed


@pytest.mark.parametrize(
    "pattern", ["", "localhost:3000", "https://", "https://app.example.com/", "https://a b", "*.example.com"]
)
def test_bad_origin_pattern_is_refused_at_construction(pattern: str) -> None:
    with pytest.raises(ValueError, match="not an origin pattern"):
        TransportSecurity(["*"], [pattern])


# -- check(): both, in order ---------------------------------------------------------------------------


def test_check_allows_a_good_request() -> None:
    headers = hdrs(("host", "127.0.0.1:8000"), ("origin", "http://localhost:5173"))
    assert LOOPBACK.check(headers) == ALLOWED


def test_check_reports_the_host_before_the_origin() -> None:
    headers = hdrs(("host", "evil.example:8000"), ("origin", "https://evil.example"))
    assert LOOPBACK.check(headers).reason == "Forbidden: Host 'evil.example:8000' is not allowed"


def test_check_reports_a_bad_origin_behind_a_good_host() -> None:
    headers = hdrs(("host", "localhost:8000"), ("origin", "https://evil.example"))
    assert LOOPBACK.check(headers) == Decision(
        False, 403, "Forbidden: Origin 'https://evil.example' is not allowed"
    )


def test_check_accepts_a_one_shot_iterable() -> None:
    headers = iter(hdrs(("host", "localhost:8000"), ("origin", "https://evil.example")))
    assert LOOPBACK.check(headers).status == 403


def test_disabled_allows_anything() -> None:
    headers = hdrs(("origin", "https://evil.example"))
    assert TransportSecurity.disabled().check(headers) == ALLOWED


def test_reason_quotes_a_hostile_value_safely() -> None:
    value = "evil\x00\x1b" + "x" * 200
    decision = LOOPBACK.check(hdrs(("host", "localhost"), ("origin", value)))
    assert decision.status == 403
    assert "\x00" not in decision.reason and "\x1b" not in decision.reason
    assert "evil??" + "x" * 94 + "..." in decision.reason


def test_security_keeps_its_lists_for_inspection() -> None:
    security = TransportSecurity(["localhost:*"], ["http://localhost:*"])
    assert security.allowed_hosts == ("localhost:*",)
    assert security.allowed_origins == ("http://localhost:*",)
    assert "localhost:*" in repr(security)
