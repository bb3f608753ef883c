"""LineBuffer: newline framing, sans-IO (bytes in, whole lines out)."""

from __future__ import annotations

import pytest

from jsonrpc_mcp.transports.base import FrameTooLarge
from jsonrpc_mcp.transports.framing import DEFAULT_MAX_LINE, LineBuffer


def _drain(buffer: LineBuffer) -> list[bytes | str]:
    """Everything ready: frames as bytes, discarded oversized frames as the string "too large"."""
    out: list[bytes | str] = []
    while True:
        try:
            frame = buffer.pop()
        except FrameTooLarge:
            out.append("too large")
            continue
        if frame is None:
            return out
        out.append(frame)


def test_default_limit_is_four_mebibytes() -> None:
    assert DEFAULT_MAX_LINE == 4 * 1024 * 1024


def test_several_messages_in_one_chunk_come_out_one_by_one() -> None:
    buffer = LineBuffer()
    buffer.feed(b'{"a":1}\n{"b":2}\n{"c":3}\n')
    assert _drain(buffer) == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


def test_a_message_split_across_chunks_is_reassembled() -> None:
    buffer = LineBuffer()
    buffer.feed(b'{"a":')
    assert buffer.pop() is None  # incomplete: nothing yet
    buffer.feed(b'1}\n{"b"')
    assert _drain(buffer) == [b'{"a":1}']
    buffer.feed(b":2}\n")
    assert _drain(buffer) == [b'{"b":2}']


def test_feeding_one_byte_at_a_time_gives_the_same_frames() -> None:
    data = '{"text":"héllo ✓"}\r\n{"n":2}\n'.encode()
    buffer = LineBuffer()
    for i in range(len(data)):
        buffer.feed(data[i : i + 1])
    assert _drain(buffer) == ['{"text":"héllo ✓"}'.encode(), b'{"n":2}']


def test_crlf_line_endings_are_tolerated() -> None:
    buffer = LineBuffer()
    buffer.feed(b'{"a":1}\r\n{"b":2}\r')
    buffer.feed(b"\n")
    assert _drain(buffer) == [b'{"a":1}', b'{"b":2}']


def test_blank_lines_are_skipped() -> None:
    buffer = LineBuffer()
    buffer.feed(b'\n\r\n   \n{"a":1}\n\n')
    assert _drain(buffer) == [b'{"a":1}']


def test_an_unterminated_last_line_counts_at_end_of_stream() -> None:
    buffer = LineBuffer()
    buffer.feed(b'{"a":1}\n{"b":2}')
    assert _drain(buffer) == [b'{"a":1}']
    buffer.feed_eof()
    assert _drain(buffer) == [b'{"b":2}']


def test_a_line_at_the_limit_is_accepted() -> None:
    buffer = LineBuffer(max_line=10)
    buffer.feed(b"0123456789\n")
    assert _drain(buffer) == [b"0123456789"]


def test_a_line_at_the_limit_with_crlf_split_before_the_newline_is_accepted() -> None:
    # regression: the partial-line check counted the "\r" and discarded a line the limit allows
    buffer = LineBuffer(max_line=10)
    buffer.feed(b"0123456789\r")
    buffer.feed(b"\n")
    assert _drain(buffer) == [b"0123456789"]


def test_an_oversized_line_in_one_chunk_is_reported_once_and_the_next_line_survives() -> None:
    buffer = LineBuffer(max_line=10)
    buffer.feed(b"x" * 11 + b'\n{"ok":1}\n')
    assert _drain(buffer) == ["too large", b'{"ok":1}']


def test_an_oversized_line_arriving_in_pieces_is_reported_once_and_discarded_to_its_newline() -> None:
    buffer = LineBuffer(max_line=10)
    buffer.feed(b"x" * 8)
    buffer.feed(b"x" * 8)  # over the limit: reported now, without waiting for the newline
    assert _drain(buffer) == ["too large"]
    buffer.feed(b"y" * 100)  # still the same line: dropped silently
    buffer.feed(b'yyy\n{"ok":1}\n')
    assert _drain(buffer) == [b'{"ok":1}']


def test_an_oversized_unterminated_line_at_end_of_stream_gives_nothing_more() -> None:
    buffer = LineBuffer(max_line=4)
    buffer.feed(b"xxxxxxxx")
    buffer.feed_eof()
    assert _drain(buffer) == ["too large"]


def test_bytes_are_passed_through_undecoded() -> None:
    buffer = LineBuffer()
    buffer.feed(b'{"bad":"\xff\xfe"}\n')  # not UTF-8: the codec, not the framing, answers that
    assert _drain(buffer) == [b'{"bad":"\xff\xfe"}']


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_chunk_size_does_not_change_the_frames(size: int) -> None:
    lines = [b'{"i":%d,"s":"%s"}' % (i, b"z" * i) for i in range(20)]
    data = b"\r\n".join(lines) + b"\n"
    buffer = LineBuffer(max_line=64)
    frames: list[bytes | str] = []
    for start in range(0, len(data), size):
        buffer.feed(data[start : start + size])
        frames += _drain(buffer)
    assert frames == lines
