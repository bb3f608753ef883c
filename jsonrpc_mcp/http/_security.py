"""Request checks for the HTTP transports, sans-IO: DNS-rebinding protection and request shape.

Everything here is a pure function over ASGI-style data: ``headers`` is the ``scope["headers"]``
list of ``(name, value)`` byte pairs with lower-case names. Values are decoded as latin-1, so no
byte is ever lost or rejected by decoding.

DNS rebinding (MCP ``basic/transports``, "Security Warning"): servers MUST validate ``Origin`` on
all incoming connections, and from 2025-11-25 a present, invalid ``Origin`` gets **403**. We also
check ``Host``: a rebinding attack reaches a local server under the attacker's DNS name, which the
browser puts in ``Host``. :class:`TransportSecurity` holds both allowlists, and its ``for_bind``
builds the defaults from the address the server is bound to.

Allowlist patterns (case-insensitive):

* hosts: ``"*"`` (any Host, i.e. no Host check), ``"name"`` (that name with no port),
  ``"name:8000"`` (that name and port), ``"name:*"`` (that name with any port or none),
  ``"*.example.com"`` (any subdomain, not ``example.com`` itself; combinable with a port part),
  IPv6 literals in brackets: ``"[::1]:*"``.
* origins: ``"*"`` (any Origin, including ``null``), ``"null"`` (the opaque origin of sandboxed
  frames and ``file:`` pages), ``"scheme://host"``, ``"scheme://host:port"``,
  ``"scheme://host:*"``, with ``*.example.com`` hosts as above. Default ports are normalised
  (``https://a.example:443`` is ``https://a.example``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ALLOWED",
    "LOOPBACK_HOSTS",
    "LOOPBACK_NAMES",
    "LOOPBACK_ORIGINS",
    "Decision",
    "Headers",
    "TransportSecurity",
    "accepts",
    "content_length",
    "content_type_is_json",
    "default_allowed_hosts",
    "default_allowed_origins",
    "header",
    "header_values",
    "is_loopback",
    "is_visible_ascii",
    "split_host",
]

Headers = Iterable[tuple[bytes, bytes]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
LOOPBACK_HOSTS: tuple[str, ...] = tuple(f"{name}:*" for name in LOOPBACK_NAMES)
"""The default Host allowlist of a loopback-bound server: the loopback names with any port."""
LOOPBACK_ORIGINS: tuple[str, ...] = tuple(
    f"{scheme}://{name}:*" for name in LOOPBACK_NAMES for scheme in ("http", "https")
)
"""The default Origin allowlist of a loopback-bound server."""

_WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::", "[::]"})
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_ANY_PORT = -1  # in a compiled pattern: any port, or none

_REG_NAME = re.compile(r"[A-Za-z0-9._~!$&'()+,;=%-]+")
_ORIGIN = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#@\s]+)")
_PORT = re.compile(r"[0-9]{1,5}")
_DIGITS = re.compile(r"[0-9]+")


# -- headers ----------------------------------------------------------------------------------------


def _key(name: str | bytes) -> bytes:
    return (name.encode("latin-1") if isinstance(name, str) else name).lower()


def header_values(headers: Headers, name: str | bytes) -> list[str]:
    """Every value of the header ``name`` (any case), in order, each decoded as latin-1."""
    key = _key(name)
    return [value.decode("latin-1") for k, value in headers if k.lower() == key]


def header(headers: Headers, name: str | bytes) -> str | None:
    """The header's value, or None when absent. Repeated lines are joined with ``", "``, which is
    what they mean for list-valued fields such as ``Accept`` (RFC 9110 §5.3); for singleton fields
    a repeat then reads as one malformed value."""
    values = header_values(headers, name)
    return ", ".join(values) if values else None


def content_length(headers: Headers) -> int | None:
    """The declared body size; None when absent, repeated with different values, or malformed."""
    values = {v.strip() for v in header_values(headers, b"content-length")}
    if len(values) != 1:
        return None
    (value,) = values
    return int(value) if _DIGITS.fullmatch(value) else None


def is_visible_ascii(value: str | bytes) -> bool:
    """True if ``value`` is non-empty and only bytes 0x21-0x7E: what an ``Mcp-Session-Id`` may hold
    (``basic/transports``, "Session Management")."""
    if isinstance(value, str):
        if not value.isascii():
            return False
        value = value.encode("ascii")
    return bool(value) and all(0x21 <= byte <= 0x7E for byte in value)


# -- lists with parameters (Accept, Content-Type) ----------------------------------------------------


def _split(value: str, separator: str) -> list[str]:
    """Split on ``separator`` outside quoted strings; strip each part."""
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in value:
        if escaped:
            escaped = False
        elif quoted and char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == separator and not quoted:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return parts


def _media_type(value: str) -> tuple[str, str, dict[str, str]] | None:
    """``type/subtype; k=v`` -> (type, subtype, params), lower-cased names; None if malformed."""
    first, *rest = _split(value, ";")
    kind, slash, subtype = first.partition("/")
    kind, subtype = kind.strip().lower(), subtype.strip().lower()
    if not slash or not kind or not subtype:
        return None
    params: dict[str, str] = {}
    for item in rest:
        if not item:
            continue
        key, equals, raw = item.partition("=")
        if not equals:
            return None
        raw = raw.strip()
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        params[key.strip().lower()] = raw
    return kind, subtype, params


def _quality(ranges: list[tuple[str, str, float]], media_type: str) -> float:
    """The q-value ``media_type`` gets from the most specific range that matches it (RFC 9110
    §12.5.1); 0 when none does. Ties at the same specificity take the highest q."""
    kind, _, subtype = media_type.lower().partition("/")
    best_specificity, best_q = -1, 0.0
    for range_kind, range_subtype, q in ranges:
        if range_kind == kind and range_subtype == subtype:
            specificity = 2
        elif range_kind == kind and range_subtype == "*":
            specificity = 1
        elif range_kind == "*" and range_subtype == "*":
            specificity = 0
        else:
            continue
        if specificity > best_specificity or (specificity == best_specificity and q > best_q):
            best_specificity, best_q = specificity, q
    return best_q


def _accept_ranges(value: str) -> list[tuple[str, str, float]]:
    ranges: list[tuple[str, str, float]] = []
    for item in _split(value, ","):
        parsed = _media_type(item) if item else None
        if parsed is None:
            continue  # an empty list element or a malformed range: ignored
        kind, subtype, params = parsed
        q = 1.0
        if "q" in params:
            try:
                q = float(params["q"])
            except ValueError:
                continue
            if not 0.0 <= q <= 1.0:
                continue
        ranges.append((kind, subtype, q))
    return ranges


def accepts(headers: Headers, *types: str, if_absent: bool = False) -> bool:
    """True if the request's ``Accept`` makes every one of ``types`` acceptable (q > 0).

    Honours q-values, ``*/*`` and ``type/*`` with the most specific range deciding (so
    ``*/*, text/event-stream;q=0`` refuses SSE). Parameters other than ``q`` are ignored.
    Without an ``Accept`` header the answer is ``if_absent``: HTTP says "anything" (RFC 9110
    §12.5.1), but MCP clients MUST list ``application/json`` and ``text/event-stream`` on a POST
    and ``text/event-stream`` on a GET, so the default is False (then answer 406).
    """
    value = header(headers, b"accept")
    if value is None:
        return if_absent
    ranges = _accept_ranges(value)
    return all(_quality(ranges, media_type) > 0.0 for media_type in types)


def content_type_is_json(headers: Headers) -> bool:
    """True if ``Content-Type`` is ``application/json`` (any case, optional parameters). A
    ``charset`` other than UTF-8 is refused: JSON between systems MUST be UTF-8 (RFC 8259 §8.1).
    Absent, repeated, or anything else (``text/plain``, ``application/vnd.x+json``): False."""
    values = header_values(headers, b"content-type")
    if len(values) != 1:
        return False
    parsed = _media_type(values[0])
    if parsed is None:
        return False
    kind, subtype, params = parsed
    if (kind, subtype) != ("application", "json"):
        return False
    charset = params.get("charset")
    return charset is None or charset.lower() in ("utf-8", "utf8")


# -- hosts and origins -------------------------------------------------------------------------------


def split_host(value: str) -> tuple[str, int | None] | None:
    """``Host`` syntax (RFC 9110 §7.2, ``uri-host [ ":" port ]``) -> (lower-case host, port).

    IPv6 literals keep their brackets, in compressed form (``[::1]``). An empty port
    (``localhost:``) counts as none.
    Returns None when malformed: empty, bad characters, a bad IPv6 literal, a port over 65535.
    """
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        literal, rest = value[1:end], value[end + 1 :]
        try:
            host = f"[{ipaddress.IPv6Address(literal)}]"  # one spelling: [0:0::1] is [::1]
        except ValueError:
            return None
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:]
    else:
        host, colon, port_text = value.partition(":")
        if not _REG_NAME.fullmatch(host) or (colon and ":" in port_text):
            return None
        host = host.lower()
    if not port_text:
        return host, None
    if not _PORT.fullmatch(port_text) or int(port_text) > 65535:
        return None
    return host, int(port_text)


@dataclass(frozen=True, slots=True)
class _HostPattern:
    host: str  # lower-case; with a leading "*." it matches any subdomain
    port: int | None  # None: no port; _ANY_PORT: any port or none

    def matches(self, host: str, port: int | None) -> bool:
        if self.host.startswith("*."):
            suffix = self.host[1:]
            if not (host.endswith(suffix) and len(host) > len(suffix)):
                return False
        elif host != self.host:
            return False
        return self.port == _ANY_PORT or self.port == port


def _compile_host(pattern: str, *, default_port: int | None = None) -> _HostPattern:
    text = pattern.strip()
    any_port = text.endswith(":*")
    if any_port:
        text = text[:-2]
    wildcard = text.startswith("*.")
    parsed = split_host("x" + text[1:] if wildcard else text)
    if parsed is None or (any_port and parsed[1] is not None):
        raise ValueError(f"not a host pattern: {pattern!r}")
    host, port = parsed
    if wildcard:
        host = "*" + host[1:]
    if port is not None and port == default_port:
        port = None
    return _HostPattern(host, _ANY_PORT if any_port else port)


@dataclass(frozen=True, slots=True)
class _OriginPattern:
    scheme: str
    host: _HostPattern

    def matches(self, scheme: str, host: str, port: int | None) -> bool:
        return scheme == self.scheme and self.host.matches(host, port)


def _parse_origin(value: str) -> tuple[str, str, int | None] | None:
    """An Origin serialization (RFC 6454 §6.2) -> (scheme, host, port with the default dropped)."""
    match = _ORIGIN.fullmatch(value.strip())
    if match is None:
        return None
    scheme = match.group(1).lower()
    parsed = split_host(match.group(2))
    if parsed is None:
        return None
    host, port = parsed
    if port is not None and port == _DEFAULT_PORTS.get(scheme):
        port = None
    return scheme, host, port


def _compile_origin(pattern: str) -> _OriginPattern:
    match = _ORIGIN.fullmatch(pattern.strip())
    if match is None:
        raise ValueError(f"not an origin pattern: {pattern!r}")
    scheme = match.group(1).lower()
    try:
        host = _compile_host(match.group(2), default_port=_DEFAULT_PORTS.get(scheme))
    except ValueError:
        raise ValueError(f"not an origin pattern: {pattern!r}") from None
    return _OriginPattern(scheme, host)


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1`` (bracketed or not; IPv4-mapped too)."""
    name = host.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def _bind_name(host: str) -> str:
    """A bind address as it appears in a Host header: IPv6 in brackets, lower-case."""
    name = host.strip().lower()
    if ":" in name and not name.startswith("["):
        name = "[" + name + "]"
    return name


