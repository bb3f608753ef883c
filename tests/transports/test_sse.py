"""Server-Sent Events, sans-IO: the encoder and the parser (WHATWG event-stream rules)."""

from __future__ import annotations

import pytest

from jsonrpc_mcp.transports.sse import KEEPALIVE, SseEvent, SseEventTooLarge, SseParser, encode_event


def feed_bytewise(parser: SseParser, data: bytes) -> list[SseEvent]:
    events: list[SseEvent] = []
    for i in range(len(data)):
        events.extend(parser.feed(data[i : i + 1]))
    return events


# -- encoding -------------------------------------------------------------------------------------
def test_encode_event_writes_id_event_retry_and_data_fields() -> None:
    assert encode_event(b'{"a":1}', event="message", id="7", retry=250) == (
        b'id: 7\nevent: message\nretry: 250\ndata: {"a":1}\n\n'
    )


def test_encode_event_splits_multiline_data_into_data_lines() -> None:
    assert encode_event(b"one\ntwo") == b"data: one\ndata: two\n\n"


def test_encode_event_with_empty_data_still_has_a_data_line() -> None:
    assert encode_event(id="p1") == b"id: p1\ndata: \n\n"


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\0b"])
def test_encode_event_refuses_an_id_with_a_newline_or_nul(bad: str) -> None:
    with pytest.raises(ValueError):
        encode_event(b"x", id=bad)


def test_encoded_events_parse_back() -> None:
    parser = SseParser()
    data = encode_event(b"x\ny", event="ping", id="3", retry=10) + encode_event(b"{}")
    assert parser.feed(data) == [SseEvent("x\ny", "ping", "3", 10), SseEvent("{}")]


# -- line endings ---------------------------------------------------------------------------------
@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_every_line_ending_ends_lines_and_events(eol: bytes) -> None:
    # (the trailing comment settles the final CR, which could otherwise be half of a CRLF)
    stream = b"event: a" + eol + b"data: 1" + eol + eol + b"data: 2" + eol + eol + b":"
    assert SseParser().feed(stream) == [SseEvent("1", "a"), SseEvent("2")]


def test_mixed_line_endings_in_one_stream() -> None:
    stream = b"data: 1\r\n\ndata: 2\r\rdata: 3\n\r\n"
    assert [event.data for event in SseParser().feed(stream)] == ["1", "2", "3"]


def test_a_crlf_split_across_chunks_is_one_line_end() -> None:
    parser = SseParser()
    assert parser.feed(b"data: 1\r") == []
    assert parser.feed(b"\n\r") == []
    assert parser.feed(b"\ndata: 2\r\n\r\n") == [SseEvent("1"), SseEvent("2")]


def test_a_lone_cr_followed_by_more_data_ends_the_line() -> None:
    parser = SseParser()
    assert parser.feed(b"data: 1\r") == []
    assert parser.feed(b"\rdata: 2\r\r") == [SseEvent("1")]
    assert parser.feed(b"x") == [SseEvent("2")]


# -- fields ---------------------------------------------------------------------------------------
def test_multiple_data_lines_are_joined_with_newlines() -> None:
    assert SseParser().feed(b"data: a\ndata:b\ndata:  c\n\n") == [SseEvent("a\nb\n c")]


def test_an_empty_data_line_contributes_an_empty_line() -> None:
    assert SseParser().feed(b"data\ndata: x\ndata:\n\n") == [SseEvent("\nx\n")]


def test_only_one_space_after_the_colon_is_removed() -> None:
    assert SseParser().feed(b"data:   x \n\n") == [SseEvent("  x ")]


def test_comments_are_ignored_and_make_no_event() -> None:
    parser = SseParser()
    assert parser.feed(KEEPALIVE + b":another\n\n") == []
    assert parser.feed(b"data: 1\n: in between\ndata: 2\n\n") == [SseEvent("1\n2")]


def test_unknown_fields_are_ignored() -> None:
    assert SseParser().feed(b"foo: bar\ndata: 1\nbaz\n\n") == [SseEvent("1")]


def test_a_blank_line_alone_dispatches_nothing() -> None:
    assert SseParser().feed(b"\n\n\r\n") == []


def test_event_type_defaults_to_message_and_resets_after_each_event() -> None:
    assert SseParser().feed(b"event: endpoint\ndata: /m\n\ndata: x\n\n") == [
        SseEvent("/m", "endpoint"),
        SseEvent("x", "message"),
    ]


