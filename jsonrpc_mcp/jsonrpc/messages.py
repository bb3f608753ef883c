"""The JSON-RPC 2.0 message model: four message kinds, plus the marker for input we cannot use."""

from __future__ import annotations

from typing import Any

RequestId = str | int
"""A request id: a string or an integer (never a boolean, a fraction or null)."""

Params = dict[str, Any] | list[Any] | None


class _Record:
    """What ``@dataclass(slots=True)`` would give (init, repr, eq, match args), written out: the
    decorator costs about a millisecond per class at import, on every server's cold start."""

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as a dataclass

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__match_args__)


class Request(_Record):
    """A call that expects exactly one response with the same id."""

    __slots__ = ("id", "method", "params")
    __match_args__ = ("id", "method", "params")

    def __init__(self, id: RequestId, method: str, params: Params = None) -> None:
        self.id = id
        self.method = method
        self.params = params


class Notification(_Record):
    """A call that is never answered."""

    __slots__ = ("method", "params")
    __match_args__ = ("method", "params")

    def __init__(self, method: str, params: Params = None) -> None:
        self.method = method
        self.params = params


class Response(_Record):
    """A successful answer to the request with the same id."""

    __slots__ = ("id", "result")
    __match_args__ = ("id", "result")

    def __init__(self, id: RequestId, result: Any) -> None:
        self.id = id
        self.result = result


class ErrorResponse(_Record):
    """A failed answer; ``id`` is None when the request's id could not be read."""

    __slots__ = ("error", "id")
    __match_args__ = ("id", "error")

    def __init__(self, id: RequestId | None, error: dict[str, Any]) -> None:
        self.id = id
        self.error = error


class Invalid(_Record):
    """Input that is not a usable message. ``error`` is what to answer; ``id`` echoes a readable id."""

    __slots__ = ("error", "id")
    __match_args__ = ("id", "error")

    def __init__(self, id: RequestId | None, error: Any) -> None:
        self.id = id
        self.error = error  # a JsonRpcError; typed loosely to keep this module free of the errors module


Message = Request | Notification | Response | ErrorResponse
Incoming = Request | Notification | Response | ErrorResponse | Invalid