def default_allowed_hosts(bind_host: str, port: int | None = None, *, exact_port: bool = False) -> list[str]:
    """The Host allowlist :meth:`TransportSecurity.for_bind` uses when none is given.

    * bound to loopback (127.0.0.0/8, ``::1``, ``localhost``): the loopback names ``localhost``,
      ``127.0.0.1``, ``[::1]``, plus the bound address itself if it is another one (127.0.0.2);
    * bound to a wildcard (``0.0.0.0``, ``::``, or ``""`` for "unknown"): the loopback names
      only. Clients on other machines name the server by an address or DNS name we cannot guess,
      and get 403 until that name is in an explicit ``allowed_hosts`` (or ``["*"]``, no check);
    * bound to a specific other address or name: that host only.

    Each with any port, or with exactly ``port`` when ``exact_port`` is set and ``port`` is known
    (for 80 and 443 also with none, as clients leave a default port out of Host).
    """
    names: list[str] = []
    if bind_host.strip().lower() in _WILDCARD_BINDS or is_loopback(bind_host):
        names.extend(LOOPBACK_NAMES)
    if bind_host.strip().lower() not in _WILDCARD_BINDS:
        name = _bind_name(bind_host)
        if name not in names:
            names.append(name)
    if not (exact_port and port):
        return [f"{name}:*" for name in names]
    # a client omits a default port from Host, and we cannot know the scheme here: accept both
    bare = port in (80, 443)
    return [
        pattern for name in names for pattern in ([f"{name}:{port}", name] if bare else [f"{name}:{port}"])
    ]