# -- ids and retry --------------------------------------------------------------------------------
def test_ids_belong_to_their_event_and_the_last_one_is_remembered() -> None:
    parser = SseParser()
    events = parser.feed(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n")
    assert [(event.data, event.id) for event in events] == [("a", "1"), ("b", None), ("c", "2")]
    assert parser.last_event_id == "2"


def test_an_id_containing_nul_is_ignored() -> None:
    parser = SseParser()
    events = parser.feed(b"id: 1\n\nid: a\0b\ndata: x\n\n")
    assert events[-1].id is None
    assert parser.last_event_id == "1"


def test_an_empty_id_resets_the_last_event_id() -> None:
    parser = SseParser()
    parser.feed(b"id: 5\ndata: x\n\n")
    parser.feed(b"id\ndata: y\n\n")
    assert parser.last_event_id == ""


def test_a_priming_event_has_an_id_and_empty_data() -> None:
    parser = SseParser()
    assert parser.feed(b"id: prime-1\nretry: 3000\ndata: \n\n") == [SseEvent("", "message", "prime-1", 3000)]
    assert parser.last_event_id == "prime-1"


def test_retry_is_taken_only_when_it_is_ascii_digits() -> None:
    parser = SseParser()
    events = parser.feed(b"retry: 1500\ndata: a\n\nretry: 1.5\ndata: b\n\nretry: \xd9\xa3\ndata: c\n\n")
    assert [event.retry for event in events] == [1500, None, None]
    assert parser.retry == 1500


def test_an_id_or_retry_without_data_is_still_reported() -> None:
    parser = SseParser()
    assert parser.feed(b"retry: 40\n\nid: 9\n\n") == [SseEvent("", retry=40), SseEvent("", id="9")]


# -- chunking and encoding ------------------------------------------------------------------------
def test_byte_by_byte_feeding_gives_the_same_events_as_one_chunk() -> None:
    stream = (
        b"id: 1\r\nevent: message\r\nretry: 10\r\n"
        b'data: {"jsonrpc":"2.0","method":"x","params":{"s":"\xc3\xa9\xe2\x9c\x93"}}\r\n\r\n'
        b": keep-alive\r\r"
        b"data: two\rdata: lines\r\r"
        b"data: last\n\n"
    )
    whole = SseParser().feed(stream)
    assert feed_bytewise(SseParser(), stream) == whole
    assert len(whole) == 3
    assert whole[0].data == '{"jsonrpc":"2.0","method":"x","params":{"s":"é✓"}}'


def test_a_multibyte_character_split_across_chunks_survives() -> None:
    parser = SseParser()
    data = "data: ✓\n\n".encode()
    cut = data.index(b"\xe2") + 1
    assert parser.feed(data[:cut]) == []
    assert parser.feed(data[cut:]) == [SseEvent("✓")]


def test_a_leading_byte_order_mark_is_skipped_even_when_split() -> None:
    parser = SseParser()
    assert parser.feed(b"\xef") == []
    assert parser.feed(b"\xbb\xbfdata: x\n\n") == [SseEvent("x")]


def test_a_byte_order_mark_later_in_the_stream_is_kept() -> None:
    parser = SseParser()
    parser.feed(b"data: 1\n\n")
    assert parser.feed(b"\xef\xbb\xbfdata: 2\n\ndata: 3\n\n") == [SseEvent("3")]


def test_end_of_stream_settles_a_final_cr() -> None:
    parser = SseParser()
    assert parser.feed(b"data: 1\r\r") == []
    assert parser.end() == [SseEvent("1")]


def test_end_of_stream_discards_an_unterminated_event() -> None:
    parser = SseParser()
    assert parser.feed(b"data: 1\n") == []
    assert parser.end() == []


def test_an_incomplete_event_at_the_end_is_held_back() -> None:
    parser = SseParser()
    assert parser.feed(b"data: 1\n") == []
    assert parser.feed(b"data: 2") == []
    assert parser.feed(b"\n\n") == [SseEvent("1\n2")]


def test_many_events_in_one_big_chunk() -> None:
    stream = b"".join(encode_event(b'{"n":%d}' % n, id=str(n)) for n in range(2000))
    events = SseParser().feed(stream)
    assert [event.id for event in events] == [str(n) for n in range(2000)]


def test_an_oversized_event_is_refused() -> None:
    parser = SseParser(max_event_size=100)
    assert parser.feed(b"data: " + b"x" * 50 + b"\n\n") == [SseEvent("x" * 50)]
    with pytest.raises(SseEventTooLarge):
        parser.feed(b"data: " + b"x" * 60 + b"\ndata: " + b"y" * 60 + b"\n")


def test_an_oversized_unterminated_line_is_refused_before_it_ends() -> None:
    parser = SseParser(max_event_size=1000)
    with pytest.raises(SseEventTooLarge):
        for _ in range(20):
            parser.feed(b"z" * 100)
