"""The codec: bytes <-> messages on orjson; compact one-line output and strict shape checks."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from jsonrpc_mcp.jsonrpc import codec
from jsonrpc_mcp.jsonrpc.errors import (
    INVALID_REQUEST,
    PARSE_ERROR,
    InternalError,
    InvalidParams,
    JsonRpcError,
)
from jsonrpc_mcp.jsonrpc.messages import ErrorResponse, Invalid, Message, Notification, Request, Response


def _invalid(data: bytes | str) -> Invalid:
    message = codec.decode(data)
    assert type(message) is Invalid, message
    return message


# -- encoding ---------------------------------------------------------------------------------------


def test_encoded_request_is_compact_json_without_spaces() -> None:
    data = codec.encode_request(7, "subtract", {"minuend": 42, "subtrahend": 23})
    assert data == b'{"jsonrpc":"2.0","id":7,"method":"subtract","params":{"minuend":42,"subtrahend":23}}'


def test_encoded_notification_without_params_has_no_params_member() -> None:
    assert codec.encode_notification("update") == b'{"jsonrpc":"2.0","method":"update"}'


def test_newline_inside_a_string_is_escaped_so_the_message_stays_on_one_line() -> None:
    text = "line one\nline two\r\nand a\u2028separator"
    frames = [
        codec.encode_request(1, "echo", [text]),
        codec.encode_notification("log", {"text": text}),
        codec.encode_response(1, {"text": text, "nested": [text]}),
        codec.encode_error(1, JsonRpcError(text, data={"detail": text}, code=-32000)),
    ]
    for frame in frames:
        assert b"\n" not in frame and b"\r" not in frame
        assert b"\\n" in frame
    assert orjson.loads(frames[2])["result"]["text"] == text


def test_non_ascii_text_is_encoded_as_utf8() -> None:
    data = codec.encode_response(1, "héllo ✓ 日本")
    assert "héllo ✓ 日本".encode() in data


def test_error_without_id_is_encoded_with_null_id() -> None:
    data = codec.encode_error(None, InvalidParams("nope"))
    assert orjson.loads(data) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": "nope"}}


def test_error_without_id_can_omit_the_id_member() -> None:
    data = codec.encode_error(None, InvalidParams("nope"), omit_null_id=True)
    assert orjson.loads(data) == {"jsonrpc": "2.0", "error": {"code": -32602, "message": "nope"}}


def test_error_whose_data_is_not_json_is_sent_without_data() -> None:
    data = codec.encode_error(3, InternalError("boom", data={"obj": object()}))
    assert orjson.loads(data) == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "boom"}}


def test_response_with_a_result_that_is_not_json_raises_type_error() -> None:
    with pytest.raises(TypeError):
        codec.encode_response(1, {"obj": object()})


def test_encode_roundtrips_every_message_kind() -> None:
    messages: list[Message] = [
        Request("a", "m", [1]),
        Notification("n", {"k": 1}),
        Response(5, {"ok": True}),
        ErrorResponse(None, {"code": -32600, "message": "Invalid Request"}),
    ]
    for message in messages:
        assert codec.decode(codec.encode(message)) == message


# -- decoding: well-formed ----------------------------------------------------------------------------


def test_decode_request_with_string_id_and_named_params() -> None:
    assert codec.decode(b'{"jsonrpc":"2.0","id":"x","method":"m","params":{"a":1}}') == Request(
        "x", "m", {"a": 1}
    )


def test_decode_notification_has_no_id() -> None:
    assert codec.decode('{"jsonrpc":"2.0","method":"m","params":[1]}') == Notification("m", [1])


def test_decode_tolerates_whitespace_and_newlines_inside_one_frame() -> None:
    assert codec.decode(b' {\n "jsonrpc" : "2.0",\r\n "id" : 1, "method" : "m" }\n') == Request(1, "m")


def test_decode_response_and_error_response() -> None:
    assert codec.decode(b'{"jsonrpc":"2.0","id":1,"result":null}') == Response(1, None)
    assert codec.decode(
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}'
    ) == ErrorResponse(None, {"code": -32700, "message": "x"})


def test_decode_batch_returns_one_item_per_element() -> None:
    items = codec.decode(b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]')
    assert items == [Request(1, "a"), Notification("b")]


# -- decoding: -32700 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
        b"",
        b"{",
        b"NaN",
        b'{"jsonrpc":"2.0","id":1,"method":"m"} trailing',
        b'{"jsonrpc":"2.0","id":1,"method":"\xff"}',  # invalid UTF-8
        b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}',  # an encoded surrogate is not UTF-8
        b'{"jsonrpc":"2.0","id":1,"method":"\xc3"}',  # truncated multi-byte sequence
    ],
    ids=[
        "broken-json",
        "empty",
        "unterminated",
        "nan",
        "trailing-garbage",
        "bad-utf8",
        "surrogate",
        "truncated",
    ],
)
def test_unparsable_input_is_a_parse_error_with_null_id(data: bytes) -> None:
    invalid = _invalid(data)
    assert invalid.id is None
    assert invalid.error.code == PARSE_ERROR
    assert invalid.error.message.startswith("Parse error")


def test_parse_error_message_carries_no_traceback() -> None:
    error = _invalid(b"{" * 10_000).error
    assert "Traceback" not in error.message and len(error.message) <= 200


# -- decoding: -32600 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "expected_id"),
    [
        ({"jsonrpc": "1.0", "id": 1, "method": "m"}, 1),
        ({"jsonrpc": 2.0, "id": 1, "method": "m"}, 1),
        ({"id": 1, "method": "m"}, 1),
        ({"jsonrpc": "2.0", "id": True, "method": "m"}, None),
        ({"jsonrpc": "2.0", "id": False, "method": "m"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "m"}, None),
        ({"jsonrpc": "2.0", "id": 1.0, "method": "m"}, None),
        ({"jsonrpc": "2.0", "id": None, "method": "m"}, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "m"}, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "m"}, None),
        ({"jsonrpc": "2.0", "id": 1, "method": 1}, 1),
        ({"jsonrpc": "2.0", "id": 1, "method": None}, 1),
        ({"jsonrpc": "2.0", "method": 1, "params": "bar"}, None),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": "bar"}, 1),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": 3}, 1),
        ({"jsonrpc": "2.0", "id": 1, "method": "m", "params": None}, 1),
        ({"jsonrpc": "2.0", "id": 1}, 1),
        ({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "x"}}, 1),
        ({"jsonrpc": "2.0", "id": True, "result": 1}, None),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, 1),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}}, 1),
        ({"jsonrpc": "2.0", "id": 1, "error": "boom"}, 1),
        ({"foo": "boo"}, None),
    ],
    ids=[
        "jsonrpc-1.0",
        "jsonrpc-number",
        "jsonrpc-missing",
        "id-true",
        "id-false",
        "id-fractional",
        "id-float-whole",
        "request-id-null",
        "id-array",
        "id-object",
        "method-number",
        "method-null",
        "method-number-notification",
        "params-string",
        "params-number",
        "params-null",
        "nothing-to-do",
        "result-and-error",
        "response-id-bool",
        "error-code-string",
        "error-code-bool",
        "error-not-object",
        "not-jsonrpc-at-all",
    ],
)
def test_wrong_shape_is_invalid_request_echoing_a_readable_id(obj: Any, expected_id: Any) -> None:
    invalid = _invalid(orjson.dumps(obj))
    assert invalid.error.code == INVALID_REQUEST
    assert invalid.id == expected_id and type(invalid.id) is type(expected_id)
    assert invalid.error.message.startswith("Invalid Request")


@pytest.mark.parametrize("data", [b"1", b'"text"', b"null", b"true"])
def test_a_top_level_value_that_is_not_an_object_is_invalid_request(data: bytes) -> None:
    invalid = _invalid(data)
    assert (invalid.id, invalid.error.code) == (None, INVALID_REQUEST)


def test_empty_batch_is_one_invalid_request() -> None:
    invalid = _invalid(b"[]")
    assert (invalid.id, invalid.error.code) == (None, INVALID_REQUEST)


def test_batch_of_non_objects_gives_one_invalid_request_per_element() -> None:
    items = codec.decode(b"[1,2,3]")
    assert type(items) is list and len(items) == 3
    for item in items:
        assert type(item) is Invalid and item.id is None and item.error.code == INVALID_REQUEST


def test_batch_mixes_valid_and_invalid_elements_in_order() -> None:
    items = codec.decode(b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"foo":"boo"},7]')
    assert type(items) is list
    assert items[0] == Request(1, "a")
    assert [type(item) for item in items[1:]] == [Invalid, Invalid]


def test_a_string_input_is_decoded_like_bytes() -> None:
    assert codec.decode('{"jsonrpc":"2.0","id":"é","method":"m"}') == Request("é", "m")


def test_large_integer_ids_that_are_not_64_bit_are_rejected_not_crashed() -> None:
    invalid = _invalid(b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}')
    assert invalid.error.code == INVALID_REQUEST