def default_allowed_origins(
    bind_host: str, port: int | None = None, *, exact_port: bool = False
) -> list[str]:
    """The Origin allowlist matching :func:`default_allowed_hosts`: ``http`` and ``https`` pages
    served from those same hosts (e.g. ``http://localhost:5173`` for a loopback-bound server)."""
    return [
        f"{scheme}://{host}"
        for host in default_allowed_hosts(bind_host, port, exact_port=exact_port)
        for scheme in ("http", "https")
    ]


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of a check. ``allowed`` False carries the HTTP ``status`` to answer with and a
    ``reason`` for the error body (it may quote the offending header value)."""

    allowed: bool
    status: int = 200
    reason: str = ""


ALLOWED = Decision(True)


def _show(value: str) -> str:
    """A header value fit to quote in a reason: printable ASCII, at most 100 characters."""
    clean = "".join(c if " " <= c <= "~" else "?" for c in value)
    return repr(clean if len(clean) <= 100 else clean[:100] + "...")


class TransportSecurity:
    """Host and Origin allowlists (DNS-rebinding protection); build once, then only read.

    ``TransportSecurity(allowed_hosts, allowed_origins)`` takes patterns (see the module
    docstring; a bad pattern raises ValueError). Usually built with :meth:`for_bind`;
    :meth:`disabled` turns both checks off. :meth:`check` is what a request goes through.
    """

    __slots__ = (
        "_any_host",
        "_any_origin",
        "_hosts",
        "_null_origin",
        "_origins",
        "allowed_hosts",
        "allowed_origins",
    )

    def __init__(self, allowed_hosts: Iterable[str], allowed_origins: Iterable[str]) -> None:
        self.allowed_hosts: tuple[str, ...] = tuple(allowed_hosts)
        self.allowed_origins: tuple[str, ...] = tuple(allowed_origins)
        host_patterns = [p.strip() for p in self.allowed_hosts]
        origin_patterns = [p.strip().lower() for p in self.allowed_origins]
        self._any_host = "*" in host_patterns
        self._any_origin = "*" in origin_patterns
        self._null_origin = "null" in origin_patterns
        self._hosts = tuple(_compile_host(p) for p in host_patterns if p != "*")
        self._origins = tuple(_compile_origin(p) for p in origin_patterns if p not in ("*", "null"))

    @classmethod
    def for_bind(
        cls,
        bind_host: str,
        port: int | None = None,
        *,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        exact_port: bool = False,
    ) -> TransportSecurity:
        """The policy for a server bound to ``bind_host`` (``port`` only matters with
        ``exact_port``). A given list replaces its default (see :func:`default_allowed_hosts`
        and :func:`default_allowed_origins`); to extend a default, pass
        ``[*default_allowed_hosts(host), "mcp.example.com"]``."""
        hosts = (
            default_allowed_hosts(bind_host, port, exact_port=exact_port)
            if allowed_hosts is None
            else allowed_hosts
        )
        origins = (
            default_allowed_origins(bind_host, port, exact_port=exact_port)
            if allowed_origins is None
            else allowed_origins
        )
        return cls(hosts, origins)

    @classmethod
    def disabled(cls) -> TransportSecurity:
        """No Host or Origin check at all (``"*"`` for both)."""
        return cls(["*"], ["*"])

    def __repr__(self) -> str:
        hosts, origins = list(self.allowed_hosts), list(self.allowed_origins)
        return f"TransportSecurity(allowed_hosts={hosts!r}, allowed_origins={origins!r})"

    def host_allowed(self, value: str) -> bool:
        """True if a ``Host`` value matches the allowlist (False when it is malformed)."""
        if self._any_host:
            return True
        parsed = split_host(value)
        return parsed is not None and any(p.matches(*parsed) for p in self._hosts)

    def origin_allowed(self, value: str) -> bool:
        """True if an ``Origin`` value matches the allowlist (False when it is malformed)."""
        if self._any_origin:
            return True
        if value.strip().lower() == "null":
            return self._null_origin
        parsed = _parse_origin(value)
        return parsed is not None and any(p.matches(*parsed) for p in self._origins)

    def check_host(self, headers: Headers) -> Decision:
        """400 for a missing, repeated or malformed ``Host`` (RFC 9112 §3.2 MUST), 403 when it is
        not allowed. With ``"*"`` in the allowlist Host is not looked at."""
        if self._any_host:
            return ALLOWED
        values = header_values(headers, b"host")
        if not values:
            return Decision(False, 400, "Bad Request: missing Host header")
        if len(values) > 1:
            return Decision(False, 400, "Bad Request: more than one Host header")
        if split_host(values[0]) is None:
            return Decision(False, 400, f"Bad Request: malformed Host header {_show(values[0])}")
        if not self.host_allowed(values[0]):
            return Decision(False, 403, f"Forbidden: Host {_show(values[0])} is not allowed")
        return ALLOWED

    def check_origin(self, headers: Headers) -> Decision:
        """Allowed when ``Origin`` is absent (clients that are not browsers send none); 403 when
        it is present and not allowed, malformed, or repeated (MCP 2025-11-25 ``basic/transports``:
        "If the Origin header is present and invalid, servers MUST respond with HTTP 403")."""
        values = header_values(headers, b"origin")
        if not values:
            return ALLOWED
        if len(values) > 1:
            return Decision(False, 403, "Forbidden: more than one Origin header")
        if not self.origin_allowed(values[0]):
            return Decision(False, 403, f"Forbidden: Origin {_show(values[0])} is not allowed")
        return ALLOWED

    def check(self, headers: Headers) -> Decision:
        """Host, then Origin: the first refusal, or an allowed decision."""
        headers = list(headers)
        decision = self.check_host(headers)
        return decision if not decision.allowed else self.check_origin(headers)
