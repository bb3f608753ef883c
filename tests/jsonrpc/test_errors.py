"""Wire errors: every one carries a non-zero code; what a peer sends is always readable."""

from __future__ import annotations

import pytest

from jsonrpc_mcp.jsonrpc.errors import (
    INTERNAL_ERROR,
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    MethodNotFound,
    ParseError,
)


@pytest.mark.parametrize(
    ("klass", "code", "message"),
    [
        (ParseError, -32700, "Parse error"),
        (InvalidRequest, -32600, "Invalid Request"),
        (MethodNotFound, -32601, "Method not found"),
        (InvalidParams, -32602, "Invalid params"),
        (InternalError, -32603, "Internal error"),
    ],
)
def test_standard_errors_have_their_code_and_default_message(
    klass: type[JsonRpcError], code: int, message: str
) -> None:
    assert klass().to_dict() == {"code": code, "message": message}


@pytest.mark.parametrize("code", [0, True, "1"])
def test_code_zero_or_non_integer_is_refused(code: object) -> None:
    with pytest.raises(ValueError):
        JsonRpcError("x", code=code)  # type: ignore[arg-type]


def test_from_dict_rebuilds_the_matching_subclass_with_data() -> None:
    error = JsonRpcError.from_dict({"code": -32602, "message": "bad", "data": {"k": 1}})
    assert type(error) is InvalidParams
    assert (error.code, error.message, error.data) == (-32602, "bad", {"k": 1})


def test_from_dict_keeps_an_application_code() -> None:
    error = JsonRpcError.from_dict({"code": -32002, "message": "Resource not found"})
    assert type(error) is JsonRpcError and error.code == -32002


def test_from_dict_reads_a_peers_code_zero_as_internal_error() -> None:
    # regression: this used to raise ValueError inside the endpoint's reader and kill the connection
    error = JsonRpcError.from_dict({"code": 0, "message": "zero"})
    assert type(error) is InternalError
    assert error.to_dict() == {"code": INTERNAL_ERROR, "message": "zero"}
