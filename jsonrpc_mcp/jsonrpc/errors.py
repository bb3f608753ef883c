"""JSON-RPC 2.0 error codes and the one exception that carries them onto the wire.

Two error trees live in this project. *Wire errors* derive from :class:`JsonRpcError`: they have a
code and become a JSON-RPC error response in exactly one place (the endpoint). *Misuse errors*
(a developer wiring things wrong) are ordinary Python exceptions and never reach the wire.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

STANDARD_MESSAGES = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
}


class JsonRpcError(Exception):
    """An error that travels as a JSON-RPC error object: ``{code, message, data?}``.

    Raise it (or a subclass) from a handler to answer with that error; the client raises it when
    the peer answers with an error.
    """

    code: int = INTERNAL_ERROR

    def __init__(self, message: str | None = None, data: Any = None, *, code: int | None = None) -> None:
        if code is not None:
            self.code = code
        if not isinstance(self.code, int) or isinstance(self.code, bool) or self.code == 0:
            raise ValueError(f"a JSON-RPC error code must be a non-zero integer, got {self.code!r}")
        self.message = message if message is not None else STANDARD_MESSAGES.get(self.code, "Error")
        self.data = data
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        """The wire form of the error object."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_dict(cls, error: dict[str, Any]) -> JsonRpcError:
        """Rebuild the exception for an error object received from a peer.

        A code that is not a usable JSON-RPC code (0, or not an integer) is read as -32603, so
        whatever a peer sends, the caller gets an exception (never a crash in the reader) and an
        error passed on from it never puts ``code: 0`` on our wire.
        """
        code = error.get("code")
        if type(code) is not int or code == 0:
            code = INTERNAL_ERROR
        klass = _BY_CODE.get(code, JsonRpcError)
        message = error.get("message")
        return klass(message if type(message) is str else None, error.get("data"), code=code)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"


class ParseError(JsonRpcError):
    """-32700: the bytes received are not JSON."""

    code = PARSE_ERROR


class InvalidRequest(JsonRpcError):
    """-32600: the JSON is not a valid request object."""

    code = INVALID_REQUEST


class MethodNotFound(JsonRpcError):
    """-32601: no such method (or not available)."""

    code = METHOD_NOT_FOUND


class InvalidParams(JsonRpcError):
    """-32602: the parameters are wrong."""

    code = INVALID_PARAMS


class InternalError(JsonRpcError):
    """-32603: the server failed; details go to the log, never onto the wire."""

    code = INTERNAL_ERROR


_BY_CODE: dict[int, type[JsonRpcError]] = {
    PARSE_ERROR: ParseError,
    INVALID_REQUEST: InvalidRequest,
    METHOD_NOT_FOUND: MethodNotFound,
    INVALID_PARAMS: InvalidParams,
    INTERNAL_ERROR: InternalError,
}


class RequestTimeout(TimeoutError):
    """An outgoing request got no response in time (the peer was told to cancel it)."""


class ConnectionClosed(Exception):
    """The connection ended while a request was waiting for its response."""
